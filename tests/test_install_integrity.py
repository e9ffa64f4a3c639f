"""What a prediction's install changed before the tests ran (official images: SWE-bench's eval.sh
re-installs after the patch, as root): the engine's list of changes read, and judged against gold's
install. The lists below are those of real runs in the pycalc demo's official-layout image (gold,
and the three hostile installs of ``tests/test_swebench_official_docker.py``); the Docker test
runs them for real."""

from __future__ import annotations

import hashlib
import io
import tarfile
from typing import Any

from pytest_tebench.benchmarks.swebench import official_install
from pytest_tebench.integrity import installed
from pytest_tebench.integrity import paths
from pytest_tebench.integrity.installed import Change

PYTEST = paths.policy_for("pytest -rA")
SITE = "/opt/venv/lib/python3.9/site-packages"
#: gold's install in the demo image, as the engine listed it (folders left out)
GOLD = [
    Change("/root/.gitconfig", "added", "file", "ae2e78c0fa6eb6e997510ea90c9643d7"),
    Change("/testbed/.git/index", "changed", "file"),
    Change("/testbed/pycalc/numbers.py", "changed", "file"),
]
#: the hostile patches add these two files (an in-tree build backend pip runs at the install)
PATCHED = ["pyproject.toml", "backend.py"]


def _judge(changes: list[Change], baseline: list[Change] | None = GOLD) -> list[tuple[str, str]]:
    found = installed.findings(changes, tree="/testbed", patched=PATCHED, policy=PYTEST, baseline=baseline)
    return [(f.rule, f.detail) for f in found]


def _hostile(*extra: Change) -> list[Change]:
    same = [GOLD[0], GOLD[1], Change("/testbed/pyproject.toml", "added", "file")]
    return [*same, Change("/testbed/backend.py", "added", "file"), *extra]


def test_an_install_that_changes_what_gold_s_changes_the_same_way_has_no_finding() -> None:
    assert _judge(GOLD) == []
    assert _judge(_hostile()) == []  # the patch's own files were judged before anything ran
    # folders are where files changed, and pip's cache is read by no later step
    assert (
        _judge([*GOLD, Change(SITE, "changed", "dir"), Change("/root/.cache/pip/x", "added", "file")]) == []
    )


def test_a_runner_file_rewritten_by_the_install_is_found() -> None:
    rewritten = Change(f"{SITE}/_pytest/reports.py", "changed", "file", "a9c202adc421970f19bb76f50fe9550f")
    assert _judge(_hostile(rewritten)) == [
        ("install", f"{SITE}/_pytest/reports.py changed by the install; gold's install did not touch it")
    ]
    # without gold's list, the runner's own files are still judged
    assert _judge(_hostile(rewritten), baseline=None) == [
        ("install", f"{SITE}/_pytest/reports.py changed by the install: the test runner's code")
    ]
    removed = Change(f"{SITE}/_pytest/skipping.py", "deleted", "gone")
    assert [rule for rule, _ in _judge(_hostile(removed))] == ["install"]
    stdlib = Change("/usr/lib/python3.9/unittest/case.py", "changed", "file", "00")
    assert _judge([stdlib], baseline=None)[0][1].endswith(
        "the standard library (unittest, site, the modules every run imports)"
    )


def test_a_pytest11_entry_point_the_install_registers_is_found_but_not_its_description() -> None:
    plugin = [
        Change(f"{SITE}/evil-1.0.dist-info/METADATA", "added", "file", "e72fd0b7f549a704710b61a586150df3"),
        Change(
            f"{SITE}/evil-1.0.dist-info/entry_points.txt", "added", "file", "7b51", ("evil = evil_plugin",)
        ),
        Change(f"{SITE}/evil_plugin.py", "added", "file", "e88b4e7ed668d3cdc7971481c40ec7f1"),
    ]
    assert _judge(_hostile(*plugin)) == [
        (
            "entry-point",
            f"{SITE}/evil-1.0.dist-info/entry_points.txt registers the pytest plugin evil = evil_plugin",
        ),
    ]
    # the plugin's module alone is a new module, as a dependency the patch adds would be: it is its
    # registration that runs it before any test
    assert _judge(_hostile(plugin[0], plugin[2])) == []
    # the same registration by gold's install (a repository that ships its own plugin) is not a finding
    assert _judge(plugin[1:2], baseline=[*GOLD, plugin[1]]) == []


