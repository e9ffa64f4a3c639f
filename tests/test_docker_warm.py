"""The warm Maven server inside the Docker sandbox (run/docker_warm.py), without an engine: the
server container's spec against a cold step's, the stage that lends a workspace, each build's own
repository head, the attach stream's frames, which steps stay cold, and a build's course through
a stand-in server (timeouts, a server that dies). The real equivalence with cold containers is
the ``docker`` test in tests/test_docker_warm_demo.py."""

from __future__ import annotations

import os
import queue
import struct
from pathlib import Path
from typing import Any

import pytest

from pytest_tebench.errors import HarnessError
from pytest_tebench.run import docker_warm
from pytest_tebench.run.docker import CONTAINER_MAVEN_REPO
from pytest_tebench.run.docker import CONTAINER_WORKSPACE
from pytest_tebench.run.docker import DockerExecutor
from pytest_tebench.run.docker_warm import FrameReader
from pytest_tebench.run.docker_warm import Stage
from pytest_tebench.run.docker_warm import WarmDockerExecutor
from pytest_tebench.run.executor import BuildStep
from pytest_tebench.run.executor import StepResult
from pytest_tebench.run.executors import ExecutorOptions
from pytest_tebench.run.maven import warm
from pytest_tebench.run.maven.jacoco import CLI_JAR
from pytest_tebench.run.maven.jacoco import report_step
from pytest_tebench.run.oom import CONTAINER_OOM

MVN = "{tool:maven}/bin/mvn"


class _NoClient:
    """Stands in for a Docker client: nothing here may talk to an engine."""


def _maven(tmp_path: Path) -> Path:
    home = tmp_path / "apache-maven-3.9.9"
    for folder in ("boot", "lib", "bin"):
        (home / folder).mkdir(parents=True)
    (home / "boot" / "plexus-classworlds-2.8.0.jar").write_bytes(b"")
    return home


