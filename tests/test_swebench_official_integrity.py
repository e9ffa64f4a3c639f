"""Official-image mode keeps the runner-integrity rules, without Docker: runner files refused from
the image's base files (a fake reader here), and the official eval script's test command run in a
clean environment under the guard."""

from __future__ import annotations

import dataclasses
import json
import os
import shlex
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from pytest_tebench.benchmarks.base import EvalContext
from pytest_tebench.benchmarks.swebench import official
from pytest_tebench.benchmarks.swebench import official_images
from pytest_tebench.benchmarks.swebench import official_refusal
from pytest_tebench.benchmarks.swebench.adapter import SwebenchAdapter
from pytest_tebench.benchmarks.swebench.official_eval import OfficialPrepared
from pytest_tebench.benchmarks.swebench.patch_run import PatchRun
from pytest_tebench.demo import swebench as demo
from pytest_tebench.instance.datasets import RawRecord
from pytest_tebench.integrity import evidence
from pytest_tebench.integrity import paths
from pytest_tebench.run.executor import StepResult

pytest.importorskip("swebench")

SETUP_CFG = "[metadata]\nname = pkg\nversion = 1.0\n\n[tool:pytest]\ntestpaths = tests\n"
#: The base files /testbed holds, as the image reader would return them.
BASE: dict[str, bytes] = {
    "setup.cfg": SETUP_CFG.encode(),
    "bin/test": b"#!/usr/bin/env python\nimport sys\nsys.exit(0)\n",
    "pkg/core.py": b"def f():\n    return 1\n",
}
PYTEST = paths.policy_for("pytest --no-header -rA --tb=no -p no:cacheprovider")


class FakeReader:
    """The image's /testbed as a dict; remembers which paths were asked for."""

    def __init__(self, files: Mapping[str, bytes]) -> None:
        self.files = dict(files)
        self.asked: list[list[str]] = []

    def __call__(self, wanted: list[str]) -> Mapping[str, bytes | None]:
        self.asked.append(list(wanted))
        return {path: self.files.get(path) for path in wanted}


def _new(path: str, text: str) -> str:
    lines = text.splitlines()
    body = "".join(f"+{line}\n" for line in lines)
    return f"diff --git a/{path} b/{path}\nnew file mode 100644\n--- /dev/null\n+++ b/{path}\n@@ -0,0 +1,{len(lines)} @@\n{body}"


def _edit(path: str, old_line: str, new_line: str, context: str, after: str = "") -> str:
    """Line 2 of ``path`` changed (``context`` line 1; ``after`` line 3, when it is not the last)."""
    count = 3 if after else 2
    return (
        f"diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n@@ -1,{count} +1,{count} @@\n"
        f" {context}\n-{old_line}\n+{new_line}\n" + (f" {after}\n" if after else "")
    )


def _decide(patch: str, tmp_path: Path, policy: paths.RunnerPolicy = PYTEST) -> official_refusal.Decision:
    return official_refusal.decide(patch, FakeReader(BASE), policy, tmp_path)


def test_a_root_conftest_is_refused_and_only_the_touched_files_are_read(tmp_path: Path) -> None:
    reader = FakeReader(BASE)
    patch = _new("conftest.py", "def pytest_runtest_makereport(item, call):\n    pass\n")
    patch += _edit("pkg/core.py", "    return 1", "    return 2", "def f():")
    decision = official_refusal.decide(patch, reader, PYTEST, tmp_path)
    assert reader.asked == [["conftest.py", "pkg/core.py"]]
    assert decision.method == "git apply"
    assert [(r.path, r.rule) for r in decision.refusals] == [("conftest.py", "conftest")]


def test_setup_cfg_is_refused_in_its_pytest_section_only(tmp_path: Path) -> None:
    pytest_section = _decide(
        "diff --git a/setup.cfg b/setup.cfg\n--- a/setup.cfg\n+++ b/setup.cfg\n@@ -5,2 +5,3 @@\n"
        " [tool:pytest]\n testpaths = tests\n+addopts = -p pkg.core\n",
        tmp_path,
    )
    assert [(r.path, r.rule) for r in pytest_section.refusals] == [("setup.cfg", "pytest-config")]
    # the project's own metadata is the prediction's to change
    metadata = _decide(
        _edit("setup.cfg", "name = pkg", "name = pkg2", "[metadata]", "version = 1.0"), tmp_path
    )
    assert (metadata.method, metadata.refusals) == ("git apply", [])