def test_metadata_named_by_a_day_stamped_version_is_not_compared_by_name() -> None:
    """setuptools-scm names a dirty tree's version by the day: gold's metadata folder on another
    day has another name; only what runs is compared."""
    gold = [*GOLD, Change(f"{SITE}/astropy-5.1.dev1+g2a3b.d20261124.dist-info/RECORD", "added", "file", "1")]
    today = [*GOLD, Change(f"{SITE}/astropy-5.1.dev1+g2a3b.d20261125.dist-info/RECORD", "added", "file", "2")]
    assert _judge(today, baseline=gold) == []


def test_a_start_up_file_gold_s_install_also_writes_must_have_gold_s_content() -> None:
    pth = Change(f"{SITE}/easy-install.pth", "changed", "file", "1111")
    assert _judge([*GOLD, pth], baseline=[*GOLD, pth]) == []
    forged = Change(f"{SITE}/easy-install.pth", "changed", "file", "2222")
    assert _judge([*GOLD, forged], baseline=[*GOLD, pth]) == [
        (
            "install",
            f"{SITE}/easy-install.pth changed by the install; its content differs from gold's install's",
        )
    ]
    assert _judge([*GOLD, forged], baseline=None)[0][1].endswith("run by Python at start-up")


def test_runner_files_the_install_writes_into_the_tree_are_found() -> None:
    written = {
        "conftest.py": "conftest",
        "tests/pytest.ini": "pytest-config",
        "setup.cfg": "test runner's configuration",
        "sitecustomize.py": "startup",
        "pytest.py": "shadowing",
        ".git/hooks/post-checkout": "git's hooks",
        ".git/config": "git's hooks",
        "tests/__pycache__/conftest.cpython-39-pytest-7.4.2.pyc": "rewritten test module",
        "tests/__pycache__/test_numbers.cpython-39-pytest-7.4.2.pyc": "rewritten test module",
    }
    for rel, reason in written.items():
        [(rule, detail)] = _judge([*GOLD, Change(f"/testbed/{rel}", "added", "file")])
        assert (
            rule == "install-tree" and detail.startswith(f"{rel} added by the install") and reason in detail
        )
    # what builds make in the tree is the code under test's (astropy's extensions, egg-info)
    built = [
        "astropy/utils/_compiler.cpython-39-x86_64-linux-gnu.so",
        "astropy/__pycache__/setup_package.cpython-39.pyc",
        "astropy.egg-info/PKG-INFO",
        "build/temp.linux-x86_64-cpython-39/astropy/x.o",
    ]
    assert _judge([*GOLD, *(Change(f"/testbed/{rel}", "added", "file") for rel in built)]) == []
    entry = Change(
        "/testbed/astropy.egg-info/entry_points.txt", "changed", "file", "1", ("evil = astropy.evil",)
    )
    assert [rule for rule, _ in _judge([*GOLD, entry])] == ["entry-point"]


def test_pytest11_entries_are_read_from_entry_points_txt() -> None:
    text = "[console_scripts]\nfitsheader = astropy.io.fits.scripts.fitsheader:main\n\n[pytest11]\nevil = evil_plugin\n"
    assert installed.pytest11_entries(text) == ("evil = evil_plugin",)
    assert installed.pytest11_entries("[console_scripts]\nx = y:z\n") == ()
    assert installed.pytest11_entries("[pytest11\nbroken") == ("(an entry_points.txt that does not parse)",)


class _Container:
    """What official_install reads of a stopped container: the engine's diff and archives."""

    name = "fake"

    def __init__(self, diff: list[dict[str, Any]], files: dict[str, bytes]) -> None:
        self._diff, self._files = diff, files
        self.read: list[str] = []

    def diff(self) -> list[dict[str, Any]]:
        return self._diff

    def get_archive(self, path: str) -> tuple[list[bytes], dict[str, Any]]:
        self.read.append(path)
        data = self._files[path]
        buffer = io.BytesIO()
        with tarfile.open(fileobj=buffer, mode="w") as tar:
            info = tarfile.TarInfo(path.rsplit("/", 1)[-1])
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        raw = buffer.getvalue()
        return [raw[:100], raw[100:]], {"mode": 0o644, "size": len(data)}


