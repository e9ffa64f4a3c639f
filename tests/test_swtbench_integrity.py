"""SWT-bench's runner integrity without Docker: the guard for real in pytest sessions of a tiny
tree (gold's test patch and two predictions, each on the original and the fixed code), judged as
the adapter judges the prediction's runs against gold's; what a test patch may carry; the
run-level JUnit figures."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_tebench.benchmarks.swtbench import integrity
from pytest_tebench.benchmarks.swtbench import summary
from pytest_tebench.benchmarks.swtbench.evaluation import RunOutcome
from pytest_tebench.integrity import evidence
from pytest_tebench.integrity import paths

ORIGINAL = "def double(x):\n    return 2 * x if x > 0 else 0\n"
FIXED = "def double(x):\n    return 2 * x\n"
GOLD = {
    "tests/test_calc.py": "from calc import double\n\n\ndef test_negative():\n    assert double(-1) == -2\n"
}
#: A conftest.py that only adds a fixture, and a real reproduction using it.
FIXTURE = {
    "tests/conftest.py": "import pytest\n\n\n@pytest.fixture\ndef minus_one():\n    return -1\n",
    "tests/test_new.py": "from calc import double\n\n\ndef test_minus(minus_one):\n    assert double(minus_one) == -2\n",
}
#: A test that always fails, reported as passing once the fix is in: F→P in the log, F→F in the runner.
FORGER = {
    "tests/conftest.py": """import pathlib

import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    fixed = "else" not in (pathlib.Path(__file__).parent.parent / "calc.py").read_text()
    if report.failed and fixed:
        report.outcome = "passed"
        report.longrepr = None
""",
    "tests/test_new.py": "from calc import double\n\n\ndef test_minus():\n    assert double(2) == 5\n",
}


def _run(tree: Path, name: str, calc: str, files: dict[str, str], *, guarded: bool = True) -> RunOutcome:
    """One configuration: ``files`` on ``calc``, their tests in a pytest session with the guard
    loaded first (as the container runs them); the log read as SWE-bench's parser reads it."""
    folder = tree / name
    (folder / "tests").mkdir(parents=True)
    (folder / "calc.py").write_text(calc)
    for path, text in files.items():
        (folder / path).write_text(text)
    nonce = evidence.new_nonce()
    tests = sorted(path for path in files if "/test_" in path)
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", evidence.PLUGIN, "-p", "no:cacheprovider", "-p", "no:tebench",
         "-rA", *tests],
        cwd=folder, capture_output=True, text=True, check=False,
        env={"PATH": os.environ.get("PATH", ""), "PYTHONPATH": f"{evidence.PLUGIN_DIR}:{folder}",
             "PYTHONNOUSERSITE": "1", "TEBENCH_GUARD_NONCE": nonce, "TEBENCH_GUARD_TREE": str(folder)},
    )  # fmt: skip
    log = result.stdout + result.stderr
    statuses = {}
    for line in evidence.strip_records(log, nonce).splitlines():
        words = line.split()
        if len(words) >= 2 and words[0] in ("PASSED", "FAILED", "ERROR", "XFAIL", "SKIPPED"):
            statuses[words[1]] = words[0]
    records = evidence.records(log, nonce) if guarded else []
    return RunOutcome(name, True, status_map=statuses, guarded=guarded, guard_records=records)


@pytest.fixture(scope="module")
def gold(tmp_path_factory: pytest.TempPathFactory) -> dict[str, RunOutcome]:
    tree = tmp_path_factory.mktemp("gold")
    return {
        "gold_pre": _run(tree, "gold_pre", ORIGINAL, GOLD),
        "gold_post": _run(tree, "gold_post", FIXED, GOLD),
    }


def _prediction(tmp_path: Path, files: dict[str, str]) -> dict[str, RunOutcome]:
    return {
        "pred_pre": _run(tmp_path, "pred_pre", ORIGINAL, files),
        "pred_post": _run(tmp_path, "pred_post", FIXED, files),
    }


def test_a_conftest_fixture_is_test_content(tmp_path: Path, gold: dict[str, RunOutcome]) -> None:
    runs = _prediction(tmp_path, FIXTURE)
    assert (runs["pred_pre"].status_map, runs["pred_post"].status_map) == (
        {"tests/test_new.py::test_minus": "FAILED"},
        {"tests/test_new.py::test_minus": "PASSED"},
    )
    block = integrity.judge({**gold, **runs}, resolved=True)
    assert block == {
        "active": True,
        "records": {"pred_pre": 1, "pred_post": 1},
        "baseline": {"pred_pre": "gold_pre", "pred_post": "gold_post"},
        "findings": [],
    }


