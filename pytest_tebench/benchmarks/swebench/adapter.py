"""The SWE-bench adapter (``--tebench-benchmark=swebench``).

``prepare`` finds the repository, decides the environment from SWE-bench's specification
(``unsupported_environment`` is raised here, before anything is built or run) and makes sure its
image exists (built once, cached by recipe hash); ``evaluate`` runs one prediction in a fresh
clone (see :mod:`.evaluation`). Every step runs in Docker, whatever ``--tebench-executor`` says:
the environments are images.
"""

from __future__ import annotations

import dataclasses
import json
import re
import sys
import time
from collections.abc import Callable
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_tebench.benchmarks.base import BenchmarkInstance
from pytest_tebench.benchmarks.base import EvalContext
from pytest_tebench.benchmarks.base import Prepared
from pytest_tebench.benchmarks.base import base_record
from pytest_tebench.benchmarks.swebench import environment
from pytest_tebench.benchmarks.swebench import evaluation
from pytest_tebench.benchmarks.swebench import instances
from pytest_tebench.benchmarks.swebench import network
from pytest_tebench.benchmarks.swebench import official
from pytest_tebench.benchmarks.swebench import summary as figures
from pytest_tebench.benchmarks.swebench.instances import SwebenchInstance
from pytest_tebench.benchmarks.swebench.settings import DEFAULT_TIMEOUT
from pytest_tebench.errors import HarnessError
from pytest_tebench.errors import InputError
from pytest_tebench.errors import UnsupportedEnvironment
from pytest_tebench.instance.datasets import RawRecord
from pytest_tebench.instance.predictions import Prediction
from pytest_tebench.report.json_report import write_report
from pytest_tebench.report.properties import PREFIX
from pytest_tebench.report.properties import Property
from pytest_tebench.report.properties import block_properties
from pytest_tebench.report.properties import scalar
from pytest_tebench.run.executor import Executor
from pytest_tebench.workspace.checkout import Workspace


@dataclass
class SwebenchPrepared:
    source: Path
    plan: environment.EnvironmentPlan
    image: str
    timings: dict[str, float]
    #: The commit the spec's install ran at: ``environment_setup_commit``, or ``base_commit`` (a layer).
    install_commit: str


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


#: Part of every result key: bump when a change to how items are evaluated can change their
#: results, so stored ones are not reused (2: instance layers, internet-needing tests set aside;
#: 3: the tree on sys.path under an editable finder; 4: exact pins, download manifests).
EVALUATION_VERSION = 4

#: JUnit properties of the ``swebench`` record block.
JUNIT_FIELDS: tuple[str, ...] = (
    "repo", "version", "python", "image", "resolved", "resolution",
    "f2p_success", "f2p_failure", "p2p_success", "p2p_failure",
)  # fmt: skip


