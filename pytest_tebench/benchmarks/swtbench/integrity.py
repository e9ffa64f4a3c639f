"""Runner integrity of SWT-bench runs: what a test-generation prediction may change, and the
judgement of the in-process guard's evidence (docs/swtbench.md, "Integrity").

A generated test is code in the test runner's process: it can rewrite outcomes through pytest
hooks (a ``conftest.py``), patch the runner, stop coverage.py or overwrite the files the harness
reads afterwards. Test files, ``conftest.py`` included, are what a prediction is, so they are
never refused for being tests. Refused (status ``refused``, a model's result, as SWE-bench's) are

* from the diff: a file SWE-bench would not call a test (:func:`~..swebench.text.is_test`, the rule
  that splits every SWE-bench row into ``patch`` and ``test_patch``), a path that leaves the tree,
  a symbolic link or a submodule (:func:`refusals`);
* from the applied tree: the runner policy in test-content mode (``paths.policy_for(...,
  test_content=True)``: pytest's ini files and sections, ``sitecustomize``/``.pth``, the test
  command's scripts, modules shadowing the runner's, byte code), see :mod:`.evaluation`.

Then the prediction's two runs load the guard plugin (SWE-bench's guarded test command) and
:func:`judge` compares each run's record with the gold run (``test_patch``) of the same instance,
image and code: a verdict hook gold has not, a rebound runner internal, a success the runner did
not see, no record where the log makes a success, is ``tampered``. Test code and item classes
differ from gold's by nature here, so those two rules are not applied.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import PurePosixPath
from typing import Any
from typing import Protocol

from pytest_tebench.benchmarks.swebench.text import is_test
from pytest_tebench.integrity import evidence
from pytest_tebench.integrity import paths
from pytest_tebench.workspace.layout import unsafe_path_reason
from pytest_tebench.workspace.patches import parse_patch

#: git file modes a prediction may not create: a symlink can point anywhere, a submodule is not a test.
_SPECIAL_MODES = {"120000": "a symbolic link", "160000": "a submodule"}


def is_test_file(path: str) -> bool:
    """SWE-bench's notion of a test file, plus ``conftest.py`` anywhere."""
    return is_test(path) or PurePosixPath(path).name == "conftest.py"


def refused_files(patch: str) -> dict[str, str]:
    """``{path: why}`` for every file of ``patch`` a test-generation prediction may not touch.

    Raises :class:`~pytest_tebench.workspace.patches.PatchFormatError` for text that is no diff.
    """
    refused: dict[str, str] = {}
    for piece in parse_patch(patch):
        for path in piece.paths:
            unsafe = unsafe_path_reason(path)
            if unsafe:
                refused[path] = unsafe
            elif not is_test_file(path):
                refused[path] = "not a test file (a test-generation prediction only adds or changes tests)"
        for mode in piece.modes:
            if mode in _SPECIAL_MODES:
                refused[piece.path] = f"creates {_SPECIAL_MODES[mode]}"
    return refused


def refusals(patch: str) -> list[paths.Refusal]:
    """:func:`refused_files` as the runner policy's refusals (one record shape for both)."""
    return [paths.Refusal(path, "test-generation", why) for path, why in refused_files(patch).items()]


#: Rules of :func:`evidence.findings` a test patch breaks by nature: its test functions, its item
#: classes and what its test modules do to themselves and to test helpers are not gold's (they are
#: the prediction).
NOT_APPLIED_RULES = ("test-code", "item-class", "test-side")
#: Each prediction run and the gold run of the same code it is judged against.
JUDGED_RUNS = (("pred_pre", "gold_pre"), ("pred_post", "gold_post"))


class GuardRun(Protocol):
    """What :func:`judge` reads of a run (:class:`.evaluation.RunOutcome`)."""

    guarded: bool
    guard_records: list[dict[str, Any]]
    status_map: dict[str, str]


def judge(runs: Mapping[str, GuardRun], *, resolved: bool) -> dict[str, Any]:
    """The record's ``guard`` block: each prediction run's guard record judged against the gold
    run of the same code (``findings`` empty: not tampered).

    Every test of the prediction's run whose log status is a success must have been seen so by the
    runner; ``resolved`` (the log makes a success) asks for a record in both runs.
    """
    if not all(runs[name].guarded for pair in JUDGED_RUNS for name in pair):
        return {"active": False, "reason": "the test command is not pytest: no in-process guard"}
    block: dict[str, Any] = {"active": True, "records": {}, "baseline": {}}
    found: list[evidence.Finding] = []
    for pred_name, gold_name in JUDGED_RUNS:
        pred, gold = runs[pred_name], runs[gold_name]
        baseline = evidence.baseline_of(gold.guard_records, gold.status_map)
        block["records"][pred_name] = len(pred.guard_records)
        block["baseline"][pred_name] = gold_name if baseline is not None else "none"
        found += [
            evidence.Finding(finding.rule, f"{pred_name}: {finding.detail}")
            for finding in evidence.findings(
                pred.guard_records,
                successes=pred.status_map,
                resolved_by_log=resolved,
                baseline=baseline,
                ignore=NOT_APPLIED_RULES,
            )
        ]
    block["findings"] = [finding.as_record() for finding in found]
    return block
