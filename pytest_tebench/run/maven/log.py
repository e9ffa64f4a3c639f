"""Read a Maven log tail and say what went wrong: the prediction's code, or the harness.

The split decides honesty downstream: a *compile error* is the model's fault and scores 0, an
*infrastructure* failure (an artifact missing from the offline repository, a JDK that cannot
target the build's level, a JVM that will not start) is a :class:`HarnessError` and never a
score. Main and test compilation are told apart by the failing goal (``compile`` vs
``testCompile``) in Maven's ``Failed to execute goal`` line; when a long error list pushed that
line out of the log tail, by whether the javac error paths lie under a test source root.

Examples of the lines relied on (Maven 3.8.7 and 3.9.9)::

    [ERROR] Failed to execute goal org.apache.maven.plugins:maven-compiler-plugin:3.13.0:testCompile
        (default-testCompile) on project mini-maven: Compilation failure
    [ERROR] /ws/src/test/java/org/tebench/textkit/ClampTest.java:[12,30] cannot find symbol
    [ERROR] Failed to execute goal on project mini-maven: Could not resolve dependencies for
        project ...: Cannot access central (...) in offline mode and the artifact ... has not been
        downloaded from it before.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pytest_tebench.workspace.layout import MAVEN

OK = "ok"
COMPILE_ERROR = "compile_error"
TEST_COMPILE_ERROR = "test_compile_error"
BUILD_ERROR = "build_error"
#: The test JVM died (``System.exit`` in a test, a crash): the tests fail, the harness is fine.
TEST_CRASH = "test_crash"

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_FAILED_GOAL = re.compile(
    r"^\[ERROR\] Failed to execute goal (?:(?P<plugin>[\w.\-]+:[\w.\-]+):[^:\s]+:(?P<goal>[\w\-]+)"
    r" \((?P<execution>[^)]*)\) )?on project [^:]+: (?P<message>.*)$",
    re.MULTILINE,
)
_JAVAC_ERROR = re.compile(r"^\[ERROR\] (?P<path>\S+\.java):\[\d+(?:,\d+)?\] ", re.MULTILINE)
_TEST_COMPILE_STARTED = re.compile(r"^\[INFO\] --- \S*(?:compiler)\S*:testCompile \(", re.MULTILINE)
_TEST_SOURCE_ROOTS = (f"/{MAVEN.test_root}/", "/generated-test-sources/")
#: ``[INFO] --- maven-surefire-plugin:3.2.5:test (default-test) @ x ---`` (3.8) or
#: ``[INFO] --- surefire:3.2.5:test (default-test) @ x ---`` (3.9).
_MOJO_START = re.compile(r"^\[INFO\] --- (?P<plugin>[^\s:]+):[^\s:]+:(?P<goal>[\w\-]+) \(", re.MULTILINE)
_TESTS_RUNNING = re.compile(r"^(?:\[INFO\] )?(?:T E S T S|Running \S)", re.MULTILINE)
#: ``Apache Maven 3.9.9 (8e8579a9e76f7d015ee5ec7bfcdc97d260186937)``, printed by ``-V``.
_MAVEN_VERSION = re.compile(r"^Apache Maven (?P<version>\d+(?:\.\d+)+\S*)", re.MULTILINE)
_JAVAC_LINE = re.compile(r"\.java:\[\d+(?:,\d+)?\]")
#: The line after javac's error that names the missing symbol (``  symbol:   class Ignore``).
_SYMBOL = re.compile(r"^\s*(?:\[ERROR\])?\s*symbol:\s*(?P<symbol>\S.*)$")

#: Log lines that mean the harness could not build, whatever the prediction did.
_INFRASTRUCTURE = (
    "Could not resolve dependencies",
    "could not be resolved",
    "in offline mode",
    "Non-resolvable parent POM",
    "Non-resolvable import POM",
    "Failed to read artifact descriptor",
    "Could not transfer artifact",
    "requires Maven version",
    "No plugin found for prefix",
    "Unknown lifecycle phase",
    "Error occurred during initialization of VM",
    "Error opening zip file or JAR manifest missing",
    "UnsupportedClassVersionError",
    "invalid target release",
    "invalid source release",
    "not supported. Use",
    "release version",
    "Fatal error compiling",
    "The build could not read",
    "Non-parseable POM",
)
#: Log lines of an offline build that lacks something in the Maven repository: resolving it
#: online (a warm-up) may fix the build. Other build errors (JDK, JVM start) it would not.
_MISSING_OFFLINE = (
    "in offline mode",
    "has not been downloaded from it before",
    "Could not resolve dependencies",
    "could not be resolved",
    "Non-resolvable parent POM",
    "Non-resolvable import POM",
    "Failed to read artifact descriptor",
    "Could not transfer artifact",
    "No plugin found for prefix",
    # a plugin resolving through the legacy API (Surefire 3.0.0-M7's JUnit provider) lists what
    # is absent as "Missing: ... 1 required artifact is missing."
    "required artifact is missing",
    "required artifacts are missing",
)
#: Lines of a failed step's log kept in an error record: enough for the failing goal and its cause.
LOG_TAIL_LINES = 60
#: Surefire's words for a test JVM that died. ``ExecutionException`` as a word: Maven's help
#: link of any failed goal names ``MojoExecutionException``, which is no crash.
_CRASH = re.compile(
    r"The forked VM terminated|There was an error in the forked process|\bExecutionException\b|crashed"
)
#: A Maven log line's level; a line without one continues the message above it.
_LOG_LEVEL = re.compile(r"^\[(INFO|WARNING|WARN|ERROR|DEBUG|FATAL)\]")
#: Surefire's exit code of a test JVM that died (the message's own line, without a level).
_EXIT_CODE = re.compile(r"^Process Exit Code: (-?\d+)$")
#: Plugins whose failure is the tests' own (the test JVM of Surefire or Failsafe).
_TEST_PLUGINS = ("maven-surefire-plugin", "maven-failsafe-plugin")


@dataclass(frozen=True)
class Diagnosis:
    """Verdict on one Maven step's log."""

    kind: str
    #: One line that explains the verdict (the failing goal or the matched log line).
    summary: str = ""
    #: Main compilation is known to have finished (``testCompile`` started or the step passed).
    compile_done: bool = False


