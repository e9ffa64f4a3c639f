"""The Docker executor against a real engine: isolation, limits, timeouts and cleanup.

Needs the image of the current recipe. Without an engine the tests skip, except under CI=true,
where a missing engine (or image that cannot be built) is a failure: CI must never go green by
skipping the sandbox. Locally a missing image is built only with TEBENCH_BUILD_IMAGE=1 (it takes
about two minutes); otherwise the tests skip and say how to build it.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from typing import NoReturn

import docker
import docker.errors
import docker.models.containers
import pytest

from pytest_tebench.benchmarks.swebench.official_images import PHASE_REPOSITORY
from pytest_tebench.errors import HarnessError
from pytest_tebench.run import docker_image
from pytest_tebench.run.docker import DockerExecutor
from pytest_tebench.run.docker_warm import CLEAN
from pytest_tebench.run.executor import MAVEN_REPO_PLACEHOLDER
from pytest_tebench.run.executor import BuildStep
from pytest_tebench.run.executor import StepResult
from pytest_tebench.run.leftovers import LABEL_RUN
from pytest_tebench.run.leftovers import LABEL_TRANSIENT
from pytest_tebench.run.leftovers import cleanup_stale
from pytest_tebench.run.leftovers import transient_labels
from pytest_tebench.run.maven.dist import DEFAULT_MAVEN
from pytest_tebench.run.maven.dist import maven_tools
from pytest_tebench.run.maven.steps import mvn_program
from pytest_tebench.run.maven.toolchains import TOOLCHAINS_DIR
from pytest_tebench.run.oom import CONTAINER_OOM
from pytest_tebench.run.oom import oom_kill_count

pytestmark = pytest.mark.docker

IN_CI = os.environ.get("CI", "").lower() in ("true", "1")


def _unavailable(reason: str) -> NoReturn:
    if IN_CI:
        pytest.fail(f"CI is set, so the Docker tests must run: {reason}")
    pytest.skip(reason)


@pytest.fixture(scope="module")
def docker_client() -> Iterator[Any]:
    try:
        client = docker_image.connect()
    except HarnessError as exc:
        _unavailable(str(exc))
    yield client
    client.close()


@pytest.fixture(scope="module")
def image(docker_client: Any) -> str:
    tag = docker_image.image_tag()
    if docker_image.image_present(docker_client, tag):
        return tag
    if not (IN_CI or os.environ.get("TEBENCH_BUILD_IMAGE") == "1"):
        _unavailable(
            f"image {tag} is missing; build it with `python -m pytest_tebench.run.docker_image build`"
        )
    try:
        return docker_image.ensure_image(docker_client, progress=print)
    except HarnessError as exc:
        _unavailable(f"cannot build {tag}: {exc}")


def _leftovers(client: Any, run_id: str) -> list[str]:
    return [c.name for c in client.containers.list(all=True, filters={"label": f"{LABEL_RUN}={run_id}"})]


@pytest.fixture
def make_executor(docker_client: Any, image: str) -> Iterator[Any]:
    made: list[DockerExecutor] = []

    def make(**kwargs: Any) -> DockerExecutor:
        # Modest CPU so a fork bomb or a dd does not starve whoever shares the machine.
        kwargs.setdefault("cpus", 1.0)
        executor = DockerExecutor(image, client=docker_client, **kwargs)
        made.append(executor)
        return executor

    yield make
    for executor in made:
        executor.close()
        assert _leftovers(docker_client, executor.run_id) == []


@pytest.fixture
def executor(make_executor: Any) -> DockerExecutor:
    result: DockerExecutor = make_executor()
    return result


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    path.mkdir()
    return path


@pytest.fixture
def maven_repo(tmp_path: Path) -> Path:
    path = tmp_path / "m2"
    path.mkdir()
    (path / "marker.txt").write_text("read-only for evaluation steps\n")
    return path


def _run(
    executor: DockerExecutor, workspace: Path, maven_repo: Path, *argv: str, timeout: float = 60, **kw: Any
) -> StepResult:
    return executor.run(
        workspace, BuildStep("step", tuple(argv), timeout=timeout, **kw), maven_repo=maven_repo
    )


def _sh(executor: DockerExecutor, workspace: Path, maven_repo: Path, script: str, **kw: Any) -> StepResult:
    return _run(executor, workspace, maven_repo, "sh", "-c", script, **kw)


# --------------------------------------------------------------------------- basics


def test_step_runs_as_non_root_in_the_workspace(
    executor: DockerExecutor, workspace: Path, maven_repo: Path
) -> None:
    result = _sh(executor, workspace, maven_repo, "id -u; pwd")
    assert result.ok, result.output
    uid, cwd = result.output.split()
    assert uid != "0"
    assert cwd == "/workspace"
    assert executor.image in result.runtime
    assert "sha256:" in result.runtime
    assert result.extra["executor"] == "docker"


@pytest.mark.parametrize(("version", "expected"), [(8, '"1.8.'), (11, '"11.'), (17, '"17.')])
def test_java_version_picks_the_jdk(
    executor: DockerExecutor, workspace: Path, maven_repo: Path, version: int, expected: str
) -> None:
    result = _run(executor, workspace, maven_repo, "java", "-version", java_version=version)
    assert result.ok, result.output
    assert expected in result.output
    assert f"JAVA_HOME=/opt/java/{version}" in result.runtime


def test_javac_then_java_and_host_paths_are_translated(
    executor: DockerExecutor, workspace: Path, maven_repo: Path
) -> None:
    (workspace / "Hello.java").write_text(
        'public class Hello { public static void main(String[] a) { System.out.println("hello " + a[0]); } }\n'
    )
    compiled = _run(
        executor, workspace, maven_repo, "javac", "-d", f"{workspace}/classes", f"{workspace}/Hello.java"
    )
    assert compiled.ok, compiled.output
    assert (workspace / "classes" / "Hello.class").is_file()
    ran = _run(
        executor,
        workspace,
        maven_repo,
        "sh",
        "-c",
        'java -cp "$CP" Hello "$WHERE"',
        env=(("CP", f"{workspace}/classes"), ("WHERE", f"{maven_repo}/x")),
    )
    assert ran.ok, ran.output
    assert ran.output.strip() == "hello /maven-repo/x"


def test_failing_command_is_a_result_not_an_error(
    executor: DockerExecutor, workspace: Path, maven_repo: Path
) -> None:
    result = _sh(executor, workspace, maven_repo, "echo boom >&2; exit 3")
    assert result.exit_code == 3
    assert not result.timed_out
    assert "boom" in result.output


@pytest.mark.skipif(os.geteuid() != 0, reason="the chown hand-over only happens when the harness is root")
def test_workspace_ownership_is_restored(executor: DockerExecutor, workspace: Path, maven_repo: Path) -> None:
    (workspace / "existing").write_text("x")
    result = _sh(executor, workspace, maven_repo, "mkdir -p made/deep && touch made/deep/f && touch existing")
    assert result.ok, result.output
    for path in (workspace, workspace / "existing", workspace / "made", workspace / "made" / "deep" / "f"):
        assert path.stat().st_uid == 0, path


# --------------------------------------------------------------------------- isolation


def test_no_network_in_evaluation_steps(executor: DockerExecutor, workspace: Path, maven_repo: Path) -> None:
    tcp = _run(
        executor,
        workspace,
        maven_repo,
        "bash",
        "-c",
        "exec 3<>/dev/tcp/1.1.1.1/53 && echo CONNECTED",
        timeout=30,
    )
    assert tcp.exit_code != 0
    assert "CONNECTED" not in tcp.output
    dns = _sh(executor, workspace, maven_repo, "getent hosts deb.debian.org && echo RESOLVED", timeout=30)
    assert dns.exit_code != 0
    assert "RESOLVED" not in dns.output


def test_cannot_write_outside_the_workspace(
    executor: DockerExecutor, workspace: Path, maven_repo: Path
) -> None:
    for target in (
        "/etc/evil",
        "/maven-repo/evil",
        "/maven-repo/marker.txt",
        "/usr/local/evil",
        "/var/tmp/evil",
    ):
        result = _sh(executor, workspace, maven_repo, f"echo evil > {target}")
        assert result.exit_code != 0, target
    # .tebench/ is the harness's own bookkeeping (the toolchains file), written by the host
    assert sorted(p.name for p in maven_repo.iterdir() if p.name != ".tebench") == ["marker.txt"]
    assert (maven_repo / "marker.txt").read_text().startswith("read-only")
    ok = _sh(executor, workspace, maven_repo, "echo fine > /workspace/out && echo fine > /tmp/scratch")
    assert ok.ok, ok.output
    assert (workspace / "out").read_text() == "fine\n"


def test_warm_up_steps_may_write_the_maven_repository(
    executor: DockerExecutor, workspace: Path, maven_repo: Path
) -> None:
    result = _sh(executor, workspace, maven_repo, "echo cached > /maven-repo/new.txt", network=True)
    assert result.ok, result.output
    assert (maven_repo / "new.txt").read_text() == "cached\n"


def test_no_privilege_escalation(executor: DockerExecutor, workspace: Path, maven_repo: Path) -> None:
    result = _sh(executor, workspace, maven_repo, "grep -E '^(NoNewPrivs|CapEff)' /proc/self/status")
    assert result.ok, result.output
    assert "NoNewPrivs:\t1" in result.output
    assert "CapEff:\t0000000000000000" in result.output


# --------------------------------------------------------------------------- limits


FORK_BOMB = r"""
# The shell waits asleep on a FIFO, never in a busy loop: at cpus=0.5 and 64 busy processes a
# spinning shell got too little CPU to write its file before the timeout on a loaded machine,
# while a sleeper is scheduled soon after it wakes.
mkfifo /tmp/wait && exec 3<>/tmp/wait
bomb() { bomb | bomb & }
bomb
# From here on only builtins: a fork would fail like the bomb's do.
read -r -t 4 -u 3
d=/sys/fs/cgroup/pids; [[ -e $d/pids.max ]] || d=/sys/fs/cgroup
read -r current < "$d/pids.current"; read -r limit < "$d/pids.max"
echo "current=$current limit=$limit" > /workspace/pids.txt
read -r -u 3
"""


def test_fork_bomb_is_contained_and_the_step_returns(
    make_executor: Any, workspace: Path, maven_repo: Path, docker_client: Any
) -> None:
    executor = make_executor(pids_limit=64, cpus=0.5)
    started = time.monotonic()
    result = _run(executor, workspace, maven_repo, "bash", "-c", FORK_BOMB, timeout=10)
    assert time.monotonic() - started < 40
    assert result.timed_out
    assert result.exit_code is None
    assert "Resource temporarily unavailable" in result.output
    fields = dict(item.split("=") for item in (workspace / "pids.txt").read_text().split())
    assert fields["limit"] == "64"
    assert int(fields["current"]) <= 64
    assert _leftovers(docker_client, executor.run_id) == []


def test_sleep_is_killed_at_the_timeout(
    executor: DockerExecutor, workspace: Path, maven_repo: Path, docker_client: Any
) -> None:
    started = time.monotonic()
    result = _run(executor, workspace, maven_repo, "sleep", "120", timeout=2)
    elapsed = time.monotonic() - started
    assert result.timed_out
    assert result.exit_code is None
    assert not result.ok
    assert 1.5 < result.duration < 15
    assert elapsed < 20
    assert "killed at its 2 s limit" in result.output
    assert _leftovers(docker_client, executor.run_id) == []


def test_tmp_is_size_limited(make_executor: Any, workspace: Path, maven_repo: Path) -> None:
    executor = make_executor(tmp_size="16m")
    result = _run(executor, workspace, maven_repo, "dd", "if=/dev/zero", "of=/tmp/fill", "bs=1M", "count=64")
    assert result.exit_code != 0
    assert "No space left on device" in result.output


def test_single_file_size_is_limited_in_the_workspace(
    make_executor: Any, workspace: Path, maven_repo: Path
) -> None:
    # /workspace is a bind mount of the host disk: no quota is possible there on ext4 without
    # project quotas, so only the size of each file is capped (RLIMIT_FSIZE), plus the timeout.
    executor = make_executor(file_size_limit=8 * 1024 * 1024)
    result = _run(
        executor, workspace, maven_repo, "dd", "if=/dev/zero", "of=/workspace/big", "bs=1M", "count=64"
    )
    assert result.exit_code != 0
    assert (workspace / "big").stat().st_size <= 8 * 1024 * 1024


def test_memory_limit_kills_a_hog(make_executor: Any, workspace: Path, maven_repo: Path) -> None:
    executor = make_executor(memory="256m", tmp_size="1g")
    # Fill the RAM-backed /tmp beyond the memory limit: tmpfs pages count against the cgroup.
    result = _run(executor, workspace, maven_repo, "dd", "if=/dev/zero", "of=/tmp/fill", "bs=1M", "count=512")
    assert result.exit_code != 0
    assert result.extra.get(CONTAINER_OOM) == "true" or result.exit_code == 137


def test_the_warm_container_s_cleanup_reads_its_cap_kills(docker_client: Any, image: str) -> None:
    # a process of the container killed at its cap, the server (pid 1 here) alive: the cleanup
    # after each warm build prints the cgroup's own count, which Docker's OOMKilled shows only
    # once the container has exited
    script = 'head -c 300m /dev/zero | tail >/dev/null; sh -c "$0" sh 1'
    output = docker_client.containers.run(
        image, ["sh", "-c", script, CLEAN], remove=True, mem_limit="64m", memswap_limit="64m",
        user="1000:1000", network_mode="none",
    )  # fmt: skip
    assert oom_kill_count(output.decode()) == 1


# --------------------------------------------------------------------------- cleanup


def test_containers_are_removed_on_keyboard_interrupt(
    executor: DockerExecutor,
    workspace: Path,
    maven_repo: Path,
    docker_client: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def interrupted(self: Any, **kwargs: Any) -> dict[str, int]:
        raise KeyboardInterrupt

    monkeypatch.setattr(docker.models.containers.Container, "wait", interrupted)
    with pytest.raises(KeyboardInterrupt):
        _run(executor, workspace, maven_repo, "sleep", "60")
    assert _leftovers(docker_client, executor.run_id) == []
    if os.geteuid() == 0:
        assert workspace.stat().st_uid == 0


def _hanging(image: str, run_id: str, workspace: Path, maven_repo: Path, then: str) -> str:
    """A child's code: an executor of ``run_id`` and a step that sleeps 300 s, then ``then``."""
    head = textwrap.dedent(
        f"""
        from pathlib import Path
        from pytest_tebench.run.docker import DockerExecutor
        from pytest_tebench.run.executor import BuildStep
        executor = DockerExecutor({image!r}, run_id={run_id!r})
        step = BuildStep("hang", ("sleep", "300"), timeout=600)
        workspace, maven_repo = Path({str(workspace)!r}), Path({str(maven_repo)!r})
        """
    )
    return head + textwrap.dedent(then)


