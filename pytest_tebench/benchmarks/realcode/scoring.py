"""When a body passes, and pass@k over n samples.

Two rules judge a run of the instance's selected tests (PASS_TO_PASS and FAIL_TO_PASS):

* ``tests`` (the default): every selected test passes. It is what the row's lists say the
  method must do, it does not depend on how the untouched repository behaved on this machine,
  and a listed test that fails everywhere shows up as a ground truth that does not pass
  (``pass_oracle`` below 1) instead of being silently dropped;
* ``dry-run`` (MERA's ``repotest`` rule): some selected test passes, and every selected test
  that passed in the dry run (the untouched repository) still passes.

A test skipped both in the dry run and in the run counts as holding under ``tests``, as a
skipped PASS_TO_PASS test does in SWE-bench.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence

from pytest_tebench.run.maven.surefire import PASSED
from pytest_tebench.run.maven.surefire import SKIPPED

RULES = ("tests", "dry-run")
DEFAULT_RULE = "tests"
#: The k of pass@k reported (each only over instances with at least k samples).
KS = (1, 5, 10)


def passes_tests(tests: Mapping[str, str], dry_run: Mapping[str, str], selection: Sequence[str]) -> bool:
    """Rule ``tests``: every selected test passed (or was skipped, as it was in the dry run)."""
    if not selection:
        return False
    return all(
        tests.get(test) == PASSED or (tests.get(test) == SKIPPED and dry_run.get(test) == SKIPPED)
        for test in selection
    )


def passes_dry_run(tests: Mapping[str, str], dry_run: Mapping[str, str]) -> bool:
    """Rule ``dry-run``: some test passed, and every test that passed in the dry run still passes."""
    passed = {test for test, status in tests.items() if status == PASSED}
    dry_passed = {test for test, status in dry_run.items() if status == PASSED}
    return bool(passed) and dry_passed <= passed


def judge(rule: str, tests: Mapping[str, str], dry_run: Mapping[str, str], selection: Sequence[str]) -> bool:
    if rule == "tests":
        return passes_tests(tests, dry_run, selection)
    if rule == "dry-run":
        return passes_dry_run(tests, dry_run)
    raise ValueError(f"unknown pass rule {rule!r} (known: {', '.join(RULES)})")


def pass_at_k(n: int, c: int, k: int) -> float | None:
    """The unbiased estimator 1 - C(n-c, k) / C(n, k) (Chen et al. 2021); None when n < k.

    Computed as a product, like MERA's ``compute_pass_k``, so large n never overflows."""
    if not 0 <= c <= n:
        raise ValueError(f"c must be between 0 and n (n={n}, c={c})")
    if n < k:
        return None
    if n - c < k:
        return 1.0
    return 1.0 - math.prod(1.0 - k / i for i in range(n - c + 1, n + 1))


def mean_pass_at_k(pairs: Iterable[tuple[int, int]], k: int) -> tuple[float | None, int]:
    """Mean pass@k over ``(n, c)`` pairs with n >= k, and how many pairs that was.

    A pair with n == 0 (no answer at all: an empty or missing prediction) scores 0 at every k."""
    values: list[float] = []
    for n, c in pairs:
        if n == 0:
            values.append(0.0)
            continue
        value = pass_at_k(n, c, k)
        if value is not None:
            values.append(value)
    return (sum(values) / len(values) if values else None), len(values)
