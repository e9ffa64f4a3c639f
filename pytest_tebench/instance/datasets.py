"""Load benchmark instances as raw records, wherever they live.

A dataset is a Hugging Face dataset name (loaded with ``datasets``), a local ``.jsonl``,
``.json`` or ``.parquet`` file, or ``demo`` (the embedded benchmark). This module only reads
rows and remembers where each came from; what a valid instance is, is the benchmark adapter's
business (``benchmarks/``), so one adapter's schema never leaks into another's.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_tebench.errors import HarnessError
from pytest_tebench.errors import InputError
from pytest_tebench.instance.jsonl import decode_json
from pytest_tebench.instance.jsonl import invalid_unicode
from pytest_tebench.instance.jsonl import jsonl_lines
from pytest_tebench.instance.jsonl import read_text

DEMO_DATASET = "demo"
LOCAL_SUFFIXES = (".jsonl", ".json", ".parquet")


@dataclass(frozen=True)
class RawRecord:
    """One dataset row before validation, with the place it came from (for error messages)."""

    data: dict[str, Any]
    #: ``path:line`` for JSONL, ``path[index]`` for JSON lists and parquet, ``name[index]`` for the hub.
    origin: str
    #: Set when the row could not even be read as an object; ``data`` is then empty.
    problem: str | None = None


def demo_dataset_path() -> Path:
    return Path(__file__).resolve().parent.parent / "demo" / "dataset.jsonl"


def describe_dataset(spec: str) -> str:
    """A stable, human-readable name for the report (the demo's file path is machine-specific)."""
    return "demo (embedded textkit benchmark)" if spec == DEMO_DATASET else spec


def is_local_dataset(spec: str) -> bool:
    return spec == DEMO_DATASET or spec.endswith(LOCAL_SUFFIXES) or Path(spec).is_file()


def load_records(spec: str, *, split: str = "test") -> list[RawRecord]:
    """Read every row of the dataset ``spec``.

    A file that cannot be read at all raises :class:`InputError`; a single bad row is returned
    with ``problem`` set, so one broken line costs one instance, not the run.
    """
    if spec == DEMO_DATASET:
        return _load_jsonl(demo_dataset_path())
    path = Path(spec)
    if spec.endswith(LOCAL_SUFFIXES) or path.is_file():
        if not path.is_file():
            raise InputError("dataset file not found", source=spec)
        if path.suffix == ".jsonl":
            return _load_jsonl(path)
        if path.suffix == ".json":
            return _load_json(path)
        if path.suffix == ".parquet":
            return _load_parquet(path)
        raise InputError("unsupported dataset file type (use .jsonl, .json or .parquet)", source=spec)
    return _load_hub(spec, split)


def _load_jsonl(path: Path) -> list[RawRecord]:
    records: list[RawRecord] = []
    text = read_text(path, "dataset")
    for lineno, line in jsonl_lines(text):
        origin = f"{path}:{lineno}"
        try:
            value = decode_json(line)
        except json.JSONDecodeError as exc:
            records.append(RawRecord({}, origin, f"malformed JSON: {exc.msg} (column {exc.colno})"))
            continue
        if not isinstance(value, dict):
            records.append(RawRecord({}, origin, "a line must hold a JSON object"))
            continue
        problem = invalid_unicode(value)
        records.append(RawRecord(value, origin) if problem is None else RawRecord({}, origin, problem))
    return records


def _load_json(path: Path) -> list[RawRecord]:
    try:
        value = decode_json(read_text(path, "dataset"))
    except json.JSONDecodeError as exc:
        raise InputError(f"cannot read dataset: {exc}", source=str(path)) from exc
    rows: list[Any]
    if isinstance(value, list):
        rows = value
    elif isinstance(value, dict):
        # an id-keyed dict, as some SWE-bench tools write; the key fills a missing instance_id
        rows = [
            {"instance_id": key, **row} if isinstance(row, dict) and "instance_id" not in row else row
            for key, row in value.items()
        ]
    else:
        raise InputError("a JSON dataset must be a list of objects or an id-keyed object", source=str(path))
    records: list[RawRecord] = []
    for index, row in enumerate(rows):
        origin = f"{path}[{index}]"
        problem = invalid_unicode(row) if isinstance(row, dict) else "an entry must be a JSON object"
        records.append(RawRecord(row, origin) if problem is None else RawRecord({}, origin, problem))
    return records


def _load_parquet(path: Path) -> list[RawRecord]:
    import pyarrow.parquet as pq  # lazy: pyarrow is slow to import and only parquet needs it

    try:
        table = pq.read_table(path)
    except Exception as exc:  # pyarrow raises its own zoo of errors for a broken file
        raise InputError(f"cannot read parquet dataset: {exc}", source=str(path)) from exc
    return [RawRecord(dict(row), f"{path}[{index}]") for index, row in enumerate(table.to_pylist())]


def _load_hub(name: str, split: str) -> list[RawRecord]:
    try:
        import datasets
    except ImportError as exc:  # pragma: no cover - datasets is a declared dependency
        raise InputError("loading a hub dataset needs the 'datasets' package", source=name) from exc
    try:
        loaded = datasets.load_dataset(name, split=split)
    except Exception as exc:  # network, auth, unknown name: all harness-side problems
        raise InputError(f"cannot load dataset (split {split!r}): {exc}", source=name) from exc
    return [RawRecord(dict(row), f"{name}[{index}]") for index, row in enumerate(_iter_rows(loaded))]


def _iter_rows(loaded: Any) -> Iterator[dict[str, Any]]:
    yield from loaded


def write_dataset(rows: list[dict[str, Any]], out: Path) -> None:
    """``.jsonl`` (one row per line, stable key order) or ``.parquet`` by extension."""
    out.parent.mkdir(parents=True, exist_ok=True)
    if out.suffix == ".parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        pq.write_table(pa.Table.from_pylist(rows), out)
        return
    if out.suffix != ".jsonl":
        raise HarnessError(f"--out must end in .jsonl or .parquet, not {out.name}")
    out.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")
