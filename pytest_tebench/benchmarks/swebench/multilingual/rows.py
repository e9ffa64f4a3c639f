"""SWE-bench Multilingual rows: the Python rows' fields plus ``eval_type``, ``image`` and
``eval_script``, and the row's language.

A row is multilingual when its log parser (the row's ``log_parser``, else the ``swebench``
package's parser of its repository) is not one of the package's Python parsers. Its language is
the package module that holds that parser (``c``, ``go``, ``java``, ``javascript``, ``php``,
``ruby``, ``rust``), with ``cpp`` for the two C++ test frameworks' parsers (googletest: fmtlib/fmt;
doctest: nlohmann/json). ``javascript`` covers the TypeScript repositories too: nothing in a row
tells them apart. Lite and Verified rows stay :class:`.SwebenchInstance` (their result keys are
unchanged).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import asdict
from dataclasses import dataclass
from typing import Any

from pytest_tebench.benchmarks.base import BenchmarkInstance
from pytest_tebench.benchmarks.fields import with_problem
from pytest_tebench.benchmarks.swebench import instances
from pytest_tebench.benchmarks.swebench import official
from pytest_tebench.benchmarks.swebench.instances import SwebenchInstance
from pytest_tebench.instance.datasets import RawRecord

#: The hub's name of the dataset (``--tebench-dataset=SWE-bench/SWE-bench_Multilingual``).
HUB_NAME = "SWE-bench/SWE-bench_Multilingual"
#: ``swebench.harness.constants.EvalType`` values (the row's ``eval_type``).
EVAL_TYPES = ("pass_and_fail", "fail_only")
DEFAULT_EVAL_TYPE = "pass_and_fail"
#: Parsers whose module says C but whose tests are C++.
CPP_PARSERS = frozenset({"parse_log_googletest", "parse_log_doctest"})
#: The label (and so marker) prefix of a row's language: ``-m lang_java``, ``-k lang_rust``.
LABEL_PREFIX = "lang_"


@dataclass(frozen=True)
class MultilingualInstance(SwebenchInstance):
    language: str = ""
    #: ``pass_and_fail`` (the dataset's every row) or ``fail_only``.
    eval_type: str = DEFAULT_EVAL_TYPE
    #: The row's official image (``swebench/sweb.eval.x86_64.<id>:latest``), "" when it names none.
    image: str = ""
    #: The row's bash script, run in ``image`` with the repository at ``/testbed``.
    eval_script: str = ""


def load(records: Sequence[RawRecord]) -> list[BenchmarkInstance]:
    """Every row as :func:`.instances.load` reads it, multilingual ones with their own fields and a
    ``lang_<language>`` label."""
    return [
        _lifted(instance, record) for instance, record in zip(instances.load(records), records, strict=True)
    ]


def language_of(parser: str) -> str | None:
    """The language of the ``swebench`` log parser named ``parser``; None for a Python parser or a
    name the package does not know."""
    function = official.log_parser(parser)
    if function is None:
        return None
    module = str(function.__module__).rsplit(".", 1)[-1]
    if module == "python":
        return None
    return "cpp" if parser in CPP_PARSERS else module


def row_language(repo: str, log_parser: str | None) -> str | None:
    """The language of a row: by its ``log_parser``, else by its repository's parser."""
    name = log_parser or official.repository_parser(repo)
    return language_of(name) if name else None


def is_multilingual(payload: Any) -> bool:
    return isinstance(payload, MultilingualInstance)


def _lifted(instance: BenchmarkInstance, record: RawRecord) -> BenchmarkInstance:
    payload = instance.payload
    if not isinstance(payload, SwebenchInstance):
        return instance
    data = record.data
    language = row_language(payload.repo, payload.log_parser)
    if language is None:
        if payload.log_parser and official.log_parser(payload.log_parser) is None:
            problem = f"swebench {official.SWEBENCH_VERSION} has no log parser {payload.log_parser!r}"
            return with_problem(instance, problem)
        return instance
    try:
        lifted = MultilingualInstance(
            **asdict(payload),
            language=language,
            eval_type=_eval_type(data),
            image=_optional_text(data, "image"),
            eval_script=_optional_text(data, "eval_script"),
        )
    except ValueError as exc:
        return with_problem(instance, str(exc))
    label = LABEL_PREFIX + re.sub(r"[^A-Za-z0-9_]+", "_", language)
    return BenchmarkInstance(
        instance.instance_id,
        instance.project,
        instance.repo,
        (*instance.labels, label),
        instance.origin,
        lifted,
        instance.problem,
    )


def _eval_type(data: dict[str, Any]) -> str:
    value = data.get("eval_type")
    if value is None or value == "":
        return DEFAULT_EVAL_TYPE
    if value not in EVAL_TYPES:
        raise ValueError(f"field 'eval_type' must be one of {', '.join(EVAL_TYPES)}, not {value!r}")
    return str(value)


def _optional_text(data: dict[str, Any], name: str) -> str:
    value = data.get(name)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise ValueError(f"field {name!r} must be a string, not {type(value).__name__}")
    return value
