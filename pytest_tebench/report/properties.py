"""Flatten a result record into ``tebench.*`` JUnit XML properties.

pytest writes ``item.user_properties`` as ``<property name=... value=...>`` elements, one per
pair, with ``str(value)``. CI dashboards (GitLab, Jenkins, junitparser scripts) can only read
flat scalars there, so nested blocks become dotted names under one ``tebench.`` namespace and
lists become comma-joined strings.

Property order is fixed (identity, outcome, identification, update, timings, error) so the XML
is stable between runs. Floats are rounded to 6 decimals like the JSON report.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from collections.abc import Mapping
from typing import Any

from pytest_tebench.metrics.aggregate import UPDATE_COMPONENTS
from pytest_tebench.metrics.aggregate import Record
from pytest_tebench.metrics.aggregate import labels_of

#: A JUnit property value: plain scalars only.
Scalar = str | int | float | bool | None
Property = tuple[str, Scalar]

PREFIX = "tebench."
_IDENTIFICATION_FIELDS: tuple[str, ...] = ("tp", "fp", "fn", "precision", "recall", "f1")
_UPDATE_FIELDS: tuple[str, ...] = (*UPDATE_COMPONENTS, "s_update", "gt_has_coverage_change")
_FLOAT_DECIMALS = 6
_SWEBENCH_FIELDS: tuple[str, ...] = (
    "repo", "version", "python", "image", "resolved", "resolution",
    "f2p_success", "f2p_failure", "p2p_success", "p2p_failure",
)  # fmt: skip


def scalar(value: Any) -> Scalar:
    """Coerce ``value`` to a JUnit-friendly scalar.

    Floats are rounded (non-finite ones become ``None``), sequences are comma-joined, anything
    else non-scalar is stringified rather than dropped, so no information silently vanishes.
    """
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return round(value, _FLOAT_DECIMALS) + 0.0 if math.isfinite(value) else None
    if isinstance(value, list | tuple | set | frozenset):
        items = sorted(value, key=str) if isinstance(value, set | frozenset) else value
        return ",".join(str(item) for item in items)
    return str(value)


def _block(name: str, block: Mapping[str, Any] | None, fields: Iterable[str]) -> list[Property]:
    if block is None:
        return []
    return [(f"{PREFIX}{name}.{field}", scalar(block.get(field))) for field in fields if field in block]


def record_to_properties(record: Record) -> list[Property]:
    """The record as ordered ``(name, scalar)`` pairs, ready for ``item.user_properties``.

    Always present: instance_id, model, project, labels, status, apply_method. Present when the
    record has them: identification and update scores, non-test files the prediction touched,
    per-phase timings, and the error message.
    """
    properties: list[Property] = [
        (f"{PREFIX}instance_id", scalar(record.get("instance_id"))),
        (f"{PREFIX}model", scalar(record.get("model_name_or_path"))),
        (f"{PREFIX}project", scalar(record.get("project"))),
        # Canonical label order (breaking, stale, missing) regardless of how the dataset lists them.
        (f"{PREFIX}labels", ",".join(labels_of(record))),
        (f"{PREFIX}status", scalar(record.get("status"))),
        (f"{PREFIX}apply_method", scalar(record.get("apply_method"))),
    ]
    touched = record.get("touched_non_test_files") or []
    if touched:
        properties.append((f"{PREFIX}touched_non_test_files", scalar(sorted(str(p) for p in touched))))
    properties += _block("identification", record.get("identification"), _IDENTIFICATION_FIELDS)
    properties += _block("update", record.get("update"), _UPDATE_FIELDS)
    properties += _block("swebench", record.get("swebench"), _SWEBENCH_FIELDS)
    timings = record.get("timings") or {}
    properties += [(f"{PREFIX}timings.{phase}", scalar(timings[phase])) for phase in sorted(timings)]
    if record.get("error"):
        properties.append((f"{PREFIX}error", scalar(record["error"])))
    return properties
