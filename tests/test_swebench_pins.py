"""Exact pins newer than the PyPI date: the check over specs, on index pages recorded on 2026-11-25.

``fixtures/swebench-pins/pypi-pages.json`` holds the Simple API pages (one file per version, the
pinned releases' wheels) and the wheel metadata that checking sphinx 3.5 and flask 2.0 fetched,
index and file hosts replaced by ``INDEX`` and ``FILES``. The dates below were read off PyPI's
release histories by hand.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from swebench.harness.constants import MAP_REPO_VERSION_TO_SPECS

from pytest_tebench.benchmarks.swebench import environment
from pytest_tebench.benchmarks.swebench import pin_check
from pytest_tebench.benchmarks.swebench import pypi_dates

PAGES = Path(__file__).parent / "fixtures" / "swebench-pins" / "pypi-pages.json"


def recorded(pages: dict[str, Any]) -> pypi_dates.Fetch:
    def fetch(url: str) -> bytes:
        if url not in pages:
            raise OSError(f"not recorded: {url}")
        value = pages[url]
        return (value if isinstance(value, str) else json.dumps(value)).encode()

    return fetch


@pytest.fixture
def index() -> pin_check.IndexPages:
    return pin_check.IndexPages(recorded(json.loads(PAGES.read_text())), index="INDEX")


def test_sphinx_tox_pin_conflicts_at_the_date_and_its_own_date_settles_it(
    index: pin_check.IndexPages,
) -> None:
    specs = {
        "sphinx-doc/sphinx": {"3.5": MAP_REPO_VERSION_TO_SPECS["sphinx-doc/sphinx"]["3.5"]},
        "pallets/flask": {"2.0": MAP_REPO_VERSION_TO_SPECS["pallets/flask"]["2.0"]},
    }
    checks = {c.pin: c for c in pin_check.check_specs(specs, index, "2023-11-01T00:00:00Z")}
    tox = checks["tox==4.16.0"]
    assert (tox.python, tox.specs, tox.uploaded, tox.newer) == (
        "3.9",
        ["sphinx-doc/sphinx 3.5"],
        "2024-07-03T03:29:14Z",
        True,
    )
    # chardet 5.2 (2023-08), colorama 0.4.6 (2022), tomli 2.0.1 (2022) existed on 2023-11-01; these not:
    # cachetools 5.3.3 (2024-03), filelock 3.15.4, packaging 24.1, pyproject-api 1.7.1, virtualenv
    # 20.26.3 (2024-06), platformdirs 4.2.2 (2024-05), pluggy 1.5 (2024-04)
    assert tox.unmet_at_date == [
        "cachetools>=5.3.3",
        "filelock>=3.15.4",
        "packaging>=24.1",
        "platformdirs>=4.2.2",
        "pluggy>=1.5",
        "pyproject-api>=1.7.1",
        "virtualenv>=20.26.3",
    ]
    assert tox.conflict and tox.settled and tox.unmet_at_pin_date == []
    # flask's setuptools==70.0.0 is newer than the date too, but requires nothing: no conflict
    setuptools = checks["setuptools==70.0.0"]
    assert (setuptools.newer, setuptools.requires, setuptools.conflict) == (True, [], False)
    # Jinja2 3.0.3 (2021-11) is older than the date: its MarkupSafe>=2.0 resolves there
    jinja = checks["Jinja2==3.0.3"]
    assert (jinja.newer, jinja.requires, jinja.conflict) == (False, ["MarkupSafe>=2.0"], False)
    table = pin_check.table(checks.values(), {"lite": {"sphinx-doc/sphinx 3.5": 4}})
    # the pins newer than the date only, with the rows of each dataset that use their specs
    assert [line.split(" | ")[0] for line in table[2:]] == ["| `setuptools==70.0.0`", "| `tox==4.16.0`"]
    assert "| sphinx-doc/sphinx 3.5 | 4 | cachetools>=5.3.3, " in table[3]


def test_a_pins_dependencies_resolve_at_its_own_upload_date_never_before_the_run_date(
    index: pin_check.IndexPages,
) -> None:
    fetch, where = index.fetch, "INDEX"
    assert (
        pypi_dates.resolve_date("2023-11-01T00:00:00Z", "tox==4.16.0", fetch, where) == "2024-07-03T03:29:14Z"
    )
    assert (
        pypi_dates.resolve_date("2023-11-01T00:00:00Z", "Jinja2==3.0.3", fetch, where)
        == "2023-11-01T00:00:00Z"
    )
    assert pypi_dates.resolve_date("2025-01-01", "tox==4.16.0", fetch, where) == "2025-01-01T00:00:00Z"
    assert pypi_dates.resolve_date("", "tox==4.16.0", fetch, where) == ""  # no date: today's index


def test_a_requirement_unmet_even_at_the_pins_date_is_reported_unsettled() -> None:
    def page(name: str, *files: tuple[str, str]) -> dict[str, Any]:
        return {
            "name": name,
            "files": [{"filename": f, "upload-time": t, "url": f"FILES/{f}"} for f, t in files],
        }

    pages: dict[str, Any] = {
        "INDEX/a/": page("a", ("a-2.0-py3-none-any.whl", "2024-01-01T00:00:00Z")),
        "FILES/a-2.0-py3-none-any.whl.metadata": "Name: a\nVersion: 2.0\nRequires-Dist: b>=3\n"
        'Requires-Dist: old>=9; python_version < "3.8"\nRequires-Dist: c\n',
        "INDEX/b/": page(
            "b", ("b-2.0.tar.gz", "2022-01-01T00:00:00Z"), ("b-3.0.tar.gz", "2024-06-01T00:00:00Z")
        ),
        "INDEX/c/": page("c", ("c-1.0.tar.gz", "2020-01-01T00:00:00Z")),
    }
    index = pin_check.IndexPages(recorded(pages), index="INDEX")
    specs = {"o/r": {"1": {"python": "3.9", "pip_packages": ["a==2.0", "c>=1"], "packages": "c==1.0 d"}}}
    checks = pin_check.check_specs(specs, index, "2023-11-01T00:00:00Z")
    assert [c.pin for c in checks] == ["a==2.0", "c==1.0"]  # exact pins of pip_packages and packages
    a = checks[0]
    # b 3.0 came after a 2.0 itself; old>=9 is for Python < 3.8 only
    assert (a.requires, a.unmet_at_date, a.unmet_at_pin_date) == (["b>=3", "c"], ["b>=3"], ["b>=3"])
    assert a.conflict and not a.settled
    assert not checks[1].conflict and checks[1].requires is None  # c has no wheel: metadata unknown


def test_the_build_installs_each_exact_pin_then_its_dependencies_at_its_date() -> None:
    spec = MAP_REPO_VERSION_TO_SPECS["sphinx-doc/sphinx"]["3.5"]
    plan = environment.plan_environment(
        "sphinx-doc/sphinx",
        "3.5",
        spec,
        setup_commit="0" * 40,
        read_file=lambda path: None,
        requirement_paths=(),
    )
    script = plan.script()
    assert "env -u PIP_UPLOADED_PRIOR_TO python -m pip install --no-deps tox==4.16.0" in script
    dated = (
        'PIP_UPLOADED_PRIOR_TO="$(python /opt/swebench/pypi_dates.py "$PIP_UPLOADED_PRIOR_TO" tox==4.16.0)" '
        "python -m pip install tox==4.16.0"
    )
    assert dated in script
    assert script.index(dated) < script.index("python -m pip install tox==4.16.0 tox-current-env==0.0.11")
    # the script that dates pins is part of the recipe, so the tag changes with it
    assert plan.uses_pypi_dates()
    today = environment.plan_environment(
        "sphinx-doc/sphinx", "3.5", spec, setup_commit="0" * 40, read_file=lambda p: None, requirement_paths=(),
        pypi_date="",
    )  # fmt: skip
    assert not today.uses_pypi_dates() and today.tag() != plan.tag()


def test_sphinx_evaluation_remakes_the_pre_install_edits_and_a_venv_view_for_tox_current_env() -> None:
    from pytest_tebench.benchmarks.swebench import evaluation

    def plan(repo: str, version: str) -> environment.EnvironmentPlan:
        spec = MAP_REPO_VERSION_TO_SPECS[repo][version]
        return environment.plan_environment(
            repo, version, spec, setup_commit="0" * 40, read_file=lambda path: None, requirement_paths=()
        )

    lines = evaluation.eval_script(plan("sphinx-doc/sphinx", "3.5"), ["tests/test_x.py"]).splitlines()
    # the test command runs in the clean environment of the runner-integrity work, the guard plugin
    # (its folder on PYTHONPATH, which tox-current-env passes on) first of pytest's {posargs}
    test = lines.index(
        'env -i "${keep[@]}" PYTHONNOUSERSITE=1 bash -c '
        "'tox --current-env -epy39 -v -- -p tebench_guard tests/test_x.py'"
    )
    assert "python_path='{tool:tebench-guard}'" in lines[:test]
    # `pytest -rA` in tox.ini: without it the log has no per-test line to grade
    assert lines.index("sed -i 's/pytest/pytest -rA/' tox.ini") < test
    view = [
        "mkdir -p /workspace/.tox/py39/bin && cp /opt/venv/pyvenv.cfg /workspace/.tox/py39/ "
        "&& ln -sfn /opt/venv/lib /workspace/.tox/py39/lib",
        "ln -sf /opt/venv/bin/python /workspace/.tox/py39/bin/python",
        "ln -sf /opt/venv/bin/python /workspace/.tox/py39/bin/python3",
        "ln -sf /opt/venv/bin/python /workspace/.tox/py39/bin/python3.9",
    ]
    start = lines.index(view[0])
    assert lines[start : start + 4] == view and start < test
    # a pytest command gets no tox directory
    assert not evaluation.tox_current_env_lines(plan("pytest-dev/pytest", "5.4"))


def test_environments_whose_pip_cannot_date_resolve_through_the_dated_index_view() -> None:
    # astropy 1.3 runs on Python 3.6 and pins PyYAML==3.12 (and more): the last pip of 3.6 (and of
    # 3.8) has no --uploaded-prior-to, so the build starts pypi_dates.py's dated view and points pip at it
    spec = MAP_REPO_VERSION_TO_SPECS["astropy/astropy"]["1.3"]
    assert spec["python"] == "3.6" and "PyYAML==3.12" in spec["pip_packages"]
    plan = environment.plan_environment(
        "astropy/astropy", "1.3", spec, setup_commit="0" * 40, read_file=lambda p: None, requirement_paths=()
    )
    assert plan.uses_pypi_dates()
    setup = list(plan.setup)
    start = setup.index("python /opt/swebench/pypi_dates.py serve 3141")
    assert setup[start - 2 : start + 3] == [
        "python -m pip install --upgrade pip",
        'export TEBENCH_PYPI_UPSTREAM="${PIP_INDEX_URL:-https://pypi.org/simple}"',
        "python /opt/swebench/pypi_dates.py serve 3141",
        "export PIP_INDEX_URL=http://127.0.0.1:3141/2023-11-01T00:00:00Z/",
        "python -m pip install --upgrade setuptools wheel",
    ]
    assert not any("UPLOADED_PRIOR_TO" in line for line in setup)
    # each exact pin from today's index, then its dependencies at its own date through the view
    assert (
        'PIP_INDEX_URL="$TEBENCH_PYPI_UPSTREAM" python -m pip install --no-deps attrs==17.3.0 '
        in "\n".join(setup)
    )
    dated = (
        'PIP_INDEX_URL=http://127.0.0.1:3141/"$(python /opt/swebench/pypi_dates.py 2023-11-01T00:00:00Z '
        'PyYAML==3.12)"/ python -m pip install PyYAML==3.12'
    )
    assert dated in setup
    # an instance layer starts the view again (its build step is another container)
    layer = environment.InstanceLayerPlan(plan, "env:tag", "1" * 40, ())
    assert "python /opt/swebench/pypi_dates.py serve 3141\nexport PIP_INDEX_URL=" in layer.script()
    # no date: today's index, no view
    today = environment.plan_environment(
        "astropy/astropy", "1.3", spec, setup_commit="0" * 40, read_file=lambda p: None, requirement_paths=(),
        pypi_date="",
    )  # fmt: skip
    assert not today.uses_pypi_dates() and "serve" not in today.script()
    sphinx = environment.plan_environment(
        "sphinx-doc/sphinx", "3.5", MAP_REPO_VERSION_TO_SPECS["sphinx-doc/sphinx"]["3.5"],
        setup_commit="0" * 40, read_file=lambda p: None, requirement_paths=(),
    )  # fmt: skip
    assert sphinx.uses_pypi_dates() and "serve" not in sphinx.script()
    assert "export PIP_UPLOADED_PRIOR_TO=2023-11-01T00:00:00Z" in sphinx.setup


def test_times_parse_as_the_index_and_the_options_write_them() -> None:
    utc = pypi_dates.parse_time("2023-11-01T00:00:00Z")
    assert pypi_dates.parse_time("2023-11-01") == utc
    assert pypi_dates.parse_time("2023-11-01T02:00:00+02:00") == utc
    assert pypi_dates.parse_time("2023-10-31T19:00-0500") == utc
    precise = pypi_dates.parse_time("2024-02-26T20:33:20.308820Z")
    assert (precise.second, precise.microsecond) == (20, 308820)
    with pytest.raises(ValueError, match="not an ISO 8601 time"):
        pypi_dates.parse_time("November 2023")
    # --tebench-swebench-pypi-date takes what the rule reads (as written: it is in result keys)
    import argparse

    from pytest_tebench.benchmarks.swebench.settings import pypi_date

    assert [pypi_date(v) for v in ("today", "2023-11-01", "2023-11-01T00:00:00Z")] == [
        "today", "2023-11-01", "2023-11-01T00:00:00Z",
    ]  # fmt: skip
    with pytest.raises(argparse.ArgumentTypeError, match="not 'today' nor an ISO 8601"):
        pypi_date("last November")


def test_the_dated_view_lists_only_what_was_uploaded_by_its_date(index: pin_check.IndexPages) -> None:
    def versions(path: str) -> list[str]:
        status, text = pypi_dates.dated_response(path, index.fetch, "INDEX")
        assert status == 200
        return re.findall(r">cachetools-([0-9.]+)-py3-none-any\.whl<", text)

    # cachetools 5.3.2 was uploaded 2023-10-24T18:12:02, 5.3.3 2024-02-26T20:33:20.308820
    assert versions("/2023-11-01T00:00:00Z/cachetools/")[-2:] == ["5.3.1", "5.3.2"]
    assert versions("/2024-02-26T20:33:20Z/cachetools/")[-1] == "5.3.2"  # a third of a second early
    assert versions("/2024-02-26T20:33:21Z/cachetools/")[-1] == "5.3.3"
    assert pypi_dates.dated_response("/cachetools/", index.fetch, "INDEX")[0] == 404
    assert pypi_dates.dated_response("/yesterday/cachetools/", index.fetch, "INDEX")[0] == 400


def test_the_dated_view_keeps_hashes_requires_python_and_yanked() -> None:
    def file(name: str, uploaded: str, **more: Any) -> dict[str, Any]:
        return {"filename": name, "upload-time": uploaded, "url": f"https://files/{name}", **more}

    page = {
        "name": "demo",
        "files": [
            file("demo-1.0.tar.gz", "2020-01-01T00:00:00Z", hashes={"sha256": "ab12"}),
            file("demo-2.0-py3-none-any.whl", "2023-01-01T00:00:00Z", **{"requires-python": ">=3.8"}),
            file("demo-2.1.tar.gz", "2023-02-01T00:00:00Z", yanked="broken <b>"),
            file("demo-3.0.tar.gz", "2024-01-01T00:00:00Z"),
        ],
    }
    text = pypi_dates.dated_page(page, pypi_dates.parse_time("2023-11-01"))
    links = [line for line in text.splitlines() if line.startswith("<a ")]
    assert links == [
        '<a href="https://files/demo-1.0.tar.gz#sha256=ab12">demo-1.0.tar.gz</a><br>',
        '<a href="https://files/demo-2.0-py3-none-any.whl" data-requires-python="&gt;=3.8">'
        "demo-2.0-py3-none-any.whl</a><br>",
        '<a href="https://files/demo-2.1.tar.gz" data-yanked="broken &lt;b&gt;">demo-2.1.tar.gz</a><br>',
    ]


def test_the_dated_view_serves_on_loopback_from_its_upstream(tmp_path: Path) -> None:
    """``pypi_dates.py serve`` as the build runs it, over a loopback upstream of recorded pages."""
    import os
    import signal
    import socket
    import subprocess
    import sys
    import threading
    import urllib.request
    from http.server import BaseHTTPRequestHandler
    from http.server import ThreadingHTTPServer

    pages = json.loads(PAGES.read_text())

    class Upstream(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = json.dumps(pages["INDEX" + self.path]).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    upstream = ThreadingHTTPServer(("127.0.0.1", 0), Upstream)
    threading.Thread(target=upstream.serve_forever, daemon=True).start()
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    log = tmp_path / "index.log"
    env = {**os.environ, "TEBENCH_PYPI_UPSTREAM": f"http://127.0.0.1:{upstream.server_port}"}
    script = pypi_dates.__file__
    started = subprocess.run(
        [sys.executable, script, "serve", str(port), str(log)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert started.stdout.strip() == f"http://127.0.0.1:{port}"
    try:
        with urllib.request.urlopen(
            f"http://127.0.0.1:{port}/2023-11-01T00:00:00Z/cachetools/", timeout=30
        ) as r:
            text = r.read().decode()
        assert ">cachetools-5.3.2-py3-none-any.whl<" in text and "5.3.3" not in text
    finally:
        pid = int(re.search(r"\(pid (\d+)\)", log.read_text()).group(1))  # type: ignore[union-attr]
        os.kill(pid, signal.SIGTERM)
        upstream.shutdown()
        upstream.server_close()


def test_a_submodule_pypi_publishes_is_installed_as_pypi_stood_when_the_submodule_last_moved(
    tmp_path: Path,
) -> None:
    import os
    import subprocess

    # astropy 1.3's astropy_helpers is a submodule: git archive leaves it empty, and ah_bootstrap's
    # download from pypi.python.org fails in the build (measured on astropy-7166)
    repo = tmp_path / "astropy"
    env = {"GIT_COMMITTER_DATE": "2018-07-24T09:42:43+01:00", "GIT_AUTHOR_DATE": "2018-07-24T09:42:43+01:00"}

    def run(*args: str) -> str:
        done = subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True,
                              env={**os.environ, **env})  # fmt: skip
        return done.stdout.strip()

    repo.mkdir()
    run("init", "-q")
    run("config", "user.email", "t@example.com")
    run("config", "user.name", "t")
    run(
        "update-index",
        "--add",
        "--cacheinfo",
        "160000,7f11678c03286f72acc9bab77868dabaeb368fda,astropy_helpers",
    )
    run("commit", "-qm", "helpers moved")
    env.update(GIT_COMMITTER_DATE="2018-09-30T21:18:05-04:00", GIT_AUTHOR_DATE="2018-09-30T21:18:05-04:00")
    (repo / "setup.py").write_text("import ah_bootstrap\n")
    run("add", "setup.py")
    run("commit", "-qm", "later")
    head = run("rev-parse", "HEAD")
    found = environment.submodule_packages(repo, head)
    assert found == (("astropy-helpers", "2018-07-24T08:42:43Z"),)  # the commit that moved it, in UTC
    assert environment.submodule_packages(repo, run("rev-parse", "HEAD~1")) == found

    def plan(version: str, **more: Any) -> environment.EnvironmentPlan:
        spec = MAP_REPO_VERSION_TO_SPECS["astropy/astropy"][version]
        return environment.plan_environment(
            "astropy/astropy", version, spec, setup_commit=head, read_file=lambda p: None,
            requirement_paths=(), submodules=found, **more,
        )  # fmt: skip

    old = plan("1.3")  # Python 3.6: the dated index view
    line = "PIP_INDEX_URL=http://127.0.0.1:3141/2018-07-24T08:42:43Z/ python -m pip install astropy-helpers"
    assert old.setup[-1] == line and old.setup.index(line) > old.setup.index(
        "python /opt/swebench/pypi_dates.py serve 3141"
    )
    new = plan("3.1")  # Python 3.9: pip's own option
    assert new.setup[-1] == "PIP_UPLOADED_PRIOR_TO=2018-07-24T08:42:43Z python -m pip install astropy-helpers"
    # never later than the run's date; without a date, today's index
    assert (
        plan("3.1", pypi_date="2017-01-01")
        .setup[-1]
        .startswith("PIP_UPLOADED_PRIOR_TO=2017-01-01T00:00:00Z ")
    )
    assert plan("3.1", pypi_date="").setup[-1] == "python -m pip install astropy-helpers"
    # astropy 4.1 and later have no submodule: nothing to install
    run("rm", "-q", "--cached", "astropy_helpers")
    run("commit", "-qm", "helpers gone")
    assert environment.submodule_packages(repo, run("rev-parse", "HEAD")) == ()
