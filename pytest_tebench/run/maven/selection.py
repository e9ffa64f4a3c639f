"""Run test methods declared in abstract classes through the classes that inherit them.

Surefire never instantiates an abstract class: ``-Dtest=AbstractParserTestCase#testX`` matches
nothing, and the method really runs as ``DefaultParserTest#testX`` in every concrete subclass
(commons-cli, commons-lang and others keep shared tests in abstract ``*TestCase`` classes). A
harness that selects the declaring class reports such a test as not run, and so rejects or
fails instances for nothing.

:func:`run_inherited` expands each selected method of an abstract test class to its concrete
subclasses in the workspace's test tree, runs them, and folds the outcomes back onto the
selected id: the worst outcome of all runs, or ``not_run`` when no concrete subclass exists. The
abstract class counts as reported when one of those subclasses is.
"""

from __future__ import annotations

from collections.abc import Iterable
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import replace
from pathlib import Path

from pytest_tebench.java.parser import parse_java
from pytest_tebench.run.executor import Executor
from pytest_tebench.run.maven.run_settings import RunSettings
from pytest_tebench.run.maven.surefire import ERROR
from pytest_tebench.run.maven.surefire import FAILED
from pytest_tebench.run.maven.surefire import NOT_RUN
from pytest_tebench.run.maven.surefire import PASSED
from pytest_tebench.run.maven.surefire import SKIPPED
from pytest_tebench.run.maven.surefire import TestId
from pytest_tebench.run.maven.surefire import TestOutcome
from pytest_tebench.run.maven.testrun import SelectionRun
from pytest_tebench.run.maven.testrun import run_selection
from pytest_tebench.workspace.layout import MAVEN

_WORST_FIRST = (ERROR, FAILED, PASSED, SKIPPED, NOT_RUN)


@dataclass(frozen=True)
class TestClass:
    __test__ = False  # not a pytest test class, despite the name

    name: str  # binary name with package: "org.x.DefaultParserTest"
    superclass: str | None  # simple name as written
    is_abstract: bool


def index_test_classes(workspace: Path) -> dict[str, TestClass]:
    """Every class declared under a ``src/test`` tree of ``workspace``, by binary name."""
    index: dict[str, TestClass] = {}
    for path in sorted(workspace.glob(f"**/{MAVEN.test_root}/**/*.java")):
        if "target" in path.relative_to(workspace).parts:
            continue
        parsed = parse_java(path.read_bytes())
        prefix = f"{parsed.package}." if parsed.package else ""
        for java_type in parsed.types:
            if java_type.kind == "class":
                name = prefix + java_type.binary_class_name
                index[name] = TestClass(name, java_type.superclass, java_type.is_abstract)
    return index


def _simple(name: str) -> str:
    return name.rsplit(".", 1)[-1].rsplit("$", 1)[-1]


def concrete_classes(class_name: str, index: Mapping[str, TestClass]) -> list[str]:
    """The classes that really run methods of ``class_name``: itself unless it is abstract, else
    every concrete top-level subclass (transitively). Superclasses are matched by simple name, preferring
    the same package, which is how the test trees of benchmark projects are written."""
    declared = index.get(class_name)
    if declared is None or not declared.is_abstract:
        return [class_name]
    package = class_name.rsplit(".", 1)[0] if "." in class_name else ""

    def parent_of(cls: TestClass) -> str | None:
        if cls.superclass is None:
            return None
        candidates = [name for name in index if _simple(name) == cls.superclass]
        same_package = [name for name in candidates if name.rsplit(".", 1)[0] == package]
        chosen = same_package or candidates
        return chosen[0] if len(chosen) == 1 else None

    found: list[str] = []
    for name, cls in sorted(index.items()):
        seen: set[str] = set()
        current: TestClass | None = cls
        while current is not None and current.name not in seen:
            seen.add(current.name)
            parent = parent_of(current)
            if parent == class_name:
                # Nested classes are left out, as Surefire's default excludes (**/*$*) leave them:
                # commons-collections' AbstractListTest$BulkTestSubList extends its outer class
                # but needs the outer instance, so JUnit cannot construct it on its own.
                if not cls.is_abstract and "$" not in name:
                    found.append(name)
                break
            current = index.get(parent) if parent else None
    return found


