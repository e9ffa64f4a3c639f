"""Read Surefire's ``TEST-*.xml`` reports into one outcome per selected test method.

What Surefire 3.2.5 writes for JUnit 5 (observed on ``tests/fixtures/mini-maven``):

* The ``classname`` attribute of each ``<testcase>`` is the binary name of the class that
  declares the method (``pkg.Outer$Inner`` for ``@Nested`` classes). The report *file* and the
  ``<testsuite name>`` are not reliable: an outer class's own methods can land in the file of its
  nested class and the outer file then says ``tests="0"``. So only ``classname`` is used.
* Parameterized invocations are named ``m(int)[1]``, ``m(String, String)[2]``; ``@RepeatedTest``
  invocations repeat the plain name ``m``; JUnit 4 uses ``m[0]`` / ``m[case 1]``, older Surefire
  ``m{int}[1]``. A Java method name is an identifier, so the method is the identifier prefix.
* A failure outside any test (``@BeforeAll``, a nested class's setup) is a ``<testcase>`` with an
  empty name (JUnit 4: ``initializationError`` or ``classMethod``); it marks every selected test
  of that class that has no own result as ``error``.

Invocations aggregate per method, worst first: ``error`` > ``failed`` > ``passed`` > ``skipped``.
A selected test with no result at all is ``not_run`` (its selector matched nothing).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field
from dataclasses import replace
from pathlib import Path
from typing import Any

from junitparser import Error
from junitparser import Failure
from junitparser import JUnitXml
from junitparser import JUnitXmlError
from junitparser import Skipped

from pytest_tebench.errors import HarnessError

PASSED = "passed"
FAILED = "failed"
ERROR = "error"
SKIPPED = "skipped"
NOT_RUN = "not_run"

#: Worst status first; aggregation keeps the worst invocation.
_SEVERITY = {ERROR: 3, FAILED: 2, PASSED: 1, SKIPPED: 0}
_IDENTIFIER = re.compile(r"^(?:[^\W\d]|\$)[\w$]*")
_CLASS_LEVEL_NAMES = frozenset({"", "initializationError", "classMethod"})
#: Longest failure message kept per test.
MAX_MESSAGE = 2000
#: Longest stack trace kept per test: enough for its ``Caused by`` lines (a host the test could not
#: reach, :mod:`~pytest_tebench.run.maven.hosts`); the whole trace stays in the report files.
MAX_TRACE = 8000


@dataclass(frozen=True, order=True)
class TestId:
    """A test method: binary class name (``pkg.Outer$Inner``) and method name."""

    __test__ = False  # not a pytest test class, despite the name

    class_name: str
    method: str

    def __str__(self) -> str:
        return f"{self.class_name}#{self.method}"

    @classmethod
    def parse(cls, text: str) -> TestId:
        """Parse ``pkg.Outer$Inner#method``."""
        class_name, sep, method = text.partition("#")
        if not sep or not class_name or not method:
            raise ValueError(f"not a test id (pkg.Class#method): {text!r}")
        return cls(class_name, method)


@dataclass(frozen=True)
class TestOutcome:
    """Result of one selected test method over all its invocations."""

    __test__ = False  # not a pytest test class, despite the name

    test: TestId
    status: str
    #: Number of reported invocations (parameterized/repeated tests have several).
    invocations: int = 0
    #: First failure/error/skip message, trimmed to :data:`MAX_MESSAGE` characters.
    message: str = ""
    #: The exception type and stack trace of that failure (:data:`MAX_TRACE` characters), read
    #: for what the test needed (an external host); not part of records or of equality.
    trace: str = field(default="", compare=False, repr=False)

    @property
    def passed(self) -> bool:
        return self.status == PASSED

    @property
    def failure_text(self) -> str:
        """The message and the trace of a test that did not pass ("" for one that did), for what
        the failure shows it needed (:mod:`~pytest_tebench.run.maven.hosts`, ``limits``)."""
        return "" if self.status in (PASSED, SKIPPED) else f"{self.message}\n{self.trace}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "class": self.test.class_name,
            "method": self.test.method,
            "status": self.status,
            "invocations": self.invocations,
            "message": self.message,
        }


@dataclass(frozen=True)
class CaseResult:
    """One ``<testcase>`` element, reduced to what scoring needs."""

    class_name: str
    name: str
    status: str
    message: str
    #: ``type: message`` and the stack trace of a failure or error ("" otherwise).
    trace: str = ""


def method_of(case_name: str) -> str:
    """The method a ``<testcase name>`` belongs to: ``"m(int)[1]"`` -> ``"m"``; ``""`` when the
    name is not a method (class-level failures)."""
    match = _IDENTIFIER.match(case_name.strip())
    return match.group(0) if match else ""


