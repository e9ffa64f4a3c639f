"""Validators of dataset row fields, shared by every benchmark's ``load_instances``.

Each raises ``ValueError`` with a message naming the field; adapters turn it into the
instance's ``problem`` (an error item naming the row), never an exception that stops the run.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from pytest_tebench.benchmarks.base import BenchmarkInstance
from pytest_tebench.instance.datasets import RawRecord

SHA = re.compile(r"^[0-9a-fA-F]{7,64}$")
SLUG = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")


def text_field(data: dict[str, Any], name: str, *, allow_empty: bool = False) -> str:
    value = data.get(name)
    if value is None:
        raise ValueError(f"field {name!r} is missing")
    if not isinstance(value, str):
        raise ValueError(f"field {name!r} must be a string, not {type(value).__name__}")
    if not allow_empty and not value.strip():
        raise ValueError(f"field {name!r} is empty")
    return value


def date_field(data: dict[str, Any], name: str) -> str:
    """An optional ISO 8601 time (``2021-08-30T09:57:08-07:00``, ``...Z``, a bare date) as
    written, "" when absent or empty."""
    value = data.get(name)
    if value is None or (isinstance(value, str) and not value.strip()):
        return ""
    if not isinstance(value, str):
        raise ValueError(f"field {name!r} must be a string, not {type(value).__name__}")
    try:
        datetime.fromisoformat(value.strip())
    except ValueError:
        raise ValueError(f"field {name!r} is not an ISO 8601 date: {value!r}") from None
    return value.strip()


def sha_field(data: dict[str, Any], name: str) -> str:
    value = text_field(data, name).strip()
    if not SHA.match(value):
        raise ValueError(f"field {name!r} is not a commit hash: {value!r}")
    return value


def slug_field(data: dict[str, Any]) -> str:
    value = text_field(data, "repo").strip()
    if not SLUG.match(value):
        raise ValueError(f"field 'repo' must look like 'owner/name', not {value!r}")
    return value


def with_problem(instance: BenchmarkInstance, problem: str) -> BenchmarkInstance:
    """``instance`` marked unusable: its items become errors naming the row and the reason."""
    return BenchmarkInstance(
        instance.instance_id,
        instance.project,
        instance.repo,
        instance.labels,
        instance.origin,
        instance.payload,
        f"{instance.origin}: instance {instance.instance_id}: {problem}",
    )


def load_rows(
    records: Sequence[RawRecord], validate: Callable[[RawRecord], BenchmarkInstance]
) -> list[BenchmarkInstance]:
    """Every row through ``validate``; a second row with an id already seen becomes a problem
    (its items are errors naming both rows) rather than silently shadowing the first."""
    instances: list[BenchmarkInstance] = []
    seen: dict[str, str] = {}
    for record in records:
        instance = validate(record)
        if instance.problem is None and instance.instance_id in seen:
            first = seen[instance.instance_id]
            instance = with_problem(instance, f"duplicate instance_id (first at {first})")
        seen.setdefault(instance.instance_id, record.origin)
        instances.append(instance)
    return instances
