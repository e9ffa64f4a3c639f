"""tebench_guard: the harness's pytest plugin inside the sandboxed test process.

Loaded first (``pytest -p tebench_guard``, from a read-only mount) before any code of the tree
under test can run, except what pytest's own ini and entry points load (the path policy refuses a
prediction that changes those). It

* fingerprints, at import, the functions and classes that make a verdict (pytest's runner,
  reports, outcomes, ``raises``, assertion rewriting, fixtures, terminal, skipping, unittest and
  doctest support, pluggy, :mod:`unittest`) and the built-ins, and checks them again (by
  identity: no object it holds can be replaced unseen) at the end of collection, at every report
  and after every test: each change is recorded once, with where the new object comes from;
* records the hook implementations of the hooks that make a verdict, the item classes, and per
  test a digest of the test function's code and the outcome it saw itself, from the raw call
  information (before any other plugin's report hook runs);
* watches the tree's test-side modules (test helpers, test modules) from the moment their own code
  has run (:class:`tebench_core.TestSide`, an import hook installed at import), checked at the same
  points;
* runs canaries after the session's own tests: tests of its own whose verdict is known, written
  outside the tree under names drawn from the nonce, and records what the runner reported of them
  (a runner that lies about every test, where the runner is the code under test, is caught);
* writes one line, ``>>>>> tebench-guard <nonce> <json>``, to a copy of the standard output taken
  at import, when pytest unconfigures.

It writes no verdict of its own: the host (``pytest_tebench.integrity.evidence``) compares this
record with the graded log and with the gold run of the same instance. What it shares with the
runner-script launcher (the snapshot, the record line) is :mod:`tebench_core`. Kept to Python 3.5
syntax (type comments: the Ubuntu-suite environments are 3.6, official django images 3.5) and to
every pytest from 3.3 on (astropy 1.3's pin), and importing nothing of pytest-tebench (it runs in
the environment's interpreter, where pytest-tebench is not installed).
"""

import os
import shutil
import sys
import tempfile
import typing  # noqa: F401 (the type comments)
import unittest

import pytest
import tebench_core as core

MARK = core.MARK
VERSION = core.VERSION
_NONCE, _TREE, _REPO = core.take_environment()
_OUTPUT = core.Output(_NONCE)
#: the tree's test helpers and test modules, watched from the moment their code has run: the hook
#: goes in now, before any code of the tree can run
_TEST_SIDE = core.TestSide(_TREE, _REPO)
_TEST_SIDE.install()

#: Modules whose functions and classes make a verdict (those absent in a pytest version are skipped).
WATCHED_MODULES = (
    "pytest",
    "_pytest.runner",
    "_pytest.reports",
    "_pytest.outcomes",
    "_pytest.python",
    "_pytest.python_api",
    "_pytest.raises",
    "_pytest.main",
    "_pytest.nodes",
    "_pytest.fixtures",
    "_pytest.terminal",
    "_pytest.skipping",
    "_pytest.unittest",
    "_pytest.doctest",
    "_pytest.capture",
    "_pytest.config",
    "_pytest.assertion",
    "_pytest.assertion.rewrite",
    "_pytest.assertion.util",
    "_pytest.mark",
    "_pytest.mark.structures",
    "pluggy",
    "pluggy._hooks",
    "pluggy._callers",
    "pluggy._manager",
    "pluggy._result",
    "pluggy.hooks",
    "pluggy.callers",
    "pluggy.manager",
    "unittest.case",
    "unittest.result",
)
#: Tests of the guard's own, run last, whose true verdict is known: ``(kind, body, outcome)``. All
#: but ``pass`` fail and are marked ``xfail(strict=True)``: a truthful runner reports them xfailed
#: (the session's exit status is unaffected), a runner that swallows failures reports them passed
#: or, strict, failed; ``pass`` catches a runner that turns everything into an expected failure
#: (SWE-bench counts XFAIL as a success). ``{n}`` is drawn from the nonce.
CANARIES = (
    ("assert", "    value = {n}\n    assert value + 1 == value\n", "xfailed"),
    ("raises", "    with pytest.raises(ValueError):\n        len('{n}')\n", "xfailed"),
    ("exception", "    raise KeyError({n})\n", "xfailed"),
    ("pass", "    assert len(str({n})) > 0\n", "passed"),
)
#: Hooks whose implementations decide or report a test's outcome.
VERDICT_HOOKS = (
    "pytest_runtestloop",
    "pytest_runtest_protocol",
    "pytest_runtest_setup",
    "pytest_runtest_call",
    "pytest_runtest_teardown",
    "pytest_pyfunc_call",
    "pytest_runtest_makereport",
    "pytest_runtest_logreport",
    "pytest_report_teststatus",
    "pytest_report_from_serializable",
    "pytest_terminal_summary",
    "pytest_assertrepr_compare",
)


