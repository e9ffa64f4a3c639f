"""A SWE-bench prediction's test-side changes are set aside before grading (:mod:`set_aside`):
restored or removed on a real git tree, in build mode (Python) and official mode (the shell lines
run by bash), gold's files and pytest's ``src/`` kept, product files untouched."""

from __future__ import annotations

import dataclasses
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from pytest_tebench.benchmarks.swebench import evaluation
from pytest_tebench.benchmarks.swebench import official
from pytest_tebench.benchmarks.swebench import official_images
from pytest_tebench.benchmarks.swebench import official_refusal
from pytest_tebench.benchmarks.swebench import set_aside
from pytest_tebench.benchmarks.swebench.adapter import SwebenchAdapter
from pytest_tebench.benchmarks.swebench.instances import SwebenchInstance
from pytest_tebench.demo import swebench as demo
from pytest_tebench.instance.datasets import RawRecord
from pytest_tebench.integrity import paths
from pytest_tebench.workspace.gitcmd import git

BASE = {
    ".gitignore": "*.log\nbuild/\n",
    "pkg/core.py": "def f():\n    return 1\n",
    "pkg/testing.py": "def check(x):\n    return x\n",
    "pkg/tests/__init__.py": "def assert_same(a, b):\n    assert a == b\n",
    "tests/test_core.py": "from pkg.core import f\n\n\ndef test_f():\n    assert f() == 2\n",
    "tests/helpers.py": "def helper():\n    return 1\n",
    "tests/data.txt": "1 2 3\n",
    "src/_pytest/python_api.py": "def approx(x):\n    return x\n",
}
#: The gold fix: the product file, and one test-named product file (as sympy's randtest.py).
GOLD = (
    "diff --git a/pkg/core.py b/pkg/core.py\n--- a/pkg/core.py\n+++ b/pkg/core.py\n"
    "@@ -1,2 +1,2 @@\n def f():\n-    return 1\n+    return 2\n"
    "diff --git a/pkg/testing.py b/pkg/testing.py\n--- a/pkg/testing.py\n+++ b/pkg/testing.py\n"
    "@@ -1,2 +1,2 @@\n def check(x):\n-    return x\n+    return x + 0\n"
)
#: What every prediction below sets aside (sorted): changed, deleted, renamed (both sides), new,
#: new in new folders, ignored by .gitignore (a file and a folder's file).
SET_ASIDE = [
    "pkg/tests/__init__.py",
    "tests/build/helper.py",
    "tests/data.txt",
    "tests/helpers.py",
    "tests/helpers2.py",
    "tests/os.py",
    "tests/result.log",
    "tests/shadow/pkg/__init__.py",
]


def _instance(base_commit: str, repo: str = "someone/pkg") -> SwebenchInstance:
    return SwebenchInstance(
        instance_id="someone__pkg-1",
        repo=repo,
        version="1.0",
        base_commit=base_commit,
        environment_setup_commit=base_commit,
        patch=GOLD,
        test_patch="",
        fail_to_pass=("tests/test_core.py::test_f",),
        pass_to_pass=(),
    )


def _repository(tree: Path) -> str:
    for path, text in BASE.items():
        (tree / path).parent.mkdir(parents=True, exist_ok=True)
        (tree / path).write_text(text)
    git(tree, "init", "--quiet")
    git(tree, "add", "--all")
    git(tree, "commit", "--quiet", "-m", "base")
    return git(tree, "rev-parse", "HEAD").stdout.decode().strip()


def _predict(tree: Path) -> None:
    """A prediction's changes, made on the tree (as after ``git apply``)."""
    (tree / "pkg/core.py").write_text("def f():\n    return 3\n")  # product: its own
    (tree / "pkg/testing.py").write_text("def check(x):\n    return None\n")  # gold touches it
    (tree / "src/_pytest/python_api.py").write_text("def approx(x):\n    return True\n")
    (tree / "pkg/tests/__init__.py").write_text("def assert_same(a, b):\n    pass\n")  # neutered
    (tree / "tests/helpers.py").rename(tree / "tests/helpers2.py")
    (tree / "tests/data.txt").unlink()
    (tree / "tests/os.py").write_text("getcwd = None\n")
    (tree / "tests/shadow/pkg").mkdir(parents=True)
    (tree / "tests/shadow/pkg/__init__.py").write_text("def f():\n    return 2\n")
    (tree / "tests/result.log").write_text("PASSED tests/test_core.py::test_f\n")
    (tree / "tests/build").mkdir()
    (tree / "tests/build/helper.py").write_text("x = 1\n")


