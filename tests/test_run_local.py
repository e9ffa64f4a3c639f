"""LocalExecutor with plain shell commands: environment, failures, timeouts killing the tree."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from pytest_tebench.errors import HarnessError
from pytest_tebench.run import local
from pytest_tebench.run.executor import BuildStep
from pytest_tebench.run.local import KILL_GRACE
from pytest_tebench.run.local import LocalExecutor
from pytest_tebench.run.maven.jdk import discover_jdks
from pytest_tebench.run.reaper import PARENT_ENV


@pytest.fixture
def fake_jdk(tmp_path: Path) -> Path:
    home = tmp_path / "jdk17"
    (home / "bin").mkdir(parents=True)
    (home / "bin" / "java").write_text("", encoding="utf-8")
    return home


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    path.mkdir()
    return path


def sh(script: str, *, timeout: float = 30, name: str = "sh", **kwargs: object) -> BuildStep:
    return BuildStep(name, ("sh", "-c", script), timeout, **kwargs)  # type: ignore[arg-type]


def processes_with(marker: str) -> list[int]:
    """Pids whose command line mentions ``marker``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if marker.encode() in cmdline:
            found.append(int(entry.name))
    return found


def sleeper(marker: str) -> str:
    return f"{sys.executable} -c 'import time; time.sleep(300)' {marker}"


