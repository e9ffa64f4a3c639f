"""SWT-bench, without Docker: grading against SWT-bench's definitions (hand-computed values), the
coverage.py wrapping and reading, what a prediction may change, and the demo's recorded runs graded
end to end (logs through SWE-bench's parser, coverage reports through our reader)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_tebench.benchmarks.swtbench import grading
from pytest_tebench.benchmarks.swtbench import integrity
from pytest_tebench.benchmarks.swtbench import linecov
from pytest_tebench.benchmarks.swtbench import summary
from pytest_tebench.demo import swebench as demo

RECORDED = Path(__file__).parent / "fixtures" / "swtbench-demo-runs.json"
P, F = "PASSED", "FAILED"


# -- transitions and success (src/grading.py) -----------------------------------------------------
def test_transitions_follow_get_eval_report() -> None:
    pre = {"a": F, "b": P, "c": P, "d": F, "e": P, "f": F, "g": "ERROR", "h": "SKIPPED"}
    post = {"a": P, "b": P, "c": F, "d": F, "x": P, "y": F, "f": "ERROR", "g": P}
    report = grading.transitions(pre, post)
    # X→P counts as F→P, X→F as F→F, P→X as P→F, F→X and X→X are unmatched; ERROR/SKIPPED are "absent"
    assert report == {
        "FAIL_TO_PASS": ["g", "x", "a"],
        "PASS_TO_PASS": ["b"],
        "FAIL_TO_FAIL": ["d", "y"],
        "PASS_TO_FAIL": ["c", "e"],
        "UNMATCHED": ["f", "h"],
    }


def _report(**classes: list[str]) -> grading.Transitions:
    return {key: list(classes.get(key, [])) for key in grading.CLASSES}


BASE = _report(PASS_TO_PASS=["old"])


@pytest.mark.parametrize(
    ("pred", "expected"),
    [
        (_report(FAIL_TO_PASS=["new"], PASS_TO_PASS=["old"]), (True, 1)),  # a reproduction
        (_report(PASS_TO_PASS=["old", "new"]), (False, 0)),  # passes before the fix
        (_report(FAIL_TO_FAIL=["new"], PASS_TO_PASS=["old"]), (False, 0)),  # fails after the fix
        (_report(PASS_TO_FAIL=["new"], PASS_TO_PASS=["old"]), (False, 0)),  # passes before, fails after
        (_report(FAIL_TO_PASS=["new"], FAIL_TO_FAIL=["other"], PASS_TO_PASS=["old"]), (False, 1)),
        (_report(FAIL_TO_PASS=["new"], PASS_TO_FAIL=["old"]), (False, 1)),  # breaks an existing test
        (_report(), (False, 0)),  # ran nothing
    ],
)
def test_success_follows_get_resolution_success(
    pred: grading.Transitions, expected: tuple[bool, int]
) -> None:
    assert grading.success(pred, BASE) == expected


def test_success_needs_the_existing_tests_f2p_and_ignores_their_failures() -> None:
    base = _report(FAIL_TO_PASS=["old_f2p"], FAIL_TO_FAIL=["old_broken"])
    # dropping an existing F→P test is no success even with a new one
    assert grading.success(_report(FAIL_TO_PASS=["new"], FAIL_TO_FAIL=["old_broken"]), base) == (False, 1)
    # an F→F test the existing tests already had is not the prediction's failure
    kept = _report(FAIL_TO_PASS=["old_f2p", "new"], FAIL_TO_FAIL=["old_broken"])
    assert grading.success(kept, base) == (True, 1)


def test_added_indicators_and_applicability_follow_report_py() -> None:
    f2f = _report(FAIL_TO_FAIL=["new"], PASS_TO_PASS=["old"])
    assert grading.added(f2f, BASE) == grading.Added(f2x=True, f2p=False, p2p=False)
    p2p = _report(PASS_TO_PASS=["old", "new"])
    assert grading.added(p2p, BASE) == grading.Added(f2x=False, f2p=False, p2p=True)
    p2f = _report(PASS_TO_FAIL=["new"], PASS_TO_PASS=["old"])
    assert grading.added(p2f, BASE) == grading.Added(f2x=False, f2p=False, p2p=False)
    # W: at least 10% as many tests as the existing tests' run; 0 of 0 counts
    ten = _report(PASS_TO_PASS=[f"t{i}" for i in range(10)])
    assert grading.applicable(_report(UNMATCHED=["x"]), ten)
    assert not grading.applicable(_report(), ten)
    assert grading.applicable(_report(), _report())


# -- change coverage ---------------------------------------------------------------------------
def _row(number: int) -> dict[str, Any]:
    rows = [json.loads(line) for line in demo.DATASET.read_text().splitlines()]
    return next(r for r in rows if r["instance_id"] == f"pytest-tebench__pycalc-{number}")


def test_changed_lines_of_the_demo_fixes() -> None:
    assert grading.changed_lines(_row(1)["patch"]) == (
        [],
        [("pycalc/numbers.py", 3), ("pycalc/numbers.py", 4)],
    )
    text = "pycalc/text.py"
    assert grading.changed_lines(_row(3)["patch"]) == ([(text, 6), (text, 7)], [(text, 6), (text, 7)])
    assert grading.changed_lines(_row(4)["patch"]) == ([(text, 12)], [(text, 12)])


def test_change_coverage_by_hand() -> None:
    # pycalc-3's fix: lines 6 and 7 removed and added. Line 7 of the original is not executable (say),
    # line 9 is not a changed line.
    pre_base = {"pycalc/text.py": {6: 2, 9: 1}}
    post_base = {"pycalc/text.py": {6: 2, 7: 0}}
    runs = grading.Runs(
        pred_pre={"pycalc/text.py": {6: 2}},  # as often as the existing tests: no delta
        pred_post={"pycalc/text.py": {6: 3, 7: 1}},  # both more often: delta
        gold_pre={"pycalc/text.py": {6: 3}},
        gold_post={"pycalc/text.py": {6: 3, 7: 0}},
        base_pre=pre_base,
        base_post=post_base,
    )
    result = grading.change_coverage(_row(3)["patch"], runs)
    # executable: removed 6 (in the pre runs), added 6 and 7 (in the post runs) = 3 lines
    assert result.executable_lines == 3
    assert result.delta_pred == pytest.approx(2 / 3)  # removed 6: 2 > 2 no, added 6: 3 > 2, added 7: 1 > 0
    assert result.pred == pytest.approx(3 / 3)
    assert result.gold == pytest.approx(2 / 3)  # removed 6, added 6; added 7 ran 0 times
    assert result.delta_gold == pytest.approx(2 / 3)  # removed 6: 3 > 2, added 6: 3 > 2, added 7: 0 > 0 no
    assert result.base == pytest.approx(2 / 3)


def test_change_coverage_is_none_without_executable_lines() -> None:
    empty = grading.Runs({}, {}, {}, {}, {}, {})
    assert grading.change_coverage(_row(1)["patch"], empty) == grading.ChangeCoverage(
        0, None, None, None, None, None
    )


# -- coverage.py in the container ---------------------------------------------------------------
def test_wrap_command_follows_swt_bench_rules() -> None:
    files = ["pkg/a.py", "pkg/b.py"]
    run = linecov._run_options(files)
    assert "--include=/workspace/pkg/a.py,/workspace/pkg/b.py" in run
    path = 'PYTHONPATH="{tool:coverage}${PYTHONPATH:+:$PYTHONPATH}"'
    assert linecov.wrap_command("pytest -rA", files) == f"{path} python -m coverage {run} -m pytest -rA"
    assert (
        linecov.wrap_command("python -m pytest -x t.py", files)
        == f"{path} python -m coverage {run} -m pytest -x t.py"
    )
    assert linecov.wrap_command("./tests/runtests.py --parallel 1", files) == (
        f"{path} python -m coverage {run} ./tests/runtests.py --parallel 1"
    )
    warnings = "PYTHONWARNINGS='ignore::UserWarning,ignore::SyntaxWarning'"
    assert linecov.wrap_command(f"{warnings} bin/test -C", files) == (
        f"{warnings} {path} python -m coverage {run} bin/test -C"
    )


def test_coverage_wheel_per_python() -> None:
    options = linecov.wheel_options("3.11")
    assert (
        options[options.index("--abi") + 1] == "cp311"
        and options[options.index("--python-version") + 1] == "3.11"
    )
    assert linecov.wheel_options("")[:2] == ["--platform", "any"]


def test_counts_from_a_coverage_json_report() -> None:
    report = {
        "files": {
            "/workspace/pkg/a.py": {
                "executed_lines": [1, 3],
                "missing_lines": [4],
                "contexts": {"1": [""], "3": ["t.test_one", "t.test_two", "t.test_two"]},
            },
            "pkg/b.py": {"executed_lines": [2], "missing_lines": []},
        }
    }
    assert linecov.counts_from_report(report) == {"pkg/a.py": {1: 1, 3: 2, 4: 0}, "pkg/b.py": {2: 1}}
    assert linecov.counts_from_report({"not": "a report"}) == {}
    assert linecov.counts_from_report({"files": {"a.py": {"executed_lines": ["x"]}}}) == {}


def test_a_linked_coverage_report_is_not_followed(tmp_path: Path) -> None:
    outside = tmp_path / "outside.json"
    outside.write_text(json.dumps({"files": {"a.py": {"executed_lines": [1], "missing_lines": []}}}))
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / linecov.JSON_NAME).symlink_to(outside)
    assert linecov.read_counts(tree) == {}
    assert not (tree / linecov.JSON_NAME).exists() and outside.exists()
    (tree / linecov.JSON_NAME).write_text(outside.read_text())
    assert linecov.read_counts(tree) == {"a.py": {1: 1}}


# -- what a prediction may change ---------------------------------------------------------------
def _diff(path: str, mode: str = "") -> str:
    header = f"new file mode {mode}\n" if mode else ""
    return f"diff --git a/{path} b/{path}\n{header}--- /dev/null\n+++ b/{path}\n@@ -0,0 +1 @@\n+x = 1\n"


def test_only_test_files_may_change() -> None:
    assert (
        integrity.refused_files(_diff("tests/test_a.py") + _diff("conftest.py") + _diff("testing/x.py")) == {}
    )
    refused = integrity.refused_files(_diff("tests/test_a.py") + _diff("pkg/core.py") + _diff("setup.cfg"))
    assert set(refused) == {"pkg/core.py", "setup.cfg"}
    assert "not a test file" in refused["pkg/core.py"]
    assert "symbolic link" in integrity.refused_files(_diff("tests/link.py", mode="120000"))["tests/link.py"]
    # as records of a refused prediction, the shape SWE-bench's refused records have
    assert [r.as_record() for r in integrity.refusals(_diff("tests/test_a.py") + _diff("pkg/core.py"))] == [
        {"path": "pkg/core.py", "kind": "runner", "rule": "test-generation", "reason": refused["pkg/core.py"]}
    ]


# -- the demo's recorded runs -------------------------------------------------------------------
# The logs and coverage.py JSON reports of the real runs of the demo (gold, and demo-model's
# predictions), recorded once; graded here through SWE-bench's log parser and our report reader.
def _recorded(instance_id: str, model: str) -> dict[str, Any]:
    pytest.importorskip("swebench")
    from pytest_tebench.benchmarks.swebench.instances import load
    from pytest_tebench.benchmarks.swebench.records import register_demo
    from pytest_tebench.benchmarks.swtbench.adapter import graded_fields
    from pytest_tebench.benchmarks.swtbench.evaluation import RUNS
    from pytest_tebench.benchmarks.swtbench.evaluation import RunOutcome
    from pytest_tebench.benchmarks.swtbench.evaluation import status_map
    from pytest_tebench.instance.datasets import RawRecord

    register_demo()
    row = next(
        r
        for r in (json.loads(x) for x in demo.DATASET.read_text().splitlines())
        if r["instance_id"] == instance_id
    )
    payload = load([RawRecord(row, "demo")])[0].payload
    recorded = json.loads(RECORDED.read_text())[instance_id]
    runs = {**recorded["gold"], **recorded[model]}  # the gold and existing-test runs are the instance's
    outcomes = {
        name: RunOutcome(
            name, True, status_map=status_map(payload, runs[name]["log"]),
            counts=linecov.counts_from_report(runs[name]["coverage"]),
        )
        for name in RUNS
    }  # fmt: skip
    return graded_fields(row["patch"], outcomes)


#: (model, row) -> (S, W, F→X, F→P, P→P, ΔC, coverage_pred, coverage_base, executable lines), by hand
#: (docs/swtbench.md, "Checked by hand").
HAND = {
    ("gold", 1): (True, True, True, True, False, 1.0, 1.0, 0.5, 2),
    ("gold", 2): (True, True, True, True, False, 1.0, 1.0, 0.5, 2),
    ("gold", 3): (True, True, True, True, False, 1.0, 1.0, 1.0, 4),
    ("gold", 4): (True, True, True, True, False, 1.0, 1.0, 1.0, 2),
    ("demo-model", 1): (False, True, False, False, True, 0.5, 0.5, 0.5, 2),  # P→P
    ("demo-model", 2): (False, True, True, False, False, 1.0, 1.0, 0.5, 2),  # F→F
    ("demo-model", 3): (False, True, False, False, False, 1.0, 1.0, 1.0, 4),  # P→F
    ("demo-model", 4): (True, True, True, True, False, 1.0, 1.0, 1.0, 2),  # F→P
}
FIELDS = (
    "resolved",
    "applied",
    "f2x",
    "f2p",
    "p2p",
    "coverage_delta",
    "coverage_pred",
    "coverage_base",
    "executable_lines",
)


@pytest.mark.parametrize(("model", "row"), sorted(HAND))
def test_recorded_demo_runs_grade_as_computed_by_hand(model: str, row: int) -> None:
    fields = _recorded(f"pytest-tebench__pycalc-{row}", model)
    assert tuple(fields[name] for name in FIELDS) == HAND[model, row]


def test_recorded_transitions_of_the_hand_made_tests() -> None:
    numbers, text = "tests/test_numbers.py::", "tests/test_text.py::"
    assert _recorded("pytest-tebench__pycalc-1", "gold")["tests_pred"]["fail_to_pass"] == [
        numbers + "test_clamp_rejects_inverted_bounds"
    ]
    p2p = _recorded("pytest-tebench__pycalc-1", "demo-model")
    assert numbers + "test_clamp_equal_bounds" in p2p["tests_pred"]["pass_to_pass"]
    assert p2p["tests_base"]["pass_to_pass"] == [
        numbers + n for n in ("test_clamp_inside", "test_clamp_outside", "test_mean")
    ]
    f2f = _recorded("pytest-tebench__pycalc-2", "demo-model")["tests_pred"]
    assert f2f["fail_to_fail"] == [numbers + "test_mean_of_nothing_is_zero"] and f2f["fail_to_pass"] == []
    p2f = _recorded("pytest-tebench__pycalc-3", "demo-model")["tests_pred"]
    assert p2f["pass_to_fail"] == [text + "test_slugify_keeps_empty_words"] and p2f["fail_to_pass"] == []
    reproduction = _recorded("pytest-tebench__pycalc-4", "demo-model")
    assert reproduction["tests_pred"]["fail_to_pass"] == [text + "test_word_count_skips_dashes"]
    assert reproduction["added_f2p"] == 1


def _record(model: str, instance: str, status: str, block: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"model_name_or_path": model, "instance_id": instance, "project": "pytest-tebench/pycalc",
            "status": status, "swtbench": block or {}}  # fmt: skip


def test_summary_of_the_demo_by_hand() -> None:
    records = [
        _record(
            "demo-model",
            f"pycalc-{row}",
            "evaluated",
            _recorded(f"pytest-tebench__pycalc-{row}", "demo-model"),
        )
        for row in (1, 2, 3, 4)
    ]
    records += [
        _record("bad-patches", "pycalc-1", "not_applied"),
        _record("bad-patches", "pycalc-2", "error"),
        _record("bad-patches", "pycalc-3", "empty"),
        _record("bad-patches", "pycalc-4", "evaluated", {"executable_lines": 0, "coverage_delta": None}),
    ]
    figures = summary.summarise(records)
    model = figures["demo-model"]
    assert {k: model[k] for k in ("S", "W", "F2X", "F2P", "P2P", "coverage_delta")} == {
        "S": 25.0, "W": 100.0, "F2X": 50.0, "F2P": 25.0, "P2P": 25.0, "coverage_delta": 87.5,
    }  # fmt: skip
    # a harness error is not judged; an item whose fix has no executable line is not in ΔC's count
    bad = figures["bad-patches"]
    assert bad["counts"]["judged"] == 3 and bad["counts"]["harness_errors"] == 1
    assert bad["coverage_delta"] == 0.0 and summary.coverage_items(records[4:]) == [0.0, 0.0]
    lines = summary.summary_lines(figures)
    assert any(
        line.startswith("model: demo-model  success 1/4 (S 25.0%)") and "delta 87.5%" in line
        for line in lines
    )


def test_a_model_with_no_judged_item_shows_dashes_not_percentages_of_nothing() -> None:
    # the only item was a harness error: nothing judged, so no S, W, F→P or ΔC to show
    figures = summary.summarise([_record("broken", "pycalc-1", "error")])
    assert figures["broken"]["S"] is None and figures["broken"]["counts"]["judged"] == 0
    line = summary.summary_lines(figures)[0]
    assert line.startswith(
        "model: broken  success 0/0 (S -)  applicable 0 (W -)  F→P -  mean coverage delta -  "
    ), line
    assert "n/a%" not in "\n".join(summary.summary_lines(figures))


def test_gold_is_the_test_patch_and_verdicts_name_the_failing_tests() -> None:
    from pytest_tebench.benchmarks.base import BenchmarkInstance
    from pytest_tebench.benchmarks.swtbench.adapter import SwtbenchAdapter

    adapter = SwtbenchAdapter()
    row = _row(2)
    payload = type("Row", (), {"test_patch": row["test_patch"], "patch": row["patch"]})()
    assert adapter.gold_patch(BenchmarkInstance("i", "p", "r", (), "o", payload)) == row["test_patch"]
    block = _recorded("pytest-tebench__pycalc-2", "demo-model")
    verdict = adapter.verdict({"status": "evaluated", "swtbench": block})
    assert (
        verdict
        == "no success: F→P tests added 0; new F→F 1: tests/test_numbers.py::test_mean_of_nothing_is_zero"
    )
    assert adapter.verdict({"status": "evaluated", "swtbench": {"resolved": True}}) is None
    assert adapter.metric_value({"S": 25.0}, "resolved") == 0.25


def test_lines_of_a_multi_line_statement_count_as_its_first_line() -> None:
    # marshmallow-1359's fix changes the middle line of a multi-line assignment: trace.py (byte-code
    # line table) lists that line, coverage.py reports the statement on its first line only
    source = (
        "class A:\n"
        "    def f(self, schema):\n"
        "        self.format = (\n"
        "            self.format\n"
        "            or getattr(schema.opts, 'x')\n"
        "            or 'd'\n"
        "        )\n"
        "        if (self and\n"
        "                schema):\n"
        "            pass\n"
    )
    assert linecov.statement_lines(source) == {4: 3, 5: 3, 6: 3, 7: 3, 9: 8}
    counts = {"f.py": {1: 1, 2: 1, 3: 2, 8: 1, 10: 0}, "g.py": {1: 1}}
    assert linecov.with_statement_lines(counts, {"f.py": source}) == {
        "f.py": {1: 1, 2: 1, 3: 2, 4: 2, 5: 2, 6: 2, 7: 2, 8: 1, 9: 1, 10: 0},
        "g.py": {1: 1},
    }
    assert linecov.statement_lines("def broken(:\n") == {}
