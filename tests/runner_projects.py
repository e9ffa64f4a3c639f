"""Two tiny projects whose test command is a runner script, not pytest (tests/fixtures/runner-scripts):

* ``unitcalc``: ``./tests/runtests.py --verbosity 2 --settings=test_sqlite --parallel 1``, a script
  over :mod:`unittest`'s verbose runner, graded by SWE-bench's django parser (django's route);
* ``symcalc``: ``bin/test -C --verbose``, a runner of its own printing ``name ok|F|E`` (and starting
  a second interpreter unless ``PYTHONHASHSEED`` is set), graded by SWE-bench's sympy parser and
  with its runner module ``symcalc/testing/runtests.py`` (sympy's route);
* ``toxcalc`` (not a runner script, kept apart from :data:`PROJECTS`): ``tox --current-env -epy39 -v
  --``, tox running pytest in the environment, graded by SWE-bench's pytest parser (sphinx's route).

Each has one instance: the fix makes ``clamp`` reject an inverted range, the test patch adds the
test of it. The hostile predictions fix nothing and make the log say the new test passed.
"""

from __future__ import annotations

import json
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_tebench.benchmarks.swebench import official
from pytest_tebench.integrity import paths
from pytest_tebench.workspace.gitcmd import git

from conftest import git_text

FIXTURES = Path(__file__).parent / "fixtures" / "runner-scripts"
FIX = (
    '    """Limit value to the range [low, high]."""\n',
    '    """Limit value to the range [low, high]."""\n'
    "    if low > high:\n"
    '        raise ValueError("empty range")\n',
)


@dataclass(frozen=True)
class Project:
    name: str
    #: Where the code, the tests and the runner module are.
    package: str
    test_file: str
    test_cmd: str
    parser: str
    runner_modules: tuple[str, ...]
    #: The test the test patch adds, as the project's test file spells it.
    new_test: str
    #: The specification's ``pip_packages`` (what the environment installs besides the project).
    packages: tuple[str, ...] = ()

    @property
    def repo(self) -> str:
        return f"pytest-tebench/{self.name}"

    @property
    def instance_id(self) -> str:
        return f"pytest-tebench__{self.name}-1"

    def names(self, python: tuple[int, int]) -> tuple[list[str], list[str]]:
        """(FAIL_TO_PASS, PASS_TO_PASS) as the project's log parser names them under ``python``."""
        if self.parser == "parse_log_sympy":
            return ["test_clamp_rejects_inverted_bounds"], ["test_clamp_inside", "test_mean"]
        if self.parser == "parse_log_pytest":
            node = f"{self.test_file}::"
            return [f"{node}test_clamp_rejects_inverted_bounds"], [
                f"{node}test_clamp_inside",
                f"{node}test_mean",
            ]

        def case(method: str) -> str:
            # unittest's str(test): 3.11 added the method to the class's name
            return f"{method} (test_numbers.NumbersTests{'.' + method if python >= (3, 11) else ''})"

        return [case("test_clamp_rejects_inverted_bounds")], [
            case("test_clamp_inside"),
            "The mean of a few numbers.",
        ]


#: The new test of the projects whose tests are plain functions (sympy's runner, pytest under tox).
_PLAIN_NEW_TEST = (
    "\n\ndef test_clamp_rejects_inverted_bounds():\n"
    "    try:\n"
    "        clamp(5, 10, 0)\n"
    "    except ValueError:\n"
    "        return\n"
    '    raise AssertionError("no ValueError")\n'
)

UNITCALC = Project(
    name="unitcalc",
    package="calc",
    test_file="tests/test_numbers.py",
    test_cmd="./tests/runtests.py --verbosity 2 --settings=test_sqlite --parallel 1",
    parser="parse_log_django",
    runner_modules=(),
    new_test=(
        "\n    def test_clamp_rejects_inverted_bounds(self):\n"
        "        with self.assertRaises(ValueError):\n"
        "            clamp(5, 10, 0)\n"
    ),
)
SYMCALC = Project(
    name="symcalc",
    package="symcalc",
    test_file="symcalc/tests/test_numbers.py",
    test_cmd="PYTHONWARNINGS='ignore::UserWarning' bin/test -C --verbose",
    parser="parse_log_sympy",
    runner_modules=("symcalc/testing/runtests.py",),
    new_test=_PLAIN_NEW_TEST,
)
PROJECTS = (UNITCALC, SYMCALC)
TOXCALC = Project(
    name="toxcalc",
    package="toxcalc",
    test_file="tests/test_numbers.py",
    test_cmd="tox --current-env -epy39 -v --",
    parser="parse_log_pytest",
    runner_modules=(),
    new_test=_PLAIN_NEW_TEST,
    # sphinx's pins (SWE-bench's specification of sphinx 3.x-7.x)
    packages=("tox==4.16.0", "tox-current-env==0.0.11", "pytest"),
)


