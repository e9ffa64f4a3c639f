"""Run build steps as host processes: the executor for machines with JDKs and Maven installed.

Each step runs under :mod:`~pytest_tebench.run.reaper`, a child subreaper in a session of its
own: when the command exits or times out, every process it started is killed, including those
that left the process group with ``setsid`` or a double fork (a daemon a test started), so none
can hold the output pipe open, keep writing into the workspace or outlive the step. Output is
read in bounded chunks and split by :class:`~pytest_tebench.run.executor.LineSplitter`, which
cuts overlong lines, so a step printing one endless line cannot fill the harness's memory. The
step's
``java_version`` picks ``JAVA_HOME`` from discovered JDKs; a step's tools (a Maven distribution
the build layer resolved) are used where they are on the host. Environment variables that
would silently change a JVM or Maven (``JAVA_TOOL_OPTIONS``, ``MAVEN_ARGS``, rc files) are
cleared so every run sees only what its step says. Maven commands are offered the discovered
JDKs as toolchains (:mod:`~pytest_tebench.run.maven.toolchains`). The host's network is not fenced: offline
evaluation relies on Maven's ``-o``.
"""

from __future__ import annotations

import codecs
import contextlib
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import IO

from pytest_tebench.errors import HarnessError
from pytest_tebench.run.executor import BuildStep
from pytest_tebench.run.executor import LineSplitter
from pytest_tebench.run.executor import PhaseClock
from pytest_tebench.run.executor import StepResult
from pytest_tebench.run.executor import expand_placeholders
from pytest_tebench.run.maven import toolchains
from pytest_tebench.run.maven import warm
from pytest_tebench.run.maven.jdk import JdkInstall
from pytest_tebench.run.maven.jdk import discover_jdks
from pytest_tebench.run.reaper import PARENT_ENV

#: Lines of combined output kept for the report and for failure diagnosis.
DEFAULT_TAIL_LINES = 1000
#: Seconds between SIGTERM and SIGKILL when a step is stopped.
KILL_GRACE = 5.0
#: Bytes read from the output pipe at a time.
CHUNK = 65536
_REAPER = str(Path(__file__).with_name("reaper.py"))
#: Variables dropped from the inherited environment (a step may set them again).
SCRUBBED_ENV = (
    "JAVA_TOOL_OPTIONS",
    "_JAVA_OPTIONS",
    "JDK_JAVA_OPTIONS",
    "MAVEN_ARGS",
    "MAVEN_CONFIG",
    "M2_HOME",
    "CLASSPATH",
    "LANGUAGE",
)
#: The locale and time zone of every step, as the Docker image has them (``LANG=C.UTF-8``, UTC;
#: the host's ``LC_*`` go): javac reads sources whose POM declares no encoding in the locale's
#: charset, and date and formatting tests read both, so a verdict must not follow the host's.
FIXED_ENV = (("LANG", "C.UTF-8"), ("TZ", "UTC"))


