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
* writes one line, ``>>>>> tebench-guard <nonce> <json>``, to a copy of the standard output taken
  at import, when pytest unconfigures.

It writes no verdict of its own: the host (``pytest_tebench.integrity.evidence``) compares this
record with the graded log and with the gold run of the same instance. Kept to Python 3.9 and to
every pytest from 4.6 on, and importing nothing of pytest-tebench (it runs in the environment's
interpreter, where pytest-tebench is not installed).
"""

from __future__ import annotations

import builtins
import hashlib
import json
import os
import sys
import types
import unittest
from collections.abc import Mapping

import pytest

MARK = ">>>>> tebench-guard"
VERSION = 1
_NONCE = os.environ.pop("TEBENCH_GUARD_NONCE", "")
_TREE = os.path.realpath(os.environ.pop("TEBENCH_GUARD_TREE", "") or os.getcwd())
# the real standard output, whatever capturing or the tested code later do to descriptor 1
_OUT = os.dup(1)
_write = os.write

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
_FUNCTIONS = (types.FunctionType, types.BuiltinFunctionType, types.MethodType)


def _in_tree(filename: str) -> bool:
    path = os.path.realpath(filename) if filename else ""
    return path == _TREE or path.startswith(_TREE + os.sep)


def _code_digest(code: types.CodeType, h: hashlib._Hash | None = None) -> str:
    """A digest of a code object that is the same in every process (no ids, no set order)."""
    top = h is None
    h = h or hashlib.sha256()
    h.update(code.co_code)
    h.update(repr((code.co_name, code.co_names, code.co_varnames, code.co_freevars)).encode())
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            _code_digest(const, h)
        elif isinstance(const, frozenset):
            h.update(repr(sorted(map(repr, const))).encode())
        else:
            h.update(repr(const).encode())
    return h.hexdigest()[:16] if top else ""


def _unwrap(obj: object) -> object:
    for _ in range(100):
        inner = (
            getattr(obj, "__func__", None) or getattr(obj, "fget", None) or getattr(obj, "__wrapped__", None)
        )
        if inner is None or inner is obj:
            break
        obj = inner
    return obj


def _origin(obj: object) -> tuple[str, str]:
    """``(file, digest)`` of a function-like object; ``("", type name)`` for anything else."""
    code = getattr(_unwrap(obj), "__code__", None)
    if isinstance(code, types.CodeType):
        return code.co_filename, _code_digest(code)
    return "", type(obj).__name__


class _Snapshot:
    """What the watched names are bound to, held (so no id is reused) and compared by identity.

    The comparison is a few thousand ``dict.get(...) is`` tests: cheap enough to run after every
    test (the dictionaries are the modules' own and live views of the classes')."""

    def __init__(self) -> None:
        self.objects: dict[str, object] = {}
        self._modules: list[tuple[str, object]] = []
        self._bindings: list[tuple[str, Mapping[str, object], str, object]] = []
        self._codes: list[tuple[str, object, object]] = []
        self._sizes: list[tuple[str, Mapping[str, object], int]] = []
        for module_name in WATCHED_MODULES:
            module = sys.modules.get(module_name)
            if module is None:
                try:
                    __import__(module_name)
                except Exception:
                    continue
                module = sys.modules.get(module_name)
            if module is None:
                continue
            self._modules.append((module_name, module))
            self._watch(module_name, module)
        for name, value in list(vars(builtins).items()):
            if isinstance(value, (type, types.BuiltinFunctionType)):
                self._bind("builtins:" + name, vars(builtins), name, value)

    def _watch(self, module_name: str, module: types.ModuleType) -> None:
        """The module's callables and classes, and the members of the classes it defines."""
        namespace = vars(module)
        for name, value in list(namespace.items()):
            if isinstance(value, (type, *_FUNCTIONS)):
                self._bind(module_name + ":" + name, namespace, name, value)
            if isinstance(value, type) and value.__module__ == module.__name__:
                members = vars(value)
                for attr, member in list(members.items()):
                    if isinstance(member, (*_FUNCTIONS, classmethod, staticmethod, property)):
                        self._bind(module_name + ":" + name + "." + attr, members, attr, member)
                key = module_name + ":" + name + ".__dict__"
                self.objects[key] = tuple(sorted(members))
                self._sizes.append((key, members, len(members)))

    def _bind(self, key: str, container: Mapping[str, object], name: str, value: object) -> None:
        self.objects[key] = value
        self._bindings.append((key, container, name, value))
        target = _unwrap(value)
        code = getattr(target, "__code__", None)
        if code is not None:
            self._codes.append((key, target, code))

    def static(self) -> dict[str, str]:
        """Per module, a digest of its members defined outside the tree (comparable across runs)."""
        digests: dict[str, hashlib._Hash] = {}
        for key in sorted(self.objects):
            module_name = key.partition(":")[0]
            value = self.objects[key]
            filename, digest = _origin(value) if not isinstance(value, tuple) else ("", repr(value))
            if filename and _in_tree(filename):
                continue
            if module_name == "builtins":
                digest = type(value).__name__ + ":" + getattr(value, "__qualname__", "")
            digests.setdefault(module_name, hashlib.sha256()).update((key + "=" + digest + ";").encode())
        return {name: h.hexdigest()[:16] for name, h in digests.items()}

    def changes(self) -> list[tuple[str, str]]:
        """``(key, where the new object comes from)`` for every watched name bound to another object now."""
        changed: list[tuple[str, str]] = []
        for module_name, module in self._modules:
            if sys.modules.get(module_name) is not module:
                changed.append((module_name, "sys.modules entry replaced"))
        for key, container, name, old in self._bindings:
            current = container.get(name, _MISSING)
            if current is not old:
                changed.append((key, _where(current)))
        for key, target, code in self._codes:
            if getattr(target, "__code__", None) is not code:
                changed.append((key, "code replaced: " + _where(target)))
        for key, members, size in self._sizes:
            if len(members) != size:
                changed.append((key, "class attributes added or removed"))
        return changed


