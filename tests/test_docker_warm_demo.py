"""The warm Maven server inside the Docker sandbox, for real: the demo's update cases give the same
statuses, outcomes and scores in warm server containers as in a fresh container per step, and
what a build leaves in its container (a file in ``/tmp`` or ``$HOME``, a process) is gone for the
next build in the same container. Unit tests of the pieces: tests/test_docker_warm.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_demo_docker import _hostile

from conftest import PREDICTIONS
from conftest import DemoRun
from conftest import comparable_result
from conftest import coverage_report_warmth
from conftest import result_differences
from conftest import write_jsonl

pytestmark = [pytest.mark.docker, pytest.mark.maven]

#: A test that fails when an earlier build's leftovers are visible, then leaves the same behind.
LEAVE_BEHIND = """\
        java.nio.file.Path tmp = java.nio.file.Paths.get("/tmp/tebench-left");
        java.nio.file.Path home = java.nio.file.Paths.get(System.getProperty("user.home"), "tebench-left");
        StringBuilder seen = new StringBuilder();
        if (java.nio.file.Files.exists(tmp)) { seen.append(" a /tmp file"); }
        if (java.nio.file.Files.exists(home)) { seen.append(" a $HOME file"); }
        java.io.File[] all = new java.io.File("/proc").listFiles();
        for (java.io.File p : all == null ? new java.io.File[0] : all) {
            java.io.File cmd = new java.io.File(p, "cmdline");
            if (p.getName().matches("[0-9]+") && cmd.canRead()) {
                String line = new String(java.nio.file.Files.readAllBytes(cmd.toPath()), "UTF-8");
                if (line.contains("tebench-left")) { seen.append(" a process"); }
            }
        }
        java.nio.file.Files.write(tmp, new byte[] {1});
        java.nio.file.Files.write(home, new byte[] {1});
        new ProcessBuilder("sh", "-c", "sleep 600; : tebench-left").start();
        if (seen.length() > 0) { throw new AssertionError("left by an earlier build:" + seen); }"""


def test_demo_results_are_the_same_in_warm_and_cold_containers(
    pytester: pytest.Pytester, tmp_path: Path
) -> None:
    cases = [json.loads(line) for line in (PREDICTIONS / "update-cases.jsonl").read_text().splitlines()]
    leave = [{**_hostile("leave-behind", LEAVE_BEHIND), "model_name_or_path": f"leave-{n}"} for n in (1, 2)]
    results, reports = {}, {}
    for mode, rows in (("off", cases), ("on", cases + leave)):
        (tmp_path / mode).mkdir()
        predictions = write_jsonl(tmp_path / mode / "predictions.jsonl", rows)  # one name: the same origin
        run = DemoRun(pytester, tmp_path / f"cache-{mode}")
        result, report = run(str(predictions), "--tebench-executor=docker", f"--tebench-warm-jvm={mode}")
        assert result.ret == 0, result.stdout.str()[-3000:]
        records = report["results"]  # type: ignore[index]
        reports[mode] = {(r["instance_id"], r["model_name_or_path"]): r for r in records}  # type: ignore[union-attr]
        results[mode] = {
            k: comparable_result(r)
            for k, r in reports[mode].items()
            if r["model_name_or_path"] == "update-cases"
        }
    assert len(results["on"]) >= 4
    assert results["on"] == results["off"], result_differences(results["on"], results["off"])
    warm = [r["update"]["warm_jvm"] for r in reports["on"].values()]
    assert set(warm) <= {"started", "reused"} and "reused" in warm
    assert {r["update"]["warm_jvm"] for r in reports["off"].values()} == {None}
    # gold's coverage reports were written in the server containers' JVMs
    assert coverage_report_warmth(tmp_path / "cache-on") <= {"started", "reused"}
    assert coverage_report_warmth(tmp_path / "cache-off") == {None}
    # both leave things behind and fail on what an earlier build left: whichever ran second (in the
    # container the first left its file, its process in) saw none of it
    for n in (1, 2):
        record = reports["on"][(leave[0]["instance_id"], f"leave-{n}")]
        tests = {t["method"]: (t["status"], t["message"]) for t in record["update"]["tests"]}
        assert record["status"] == "evaluated" and tests["hostile"][0] == "passed", tests["hostile"]
        assert record["update"]["warm_jvm"] == "reused"