def test_the_engine_s_list_is_read_with_folders_mounts_and_contents_told_apart() -> None:
    entry_points = b"[pytest11]\nevil = evil_plugin\n"
    container = _Container(
        [
            {"Path": SITE, "Kind": 0},
            {"Path": f"{SITE}/evil-1.0.dist-info", "Kind": 1},
            {"Path": f"{SITE}/evil-1.0.dist-info/entry_points.txt", "Kind": 1},
            {"Path": f"{SITE}/evil-1.0.dist-info/top_level.txt", "Kind": 1},
            {"Path": f"{SITE}/_pytest/skipping.py", "Kind": 2},
            {"Path": "/testbed/pycalc/numbers.py", "Kind": 0},
            {"Path": "/testbed/pycalc.egg-info/entry_points.txt", "Kind": 0},
            {"Path": "/workspace", "Kind": 1},
            {"Path": "/workspace/patch.diff", "Kind": 1},
        ],
        {
            f"{SITE}/evil-1.0.dist-info/entry_points.txt": entry_points,
            f"{SITE}/evil-1.0.dist-info/top_level.txt": b"evil_plugin\n\n",
            "/testbed/pycalc.egg-info/entry_points.txt": b"[console_scripts]\n",
        },
    )
    changes = official_install.engine_changes(container, tree="/testbed", mounts=("/workspace",))
    digest = hashlib.sha256(entry_points).hexdigest()[:32]
    assert changes == [
        Change("/opt/venv/lib/python3.9/site-packages", "changed", "dir"),
        Change(f"{SITE}/_pytest/skipping.py", "deleted", "gone"),
        Change(f"{SITE}/evil-1.0.dist-info", "added", "dir"),
        Change(
            f"{SITE}/evil-1.0.dist-info/entry_points.txt", "added", "file", digest, ("evil = evil_plugin",)
        ),
        Change(
            f"{SITE}/evil-1.0.dist-info/top_level.txt",
            "added",
            "file",
            container_digest(b"evil_plugin\n\n"),
            top_level=("evil_plugin",),
        ),
        Change(
            "/testbed/pycalc.egg-info/entry_points.txt",
            "changed",
            "file",
            container_digest(b"[console_scripts]\n"),
        ),
        Change("/testbed/pycalc/numbers.py", "changed", "file"),  # the tree's code: its content is not needed
    ]
    assert sorted(container.read) == [
        "/opt/venv/lib/python3.9/site-packages/evil-1.0.dist-info/entry_points.txt",
        "/opt/venv/lib/python3.9/site-packages/evil-1.0.dist-info/top_level.txt",
        "/testbed/pycalc.egg-info/entry_points.txt",
    ]
    assert [Change.from_record(c.as_record()) for c in changes] == changes


def container_digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:32]


def test_a_non_editable_install_s_copy_of_the_package_under_test_is_the_prediction_s_code() -> None:
    """requests' spec installs with ``pip install .``: the package is copied into site-packages,
    the prediction's code and byte code stamped with the install's time differ from gold's."""
    dist = f"{SITE}/requests-2.26.0.dist-info"
    gold = [
        *GOLD,
        Change(f"{dist}/top_level.txt", "added", "file", "t1", top_level=("requests",)),
        Change(f"{SITE}/requests/models.py", "added", "file", "gold-code"),
        Change(f"{SITE}/requests/__pycache__/models.cpython-39.pyc", "added", "file", "gold-time"),
        Change(f"{SITE}/urllib3/util/retry.py", "changed", "file", "dependency"),
    ]
    prediction = [
        *GOLD,
        Change(f"{dist}/top_level.txt", "added", "file", "t1", top_level=("requests",)),
        Change(f"{SITE}/requests/models.py", "added", "file", "its-code"),
        Change(f"{SITE}/requests/__pycache__/models.cpython-39.pyc", "added", "file", "its-time"),
        Change(f"{SITE}/urllib3/util/retry.py", "changed", "file", "rewritten"),
    ]
    assert _judge(prediction, baseline=gold) == [
        (
            "install",
            f"{SITE}/urllib3/util/retry.py changed by the install; its content differs from gold's install's",
        )
    ]
    # the prediction cannot name the runner as its package: only gold's metadata counts, never pytest
    claims = Change(f"{SITE}/evil-1.0.dist-info/top_level.txt", "added", "file", "t2", top_level=("_pytest",))
    rewritten = Change(f"{SITE}/_pytest/reports.py", "changed", "file", "x")
    assert [rule for rule, _ in _judge([*GOLD, claims, rewritten])] == ["install"]
    pytest_gold = [
        *GOLD,
        Change(f"{SITE}/p.dist-info/top_level.txt", "added", "file", "t", top_level=("_pytest",)),
    ]
    assert [rule for rule, _ in _judge([*GOLD, rewritten], baseline=pytest_gold)] == ["install"]
    # django's `setup.py install`: an egg folder
    egg = f"{SITE}/Django-1.9-py3.5.egg"
    gold_egg = [*GOLD, Change(f"{egg}/EGG-INFO/top_level.txt", "added", "file", "t", top_level=("django",))]
    assert (
        _judge([*GOLD, Change(f"{egg}/django/db/models/query.py", "added", "file", "x")], baseline=gold_egg)
        == []
    )