def clean_log(text: str) -> str:
    """Drop ANSI colour codes (Debian's ``mvn`` wrapper emits some even with ``-B``)."""
    return _ANSI.sub("", text).replace("\r\n", "\n")


def _infrastructure_line(log: str) -> str | None:
    for line in log.splitlines():
        is_error = line.startswith(("[ERROR]", "Error", "Exception")) or "Error:" in line
        if is_error and any(marker in line for marker in _INFRASTRUCTURE):
            return line.strip()
    return None


def _compile_kind_from_paths(log: str) -> str | None:
    paths = [match.group("path") for match in _JAVAC_ERROR.finditer(log)]
    if not paths:
        return None
    if any(not any(root in path for root in _TEST_SOURCE_ROOTS) for path in paths):
        return COMPILE_ERROR
    return TEST_COMPILE_ERROR


def first_javac_error(log: str) -> str:
    """javac's first error as one line, its path from the source root on and the symbol it names:
    ``src/test/java/p/ATest.java:[12,6] cannot find symbol (symbol: class Ignore)``; "" when the
    log holds none. A verdict then says what failed to compile, not only that something did."""
    clean = clean_log(log)
    found = _JAVAC_ERROR.search(clean)
    if found is None:
        return ""
    path = found.group("path")
    shown = path[path.index("/src/") + 1 :] if "/src/" in path else path.rsplit("/", 1)[-1]
    rest = clean[found.end() :].split("\n", 2)
    line = f"{shown}{clean[found.start('path') + len(path) : found.end()].strip()} {rest[0].strip()}"
    symbol = _SYMBOL.match(rest[1]) if len(rest) > 1 else None
    return f"{line} (symbol: {symbol.group('symbol').strip()})" if symbol else line


def diagnose_build(output: str, exit_code: int | None) -> Diagnosis:
    """Classify a ``compile``/``test-compile``/``test`` step from its exit code and log tail."""
    log = clean_log(output)
    started_tests = _TEST_COMPILE_STARTED.search(log) is not None
    if exit_code == 0:
        return Diagnosis(OK, compile_done=True)
    failed = _FAILED_GOAL.search(log)
    if failed is not None and failed.group("goal") in ("compile", "testCompile"):
        message = failed.group("message")
        summary = failed.group(0).strip()
        if "Compilation failure" in message or "COMPILATION ERROR" in message:
            first = first_javac_error(log)
            if first:
                summary = f"{summary}: {first}"
            if failed.group("goal") == "compile":
                return Diagnosis(COMPILE_ERROR, summary, compile_done=False)
            return Diagnosis(TEST_COMPILE_ERROR, summary, compile_done=True)
        return Diagnosis(BUILD_ERROR, summary, compile_done=failed.group("goal") == "testCompile")
    infrastructure = _infrastructure_line(log)
    if infrastructure is not None:
        return Diagnosis(BUILD_ERROR, infrastructure, compile_done=started_tests)
    # Maven 3.9 repeats every javac error after the failing goal line, so with hundreds of errors
    # the tail may hold neither the goal nor the header: javac's own error lines still tell.
    if "COMPILATION ERROR" in log or "Compilation failure" in log or _JAVAC_ERROR.search(log):
        kind = _compile_kind_from_paths(log)
        if kind is not None:
            return Diagnosis(
                kind, "javac errors (failing goal line not in the log tail)", kind == TEST_COMPILE_ERROR
            )
    if failed is not None:
        # A goal after compilation failing (Surefire's, say) means compilation went through.
        after_compile = "surefire" in (failed.group("plugin") or "") or started_tests
        return Diagnosis(BUILD_ERROR, failed.group(0).strip(), compile_done=after_compile)
    lines = [line for line in log.splitlines() if line.startswith("[ERROR]")]
    summary = lines[0].strip() if lines else f"Maven exited with code {exit_code}"
    return Diagnosis(BUILD_ERROR, summary, compile_done=started_tests)


