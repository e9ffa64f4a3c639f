"""The host's reading of the in-process guard's record (:mod:`.sandbox.tebench_guard` under pytest,
:mod:`.sandbox.tebench_run` for a runner script: one record format, ``hooks`` and ``item_classes``
empty for the latter).

The guard runs in the process it watches, so its record is evidence, not proof: it is compared
with what the host knows independently. A run is *tampered* when

* ``several-records``: more than one record carries this run's nonce (someone printed one);
* ``no-record``: the log resolves the instance but no record came (the runner was stopped, its
  output cut, or the guard never loaded): the log's claim cannot be checked;
* ``unconfirmed``: the log counts a test as passed (or xfailed) that the runner itself did not
  see pass (a printed ``PASSED`` line, a rewritten report);
* ``canary``: one of the guard's own tests, whose verdict is known (a failing ``assert``, a
  ``pytest.raises`` with nothing raised, an exception: expected failures; one that passes), was not
  reported so by the runner or not seen so by the guard: the runner lies about every test
  (``pytest-dev/pytest``, where the runner is the code under test). A canary that did not run
  counts only when the log resolves the instance, and what the baseline shows too is accepted;
and, against the **baseline** (the gold run of the same instance in the same environment, where
the only difference is the prediction), when the run has

* ``runner-code``: verdict-making code from outside the tree under test that differs from the
  baseline's (``static``: per module digests);
* ``changed``: a verdict-making function, class member or built-in rebound during the run that the
  baseline did not rebind the same way;
* ``test-side``: a function or class of a test-side module of the tree (a test helper such as
  ``sympy.testing.pytest``, a test module), or a test class's members, changed after the module's
  own code ran, not the same way in the baseline;
* ``hook``: a hook implementation of a verdict-making hook the baseline does not have;
* ``test-code``: a test whose function's code differs from the baseline's (the same test files);
* ``item-class`` / ``anomaly`` / ``tracer``: item classes, replaced ``runtest`` methods,
  ``pytest.xfail`` raised by code under test, or a trace/profile function the baseline has not.

Without a baseline (the gold run left no record) only the first three rules judge: pytest itself
rebinds some of what is watched, so a comparison with nothing would condemn honest runs.
Benchmark-neutral: the caller passes which tests the graded log counts as successes.
"""

from __future__ import annotations

import hashlib
import json
import secrets
from collections.abc import Collection
from collections.abc import Iterable
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_tebench.integrity.sandbox import tebench_core

MARK = ">>>>> tebench-guard"
#: The plugin's module name (``pytest -p tebench_guard``) and the folder that holds it.
PLUGIN = "tebench_guard"
PLUGIN_DIR = Path(__file__).resolve().parent / "sandbox"
#: Bump when the record or the rules change (part of stored baselines' keys).
GUARD_VERSION = 2
#: The launcher of runner scripts that are not pytest (``python -m tebench_run SCRIPT ARGS``).
LAUNCHER = "tebench_run"
#: The guards' own content (plugin, launcher, what they share): a stored baseline made by another
#: guard is not compared with.
GUARD_DIGEST = hashlib.sha256(
    b"".join(path.name.encode() + path.read_bytes() for path in sorted(PLUGIN_DIR.glob("*.py")))
).hexdigest()[:16]
#: Log statuses that SWE-bench counts as a test's success, and what the guard must have seen.
SUCCESS_OUTCOMES: Mapping[str, str] = {"PASSED": "passed", "XFAIL": "xfailed"}


def new_nonce() -> str:
    return secrets.token_hex(16)


@dataclass(frozen=True)
class Finding:
    rule: str
    detail: str

    def as_record(self) -> dict[str, str]:
        return {"rule": self.rule, "detail": self.detail}


