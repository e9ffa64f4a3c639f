"""Java source model built with tree-sitter: types, methods, test detection and comment-free tokens.

One parser serves both scoring stages and both sides (gold and prediction), so every rule that decides
"is this a test", "which method covers this line" or "what are this method's tokens" lives here once.

Identity of a method is ``Outer$Inner#name``; when a name is overloaded the caller switches to
``Outer$Inner#name(int,String[])`` for that name (see :func:`overloaded_names`: production code passes
both versions of a file; test methods are keyed by their V-0.5 identity alone, so that gold and a
prediction key them alike, see ``benchmarks/tebench/identification.py``).
Methods of anonymous and local classes are not methods of their own: they belong to the enclosing method's
line range and tokens, which is what a reviewer reading the diff sees.
"""

from __future__ import annotations

import bisect
import functools
import re
import threading
from collections.abc import Collection
from collections.abc import Iterable
from collections.abc import Iterator
from collections.abc import Sequence
from dataclasses import dataclass

import tree_sitter_java
from tree_sitter import Language
from tree_sitter import Node
from tree_sitter import Parser

_LANGUAGE = Language(tree_sitter_java.language())
# One Parser per thread: a tree-sitter parser holds mutable state and must not parse two files at once.
_LOCAL = threading.local()

TEST_ANNOTATIONS = frozenset({"Test", "ParameterizedTest", "RepeatedTest", "TestFactory", "TestTemplate"})

_TYPE_KINDS = {
    "class_declaration": "class",
    "interface_declaration": "interface",
    "enum_declaration": "enum",
    "record_declaration": "record",
    "annotation_type_declaration": "annotation",
}
_METHOD_NODES = frozenset(
    {"method_declaration", "constructor_declaration", "compact_constructor_declaration"}
)
# Containers whose members belong to the enclosing named type; ERROR keeps what tree-sitter recovered.
_TRANSPARENT = frozenset({"enum_body_declarations", "ERROR"})
_COMMENTS = frozenset({"line_comment", "block_comment"})
# Literals whose inner structure (fragments, escapes) must stay one token with the literal's full text.
_ATOMIC = frozenset({"string_literal", "character_literal"})
_ANNOTATIONS = frozenset({"marker_annotation", "annotation"})
_COMMENT_IDS = frozenset(_LANGUAGE.id_for_node_kind(kind, True) for kind in _COMMENTS)
_ATOMIC_IDS = frozenset(_LANGUAGE.id_for_node_kind(kind, True) for kind in _ATOMIC)


@dataclass(frozen=True)
class JavaMethod:
    """A method or constructor declared directly in a named (non-anonymous, non-local) type."""

    class_path: tuple[str, ...]
    name: str
    param_types: tuple[str, ...]
    annotations: tuple[str, ...]
    start_line: int
    end_line: int
    kind: str
    is_test: bool
    tokens: tuple[str, ...]
    #: Byte range of the body block, ``{`` to ``}`` inclusive, in the *normalised* source (see
    #: :func:`original_offset`); None without a body (abstract, native, interface methods).
    body: tuple[int, int] | None = None
    #: Declared return type, erased like parameters (``int``, ``List``, ``T[]``); "" for constructors.
    return_type: str = ""
    #: Statements directly inside the body block (nested blocks count as one).
    statements: int = 0

    @property
    def binary_class_name(self) -> str:
        return "$".join(self.class_path)

    @property
    def key(self) -> str:
        return f"{self.binary_class_name}#{self.name}"

    @property
    def signature_key(self) -> str:
        return f"{self.key}({','.join(self.param_types)})"


@dataclass(frozen=True)
class JavaType:
    """A class, interface, enum, record or annotation type (top-level or member; local classes excluded)."""

    class_path: tuple[str, ...]
    kind: str
    start_line: int
    end_line: int
    superclass: str | None
    #: Declared ``abstract`` (interfaces are not: their test methods run through implementors anyway).
    is_abstract: bool = False

    @property
    def binary_class_name(self) -> str:
        return "$".join(self.class_path)


@dataclass(frozen=True)
class JavaFile:
    """Everything the scorers need from one Java source file."""

    package: str
    types: tuple[JavaType, ...]
    methods: tuple[JavaMethod, ...]
    has_errors: bool

    def test_methods(self) -> tuple[JavaMethod, ...]:
        return tuple(m for m in self.methods if m.is_test)

    def methods_at_lines(self, lines: Iterable[int]) -> tuple[JavaMethod, ...]:
        wanted = sorted(set(lines))
        hits: list[JavaMethod] = []
        for method in self.methods:
            i = bisect.bisect_left(wanted, method.start_line)
            if i < len(wanted) and wanted[i] <= method.end_line:
                hits.append(method)
        return tuple(hits)