def _in_tree(filename):
    # type: (str) -> bool
    return bool(core.in_tree(filename, _TREE))


class _Guard:
    def __init__(self):
        # type: () -> None
        self.start = core.Snapshot(_TREE, WATCHED_MODULES)
        self.static = self.start.static()
        self.config = None  # type: object
        self.changes = {}  # type: dict[str, dict[str, str]]
        #: the same for the tree's test-side modules (a rule of their own: SWT-bench's prediction
        #: is test code, whose doings to itself are not gold's)
        self.test_side = {}  # type: dict[str, dict[str, str]]
        self.hooks = {}  # type: dict[tuple[str, ...], dict[str, object]]
        self.items = {}  # type: dict[str, str]
        self.item_classes = set()  # type: set[str]
        self.anomalies = set()  # type: set[tuple[str, str, str]]
        self.phases = {}  # type: dict[str, dict[str, str]]
        #: node id of each canary -> its kind; what the runner's reports said of each
        self.canaries = {}  # type: dict[str, str]
        self.canary_reports = {}  # type: dict[str, str]
        self.canary_error = ""
        self.canary_folder = ""
        self.canary_items = []  # type: list[typing.Any]
        #: hook functions already described, by id (the functions are held in the values)
        self.described = {}  # type: dict[int, tuple[object, tuple[str, ...], dict[str, object]]]

    # -- checks ------------------------------------------------------------------------------
    def check(self, when):
        # type: (str) -> None
        for key, where in self.start.changes():
            if key not in self.changes:
                self.changes[key] = {"when": when, "by": where}
        for key, where in _TEST_SIDE.changes():
            if key not in self.test_side:
                self.test_side[key] = {"when": when, "by": where}
        self.check_hooks(when)

    def check_hooks(self, when):
        # type: (str) -> None
        pluginmanager = getattr(self.config, "pluginmanager", None)
        if pluginmanager is None:
            return
        for hook_name in VERDICT_HOOKS:
            caller = getattr(pluginmanager.hook, hook_name, None)
            if caller is None:
                continue
            getter = getattr(caller, "get_hookimpls", None)
            if getter is not None:
                impls = list(getter())
            else:  # pluggy < 0.7
                impls = list(getattr(caller, "_nonwrappers", [])) + list(getattr(caller, "_wrappers", []))
            for impl in impls:
                seen = self.described.get(id(impl.function))
                if seen is None or seen[0] is not impl.function:
                    seen = (impl.function, *_describe(hook_name, impl))
                    self.described[id(impl.function)] = seen
                hook_key, entry = seen[1], seen[2]
                if hook_key not in self.hooks:
                    self.hooks[hook_key] = dict(entry, when=when)

    def item(self, item):
        # type: (object) -> None
        nodeid = str(getattr(item, "nodeid", ""))
        if nodeid in self.canaries:
            return
        cls = type(item)
        self.item_classes.add(cls.__module__ + "." + cls.__qualname__)
        if "runtest" in vars(item):
            self.anomalies.add(("runtest-replaced", nodeid, core.where(vars(item)["runtest"])))
        obj = getattr(item, "obj", None) if hasattr(type(item), "obj") or "obj" in vars(item) else None
        # the test function's code: the same in every run of these test files, whatever the fix
        self.items[nodeid] = core.origin(obj)[1] if obj is not None else ""

    def phase(self, item, call):
        # type: (object, object) -> None
        nodeid = str(getattr(item, "nodeid", ""))
        when = str(getattr(call, "when", ""))
        excinfo = getattr(call, "excinfo", None)
        if excinfo is None:
            result = "ok"
        else:
            kind = excinfo.type
            if issubclass(kind, (pytest.skip.Exception, unittest.SkipTest)):
                result = "skipped"
            elif kind.__name__ == "XFailed":
                result = "xfailed"
                raiser = _raiser(excinfo)
                if raiser and _in_tree(raiser) and not _is_test_file(raiser, item):
                    self.anomalies.add(("xfail-raised-by", nodeid, os.path.relpath(raiser, _TREE)))
            else:
                result = "error:" + kind.__name__
        self.phases.setdefault(nodeid, {})[when] = result
        if when == "call" and result.startswith("error:") and _has_xfail_marker(item):
            self.phases[nodeid]["call"] = "xfailed"

    # -- canaries ----------------------------------------------------------------------------
    def add_canaries(self, session):
        # type: (typing.Any) -> None
        """The canaries collected, from a module written outside the tree (names drawn from the
        nonce: a prediction cannot know them), to run after the session's loop."""
        config = session.config
        option = config.option
        if getattr(option, "collectonly", False):
            self.canary_error = "not added: --collect-only"
            return
        worker = hasattr(config, "workerinput") or hasattr(config, "slaveinput")
        if worker or getattr(option, "numprocesses", None):
            # xdist's workers must collect the same items; the controller runs none
            self.canary_error = "not added: pytest-xdist"
            return
        token = core.canary_token(_NONCE)
        prefix = _function_prefix(config)
        source = ["import pytest\n"]
        names = {}  # type: dict[str, str]
        for index, (kind, body, outcome) in enumerate(CANARIES):
            name = "%s%s%d" % (prefix, token[12:24], index)
            names[name] = kind
            marker = "@pytest.mark.xfail(strict=True)\n" if outcome == "xfailed" else ""
            number = int(token[24 + 4 * index : 28 + 4 * index], 16) + 1
            source.append("\n\n%sdef %s():\n%s" % (marker, name, body.format(n=number)))
        self.canary_folder = tempfile.mkdtemp(prefix="tmp" + token[:6])
        path = os.path.join(self.canary_folder, core.canary_module(_NONCE))
        with open(path, "w") as handle:
            handle.write("".join(source))
        saved_path = list(sys.path)
        try:
            module = _module_node(session, path)
            if not getattr(module, "nodeid", None):
                # pytest 3.x names a file outside the rootdir and the initial paths None
                module._nodeid = os.path.basename(path)
            items = [node for node in module.collect() if isinstance(node, pytest.Item)]
        finally:
            # the import mode may have put the folder on sys.path: the tests never see it
            sys.path[:] = saved_path
        for node in items:
            canary = names.get(str(getattr(node, "name", "")))
            if canary is not None:
                self.canaries[str(node.nodeid)] = canary
        self.canary_items = [node for node in items if str(node.nodeid) in self.canaries]
        if hasattr(session, "testscollected"):
            session.testscollected += len(self.canary_items)

    def run_canaries(self):
        # type: () -> None
        """The canaries, once the session's own loop has run every test and torn everything down
        (so a session fixture's teardown error stays on the instance's last test)."""
        items = self.canary_items
        self.canary_items = []
        for index, item in enumerate(items):
            following = items[index + 1] if index + 1 < len(items) else None
            item.ihook.pytest_runtest_protocol(item=item, nextitem=following)

    def canary_report(self, report):
        # type: (typing.Any) -> None
        """What the runner's report of a canary's phase says (the first phase that did not pass)."""
        nodeid = str(getattr(report, "nodeid", ""))
        if nodeid not in self.canaries or self.canary_reports.get(nodeid, "passed") not in ("passed",):
            return
        when = str(getattr(report, "when", ""))
        outcome = str(getattr(report, "outcome", ""))
        if hasattr(report, "wasxfail"):
            outcome = "xfailed" if outcome == "skipped" else "xpassed"
        if when == "call":
            self.canary_reports[nodeid] = outcome
        elif outcome != "passed":
            self.canary_reports[nodeid] = when + " " + outcome

    def canary_record(self, outcomes):
        # type: (dict[str, str]) -> dict[str, dict[str, str]]
        """Per canary kind: ``expected``, ``reported`` (the runner's reports) and ``seen`` (the raw
        call information the guard read itself)."""
        found = {}  # type: dict[str, dict[str, str]]
        by_kind = {kind: nodeid for nodeid, kind in self.canaries.items()}
        for kind, _body, expected in CANARIES:
            nodeid = by_kind.get(kind)
            if nodeid is None:
                missing = self.canary_error or "not added"
                found[kind] = {"expected": expected, "reported": missing, "seen": missing}
                continue
            reported = self.canary_reports.get(nodeid, "not run")
            seen = outcomes.get(nodeid, "not run")
            found[kind] = {"expected": expected, "reported": reported, "seen": seen}
        return found

    # -- the record --------------------------------------------------------------------------
    def outcomes(self):
        # type: () -> dict[str, str]
        found = {}  # type: dict[str, str]
        for nodeid, phases in self.phases.items():
            values = [phases.get(w, "") for w in ("setup", "call", "teardown")]
            if "skipped" in values:
                found[nodeid] = "skipped"
            elif "xfailed" in values:
                found[nodeid] = "xfailed"
            elif any(v.startswith("error:") for v in (values[0], values[2])):
                found[nodeid] = "error"
            elif values[1].startswith("error:"):
                found[nodeid] = "failed"
            elif values[1] == "ok":
                found[nodeid] = "passed"
            else:
                found[nodeid] = "error"
        return found

    def write(self):
        # type: () -> None
        if _OUTPUT.written:
            return
        self.check("end")
        outcomes = self.outcomes()
        canaries = self.canary_record(outcomes)
        for nodeid in self.canaries:
            outcomes.pop(nodeid, None)
        if self.canary_folder:
            shutil.rmtree(self.canary_folder, ignore_errors=True)
        record = {
            "version": VERSION,
            "pid": os.getpid(),
            "tree": _TREE,
            "pytest": getattr(pytest, "__version__", "?"),
            "python": sys.version.split()[0],
            "static": self.static,
            "changes": self.changes,
            "test_side": self.test_side,
            "hooks": sorted(
                self.hooks.values(), key=lambda h: (str(h["hook"]), str(h["module"]), str(h["function"]))
            ),
            "item_classes": sorted(self.item_classes),
            "items": self.items,
            "anomalies": sorted(list(a) for a in self.anomalies),
            "outcomes": outcomes,
            "canaries": canaries,
            "trace": core.trace(),
        }
        _OUTPUT.record(record)


