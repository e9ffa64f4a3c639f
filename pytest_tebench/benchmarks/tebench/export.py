"""Export benchmark instances as agent workspaces: one small git repository per instance, at V-0.5.

``tebench export DATASET --out DIR`` writes, for every selected instance::

    DIR/<instance_id>/                    a git repository; branch ``main`` = HEAD = commit "V-0.5"
    DIR/<instance_id>/TEBENCH_TASK.md     the task statement (listed in .git/info/exclude)
    DIR/<instance_id>/.git/tebench.json   instance id and V-0.5 commit, read by ``tebench collect``

Why it is built this way:

* V-0.5 is made by the harness's own :class:`Workspace` (V-1 + ``source_patch``, binary hunks
  included, committed with the fixed identity and date), in a scratch workspace; so the exported
  HEAD has the very commit hash the evaluation workspaces give V-0.5, on every machine.
* The export must not leak the answer. A clone of the mirror, even reset to V-0.5, would still
  hold V0 (and the gold test files) in its objects. Instead the export is an empty repository
  that fetches the scratch workspace's ``v-0.5`` tag with ``--depth 2``: git transfers V-0.5,
  V-1 and their trees only, and records V-1 as a shallow boundary, so nothing older or newer
  exists in it, not even as a dangling object. Fetching by path leaves no remote behind.
* The task statement sits in the folder, where an agent started there will find it, but is
  excluded from git (``.git/info/exclude``) and from ``tebench collect``'s diff.
* ``tebench.json`` is written last: a folder whose export was interrupted is never taken for one.

Instances are selected with :func:`keyword_matcher`, a small ``-k`` language over instance ids,
projects and labels.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import Any

from pytest_tebench.benchmarks.base import EvalContext
from pytest_tebench.benchmarks.tebench.adapter import TebenchAdapter
from pytest_tebench.benchmarks.tebench.adapter import TebenchInstance
from pytest_tebench.errors import HarnessError
from pytest_tebench.errors import InputError
from pytest_tebench.errors import TebenchError
from pytest_tebench.instance.datasets import RawRecord
from pytest_tebench.instance.datasets import describe_dataset
from pytest_tebench.instance.datasets import load_records
from pytest_tebench.instance.selection import instance_names
from pytest_tebench.instance.selection import keyword_matcher
from pytest_tebench.workspace.checkout import Workspace
from pytest_tebench.workspace.gitcmd import git
from pytest_tebench.workspace.repos import RepositoryStore

EXPORT_FORMAT = "pytest-tebench-export/1"
#: Where the instance id and the V-0.5 commit live, relative to the repository's git dir.
METADATA_FILE = "tebench.json"
TASK_FILE = "TEBENCH_TASK.md"
BRANCH = "main"


class ExportRefused(TebenchError):
    """The export would overwrite something (a non-empty instance folder); nothing was written."""


class NotAnExport(TebenchError):
    """A folder is not a ``tebench export`` repository; the message says why."""


@dataclass(frozen=True)
class ExportMetadata:
    """What ``tebench collect`` needs to know about an exported folder."""

    instance_id: str
    #: The V-0.5 commit: the agent's changes are the diff from here to the working tree.
    commit: str
    task_file: str = TASK_FILE


@dataclass(frozen=True)
class ExportConfig:
    dataset: str
    out: Path
    keyword: str = ""
    split: str = "test"


@dataclass
class ExportResult:
    #: ``(instance_id, folder, V-0.5 commit)`` per exported instance.
    exported: list[tuple[str, Path, str]] = field(default_factory=list)
    #: ``(instance_id, reason)`` per selected instance that could not be exported.
    failed: list[tuple[str, str]] = field(default_factory=list)


# -- export ---------------------------------------------------------------------------------
def export(
    config: ExportConfig, context: EvalContext, *, progress: Callable[[str], object] = print
) -> ExportResult:
    """Export every instance of ``config.dataset`` that ``config.keyword`` selects.

    Raises :class:`InputError` for an unreadable dataset or when nothing is selected, and
    :class:`ExportRefused` (before writing anything) when an instance folder is not empty.
    One instance that cannot be exported is recorded in ``failed``; the others still are.
    """
    records = load_records(config.dataset, split=config.split)
    # validation is the adapter's: an export must accept exactly the rows an evaluation accepts
    instances = TebenchAdapter().load_instances(records)
    matches = keyword_matcher(config.keyword)
    selected = [(i, r) for i, r in zip(instances, records, strict=True) if matches(instance_names(i))]
    if not selected:
        raise InputError(f"no instance matches -k {config.keyword!r}", source=config.dataset)
    _refuse_overwrite(config.out, [i.instance_id for i, _ in selected])

    store = context.repos
    result = ExportResult()
    for instance, record in selected:
        if instance.problem is not None:
            result.failed.append((instance.instance_id, instance.problem))
            progress(f"skipped {instance.instance_id}: {instance.problem}")
            continue
        target = config.out / instance.instance_id
        try:
            commit = export_instance(
                instance.payload, record, store, target, scratch=context.work_dir,
                dataset=describe_dataset(config.dataset),
            )  # fmt: skip
        except (HarnessError, OSError) as exc:
            result.failed.append((instance.instance_id, str(exc)))
            progress(f"failed  {instance.instance_id}: {exc}")
            continue
        result.exported.append((instance.instance_id, target, commit))
        progress(f"exported {instance.instance_id} -> {target} (V-0.5 {commit[:12]})")
    return result


def export_instance(
    payload: TebenchInstance, record: RawRecord, store: RepositoryStore, target: Path, *, scratch: Path,
    dataset: str,
) -> str:  # fmt: skip
    """Create the repository of one instance at ``target`` (absent or empty); return V-0.5's hash."""
    mirror = store.locate(payload.repo, [payload.v_minus_1_commit])
    created = not target.exists()
    workspace = Workspace.create(mirror, payload.v_minus_1_commit, payload.source_patch, parent=scratch)
    try:
        commit = workspace.rev("v-0.5")
        target.mkdir(parents=True, exist_ok=True)
        # an empty template: no sample hooks or other files the agent's git would pick up
        git(target, "init", "--quiet", "--template=")
        git(target, "symbolic-ref", "HEAD", f"refs/heads/{BRANCH}")
        git(target, "fetch", "--quiet", "--no-tags", "--depth", "2", str(workspace.path), "refs/tags/v-0.5")
        git(target, "checkout", "--quiet", "--force", "-B", BRANCH, commit)
        # FETCH_HEAD names the scratch workspace; nothing may point back at the full history
        (target / ".git" / "FETCH_HEAD").unlink(missing_ok=True)
        (target / TASK_FILE).write_text(task_statement(payload, record.data.get("v0_message")), "utf-8")
        info = target / ".git" / "info"
        info.mkdir(exist_ok=True)
        (info / "exclude").write_text(f"# the task statement of tebench export\n/{TASK_FILE}\n", "utf-8")
        metadata = {
            "format": EXPORT_FORMAT,
            "instance_id": payload.instance_id,
            "project": payload.project,
            "repo": payload.repo,
            "v_minus_1_commit": payload.v_minus_1_commit,
            "v0_5_commit": commit,
            "task_file": TASK_FILE,
            "dataset": dataset,
        }
        (target / ".git" / METADATA_FILE).write_text(json.dumps(metadata, indent=2) + "\n", "utf-8")
    except BaseException:
        _discard(target, created=created)
        raise
    finally:
        workspace.remove()
    return commit