def _normalise(source: str | bytes) -> bytes:
    """UTF-8 bytes with LF line ends: a CRLF checkout must parse and tokenize like an LF one."""
    if isinstance(source, str):
        # surrogateescape round-trips text that was read with errors="surrogateescape".
        try:
            data = source.encode("utf-8", "surrogateescape")
        except UnicodeEncodeError:
            data = source.encode("utf-8", "replace")
    else:
        data = source
    data = data.removeprefix(b"\xef\xbb\xbf")
    return data.replace(b"\r\n", b"\n") if b"\r" in data else data


class _Source:
    """The normalised source with its tokens, collected in one walk over the tree's leaves."""

    def __init__(self, root: Node, data: bytes) -> None:
        self.data = data
        self.text = data.decode("utf-8", "replace")
        self.ascii_only = len(self.text) == len(data)  # then byte offsets are str offsets
        self.starts: list[int] = []
        self.texts: list[str] = []
        self._collect(root)

    def slice(self, start: int, end: int) -> str:
        if self.ascii_only:
            return self.text[start:end]
        return self.data[start:end].decode("utf-8", "replace")

    def of(self, node: Node | None) -> str:
        return "" if node is None else self.slice(*node.byte_range)

    def _collect(self, root: Node) -> None:
        # Hot loop (a big test file has ~50k leaves): locals only, one pass, no per-method re-walk.
        starts, texts, data, text = self.starts, self.texts, self.data, self.text
        ascii_only, comments = self.ascii_only, _COMMENT_IDS
        atomic = _ATOMIC_IDS | comments
        # A stack of child iterators, not recursion: `a + b + ...` chains nest deeper than Python allows.
        stack = [iter(root.children)]
        while stack:
            for node in stack[-1]:
                kind = node.kind_id
                if node.child_count and kind not in atomic:
                    stack.append(iter(node.children))
                    break
                start, end = node.byte_range
                # MISSING nodes inserted by error recovery have no text; skipped input is an ERROR leaf.
                if end > start and kind not in comments:
                    starts.append(start)
                    texts.append(
                        text[start:end] if ascii_only else data[start:end].decode("utf-8", "replace")
                    )
            else:
                stack.pop()

    def tokens_between(self, start: int, end: int) -> tuple[str, ...]:
        lo = bisect.bisect_left(self.starts, start)
        hi = bisect.bisect_left(self.starts, end, lo)
        return tuple(self.texts[lo:hi])


@dataclass(frozen=True)
class _Owner:
    class_path: tuple[str, ...]
    superclass: str | None
    record_params: tuple[str, ...]


def _dims(node: Node | None) -> str:
    if node is None:
        return ""
    return "[]" * sum(1 for c in node.children if c.type == "[")


def _modifiers(decl: Node) -> Node | None:
    return next((c for c in decl.children if c.type == "modifiers"), None)


def _extent(node: Node) -> tuple[Node, Node]:
    """First and last child that is not a comment, so a leading Javadoc never widens the range."""
    children = [c for c in node.children if c.kind_id not in _COMMENT_IDS]
    if not children:
        return node, node
    return children[0], children[-1]


