"""Docker executor pieces that need no engine: path translation, Maven repository arguments,
JDK choice, the container specification, and the image recipe hash."""

from __future__ import annotations

import dataclasses
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_tebench.errors import HarnessError
from pytest_tebench.run import docker_image
from pytest_tebench.run.docker import CONTAINER_MAVEN_HEAD
from pytest_tebench.run.docker import CONTAINER_MAVEN_REPO
from pytest_tebench.run.docker import CONTAINER_WORKSPACE
from pytest_tebench.run.docker import DockerExecutor
from pytest_tebench.run.docker import PathMap
from pytest_tebench.run.docker import image_jdk
from pytest_tebench.run.docker import is_maven
from pytest_tebench.run.docker import named_head
from pytest_tebench.run.docker import path_maps
from pytest_tebench.run.docker import translate
from pytest_tebench.run.docker import translate_step
from pytest_tebench.run.docker import with_local_repo
from pytest_tebench.run.executor import MAVEN_REPO_PLACEHOLDER
from pytest_tebench.run.executor import WORKSPACE_PLACEHOLDER
from pytest_tebench.run.executor import BuildStep
from pytest_tebench.run.leftovers import LABEL_PID
from pytest_tebench.run.reaper import pid_alive
from pytest_tebench.run.reaper import process_start

MAPS = (PathMap("/root/.m2/repository", "/maven-repo"), PathMap("/work/ws", "/workspace"))


# --------------------------------------------------------------------------- translate


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("/work/ws", "/workspace"),
        ("/work/ws/", "/workspace/"),
        ("/work/ws/pom.xml", "/workspace/pom.xml"),
        ("-f=/work/ws/sub/pom.xml", "-f=/workspace/sub/pom.xml"),
        ("-Dmaven.repo.local=/root/.m2/repository", "-Dmaven.repo.local=/maven-repo"),
        (
            "-javaagent:/root/.m2/repository/org/jacoco/a.jar=destfile=/work/ws/target/jacoco.exec,append=false",
            "-javaagent:/maven-repo/org/jacoco/a.jar=destfile=/workspace/target/jacoco.exec,append=false",
        ),
        ("file:///work/ws/x", "file:///workspace/x"),
        ("file:/work/ws/x", "file:/workspace/x"),
        ("a /work/ws b /work/ws/c", "a /workspace b /workspace/c"),
        ("/work/ws:/root/.m2/repository/x.jar", "/workspace:/maven-repo/x.jar"),
        # Not on a path boundary: left alone.
        ("/work/ws2/pom.xml", "/work/ws2/pom.xml"),
        ("/work/ws.bak", "/work/ws.bak"),
        ("/other/work/ws", "/other/work/ws"),
        ("relative/work/ws", "relative/work/ws"),
        ("test", "test"),
        ("", ""),
    ],
)
def test_translate(value: str, expected: str) -> None:
    assert translate(value, MAPS) == expected


def test_translate_prefers_the_longest_host_path() -> None:
    nested = (PathMap("/work/ws", "/workspace"), PathMap("/work/ws/.m2", "/maven-repo"))
    assert translate("/work/ws/.m2/org/x.jar", nested) == "/maven-repo/org/x.jar"
    assert translate("/work/ws/src", nested) == "/workspace/src"


def test_translate_rejects_root_and_relative_hosts() -> None:
    with pytest.raises(ValueError, match="absolute"):
        translate("/x", (PathMap("/", "/workspace"),))
    with pytest.raises(ValueError, match="absolute"):
        translate("x", (PathMap("work", "/workspace"),))


def test_translate_without_maps_is_identity() -> None:
    assert translate("/work/ws", ()) == "/work/ws"


