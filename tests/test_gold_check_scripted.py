"""Gold's check on V0 through the plugin, with the scripted executor of scripted_maven.py:
tests that did not run, failing tests by class and in the module's full test run, the compile
ladder and the JDK ladder of failing tests, tests their runner never runs. Real Maven runs of
the same checks are in test_gold_check.py.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from scripted_maven import CONFTEST
from scripted_maven import MAIN
from scripted_maven import TEST
from scripted_maven import calc_one
from scripted_maven import compiles_seen
from scripted_maven import gold_record
from scripted_maven import make_bench
from scripted_maven import run_bench
from scripted_maven import selector
from scripted_maven import steps_seen

from conftest import History
from conftest import write_jsonl


@pytest.fixture
def bench(make_history: Callable[[str], History], pytester: pytest.Pytester) -> dict[str, Any]:
    return make_bench(make_history, pytester)


def test_gold_tests_that_did_not_run_are_the_harness_error_not_the_instance(
    pytester: pytest.Pytester, bench: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SCRIPTED_MAVEN", "silent")
    result, report = run_bench(pytester, bench)
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
    result, report = run_bench(pytester, bench)
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
    selectors = [selector(step["argv"]) for step in steps_seen(pytester)]
    assert None not in selectors  # the class run decided: no full module run


def test_gold_tests_failing_on_v0_make_an_invalid_instance_with_their_output(
    pytester: pytest.Pytester, bench: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SCRIPTED_MAVEN", "failing")
    record = calc_one(pytester, bench)
    assert record["status"] == "invalid_instance"
    # addsFlaky passed once and failed once: flaky, out of the selection, not the instance's fault;
    # adds failed by method, by class, and in the module's full test run: the instance's fault
    assert record["error"] == (
        "gold fails its own selected tests on V0, in the module's full test run too: "
        "p.CalcTest#adds failed: expected: <2> but was: <3>; no other JDK here to try"
    )
    selectors = [selector(step["argv"]) for step in steps_seen(pytester)]
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
    record = calc_one(pytester, bench)
    assert record["status"] == "invalid_instance"
    chosen = int(jdks.split(",", maxsplit=1)[0])  # nothing in the POM asks for more: the oldest JDK here
    failed = (
        "gold does not compile on V0 (test_compile_error): [ERROR] Failed to execute goal "
        "org.apache.maven.plugins:maven-compiler-plugin:3.13.0:testCompile (default-testCompile) on project "
        "calc: Compilation failure: src/test/java/p/CalcTest.java:[4,20] cannot find symbol; a plain cold "
        f"`mvn test-compile` on JDK {chosen} fails too (test_compile_error)"
    )
    launches = compiles_seen(pytester)
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
    record = calc_one(pytester, bench)
    assert record["status"] == "evaluated", record["error"]
    assert record["update"]["java_version"] == 21
    assert record["update"]["s_exec"] == 1.0
    launches = compiles_seen(pytester)
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
    gold = gold_record(pytester)
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
    record = calc_one(pytester, bench)
    assert record["status"] == "evaluated", record["error"]
    assert record["update"]["java_version"] == 21
    gold = gold_record(pytester)
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
    record = calc_one(pytester, bench)
    assert record["status"] == "error"
    assert record["error"].startswith(
        "gold does not compile in the harness's launch on V0 (test_compile_error: [ERROR] Failed to execute goal "
    )
    assert record["error"].endswith(
        "but does in a plain cold `mvn test-compile` on JDK 11 (nothing stored reused, no warm Maven JVM): "
        "the harness's build is at fault, not the instance"
    )
    # the plain build decided: no other JDK was tried
    assert compiles_seen(pytester)[:2] == [("compile+test", 11), ("test-compile", 11)]
    assert ("compile+test", 17) not in compiles_seen(pytester)


def test_gold_running_out_of_time_compiling_is_the_harness_error_not_an_invalid_instance(
    pytester: pytest.Pytester, bench: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SCRIPTED_MAVEN", "slow-compile")
    _, report = run_bench(pytester, bench, "--tebench-timeout-compile=90")
    record = next(r for r in report["results"] if r["instance_id"] == "calc__one")
    assert record["status"] == "error"
    assert record["error"] == (
        "gold build on V0 failed for harness reasons (timeout:test-compile): timed out after 0 s during test-compile"
    )


def one_test_change(
    make_history: Callable[[str], History],
    pytester: pytest.Pytester,
    test: str,
    changed: str,
    instance_id: str,
) -> dict[str, Any]:
    """A bench of one instance whose commit changes ``p.Calc`` and ``CalcTest`` from ``test`` to
    ``changed``, and gold's copy as model ``m``'s prediction."""
    h = make_history("calc")
    main = "package p;\nclass Calc { int add(int a, int b) { return %s; } }\n"
    c0 = h.commit(
        {
            "pom.xml": "<project><modelVersion>4.0.0</modelVersion></project>\n",
            MAIN: main % "a + b",
            TEST: test,
        }
    )
    c1 = h.commit({MAIN: main % "b + a", TEST: changed})
    row = h.instance_row(c0, c1, instance_id=instance_id, repo="acme/calc", labels=["stale"])
    return {
        "dataset": write_jsonl(pytester.path / "dataset.jsonl", [row]),
        "predictions": write_jsonl(
            pytester.path / "run.jsonl",
            [{"instance_id": instance_id, "model_name_or_path": "m", "model_patch": row["test_patch"]}],
        ),
        "repos": h.path.parent,
    }


@pytest.mark.parametrize("legacy_only", [False, True])
def test_a_gold_test_its_class_s_runner_never_runs_leaves_every_selection(
    make_history: Callable[[str], History], pytester: pytest.Pytester, legacy_only: bool
) -> None:
    test = "package p;\n\nclass CalcTest {\n    @Test void adds() { check(1); }\n\n    @Test void legacyAdds() { check(1); }\n}\n"
    changed = test.replace("legacyAdds() { check(1); }", "legacyAdds() { check(2); }")
    if not legacy_only:
        changed = changed.replace("adds() { check(1); }", "adds() { check(3); }")
    bench = one_test_change(make_history, pytester, test, changed, "calc__legacy")
    pytester.makeconftest(CONFTEST)
    result, report = run_bench(pytester, bench)
    (record,) = report["results"]
    selectors = [selector(step["argv"]) for step in steps_seen(pytester)]
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


@pytest.mark.parametrize("inner_only", [False, True])
def test_a_gold_test_in_a_class_the_project_never_runs_leaves_every_selection(
    make_history: Callable[[str], History], pytester: pytest.Pytester, inner_only: bool
) -> None:
    # commons-collections 8e4c50f9 (2022-11): gold changes AbstractMapTest$TestMapEntrySet, an inner
    # class only JUnit 3's BulkTest suites ran; under JUnit 5 nothing runs it, and Surefire's
    # default excludes leave inner classes out of the module's own run
    test = (
        "package p;\n\nclass CalcTest {\n    @Test void adds() { check(1); }\n\n"
        "    class Never {\n        @Test void entry() { check(1); }\n    }\n}\n"
    )
    changed = test.replace("entry() { check(1); }", "entry() { check(2); }")
    if not inner_only:
        changed = changed.replace("adds() { check(1); }", "adds() { check(3); }")
    bench = one_test_change(make_history, pytester, test, changed, "calc__inner")
    pytester.makeconftest(CONFTEST)
    _, report = run_bench(pytester, bench)
    (record,) = report["results"]
    selectors = [selector(step["argv"]) for step in steps_seen(pytester)]
    if inner_only:
        assert record["status"] == "invalid_instance"
        assert record["error"] == (
            "none of gold's selected tests runs in the project's own build: p.CalcTest$Never#entry (its "
            "class never runs in the module's full test run, where the module's other test classes do: "
            "the project's build does not run it)"
        )
        assert selectors == ["p.CalcTest$Never#entry+entry[*]"] * 2 + ["p.CalcTest$Never", None]
        return
    assert record["status"] == "evaluated", record["error"]
    update = record["update"]
    assert update["gold"]["not_tests"] == ["p.CalcTest$Never#entry"]
    assert update["gold"]["selection"] == ["p.CalcTest#adds"]
    assert update["selection"] == ["p.CalcTest#adds"] and update["s_exec"] == 1.0
    assert selectors[2:4] == ["p.CalcTest,p.CalcTest$Never", None]  # by class, then the module's run


def test_gold_failing_only_selected_by_method_selects_by_class_for_gold_and_predictions(
    pytester: pytest.Pytester, bench: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    # as Surefire < 2.19 runs a class's selected methods one JUnit request each: @BeforeClass per method
    monkeypatch.setenv("SCRIPTED_MAVEN", "per-method")
    result, report = run_bench(pytester, bench)
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
    selectors = [selector(step["argv"]) for step in steps_seen(pytester)]
    # no launch after the check selects a method of CalcTest
    assert not any(s and s.startswith("p.CalcTest#") for s in selectors[3:])
    assert None not in selectors  # the class rule decided: no full module run was needed
    stored = [json.loads(p.read_text()) for p in (pytester.path / "cache" / "gold").glob("*.json")]
    assert {r["selected_by"] for r in stored if r["selection"] == ["p.CalcTest#adds"]} == {"class"}


def test_gold_failing_by_class_but_passing_in_the_module_run_is_the_harness_error(
    pytester: pytest.Pytester, bench: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SCRIPTED_MAVEN", "class-too")
    result, report = run_bench(pytester, bench)
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
    launches = len(steps_seen(pytester))
    result, report = run_bench(pytester, bench)
    result.assert_outcomes(errors=2)
    assert len(steps_seen(pytester)) == launches
    assert next(r for r in report["results"] if r["instance_id"] == "calc__one")["error"] == one["error"]


def test_gold_tests_failing_only_on_the_chosen_jdk_take_the_jdk_they_pass_on(
    pytester: pytest.Pytester, bench: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The JDK is the harness's choice: gold's tests failing on it in the module's full run too go to
    the other JDKs (the failing tests alone first), and the first where gold's whole check judges
    is gold's and every prediction's (jsoup 052dc1b1 expects JDK 9's XML indentation)."""
    monkeypatch.setenv("SCRIPTED_JDKS", "11,17,21")
    monkeypatch.setenv("SCRIPTED_FAILING_JDKS", "11,17")
    result, report = run_bench(pytester, bench)
    record = next(r for r in report["results"] if r["instance_id"] == "calc__one")
    assert record["status"] == "evaluated", record["error"]
    # both instances' gold moved: the summary and the terminal name them
    assert report["summary"]["m"]["jdk_moved_gold"] == ["calc__one", "calc__two"]
    result.stdout.fnmatch_lines(
        ["*gold ran on another JDK than its build files choose for 2 instance(s) (update.gold.jdk_retry says why): "
         "calc__one, calc__two*"]
    )  # fmt: skip
    assert record["update"]["java_version"] == 21 and record["update"]["s_exec"] == 1.0
    records = [json.loads(path.read_text()) for path in (pytester.path / "cache").rglob("gold/*.json")]
    gold = next(r for r in records if "p.CalcTest#adds" in (r.get("selection") or []))
    assert gold["java_version"] == 21 and gold["invalid"] == ""
    assert gold["run"]["jdk_retry"] == (
        "JDK 21: gold fails its own selected tests on V0, in the module's full test run too: p.CalcTest#adds "
        "failed: expected: <2> but was: <3> (on JDK 11); not on JDK 17 either (p.CalcTest#adds failed: "
        "expected: <2> but was: <3>); they pass on JDK 21"
    )
    assert record["update"]["gold"]["jdk_retry"] == gold["run"]["jdk_retry"]  # the report says why
    launches = [(s["java_version"], selector(s["argv"])) for s in steps_seen(pytester)]
    both, adds = "p.CalcTest#adds+adds[*]+addsFlaky+addsFlaky[*]", "p.CalcTest#adds+adds[*]"
    assert launches[:11] == [
        (11, both),  # gold on the JDK chosen, twice: addsFlaky is flaky
        (11, both),
        (11, adds),  # without it: adds fails
        (11, "p.CalcTest"),  # by class: fails
        (11, None),  # the module's whole test phase: fails there too
        (17, adds),  # the failing test alone on the nearest other JDK: fails
        (21, adds),  # on the next: passes, so gold's whole check on JDK 21
        (21, both),
        (21, both),
        (21, adds),
        (21, adds),  # the prediction, on gold's JDK
    ]


