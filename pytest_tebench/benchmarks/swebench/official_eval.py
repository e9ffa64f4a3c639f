"""Evaluation in SWE-bench's official per-instance images (``--tebench-swebench-images``).

Where an instance runs (:func:`decide`: built here, its official image, or unsupported), the
image made sure of (:meth:`OfficialImages.prepare`), one patch run through the official harness's
steps in it (:meth:`OfficialImages.run`: runner files refused, applied, test-side changes set
aside, installed and the install judged against gold's, then tested under the guard where the
image can load it) and the record of a run that did not reach the tests (:func:`unjudged_record`).
The images themselves and the eval script are :mod:`.official_images`'.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_tebench.benchmarks.base import EvalContext
from pytest_tebench.benchmarks.swebench import baselines
from pytest_tebench.benchmarks.swebench import evaluation
from pytest_tebench.benchmarks.swebench import official
from pytest_tebench.benchmarks.swebench import official_images
from pytest_tebench.benchmarks.swebench import official_refusal
from pytest_tebench.benchmarks.swebench import set_aside
from pytest_tebench.benchmarks.swebench.instances import SwebenchInstance
from pytest_tebench.benchmarks.swebench.multilingual import where
from pytest_tebench.benchmarks.swebench.multilingual.rows import MultilingualInstance
from pytest_tebench.benchmarks.swebench.patch_run import PatchRun
from pytest_tebench.benchmarks.swebench.records import guarded_record
from pytest_tebench.benchmarks.swebench.records import refused_record
from pytest_tebench.benchmarks.swebench.records import register_demo
from pytest_tebench.errors import HarnessError
from pytest_tebench.errors import UnsupportedEnvironment
from pytest_tebench.integrity import evidence
from pytest_tebench.integrity import installed
from pytest_tebench.integrity import paths
from pytest_tebench.run.executor import Executor


@dataclass
class OfficialPrepared:
    """An instance that runs in its official image (``--tebench-swebench-images``)."""

    image: str
    timings: dict[str, float]
    #: Why it is not built here (None in ``official`` mode for an instance that would build).
    reason: str | None
    python: str


def decide(payload: SwebenchInstance, images: str) -> official_images.Decision:
    """Where ``payload`` runs in ``images`` mode (``build``, ``official`` or ``auto``)."""
    if isinstance(payload, MultilingualInstance):
        return where.decide(payload.repo, payload.language, images)
    register_demo()
    spec = official.specs(payload.repo, payload.version)
    return official_images.decide(payload.repo, payload.version, spec, images)


class OfficialImages:
    """The official-image steps of one adapter: its Docker executor (``executor``, made on first
    use), the tests' ``timeout`` and ``network``, and which images the guard can run in."""

    def __init__(
        self, executor: Callable[[EvalContext], Executor], *, timeout: float, network: bool, version: int
    ) -> None:
        self.executor = executor
        self.timeout = timeout
        self.network = network
        #: Part of the key of gold's stored install (the adapter's ``OFFICIAL_VERSION``).
        self.version = version
        #: Per official image: why the guard cannot run there (None: it can), probed once.
        self._probes: dict[tuple[str, str], str | None] = {}

    def prepare(
        self,
        payload: SwebenchInstance,
        spec: Mapping[str, Any],
        reason: str | None,
        context: EvalContext,
        started: float,
    ) -> OfficialPrepared:
        image = official_images.image_name(payload.instance_id)
        try:
            client = getattr(self.executor(context), "client", None)
            if client is None:
                raise HarnessError("the SWE-bench benchmark needs a Docker executor")
            missing = official_images.missing_reason(client, image)
        except HarnessError as exc:
            # no engine, no image to be had: the same answer as an image no registry gives
            missing = f"the official image {image} cannot be had: {exc}"
        if missing is not None:
            # first why it is not built here (the more useful half), then why no image either
            raise UnsupportedEnvironment(missing if reason is None else f"{reason}; and {missing}")
        return OfficialPrepared(
            image, {"environment": time.perf_counter() - started}, reason, str(spec.get("python", ""))
        )

    def run(
        self,
        payload: SwebenchInstance,
        prepared: OfficialPrepared,
        patch: str,
        context: EvalContext,
        *,
        gold: bool = False,
    ) -> PatchRun:
        """``patch`` through the official steps in the instance's image: runner files refused
        first (read out of the image, nothing run: :mod:`.official_refusal`), then applied, its
        test-side changes set aside (:mod:`.set_aside`), installed, what the install changed judged
        against gold's install (``gold``: this is gold's, stored for the others), then tested under
        the guard where the image's environment can load it."""
        run = PatchRun()
        started = time.perf_counter()
        executor = self.executor(context)
        client = getattr(executor, "client", None)
        if client is None:
            raise HarnessError("official SWE-bench images need the Docker executor")
        test_cmd = str((official.specs(payload.repo, payload.version) or {}).get("test_cmd"))
        decision = official_refusal.decide(
            patch,
            official_refusal.image_reader(client, prepared.image),
            paths.policy_for(test_cmd, payload.repo),
            context.work_dir,
        )
        run.timings["refusal_check"] = evaluation.timed(started)
        if decision.refusals:
            names = [name for name, _ in evaluation.APPLY_METHODS]
            commands = official_images.apply_commands()
            # the official command of the same rank (the chains are SWE-bench's, in one order)
            run.apply_method = None if decision.method is None else commands[names.index(decision.method)]
            run.refusals = list(decision.refusals)
            return run
        chosen = set_aside.choose(decision.changes, payload)
        run.set_aside = [entry.path for entry in chosen]
        kind = evaluation.guard_kind(test_cmd)
        if kind:
            run.guard_reason = self._guard_probe(executor, prepared.image, context.work_dir, kind)
        run.guarded = bool(kind) and run.guard_reason is None
        run.nonce = evidence.new_nonce() if run.guarded else ""
        run.test_command = " ".join([test_cmd, *official.test_directives(payload.repo, payload.test_patch)])
        patched = official_refusal.touched_paths(patch)
        policy = paths.policy_for(test_cmd, payload.repo)
        store = baselines.install_store(context.cache_dir, payload.instance_id, prepared.image, self.version)

        def run_gold_install() -> official_images.OfficialRun:
            return official_images.run(
                self.executor(context),
                payload,
                prepared.image,
                payload.patch,
                timeout=self.timeout,
                scratch_parent=context.work_dir,
                network=self.network,
                tests=False,
            )

        def judge(changes: list[installed.Change]) -> list[evidence.Finding]:
            run.install = {"changes": len(changes)}
            if gold:
                baselines.store_install_baseline(store, changes)
                run.install["baseline"] = "self"
                return []
            baseline = baselines.install_baseline(
                store,
                context.cache_dir,
                run_gold_install,
                timed_out_error=f"gold's install of {payload.instance_id} ran past {self.timeout:g} s",
            )
            run.install["baseline"] = (
                "gold's install" if baseline is not None else baselines.NO_INSTALL_BASELINE
            )
            return installed.findings(
                changes, tree=official_images.TESTBED, patched=patched, policy=policy, baseline=baseline
            )

        started = time.perf_counter()
        ran = official_images.run(
            executor,
            payload,
            prepared.image,
            patch,
            timeout=self.timeout,
            scratch_parent=context.work_dir,
            network=self.network,
            guard=run.guarded,
            nonce=run.nonce,
            judge=judge,
            set_aside=set_aside.shell_lines(payload.base_commit, chosen),
        )
        run.timings["tests"] = evaluation.timed(started)
        run.apply_method, run.apply_log, run.log, run.result = ran.method, ran.apply_log, ran.log, ran.result
        run.install_findings = list(ran.install_findings)
        return run

    def _guard_probe(self, executor: Executor, image: str, scratch_parent: Path, kind: str) -> str | None:
        """Why the guard of ``kind`` cannot run in ``image`` (None: it can), asked once per image,
        kind and process."""
        if (image, kind) not in self._probes:
            self._probes[image, kind] = official_images.guard_probe(
                executor, image, scratch_parent=scratch_parent, kind=kind
            )
        return self._probes[image, kind]


