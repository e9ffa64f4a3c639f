"""SWE-bench benchmark, without Docker: rows, environment plans, patch application, grading, figures."""

from __future__ import annotations

import dataclasses
import json
import shlex
import subprocess
from pathlib import Path
from typing import Any

import pytest

from pytest_tebench.benchmarks.swebench import environment
from pytest_tebench.benchmarks.swebench import evaluation
from pytest_tebench.benchmarks.swebench import official
from pytest_tebench.benchmarks.swebench import pytest_ids
from pytest_tebench.benchmarks.swebench import suites
from pytest_tebench.benchmarks.swebench import summary
from pytest_tebench.benchmarks.swebench.adapter import SwebenchAdapter
from pytest_tebench.errors import UnsupportedEnvironment
from pytest_tebench.instance.datasets import RawRecord

from conftest import History

pytest.importorskip("swebench")

SHA = "22623bd8c265b78b161542663ee980738441c307"
ROW: dict[str, Any] = {
    "instance_id": "psf__requests-1142",
    "repo": "psf/requests",
    "version": "1.1",
    "base_commit": SHA,
    "environment_setup_commit": "ba25184ed5f0bf9b876dea3cf4312fa35b539a7c",
    "patch": "diff --git a/x b/x\n",
    "test_patch": "diff --git a/test_requests.py b/test_requests.py\n",
    "FAIL_TO_PASS": '["test_requests.py::T::test_new"]',
    "PASS_TO_PASS": ["test_requests.py::T::test_old"],
    "text": "ignored",
    "eval_script": "carried, never needed",
}


def _load(**changes: Any) -> Any:
    row = {**ROW, **changes}
    records = [RawRecord({k: v for k, v in row.items() if v is not None}, "rows.jsonl:1")]
    return SwebenchAdapter().load_instances(records)[0]


def test_rows_accept_json_strings_and_lists_and_mark_the_version() -> None:
    instance = _load()
    assert instance.problem is None
    assert instance.payload.fail_to_pass == ("test_requests.py::T::test_new",)
    assert instance.payload.pass_to_pass == ("test_requests.py::T::test_old",)
    assert instance.labels == ("psf_requests_1_1",)
    assert _load(environment_setup_commit=None).payload.environment_setup_commit == SHA


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"base_commit": "main"}, "not a commit hash"),
        ({"version": 1.1}, "not the number"),
        ({"FAIL_TO_PASS": "not json"}, "not a JSON list"),
        ({"FAIL_TO_PASS": "[]"}, "FAIL_TO_PASS is empty"),
        ({"repo": "requests"}, "owner/name"),
        ({"test_patch": None}, "'test_patch' is missing"),
    ],
)
def test_bad_rows_become_problems(change: dict[str, Any], message: str) -> None:
    problem = _load(**change).problem
    assert problem is not None and message in problem and "rows.jsonl:1" in problem


def _plan(spec: dict[str, Any] | None, files: dict[str, str] | None = None) -> environment.EnvironmentPlan:
    return environment.plan_environment(
        "o/r",
        "1.0",
        spec,
        setup_commit=SHA,
        read_file=(files or {}).get,
        requirement_paths=("requirements/dev.txt",),
    )


def test_the_suite_is_the_one_that_ships_the_python() -> None:
    plan = _plan({"python": "3.9", "install": "python -m pip install -e .", "test_cmd": "pytest -rA"})
    assert plan.suite == "bullseye"
    assert _plan({"python": "3.11", "install": "pip install ."}).suite == "bookworm"
    assert (
        plan.tag()
        == _plan({"python": "3.9", "install": "python -m pip install -e .", "test_cmd": "pytest -rA"}).tag()
    )
    assert (
        plan.tag()
        != _plan({"python": "3.9", "install": "python -m pip install .", "test_cmd": "pytest -rA"}).tag()
    )


@pytest.mark.parametrize(
    ("spec", "reason"),
    [
        ({"python": "3.5", "install": "pip install ."}, "needs Python 3.5"),
        (
            {"python": "3.9", "install": "x", "pre_install": ["apt-get install -y x", 'wget -O "$Q" "$URL"']},
            "pre_install needs what Debian, Ubuntu and PyPI cannot give: wget",
        ),
        (None, "no specification"),
        ({"python": "3.9", "install": "x", "packages": "environment.yml"}, "environment.yml"),
    ],
)
def test_unsupported_environments_are_decided_from_the_spec(spec: dict[str, Any] | None, reason: str) -> None:
    with pytest.raises(UnsupportedEnvironment, match=reason) as raised:
        _plan(spec)
    assert raised.value.status == "unsupported_environment"


def test_requirement_files_come_from_the_mirror_with_nested_files() -> None:
    files = {
        "requirements/dev.txt": "-r tests.txt\n-e .\n# comment\nsphinx==4.0\n",
        "requirements/tests.txt": "pytest==7.1\n.[test]\n",
    }
    plan = _plan({"python": "3.9", "install": "pip install -e .", "packages": "requirements.txt"}, files)
    assert plan.requirements.split("\n") == ["pytest==7.1", "", "sphinx==4.0", ""]
    script = plan.script()
    assert "python -m pip install -r /tmp/requirements.txt" in script
    # unpinned packages resolve as PyPI stood when SWE-bench's test lists were made
    assert script.index("export PIP_UPLOADED_PRIOR_TO=2023-11-01T00:00:00Z") < script.index(
        "-r /tmp/requirements"
    )


