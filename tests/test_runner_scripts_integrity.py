"""The guard of runner scripts that are not pytest (``python -m tebench_run SCRIPT``), on the two
tiny projects of :mod:`runner_projects`: a django-like ``tests/runtests.py`` over unittest and a
sympy-like ``bin/test`` with a runner of its own. Each run is a real subprocess of this Python with
the guard's launcher, in a clean environment, graded by SWE-bench's own log parser of the route
(django's, sympy's); the Docker run of the same projects is in test_runner_scripts_docker.py."""

from __future__ import annotations

import ast
import io
import os
import shlex
import subprocess
import sys
import tokenize
from pathlib import Path
from typing import Any

import pytest

from pytest_tebench.benchmarks.swebench import evaluation
from pytest_tebench.benchmarks.swebench import official
from pytest_tebench.integrity import evidence
from pytest_tebench.integrity import paths

import runner_projects as rp

pytest.importorskip("swebench")


def _command(project: rp.Project) -> list[str]:
    """The project's guarded test command, as the harness writes it, on its test file."""
    command, guarded = evaluation.guarded_command(project.test_cmd, project.repo)
    assert guarded
    return ["bash", "-c", f"{command} {project.test_file}"]


def _run(project: rp.Project, tree: Path, nonce: str) -> str:
    rp.register(project)
    result = subprocess.run(
        _command(project),
        cwd=tree,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={
            "PATH": f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}",
            # the tree is installed in the environment (here: on the path)
            "PYTHONPATH": f"{evidence.PLUGIN_DIR}:{tree}",
            "PYTHONNOUSERSITE": "1",
            "TEBENCH_GUARD_NONCE": nonce,
            "TEBENCH_GUARD_TREE": str(tree),
        },
        timeout=120,
        check=False,
    )
    return result.stdout


def _successes(project: rp.Project, log: str) -> dict[str, str]:
    """What SWE-bench's parser of the route says of the instance's tests."""
    parse = getattr(official.modules().python_parsers, project.parser)
    f2p, p2p = project.names(rp.PYTHON)
    found: dict[str, str] = parse(evidence.strip_records(log), None)
    return {name: status for name, status in found.items() if name in f2p + p2p}


