"""tebench_run: the harness's guard for test commands that run a runner script, not pytest.

``python -m tebench_run [--runner MODULE]... SCRIPT ARGS...`` (from the guard's read-only mount on
``PYTHONPATH``; ``--runner`` names the tree's runner modules, which the host knows per repository) runs
``SCRIPT`` as ``python SCRIPT ARGS...`` would (``__main__``, ``__file__``, ``sys.argv``, the script's
folder first on ``sys.path``), in this process, after the guard is in place; django's
``tests/runtests.py`` (its DiscoverRunner over :mod:`unittest`) and sympy's ``bin/test`` (its own
runner) are what SWE-bench runs this way. Before any code of the tree under test runs it

* fingerprints :mod:`unittest`'s verdict-making modules and the built-ins (:mod:`tebench_core`),
  and each runner module the moment its own code has run (an import hook), before anything else
  can touch it; checks them again after every test and at the end;
* records each test's own outcome where the runner decides it: a :class:`unittest.TestCase` reports
  to a result object, and the case's ``run`` hands it a view of that result which notes each
  ``addSuccess``/``addFailure``/... before passing it on (so a patched ``TextTestResult`` cannot
  hide what the case reported); a runner of its own (sympy's) reports each test to a reporter
  class of its runner module (one with ``entering_test`` and ``test_pass``/``test_fail``/...
  methods), whose methods are wrapped as the module is loaded;
* watches the tree's test-side modules (test helpers such as ``sympy/testing/pytest.py``, test
  modules) from the moment their own code has run, as the pytest plugin does
  (:class:`tebench_core.TestSide`);
* writes the same record line as the pytest plugin, ``>>>>> tebench-guard <nonce> <json>``, when
  the script ends (returns, exits or raises).

The tests run in this process: sympy's runner starts a second interpreter for hash randomization
unless ``PYTHONHASHSEED`` is set, so the harness's command sets a random one (what sympy's own
documentation does to run the tests in-process). A test outcome printed by any other process or
code is not in the record, and the host counts it as unconfirmed.

Python 3.5 syntax, standard library only (see :mod:`tebench_core`).
"""

import os
import runpy
import sys
import typing  # noqa: F401 (the type comments)
import unittest

import tebench_core as core

#: Modules of :mod:`unittest` whose functions and classes make a verdict or print it.
UNITTEST_MODULES = (
    "unittest",
    "unittest.case",
    "unittest.result",
    "unittest.runner",
    "unittest.loader",
    "unittest.suite",
    "unittest.main",
    "unittest.signals",
    "unittest.util",
)
#: A reporter method -> the outcome it reports (``entering_test`` names the test).
REPORTER_OUTCOMES = {
    "test_pass": "passed",
    "test_fail": "failed",
    "test_exception": "error",
    "test_skip": "skipped",
    "test_xfail": "xfailed",
    "test_xpass": "xpassed",
}
#: A unittest result method -> the outcome it reports.
RESULT_OUTCOMES = {
    "addSuccess": "passed",
    "addFailure": "failed",
    "addError": "error",
    "addSkip": "skipped",
    "addExpectedFailure": "xfailed",
    "addUnexpectedSuccess": "xpassed",
}
_WORSE = ("error", "failed")


