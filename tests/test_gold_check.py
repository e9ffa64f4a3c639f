"""Gold's failing tests before they blame the instance: hosts read from Surefire's reports, and the
verdict after the module's full test run (gold_check). The runs themselves go through the real
gold-record path in test_update_scripted.py; here, reports and runs written by hand, modelled on
what Surefire 3.2.5 and 2.12.4 write for JUnit 4 and 5 on JDK 17."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pytest_tebench.benchmarks.tebench import gold_check
from pytest_tebench.run.maven.hosts import external_hosts
from pytest_tebench.run.maven.hosts import host_needs
from pytest_tebench.run.maven.limits import limits_met
from pytest_tebench.run.maven.surefire import ERROR
from pytest_tebench.run.maven.surefire import FAILED
from pytest_tebench.run.maven.surefire import NOT_RUN
from pytest_tebench.run.maven.surefire import PASSED
from pytest_tebench.run.maven.surefire import TestId
from pytest_tebench.run.maven.surefire import TestOutcome
from pytest_tebench.run.maven.surefire import outcomes_for
from pytest_tebench.run.maven.surefire import read_report
from pytest_tebench.run.maven.testrun import SelectionRun

from conftest import TEST_MAVEN_REPO
from conftest import History
from conftest import write_jsonl

FETCH = TestId("org.jsoup.integration.ConnectTest", "fetchURl")
PARSE = TestId("org.jsoup.integration.ConnectTest", "parsesRss")

#: Jsoup.connect("https://jsoup.org").get() with no network (JDK 17, Surefire 3.2.5): the message
#: attribute is the host alone; the type and the trace say what it is.
UNKNOWN_HOST_REPORT = """\
<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="org.jsoup.integration.ConnectTest" tests="2" errors="1" failures="0" skipped="0">
  <testcase name="fetchURl" classname="org.jsoup.integration.ConnectTest" time="0.012">
    <error message="jsoup.org" type="java.net.UnknownHostException">java.net.UnknownHostException: jsoup.org
	at java.base/sun.nio.ch.NioSocketImpl.connect(NioSocketImpl.java:567)
	at java.base/java.net.Socket.connect(Socket.java:633)
	at org.jsoup.helper.HttpConnection$Response.execute(HttpConnection.java:732)
	at org.jsoup.integration.ConnectTest.fetchURl(ConnectTest.java:52)
</error>
  </testcase>
  <testcase name="parsesRss" classname="org.jsoup.integration.ConnectTest" time="0.2"/>
</testsuite>
"""
#: A JUnit 4 @BeforeClass that fetched a page (Surefire 2.12.4): the class-level case carries it.
CLASS_LEVEL_REPORT = """\
<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="org.jsoup.integration.ConnectTest" tests="1" errors="1" failures="0" skipped="0">
  <testcase name="org.jsoup.integration.ConnectTest" classname="org.jsoup.integration.ConnectTest" time="0">
    <error message="example.com: Name or service not known" type="java.net.UnknownHostException">\
java.net.UnknownHostException: example.com: Name or service not known
	at java.base/java.net.Inet6AddressImpl.lookupAllHostAddr(Native Method)
	at org.jsoup.integration.ConnectTest.setUp(ConnectTest.java:38)
</error>
  </testcase>
