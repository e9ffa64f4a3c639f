"""Which SWE-bench specifications pin a package newer than the PyPI date, and what that breaks.

Environments resolve unpinned packages as PyPI stood on a date (``DEFAULT_PYPI_DATE``); a spec's
exact pins (``name==version`` in ``pip_packages`` or ``packages``) are installed whatever their
date. A pin uploaded after that date may require a dependency that had no matching release yet:
sphinx's ``tox==4.16.0`` (July 2024) requires ``cachetools>=5.3.3`` (March 2024), so with
2023-11-01 pip finds no ``cachetools`` and no sphinx environment builds. :mod:`.environment`
resolves each pin's dependencies at the later of the date and the pin's own upload
(:func:`.pypi_dates.resolve_date`); this module checks every spec for the conflict and whether
that rule settles it: per pin, the requirements (for the spec's Python) that no release uploaded
before the date satisfies, and those that none before the pin's upload satisfies.

Direct requirements only: what pip then picks for them brings its own, resolved at the same date.

    python -m pytest_tebench.benchmarks.swebench.pin_check [--date DATE] [--dataset ROWS.jsonl ...]
"""

from __future__ import annotations

import argparse
import email.parser
import json
import sys
from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from datetime import datetime
from pathlib import Path
from typing import Any

from packaging.requirements import InvalidRequirement
from packaging.requirements import Requirement
from packaging.version import Version

from pytest_tebench.benchmarks.swebench import pypi_dates
from pytest_tebench.benchmarks.swebench.environment import DEFAULT_PYPI_DATE
from pytest_tebench.benchmarks.swebench.pip_setup import EXACT_PIN


@dataclass
class PinCheck:
    """One exact pin at one Python, and the specs that ask for it."""

    pin: str
    python: str
    specs: list[str] = field(default_factory=list)
    #: When the index got the pinned version (None: the index has no such release).
    uploaded: str | None = None
    #: Its requirements for that Python (None: the index gives no metadata for it).
    requires: list[str] | None = None
    #: Requirements no release uploaded before the date satisfies.
    unmet_at_date: list[str] = field(default_factory=list)
    #: Requirements no release uploaded before the pin itself satisfies (what the rule leaves).
    unmet_at_pin_date: list[str] = field(default_factory=list)
    #: ``uploaded`` is after the date.
    newer: bool = False

    @property
    def conflict(self) -> bool:
        """The spec's environment fails at the date: a requirement cannot be met there."""
        return bool(self.unmet_at_date)

    @property
    def settled(self) -> bool:
        """Resolving at the pin's own upload date meets every requirement."""
        return self.uploaded is not None and not self.unmet_at_pin_date


class IndexPages:
    """The package index through :mod:`.pypi_dates`, each page and metadata file fetched once."""

    def __init__(self, fetch: pypi_dates.Fetch = pypi_dates.http_fetch, index: str | None = None) -> None:
        self.fetch = fetch
        self.index = index or pypi_dates.index_url()
        self._pages: dict[str, pypi_dates.Project] = {}

    def page(self, name: str) -> pypi_dates.Project:
        if name not in self._pages:
            self._pages[name] = pypi_dates.project_page(name, self.fetch, self.index)
        return self._pages[name]

    def release_times(self, name: str) -> dict[Version, datetime]:
        return pypi_dates.release_times(self.page(name))

    def upload_time(self, name: str, version: str) -> datetime | None:
        return pypi_dates.upload_time(self.page(name), version)

    def requires(self, name: str, version: str) -> list[str] | None:
        """``Requires-Dist`` of the release, from a wheel's metadata file (PEP 658), or None."""
        wanted = Version(version)
        for entry in self.page(name).get("files") or ():
            filename, url = str(entry.get("filename", "")), str(entry.get("url") or "")
            if not url or not filename.endswith(".whl") or pypi_dates.file_version(filename) != wanted:
                continue
            try:
                # asked for even when the page does not announce it (a proxy may drop the key)
                body = self.fetch(url.split("#", 1)[0] + ".metadata")
            except OSError:
                continue
            message = email.parser.Parser().parsestr(body.decode("utf-8", "replace"), headersonly=True)
            return [str(r) for r in message.get_all("Requires-Dist") or ()]
        return None


def exact_pins(spec: Mapping[str, Any]) -> list[str]:
    """The spec's ``name==version`` pins, from ``pip_packages`` and a ``packages`` list."""
    pins = [str(p) for p in spec.get("pip_packages") or ()]
    packages = spec.get("packages") or ""
    if isinstance(packages, str) and packages not in ("requirements.txt", "environment.yml"):
        pins += packages.split()
    return [p for p in pins if EXACT_PIN.fullmatch(p)]


def _applies(requirement: Requirement, python: str) -> bool:
    if requirement.marker is None:
        return True
    env = {"python_version": python, "python_full_version": f"{python}.0", "extra": ""}
    return bool(requirement.marker.evaluate(env))


def _met(requirement: Requirement, times: Mapping[Version, datetime], before: datetime) -> bool:
    candidates = [v for v, when in times.items() if when < before]
    return any(requirement.specifier.filter(candidates))