class _Builder:
    """Walks type bodies only (never method bodies) and collects types and methods in source order."""

    def __init__(self, src: _Source) -> None:
        self.src = src
        self.types: list[JavaType] = []
        self.methods: list[JavaMethod] = []

    def simple_name(self, node: Node | None) -> str:
        """Last identifier of a possibly qualified name: ``org.junit.Test`` -> ``Test``."""
        while node is not None and node.type in ("scoped_identifier", "scoped_type_identifier"):
            last = node.child_by_field_name("name")
            if last is None:
                last = next((c for c in reversed(node.named_children) if "identifier" in c.type), None)
            node = last
        return self.src.of(node)

    def erased_type(self, node: Node | None) -> str:
        """Simple type without generics or type annotations: ``java.util.List<T>[]`` -> ``List[]``."""
        if node is None:
            return ""
        kind = node.type
        if kind == "array_type":
            element = self.erased_type(node.child_by_field_name("element"))
            return element + _dims(node.child_by_field_name("dimensions"))
        if kind == "generic_type":
            return self.erased_type(
                next((c for c in node.named_children if c.type != "type_arguments"), None)
            )
        if kind == "annotated_type":
            types = [c for c in node.named_children if c.type not in _ANNOTATIONS]
            return self.erased_type(types[-1] if types else None)
        return self.simple_name(node)

    def param_types(self, params: Node | None) -> tuple[str, ...]:
        if params is None:
            return ()
        types: list[str] = []
        for param in params.named_children:
            if param.type == "formal_parameter":
                declared = self.erased_type(param.child_by_field_name("type"))
                types.append(declared + _dims(param.child_by_field_name("dimensions")))
            elif param.type == "spread_parameter":
                skip = ("modifiers", "variable_declarator")
                type_node = next((c for c in param.named_children if c.type not in skip), None)
                types.append(self.erased_type(type_node) + "...")
        return tuple(types)

    def annotations(self, modifiers: Node | None) -> tuple[str, ...]:
        if modifiers is None:
            return ()
        return tuple(
            self.simple_name(c.child_by_field_name("name"))
            for c in modifiers.named_children
            if c.type in _ANNOTATIONS
        )

    def is_junit3_test(self, decl: Node, name: str, owner: _Owner, modifiers: Node | None) -> bool:
        if not (owner.superclass or "").endswith("TestCase") or not name.startswith("test"):
            return False
        is_public = modifiers is not None and any(c.type == "public" for c in modifiers.children)
        returns_void = (rtype := decl.child_by_field_name("type")) is not None and rtype.type == "void_type"
        return is_public and returns_void and not self.param_types(decl.child_by_field_name("parameters"))

    def members(self, container: Node, owner: _Owner | None) -> None:
        """Collect the types and methods under ``container`` in source order.

        A stack of (child iterator, owner) pairs, not recursion: a file of 1,500 nested classes
        would otherwise raise RecursionError, turning a model's odd output into a harness error.
        """
        stack: list[tuple[Iterator[Node], _Owner | None]] = [(iter(container.named_children), owner)]
        while stack:
            children, current = stack[-1]
            for child in children:
                kind = child.type
                if kind in _TYPE_KINDS:
                    nested = self.type_declaration(child, current)
                    if nested is not None:
                        stack.append(nested)
                        break
                elif kind in _METHOD_NODES and current is not None:
                    self.method(child, current)
                elif kind in _TRANSPARENT:
                    stack.append((iter(child.named_children), current))
                    break
            else:
                stack.pop()

    def type_declaration(self, decl: Node, owner: _Owner | None) -> tuple[Iterator[Node], _Owner] | None:
        """Record the type; return its body's members and their owner for :meth:`members` to walk."""
        name = self.src.of(decl.child_by_field_name("name"))
        if not name:
            return None
        superclass = None
        if (superclass_node := decl.child_by_field_name("superclass")) is not None:
            superclass = self.erased_type(next(iter(superclass_node.named_children), None)) or None
        path = (*owner.class_path, name) if owner else (name,)
        first, last = _extent(decl)
        start, end = first.start_point.row + 1, last.end_point.row + 1
        modifiers = _modifiers(decl)
        is_abstract = modifiers is not None and any(c.type == "abstract" for c in modifiers.children)
        self.types.append(JavaType(path, _TYPE_KINDS[decl.type], start, end, superclass, is_abstract))
        record_params = self.param_types(decl.child_by_field_name("parameters"))
        if (body := decl.child_by_field_name("body")) is None:
            return None
        return iter(body.named_children), _Owner(path, superclass, record_params)

    def method(self, decl: Node, owner: _Owner) -> None:
        modifiers = _modifiers(decl)
        annotations = self.annotations(modifiers)
        if decl.type == "method_declaration":
            kind = "method"
            name = self.src.of(decl.child_by_field_name("name"))
            params = self.param_types(decl.child_by_field_name("parameters"))
        else:
            kind = "constructor"
            name = owner.class_path[-1]
            # A compact constructor is the canonical one: same identity as `R(int a) {...}` written out.
            compact = decl.type == "compact_constructor_declaration"
            params = (
                owner.record_params if compact else self.param_types(decl.child_by_field_name("parameters"))
            )
        if not name:
            return
        body = decl.child_by_field_name("body")
        return_type = ""
        if kind == "method":
            return_type = self.erased_type(decl.child_by_field_name("type")) + _dims(
                decl.child_by_field_name("dimensions")
            )
        is_test = kind == "method" and (
            not TEST_ANNOTATIONS.isdisjoint(annotations) or self.is_junit3_test(decl, name, owner, modifiers)
        )
        first, last = _extent(decl)
        self.methods.append(
            JavaMethod(
                class_path=owner.class_path,
                name=name,
                param_types=params,
                annotations=annotations,
                start_line=first.start_point.row + 1,
                end_line=last.end_point.row + 1,
                kind=kind,
                is_test=is_test,
                tokens=self.src.tokens_between(first.start_byte, last.end_byte),
                body=body.byte_range if body is not None else None,
                return_type=return_type,
                statements=0
                if body is None
                else sum(1 for c in body.named_children if c.type not in _COMMENTS),
            )
        )


