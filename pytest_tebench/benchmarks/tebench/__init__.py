"""TEBench: test evolution on Java/Maven projects (identification and update scoring).

Everything TEBench-specific lives in this package: the adapter, its scoring, labels and markers,
thresholds, terminal tables, JUnit property names, and the ``tebench build/export/collect``
pipeline. The benchmark-neutral core (loading, workspaces, executors, report writers, the pytest
layer) knows it only through the adapter contract in ``pytest_tebench/benchmarks/base.py``.
"""
