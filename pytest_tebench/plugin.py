"""pytest entry point: options, hooks, and one stateful object per process role.

Nothing here happens unless a ``--tebench-*`` option asks for it: installing the package never
changes anyone else's test run. The work is done by

* :class:`~pytest_tebench.roles.TebenchWorker`: on every process that runs items (each xdist
  worker, or the only process): loads instances and predictions, prepares workspaces, runs builds;
* :class:`~pytest_tebench.roles.TebenchController`: on the process that receives reports (the
  xdist controller, or the only process): aggregates result records, writes reports, prints
  the summary and applies the score thresholds.
"""

from __future__ import annotations

import argparse
import os
import re
from collections.abc import Generator
from pathlib import Path

import pytest

from pytest_tebench.items import TebenchFile
from pytest_tebench.items import TebenchItem
from pytest_tebench.roles import TebenchController
from pytest_tebench.roles import TebenchWorker
from pytest_tebench.roles import anchor_path
from pytest_tebench.roles import options_from_config
from pytest_tebench.roles import options_key
from pytest_tebench.roles import record_key

MARKERS = (
    "breaking: the instance's gold patch fixes existing tests that break on V-0.5",
    "stale: the instance's gold patch updates existing tests that still pass on V-0.5",
    "missing: the instance's gold patch adds new tests",
    "tebench(project, model): a pytest-tebench item; select with -m \"tebench(project='textkit')\"",
)


