"""Terminal tables: exact layout for a hand-built summary."""

from __future__ import annotations

from typing import Any

from pytest_tebench.benchmarks.tebench.terminal import format_counts_line
from pytest_tebench.benchmarks.tebench.terminal import format_identification_table
from pytest_tebench.benchmarks.tebench.terminal import format_model_summary
from pytest_tebench.benchmarks.tebench.terminal import format_update_table
from pytest_tebench.benchmarks.tebench.terminal import percent

NULL_GROUP = {"precision": None, "recall": None, "f1": None, "tp": None, "fp": None, "fn": None, "items": 0}


def model_summary(update: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "counts": {
            "items": 12,
            "scored": 11,
            "evaluated": 9,
            "empty": 1,
            "not_applied": 1,
            "errors": 1,
            "timeouts": 0,
            "invalid_instances": 0,
        },
        "identification": {
            # tp 251, fp 863, fn 290: the reference README's example -> P 22.53, R 46.4, F1 30.33.
            "micro": {
                "precision": 251 / 1114,
                "recall": 251 / 541,
                "f1": 502 / 1655,
                "tp": 251,
                "fp": 863,
                "fn": 290,
                "items": 11,
            },
            "macro": {"precision": 0.25, "recall": 0.5, "f1": 0.471, "items": 11},
            "by_label": {
                "breaking": {**NULL_GROUP, "precision": 0.5, "recall": 1.0, "f1": 2 / 3, "items": 4},
                "stale": {**NULL_GROUP, "precision": 0.0, "recall": 0.0, "f1": 0.0, "items": 7},
                "missing": NULL_GROUP,
            },
        },
        "update": update,
        "errors": ["proj-9"],
        "invalid_instances": [],
    }


def test_percent() -> None:
    assert percent(0.4712) == "47.1"
    assert percent(1.0) == "100.0"
    assert percent(0.0) == "0.0"
    assert percent(None) == "-"
    assert percent(2 / 3) == "66.7"


def test_identification_table_layout() -> None:
    lines = format_identification_table("claude-code", model_summary())
    # P = 251/1114 = 22.53%, R = 251/541 = 46.40%, F1 = 502/1655 = 30.33%.
    assert lines == [
        "Identification - model 'claude-code' (percent)",
        "                    Items       P       R      F1",
        "  ---------------   -----   -----   -----   -----",
        "  Overall (micro)      11    22.5    46.4    30.3",
        "  Macro                11    25.0    50.0    47.1",
        "  Breaking              4    50.0   100.0    66.7",
        "  Stale                 7     0.0     0.0     0.0",
        "  Missing               0       -       -       -",
        "  micro counts: TP 251, FP 863, FN 290",
    ]


def test_identification_table_accepts_whole_summary() -> None:
    whole = {"claude-code": model_summary()}
    assert format_identification_table("claude-code", whole) == format_identification_table(
        "claude-code", model_summary()
    )


def test_update_table_layout() -> None:
    update = {
        "oa": 0.705,
        "items": 10,
        "means": {"s_exec": 0.95, "s_line": 0.6, "s_branch": None, "s_mod": 0.5},
        "by_label": {
            "breaking": {"oa": 0.732, "items": 4},
            "stale": {"oa": 0.685, "items": 7},
            "missing": {"oa": None, "items": 0},
        },
        "no_coverage_change": 2,
        "scoring": "readme",
    }
    assert format_update_table("codex", model_summary(update)) == [
        "Update - model 'codex' (percent; scoring: readme)",
        "             Items      OA",
        "  --------   -----   -----",
        "  Overall       10    70.5",
        "  Breaking       4    73.2",
        "  Stale          7    68.5",
        "  Missing        0       -",
        "  means: s_exec 95.0 | s_line 60.0 | s_branch - | s_mod 50.0",
        "  2 items without ground-truth coverage change (no s_line/s_branch)",
    ]


def test_update_table_empty_when_not_scored() -> None:
    assert format_update_table("codex", model_summary(None)) == []


def test_counts_line() -> None:
    assert format_counts_line(model_summary()) == "12 items: 9 evaluated, 1 empty, 1 not applied, 1 error"
    counts = {
        "items": 1,
        "evaluated": 0,
        "empty": 0,
        "not_applied": 0,
        "errors": 0,
        "timeouts": 1,
        "invalid_instances": 2,
    }
    assert format_counts_line({"counts": counts}) == (
        "1 item: 0 evaluated, 0 empty, 0 not applied, 0 errors, 1 timeout, 2 invalid instances"
    )


def test_model_summary_lists_failing_ids_abbreviated() -> None:
    summary = model_summary()
    summary["errors"] = [f"p-{i:02d}" for i in range(12)]
    lines = format_model_summary("m", summary)
    assert lines[0] == "pytest-tebench - m: 12 items: 9 evaluated, 1 empty, 1 not applied, 1 error"
    assert lines[-1] == (
        "  not evaluated (error/timeout): p-00, p-01, p-02, p-03, p-04, p-05, p-06, p-07, p-08, p-09"
        " ... and 2 more"
    )
