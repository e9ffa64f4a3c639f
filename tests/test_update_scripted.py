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


class ScriptedMaven:
    name = "scripted"

    def java_versions(self):
        return (17,)

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
        if step.name in ("test-compile", "prebuild"):  # prebuild: the production compile, once per tree
            return done(0, BANNER)
        if step.name == "effective-pom":
            output = workspace / next(a for a in step.argv if a.startswith("-Doutput="))[len("-Doutput="):]
            output.parent.mkdir(parents=True, exist_ok=True)
            output.write_text("<project><artifactId>calc</artifactId></project>")
            return done(0, BANNER)
        selector = next(a for a in step.argv if a.startswith("-Dtest="))[len("-Dtest="):]
        reports = workspace / "target" / "surefire-reports"
        reports.mkdir(parents=True, exist_ok=True)
        if os.environ.get("SCRIPTED_MAVEN") == "silent":
            # Surefire ran, and reported nothing of the selection (a selector that matched nothing)
            return done(0, BANNER + "[INFO]  T E S T S\n[INFO] Tests run: 0, Failures: 0\n")
        for part in selector.split(","):
            cls, _, methods = part.partition("#")
            cases = []
            for method in methods.split("+"):
                failure = ""
                if os.environ.get("SCRIPTED_MAVEN") == "failing":
                    failure = "<failure message='expected: &lt;2&gt; but was: &lt;3&gt;'/>"
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


def test_gold_tests_failing_on_v0_make_an_invalid_instance_with_their_output(
    pytester: pytest.Pytester, bench: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SCRIPTED_MAVEN", "failing")
    _, report = _run(pytester, bench)
    record = next(r for r in report["results"] if r["instance_id"] == "calc__one")
    assert record["status"] == "invalid_instance"
    # addsFlaky passed once and failed once: flaky, out of the selection, not the instance's fault
    assert record["error"] == (
        "gold fails its own selected tests on V0: p.CalcTest#adds failed: expected: <2> but was: <3>"
    )


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
