"""Runner scripts that are not pytest, and tox, for real in Docker (build mode): the projects of
:mod:`runner_projects` (a django-like ``tests/runtests.py`` over unittest, a sympy-like ``bin/test``
with a runner of its own, a sphinx-like ``tox --current-env`` running pytest), each with its gold fix and a hostile prediction that fixes nothing but
makes the log say the new test passed. SWE-bench's own grading of the hostile logs resolves them;
the launcher's guard makes them ``tampered``, and gold still resolves."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import runner_projects as rp

pytest.importorskip("swebench")
pytestmark = pytest.mark.docker

#: One route per project: unittest's result patched; the runner's reporter patched; a report hook
#: registered from the package under test (tox).
MODELS = {"unitcalc": "result-patch", "symcalc": "reporter-patch", "toxcalc": "gc-hook"}
#: The runner scripts, and tox running pytest (sphinx's command), in one run.
GUARDED = (*rp.PROJECTS, rp.TOXCALC)


def test_runner_scripts_are_guarded_gold_resolves_and_hostile_predictions_are_tampered(
    pytester: pytest.Pytester, tmp_path: Path
) -> None:
    repos, rows, lines = tmp_path / "repos", [], []
    for project in GUARDED:
        rp.register(project)
        row = rp.mirror(project, repos, tmp_path / "work" / project.name)
        rows.append(row)
        model = MODELS[project.name]
        patch = rp.hostile_patch(project, model, tmp_path / "work" / project.name)
        lines += [(project.instance_id, "gold-copy", row["patch"]), (project.instance_id, model, patch)]
    dataset = pytester.path / "rows.jsonl"
    dataset.write_text("".join(json.dumps(row) + "\n" for row in rows))
    predictions = pytester.path / "predictions.jsonl"
    predictions.write_text(
        "".join(
            json.dumps({"instance_id": i, "model_name_or_path": m, "model_patch": p}) + "\n"
            for i, m, p in lines
        )
    )
    result = pytester.runpytest(
        "-p",
        "no:cacheprovider",
        "--tebench-benchmark=swebench",
        f"--tebench-dataset={dataset}",
        f"--tebench-predictions={predictions}",
        f"--tebench-repos={repos}",
        "--tebench-offline",
        "--tebench-skip-missing",
        f"--tebench-cache-dir={tmp_path / 'cache'}",
        "--tebench-timeout-test=300",
        f"--tebench-report={tmp_path / 'report.json'}",
    )
    result.assert_outcomes(passed=3, failed=3)
    records = {
        (r["instance_id"], r["model_name_or_path"]): r
        for r in json.loads((tmp_path / "report.json").read_text())["results"]
    }
    for project in GUARDED:
        gold = records[project.instance_id, "gold-copy"]
        assert (gold["status"], gold["swebench"]["resolved"]) == ("evaluated", True), gold.get("error")
        assert gold["guard"] == {"active": True, "records": 1, "baseline": "gold run", "findings": []}
        hostile = records[project.instance_id, MODELS[project.name]]
        # SWE-bench's own grading of the log alone resolves the hostile prediction
        assert hostile["swebench"]["resolution"] == "RESOLVED_FULL"
        assert (hostile["status"], hostile["swebench"]["resolved"]) == ("tampered", False)
        rules = {(f["rule"], f["detail"].split(" rebound")[0]) for f in hostile["guard"]["findings"]}
        [f2p], _ = project.names((3, 9))
        if project is rp.UNITCALC:
            assert ("changed", "unittest.runner:TextTestResult.addFailure") in rules
            assert ("unconfirmed", f"{f2p}: the log says PASSED, the runner saw failed") in rules
        elif project is rp.TOXCALC:
            # tox handed pytest the guard: the hook registered from the package is seen
            hook = "pytest_runtest_makereport implemented by toxcalc._Pass.pytest_runtest_makereport"
            assert any(
                rule == "hook" and detail.startswith(f"{hook} (/workspace/toxcalc/") for rule, detail in rules
            )
            assert ("unconfirmed", f"{f2p}: the log says PASSED, the runner saw failed") in rules
        else:
            assert rules == {("changed", "symcalc.testing.runtests:PyTestReporter.test_fail")}


def test_an_official_image_runs_a_runner_script_under_the_launcher(
    pytester: pytest.Pytester, tmp_path: Path
) -> None:
    """``--tebench-swebench-images=official`` on symcalc: an image in the official layout (made
    here as test_swebench_official_docker.py makes pycalc's), gold and the reporter patch."""
    from test_swebench_official_docker import _official_layout_image

    from pytest_tebench.benchmarks.base import EvalContext
    from pytest_tebench.benchmarks.swebench.adapter import SwebenchAdapter
    from pytest_tebench.instance.datasets import RawRecord
    from pytest_tebench.run import docker_image
    from pytest_tebench.workspace.repos import RepositoryStore

    project, model = rp.SYMCALC, MODELS["symcalc"]
    rp.register(project)
    repos = tmp_path / "repos"
    row = rp.mirror(project, repos, tmp_path / "work")
    adapter = SwebenchAdapter(timeout=300, images="build")
    [instance] = adapter.load_instances([RawRecord(row, "rows.jsonl:1")])
    context = EvalContext(
        cache_dir=tmp_path / "cache",
        work_dir=tmp_path / "workspaces",
        repos=RepositoryStore(tmp_path / "cache", local_dirs=(repos,), allow_network=False, embedded={}),
    )
    image = _official_layout_image(
        tmp_path, row, repos / project.repo, adapter.prepare(instance, context).image
    )
    try:
        dataset = pytester.path / "rows.jsonl"
        dataset.write_text(json.dumps(row) + "\n")
        predictions = pytester.path / "preds.jsonl"
        hostile = rp.hostile_patch(project, model, tmp_path / "work")
        predictions.write_text(
            "".join(
                json.dumps({"instance_id": project.instance_id, "model_name_or_path": m, "model_patch": p})
                + "\n"
                for m, p in [("gold-copy", row["patch"]), (model, hostile)]
            )
        )
        report = tmp_path / "report.json"
        result = pytester.runpytest(
            "-p", "no:cacheprovider", "--tebench-benchmark=swebench", f"--tebench-dataset={dataset}",
            f"--tebench-predictions={predictions}", f"--tebench-cache-dir={tmp_path / 'cache'}",
            "--tebench-swebench-images=official", f"--tebench-report={report}",
        )  # fmt: skip
        result.assert_outcomes(passed=1, failed=1)
        records = {r["model_name_or_path"]: r for r in json.loads(report.read_text())["results"]}
        gold = records["gold-copy"]
        assert (gold["swebench"]["environment"], gold["swebench"]["image"]) == ("official", image)
        assert (gold["status"], gold["swebench"]["resolved"]) == ("evaluated", True)
        # the official re-install ran too and changed what gold's own install changes, nothing more
        install = gold["guard"].pop("install")
        assert install["baseline"] == "gold's install" and install["changes"] > 0
        assert gold["guard"] == {"active": True, "records": 1, "baseline": "gold run", "findings": []}
        tampered = records[model]
        assert tampered["swebench"]["resolution"] == "RESOLVED_FULL"
        assert (tampered["status"], tampered["swebench"]["resolved"]) == ("tampered", False)
        assert [f["detail"].split(" rebound")[0] for f in tampered["guard"]["findings"]] == [
            "symcalc.testing.runtests:PyTestReporter.test_fail"
        ]
    finally:
        client = docker_image.connect()
        try:
            client.images.remove(image, force=True)
        finally:
            client.close()