</testsuite>
"""


def test_a_report_keeps_the_failure_s_type_and_trace_for_reading_hosts(tmp_path: Path) -> None:
    report = tmp_path / "TEST-org.jsoup.integration.ConnectTest.xml"
    report.write_text(UNKNOWN_HOST_REPORT)
    outcomes = outcomes_for([FETCH, PARSE], read_report(report))
    fetch = outcomes[FETCH]
    assert (fetch.status, fetch.message) == (ERROR, "jsoup.org")
    assert fetch.trace.startswith("java.net.UnknownHostException: jsoup.org\n\tat java.base/")
    assert "trace" not in fetch.to_dict()  # records keep the message; the trace is only read
    assert host_needs(outcomes.values()) == {str(FETCH): ["jsoup.org"]}


def test_a_class_level_failure_passes_its_trace_to_the_selected_tests(tmp_path: Path) -> None:
    report = tmp_path / "TEST-org.jsoup.integration.ConnectTest.xml"
    report.write_text(CLASS_LEVEL_REPORT)
    outcomes = outcomes_for([FETCH], read_report(report))
    assert outcomes[FETCH].message == "class-level failure: example.com: Name or service not known"
    assert host_needs(outcomes.values()) == {str(FETCH): ["example.com"]}


@pytest.mark.parametrize(
    ("text", "hosts"),
    [
        ("java.net.UnknownHostException: jsoup.org", ["jsoup.org"]),
        ("java.net.UnknownHostException: httpbin.org: Temporary failure in name resolution", ["httpbin.org"]),
        (
            "org.apache.http.conn.HttpHostConnectException: Connect to example.com:80 "
            "[example.com/93.184.216.34] failed: Connection refused",
            ["example.com"],
        ),
        (
            "java.net.ConnectException: Failed to connect to api.github.com/140.82.112.6:443",
            ["api.github.com"],
        ),
        ("java.net.SocketException: Network is unreachable", ["an unnamed host"]),
        (
            "java.net.NoRouteToHostException: No route to host\n\tat x.Client.open(Client.java:3) "
            "connecting to maven.org/1.2.3.4:443",
            ["maven.org"],
        ),
        # the loopback is the test's own server: a failure like any other
        ("java.net.ConnectException: Connection refused", []),
        (
            "org.apache.http.conn.HttpHostConnectException: Connect to localhost:8443 "
            "[localhost/127.0.0.1] failed: Connection refused",
            [],
        ),
        ("java.net.ConnectException: Failed to connect to 127.0.0.1:38211", []),
        ("expected: <2> but was: <3>", []),
    ],
)
def test_external_hosts_in_failure_texts(text: str, hosts: list[str]) -> None:
    assert external_hosts(text) == hosts


#: What the JDK writes when a test meets a limit of its build (JDK 17 and, for threads, JDK 8).
HEAP_TRACE = "java.lang.OutOfMemoryError: Java heap space\n\tat p.BigTest.fills(BigTest.java:4)"


@pytest.mark.parametrize(
    ("text", "limits"),
    [
        (HEAP_TRACE, ["memory"]),
        ("java.lang.OutOfMemoryError: GC overhead limit exceeded", ["memory"]),
        ("java.lang.OutOfMemoryError: Metaspace", ["memory"]),
        ("java.lang.OutOfMemoryError: Cannot reserve 1048576 bytes of direct buffer memory", ["memory"]),
        (
            "java.lang.OutOfMemoryError: unable to create native thread: possibly out of memory or "
            "process/resource limits reached",
            ["processes"],
        ),
        ("java.lang.OutOfMemoryError: unable to create new native thread", ["processes"]),
        (
            "java.io.IOException: No space left on device\n\tat java.base/java.io.FileOutputStream.writeBytes"
            "(Native Method)",
            ["disk space"],
        ),
        ("java.nio.file.FileSystemException: /tmp/x: Too many open files", ["open files"]),
        # jfreechart's charts on an image without the font stack (JDK 17, 2026-12-01)
        (
            "java.lang.UnsatisfiedLinkError: /usr/lib/jvm/java-17-openjdk-amd64/lib/libfontmanager.so: "
            "libharfbuzz.so.0: cannot open shared object file: No such file or directory",
            ["native library libharfbuzz.so.0"],
        ),
        # a library of the project's own that its build did not make: the instance's business
        ("java.lang.UnsatisfiedLinkError: no snappyjava in java.library.path", []),
        # no heap holds such an array: the test fails everywhere, it met no limit of this build's
        ("java.lang.OutOfMemoryError: Requested array size exceeds VM limit", []),
        ("expected: <2> but was: <3>", []),
    ],
)
def test_limits_met_in_failure_texts(text: str, limits: list[str]) -> None:
    assert limits_met(text) == limits


def test_a_test_out_of_the_build_s_memory_is_unsupported_not_invalid() -> None:
    heap = TestOutcome(FETCH, ERROR, 1, "Java heap space", trace=HEAP_TRACE)
    assert gold_check.limit_verdict([heap, TestOutcome(PARSE, PASSED, 1)]) == gold_check.Verdict(
        "unsupported_environment",
        "gold's selected tests ran into what this build's environment gives (memory): org.jsoup.integration.ConnectTest#fetchURl "
        "error: Java heap space; --tebench-docker-memory gives a Docker build more",
    )
    # in the module's full run too, it is the environment's, never the instance's
    verdict = gold_check.module_verdict([("method", [FAILED_FETCH])], _run(heap), network=False)
    assert verdict.status == "unsupported_environment"
    assert gold_check.limit_verdict([FAILED_FETCH]) is None


def _run(*outcomes: TestOutcome, status: str = "ok") -> SelectionRun:
    return SelectionRun(status=status, compile_ok=True, test_compile_ok=True, tests=outcomes)


FAILED_FETCH = TestOutcome(FETCH, FAILED, 1, "expected: <200> but was: <404>")


def test_failing_in_the_module_run_too_makes_the_instance_invalid_quoting_that_run() -> None:
    history = [("method", [FAILED_FETCH]), ("class", [FAILED_FETCH])]
    module = _run(
        TestOutcome(FETCH, FAILED, 1, "expected: <200> but was: <500>"), TestOutcome(PARSE, PASSED, 1)
    )
    verdict = gold_check.module_verdict(history, module, network=False)
    assert verdict == gold_check.Verdict(
        "invalid_instance",
        "gold fails its own selected tests on V0, in the module's full test run too: "
        "org.jsoup.integration.ConnectTest#fetchURl failed: expected: <200> but was: <500>",
    )


def test_passing_in_the_module_run_is_the_harness_s_selection_quoting_each_run() -> None:
    history = [("method", [FAILED_FETCH])]  # a build whose Surefire selected by class from the start
    verdict = gold_check.module_verdict(history, _run(TestOutcome(FETCH, PASSED, 1)), network=False)
    assert verdict.status == "error"
    assert verdict.reason == (
        "gold's selected tests fail as the harness selects them (selected by method: "
        "org.jsoup.integration.ConnectTest#fetchURl failed: expected: <200> but was: <404>) and pass in "
        "the module's full test run (org.jsoup.integration.ConnectTest#fetchURl passed): the harness's "
        "selection is at fault, not the instance"
    )


def test_a_test_the_module_run_leaves_out_is_never_the_instance_s_fault() -> None:
    # jsoup's *IT classes: Surefire's default includes leave them to Failsafe
    left_out = TestOutcome(FETCH, NOT_RUN, 0, "the whole test phase did not run it")
    verdict = gold_check.module_verdict([("method", [FAILED_FETCH])], _run(left_out), network=False)
    assert verdict.status == "error"
    assert "the module's full test run does not run them" in verdict.reason
    assert verdict.reason.endswith(
        "module's full test run: org.jsoup.integration.ConnectTest#fetchURl not_run: "
        "the whole test phase did not run it)"
    )


def test_a_host_in_the_module_run_s_failure_is_unsupported_not_invalid() -> None:
    unreachable = TestOutcome(FETCH, ERROR, 1, "jsoup.org", trace="java.net.UnknownHostException: jsoup.org")
    verdict = gold_check.module_verdict([("method", [FAILED_FETCH])], _run(unreachable), network=True)
    assert verdict == gold_check.Verdict(
        "unsupported_environment",
        "gold's selected tests need an external host: jsoup.org "
        "(org.jsoup.integration.ConnectTest#fetchURl); it is unreachable from here even with the network allowed",
    )


def test_the_class_rule_holds_only_when_every_method_failure_passes_by_class() -> None:
    assert gold_check.class_rule_holds([FAILED_FETCH], _run(TestOutcome(FETCH, PASSED, 1)))
    assert not gold_check.class_rule_holds([FAILED_FETCH], _run(FAILED_FETCH))
    assert not gold_check.class_rule_holds([FAILED_FETCH], _run(TestOutcome(PARSE, PASSED, 1)))
    assert not gold_check.class_rule_holds(
        [FAILED_FETCH], _run(TestOutcome(FETCH, PASSED, 1), status="timeout:test")
    )


# --------------------------------------------------------------------------- a real Maven build

COUNTER = "src/main/java/org/tebench/order/Counter.java"
COUNTER_TEST = "src/test/java/org/tebench/order/CounterTest.java"
COUNTER_V1 = "package org.tebench.order;\n\nclass Counter {\n    static int next(int n) {\n        return n + 1;\n    }\n}\n"
#: The second test reads what the first one set: it passes when its class runs whole, as the
#: project's own `mvn test` runs it, and fails selected alone (`-Dtest=CounterTest#b_countsOn`).
COUNTER_TEST_V1 = """\
package org.tebench.order;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

