"""Which test methods a test patch modifies, deletes or adds: the identification items.

Both gold and prediction go through :func:`test_changes`, with the same parser and the same
rules, so an item can only match when the two really did the same thing:

* a test method that exists in V-0.5 and is **modified** (its comment-free tokens change;
  annotations count, whitespace and comments do not) or **deleted** is one item,
  ``<V-0.5 path>::<Outer$Inner#name>`` (with parameter types when the name is overloaded);
* every test file in which test methods are **added** is one item, ``<path>::<added>``.

Paths are the V-0.5 paths of the files, so a renamed test file is followed: gold renaming
``WrapTest.java`` and a prediction editing it in place name the same items. A renamed test
*method* is, as in the paper, a deletion of the old name plus an addition in its file.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import PurePosixPath

from pytest_tebench.java.parser import JavaFile
from pytest_tebench.java.parser import JavaMethod
from pytest_tebench.java.parser import identity_key
from pytest_tebench.java.parser import overloaded_names
from pytest_tebench.java.parser import parse_java
from pytest_tebench.workspace.checkout import FileChange
from pytest_tebench.workspace.layout import is_test_path

ADDED_MARKER = "<added>"


@dataclass(frozen=True)
class TestMethodChange:
    """A test method a patch touched. ``old``/``new`` are the two versions (None = absent)."""

    path: str  # V-0.5 path of the file (the new path for a file the patch creates)
    new_path: str | None  # where the method lives after the patch
    package: str
    key: str  # identity in V-0.5 naming, e.g. "WrapTest$Nested#wraps(int)"
    kind: str  # modified | deleted | added
    old: JavaMethod | None
    new: JavaMethod | None

    @property
    def item(self) -> str:
        return f"{self.path}::{ADDED_MARKER if self.kind == 'added' else self.key}"

    @property
    def runnable(self) -> bool:
        """A method that still exists after the patch can be run by Surefire."""
        return self.new is not None


@dataclass(frozen=True)
class TestChanges:
    methods: tuple[TestMethodChange, ...]
    #: Test files the parser could only partly read (syntax errors); their methods still count.
    parse_problems: tuple[str, ...] = ()

    @property
    def items(self) -> list[str]:
        return sorted({m.item for m in self.methods})


def test_changes(files: Iterable[FileChange]) -> TestChanges:
    """The test-method changes over all Java files in the test tree."""
    changes: list[TestMethodChange] = []
    problems: list[str] = []
    for change in files:
        paths = [p for p in (change.old_path, change.new_path) if p is not None]
        if not paths or not all(p.endswith(".java") and is_test_path(p) for p in paths):
            continue
        old = parse_java(change.old_text) if change.old_text is not None else None
        new = parse_java(change.new_text) if change.new_text is not None else None
        problems.extend(
            path
            for parsed, path in ((old, change.old_path), (new, change.new_path))
            if parsed and parsed.has_errors and path
        )
        changes.extend(_file_changes(change, old, new))
    return TestChanges(tuple(changes), tuple(sorted(set(problems))))


def _file_changes(change: FileChange, old: JavaFile | None, new: JavaFile | None) -> list[TestMethodChange]:
    overloaded = overloaded_names(*(f for f in (old, new) if f is not None))
    overloaded |= {key_in_old_naming(k, change.old_path, change.new_path) for k in overloaded}
    old_tests = {identity_key(m, overloaded): m for m in (old.test_methods() if old else ())}
    new_tests = {
        key_in_old_naming(identity_key(m, overloaded), change.old_path, change.new_path): m
        for m in (new.test_methods() if new else ())
    }
    either = new or old
    package = either.package if either is not None else ""
    path = change.canonical_path
    result: list[TestMethodChange] = []
    for key, method in old_tests.items():
        after = new_tests.get(key)
        if after is None:
            result.append(TestMethodChange(path, change.new_path, package, key, "deleted", method, None))
        elif after.tokens != method.tokens:
            result.append(TestMethodChange(path, change.new_path, package, key, "modified", method, after))
    for key, method in new_tests.items():
        if key not in old_tests:
            result.append(TestMethodChange(path, change.new_path, package, key, "added", None, method))
    return result


def key_in_old_naming(key: str, old_path: str | None, new_path: str | None) -> str:
    """``key`` of a method in ``new_path``, written with the class name it had in ``old_path``:
    a renamed test file whose public class was renamed with it keeps its methods' identities."""
    if old_path is None or new_path is None:
        return key
    old_stem, new_stem = PurePosixPath(old_path).stem, PurePosixPath(new_path).stem
    if old_stem != new_stem:
        for separator in ("$", "#"):
            if key.startswith(new_stem + separator):
                return old_stem + key[len(new_stem) :]
    return key
