"""The JSON report: schema contract, determinism, rounding and the atomic writer."""

from __future__ import annotations

import json
import os
import random
from pathlib import Path
from typing import Any

import pytest

from pytest_tebench.benchmarks.tebench.adapter import TebenchAdapter
from pytest_tebench.report.json_report import build_report
from pytest_tebench.report.json_report import dumps_report
from pytest_tebench.report.json_report import read_report
from pytest_tebench.report.json_report import round_floats
from pytest_tebench.report.json_report import write_report


def record(
    iid: str, model: str, status: str, counts: tuple[int, int, int], labels: list[str]
) -> dict[str, Any]:
    tp, fp, fn = counts
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    # Deliberately scrambled key order: the report must not depend on it.
    return {
        "timings": {"test": 2.5, "apply": 0.1},
        "status": status,
        "model_name_or_path": model,
        "instance_id": iid,
        "labels": labels,
        "project": iid.split("-", maxsplit=1)[0],
        "error": None,
        "apply_method": "git-apply",
        "touched_non_test_files": [],
        "identification": {"recall": recall, "f1": f1, "tp": tp, "fp": fp, "fn": fn, "precision": precision},
        "update": None,
        "extra_field": "kept",
    }


def records() -> list[dict[str, Any]]:
    return [
        # tp 1, fp 2, fn 0: P = 1/3 (-> 0.333333 after rounding), R = 1, F1 = 0.5.
        record("jsoup-2", "model-b", "evaluated", (1, 2, 0), ["stale", "breaking"]),
        record("jsoup-1", "model-b", "evaluated", (2, 0, 1), ["missing"]),
        record("jsoup-1", "model-a", "empty", (0, 0, 3), ["missing"]),
    ]


def build(recs: list[dict[str, Any]]) -> dict[str, Any]:
    adapter = TebenchAdapter()  # identification only: update_scoring None
    return build_report(
        recs,
        summary=adapter.summarise(recs),
        harness_version="0.1.0",
        benchmark="tebench",
        dataset="tebench.jsonl",
        predictions="preds.jsonl",
        fields=adapter.report_fields(),
        record_fields=adapter.record_fields,
        extra={"zeta": 1, "alpha": {"b": 2, "a": 1}},
    )


def test_report_contract() -> None:
    report = build(records())
    assert list(report) == [
        "schema_version",
        "harness_version",
        "benchmark",
        "dataset",
        "predictions",
        "update_scoring",
        "tests_network",
        "summary",
        "results",
        "extra",
    ]
    assert report["schema_version"] == 1
    assert (report["update_scoring"], report["tests_network"]) == (None, None)  # no builds, no network
    assert list(report["summary"]) == ["model-a", "model-b"]
    model_b = report["summary"]["model-b"]
    assert {"items", "evaluated", "empty", "not_applied", "errors"} <= set(model_b["counts"])
    micro = model_b["identification"]["micro"]
    # tp 1+2 = 3, fp 2, fn 1: P = 3/5, R = 3/4, F1 = 6/(6+2+1) = 2/3 -> 0.666667.
    assert micro == {"precision": 0.6, "recall": 0.75, "f1": 0.666667, "tp": 3, "fp": 2, "fn": 1, "items": 2}
    assert set(model_b["identification"]["macro"]) >= {"precision", "recall", "f1"}
    assert list(model_b["identification"]["by_label"]) == ["breaking", "stale", "missing"]
    assert model_b["update"] is None
    assert [(r["model_name_or_path"], r["instance_id"]) for r in report["results"]] == [
        ("model-a", "jsoup-1"),
        ("model-b", "jsoup-1"),
        ("model-b", "jsoup-2"),
    ]
    assert report["extra"] == {"alpha": {"a": 1, "b": 2}, "zeta": 1}
    assert list(report["extra"]["alpha"]) == ["a", "b"]


def test_results_have_canonical_key_order_and_rounded_floats() -> None:
    result = build(records())["results"][2]
    assert list(result)[:5] == ["instance_id", "model_name_or_path", "project", "labels", "status"]
    assert list(result)[-1] == "extra_field"  # unknown keys kept, after the known ones
    assert list(result["identification"]) == ["f1", "fn", "fp", "precision", "recall", "tp"]
    assert result["identification"]["precision"] == 0.333333
    assert list(result["timings"]) == ["apply", "test"]


def test_report_is_identical_whatever_the_arrival_order() -> None:
    expected = dumps_report(build(records()))
    rng = random.Random(7)
    for _ in range(10):
        shuffled = records()
        rng.shuffle(shuffled)
        assert dumps_report(build(shuffled)) == expected


def test_round_floats() -> None:
    value = {"a": 1 / 3, "b": [2 / 3, (True, 1)], "c": float("nan"), "d": -0.0, "e": float("inf")}
    rounded = round_floats(value)
    assert rounded == {"a": 0.333333, "b": [0.666667, [True, 1]], "c": None, "d": 0.0, "e": None}
    assert rounded["b"][1][0] is True  # bools are not numbers to round
    assert json.dumps(rounded["d"]) == "0.0"  # not "-0.0"


def test_write_report_atomic_utf8_trailing_newline(tmp_path: Path) -> None:
    report = build([record("jsoup-1", "modèle-é", "evaluated", (1, 0, 0), [])])
    target = tmp_path / "sub" / "report.json"
    written = write_report(report, target)
    assert written == target.resolve()
    raw = target.read_bytes()
    assert raw.endswith(b"}\n")
    assert "modèle-é".encode() in raw  # real UTF-8, not \u escapes
    assert raw.decode("utf-8") == dumps_report(report)
    assert read_report(target) == report
    # Overwrite in place; no temporary files are left behind.
    write_report(build(records()), target)
    assert [p.name for p in target.parent.iterdir()] == ["report.json"]
    assert read_report(target)["summary"].keys() == {"model-a", "model-b"}


def test_write_report_respects_umask(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        path = write_report(build(records()), tmp_path / "r.json")
    finally:
        os.umask(old)
    assert path.stat().st_mode & 0o777 == 0o644


def test_write_report_failure_keeps_old_file_and_cleans_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "report.json"
    target.write_text("old\n", encoding="utf-8")

    def fail(src: str, dst: str) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", fail)
    with pytest.raises(OSError, match="disk full"):
        write_report(build(records()), target)
    assert target.read_text(encoding="utf-8") == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["report.json"]


def test_read_report_rejects_other_schema(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    path.write_text('{"schema_version": 99}\n', encoding="utf-8")
    with pytest.raises(ValueError, match="schema version 1"):
        read_report(path)
