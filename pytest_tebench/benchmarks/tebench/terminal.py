"""TEBench's terminal tables: the paper's Table 5 (identification) and Table 6 (update) shapes.

Pure functions from a per-model summary (one value of
:func:`pytest_tebench.benchmarks.tebench.aggregate.summarise`) to lines of text; the pytest side decides
where to print them. Scores are shown as percentages with one decimal, like the paper
("47.1"), and a group that was not measured shows "-" rather than a misleading "0.0".

Only ASCII is used so the tables survive any console encoding and CI log viewer.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pytest_tebench.benchmarks.tebench.aggregate import UPDATE_COMPONENTS
from pytest_tebench.benchmarks.tebench.settings import LABELS
from pytest_tebench.report.terminal import INDENT
from pytest_tebench.report.terminal import count
from pytest_tebench.report.terminal import format_counts_line
from pytest_tebench.report.terminal import format_ids
from pytest_tebench.report.terminal import percent
from pytest_tebench.report.terminal import plural
from pytest_tebench.report.terminal import render_table


def _model_summary(model: str, summary: Mapping[str, Any]) -> Mapping[str, Any]:
    """Accept either one model's summary or the whole ``summarise()`` result."""
    if "identification" in summary or "counts" in summary or "update" in summary:
        return summary
    if model in summary:
        inner: Mapping[str, Any] = summary[model]
        return inner
    raise KeyError(f"no summary for model {model!r}")


def _label_rows(by_label: Mapping[str, Any]) -> list[str]:
    """Paper labels first (always, even when empty), then any extra label in the summary."""
    return list(LABELS) + sorted(label for label in by_label if label not in LABELS)


def format_identification_table(model: str, summary: Mapping[str, Any]) -> list[str]:
    """Table 5 shape: rows Overall (micro), Macro and one per label; columns Items, P, R, F1."""
    identification = _model_summary(model, summary).get("identification")
    title = f"Identification - model {model!r} (percent)"
    if not identification:
        return [title, INDENT + "no identification scores"]
    micro = identification["micro"]
    macro = identification["macro"]
    by_label = identification.get("by_label", {})

    def row(name: str, group: Mapping[str, Any] | None) -> list[str]:
        group = group or {}
        return [
            name,
            count(group.get("items", 0)),
            percent(group.get("precision")),
            percent(group.get("recall")),
            percent(group.get("f1")),
        ]

    rows = [row("Overall (micro)", micro), row("Macro", macro)]
    rows += [row(label.capitalize(), by_label.get(label)) for label in _label_rows(by_label)]
    lines = [title, *render_table(["", "Items", "P", "R", "F1"], rows)]
    if micro.get("tp") is not None:
        lines.append(f"{INDENT}micro counts: TP {micro['tp']}, FP {micro['fp']}, FN {micro['fn']}")
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
        return [name, count(group.get("items", 0)), percent(group.get("oa"))]

    rows = [row("Overall", update)]
    rows += [row(label.capitalize(), by_label.get(label)) for label in _label_rows(by_label)]
    means = update.get("means", {})
    lines = [title, *render_table(["", "Items", "OA"], rows)]
    lines.append(
        INDENT + "means: " + " | ".join(f"{name} {percent(means.get(name))}" for name in UPDATE_COMPONENTS)
    )
    unchanged = update.get("no_coverage_change")
    if unchanged:
        items = plural(int(unchanged), "item")
        lines.append(f"{INDENT}{items} without ground-truth coverage change (no s_line/s_branch)")
    return lines


def format_model_summary(model: str, summary: Mapping[str, Any]) -> list[str]:
    """Everything for one model: counts, both tables and the ids that could not be evaluated."""
    model_summary = _model_summary(model, summary)
    lines = [f"pytest-tebench - {model}: {format_counts_line(model_summary)}"]
    lines += format_identification_table(model, model_summary)
    lines += format_update_table(model, model_summary)
    for key, what in (
        ("errors", "not evaluated (error/timeout)"),
        ("invalid_instances", "invalid instances"),
        ("missing_predictions", "no prediction (scored as empty)"),
    ):
        lines += format_ids(what, [str(i) for i in model_summary.get(key) or []])
    return lines