def _status(tree: Path) -> list[str]:
    listing = git(tree, "status", "--porcelain=v1", "-uall", "--ignored=matching").stdout.decode()
    return sorted(listing.splitlines())


@pytest.fixture
def predicted(tmp_path: Path) -> tuple[Path, str]:
    tree = tmp_path / "tree"
    tree.mkdir()
    base = _repository(tree)
    _predict(tree)
    return tree, base


def test_test_side_changes_are_undone_and_the_rest_kept(predicted: tuple[Path, str]) -> None:
    tree, base = predicted
    assert set_aside.set_aside(tree, _instance(base)) == sorted([*SET_ASIDE, "src/_pytest/python_api.py"])
    # left: the product change, gold's test-named file; everything else is base_commit's again
    assert _status(tree) == [" M pkg/core.py", " M pkg/testing.py"]
    assert (tree / "tests/helpers.py").read_text() == BASE["tests/helpers.py"]
    assert (tree / "tests/data.txt").read_text() == BASE["tests/data.txt"]
    assert (tree / "pkg/tests/__init__.py").read_text() == BASE["pkg/tests/__init__.py"]
    # new folders go with their files (an empty tests/shadow/pkg would import as a package)
    assert not (tree / "tests/shadow").exists() and not (tree / "tests/build").exists()
    assert (tree / "tests").is_dir() and (tree / "pkg/core.py").read_text().endswith("return 3\n")


def test_pytest_s_own_src_is_product(predicted: tuple[Path, str]) -> None:
    tree, base = predicted
    assert set_aside.set_aside(tree, _instance(base, "pytest-dev/pytest")) == SET_ASIDE
    assert " M src/_pytest/python_api.py" in _status(tree)


def test_nothing_to_set_aside_leaves_the_tree_alone(tmp_path: Path) -> None:
    base = _repository(tmp_path)
    subprocess.run(["git", "apply", "-"], cwd=tmp_path, input=GOLD.encode(), check=True)
    assert set_aside.set_aside(tmp_path, _instance(base)) == []
    assert _status(tmp_path) == [" M pkg/core.py", " M pkg/testing.py"]


def test_the_official_shell_lines_leave_the_same_tree(predicted: tuple[Path, str], tmp_path: Path) -> None:
    tree, base = predicted
    twin = tmp_path / "twin"
    shutil.copytree(tree, twin, symlinks=True)
    instance = _instance(base)
    chosen = set_aside.choose(evaluation.changed_files(twin, base), instance)
    lines = set_aside.shell_lines(base, chosen)
    assert lines == [
        "rm -f -- tests/build/helper.py tests/helpers2.py tests/os.py tests/result.log "
        "tests/shadow/pkg/__init__.py",
        "rmdir -p --ignore-fail-on-non-empty -- tests tests/build tests/shadow/pkg",
        f"git checkout {base} -- pkg/tests/__init__.py src/_pytest/python_api.py tests/data.txt "
        "tests/helpers.py",
    ]
    subprocess.run(["bash", "-c", "\n".join(["set -u", *lines])], cwd=twin, check=True)
    set_aside.set_aside(tree, instance)
    assert _status(twin) == _status(tree) == [" M pkg/core.py", " M pkg/testing.py"]
    assert not (twin / "tests/shadow").exists() and (twin / "tests/test_core.py").is_file()