def check_pin(check: PinCheck, index: IndexPages, date: datetime) -> PinCheck:
    """Fill ``check``'s findings from the index."""
    name, version = pypi_dates.split_pin(check.pin)
    uploaded = index.upload_time(name, version)
    if uploaded is None:
        return check
    check.uploaded = pypi_dates.format_time(uploaded)
    check.newer = uploaded > date
    requires = index.requires(name, version)
    if requires is None:
        return check
    applicable: list[Requirement] = []
    for text in requires:
        try:
            requirement = Requirement(text)
        except InvalidRequirement:
            continue
        if _applies(requirement, check.python):
            applicable.append(requirement)
    check.requires = [str(r) for r in applicable]
    for requirement in applicable:
        times = index.release_times(requirement.name)
        if not _met(requirement, times, date):
            check.unmet_at_date.append(str(requirement))
        if not _met(requirement, times, max(date, uploaded)):
            check.unmet_at_pin_date.append(str(requirement))
    return check


def check_specs(
    specs: Mapping[str, Mapping[str, Mapping[str, Any]]], index: IndexPages, date: str = DEFAULT_PYPI_DATE
) -> list[PinCheck]:
    """Every exact pin of every spec (``{repo: {version: spec}}``), grouped by (pin, Python)."""
    checks: dict[tuple[str, str], PinCheck] = {}
    for repo in sorted(specs):
        for version, spec in specs[repo].items():
            python = str(spec.get("python", ""))
            for pin in exact_pins(spec):
                check = checks.setdefault((pin, python), PinCheck(pin, python))
                check.specs.append(f"{repo} {version}")
    cutoff = pypi_dates.parse_time(date)
    return [check_pin(checks[key], index, cutoff) for key in sorted(checks)]


def _versions(specs: Sequence[str]) -> str:
    """``["a/b 1.0", "a/b 1.1", "c/d 2"]`` -> ``"a/b 1.0, 1.1; c/d 2"``."""
    by_repo: dict[str, list[str]] = {}
    for entry in specs:
        repo, _, version = entry.partition(" ")
        by_repo.setdefault(repo, []).append(version)
    return "; ".join(f"{repo} {', '.join(versions)}" for repo, versions in by_repo.items())


def table(checks: Iterable[PinCheck], used: Mapping[str, Mapping[str, int]] | None = None) -> list[str]:
    """A Markdown table of the pins newer than the date (and of those the index lacks), with the
    rows of each dataset (``{name: {"repo version": rows}}``) whose specs ask for them."""
    datasets = dict(used or {})
    lines = [
        "| pin | Python | uploaded | specs | "
        + "".join(f"{name} rows | " for name in datasets)
        + "unmet at the date | unmet at the pin's date |",
        "|---|---|---|---|" + "---|" * len(datasets) + "---|---|",
    ]
    for check in checks:
        if not check.newer and check.uploaded is not None:
            continue
        rows = "".join(
            f"{sum(counts.get(spec, 0) for spec in check.specs)} | " for counts in datasets.values()
        )
        requires = "metadata unknown" if check.requires is None else ", ".join(check.unmet_at_date) or "none"
        lines.append(
            f"| `{check.pin}` | {check.python} | {check.uploaded or 'not on the index'} | "
            f"{_versions(check.specs)} | {rows}{requires} | {', '.join(check.unmet_at_pin_date) or 'none'} |"
        )
    return lines


def dataset_use(paths: Sequence[Path]) -> dict[str, dict[str, int]]:
    """``{file stem: {"repo version": rows}}``: the specs each dataset's rows use."""
    used: dict[str, dict[str, int]] = {}
    for path in paths:
        counts = used.setdefault(path.stem, {})
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                key = f"{row['repo']} {row['version']}"
                counts[key] = counts.get(key, 0) + 1
    return used


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--date", default=DEFAULT_PYPI_DATE, help="the PyPI date (default: %(default)s)")
    parser.add_argument("--dataset", type=Path, action="append", default=[], help="rows (JSONL) to count")
    parser.add_argument("--json", type=Path, help="write every check here")
    args = parser.parse_args(argv)
    from swebench.harness.constants import MAP_REPO_VERSION_TO_SPECS

    checks = check_specs(MAP_REPO_VERSION_TO_SPECS, IndexPages(), args.date)
    used = dataset_use(args.dataset)
    print("\n".join(table(checks, used)))
    conflicts = [c for c in checks if c.conflict]
    unsettled = [c for c in conflicts if not c.settled]
    print(
        f"\n{len(checks)} exact pins checked at {args.date}: {sum(c.newer for c in checks)} newer than it, "
        f"{len(conflicts)} with requirements unmet at the date, {len(unsettled)} unmet at the pin's own date"
    )
    if args.json is not None:
        args.json.write_text(
            json.dumps([{**vars(c), "conflict": c.conflict, "settled": c.settled} for c in checks], indent=1)
        )
    return 1 if unsettled else 0


if __name__ == "__main__":
    sys.exit(main())