def test_path_maps_include_resolved_symlinks(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    link = tmp_path / "link"
    link.symlink_to(real)
    repo = tmp_path / "repo"
    maps = path_maps(link, repo)
    hosts = {entry.host: entry.container for entry in maps}
    assert hosts[str(link)] == CONTAINER_WORKSPACE
    assert hosts[str(real.resolve())] == CONTAINER_WORKSPACE
    assert hosts[str(repo)] == CONTAINER_MAVEN_REPO


def test_translate_step_rewrites_argv_and_env_and_drops_owned_keys() -> None:
    step = BuildStep(
        name="test",
        argv=("mvn", "-Dmaven.repo.local=/root/.m2/repository", "-f", "/work/ws/pom.xml", "test"),
        timeout=10,
        env=(
            ("JAVA_TOOL_OPTIONS", "-javaagent:/root/.m2/repository/a.jar=destfile=/work/ws/j.exec"),
            ("JAVA_HOME", "/usr/lib/jvm/host-jdk"),
            ("PATH", "/usr/bin"),
            ("OTHER", "plain"),
        ),
    )
    argv, env = translate_step(step, MAPS)
    assert argv == ("mvn", "-Dmaven.repo.local=/maven-repo", "-f", "/workspace/pom.xml", "test")
    assert dict(env) == {
        "JAVA_TOOL_OPTIONS": "-javaagent:/maven-repo/a.jar=destfile=/workspace/j.exec",
        "OTHER": "plain",
    }


# --------------------------------------------------------------------------- Maven arguments


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (("mvn", "test"), True),
        (("/opt/maven/bin/mvn", "-v"), True),
        (("./mvnw", "test"), True),
        (("mvnd",), True),
        (("java", "-version"), False),
        ((), False),
    ],
)
def test_is_maven(argv: tuple[str, ...], expected: bool) -> None:
    assert is_maven(argv) is expected


def test_with_local_repo_replaces_the_steps_repository() -> None:
    argv = (
        "mvn",
        "-B",
        "-Dmaven.repo.local=/maven-repo",
        "-D",
        "maven.repo.local.tail=/x",
        "-Dfoo=1",
        "test",
    )
    assert with_local_repo(argv, CONTAINER_MAVEN_HEAD, CONTAINER_MAVEN_REPO) == (
        "mvn",
        f"-Dmaven.repo.local={CONTAINER_MAVEN_HEAD}",
        f"-Dmaven.repo.local.tail={CONTAINER_MAVEN_REPO}",
        "-B",
        "-Dfoo=1",
        "test",
    )
    assert with_local_repo(("mvn", "test"), CONTAINER_MAVEN_REPO) == (
        "mvn",
        f"-Dmaven.repo.local={CONTAINER_MAVEN_REPO}",
        "test",
    )


def test_with_local_repo_leaves_other_commands_alone() -> None:
    argv = ("sh", "-c", "echo -Dmaven.repo.local=/x")
    assert with_local_repo(argv, "/r", "/t") == argv


# --------------------------------------------------------------------------- JDK choice


def test_image_jdk_is_exactly_the_chosen_one() -> None:
    # choosing is run/maven/jdk.py's job (one chooser); the image only has to have it
    assert image_jdk(8, (8, 11, 17)) == 8
    assert image_jdk(17, (17, 11, 8)) == 17
    assert image_jdk(None, (17, 11, 8)) == 8
    with pytest.raises(HarnessError, match="no JDK 21"):
        image_jdk(21, (8, 11, 17))
    with pytest.raises(HarnessError, match="no JDK 9"):
        image_jdk(9, (8, 11, 17))


# --------------------------------------------------------------------------- container spec


class _NoClient:
    """Stands in for a Docker client: ``container_spec`` must not talk to the engine."""


def _spec(step: BuildStep, tmp_path: Path) -> dict[str, object]:
    executor = DockerExecutor("img:tag", client=_NoClient(), run_id="r1")
    workspace = tmp_path / "ws"
    workspace.mkdir(exist_ok=True)
    return executor.container_spec(workspace, step, tmp_path / "m2")


