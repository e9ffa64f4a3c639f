"""Multilingual rows built here, for the adapter: prepare an instance's environment, run a patch.

The adapter asks :func:`.build_decision.decide` (through ``official_eval.decide``) where a row runs;
for a row built here, :meth:`BuiltRows.prepare` finds the repository and makes the instance's Java
environment (:mod:`.java_build`), and :meth:`BuiltRows.run` runs one patch through the row's
``eval_script`` in it. The result is a :class:`~pytest_tebench.benchmarks.swebench.patch_run.PatchRun`,
graded by the adapter as every SWE-bench run is (the row's ``log_parser`` and ``eval_type``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_tebench.benchmarks.base import EvalContext
from pytest_tebench.benchmarks.swebench.multilingual.java_build import JavaBuild
from pytest_tebench.benchmarks.swebench.multilingual.java_build import JavaEnvironment
from pytest_tebench.benchmarks.swebench.multilingual.java_build import JavaRow
from pytest_tebench.benchmarks.swebench.multilingual.rows import MultilingualInstance
from pytest_tebench.benchmarks.swebench.patch_run import PatchRun
from pytest_tebench.errors import UnsupportedEnvironment
from pytest_tebench.run.executor import Executor
from pytest_tebench.run.maven.settings import MavenSettings

#: The guard block's reason for these runs: the eval script runs Maven, where no guard plugin loads.
NO_GUARD = "a Maven test run (the row's eval_script): no in-process guard"


@dataclass
class BuiltPrepared:
    """A Multilingual instance whose environment was built here."""

    source: Path
    row: JavaRow
    environment: JavaEnvironment
    timings: dict[str, float]

    # the record's ``swebench`` fields, as a Python environment's have them: no Python, no suite
    @property
    def python(self) -> str:
        return ""

    @property
    def suite(self) -> str | None:
        return None

    @property
    def image(self) -> str:
        """The image is TEBench's Java image; the record names the JDK that ran in it."""
        return f"java{self.environment.java_version}"

    @property
    def install_commit(self) -> str:
        return self.row.base_commit


def java_row(payload: MultilingualInstance) -> JavaRow:
    return JavaRow(
        payload.instance_id,
        payload.repo,
        payload.version,
        payload.base_commit,
        payload.patch,
        payload.eval_script,
    )


class BuiltRows:
    """The build-mode steps of one adapter: its Docker executor (``executor``, made on first use),
    the run's option values (the Maven repository, ``--tebench-jdk``, the warm-up limit), the tests'
    ``timeout`` and where progress goes."""

    def __init__(
        self,
        executor: Callable[[EvalContext], Executor],
        *,
        values: Mapping[str, Any],
        timeout: float,
        progress: Callable[[str], None],
    ) -> None:
        self.executor = executor
        self.values = dict(values)
        self.timeout = timeout
        self.progress = progress
        self._builds: dict[Path, JavaBuild] = {}

    def _build(self, context: EvalContext) -> JavaBuild:
        if context.cache_dir not in self._builds:
            self._builds[context.cache_dir] = JavaBuild(
                self.executor(context),
                cache_dir=context.cache_dir,
                maven=MavenSettings.from_values(self.values, context.cache_dir),
                test_timeout=self.timeout,
                progress=self.progress,
            )
        return self._builds[context.cache_dir]

    def prepare(self, payload: MultilingualInstance, context: EvalContext, started: float) -> BuiltPrepared:
        """The instance's environment, made once (its setup runs online on a trusted tree)."""
        if payload.language != "java":
            raise UnsupportedEnvironment(f"no build recipe for {payload.language} rows here")
        if not payload.eval_script.strip():
            raise UnsupportedEnvironment(f"{payload.instance_id} has no eval_script: nothing to run here")
        source = context.repos.locate(payload.repo, [payload.base_commit])
        located = time.perf_counter()
        row = java_row(payload)
        environment = self._build(context).ensure_environment(row, source)
        return BuiltPrepared(
            source,
            row,
            environment,
            {"repository": located - started, "environment": time.perf_counter() - located},
        )

    def run(
        self, prepared: BuiltPrepared, patch: str, context: EvalContext, *, keep: bool = False
    ) -> PatchRun:
        """``patch`` through the row's eval script in ``prepared``'s environment."""
        run = self._build(context).run_prediction(
            prepared.row, prepared.source, prepared.environment, patch, keep=keep
        )
        run.guard_reason = NO_GUARD
        return run
