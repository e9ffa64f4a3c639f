"""Run build steps in throwaway containers: the sandbox for untrusted predictions.

Every :class:`~pytest_tebench.run.executor.BuildStep` gets a fresh container from the image of
:mod:`pytest_tebench.run.docker_image`, which is always removed afterwards. Inside it:

* the workspace is bind-mounted at ``/workspace``, the only writable host path;
* the Maven repository is mounted at ``/maven-repo``: read-write for warm-up steps
  (``step.network``), read-only otherwise, with a writable head on ``/tmp`` that Maven 3.9
  chains in front of it (``-Dmaven.repo.local=/tmp/maven-repo
  -Dmaven.repo.local.tail=/maven-repo``);
* no network unless ``step.network`` (or ``step.test_network``: the tests of an offline build,
  ``--tebench-network``; the repository stays read-only); a non-root user; no capabilities;
  ``no-new-privileges``;
* a read-only root file system, size-limited tmpfs for ``/tmp`` and ``$HOME``, memory, CPU,
  process-count and file-size limits.

Steps are written for either executor (``run/maven/steps.py``). Their ``{workspace}`` and
``{maven_repo}`` placeholders expand to the mount points, and host paths of the workspace and
of the Maven repository that a step spells out in ``argv`` or env values (a JaCoCo
``-javaagent:`` option, ``-f /host/ws/pom.xml``) are rewritten to them by :func:`translate`.
For Maven commands the executor alone decides the local repository (:func:`with_local_repo`)
and offers the image's JDKs as toolchains (:mod:`~pytest_tebench.run.maven.toolchains`),
and a step's tools (the Maven distribution the build layer resolved,
:func:`~pytest_tebench.run.maven.dist.maven_tools`) are mounted read-only, so both executors run
the very same Maven.

With ``--tebench-warm-jvm=on`` the Maven steps the build layer marked run in a long-lived
server container made from the same :meth:`DockerExecutor.container_spec` instead
(:mod:`~pytest_tebench.run.docker_warm`).

Every container carries labels naming its run, host and owning process, so
:func:`~pytest_tebench.run.leftovers.cleanup_stale` can remove what a killed harness left behind:
the process's watcher (:mod:`~pytest_tebench.run.janitor`) runs it as soon as the process dies,
and every run's start runs it again.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import docker
import docker.errors
import docker.types

from pytest_tebench.errors import HarnessError
from pytest_tebench.run import docker_image
from pytest_tebench.run.executor import BuildStep
from pytest_tebench.run.executor import LineSplitter
from pytest_tebench.run.executor import PhaseClock
from pytest_tebench.run.executor import StepResult
from pytest_tebench.run.executor import expand_placeholders
from pytest_tebench.run.janitor import watch_this_process
from pytest_tebench.run.leftovers import LABEL_RUN
from pytest_tebench.run.leftovers import cleanup_stale
from pytest_tebench.run.leftovers import owner_labels
from pytest_tebench.run.leftovers import remove_container
from pytest_tebench.run.local import DEFAULT_TAIL_LINES
from pytest_tebench.run.maven import local_repo
from pytest_tebench.run.maven import toolchains
from pytest_tebench.run.maven.toolchains import is_maven
from pytest_tebench.run.maven.warm import cold_argv
from pytest_tebench.run.oom import CONTAINER_OOM

#: Mount points inside the container.
CONTAINER_WORKSPACE = docker_image.CONTAINER_WORKSPACE
CONTAINER_MAVEN_REPO = "/maven-repo"
#: Writable head in front of the read-only repository (on the /tmp tmpfs).
CONTAINER_MAVEN_HEAD = "/tmp/maven-repo"
#: Where a step's tools (``BuildStep.tools``: a Maven distribution) are mounted, read-only.
CONTAINER_TOOLS = "/opt/tools"

#: Environment keys a step may not set: the executor owns the JDK choice and the search path
#: (a host PATH means nothing inside the image).
_OWNED_ENV = frozenset({"JAVA_HOME", "PATH"})
_REPO_PROPERTIES = ("maven.repo.local=", "maven.repo.local.tail=")


# --------------------------------------------------------------------------- path translation


@dataclass(frozen=True)
class PathMap:
    """A host directory and where the same directory appears inside the container."""

    host: str
    container: str


def path_maps(workspace: Path, maven_repo: Path, *, at: str = CONTAINER_WORKSPACE) -> tuple[PathMap, ...]:
    """The maps for one step: each host path as given and as resolved (symlinks followed);
    ``at``: where the container sees the workspace."""
    maps: dict[str, str] = {}
    for host, container in ((maven_repo, CONTAINER_MAVEN_REPO), (workspace, at)):
        for form in (os.path.abspath(host), str(Path(host).resolve())):
            maps.setdefault(form.rstrip("/") or "/", container)
    return tuple(PathMap(host, container) for host, container in maps.items())


def _translation_pattern(maps: Sequence[PathMap]) -> re.Pattern[str]:
    for entry in maps:
        if not entry.host.startswith("/") or entry.host == "/":
            raise ValueError(f"host path must be absolute and not '/': {entry.host!r}")
    # Longest first, so a repository inside the workspace wins over the workspace.
    hosts = sorted({entry.host for entry in maps}, key=len, reverse=True)
    alternation = "|".join(re.escape(host) for host in hosts)
    # A prefix counts only at a path boundary: at the start, after a separator such as `=`,
    # `:` or a space, or after `://` (file URLs); and followed by `/` or the end of the path.
    # So `/work/ws` is not rewritten inside `/work/ws2` or `/other/work/ws`.
    before = r"(?:^|(?<=[^\w.\-+@~/])|(?<=://))"
    after = r"(?![\w.\-+@~])"
    return re.compile(f"{before}(?P<host>{alternation}){after}")


def translate(value: str, maps: Sequence[PathMap]) -> str:
    """Rewrite every host path of ``maps`` in ``value`` to its container path.

    A plain prefix replacement on path boundaries: ``-Dx=/host/ws/pom.xml`` becomes
    ``-Dx=/workspace/pom.xml``; ``-javaagent:/root/.m2/repository/a.jar=destfile=/host/ws/t.exec``
    has both paths rewritten. Text that merely contains a host path as a substring of a longer
    name is left alone. Pure: no file system access.
    """
    if not maps or not value:
        return value
    by_host = {entry.host: entry.container for entry in maps}
    return _translation_pattern(maps).sub(lambda match: by_host[match.group("host")], value)


def translate_step(
    step: BuildStep, maps: Sequence[PathMap]
) -> tuple[tuple[str, ...], tuple[tuple[str, str], ...]]:
    """The step's argv and env with host paths rewritten; JAVA_HOME and PATH are dropped."""
    argv = tuple(translate(arg, maps) for arg in step.argv)
    env = tuple((key, translate(value, maps)) for key, value in step.env if key not in _OWNED_ENV)
    return argv, env


