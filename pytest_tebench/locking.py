"""Inter-process file locks.

pytest-xdist runs up to N worker processes that share one cache (repository mirrors, Maven
repository, gold artefacts). Whoever creates or updates a shared thing holds an exclusive
``flock`` on a lock file next to it; the kernel drops the lock when a worker dies, so a crash
never leaves a stale lock behind.
"""

from __future__ import annotations

import fcntl
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def lock_name(key: str) -> str:
    """A file-name-safe name for ``key`` (a repository slug, a cache key...)."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "+", key).strip("+") or "lock"


@contextmanager
def file_lock(path: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``path`` (created if needed) for the ``with`` block."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)
