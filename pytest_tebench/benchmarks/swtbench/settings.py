"""SWT-bench's options: those of SWE-bench, whose environments it runs in (timeout, network, PyPI date)."""

from __future__ import annotations

from pytest_tebench.benchmarks.swebench.settings import SWEBENCH_OPTIONS
from pytest_tebench.settings import OptionSpec

SWTBENCH_OPTIONS: tuple[OptionSpec, ...] = SWEBENCH_OPTIONS