def test_model_patches_apply_like_swebench(tmp_path: Path) -> None:
    history = History(tmp_path / "repo")
    history.commit({"a.py": "".join(f"line {i}\n" for i in range(20))})
    exact = "--- a/a.py\n+++ b/a.py\n@@ -1,3 +1,3 @@\n line 0\n-line 1\n+LINE 1\n line 2\n"
    assert evaluation.apply_model_patch(history.path, exact).method == "git apply"
    evaluation._reset(history.path)
    # wrong line numbers and a changed context line: git refuses, patch's fuzz finds it
    fuzzy = "--- a/a.py\n+++ b/a.py\n@@ -9,4 +9,4 @@\n line 9\n-line 10\n+LINE 10\n line 11\n line twelve\n"
    assert evaluation.apply_model_patch(history.path, fuzzy).method == "patch --fuzz=5"
    assert "LINE 10" in (history.path / "a.py").read_text()
    evaluation._reset(history.path)
    wrong = "--- a/a.py\n+++ b/a.py\n@@ -1,2 +1,2 @@\n nothing\n-like this\n+here\n"
    result = evaluation.apply_model_patch(history.path, wrong)
    assert result.method is None and "git apply" in result.log
    assert (history.path / "a.py").read_text().startswith("line 0\nline 1\n")


LOG = """+ pytest -rA tests/test_x.py
>>>>> Start Test Output
============================= test session starts ==============================
tests/test_x.py ..F                                                      [100%]
=========================== short test summary info ============================
PASSED tests/test_x.py::test_new
PASSED tests/test_x.py::test_old
FAILED tests/test_x.py::test_other - AssertionError: boom
>>>>> End Test Output
"""


def _grade(log: str, f2p: list[str], p2p: list[str]) -> official.Grade:
    return official.grade(
        instance_id="pallets__flask-1",
        repo="pallets/flask",
        version="2.0",
        fail_to_pass=f2p,
        pass_to_pass=p2p,
        log=log,
    )


def test_grading_is_swebench_s() -> None:
    full = _grade(LOG, ["tests/test_x.py::test_new"], ["tests/test_x.py::test_old"])
    assert full.resolved and full.resolution == "RESOLVED_FULL"
    broken = _grade(LOG, ["tests/test_x.py::test_new"], ["tests/test_x.py::test_other"])
    assert not broken.resolved and broken.tests_status["PASS_TO_PASS"]["failure"] == [
        "tests/test_x.py::test_other"
    ]
    partial = _grade(LOG, ["tests/test_x.py::test_new", "tests/test_x.py::test_other"], [])
    assert partial.resolution == "RESOLVED_PARTIAL" and not partial.resolved
    missing = _grade(LOG, ["tests/test_x.py::test_absent"], [])
    assert missing.tests_status["FAIL_TO_PASS"]["failure"] == ["tests/test_x.py::test_absent"]
    no_markers = _grade(LOG.replace(">>>>> End Test Output", ""), ["tests/test_x.py::test_new"], [])
    assert not no_markers.log_found and not no_markers.resolved


def test_the_eval_script_runs_the_test_files_between_the_markers() -> None:
    plan = _plan({"python": "3.9", "install": "x", "test_cmd": "pytest -rA", "eval_commands": ["export A=1"]})
    script = evaluation.eval_script(plan, ["tests/test_x.py", "tests/odd name.py"])
    lines = script.splitlines()
    start = lines.index(f"echo '{official.START_TEST_OUTPUT}'")
    # a clean environment (env -i: what the spec exports and a few basics), no user site, the guard first
    *_, command = shlex.split(lines[start + 1])
    assert lines[start + 1].startswith('env -i "${keep[@]}" PYTHONNOUSERSITE=1 bash -c ')
    assert command == "pytest -p tebench_guard -rA tests/test_x.py 'tests/odd name.py'"
    assert "for name in PATH HOME LANG LC_ALL LANGUAGE TZ VIRTUAL_ENV PYTHONIOENCODING A; do" in lines
    assert "python_path='{tool:tebench-guard}'" in lines
    assert lines.index("export A=1") < start
    assert subprocess.run(["bash", "-n", "-c", script], check=False).returncode == 0
    # django's runner script is started by the guard's launcher (the plugin's folder on its path)
    django = evaluation.eval_script(
        _plan({"python": "3.9", "install": "x", "test_cmd": "./tests/runtests.py"}), []
    )
    launched = "python -m tebench_run ./tests/runtests.py"
    assert launched in django and "python_path='{tool:tebench-guard}'" in django.splitlines()
    # tox without tox-current-env hands pytest only its pass_env (no PYTHONPATH, no nonce): a clean
    # environment, no guard on its path
    tox = evaluation.eval_script(_plan({"python": "3.9", "install": "x", "test_cmd": "tox -e py39"}), [])
    assert "bash -c 'tox -e py39'" in tox and "tebench-guard" not in tox
    assert official.test_directives(
        "psf/requests", "diff --git a/t.py b/t.py\ndiff --git a/d.json b/d.json\n"
    ) == ["t.py"]


def _record(
    iid: str, status: str, resolved: bool = False, model: str = "m", repo: str = "o/r"
) -> dict[str, Any]:
    return {
        "instance_id": iid,
        "model_name_or_path": model,
        "project": repo,
        "status": status,
        "error": "needs Python 3.6" if status == "unsupported_environment" else None,
        "swebench": {"resolved": resolved},
    }


