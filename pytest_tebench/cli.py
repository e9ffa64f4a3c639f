"""The ``tebench`` command: build datasets, export agent workspaces, collect their edits, images.

    tebench build REPO --repo OWNER/NAME --out FILE [--since D] [--until D] [--max N] [-j N]
    tebench export DATASET --out DIR [-k EXPR] [--repos DIR ...] [--cache-dir DIR]
    tebench collect DIR --model NAME --out FILE
    tebench report RUN.json [RUN2.json ...] --html PATH

    tebench text DATASET --benchmark tebench|swebench --style oracle|bm25 --out FILE [-k EXPR] [-j N]
    tebench image {build,ensure,tag,info}
    tebench swebench coverage --dataset DATASET [--images build|official|auto] [--repos DIR] [--json]

Thin on purpose: each subcommand parses its arguments and calls one module.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Iterable
from collections.abc import Sequence
from pathlib import Path

from pytest_tebench.errors import InputError
from pytest_tebench.errors import TebenchError
from pytest_tebench.settings import CORE_OPTIONS
from pytest_tebench.settings import OptionSpec
from pytest_tebench.settings import default_cache_dir


def _add_options(parser: argparse.ArgumentParser, specs: Iterable[OptionSpec]) -> None:
    """The plugin's options under the same names minus the prefix (``--timeout-test``): one
    declaration, one default, one validator for both."""
    for spec in specs:
        kwargs = spec.argparse_kwargs()
        kwargs["help"] = str(kwargs["help"]).replace("--tebench-", "--")
        parser.add_argument(f"--{spec.name}", dest=spec.dest, **kwargs)


def _add_executor_options(parser: argparse.ArgumentParser) -> None:
    from pytest_tebench.run.executors import EXECUTOR_OPTIONS
    from pytest_tebench.run.maven.settings import MAVEN_OPTIONS

    cache = next(spec for spec in CORE_OPTIONS if spec.name == "cache-dir")
    executor = [spec for spec in EXECUTOR_OPTIONS if spec.name == "executor"]
    _add_options(parser, [cache, *executor, *MAVEN_OPTIONS])


def _build(args: argparse.Namespace) -> int:
    if args.benchmark == "realcode":
        from pytest_tebench.benchmarks.realcode.builder import main as build_realcode

        return build_realcode(args)
    if args.commit or args.min_statements is not None or args.require_fail_to_pass:
        raise InputError(
            "--commit, --min-statements and --require-fail-to-pass are options of --benchmark realcode"
        )
    from pytest_tebench.benchmarks.building import open_environment
    from pytest_tebench.benchmarks.tebench.builder import BuildConfig
    from pytest_tebench.benchmarks.tebench.builder import build
    from pytest_tebench.instance.datasets import write_dataset

    out = Path(args.out)
    with open_environment(args, what="the commits' tests") as environment:
        config = BuildConfig(
            **environment,
            since=args.since,
            until=args.until,
            rev=args.rev,
            max_instances=args.max,
            jobs=args.jobs,
            retry_unsupported=args.retry_unsupported,
        )
        result = build(config, out.with_name(out.name + ".state.jsonl"), progress=print)
    write_dataset(result.rows, out)
    rejections = out.with_name(out.name + ".rejections.json")
    import json

    rejections.write_text(
        json.dumps({"counts": result.reason_counts(), "commits": result.rejections}, indent=2) + "\n",
        encoding="utf-8",
    )
    print(f"{len(result.rows)} instances written to {out}; {len(result.rejections)} commits rejected:")
    for reason, count in result.reason_counts().items():
        print(f"  {count:5d}  {reason}")
    print(f"reasons per commit: {rejections}")
    return 0


def _export(args: argparse.Namespace) -> int:
    from pytest_tebench.benchmarks.tebench.export import ExportConfig
    from pytest_tebench.benchmarks.tebench.export import export
    from pytest_tebench.context import TebenchOptions
    from pytest_tebench.context import build_context

    config = ExportConfig(
        dataset=args.dataset, out=Path(args.out).resolve(), keyword=args.keyword, split=args.split
    )
    options = TebenchOptions(
        predictions="gold",
        dataset=args.dataset,
        split=args.split,
        repos=tuple(Path(d).resolve() for d in args.repos),
        repo_url=args.repo_url,
        offline=args.offline,
        cache_dir=(args.cache_dir or default_cache_dir()).resolve(),
    )
    result = export(config, build_context(options), progress=print)
    print(f"{len(result.exported)} instance(s) exported to {config.out}; {len(result.failed)} failed")
    for instance_id, reason in result.failed:
        print(f"  {instance_id}: {reason}", file=sys.stderr)
    return 1 if result.failed else 0


def _collect(args: argparse.Namespace) -> int:
    from pytest_tebench.benchmarks.tebench.collect import collect
    from pytest_tebench.benchmarks.tebench.collect import write_predictions

    result = collect(Path(args.dir), args.model)
    write_predictions(result.predictions, Path(args.out))
    print(f"{len(result.predictions)} prediction(s) of {args.model} written to {args.out}")
    if result.skipped:
        print(f"{len(result.skipped)} folder(s) skipped:", file=sys.stderr)
        for folder, reason in result.skipped:
            print(f"  {folder}: {reason}", file=sys.stderr)
    return 1 if result.skipped else 0


def _cache(args: argparse.Namespace) -> int:
    from pytest_tebench.benchmarks.swebench import build_failures
    from pytest_tebench.results import ResultCache
    from pytest_tebench.run.maven import build_store

    root = (args.cache_dir or default_cache_dir()).resolve()
    cache = ResultCache(root / "results")
    builds = root / "prebuilt"
    if args.action == "retry-builds":
        removed = build_failures.forget_all(root)
        print(f"forgot {removed} failed image build(s): the next run builds them again")
    elif args.action == "prune":
        if args.older_than is None and args.max_size is None and args.max_build_size is None:
            raise InputError(
                "say what to prune: --older-than DAYS, --max-size SIZE and/or --max-build-size SIZE"
            )
        older_than = None if args.older_than is None else args.older_than * 86400
        removed = cache.prune(older_than=older_than, max_bytes=args.max_size)
        print(f"removed {removed} stored result(s) from {cache.root}")
        removed = build_store.prune(builds, older_than=older_than, max_bytes=args.max_build_size)
        print(f"removed {removed} stored build(s) from {builds}")
    for root, stats, what in (
        (cache.root, cache.stats(), "result"),
        (builds, build_store.stats(builds), "build"),
    ):
        when = ""
        if stats.oldest is not None and stats.newest is not None:
            when = f", last used {_ago(stats.oldest)} to {_ago(stats.newest)}"
        print(f"{root}: {stats.entries} stored {what}(s), {stats.bytes / 1e6:.1f} MB{when}")
    failed = build_failures.count(root)
    if failed:
        print(
            f"{failed} image build(s) failed earlier and are not tried again (`tebench cache retry-builds`)"
        )
    return 0


def _ago(timestamp: float) -> str:
    import time

    days = (time.time() - timestamp) / 86400
    return f"{days:.1f} days ago"


def _days(value: str) -> float:
    try:
        days = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of days: {value!r}") from None
    if not 0 <= days < math.inf:  # NaN too: a prune must say what it removes
        raise argparse.ArgumentTypeError(f"not a number of days: {value!r} (0 or more)")
    return days


def _size(value: str) -> int:
    units = {"": 1, "k": 10**3, "m": 10**6, "g": 10**9}
    text = value.strip().lower().removesuffix("b")
    number, unit = (text[:-1], text[-1]) if text and text[-1] in units else (text, "")
    try:
        size = float(number) * units[unit]
    except ValueError:
        size = math.nan
    if not 0 <= size < math.inf:
        raise argparse.ArgumentTypeError(f"not a size like 500m or 2g: {value!r}")
    return int(size)


def _text(args: argparse.Namespace) -> int:
    from pytest_tebench.context import embedded_repositories
    from pytest_tebench.instance.selection import keyword_matcher
    from pytest_tebench.text.build import PromptLayout
    from pytest_tebench.text.build import TextSettings
    from pytest_tebench.text.command import TextCommand
    from pytest_tebench.text.command import run_text

    layout: PromptLayout
    if args.benchmark == "swebench":
        from pytest_tebench.benchmarks.swebench.text import SwebenchLayout

        layout = SwebenchLayout()
    else:
        from pytest_tebench.benchmarks.tebench.text import TebenchLayout

        layout = TebenchLayout()
    cache = (args.cache_dir or default_cache_dir()).resolve()
    command = TextCommand(
        dataset=args.dataset,
        out=Path(args.out),
        settings=TextSettings(
            style=args.style, max_tokens=args.max_tokens, top_k=args.top_k, scratch=cache / "workspaces"
        ),
        select=keyword_matcher(args.keyword),
        jobs=args.jobs,
        split=args.split,
        cache_dir=cache,
        repos=tuple(Path(d).resolve() for d in args.repos),
        repo_url=args.repo_url,
        allow_network=not args.offline,
        embedded=embedded_repositories(),
    )
    return run_text(command, layout, progress=print)


def _image(args: argparse.Namespace) -> int:
    from pytest_tebench.run import docker_image

    return docker_image.main([args.action, *args.rest])


def _swebench(args: argparse.Namespace) -> int:
    import json

    from pytest_tebench.benchmarks.swebench import coverage
    from pytest_tebench.instance.datasets import load_records

    rows = [record.data for record in load_records(args.dataset, split=args.split)]
    locate = None
    if args.repos:
        from pytest_tebench.workspace.repos import RepositoryStore

        cache = (args.cache_dir or default_cache_dir()).resolve()
        store = RepositoryStore(
            cache, local_dirs=[Path(d).resolve() for d in args.repos], allow_network=False
        )
        locate = store.locate
    entries = coverage.coverage(rows, args.images, locate)
    if args.json:
        print(json.dumps(coverage.as_json(entries, args.images), indent=2))
    else:
        print(coverage.table(entries), end="")
    return 0


def _report(args: argparse.Namespace) -> int:
    from pytest_tebench.report.html import load_runs
    from pytest_tebench.report.html import require_dependencies
    from pytest_tebench.report.html import write_html

    require_dependencies("tebench report --html")
    runs = load_runs(args.reports)
    path = write_html(runs, args.html, title=args.title)
    items = sum(len(run.report.get("results") or []) for run in runs)
    print(f"{len(runs)} report(s), {items} item(s): {path}")
    return 0


def make_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="tebench", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)

    build = commands.add_parser(
        "build", help="build TEBench instances from a repository's history (or RealCodeJava ones at a commit)"
    )
    build.add_argument("repo_dir", metavar="REPO", help="a local clone or mirror")
    build.add_argument(
        "--repo", required=True, metavar="OWNER/NAME", help="the slug written into the dataset"
    )
    build.add_argument("--out", required=True, help="dataset file (.jsonl or .parquet)")
    build.add_argument("--since", default=None, help="only commits after this date (git date format)")
    build.add_argument("--until", default=None, help="only commits before this date")
    build.add_argument("--rev", default="HEAD", help="history to walk (default: HEAD)")
    build.add_argument("--max", type=int, default=None, help="keep at most N instances (oldest first)")
    build.add_argument("-j", "--jobs", type=int, default=1, help="commits validated in parallel")
    build.add_argument(
        "--retry-unsupported", action="store_true",
        help="build again the commits a previous run found unbuildable here (no JDK fits, an "
        "artifact published nowhere reachable); by default they stay rejected",
    )  # fmt: skip
    build.add_argument(
        "--benchmark", choices=("tebench", "realcode"), default="tebench",
        help="tebench: instances from the history; realcode: method-body tasks at one commit",
    )  # fmt: skip
    build.add_argument("--commit", default=None, help="realcode: the commit to build at (default: HEAD)")
    build.add_argument(
        "--min-statements", type=int, default=None, help="realcode: statements a body needs (default: 2)"
    )
    build.add_argument(
        "--require-fail-to-pass", action="store_true", help="realcode: drop methods whose stub fails no test"
    )
    build.add_argument(
        "--network", action="store_true",
        help="let the tests reach the network, as evaluation's --tebench-network does (Maven stays "
        "offline after the warm-up); without it a commit whose gold tests need an external host is "
        "rejected as unsupported here",
    )  # fmt: skip
    _add_executor_options(build)
    build.set_defaults(run=_build)

    export = commands.add_parser(
        "export", help="export instances as agent workspaces: one git repository at V-0.5 per instance"
    )
    export.add_argument(
        "dataset", metavar="DATASET", help="'demo', a .jsonl/.json/.parquet file or a hub name"
    )
    export.add_argument("--out", required=True, metavar="DIR", help="creates DIR/<instance_id>/ per instance")
    export.add_argument(
        "-k", dest="keyword", default="", metavar="EXPR",
        help="select instances: words matched as substrings of the instance id, project or labels, "
        "combined with and/or/not and parentheses",
    )  # fmt: skip
    export.add_argument(
        "--repos", action="extend", nargs="+", default=[], metavar="DIR",
        help="directories of local clones or mirrors, searched before cloning (as --tebench-repos)",
    )  # fmt: skip
    export.add_argument("--cache-dir", type=Path, default=None, help="default: ~/.cache/pytest-tebench")
    export.add_argument("--split", default="test", help="hub dataset split (default: test)")
    export.add_argument(
        "--repo-url", default="https://github.com/{repo}.git", metavar="TEMPLATE",
        help="clone URL for repositories not found locally; {repo} is owner/name",
    )  # fmt: skip
    export.add_argument("--offline", action="store_true", help="never clone or fetch repositories")
    export.set_defaults(run=_export)

    collect = commands.add_parser(
        "collect", help="collect the agents' edits of exported folders as predictions"
    )
    collect.add_argument(
        "dir", metavar="DIR", help="the --out folder of tebench export (or one exported folder)"
    )
    collect.add_argument(
        "--model", required=True, metavar="NAME", help="model_name_or_path of the predictions"
    )
    collect.add_argument("--out", required=True, metavar="FILE", help="predictions file (.jsonl)")
    collect.set_defaults(run=_collect)

    cache = commands.add_parser(
        "cache",
        help="show or trim the results and compiled builds stored by earlier runs; retry image builds "
        "that failed",
    )
    cache.add_argument("action", choices=("info", "prune", "retry-builds"))
    cache.add_argument("--cache-dir", type=Path, default=None, help="default: ~/.cache/pytest-tebench")
    cache.add_argument(
        "--older-than", type=_days, default=None, metavar="DAYS",
        help="prune results and compiled builds unused for DAYS days",
    )  # fmt: skip
    cache.add_argument(
        "--max-size", type=_size, default=None, metavar="SIZE",
        help="prune the least recently used results until the store holds at most SIZE (e.g. 500m)",
    )  # fmt: skip
    cache.add_argument(
        "--max-build-size", type=_size, default=None, metavar="SIZE",
        help="prune the least recently used compiled builds (an instance's production and test "
        "classes, reused by its later launches) until they take at most SIZE (e.g. 5g)",
    )  # fmt: skip
    cache.set_defaults(run=_cache)

    report = commands.add_parser(
        "report", help="render JSON reports (one run, or several side by side) as one HTML page"
    )
    report.add_argument("reports", nargs="+", metavar="RUN.json", help="JSON reports (--tebench-report)")
    report.add_argument("--html", required=True, metavar="PATH", help="the self-contained HTML file to write")
    report.add_argument("--title", default=None, help="page title (default: the runs' names)")
    report.set_defaults(run=_report)

    text = commands.add_parser(
        "text", help="build an LM text dataset (SWE-bench_oracle / _bm25_13K style prompts) from a dataset"
    )
    text.add_argument("dataset", metavar="DATASET", help="'demo', a .jsonl/.json/.parquet file or a hub name")
    text.add_argument("--benchmark", choices=("tebench", "swebench"), default="tebench")
    text.add_argument("--style", choices=("oracle", "bm25"), default="bm25")
    text.add_argument("--max-tokens", type=int, default=13_000, help="bm25: cl100k_base token budget")
    text.add_argument("--top-k", type=int, default=20, help="bm25: files retrieved before the budget")
    text.add_argument("--out", required=True, metavar="FILE", help="the text dataset (.jsonl or .parquet)")
    text.add_argument(
        "-k", dest="keyword", default="", metavar="EXPR",
        help="select instances: words matched as substrings of the instance id, project or repo, "
        "combined with and/or/not and parentheses",
    )  # fmt: skip
    text.add_argument("-j", "--jobs", type=int, default=1, help="instances built in parallel (processes)")
    text.add_argument(
        "--repos", action="extend", nargs="+", default=[], metavar="DIR",
        help="directories of local clones or mirrors, searched before cloning (as --tebench-repos)",
    )  # fmt: skip
    text.add_argument("--cache-dir", type=Path, default=None, help="default: ~/.cache/pytest-tebench")
    text.add_argument("--split", default="test", help="hub dataset split (default: test)")
    text.add_argument(
        "--repo-url", default="https://github.com/{repo}.git", metavar="TEMPLATE",
        help="clone URL for repositories not found locally; {repo} is owner/name",
    )  # fmt: skip
    text.add_argument("--offline", action="store_true", help="never clone or fetch repositories")
    text.set_defaults(run=_text)

    swebench = commands.add_parser("swebench", help="SWE-bench: where each instance of a dataset runs")
    swebench.add_argument("action", choices=("coverage",))
    swebench.add_argument(
        "--dataset", required=True, metavar="DATASET", help="a .jsonl/.json/.parquet file or a hub name"
    )
    swebench.add_argument("--split", default="test", help="hub dataset split (default: test)")
    swebench.add_argument(
        "--images", choices=("build", "official", "auto"), default="auto",
        help="as --tebench-swebench-images (default: auto: build where we can, else the official image)",
    )  # fmt: skip
    swebench.add_argument(
        "--repos", action="extend", nargs="+", default=[], metavar="DIR",
        help="local clones or mirrors (as --tebench-repos): the tests of each instance to build are "
        "read for internet use, as an offline run reads them (never cloned)",
    )  # fmt: skip
    swebench.add_argument("--cache-dir", type=Path, default=None, help="default: ~/.cache/pytest-tebench")
    swebench.add_argument(
        "--json", action="store_true",
        help="print a JSON object (repositories: {repo: {build, official, unsupported}}, entries...)",
    )  # fmt: skip
    swebench.set_defaults(run=_swebench)

    image = commands.add_parser("image", help="build or inspect the Docker base image")
    image.add_argument("action", choices=("build", "ensure", "tag", "info"))
    image.add_argument("rest", nargs=argparse.REMAINDER)
    image.set_defaults(run=_image)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = make_parser().parse_args(argv)
    try:
        return int(args.run(args))
    except TebenchError as exc:
        print(f"tebench {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"tebench {args.command}: interrupted; run the same command again to resume", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
