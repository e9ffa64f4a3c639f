"""TEBench on a multi-module Maven reactor (tests/fixtures/mini-reactor): a parent POM, ``core``
and ``app`` depending on it; the commit changes core's ``Ops.clamp`` and app's test of it.

Hand computations (line numbers of ``core/src/main/java/org/tebench/core/Ops.java`` at V-0.5):

S = {``Ops#clamp``}, lines 7-15. Lines holding code, with JaCoCo's branches:
8 ``low > high`` (2), 9 ``throw``, 11 ``value < low`` (2), 12 ``return low``, 14 ``value > high``
(2).

* gold runs ``clampsBelow`` (clamp(0, 1, 5): 8 false, 11 true, 12; clamp(9, 1, 5): 8 false,
  11 false, 14 true) and ``rejectsInvertedBounds`` (clamp(0, 5, 1): 8 true, 9). Covered lines
  {8, 9, 11, 12, 14} = 5; covered branches 2 (line 8) + 2 (line 11) + 1 (line 14) = 5.
* ``partial`` leaves ``clampsBelow`` as it is (clamp(0, 1, 5) only) and adds gold's
  ``rejectsInvertedBounds``. Covered lines {8, 9, 11, 12}: s_line = 4/5 = 0.8. Branches:
  min(2, 2) + min(1, 2) + min(0, 1) = 3: s_branch = 3/5 = 0.6.
  s_mod over U = {clampsBelow, rejectsInvertedBounds}: clampsBelow at V-0.5 has 24 tokens
  (``@ Test void clampsBelow ( ) { assertEquals ( 1 , Ops . clamp ( 0 , 1 , 5 ) ) ; }``), gold's
  adds the 16 of ``assertEquals ( 5 , Ops . clamp ( 9 , 1 , 5 ) ) ;``, so the multiset Jaccard
  is 24/40 = 0.6; rejectsInvertedBounds is gold's: 1. s_mod = 0.8. Both tests pass: s_exec = 1.
  s_update = 0.3 x 0.8 + 0.3 x 0.6 + 0.4 x 0.8 = 0.74.
  Identification: gold's items are clampsBelow (modified) and ClampTest.java (tests added);
  partial names only the file: P = 1, R = 1/2, F1 = 2/3.
* ``broken`` is gold with ``clamp(9, 1, 5)`` expected to be 9: clampsBelow fails, s_exec = 0.5,
  and coverage is measured as it ran (every line of gold's, same branches): s_line = s_branch = 1,
  s_mod: clampsBelow differs from gold by one token ``9`` for ``5``: 39 shared of 41 = 39/41;
  s_mod = (39/41 + 1)/2 = 40/41; s_update = 0.5 x (0.3 + 0.3 + 0.4 x 40/41) = 0.5 x (0.6 + 16/41).
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pytest_tebench.java.shadowing import shadowing_classes
from pytest_tebench.run.maven.reactor import Reactor
from pytest_tebench.run.maven.reactor import read_reactor
from pytest_tebench.run.maven.surefire import TestId
from pytest_tebench.workspace.layout import MAVEN

from conftest import TEST_MAVEN_REPO
from conftest import History
from conftest import write_jsonl

FIXTURE = Path(__file__).parent / "fixtures" / "mini-reactor"
OPS = "core/src/main/java/org/tebench/core/Ops.java"
CLAMP_TEST = "app/src/test/java/org/tebench/app/ClampTest.java"
SCORES = ("s_exec", "s_line", "s_branch", "s_mod", "s_update")

OPS_V0 = """\
package org.tebench.core;

public final class Ops {
    private Ops() {
    }

    public static int clamp(int value, int low, int high) {
        if (low > high) {
            throw new IllegalArgumentException("low > high");
        }
        if (value < low) {
            return low;
        }
        return value > high ? high : value;
    }
}
"""
REJECTS = """
    @Test
    void rejectsInvertedBounds() {
        assertThrows(IllegalArgumentException.class, () -> Ops.clamp(0, 5, 1));
    }
