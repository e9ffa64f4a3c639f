"""JaCoCo for the harness: attach the agent to every test JVM, write the XML report, read it.

The reference harness passed the agent through ``-DargLine``, which a POM with a literal
``<argLine>`` (jsoup) silently ignores and which clobbers argLine content a project needs.
Here the agent goes into ``JAVA_TOOL_OPTIONS`` for the test step, so every JVM of that step
picks it up whatever the POM says: forked Surefire JVMs, ``forkCount=0`` runs inside Maven's
own JVM, and JVMs the tests start themselves. Maven's own JVM records an empty session
(nothing it loads matches ``includes``), which is harmless in the merged file.
``includes`` is limited to the project's packages so JDK, Maven and library classes are never
instrumented. The report comes from the JaCoCo CLI jar (``java -jar``, or the worker's warm
Maven JVM running the same command: ``warm.jacoco_command``), not from
``jacoco-maven-plugin:report``, because that goal honours the project's ``jacoco.skip``, which
the test step must set to keep the project's own (often older) JaCoCo out of the way.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_tebench.errors import HarnessError
from pytest_tebench.run.executor import MAVEN_REPO_PLACEHOLDER
from pytest_tebench.run.executor import WORKSPACE_PLACEHOLDER
from pytest_tebench.run.executor import BuildStep
from pytest_tebench.workspace.layout import MAVEN

JACOCO_VERSION = "0.8.12"
#: Maven coordinates of the agent and the CLI; warm-up resolves both into the local repository.
AGENT_ARTIFACT = f"org.jacoco:org.jacoco.agent:{JACOCO_VERSION}:jar:runtime"
CLI_ARTIFACT = f"org.jacoco:org.jacoco.cli:{JACOCO_VERSION}:jar:nodeps"
AGENT_JAR = f"org/jacoco/org.jacoco.agent/{JACOCO_VERSION}/org.jacoco.agent-{JACOCO_VERSION}-runtime.jar"
CLI_JAR = f"org/jacoco/org.jacoco.cli/{JACOCO_VERSION}/org.jacoco.cli-{JACOCO_VERSION}-nodeps.jar"
#: Workspace-relative outputs of our JaCoCo; deleted before every test step.
EXEC_FILE = "target/tebench-jacoco.exec"
XML_FILE = "target/tebench-jacoco.xml"

_PACKAGE = re.compile(rb"^\s*package\s+([\w.]+)\s*;", re.MULTILINE)
_UNSAFE = re.compile(r"[\s,=\"']")


#: HotSpot 8 silently ignores a ``JAVA_TOOL_OPTIONS`` of 1024 characters or more (its option
#: buffer; JDK 9 dropped the limit): no agent, no coverage. apache/commons-math's 24 package
#: prefixes made 1,200 characters.
TOOL_OPTIONS_MAX = 1023


def fit_includes(includes: Iterable[str], *, workspace: str, maven_repo: str) -> tuple[str, ...]:
    """``includes`` widened to parent packages, the deepest first, until the agent option with
    these paths fits :data:`TOOL_OPTIONS_MAX` (unchanged when it already does). A wider pattern
    instruments more of the project's own namespace; the report still reads only its classes."""
    patterns = sorted(set(includes))

    def length(chosen: Sequence[str]) -> int:
        option = agent_option(chosen, maven_repo=maven_repo)
        return len(option.replace(WORKSPACE_PLACEHOLDER, workspace))

    while length(patterns) > TOOL_OPTIONS_MAX:
        packages = [p for p in patterns if p.endswith(".*") and "." in p[:-2]]
        if not packages:
            break
        deepest = max(packages, key=lambda p: (p.count("."), p))
        wider = deepest[:-2].rsplit(".", 1)[0]
        patterns = sorted(
            {p for p in patterns if not (p == f"{wider}.*" or p.startswith(f"{wider}."))} | {f"{wider}.*"}
        )
    return tuple(patterns)


def agent_option(includes: Iterable[str], *, maven_repo: str = MAVEN_REPO_PLACEHOLDER) -> str:
    """The ``-javaagent:`` option writing to :data:`EXEC_FILE` in the workspace.

    Paths are placeholders the executor expands; ``append=true`` lets several JVMs of one step
    (Maven, forks, test-started JVMs) share the file, which JaCoCo guards with a file lock.
    """
    patterns = ":".join(includes)
    if not patterns:
        raise HarnessError("no JaCoCo include patterns: the project has no main classes to cover")
    if _UNSAFE.search(patterns):
        raise HarnessError(f"JaCoCo include patterns contain unsupported characters: {patterns!r}")
    destfile = f"{WORKSPACE_PLACEHOLDER}/{EXEC_FILE}"
    return f"-javaagent:{maven_repo}/{AGENT_JAR}=destfile={destfile},append=true,includes={patterns}"


def check_agent_paths(workspace: str, maven_repo: str) -> None:
    """``JAVA_TOOL_OPTIONS`` is split at white space and agent options at ``,``/``=``, so the
    expanded paths must contain neither."""
    for path in (workspace, maven_repo):
        if _UNSAFE.search(path):
            raise HarnessError(
                f"path {path!r} contains white space, quotes, ',' or '=': JaCoCo cannot use it"
            )


