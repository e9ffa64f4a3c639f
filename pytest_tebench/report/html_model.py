"""What the HTML report shows, as plain data: runs merged, models keyed, leaderboard columns, items.

Benchmark-neutral on purpose: nothing here knows TEBench's field names. A model's summary is
read as a tree, and every float leaf is a score column (ints are counts, shown beside the scores
they belong to); a record's float leaves outside ``timings`` are its per-item scores, and its
numeric leaves under a ``timings`` mapping are where its time went. A new benchmark's summary
(SWE-bench's % resolved, RealCodeJava's pass@k) therefore renders without code of its own.

No matplotlib, pygments or jinja2 here: this module is the part the tests check value by value.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import Any

#: Leaf names preferred as a group's headline score, most preferred first.
HEADLINE_LEAVES = ("f1", "oa", "s_update", "resolved", "pass@1", "pass_at_1", "score", "accuracy")
#: Summary subtrees that are not score columns of the main leaderboard.
_COUNTS_KEY = "counts"
_PROJECT_KEY = "by_project"
#: Record fields shown elsewhere in the drill-down (or too big to repeat in "all fields").
PATCH_FIELDS = ("prediction_patch", "gold_patch")
#: How deep in a record a per-item score may lie (``update.s_update``).
_SCORE_DEPTH = 2


@dataclass(frozen=True)
class Run:
    """One JSON report and the name it is shown under."""

    name: str
    report: Mapping[str, Any]

    @property
    def benchmark(self) -> str:
        options = (self.report.get("extra") or {}).get("options") or {}
        return str(self.report.get("benchmark") or options.get("benchmark") or "unknown")


@dataclass(frozen=True)
class ModelRow:
    """One (run, model) pair: a leaderboard row and a series in every plot."""

    key: str  # unique across the merged runs; the name users see
    model: str
    run: str
    benchmark: str
    summary: Mapping[str, Any]


@dataclass(frozen=True)
class Column:
    """A score column of a leaderboard: a dotted path into a model's summary."""

    path: str

    @property
    def group(self) -> str:
        return self.path.rpartition(".")[0]

    @property
    def leaf(self) -> str:
        return self.path.rpartition(".")[2]


@dataclass
class Leaderboard:
    benchmark: str
    rows: list[ModelRow]
    counts: list[str]
    columns: list[Column]
    #: Per-project headline scores: project -> model key -> {group path: value}
    projects: dict[str, dict[str, dict[str, float | None]]] = field(default_factory=dict)
    project_groups: list[str] = field(default_factory=list)

    def group_spans(self) -> list[tuple[str, int]]:
        """``(group, number of columns)`` for the header row above the score columns."""
        spans: list[tuple[str, int]] = []
        for column in self.columns:
            if spans and spans[-1][0] == column.group:
                spans[-1] = (column.group, spans[-1][1] + 1)
            else:
                spans.append((column.group, 1))
        return spans


def run_name(path: str | os.PathLike[str], taken: Iterable[str] = ()) -> str:
    """A short, unique name for a report file: its stem, numbered when two files share it."""
    stem = Path(path).stem or str(path)
    name, n = stem, 2
    taken = set(taken)
    while name in taken:
        name, n = f"{stem}-{n}", n + 1
    return name


def model_rows(runs: Sequence[Run]) -> list[ModelRow]:
    """Every (run, model) pair, keyed by the model's name, or ``model @ run`` when names repeat."""
    pairs = [(run, model) for run in runs for model in (run.report.get("summary") or {})]
    seen: dict[str, int] = {}
    for _, model in pairs:
        seen[model] = seen.get(model, 0) + 1
    return [
        ModelRow(
            key=model if seen[model] == 1 else f"{model} @ {run.name}",
            model=model,
            run=run.name,
            benchmark=run.benchmark,
            summary=run.report["summary"][model],
        )
        for run, model in pairs
    ]


def leaves(tree: Any, prefix: str = "") -> Iterable[tuple[str, Any]]:
    """``(dotted path, value)`` of every non-mapping leaf of ``tree``, in the tree's order."""
    if isinstance(tree, Mapping):
        for key, value in tree.items():
            yield from leaves(value, f"{prefix}.{key}" if prefix else str(key))
    else:
        yield prefix, tree


def is_score(value: Any) -> bool:
    """Scores are floats; ints are counts and bools are flags (``resolved`` is handled apart)."""
    return isinstance(value, float)


def get_path(tree: Any, path: str) -> Any:
    for part in path.split("."):
        if not isinstance(tree, Mapping) or part not in tree:
            return None
        tree = tree[part]
    return tree


def leaderboards(rows: Sequence[ModelRow]) -> list[Leaderboard]:
    """One leaderboard per benchmark, in the order benchmarks first appear."""
    boards: dict[str, Leaderboard] = {}
    for row in rows:
        board = boards.setdefault(row.benchmark, Leaderboard(row.benchmark, [], [], []))
        board.rows.append(row)
    for board in boards.values():
        counts: dict[str, None] = {}
        columns: dict[str, None] = {}
        groups: dict[str, None] = {}
        for row in board.rows:
            for name, value in (row.summary.get(_COUNTS_KEY) or {}).items():
                if isinstance(value, int) and not isinstance(value, bool):
                    counts.setdefault(name)
            for path, value in leaves({k: v for k, v in row.summary.items() if k != _COUNTS_KEY}):
                parts = path.split(".")
                if _PROJECT_KEY in parts:
                    index = parts.index(_PROJECT_KEY)
                    groups.setdefault(".".join(parts[: index + 1]))
                elif is_score(value) or (value is None and _looks_like_score(board.rows, path)):
                    columns.setdefault(path)
        board.counts = list(counts)
        board.columns = [Column(path) for path in columns]
        board.project_groups = list(groups)
        board.projects = _projects(board.rows, board.project_groups)
    return list(boards.values())


