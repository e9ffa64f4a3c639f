"""Update scores of the demo predictions on real Maven builds, against values computed by hand.

Hand computations are in the comments. Line numbers refer to the V-0.5 sources of the demo.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from conftest import PREDICTIONS
from conftest import DemoRun
from conftest import by_instance
from conftest import write_jsonl

pytestmark = pytest.mark.maven

DATASET = Path(__file__).resolve().parent.parent / "pytest_tebench" / "demo" / "dataset.jsonl"

I1, I2, I3, I7, I8 = (
    "textkit__69c4649c",
    "textkit__c839cc1f",
    "textkit__6f3adb06",
    "textkit__dcc8e655",
    "textkit__867ea90c",
)
SCORES = ("s_exec", "s_line", "s_branch", "s_mod", "s_update")


def _comparable(report: dict[str, Any]) -> list[dict[str, Any]]:
    """Results without wall-clock timings, cache provenance and how Maven was launched (they differ run to run by design)."""
    out = []
    for original in report["results"]:
        record = {k: v for k, v in original.items() if k not in ("timings", "cache")}
        if record.get("update"):
            record["update"] = {
                k: v for k, v in record["update"].items() if k not in ("timings", "gold", "warm_jvm")
            }
        out.append(record)
    return out


def test_gold_scores_one_and_is_identical_with_xdist_and_from_the_cache(
    demo_run: DemoRun, pytester: pytest.Pytester
) -> None:
    junit = pytester.path / "junit.xml"
    result, first = demo_run("gold", f"--junitxml={junit}")
    result.assert_outcomes(passed=9)
    for record in first["results"]:
        update = record["update"]
        assert record["identification"]["f1"] == 1.0
        if update["gt_has_coverage_change"]:
            assert [update[s] for s in SCORES] == [1.0] * 5, record["instance_id"]
        else:  # I8: gold's tests never run the changed capitalize(): s_update = s_exec x s_mod
            assert record["instance_id"] == I8
            assert (
                update["s_exec"],
                update["s_line"],
                update["s_branch"],
                update["s_mod"],
                update["s_update"],
            ) == (1.0, None, None, 1.0, 1.0)
    summary = first["summary"]["gold"]
    assert summary["update"]["oa"] == 1.0
    assert summary["update"]["no_coverage_change"] == 1
    result.stdout.fnmatch_lines(["*Update - model 'gold'*", "*Overall*9*100.0*"])
    props = {p.get("name"): p.get("value") for p in ET.parse(junit).getroot().iter("property")}
    assert props["tebench.update.s_update"] == "1.0"

    # --tebench-rerun: the predictions are built again, gold's references are not
    result, second = demo_run("gold", "-n", "2", "--tebench-rerun")
    result.assert_outcomes(passed=9)
    assert _comparable(second) == _comparable(first)
    # the second run built no gold: every reference came from the cache, and it shows in the timings
    assert {r["update"]["gold"]["cache"] for r in second["results"]} == {"hit"}
    assert all(r["timings"]["gold_build"] < 5 for r in second["results"])
    assert {r["cache"] for r in second["results"]} == {"miss"}

    # the same run again: every result is reused, nothing is built, the report is the same
    result, third = demo_run("gold", "-n", "2")
    result.assert_outcomes(passed=9)
    result.stdout.fnmatch_lines(["results: 9 of 9 reused from earlier runs*"])
    assert {r["cache"] for r in third["results"]} == {"hit"}
    assert _comparable(third) == _comparable(first)
    assert third["summary"] == second["summary"]


def test_update_cases_hand_computed(demo_run: DemoRun) -> None:
    result, report = demo_run(str(PREDICTIONS / "update-cases.jsonl"), "-n", "2")
    result.assert_outcomes(passed=4)
    updates = {iid: r["update"] for iid, r in by_instance(report).items()}

    # I3: one of gold's two new tests, verbatim. It reverses a non-null string with a surrogate pair, so it runs
    # what gold's tests run in reverse(): the null check's false branch, both outcomes of the while condition,
    # every line but `return null;` (line 54). Coverage equals gold's: s_line = s_branch = 1.
    # U = gold's two methods (the prediction's one has the same key): Jaccard 1 and 0 (absent) -> s_mod 1/2.
    # s_update = 1 x (0.3 + 0.3 + 0.4 x 0.5) = 0.8
    assert {s: updates[I3][s] for s in SCORES} == {
        "s_exec": 1.0,
        "s_line": 1.0,
        "s_branch": 1.0,
        "s_mod": 0.5,
        "s_update": 0.8,
    }

    # I1: handlesLongWord fixed as gold does; zeroWidth untouched, so its old version (no exception expected)
    # runs and errors on V-0.5: s_exec = 0.5. Both selected tests call wrap() exactly as gold's versions do
    # (same arguments; zeroWidth reaches the width check and throws in both), so coverage equals gold's.
    # s_mod: handlesLongWord identical (1); zeroWidth old vs gold:
    #   old  @ Test void zeroWidth ( ) { assertEquals ( "keep  as is" , WordWrap . wrap ( "keep  as is" , 0 ) ) ; }   22 tokens
    #   gold @ Test void zeroWidth ( ) { assertThrows ( IllegalArgumentException . class , ( ) -> WordWrap . wrap ( "keep  as is" , 0 ) ) ; }   27 tokens
    #   shared (min counts) 20, union (max counts) 29 -> 20/29;  s_mod = (1 + 20/29) / 2 = 49/58
    # s_update = 0.5 x (0.3 + 0.3 + 0.4 x 49/58)
    assert (updates[I1]["s_exec"], updates[I1]["s_line"], updates[I1]["s_branch"]) == (0.5, 1.0, 1.0)
    assert updates[I1]["s_mod"] == pytest.approx(49 / 58, abs=1e-6)
    assert updates[I1]["s_update"] == pytest.approx(0.5 * (0.6 + 0.4 * 49 / 58), abs=1e-6)
    assert {t["method"]: t["status"] for t in updates[I1]["tests"]} == {
        "handlesLongWord": "passed",
        "zeroWidth": "error",
    }

    # I2: camelWords gets an assertion that the new toSnakeCase no longer satisfies: compiled, a test fails
    assert updates[I2]["s_exec"] == 0.5
    assert updates[I2]["status"] == "ok"
    assert {t["method"]: t["status"] for t in updates[I2]["tests"]}["camelWords"] == "failed"

    # I7: the test calls a constructor that does not exist: test compilation fails, s_exec = 0, s_update = 0
    assert (updates[I7]["s_exec"], updates[I7]["s_update"], updates[I7]["status"]) == (
        0.0,
        0.0,
        "test_compile_error",
    )


def test_coverage_of_a_sliver_hand_computed_in_both_scorings(demo_run: DemoRun) -> None:
    # null-only, on I3: one new test, reverse(null). JaCoCo's code lines of reverse() (V-0.5, lines 52-64):
    # 53 if (s == null), 54 return null, 56, 57, 58 while (i > 0), 59, 60, 61, 62 (javac puts the loop's
    # back jump on the closing brace), 63. Gold covers all but 54: |L_gold| = 9. Branches gold covers:
    # line 53 one (s != null), line 58 two -> 3. reverse(null) covers lines 53, 54 and branch 53 (s == null):
    # s_line = |{53}| / 9 = 1/9; s_branch = min(1,1) / 3 = 1/3 (JaCoCo names no branch, so the per-line count
    # of covered branches is what is compared). U = the prediction's method + gold's two: all absent on the
    # other side, s_mod = 0. Paper: s_update = 1 x (0.3/9 + 0.3/3 + 0) = 2/15.
    # Reference variant: s_exec = 1, so 0.6 x mean(1/9, 1/3) + 0.4 x 0 = 0.6 x 2/9 = 2/15 as well.
    for scoring in ("paper", "reference"):
        result, report = demo_run(str(PREDICTIONS / "null-only.jsonl"), f"--tebench-scoring={scoring}")
        result.assert_outcomes(passed=1)
        (record,) = report["results"]
        update = record["update"]
        assert update["coverage"]["gold_lines"] == 9 and update["coverage"]["pred_lines_in_gold"] == 1
        assert update["coverage"]["gold_branches"] == 3 and update["coverage"]["pred_branches_in_gold"] == 1
        assert update["s_line"] == pytest.approx(1 / 9, abs=1e-6)
        assert update["s_branch"] == pytest.approx(1 / 3, abs=1e-6)
        assert (update["s_exec"], update["s_mod"]) == (1.0, 0.0)
        assert update["s_update"] == pytest.approx(2 / 15, abs=1e-6)
        assert report["update_scoring"] == scoring


def test_reference_scoring_zeroes_failing_tests(demo_run: DemoRun) -> None:
    # reference code: 0 unless every selected test passes; else 0.6 x mean(s_line, s_branch) + 0.4 x s_mod
    _, report = demo_run(str(PREDICTIONS / "update-cases.jsonl"), "--tebench-scoring=reference")
    updates = {iid: r["update"] for iid, r in by_instance(report).items()}
    assert updates[I1]["s_update"] == 0.0  # s_exec 0.5
    assert updates[I3]["s_update"] == pytest.approx(0.6 * 1.0 + 0.4 * 0.5)


def test_main_compile_error_only_when_non_test_edits_are_allowed(demo_run: DemoRun) -> None:
    predictions = str(PREDICTIONS / "edits-main.jsonl")
    # by default the broken src/main hunk is not applied: the gold test patch alone scores like gold
    result, report = demo_run(predictions)
    result.assert_outcomes(passed=1)
    (record,) = report["results"]
    assert record["touched_non_test_files"] == ["src/main/java/org/tebench/textkit/StringUtils.java"]
    assert record["update"]["s_update"] == 1.0
    # applied, it breaks main compilation: s_exec = 0
    result, report = demo_run(predictions, "--tebench-allow-non-test-edits")
    (record,) = report["results"]
    assert (record["update"]["s_exec"], record["update"]["status"], record["update"]["s_update"]) == (
        0.0,
        "compile_error",
        0.0,
    )


def test_empty_and_unapplicable_predictions_score_zero_but_count(demo_run: DemoRun) -> None:
    result, report = demo_run(str(PREDICTIONS / "not-applying.jsonl"), "--tebench-min-update=0.5")
    result.assert_outcomes(failed=2)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["FAIL model 'stale-context':*oa 0.000 < required 0.500*"])
    summary = report["summary"]["stale-context"]
    assert summary["counts"]["not_applied"] == 2 and summary["update"]["oa"] == 0.0


def test_gold_that_fails_on_v0_is_an_invalid_instance(
    demo_run: DemoRun, pytester: pytest.Pytester, make_history: Any
) -> None:
    from pytest_tebench.benchmarks.tebench.builder import list_commits
    from pytest_tebench.benchmarks.tebench.builder import static_check
    from pytest_tebench.demo import DEMO_COMMITS
    from pytest_tebench.demo import DEMO_REPO
    from pytest_tebench.demo import build_demo_mirror

    mirror = build_demo_mirror(pytester.path / "mirror.git")
    r4 = next(
        c for c in list_commits(mirror, rev="main", since=None, until=None) if c.sha == DEMO_COMMITS[-1]
    )
    candidate = static_check(mirror, r4, "textkit", DEMO_REPO)
    assert not isinstance(candidate, str)
    row = {**candidate.row, "labels": ["stale", "missing"]}
    dataset = write_jsonl(pytester.path / "r4.jsonl", [row])
    result, report = demo_run("gold", f"--tebench-dataset={dataset}")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        ["*invalid instance: gold fails its own selected tests on V0*padRightTruncatesLongInput*"]
    )
    (record,) = report["results"]
    assert record["status"] == "invalid_instance"
    assert report["summary"]["gold"]["invalid_instances"] == [row["instance_id"]]


#: I1's gold line that one test below breaks and the other moves to a newer JDK's API.
I1_GOLD_LINE = (
    '+        assertThrows(IllegalArgumentException.class, () -> WordWrap.wrap("keep  as is", 0));\n'
)


def _i1_with_gold_line(pytester: pytest.Pytester, line: str) -> Path:
    """A dataset of I1 alone, its gold's ``zeroWidth`` line replaced by ``line``."""
    row = json.loads(DATASET.read_text().splitlines()[0])
    assert row["instance_id"] == I1 and I1_GOLD_LINE in row["test_patch"]
    row["test_patch"] = row["test_patch"].replace(I1_GOLD_LINE, f"+        {line}\n")
    return write_jsonl(pytester.path / "i1.jsonl", [row])