def test_a_pth_file_and_the_test_command_s_script_are_refused(tmp_path: Path) -> None:
    pth = _decide(_new("pkg/evil.pth", "import os"), tmp_path)
    assert [(r.path, r.rule) for r in pth.refusals] == [("pkg/evil.pth", "startup")]
    sympy = paths.policy_for("PYTHONWARNINGS='ignore::UserWarning' bin/test -C --verbose")
    script = _decide(
        _edit("bin/test", "import sys", "import sys, os", "#!/usr/bin/env python"), tmp_path, sympy
    )
    assert [(r.path, r.rule) for r in script.refusals] == [("bin/test", "test-command")]
    # the same edit under a pytest command is the project's
    assert (
        _decide(_edit("bin/test", "import sys", "import sys, os", "#!/usr/bin/env python"), tmp_path).refusals
        == []
    )


def test_a_patch_that_does_not_apply_is_still_judged_by_its_paths(tmp_path: Path) -> None:
    stale = _edit("conftest.py", "old", "new", "context") + _edit("pkg/core.py", "nope", "x", "def f():")
    decision = _decide(stale, tmp_path)
    assert decision.method is None
    assert [(r.path, r.rule) for r in decision.refusals] == [("conftest.py", "conftest")]
    assert _decide(_edit("pkg/core.py", "nope", "x", "def f():"), tmp_path) == official_refusal.Decision(
        None, []
    )


def _demo_instance() -> Any:
    official.register_repository(demo.SWEBENCH_DEMO_REPO, demo.SPECS, demo.LOG_PARSER)
    row = json.loads(demo.DATASET.read_text().splitlines()[0])
    [instance] = SwebenchAdapter(images="official").load_instances([RawRecord(row, "rows.jsonl:1")])
    return instance.payload


def test_the_official_eval_script_runs_its_test_command_clean_and_under_the_guard() -> None:
    payload = _demo_instance()
    plain = official_images.eval_script(payload)
    guarded = official_images.eval_script(payload, guard=True)
    assert demo.SPECS["1.0"]["test_cmd"] == "pytest -rA"
    expected = {
        id(plain): "pytest -rA tests/test_numbers.py",
        id(guarded): "pytest -p tebench_guard -rA tests/test_numbers.py",
    }
    for script in (plain, guarded):
        lines = script.splitlines()
        # the raw command is gone: only its clean form runs, between the official markers
        assert "pytest -rA tests/test_numbers.py" not in lines
        start = lines.index(": '>>>>> Start Test Output'")
        end = lines.index(": '>>>>> End Test Output'")
        [run] = [line for line in lines[start:end] if line.startswith("env -i ")]
        assert run == 'env -i "${keep[@]}" PYTHONNOUSERSITE=1 bash -c ' + shlex.quote(expected[id(script)])
        assert "CONDA_PREFIX" in script and "TEBENCH_GUARD_TREE=/testbed" in script
        # the guards' notion of test side needs the repository (pytest's own src/ is product)
        assert f"TEBENCH_GUARD_REPO={payload.repo}" in script
    assert "python_path=''" in plain
    assert f"python_path={official_images.GUARD_PATH}" in guarded
    assert official_images.GUARD_PATH == "/opt/tools/tebench-guard"


def test_the_official_eval_script_of_a_tox_suite_passes_the_guard_through_posargs() -> None:
    """sphinx's ``tox --current-env -epy39 -v --``: the plugin first after ``--`` (tox-current-env
    passes the clean environment on, the plugin's folder and the nonce with it)."""
    payload = dataclasses.replace(
        _demo_instance(), repo="sphinx-doc/sphinx", version="3.5", instance_id="sphinx-doc__sphinx-1"
    )
    lines = official_images.eval_script(payload, guard=True).splitlines()
    assert (
        'env -i "${keep[@]}" PYTHONNOUSERSITE=1 bash -c '
        + shlex.quote("tox --current-env -epy39 -v -- -p tebench_guard tests/test_numbers.py")
        in lines
    )
    assert f"python_path={official_images.GUARD_PATH}" in lines