@TestMethodOrder(MethodOrderer.MethodName.class)
class CounterTest {
    static Integer start;

    @Test
    void a_setsStart() {
        start = 1;
    }

    @Test
    void b_countsOn() {
        assertNotNull(start, "a_setsStart did not run first");
        assertEquals(start + 1, Counter.next(start));
    }
}
"""


def _counter_instance(
    make_history: Callable[[str], History], test_v1: str, test_v0: str
) -> tuple[History, dict[str, Any]]:
    """An instance of the mini-maven project: ``Counter.next`` counts by two from V0 on, and the
    test class goes from ``test_v1`` to ``test_v0``."""
    history = make_history("order")
    pom = (Path(__file__).parent / "fixtures" / "mini-maven" / "pom.xml").read_text()
    v1 = history.commit({"pom.xml": pom, COUNTER: COUNTER_V1, COUNTER_TEST: test_v1}, "V-1")
    v0 = history.commit(
        {COUNTER: COUNTER_V1.replace("n + 1", "n + 2"), COUNTER_TEST: test_v0}, "count by two"
    )
    return history, history.instance_row(
        v1, v0, instance_id="order__one", repo="tebench/order", labels=["breaking"]
    )


def _gold_on_the_instance(pytester: pytest.Pytester, history: History, row: dict[str, Any]) -> dict[str, Any]:
    """Gold's copy evaluated on ``row`` with real Maven (local, offline, gold run once): its record."""
    report_path = pytester.path / "report.json"
    result = pytester.runpytest(
        "--tebench-predictions=gold",
        f"--tebench-dataset={write_jsonl(pytester.path / 'dataset.jsonl', [row])}",
        f"--tebench-repos={history.path.parent}",
        f"--tebench-cache-dir={pytester.path / 'cache'}",
        f"--tebench-maven-repo={TEST_MAVEN_REPO}",
        "--tebench-offline",
        "--tebench-executor=local",
        "--tebench-gold-runs=1",
        f"--tebench-report={report_path}",
        "-p",
        "no:cacheprovider",
        "-p",
        "no:xdist",
    )
    result.assert_outcomes(passed=1)
    record: dict[str, Any] = json.loads(report_path.read_text())["results"][0]
    return record