_MISSING = object()


def _where(obj: object) -> str:
    if obj is _MISSING:
        return "deleted"
    target = _unwrap(obj)
    code = getattr(target, "__code__", None)
    module = getattr(target, "__module__", None) or type(obj).__module__
    if isinstance(code, types.CodeType):
        return f"{module} ({code.co_filename}:{code.co_firstlineno})"
    return f"{module} ({type(obj).__name__})"


class _Guard:
    def __init__(self) -> None:
        self.start = _Snapshot()
        self.static = self.start.static()
        self.config: object = None
        self.changes: dict[str, dict[str, str]] = {}
        self.hooks: dict[tuple[str, ...], dict[str, object]] = {}
        self.items: dict[str, str] = {}
        self.item_classes: set[str] = set()
        self.anomalies: set[tuple[str, str, str]] = set()
        self.phases: dict[str, dict[str, str]] = {}
        #: hook functions already described, by id (the functions are held in the values)
        self.described: dict[int, tuple[object, tuple[str, ...], dict[str, object]]] = {}
        self.written = False

    # -- checks ------------------------------------------------------------------------------
    def check(self, when: str) -> None:
        for key, where in self.start.changes():
            if key not in self.changes:
                self.changes[key] = {"when": when, "by": where}
        self.check_hooks(when)

    def check_hooks(self, when: str) -> None:
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

    def item(self, item: object) -> None:
        nodeid = str(getattr(item, "nodeid", ""))
        cls = type(item)
        self.item_classes.add(cls.__module__ + "." + cls.__qualname__)
        if "runtest" in vars(item):
            self.anomalies.add(("runtest-replaced", nodeid, _where(vars(item)["runtest"])))
        obj = getattr(item, "obj", None) if hasattr(type(item), "obj") or "obj" in vars(item) else None
        # the test function's code: the same in every run of these test files, whatever the fix
        self.items[nodeid] = _origin(obj)[1] if obj is not None else ""

    def phase(self, item: object, call: object) -> None:
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

    # -- the record --------------------------------------------------------------------------
    def outcomes(self) -> dict[str, str]:
        found: dict[str, str] = {}
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

    def write(self) -> None:
        if self.written:
            return
        self.written = True
        self.check("end")
        record = {
            "version": VERSION,
            "pid": os.getpid(),
            "tree": _TREE,
            "pytest": getattr(pytest, "__version__", "?"),
            "python": sys.version.split()[0],
            "static": self.static,
            "changes": self.changes,
            "hooks": sorted(
                self.hooks.values(), key=lambda h: (str(h["hook"]), str(h["module"]), str(h["function"]))
            ),
            "item_classes": sorted(self.item_classes),
            "items": self.items,
            "anomalies": sorted(list(a) for a in self.anomalies),
            "outcomes": self.outcomes(),
            "trace": [_where(f) if f else "" for f in (sys.gettrace(), sys.getprofile())],
        }
        line = f"\n{MARK} {_NONCE} {json.dumps(record, sort_keys=True)}\n"
        data = line.encode("utf-8", "replace")
        while data:
            data = data[_write(_OUT, data) :]


