"""SWT-bench's grading, as pure functions of parsed test logs and line coverage.

Follows ``src/grading.py`` and ``src/report.py`` of logic-star-ai/swt-bench (commit 330a649):

* :func:`transitions` is ``get_eval_report``: each test's status on the original code (``pre``) and
  on the code with the gold fix (``post``) sorted into FAIL_TO_PASS (F→P, with X→P: absent before),
  PASS_TO_PASS, FAIL_TO_FAIL (F→F, with X→F), PASS_TO_FAIL (P→F, with P→X: gone after) and
  UNMATCHED (F→X, X→X). Only ``PASSED`` and ``FAILED`` are statuses; ``ERROR``/``SKIPPED`` count as
  absent, as there;
* :func:`success` is ``get_resolution_success``: the prediction's F→P tests include the existing
  tests' ones and add at least one, and it adds no P→F and no F→F test over the existing tests';
* :func:`added` gives ``report.py``'s per-instance F→X, F→P and P→P (tests the prediction adds to
  each class over the existing tests), :func:`applicable` its ``no_error_filter`` (W);
* :func:`change_coverage` is the coverage part of ``get_pred_report``: the gold fix's removed
  lines (old numbering) and added lines (new numbering) that are executable, the share of them a
  run covers, and the coverage delta: the share whose execution count under the prediction's tests
  exceeds the one under the existing tests.

"Existing tests" (SWT-bench's ``base``) are the tests of the files the prediction touches, run
without the prediction. Nothing here runs anything or imports pytest.
"""

from __future__ import annotations

from collections.abc import Iterable
from collections.abc import Mapping
from dataclasses import dataclass

from pytest_tebench.workspace.patches import parse_patch

FAIL_TO_PASS = "FAIL_TO_PASS"
PASS_TO_PASS = "PASS_TO_PASS"
FAIL_TO_FAIL = "FAIL_TO_FAIL"
PASS_TO_FAIL = "PASS_TO_FAIL"
UNMATCHED = "UNMATCHED"
CLASSES = (FAIL_TO_PASS, PASS_TO_PASS, FAIL_TO_FAIL, PASS_TO_FAIL, UNMATCHED)
PASSED = "PASSED"
FAILED = "FAILED"

#: ``report.py``'s W: a run whose prediction ran fewer tests than this share of the existing tests
#: counts as broken (a syntax or name error in the generated tests).
MIN_TEST_SHARE = 0.1

Transitions = dict[str, list[str]]
#: ``{file: {line: count}}``: every executable line of a measured file, with how often it ran.
LineCounts = Mapping[str, Mapping[int, int]]
Line = tuple[str, int]


def transitions(pre: Mapping[str, str], post: Mapping[str, str]) -> Transitions:
    """SWT-bench's ``get_eval_report``: tests by (status before, status after) class."""
    cells: dict[tuple[str | None, str | None], list[str]] = {}
    for test in sorted(set(pre) | set(post)):
        before = pre.get(test) if pre.get(test) in (PASSED, FAILED) else None
        after = post.get(test) if post.get(test) in (PASSED, FAILED) else None
        cells.setdefault((before, after), []).append(test)

    def cell(before: str | None, after: str | None) -> list[str]:
        return cells.get((before, after), [])

    return {
        FAIL_TO_PASS: cell(None, PASSED) + cell(FAILED, PASSED),
        PASS_TO_PASS: cell(PASSED, PASSED),
        FAIL_TO_FAIL: cell(FAILED, FAILED) + cell(None, FAILED),
        PASS_TO_FAIL: cell(PASSED, FAILED) + cell(PASSED, None),
        UNMATCHED: cell(FAILED, None) + cell(None, None),
    }


def _new(pred: Transitions, base: Transitions, key: str) -> set[str]:
    return set(pred[key]) - set(base[key])


def success(pred: Transitions, base: Transitions) -> tuple[bool, int]:
    """SWT-bench's ``get_resolution_success``: (S, number of F→P tests added over the existing ones)."""
    added_f2p = set(pred[FAIL_TO_PASS]).issuperset(base[FAIL_TO_PASS]) and bool(
        _new(pred, base, FAIL_TO_PASS)
    )
    no_new_failure = not _new(pred, base, PASS_TO_FAIL) and not _new(pred, base, FAIL_TO_FAIL)
    return added_f2p and no_new_failure, len(_new(pred, base, FAIL_TO_PASS))


