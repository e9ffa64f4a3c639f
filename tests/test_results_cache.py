"""Results keyed by content: repeated and interrupted runs evaluate only what is new.

On the conftest benchmark of test_hooks.py (no builds), so every rule is checked quickly; the
demo's real Maven run of the same path is in test_demo_update.py.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from pytest_tebench.cli import main as tebench_main
from pytest_tebench.results import ResultCache
from pytest_tebench.results import result_key

from conftest import ANSWERS
from conftest import QUESTIONS
from conftest import report
from conftest import run
from conftest import without_provenance
from conftest import write_jsonl


def caches(data: dict[str, Any]) -> dict[tuple[str, str], str]:
    return {(r["model_name_or_path"], r["instance_id"]): r.get("cache", "-") for r in data["results"]}


def test_a_repeated_run_reuses_every_result(toy: pytest.Pytester) -> None:
    run(toy, "--tebench-report=first.json").assert_outcomes(passed=5, failed=1)
    first = report(toy, "first.json")
    # sloppy's q2 answer is good's, word for word: the same content key, already stored this run
    assert [k for k, v in caches(first).items() if v == "hit"] == [("sloppy", "q2")]
    result = run(toy, "--tebench-report=second.json")
    result.assert_outcomes(passed=5, failed=1)  # same outcomes
    result.stdout.fnmatch_lines(["results: 6 of 6 reused from earlier runs with the same content key*"])
    second = report(toy, "second.json")
    assert set(caches(second).values()) == {"hit"}
    assert without_provenance(first["results"]) == without_provenance(second["results"])
    assert first["summary"] == second["summary"]
    # --tebench-rerun evaluates everything again
    run(toy, "--tebench-report=third.json", "--tebench-rerun").assert_outcomes(passed=5, failed=1)
    assert set(caches(report(toy, "third.json")).values()) == {"miss"}


def test_only_changed_or_new_predictions_are_evaluated(toy: pytest.Pytester) -> None:
    run(toy).assert_outcomes(passed=5, failed=1)
    changed = [dict(a) for a in ANSWERS]
    changed[3]["model_patch"] = "5"  # sloppy changes q1, under the same model name
    added = [
        {"instance_id": q, "model_name_or_path": "new", "model_patch": a}
        for q, a in (("q1", "2"), ("q2", "0"))
    ]
    write_jsonl(toy.path / "run.jsonl", changed + added)
    run(toy, "--tebench-report=r.json").assert_outcomes(passed=7, failed=2)
    state = caches(report(toy, "r.json"))
    assert state[("sloppy", "q1")] == "miss"  # a changed patch is a new key, whatever its name
    assert state[("new", "q1")] == "hit"  # the same answer as good's: the same content key
    assert state[("new", "q2")] == "miss"
    assert state[("new", "q3")] == "hit"  # missing, like sloppy's q3 before
    assert [k for k, v in state.items() if v == "miss"] == [("new", "q2"), ("sloppy", "q1")]
    assert report(toy, "r.json")["summary"]["sloppy"]["accuracy"] == pytest.approx(1 / 3)
    assert report(toy, "r.json")["summary"]["new"]["accuracy"] == pytest.approx(1 / 3)


def test_harness_errors_are_never_stored(toy: pytest.Pytester) -> None:
    write_jsonl(toy.path / "run.jsonl", [{**ANSWERS[0], "model_patch": "harness-trouble"}])
    for _ in range(2):
        result = run(toy, "--tebench-report=r.json", "--tebench-skip-missing")
        result.assert_outcomes(errors=1)
        assert report(toy, "r.json")["results"][0]["status"] == "error"
        assert "cache" not in report(toy, "r.json")["results"][0]
    assert list(ResultCache(toy.path / "cache" / "results").entries()) == []


def test_a_killed_run_resumes_where_it_stopped(toy: pytest.Pytester) -> None:
    # the uninterrupted reference, in its own cache
    reference = run(toy, "--tebench-report=ref.json", f"--tebench-cache-dir={toy.path / 'ref-cache'}")
    reference.assert_outcomes(passed=5, failed=1)
    args = [
        sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--tebench-predictions=run.jsonl",
        "--tebench-benchmark=arithmetic", "--tebench-dataset=questions.jsonl",
        f"--tebench-cache-dir={toy.path / 'cache'}", "--tebench-report=killed.json",
    ]  # fmt: skip
    env = {**os.environ, "ARITHMETIC_SECONDS": "1"}
    process = subprocess.Popen(
        args, cwd=toy.path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    results = ResultCache(toy.path / "cache" / "results")
    deadline = time.monotonic() + 60
    while len(list(results.entries())) < 2 and time.monotonic() < deadline:
        time.sleep(0.1)
    process.send_signal(signal.SIGKILL)  # no chance to clean up: like a reboot
    process.wait()
    stored = len(list(results.entries()))
    assert 2 <= stored < 6
    resumed = run(toy, "--tebench-report=resumed.json")
    resumed.assert_outcomes(passed=5, failed=1)
    data = report(toy, "resumed.json")
    assert list(caches(data).values()).count("hit") >= stored - 1  # the q3 stand-ins share one key
    assert without_provenance(data["results"]) == without_provenance(report(toy, "ref.json")["results"])
    assert data["summary"] == report(toy, "ref.json")["summary"]


def test_key_is_content_not_names() -> None:
    base = {
        "harness_version": "1", "benchmark": "b", "instance_key": "i", "patch": "x\n", "missing": False,
        "executor": "docker", "toolchain": "img",
    }  # fmt: skip
    key = result_key(**base)
    assert result_key(**base) == key
    # line endings change what git apply does: a different patch
    assert result_key(**{**base, "patch": "x\r\n"}) != key
    for field, other in (
        ("patch", "y\n"),
        ("instance_key", "j"),
        ("toolchain", "img2"),
        ("executor", "local"),
    ):
        assert result_key(**{**base, field: other}) != key
    assert result_key(**{**base, "missing": True}) != key


def test_unreadable_entries_are_dropped_and_prune_trims(tmp_path: Path) -> None:
    cache = ResultCache(tmp_path)
    record = {"status": "evaluated", "instance_id": "a"}
    assert cache.put("ab" + "0" * 62, record)
    assert not cache.put("cd" + "0" * 62, {"status": "timeout"})  # never stored
    assert cache.get("ab" + "0" * 62) == record
    broken = tmp_path / "ef" / ("ef" + "0" * 62 + ".json")
    broken.parent.mkdir()
    broken.write_text('{"key": "ef')  # what a torn write would look like (atomic writes make none)
    assert cache.get("ef" + "0" * 62) is None
    assert not broken.exists()
    for index in range(3):
        cache.put(f"{index:02d}" + "1" * 62, {"status": "empty", "pad": "x" * 100})
    old = tmp_path / "00" / ("00" + "1" * 62 + ".json")
    os.utime(old, (time.time() - 10 * 86400, time.time() - 10 * 86400))
    assert cache.prune(older_than=86400) == 1
    assert cache.stats().entries == 3
    assert cache.prune(max_bytes=cache.stats().bytes - 1) == 1  # the least recently used goes first
    assert cache.stats().entries == 2


def test_cache_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ResultCache(tmp_path / "results").put("ab" + "0" * 62, {"status": "evaluated"})
    assert tebench_main(["cache", "info", "--cache-dir", str(tmp_path)]) == 0
    assert "1 stored result" in capsys.readouterr().out
    assert tebench_main(["cache", "prune", "--cache-dir", str(tmp_path), "--max-size", "0"]) == 0
    assert "removed 1" in capsys.readouterr().out
    assert json.loads(json.dumps(ResultCache(tmp_path / "results").stats().entries)) == 0


def test_a_reused_result_carries_the_instance_as_the_dataset_says_now(toy: pytest.Pytester) -> None:
    run(toy).assert_outcomes(passed=5, failed=1)
    moved = [dict(q) for q in QUESTIONS]
    moved[0]["project"] = "counting"  # renamed in the dataset; the question (the content) is the same
    write_jsonl(toy.path / "questions.jsonl", moved)
    run(toy, "--tebench-report=r.json").assert_outcomes(passed=5, failed=1)
    records = [r for r in report(toy, "r.json")["results"] if r["instance_id"] == "q1"]
    assert {r["cache"] for r in records} == {"hit"}
    assert {r["project"] for r in records} == {"counting"}
