"""The test runner's integrity, benchmark-neutral: a prediction must not grade itself.

* :mod:`.paths`: which files a prediction may not change, given the test command (the runner's
  configuration, start-up files, the scripts the command runs): decided before anything runs;
* :mod:`.sandbox.tebench_guard`: a pytest plugin loaded first in the sandboxed test process; it
  fingerprints the verdict-making code and hooks and records each test's outcome, and writes one
  record tagged with a per-run nonce; :mod:`.sandbox.tebench_run` does the same for a test command
  that runs a runner script (django's ``tests/runtests.py`` over unittest, sympy's ``bin/test``),
  which it starts itself; what both share is :mod:`.sandbox.tebench_core`;
* :mod:`.evidence`: the host side: finds that record in the log, checks it against the graded log
  and against the gold run of the same instance in the same environment, and says what was tampered
  with.

The threat model these serve is docs/threat-model.md.
"""
