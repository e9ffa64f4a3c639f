"""SWE-bench Multilingual (``SWE-bench/SWE-bench_Multilingual``): rows in nine languages.

Modules, low to high: ``rows`` (which rows are multilingual, their language, ``eval_type``,
``image`` and ``eval_script``), ``grading`` (a log graded by the row's ``log_parser`` and
``eval_type`` with the ``swebench`` package's functions), ``runner_files`` (what a prediction may
not change per language), ``official_run`` (the row's ``eval_script`` in its image) and
``coverage`` (where each row can run here, and why not). Nothing here imports pytest.
"""
