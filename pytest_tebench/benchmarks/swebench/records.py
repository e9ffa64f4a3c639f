"""The SWE-bench record's shared parts (SWE-bench, built and official, and SWT-bench): its start,
a refusal, SWE-bench's grading of a log, the guard's verdict and their JUnit properties."""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Sequence
from typing import Any

from pytest_tebench.benchmarks.base import BenchmarkInstance
from pytest_tebench.benchmarks.base import base_record
from pytest_tebench.benchmarks.swebench import evaluation
from pytest_tebench.benchmarks.swebench import official
from pytest_tebench.benchmarks.swebench.instances import SwebenchInstance
from pytest_tebench.instance.predictions import Prediction
from pytest_tebench.integrity import evidence
from pytest_tebench.integrity import paths
from pytest_tebench.report.properties import PREFIX
from pytest_tebench.report.properties import Property
from pytest_tebench.report.properties import block_properties
from pytest_tebench.report.properties import scalar


def started_record(
    instance: BenchmarkInstance,
    prediction: Prediction,
    timings: Mapping[str, float],
    name: str,
    *,
    image: str,
    python: str,
    suite: str | None,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """A new ``evaluated`` record with the timings so far, and its benchmark block ``name`` (also
    returned, for the caller's further fields) naming the environment (SWE-bench, SWT-bench)."""
    payload: SwebenchInstance = instance.payload
    record = base_record(instance, prediction, "evaluated")
    record["timings"] = dict(timings)
    block: dict[str, Any] = {
        "repo": payload.repo,
        "version": payload.version,
        "image": image,
        "python": python,
        "suite": suite,
    }
    record[name] = block
    return record, block


def refused_record(
    record: dict[str, Any],
    refusals: Sequence[paths.Refusal],
    message: str = "the patch changes what configures or starts the test runner",
) -> dict[str, Any]:
    """Decided before anything ran: a model's result (unresolved), never a harness error."""
    record["status"] = "refused"
    record["refused_files"] = [refusal.as_record() for refusal in refusals]
    what = "; ".join(f"{r.path} ({r.rule}: {r.reason})" for r in refusals)
    record["error"] = f"{message}: {what}"
    return record


def guarded_record(record: dict[str, Any], block: dict[str, Any], guard: dict[str, Any]) -> dict[str, Any]:
    """The guard's verdict on a graded run (SWE-bench, SWT-bench): a finding makes it ``tampered``,
    the model's unresolved result (``block`` is its benchmark block), never a harness error."""
    record["guard"] = guard
    if guard.get("findings"):
        record["status"] = "tampered"
        block["resolved"] = False
        record["error"] = "the test runner was interfered with: " + evidence.summary(
            evidence.Finding(f["rule"], f["detail"]) for f in guard["findings"]
        )
    return record


def guard_properties(record: Mapping[str, Any]) -> list[Property]:
    """JUnit properties of the record's refused and set-aside files and ``guard`` block (SWE-bench,
    SWT-bench)."""
    properties: list[Property] = []
    refused = [f"{r.get('path')} ({r.get('rule')})" for r in record.get("refused_files") or ()]
    if refused:
        properties.append((f"{PREFIX}refused_files", scalar(refused)))
    set_aside = record.get("set_aside_files") or []
    if set_aside:
        properties.append((f"{PREFIX}set_aside_files", scalar(list(set_aside))))
    guard = record.get("guard")
    if isinstance(guard, Mapping):
        properties += block_properties("guard", guard, ("active", "records", "baseline"))
        findings = [f"{f.get('rule')}: {f.get('detail')}" for f in guard.get("findings") or ()]
        if findings:
            properties.append((f"{PREFIX}guard.findings", " | ".join(findings)))
    return properties


def grade_into(block: dict[str, Any], payload: SwebenchInstance, log: str, nonce: str = "") -> dict[str, str]:
    """The record block's verdict on ``log`` (the guard's records taken out): SWE-bench's grading,
    F2P/P2P successes and failures; returns the log's status of every test."""
    register_demo()
    grading = evaluation.graded_fields(payload, evidence.strip_records(log, nonce))
    tests = grading.pop("tests_status")
    status_map: dict[str, str] = grading.pop("status_map")
    block.update(grading)
    for key, short in (("FAIL_TO_PASS", "f2p"), ("PASS_TO_PASS", "p2p")):
        block[f"{short}_success"] = tests.get(key, {}).get("success", [])
        block[f"{short}_failure"] = tests.get(key, {}).get("failure", [])
    return status_map


def register_demo() -> None:
    from pytest_tebench.demo import multilingual as java_demo
    from pytest_tebench.demo import swebench as demo

    official.register_repository(demo.SWEBENCH_DEMO_REPO, demo.SPECS, demo.LOG_PARSER)
    official.register_repository(java_demo.MULTILINGUAL_DEMO_REPO, java_demo.SPECS, java_demo.LOG_PARSER)
