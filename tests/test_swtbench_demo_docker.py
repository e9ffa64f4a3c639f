"""SWT-bench on the pycalc rows for real: six runs per prediction under coverage.py in the SWE-bench
environment image, SWT-bench's grading; gold (each row's test_patch) and the hand-made predictions
in one session (the gold and existing-test runs of an instance are shared by its predictions)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_tebench.demo import swebench as demo

pytest.importorskip("swebench")
pytestmark = pytest.mark.docker


def test_swtbench_demo_grades_gold_and_hand_made_tests(pytester: pytest.Pytester, tmp_path: Path) -> None:
    rows = [json.loads(line) for line in demo.DATASET.read_text().splitlines()]
    gold = [
        {"instance_id": r["instance_id"], "model_name_or_path": "gold", "model_patch": r["test_patch"]}
        for r in rows
    ]
    predictions = pytester.path / "swtbench.jsonl"
    predictions.write_text(
        "".join(json.dumps(g) + "\n" for g in gold) + demo.SWT_PREDICTIONS.read_text(), encoding="utf-8"
    )
    report = tmp_path / "report.json"
    result = pytester.runpytest(
        "-p", "no:cacheprovider", "--tebench-benchmark=swtbench", f"--tebench-dataset={demo.DATASET}",
        f"--tebench-predictions={predictions}", f"--tebench-cache-dir={tmp_path / 'cache'}",
        f"--tebench-report={report}", f"--junitxml={tmp_path / 'junit.xml'}",
    )  # fmt: skip
    # gold 4 successes, demo-model's reproduction 1; its P→P, F→F, P→F tests, the empty and missing
    # predictions, the code edit and the patch that does not apply: no success; no harness error
    result.assert_outcomes(passed=5, failed=11)
    result.stdout.fnmatch_lines(
        [
            "*model: demo-model  success 1/4 (S 25.0%)  applicable 4 (W 100.0%)  F→P 25.0%  mean coverage delta 87.5%*",
            "*model: gold  success 4/4 (S 100.0%)  applicable 4 (W 100.0%)  F→P 100.0%  mean coverage delta 100.0%*",
        ]
    )
    data = json.loads(report.read_text())
    records = {(r["model_name_or_path"], r["instance_id"][-1]): r for r in data["results"]}
    for row in "1234":
        block = records["gold", row]["swtbench"]
        assert (block["resolved"], block["applied"]) == (True, True) and block["coverage_delta"] > 0
    p2p = records["demo-model", "1"]["swtbench"]["tests_pred"]["pass_to_pass"]
    assert "tests/test_numbers.py::test_clamp_equal_bounds" in p2p
    assert records["demo-model", "1"]["swtbench"]["coverage_delta"] == 0.5
    assert records["demo-model", "2"]["swtbench"]["tests_pred"]["fail_to_fail"] == [
        "tests/test_numbers.py::test_mean_of_nothing_is_zero"
    ]
    assert records["demo-model", "3"]["swtbench"]["tests_pred"]["pass_to_fail"] == [
        "tests/test_text.py::test_slugify_keeps_empty_words"
    ]
    reproduction = records["demo-model", "4"]
    assert (
        reproduction["swtbench"]["resolved"] and reproduction["swtbench"]["patch_extraction"] == "patch-tag"
    )
    assert records["empty-model", "1"]["status"] == "empty"
    refused = records["bad-patches", "1"]
    assert refused["status"] == "not_applied" and list(refused["swtbench"]["refused_files"]) == [
        "pycalc/numbers.py"
    ]
    assert records["bad-patches", "2"]["status"] == "not_applied"
    summary = data["summary"]
    assert (summary["demo-model"]["F2X"], summary["demo-model"]["P2P"]) == (50.0, 25.0)
    junit = (tmp_path / "junit.xml").read_text()
    assert 'name="tebench.swtbench.resolved" value="True"' in junit
    assert 'name="tebench.swtbench.coverage_delta" value="0.5"' in junit
