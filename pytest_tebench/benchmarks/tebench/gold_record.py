"""Gold's reference for TEBench update scoring: the record gold's selection run on V0 leaves.

:class:`~.update.UpdateEvaluator` runs gold once per instance and caches the record on disk,
keyed by :func:`cache_key` (the instance's content, the harness version, the verdict's rules, the
executor and the JDK). This module is that record: its key, gold's verdict (an instance whose gold
does not compile, or fails its own selected tests in the module's full test run too, is
:class:`InvalidInstance`, :mod:`.gold_check`; tests whose outcome changes between repeated runs
are flaky), the selection rule every run of the instance takes (``selected_by``), the coverage
kept (only the lines of S) and the reference read back.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pytest_tebench import __version__
from pytest_tebench.benchmarks.tebench.update_metrics import ChangedMethod
from pytest_tebench.benchmarks.tebench.update_metrics import CoverageOverlap
from pytest_tebench.benchmarks.tebench.update_metrics import coverage_overlap
from pytest_tebench.errors import HarnessError
from pytest_tebench.errors import UnsupportedEnvironment
from pytest_tebench.run.maven.jacoco import CoverageReport
from pytest_tebench.run.maven.jacoco import LineCoverage
from pytest_tebench.run.maven.surefire import PASSED
from pytest_tebench.run.maven.surefire import SKIPPED
from pytest_tebench.run.maven.surefire import TestId
from pytest_tebench.run.maven.surefire import TestOutcome
from pytest_tebench.run.maven.testrun import SelectionRun

#: A selected test "passes" when it passed or was skipped (a gold patch may @Disable a test);
#: failed, errored and not-run (a selector that matched nothing) tests do not.
PASSING = (PASSED, SKIPPED)
#: What a cached gold verdict means; a new value makes every stored gold reference stale.
#: 2: a selected test that did not run is the harness's error, no longer ``invalid_instance``.
#: 3: a failure whose log rules the JDK out runs again with another JDK, no longer ``invalid_instance``.
#: 4: failing tests run again by class, then in the module's full test run, before they make an
#: instance invalid; a test that needs an external host is ``unsupported_environment``.
#: 5: each method is selected as ``m+m[*]`` too: JUnit 4 ``Parameterized`` invocations ran not at all.
#: 6: gold that does not compile is built plainly and on every other JDK before it makes the
#: instance invalid; a selected test its class's runner does not run in the module's full test
#: run leaves every selection.
#: 7: gold's tests failing in the module's full test run too go to every other JDK before they make
#: the instance invalid; a failure that shows the build's resource limits is
#: ``unsupported_environment``.
#: 8: a build plugin the POMs leave without a version runs at its release by V0's date, no longer
#: at today's newest (run/maven/plugin_pins); a selected test whose class the module's full test
#: run never runs, while it runs the module's other classes, leaves every selection.
#: 9: a selected method whose name is not ASCII is also selected and read by the name javac gives
#: it where the build reads test sources in another encoding than UTF-8 (run/maven/surefire).
#: 10: a selected class that a file of another name declares (a second top-level class) is
#: built in its module's scope (run/maven/reactor).
#: 11: a build that died while the kernel killed a process for want of memory is the harness's
#: error, never failing tests (run/oom).
GOLD_RULES = 11
#: Characters of a failing test's message kept in a reason.
_MESSAGE_CHARS = 300
#: The selection rules a gold record (and every prediction of its instance) runs with.
BY_METHOD = "method"
BY_CLASS = "class"


class InvalidInstance(HarnessError):
    """Gold fails its own selected tests on V0: the instance cannot judge anyone."""

    status = "invalid_instance"


@dataclass(frozen=True)
class GoldReference:
    """What a prediction's run is judged against: gold's selection, the production methods the
    commit changed (S) and gold's coverage of them on V0, with the JDK and Maven gold's run took."""

    key: str
    selection: tuple[TestId, ...]
    methods: tuple[ChangedMethod, ...]
    coverage: CoverageReport
    java_version: int
    run: dict[str, Any]
    seconds: float
    #: Gold's selected tests whose outcome changed between repeated runs, dropped from every
    #: selection: ``{"test": id, "outcomes": [status per run]}``.
    flaky: tuple[dict[str, Any], ...] = ()
    #: The Maven gold's run needed (``""``: the executor's), so predictions start with it.
    maven_version: str = ""
    #: How gold's tests were selected, and so every prediction's: ``"method"`` or ``"class"``
    #: (the build's Surefire selects methods unlike the project's own run, or :mod:`.gold_check`
    #: found the method selection failing where the whole classes pass).
    selected_by: str = BY_METHOD
    #: Why gold's selection is by class ("" when by method, or when the build's Surefire says so).
    rule: str = ""
    #: Gold's selected tests the project's build does not run (no tests to their class's runner,
    #: :mod:`.gold_check`), left out of every selection: ``{"test": id, "why": text}``.
    not_tests_run: tuple[dict[str, str], ...] = ()

    @property
    def select_by_class(self) -> bool:
        return self.selected_by == BY_CLASS

    @property
    def flaky_tests(self) -> frozenset[TestId]:
        return frozenset(TestId.parse(entry["test"]) for entry in self.flaky)

    @property
    def not_tests(self) -> frozenset[TestId]:
        return frozenset(TestId.parse(entry["test"]) for entry in self.not_tests_run)

    @property
    def _overlap_with_itself(self) -> CoverageOverlap:
        return coverage_overlap(self.methods, self.coverage, self.coverage)

    @property
    def coverage_has_change(self) -> bool:
        return self._overlap_with_itself.has_change

    @property
    def has_branches(self) -> bool:
        return self._overlap_with_itself.gold_branches > 0


def invalid_reason(run: SelectionRun, flaky: Sequence[dict[str, Any]]) -> str:
    """Why gold's run on V0 (its flaky tests left out) makes the instance invalid before any test
    is judged: it does not compile, or every test it selects is flaky; "" otherwise. Failing tests
    are judged by :mod:`.gold_check`; a selected test that did not run is the harness's error, not
    the instance's: the caller raises for it (docs/scoring.md)."""
    if not (run.compile_ok and run.test_compile_ok):
        return f"gold does not compile on V0 ({run.status}): {run.error}"
    if flaky and not run.tests:
        return "every test gold selects is flaky on V0: " + ", ".join(e["test"] for e in flaky)
    return ""


