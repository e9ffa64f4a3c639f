"""SWE-bench text prompts, laid out exactly as SWE-bench's own ``create_text_dataset`` does.

The layout is SWE-bench's default prompt, ``style-3`` (``swebench/inference/make_datasets/
create_instance.py``): the issue, the README files and the retrieved files as numbered
``[start of PATH]`` blocks, an example patch, the ``<patch>`` answer instruction; the row's
``text`` is that prompt stripped and followed by a blank line (``create_text_dataset.
extract_fields``). Details kept on purpose, because the oracle texts must be byte-identical:

* files are read as Python's ``open()`` reads a checkout (UTF-8, universal newlines);
* oracle files are the *source* paths of the gold patch, so a file the patch creates is shown
  as SWE-bench shows it, an empty ``/dev/null`` block;
* BM25 documents are the ``*.py`` files whose path has no word ``test``, ``tests`` or
  ``testing`` (SWE-bench's ``is_test``), README files are the top-level files whose name starts
  with ``readme`` (any case).

The prompt's wording and the example patch below are SWE-bench's (MIT licence, (c) 2023
Carlos E Jimenez, John Yang et al.), quoted so that the texts are identical.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from collections.abc import Mapping
from collections.abc import Sequence
from typing import Any

from pytest_tebench.instance.datasets import RawRecord
from pytest_tebench.text.build import TextInstance
from pytest_tebench.text.layout import code_text
from pytest_tebench.text.layout import file_block
from pytest_tebench.workspace.patches import PatchFormatError
from pytest_tebench.workspace.patches import parse_patch

REQUIRED = ("instance_id", "repo", "base_commit", "patch", "problem_statement")

PATCH_EXAMPLE = """--- a/file.py
+++ b/file.py
@@ -1,27 +1,35 @@
 def euclidean(a, b):
-    while b:
-        a, b = b, a % b
-    return a
+    if b == 0:
+        return a
+    return euclidean(b, a % b)
 
 
 def bresenham(x0, y0, x1, y1):
     points = []
     dx = abs(x1 - x0)
     dy = abs(y1 - y0)
-    sx = 1 if x0 < x1 else -1
-    sy = 1 if y0 < y1 else -1
-    err = dx - dy
+    x, y = x0, y0
+    sx = -1 if x0 > x1 else 1
+    sy = -1 if y0 > y1 else 1
 
-    while True:
-        points.append((x0, y0))
-        if x0 == x1 and y0 == y1:
-            break
-        e2 = 2 * err
-        if e2 > -dy:
+    if dx > dy:
+        err = dx / 2.0
+        while x != x1:
+            points.append((x, y))
             err -= dy
-            x0 += sx
-        if e2 < dx:
-            err += dx
-            y0 += sy
+            if err < 0:
+                y += sy
+                err += dx
+            x += sx
+    else:
+        err = dy / 2.0
+        while y != y1:
+            points.append((x, y))
+            err -= dx
+            if err < 0:
+                x += sx
+                err += dy
+            y += sy
 
+    points.append((x, y))
     return points"""

PREMISE = (
    "You will be provided with a partial code base and an issue statement explaining a problem to resolve."
)
EXAMPLE_EXPLANATION = (
    "Here is an example of a patch file. It consists of changes to the code base. "
    "It specifies the file names, the line numbers of each change, and the removed and added lines. "
    "A single patch file can contain changes to multiple files."
)
FINAL_INSTRUCTION = (
    "I need you to solve the provided issue by generating a single patch file that I can apply "
    "directly to this repository using git apply. Please respond with a single patch "
    "file in the format shown above."
)
_TEST_WORDS = frozenset({"test", "tests", "testing"})
_WORD_SPLIT = re.compile(r" |_|/|\.")


def is_test(path: str) -> bool:
    """SWE-bench's ``is_test``: a word of the path (split at space, ``_``, ``/``, ``.``) is test(s/ing)."""
    return not _TEST_WORDS.isdisjoint(_WORD_SPLIT.split(path.lower()))


def prompt_style_3(problem_statement: str, readmes: Mapping[str, str], files: Mapping[str, str]) -> str:
    """SWE-bench's ``prompt_style_3``."""
    return "\n".join(
        [
            PREMISE,
            "<issue>",
            problem_statement,
            "</issue>",
            "",
            "<code>",
            code_text(readmes),
            code_text(files),
            "</code>",
            "",
            EXAMPLE_EXPLANATION,
            "<patch>",
            PATCH_EXAMPLE,
            "</patch>",
            "",
            FINAL_INSTRUCTION,
            "Respond below:",
        ]
    )


def oracle_paths(patch: str) -> list[str]:
    """The gold patch's source paths as SWE-bench's ``get_oracle_filenames`` takes them.

    unidiff's ``source_file`` of a created file is ``/dev/null``, which SWE-bench then reads
    (as an empty file); a renamed file is shown under its old path.
    """
    paths = {f.old_path if f.old_path is not None else "/dev/null" for f in parse_patch(patch)}
    return sorted(paths)


class SwebenchLayout:
    """The :class:`~pytest_tebench.text.build.PromptLayout` of SWE-bench rows."""

    name = "swebench"

    def load(self, records: Sequence[RawRecord]) -> list[TextInstance]:
        instances: list[TextInstance] = []
        seen: set[str] = set()
        for record in records:
            data = record.data
            instance_id = str(data.get("instance_id") or record.origin)
            problem = record.problem or _problem(data)
            if problem is None and instance_id in seen:
                problem = "duplicate instance_id"
            if problem is None:
                try:
                    parse_patch(str(data["patch"]))
                except PatchFormatError as exc:
                    problem = f"field 'patch': {exc}"
            seen.add(instance_id)
            instances.append(
                TextInstance(
                    instance_id=instance_id,
                    repo=str(data.get("repo", "")),
                    commit=str(data.get("base_commit", "")),
                    patch="",
                    row=dict(data),
                    names=(instance_id, str(data.get("repo", "")), str(data.get("version", ""))),
                    problem=None if problem is None else f"{record.origin}: {problem}",
                )
            )
        return instances

    def is_document(self, path: str) -> bool:
        return path.endswith(".py") and not is_test(path)

    def is_context(self, path: str) -> bool:
        return "/" not in path and path.lower().startswith("readme")

    def query(self, instance: TextInstance) -> str:
        return str(instance.row["problem_statement"])

    def oracle_files(self, instance: TextInstance) -> list[str]:
        return oracle_paths(str(instance.row["patch"]))

    def file_block(self, path: str, text: str) -> str:
        return file_block(path, text)

    def render(self, instance: TextInstance, context: dict[str, str], files: dict[str, str]) -> str:
        prompt = prompt_style_3(str(instance.row["problem_statement"]), context, files)
        return prompt.strip() + "\n\n"

    def shorten(self, instance: TextInstance, max_tokens: int, count: Callable[[str], int]) -> TextInstance:
        # SWE-bench never cuts the issue: its texts are reproduced as they are
        return instance


def _problem(data: dict[str, Any]) -> str | None:
    for name in REQUIRED:
        value = data.get(name)
        if not isinstance(value, str) or not value.strip():
            return f"field {name!r} is missing or not a non-empty string"
    return None