def project_includes(workspace: Path, source_roots: Iterable[str] = (MAVEN.main_root,)) -> tuple[str, ...]:
    """JaCoCo ``includes`` patterns covering the project's main classes: the minimal set of
    package prefixes declared by ``*.java`` files under ``source_roots`` (``pkg.*`` also covers
    sub-packages and same-package test classes; the report only reads ``target/classes``).
    Classes in the default package are included by their names."""
    packages: set[str] = set()
    default_classes: set[str] = set()
    for root in source_roots:
        base = workspace / root
        if not base.is_dir():
            continue
        for path in base.rglob("*.java"):
            if path.name in ("package-info.java", "module-info.java"):
                continue
            try:
                head = path.read_bytes()[:65536]
            except OSError:
                continue
            match = _PACKAGE.search(head)
            if match:
                packages.add(match.group(1).decode("ascii", errors="replace"))
            else:
                default_classes.add(path.stem)
    prefixes: list[str] = []
    for package in sorted(packages):
        if not any(package == p or package.startswith(p + ".") for p in prefixes):
            prefixes.append(package)
    # A default-package class name also matches itself followed by $Inner with the trailing "*".
    return tuple(f"{p}.*" for p in prefixes) + tuple(f"{name}*" for name in sorted(default_classes))


#: The report JVM's options (ours: the project's tests never run in it).
REPORT_JVM_OPTIONS = ("-XX:TieredStopAtLevel=1",)


def report_step(
    *,
    java_version: int,
    timeout: float,
    classes_dirs: Sequence[str] = ("target/classes",),
    tools: tuple[tuple[str, str], ...] = (),
) -> BuildStep:
    """``java -jar jacococli.jar report`` turning :data:`EXEC_FILE` into :data:`XML_FILE`, over the
    classes of every module given (a reactor's tests may run production code of other modules).
    ``tools``: the run's Maven distribution, whose warm server (if the executor keeps one) writes
    the report in its own JVM (``warm.jacoco_command``); without one it runs as a new JVM."""
    classfiles: list[str] = []
    for directory in classes_dirs:
        classfiles += ["--classfiles", f"{WORKSPACE_PLACEHOLDER}/{directory}"]
    argv = (
        "java",
        # a run of about a second: the JIT's first tier only halves it and takes a third of the CPU
        # (commons-lang 0.8 s against 0.4 s, 1,950 Guava classes 1.9 s against 1.2-1.6 s; the
        # same XML), CPU the other worker's build wants; the report is the same at any tier
        *REPORT_JVM_OPTIONS,
        "-jar",
        f"{MAVEN_REPO_PLACEHOLDER}/{CLI_JAR}",
        "report",
        f"{WORKSPACE_PLACEHOLDER}/{EXEC_FILE}",
        *classfiles,
        "--xml",
        f"{WORKSPACE_PLACEHOLDER}/{XML_FILE}",
        "--quiet",
    )
    return BuildStep(
        name="coverage-report", argv=argv, timeout=timeout, java_version=java_version, tools=tools, warm=True
    )


@dataclass(frozen=True)
class LineCoverage:
    """JaCoCo's counters for one source line: missed/covered instructions and branches."""

    mi: int
    ci: int
    mb: int
    cb: int

    @property
    def covered(self) -> bool:
        return self.ci > 0

    @property
    def branches(self) -> int:
        return self.mb + self.cb


@dataclass(frozen=True)
class MethodInfo:
    """A method as JaCoCo saw it: binary class name, name, JVM descriptor, first line (0 = none)."""

    class_name: str
    name: str
    desc: str
    line: int


@dataclass(frozen=True)
class CoverageReport:
    """Line data of one JaCoCo XML report.

    ``files`` maps a source path relative to its source root (``org/tebench/textkit/Slug.java``)
    to ``{line number: LineCoverage}`` for every line that holds code. ``classes`` maps binary
    class names (``pkg.Outer$Inner``) to that source path, so callers never guess classes from
    file names.
    """

    files: Mapping[str, Mapping[int, LineCoverage]]
    classes: Mapping[str, str]
    methods: tuple[MethodInfo, ...] = ()
    sessions: int = 0

    def line(self, source: str, number: int) -> LineCoverage | None:
        return self.files.get(source, {}).get(number)

    def covered_lines(self, source: str) -> frozenset[int]:
        return frozenset(nr for nr, line in self.files.get(source, {}).items() if line.covered)

    def to_dict(self) -> dict[str, Any]:
        return {
            "files": {
                source: {str(nr): [c.mi, c.ci, c.mb, c.cb] for nr, c in sorted(lines.items())}
                for source, lines in sorted(self.files.items())
            },
            "classes": dict(sorted(self.classes.items())),
            "sessions": self.sessions,
        }


def _int(element: ET.Element, name: str) -> int:
    try:
        return int(element.get(name, "0"))
    except ValueError:
        return 0


def parse_report(path: Path) -> CoverageReport:
    """Read a JaCoCo XML report (any version since 0.8; ``<group>`` nesting allowed)."""
    try:
        # ElementTree never fetches the DOCTYPE's external "report.dtd".
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError) as exc:
        raise HarnessError(f"unreadable JaCoCo report {path}: {exc}") from exc
    files: dict[str, dict[int, LineCoverage]] = {}
    classes: dict[str, str] = {}
    methods: list[MethodInfo] = []
    for package in root.iter("package"):
        package_path = package.get("name", "")
        prefix = f"{package_path}/" if package_path else ""
        for cls in package.iter("class"):
            binary = cls.get("name", "").replace("/", ".")
            source = cls.get("sourcefilename")
            if source:
                classes[binary] = prefix + source
            for method in cls.iter("method"):
                methods.append(
                    MethodInfo(binary, method.get("name", ""), method.get("desc", ""), _int(method, "line"))
                )
        for sourcefile in package.iter("sourcefile"):
            lines = files.setdefault(prefix + sourcefile.get("name", ""), {})
            for line in sourcefile.iter("line"):
                lines[_int(line, "nr")] = LineCoverage(
                    mi=_int(line, "mi"), ci=_int(line, "ci"), mb=_int(line, "mb"), cb=_int(line, "cb")
                )
    return CoverageReport(
        files=files, classes=classes, methods=tuple(methods), sessions=len(root.findall("sessioninfo"))
    )
