"""TEBench's JUnit properties: labels, how the patch applied, identification and update scores.

The neutral ones (identity, status, timings, error) are added around these by the core
(``report/properties.py``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pytest_tebench.benchmarks.tebench.aggregate import UPDATE_COMPONENTS
from pytest_tebench.benchmarks.tebench.aggregate import labels_of
from pytest_tebench.report.properties import PREFIX
from pytest_tebench.report.properties import Property
from pytest_tebench.report.properties import block_properties
from pytest_tebench.report.properties import scalar

_IDENTIFICATION_FIELDS: tuple[str, ...] = ("tp", "fp", "fn", "precision", "recall", "f1")
_UPDATE_FIELDS: tuple[str, ...] = (*UPDATE_COMPONENTS, "s_update", "gt_has_coverage_change")


def tebench_properties(record: Mapping[str, Any]) -> list[Property]:
    properties: list[Property] = [
        # Canonical label order (breaking, stale, missing) regardless of how the dataset lists them.
        (f"{PREFIX}labels", ",".join(labels_of(record)) if record.get("labels") else ""),
        (f"{PREFIX}apply_method", scalar(record.get("apply_method"))),
    ]
    touched = record.get("touched_non_test_files") or []
    if touched:
        properties.append((f"{PREFIX}touched_non_test_files", scalar(sorted(str(p) for p in touched))))
    properties += block_properties("identification", record.get("identification"), _IDENTIFICATION_FIELDS)
    properties += block_properties("update", record.get("update"), _UPDATE_FIELDS)
    return properties
