"""Item statuses and what every benchmark counts of them; quality gates over per-model metrics.

Benchmark-neutral: every adapter's records carry a ``status``; this module says which statuses
are a model's score (possibly zero) and which are the harness's or the dataset's trouble, counts
them, and checks ``--tebench-fail-under`` thresholds against whatever metric values the adapter
reads out of its own summary.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
from typing import Any

#: Statuses whose record is a model's score (possibly zero): the prediction was judged. ``refused``
#: (it changes what configures or starts the test runner) and ``tampered`` (the runner was
#: interfered with while it ran) are a model's results too: unresolved, never a harness error.
SCORED_STATUSES: tuple[str, ...] = (
    "evaluated",
    "empty",
    "not_applied",
    "missing_prediction",
    "refused",
    "tampered",
)
#: Scored statuses whose prediction tried to grade itself (docs/threat-model.md).
INTEGRITY_STATUSES: tuple[str, ...] = ("refused", "tampered")
#: Statuses that are the harness's or the dataset's trouble: counted and listed, never scored.
HARNESS_STATUSES: tuple[str, ...] = ("error", "timeout", "invalid_instance", "unsupported_environment")

#: Decimals thresholds are compared at: the precision of the JSON report, so the gate and the
#: published number always agree.
THRESHOLD_DECIMALS = 6


def is_scored(record: Mapping[str, Any]) -> bool:
    """Whether a record's numbers belong in the model's scores."""
    return record.get("status") in SCORED_STATUSES


def status_counts(records: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """Counts per status; ``items`` = ``scored`` + ``errors`` + ``timeouts`` + ``invalid_instances``
    + ``unsupported`` (``refused`` and ``tampered`` are among the scored). An unknown status joins
    the errors: it must never quietly become a score."""
    statuses = [record.get("status") for record in records]
    known = set(SCORED_STATUSES) | set(HARNESS_STATUSES)
    return {
        "items": len(records),
        "scored": sum(1 for s in statuses if s in SCORED_STATUSES),
        "evaluated": statuses.count("evaluated"),
        "empty": statuses.count("empty"),
        "not_applied": statuses.count("not_applied"),
        "missing_predictions": statuses.count("missing_prediction"),
        "refused": statuses.count("refused"),
        "tampered": statuses.count("tampered"),
        "errors": sum(1 for s in statuses if s == "error" or s not in known),
        "timeouts": statuses.count("timeout"),
        "invalid_instances": statuses.count("invalid_instance"),
        "unsupported": statuses.count("unsupported_environment"),
    }


def not_scored_by_status(records: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """How many records of each status that is not a score (``{"error": 6, "unsupported_environment":
    3}``): what a benchmark whose reference divides by all instances names beside its figure."""
    counts: dict[str, int] = {}
    for record in records:
        if not is_scored(record):
            status = str(record.get("status"))
            counts[status] = counts.get(status, 0) + 1
    return dict(sorted(counts.items()))


def ids_with_status(records: Iterable[Mapping[str, Any]], statuses: Iterable[str]) -> list[str]:
    wanted = set(statuses)
    return sorted({str(r["instance_id"]) for r in records if r.get("status") in wanted})


def check_thresholds(
    summary: Mapping[str, Mapping[str, Any]],
    thresholds: Sequence[tuple[str, float]],
    metric_value: Callable[[Mapping[str, Any], str], float | None],
) -> list[str]:
    """Reasons the run misses its quality gates: one line per failing model, empty when all pass.

    A model whose metric was not measured (no scored items) fails: a gate that passes because
    nothing was measured would hide a broken run. For the same reason an empty summary fails
    when a threshold is set (``-k`` that selects nothing, a run where every item errored).
    """
    if not thresholds:
        return []
    if not summary:
        wanted = ", ".join(f"{metric} >= {value:.3f}" for metric, value in thresholds)
        return [f"no model was evaluated, so no threshold can be met ({wanted})"]
    reasons: list[str] = []
    for model in sorted(summary):
        problems: list[str] = []
        for metric, required in thresholds:
            value = metric_value(summary[model], metric)
            if value is None:
                problems.append(f"{metric} not measured (no scored items; required >= {required:.3f})")
            elif round(value, THRESHOLD_DECIMALS) < required:
                problems.append(f"{metric} {value:.3f} < required {required:.3f}")
        if problems:
            reasons.append(f"model {model!r}: " + "; ".join(problems))
    return reasons
