"""The SWE-bench demo (pycalc) evaluated for real: environment image from Debian + PyPI, tests in
an offline sandbox, SWE-bench's grading; gold and a model's predictions, reports and outcomes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_tebench.demo import swebench as demo

pytest.importorskip("swebench")
pytestmark = pytest.mark.docker


def test_the_swebench_demo_resolves_gold_and_grades_a_model(
    pytester: pytest.Pytester, tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    common = (
        "-p",
        "no:cacheprovider",
        "--tebench-benchmark=swebench",
        f"--tebench-dataset={demo.DATASET}",
        f"--tebench-cache-dir={cache}",
        "--tebench-timeout-test=300",
    )
    gold = pytester.runpytest(
        "--tebench-predictions=gold",
        *common,
        f"--tebench-report={tmp_path / 'gold.json'}",
        "-m",
        "pytest_tebench_pycalc_1_0",
    )
    gold.assert_outcomes(passed=4)
    gold.stdout.fnmatch_lines(["*model: gold  resolved 4/4 = 100.0% of all instances (SWE-bench's figure)*"])

    predictions = pytester.path / "demo-model.jsonl"
    predictions.write_bytes(demo.PREDICTIONS.read_bytes())
    run_report = tmp_path / "run.json"
    result = pytester.runpytest(
        f"--tebench-predictions={predictions}",
        *common,
        f"--tebench-report={tmp_path / 'model.json'}",
        f"--tebench-swebench-report={run_report}",
        f"--junitxml={tmp_path / 'junit.xml'}",
    )
    # resolved passes; unresolved, not applied and empty fail; nothing is a harness error. The
    # empty model answered 1 of the 4 instances: the other 3 are missing, unresolved against the total
    result.assert_outcomes(passed=1, failed=7)
    result.stdout.fnmatch_lines(
        [
            "*model: demo-model  resolved 1/4 = 25.0% of all instances*",
            "*model: empty-model  resolved 0/4 = 0.0%*",
        ]
    )
    records = {
        (r["model_name_or_path"], r["instance_id"]): r
        for r in json.loads((tmp_path / "model.json").read_text())["results"]
    }
    summary = json.loads((tmp_path / "model.json").read_text())["summary"]
    assert (summary["demo-model"]["resolved"], summary["demo-model"]["judged"]) == (1, 4)
    wrong = records["demo-model", "pytest-tebench__pycalc-1"]
    assert (wrong["status"], wrong["swebench"]["resolved"]) == ("evaluated", False)
    assert wrong["swebench"]["f2p_failure"] == ["tests/test_numbers.py::test_clamp_rejects_inverted_bounds"]
    assert wrong["swebench"]["p2p_failure"] == []
    breaking = records["demo-model", "pytest-tebench__pycalc-2"]["swebench"]
    assert breaking["f2p_success"] == ["tests/test_numbers.py::test_mean_of_nothing"]
    assert breaking["p2p_failure"] == ["tests/test_numbers.py::test_mean"]
    assert records["demo-model", "pytest-tebench__pycalc-3"]["status"] == "not_applied"
    right = records["demo-model", "pytest-tebench__pycalc-4"]
    assert right["swebench"]["resolved"] and right["swebench"]["resolution"] == "RESOLVED_FULL"
    assert right["apply_method"] == "git apply" and right["swebench"]["patch_extraction"] == "patch-tag"
    assert (right["swebench"]["python"], right["swebench"]["suite"]) == ("3.9", "bullseye")
    assert records["empty-model", "pytest-tebench__pycalc-1"]["status"] == "empty"
    assert records["empty-model", "pytest-tebench__pycalc-2"]["status"] == "missing_prediction"
    assert summary["empty-model"]["judged"] == 4
    assert (summary["empty-model"]["empty"], summary["empty-model"]["missing_prediction"]) == (1, 3)

    official = json.loads(run_report.with_name("run.demo-model.json").read_text())
    assert official["resolved_ids"] == ["pytest-tebench__pycalc-4"]
    assert official["unresolved_ids"] == ["pytest-tebench__pycalc-1", "pytest-tebench__pycalc-2"]
    assert official["error_ids"] == ["pytest-tebench__pycalc-3"]
    assert json.loads(run_report.with_name("run.empty-model.json").read_text())["empty_patch_ids"] == [
        "pytest-tebench__pycalc-1"
    ]
    junit = (tmp_path / "junit.xml").read_text()
    assert 'name="tebench.swebench.resolved" value="True"' in junit
