"""Gold's baselines, per instance and image, that a prediction's run is judged against: the
guard's record of gold's run, and what gold's install changed in an official image.

Each is stored under the cache (``swebench-guard/``, ``swebench-install/``) and made at most once:
parallel workers judging models of one instance wait on a lock while one of them runs gold.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from typing import Protocol

from pytest_tebench.benchmarks.swebench import evaluation
from pytest_tebench.benchmarks.swebench import official
from pytest_tebench.benchmarks.swebench import official_images
from pytest_tebench.benchmarks.swebench.instances import SwebenchInstance
from pytest_tebench.benchmarks.swebench.records import register_demo
from pytest_tebench.errors import HarnessError
from pytest_tebench.integrity import evidence
from pytest_tebench.integrity import installed
from pytest_tebench.jsonfiles import write_atomic
from pytest_tebench.locking import file_lock

NO_BASELINE = "none (the gold run left no guard record)"
NO_INSTALL_BASELINE = "none (gold's patch does not apply): runner and start-up files judged alone"
#: Part of the stored install baselines' keys: bump when what is recorded of an install changes.
INSTALL_CHECK_VERSION = 3


class GoldRun(Protocol):
    """What a baseline reads of gold's run of the tests."""

    result: Any
    log: str
    nonce: str


def guard_store(cache_dir: Path, key: Sequence[Any]) -> Path:
    """Where gold's guard record is stored for ``key`` (the item's result key, the image, the guard's
    version and digest, the evaluation's version)."""
    text = json.dumps(list(key), sort_keys=True)
    return cache_dir / "swebench-guard" / (hashlib.sha256(text.encode()).hexdigest() + ".json")


def store_guard_baseline(store: Path, baseline: dict[str, Any] | None) -> None:
    """Gold judged now: its own record is the baseline of later runs."""
    write_atomic(store, json.dumps({"baseline": baseline}).encode())


def guard_baseline(
    store: Path, cache_dir: Path, payload: SwebenchInstance, run_gold: Callable[[], GoldRun]
) -> tuple[dict[str, Any] | None, str]:
    """Gold's guard record for this instance and image, and how it was found: stored, or made now
    by ``run_gold`` (under a lock: parallel workers judging models of one instance run gold once)."""
    with file_lock(cache_dir / "locks" / (store.stem + ".guard.lock")):
        try:
            stored = json.loads(store.read_text(encoding="utf-8"))
            baseline = stored.get("baseline")
        except (OSError, ValueError, AttributeError):
            pass
        else:
            return baseline, "gold run" if baseline else NO_BASELINE
        gold = run_gold()
        baseline = None
        if gold.result is not None and not gold.result.timed_out and official.START_TEST_OUTPUT in gold.log:
            register_demo()
            grading = evaluation.graded_fields(payload, evidence.strip_records(gold.log, gold.nonce))
            tests = set(payload.fail_to_pass) | set(payload.pass_to_pass)
            successes = {name: status for name, status in grading["status_map"].items() if name in tests}
            baseline = evidence.baseline_of(evidence.records(gold.log, gold.nonce), successes)
        store_guard_baseline(store, baseline)
    return baseline, "gold run" if baseline else NO_BASELINE


def install_store(cache_dir: Path, instance_id: str, image: str, official_version: int) -> Path:
    """Where gold's install changes are stored for this instance and image, today."""
    # per day: setuptools-scm stamps a dirty tree's version with the date, and that version names
    # the files an editable install writes into site-packages (its .pth, its finder)
    day = time.strftime("%Y-%m-%d", time.gmtime())
    key = json.dumps([instance_id, image, INSTALL_CHECK_VERSION, official_version, day])
    return cache_dir / "swebench-install" / (hashlib.sha256(key.encode()).hexdigest() + ".json")


def store_install_baseline(store: Path, changes: Sequence[installed.Change]) -> None:
    """Gold's install judged now: its changes are the baseline of later runs."""
    write_atomic(store, json.dumps({"changes": [c.as_record() for c in changes]}).encode())


def install_baseline(
    store: Path,
    cache_dir: Path,
    run_install: Callable[[], official_images.OfficialRun],
    *,
    timed_out_error: str,
) -> list[installed.Change] | None:
    """What gold's install changes in this image: stored, or found now by ``run_install`` (gold's
    install phase alone, under a lock: parallel workers run it once); None when gold's patch does
    not apply there. ``timed_out_error`` is the error when it runs past its time limit."""
    with file_lock(cache_dir / "locks" / (store.stem + ".install.lock")):
        try:
            stored = json.loads(store.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            stored = None
        if not isinstance(stored, dict):
            ran = run_install()
            if ran.result.timed_out:
                raise HarnessError(timed_out_error)
            changes = [c.as_record() for c in ran.installed] if ran.method is not None else None
            stored = {"changes": changes}
            write_atomic(store, json.dumps(stored).encode())
    changes = stored.get("changes") if isinstance(stored, dict) else None
    return None if changes is None else [installed.Change.from_record(c) for c in changes]