def _host_jdks() -> tuple[int, ...]:
    from pytest_tebench.run.local import LocalExecutor

    return LocalExecutor().java_versions()


def test_gold_that_does_not_compile_is_invalid_only_after_every_build_fails(
    demo_run: DemoRun, pytester: pytest.Pytester
) -> None:
    # a call of a method declared nowhere: the test tree compiles on no JDK, plain or not
    dataset = _i1_with_gold_line(pytester, "WordWrap.unwrap();")
    result, report = demo_run("gold", f"--tebench-dataset={dataset}")
    result.assert_outcomes(errors=1)
    (record,) = report["results"]
    assert record["status"] == "invalid_instance"
    reason = record["error"]
    assert reason.startswith("gold does not compile on V0 (test_compile_error): "), reason
    # source 1.8 on the JDKs here: the oldest one is chosen, built plainly, then every other one
    first, *others = _host_jdks()
    plain = f"; a plain cold `mvn test-compile` on JDK {first} fails too (test_compile_error)"
    tried = ", ".join(f"JDK {v} (test_compile_error)" for v in sorted(others, key=lambda v: (v - first, -v)))
    assert reason.endswith(
        f"{plain}, and so does gold's run on {tried}" if others else f"{plain}; no other JDK here to try"
    )


def _gold_judged_on_a_newer_jdk(demo_run: DemoRun, pytester: pytest.Pytester, line: str) -> dict[str, Any]:
    """I1 with gold's ``line`` that only a JDK 21 or newer takes: the item's update block, once
    checked to be gold judged by itself on the oldest such JDK here (every selected test passes
    and covers what gold covers)."""
    newer = [v for v in _host_jdks() if v >= 21]
    assert newer, f"this test needs a JDK 21 or newer beside JDK 17 (found {_host_jdks()})"
    result, report = demo_run("gold", f"--tebench-dataset={_i1_with_gold_line(pytester, line)}")
    result.assert_outcomes(passed=1)
    (record,) = report["results"]
    assert record["status"] == "evaluated", record["error"]
    update: dict[str, Any] = record["update"]
    assert update["java_version"] == min(newer)
    assert update["s_exec"] == 1.0 and update["s_update"] == 1.0
    return update