# Help-text rules (pytest-xdist's): start with a capital; a single phrase has no trailing period;
# several phrases all end with periods.
def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("tebench", "pytest-tebench: evaluate benchmark predictions on real builds")
    group.addoption(
        "--tebench-predictions",
        dest="tebench_predictions",
        metavar="PATH|gold",
        help="Predictions to evaluate (.jsonl, or .json list / id-keyed dict, SWE-bench fields), "
        "or 'gold' for every selected instance's gold patch. Turns the plugin on.",
    )
    group.addoption(
        "--tebench-dataset",
        dest="tebench_dataset",
        metavar="NAME|PATH",
        default="demo",
        help="Benchmark instances: a Hugging Face dataset name, a local .jsonl/.json/.parquet file, "
        "or 'demo' for the embedded demo benchmark. Default: %(default)s.",
    )
    group.addoption(
        "--tebench-split", dest="tebench_split", metavar="SPLIT", default="test",
        help="Dataset split for Hugging Face datasets. Default: %(default)s.",
    )  # fmt: skip
    group.addoption(
        "--tebench-benchmark", dest="tebench_benchmark", metavar="NAME", default="tebench",
        help="Benchmark adapter to use. Default: %(default)s.",
    )  # fmt: skip
    group.addoption(
        "--tebench-repos",
        dest="tebench_repos",
        metavar="DIR",
        action="append",
        type=_existing_dir,
        default=[],
        help="Directory of local clones or mirrors (DIR/owner/name, DIR/owner+name or DIR/name, "
        "optionally ending in .git), searched before cloning. May be repeated.",
    )
    group.addoption(
        "--tebench-repo-url", dest="tebench_repo_url", metavar="TEMPLATE",
        default="https://github.com/{repo}.git", type=_url_template,
        help="Clone URL for repositories not found locally; {repo} is owner/name. Default: %(default)s.",
    )  # fmt: skip
    group.addoption(
        "--tebench-offline", dest="tebench_offline", action="store_true",
        help="Never clone or fetch: every repository must be found with --tebench-repos.",
    )  # fmt: skip
    group.addoption(
        "--tebench-cache-dir", dest="tebench_cache_dir", metavar="DIR", type=Path, default=None,
        help="Cache for mirrors and workspaces. Default: $XDG_CACHE_HOME/pytest-tebench "
        "or ~/.cache/pytest-tebench.",
    )  # fmt: skip
    group.addoption(
        "--tebench-maven-repo", dest="tebench_maven_repo", metavar="DIR", type=Path, default=None,
        help="Maven local repository shared by all builds (warmed online once per project, then used "
        "offline). Default: <cache-dir>/maven-repository.",
    )  # fmt: skip
    group.addoption(
        "--tebench-keep-workspaces", dest="tebench_keep_workspaces", action="store_true",
        help="Keep each item's workspace after the item (their paths go into the report).",
    )  # fmt: skip
    group.addoption(
        "--tebench-allow-non-test-edits", dest="tebench_allow_non_test_edits", action="store_true",
        help="Also apply prediction hunks outside the test tree (production code, pom.xml). "
        "Off by default: a prediction must not change the code it is judged against.",
    )  # fmt: skip
    group.addoption(
        "--tebench-report", dest="tebench_report", metavar="PATH", type=Path, default=None,
        help="Write the JSON report (schema in docs/report-format.md) to PATH.",
    )  # fmt: skip
    group.addoption(
        "--tebench-swebench-report", dest="tebench_swebench_report", metavar="PATH", type=Path, default=None,
        help="With --tebench-benchmark=swebench: also write SWE-bench's own run report (resolved_ids, "
        "unresolved_ids, empty_patch_ids, error_ids...) to PATH (one file per model).",
    )  # fmt: skip
    group.addoption(
        "--tebench-swebench-network", dest="tebench_swebench_network", action="store_true",
        help="With --tebench-benchmark=swebench: let the tests use the network (some requests tests call "
        "httpbin.org). Off by default: tests run with --network none.",
    )  # fmt: skip
    group.addoption(
        "--tebench-swebench-pypi-date", dest="tebench_swebench_pypi_date", metavar="DATE|today", default=None,
        help="With --tebench-benchmark=swebench: environments install unpinned packages as PyPI stood on "
        "DATE (ISO 8601), or 'today'. Default: 2023-11-01T00:00:00Z, when SWE-bench's test lists were made.",
    )  # fmt: skip
    group.addoption(
        "--tebench-min-f1", dest="tebench_min_f1", metavar="X", type=_fraction, default=None,
        help="Fail the session when a model's micro identification F1 is below X (0..1).",
    )  # fmt: skip
    group.addoption(
        "--tebench-min-update", dest="tebench_min_update", metavar="X", type=_fraction, default=None,
        help="Fail the session when a model's update score OA (mean s_update) is below X (0..1).",
    )  # fmt: skip
    group.addoption(
        "--tebench-skip-update", dest="tebench_skip_update", action="store_true",
        help="Score identification only: no builds, no update metrics (fast, needs no JDK or Maven).",
    )  # fmt: skip
    group.addoption(
        "--tebench-scoring", dest="tebench_scoring", choices=("paper", "reference"), default="paper",
        help="Composite update score: 'paper' (s_exec x (0.3 s_line + 0.3 s_branch + 0.4 s_mod)) "
        "or 'reference' (the reference code's variant). Default: %(default)s.",
    )  # fmt: skip
    group.addoption(
        "--tebench-executor", dest="tebench_executor", choices=("local", "docker", "auto"), default="local",
        help="Where builds run: 'local' (host JDK and Maven), 'docker' (sandboxed, offline) or "
        "'auto' (Docker when an engine answers). Default: %(default)s.",
    )  # fmt: skip
    group.addoption(
        "--tebench-jdk", dest="tebench_jdk", metavar="VERSION|PATH", default=None, type=_jdk,
        help="JDK for every build: a feature version (8, 11, 17) or a JDK home. "
        "Default: chosen per instance from the build's target level.",
    )  # fmt: skip
    group.addoption(
        "--tebench-maven", dest="tebench_maven", metavar="VERSION", default=None, type=_maven_version,
        help="Maven version to download from Maven Central and use (e.g. 3.9.9). Default: the mvn on PATH.",
    )  # fmt: skip
    group.addoption(
        "--tebench-timeout-compile", dest="tebench_timeout_compile", metavar="SECONDS", type=_seconds,
        default=300.0, help="Time limit of a compile phase. Default: %(default)s.",
    )  # fmt: skip
    group.addoption(
        "--tebench-timeout-test", dest="tebench_timeout_test", metavar="SECONDS", type=_seconds,
        default=900.0, help="Time limit of a test phase. Default: %(default)s.",
    )  # fmt: skip
    group.addoption(
        "--tebench-image", dest="tebench_image", metavar="NAME", default=None,
        help="Docker image for builds instead of the locally built pytest-tebench/java image.",
    )  # fmt: skip
    group.addoption(
        "--tebench-docker-memory", dest="tebench_docker_memory", metavar="SIZE", default="4g", type=_memory,
        help="Memory limit of a build container (e.g. 4g, 512m). Default: %(default)s.",
    )  # fmt: skip
    group.addoption(
        "--tebench-docker-cpus", dest="tebench_docker_cpus", metavar="N", type=_cpus, default=2.0,
        help="CPU limit of a build container. Default: %(default)s.",
    )  # fmt: skip


