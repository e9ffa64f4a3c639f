"""Find a git repository that holds an instance's commits: a local mirror, or a cached clone.

Resolution order for a slug ``owner/name``:

1. an embedded repository (the demo benchmark's, built offline from history shipped in the
   package), given to the store as a builder function;
2. ``--tebench-repos=DIR``: ``DIR/owner/name``, ``DIR/owner+name``, ``DIR/owner__name`` or
   ``DIR/name``, each also with a ``.git`` suffix, or ``DIR/owner+name/repo`` (the layout the
   search tool's ``fetch`` writes: a bare git dir named ``repo`` in a folder per repository); a
   working clone or a bare mirror;
3. a bare mirror in the cache, cloned from the URL template (GitHub by default) on first use
   and fetched when a commit is missing.

Local repositories are only read (workspaces are separate clones that borrow their objects),
so the user's clone is never touched. Creating and fetching cache mirrors happens under a
per-repository file lock, so N pytest-xdist workers never clone the same repository at once.
A clone or fetch that fails is retried once (after :data:`RETRY_DELAY` seconds, from scratch)
before it costs an item: network hiccups are the common cause.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable
from collections.abc import Mapping
from collections.abc import Sequence
from pathlib import Path

from pytest_tebench.errors import HarnessError
from pytest_tebench.locking import file_lock
from pytest_tebench.locking import lock_name
from pytest_tebench.workspace.gitcmd import GitError
from pytest_tebench.workspace.gitcmd import git
from pytest_tebench.workspace.gitcmd import has_commit

DEFAULT_URL_TEMPLATE = "https://github.com/{repo}.git"
#: Seconds to wait before the one retry of a failed clone or fetch.
RETRY_DELAY = 5.0


class RepositoryUnavailable(HarnessError):
    """No repository holding the instance's commits could be found or cloned."""


class RepositoryStore:
    """Maps repository slugs to git directories that contain the needed commits."""

    def __init__(
        self,
        cache_dir: Path,
        *,
        local_dirs: Sequence[Path] = (),
        url_template: str = DEFAULT_URL_TEMPLATE,
        allow_network: bool = True,
        embedded: Mapping[str, Callable[[Path], object]] | None = None,
    ) -> None:
        self.mirror_dir = cache_dir / "mirrors"
        self.lock_dir = cache_dir / "locks"
        self.local_dirs = tuple(local_dirs)
        self.url_template = url_template
        self.allow_network = allow_network
        #: slug -> function that (re)builds that repository's bare mirror at the given path
        self.embedded = dict(embedded or {})

    def locate(self, repo: str, commits: Sequence[str]) -> Path:
        """Return a git directory of ``repo`` that contains every commit in ``commits``."""
        if repo in self.embedded:
            return self._embedded_mirror(repo, commits)
        for candidate in self._local_candidates(repo):
            if _is_git_dir(candidate):
                missing = [c for c in commits if not has_commit(candidate, c)]
                if missing:
                    raise RepositoryUnavailable(
                        f"local repository {candidate} for {repo} lacks commit(s) {', '.join(missing)}; "
                        "fetch them there or point --tebench-repos elsewhere"
                    )
                return candidate
        return self._cached_mirror(repo, commits)

    def _local_candidates(self, repo: str) -> list[Path]:
        """Where ``--tebench-repos`` directories may hold ``repo``, in the order they are tried."""
        return [base / layout for base in self.local_dirs for layout in local_layouts(repo)]

    def _mirror_path(self, repo: str) -> Path:
        return self.mirror_dir / (lock_name(repo) + ".git")

    def _embedded_mirror(self, repo: str, commits: Sequence[str]) -> Path:
        mirror = self._mirror_path(repo)
        with file_lock(self.lock_dir / (lock_name(repo) + ".lock")):
            if not (_is_git_dir(mirror) and all(has_commit(mirror, c) for c in commits)):
                self.embedded[repo](mirror)
        missing = [c for c in commits if not has_commit(mirror, c)]
        if missing:
            raise RepositoryUnavailable(
                f"the embedded history of {repo} has no commit(s) {', '.join(missing)}"
            )
        return mirror

    def _cached_mirror(self, repo: str, commits: Sequence[str]) -> Path:
        mirror = self._mirror_path(repo)
        url = self.url_template.format(repo=repo)
        with file_lock(self.lock_dir / (lock_name(repo) + ".lock")):
            if not _is_git_dir(mirror):
                self._network_or_fail(repo, url)
                mirror.parent.mkdir(parents=True, exist_ok=True)

                def clone() -> None:
                    shutil.rmtree(mirror, ignore_errors=True)  # a failed clone leaves a partial one
                    git(mirror.parent, "clone", "--mirror", "--quiet", url, str(mirror), timeout=3600)

                try:
                    _retried(clone)
                except GitError as exc:
                    raise RepositoryUnavailable(f"cannot clone {repo} from {url}: {exc}") from exc
            if not all(has_commit(mirror, c) for c in commits):
                self._network_or_fail(repo, url)
                try:
                    _retried(lambda: git(mirror, "fetch", "--quiet", "--prune", "origin", timeout=3600))
                except GitError as exc:
                    raise RepositoryUnavailable(f"cannot fetch {repo}: {exc}") from exc
        missing = [c for c in commits if not has_commit(mirror, c)]
        if missing:
            raise RepositoryUnavailable(f"{repo} ({url}) has no commit(s) {', '.join(missing)}")
        return mirror

    def _network_or_fail(self, repo: str, url: str) -> None:
        if not self.allow_network:
            raise RepositoryUnavailable(
                f"{repo} is not available locally and network clones are disabled; {self._tried(repo)}"
            )

    def _tried(self, repo: str) -> str:
        """What was looked for locally, for an error: each layout under each directory."""
        if not self.local_dirs:
            return "no --tebench-repos directory was given"
        bases = ", ".join(str(base) for base in self.local_dirs)
        return (
            f"looked for {', '.join(local_layouts(repo))} (none a git directory) in --tebench-repos {bases}"
        )


def local_layouts(repo: str) -> list[str]:
    """The paths under a ``--tebench-repos`` directory that may hold ``owner/name``, in order."""
    owner, _, name = repo.partition("/")
    stems = [repo, f"{owner}+{name}", f"{owner}__{name}", name] if name else [repo]
    layouts = [layout for stem in stems for layout in (stem, stem + ".git")]
    # the search tool's fetch: a folder per repository holding the bare git dir `repo`
    return [*layouts, f"{owner}+{name}/repo"] if name else layouts


def _retried(action: Callable[[], object]) -> None:
    """Run ``action``; when git fails, once more after :data:`RETRY_DELAY` seconds."""
    try:
        action()
    except GitError:
        time.sleep(RETRY_DELAY)
        action()


def _is_git_dir(path: Path) -> bool:
    if not path.is_dir():
        return False
    result = git(path, "rev-parse", "--git-dir", check=False)
    if result.returncode != 0:
        return False
    # `rev-parse` also succeeds in any folder *inside* some other checkout; insist on this one
    top = (
        git(path, "rev-parse", "--is-bare-repository", "--show-toplevel", check=False).stdout.decode().split()
    )
    return bool(top) and (top[0] == "true" or Path(top[-1]).resolve() == path.resolve())
