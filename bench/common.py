"""Shared set-up of the benchmark scripts: the demo instances and an evaluation context."""

from __future__ import annotations

import json
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from typing import TypeVar

from pytest_tebench.benchmarks.base import BenchmarkInstance
from pytest_tebench.benchmarks.base import EvalContext
from pytest_tebench.benchmarks.tebench.adapter import TebenchAdapter
from pytest_tebench.benchmarks.tebench.adapter import create_adapter
from pytest_tebench.context import TebenchOptions
from pytest_tebench.context import build_context
from pytest_tebench.instance.datasets import load_records
from pytest_tebench.run.executor import Executor

ROOT = Path(__file__).resolve().parent.parent
MAVEN_REPO = Path.home() / ".cache" / "pytest-tebench-bench" / "maven-repository"
T = TypeVar("T")


def demo_instances() -> dict[str, BenchmarkInstance]:
    return {i.instance_id: i for i in TebenchAdapter().load_instances(load_records("demo"))}


def predictions(name: str) -> dict[str, str]:
    """instance id -> patch of one demo predictions file."""
    lines = (ROOT / "predictions" / name).read_text().splitlines()
    return {json.loads(line)["instance_id"]: json.loads(line)["model_patch"] for line in lines}


def context(executor: Executor, cache_dir: Path | None = None) -> EvalContext:
    """The plugin's evaluation context (``build_context``) on a fresh cache, offline."""
    cache = cache_dir or Path(tempfile.mkdtemp(prefix="tebench-bench-"))
    options = TebenchOptions(predictions="gold", offline=True, cache_dir=cache)
    return build_context(options, executor=lambda: executor)


def adapter(maven_repo: Path = MAVEN_REPO, *, recompile: bool = False) -> TebenchAdapter:
    """The TEBench adapter as the plugin makes it, with paper scoring on ``maven_repo``
    (``recompile``: ``--tebench-recompile``, production code compiled in every launch)."""
    return create_adapter({"maven_repo": maven_repo, "recompile": recompile}, Path(tempfile.gettempdir()))


def timed(action: Callable[[], T]) -> tuple[T, float]:
    started = time.perf_counter()
    value = action()
    return value, time.perf_counter() - started


def median(values: list[float]) -> float:
    ordered = sorted(values)
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2


def show(label: str, value: Any) -> None:
    print(f"{label:<58} {value}")
