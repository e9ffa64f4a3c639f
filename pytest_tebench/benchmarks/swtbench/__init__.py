"""SWT-bench: do a model's generated tests reproduce the issue? Graded as SWT-bench grades them.

SWT-bench (logic-star-ai/swt-bench, arXiv 2406.12952) turns SWE-bench rows into test-generation
tasks. This package reuses the SWE-bench package's environments, rows, patch application, log
parsers and Docker sandbox. Modules, low to high: ``grading`` (SWT-bench's transitions, success,
W/F→X/F→P/P→P and change coverage, pure functions), ``linecov`` (coverage.py brought into the
environment containers), ``integrity`` (what a prediction may change; the integrity plugin's seam),
``evaluation`` (one of the six configurations), ``summary`` (per-model figures) and ``adapter``.
Nothing here imports pytest.
"""