def test_the_official_eval_script_is_split_at_the_reset_of_the_test_files() -> None:
    payload = _demo_instance()
    install, tests = official_images.phase_scripts(payload, guard=True)
    whole = official_images.eval_script(payload, guard=True).splitlines()
    reset = whole.index(f"git checkout {payload.base_commit} tests/test_numbers.py")
    # the install phase: activation, the eval commands and the re-install; nothing of the tests
    assert install.splitlines() == whole[:reset]
    assert install.splitlines()[-1] == "python -m pip install -e ." == demo.SPECS["1.0"]["install"]
    assert "Start Test Output" not in install and "TEBENCH_GUARD" not in install
    # the test phase: the same script without the install (its result is already in the image)
    assert tests.splitlines() == [line for line in whole if line != "python -m pip install -e ."]
    assert "pytest -p tebench_guard -rA tests/test_numbers.py" in tests


@pytest.mark.parametrize(
    ("repo", "version", "install"),
    [
        ("django/django", "4.0", "python -m pip install -e ."),  # eval commands export a locale first
        ("django/django", "1.9", "python setup.py install"),
        ("astropy/astropy", "4.3", "python -m pip install -e .[test] --verbose"),
        ("sympy/sympy", "1.12", "python -m pip install -e ."),  # bin/test: no guard, the install still judged
    ],
)
def test_real_specifications_split_with_their_install_in_the_first_phase(
    repo: str, version: str, install: str
) -> None:
    test_patch = "diff --git a/tests/a/tests.py b/tests/a/tests.py\n--- a/tests/a/tests.py\n+++ b/tests/a/tests.py\n@@ -1 +1 @@\n-x\n+y\n"
    row = {
        "instance_id": f"{repo.replace('/', '__')}-1", "repo": repo, "version": version, "base_commit": "a" * 40,
        "environment_setup_commit": "a" * 40, "patch": test_patch.replace("tests/a/tests.py", "a.py"), "test_patch": test_patch,
        "FAIL_TO_PASS": '["tests/a/tests.py::t"]', "PASS_TO_PASS": "[]",
    }  # fmt: skip
    [instance] = SwebenchAdapter(images="official").load_instances([RawRecord(row, "rows.jsonl:1")])
    first, second = official_images.phase_scripts(instance.payload, guard=True)
    assert official.specs(repo, version)["install"] == install
    assert first.splitlines()[-1] == install and install not in second.splitlines()
    assert f"git checkout {'a' * 40} " in second and "Start Test Output" in second
    assert "conda activate testbed" in first and "conda activate testbed" in second


def _probe(tmp_path: Path, *extra: Path) -> subprocess.CompletedProcess[str]:
    """The probe script as the image's interpreter runs it, with this environment's Python."""
    path = os.pathsep.join([*map(str, extra), str(evidence.PLUGIN_DIR)])
    return subprocess.run(
        [sys.executable, "-c", official_images.GUARD_PROBE],
        env={"PATH": os.environ["PATH"], "PYTHONPATH": path, "PYTHONNOUSERSITE": "1"},
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=False,
    )


def test_the_guard_probe_accepts_a_supported_pytest_and_says_why_not_otherwise(tmp_path: Path) -> None:
    ok = _probe(tmp_path)
    assert (ok.returncode, ok.stdout.strip()) == (
        0,
        f"python {sys.version.split()[0]}, pytest {pytest.__version__}",
    )
    old = tmp_path / "old"
    (old / "pytest").mkdir(parents=True)
    (old / "pytest" / "__init__.py").write_text("__version__ = '4.5.0'\n")
    too_old = _probe(tmp_path, old)
    # the guard plugin imports pytest's internals: with this stand-in it does not even load
    assert too_old.returncode == 3
    assert too_old.stdout.startswith("the guard plugin does not load in the image's environment")


