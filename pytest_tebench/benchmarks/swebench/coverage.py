"""``tebench swebench coverage``: where each instance of a dataset runs, and why.

For every row: ``build`` (its environment is built here from Debian and PyPI), ``official`` (it
runs in its official image, ``swebench/sweb.eval.x86_64.<id>:latest``) or ``unsupported`` (with
the reason), decided as a run decides it (:func:`.official_images.decide`), from the row's
``repo`` and ``version`` and SWE-bench's specification, before anything is built. Given the
repositories (``--repos``), an instance to build is also checked as an offline run checks it: tests
that need the internet (:func:`.network.offline_reason`, read from the repository at
``base_commit``) make it ``unsupported`` with the run's reason. What only a run can see is not
here: a build that fails, an official image that no registry gives.

A SWE-bench Multilingual row (:mod:`.multilingual.rows`) is decided by its repository
(:func:`.multilingual.where.decide`: built where a builder is registered, else its official image,
with why it is not built here) and listed with its language.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_tebench.benchmarks.swebench import network
from pytest_tebench.benchmarks.swebench import official
from pytest_tebench.benchmarks.swebench import official_images
from pytest_tebench.benchmarks.swebench.multilingual import rows as multilingual_rows
from pytest_tebench.benchmarks.swebench.multilingual import where as multilingual_where
from pytest_tebench.errors import HarnessError

#: ``locate(repo, commits)`` -> a git directory holding them (:meth:`RepositoryStore.locate`).
Locate = Callable[[str, Sequence[str]], Path]

WHERE = ("build", "official", "unsupported")


@dataclass(frozen=True)
class Entry:
    instance_id: str
    repo: str
    version: str
    where: str
    #: Why it is not built here (None for ``build``).
    reason: str | None
    image: str | None
    #: Whether its tests were read for internet use (a ``build`` entry, with its repository found).
    tests_checked: bool = False
    #: A Multilingual row's language (None for a Python row).
    language: str | None = None


def coverage(
    rows: Sequence[Mapping[str, Any]], mode: str = official_images.DEFAULT_MODE, locate: Locate | None = None
) -> list[Entry]:
    """One entry per row (rows need ``instance_id``, ``repo`` and ``version``; with ``locate``, also
    ``base_commit`` and ``test_patch``, and the tests of each instance to build are read)."""
    entries: list[Entry] = []
    for row in rows:
        repo, version = str(row["repo"]), str(row["version"])
        parser = row.get("log_parser")
        language = multilingual_rows.row_language(repo, parser if isinstance(parser, str) else None)
        if language is not None:
            decision = multilingual_where.decide(repo, language, mode)
            named = str(row.get("image") or "") or official_images.image_name(str(row["instance_id"]))
            where, reason = decision.where, decision.reason
            entries.append(Entry(str(row["instance_id"]), repo, version, where, reason,
                                 named if where == "official" else None, language=language))  # fmt: skip
            continue
        decision = official_images.decide(repo, version, official.specs(repo, version), mode)
        image = official_images.image_name(str(row["instance_id"])) if decision.where == "official" else None
        entry = Entry(str(row["instance_id"]), repo, version, decision.where, decision.reason, image)
        if locate is not None and entry.where == "build":
            entry = _checked(entry, row, locate)
        entries.append(entry)
    return entries


def _checked(entry: Entry, row: Mapping[str, Any], locate: Locate) -> Entry:
    """``entry`` after reading its tests as an offline run does (unchanged if the repository is not
    found: ``tests_checked`` stays false)."""
    commit, test_patch = str(row["base_commit"]), str(row.get("test_patch") or "")
    try:
        source = locate(entry.repo, [commit])
    except HarnessError:
        return entry
    files = official.test_directives(entry.repo, test_patch)
    offline = network.offline_reason(source, commit, test_patch, files, entry.repo)
    where = "build" if offline is None else "unsupported"
    return Entry(entry.instance_id, entry.repo, entry.version, where, offline, None, tests_checked=True)


def by_repository(entries: Sequence[Entry]) -> dict[str, dict[str, int]]:
    """``{repo: {"build": n, "official": n, "unsupported": n}}``, repositories sorted."""
    table: dict[str, dict[str, int]] = {}
    for entry in sorted(entries, key=lambda e: e.repo):
        table.setdefault(entry.repo, dict.fromkeys(WHERE, 0))[entry.where] += 1
    return table


def by_language(entries: Sequence[Entry]) -> dict[str, dict[str, int]]:
    """``{language: {"build": n, "official": n, "unsupported": n}}`` of the Multilingual rows."""
    table: dict[str, dict[str, int]] = {}
    for entry in sorted(entries, key=lambda e: e.language or ""):
        if entry.language is not None:
            table.setdefault(entry.language, dict.fromkeys(WHERE, 0))[entry.where] += 1
    return table


def reasons(entries: Sequence[Entry]) -> list[tuple[str, int]]:
    """Why instances are not built here, most frequent first (the Python version, a download...)."""
    # a Multilingual row's reason names its repository and language already: kept whole
    counted = Counter(e.reason if e.language else _short(e.reason) for e in entries if e.reason is not None)
    return sorted(counted.items(), key=lambda item: (-item[1], item[0]))


def _short(reason: str) -> str:
    """A reason without its (repo, version): ``needs Python 3.6; ...`` counts once for all of them;
    an internet need without its test file and the files it names."""
    if reason.startswith("the tests in "):
        return re.sub(r" \([^)]*\)(?=;)", "", "tests " + reason.split(" ", 4)[-1])
    for marker in ("'s pre_install ", " needs ", " has no "):
        head, found, tail = reason.partition(marker)
        if found and "/" in head:
            return (found + tail).strip().removeprefix("'s ")
    return reason


def as_json(entries: Sequence[Entry], mode: str) -> dict[str, Any]:
    totals = dict.fromkeys(WHERE, 0)
    for entry in entries:
        totals[entry.where] += 1
    return {
        "mode": mode,
        "instances": len(entries),
        "totals": totals,
        "repositories": by_repository(entries),
        "languages": by_language(entries),
        "reasons": dict(reasons(entries)),
        "tests_checked": sum(e.tests_checked for e in entries),
        "entries": [
            {"instance_id": e.instance_id, "repo": e.repo, "version": e.version, "where": e.where,
             "reason": e.reason, "image": e.image, "tests_checked": e.tests_checked,
             "language": e.language}
            for e in entries
        ],
    }  # fmt: skip


def table(entries: Sequence[Entry]) -> str:
    """A Markdown table per repository (with its language, for Multilingual rows), a total row, a
    table per language when there are Multilingual rows, then the reasons."""
    languages = {e.repo: e.language for e in entries if e.language is not None}
    head = "| repository | language " if languages else "| repository "
    lines = [
        head + "| instances | build | official | unsupported |",
        "|---" * (6 if languages else 5) + "|",
    ]
    totals = dict.fromkeys(WHERE, 0)
    for repo, counts in by_repository(entries).items():
        first = [repo, languages.get(repo) or "python"] if languages else [repo]
        cells = [*first, sum(counts.values()), *(counts[key] for key in WHERE)]
        lines.append("| " + " | ".join(str(cell) for cell in cells) + " |")
        for key in WHERE:
            totals[key] += counts[key]
    lines.append(
        f"| **all** |{' |' if languages else ''} {len(entries)} | {totals['build']} | {totals['official']} "
        f"| {totals['unsupported']} |"
    )
    if languages:
        lines += ["", "| language | instances | build | official | unsupported |", "|---|---|---|---|---|"]
        for language, counts in by_language(entries).items():
            cells = [language, sum(counts.values()), *(counts[key] for key in WHERE)]
            lines.append("| " + " | ".join(str(cell) for cell in cells) + " |")
    why = reasons(entries)
    if why:
        lines += ["", "Not built here:", *(f"- {count}: {reason}" for reason, count in why)]
    checked = sum(e.tests_checked for e in entries)
    if checked:
        unread = Counter(e.repo for e in entries if e.where == "build" and not e.tests_checked)
        lines += ["", f"Tests read for internet use: {checked} instances to build"]
        lines += [f"- not read (repository not found): {repo} {n}" for repo, n in sorted(unread.items())]
    return "\n".join(lines) + "\n"
