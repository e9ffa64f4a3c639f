"""Tests for the replay of the embedded demo history (pytest_tebench.demo)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from pytest_tebench.demo import DEMO_BRANCH
from pytest_tebench.demo import DEMO_COMMITS
from pytest_tebench.demo import DEMO_HISTORY
from pytest_tebench.demo import DEMO_PROJECT
from pytest_tebench.demo import DEMO_REPO
from pytest_tebench.demo import HISTORY_DIR
from pytest_tebench.demo import build_demo_mirror
from pytest_tebench.demo import history_files
from pytest_tebench.errors import HarnessError

TEST_DIR = "src/test/java/org/tebench/textkit/"


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True)
    return done.stdout.strip()


@pytest.fixture(scope="module")
def mirror(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_demo_mirror(tmp_path_factory.mktemp("demo") / "textkit.git")


def test_constants() -> None:
    assert DEMO_REPO == "pytest-tebench/textkit"
    assert DEMO_PROJECT == "textkit"
    assert len(DEMO_COMMITS) == len(set(DEMO_COMMITS)) == 14
    assert all(len(sha) == 40 for sha in DEMO_COMMITS)


def test_history_files_are_the_numbered_series() -> None:
    files = history_files()
    assert [f.parent for f in files] == [HISTORY_DIR] * len(DEMO_COMMITS)
    assert [f.name[:5] for f in files] == [f"{n:04d}-" for n in range(1, len(DEMO_COMMITS) + 1)]


def test_shipped_patches_have_no_carriage_returns() -> None:
    # The replay drops CRs to survive autocrlf checkouts; that is only lossless while textkit has none.
    for patch in history_files():
        assert b"\r" not in patch.read_bytes(), patch.name


def test_mirror_is_bare_with_expected_history(mirror: Path) -> None:
    assert git(mirror, "rev-parse", "--is-bare-repository") == "true"
    assert git(mirror, "symbolic-ref", "HEAD") == f"refs/heads/{DEMO_BRANCH}"
    assert git(mirror, "rev-parse", DEMO_BRANCH) == DEMO_COMMITS[-1]
    assert git(mirror, "log", "--reverse", "--format=%H", DEMO_BRANCH).split() == list(DEMO_COMMITS)
    assert git(mirror, "for-each-ref", "--format=%(refname)") == f"refs/heads/{DEMO_BRANCH}"
    assert not (mirror / "index").exists()
    assert not list(mirror.glob("*.java"))


def test_replay_is_deterministic(tmp_path: Path, mirror: Path) -> None:
    again = build_demo_mirror(tmp_path / "a" / "b" / "again.git")
    assert git(
        again, "log", "--format=%H %T %an <%ae> %ad %cn <%ce> %cd %s", "--date=raw", DEMO_BRANCH
    ) == git(mirror, "log", "--format=%H %T %an <%ae> %ad %cn <%ce> %cd %s", "--date=raw", DEMO_BRANCH)


def test_user_config_and_environment_do_not_leak(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    hooks = tmp_path / "hooks"
    hooks.mkdir(parents=True)
    failing_hook = hooks / "applypatch-msg"
    failing_hook.write_text("#!/bin/sh\nexit 1\n")
    failing_hook.chmod(0o755)
    home.mkdir()
    (home / ".gitconfig").write_text(
        "[core]\n\tautocrlf = true\n\thooksPath = " + str(hooks) + "\n"
        "[user]\n\tname = Someone Else\n\temail = else@example.invalid\n"
        "[commit]\n\tgpgSign = true\n[am]\n\tthreeWay = true\n\tmessageId = true\n\tsignoff = true\n"
    )
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(home / ".gitconfig"))
    monkeypatch.setenv("GIT_AUTHOR_NAME", "Intruder")
    monkeypatch.setenv("GIT_COMMITTER_NAME", "Intruder")
    monkeypatch.setenv("GIT_COMMITTER_DATE", "2001-01-01T00:00:00+0000")
    monkeypatch.setenv("GIT_DIR", str(tmp_path / "nowhere.git"))
    monkeypatch.setenv("TZ", "Asia/Kolkata")
    result = build_demo_mirror(tmp_path / "hostile.git")
    monkeypatch.delenv("GIT_DIR")
    assert git(result, "rev-parse", DEMO_BRANCH) == DEMO_COMMITS[-1]


def test_crlf_checkout_of_the_series_still_replays_identically(tmp_path: Path) -> None:
    crlf = []
    for patch in history_files():
        copy = tmp_path / "series" / patch.name
        copy.parent.mkdir(exist_ok=True)
        copy.write_bytes(patch.read_bytes().replace(b"\n", b"\r\n"))
        crlf.append(copy)
    result = build_demo_mirror(tmp_path / "crlf.git", patches=crlf)
    assert git(result, "rev-parse", DEMO_BRANCH) == DEMO_COMMITS[-1]


def test_refuses_non_empty_destination(tmp_path: Path) -> None:
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "file").write_text("x")
    with pytest.raises(HarnessError, match="not an empty directory"):
        build_demo_mirror(tmp_path / "taken")
    assert (tmp_path / "taken" / "file").read_text() == "x"


def test_accepts_existing_empty_destination(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    assert git(build_demo_mirror(tmp_path / "empty"), "rev-parse", DEMO_BRANCH) == DEMO_COMMITS[-1]


def test_broken_series_leaves_nothing_behind(tmp_path: Path) -> None:
    broken = tmp_path / "0001-broken.patch"
    broken.write_bytes(history_files()[1].read_bytes())  # a child commit cannot apply to an empty repository
    with pytest.raises(HarnessError, match="git am"):
        build_demo_mirror(tmp_path / "broken.git", patches=[broken])
    assert not (tmp_path / "broken.git").exists()


def test_commit_metadata_matches_design(mirror: Path) -> None:
    lines = git(mirror, "log", "--reverse", "--format=%H|%an <%ae>|%cn <%ce>|%aI|%cI|%s", DEMO_BRANCH)
    rows = [line.split("|") for line in lines.splitlines()]
    assert [row[0] for row in rows] == [c.sha for c in DEMO_HISTORY]
    assert [row[5] for row in rows] == [c.subject for c in DEMO_HISTORY]
    for day, row in enumerate(rows, start=1):
        assert row[1] == row[2] == "TEBench Demo <demo@tebench.invalid>"
        assert row[3] == row[4] == f"2024-01-{day:02d}T10:00:00+00:00"


def test_roles_and_labels_are_consistent() -> None:
    roles = [c.role for c in DEMO_HISTORY]
    assert roles == ["root"] + ["instance"] * 9 + ["rejected"] * 4
    labels = [c.labels for c in DEMO_HISTORY if c.role == "instance"]
    assert {"breaking"} in labels and {"stale"} in labels and {"missing"} in labels
    assert {"breaking", "stale", "missing"} in labels
    for commit in DEMO_HISTORY:
        if commit.role == "instance":
            assert commit.gold_items and commit.labels
            assert ("missing" in commit.labels) == any(i.endswith("::<added>") for i in commit.gold_items)
        else:
            assert commit.reject_reason and not commit.gold_items
    assert [c.gold_covers_change for c in DEMO_HISTORY].count(False) == 1


def test_instances_touch_disjoint_test_methods() -> None:
    methods = [
        item.rsplit("#", 1)[1]
        for c in DEMO_HISTORY
        for item in c.gold_items
        if not item.endswith("::<added>")
    ]
    # Names are unique across the whole demo, so no keying scheme (qualified or not) can merge two instances.
    assert len(methods) == len(set(methods))


def test_instance_diffs_have_the_designed_shape(mirror: Path) -> None:
    for commit in DEMO_HISTORY:
        if commit.role != "instance":
            continue
        status = git(mirror, "diff", "-M", "--name-status", f"{commit.sha}^", commit.sha).splitlines()
        paths = [line.split("\t")[-1] for line in status]
        assert any(p.startswith("src/main/java/") for p in paths), commit.subject
        assert any(p.startswith("src/test/java/") for p in paths), commit.subject
        assert len(paths) <= 20


def test_renamed_test_file_is_detected_as_rename(mirror: Path) -> None:
    sha = DEMO_COMMITS[1]
    status = git(mirror, "diff", "-M", "--name-status", f"{sha}^", sha).splitlines()
    renames = [line.split("\t") for line in status if line.startswith("R")]
    assert [r[1:] for r in renames] == [[f"{TEST_DIR}WrapTest.java", f"{TEST_DIR}WordWrapTest.java"]]
    assert int(renames[0][0][1:]) >= 60


def test_binary_resource_changes_in_the_phonetic_instance(mirror: Path) -> None:
    sha = DEMO_COMMITS[6]
    numstat = git(mirror, "diff", "--numstat", f"{sha}^", sha).splitlines()
    assert "-\t-\tsrc/main/resources/org/tebench/textkit/codes.bin" in numstat
    blob = subprocess.run(
        [
            "git",
            "-C",
            str(mirror),
            "cat-file",
            "blob",
            f"{sha}:src/main/resources/org/tebench/textkit/codes.bin",
        ],
        capture_output=True,
        check=True,
    ).stdout
    assert blob[:3] == b"TK\x02" and len(blob) == 29
