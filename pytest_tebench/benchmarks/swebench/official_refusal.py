"""Runner files refused in official-image mode, before anything of the prediction runs.

In build mode the prediction is applied to a clone on the host and its changes are checked against
the runner policy (:func:`.evaluation.refused_changes`). In an official image the repository lives
in the image (``/testbed``), not on the host. So only the files the patch touches (as the
project's one diff parser reads them) are taken out of the image, without starting it (``docker
create`` and ``get_archive``: no code runs), into a small scratch git repository; the patch is
applied there with the same apply chain, and its changes are judged by the same policy.

The files are read from ``/testbed``'s working tree, which is what the official harness applies
the patch to (a ``pre_install`` edit made at image build time included). A symbolic link there is
read as a link (:class:`ImageLink`) and made one in the scratch repository: git keeps a link's
target as its content, so a hunk without any mode line changes where it points, and only the
link itself tells it from a file (then refused as a ``link``). Multilingual rows ask the same
reader which touched paths are links (:func:`image_links`).
"""

from __future__ import annotations

import io
import posixpath
import tarfile
import tempfile
from collections.abc import Callable
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import Any

import docker.errors

from pytest_tebench.benchmarks.swebench import evaluation
from pytest_tebench.benchmarks.swebench.official_images import TESTBED
from pytest_tebench.errors import HarnessError
from pytest_tebench.integrity import paths
from pytest_tebench.workspace.gitcmd import git
from pytest_tebench.workspace.patches import PatchFormatError
from pytest_tebench.workspace.patches import parse_patch


@dataclass(frozen=True)
class ImageLink:
    """A symbolic link of the image's ``/testbed`` where a patch names a path: its target."""

    target: str


#: Reads the base files of an image: ``{path: bytes, the link it is, or None where /testbed has
#: no such file}``.
Reader = Callable[[list[str]], Mapping[str, bytes | ImageLink | None]]


@dataclass(frozen=True)
class Decision:
    #: The apply method that worked on the scratch copy (``evaluation.APPLY_METHODS`` name), or None.
    method: str | None
    refusals: list[paths.Refusal]
    #: The patch's changes to the touched files (as judged), for :func:`.set_aside.choose`.
    changes: tuple[paths.Change, ...] = field(default=(), compare=False)


def touched_paths(patch: str) -> list[str]:
    """Every path the patch reads or writes (old and new sides of renames), repository-relative."""
    try:
        files = parse_patch(patch)
    except PatchFormatError:
        return []
    found: list[str] = []
    for piece in files:
        for path in (piece.old_path, piece.new_path):
            if path and _safe(path):
                found.append(path)
    return list(dict.fromkeys(found))


def _safe(path: str) -> bool:
    normal = posixpath.normpath(path)
    return not (normal.startswith(("/", "../")) or normal in ("..", "."))


def decide(patch: str, reader: Reader, policy: paths.RunnerPolicy, scratch_parent: Path) -> Decision:
    """Apply ``patch`` to the touched files as ``reader`` gives them and judge its changes."""
    touched = touched_paths(patch)
    base = dict(reader(touched)) if touched else {}
    scratch_parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="swebench-refusal-", dir=scratch_parent) as name:
        tree = Path(name)
        git(tree, "init", "--quiet")
        for path, content in base.items():
            if content is None:
                continue
            target = tree / path
            target.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, ImageLink):
                target.symlink_to(content.target)  # committed as a link; never followed here
            else:
                target.write_bytes(content)
        git(tree, "add", "--all", "--force")
        git(tree, "commit", "--quiet", "--allow-empty", "--no-verify", "-m", "base")
        applied = evaluation.apply_model_patch(tree, patch)
        if applied.method is not None:
            changes = evaluation.changed_files(tree, "HEAD")
        else:
            # it does not apply to the very files the image holds, so it will not apply there either;
            # should it all the same, the paths alone still decide (no content is assumed)
            linked = {path for path, content in base.items() if isinstance(content, ImageLink)}
            changes = [
                paths.Change(path, _text(base.get(path)), None, "120000" if path in linked else "")
                for path in touched
            ]
        return Decision(applied.method, paths.refusals(changes, policy), tuple(changes))


def image_links(patch: str, reader: Reader) -> list[str]:
    """The paths ``patch`` touches that the image's ``/testbed`` holds as symbolic links."""
    touched = touched_paths(patch)
    base = reader(touched) if touched else {}
    return [path for path in touched if isinstance(base.get(path), ImageLink)]


def _text(content: bytes | ImageLink | None) -> str | None:
    return content.decode("utf-8", errors="replace") if isinstance(content, bytes) else None


def image_reader(client: Any, image: str) -> Reader:
    """A :data:`Reader` of ``image``'s ``/testbed``: a created, never started, container."""

    def read(wanted: list[str]) -> Mapping[str, bytes | ImageLink | None]:
        try:
            container = client.containers.create(image, command=["true"], network_disabled=True)
        except docker.errors.DockerException as exc:
            raise HarnessError(f"cannot read the files of {image}: {exc}") from exc
        try:
            return {path: _read_one(container, f"{TESTBED}/{path}") for path in wanted}
        finally:
            container.remove(force=True)

    return read


def _read_one(container: Any, where: str) -> bytes | ImageLink | None:
    try:
        chunks, _ = container.get_archive(where)
    except docker.errors.NotFound:
        return None
    except docker.errors.DockerException as exc:
        raise HarnessError(f"cannot read {where} from its image: {exc}") from exc
    with tarfile.open(fileobj=io.BytesIO(b"".join(chunks))) as archive:
        member = archive.next()
        if member is not None and member.issym():
            return ImageLink(member.linkname)  # get_archive gives the link itself, not its target
        if member is None or not member.isfile():
            # a folder or a hard link where the patch names a file: nothing to apply a text diff to
            return None
        extracted = archive.extractfile(member)
        return None if extracted is None else extracted.read()
