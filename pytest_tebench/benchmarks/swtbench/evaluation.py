"""Run one SWT-bench configuration: a tree at ``base_commit`` with some tests and maybe the gold fix,
its tests under coverage.py in the instance's SWE-bench environment.

SWT-bench (``run_evaluation.run_instance``) runs six configurations per prediction:

============  =======================  ===================  =============================
run           tests applied            code                 test files run
============  =======================  ===================  =============================
pred_pre      the prediction           original             the prediction's
pred_post     the prediction           with the gold fix    the prediction's
gold_pre      the row's ``test_patch`` original             ``test_patch``'s
gold_post     the row's ``test_patch`` with the gold fix    ``test_patch``'s
base_pre      none (existing tests)    original             the prediction's
base_post     none (existing tests)    with the gold fix    the prediction's
============  =======================  ===================  =============================

The test files are SWE-bench's test directives of the patch (``get_test_directives``); coverage
is measured on the files the gold fix changes. The prediction is applied with SWE-bench's chain
(``git apply``, ``--reject``, ``patch --fuzz=5``), the gold patches with ``git apply -v``, as
SWT-bench applies them. The prediction only touches test files and the gold fix none
(:mod:`.integrity`; runner files are refused on the applied tree before anything runs), so the
order they are applied in does not matter; the prediction goes first, since the apply chain
resets the tree between attempts. Each run's test command is SWE-bench's, guarded: the guard
plugin's record, tagged with a nonce per run, is judged by :func:`.integrity.judge`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import Any

from pytest_tebench.benchmarks.swebench import evaluation as swebench_evaluation
from pytest_tebench.benchmarks.swebench import official
from pytest_tebench.benchmarks.swebench.environment import EnvironmentPlan
from pytest_tebench.benchmarks.swebench.instances import SwebenchInstance
from pytest_tebench.benchmarks.swtbench import linecov
from pytest_tebench.errors import HarnessError
from pytest_tebench.integrity import evidence
from pytest_tebench.integrity import paths
from pytest_tebench.run.executor import Executor
from pytest_tebench.workspace.checkout import Workspace
from pytest_tebench.workspace.gitcmd import git
from pytest_tebench.workspace.patches import parse_patch

RUNS = ("pred_pre", "pred_post", "gold_pre", "gold_post", "base_pre", "base_post")


class RunTimedOut(HarnessError):
    """A configuration's tests ran past the time limit: not scored."""

    status = "timeout"


@dataclass(frozen=True)
class RunSpec:
    name: str
    #: The prediction's patch (applied with SWE-bench's chain), or "".
    model_patch: str
    #: Patches applied with ``git apply -v``: the gold test patch and/or the gold fix.
    gold_patches: tuple[str, ...]
    directives: tuple[str, ...]


@dataclass
class RunOutcome:
    name: str
    #: False when the prediction's patch does not apply (only pred runs can say so).
    applied: bool
    apply_method: str | None = None
    apply_log: str = ""
    status_map: dict[str, str] = field(default_factory=dict)
    counts: linecov.LineCounts = field(default_factory=dict)
    seconds: float = 0.0
    #: Runner files the applied prediction changes (:func:`paths.refusals`, test content allowed):
    #: when any, nothing ran.
    refusals: list[paths.Refusal] = field(default_factory=list)
    #: Whether the test command took the guard plugin (it is pytest), and the guard records that
    #: carry this run's nonce (:func:`evidence.records`).
    guarded: bool = False
    guard_records: list[dict[str, Any]] = field(default_factory=list)


@dataclass(frozen=True)
class Setting:
    """What every run of one item shares."""

    instance: SwebenchInstance
    source: Path
    plan: EnvironmentPlan
    image: str
    executor: Executor
    coverage_dir: Path
    work_dir: Path
    scratch: Path
    timeout: float
    network: bool
    keep_workspaces: bool = False


def coverage_files(code_patch: str) -> list[str]:
    """The files SWT-bench traces: every path the gold fix names (``extract_changed_files``)."""
    return sorted({path for piece in parse_patch(code_patch) for path in piece.paths})


