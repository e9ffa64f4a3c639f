"""The pip lines of a SWE-bench environment's setup script, from its specification.

SWE-bench's packages (a requirements file, read from the local mirror at ``environment_setup_commit``
as its ``get_requirements_by_commit`` reads GitHub; a conda ``environment.yml`` as PyPI's packages;
or the named packages), then its ``pip_packages`` pins, then the git submodules PyPI publishes; all
resolved as PyPI stood on a date (pip's ``--uploaded-prior-to`` where the Python's newest pip has
it, else the dated index view of :mod:`.pypi_dates` started in the build step), an exact pin's
dependencies as the index stood when the pin was uploaded.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pytest_tebench.benchmarks.swebench import conda_env
from pytest_tebench.benchmarks.swebench import pypi_dates
from pytest_tebench.errors import UnsupportedEnvironment

#: PyPI's own index (bionic's pip 9 defaults to the old pypi.python.org, which is gone).
PYPI_INDEX = "https://pypi.org/simple"
#: Where the build finds :mod:`.pypi_dates` (the date an exact pin's dependencies resolve at).
PYPI_DATES_SCRIPT = "/opt/swebench/pypi_dates.py"
PYPI_DATES_SOURCE = Path(pypi_dates.__file__).read_text(encoding="utf-8")
#: Where an environment whose pip has no ``--uploaded-prior-to`` finds PyPI as it stood on a date:
#: :mod:`.pypi_dates`' index view, started in the build step itself (the step's own network).
DATED_INDEX_PORT = 3141
DATED_INDEX = f"http://127.0.0.1:{DATED_INDEX_PORT}"
#: The oldest Python whose newest pip has ``--uploaded-prior-to`` (the last pips of 3.6 and 3.8
#: predate it).
PIP_DATES_FROM = (3, 9)


def _pip_dates(python: str) -> bool:
    """Whether the newest pip of ``python`` resolves at a date by itself."""
    return _python_version(python) >= PIP_DATES_FROM


def _dated(python: str, when: str) -> str:
    """The variable that makes one pip command resolve as PyPI stood at ``when`` (a shell word),
    after :func:`date_rule_lines` (whose index view serves any date)."""
    if _pip_dates(python):
        return f"PIP_UPLOADED_PRIOR_TO={when}"
    return f"PIP_INDEX_URL={DATED_INDEX}/{when}/"


def date_rule_lines(python: str, pypi_date: str) -> list[str]:
    """Shell lines after which pip resolves as PyPI stood at ``pypi_date`` ("": today's index):
    pip's ``--uploaded-prior-to`` where the Python's pip has it, else the dated index view of
    :mod:`.pypi_dates` started for the build step (both apply the same rule, :func:`.pypi_dates.
    uploaded_by`). ``$TEBENCH_PYPI_UPSTREAM`` then names the real index."""
    if not pypi_date:
        return []
    if _pip_dates(python):
        return [f"export PIP_UPLOADED_PRIOR_TO={shlex.quote(pypi_date)}"]
    return [
        f'export {pypi_dates.UPSTREAM_ENV}="${{PIP_INDEX_URL:-{PYPI_INDEX}}}"',
        f"python {PYPI_DATES_SCRIPT} serve {DATED_INDEX_PORT}",
        f"export PIP_INDEX_URL={DATED_INDEX}/{shlex.quote(pypi_date)}/",
    ]


def _python_version(python: str) -> tuple[int, ...]:
    """``"3.9"`` -> ``(3, 9)``; ``()`` for what is not a version."""
    try:
        return tuple(int(part) for part in python.split("."))
    except ValueError:
        return ()


#: A pip requirement naming one exact version (``name==1.2.3``, ``name[extra]==1.2``).
EXACT_PIN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*(\[[A-Za-z0-9,._-]+\])?==[A-Za-z0-9.+!_-]+")

_EXCLUDED_REQ_PREFIXES = ("-e .", "#", ".[test")


def _first_file(repo: str, paths: tuple[str, ...], read_file: Callable[[str], str | None]) -> str:
    for path in paths:
        text = read_file(path)
        if text is not None:
            return text
    raise UnsupportedEnvironment(f"no environment.yml at {list(paths)} in {repo}")


def _requirements(repo: str, paths: tuple[str, ...], read_file: Callable[[str], str | None]) -> str:
    """SWE-bench's ``get_requirements_by_commit``, reading the mirror instead of GitHub."""
    for path in paths:
        text = read_file(path)
        if text is not None:
            break
    else:
        raise UnsupportedEnvironment(f"no requirements file at {list(paths)} in {repo}")
    req_dir = "/".join(path.split("/")[:-1])
    original: list[str] = []
    additional: list[str] = []
    for line in text.split("\n"):
        if line.strip().startswith("-r"):
            name = line[len("-r") :].strip()
            nested = read_file(os.path.join(req_dir, name))
            if nested is not None:
                additional += [
                    x for x in nested.split("\n") if not x.strip().startswith(_EXCLUDED_REQ_PREFIXES)
                ]
        elif not line.strip().startswith(_EXCLUDED_REQ_PREFIXES):
            original.append(line)
    additional.append("\n".join(original))
    return "\n".join(additional)


def setup_lines(
    repo: str,
    spec: dict[str, Any],
    *,
    read_file: Callable[[str], str | None],
    requirement_paths: tuple[str, ...],
    clean_requirements: Callable[[str], str],
    env_yml_paths: tuple[str, ...],
    pypi_date: str,
    submodules: tuple[tuple[str, str], ...],
) -> tuple[list[str], str]:
    """The lines that fill the venv for ``spec`` (run in it, network on, in this order), and the
    requirement files' text they install (``""``: none). ``read_file`` and ``submodules`` are
    :func:`.environment.plan_environment`'s."""
    python = str(spec.get("python", ""))
    # the newest pip the Python has, then PyPI as it stood at pypi_date for everything else
    setup = ["python -m pip install --upgrade pip", *date_rule_lines(python, pypi_date)]
    setup.append("python -m pip install --upgrade setuptools wheel")
    packages = str(spec.get("packages", "") or "")
    requirements = ""
    if packages == "requirements.txt":
        requirements = clean_requirements(_requirements(repo, requirement_paths, read_file))
        setup.append(f"cat > /tmp/requirements.txt <<'EOF_REQS'\n{requirements}\nEOF_REQS")
        setup.append("python -m pip install -r /tmp/requirements.txt")
    elif packages == "environment.yml":
        # conda-forge's packages as PyPI's (conda_env.py); one that will not install is left out, as
        # an optional test dependency the tests skip without, rather than failing the environment
        requirements = "\n".join(conda_env.pip_requirements(_first_file(repo, env_yml_paths, read_file)))
        setup.append(f"cat > /tmp/environment.txt <<'EOF_REQS'\n{requirements}\nEOF_REQS")
        setup.append(
            "python -m pip install -r /tmp/environment.txt || while read -r req; do "
            'python -m pip install "$req" || echo "pytest-tebench: left out $req"; '
            "done < /tmp/environment.txt"
        )
    elif packages:
        # conda package names; for these repositories they are PyPI names too (numpy, pandas, pytest)
        setup.append(f"python -m pip install {packages}")
    pins = [str(p) for p in spec.get("pip_packages") or []]
    exact = [p for p in pins if EXACT_PIN.fullmatch(p)]
    if exact and pypi_date and _pip_dates(python):
        # an exact version is what the spec asks whatever its date (SWE-bench's later specs pin e.g.
        # setuptools==70.0.0 or tox==4.16.0, newer than pypi_date) ...
        setup.append(
            "env -u PIP_UPLOADED_PRIOR_TO python -m pip install --no-deps "
            + " ".join(shlex.quote(p) for p in exact)
        )
        # ... and its dependencies resolve as the index stood when it was uploaded, if that is later
        # than pypi_date: tox 4.16.0 needs cachetools>=5.3.3, which did not exist at pypi_date
        for pin in exact:
            date = f'"$(python {PYPI_DATES_SCRIPT} "$PIP_UPLOADED_PRIOR_TO" {shlex.quote(pin)})"'
            setup.append(f"PIP_UPLOADED_PRIOR_TO={date} python -m pip install {shlex.quote(pin)}")
    elif exact and pypi_date:
        # the same rule through the dated index view: each pin from today's index, without its
        # dependencies, then those as the index stood at the pin's upload (or pypi_date, if later)
        quoted = " ".join(shlex.quote(p) for p in exact)
        setup.append(f'PIP_INDEX_URL="${pypi_dates.UPSTREAM_ENV}" python -m pip install --no-deps {quoted}')
        for pin in exact:
            date = f'"$(python {PYPI_DATES_SCRIPT} {shlex.quote(pypi_date)} {shlex.quote(pin)})"'
            setup.append(f"PIP_INDEX_URL={DATED_INDEX}/{date}/ python -m pip install {shlex.quote(pin)}")
    if pins:
        setup.append("python -m pip install " + " ".join(shlex.quote(p) for p in pins))
    for project, moved in submodules:
        # as PyPI stood when the submodule last moved (never later than pypi_date)
        if pypi_date:
            when = shlex.quote(min(moved, pypi_dates.format_time(pypi_dates.parse_time(pypi_date))))
            setup.append(f"{_dated(python, when)} python -m pip install {shlex.quote(project)}")
        else:
            setup.append(f"python -m pip install {shlex.quote(project)}")
    return setup, requirements
