"""Human-readable terminal summary: counts line and the paper's Table 5 / Table 6 shapes.

Pure functions from a per-model summary (one value of
:func:`pytest_tebench.benchmarks.tebench.aggregate.summarise`) to lines of text; the pytest side decides
where to print them. Scores are shown as percentages with one decimal, like the paper
("47.1"), and a group that was not measured shows "-" rather than a misleading "0.0".

Only ASCII is used so the tables survive any console encoding and CI log viewer.
"""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Sequence
from typing import Any

from pytest_tebench.benchmarks.tebench.aggregate import UPDATE_COMPONENTS
from pytest_tebench.metrics.scores import LABELS

#: Placeholder for a value that does not exist (no items in the group).
MISSING = "-"
_INDENT = "  "
#: How many failing instance ids a summary line names before abbreviating.
_MAX_IDS_SHOWN = 10


def percent(value: float | None) -> str:
    """``0.4712 -> "47.1"``; ``None -> "-"``."""
    if value is None:
        return MISSING
    # Round to 6 decimals first, as the JSON report does, so the table and the report agree on
    # half-way cases instead of depending on binary representation noise.
    return f"{round(float(value), 6) * 100:.1f}"


def _count(value: int | None) -> str:
    return MISSING if value is None else str(value)


def _plural(n: int, singular: str, plural: str | None = None) -> str:
    return f"{n} {singular if n == 1 else (plural or singular + 's')}"


def _model_summary(model: str, summary: Mapping[str, Any]) -> Mapping[str, Any]:
    """Accept either one model's summary or the whole ``summarise()`` result."""
    if "identification" in summary or "counts" in summary or "update" in summary:
        return summary
    if model in summary:
        inner: Mapping[str, Any] = summary[model]
        return inner
    raise KeyError(f"no summary for model {model!r}")


def _render(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    """A fixed-width table: first column left-aligned, the others right-aligned."""
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    # Numeric columns get a minimum width so tables of different models line up.
    widths = [widths[0]] + [max(width, 5) for width in widths[1:]]

    def line(cells: Sequence[str]) -> str:
        first = cells[0].ljust(widths[0])
        rest = [cell.rjust(width) for cell, width in zip(cells[1:], widths[1:], strict=True)]
        return (_INDENT + "   ".join([first, *rest])).rstrip()

    rule = _INDENT + "   ".join("-" * width for width in widths)
    return [line(header), rule, *(line(row) for row in rows)]


def _label_rows(by_label: Mapping[str, Any]) -> list[str]:
    """Paper labels first (always, even when empty), then any extra label in the summary."""
    return list(LABELS) + sorted(label for label in by_label if label not in LABELS)


def format_identification_table(model: str, summary: Mapping[str, Any]) -> list[str]:
    """Table 5 shape: rows Overall (micro), Macro and one per label; columns Items, P, R, F1."""
    identification = _model_summary(model, summary).get("identification")
    title = f"Identification - model {model!r} (percent)"
    if not identification:
        return [title, _INDENT + "no identification scores"]
    micro = identification["micro"]
    macro = identification["macro"]
    by_label = identification.get("by_label", {})

    def row(name: str, group: Mapping[str, Any] | None) -> list[str]:
        group = group or {}
        return [
            name,
            _count(group.get("items", 0)),
            percent(group.get("precision")),
            percent(group.get("recall")),
            percent(group.get("f1")),
        ]

    rows = [row("Overall (micro)", micro), row("Macro", macro)]
    rows += [row(label.capitalize(), by_label.get(label)) for label in _label_rows(by_label)]
    lines = [title, *_render(["", "Items", "P", "R", "F1"], rows)]
    if micro.get("tp") is not None:
        lines.append(f"{_INDENT}micro counts: TP {micro['tp']}, FP {micro['fp']}, FN {micro['fn']}")
    return lines


def format_update_table(model: str, summary: Mapping[str, Any]) -> list[str]:
    """Table 6 shape: rows Overall and one per label with Items and OA, then component means.

    Returns no lines when the run did not score updates, so callers can print unconditionally.
    """
    update = _model_summary(model, summary).get("update")
    if not update:
        return []
    scoring = update.get("scoring")
    title = f"Update - model {model!r} (percent" + (f"; scoring: {scoring})" if scoring else ")")
    by_label = update.get("by_label", {})

    def row(name: str, group: Mapping[str, Any] | None) -> list[str]:
        group = group or {}
        return [name, _count(group.get("items", 0)), percent(group.get("oa"))]

    rows = [row("Overall", update)]
    rows += [row(label.capitalize(), by_label.get(label)) for label in _label_rows(by_label)]
    means = update.get("means", {})
    lines = [title, *_render(["", "Items", "OA"], rows)]
    lines.append(
        _INDENT + "means: " + " | ".join(f"{name} {percent(means.get(name))}" for name in UPDATE_COMPONENTS)
    )
    unchanged = update.get("no_coverage_change")
    if unchanged:
        count = _plural(int(unchanged), "item")
        lines.append(f"{_INDENT}{count} without ground-truth coverage change (no s_line/s_branch)")
    return lines


def format_counts_line(summary: Mapping[str, Any]) -> str:
    """One line of item counts, e.g. ``"12 items: 10 evaluated, 1 empty, 1 not applied, 0 errors"``.

    Timeouts and invalid instances are only mentioned when there are some.
    """
    counts = summary.get("counts", summary)
    parts = [
        f"{counts.get('evaluated', 0)} evaluated",
        f"{counts.get('empty', 0)} empty",
        f"{counts.get('not_applied', 0)} not applied",
        _plural(int(counts.get("errors", 0)), "error"),
    ]
    if counts.get("timeouts"):
        parts.append(_plural(int(counts["timeouts"]), "timeout"))
    if counts.get("invalid_instances"):
        parts.append(_plural(int(counts["invalid_instances"]), "invalid instance"))
    return f"{_plural(int(counts.get('items', 0)), 'item')}: " + ", ".join(parts)


def format_model_summary(model: str, summary: Mapping[str, Any]) -> list[str]:
    """Everything for one model: counts, both tables and the ids that could not be evaluated."""
    model_summary = _model_summary(model, summary)
    lines = [f"pytest-tebench - {model}: {format_counts_line(model_summary)}"]
    lines += format_identification_table(model, model_summary)
    lines += format_update_table(model, model_summary)
    for key, what in (
        ("errors", "not evaluated (error/timeout)"),
        ("invalid_instances", "invalid instances"),
    ):
        ids = [str(i) for i in model_summary.get(key) or []]
        if ids:
            # The JSON report has the full list; the terminal only needs enough to start digging.
            shown = ", ".join(ids[:_MAX_IDS_SHOWN])
            more = f" ... and {len(ids) - _MAX_IDS_SHOWN} more" if len(ids) > _MAX_IDS_SHOWN else ""
            lines.append(f"{_INDENT}{what}: {shown}{more}")
    return lines
