"""The demo benchmark through the Docker executor: parity with local builds, hostile predictions,
and no container left behind after an interrupted run."""

from __future__ import annotations

import difflib
import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from conftest import TEST_MAVEN_REPO
from conftest import DemoRun
from conftest import write_jsonl

pytestmark = [pytest.mark.docker, pytest.mark.maven]

DATASET = Path(__file__).resolve().parent.parent / "pytest_tebench" / "demo" / "dataset.jsonl"
ROWS = {json.loads(line)["instance_id"]: json.loads(line) for line in DATASET.read_text().splitlines()}
I8 = "textkit__867ea90c"
TEST_FILE = "src/test/java/org/tebench/textkit/StringUtilsTest.java"


def _scores(report: dict[str, Any]) -> dict[str, Any]:
    """What must not depend on where a build ran (timings, JDK and cache provenance may: the key of
    the stored production build names the executor's toolchain, so only its use is compared)."""
    scored = {}
    for record in report["results"]:
        update = {
            k: v
            for k, v in record["update"].items()
            if k
            not in ("timings", "gold", "executor", "java_version", "maven_version", "prebuilt", "warm_jvm")
        }
        update["prebuilt_used"] = str(record["update"].get("prebuilt") or "").split(" ", 1)[0]
        scored[record["instance_id"]] = (record["status"], record["identification"], update)
    return scored


def test_docker_gives_the_same_scores_as_local_builds(demo_run: DemoRun) -> None:
    result, on_docker = demo_run("gold", "--tebench-executor=docker", "-n", "2")
    result.assert_outcomes(passed=9)
    result.stdout.fnmatch_lines(["*builds ran on: docker*"])
    assert {r["update"]["executor"] for r in on_docker["results"]} == {"docker"}
    # the demo targets Java 8, so the image's JDK 8 builds it (the host has 17)
    assert {r["update"]["java_version"] for r in on_docker["results"]} == {8}
    assert all(r["update"]["s_update"] == 1.0 for r in on_docker["results"])
    _, local = demo_run("gold", "--tebench-executor=local", "-n", "2")
    assert _scores(on_docker) == _scores(local)


def _hostile(name: str, body: str) -> dict[str, str]:
    """A prediction for I8 that adds one test method doing something a sandbox must contain."""
    mirror_text = _v05_test_file()
    anchor = "    @Test\n    void reversesAscii()"
    after = mirror_text.replace(
        anchor, f"    @Test\n    void hostile() throws Exception {{\n{body}\n    }}\n\n{anchor}", 1
    )
    assert after != mirror_text
    patch = f"diff --git a/{TEST_FILE} b/{TEST_FILE}\n" + "".join(
        difflib.unified_diff(
            mirror_text.splitlines(keepends=True),
            after.splitlines(keepends=True),
            f"a/{TEST_FILE}",
            f"b/{TEST_FILE}",
        )
    )
    return {"instance_id": I8, "model_name_or_path": f"hostile-{name}", "model_patch": patch}


_V05_CACHE: dict[str, str] = {}


def _v05_test_file() -> str:
    if not _V05_CACHE:
        import tempfile

        from pytest_tebench.demo import build_demo_mirror
        from pytest_tebench.workspace.gitcmd import git_text

        with tempfile.TemporaryDirectory() as tmp:
            mirror = build_demo_mirror(Path(tmp) / "m.git")
            _V05_CACHE["text"] = git_text(mirror, "show", f"{ROWS[I8]['v_minus_1_commit']}:{TEST_FILE}")
    return _V05_CACHE["text"]


HOSTILE = {
    # no network: not even a name can be resolved (the host itself resolves deb.debian.org)
    "network": '        java.net.InetAddress.getByName("deb.debian.org");\n'
    '        try (java.net.Socket s = new java.net.Socket("1.1.1.1", 53)) { }',
    # the root file system and the Maven repository are read-only; only the workspace is writable
    "write-outside": '        java.nio.file.Files.write(java.nio.file.Paths.get("/etc/tebench-pwned"), new byte[] {1});',
    # a fork bomb meets the pids limit
    "fork": "        java.util.List<Process> all = new java.util.ArrayList<>();\n"
    '        while (true) { all.add(new ProcessBuilder("sleep", "600").start()); }',
    # a test that never returns meets the step's time limit
    "sleep": "        Thread.sleep(Long.MAX_VALUE);",
    # filling the container's /tmp hits its size limit
    "fill-disk": "        byte[] block = new byte[1 << 20];\n"
    '        try (java.io.OutputStream out = java.nio.file.Files.newOutputStream(java.nio.file.Paths.get("/tmp/fill"))) {\n'
    "            while (true) { out.write(block); }\n        }",
}