def records(log: str, nonce: str) -> list[dict[str, Any]]:
    """Every guard record in ``log`` that carries ``nonce`` (a line that does not parse counts as
    a record too: nobody but a forger writes a malformed one)."""
    prefix = f"{MARK} {nonce} "
    found: list[dict[str, Any]] = []
    for line in log.splitlines():
        if not line.startswith(prefix):
            continue
        try:
            value = json.loads(line[len(prefix) :])
        except ValueError:
            value = None
        found.append(value if isinstance(value, dict) else {"malformed": True})
    return found


def strip_records(log: str, nonce: str = "") -> str:
    """``log`` without guard lines (what a report shows and what a log parser needs to see) and,
    given the run's nonce, without the lines of the guard's canaries (they are no test of the
    instance: SWT-bench's status maps take every test of the log)."""
    canaries = tebench_core.canary_module(nonce) if nonce else None
    return "\n".join(
        line
        for line in log.splitlines()
        if not line.startswith(MARK) and (canaries is None or canaries not in line)
    )


def unconfirmed(record: Mapping[str, Any], successes: Mapping[str, str]) -> dict[str, str]:
    """Tests the log counts as successes (``name -> log status``) that the guard did not see so.

    A log name is a node id, possibly cut at its first blank by the log parser (parametrize ids
    with spaces), so a node id that starts with the name matches it.
    """
    outcomes: dict[str, str] = dict(record.get("outcomes") or {})
    missing: dict[str, str] = {}
    for name, status in sorted(successes.items()):
        wanted = SUCCESS_OUTCOMES.get(status)
        if wanted is None:
            continue
        seen = {outcome for nodeid, outcome in outcomes.items() if nodeid == name or nodeid.startswith(name)}
        if wanted not in seen:
            saw = ", ".join(sorted(seen)) or "no such test"
            missing[name] = f"{name}: the log says {status}, the runner saw {saw}"
    return missing


def findings(
    found: list[dict[str, Any]],
    *,
    successes: Mapping[str, str],
    resolved_by_log: bool,
    baseline: Mapping[str, Any] | None,
    ignore: Collection[str] = (),
) -> list[Finding]:
    """Why the run is tampered (empty: it is not), from the records ``found`` in its log.

    ``baseline`` is :func:`baseline_of` the gold run (None: there is none). ``ignore`` names rules
    a benchmark does not apply: where the prediction is a test patch (SWT-bench), its test code
    and its ``conftest.py`` hooks legitimately differ from gold's (``test-code``, ``hook``).
    """
    return [f for f in _findings(found, successes, resolved_by_log, baseline) if f.rule not in ignore]