def _killed_once_its_container_runs(code: str, client: Any, run_id: str) -> None:
    """Run ``code`` in a child process and SIGKILL it (no finally, no close()) once a container
    of ``run_id`` exists."""
    child = subprocess.Popen([sys.executable, "-c", code])
    try:
        deadline = time.monotonic() + 60
        while not _leftovers(client, run_id):
            assert time.monotonic() < deadline, "the child never started its container"
            assert child.poll() is None, "the child died before starting its container"
            time.sleep(0.2)
    finally:
        child.kill()
        child.wait()


def test_cleanup_stale_removes_containers_of_a_killed_process(
    image: str, docker_client: Any, workspace: Path, maven_repo: Path, executor: DockerExecutor
) -> None:
    run_id = f"crash-{os.getpid()}-{time.monotonic_ns()}"
    # the container made as executor.run makes it, but without the process's watcher (which
    # would remove it at once, test_a_killed_process_s_containers_go_with_it): what a watcher
    # killed too, or a reboot, leaves for the next run's sweep
    started = """
        import time, docker
        spec = executor.container_spec(workspace, step, maven_repo)
        docker.from_env().containers.create(**spec).start()
        time.sleep(300)
    """
    _killed_once_its_container_runs(
        _hanging(image, run_id, workspace, maven_repo, started), docker_client, run_id
    )
    (orphan,) = _leftovers(docker_client, run_id)

    # A container of a live process (this one) must survive the sweep.
    spec = executor.container_spec(workspace, BuildStep("alive", ("sleep", "60"), timeout=60), maven_repo)
    alive = docker_client.containers.create(**spec)
    try:
        removed = cleanup_stale(docker_client)
        assert orphan in removed
        assert alive.name not in removed
        assert _leftovers(docker_client, run_id) == []
        assert alive.name in _leftovers(docker_client, executor.run_id)
    finally:
        alive.remove(force=True)


