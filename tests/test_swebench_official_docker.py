"""``--tebench-swebench-images=official`` for real: an image in the official layout, gold and a
wrong fix through the official eval script, two hostile predictions (a root ``conftest.py``
refused before anything runs, an in-package hook registration the guard finds: tampered), an
instance whose image is missing, and a run killed during its test phase (the next run removes the
install phase's commit it left).

No registry is reachable from CI, so the image is made here in SWE-bench's layout and tagged with
the name the official one would have: the repository at ``/testbed`` (a git clone at the
instance's ``base_commit``), installed in an environment that ``source
/opt/miniconda3/bin/activate; conda activate testbed`` activates. conda itself is not available:
``/opt/miniconda3/bin/activate`` is a shim defining a ``conda`` shell function that activates the
demo environment's venv (the pycalc demo's, built as the demo test builds it).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from test_swebench_demo_docker import HOSTILE
from test_swebench_demo_docker import _append_to_init
from test_swebench_demo_docker import _new_file

from pytest_tebench.benchmarks.base import EvalContext
from pytest_tebench.benchmarks.swebench import official_images
from pytest_tebench.benchmarks.swebench.adapter import SwebenchAdapter
from pytest_tebench.demo import swebench as demo
from pytest_tebench.instance.datasets import RawRecord
from pytest_tebench.run import docker_image
from pytest_tebench.run.executors import ExecutorOptions
from pytest_tebench.run.executors import create_executor
from pytest_tebench.run.leftovers import LABEL_PID
from pytest_tebench.run.leftovers import LABEL_TRANSIENT
from pytest_tebench.workspace.gitcmd import git
from pytest_tebench.workspace.repos import RepositoryStore

from conftest import write_jsonl

pytest.importorskip("swebench")
pytestmark = pytest.mark.docker

#: What SWE-bench's eval script sources; ``conda activate testbed`` then enters the venv.
ACTIVATE_SHIM = """# pytest-tebench test shim of miniconda's activate: `conda activate testbed` enters a venv
conda() {
    if [ "${1:-}" = activate ]; then . /opt/venv/bin/activate; fi
}
"""


#: The official eval script re-installs after the patch, as root: a patch that brings its own
#: in-tree build backend (no network needed) has pip run it there, before any test. Each route below
#: makes the FAIL_TO_PASS test pass without fixing clamp when nothing checks the install.
_BACKEND_PYPROJECT = '[build-system]\nrequires = []\nbuild-backend = "backend"\nbackend-path = ["."]\n'
_SITES = (
    "import glob\n\n"
    'SITES = glob.glob("/opt/*/lib/python3*/site-packages") + '
    'glob.glob("/opt/miniconda3/envs/*/lib/python3*/site-packages")\n'
)
_PASS_ALL = (
    "\n\n_made = TestReport.from_item_and_call.__func__\n\n\n"
    "def _passed(cls, item, call):\n    report = _made(cls, item, call)\n    report.outcome = 'passed'\n"
    "    report.longrepr = None\n    return report\n\n\nTestReport.from_item_and_call = classmethod(_passed)\n"
)
_PLUGIN = (
    "import pytest\n\n\n@pytest.hookimpl(hookwrapper=True)\ndef pytest_runtest_makereport(item, call):\n"
    "    outcome = yield\n    outcome.get_result().outcome = 'passed'\n"
)
_INSTALL_ROUTES = {
    # pytest's report code rewritten on disk
    "install-rewrite": _SITES
    + f"for site in SITES:\n    with open(site + '/_pytest/reports.py', 'a') as out:\n        out.write({_PASS_ALL!r})\n",
    # a pytest11 entry point in site-packages: pytest loads the plugin at start-up
    "install-plugin": _SITES
    + "import os\n\nfor site in SITES:\n    os.makedirs(site + '/evil-1.0.dist-info', exist_ok=True)\n"
    "    with open(site + '/evil-1.0.dist-info/METADATA', 'w') as out:\n"
    "        out.write('Metadata-Version: 2.1\\nName: evil\\nVersion: 1.0\\n')\n"
    "    with open(site + '/evil-1.0.dist-info/entry_points.txt', 'w') as out:\n"
    "        out.write('[pytest11]\\nevil = evil_plugin\\n')\n"
    f"    with open(site + '/evil_plugin.py', 'w') as out:\n        out.write({_PLUGIN!r})\n",
    # a conftest.py written into the tree after the patch was judged
    "install-conftest": f"with open('/testbed/conftest.py', 'w') as out:\n    out.write({_PLUGIN!r})\n",
}
#: Code the tests import, run in the test phase: it fixes clamp only where it can write into the
#: environment (the runner's folder, where a ``.pth`` would run in every process the tests start).
#: The test phase's root file system is read-only: it cannot, and the test fails.
_WRITES_ENVIRONMENT = _append_to_init(
    "import glob as _glob\n"
    "from pycalc import numbers as _numbers\n\n\n"
    "def _checked(value, low, high):\n"
    "    if low > high:\n"
    "        raise ValueError('empty range')\n"
    "    return max(low, min(value, high))\n\n\n"
    "for _site in _glob.glob('/opt/*/lib/python3*/site-packages'):\n"
    "    try:\n"
    "        with open(_site + '/zz_tebench_tests.pth', 'w') as _out:\n"
    "            _out.write('')\n"
    "    except OSError:\n"
    "        continue\n"
    "    _numbers.clamp = _checked\n"
)
INSTALL_HOSTILE = {
    model: _new_file("pyproject.toml", _BACKEND_PYPROJECT) + _new_file("backend.py", code)
    for model, code in _INSTALL_ROUTES.items()
}


def _official_layout_image(tmp_path: Path, row: dict[str, str], mirror: Path, env_image: str) -> str:
    context = tmp_path / "official-context"
    context.mkdir()
    git(tmp_path, "clone", "--quiet", str(mirror), str(context / "testbed"))
    git(context / "testbed", "checkout", "--quiet", row["base_commit"])
    (context / "activate").write_text(ACTIVATE_SHIM)
    (context / "Dockerfile").write_text(
        "\n".join(
            [
                f"FROM {env_image}",
                "USER root",
                "COPY testbed /testbed",
                "COPY activate /opt/miniconda3/bin/activate",
                # the package installed from /testbed, as SWE-bench's instance images have it
                "RUN /opt/venv/bin/python -m pip install --no-index --no-deps --no-build-isolation -e /testbed",
                # root's, as SWE-bench's conda environment is: the container's root may rewrite it
                "RUN chown -R 0:0 /opt/venv",
                "WORKDIR /testbed",
                "",
            ]
        )
    )
    name = official_images.image_name(row["instance_id"])
    client = docker_image.connect()
    try:
        client.images.build(path=str(context), tag=name, rm=True, forcerm=True)
    finally:
        client.close()
    return name


def test_official_images_run_gold_a_wrong_fix_and_hostile_ones_and_a_missing_image_is_unsupported(
    pytester: pytest.Pytester, tmp_path: Path
) -> None:
    rows = [json.loads(line) for line in demo.DATASET.read_text().splitlines()[:2]]
    one, two = rows
    repos = tmp_path / "repos"
    mirror = demo.build_swebench_demo_mirror(repos / demo.SWEBENCH_DEMO_REPO)
    # the demo environment (a venv with pytest 7.4.2), built here as build mode builds it
    adapter = SwebenchAdapter(timeout=300, images="build")
    [instance] = adapter.load_instances([RawRecord(one, "rows.jsonl:1")])
    context = EvalContext(
        cache_dir=tmp_path / "cache",
        work_dir=tmp_path / "workspaces",
        repos=RepositoryStore(tmp_path / "cache", local_dirs=(repos,), allow_network=False, embedded={}),
    )
    env_image = adapter.prepare(instance, context).image
    image = _official_layout_image(tmp_path, one, mirror, env_image)
    assert image == "swebench/sweb.eval.x86_64.pytest-tebench_1776_pycalc-1:latest"
    missing = official_images.image_name(two["instance_id"])
    client = docker_image.connect()
    try:
        assert not docker_image.image_present(client, missing)

        wrong = json.loads(demo.PREDICTIONS.read_text().splitlines()[0])
        assert wrong["instance_id"] == one["instance_id"]
        dataset = pytester.path / "rows.jsonl"
        dataset.write_text("".join(json.dumps(r) + "\n" for r in rows))
        predictions = pytester.path / "preds.jsonl"
        predictions.write_text(
            "".join(
                json.dumps(
                    {"instance_id": r["instance_id"], "model_name_or_path": model, "model_patch": patch}
                )
                + "\n"
                for model, patch, r in [
                    ("fixer", one["patch"], one),
                    ("fixer", two["patch"], two),
                    ("wrong", wrong["model_patch"], one),
                    ("wrong", two["patch"], two),
                    ("conftest", HOSTILE["conftest"][1], one),
                    ("gc-hook", HOSTILE["gc-hook"][1], one),
                    ("shadow", HOSTILE["shadow"][1], one),
                    *((model, patch, one) for model, patch in INSTALL_HOSTILE.items()),
                    ("writes-environment", _WRITES_ENVIRONMENT, one),
                ]
            )
        )
        report = tmp_path / "report.json"
        result = pytester.runpytest(
            "-p", "no:cacheprovider", "--tebench-benchmark=swebench", f"--tebench-dataset={dataset}",
            f"--tebench-predictions={predictions}", f"--tebench-cache-dir={tmp_path / 'cache'}",
            "--tebench-swebench-images=official", f"--tebench-report={report}", "-rs",
        )  # fmt: skip
        # gold resolves in the official image, the wrong fix does not; pycalc-2 has no image anywhere
        # the hostile models have no prediction for pycalc-2: missing, unresolved without a run
        # (each hostile model also misses pycalc-2)
        result.assert_outcomes(passed=1, failed=9 + 2 * len(INSTALL_HOSTILE), skipped=2)
        result.stdout.fnmatch_lines([f"*{missing} is not here and cannot be pulled*"])
        records = {
            (r["model_name_or_path"], r["instance_id"]): r for r in json.loads(report.read_text())["results"]
        }
        fixed = records["fixer", one["instance_id"]]
        # the tests' own process could not write into the environment (read-only in the test phase)
        writes = records["writes-environment", one["instance_id"]]
        assert (writes["status"], writes["swebench"]["resolved"]) == ("evaluated", False)
        assert writes["guard"]["findings"] == []
        assert (fixed["status"], fixed["apply_method"]) == ("evaluated", "git apply --verbose")
        # gold (under a model's name) ran under the guard in the official image, judged against gold
        assert fixed["guard"] == {
            "active": True,
            "records": 1,
            "baseline": "gold run",
            "findings": [],
            # its install changed what gold's did (the tree's index, root's git configuration)
            "install": {"changes": fixed["guard"]["install"]["changes"], "baseline": "gold's install"},
        }
        # the install re-run as root: caught before any test ran on it (no test log, no guard record)
        site = "/opt/venv/lib/python3.9/site-packages"
        caught = {model: records[model, one["instance_id"]] for model in INSTALL_HOSTILE}
        for model, record in caught.items():
            assert (record["status"], record["swebench"]["resolved"]) == ("tampered", False), model
            assert record["swebench"]["resolution"] is None and "records" not in record["guard"], model
        findings = {m: [(f["rule"], f["detail"]) for f in r["guard"]["findings"]] for m, r in caught.items()}
        assert findings["install-rewrite"] == [
            ("install", f"{site}/_pytest/reports.py changed by the install; gold's install did not touch it")
        ]
        assert findings["install-plugin"] == [
            (
                "entry-point",
                f"{site}/evil-1.0.dist-info/entry_points.txt registers the pytest plugin evil = evil_plugin",
            ),
        ]
        assert [rule for rule, _ in findings["install-conftest"]] == ["install-tree"]
        assert findings["install-conftest"][0][1].startswith("conftest.py added by the install: conftest")
        refused = records["conftest", one["instance_id"]]
        assert (refused["status"], refused["swebench"]["resolved"]) == ("refused", False)
        assert [(f["path"], f["rule"]) for f in refused["refused_files"]] == [("conftest.py", "conftest")]
        assert "tests" not in refused["timings"]  # nothing of it ran
        hooked = records["gc-hook", one["instance_id"]]
        assert (hooked["status"], hooked["swebench"]["resolved"]) == ("tampered", False)
        # SWE-bench's own grading of the log would have resolved it
        assert hooked["swebench"]["resolution"] == "RESOLVED_FULL"
        assert {"hook", "unconfirmed"} <= {f["rule"] for f in hooked["guard"]["findings"]}
        assert hooked["guard"]["baseline"] == "gold run"
        # the tests' own folder shadowing the package: set aside in the image too, so unresolved
        shadow = records["shadow", one["instance_id"]]
        assert shadow["set_aside_files"] == ["tests/pycalc/__init__.py", "tests/pycalc/numbers.py"]
        assert (shadow["status"], shadow["swebench"]["resolution"]) == ("evaluated", "RESOLVED_NO")
        assert shadow["guard"]["findings"] == [] and fixed["set_aside_files"] == []
        block = fixed["swebench"]
        assert (block["environment"], block["image"], block["resolved"]) == ("official", image, True)
        assert block["f2p_success"] == json.loads(one["FAIL_TO_PASS"]) and block["p2p_failure"] == []
        unresolved = records["wrong", one["instance_id"]]["swebench"]
        assert (unresolved["resolved"], unresolved["resolution"]) == (False, "RESOLVED_NO")
        assert unresolved["f2p_failure"] == ["tests/test_numbers.py::test_clamp_rejects_inverted_bounds"]
        for model in ("fixer", "wrong"):
            skipped = records[model, two["instance_id"]]
            assert skipped["status"] == "unsupported_environment" and missing in skipped["error"]
        _interrupted_run_leaves_nothing(tmp_path, one, client)
    finally:
        client.images.remove(image, force=True)
        client.close()


def _interrupted_run_leaves_nothing(tmp_path: Path, row: dict[str, str], client: Any) -> None:
    """A run killed while its test phase runs (on the commit of its install phase) leaves that
    image behind; the next run's executor removes it (gold's install is cached by the run before)."""
    folder = tmp_path / "interrupted"
    folder.mkdir()
    dataset = write_jsonl(folder / "row.jsonl", [row])
    sleepy = _append_to_init("import time\n\ntime.sleep(600)\n")  # the tests import pycalc
    predictions = write_jsonl(
        folder / "sleep.jsonl",
        [{"instance_id": row["instance_id"], "model_name_or_path": "sleep", "model_patch": sleepy}],
    )
    args = [
        sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--tebench-benchmark=swebench",
        f"--tebench-dataset={dataset}", f"--tebench-predictions={predictions}",
        f"--tebench-cache-dir={tmp_path / 'cache'}", "--tebench-swebench-images=official",
    ]  # fmt: skip
    run = subprocess.Popen(
        args, cwd=folder, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    mine = f"{LABEL_PID}={run.pid}"

    def committed() -> list[dict[str, Any]]:
        return list(client.api.images(name=official_images.PHASE_REPOSITORY, filters={"label": mine}))

    try:
        deadline = time.monotonic() + 600
        while not committed():
            assert run.poll() is None, "the run ended before its test phase started"
            assert time.monotonic() < deadline, "no install phase was committed"
            time.sleep(1)
    finally:
        os.killpg(run.pid, signal.SIGKILL)  # no finally in the run: the install phase's image stays
        run.wait()
    [left] = committed()
    assert left["Labels"][LABEL_TRANSIENT] == "1"
    create_executor(ExecutorOptions(name="docker")).close()
    assert committed() == []
    assert client.containers.list(all=True, filters={"label": mine}) == []