def _describe(hook_name, impl):
    # type: (str, object) -> tuple[tuple[str, ...], dict[str, object]]
    function = core.unwrap(getattr(impl, "function", None))
    filename, digest = core.origin(function)
    tree = _in_tree(filename)
    module = getattr(function, "__module__", "") or ""
    qualname = getattr(function, "__qualname__", "") or ""
    wrapper = bool(getattr(impl, "hookwrapper", False) or getattr(impl, "wrapper", False))
    key = (hook_name, module, qualname, "tree" if tree else digest, str(wrapper))
    entry = {
        "hook": hook_name, "module": module, "function": qualname, "file": filename,
        "in_tree": tree, "digest": digest, "wrapper": wrapper,
    }  # type: dict[str, object]  # fmt: skip
    return key, entry


def _function_prefix(config):
    # type: (typing.Any) -> str
    """A name the session collects as a test function (``python_functions``; ``test`` by default)."""
    try:
        patterns = list(config.getini("python_functions") or ())
    except Exception:
        patterns = []
    for pattern in patterns:
        head = pattern.split("*")[0]
        if head and not any(c in head for c in "?[]"):
            return str(head)
    return "test"


def _module_node(session, path):
    # type: (typing.Any, str) -> typing.Any
    """A ``pytest.Module`` of ``path`` under ``session``: ``from_parent`` from pytest 5.4 on
    (``path=`` from 7, ``fspath=`` before), the constructor before."""
    from_parent = getattr(pytest.Module, "from_parent", None)
    if from_parent is not None:
        try:
            import pathlib

            return from_parent(session, path=pathlib.Path(path))
        except TypeError:
            pass
    import py  # type: ignore[import-untyped]  # pytest < 7 depends on it

    if from_parent is not None:
        return from_parent(session, fspath=py.path.local(path))
    return pytest.Module(py.path.local(path), parent=session)