def test_a_killed_process_s_containers_go_with_it(
    image: str, docker_client: Any, workspace: Path, maven_repo: Path
) -> None:
    # SIGKILLed mid-step, the harness cleans up nothing: its watcher removes the running
    # container (and a test that would loop for ever in it) without waiting for the next run
    run_id = f"watched-{os.getpid()}-{time.monotonic_ns()}"
    ran = "executor.run(workspace, step, maven_repo=maven_repo)"
    _killed_once_its_container_runs(
        _hanging(image, run_id, workspace, maven_repo, ran), docker_client, run_id
    )
    deadline = time.monotonic() + 30
    while _leftovers(docker_client, run_id) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _leftovers(docker_client, run_id) == []


def _image_exists(client: Any, image_id: str) -> bool:
    try:
        client.images.get(image_id)
    except docker.errors.ImageNotFound:
        return False
    return True


def test_cleanup_stale_removes_transient_images_of_a_killed_process_only(
    image: str, docker_client: Any, workspace: Path, maven_repo: Path, executor: DockerExecutor
) -> None:
    """An install phase committed as official mode commits it (transient), by a process killed
    before its ``finally``, goes with the next sweep; the same commit of a live process stays, and
    so does a commit of the dead process's container not marked transient (a cache's case)."""
    repository = PHASE_REPOSITORY
    tag = f"reaper-{os.getpid()}-{time.monotonic_ns()}"
    code = textwrap.dedent(
        f"""
        import time
        from pathlib import Path
        import docker
        from pytest_tebench.run import leftovers
        from pytest_tebench.run.docker import DockerExecutor
        from pytest_tebench.run.executor import BuildStep
        executor = DockerExecutor({image!r}, run_id={tag!r})
        step = BuildStep("install", ("true",), timeout=60)
        spec = executor.container_spec(Path({str(workspace)!r}), step, Path({str(maven_repo)!r}))
        container = docker.from_env().containers.create(**spec)
        labels = {{"Labels": leftovers.transient_labels(container)}}
        transient = container.commit(repository={repository!r}, tag={tag + "-dead"!r}, conf=labels)
        kept = container.commit(repository={repository!r}, tag={tag + "-kept"!r})
        print(transient.id, kept.id, flush=True)
        time.sleep(300)
        """
    )
    child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    made: list[str] = []
    try:
        assert child.stdout is not None
        made += child.stdout.readline().split()
        assert len(made) == 2, "the child did not commit its container"
        child.kill()  # SIGKILL: no finally in the child
        child.wait()
        dead, kept = made
        assert docker_client.images.get(dead).labels[LABEL_TRANSIENT] == "1"
        assert LABEL_TRANSIENT not in docker_client.images.get(kept).labels

        spec = executor.container_spec(workspace, BuildStep("alive", ("true",), timeout=60), maven_repo)
        container = docker_client.containers.create(**spec)
        labels = {"Labels": transient_labels(container)}
        made.append(container.commit(repository=repository, tag=f"{tag}-alive", conf=labels).id)
        removed = cleanup_stale(docker_client)
        # the engine's state, not the list: a concurrent sweep (another xdist worker's) may take it
        assert not _image_exists(docker_client, dead)
        assert _image_exists(docker_client, kept) and _image_exists(docker_client, made[2])
        # the dead child's container went in the same sweep, this process's stays
        assert _leftovers(docker_client, tag) == [] and container.name not in removed
        container.remove(force=True)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        child.stdout.close()  # type: ignore[union-attr]
        for image_id in made:
            with contextlib.suppress(docker.errors.ImageNotFound):
                docker_client.images.remove(image_id, force=True)


