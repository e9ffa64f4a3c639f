"""tebench export / collect: agent workspaces at V-0.5 that hold no answer, and their edits back as predictions.

The demo benchmark is exported once per module; tests that change folders work on a copy.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pytest_tebench.benchmarks.tebench.export import TASK_FILE
from pytest_tebench.cli import main
from pytest_tebench.cli import make_parser
from pytest_tebench.demo import DEMO_REPO
from pytest_tebench.demo import build_demo_mirror
from pytest_tebench.errors import InputError
from pytest_tebench.instance.datasets import demo_dataset_path
from pytest_tebench.instance.selection import keyword_matcher
from pytest_tebench.workspace.checkout import Workspace
from pytest_tebench.workspace.gitcmd import git
from pytest_tebench.workspace.gitcmd import git_text
from pytest_tebench.workspace.repos import RepositoryStore

ROWS: dict[str, dict[str, Any]] = {
    row["instance_id"]: row
    for row in (json.loads(line) for line in demo_dataset_path().read_text("utf-8").splitlines() if line)
}
_POST_IMAGE = re.compile(r"^index [0-9a-f]{40}\.\.([0-9a-f]{40})", re.MULTILINE)
_T = "src/test/java/org/tebench/textkit/"


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """``(export dir, cache dir)`` of the whole demo, exported through the CLI."""
    base = tmp_path_factory.mktemp("export")
    out, cache = base / "out", base / "cache"
    assert main(["export", "demo", "--out", str(out), "--cache-dir", str(cache)]) == 0
    return out, cache


@pytest.fixture
def fresh(exported: tuple[Path, Path], tmp_path: Path) -> Path:
    """A private copy of the export, for tests that play the agent."""
    return Path(shutil.copytree(exported[0], tmp_path / "exports", symlinks=True))


def _collect(root: Path, out: Path, model: str = "agent") -> tuple[int, dict[str, str]]:
    code = main(["collect", str(root), "--model", model, "--out", str(out)])
    lines = [json.loads(line) for line in out.read_text("utf-8").splitlines()]
    assert all(p["model_name_or_path"] == model for p in lines)
    assert [p["instance_id"] for p in lines] == sorted(p["instance_id"] for p in lines)
    return code, {p["instance_id"]: p["model_patch"] for p in lines}


def _apply(folder: Path, patch: str) -> None:
    git(folder, "apply", "--binary", "-", input=patch.encode("utf-8"))


def _objects(folder: Path) -> set[str]:
    listing = git_text(folder, "cat-file", "--batch-all-objects", "--batch-check=%(objectname)")
    return set(listing.split())


# -- export ---------------------------------------------------------------------------------
def test_export_is_v_minus_half_on_top_of_v_minus_one(exported: tuple[Path, Path]) -> None:
    out, cache = exported
    assert sorted(p.name for p in out.iterdir()) == sorted(ROWS)
    mirror = RepositoryStore(cache, embedded={DEMO_REPO: build_demo_mirror}).locate(DEMO_REPO, [])
    for instance_id, row in ROWS.items():
        folder = out / instance_id
        v1 = row["v_minus_1_commit"]
        head = git_text(folder, "rev-parse", "HEAD").strip()
        assert git_text(folder, "symbolic-ref", "HEAD").strip() == "refs/heads/main"
        assert git_text(folder, "log", "-1", "--format=%s%n%P", "HEAD").split() == ["V-0.5", v1]
        assert git_text(folder, "rev-list", "--count", "HEAD").strip() == "2"  # V-0.5 and V-1, nothing older
        assert (folder / ".git" / "shallow").read_text().split() == [v1]
        assert git_text(folder, "remote").strip() == ""
        assert not (folder / ".git" / "FETCH_HEAD").exists()
        assert git_text(folder, "status", "--porcelain").strip() == ""
        metadata = json.loads((folder / ".git" / "tebench.json").read_text())
        assert (metadata["instance_id"], metadata["v0_5_commit"]) == (instance_id, head)
        # the very V-0.5 commit the harness builds (same tree, parent, identity and date)
        workspace = Workspace.create(mirror, v1, row["source_patch"], parent=cache / "test-workspaces")
        try:
            assert workspace.rev("v-0.5") == head
        finally:
            workspace.remove()


def test_export_holds_no_part_of_the_answer(exported: tuple[Path, Path]) -> None:
    out, _ = exported
    checked = 0
    for instance_id, row in ROWS.items():
        folder = out / instance_id
        objects = _objects(folder)
        reachable = {
            line.split()[0] for line in git_text(folder, "rev-list", "--objects", "--all").splitlines()
        }
        assert objects == reachable, "unreachable (dangling) objects in the export"
        assert row["v0_commit"] not in objects
        gold_blobs = set(_POST_IMAGE.findall(row["test_patch"])) - {"0" * 40}
        assert gold_blobs, instance_id
        assert not gold_blobs & objects, f"{instance_id} holds blobs of the gold test patch"
        checked += len(gold_blobs)
        git(folder, "fsck", "--no-dangling", "--no-progress")
    assert checked >= len(ROWS)


def test_export_writes_the_task_statement_outside_the_diff(exported: tuple[Path, Path]) -> None:
    out, _ = exported
    for instance_id, row in ROWS.items():
        folder = out / instance_id
        statement = (folder / TASK_FILE).read_text("utf-8")
        assert instance_id in statement
        assert "textkit" in statement
        assert row["v0_message"].splitlines()[0] in statement
        assert "src/test" in statement
        assert "src/main" in statement
        assert git(folder, "check-ignore", "-q", TASK_FILE, check=False).returncode == 0
        assert TASK_FILE not in git_text(folder, "ls-files")


def test_export_selects_with_k_and_refuses_to_overwrite(exported: tuple[Path, Path], tmp_path: Path) -> None:
    _, cache = exported
    out = tmp_path / "out"
    (out / "textkit__69c4649c").mkdir(parents=True)
    (out / "textkit__69c4649c" / "mine.txt").write_text("keep me")
    args = ["export", "demo", "--out", str(out), "--cache-dir", str(cache)]
    assert main([*args, "-k", "69c4649c or c839cc1f"]) == 2
    assert sorted(p.name for p in out.iterdir()) == ["textkit__69c4649c"]
    assert (out / "textkit__69c4649c" / "mine.txt").read_text() == "keep me"
    # an empty folder is not in the way
    (out / "textkit__c839cc1f").mkdir()
    only_c839 = "c839 or (textkit and stale and not breaking and not missing and not 867ea90c)"
    assert main([*args, "-k", only_c839]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["textkit__69c4649c", "textkit__c839cc1f"]
    assert main([*args, "-k", "no-such-instance"]) == 2


def test_export_reports_broken_instances_and_leaves_nothing_behind(
    exported: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, cache = exported
    good = ROWS["textkit__6f3adb06"]
    broken = {
        **ROWS["textkit__c839cc1f"],
        "source_patch": "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n",
    }
    invalid = {k: v for k, v in ROWS["textkit__dcc8e655"].items() if k != "test_patch"}
    dataset = tmp_path / "mixed.jsonl"
    dataset.write_text("".join(json.dumps(r) + "\n" for r in (good, broken, invalid)), "utf-8")
    out = tmp_path / "out"
    assert main(["export", str(dataset), "--out", str(out), "--cache-dir", str(cache)]) == 1
    assert sorted(p.name for p in out.iterdir()) == ["textkit__6f3adb06"]
    err = capsys.readouterr().err
    assert "textkit__c839cc1f: source_patch does not apply" in err
    assert "textkit__dcc8e655" in err
    assert "'test_patch' is missing" in err


def test_export_finds_repositories_with_repos(exported: tuple[Path, Path], tmp_path: Path) -> None:
    row = {**ROWS["textkit__d6ab324c"], "repo": "acme/textkit"}  # not the embedded demo slug
    dataset = tmp_path / "acme.jsonl"
    dataset.write_text(json.dumps(row) + "\n", "utf-8")
    mirrors = tmp_path / "mirrors"
    build_demo_mirror(mirrors / "textkit.git")
    args = ["export", str(dataset), "--cache-dir", str(tmp_path / "cache"), "--offline"]
    assert main([*args, "--out", str(tmp_path / "without")]) == 1  # offline, and nowhere to be found
    assert not (tmp_path / "without" / "textkit__d6ab324c").exists()
    assert main([*args, "--out", str(tmp_path / "with"), "--repos", str(mirrors)]) == 0
    head = git_text(tmp_path / "with" / "textkit__d6ab324c", "rev-parse", "HEAD").strip()
    assert head == git_text(exported[0] / "textkit__d6ab324c", "rev-parse", "HEAD").strip()
    assert git_text(mirrors / "textkit.git", "for-each-ref").count("\n") == 1  # the user's clone is only read


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("", True),
        ("TEXTKIT__69c", True),
        ("breaking and not stale", True),
        ("stale or missing", False),
        ("not (breaking or stale)", False),
        ("(other or 69c4) and textkit", True),
    ],
)
def test_keyword_matcher(expression: str, expected: bool) -> None:
    assert keyword_matcher(expression)(["textkit__69c4649c", "textkit", "breaking"]) is expected


@pytest.mark.parametrize("expression", ["and", "a or", "(a", "a)", "a b", "not"])
def test_keyword_matcher_rejects_malformed_expressions(expression: str) -> None:
    with pytest.raises(InputError, match="-k"):
        keyword_matcher(expression)


def test_cli_keeps_build_and_image() -> None:
    parser = make_parser()
    assert parser.parse_args(["build", "repo", "--repo", "o/n", "--out", "x.jsonl"]).command == "build"
    assert parser.parse_args(["image", "info"]).command == "image"


# -- collect --------------------------------------------------------------------------------
def test_gold_applied_by_hand_collects_and_scores_like_gold(
    exported: tuple[Path, Path], fresh: Path, tmp_path: Path
) -> None:
    _, cache = exported
    for instance_id, row in ROWS.items():
        _apply(fresh / instance_id, row["test_patch"])  # not committed: new test files stay untracked
    untracked = git_text(fresh / "textkit__6f3adb06", "status", "--porcelain")
    assert f"?? {_T}StringUtilsUnicodeTest.java" in untracked
    index_before = {i: (fresh / i / ".git" / "index").read_bytes() for i in ROWS}

    run = tmp_path / "run.jsonl"
    code, patches = _collect(fresh, run, "gold-by-hand")
    assert code == 0
    assert sorted(patches) == sorted(ROWS)
    for instance_id, patch in patches.items():
        assert TASK_FILE not in patch
        assert patch == ROWS[instance_id]["test_patch"]
        assert (fresh / instance_id / ".git" / "index").read_bytes() == index_before[instance_id]

    report = tmp_path / "report.json"
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS"}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", f"--tebench-predictions={run}",
         "--tebench-skip-update", f"--tebench-cache-dir={cache}", f"--tebench-report={report}"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    results = json.loads(report.read_text())["results"]
    assert sorted(r["instance_id"] for r in results) == sorted(ROWS)
    for record in results:
        assert record["status"] == "evaluated", record
        assert record["identification"]["f1"] == 1.0, record


def test_collect_counts_what_the_agent_committed(fresh: Path, tmp_path: Path) -> None:
    instance_id = "textkit__389d5077"
    folder = fresh / instance_id
    v05 = git_text(folder, "rev-parse", "HEAD").strip()
    _apply(folder, ROWS[instance_id]["test_patch"])
    git(folder, "add", "--all")
    git(folder, "commit", "--quiet", "-m", "agent: update tests")
    assert git_text(folder, "status", "--porcelain").strip() == ""
    code, patches = _collect(folder, tmp_path / "run.jsonl")  # DIR may be one exported folder
    assert code == 0
    assert patches == {instance_id: ROWS[instance_id]["test_patch"]}
    assert git_text(folder, "rev-parse", "HEAD~1").strip() == v05


def test_collect_sees_deletions_renames_binaries_and_non_utf8(
    exported: tuple[Path, Path], fresh: Path, tmp_path: Path
) -> None:
    instance_id = "textkit__18b8d221"
    folder = fresh / instance_id
    _apply(folder, ROWS[instance_id]["test_patch"])
    git(folder, "add", "--all")
    git(folder, "commit", "--quiet", "-m", "agent: part one")
    # then uncommitted work of every kind, some of it staged in the agent's own index
    (folder / _T / "WordWrapTest.java").unlink()
    (folder / _T / "SlugifierTest.java").rename(folder / _T / "SlugTest.java")
    with (folder / _T / "PaddingTest.java").open("a") as stream:
        stream.write("// reviewed\n")
    git(folder, "add", f"{_T}PaddingTest.java")
    resources = folder / "src/test/resources"
    resources.mkdir(parents=True)
    (resources / "blob.bin").write_bytes(bytes(range(256)))
    (resources / "latin1 [x].txt").write_bytes(b"caf\xe9\n")
    # a project's own attributes that name a text diff driver outrank the harness's -diff
    (folder / ".gitattributes").write_text("*.txt text diff=plain\n", encoding="utf-8")
    (folder / "target" / "classes").mkdir(parents=True)
    (folder / "target" / "classes" / "A.class").write_bytes(b"\xca\xfe\xba\xbe")
    head, index = git_text(folder, "rev-parse", "HEAD"), (folder / ".git" / "index").read_bytes()

    code, patches = _collect(fresh, tmp_path / "run.jsonl")
    assert code == 0
    patch = patches[instance_id]
    assert "deleted file mode 100644\nindex " in patch
    assert f"rename from {_T}SlugifierTest.java\nrename to {_T}SlugTest.java" in patch
    assert patch.count("GIT binary patch") == 2  # blob.bin and the Latin-1 text file
    assert "target/" not in patch
    assert TASK_FILE not in patch
    assert (git_text(folder, "rev-parse", "HEAD"), (folder / ".git" / "index").read_bytes()) == (head, index)

    # the patch rebuilds the agent's tree exactly on a pristine V-0.5
    pristine = Path(shutil.copytree(exported[0] / instance_id, tmp_path / "pristine", symlinks=True))
    _apply(pristine, patch)
    shutil.rmtree(folder / "target")
    trees = []
    for repo in (folder, pristine):
        git(repo, "add", "--all")
        trees.append(git_text(repo, "write-tree").strip())
    assert trees[0] == trees[1]


def test_collect_skips_folders_that_are_not_exports(
    fresh: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (fresh / "notes").mkdir()
    git(fresh, "init", "--quiet", "plain-repo")
    shutil.copytree(fresh / "textkit__c839cc1f", fresh / "zz-copy", symlinks=True)
    shutil.copytree(fresh / "textkit__6f3adb06", fresh / "broken", symlinks=True)
    (fresh / "broken" / ".git" / "tebench.json").write_text("{not json")
    (fresh / ".hidden").mkdir()
    (fresh / "README.txt").write_text("not a folder")

    code, patches = _collect(fresh, tmp_path / "run.jsonl")
    assert code == 1
    assert sorted(patches) == sorted(ROWS)
    err = capsys.readouterr().err
    assert "4 folder(s) skipped" in err
    assert f"{fresh / 'notes'}: not a git repository" in err
    assert f"{fresh / 'plain-repo'}: no .git/tebench.json" in err
    assert f"{fresh / 'broken'}: unreadable .git/tebench.json" in err
    assert f"{fresh / 'zz-copy'}: instance textkit__c839cc1f was already collected" in err
    assert ".hidden" not in err