def test_environment_and_placeholders(
    fake_jdk: Path, workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("JAVA_TOOL_OPTIONS", "-Dleaked=true")
    monkeypatch.setenv("MAVEN_ARGS", "-X")
    executor = LocalExecutor(jdks={17: fake_jdk})
    step = sh(
        'echo "$JAVA_HOME|$MAVEN_SKIP_RC|${JAVA_TOOL_OPTIONS-unset}|${MAVEN_ARGS-unset}|$FOO|$(pwd)";'
        ' echo "${PATH%%:*}"; echo {workspace}',
        env=(("FOO", "{maven_repo}/x"),),
    )
    result = executor.run(workspace, step, maven_repo=tmp_path / "m2")
    assert result.ok and result.exit_code == 0 and not result.timed_out
    lines = result.output.splitlines()
    assert lines[0] == f"{fake_jdk}|true|unset|unset|{tmp_path / 'm2'}/x|{workspace}"
    assert lines[1] == f"{fake_jdk}/bin"
    assert lines[2] == str(workspace)
    assert result.runtime == str(fake_jdk)
    assert result.argv[0] == "sh"


def test_a_cold_maven_launch_drops_the_warm_server_s_switches(
    fake_jdk: Path, workspace: Path, tmp_path: Path
) -> None:
    # a stand-in mvn that prints what it was given: the server's switches never reach a cold
    # Maven (which would pass them on to the test JVMs); other arguments stay, in order
    maven = tmp_path / "maven"
    (maven / "bin").mkdir(parents=True)
    (maven / "bin" / "mvn").write_text('#!/bin/sh\nfor a in "$@"; do echo "arg $a"; done\n', encoding="utf-8")
    (maven / "bin" / "mvn").chmod(0o755)
    step = BuildStep(
        "test",
        (str(maven / "bin" / "mvn"), "-o", "-Dtebench.outputs=replay", "-Dtebench.testside=snapshot", "test"),
        30,
        java_version=17,
    )
    result = LocalExecutor(jdks={17: fake_jdk}).run(workspace, step, maven_repo=tmp_path / "m2")
    assert result.ok
    given = [line.removeprefix("arg ") for line in result.output.splitlines() if line.startswith("arg ")]
    assert given[-2:] == ["-o", "test"]
    assert not [arg for arg in given if arg.startswith("-Dtebench")]
    # a command that is not Maven keeps every argument
    echo = BuildStep("echo", ("sh", "-c", 'echo "$@"', "x", "-Dtebench.outputs=replay"), 30)
    echoed = LocalExecutor(jdks={17: fake_jdk}).run(workspace, echo, maven_repo=tmp_path / "m2")
    assert echoed.output.strip() == "-Dtebench.outputs=replay"


def test_locale_and_time_zone_are_the_image_s_not_the_host_s(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a host in the POSIX locale and New York: javac and the JVM would read ASCII sources and
    # local dates there, where the Docker image has C.UTF-8 and UTC
    monkeypatch.setenv("LANG", "POSIX")
    monkeypatch.setenv("LC_ALL", "POSIX")
    monkeypatch.setenv("LC_CTYPE", "POSIX")
    monkeypatch.setenv("TZ", "America/New_York")
    executor = LocalExecutor()
    java = executor.java_versions()[0]
    step = BuildStep(
        name="settings",
        argv=(
            "sh",
            "-c",
            'echo "$LANG|${LC_ALL-unset}|${LC_CTYPE-unset}|$TZ"; java -XshowSettings:properties -version 2>&1',
        ),
        timeout=60,
        java_version=java,
    )
    result = executor.run(workspace, step, maven_repo=tmp_path / "m2")
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0] == "C.UTF-8|unset|unset|UTC"
    # the JVM itself: sources and text files read as UTF-8 (JDK 17 takes it from the locale)
    assert "    sun.jnu.encoding = UTF-8" in lines
    assert "    file.encoding = UTF-8" in lines


def test_failing_command_does_not_raise(fake_jdk: Path, workspace: Path) -> None:
    result = LocalExecutor(jdks={17: fake_jdk}).run(
        workspace, sh("echo bad >&2; exit 3"), maven_repo=workspace
    )
    assert (result.exit_code, result.timed_out, result.ok) == (3, False, False)
    assert result.output == "bad\n"


def test_output_tail(fake_jdk: Path, workspace: Path) -> None:
    executor = LocalExecutor(jdks={17: fake_jdk}, tail_lines=200)
    result = executor.run(
        workspace, sh("i=0; while [ $i -lt 500 ]; do echo $i; i=$((i+1)); done"), maven_repo=workspace
    )
    lines = result.output.splitlines()
    # 500 lines 0..499 printed; the last 200 are 300..499.
    assert len(lines) == 200 and lines[0] == "300" and lines[-1] == "499"


def test_timeout_kills_whole_tree(fake_jdk: Path, workspace: Path) -> None:
    marker = f"tebench-timeout-{uuid.uuid4().hex}"
    script = f"{sleeper(marker)} & {sleeper(marker)} & wait"
    started = time.monotonic()
    result = LocalExecutor(jdks={17: fake_jdk}).run(workspace, sh(script, timeout=1.5), maven_repo=workspace)
    elapsed = time.monotonic() - started
    assert result.timed_out and result.exit_code is None and not result.ok
    # Two grandchildren ignored nothing, so SIGTERM ends them well within the grace period.
    assert elapsed < 1.5 + KILL_GRACE
    assert processes_with(marker) == []


def test_stragglers_are_killed_after_normal_exit(fake_jdk: Path, workspace: Path) -> None:
    marker = f"tebench-straggler-{uuid.uuid4().hex}"
    started = time.monotonic()
    result = LocalExecutor(jdks={17: fake_jdk}).run(
        workspace, sh(f"{sleeper(marker)} & echo started"), maven_repo=workspace
    )
    # The background sleeper holds the output pipe; without the group kill this would hang.
    assert result.ok and result.output == "started\n"
    assert time.monotonic() - started < 10
    assert processes_with(marker) == []


def test_harness_errors(fake_jdk: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    executor = LocalExecutor(jdks={17: fake_jdk})
    with pytest.raises(HarnessError, match="no JDK 11"):
        executor.run(workspace, sh("true", java_version=11), maven_repo=workspace)
    with pytest.raises(HarnessError, match="does not exist"):
        executor.run(workspace / "absent", sh("true"), maven_repo=workspace)
    with pytest.raises(HarnessError, match="cannot start"):
        executor.run(workspace, BuildStep("x", ("/no/such/program",), 5), maven_repo=workspace)
    monkeypatch.setenv("PATH", str(workspace))
    with pytest.raises(HarnessError, match="mvn is not on PATH"):
        executor.run(workspace, BuildStep("x", ("mvn", "-v"), 5), maven_repo=workspace)


@pytest.mark.skipif(17 not in discover_jdks(), reason="needs an installed JDK 17")
def test_java_step_uses_chosen_jdk(workspace: Path) -> None:
    executor = LocalExecutor()
    result = executor.run(
        workspace, BuildStep("v", ("java", "-version"), 30, java_version=17), maven_repo=workspace
    )
    assert result.ok
    assert 'version "17' in result.output
    assert result.argv[0] == os.path.join(result.runtime, "bin", "java")


@pytest.mark.parametrize(
    ("script", "low", "high"),
    [
        # before the marker the step's own limit (4 s) applies
        ("sleep 30", 3.5, 8),
        # the marker at ~1 s gives 1.5 s more: killed at ~2.5 s, long before the 20 s limit
        ("sleep 1; echo 'phase T E S T S begins'; sleep 30", 2.0, 6),
        # a marker only extends: the step ends normally when the command does
        ("echo 'T E S T S'; sleep 5; echo done", 4.5, 9),
    ],
)
def test_phase_marker_moves_the_deadline(
    fake_jdk: Path, workspace: Path, script: str, low: float, high: float
) -> None:
    timeout = 20.0 if "echo" in script else 4.0
    step = sh(
        script, timeout=timeout, phase_marker="T E S T S", phase_timeout=1.5 if "begins" in script else 10.0
    )
    started = time.monotonic()
    result = LocalExecutor(jdks={17: fake_jdk}).run(workspace, step, maven_repo=workspace)
    elapsed = time.monotonic() - started
    assert low < elapsed < high
    assert result.timed_out is ("done" not in script)


def test_processes_that_left_the_session_are_killed_after_the_step(fake_jdk: Path, workspace: Path) -> None:
    # issue 8 item 7: setsid and double-forked daemons left the process group and outlived the step
    marker = f"tebench-escaped-{uuid.uuid4().hex}"
    script = (
        f"setsid {sleeper(marker)} > /dev/null 2>&1 < /dev/null &"
        f" ( setsid sh -c '{sleeper(marker).replace(chr(39), chr(34))} &' > /dev/null 2>&1 < /dev/null ) ;"
        " sleep 0.5; echo started"
    )
    result = LocalExecutor(jdks={17: fake_jdk}).run(workspace, sh(script), maven_repo=workspace)
    assert result.ok and result.output == "started\n"
    assert processes_with(marker) == []


def test_escaped_processes_are_killed_on_timeout_too(fake_jdk: Path, workspace: Path) -> None:
    marker = f"tebench-escaped-timeout-{uuid.uuid4().hex}"
    script = f"setsid {sleeper(marker)} > /dev/null 2>&1 < /dev/null & sleep 60"
    result = LocalExecutor(jdks={17: fake_jdk}).run(workspace, sh(script, timeout=1.5), maven_repo=workspace)
    assert result.timed_out
    assert processes_with(marker) == []


def test_an_endless_line_is_read_in_bounded_pieces(fake_jdk: Path, workspace: Path) -> None:
    # 64 MB without a newline, then a normal line: the tail keeps a cut piece, not 64 MB
    script = "head -c 67108864 /dev/zero | tr '\\0' x; echo; echo after"
    result = LocalExecutor(jdks={17: fake_jdk}).run(workspace, sh(script), maven_repo=workspace)
    assert result.ok
    lines = result.output.splitlines()
    assert lines[-1] == "after"
    assert len(result.output) < 64 * 1024
    assert lines[0].endswith("[pytest-tebench: line cut]")


def test_a_step_dies_with_the_harness_that_started_it(
    fake_jdk: Path, workspace: Path, tmp_path: Path
) -> None:
    # a harness killed outright (SIGKILL, the OOM killer, a crashed xdist worker) enforces no
    # deadline any more: its step, and what escaped the step's session, must not run on for ever
    marker = f"tebench-orphan-{uuid.uuid4().hex}"
    started = tmp_path / "started"
    script = (
        f"setsid {sleeper(marker)} > /dev/null 2>&1 < /dev/null & touch {started}; exec {sleeper(marker)}"
    )
    harness = subprocess.Popen(
        [sys.executable, "-c", (
            "import sys; from pathlib import Path\n"
            "from pytest_tebench.run.executor import BuildStep\n"
            "from pytest_tebench.run.local import LocalExecutor\n"
            f"step = BuildStep('sh', ('sh', '-c', {script!r}), 300)\n"
            f"LocalExecutor(jdks={{17: Path({str(fake_jdk)!r})}}).run(Path({str(workspace)!r}), step, "
            f"maven_repo=Path({str(workspace)!r}))\n"
        )],
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 30
        while not started.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        # the harness, the reaper and the two sleepers (the step's own, and the one that escaped)
        assert started.exists() and len(processes_with(marker)) == 4
    finally:
        harness.kill()
        harness.wait()
    deadline = time.monotonic() + 10
    while processes_with(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert processes_with(marker) == []


def test_a_step_whose_harness_is_already_gone_does_not_start(tmp_path: Path) -> None:
    # the harness died between starting the reaper and the reaper asking to die with it
    ran = tmp_path / "ran"
    reaper = Path(local.__file__).with_name("reaper.py")
    result = subprocess.run(
        [sys.executable, "-E", "-S", str(reaper), "touch", str(ran)],
        env={**os.environ, PARENT_ENV: "1"},  # not this process's parent: it is gone
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert result.returncode == 128 + signal.SIGTERM and "is gone" in result.stderr
    assert not ran.exists()
    # named rightly, the command runs, and the variable is not passed on to it
    shown = subprocess.run(
        [sys.executable, "-E", "-S", str(reaper), "sh", "-c", f"echo ${{{PARENT_ENV}:-unset}}"],
        env={**os.environ, PARENT_ENV: str(os.getpid())}, capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert shown.stdout == "unset\n"
