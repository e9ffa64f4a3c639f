"""A prediction must not grade itself (issue 25), without Docker.

* the path policy (:mod:`pytest_tebench.integrity.paths`) on every rule and on the changes that
  must pass (a ``setup.cfg`` edit outside its pytest section, as one Verified gold makes);
* the changed files of a real tree, ignored files included;
* the guard plugin for real: each attacker route runs as a pytest session of its own with the
  guard loaded first, and its record is judged against the honest session's (the baseline),
  as the SWE-bench adapter judges a model's run against gold's.
"""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pytest_tebench.benchmarks.swebench import evaluation
from pytest_tebench.benchmarks.swebench import summary
from pytest_tebench.integrity import evidence
from pytest_tebench.integrity import paths
from pytest_tebench.metrics.outcomes import status_counts

PYTEST = paths.policy_for("pytest -rA", "o/r")
DJANGO = paths.policy_for(
    "./tests/runtests.py --verbosity 2 --settings=test_sqlite --parallel 1", "django/django"
)
SYMPY = paths.policy_for("PYTHONWARNINGS='ignore::UserWarning' bin/test -C --verbose", "sympy/sympy")
TOX = paths.policy_for("tox --current-env -epy39 -v --", "sphinx-doc/sphinx")

SETUP_CFG = """[metadata]
name = x

[options]
install_requires =
    astroid>=2.6

[tool:pytest]
testpaths = tests
addopts = -m "not acceptance"

[isort]
line_length = 88
"""
PYPROJECT = (
    '[project]\nname = "x"\n\n[tool.black]\nline-length = 88\n\n[tool.pytest.ini_options]\naddopts = "-ra"\n'
)


def _rule(
    path: str, old: str | None = "", new: str | None = "", policy: paths.RunnerPolicy = PYTEST, mode: str = ""
) -> str | None:
    refusal = paths.check(paths.Change(path, old, new, mode), policy)
    return None if refusal is None else refusal.rule


@pytest.mark.parametrize(
    ("path", "old", "new", "rule"),
    [
        ("conftest.py", None, "x = 1\n", "conftest"),
        ("pycalc/sub/conftest.py", "", "changed\n", "conftest"),
        ("pytest.ini", None, "[pytest]\naddopts = -p evil\n", "pytest-config"),
        ("tests/.pytest.ini", None, "[pytest]\n", "pytest-config"),
        ("pytest.toml", None, "[pytest]\n", "pytest-config"),
        ("sitecustomize.py", None, "import os\n", "startup"),
        ("pkg/usercustomize/__init__.py", None, "", "startup"),
        ("evil.pth", None, "import evil\n", "startup"),
        ("pycalc/__pycache__/numbers.cpython-39.pyc", None, "\x00", "compiled"),
        ("pycalc/numbers.cpython-39-x86_64-linux-gnu.so", None, "\x7fELF", "compiled"),
        ("pytest.py", None, "", "shadowing"),
        ("_pytest/__init__.py", None, "", "shadowing"),
        ("pycalc/pluggy.py", None, "", "shadowing"),
        ("tebench_guard.py", None, "", "shadowing"),
        ("json.py", None, "", "shadowing"),
        ("tomli/__init__.py", None, "", "shadowing"),
        # metadata on sys.path registers pytest11 plugins that pytest loads at start-up
        ("evil.dist-info/entry_points.txt", None, "[pytest11]\nevil = pycalc.evil\n", "metadata"),
        ("src/pycalc.egg-info/entry_points.txt", None, "[pytest11]\nevil = pycalc.evil\n", "metadata"),
        ("pycalc.egg-info/PKG-INFO", "Name: pycalc\n", "Name: pycalc\n\n", "metadata"),
        ("evil.egg/EGG-INFO/entry_points.txt", None, "[pytest11]\n", "metadata"),
        ("evil.egg-link", None, "/workspace/evil\n.\n", "metadata"),
        # a pytest11 entry point declared for the next install (SWE-bench's official eval.sh re-installs)
        (
            "setup.cfg",
            SETUP_CFG,
            SETUP_CFG + "\n[options.entry_points]\npytest11 =\n    e = pkg.e\n",
            "metadata",
        ),
        (
            "pyproject.toml",
            PYPROJECT,
            PYPROJECT + '\n[project.entry-points.pytest11]\ne = "pkg.e"\n',
            "metadata",
        ),
        (
            "pyproject.toml",
            PYPROJECT,
            PYPROJECT + '\n[tool.poetry.plugins."pytest11"]\ne = "pkg.e"\n',
            "metadata",
        ),
        ("setup.py", "setup()\n", "setup(entry_points={'pytest11': ['e = pkg.e']})\n", "metadata"),
        (
            "setup.cfg",
            SETUP_CFG,
            SETUP_CFG.replace('"not acceptance"', '"not acceptance" -p evil'),
            "pytest-config",
        ),
        (
            "setup.cfg",
            SETUP_CFG,
            SETUP_CFG.replace("[isort]", "[tool:pytest]\naddopts = -p evil\n[isort]"),
            "pytest-config",
        ),
        ("sub/setup.cfg", None, "[tool:pytest]\naddopts = -p evil\n", "pytest-config"),
        (
            "tox.ini",
            "[flake8]\nmax = 1\n",
            "[flake8]\nmax = 1\n[pytest]\naddopts = -p evil\n",
            "pytest-config",
        ),
        ("pyproject.toml", PYPROJECT, PYPROJECT.replace('"-ra"', '"-ra -p evil"'), "pytest-config"),
        ("pyproject.toml", PYPROJECT, PYPROJECT + "[[[", "pytest-config"),
    ],
)
def test_runner_files_are_refused(path: str, old: str | None, new: str | None, rule: str) -> None:
    assert _rule(path, old, new) == rule


