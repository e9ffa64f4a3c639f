"""tebench_core: what every in-process guard of the harness shares (the pytest plugin
:mod:`tebench_guard` and the runner-script launcher :mod:`tebench_run`).

* :class:`Snapshot`: the functions and classes of the watched modules and the built-ins, held and
  compared by identity (what changed since, and where the new object comes from), plus per-module
  digests of what is defined outside the tree under test (comparable with another run's);
* :func:`code_digest` / :func:`origin` / :func:`where`: the same code gives the same digest in
  every process; where an object comes from, for the evidence;
* :class:`TestSide`: the tree's test-side modules (:func:`is_test_side`), snapshotted by an import
  hook right after their own code has run, then compared like the runner's;
* :func:`canary_module`: the file name of the pytest guard's canaries, drawn from the nonce;
* :class:`Output`: the real standard output, taken at start, and the one nonce-tagged record line
  ``>>>>> tebench-guard <nonce> <json>`` written to it at the end.

Runs in the environment's interpreter, where pytest-tebench is not installed: it imports only the
standard library and keeps to Python 3.5 syntax (type comments, no f-strings), since runner-script
environments (django 1.x/2.x official images) go back to 3.5.
"""

import builtins
import contextlib
import hashlib
import importlib.machinery
import importlib.util
import json
import os
import sys
import types
import typing  # noqa: F401 (the type comments)

MARK = ">>>>> tebench-guard"
#: 2: test-side modules of the tree are watched (their rebindings in ``changes``), ``canaries``
VERSION = 2
FUNCTIONS = (types.FunctionType, types.BuiltinFunctionType, types.MethodType)
MISSING = object()


def take_environment():
    # type: () -> tuple[str, str, str]
    """``(nonce, tree, repo)`` from the variables the harness set, removed from the environment so
    the code under test never sees the nonce (nor passes it to a process of its own); ``repo`` is
    the repository's name (``owner/name``), which decides what of the tree is test side."""
    nonce = os.environ.pop("TEBENCH_GUARD_NONCE", "")
    tree = os.path.realpath(os.environ.pop("TEBENCH_GUARD_TREE", "") or os.getcwd())
    repo = os.environ.pop("TEBENCH_GUARD_REPO", "")
    forget_own_path()
    return nonce, tree, repo


def forget_own_path():
    # type: () -> None
    """Take the guard's folder out of ``PYTHONPATH`` (not out of ``sys.path``): processes the tests
    start see the environment they would see without the guard. pylint's tests run pylint in
    subprocesses and check what ``PYTHONPATH`` puts on their path (gold failed on 7080 and 7277)."""
    here = os.path.dirname(os.path.realpath(__file__))
    entries = os.environ.get("PYTHONPATH", "").split(os.pathsep)
    kept = [e for e in entries if not (e and os.path.realpath(e) == here)]
    if kept == entries:
        return
    if any(kept):
        os.environ["PYTHONPATH"] = os.pathsep.join(kept)
    else:
        os.environ.pop("PYTHONPATH", None)


def canary_token(nonce):
    # type: (str) -> str
    """The hex string the canaries' names are drawn from (the nonce's, unknown to the code under test)."""
    return hashlib.sha256(("canary " + nonce).encode()).hexdigest()


def canary_module(nonce):
    # type: (str) -> str
    """The file name of the pytest guard's canaries (its own tests, :mod:`tebench_guard`): drawn
    from the nonce, so the code under test cannot know it, and the host can take their lines out of
    the log before grading."""
    return "test_%s.py" % canary_token(nonce)[:12]


def in_tree(filename, tree):
    # type: (str, str) -> bool
    path = os.path.realpath(filename) if filename else ""
    return path == tree or path.startswith(tree + os.sep)


#: What SWE-bench's collection (``swebench.collect.utils.extract_patches``) looks for in a changed
#: file's path to put the change in ``test_patch`` rather than ``patch``: its rows are split this
#: way, so no gold ``patch`` of Lite or Verified touches such a file but pytest's own ``src/_pytest``
#: (the runner is its product) and one sympy row (``sympy/utilities/randtest.py``).
TEST_SIDE_WORDS = ("test", "e2e")

#: Repositories whose product is the test runner: under these folders a test-named path is product.
PRODUCT_PREFIXES = {"pytest-dev/pytest": ("src/",)}  # type: dict[str, tuple[str, ...]]


