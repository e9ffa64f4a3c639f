"""Finished workspaces removed off the item's path.

A finished workspace (a checkout and its ``target/`` trees: thousands of class files) takes from
half a second to several seconds to delete on a busy machine, and the next item need not wait
for it. :func:`remove_tree` moves the tree aside at once, into a fresh hidden directory beside it
(one rename on the same file system: its path is free again and nothing reads it by name), and
one background thread per process deletes it. :func:`wait_for_removals` waits for what is still
being deleted: the process role that runs items calls it at the session's end, and the pool's
thread is joined before the interpreter exits in any case (``concurrent.futures`` joins its
workers), so no run leaves a tree behind on a normal exit.

Who runs this: every process that removes workspaces (pytest workers, ``tebench build``).
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
from concurrent.futures import Future
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

#: The prefix of a tree being deleted, beside where it was.
REMOVING_PREFIX = ".removing-"

_lock = threading.Lock()


class _Remover:
    """One process's deleting thread and what it has still to delete."""

    def __init__(self) -> None:
        self.pid = os.getpid()
        self.pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="tebench-remove")
        self.pending: list[Future[None]] = []


#: This process's remover, made anew in a forked child (whose copy has no thread behind it).
_current: dict[str, _Remover] = {}


def _remover() -> _Remover:
    remover = _current.get("remover")
    if remover is None or remover.pid != os.getpid():
        remover = _current["remover"] = _Remover()
    return remover


def remove_tree(path: Path) -> None:
    """Remove ``path`` (a directory tree): gone from its name when this returns, deleted soon."""
    if not path.exists():
        return
    try:
        aside = Path(tempfile.mkdtemp(prefix=f"{REMOVING_PREFIX}{path.name}-", dir=path.parent))
    except OSError:
        shutil.rmtree(path, ignore_errors=True)
        return
    try:
        os.rename(path, aside / "tree")
    except OSError:
        # another file system, a busy name: delete in place, as before
        shutil.rmtree(path, ignore_errors=True)
        aside.rmdir()
        return
    with _lock:
        remover = _remover()
        remover.pending[:] = [future for future in remover.pending if not future.done()]
        remover.pending.append(remover.pool.submit(shutil.rmtree, aside, True))


def wait_for_removals() -> None:
    """Block until every tree handed to :func:`remove_tree` so far is deleted."""
    with _lock:
        remover = _remover()
        pending = list(remover.pending)
        remover.pending.clear()
    for future in pending:
        future.result()