@pytest.mark.parametrize(
    ("path", "old", "new"),
    [
        ("pycalc/numbers.py", "a\n", "b\n"),
        ("pycalc/new_module.py", None, "x = 1\n"),
        ("pycalc/json.py", None, ""),  # stdlib names only matter at the root
        ("test/test_new.py", None, ""),
        ("src/_pytest/scope.py", None, ""),  # pytest's own repository adds modules to _pytest
        ("src/_pytest/runner.py", "a\n", "b\n"),
        # pylint-dev__pylint-4661's gold: [options] and [isort] of setup.cfg, not [tool:pytest]
        ("setup.cfg", SETUP_CFG, SETUP_CFG.replace("astroid>=2.6", "appdirs>=1.4.0\n    astroid>=2.6")),
        ("setup.cfg", SETUP_CFG, SETUP_CFG.replace("line_length = 88", "line_length = 100")),
        ("pyproject.toml", PYPROJECT, PYPROJECT.replace("88", "100")),
        ("tox.ini", "[tox]\nenvlist = py39\n", "[tox]\nenvlist = py39,py310\n"),  # not the test command
        ("tests/runtests.py", "a\n", "b\n"),  # not django's command here
        ("docs/entry_points.txt", None, "[pytest11]\n"),  # read only inside metadata folders
        (
            "setup.cfg",
            SETUP_CFG,
            SETUP_CFG + "\n[options.entry_points]\nconsole_scripts =\n    t = pkg:main\n",
        ),
        (
            "pyproject.toml",
            PYPROJECT,
            PYPROJECT + '\n[project.entry-points.console_scripts]\nt = "pkg:main"\n',
        ),
        ("setup.py", "setup(name='x')\n", "setup(name='y')\n"),
        ("pycalc/distinfo.py", None, ""),
    ],
)
def test_the_project_s_own_changes_pass(path: str, old: str | None, new: str | None) -> None:
    assert _rule(path, old, new) is None


def test_the_scripts_of_the_test_command_are_refused() -> None:
    assert DJANGO.scripts >= {"tests/runtests.py", "tests/test_sqlite.py", "django/test/runner.py"}
    assert _rule("tests/runtests.py", "a", "b", DJANGO) == "test-command"
    assert _rule("tests/test_sqlite.py", "a", "b", DJANGO) == "test-command"
    assert _rule("django/db/models/query.py", "a", "b", DJANGO) is None
    assert _rule("bin/test", "a", "b", SYMPY) == "test-command"
    assert _rule("sympy/testing/runtests.py", "a", "b", SYMPY) == "test-command"
    assert _rule("tox.ini", "[tox]\n", "[tox]\nx = 1\n", TOX) == "tox-config"
    assert _rule("setup.cfg", "", "[testenv]\ncommands = true\n", TOX) == "tox-config"
    assert _rule("pyproject.toml", "", "[tool.tox]\nx = 1\n", TOX) == "tox-config"
    assert _rule("setup.cfg", "", "[testenv]\ncommands = true\n", PYTEST) is None