def test_gold_tests_failing_on_every_jdk_make_an_invalid_instance_naming_each(
    pytester: pytest.Pytester, bench: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SCRIPTED_JDKS", "11,17,21")
    monkeypatch.setenv("SCRIPTED_FAILING_JDKS", "11,17,21")
    record = calc_one(pytester, bench)
    assert record["status"] == "invalid_instance"
    failed = "p.CalcTest#adds failed: expected: <2> but was: <3>"
    assert record["error"] == (
        f"gold fails its own selected tests on V0, in the module's full test run too: {failed}; and so does "
        f"gold's run on JDK 17 ({failed}), JDK 21 ({failed})"
    )


def test_with_a_forced_jdk_failing_gold_tests_try_no_other_jdk(
    pytester: pytest.Pytester, bench: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SCRIPTED_JDKS", "11,17,21")
    monkeypatch.setenv("SCRIPTED_FAILING_JDKS", "11")
    _, report = run_bench(pytester, bench, "--tebench-jdk=11")
    record = next(r for r in report["results"] if r["instance_id"] == "calc__one")
    assert record["status"] == "invalid_instance"
    assert record["error"].endswith("; no other JDK tried: --tebench-jdk 11 forces this one")
    assert {s["java_version"] for s in steps_seen(pytester)} == {11}
