"""Finished items' records on disk, keyed by everything that determines them.

An interrupted run resumes, and a repeated run (a model added to a file, the same file the next
day) evaluates only what is new: before an item prepares anything, the process that runs it
looks its key up here. The key is a hash of

* the harness version and the benchmark's name,
* the instance's content and the benchmark's scoring settings (``BenchmarkAdapter.cache_key``),
* the prediction's patch as it is applied (extracted from the raw output, byte for byte),
* the executor and its toolchain (``Executor.toolchain()``: JDKs and Maven, or the image id),

never by a name: a changed patch under the same model name is a new key. Only scored records
are stored: harness errors, timeouts and invalid instances are evaluated again next time.

Writes are atomic (a temporary file in the same directory, fsynced, then renamed), so a run
killed at any moment leaves whole entries or none; an entry that does not parse is dropped.
Shared by xdist workers (and by users, with ``--tebench-cache-dir``) without locks: two
processes writing one key write the same content.

Pure Python; the ``tebench cache info|prune`` command and the plugin both use it.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
from collections.abc import Iterator
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_tebench.jsonfiles import write_atomic
from pytest_tebench.metrics.outcomes import SCORED_STATUSES

#: Bumped when the entry layout changes; older entries are then simply not found.
ENTRY_VERSION = 1
#: Record fields that say which submitted line of which instance an entry serves, re-stamped on
#: every hit (a relabelled dataset must not bring back old labels).
IDENTITY_FIELDS = ("instance_id", "model_name_or_path", "project", "labels", "origin", "extraction")


def result_key(
    *,
    harness_version: str,
    benchmark: str,
    instance_key: str,
    patch: str,
    missing: bool,
    executor: str,
    toolchain: str,
) -> str:
    """The content key of one item's result (hex sha256)."""
    parts = {
        "v": ENTRY_VERSION,
        "harness": harness_version,
        "benchmark": benchmark,
        "instance": instance_key,
        # the patch exactly as it is applied (extracted from the model's output already): line
        # endings and trailing lines change what git and patch do with it, so they are part of it
        "patch": hashlib.sha256(patch.encode("utf-8", "surrogateescape")).hexdigest(),
        "missing": missing,
        "executor": executor,
        "toolchain": toolchain,
    }
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()


def cacheable(record: Mapping[str, Any]) -> bool:
    """Only judged predictions are stored; the harness's trouble is retried next time."""
    return record.get("status") in SCORED_STATUSES


@dataclass(frozen=True)
class CacheStats:
    entries: int
    bytes: int
    oldest: float | None
    newest: float | None


class ResultCache:
    """Records under ``<root>/<key[:2]>/<key>.json``."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def _path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict[str, Any] | None:
        path = self._path(key)
        try:
            entry = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError):
            # half-written entries cannot exist (atomic writes); anything unreadable is dropped
            with contextlib.suppress(OSError):
                path.unlink()
            return None
        if (
            not isinstance(entry, dict)
            or entry.get("key") != key
            or not isinstance(entry.get("record"), dict)
        ):
            return None
        with contextlib.suppress(OSError):
            os.utime(path)  # pruning by age keeps what is still used
        record: dict[str, Any] = entry["record"]
        return record

    def put(self, key: str, record: Mapping[str, Any]) -> bool:
        """Store ``record`` under ``key`` if it may be cached; True when stored."""
        if not cacheable(record):
            return False
        path = self._path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        data = json.dumps({"key": key, "stored": time.time(), "record": dict(record)}, sort_keys=True)
        write_atomic(path, data.encode("utf-8"))
        return True

    def entries(self) -> Iterator[Path]:
        if self.root.is_dir():
            yield from self.root.glob("??/*.json")

    def stats(self) -> CacheStats:
        sizes, times = 0, []
        count = 0
        for path in self.entries():
            with contextlib.suppress(OSError):
                info = path.stat()
                sizes += info.st_size
                times.append(info.st_mtime)
                count += 1
        return CacheStats(count, sizes, min(times) if times else None, max(times) if times else None)

    def prune(self, *, older_than: float | None = None, max_bytes: int | None = None) -> int:
        """Remove entries unused for ``older_than`` seconds, then the least recently used until the
        cache holds at most ``max_bytes``; also leftovers of killed writers. Returns how many went."""
        now = time.time()
        removed = 0
        for tmp in self.root.glob("??/.*.tmp") if self.root.is_dir() else ():
            with contextlib.suppress(OSError):
                if now - tmp.stat().st_mtime > 3600:
                    tmp.unlink()
        kept: list[tuple[float, int, Path]] = []
        for path in self.entries():
            try:
                info = path.stat()
            except OSError:
                continue
            if older_than is not None and now - info.st_mtime > older_than:
                with contextlib.suppress(OSError):
                    path.unlink()
                    removed += 1
                continue
            kept.append((info.st_mtime, info.st_size, path))
        if max_bytes is not None:
            total = sum(size for _, size, _ in kept)
            for _, size, path in sorted(kept):
                if total <= max_bytes:
                    break
                with contextlib.suppress(OSError):
                    path.unlink()
                    removed += 1
                    total -= size
        return removed
