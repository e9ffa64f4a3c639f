"""Turn a model's raw answer into the method body that is put between the contexts.

The rules (docs/realcode.md, "Cleaning answers"), applied in this order, each only when it
applies; the steps taken are recorded with the sample, next to the raw text:

1. ``fence``: the content of the first fenced block labelled ``java`` (else the first fenced
   block); an opening fence without its closing one takes everything after it;
2. ``signature``: an answer that repeats the method's declaration (annotations, modifiers,
   signature, ``{``) keeps only what follows the ``{``;
3. ``cut``: the body ends at the brace that closes the method; what follows (other methods, the
   class's brace, prose) is dropped;
4. ``closed``: a body whose method is never closed gets a ``}`` on a line of its own, indented
   like the signature.

Braces are found by tree-sitter-java, so braces in strings, characters, text blocks and
comments do not count (MERA counts them by hand, with the same intent).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass

import tree_sitter_java
from tree_sitter import Language
from tree_sitter import Node
from tree_sitter import Parser

_LANGUAGE = Language(tree_sitter_java.language())
_LOCAL = threading.local()
_FENCE = re.compile(r"^[ \t]*(`{3,})[ \t]*([A-Za-z0-9_+-]*)[^\n]*\n", re.MULTILINE)
_METHODS = frozenset({"method_declaration", "constructor_declaration"})
_SKIPPABLE = frozenset({"line_comment", "block_comment"})
#: What a body is wrapped in to find its closing brace; the name cannot clash with Java code.
_PREFIX = b"class TebenchWrap__ { void tebenchBody__() {\n"


@dataclass(frozen=True)
class CleanedAnswer:
    raw: str
    body: str
    #: The rules that changed something: ``fence``, ``signature``, ``cut``, ``closed``.
    steps: tuple[str, ...]

    @property
    def is_empty(self) -> bool:
        return not self.body.strip()


def _parser() -> Parser:
    parser: Parser | None = getattr(_LOCAL, "parser", None)
    if parser is None:
        parser = _LOCAL.parser = Parser(_LANGUAGE)
    return parser


def clean_answer(raw: str, *, method_name: str, indent: str = "") -> CleanedAnswer:
    """The body to insert for ``raw``; ``method_name`` is the intent's name, ``indent`` the
    signature's indentation (for a closing brace the answer forgot)."""
    steps: list[str] = []
    text = raw.replace("\r\n", "\n")
    fenced = extract_fence(text)
    if fenced is not None:
        text = fenced
        steps.append("fence")
    if not text.strip():
        return CleanedAnswer(raw, "", tuple(steps))
    after_signature = strip_signature(text, method_name)
    if after_signature is not None:
        text = after_signature
        steps.append("signature")
    body, closed_by_answer = cut_at_closing_brace(text)
    if closed_by_answer:
        if text[len(body) :].strip():
            steps.append("cut")
        text = body
    else:
        text = text.rstrip() + "\n" + indent + "}"
        steps.append("closed")
    return CleanedAnswer(raw, text, tuple(steps))


def extract_fence(text: str) -> str | None:
    """The first ```` ```java ```` block's content (else the first fenced block's), or None."""
    openings = list(_FENCE.finditer(text))
    if not openings:
        return None
    java = [m for m in openings if m.group(2).lower() == "java"]
    opening = java[0] if java else openings[0]
    fence = opening.group(1)
    closing = re.compile(rf"^[ \t]*{fence}`*[ \t]*$", re.MULTILINE).search(text, opening.end())
    return text[opening.end() : closing.start() if closing else len(text)]


def strip_signature(text: str, method_name: str) -> str | None:
    """What follows the ``{`` of a repeated declaration of ``method_name`` that opens ``text``
    (comments and annotations may precede it), or None when the answer does not repeat it."""
    prefix = b"class TebenchWrap__ {\n"
    data = prefix + text.encode("utf-8")
    root = _parser().parse(data + b"\n}").root_node
    body = _class_body(root)
    if body is None:
        return None
    for member in body.named_children:
        if member.type in _SKIPPABLE:
            continue
        if member.type not in _METHODS or _name(member, data) != method_name:
            return None
        block = member.child_by_field_name("body")
        if block is None or block.start_byte < len(prefix):
            return None
        rest = data[block.start_byte + 1 :].decode("utf-8", errors="replace")
        return rest[1:] if rest.startswith("\n") else rest
    return None


def cut_at_closing_brace(text: str) -> tuple[str, bool]:
    """``(body up to and including the method's closing brace, True)``, or ``(text, False)`` when
    the answer never closes the method.

    Counts the brace *tokens* tree-sitter lexes (inside a method wrapper, so the lexer is in
    Java's statement context): braces in strings, characters and comments are not tokens, and
    an answer with syntax errors still has its braces counted in order, where the parser's
    recovered blocks might not end where the braces do."""
    data = _PREFIX + text.encode("utf-8")
    root = _parser().parse(data).root_node
    depth = 1
    for token in _tokens(root):
        if token.start_byte < len(_PREFIX) or token.start_byte == token.end_byte:
            continue  # the wrapper, or a token the parser made up (MISSING)
        if token.type == "{":
            depth += 1
        elif token.type == "}":
            depth -= 1
            if depth == 0:
                return data[len(_PREFIX) : token.end_byte].decode("utf-8", errors="replace"), True
    return text, False


def _tokens(node: Node) -> Iterator[Node]:
    """The leaves of the tree in source order (a string or comment is one leaf or a subtree
    without brace tokens)."""
    stack = [node]
    while stack:
        current = stack.pop()
        if current.child_count == 0:
            yield current
        else:
            stack.extend(reversed(current.children))


def _class_body(root: Node) -> Node | None:
    for child in root.named_children:
        if child.type == "class_declaration":
            return child.child_by_field_name("body")
    return None


def _name(node: Node, data: bytes) -> str:
    name = node.child_by_field_name("name")
    return "" if name is None else data[name.start_byte : name.end_byte].decode("utf-8", errors="replace")