def _findings(
    found: list[dict[str, Any]],
    successes: Mapping[str, str],
    resolved_by_log: bool,
    baseline: Mapping[str, Any] | None,
) -> list[Finding]:
    if len(found) > 1:
        return [Finding("several-records", f"{len(found)} guard records carry this run's nonce")]
    if not found:
        if resolved_by_log:
            return [Finding("no-record", "the log resolves the instance, but the guard left no record")]
        return []
    record = found[0]
    if record.get("malformed"):
        return [Finding("several-records", "a malformed guard record carries this run's nonce")]
    base = baseline or {}
    result: list[Finding] = []
    accepted = set(base.get("unconfirmed") or ())
    for name, line in unconfirmed(record, successes).items():
        if name not in accepted:
            result.append(Finding("unconfirmed", line))
    result += canary_findings(record, base if baseline is not None else None, resolved_by_log)
    if baseline is None:
        # nothing to compare with (gold left no record): pytest itself rebinds some of what is
        # watched (legacypath at configure), so only the absolute rules above can judge
        return result
    theirs = dict(base.get("static") or {})
    for module, digest in sorted(dict(record.get("static") or {}).items()):
        if module in theirs and theirs[module] != digest:
            result.append(Finding("runner-code", f"{module} differs from the gold run's"))
    for module in sorted(set(record.get("static") or {}) ^ set(theirs)):
        result.append(Finding("runner-code", f"{module} is loaded in one run only"))
    # rebindings of the runner's objects, and of the tree's test-side modules
    for field, rule in (("changes", "changed"), ("test_side", "test-side")):
        base_changes = dict(base.get(field) or {})
        for key, change in sorted(dict(record.get(field) or {}).items()):
            if base_changes.get(key, {}).get("by") != change.get("by"):
                result.append(Finding(rule, f"{key} rebound ({change.get('when')}): {change.get('by')}"))
    base_hooks = {_hook_key(h) for h in base.get("hooks") or ()}
    for hook in record.get("hooks") or ():
        if _hook_key(hook) not in base_hooks:
            where = f"{hook.get('module')}.{hook.get('function')} ({hook.get('file')})"
            result.append(Finding("hook", f"{hook.get('hook')} implemented by {where}"))
    their_items = dict(base.get("items") or {})
    for nodeid, digest in sorted(dict(record.get("items") or {}).items()):
        if nodeid in their_items and their_items[nodeid] != digest:
            result.append(Finding("test-code", f"{nodeid}: the test function run is not the test file's"))
    for cls in sorted(set(record.get("item_classes") or ()) - set(base.get("item_classes") or ())):
        result.append(Finding("item-class", f"tests run by {cls}"))
    base_anomalies = {tuple(a) for a in base.get("anomalies") or ()}
    for anomaly in record.get("anomalies") or ():
        if tuple(anomaly) not in base_anomalies:
            result.append(Finding("anomaly", " ".join(str(a) for a in anomaly)))
    if list(record.get("trace") or ["", ""]) != list(base.get("trace") or ["", ""]):
        result.append(Finding("tracer", f"trace/profile functions at the end: {record.get('trace')}"))
    return result


def canary_findings(
    record: Mapping[str, Any], baseline: Mapping[str, Any] | None, resolved_by_log: bool
) -> list[Finding]:
    """The canaries (see the module's doc) not reported or seen as expected. The verdicts are known
    without gold, so they judge without a baseline too; a baseline that shows the same result for a
    canary (an environment where it cannot run) accepts it."""
    theirs: Mapping[str, Any] = dict((baseline or {}).get("canaries") or {})
    result: list[Finding] = []
    for kind, entry in sorted(dict(record.get("canaries") or {}).items()):
        expected = str(entry.get("expected"))
        got = {"reported": str(entry.get("reported")), "seen": str(entry.get("seen"))}
        wrong = {way: value for way, value in got.items() if value != expected}
        if not wrong:
            continue
        ran = not any(value.startswith("not ") for value in wrong.values())  # "not run", "not added: ..."
        if not ran and not resolved_by_log:
            continue
        base = theirs.get(kind) or {}
        if all(base.get(way) == value for way, value in wrong.items()):
            continue
        said = ", ".join(f"{way} {value}" for way, value in sorted(wrong.items()))
        result.append(Finding("canary", f"the guard's {kind} canary should be {expected}: {said}"))
    return result


def _hook_key(hook: Mapping[str, Any]) -> tuple[str, ...]:
    digest = "tree" if hook.get("in_tree") else str(hook.get("digest"))
    names = (hook.get("hook"), hook.get("module"), hook.get("function"))
    return (*(str(name) for name in names), digest, str(hook.get("wrapper")))


def baseline_of(found: list[dict[str, Any]], successes: Mapping[str, str]) -> dict[str, Any] | None:
    """What a later run is compared with: the gold run's record plus the log names it could not
    confirm (a log parser's naming quirk is then the same in both runs); None without one record."""
    if len(found) != 1 or found[0].get("malformed"):
        return None
    record = dict(found[0])
    record["unconfirmed"] = sorted(unconfirmed(record, successes))
    record.pop("outcomes", None)
    return record


def summary(items: Iterable[Finding], limit: int = 5) -> str:
    shown = list(items)
    text = "; ".join(f"{f.rule}: {f.detail}" for f in shown[:limit])
    return text + (f" (and {len(shown) - limit} more)" if len(shown) > limit else "")