#: Encodings a build may read its test sources in where the harness reads UTF-8: commons-parent's
#: ``commons.encoding`` (iso-8859-1) sets the compiler's ``encoding`` whatever the project's
#: ``project.build.sourceEncoding`` says (commons-collections 26b0f41a), and Windows' default.
MISREAD_ENCODINGS = ("iso-8859-1", "cp1252")


def compiled_names(method: str) -> tuple[str, ...]:
    """The other names ``javac`` gives a method whose name the harness read as UTF-8, when the
    build reads the source in one of :data:`MISREAD_ENCODINGS`: ``"m\u00dc"`` (bytes ``C3 9C``) is
    ``"m\u00c3"`` in ISO-8859-1 (javac drops the identifier-ignorable U+009C) and ``"m\u00c3\u0153"``
    in cp1252. ``()`` for an ASCII name, which every encoding reads alike."""
    if method.isascii():
        return ()
    raw = method.encode("utf-8")
    names: list[str] = []
    for encoding in MISREAD_ENCODINGS:
        try:
            text = raw.decode(encoding)
        except UnicodeDecodeError:  # cp1252 leaves five bytes undefined: javac would not compile it
            continue
        name = "".join(c for c in text if not _identifier_ignorable(c))
        if name != method and name not in names:
            names.append(name)
    return tuple(names)


def _identifier_ignorable(char: str) -> bool:
    """Java's ``Character.isIdentifierIgnorable``: javac leaves these out of an identifier."""
    code = ord(char)
    return code <= 0x08 or 0x0E <= code <= 0x1B or 0x7F <= code <= 0x9F or unicodedata.category(char) == "Cf"


def _case_status(case: Any) -> tuple[str, str, str]:
    """Status, message and trace of one ``<testcase>``."""
    results = list(case.result)
    for kind, status in ((Error, ERROR), (Failure, FAILED), (Skipped, SKIPPED)):
        for result in results:
            if isinstance(result, kind):
                # The message attribute is the assertion text; without it, the stack trace's
                # first line (exception type and message) says the same.
                text = (result.message or "").strip() or (result.text or "").strip().split("\n", 1)[0]
                trace = ""
                if status != SKIPPED:
                    # Surefire's element text is the stack trace, its first line "type: message";
                    # the type attribute stands in when a report has no text
                    kind_name = (result.type or "").strip()
                    trace = (result.text or "").strip() or f"{kind_name}: {result.message or ''}".strip(": ")
                return status, text[:MAX_MESSAGE], trace[:MAX_TRACE]
    return PASSED, "", ""


def read_report(path: Path) -> list[CaseResult]:
    """All test cases of one Surefire XML report."""
    try:
        xml = JUnitXml.fromfile(str(path))
    except (JUnitXmlError, OSError, SyntaxError) as exc:
        raise HarnessError(f"unreadable Surefire report {path}: {exc}") from exc
    cases: list[CaseResult] = []
    # JUnitXml wraps a bare <testsuite> root (Surefire's format) in a <testsuites> element.
    for suite in xml:
        for case in suite:
            status, message, trace = _case_status(case)
            cases.append(
                CaseResult(case.classname or suite.name or "", case.name or "", status, message, trace)
            )
    return cases


def read_reports(reports_dir: Path) -> list[CaseResult]:
    """Every test case in ``reports_dir/TEST-*.xml`` (empty when the directory is missing).

    The caller must have removed reports of earlier runs; this reads whatever is there, except
    symbolic links: a test may plant one to make the harness read a file outside the workspace.
    """
    if reports_dir.is_symlink() or not reports_dir.is_dir():
        return []
    cases: list[CaseResult] = []
    for path in sorted(reports_dir.glob("TEST-*.xml")):
        if path.is_symlink() or not path.is_file():
            continue
        cases.extend(read_report(path))
    return cases


def _is_class_level(case: CaseResult) -> bool:
    simple = case.class_name.rsplit(".", 1)[-1]
    return case.name in _CLASS_LEVEL_NAMES or case.name in (case.class_name, simple)


def aggregate(cases: Iterable[CaseResult]) -> dict[TestId, TestOutcome]:
    """Fold invocations into one outcome per ``(class, method)`` seen in the reports."""
    outcomes: dict[TestId, TestOutcome] = {}
    for case in cases:
        if _is_class_level(case):
            continue
        method = method_of(case.name)
        if not method:
            continue
        test = TestId(case.class_name, method)
        previous = outcomes.get(test)
        if previous is None:
            outcomes[test] = TestOutcome(test, case.status, 1, case.message, case.trace)
            continue
        worse = _SEVERITY[case.status] > _SEVERITY[previous.status]
        status = case.status if worse else previous.status
        message = case.message if worse and case.message else previous.message
        trace = case.trace if worse and case.trace else previous.trace
        outcomes[test] = TestOutcome(test, status, previous.invocations + 1, message, trace)
    return outcomes


