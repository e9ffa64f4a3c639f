"""The ``toolchains.xml`` offered to every Maven build: each JDK the executor has, as a ``jdk``
toolchain.

A plugin's ``jdkToolchain`` (maven-compiler-plugin, Surefire, Javadoc) and
``maven-toolchains-plugin`` choose among the JDKs a toolchains file offers; they do not decide
the JDK that runs Maven. Without a file a ``jdkToolchain`` silently falls back to Maven's own
JDK, and ``maven-toolchains-plugin`` stops the build ("Cannot find matching toolchain
definitions"). google/gson (2019-2021) compiles ``module-info.java`` with ``jdkToolchain 9`` and
the rest with ``[1.5,9)``: its CI ran Maven on JDK 11 without any toolchains, and so can we; with
this file the ``[1.5,9)`` executions compile with JDK 8, as the project meant.

Both executors offer the file the same way (:func:`with_toolchains`): it is written once per
content into the Maven repository's state directory (:func:`offer`), which every build sees (the
container mounts the repository, read-only for offline steps), and named with ``--toolchains``
(``-t``), so a host user's ``~/.m2/toolchains.xml`` never leaks into a local build. Toolchains
are listed by ascending feature version (a range matching several JDKs gets the oldest, the
first listed); JDK 8 and older are listed as ``1.8`` and as ``8``, since POMs write both and
Maven's version order tells them apart (``[8,)`` does not contain ``1.8``; a bare ``1.8`` only
matches ``1.8``).
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Mapping
from collections.abc import Sequence
from pathlib import Path
from xml.sax.saxutils import escape

#: Under the Maven repository: where the files are written (next to the warm-up journal).
TOOLCHAINS_DIR = ".tebench/toolchains"
#: Launchers of Maven (``mvn``, the wrapper, the daemon): the commands a toolchains file is for.
MAVEN_LAUNCHERS = frozenset({"mvn", "mvnw", "mvnd"})


def is_maven(argv: Sequence[str]) -> bool:
    """Whether ``argv`` launches Maven (``mvn``, ``./mvnw``, ``mvnd``)."""
    return bool(argv) and os.path.basename(argv[0]) in MAVEN_LAUNCHERS


def _versions(feature: int) -> tuple[str, ...]:
    """How POMs name JDK ``feature`` in a toolchain requirement: ``1.8`` and ``8`` up to 8."""
    return (f"1.{feature}", str(feature)) if feature <= 8 else (str(feature),)


def toolchains_xml(homes: Mapping[int, str]) -> str:
    """A ``toolchains.xml`` offering each JDK of ``homes`` (feature version -> home, as the
    build sees it), oldest first."""
    entries = []
    for feature in sorted(homes):
        for version in _versions(feature):
            entries.append(
                "  <toolchain>\n"
                "    <type>jdk</type>\n"
                f"    <provides><version>{version}</version><vendor>tebench</vendor></provides>\n"
                f"    <configuration><jdkHome>{escape(homes[feature])}</jdkHome></configuration>\n"
                "  </toolchain>\n"
            )
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        "<!-- written by pytest-tebench: every JDK of the executor -->\n"
        f"<toolchains>\n{''.join(entries)}</toolchains>\n"
    )


def offer(maven_repo: Path, homes: Mapping[int, str]) -> str:
    """Write :func:`toolchains_xml` of ``homes`` under ``maven_repo`` (once per content, atomically:
    concurrent builds share the repository); its path relative to the repository."""
    text = toolchains_xml(homes)
    relative = f"{TOOLCHAINS_DIR}/toolchains-{hashlib.sha256(text.encode()).hexdigest()[:16]}.xml"
    path = maven_repo / relative
    if not path.is_file():
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=".toolchains-")
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.chmod(temporary, 0o644)
        os.replace(temporary, path)
    return relative


def with_toolchains(argv: Sequence[str], toolchains: str) -> tuple[str, ...]:
    """A Maven command told to use the toolchains file at ``toolchains`` (as the build sees it);
    other commands unchanged."""
    if not is_maven(argv):
        return tuple(argv)
    return (argv[0], "--toolchains", toolchains, *argv[1:])