def test_figures_and_the_official_run_report() -> None:
    records = [
        _record("a", "evaluated", True),
        _record("b", "evaluated", False, repo="o/s"),
        _record("c", "empty"),
        _record("d", "not_applied"),
        _record("e", "unsupported_environment"),
        _record("f", "timeout"),
        _record("g", "missing_prediction"),
        _record("h", "error"),
    ]
    block = summary.summarise(records)["m"]
    # 1 resolved of 8 instances (SWE-bench's figure), of 5 judged (a, b, c, d, g) beside it
    assert (block["items"], block["judged"], block["resolved"]) == (8, 5, 1)
    assert (block["resolved_rate"], block["resolved_rate_judged"]) == (1 / 8, 1 / 5)
    assert (block["empty"], block["missing_prediction"], block["not_applied"]) == (1, 1, 1)
    assert (block["unsupported_environment"], block["harness_errors"]) == (1, 2)
    assert block["not_judged"] == {"error": 1, "timeout": 1, "unsupported_environment": 1}
    assert block["by_repo"]["o/s"]["resolved_rate"] == 0.0
    lines = summary.summary_lines(summary.summarise(records))
    assert lines[0] == (
        "model: m  resolved 1/8 = 12.5% of all instances (SWE-bench's figure); 1/5 = 20.0% of the judged"
    )
    assert lines[1] == (
        "  not judged: 3 (error 1, timeout 1, unsupported_environment 1); judged: empty 1, missing 1, not applied 1, "
        "refused 0, tampered 0"
    )
    report = summary.run_report(records, "m")
    assert report["resolved_ids"] == ["a"] and report["unresolved_ids"] == ["b"]
    assert report["empty_patch_ids"] == ["c"] and report["error_ids"] == ["d", "e", "f", "h"]
    # SWE-bench: an instance without a prediction is incomplete, not submitted; the total has it
    assert report["incomplete_ids"] == ["g"] and "g" not in report["submitted_ids"]
    assert (report["total_instances"], report["submitted_instances"]) == (8, 7)
    assert report["schema_version"] == 2 and report["completed_instances"] == 2
    # the headline is the run report's resolved / total
    assert report["resolved_instances"] / report["total_instances"] == block["resolved_rate"]
    properties = dict(summary.summary_properties(summary.summarise(records)))
    assert properties["tebench.swebench.m.resolved_rate"] == 0.125
    assert properties["tebench.swebench.m.items"] == 8
    assert properties["tebench.swebench.m.not_judged"] == "error=1,timeout=1,unsupported_environment=1"
    json.dumps(report)
    paths = summary.run_report_paths(Path("out/run.json"), ["gold", "org/model"])
    assert paths == {"gold": Path("out/run.gold.json"), "org/model": Path("out/run.org__model.json")}


def test_unsupported_environments_are_skipped_and_listed_never_scored(
    pytester: pytest.Pytester, tmp_path: Path
) -> None:
    # matplotlib 3.5 downloads qhull from qhull.org: decided from SWE-bench's specification, before
    # any repository or Docker engine is needed (neither exists for this run)
    row = {
        **ROW,
        "instance_id": "matplotlib__matplotlib-1",
        "repo": "matplotlib/matplotlib",
        "version": "3.5",
    }
    dataset = tmp_path / "rows.jsonl"
    dataset.write_text(json.dumps(row) + "\n")
    report = tmp_path / "report.json"
    run = tmp_path / "run.json"
    result = pytester.runpytest(
        "-p",
        "no:cacheprovider",
        "--tebench-predictions=gold",
        "--tebench-benchmark=swebench",
        f"--tebench-dataset={dataset}",
        f"--tebench-cache-dir={tmp_path / 'cache'}",
        "--tebench-offline",
        f"--tebench-report={report}",
        f"--tebench-swebench-report={run}",
        "-rs",
    )
    result.assert_outcomes(skipped=1)
    # auto mode: not built here, and its official image is neither here nor pulled
    result.stdout.fnmatch_lines(
        [
            "*unsupported environment: matplotlib/matplotlib 3.5's pre_install needs what Debian, Ubuntu and PyPI "
            "cannot give: wget*; and the official image swebench/sweb.eval.x86_64.matplotlib_1776_matplotlib-1:latest *"
        ]
    )
    block = json.loads(report.read_text())["summary"]["gold"]
    assert (block["judged"], block["unsupported_environment"], block["resolved_rate_judged"]) == (0, 1, None)
    assert block["resolved_rate"] == 0.0  # SWE-bench's figure: 0 of 1 instance
    record = json.loads(report.read_text())["results"][0]
    assert record["status"] == "unsupported_environment"
    assert json.loads(run.read_text())["error_ids"] == ["matplotlib__matplotlib-1"]


def test_the_python_base_images_reuse_the_java_image_machinery() -> None:
    from pytest_tebench.run import docker_image

    recipe = suites.base_recipe("bookworm")
    assert docker_image.image_tag(recipe).startswith("pytest-tebench/python-bookworm:")
    script = docker_image.setup_script(recipe)
    assert "python3-venv" in script and "openjdk" not in script and "maven" not in script
    assert not any("JAVA" in change for change in docker_image.image_changes(recipe))
    # the Java image's tag does not move because other recipes exist
    assert docker_image.image_tag().startswith("pytest-tebench/java:")
    assert docker_image.recipe_hash(docker_image.Recipe()) == docker_image.recipe_hash()


def test_pre_install_commands_that_are_not_system_installs_run_before_the_install() -> None:
    plan = _plan(
        {"python": "3.9", "install": "pip install -e .", "pre_install": ["sed -i 's/>=>=/>=/' setup.cfg"]}
    )
    script = plan.script().splitlines()
    install = "pip install -e . || pip install -e . --no-build-isolation"
    assert script.index("sed -i 's/>=>=/>=/' setup.cfg") < script.index(install)