def _offered_toolchains(spec: dict[str, object], maven_repo: Path) -> str:
    """The toolchains file a Maven step's container is told to use: in the mounted repository,
    listing the image's JDKs at their /opt/java homes."""
    command = spec["command"]
    assert isinstance(command, list) and command[1] == "--toolchains"
    path = str(command[2])
    assert path.startswith(f"{CONTAINER_MAVEN_REPO}/.tebench/toolchains/")
    text = (maven_repo / path.removeprefix(f"{CONTAINER_MAVEN_REPO}/")).read_text(encoding="utf-8")
    for version in (8, 11, 17, 21):
        assert f"<jdkHome>/opt/java/{version}</jdkHome>" in text
    return path


def _first_toolchain_home(spec: dict[str, object], maven_repo: Path) -> str:
    path = _offered_toolchains(spec, maven_repo).removeprefix(f"{CONTAINER_MAVEN_REPO}/")
    text = (maven_repo / path).read_text(encoding="utf-8")
    return text.split("<jdkHome>")[1].split("</jdkHome>")[0]


def test_spec_of_an_offline_maven_step(tmp_path: Path) -> None:
    step = BuildStep(
        name="test",
        argv=(
            "mvn",
            "-o",
            f"-Dmaven.repo.local={MAVEN_REPO_PLACEHOLDER}",
            f"-Dx={WORKSPACE_PLACEHOLDER}/a",
            "test",
        ),
        timeout=60,
        java_version=11,
        env=(("JAVA_TOOL_OPTIONS", f"-javaagent:{tmp_path / 'm2'}/agent.jar"),),
    )
    spec = _spec(step, tmp_path)
    toolchains = _offered_toolchains(spec, tmp_path / "m2")
    assert spec["command"] == [
        "mvn",
        "--toolchains",
        toolchains,
        f"-Dmaven.repo.local={CONTAINER_MAVEN_HEAD}",
        f"-Dmaven.repo.local.tail={CONTAINER_MAVEN_REPO}",
        "-o",
        "-Dx=/workspace/a",
        "test",
    ]
    assert spec["network_mode"] == "none"
    env = spec["environment"]
    assert isinstance(env, dict)
    assert env["JAVA_HOME"] == "/opt/java/11"
    assert env["PATH"].startswith("/opt/java/11/bin:")
    # the JDK running Maven is the first toolchain (a range admitting it gets it)
    assert _first_toolchain_home(spec, tmp_path / "m2") == "/opt/java/11"
    assert env["JAVA_TOOL_OPTIONS"] == "-javaagent:/maven-repo/agent.jar"
    mounts = {m["Target"]: m for m in spec["mounts"]}  # type: ignore[attr-defined]
    assert mounts[CONTAINER_WORKSPACE]["ReadOnly"] is False
    assert mounts[CONTAINER_MAVEN_REPO]["ReadOnly"] is True
    assert spec["read_only"] is True
    assert spec["cap_drop"] == ["ALL"]
    assert spec["labels"][LABEL_PID] == str(os.getpid())  # type: ignore[index]
    assert not str(spec["user"]).startswith("0:")


def test_spec_of_a_cold_maven_step_drops_the_warm_server_s_switches(tmp_path: Path) -> None:
    # a cold container has no server to read them; Maven would hand them to the tests
    step = BuildStep(
        name="test",
        argv=("mvn", "-o", "-Dtebench.outputs=replay", "-Dtebench.testside=snapshot", "-Dtebenchx=1", "test"),
        timeout=60,
        java_version=11,
    )
    command = _spec(step, tmp_path)["command"]
    assert isinstance(command, list)
    assert command[-3:] == ["-o", "-Dtebenchx=1", "test"]
    assert not [arg for arg in command if str(arg).startswith("-Dtebench.")]


def test_spec_of_a_warm_up_step_has_network_and_a_writable_repo(tmp_path: Path) -> None:
    step = BuildStep(name="warm", argv=("mvn", "test"), timeout=60, network=True)
    spec = _spec(step, tmp_path)
    toolchains = _offered_toolchains(spec, tmp_path / "m2")
    assert spec["command"] == [
        "mvn",
        "--toolchains",
        toolchains,
        f"-Dmaven.repo.local={CONTAINER_MAVEN_REPO}",
        "test",
    ]
    assert spec["network_mode"] == "bridge"
    mounts = {m["Target"]: m for m in spec["mounts"]}  # type: ignore[attr-defined]
    assert mounts[CONTAINER_MAVEN_REPO]["ReadOnly"] is False


