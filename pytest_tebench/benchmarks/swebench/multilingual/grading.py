"""A Multilingual row's log graded as SWE-bench grades it: the row's ``log_parser`` and
``eval_type``, with the ``swebench`` package's own parsers and grading functions.

The grading is the one every SWE-bench row goes through (:func:`.official.grade`:
``get_logs_eval``'s markers and bad codes, the parser, ``get_eval_tests_report`` with the row's
``eval_type``, ``get_resolution_status``); this module is its plain entry point for a
Multilingual row, callable from a build-mode run as well as an official one::

    report = grade_multilingual(row, log_text)
    report["resolved"], report["tests_status"]["FAIL_TO_PASS"]["failure"]

The eval scripts run under ``set -x`` and print the markers as ``: '>>>>> Start Test Output'``,
so the log's trace line ``+ : '>>>>> Start Test Output'`` holds them; the Maven parser relies on
the same trace (``+ mvnd test ... -Dtest=X``) to name the test each ``BUILD SUCCESS`` belongs to.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pytest_tebench.benchmarks.swebench import official
from pytest_tebench.benchmarks.swebench.multilingual.rows import MultilingualInstance
from pytest_tebench.benchmarks.swebench.multilingual.rows import load
from pytest_tebench.errors import InputError
from pytest_tebench.instance.datasets import RawRecord

#: The keys of SWE-bench's per-test report (``tests_status``).
FAIL_TO_PASS = "FAIL_TO_PASS"
PASS_TO_PASS = "PASS_TO_PASS"


def grade_multilingual(row: MultilingualInstance | Mapping[str, Any], log_text: str) -> dict[str, Any]:
    """The report of ``log_text`` (the whole output of the row's eval script) for ``row`` (a loaded
    :class:`.MultilingualInstance` or a dataset row as a mapping).

    Keys: ``instance_id``, ``log_parser``, ``eval_type``, ``test_output_found`` (false: no test
    output between the markers, or a bad code in the log; SWE-bench then reports the patch as not
    applied), ``resolved``, ``resolution`` (``RESOLVED_FULL``/``_PARTIAL``/``_NO``),
    ``tests_status`` (``{"FAIL_TO_PASS": {"success": [...], "failure": [...]}, "PASS_TO_PASS": ...}``)
    and ``status_map`` (every test the parser found, with its status)."""
    payload = row if isinstance(row, MultilingualInstance) else as_instance(row)
    parser = payload.log_parser or official.repository_parser(payload.repo)
    if parser is None or official.log_parser(parser) is None:
        raise InputError(f"swebench {official.SWEBENCH_VERSION} has no log parser {parser!r}",
                         source=payload.instance_id)  # fmt: skip
    if official.specs(payload.repo, payload.version) is None:
        # get_logs_eval looks the repository's specification up; without one it cannot grade
        raise InputError(
            f"swebench {official.SWEBENCH_VERSION} has no specification for {payload.repo} "
            f"version {payload.version}: its grading cannot read this row's log",
            source=payload.instance_id,
        )
    grade = official.grade(
        instance_id=payload.instance_id,
        repo=payload.repo,
        version=payload.version,
        fail_to_pass=list(payload.fail_to_pass),
        pass_to_pass=list(payload.pass_to_pass),
        log=log_text,
        log_parser=parser,
        eval_type=payload.eval_type,
    )
    return {
        "instance_id": payload.instance_id,
        "log_parser": parser,
        "eval_type": payload.eval_type,
        "test_output_found": grade.log_found,
        "resolved": grade.resolved,
        "resolution": grade.resolution,
        "tests_status": grade.tests_status,
        "status_map": grade.status_map,
    }


def as_instance(row: Mapping[str, Any]) -> MultilingualInstance:
    """A dataset row (a mapping, as the hub, parquet or JSONL give it) validated as a Multilingual
    row; :class:`InputError` naming the problem when it is not one."""
    (instance,) = load([RawRecord(dict(row), str(row.get("instance_id") or "<row>"))])
    if instance.problem is not None:
        raise InputError(instance.problem)
    if not isinstance(instance.payload, MultilingualInstance):
        raise InputError(
            f"{instance.instance_id} is not a SWE-bench Multilingual row (its log parser is Python's)"
        )
    return instance.payload
