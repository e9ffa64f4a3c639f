"""Option declarations shared by the pytest plugin and the ``tebench`` command.

Every setting is declared once, as an :class:`OptionSpec` (name, type, default, help), next to
the code that uses it: the core's here, the executors' in ``run/executors.py``, the Maven
builds' in ``run/maven/settings.py``, each benchmark's in its own package. The pytest plugin
registers them as ``--tebench-NAME`` in its one option group; the ``tebench`` command adds the
ones a subcommand needs as ``--NAME``. So a default or a validator is written in one place.

Pure data and argparse types: nothing here imports pytest.
"""

from __future__ import annotations

import argparse
import math
import re
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: The one option prefix of the pytest plugin.
PYTEST_PREFIX = "--tebench-"


@dataclass(frozen=True)
class OptionSpec:
    """One setting: ``--tebench-NAME`` in pytest, ``--NAME`` in the ``tebench`` command.

    ``dest`` (the key in settings mappings) is ``NAME`` with dashes turned into underscores.
    """

    name: str
    help: str
    default: Any = None
    type: Callable[[str], Any] | None = None
    metavar: str | None = None
    #: ``"store_true"`` for flags, ``"append"`` for repeatable options; None stores one value.
    action: str | None = None
    choices: tuple[str, ...] | None = None

    @property
    def dest(self) -> str:
        return self.name.replace("-", "_")

    @property
    def pytest_flag(self) -> str:
        return PYTEST_PREFIX + self.name

    @property
    def pytest_dest(self) -> str:
        return "tebench_" + self.dest

    def argparse_kwargs(self) -> dict[str, Any]:
        """Keyword arguments for ``parser.addoption`` / ``ArgumentParser.add_argument``."""
        kwargs: dict[str, Any] = {"help": self.help}
        if self.action is not None:
            kwargs["action"] = self.action
        if self.action != "store_true":
            if self.type is not None:
                kwargs["type"] = self.type
            if self.metavar is not None:
                kwargs["metavar"] = self.metavar
            if self.choices is not None:
                kwargs["choices"] = self.choices
        kwargs["default"] = [] if self.action == "append" and self.default is None else self.default
        if self.action == "store_true":
            kwargs["default"] = bool(self.default)
        return kwargs


def unique_specs(*groups: Iterable[OptionSpec]) -> list[OptionSpec]:
    """Specs of several groups, each name once (benchmarks may share the Maven group)."""
    seen: dict[str, OptionSpec] = {}
    for group in groups:
        for spec in group:
            seen.setdefault(spec.name, spec)
    return list(seen.values())


# -- validated types (argparse ``type=`` callables) -------------------------------------------
def fraction(value: str) -> float:
    number = _finite(value, "a number")
    if not 0.0 <= number <= 1.0:
        raise argparse.ArgumentTypeError(f"must be between 0 and 1, got {value}")
    return number


def _finite(value: str, what: str) -> float:
    try:
        number = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not {what}: {value!r}") from None
    if not math.isfinite(number):
        # nan compares false with everything: a nan limit would silently mean "no limit"
        raise argparse.ArgumentTypeError(f"not a finite number: {value!r}")
    return number


def positive(value: str, what: str) -> float:
    number = _finite(value, f"a number of {what}")
    if number <= 0:
        raise argparse.ArgumentTypeError(f"must be positive, got {value}")
    return number


def seconds(value: str) -> float:
    return positive(value, "seconds")


def cpus(value: str) -> float:
    return positive(value, "CPUs")


def existing_dir(value: str) -> Path:
    path = Path(value).expanduser()
    if not path.is_dir():
        raise argparse.ArgumentTypeError(f"not a directory: {value}")
    return path.resolve()


#: Bytes per unit of a memory size, as Docker reads them (no unit: bytes).
_MEMORY_UNITS = {"": 1, "b": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}
#: Docker refuses a container memory limit below 6 MiB, and only when it creates the container.
MIN_MEMORY = 6 << 20


def memory(value: str) -> str:
    found = re.fullmatch(r"([0-9]+)([bkmg]?)", value.lower())
    if found is None:
        raise argparse.ArgumentTypeError(f"not a memory size like 4g or 512m: {value!r}")
    if int(found[1]) * _MEMORY_UNITS[found[2]] < MIN_MEMORY:
        raise argparse.ArgumentTypeError(f"{value!r} is less than Docker's smallest memory limit, 6m")
    return value.lower()


