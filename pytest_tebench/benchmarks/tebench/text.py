"""TEBench text prompts: the production change, the code the model needs, a test patch as answer.

The prompt follows SWE-bench's ``style-3`` layout, with the task in place of the issue:

* ``<change>``: the V0 commit message (the instance's own fields when there is none) and the
  production change as a diff (``source_patch``; binary files are named, not shown);
* ``<code>``: files of V-0.5 (V-1 + ``source_patch``, made by the harness's own workspace) as
  numbered ``[start of PATH]`` blocks. ``oracle`` shows the test files the gold test patch
  changes and that exist in V-0.5, plus the production files the change touches; ``bm25``
  shows the Java files (tests included: they are what the model must change) ranked against
  the commit message and the change;
* an example test patch in ``<patch>`` and the instruction to answer with one test patch.

Rows are the dataset's fields plus ``text``; the answer is evaluated with
``--tebench-predictions`` (raw output with ``<patch>`` is extracted there).
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Sequence
from dataclasses import replace

from pytest_tebench.benchmarks.tebench.adapter import TebenchAdapter
from pytest_tebench.instance.datasets import RawRecord
from pytest_tebench.text.build import TextInstance
from pytest_tebench.text.layout import code_text
from pytest_tebench.text.layout import file_block
from pytest_tebench.workspace.layout import is_test_path
from pytest_tebench.workspace.patches import PatchFormatError
from pytest_tebench.workspace.patches import join_patch
from pytest_tebench.workspace.patches import parse_patch

PREMISE = (
    "You will be provided with a partial code base and a change to its production code. "
    "The production code has changed; the tests have not been updated for the change yet."
)
PATCH_EXAMPLE = """--- a/src/test/java/org/example/MathUtilTest.java
+++ b/src/test/java/org/example/MathUtilTest.java
@@ -10,10 +10,16 @@ public class MathUtilTest {
     @Test
     public void gcdOfCoprimes() {
         assertEquals(1, MathUtil.gcd(7, 9));
     }
 
     @Test
-    public void gcdOfZero() {
-        assertEquals(5, MathUtil.gcd(5, 0));
+    public void gcdOfZeroIsTheOtherNumber() {
+        assertEquals(5, MathUtil.gcd(5, 0));
+        assertEquals(5, MathUtil.gcd(0, 5));
+    }
+
+    @Test
+    public void gcdRejectsNegativeNumbers() {
+        assertThrows(IllegalArgumentException.class, () -> MathUtil.gcd(-1, 5));
     }
 }"""
EXAMPLE_EXPLANATION = (
    "Here is an example of a patch file. It consists of changes to the code base. "
    "It specifies the file names, the line numbers of each change, and the removed and added lines. "
    "A single patch file can contain changes to multiple files."
)
FINAL_INSTRUCTION = (
    "I need you to evolve the test suite for the change above: fix the tests it breaks, update the tests "
    "that no longer check the changed behaviour, and add tests for behaviour it introduces. Change test "
    "files only (under src/test); the production change is given. Generate a single patch file that I can "
    "apply directly to this repository using git apply. Please respond with a single patch file in the "
    "format shown above."
)


def shown_diff(source_patch: str, *, keep: int | None = None) -> str:
    """The production change for the prompt: binary hunks (unreadable base85) replaced by a note;
    with ``keep``, only the first ``keep`` file diffs are shown and the others are named."""
    if not source_patch.strip():
        return "(the commit changes no production file)"
    try:
        files = parse_patch(source_patch)
    except PatchFormatError:
        return source_patch.rstrip("\n")
    texts = [f for f in files if not f.binary]
    shown = texts if keep is None else texts[:keep]
    text = join_patch(shown)
    notes = "".join(f"Binary file {f.path} changed\n" for f in files if f.binary)
    omitted = [f.path for f in texts[len(shown) :]]
    if omitted:
        notes += f"[diffs of {len(omitted)} more file(s) left out for length: {', '.join(omitted)}]\n"
    return (text + notes).rstrip("\n")


def _source_patch(instance: TextInstance) -> str:
    """The production change as the prompt shows it: the builder's readable form when the row's
    sends a Latin-1 source as a GIT binary patch."""
    return instance.shown_patch or str(instance.row.get("source_patch") or "")


def task_text(instance: TextInstance) -> str:
    """The commit message, or the instance's own fields when the dataset has none."""
    message = instance.row.get("v0_message")
    if isinstance(message, str) and message.strip():
        return message.strip()
    project = instance.row.get("project") or instance.repo
    return f"Instance {instance.instance_id} of {project} ({instance.repo}); no commit message."


class TebenchLayout:
    """The :class:`~pytest_tebench.text.build.PromptLayout` of TEBench rows."""

    name = "tebench"

    def load(self, records: Sequence[RawRecord]) -> list[TextInstance]:
        # validation is the adapter's: a text row exists exactly for the instances an evaluation accepts
        instances = TebenchAdapter().load_instances(records)
        return [
            TextInstance(
                instance_id=i.instance_id,
                repo=i.repo,
                commit=i.payload.v_minus_1_commit if i.payload is not None else "",
                patch=i.payload.source_patch if i.payload is not None else "",
                row=dict(r.data),
                names=(i.instance_id, i.project, *i.labels),
                problem=i.problem,
            )
            for i, r in zip(instances, records, strict=True)
        ]

    def is_document(self, path: str) -> bool:
        return path.endswith(".java")

    def is_context(self, path: str) -> bool:
        return False

    def query(self, instance: TextInstance) -> str:
        return task_text(instance) + "\n" + _source_patch(instance)

    def oracle_files(self, instance: TextInstance) -> list[str]:
        row = instance.row
        # a binary piece of a Java source is a file that is not UTF-8 (a Latin-1 source): shown too
        tests = [
            f.old_path
            for f in parse_patch(str(row["test_patch"]))
            if f.old_path is not None
            and is_test_path(f.old_path)
            and (not f.binary or self.is_document(f.old_path))
        ]
        source = str(row.get("source_patch") or "")
        production = (
            [
                f.new_path
                for f in parse_patch(source)
                if f.new_path is not None and (not f.binary or self.is_document(f.new_path))
            ]
            if source.strip()
            else []
        )
        return sorted(set(tests) | set(production))

    def file_block(self, path: str, text: str) -> str:
        return file_block(path, text)

    def shorten(self, instance: TextInstance, max_tokens: int, count: Callable[[str], int]) -> TextInstance:
        """Show whole file diffs of the change while the prompt without code fits; name the rest."""
        source = _source_patch(instance)
        whole = shown_diff(source)
        keep = 0
        while True:
            # the whole change is known not to fit (that is why this is called)
            candidate = replace(instance, shown_task=shown_diff(source, keep=keep + 1))
            if candidate.shown_task == whole or count(self.render(candidate, {}, {})) > max_tokens:
                break
            keep += 1
        return replace(instance, shown_task=shown_diff(source, keep=keep))

    def render(self, instance: TextInstance, context: dict[str, str], files: dict[str, str]) -> str:
        prompt = "\n".join(
            [
                PREMISE,
                "<change>",
                task_text(instance),
                "",
                instance.shown_task or shown_diff(_source_patch(instance)),
                "</change>",
                "",
                "<code>",
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
        return prompt.strip() + "\n\n"