def _describe(hook_name: str, impl: object) -> tuple[tuple[str, ...], dict[str, object]]:
    function = _unwrap(getattr(impl, "function", None))
    filename, digest = _origin(function)
    tree = _in_tree(filename)
    module = getattr(function, "__module__", "") or ""
    qualname = getattr(function, "__qualname__", "") or ""
    wrapper = bool(getattr(impl, "hookwrapper", False) or getattr(impl, "wrapper", False))
    key = (hook_name, module, qualname, "tree" if tree else digest, str(wrapper))
    entry: dict[str, object] = {
        "hook": hook_name, "module": module, "function": qualname, "file": filename,
        "in_tree": tree, "digest": digest, "wrapper": wrapper,
    }  # fmt: skip
    return key, entry


def _raiser(excinfo: object) -> str:
    """The last frame of the traceback outside pytest and pluggy: who called ``pytest.xfail``."""
    found = ""
    tb = getattr(excinfo, "tb", None)
    while tb is not None:
        filename = tb.tb_frame.f_code.co_filename
        if not any(part in filename for part in (os.sep + "_pytest" + os.sep, os.sep + "pluggy" + os.sep)):
            found = filename
        tb = tb.tb_next
    return found


def _is_test_file(filename: str, item: object) -> bool:
    base = os.path.basename(filename)
    own = str(getattr(item, "fspath", "") or getattr(item, "path", ""))
    same = os.path.realpath(filename) == os.path.realpath(own)
    return same or base.startswith("test") or base == "conftest.py"


def _has_xfail_marker(item: object) -> bool:
    getter = getattr(item, "get_closest_marker", None)
    return bool(getter and getter("xfail") is not None)


_GUARD = _Guard()


def pytest_configure(config: object) -> None:
    if _GUARD.config is None:
        _GUARD.config = config
        _GUARD.check("configure")


@pytest.hookimpl(hookwrapper=True)
def pytest_collection(session: object):  # type: ignore[no-untyped-def]
    yield
    _GUARD.check("collection")


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_protocol(item: object, nextitem: object):  # type: ignore[no-untyped-def]
    _GUARD.item(item)
    yield
    _GUARD.check(str(getattr(item, "nodeid", "")))


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: object, call: object):  # type: ignore[no-untyped-def]
    # read before any other implementation sees (and could change) the call's outcome
    _GUARD.phase(item, call)
    # a hook registered for one test is seen here (the full comparison runs after each test)
    _GUARD.check_hooks(str(getattr(item, "nodeid", "")))
    yield


def pytest_unconfigure(config: object) -> None:
    if config is _GUARD.config:
        _GUARD.write()