def diagnose_test_step(output: str, exit_code: int | None) -> Diagnosis:
    """Classify the test step. Test failures do not fail it (``maven.test.failure.ignore``), so
    a non-zero exit is a compile problem, the harness, or a test JVM that died."""
    if exit_code == 0:
        return Diagnosis(OK, compile_done=True)
    diagnosis = diagnose_build(output, exit_code)
    if diagnosis.kind != BUILD_ERROR or _infrastructure_line(clean_log(output)) is not None:
        return diagnosis
    log = clean_log(output)
    failed = _FAILED_GOAL.search(log)
    plugin = (failed.group("plugin") or "") if failed is not None else ""
    if plugin and not plugin.endswith(_TEST_PLUGINS):
        # another plugin of the build failed (google/gson's ProGuard step, on a JDK without
        # jmods): no test ran, so nothing crashed; the build could not be made
        return diagnosis
    for line in log.splitlines():
        if _CRASH.search(line):
            return Diagnosis(TEST_CRASH, line.strip(), compile_done=True)
    return diagnosis


def test_jvm_death(output: str) -> str | None:
    """Surefire's words for a test JVM that died (an agent that failed to load, a
    ``System.exit``), whether or not the step failed for it; None when there are none.

    Where the build goes on (``maven.test.failure.ignore``), Surefire 2.x writes them as the body
    of one ``[ERROR] There are test failures.`` message: lines without a level of their own
    (``The forked VM terminated without properly saying goodbye...``, ``Process Exit Code: 3``),
    which belong to the ``[ERROR]`` above them. The exit code is added when the message has one."""
    found = ""
    in_error = False
    for line in clean_log(output).splitlines():
        level = _LOG_LEVEL.match(line)
        if level is not None:
            if found and level.group(1) != "ERROR":
                break
            in_error = level.group(1) == "ERROR"
        if not in_error:
            continue
        if not found:
            if _CRASH.search(line):
                found = line.strip()
            continue
        code = _EXIT_CODE.match(line[level.end() :].strip() if level is not None else line.strip())
        if code is not None:
            return f"{found} (exit code {code.group(1)})"
    return found or None


def missing_artifacts(output: str) -> bool:
    """Whether an offline step failed for want of an artifact that an online resolution may bring."""
    log = clean_log(output)
    return any(
        marker in line
        for line in log.splitlines()
        if line.startswith(("[ERROR]", "[FATAL]"))
        for marker in _MISSING_OFFLINE
    )


_REQUIRES_MAVEN = re.compile(r"requires Maven version (?P<version>\d+(?:\.\d+){1,2})\b")


def required_maven(output: str) -> str:
    """The Maven version a plugin refused to run without (``The plugin ... requires Maven version
    3.9.6``), or ``""``."""
    match = _REQUIRES_MAVEN.search(clean_log(output))
    return match.group("version") if match else ""


#: ``group:artifact[:type[:classifier]]:version`` as Maven prints it.
_COORDS = r"(?P<coords>[\w.\-]+:[\w.\-]+(?::[\w.\-]+){1,4})"
#: An offline build that lacks an artifact names it in one of these ways (Maven 3.8 and 3.9).
_ABSENT_OFFLINE = (
    re.compile(r"the artifact " + _COORDS + r" has not been downloaded from it before"),
    re.compile(_COORDS + r" \(absent\)"),
)
#: An online build asked the repositories for an artifact none of them has (a ``-SNAPSHOT``
#: parent or BOM, an unpublished plugin), in Maven 3.8's and 3.9's words.
_UNPUBLISHED = (
    re.compile(r"Could not find artifact " + _COORDS),
    # 3.8: "Failure to find g:a:pom:v in https://... was cached in the local repository"
    re.compile(r"Failure to find " + _COORDS),
    # 3.9: "g:a:jar:v was not found in https://... during a previous attempt"
    re.compile(_COORDS + r" was not found in "),
)
#: A download from a repository: (3.8, 3.9) "Could not transfer artifact g:a:pom:v from/to id
#: (url): Transfer failed for url: reason"; (3.8, cached) "Failure to transfer g:a:pom:v from url
#: was cached in the local repository ... Original error: ...".
_TRANSFER = re.compile(
    r"(?:Could not transfer artifact|Failure to transfer) " + _COORDS
    + r" from(?:/to (?P<id>[^\s(]+) \((?P<url>[^)\s]*)\)| (?P<cached>\S+))(?P<rest>.*)"
)  # fmt: skip
#: Maven Central: the one remote repository the harness reaches (as Maven names and spells it).
CENTRAL_ID = "central"
CENTRAL_HOSTS = ("repo.maven.apache.org", "repo1.maven.org")
#: A repository that refuses or cannot be reached: whatever the retry, the answer stays.
_REFUSAL = re.compile(
    r"Unknown host|UnknownHostException|Name or service not known|Temporary failure in name resolution|"
    r"status code: 40[13]|Unauthorized|Forbidden|authentication failed|Blocked mirror for repositories"
)
#: The artifacts a failed resolution lists: "The following artifacts could not be resolved: g:a:jar:v
#: (absent), g:b:jar:v (absent): cause" (3.9; 3.8 without "(absent)").
_RESOLVED_NONE = re.compile(r"The following artifacts could not be resolved: (?P<list>.*?)(?:: |$)")


