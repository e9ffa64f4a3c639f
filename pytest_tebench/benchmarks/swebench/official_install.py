"""What the official ``eval.sh``'s install changed in a container, as the Docker engine says it.

SWE-bench's eval script re-runs the repository's install after the model patch, as root, before the
tests: the prediction's ``setup.py``, build backend or entry points run there, with every right on
the image. :mod:`.official_images` therefore runs the install in a container of its own; once that
container has stopped (no process of the install survives), this module lists what it changed,
from the engine's own record of the container's writable layer (``docker diff``: nothing inside
the container can hide a file it wrote there, or rewrote and put back), and reads, through the
engine too, the content of the files :mod:`pytest_tebench.integrity.installed` compares with gold's.
"""

from __future__ import annotations

import hashlib
import io
import posixpath
import tarfile
from typing import Any

import docker.errors

from pytest_tebench.errors import HarnessError
from pytest_tebench.integrity import installed

#: ``docker diff`` kinds.
_KINDS = {0: "changed", 1: "added", 2: "deleted"}
#: Go's ``os.FileMode`` bits in the engine's stat of a path.
_MODE_DIR = 1 << 31
_MODE_LINK = 1 << 27
#: Files larger than this are digested by size only (no runner file is that big).
MAX_READ = 256 * 1024 * 1024


def engine_changes(container: Any, *, tree: str, mounts: tuple[str, ...]) -> list[installed.Change]:
    """Every path the engine says ``container`` changed, added or deleted, but the mount points
    (``mounts``) and what lies under them; content read where :func:`installed.wants_content`."""
    try:
        entries = container.diff() or []
    except docker.errors.DockerException as exc:
        raise HarnessError(f"cannot list what the install changed in {container.name}: {exc}") from exc
    listed = [(str(e["Path"]), _KINDS.get(int(e["Kind"]), "changed")) for e in entries]
    listed = [(path, kind) for path, kind in listed if not _under(path, mounts)]
    # a path another entry lies under is a folder (no need to ask the engine)
    folders = {posixpath.dirname(path) for path, _ in listed}
    changes: list[installed.Change] = []
    for path, kind in sorted(listed):
        if kind == "deleted":
            changes.append(installed.Change(path, kind, "gone"))
        elif path in folders:
            changes.append(installed.Change(path, kind, "dir"))
        elif installed.wants_content(path, tree):
            changes.append(_read(container, path, kind))
        else:
            changes.append(installed.Change(path, kind, "file"))
    return changes


def _read(container: Any, path: str, kind: str) -> installed.Change:
    try:
        stream, stat = container.get_archive(path)
    except docker.errors.NotFound:
        return installed.Change(path, kind, "gone")
    except docker.errors.DockerException as exc:
        raise HarnessError(f"cannot read {path} of {container.name}: {exc}") from exc
    mode = int(stat.get("mode") or 0)
    if mode & _MODE_DIR:
        _close(stream)
        return installed.Change(path, kind, "dir")
    if mode & _MODE_LINK:
        _close(stream)
        return installed.Change(path, kind, "link", digest="link:" + str(stat.get("linkTarget") or ""))
    size = int(stat.get("size") or 0)
    if size > MAX_READ:
        _close(stream)
        return installed.Change(path, kind, "file", digest=f"size:{size}")
    try:
        archive = b"".join(stream)
    except docker.errors.DockerException as exc:
        raise HarnessError(f"cannot read {path} of {container.name}: {exc}") from exc
    name = posixpath.basename(path)
    digest, text = _digest(archive, keep_text=name in installed.READ_FILES, byte_code=name.endswith(".pyc"))
    plugins = installed.pytest11_entries(text) if text is not None and name == "entry_points.txt" else ()
    top_level = installed.top_level_names(text) if text is not None and name == "top_level.txt" else ()
    scripts = installed.script_names(text) if text is not None and name == "entry_points.txt" else ()
    return installed.Change(
        path, kind, "file", digest=digest, pytest11=plugins, top_level=top_level, scripts=scripts
    )


#: A byte-code file's header: magic and flags (4 bytes each), then the source's stamp (8 bytes).
_PYC_STAMP = slice(8, 16)


def _digest(archive: bytes, *, keep_text: bool, byte_code: bool = False) -> tuple[str, str | None]:
    """The sha256 of the one file of a tar archive, and its text when asked. Of ``byte_code``, the
    source's stamp (its modification time and size, or its hash) is left out: an install rewrites
    sources it did not change (the editable finder), and the same code then differs only there;
    the source itself is compared on its own."""
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        for member in tar:
            content = tar.extractfile(member) if member.isfile() else None
            if content is None:
                return f"type:{member.type!r}", None
            data = content.read()
            text = data.decode("utf-8", errors="replace") if keep_text else None
            if byte_code and len(data) >= _PYC_STAMP.stop:
                data = data[: _PYC_STAMP.start] + data[_PYC_STAMP.stop :]
            return hashlib.sha256(data).hexdigest()[:32], text
    return "empty", None


def _close(stream: Any) -> None:
    close = getattr(stream, "close", None)
    if callable(close):
        close()


def _under(path: str, roots: tuple[str, ...]) -> bool:
    return any(path == root or path.startswith(root.rstrip("/") + "/") for root in roots)
