"""RealCodeJava rows: the card's nested schema (``inputs``/``meta``) or the same fields flat.

A row becomes a :class:`RealcodeInstance`; whatever is wrong with it becomes the instance's
``problem`` (an error item naming the row and the field), never an exception.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

from pytest_tebench.benchmarks.base import BenchmarkInstance
from pytest_tebench.benchmarks.base import row_id
from pytest_tebench.benchmarks.fields import load_rows
from pytest_tebench.benchmarks.fields import sha_field
from pytest_tebench.benchmarks.fields import slug_field
from pytest_tebench.benchmarks.fields import text_field
from pytest_tebench.benchmarks.fields import with_problem
from pytest_tebench.instance.datasets import RawRecord
from pytest_tebench.run.maven.surefire import TestId

#: ``pkg.Class::method`` (the card's form) or ``pkg.Class#method`` (Surefire's).
_TEST_ID = re.compile(
    r"^(?P<cls>[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*)(?:::|#)(?P<method>[A-Za-z_$][\w$]*)"
    # a parameterized invocation's suffix ("[1]", "(String)"): Surefire's outcome covers them all
    r"(?:\[.*\]|\(.*\))?$"
)
#: Meta fields read from the row (nested under ``meta`` or at the top level).
META_FIELDS = (
    "id", "repo", "base_commit", "gt", "stub", "right_context", "left_context", "image_name",
    "build_command", "test_command", "file_path", "PASS_TO_PASS", "FAIL_TO_PASS", "intent", "intent_type",
)  # fmt: skip


@dataclass(frozen=True)
class RealcodeInstance:
    instance_id: str
    repo: str
    base_commit: str
    #: Path of the Java file in the repository (POSIX, relative).
    file_path: str
    left_context: str
    right_context: str
    #: Ground-truth body: everything after the signature's ``{`` up to and including its ``}``.
    gt: str
    #: A body that compiles and does nothing useful; None when the row has none.
    stub: str | None
    intent: str
    intent_type: str
    pass_to_pass: tuple[TestId, ...]
    fail_to_pass: tuple[TestId, ...]
    #: Kept for the report only: the build runs through the harness's own Maven steps and image.
    image_name: str = ""
    build_command: str = ""
    test_command: str = ""
    instruction: str = ""

    @property
    def intent_name(self) -> str:
        """The method's name: ``transferFromArray[function]`` -> ``transferFromArray``."""
        return self.intent.split("[", 1)[0].strip()

    @property
    def selection(self) -> tuple[TestId, ...]:
        """The tests every body is judged by: PASS_TO_PASS and FAIL_TO_PASS together."""
        return tuple(sorted({*self.pass_to_pass, *self.fail_to_pass}))

    def compose(self, body: str) -> str:
        """The Java file with ``body`` in place of the method's body."""
        return self.left_context + body + self.right_context

    def signature_indent(self) -> str:
        """Indentation of the signature line (the last line of the left context that has text)."""
        lines = [line for line in self.left_context.splitlines() if line.strip()]
        last = lines[-1] if lines else ""
        return last[: len(last) - len(last.lstrip())]


def load_instances(records: Sequence[RawRecord]) -> list[BenchmarkInstance]:
    """Validate rows; a later row repeating an id is a problem of its own (the first one stands)."""
    return load_rows(records, validate)


def flatten(data: dict[str, Any]) -> dict[str, Any]:
    """The row's fields in one mapping: ``meta`` and ``inputs`` entries lifted to the top."""
    flat = dict(data)
    inputs = data.get("inputs")
    meta = data.get("meta")
    if isinstance(meta, str):  # some exports store nested objects as JSON strings
        try:
            meta = json.loads(meta)
        except json.JSONDecodeError:
            meta = None
    if isinstance(meta, dict):
        flat.update(meta)
    if isinstance(inputs, dict) and "left_context" in inputs:
        if (
            isinstance(meta, dict)
            and "left_context" in meta
            and meta["left_context"] != inputs["left_context"]
        ):
            flat["_contexts_differ"] = True
        flat.setdefault("left_context", inputs["left_context"])
    if "instance_id" in data and "id" not in flat:
        flat["id"] = data["instance_id"]
    return flat


