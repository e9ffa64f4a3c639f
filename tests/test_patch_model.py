"""Hostile patches (issue 8): every file header is seen, whatever the dialect, and decided per file.

Each case is a way a prediction once changed what it may not change, or got a hunk applied that
matched nothing; the parser and the layout's rules must refuse it, and only accepted pieces may
reach git or ``patch``.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from pytest_tebench.workspace.checkout import PatchDoesNotApply
from pytest_tebench.workspace.checkout import Workspace
from pytest_tebench.workspace.checkout import changed_line_numbers
from pytest_tebench.workspace.checkout import fuzz_limit
from pytest_tebench.workspace.gitcmd import git
from pytest_tebench.workspace.gitcmd import git_text
from pytest_tebench.workspace.layout import FORBIDDEN
from pytest_tebench.workspace.layout import OUTSIDE
from pytest_tebench.workspace.layout import STRAY
from pytest_tebench.workspace.layout import TEST_PLATFORM
from pytest_tebench.workspace.patches import FilePatch
from pytest_tebench.workspace.patches import PatchFormatError
from pytest_tebench.workspace.patches import parse_patch

from conftest import History

MAIN = "src/main/java/p/A.java"
MAIN_V0 = "class A { int f() { return 2; } }\n"
TEST = "src/test/java/p/ATest.java"
TEST_V1 = "".join(f"    // line {i}\n" for i in range(1, 13))

TEST_EDIT = (
    f"diff --git a/{TEST} b/{TEST}\n--- a/{TEST}\n+++ b/{TEST}\n@@ -5,3 +5,3 @@\n"
    "     // line 5\n-    // line 6\n+    // line six\n     // line 7\n"
)
# a second header inside the test file's section, then a hunk on production code
SMUGGLED_UNIFIED = (
    f"--- a/{MAIN}\n+++ b/{MAIN}\n@@ -1 +1 @@\n-class A {{ int f() {{ return 2; }} }}\n"
    "+class A { int f() { return 99; } }\n"
)
SMUGGLED_CONTEXT = (
    f"*** a/{MAIN}\n--- b/{MAIN}\n***************\n*** 1 ****\n! class A {{ int f() {{ return 2; }} }}\n"
    "--- 1 ----\n! class A { int f() { return 99; } }\n"
)


@pytest.fixture
def ws(make_history: Callable[[str], History], tmp_path: Path) -> Workspace:
    h = make_history("hostile")
    h.commit({MAIN: "class A { int f() { return 1; } }\n", TEST: TEST_V1})
    h.commit({MAIN: MAIN_V0, TEST: TEST_V1})
    v1, v0 = h.commits
    row = h.instance_row(v1, v0, instance_id="hostile__1", repo="me/hostile", labels=["stale"])
    return Workspace.create(h.path, v1, str(row["source_patch"]), parent=tmp_path / "ws")


def _main_untouched(ws: Workspace) -> None:
    assert ws.read("prediction", MAIN) == MAIN_V0
    assert "src/main" not in git_text(ws.path, "diff", "--name-only", "v-0.5", "prediction")


@pytest.mark.parametrize("smuggled", [SMUGGLED_UNIFIED, SMUGGLED_CONTEXT], ids=["unified", "context"])
def test_a_header_hidden_inside_a_test_section_is_a_file_of_its_own(ws: Workspace, smuggled: str) -> None:
    applied = ws.commit_prediction(TEST_EDIT + smuggled)
    _main_untouched(ws)
    assert applied.touched_non_test_files == (MAIN,)
    assert [(r.path, r.kind) for r in applied.refused] == [(MAIN, OUTSIDE)]
    assert "line six" in (ws.read("prediction", TEST) or "")


def test_parser_sees_every_header_and_renders_only_what_it_attributed() -> None:
    files = parse_patch("Here is my fix:\n" + TEST_EDIT + SMUGGLED_UNIFIED + "Hope it helps!\n")
    assert [(f.path, f.dialect) for f in files] == [(TEST, "git"), (MAIN, "unified")]
    assert "Hope it helps" not in files[1].text and "Here is" not in files[0].text
    assert files[0].text == TEST_EDIT


@pytest.mark.parametrize(
    ("patch", "message"),
    [
        ("@@ -1 +1 @@\n-a\n+b\n" + TEST_EDIT, "belongs to no file header"),
        # the section names the test file, its ---/+++ lines name production code
        (f"diff --git a/{TEST} b/{TEST}\n" + SMUGGLED_UNIFIED, "names another file"),
        (f"diff --git a/{TEST} b/{TEST}\nrename from {TEST}\nrename to {MAIN}\n", "names another file"),
        (TEST_EDIT.replace("+    // line six\n     // line 7\n", "+    // line s"), "truncated"),
        (
            f"*** a/{TEST}\n--- b/{TEST}\n***************\n*** 6 ****\n!     // line 6\n--- 6 ----\n!     // x\n",
            "context diff",
        ),
    ],
    ids=["stray-hunk", "mismatched-header", "mismatched-rename", "truncated", "context-test"],
)
def test_unattributable_or_unusable_patches_are_not_applied(ws: Workspace, patch: str, message: str) -> None:
    with pytest.raises(PatchDoesNotApply, match=message):
        ws.commit_prediction(patch)
    assert git_text(ws.path, "status", "--porcelain") == ""


def test_symlinks_submodules_and_escaping_paths_are_refused(ws: Workspace, tmp_path: Path) -> None:
    link = "src/test/resources/escape"
    outside = tmp_path / "outside.txt"
    patch = (
        TEST_EDIT + f"diff --git a/{link} b/{link}\nnew file mode 120000\n--- /dev/null\n+++ b/{link}\n"
        f"@@ -0,0 +1 @@\n+{outside}\n\\ No newline at end of file\n"
        + "diff --git a/src/test/lib b/src/test/lib\nnew file mode 160000\n--- /dev/null\n+++ b/src/test/lib\n"
        "@@ -0,0 +1 @@\n+Subproject commit 0123456789012345678901234567890123456789\n"
        + "--- a/src/test/../main/java/p/A.java\n+++ b/src/test/../main/java/p/A.java\n@@ -1 +1 @@\n"
        "-class A { int f() { return 2; } }\n+class A {}\n"
        + "--- /dev/null\n+++ b/src/test/resources/.gitattributes\n@@ -0,0 +1 @@\n+*.java filter=evil\n"
        + "--- /dev/null\n+++ b/src/test/.git/hooks/post-commit\n@@ -0,0 +1 @@\n+#!/bin/sh\n"
    )
    applied = ws.commit_prediction(patch)
    assert [r.kind for r in applied.refused] == [FORBIDDEN] * 5
    reasons = " | ".join(r.reason for r in applied.refused)
    for expected in ("symbolic link", "submodule", "'..'", ".gitattributes", "inside .git"):
        assert expected in reasons
    assert not os.path.lexists(ws.path / link)
    assert git_text(ws.path, "ls-tree", "-r", "--name-only", "prediction").split() == sorted([MAIN, TEST])
    _main_untouched(ws)


# a hunk that only fuzz places (the changed line moved, the outermost context differs): with it in
# the patch, git refuses the whole patch and GNU patch applies it, index-line modes included
DRIFTED = (
    f"--- a/{TEST}\n+++ b/{TEST}\n@@ -1,6 +1,6 @@\n     // line three\n     // line 5\n"
    "-    // line 6\n+    // line six\n     // line 7\n     // line eight\n"
)


@pytest.mark.parametrize(
    "header",
    [
        "new file mode 120644\n",
        "new file mode 0120000\n",
        "new file mode 120000 x\n",
        "new file mode +120000\n",
        "new file mode 100644\nindex 0000000..e69de29 120000\n",
        "new file mode 040000\n",
    ],
    ids=["type-bits", "leading-zero", "trailing-word", "plus-sign", "index-line", "directory"],
)
def test_a_link_in_any_spelling_is_refused(ws: Workspace, tmp_path: Path, header: str) -> None:
    # git reads modes with strtoul and keeps the file type (120644 is a link); GNU patch takes an
    # `index` line's mode as the file's
    link = "src/test/resources/escape"
    patch = DRIFTED + (
        f"diff --git a/{link} b/{link}\n{header}--- /dev/null\n+++ b/{link}\n"
        f"@@ -0,0 +1 @@\n+{tmp_path}\n\\ No newline at end of file\n"
    )
    applied = ws.commit_prediction(patch)
    assert [(r.path, r.kind) for r in applied.refused] == [(link, FORBIDDEN)]
    assert applied.method == "fuzzy" and "line six" in (ws.read("prediction", TEST) or "")
    assert not os.path.lexists(ws.path / link)
    assert "120000" not in git_text(ws.path, "ls-tree", "-r", "prediction")


LINK = "src/test/resources/data.txt"  # a symbolic link to real.txt in V-0.5
LINKED_DIR = "src/test/resources/sources"  # a symbolic link to ../../main/java in V-0.5
SUBMODULE = "src/test/lib"
NO_EOL = "\\ No newline at end of file\n"
RETARGET = f"--- a/{LINK}\n+++ b/{LINK}\n@@ -1 +1 @@\n-real.txt\n{NO_EOL}+/etc/passwd\n{NO_EOL}"


@pytest.fixture
def linked_ws(make_history: Callable[[str], History], tmp_path: Path) -> Workspace:
    h = make_history("linked")
    (h.path / "src/test/resources").mkdir(parents=True)
    os.symlink("real.txt", h.path / LINK)
    os.symlink("../../main/java", h.path / LINKED_DIR)
    (h.path / SUBMODULE).mkdir()
    git(h.path, "update-index", "--add", "--cacheinfo", f"160000,{'1' * 40},{SUBMODULE}")
    h.commit(
        {MAIN: "class A { int f() { return 1; } }\n", TEST: TEST_V1, "src/test/resources/real.txt": "x\n"}
    )
    h.commit({MAIN: MAIN_V0})
    v1, v0 = h.commits
    row = h.instance_row(v1, v0, instance_id="linked__1", repo="me/linked", labels=["stale"])
    return Workspace.create(h.path, v1, str(row["source_patch"]), parent=tmp_path / "ws")


def _links_untouched(ws: Workspace) -> None:
    # the prediction's tree differs from V-0.5's in regular files only, and in TEST
    changed = git_text(ws.path, "diff-tree", "-r", "v-0.5", "prediction").splitlines()
    assert not [line for line in changed if "120000" in line or "160000" in line]
    assert os.readlink(ws.path / LINK) == "real.txt"
    assert "line six" in (ws.read("prediction", TEST) or "")


@pytest.mark.parametrize(
    ("patch", "refused", "reason"),
    [
        (RETARGET, LINK, "symbolic link in V-0.5"),
        (f"diff --git a/{LINK} b/{LINK}\n" + RETARGET, LINK, "symbolic link in V-0.5"),
        (
            f"diff --git a/{LINK} b/src/test/resources/copy.txt\nsimilarity index 100%\n"
            f"copy from {LINK}\ncopy to src/test/resources/copy.txt\n",
            LINK,
            "symbolic link in V-0.5",
        ),
        (
            f"diff --git a/src/test/resources/real.txt b/{LINK}\nsimilarity index 100%\n"
            f"rename from src/test/resources/real.txt\nrename to {LINK}\n",
            LINK,
            "symbolic link in V-0.5",
        ),
        (
            # the file goes, then the link takes its name
            "diff --git a/src/test/resources/real.txt b/src/test/resources/real.txt\n"
            "deleted file mode 100644\n--- a/src/test/resources/real.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n"
            f"diff --git a/{LINK} b/src/test/resources/real.txt\nsimilarity index 100%\n"
            f"rename from {LINK}\nrename to src/test/resources/real.txt\n",
            LINK,
            "symbolic link in V-0.5",
        ),
        (
            f"--- /dev/null\n+++ b/{LINKED_DIR}/p/B.java\n@@ -0,0 +1 @@\n+class B {{}}\n",
            f"{LINKED_DIR}/p/B.java",
            f"beneath a symbolic link of V-0.5 ({LINKED_DIR})",
        ),
        (
            f"--- a/{SUBMODULE}\n+++ b/{SUBMODULE}\n@@ -1 +1 @@\n-Subproject commit {'1' * 40}\n"
            f"+Subproject commit {'2' * 40}\n",
            SUBMODULE,
            "submodule (gitlink) in V-0.5",
        ),
    ],
    ids=["retarget", "retarget-git", "copy", "rename-onto", "delete-then-rename", "beneath", "submodule"],
)
def test_a_link_or_submodule_of_v05_is_never_touched(
    linked_ws: Workspace, patch: str, refused: str, reason: str
) -> None:
    # a plain hunk on a link V-0.5 already has changes its target: git keeps it as the content
    applied = linked_ws.commit_prediction(TEST_EDIT + patch)
    assert [(r.path, r.kind) for r in applied.refused] == [(refused, FORBIDDEN)]
    assert reason in applied.refused[0].reason
    _links_untouched(linked_ws)
    assert not (linked_ws.path / "src/main/java/p/B.java").exists()


@pytest.mark.parametrize(
    ("patch", "refused", "reason"),
    [
        (TEST_EDIT + RETARGET, LINK, "changes a symbolic link of V-0.5"),
        (
            TEST_EDIT + f"diff --git a/{LINK} b/src/test/resources/copy.txt\nsimilarity index 100%\n"
            f"copy from {LINK}\ncopy to src/test/resources/copy.txt\n",
            "src/test/resources/copy.txt",
            "creates a symbolic link",
        ),
        (
            TEST_EDIT + f"diff --git a/{LINK} b/src/test/resources/moved\nsimilarity index 100%\n"
            f"rename from {LINK}\nrename to src/test/resources/moved\n",
            "src/test/resources/moved",
            "changes a symbolic link of V-0.5",
        ),
    ],
    ids=["retarget", "copy", "rename"],
)
def test_the_tree_a_prediction_leaves_changes_no_link(
    linked_ws: Workspace, monkeypatch: pytest.MonkeyPatch, patch: str, refused: str, reason: str
) -> None:
    # with the decision before applying blinded, the tree after it still refuses the piece, and
    # the rest of the prediction is applied without it
    from pytest_tebench.workspace import layout

    monkeypatch.setattr(layout, "linked_path_reason", lambda path, links: "", raising=False)
    applied = linked_ws.commit_prediction(patch)
    assert [(r.path, r.kind, r.reason) for r in applied.refused] == [(refused, FORBIDDEN, reason)]
    assert applied.applied_files == (TEST,)
    _links_untouched(linked_ws)


def test_a_link_no_piece_names_makes_the_prediction_not_applied(
    linked_ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    apply = Workspace._apply_with_fallbacks

    def apply_and_plant(self: Workspace, files: list[FilePatch], details: dict[str, int]) -> str:
        os.symlink("/etc", self.path / "src/test/resources/planted")
        return apply(self, files, details)

    monkeypatch.setattr(Workspace, "_apply_with_fallbacks", apply_and_plant)
    with pytest.raises(PatchDoesNotApply, match="planted: creates a symbolic link, and no piece"):
        linked_ws.commit_prediction(TEST_EDIT)
    assert git_text(linked_ws.path, "status", "--porcelain") == ""


# the changed line moved by 4 and the outermost context line on each side differs: only GNU
# patch with fuzz 1 places it
DRIFTED = (
    f"--- a/{TEST}\n+++ b/{TEST}\n@@ -1,6 +1,6 @@\n     // line three\n     // line 5\n"
    "-    // line 6\n+    // line six\n     // line 7\n     // line eight\n"
)
RENAMED = "src/test/java/p/RenamedTest.java"


def _plant_stray(ws: Workspace) -> None:
    # what a patch tool may leave: backup and reject files, a change to a file no piece names
    (ws.path / f"{TEST}.orig").write_text(TEST_V1)
    (ws.path / f"{TEST}.rej").write_text("@@ -1 +1 @@\n")
    (ws.path / MAIN).write_text("class A { int f() { return 99; } }\n")
    (ws.path / "target/classes").mkdir(parents=True)  # build output: never the prediction's
    (ws.path / "target/classes/A.class").write_text("x")


def _keep_backups(monkeypatch: pytest.MonkeyPatch) -> None:
    # GNU patch as it runs without --no-backup-if-mismatch: a hunk placed with fuzz leaves a .orig
    import subprocess

    run = subprocess.run

    def run_keeping_backups(args: list[str], **kwargs: object) -> object:
        if args[0] == "patch":
            args = [a for a in args if a != "--no-backup-if-mismatch"]
        return run(args, **kwargs)  # type: ignore[call-overload]

    monkeypatch.setattr(subprocess, "run", run_keeping_backups)


@pytest.mark.parametrize("leave", ["planted", "real-backup"])
def test_what_the_patch_tool_writes_beyond_the_pieces_is_put_back(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch, leave: str
) -> None:
    clean = ws.commit_prediction(DRIFTED)
    assert clean.method == "fuzzy" and clean.refused == ()
    if leave == "planted":
        apply = Workspace._apply_fuzzy

        def apply_and_plant(
            self: Workspace, files: list[FilePatch], patch: bytes, details: dict[str, int]
        ) -> str:
            report = apply(self, files, patch, details)
            _plant_stray(self)
            return report

        monkeypatch.setattr(Workspace, "_apply_fuzzy", apply_and_plant)
        stray = sorted([f"{TEST}.orig", f"{TEST}.rej", MAIN])
    else:
        _keep_backups(monkeypatch)
        stray = [f"{TEST}.orig"]
    applied = ws.commit_prediction(DRIFTED)
    assert applied.method == "fuzzy"
    assert [(r.path, r.kind) for r in applied.refused] == [(path, STRAY) for path in stray]
    assert "written by the patch tool outside the files" in applied.refused[0].reason
    assert applied.applied_files == (TEST,)
    # the very commit the prediction makes without them, and the work tree is that commit
    assert applied.commit == clean.commit
    assert git_text(ws.path, "status", "--porcelain", "--untracked-files=all", "--", "src") == ""
    assert not (ws.path / f"{TEST}.orig").exists() and (ws.path / MAIN).read_text() == MAIN_V0
    assert "line six" in (ws.read("prediction", TEST) or "")


def test_a_rename_keeps_both_its_paths_when_a_stray_file_is_put_back(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    rename = (
        f"diff --git a/{TEST} b/{RENAMED}\nsimilarity index 90%\nrename from {TEST}\nrename to {RENAMED}\n"
        + DRIFTED.replace(f"+++ b/{TEST}", f"+++ b/{RENAMED}")
    )
    clean = ws.commit_prediction(rename)
    assert clean.method == "fuzzy" and clean.refused == ()
    apply = Workspace._apply_fuzzy

    def apply_and_delete(
        self: Workspace, files: list[FilePatch], patch: bytes, details: dict[str, int]
    ) -> str:
        report = apply(self, files, patch, details)
        (self.path / MAIN).unlink()  # a file V-0.5 has, deleted: it comes back
        return report

    monkeypatch.setattr(Workspace, "_apply_fuzzy", apply_and_delete)
    applied = ws.commit_prediction(rename)
    assert [(r.path, r.kind) for r in applied.refused] == [(MAIN, STRAY)]
    assert applied.commit == clean.commit
    assert ws.read("prediction", TEST) is None and "line six" in (ws.read("prediction", RENAMED) or "")
    assert ws.read("prediction", MAIN) == MAIN_V0 and (ws.path / MAIN).read_text() == MAIN_V0


def test_a_file_git_renormalises_on_its_own_is_no_stray_write(
    make_history: Callable[[str], History], tmp_path: Path
) -> None:
    # committed with CRLF before the project's .gitattributes asked for text=auto: right after a
    # checkout, git already sees it as changed (it would store it with LF), whatever is applied
    h = make_history("renormalised")
    h.commit({"src/test/resources/notes.txt": b"one\r\ntwo\r\n", MAIN: "class A {}\n", TEST: TEST_V1})
    h.commit({".gitattributes": "* text=auto\n", MAIN: MAIN_V0, TEST: TEST_V1})
    v1, v0 = h.commits
    row = h.instance_row(v1, v0, instance_id="renormalised__1", repo="me/renormalised", labels=["stale"])
    ws = Workspace.create(h.path, v1, str(row["source_patch"]), parent=tmp_path / "ws")
    ws.checkout("v-0.5")
    later = time.time() + 5
    os.utime(ws.path / "src/test/resources/notes.txt", (later, later))  # git must read it again
    applied = ws.commit_prediction(TEST_EDIT)
    assert applied.refused == () and applied.applied_files == (TEST,)


def test_modes_are_read_as_git_reads_them() -> None:
    from pytest_tebench.workspace.patches import git_mode

    assert [git_mode(m) for m in ("100644", "100664", "0100755", "120777", " 160000\t", "12x", "0")] == [
        "100644", "100644", "100755", "120000", "160000", "12x", "0",
    ]  # fmt: skip


def test_git_sections_name_the_files_git_writes_without_a_b_prefixes(ws: Workspace) -> None:
    # git and `patch -p1` drop the first component of a `diff --git` path whatever it is: without
    # a/ and b/, src/test/java/p/New.java is written as test/java/p/New.java, outside the test tree
    new = "src/test/java/p/New.java"
    patch = f"diff --git {new} {new}\nnew file mode 100644\n--- /dev/null\n+++ {new}\n@@ -0,0 +1 @@\n+x\n"
    applied = ws.commit_prediction(TEST_EDIT + patch)
    assert [(r.path, r.kind) for r in applied.refused] == [("test/java/p/New.java", OUTSIDE)]
    assert git_text(ws.path, "ls-tree", "-r", "--name-only", "prediction").split() == sorted([MAIN, TEST])
    # any first component goes, in the ---/+++ lines too; a path without one names no file for git
    (piece,) = parse_patch(f"diff --git x/{TEST} y/{TEST}\n--- x/{TEST}\n+++ y/{TEST}\n@@ -6 +6 @@\n-a\n+b\n")
    assert (piece.old_path, piece.new_path) == (TEST, TEST)
    with pytest.raises(PatchFormatError, match="no leading directory"):
        parse_patch("diff --git New.java New.java\nnew file mode 100644\n")


def test_test_platform_configuration_is_refused_unless_non_test_edits_are_allowed(ws: Workspace) -> None:
    services = "src/test/resources/META-INF/services/org.junit.jupiter.api.extension.Extension"
    patch = (
        "--- /dev/null\n+++ b/src/test/resources/junit-platform.properties\n@@ -0,0 +1 @@\n"
        "+junit.jupiter.extensions.autodetection.enabled=true\n"
        f"--- /dev/null\n+++ b/{services}\n@@ -0,0 +1 @@\n+p.SwallowFailures\n"
        "--- /dev/null\n+++ b/src/test/resources/META-INF/services/p.MyOwnSpi\n@@ -0,0 +1 @@\n+p.Impl\n"
        "--- /dev/null\n+++ b/src/test/resources/org/junit/Assert.class\n@@ -0,0 +1 @@\n+not really\n"
    )
    applied = ws.commit_prediction(patch)
    assert [(r.kind, r.path) for r in applied.refused] == [
        (TEST_PLATFORM, "src/test/resources/junit-platform.properties"),
        (TEST_PLATFORM, services),
        (TEST_PLATFORM, "src/test/resources/org/junit/Assert.class"),
    ]
    assert applied.applied_files == ("src/test/resources/META-INF/services/p.MyOwnSpi",)
    allowed = ws.commit_prediction(patch, allow_non_test_edits=True)
    assert allowed.refused == () and len(allowed.applied_files) == 4


def test_fuzz_needs_some_context_to_match(ws: Workspace) -> None:
    # the changed line moved by 4 and the outermost context line on each side differs: fuzz 1 places it
    drifted = (
        f"--- a/{TEST}\n+++ b/{TEST}\n@@ -1,6 +1,6 @@\n     // line three\n     // line 5\n"
        "-    // line 6\n+    // line six\n     // line 7\n     // line eight\n"
    )
    applied = ws.commit_prediction(drifted)
    assert applied.method == "fuzzy"
    assert applied.details["fuzz"] == 1 and applied.details["max_offset"] == 3
    assert "line six" in (ws.read("prediction", TEST) or "")
    assert applied.details["fuzz_limit"] == 1
    # context that exists nowhere: no fuzz may ignore all of it
    nowhere = TEST_EDIT.replace("// line 5", "// no such line").replace("// line 7", "// nor this one")
    with pytest.raises(PatchDoesNotApply, match="does not apply"):
        ws.commit_prediction(nowhere)


def test_fuzz_limit_keeps_one_context_line_per_hunk() -> None:
    (three,) = parse_patch(
        TEST_EDIT.replace("@@ -5,3 +5,3 @@", "@@ -4,5 +4,5 @@\n     // line 4") + "     // x\n"
    )
    assert fuzz_limit([three]) == (1, "")
    (bare,) = parse_patch(f"--- a/{TEST}\n+++ b/{TEST}\n@@ -6 +6 @@\n-    // line 6\n+    // six\n")
    assert fuzz_limit([bare])[1].endswith("cannot be placed by fuzzy matching")


def test_changed_line_numbers_unquote_paths_and_read_renames() -> None:
    diff = (
        'diff --git "a/src/caf\\303\\251.java" "b/src/caf\\303\\251.java"\n'
        "index 1..2 100644\n"
        '--- "a/src/caf\\303\\251.java"\n+++ "b/src/caf\\303\\251.java"\n'
        "@@ -2,0 +3,2 @@\n+x\n+y\n@@ -7 +8,0 @@\n-z\n"
        "diff --git a/Old.java b/New.java\nsimilarity index 90%\nrename from Old.java\nrename to New.java\n"
        "--- a/Old.java\n+++ b/New.java\n@@ -4 +4 @@\n-a\n+b\n"
    )
    assert changed_line_numbers(diff) == {
        "src/café.java": (frozenset({7}), frozenset({3, 4})),
        "New.java": (frozenset({4}), frozenset({4})),
    }


@pytest.mark.parametrize(
    ("patch", "message"),
    [
        (TEST_EDIT.replace("@@ -5,3", "@@ -" + "5" * 5000 + ",3"), "unreadable hunk header"),
        (TEST_EDIT.replace("line six", "line \udc80"), "line 7: the patch is not UTF-8"),
        (TEST_EDIT.replace(f"b/{TEST}\n", f"b/{TEST}\ud800\n"), "line 1: the patch is not UTF-8"),
    ],
    ids=["huge-number", "surrogate-content", "surrogate-path"],
)
def test_text_no_git_could_read_is_a_reported_error(ws: Workspace, patch: str, message: str) -> None:
    # it raised ValueError (int() of 5,000 digits) or UnicodeEncodeError: a crash, not a result
    with pytest.raises(PatchDoesNotApply, match=message):
        ws.commit_prediction(patch)


def test_a_file_header_without_hunks_or_paths_is_an_error() -> None:
    with pytest.raises(PatchFormatError, match="without hunks"):
        parse_patch(f"--- a/{TEST}\n+++ b/{TEST}\nsome prose\n")


def test_crlf_patches_are_read_like_lf_ones() -> None:
    crlf = TEST_EDIT.replace("\n", "\r\n")
    (piece,) = parse_patch(crlf)
    assert (piece.path, len(piece.hunks)) == (TEST, 1)
    assert piece.hunks[0].render().startswith("@@ -5,3 +5,3 @@\n")
    assert piece.hunks[0].lines[1] == "-    // line 6\r\n"  # content keeps its line ends


def test_lines_end_only_at_newlines(ws: Workspace) -> None:
    # a form feed, U+2028 or a lone CR is part of a source line for git; str.splitlines ended the
    # line there, so the rest of the hunk was cut off and dropped as prose
    patch = TEST_EDIT.replace(
        "+    // line six\n", '+    // line six\x0c\n+    String s = "\u2028\r";\n'
    ).replace("@@ -5,3 +5,3 @@", "@@ -5,3 +5,4 @@")
    applied = ws.commit_prediction(patch)
    assert applied.method == "git-apply" and applied.details["recounted_hunks"] == 0
    expected = TEST_V1.replace("    // line 6\n", '    // line six\x0c\n    String s = "\u2028\r";\n')
    assert ws.read("prediction", TEST) == expected


def test_an_empty_context_line_of_a_crlf_patch_may_lack_its_space() -> None:
    # as in an LF patch: the blank line is context, not the end of the hunk
    text = f"--- a/{TEST}\r\n+++ b/{TEST}\r\n@@ -1,3 +1,3 @@\r\n a\r\n\r\n-b\r\n+c\r\n"
    (piece,) = parse_patch(text)
    assert piece.hunks[0].lines == (" a\r\n", " \r\n", "-b\r\n", "+c\r\n")
    assert piece.recounted == 0


def test_diff_r_prefixes_are_dropped() -> None:
    text = f"diff -ruN old/{TEST} new/{TEST}\n--- old/{TEST}\t2024-01-01\n+++ new/{TEST}\t2024-01-02\n@@ -6 +6 @@\n-a\n+b\n"
    (piece,) = parse_patch(text)
    assert (piece.old_path, piece.new_path) == (TEST, TEST)
    assert piece.text.startswith(f"--- a/{TEST}\n+++ b/{TEST}\n")


def test_a_timestamp_after_a_space_is_not_part_of_the_path() -> None:
    # git drops it as it drops one after a tab; kept, it named a file no one has
    stamp = "2024-01-01 10:00:00.000000000 +0000"
    (piece,) = parse_patch(f"--- a/{TEST} {stamp}\n+++ b/{TEST} {stamp}\n@@ -6 +6 @@\n-a\n+b\n")
    assert (piece.old_path, piece.new_path) == (TEST, TEST)
    assert piece.text.startswith(f"--- a/{TEST}\n+++ b/{TEST}\n")


@pytest.mark.parametrize(
    ("path", "mode", "kind"),
    [
        ("src/test/java/p/NewTest.java", "100644", None),
        ("src/test/resources/data.json", "100644", None),
        ("src/test/resources/script.sh", "100755", None),
        (".mvn/extensions.xml", "100644", OUTSIDE),
        (".mvn/jvm.config", "100644", OUTSIDE),
        (".mvn/maven.config", "100644", OUTSIDE),
        ("pom.xml", "100644", OUTSIDE),
        ("src/main/resources/x.properties", "100644", OUTSIDE),
        ("src/test/resources/link", "120000", FORBIDDEN),
        ("src/test/sub", "160000", FORBIDDEN),
        ("src/test/.gitmodules", "100644", FORBIDDEN),
        ("src/test/.GIT/config", "100644", FORBIDDEN),
        ("/etc/src/test/x", "100644", FORBIDDEN),
        ("src\\test\\x.java", "100644", FORBIDDEN),
        ("src/test/resources/junit-platform.properties", "100644", TEST_PLATFORM),
        (
            "src/test/resources/META-INF/services/org.junit.platform.launcher.TestExecutionListener",
            "100644",
            TEST_PLATFORM,
        ),
        (
            "src/test/resources/META-INF/services/javax.annotation.processing.Processor",
            "100644",
            TEST_PLATFORM,
        ),
        ("src/test/resources/META-INF/services/org.example.Codec", "100644", None),
    ],
)
def test_what_a_prediction_may_change(path: str, mode: str, kind: str | None) -> None:
    from pytest_tebench.workspace.layout import MAVEN
    from pytest_tebench.workspace.patches import FilePatch

    piece = FilePatch(None, path, "added", "", "", new_mode=mode)
    refusal = MAVEN.refusal(piece)
    assert (refusal.kind if refusal else None) == kind


def test_gnu_patch_runs_without_the_users_environment(ws: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    # each of these changes what GNU patch writes or fetches (POSIX mode, RCS/SCCS checkouts,
    # numbered backups) or how it reports the hunks the fuzz figures are read from
    hostile = {
        "POSIXLY_CORRECT": "1", "PATCH_GET": "1", "VERSION_CONTROL": "numbered",
        "PATCH_VERSION_CONTROL": "numbered", "SIMPLE_BACKUP_SUFFIX": ".bak", "QUOTING_STYLE": "c",
        "LANGUAGE": "de", "LC_ALL": "de_DE.UTF-8",
    }  # fmt: skip
    for name, value in hostile.items():
        monkeypatch.setenv(name, value)
    import subprocess

    run = subprocess.run
    seen: list[dict[str, str]] = []

    def recording(args: list[str], **kwargs: object) -> object:
        if args[0] == "patch":
            env = kwargs.get("env")
            seen.append(dict(env if isinstance(env, dict) else os.environ))
        return run(args, **kwargs)  # type: ignore[call-overload]

    monkeypatch.setattr(subprocess, "run", recording)
    applied = ws.commit_prediction(DRIFTED)
    assert applied.method == "fuzzy" and applied.details["fuzz"] == 1
    assert seen == [{"LC_ALL": "C", "PATH": os.environ["PATH"]}]
    assert "line six" in (ws.read("prediction", TEST) or "")


def test_hunks_of_context_lines_only_change_nothing_and_block_nothing(ws: Workspace) -> None:
    # a system dropped the one line its first hunk added (the header still says +4): that hunk
    # changes nothing, and the rest of the prediction applies as written, new start lines and all
    noop = f"--- a/{TEST}\n+++ b/{TEST}\n@@ -2,3 +2,4 @@\n     // line 2\n     // line 3\n     // line 4\n"
    real = "@@ -8,3 +9,3 @@\n     // line 8\n-    // line 9\n+    // line nine\n     // line 10\n"
    main_noop = f"--- a/{MAIN}\n+++ b/{MAIN}\n@@ -1 +1 @@\n {MAIN_V0}"
    applied = ws.commit_prediction(noop + real + main_noop)
    assert (applied.method, applied.details["unchanged_hunks"]) == ("git-apply", 2)
    assert (applied.applied_files, applied.touched_non_test_files, applied.refused) == ((TEST,), (), ())
    assert ws.read("prediction", TEST) == TEST_V1.replace("// line 9", "// line nine")
    nothing = ws.commit_prediction(noop)
    assert (nothing.applied_files, nothing.details["unchanged_hunks"]) == ((), 1)
    assert ws.read("prediction", TEST) == TEST_V1


def test_a_hunk_that_goes_on_past_a_line_no_hunk_holds_is_corrupt_not_cut_short(ws: Workspace) -> None:
    # a remark inside a hunk: git says "corrupt patch", GNU patch "malformed patch"; read as the
    # end of the hunk, "five" applied and "eight", which the parser then passed over, was lost unsaid
    header = f"diff --git a/{TEST} b/{TEST}\n--- a/{TEST}\n+++ b/{TEST}\n"
    body = "     // line 4\n-    // line 5\n+    // five\n     // line 6\n"
    rest = "-    // line 8\n+    // eight\n     // line 9\n"
    with pytest.raises(PatchDoesNotApply, match=r"line 9: 'then line 7' inside the hunk of line 4"):
        ws.commit_prediction(header + "@@ -4,6 +4,6 @@\n" + body + "then line 7\n" + rest)
    # a context line that lost its space before a tab is a context line, as GNU patch reads it
    applied = ws.commit_prediction(header + "@@ -4,6 +4,6 @@\n" + body + "\t// line 7\n" + rest)
    assert applied.method == "fuzzy" and applied.applied_files == (TEST,)
    assert {"// five", "// eight"} <= set(str(ws.read("prediction", TEST)).replace("    ", "").splitlines())
    # a hunk that only announces more lines than it has still ends at the remark after it
    applied = ws.commit_prediction(header + "@@ -4,4 +4,4 @@\n" + body + "Note:\n- line 5 is five now\n")
    assert applied.applied_files == (TEST,) and applied.details["recounted_hunks"] == 1
    assert "// five" in str(ws.read("prediction", TEST)) and "eight" not in str(ws.read("prediction", TEST))
