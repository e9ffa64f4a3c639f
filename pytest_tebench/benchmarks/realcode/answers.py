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
    if closed_by_answer is None:
        return CleanedAnswer(raw, text, tuple(steps))
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


def cut_at_closing_brace(text: str) -> tuple[str, bool | None]:
    """``(body up to and including the method's closing brace, True)``; ``(text, False)`` when
    the answer never closes the method; ``(text, None)`` when the parser finds no body at all."""
    data = _PREFIX + text.encode("utf-8")
    root = _parser().parse(data + b"\n}}").root_node
    method = _find_method(root, data)
    block = None if method is None else method.child_by_field_name("body")
    if block is None:
        return text, None
    end = block.end_byte - len(_PREFIX)
    if end > len(data) - len(_PREFIX):
        return text, False
    return data[len(_PREFIX) : block.end_byte].decode("utf-8", errors="replace"), True


def _class_body(root: Node) -> Node | None:
    for child in root.named_children:
        if child.type == "class_declaration":
            return child.child_by_field_name("body")
    return None


def _name(node: Node, data: bytes) -> str:
    name = node.child_by_field_name("name")
    return "" if name is None else data[name.start_byte : name.end_byte].decode("utf-8", errors="replace")


def _find_method(node: Node, data: bytes) -> Node | None:
    if node.type == "method_declaration" and _name(node, data) == "tebenchBody__":
        return node
    for child in node.named_children:
        found = _find_method(child, data)
        if found is not None:
            return found
    return None
