from __future__ import annotations

import pytest

from pytest_tebench.workspace.layout import is_test_path
from pytest_tebench.workspace.layout import split_by_test_tree
from pytest_tebench.workspace.patches import PatchFormatError
from pytest_tebench.workspace.patches import parse_patch

GIT_PATCH = """\
diff --git a/src/test/java/p/ATest.java b/src/test/java/p/ATest.java
index 1111111..2222222 100644
--- a/src/test/java/p/ATest.java
+++ b/src/test/java/p/ATest.java
@@ -1,3 +1,3 @@
 class ATest {
-  int x;
+  int y;
 }
diff --git a/src/test/java/p/NewTest.java b/src/test/java/p/NewTest.java
new file mode 100644
index 0000000..3333333
--- /dev/null
+++ b/src/test/java/p/NewTest.java
@@ -0,0 +1 @@
+class NewTest {}
diff --git a/src/main/java/p/Gone.java b/src/main/java/p/Gone.java
deleted file mode 100644
index 4444444..0000000
--- a/src/main/java/p/Gone.java
+++ /dev/null
@@ -1 +0,0 @@
-class Gone {}
diff --git a/src/test/java/p/Old.java b/src/test/java/p/Renamed.java
similarity index 90%
rename from src/test/java/p/Old.java
rename to src/test/java/p/Renamed.java
diff --git a/src/test/resources/logo.png b/src/test/resources/logo.png
index 5555555..6666666 100644
Binary files a/src/test/resources/logo.png and b/src/test/resources/logo.png differ
"""


def test_git_patch_sections() -> None:
    files = parse_patch(GIT_PATCH)
    assert [(f.old_path, f.new_path, f.status, f.binary) for f in files] == [
        ("src/test/java/p/ATest.java", "src/test/java/p/ATest.java", "modified", ""),
        (None, "src/test/java/p/NewTest.java", "added", ""),
        ("src/main/java/p/Gone.java", None, "deleted", ""),
        ("src/test/java/p/Old.java", "src/test/java/p/Renamed.java", "renamed", ""),
        ("src/test/resources/logo.png", "src/test/resources/logo.png", "modified", "no-data"),
    ]
    assert "".join(f.text for f in files) == GIT_PATCH


def test_plain_unified_diff_without_git_headers() -> None:
    text = "--- a/src/test/java/X.java\n+++ b/src/test/java/X.java\n@@ -1 +1 @@\n-a\n+b\n"
    (only,) = parse_patch(text)
    assert (only.old_path, only.new_path, only.status) == (
        "src/test/java/X.java",
        "src/test/java/X.java",
        "modified",
    )


def test_plain_diff_new_file() -> None:
    text = "--- /dev/null\n+++ b/src/test/java/N.java\n@@ -0,0 +1 @@\n+x\n"
    (only,) = parse_patch(text)
    assert (only.old_path, only.new_path, only.status) == (None, "src/test/java/N.java", "added")


def test_quoted_unicode_path() -> None:
    text = 'diff --git "a/src/test/caf\\303\\251.txt" "b/src/test/caf\\303\\251.txt"\n--- x\n'
    (only,) = parse_patch(text)
    assert only.new_path == "src/test/café.txt"


@pytest.mark.parametrize("text", ["", "just prose, no diff", "@@ -1 +1 @@\n-a\n+b\n"])
def test_not_a_patch(text: str) -> None:
    with pytest.raises(PatchFormatError):
        parse_patch(text)


PATH_CASES = [
    ("src/test/java/com/ex/FooTest.java", True),
    ("module/src/test/resources/x.txt", True),
    ("a/b/src/test/java/X.java", True),
    ("src\\test\\java\\X.java", True),
    ("src/main/java/com/ex/Latest.java", False),
    ("src/main/java/test/Helper.java", False),
    ("test/java/FooTest.java", False),
    ("src/testing/java/X.java", False),
    ("mysrc/test/X.java", False),
    ("src/it/java/X.java", False),
    ("src/test", True),
    ("", False),
]


@pytest.mark.parametrize(("path", "expected"), PATH_CASES, ids=[c[0] or "empty" for c in PATH_CASES])
def test_is_test_path(path: str, expected: bool) -> None:
    assert is_test_path(path) is expected


def test_split_by_test_tree_rename_across_boundary_is_other() -> None:
    text = (
        "diff --git a/src/main/java/A.java b/src/test/java/A.java\nsimilarity index 100%\n"
        "rename from src/main/java/A.java\nrename to src/test/java/A.java\n"
    )
    tests, others = split_by_test_tree(parse_patch(GIT_PATCH + text))
    assert [f.path for f in tests] == [
        "src/test/java/p/ATest.java",
        "src/test/java/p/NewTest.java",
        "src/test/java/p/Renamed.java",
        "src/test/resources/logo.png",
    ]
    assert [f.path for f in others] == ["src/main/java/p/Gone.java", "src/test/java/A.java"]


def test_a_hunk_of_context_lines_only_is_left_out() -> None:
    # seen on jfreechart d44af698: a system dropped the one import its hunk added, and the hunk,
    # still announcing +7, was six context lines that git and patch both reject as corrupt
    noop = "@@ -2,3 +2,4 @@\n a\n b\n c\n"
    real = "@@ -10,2 +11,2 @@\n x\n-y\n+Y\n"
    text = f"--- a/src/test/java/A.java\n+++ b/src/test/java/A.java\n{noop}{real}"
    (piece,) = parse_patch(text)
    assert (len(piece.hunks), piece.unchanged_hunks, piece.changes_nothing) == (1, 1, False)
    assert (
        piece.text
        == "--- a/src/test/java/A.java\n+++ b/src/test/java/A.java\n@@ -10,2 +11,2 @@\n x\n-y\n+Y\n"
    )
    (only_noop,) = parse_patch(f"diff --git a/B.java b/B.java\n--- a/B.java\n+++ b/B.java\n{noop}")
    assert (only_noop.hunks, only_noop.unchanged_hunks, only_noop.changes_nothing) == ((), 1, True)
    # a mode change with it still changes the file
    moded = "diff --git a/B.java b/B.java\nold mode 100644\nnew mode 100755\n--- a/B.java\n+++ b/B.java\n"
    assert not parse_patch(moded + noop)[0].changes_nothing
