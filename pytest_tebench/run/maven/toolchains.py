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
(``-t``), so a host user's ``~/.m2/toolchains.xml`` never leaks into a local build.

A range matching several JDKs gets the first one listed, so the order is a choice (:data:`ORDER`,
which result keys name): the JDK that runs Maven first, then the others by ascending feature
version. A range that admits Maven's own JDK gets it, as it would with no toolchains file or with
the one JDK a CI image offers: google/gson (2023) compiles its tests for release 17 on JDK 17 (a
profile that JDK activates) under ``jdkToolchain [11,)``; offered oldest first, JDK 11's javac
got ``--release 17`` and gold did not compile. A range that does not admit it gets the oldest JDK
it does admit (gson 2019-2021's ``[1.5,9)`` on Maven's JDK 11: JDK 8).
:func:`~pytest_tebench.run.maven.jdk.toolchain_jdk` is the same rule for the JDK chooser. JDK 8
and older are listed as ``1.8`` and as ``8``, since POMs write both and Maven's version order
tells them apart (``[8,)`` does not contain ``1.8``; a bare ``1.8`` only matches ``1.8``).
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
from pathlib import Path
from xml.sax.saxutils import escape

#: Under the Maven repository: where the files are written (next to the warm-up journal).
TOOLCHAINS_DIR = ".tebench/toolchains"
#: How the offered JDKs are ordered (named in executors' toolchain descriptions, so result keys
#: of another order stay apart).
ORDER = "maven-jdk-first"
#: Launchers of Maven (``mvn``, the wrapper, the daemon): the commands a toolchains file is for.
MAVEN_LAUNCHERS = frozenset({"mvn", "mvnw", "mvnd"})


def is_maven(argv: Sequence[str]) -> bool:
    """Whether ``argv`` launches Maven (``mvn``, ``./mvnw``, ``mvnd``)."""
    return bool(argv) and os.path.basename(argv[0]) in MAVEN_LAUNCHERS


def _versions(feature: int) -> tuple[str, ...]:
    """How POMs name JDK ``feature`` in a toolchain requirement: ``1.8`` and ``8`` up to 8."""
    return (f"1.{feature}", str(feature)) if feature <= 8 else (str(feature),)


def offered_order(features: Iterable[int], running: int | None) -> list[int]:
    """``features`` in the order a toolchains file lists them: ``running`` (the JDK that runs
    Maven) first, then the others oldest first."""
    return sorted(features, key=lambda feature: (feature != running, feature))


def toolchains_xml(homes: Mapping[int, str], running: int | None = None) -> str:
    """A ``toolchains.xml`` offering each JDK of ``homes`` (feature version -> home, as the
    build sees it) in :func:`offered_order`."""
    entries = []
    for feature in offered_order(homes, running):
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


def offer(maven_repo: Path, homes: Mapping[int, str], running: int | None = None) -> str:
    """Write :func:`toolchains_xml` of ``homes`` (``running``: the JDK running Maven) under
    ``maven_repo`` (once per content, atomically: concurrent builds share the repository); its
    path relative to the repository."""
    text = toolchains_xml(homes, running)
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
