"""Which files of a build are tests, which are production code, and what a prediction may change.

One definition per build layout, used by the workspace (which hunks of a prediction are applied),
the metrics (which changed methods are production code), the builder (how a commit splits) and
the Maven steps (where JaCoCo looks for main classes). Only the Maven layout exists today.

A prediction is a *test* patch, so it may create, change, delete or rename regular files of the
test tree (test sources and test resources) and nothing else. Three kinds of piece are refused:

* ``outside``: a file outside the test tree (production code, ``pom.xml``, ``.mvn/``...).
  ``--tebench-allow-non-test-edits`` applies them.
* ``forbidden``: what could reach outside the workspace or change how git or the build reads
  the tree, even from inside the test tree: symbolic links and submodules (modes ``120000``,
  ``160000``, in any spelling git reads as one, ``index`` lines included) and any mode that is
  not a regular file's, paths that are absolute, contain ``..``, ``.git`` or a backslash, and
  ``.gitattributes``/``.gitmodules`` files; also a file that is a link or submodule of the tree the
  prediction is applied to, or lies beneath one (:func:`linked_path_reason`: git reads a plain
  hunk on a link as a new target). Never applied, whatever the options. The same holds for the
  tree the prediction leaves (:func:`link_change_reason`), whichever way the pieces were applied.
* ``test-platform``: test resources the test framework reads as its own configuration:
  ``junit-platform.properties`` (it can switch on extension auto-detection or deactivate
  conditions) and ``META-INF/services`` registrations of JUnit, TestNG, Surefire or JDK service
  interfaces (auto-registered listeners, engines, filters and extensions run around *every*
  selected test, including gold's tests the prediction left alone), and compiled ``.class``
  files (copied to ``target/test-classes``, first on the test classpath, where they would
  replace production or framework classes, or run in ``javac`` as annotation processors).
  Applied only with ``--tebench-allow-non-test-edits``.

One kind is not a piece's: ``stray``, a path that applying the accepted pieces changed although
none of them names it (a backup or reject file of GNU ``patch``, a file written through a link, a
path resolved another way). It is put back as V-0.5 has it, and the rest stays applied.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import PurePosixPath

from pytest_tebench.workspace.patches import FilePatch

OUTSIDE = "outside"
FORBIDDEN = "forbidden"
TEST_PLATFORM = "test-platform"
#: Not a piece: a path the application wrote that no accepted piece names (put back as it was).
STRAY = "stray"
STRAY_REASON = "written by the patch tool outside the files the prediction's pieces name"

_SPECIAL_MODES = {"120000": "a symbolic link", "160000": "a submodule (gitlink)"}
#: Modes of regular files as the parser gives them (git's own spelling, :func:`~.patches.git_mode`).
_REGULAR_MODES = frozenset({"100644", "100755"})
_GIT_FILES = frozenset({".gitattributes", ".gitmodules"})
#: Service interfaces whose registrations reprogram the test run or the JVM.
_PLATFORM_SERVICE_PREFIXES = (
    "org.junit.",
    "org.testng.",
    "org.apache.maven.",
    "org.opentest4j.",
    "java.",
    "javax.",
    "jdk.",
    "sun.",
)
_PLATFORM_FILES = frozenset({"junit-platform.properties", "testng.xml"})
#: Packages a test source may not declare classes in: they would shadow the test framework on
#: the test classpath (``target/test-classes`` comes first), e.g. an ``org.junit.Assert`` whose
#: assertions never fail.
FRAMEWORK_PACKAGES = (
    "org.junit",
    "junit",
    "org.hamcrest",
    "org.assertj",
    "org.mockito",
    "org.opentest4j",
    "org.apiguardian",
    "org.testng",
    "org.easymock",
    "net.bytebuddy",
    "java",
    "javax",
    "jdk",
    "sun",
    "org.jacoco",
)


@dataclass(frozen=True)
class Refusal:
    path: str
    kind: str  # OUTSIDE | FORBIDDEN | TEST_PLATFORM | STRAY
    reason: str


@dataclass(frozen=True)
class MavenLayout:
    """The standard Maven directory layout (single module, or modules each with ``src/``)."""

    name: str = "maven"
    main_root: str = "src/main"
    test_root: str = "src/test"
    main_sources: str = "src/main/java"
    test_sources: str = "src/test/java"

    def is_test_path(self, path: str) -> bool:
        """True when ``path`` lies in a test tree: it has the components ``src/test``.

        The reference harness used substring tests (``test/java`` anywhere), which also caught
        production files under e.g. ``src/main/java/org/contest/``; components do not.
        """
        return _has_components(path, ("src", "test"))

    def is_main_path(self, path: str) -> bool:
        """True when ``path`` lies in a main tree (components ``src/main``)."""
        return _has_components(path, ("src", "main"))

    def module_root(self, path: str) -> str:
        """The directory holding the ``src/`` of a test or main path (``gson`` for
        ``gson/src/test/java/...``; ``""`` for a single-module build or a path in no source tree)."""
        parts = path.replace("\\", "/").split("/")
        for index in range(len(parts) - 1):
            if parts[index] == "src" and parts[index + 1] in ("test", "main"):
                return "/".join(parts[:index])
        return ""

    def is_production_java(self, path: str) -> bool:
        """A Java source of production code: under ``src/main`` and not under ``src/test``."""
        return path.endswith(".java") and self.is_main_path(path) and not self.is_test_path(path)

    def refusal(
        self, piece: FilePatch, *, allow_non_test_edits: bool = False, links: Mapping[str, str] | None = None
    ) -> Refusal | None:
        """Why ``piece`` may not be applied as part of a prediction, or None when it may;
        ``links``: the links and submodules (``{path: mode}``) of the tree it is applied to."""
        for path in piece.paths:
            unsafe = unsafe_path_reason(path)
            if unsafe:
                return Refusal(path, FORBIDDEN, unsafe)
        for mode in piece.modes:
            if mode in _SPECIAL_MODES:
                return Refusal(piece.path, FORBIDDEN, f"creates {_SPECIAL_MODES[mode]}")
            if mode not in _REGULAR_MODES:
                # git and GNU patch read some modes no model means (a file type they guess)
                return Refusal(piece.path, FORBIDDEN, f"an unusual file mode {mode!r}")
        for path in piece.paths:
            linked = linked_path_reason(path, links or {})
            if linked:
                return Refusal(path, FORBIDDEN, linked)
        if piece.dialect == "context":
            # never applied; outside files are listed as such, test files make the patch fail
            if not all(self.is_test_path(p) for p in piece.paths):
                return Refusal(piece.path, OUTSIDE, "outside the test tree")
            return Refusal(piece.path, FORBIDDEN, "a context diff (only unified diffs are applied)")
        if allow_non_test_edits:
            return None
        if not all(self.is_test_path(p) for p in piece.paths):
            return Refusal(piece.path, OUTSIDE, "outside the test tree")
        for path in piece.paths:
            platform = self.test_platform_reason(path)
            if platform:
                return Refusal(path, TEST_PLATFORM, platform)
        return None

    def test_platform_reason(self, path: str) -> str:
        name = PurePosixPath(path).name
        if name in _PLATFORM_FILES:
            return f"{name} configures the test framework for every test"
        if name.endswith(".class"):
            # copied to target/test-classes, first on the classpath: it could replace any class
            return "a compiled class on the test classpath"
        parts = PurePosixPath(path).parts
        for index in range(len(parts) - 2):
            if parts[index] == "META-INF" and parts[index + 1] == "services":
                service = parts[-1]
                if service.startswith(_PLATFORM_SERVICE_PREFIXES):
                    return f"registers a {service} service, which runs around every test"
        return ""


def unsafe_path_reason(path: str) -> str:
    """Why a path from a patch could reach outside the work tree or into git's own files."""
    if not path:
        return "an empty path"
    if "\0" in path or "\\" in path:
        return "a path with a backslash or NUL"
    if path.startswith("/"):
        return "an absolute path"
    parts = path.split("/")
    if any(part == ".." for part in parts):
        return "a path with '..'"
    if any(part.casefold().rstrip(". ") == ".git" for part in parts):
        return "a path inside .git"
    if parts[-1] in _GIT_FILES:
        return f"a {parts[-1]} file (changes how git reads the tree)"
    return ""


