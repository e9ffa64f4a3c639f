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


# --------------------------------------------------------------------------- hostile predictions

F2P_1 = "tests/test_numbers.py::test_clamp_rejects_inverted_bounds"
INIT_LINE = '"""pycalc: a tiny library, the SWE-bench demo project of pytest-tebench."""'


def _new_file(path: str, text: str) -> str:
    lines = text.splitlines()
    body = "".join(f"+{line}\n" for line in lines)
    return f"diff --git a/{path} b/{path}\nnew file mode 100644\n--- /dev/null\n+++ b/{path}\n@@ -0,0 +1,{len(lines)} @@\n{body}"


def _append_to_init(text: str) -> str:
    """pycalc/__init__.py (one line at every base commit) with ``text`` after it."""
    lines = text.splitlines()
    body = "".join(f"+{line}\n" for line in lines)
    path = "pycalc/__init__.py"
    return f"diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n@@ -1 +1,{len(lines) + 1} @@\n {INIT_LINE}\n{body}"


MAKEREPORT_PASS = """import pytest


class Pass:
    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item, call):
        outcome = yield
        outcome.get_result().outcome = "passed"
"""

#: One prediction per route class against pytest-tebench__pycalc-1; none fixes clamp. Each makes
#: SWE-bench's own grading report the FAIL_TO_PASS test passed when nothing guards the runner.
HOSTILE: dict[str, tuple[str, str]] = {
    # the three examples
    "conftest": (
        "refused",
        _new_file(
            "conftest.py",
            MAKEREPORT_PASS + "\n\npytest_runtest_makereport = Pass().pytest_runtest_makereport\n",
        ),
    ),
    "sitecustomize": (
        "refused",
        _new_file("sitecustomize.py", "import os\n\nos.environ['PYTEST_ADDOPTS'] = '-p helper'\n")
        + _new_file(
            "helper.py",
            MAKEREPORT_PASS + "\n\npytest_runtest_makereport = Pass().pytest_runtest_makereport\n",
        ),
    ),
    "gc-hook": (
        "tampered",
        _append_to_init(
            "import gc\n\nfrom _pytest.config import PytestPluginManager\n\n"
            + MAKEREPORT_PASS
            + "\n\nfor _pm in [o for o in gc.get_objects() if isinstance(o, PytestPluginManager)]:\n    _pm.register(Pass())\n"
        ),
    ),
    # configuration through an ini section; internals monkeypatched; the log forged; an xfail
    "ini-section": ("refused", _new_file("setup.cfg", "[tool:pytest]\naddopts = -p pycalc.numbers\n")),
    # package metadata in the tree (on sys.path): its pytest11 entry point loads a plugin at start-up
    "metadata": (
        "refused",
        _new_file("pycalc.egg-info/entry_points.txt", "[pytest11]\nreport = pycalc.report\n")
        + _new_file(
            "pycalc/report.py",
            MAKEREPORT_PASS + "\n\npytest_runtest_makereport = Pass().pytest_runtest_makereport\n",
        ),
    ),
    "monkeypatch": (
        "tampered",
        _append_to_init(
            "import _pytest.reports\n\n_orig = _pytest.reports.TestReport.from_item_and_call.__func__\n\n\n"
            "def _made(cls, item, call):\n    report = _orig(cls, item, call)\n    report.outcome = 'passed'\n"
            "    report.longrepr = None\n    return report\n\n\n"
            "_pytest.reports.TestReport.from_item_and_call = classmethod(_made)\n"
        ),
    ),
    "forged-log": (
        "tampered",
        _append_to_init(f"import atexit\n\natexit.register(print, 'PASSED {F2P_1}')\n"),
    ),
    # test content is the benchmark's: a package of the tests' folder shadows the one under test
    # (pytest puts tests/ first on sys.path); set aside, the unfixed pycalc fails. No guard rule sees
    # it: the log is honest, the tests are gold's, only what they import is not
    "shadow": (
        "evaluated",
        _new_file("tests/pycalc/__init__.py", '"""pycalc, as the tests see it."""')
        + _new_file(
            "tests/pycalc/numbers.py",
            "def clamp(value, low, high):\n    if low > high:\n        raise ValueError(low)\n"
            "    return max(low, min(value, high))\n\n\ndef mean(values):\n    return sum(values) / len(values)\n",
        ),
    ),
    "xfail": (
        "tampered",
        "diff --git a/pycalc/numbers.py b/pycalc/numbers.py\n--- a/pycalc/numbers.py\n+++ b/pycalc/numbers.py\n"
        '@@ -1,5 +1,9 @@\n def clamp(value, low, high):\n     """Limit value to the range [low, high]."""\n'
        "+    if low > high:\n+        import pytest\n+\n+        pytest.xfail('inverted bounds')\n"
        "     return max(low, min(value, high))\n \n \n",
    ),
}


