"""SWE-bench rows, validated: every published variant of the schema.

Accepted: the dataset cards' 12 columns (``princeton-nlp/SWE-bench``, ``_Lite``, ``_Verified``,
``_oracle``, ``_bm25_13K``, ``SWE-bench/SWE-bench_*``); ``FAIL_TO_PASS``/``PASS_TO_PASS`` as JSON
strings (the hub's form) or lists; the v5 columns ``log_parser``, ``eval_script`` and ``image``
when present (``log_parser`` chooses the parser; the other two are carried, never needed, since
their scripts assume the registry's conda images). Text columns (``text``, ``problem_statement``,
``hints_text``) are ignored. A bad row becomes an instance with ``problem`` set.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pytest_tebench.benchmarks.base import BenchmarkInstance
from pytest_tebench.benchmarks.base import row_id
from pytest_tebench.benchmarks.fields import load_rows
from pytest_tebench.benchmarks.fields import sha_field
from pytest_tebench.benchmarks.fields import slug_field
from pytest_tebench.benchmarks.fields import text_field
from pytest_tebench.benchmarks.fields import with_problem
from pytest_tebench.instance.datasets import RawRecord


@dataclass(frozen=True)
class SwebenchInstance:
    instance_id: str
    repo: str
    version: str
    base_commit: str
    environment_setup_commit: str
    patch: str
    test_patch: str
    fail_to_pass: tuple[str, ...]
    pass_to_pass: tuple[str, ...]
    log_parser: str | None = None


def load(records: Sequence[RawRecord]) -> list[BenchmarkInstance]:
    return load_rows(records, _validate)


def _validate(record: RawRecord) -> BenchmarkInstance:
    data = record.data
    raw_id = data.get("instance_id")
    instance_id = raw_id if isinstance(raw_id, str) and raw_id.strip() else row_id(record.origin)
    repo = data.get("repo") if isinstance(data.get("repo"), str) else ""
    shell = BenchmarkInstance(instance_id, str(repo or "unknown"), str(repo or ""), (), record.origin)
    if record.problem:
        return with_problem(shell, record.problem)
    try:
        base = sha_field(data, "base_commit")
        payload = SwebenchInstance(
            instance_id=text_field(data, "instance_id"),
            repo=slug_field(data),
            version=_version(data),
            base_commit=base,
            environment_setup_commit=sha_field(data, "environment_setup_commit")
            if data.get("environment_setup_commit")
            else base,
            patch=text_field(data, "patch", allow_empty=True),
            test_patch=text_field(data, "test_patch"),
            fail_to_pass=_tests(data, "FAIL_TO_PASS"),
            pass_to_pass=_tests(data, "PASS_TO_PASS"),
            log_parser=str(data["log_parser"]) if isinstance(data.get("log_parser"), str) else None,
        )
    except ValueError as exc:
        return with_problem(shell, str(exc))
    if not payload.fail_to_pass:
        return with_problem(shell, "FAIL_TO_PASS is empty: nothing would tell a fix from no fix")
    return BenchmarkInstance(payload.instance_id, payload.repo, payload.repo, (), record.origin, payload)


def _version(data: dict[str, Any]) -> str:
    value = data.get("version")
    # some exports store versions as numbers; 0.1 and 0.10 would collide, so only strings are safe
    if isinstance(value, float | int) and not isinstance(value, bool):
        raise ValueError(f"field 'version' must be a string like '2.0', not the number {value!r}")
    return text_field(data, "version").strip()


def _tests(data: dict[str, Any], name: str) -> tuple[str, ...]:
    value = data.get(name)
    if value is None:
        raise ValueError(f"field {name!r} is missing")
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError as exc:
            raise ValueError(f"field {name!r} is not a JSON list: {exc.msg}") from None
    if hasattr(value, "tolist"):  # numpy arrays from parquet readers
        value = value.tolist()
    if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"field {name!r} must be a list of test names (or a JSON string of one)")
    return tuple(value)