def linked_path_reason(path: str, links: Mapping[str, str]) -> str:
    """Why a piece may not touch ``path`` of V-0.5, whose links and submodules are ``links``
    (``{path: mode}``): a hunk without any mode line on a link changes where it points (git keeps
    a link's target as its content), a copy or rename of one makes another, and a file beneath one
    lies wherever it points."""
    if path in links:
        return f"{_SPECIAL_MODES[links[path]]} in V-0.5 (its content is what it points to)"
    parts = path.split("/")
    for end in range(1, len(parts)):
        parent = "/".join(parts[:end])
        if parent in links:
            return f"beneath {_SPECIAL_MODES[links[parent]]} of V-0.5 ({parent})"
    return ""


def link_change_reason(old_mode: str, new_mode: str) -> str:
    """Why a prediction may not leave this change of a tree entry (git's modes in V-0.5 and after
    it, ``000000`` where absent), or "": no link or submodule is created, retargeted, removed or
    turned into a file, or a file into one."""
    if old_mode in _SPECIAL_MODES:
        return f"changes {_SPECIAL_MODES[old_mode]} of V-0.5"
    if new_mode in _SPECIAL_MODES:
        return f"creates {_SPECIAL_MODES[new_mode]}"
    return ""


def _has_components(path: str, pair: tuple[str, str]) -> bool:
    parts = path.replace("\\", "/").split("/")
    return any((a, b) == pair for a, b in itertools.pairwise(parts))


def in_framework_package(qualified_name: str) -> bool:
    """True when a class name lies in a package of :data:`FRAMEWORK_PACKAGES` (or below)."""
    return any(qualified_name == p or qualified_name.startswith(p + ".") for p in FRAMEWORK_PACKAGES)


MAVEN = MavenLayout()


def is_test_path(path: str) -> bool:
    """:meth:`MavenLayout.is_test_path` of the Maven layout."""
    return MAVEN.is_test_path(path)


def split_by_test_tree(files: Iterable[FilePatch]) -> tuple[list[FilePatch], list[FilePatch]]:
    """``(test_files, other_files)``; a rename that crosses the tree boundary counts as other."""
    tests: list[FilePatch] = []
    others: list[FilePatch] = []
    for file_patch in files:
        (tests if all(is_test_path(p) for p in file_patch.paths) else others).append(file_patch)
    return tests, others