def _raiser(excinfo):
    # type: (object) -> str
    """The last frame of the traceback outside pytest and pluggy: who called ``pytest.xfail``."""
    found = ""
    tb = getattr(excinfo, "tb", None)
    while tb is not None:
        filename = tb.tb_frame.f_code.co_filename
        if not any(part in filename for part in (os.sep + "_pytest" + os.sep, os.sep + "pluggy" + os.sep)):
            found = filename
        tb = tb.tb_next
    return found


def _is_test_file(filename, item):
    # type: (str, object) -> bool
    base = os.path.basename(filename)
    own = str(getattr(item, "fspath", "") or getattr(item, "path", ""))
    same = os.path.realpath(filename) == os.path.realpath(own)
    return same or base.startswith("test") or base == "conftest.py"


def _has_xfail_marker(item):
    # type: (object) -> bool
    # get_closest_marker from pytest 3.6, get_marker before (removed in 4.1)
    getter = getattr(item, "get_closest_marker", None) or getattr(item, "get_marker", None)
    return bool(getter and getter("xfail") is not None)


_GUARD = _Guard()


def pytest_configure(config):
    # type: (object) -> None
    if _GUARD.config is None:
        _GUARD.config = config
        _GUARD.check("configure")


@pytest.hookimpl(hookwrapper=True)
def pytest_collection(session):  # type: ignore[no-untyped-def]
    yield
    _GUARD.check("collection")
    try:
        _GUARD.add_canaries(session)
    except Exception as error:  # the guard never breaks a session: the record says why
        _GUARD.canary_error = "not added: %s: %s" % (type(error).__name__, error)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtestloop(session):  # type: ignore[no-untyped-def]
    outcome = yield
    # after the session's own tests, unless it stopped (collection errors, -x, --maxfail, ^C)
    stopped = getattr(session, "shouldstop", False) or getattr(session, "shouldfail", False)
    if getattr(outcome, "excinfo", None) is None and not stopped:
        _GUARD.run_canaries()


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_logreport(report):  # type: ignore[no-untyped-def]
    _GUARD.canary_report(report)


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_protocol(item, nextitem):  # type: ignore[no-untyped-def]
    _GUARD.item(item)
    yield
    _GUARD.check(str(getattr(item, "nodeid", "")))


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call):  # type: ignore[no-untyped-def]
    # read before any other implementation sees (and could change) the call's outcome
    _GUARD.phase(item, call)
    # a hook registered for one test is seen here (the full comparison runs after each test)
    _GUARD.check_hooks(str(getattr(item, "nodeid", "")))
    yield


def pytest_unconfigure(config):
    # type: (object) -> None
    if config is _GUARD.config:
        _GUARD.write()
