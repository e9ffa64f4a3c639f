"""``-k`` for the ``tebench`` command: select instances by words in their names.

Like pytest's ``-k`` (which the plugin uses as it is), for subcommands that run without pytest
(``export``, ``text``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from collections.abc import Iterable
from typing import Protocol

from pytest_tebench.errors import InputError

_TOKEN = re.compile(r"\(|\)|[^\s()]+")
_OPERATORS = ("and", "or", "not")
_Predicate = Callable[[list[str]], bool]


class Named(Protocol):
    @property
    def instance_id(self) -> str: ...
    @property
    def project(self) -> str: ...
    @property
    def labels(self) -> tuple[str, ...]: ...


def keyword_matcher(expression: str) -> Callable[[Iterable[str]], bool]:
    """Compile a ``-k`` expression into a predicate over an instance's names.

    Like pytest's ``-k``, but simpler: a word matches when it is a case-insensitive substring
    of any name (instance id, project, label); words combine with ``and``, ``or``, ``not`` and
    parentheses (``not`` binds tightest, then ``and``, then ``or``). An empty expression
    matches everything. Raises :class:`InputError` on a malformed expression.
    """
    tokens = _TOKEN.findall(expression)
    position = 0

    def fail(message: str) -> InputError:
        return InputError(f"-k {expression!r}: {message}")

    def peek() -> str | None:
        return tokens[position] if position < len(tokens) else None

    def take() -> str:
        nonlocal position
        token = peek()
        if token is None:
            raise fail("unexpected end of expression")
        position += 1
        return token

    def parse_or() -> _Predicate:
        terms = [parse_and()]
        while peek() == "or":
            take()
            terms.append(parse_and())
        return terms[0] if len(terms) == 1 else lambda names: any(t(names) for t in terms)

    def parse_and() -> _Predicate:
        terms = [parse_not()]
        while peek() == "and":
            take()
            terms.append(parse_not())
        return terms[0] if len(terms) == 1 else lambda names: all(t(names) for t in terms)

    def parse_not() -> _Predicate:
        token = take()
        if token == "not":
            inner = parse_not()
            return lambda names: not inner(names)
        if token == "(":
            inner = parse_or()
            if take() != ")":
                raise fail("missing ')'")
            return inner
        if token in (")", *_OPERATORS):
            raise fail(f"unexpected {token!r}")
        word = token.lower()
        return lambda names: any(word in name for name in names)

    if not tokens:
        return lambda names: True
    predicate = parse_or()
    if position != len(tokens):
        raise fail(f"unexpected {tokens[position]!r}")
    return lambda names: predicate([name.lower() for name in names])


def instance_names(instance: Named) -> list[str]:
    """The names ``-k`` looks at."""
    return [instance.instance_id, instance.project, *instance.labels]
