"""BM25 retrieval of a repository's files, close to what pyserini (Lucene) gives SWE-bench.

SWE-bench ranks files with pyserini: documents are ``path + "\\n" + contents``, analysed by
Lucene's English analyzer (standard tokenizer, possessive filter, lower case, the 33 English
stop words, Porter stemming) and scored with Lucene's BM25 (k1 = 0.9, b = 0.4). pyserini needs
a JVM and Java 21 at run time; here the index is built with ``bm25s`` (method ``lucene``, the
same IDF and the same parameters) over tokens made to follow Lucene's analyzer:

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
    return [_POSSESSIVE.sub("", word) for word in _WORD.findall(text.lower())]


@dataclass(frozen=True)
class Hit:
    docid: str
    score: float


class FileIndex:
    """A BM25 index over named documents (a repository's files at one revision)."""

    def __init__(self, documents: dict[str, str]) -> None:
        bm25s = require("bm25s")
        stemmer_module = require("Stemmer")
        self.docids = list(documents)
        self._tokenizer: Any = bm25s.tokenization.Tokenizer(
            lower=False,  # split_words lower-cases before the possessive filter, as Lucene does
            splitter=split_words,
            stopwords=list(LUCENE_STOP_WORDS),
            stemmer=stemmer_module.Stemmer("porter").stemWord,
        )
        self._retriever: Any = None
        if self.docids:
            corpus = self._tokenizer.tokenize(
                [documents[d] for d in self.docids], return_as="ids", show_progress=False
            )
            self._retriever = bm25s.BM25(method="lucene", k1=K1, b=B)
            self._retriever.index(corpus, show_progress=False)

    def __len__(self) -> int:
        return len(self.docids)

    def search(self, query: str, k: int) -> list[Hit]:
        """The ``k`` best documents for ``query``, best first; ties broken by document id."""
        if self._retriever is None or k <= 0:
            return []
        ids = self._tokenizer.tokenize(
            [query], update_vocab=False, return_as="ids", show_progress=False, allow_empty=False
        )
        terms = [t for t in ids[0] if t is not None]
        if not terms:
            return []
        scores = self._retriever.get_scores(terms)
        return top_hits(self.docids, [float(s) for s in scores], k)


def top_hits(docids: Sequence[str], scores: Sequence[float], k: int) -> list[Hit]:
    """The ``k`` highest positive scores; equal scores in document id order, so runs repeat exactly."""
    ranked = sorted((-score, docid) for docid, score in zip(docids, scores, strict=True) if score > 0)
    return [Hit(docid, -negative) for negative, docid in ranked[:k]]
