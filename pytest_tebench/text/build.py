"""Turn a benchmark's instances into LM text rows: retrieval, the token budget, the output file.

The benchmark supplies a :class:`PromptLayout` (its prompt, which files are BM25 documents,
what the query and the oracle files are); this module does the neutral rest:

* read the repository at the instance's base (a commit of a mirror, or a commit plus a patch,
  made by the harness's own :class:`Workspace` as for evaluation) straight from git objects;
* ``oracle``: the layout's oracle files; ``bm25``: the ``top_k`` files BM25 ranks highest for
  the layout's query, added in rank order while the prompt stays under ``max_tokens``
  cl100k_base tokens (SWE-bench's rule: the prompt without files plus each file's block must
  stay *below* the limit, a file that does not fit is skipped and smaller ones after it may
  still go in); the finished prompt is then counted whole and files are dropped from the end
  while it is over, so the limit holds for the text as written;
* one tree and one BM25 index per (repository, revision), reused by the instances that share
  it; each file's token count is cached by (path, blob), so it is counted once per process.

Rows are the dataset's own fields plus ``text``, in dataset order.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Callable
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures import as_completed
from dataclasses import dataclass
from dataclasses import field
from dataclasses import replace
from pathlib import Path
from typing import Any
from typing import Protocol

from pytest_tebench.errors import InputError
from pytest_tebench.errors import TebenchError
from pytest_tebench.instance.datasets import RawRecord
from pytest_tebench.text.bm25 import Analyzer
from pytest_tebench.text.bm25 import FileIndex
from pytest_tebench.text.tokens import TokenCache
from pytest_tebench.text.tokens import count_tokens
from pytest_tebench.workspace.checkout import Workspace
from pytest_tebench.workspace.patches import parse_patch
from pytest_tebench.workspace.repos import RepositoryStore
from pytest_tebench.workspace.textdiff import legacy_encoding
from pytest_tebench.workspace.textdiff import shown_text_diff
from pytest_tebench.workspace.trees import Tree
from pytest_tebench.workspace.trees import read_tree

STYLES = ("oracle", "bm25")
DEFAULT_MAX_TOKENS = 13_000
#: SWE-bench's retrieval keeps the 20 best files per instance.
DEFAULT_TOP_K = 20


@dataclass(frozen=True)
class TextInstance:
    """What the builder needs of one instance; ``row`` is written out with ``text`` added."""

    instance_id: str
    repo: str
    #: The revision whose files the prompt shows ...
    commit: str
    #: ... with this patch applied on top ("" for none; TEBench's V-0.5 = V-1 + source_patch).
    patch: str
    row: dict[str, Any]
    #: Names ``-k`` matches against (instance id, project, labels ...).
    names: tuple[str, ...]
    #: Why the row cannot be used (missing field ...); such an instance is reported, not built.
    problem: str | None = None
    #: Set by :meth:`PromptLayout.shorten`: what the prompt shows of the task instead of the row's
    #: own text (the row itself is always written unchanged).
    shown_task: str | None = None
    #: ``patch`` as the prompt shows it, set by the builder when ``patch`` sends a text file that
    #: is not UTF-8 (a Latin-1 source) as a GIT binary patch: that file's diff as readable text.
    shown_patch: str | None = None

    @property
    def tree_key(self) -> tuple[str, str, str]:
        return (self.repo, self.commit, hashlib.sha256(self.patch.encode()).hexdigest())


class PromptLayout(Protocol):
    """A benchmark's prompt: everything benchmark-specific the builder asks for."""

    name: str

    def load(self, records: Sequence[RawRecord]) -> list[TextInstance]: ...

    def is_document(self, path: str) -> bool:
        """Whether ``path`` is a BM25 document."""
        ...

    def is_context(self, path: str) -> bool:
        """Files always shown (README files), whatever the style."""
        ...

    def query(self, instance: TextInstance) -> str: ...

    def oracle_files(self, instance: TextInstance) -> list[str]: ...

    def file_block(self, path: str, text: str) -> str:
        """How one file is shown; its tokens are what the budget counts per file."""
        ...

    def render(self, instance: TextInstance, context: dict[str, str], files: dict[str, str]) -> str:
        """The whole prompt, as written to the ``text`` column."""
        ...

    def shorten(self, instance: TextInstance, max_tokens: int, count: Callable[[str], int]) -> TextInstance:
        """The instance with a shorter ``shown_task`` when its prompt without files exceeds ``max_tokens``
        (or the instance itself, when the benchmark's prompts must not change)."""
        ...


@dataclass(frozen=True)
class TextSettings:
    style: str = "bm25"
    max_tokens: int = DEFAULT_MAX_TOKENS
    top_k: int = DEFAULT_TOP_K
    scratch: Path = Path("/tmp")

    def __post_init__(self) -> None:
        if self.style not in STYLES:
            raise InputError(f"unknown style {self.style!r}; choose one of {', '.join(STYLES)}")
        if self.max_tokens <= 0 or self.top_k <= 0:
            raise InputError("--max-tokens and --top-k must be positive")


