"""Upload dates of releases on the package index (the Simple API's JSON form, PEP 691/700).

An environment resolves unpinned packages as PyPI stood on a date. A spec's exact pin may be newer
than that date (sphinx pins ``tox==4.16.0``, uploaded in July 2024) and then needs dependencies
that did not exist yet (``cachetools>=5.3.3``). The rule: a pin's dependencies resolve as the index
stood when the pin itself was uploaded, never before the run's date: ``max(date, upload time of the
pin)``. This module finds that date, and is the one place that decides what "PyPI on a date" holds.

It runs in three places: on the host (:mod:`.pin_check`, which checks every spec), and copied as a
script into an environment build, where ``python pypi_dates.py DATE NAME==VERSION`` prints the date
to resolve that pin's dependencies at, and ``python pypi_dates.py serve PORT`` starts a PEP 503
index on ``127.0.0.1:PORT`` whose ``/DATE/`` view lists only the files uploaded by ``DATE`` (with
their hashes and ``Requires-Python``; the files themselves come from PyPI's file host). Pythons
newer than 3.8 have a pip with ``--uploaded-prior-to``; the last pips of Python 3.6 and 3.8 have
not, and resolve against that view instead.

So it needs the standard library only, plus ``packaging`` (the venv's pip vendors it when it is not
installed) and pip's own default index, and is written for Python 3.6: no ``from __future__ import
annotations`` (3.7), ``typing``'s generics, no ``datetime.fromisoformat`` (3.7).
"""

import html
import json
import os
import re
import socketserver
import ssl
import sys
import urllib.error
import urllib.parse
import urllib.request
from datetime import datetime
from datetime import timedelta
from datetime import timezone
from http.server import BaseHTTPRequestHandler
from http.server import HTTPServer
from typing import Any
from typing import Callable
from typing import Dict
from typing import List
from typing import Optional
from typing import Tuple

try:  # pragma: no cover - which one exists depends on the interpreter
    from packaging.utils import canonicalize_name
    from packaging.version import InvalidVersion
    from packaging.version import Version
except ImportError:  # pragma: no cover - in a fresh venv: pip's vendored copy
    from pip._vendor.packaging.utils import canonicalize_name  # type: ignore[assignment]
    from pip._vendor.packaging.version import InvalidVersion  # type: ignore[assignment]
    from pip._vendor.packaging.version import Version  # type: ignore[assignment]

#: A project's Simple API page as JSON: ``{"name", "files": [{"filename", "upload-time", ...}]}``.
Project = Dict[str, Any]
#: ``fetch(url)`` -> the response body (injected in tests with recorded pages).
Fetch = Callable[[str], bytes]

#: datetime.UTC is 3.11+; this file also runs on the 3.6 of older environments.
_UTC = timezone.utc  # noqa: UP017
#: The Simple API's JSON form first; anything for other files (wheel metadata, PEP 658).
ACCEPT = "application/vnd.pypi.simple.v1+json, */*;q=0.01"
_SDIST_SUFFIXES = (".tar.gz", ".zip", ".tar.bz2", ".tgz")
#: Where the index is read from when ``PIP_INDEX_URL`` is the local dated view (inside a build).
UPSTREAM_ENV = "TEBENCH_PYPI_UPSTREAM"
#: ``2023-11-01``, ``2023-11-01T00:00:00Z``, ``2024-07-02T17:48:26.123456Z``, ``...+02:00``.
_TIME = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,6})\d*)?)?)?"
    r"(Z|[+-]\d{2}:?\d{2})?"
)


def index_url() -> str:
    """The index to read: ``$TEBENCH_PYPI_UPSTREAM``, ``PIP_INDEX_URL``, else pip's own default."""
    configured = os.environ.get(UPSTREAM_ENV) or os.environ.get("PIP_INDEX_URL")
    if configured:
        return configured.rstrip("/")
    from pip._internal.models.index import PyPI

    return str(PyPI.simple_url).rstrip("/")


