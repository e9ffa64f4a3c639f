"""pytest entry point: options, hooks, and one stateful object per process role.

Nothing here happens unless ``--tebench-predictions`` asks for it: installing the package never
changes anyone else's test run. The work is done by

* :class:`~pytest_tebench.roles.TebenchWorker`: on every process that runs items (each xdist
  worker, or the only process): loads instances and predictions, prepares workspaces, runs builds;
* :class:`~pytest_tebench.roles.TebenchController`: on the process that receives reports (the
  xdist controller, or the only process): aggregates result records, writes reports, prints
  the summary and applies the quality gates.

Options are declared next to the code that uses them (``settings.py`` for the core,
``run/executors.py``, ``run/maven/settings.py``, each benchmark's package) and registered here in
one group.
"""

from __future__ import annotations

from collections.abc import Generator
from pathlib import Path

import pytest

from pytest_tebench.context import TebenchOptions
from pytest_tebench.items import TebenchFile
from pytest_tebench.items import TebenchItem
from pytest_tebench.roles import TebenchController
from pytest_tebench.roles import TebenchWorker
from pytest_tebench.roles import all_option_specs
from pytest_tebench.roles import anchor_path
from pytest_tebench.roles import options_from_config
from pytest_tebench.roles import options_key
from pytest_tebench.roles import record_key

#: Marker registered whatever the benchmark; benchmarks register their own (TEBench: labels).
TEBENCH_MARKER = (
    "tebench(project, model): a pytest-tebench item; select with -m \"tebench(project='textkit')\""
)


# Help-text rules (pytest-xdist's): start with a capital; a single phrase has no trailing period;
# several phrases all end with periods.
def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("tebench", "pytest-tebench: evaluate benchmark predictions on real builds")
    for spec in all_option_specs():
        group.addoption(spec.pytest_flag, dest=spec.pytest_dest, **spec.argparse_kwargs())


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(
    early_config: pytest.Config, parser: pytest.Parser, args: list[str]
) -> None:
    """Keep pytest from importing ``conftest.py`` files beside the predictions file.

    pytest imports the conftests of the initial path arguments before ``pytest_configure``;
    an argument that selects items of the predictions file (``run.jsonl::id[model]``) must not
    make it import a conftest shipped with a predictions bundle. ``pytest_configure`` later
    points such arguments at the anchor file in our cache.
    """
    namespace = early_config.known_args_namespace
    predictions = getattr(namespace, "tebench_predictions", None)
    if not predictions:
        return
    target = Path(predictions).expanduser().resolve()
    namespace.file_or_dir = [
        arg for arg in namespace.file_or_dir if Path(arg.partition("::")[0]).expanduser().resolve() != target
    ]


@pytest.hookimpl
def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    from pytest_tebench import defaults
    from pytest_tebench import hookspec

    pluginmanager.add_hookspecs(hookspec)
    pluginmanager.register(defaults, "tebench-defaults")


@pytest.hookimpl
def pytest_configure(config: pytest.Config) -> None:
    """Runs on every process. Registers the role objects and points collection at the anchor."""
    if not config.getoption("tebench_predictions"):
        return
    config.addinivalue_line("markers", TEBENCH_MARKER)
    _check_html_report(config)
    options = options_from_config(config)
    config.stash[options_key] = options
    try:
        anchor = anchor_path(options)
    except OSError as exc:
        # the first write into the cache: a cache dir that is a file or read-only is the user's
        # option, not an INTERNALERROR
        raise pytest.UsageError(
            f"--tebench-cache-dir: cannot write to {options.cache_dir}: {exc.strerror}"
        ) from None
    _collect_anchor(config, anchor, Path(options.predictions))
    is_worker = hasattr(config, "workerinput")
    # xdist turns -n N>0 into a --dist mode before configure; it does not distribute --collect-only
    uses_xdist = config.getoption("dist", default="no") != "no" and not config.getoption("collectonly")
    controller = None if is_worker else TebenchController(config, options)
    if is_worker or not uses_xdist:
        config.pluginmanager.register(TebenchWorker(config, options, controller), "tebench-worker")
    if controller is not None:
        config.pluginmanager.register(controller, "tebench-controller")
        _register_dask(config, options, uses_xdist)


def _register_dask(config: pytest.Config, options: TebenchOptions, uses_xdist: bool) -> None:
    """``--tebench-executor=dask://HOST:PORT``: items are built on a Dask cluster (docs/dask.md)."""
    from pytest_tebench.dask_plugin import register
    from pytest_tebench.dask_plugin import target_from_options

    target = target_from_options(options)
    if target is not None:
        register(config, target, uses_xdist=uses_xdist)


def _check_html_report(config: pytest.Config) -> None:
    """Fail at start, not after an hour of builds, when the HTML report cannot be written."""
    if config.getoption("tebench_html", None) is None:
        return
    from pytest_tebench.errors import InputError
    from pytest_tebench.report.html import require_dependencies

    try:
        require_dependencies("--tebench-html")
    except InputError as exc:
        raise pytest.UsageError(str(exc)) from None


def _collect_anchor(config: pytest.Config, anchor: Path, predictions: Path) -> None:
    """Collect the anchor file (in our cache), never the predictions file itself.

    Collecting a path makes pytest import every ``conftest.py`` above it: a predictions bundle
    could run code. Positional arguments that name the predictions file (``run.jsonl`` or
    ``run.jsonl::id[model]``, to select items) are pointed at the anchor instead; without one
    the anchor is added (xdist workers receive the controller's arguments and run this again).
    """
    if config.args_source != pytest.Config.ArgsSource.ARGS:
        config.args = [str(anchor)]
        return
    names = {str(anchor), str(predictions)}
    rewritten: list[str] = []
    refers = False
    for arg in config.args:
        path, sep, rest = arg.partition("::")
        if str(Path(path).expanduser().resolve()) in names:
            rewritten.append(str(anchor) + sep + rest)
            refers = True
        else:
            rewritten.append(arg)
    config.args = rewritten if refers else [*rewritten, str(anchor)]


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
