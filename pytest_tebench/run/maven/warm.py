"""A warm Maven JVM per worker and JDK: builds run in one long-lived Maven process, not a cold ``mvn``.

A cold ``mvn`` pays, every launch, for a JVM start, loading and JIT-compiling Maven's core and
``javac`` (which runs inside Maven's JVM): on jsoup's prediction launch 18-21 s cold against
7.6-10 s warm (docs/speed.md). :class:`WarmMaven` keeps one JVM per (JDK, Maven distribution)
with Maven's ``lib/`` on its class path, started through Maven's own plexus-classworlds launcher
with an ``m2.conf`` that names our small server (``java/TebenchWarmMaven.java``, shipped as
source, compiled with the step's JDK on first use and cached by content). The server runs each
build through ``MavenCli.doMain``, exactly as ``mvn`` would with the same arguments, and writes
the launches' JaCoCo reports (:func:`jacoco_command`: our tool, from a class loader it keeps).
With a real Maven, core components are compiled beside it (:data:`CORE_COMPONENTS`): a lifecycle
participant for the stored outputs of :mod:`~pytest_tebench.run.maven.prebuilt` (a bundle's
manifest written once; gold's test side kept from gold's own launch,
:mod:`~pytest_tebench.run.maven.prebuilt_tests`), and a mojo listener that has a forked
``javac`` JIT-compile with C1 only (``java/TebenchForkedJavac.java``: the same class files,
sooner).

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
Maven's ``-f``, has a ``.mvn/jvm.config`` with an option a server does not start with
(:mod:`~pytest_tebench.run.maven.jvm_config`: the others start a server of their own, as ``mvn``
would start its JVM), or carries a line break in an argument. The local executor runs the server
as a host process (:class:`LocalServer`); the Docker executor runs it as a sandbox container's
command and talks to it over the container's attached input and output (``run/docker_warm.py``): one protocol
(:class:`WarmServer`), two transports, one pool (:class:`WarmPool`).
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
import zipfile
from collections.abc import Callable
from collections.abc import Hashable
from collections.abc import Mapping
from collections.abc import Sequence
from pathlib import Path
from typing import Generic
from typing import TypeVar

from pytest_tebench.errors import HarnessError
from pytest_tebench.locking import file_lock
from pytest_tebench.run.executor import BuildStep
from pytest_tebench.run.executor import LineSplitter
from pytest_tebench.run.executor import PhaseClock
from pytest_tebench.run.executor import tool_placeholder
from pytest_tebench.run.maven.jacoco import CLI_JAR
from pytest_tebench.run.maven.jacoco import REPORT_JVM_OPTIONS
from pytest_tebench.run.maven.jvm_config import jvm_config
from pytest_tebench.run.maven.jvm_config import project_basedir
from pytest_tebench.run.reaper import PARENT_ENV
from pytest_tebench.run.reaper import descendants

SOURCE = Path(__file__).with_name("java") / "TebenchWarmMaven.java"
MAIN_CLASS = "TebenchWarmMaven"
#: The lifecycle participant that writes stored ``process-classes`` outputs back
#: (:mod:`~pytest_tebench.run.maven.prebuilt`).
PARTICIPANT = Path(__file__).with_name("java") / "TebenchStoredOutputs.java"
#: The mojo listener that gives a forked ``javac`` ``-XX:TieredStopAtLevel=1``.
FORKED_JAVAC = Path(__file__).with_name("java") / "TebenchForkedJavac.java"
#: Components compiled beside the server for a real Maven (one with ``maven-core`` in ``lib/``),
#: each with the core class it needs (a Maven too old for it goes without); Maven's container
#: finds them through Sisu's index.
CORE_COMPONENTS = {
    PARTICIPANT: "org/apache/maven/AbstractMavenLifecycleParticipant.class",
    FORKED_JAVAC: "org/apache/maven/execution/MojoExecutionListener.class",
}
SISU_INDEX = "META-INF/sisu/javax.inject.Named"
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


#: How every switch only the warm server reads begins (``-Dtebench.outputs=...`` of
#: :mod:`~pytest_tebench.run.maven.prebuilt`, ``-Dtebench.testside=...`` of
#: :mod:`~pytest_tebench.run.maven.prebuilt_tests`). The server takes them out of the build's
#: properties before any mojo runs; a cold ``mvn`` would hand them to every test JVM as system
#: properties, so :func:`cold_argv` drops them there.
SERVER_SWITCH = "-Dtebench."


def cold_argv(argv: Sequence[str]) -> tuple[str, ...]:
    """``argv`` as a cold ``mvn`` runs it: without the warm server's own switches (a cold launch
    has no server to read them, and its tests must not see them)."""
    return tuple(arg for arg in argv if not arg.startswith(SERVER_SWITCH))


def refusal(step: BuildStep, workspace: Path) -> str:
    """Why ``step`` must run in a cold ``mvn`` ("" when it may run warm); ``step`` unexpanded."""
    if not step.warm:
        return "not marked warm by the build layer (the tests may run in Maven's JVM)"
    maven = dict(step.tools).get("maven")
    is_build = bool(step.argv) and step.argv[0] == f"{tool_placeholder('maven')}/bin/mvn"
    if not maven or not (is_build or jacoco_command(step.argv)):
        return "neither a build of a resolved Maven distribution nor JaCoCo's report"
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
    return jvm_config(workspace)[1]


def request(
    nonce: str, workspace: Path, argv: tuple[str, ...], env: Mapping[str, str], *, top: Path | None = None
) -> str:
    """The server's request for one build: ``argv`` without the program, the build's variables
    (``top``: see :func:`~pytest_tebench.run.maven.jvm_config.project_basedir`)."""
    basedir = str(project_basedir(workspace, top=top))
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


def jacoco_command(argv: Sequence[str]) -> tuple[str, tuple[str, ...]] | None:
    """JaCoCo's CLI jar and its arguments when ``argv`` is the coverage report's command
    (:func:`~pytest_tebench.run.maven.jacoco.report_step`: ``java [its JVM options] -jar
    <JaCoCo's CLI> ARGS``, placeholders expanded or not); None for any other command.

    A server runs it in its own JVM (``TebenchWarmMaven.jacoco``): the report is our tool's, read
    from files the build left, and the same in any JVM; a warm one writes it in about 70 ms where
    a new JVM takes 0.3-0.4 s (jsoup). The JVM options only set the new JVM's JIT tier."""
    if len(argv) < 3 or Path(argv[0]).name != "java" or "-jar" not in argv:
        return None
    at = argv.index("-jar")
    jar = argv[at + 1] if at + 1 < len(argv) else ""
    if not set(argv[1:at]) <= set(REPORT_JVM_OPTIONS) or not jar.endswith(f"/{CLI_JAR}"):
        return None
    return jar, tuple(argv[at + 2 :])


def jacoco_request(nonce: str, workspace: Path, jar: str, args: Sequence[str]) -> str:
    """The server's request to run JaCoCo's CLI ``jar`` on ``args`` (see :func:`jacoco_command`)."""
    lines = [f"BEGIN {nonce}", f"CWD {workspace}", f"JACOCO {jar}", *(f"ARG {arg}" for arg in args), "END"]
    text = "\n".join(lines) + "\n"
    if text.count("\n") != len(lines):
        raise HarnessError("a warm JaCoCo request cannot carry a line break")
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


#: The system property that tells our ``m2.conf`` where the server's home is (its ``classes/``):
#: the same conf serves a host process and a container that mounts the home elsewhere.
HOME_PROPERTY = "tebench.warm.home"
#: Compiles the server: given the sources, the class path (Maven's ``lib/`` and classworlds jars)
#: and the output folder; raises :class:`HarnessError` when javac fails.
Compile = Callable[[list[Path], list[Path], Path], None]


def server_files(java_home: Path, maven_home: Path, cache_dir: Path) -> tuple[Path, Path]:
    """The compiled server and its ``m2.conf`` for this JDK and Maven, compiled with the host's
    ``java_home`` once per content under ``cache_dir``, safe across workers."""
    feature = java_feature(java_home)

    def compile_on_host(sources: list[Path], classpath: list[Path], out: Path) -> None:
        release = ["--release", "8"] if feature >= 9 else []
        javac = [
            str(java_home / "bin" / "javac"), "-nowarn", *release, "-encoding", "UTF-8",
            "-cp", os.pathsep.join(str(jar) for jar in classpath), "-d", str(out), *map(str, sources),
        ]  # fmt: skip
        done = subprocess.run(javac, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise HarnessError(f"cannot compile the warm Maven server: {done.stderr.strip()[-2000:]}")

    home = server_home(maven_home, cache_dir, f"host-{maven_home}-{feature}", compile_on_host)
    return home / "classes", home / "m2.conf"


def server_home(maven_home: Path, cache_dir: Path, flavour: str, compile_server: Compile) -> Path:
    """The server's home (``classes/``, ``m2.conf``) for this Maven, made once per content
    (source, Maven's ``m2.conf``, ``flavour``: how and for what it is compiled) under
    ``cache_dir`` by ``compile_server``, safe across workers."""
    boot = sorted((maven_home / "boot").glob("plexus-classworlds-*.jar"))
    embedder = sorted((maven_home / "lib").glob("maven-embedder-*.jar"))
    if not boot or not embedder or not (maven_home / "bin" / "m2.conf").is_file():
        raise HarnessError(f"{maven_home} is not an Apache Maven 3 distribution (no classworlds/embedder)")
    components = core_components(maven_home)
    sources = [SOURCE, *components]
    source = b"".join(path.read_bytes() for path in sources)
    original = (maven_home / "bin" / "m2.conf").read_text(encoding="utf-8")
    digest = hashlib.sha256(source + original.encode() + f"|{flavour}|conf4".encode()).hexdigest()
    home = cache_dir / f"warm-maven-{digest[:20]}"
    if (home / "classes" / f"{MAIN_CLASS}.class").is_file() and (home / "m2.conf").is_file():
        return home
    cache_dir.mkdir(parents=True, exist_ok=True)
    with file_lock(cache_dir / f".warm-maven-{digest[:20]}.lock"):
        if (home / "classes" / f"{MAIN_CLASS}.class").is_file() and (home / "m2.conf").is_file():
            return home
        with tempfile.TemporaryDirectory(dir=cache_dir, prefix=".warm-maven-") as scratch:
            built = Path(scratch) / "home"
            (built / "classes").mkdir(parents=True)
            for path in sources:
                shutil.copyfile(path, built / path.name)
            libraries = sorted((maven_home / "lib").glob("*.jar"))
            compile_server([built / path.name for path in sources], [*libraries, boot[-1]], built / "classes")
            for path in sources:
                (built / path.name).unlink()
            if not (built / "classes" / f"{MAIN_CLASS}.class").is_file():
                raise HarnessError("compiling the warm Maven server gave no class file")
            if components:
                index = built / "classes" / SISU_INDEX
                index.parent.mkdir(parents=True)
                index.write_text("".join(f"{path.stem}\n" for path in components), encoding="utf-8")
            (built / "m2.conf").write_text(warm_conf(original), encoding="utf-8")
            shutil.rmtree(home, ignore_errors=True)
            os.replace(built, home)
    return home


def core_components(maven_home: Path) -> list[Path]:
    """The :data:`CORE_COMPONENTS` this Maven's core can run: each whose class ``maven-core`` has."""
    cores = sorted((maven_home / "lib").glob("maven-core-*.jar"))
    if not cores:
        return []
    try:
        with zipfile.ZipFile(cores[-1]) as jar:
            names = set(jar.namelist())
    except (OSError, zipfile.BadZipFile):
        return []
    return [path for path, needed in CORE_COMPONENTS.items() if needed in names]


def warm_conf(original: str) -> str:
    """Maven's ``m2.conf`` with our server as the main class and its classes (under the home the
    ``-D`` :data:`HOME_PROPERTY` names) in the core realm."""
    lines = original.splitlines()
    mains = [i for i, line in enumerate(lines) if line.strip().startswith("main is ")]
    if len(mains) != 1 or "[plexus.core]" not in (line.strip() for line in lines):
        raise HarnessError("Maven's m2.conf has no single main class and plexus.core realm")
    lines[mains[0]] = f"main is {MAIN_CLASS} from plexus.core"
    return "\n".join(lines) + f"\nload       ${{{HOME_PROPERTY}}}/classes\n"


def boot_jar(maven_home: Path) -> str:
    """The file name of Maven's classworlds launcher jar (in ``boot/``)."""
    boot = sorted((maven_home / "boot").glob("plexus-classworlds-*.jar"))
    if not boot:
        raise HarnessError(f"{maven_home} is not an Apache Maven 3 distribution (no classworlds)")
    return boot[-1].name


def server_command(
    java: str, maven_home: str, boot: str, home: str, feature: int, *, project: tuple[str, ...] = ()
) -> list[str]:
    """The server's JVM command line (the same for a host process and a container): Maven's
    classworlds launcher (``boot``: :func:`boot_jar`) with our ``m2.conf``; ``maven_home`` and the
    server's ``home`` as that JVM sees them; ``project``: the options of the project's
    ``.mvn/jvm.config`` (:mod:`~pytest_tebench.run.maven.jvm_config`), first, as ``mvn`` puts them,
    so ours win a clash."""
    return [
        java, *project, *server_jvm_options(feature),
        "-classpath", f"{maven_home}/boot/{boot}",
        f"-Dclassworlds.conf={home}/m2.conf", f"-D{HOME_PROPERTY}={home}", f"-Dmaven.home={maven_home}",
        f"-Dlibrary.jansi.path={maven_home}/lib/jansi-native",
        "org.codehaus.plexus.classworlds.launcher.Launcher",
    ]  # fmt: skip


def server_jvm_options(feature: int) -> list[str]:
    """JVM options of a server on JDK ``feature``."""
    # the server's environment is made writable per build (TebenchWarmMaven.writableEnvironment)
    opens = ["--add-opens", "java.base/java.util=ALL-UNNAMED"] if feature >= 9 else []
    # an idle server gives its heap back (G1, JDK 12+): a cold mvn's memory goes at its exit,
    # a warm one's would stay at its peak (2.5 GB seen after commons-lang's test compile)
    idle = [f"-XX:G1PeriodicGCInterval={IDLE_GC_MS}"] if feature >= 12 else []
    # a test JVM runs as the server's user: through the Attach API it could load an agent into
    # the server and so reach every later build
    return [*opens, *idle, "-XX:+DisableAttachMechanism"]


class WarmServer:
    """The protocol with one running server, whatever carries it: requests go to :meth:`send`,
    the server's output comes, as whole lines, from ``read`` (its chunks; ``b""`` at the end)."""

    def __init__(self, read: Callable[[], bytes]) -> None:
        self.builds = 0
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.reader = threading.Thread(target=_pump, args=(read, self.lines), daemon=True)
        self.reader.start()

    @property
    def alive(self) -> bool:
        raise NotImplementedError

    def send(self, data: bytes) -> None:
        """Write ``data`` to the server's input; an :class:`OSError` when it is gone."""
        raise NotImplementedError

    def clear_leftovers(self) -> bool:
        """Kill every process a build left but the server; False when that cannot be done (the
        server must then go too)."""
        raise NotImplementedError

    def stop(self, *, graceful: bool = True) -> None:
        """End the server and everything it started."""
        raise NotImplementedError

    def build(
        self, text: str, nonce: str, clock: PhaseClock, emit: Callable[[str], None], *, counted: bool = True
    ) -> tuple[int | None, str]:
        """Send one request; pass each output line to ``emit``. Returns the exit code and what
        happened: ``""`` (a clean build), ``"timeout"``, ``"died"`` (the server ended first) or
        ``"dirty"`` (the build left a thread; the server exits after answering). ``counted``:
        the request counts towards :data:`MAX_BUILDS` (a Maven build; JaCoCo's report does not
        add to Maven core's caches)."""
        self.builds += counted
        try:
            self.send(text.encode("utf-8"))
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


class LocalServer(WarmServer):
    """A server as a host process under the reaper, fed on its standard input."""

    def __init__(
        self,
        java_home: Path,
        maven_home: Path,
        classes: Path,
        conf: Path,
        env: Mapping[str, str],
        *,
        project: tuple[str, ...] = (),
    ) -> None:
        argv = [
            sys.executable, "-E", "-S", _REAPER,
            *server_command(str(java_home / "bin" / "java"), str(maven_home), boot_jar(maven_home),
                            str(conf.parent), java_feature(java_home), project=project),
        ]  # fmt: skip
        #: The server JVM's pid (the reaper's first child), read after the first build.
        self.java: int | None = None
        self.process = subprocess.Popen(
            argv,
            cwd="/",
            env={**env, PARENT_ENV: str(os.getpid())},
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        assert self.process.stdout is not None
        fd = self.process.stdout.fileno()
        stdout = self.process.stdout

        def read() -> bytes:
            try:
                chunk = os.read(fd, CHUNK)
            except OSError:
                chunk = b""
            if not chunk:
                with contextlib.suppress(OSError):
                    stdout.close()
            return chunk

        super().__init__(read)

    @property
    def alive(self) -> bool:
        return self.process.poll() is None

    def send(self, data: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(data)
        self.process.stdin.flush()

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


Key = TypeVar("Key", bound=Hashable)
Server = TypeVar("Server", bound=WarmServer)


class WarmPool(Generic[Key, Server]):
    """The warm servers of one executor (one worker process), by what they were started for.

    A server runs one build at a time: builds running at once in one process (threads of a Dask
    worker or of ``tebench build``) each get a server of their own; at most :data:`MAX_SERVERS`
    idle ones are kept, the least recently used goes first."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        #: Idle servers, least recently used first.
        self.idle: list[tuple[Key, Server]] = []
        self.busy: set[Server] = set()

    def acquire(self, key: Key, start: Callable[[], Server]) -> tuple[Server, bool]:
        """An idle server for ``key``, or a new one from ``start``: and whether it was started now."""
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
        started = start()
        with self.lock:
            self.busy.add(started)
        return started, True

    def release(self, key: Key, server: Server, *, keep: bool) -> None:
        """Hand a server back after a build: kept idle, or stopped (``keep`` False)."""
        surplus: list[Server] = []
        with self.lock:
            self.busy.discard(server)
            if keep:
                self.idle.append((key, server))
            while len(self.idle) > MAX_SERVERS:
                surplus.append(self.idle.pop(0)[1])
        if not keep:
            server.stop(graceful=False)
        for extra in surplus:
            extra.stop()

    def close(self) -> None:
        with self.lock:
            servers = [server for _, server in self.idle] + list(self.busy)
            self.idle, self.busy = [], set()
        for server in servers:
            server.stop()


class WarmMaven:
    """The local executor's warm servers (host processes), by JDK and Maven distribution."""

    def __init__(self, cache_dir: Path | None = None) -> None:
        self.cache_dir = cache_dir
        self.pool: WarmPool[tuple[Path, Path, tuple[str, ...]], LocalServer] = WarmPool()

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

        # a server per project JVM options: one started with them serves only their builds
        project, _ = jvm_config(workspace)

        def start() -> LocalServer:
            classes, conf = server_files(java_home, maven_home, self.cache_dir or maven_home.parent)
            return LocalServer(java_home, maven_home, classes, conf, server_env, project=project)

        key = (java_home, maven_home, project)
        server, fresh = self.pool.acquire(key, start)
        keep = False
        try:
            nonce = uuid.uuid4().hex
            tool = jacoco_command(step.argv)
            if tool is not None:
                text = jacoco_request(nonce, workspace, *tool)
            else:
                text = request(nonce, workspace, step.argv[1:], dict(step.env))
            code, outcome = server.build(text, nonce, clock, emit, counted=tool is None)
            keep = outcome not in ("timeout", "died", "dirty") and server.clear_leftovers()
        finally:
            self.pool.release(key, server, keep=keep)
        return code, outcome, "started" if fresh else "reused"

    def close(self) -> None:
        self.pool.close()


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


def _pump(read: Callable[[], bytes], lines: queue.Queue[str | None]) -> None:
    """The server's output as whole lines (cut as the executor cuts them), then ``None`` at its end."""
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    splitter = LineSplitter()
    while True:
        chunk = read()
        found = splitter.feed(decoder.decode(chunk, final=not chunk))
        if not chunk:
            found += splitter.flush()
        for line in found:
            lines.put(line.rstrip("\n") + "\n" if line.endswith("\n") else line)
        if not chunk:
            break
    lines.put(None)