def is_test_side(path, repo=""):
    # type: (str, str) -> bool
    """True when SWE-bench's split of a pull request would count a change to ``path`` (relative to
    the repository's root) as test content: its path contains ``test`` or ``e2e`` in any case
    (``tests/helpers.py``, ``django/test/testcases.py``, ``sympy/testing/pytest.py``,
    ``xarray/testing.py``), unless it lies under a product folder of ``repo``
    (:data:`PRODUCT_PREFIXES`). Shared by the host (what a prediction's change counts as) and the
    guards (which modules of the tree are test support)."""
    relative = path.replace("\\", "/").lstrip("/")
    if any(relative.startswith(prefix) for prefix in PRODUCT_PREFIXES.get(repo, ())):
        return False
    lowered = relative.lower()
    return any(word in lowered for word in TEST_SIDE_WORDS)


def code_digest(code, h=None):
    # type: (types.CodeType, object) -> str
    """A digest of a code object that is the same in every process (no ids, no set order)."""
    top = h is None
    sha = hashlib.sha256() if h is None else h  # type: hashlib._Hash  # type: ignore[assignment]
    sha.update(code.co_code)
    sha.update(repr((code.co_name, code.co_names, code.co_varnames, code.co_freevars)).encode())
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            code_digest(const, sha)
        elif isinstance(const, frozenset):
            sha.update(repr(sorted(map(repr, const))).encode())
        else:
            sha.update(repr(const).encode())
    return sha.hexdigest()[:16] if top else ""


def unwrap(obj):
    # type: (object) -> object
    for _ in range(100):
        inner = (
            getattr(obj, "__func__", None) or getattr(obj, "fget", None) or getattr(obj, "__wrapped__", None)
        )
        if inner is None or inner is obj:
            break
        obj = inner
    return obj


def origin(obj):
    # type: (object) -> tuple[str, str]
    """``(file, digest)`` of a function-like object; ``("", type name)`` for anything else."""
    code = getattr(unwrap(obj), "__code__", None)
    if isinstance(code, types.CodeType):
        return code.co_filename, code_digest(code)
    return "", type(obj).__name__


def where(obj):
    # type: (object) -> str
    if obj is MISSING:
        return "deleted"
    target = unwrap(obj)
    code = getattr(target, "__code__", None)
    module = getattr(target, "__module__", None) or type(obj).__module__
    if isinstance(code, types.CodeType):
        return "%s (%s:%d)" % (module, code.co_filename, code.co_firstlineno)
    return "%s (%s)" % (module, type(obj).__name__)


class Snapshot(object):
    """What the watched names are bound to, held (so no id is reused) and compared by identity.

    The comparison is a few thousand ``dict.get(...) is`` tests: cheap enough to run after every
    test (the dictionaries are the modules' own and live views of the classes')."""

    def __init__(self, tree, module_names=(), with_builtins=True):
        # type: (str, tuple[str, ...], bool) -> None
        self.tree = tree
        #: a watched module that leaves ``sys.modules`` is a change (not for the tree's test side:
        #: pytester takes the modules a test imported out again; only a replacement counts there)
        self.removal_counts = with_builtins
        self.objects = {}  # type: dict[str, object]
        self._modules = []  # type: list[tuple[str, object]]
        self._bindings = []  # type: list[tuple[str, typing.Mapping[str, object], str, object]]
        self._codes = []  # type: list[tuple[str, object, object]]
        self._sizes = []  # type: list[tuple[str, typing.Mapping[str, object], int]]
        #: classes (and their member lists) defined in the tree: its code, not compared across runs
        #: (pytest's own repository: a fix may add a method to a class of `_pytest`)
        self._tree_keys = set()  # type: set[str]
        for module_name in module_names:
            module = sys.modules.get(module_name)
            if module is None:
                try:
                    __import__(module_name)
                except Exception:
                    continue
                module = sys.modules.get(module_name)
            if module is not None:
                self.watch(module_name, module)
        for name, value in list(vars(builtins).items()) if with_builtins else ():
            if isinstance(value, (type, types.BuiltinFunctionType)):
                self._bind("builtins:" + name, vars(builtins), name, value)

    def watched(self, module_name):
        # type: (str) -> object
        """The module object watched under ``module_name``, or None."""
        for name, module in self._modules:
            if name == module_name:
                return module
        return None

    def watch(self, module_name, module):
        # type: (str, types.ModuleType) -> None
        """The module's callables and classes, and the members of the classes it defines."""
        self._modules.append((module_name, module))
        namespace = vars(module)
        for name, value in list(namespace.items()):
            if isinstance(value, (type, *FUNCTIONS)):
                self._bind(module_name + ":" + name, namespace, name, value)
                if isinstance(value, type) and _class_in_tree(value, self.tree):
                    self._tree_keys.add(module_name + ":" + name)
            if isinstance(value, type) and value.__module__ == module.__name__:
                members = vars(value)
                for attr, member in list(members.items()):
                    if isinstance(member, (*FUNCTIONS, classmethod, staticmethod, property)):
                        self._bind(module_name + ":" + name + "." + attr, members, attr, member)
                key = module_name + ":" + name + ".__dict__"
                if _class_in_tree(value, self.tree):
                    self._tree_keys.add(key)
                self.objects[key] = tuple(sorted(members))
                self._sizes.append((key, members, len(members)))

    def _bind(self, key, container, name, value):
        # type: (str, typing.Mapping[str, object], str, object) -> None
        self.objects[key] = value
        self._bindings.append((key, container, name, value))
        target = unwrap(value)
        code = getattr(target, "__code__", None)
        if code is not None:
            self._codes.append((key, target, code))

    def static(self):
        # type: () -> dict[str, str]
        """Per module, a digest of its members defined outside the tree (comparable across runs)."""
        digests = {}  # type: dict[str, hashlib._Hash]
        for key in sorted(self.objects):
            module_name = key.partition(":")[0]
            value = self.objects[key]
            filename, digest = origin(value) if not isinstance(value, tuple) else ("", repr(value))
            if key in self._tree_keys or (filename and in_tree(filename, self.tree)):
                continue
            if module_name == "builtins":
                digest = type(value).__name__ + ":" + getattr(value, "__qualname__", "")
            digests.setdefault(module_name, hashlib.sha256()).update((key + "=" + digest + ";").encode())
        return {name: h.hexdigest()[:16] for name, h in digests.items()}

    def changes(self):
        # type: () -> list[tuple[str, str]]
        """``(key, where the new object comes from)`` for every watched name bound to another object now."""
        changed = []  # type: list[tuple[str, str]]
        for module_name, module in self._modules:
            entry = sys.modules.get(module_name)
            if entry is not module and (entry is not None or self.removal_counts):
                changed.append((module_name, "sys.modules entry replaced"))
        for key, container, name, old in self._bindings:
            current = container.get(name, MISSING)
            if current is not old:
                changed.append((key, where(current)))
        for key, target, code in self._codes:
            if getattr(target, "__code__", None) is not code:
                changed.append((key, "code replaced: " + where(target)))
        for key, members, size in self._sizes:
            if len(members) != size:
                changed.append((key, _members_changed(self.objects[key], members)))
        return changed