class SwebenchAdapter:
    name = "swebench"
    gate_metrics = {"resolved": "share of the model's judged items whose issue is resolved"}
    record_fields = ("apply_method", "swebench", "timings")
    #: Environments are images: the adapter runs them in its own Docker sandbox, never on the host.
    uses_executor = False

    def __init__(
        self,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        progress: Callable[[str], None] = _stderr,
        network: bool = False,
        pypi_date: str = environment.DEFAULT_PYPI_DATE,
        run_report: Path | None = None,
        min_resolved: float | None = None,
        executor_values: Mapping[str, Any] | None = None,
    ) -> None:
        #: PyPI's state that environments resolve unpinned packages against ("" = today's).
        self.pypi_date = pypi_date
        self.run_report = run_report
        self.executor_values = dict(executor_values or {})
        self.thresholds: tuple[tuple[str, float], ...] = (
            () if min_resolved is None else (("resolved", min_resolved),)
        )
        #: Marker lines: one per (repo, version) is registered on first use (``-m psf_requests_2_0``).
        self.markers: tuple[str, ...] = ()
        self.timeout = timeout
        #: Whether the tests may use the network (opt-in; the sandbox is offline by default).
        self.network = network
        #: Where image builds report progress (the plugin passes a terminal printer).
        self.progress = progress
        self._executor: Executor | None = None
        self._failed_builds: dict[str, str] = {}

    # -- collection ------------------------------------------------------------------------
    def load_instances(self, records: Sequence[RawRecord]) -> list[BenchmarkInstance]:
        loaded = instances.load(records)
        return [_with_version_marker(i) for i in loaded]

    def cache_key(self, instance: BenchmarkInstance) -> str | None:
        payload: SwebenchInstance = instance.payload
        return json.dumps(
            {
                "row": dataclasses.asdict(payload),
                "evaluation": EVALUATION_VERSION,
                "network": self.network,
                "pypi_date": self.pypi_date,
                "timeout": self.timeout,
            },
            sort_keys=True,
            default=str,
        )

    def gold_patch(self, instance: BenchmarkInstance) -> str:
        payload: SwebenchInstance = instance.payload
        return payload.patch

    def repository_commits(self, instance: BenchmarkInstance) -> tuple[str, ...]:
        """The commits ``prepare`` checks out (what a Dask worker's repository bundle must hold)."""
        payload: SwebenchInstance = instance.payload
        return tuple(dict.fromkeys((payload.base_commit, payload.environment_setup_commit)))

    # -- running ---------------------------------------------------------------------------
    def executor(self, context: EvalContext) -> Executor:
        """This process's Docker executor (the sandbox of run/docker.py), made on first use.

        Whatever ``--tebench-executor`` says: SWE-bench environments are images. The context's
        executor is not asked for, since making a local one would look for JDKs.
        """
        del context
        if self._executor is None:
            from pytest_tebench.run.executors import ExecutorOptions
            from pytest_tebench.run.executors import create_executor

            # always Docker: its memory and CPU limits are the run's (--tebench-docker-*)
            self._executor = create_executor(ExecutorOptions.from_values("docker", self.executor_values))
        return self._executor

    def prepare(self, instance: BenchmarkInstance, context: EvalContext) -> SwebenchPrepared:
        payload: SwebenchInstance = instance.payload
        started = time.perf_counter()
        _register_demo()
        spec = official.specs(payload.repo, payload.version)
        reason = environment.unsupported_reason(payload.repo, payload.version, spec)
        if reason is not None:
            raise UnsupportedEnvironment(reason)
        source = context.repos.locate(payload.repo, [payload.base_commit, payload.environment_setup_commit])
        located = time.perf_counter()
        if not self.network:
            files = official.test_directives(payload.repo, payload.test_patch)
            need = network.internet_need(source, payload.base_commit, payload.test_patch, files, payload.repo)
            if need is not None:
                raise UnsupportedEnvironment(
                    f"{need}; this sandbox has no network (--tebench-swebench-network lets them use it)"
                )
        plan = environment.plan_environment(
            payload.repo,
            payload.version,
            spec,
            setup_commit=payload.environment_setup_commit,
            read_file=environment.show_file(source, payload.environment_setup_commit),
            requirement_paths=official.requirement_paths(payload.repo),
            clean_requirements=official.modules().python_spec.clean_requirements,
            pretend_version=environment.pretend_version(source, payload.environment_setup_commit),
            pypi_date=self.pypi_date,
        )
        client = getattr(self.executor(context), "client", None)
        if client is None:
            raise HarnessError(
                "the SWE-bench benchmark needs a Docker executor (its environments are images)"
            )
        tag = plan.tag()
        if tag in self._failed_builds:
            # one failed build per process is enough: the next items of that environment say why
            raise HarnessError(
                f"environment image {tag} failed to build earlier in this run: {self._failed_builds[tag]}"
            )
        locks = context.cache_dir / "locks"
        try:
            image = environment.ensure_environment(
                client, plan, source, lock_dir=locks, progress=self.progress
            )
        except HarnessError as exc:
            self._failed_builds[tag] = str(exc)
            raise
        # the install again at base_commit when what decides it changed since the environment's commit
        layer = environment.plan_instance_layer(plan, image, source, payload.base_commit)
        if layer is not None:
            failed = self._failed_builds.get(layer.tag())
            if failed is not None:
                raise HarnessError(f"image {layer.tag()} failed to build earlier in this run: {failed}")
            try:
                image = environment.ensure_instance_layer(
                    client, layer, source, lock_dir=locks, progress=self.progress
                )
            except HarnessError as exc:
                self._failed_builds[layer.tag()] = str(exc)
                raise
        done = time.perf_counter()
        return SwebenchPrepared(
            source,
            plan,
            image,
            {"repository": located - started, "environment": done - located},
            payload.environment_setup_commit if layer is None else payload.base_commit,
        )

    def evaluate(
        self, instance: BenchmarkInstance, prepared: Prepared, prediction: Prediction, context: EvalContext
    ) -> dict[str, Any]:
        assert isinstance(prepared, SwebenchPrepared)
        payload: SwebenchInstance = instance.payload
        record = base_record(instance, prediction, "evaluated")
        record["timings"] = dict(prepared.timings)
        block: dict[str, Any] = {
            "repo": payload.repo,
            "version": payload.version,
            "image": prepared.image,
            "python": prepared.plan.python,
            "suite": prepared.plan.suite,
            "install_commit": prepared.install_commit,
            "resolved": False,
            "resolution": None,
            "patch_extraction": prediction.extraction,
            "network": self.network,
        }
        record["swebench"] = block
        if prediction.is_empty:
            record["status"] = "empty"
            return record
        started = time.perf_counter()
        workspace = Workspace.create(prepared.source, payload.base_commit, "", parent=context.work_dir)
        try:
            applied = evaluation.apply_model_patch(workspace.path, prediction.patch)
            record["timings"]["apply"] = evaluation.timed(started)
            if applied.method is None:
                record["status"] = "not_applied"
                record["error"] = f"the patch does not apply (SWE-bench: Patch Apply Failed)\n{applied.log}"
                return record
            record["apply_method"] = applied.method
            evaluation.apply_test_patch(workspace.path, payload)
            directives = official.test_directives(payload.repo, payload.test_patch)
            script = evaluation.eval_script(prepared.plan, directives)
            timeout = self.timeout
            started = time.perf_counter()
            result, log = evaluation.run_tests(
                self.executor(context),
                workspace.path,
                prepared.image,
                script,
                timeout=timeout,
                network=self.network,
                scratch=context.cache_dir / "swebench-scratch",
            )
            record["timings"]["tests"] = evaluation.timed(started)
            block["test_command"] = " ".join([prepared.plan.test_cmd, *directives])
            if result.timed_out:
                record["status"] = "timeout"
                record["error"] = f"the tests ran past {timeout:g} s (SWE-bench: Tests Timed Out); not scored"
                return record
            if official.START_TEST_OUTPUT not in log:
                record["status"] = "error"
                record["error"] = (
                    f"the test container failed (exit {result.exit_code}):\n{result.output[-3000:]}"
                )
                return record
            _register_demo()
            grading = evaluation.graded_fields(payload, log)
            tests = grading.pop("tests_status")
            block.update(grading)
            for key, short in (("FAIL_TO_PASS", "f2p"), ("PASS_TO_PASS", "p2p")):
                block[f"{short}_success"] = tests.get(key, {}).get("success", [])
                block[f"{short}_failure"] = tests.get(key, {}).get("failure", [])
            if context.keep_workspaces:
                record["workspace"] = str(workspace.path)
                (workspace.path / evaluation.LOG_NAME).write_text(log, encoding="utf-8")
        finally:
            if not context.keep_workspaces:
                workspace.remove()
        return record

    def cleanup(self, prepared: Prepared, context: EvalContext) -> None:
        """Workspaces are per prediction and removed by ``evaluate``; images are kept (the cache)."""

    def verdict(self, record: dict[str, Any]) -> str | None:
        """Why an evaluated item fails (unresolved), or None when it passes (resolved)."""
        block = record.get("swebench") or {}
        if record.get("status") != "evaluated" or block.get("resolved"):
            return None
        f2p, p2p = block.get("f2p_failure") or [], block.get("p2p_failure") or []
        found = "" if block.get("test_output_found", True) else " (no test output found in the log)"
        return (
            f"unresolved ({block.get('resolution')}){found}: "
            f"FAIL_TO_PASS failing {len(f2p)}: {', '.join(f2p[:5])}; "
            f"PASS_TO_PASS failing {len(p2p)}: {', '.join(p2p[:5])}"
        )

    # -- reporting -------------------------------------------------------------------------
    def summarise(self, records: Sequence[dict[str, Any]]) -> dict[str, Any]:
        return figures.summarise(records)

    def metric_value(self, model_summary: Mapping[str, Any], metric: str) -> float | None:
        # resolved share of the judged items (missing predictions count as unresolved)
        pct = model_summary.get("resolved_pct")
        return None if pct is None else float(pct) / 100.0

    def summary_lines(self, summary: Mapping[str, Any]) -> list[str]:
        return figures.summary_lines(summary)

    def junit_properties(self, record: Mapping[str, Any]) -> list[Property]:
        properties: list[Property] = [(f"{PREFIX}apply_method", scalar(record.get("apply_method")))]
        return properties + block_properties("swebench", record.get("swebench"), JUNIT_FIELDS)

    def report_fields(self) -> dict[str, Any]:
        return {"swebench": {"network": self.network, "pypi_date": self.pypi_date or "today"}}

    def write_reports(self, report: Mapping[str, Any]) -> None:
        """``--tebench-swebench-report``: SWE-bench's own run report, one per model."""
        if self.run_report is None:
            return
        records = report.get("results") or []
        models = sorted({str(r.get("model_name_or_path")) for r in records})
        for model, target in figures.run_report_paths(self.run_report, models).items():
            try:
                write_report(figures.run_report(records, model), target)
            except OSError as exc:
                raise InputError(f"cannot write the SWE-bench run report: {exc}", source=str(target)) from exc


