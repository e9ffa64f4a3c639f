"""Workspaces on throwaway git histories: V-0.5, gold, and every way a prediction can apply or not."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from pytest_tebench.errors import HarnessError
from pytest_tebench.workspace.checkout import BadInstance
from pytest_tebench.workspace.checkout import PatchDoesNotApply
from pytest_tebench.workspace.checkout import Workspace
from pytest_tebench.workspace.gitcmd import GitError
from pytest_tebench.workspace.gitcmd import git_text
from pytest_tebench.workspace.removal import wait_for_removals
from pytest_tebench.workspace.repos import RepositoryStore
from pytest_tebench.workspace.repos import RepositoryUnavailable

from conftest import History

MAIN = "src/main/java/p/A.java"
TEST = "src/test/java/p/ATest.java"
TEST_V1 = "class ATest {\n    @Test void one() {\n        check(1);\n    }\n\n    @Test void two() {\n        check(2);\n    }\n}\n"


@pytest.fixture
def history(make_history: Callable[[str], History]) -> History:
    h = make_history("proj")
    h.commit(
        {
            MAIN: "class A { int f() { return 1; } }\n",
            TEST: TEST_V1,
            "src/main/resources/blob.bin": b"\x00\x01",
        }
    )
    h.commit(
        {
            MAIN: "class A { int f() { return 2; } }\n",
            TEST: TEST_V1.replace("check(1)", "check(10)"),
            "src/main/resources/blob.bin": b"\x00\x02\xff",
        }
    )
    return h


def _workspace(history: History, tmp_path: Path) -> tuple[Workspace, dict[str, object]]:
    v1, v0 = history.commits
    row = history.instance_row(v1, v0, instance_id="proj__1", repo="me/proj", labels=["stale"])
    ws = Workspace.create(history.path, v1, str(row["source_patch"]), parent=tmp_path / "ws")
    return ws, row


def _diff(patch_from: str, patch_to: str) -> str:
    import difflib

    lines = difflib.unified_diff(
        patch_from.splitlines(keepends=True), patch_to.splitlines(keepends=True), f"a/{TEST}", f"b/{TEST}"
    )
    return f"diff --git a/{TEST} b/{TEST}\n" + "".join(lines)


def test_v05_has_source_changes_binary_included_and_old_tests(history: History, tmp_path: Path) -> None:
    ws, _ = _workspace(history, tmp_path)
    assert (ws.path / MAIN).read_text() == "class A { int f() { return 2; } }\n"
    assert (ws.path / "src/main/resources/blob.bin").read_bytes() == b"\x00\x02\xff"
    assert (ws.path / TEST).read_text() == TEST_V1
    # the user's clone is untouched and shares no working tree with the workspace
    assert git_text(history.path, "status", "--porcelain") == ""
    assert ws.path != history.path


def test_a_relative_parent_folder_holds_the_workspace(
    history: History, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    v1, v0 = history.commits
    row = history.instance_row(v1, v0, instance_id="proj__1", repo="me/proj", labels=["stale"])
    monkeypatch.chdir(tmp_path)
    ws = Workspace.create(history.path, v1, str(row["source_patch"]), parent=Path("ws"))
    assert ws.path.parent == tmp_path / "ws"
    assert (ws.path / MAIN).read_text() == "class A { int f() { return 2; } }\n"


def test_v05_commit_hash_is_reproducible(history: History, tmp_path: Path) -> None:
    first, _ = _workspace(history, tmp_path)
    second, _ = _workspace(history, tmp_path)
    assert first.path != second.path
    assert first.rev("v-0.5") == second.rev("v-0.5")


def test_gold_and_exact_prediction(history: History, tmp_path: Path) -> None:
    ws, row = _workspace(history, tmp_path)
    ws.commit_gold(str(row["test_patch"]))
    applied = ws.commit_prediction(str(row["test_patch"]))
    assert applied.method == "git-apply"
    assert ws.read("prediction", TEST) == ws.read("gold", TEST) == TEST_V1.replace("check(1)", "check(10)")


def test_prediction_with_wrong_hunk_counts_needs_fuzzy(history: History, tmp_path: Path) -> None:
    ws, _ = _workspace(history, tmp_path)
    good = _diff(TEST_V1, TEST_V1.replace("check(2)", "check(20)"))
    broken = good.replace("@@ -4,6 +4,6 @@", "@@ -4,9 +4,9 @@")
    assert broken != good
    applied = ws.commit_prediction(broken)
    # the parser recounts the hunk, so git applies it exactly, and the record says so
    assert (applied.method, applied.details["recounted_hunks"]) == ("git-apply", 1)
    assert "check(20)" in (ws.read("prediction", TEST) or "")


def test_prediction_made_on_an_older_file_version_applies_three_way(
    make_history: Callable[[str], History], tmp_path: Path
) -> None:
    h = make_history("three")
    old_test = TEST_V1
    h.commit({MAIN: "class A {}\n", TEST: old_test})
    newer_test = old_test.replace("    }\n\n    @Test void two", "    }\n    // between\n    @Test void two")
    v1 = h.commit({TEST: newer_test})
    v0 = h.commit({MAIN: "class A { }\n"})
    row = h.instance_row(v1, v0, instance_id="three__1", repo="me/three", labels=["stale"])
    ws = Workspace.create(h.path, v1, str(row["source_patch"]), parent=tmp_path / "ws")
    # the model diffed against the older blob (full index, as `git diff` would write it)
    older_blob = git_text(h.path, "rev-parse", f"{h.commits[0]}:{TEST}").strip()
    patch = _diff(old_test, old_test.replace("check(1)", "check(100)"))
    patch = patch.replace(f"--- a/{TEST}", f"index {older_blob}..{'0' * 40} 100644\n--- a/{TEST}", 1)
    applied = ws.commit_prediction(patch)
    assert applied.method == "3way"
    assert ws.read("prediction", TEST) == newer_test.replace("check(1)", "check(100)")


def test_non_test_hunks_are_reported_not_applied(history: History, tmp_path: Path) -> None:
    ws, row = _workspace(history, tmp_path)
    main_edit = (
        f"diff --git a/{MAIN} b/{MAIN}\n--- a/{MAIN}\n+++ b/{MAIN}\n@@ -1 +1 @@\n"
        "-class A { int f() { return 2; } }\n+class A { int f() { return 99; } }\n"
        "diff --git a/pom.xml b/pom.xml\nnew file mode 100644\n--- /dev/null\n+++ b/pom.xml\n@@ -0,0 +1 @@\n+<project/>\n"
    )
    applied = ws.commit_prediction(str(row["test_patch"]) + main_edit)
    assert applied.touched_non_test_files == ("pom.xml", MAIN)
    assert ws.read("prediction", MAIN) == "class A { int f() { return 2; } }\n"
    assert ws.read("prediction", "pom.xml") is None
    allowed = ws.commit_prediction(str(row["test_patch"]) + main_edit, allow_non_test_edits=True)
    assert allowed.touched_non_test_files == ("pom.xml", MAIN)
    assert ws.read("prediction", MAIN) == "class A { int f() { return 99; } }\n"


def test_prediction_touching_only_production_code_applies_nothing(history: History, tmp_path: Path) -> None:
    ws, _ = _workspace(history, tmp_path)
    edit = f"--- a/{MAIN}\n+++ b/{MAIN}\n@@ -1 +1 @@\n-class A {{ int f() {{ return 2; }} }}\n+class A {{}}\n"
    applied = ws.commit_prediction(edit)
    assert (applied.method, applied.touched_non_test_files) == ("none", (MAIN,))
    assert ws.rev("prediction") != ws.rev("v-0.5")  # an empty commit, same tree
    assert git_text(ws.path, "diff", "--name-only", "v-0.5", "prediction") == ""


@pytest.mark.parametrize(
    ("patch", "message"),
    [
        ("I could not find the bug, sorry.", "no file header"),
        (
            f"diff --git a/{TEST} b/{TEST}\n--- a/{TEST}\n+++ b/{TEST}\n@@ -1,2 +1,2 @@\n-no such line\n+x\n context\n",
            "does not apply",
        ),
        (
            "diff --git a/src/test/resources/x.png b/src/test/resources/x.png\nnew file mode 100644\n"
            "Binary files /dev/null and b/src/test/resources/x.png differ\n",
            "binary hunk without data",
        ),
    ],
)
def test_predictions_that_do_not_apply(history: History, tmp_path: Path, patch: str, message: str) -> None:
    ws, _ = _workspace(history, tmp_path)
    with pytest.raises(PatchDoesNotApply, match=message):
        ws.commit_prediction(patch)
    assert git_text(ws.path, "status", "--porcelain") == ""  # nothing half-applied is left


def test_a_source_patch_that_does_not_apply_is_a_bad_instance(history: History, tmp_path: Path) -> None:
    v1, _ = history.commits
    bad = f"diff --git a/{MAIN} b/{MAIN}\n--- a/{MAIN}\n+++ b/{MAIN}\n@@ -1 +1 @@\n-nothing like this\n+x\n"
    with pytest.raises(BadInstance, match="source_patch does not apply"):
        Workspace.create(history.path, v1, bad, parent=tmp_path / "ws")
    wait_for_removals()
    assert list((tmp_path / "ws").iterdir()) == []  # no half-made workspace left behind


def test_repository_store_finds_local_clones_and_reports_missing_commits(
    history: History, tmp_path: Path
) -> None:
    store = RepositoryStore(tmp_path / "cache", local_dirs=[history.path.parent], allow_network=False)
    # layout DIR/name: tmp/repos/proj for repo "someone/proj"
    assert store.locate("someone/proj", history.commits) == history.path
    with pytest.raises(RepositoryUnavailable, match="lacks commit"):
        store.locate("someone/proj", ["0" * 40])
    with pytest.raises(RepositoryUnavailable, match="network clones are disabled") as missing:
        store.locate("someone/elsewhere", history.commits)
    # the error says what was looked for, and where
    assert (
        "looked for someone/elsewhere, someone/elsewhere.git, someone+elsewhere, someone+elsewhere.git, "
        "someone__elsewhere, someone__elsewhere.git, elsewhere, elsewhere.git, someone+elsewhere/repo "
        f"(none a git directory) in --tebench-repos {history.path.parent}"
    ) in str(missing.value)
    nowhere = RepositoryStore(tmp_path / "cache", allow_network=False)
    with pytest.raises(RepositoryUnavailable, match="no --tebench-repos directory was given"):
        nowhere.locate("someone/proj", history.commits)


def test_repository_store_finds_the_layout_fetch_writes(history: History, tmp_path: Path) -> None:
    # fetch writes DIR/owner+name/repo, a bare git dir; a sibling folder of another layout is skipped
    fetched = tmp_path / "mirror" / "someone+proj" / "repo"
    subprocess.run(["git", "clone", "--quiet", "--bare", str(history.path), str(fetched)], check=True)
    (tmp_path / "mirror" / "someone+proj" / "notes").mkdir()
    store = RepositoryStore(tmp_path / "cache", local_dirs=[tmp_path / "mirror"], allow_network=False)
    assert store.locate("someone/proj", history.commits) == fetched


def test_repository_store_mirrors_a_clone_url_once(history: History, tmp_path: Path) -> None:
    store = RepositoryStore(tmp_path / "cache", url_template=str(history.path.parent) + "/{repo}")
    first = store.locate("proj", history.commits[:1])
    assert first.name.endswith(".git") and first.is_relative_to(tmp_path / "cache")
    later = history.commit({MAIN: "class A { int f() { return 3; } }\n"})
    assert store.locate("proj", [later]) == first  # fetched into the same mirror


def test_a_clone_that_lacks_a_file_s_content_is_a_harness_error_not_a_missing_file(tmp_path: Path) -> None:
    # a snapshot without its largest files: git checks out the rest and exits 0
    history = History(tmp_path / "repo")
    sha = history.commit({"big.bin": b"\0large\0", "a.py": "x = 1\n"})
    blob = git_text(history.path, "rev-parse", f"{sha}:big.bin").strip()
    (history.path / ".git" / "objects" / blob[:2] / blob[2:]).unlink()
    with pytest.raises(HarnessError, match=r"lacks the content of big\.bin at .*incomplete clone"):
        Workspace.create(history.path, sha, "", parent=tmp_path / "ws")
    wait_for_removals()
    assert not any((tmp_path / "ws").iterdir())  # nothing left behind


def test_a_removed_tree_leaves_its_path_at_once_and_is_deleted_in_the_background(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import shutil
    import threading

    from pytest_tebench.workspace import removal

    released = threading.Event()
    rmtree = shutil.rmtree

    def slow_rmtree(path: Path, ignore_errors: bool = False) -> None:
        released.wait(timeout=30)  # the deletion waits until the test has looked
        rmtree(path, ignore_errors=ignore_errors)

    monkeypatch.setattr(removal.shutil, "rmtree", slow_rmtree)
    workspaces = tmp_path / "workspaces"
    tree = workspaces / "ws-one"
    (tree / "target" / "classes").mkdir(parents=True)
    (tree / "target" / "classes" / "A.class").write_bytes(b"\xca\xfe")
    Workspace(tree).remove()
    # back before the deletion ran: the path is free, the tree waits aside
    assert not tree.exists()
    [aside] = workspaces.iterdir()
    assert aside.name.startswith(removal.REMOVING_PREFIX + "ws-one-")
    assert (aside / "tree" / "target" / "classes" / "A.class").is_file()
    released.set()
    removal.wait_for_removals()
    assert list(workspaces.iterdir()) == []
    removal.wait_for_removals()  # nothing left to wait for


def test_a_tree_that_cannot_be_moved_aside_is_deleted_in_place(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pytest_tebench.workspace import removal

    def refuse(source: object, target: object) -> None:
        raise OSError(18, "Invalid cross-device link")

    tree = tmp_path / "ws-two"
    (tree / "src").mkdir(parents=True)
    monkeypatch.setattr(removal.os, "rename", refuse)
    removal.remove_tree(tree)
    assert not tree.exists()
    removal.wait_for_removals()
    assert list(tmp_path.iterdir()) == []


def test_git_in_a_directory_that_is_not_there_says_so_not_that_git_is_missing(tmp_path: Path) -> None:
    """subprocess reports a missing working directory as it reports a missing program."""
    with pytest.raises(GitError, match=r"^git log: no directory .*/gone$"):
        git_text(tmp_path / "gone", "log", "-1")
    assert git_text(tmp_path, "--version").startswith("git version")
