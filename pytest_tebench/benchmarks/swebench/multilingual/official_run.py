"""A Multilingual row in its official image: the row's own ``eval_script``, as SWE-bench runs it.

The image (the row's ``image``, ``swebench/sweb.eval.x86_64.<id>:latest``) holds the repository
at ``/testbed`` at ``base_commit`` with its toolchain. One container of it (the Docker executor's
sandbox, as root, no network unless ``--tebench-swebench-network``, the run's memory, CPU, process
and time limits; removed afterwards) applies the prediction with SWE-bench's ``GIT_APPLY_CMDS`` in
order, then runs the row's ``eval_script`` (reset the test files, apply ``test_patch``, build where
the script builds, the test command between the output markers) with its whole output as the log,
graded by the row's ``log_parser`` and ``eval_type`` (:mod:`.grading`'s functions).

Before anything runs, the prediction's hunks on the row's test files and the language's runner
files are refused (:mod:`.runner_files`). No in-process guard exists for these runners: the
prediction's code is compiled into, or loaded by, the process that prints the verdict (the record's
``guard`` says so; docs/threat-model.md says what that leaves open).

Build mode is a hook (:data:`.where.BUILDERS`): a registered builder prepares its repository's rows'
environments and runs the eval script there (:mod:`.built`: the Java Maven rows); the refusals
before, the record and the grading after are the same.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_tebench.benchmarks.base import BenchmarkInstance
from pytest_tebench.benchmarks.base import EvalContext
from pytest_tebench.benchmarks.swebench import evaluation
from pytest_tebench.benchmarks.swebench import official
from pytest_tebench.benchmarks.swebench import official_images
from pytest_tebench.benchmarks.swebench import official_refusal
from pytest_tebench.benchmarks.swebench.multilingual import runner_files
from pytest_tebench.benchmarks.swebench.multilingual import where
from pytest_tebench.benchmarks.swebench.multilingual.rows import MultilingualInstance
from pytest_tebench.benchmarks.swebench.official_eval import unjudged_record
from pytest_tebench.benchmarks.swebench.patch_run import PatchRun
from pytest_tebench.benchmarks.swebench.records import refused_record
from pytest_tebench.errors import HarnessError
from pytest_tebench.errors import UnsupportedEnvironment
from pytest_tebench.instance.predictions import Prediction
from pytest_tebench.integrity.paths import Refusal
from pytest_tebench.run.executor import BuildStep
from pytest_tebench.run.executor import Executor

#: Makes a run's record and its ``swebench`` block from the timings so far and the image.
Started = Callable[[dict[str, float], str], tuple[dict[str, Any], dict[str, Any]]]
#: Grades a run that reached the tests into its record (the adapter's, as for every SWE-bench run).
Graded = Callable[[dict[str, Any], PatchRun], dict[str, Any]]

#: Why no in-process guard watches a Multilingual row's tests (the record's ``guard.reason``).
NO_GUARD = (
    "no in-process guard for {language} runners: the prediction's code runs in the process that "
    "prints the verdict; its test and runner files are refused before the run"
)


@dataclass
class MultilingualPrepared:
    """A Multilingual row ready to run: in its official image, or built (``built`` is the
    registered builder's own prepared value)."""

    image: str
    timings: dict[str, float]
    #: Why it is not built here (None when built, or in ``official`` mode for a buildable row).
    reason: str | None
    language: str
    built: Any = None


def image_of(payload: MultilingualInstance) -> str:
    """The row's image, else the name SWE-bench gives its instance."""
    return payload.image or official_images.image_name(payload.instance_id)


class MultilingualRuns:
    """The Multilingual steps of one adapter: its Docker executor (made on first use), the tests'
    ``timeout`` and ``network``, and ``images`` (``build``, ``official`` or ``auto``)."""

    def __init__(
        self, executor: Callable[[EvalContext], Executor], *, timeout: float, network: bool, images: str
    ) -> None:
        self.executor = executor
        self.timeout = timeout
        self.network = network
        self.images = images

    def prepare(
        self, instance: BenchmarkInstance, context: EvalContext, started: float
    ) -> MultilingualPrepared:
        payload: MultilingualInstance = instance.payload
        decision = where.decide(payload.repo, payload.language, self.images)
        if decision.where == "unsupported":
            raise UnsupportedEnvironment(str(decision.reason))
        if decision.where == "build":
            built = where.BUILDERS[payload.repo].prepare(instance, context)
            return MultilingualPrepared(
                str(getattr(built, "image", "")),
                {"environment": time.perf_counter() - started},
                None,
                payload.language,
                built,
            )
        image = image_of(payload)
        client = getattr(self.executor(context), "client", None)
        try:
            if client is None:
                raise HarnessError("the SWE-bench benchmark needs a Docker executor")
            missing = official_images.missing_reason(client, image)
        except HarnessError as exc:
            missing = f"the official image {image} cannot be had: {exc}"
        if missing is not None:
            raise UnsupportedEnvironment(
                missing if decision.reason is None else f"{decision.reason}; and {missing}"
            )
        return MultilingualPrepared(
            image, {"environment": time.perf_counter() - started}, decision.reason, payload.language
        )

    def evaluate(
        self,
        instance: BenchmarkInstance,
        prepared: MultilingualPrepared,
        prediction: Prediction,
        context: EvalContext,
        *,
        started: Started,
        graded: Graded,
    ) -> dict[str, Any]:
        """The record of ``prediction`` on a Multilingual row: the registered builder's, or the
        official image's run graded like every SWE-bench run (``started`` makes the record and its
        ``swebench`` block, ``graded`` grades a run that reached the tests)."""
        payload: MultilingualInstance = instance.payload
        record, block = started(prepared.timings, prepared.image)
        block.update(
            language=payload.language, eval_type=payload.eval_type, not_built_because=prepared.reason
        )
        if prediction.is_empty:
            record["status"] = "empty"
            return record
        run = self.run(payload, prepared, prediction.patch, context)
        record["timings"].update(run.timings)
        if run.refusals:
            return refused_record(
                record, run.refusals, "the patch changes the row's tests or its test runner's files"
            )
        unjudged = unjudged_record(record, block, run, timeout=self.timeout)
        return unjudged if unjudged is not None else graded(record, run)

    def run(
        self, payload: MultilingualInstance, prepared: MultilingualPrepared, patch: str, context: EvalContext
    ) -> PatchRun:
        """``patch`` refused, or applied and the row's eval script run on it in its image (or in the
        environment its registered builder made)."""
        run = PatchRun(guard_reason=NO_GUARD.format(language=payload.language))
        started = time.perf_counter()
        run.refusals = runner_files.refusals(patch, payload.test_patch, payload.language)
        client = (
            None
            if run.refusals or prepared.built is not None
            else getattr(self.executor(context), "client", None)
        )
        if client is not None:
            # a link the image's repository has: a plain hunk on it changes where it points
            reader = official_refusal.image_reader(client, prepared.image)
            run.refusals = [
                Refusal(path, "link", "a symbolic link of the image's repository (a hunk retargets it)")
                for path in official_refusal.image_links(patch, reader)
            ]
        run.timings["refusal_check"] = evaluation.timed(started)
        if run.refusals:
            return run
        run.test_command = test_command(payload.eval_script)
        if prepared.built is not None:
            built = where.BUILDERS[payload.repo].run(payload, prepared.built, patch, context)
            built.refusals, built.test_command, built.guard_reason = [], run.test_command, run.guard_reason
            built.timings = {**run.timings, **built.timings}
            return built
        started = time.perf_counter()
        run.apply_method, run.apply_log, run.log, run.result = run_in_image(
            self.executor(context), prepared.image, payload.eval_script, patch,
            timeout=self.timeout, scratch_parent=context.work_dir, network=self.network,
        )  # fmt: skip
        run.timings["tests"] = evaluation.timed(started)
        return run


def test_command(eval_script: str) -> str:
    """The line of ``eval_script`` after its start marker: the test command (for the record)."""
    lines = eval_script.splitlines()
    for at, line in enumerate(lines):
        if official.START_TEST_OUTPUT in line and at + 1 < len(lines):
            return lines[at + 1].strip()
    return ""


def run_in_image(
    executor: Any,
    image: str,
    eval_script: str,
    patch: str,
    *,
    timeout: float,
    scratch_parent: Path,
    network: bool = False,
) -> tuple[str | None, str, str, Any]:
    """Apply ``patch`` in ``image``'s ``/testbed`` with SWE-bench's apply commands, then run
    ``eval_script`` there: (the apply command that worked or None, the apply log, the script's log,
    the step's result)."""
    if not hasattr(executor, "container_spec"):
        raise HarnessError("official SWE-bench images need the Docker executor")
    scratch_parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="swebench-multilingual-", dir=scratch_parent) as name:
        scratch = Path(name)
        (scratch / "patch.diff").write_text(patch if patch.endswith("\n") else patch + "\n", encoding="utf-8")
        (scratch / official_images.INSTALL_SCRIPT).write_text(eval_script, encoding="utf-8")
        # root in the container has no capabilities (no CAP_DAC_OVERRIDE): the mount must be open
        scratch.chmod(0o777)
        step = BuildStep(
            name="swebench-multilingual",
            argv=("/bin/bash", "-c", official_images.container_script(official_images.apply_commands())),
            timeout=timeout,
            image=image,
            network=network,
            java_version=None,
        )
        result = executor.run(
            scratch, step, maven_repo=scratch / ".unused", overrides=official_images.sandbox_overrides()
        )
        read = official_images.read_left_file
        method = read(scratch / official_images.APPLIED_NAME) or None
        apply_log = read(scratch / official_images.APPLY_LOG_NAME)
        log = read(scratch / official_images.INSTALL_LOG_NAME)
    return method, apply_log, log, result
