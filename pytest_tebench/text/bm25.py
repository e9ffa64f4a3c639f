"""BM25 retrieval of a repository's files, close to what pyserini (Lucene) gives SWE-bench.

SWE-bench ranks files with pyserini: documents are ``path + "\\n" + contents``, analysed by
Lucene's English analyzer (standard tokenizer, possessive filter, lower case, the 33 English
stop words, Porter stemming) and scored with Lucene's BM25 (k1 = 0.9, b = 0.4). pyserini needs
a JVM and Java 21 at run time; here documents are analysed in Python, following Lucene's
analyzer, and scored by ``bm25s`` (method ``lucene``: the same IDF, the same parameters):

* the tokenizer keeps words joined by ``.``, ``'`` or ``_`` together and keeps one-letter
  words, as Unicode word breaking (UAX #29, Lucene's StandardTokenizer) does;
* a trailing ``'s`` is dropped, text is lower-cased, Lucene's stop words are removed, and words
  are stemmed with the original Porter algorithm (PyStemmer's ``porter``).

What still differs: Lucene stores document lengths in one lossy byte (so long files score
slightly differently), and the Unicode rules are approximated by a regular expression.
``bench/text_retrieval.py`` measures the top-k overlap with Lucene where a JVM is available.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pytest_tebench.text.tokens import require

K1 = 0.9
B = 0.4
#: Lucene's ``EnglishAnalyzer.ENGLISH_STOP_WORDS_SET``, which pyserini's default analyzer uses.
LUCENE_STOP_WORDS = (
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if", "in", "into", "is", "it", "no",
    "not", "of", "on", "or", "such", "that", "the", "their", "then", "there", "these", "they", "this",
    "to", "was", "will", "with",
)  # fmt: skip
# letters/digits/underscore runs, joined across a single dot or apostrophe between two word characters
_WORD = re.compile(r"\w+(?:[.'\u2019]\w+)*")
_POSSESSIVE = re.compile(r"['\u2019]s$")


def split_words(text: str) -> list[str]:
    """Lucene-like words of ``text``, lower-cased, possessive ``'s`` removed (no stop words yet)."""
    words = _WORD.findall(text.lower())
    return [_POSSESSIVE.sub("", w) if "'" in w or "\u2019" in w else w for w in words]


@dataclass(frozen=True)
class Hit:
    docid: str
    score: float


class Analyzer:
    """Lucene-like analysis (words, stop words, Porter stems), with two caches.

    Stems are cached per word; a document's terms can be cached under a caller's key (a blob
    hash), because most files are the same at the next revision of a repository.
    """

    def __init__(self) -> None:
        stemmer_module = require("Stemmer")
        self._stem_word = stemmer_module.Stemmer("porter").stemWord
        self._stop = frozenset(LUCENE_STOP_WORDS)
        self._stems: dict[str, str] = {}
        self._documents: dict[object, list[str]] = {}

    def terms(self, text: str) -> list[str]:
        stems = self._stems
        terms: list[str] = []
        for word in split_words(text):
            if word in self._stop:
                continue
            stem = stems.get(word)
            if stem is None:
                stem = stems[word] = self._stem_word(word)
            terms.append(stem)
        return terms

    def document_terms(self, key: object, text: str) -> list[str]:
        terms = self._documents.get(key)
        if terms is None:
            terms = self._documents[key] = self.terms(text)
        return terms

    def keep_only(self, keys: set[object]) -> None:
        """Forget cached documents not in ``keys`` (bounds memory to about one revision)."""
        self._documents = {k: v for k, v in self._documents.items() if k in keys}


class FileIndex:
    """A BM25 index over named documents (a repository's files at one revision).

    ``documents`` maps a document id to its text, or to ``(cache key, text)`` so that the
    analyzer's per-document cache can be used.
    """

    def __init__(
        self, documents: Mapping[str, str | tuple[object, str]], analyzer: Analyzer | None = None
    ) -> None:
        bm25s = require("bm25s")
        self.analyzer = analyzer or Analyzer()
        self.docids = list(documents)
        corpus: list[list[str]] = []
        for docid in self.docids:
            value = documents[docid]
            key, text = value if isinstance(value, tuple) else ((docid, value), value)
            corpus.append(self.analyzer.document_terms(key, text))
        self._retriever: Any = None
        if self.docids:
            self._retriever = bm25s.BM25(method="lucene", k1=K1, b=B)
            self._retriever.index(corpus, show_progress=False)

    def __len__(self) -> int:
        return len(self.docids)

    def search(self, query: str, k: int) -> list[Hit]:
        """The ``k`` best documents for ``query``, best first; ties broken by document id."""
        if self._retriever is None or k <= 0:
            return []
        terms = [t for t in self.analyzer.terms(query) if t in self._retriever.vocab_dict]
        if not terms:
            return []
        scores = self._retriever.get_scores(terms)
        return top_hits(self.docids, [float(s) for s in scores], k)


def top_hits(docids: Sequence[str], scores: Sequence[float], k: int) -> list[Hit]:
    """The ``k`` highest positive scores; equal scores in document id order, so runs repeat exactly."""
    ranked = sorted((-score, docid) for docid, score in zip(docids, scores, strict=True) if score > 0)
    return [Hit(docid, -negative) for negative, docid in ranked[:k]]
