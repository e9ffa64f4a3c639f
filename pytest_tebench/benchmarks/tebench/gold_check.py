"""Before gold's failing tests make an instance invalid, the harness rules itself out.

Gold's selected tests run on V0 as the harness selects them (``-Dtest=Class#m1+m2``). When some
fail, that can be the harness's doing rather than the instance's: a Surefire before 2.19 runs
each selected method as its own JUnit request (a class's ``@BeforeClass`` server restarts on a
new port), a module path opens only the selected classes' packages. So the failing tests are run
again the way the project's own build runs them (:class:`~.gold_run.GoldRunner` runs, this
module decides):

0. **Compile.** Gold that does not compile on V0 is built again before it blames the instance:
   first a plain cold ``mvn test-compile`` on the same JDK (nothing stored reused, no warm Maven
   JVM); compiling there, the harness's accelerated build is at fault, an ``error``. Failing there
   too, gold's run goes to every other JDK here, nearest first (not with ``--tebench-jdk``): the
   first that compiles it is gold's JDK from then on, and every prediction's. Only when none does
   is the instance ``invalid_instance``, its reason naming each build that failed.
1. **Host.** A failure that shows a test could not reach an external host
   (:mod:`~pytest_tebench.run.maven.hosts`) is ``unsupported_environment`` naming it: the
   sandbox has no network unless ``--tebench-network``. A failure that shows a test ran into the
   build's resource limits (:mod:`~pytest_tebench.run.maven.limits`: out of heap, of threads, of
   scratch space) is ``unsupported_environment`` too, naming the limit: a project's tests may
   need more than the sandbox gives a build.
2. **Class.** The selection again by class (``-Dtest=ClassA,ClassB``, only the selected methods
   read), for the tests that failed by method and those that did not run at all (a runner whose
   invocations Surefire's method filter does not match). When they pass there, the instance
   selects by class from then on, gold and every prediction alike (the rule is stored in gold's
   record). A test the class run does not run either goes to its module's whole test phase:
   when its class runs there and it does not, it is no test to its class's runner (a JUnit 4
   ``@Test`` in a JUnit 3 ``TestCase``, as commons-collections had in 2020) and leaves every
   selection, gold's and the predictions' (``not_tests`` in gold's record); gold runs again
   without it, and an instance left with no test is ``invalid_instance``. Otherwise it is the
   harness's error.
3. **Module.** Tests still failing run in their module's whole test phase (``mvn test``, no
   ``-Dtest``, the same flags). Passing there, the harness's selection is at fault: a harness
   ``error`` quoting every run's outcome, never the instance's. Failing there too, the instance
   is ``invalid_instance``, and its reason quotes the full run.
4. **JDK.** Failing in the module's full run too, on the JDK the harness chose, the failing tests
   run on every other JDK here, nearest first (not with ``--tebench-jdk``): the JDK is the
   harness's choice, and a project's tests may expect another one (jsoup 052dc1b1, 2020, expects
   the XML indentation of JDK 9 and later, while its build's level lets JDK 8 run it). Where they
   pass, gold's whole check runs on that JDK, and when it judges there, that JDK is gold's and every
   prediction's. Only failing on every JDK is the instance ``invalid_instance``, its reason naming
   each.

Everything here reads finished runs; nothing runs Maven.
"""

from __future__ import annotations

