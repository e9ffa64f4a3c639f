"""Which test sources a launch must compile when gold's compiled test tree is reused.

Gold's launches compile the project's whole test tree; a prediction's launch of the same instance
compiles the same tree again, except for the few test files the prediction changed. This module
decides, from the sources alone, which files must be compiled again for the result to be the
full compile's, and which classes of gold's tree must go first; :mod:`~pytest_tebench.run.maven.
prebuilt_tests` stores and restores the compiled tree and runs the launch.

The rule (:func:`plan`): the files that differ between gold's tree and this one (added, removed,
changed) must all be ``.java`` files; every other test file (resources above all) is the same, so
what Maven copies and generates for it is the same. Then the set to recompile is closed over
*mentions*: any unchanged test source whose text (comments included) holds, as a whole
identifier, the name of a top-level type declared in a file of the set (either version of it) or
one of the set's file names joins the set, and its own top-level names count from then on. A
source can only depend on a type by naming it or by naming a type whose declaration names it (a
superclass, a helper's return type; a member type through its outer type's name), so a source
outside the closed set compiles to the same classes whatever the set's files say: its classes are
gold's. Declared names are read from the code alone
(comments and literals blanked: "the class for ..." names nothing); Java's ``\\uXXXX`` escapes
are decoded first, as ``javac`` does. A source an annotation processor generated into gold's tree
that holds any of the names even inside a longer word (``AutoValue_Foo``) keeps the whole tree
compiled. A larger set only costs compile time.

Off (the whole tree is compiled, as without this module), with the reason: a non-Java test file
differs, a ``module-info.java`` or ``package-info.java`` is in the set, a changed file's ``package``
cannot be read, a compiled class of gold's tree names no ``SourceFile`` or one no
scanned source matches (compiled from somewhere this scan does not see), or a generated source
mentions the set (the processor would have to run again on it).
"""

from __future__ import annotations

import hashlib
import os
import re
import struct
from collections.abc import Iterable
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from pathlib import PurePosixPath

from pytest_tebench.run.maven.reactor import Reactor

#: Where, in a module, the sources the harness scans live (test trees: ``src/test``, the one
#: notion of a test path) and where the build leaves their classes and generated sources.
TEST_TREE = "src/test"
TEST_CLASSES = "target/test-classes"
GENERATED_TEST_SOURCES = "target/generated-test-sources"

_UNICODE_ESCAPE = re.compile(rb"\\u+([0-9a-fA-F]{4})")
# A declared type's name: ASCII identifier characters, or any non-ASCII character (a name is
# cut short, never run on: a prefix of a name matches wherever the name does).
_DECLARED = re.compile(r"\b(?:class|interface|enum|record)\s+([A-Za-z0-9_$\u0080-\U0010ffff]+)")
_PACKAGE = re.compile(r"^\s*package\s+([\w.$\s]+?)\s*;", re.MULTILINE)
_COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.DOTALL)
# Comments, text blocks, string and character literals, each matched from its leftmost start (so a
# comment marker inside a string stays in the string); an unterminated one matches nothing and
# stays as code, which only adds names.
_NOT_CODE = re.compile(
    r"//[^\n]*|/\*.*?\*/|\"\"\"(?:\\.|[^\\])*?\"\"\"|\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*'",
    re.DOTALL,
)
_IDENTIFIER_CHAR = "A-Za-z0-9_$\u0080-\U0010ffff"
#: Reserved words, never a type's name (contextual ones such as ``record`` or ``var`` named
#: classes before Java 10-16, so they stay names).
_KEYWORDS = frozenset(
    {
        "abstract", "assert", "boolean", "break", "byte", "case", "catch", "char", "class", "const",
        "continue", "default", "do", "double", "else", "enum", "extends", "final", "finally", "float",
        "for", "goto", "if", "implements", "import", "instanceof", "int", "interface", "long", "native",
        "new", "package", "private", "protected", "public", "return", "short", "static", "strictfp",
        "super", "switch", "synchronized", "this", "throw", "throws", "transient", "try", "void",
        "volatile", "while", "true", "false", "null",
    }
)  # fmt: skip


