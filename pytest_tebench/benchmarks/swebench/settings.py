"""SWE-bench's own options (registered in the plugin's one ``--tebench-*`` group)."""

from __future__ import annotations

import argparse
from pathlib import Path

from pytest_tebench.benchmarks.swebench import pypi_dates
from pytest_tebench.settings import OptionSpec
from pytest_tebench.settings import seconds

#: SWE-bench's own default per-instance limit.
DEFAULT_TIMEOUT = 1800.0


def pypi_date(value: str) -> str:
    """``today`` or a time :func:`.pypi_dates.parse_time` reads (kept as written: it is in result keys)."""
    if value != "today":
        try:
            pypi_dates.parse_time(value)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not 'today' nor an ISO 8601 date or time: {value!r}") from None
    return value


SWEBENCH_OPTIONS: tuple[OptionSpec, ...] = (
    OptionSpec(
        "swebench-report", metavar="PATH", type=Path,
        help="SWE-bench: also write SWE-bench's own run report (resolved_ids, unresolved_ids, "
        "empty_patch_ids, error_ids...) to PATH (one file per model).",
    ),
    OptionSpec(
        "swebench-network", action="store_true",
        help="SWE-bench: let the tests use the network (some requests tests call httpbin.org). "
        "Off by default: tests run with --network none.",
    ),
    OptionSpec(
        "swebench-pypi-date", metavar="DATE|today", type=pypi_date,
        help="SWE-bench: environments install unpinned packages as PyPI stood on DATE (ISO 8601), or "
        "'today'. Default: 2023-11-01T00:00:00Z, when SWE-bench's test lists were made.",
    ),
    OptionSpec(
        "swebench-images", choices=("build", "official", "auto"), default="auto",
        help="SWE-bench: where instances run: 'build' (environments built here from Debian and PyPI), "
        "'official' (each instance's official image swebench/sweb.eval.x86_64.<id>:latest, present "
        "locally or pulled), 'auto' (build where we can, else the official image). Default: %(default)s.",
    ),
    OptionSpec(
        "swebench-timeout", metavar="SECONDS", type=seconds, default=DEFAULT_TIMEOUT,
        help="SWE-bench: time limit of one instance's tests. Default: %(default)s.",
    ),
)  # fmt: skip