from collections.abc import Iterable
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pytest_tebench.benchmarks.tebench.gold_record import BY_CLASS
from pytest_tebench.benchmarks.tebench.gold_record import BY_METHOD
from pytest_tebench.benchmarks.tebench.gold_record import PASSING
from pytest_tebench.benchmarks.tebench.gold_record import InvalidInstance
from pytest_tebench.benchmarks.tebench.gold_record import describe_failure as describe
from pytest_tebench.errors import HarnessError
from pytest_tebench.errors import UnsupportedEnvironment
from pytest_tebench.run.maven.hosts import host_needs
from pytest_tebench.run.maven.limits import DISK
from pytest_tebench.run.maven.limits import MEMORY
from pytest_tebench.run.maven.limits import limit_needs
from pytest_tebench.run.maven.selection import module_ran
from pytest_tebench.run.maven.selection import source_module
from pytest_tebench.run.maven.surefire import ERROR
from pytest_tebench.run.maven.surefire import FAILED
from pytest_tebench.run.maven.surefire import NOT_RUN
from pytest_tebench.run.maven.surefire import TestId
from pytest_tebench.run.maven.surefire import TestOutcome
from pytest_tebench.run.maven.testrun import COMPILE_ERROR
from pytest_tebench.run.maven.testrun import NO_TESTS
from pytest_tebench.run.maven.testrun import TEST_COMPILE_ERROR
from pytest_tebench.run.maven.testrun import SelectionRun

#: What each run of the check is called in reasons.
RUN_NAMES = {BY_METHOD: "selected by method", BY_CLASS: "selected by class"}
INVALID_PREFIX = "gold fails its own selected tests on V0, in the module's full test run too"
#: Why a selected test of gold leaves every selection (:func:`not_tests_of_their_runner`).
NOT_A_TEST = "its class runs in the module's full test run and it does not: no test to the class's runner"
NEVER_RUN = (
    "its class never runs in the module's full test run, where the module's other test classes do: "
    "the project's build does not run it"
)


@dataclass(frozen=True)
class Verdict:
    """A gold run that judges nobody: ``status`` is ``invalid_instance``,
    ``unsupported_environment`` or ``error`` (the harness's), ``reason`` says why."""

    status: str
    reason: str


def selected_by(run: SelectionRun) -> str:
    return BY_CLASS if run.by_class else BY_METHOD


def failing(run: SelectionRun, among: Iterable[TestId] | None = None) -> list[TestOutcome]:
    """The selected tests of ``run`` (of ``among`` only, when given) that did not pass."""
    wanted = None if among is None else set(among)
    return [o for o in run.tests if o.status not in PASSING and (wanted is None or o.test in wanted)]


def host_verdict(outcomes: Sequence[TestOutcome], *, network: bool) -> Verdict | None:
    """``unsupported_environment`` naming the hosts, when a failure shows its test needed an
    external host; None otherwise."""
    needs = host_needs(outcomes)
    if not needs:
        return None
    hosts = list(dict.fromkeys(host for found in needs.values() for host in found))
    tests = ", ".join(sorted(needs))
    where = (
        "it is unreachable from here even with the network allowed"
        if network
        else "the sandbox has no network (evaluation's --tebench-network, tebench build's --network, "
        "lets the tests use it)"
    )
    return Verdict(
        UnsupportedEnvironment.status,
        f"gold's selected tests need an external host: {', '.join(hosts)} ({tests}); {where}",
    )


#: What a limit's verdict says of each limit: how to give the tests more.
_LIMIT_HINTS = {
    MEMORY: "--tebench-docker-memory gives a Docker build more",
    DISK: "the sandbox's /tmp and $HOME are small RAM-backed file systems",
}


def limit_verdict(outcomes: Sequence[TestOutcome]) -> Verdict | None:
    """``unsupported_environment`` naming the limits, when a failure shows its test ran into the
    build's resource limits (memory, processes, disk space, open files) or needed a native
    library its environment lacks; None otherwise."""
    needs = limit_needs(outcomes)
    if not needs:
        return None
    limits = list(dict.fromkeys(limit for found in needs.values() for limit in found))
    failed = {str(o.test): o for o in outcomes}
    tests = "; ".join(describe(failed[test]) for test in sorted(needs))
    hints = "".join(f"; {_LIMIT_HINTS[limit]}" for limit in limits if limit in _LIMIT_HINTS)
    return Verdict(
        UnsupportedEnvironment.status,
        f"gold's selected tests ran into what this build's environment gives ({', '.join(limits)}): "
        f"{tests}{hints}",
    )