def java_text(data: bytes) -> str:
    """A Java source as ``javac`` reads its names: unicode escapes decoded, every other byte one
    character (Latin-1 is a bijection, so equal bytes give equal text in any file encoding)."""
    decoded = _UNICODE_ESCAPE.sub(lambda m: chr(int(m.group(1), 16)).encode("utf-8", "surrogatepass"), data)
    return decoded.decode("latin-1")


def code_only(text: str) -> str:
    """``text`` with its comments and literals blanked: what may declare a type."""
    return _NOT_CODE.sub(" ", text)


def declared_names(text: str) -> set[str]:
    """The top-level types a compilation unit declares: every name after ``class``,
    ``interface`` (``@interface`` too), ``enum`` or ``record`` outside any brace, in the code (not
    in comments or literals, where English follows "class").

    A member type is reached from another source only through its outer type's name (``Outer.
    Inner``, an import of it, or inheritance from ``Outer``), a local one not at all, so their
    names need not widen the set: compress's ``StreamWrapper`` nested in one test would otherwise
    pull in every test extending ``AbstractTest``, which declares its own. When the braces do not
    balance (a lexing surprise), every declared name counts."""
    code = code_only(text)
    found = list(_DECLARED.finditer(code))
    names, depth, lowest, at = set(), 0, 0, 0
    for match in found:
        depth += code.count("{", at, match.start()) - code.count("}", at, match.start())
        lowest, at = min(lowest, depth), match.start()
        if depth == 0:
            names.add(match.group(1))
    if lowest < 0 or depth + code.count("{", at) - code.count("}", at) != 0:
        names = {match.group(1) for match in found}
    return names - _KEYWORDS


def declared_package(text: str) -> str | None:
    """The ``package`` of a compilation unit ("" for none); None when it cannot be read."""
    match = _PACKAGE.search(_COMMENT.sub(" ", text))
    if match is None:
        return ""
    name = re.sub(r"\s+", "", match.group(1))
    return name if re.fullmatch(r"(?!\d)[\w$]+(\.(?!\d)[\w$]+)*", name) else None


@dataclass(frozen=True)
class ClassOrigin:
    """A compiled class's internal name (``org/x/FooTest$1``) and its ``SourceFile`` ("" none)."""

    name: str
    source_file: str


def class_origin(data: bytes) -> ClassOrigin | None:
    """Read ``this_class`` and the ``SourceFile`` attribute of a class file; None if malformed."""
    try:
        return _read_origin(data)
    except (struct.error, IndexError, UnicodeDecodeError, KeyError):
        return None


def _read_origin(data: bytes) -> ClassOrigin | None:
    if data[:4] != b"\xca\xfe\xba\xbe":
        return None
    (count,) = struct.unpack_from(">H", data, 8)
    utf8: dict[int, str] = {}
    classes: dict[int, int] = {}
    offset, index = 10, 1
    while index < count:
        tag = data[offset]
        if tag == 1:
            (length,) = struct.unpack_from(">H", data, offset + 1)
            utf8[index] = data[offset + 3 : offset + 3 + length].decode("utf-8", "surrogateescape")
            offset += 3 + length
        elif tag == 7:
            (classes[index],) = struct.unpack_from(">H", data, offset + 1)
            offset += 3
        elif tag in (8, 16, 19, 20):
            offset += 3
        elif tag == 15:
            offset += 4
        elif tag in (3, 4, 9, 10, 11, 12, 17, 18):
            offset += 5
        elif tag in (5, 6):
            offset += 9
            index += 1  # eight-byte constants take two slots
        else:
            return None
        index += 1
    (this_class,) = struct.unpack_from(">H", data, offset + 2)
    offset += 6
    (interfaces,) = struct.unpack_from(">H", data, offset)
    offset += 2 + 2 * interfaces
    for _members in range(2):  # fields, then methods
        (members,) = struct.unpack_from(">H", data, offset)
        offset += 2
        for _member in range(members):
            (attributes,) = struct.unpack_from(">H", data, offset + 6)
            offset += 8
            for _attribute in range(attributes):
                (length,) = struct.unpack_from(">I", data, offset + 2)
                offset += 6 + length
    (attributes,) = struct.unpack_from(">H", data, offset)
    offset += 2
    source = ""
    for _attribute in range(attributes):
        name_index, length = struct.unpack_from(">HI", data, offset)
        if utf8.get(name_index) == "SourceFile":
            (value,) = struct.unpack_from(">H", data, offset + 6)
            source = utf8[value]
        offset += 6 + length
    return ClassOrigin(utf8[classes[this_class]], source)


