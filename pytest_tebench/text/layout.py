"""How files are shown in a prompt: SWE-bench's ``[start of PATH]`` blocks with numbered lines.

The format is SWE-bench's (``create_instance.make_code_text``), reproduced exactly because its
text datasets are compared byte for byte; benchmarks that show code the same way share it.
"""

from __future__ import annotations

from collections.abc import Mapping


def add_lines(content: str) -> str:
    """Each line prefixed with its 1-based number and a space (a trailing newline numbers one more)."""
    return "\n".join(f"{number} {line}" for number, line in enumerate(content.split("\n"), start=1))


def file_block(path: str, content: str, *, numbered: bool = True) -> str:
    """One file as ``[start of PATH]`` ... ``[end of PATH]``."""
    body = add_lines(content) if numbered else content
    return f"[start of {path}]\n{body}\n[end of {path}]"


def code_text(files: Mapping[str, str], *, numbered: bool = True) -> str:
    """All files, sorted by path, one block each, without leading or trailing newlines."""
    text = "".join(file_block(path, files[path], numbered=numbered) + "\n" for path in sorted(files))
    return text.strip("\n")