def _row_id(flat: dict[str, Any]) -> str | None:
    value = flat.get("id")
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str) and value.strip():
        return value.strip()
    return None


def validate(record: RawRecord) -> BenchmarkInstance:
    flat = flatten(record.data)
    raw_id = _row_id(flat)
    repo = flat.get("repo") if isinstance(flat.get("repo"), str) else ""
    shell = BenchmarkInstance(
        raw_id or row_id(record.origin), _project(str(repo)), str(repo), (), record.origin
    )
    if record.problem:
        return with_problem(shell, record.problem)
    try:
        if "test_patch" in flat and "left_context" not in flat:
            raise ValueError(
                "this is a TEBench/SWE-bench row, not a RealCodeJava one (give --tebench-dataset; "
                "the embedded demo is pytest_tebench/demo/realcode/dataset.jsonl)"
            )
        if raw_id is None:
            raise ValueError("field 'meta.id' (or 'id'/'instance_id') is missing or not an integer/string")
        if flat.get("_contexts_differ"):
            raise ValueError("fields 'inputs.left_context' and 'meta.left_context' differ")
        payload = RealcodeInstance(
            instance_id=raw_id,
            repo=slug_field(flat),
            base_commit=sha_field(flat, "base_commit"),
            file_path=_java_path(text_field(flat, "file_path")),
            left_context=_left_context(flat),
            right_context=text_field(flat, "right_context", allow_empty=True),
            gt=text_field(flat, "gt"),
            stub=text_field(flat, "stub") if flat.get("stub") not in (None, "") else None,
            intent=text_field(flat, "intent"),
            intent_type=_optional_text(flat, "intent_type"),
            pass_to_pass=_tests(flat, "PASS_TO_PASS"),
            fail_to_pass=_tests(flat, "FAIL_TO_PASS"),
            image_name=_optional_text(flat, "image_name"),
            build_command=_optional_text(flat, "build_command"),
            test_command=_optional_text(flat, "test_command"),
            instruction=_optional_text(flat, "instruction"),
        )
        if not payload.selection:
            raise ValueError("PASS_TO_PASS and FAIL_TO_PASS are both empty: no test can judge a body")
        if not payload.left_context.rstrip().endswith("{"):
            raise ValueError("'left_context' must end with the method's signature and its opening '{'")
    except ValueError as exc:
        return with_problem(shell, str(exc))
    labels = (payload.intent_type,) if re.fullmatch(r"[A-Za-z_][\w-]*", payload.intent_type) else ()
    return BenchmarkInstance(
        payload.instance_id, _project(payload.repo), payload.repo, labels, record.origin, payload
    )


def _project(repo: str) -> str:
    return repo.rsplit("/", 1)[-1] or "unknown"


def _left_context(flat: dict[str, Any]) -> str:
    return text_field(flat, "left_context")


def _optional_text(flat: dict[str, Any], name: str) -> str:
    value = flat.get(name)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise ValueError(f"field {name!r} must be a string, not {type(value).__name__}")
    return value


def _java_path(value: str) -> str:
    path = PurePosixPath(value.strip())
    if path.is_absolute() or ".." in path.parts or path.suffix != ".java":
        raise ValueError(f"field 'file_path' must be a relative path to a .java file, not {value!r}")
    return str(path)


def _tests(flat: dict[str, Any], name: str) -> tuple[TestId, ...]:
    value = flat.get(name)
    if value is None:
        return ()
    if isinstance(value, str):  # parquet and hub exports may keep lists as JSON text
        try:
            value = json.loads(value) if value.strip() else []
        except json.JSONDecodeError as exc:
            raise ValueError(f"field {name!r} is a string but not a JSON list: {exc.msg}") from exc
    if not isinstance(value, list | tuple):
        raise ValueError(f"field {name!r} must be a list of test ids, not {type(value).__name__}")
    tests: list[TestId] = []
    for item in value:
        match = _TEST_ID.match(item.strip()) if isinstance(item, str) else None
        if match is None:
            raise ValueError(
                f"field {name!r}: {item!r} is not a test id (pkg.Class::method or pkg.Class#method)"
            )
        tests.append(TestId(match["cls"], match["method"]))
    return tuple(tests)
