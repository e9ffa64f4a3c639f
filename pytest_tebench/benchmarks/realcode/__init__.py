"""RealCodeJava (MERA): a model writes the body of a Java method in a real repository; the
project's unit tests judge it. pass@k over n samples per (instance, model), with the oracle
(ground truth), the stub and the untouched repository (dry run) as references.

Modules: ``instances`` (row validation), ``answers`` (cleaning raw answers into bodies),
``predictions`` (reading n samples per instance and model), ``evaluation`` (workspaces and
Maven runs), ``scoring`` (pass rules and pass@k), ``summary`` (per-model metrics and reports),
``adapter`` (the benchmark contract), ``methods`` and ``builder`` (``tebench build --benchmark
realcode``: instances from any Maven repository). docs/realcode.md is the user's guide.
"""