def task_statement(payload: TebenchInstance, message: object) -> str:
    """The instructions an agent gets: what changed and what to do, without hints at the answer."""
    text = message.strip() if isinstance(message, str) and message.strip() else "(no commit message)"
    quoted = "\n".join(f"> {line}".rstrip() for line in text.splitlines())
    return f"""# Test evolution task {payload.instance_id}

Project: {payload.project} ({payload.repo}); instance: {payload.instance_id}.

## What changed

The production code of this repository has moved on, and its tests have not. The latest commit
(HEAD, "V-0.5"; see `git show HEAD`) applies the following change to the code, the build and
the resources, but none of the developer's test changes:

{quoted}

## What to do

Evolve the test suite to match the change:

- fix the existing tests that the change breaks (they no longer compile or pass);
- update the existing tests that still pass but no longer check the changed behaviour;
- add new tests for behaviour the change introduces and no test covers yet.

Change test code only: files under `src/test` (test sources and test resources). Do not change
`src/main`, the build files or anything else outside the test tree: the change above is given.

Leave your work in this folder's working tree; committing it is optional. Everything that
differs from the V-0.5 commit (edits, new files, deletions, renames) is collected as your
answer, except this file.
"""


def read_metadata(folder: Path) -> ExportMetadata:
    """The metadata of an exported folder; raises :class:`NotAnExport` saying what is wrong."""
    path = folder / ".git" / METADATA_FILE
    if not (folder / ".git").is_dir():
        raise NotAnExport("not a git repository with its own .git directory")
    if not path.is_file():
        raise NotAnExport(f"no .git/{METADATA_FILE} (not made by tebench export)")
    try:
        data: Any = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise NotAnExport(f"unreadable .git/{METADATA_FILE}: {exc}") from exc
    if not isinstance(data, dict) or data.get("format") != EXPORT_FORMAT:
        raise NotAnExport(f".git/{METADATA_FILE} is not in the {EXPORT_FORMAT} format")
    instance_id, commit = data.get("instance_id"), data.get("v0_5_commit")
    task_file = data.get("task_file", TASK_FILE)
    if not (isinstance(instance_id, str) and instance_id and isinstance(commit, str) and commit):
        raise NotAnExport(f".git/{METADATA_FILE} lacks instance_id or v0_5_commit")
    if not isinstance(task_file, str):
        raise NotAnExport(f".git/{METADATA_FILE}: task_file must be a string")
    return ExportMetadata(instance_id, commit, task_file)


# -- internals ------------------------------------------------------------------------------
def _refuse_overwrite(out: Path, instance_ids: Sequence[str]) -> None:
    if out.exists() and not out.is_dir():
        raise ExportRefused(f"--out {out} exists and is not a directory")
    unsafe = [i for i in instance_ids if "/" in i or "\\" in i or i.startswith(".") or i != i.strip()]
    if unsafe:
        raise InputError(f"instance id(s) not usable as folder names: {', '.join(map(repr, unsafe))}")
    busy = [
        str(out / i) for i in instance_ids
        if (out / i).exists() and (not (out / i).is_dir() or any((out / i).iterdir()))
    ]  # fmt: skip
    if busy:
        shown = ", ".join(busy[:5]) + (f" and {len(busy) - 5} more" if len(busy) > 5 else "")
        raise ExportRefused(
            f"refusing to overwrite {len(busy)} non-empty folder(s): {shown}; "
            "remove them or choose another --out"
        )


def _discard(target: Path, *, created: bool) -> None:
    """Remove a half-made export; an empty folder the user made is emptied, not removed."""
    if created:
        shutil.rmtree(target, ignore_errors=True)
    elif target.is_dir():
        for child in target.iterdir():
            if child.is_dir() and not child.is_symlink():
                shutil.rmtree(child, ignore_errors=True)
            else:
                child.unlink(missing_ok=True)
