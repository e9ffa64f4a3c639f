"""A conda ``environment.yml`` read as pip requirements (SWE-bench's ``packages: environment.yml``).

SWE-bench creates such environments with conda from conda-forge, which is not reachable here.
Most conda-forge packages of these files are PyPI packages under the same name (``numpy``,
``pandas``, ``pint``), some under another (``matplotlib-base`` is ``matplotlib``, ``dask-core`` is
``dask``, ``iris`` is ``scitools-iris``), and a few are conda's own builds of C libraries or
packages PyPI lacks (``hdf5``, whose h5py wheels carry their own; ``cdms2``; ``cfgrib``, which
needs the ecCodes library at import time): those are left out, listed in :data:`CONDA_ONLY`.
Conda's ``name=1.2`` (a version prefix) is pip's ``name==1.2.*``; the file's ``pip:`` section is
taken as is. Only the ``dependencies`` list is read (channels and names do not matter to pip).
"""

from __future__ import annotations

import re

#: conda-forge names whose PyPI package has another name.
CONDA_TO_PYPI = {
    "matplotlib-base": "matplotlib",
    "dask-core": "dask",
    "iris": "scitools-iris",
    "pytables": "tables",
    "pytorch": "torch",
}
#: conda-forge packages with no PyPI equivalent that installs and imports without conda's C libraries.
CONDA_ONLY = frozenset({"python", "pip", "hdf5", "cdms2", "cfgrib", "libnetcdf", "gdal", "proj", "geos"})

_ITEM = re.compile(r"^(\s*)-\s*(.*?)\s*$")
_CONDA_SPEC = re.compile(r"^([A-Za-z0-9_.\-]+)\s*(.*)$")


def pip_requirements(text: str) -> list[str]:
    """The pip requirements an ``environment.yml``'s ``dependencies`` stand for, in file order."""
    requirements: list[str] = []
    in_dependencies = False
    pip_indent: int | None = None
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].rstrip()
        if not line.strip():
            continue
        if not line.startswith((" ", "-")):
            # a top-level key: name, channels, dependencies
            in_dependencies = line.strip() == "dependencies:"
            pip_indent = None
            continue
        item = _ITEM.match(line)
        if not in_dependencies or item is None:
            continue
        indent, value = len(item.group(1)), item.group(2)
        if pip_indent is not None and indent > pip_indent:
            requirements.append(value)
            continue
        pip_indent = None
        if value.rstrip(":").strip() == "pip" and value.endswith(":"):
            pip_indent = indent
            continue
        converted = _from_conda(value)
        if converted is not None:
            requirements.append(converted)
    return requirements


def _from_conda(spec: str) -> str | None:
    """One conda match spec as a pip requirement, or None for a conda-only package."""
    found = _CONDA_SPEC.match(spec.strip())
    if found is None:
        return None
    name, constraint = found.group(1), found.group(2).replace(" ", "")
    if name.lower() in CONDA_ONLY:
        return None
    name = CONDA_TO_PYPI.get(name.lower(), name)
    if re.fullmatch(r"=[^=<>!].*", constraint):
        # conda's single '=' pins a version prefix
        version = constraint[1:].rstrip(".*")
        constraint = f"=={version}.*"
    return name + constraint
