"""The build-mode builder of Multilingual's Java Maven rows, registered in :mod:`.where`.

google/gson and javaparser/javaparser (and the embedded demo's jcalc) build with nothing but Debian's
JDKs and Maven Central: :class:`JavaMavenBuilder` prepares an instance's environment and runs one
patch through the row's ``eval_script`` in it (:mod:`.java_build`). The adapter's Multilingual steps
(:mod:`.official_run`) do the rest as for a row in its official image: the runner-file refusals
first, the record, the grading by the row's ``log_parser`` and ``eval_type``.

The builder is registered when :mod:`.where` first decides (so ``tebench swebench coverage`` sees it
too) and configured by the adapter of the process (:meth:`JavaMavenBuilder.configure`: its Docker
executor, the run's Maven options, the tests' limit).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_tebench.benchmarks.base import BenchmarkInstance
from pytest_tebench.benchmarks.base import EvalContext
from pytest_tebench.benchmarks.swebench.multilingual import where
from pytest_tebench.benchmarks.swebench.multilingual.java_build import JavaBuild
from pytest_tebench.benchmarks.swebench.multilingual.java_build import JavaEnvironment
from pytest_tebench.benchmarks.swebench.multilingual.java_build import JavaRow
from pytest_tebench.benchmarks.swebench.multilingual.rows import MultilingualInstance
from pytest_tebench.benchmarks.swebench.patch_run import PatchRun
from pytest_tebench.errors import HarnessError
from pytest_tebench.errors import UnsupportedEnvironment
from pytest_tebench.run.executor import Executor
from pytest_tebench.run.maven.settings import MavenSettings

#: The repositories whose rows this builder builds: the dataset's Java Maven rows whose build needs
#: only Maven Central (apache/druid needs org.hyperic:sigar, which it lacks), and the demo's.
REPOSITORIES = ("google/gson", "javaparser/javaparser", "pytest-tebench/jcalc")
#: Part of a built row's result key: bump when a change here or in :mod:`.java_build` can change a
#: result (2: Surefire 3.0.0-M7's missing provider calls for the warm-up; gold was unresolved without;
#: 3: the head links the files a POM names by local-repository path, javaparser's test JVMs' agent).
RESULT_VERSION = 3


@dataclass
class BuiltPrepared:
    """A Multilingual instance whose environment was built here."""

    source: Path
    row: JavaRow
    environment: JavaEnvironment

    @property
    def image(self) -> str:
        """TEBench's Java image runs it; the record names the JDK that ran in it."""
        return f"java{self.environment.java_version}"


def java_row(payload: MultilingualInstance) -> JavaRow:
    return JavaRow(
        payload.instance_id,
        payload.repo,
        payload.version,
        payload.base_commit,
        payload.patch,
        payload.eval_script,
    )


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


class JavaMavenBuilder:
    """:class:`.where.Builder` of the Java Maven rows (one per process, configured by its adapter)."""

    def __init__(self) -> None:
        self.executor: Callable[[EvalContext], Executor] | None = None
        self.values: dict[str, Any] = {}
        self.timeout = 1800.0
        self.progress: Callable[[str], None] = _stderr
        self._builds: dict[Path, JavaBuild] = {}

    def configure(
        self,
        executor: Callable[[EvalContext], Executor],
        *,
        values: Mapping[str, Any],
        timeout: float,
        progress: Callable[[str], None],
    ) -> None:
        """The adapter's Docker executor (made on first use), the run's option values (the Maven
        repository, ``--tebench-jdk``, the warm-up limit), the tests' limit, where progress goes."""
        self.executor = executor
        self.values = dict(values)
        self.timeout = timeout
        self.progress = progress
        self._builds.clear()

    def _build(self, context: EvalContext) -> JavaBuild:
        if self.executor is None:
            raise HarnessError("the Java Maven builder was not configured by a SWE-bench adapter")
        if context.cache_dir not in self._builds:
            self._builds[context.cache_dir] = JavaBuild(
                self.executor(context),
                cache_dir=context.cache_dir,
                maven=MavenSettings.from_values(self.values, context.cache_dir),
                test_timeout=self.timeout,
                progress=self.progress,
            )
        return self._builds[context.cache_dir]

    def prepare(self, instance: BenchmarkInstance, context: EvalContext) -> BuiltPrepared:
        """The instance's environment, made once (its setup runs online on a trusted tree)."""
        payload: MultilingualInstance = instance.payload
        if not payload.eval_script.strip():
            raise UnsupportedEnvironment(f"{payload.instance_id} has no eval_script: nothing to run here")
        source = context.repos.locate(payload.repo, [payload.base_commit])
        row = java_row(payload)
        return BuiltPrepared(source, row, self._build(context).ensure_environment(row, source))

    def run(self, payload: MultilingualInstance, built: Any, patch: str, context: EvalContext) -> PatchRun:
        """``patch`` through the row's eval script in ``built``'s environment."""
        assert isinstance(built, BuiltPrepared)
        started = time.perf_counter()
        run = self._build(context).run_prediction(
            built.row, built.source, built.environment, patch, keep=context.keep_workspaces
        )
        run.timings.setdefault("tests", time.perf_counter() - started)
        return run


#: The one builder of this process.
BUILDER = JavaMavenBuilder()
for _repo in REPOSITORIES:
    where.register_builder(_repo, BUILDER)