def scan_test_files(workspace: Path, modules: Iterable[str]) -> dict[str, str]:
    """Every file under each module's ``src/test`` (symbolic links as their target text), as
    workspace-relative path -> SHA-256 of its bytes."""
    found: dict[str, str] = {}
    for module in modules:
        root = workspace / module / TEST_TREE if module else workspace / TEST_TREE
        for directory, dirnames, filenames in os.walk(root):
            dirnames.sort()
            for name in filenames:
                path = Path(directory, name)
                data = os.readlink(path).encode("utf-8", "surrogateescape") if path.is_symlink() else None
                digest = hashlib.sha256(data if data is not None else path.read_bytes()).hexdigest()
                found[path.relative_to(workspace).as_posix()] = ("link:" if data is not None else "") + digest
    return found


def tree_digest(files: Mapping[str, str]) -> str:
    """One digest for a whole scanned test tree."""
    material = "".join(f"{path}\0{digest}\0" for path, digest in sorted(files.items()))
    return hashlib.sha256(material.encode("utf-8", "surrogateescape")).hexdigest()[:32]


@dataclass(frozen=True)
class Plan:
    """What a launch on gold's compiled test tree must do, or why it cannot (``off``)."""

    off: str = ""
    #: Test sources (workspace-relative) whose classes go and which the launch compiles again.
    recompile: tuple[str, ...] = ()
    #: Of those, the ones that differ from gold's tree (added, removed or changed).
    changed: tuple[str, ...] = ()
    #: Class files (workspace-relative) to delete before the launch.
    delete: tuple[str, ...] = ()
    #: Test ``.java`` files of this tree (the size of the full compile, for the record).
    sources: int = 0

    def describe(self) -> str:
        if self.off:
            return f"off: {self.off}"
        return f"{len(self.recompile)} of {self.sources} test sources compiled"