def test_system_lines_of_pre_install_run_as_root_before_the_venv_and_never_in_a_layer() -> None:
    # django 4.0's pre_install, as SWE-bench 4.1.0 has it: a locale from Debian's `locales`
    django = [
        "apt-get update && apt-get install -y locales",
        "echo 'en_US UTF-8' > /etc/locale.gen",
        "locale-gen en_US.UTF-8",
    ]
    plan = _plan(
        {"python": "3.9", "install": "pip install -e .", "pre_install": [*django, "sed -i x tox.ini"]}
    )
    assert plan.system == tuple(django) and plan.pre_install == ("sed -i x tox.ini",)
    script = plan.script().splitlines()
    assert script.index("locale-gen en_US.UTF-8") < script.index(f"python3 -m venv {environment.VENV}")
    assert script.index("sed -i x tox.ini") > script.index(f"python3 -m venv {environment.VENV}")
    layer = environment.InstanceLayerPlan(plan, "env:1", "c" * 40, ())
    assert "apt-get" not in layer.script() and "sed -i x tox.ini" in layer.script()


def test_the_install_runs_again_at_base_commit_only_when_what_decides_it_changed(tmp_path: Path) -> None:
    history = History(tmp_path / "repo")
    setup_py = 'from setuptools import setup\nsetup(name="p", version="1.0")\n'
    env_commit = history.commit({"setup.py": setup_py, "p/__init__.py": "", "docs/requirements.txt": "x\n"})
    same = history.commit({"p/__init__.py": "X = 1\n", "docs/requirements.txt": "sphinx\n"})
    added = history.commit({"setup.py": setup_py.replace('"1.0"', '"1.0", install_requires=["six"]')})
    again = history.commit({"p/__init__.py": "X = 2\n"})
    reqs = history.commit({"requirements-dev.txt": "six\n"})
    plan = environment.plan_environment(
        "o/r", "1.0", {"python": "3.9", "install": "python -m pip install -e .", "pre_install": ["sed -i x setup.cfg"]},
        setup_commit=env_commit, read_file=lambda path: None, requirement_paths=(), pretend_version="1.0",
        pypi_date="2023-11-01T00:00:00Z",
    )  # fmt: skip
    # only root files decide: a change to the code or to docs/requirements.txt keeps the environment
    assert environment.plan_instance_layer(plan, "env:1", history.path, same) is None
    layer = environment.plan_instance_layer(plan, "env:1", history.path, added)
    assert layer is not None and [name for name, _ in layer.files] == ["setup.py"]
    # instances whose install-deciding files are equal share one layer; a new requirements file is another
    shared = environment.plan_instance_layer(plan, "env:1", history.path, again)
    assert shared is not None and shared.tag() == layer.tag() and shared.commit == again
    other = environment.plan_instance_layer(plan, "env:1", history.path, reqs)
    assert other is not None and other.tag() != layer.tag()
    assert [name for name, _ in other.files] == ["requirements-dev.txt", "setup.py"]
    # a new environment image under it is a new layer
    assert environment.plan_instance_layer(plan, "env:2", history.path, added).tag() != layer.tag()  # type: ignore[union-attr]
    script = layer.script()
    # the environment's install steps, in the venv, as the venv's owner, PyPI at the run's date
    assert script.index(". /opt/venv/bin/activate") < script.index("sed -i x setup.cfg")
    assert "export PIP_UPLOADED_PRIOR_TO=2023-11-01T00:00:00Z" in script
    assert "python -m pip install -e . || python -m pip install -e . --no-build-isolation" in script
    assert "python3 -m venv" not in script and "chown" not in script
    assert script.index("sed -i x setup.cfg") < script.index("generated.py") < script.index("-delete")
    # one list of install steps, in the environment's script and in the layer's
    assert "\n".join(plan.install_lines("1.0")) in plan.script()
    assert "\n".join(plan.install_lines(layer.pretend_version)) in script


def test_tests_that_need_the_internet_are_found_in_the_test_files_before_anything_runs(
    tmp_path: Path,
) -> None:
    from pytest_tebench.benchmarks.swebench import network

    history = History(tmp_path / "repo")
    base = history.commit(
        {
            "tests/test_live.py": "HTTPBIN = os.environ.get('HTTPBIN_URL', 'http://httpbin.org/')\n",
            "tests/test_local.py": "def test_x():\n    assert 1\n",
        }
    )
    assert network.internet_need(history.path, base, "", ["tests/test_local.py"]) is None
    why = network.internet_need(history.path, base, "", ["tests/test_local.py", "tests/test_live.py"])
    assert why == "the tests in tests/test_live.py call the live httpbin.org service"
    # what test_patch adds counts too, in a file that exists and in a new one
    tarpit = (
        "diff --git a/tests/test_local.py b/tests/test_local.py\n--- a/tests/test_local.py\n"
        "+++ b/tests/test_local.py\n@@ -1,2 +1,3 @@\n+TARPIT = 'http://10.255.255.1'\n"
        " def test_x():\n     assert 1\n"
    )
    assert "10.255.255.1" in str(network.internet_need(history.path, base, tarpit, ["tests/test_local.py"]))
    new_file = (
        "diff --git a/tests/test_new.py b/tests/test_new.py\nnew file mode 100644\n--- /dev/null\n"
        "+++ b/tests/test_new.py\n@@ -0,0 +1 @@\n+URL = 'https://httpbin.org/get'\n"
    )
    assert network.internet_need(history.path, base, new_file, ["tests/test_new.py"]) is not None
    # a line test_patch removes is gone
    removed = (
        "diff --git a/tests/test_live.py b/tests/test_live.py\n--- a/tests/test_live.py\n"
        "+++ b/tests/test_live.py\n@@ -1 +1 @@\n-HTTPBIN = os.environ.get('HTTPBIN_URL', 'http://httpbin.org/')\n"
        "+HTTPBIN = 'http://127.0.0.1:8000/'\n"
    )
    assert network.internet_need(history.path, base, removed, ["tests/test_live.py"]) is None


