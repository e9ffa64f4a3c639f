"""SWT-bench figures per model, as ``src/report.py`` of swt-bench computes them.

Over the model's judged items (``evaluated``, ``empty``, ``not_applied``, ``missing_prediction``,
``refused``, ``tampered``: the last two never a success; harness statuses are listed, never
counted): W (applicability), S (success), F→X, F→P and P→P, each the percentage of judged items
with that indicator, and the mean coverage delta ΔC: the sum of the items' coverage deltas over
the items whose gold fix has executable changed lines (an item that ran nothing, being empty or
not applied, counts 0 over 1, as SWT-bench divides by the gold run's count of such instances).
"""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Sequence
from typing import Any

from pytest_tebench.benchmarks.swebench.summary import MODEL_STATUSES
from pytest_tebench.benchmarks.swebench.summary import UNSUPPORTED
from pytest_tebench.benchmarks.swebench.summary import grouped
from pytest_tebench.benchmarks.swebench.summary import harness_errors_by_instance
from pytest_tebench.benchmarks.swebench.summary import unsupported_reasons
from pytest_tebench.report.properties import PREFIX
from pytest_tebench.report.properties import Property
from pytest_tebench.report.properties import scalar

Record = Mapping[str, Any]
#: Indicator name in the summary -> field of the record's ``swtbench`` block.
INDICATORS = (("S", "resolved"), ("W", "applied"), ("F2X", "f2x"), ("F2P", "f2p"), ("P2P", "p2p"))


def _block(record: Record) -> Mapping[str, Any]:
    block = record.get("swtbench")
    return block if isinstance(block, Mapping) and record.get("status") == "evaluated" else {}


def _pct(part: int, whole: int) -> float | None:
    return round(100.0 * part / whole, 2) if whole else None


def coverage_items(records: Sequence[Record]) -> list[float]:
    """Coverage deltas of the judged items that count for ΔC (0.0 for items that ran nothing)."""
    deltas: list[float] = []
    for record in records:
        if record.get("status") not in MODEL_STATUSES:
            continue
        block = _block(record)
        if block and not block.get("executable_lines"):
            continue  # the gold fix has no executable changed lines here: not in SWT-bench's count
        deltas.append(float(block.get("coverage_delta") or 0.0))
    return deltas


def _figures(records: Sequence[Record]) -> dict[str, Any]:
    statuses = [str(r.get("status")) for r in records]
    judged = [r for r in records if r.get("status") in MODEL_STATUSES]
    counts: dict[str, int] = {"items": len(records), "judged": len(judged)}
    for _, field_name in INDICATORS:
        counts[field_name] = sum(1 for r in judged if _block(r).get(field_name))
    counts.update(
        empty=statuses.count("empty"),
        not_applied=statuses.count("not_applied"),
        missing_prediction=statuses.count("missing_prediction"),
        refused=statuses.count("refused"),
        tampered=statuses.count("tampered"),
        unsupported_environment=statuses.count(UNSUPPORTED),
        harness_errors=sum(1 for s in statuses if s not in MODEL_STATUSES and s != UNSUPPORTED),
    )
    deltas = coverage_items(records)
    figures: dict[str, Any] = {"counts": counts}
    for name, field_name in INDICATORS:
        figures[name] = _pct(counts[field_name], len(judged))
    figures["coverage_delta"] = round(100.0 * sum(deltas) / len(deltas), 2) if deltas else None
    return figures


def summarise(records: Sequence[Record]) -> dict[str, Any]:
    """``{model: {counts, S, W, F2X, F2P, P2P, coverage_delta, by_project: {repo: ...}, ...}}`` (percent)."""
    summary: dict[str, Any] = {}
    for model, mine in grouped(records, "model_name_or_path").items():
        repos = grouped(mine, "project")
        summary[model] = {
            **_figures(mine),
            "by_project": {repo: _figures(repo_records) for repo, repo_records in repos.items()},
            "unsupported": unsupported_reasons(mine),
            "harness_errors_by_instance": harness_errors_by_instance(mine),
        }
    return summary


#: The run-level JUnit properties per model (``tebench.swtbench.<model>.<name>``): percentages,
#: then counts.
SUITE_FIGURES = ("S", "W", "F2X", "F2P", "P2P", "coverage_delta")
SUITE_COUNTS = (
    "items", "judged", "resolved", "applied", "empty", "not_applied", "missing_prediction", "refused",
    "tampered", "unsupported_environment", "harness_errors",
)  # fmt: skip


def summary_properties(summary: Mapping[str, Any]) -> list[Property]:
    """Each model's SWT-bench figures (S, W, F→X, F→P, P→P in percent, mean coverage delta ΔC in
    percent) and the counts beside them, for ``<testsuite><properties>``."""
    properties: list[Property] = []
    for model, block in summary.items():
        name = f"{PREFIX}swtbench.{model}."
        properties += [(name + key, scalar(block.get(key))) for key in SUITE_FIGURES]
        counts = block.get("counts") or {}
        properties += [(name + key, scalar(counts.get(key))) for key in SUITE_COUNTS]
    return properties


def _show(value: Any) -> str:
    return "  n/a" if value is None else f"{value:5.1f}"


def _percent(value: Any) -> str:
    """A figure in a sentence: ``25.0%``, or ``-`` when no item was there to count (not ``n/a%``)."""
    return "-" if value is None else f"{value:.1f}%"


def summary_lines(summary: Mapping[str, Any]) -> list[str]:
    lines: list[str] = []
    header = (
        f"  {'':<30} {'judged':>6} {'W %':>6} {'S %':>6} {'F→X %':>6} {'F→P %':>6} {'P→P %':>6} {'ΔC %':>6}"
    )

    def row(name: str, figures: Mapping[str, Any]) -> str:
        shown = " ".join(
            f"{_show(figures.get(key)):>6}" for key in ("W", "S", "F2X", "F2P", "P2P", "coverage_delta")
        )
        return f"  {name:<30} {figures['counts']['judged']:>6} {shown}"

    for model, block in summary.items():
        counts = block["counts"]
        s, w = _percent(block["S"]), _percent(block["W"])
        f2p, delta = _percent(block["F2P"]), _percent(block["coverage_delta"])
        lines.append(
            f"model: {model}  success {counts['resolved']}/{counts['judged']} (S {s})  "
            f"applicable {counts['applied']} (W {w})  F→P {f2p}  mean coverage delta {delta}  "
            f"[empty {counts['empty']}, not applied {counts['not_applied']}, refused {counts['refused']}, "
            f"tampered {counts['tampered']}; not scored: "
            f"unsupported environment {counts['unsupported_environment']}, "
            f"harness errors {counts['harness_errors']}]"
        )
        lines.append(header)
        lines.append(row("all", block))
        for repo, figures in block["by_project"].items():
            lines.append(row(repo, figures))
        for reason in sorted(set(block["unsupported"].values())):
            lines.append(f"  unsupported: {reason}")
        lines.append("")
    return lines
