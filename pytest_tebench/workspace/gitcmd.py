"""Run git with an environment that makes results the same on every machine.

User configuration (hooks, signing, autocrlf, templates) must not change what the harness
builds, or two machines would score the same prediction differently. Every call goes through
:func:`git`, which isolates git from global and system config and fixes the identity and dates
of the commits the harness makes, so the V-0.5 commit of an instance has the same hash everywhere.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping
from pathlib import Path

from pytest_tebench.errors import HarnessError

_FIXED_DATE = "2000-01-01T00:00:00+0000"
_BASE_CONFIG = (
    "-c", "core.autocrlf=false",
    "-c", "core.hooksPath=/dev/null",
    "-c", "commit.gpgsign=false",
    "-c", "gc.auto=0",
    "-c", "advice.detachedHead=false",
)  # fmt: skip


class GitError(HarnessError):
    """A git command failed; ``stderr`` holds git's own explanation."""

    def __init__(self, message: str, stderr: str = "") -> None:
        super().__init__(f"{message}: {stderr.strip()}" if stderr.strip() else message)
        self.stderr = stderr


def git_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_GLOBAL=os.devnull,
        GIT_TERMINAL_PROMPT="0",
        GIT_AUTHOR_NAME="pytest-tebench",
        GIT_AUTHOR_EMAIL="harness@tebench.invalid",
        GIT_COMMITTER_NAME="pytest-tebench",
        GIT_COMMITTER_EMAIL="harness@tebench.invalid",
        GIT_AUTHOR_DATE=_FIXED_DATE,
        GIT_COMMITTER_DATE=_FIXED_DATE,
        LC_ALL="C",
    )
    return env


def git(
    cwd: Path,
    *args: str,
    input: bytes | None = None,
    check: bool = True,
    timeout: float = 600,
    env: Mapping[str, str] | None = None,
) -> subprocess.CompletedProcess[bytes]:
    """Run ``git <args>`` in ``cwd``; raise :class:`GitError` on failure when ``check``.

    The one git runner of the package. ``env`` replaces :func:`git_env` for the few callers
    that need a different, still closed, environment (the demo replay's own identities and
    dates; an extra ``GIT_INDEX_FILE``)."""
    try:
        completed = subprocess.run(
            ["git", *_BASE_CONFIG, *args],
            cwd=cwd,
            input=input,
            capture_output=True,
            env=dict(env) if env is not None else git_env(),
            timeout=timeout,
            check=False,
        )
    except FileNotFoundError as exc:
        # subprocess raises the same error for a missing working directory as for a missing git
        if not Path(cwd).is_dir():
            raise GitError(f"git {args[0]}: no directory {cwd}") from exc
        raise HarnessError("git is not installed or not on PATH") from exc
    except subprocess.TimeoutExpired as exc:
        raise GitError(f"git {args[0]} timed out after {timeout:.0f} s") from exc
    if check and completed.returncode != 0:
        raise GitError(f"git {' '.join(args[:2])} failed in {cwd}", completed.stderr.decode(errors="replace"))
    return completed


def git_text(cwd: Path, *args: str, check: bool = True) -> str:
    return git(cwd, *args, check=check).stdout.decode("utf-8", errors="replace")


def has_commit(git_dir: Path, sha: str) -> bool:
    return git(git_dir, "cat-file", "-e", f"{sha}^{{commit}}", check=False).returncode == 0


def file_at(repo: Path, revision: str, path: str) -> bytes | None:
    """The bytes of ``path`` at ``revision`` as git stores them; None when it has no such file."""
    result = git(repo, "show", f"{revision}:{path}", check=False)
    return result.stdout if result.returncode == 0 else None
