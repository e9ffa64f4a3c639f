"""The warm Maven JVM inside the Docker sandbox: one long-lived server container per worker.

:class:`WarmDockerExecutor` is the Docker executor (``--tebench-warm-jvm=on``, the default) that
runs the Maven steps the build layer marked warm (:func:`~pytest_tebench.run.maven.warm.refusal`)
in a container whose command is the warm Maven server of :mod:`~pytest_tebench.run.maven.warm`,
spoken to over the container's attached input and output (Docker's multiplexed stream,
:class:`FrameReader`); every other step runs in a fresh container as before. The server
container is made by the very :meth:`~pytest_tebench.run.docker.DockerExecutor.container_spec` of
a cold step (image, non-root user, read-only root, tmpfs ``/tmp`` and ``$HOME``, limits, no
capabilities, ``no-new-privileges``, init, no network, labels), with the server as its command.

A container's mounts are fixed when it starts, so each one mounts a *stage*, an empty host folder
next to the workspaces (same file system), at ``/workspace``; a build renames its workspace into
the stage (``/workspace/ws`` inside) and back afterwards, also on a timeout or an interrupt.
Isolation between builds, beyond what the server does itself (a Plexus container per build,
properties and variables put back, a left thread ends the server):

- every build has a repository head of its own (``/workspace/.head-…``, with
  :func:`~pytest_tebench.run.docker.named_head`'s links when POMs name files), removed after it;
- after each build every process in the container but init and the server is killed, and
  ``/tmp`` and ``$HOME`` are emptied (:data:`CLEAN`); what is left in the stage goes too;
- a timeout removes the container; a server that dies under a build (or cannot be cleaned after
  it) makes the step run again in a fresh container, so a warm server never decides a verdict.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import time
import uuid
from collections import deque
from collections.abc import Callable
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import docker.errors
import docker.types
from docker.utils.socket import STDERR
from docker.utils.socket import STDOUT

from pytest_tebench.errors import HarnessError
from pytest_tebench.locking import file_lock
from pytest_tebench.run import docker_image
from pytest_tebench.run.docker import CONTAINER_TOOLS
from pytest_tebench.run.docker import CONTAINER_WORKSPACE
from pytest_tebench.run.docker import DockerExecutor
from pytest_tebench.run.docker import image_jdk
from pytest_tebench.run.docker import named_head
from pytest_tebench.run.docker import path_maps
from pytest_tebench.run.docker import translate
from pytest_tebench.run.executor import WORKSPACE_PLACEHOLDER
from pytest_tebench.run.executor import BuildStep
from pytest_tebench.run.executor import PhaseClock
from pytest_tebench.run.executor import StepResult
from pytest_tebench.run.janitor import watch_this_process
from pytest_tebench.run.leftovers import owner_tag
from pytest_tebench.run.leftovers import tag_owner_gone
from pytest_tebench.run.maven import warm
from pytest_tebench.run.maven.jvm_config import jvm_config
from pytest_tebench.run.oom import CGROUP_OOM_KILLS
from pytest_tebench.run.oom import CONTAINER_OOM
from pytest_tebench.run.oom import oom_kill_count

#: A stage's name: this prefix, :func:`~pytest_tebench.run.leftovers.owner_tag`, a random part.
STAGE_PREFIX = ".tebench-stage-"
#: The workspace's name in the stage; the container sees it at ``/workspace/ws``.
STAGED = "ws"
#: The server's home (classes, ``m2.conf``) as a step tool: mounted read-only under ``/opt/tools``.
SERVER_TOOL = "warm-maven"
#: The server's execute-only ``java`` launcher, mounted beside the image's own
#: (:meth:`WarmDockerExecutor._launcher`).
SERVER_LAUNCHER = "java-tebench-warm-maven"
#: JDK the server is compiled with in a container (``--release 8``: it runs on every image JDK).
COMPILE_JDK = 17
#: Seconds the server's compile and the look-up of its pid may take.
SETUP_TIMEOUT = 300.0
#: Run after each build (``sh -c CLEAN sh <server pid>``, as the build's user): kill every
#: process but init, the server and this shell until none is left (zombies are init's to reap),
#: then empty ``/tmp`` and ``$HOME``. Exit 3: processes kept coming back. It prints the
#: container cgroup's OOM kill count first (``ContainerServer.oom_kills``: the builds at its cap).
CLEAN = (
    "\nserver=$1\n"
    + CGROUP_OOM_KILLS
    + r"""
