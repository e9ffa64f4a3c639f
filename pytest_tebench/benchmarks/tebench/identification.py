"""Which test methods a test patch modifies, deletes or adds: the identification items.

Both gold and prediction go through :func:`test_changes`, with the same parser and the same
rules, so an item can only match when the two really did the same thing:

* a test method that exists in V-0.5 and is **modified** (its comment-free tokens change;
  annotations count, whitespace and comments do not) or **deleted** is one item,
  ``<V-0.5 path>::<Outer$Inner#name>`` (with parameter types when the name is overloaded
  in V-0.5);
* every test file in which test methods are **added** is one item, ``<path>::<added>``.

Keys depend on V-0.5 alone (:func:`pair_test_methods`), never on what the other side did: a
prediction that adds an overload of a method gold modifies still names gold's item. Paths are
the V-0.5 paths of the files, so a renamed test file is followed: gold renaming
``WrapTest.java`` and a prediction editing it in place name the same items. A test method
that only moves inside its file (to another nested class, or with its class renamed) keeps its
V-0.5 identity, so an unchanged move is no item. A renamed test *method* is, as in the paper,
a deletion of the old name plus an addition in its file.

A file with syntax errors is parsed as far as tree-sitter recovers, and a recovery can lose whole
classes (one broken field initialiser hid all 20 methods of a commons-text test class, so each
was "deleted"). So there a method whose tokens the patch left standing, in order and unbroken,
is no item, whatever the recovered tree says: it was neither modified nor deleted, nor added.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import PurePosixPath

from pytest_tebench.java.parser import JavaFile
from pytest_tebench.java.parser import JavaMethod
from pytest_tebench.java.parser import keyed_methods
from pytest_tebench.java.parser import lexical_tokens
from pytest_tebench.java.parser import overloaded_names
from pytest_tebench.java.parser import parse_java
from pytest_tebench.workspace.checkout import FileChange
from pytest_tebench.workspace.layout import is_test_path

ADDED_MARKER = "<added>"
#: Version of these rules, part of every stored TEBench result's key: a result identified under
#: older rules is made again (2: in a file with syntax errors, a method whose tokens the patch
#: left standing is no item; 3: a source that is not UTF-8 is read byte for byte, not with
#: replacement characters that made two different literals one token).
IDENTIFICATION_RULES = 3


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
        found = _file_changes(change, old, new)
        if (old and old.has_errors) or (new and new.has_errors):
            found = _touched_only(found, change.old_text or "", change.new_text or "")
        changes.extend(found)
    return TestChanges(tuple(changes), tuple(sorted(set(problems))))


def _touched_only(changes: list[TestMethodChange], old_text: str, new_text: str) -> list[TestMethodChange]:
    """``changes`` without the methods the patch left as they were (see the module's docstring): a
    V-0.5 method whose tokens stand, in order and unbroken, in the patched file is neither deleted
    nor modified, and a method found after the patch whose tokens so stand in V-0.5 is no
    addition. Only for files with syntax errors, where the recovered trees cannot be trusted; so
    the tokens here are a lexer's (:func:`lexical_tokens`), never the recovered tree's leaves."""
    lines = (_lines(old_text), _lines(new_text))
    streams = (_joined(lexical_tokens(old_text)), _joined(lexical_tokens(new_text)))
    result = []
    for change in changes:
        side = 1 if change.kind == "added" else 0
        method = change.new if side else change.old
        assert method is not None
        text = "\n".join(lines[side][method.start_line - 1 : method.end_line])
        if _joined(lexical_tokens(text)) not in streams[1 - side]:
            result.append(change)
    return result


def _lines(text: str) -> list[str]:
    # the parser's line numbers count the LF-separated lines of the CRLF-normalised source
    return text.replace("\r\n", "\n").split("\n")


def _joined(tokens: tuple[str, ...]) -> str:
    # NUL between tokens (Java source holds none outside a literal): one substring search finds
    # a whole run of tokens, and never a run that starts or ends inside a token
    return "\0" + "\0".join(tokens) + "\0"


def _file_changes(change: FileChange, old: JavaFile | None, new: JavaFile | None) -> list[TestMethodChange]:
    either = new or old
    package = either.package if either is not None else ""
    path = change.canonical_path
    result: list[TestMethodChange] = []
    for pair in pair_test_methods(old, new, change.old_path, change.new_path):
        if pair.new is None:
            kind = "deleted"
        elif pair.old is None:
            kind = "added"
        elif pair.old.tokens != pair.new.tokens:
            kind = "modified"
        else:
            continue
        result.append(TestMethodChange(path, change.new_path, package, pair.key, kind, pair.old, pair.new))
    return result


@dataclass(frozen=True)
class MethodPair:
    """A test method's V-0.5 version and its version after a patch (None = absent), under one key."""

    key: str
    old: JavaMethod | None
    new: JavaMethod | None


def pair_test_methods(
    old: JavaFile | None, new: JavaFile | None, old_path: str | None, new_path: str | None
) -> list[MethodPair]:
    """The test methods of one file before (V-0.5) and after a patch, paired and keyed.

    A V-0.5 method's key is its V-0.5 identity: ``Outer$Inner#name``, with parameter types when
    the name is overloaded *in V-0.5*. A method the patch adds is always keyed with its parameter
    types. So no key depends on the patch, and gold and prediction key the same method the same
    way whatever else each of them added or removed.

    A method after the patch is the V-0.5 method with, in this order of preference,
    1. the same class path (in V-0.5 naming, see :func:`key_in_old_naming`) and parameter types;
    2. the same class path and name, when exactly one such method is left on each side
       (its parameter list changed);
    3. the same name, when exactly one such method is left on each side in the whole file
       (it moved to another nested class, or its class was renamed).
    What is left is deleted (V-0.5 side) or added (after the patch).
    """
    before = keyed_methods(old.test_methods() if old else (), overloaded_names(old) if old else ())
    after = list(new.test_methods() if new else ())
    pairs: dict[str, JavaMethod] = {}  # V-0.5 key -> its method after the patch
    unmatched_old = dict(before)
    by_signature = {m.signature_key: key for key, m in before.items()}
    unmatched_new: list[JavaMethod] = []

    def renamed(key: str) -> str:
        return key_in_old_naming(key, old_path, new_path)

    for method in after:  # 1. same class path and parameter types
        key = by_signature.get(renamed(method.signature_key))
        if key is not None and key in unmatched_old:
            pairs[key] = method
            del unmatched_old[key]
        else:
            unmatched_new.append(method)
    # 2. same class path and name, 3. same name anywhere in the file: only when unambiguous
    _pair_unique(pairs, unmatched_old, unmatched_new, lambda m: m.key, lambda m: renamed(m.key))
    _pair_unique(pairs, unmatched_old, unmatched_new, lambda m: m.name, lambda m: m.name)
    result = [MethodPair(key, method, pairs.get(key)) for key, method in before.items()]
    result.extend(MethodPair(renamed(m.signature_key), None, m) for m in unmatched_new)
    return result


def _pair_unique(
    pairs: dict[str, JavaMethod],
    unmatched_old: dict[str, JavaMethod],
    unmatched_new: list[JavaMethod],
    old_group: Callable[[JavaMethod], str],
    new_group: Callable[[JavaMethod], str],
) -> None:
    """Pair the methods left over whose group holds exactly one method on each side."""
    olds: dict[str, list[str]] = {}
    for key, method in unmatched_old.items():
        olds.setdefault(old_group(method), []).append(key)
    news: dict[str, list[JavaMethod]] = {}
    for method in unmatched_new:
        news.setdefault(new_group(method), []).append(method)
    for group, keys in olds.items():
        candidates = news.get(group, [])
        if len(keys) == 1 and len(candidates) == 1:
            pairs[keys[0]] = candidates[0]
            del unmatched_old[keys[0]]
            unmatched_new.remove(candidates[0])


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
