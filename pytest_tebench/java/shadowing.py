"""Test sources that would replace production or test-framework classes on the test classpath.

Surefire puts ``target/test-classes`` before ``target/classes`` and the dependencies, so a test
source that declares ``org.tebench.textkit.StringUtils`` replaces the production class for every
test of the run, and one that declares ``org.junit.Assert`` (or ``org.junit.jupiter.api.Assertions``)
replaces the assertions, e.g. with ones that never fail. A test patch that does this changes
production code or the test framework from inside the test tree, so the workspace's file rules
cannot see it; this module reads the declarations themselves.

Production classes are looked up in the main source files of the declared package's directory
(``src/main/java/<package>/``), which is where Maven compiles them from, in every module of a
reactor (a module's tests see the main classes of the modules it depends on).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from pytest_tebench.java.parser import parse_java
from pytest_tebench.workspace.layout import MAVEN
from pytest_tebench.workspace.layout import in_framework_package


def shadowing_classes(tree: Path, test_files: Iterable[str]) -> list[str]:
    """``"<path>: <class> shadows ..."`` for every top-level class the given test sources (paths
    relative to ``tree``) declare that a production source or a test framework also declares."""
    problems: list[str] = []
    main_classes: dict[str, set[str]] = {}
    for relative in sorted(set(test_files)):
        if not relative.endswith(".java"):
            continue
        path = tree / relative
        if path.is_symlink() or not path.is_file():
            continue
        parsed = parse_java(path.read_bytes())
        for java_type in parsed.types:
            if len(java_type.class_path) != 1:
                continue  # nested classes live inside their outer class's name
            name = (
                f"{parsed.package}.{java_type.class_path[0]}" if parsed.package else java_type.class_path[0]
            )
            if in_framework_package(name):
                problems.append(f"{relative}: {name} is in a test-framework or JDK package")
                continue
            known = main_classes.get(parsed.package)
            if known is None:
                # every module's: in a reactor, the test classpath holds the main classes of the
                # module and of the modules it depends on
                roots = {MAVEN.module_root(relative), *_module_roots(tree)}
                known = set().union(*(_declared_main_classes(tree, root, parsed.package) for root in roots))
                main_classes[parsed.package] = known
            if name in known:
                problems.append(f"{relative}: {name} is a production class")
    return problems


def _module_roots(tree: Path, depth: int = 3) -> list[str]:
    """Directories up to ``depth`` levels down that hold a main source tree (``""``: the root)."""
    roots: list[str] = []
    for level in range(depth + 1):
        pattern = "/".join(["*"] * level + [MAVEN.main_sources])
        for found in tree.glob(pattern):
            if found.is_dir() and not found.is_symlink():
                roots.append(found.relative_to(tree).as_posix()[: -len(MAVEN.main_sources)].rstrip("/"))
    return roots


def _declared_main_classes(tree: Path, module_root: str, package: str) -> set[str]:
    directory = tree / module_root / MAVEN.main_sources / package.replace(".", "/")
    declared: set[str] = set()
    if directory.is_symlink() or not directory.is_dir():
        return declared
    for source in sorted(directory.glob("*.java")):
        if source.is_symlink() or not source.is_file():
            continue
        parsed = parse_java(source.read_bytes())
        prefix = f"{parsed.package}." if parsed.package else ""
        declared.update(prefix + t.class_path[0] for t in parsed.types if len(t.class_path) == 1)
    return declared