def test_byte_code_is_compared_without_its_source_stamp() -> None:
    """An editable install rewrites its finder module at every install: the same code compiles to
    byte code that differs only in the source's stamp (bytes 8 to 16)."""
    finder = f"{SITE}/__pycache__/__editable___astropy_finder.cpython-39.pyc"
    magic, code = b"\x61\x0d\x0d\x0a\x00\x00\x00\x00", b"\xe3marshalled code"
    first = _Container([{"Path": finder, "Kind": 1}], {finder: magic + b"STAMP001" + code})
    second = _Container([{"Path": finder, "Kind": 1}], {finder: magic + b"STAMP002" + code})
    forged = _Container([{"Path": finder, "Kind": 1}], {finder: magic + b"STAMP001" + b"\xe3other code"})
    [a], [b], [c] = (
        official_install.engine_changes(x, tree="/testbed", mounts=()) for x in (first, second, forged)
    )
    assert a.digest == b.digest == container_digest(magic + code) and c.digest != a.digest


def _dependency(name: str, *, scripts: tuple[str, ...] = (), pytest11: tuple[str, ...] = ()) -> list[Change]:
    """What pip adds for a new requirement: its package folder and its metadata, both new."""
    dist = f"{SITE}/{name}-1.0.dist-info"
    return [
        Change(f"{SITE}/{name}", "added", "dir"),
        Change(f"{SITE}/{name}/__init__.py", "added", "file", f"{name}-code"),
        Change(dist, "added", "dir"),
        Change(f"{dist}/entry_points.txt", "added", "file", "e", pytest11=pytest11, scripts=scripts),
        Change(f"{dist}/RECORD", "added", "file", "r"),
    ]


def test_a_dependency_the_patch_adds_is_the_prediction_s_to_add() -> None:
    """A patch that adds a requirement, installed with an index in reach: the new package and the
    console script its metadata declares were never gold's, and replace nothing."""
    honest = [
        *_hostile(),
        *_dependency("tqdm", scripts=("tqdm",)),
        Change("/opt/venv/bin/tqdm", "added", "file", "s"),
    ]
    assert _judge(honest) == []
    assert installed.new_dependencies(honest) == {
        f"{SITE}/tqdm",
        f"{SITE}/tqdm/__init__.py",
        f"{SITE}/tqdm-1.0.dist-info",
        f"{SITE}/tqdm-1.0.dist-info/RECORD",
        "/opt/venv/bin/tqdm",
    }


def test_what_a_new_dependency_could_do_before_any_test_is_still_judged() -> None:
    plugin = _dependency("helper", pytest11=("helper = helper",))
    assert _judge([*_hostile(), *plugin]) == [
        (
            "entry-point",
            f"{SITE}/helper-1.0.dist-info/entry_points.txt registers the pytest plugin helper = helper",
        )
    ]
    # a start-up file, a package named like one pytest imports when present, a program the
    # evaluation runs, a script no new distribution declares, a file added to an existing package
    cases = [
        Change(f"{SITE}/zz-helper.pth", "added", "file", "p"),
        *_dependency("pygments"),
        *_dependency("_pytest"),
        Change("/opt/venv/bin/pytest", "added", "file", "s"),
        Change("/opt/venv/bin/undeclared", "added", "file", "s"),
        Change(f"{SITE}/urllib3/evil.py", "added", "file", "x"),
    ]
    declared = _dependency("tool", scripts=("pytest", "tool"))
    found = _judge([*_hostile(), *declared, *cases])
    assert {detail.split(" ")[0] for rule, detail in found if rule == "install"} == {
        f"{SITE}/zz-helper.pth",
        f"{SITE}/pygments/__init__.py",
        f"{SITE}/_pytest/__init__.py",
        "/opt/venv/bin/pytest",
        "/opt/venv/bin/undeclared",
        f"{SITE}/urllib3/evil.py",
    }
    assert {rule for rule, _ in found} == {"install"}


def test_console_scripts_are_read_from_entry_points_txt() -> None:
    text = "[console_scripts]\ntqdm = tqdm.cli:main\n\n[gui_scripts]\nviewer = v:main\n\n[pytest11]\nx = y\n"
    assert installed.script_names(text) == ("tqdm", "viewer")
    assert installed.script_names("[console_scripts\n") == ()
    change = Change("/e/entry_points.txt", "added", "file", "d", scripts=("tqdm",))
    assert Change.from_record(change.as_record()) == change