@dataclass(frozen=True)
class Added:
    """``report.py``'s per-instance indicators (each a share of instances in the paper's tables)."""

    #: ``get_ftx``: a test fails before the fix (F→P or F→F) that the existing tests did not have.
    f2x: bool
    #: ``get_actual_ftp``: an F→P test the existing tests did not have.
    f2p: bool
    #: ``get_ptp``: a P→P test the existing tests did not have.
    p2p: bool


def added(pred: Transitions, base: Transitions) -> Added:
    f2p = bool(_new(pred, base, FAIL_TO_PASS))
    return Added(
        f2x=f2p or bool(_new(pred, base, FAIL_TO_FAIL)),
        f2p=f2p,
        p2p=bool(_new(pred, base, PASS_TO_PASS)),
    )


def applicable(pred: Transitions, base: Transitions) -> bool:
    """``report.py``'s ``no_error_filter`` (W) for an applied patch: its run has at least 10% as
    many tests as the existing tests' run (so 0 tests pass when the files had none before)."""
    return sum(map(len, pred.values())) >= MIN_TEST_SHARE * sum(map(len, base.values()))


def changed_lines(code_patch: str) -> tuple[list[Line], list[Line]]:
    """``extract_changed_lines_from_patch``: (removed lines by old number, added lines by new number)."""
    removed: list[Line] = []
    added_lines: list[Line] = []
    for piece in parse_patch(code_patch):
        for hunk in piece.hunks:
            if piece.old_path is not None:
                removed.extend((piece.old_path, number) for number, _ in hunk.removed())
            if piece.new_path is not None:
                added_lines.extend((piece.new_path, number) for number, _ in hunk.added())
    return removed, added_lines


def executable(lines: Iterable[Line], runs: Iterable[LineCounts]) -> list[Line]:
    """``extract_executable_lines``: the lines some run lists (executed or not) for their file."""
    known: dict[str, set[int]] = {}
    for run in runs:
        for name, counts in run.items():
            known.setdefault(name, set()).update(counts)
    return [(name, number) for name, number in lines if number in known.get(name, ())]


def _count(run: LineCounts, line: Line) -> int:
    return int(run.get(line[0], {}).get(line[1], 0))


@dataclass(frozen=True)
class ChangeCoverage:
    """Shares of the gold fix's executable changed lines; all None when it has none."""

    executable_lines: int
    pred: float | None
    gold: float | None
    base: float | None
    delta_pred: float | None
    delta_gold: float | None


@dataclass(frozen=True)
class Runs:
    """Line counts of the six runs (SWT-bench's pred, gold, base; each pre and post)."""

    pred_pre: LineCounts
    pred_post: LineCounts
    gold_pre: LineCounts
    gold_post: LineCounts
    base_pre: LineCounts
    base_post: LineCounts


def change_coverage(code_patch: str, runs: Runs) -> ChangeCoverage:
    """The coverage part of ``get_pred_report``.

    Removed lines are measured on the original code (``*_pre``), added ones on the fixed code
    (``*_post``). One deviation: SWT-bench takes the existing tests' counts of *removed* lines from
    ``base_post`` (the fixed code, where those line numbers name other lines); we take them from
    ``base_pre``, the run whose numbering they are in (docs/swtbench.md).
    """
    removed, added_lines = changed_lines(code_patch)
    ex_removed = executable(removed, (runs.gold_pre, runs.base_pre))
    ex_added = executable(added_lines, (runs.gold_post, runs.base_post))
    total = len(ex_removed) + len(ex_added)
    if total == 0:
        return ChangeCoverage(0, None, None, None, None, None)

    def covered(pre: LineCounts, post: LineCounts) -> int:
        return sum(_count(pre, line) > 0 for line in ex_removed) + sum(
            _count(post, line) > 0 for line in ex_added
        )

    def delta(pre: LineCounts, post: LineCounts) -> int:
        return sum(_count(pre, line) > _count(runs.base_pre, line) for line in ex_removed) + sum(
            _count(post, line) > _count(runs.base_post, line) for line in ex_added
        )

    return ChangeCoverage(
        executable_lines=total,
        pred=covered(runs.pred_pre, runs.pred_post) / total,
        gold=covered(runs.gold_pre, runs.gold_post) / total,
        base=covered(runs.base_pre, runs.base_post) / total,
        delta_pred=delta(runs.pred_pre, runs.pred_post) / total,
        delta_gold=delta(runs.gold_pre, runs.gold_post) / total,
    )
