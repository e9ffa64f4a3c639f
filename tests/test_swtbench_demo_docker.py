"""SWT-bench on the pycalc rows for real: six runs per prediction under coverage.py in the SWE-bench
environment image, SWT-bench's grading; gold (each row's test_patch) and the hand-made predictions
in one session (the gold and existing-test runs of an instance are shared by its predictions).
Runner integrity: a test patch whose conftest.py adds a fixture is graded as any; one whose
conftest.py hook turns the fixed code's failures into passes (a fake F→P) is ``tampered``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_tebench.demo import swebench as demo

pytest.importorskip("swebench")
pytestmark = pytest.mark.docker


def _new_file(path: str, text: str) -> str:
    lines = text.splitlines()
    body = "".join(f"+{line}\n" for line in lines)
    return (
        f"diff --git a/{path} b/{path}\nnew file mode 100644\n--- /dev/null\n+++ b/{path}\n"
        f"@@ -0,0 +1,{len(lines)} @@\n{body}"
    )


#: pycalc-4 (word_count skips tokens without letters or digits): a conftest.py fixture and a real
#: reproducing test (F→P, success) ...
FIXTURE_PATCH = _new_file(
    "tests/conftest.py",
    "import pytest\n\n\n@pytest.fixture\ndef dashed():\n    return 'one - two ... three'\n",
) + _new_file(
    "tests/test_dashes.py",
    "from pycalc.text import word_count\n\n\ndef test_dashes_are_no_words(dashed):\n"
    "    assert word_count(dashed) == 3\n",
)
#: ... and a test that fails on both codes with a conftest.py hook that reports its failures as
#: passes once the fix is in (F→P in the log, F→F in the runner).
FORGER_PATCH = _new_file(
    "tests/conftest.py",
    "import pathlib\n\nimport pytest\n\n\n@pytest.hookimpl(hookwrapper=True)\n"
    "def pytest_runtest_makereport(item, call):\n    outcome = yield\n    report = outcome.get_result()\n"
    "    code = pathlib.Path(__file__).parent.parent / 'pycalc' / 'text.py'\n"
    "    if report.failed and 'isalnum' in code.read_text():\n"
    "        report.outcome = 'passed'\n        report.longrepr = None\n",
) + _new_file(
    "tests/test_forged.py",
    "from pycalc.text import word_count\n\n\ndef test_forged():\n    assert word_count('a b') == 99\n",
)


def test_swtbench_demo_grades_gold_and_hand_made_tests(pytester: pytest.Pytester, tmp_path: Path) -> None:
    rows = [json.loads(line) for line in demo.DATASET.read_text().splitlines()]
    gold = [
        {"instance_id": r["instance_id"], "model_name_or_path": "gold", "model_patch": r["test_patch"]}
        for r in rows
    ]
    predictions = pytester.path / "swtbench.jsonl"
    predictions.write_text(
        "".join(json.dumps(g) + "\n" for g in gold)
        + demo.SWT_PREDICTIONS.read_text()
        + "".join(
            json.dumps({"instance_id": "pytest-tebench__pycalc-4", "model_name_or_path": m, "model_patch": p})
            + "\n"
            for m, p in (("fixture-model", FIXTURE_PATCH), ("forger-model", FORGER_PATCH))
        ),
        encoding="utf-8",
    )
    report = tmp_path / "report.json"
    result = pytester.runpytest(
        "-p", "no:cacheprovider", "--tebench-benchmark=swtbench", f"--tebench-dataset={demo.DATASET}",
        f"--tebench-predictions={predictions}", f"--tebench-cache-dir={tmp_path / 'cache'}",
        f"--tebench-report={report}", f"--junitxml={tmp_path / 'junit.xml'}",
    )  # fmt: skip
    # gold 4 successes, demo-model's reproduction 1; its P→P, F→F, P→F tests, the empty and missing
    # predictions, the code edit and the patch that does not apply: no success; no harness error;
    # the conftest.py fixture's reproduction: success; the forged F→P: tampered (each of these two
    # models has a missing prediction on the three other rows)
    result.assert_outcomes(passed=6, failed=18)
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
    assert refused["status"] == "refused" and [r["path"] for r in refused["refused_files"]] == [
        "pycalc/numbers.py"
    ]
    assert records["bad-patches", "2"]["status"] == "not_applied"
    summary = data["summary"]
    assert (summary["demo-model"]["F2X"], summary["demo-model"]["P2P"]) == (50.0, 25.0)
    fixture = records["fixture-model", "4"]
    assert fixture["status"] == "evaluated" and fixture["swtbench"]["resolved"]
    assert fixture["guard"]["active"] and fixture["guard"]["findings"] == []
    assert fixture["guard"]["baseline"] == {"pred_pre": "gold_pre", "pred_post": "gold_post"}
    forged = records["forger-model", "4"]
    assert forged["status"] == "tampered" and not forged["swtbench"]["resolved"]
    # without the guard it would have been a success: the log's F→P is the forged test
    assert forged["swtbench"]["tests_pred"]["fail_to_pass"] == ["tests/test_forged.py::test_forged"]
    rules = {(f["rule"], f["detail"].split(":")[0]) for f in forged["guard"]["findings"]}
    assert {("hook", "pred_pre"), ("hook", "pred_post"), ("unconfirmed", "pred_post")} <= rules
    assert (summary["forger-model"]["counts"]["tampered"], summary["forger-model"]["S"]) == (1, 0.0)
    junit = (tmp_path / "junit.xml").read_text()
    assert 'name="tebench.swtbench.resolved" value="True"' in junit
    assert 'name="tebench.swtbench.coverage_delta" value="0.5"' in junit
    assert 'name="tebench.swtbench.demo-model.S" value="25.0"' in junit
    assert 'name="tebench.swtbench.forger-model.tampered" value="1"' in junit
