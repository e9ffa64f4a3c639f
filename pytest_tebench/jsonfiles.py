"""Files the harness writes and reads back: atomic writes, and JSON caches tied to the harness version.

Every cache on disk (results, gold references, RealCodeJava baselines, Dask's gold index) goes
through :func:`write_atomic`, so a reader or a crash mid-write sees the old file or the new one,
never a part; a JSON cache entry written by another harness version reads as absent.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from pytest_tebench import __version__


def write_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` so that a reader, or a crash mid-write, sees the old file or the
    new one, never a part: a fsynced temporary file in the same directory, then ``os.replace``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name[:8]}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def read_versioned_json(path: Path) -> dict[str, Any] | None:
    """The JSON object at ``path`` if this harness version wrote it; None when absent, unreadable
    or written by another version (its ``harness_version`` field)."""
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return None
    return value if isinstance(value, dict) and value.get("harness_version") == __version__ else None


def write_json(path: Path, value: dict[str, Any]) -> None:
    write_atomic(path, (json.dumps(value, sort_keys=True) + "\n").encode("utf-8"))
