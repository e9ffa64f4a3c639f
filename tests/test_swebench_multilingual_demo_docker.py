"""The Multilingual demo (jcalc, Java Maven rows) evaluated for real in build mode: the spec's setup
online in the Java image, each row's eval_script offline in the sandbox, graded by parse_log_maven;
gold resolves both rows, a wrong fix does not, a right fix written differently does."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_tebench.demo import multilingual as demo

pytest.importorskip("swebench")
pytestmark = pytest.mark.docker


def test_the_multilingual_demo_builds_java_rows_here_and_grades_gold_and_a_model(
    pytester: pytest.Pytester, tmp_path: Path
) -> None:
    common = (
        "-p",
        "no:cacheprovider",
        "--tebench-benchmark=swebench",
        f"--tebench-dataset={demo.DATASET}",
        f"--tebench-cache-dir={tmp_path / 'cache'}",
        "--tebench-swebench-images=build",
    )
    gold = pytester.runpytest(
        "--tebench-predictions=gold", *common, f"--tebench-report={tmp_path / 'gold.json'}"
    )
    gold.assert_outcomes(passed=2)
    gold.stdout.fnmatch_lines(["*model: gold  resolved 2/2 = 100.0% of all instances (SWE-bench's figure)*"])
    records = json.loads((tmp_path / "gold.json").read_text())["results"]
    for record in records:
        block = record["swebench"]
        assert block["environment"] == "build" and block["image"] == "java17"
        assert block["log_parser"] == "parse_log_maven" and block["resolution"] == "RESOLVED_FULL"
        assert record["guard"]["active"] is False and "java runners" in record["guard"]["reason"]

    predictions = pytester.path / "demo-model.jsonl"
    predictions.write_bytes(demo.PREDICTIONS.read_bytes())
    model = pytester.runpytest(
        f"--tebench-predictions={predictions}", *common, f"--tebench-report={tmp_path / 'model.json'}"
    )
    model.assert_outcomes(passed=1, failed=1)
    model.stdout.fnmatch_lines(["*model: demo-model  resolved 1/2 = 50.0% of all instances*"])
    by_id = {r["instance_id"]: r for r in json.loads((tmp_path / "model.json").read_text())["results"]}
    wrong = by_id["pytest-tebench__jcalc-1"]["swebench"]
    assert wrong["resolved"] is False
    assert wrong["f2p_failure"] == ["demo.jcalc.CalcTest#testClampRejectsInvertedBounds"]
    # the && chain stops at the first failed test: the rest never ran, so they count as failing too
    assert wrong["p2p_failure"] == ["demo.jcalc.CalcTest#testClampInside", "demo.jcalc.CalcTest#testMean"]
    assert by_id["pytest-tebench__jcalc-2"]["swebench"]["resolved"] is True
