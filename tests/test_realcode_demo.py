"""The RealCodeJava demo evaluated for real (local Maven): the references of every instance, each
of the 11 samples' outcome, the metrics computed by hand, the JUnit properties, and the recorded
outcomes that tests/test_realcode_units.py computes the metrics from."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from pytest_tebench.demo import realcode as demo

from conftest import TEST_MAVEN_REPO

pytestmark = pytest.mark.maven

RECORDED = Path(__file__).parent / "fixtures" / "realcode-demo-outcomes.json"
#: Each sample's outcome, by instance, in file order (docs/realcode.md, "The demo").
EXPECTED = {
    "1": ["passed", "passed", "failed", "compile_error", "passed"],
    "2": ["failed", "passed", "passed"],
    "3": ["failed", "failed"],
    "4": ["passed"],
}


def test_the_realcode_demo_scores_every_sample(pytester: pytest.Pytester, tmp_path: Path) -> None:
    predictions = pytester.path / "demo-model.jsonl"
    predictions.write_bytes(demo.PREDICTIONS.read_bytes())
    report = tmp_path / "report.json"
    junit = tmp_path / "junit.xml"
    result = pytester.runpytest(
        "-p",
        "no:cacheprovider",
        "--tebench-benchmark=realcode",
        f"--tebench-dataset={demo.DATASET}",
        f"--tebench-predictions={predictions}",
        f"--tebench-cache-dir={tmp_path / 'cache'}",
        f"--tebench-maven-repo={TEST_MAVEN_REPO}",
        "--tebench-executor=local",
        f"--tebench-report={report}",
        f"--junitxml={junit}",
    )
    # an item passes when one of its samples does: center's two samples are both wrong
    result.assert_outcomes(passed=3, failed=1)
    result.stdout.fnmatch_lines(["*demo-model*56.7*100.0*-*100.0*0.0*100.0*100.0*90.9*11*"])
    data = json.loads(report.read_text())
    records = {r["instance_id"]: r for r in data["results"]}
    assert {iid: [s["status"] for s in r["samples"]] for iid, r in records.items()} == EXPECTED
    for record in records.values():
        baseline = record["baseline"]
        assert (baseline["pass_oracle"], baseline["pass_stub"], baseline["pass_dry_run"]) == (
            True,
            False,
            True,
        )
        assert baseline["contexts_match"] and baseline["oracle"]["same_as_dry_run"]
        # every selected test fails with the stub: the rows' FAIL_TO_PASS lists are right
        assert set(baseline["stub"]["tests"].values()) == {"failed"}
        assert sorted(baseline["stub"]["tests"]) == record["selection"]
    repeat = records["1"]["samples"]
    assert [s["cleaning"] for s in repeat] == [["fence", "signature"], [], [], [], ["cut"]]
    assert repeat[3]["compiled"] is False and repeat[2]["pass_to_pass"] == {"passed": 0, "total": 1}
    assert records["2"]["samples"][2]["cleaning"] == ["closed"]
    # the char-wise reversal passes the ASCII test only: both rules reject it
    chars = records["2"]["samples"][0]
    assert chars["fail_to_pass"] == {"passed": 1, "total": 3}
    assert not chars["pass_tests"] and not chars["pass_dry_run_rule"]
    assert records["1"]["pass_at_k"] == {"1": pytest.approx(0.6), "5": 1.0, "10": None}

    summary = data["summary"]["demo-model"]
    assert summary["pass_at_1"] == pytest.approx((3 / 5 + 2 / 3 + 0 + 1) / 4)
    assert (summary["pass_at_5"], summary["pass_at_10"]) == (1.0, None)
    assert summary["compiled"] == pytest.approx(10 / 11)
    assert data["realcode_rule"] == "tests"

    cases = {case.get("name"): case for case in ET.parse(junit).getroot().iter("testcase")}
    properties = {p.get("name"): p.get("value") for p in cases["1[demo-model]"].iter("property")}
    assert properties["tebench.realcode.c"] == "3" and properties["tebench.realcode.n"] == "5"
    assert properties["tebench.realcode.samples"] == "passed,passed,failed,compile_error,passed"

    # the unit tests compute the metrics from these outcomes: they must be this run's
    recorded = {r["instance_id"]: r for r in json.loads(RECORDED.read_text())}
    for iid, record in records.items():
        assert (recorded[iid]["n"], recorded[iid]["c"]) == (record["n"], record["c"])
        assert [s["status"] for s in recorded[iid]["samples"]] == [s["status"] for s in record["samples"]]