def class_level_errors(cases: Iterable[CaseResult]) -> dict[str, CaseResult]:
    """Binary class name -> the failure reported outside any test method."""
    errors: dict[str, CaseResult] = {}
    for case in cases:
        if _is_class_level(case) and case.status in (ERROR, FAILED):
            errors.setdefault(case.class_name, case)
    return errors


def outcomes_for(selection: Iterable[TestId], cases: Iterable[CaseResult]) -> dict[TestId, TestOutcome]:
    """One outcome per selected test; tests absent from the reports are ``not_run`` unless their
    class (or an enclosing class) failed as a whole, which makes them ``error``."""
    case_list = list(cases)
    seen = aggregate(case_list)
    broken = class_level_errors(case_list)
    result: dict[TestId, TestOutcome] = {}
    initializers = failed_initializers(case_list)
    for test in sorted(set(selection)):
        if test in seen:
            result[test] = _with_initializer(seen[test], initializers)
            continue
        compiled = next((n for n in compiled_names(test.method) if TestId(test.class_name, n) in seen), "")
        if compiled:
            ran = seen[TestId(test.class_name, compiled)]
            note = (
                f"(compiled as {compiled}: the build reads this test source in another encoding than UTF-8)"
            )
            message = (f"{ran.message} {note}" if ran.message else note)[:MAX_MESSAGE]
            result[test] = _with_initializer(replace(ran, test=test, message=message), initializers)
            continue
        failure = _enclosing_error(test.class_name, broken)
        if failure is not None:
            message = f"class-level failure: {failure.message or 'class-level failure'}"
            result[test] = TestOutcome(test, ERROR, 0, message[:MAX_MESSAGE], failure.trace)
        else:
            result[test] = TestOutcome(test, NOT_RUN, 0, "")
    return result


#: A class whose static initializer threw once: every later use fails with this, no cause attached
#: (JDK 8 and 11; later JDKs attach the first failure as the cause).
_UNINITIALIZED = re.compile(r"Could not initialize class ([\w.$]+)")
_CLINIT = re.compile(r"\bat ([\w.$]+)\.<clinit>\(")


def failed_initializers(cases: Iterable[CaseResult]) -> dict[str, str]:
    """Class -> where and why its static initializer failed (``in p.ATest#m: java.awt.AWTError:
    ...``), read from the reports' ``ExceptionInInitializerError`` traces: the root cause of a
    later ``Could not initialize class`` in another test, which may not be selected (a class or
    module run) and so is nowhere else in the run's outcomes."""
    found: dict[str, str] = {}
    for case in cases:
        if case.status not in (FAILED, ERROR) or "ExceptionInInitializerError" not in case.trace:
            continue
        lines = [line.strip() for line in case.trace.splitlines()]
        causes = [line.removeprefix("Caused by: ") for line in lines if line.startswith("Caused by: ")]
        cause = causes[-1] if causes else lines[0]
        where = f"{case.class_name}#{method_of(case.name) or case.name}"
        for name in _CLINIT.findall(case.trace):
            found.setdefault(name, f"in {where}: {cause}")
    return found


def _with_initializer(outcome: TestOutcome, initializers: Mapping[str, str]) -> TestOutcome:
    """``outcome`` with the root cause of its ``Could not initialize class X`` added to its
    message and trace, when another test's report shows it (and its own trace lacks it)."""
    text = outcome.failure_text
    match = _UNINITIALIZED.search(text)
    if match is None or "ExceptionInInitializerError" in text or match.group(1) not in initializers:
        return outcome
    why = f"{match.group(1)}'s static initializer failed {initializers[match.group(1)]}"
    return replace(
        outcome,
        message=f"{outcome.message} ({why})"[:MAX_MESSAGE],
        trace=f"{outcome.trace}\n[root cause] {why}"[:MAX_TRACE],
    )


def _enclosing_error(class_name: str, broken: Mapping[str, CaseResult]) -> CaseResult | None:
    # A failing outer class's @BeforeAll stops its nested classes too.
    name = class_name
    while True:
        if name in broken:
            return broken[name]
        if "$" not in name:
            return None
        name = name.rsplit("$", 1)[0]