def _fold(test: TestId, outcomes: Iterable[TestOutcome]) -> TestOutcome:
    collected = list(outcomes)
    if not collected:
        return TestOutcome(test, NOT_RUN, 0, "declared in an abstract class no concrete test class extends")
    # _WORST_FIRST ends with not_run, so a method that ran anywhere is judged by those runs
    status = min(collected, key=lambda o: _WORST_FIRST.index(o.status)).status
    message = next((o.message for o in collected if o.status == status and o.message), "")
    trace = next((o.trace for o in collected if o.status == status and o.trace), "")
    via = ", ".join(sorted({o.test.class_name for o in collected}))
    invocations = sum(o.invocations for o in collected)
    return TestOutcome(test, status, invocations, f"{message} (run as {via})".strip(), trace)


def run_inherited(
    executor: Executor, workspace: Path, selection: Iterable[TestId], settings: RunSettings
) -> SelectionRun:
    """:func:`~pytest_tebench.run.maven.testrun.run_selection` with abstract test classes resolved."""
    chosen = sorted(set(selection))
    index: dict[str, TestClass] | None = None
    expansion: dict[TestId, list[TestId]] = {}
    for test in chosen:
        if index is None and _maybe_abstract(test, workspace):
            index = index_test_classes(workspace)
        runners = concrete_classes(test.class_name, index) if index is not None else [test.class_name]
        expansion[test] = [TestId(name, test.method) for name in runners]
    if all(ids == [test] for test, ids in expansion.items()):
        return run_selection(executor, workspace, chosen, settings)
    run = run_selection(executor, workspace, sorted({t for ids in expansion.values() for t in ids}), settings)
    outcomes = run.outcomes
    folded = tuple(
        _fold(test, (outcomes[t] for t in ids if t in outcomes)) for test, ids in expansion.items()
    )
    # an abstract class ran when a class that runs its methods did: a method of it that ran in
    # none of them is then no test to their runner (gold_check.not_tests_of_their_runner)
    ran = {
        test.class_name
        for test, ids in expansion.items()
        if any(t.class_name in run.reported_classes for t in ids)
    }
    return replace(run, tests=folded, reported_classes=run.reported_classes | ran)


def _source_file(class_name: str) -> str:
    """Where under a test source root the top-level class of ``class_name`` is declared."""
    return class_name.split("$", 1)[0].replace(".", "/") + ".java"


def source_module(workspace: Path, class_name: str) -> str | None:
    """The module (workspace-relative directory, "" for the root) whose test sources declare the
    top-level class of ``class_name``; None when no test tree does."""
    relative = _source_file(class_name)
    for path in sorted(workspace.glob(f"**/{MAVEN.test_sources}/{relative}")):
        parts = path.relative_to(workspace).parts
        if "target" not in parts:
            depth = len(parts) - len(Path(MAVEN.test_sources).parts) - len(Path(relative).parts)
            return "/".join(parts[:depth])
    return None


def module_ran(workspace: Path, module: str, classes: Iterable[str]) -> bool:
    """Whether any of ``classes`` (a run's reported classes) is declared in ``module``'s test
    sources: that module's test phase ran."""
    root = workspace / module / MAVEN.test_sources if module else workspace / MAVEN.test_sources
    return any((root / _source_file(name)).is_file() for name in classes)


def _maybe_abstract(test: TestId, workspace: Path) -> bool:
    """Cheap check before indexing the whole test tree: is the declaring file an abstract class?"""
    for path in workspace.glob(f"**/{MAVEN.test_sources}/{_source_file(test.class_name)}"):
        return any(t.is_abstract for t in parse_java(path.read_bytes()).types)
    return False
