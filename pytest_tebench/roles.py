"""The two process roles of a pytest-tebench session, and the options they share.

``TebenchWorker`` lives wherever items run (each xdist worker, or the only process); it owns
the benchmark adapter, the loaded instances and predictions, and the evaluation context.
``TebenchController`` lives where reports arrive (the xdist controller, or the only process);
it only ever sees plain-data result records attached to reports, so ``-n 0`` and ``-n 8``
aggregate through the same code path.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Generator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from pytest_tebench.benchmarks.base import BenchmarkAdapter
from pytest_tebench.benchmarks.base import BenchmarkInstance
from pytest_tebench.benchmarks.base import EvalContext
from pytest_tebench.benchmarks.base import UpdateSettings
from pytest_tebench.errors import HarnessError
from pytest_tebench.errors import TebenchError
from pytest_tebench.instance.datasets import load_records
from pytest_tebench.instance.predictions import GOLD
from pytest_tebench.instance.predictions import Prediction
from pytest_tebench.instance.predictions import gold_predictions
from pytest_tebench.instance.predictions import load_predictions
from pytest_tebench.metrics.aggregate import check_thresholds
from pytest_tebench.run.executor import Executor
from pytest_tebench.workspace.repos import RepositoryStore


@dataclass(frozen=True)
class TebenchOptions:
    """Every ``--tebench-*`` value, as plain data (identical on controller and workers)."""

    predictions: str
    dataset: str
    split: str
    benchmark: str
    repos: tuple[Path, ...]
    repo_url: str
    offline: bool
    cache_dir: Path
    maven_repo: Path
    keep_workspaces: bool
    allow_non_test_edits: bool
    report: Path | None
    min_f1: float | None
    min_update: float | None
    skip_update: bool
    scoring: str
    executor: str
    jdk: str | None
    maven: str | None
    timeout_compile: float
    timeout_test: float
    image: str | None
    docker_memory: str
    docker_cpus: float

    @property
    def is_gold(self) -> bool:
        return self.predictions == GOLD

    @property
    def anchor_nodeid(self) -> str:
        return GOLD if self.is_gold else Path(self.predictions).name


options_key = pytest.StashKey[TebenchOptions]()
record_key = pytest.StashKey[dict[str, Any]]()
worker_key = pytest.StashKey["TebenchWorker"]()


def options_from_config(config: pytest.Config) -> TebenchOptions:
    from pytest_tebench.plugin import default_cache_dir

    predictions = str(config.getoption("tebench_predictions"))
    if predictions != GOLD:
        path = Path(predictions).expanduser()
        if not path.is_file():
            raise pytest.UsageError(f"--tebench-predictions: file not found: {predictions} (or use 'gold')")
        predictions = str(path.resolve())
    cache_dir = config.getoption("tebench_cache_dir") or default_cache_dir()
    return TebenchOptions(
        predictions=predictions,
        dataset=str(config.getoption("tebench_dataset")),
        split=str(config.getoption("tebench_split")),
        benchmark=str(config.getoption("tebench_benchmark")),
        repos=tuple(config.getoption("tebench_repos")),
        repo_url=str(config.getoption("tebench_repo_url")),
        offline=bool(config.getoption("tebench_offline")),
        cache_dir=Path(cache_dir).expanduser().resolve(),
        maven_repo=Path(config.getoption("tebench_maven_repo") or Path(cache_dir) / "maven-repository")
        .expanduser()
        .resolve(),
        keep_workspaces=bool(config.getoption("tebench_keep_workspaces")),
        allow_non_test_edits=bool(config.getoption("tebench_allow_non_test_edits")),
        report=config.getoption("tebench_report"),
        min_f1=config.getoption("tebench_min_f1"),
        min_update=config.getoption("tebench_min_update"),
        skip_update=bool(config.getoption("tebench_skip_update")),
        scoring=str(config.getoption("tebench_scoring")),
        executor=str(config.getoption("tebench_executor")),
        jdk=config.getoption("tebench_jdk"),
        maven=config.getoption("tebench_maven"),
        timeout_compile=float(config.getoption("tebench_timeout_compile")),
        timeout_test=float(config.getoption("tebench_timeout_test")),
        image=config.getoption("tebench_image"),
        docker_memory=str(config.getoption("tebench_docker_memory")),
        docker_cpus=float(config.getoption("tebench_docker_cpus")),
    )


def anchor_path(options: TebenchOptions) -> Path:
    """The file pytest collects: the predictions file, or for ``gold`` a small marker file.

    The marker's name and content depend only on the dataset, so every xdist worker writes the
    same file and collects the same items.
    """
    if not options.is_gold:
        return Path(options.predictions)
    spec = json.dumps({"dataset": options.dataset, "split": options.split, "benchmark": options.benchmark})
    digest = hashlib.sha256(spec.encode()).hexdigest()[:16]
    path = options.cache_dir / "anchors" / f"gold-{digest}.tebench"
    if not path.is_file():
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(spec + "\n", encoding="utf-8")
        os.replace(tmp, path)
    return path


def make_adapter(config: pytest.Config, options: TebenchOptions) -> BenchmarkAdapter:
    adapter: BenchmarkAdapter | None = config.hook.pytest_tebench_make_benchmark(
        config=config, name=options.benchmark
    )
    if adapter is None:
        raise pytest.UsageError(f"--tebench-benchmark: no adapter called {options.benchmark!r}")
    return adapter


class TebenchWorker:
    """Role object of a process that runs items."""

    def __init__(self, config: pytest.Config, options: TebenchOptions) -> None:
        self.config = config
        self.options = options
        self.adapter = make_adapter(config, options)
        self._instances: list[BenchmarkInstance] | None = None
        self._context: EvalContext | None = None
        self._executor: Executor | None = None
        config.stash[worker_key] = self

    # -- collection ---------------------------------------------------------------------
    def instances(self) -> list[BenchmarkInstance]:
        if self._instances is None:
            records = load_records(self.options.dataset, split=self.options.split)
            self._instances = self.adapter.load_instances(records)
        return self._instances

    def predictions(self) -> list[Prediction]:
        if self.options.is_gold:
            return gold_predictions(
                (i.instance_id, self.adapter.gold_patch(i) if i.problem is None else "")
                for i in self.instances()
            )
        return load_predictions(Path(self.options.predictions))

    # -- running ------------------------------------------------------------------------
    def context(self) -> EvalContext:
        if self._context is None:
            options = self.options
            self._context = EvalContext(
                cache_dir=options.cache_dir,
                work_dir=options.cache_dir / "workspaces",
                repos=RepositoryStore(
                    options.cache_dir,
                    local_dirs=options.repos,
                    url_template=options.repo_url,
                    allow_network=not options.offline,
                    embedded=_embedded_repositories(),
                ),
                allow_non_test_edits=options.allow_non_test_edits,
                keep_workspaces=options.keep_workspaces,
                update=None
                if options.skip_update
                else UpdateSettings(
                    scoring=options.scoring,
                    jdk=options.jdk,
                    timeout_compile=options.timeout_compile,
                    timeout_test=options.timeout_test,
                    maven_version=options.maven,
                    maven_repo=options.maven_repo,
                ),
                executor=self.executor,
            )
        return self._context

    def executor(self) -> Executor:
        """This process's executor, made on first use through ``pytest_tebench_make_executor``."""
        if self._executor is None:
            executor = self.config.hook.pytest_tebench_make_executor(
                config=self.config, name=self.options.executor
            )
            if executor is None:
                raise HarnessError(f"no executor called {self.options.executor!r}")
            self._executor = executor
        return self._executor

    @pytest.hookimpl
    def pytest_sessionfinish(self) -> None:
        """Worker side: release the executor (containers, clients)."""
        if self._executor is not None:
            self._executor.close()
            self._executor = None


