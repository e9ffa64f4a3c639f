"""A warm Maven JVM per worker and JDK: builds run in one long-lived Maven process, not a cold ``mvn``.

A cold ``mvn`` pays, every launch, for a JVM start, loading and JIT-compiling Maven's core and
``javac`` (which runs inside Maven's JVM): on jsoup's prediction launch 18-21 s cold against
7.6-10 s warm (docs/speed.md). :class:`WarmMaven` keeps one JVM per (JDK, Maven distribution)
with Maven's ``lib/`` on its class path, started through Maven's own plexus-classworlds launcher
with an ``m2.conf`` that names our small server (``java/TebenchWarmMaven.java``, shipped as
source, compiled with the step's JDK on first use and cached by content). The server runs each
build through ``MavenCli.doMain``, exactly as ``mvn`` would with the same arguments.

Isolation, build to build (what a cold launch gives for free, kept here on purpose):

- each build has its own Plexus container and class realms (``MavenCli(world).doMain`` disposes
  every realm a build made), so plugin classes and their static fields are new for every build;
- system properties and environment variables are put back after each build; a step's variables
  (``JAVA_TOOL_OPTIONS`` with JaCoCo's agent) reach every process started with an explicit
  environment, as Surefire and maven-shared-utils start forks (a ``ProcessBuilder`` that never
  touched ``environment()`` inherits the server's own, scrubbed one); the working
  directory (``user.dir``), ``maven.multiModuleProjectDirectory`` and the variables the ``mvn``
  script exports are set per build as the script would set them;
- the tests never run in the warm JVM: only steps the build layer marked
  (``BuildStep.warm``: the effective POM's Surefire forks, never ``forkCount=0`` /
  ``forkMode=never``) run warm, so every build gets a fresh test JVM;
- after each build every process it left (a fork's daemon) is killed, as the reaper does after a
  cold launch, and a thread the build left running in the server makes the server exit (the
  next build starts a new one);
- a build past its limit kills the server; a server that dies during a build (a plugin calling
  ``System.exit``) makes the step run again cold, so a warm server never decides a verdict.

A step runs cold (with the reason in its ``extra``) when it is not marked, goes online, uses
Maven's ``-f``, has a ``.mvn/jvm.config`` (JVM options a running JVM cannot take), or carries a
line break in an argument. The local executor uses this module (``--tebench-warm-jvm``); the
Docker executor runs a container per step and stays cold (docs/building.md says why).
"""

from __future__ import annotations

import codecs
import contextlib
import hashlib
import os
import queue
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import uuid
from collections.abc import Callable
from collections.abc import Mapping
from pathlib import Path
from typing import IO

from pytest_tebench.errors import HarnessError
from pytest_tebench.locking import file_lock
from pytest_tebench.run.executor import BuildStep
from pytest_tebench.run.executor import LineSplitter
from pytest_tebench.run.executor import PhaseClock
from pytest_tebench.run.executor import tool_placeholder
from pytest_tebench.run.reaper import descendants

SOURCE = Path(__file__).with_name("java") / "TebenchWarmMaven.java"
MAIN_CLASS = "TebenchWarmMaven"
#: A server is replaced after this many builds, so whatever Maven's core keeps between builds
#: (caches of the shared core realm) cannot grow without bound.
MAX_BUILDS = 100
#: Idle servers one executor keeps (one per JDK a worker builds with); the least recently used goes.
MAX_SERVERS = 2
#: Milliseconds without a garbage collection after which an idle server collects and shrinks.
IDLE_GC_MS = 15000
#: Seconds a server may take to stop after its input closed.
STOP_GRACE = 10.0
#: Bytes read from the server's output at a time.
CHUNK = 65536
_REAPER = str(Path(__file__).parents[1] / "reaper.py")

#: ``-D`` options that make Surefire run the tests inside Maven's JVM.
_IN_PROCESS = ("-DforkCount=0", "-DforkMode=never")


def refusal(step: BuildStep, workspace: Path) -> str:
    """Why ``step`` must run in a cold ``mvn`` ("" when it may run warm); ``step`` unexpanded."""
    if not step.warm:
        return "not marked warm by the build layer (the tests may run in Maven's JVM)"
    maven = dict(step.tools).get("maven")
    if not maven or not step.argv or step.argv[0] != f"{tool_placeholder('maven')}/bin/mvn":
        return "not a build of a resolved Maven distribution"
    if step.network:
        return "an online step"
    if step.image:
        return "a step with its own image"
    texts = [*step.argv, *(f"{k}={v}" for k, v in step.env)]
    if any("\n" in text or "\r" in text for text in texts):
        return "a line break in an argument"
    if any(arg in ("-f", "--file") or arg.startswith("--file=") for arg in step.argv):
        return "a build of another POM (-f)"
    if any(arg.replace(" ", "").startswith(_IN_PROCESS) for arg in step.argv):
        return "the tests would run in Maven's JVM"
    config = project_basedir(workspace) / ".mvn" / "jvm.config"
    if config.is_file() and config.read_text(encoding="utf-8", errors="replace").strip():
        return ".mvn/jvm.config sets JVM options"
    return ""


