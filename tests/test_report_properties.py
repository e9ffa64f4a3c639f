"""JUnit ``tebench.*`` properties: flat, ordered, scalar."""

from __future__ import annotations

from typing import Any

from pytest_tebench.benchmarks.tebench.properties import tebench_properties
from pytest_tebench.report.properties import Property
from pytest_tebench.report.properties import record_to_properties as neutral_properties
from pytest_tebench.report.properties import scalar


def record_to_properties(record: dict[str, Any]) -> list[Property]:
    """What an item gets: the neutral properties around TEBench's own."""
    return neutral_properties(record, tebench_properties(record))


def full_record() -> dict[str, Any]:
    return {
        "instance_id": "jsoup-1",
        "model_name_or_path": "codex",
        "project": "jsoup",
        "labels": ["stale", "breaking", "stale"],
        "status": "evaluated",
        "error": None,
        "apply_method": "git-apply",
        "touched_non_test_files": ["src/main/B.java", "pom.xml"],
        "identification": {
            "tp": 1,
            "fp": 2,
            "fn": 0,
            "precision": 1 / 3,
            "recall": 1.0,
            "f1": 0.5,
            "gold_items": ["a"],
            "predicted_items": ["a", "b", "c"],
        },
        "update": {
            "s_exec": 1.0,
            "s_line": None,
            "s_branch": 0.25,
            "s_mod": 0.8,
            "s_update": 0.62,
            "gt_has_coverage_change": True,
            "selection": {"tests": ["T#t"]},
        },
        "timings": {"test": 12.3456789, "apply": 0.5},
    }


def test_full_record() -> None:
    assert record_to_properties(full_record()) == [
        ("tebench.instance_id", "jsoup-1"),
        ("tebench.model", "codex"),
        ("tebench.project", "jsoup"),
        ("tebench.status", "evaluated"),
        ("tebench.labels", "breaking,stale"),  # canonical order, deduplicated
        ("tebench.apply_method", "git-apply"),
        ("tebench.touched_non_test_files", "pom.xml,src/main/B.java"),
        ("tebench.identification.tp", 1),
        ("tebench.identification.fp", 2),
        ("tebench.identification.fn", 0),
        ("tebench.identification.precision", 0.333333),
        ("tebench.identification.recall", 1.0),
        ("tebench.identification.f1", 0.5),
        ("tebench.update.s_exec", 1.0),
        ("tebench.update.s_line", ""),  # not measured: empty, never the text "None"
        ("tebench.update.s_branch", 0.25),
        ("tebench.update.s_mod", 0.8),
        ("tebench.update.s_update", 0.62),
        ("tebench.update.gt_has_coverage_change", True),
        ("tebench.timings.apply", 0.5),
        ("tebench.timings.test", 12.345679),
    ]


def test_error_record_has_no_score_blocks() -> None:
    record: dict[str, Any] = {
        "instance_id": "x",
        "model_name_or_path": "m",
        "project": "p",
        "labels": [],
        "status": "error",
        "error": "mvn: could not resolve dependencies",
        "apply_method": None,
        "touched_non_test_files": [],
        "identification": None,
        "update": None,
        "timings": {},
    }
    assert record_to_properties(record) == [
        ("tebench.instance_id", "x"),
        ("tebench.model", "m"),
        ("tebench.project", "p"),
        ("tebench.status", "error"),
        ("tebench.labels", ""),
        ("tebench.apply_method", ""),
        ("tebench.error", "mvn: could not resolve dependencies"),
    ]


def test_values_are_plain_scalars() -> None:
    for _name, value in record_to_properties(full_record()):
        assert isinstance(value, str | int | float | bool)
        assert value != "None"
    assert scalar({"a": 1}) == "{'a': 1}"
    assert scalar(float("nan")) == ""
    assert scalar(None) == ""
    assert scalar({"b", "a"}) == "a,b"