def unjudged_record(
    record: dict[str, Any], block: dict[str, Any], run: PatchRun, *, timeout: float
) -> dict[str, Any] | None:
    """The record of an official run that did not reach the tests (refused, timed out, not
    applied, its install judged, no test output), or None when it did and is to be graded."""
    if run.refusals:
        record["apply_method"] = run.apply_method
        return refused_record(record, run.refusals)
    record["set_aside_files"] = run.set_aside
    block["test_command"] = run.test_command
    result = run.result
    if result is not None and result.timed_out:
        record["status"] = "timeout"
        record["error"] = f"the tests ran past {timeout:g} s (SWE-bench: Tests Timed Out); not scored"
        return record
    if run.apply_method is None:
        # no result: the patch was applied before any container (a Multilingual row built here)
        if result is not None and ">>> " not in run.apply_log:
            # not one apply command ran: the container itself failed, not the patch
            record["status"] = "error"
            output = result.output[-3000:]
            record["error"] = f"the official image's container failed (exit {result.exit_code}):\n{output}"
            return record
        record["status"] = "not_applied"
        record["error"] = f"the patch does not apply (SWE-bench: Patch Apply Failed)\n{run.apply_log[-3000:]}"
        return record
    record["apply_method"] = run.apply_method
    if run.install_findings:
        # the tests never ran on what this install left: a model's result, never a harness error
        guard = {"active": run.guarded, "install": run.install}
        guard["findings"] = [finding.as_record() for finding in run.install_findings]
        return guarded_record(record, block, guard)
    if official.START_TEST_OUTPUT not in run.log:
        record["status"] = "error"
        record["error"] = (
            f"the eval script did not reach the tests (exit {result.exit_code}):\n{run.log[-3000:]}"
        )
        return record
    return None