class _Guard(object):
    def __init__(self, nonce, tree, runners, repo=""):
        # type: (str, str, tuple[str, ...], str) -> None
        self.tree = tree
        #: the tree's runner modules (their files are refused in predictions, so what their own
        #: code makes at import is the runner's: watched from then on)
        self.runners = runners
        self.output = core.Output(nonce)
        self.changes = {}  # type: dict[str, dict[str, str]]
        self.test_side_changes = {}  # type: dict[str, dict[str, str]]
        self.items = {}  # type: dict[str, str]
        self.outcome = {}  # type: dict[str, str]
        self.anomalies = set()  # type: set[tuple[str, str, str]]
        self.current = ""
        self.script = ""
        _install_unittest(self)
        self.start = core.Snapshot(tree, UNITTEST_MODULES)
        self.static = self.start.static()
        #: the tree's test helpers and test modules (runner modules are watched by ``start``)
        self.test_side = core.TestSide(tree, repo, exclude=runners)

    def check(self, when):
        # type: (str) -> None
        for key, by in self.start.changes():
            if key not in self.changes:
                self.changes[key] = {"when": when, "by": by}
        for key, by in self.test_side.changes():
            if key not in self.test_side_changes:
                self.test_side_changes[key] = {"when": when, "by": by}

    def seen(self, names, outcome):
        # type: (list[str], str) -> None
        """A test's outcome as the runner reported it (a failed sub-test keeps the test failed)."""
        for name in names:
            if name and self.outcome.get(name) not in _WORSE:
                self.outcome[name] = outcome

    def loaded(self, name, module):
        # type: (str, object) -> None
        """A runner module's own code has run: wrap its reporters, then watch it."""
        for value in list(vars(module).values()):
            if isinstance(value, type) and value.__module__ == name and _is_reporter(value):
                _install_reporter(self, value)
        self.start.watch(name, module)

    def write(self):
        # type: () -> None
        if self.output.written:
            return
        self.check("end")
        for name in self.runners:
            module = sys.modules.get(name)
            if module is not None and self.start.watched(name) is not module:
                # loaded past the import hook (a finder ahead of it, a hand-made module)
                self.anomalies.add(("runner-module-unwatched", name, core.where(module)))
        record = {
            "version": core.VERSION,
            "pid": os.getpid(),
            "tree": self.tree,
            "runner": self.script,
            "python": sys.version.split()[0],
            "static": self.static,
            "changes": self.changes,
            "test_side": self.test_side_changes,
            "hooks": [],
            "item_classes": [],
            "items": self.items,
            "anomalies": sorted(list(a) for a in self.anomalies),
            "outcomes": self.outcome,
            "trace": core.trace(),
        }  # type: dict[str, object]
        self.output.record(record)


# -- unittest ---------------------------------------------------------------------------------
def _names(test):
    # type: (object) -> list[str]
    """What a verbose unittest log calls ``test``: its ``str`` (``test_x (mod.Class)``; 3.11 adds
    ``.test_x``) or, for a test with a docstring, that docstring's first line."""
    names = [str(test)]
    describe = getattr(test, "shortDescription", None)
    try:
        first = describe() if describe is not None else None
    except Exception:
        first = None
    if first:
        names.append(str(first))
    return names


class _Observed(object):
    """The result a test case reports to, seen by the guard on the way: every attribute is the
    result's own, and its ``add*`` methods note the outcome before they run."""

    def __init__(self, result, guard):
        # type: (object, _Guard) -> None
        object.__setattr__(self, "_tebench_result", result)
        object.__setattr__(self, "_tebench_guard", guard)

    def __getattr__(self, name):
        # type: (str) -> object
        result = object.__getattribute__(self, "_tebench_result")
        value = getattr(result, name)
        outcome = RESULT_OUTCOMES.get(name)
        if name == "addSubTest":
            return _sub_test(object.__getattribute__(self, "_tebench_guard"), value)
        if outcome is None or not callable(value):
            return value
        guard = object.__getattribute__(self, "_tebench_guard")

        def observed(test, *args, **kwargs):  # type: ignore[no-untyped-def]
            guard.seen(_names(test), outcome)
            return value(test, *args, **kwargs)

        return observed

    def __setattr__(self, name, value):
        # type: (str, object) -> None
        setattr(object.__getattribute__(self, "_tebench_result"), name, value)


def _sub_test(guard, add):
    # type: (_Guard, typing.Callable[..., object]) -> typing.Callable[..., object]
    def observed(test, subtest, err):  # type: ignore[no-untyped-def]
        if err is not None:
            failure = issubclass(err[0], getattr(test, "failureException", AssertionError))
            guard.seen(_names(test), "failed" if failure else "error")
        return add(test, subtest, err)

    return observed


