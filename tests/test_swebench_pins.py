"""Exact pins newer than the PyPI date: the check over specs, on index pages recorded on 2026-11-25.

``fixtures/swebench-pins/pypi-pages.json`` holds the Simple API pages (one file per version, the
pinned releases' wheels) and the wheel metadata that checking sphinx 3.5 and flask 2.0 fetched,
index and file hosts replaced by ``INDEX`` and ``FILES``. The dates below were read off PyPI's
release histories by hand.
"""

from __future__ import annotations

import json
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
    # the test command runs in the clean environment of the runner-integrity work
    test = lines.index(
        "env -i \"${keep[@]}\" PYTHONNOUSERSITE=1 bash -c 'tox --current-env -epy39 -v -- tests/test_x.py'"
    )
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


def test_pins_of_environments_whose_pip_cannot_date_are_installed_without_the_date_script() -> None:
    # astropy 1.3 runs on Python 3.6 and pins PyYAML==3.12 (and more): its last pip has no
    # --uploaded-prior-to, and pypi_dates.py (3.9 code) would not even start there
    spec = MAP_REPO_VERSION_TO_SPECS["astropy/astropy"]["1.3"]
    assert spec["python"] == "3.6" and "PyYAML==3.12" in spec["pip_packages"]
    plan = environment.plan_environment(
        "astropy/astropy", "1.3", spec, setup_commit="0" * 40, read_file=lambda p: None, requirement_paths=()
    )
    assert not plan.uses_pypi_dates()
    assert "python -m pip install " + " ".join(spec["pip_packages"]) in plan.setup
    sphinx = environment.plan_environment(
        "sphinx-doc/sphinx", "3.5", MAP_REPO_VERSION_TO_SPECS["sphinx-doc/sphinx"]["3.5"],
        setup_commit="0" * 40, read_file=lambda p: None, requirement_paths=(),
    )  # fmt: skip
    assert sphinx.uses_pypi_dates()