def http_fetch(url: str) -> bytes:
    request = urllib.request.Request(url, headers={"Accept": ACCEPT, "User-Agent": "pytest-tebench"})
    # pip's certificate bundle where the build sets one (the image trusts the host's CAs there)
    context = ssl.create_default_context(cafile=os.environ.get("PIP_CERT") or None)
    with urllib.request.urlopen(request, timeout=60, context=context) as response:
        body = response.read()  # type: bytes
    return body


def project_page(name: str, fetch: Fetch = http_fetch, index: Optional[str] = None) -> Project:
    """The project's file list with upload times."""
    url = f"{index or index_url()}/{canonicalize_name(name)}/"
    page = json.loads(fetch(url))  # type: Project
    return page


def file_version(filename: str) -> Optional[Version]:
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
    """``2024-07-02T17:48:26.123456Z`` (as the index writes it), or a date, as an aware datetime
    (no offset: UTC). ValueError for anything else."""
    match = _TIME.fullmatch(text.strip())
    if match is None:
        raise ValueError(f"not an ISO 8601 time: {text!r}")
    year, month, day, hour, minute, second, fraction, offset = match.groups()
    micro = int((fraction or "0").ljust(6, "0"))
    when = datetime(
        int(year), int(month), int(day), int(hour or 0), int(minute or 0), int(second or 0), micro
    )
    shift = timedelta(0)
    if offset and offset != "Z":
        digits = offset[1:].replace(":", "")
        shift = timedelta(hours=int(digits[:2]), minutes=int(digits[2:]))
        shift = -shift if offset[0] == "-" else shift
    return (when - shift).replace(tzinfo=_UTC)


def uploaded_by(entry: Dict[str, Any], cutoff: datetime) -> bool:
    """Whether a file of a project page was on the index at ``cutoff``: the date rule itself.
    A file without an upload time (an index that does not say) counts as there."""
    uploaded = entry.get("upload-time")
    return not uploaded or parse_time(str(uploaded)) <= cutoff


def release_times(page: Project) -> Dict[Version, datetime]:
    """Each version's first upload (when pip could first have chosen it); yanked files left out."""
    first = {}  # type: Dict[Version, datetime]
    for entry in page.get("files") or ():
        version = file_version(str(entry.get("filename", "")))
        uploaded = entry.get("upload-time")
        if version is None or not uploaded or entry.get("yanked"):
            continue
        when = parse_time(str(uploaded))
        if version not in first or when < first[version]:
            first[version] = when
    return first


def upload_time(page: Project, version: str) -> Optional[datetime]:
    """When ``version`` was published: its first file's upload (None when the index has none).
    Wheels added later for new Pythons (PyYAML 6.0.1's, months after) do not make it newer."""
    return release_times(page).get(Version(version))


