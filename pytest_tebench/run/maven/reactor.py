"""Maven reactors: which modules a workspace builds, and in which module each test lives.

A multi-module build (google/gson: a parent POM and a ``gson/`` module; apache/commons-math:
``commons-math-legacy-core``, ``commons-math-legacy``...) compiles each module into its own
``target/``, writes Surefire's reports into each module's ``target/surefire-reports``, and
builds a module only when the reactor is told to. So a harness that reads ``target/`` at the
root, or runs Maven without naming the module of a selected test, sees that test as not run.

:func:`read_reactor` reads the modules from the POMs (``<modules>``, recursively; a single-module
build is the reactor of one module, ``""``), those of the active profiles included: named with
``-P`` in ``.mvn/maven.config``, activated by the JDK that builds (``<jdk>[11,)</jdk>``; without
a JDK, every such profile, for the directories to clean and read), or ``activeByDefault`` when
nothing else activates a profile of that POM (Maven's rule). Profiles activated by a property, a
file or the OS are not read: the harness sets none of those.

:meth:`Reactor.scope_args` names the modules holding the selected tests for Maven (``-pl gson
-am``: those modules and the modules they depend on, so production code of another module is
compiled from the same tree). The JaCoCo agent writes one file for the whole run whatever the
module, and the report reads every module's classes, so production code of one module exercised
by tests of another counts.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from pathlib import PurePosixPath

from pytest_tebench.run.maven.jdkreq import maven_config
from pytest_tebench.run.maven.jdkreq import parse_range
from pytest_tebench.run.maven.surefire import TestId
from pytest_tebench.workspace.layout import MAVEN

#: A reactor deeper than this is a loop (a module naming its parent) or not worth following.
_MAX_DEPTH = 8


@dataclass(frozen=True)
class Reactor:
    """The modules of a build, as directories relative to the workspace (``""`` = the root)."""

    modules: tuple[str, ...] = ("",)

    @property
    def is_multi_module(self) -> bool:
        return self.modules != ("",)

    def module_of(self, path: str) -> str:
        """The innermost module holding the workspace-relative ``path`` (``""``: the root)."""
        best = ""
        for module in self.modules:
            if module and (path == module or path.startswith(module + "/")) and len(module) > len(best):
                best = module
        return best

    def dirs(self, relative: str) -> tuple[str, ...]:
        """``relative`` (``target/classes``, ``src/main``...) inside every module."""
        return tuple(f"{module}/{relative}" if module else relative for module in self.modules)

    def test_module(self, workspace: Path, test: TestId) -> str | None:
        """The module whose test sources declare ``test``'s (top-level) class; None when none does."""
        top = test.class_name.split("$", 1)[0]
        relative = top.replace(".", "/") + ".java"
        found = [
            module
            for module in self.modules
            if (workspace / module / MAVEN.test_sources / relative).is_file()
            or any((workspace / module / MAVEN.test_root).glob(f"*/{relative}"))
        ]
        # the innermost one: a nested module's tests are not its parent's
        return max(found, key=len) if found else None

    def scope_args(self, workspace: Path, tests: Iterable[TestId]) -> tuple[str, ...]:
        """Maven arguments building the modules of ``tests`` and what they depend on (none for a
        single-module build, or when no selected test is found in any module: the whole reactor)."""
        if not self.is_multi_module:
            return ()
        modules = sorted({m for m in (self.test_module(workspace, t) for t in tests) if m is not None})
        if not modules:
            return ()
        return ("-pl", ",".join(m or "." for m in modules), "-am")


def read_reactor(workspace: Path, java_version: int | None = None) -> Reactor:
    """The modules the root ``pom.xml`` builds with JDK ``java_version``, recursively (unreadable
    POMs end the walk there); ``None``: the modules of every JDK's profiles too."""
    _, active = maven_config(workspace)
    modules: list[str] = [""]
    pending: list[tuple[str, int]] = [("", 0)]
    while pending:
        module, depth = pending.pop(0)
        if depth >= _MAX_DEPTH:
            continue
        for child in _declared_modules(workspace / module / "pom.xml", active, java_version):
            relative = _normalise(PurePosixPath(module) / child if module else PurePosixPath(child))
            if relative is None or relative in modules:
                continue
            if not (workspace / relative / "pom.xml").is_file():
                continue  # a module of another checkout layout, or one the commit removed
            modules.append(relative)
            pending.append((relative, depth + 1))
    return Reactor(tuple(modules))


def _declared_modules(pom: Path, active: set[str], java_version: int | None) -> list[str]:
    """``<modules><module>`` of the POM and of its active profiles (see the module doc)."""
    if pom.is_symlink() or not pom.is_file():
        return []
    try:
        root = ET.parse(pom).getroot()
    except (OSError, ET.ParseError):
        return []
    scopes = [root]
    by_default: list[ET.Element] = []
    for profile in _elements(_element(root, "profiles"), "profile"):
        activation = _element(profile, "activation")
        jdk = _text(_element(activation, "jdk"))
        ranges = parse_range(jdk, bare="exact") if jdk else None
        if _text(_element(profile, "id")) in active or (
            ranges is not None and (java_version is None or any(java_version in r for r in ranges))
        ):
            scopes.append(profile)
        elif _text(_element(activation, "activeByDefault")) == "true":
            by_default.append(profile)
    if len(scopes) == 1:  # activeByDefault: only while no other profile of this POM is active
        scopes += by_default
    found: list[str] = []
    for scope in scopes:
        for module in _elements(_element(scope, "modules"), "module"):
            text = _text(module)
            if text:
                # <module>sub/pom-alt.xml</module> names a POM file: its directory is the module
                found.append(str(PurePosixPath(text).parent) if text.endswith(".xml") else text)
    return found


def _elements(parent: ET.Element | None, name: str) -> list[ET.Element]:
    return [] if parent is None else [child for child in parent if _local(child.tag) == name]


def _element(parent: ET.Element | None, name: str) -> ET.Element | None:
    found = _elements(parent, name)
    return found[0] if found else None


def _text(element: ET.Element | None) -> str:
    return (element.text or "").strip() if element is not None else ""


def _normalise(path: PurePosixPath) -> str | None:
    """A clean relative path, or None for one leaving the workspace."""
    parts: list[str] = []
    for part in path.parts:
        if part in ("", "."):
            continue
        if part == "..":
            if not parts:
                return None
            parts.pop()
            continue
        parts.append(part)
    return "/".join(parts) if parts else None


def _local(tag: object) -> str:
    return tag.rsplit("}", 1)[-1] if isinstance(tag, str) else ""