def _register_demo() -> None:
    from pytest_tebench.demo import swebench as demo

    official.register_repository(demo.SWEBENCH_DEMO_REPO, demo.SPECS, demo.LOG_PARSER)


def _with_version_marker(instance: BenchmarkInstance) -> BenchmarkInstance:
    """Label (and so mark) each instance with its ``repo`` and ``version``: ``-m psf_requests_2_0``."""
    payload = instance.payload
    if payload is None:
        return instance
    label = re.sub(r"[^A-Za-z0-9_]+", "_", f"{payload.repo}_{payload.version}").strip("_")
    return BenchmarkInstance(
        instance.instance_id,
        instance.project,
        instance.repo,
        (label,),
        instance.origin,
        payload,
        instance.problem,
    )


def create_adapter(
    values: Mapping[str, Any], cache_dir: Path, progress: Callable[[str], None] | None = None
) -> SwebenchAdapter:
    """The adapter for a run, from its option values (``SWEBENCH_OPTIONS``, keyed by dest)."""
    date = values.get("swebench_pypi_date") or environment.DEFAULT_PYPI_DATE
    report = values.get("swebench_report")
    return SwebenchAdapter(
        timeout=float(values.get("swebench_timeout") or DEFAULT_TIMEOUT),
        progress=progress or _stderr,
        network=bool(values.get("swebench_network")),
        pypi_date="" if date == "today" else str(date),
        run_report=None if report is None else Path(report),
        executor_values=values,
    )