def test_hostile_predictions_are_contained_and_reported(demo_run: DemoRun, pytester: pytest.Pytester) -> None:
    entries = [_hostile(name, body) for name, body in HOSTILE.items()]
    entries.append(
        {
            "instance_id": "textkit__6f3adb06",
            "model_name_or_path": "bystander",
            "model_patch": ROWS["textkit__6f3adb06"]["test_patch"],
        }
    )
    predictions = write_jsonl(pytester.path / "hostile.jsonl", entries)
    # The run's containers carry its xdist run id; other tests (in other CI workers) have their own.
    run_uid = uuid.uuid4().hex
    _, report = demo_run(
        str(predictions), "--tebench-executor=docker", "-n", "2", f"--testrunuid={run_uid}",
        "--tebench-timeout-compile=60", "--tebench-timeout-test=30", "--tebench-docker-memory=2g",
    )  # fmt: skip
    records = {r["model_name_or_path"]: r for r in report["results"]}
    assert set(records) == {f"hostile-{n}" for n in HOSTILE} | {"bystander"}

    def outcome(name: str) -> dict[str, str]:
        tests = records[f"hostile-{name}"]["update"]["tests"]
        return {t["method"]: f"{t['status']}: {t['message']}" for t in tests}

    # each hostile test fails inside the sandbox and is reported on its own item
    assert outcome("network")["hostile"] == "error: deb.debian.org: Temporary failure in name resolution"
    assert records["hostile-network"]["update"]["s_exec"] == 0.5
    assert (
        outcome("write-outside")["hostile"].startswith("error: ")
        and "Read-only file system" in outcome("write-outside")["hostile"]
    )
    assert not Path("/etc/tebench-pwned").exists()
    # a test that never returns: scored as failing when gold's launch took at most a third of
    # the 30 s limit (its tests' doing), else a timeout, never scored (the machine may be slow)
    sleep = records["hostile-sleep"]
    assert sleep["update"]["status"] == "timeout:test"
    if sleep["status"] == "evaluated":
        assert sleep["update"]["error"].startswith("the prediction's test phase ran past its 30 s limit")
        assert sleep["update"]["s_exec"] == 0.5
        assert outcome("sleep")["hostile"] == (
            "not_run: the test phase ran into its 30 s limit before it reported this test"
        )
    else:
        assert sleep["status"] == "timeout"
        assert sleep["update"]["s_update"] is None
    assert records["hostile-fork"]["status"] in ("evaluated", "timeout")
    if records["hostile-fork"]["status"] == "evaluated":
        assert outcome("fork")["hostile"].startswith(("error: ", "failed: "))
    assert records["hostile-fill-disk"]["status"] == "evaluated"
    assert "No space left on device" in outcome("fill-disk")["hostile"]
    # the bystander, evaluated in the same run, is unaffected
    assert records["bystander"]["status"] == "evaluated" and records["bystander"]["update"]["s_update"] == 1.0
    assert [c for c in _labelled_containers(with_run=True) if c.split()[-1].startswith(f"{run_uid}-")] == []


def _labelled_containers(*, with_run: bool = False) -> list[str]:
    """``name pid`` (``name pid run`` with ``with_run``) of every labelled container on the engine."""
    fields = '{{.Names}} {{.Label "pytest-tebench.pid"}}' + (
        ' {{.Label "pytest-tebench.run"}}' if with_run else ""
    )
    out = subprocess.run(
        ["docker", "ps", "-a", "--filter", "label=pytest-tebench=1", "--format", fields],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return [line for line in out.stdout.splitlines() if line.strip()]


def test_containers_of_an_interrupted_run_are_removed_by_the_next(demo_cache: Path, tmp_path: Path) -> None:
    predictions = write_jsonl(tmp_path / "sleep.jsonl", [_hostile("sleep", HOSTILE["sleep"])])
    args = [
        sys.executable, "-m", "pytest", "-p", "no:cacheprovider", f"--tebench-predictions={predictions}",
        "--tebench-executor=docker", f"--tebench-cache-dir={demo_cache}", f"--tebench-maven-repo={TEST_MAVEN_REPO}",
        "--tebench-timeout-test=600", "--tebench-timeout-compile=600",
    ]  # fmt: skip
    run = subprocess.Popen(
        args, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    mine = f" {run.pid}"
    deadline = time.monotonic() + 300
    while not any(line.endswith(mine) for line in _labelled_containers()):
        assert run.poll() is None, "the run ended before its build container started"
        assert time.monotonic() < deadline, "no build container appeared"
        time.sleep(1)
    os.killpg(run.pid, signal.SIGKILL)  # no finally, no cleanup: a crash
    run.wait()
    assert any(line.endswith(mine) for line in _labelled_containers())
    # the next session's executor removes what dead runs left behind, before building anything
    from pytest_tebench.run.executors import ExecutorOptions
    from pytest_tebench.run.executors import create_executor

    create_executor(ExecutorOptions(name="docker")).close()
    assert not any(line.endswith(mine) for line in _labelled_containers())
