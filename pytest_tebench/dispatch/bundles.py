"""The repository objects an item needs, as a git bundle: made where pytest runs, unpacked on a worker.

Workers share no disk with the machine that runs pytest, and must not need network access to
GitHub or the user's mirrors: the controller bundles the commits an instance needs (with their
history, which a bundle cannot leave out) from the repository it already uses, once per set of
commits (kept under ``<cache>/dask/bundles``), and every worker fetches it into a bare repository
of its own cache (``<worker cache>/dask/repos/owner+name.git``), which its
:class:`~pytest_tebench.workspace.repos.RepositoryStore` then finds like a local mirror. A worker
that already holds the commits skips the fetch.

The user's repository is only read: the bundle is cut from a scratch repository that borrows
its objects (``objects/info/alternates``) and holds the one ref a bundle needs.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pytest_tebench.errors import HarnessError
from pytest_tebench.locking import file_lock
from pytest_tebench.locking import lock_name
from pytest_tebench.workspace.gitcmd import git
from pytest_tebench.workspace.gitcmd import git_text
from pytest_tebench.workspace.gitcmd import has_commit

_REF_PREFIX = "refs/tebench/"


@dataclass(frozen=True)
class Bundle:
    """A bundle file made for one repository and a set of its commits."""

    repo: str
    commits: tuple[str, ...]
    #: Names the content: the same repository and commits give the same objects.
    digest: str
    path: Path


def bundle_digest(repo: str, commits: Sequence[str]) -> str:
    return hashlib.sha256("\0".join([repo, *sorted(set(commits))]).encode()).hexdigest()


def make_bundle(git_dir: Path, repo: str, commits: Sequence[str], cache_dir: Path) -> Bundle:
    """A bundle of ``commits`` (and their history) of ``git_dir``, kept in ``cache_dir``."""
    wanted = tuple(sorted(set(commits)))
    digest = bundle_digest(repo, wanted)
    path = cache_dir / f"{digest}.bundle"
    with file_lock(cache_dir / "locks" / f"{digest}.lock"):
        if path.is_file():
            return Bundle(repo, wanted, digest, path)
        objects = Path(git_text(git_dir, "rev-parse", "--path-format=absolute", "--git-common-dir").strip())
        with tempfile.TemporaryDirectory(prefix="tebench-bundle-") as scratch:
            work = Path(scratch) / "repo.git"
            git(Path(scratch), "init", "--quiet", "--bare", str(work))
            (work / "objects" / "info" / "alternates").write_text(
                str(objects / "objects") + "\n", encoding="utf-8"
            )
            for sha in wanted:
                git(work, "update-ref", _REF_PREFIX + sha, sha)
            tmp = path.with_name(f".{digest}.{os.getpid()}.tmp")
            cache_dir.mkdir(parents=True, exist_ok=True)
            try:
                git(work, "bundle", "create", "--quiet", str(tmp), "--all", timeout=3600)
                os.replace(tmp, path)
            finally:
                tmp.unlink(missing_ok=True)
    return Bundle(repo, wanted, digest, path)


def repository_dir_name(repo: str) -> str:
    """The directory name under which a :class:`RepositoryStore` finds ``repo`` among its local dirs."""
    owner, _, name = repo.partition("/")
    return f"{owner}+{name}.git" if name else f"{repo}.git"


def unpack_bundle(data: bytes, repo: str, commits: Sequence[str], repos_dir: Path) -> Path:
    """Fetch a bundle's commits into ``repos_dir``'s bare repository of ``repo``; return its path.

    Nothing happens when the repository already has every commit (the bundle cache per worker)."""
    target = repos_dir / repository_dir_name(repo)
    with file_lock(repos_dir / "locks" / f"{lock_name(repo)}.lock"):
        if target.is_dir() and all(has_commit(target, sha) for sha in commits):
            return target
        if not (target / "objects").is_dir():
            shutil.rmtree(target, ignore_errors=True)  # an interrupted init leaves a partial one
            target.parent.mkdir(parents=True, exist_ok=True)
            git(target.parent, "init", "--quiet", "--bare", str(target))
        fd, name = tempfile.mkstemp(prefix=".incoming.", suffix=".bundle", dir=repos_dir)
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
            git(target, "fetch", "--quiet", name, f"{_REF_PREFIX}*:{_REF_PREFIX}*", timeout=3600)
        finally:
            Path(name).unlink(missing_ok=True)
    missing = [sha for sha in commits if not has_commit(target, sha)]
    if missing:
        raise HarnessError(f"the bundle of {repo} sent to this worker lacks commit(s) {', '.join(missing)}")
    return target