def test_gold_compiling_only_on_a_newer_jdk_is_judged_there(
    demo_run: DemoRun, pytester: pytest.Pytester
) -> None:
    # Math.clamp is JDK 21's: with source 1.8 and no release, javac compiles against its own JDK,
    # so JDK 17 cannot compile gold and a newer JDK here can (this machine has a Temurin 25)
    _gold_judged_on_a_newer_jdk(demo_run, pytester, "assertEquals(3, Math.clamp(5, 0, 3));")


def test_gold_tests_failing_only_on_the_chosen_jdk_are_judged_on_one_they_pass_on(
    demo_run: DemoRun, pytester: pytest.Pytester
) -> None:
    # compiles everywhere (source 1.8, no release: javac 17 compiles against its own JDK) and passes
    # only on JDK 21 and later: the oldest JDK here is chosen, gold fails there by method, by class
    # and in the module's full run, then passes on a newer JDK, which becomes gold's
    line = "assertEquals(true, Runtime.version().feature() >= 21);"
    update = _gold_judged_on_a_newer_jdk(demo_run, pytester, line)
    first, moved = _host_jdks()[0], update["java_version"]
    note = update["gold"]["jdk_retry"]
    assert note.startswith(
        f"JDK {moved}: gold fails its own selected tests on V0, in the module's full test run too: "
        "org.tebench.textkit.WordWrapTest#zeroWidth failed"
    ), note
    assert note.endswith(f"(on JDK {first}); they pass on JDK {moved}"), note