def flaky_tests(runs: Sequence[SelectionRun]) -> list[dict[str, Any]]:
    """Gold's tests whose outcome changed between repeated runs of its selection, or that some run
    lacks: ``{"test", "outcomes", "reason"}``, in test order."""
    outcomes: dict[TestId, list[str]] = {}
    for run in runs:
        for outcome in run.tests:
            outcomes.setdefault(outcome.test, []).append(outcome.status)
    dropped = {
        test
        for test, statuses in outcomes.items()
        if len({status in PASSING for status in statuses}) > 1 or len(statuses) != len(runs)
    }
    return [
        {
            "test": str(test),
            "outcomes": outcomes[test],
            "reason": "outcome changed between repeated gold runs",
        }
        for test in sorted(dropped)
    ]


def describe_failure(outcome: TestOutcome) -> str:
    """``test status: message``, the message as Surefire reported it (first lines only)."""
    message = " ".join(outcome.message.split())
    if len(message) > _MESSAGE_CHARS:
        message = message[: _MESSAGE_CHARS - 3] + "..."
    return f"{outcome.test} {outcome.status}" + (f": {message}" if message else "")


def cache_key(
    instance_key: dict[str, str], *, executor: str, java: int, runs: int = 1, network: bool = False
) -> str:
    """The record's name: everything that decides gold's run and its verdict."""
    material = json.dumps(
        {
            **instance_key,
            "harness": __version__,
            "rules": GOLD_RULES,
            "executor": executor,
            "java": java,
            "gold_runs": runs,
            "network": network,
        },
        sort_keys=True,
    )
    return hashlib.sha256(material.encode()).hexdigest()[:32]


def coverage_to_json(report: CoverageReport | None, methods: Iterable[ChangedMethod]) -> dict[str, Any]:
    """Only the lines of S are kept: that is all scoring needs, and it keeps the cache small."""
    lines: dict[str, dict[str, list[int]]] = {}
    if report is not None:
        for method in methods:
            for number in range(method.start_line, method.end_line + 1):
                line = report.line(method.source, number)
                if line is not None:
                    lines.setdefault(method.source, {})[str(number)] = [line.mi, line.ci, line.mb, line.cb]
    return lines


def coverage_from_json(data: dict[str, Any]) -> CoverageReport:
    files = {
        source: {int(nr): LineCoverage(mi=v[0], ci=v[1], mb=v[2], cb=v[3]) for nr, v in lines.items()}
        for source, lines in data.items()
    }
    return CoverageReport(files=files, classes={})


def reference_from_record(key: str, cached: dict[str, Any]) -> GoldReference:
    """The reference a stored record stands for (``cached["cache"]``: ``hit`` or ``computed``), or
    :class:`InvalidInstance` when gold's verdict on V0 is that; the verdicts that judge nobody
    for another reason (``unjudged``: an external host, the harness's selection) raise theirs."""
    if cached.get("invalid"):
        raise InvalidInstance(str(cached["invalid"]))
    unjudged = cached.get("unjudged")
    if unjudged:
        raise unjudged_error(str(unjudged["status"]), str(unjudged["reason"]))
    return GoldReference(
        key=key,
        selection=tuple(TestId.parse(t) for t in cached["selection"]),
        methods=tuple(ChangedMethod(**m) for m in cached["methods"]),
        coverage=coverage_from_json(cached["coverage"]),
        java_version=int(cached["java_version"]),
        run={**cached["run"], "cache": cached["cache"]},
        seconds=float(cached["seconds"]),
        flaky=tuple(cached.get("flaky") or ()),
        maven_version=str(cached.get("maven_version") or ""),
        selected_by=str(cached.get("selected_by") or BY_METHOD),
        rule=str(cached.get("rule") or ""),
        not_tests_run=tuple(cached.get("not_tests") or ()),
    )


def unjudged_error(status: str, reason: str) -> HarnessError:
    """The error a verdict that judges nobody by no fault of the instance stands for:
    :class:`UnsupportedEnvironment` for ``unsupported_environment`` (an external host), the
    harness's :class:`HarnessError` otherwise (its selection at fault)."""
    kind = UnsupportedEnvironment if status == UnsupportedEnvironment.status else HarnessError
    return kind(reason)


def run_summary(run: SelectionRun) -> dict[str, Any]:
    summary = run.to_dict()
    summary.pop("coverage", None)
    return summary