def specs(instance: SwebenchInstance, model_patch: str) -> dict[str, RunSpec]:
    """The six configurations of one prediction."""
    model_files = tuple(official.test_directives(instance.repo, model_patch))
    gold_files = tuple(official.test_directives(instance.repo, instance.test_patch))
    fix, tests = instance.patch, instance.test_patch
    return {
        "pred_pre": RunSpec("pred_pre", model_patch, (), model_files),
        "pred_post": RunSpec("pred_post", model_patch, (fix,), model_files),
        "gold_pre": RunSpec("gold_pre", "", (tests,), gold_files),
        "gold_post": RunSpec("gold_post", "", (tests, fix), gold_files),
        "base_pre": RunSpec("base_pre", "", (), model_files),
        "base_post": RunSpec("base_post", "", (fix,), model_files),
    }


def run(setting: Setting, spec: RunSpec) -> RunOutcome:
    """Prepare the tree of ``spec`` and run its tests under coverage; parse the log."""
    instance = setting.instance
    workspace = Workspace.create(setting.source, instance.base_commit, "", parent=setting.work_dir)
    started = time.perf_counter()
    try:
        outcome = RunOutcome(spec.name, applied=True)
        if spec.model_patch:
            applied = swebench_evaluation.apply_model_patch(workspace.path, spec.model_patch)
            outcome.apply_method, outcome.apply_log = applied.method, applied.log
            if applied.method is None:
                outcome.applied = False
                return outcome
            # a test patch may carry conftest.py (test content), never what starts or configures
            # the runner: decided on the applied tree (ignored files too), before anything runs
            outcome.refusals = swebench_evaluation.refused_changes(
                workspace.path, instance, setting.plan.test_cmd, test_content=True
            )
            if outcome.refusals:
                return outcome
        for patch in spec.gold_patches:
            applying = git(workspace.path, "apply", "-v", "-", input=patch.encode("utf-8"), check=False)
            if applying.returncode != 0:
                raise swebench_evaluation.TestPatchDoesNotApply(
                    f"{spec.name}: a gold patch of {instance.instance_id} does not apply: "
                    + applying.stderr.decode(errors="replace").strip()
                )
        measured = coverage_files(instance.patch)
        # read before the tests run: the prediction's code could rewrite them while it runs
        sources = {name: _text(workspace.path / name) for name in measured}
        outcome.guarded = swebench_evaluation.guarded_command(setting.plan.test_cmd, setting.plan.repo)[1]
        script = swebench_evaluation.eval_script(
            setting.plan,
            list(spec.directives),
            guard=outcome.guarded,
            wrap=lambda command: linecov.wrap_command(command, measured),
            after=linecov.report_commands(),
        )
        nonce = evidence.new_nonce() if outcome.guarded else ""
        result, log = swebench_evaluation.run_tests(
            setting.executor,
            workspace.path,
            setting.image,
            script,
            timeout=setting.timeout,
            scratch=setting.scratch,
            network=setting.network,
            nonce=nonce,
            tools=((linecov.TOOL, str(setting.coverage_dir)),),
        )
        if nonce:
            outcome.guard_records = evidence.records(log, nonce)
        outcome.counts = linecov.with_statement_lines(linecov.read_counts(workspace.path), sources)
        outcome.seconds = time.perf_counter() - started
        if result.timed_out:
            raise RunTimedOut(f"{spec.name}: the tests ran past {setting.timeout:g} s; not scored")
        if official.START_TEST_OUTPUT not in log:
            raise HarnessError(
                f"{spec.name}: the test container failed (exit {result.exit_code}):\n{result.output[-3000:]}"
            )
        outcome.status_map = status_map(instance, evidence.strip_records(log, nonce))
        if setting.keep_workspaces:
            (workspace.path / swebench_evaluation.LOG_NAME).write_text(log, encoding="utf-8")
        return outcome
    finally:
        if not setting.keep_workspaces:
            workspace.remove()


def _text(path: Path) -> str:
    if path.is_symlink() or not path.is_file():
        return ""
    return path.read_text(encoding="utf-8", errors="replace")


def status_map(instance: SwebenchInstance, log: str) -> dict[str, str]:
    """Test -> status of one log, by SWE-bench's parser of the repository (SWT-bench's ``get_logs_eval``)."""
    grade = swebench_evaluation.grade_log(instance, log)
    return dict(grade.status_map) if grade.log_found else {}
