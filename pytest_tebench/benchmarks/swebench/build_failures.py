"""Image builds that failed, remembered by image tag (the hash of the recipe) under the cache.

An environment that cannot be built fails the same way for every instance that needs it, in every
xdist worker and in the next run with the same recipe: building it again costs minutes each time
and says nothing new (12 attempts for 6 sphinx images in one run before this). So a failed build
leaves a marker named by its tag; the build-once lock (:func:`.environment._build_once`) reads it
before building. A marker of this run (any worker: they share the cache folder) stops the build;
one of an earlier run stops it too, unless the run retries (``--tebench-rerun``). ``tebench cache
retry-builds`` removes every marker; a successful build removes its own.
"""

from __future__ import annotations

import os
import uuid
from dataclasses import dataclass
from datetime import UTC
from datetime import datetime
from pathlib import Path

from pytest_tebench import __version__
from pytest_tebench.errors import HarnessError
from pytest_tebench.jsonfiles import read_versioned_json
from pytest_tebench.jsonfiles import write_json
from pytest_tebench.locking import lock_name

#: The folder of markers under the cache directory.
FOLDER = "swebench-failed-builds"
RETRY_HINT = "`tebench cache retry-builds` or --tebench-rerun builds it again"


def current_run_id() -> str:
    """The id every process of this run shares: xdist's test run id in its workers, else this
    process's own (one process runs everything)."""
    return os.environ.get("PYTEST_XDIST_TESTRUNUID") or _PROCESS_RUN_ID


_PROCESS_RUN_ID = uuid.uuid4().hex


class EarlierBuildFailed(HarnessError):
    """The image failed to build before, in this run or an earlier one: not built again."""


@dataclass(frozen=True)
class BuildFailures:
    root: Path
    run_id: str
    #: Build again images that failed in earlier runs (this run's failures still stop a build).
    retry: bool = False

    def _marker(self, tag: str) -> Path:
        return self.root / f"{lock_name(tag)}.json"

    def check(self, tag: str) -> None:
        """Raise :class:`EarlierBuildFailed` when ``tag`` failed in this run, or in an earlier one
        and the run does not retry."""
        # a marker of another harness version is not read: that version may build it
        marker = read_versioned_json(self._marker(tag))
        if marker is None:
            return
        what = f"image {tag} ({marker.get('what', '')})"
        if marker.get("run") == self.run_id:
            raise EarlierBuildFailed(
                f"{what} failed to build earlier in this run; not built again ({RETRY_HINT}): "
                f"{marker.get('error')}"
            )
        if not self.retry:
            raise EarlierBuildFailed(
                f"{what} failed to build on {marker.get('when')} (an earlier run, same recipe); not built "
                f"again ({RETRY_HINT}): {marker.get('error')}"
            )

    def record(self, tag: str, what: str, error: str) -> None:
        when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
        error = error.removeprefix(f"image {tag} failed to build: ")  # said again when it is read
        payload = {"tag": tag, "what": what, "error": error, "when": when, "run": self.run_id}
        write_json(self._marker(tag), {**payload, "harness_version": __version__})

    def clear(self, tag: str) -> None:
        self._marker(tag).unlink(missing_ok=True)


def forget_all(cache_dir: Path) -> int:
    """Remove every marker (``tebench cache retry-builds``); how many there were."""
    markers = list((cache_dir / FOLDER).glob("*.json"))
    for marker in markers:
        marker.unlink(missing_ok=True)
    return len(markers)


def count(cache_dir: Path) -> int:
    return len(list((cache_dir / FOLDER).glob("*.json")))
