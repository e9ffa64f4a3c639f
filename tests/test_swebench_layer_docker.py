"""An instance whose ``setup.py`` gained a dependency after its environment's commit gets the
install again at its ``base_commit`` (an instance layer), for real in Docker; without the layer
the same gold patch is unresolved, so the layer is what resolves it.

The pycalc demo's history plus one commit that makes ``setup.py`` require ``six``; its
environment is the demo's (same repository, version and ``environment_setup_commit``), so the
image the demo test builds is reused.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from pytest_tebench.benchmarks.base import EvalContext
from pytest_tebench.benchmarks.swebench.adapter import SwebenchAdapter
from pytest_tebench.benchmarks.swebench.environment import INSTANCE_REPOSITORY
from pytest_tebench.demo import swebench as demo
from pytest_tebench.instance.datasets import RawRecord
from pytest_tebench.instance.predictions import gold_predictions
from pytest_tebench.workspace.gitcmd import git
from pytest_tebench.workspace.repos import RepositoryStore

from conftest import git_text

pytest.importorskip("swebench")
pytestmark = pytest.mark.docker

SETUP_PY = 'from setuptools import setup\n\nsetup(name="pycalc", version="1.0", packages=["pycalc"])\n'
GOLD = """diff --git a/pycalc/text.py b/pycalc/text.py
--- a/pycalc/text.py
+++ b/pycalc/text.py
@@ -1,4 +1,6 @@
 import re
+
+import six
 
 
 def slugify(text, separator="-"):
@@ -10,3 +12,8 @@ def slugify(text, separator="-"):
 def word_count(text):
     \"\"\"How many words text has.\"\"\"
     return len(text.split())
+
+
+def is_text(value):
+    \"\"\"Whether value is a string.\"\"\"
+    return isinstance(value, six.string_types)
"""
TEST_PATCH = """diff --git a/tests/test_text.py b/tests/test_text.py
--- a/tests/test_text.py
+++ b/tests/test_text.py
@@ -1,3 +1,4 @@
+from pycalc.text import is_text
 from pycalc.text import slugify
 from pycalc.text import word_count
 
@@ -12,3 +13,7 @@ def test_slugify_separator():
 
 def test_word_count():
     assert word_count("one two  three") == 3
+
+
+def test_is_text():
+    assert is_text("a") and not is_text(1)
"""


def test_an_instance_whose_setup_py_changed_is_installed_at_its_own_commit(tmp_path: Path) -> None:
    env_commit = json.loads(demo.DATASET.read_text().splitlines()[0])["environment_setup_commit"]
    work = tmp_path / "work"
    git(tmp_path, "clone", "--quiet", str(demo.build_swebench_demo_mirror(tmp_path / "demo.git")), str(work))
    git(work, "checkout", "--quiet", "-b", "six", env_commit)
    (work / "setup.py").write_text(
        SETUP_PY.replace('packages=["pycalc"]', 'packages=["pycalc"], install_requires=["six"]')
    )
    git(work, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "--quiet", "-am", "pycalc needs six")
    base = git_text(work, "rev-parse", "HEAD").strip()
    repos = tmp_path / "repos"
    git(tmp_path, "clone", "--quiet", "--bare", str(work), str(repos / demo.SWEBENCH_DEMO_REPO))
    row = {
        "instance_id": "pytest-tebench__pycalc-six",
        "repo": demo.SWEBENCH_DEMO_REPO,
        "version": "1.0",
        "base_commit": base,
        "environment_setup_commit": env_commit,
        "patch": GOLD,
        "test_patch": TEST_PATCH,
        "FAIL_TO_PASS": ["tests/test_text.py::test_is_text"],
        "PASS_TO_PASS": ["tests/test_text.py::test_slugify_words", "tests/test_text.py::test_word_count"],
    }
    adapter = SwebenchAdapter(timeout=300)
    [instance] = adapter.load_instances([RawRecord(row, "rows.jsonl:1")])
    assert instance.problem is None
    context = EvalContext(
        cache_dir=tmp_path / "cache",
        work_dir=tmp_path / "workspaces",
        # the local mirror, not the embedded demo: it holds the extra commit
        repos=RepositoryStore(tmp_path / "cache", local_dirs=(repos,), allow_network=False, embedded={}),
    )
    [gold] = gold_predictions([(instance.instance_id, GOLD)])

    prepared = adapter.prepare(instance, context)
    assert prepared.image.startswith(INSTANCE_REPOSITORY) and prepared.install_commit == base
    record = adapter.evaluate(instance, prepared, gold, context)
    block = record["swebench"]
    assert (record["status"], block["resolved"], block["install_commit"]) == ("evaluated", True, base)
    assert block["f2p_success"] == ["tests/test_text.py::test_is_text"] and block["p2p_failure"] == []
    # a second prediction of the instance reuses the layer: nothing is built again
    assert adapter.prepare(instance, context).image == prepared.image

    # the environment's own install (at environment_setup_commit) has no six: gold fails there
    environment_only = dataclasses.replace(prepared, image=prepared.plan.tag(), install_commit=env_commit)
    unresolved = adapter.evaluate(instance, environment_only, gold, context)["swebench"]
    assert unresolved["resolved"] is False
    assert unresolved["f2p_failure"] == ["tests/test_text.py::test_is_text"]