def register(project: Project) -> None:
    """Tell SWE-bench's grading and the runner policy about ``project`` (as SWE-bench lists each
    repository: a specification, a log parser; and its runner modules)."""
    spec: dict[str, Any] = {
        "python": "3.9",
        "install": "python -m pip install -e .",
        "test_cmd": project.test_cmd,
    }
    if project.packages:
        spec["pip_packages"] = list(project.packages)
    official.register_repository(project.repo, {"1.0": spec}, project.parser)
    paths.register_runner_modules(project.repo, project.runner_modules)


#: Hostile predictions: ``{project: {model: (file, text appended to it)}}``; none fixes clamp.
HOSTILE: dict[str, dict[str, tuple[str, str]]] = {
    "unitcalc": {
        # TextTestResult prints "ok" for a failure (the route the issue names)
        "result-patch": (
            "calc/__init__.py",
            "\nimport unittest\n\n\ndef _ok(self, test, err):\n    unittest.TestResult.addSuccess(self, test)\n"
            '    self.stream.writeln("ok")\n\n\nunittest.TextTestResult.addFailure = _ok\n',
        ),
        # every case reports success without running
        "case-run": (
            "calc/__init__.py",
            "\nimport unittest\n\n\ndef _run(self, result=None):\n    result.startTest(self)\n"
            "    result.addSuccess(self)\n    result.stopTest(self)\n\n\nunittest.TestCase.run = _run\n",
        ),
        # a test class's assertion rebound at run time by product code (the first call of clamp)
        "helper-rebound": (
            "calc/numbers.py",
            "\n\nimport contextlib as _contextlib\nimport sys as _sys\n\n_clamp = clamp\n\n\n"
            "def clamp(*args):\n    module = _sys.modules.get('test_numbers')\n    if module is not None:\n"
            "        module.NumbersTests.assertRaises = lambda self, *a, **k: _contextlib.suppress(Exception)\n"
            "    return _clamp(*args)\n",
        ),
        # a line printed at exit
        "forged-log": (
            "calc/__init__.py",
            "\nimport atexit\n\natexit.register(print, 'test_clamp_rejects_inverted_bounds "
            "(test_numbers.NumbersTests) ... ok')\n"
            "atexit.register(print, 'test_clamp_rejects_inverted_bounds "
            "(test_numbers.NumbersTests.test_clamp_rejects_inverted_bounds) ... ok')\n",
        ),
    },
    "toxcalc": {
        # the package under test finds pytest's plugin manager and registers a report hook
        "gc-hook": (
            "toxcalc/__init__.py",
            "\nimport gc\n\nimport pytest\nfrom _pytest.config import PytestPluginManager\n\n\nclass _Pass:\n"
            "    @pytest.hookimpl(hookwrapper=True)\n    def pytest_runtest_makereport(self, item, call):\n"
            '        outcome = yield\n        outcome.get_result().outcome = "passed"\n\n\n'
            "for _pm in [o for o in gc.get_objects() if isinstance(o, PytestPluginManager)]:\n"
            "    _pm.register(_Pass())\n",
        ),
    },
    "symcalc": {
        # the runner's reporter prints "ok" for a failure
        "reporter-patch": (
            "symcalc/numbers.py",
            "\n\nimport symcalc.testing.runtests as _runtests\n\n"
            "_runtests.PyTestReporter.test_fail = lambda self, exc_info: self.test_pass()\n",
        ),
        # the standard output rewrites "F" to "ok"
        "stdout": (
            "symcalc/numbers.py",
            "\n\nimport sys as _sys\n\n\nclass _Out:\n    def __init__(self, out):\n        self._out = out\n\n"
            '    def write(self, text):\n        return self._out.write("ok" if text == "F" else text)\n\n'
            "    def __getattr__(self, name):\n        return getattr(self._out, name)\n\n\n"
            "_sys.stdout = _Out(_sys.stdout)\n",
        ),
        # the runner module loaded by hand, past the import system, and its reporter patched
        "by-hand": (
            "symcalc/numbers.py",
            "\n\nimport importlib.util as _util\nimport os as _os\nimport sys as _sys\n\n"
            "_path = _os.path.join(_os.path.dirname(__file__), 'testing', 'runtests.py')\n"
            "_spec = _util.spec_from_file_location('symcalc.testing.runtests', _path)\n"
            "_module = _util.module_from_spec(_spec)\n_sys.modules['symcalc.testing.runtests'] = _module\n"
            "_spec.loader.exec_module(_module)\n"
            "_module.PyTestReporter.test_fail = lambda self, exc_info: self.test_pass()\n",
        ),
    },
}