@pytest.mark.maven
def test_a_gold_test_that_fails_only_selected_alone_makes_the_instance_select_by_class(
    make_history: Callable[[str], History], pytester: pytest.Pytester
) -> None:
    history, row = _counter_instance(
        make_history, COUNTER_TEST_V1, COUNTER_TEST_V1.replace("start + 1, Counter", "start + 2, Counter")
    )
    record = _gold_on_the_instance(pytester, history, row)
    update = record["update"]
    assert (record["status"], update["s_exec"]) == ("evaluated", 1.0)
    assert update["gold"]["selection"] == ["org.tebench.order.CounterTest#b_countsOn"]
    # by method, b_countsOn ran alone and failed; its whole class passed: gold and the prediction
    # are selected by class
    assert update["gold"]["selected_by"] == "class" and update["selected_by"] == "class"
    assert update["gold"]["rule"].startswith(
        "gold's selected tests fail selected by method and pass when their whole classes run: "
        "org.tebench.order.CounterTest#b_countsOn failed: a_setsStart did not run first"
    )
    assert update["s_line"] == 1.0


def test_gold_s_repeated_runs_keep_the_agent_and_skip_the_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The flakiness runs are compared by outcome alone: run as measured (JaCoCo's agent on),
    without the report; a re-measure after dropping a flaky test makes its report again."""
    from dataclasses import replace

    from pytest_tebench.benchmarks.tebench import gold_run
    from pytest_tebench.run.maven.offline_run import WarmedRun
    from pytest_tebench.run.maven.run_settings import RunSettings
    from pytest_tebench.workspace.checkout import Workspace

    steady, flaky = TestId("p.ATest", "steady"), TestId("p.ATest", "flaky")
    asked: list[tuple[list[TestId], RunSettings]] = []

    def run_inherited(
        executor: object, workspace: Path, selection: list[TestId], settings: RunSettings
    ) -> SelectionRun:
        asked.append((list(selection), settings))
        status = FAILED if len(asked) == 1 and flaky in selection else PASSED
        return SelectionRun(
            "ok", True, True, tests=tuple(TestOutcome(t, status if t == flaky else PASSED) for t in selection)
        )

    monkeypatch.setattr(gold_run, "run_inherited", run_inherited)
    runner = gold_run.GoldRunner(object, gold_runs=3)  # type: ignore[arg-type]
    measured = RunSettings(maven_repo=tmp_path)
    first = SelectionRun("ok", True, True, tests=(TestOutcome(steady, PASSED), TestOutcome(flaky, PASSED)))
    _, dropped = runner._measure(Workspace(tmp_path), [steady, flaky], measured, first, WarmedRun(first))
    assert [e["test"] for e in dropped] == ["p.ATest#flaky"]
    assert [(s.coverage, s.coverage_report) for _, s in asked] == [(True, False), (True, False), (True, True)]
    assert asked[-1][0] == [steady] and replace(asked[-1][1], coverage_report=True) == measured


@pytest.mark.parametrize(
    ("offered", "ran", "order"),
    [
        ((8, 11, 17, 21), 11, [8, 17, 21]),  # 3 below, 6 above: the older first
        ((8, 11, 17, 21, 25), 17, [21, 11, 25, 8]),  # 4 either side: the newer first
        ((17,), 17, []),
        ((17, 25), 17, [25]),
    ],
)
def test_other_jdks_go_nearest_first_the_newer_of_two_as_near(
    offered: tuple[int, ...], ran: int, order: list[int]
) -> None:
    assert gold_check.other_jdks(offered, ran) == order


@pytest.mark.parametrize(
    ("status", "compile_ok", "test_compile_ok", "failed"),
    [
        ("compile_error", False, None, True),
        ("test_compile_error", True, False, True),
        ("timeout:test-compile", True, None, False),  # the harness's error (update._raise_for_harness)
        ("ok", True, True, False),
        ("build_error", None, None, False),
    ],
)
def test_which_gold_runs_failed_to_compile(
    status: str, compile_ok: bool | None, test_compile_ok: bool | None, failed: bool
) -> None:
    run = SelectionRun(status=status, compile_ok=compile_ok, test_compile_ok=test_compile_ok)
    assert gold_check.compile_failed(run) is failed


#: JUnit Jupiter runs no private method, @Test or not: no test to its class's runner, though the
#: annotation makes it one of gold's changed test methods.
PRIVATE_TEST_V1 = """\
package org.tebench.order;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class CounterTest {
    @Test
    void countsOn() {
        assertEquals(2, Counter.next(1));
    }

    @Test
    private void countsTwice() {
        assertEquals(3, Counter.next(Counter.next(1)));
    }
}
"""


@pytest.mark.maven
def test_a_gold_test_jupiter_never_runs_leaves_the_selection_after_the_module_run(
    make_history: Callable[[str], History], pytester: pytest.Pytester
) -> None:
    v0_test = PRIVATE_TEST_V1.replace("(2, Counter", "(3, Counter").replace(
        "(3, Counter.next(C", "(5, Counter.next(C"
    )
    history, row = _counter_instance(make_history, PRIVATE_TEST_V1, v0_test)
    record = _gold_on_the_instance(pytester, history, row)
    update = record["update"]
    assert (record["status"], update["s_exec"]) == ("evaluated", 1.0), record["error"]
    # countsTwice ran neither by method nor by class nor in the module's whole test phase, where
    # countsOn did: it leaves gold's selection and the prediction's
    assert update["gold"]["not_tests"] == ["org.tebench.order.CounterTest#countsTwice"]
    assert update["gold"]["selection"] == ["org.tebench.order.CounterTest#countsOn"]
    assert update["selection"] == ["org.tebench.order.CounterTest#countsOn"]
    assert [t["status"] for t in update["tests"]] == ["passed"]


#: V-1's tests: ``countsOn`` pins ``Counter.next`` to counting by one; ``startsAtZero`` reads
#: nothing that changes.
DELETING_TEST_V1 = """\
package org.tebench.order;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class CounterTest {
    @Test
    void countsOn() {
        assertEquals(2, Counter.next(1));
    }

    @Test
    void startsAtZero() {
        assertEquals(0, 0);
    }
}
"""


@pytest.mark.maven
def test_gold_that_only_deletes_a_test_is_executable_when_its_code_compiles(
    make_history: Callable[[str], History], pytester: pytest.Pytester
) -> None:
    """commons-codec 427998a4 (2020, a revert): gold deletes the tests of the code it removes and
    changes no other. Its update runs nothing on V0, nor does its copy: executability is then the
    updated test code compiling, and gold's copy scores 1, not 0 (docs/scoring.md)."""
    v0_test = DELETING_TEST_V1.replace(
        "    @Test\n    void countsOn() {\n        assertEquals(2, Counter.next(1));\n    }\n\n", ""
    )
    assert "countsOn" not in v0_test
    history, row = _counter_instance(make_history, DELETING_TEST_V1, v0_test)
    record = _gold_on_the_instance(pytester, history, row)
    update = record["update"]
    assert record["status"] == "evaluated", record["error"]
    assert update["gold"]["selection"] == [] and update["selection"] == []
    assert update["status"] == "no_tests"
    # s_exec 1 (both trees compile), s_mod 1 (both delete countsOn), no coverage change: 1 x 1
    assert (update["s_exec"], update["s_mod"], update["gt_has_coverage_change"]) == (1.0, 1.0, False)
    assert update["s_update"] == 1.0


def test_a_probe_on_another_jdk_is_evidence_only_when_it_built_and_every_suspect_passed() -> None:
    assert (
        gold_check.probe_failure(_run(TestOutcome(FETCH, PASSED, 1), TestOutcome(PARSE, FAILED, 1)), [FETCH])
        == ""
    )
    assert gold_check.probe_failure(_run(FAILED_FETCH), [FETCH]) == (
        "org.jsoup.integration.ConnectTest#fetchURl failed: expected: <200> but was: <404>"
    )
    assert (
        gold_check.probe_failure(_run(), [FETCH])
        == "org.jsoup.integration.ConnectTest#fetchURl not_run: no result"
    )
    unbuilt = SelectionRun(status="test_compile_error", compile_ok=True, test_compile_ok=False)
    assert gold_check.probe_failure(unbuilt, [FETCH]) == "test_compile_error"