def _package(root: Node, src: _Source) -> str:
    for child in root.named_children:
        if child.type == "package_declaration":
            name = next(
                (c for c in child.named_children if c.type in ("identifier", "scoped_identifier")), None
            )
            return "".join(src.of(name).split())
    return ""


def _parse(data: bytes) -> Node:
    parser: Parser | None = getattr(_LOCAL, "parser", None)
    if parser is None:
        parser = _LOCAL.parser = Parser(_LANGUAGE)
    return parser.parse(data).root_node


def parse_java(source: str | bytes) -> JavaFile:
    """Parse one Java file; on syntax errors return whatever tree-sitter recovered and set ``has_errors``.

    Remembered by content (the result is immutable): gold's runs and every prediction's index the
    same test tree (commons-lang: 226 files, about 1.3 s a time)."""
    return _parse_file(_normalise(source))


@functools.lru_cache(maxsize=4096)
def _parse_file(data: bytes) -> JavaFile:
    root = _parse(data)
    src = _Source(root, data)
    builder = _Builder(src)
    builder.members(root, None)
    return JavaFile(
        package=_package(root, src),
        types=tuple(builder.types),
        methods=tuple(builder.methods),
        has_errors=root.has_error,
    )


#: Java's tokens as a lexer sees them, without a grammar (:func:`lexical_tokens`): comments and
#: blanks are skipped, literals are whole, any other character that is no name or number is a
#: token of its own.
_LEXEME = re.compile(
    r"""(//[^\n]*|/\*.*?(?:\*/|\Z))"""  # comments, skipped (one left open runs to the end)
    r'|("""[\s\S]*?(?:"""|\Z)'  # text blocks
    r'|"(?:\\.|[^"\\\n])*"?'  # strings
    r"|'(?:\\.|[^'\\\n])*'?"  # characters
    r"|[^\W\d][\w$]*|\$[\w$]*"  # names and keywords
    r"|\d[\w.]*"  # numbers
    r"|\S)",  # anything else, one character at a time
    re.DOTALL,
)


def lexical_tokens(text: str) -> tuple[str, ...]:
    """The tokens of ``text`` read by a lexer alone, comments left out: for a file with syntax
    errors, whose recovered tree can split a literal or lose a class (so its leaves are no
    longer what a method's :attr:`JavaMethod.tokens` were), and for a piece of a file."""
    return tuple(match[2] for match in _LEXEME.finditer(text) if match[2])


def original_offset(source: bytes, offset: int) -> int:
    """The byte offset in ``source`` of ``offset`` in its normalised form (what :func:`parse_java`
    measures in): a leading BOM and every CR of a CRLF that :func:`_normalise` dropped before it."""
    shift = 3 if source.startswith(b"\xef\xbb\xbf") else 0
    if b"\r\n" not in source:
        return offset + shift
    # The k-th CRLF (0-based) of the original sits at normalised position (its CR index - k).
    position, dropped = source.find(b"\r\n", shift), 0
    while position != -1 and position - shift - dropped < offset:
        dropped += 1
        position = source.find(b"\r\n", position + 2)
    return offset + shift + dropped


def java_tokens(source: str | bytes) -> list[str]:
    """Token texts of a Java file or fragment, comments dropped; a string or text block is one token."""
    data = _normalise(source)
    return _Source(_parse(data), data).texts


def overloaded_names(*files: JavaFile) -> set[str]:
    """Keys (``Outer$Inner#name``) declared with two or more distinct signatures in any of the given files.

    Pass the old and the new version of a file together so that a method keeps one identity when an
    overload appears or disappears between them.
    """
    names: set[str] = set()
    for java_file in files:
        signatures: dict[str, set[str]] = {}
        for method in java_file.methods:
            signatures.setdefault(method.key, set()).add(method.signature_key)
        names.update(key for key, sigs in signatures.items() if len(sigs) > 1)
    return names


def identity_key(method: JavaMethod, overloaded: Collection[str]) -> str:
    """``key`` unless the name is overloaded (see :func:`overloaded_names`), then ``signature_key``."""
    return method.signature_key if method.key in overloaded else method.key


def keyed_methods(methods: Sequence[JavaMethod], overloaded: Collection[str]) -> dict[str, JavaMethod]:
    """Methods by :func:`identity_key`; on a duplicate key (broken code only) the first declaration wins."""
    keyed: dict[str, JavaMethod] = {}
    for method in methods:
        keyed.setdefault(identity_key(method, overloaded), method)
    return keyed
