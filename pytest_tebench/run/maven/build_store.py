"""The stored builds' upkeep: what ``<cache>/prebuilt`` holds, when each build was last used, pruning.

Every instance a run evaluates leaves one stored build there (:mod:`prebuilt`: its production
``target/`` trees, and under ``tests/`` gold's compiled test side with gold's Java sources,
:mod:`prebuilt_tests`): a few MB on a small project, tens on commons-lang or a reactor, so a whole
TEBench run leaves GBs. ``tebench cache info`` shows them, ``tebench cache prune`` trims them
(``--older-than`` with the stored results, ``--max-build-size`` on its own).

A stored build is the directory ``<store>/<key>`` with its ``manifest.json``; the manifest's
modification time says when the build was last restored (``prebuilt.mark_used``, by every
launch that reuses it). Removing a build renames it away first, in one step: a run that has not yet
read its manifest finds no build and compiles (as for a tree never stored); a run already
copying out of it fails its copy and falls back to compiling as well (``prebuilt.prepare``,
``prebuilt_tests.prepare``), so a prune during a run costs time, never a verdict. Its lock
files (``<store>/locks``, empty) stay: removing a lock another process may hold would let two
processes build the same entry.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from pytest_tebench.results import CacheStats
from pytest_tebench.run.maven.prebuilt import MANIFEST

#: A half-stored or half-removed build (``.<key>.<pid>.tmp`` / ``.trash``) older than this is a
#: killed process's leftover.
LEFTOVER_SECONDS = 3600
#: The store's lock directory, never a build.
LOCKS = "locks"


@dataclass(frozen=True)
class StoredBuild:
    path: Path
    #: When a launch last restored it (its manifest's modification time).
    last_used: float
    #: Bytes of its files.
    size: int


def _size(root: Path) -> int:
    total = 0
    for directory, _, files in os.walk(root):
        for name in files:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(directory, name)).st_size
    return total


def stored_builds(store: Path) -> list[StoredBuild]:
    """Every stored build under ``store``, in no particular order."""
    builds: list[StoredBuild] = []
    if not store.is_dir():
        return builds
    for entry in store.iterdir():
        if entry.name.startswith(".") or entry.name == LOCKS or entry.is_symlink() or not entry.is_dir():
            continue
        try:
            used = (entry / MANIFEST).stat().st_mtime
        except OSError:
            continue  # not a stored build
        builds.append(StoredBuild(entry, used, _size(entry)))
    return builds


def stats(store: Path) -> CacheStats:
    """The stored builds as the result store counts its entries."""
    builds = stored_builds(store)
    times = [build.last_used for build in builds]
    return CacheStats(
        len(builds), sum(b.size for b in builds), min(times) if times else None, max(times) if times else None
    )


def remove_build(entry: Path) -> bool:
    """Rename the build away (readers then see none), then delete it. False when it was gone."""
    trash = entry.parent / f".{entry.name}.{os.getpid()}.trash"
    try:
        os.rename(entry, trash)
    except OSError:
        return False
    shutil.rmtree(trash, ignore_errors=True)
    return True


def prune(store: Path, *, older_than: float | None = None, max_bytes: int | None = None) -> int:
    """Remove the builds unused for ``older_than`` seconds, then the least recently used until the
    store holds at most ``max_bytes``; also leftovers of killed processes. Returns how many builds went."""
    now = time.time()
    if store.is_dir():
        for leftover in store.glob(".*"):
            with contextlib.suppress(OSError):
                if (
                    leftover.name.endswith((".tmp", ".trash"))
                    and now - leftover.lstat().st_mtime > LEFTOVER_SECONDS
                ):
                    shutil.rmtree(leftover, ignore_errors=True)
    removed = 0
    kept: list[StoredBuild] = []
    for build in stored_builds(store):
        if older_than is not None and now - build.last_used > older_than:
            removed += remove_build(build.path)
        else:
            kept.append(build)
    if max_bytes is not None:
        total = sum(build.size for build in kept)
        for build in sorted(kept, key=lambda b: b.last_used):
            if total <= max_bytes:
                break
            if remove_build(build.path):
                removed += 1
                total -= build.size
    return removed
