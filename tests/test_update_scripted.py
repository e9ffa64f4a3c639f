"""Update scoring end to end through the plugin, with a scripted executor instead of Maven.

The executor (plugged in through ``pytest_tebench_make_executor`` in the run's conftest) answers
like Maven would: Surefire XML for the selected tests, the JaCoCo execution file, the ``-V``
banner. It lets the harness's own paths run for real: flaky gold tests, an empty selection,
a warm-up that fails and the evidence kept for it. Real Maven runs are in test_demo_update.py.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from conftest import History
from conftest import write_jsonl

MAIN = "src/main/java/p/Calc.java"
TEST = "src/test/java/p/CalcTest.java"
V2_TEST = "src/test/java/p/CalcV2Test.java"
CALC_TEST = """\
package p;

class CalcTest {
    @Test void adds() { check(1 + 1, 2); }
}
"""

CONFTEST = r"""
import json
import os
import re
from pathlib import Path

from pytest_tebench.run.executor import StepResult

BANNER = "Apache Maven 3.9.9 (8e8579a9e76f7d015ee5ec7bfcdc97d260186937)\n"
MISSING = (
    "[ERROR] Failed to execute goal on project calc: Could not resolve dependencies for project p:calc:jar:1: "
    "Cannot access central (https://repo.maven.apache.org/maven2) in offline mode and the artifact "
    "org.junit.jupiter:junit-jupiter:jar:5.10.2 has not been downloaded from it before. -> [Help 1]\n"
)
COUNTER = Path(__file__).parent / "flaky-runs"
STEPS = Path(__file__).parent / "steps.jsonl"
#: Scenario -> the selections whose selected tests fail: by method (-Dtest=C#m), by class
#: (-Dtest=C), or the module's whole test phase (no -Dtest).
FAILS_IN = {
    "failing": {"method", "class", "module"},
    "per-method": {"method"},
    "class-too": {"method", "class"},
}
#: How Surefire reports a test that could not resolve a host (JDK 17, Jsoup.connect in a sandbox
#: with no network): the exception's message is the host alone.
UNKNOWN_HOST = (
    "<error message='jsoup.org' type='java.net.UnknownHostException'>java.net.UnknownHostException: jsoup.org"
    "&#10;&#9;at java.base/sun.nio.ch.NioSocketImpl.connect(NioSocketImpl.java:567)"
    "&#10;&#9;at org.jsoup.helper.HttpConnection$Response.execute(HttpConnection.java:732)</error>"
)


def declared(workspace):
    # test class -> its @Test methods, read from the workspace's test sources
    found = {}
    for path in sorted((workspace / "src" / "test" / "java").rglob("*.java")):
        name = ".".join(path.relative_to(workspace / "src" / "test" / "java").with_suffix("").parts)
        found[name] = re.findall(r"@Test void (\w+)\(", path.read_text())
    return found


#: Scenario -> the steps whose test sources fail to compile: every one ("uncompilable"), only
#: the harness's one-launch `mvn test` ("launch-only"), or every one not on JDK 21 ("jdk-21").
UNCOMPILABLE = "uncompilable", "launch-only", "jdk-21"
TEST_COMPILE_FAILURE = (
    "[INFO] --- maven-compiler-plugin:3.13.0:testCompile (default-testCompile) @ calc ---\n"
    "[ERROR] COMPILATION ERROR : \n"
    "[ERROR] /w/src/test/java/p/CalcTest.java:[4,20] cannot find symbol\n"
    "[ERROR] Failed to execute goal org.apache.maven.plugins:maven-compiler-plugin:3.13.0:testCompile "
    "(default-testCompile) on project calc: Compilation failure\n"
)


def compiles(step, scenario):
    if scenario == "uncompilable":
        return False
    if scenario == "launch-only":
        return not step.name.startswith("compile+test")
    if scenario == "jdk-21":
        return step.java_version == 21
    return True