class _Executor:
    """Answers the probe's one container run with ``result`` (the Docker executor's interface)."""

    def __init__(self, result: StepResult) -> None:
        self.result = result
        self.steps: list[Any] = []

    def container_spec(self) -> None:  # only its presence is asked for
        raise AssertionError

    def run(self, workspace: Path, step: Any, **kwargs: Any) -> StepResult:
        self.steps.append((step, kwargs))
        return self.result


def test_a_failed_probe_makes_the_guard_inactive_with_its_reason_never_tampered(tmp_path: Path) -> None:
    failed = StepResult(
        "swebench-guard-probe", (), 3, False, 0.5, "noise\nthe image's pytest 3.0.7 is older\n"
    )
    executor = _Executor(failed)
    reason = official_images.guard_probe(
        executor, "swebench/sweb.eval.x86_64.a_1776_b-1:latest", scratch_parent=tmp_path
    )
    assert reason == (
        "the guard cannot run in swebench/sweb.eval.x86_64.a_1776_b-1:latest (exit 3): "
        "the image's pytest 3.0.7 is older"
    )
    [(step, kwargs)] = executor.steps
    # the plugin's folder is mounted read-only, and the image runs with the official overrides
    assert step.tools == (("tebench-guard", str(evidence.PLUGIN_DIR)),) and not step.network
    assert kwargs["overrides"]["user"] == "0:0"
    assert (
        official_images.guard_probe(
            _Executor(dataclasses.replace(failed, exit_code=0)), "i", scratch_parent=tmp_path
        )
        is None
    )
    # the adapter's guard block for a run the probe kept unguarded: inactive, its reason, no findings
    adapter = SwebenchAdapter(images="official")
    [instance] = adapter.load_instances(
        [RawRecord(json.loads(demo.DATASET.read_text().splitlines()[0]), "rows.jsonl:1")]
    )
    # a log that resolves: with the guard on and no record this would be `no-record`, tampered
    run = PatchRun(guarded=False, guard_reason=reason, log="tests/test_numbers.py::test_mean PASSED")
    context = EvalContext(cache_dir=Path("unused"), work_dir=Path("unused"), repos=None)  # type: ignore[arg-type]
    prepared = OfficialPrepared("image", {}, None, "3.11")
    block = adapter._judge_guard(
        instance,
        prepared,
        None,
        run,
        status_map={},
        resolved=True,
        context=context,  # type: ignore[arg-type]
    )
    assert block == {"active": False, "reason": reason}


def test_a_link_of_the_image_is_read_as_one_and_a_plain_hunk_on_it_is_refused(tmp_path: Path) -> None:
    # git keeps a link's target as its content: with no mode line, a hunk on it retargets it
    files: dict[str, Any] = {**BASE, "pkg/data.py": official_refusal.ImageLink("core.py")}
    retarget = (
        "diff --git a/pkg/data.py b/pkg/data.py\n--- a/pkg/data.py\n+++ b/pkg/data.py\n@@ -1 +1 @@\n"
        "-core.py\n\\ No newline at end of file\n+/etc/passwd\n\\ No newline at end of file\n"
    )
    edit = _edit("pkg/core.py", "    return 1", "    return 2", "def f():")
    decision = official_refusal.decide(edit + retarget, FakeReader(files), PYTEST, tmp_path)
    assert [(r.path, r.rule) for r in decision.refusals] == [("pkg/data.py", "link")]
    assert official_refusal.image_links(edit + retarget, FakeReader(files)) == ["pkg/data.py"]
    assert official_refusal.image_links(edit, FakeReader(files)) == []
    # a hunk that does not apply to the link still names it
    wrong = retarget.replace("-core.py", "-elsewhere.py")
    assert [(r.path, r.rule) for r in _decide_with(files, wrong, tmp_path).refusals] == [
        ("pkg/data.py", "link")
    ]


def _decide_with(files: Mapping[str, Any], patch: str, tmp_path: Path) -> official_refusal.Decision:
    return official_refusal.decide(patch, FakeReader(files), PYTEST, tmp_path)