def test_a_conftest_hook_that_turns_failures_into_passes_is_tampering(
    tmp_path: Path, gold: dict[str, RunOutcome]
) -> None:
    runs = _prediction(tmp_path, FORGER)
    # the log alone is a fake F→P
    assert runs["pred_post"].status_map == {"tests/test_new.py::test_minus": "PASSED"}
    findings = integrity.judge({**gold, **runs}, resolved=True)["findings"]
    rules = sorted((f["rule"], f["detail"].split(":")[0]) for f in findings)
    assert rules == [("hook", "pred_post"), ("hook", "pred_pre"), ("unconfirmed", "pred_post")]
    unconfirmed = next(f["detail"] for f in findings if f["rule"] == "unconfirmed")
    assert unconfirmed.endswith("the log says PASSED, the runner saw failed")


def test_no_record_where_the_log_makes_a_success_and_an_unguarded_command(
    tmp_path: Path, gold: dict[str, RunOutcome]
) -> None:
    runs = _prediction(tmp_path, FIXTURE)
    runs["pred_post"].guard_records = []
    findings = integrity.judge({**gold, **runs}, resolved=True)["findings"]
    assert [(f["rule"], f["detail"].split(":")[0]) for f in findings] == [("no-record", "pred_post")]
    assert integrity.judge({**gold, **runs}, resolved=False)["findings"] == []
    # two records with this run's nonce: one was printed by the tests (whatever the log resolves)
    runs["pred_post"].guard_records = [{"x": 1}, {"x": 2}]
    assert integrity.judge({**gold, **runs}, resolved=False)["findings"][0]["rule"] == "several-records"
    runs["pred_pre"].guarded = False
    assert integrity.judge({**gold, **runs}, resolved=True) == {
        "active": False,
        "reason": "the test command is not pytest: no in-process guard",
    }


def test_a_test_patch_may_carry_conftest_but_not_the_runner_s_files() -> None:
    policy = paths.policy_for("pytest -rA", "o/r", test_content=True)
    changes = [
        paths.Change("tests/conftest.py", None, "import pytest\n"),
        paths.Change("tests/test_a.py", None, "def test_a(): pass\n"),
        paths.Change("tests/pytest.ini", None, "[pytest]\naddopts = -p evil\n"),
        paths.Change("tests/sitecustomize.py", None, "import os\n"),
        paths.Change("tests/evil.pth", None, "import os\n"),
        paths.Change("tests/pytest.py", None, "x = 1\n"),
    ]
    assert [(r.path, r.rule) for r in paths.refusals(changes, policy)] == [
        ("tests/pytest.ini", "pytest-config"),
        ("tests/sitecustomize.py", "startup"),
        ("tests/evil.pth", "startup"),
        ("tests/pytest.py", "shadowing"),
    ]
    django = paths.policy_for(
        "./tests/runtests.py --settings=test_sqlite", "django/django", test_content=True
    )
    assert [r.rule for r in paths.refusals([paths.Change("tests/runtests.py", "a", "b")], django)] == [
        "test-command"
    ]


def _record(status: str, **block: object) -> dict[str, object]:
    return {
        "model_name_or_path": "m",
        "instance_id": "i",
        "project": "o/r",
        "status": status,
        "swtbench": block,
    }


def test_run_level_figures_as_junit_properties() -> None:
    records = [
        _record(
            "evaluated",
            resolved=True,
            applied=True,
            f2x=True,
            f2p=True,
            coverage_delta=0.5,
            executable_lines=2,
        ),
        _record("evaluated", resolved=False, applied=True, p2p=True, coverage_delta=0.25, executable_lines=4),
        # tampered: its block says success, the guard says no; refused: nothing ran
        _record("tampered", resolved=True, applied=True, f2p=True, coverage_delta=1.0, executable_lines=2),
        _record("refused"),
        _record("error"),
    ]
    properties = dict(summary.summary_properties(summary.summarise(records)))
    # judged 4 (the error is not): S 1/4, W 2/4, F→P 1/4, P→P 1/4; ΔC (0.5 + 0.25 + 0 + 0) / 4
    assert {k.removeprefix("tebench.swtbench.m."): v for k, v in properties.items()} == {
        "S": 25.0, "W": 50.0, "F2X": 25.0, "F2P": 25.0, "P2P": 25.0, "coverage_delta": 18.75,
        "items": 5, "judged": 4, "resolved": 1, "applied": 2, "empty": 0, "not_applied": 0,
        "missing_prediction": 0, "refused": 1, "tampered": 1, "unsupported_environment": 0,
        "harness_errors": 1,
    }  # fmt: skip