def _looks_like_score(rows: Sequence[ModelRow], path: str) -> bool:
    """A null leaf is a score column when some model has a float there (a group nobody hit)."""
    return any(is_score(get_path(row.summary, path)) for row in rows)


def headline(group: Mapping[str, Any]) -> float | None:
    """The group's headline score: the first of :data:`HEADLINE_LEAVES` it has, else its first float."""
    for name in HEADLINE_LEAVES:
        value = group.get(name)
        if isinstance(value, float | bool):
            return float(value)
    for _, leaf in leaves(group):
        if isinstance(leaf, float):
            return leaf
    return None


def _projects(
    rows: Sequence[ModelRow], groups: Sequence[str]
) -> dict[str, dict[str, dict[str, float | None]]]:
    table: dict[str, dict[str, dict[str, float | None]]] = {}
    for group in groups:
        for row in rows:
            by_project = get_path(row.summary, group)
            if not isinstance(by_project, Mapping):
                continue
            for project, scores in by_project.items():
                value = headline(scores) if isinstance(scores, Mapping) else None
                table.setdefault(str(project), {}).setdefault(row.key, {})[group] = value
    return dict(sorted(table.items()))


def items_of(groups: Any, name: str) -> int | None:
    """The ``items`` count of member ``name`` of a ``by_*`` mapping (project names may hold dots)."""
    group = groups.get(name) if isinstance(groups, Mapping) else None
    value = group.get("items") if isinstance(group, Mapping) else None
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def items_in_group(row: ModelRow, column: Column) -> int | None:
    """How many items a score stands on: its group's ``items`` count when the summary has one."""
    value = get_path(row.summary, f"{column.group}.items") if column.group else None
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    return None


# -- per-item data ----------------------------------------------------------------------------
def item_scores(record: Mapping[str, Any]) -> dict[str, float]:
    """A record's per-item scores: float leaves outside ``timings``; top-level bools as 0/1.

    Only two levels deep (``update.s_update``): deeper floats are parts of a score (per method,
    per test), not scores of the item.
    """
    scores: dict[str, float] = {}
    for path, value in leaves({k: v for k, v in record.items() if k not in PATCH_FIELDS}):
        parts = path.split(".")
        if "timings" in parts or len(parts) > _SCORE_DEPTH:
            continue
        if is_score(value):
            scores[path] = value
        elif isinstance(value, bool) and "." not in path:
            scores[path] = float(value)
    return scores


def item_timings(record: Mapping[str, Any], *, nested: bool = False) -> dict[str, float]:
    """Seconds per phase, from the record's top-level ``timings`` mapping.

    With ``nested``, from the ``timings`` mappings deeper in the record instead (a build's own
    steps, e.g. ``update.compile``): they are parts of a top-level phase, so never added to it.
    """
    found: dict[str, float] = {}
    for path, value in leaves({k: v for k, v in record.items() if k not in PATCH_FIELDS}):
        parts = path.split(".")
        if "timings" not in parts or isinstance(value, bool) or not isinstance(value, int | float):
            continue
        index = parts.index("timings")
        if (index > 0) == nested:
            found[".".join(parts[:index] + parts[index + 1 :])] = float(value)
    return found


def score_paths(records: Iterable[Mapping[str, Any]]) -> list[str]:
    """Every per-item score path in first-seen order, the headline ones first."""
    seen: dict[str, None] = {}
    for record in records:
        for path in item_scores(record):
            seen.setdefault(path)
    return sorted(seen, key=lambda p: (_headline_rank(p), list(seen).index(p)))


def _headline_rank(path: str) -> int:
    leaf = path.rpartition(".")[2]
    return HEADLINE_LEAVES.index(leaf) if leaf in HEADLINE_LEAVES else len(HEADLINE_LEAVES)


def identification_sets(record: Mapping[str, Any]) -> dict[str, list[str]] | None:
    """TP, FP and FN items of a record with ``gold_items``/``predicted_items`` lists (any group)."""
    for _, group in record.items():
        if isinstance(group, Mapping) and isinstance(group.get("gold_items"), list):
            gold = [str(i) for i in group["gold_items"]]
            predicted = [str(i) for i in group.get("predicted_items") or []]
            return {
                "tp": [i for i in gold if i in set(predicted)],
                "fp": [i for i in predicted if i not in set(gold)],
                "fn": [i for i in gold if i not in set(predicted)],
            }
    return None


def records(runs: Sequence[Run], rows: Sequence[ModelRow]) -> list[tuple[str, Mapping[str, Any]]]:
    """``(model key, record)`` for every result of every run, in report order."""
    keys = {(row.run, row.model): row.key for row in rows}
    out: list[tuple[str, Mapping[str, Any]]] = []
    for run in runs:
        for record in run.report.get("results") or []:
            model = str(record.get("model_name_or_path"))
            out.append((keys.get((run.name, model), model), record))
    return out