def plan(
    workspace: Path,
    *,
    modules: tuple[str, ...],
    gold_files: Mapping[str, str],
    gold_sources: Mapping[str, bytes],
    current_files: Mapping[str, str],
    classes: Mapping[str, ClassOrigin | None],
    generated: Mapping[str, bytes],
) -> Plan:
    """Decide the recompile set (module docstring).

    ``gold_files``/``current_files``: the two scanned trees (:func:`scan_test_files`);
    ``gold_sources``: gold's bytes of every file that differs; ``classes``: gold's compiled test
    classes (workspace-relative ``<module>/target/test-classes/...class`` -> origin);
    ``generated``: the sources under the modules' generated-test-sources in gold's tree.
    """
    reactor = Reactor(modules)
    changed = sorted(p for p in {*gold_files, *current_files} if gold_files.get(p) != current_files.get(p))
    not_java = [p for p in changed if not p.endswith(".java")]
    if not_java:
        return Plan(off=f"a test file other than Java source differs from gold's: {not_java[0]}")
    special = [p for p in changed if PurePosixPath(p).name in ("module-info.java", "package-info.java")]
    if special:
        return Plan(off=f"{special[0]} differs from gold's")
    java = sorted(p for p in current_files if p.endswith(".java"))
    texts = {p: java_text((workspace / p).read_bytes()) for p in java}
    versions: dict[str, list[str]] = {p: [] for p in changed}
    for path in changed:
        if path in gold_sources:
            versions[path].append(java_text(gold_sources[path]))
        if path in texts:
            versions[path].append(texts[path])
    packages: dict[str, set[str]] = {}
    for path, texts_of in versions.items():
        for text in texts_of:
            package = declared_package(text)
            if package is None:
                return Plan(off=f"cannot read the package {path} declares")
            packages.setdefault(path, set()).add(package.replace(".", "/"))
    # gold's classes, each traced to the scanned source it came from
    by_origin: dict[tuple[str, str, str], list[str]] = {}
    for class_path, origin in classes.items():
        if origin is None or not origin.source_file:
            return Plan(off=f"{class_path} has no SourceFile attribute (compiled without debug info)")
        module = reactor.module_of(class_path)
        package = origin.name.rpartition("/")[0]
        by_origin.setdefault((module, package, origin.source_file), []).append(class_path)
    known = {
        (reactor.module_of(p), _package_dir(p, gold_files, texts, gold_sources), PurePosixPath(p).name)
        for p in gold_files
        if p.endswith(".java")
    }
    for path, data in generated.items():
        package_dir = (declared_package(java_text(data)) or "").replace(".", "/")
        known.add((reactor.module_of(path), package_dir, PurePosixPath(path).name))
    strays = sorted(origin for origin in by_origin if origin not in known)
    if strays:
        module, package, source = strays[0]
        return Plan(
            off=f"a test class of {module or '.'} came from {package}/{source}, a source outside src/test"
        )
    # the closure over mentions
    recompile = set(changed)
    names: set[str] = set()
    for path in changed:
        names.add(PurePosixPath(path).stem)
        for text in versions[path]:
            names |= declared_names(text)
    while True:
        pattern = _mentioning(names)
        joined = [p for p in java if p not in recompile and pattern.search(texts[p])]
        if not joined:
            break
        for path in joined:
            recompile.add(path)
            names.add(PurePosixPath(path).stem)
            names |= declared_names(texts[path])
    # a processor's output names its source's types in any form (AutoValue_Foo, Foo_): substrings
    pattern = _mentioning(names, whole=False)
    for path, data in sorted(generated.items()):
        if pattern.search(java_text(data)):
            return Plan(off=f"the generated source {path} mentions a recompiled type")
    delete: list[str] = []
    for path in sorted(recompile):
        module, name = reactor.module_of(path), PurePosixPath(path).name
        for package_dir in packages.get(path) or {_package_dir(path, gold_files, texts, gold_sources)}:
            delete += by_origin.get((module, package_dir, name), [])
    return Plan(
        recompile=tuple(sorted(recompile)),
        changed=tuple(changed),
        delete=tuple(sorted(delete)),
        sources=len(java),
    )


def _package_dir(
    path: str, gold_files: Mapping[str, str], texts: Mapping[str, str], gold_sources: Mapping[str, bytes]
) -> str:
    """The package directory (``org/x``) a source's classes are written to."""
    text = java_text(gold_sources[path]) if path in gold_sources else texts.get(path)
    package = declared_package(text) if text is not None else None
    return (package or "").replace(".", "/")


def _mentioning(names: Iterable[str], *, whole: bool = True) -> re.Pattern[str]:
    """Any of ``names``: as a whole identifier (``whole``; a qualified ``a.b.Name``, ``Name.m()``
    and ``Name<T>`` are mentions), or anywhere (``AutoValue_Name`` too)."""
    alternatives = "|".join(re.escape(name) for name in sorted({n for n in names if n}, key=len))
    if not alternatives:
        return re.compile(r"(?!)")
    if not whole:
        return re.compile(alternatives)
    return re.compile(f"(?<![{_IDENTIFIER_CHAR}])(?:{alternatives})(?![{_IDENTIFIER_CHAR}])")