def class_rule_holds(method_failures: Sequence[TestOutcome], class_run: SelectionRun) -> bool:
    """The tests that failed selected by method all pass when their whole classes run."""
    outcomes = class_run.outcomes
    return class_run.status == "ok" and all(
        o.test in outcomes and outcomes[o.test].status in PASSING for o in method_failures
    )


def class_rule(method_failures: Sequence[TestOutcome]) -> str:
    """Why an instance selects by class: its tests that did not pass selected by method."""
    missed = any(o.status == NOT_RUN for o in method_failures)
    how = "fail or do not run" if missed else "fail"
    return (
        f"gold's selected tests {how} selected by method and pass when their whole classes run: "
        + "; ".join(describe(o) for o in method_failures)
    )


def module_verdict(
    history: Sequence[tuple[str, Sequence[TestOutcome]]], module_run: SelectionRun, *, network: bool
) -> Verdict:
    """The verdict once the module's full test run ran the tests that failed in the last run of
    ``history`` (``(rule, failures)`` per run, oldest first)."""
    suspects = [o.test for o in history[-1][1]]
    outcomes = module_run.outcomes
    in_module = [outcomes.get(t, TestOutcome(t, NOT_RUN, 0, "no result")) for t in suspects]
    hosts = host_verdict(in_module, network=network) or limit_verdict(in_module)
    if hosts is not None:
        return hosts
    failed = [o for o in in_module if o.status in (FAILED, ERROR)]
    if failed:
        return Verdict(InvalidInstance.status, f"{INVALID_PREFIX}: " + "; ".join(describe(o) for o in failed))
    quoted = "; ".join(
        f"{RUN_NAMES[rule]}: " + "; ".join(describe(o) for o in found) for rule, found in history
    )
    missed = [o for o in in_module if o.status not in PASSING]
    if missed:
        return Verdict(
            HarnessError.status,
            "gold's selected tests fail as the harness runs them and the module's full test run does not "
            f"run them, so nothing tells the harness's selection from the instance ({quoted}; "
            + "module's full test run: "
            + "; ".join(describe(o) for o in missed)
            + ")",
        )
    return Verdict(
        HarnessError.status,
        f"gold's selected tests fail as the harness selects them ({quoted}) and pass in the module's "
        f"full test run ({', '.join(str(t) for t in suspects)} passed): the harness's selection is at "
        "fault, not the instance",
    )


# -- 0. compile ---------------------------------------------------------------------------


def compile_failed(run: SelectionRun) -> bool:
    """Gold's build stopped at a compile error, of the production or the test sources."""
    return run.status in (COMPILE_ERROR, TEST_COMPILE_ERROR)


def other_jdks(offered: Iterable[int], ran: int) -> list[int]:
    """The JDKs to build gold with after JDK ``ran`` failed to compile it: every other one
    offered, the nearest first (of two as near, the newer: a build that outgrew its declared
    level is the commoner case in TEBench's years)."""
    return sorted({v for v in offered if v != ran}, key=lambda v: (abs(v - ran), -v))


def plain_compile_verdict(run: SelectionRun, plain: SelectionRun) -> Verdict | None:
    """The harness's ``error`` when gold failed to compile in the harness's launch (``run``) and
    compiled in the plain cold build (``plain``, an empty selection: ``no_tests`` once compiled);
    None when the plain build failed too."""
    if plain.status != NO_TESTS:
        return None
    return Verdict(
        HarnessError.status,
        f"gold does not compile in the harness's launch on V0 ({run.status}: {run.error}) but does in a "
        f"plain cold `mvn test-compile` on JDK {plain.java_version} (nothing stored reused, no warm "
        "Maven JVM): the harness's build is at fault, not the instance",
    )


def compile_confirmation(plain: SelectionRun, others: Sequence[tuple[int, str]], *, forced: str) -> str:
    """What gold's ``invalid_instance`` reason adds once nothing compiled it: the plain build's
    failure and each other JDK's (``(version, what happened)``), or that ``--tebench-jdk``
    (``forced``) kept the others out."""
    said = f"a plain cold `mvn test-compile` on JDK {plain.java_version} fails too ({plain.status})"
    if forced:
        return f"{said}; no other JDK tried: --tebench-jdk {forced} forces this one"
    if not others:
        return f"{said}; no other JDK here to try"
    return f"{said}, {_so_does(others)}"