def _places(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A stand-in Maven home, a repository path and a workspace made among its siblings."""
    workspace = tmp_path / "workspaces" / "ws-1"
    workspace.mkdir(parents=True)
    return _maven(tmp_path), tmp_path / "m2", workspace


def _step(maven: Path, *args: str, **rest: Any) -> BuildStep:
    fields: dict[str, Any] = {
        "timeout": 60,
        "java_version": 11,
        "tools": (("maven", str(maven)),),
        "warm": True,
    }
    return BuildStep(name="test", argv=(MVN, "-o", *args), **{**fields, **rest})


@pytest.fixture
def executor() -> WarmDockerExecutor:
    return WarmDockerExecutor("img:tag", client=_NoClient(), run_id="r1")


# --------------------------------------------------------------------------- the container


SANDBOX = (
    "image", "user", "network_mode", "read_only", "tmpfs", "mem_limit", "memswap_limit", "nano_cpus",
    "pids_limit", "ulimits", "cap_drop", "security_opt", "init", "log_config", "detach",
)  # fmt: skip


def test_the_server_container_is_a_cold_steps_sandbox(executor: WarmDockerExecutor, tmp_path: Path) -> None:
    maven, repo, workspace = _places(tmp_path)
    stage = Stage(workspace.parent)
    step = _step(maven, "test")
    server = executor.server_spec(11, step, repo, stage, tmp_path / "home")
    cold = executor.container_spec(workspace, step, repo)
    assert {k: server[k] for k in SANDBOX} == {k: cold[k] for k in SANDBOX}
    assert server["network_mode"] == "none" and server["read_only"] is True and server["cap_drop"] == ["ALL"]
    assert server["environment"] == {k: v for k, v in cold["environment"].items()}
    assert server["stdin_open"] is True and "stdin_open" not in cold
    assert server["labels"]["pytest-tebench.run"] == "r1"  # cleanup_stale and close find it
    mounts = {m["Target"]: (m["Source"], m["ReadOnly"]) for m in server["mounts"]}
    assert mounts[CONTAINER_WORKSPACE] == (str(stage.path), False)
    assert mounts[CONTAINER_MAVEN_REPO] == (str(repo), True)
    assert mounts["/opt/tools/maven"] == (str(maven), True)
    assert mounts["/opt/tools/warm-maven"] == (str(tmp_path / "home"), True)
    command = server["command"]
    assert command[0] == "/opt/java/11/bin/java" and command[-1].endswith("classworlds.launcher.Launcher")
    assert "-XX:+DisableAttachMechanism" in command
    assert "-classpath" in command and "/opt/tools/maven/boot/plexus-classworlds-2.8.0.jar" in command
    assert f"-D{warm.HOME_PROPERTY}=/opt/tools/warm-maven" in command
    # the server's java: an execute-only copy beside the image's (a test JVM cannot ptrace the server)
    exe = executor.server_spec(
        11, step, repo, stage, tmp_path / "home", launcher=(tmp_path / "java", "/j/bin/x")
    )
    assert exe["command"][0] == "/j/bin/x"
    assert {m["Target"]: (m["Source"], m["ReadOnly"]) for m in exe["mounts"]}["/j/bin/x"] == (
        str(tmp_path / "java"),
        True,
    )
    # the stage sits beside the workspaces (a rename stays on one file system), writable by its owner only
    assert stage.path.parent == workspace.parent and stage.path.stat().st_mode & 0o777 == 0o755


def test_each_build_has_a_head_of_its_own_and_sees_its_workspace_in_the_stage(
    executor: WarmDockerExecutor, tmp_path: Path
) -> None:
    maven, repo, workspace = _places(tmp_path)
    stage = Stage(workspace.parent)
    agent = f"-javaagent:{repo}/org/jacoco/agent.jar=destfile={workspace}/target/jacoco.exec"
    step = _step(maven, "test", f"-Dx={workspace}/a", env=(("JAVA_TOOL_OPTIONS", agent),))
    argv, text, head = executor.request(workspace, step, repo, stage, "n1")
    argv2, _, head2 = executor.request(workspace, step, repo, stage, "n2")
    assert head.parent == stage.path and head2.parent == stage.path and head != head2
    assert f"-Dmaven.repo.local=/workspace/{head.name}" in argv
    assert f"-Dmaven.repo.local=/workspace/{head2.name}" in argv2
    assert f"-Dmaven.repo.local.tail={CONTAINER_MAVEN_REPO}" in argv
    assert argv[0] == "/opt/tools/maven/bin/mvn" and "-Dx=/workspace/ws/a" in argv
    lines = text.splitlines()
    assert lines[0] == "BEGIN n1" and lines[-1] == "END"
    assert "CWD /workspace/ws" in lines
    assert "PROP maven.multiModuleProjectDirectory=/workspace/ws" in lines
    assert (
        "ENV JAVA_TOOL_OPTIONS=-javaagent:/maven-repo/org/jacoco/agent.jar=destfile=/workspace/ws/target/jacoco.exec"
        in lines
    )
    assert str(tmp_path) not in text  # no host path reaches the container


def test_jacocos_report_is_a_jacoco_request_in_container_paths(
    executor: WarmDockerExecutor, tmp_path: Path
) -> None:
    maven, repo, workspace = _places(tmp_path)
    step = report_step(java_version=11, timeout=60, tools=(("maven", str(maven)),))
    assert executor.refusal(workspace, step, True) == ""
    argv, text, _ = executor.request(workspace, step, repo, Stage(workspace.parent), "n1")
    assert text.splitlines() == [
        "BEGIN n1",
        "CWD /workspace/ws",
        f"JACOCO {CONTAINER_MAVEN_REPO}/{CLI_JAR}",
        "ARG report",
        "ARG /workspace/ws/target/tebench-jacoco.exec",
        "ARG --classfiles",
        "ARG /workspace/ws/target/classes",
        "ARG --xml",
        "ARG /workspace/ws/target/tebench-jacoco.xml",
        "ARG --quiet",
        "END",
    ]
    assert argv[0] == "java"


def test_the_stage_lends_the_workspace_and_always_gives_it_back(tmp_path: Path) -> None:
    workspace = tmp_path / "ws-1"
    (workspace / "src").mkdir(parents=True)
    (workspace / "src" / "A.java").write_text("class A {}", encoding="utf-8")
    stage = Stage(tmp_path)
    with pytest.raises(KeyboardInterrupt):
        stage.enter(workspace)
        try:
            assert not workspace.exists() and (stage.staged / "src" / "A.java").is_file()
            (stage.path / "left-by-the-build").write_text("x", encoding="utf-8")
            (stage.path / ".head-x" / "a").mkdir(parents=True)
            raise KeyboardInterrupt
        finally:
            stage.leave()
    assert (workspace / "src" / "A.java").is_file()
    assert list(stage.path.iterdir()) == []  # nothing of the build stays for the next
    stage.leave()  # nothing lent: nothing to do
    stage.remove()
    assert not stage.path.exists()


def test_stages_of_dead_harness_processes_are_swept(tmp_path: Path) -> None:
    dead = tmp_path / f"{docker_warm.STAGE_PREFIX}999999999-1-abc"
    (dead / "ws" / "src").mkdir(parents=True)
    reused_pid = tmp_path / f"{docker_warm.STAGE_PREFIX}{os.getpid()}-1-abc"  # this pid, another start
    reused_pid.mkdir()
    stranger = tmp_path / "ws-1"
    stranger.mkdir()
    live = Stage(tmp_path)
    Stage(tmp_path)
    assert not dead.exists() and not reused_pid.exists()
    assert stranger.is_dir() and live.path.is_dir()  # ours, alive: kept


def test_a_build_that_replaces_its_workspace_gets_no_strangers_tree_back(tmp_path: Path) -> None:
    workspace = tmp_path / "ws-1"
    workspace.mkdir()
    stage = Stage(tmp_path)
    stage.enter(workspace)
    os.rename(stage.staged, stage.path / "moved")
    os.symlink("/", stage.staged)
    with pytest.raises(HarnessError, match="replaced its workspace"):
        stage.leave()
    assert not workspace.exists() and list(stage.path.iterdir()) == []
    stage.enter(_fresh(tmp_path / "ws-2"))
    os.rename(stage.staged, stage.path / "moved")
    with pytest.raises(HarnessError, match="moved its workspace"):
        stage.leave()


def _fresh(path: Path) -> Path:
    path.mkdir()
    return path


def _frame(stream: int, payload: bytes) -> bytes:
    return struct.pack(">BxxxL", stream, len(payload)) + payload


def test_frames_of_the_attach_stream() -> None:
    reader = FrameReader()
    stream = _frame(1, b"[INFO] one\n") + _frame(2, b"warn\n") + _frame(1, "é\n".encode()) + _frame(0, b"in")
    # cut anywhere: in a header, in a payload
    got = b"".join(reader.feed(stream[i : i + 5]) for i in range(0, len(stream), 5))
    assert got == "[INFO] one\nwarn\né\n".encode()
    assert reader.feed(_frame(1, b"")[:3]) == b"" and reader.buffer == bytearray(_frame(1, b"")[:3])


@pytest.mark.parametrize(
    ("change", "why"),
    [
        ({"warm": False}, "not marked warm"),
        ({"network": True}, "an online step"),
        ({"test_network": True}, "--tebench-network"),
        ({"argv": ("mvn", "test")}, "neither a build of a resolved Maven"),
    ],
)
def test_steps_that_stay_cold(
    executor: WarmDockerExecutor, tmp_path: Path, change: dict[str, Any], why: str
) -> None:
    step = _step(_maven(tmp_path), "test")
    step = BuildStep(**{**step.__dict__, **change})
    assert why in executor.refusal(tmp_path, step, True)


def test_a_caller_that_needs_the_container_or_a_linked_workspace_stays_cold(
    executor: WarmDockerExecutor, tmp_path: Path
) -> None:
    step = _step(_maven(tmp_path), "test")
    (tmp_path / "ws").mkdir()
    assert executor.refusal(tmp_path / "ws", step, True) == ""
    assert "the container itself" in executor.refusal(tmp_path / "ws", step, False)
    os.symlink(tmp_path / "ws", tmp_path / "link")
    assert "symbolic link" in executor.refusal(tmp_path / "link", step, True)


def test_the_option_picks_the_warm_docker_executor(monkeypatch: pytest.MonkeyPatch) -> None:
    from pytest_tebench.run import executors

    monkeypatch.setattr(DockerExecutor, "remove_stale", lambda self: [])
    monkeypatch.setattr("pytest_tebench.run.docker_image.connect", _NoClient)
    made = executors.create_executor(ExecutorOptions(name="docker"))
    assert type(made) is WarmDockerExecutor
    made = executors.create_executor(ExecutorOptions(name="docker", warm_jvm=False))
    assert type(made) is DockerExecutor


# --------------------------------------------------------------------------- a build's course


class _Server(warm.WarmServer):
    """A stand-in server: answers each request as ``answer`` says, checks the workspace is staged."""

    def __init__(self, stage: Stage, answer: str) -> None:
        self.stage, self.answer, self.user, self.stopped, self.pid = stage, answer, "1000:1000", False, "7"
        self.container = type("C", (), {"name": "warm-1"})()
        self.chunks: queue.Queue[bytes] = queue.Queue()
        self.requests: list[str] = []
        #: the container cgroup's OOM kills, as the cleanup after each build reads them
        self.oom_kills = 0
        self.kills_per_build = 0
        super().__init__(self.chunks.get)

    @property
    def alive(self) -> bool:
        return not self.stopped

    def send(self, data: bytes) -> None:
        text = data.decode()
        self.requests.append(text)
        nonce = text.split()[1]
        assert self.stage.staged.is_dir() and "CWD /workspace/ws" in text
        if self.answer == "ok":
            self.chunks.put(f"[INFO] BUILD SUCCESS\n{nonce} EXIT 0\n".encode())
        elif self.answer == "die":
            self.chunks.put(b"")
        elif self.answer == "exit":  # a build's System.exit: Maven had said something
            self.chunks.put(b"[INFO] Scanning for projects...\nhalf a line")
            self.chunks.put(b"")

    def clear_leftovers(self) -> bool:
        self.oom_kills += self.kills_per_build
        return True

    def stop(self, *, graceful: bool = True) -> None:
        self.stopped = True
        self.stage.remove()


@pytest.mark.parametrize("answer", ["ok", "timeout", "die", "exit"])
def test_a_builds_course(
    executor: WarmDockerExecutor, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, answer: str
) -> None:
    maven, repo, workspace = _places(tmp_path)
    servers: list[_Server] = []

    def start(*_: object) -> _Server:
        servers.append(_Server(Stage(workspace.parent), answer))
        return servers[-1]

    cold = StepResult(
        name="test", argv=(), exit_code=0, timed_out=False, duration=1, output="cold", runtime=""
    )
    monkeypatch.setattr(executor, "_ensure_image", lambda: "sha256:0123")
    monkeypatch.setattr(executor, "_start", start)
    monkeypatch.setattr(DockerExecutor, "run", lambda *a, **k: cold)
    result = executor.run(
        workspace, _step(maven, "test", timeout=1 if answer == "timeout" else 60), maven_repo=repo
    )
    assert workspace.is_dir()  # given back, whatever happened
    server = servers[0]
    if answer == "ok":
        assert (result.exit_code, result.output, result.extra["warm_jvm"]) == (
            0,
            "[INFO] BUILD SUCCESS\n",
            "started",
        )
        assert not server.stopped and list(server.stage.path.iterdir()) == []  # its head is gone
        assert CONTAINER_OOM not in result.extra
        server.kills_per_build = 1  # the next build has a process killed at the container's cap
        again = executor.run(workspace, _step(maven, "test"), maven_repo=repo)
        assert again.extra["warm_jvm"] == "reused" and len(servers) == 1
        assert again.extra[CONTAINER_OOM] == "true"  # that build's, and only that build's
        server.kills_per_build = 0
        assert CONTAINER_OOM not in executor.run(workspace, _step(maven, "test"), maven_repo=repo).extra
    elif answer == "timeout":
        assert result.timed_out and result.exit_code is None and "killed" in result.output
        assert server.stopped and not server.stage.path.exists()
    else:
        # never a verdict from a broken server: the step ran again in a fresh container
        assert result.output == "cold" and result.extra["warm_jvm"].startswith("off: the warm server ended")
        assert server.stopped and not server.stage.path.exists()
        # a server that cannot start here is not started again for every step; one that a
        # build's System.exit ended is
        again = executor.run(workspace, _step(maven, "test"), maven_repo=repo)
        if answer == "die":
            assert again.extra["warm_jvm"].startswith("off: a warm server for this JDK") and len(servers) == 1
        else:
            assert len(servers) == 2
    executor.pool.close()