@dataclass(frozen=True)
class TextOutcome:
    """One instance's result: its row (None when it failed) and what went into the prompt."""

    instance_id: str
    row: dict[str, Any] | None
    files: tuple[str, ...] = ()
    #: BM25's ranking (document ids, best first), before the budget.
    ranked: tuple[str, ...] = ()
    tokens: int = 0
    #: A retrieved file was left out because the budget was full.
    budget_hit: bool = False
    seconds: float = 0.0
    error: str | None = None


@dataclass
class TextResult:
    outcomes: list[TextOutcome] = field(default_factory=list)

    @property
    def rows(self) -> list[dict[str, Any]]:
        return [o.row for o in self.outcomes if o.row is not None]

    @property
    def failed(self) -> list[TextOutcome]:
        return [o for o in self.outcomes if o.row is None]


class _Caches:
    """Per-process state: the last tree and index, and every file's token count."""

    def __init__(self) -> None:
        self.tree_key: object = None
        self.tree: Tree | None = None
        self.index: FileIndex | None = None
        self.shown_patch: str | None = None
        self.tokens = TokenCache()
        self._analyzer: Analyzer | None = None
        self.last_documents: set[object] = set()

    @property
    def analyzer(self) -> Analyzer:
        # made on first use: it needs the text extra, which oracle prompts do not
        if self._analyzer is None:
            self._analyzer = Analyzer()
        return self._analyzer


_CACHES = _Caches()


def build_texts(
    instances: Sequence[TextInstance],
    layout: PromptLayout,
    store: RepositoryStore,
    settings: TextSettings,
    *,
    jobs: int = 1,
    progress: Callable[[str], object] = print,
) -> TextResult:
    """Build the text row of every instance, ``jobs`` processes at a time, in dataset order."""
    # instances of one revision next to each other, so a worker reuses its tree and index
    order = sorted(range(len(instances)), key=lambda i: (instances[i].tree_key, i))
    outcomes: dict[int, TextOutcome] = {}
    total = len(order)

    def report(done: int, outcome: TextOutcome) -> None:
        if outcome.error is not None:
            progress(f"[{done}/{total}] {outcome.instance_id}: FAILED {outcome.error}")
            return
        budget = ", budget full" if outcome.budget_hit else ""
        if settings.style == "bm25" and outcome.tokens > settings.max_tokens:
            budget = ", OVER the budget without any file (the task text alone is longer)"
        progress(
            f"[{done}/{total}] {outcome.instance_id}: {len(outcome.files)} file(s), "
            f"{outcome.tokens} tokens{budget} ({outcome.seconds:.1f} s)"
        )

    if jobs <= 1:
        for done, index in enumerate(order, start=1):
            outcomes[index] = build_one(instances[index], layout, store, settings)
            report(done, outcomes[index])
    else:
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            futures = {pool.submit(build_one, instances[i], layout, store, settings): i for i in order}
            for done, future in enumerate(as_completed(futures), start=1):
                outcomes[futures[future]] = future.result()
                report(done, outcomes[futures[future]])
    return TextResult([outcomes[i] for i in range(len(instances))])


def build_one(
    instance: TextInstance, layout: PromptLayout, store: RepositoryStore, settings: TextSettings
) -> TextOutcome:
    """One instance's row; a harness failure becomes an outcome with ``error``, never an exception."""
    started = time.perf_counter()
    if instance.problem is not None:
        return TextOutcome(instance.instance_id, None, error=instance.problem)
    try:
        outcome = _build(instance, layout, store, settings)
    except (TebenchError, OSError) as exc:  # a bad patch in the row too: one instance, not the run
        return TextOutcome(instance.instance_id, None, error=str(exc), seconds=time.perf_counter() - started)
    return TextOutcome(**{**outcome.__dict__, "seconds": time.perf_counter() - started})


def _build(
    instance: TextInstance, layout: PromptLayout, store: RepositoryStore, settings: TextSettings
) -> TextOutcome:
    oracle = layout.oracle_files(instance) if settings.style == "oracle" else []
    tree, index, shown_patch = _tree_and_index(instance, layout, store, settings, set(oracle))
    if shown_patch is not None:
        instance = replace(instance, shown_patch=shown_patch)
    context = {p: _text(tree, p) for p in sorted(tree.blobs) if layout.is_context(p)}
    if settings.style == "oracle":
        files = {p: _text(tree, p) for p in oracle}
        text = layout.render(instance, context, files)
        return TextOutcome(instance.instance_id, {**instance.row, "text": text}, tuple(oracle),
                           tokens=count_tokens(text))  # fmt: skip
    assert index is not None
    ranked = [hit.docid for hit in index.search(layout.query(instance), settings.top_k)]
    if count_tokens(layout.render(instance, context, {})) > settings.max_tokens:
        instance = layout.shorten(instance, settings.max_tokens, count_tokens)
    chosen, budget_hit = _fit(instance, layout, tree, context, ranked, max_tokens=settings.max_tokens)
    text = layout.render(instance, context, {p: _text(tree, p) for p in chosen})
    tokens = count_tokens(text)
    while tokens > settings.max_tokens and chosen:
        # per-file counts can undercount the joined text by a token or two at the seams
        chosen.pop()
        budget_hit = True
        text = layout.render(instance, context, {p: _text(tree, p) for p in chosen})
        tokens = count_tokens(text)
    row = {**instance.row, "text": text}
    return TextOutcome(instance.instance_id, row, tuple(chosen), tuple(ranked), tokens, budget_hit)