@pytest.fixture(scope="module")
def baselines(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Per project, the baseline made of its gold run's record (made on first use)."""
    made: dict[str, Any] = {}

    def baseline(project: rp.Project) -> Any:
        if project.name not in made:
            made[project.name] = _gold(project, tmp_path_factory.mktemp(project.name) / "gold")
        return made[project.name]

    return {project.name: (lambda p=project: baseline(p)) for project in rp.PROJECTS}


def _gold(project: rp.Project, where: Path) -> Any:
    """The gold run of the project's instance, checked, and the baseline made of its record."""
    tree = rp.tree(project, where, fixed=True)
    log = _run(project, tree, "n0")
    successes = _successes(project, log)
    f2p, p2p = project.names(rp.PYTHON)
    assert successes == dict.fromkeys(f2p + p2p, "PASSED"), log
    found = evidence.records(log, "n0")
    assert len(found) == 1 and evidence.unconfirmed(found[0], successes) == {}
    baseline = evidence.baseline_of(found, successes)
    assert baseline is not None and baseline["changes"] == {} and baseline["unconfirmed"] == []
    # a test class may gain attributes as the tests run (unittest notes teardown errors on it):
    # the same in every run, so gold's baseline accepts it
    assert all(key.startswith("test_numbers:") for key in baseline["test_side"]), baseline["test_side"]
    return baseline


def _judge(project: rp.Project, tree: Path, baseline: Any) -> tuple[list[evidence.Finding], dict[str, str]]:
    log = _run(project, tree, "n1")
    successes = _successes(project, log)
    f2p, p2p = project.names(rp.PYTHON)
    resolved = all(successes.get(name) == "PASSED" for name in f2p + p2p)
    findings = evidence.findings(
        evidence.records(log, "n1"), successes=successes, resolved_by_log=resolved, baseline=baseline
    )
    return findings, successes


@pytest.mark.parametrize("project", rp.PROJECTS, ids=lambda p: p.name)
def test_the_record_holds_each_test_s_own_outcome_as_the_runner_reported_it(
    baselines: dict[str, Any], tmp_path: Path, project: rp.Project
) -> None:
    baseline = baselines[project.name]()
    # gold again: nothing to find; the unfixed code: the new test fails, and that is all
    assert _judge(project, rp.tree(project, tmp_path / "gold", fixed=True), baseline)[0] == []
    log = _run(project, rp.tree(project, tmp_path / "base"), "n2")
    [record] = evidence.records(log, "n2")
    [f2p], p2p = project.names(rp.PYTHON)
    # no ValueError: an AssertionError in both (unittest's failure, the runner's "F")
    assert {name: record["outcomes"][name] for name in [f2p, *p2p]} == {
        f2p: "failed",
        **dict.fromkeys(p2p, "passed"),
    }
    assert record["runner"] == next(word for word in project.test_cmd.split() if "/" in word)
    assert _judge(project, rp.tree(project, tmp_path / "wrong"), baseline) == (
        [],
        {f2p: "FAILED", **dict.fromkeys(p2p, "PASSED")},
    )


CAUGHT = {
    # unittest's TextTestResult prints "ok" for a failure: the case reported a failure to the guard
    ("unitcalc", "result-patch"): {
        ("changed", "unittest.runner:TextTestResult.addFailure rebound"),
        ("unconfirmed", "{f2p}: the log says PASSED, the runner saw failed"),
    },
    ("unitcalc", "case-run"): {
        ("changed", "unittest.case:TestCase.run rebound"),
        ("unconfirmed", "{f2p}: the log says PASSED, the runner saw no such test"),
    },
    # a test-side class changed by product code: where the new member comes from
    ("unitcalc", "helper-rebound"): {
        (
            "test-side",
            "test_numbers:NumbersTests.__dict__ rebound (test_clamp_inside (test_numbers.NumbersTests",
        ),
    },
    ("unitcalc", "forged-log"): {("unconfirmed", "{f2p}: the log says PASSED, the runner saw failed")},
    ("symcalc", "reporter-patch"): {("changed", "symcalc.testing.runtests:PyTestReporter.test_fail rebound")},
    ("symcalc", "stdout"): {("unconfirmed", "{f2p}: the log says PASSED, the runner saw failed")},
    ("symcalc", "by-hand"): {
        ("anomaly", "runner-module-unwatched symcalc.testing.runtests"),
        ("unconfirmed", "{f2p}: the log says PASSED, the runner saw no such test"),
    },
}


@pytest.mark.parametrize(("name", "model"), sorted(CAUGHT))
def test_each_route_of_a_runner_script_is_caught_against_the_gold_run(
    baselines: dict[str, Any], tmp_path: Path, name: str, model: str
) -> None:
    project = next(p for p in rp.PROJECTS if p.name == name)
    baseline = baselines[name]()
    findings, successes = _judge(project, rp.hostile_tree(project, tmp_path / model, model), baseline)
    [f2p], _ = project.names(rp.PYTHON)
    # the attack works on the log: SWE-bench's parser alone would count the new test passed
    assert successes[f2p] == "PASSED"
    wanted = {(rule, detail.format(f2p=f2p)) for rule, detail in CAUGHT[name, model]}
    assert {
        (f.rule, d) for f in findings for r, d in wanted if f.rule == r and f.detail.startswith(d)
    } == wanted, findings


def test_the_launcher_keeps_the_script_s_argv_file_and_path_semantics(tmp_path: Path) -> None:
    script = tmp_path / "bin" / "show"
    script.parent.mkdir()
    (tmp_path / "bin" / "helper_module.py").write_text("VALUE = 'found beside the script'\n")
    script.write_text(
        "import sys, os\nimport helper_module\n"
        "print(__name__, __file__, sys.argv, sys.path[0] == os.path.dirname(os.path.abspath(__file__)), "
        "helper_module.VALUE, os.environ.get('TEBENCH_GUARD_NONCE'))\nsys.exit(3)\n"
    )
    result = subprocess.run(
        [sys.executable, "-m", evidence.LAUNCHER, "--runner", "x.y", "bin/show", "-C", "a b"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={
            "PATH": os.environ.get("PATH", ""),
            "PYTHONPATH": str(evidence.PLUGIN_DIR),
            "TEBENCH_GUARD_NONCE": "n",
        },
        check=False,
    )
    # an exit code passes through, the record is still written, the nonce is not the script's to see
    assert result.returncode == 3
    assert (
        evidence.strip_records(result.stdout).strip()
        == "__main__ bin/show ['bin/show', '-C', 'a b'] True found beside the script None"
    )
    [record] = evidence.records(result.stdout, "n")
    assert record["runner"] == "bin/show" and record["outcomes"] == {}


def test_the_guarded_command_of_each_runner_script() -> None:
    launch = "PYTHONHASHSEED=$((RANDOM * 32768 + RANDOM + 1)) python -m tebench_run"
    assert evaluation.guarded_command(
        "./tests/runtests.py --verbosity 2 --settings=test_sqlite --parallel 1", "django/django"
    ) == (
        f"{launch} --runner django.test.runner ./tests/runtests.py --verbosity 2 --settings=test_sqlite --parallel 1",
        True,
    )
    assert evaluation.guarded_command(
        "PYTHONWARNINGS='ignore::UserWarning' bin/test -C --verbose", "sympy/sympy"
    ) == (
        f"PYTHONWARNINGS='ignore::UserWarning' {launch} --runner sympy.testing.runtests "
        "--runner sympy.utilities.runtests bin/test -C --verbose",
        True,
    )
    assert [
        evaluation.guard_kind(c) for c in ("pytest -rA", "bin/test -C", "tox --current-env -e py39 --")
    ] == [
        "pytest",
        "script",
        "tox",
    ]
    assert paths.runner_modules("sympy/sympy") == ("sympy.testing.runtests", "sympy.utilities.runtests")


@pytest.mark.parametrize("name", sorted(p.name for p in evidence.PLUGIN_DIR.glob("*.py")))
def test_the_guards_keep_to_python_3_5_syntax(name: str) -> None:
    """They run in the environment's interpreter: 3.6 (Ubuntu-suite environments), 3.5 (official
    django images). No annotations (evaluated at definition before 3.7's future import, which 3.6
    lacks), no f-strings (3.6), no ``from __future__ import annotations``."""
    source = (evidence.PLUGIN_DIR / name).read_text()
    tree = ast.parse(source)
    for node in ast.walk(tree):
        assert not isinstance(node, ast.AnnAssign), (name, node.lineno)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            arguments = [*node.args.args, *node.args.kwonlyargs, node.args.vararg, node.args.kwarg]
            assert node.returns is None and all(a is None or a.annotation is None for a in arguments), (
                name,
                node.lineno,
            )
        if isinstance(node, ast.ImportFrom):
            assert node.module != "__future__", (name, node.lineno)
    strings = [
        t.string for t in tokenize.generate_tokens(io.StringIO(source).readline) if t.type == tokenize.STRING
    ]
    assert not [s for s in strings if s[: s.index(s[-1])].lower().count("f")], name
    fstrings = [
        t
        for t in tokenize.generate_tokens(io.StringIO(source).readline)
        if t.type == getattr(tokenize, "FSTRING_START", -1)
    ]
    assert not fstrings, name


def test_an_official_image_runs_a_runner_script_under_the_launcher(tmp_path: Path) -> None:
    from pytest_tebench.benchmarks.swebench import official_images
    from pytest_tebench.benchmarks.swebench.adapter import SwebenchAdapter
    from pytest_tebench.instance.datasets import RawRecord

    rp.register(rp.SYMCALC)
    row = rp.mirror(rp.SYMCALC, tmp_path / "repos", tmp_path / "work")
    [instance] = SwebenchAdapter(images="official").load_instances([RawRecord(row, "rows.jsonl:1")])
    script = official_images.eval_script(instance.payload, guard=True)
    command = (
        "PYTHONWARNINGS='ignore::UserWarning' PYTHONHASHSEED=$((RANDOM * 32768 + RANDOM + 1)) python -m "
        "tebench_run --runner symcalc.testing.runtests bin/test -C --verbose symcalc/tests/test_numbers.py"
    )
    assert 'env -i "${keep[@]}" PYTHONNOUSERSITE=1 bash -c ' + shlex.quote(command) in script.splitlines()
    assert f"python_path={official_images.GUARD_PATH}" in script
    # the probe of the launcher, as the image's interpreter runs it (here with this Python)
    probe = subprocess.run(
        [sys.executable, "-c", official_images.LAUNCHER_PROBE],
        env={"PATH": os.environ["PATH"], "PYTHONPATH": str(evidence.PLUGIN_DIR), "PYTHONNOUSERSITE": "1"},
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=False,
    )
    assert (probe.returncode, probe.stdout.strip()) == (0, f"python {sys.version.split()[0]}")
    missing = subprocess.run(
        [sys.executable, "-c", official_images.LAUNCHER_PROBE],
        env={"PATH": os.environ["PATH"], "PYTHONNOUSERSITE": "1"},
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=False,
    )
    assert missing.returncode == 3 and missing.stdout.startswith("the guard's launcher does not load")


def test_an_official_image_is_probed_for_the_guard_its_command_takes(tmp_path: Path) -> None:
    """The launcher needs only the image's Python (no pytest): its probe is asked for a runner
    script, the plugin's for pytest, and a failure says which could not load."""
    from test_swebench_official_integrity import _Executor

    from pytest_tebench.benchmarks.swebench import official_images
    from pytest_tebench.run.executor import StepResult

    failed = StepResult("swebench-guard-probe", (), 3, False, 0.1, "the guard's launcher does not load: x\n")
    executor = _Executor(failed)
    reason = official_images.guard_probe(executor, "img", scratch_parent=tmp_path, kind="script")
    assert reason == "the guard cannot run in img (exit 3): the guard's launcher does not load: x"
    official_images.guard_probe(executor, "img", scratch_parent=tmp_path)
    [script, plugin] = [step.argv[-1] for step, _ in executor.steps]
    assert shlex.quote(official_images.LAUNCHER_PROBE) in script and "import tebench_run" in script
    assert shlex.quote(official_images.GUARD_PROBE) in plugin and "tebench_run" not in plugin