def test_a_hanging_test_scores_as_failing_where_gold_ran_well_within_the_limit(
    demo_run: DemoRun, pytester: pytest.Pytester
) -> None:
    import difflib

    from pytest_tebench.demo import build_demo_mirror
    from pytest_tebench.workspace.gitcmd import git_text

    rows = {json.loads(line)["instance_id"]: json.loads(line) for line in DATASET.read_text().splitlines()}
    mirror = build_demo_mirror(pytester.path / "mirror.git")
    path = "src/test/java/org/tebench/textkit/StringUtilsTest.java"
    before = git_text(mirror, "show", f"{rows[I8]['v_minus_1_commit']}:{path}")
    after = before.replace(
        'assertEquals("", StringUtils.repeat("ab", 0));',
        'assertEquals("", StringUtils.repeat("ab", 0));\n        while (true) {\n            Thread.onSpinWait();\n        }',
    )
    assert after != before
    patch = f"diff --git a/{path} b/{path}\n" + "".join(
        difflib.unified_diff(
            before.splitlines(keepends=True), after.splitlines(keepends=True), f"a/{path}", f"b/{path}"
        )
    )
    predictions = write_jsonl(
        pytester.path / "hang.jsonl",
        [{"instance_id": I8, "model_name_or_path": "hangs", "model_patch": patch}],
    )
    # one Maven launch compiles and tests: the test limit (30 s) runs from the moment Surefire
    # starts; gold's launch of the demo's I8 takes a few seconds, well within a third of it, so the
    # hang is the prediction's tests' doing and they score as failing
    result, report = demo_run(str(predictions), "--tebench-timeout-compile=40", "--tebench-timeout-test=30")
    (record,) = report["results"]
    assert record["status"] == "evaluated", record["error"]
    update = record["update"]
    assert update["status"] == "timeout:test"
    assert update["error"].startswith(
        "the prediction's test phase ran past its 30 s limit, while gold's longest"
    )
    assert update["error"].endswith("the tests that had not reported score as failing")
    (hung,) = [t for t in update["tests"] if t["method"] == "repeatsString"]
    assert hung["status"] == "not_run"
    assert hung["message"] == "the test phase ran into its 30 s limit before it reported this test"
    assert update["s_exec"] == 0.5  # compiled, a selected test did not pass
    assert update["s_line"] is None  # I8's commit changes no line gold's tests cover
    summary = report["summary"]["hangs"]
    assert summary["counts"]["timeouts"] == 0 and summary["counts"]["evaluated"] == 1
    assert summary["update"] is not None
    result.assert_outcomes(passed=1)  # an evaluated item passes: it was scored