def _unreachable(match: re.Match[str]) -> bool:
    """Whether a transfer failed for good: any repository but Maven Central (the only one the
    harness reaches: a snapshot repository, a company's), or Central refusing."""
    url = match.group("url") or match.group("cached") or ""
    central = match.group("id") in (None, CENTRAL_ID) and any(host in url for host in CENTRAL_HOSTS)
    return not central or _REFUSAL.search(match.group("rest")) is not None


def _coordinates(output: str, patterns: tuple[re.Pattern[str], ...]) -> list[str]:
    found: dict[str, None] = {}
    for line in clean_log(output).splitlines():
        if line.startswith(("[ERROR]", "[FATAL]", "[WARNING]")):
            for pattern in patterns:
                for match in pattern.finditer(line):
                    found.setdefault(match.group("coords").rstrip("."), None)
    return list(found)


def _unpublished_in(line: str) -> list[str]:
    """The coordinates ``line`` says no reachable repository has: those its cause names, and the
    others of its "could not be resolved" list (Maven names one cause for several)."""
    named = [m.group("coords") for pattern in _UNPUBLISHED for m in pattern.finditer(line)]
    named += [m.group("coords") for m in _TRANSFER.finditer(line) if _unreachable(m)]
    listed = _RESOLVED_NONE.search(line)
    if named and listed is not None:
        for item in listed.group("list").split(", "):
            coords = item.removesuffix(" (absent)").strip()
            if re.fullmatch(_COORDS, coords):
                named.append(coords)
    return [c.rstrip(".") for c in named]


def missing_coordinates(output: str) -> list[str]:
    """Coordinates an offline step names as missing from the repository (first seen first)."""
    return _coordinates(output, _ABSENT_OFFLINE)


def unpublished_coordinates(output: str) -> list[str]:
    """Coordinates an online step needed that no repository reachable from here has (first seen
    first): a build that needs them cannot be made here, however often it is tried. A transfer
    that broke (a connection reset) names none: it may pass on a retry."""
    found: dict[str, None] = {}
    for line in clean_log(output).splitlines():
        if line.lstrip().startswith(("[ERROR]", "[FATAL]", "[WARNING]")):
            found.update(dict.fromkeys(_unpublished_in(line)))
    return list(found)


def maven_version(output: str) -> str:
    """The Maven version a ``-V`` launch printed ("" when the banner is not in the log)."""
    match = _MAVEN_VERSION.search(clean_log(output))
    return match.group("version") if match else ""


def log_tail(output: str, lines: int = LOG_TAIL_LINES) -> str:
    """The last ``lines`` non-blank lines of a step's log, colour codes removed (for error records)."""
    kept = [line for line in clean_log(output).splitlines() if line.strip()]
    return "\n".join(kept[-lines:])


def compile_started_tests(output: str) -> bool:
    """Whether the log shows ``testCompile`` starting, i.e. main compilation succeeded."""
    return _TEST_COMPILE_STARTED.search(clean_log(output)) is not None


def phase_at_end(output: str) -> str:
    """``"test"`` or ``"test-compile"``: what a single ``mvn test`` launch was doing when its log
    ends (used to name a timeout). The last mojo banner decides; when test output has pushed
    every banner out of the tail, test markers or javac diagnostics do; otherwise ``"test"``,
    since only tests produce floods of output that bury the banners."""
    log = clean_log(output)
    banners = list(_MOJO_START.finditer(log))
    if banners:
        last = banners[-1]
        testing = "surefire" in last.group("plugin") and last.group("goal") == "test"
        return "test" if testing else "test-compile"
    if _TESTS_RUNNING.search(log):
        return "test"
    return "test-compile" if _JAVAC_LINE.search(log) else "test"
