"""Open every test package of a named module to the tests, as a full ``mvn test`` would.

A module with ``src/main/java/module-info.java`` runs its tests on the module path (Surefire
3.x: ``ModularClasspathForkConfiguration``): the test classes are patched into the module
(``--patch-module``) and Surefire writes ``--add-opens <module>/<package>=ALL-UNNAMED`` into the
fork's argument file for the package of each test class it is about to run, i.e. of the classes
that survive ``-Dtest``. A test that reflects into another package of the module (EqualsVerifier
does, jfree/jfreechart is such a project) passes in the full run, where some test class lives in
that package, and fails when the selection leaves that package's tests out.

So every evaluation opens the packages of *every* test source of each such module, through
``JDK_JAVA_OPTIONS``: read by the ``java`` launcher of JDK 9 and later, which is how Surefire
forks, and by nothing that compiles; the project's own ``argLine`` stays untouched (a
``-DargLine`` would replace an ``argLine`` property and is ignored where the POM writes
``<argLine>`` literally), and JaCoCo keeps ``JAVA_TOOL_OPTIONS``. Every test source's package
is a superset of Surefire's set (which takes only classes its includes match): a package
opened without a test class in it only lets reflection work that the full run may also allow.
Maven's own JVM reads the variable too and warns that it does not know the module; an
``open module`` needs nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from pytest_tebench.workspace.layout import MAVEN

#: The variable the ``java`` launcher (JDK >= 9) prepends to its arguments; javac ignores it.
VARIABLE = "JDK_JAVA_OPTIONS"
_COMMENTS = re.compile(r"/\*.*?\*/|//[^\n]*", re.DOTALL)
_MODULE = re.compile(r"^\s*(?:@[\w.]+(?:\([^)]*\))?\s*)*(open\s+)?module\s+([\w.]+)\s*\{", re.MULTILINE)
_PACKAGE = re.compile(r"^\s*package\s+([\w.]+)\s*;", re.MULTILINE)


def declared_module(module_dir: Path) -> tuple[str, bool] | None:
    """``(name, is_open)`` of the module ``module_dir/src/main/java/module-info.java`` declares;
    ``None`` without one (the tests then run on the class path)."""
    info = module_dir / MAVEN.main_sources / "module-info.java"
    if not info.is_file() or info.is_symlink():
        return None
    text = _COMMENTS.sub(" ", info.read_text(encoding="utf-8", errors="replace"))
    match = _MODULE.search(text)
    return (match[2], bool(match[1])) if match else None


def test_packages(module_dir: Path) -> list[str]:
    """The packages declared by the module's test sources (``src/test/java``), sorted."""
    root = module_dir / MAVEN.test_sources
    found: set[str] = set()
    for path in root.rglob("*.java") if root.is_dir() else ():
        if path.is_symlink() or not path.is_file():
            continue
        text = _COMMENTS.sub(" ", path.read_text(encoding="utf-8", errors="replace"))
        match = _PACKAGE.search(text)
        if match:
            found.add(match[1])
    return sorted(found)


def opens_for_tests(workspace: Path, modules: Iterable[str]) -> tuple[str, ...]:
    """``--add-opens=<module>/<package>=ALL-UNNAMED`` for every test package of every named,
    not ``open``, module among ``modules`` (workspace-relative directories, ``""`` the root)."""
    options: list[str] = []
    for module in modules:
        directory = workspace / module if module else workspace
        declared = declared_module(directory)
        if declared is None or declared[1]:
            continue
        name = declared[0]
        options += [f"--add-opens={name}/{package}=ALL-UNNAMED" for package in test_packages(directory)]
    return tuple(options)