def url_template(value: str) -> str:
    if "{repo}" not in value:
        raise argparse.ArgumentTypeError("the URL template must contain {repo}")
    return value


def metric_threshold(value: str) -> tuple[str, float]:
    """``METRIC=VALUE`` of ``--tebench-fail-under``, e.g. ``f1=0.5`` or ``resolved=0.3``."""
    metric, sep, number = value.partition("=")
    metric = metric.strip()
    if not sep or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.]*", metric):
        raise argparse.ArgumentTypeError(f"expected METRIC=VALUE (e.g. f1=0.5), got {value!r}")
    return metric, fraction(number.strip())


def default_cache_dir() -> Path:
    """``$XDG_CACHE_HOME/pytest-tebench`` or ``~/.cache/pytest-tebench``."""
    import os

    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "pytest-tebench"


#: The benchmark-neutral options of a run (executors, Maven builds and each benchmark declare
#: their own next to their code).
CORE_OPTIONS: tuple[OptionSpec, ...] = (
    OptionSpec(
        "predictions", metavar="PATH|gold",
        help="Predictions to evaluate (.jsonl, or .json list / id-keyed dict, SWE-bench fields), "
        "or 'gold' for every selected instance's gold patch. Turns the plugin on.",
    ),
    OptionSpec(
        "dataset", metavar="NAME|PATH", default="demo",
        help="Benchmark instances: a Hugging Face dataset name, a local .jsonl/.json/.parquet file, "
        "or 'demo' for the embedded demo of the benchmark. Default: %(default)s.",
    ),
    OptionSpec("split", metavar="SPLIT", default="test",
               help="Dataset split for Hugging Face datasets. Default: %(default)s."),
    OptionSpec("benchmark", metavar="NAME", default="tebench",
               help="Benchmark adapter to use (built in: tebench; plugins add more). Default: %(default)s."),
    OptionSpec(
        "repos", metavar="DIR", action="append", type=existing_dir,
        help="Directory of local clones or mirrors (DIR/owner/name, DIR/owner+name, DIR/owner__name or "
        "DIR/name, optionally ending in .git, or DIR/owner+name/repo as fetch writes it), searched "
        "before cloning. May be repeated.",
    ),
    OptionSpec(
        "repo-url", metavar="TEMPLATE", default="https://github.com/{repo}.git", type=url_template,
        help="Clone URL for repositories not found locally; {repo} is owner/name. Default: %(default)s.",
    ),
    OptionSpec("offline", action="store_true",
               help="Never clone or fetch: every repository must be found with --tebench-repos."),
    OptionSpec(
        "cache-dir", metavar="DIR", type=Path,
        help="Cache for mirrors, workspaces and results. Default: $XDG_CACHE_HOME/pytest-tebench "
        "or ~/.cache/pytest-tebench.",
    ),
    OptionSpec("keep-workspaces", action="store_true",
               help="Keep each item's workspace after the item (their paths go into the report)."),
    OptionSpec("report", metavar="PATH", type=Path,
               help="Write the JSON report (schema in docs/report-format.md) to PATH."),
    OptionSpec(
        "html", metavar="PATH", type=Path,
        help="Write a self-contained HTML report (leaderboard, plots, per-item patches) to PATH. "
        "Needs the html extra: pip install 'pytest-tebench[html]'.",
    ),
    OptionSpec(
        "fail-under", metavar="METRIC=X", action="append", type=metric_threshold,
        help="Fail the session when a model's METRIC is below X (0..1); the benchmark names its "
        "metrics (TEBench: f1, precision, recall, macro_f1, oa; see the docs). May be repeated.",
    ),
    OptionSpec(
        "rerun", action="store_true",
        help="Evaluate every item again, ignoring results stored by earlier runs under the same "
        "content key (they are still updated).",
    ),
    OptionSpec(
        "skip-missing", action="store_true",
        help="Evaluate only the instances a model has lines for. By default every selected instance "
        "without a line is an item of status missing_prediction, scored like an empty patch.",
    ),
)  # fmt: skip


def without_paths(values: Mapping[str, Any], drop: Iterable[str] = ()) -> dict[str, Any]:
    """Option values with the ``drop`` keys and every value holding a path left out: paths belong
    to one machine (a Dask worker cannot use them; two identical runs' reports must not differ)."""

    def has_path(value: Any) -> bool:
        if isinstance(value, list | tuple):
            return any(has_path(item) for item in value)
        return isinstance(value, Path)

    dropped = set(drop)
    return {key: value for key, value in values.items() if key not in dropped and not has_path(value)}