def _existing_dir(value: str) -> Path:
    path = Path(value).expanduser()
    if not path.is_dir():
        raise argparse.ArgumentTypeError(f"not a directory: {value}")
    return path.resolve()


def _fraction(value: str) -> float:
    try:
        number = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {value!r}") from None
    if not 0.0 <= number <= 1.0:
        raise argparse.ArgumentTypeError(f"must be between 0 and 1, got {value}")
    return number


def _positive(value: str, what: str) -> float:
    try:
        number = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of {what}: {value!r}") from None
    if number <= 0:
        raise argparse.ArgumentTypeError(f"must be positive, got {value}")
    return number


def _seconds(value: str) -> float:
    return _positive(value, "seconds")


def _cpus(value: str) -> float:
    return _positive(value, "CPUs")


def _jdk(value: str) -> str:
    if value.isdigit() or Path(value).is_dir():
        return value
    raise argparse.ArgumentTypeError(f"not a JDK feature version or directory: {value!r}")


def _maven_version(value: str) -> str:
    if re.fullmatch(r"\d+\.\d+\.\d+", value):
        return value
    raise argparse.ArgumentTypeError(f"not a Maven version like 3.9.9: {value!r}")


def _memory(value: str) -> str:
    if re.fullmatch(r"\d+[bkmg]?", value.lower()):
        return value.lower()
    raise argparse.ArgumentTypeError(f"not a memory size like 4g or 512m: {value!r}")


def _url_template(value: str) -> str:
    if "{repo}" not in value:
        raise argparse.ArgumentTypeError("the URL template must contain {repo}")
    return value


@pytest.hookimpl
def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    from pytest_tebench import defaults
    from pytest_tebench import hookspec

    pluginmanager.add_hookspecs(hookspec)
    pluginmanager.register(defaults, "tebench-defaults")


@pytest.hookimpl
def pytest_configure(config: pytest.Config) -> None:
    """Runs on every process. Registers the role objects and points collection at the predictions."""
    if not config.getoption("tebench_predictions"):
        return
    for line in MARKERS:
        config.addinivalue_line("markers", line)
    options = options_from_config(config)
    config.stash[options_key] = options
    anchor = anchor_path(options)
    # No positional paths: collect only the predictions. With paths: add ours, once (xdist
    # workers receive the controller's args and run this hook again).
    if config.args_source != pytest.Config.ArgsSource.ARGS:
        config.args = [str(anchor)]
    elif str(anchor) not in config.args:
        config.args.append(str(anchor))
    is_worker = hasattr(config, "workerinput")
    # xdist turns -n N>0 into a --dist mode before configure; it does not distribute --collect-only
    uses_xdist = config.getoption("dist", default="no") != "no" and not config.getoption("collectonly")
    if is_worker or not uses_xdist:
        config.pluginmanager.register(TebenchWorker(config, options), "tebench-worker")
    if not is_worker:
        config.pluginmanager.register(TebenchController(config, options), "tebench-controller")


@pytest.hookimpl
def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> TebenchFile | None:
    options = parent.config.stash.get(options_key, None)
    if options is None or file_path != anchor_path(options):
        return None
    # nodeid keeps item ids stable ("run.jsonl::id[model]") wherever the file lives
    return TebenchFile.from_parent(parent, path=file_path, nodeid=options.anchor_nodeid)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """Attach the item's result record (plain data) to its report, so it reaches the controller.

    Runs where the item runs; xdist serialises the extra attribute with the report.
    """
    report: pytest.TestReport = yield
    if isinstance(item, TebenchItem):
        record = item.stash.get(record_key, None)
        if record is not None and (call.when == "call" or report.failed or report.skipped):
            report.tebench_record = record  # type: ignore[attr-defined]
    return report


def default_cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "pytest-tebench"