class ScriptedMaven:
    name = "scripted"

    def java_versions(self):
        return tuple(int(v) for v in os.environ.get("SCRIPTED_JDKS", "17").split(","))

    def toolchain(self):
        return "scripted"

    def run(self, workspace, step, *, maven_repo):
        def done(code, output="", timed_out=False):
            return StepResult(step.name, step.argv, code, timed_out, 0.5, output, runtime="scripted")

        if step.name.startswith("resolve-jacoco"):
            jar = {
                "agent": "org/jacoco/org.jacoco.agent/0.8.12/org.jacoco.agent-0.8.12-runtime.jar",
                "cli": "org/jacoco/org.jacoco.cli/0.8.12/org.jacoco.cli-0.8.12-nodeps.jar",
            }[step.name.rsplit("-", 1)[1]]
            (maven_repo / jar).parent.mkdir(parents=True, exist_ok=True)
            (maven_repo / jar).write_bytes(b"jar")
            return done(0)
        if os.environ.get("SCRIPTED_MAVEN") == "absent":
            if step.network:
                return done(1, "[ERROR] Non-resolvable import POM: org.apache.commons:commons-statistics-bom:pom:1.3 "
                               "was not found in https://repo.maven.apache.org/maven2 during a previous attempt. @ line 176\n")
            return done(1, BANNER + MISSING)
        if os.environ.get("SCRIPTED_MAVEN") == "unpublished":
            if step.network:
                return done(1, "[ERROR] Non-resolvable parent POM for p:calc:1: The following artifacts could not be "
                               "resolved: org.x:parent:pom:2-SNAPSHOT (absent): Could not find artifact "
                               "org.x:parent:pom:2-SNAPSHOT in central (https://repo.maven.apache.org/maven2)\n")
            return done(1, BANNER + MISSING)
        if os.environ.get("SCRIPTED_MAVEN") == "broken":
            if step.network:
                return done(1, "[INFO] Downloading from central\n[ERROR] Could not transfer artifact "
                               "org.apache:commons-parent:pom:70 from/to central: Connection reset\n")
            return done(1, BANNER + MISSING)
        if os.environ.get("SCRIPTED_UNREACHABLE_JDK") == str(step.java_version):
            # this JDK's build needs an artifact the repository lacks, and its warm-up cannot fetch it
            if step.network:
                return done(1, "[ERROR] Could not transfer artifact org.apache:commons-parent:pom:70 from/to "
                               "central: Connection reset\n")
            return done(1, BANNER + MISSING)
        if os.environ.get("SCRIPTED_MAVEN") in UNCOMPILABLE and step.name.startswith(("test-compile", "compile+test")):
            with STEPS.open("a") as log:
                log.write(json.dumps({"name": step.name, "java": step.java_version, "argv": list(step.argv)}) + "\n")
            if not compiles(step, os.environ["SCRIPTED_MAVEN"]):
                return done(1, BANNER + TEST_COMPILE_FAILURE)
        if os.environ.get("SCRIPTED_MAVEN") == "slow-compile" and step.name.startswith("compile+test"):
            return done(None, BANNER + "[INFO] --- maven-compiler-plugin:3.13.0:testCompile (default-testCompile) @ calc ---\n", True)
        if step.name in ("test-compile", "prebuild", "prebuild-tests"):  # the compiles stored once per tree
            return done(0, BANNER)
        if step.name == "effective-pom":
            output = workspace / next(a for a in step.argv if a.startswith("-Doutput="))[len("-Doutput="):]
            output.parent.mkdir(parents=True, exist_ok=True)
            output.write_text("<project><artifactId>calc</artifactId></project>")
            return done(0, BANNER)
        if os.environ.get("SCRIPTED_MAVEN") not in UNCOMPILABLE:
            with STEPS.open("a") as log:
                log.write(json.dumps({"argv": list(step.argv), "test_network": step.test_network}) + "\n")
        selector = next((a[len("-Dtest="):] for a in step.argv if a.startswith("-Dtest=")), None)
        tests = declared(workspace)
        if selector is None:
            mode, parts = "module", [f"{cls}#{'+'.join(ms)}" for cls, ms in tests.items()]
        elif "#" in selector:
            mode, parts = "method", selector.split(",")
        else:
            mode, parts = "class", [f"{cls}#{'+'.join(tests.get(cls, []))}" for cls in selector.split(",")]
        scenario = os.environ.get("SCRIPTED_MAVEN", "")
        reports = workspace / "target" / "surefire-reports"
        reports.mkdir(parents=True, exist_ok=True)
        # silent: Surefire ran and reported nothing of the selection (a selector that matched
        # nothing); method-silent: only selected by method, as JUnit 4's Parameterized under #m
        if scenario == "silent" or (scenario == "method-silent" and mode == "method"):
            return done(0, BANNER + "[INFO]  T E S T S\n[INFO] Tests run: 0, Failures: 0\n")
        for part in parts:
            cls, _, methods = part.partition("#")
            cases = []
            # m[*] selects JUnit 4 Parameterized invocations (steps.selectors): none here
            # a legacy* method is no test to its class's runner (a JUnit 4 @Test in a JUnit 3
            # TestCase): never run, however selected, while the rest of its class runs
            for method in (m for m in methods.split("+") if "[" not in m and not m.startswith("legacy")):
                failure = ""
                if mode in FAILS_IN.get(scenario, ()):
                    failure = "<failure message='expected: &lt;2&gt; but was: &lt;3&gt;'/>"
                if scenario == "unknown-host" and not step.test_network:
                    failure = UNKNOWN_HOST
                if "Flaky" in method:
                    runs = int(COUNTER.read_text()) if COUNTER.exists() else 0
                    COUNTER.write_text(str(runs + 1))
                    failure = "<failure message='unlucky'/>" if runs % 2 else ""
                cases.append(f"<testcase name='{method}' classname='{cls}'>{failure}</testcase>")
            (reports / f"TEST-{cls}.xml").write_text(f"<testsuite name='{cls}'>{''.join(cases)}</testsuite>")
        (workspace / "target" / "tebench-jacoco.exec").write_bytes(b"exec")
        return done(0, BANNER)

    def close(self):
        pass


