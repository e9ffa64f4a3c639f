"""The stored builds' upkeep (run/maven/build_store.py) and a build pruned under a running launch.

The runs use the ``javac``-backed stand-in Maven of ``test_run_prebuilt_tests.py``.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from test_run_prebuilt_tests import JavacMaven
from test_run_prebuilt_tests import compiled_apart
from test_run_prebuilt_tests import gold_stored
from test_run_prebuilt_tests import launch
from test_run_prebuilt_tests import prepared
from test_run_prebuilt_tests import workspace  # noqa: F401  (a fixture)

from pytest_tebench.cli import main as tebench_main
from pytest_tebench.run.maven import build_store
from pytest_tebench.run.maven import prebuilt
from pytest_tebench.run.maven import prebuilt_tests
from pytest_tebench.run.maven.prebuilt import MANIFEST
from pytest_tebench.run.maven.prebuilt import SKIP_MAIN
from pytest_tebench.run.maven.prebuilt import Prebuilt
from pytest_tebench.run.maven.prebuilt import PrebuiltUse
from pytest_tebench.run.maven.prebuilt import prepare as prepare_production
from pytest_tebench.run.maven.prebuilt_tests import STALE_ONLY

from conftest import write_text

DAY = 86400.0


def stored(store: Path, key: str, *, size: int, used_days_ago: float) -> Path:
    entry = store / key
    (entry / "trees" / "target" / "classes").mkdir(parents=True)
    (entry / "trees" / "target" / "classes" / "A.class").write_bytes(b"x" * size)
    (entry / MANIFEST).write_text(json.dumps({"usable": True}))
    when = time.time() - used_days_ago * DAY
    os.utime(entry / MANIFEST, (when, when))
    return entry


def production_only(maven: JavacMaven, checkout: Path, store: Path, *, create: bool) -> PrebuiltUse:
    """The production half of ``prepared``."""
    return prepare_production(
        maven,  # type: ignore[arg-type]
        checkout,
        Prebuilt(store, create=create),
        launch(),
        modules=("",),
        maven_repo=store,
    )


def test_prune_removes_unused_builds_then_the_least_recently_used(tmp_path: Path) -> None:
    store = tmp_path / "prebuilt"
    stored(store, "a" * 32, size=1000, used_days_ago=10)
    stored(store, "b" * 32, size=2000, used_days_ago=3)
    stored(store, "c" * 32, size=4000, used_days_ago=2)
    stored(store, "d" * 32, size=8000, used_days_ago=0)
    (store / "locks").mkdir()
    (store / "locks" / f"{'a' * 32}.lock").touch()
    (store / "half").mkdir()  # no manifest: not a build, left alone
    old_tmp, young_tmp = store / f".{'e' * 32}.1.tmp", store / f".{'f' * 32}.2.trash"
    old_tmp.mkdir()
    young_tmp.mkdir()
    os.utime(old_tmp, (time.time() - 2 * 3600, time.time() - 2 * 3600))

    held = build_store.stats(store)
    assert (held.entries, held.bytes) == (4, 15000 + 4 * len('{"usable": true}'))
    assert held.oldest is not None and held.newest is not None and held.newest - held.oldest > 9 * DAY

    assert build_store.prune(store, older_than=5 * DAY) == 1
    assert sorted(b.path.name for b in build_store.stored_builds(store)) == ["b" * 32, "c" * 32, "d" * 32]
    assert not old_tmp.exists() and young_tmp.exists()  # a killed writer's leftover, a live one's
    # the least recently used go first, until 10,000 bytes or fewer are left: b, then c
    assert build_store.prune(store, max_bytes=10_000) == 2
    assert [b.path.name for b in build_store.stored_builds(store)] == ["d" * 32]
    assert (store / "locks" / f"{'a' * 32}.lock").exists() and (store / "half").is_dir()
    assert not build_store.remove_build(store / ("a" * 32))  # gone already


def test_the_cache_command_shows_and_prunes_stored_builds(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    stored(tmp_path / "prebuilt", "a" * 32, size=3_000_000, used_days_ago=1)
    assert tebench_main(["cache", "info", "--cache-dir", str(tmp_path)]) == 0
    assert (
        f"{tmp_path / 'prebuilt'}: 1 stored build(s), 3.0 MB, last used 1.0 days ago"
        in capsys.readouterr().out
    )
    assert tebench_main(["cache", "prune", "--cache-dir", str(tmp_path)]) == 2
    assert "--max-build-size SIZE" in capsys.readouterr().err
    for option, value in (("--older-than", "-1"), ("--older-than", "nan"), ("--max-build-size", "-5m"),
                          ("--max-build-size", "inf"), ("--max-build-size", "lots")):  # fmt: skip
        with pytest.raises(SystemExit) as exited:
            tebench_main(["cache", "prune", "--cache-dir", str(tmp_path), f"{option}={value}"])
        assert exited.value.code == 2 and f"argument {option}: not a" in capsys.readouterr().err
    assert build_store.stats(tmp_path / "prebuilt").entries == 1  # nothing went on bad input
    assert tebench_main(["cache", "prune", "--cache-dir", str(tmp_path)]) == 2
    assert "--max-build-size SIZE" in capsys.readouterr().err
    assert tebench_main(["cache", "prune", "--cache-dir", str(tmp_path), "--max-size", "0"]) == 0
    assert build_store.stats(tmp_path / "prebuilt").entries == 1  # --max-size is the results' budget
    assert tebench_main(["cache", "prune", "--cache-dir", str(tmp_path), "--max-build-size", "1m"]) == 0
    assert "removed 1 stored build(s)" in capsys.readouterr().out
    assert build_store.stats(tmp_path / "prebuilt").entries == 0


def test_a_reused_build_is_stamped_as_used(workspace: Path, tmp_path: Path) -> None:  # noqa: F811
    maven = JavacMaven()
    prepared(maven, workspace, tmp_path / "store", create=True)
    (entry,) = build_store.stored_builds(tmp_path / "store")
    long_ago = time.time() - 30 * DAY
    os.utime(entry.path / MANIFEST, (long_ago, long_ago))
    prepared(maven, workspace, tmp_path / "store", create=False)
    assert time.time() - (entry.path / MANIFEST).stat().st_mtime < 60
    assert build_store.prune(tmp_path / "store", older_than=DAY) == 0


def test_a_production_build_removed_while_restored_is_compiled_instead(
    workspace: Path,  # noqa: F811
    tmp_path: Path,
) -> None:
    maven = JavacMaven()
    prepared(maven, workspace, tmp_path / "store", create=True)
    (entry,) = build_store.stored_builds(tmp_path / "store")
    # what a launch that read the manifest meets when a prune renames the build away under it
    os.rename(entry.path / "trees", tmp_path / "elsewhere")
    shutil.rmtree(workspace / "target")
    production = production_only(maven, workspace, tmp_path / "store", create=False)
    assert production.state == "off"
    assert production.note.startswith("the stored build went away while restored (")
    assert production.launch == launch()  # the whole build: production and tests compiled
    assert not (workspace / "target").exists()


def test_a_test_tree_removed_while_restored_is_compiled_whole(
    workspace: Path,  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    maven = JavacMaven()
    assert gold_stored(maven, workspace, tmp_path / "store").state == "built"
    overlay = prebuilt_tests._overlay

    def overlay_then_vanish(entry: Path, into: Path, modules: list[str]) -> None:
        overlay(entry, into, modules)  # part of the tree is copied when the store goes
        raise FileNotFoundError(2, "No such file or directory", str(entry / "trees"))

    monkeypatch.setattr(prebuilt_tests, "_overlay", overlay_then_vanish)
    use = prepared(maven, workspace, tmp_path / "store", create=False)
    assert use.state == "off" and use.note.startswith("the stored build went away while restored (")
    assert STALE_ONLY not in use.launch.argv and SKIP_MAIN in use.launch.argv
    assert not (workspace / "target/test-classes").exists()  # nothing half-restored is left
    assert (workspace / "target/classes/p/A.class").is_file()  # production restored whole


def _pruned_once_stored(
    store: Callable[..., None], *, pruned: Callable[[Path], Path] = lambda entry: entry
) -> Callable[..., None]:
    """``store`` (a module's ``_store``), then the build at ``pruned(entry)`` removed at once,
    as ``tebench cache prune`` running beside the launch would."""

    def store_then_pruned(entry: Path, *args: Any) -> None:
        store(entry, *args)
        assert build_store.remove_build(pruned(entry))

    return store_then_pruned


def test_a_production_build_pruned_as_soon_as_stored_is_compiled_by_the_launch(
    workspace: Path,  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(prebuilt, "_store", _pruned_once_stored(prebuilt._store))
    maven = JavacMaven()
    shutil.rmtree(workspace / "target", ignore_errors=True)
    production = production_only(maven, workspace, tmp_path / "store", create=True)
    assert production.state == "off" and production.note.startswith("the stored build went away")
    assert production.compiled is not None  # gold's compile stays in its record
    assert production.launch == launch() and not (workspace / "target").exists()


def test_a_production_build_pruned_while_gold_s_tests_compile_is_compiled_by_the_launch(
    workspace: Path,  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    store = _pruned_once_stored(prebuilt_tests._store, pruned=prebuilt_tests.production_entry)
    monkeypatch.setattr(prebuilt_tests, "_store", store)
    use = compiled_apart(JavacMaven(), workspace, tmp_path / "store")
    assert use.state == "off" and use.note.startswith("the stored build went away")
    assert use.compiled is not None
    # neither production nor the tests restored: the launch compiles both
    assert use.launch == launch() and not (workspace / "target").exists()


def test_a_production_build_pruned_before_the_whole_test_compile_is_compiled_with_it(
    workspace: Path,  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from test_run_prebuilt_tests import run

    from pytest_tebench.run.maven import testrun

    run(JavacMaven(), workspace, tmp_path, create=True)
    write_text(workspace / "src/test/java/p/BTest.java", "package p;\nclass BTest { int x = Missing.X; }\n")
    restore = testrun.restore_production

    def pruned_first(entry: Path, *args: Any) -> None:
        assert build_store.remove_build(entry)
        restore(entry, *args)

    monkeypatch.setattr(testrun, "restore_production", pruned_first)
    maven = JavacMaven()
    status, steps = run(maven, workspace, tmp_path, create=False)
    assert steps == ["compile+test", "compile+test-tests-again"]
    assert status.startswith("test_compile_error reused ")
    assert "tests compiled again; the stored build went away while restored (" in status
    # the whole build: no restored classes to skip the main compile for
    assert SKIP_MAIN not in maven.seen[-1].argv and STALE_ONLY not in maven.seen[-1].argv