class LocalExecutor:
    """:class:`~pytest_tebench.run.executor.Executor` running steps on this host."""

    name = "local"

    def __init__(
        self,
        *,
        jdks: Mapping[int, JdkInstall | Path] | None = None,
        tail_lines: int = DEFAULT_TAIL_LINES,
        warm_jvm: bool = False,
        warm_cache: Path | None = None,
    ) -> None:
        found = discover_jdks() if jdks is None else jdks
        self.jdks: dict[int, Path] = {
            version: (jdk.home if isinstance(jdk, JdkInstall) else Path(jdk))
            for version, jdk in found.items()
        }
        self.tail_lines = tail_lines
        #: ``--tebench-warm-jvm``: Maven steps the build layer marked run in a warm Maven JVM
        #: (:mod:`~pytest_tebench.run.maven.warm`), one per JDK, kept until :meth:`close`.
        self.warm = warm.WarmMaven(warm_cache) if warm_jvm else None

    def java_versions(self) -> tuple[int, ...]:
        return tuple(sorted(self.jdks))

    def toolchain(self) -> str:
        jdks = ",".join(f"{version}={self.jdks[version]}" for version in sorted(self.jdks))
        fixed = ",".join(f"{key}={value}" for key, value in FIXED_ENV)
        return f"local:jdks={jdks};mvn={shutil.which('mvn') or ''};toolchains={toolchains.ORDER};env={fixed}"

    def java_home(self, version: int) -> Path:
        home = self.jdks.get(version)
        if home is None or not (home / "bin" / "java").is_file():
            have = ", ".join(str(v) for v in sorted(self.jdks)) or "none"
            raise HarnessError(f"no JDK {version} on this host (found: {have})")
        return home

    def _program(self, step: BuildStep, java_home: Path | None) -> str:
        program = step.argv[0]
        if program == "mvn":
            # the executor's own Maven; a step that needs another carries it as a tool
            found = shutil.which("mvn")
            if found is None:
                raise HarnessError(
                    "mvn is not on PATH; install Maven or pass --tebench-maven to download one"
                )
            return found
        if program == "java" and java_home is not None:
            return str(java_home / "bin" / "java")
        return program

    def _environment(self, step: BuildStep, java_home: Path | None) -> dict[str, str]:
        env = {
            key: value
            for key, value in os.environ.items()
            if key not in SCRUBBED_ENV and not key.startswith("LC_")
        }
        env.update(FIXED_ENV)
        env.update(step.env)
        if java_home is not None:
            env["JAVA_HOME"] = str(java_home)
            env["PATH"] = os.pathsep.join([str(java_home / "bin"), os.environ.get("PATH", "")])
        # Debian's and Maven's launch scripts source /etc/mavenrc and ~/.mavenrc, which can
        # override JAVA_HOME; the step's choice must win.
        env["MAVEN_SKIP_RC"] = "true"
        return env

    def run(self, workspace: Path, step: BuildStep, *, maven_repo: Path) -> StepResult:
        if not workspace.is_dir():
            raise HarnessError(f"workspace {workspace} does not exist")
        if not step.argv:
            raise HarnessError(f"step {step.name!r} has no command")
        if step.image:
            raise HarnessError(
                f"step {step.name!r} needs the container image {step.image}: use a Docker executor"
            )
        cold_why = warm.refusal(step, workspace) if self.warm is not None else ""
        step = expand_placeholders(
            step, workspace=str(workspace.resolve()), maven_repo=str(maven_repo.resolve())
        )
        # a step that names no Java version (a non-Java benchmark's) needs no JDK on this host
        java_home = None if step.java_version is None else self.java_home(step.java_version)
        argv = (self._program(step, java_home), *step.argv[1:])
        if toolchains.is_maven(argv) and self.jdks:
            # this host's JDKs, offered to plugins' jdkToolchain and maven-toolchains-plugin
            homes = {version: str(home) for version, home in self.jdks.items()}
            argv = toolchains.with_toolchains(
                argv, str(maven_repo.resolve() / toolchains.offer(maven_repo, homes, step.java_version))
            )
        env = self._environment(step, java_home)
        _check_program(argv[0], env)
        if self.warm is not None and not cold_why and java_home is not None:
            done, cold_why = self._run_warm(workspace, replace(step, argv=argv), java_home)
            if done is not None:
                return done
        if toolchains.is_maven(argv):
            argv = warm.cold_argv(argv)
        result = self._run_cold(workspace, step, argv, env, java_home)
        if self.warm is not None:
            result.extra["warm_jvm"] = f"off: {cold_why}" if cold_why else "off"
        return result

    def _run_warm(self, workspace: Path, step: BuildStep, java_home: Path) -> tuple[StepResult | None, str]:
        """``step`` (expanded, with its final ``argv``) in the warm Maven JVM of ``java_home``;
        ``None`` and why when the server died under it (the step then runs cold)."""
        assert self.warm is not None
        tail: deque[str] = deque(maxlen=self.tail_lines)
        started = time.monotonic()
        clock = PhaseClock(step, started)
        server_env = self._environment(replace(step, env=()), java_home)
        code, outcome, how = self.warm.run(
            step,
            workspace.resolve(),
            java_home=java_home,
            server_env=server_env,
            clock=clock,
            emit=tail.append,
        )
        if outcome == "died":
            return None, "the warm server ended during the build (run again cold)"
        if outcome == "timeout":
            tail.append(f"\n{clock.killed_message()}\n")
        return StepResult(
            name=step.name,
            argv=step.argv,
            exit_code=code,
            timed_out=outcome == "timeout",
            duration=time.monotonic() - started,
            output="".join(tail),
            runtime=str(java_home),
            extra={"executor": self.name, **_program_named(step), "warm_jvm": how},
        ), ""

    def _run_cold(
        self,
        workspace: Path,
        step: BuildStep,
        argv: tuple[str, ...],
        env: dict[str, str],
        java_home: Path | None,
    ) -> StepResult:
        tail: deque[str] = deque(maxlen=self.tail_lines)
        started = time.monotonic()
        try:
            process = subprocess.Popen(
                # -E -S: the reaper needs only the standard library and no PYTHON* settings
                (sys.executable, "-E", "-S", _REAPER, *argv),
                cwd=workspace,
                env={**env, PARENT_ENV: str(os.getpid())},
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        except OSError as exc:
            raise HarnessError(f"cannot start {argv[0]}: {exc}") from exc
        assert process.stdout is not None
        clock = PhaseClock(step, started)
        reader = threading.Thread(target=_pump, args=(process.stdout, tail, clock), daemon=True)
        reader.start()
        timed_out = False
        try:
            # the deadline may move (phase marker), so wait in slices
            while process.poll() is None:
                remaining = clock.remaining()
                if remaining <= 0:
                    raise subprocess.TimeoutExpired(argv, step.timeout)
                with contextlib.suppress(subprocess.TimeoutExpired):
                    process.wait(timeout=min(remaining, 0.5))
        except subprocess.TimeoutExpired:
            timed_out = True
            _kill_group(process, graceful=True)
        except BaseException:
            _kill_group(process, graceful=False)
            raise
        finally:
            # Whatever is left in the group (forks that outlive Maven) must not survive the step.
            _kill_group(process, graceful=False)
            reader.join(timeout=KILL_GRACE)
        duration = time.monotonic() - started
        if timed_out:
            tail.append(f"\n{clock.killed_message()}\n")
        return StepResult(
            name=step.name,
            argv=argv,
            exit_code=None if timed_out else process.returncode,
            timed_out=timed_out,
            duration=duration,
            output="".join(tail),
            runtime=str(java_home or ""),
            extra={"executor": self.name, "maven": argv[0] if step.argv[0] == "mvn" else ""},
        )

    def close(self) -> None:
        """Stop the warm Maven servers; every step's own processes are gone when :meth:`run` returns."""
        if self.warm is not None:
            self.warm.close()


def _program_named(step: BuildStep) -> dict[str, str]:
    """The ``maven`` field of a warm step's result: the build's ``mvn`` (none for JaCoCo's report)."""
    return {} if warm.jacoco_command(step.argv) else {"maven": step.argv[0]}


def _check_program(program: str, env: Mapping[str, str]) -> None:
    """The reaper starts the program; a missing one is the harness's problem, said up front."""
    found = program if os.sep in program else shutil.which(program, path=env.get("PATH"))
    if found is None or not os.access(found, os.X_OK) or os.path.isdir(found):
        raise HarnessError(f"cannot start {program}: not found or not executable")


def _pump(stream: IO[bytes], tail: deque[str], clock: PhaseClock) -> None:
    """Split the output into lines, reading at most :data:`CHUNK` bytes at a time and keeping
    at most :data:`MAX_LINE` characters of a line."""
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    splitter = LineSplitter()
    fd = stream.fileno()
    while True:
        chunk = os.read(fd, CHUNK)
        lines = splitter.feed(decoder.decode(chunk, final=not chunk))
        if not chunk:
            lines += splitter.flush()
        for line in lines:
            tail.append(line)
            clock.feed(line)
        if not chunk:
            break
    stream.close()


def _kill_group(process: subprocess.Popen[bytes], *, graceful: bool) -> None:
    # start_new_session made the leader's pid the group id; Linux does not hand out a pid
    # while a process group of that id still has members, so this cannot hit a stranger group.
    pgid = process.pid
    if graceful:
        _signal_group(pgid, signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=KILL_GRACE)
    _signal_group(pgid, signal.SIGKILL)
    try:
        process.wait(timeout=KILL_GRACE)
    except subprocess.TimeoutExpired as exc:
        raise HarnessError(f"process {process.pid} survived SIGKILL") from exc


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)