def with_local_repo(argv: Sequence[str], repo: str, tail: str | None = None) -> tuple[str, ...]:
    """Point a Maven command at ``repo`` (and chain ``tail`` behind it, read-only).

    Any local-repository property the step set (in either ``-Dk=v`` or ``-D k=v`` form) is
    replaced, because the executor decides where the repository is mounted and whether it is
    writable. Other commands are returned unchanged.
    """
    if not is_maven(argv):
        return tuple(argv)
    kept: list[str] = []
    skip_next = False
    for index, arg in enumerate(argv[1:], start=1):
        if skip_next:
            skip_next = False
            continue
        if arg.startswith("-D") and arg[2:].startswith(_REPO_PROPERTIES):
            continue
        if arg == "-D" and index + 1 < len(argv) and argv[index + 1].startswith(_REPO_PROPERTIES):
            skip_next = True
            continue
        kept.append(arg)
    ours = [f"-Dmaven.repo.local={repo}"]
    if tail is not None:
        ours.append(f"-Dmaven.repo.local.tail={tail}")
    return (argv[0], *ours, *kept)


def _at_least(version: str, minimum: tuple[int, ...]) -> bool:
    parts = tuple(int(part) for part in re.findall(r"\d+", version)[: len(minimum)])
    return parts >= minimum