def test_test_content_is_the_prediction_s_where_the_benchmark_says_so() -> None:
    swt = paths.policy_for("pytest -rA", "o/r", test_content=True)
    assert _rule("tests/conftest.py", None, "import pytest\n", swt) is None
    # the runner's own configuration stays refused whoever writes the tests
    assert _rule("pytest.ini", None, "[pytest]\n", swt) == "pytest-config"
    assert _rule("sitecustomize.py", None, "", swt) == "startup"


def test_links_are_refused_whatever_their_name() -> None:
    assert _rule("pycalc/numbers.py", "a", None, mode="120000") == "link"
    assert _rule("vendor/lib", None, None, mode="160000") == "link"


def _git(tree: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(tree), *args], check=True, capture_output=True)


def test_changed_files_include_what_gitignore_hides(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    (tree / "pycalc").mkdir(parents=True)
    (tree / "pycalc" / "numbers.py").write_text("x = 1\n")
    (tree / ".gitignore").write_text("__pycache__/\n*.pth\n")
    _git(tree, "init", "-q")
    _git(tree, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "x", "--allow-empty")
    _git(tree, "add", "-A")
    _git(tree, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "base")
    base = subprocess.run(
        ["git", "-C", str(tree), "rev-parse", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.strip()
    (tree / "pycalc" / "numbers.py").write_text("x = 2\n")
    (tree / "pycalc" / "__pycache__").mkdir()
    (tree / "pycalc" / "__pycache__" / "numbers.cpython-39.pyc").write_bytes(b"\x00\x01")
    (tree / "evil.pth").write_text("import os\n")
    (tree / "conftest.py").write_text("")
    changes = {c.path: c for c in evaluation.changed_files(tree, base)}
    assert set(changes) == {
        "pycalc/numbers.py",
        "pycalc/__pycache__/numbers.cpython-39.pyc",
        "evil.pth",
        "conftest.py",
    }
    assert (changes["pycalc/numbers.py"].old, changes["pycalc/numbers.py"].new) == ("x = 1\n", "x = 2\n")
    assert changes["conftest.py"].old is None
    refused = paths.refusals(changes.values(), PYTEST)
    assert sorted(r.rule for r in refused) == ["compiled", "conftest", "startup"]


# --------------------------------------------------------------------------- the guard, for real

TESTS = """\
import pytest
from calc import double
from helpers import assert_equal


def test_double():
    assert double(2) == 4


def test_fixed():
    assert_equal(double(-1), -2)


@pytest.mark.parametrize("value", ["a b", 3])
def test_spaced(value):
    assert value
"""
#: A test helper of the tree (``tests/helpers.py``: test side), as ``sympy/testing/pytest.py``.
HELPERS = "def assert_equal(left, right):\n    assert left == right, (left, right)\n"
HONEST = "def double(x):\n    return 2 * x\n"
BROKEN = "def double(x):\n    return 2 * x if x > 0 else 0\n"
F2P = "tests/test_calc.py::test_fixed"
TESTS_OF_RUN = [
    "tests/test_calc.py::test_double",
    F2P,
    "tests/test_calc.py::test_spaced[a",  # the log parser cuts a node id at its first blank
    "tests/test_calc.py::test_spaced[3]",
]

ATTACKS: dict[str, str] = {
    # the issue's third example: find pytest's PluginManager through gc, register a report hook
    "gc-hook": """
import gc
import pytest
from _pytest.config import PytestPluginManager

class _Pass:
    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item, call):
        outcome = yield
        outcome.get_result().outcome = "passed"

for _pm in [o for o in gc.get_objects() if isinstance(o, PytestPluginManager)]:
    _pm.register(_Pass())
""",
    # monkeypatching the runner's internals from the code under test
    "monkeypatch": """
import _pytest.reports
_orig = _pytest.reports.TestReport.from_item_and_call.__func__

def _from_item_and_call(cls, item, call):
    report = _orig(cls, item, call)
    report.outcome = "passed"
    report.longrepr = None
    return report

_pytest.reports.TestReport.from_item_and_call = classmethod(_from_item_and_call)
""",
    # printing the lines the log parser reads, after pytest's own summary
    "forged-log": """
import atexit
atexit.register(print, "PASSED tests/test_calc.py::test_fixed")
""",
    # a failing test turned into an expected failure, which SWE-bench counts as a success
    "xfail": """
def double(x):
    if x < 0:
        import pytest
        pytest.xfail("negative")
    return 2 * x
""",
    # a test helper rebound by product code at import, as `sympy/core/__init__.py` could do with
    # `sympy.testing.pytest.raises` (the helper's file is base's: the harness restores it)
    "helper-rebound": """
import helpers
helpers.assert_equal = lambda *args, **kwargs: None
""",
    # the test function swapped for one that passes
    "swapped-test": """
import sys

class _Finder:
    def find_spec(self, name, path=None, target=None):
        return None

def _swap():
    module = sys.modules.get("test_calc") or sys.modules.get("tests.test_calc")
    if module is not None:
        module.test_fixed.__code__ = (lambda: None).__code__

import _pytest.python
_orig = _pytest.python.Function.runtest

def runtest(self):
    _swap()
    return _orig(self)
""",
}


def _successes(log: str) -> dict[str, str]:
    """What SWE-bench's pytest log parser would read: ``STATUS nodeid`` lines."""
    found: dict[str, str] = {}
    for line in evidence.strip_records(log).splitlines():
        words = line.split()
        if len(words) >= 2 and words[0] in ("PASSED", "FAILED", "XFAIL", "ERROR", "SKIPPED"):
            found[words[1]] = words[0]
    return {name: status for name, status in found.items() if name in TESTS_OF_RUN}


@pytest.fixture(scope="module")
def baseline(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The honest run's record (the gold run of the instance)."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        folder = tmp_path_factory.mktemp("honest")
        monkeypatch.chdir(folder)
        pytester = _TinyPytester(folder)
        log = _run_subprocess(pytester, HONEST, "n0")
    found = evidence.records(log, "n0")
    successes = _successes(log)
    assert successes == dict.fromkeys(TESTS_OF_RUN, "PASSED")
    assert evidence.unconfirmed(found[0], successes) == {}
    made = evidence.baseline_of(found, successes)
    assert made is not None
    return made


class _TinyPytester:
    """Just the folder a module-scoped baseline runs in (pytester is function-scoped)."""

    def __init__(self, path: Path) -> None:
        self.path = path


def _run_subprocess(
    folder: _TinyPytester, calc: str, nonce: str, *, options: tuple[str, ...] = (), repo: str = "o/r"
) -> str:
    """A pytest session on ``folder`` with the guard loaded first, in a clean environment (``src/``
    of the tree first on the path: where a copy of pytest is the code under test)."""
    (folder.path / "calc.py").write_text(calc)
    (folder.path / "tests").mkdir(exist_ok=True)
    (folder.path / "tests" / "test_calc.py").write_text(TESTS)
    (folder.path / "tests" / "helpers.py").write_text(HELPERS)
    plugins = ("-p", evidence.PLUGIN, "-p", "no:cacheprovider", "-p", "no:tebench")
    result = subprocess.run(
        [sys.executable, "-m", "pytest", *plugins, "-rA", *options, "tests/test_calc.py"],
        cwd=folder.path,
        capture_output=True,
        text=True,
        env={
            "PATH": os.environ.get("PATH", ""),
            "PYTHONPATH": f"{evidence.PLUGIN_DIR}:{folder.path / 'src'}:{folder.path}",
            "PYTHONNOUSERSITE": "1",
            "TEBENCH_GUARD_NONCE": nonce,
            "TEBENCH_GUARD_TREE": str(folder.path),
            "TEBENCH_GUARD_REPO": repo,
        },
        check=False,
    )
    return result.stdout + result.stderr


def _judge(
    tmp_path: Path, calc: str, baseline: dict[str, Any]
) -> tuple[list[evidence.Finding], dict[str, str]]:
    """The findings on a run of ``calc`` and what its log says of each test."""
    log = _run_subprocess(_TinyPytester(tmp_path), calc, "n1")
    successes = _successes(log)
    resolved = all(successes.get(name) in ("PASSED", "XFAIL") for name in TESTS_OF_RUN)
    found = evidence.records(log, "n1")
    return evidence.findings(
        found, successes=successes, resolved_by_log=resolved, baseline=baseline
    ), successes


def test_an_honest_run_has_no_findings_and_a_wrong_fix_is_just_unresolved(
    tmp_path: Path, baseline: dict[str, Any]
) -> None:
    assert _judge(tmp_path, HONEST, baseline) == ([], dict.fromkeys(TESTS_OF_RUN, "PASSED"))
    wrong = tmp_path / "wrong"
    wrong.mkdir()
    findings, log = _judge(wrong, BROKEN, baseline)
    assert (findings, log[F2P]) == ([], "FAILED")


@pytest.mark.parametrize(
    ("attack", "rule", "detail"),
    [
        ("gc-hook", "hook", "pytest_runtest_makereport implemented by calc._Pass.pytest_runtest_makereport"),
        ("monkeypatch", "changed", "_pytest.reports:TestReport.from_item_and_call rebound"),
        ("forged-log", "unconfirmed", f"{F2P}: the log says PASSED, the runner saw failed"),
        ("xfail", "anomaly", f"xfail-raised-by {F2P} calc.py"),
        ("swapped-test", "changed", "_pytest.python:Function.runtest rebound"),
        ("helper-rebound", "test-side", "helpers:assert_equal rebound (collection): calc (/"),
    ],
)
def test_each_in_process_route_is_caught_against_the_gold_run(
    tmp_path: Path,
    baseline: dict[str, Any],
    attack: str,
    rule: str,
    detail: str,
) -> None:
    calc = BROKEN + ATTACKS[attack] if attack != "xfail" else ATTACKS[attack]
    if attack == "swapped-test":
        calc += "\n_pytest.python.Function.runtest = runtest\n"
    found, log = _judge(tmp_path, calc, baseline)
    # the attack works on the log (SWE-bench alone would grade the fix resolved) and is caught
    assert log[F2P] in ("PASSED", "XFAIL")
    assert any(f.rule == rule and f.detail.startswith(detail) for f in found), found


def test_the_record_is_read_only_with_this_run_s_nonce() -> None:
    record = {"outcomes": {F2P: "passed"}, "static": {}}
    line = f"{evidence.MARK} abc {json.dumps(record)}"
    assert evidence.records(f"x\n{line}\ny", "abc") == [record]
    assert evidence.records(f"x\n{line}\ny", "other") == []
    forged = f"{line}\n{evidence.MARK} abc {{not json"
    assert evidence.records(forged, "abc")[1] == {"malformed": True}
    several = evidence.findings(
        evidence.records(forged, "abc"), successes={}, resolved_by_log=True, baseline=None
    )
    assert [f.rule for f in several] == ["several-records"]
    assert evidence.strip_records(f"a\n{line}\nb") == "a\nb"


def test_no_record_counts_only_when_the_log_claims_the_resolution() -> None:
    assert [f.rule for f in evidence.findings([], successes={}, resolved_by_log=True, baseline=None)] == [
        "no-record"
    ]
    # a crash of an honest wrong fix stays unresolved, not tampered
    assert evidence.findings([], successes={}, resolved_by_log=False, baseline=None) == []


def test_unconfirmed_tests_match_node_ids_cut_at_a_blank() -> None:
    record = {
        "outcomes": {"t.py::test_a[x y]": "passed", "t.py::test_b": "failed", "t.py::test_c": "xfailed"}
    }
    found = evidence.unconfirmed(
        record,
        {
            "t.py::test_a[x": "PASSED",
            "t.py::test_b": "PASSED",
            "t.py::test_c": "XFAIL",
            "t.py::test_d": "PASSED",
        },
    )
    assert sorted(found) == ["t.py::test_b", "t.py::test_d"]
    assert found["t.py::test_d"].endswith("the runner saw no such test")


def test_refused_and_tampered_are_a_model_s_unresolved_results() -> None:
    records: list[dict[str, Any]] = [
        {
            "instance_id": "a",
            "model_name_or_path": "m",
            "project": "o/r",
            "status": "evaluated",
            "swebench": {"resolved": True},
        },
        {
            "instance_id": "b",
            "model_name_or_path": "m",
            "project": "o/r",
            "status": "refused",
            "swebench": {"resolved": False},
        },
        {
            "instance_id": "c",
            "model_name_or_path": "m",
            "project": "o/r",
            "status": "tampered",
            "swebench": {"resolved": False},
        },
        {"instance_id": "d", "model_name_or_path": "m", "project": "o/r", "status": "error"},
    ]
    counts = status_counts(records)
    assert (counts["scored"], counts["refused"], counts["tampered"], counts["errors"]) == (3, 1, 1, 1)
    block = summary.summarise(records)["m"]
    # 1 resolved of 3 judged (a, b, c); the harness error d is left out
    assert (block["judged"], block["resolved"], round(block["resolved_rate_judged"], 4)) == (3, 1, 0.3333)
    assert (block["refused_ids"], block["tampered_ids"]) == (["b"], ["c"])
    run = summary.run_report(records, "m")
    assert run["unresolved_ids"] == ["b", "c"] and run["error_ids"] == ["d"]
    assert (run["refused_ids"], run["tampered_ids"], run["completed_ids"]) == (["b"], ["c"], ["a", "c"])
    text = "\n".join(summary.summary_lines(summary.summarise(records)))
    assert "refused 1, tampered 1" in text and "tampered (the prediction tried to grade itself): c" in text


def test_the_guard_loads_on_the_oldest_python_the_environments_have() -> None:
    # the plugin runs in the environment's interpreter (Debian bullseye: 3.9): no newer syntax
    source = (evidence.PLUGIN_DIR / f"{evidence.PLUGIN}.py").read_text()
    ast.parse(source, feature_version=(3, 9))
    assert "import pytest_tebench" not in source and "from pytest_tebench" not in source


def test_the_record_is_compared_with_the_gold_run_rule_by_rule() -> None:
    hook = {
        "hook": "pytest_runtest_makereport",
        "module": "_pytest.skipping",
        "function": "f",
        "in_tree": False,
    }
    gold: dict[str, Any] = {
        "static": {"_pytest.runner": "aa", "pluggy": "bb"},
        "changes": {
            "_pytest.config:Config.__dict__": {"by": "class attributes added or removed", "when": "configure"}
        },
        "hooks": [dict(hook, digest="d1", wrapper=True)],
        "items": {"t.py::test_a": "c1"},
        "item_classes": ["_pytest.python.Function"],
        "anomalies": [],
        "trace": ["", ""],
        "unconfirmed": [],
    }
    same = {**gold, "outcomes": {"t.py::test_a": "passed"}}
    passed = {"t.py::test_a": "PASSED"}
    assert evidence.findings([same], successes=passed, resolved_by_log=True, baseline=gold) == []
    changed = {
        **same,
        "static": {"_pytest.runner": "zz", "pluggy": "bb", "_pytest.extra": "cc"},
        "hooks": [dict(hook, digest="d2", wrapper=True)],
        "items": {"t.py::test_a": "c2"},
        "item_classes": ["_pytest.python.Function", "pkg.Passing"],
        "trace": ["pkg (/workspace/pkg/x.py:1)", ""],
        "changes": {
            **gold["changes"],
            "builtins:isinstance": {"by": "pkg (/workspace/pkg/x.py:3)", "when": "t.py::test_a"},
        },
    }
    rules = [
        f.rule for f in evidence.findings([changed], successes=passed, resolved_by_log=True, baseline=gold)
    ]
    assert rules == ["runner-code", "runner-code", "changed", "hook", "test-code", "item-class", "tracer"]
    # a benchmark whose prediction is a test patch does not judge test code against gold's
    kept = evidence.findings(
        [changed], successes=passed, resolved_by_log=True, baseline=gold, ignore={"test-code"}
    )
    assert "test-code" not in [f.rule for f in kept] and len(kept) == len(rules) - 1
    # without a baseline (gold left no record) only the absolute rules judge
    assert evidence.findings([changed], successes=passed, resolved_by_log=True, baseline=None) == []
    # a log name the gold run could not confirm either (a parser's naming quirk) is no finding
    quirk = {**same, "outcomes": {}}
    assert (
        evidence.findings(
            [quirk],
            successes=passed,
            resolved_by_log=True,
            baseline={**gold, "unconfirmed": ["t.py::test_a"]},
        )
        == []
    )
    assert [
        f.rule for f in evidence.findings([quirk], successes=passed, resolved_by_log=True, baseline=gold)
    ] == ["unconfirmed"]


@pytest.mark.parametrize(
    ("command", "guarded"),
    [
        ("pytest -rA", "pytest -p tebench_guard -rA"),
        ("pytest --no-header -rA", "pytest -p tebench_guard --no-header -rA"),
        ("A=1 B='x' pytest -rA", "A=1 B='x' pytest -p tebench_guard -rA"),
        ("A=1 pytest -rA", "A=1 pytest -p tebench_guard -rA"),
        (
            "./tests/runtests.py --verbosity 2",
            "PYTHONHASHSEED=$((RANDOM * 32768 + RANDOM + 1)) python -m tebench_run ./tests/runtests.py --verbosity 2",
        ),
        # sphinx: the plugin as the first of pytest's {posargs}, before the test files
        ("tox --current-env -epy39 -v --", "tox --current-env -epy39 -v -- -p tebench_guard"),
        (
            "A=1 tox --current-env -e py39 -- -x -- y",
            "A=1 tox --current-env -e py39 -- -p tebench_guard -x -- y",
        ),
        # without tox-current-env, tox passes on only its pass_env (no PYTHONPATH, no nonce);
        # without `--`, what follows is tox's
        ("tox -epy39 -v --", None),
        ("tox --current-env -epy39 -v", None),
        ("tox --current-env --x", None),
        ("pytest-benchmark run", None),
    ],
)
def test_the_guard_goes_right_after_pytest(command: str, guarded: str | None) -> None:
    assert evaluation.guarded_command(command) == (guarded or command, guarded is not None)


def test_processes_the_tests_start_do_not_inherit_the_guards_folder(tmp_path: Path) -> None:
    """pylint's tests run pylint in subprocesses and check what PYTHONPATH puts on their path:
    the guard takes its folder out of the variable (its own process keeps it on sys.path)."""
    seen = tmp_path / "seen.txt"
    calc = HONEST + f"\nimport os\nopen({str(seen)!r}, 'w').write(os.environ.get('PYTHONPATH', '<unset>'))\n"
    log = _run_subprocess(_TinyPytester(tmp_path), calc, "n2")
    assert evidence.records(log, "n2"), log
    assert seen.read_text() == f"{tmp_path / 'src'}:{tmp_path}"


# ------------------------------------------------- a runner that is the code under test (canaries)

#: What a prediction for ``pytest-dev/pytest`` can legitimately change is the runner itself: this
#: one makes ``CallInfo.from_call`` forget every exception of a test's call.
SWALLOWING = (
    "            result = None\n",
    "            result = None\n            if when == 'call':\n                excinfo = None\n",
)


#: An honest fix of pytest's own code that is not gold's: a new class and a new method of a class.
OTHER_FIX = (
    "\n\nclass _Extra:\n    pass\n\n\ndef _extra(self):\n    return None\n\n\nCallInfo.extra = _extra\n"
)


def _pytest_in_tree(tree: Path, lying: bool, other_fix: bool = False) -> None:
    """A copy of the installed pytest at ``tree/src`` (its layout in pytest's own repository)."""
    import _pytest

    source = Path(_pytest.__file__).parent
    shutil.copytree(source, tree / "src" / "_pytest", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(
        source.parent / "pytest", tree / "src" / "pytest", ignore=shutil.ignore_patterns("__pycache__")
    )
    runner = tree / "src" / "_pytest" / "runner.py"
    if lying:
        text = runner.read_text()
        assert text.count(SWALLOWING[0]) == 1
        runner.write_text(text.replace(*SWALLOWING))
    if other_fix:
        runner.write_text(runner.read_text() + OTHER_FIX)


def test_a_runner_that_lies_about_every_test_is_caught_by_its_canaries(tmp_path: Path) -> None:
    """The runner in the tree (pytest's ``src/_pytest``, not compared with gold) swallows failures:
    every test passes, the guard's own expected failures too; `-x` keeps them (they run last)."""
    runs: dict[str, tuple[str, str]] = {}
    tree = tmp_path / "workspace"  # one path, as in the container
    for name, lying in (("gold", False), ("honest", False), ("lying", True)):
        shutil.rmtree(tree, ignore_errors=True)
        tree.mkdir()
        # the honest run fixes pytest otherwise than gold: its classes are the tree's, not compared
        _pytest_in_tree(tree, lying, other_fix=name == "honest")
        nonce = f"n-{name}"
        log = _run_subprocess(
            _TinyPytester(tree), BROKEN if lying else HONEST, nonce, options=("-x",), repo="pytest-dev/pytest"
        )
        runs[name] = (log, nonce)
    gold_log, gold_nonce = runs["gold"]
    gold_record = evidence.records(gold_log, gold_nonce)
    # the runner the session ran is the tree's copy
    assert {h["in_tree"] for h in gold_record[0]["hooks"] if h["module"] == "_pytest.runner"} == {True}
    assert gold_record[0]["canaries"] == {
        "assert": {"expected": "xfailed", "reported": "xfailed", "seen": "xfailed"},
        "exception": {"expected": "xfailed", "reported": "xfailed", "seen": "xfailed"},
        "pass": {"expected": "passed", "reported": "passed", "seen": "passed"},
        "raises": {"expected": "xfailed", "reported": "xfailed", "seen": "xfailed"},
    }
    # the canaries do not change grading: the log's own tests only, all passed, exit status 0
    assert _successes(gold_log) == dict.fromkeys(TESTS_OF_RUN, "PASSED")
    baseline = evidence.baseline_of(gold_record, _successes(gold_log))
    honest_log, honest_nonce = runs["honest"]
    honest = evidence.findings(
        evidence.records(honest_log, honest_nonce),
        successes=_successes(honest_log),
        resolved_by_log=True,
        baseline=baseline,
    )
    assert honest == []
    lying_log, lying_nonce = runs["lying"]
    # the wrong fix resolves by the log, and no other rule sees the runner's own code lie
    assert _successes(lying_log) == dict.fromkeys(TESTS_OF_RUN, "PASSED")
    found = evidence.findings(
        evidence.records(lying_log, lying_nonce),
        successes=_successes(lying_log),
        resolved_by_log=True,
        baseline=baseline,
    )
    assert {f.rule for f in found} == {"canary"}, found
    # strict, a canary's pass is a failure; they run after the session's loop, so `-x` cuts none
    assert sorted(f.detail for f in found) == [
        "the guard's assert canary should be xfailed: reported failed, seen passed",
        "the guard's exception canary should be xfailed: reported failed, seen passed",
        "the guard's raises canary should be xfailed: reported failed, seen passed",
    ]


def test_canaries_are_judged_on_what_they_should_be_and_what_gold_shows() -> None:
    def record(**canaries: tuple[str, str]) -> dict[str, Any]:
        expected = {"assert": "xfailed", "pass": "passed"}
        made = {k: {"expected": expected[k], "reported": r, "seen": s} for k, (r, s) in canaries.items()}
        return {"outcomes": {}, "canaries": made}

    truthful = record(**{"assert": ("xfailed", "xfailed"), "pass": ("passed", "passed")})
    assert evidence.canary_findings(truthful, None, resolved_by_log=True) == []
    # a runner that makes everything an expected failure (XFAIL counts as a success)
    all_xfail = record(**{"assert": ("xfailed", "xfailed"), "pass": ("xfailed", "passed")})
    assert evidence.canary_findings(all_xfail, truthful, resolved_by_log=False) == [
        evidence.Finding("canary", "the guard's pass canary should be passed: reported xfailed")
    ]
    # canaries that did not run (`-x` stopped the session first) count only when the log resolves
    stopped = record(**{"assert": ("not run", "not run"), "pass": ("not run", "not run")})
    assert evidence.canary_findings(stopped, truthful, resolved_by_log=False) == []
    assert [f.detail for f in evidence.canary_findings(stopped, truthful, resolved_by_log=True)] == [
        "the guard's assert canary should be xfailed: reported not run, seen not run",
        "the guard's pass canary should be passed: reported not run, seen not run",
    ]
    # what gold's run shows too is the environment's (accepted), anything else is not
    assert evidence.canary_findings(stopped, stopped, resolved_by_log=True) == []
    assert len(evidence.canary_findings(all_xfail, stopped, resolved_by_log=True)) == 1
    # the rule is part of the judgement, with or without a baseline
    rules = evidence.findings([all_xfail], successes={}, resolved_by_log=False, baseline=None)
    assert [f.rule for f in rules] == ["canary"]


def test_test_side_changes_are_judged_against_gold_s_and_swt_bench_leaves_them() -> None:
    from pytest_tebench.benchmarks.swtbench import integrity as swt_integrity

    noted = {"t:Tests.__dict__": {"by": "class attributes changed: x added: builtins (list)", "when": "t"}}
    gold: dict[str, Any] = {"static": {}, "changes": {}, "test_side": noted, "unconfirmed": []}
    rebound = {
        "pkg.testing:raises": {"by": "pkg.core (/workspace/pkg/core/__init__.py:9)", "when": "collection"}
    }
    run = {**gold, "outcomes": {}, "test_side": {**noted, **rebound}}
    found = evidence.findings([run], successes={}, resolved_by_log=True, baseline=gold)
    assert found == [
        evidence.Finding(
            "test-side",
            "pkg.testing:raises rebound (collection): pkg.core (/workspace/pkg/core/__init__.py:9)",
        )
    ]
    # SWT-bench's prediction is test code: what it does to test-side modules is not gold's
    assert (
        evidence.findings(
            [run], successes={}, resolved_by_log=True, baseline=gold, ignore=swt_integrity.NOT_APPLIED_RULES
        )
        == []
    )