class TebenchController:
    """Role object of the process that receives reports: aggregation, reports, thresholds."""

    def __init__(self, config: pytest.Config, options: TebenchOptions) -> None:
        self.config = config
        self.options = options
        self.adapter = make_adapter(config, options)
        self.records: dict[tuple[str, str], dict[str, Any]] = {}
        self.summary: dict[str, Any] = {}
        self.threshold_failures: list[str] = []
        self.report_written: Path | None = None

    @pytest.hookimpl
    def pytest_sessionstart(self, session: pytest.Session) -> None:
        """Controller: build a missing sandbox image here, once, with progress on the terminal
        (xdist workers have no terminal, and N of them would only wait for each other's lock)."""
        options = self.options
        if options.skip_update or options.image is not None or options.executor == "local":
            return
        from pytest_tebench.run.executors import prepare_docker_image

        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        try:
            prepare_docker_image(
                required=options.executor == "docker",
                progress=(lambda line: reporter.write_line(f"[tebench image] {line}")) if reporter else print,
            )
        except TebenchError as exc:
            # every item will report the same harness error; say it once, up front
            if reporter is not None:
                reporter.write_line(f"[tebench image] cannot prepare the Docker image: {exc}", red=True)

    @pytest.hookimpl
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """Controller: collect records from every report (xdist replays worker reports here)."""
        record = getattr(report, "tebench_record", None)
        if isinstance(record, dict):
            self.records[(str(record["model_name_or_path"]), str(record["instance_id"]))] = record

    @pytest.hookimpl(wrapper=True)
    def pytest_runtestloop(self, session: pytest.Session) -> Generator[None, object, object]:
        # Decide the threshold here: by pytest_sessionfinish it is too late to set testsfailed
        # (pytest-cov's approach), and under xdist this wraps the loop that receives all reports.
        result = yield
        self.summary = self.adapter.summarise(self.sorted_records(), options=self._summary_options())
        self.threshold_failures = check_thresholds(
            self.summary, min_f1=self.options.min_f1, min_update=self.options.min_update
        )
        if self.threshold_failures:
            session.testsfailed += 1
        return result

    @pytest.hookimpl
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        """Controller: build and write the reports."""
        if not self.summary and self.records:
            self.summary = self.adapter.summarise(self.sorted_records(), options=self._summary_options())
        hook = self.config.hook
        report = hook.pytest_tebench_generate_json(
            config=self.config, records=self.sorted_records(), summary=self.summary
        )
        hook.pytest_tebench_update_json(config=self.config, report=report)
        hook.pytest_tebench_write_reports(config=self.config, report=report)

    @pytest.hookimpl
    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        if not self.records:
            return
        terminalreporter.write_sep("=", "tebench summary")
        for line in self.adapter.summary_lines(self.summary):
            terminalreporter.write_line(line)
        if self.options.report is not None:
            terminalreporter.write_line(f"JSON report: {self.options.report}")
        for reason in self.threshold_failures:
            terminalreporter.write_line(f"FAIL {reason}", red=True, bold=True)

    # -- helpers ------------------------------------------------------------------------
    def sorted_records(self) -> list[dict[str, Any]]:
        return [self.records[key] for key in sorted(self.records)]

    def _summary_options(self) -> dict[str, Any]:
        return {"update_scoring": None if self.options.skip_update else self.options.scoring}


def _embedded_repositories() -> dict[str, Any]:
    from pytest_tebench.demo import DEMO_REPO
    from pytest_tebench.demo import build_demo_mirror
    from pytest_tebench.demo.swebench import SWEBENCH_DEMO_REPO
    from pytest_tebench.demo.swebench import build_swebench_demo_mirror

    return {DEMO_REPO: build_demo_mirror, SWEBENCH_DEMO_REPO: build_swebench_demo_mirror}