def pytest_tebench_make_executor(config, name):
    return ScriptedMaven()
"""

#: A prediction for calc__two that only adds an import: no test method changes.
IMPORT_ONLY = """\
diff --git a/src/test/java/p/CalcTest.java b/src/test/java/p/CalcTest.java
--- a/src/test/java/p/CalcTest.java
+++ b/src/test/java/p/CalcTest.java
@@ -1,2 +1,3 @@
 package p;
+import java.util.List;
 
"""


@pytest.fixture
def bench(make_history: Callable[[str], History], pytester: pytest.Pytester) -> dict[str, Any]:
    h = make_history("calc")
    pom = "<project><modelVersion>4.0.0</modelVersion></project>\n"
    c0 = h.commit(
        {
            "pom.xml": pom,
            MAIN: "package p;\nclass Calc { int add(int a, int b) { return a + b; } }\n",
            TEST: CALC_TEST,
        }
    )
    c1 = h.commit(
        {
            MAIN: "package p;\nclass Calc { int add(int a, int b) { return b + a; } }\n",
            TEST: CALC_TEST.replace("check(1 + 1, 2)", "check(1 + 2, 3)").replace(
                "}\n}", "}\n\n    @Test void addsFlaky() { check(0 + 1, 1); }\n}"
            ),
        }
    )
    c2 = h.commit(
        {
            MAIN: "package p;\nclass Calc { long add(long a, long b) { return a + b; } }\n",
            V2_TEST: "package p;\n\nclass CalcV2Test {\n    @Test void addsLongs() { }\n}\n",
        }
    )
    rows = [
        # calc__one goes without labels: datasets made by other tools often have none
        h.instance_row(c0, c1, instance_id="calc__one", repo="acme/calc", labels=[]),
        h.instance_row(c1, c2, instance_id="calc__two", repo="acme/calc", labels=["missing"]),
    ]
    unlabeled = {key: value for key, value in rows[0].items() if key != "labels"}
    dataset = write_jsonl(pytester.path / "dataset.jsonl", [unlabeled, rows[1]])
    predictions = write_jsonl(
        pytester.path / "run.jsonl",
        [
            {"instance_id": "calc__one", "model_name_or_path": "m", "model_patch": rows[0]["test_patch"]},
            {"instance_id": "calc__two", "model_name_or_path": "m", "model_patch": IMPORT_ONLY},
        ],
    )
    pytester.makeconftest(CONFTEST)
    return {"dataset": dataset, "predictions": predictions, "repos": h.path.parent}


def _run(pytester: pytest.Pytester, bench: dict[str, Any], *extra: str) -> tuple[Any, dict[str, Any]]:
    report = pytester.path / "report.json"
    result = pytester.runpytest(
        f"--tebench-predictions={bench['predictions']}",
        f"--tebench-dataset={bench['dataset']}",
        f"--tebench-repos={bench['repos']}",
        f"--tebench-cache-dir={pytester.path / 'cache'}",
        "--tebench-offline",
        f"--tebench-report={report}",
        "-p",
        "no:cacheprovider",
        "-p",
        "no:xdist",
        *extra,
    )
    return result, json.loads(report.read_text())


def test_flaky_gold_tests_are_dropped_and_flagged(pytester: pytest.Pytester, bench: dict[str, Any]) -> None:
    result, report = _run(pytester, bench)
    records = {r["instance_id"]: r for r in report["results"]}
    one = records["calc__one"]["update"]
    # addsFlaky passed in gold's first run and failed in the second: flaky, out of every selection
    assert one["gold"]["flaky"] == ["p.CalcTest#addsFlaky"]
    assert one["gold"]["selection"] == ["p.CalcTest#adds"]
    assert one["selection"] == ["p.CalcTest#adds"] and one["s_exec"] == 1.0
    assert one["maven_version"] == "3.9.9"
    summary = report["summary"]["m"]
    assert summary["flaky_gold"] == ["calc__one"]
    assert summary["maven_versions"] == ["3.9.9"]
    # the unlabeled instance has its own row in the per-label tables
    assert summary["identification"]["by_label"]["unlabeled"]["items"] == 1
    result.stdout.fnmatch_lines(
        [
            "*builds ran on: scripted with Maven 3.9.9*",
            "*flaky gold tests were dropped from the selection of 1 instance(s): calc__one*",
            "*Unlabeled*",
        ]
    )


def test_one_gold_run_finds_no_flakiness(pytester: pytest.Pytester, bench: dict[str, Any]) -> None:
    _, report = _run(pytester, bench, "--tebench-gold-runs=1")
    one = next(r for r in report["results"] if r["instance_id"] == "calc__one")["update"]
    assert one["gold"]["flaky"] == [] and "p.CalcTest#addsFlaky" in one["gold"]["selection"]


def test_a_prediction_leaving_no_test_to_run_is_not_executable(
    pytester: pytest.Pytester, bench: dict[str, Any]
) -> None:
    # calc__two's gold only adds CalcV2Test#addsLongs; the prediction adds an import: nothing of
    # U exists in its tree, so no test runs on the changed code
    _, report = _run(pytester, bench)
    two = next(r for r in report["results"] if r["instance_id"] == "calc__two")
    assert two["status"] == "evaluated"
    update = two["update"]
    assert update["status"] == "no_tests" and update["selection"] == []
    assert (update["s_exec"], update["s_update"]) == (0.0, 0.0)


@pytest.mark.parametrize("keep", [True, False])
def test_a_failed_warm_up_keeps_its_evidence(
    pytester: pytest.Pytester, bench: dict[str, Any], monkeypatch: pytest.MonkeyPatch, keep: bool
) -> None:
    monkeypatch.setenv("SCRIPTED_MAVEN", "broken")
    result, report = _run(pytester, bench, *(["--tebench-keep-workspaces"] if keep else []))
    result.assert_outcomes(errors=2)
    record = next(r for r in report["results"] if r["instance_id"] == "calc__one")
    assert record["status"] == "error"
    assert record["error"].startswith(
        "cannot prepare the Maven repository for this project: warm-up test-compile"
    )
    # the build log's tail, and what the item spent before it failed
    assert "Could not transfer artifact org.apache:commons-parent:pom:70" in record["log_tail"]
    assert {"repository", "workspace", "offline_probe", "warmup", "total"} <= set(record["timings"])
    assert record["timings"]["warmup"] >= 0
    workspaces = pytester.path / "cache" / "workspaces"
    if keep:
        assert Path(record["workspace"]).is_dir() and (Path(record["workspace"]) / "pom.xml").is_file()
    else:
        assert "workspace" not in record and not any(workspaces.iterdir())
    out = result.stdout.str()
    assert "During handling of the above exception" not in out
    # the message once per item's error section (the short summary may repeat it, width permitting)
    sections = out.split("short test summary info")[0]
    assert sections.count("cannot prepare the Maven repository") == 2


def test_gold_tests_that_did_not_run_are_the_harness_error_not_the_instance(
    pytester: pytest.Pytester, bench: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SCRIPTED_MAVEN", "silent")
    result, report = _run(pytester, bench)
    result.assert_outcomes(errors=2)
    record = next(r for r in report["results"] if r["instance_id"] == "calc__one")
    assert record["status"] == "error"
    assert record["error"] == (
        "gold's selected tests did not run on V0, so nothing judged them: "
        "p.CalcTest#adds: Surefire reported no run of it (the selector matched no test method); "
        "p.CalcTest#addsFlaky: Surefire reported no run of it (the selector matched no test method)"
    )


def test_gold_tests_not_run_by_method_but_passing_by_class_select_by_class(
    pytester: pytest.Pytester, bench: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    # a runner Surefire's method filter cannot match: selected by method nothing runs, the whole
    # classes run and pass, so the instance selects by class (gold and the prediction)
    monkeypatch.setenv("SCRIPTED_MAVEN", "method-silent")
    result, report = _run(pytester, bench)
    result.assert_outcomes(passed=2)
    one = next(r for r in report["results"] if r["instance_id"] == "calc__one")
    assert one["status"] == "evaluated"
    gold = one["update"]["gold"]
    assert gold["selected_by"] == "class"
    assert gold["rule"].startswith(
        "gold's selected tests fail or do not run selected by method and pass when their whole classes run: "
        "p.CalcTest#adds not_run: Surefire reported no run of it (the selector matched no test method)"
    )
    assert one["update"]["selected_by"] == "class" and one["update"]["s_exec"] == 1.0
    selectors = [_selector(step["argv"]) for step in _steps(pytester)]
    assert None not in selectors  # the class run decided: no full module run


def test_gold_tests_failing_on_v0_make_an_invalid_instance_with_their_output(
    pytester: pytest.Pytester, bench: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SCRIPTED_MAVEN", "failing")
    record = _calc_one(pytester, bench)
    assert record["status"] == "invalid_instance"
    # addsFlaky passed once and failed once: flaky, out of the selection, not the instance's fault;
    # adds failed by method, by class, and in the module's full test run: the instance's fault
    assert record["error"] == (
        "gold fails its own selected tests on V0, in the module's full test run too: "
        "p.CalcTest#adds failed: expected: <2> but was: <3>"
    )
    selectors = [_selector(step["argv"]) for step in _steps(pytester)]
    assert selectors[:5] == [
        "p.CalcTest#adds+adds[*]+addsFlaky+addsFlaky[*]",  # gold's run, twice
        "p.CalcTest#adds+adds[*]+addsFlaky+addsFlaky[*]",
        "p.CalcTest#adds+adds[*]",  # without the flaky test
        "p.CalcTest",  # the whole class
        None,  # the module's whole test phase: no -Dtest
    ]


@pytest.mark.parametrize("jdks", ["17", "11,17,21"])
def test_gold_that_does_not_compile_anywhere_makes_an_invalid_instance_naming_every_build(
    pytester: pytest.Pytester, bench: dict[str, Any], monkeypatch: pytest.MonkeyPatch, jdks: str
) -> None:
    monkeypatch.setenv("SCRIPTED_MAVEN", "uncompilable")
    monkeypatch.setenv("SCRIPTED_JDKS", jdks)
    record = _calc_one(pytester, bench)
    assert record["status"] == "invalid_instance"
    chosen = int(jdks.split(",", maxsplit=1)[0])  # nothing in the POM asks for more: the oldest JDK here
    failed = (
        "gold does not compile on V0 (test_compile_error): [ERROR] Failed to execute goal "
        "org.apache.maven.plugins:maven-compiler-plugin:3.13.0:testCompile (default-testCompile) on project "
        "calc: Compilation failure: src/test/java/p/CalcTest.java:[4,20] cannot find symbol; a plain cold "
        f"`mvn test-compile` on JDK {chosen} fails too (test_compile_error)"
    )
    launches = _compiles(pytester)
    if jdks == "17":
        assert record["error"] == f"{failed}; no other JDK here to try"
        assert launches[:2] == [("compile+test", 17), ("test-compile", 17)]
    else:
        # the nearest JDK first
        assert record["error"] == (
            f"{failed}, and so does gold's run on JDK 17 (test_compile_error), JDK 21 (test_compile_error)"
        )
        assert launches[:4] == [
            ("compile+test", 11),
            ("test-compile", 11),
            ("compile+test", 17),
            ("compile+test", 21),
        ]


def test_gold_compiling_on_another_jdk_takes_that_jdk_for_gold_and_predictions(
    pytester: pytest.Pytester, bench: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SCRIPTED_MAVEN", "jdk-21")
    monkeypatch.setenv("SCRIPTED_JDKS", "11,17,21")
    record = _calc_one(pytester, bench)
    assert record["status"] == "evaluated", record["error"]
    assert record["update"]["java_version"] == 21
    assert record["update"]["s_exec"] == 1.0
    launches = _compiles(pytester)
    # gold's launch on 11, the plain compile on 11, gold on 17, gold on 21 (compiles: kept),
    # then gold's repeated run and the prediction's launch on gold's JDK (calc__two's ladder next)
    assert launches[:6] == [
        ("compile+test", 11),
        ("test-compile", 11),
        ("compile+test", 17),
        ("compile+test", 21),
        ("compile+test", 21),
        ("compile+test", 21),
    ]
    gold = _gold_record(pytester)
    assert gold["java_version"] == 21
    assert gold["run"]["jdk_retry"].startswith(
        "JDK 21: gold does not compile on JDK 11 (test_compile_error: [ERROR] Failed to execute goal "
    )
    assert gold["run"]["jdk_retry"].endswith(
        "Compilation failure: src/test/java/p/CalcTest.java:[4,20] cannot find symbol); not on JDK 17 either "
        "(test_compile_error); it does on JDK 21"
    )


def test_a_jdk_whose_build_cannot_be_prepared_is_no_evidence_and_the_next_one_is_tried(
    pytester: pytest.Pytester, bench: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SCRIPTED_MAVEN", "jdk-21")
    monkeypatch.setenv("SCRIPTED_JDKS", "11,17,21")
    monkeypatch.setenv("SCRIPTED_UNREACHABLE_JDK", "17")
    record = _calc_one(pytester, bench)
    assert record["status"] == "evaluated", record["error"]
    assert record["update"]["java_version"] == 21
    gold = _gold_record(pytester)
    assert gold["run"]["jdk_retry"].endswith(
        "Compilation failure: src/test/java/p/CalcTest.java:[4,20] cannot find symbol); not on JDK 17 either (not built: cannot prepare the Maven repository for this "
        "project: warm-up test-compile failed: [ERROR] Could not transfer artifact org.apache:commons-parent:pom:70 "
        "from/to central: Connection reset); it does on JDK 21"
    )


def test_gold_compiling_only_in_a_plain_build_is_the_harness_error(
    pytester: pytest.Pytester, bench: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SCRIPTED_MAVEN", "launch-only")
    monkeypatch.setenv("SCRIPTED_JDKS", "11,17")
    record = _calc_one(pytester, bench)
    assert record["status"] == "error"
    assert record["error"].startswith(
        "gold does not compile in the harness's launch on V0 (test_compile_error: [ERROR] Failed to execute goal "
    )
    assert record["error"].endswith(
        "but does in a plain cold `mvn test-compile` on JDK 11 (nothing stored reused, no warm Maven JVM): "
        "the harness's build is at fault, not the instance"
    )
    # the plain build decided: no other JDK was tried
    assert _compiles(pytester)[:2] == [("compile+test", 11), ("test-compile", 11)]
    assert ("compile+test", 17) not in _compiles(pytester)


def test_gold_running_out_of_time_compiling_is_the_harness_error_not_an_invalid_instance(
    pytester: pytest.Pytester, bench: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SCRIPTED_MAVEN", "slow-compile")
    _, report = _run(pytester, bench, "--tebench-timeout-compile=90")
    record = next(r for r in report["results"] if r["instance_id"] == "calc__one")
    assert record["status"] == "error"
    assert record["error"] == (
        "gold build on V0 failed for harness reasons (timeout:test-compile): timed out after 0 s during test-compile"
    )


@pytest.mark.parametrize("legacy_only", [False, True])
def test_a_gold_test_its_class_s_runner_never_runs_leaves_every_selection(
    make_history: Callable[[str], History], pytester: pytest.Pytester, legacy_only: bool
) -> None:
    h = make_history("calc")
    pom = "<project><modelVersion>4.0.0</modelVersion></project>\n"
    test = "package p;\n\nclass CalcTest {\n    @Test void adds() { check(1); }\n\n    @Test void legacyAdds() { check(1); }\n}\n"
    c0 = h.commit(
        {
            "pom.xml": pom,
            MAIN: "package p;\nclass Calc { int add(int a, int b) { return a + b; } }\n",
            TEST: test,
        }
    )
    changed = test.replace("legacyAdds() { check(1); }", "legacyAdds() { check(2); }")
    if not legacy_only:
        changed = changed.replace("adds() { check(1); }", "adds() { check(3); }")
    c1 = h.commit(
        {MAIN: "package p;\nclass Calc { int add(int a, int b) { return b + a; } }\n", TEST: changed}
    )
    row = h.instance_row(c0, c1, instance_id="calc__legacy", repo="acme/calc", labels=["stale"])
    bench = {
        "dataset": write_jsonl(pytester.path / "dataset.jsonl", [row]),
        "predictions": write_jsonl(
            pytester.path / "run.jsonl",
            [{"instance_id": "calc__legacy", "model_name_or_path": "m", "model_patch": row["test_patch"]}],
        ),
        "repos": h.path.parent,
    }
    pytester.makeconftest(CONFTEST)
    result, report = _run(pytester, bench)
    (record,) = report["results"]
    selectors = [_selector(step["argv"]) for step in _steps(pytester)]
    if legacy_only:
        assert record["status"] == "invalid_instance"
        assert record["error"] == (
            "none of gold's selected tests runs in the project's own build: p.CalcTest#legacyAdds (its class "
            "runs in the module's full test run and it does not: no test to the class's runner)"
        )
        # by method (twice: the flakiness run), by class, the module's whole test phase
        assert selectors == ["p.CalcTest#legacyAdds+legacyAdds[*]"] * 2 + ["p.CalcTest", None]
        return
    assert record["status"] == "evaluated", record["error"]
    update = record["update"]
    assert update["gold"]["not_tests"] == ["p.CalcTest#legacyAdds"]
    assert update["gold"]["selection"] == ["p.CalcTest#adds"]
    assert update["selection"] == ["p.CalcTest#adds"] and update["s_exec"] == 1.0
    assert report["summary"]["m"]["not_tests_gold"] == ["calc__legacy"]
    result.stdout.fnmatch_lines(
        [
            "*gold tests the project's build never runs were left out of the selection of 1 instance(s): calc__legacy*"
        ]
    )
    assert selectors == [
        "p.CalcTest#adds+adds[*]+legacyAdds+legacyAdds[*]",  # gold by method, twice
        "p.CalcTest#adds+adds[*]+legacyAdds+legacyAdds[*]",
        "p.CalcTest",  # by class: adds runs, legacyAdds does not
        None,  # the module's whole test phase: the class runs, legacyAdds does not
        "p.CalcTest#adds+adds[*]",  # gold again without it, twice
        "p.CalcTest#adds+adds[*]",
        "p.CalcTest#adds+adds[*]",  # the prediction: gold's copy, legacyAdds left out
    ]


def _calc_one(pytester: pytest.Pytester, bench: dict[str, Any]) -> dict[str, Any]:
    """Run the bench; calc__one's record."""
    _, report = _run(pytester, bench)
    return next(r for r in report["results"] if r["instance_id"] == "calc__one")


