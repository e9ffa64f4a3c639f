"""The machine-readable JSON report of a run, and its atomic writer.

Schema (version 1; fields may be added, never renamed or removed without a version bump)::

    {"schema_version": 1, "harness_version": str, "benchmark": str, "dataset": str,
     "predictions": str, <the benchmark's own fields, e.g. TEBench's "update_scoring">,
     "summary": {model: <the adapter's summary of that model>},
     "results": [records sorted by (model_name_or_path, instance_id, origin)],
     "extra": {...}}

Benchmark-neutral: the summary is the adapter's (``BenchmarkAdapter.summarise``), passed in as
it is; this module only orders, rounds and writes.

The report is meant to be diffed between runs, so it is fully deterministic: results are
deduplicated and sorted, record keys follow a fixed order, nested mappings in records are
key-sorted, floats are rounded to 6 decimals (summation noise below that is not meaningful and
would make equal runs differ), and the file is written with a trailing newline.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
from pathlib import Path
from typing import Any

#: A result record (plain, JSON-ready).
Record = Mapping[str, Any]

SCHEMA_VERSION = 1
#: Decimals kept for every float in the report.
FLOAT_DECIMALS = 6

#: Top-level order of a result record in the report; unknown keys follow, sorted.
_RECORD_KEY_ORDER: tuple[str, ...] = (
    "instance_id",
    "model_name_or_path",
    "project",
    "labels",
    "status",
    "error",
    "origin",
)


def round_floats(value: Any, ndigits: int = FLOAT_DECIMALS) -> Any:
    """A copy of ``value`` with every float rounded to ``ndigits`` decimals.

    Walks mappings, lists and tuples (tuples become lists, as JSON would make them anyway).
    Non-finite floats become ``None``: JSON cannot represent them and ``json.dump`` would
    otherwise emit the invalid tokens ``NaN``/``Infinity``. ``-0.0`` is normalised to ``0.0``.
    Booleans and ints are left alone.
    """
    if isinstance(value, float):
        if not math.isfinite(value):
            return None
        # Adding 0.0 turns -0.0 into 0.0 so that "-0.0" never shows up in a diff.
        return round(value, ndigits) + 0.0
    if isinstance(value, Mapping):
        return {str(key): round_floats(item, ndigits) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [round_floats(item, ndigits) for item in value]
    return value


def _sorted_mapping(value: Any) -> Any:
    """Recursively sort mapping keys (records cross process boundaries; insertion order is not trusted)."""
    if isinstance(value, Mapping):
        return {str(key): _sorted_mapping(value[key]) for key in sorted(value, key=str)}
    if isinstance(value, list | tuple):
        return [_sorted_mapping(item) for item in value]
    return value


def canonical_record(record: Record, fields: Sequence[str] = ()) -> dict[str, Any]:
    """A record with a fixed top-level key order (the neutral fields, then the benchmark's own
    ``fields``, then any other key sorted) and key-sorted nested mappings."""
    order = [*_RECORD_KEY_ORDER, *(key for key in fields if key not in _RECORD_KEY_ORDER)]
    known = [key for key in order if key in record]
    rest = sorted((key for key in record if key not in order), key=str)
    return {str(key): _sorted_mapping(record[key]) for key in [*known, *rest]}


def build_report(
    records: Iterable[Record],
    *,
    summary: Mapping[str, Any],
    harness_version: str,
    benchmark: str,
    dataset: str,
    predictions: str,
    fields: Mapping[str, Any] | None = None,
    record_fields: Sequence[str] = (),
    extra: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Assemble the full report from result records (one per item, any order) and the adapter's
    per-model ``summary``.

    ``fields`` are the benchmark's own top-level fields, ``record_fields`` the order of its own
    fields in a record; ``extra`` is free-form run metadata
    (configuration, timestamps, host) stored under the ``"extra"`` key so it can never shadow a
    schema field.
    """
    ordered = sorted(records, key=_record_order)
    report: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "harness_version": harness_version,
        "benchmark": benchmark,
        "dataset": dataset,
        "predictions": predictions,
        **{key: value for key, value in (fields or {}).items() if key not in _TOP_LEVEL},
        # the adapter's order (labels in the paper's order, models sorted) is part of its contract
        "summary": dict(summary),
        "results": [canonical_record(record, record_fields) for record in ordered],
        "extra": _sorted_mapping(dict(extra or {})),
    }
    rounded: dict[str, Any] = round_floats(report)
    return rounded


_TOP_LEVEL = (
    "schema_version",
    "harness_version",
    "benchmark",
    "dataset",
    "predictions",
    "summary",
    "results",
)


def _record_order(record: Record) -> tuple[str, str, str]:
    return (str(record["model_name_or_path"]), str(record["instance_id"]), str(record.get("origin", "")))


def dumps_report(report: Mapping[str, Any]) -> str:
    """Serialise a report exactly as :func:`write_report` writes it."""
    # allow_nan=False: round_floats already removed non-finite values; anything left is a bug.
    return json.dumps(report, indent=2, sort_keys=False, ensure_ascii=False, allow_nan=False) + "\n"


def write_report(report: Mapping[str, Any], path: str | os.PathLike[str]) -> Path:
    """Write ``report`` as UTF-8 JSON to ``path`` atomically; returns the resolved path.

    The text goes to a temporary file in the target directory (same filesystem, so the final
    ``os.replace`` is atomic) and is fsynced first: a reader, or a crash mid-write, sees either
    the old report or the new one, never a truncated file.
    """
    target = Path(path)
    text = dumps_report(report)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        # mkstemp creates the file 0600; a report is meant to be shared like any other output.
        os.chmod(tmp_name, 0o666 & ~_current_umask())
        os.replace(tmp_name, target)
    except BaseException:
        # Leave no stray temp file behind, whatever interrupted us (including KeyboardInterrupt).
        Path(tmp_name).unlink(missing_ok=True)
        raise
    return target.resolve()


def _current_umask() -> int:
    # There is no way to read the umask without setting it; restore it immediately.
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def read_report(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Load a report written by :func:`write_report` and check its schema version."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    if not isinstance(data, dict) or data.get("schema_version") != SCHEMA_VERSION:
        found = data.get("schema_version") if isinstance(data, dict) else type(data).__name__
        raise ValueError(
            f"{path}: not a pytest-tebench report of schema version {SCHEMA_VERSION} (found {found!r})"
        )
    return data