def test_close_removes_what_is_left(
    executor: DockerExecutor, workspace: Path, maven_repo: Path, docker_client: Any
) -> None:
    spec = executor.container_spec(workspace, BuildStep("left", ("sleep", "60"), timeout=60), maven_repo)
    docker_client.containers.create(**spec).start()
    assert len(_leftovers(docker_client, executor.run_id)) == 1
    executor.close()
    assert _leftovers(docker_client, executor.run_id) == []


# --------------------------------------------------------------------------- Maven

POM = """\
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>example.tebench</groupId>
  <artifactId>tiny</artifactId>
  <version>1.0</version>
  <properties>
    <maven.compiler.source>1.8</maven.compiler.source>
    <maven.compiler.target>1.8</maven.compiler.target>
    <project.build.sourceEncoding>UTF-8</project.build.sourceEncoding>
  </properties>
</project>
"""


def _files(root: Path) -> set[str]:
    """The repository's files but the toolchains files the host writes for each step (one per
    JDK running Maven: the harness's bookkeeping, not the build's)."""
    found = {str(p.relative_to(root)) for p in root.rglob("*")}
    return {name for name in found if not name.startswith(TOOLCHAINS_DIR)}


@pytest.mark.maven
def test_offline_maven_build_after_online_warm_up(
    executor: DockerExecutor, workspace: Path, tmp_path: Path
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    (workspace / "pom.xml").write_text(POM)
    source = workspace / "src" / "main" / "java" / "example"
    source.mkdir(parents=True)
    (source / "Tiny.java").write_text("package example; public class Tiny { int one() { return 1; } }\n")
    # the image has no Maven: every build mounts the distribution the build layer resolved
    tools = maven_tools(DEFAULT_MAVEN, None)
    base = (mvn_program(tools), "-B", "-ntp", f"-Dmaven.repo.local={MAVEN_REPO_PLACEHOLDER}")

    # Warm-up on JDK 8: also proves JDK 8 trusts Maven Central's certificate in the image.
    warm = executor.run(
        workspace,
        BuildStep("warm-up", (*base, "test"), timeout=600, java_version=8, network=True, tools=tools),
        maven_repo=repo,
    )
    assert warm.ok, warm.output
    assert (repo / "org" / "apache" / "maven" / "plugins").is_dir()
    before = _files(repo)

    shutil.rmtree(workspace / "target")
    offline = executor.run(
        workspace,
        BuildStep("test", (*base, "-o", "test"), timeout=300, java_version=17, tools=tools),
        maven_repo=repo,
    )
    assert offline.ok, offline.output
    assert "BUILD SUCCESS" in offline.output
    assert "-Dmaven.repo.local.tail=/maven-repo" in offline.argv
    assert (workspace / "target" / "classes" / "example" / "Tiny.class").is_file()
    assert _files(repo) == before, "an offline step changed the shared repository"
    # its toolchains file, written by the host, lists the JDK running Maven (17) first
    offered = offline.argv[offline.argv.index("--toolchains") + 1].removeprefix("/maven-repo/")
    assert (repo / offered).read_text().split("<jdkHome>")[1].startswith("/opt/java/17<")

    # Something never warmed up cannot be fetched: offline, and no network anyway.
    missing = executor.run(
        workspace,
        BuildStep("clean", (*base, "clean"), timeout=300, java_version=17, tools=tools),
        maven_repo=repo,
    )
    assert missing.exit_code != 0
    assert _files(repo) == before


@pytest.mark.maven
def test_a_maven_tool_of_the_step_is_mounted_from_the_host(
    executor: DockerExecutor, workspace: Path, maven_repo: Path, tmp_path: Path
) -> None:
    # the build layer resolves the distribution; the executor only mounts it
    tools = maven_tools("3.9.9", tmp_path / "maven-dist")
    step = BuildStep("version", (mvn_program(tools), "-v"), timeout=300, java_version=17, tools=tools)
    result = executor.run(workspace, step, maven_repo=maven_repo)
    assert result.ok, result.output
    assert "Apache Maven 3.9.9" in result.output
    assert result.extra["maven"] == "/opt/tools/maven/bin/mvn"


def test_phase_marker_moves_the_deadline(executor: DockerExecutor, workspace: Path, maven_repo: Path) -> None:
    # the step's limit is 30 s, but 1 s after the marker shows up the container is killed
    started = time.monotonic()
    result = _sh(
        executor, workspace, maven_repo, "sleep 1; echo 'phase T E S T S begins'; sleep 60",
        timeout=30, phase_marker="T E S T S", phase_timeout=1.0,
    )  # fmt: skip
    elapsed = time.monotonic() - started
    assert result.timed_out
    assert elapsed < 15
