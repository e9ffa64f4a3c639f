"""A failed clone or fetch is retried once before the item becomes a harness error."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pytest_tebench.workspace import gitcmd
from pytest_tebench.workspace import repos
from pytest_tebench.workspace.gitcmd import GitError
from pytest_tebench.workspace.repos import RepositoryStore
from pytest_tebench.workspace.repos import RepositoryUnavailable

from conftest import History


def flaky_git(monkeypatch: pytest.MonkeyPatch, command: str, failures: int) -> list[str]:
    """``git <command>`` fails ``failures`` times (leaving a partial directory behind), then works."""
    real = gitcmd.git
    calls: list[str] = []

    def git(cwd: Path, *args: str, **kwargs: Any) -> subprocess.CompletedProcess[bytes]:
        if args[0] == command:
            calls.append(command)
            if len(calls) <= failures:
                if command == "clone":
                    Path(args[-1]).mkdir(parents=True, exist_ok=True)  # what a broken clone leaves
                raise GitError(f"git {command} failed", "fatal: the remote end hung up unexpectedly")
        return real(cwd, *args, **kwargs)

    monkeypatch.setattr(repos, "git", git)
    monkeypatch.setattr(repos, "RETRY_DELAY", 0.0)
    return calls


def test_clone_is_retried_once(
    make_history: Callable[[str], History], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    h = make_history("calc")
    sha = h.commit({"a.txt": "a\n"})
    calls = flaky_git(monkeypatch, "clone", failures=1)
    store = RepositoryStore(tmp_path / "cache", url_template=str(h.path))
    mirror = store.locate("acme/calc", [sha])
    assert calls == ["clone", "clone"] and (mirror / "HEAD").is_file()


def test_fetch_is_retried_once_and_two_failures_cost_the_item(
    make_history: Callable[[str], History], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    h = make_history("calc")
    first = h.commit({"a.txt": "a\n"})
    store = RepositoryStore(tmp_path / "cache", url_template=str(h.path))
    store.locate("acme/calc", [first])
    second = h.commit({"a.txt": "b\n"})
    calls = flaky_git(monkeypatch, "fetch", failures=1)
    store.locate("acme/calc", [second])
    assert calls == ["fetch", "fetch"]
    third = h.commit({"a.txt": "c\n"})
    calls = flaky_git(monkeypatch, "fetch", failures=2)
    with pytest.raises(RepositoryUnavailable, match="cannot fetch acme/calc: git fetch failed"):
        store.locate("acme/calc", [third])
    assert calls == ["fetch", "fetch"]