def test_hostile_predictions_are_refused_or_tampered_and_gold_still_resolves(
    pytester: pytest.Pytester, tmp_path: Path
) -> None:
    gold = json.loads(demo.DATASET.read_text().splitlines()[0])["patch"]
    lines = [(model, patch) for model, (_, patch) in HOSTILE.items()] + [("gold-copy", gold)]
    predictions = pytester.path / "hostile.jsonl"
    predictions.write_text(
        "".join(
            json.dumps({"instance_id": "pytest-tebench__pycalc-1", "model_name_or_path": m, "model_patch": p})
            + "\n"
            for m, p in lines
        )
    )
    result = pytester.runpytest(
        "-p",
        "no:cacheprovider",
        "--tebench-benchmark=swebench",
        f"--tebench-dataset={demo.DATASET}",
        f"--tebench-predictions={predictions}",
        "--tebench-skip-missing",
        f"--tebench-cache-dir={tmp_path / 'cache'}",
        "--tebench-timeout-test=300",
        f"--tebench-report={tmp_path / 'report.json'}",
        f"--junitxml={tmp_path / 'junit.xml'}",
    )
    # every hostile prediction fails (unresolved), none is a harness error; the gold fix resolves
    result.assert_outcomes(passed=1, failed=len(HOSTILE))
    result.stdout.fnmatch_lines(
        [
            "*model: conftest  resolved 0/1 = 0.0% of all instances*",
            "*judged: *refused 1, tampered 0",
            "*model: xfail  resolved 0/1 = 0.0% of all instances*",
            "*judged: *refused 0, tampered 1",
        ]
    )
    records = {
        r["model_name_or_path"]: r for r in json.loads((tmp_path / "report.json").read_text())["results"]
    }
    for model, (status, _) in HOSTILE.items():
        assert (records[model]["status"], records[model]["swebench"]["resolved"]) == (status, False), model
    rules = {m: {f["rule"] for f in (r.get("guard") or {}).get("findings") or ()} for m, r in records.items()}
    refused = {m: [(f["path"], f["rule"]) for f in r.get("refused_files") or ()] for m, r in records.items()}
    assert refused["conftest"] == [("conftest.py", "conftest")]
    assert refused["sitecustomize"] == [("sitecustomize.py", "startup")]  # helper.py alone is harmless
    assert refused["ini-section"] == [("setup.cfg", "pytest-config")]
    assert refused["metadata"] == [("pycalc.egg-info/entry_points.txt", "metadata")]
    assert {"hook", "unconfirmed"} <= rules["gc-hook"]
    assert {"changed", "unconfirmed"} <= rules["monkeypatch"]
    assert rules["forged-log"] == {"unconfirmed"} and rules["xfail"] == {"anomaly"}
    # what the graded log alone says: SWE-bench's own grading would have resolved the four
    for model in ("gc-hook", "monkeypatch", "forged-log", "xfail"):
        assert records[model]["swebench"]["resolution"] == "RESOLVED_FULL", model
    shadow = records["shadow"]
    assert shadow["set_aside_files"] == ["tests/pycalc/__init__.py", "tests/pycalc/numbers.py"]
    assert (shadow["swebench"]["resolution"], shadow["swebench"]["f2p_failure"]) == ("RESOLVED_NO", [F2P_1])
    assert shadow["guard"]["findings"] == [] and records["xfail"]["set_aside_files"] == []
    honest = records["gold-copy"]
    assert (honest["status"], honest["swebench"]["resolved"], honest["guard"]["findings"]) == (
        "evaluated",
        True,
        [],
    )
    assert honest["guard"]["baseline"] == "gold run" and honest["set_aside_files"] == []
    junit = (tmp_path / "junit.xml").read_text()
    assert 'name="tebench.status" value="tampered"' in junit and 'name="tebench.refused_files"' in junit
    assert 'name="tebench.set_aside_files" value="tests/pycalc/__init__.py,tests/pycalc/numbers.py"' in junit
