"""A private Maven local repository a build wrote, split into what it downloaded and what it installed.

Builds that run ``mvn install`` (SWE-bench's Java specifications install the project before its
tests) write the project's own artifacts into the local repository. Those belong to one commit of
one project and must never reach the repository every build shares: a later build of the project
whose own install fails (a prediction that does not compile) would otherwise test against them,
another commit's classes (possibly one that holds the fix). So such builds write into a private
head (``-Dmaven.repo.local=<head> -Dmaven.repo.local.tail=<shared>``, Maven 3.9), and afterwards
:func:`merge_downloads` moves what was downloaded into the shared repository and leaves only what
was installed in the head.

What was installed is what Maven Resolver's ``_remote.repositories`` lists with no repository id
(``gson-2.8.1-SNAPSHOT.jar>=``, where a download says ``junit-4.12.jar>central=``), plus every
``maven-metadata-local.xml`` (the install plugin's metadata). Failed-download markers
(``*.lastUpdated``) are dropped: the shared repository keeps only real files.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

#: The resolver's record of where each file of a version directory came from.
REMOTE_REPOSITORIES = "_remote.repositories"
#: Metadata only ``install`` writes (downloads write ``maven-metadata-<repo id>.xml``).
LOCAL_METADATA = "maven-metadata-local.xml"
#: A failed download's marker: never worth sharing.
FAILURE_SUFFIX = ".lastUpdated"


@dataclass(frozen=True)
class Split:
    """What :func:`merge_downloads` did: files moved into the shared repository, files it already
    had, and the installed files left in the head (paths relative to it, sorted)."""

    moved: int
    already_shared: int
    installed: tuple[str, ...]


def installed_files(version_dir: Path) -> frozenset[str]:
    """Names of the files of ``version_dir`` that ``_remote.repositories`` says were installed
    locally (a line ``name>=``: no repository id)."""
    record = version_dir / REMOTE_REPOSITORIES
    try:
        text = record.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return frozenset()
    names = set()
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("#") or "=" not in line:
            continue
        key, _, _value = line.partition("=")
        name, marker, repository = key.partition(">")
        if marker and not repository.strip():
            names.add(name)
    return frozenset(names)


def is_installed(path: Path) -> bool:
    """Whether ``path`` (a file of a local repository) is the project's own: installed, not downloaded."""
    if path.name == LOCAL_METADATA:
        return True
    listed = installed_files(path.parent)
    # the record itself goes with what it describes: an installed version's stays in the head
    return path.name in listed or (path.name == REMOTE_REPOSITORIES and bool(listed))


def merge_downloads(head: Path, shared: Path) -> Split:
    """Move every downloaded file of ``head`` into ``shared`` (a file ``shared`` already has is
    dropped from the head), leave the installed ones in ``head``, drop failure markers and empty
    directories. Each file appears in ``shared`` whole (written beside it, then renamed), so
    concurrent readers and another merge of the same file never see half of one."""
    moved = already = 0
    installed: list[str] = []
    if not head.is_dir():
        return Split(0, 0, ())
    for directory, _dirs, files in os.walk(head):
        for name in files:
            path = Path(directory) / name
            relative = path.relative_to(head)
            if name.endswith(FAILURE_SUFFIX):
                path.unlink()
                continue
            if is_installed(path):
                installed.append(str(relative))
                continue
            target = shared / relative
            if target.exists():
                already += 1
                path.unlink()
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            _move_into(path, target)
            moved += 1
    _remove_empty_directories(head)
    return Split(moved, already, tuple(sorted(installed)))


def _move_into(path: Path, target: Path) -> None:
    try:
        os.replace(path, target)
        return
    except OSError:
        pass  # another file system: copy beside the target, then rename
    handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    os.close(handle)
    try:
        shutil.copyfile(path, temporary)
        os.replace(temporary, target)
    finally:
        Path(temporary).unlink(missing_ok=True)
    path.unlink()


def _remove_empty_directories(root: Path) -> None:
    # bottom-up, so a directory whose subdirectories were all removed goes too
    for directory, _dirs, _files in os.walk(root, topdown=False):
        if Path(directory) != root:
            try:
                os.rmdir(directory)
            except OSError:
                continue  # not empty: it holds installed files