def _install_unittest(guard):
    # type: (_Guard) -> None
    """``TestCase.run`` hands the case a view of its result (before the snapshot: the wrapper is
    what is watched, so rebinding ``run`` is a change)."""
    case = unittest.TestCase
    original = case.run

    def run(self, result=None):  # type: ignore[no-untyped-def]
        if result is None:
            return original(self, result)
        names = _names(self)
        method = getattr(self, getattr(self, "_testMethodName", ""), None)
        for name in names:
            guard.items[name] = core.origin(method)[1] if method is not None else ""
        try:
            return original(self, _Observed(result, guard))  # type: ignore[arg-type]
        finally:
            guard.check(names[0])

    run.__doc__ = original.__doc__
    case.run = run  # type: ignore[method-assign]


# -- a runner's own reporter (sympy) ----------------------------------------------------------
def _is_reporter(cls):
    # type: (type) -> bool
    members = vars(cls)
    return "entering_test" in members and any(name in members for name in REPORTER_OUTCOMES)


def _install_reporter(guard, cls):
    # type: (_Guard, type) -> None
    entering = vars(cls).get("entering_test")
    if entering is not None:

        def entering_test(self, f, *args, **kwargs):  # type: ignore[no-untyped-def]
            guard.current = str(getattr(f, "__name__", ""))
            guard.items[guard.current] = core.origin(f)[1]
            return entering(self, f, *args, **kwargs)

        cls.entering_test = entering_test  # type: ignore[attr-defined]
    for method_name, outcome in REPORTER_OUTCOMES.items():
        method = vars(cls).get(method_name)
        if method is not None:
            setattr(cls, method_name, _reporting(guard, method, outcome))


def _reporting(guard, method, outcome):
    # type: (_Guard, typing.Callable[..., object], str) -> typing.Callable[..., object]
    def reported(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        guard.seen([guard.current], outcome)
        try:
            return method(self, *args, **kwargs)
        finally:
            guard.check(guard.current)

    reported.__name__ = method.__name__
    return reported


# -- runner modules, watched as they load -----------------------------------------------------
class _Finder(object):
    """First on ``sys.meta_path``: a runner module is loaded by the finder that would load it, and
    handed to the guard the moment its own code has run."""

    def __init__(self, guard):
        # type: (_Guard) -> None
        self.guard = guard
        self.busy = set()  # type: set[str]

    def find_spec(self, name, path, target=None):  # type: ignore[no-untyped-def]
        if name not in self.guard.runners or name in self.busy:
            return None
        self.busy.add(name)
        try:
            spec = None
            for finder in list(sys.meta_path):
                find = getattr(finder, "find_spec", None)
                if finder is self or find is None:
                    continue
                spec = find(name, path, target)
                if spec is not None:
                    break
        finally:
            self.busy.discard(name)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        spec.loader = core.WatchedLoader(spec.loader, self.guard, name)
        return spec


def main(argv):
    # type: (list[str]) -> None
    runners = []  # type: list[str]
    while len(argv) >= 2 and argv[0] == "--runner":
        runners.append(argv[1])
        argv = argv[2:]
    if not argv:
        sys.stderr.write("usage: python -m tebench_run [--runner MODULE]... SCRIPT [ARGS...]\n")
        sys.exit(2)
    nonce, tree, repo = core.take_environment()
    guard = _Guard(nonce, tree, tuple(runners), repo)
    script = argv[0]
    guard.script = script
    guard.test_side.install()
    sys.meta_path.insert(0, _Finder(guard))
    # as `python SCRIPT ARGS`: the script's own folder first on sys.path (this one's is not)
    sys.argv = list(argv)
    sys.path[0] = os.path.dirname(os.path.realpath(script))
    try:
        runpy.run_path(script, run_name="__main__")
    finally:
        guard.write()


if __name__ == "__main__":
    main(sys.argv[1:])