# -- the console as a second witness ----------------------------------------------------------
#: ``Tests run: 2, Failures: 1, Errors: 0, Skipped: 0, Time elapsed: 0.6 s <<< FAILURE! -- in p.ATest``
#: (Surefire 3; 2.x writes ``sec`` and `` - in``).
_CONSOLE_CLASS = re.compile(
    r"^(?:\[\w+\] )?Tests run: (\d+), Failures: (\d+), Errors: (\d+), Skipped: \d+, (?:Flakes: \d+, )?"
    r"Time elapsed: .*?-+ in (\S+)\s*$",
    re.MULTILINE,
)
#: Surefire before 2.19 (Maven 3.8's default binding is 2.12.4) names the class on a ``Running
#: p.ATest`` line and leaves it out of the count line that follows it.
_CONSOLE_RUNNING = re.compile(
    r"^(?:\[\w+\] )?Running (\S+)\s*\n(?:(?!(?:\[\w+\] )?Running ).*\n)*?"
    r"(?:\[\w+\] )?Tests run: (\d+), Failures: (\d+), Errors: (\d+), Skipped: \d+, "
    r"Time elapsed: [^\n]*?sec\b(?!.* in )",
    re.MULTILINE,
)
#: ``[ERROR] p.ATest.fails -- Time elapsed: 0.1 s <<< FAILURE!`` (Surefire 3) or
#: ``fails(p.ATest)  Time elapsed: 0.1 sec  <<< ERROR!`` (2.x).
_CONSOLE_METHOD_NEW = re.compile(
    r"^(?:\[\w+\] )?(\S+)\.([^.\s]+) -- Time elapsed: .*<<< (?:FAILURE|ERROR)!", re.MULTILINE
)
_CONSOLE_METHOD_OLD = re.compile(
    r"^(?:\[\w+\] )?([^\s(]+)\(([^\s)]+)\)\s+Time elapsed: .*<<< (?:FAILURE|ERROR)!", re.MULTILINE
)
BANNER = "T E S T S"


def check_against_console(
    outcomes: Mapping[TestId, TestOutcome], cases: Iterable[CaseResult], console: str
) -> dict[TestId, TestOutcome]:
    """Outcomes that the Maven console confirms; a passing report the console contradicts fails.

    Surefire's XML reports lie in ``target/``, where the tests themselves can write: a test that
    runs after another can rewrite that one's report. Maven's console lines come from the Maven
    process, and with ``redirectTestOutputToFile`` the tests' own output does not reach the
    console, so a test can add lines there only with effort and can never remove one. The check
    is therefore one-way: a passed (or skipped) outcome becomes ``failed`` when the console names
    that method as failing, or counts more failures for its class than the reports show, and
    ``not_run`` when the console's complete test section never mentions its class.
    """
    failing: set[tuple[str, str]] = set()
    for match in _CONSOLE_METHOD_NEW.finditer(console):
        failing.add((match[1], method_of(match[2])))
    for match in _CONSOLE_METHOD_OLD.finditer(console):
        failing.add((match[2], method_of(match[1])))
    console_failures: dict[str, int] = {}
    for match in _CONSOLE_CLASS.finditer(console):
        count = int(match[2]) + int(match[3])
        console_failures[match[4]] = max(count, console_failures.get(match[4], 0))
    for match in _CONSOLE_RUNNING.finditer(console):
        count = int(match[3]) + int(match[4])
        console_failures[match[1]] = max(count, console_failures.get(match[1], 0))
    complete = BANNER in console
    report_failures: dict[str, int] = {}  # failing invocations, as the console counts them
    for case in cases:
        if case.status in (FAILED, ERROR):
            # older Surefires count a nested class's failures in its outer class's line
            for name in dict.fromkeys((case.class_name, case.class_name.split("$", 1)[0])):
                report_failures[name] = report_failures.get(name, 0) + 1
    checked: dict[TestId, TestOutcome] = {}
    for test, reported in outcomes.items():
        checked[test] = reported
        names = (test.method, *compiled_names(test.method))
        if reported.status in (PASSED, SKIPPED) and any((test.class_name, n) in failing for n in names):
            checked[test] = TestOutcome(
                test, FAILED, reported.invocations, "the Maven console reports this test failing"
            )
            for name in dict.fromkeys((test.class_name, test.class_name.split("$", 1)[0])):
                report_failures[name] = report_failures.get(name, 0) + 1
    for test, outcome in checked.items():
        if outcome.status not in (PASSED, SKIPPED):
            continue
        name, outer = test.class_name, test.class_name.split("$", 1)[0]
        if console_failures.get(name, 0) > report_failures.get(name, 0):
            checked[test] = TestOutcome(
                test,
                FAILED,
                outcome.invocations,
                f"the Maven console counts {console_failures[name]} failures in {name}; its reports fewer",
            )
        elif complete and name not in console_failures and outer not in console_failures:
            checked[test] = TestOutcome(
                test, NOT_RUN, 0, "a report without a Maven console record of its class"
            )
    return checked
