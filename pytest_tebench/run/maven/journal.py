"""The journal of the shared Maven repository: every build checked and every online warm-up.

One JSON line per event in ``<maven repo>/.tebench/warmups.jsonl``, appended with one
``O_APPEND`` write so lines of concurrent writers never interleave. The warm-up
(:mod:`~pytest_tebench.run.maven.warmup`) writes it; a run reads what was learnt there about its
build (:func:`recorded_surefire`: the Surefire its effective POM runs), so no evaluation pays
for an effective POM twice.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import Any

STATE_DIR = ".tebench"
JOURNAL = "warmups.jsonl"
#: The journal field holding the oldest Surefire the build's effective POM runs ("" unknown).
SUREFIRE = "surefire"
#: The journal field saying whether every Surefire of the build's effective POM forks the tests
#: (``buildplan.surefire_forks``): only then may its launches run in a warm Maven JVM.
FORKS = "forks"
#: The journal field naming the build plugins Maven resolves from the metadata for want of a
#: version, each with the projects that run them (``{"g:a": ["project", ...]}``; absent or
#: empty: none), which :mod:`~pytest_tebench.run.maven.plugin_pins` pins by each run's date.
UNVERSIONED = "unversioned"


def journal_path(maven_repo: Path) -> Path:
    return maven_repo / STATE_DIR / JOURNAL


def read_journal(maven_repo: Path) -> list[dict[str, Any]]:
    """Every entry recorded in ``maven_repo``, oldest first."""
    path = journal_path(maven_repo)
    if not path.is_file():
        return []
    entries = []
    for line in path.read_text(encoding="utf-8").splitlines():
        with contextlib.suppress(json.JSONDecodeError):
            entry = json.loads(line)
            if isinstance(entry, dict):
                entries.append(entry)
    return entries


def append_entry(maven_repo: Path, entry: dict[str, Any]) -> None:
    path = journal_path(maven_repo)
    path.parent.mkdir(parents=True, exist_ok=True)
    # one short line per O_APPEND write: lines of concurrent writers never interleave
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, (json.dumps(entry, sort_keys=True) + "\n").encode())
    finally:
        os.close(fd)


def recorded_surefire(maven_repo: Path, build: str, entries: list[dict[str, Any]] | None = None) -> str:
    """The Surefire version the last good check of build digest ``build`` read from its
    effective POM ("" when no check recorded one). ``entries``: the journal, read once by a
    caller that asks it several things."""
    found = ""
    for entry in read_journal(maven_repo) if entries is None else entries:
        if entry.get("build") == build and entry.get("ok") and entry.get(SUREFIRE):
            found = str(entry[SUREFIRE])
    return found


def recorded_forks(maven_repo: Path, build: str, entries: list[dict[str, Any]] | None = None) -> bool:
    """Whether the last good check of build digest ``build`` found that its tests run in forked
    JVMs (False when no check recorded it: such a build never runs warm)."""
    found = False
    for entry in read_journal(maven_repo) if entries is None else entries:
        if entry.get("build") == build and entry.get("ok") and FORKS in entry:
            found = entry[FORKS] is True
    return found


def recorded_unversioned(
    maven_repo: Path, build: str, entries: list[dict[str, Any]] | None = None
) -> dict[str, list[str]]:
    """The unversioned build plugins the good checks and warm-ups of build digest ``build``
    found ({} when none)."""
    found: dict[str, list[str]] = {}
    for entry in read_journal(maven_repo) if entries is None else entries:
        plugins = entry.get(UNVERSIONED)
        if entry.get("build") == build and entry.get("ok") and isinstance(plugins, dict):
            for plugin, projects in plugins.items():
                if isinstance(projects, list):
                    found[str(plugin)] = sorted({*found.get(str(plugin), []), *map(str, projects)})
    return found