round=0
while :; do
  left=0
  for d in /proc/[0-9]*; do
    p=${d#/proc/}
    case $p in 1|"$server"|$$) continue ;; esac
    { read -r line < "$d/stat"; } 2>/dev/null || continue
    case ${line##*) } in Z*|X*) continue ;; esac
    kill -9 "$p" 2>/dev/null
    left=1
  done
  [ "$left" = 0 ] && break
  round=$((round + 1))
  [ "$round" -ge 50 ] && exit 3
  sleep 0.1
done
rm -rf /tmp/* /tmp/.[!.]* /tmp/..?* "$HOME"/* "$HOME"/.[!.]* "$HOME"/..?* 2>/dev/null
exit 0
"""
)
#: Prints the pids of init's children but this shell: right after the start, the server alone.
CHILDREN = r"""
for d in /proc/[0-9]*; do
  p=${d#/proc/}
  [ "$p" = $$ ] && continue
  { read -r line < "$d/stat"; } 2>/dev/null || continue
  set -- ${line##*) }
  [ "$2" = 1 ] && echo "$p"
done
"""


class FrameReader:
    """Docker's multiplexed attach stream (a container without a TTY) cut into frames: an 8-byte
    header (the stream: 1 stdout, 2 stderr; three zero bytes; the payload's size, big-endian),
    then the payload. Fed the socket's chunks as they come; keeps a partial frame for the next."""

    def __init__(self) -> None:
        self.buffer = bytearray()

    def feed(self, data: bytes) -> bytes:
        """The output payloads (stdout and stderr, in order) completed by ``data``."""
        self.buffer += data
        out = bytearray()
        while len(self.buffer) >= 8:
            size = int.from_bytes(self.buffer[4:8], "big")
            if len(self.buffer) < 8 + size:
                break
            if self.buffer[0] in (STDOUT, STDERR):
                out += self.buffer[8 : 8 + size]
            del self.buffer[: 8 + size]
        return bytes(out)


class Stage:
    """A host folder mounted into a server container, lent one workspace per build.

    Made next to the workspaces, so a rename never crosses file systems; only its owner may
    write it (the container user, as root on the host, may not). :meth:`enter` renames a
    workspace in, :meth:`leave` renames it back (the very directory it lent: a build that
    replaced it gets a clear error, never a stranger's tree) and removes everything else."""

    def __init__(self, parent: Path) -> None:
        sweep_stages(parent)
        self.path = Path(tempfile.mkdtemp(prefix=f"{STAGE_PREFIX}{owner_tag()}-", dir=parent))
        self.path.chmod(0o755)
        self._lent: tuple[Path, int, int] | None = None

    @property
    def staged(self) -> Path:
        return self.path / STAGED

    def enter(self, workspace: Path) -> None:
        if self._lent is not None:
            raise HarnessError(f"the stage {self.path} already holds {self._lent[0]}")
        info = workspace.lstat()
        os.rename(workspace, self.staged)
        self._lent = (workspace, info.st_dev, info.st_ino)

    def leave(self) -> None:
        """Give the workspace back and empty the stage (whatever happened in between)."""
        if self._lent is None:
            return
        workspace, device, inode = self._lent
        self._lent = None
        try:
            info = self.staged.lstat()
            if (info.st_dev, info.st_ino) != (device, inode):
                raise HarnessError(
                    f"the build replaced its workspace /workspace/{STAGED}; {workspace} is lost"
                )
            os.rename(self.staged, workspace)
        except FileNotFoundError as exc:
            raise HarnessError(f"the build moved its workspace /workspace/{STAGED} away") from exc
        finally:
            self.clear()

    def clear(self) -> None:
        for entry in os.scandir(self.path):
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path, ignore_errors=True)
            else:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(entry.path)

    def remove(self) -> None:
        if self._lent is None:
            shutil.rmtree(self.path, ignore_errors=True)


def sweep_stages(parent: Path) -> None:
    """Remove the stages in ``parent`` of harness processes that are gone (killed mid-build, a
    workspace may still be in one; its item was never reported)."""
    with contextlib.suppress(OSError):
        for entry in os.scandir(parent):
            tag = entry.name[len(STAGE_PREFIX) :].rsplit("-", 1)[0]
            if (
                entry.name.startswith(STAGE_PREFIX)
                and entry.is_dir(follow_symlinks=False)
                and tag_owner_gone(tag)
            ):
                shutil.rmtree(entry.path, ignore_errors=True)


class ContainerServer(warm.WarmServer):
    """A server running as a sandbox container's command, fed over its attach socket."""

    def __init__(self, executor: DockerExecutor, spec: Mapping[str, Any], stage: Stage) -> None:
        self.executor = executor
        self.stage = stage
        self.user = str(spec["user"])
        self.pid = ""
        self.stopped = False
        #: OOM kills at this container's memory cap so far (its cgroup's count, read after each build)
        self.oom_kills = 0
        self.attached: Any = None
        self.socket: Any = None
        watch_this_process()
        try:
            self.container = executor.client.containers.create(**spec)
        except docker.errors.DockerException as exc:
            raise HarnessError(f"cannot create the warm Maven container: {exc}") from exc
        executor._live[self.container.id] = self.container
        try:
            # attached before the start, so nothing the server says is lost
            self.attached = self.container.attach_socket(
                params={"stdin": 1, "stdout": 1, "stderr": 1, "stream": 1}
            )
            self.socket = getattr(self.attached, "_sock", self.attached)
            # the client's timeout (60 s) would end a quiet build's stream: wait as long as it runs
            self.socket.settimeout(None)
            self.container.start()
        except docker.errors.DockerException as exc:
            self.stop()
            raise HarnessError(f"cannot start the warm Maven container: {exc}") from exc
        frames = FrameReader()

        def read() -> bytes:
            while True:
                try:
                    chunk = self.socket.recv(warm.CHUNK)
                except OSError:
                    chunk = b""
                if not chunk:
                    return b""
                data = frames.feed(chunk)
                if data:
                    return data

        super().__init__(read)

    @property
    def alive(self) -> bool:
        return not self.stopped and self.reader.is_alive()

    def send(self, data: bytes) -> None:
        self.socket.sendall(data)

    def find_pid(self) -> bool:
        """The server's pid in the container (init's only child before any build)."""
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and self.reader.is_alive():
            code, output = self._exec(CHILDREN)
            pids = output.split()
            if code == 0 and len(pids) == 1:
                self.pid = pids[0]
                return True
            time.sleep(0.1)
        return False

    def clear_leftovers(self) -> bool:
        if not self.pid:
            return False
        code, output = self._exec(CLEAN, self.pid)
        # the container's own count of OOM kills, read first: the builds so far reached its cap
        # this many times (its processes are not ours to judge by the machine's count alone)
        self.oom_kills = oom_kill_count(output) or self.oom_kills
        return code == 0

    def _exec(self, script: str, *args: str) -> tuple[int, str]:
        try:
            done = self.container.exec_run(["sh", "-c", script, "sh", *args], user=self.user)
        except docker.errors.DockerException:
            return -1, ""
        return int(done.exit_code if done.exit_code is not None else -1), done.output.decode(errors="replace")

    def stop(self, *, graceful: bool = True) -> None:
        """Remove the container (nothing of a build may outlive it) and the stage."""
        if not self.stopped:
            self.stopped = True
            for stream in (self.attached, self.socket):  # the socket closes with its last user
                with contextlib.suppress(OSError, AttributeError):
                    stream.close()
            self.executor._remove(self.container)
        self.stage.remove()


class WarmDockerExecutor(DockerExecutor):
    """The Docker executor with a warm Maven server per worker, JDK and Maven (see the module)."""

    def __init__(self, image: str | None = None, **options: Any) -> None:
        super().__init__(image, **options)
        self.pool: warm.WarmPool[tuple[Any, ...], ContainerServer] = warm.WarmPool()
        #: Keys whose new server ended in its first build without a word: their steps run cold
        #: from then on, so a server that cannot start here costs one start, not one per step.
        self.broken: set[tuple[Any, ...]] = set()

    def refusal(self, workspace: Path, step: BuildStep, ready: bool) -> str:
        """Why ``step`` runs in a fresh container ("" when it may run warm)."""
        if not ready:
            return "the caller asked for the container itself"
        why = warm.refusal(step, workspace)
        if why:
            return why
        if step.test_network:
            return "the tests may use the network (--tebench-network)"
        if Path(os.path.abspath(workspace)).is_symlink():
            return "the workspace is a symbolic link"
        return ""

    def run(
        self,
        workspace: Path,
        step: BuildStep,
        *,
        maven_repo: Path,
        overrides: Mapping[str, Any] | None = None,
        inspect: Callable[[Any], None] | None = None,
    ) -> StepResult:
        why = self.refusal(workspace, step, not overrides and inspect is None) if step.argv else "no command"
        if not why:
            done, why = self._run_warm(
                Path(os.path.abspath(workspace)), step, Path(os.path.abspath(maven_repo))
            )
            if done is not None:
                return done
        result = super().run(workspace, step, maven_repo=maven_repo, overrides=overrides, inspect=inspect)
        result.extra["warm_jvm"] = f"off: {why}" if why else "off"
        return result

    def _run_warm(self, workspace: Path, step: BuildStep, maven_repo: Path) -> tuple[StepResult | None, str]:
        """``step`` in a warm server container; None and why when the server failed under it."""
        if not workspace.is_dir():
            raise HarnessError(f"workspace {workspace} is not a directory")
        maven_repo.mkdir(parents=True, exist_ok=True)
        image_id = self._ensure_image()
        jdk = image_jdk(step.java_version, self._recipe.jdks)
        maven_home = Path(dict(step.tools)["maven"])
        tail: deque[str] = deque(maxlen=self.tail_lines)
        started = time.monotonic()
        clock = PhaseClock(step, started)
        # a server per project JVM options (.mvn/jvm.config): it serves only their builds
        project, _ = jvm_config(workspace)
        key = (jdk, str(maven_home), str(maven_repo), str(workspace.parent), project)
        if key in self.broken:
            return None, "a warm server for this JDK and Maven ended before it ran a build"
        server, fresh = self.pool.acquire(
            key, lambda: self._start(jdk, step, maven_repo, workspace.parent, project)
        )
        nonce = uuid.uuid4().hex
        keep, code, outcome = False, None, "died"
        restore: Callable[[], None] = lambda: None  # noqa: E731
        try:
            argv, text, head = self.request(workspace, step, maven_repo, server.stage, nonce)
            # JaCoCo's report, not a Maven build: no mvn to name, nothing Maven's core keeps
            is_build = warm.jacoco_command(argv) is None
            restore = self._hand_over(workspace, maven_repo, step, head)
            server.stage.enter(workspace)
            try:
                oom_kills = server.oom_kills
                code, outcome = server.build(text, nonce, clock, tail.append, counted=is_build)
                # a container that cannot be cleaned goes, as a cold step's always does
                keep = outcome == "" and server.clear_leftovers()
                capped = server.oom_kills > oom_kills
            finally:
                if not keep:
                    server.stop(graceful=False)  # nothing of this build may go on running
                server.stage.leave()
        finally:
            restore()
            self.pool.release(key, server, keep=keep)
        if outcome == "died":
            if fresh and not tail:
                # it never got to run Maven (a JVM that cannot start here), not a build's System.exit
                self.broken.add(key)
            return None, "the warm server ended during the build (run again in a fresh container)"
        if outcome == "timeout":
            tail.append(f"\n{clock.killed_message()}\n")
        home = docker_image.java_home(jdk)
        return StepResult(
            name=step.name,
            argv=argv,
            exit_code=code,
            timed_out=outcome == "timeout",
            duration=time.monotonic() - started,
            output="".join(tail),
            runtime=f"docker {self.image} ({image_id[:19]}) JAVA_HOME={home}",
            extra={
                "executor": self.name,
                "user": server.user,
                "network": "none",
                **({"maven": argv[0]} if is_build else {}),
                "container": str(server.container.name),
                "warm_jvm": "started" if fresh else "reused",
                **({CONTAINER_OOM: "true"} if capped else {}),
            },
        ), ""

    def request(
        self, workspace: Path, step: BuildStep, maven_repo: Path, stage: Stage, nonce: str
    ) -> tuple[tuple[str, ...], str, Path]:
        """The build's command as the container runs it, the server's request for it, and the
        build's own repository head: a new folder in ``stage`` (with :func:`named_head`'s links)."""
        at = f"{CONTAINER_WORKSPACE}/{STAGED}"
        head = named_head(workspace, maven_repo, parent=stage.path)
        if head is None:
            head = Path(tempfile.mkdtemp(prefix=".head-", dir=stage.path))
        argv, env = self.step_command(
            workspace, step, maven_repo, at=at, head=f"{CONTAINER_WORKSPACE}/{head.name}"
        )
        maps = path_maps(workspace, maven_repo, at=at)
        # the request names the workspace (CWD, the project's base directory) as the host has it
        tool = warm.jacoco_command(argv)
        if tool is not None:
            text = warm.jacoco_request(nonce, workspace, *tool)
        else:
            text = warm.request(nonce, workspace, argv[1:], dict(env), top=workspace)
        return argv, translate(text, maps), head

    def _start(
        self, jdk: int, step: BuildStep, maven_repo: Path, parent: Path, project: tuple[str, ...] = ()
    ) -> ContainerServer:
        """A server container for ``step``'s JDK and Maven, its stage in ``parent``; ``project``:
        the JVM options of the project's ``.mvn/jvm.config`` (``jvm_config.jvm_config``)."""
        maven_home = Path(dict(step.tools)["maven"])
        compile_server = self._compile(maven_repo)
        home = warm.server_home(maven_home, maven_home.parent, f"docker-{self.image}", compile_server)
        launcher = self._launcher(jdk, maven_home.parent, maven_repo)
        stage = Stage(parent)
        try:
            spec = self.server_spec(jdk, step, maven_repo, stage, home, launcher=launcher, project=project)
            server = ContainerServer(self, spec, stage)
        except BaseException:
            stage.remove()
            raise
        # without its pid nothing can be cleaned after a build: the container then goes after one
        server.find_pid()
        return server

    def server_spec(
        self,
        jdk: int,
        step: BuildStep,
        maven_repo: Path,
        stage: Stage,
        home: Path,
        *,
        launcher: tuple[Path, str] | None = None,
        project: tuple[str, ...] = (),
    ) -> dict[str, Any]:
        """The server container: a cold step's sandbox (:meth:`container_spec`, the stage as its
        workspace) whose command is the server (its ``home`` mounted read-only), input open;
        ``launcher``: the execute-only ``java`` (:meth:`_launcher`) and where it is mounted."""
        maven_home = Path(dict(step.tools)["maven"])
        command = warm.server_command(
            launcher[1] if launcher else f"{docker_image.java_home(jdk)}/bin/java",
            f"{CONTAINER_TOOLS}/maven",
            warm.boot_jar(maven_home),
            f"{CONTAINER_TOOLS}/{SERVER_TOOL}",
            jdk,
            project=project,
        )
        server_step = BuildStep(
            name="warm-maven",
            argv=tuple(command),
            timeout=step.timeout,
            java_version=jdk,
            tools=(("maven", str(maven_home)), (SERVER_TOOL, str(home))),
        )
        spec = self.container_spec(stage.path, server_step, maven_repo)
        spec["stdin_open"] = True
        if launcher is not None:
            spec["mounts"].append(
                docker.types.Mount(launcher[1], str(launcher[0]), type="bind", read_only=True)
            )
        return spec

    def _launcher(self, jdk: int, cache_dir: Path, maven_repo: Path) -> tuple[Path, str]:
        """An execute-only copy of the image's ``java`` launcher of ``jdk`` and where it is
        mounted: beside the original, so the JVM finds its JDK from its own path.

        A process whose program its user cannot read is not dumpable: no other process of that
        user (a test JVM) may ptrace it or open its ``/proc/<pid>/mem``, which would otherwise
        let one build's tests change the server and through it the builds after theirs."""
        home = cache_dir / f"warm-maven-java-{self._ensure_image().split(':')[-1][:16]}-{jdk}"
        if not (home / "java").is_file():
            cache_dir.mkdir(parents=True, exist_ok=True)
            with file_lock(cache_dir / f".{home.name}.lock"):
                if not (home / "java").is_file():
                    self._copy_launcher(jdk, cache_dir, home, maven_repo)
        where = (home / "path").read_text(encoding="utf-8").strip()
        return home / "java", f"{os.path.dirname(where)}/{SERVER_LAUNCHER}"

    def _copy_launcher(self, jdk: int, cache_dir: Path, home: Path, maven_repo: Path) -> None:
        scratch = Path(tempfile.mkdtemp(prefix=".warm-maven-java-", dir=cache_dir))
        try:
            ws = WORKSPACE_PLACEHOLDER
            copy = f'p=$(readlink -f "$JAVA_HOME/bin/java") && cp "$p" {ws}/java && echo "$p" >{ws}/path'
            step = BuildStep(
                name="warm-maven-java", argv=("sh", "-c", copy), timeout=SETUP_TIMEOUT, java_version=jdk
            )
            done = DockerExecutor.run(self, scratch, step, maven_repo=maven_repo)
            if not done.ok or not (scratch / "java").is_file():
                raise HarnessError(f"cannot copy the image's java launcher: {done.output.strip()[-2000:]}")
            (scratch / "java").chmod(0o111)
            os.replace(scratch, home)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)

    def _compile(self, maven_repo: Path) -> warm.Compile:
        """Compile the server in a fresh sandbox container (the host may have no JDK)."""

        def compile_server(sources: list[Path], classpath: list[Path], out: Path) -> None:
            root = sources[0].parent
            maven_home = classpath[-1].parents[1]
            jars = ":".join(f"{{tool:maven}}/{jar.relative_to(maven_home)}" for jar in classpath)
            step = BuildStep(
                name="warm-maven-compile",
                argv=(
                    "javac", "-nowarn", "--release", "8", "-encoding", "UTF-8", "-cp", jars,
                    "-d", f"{{workspace}}/{out.relative_to(root)}",
                    *(f"{{workspace}}/{source.name}" for source in sources),
                ),
                timeout=SETUP_TIMEOUT,
                java_version=COMPILE_JDK,
                tools=(("maven", str(maven_home)),),
            )  # fmt: skip
            done = DockerExecutor.run(self, root, step, maven_repo=maven_repo)
            if not done.ok:
                raise HarnessError(f"cannot compile the warm Maven server: {done.output.strip()[-2000:]}")

        return compile_server

    def close(self) -> None:
        """Stop the warm servers (their containers and stages), then what :class:`DockerExecutor` closes."""
        self.pool.close()
        super().close()
