"""A scripted executor for update scoring through the plugin, and the bench it evaluates.

The executor (plugged in through ``pytest_tebench_make_executor`` in the run's conftest,
:data:`CONFTEST`) answers like Maven would: Surefire XML for the selected tests, the JaCoCo
execution file, the ``-V`` banner; ``SCRIPTED_MAVEN`` names its scenario, ``SCRIPTED_JDKS`` the
JDKs it offers, ``SCRIPTED_FAILING_JDKS`` those on which every selected test fails. It lets the harness's own paths run for real: flaky gold tests, an empty
selection, a warm-up that fails and the evidence kept for it, every check of gold on V0. Used by
test_update_scripted.py, test_gold_check_scripted.py and test_builder.py; real Maven runs are in
test_demo_update.py and test_gold_check.py.
"""

from __future__ import annotations

import json
from collections.abc import Callable
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


#: How Surefire reports a test that ran out of the build's heap (JDK 17).
OUT_OF_MEMORY = (
    "<error message='Java heap space' type='java.lang.OutOfMemoryError'>java.lang.OutOfMemoryError: "
    "Java heap space&#10;&#9;at p.CalcTest.adds(CalcTest.java:4)</error>"
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
                log.write(json.dumps({"argv": list(step.argv), "java_version": step.java_version, "test_network": step.test_network}) + "\n")
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
            if "$Never" in cls:
                # an inner class no run ever reports: Surefire's default excludes leave inner
                # classes out of the module's run, and JUnit 5 runs no non-@Nested inner class
                continue
            cases = []
            # m[*] selects JUnit 4 Parameterized invocations (steps.selectors): none here
            # a legacy* method is no test to its class's runner (a JUnit 4 @Test in a JUnit 3
            # TestCase): never run, however selected, while the rest of its class runs
            for method in (m for m in methods.split("+") if "[" not in m and not m.startswith("legacy")):
                failure = ""
                failing_jdks = os.environ.get("SCRIPTED_FAILING_JDKS", "").split(",")
                if mode in FAILS_IN.get(scenario, ()) or str(step.java_version) in failing_jdks:
                    failure = "<failure message='expected: &lt;2&gt; but was: &lt;3&gt;'/>"
                if scenario == "unknown-host" and not step.test_network:
                    failure = UNKNOWN_HOST
                if scenario == "out-of-memory":
                    failure = OUT_OF_MEMORY
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


def make_bench(make_history: Callable[[str], History], pytester: pytest.Pytester) -> dict[str, Any]:
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


def run_bench(pytester: pytest.Pytester, bench: dict[str, Any], *extra: str) -> tuple[Any, dict[str, Any]]:
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


def calc_one(pytester: pytest.Pytester, bench: dict[str, Any]) -> dict[str, Any]:
    """Run the bench; calc__one's record."""
    _, report = run_bench(pytester, bench)
    return next(r for r in report["results"] if r["instance_id"] == "calc__one")


def gold_record(pytester: pytest.Pytester) -> dict[str, Any]:
    """The one gold record the run stored (calc__one's)."""
    records = [json.loads(path.read_text()) for path in (pytester.path / "cache").rglob("gold/*.json")]
    return next(r for r in records if r.get("selection") is not None and "run" in r)


def compiles_seen(pytester: pytest.Pytester) -> list[tuple[str, int]]:
    """The compiling launches the scripted Maven saw, in order, with their JDKs; a launch the
    harness repeats on its own (``compile+test-again``: its stored builds left out) not listed."""
    return [(s["name"], s["java"]) for s in steps_seen(pytester) if not s["name"].endswith("-again")]


def steps_seen(pytester: pytest.Pytester) -> list[dict[str, Any]]:
    """The test launches the scripted Maven saw, in order."""
    lines = (pytester.path / "steps.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


def selector(argv: list[str]) -> str | None:
    return next((a.removeprefix("-Dtest=") for a in argv if a.startswith("-Dtest=")), None)