def image_jdk(requested: int | None, available: Iterable[int]) -> int:
    """The image's JDK a step runs with: exactly the one it names (the Java build layer chose it
    from ``java_versions()``), or the image's first one for a step that names none."""
    have = sorted(available)
    if requested is None:
        return have[0]
    if requested not in have:
        raise HarnessError(f"the Docker image has no JDK {requested} (it has {have})")
    return requested


# --------------------------------------------------------------------------- ownership


def named_head(workspace: Path, maven_repo: Path, *, parent: Path | None = None) -> Path | None:
    """A host folder for an offline step's repository head holding links to the files the
    workspace's POMs name by local-repository path (``-javaagent:${settings.localRepository}/…``:
    javaparser's byte-buddy agent, Mockito's), or None when no POM names one.

    ``settings.localRepository`` is the head, and the empty head on ``/tmp`` lacks what Maven
    finds in the read-only repository behind it: every test JVM would die at its ``-javaagent``.
    The links point at the repository's container path; the folder is made in ``parent`` (the
    system's temporary directory by default) and the caller removes it."""
    folders = local_repo.named_artifact_dirs(workspace)
    if not folders:
        return None
    head = Path(tempfile.mkdtemp(prefix="tebench-head-", dir=parent))
    if not local_repo.link_named_files(head, folders, [(maven_repo, CONTAINER_MAVEN_REPO)]):
        shutil.rmtree(head, ignore_errors=True)
        return None
    return head


def _chown_tree(root: Path, uid: int, gid: int) -> None:
    """``chown -R uid:gid root`` without following symlinks; skips entries already right."""

    def fix(path: str) -> None:
        try:
            info = os.lstat(path)
            if info.st_uid != uid or info.st_gid != gid:
                os.lchown(path, uid, gid)
        except FileNotFoundError:
            pass

    fix(str(root))
    for directory, dirs, files in os.walk(root):
        for name in (*dirs, *files):
            fix(os.path.join(directory, name))


def _follow(container: Any, clock: PhaseClock) -> None:
    """Feed the container's output to the clock until the container is gone (own thread)."""
    with contextlib.suppress(Exception):  # the stream simply ends when the container is removed
        splitter = LineSplitter()  # bounded: one endless line must not fill the harness's memory
        for chunk in container.logs(stream=True, follow=True):
            for line in splitter.feed(chunk.decode("utf-8", errors="replace")):
                clock.feed(line)


# --------------------------------------------------------------------------- executor


