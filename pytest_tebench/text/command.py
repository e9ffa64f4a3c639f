"""``tebench text``: load a dataset, build its prompts, write the text dataset, summarise.

The benchmark's prompt layout and the ``-k`` predicate are chosen by the caller (the command
line), so this module stays benchmark-neutral.
"""

from __future__ import annotations

import resource
import sys
import time
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path

from pytest_tebench.errors import InputError
from pytest_tebench.instance.datasets import load_records
from pytest_tebench.instance.datasets import write_dataset
from pytest_tebench.text.build import PromptLayout
from pytest_tebench.text.build import TextResult
from pytest_tebench.text.build import TextSettings
from pytest_tebench.text.build import build_texts
from pytest_tebench.workspace.repos import DEFAULT_URL_TEMPLATE
from pytest_tebench.workspace.repos import RepositoryStore


@dataclass(frozen=True)
class TextCommand:
    dataset: str
    out: Path
    settings: TextSettings
    cache_dir: Path
    select: Callable[[Iterable[str]], bool] = lambda names: True
    jobs: int = 1
    split: str = "test"
    repos: tuple[Path, ...] = ()
    repo_url: str = DEFAULT_URL_TEMPLATE
    allow_network: bool = True
    embedded: Mapping[str, Callable[[Path], object]] = field(default_factory=dict)


def make_texts(
    command: TextCommand, layout: PromptLayout, *, progress: Callable[[str], object] = print
) -> TextResult:
    """Build the text rows of the selected instances (nothing is written)."""
    if command.out.suffix not in (".jsonl", ".parquet"):
        raise InputError(f"--out must end in .jsonl or .parquet, not {command.out.name}")
    instances = layout.load(load_records(command.dataset, split=command.split))
    selected = [i for i in instances if command.select(i.names)]
    if not selected:
        raise InputError("no instance selected", source=command.dataset)
    store = RepositoryStore(
        command.cache_dir,
        local_dirs=command.repos,
        url_template=command.repo_url,
        allow_network=command.allow_network,
        embedded=command.embedded,
    )
    return build_texts(selected, layout, store, command.settings, jobs=command.jobs, progress=progress)


def run_text(command: TextCommand, layout: PromptLayout, *, progress: Callable[[str], object] = print) -> int:
    """Build and write the text dataset; 1 when an instance failed (the others are written)."""
    started = time.perf_counter()
    result = make_texts(command, layout, progress=progress)
    write_dataset(result.rows, command.out)
    elapsed = time.perf_counter() - started
    built = [o for o in result.outcomes if o.row is not None]
    hit = sum(o.budget_hit for o in built)
    style = command.settings.style
    progress(
        f"{len(built)} {layout.name} {style} prompt(s) written to {command.out}; "
        f"{len(result.failed)} failed; "
        f"{elapsed:.1f} s ({elapsed / max(1, len(result.outcomes)):.2f} s per instance, "
        f"peak memory {peak_memory_mb():.0f} MB)"
    )
    if style == "bm25":
        limit = command.settings.max_tokens
        over = sum(o.tokens > limit for o in built)
        progress(f"{hit} prompt(s) hit the {limit}-token budget; {over} over it with no file (long task)")
    for outcome in result.failed:
        print(f"  {outcome.instance_id}: {outcome.error}", file=sys.stderr)
    return 1 if result.failed else 0


def peak_memory_mb() -> float:
    """Peak resident memory of this process and its finished children, in MiB (Linux: KiB units)."""
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return max(own, children) / 1024