FORGER = """\
package org.tebench.textkit;

import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import org.junit.jupiter.api.Test;

class ZzzForgeTest {
    @Test
    void forge() {
        // after every class has run and Maven has written its reports, make them all passes
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                Thread.sleep(2000);
                Path dir = Paths.get("target", "surefire-reports");
                try (DirectoryStream<Path> reports = Files.newDirectoryStream(dir, "TEST-*.xml")) {
                    for (Path report : reports) {
                        String xml = new String(Files.readAllBytes(report), "UTF-8");
                        xml = xml.replaceAll("(?s)<(error|failure)\\\\b.*?</\\\\1>", "");
                        Files.write(report, xml.getBytes("UTF-8"));
                    }
                }
            } catch (Exception ignored) {
            }
        }));
    }
}
"""


def test_reports_rewritten_by_a_test_do_not_count(demo_run: DemoRun, pytester: pytest.Pytester) -> None:
    # issue 8: a test of the prediction rewrites Surefire's reports so that gold's failing test
    # (I1's zeroWidth, which errors on V-0.5) reads as passed. The console says otherwise.
    (line,) = (json.loads(raw) for raw in (PREDICTIONS / "update-cases.jsonl").read_text().splitlines()
               if json.loads(raw)["instance_id"] == I1)  # fmt: skip
    path = "src/test/java/org/tebench/textkit/ZzzForgeTest.java"
    body = "".join(f"+{text}\n" for text in FORGER.splitlines())
    forged = (
        line["model_patch"]
        + f"diff --git a/{path} b/{path}\nnew file mode 100644\n--- /dev/null\n+++ b/{path}\n"
        + f"@@ -0,0 +1,{len(FORGER.splitlines())} @@\n{body}"
    )
    predictions = write_jsonl(
        pytester.path / "forge.jsonl",
        [{"instance_id": I1, "model_name_or_path": "forger", "model_patch": forged}],
    )
    _, report = demo_run(str(predictions))
    (record,) = report["results"]
    tests = {t["method"]: t["status"] for t in record["update"]["tests"]}
    assert tests["forge"] == "passed" and tests["handlesLongWord"] == "passed"
    assert tests["zeroWidth"] == "failed"  # the report said passed; the console named it
    assert record["update"]["s_exec"] == 0.5