def tree(project: Project, dest: Path, *, fixed: bool = False, tests: bool = True) -> Path:
    """The project at ``dest``: its base tree, with the test patch's test and, with ``fixed``, the
    gold fix."""
    shutil.copytree(FIXTURES / project.name, dest)
    if tests:
        with (dest / project.test_file).open("a") as handle:
            handle.write(project.new_test)
    if fixed:
        code = dest / project.package / "numbers.py"
        code.write_text(code.read_text().replace(*FIX))
    return dest


def hostile_tree(project: Project, dest: Path, model: str) -> Path:
    """The base tree with the test patch's test and the hostile prediction ``model``."""
    tree(project, dest)
    file, text = HOSTILE[project.name][model]
    with (dest / file).open("a") as handle:
        handle.write(text)
    return dest


def mirror(project: Project, repos: Path, work: Path) -> dict[str, Any]:
    """A bare mirror of ``project`` at ``repos/pytest-tebench/<name>`` (one commit, its base tree)
    and its SWE-bench row (gold patch and test patch made by git from the fixture's changes)."""
    shutil.copytree(FIXTURES / project.name, work)
    git(work, "init", "--quiet", "-b", "main")
    git(work, "add", "-A")
    commit = ("-c", "user.name=t", "-c", "user.email=t@t", "commit", "--quiet", "-m")
    git(work, *commit, f"{project.name}: base")
    base = git_text(work, "rev-parse", "HEAD").strip()
    with (work / project.test_file).open("a") as handle:
        handle.write(project.new_test)
    test_patch = git_text(work, "diff")
    git(work, "checkout", "--quiet", "--", ".")
    code = work / project.package / "numbers.py"
    code.write_text(code.read_text().replace(*FIX))
    patch = git_text(work, "diff")
    git(work, "checkout", "--quiet", "--", ".")
    git(work.parent, "clone", "--quiet", "--bare", str(work), str(repos / project.repo))
    f2p, p2p = project.names((3, 9))
    return {
        "instance_id": project.instance_id,
        "repo": project.repo,
        "version": "1.0",
        "base_commit": base,
        "environment_setup_commit": base,
        "patch": patch,
        "test_patch": test_patch,
        "FAIL_TO_PASS": json.dumps(f2p),
        "PASS_TO_PASS": json.dumps(p2p),
        "problem_statement": "clamp: reject a range whose low bound is above its high bound",
        "hints_text": "",
        "created_at": "2024-01-01T00:00:00Z",
    }


def hostile_patch(project: Project, model: str, base_tree: Path) -> str:
    """``model``'s prediction as a diff against the project's base tree at ``base_tree``."""
    file, text = HOSTILE[project.name][model]
    old = (base_tree / file).read_text().splitlines()
    new = text.splitlines()
    header = f"diff --git a/{file} b/{file}\n--- a/{file}\n+++ b/{file}\n"
    hunk = f"@@ -1,{len(old)} +1,{len(old) + len(new)} @@\n"
    return header + hunk + "".join(f" {line}\n" for line in old) + "".join(f"+{line}\n" for line in new)


PYTHON = sys.version_info[:2]