def test_official_mode_chooses_from_the_files_read_out_of_the_image(tmp_path: Path) -> None:
    image = {path: text.encode() for path, text in BASE.items()}
    patch = (
        "diff --git a/pkg/tests/__init__.py b/pkg/tests/__init__.py\n"
        "--- a/pkg/tests/__init__.py\n+++ b/pkg/tests/__init__.py\n"
        "@@ -1,2 +1,2 @@\n def assert_same(a, b):\n-    assert a == b\n+    pass\n"
        "diff --git a/tests/os.py b/tests/os.py\nnew file mode 100644\n--- /dev/null\n+++ b/tests/os.py\n"
        "@@ -0,0 +1 @@\n+getcwd = None\n"
    ) + GOLD
    decision = official_refusal.decide(
        patch, lambda wanted: {p: image.get(p) for p in wanted}, paths.policy_for("pytest"), tmp_path
    )
    assert decision.refusals == []
    assert set_aside.choose(decision.changes, _instance("0" * 40)) == [
        set_aside.SetAside("pkg/tests/__init__.py", existed=True),
        set_aside.SetAside("tests/os.py", existed=False),
    ]


def test_the_official_scripts_set_aside_after_the_apply_and_before_the_reset() -> None:
    pytest.importorskip("swebench")
    official.register_repository(demo.SWEBENCH_DEMO_REPO, demo.SPECS, demo.LOG_PARSER)
    row = json.loads(demo.DATASET.read_text().splitlines()[0])
    [loaded] = SwebenchAdapter(timeout=60, images="build").load_instances([RawRecord(row, "rows:1")])
    instance: SwebenchInstance = loaded.payload
    lines = ["git checkout abc -- tests/helpers.py", "rm -f -- tests/os.py"]
    install, tests = official_images.phase_scripts(instance, guard=True, set_aside=lines)
    plain_install, plain_tests = official_images.phase_scripts(instance, guard=True)
    reset = f"git checkout {instance.base_commit} tests/test_numbers.py"
    assert install == plain_install  # the install phase's own copy runs right after the apply
    plain = plain_tests.splitlines()
    at = plain.index(reset)
    assert tests.splitlines() == plain[:at] + lines + plain[at:]
    script = official_images.container_script(official_images.apply_commands(), lines)
    for command in official_images.apply_commands():
        applied = script.index(f"if {command} ")
        after = script[applied:]
        # each successful apply undoes the test-side changes, then installs
        assert after.index(lines[0]) < after.index(lines[1]) < after.index("exec /bin/bash")


def test_a_prediction_that_creates_test_patch_s_new_file_no_longer_breaks_the_instance(
    tmp_path: Path,
) -> None:
    base = _repository(tmp_path)
    test_patch = (
        "diff --git a/tests/test_new.py b/tests/test_new.py\nnew file mode 100644\n"
        "--- /dev/null\n+++ b/tests/test_new.py\n@@ -0,0 +1 @@\n+def test_new(): pass\n"
    )
    instance = dataclasses.replace(_instance(base), test_patch=test_patch)
    (tmp_path / "tests/test_new.py").write_text("def test_new(): assert True\n")
    # SWE-bench resets only the files test_patch modifies: an existing new file makes it fail
    with pytest.raises(evaluation.TestPatchDoesNotApply):
        evaluation.apply_test_patch(tmp_path, instance)
    assert set_aside.set_aside(tmp_path, instance) == ["tests/test_new.py"]
    assert evaluation.apply_test_patch(tmp_path, instance) == []
    assert (tmp_path / "tests/test_new.py").read_text() == "def test_new(): pass\n"


def test_a_new_folder_where_a_file_of_base_commit_was_goes_first(tmp_path: Path) -> None:
    trees = [tmp_path / "python", tmp_path / "shell"]
    for tree in trees:
        tree.mkdir()
        base = _repository(tree)
        (tree / "tests/helpers.py").unlink()
        (tree / "tests/helpers.py").mkdir()
        (tree / "tests/helpers.py/__init__.py").write_text("def helper():\n    return 2\n")
    chosen = set_aside.choose(evaluation.changed_files(trees[1], base), _instance(base))
    subprocess.run(["bash", "-c", "\n".join(set_aside.shell_lines(base, chosen))], cwd=trees[1], check=True)
    assert set_aside.set_aside(trees[0], _instance(base)) == [
        "tests/helpers.py",
        "tests/helpers.py/__init__.py",
    ]
    for tree in trees:
        assert _status(tree) == [] and (tree / "tests/helpers.py").read_text() == BASE["tests/helpers.py"]