class DockerExecutor:
    """Runs each step in a fresh, locked-down container; see the module docstring."""

    name = "docker"

    def __init__(
        self,
        image: str | None = None,
        *,
        client: Any = None,
        memory: str = "4g",
        cpus: float = 2.0,
        pids_limit: int = 512,
        tmp_size: str = "1g",
        home_size: str = "256m",
        file_size_limit: int = 2 * 1024**3,
        tail_lines: int = DEFAULT_TAIL_LINES,
        run_id: str | None = None,
        build_missing: bool = False,
        progress: docker_image.Progress | None = None,
        recipe: docker_image.Recipe = docker_image.DEFAULT_RECIPE,
    ) -> None:
        """``image`` defaults to the current recipe's tag. A missing image is a
        :class:`HarnessError` unless ``build_missing`` (then it is built on first use)."""
        self._own_client = client is None
        self._client = client if client is not None else docker_image.connect()
        self.image = image or docker_image.image_tag(recipe)
        self._recipe = recipe
        self._image_id = ""
        self.memory = memory
        self.cpus = cpus
        self.pids_limit = pids_limit
        self.tmp_size = tmp_size
        self.home_size = home_size
        self.file_size_limit = file_size_limit
        self.tail_lines = tail_lines
        self.run_id = run_id or uuid.uuid4().hex[:12]
        self._build_missing = build_missing
        self._progress = progress
        self._live: dict[str, Any] = {}

    @property
    def client(self) -> Any:
        return self._client

    def _ensure_image(self) -> str:
        if self._image_id:
            return self._image_id
        if not docker_image.image_present(self._client, self.image):
            if not (self._build_missing and self.image == docker_image.image_tag(self._recipe)):
                raise HarnessError(
                    f"Docker image {self.image} is missing; build it with `tebench image build`"
                )
            docker_image.ensure_image(self._client, self._recipe, progress=self._progress or (lambda _: None))
        try:
            self._image_id = str(self._client.images.get(self.image).id)
        except docker.errors.DockerException as exc:
            raise HarnessError(f"cannot inspect image {self.image}: {exc}") from exc
        return self._image_id

    def _user(self) -> tuple[int, int]:
        """Who the step runs as: the host user, or the image's user when the host user is root."""
        if os.geteuid() == 0:
            return self._recipe.uid, self._recipe.uid
        return os.geteuid(), os.getegid()

    @staticmethod
    def _tool_mounts(step: BuildStep) -> tuple[dict[str, str], list[Any]]:
        """A step's tools (a Maven distribution the build layer resolved), mounted read-only under
        ``/opt/tools``: where they are in the container, and the mounts."""
        where: dict[str, str] = {}
        mounts: list[Any] = []
        for name, host_path in step.tools:
            if name == "maven" and not _at_least(Path(host_path).name, (3, 9)):
                # Without Maven 3.9's `maven.repo.local.tail` the repository would have to be writable.
                raise HarnessError(
                    f"step {step.name} brings {Path(host_path).name}; the Docker executor needs >= 3.9"
                )
            where[name] = f"{CONTAINER_TOOLS}/{name}"
            mounts.append(docker.types.Mount(where[name], host_path, type="bind", read_only=True))
        return where, mounts

    def step_command(
        self,
        workspace: Path,
        step: BuildStep,
        maven_repo: Path,
        *,
        at: str = CONTAINER_WORKSPACE,
        head: str = CONTAINER_MAVEN_HEAD,
    ) -> tuple[tuple[str, ...], tuple[tuple[str, str], ...]]:
        """The step's argv and variables as the container runs them: placeholders expanded, host
        paths translated (the workspace seen ``at``), the executor's local repository (an offline
        step's writable ``head`` before the read-only repository) and the image's toolchains."""
        tools, _ = self._tool_mounts(step)
        step = expand_placeholders(step, workspace=at, maven_repo=CONTAINER_MAVEN_REPO, tools=tools)
        argv, step_env = translate_step(step, path_maps(workspace, maven_repo, at=at))
        argv = with_local_repo(
            argv,
            CONTAINER_MAVEN_REPO if step.network else head,
            None if step.network else CONTAINER_MAVEN_REPO,
        )
        if not step.image:
            # the image's JDKs, offered to plugins' jdkToolchain and maven-toolchains-plugin
            homes = {v: docker_image.java_home(v) for v in self._recipe.jdks}
            offered = toolchains.offer(maven_repo, homes, step.java_version)
            argv = toolchains.with_toolchains(argv, f"{CONTAINER_MAVEN_REPO}/{offered}")
        return argv, step_env

    def container_spec(
        self, workspace: Path, step: BuildStep, maven_repo: Path, *, head: Path | None = None
    ) -> dict[str, Any]:
        """Keyword arguments for ``containers.create``: everything the sandbox consists of.
        ``head``: a host folder mounted as the writable head of an offline step's repository
        (:func:`named_head`), instead of the empty one on ``/tmp``."""
        _, tool_mounts = self._tool_mounts(step)
        argv, step_env = self.step_command(workspace, step, maven_repo)
        if is_maven(argv):
            # a cold container: the warm server's switches would only reach the tests
            argv = cold_argv(argv)
        writable_repo = step.network
        mounts = [
            docker.types.Mount(CONTAINER_WORKSPACE, str(workspace), type="bind", read_only=False),
            docker.types.Mount(
                CONTAINER_MAVEN_REPO, str(maven_repo), type="bind", read_only=not writable_repo
            ),
        ]
        if head is not None and not writable_repo:
            mounts.append(docker.types.Mount(CONTAINER_MAVEN_HEAD, str(head), type="bind", read_only=False))
        mounts += tool_mounts
        uid, gid = self._user()
        if step.image:
            # a step's own image keeps its own ENV (PATH, VIRTUAL_ENV); no JDK to choose
            env = {**dict(step_env), "HOME": docker_image.CONTAINER_HOME}
        else:
            home = docker_image.java_home(image_jdk(step.java_version, self._recipe.jdks))
            env = {
                **dict(step_env),
                "JAVA_HOME": home,
                "PATH": f"{home}/bin:{docker_image.BASE_PATH}",
                "HOME": docker_image.CONTAINER_HOME,
                # As on the host: no rc file may override the JAVA_HOME chosen here.
                "MAVEN_SKIP_RC": "true",
            }
        return {
            "image": step.image or self.image,
            "command": list(argv),
            "environment": env,
            "working_dir": CONTAINER_WORKSPACE,
            "user": f"{uid}:{gid}",
            "network_mode": "bridge" if step.network or step.test_network else "none",
            "mounts": mounts,
            # The image itself is read-only; scratch space is RAM-backed and capped.
            "read_only": True,
            "tmpfs": {
                "/tmp": f"rw,exec,nosuid,nodev,size={self.tmp_size},mode=1777",
                docker_image.CONTAINER_HOME: (
                    f"rw,exec,nosuid,nodev,size={self.home_size},uid={uid},gid={gid},mode=0700"
                ),
            },
            "mem_limit": self.memory,
            "memswap_limit": self.memory,
            "nano_cpus": int(self.cpus * 1e9),
            "pids_limit": self.pids_limit,
            # RLIMIT_FSIZE: no single file (a runaway log, `dd`) may exceed this, even in /workspace.
            "ulimits": [
                docker.types.Ulimit(name="fsize", soft=self.file_size_limit, hard=self.file_size_limit)
            ],
            "cap_drop": ["ALL"],
            "security_opt": ["no-new-privileges"],
            "init": True,
            "labels": owner_labels(self.run_id, step.name),
            # Bounded on the engine's disk too: only the tail of the output is reported anyway.
            "log_config": docker.types.LogConfig(
                type="json-file", config={"max-size": "16m", "max-file": "1"}
            ),
            "detach": True,
        }

    def run(
        self,
        workspace: Path,
        step: BuildStep,
        *,
        maven_repo: Path,
        overrides: Mapping[str, Any] | None = None,
        inspect: Callable[[Any], None] | None = None,
    ) -> StepResult:
        """Run ``step`` in a new container; see :class:`~pytest_tebench.run.executor.Executor`.

        ``overrides`` replace keys of :meth:`container_spec` for images that cannot run in the
        default sandbox (SWE-bench's official images: root, a writable root file system).
        ``inspect`` is given the stopped container (not after a time-out) before it is removed:
        what the engine says it changed, or a commit of it, is the caller's to read."""
        workspace = Path(os.path.abspath(workspace))
        maven_repo = Path(os.path.abspath(maven_repo))
        if not workspace.is_dir():
            raise HarnessError(f"workspace {workspace} is not a directory")
        if not step.argv:
            raise HarnessError(f"step {step.name!r} has no command")
        maven_repo.mkdir(parents=True, exist_ok=True)
        head = None if step.image or step.network else named_head(workspace, maven_repo)
        if step.image:
            runtime = f"docker {step.image}"
            spec = self.container_spec(workspace, step, maven_repo)
        else:
            image_id = self._ensure_image()
            spec = self.container_spec(workspace, step, maven_repo, head=head)
            runtime = f"docker {self.image} ({image_id[:19]}) JAVA_HOME={spec['environment']['JAVA_HOME']}"
        spec.update(overrides or {})
        restore = self._hand_over(workspace, maven_repo, step, head)
        container: Any = None
        started = time.monotonic()
        exit_code: int | None = None
        timed_out = False
        extra: dict[str, str] = {
            "executor": self.name,
            "user": spec["user"],
            "network": spec["network_mode"],
            "maven": spec["command"][0] if is_maven(spec["command"]) else "",
        }
        try:
            watch_this_process()
            try:
                container = self._client.containers.create(**spec)
            except docker.errors.DockerException as exc:
                raise HarnessError(f"cannot create a container for step {step.name}: {exc}") from exc
            self._live[container.id] = container
            extra["container"] = str(container.name)
            started = time.monotonic()
            container.start()
            clock = PhaseClock(step, started)
            if step.phase_marker:
                threading.Thread(target=_follow, args=(container, clock), daemon=True).start()
            exit_code, timed_out = self._wait(container, step, clock)
            if timed_out:
                with contextlib.suppress(docker.errors.APIError):  # it may have exited just now
                    container.kill()
            duration = time.monotonic() - started
            if inspect is not None and not timed_out:
                inspect(container)
            container.reload()
            if container.attrs.get("State", {}).get("OOMKilled"):
                extra[CONTAINER_OOM] = "true"
            raw = container.logs(stdout=True, stderr=True, tail=self.tail_lines)
            output = raw.decode("utf-8", errors="replace")
            if timed_out:
                # the limit that fired: the test limit once Surefire started, else the step's
                output += f"\n{clock.killed_message()}\n"
        except docker.errors.DockerException as exc:
            raise HarnessError(f"Docker failed during step {step.name}: {exc}") from exc
        finally:
            # Always: on success, failure, timeout, HarnessError and KeyboardInterrupt alike.
            if container is not None:
                self._remove(container)
            restore()
            if head is not None:
                shutil.rmtree(head, ignore_errors=True)
        return StepResult(
            name=step.name,
            argv=tuple(spec["command"]),
            exit_code=None if timed_out else exit_code,
            timed_out=timed_out,
            duration=duration,
            output=output,
            runtime=runtime,
            extra=extra,
        )

    @staticmethod
    def _wait(container: Any, step: BuildStep, clock: PhaseClock) -> tuple[int | None, bool]:
        """Wait for the container in slices (the phase marker may move the deadline); return
        ``(exit code, timed out)``."""
        while True:
            remaining = clock.remaining()
            if remaining <= 0:
                return None, True
            window = min(remaining, 5.0)
            asked = time.monotonic()
            try:
                status = container.wait(timeout=window)
                return int(status.get("StatusCode", -1)), False
            except OSError as exc:
                # The SDK's wait timeout surfaces as requests' ReadTimeout/ConnectionError, both
                # OSErrors; one that comes long before the window ends is a lost engine.
                if time.monotonic() - asked < window - 1:
                    raise HarnessError(f"lost the Docker engine during step {step.name}: {exc}") from exc

    def _hand_over(self, workspace: Path, maven_repo: Path, step: BuildStep, head: Path | None = None) -> Any:
        """Make the mounts writable for the container user; return the undo for the workspace.

        As root on the host, the step runs as the image's uid, so the workspace is chowned to it
        for the step and back to its owner afterwards (host tools such as git refuse trees owned by
        someone else). A writable Maven repository is chowned and left so: it is shared by
        concurrent steps, and root on the host does not care who owns it. As a non-root host user
        the container runs as that same user and nothing changes hands.
        """
        if os.geteuid() != 0:
            return lambda: None
        uid, gid = self._user()
        if step.network:
            _chown_tree(maven_repo, uid, gid)
        if head is not None:
            _chown_tree(head, uid, gid)  # removed after the step: nobody else owns it
        info = workspace.stat()
        _chown_tree(workspace, uid, gid)

        def restore() -> None:
            _chown_tree(workspace, info.st_uid, info.st_gid)

        return restore

    def _remove(self, container: Any) -> None:
        try:
            remove_container(container)
        finally:
            self._live.pop(container.id, None)

    def toolchain(self) -> str:
        return f"docker:image={self._ensure_image()};toolchains={toolchains.ORDER}"

    def java_versions(self) -> tuple[int, ...]:
        """Feature versions of the JDKs in the image."""
        return tuple(self._recipe.jdks)

    def remove_stale(self) -> list[str]:
        """Remove containers and transient images left by dead harness processes on this host
        (:func:`~pytest_tebench.run.leftovers.cleanup_stale`)."""
        return cleanup_stale(self._client)

    def close(self) -> None:
        """Remove every container of this run still present (after an interrupt), then disconnect."""
        containers = dict(self._live)
        try:
            for container in self._client.containers.list(
                all=True, filters={"label": f"{LABEL_RUN}={self.run_id}"}
            ):
                containers.setdefault(container.id, container)
        except docker.errors.DockerException:
            pass  # the engine is gone; so are its containers, or cleanup_stale gets them next time
        for container in containers.values():
            with contextlib.suppress(HarnessError):
                self._remove(container)
        if self._own_client:
            self._client.close()