def _fit(
    instance: TextInstance, layout: PromptLayout, tree: Tree, context: dict[str, str],
    ranked: list[str], *, max_tokens: int,
) -> tuple[list[str], bool]:  # fmt: skip
    """SWE-bench's budget rule: base prompt + file blocks, each file added while the sum stays below."""
    used = count_tokens(layout.render(instance, context, {}))
    chosen: list[str] = []
    budget_hit = False
    for path in ranked:

        def block(path: str = path) -> str:
            return layout.file_block(path, _text(tree, path))

        size = _CACHES.tokens.count((path, tree.sha(path)), block, count_tokens)
        if used + size < max_tokens:
            chosen.append(path)
            used += size
        else:
            budget_hit = True
    return chosen, budget_hit


def _tree_and_index(
    instance: TextInstance, layout: PromptLayout, store: RepositoryStore, settings: TextSettings,
    oracle: set[str],
) -> tuple[Tree, FileIndex | None, str | None]:  # fmt: skip
    key = (instance.tree_key, settings.style, tuple(sorted(oracle)))
    if settings.style == "bm25":
        key = (instance.tree_key, settings.style, ())
    if _CACHES.tree_key == key and _CACHES.tree is not None:
        return _CACHES.tree, _CACHES.index, _CACHES.shown_patch

    def wanted(path: str) -> bool:
        if settings.style == "bm25":
            return layout.is_document(path) or layout.is_context(path)
        return path in oracle or layout.is_context(path)

    mirror = store.locate(instance.repo, [instance.commit])
    shown_patch = None
    if instance.patch.strip():
        workspace = Workspace.create(mirror, instance.commit, instance.patch, parent=settings.scratch)
        try:
            tree = read_tree(workspace.path, "v-0.5", wanted=wanted)
            shown_patch = _readable_patch(workspace.path, instance)
        finally:
            workspace.remove()
    else:
        tree = read_tree(mirror, instance.commit, wanted=wanted)
    index = None
    if settings.style == "bm25":
        # a document is its path and its contents, as SWE-bench's file_name_and_contents builds it
        documents: dict[str, str | tuple[object, str]] = {
            path: ((path, tree.sha(path)), path + "\n" + _text(tree, path))
            for path in sorted(tree.blobs)
            if layout.is_document(path)
        }
        keys = {value[0] for value in documents.values() if isinstance(value, tuple)}
        # unchanged files keep their analysed terms from the previous revision; older ones are dropped
        _CACHES.analyzer.keep_only(keys | _CACHES.last_documents)
        _CACHES.last_documents = keys
        index = FileIndex(documents, _CACHES.analyzer)
    _CACHES.tree_key, _CACHES.tree, _CACHES.index, _CACHES.shown_patch = key, tree, index, shown_patch
    return tree, index, shown_patch


def _readable_patch(workspace: Path, instance: TextInstance) -> str | None:
    """``instance.patch`` with each GIT binary piece of a text file that is not UTF-8 replaced by
    that file's diff as text (base85 tells a model nothing); None when it has no such piece."""
    pieces = parse_patch(instance.patch)
    shown = [
        shown_text_diff(workspace, instance.commit, "v-0.5", f.old_path, f.new_path) if f.binary else None
        for f in pieces
    ]
    if all(text is None for text in shown):
        return None
    return "".join(text if text is not None else f.text for f, text in zip(pieces, shown, strict=True))


def _text(tree: Tree, path: str) -> str:
    text = tree.text(path)
    if text is None:
        if tree.sha(path) is None:
            return ""
        data = tree.blobs[path][1]
        # not UTF-8: a Latin-1 source is shown in its own encoding (evaluation sends a model's
        # non-ASCII text back in it); a binary file with replacement characters rather than
        # failing the instance
        encoding = legacy_encoding(data) if b"\0" not in data else None
        text = data.decode(encoding or "utf-8", errors="replace")
        return text.replace("\r\n", "\n").replace("\r", "\n")
    return text


def default_jobs() -> int:
    return max(1, min(4, (os.cpu_count() or 1)))
