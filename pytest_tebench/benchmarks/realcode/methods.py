"""Which methods of a Java file can be RealCodeJava tasks, and how a file is cut around one.

A task is a method body. The file is cut in three exact pieces (``left + gt + right`` is the file,
byte for byte), the way the RealCodeJava card's rows are cut:

* ``left_context``: everything up to the body's ``{`` and the rest of that line, its line end
  included (the model continues on the next line);
* ``gt``: the body's lines and the closing ``}`` (with the indentation in front of it);
* ``right_context``: everything after that ``}``.

The **stub** replaces ``gt`` with the smallest body that compiles for the return type, laid out
like the card's (``"        return List.of();\\n    }"``): ``return 0;`` for numeric primitives,
``return false;``, ``return '\\0';``, ``return null;`` for every reference type (arrays and type
variables included), and just the closing brace for ``void``.

Candidates are methods (not constructors: an empty constructor body leaves final fields unset)
declared in named types of a production file, with a body of at least ``min_statements``
top-level statements whose ``{`` ends its line and whose ``}`` starts its line. Why any other
method is left out is returned with it, for the build's side report.
"""

from __future__ import annotations

from dataclasses import dataclass

from pytest_tebench.java.parser import JavaMethod
from pytest_tebench.java.parser import original_offset
from pytest_tebench.java.parser import parse_java

#: MERA's RealCodeJava prompt (Russian), as the card's rows carry it; the model sees it filled in.
INSTRUCTION = (
    "Контекст:\n```java\n{left_context}\n```\n"
    "Требуется: только тело функции. Строго соблюдай отступы. Не добавляй лишнего текста."  # noqa: RUF001
)
#: The card's ``intent_type`` of a method.
INTENT_TYPE = "function"
DEFAULT_MIN_STATEMENTS = 2
_ZERO = frozenset({"byte", "short", "int", "long", "float", "double"})


@dataclass(frozen=True)
class MethodTask:
    """One candidate method of one file, cut into its three pieces."""

    file_path: str  # repository-relative, e.g. src/main/java/org/x/Util.java
    #: Where JaCoCo reports this file: package path + file name (``org/x/Util.java``).
    source_key: str
    class_name: str  # binary name with package: org.x.Outer$Inner
    name: str
    signature: str  # Outer$Inner#name(int,String[])
    return_type: str
    left: str
    gt: str
    right: str
    stub: str
    #: First and last line of the body (``{`` line to ``}`` line), 1-based: JaCoCo's coordinates.
    body_lines: tuple[int, int]

    @property
    def key(self) -> str:
        """Unique in a repository: the file and the method's full signature."""
        return f"{self.file_path}::{self.signature}"

    @property
    def intent(self) -> str:
        return f"{self.name}[{INTENT_TYPE}]"


def stub_statement(return_type: str) -> str:
    """The one statement of a stub body for ``return_type`` ("" for ``void``)."""
    if return_type == "void":
        return ""
    if return_type in _ZERO:
        return "return 0;"
    if return_type == "boolean":
        return "return false;"
    if return_type == "char":
        return "return '\\0';"
    return "return null;"


def make_stub(return_type: str, gt: str) -> str:
    """The stub body in the layout of ``gt``: its first statement's indentation, its closing line,
    its line ends."""
    close_line = gt[gt.rfind("\n") + 1 :]
    close_indent = close_line[: len(close_line) - len(close_line.lstrip())]
    statement = stub_statement(return_type)
    if not statement:
        return close_line
    first = next((line for line in gt.split("\n")[:-1] if line.strip()), "")
    indent = first[: len(first) - len(first.lstrip())] or close_indent + (
        "\t" if "\t" in close_indent else "    "
    )
    newline = "\r\n" if "\r\n" in gt else "\n"
    return f"{indent}{statement}{newline}{close_line}"


def cut(data: bytes, body: tuple[int, int]) -> tuple[str, str, str] | str:
    """``(left, gt, right)`` for a body at original byte offsets ``body`` (``{`` to ``}`` inclusive),
    or why the body cannot be cut the card's way."""
    open_at, close_at = body[0], body[1] - 1
    if data[open_at : open_at + 1] != b"{" or data[close_at : close_at + 1] != b"}":
        return "body offsets do not point at its braces"
    line_end = data.find(b"\n", open_at)
    if line_end == -1 or line_end >= close_at or data[open_at + 1 : line_end].strip():
        return "the body's '{' does not end its line"
    line_start = data.rfind(b"\n", 0, close_at) + 1
    if data[line_start:close_at].strip() or line_start <= line_end:
        return "the body's '}' does not start its line"
    try:
        left = data[: line_end + 1].decode("utf-8")
        gt = data[line_end + 1 : close_at + 1].decode("utf-8")
        right = data[close_at + 1 :].decode("utf-8")
    except UnicodeDecodeError:
        return "the file is not UTF-8"
    if (left + gt + right).encode("utf-8") != data:
        raise AssertionError("left + gt + right is not the file")  # a bug of ours, never data's fault
    return left, gt, right


@dataclass(frozen=True)
class FileMethods:
    tasks: tuple[MethodTask, ...]
    #: ``{method key: reason}`` of every method declared in the file that is no task.
    rejected: dict[str, str]


def method_tasks(file_path: str, data: bytes, *, min_statements: int = DEFAULT_MIN_STATEMENTS) -> FileMethods:
    """Every candidate method of one production file (see the module docstring)."""
    parsed = parse_java(data)
    if parsed.has_errors:
        return FileMethods((), {f"{file_path}::*": "the file has syntax errors"})
    name = file_path.rsplit("/", 1)[-1]
    source_key = f"{parsed.package.replace('.', '/')}/{name}" if parsed.package else name
    prefix = f"{parsed.package}." if parsed.package else ""
    tasks: list[MethodTask] = []
    rejected: dict[str, str] = {}
    for method in parsed.methods:
        key = f"{file_path}::{method.signature_key}"
        outcome = _task(method, data, file_path, source_key, prefix=prefix, min_statements=min_statements)
        if isinstance(outcome, str):
            rejected[key] = outcome
        else:
            tasks.append(outcome)
    return FileMethods(tuple(tasks), rejected)


def _task(
    method: JavaMethod, data: bytes, file_path: str, source_key: str, *, prefix: str, min_statements: int
) -> MethodTask | str:
    if method.kind != "method":
        return f"a {method.kind}"
    if method.body is None:
        return "no body (abstract, native or an interface method)"
    if method.statements < min_statements:
        return f"fewer than {min_statements} statements ({method.statements})"
    body = (original_offset(data, method.body[0]), original_offset(data, method.body[1] - 1) + 1)
    pieces = cut(data, body)
    if isinstance(pieces, str):
        return pieces
    left, gt, right = pieces
    stub = make_stub(method.return_type, gt)
    return MethodTask(
        file_path=file_path,
        source_key=source_key,
        class_name=prefix + method.binary_class_name,
        name=method.name,
        signature=method.signature_key,
        return_type=method.return_type,
        left=left,
        gt=gt,
        right=right,
        stub=stub,
        body_lines=(left.count("\n"), left.count("\n") + 1 + gt.count("\n")),
    )