def project_basedir(workspace: Path) -> Path:
    """What ``mvn`` exports as ``MAVEN_PROJECTBASEDIR`` (and passes as
    ``maven.multiModuleProjectDirectory``): the nearest directory upwards with a ``.mvn``
    directory, else the working directory."""
    start = workspace.resolve()
    for directory in (start, *start.parents):
        if (directory / ".mvn").is_dir():
            return directory
    return start


def request(nonce: str, workspace: Path, argv: tuple[str, ...], env: Mapping[str, str]) -> str:
    """The server's request for one build: ``argv`` without the program, the build's variables."""
    basedir = str(project_basedir(workspace))
    variables = {
        **env,
        "MAVEN_PROJECTBASEDIR": basedir,
        "MAVEN_CMD_LINE_ARGS": " " + " ".join(argv),
        "PWD": str(workspace),
    }
    lines = [f"BEGIN {nonce}", f"CWD {workspace}"]
    lines += [f"ENV {key}={value}" for key, value in sorted(variables.items())]
    lines.append(f"PROP maven.multiModuleProjectDirectory={basedir}")
    lines += [f"ARG {arg}" for arg in argv]
    lines.append("END")
    text = "\n".join(lines) + "\n"
    if text.count("\n") != len(lines):
        raise HarnessError("a warm Maven request cannot carry a line break")
    return text


def java_feature(java_home: Path) -> int:
    """The JDK's feature version from its ``release`` file (8 for ``1.8``; 0 unknown)."""
    with contextlib.suppress(OSError):
        for line in (java_home / "release").read_text(encoding="utf-8").splitlines():
            if line.startswith("JAVA_VERSION="):
                version = line.split("=", 1)[1].strip().strip('"')
                parts = version.split(".")
                first = parts[1] if parts[0] == "1" and len(parts) > 1 else parts[0]
                return int(first) if first.isdigit() else 0
    return 0


def server_files(java_home: Path, maven_home: Path, cache_dir: Path) -> tuple[Path, Path]:
    """The compiled server and its ``m2.conf`` for this JDK and Maven, compiled once per content
    (source, Maven's ``m2.conf``, JDK feature version) under ``cache_dir``, safe across workers."""
    boot = sorted((maven_home / "boot").glob("plexus-classworlds-*.jar"))
    embedder = sorted((maven_home / "lib").glob("maven-embedder-*.jar"))
    if not boot or not embedder or not (maven_home / "bin" / "m2.conf").is_file():
        raise HarnessError(f"{maven_home} is not an Apache Maven 3 distribution (no classworlds/embedder)")
    source = SOURCE.read_bytes()
    original = (maven_home / "bin" / "m2.conf").read_text(encoding="utf-8")
    feature = java_feature(java_home)
    digest = hashlib.sha256(source + original.encode() + f"|{maven_home}|{feature}".encode()).hexdigest()
    home = cache_dir / f"warm-maven-{digest[:20]}"
    classes, conf = home / "classes", home / "m2.conf"
    if (classes / f"{MAIN_CLASS}.class").is_file() and conf.is_file():
        return classes, conf
    cache_dir.mkdir(parents=True, exist_ok=True)
    with file_lock(cache_dir / f".warm-maven-{digest[:20]}.lock"):
        if (classes / f"{MAIN_CLASS}.class").is_file() and conf.is_file():
            return classes, conf
        with tempfile.TemporaryDirectory(dir=cache_dir, prefix=".warm-maven-") as scratch:
            built = Path(scratch) / "home"
            (built / "classes").mkdir(parents=True)
            release = ["--release", "8"] if feature >= 9 else []
            javac = [
                str(java_home / "bin" / "javac"), "-nowarn", *release, "-encoding", "UTF-8",
                "-cp", os.pathsep.join([str(embedder[-1]), str(boot[-1])]),
                "-d", str(built / "classes"), str(SOURCE),
            ]  # fmt: skip
            done = subprocess.run(javac, capture_output=True, text=True, check=False)
            if done.returncode != 0:
                raise HarnessError(f"cannot compile the warm Maven server: {done.stderr.strip()[-2000:]}")
            (built / "m2.conf").write_text(warm_conf(original, classes), encoding="utf-8")
            shutil.rmtree(home, ignore_errors=True)
            os.replace(built, home)
    return classes, conf