def _gold_record(pytester: pytest.Pytester) -> dict[str, Any]:
    """The one gold record the run stored (calc__one's)."""
    records = [json.loads(path.read_text()) for path in (pytester.path / "cache").rglob("gold/*.json")]
    return next(r for r in records if r.get("selection") is not None and "run" in r)


def _compiles(pytester: pytest.Pytester) -> list[tuple[str, int]]:
    """The compiling launches the scripted Maven saw, in order, with their JDKs; a launch the
    harness repeats on its own (``compile+test-again``: its stored builds left out) not listed."""
    return [(s["name"], s["java"]) for s in _steps(pytester) if not s["name"].endswith("-again")]


def _steps(pytester: pytest.Pytester) -> list[dict[str, Any]]:
    """The test launches the scripted Maven saw, in order."""
    lines = (pytester.path / "steps.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


def _selector(argv: list[str]) -> str | None:
    return next((a.removeprefix("-Dtest=") for a in argv if a.startswith("-Dtest=")), None)


def test_gold_failing_only_selected_by_method_selects_by_class_for_gold_and_predictions(
    pytester: pytest.Pytester, bench: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    # as Surefire < 2.19 runs a class's selected methods one JUnit request each: @BeforeClass per method
    monkeypatch.setenv("SCRIPTED_MAVEN", "per-method")
    result, report = _run(pytester, bench)
    result.assert_outcomes(passed=2)
    one = next(r for r in report["results"] if r["instance_id"] == "calc__one")
    assert one["status"] == "evaluated"
    gold = one["update"]["gold"]
    assert gold["selected_by"] == "class"
    assert gold["rule"] == (
        "gold's selected tests fail selected by method and pass when their whole classes run: "
        "p.CalcTest#adds failed: expected: <2> but was: <3>"
    )
    # the class runs are gold's reference now: addsFlaky still flaky there, adds passes
    assert gold["flaky"] == ["p.CalcTest#addsFlaky"] and gold["selection"] == ["p.CalcTest#adds"]
    # the prediction runs its tests by class too, and passes
    assert one["update"]["selected_by"] == "class" and one["update"]["s_exec"] == 1.0
    selectors = [_selector(step["argv"]) for step in _steps(pytester)]
    # no launch after the check selects a method of CalcTest
    assert not any(s and s.startswith("p.CalcTest#") for s in selectors[3:])
    assert None not in selectors  # the class rule decided: no full module run was needed
    stored = [json.loads(p.read_text()) for p in (pytester.path / "cache" / "gold").glob("*.json")]
    assert {r["selected_by"] for r in stored if r["selection"] == ["p.CalcTest#adds"]} == {"class"}


def test_gold_failing_by_class_but_passing_in_the_module_run_is_the_harness_error(
    pytester: pytest.Pytester, bench: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SCRIPTED_MAVEN", "class-too")
    result, report = _run(pytester, bench)
    result.assert_outcomes(errors=2)
    one = next(r for r in report["results"] if r["instance_id"] == "calc__one")
    assert one["status"] == "error"  # never invalid_instance: the project's own run passes
    assert one["error"] == (
        "gold's selected tests fail as the harness selects them (selected by method: p.CalcTest#adds "
        "failed: expected: <2> but was: <3>; selected by class: p.CalcTest#adds failed: expected: <2> "
        "but was: <3>) and pass in the module's full test run (p.CalcTest#adds passed): the harness's "
        "selection is at fault, not the instance"
    )
    # the verdict is stored with gold's record: a second run repeats it without building again
    launches = len(_steps(pytester))
    result, report = _run(pytester, bench)
    result.assert_outcomes(errors=2)
    assert len(_steps(pytester)) == launches
    assert next(r for r in report["results"] if r["instance_id"] == "calc__one")["error"] == one["error"]


def test_gold_needing_an_external_host_is_unsupported_unless_the_network_is_allowed(
    pytester: pytest.Pytester, bench: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SCRIPTED_MAVEN", "unknown-host")
    result, report = _run(pytester, bench)
    result.assert_outcomes(skipped=2)
    one = next(r for r in report["results"] if r["instance_id"] == "calc__one")
    assert one["status"] == "unsupported_environment"
    assert one["error"] == (
        "gold's selected tests need an external host: jsoup.org (p.CalcTest#adds); "
        "the sandbox has no network (evaluation's --tebench-network, tebench build's --network, lets the "
        "tests use it)"
    )
    assert report["tests_network"] is False
    # no rerun by class or module: a host is not a selection's doing
    assert all(_selector(step["argv"]) != "p.CalcTest" for step in _steps(pytester))
    # with the network allowed, gold and predictions run with it, and the instance is scored
    result, report = _run(pytester, bench, "--tebench-network")
    result.assert_outcomes(passed=2)
    assert report["tests_network"] is True
    launched = _steps(pytester)[-1]
    assert launched["test_network"] is True


def test_a_build_needing_artifacts_no_repository_has_is_named_unbuildable(
    pytester: pytest.Pytester, bench: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SCRIPTED_MAVEN", "absent")
    result, report = _run(pytester, bench)
    result.assert_outcomes(skipped=2)  # as SWE-bench's unsupported environments: neither scored nor failed
    record = next(r for r in report["results"] if r["instance_id"] == "calc__one")
    assert record["status"] == "unsupported_environment"
    assert record["error"] == (
        "unbuildable here: the build needs artifacts published in no repository reachable from here: "
        "org.apache.commons:commons-statistics-bom:pom:1.3"
    )


def test_an_artifact_published_nowhere_makes_the_instance_unsupported(
    pytester: pytest.Pytester, bench: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SCRIPTED_MAVEN", "unpublished")
    result, report = _run(pytester, bench)
    # a fact about the instances' environment: skipped, never a score and never a harness error
    result.assert_outcomes(skipped=2)
    record = next(r for r in report["results"] if r["instance_id"] == "calc__one")
    assert record["status"] == "unsupported_environment"
    assert record["error"] == (
        "unbuildable here: the build needs artifacts published in no repository reachable from here: "
        "org.x:parent:pom:2-SNAPSHOT"
    )
    assert report["summary"]["m"]["counts"]["unsupported"] == 2