def test_prebuilt_production_build_gives_the_same_verdicts(pytester: pytest.Pytester, tmp_path: Path) -> None:
    """Production code compiled once per instance and reused (the default) against every launch
    compiling it (--tebench-recompile): every status, test outcome and score is the same, for
    passing, failing and erroring tests, a test patch that does not compile and a prediction whose
    production edit breaks the main compile (its own production tree: compiled in its launch)."""
    both = tmp_path / "both.jsonl"
    both.write_text(
        (PREDICTIONS / "update-cases.jsonl").read_text() + (PREDICTIONS / "edits-main.jsonl").read_text()
    )
    flags = ("--tebench-allow-non-test-edits", "--tebench-gold-runs=1", "-n", "2")
    result, reused = DemoRun(pytester, tmp_path / "cache-reused")(str(both), *flags)
    result.assert_outcomes(passed=5)
    result, compiled = DemoRun(pytester, tmp_path / "cache-compiled")(
        str(both), *flags, "--tebench-recompile"
    )
    result.assert_outcomes(passed=5)

    def verdicts(report: dict[str, Any]) -> list[dict[str, Any]]:
        records = _comparable(report)
        for record in records:
            record["update"].pop("prebuilt")
        return records

    assert verdicts(reused) == verdicts(compiled)
    assert reused["summary"] == compiled["summary"]
    prebuilt = {r["instance_id"]: r["update"]["prebuilt"] or "" for r in reused["results"]}
    statuses = {r["instance_id"]: r["update"]["status"] for r in reused["results"]}
    assert statuses[I7] == "test_compile_error" and statuses[I8] == "compile_error"
    # test-only predictions ran on the classes gold's launch compiled; the one editing main did not
    assert all(prebuilt[iid].startswith("reused ") for iid in (I1, I2, I3, I7)), prebuilt
    # ... and on gold's compiled test tree, compiling only their changed test file (I1's tree
    # keeps V-0.5's WrapTest.java, which gold renamed WordWrapTest.java: one source added, one
    # removed with its classes); I7's tests do not compile: the whole tree compiled again gave
    # that verdict
    partial = {
        iid: re.search(r"tests reused \w+: (\d+) of (\d+) test sources compiled", prebuilt[iid])
        for iid in prebuilt
    }
    assert {iid: m.groups() for iid, m in partial.items() if m} == {
        I1: ("2", "8"),
        I2: ("1", "8"),
        I3: ("1", "9"),
        I7: ("1", "9"),
    }, prebuilt
    assert "compiled again" not in prebuilt[I1] + prebuilt[I2] + prebuilt[I3]
    assert prebuilt[I7].endswith("a test compile error in a partial test compile: tests compiled again")
    assert prebuilt[I8].startswith("off: no stored production build"), prebuilt
    assert {r["update"]["prebuilt"] for r in compiled["results"]} == {None}
