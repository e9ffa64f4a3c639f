"""The executor seam: run one build step in a workspace and say what happened.

An executor knows *where* a command runs (the host, a container); it knows nothing about Maven
or scoring: the Java build layer resolves the Maven a step needs and hands it over as a tool.
Build logic (``run/maven/steps.py``) turns a plan into :class:`BuildStep` values, an executor
runs them and returns :class:`StepResult` values. Executors are chosen through the
``pytest_tebench_make_executor`` hook, so a conftest can plug in Podman or a remote builder.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field
from dataclasses import replace
from pathlib import Path
from typing import Protocol

#: Placeholders a step may use in ``argv`` and ``env`` values. Executors replace them with the
#: workspace and Maven repository paths *as the build sees them* (host paths for the local
#: executor, mount points in a container) via :func:`expand_placeholders`.
WORKSPACE_PLACEHOLDER = "{workspace}"
MAVEN_REPO_PLACEHOLDER = "{maven_repo}"


@dataclass(frozen=True)
class BuildStep:
    """One command to run inside a workspace."""

    #: Short phase name, used in reports and timeouts: ``compile``, ``test-compile``, ``test``.
    name: str
    #: Full argument vector, e.g. ``("mvn", "-B", "-o", "test-compile")``.
    argv: tuple[str, ...]
    #: Wall-clock limit in seconds; the executor kills the step when it is exceeded.
    timeout: float
    #: Java feature version the step needs (8, 11, 17, ...; one of the executor's
    #: ``java_versions()``); the executor maps it to a JDK. None: not a Java step.
    java_version: int | None = 17
    #: Extra environment variables (JAVA_HOME is the executor's business, not the step's).
    env: tuple[tuple[str, str], ...] = ()
    #: Whether the step may use the network (dependency warm-up); evaluation steps may not.
    network: bool = False
    #: Whether the tests of an offline build may reach the network (``--tebench-network``): the
    #: sandbox gets one, the Maven repository stays read-only.
    test_network: bool = False
    #: Read-only host directories the command needs, ``(name, host path)``: a Maven distribution the
    #: Java build layer resolved (``run/maven/dist.py``). ``{tool:NAME}`` in ``argv`` and ``env``
    #: values expands to where the executor shows it: the host path, or a mount in a container.
    tools: tuple[tuple[str, str], ...] = ()
    #: A second phase inside the same launch: once an output line contains ``phase_marker``, the
    #: step may run ``phase_timeout`` seconds more from that moment, whatever ``timeout`` says.
    #: The one-launch ``mvn test`` uses it: the compile limit until Surefire starts, then the test limit.
    phase_marker: str = ""
    phase_timeout: float = 0.0
    #: Container image for this step instead of the executor's own (benchmarks whose instances each
    #: need their own environment, e.g. SWE-bench). The image's own ``ENV`` (PATH...) then stands;
    #: only container executors can honour it (the local executor refuses such a step).
    image: str = ""
    #: The build layer checked that this Maven step may run in a warm Maven JVM
    #: (:mod:`~pytest_tebench.run.maven.warm`): its build's Surefire forks the tests (never
    #: ``forkCount=0``), so no test runs in Maven's own JVM. Executors without one ignore it.
    warm: bool = False


#: Characters kept of one output line; the rest of a longer line is dropped.
MAX_LINE = 16384
LINE_CUT = " [pytest-tebench: line cut]"


class LineSplitter:
    """Output text in, whole lines out, with at most :data:`MAX_LINE` characters held: a step
    that prints one endless line must not fill the harness's memory. A longer line comes out
    once, cut, ending in :data:`LINE_CUT`; the rest of it is dropped."""

    def __init__(self, max_line: int = MAX_LINE) -> None:
        self.max_line = max_line
        self.partial = ""
        self.cutting = False

    def feed(self, text: str) -> list[str]:
        pieces = (self.partial + text).split("\n")
        self.partial = pieces.pop()
        lines: list[str] = []
        for piece in pieces:
            if not self.cutting:
                lines.append(piece + "\n")
            self.cutting = False
        if len(self.partial) > self.max_line:
            if not self.cutting:
                lines.append(self.partial[: self.max_line] + LINE_CUT + "\n")
            self.partial, self.cutting = "", True
        return lines

    def flush(self) -> list[str]:
        rest, self.partial = self.partial, ""
        return [rest] if rest and not self.cutting else []


class PhaseClock:
    """The deadline of a running step, moved once when its phase marker shows up in the output."""

    def __init__(self, step: BuildStep, started: float) -> None:
        self.step = step
        self.deadline = started + step.timeout
        self.switched = False

    def feed(self, line: str) -> None:
        """Called with each output line (from the thread that reads the output)."""
        if not self.switched and self.step.phase_marker and self.step.phase_marker in line:
            self.switched = True
            self.deadline = time.monotonic() + self.step.phase_timeout

    def remaining(self) -> float:
        return self.deadline - time.monotonic()

    @property
    def limit(self) -> float:
        """The limit in force: the phase's own once its marker showed up, the step's before."""
        return self.step.phase_timeout if self.switched else self.step.timeout

    def killed_message(self) -> str:
        """The line an executor appends to the output of a step it killed at its deadline."""
        phase = " (after its phase marker)" if self.switched else ""
        return f"[pytest-tebench] step {self.step.name} killed at its {self.limit:g} s limit{phase}"


@dataclass
class StepResult:
    """What one :class:`BuildStep` did. Plain data, safe to put in a report."""

    name: str
    argv: tuple[str, ...]
    exit_code: int | None
    timed_out: bool
    duration: float
    #: The tail of the combined stdout/stderr, enough to explain a failure.
    output: str = ""
    #: JAVA_HOME (or image) the step really ran with, for the report.
    runtime: str = ""
    extra: dict[str, str] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out


class Executor(Protocol):
    """Runs build steps for a workspace. Implementations: ``LocalExecutor``, ``DockerExecutor``."""

    #: ``"local"`` or ``"docker"`` (or a plugin's own name); shown in the summary.
    name: str

    def run(self, workspace: Path, step: BuildStep, *, maven_repo: Path) -> StepResult:
        """Run ``step`` with ``workspace`` as the working directory and ``maven_repo`` as the
        Maven local repository. Must never raise for a failing or timed-out command; raise
        :class:`~pytest_tebench.errors.HarnessError` only when the executor itself is broken.

        Contract: when ``run`` returns, everything the step wrote is in ``workspace`` on this
        host (reports, coverage files), readable by the caller; nothing else is promised."""
        ...

    def java_versions(self) -> tuple[int, ...]:
        """Feature versions of the JDKs this executor can run a step with (empty: none).

        Steps name one of these in ``BuildStep.java_version``; choosing among them is the Java
        build layer's job (:func:`pytest_tebench.run.maven.jdk.choose_java_version`)."""
        ...

    def toolchain(self) -> str:
        """What this executor builds with (JDK homes and versions, Maven, the image id), as one
        string: part of the key under which finished results are reused."""
        ...

    def close(self) -> None:
        """Release resources (containers, clients). Called once per process at session end."""
        ...


def tool_placeholder(name: str) -> str:
    """``{tool:NAME}``: where the step's tool ``NAME`` (``BuildStep.tools``) is, as the build sees it."""
    return "{tool:" + name + "}"


def expand_placeholders(
    step: BuildStep, *, workspace: str, maven_repo: str, tools: Mapping[str, str] | None = None
) -> BuildStep:
    """Return ``step`` with :data:`WORKSPACE_PLACEHOLDER`, :data:`MAVEN_REPO_PLACEHOLDER` and
    ``{tool:NAME}`` replaced in ``argv`` and ``env`` values by the given paths (as seen by the
    build process); ``tools`` defaults to the tools' host paths."""
    where = dict(step.tools) if tools is None else dict(tools)

    def expand(text: str) -> str:
        text = text.replace(WORKSPACE_PLACEHOLDER, workspace).replace(MAVEN_REPO_PLACEHOLDER, maven_repo)
        for name, path in where.items():
            text = text.replace(tool_placeholder(name), path)
        return text

    return replace(
        step,
        argv=tuple(expand(arg) for arg in step.argv),
        env=tuple((key, expand(value)) for key, value in step.env),
    )
