"""The benchmarks pytest-tebench ships, each in its own package, and how to reach them by name.

A built-in benchmark package provides an option list (``OptionSpec`` values, cheap to import:
the pytest plugin registers them at start-up) and a factory that makes its adapter from the
run's option values. Plugins and conftests add benchmarks through the
``pytest_tebench_make_benchmark`` hook instead (their options are their own ``pytest_addoption``).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING
from typing import Any

from pytest_tebench.settings import OptionSpec
from pytest_tebench.settings import unique_specs

if TYPE_CHECKING:
    from pytest_tebench.benchmarks.base import BenchmarkAdapter

#: name -> (``module:OPTIONS`` attribute, ``module:factory``); the factory is called with the
#: run's option values (keyed by dest) and the cache directory.
BUILTIN_BENCHMARKS: dict[str, tuple[str, str]] = {
    "tebench": (
        "pytest_tebench.benchmarks.tebench.settings:TEBENCH_OPTIONS",
        "pytest_tebench.benchmarks.tebench.adapter:create_adapter",
    ),
    "swebench": (
        "pytest_tebench.benchmarks.swebench.settings:SWEBENCH_OPTIONS",
        "pytest_tebench.benchmarks.swebench.adapter:create_adapter",
    ),
    "swtbench": (
        "pytest_tebench.benchmarks.swtbench.settings:SWTBENCH_OPTIONS",
        "pytest_tebench.benchmarks.swtbench.adapter:create_adapter",
    ),
    "realcode": (
        "pytest_tebench.benchmarks.realcode.settings:REALCODE_OPTIONS",
        "pytest_tebench.benchmarks.realcode.adapter:create_adapter",
    ),
}


def _load(reference: str) -> Any:
    module, _, attribute = reference.partition(":")
    return getattr(importlib.import_module(module), attribute)


def builtin_options() -> list[OptionSpec]:
    """Every built-in benchmark's options, each name once."""
    return unique_specs(*(_load(options) for options, _ in BUILTIN_BENCHMARKS.values()))


def make_builtin(
    name: str, values: Mapping[str, Any], cache_dir: Path, progress: Callable[[str], None] | None = None
) -> BenchmarkAdapter | None:
    """The built-in adapter called ``name``, or None when there is none. ``progress`` shows long
    preparations (environment image builds) while an item runs."""
    entry = BUILTIN_BENCHMARKS.get(name)
    if entry is None:
        return None
    adapter: BenchmarkAdapter = _load(entry[1])(values, cache_dir, progress)
    return adapter
