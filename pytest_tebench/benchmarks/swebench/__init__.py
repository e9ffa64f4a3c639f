"""SWE-bench: does a model's patch resolve the issue? Graded as SWE-bench grades it.

Modules, low to high: ``official`` (the ``swebench`` package's specifications, log parsers and
grading, behind one small interface), ``instances`` (row validation), ``environment`` (Docker
images built from Debian packages and PyPI), ``evaluation`` (apply, run, grade one prediction),
``summary`` (per-model and per-repository figures, the official run report) and ``adapter``
(the benchmark adapter). Nothing here imports pytest.
"""
