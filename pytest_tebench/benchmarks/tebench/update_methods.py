"""The test methods of a TEBench update: the Surefire selection of changed test methods, and U
(every test method either side changed) with each method's version in the prediction's and in
gold's tree, for the selection of the prediction's run and for ``s_mod``."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from pytest_tebench.benchmarks.tebench.identification import TestChanges
from pytest_tebench.benchmarks.tebench.identification import TestMethodChange
from pytest_tebench.benchmarks.tebench.identification import pair_test_methods
from pytest_tebench.benchmarks.tebench.update_metrics import token_jaccard
from pytest_tebench.java.parser import parse_java
from pytest_tebench.run.maven.surefire import TestId
from pytest_tebench.workspace.checkout import Workspace


def selection_of(changes: Iterable[TestMethodChange]) -> list[TestId]:
    """Surefire ids of the changed test methods that exist after the patch."""
    ids = {
        TestId(_binary_class(change.package, change.new.binary_class_name), change.new.name)
        for change in changes
        if change.new is not None
    }
    return sorted(ids)


def _binary_class(package: str, binary: str) -> str:
    return f"{package}.{binary}" if package else binary


_Method = tuple[str, str, tuple[str, ...]]  # (binary class w/o package, name, tokens)


@dataclass(frozen=True)
class MethodSets:
    """U and the versions of its methods in the prediction tree and in V0, keyed like identification."""

    #: U: (V-0.5 path, key, package) of every test method either side changed.
    union: tuple[tuple[str, str, str], ...]
    prediction: dict[str, dict[str, _Method]]
    gold: dict[str, dict[str, _Method]]

    def prediction_selection(self) -> list[TestId]:
        """The members of U that exist in the prediction tree, as Surefire ids."""
        runnable = set()
        for path, key, package in self.union:
            method = self.prediction.get(path, {}).get(key)
            if method is not None:
                runnable.add(TestId(_binary_class(package, method[0]), method[1]))
        return sorted(runnable)

    def s_mod_by_method(self) -> dict[str, float]:
        """Token Jaccard of each member of U, prediction against gold (both absent 1, one absent 0)."""
        return {
            f"{path}::{key}": token_jaccard(
                self.prediction.get(path, {}).get(key, (None, None, None))[2],
                self.gold.get(path, {}).get(key, (None, None, None))[2],
            )
            for path, key, _ in self.union
        }


def method_sets(workspace: Workspace, gold_changes: TestChanges, predicted: TestChanges) -> MethodSets:
    """U with its methods read from the committed ``prediction`` and ``gold`` trees (no checkout)."""
    return MethodSets(
        union=tuple(_union(predicted, gold_changes)),
        prediction=_versions(workspace, "prediction", predicted, gold_changes),
        gold=_versions(workspace, "gold", gold_changes, predicted),
    )


def _union(*sides: TestChanges) -> list[tuple[str, str, str]]:
    """U: (V-0.5 path, key, package) of every test method either side changed."""
    seen: dict[tuple[str, str], str] = {}
    for side in sides:
        for change in side.methods:
            seen.setdefault((change.path, change.key), change.package)
    return [(path, key, package) for (path, key), package in sorted(seen.items())]


def _versions(
    workspace: Workspace, rev: str, own: TestChanges, other: TestChanges
) -> dict[str, dict[str, _Method]]:
    """Test methods of ``rev`` by V-0.5 path and key, for every file either side touched.

    A file ``rev`` renamed is read at its new path even when ``rev`` changed no test method in it.
    """
    by_old_path = {
        change.old_path: change
        for change in workspace.changed_files("v-0.5", rev)
        if change.old_path is not None and change.old_path.endswith(".java")
    }
    paths = {c.path for c in (*own.methods, *other.methods)}
    result: dict[str, dict[str, _Method]] = {}
    for path in sorted(paths):
        change = by_old_path.get(path)
        if change is not None:  # changed, renamed or deleted by this side
            where, text, old_text = change.new_path, change.new_text, change.old_text
        else:  # untouched by this side, or a file it created
            where = path
            old_text, text = workspace.read_pair("v-0.5", path, rev, path)
        if where is None or text is None:
            continue
        old = parse_java(old_text) if old_text is not None else None
        # the keys identification gave this side's methods (V-0.5 identities, whatever the other side did)
        methods: dict[str, _Method] = {}
        for pair in pair_test_methods(old, parse_java(text), path, where):
            if pair.new is not None:
                methods.setdefault(pair.key, (pair.new.binary_class_name, pair.new.name, pair.new.tokens))
        result[path] = methods
    return result