def _class_in_tree(cls, tree):
    # type: (type, str) -> bool
    filename = getattr(sys.modules.get(cls.__module__), "__file__", None)
    return isinstance(filename, str) and in_tree(filename, tree)


def _members_changed(before, members):
    # type: (object, typing.Mapping[str, object]) -> str
    """What was added to (and where it comes from) or removed from a class since its snapshot."""
    old = set(before) if isinstance(before, tuple) else set()
    added = sorted(set(members) - old)
    removed = sorted(old - set(members))
    parts = ["%s added: %s" % (name, where(members.get(name, MISSING))) for name in added[:5]]
    parts += ["%s removed" % name for name in removed[:5]]
    return "class attributes changed: " + "; ".join(parts)


class TestSide(object):
    """The tree's test-side modules (:func:`is_test_side`: test helpers such as
    ``sympy/testing/pytest.py`` or ``xarray/testing.py``, test modules, ``conftest.py``), watched
    from the moment their own code has run.

    Their files are base's (the harness restores every test-side file before grading), so what a
    module defines when its code has just run is the helper the tests were written against; product
    code that rebinds one afterwards (``sympy.testing.pytest.raises = lambda *a, **k: None`` in a
    package ``__init__``) is seen by identity at the next check, with where the new object comes
    from. An import hook first on ``sys.meta_path`` (installed as the guard loads, before any code
    of the tree runs) hands it each such module after its code has run, whichever finder loads it;
    one imported past the hook (pytest's ``importlib`` import mode execs a test file itself) is
    watched from the next check on.
    """

    def __init__(self, tree, repo, exclude=()):
        # type: (str, str, tuple[str, ...]) -> None
        self.tree = tree
        self.repo = repo
        #: modules watched by another snapshot (the launcher's runner modules)
        self.exclude = frozenset(exclude)
        self.snapshot = Snapshot(tree, with_builtins=False)
        self.known = set()  # type: set[str]
        self._busy = set()  # type: set[str]

    def install(self):
        # type: () -> None
        sys.meta_path.insert(0, self)

    def wanted(self, name, filename):
        # type: (str, object) -> bool
        if name in self.exclude or not isinstance(filename, str) or not os.path.isabs(filename):
            return False
        if not in_tree(filename, self.tree):
            return False
        return is_test_side(os.path.relpath(os.path.realpath(filename), self.tree), self.repo)

    def loaded(self, name, module):
        # type: (str, object) -> None
        if name not in self.known:
            self.known.add(name)
            if isinstance(module, types.ModuleType) and self.wanted(name, getattr(module, "__file__", None)):
                self.snapshot.watch(name, module)

    def changes(self):
        # type: () -> list[tuple[str, str]]
        """What :meth:`Snapshot.changes` says of the watched modules (those loaded past the hook
        are watched from now on)."""
        for name, module in list(sys.modules.items()):
            if name not in self.known:
                self.loaded(name, module)
        return self.snapshot.changes()

    # -- the import hook (PEP 451, and PEP 302 finders for Python 3.5/3.6's older pytest) -------
    def find_spec(self, name, path, target=None):  # type: ignore[no-untyped-def]
        if name in self._busy or name in self.exclude:
            return None
        self._busy.add(name)
        try:
            spec = None
            for finder in list(sys.meta_path):
                if finder is self:
                    continue
                find = getattr(finder, "find_spec", None)
                if find is not None:
                    spec = find(name, path, target)
                elif sys.version_info < (3, 12):  # the interpreter falls back to find_module too
                    legacy = getattr(finder, "find_module", None)
                    loader = legacy(name, path) if legacy is not None else None
                    if loader is not None:
                        spec = _legacy_spec(name, loader, self)
                if spec is not None:
                    break
        finally:
            self._busy.discard(name)
        if spec is None or spec.loader is None:
            return spec
        # wrapped once by this watch (another watch's wrapper, the launcher's, is wrapped again)
        if isinstance(spec.loader, _LegacyLoader) or getattr(spec.loader, "_watch", None) is self:
            return spec
        if not self.wanted(name, spec.origin) or not hasattr(spec.loader, "exec_module"):
            return spec
        if type(spec.loader) is importlib.machinery.SourceFileLoader:
            # the usual loader, kept a SourceFileLoader (pkg_resources picks providers by its type)
            spec.loader = _WatchedSourceLoader(spec.loader.name, spec.loader.path)
            spec.loader.watch = self
        else:
            spec.loader = WatchedLoader(spec.loader, self, name)
        return spec


