"""Maven reactors: which modules a workspace builds, and in which module each test lives.

A multi-module build (google/gson: a parent POM and a ``gson/`` module; apache/commons-math:
``commons-math-legacy-core``, ``commons-math-legacy``...) compiles each module into its own
``target/``, writes Surefire's reports into each module's ``target/surefire-reports``, and
builds a module only when the reactor is told to. So a harness that reads ``target/`` at the
root, or runs Maven without naming the module of a selected test, sees that test as not run.

:func:`read_reactor` reads the modules from the POMs (``<modules>``, recursively; a single-module
build is the reactor of one module, ``""``), those of the profiles active on the JDK that builds
included, by :func:`~pytest_tebench.run.maven.profiles.walk_modules` (the walk the JDK chooser's
reading uses too; :mod:`~pytest_tebench.run.maven.profiles` decides activation as Maven does).
Without a JDK, the modules of any JDK's build: the directories to clean and read.

:meth:`Reactor.scope_args` names the modules holding the selected tests for Maven (``-pl gson
-am``: those modules and the modules they depend on, so production code of another module is
compiled from the same tree). The JaCoCo agent writes one file for the whole run whatever the
module, and the report reads every module's classes, so production code of one module exercised
by tests of another counts.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from pytest_tebench.java.parser import parse_java
from pytest_tebench.run.maven.profiles import JDKS
from pytest_tebench.run.maven.profiles import BuildContext
from pytest_tebench.run.maven.profiles import walk_modules
from pytest_tebench.run.maven.surefire import TestId
from pytest_tebench.workspace.layout import MAVEN


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
        """The module whose test sources declare ``test``'s (top-level) class; None when none does.
        A class is looked for in its own file first, then among the other top-level classes of
        its package's files: a file may declare a second, non-public class, which Surefire runs
        like any other (its ``.class`` file is all Surefire sees)."""
        top = test.class_name.split("$", 1)[0]
        relative = top.replace(".", "/") + ".java"
        found = [
            module
            for module in self.modules
            if (workspace / module / MAVEN.test_sources / relative).is_file()
            or any((workspace / module / MAVEN.test_root).glob(f"*/{relative}"))
        ]
        if not found:
            found = [module for module in self.modules if _declares(workspace / module, top)]
        # the innermost one: a nested module's tests are not its parent's
        return max(found, key=len) if found else None

    def stray_test_source(self, workspace: Path, relative: str) -> str:
        """A test source ``<dir>/src/test/java/<relative>`` in a directory that is no module of this
        build (a module the POMs of this commit do not list yet): workspace-relative, "" when
        there is none. Surefire never runs it."""
        for path in sorted(workspace.glob(f"**/{MAVEN.test_sources}/{relative}")):
            found = path.relative_to(workspace).as_posix()
            if "target" in found.split("/") or path.is_symlink():
                continue
            if MAVEN.module_root(found) not in self.modules:
                return found
        return ""

    def scope_args(self, workspace: Path, tests: Iterable[TestId]) -> tuple[str, ...]:
        """Maven arguments building the modules of ``tests`` and what they depend on (none for a
        single-module build, or when no selected test is found in any module: the whole reactor)."""
        if not self.is_multi_module:
            return ()
        modules = sorted({m for m in (self.test_module(workspace, t) for t in tests) if m is not None})
        if not modules:
            return ()
        return ("-pl", ",".join(m or "." for m in modules), "-am")


def _declares(module: Path, top: str) -> bool:
    """Whether a test source of ``module``'s package directory of ``top`` declares the top-level
    class ``top`` (``pkg.Name``) in a file of another name."""
    package, _, simple = top.rpartition(".")
    directory = "/".join(package.split(".")) if package else ""
    for path in sorted((module / MAVEN.test_root).glob(f"*/{directory}/*.java" if directory else "*/*.java")):
        if path.stem == simple or not path.is_file() or path.is_symlink():
            continue
        parsed = parse_java(path.read_bytes())
        if parsed.package == package and any(t.binary_class_name == simple for t in parsed.types):
            return True
    return False


def read_reactor(workspace: Path, java_version: int | None = None) -> Reactor:
    """The modules the root ``pom.xml`` builds with JDK ``java_version``, recursively (unreadable
    POMs end the walk there); ``None``: the modules of a build on any JDK."""
    jdks = JDKS if java_version is None else (java_version,)
    modules = walk_modules(workspace, BuildContext.read(workspace), jdks)
    return Reactor(tuple(module.module for module in modules))