def test_tests_with_the_network_allowed_get_one_and_a_read_only_repo(tmp_path: Path) -> None:
    # --tebench-network: the tests of an offline build may reach hosts; Maven writes nothing shared
    step = BuildStep(name="test", argv=("mvn", "-o", "test"), timeout=60, test_network=True)
    spec = _spec(step, tmp_path)
    assert spec["network_mode"] == "bridge"
    mounts = {m["Target"]: m for m in spec["mounts"]}  # type: ignore[attr-defined]
    assert mounts[CONTAINER_MAVEN_REPO]["ReadOnly"] is True
    assert f"-Dmaven.repo.local.tail={CONTAINER_MAVEN_REPO}" in spec["command"]  # type: ignore[operator]


def test_a_step_with_its_own_image_keeps_the_sandbox_and_the_image_s_env(tmp_path: Path) -> None:
    step = BuildStep(name="swebench-test", argv=("bash", "-c", "pytest -rA"), timeout=60, image="env:1")
    spec = _spec(step, tmp_path)
    assert spec["image"] == "env:1"
    env = spec["environment"]
    assert isinstance(env, dict)
    # the image's PATH (its venv) stands: no JDK chosen, no PATH imposed
    assert "PATH" not in env and "JAVA_HOME" not in env
    assert (spec["network_mode"], spec["read_only"], spec["cap_drop"]) == ("none", True, ["ALL"])
    assert not str(spec["user"]).startswith("0:")


def test_spec_refuses_maven_older_than_3_9(tmp_path: Path) -> None:
    old = tmp_path / "apache-maven-3.8.8"
    old.mkdir()
    step = BuildStep(
        name="c", argv=("{tool:maven}/bin/mvn", "compile"), timeout=60, tools=(("maven", str(old)),)
    )
    with pytest.raises(HarnessError, match=r">= 3\.9"):
        _spec(step, tmp_path)


# --------------------------------------------------------------------------- stale detection


def test_own_process_is_alive_and_a_reused_pid_is_not() -> None:
    start = process_start(os.getpid())
    assert start.isdigit()
    assert pid_alive(os.getpid(), start)
    assert not pid_alive(os.getpid(), str(int(start) + 1))