"""


def _test_v0(base: str) -> str:
    return (
        base.replace(
            "import static org.junit.jupiter.api.Assertions.assertEquals;\n",
            "import static org.junit.jupiter.api.Assertions.assertEquals;\n"
            "import static org.junit.jupiter.api.Assertions.assertThrows;\n",
        )
        .replace(
            "assertEquals(1, Ops.clamp(0, 1, 5));\n",
            "assertEquals(1, Ops.clamp(0, 1, 5));\n        assertEquals(5, Ops.clamp(9, 1, 5));\n",
        )
        .rstrip()[:-1]
        + REJECTS
        + "}\n"
    )


def _files(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): p.read_text() for p in sorted(root.rglob("*")) if p.is_file()}


def test_modules_and_where_tests_live() -> None:
    reactor = read_reactor(FIXTURE)
    assert reactor == Reactor(("", "core", "app"))
    assert reactor.module_of(OPS) == "core" and reactor.module_of("pom.xml") == ""
    assert reactor.module_of("application/x") == ""  # a prefix of a name is no module
    # the layout's own notion: the directory holding a source tree's src/
    assert (MAVEN.module_root(OPS), MAVEN.module_root(CLAMP_TEST)) == ("core", "app")
    assert MAVEN.is_test_path(CLAMP_TEST) and MAVEN.is_production_java(OPS)
    assert reactor.dirs("target/classes") == ("target/classes", "core/target/classes", "app/target/classes")
    clamp = TestId("org.tebench.app.ClampTest", "clampsBelow")
    assert reactor.test_module(FIXTURE, clamp) == "app"
    assert reactor.test_module(FIXTURE, TestId("org.tebench.app.ClampTest$Nested", "x")) == "app"
    assert reactor.test_module(FIXTURE, TestId("org.tebench.app.Nope", "x")) is None
    assert reactor.scope_args(FIXTURE, [clamp]) == ("-pl", "app", "-am")
    # nothing located: the whole reactor builds; a single-module build gets no scope at all
    assert reactor.scope_args(FIXTURE, [TestId("org.tebench.app.Nope", "x")]) == ()
    mini = FIXTURE.parent / "mini-maven"
    assert read_reactor(mini) == Reactor(("",))
    assert read_reactor(mini).scope_args(mini, [TestId("org.tebench.textkit.SlugTest", "x")]) == ()


def test_modules_leaving_the_workspace_or_missing_are_ignored(tmp_path: Path) -> None:
    (tmp_path / "pom.xml").write_text(
        "<project><modules><module>../outside</module><module>gone</module>"
        "<module>sub/pom.xml</module></modules></project>"
    )
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "pom.xml").write_text("<project><modules><module>inner</module></modules></project>")
    (tmp_path / "sub" / "inner").mkdir()
    (tmp_path / "sub" / "inner" / "pom.xml").write_text("<project/>")
    assert read_reactor(tmp_path).modules == ("", "sub", "sub/inner")


def test_a_test_source_shadowing_another_modules_class_is_found(tmp_path: Path) -> None:
    # app's tests see core's main classes: a test source declaring org.tebench.core.Ops replaces it
    shutil.copytree(FIXTURE, tmp_path / "r")
    shadow = "app/src/test/java/org/tebench/core/Ops.java"
    (tmp_path / "r" / shadow).parent.mkdir(parents=True)
    (tmp_path / "r" / shadow).write_text("package org.tebench.core;\npublic final class Ops {}\n")
    assert shadowing_classes(tmp_path / "r", [shadow, CLAMP_TEST]) == [
        f"{shadow}: org.tebench.core.Ops is a production class"
    ]


@pytest.fixture
def reactor_bench(make_history: Callable[[str], History], pytester: pytest.Pytester) -> dict[str, Any]:
    history = make_history("mini-reactor")
    base = _files(FIXTURE)
    v1 = history.commit(base, "reactor at V-1")
    gold_test = _test_v0(base[CLAMP_TEST])
    v0 = history.commit({OPS: OPS_V0, CLAMP_TEST: gold_test}, "clamp rejects inverted bounds")
    row = history.instance_row(
        v1, v0, instance_id="mini-reactor__one", repo="tebench/mini-reactor", labels=[]
    )
    assert "core/src/main/java" in str(row["source_patch"]) and "core/" not in str(row["test_patch"])
    partial = _test_v0(base[CLAMP_TEST]).replace("        assertEquals(5, Ops.clamp(9, 1, 5));\n", "")
    broken = gold_test.replace("assertEquals(5, Ops.clamp(9", "assertEquals(9, Ops.clamp(9")
    predictions = [
        {"instance_id": "mini-reactor__one", "model_name_or_path": "gold", "model_patch": row["test_patch"]}
    ]
    for name, text in (("partial", partial), ("broken", broken)):
        predictions.append(
            {
                "instance_id": "mini-reactor__one",
                "model_name_or_path": name,
                "model_patch": _patch(base[CLAMP_TEST], text),
            }
        )
    return {
        "dataset": write_jsonl(pytester.path / "dataset.jsonl", [row]),
        "predictions": write_jsonl(pytester.path / "run.jsonl", predictions),
        "repos": history.path.parent,
    }


def _patch(old: str, new: str) -> str:
    import difflib

    lines = difflib.unified_diff(
        old.splitlines(keepends=True), new.splitlines(keepends=True), f"a/{CLAMP_TEST}", f"b/{CLAMP_TEST}"
    )
    return f"diff --git a/{CLAMP_TEST} b/{CLAMP_TEST}\n" + "".join(lines)


@pytest.mark.maven
@pytest.mark.parametrize("executor", ["local", pytest.param("docker", marks=pytest.mark.docker)])
def test_update_metrics_on_a_reactor_match_the_hand_computation(
    pytester: pytest.Pytester, reactor_bench: dict[str, Any], executor: str
) -> None:
    report_path = pytester.path / "report.json"
    result = pytester.runpytest(
        f"--tebench-predictions={reactor_bench['predictions']}",
        f"--tebench-dataset={reactor_bench['dataset']}",
        f"--tebench-repos={reactor_bench['repos']}",
        f"--tebench-cache-dir={pytester.path / 'cache'}",
        f"--tebench-maven-repo={TEST_MAVEN_REPO}",
        "--tebench-offline",
        f"--tebench-executor={executor}",
        f"--tebench-report={report_path}",
        "-p",
        "no:cacheprovider",
        "-p",
        "no:xdist",
    )
    report = json.loads(report_path.read_text())
    records = {r["model_name_or_path"]: r for r in report["results"]}
    assert {m: r["status"] for m, r in records.items()} == dict.fromkeys(
        ("gold", "partial", "broken"), "evaluated"
    )
    result.assert_outcomes(passed=3)

    gold = records["gold"]["update"]
    assert {r["update"]["executor"] for r in records.values()} == {executor}
    assert [gold[s] for s in SCORES] == [1.0] * 5
    # gold's tests live in app, the changed method in core: the run built core through app
    assert gold["selection"] == [
        "org.tebench.app.ClampTest#clampsBelow",
        "org.tebench.app.ClampTest#rejectsInvertedBounds",
    ]
    assert (gold["coverage"]["gold_lines"], gold["coverage"]["gold_branches"]) == (5, 5)
    assert [m["key"] for m in gold["coverage"]["changed_methods"]] == ["Ops#clamp"]
    assert records["gold"]["identification"]["f1"] == 1.0

    partial = records["partial"]["update"]
    assert (partial["coverage"]["pred_lines_in_gold"], partial["coverage"]["pred_branches_in_gold"]) == (4, 3)
    assert partial["s_exec"] == 1.0
    assert partial["s_line"] == pytest.approx(0.8)
    assert partial["s_branch"] == pytest.approx(0.6)
    assert partial["s_mod"] == pytest.approx(0.8)
    assert partial["s_update"] == pytest.approx(0.74)
    ident = records["partial"]["identification"]
    assert (ident["precision"], ident["recall"]) == (1.0, 0.5)
    assert ident["f1"] == pytest.approx(2 / 3)

    broken = records["broken"]["update"]
    outcomes = {t["method"]: t["status"] for t in broken["tests"]}
    assert outcomes == {"clampsBelow": "failed", "rejectsInvertedBounds": "passed"}
    assert (broken["s_exec"], broken["s_line"], broken["s_branch"]) == (0.5, 1.0, 1.0)
    assert broken["s_mod"] == pytest.approx(40 / 41)
    assert broken["s_update"] == pytest.approx(0.5 * (0.6 + 16 / 41))


def test_modules_of_active_profiles(tmp_path: Path) -> None:
    def profile(ident: str, activation: str, module: str) -> str:
        return (
            f"<profile><id>{ident}</id><activation>{activation}</activation>"
            f"<modules><module>{module}</module></modules></profile>"
        )

    poms = {
        "pom.xml": "<project><modules><module>core</module></modules><profiles>"
        + profile("extras", "<activeByDefault>true</activeByDefault>", "extras")
        + profile("java11", "<jdk>[11,)</jdk>", "jpms")
        + profile("release", "<property><name>release</name></property>", "dist")
        + profile("docs", "", "docs")
        + "</profiles></project>",
        # a module's own profile: only by default
        "core/pom.xml": "<project><profiles>"
        + profile("bench", "<activeByDefault>true</activeByDefault>", "bench")
        + "</profiles></project>",
    }
    for name in ("core", "extras", "jpms", "dist", "docs", "core/bench"):
        poms[f"{name}/pom.xml"] = poms.get(f"{name}/pom.xml", "<project/>")
    for name, text in poms.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    # JDK 8: no JDK profile is active, so the activeByDefault one is
    assert read_reactor(tmp_path, 8).modules == ("", "core", "extras", "core/bench")
    # JDK 11 activates java11, which switches activeByDefault off in that POM (Maven's rule)
    assert read_reactor(tmp_path, 11).modules == ("", "core", "jpms", "core/bench")
    # without a JDK: the modules of a build on any JDK (for cleaning and reading reports)
    assert read_reactor(tmp_path).modules == ("", "core", "extras", "jpms", "core/bench")
    # -P in .mvn/maven.config
    (tmp_path / ".mvn").mkdir()
    (tmp_path / ".mvn" / "maven.config").write_text("-Pdocs\n")
    assert read_reactor(tmp_path, 8).modules == ("", "core", "docs", "core/bench")
    # a property of the command line activates release (and so switches extras off on JDK 8)
    (tmp_path / ".mvn" / "maven.config").write_text("-Drelease\n")
    assert read_reactor(tmp_path, 8).modules == ("", "core", "dist", "core/bench")
    (tmp_path / ".mvn" / "maven.config").write_text("-Pdocs\n")
    # the scope of a test in a profile's module names it
    test = tmp_path / "docs" / "src" / "test" / "java" / "p" / "DocTest.java"
    test.parent.mkdir(parents=True)
    test.write_text("package p; class DocTest {}")
    reactor = read_reactor(tmp_path, 8)
    assert reactor.scope_args(tmp_path, [TestId("p.DocTest", "x")]) == ("-pl", "docs", "-am")
