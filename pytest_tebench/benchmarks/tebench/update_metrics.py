"""Update-quality metrics: coverage overlap, modification similarity, and the composite score.

Pure functions over parsed data (methods, JaCoCo line counters, token sequences); the builds
that produce that data live in ``benchmarks/tebench/update.py``. Definitions (paper, with the
reference harness's bugs fixed; docs/scoring.md lists every choice):

* S = production methods *and constructors* the commit changed (V-1 -> V-0.5), including those
  of new files; their line ranges are the V-0.5 ranges, identical in V0 and in the prediction
  tree because predictions may only touch the test tree.
* ``s_line = |L_pred ∩ L_gold| / |L_gold|`` over covered lines of S.
* ``s_branch = Σ_l min(cb_pred(l), cb_gold(l)) / Σ_l cb_gold(l)`` over lines of S, with JaCoCo's
  per-line covered-branch counter ``cb`` (JaCoCo's XML names no branch identities, so this
  min-count rule is the exact form of the reference's count-based sets). ``None`` when gold
  covers no branch of S; the composite then uses ``s_line`` in its place.
* ``s_mod`` = mean over U of the multiset Jaccard of the method's comment-free tokens in the
  prediction and in gold; both absent = 1, one absent = 0.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath

from pytest_tebench.java.parser import JavaFile
from pytest_tebench.java.parser import identity_key
from pytest_tebench.java.parser import overloaded_names
from pytest_tebench.java.parser import parse_java
from pytest_tebench.run.maven.jacoco import CoverageReport
from pytest_tebench.workspace.checkout import FileChange
from pytest_tebench.workspace.layout import MAVEN

#: The prediction's scoring rules, in every stored item result's key: a result made under other
#: rules is made again (2: with nothing of U to run where gold's own update runs nothing either,
#: executability is the updated test code compiling; 3: a test JVM's death that Surefire writes
#: below "There are test failures." is the reason a test did not run, not a selector's miss;
#: 4: a test phase past its limit, with gold well within it, scores as failing tests; 5: a test
#: method whose name is not ASCII is also selected and read by the name javac gives it where the
#: build reads test sources in another encoding than UTF-8; 6: a selected class that a file of
#: another name declares has its module, and a test source in no module of the build says so;
#: 7: a build that died while the kernel killed for memory is not judged (run/oom), and a
#: prediction's pieces are read and applied as git reads them: modes, paths without a/ b/, lines
#: ending only at \n, links of V-0.5 untouched, stray writes put back (workspace/)).
UPDATE_RULES = 7
PAPER = "paper"
REFERENCE = "reference"
SCORINGS = (PAPER, REFERENCE)


@dataclass(frozen=True)
class ChangedMethod:
    """A production method or constructor the commit changed, located for JaCoCo."""

    source: str  # as JaCoCo names it: "org/tebench/textkit/Slug.java"
    path: str  # repository path at V-0.5
    key: str  # "Slug#slugify(String)"
    kind: str  # method | constructor
    start_line: int
    end_line: int

    def to_dict(self) -> dict[str, object]:
        return {
            "path": self.path,
            "key": self.key,
            "kind": self.kind,
            "lines": [self.start_line, self.end_line],
        }


def changed_production_methods(
    files: Iterable[FileChange], changed_lines: dict[str, tuple[frozenset[int], frozenset[int]]]
) -> tuple[ChangedMethod, ...]:
    """S: methods of V-0.5 whose range holds an added line, or whose V-1 version held a removed one.

    ``changed_lines`` maps the V-0.5 path (or V-1 path of a deleted file) to
    ``(removed line numbers in V-1, added line numbers in V-0.5)``.
    """
    found: dict[tuple[str, str], ChangedMethod] = {}
    for change in files:
        path = change.new_path
        if path is None or change.new_text is None or not MAVEN.is_production_java(path):
            continue
        removed, added = changed_lines.get(path, (frozenset(), frozenset()))
        new = parse_java(change.new_text)
        old = parse_java(change.old_text) if change.old_text is not None else None
        overloaded = overloaded_names(*(f for f in (old, new) if f is not None))
        by_key = {identity_key(m, overloaded): m for m in new.methods}
        hits = {identity_key(m, overloaded) for m in new.methods_at_lines(added)}
        if old is None:
            hits = set(by_key)  # a new file: every method is new code
        else:
            hits |= {identity_key(m, overloaded) for m in old.methods_at_lines(removed)}
        source = _jacoco_source(new, path)
        for key in sorted(hits):
            method = by_key.get(key)
            if method is not None:  # deleted methods have no V-0.5 lines to cover
                found[(path, key)] = ChangedMethod(
                    source, path, key, method.kind, method.start_line, method.end_line
                )
    return tuple(found[k] for k in sorted(found))


def _jacoco_source(parsed: JavaFile, path: str) -> str:
    name = PurePosixPath(path).name
    return f"{parsed.package.replace('.', '/')}/{name}" if parsed.package else name


@dataclass(frozen=True)
class CoverageOverlap:
    s_line: float | None
    s_branch: float | None
    gold_lines: int
    pred_lines_in_gold: int
    gold_branches: int
    pred_branches_in_gold: int

    @property
    def has_change(self) -> bool:
        """Gold's own tests cover some line of S (the paper's "coverage change")."""
        return self.gold_lines > 0


def _line_keys(methods: Iterable[ChangedMethod]) -> list[tuple[str, int]]:
    keys = {(m.source, line) for m in methods for line in range(m.start_line, m.end_line + 1)}
    return sorted(keys)


def coverage_overlap(
    methods: Sequence[ChangedMethod], gold: CoverageReport, pred: CoverageReport | None
) -> CoverageOverlap:
    """Overlap of the prediction's coverage of S with gold's (pred None = nothing ran)."""
    gold_lines = pred_lines = gold_branches = pred_branches = 0
    for source, number in _line_keys(methods):
        gold_line = gold.line(source, number)
        if gold_line is None:
            continue
        pred_line = pred.line(source, number) if pred is not None else None
        if gold_line.covered:
            gold_lines += 1
            pred_lines += int(pred_line is not None and pred_line.covered)
        gold_branches += gold_line.cb
        pred_branches += min(gold_line.cb, pred_line.cb if pred_line is not None else 0)
    return CoverageOverlap(
        s_line=pred_lines / gold_lines if gold_lines else None,
        s_branch=pred_branches / gold_branches if gold_branches else None,
        gold_lines=gold_lines,
        pred_lines_in_gold=pred_lines,
        gold_branches=gold_branches,
        pred_branches_in_gold=pred_branches,
    )


def token_jaccard(pred: Sequence[str] | None, gold: Sequence[str] | None) -> float:
    """Multiset Jaccard of two token sequences; both absent = 1, one absent = 0."""
    if pred is None and gold is None:
        return 1.0
    if pred is None or gold is None:
        return 0.0
    a, b = Counter(pred), Counter(gold)
    union = sum((a | b).values())
    return sum((a & b).values()) / union if union else 1.0


def composite(
    *,
    scoring: str,
    s_exec: float,
    s_line: float | None,
    s_branch: float | None,
    s_mod: float,
    has_coverage_change: bool,
) -> float:
    """``s_update`` under the paper's formula or the reference code's variant."""
    if scoring == PAPER:
        if not has_coverage_change:
            return s_exec * s_mod
        line = s_line or 0.0
        branch = line if s_branch is None else s_branch
        return s_exec * (0.3 * line + 0.3 * branch + 0.4 * s_mod)
    if scoring == REFERENCE:
        if s_exec < 1.0:
            return 0.0
        if not has_coverage_change:
            return s_mod
        available = [v for v in (s_line, s_branch) if v is not None]
        coverage = sum(available) / len(available) if available else 0.0
        return 0.6 * coverage + 0.4 * s_mod
    raise ValueError(f"unknown scoring {scoring!r}; expected one of {SCORINGS}")


def executability(*, compile_ok: bool, test_compile_ok: bool, tests_passed: bool) -> float:
    """``s_exec``: 0 if main or test code does not compile, 0.5 if a selected test fails, else 1."""
    if not (compile_ok and test_compile_ok):
        return 0.0
    return 1.0 if tests_passed else 0.5
