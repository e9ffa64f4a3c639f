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
import re
import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

#: The resolver's record of where each file of a version directory came from.
REMOTE_REPOSITORIES = "_remote.repositories"
#: Metadata only ``install`` writes (downloads write ``maven-metadata-<repo id>.xml``).
LOCAL_METADATA = "maven-metadata-local.xml"
#: A failed download's marker: never worth sharing.
FAILURE_SUFFIX = ".lastUpdated"
#: A path into the local repository written in a POM: ``${settings.localRepository}/<path>`` (or the
#: ``maven.repo.local`` property), up to a quote, whitespace or the element's end.
_NAMED_PATH = re.compile(r"\$\{(?:settings\.localRepository|maven\.repo\.local)\}[/\\](?P<path>[^'\"\s<>]+)")
#: Folders of a checkout that hold no POM of the project's own.
_SKIPPED_DIRS = frozenset({".git", "target", "node_modules"})


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
            if name.endswith(FAILURE_SUFFIX) or path.is_symlink():
                # a link to a tail's file (link_named_files) is nobody's download
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


def named_artifact_dirs(tree: Path) -> list[str]:
    """The local-repository folders the POMs under ``tree`` name by path (relative, sorted): each
    ``${settings.localRepository}/<path>`` cut before its first segment with a property in it, so
    ``net/bytebuddy/byte-buddy-agent/${v}/byte-buddy-agent-${v}.jar`` names
    ``net/bytebuddy/byte-buddy-agent`` (every version: the property's value is the build's to say)."""
    found: set[str] = set()
    for directory, dirs, files in os.walk(tree):
        dirs[:] = [d for d in dirs if d not in _SKIPPED_DIRS]
        for name in files:
            if name != "pom.xml":
                continue
            text = (Path(directory) / name).read_text(encoding="utf-8", errors="replace")
            for match in _NAMED_PATH.finditer(text):
                segments: list[str] = []
                for segment in match.group("path").replace("\\", "/").split("/"):
                    if "${" in segment or segment in ("", ".", ".."):
                        break
                    segments.append(segment)
                # a group folder alone (``org``) would name half the repository: at least group/artifact
                if len(segments) >= 2:
                    found.add("/".join(segments))
    return sorted(found)


def link_named_files(head: Path, folders: Sequence[str], tails: Sequence[tuple[Path, str]]) -> int:
    """Link into ``head`` each file under ``folders`` that a tail holds and the head lacks, the
    first tail first; ``tails`` are ``(host folder, the path the build sees it at)``, so a link points
    where the build runs (a container's mount). The resolver's own records
    (``_remote.repositories``) are not linked: the head never writes through a link, and an artifact
    the head has no record of is still found in its tail. Returns the number of links made."""
    made = 0
    for folder in folders:
        for host, seen_as in tails:
            root = host / folder
            if not root.is_dir():
                continue
            for directory, _dirs, files in os.walk(root):
                for name in files:
                    if name == REMOTE_REPOSITORIES or name.endswith(FAILURE_SUFFIX):
                        continue
                    relative = (Path(directory) / name).relative_to(host)
                    link = head / relative
                    if link.exists() or link.is_symlink():
                        continue
                    link.parent.mkdir(parents=True, exist_ok=True)
                    link.symlink_to(f"{seen_as.rstrip('/')}/{relative.as_posix()}")
                    made += 1
    return made
