"""The Maven every build runs: Apache Maven's own distribution, verified, from Maven Central.

Every Maven build of every Java benchmark (evaluation, gold, warm-ups, the builders) runs
:data:`DEFAULT_MAVEN` unless ``--tebench-maven`` names another version, locally and in Docker
(mounted read-only), never the ``mvn`` a machine or an image happens to have: what a build runs
then depends on Maven's own default plugin bindings only (Debian's Maven 3.8 binds Surefire 2.x
where a POM pins none, and commons-parent 99 and later refuse Maven before 3.9).
:func:`ensure_maven` downloads ``apache-maven-<v>-bin.tar.gz``, checks it against the published
``.sha512`` and unpacks it into a cache directory, once, under a file lock shared by parallel
workers.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import tarfile
import tempfile
import urllib.error
import urllib.request
from pathlib import Path

from pytest_tebench.errors import HarnessError
from pytest_tebench.locking import file_lock

#: The Maven every build of every Java benchmark runs unless ``--tebench-maven`` names another:
#: Apache Maven's own distribution, so the build binds upstream's default plugin versions
#: (Surefire 3.2.5 where a POM pins none; Debian's Maven binds older ones, Surefire 2.x and
#: builds needing 3.9 refused). 3.9.9 is the newest 3.9.x known to run every benchmark parent.
DEFAULT_MAVEN = "3.9.9"
CENTRAL = "https://repo.maven.apache.org/maven2"

_VERSION = re.compile(r"^\d+(?:\.\d+){1,3}$")


def maven_home(version: str, cache_dir: Path) -> Path:
    """Where :func:`ensure_maven` puts Maven ``version``."""
    return cache_dir / f"apache-maven-{version}"


def _download(url: str, target: Path, timeout: float) -> None:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response, open(target, "wb") as out:
            shutil.copyfileobj(response, out)
    except (urllib.error.URLError, OSError, TimeoutError) as exc:
        raise HarnessError(f"cannot download {url}: {exc}") from exc


def _expected_sha512(url: str, timeout: float) -> str:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            text = response.read().decode("ascii", errors="replace")
    except (urllib.error.URLError, OSError, TimeoutError) as exc:
        raise HarnessError(f"cannot download {url}: {exc}") from exc
    digest = text.split()[0].lower() if text.split() else ""
    if not re.fullmatch(r"[0-9a-f]{128}", digest):
        raise HarnessError(f"{url} does not hold a SHA-512 digest")
    return digest


def ensure_maven(version: str, cache_dir: Path, *, base_url: str = CENTRAL, timeout: float = 120.0) -> Path:
    """Return the home of Maven ``version`` under ``cache_dir``, downloading it first if needed.

    The archive must match Central's ``.sha512``; it is unpacked next to its final place and
    renamed into it, so a half-finished install is never visible. Safe across processes.
    """
    if not _VERSION.match(version):
        raise HarnessError(f"not a Maven version: {version!r}")
    home = maven_home(version, cache_dir)
    if (home / "bin" / "mvn").is_file():
        return home
    cache_dir.mkdir(parents=True, exist_ok=True)
    with file_lock(cache_dir / f".apache-maven-{version}.lock"):
        if (home / "bin" / "mvn").is_file():
            return home
        name = f"apache-maven-{version}-bin.tar.gz"
        url = f"{base_url}/org/apache/maven/apache-maven/{version}/{name}"
        expected = _expected_sha512(url + ".sha512", timeout)
        with tempfile.TemporaryDirectory(dir=cache_dir, prefix=".maven-") as scratch:
            archive = Path(scratch) / name
            _download(url, archive, timeout)
            digest = hashlib.sha512(archive.read_bytes()).hexdigest()
            if digest != expected:
                raise HarnessError(
                    f"{name}: SHA-512 mismatch (got {digest[:16]}..., want {expected[:16]}...)"
                )
            unpacked = Path(scratch) / "unpacked"
            try:
                with tarfile.open(archive) as tar:
                    tar.extractall(unpacked, filter="data")
            except (tarfile.TarError, OSError) as exc:
                raise HarnessError(f"cannot unpack {name}: {exc}") from exc
            top = unpacked / f"apache-maven-{version}"
            if not (top / "bin" / "mvn").is_file():
                raise HarnessError(f"{name} has no apache-maven-{version}/bin/mvn")
            os.replace(top, home)
    return home


def default_dist_cache() -> Path:
    """``<default cache dir>/maven-dist``: where Maven downloads are kept unless a run says otherwise."""
    from pytest_tebench.settings import default_cache_dir

    return default_cache_dir() / "maven-dist"


def maven_tools(version: str, cache_dir: Path | None) -> tuple[tuple[str, str], ...]:
    """The ``BuildStep.tools`` of a Maven step: Maven ``version`` resolved (downloaded once,
    verified) into ``cache_dir``; none for ``""`` (the executor's own ``mvn``)."""
    if not version:
        return ()
    return (("maven", str(ensure_maven(version, cache_dir or default_dist_cache()))),)
