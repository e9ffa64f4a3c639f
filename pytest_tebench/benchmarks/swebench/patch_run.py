"""One patch run through SWE-bench's steps in a built environment, under the guard.

A fresh clone at ``base_commit``, the patch applied (SWE-bench's chain of apply commands), runner
files refused, the prediction's test-side changes set aside (:mod:`.set_aside`), ``test_patch``
applied and the tests run in the environment's image with the in-process guard where the test
command can load it; :func:`unjudged_record` is the record of a run that did not reach the tests.
:class:`PatchRun` is also what a run in an official image gives (:mod:`.official_eval`): the
adapter grades both alike.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_tebench.benchmarks.swebench import environment
from pytest_tebench.benchmarks.swebench import evaluation
from pytest_tebench.benchmarks.swebench import official
from pytest_tebench.benchmarks.swebench import set_aside
from pytest_tebench.benchmarks.swebench.instances import SwebenchInstance
from pytest_tebench.benchmarks.swebench.records import refused_record
from pytest_tebench.integrity import evidence
from pytest_tebench.run.executor import Executor
from pytest_tebench.workspace.checkout import Workspace


@dataclass
class PatchRun:
    """One patch run through the SWE-bench steps (:func:`run_patch`, or an official image's)."""

    apply_method: str | None = None
    apply_log: str = ""
    refusals: list[Any] = dataclasses.field(default_factory=list)
    #: The prediction's test-side changes undone before the tests (:mod:`.set_aside`).
    set_aside: list[str] = dataclasses.field(default_factory=list)
    test_command: str = ""
    guarded: bool = False
    nonce: str = ""
    result: Any = None
    log: str = ""
    workspace: Path | None = None
    timings: dict[str, float] = dataclasses.field(default_factory=dict)
    #: Why the guard is not loaded although the command is pytest (official images), or None.
    guard_reason: str | None = None
    #: Official images: what the install phase changed, judged against gold's install.
    install: dict[str, Any] = dataclasses.field(default_factory=dict)
    install_findings: list[evidence.Finding] = dataclasses.field(default_factory=list)


def run_patch(
    executor: Executor,
    payload: SwebenchInstance,
    patch: str,
    *,
    source: Path,
    plan: environment.EnvironmentPlan,
    image: str,
    work_dir: Path,
    scratch: Path,
    timeout: float,
    network: bool,
    keep: bool = False,
) -> PatchRun:
    """Apply ``patch`` to a fresh clone of ``source``, refuse runner files, set its test-side
    changes aside (:mod:`.set_aside`), apply test_patch and run the tests in ``image`` under the
    guard (the model's prediction, or gold's for a baseline). ``keep``: the workspace and its log
    stay for a look afterwards."""
    started = time.perf_counter()
    workspace = Workspace.create(source, payload.base_commit, "", parent=work_dir)
    run = PatchRun()
    try:
        applied = evaluation.apply_model_patch(workspace.path, patch)
        run.timings["apply"] = evaluation.timed(started)
        run.apply_method, run.apply_log = applied.method, applied.log
        if applied.method is None:
            return run
        # the tree's changes, listed once for both decisions (git status and a read per file)
        changes = evaluation.changed_files(workspace.path, payload.base_commit)
        run.refusals = evaluation.refused_changes(workspace.path, payload, plan.test_cmd, changes=changes)
        if run.refusals:
            return run
        run.set_aside = set_aside.set_aside(workspace.path, payload, changes)
        evaluation.apply_test_patch(workspace.path, payload)
        directives = official.test_directives(payload.repo, payload.test_patch)
        run.test_command = " ".join([plan.test_cmd, *directives])
        run.guarded = evaluation.guarded_command(plan.test_cmd, payload.repo)[1]
        run.nonce = evidence.new_nonce()
        started = time.perf_counter()
        run.result, run.log = evaluation.run_tests(
            executor,
            workspace.path,
            image,
            evaluation.eval_script(plan, directives, guard=run.guarded),
            timeout=timeout,
            network=network,
            scratch=scratch,
            nonce=run.nonce,
        )
        run.timings["tests"] = evaluation.timed(started)
        if keep:
            run.workspace = workspace.path
            (workspace.path / evaluation.LOG_NAME).write_text(run.log, encoding="utf-8")
    finally:
        if run.workspace is None:
            workspace.remove()
    return run


def unjudged_record(
    record: dict[str, Any], block: dict[str, Any], run: PatchRun, *, timeout: float
) -> dict[str, Any] | None:
    """The record of a built run that did not reach the tests (not applied, refused, timed out, no
    test output), or None when it did and is to be graded."""
    if run.apply_method is None:
        record["status"] = "not_applied"
        record["error"] = f"the patch does not apply (SWE-bench: Patch Apply Failed)\n{run.apply_log}"
        return record
    record["apply_method"] = run.apply_method
    if run.refusals:
        return refused_record(record, run.refusals)
    record["set_aside_files"] = run.set_aside
    block["test_command"] = run.test_command
    if run.result is not None and run.result.timed_out:
        record["status"] = "timeout"
        record["error"] = f"the tests ran past {timeout:g} s (SWE-bench: Tests Timed Out); not scored"
        return record
    if official.START_TEST_OUTPUT not in run.log:
        exit_code = run.result.exit_code if run.result is not None else None
        output = run.result.output[-3000:] if run.result is not None else ""
        record["status"] = "error"
        record["error"] = f"the test container failed (exit {exit_code}):\n{output}"
        return record
    return None