class _WatchedSourceLoader(importlib.machinery.SourceFileLoader):
    watch = None  # type: typing.Any

    def exec_module(self, module):  # type: ignore[no-untyped-def]
        super(_WatchedSourceLoader, self).exec_module(module)
        self.watch.loaded(module.__name__, module)


class WatchedLoader(object):
    """Another finder's loader (pytest's assertion rewriter), handing the module on once run to
    ``watch.loaded(name, module)`` (:class:`TestSide`, the launcher's runner-module watch)."""

    def __init__(self, loader, watch, name):
        # type: (typing.Any, typing.Any, str) -> None
        self._loader = loader
        self._watch = watch
        self._name = name

    def create_module(self, spec):  # type: ignore[no-untyped-def]
        create = getattr(self._loader, "create_module", None)
        return create(spec) if create is not None else None

    def exec_module(self, module):  # type: ignore[no-untyped-def]
        self._loader.exec_module(module)
        self._watch.loaded(self._name, module)

    def __getattr__(self, name):  # type: ignore[no-untyped-def]
        # inspect and linecache ask the loader for the source
        return getattr(self._loader, name)


class _LegacyLoader(object):
    """A PEP 302 loader (``load_module``: pytest 3's assertion rewriter), handing the module on."""

    def __init__(self, loader, watch):
        # type: (typing.Any, TestSide) -> None
        self._loader = loader
        self._watch = watch

    def load_module(self, name):  # type: ignore[no-untyped-def]
        module = self._loader.load_module(name)
        self._watch.loaded(name, module)
        return module

    def __getattr__(self, name):  # type: ignore[no-untyped-def]
        return getattr(self._loader, name)


def _legacy_spec(name, loader, watch):
    # type: (str, typing.Any, TestSide) -> typing.Any
    spec = importlib.util.spec_from_loader(name, loader)
    if spec is not None and watch.wanted(name, spec.origin):
        spec.loader = _LegacyLoader(loader, watch)  # type: ignore[assignment]
    return spec


class Output(object):
    """The real standard output, whatever capturing or the tested code later do to descriptor 1."""

    def __init__(self, nonce):
        # type: (str) -> None
        self.nonce = nonce
        self._fd = os.dup(1)
        self._write = os.write
        self.written = False

    def record(self, record):
        # type: (dict[str, object]) -> None
        """Write ``record`` once, as the run's one guard line."""
        if self.written:
            return
        self.written = True
        # what the process printed so far goes first (before 3.9, a standard error that is not a
        # terminal is block-buffered: an "ok" would otherwise follow the record, off its test's line)
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        line = "\n%s %s %s\n" % (MARK, self.nonce, json.dumps(record, sort_keys=True))
        data = line.encode("utf-8", "replace")
        while data:
            data = data[self._write(self._fd, data) :]


def trace():
    # type: () -> list[str]
    """Where the trace and profile functions come from (a tracer sees, and can change, every frame)."""
    return [where(f) if f else "" for f in (sys.gettrace(), sys.getprofile())]
