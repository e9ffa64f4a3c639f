"""When each version of a Maven plugin was released, read from Maven Central.

A build plugin a POM names without a version, and no parent manages, is resolved by Maven from
the repository's metadata: today's newest release (``<release>``), not the one the project's
own build ran on its commit's date. :mod:`~pytest_tebench.run.maven.plugin_pins` pins such a plugin
to the release Maven would have taken then; this module says when each release happened.

Central publishes no per-version date a client can read (its directory listings are not served
everywhere, and its files carry no ``Last-Modified`` here). The plugin's jar does: Maven writes
every entry with the build's time (or, for a reproducible build, ``project.build.outputTimestamp``,
the release commit's). So a version's date is its jar's newest entry, read from the central
directory at the end of the file (one ``Range`` request of the last 64 KiB; the whole jar where
the directory is larger or the server ignores ranges). Zip times carry no time zone, so a date is
right to within a day. A jar whose entries all carry zip's earliest time (a reproducible build
without a timestamp) has no date: such a version is never chosen.

Dates never change, so each is fetched once per machine and kept in the shared Maven repository's
state directory (``.tebench/release-dates/<group>+<artifact>.json``, written atomically), with
the version list and when it was read: a later cutoff than that reads the list again.
"""

from __future__ import annotations

import io
import json
import os
import tempfile
import urllib.error
import urllib.request
import xml.etree.ElementTree as ET
import zipfile
from collections.abc import Callable
from datetime import UTC
from datetime import datetime
from pathlib import Path
from typing import Any

from pytest_tebench.errors import HarnessError
from pytest_tebench.run.maven.dist import CENTRAL

#: ``fetch(url, tail)`` -> the body (its last ``tail`` bytes when the server honours the range,
#: else the whole file); raises ``OSError`` (``urllib.error.URLError`` is one). Tests inject one.
Fetch = Callable[[str, int], bytes]
#: How much of a jar's end one request reads: a plugin's central directory fits in it.
TAIL_BYTES = 65536
#: Zip's earliest time (1980-01-01) and what reproducible builds without a timestamp write
#: (1980-02-01): no release date.
_NO_DATE_BEFORE = datetime(1980, 2, 2, tzinfo=UTC)
CACHE_DIR = "release-dates"


def http_fetch(url: str, tail: int = 0) -> bytes:
    headers = {"User-Agent": "pytest-tebench"}
    if tail:
        headers["Range"] = f"bytes=-{tail}"
    request = urllib.request.Request(url, headers=headers)
    with urllib.request.urlopen(request, timeout=60) as response:
        body: bytes = response.read()
    return body


def parse_date(text: str) -> datetime:
    """A commit's date as a dataset writes it (``2021-08-30T09:57:08-07:00``, ``...Z``, a bare
    date), as an aware UTC datetime (no offset: UTC). ValueError for anything else."""
    when = datetime.fromisoformat(text.strip())
    return (when if when.tzinfo else when.replace(tzinfo=UTC)).astimezone(UTC)


def versions(metadata: bytes) -> list[str]:
    """The released versions a ``maven-metadata.xml`` lists (snapshots left out), in its order."""
    root = ET.fromstring(metadata)
    found = [(node.text or "").strip() for node in root.iter() if node.tag.rsplit("}", 1)[-1] == "version"]
    return [v for v in dict.fromkeys(found) if v and not v.endswith("-SNAPSHOT")]


def jar_date(data: bytes) -> datetime | None:
    """The newest entry time of a jar, or of its tail holding the central directory (``None``:
    no entry carries a real date). Raises ``zipfile.BadZipFile`` when the central directory is
    not all in ``data``."""
    with zipfile.ZipFile(io.BytesIO(data)) as jar:
        times = [datetime(*entry.date_time, tzinfo=UTC) for entry in jar.infolist()]
    dated = [t for t in times if t >= _NO_DATE_BEFORE]
    return max(dated) if dated else None


class ReleaseDates:
    """Release dates of plugin versions, cached under ``state_dir`` (the Maven repository's
    ``.tebench``), read from ``base`` (a Maven 2 layout repository) with ``fetch``."""

    def __init__(self, state_dir: Path, *, base: str = CENTRAL, fetch: Fetch = http_fetch) -> None:
        self.folder = state_dir / CACHE_DIR
        self.base = base.rstrip("/")
        self.fetch = fetch

    def dates(self, group: str, artifact: str, *, by: datetime) -> dict[str, datetime | None]:
        """Every released version of ``group:artifact`` with its date (``None``: unknown), the
        list read after ``by``. Raises :class:`HarnessError` when the repository cannot be read."""
        path = self.folder / f"{group}+{artifact}.json"
        cached = _read(path)
        folder = f"{self.base}/{group.replace('.', '/')}/{artifact}"
        changed = False
        if cached is None or _time(cached.get("listed")) < by:
            listed = versions(self._get(f"{folder}/maven-metadata.xml", 0))
            known = cached.get("dates", {}) if cached else {}
            cached = {"listed": datetime.now(UTC).isoformat(), "versions": listed, "dates": known}
            changed = True
        dates: dict[str, str | None] = cached["dates"]
        for version in cached["versions"]:
            if version not in dates:
                dates[version] = _iso(self._date(f"{folder}/{version}/{artifact}-{version}.jar"))
                changed = True
        if changed:
            _write(path, cached)
        return {v: (_time(dates[v]) if dates.get(v) else None) for v in cached["versions"]}

    def newest_by(self, group: str, artifact: str, by: datetime) -> tuple[str, datetime] | None:
        """The release Maven's metadata named ``<release>`` at ``by``: the last one released by
        then (``None``: none is known to be)."""
        dated = [(when, v) for v, when in self.dates(group, artifact, by=by).items() if when and when <= by]
        if not dated:
            return None
        when, version = max(dated)
        return version, when

    def _date(self, url: str) -> datetime | None:
        try:
            data = self.fetch(url, TAIL_BYTES)
        except urllib.error.HTTPError as exc:
            if exc.code in (404, 410):  # listed, never uploaded (or withdrawn): no release to take
                return None
            raise HarnessError(f"cannot read {url}: {exc}") from exc
        except (OSError, TimeoutError) as exc:
            raise HarnessError(f"cannot read {url}: {exc}") from exc
        try:
            return jar_date(data)
        except zipfile.BadZipFile:
            # a central directory larger than the tail (or no range support and a broken body)
            try:
                return jar_date(self._get(url, 0))
            except zipfile.BadZipFile:
                return None

    def _get(self, url: str, tail: int) -> bytes:
        try:
            return self.fetch(url, tail)
        except (OSError, urllib.error.URLError, TimeoutError) as exc:
            raise HarnessError(f"cannot read {url}: {exc}") from exc


def _iso(when: datetime | None) -> str | None:
    return when.isoformat() if when else None


def _time(text: object) -> datetime:
    try:
        return parse_date(str(text)) if text else datetime.min.replace(tzinfo=UTC)
    except ValueError:
        return datetime.min.replace(tzinfo=UTC)


def _read(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or not isinstance(data.get("versions"), list):
        return None
    if not isinstance(data.get("dates"), dict):
        data["dates"] = {}
    return data


def _write(path: Path, data: dict[str, Any]) -> None:
    """Atomically: concurrent workers each write a whole file, the last one wins."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        json.dump(data, out, sort_keys=True)
    os.replace(temporary, path)