def test_an_instance_whose_tests_need_the_internet_is_unsupported_unless_the_run_opts_in(
    pytester: pytest.Pytester, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    history = History(tmp_path / "repos" / "psf" / "requests")
    sha = history.commit(
        {"test_requests.py": "HTTPBIN = 'http://httpbin.org/'\n\ndef test_old():\n    pass\n"}
    )
    test_patch = (
        "diff --git a/test_requests.py b/test_requests.py\n--- a/test_requests.py\n+++ b/test_requests.py\n"
        "@@ -3,2 +3,5 @@\n def test_old():\n     pass\n+\n+def test_new():\n+    pass\n"
    )
    row = {
        **ROW,
        "version": "2.0",
        "base_commit": sha,
        "environment_setup_commit": sha,
        "test_patch": test_patch,
    }
    dataset = tmp_path / "rows.jsonl"
    dataset.write_text(json.dumps(row) + "\n")
    common = (
        "-p", "no:cacheprovider", "--tebench-predictions=gold", "--tebench-benchmark=swebench",
        f"--tebench-dataset={dataset}", f"--tebench-cache-dir={tmp_path / 'cache'}", "--tebench-offline",
        f"--tebench-repos={tmp_path / 'repos'}", "-rs",
    )  # fmt: skip
    result = pytester.runpytest(*common)
    result.assert_outcomes(skipped=1)
    result.stdout.fnmatch_lines(
        ["*unsupported environment: the tests in test_requests.py call the live httpbin.org service; "
         "this sandbox has no network (--tebench-swebench-network lets them use it)*"]
    )  # fmt: skip
    # opted in, the same instance goes on to plan its environment
    from pytest_tebench.benchmarks.base import EvalContext
    from pytest_tebench.benchmarks.swebench import adapter as adapter_module
    from pytest_tebench.workspace.repos import RepositoryStore

    def reached(*args: object, **kwargs: object) -> None:
        raise RuntimeError("planning the environment")

    monkeypatch.setattr(adapter_module.environment, "plan_environment", reached)
    [instance] = SwebenchAdapter().load_instances([RawRecord(row, "rows.jsonl:1")])
    repos = RepositoryStore(tmp_path / "cache", local_dirs=(tmp_path / "repos",), allow_network=False)
    context = EvalContext(cache_dir=tmp_path / "cache", work_dir=tmp_path / "work", repos=repos)
    with pytest.raises(UnsupportedEnvironment, match=r"httpbin\.org"):
        SwebenchAdapter().prepare(instance, context)
    with pytest.raises(RuntimeError, match="planning the environment"):
        SwebenchAdapter(network=True).prepare(instance, context)


def test_exact_pins_are_installed_whatever_their_date_and_the_rest_resolves_at_the_pypi_date() -> None:
    spec = {"python": "3.9", "install": "pip install -e .", "pip_packages": ["setuptools==70.0.0", "pytest"]}
    setup = environment.plan_environment(
        "o/r", "1", spec, setup_commit=SHA, read_file=lambda path: None, requirement_paths=()
    ).setup
    # setuptools 70 came out after 2023-11-01: asked for by version, it is fetched whatever the date,
    # without its dependencies, which then resolve at its own upload date (tests/test_swebench_pins.py);
    # then everything resolves at the date, setuptools being satisfied
    assert setup[-3:] == (
        "env -u PIP_UPLOADED_PRIOR_TO python -m pip install --no-deps setuptools==70.0.0",
        'PIP_UPLOADED_PRIOR_TO="$(python /opt/swebench/pypi_dates.py "$PIP_UPLOADED_PRIOR_TO" setuptools==70.0.0)" '
        "python -m pip install setuptools==70.0.0",
        "python -m pip install setuptools==70.0.0 pytest",
    )
    assert setup.index("export PIP_UPLOADED_PRIOR_TO=2023-11-01T00:00:00Z") < len(setup) - 3
    # no date (today's PyPI), or no exact pin: one install line, as before
    today = environment.plan_environment(
        "o/r", "1", spec, setup_commit=SHA, read_file=lambda path: None, requirement_paths=(), pypi_date=""
    ).setup
    assert not any(line.startswith("env -u") for line in today)
    unpinned = {**spec, "pip_packages": ["pytest", "numpy>=1.2"]}
    assert not any(
        line.startswith("env -u")
        for line in environment.plan_environment(
            "o/r", "1", unpinned, setup_commit=SHA, read_file=lambda path: None, requirement_paths=()
        ).setup
    )


def test_tests_that_name_a_file_the_repository_downloads_need_the_internet(tmp_path: Path) -> None:
    from pytest_tebench.benchmarks.swebench import network

    history = History(tmp_path / "repo")
    old = history.commit({"tests/test_px.py": "get_testdata_file('SC_rgb.dcm')\n"})
    manifest = json.dumps({"SC_rgb.dcm": "https://github.com/x/SC_rgb.dcm", "OBXXXX1A.dcm": "u"})
    new = history.commit(
        {"pydicom/data/urls.json": manifest, "tests/test_other.py": "open('CT_small.dcm')\n"}
    )
    files = ["tests/test_other.py", "tests/test_px.py"]
    # without a manifest (older versions ship every test file), or for another repository: offline
    assert network.internet_need(history.path, old, "", files, "pydicom/pydicom") is None
    assert network.internet_need(history.path, new, "", files, "o/r") is None
    assert network.internet_need(history.path, new, "", files, "pydicom/pydicom") == (
        "the tests in tests/test_px.py read test files pydicom downloads from GitHub (SC_rgb.dcm)"
    )


def test_official_image_names_and_the_mode_each_instance_runs_in() -> None:
    from pytest_tebench.benchmarks.swebench import official_images

    assert (
        official_images.image_name("django__django-11099")
        == "swebench/sweb.eval.x86_64.django_1776_django-11099:latest"
    )
    built = {"python": "3.9", "install": "pip install -e ."}
    old = {"python": "3.5", "install": "pip install -e ."}
    assert official_images.decide("o/r", "1", built, "auto") == official_images.Decision("build", None)
    assert official_images.decide("o/r", "1", old, "auto").where == "official"
    assert official_images.decide("o/r", "1", old, "build").where == "unsupported"
    assert official_images.decide("o/r", "1", built, "official") == official_images.Decision("official", None)
    # no specification: no eval script either, whatever the mode
    assert official_images.decide("o/r", "1", None, "official").where == "unsupported"


def test_the_official_container_tries_swebench_apply_commands_in_order_then_runs_eval_sh() -> None:
    from pytest_tebench.benchmarks.swebench import official_images

    commands = official_images.apply_commands()
    assert commands == (
        "git apply --verbose",
        "git apply --verbose --reject",
        "patch --batch --fuzz=5 -p1 -i",
    )
    script = official_images.container_script(commands)
    positions = [script.index(f"if {c} /workspace/patch.diff") for c in commands]
    # the install phase: the tests run later, in a container of its result (official_images.run)
    assert positions == sorted(positions) and script.count("exec /bin/bash /workspace/install.sh") == 3
    assert "eval.sh" not in script and "eval.sh" in official_images.test_script()


def test_coverage_counts_each_repository_by_where_its_instances_run() -> None:
    from pytest_tebench.benchmarks.swebench import coverage

    rows = [
        {"instance_id": "django__django-11099", "repo": "django/django", "version": "1.9"},  # Python 3.5
        {"instance_id": "django__django-15000", "repo": "django/django", "version": "4.1"},  # Python 3.9
        {"instance_id": "sympy__sympy-24443", "repo": "sympy/sympy", "version": "1.12"},
        {"instance_id": "x__y-1", "repo": "x/y", "version": "1"},  # no specification
    ]
    entries = coverage.coverage(rows)
    assert coverage.by_repository(entries) == {
        "django/django": {"build": 1, "official": 1, "unsupported": 0},
        "sympy/sympy": {"build": 1, "official": 0, "unsupported": 0},
        "x/y": {"build": 0, "official": 0, "unsupported": 1},
    }
    assert entries[0].image == "swebench/sweb.eval.x86_64.django_1776_django-11099:latest"
    assert coverage.as_json(entries, "auto")["totals"] == {"build": 2, "official": 1, "unsupported": 1}
    assert "| **all** | 4 | 2 | 1 | 1 |" in coverage.table(entries)
    why = dict(coverage.reasons(coverage.coverage(rows, "build")))
    assert [n for reason, n in why.items() if reason.startswith("needs Python 3.5; Debian and Ubuntu")] == [1]


def test_coverage_with_the_repositories_reads_the_tests_as_an_offline_run(tmp_path: Path) -> None:
    from pytest_tebench.benchmarks.swebench import coverage
    from pytest_tebench.workspace.repos import RepositoryStore

    history = History(tmp_path / "mirrors" / "psf+requests")
    base = history.commit(
        {
            "test_requests.py": "HTTPBIN = os.environ.get('HTTPBIN_URL', 'http://httpbin.org/')\n",
            "tests/test_local.py": "def test_x():\n    assert 1\n",
        }
    )

    def touching(path: str) -> str:
        return f"diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n@@ -1 +1,2 @@\n-x\n+x\n+y\n"

    rows = [
        {"instance_id": "psf__requests-1", "repo": "psf/requests", "version": "2.0", "base_commit": base,
         "test_patch": touching("test_requests.py")},
        {"instance_id": "psf__requests-2", "repo": "psf/requests", "version": "2.0", "base_commit": base,
         "test_patch": touching("tests/test_local.py")},
        {"instance_id": "sympy__sympy-1", "repo": "sympy/sympy", "version": "1.12", "base_commit": base,
         "test_patch": ""},  # no mirror: not read, still "build"
    ]  # fmt: skip
    store = RepositoryStore(tmp_path / "cache", local_dirs=[tmp_path / "mirrors"], allow_network=False)
    entries = coverage.coverage(rows, "auto", store.locate)
    assert [(e.where, e.tests_checked) for e in entries] == [
        ("unsupported", True),
        ("build", True),
        ("build", False),
    ]
    assert entries[0].reason == (
        "the tests in test_requests.py call the live httpbin.org service; "
        "this sandbox has no network (--tebench-swebench-network lets them use it)"
    )
    # counted under one reason, whatever the file; the repositories not read are named
    assert coverage.reasons(entries) == [
        ("tests call the live httpbin.org service; this sandbox has no network "
         "(--tebench-swebench-network lets them use it)", 1),
    ]  # fmt: skip
    table = coverage.table(entries)
    assert "| psf/requests | 2 | 1 | 0 | 1 |" in table
    assert table.endswith(
        "Tests read for internet use: 2 instances to build\n- not read (repository not found): sympy/sympy 1\n"
    )
    assert coverage.as_json(entries, "auto")["tests_checked"] == 2
    # without the repositories nothing is read: both requests rows are "build", as before
    assert [e.where for e in coverage.coverage(rows, "auto")] == ["build", "build", "build"]


def test_pythons_no_debian_suite_has_come_from_ubuntu_with_its_pinned_archive_keys() -> None:
    from pytest_tebench.run import docker_image

    bionic = suites.base_recipe(suites.SUITE_FOR_PYTHON["3.6"])
    assert (bionic.suite, bionic.mirror) == ("bionic", "http://archive.ubuntu.com/ubuntu")
    assert "F6ECB3762474EDA9D21B7022871920D1991BC93C" in bionic.keyring_fingerprints
    assert docker_image.image_tag(bionic).startswith("pytest-tebench/python-bionic:")
    assert [suites.SUITE_FOR_PYTHON[v] for v in ("3.8", "3.10")] == ["focal", "jammy"]
    # Debian's recipes carry no keyring: their tags (and cached images) stay what they were. The
    # host's own CA certificates (which the image trusts) join every tag, so they are left out here:
    # the figure must not depend on the machine that runs the test
    bullseye = suites.base_recipe("bullseye")
    assert bullseye.keyring_deb == ""
    assert (
        docker_image.image_tag(dataclasses.replace(bullseye, host_ca_dir=""))
        == "pytest-tebench/python-bullseye:b6f545e682e9"
    )


def test_a_conda_environment_yml_is_installed_as_pypi_packages() -> None:
    from pytest_tebench.benchmarks.swebench import conda_env

    # the shape of xarray's ci/requirements/environment.yml
    text = """name: xarray-tests
channels:
  - conda-forge
dependencies:
  - cdms2
  - dask-core
  - fsspec!=2021.7.0
  - hdf5
  - iris
  - lxml  # Optional dep of pydap
  - matplotlib-base
  - numpy<1.24
  - pandas=1.5
  - pip
  - pip:
      - numbagg
      - git+https://example.org/x.git
  - zarr
"""
    assert conda_env.pip_requirements(text) == [
        "dask", "fsspec!=2021.7.0", "scitools-iris", "lxml", "matplotlib", "numpy<1.24", "pandas==1.5.*",
        "numbagg", "git+https://example.org/x.git", "zarr",
    ]  # fmt: skip
    files = {"ci/requirements/environment.yml": text}
    plan = environment.plan_environment(
        "pydata/xarray", "0.12", {"python": "3.10", "install": "pip install -e .", "packages": "environment.yml"},
        setup_commit="c" * 40, read_file=files.get, requirement_paths=(),
        env_yml_paths=("ci/requirements/environment.yml", "environment.yml"),
    )  # fmt: skip
    assert plan.suite == "jammy"
    assert (
        "scitools-iris\nlxml" in plan.script()
        and "python -m pip install -r /tmp/environment.txt" in plan.script()
    )


def test_an_item_in_its_official_image_needs_no_repository_commits_and_is_keyed_apart() -> None:
    built = SwebenchAdapter(images="build")
    [instance] = built.load_instances([RawRecord(ROW, "rows.jsonl:1")])
    official_adapter = SwebenchAdapter(images="official")
    assert built.repository_commits(instance) == (SHA, ROW["environment_setup_commit"])
    assert official_adapter.repository_commits(instance) == ()
    # a built item's result key is what it was before the option existed; an official one's differs
    assert "images" not in json.loads(str(built.cache_key(instance)))
    assert json.loads(str(official_adapter.cache_key(instance)))["images"] == "official"


def test_the_coverage_command_prints_a_table_or_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from pytest_tebench import cli

    rows = [
        {**ROW, "instance_id": "sympy__sympy-1", "repo": "sympy/sympy", "version": "1.12"},
        {**ROW, "instance_id": "matplotlib__matplotlib-1", "repo": "matplotlib/matplotlib", "version": "3.5"},
    ]
    dataset = tmp_path / "rows.jsonl"
    dataset.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert cli.main(["swebench", "coverage", "--dataset", str(dataset), "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["repositories"] == {
        "matplotlib/matplotlib": {"build": 0, "official": 1, "unsupported": 0},
        "sympy/sympy": {"build": 1, "official": 0, "unsupported": 0},
    }
    assert cli.main(["swebench", "coverage", "--dataset", str(dataset), "--images", "build"]) == 0
    table = capsys.readouterr().out
    assert "| **all** | 2 | 1 | 0 | 1 |" in table and "- 1: pre_install needs what Debian, Ubuntu" in table


def test_a_python_36_environment_runs_its_tests_under_the_guard() -> None:
    from swebench.harness.constants import MAP_REPO_VERSION_TO_SPECS

    from pytest_tebench.benchmarks.swebench import evaluation

    # the guard keeps to Python 3.5 syntax: on bionic's 3.6 (astropy 1.3) it loads, and gold of
    # astropy-7166 under a model's name resolved there with an active guard and no finding (measured)
    plan = environment.plan_environment(
        "astropy/astropy", "1.3", MAP_REPO_VERSION_TO_SPECS["astropy/astropy"]["1.3"], setup_commit="0" * 40,
        read_file=lambda p: None, requirement_paths=(),
    )  # fmt: skip
    assert plan.python == "3.6"
    assert "-p tebench_guard" in evaluation.eval_script(plan, ["astropy/utils/tests/test_misc.py"])


def test_sphinx_tests_that_ask_the_live_google_com_need_the_internet(tmp_path: Path) -> None:
    from pytest_tebench.benchmarks.swebench import network

    # the lines of sphinx's test files (3.2-5.0) whose tests failed offline with gold (7985, 8269,
    # 8475, 10435); test_intl.py and test_markup.py name www.google.com only as text to render
    history = History(tmp_path / "repo")
    base = history.commit(
        {
            "tests/test_build_linkcheck.py": (
                '    assert "Not Found for url: https://www.google.com/image.png" in content\n'
            ),
            "tests/test_build_latex.py": (
                "    assert ('WARNING: Could not fetch remote image: '\n"
                "            'https://www.google.com/NOT_EXIST.PNG [404]' in warning.getvalue())\n"
            ),
            "tests/test_markup.py": "        '`test <https://www.google.com/~me/>`_',\n",
        }
    )
    assert network.internet_need(history.path, base, "", ["tests/test_build_linkcheck.py"]) == (
        "the tests in tests/test_build_linkcheck.py check links against the live www.google.com"
    )
    assert network.internet_need(history.path, base, "", ["tests/test_build_latex.py"]) == (
        "the tests in tests/test_build_latex.py expect a 404 of the live www.google.com for an image"
    )
    assert network.internet_need(history.path, base, "", ["tests/test_markup.py"]) is None


# Recorded: sphinx 3.1's tests/test_pycode_ast.py (sphinx-doc__sphinx-7462 at base_commit) in its
# environment here (pytest 7.4.3, PyPI at 2023-11-01); lines from the `-rA` summary, all PASSED
# there: the last one is made FAILED here to check that a renamed test keeps its own status.
SPHINX_PYTEST7_LOG = """+ tox --current-env -epy39 -v -- tests/test_pycode_ast.py
>>>>> Start Test Output
PASSED tests/test_pycode_ast.py::test_unparse[object()-object()]
PASSED tests/test_pycode_ast.py::test_unparse[1234-12340]
PASSED tests/test_pycode_ast.py::test_unparse[sys-sys]
FAILED tests/test_pycode_ast.py::test_unparse[1234-12341] - AssertionError
>>>>> End Test Output
"""


def test_pytest8_duplicate_ids_meet_pytest7_logs() -> None:
    # pytest 8 (#11456) writes "_<n>" after a duplicated id that ends in a digit; pytest 7 did not
    assert pytest_ids.pytest7_name("t.py::f[1234-1234_0]") == "t.py::f[1234-12340]"
    # an id of that shape that is no duplicate (sphinx-9367's "1_000_000") is graded as it is when logged
    assert pytest_ids.pytest7_name("t.py::f[1_000_000-1_000_000]") == "t.py::f[1_000_000-1_000000]"
    assert (
        pytest_ids.renamed_tests(["t.py::f[1_000_000-1_000_000]"], {"t.py::f[1_000_000-1_000_000]": "PASSED"})
        == {}
    )
    assert pytest_ids.pytest7_name("t.py::f[a_0]") is None  # pytest 8 adds no "_" after a letter
    assert pytest_ids.pytest7_name("t.py::test_a_0") is None
    # Verified's row (pytest 8's names) against the log of pytest 7: graded by the log's names
    grade = official.grade(
        instance_id="sphinx-doc__sphinx-7462",
        repo="sphinx-doc/sphinx",
        version="3.1",
        fail_to_pass=["tests/test_pycode_ast.py::test_unparse[object()-object()]"],
        pass_to_pass=[
            "tests/test_pycode_ast.py::test_unparse[1234-1234_0]",
            "tests/test_pycode_ast.py::test_unparse[sys-sys]",
        ],
        log=SPHINX_PYTEST7_LOG,
    )
    assert grade.resolved and grade.renamed == {
        "tests/test_pycode_ast.py::test_unparse[1234-1234_0]": "tests/test_pycode_ast.py::test_unparse[1234-12340]"
    }
    assert "tests/test_pycode_ast.py::test_unparse[1234-1234_0]" not in grade.status_map  # the log's own
    # a renamed test keeps its own status: the second duplicate failed
    failing = official.grade(
        instance_id="sphinx-doc__sphinx-7462",
        repo="sphinx-doc/sphinx",
        version="3.1",
        fail_to_pass=[],
        pass_to_pass=["tests/test_pycode_ast.py::test_unparse[1234-1234_1]"],
        log=SPHINX_PYTEST7_LOG,
    )
    assert not failing.resolved
    assert failing.tests_status["PASS_TO_PASS"]["failure"] == [
        "tests/test_pycode_ast.py::test_unparse[1234-1234_1]"
    ]
    # the other way (a pytest 7 row, a pytest 8 log), and no renaming of what is absent or present
    pytest8_log = {"t.py::f[1234-1234_0]": "PASSED", "t.py::f[12340]": "PASSED"}
    assert pytest_ids.renamed_tests(
        ["t.py::f[1234-12340]", "t.py::f[12340]", "t.py::f[9_0]"], pytest8_log
    ) == {"t.py::f[1234-12340]": "t.py::f[1234-1234_0]"}
