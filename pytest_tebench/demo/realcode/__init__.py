"""The embedded RealCodeJava demo: four methods of the textkit demo library, at its tip commit.

The repository is the TEBench demo's (``pytest-tebench/textkit``, replayed from the history
shipped in ``pytest_tebench/demo/history``), so no other project is stored. Each instance is a
method whose tests are known; :func:`demo_rows` cuts the method out of its file with
tree-sitter (``left_context`` ends with the signature's ``{`` and its newline, ``gt`` is the
rest of the body up to its closing brace, ``left + gt + right == file``) and writes the row in
the card's nested schema. ``dataset.jsonl`` is its output (``tests/test_realcode_units.py``
checks that it is up to date). As in the card and ``tebench build --benchmark realcode``,
``PASS_TO_PASS`` are the method's tests (all pass with the ground truth) and ``FAIL_TO_PASS``
the subset the stub fails: here every one (checked by the end-to-end test).

``predictions/demo-model.jsonl`` has 11 samples in the three line formats (a list, several
lines, a single completion): right, wrong, one that does not compile, fenced, with the
signature repeated, with trailing methods, without its closing brace. docs/realcode.md
lists the expected outcome of each.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import tree_sitter_java
from tree_sitter import Language
from tree_sitter import Node
from tree_sitter import Parser

from pytest_tebench.demo import DEMO_COMMITS
from pytest_tebench.demo import DEMO_REPO

HERE = Path(__file__).resolve().parent
DATASET = HERE / "dataset.jsonl"
PREDICTIONS = HERE / "predictions" / "demo-model.jsonl"
BASE_COMMIT = DEMO_COMMITS[-1]
_MAIN = "src/main/java/org/tebench/textkit/"
_TESTS = "org.tebench.textkit."
INSTRUCTION = (
    "Context:\n```java\n{left_context}\n```\nWrite only the body of the last function, "
    "ending with its closing brace. Keep the indentation. Add no other text."
)


@dataclass(frozen=True)
class DemoMethod:
    instance_id: int
    file: str
    name: str
    #: Number of parameters (tells overloads apart).
    arity: int
    stub: str
    #: The method's tests that fail with the stub.
    fail_to_pass: tuple[str, ...]
    #: The method's tests that pass with the stub too.
    stub_passes: tuple[str, ...] = ()


DEMO_METHODS: tuple[DemoMethod, ...] = (
    DemoMethod(
        1, "StringUtils.java", "repeat", 2, "        return null;\n    }",
        (f"{_TESTS}StringUtilsTest::repeatsString",),
    ),
    DemoMethod(
        2, "StringUtils.java", "reverse", 1, "        return null;\n    }",
        (
            f"{_TESTS}StringUtilsTest::reversesAscii",
            f"{_TESTS}StringUtilsUnicodeTest::reverseKeepsSurrogatePairsTogether",
            f"{_TESTS}StringUtilsUnicodeTest::reverseOfOnlySupplementaryCharacters",
        ),
    ),
    DemoMethod(
        3, "Padding.java", "center", 3, "        return s;\n    }",
        (f"{_TESTS}PaddingTest::center", f"{_TESTS}PaddingTest::oddPaddingGoesRight"),
    ),
    DemoMethod(
        4, "TextStats.java", "wordCount", 1, "        return 0;\n    }",
        (
            f"{_TESTS}TextStatsTest::countsWords",
            f"{_TESTS}TextStatsTest::hyphenatedWordCountsOnce",
            f"{_TESTS}TextStatsTest::loneDashIsNotAWord",
            f"{_TESTS}TextStatsTest::averagesWordLength",
        ),
    ),
)  # fmt: skip


def split_method(source: str, name: str, arity: int) -> tuple[str, str, str]:
    """``(left_context, gt, right_context)`` of the method ``name`` with ``arity`` parameters."""
    data = source.encode("utf-8")
    root = Parser(Language(tree_sitter_java.language())).parse(data).root_node
    method = _find(root, data, name, arity)
    if method is None:
        raise ValueError(f"no method {name} with {arity} parameters")
    block = method.child_by_field_name("body")
    assert block is not None
    start = block.start_byte + 1
    if data[start : start + 1] == b"\n":
        start += 1
    left, gt, right = data[:start], data[start : block.end_byte], data[block.end_byte :]
    return left.decode("utf-8"), gt.decode("utf-8"), right.decode("utf-8")


def _find(node: Node, data: bytes, name: str, arity: int) -> Node | None:
    if node.type == "method_declaration":
        ident = node.child_by_field_name("name")
        params = node.child_by_field_name("parameters")
        if (
            ident is not None
            and params is not None
            and data[ident.start_byte : ident.end_byte].decode() == name
            and len([p for p in params.named_children if p.type == "formal_parameter"]) == arity
        ):
            return node
    for child in node.named_children:
        found = _find(child, data, name, arity)
        if found is not None:
            return found
    return None


def demo_rows(checkout: Path) -> list[dict[str, Any]]:
    """The demo's rows, cut from ``checkout`` (a work tree of the textkit demo at :data:`BASE_COMMIT`)."""
    rows: list[dict[str, Any]] = []
    for method in DEMO_METHODS:
        path = _MAIN + method.file
        left, gt, right = split_method(
            (checkout / path).read_text(encoding="utf-8"), method.name, method.arity
        )
        rows.append(
            {
                "instruction": INSTRUCTION,
                "inputs": {"left_context": left},
                "outputs": gt,
                "meta": {
                    "id": method.instance_id,
                    "repo": DEMO_REPO,
                    "base_commit": BASE_COMMIT,
                    "gt": gt,
                    "stub": method.stub,
                    "right_context": right,
                    "left_context": left,
                    "image_name": "maven:3.9.9-eclipse-temurin-17",
                    "build_command": "",
                    "test_command": "mvn test",
                    "file_path": path,
                    "PASS_TO_PASS": [*method.fail_to_pass, *method.stub_passes],
                    "FAIL_TO_PASS": list(method.fail_to_pass),
                    "intent": f"{method.name}[function]",
                    "intent_type": "function",
                },
            }
        )
    return rows


def dataset_text(rows: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