def warm_conf(original: str, classes: Path) -> str:
    """Maven's ``m2.conf`` with our server as the main class and its classes in the core realm."""
    lines = original.splitlines()
    mains = [i for i, line in enumerate(lines) if line.strip().startswith("main is ")]
    if len(mains) != 1 or "[plexus.core]" not in (line.strip() for line in lines):
        raise HarnessError("Maven's m2.conf has no single main class and plexus.core realm")
    lines[mains[0]] = f"main is {MAIN_CLASS} from plexus.core"
    return "\n".join(lines) + f"\nload       {classes}\n"


class WarmServer:
    """One running server: a JVM under the reaper, fed requests on its input."""

    def __init__(
        self, java_home: Path, maven_home: Path, classes: Path, conf: Path, env: Mapping[str, str]
    ) -> None:
        boot = sorted((maven_home / "boot").glob("plexus-classworlds-*.jar"))[-1]
        feature = java_feature(java_home)
        opens = ["--add-opens", "java.base/java.util=ALL-UNNAMED"] if feature >= 9 else []
        # an idle server gives its heap back (G1, JDK 12+): a cold mvn's memory goes at its exit,
        # a warm one's would stay at its peak (2.5 GB seen after commons-lang's test compile)
        idle = [f"-XX:G1PeriodicGCInterval={IDLE_GC_MS}"] if feature >= 12 else []
        argv = [
            sys.executable, "-E", "-S", _REAPER, str(java_home / "bin" / "java"), *opens, *idle,
            "-classpath", str(boot), f"-Dclassworlds.conf={conf}", f"-Dmaven.home={maven_home}",
            f"-Dlibrary.jansi.path={maven_home / 'lib' / 'jansi-native'}",
            "org.codehaus.plexus.classworlds.launcher.Launcher",
        ]  # fmt: skip
        self.builds = 0
        #: The server JVM's pid (the reaper's first child), read after the first build.
        self.java: int | None = None
        self.process = subprocess.Popen(
            argv,
            cwd="/",
            env=dict(env),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        assert self.process.stdout is not None
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.reader = threading.Thread(target=_pump, args=(self.process.stdout, self.lines), daemon=True)
        self.reader.start()

    @property
    def alive(self) -> bool:
        return self.process.poll() is None

    def build(
        self, text: str, nonce: str, clock: PhaseClock, emit: Callable[[str], None]
    ) -> tuple[int | None, str]:
        """Send one request; pass each output line to ``emit``. Returns the exit code and what
        happened: ``""`` (a clean build), ``"timeout"``, ``"died"`` (the server ended first) or
        ``"dirty"`` (the build left a thread; the server exits after answering)."""
        assert self.process.stdin is not None
        self.builds += 1
        try:
            self.process.stdin.write(text.encode("utf-8"))
            self.process.stdin.flush()
        except OSError:
            return None, "died"
        outcome = ""
        while True:
            remaining = clock.remaining()
            if remaining <= 0:
                return None, "timeout"
            try:
                line = self.lines.get(timeout=min(remaining, 0.5))
            except queue.Empty:
                continue
            if line is None:
                return None, "died"
            if line.startswith(f"{nonce} DIRTY "):
                outcome = "dirty"
                continue
            if line.startswith(f"{nonce} EXIT "):
                code = line.split()[-1]
                return (int(code) if code.lstrip("-").isdigit() else 1), outcome
            emit(line)
            clock.feed(line)

    def clear_leftovers(self) -> bool:
        """Kill every process a build left: all below the reaper but the server itself. False
        when the server's pid cannot be told (the server must then go too)."""
        if self.java is None:
            self.java = _oldest_child(self.process.pid)
        if self.java is None:
            return False
        for pid in descendants(self.process.pid) - {self.java}:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        return True

    def stop(self, *, graceful: bool = True) -> None:
        """End the server and everything below it (the reaper takes its descendants down)."""
        if self.alive and graceful and self.process.stdin is not None:
            with contextlib.suppress(OSError):
                self.process.stdin.close()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(timeout=STOP_GRACE)
        for sig in (signal.SIGTERM, signal.SIGKILL):
            if self.process.poll() is not None:
                break
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.process.pid, sig)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(timeout=STOP_GRACE)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGKILL)
        with contextlib.suppress(OSError, subprocess.TimeoutExpired):
            self.process.wait(timeout=STOP_GRACE)
        if self.process.stdin is not None:
            with contextlib.suppress(OSError):
                self.process.stdin.close()
        self.reader.join(timeout=STOP_GRACE)