def test_a_killed_process_its_parent_has_not_reaped_is_dead() -> None:
    # a crashed xdist worker stays a zombie until its controller reaps it: its containers must go
    child = subprocess.Popen(["sleep", "30"])
    start = process_start(child.pid)
    assert pid_alive(child.pid, start)
    os.kill(child.pid, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while Path(f"/proc/{child.pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z":
        assert time.monotonic() < deadline
        time.sleep(0.01)
    try:
        assert not pid_alive(child.pid, start)
    finally:
        child.wait()


# --------------------------------------------------------------------------- recipe


def test_recipe_hash_is_stable_and_names_the_tag() -> None:
    assert docker_image.recipe_hash() == docker_image.recipe_hash(docker_image.Recipe())
    tag = docker_image.image_tag()
    assert tag == f"pytest-tebench/java:{docker_image.recipe_hash()}"
    assert len(docker_image.recipe_hash()) == 12


@pytest.mark.parametrize(
    "change",
    [
        {"packages": (*docker_image.DEFAULT_RECIPE.packages, "unzip")},
        {"suite": "trixie"},
        {"mirror": "http://example.invalid/debian"},
        {"jdks": (8, 17)},
        {"default_jdk": 17},
        {"uid": 1001},
    ],
)
def test_recipe_hash_changes_with_the_recipe(change: dict[str, object]) -> None:
    changed = dataclasses.replace(docker_image.DEFAULT_RECIPE, **change)  # type: ignore[arg-type]
    assert docker_image.recipe_hash(changed) != docker_image.recipe_hash()


def test_recipe_hash_covers_script_text_and_version(monkeypatch: pytest.MonkeyPatch) -> None:
    before = docker_image.recipe_hash()
    monkeypatch.setattr(docker_image, "_SETUP_TEMPLATE", docker_image._SETUP_TEMPLATE + "# edited\n")
    assert docker_image.recipe_hash() != before
    monkeypatch.undo()
    monkeypatch.setattr(docker_image, "RECIPE_VERSION", docker_image.RECIPE_VERSION + 1)
    assert docker_image.recipe_hash() != before


def test_recipe_hash_covers_host_ca_certificates(tmp_path: Path) -> None:
    recipe = dataclasses.replace(docker_image.DEFAULT_RECIPE, host_ca_dir=str(tmp_path))
    empty = docker_image.recipe_hash(recipe)
    assert empty == docker_image.recipe_hash(dataclasses.replace(recipe, host_ca_dir=""))
    (tmp_path / "proxy.crt").write_bytes(b"-----BEGIN CERTIFICATE-----\nAA==\n-----END CERTIFICATE-----\n")
    (tmp_path / "ignored.pem").write_bytes(b"not a .crt")
    assert docker_image.host_ca_certificates(recipe) == (
        ("proxy.crt", (tmp_path / "proxy.crt").read_bytes()),
    )
    with_ca = docker_image.recipe_hash(recipe)
    assert with_ca != empty
    (tmp_path / "proxy.crt").write_bytes(b"other")
    assert docker_image.recipe_hash(recipe) not in (empty, with_ca)


def test_setup_script_and_changes_carry_the_recipe() -> None:
    script = docker_image.setup_script()
    for package in docker_image.DEFAULT_RECIPE.packages:
        assert package in script
    # no Maven of the image's own: builds mount Apache Maven's distribution (run/maven/dist.py)
    assert "maven" not in docker_image.DEFAULT_RECIPE.packages and "maven" not in script
    assert "useradd --no-log-init --uid 1000" in script
    changes = docker_image.image_changes()
    assert "ENV JAVA_HOME=/opt/java/8" in changes
    assert {
        "ENV JAVA8_HOME=/opt/java/8",
        "ENV JAVA11_HOME=/opt/java/11",
        "ENV JAVA17_HOME=/opt/java/17",
    } <= set(changes)
    assert "USER 1000:1000" in changes
    assert "WORKDIR /workspace" in changes


def test_image_main_prints_the_tag(capsys: pytest.CaptureFixture[str]) -> None:
    assert docker_image.main(["tag"]) == 0
    assert capsys.readouterr().out.strip() == docker_image.image_tag()


def test_a_killed_step_reports_the_limit_that_fired() -> None:
    # issue 8 item 7: the one-launch step was reported with the compile limit after the test limit fired
    from pytest_tebench.run.executor import BuildStep
    from pytest_tebench.run.executor import PhaseClock

    step = BuildStep("compile+test", ("mvn", "test"), 300, phase_marker="T E S T S", phase_timeout=900)
    clock = PhaseClock(step, started=0.0)
    assert clock.killed_message() == "[pytest-tebench] step compile+test killed at its 300 s limit"
    clock.feed("[INFO]  T E S T S")
    assert clock.limit == 900
    assert clock.killed_message().endswith("killed at its 900 s limit (after its phase marker)")


def test_the_docker_output_follower_holds_a_bounded_line() -> None:
    # issue 8 item 7: the phase-marker follower kept a newline-free output whole in memory
    from pytest_tebench.run import docker as docker_module
    from pytest_tebench.run.executor import MAX_LINE
    from pytest_tebench.run.executor import BuildStep
    from pytest_tebench.run.executor import PhaseClock

    class Container:
        def logs(self, **_: object) -> Iterator[bytes]:
            for _chunk in range(200):
                yield b"x" * 65536
            yield b"\n[INFO]  T E S T S\n"

    seen: list[str] = []

    class Clock(PhaseClock):
        def feed(self, line: str) -> None:
            seen.append(line)
            super().feed(line)

    step = BuildStep("compile+test", ("mvn",), 300, phase_marker="T E S T S", phase_timeout=900)
    clock = Clock(step, started=0.0)
    docker_module._follow(Container(), clock)
    assert clock.switched and max(len(line) for line in seen) <= MAX_LINE + 100


def test_a_failed_image_build_is_tried_once_more(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    attempts: list[int] = []

    def flaky_build(*args: object, **kwargs: object) -> str:
        attempts.append(1)
        if len(attempts) == 1:
            raise HarnessError("debootstrap: the mirror reset the connection")
        return "built"

    monkeypatch.setattr(docker_image, "image_present", lambda client, tag: False)
    monkeypatch.setattr(docker_image, "_build_locked", flaky_build)
    lines: list[str] = []
    assert docker_image.ensure_image(object(), progress=lines.append, work_dir=tmp_path) == "built"
    assert len(attempts) == 2 and any("trying once more" in line for line in lines)
    # a second failure is the error
    attempts.clear()
    monkeypatch.setattr(
        docker_image, "_build_locked", lambda *a, **k: (_ for _ in ()).throw(HarnessError("down"))
    )
    with pytest.raises(HarnessError, match="down"):
        docker_image.ensure_image(object(), work_dir=tmp_path)


def test_a_head_holds_links_to_what_the_poms_name_by_local_repository_path(tmp_path: Path) -> None:
    # javaparser's argLine: -javaagent:'${settings.localRepository}/net/bytebuddy/...jar'; the
    # offline step's head is what settings.localRepository names, so the jar must be found there
    workspace, maven_repo = tmp_path / "ws", tmp_path / "m2"
    (workspace / "core").mkdir(parents=True)
    (workspace / "core" / "pom.xml").write_text(
        "<project><build><plugins><plugin><configuration><argLine>-javaagent:'${settings.localRepository}"
        "/net/bytebuddy/byte-buddy-agent/${bb.version}/byte-buddy-agent-${bb.version}.jar'</argLine>"
        "</configuration></plugin></plugins></build></project>",
        encoding="utf-8",
    )
    jar = maven_repo / "net/bytebuddy/byte-buddy-agent/1.14.0/byte-buddy-agent-1.14.0.jar"
    jar.parent.mkdir(parents=True)
    jar.write_bytes(b"jar")
    (jar.parent / "_remote.repositories").write_text("", encoding="utf-8")
    head = named_head(workspace, maven_repo)
    assert head is not None
    try:
        link = head / "net/bytebuddy/byte-buddy-agent/1.14.0/byte-buddy-agent-1.14.0.jar"
        # to the repository as the container sees it; the resolver's records stay out
        assert (
            os.readlink(link) == f"{CONTAINER_MAVEN_REPO}/net/bytebuddy/byte-buddy-agent/1.14.0/{link.name}"
        )
        assert not (link.parent / "_remote.repositories").exists()
        executor = DockerExecutor("img:tag", client=_NoClient(), run_id="r1")
        offline = BuildStep(name="test", argv=("mvn", "-o", "test"), timeout=60)
        mounts = executor.container_spec(workspace, offline, maven_repo, head=head)["mounts"]
        assert {m["Target"]: (m["Source"], m["ReadOnly"]) for m in mounts}[CONTAINER_MAVEN_HEAD] == (
            str(head),
            False,
        )
        # an online step writes the repository itself: no head
        online = dataclasses.replace(offline, network=True)
        mounts = executor.container_spec(workspace, online, maven_repo, head=head)["mounts"]
        assert CONTAINER_MAVEN_HEAD not in {m["Target"] for m in mounts}
    finally:
        shutil.rmtree(head)
    # nothing named, or named but absent from the repository: the empty head on /tmp as before
    (workspace / "core" / "pom.xml").write_text("<project/>", encoding="utf-8")
    assert named_head(workspace, maven_repo) is None