def format_time(when: datetime) -> str:
    return when.astimezone(_UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def split_pin(pin: str) -> Tuple[str, str]:
    """``name[extra]==1.2`` -> ``("name", "1.2")``."""
    name, _, version = pin.partition("==")
    return re.sub(r"\[.*\]", "", name).strip(), version.strip()


def resolve_date(date: str, pin: str, fetch: Fetch = http_fetch, index: Optional[str] = None) -> str:
    """The date ``pin``'s dependencies resolve at: ``date``, or the pin's upload time when later.

    A pin the index does not date keeps ``date`` (pip then says what it cannot find)."""
    name, version = split_pin(pin)
    uploaded = upload_time(project_page(name, fetch, index), version)
    if not date:
        return ""  # no date: today's index for everything
    cutoff = parse_time(date)
    return format_time(uploaded) if uploaded is not None and uploaded > cutoff else format_time(cutoff)


# --------------------------------------------------------------------------- the dated index


def dated_page(page: Project, cutoff: datetime) -> str:
    """``page`` as PEP 503 HTML with only the files uploaded by ``cutoff``: their URLs on the file
    host, hashes, ``data-requires-python`` and ``data-yanked`` (what pip 9 and later read)."""
    name = html.escape(str(page.get("name", "")))
    links = []
    for entry in page.get("files") or ():
        if not uploaded_by(entry, cutoff):
            continue
        url = str(entry.get("url", ""))
        hashes = entry.get("hashes") or {}
        if "sha256" in hashes:
            url += "#sha256=" + str(hashes["sha256"])
        attributes = [f'href="{html.escape(url)}"']
        if entry.get("requires-python"):
            attributes.append('data-requires-python="{}"'.format(html.escape(str(entry["requires-python"]))))
        yanked = entry.get("yanked")
        if yanked:
            reason = yanked if isinstance(yanked, str) else ""
            attributes.append(f'data-yanked="{html.escape(reason)}"')
        links.append("<a {}>{}</a><br>".format(" ".join(attributes), html.escape(str(entry.get("filename")))))
    title = f"Links for {name}"
    head = f"<!DOCTYPE html>\n<html><head><title>{title}</title></head><body>\n<h1>{title}</h1>\n"
    return head + "\n".join(links) + "\n</body></html>\n"


def dated_response(path: str, fetch: Fetch = http_fetch, index: Optional[str] = None) -> Tuple[int, str]:
    """The dated view's answer to ``GET path`` (``/DATE/PROJECT/``): status and HTML."""
    parts = [part for part in urllib.parse.unquote(path.split("?", 1)[0]).split("/") if part]
    if len(parts) != 2:
        return 404, "a dated index serves /DATE/PROJECT/ only\n"
    try:
        cutoff = parse_time(parts[0])
    except ValueError as exc:
        return 400, f"{exc}\n"
    try:
        page = project_page(parts[1], fetch, index)
    except urllib.error.HTTPError as exc:
        return exc.code, f"{index or index_url()} answered {exc.code} for {parts[1]}\n"
    return 200, dated_page(page, cutoff)


class _DatedHandler(BaseHTTPRequestHandler):
    upstream = ""  # type: str

    def do_GET(self) -> None:
        try:
            status, text = dated_response(self.path, index=self.upstream)
        except Exception as exc:  # a broken answer upstream: pip sees a 502 and says which project
            status, text = 502, f"{type(exc).__name__}: {exc}\n"
        body = text.encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        sys.stderr.write("pypi_dates: " + (format % args) + "\n")
        sys.stderr.flush()


class _Server(socketserver.ThreadingMixIn, HTTPServer):
    daemon_threads = True


def serve(port: int, upstream: str, log: str = "/tmp/pypi_dates.log") -> str:
    """Start the dated index on ``127.0.0.1:port`` in a child process and return its URL once it
    listens (the socket is bound before the fork, so pip's first request cannot come too early).
    The child ends with the build step that started it."""
    _DatedHandler.upstream = upstream.rstrip("/")
    server = _Server(("127.0.0.1", port), _DatedHandler)
    url = f"http://127.0.0.1:{port}"
    if os.fork() == 0:  # pragma: no cover - the child (tests see it through its log and answers)
        os.setsid()
        with open(log, "a") as out:
            os.dup2(out.fileno(), 1)
            os.dup2(out.fileno(), 2)
        sys.stderr.write(f"pypi_dates: serving {url} from {_DatedHandler.upstream} (pid {os.getpid()})\n")
        sys.stderr.flush()
        server.serve_forever()
        os._exit(0)
    server.socket.close()
    return url


def main(argv: List[str]) -> int:
    """``pypi_dates.py DATE NAME==VERSION``: print the date to resolve that pin's dependencies at.
    ``pypi_dates.py serve PORT [LOG]``: start the dated index (see :func:`serve`), print its URL."""
    if len(argv) in (2, 3) and argv[0] == "serve":
        print(serve(int(argv[1]), index_url(), *argv[2:]))
        return 0
    if len(argv) != 2:
        print("usage: pypi_dates.py DATE NAME==VERSION | pypi_dates.py serve PORT", file=sys.stderr)
        return 2
    print(resolve_date(argv[0], argv[1]))
    return 0


if __name__ == "__main__":  # pragma: no cover - run inside the environment build
    sys.exit(main(sys.argv[1:]))