class WarmMaven:
    """The warm servers of one executor (one worker process), by JDK and Maven distribution.

    A server runs one build at a time: builds running at once in one process (threads of a Dask
    worker or of ``tebench build``) each get a server of their own; at most :data:`MAX_SERVERS`
    idle ones are kept, the least recently used goes first."""

    def __init__(self, cache_dir: Path | None = None) -> None:
        self.cache_dir = cache_dir
        self.lock = threading.Lock()
        #: Idle servers, least recently used first.
        self.idle: list[tuple[tuple[Path, Path], WarmServer]] = []
        self.busy: set[WarmServer] = set()

    def acquire(self, java_home: Path, maven_home: Path, env: Mapping[str, str]) -> tuple[WarmServer, bool]:
        """An idle server for this JDK and Maven, or a new one: and whether it was started now."""
        key = (java_home, maven_home)
        while True:
            with self.lock:
                found = next((i for i in range(len(self.idle) - 1, -1, -1) if self.idle[i][0] == key), None)
                server = self.idle.pop(found)[1] if found is not None else None
                if server is not None and server.alive and server.builds < MAX_BUILDS:
                    self.busy.add(server)
                    return server, False
            if server is None:
                break
            server.stop()
        classes, conf = server_files(java_home, maven_home, self.cache_dir or maven_home.parent)
        started = WarmServer(java_home, maven_home, classes, conf, env)
        with self.lock:
            self.busy.add(started)
        return started, True

    def release(self, java_home: Path, maven_home: Path, server: WarmServer, *, keep: bool) -> None:
        """Hand a server back after a build: kept idle, or stopped (``keep`` False)."""
        surplus: list[WarmServer] = []
        with self.lock:
            self.busy.discard(server)
            if keep:
                self.idle.append(((java_home, maven_home), server))
            while len(self.idle) > MAX_SERVERS:
                surplus.append(self.idle.pop(0)[1])
        if not keep:
            server.stop(graceful=False)
        for extra in surplus:
            extra.stop()

    def run(
        self,
        step: BuildStep,
        workspace: Path,
        *,
        java_home: Path,
        server_env: Mapping[str, str],
        clock: PhaseClock,
        emit: Callable[[str], None],
    ) -> tuple[int | None, str, str]:
        """Run the expanded Maven ``step`` in a warm server. Returns the exit code, the outcome
        (see :meth:`WarmServer.build`; on ``"died"`` the caller runs the step cold) and how the
        server was had (``"started"`` or ``"reused"``)."""
        maven_home = Path(dict(step.tools)["maven"])
        server, fresh = self.acquire(java_home, maven_home, server_env)
        keep = False
        try:
            nonce = uuid.uuid4().hex
            text = request(nonce, workspace, step.argv[1:], dict(step.env))
            code, outcome = server.build(text, nonce, clock, emit)
            keep = outcome not in ("timeout", "died", "dirty") and server.clear_leftovers()
        finally:
            self.release(java_home, maven_home, server, keep=keep)
        return code, outcome, "started" if fresh else "reused"

    def close(self) -> None:
        with self.lock:
            servers = [server for _, server in self.idle] + list(self.busy)
            self.idle, self.busy = [], set()
        for server in servers:
            server.stop()


def _oldest_child(parent: int) -> int | None:
    """The child of ``parent`` that started first (``/proc``; None when there is none)."""
    found: list[tuple[int, int]] = []
    with contextlib.suppress(OSError):
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                stat = Path(f"/proc/{entry}/stat").read_bytes()
            except OSError:
                continue
            fields = stat[stat.rfind(b")") + 2 :].split()
            # fields from "state": state=0, ppid=1, ..., starttime=19
            if len(fields) > 19 and int(fields[1]) == parent:
                found.append((int(fields[19]), int(entry)))
    return min(found)[1] if found else None


def _pump(stream: IO[bytes], lines: queue.Queue[str | None]) -> None:
    """The server's output as whole lines (cut as the executor cuts them), then ``None`` at its end."""
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    splitter = LineSplitter()
    fd = stream.fileno()
    while True:
        try:
            chunk = os.read(fd, CHUNK)
        except OSError:
            chunk = b""
        found = splitter.feed(decoder.decode(chunk, final=not chunk))
        if not chunk:
            found += splitter.flush()
        for line in found:
            lines.put(line.rstrip("\n") + "\n" if line.endswith("\n") else line)
        if not chunk:
            break
    lines.put(None)
    with contextlib.suppress(OSError):
        stream.close()