# -- 2. tests the project's own build does not run ------------------------------------------


def not_tests_of_their_runner(
    missed: Sequence[TestId], class_run: SelectionRun, module_run: SelectionRun, workspace: Path
) -> list[dict[str, str]] | None:
    """Gold's selected tests that no run ran (``missed``: not run selected by class) as the
    project's build has them, when each is no test to the project's own test phase
    (``module_run``, in ``workspace``), and did not run there: its class ran in the class run and
    in the module's whole test phase, and it did not (:data:`NOT_A_TEST`); or its class ran in
    neither while its module's other test classes did (:data:`NEVER_RUN`: Surefire's includes
    leave it out, as they leave out inner classes, or its engine does not discover it). ``{"test",
    "why"}`` per test; None when any of them is not so (the harness's error then)."""
    outcomes = module_run.outcomes
    entries: list[dict[str, str]] = []
    for test in missed:
        if outcomes.get(test, TestOutcome(test, NOT_RUN)).status != NOT_RUN:
            return None
        in_class_run = test.class_name in class_run.reported_classes
        in_module_run = test.class_name in module_run.reported_classes
        if in_class_run and in_module_run:
            entries.append({"test": str(test), "why": NOT_A_TEST})
            continue
        module = source_module(workspace, test.class_name)
        if in_class_run or in_module_run or module is None:
            return None
        if not module_ran(workspace, module, module_run.reported_classes):
            return None  # its module's tests did not run at all: no evidence of the project's build
        entries.append({"test": str(test), "why": NEVER_RUN})
    return entries


def no_test_left_reason(entries: Sequence[dict[str, str]]) -> str:
    """``invalid_instance``'s reason when every test gold selects is no test to its runner."""
    return "none of gold's selected tests runs in the project's own build: " + "; ".join(
        f"{entry['test']} ({entry['why']})" for entry in entries
    )


# -- 4. another JDK ---------------------------------------------------------------------------


def probe_failure(probe: SelectionRun, suspects: Sequence[TestId]) -> str:
    """Why the probe of gold's failing tests (``suspects``) on another JDK is no evidence that the
    instance judges there: "" when it built and every suspect passed."""
    if not (probe.compile_ok and probe.test_compile_ok):
        return probe.status
    outcomes = probe.outcomes
    found = [outcomes.get(t, TestOutcome(t, NOT_RUN, 0, "no result")) for t in suspects]
    bad = [o for o in found if o.status not in PASSING]
    return "; ".join(describe(o) for o in bad[:2]) + ("; ..." if len(bad) > 2 else "")


def tests_jdk_note(ran: int, version: int, invalid: str, others: Sequence[tuple[int, str]]) -> str:
    """Gold's JDK note once gold's tests, failing on JDK ``ran`` (``invalid``, their reason there),
    pass on JDK ``version`` after the JDKs of ``others`` (``(version, what happened)``)."""
    failed_too = "".join(f"; not on JDK {v} either ({what})" for v, what in others)
    return f"JDK {version}: {invalid} (on JDK {ran}){failed_too}; they pass on JDK {version}"


def tests_confirmation(others: Sequence[tuple[int, str]], *, forced: str) -> str:
    """What a failing-tests ``invalid_instance`` reason adds: each other JDK's probe, or that
    ``--tebench-jdk`` (``forced``) kept the others out."""
    if forced:
        return f"no other JDK tried: --tebench-jdk {forced} forces this one"
    if not others:
        return "no other JDK here to try"
    return _so_does(others)


def _so_does(others: Sequence[tuple[int, str]]) -> str:
    """Each other JDK gold's run failed on too, for an ``invalid_instance`` reason."""
    return "and so does gold's run on " + ", ".join(f"JDK {v} ({what})" for v, what in others)
