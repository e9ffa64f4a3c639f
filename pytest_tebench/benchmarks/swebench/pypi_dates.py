"""Upload dates of releases on the package index (the Simple API's JSON form, PEP 691/700).

An environment resolves unpinned packages as PyPI stood on a date (pip's ``--uploaded-prior-to``).
A spec's exact pin may be newer than that date (sphinx pins ``tox==4.16.0``, uploaded in July 2024)
and then needs dependencies that did not exist yet (``cachetools>=5.3.3``). The rule: a pin's
dependencies resolve as the index stood when the pin itself was uploaded, never before the run's
date: ``max(date, upload time of the pin)``. This module finds that date.

It runs in two places: on the host (:mod:`.pin_check`, which checks every spec), and copied as a
script into an environment build, where ``python pypi_dates.py DATE NAME==VERSION`` prints the date
to resolve that pin's dependencies at. So it needs the standard library only, plus ``packaging``
(the venv's pip vendors it when it is not installed) and pip's own default index; Python 3.9 syntax.
"""

from __future__ import annotations

import json
import os
import re
import sys
import urllib.request
from collections.abc import Callable
from datetime import datetime
from datetime import timezone
from typing import Any

try:  # pragma: no cover - which one exists depends on the interpreter
    from packaging.utils import canonicalize_name
    from packaging.version import InvalidVersion
    from packaging.version import Version
except ImportError:  # pragma: no cover - in a fresh venv: pip's vendored copy
    from pip._vendor.packaging.utils import canonicalize_name  # type: ignore[assignment]
    from pip._vendor.packaging.version import InvalidVersion  # type: ignore[assignment]
    from pip._vendor.packaging.version import Version  # type: ignore[assignment]

#: A project's Simple API page as JSON: ``{"name", "files": [{"filename", "upload-time", ...}]}``.
Project = dict[str, Any]
#: ``fetch(url)`` -> the response body (injected in tests with recorded pages).
Fetch = Callable[[str], bytes]

#: datetime.UTC is 3.11+; this file also runs on the 3.9 of older environments.
_UTC = timezone.utc  # noqa: UP017
#: The Simple API's JSON form first; anything for other files (wheel metadata, PEP 658).
ACCEPT = "application/vnd.pypi.simple.v1+json, */*;q=0.01"
_SDIST_SUFFIXES = (".tar.gz", ".zip", ".tar.bz2", ".tgz")


def index_url() -> str:
    """The index pip uses here: ``PIP_INDEX_URL``, else pip's own default."""
    configured = os.environ.get("PIP_INDEX_URL")
    if configured:
        return configured.rstrip("/")
    from pip._internal.models.index import PyPI

    return str(PyPI.simple_url).rstrip("/")


def http_fetch(url: str) -> bytes:
    request = urllib.request.Request(url, headers={"Accept": ACCEPT, "User-Agent": "pytest-tebench"})
    with urllib.request.urlopen(request, timeout=60) as response:
        body: bytes = response.read()
    return body


def project_page(name: str, fetch: Fetch = http_fetch, index: str | None = None) -> Project:
    """The project's file list with upload times."""
    url = f"{index or index_url()}/{canonicalize_name(name)}/"
    page: Project = json.loads(fetch(url))
    return page


def file_version(filename: str) -> Version | None:
    """The version a wheel or sdist file name carries (None when it cannot be read)."""
    if filename.endswith(".whl") or filename.endswith(".egg"):
        parts = filename.split("-")
        text = parts[1] if len(parts) > 2 else ""
    else:
        stem = next((filename[: -len(s)] for s in _SDIST_SUFFIXES if filename.endswith(s)), "")
        text = stem.rsplit("-", 1)[1] if "-" in stem else ""
    try:
        return Version(text)
    except InvalidVersion:
        return None


def parse_time(text: str) -> datetime:
    """``2024-07-02T17:48:26.123456Z`` (as the index writes it) as an aware datetime."""
    text = re.sub(r"Z$", "+00:00", text.strip())
    return datetime.fromisoformat(text).astimezone(_UTC)


def release_times(page: Project) -> dict[Version, datetime]:
    """Each version's first upload (when pip could first have chosen it); yanked files left out."""
    first: dict[Version, datetime] = {}
    for entry in page.get("files") or ():
        version = file_version(str(entry.get("filename", "")))
        uploaded = entry.get("upload-time")
        if version is None or not uploaded or entry.get("yanked"):
            continue
        when = parse_time(str(uploaded))
        if version not in first or when < first[version]:
            first[version] = when
    return first


def upload_time(page: Project, version: str) -> datetime | None:
    """When ``version`` was published: its first file's upload (None when the index has none).
    Wheels added later for new Pythons (PyYAML 6.0.1's, months after) do not make it newer."""
    return release_times(page).get(Version(version))


def format_time(when: datetime) -> str:
    return when.astimezone(_UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def split_pin(pin: str) -> tuple[str, str]:
    """``name[extra]==1.2`` -> ``("name", "1.2")``."""
    name, _, version = pin.partition("==")
    return re.sub(r"\[.*\]", "", name).strip(), version.strip()


def resolve_date(date: str, pin: str, fetch: Fetch = http_fetch, index: str | None = None) -> str:
    """The date ``pin``'s dependencies resolve at: ``date``, or the pin's upload time when later.

    A pin the index does not date keeps ``date`` (pip then says what it cannot find)."""
    name, version = split_pin(pin)
    uploaded = upload_time(project_page(name, fetch, index), version)
    if not date:
        return ""  # no date: today's index for everything
    cutoff = parse_time(date)
    return format_time(uploaded) if uploaded is not None and uploaded > cutoff else format_time(cutoff)


def main(argv: list[str]) -> int:
    """``pypi_dates.py DATE NAME==VERSION``: print the date to resolve that pin's dependencies at."""
    if len(argv) != 2:
        print("usage: pypi_dates.py DATE NAME==VERSION", file=sys.stderr)
        return 2
    print(resolve_date(argv[0], argv[1]))
    return 0


if __name__ == "__main__":  # pragma: no cover - run inside the environment build
    sys.exit(main(sys.argv[1:]))
