"""Gold references travel with Dask tasks, so they live on the machine that runs pytest.

A benchmark caches gold references as files under one directory of its cache
(``<cache>/gold``, or the adapter's optional ``gold_cache_subdir``), each named by a key of
everything it depends on (the harness version, the instance, the toolchain). Dispatch does not
read them: on the worker, the files that appear in that directory while an item runs are sent
back with its outcome; the controller stores them in its own cache and, per instance, which
names it has (``<cache>/dask-gold/<instance>.json``); later tasks of the instance carry them
and the worker installs them before it runs the item. A name is a content key, so a file that
already exists under it is the same reference and is never overwritten. Never imports pytest.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from pathlib import Path
from pathlib import PurePosixPath
from typing import Any

from pytest_tebench.jsonfiles import write_atomic

#: Where adapters keep gold references under their cache, unless they say otherwise.
DEFAULT_SUBDIR = "gold"
#: The controller's per-instance lists of the gold files it has (under its cache).
INDEX_SUBDIR = "dask-gold"
#: A gold file larger than this stays where it was built (references are kilobytes; this is a guard).
MAX_FILE_BYTES = 16 * 1024 * 1024
#: At most this much gold travels with one task or one outcome.
MAX_TOTAL_BYTES = 64 * 1024 * 1024

Snapshot = dict[str, tuple[int, int]]


def gold_dir(adapter: object, cache_dir: Path) -> Path:
    """The directory under ``cache_dir`` where ``adapter`` keeps its gold references."""
    subdir = getattr(adapter, "gold_cache_subdir", None) or DEFAULT_SUBDIR
    return cache_dir / str(subdir)


def _safe(name: str) -> bool:
    """A relative name inside the gold directory: no absolute path, no ``..``, no hidden file."""
    path = PurePosixPath(name)
    return (
        bool(name)
        and not path.is_absolute()
        and "\\" not in name
        and all(part not in ("", ".", "..") and not part.startswith(".") for part in path.parts)
    )


def _files(root: Path) -> dict[str, Path]:
    if not root.is_dir():
        return {}
    found: dict[str, Path] = {}
    for path in root.rglob("*"):
        name = path.relative_to(root).as_posix()
        # temporary files of a writer in progress are not references
        if path.is_file() and _safe(name) and not name.endswith(".tmp"):
            found[name] = path
    return found


def snapshot(root: Path) -> Snapshot:
    """Size and modification time of every gold file: what :func:`appeared` compares with."""
    result: Snapshot = {}
    for name, path in _files(root).items():
        try:
            info = path.stat()
        except OSError:
            continue
        result[name] = (info.st_size, info.st_mtime_ns)
    return result


def _capped(files: Mapping[str, Path]) -> dict[str, bytes]:
    out: dict[str, bytes] = {}
    total = 0
    for name, path in sorted(files.items()):
        try:
            size = path.stat().st_size
            if size > MAX_FILE_BYTES or total + size > MAX_TOTAL_BYTES:
                continue
            data = path.read_bytes()
        except OSError:
            continue
        total += len(data)
        out[name] = data
    return out


def appeared(root: Path, before: Snapshot) -> dict[str, bytes]:
    """The gold files written since ``before`` (relative name -> content), within the size caps.

    Another item running at the same time on this worker may have written one of them: it is
    then sent back twice, which costs bytes, never correctness (names are content keys)."""
    now = _files(root)
    changed = {name: path for name, path in now.items() if before.get(name) != _stat(path)}
    return _capped(changed)


def _stat(path: Path) -> tuple[int, int] | None:
    try:
        info = path.stat()
    except OSError:
        return None
    return (info.st_size, info.st_mtime_ns)


def install(root: Path, files: Mapping[str, bytes]) -> list[str]:
    """Write the gold files that ``root`` lacks, atomically; returns the names written.

    An existing file under a name is kept as it is: the name is the key of everything the
    reference depends on, so it is the same reference (a byte difference would only be a field
    such as a duration)."""
    written: list[str] = []
    for name, data in sorted(files.items()):
        if not _safe(name) or not isinstance(data, bytes):
            continue  # not something a gold directory holds: never written outside it
        target = root / name
        if target.exists():
            continue
        write_atomic(target, data)
        written.append(name)
    return written


class GoldStore:
    """The controller's gold: files in its gold directory, and per instance the names it has."""

    def __init__(self, root: Path, index_dir: Path, benchmark: str) -> None:
        self.root = root
        self.index_dir = index_dir
        self.benchmark = benchmark

    def _index(self, instance_id: str) -> Path:
        digest = hashlib.sha256(f"{self.benchmark}\0{instance_id}".encode()).hexdigest()[:16]
        readable = re.sub(r"[^A-Za-z0-9_.-]+", "_", instance_id)[-80:]
        return self.index_dir / f"{self.benchmark}-{readable}-{digest}.json"

    def names(self, instance_id: str) -> list[str]:
        try:
            listed: Any = json.loads(self._index(instance_id).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return []
        if not isinstance(listed, dict) or not isinstance(listed.get("files"), list):
            return []
        return [str(name) for name in listed["files"] if isinstance(name, str) and _safe(name)]

    def files(self, instance_id: str) -> dict[str, bytes]:
        """What a task of the instance carries: the gold files this machine has for it."""
        return _capped(
            {name: self.root / name for name in self.names(instance_id) if (self.root / name).is_file()}
        )

    def keep(self, instance_id: str, files: Mapping[str, bytes]) -> list[str]:
        """Store gold files a worker sent back for the instance; returns the names newly written."""
        wanted = {name: data for name, data in files.items() if _safe(name)}
        if not wanted:
            return []
        written = install(self.root, wanted)
        names = sorted(set(self.names(instance_id)) | set(wanted))
        index = {"benchmark": self.benchmark, "instance_id": instance_id, "files": names}
        write_atomic(self._index(instance_id), (json.dumps(index, sort_keys=True) + "\n").encode("utf-8"))
        return written
