"""The SWE-bench adapter (``--tebench-benchmark=swebench``).

``prepare`` finds the repository, decides the environment from SWE-bench's specification
(``unsupported_environment`` is raised here, before anything is built or run) and makes sure its
image exists (built once, cached by recipe hash); ``evaluate`` runs one prediction in a fresh
clone (:mod:`.patch_run`, its steps in :mod:`.evaluation`) or in the instance's official image
(:mod:`.official_eval`), grades the run and judges its guard evidence against gold's. Every step
runs in Docker, whatever ``--tebench-executor`` says: the environments are images.
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
from pytest_tebench.benchmarks.swebench import baselines
from pytest_tebench.benchmarks.swebench import environment
from pytest_tebench.benchmarks.swebench import network
from pytest_tebench.benchmarks.swebench import official
from pytest_tebench.benchmarks.swebench import official_eval
from pytest_tebench.benchmarks.swebench import official_images
from pytest_tebench.benchmarks.swebench import patch_run
from pytest_tebench.benchmarks.swebench import summary as figures
from pytest_tebench.benchmarks.swebench.build_failures import FOLDER as FAILED_BUILDS
from pytest_tebench.benchmarks.swebench.build_failures import BuildFailures
from pytest_tebench.benchmarks.swebench.build_failures import current_run_id
from pytest_tebench.benchmarks.swebench.instances import SwebenchInstance
from pytest_tebench.benchmarks.swebench.multilingual import built as multilingual_built
from pytest_tebench.benchmarks.swebench.multilingual import rows as multilingual_rows
from pytest_tebench.benchmarks.swebench.multilingual.official_run import MultilingualPrepared
from pytest_tebench.benchmarks.swebench.multilingual.official_run import MultilingualRuns
from pytest_tebench.benchmarks.swebench.records import grade_into
from pytest_tebench.benchmarks.swebench.records import guard_properties
from pytest_tebench.benchmarks.swebench.records import guarded_record
from pytest_tebench.benchmarks.swebench.records import register_demo
from pytest_tebench.benchmarks.swebench.records import started_record
from pytest_tebench.benchmarks.swebench.settings import DEFAULT_TIMEOUT
from pytest_tebench.errors import HarnessError
from pytest_tebench.errors import InputError
from pytest_tebench.errors import UnsupportedEnvironment
from pytest_tebench.instance.datasets import RawRecord
from pytest_tebench.instance.predictions import Prediction
from pytest_tebench.integrity import evidence
from pytest_tebench.report.json_report import write_report
from pytest_tebench.report.properties import PREFIX
from pytest_tebench.report.properties import Property
from pytest_tebench.report.properties import block_properties
from pytest_tebench.report.properties import scalar
from pytest_tebench.run.executor import Executor


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
#: 3: the tree on sys.path under an editable finder; 4: exact pins, download manifests;
#: 5: exact pins' dependencies at their own date, pre_install edits made again in the tree;
#: 6: runner files refused, a clean environment and the guard: a hostile prediction stored as
#: resolved before must not come back as a pass; 7: the prediction's test-side changes set aside).
EVALUATION_VERSION = 7
#: Part of the key of items run in an official image only (built ones keep theirs): 2: runner
#: files refused, a clean environment and the guard there too; 3: the install phase judged
#: against gold's before the tests run; 4: a link the image's repository has is read as a link,
#: and a hunk that would retarget it refused.
OFFICIAL_VERSION = 4

#: JUnit properties of the ``swebench`` record block.
JUNIT_FIELDS: tuple[str, ...] = (
    "repo", "version", "python", "image", "resolved", "resolution",
    "f2p_success", "f2p_failure", "p2p_success", "p2p_failure",
)  # fmt: skip


class SwebenchAdapter:
    name = "swebench"
    gate_metrics = {
        "resolved": "share of all the model's instances resolved (SWE-bench's figure)",
        "resolved_judged": "share of the model's judged instances resolved",
    }
    record_fields: tuple[str, ...] = (
        "apply_method", "swebench", "refused_files", "set_aside_files", "guard", "timings",
    )  # fmt: skip
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
        rerun: bool = False,
        images: str = official_images.DEFAULT_MODE,
    ) -> None:
        #: ``build``, ``official`` or ``auto`` (build where we can, else the official image).
        self.images = images
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
        #: Shared by every process of the run: a build that failed in it is not tried again.
        self.run_id = current_run_id()
        #: ``--tebench-rerun``: images that failed to build in earlier runs are built again.
        self.rerun = rerun
        #: The official-image steps (``--tebench-swebench-images``), with their guard probes.
        self._official = official_eval.OfficialImages(
            self.executor, timeout=timeout, network=network, version=OFFICIAL_VERSION
        )
        #: SWE-bench Multilingual rows: their eval script in their image, or a registered builder.
        self._multilingual = MultilingualRuns(self.executor, timeout=timeout, network=network, images=images)
        # the Java Maven rows' builder works with this adapter's executor and Maven options
        multilingual_built.BUILDER.configure(
            self.executor, values=self.executor_values, timeout=timeout, progress=progress
        )

    # -- collection ------------------------------------------------------------------------
    def load_instances(self, records: Sequence[RawRecord]) -> list[BenchmarkInstance]:
        # Lite and Verified rows as before; Multilingual rows with their language (``lang_java``)
        loaded = multilingual_rows.load(records)
        return [_with_version_marker(i) for i in loaded]

    def cache_key(self, instance: BenchmarkInstance) -> str | None:
        payload: SwebenchInstance = instance.payload
        # only items that run in an official image carry the mode: keys of built ones stay as they were
        where = official_eval.decide(payload, self.images).where
        built_here = where == "build" and multilingual_rows.is_multilingual(payload)
        return json.dumps(
            {
                **({"images": where, "official": OFFICIAL_VERSION} if where == "official" else {}),
                # a Multilingual row built here: how its build runs (results of an older one are not reused)
                **({"java_build": multilingual_built.RESULT_VERSION} if built_here else {}),
                "row": dataclasses.asdict(payload),
                "evaluation": EVALUATION_VERSION,
                # a stored result is the guard's judgement too: another guard judges afresh
                "guard": evidence.GUARD_DIGEST,
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
        """The commits ``prepare`` checks out (what a Dask worker's repository bundle must hold);
        none for an item that runs in its official image (the repository is in the image)."""
        payload: SwebenchInstance = instance.payload
        if official_eval.decide(payload, self.images).where != "build":
            return ()
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

    def prepare(
        self, instance: BenchmarkInstance, context: EvalContext
    ) -> SwebenchPrepared | official_eval.OfficialPrepared | MultilingualPrepared:
        payload: SwebenchInstance = instance.payload
        started = time.perf_counter()
        # the demos' repositories (a Python one, a Java one) are known before anything is decided
        register_demo()
        if multilingual_rows.is_multilingual(payload):
            return self._multilingual.prepare(instance, context, started)
        spec = official.specs(payload.repo, payload.version)
        decision = official_eval.decide(payload, self.images)
        if decision.where == "unsupported":
            raise UnsupportedEnvironment(str(decision.reason))
        if decision.where == "official":
            return self._official.prepare(payload, spec or {}, decision.reason, context, started)
        source = context.repos.locate(payload.repo, [payload.base_commit, payload.environment_setup_commit])
        located = time.perf_counter()
        if not self.network:
            files = official.test_directives(payload.repo, payload.test_patch)
            offline = network.offline_reason(
                source, payload.base_commit, payload.test_patch, files, payload.repo
            )
            if offline is not None:
                raise UnsupportedEnvironment(offline)
        plan = environment.plan_environment(
            payload.repo,
            payload.version,
            spec,
            setup_commit=payload.environment_setup_commit,
            read_file=environment.show_file(source, payload.environment_setup_commit),
            requirement_paths=official.requirement_paths(payload.repo),
            env_yml_paths=official.env_yml_paths(payload.repo),
            clean_requirements=official.modules().python_spec.clean_requirements,
            pretend_version=environment.pretend_version(source, payload.environment_setup_commit),
            pypi_date=self.pypi_date,
            submodules=environment.submodule_packages(source, payload.environment_setup_commit),
        )
        client = getattr(self.executor(context), "client", None)
        if client is None:
            raise HarnessError(
                "the SWE-bench benchmark needs a Docker executor (its environments are images)"
            )
        locks = context.cache_dir / "locks"
        # a failed build is remembered by its tag: no worker of this run, nor a later run, builds it again
        failures = BuildFailures(context.cache_dir / FAILED_BUILDS, self.run_id, retry=self.rerun)
        image = environment.ensure_environment(
            client, plan, source, lock_dir=locks, progress=self.progress, failures=failures
        )
        # the install again at base_commit when what decides it changed since the environment's commit
        layer = environment.plan_instance_layer(plan, image, source, payload.base_commit)
        if layer is not None:
            image = environment.ensure_instance_layer(
                client, layer, source, lock_dir=locks, progress=self.progress, failures=failures
            )
        done = time.perf_counter()
        return SwebenchPrepared(
            source,
            plan,
            image,
            {"repository": located - started, "environment": done - located},
            payload.environment_setup_commit if layer is None else payload.base_commit,
        )

    def record_without_build(
        self, instance: BenchmarkInstance, prediction: Prediction
    ) -> dict[str, Any] | None:
        """An empty or missing patch: unresolved, as SWE-bench reports it, before any environment is
        decided or built (an unsupported or broken environment does not make it an error)."""
        if not prediction.is_empty:
            return None
        payload: SwebenchInstance = instance.payload
        record = base_record(instance, prediction, "empty")
        record["swebench"] = {
            "repo": payload.repo,
            "version": payload.version,
            "resolved": False,
            "resolution": None,
            "patch_extraction": prediction.extraction,
            "network": self.network,
        }
        return record

    def evaluate(
        self, instance: BenchmarkInstance, prepared: Prepared, prediction: Prediction, context: EvalContext
    ) -> dict[str, Any]:
        if isinstance(prepared, official_eval.OfficialPrepared):
            return self._evaluate_official(instance, prepared, prediction, context)
        if isinstance(prepared, MultilingualPrepared):
            return self._multilingual.evaluate(
                instance, prepared, prediction, context,
                started=lambda timings, image: self._started(
                    instance, prediction, timings, image=image, python="", suite=None,
                    install_commit=instance.payload.base_commit,
                    environment="official" if prepared.built is None else "build",
                ),
                graded=lambda record, run: self._graded(
                    record, instance, prepared, prediction, run=run, context=context
                ),
            )  # fmt: skip
        assert isinstance(prepared, SwebenchPrepared)
        payload: SwebenchInstance = instance.payload
        record, block = self._started(
            instance,
            prediction,
            prepared.timings,
            image=prepared.image,
            python=prepared.plan.python,
            suite=prepared.plan.suite,
            install_commit=prepared.install_commit,
            environment="build",
        )
        if prediction.is_empty:
            record["status"] = "empty"
            return record
        run = self._run_patch(payload, prepared, prediction.patch, context, keep=context.keep_workspaces)
        record["timings"].update(run.timings)
        if run.workspace is not None:
            record["workspace"] = str(run.workspace)
        unjudged = patch_run.unjudged_record(record, block, run, timeout=self.timeout)
        if unjudged is not None:
            return unjudged
        return self._graded(record, instance, prepared, prediction, run=run, context=context)

    def _started(
        self,
        instance: BenchmarkInstance,
        prediction: Prediction,
        timings: Mapping[str, float],
        *,
        image: str,
        python: str,
        suite: str | None,
        install_commit: str,
        environment: str,
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """The record of a run and its ``swebench`` block, the same for a built and an official
        environment but for where the environment comes from."""
        record, block = started_record(
            instance, prediction, timings, "swebench", image=image, python=python, suite=suite
        )
        block.update(
            install_commit=install_commit,
            resolved=False,
            resolution=None,
            patch_extraction=prediction.extraction,
            network=self.network,
            environment=environment,
        )
        return record, block

    def _graded(
        self,
        record: dict[str, Any],
        instance: BenchmarkInstance,
        prepared: SwebenchPrepared | official_eval.OfficialPrepared | MultilingualPrepared,
        prediction: Prediction,
        *,
        run: patch_run.PatchRun,
        context: EvalContext,
    ) -> dict[str, Any]:
        """The record of a run that reached the tests: graded, then its guard evidence judged."""
        block = record["swebench"]
        status_map = grade_into(block, instance.payload, run.log, run.nonce)
        guard = self._judge_guard(
            instance,
            prepared,
            prediction,
            run,
            status_map=status_map,
            resolved=bool(block["resolved"]),
            context=context,
        )
        return guarded_record(record, block, guard)

    def _run_patch(
        self,
        payload: SwebenchInstance,
        prepared: SwebenchPrepared,
        patch: str,
        context: EvalContext,
        *,
        keep: bool = False,
    ) -> patch_run.PatchRun:
        """``patch`` through SWE-bench's steps in ``prepared``'s environment (:mod:`.patch_run`)."""
        return patch_run.run_patch(
            self.executor(context),
            payload,
            patch,
            source=prepared.source,
            plan=prepared.plan,
            image=prepared.image,
            work_dir=context.work_dir,
            scratch=context.cache_dir / "swebench-scratch",
            timeout=self.timeout,
            network=self.network,
            keep=keep,
        )

    def _judge_guard(
        self,
        instance: BenchmarkInstance,
        prepared: SwebenchPrepared | official_eval.OfficialPrepared | MultilingualPrepared,
        prediction: Prediction,
        run: patch_run.PatchRun,
        *,
        status_map: Mapping[str, str],
        resolved: bool,
        context: EvalContext,
    ) -> dict[str, Any]:
        """The record's ``guard`` block: the in-process guard's evidence judged against the gold
        run of the same instance in the same image (gold itself is that baseline)."""
        if not run.guarded:
            reason = run.guard_reason or (
                "the test command is neither pytest, tox --current-env nor a runner script: "
                "runner files are refused, no in-process guard"
            )
            return {"active": False, "reason": reason}
        payload: SwebenchInstance = instance.payload
        tests = set(payload.fail_to_pass) | set(payload.pass_to_pass)
        successes = {name: status for name, status in status_map.items() if name in tests}
        found = evidence.records(run.log, run.nonce)
        block: dict[str, Any] = {"active": True, "records": len(found)}
        store = baselines.guard_store(
            context.cache_dir,
            [
                self.cache_key(instance),
                prepared.image,
                evidence.GUARD_VERSION,
                evidence.GUARD_DIGEST,
                EVALUATION_VERSION,
            ],
        )
        if prediction.extraction == "gold":
            baselines.store_guard_baseline(store, evidence.baseline_of(found, successes))
            block["baseline"] = "self"
            return block

        def run_gold() -> patch_run.PatchRun:
            if isinstance(prepared, official_eval.OfficialPrepared):
                return self._official.run(payload, prepared, payload.patch, context, gold=True)
            # a Multilingual run is never guarded: it does not come here
            assert isinstance(prepared, SwebenchPrepared)
            return self._run_patch(payload, prepared, payload.patch, context)

        baseline, block["baseline"] = baselines.guard_baseline(store, context.cache_dir, payload, run_gold)
        findings = evidence.findings(found, successes=successes, resolved_by_log=resolved, baseline=baseline)
        block["findings"] = [finding.as_record() for finding in findings]
        return block

    def _evaluate_official(
        self,
        instance: BenchmarkInstance,
        prepared: official_eval.OfficialPrepared,
        prediction: Prediction,
        context: EvalContext,
    ) -> dict[str, Any]:
        """The official harness's steps in the instance's official image (:mod:`.official_images`)."""
        payload: SwebenchInstance = instance.payload
        record, block = self._started(
            instance,
            prediction,
            prepared.timings,
            image=prepared.image,
            python=prepared.python,
            suite=None,
            install_commit=payload.base_commit,
            environment="official",
        )
        block["not_built_because"] = prepared.reason
        if prediction.is_empty:
            record["status"] = "empty"
            return record
        gold = prediction.extraction == "gold"
        run = self._official.run(payload, prepared, prediction.patch, context, gold=gold)
        record["timings"].update(run.timings)
        unjudged = official_eval.unjudged_record(record, block, run, timeout=self.timeout)
        if unjudged is not None:
            return unjudged
        graded = self._graded(record, instance, prepared, prediction, run=run, context=context)
        graded["guard"]["install"] = run.install
        return graded

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
        # resolved: over all the model's instances (the headline); resolved_judged: over the judged
        value = model_summary.get("resolved_rate" if metric == "resolved" else "resolved_rate_judged")
        return None if value is None else float(value)

    def summary_lines(self, summary: Mapping[str, Any]) -> list[str]:
        return figures.summary_lines(summary)

    def summary_properties(self, summary: Mapping[str, Any]) -> list[Property]:
        return figures.summary_properties(summary)

    def junit_properties(self, record: Mapping[str, Any]) -> list[Property]:
        properties: list[Property] = [(f"{PREFIX}apply_method", scalar(record.get("apply_method")))]
        properties += block_properties("swebench", record.get("swebench"), JUNIT_FIELDS)
        return properties + guard_properties(record)

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


def _with_version_marker(instance: BenchmarkInstance) -> BenchmarkInstance:
    """Label (and so mark) each instance with its ``repo`` and ``version``: ``-m psf_requests_2_0``
    (after the labels it has: a Multilingual row's language)."""
    payload = instance.payload
    if payload is None:
        return instance
    label = re.sub(r"[^A-Za-z0-9_]+", "_", f"{payload.repo}_{payload.version}").strip("_")
    return BenchmarkInstance(
        instance.instance_id,
        instance.project,
        instance.repo,
        (label, *instance.labels),
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
        rerun=bool(values.get("rerun")),
        images=str(values.get("swebench_images") or official_images.DEFAULT_MODE),
    )
