"""Flatten a result record into ``tebench.*`` JUnit XML properties.

pytest writes ``item.user_properties`` as ``<property name=... value=...>`` elements, one per
pair, with ``str(value)``. CI dashboards (GitLab, Jenkins, junitparser scripts) can only read
flat scalars there, so nested blocks become dotted names under one ``tebench.`` namespace and
lists become comma-joined strings.

The neutral fields come from here (identity and status first, timings and error last); the
benchmark's own ones (TEBench's labels and scores, SWE-bench's resolution) come from its
adapter's ``junit_properties`` and go in between. Order is fixed so the XML is stable between
runs. Floats are rounded to 6 decimals like the JSON report; a value that does not exist is an
empty string, never the text "None".
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
from typing import Any

#: A JUnit property value: plain scalars only.
Scalar = str | int | float | bool | None
Property = tuple[str, Scalar]

PREFIX = "tebench."
_FLOAT_DECIMALS = 6


def scalar(value: Any) -> Scalar:
    """Coerce ``value`` to a JUnit-friendly scalar.

    Floats are rounded (non-finite ones become ""), sequences are comma-joined, ``None`` is "",
    anything else non-scalar is stringified rather than dropped, so no information silently
    vanishes.
    """
    if value is None:
        return ""
    if isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return round(value, _FLOAT_DECIMALS) + 0.0 if math.isfinite(value) else ""
    if isinstance(value, list | tuple | set | frozenset):
        items = sorted(value, key=str) if isinstance(value, set | frozenset) else value
        return ",".join(str(item) for item in items)
    return str(value)


def block_properties(name: str, block: Mapping[str, Any] | None, fields: Iterable[str]) -> list[Property]:
    """``tebench.<name>.<field>`` for each of ``fields`` present in ``block``."""
    if block is None:
        return []
    return [(f"{PREFIX}{name}.{field}", scalar(block.get(field))) for field in fields if field in block]


def record_to_properties(record: Mapping[str, Any], benchmark: Sequence[Property] = ()) -> list[Property]:
    """The record as ordered ``(name, scalar)`` pairs, ready for ``item.user_properties``:
    identity and status, then the benchmark's own ``benchmark`` properties, then per-phase
    timings and the error message when there is one."""
    properties: list[Property] = [
        (f"{PREFIX}instance_id", scalar(record.get("instance_id"))),
        (f"{PREFIX}model", scalar(record.get("model_name_or_path"))),
        (f"{PREFIX}project", scalar(record.get("project"))),
        (f"{PREFIX}status", scalar(record.get("status"))),
    ]
    properties += benchmark
    timings = record.get("timings") or {}
    properties += [(f"{PREFIX}timings.{phase}", scalar(timings[phase])) for phase in sorted(timings)]
    if record.get("error"):
        properties.append((f"{PREFIX}error", scalar(record["error"])))
    return properties
