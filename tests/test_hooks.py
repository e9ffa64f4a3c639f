"""Every pytest-tebench hook, through a conftest implementation (pytest-xdist's test_newhooks style).

The conftest (tests/fixtures/arithmetic_conftest.py) is a whole benchmark, arithmetic questions,
written against the adapter contract only: it gets items, markers, -k/-m, -n 2, missing
predictions, JUnit properties, the JSON report and a gate from the benchmark-neutral core. The
pytest-layer hardening of the hostile-predictions issue is tested here too, on the same toy
(no builds, so these tests are fast).
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

from conftest import ANSWERS
from conftest import ARITHMETIC_CONFTEST
from conftest import QUESTIONS
from conftest import report
from conftest import run
from conftest import without_provenance
from conftest import write_jsonl


def test_a_benchmark_from_a_conftest_gets_items_report_and_summary(toy: pytest.Pytester) -> None:
    result = run(toy, "--tebench-report=report.json", "--junitxml=junit.xml")
    result.assert_outcomes(passed=5, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*tebench summary*",
            "arithmetic good: accuracy 1.0",
            "arithmetic sloppy: accuracy 0.3333333333333333",
        ]
    )
    data = report(toy)
    assert data["benchmark"] == "arithmetic"
    assert data["arithmetic_rules"] == "integers, + - *"  # the adapter's report_fields
    assert data["extra"]["from_conftest"] == 6  # pytest_tebench_update_json
    assert data["summary"]["sloppy"]["counts"]["missing_predictions"] == 1
    statuses = {(r["model_name_or_path"], r["instance_id"]): r["status"] for r in data["results"]}
    assert statuses[("sloppy", "q3")] == "missing_prediction"
    first = data["results"][0]
    # neutral fields first, then the adapter's record_fields in its order
    assert list(first)[:8] == [
        "instance_id", "model_name_or_path", "project", "labels", "status", "error", "origin", "answer",
    ]  # fmt: skip
    # pytest_tebench_write_reports: the conftest's own writer ran beside the built-in one
    assert (toy.path / "answers.txt").read_text().splitlines()[0] == "q1 2"
    properties = {
        case.get("name"): {p.get("name"): p.get("value") for p in case.iter("property")}
        for case in ET.parse(toy.path / "junit.xml").iter("testcase")
    }
    assert properties["q1[sloppy]"]["tebench.arithmetic.correct"] == "False"
    assert properties["q1[good]"]["tebench.status"] == "evaluated"
    assert properties["q3[sloppy]"]["tebench.status"] == "missing_prediction"


def test_markers_and_keywords_select_items(toy: pytest.Pytester) -> None:
    run(toy, "-m", "hard").assert_outcomes(passed=2)  # q2 of both models
    run(toy, "-m", "algebra").assert_outcomes(passed=2)  # the project marker
    run(toy, "-m", "tebench(model='good')").assert_outcomes(passed=3)
    run(toy, "-k", "q3").assert_outcomes(passed=1, failed=1)  # good's q3 and sloppy's missing q3


def test_xdist_gives_the_same_report(toy: pytest.Pytester) -> None:
    run(toy, "--tebench-report=one.json").assert_outcomes(passed=5, failed=1)
    run(toy, "--tebench-report=two.json", "-n", "2").assert_outcomes(passed=5, failed=1)
    one, two = report(toy, "one.json"), report(toy, "two.json")
    assert without_provenance(one["results"]) == without_provenance(two["results"])
    assert one["summary"] == two["summary"]


def test_gate_on_an_adapter_metric(toy: pytest.Pytester) -> None:
    result = run(toy, "--tebench-fail-under=accuracy=0.5")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["FAIL model 'sloppy': accuracy 0.333 < required 0.500"])
    assert "FAIL model 'good'" not in result.stdout.str()
    # the adapter's own threshold options feed the same gate
    result = run(toy, "--arithmetic-min-accuracy=0.9", "-k", "good")
    assert result.ret == pytest.ExitCode.OK
    # a metric the benchmark does not have is a usage error, before anything runs
    result = run(toy, "--tebench-fail-under=f1=0.5")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*benchmark 'arithmetic' has no metric 'f1' (it has: accuracy)*"])


def test_gate_with_nothing_selected_says_why(toy: pytest.Pytester) -> None:
    result = run(toy, "--tebench-fail-under=accuracy=0.5", "-k", "nothing_matches")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        ["FAIL no model was evaluated, so no threshold can be met (accuracy >= 0.500)"]
    )


def test_executor_names_come_from_the_hook(toy: pytest.Pytester) -> None:
    run(toy, "--arithmetic-executor", "--tebench-executor=abacus", "--tebench-report=r.json").assert_outcomes(
        passed=5, failed=1
    )
    assert {r["executor"] for r in report(toy, "r.json")["results"]} == {"abacus"}
    result = run(toy, "--tebench-executor=slide-rule")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*--tebench-executor: unknown executor 'slide-rule'; known: abacus, local, docker, auto*"]
    )


@pytest.mark.parametrize(("engine", "resolved"), [(True, "docker"), (False, "local")])
def test_auto_is_the_default_and_warns_when_it_falls_back_to_local(
    toy: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, engine: bool, resolved: str
) -> None:
    monkeypatch.setattr("pytest_tebench.roles.docker_available", lambda: engine)
    result = run(toy, "--arithmetic-executor", "--tebench-report=r.json")
    result.assert_outcomes(passed=5, failed=1)
    assert {r["executor"] for r in report(toy, "r.json")["results"]} == {resolved}
    warned = "predictions ran unsandboxed on this machine" in result.stdout.str()
    assert warned is (not engine)
    if not engine:
        result.stdout.fnmatch_lines(["WARNING: no Docker engine answered*--tebench-executor=local*"])
    # asking for local on purpose runs locally, without the warning
    result = run(toy, "--arithmetic-executor", "--tebench-executor=local")
    assert "unsandboxed" not in result.stdout.str()


# -- hostile input at the pytest layer ------------------------------------------------------------


def test_duplicate_lines_never_replace_the_scored_record(toy: pytest.Pytester) -> None:
    write_jsonl(toy.path / "dup.jsonl", [*ANSWERS, ANSWERS[3] | {"model_patch": "2"}, ANSWERS[3]])
    for workers in ("0", "2"):
        result = run(toy, "--tebench-report=r.json", "-n", workers, predictions="dup.jsonl")
        result.assert_outcomes(passed=5, failed=1, errors=2)
        data = report(toy, "r.json")
        assert data["summary"]["sloppy"]["accuracy"] == pytest.approx(1 / 3)  # the first line stands
        assert data["summary"]["sloppy"]["counts"]["errors"] == 2
        duplicates = [r for r in data["results"] if r["status"] == "error"]
        assert [r["origin"] for r in duplicates] == ["dup.jsonl:6", "dup.jsonl:7"]
        assert all("duplicate of " in r["error"] and "dup.jsonl:4" in r["error"] for r in duplicates)


def test_an_item_whose_worker_dies_is_a_listed_harness_error(toy: pytest.Pytester) -> None:
    # sloppy's q2 kills its xdist worker mid-item (os._exit, as an out-of-memory kill would)
    write_jsonl(toy.path / "crash.jsonl", [*ANSWERS[:4], ANSWERS[4] | {"model_patch": "worker-dies"}])
    result = run(toy, "--tebench-report=r.json", "--junitxml=j.xml", "-n", "2", predictions="crash.jsonl")
    result.assert_outcomes(passed=4, failed=2)  # the crash, and sloppy's missing q3
    # the JUnit XML has the crashed item once, an error with the record's properties
    cases = [c for c in ET.parse(toy.path / "j.xml").iter("testcase") if c.get("name") == "q2[sloppy]"]
    assert len(cases) == 1 and cases[0].find("error") is not None
    properties = {p.get("name"): p.get("value") for p in cases[0].iter("property")}
    assert (properties["tebench.status"], properties["tebench.project"]) == ("error", "algebra")
    assert "not scored" in properties["tebench.error"]
    data = report(toy, "r.json")
    records = {(r["model_name_or_path"], r["instance_id"]): r for r in data["results"]}
    assert len(records) == 6  # nothing dropped: the dead worker's item has its record
    crashed = records[("sloppy", "q2")]
    assert crashed["status"] == "error" and crashed["origin"] == "crash.jsonl:5"
    assert crashed["project"] == "algebra"  # the instance's own identity, derived again
    assert "crashed while running 'crash.jsonl::q2[sloppy]'" in crashed["error"]
    assert "not scored" in crashed["error"]
    counts = data["summary"]["sloppy"]["counts"]
    assert (counts["items"], counts["errors"], counts["scored"]) == (3, 1, 2)
    assert data["summary"]["sloppy"]["accuracy"] == 0.0  # q1 wrong, q3 missing; q2 not a score
    assert data["summary"]["good"]["accuracy"] == 1.0
    assert "crashed while running 'crash.jsonl::q2[sloppy]'" in result.stdout.str()
    assert "interrupted" not in data  # the dead worker was replaced: every item ran
    # without a worker to replace it, xdist stops quietly; the report and the summary say so
    result = run(
        toy, "--tebench-report=r.json", "-n", "1", "--max-worker-restart=0", predictions="crash.jsonl"
    )
    result.assert_outcomes(passed=4, failed=1)  # sloppy's q3, the last item, never ran
    data = report(toy, "r.json")
    assert (data["interrupted"], data["items_not_run"], len(data["results"])) == (True, 1, 5)
    result.stdout.fnmatch_lines(["tebench: 1 of 6 items did not run (the run stopped early)*"])


def test_selecting_one_item_by_id_runs_only_that_item(toy: pytest.Pytester) -> None:
    result = run(toy, "run.jsonl::q2[sloppy]")
    result.assert_outcomes(passed=1)


def test_a_conftest_beside_the_predictions_is_never_imported(toy: pytest.Pytester) -> None:
    bundle = toy.mkdir("bundle")
    (bundle / "conftest.py").write_text("import pathlib\npathlib.Path('PWNED').write_text('ran')\n")
    write_jsonl(bundle / "run.jsonl", ANSWERS)
    run(toy, predictions="bundle/run.jsonl").assert_outcomes(passed=5, failed=1)
    run(toy, "bundle/run.jsonl::q1[good]", predictions="bundle/run.jsonl").assert_outcomes(passed=1)
    assert not (toy.path / "PWNED").exists()


def test_report_path_is_checked_before_anything_runs(toy: pytest.Pytester) -> None:
    (toy.path / "a-file").write_text("")
    result = run(toy, "--tebench-report=a-file/report.json")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--tebench-report: cannot write to *a-file*"])
    toy.mkdir("a-dir")
    result = run(toy, "--tebench-report=a-dir")
    result.stderr.fnmatch_lines(["*--tebench-report: *a-dir is a directory*"])


def test_a_run_with_nothing_to_report_keeps_the_earlier_report(toy: pytest.Pytester) -> None:
    run(toy, "--tebench-report=report.json").assert_outcomes(passed=5, failed=1)
    before = (toy.path / "report.json").read_text()
    result = run(toy, "--tebench-report=report.json", "-k", "nothing_matches")
    result.stdout.fnmatch_lines(["*no item ran, so *report.json was not written (an earlier one is kept)*"])
    assert (toy.path / "report.json").read_text() == before


def test_a_stopped_run_says_so_in_its_report(toy: pytest.Pytester) -> None:
    lines = [ANSWERS[0], {**ANSWERS[1], "model_patch": ""}, ANSWERS[2]]  # the empty one fails
    write_jsonl(toy.path / "stop.jsonl", lines)
    run(toy, "--tebench-report=report.json", "-x", predictions="stop.jsonl").assert_outcomes(
        passed=1, failed=1
    )
    assert report(toy)["interrupted"] is True
    assert len(report(toy)["results"]) == 2
    assert report(toy)["items_not_run"] == 1


@pytest.mark.parametrize(
    ("content", "message"),
    [("", "no predictions in this file"), ("\ufeff" + json.dumps(ANSWERS[0]) + "\n", None)],
)
def test_empty_file_and_byte_order_mark(toy: pytest.Pytester, content: str, message: str | None) -> None:
    (toy.path / "p.jsonl").write_text(content, encoding="utf-8")
    result = run(toy, "--tebench-skip-missing", predictions="p.jsonl")
    if message is None:
        result.assert_outcomes(passed=1)  # a UTF-8 BOM is not an error
    else:
        assert result.ret == pytest.ExitCode.INTERRUPTED  # a collection error, with the reason
        result.stdout.fnmatch_lines([f"*{message}*"])


def test_a_directory_is_not_called_a_missing_file(toy: pytest.Pytester) -> None:
    toy.mkdir("preds")
    result = run(toy, predictions="preds")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--tebench-predictions: preds: is a directory, not a predictions file*"])


@pytest.mark.parametrize("value", ["nan", "inf", "-inf"])
def test_non_finite_limits_are_rejected(toy: pytest.Pytester, value: str) -> None:
    result = run(toy, f"--tebench-timeout-test={value}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*--tebench-timeout-test: not a finite number: '{value}'*"])


def test_a_repeated_dataset_row_does_not_hide_the_first(toy: pytest.Pytester) -> None:
    # the second q1 row is broken: the first, usable one is what every q1 item evaluates
    write_jsonl(toy.path / "questions.jsonl", [*QUESTIONS, {"instance_id": "q1", "question": "1 +"}])
    run(toy).assert_outcomes(passed=5, failed=1)


def test_the_json_report_itself_can_come_from_a_conftest(toy: pytest.Pytester) -> None:
    # pytest_tebench_generate_json is firstresult: this one replaces the built-in report builder
    toy.makeconftest(
        ARITHMETIC_CONFTEST.read_text()
        + """

@pytest.hookimpl
def pytest_tebench_generate_json(config, records, summary):
    return {"schema_version": 1, "mine": len(records), "summary": summary, "results": records, "extra": {}}
"""
    )
    run(toy, "--tebench-report=r.json").assert_outcomes(passed=5, failed=1)
    data = report(toy, "r.json")
    assert data["mine"] == 6 and data["extra"] == {"from_conftest": 6}  # update_json still ran
    assert data["summary"]["good"]["accuracy"] == 1.0
