"""What a SWE-bench run reports when environments fail: missing predictions, the headline figure,
and failed image builds remembered for the run and the next one."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

# imported before the in-process pytester run below, which forgets what it imported (numpy cannot
# be imported twice in one process)
from swebench.harness.reporting import make_run_report

from pytest_tebench.benchmarks.swebench import build_failures
from pytest_tebench.benchmarks.swebench import environment
from pytest_tebench.benchmarks.swebench import summary
from pytest_tebench.errors import HarnessError

SHA = "22623bd8c265b78b161542663ee980738441c307"


def _row(instance_id: str, repo: str, version: str) -> dict[str, Any]:
    return {
        "instance_id": instance_id,
        "repo": repo,
        "version": version,
        "base_commit": SHA,
        "environment_setup_commit": SHA,
        "patch": "diff --git a/x b/x\n",
        "test_patch": "diff --git a/t.py b/t.py\n",
        "FAIL_TO_PASS": ["t.py::test_new"],
        "PASS_TO_PASS": [],
    }


def test_missing_and_empty_predictions_are_unresolved_whatever_the_environment(
    pytester: pytest.Pytester, tmp_path: Path
) -> None:
    # four instances: pydicom 1.2 needs Python 3.6 (unsupported here), and the pytest ones'
    # repository exists nowhere (--tebench-offline, no --tebench-repos): preparing any of them fails
    rows = [
        _row("pydicom__pydicom-1", "pydicom/pydicom", "1.2"),
        _row("pydicom__pydicom-2", "pydicom/pydicom", "1.2"),
        _row("pytest-dev__pytest-1", "pytest-dev/pytest", "5.4"),
        _row("pytest-dev__pytest-2", "pytest-dev/pytest", "5.4"),
    ]
    dataset = tmp_path / "rows.jsonl"
    dataset.write_text("".join(json.dumps(r) + "\n" for r in rows))
    predictions = tmp_path / "preds.jsonl"
    lines = [
        {"instance_id": "pydicom__pydicom-1", "model_name_or_path": "m", "model_patch": ""},
        {
            "instance_id": "pytest-dev__pytest-1",
            "model_name_or_path": "m",
            "model_patch": "diff --git a/x b/x\n",
        },
    ]
    predictions.write_text("".join(json.dumps(line) + "\n" for line in lines))
    report, run, junit = tmp_path / "report.json", tmp_path / "run.json", tmp_path / "junit.xml"
    result = pytester.runpytest(
        "-p",
        "no:cacheprovider",
        f"--tebench-predictions={predictions}",
        "--tebench-benchmark=swebench",
        f"--tebench-dataset={dataset}",
        f"--tebench-cache-dir={tmp_path / 'cache'}",
        "--tebench-offline",
        f"--tebench-report={report}",
        f"--tebench-swebench-report={run}",
        f"--junitxml={junit}",
    )
    # the empty one (unsupported environment) and the two missing ones are unresolved: failed, never
    # an error or a skip; only the real patch of pytest-1 meets the missing repository (an error)
    result.assert_outcomes(failed=3, errors=1)
    records = {r["instance_id"]: r for r in json.loads(report.read_text())["results"]}
    assert {i: r["status"] for i, r in records.items()} == {
        "pydicom__pydicom-1": "empty",
        "pydicom__pydicom-2": "missing_prediction",
        "pytest-dev__pytest-1": "error",
        "pytest-dev__pytest-2": "missing_prediction",
    }
    block = json.loads(report.read_text())["summary"]["m"]
    assert (block["items"], block["judged"], block["resolved"]) == (4, 3, 0)
    assert (block["empty"], block["missing_prediction"], block["not_judged"]) == (1, 2, {"error": 1})
    assert (block["resolved_rate"], block["resolved_rate_judged"]) == (0.0, 0.0)
    result.stdout.fnmatch_lines(
        [
            "model: m  resolved 0/4 = 0.0% of all instances (SWE-bench's figure); 0/3 = 0.0% of the judged",
            "  not judged: 1 (error 1); judged: empty 1, missing 2, not applied 0, refused 0, tampered 0",
        ]
    )
    official = json.loads(run.read_text())
    # as SWE-bench's make_run_report: submitted = with a prediction, the others incomplete
    assert official["total_instances"] == 4 and official["submitted_instances"] == 2
    assert official["incomplete_ids"] == ["pydicom__pydicom-2", "pytest-dev__pytest-2"]
    assert official["empty_patch_ids"] == ["pydicom__pydicom-1"]
    assert official["error_ids"] == ["pytest-dev__pytest-1"]
    xml = junit.read_text()
    assert '<property name="tebench.swebench.m.resolved_rate" value="0.0"' in xml
    assert '<property name="tebench.swebench.m.items" value="4"' in xml
    assert '<property name="tebench.swebench.m.not_judged" value="error=1"' in xml


def _failing_context(context: Path) -> None:
    # a build that fails at once, offline: nothing to run a shell in
    (context / "Dockerfile").write_text("FROM scratch\nRUN false\n")


@pytest.mark.docker
def test_a_failed_build_is_tried_once_per_run_and_not_again_until_retried(tmp_path: Path) -> None:
    from pytest_tebench.run import docker_image

    client = docker_image.connect()
    tag = "pytest-tebench/test-failing-build:" + tmp_path.name.lower()[-12:].replace("_", "")
    builds: list[str] = []

    def build(failures: build_failures.BuildFailures) -> str:
        return environment._build_once(
            client, tag, _failing_context, "(a test)", lock_dir=tmp_path / "locks",
            progress=builds.append, failures=failures,
        )  # fmt: skip

    root = tmp_path / "cache" / build_failures.FOLDER
    worker_a = build_failures.BuildFailures(root, "run-1")
    with pytest.raises(HarnessError, match="failed to build") as first:
        build(worker_a)
    assert not isinstance(first.value, build_failures.EarlierBuildFailed)
    attempts = sum(line.startswith("[swebench env] building") for line in builds)
    assert attempts == 1
    # another worker of the same run (the same run id, the same cache folder): not built again
    worker_b = build_failures.BuildFailures(root, "run-1")
    with pytest.raises(build_failures.EarlierBuildFailed, match="earlier in this run; not built again"):
        build(worker_b)
    # the next run: not built again either, and told when it failed and how to retry
    with pytest.raises(build_failures.EarlierBuildFailed, match=r"failed to build on 20\d\d-.*retry-builds"):
        build(build_failures.BuildFailures(root, "run-2"))
    assert sum(line.startswith("[swebench env] building") for line in builds) == 1
    # --tebench-rerun builds it again, once
    with pytest.raises(HarnessError) as again:
        build(build_failures.BuildFailures(root, "run-3", retry=True))
    assert not isinstance(again.value, build_failures.EarlierBuildFailed)
    with pytest.raises(build_failures.EarlierBuildFailed, match="earlier in this run"):
        build(build_failures.BuildFailures(root, "run-3", retry=True))
    assert sum(line.startswith("[swebench env] building") for line in builds) == 2
    # `tebench cache retry-builds` forgets it
    cli = [
        sys.executable,
        "-m",
        "pytest_tebench.cli",
        "cache",
        "retry-builds",
        "--cache-dir",
        str(root.parent),
    ]
    done = subprocess.run(cli, capture_output=True, text=True, check=True)
    assert "forgot 1 failed image build(s)" in done.stdout
    with pytest.raises(HarnessError) as retried:
        build(build_failures.BuildFailures(root, "run-4"))
    assert not isinstance(retried.value, build_failures.EarlierBuildFailed)
    assert sum(line.startswith("[swebench env] building") for line in builds) == 3


def test_the_headline_and_run_report_equal_swebench_make_run_report_for_the_same_predictions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # one record per status this harness gives; SWE-bench writes a report.json only for graded ones
    statuses = {
        "a": ("evaluated", True),
        "b": ("evaluated", False),
        "c": ("empty", False),
        "d": ("not_applied", False),
        "e": ("timeout", False),
        "f": ("error", False),
        "g": ("unsupported_environment", False),
        "h": ("missing_prediction", False),
        "i": ("invalid_instance", False),
    }
    records = [
        {
            "instance_id": i,
            "model_name_or_path": "m",
            "project": "o/r",
            "status": s,
            "swebench": {"resolved": ok},
        }
        for i, (s, ok) in statuses.items()
    ]
    monkeypatch.chdir(tmp_path)
    predictions = {
        i: {"instance_id": i, "model_name_or_path": "m", "model_patch": "" if s == "empty" else "diff"}
        for i, (s, _) in statuses.items()
        if s != "missing_prediction"
    }
    for i, (status, resolved) in statuses.items():
        if status == "evaluated":
            folder = tmp_path / "logs" / "run_evaluation" / "r1" / "m" / i
            folder.mkdir(parents=True)
            (folder / "report.json").write_text(json.dumps({i: {"resolved": resolved}}))
    official = json.loads(
        Path(make_run_report(predictions, [{"instance_id": i} for i in statuses], "r1")).read_text()
    )
    ours = summary.run_report(records, "m")
    # every field but the Docker bookkeeping of theirs (containers, images left) and our own extra
    docker_fields = {"unremoved_images", "unstopped_containers", "unstopped_instances"}
    ours_only = {"unsupported_environment_ids", "refused_ids", "tampered_ids"}
    assert {k: v for k, v in ours.items() if k not in ours_only} == {
        k: v for k, v in official.items() if k not in docker_fields
    }
    block = summary.summarise(records)["m"]
    assert block["resolved_rate"] == official["resolved_instances"] / official["total_instances"] == 1 / 9
