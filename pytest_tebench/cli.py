"""The ``tebench`` command: build datasets, export agent workspaces, collect their edits, images.

    tebench build REPO --repo OWNER/NAME --out FILE [--since D] [--until D] [--max N] [-j N]
    tebench image {build,ensure,tag,info}

Thin on purpose: each subcommand parses its arguments and calls one module.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from pytest_tebench.errors import TebenchError


def _default_cache() -> Path:
    from pytest_tebench.plugin import default_cache_dir

    return default_cache_dir()


def _add_executor_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--executor", choices=("local", "docker", "auto"), default="local")
    parser.add_argument("--jdk", default=None, help="JDK feature version or home (default: chosen per build)")
    parser.add_argument("--cache-dir", type=Path, default=None, help="default: ~/.cache/pytest-tebench")
    parser.add_argument("--timeout-compile", type=float, default=300.0)
    parser.add_argument("--timeout-test", type=float, default=900.0)


def _build(args: argparse.Namespace) -> int:
    from pytest_tebench.instance.builder import BuildConfig
    from pytest_tebench.instance.builder import build
    from pytest_tebench.instance.builder import write_dataset
    from pytest_tebench.run.executors import ExecutorOptions
    from pytest_tebench.run.executors import choose_java_version
    from pytest_tebench.run.executors import create_executor

    repo_dir = Path(args.repo_dir).resolve()
    cache = (args.cache_dir or _default_cache()).resolve()
    executor = create_executor(ExecutorOptions(name=args.executor, jdk=args.jdk), progress=print)
    try:
        config = BuildConfig(
            repo_dir=repo_dir,
            repo=args.repo,
            work_dir=cache / "build-workspaces",
            maven_repo=cache / "maven-repository",
            executor=lambda: executor,
            java_version=lambda level: choose_java_version(executor, level, args.jdk),
            since=args.since,
            until=args.until,
            rev=args.rev,
            max_instances=args.max,
            jobs=args.jobs,
            compile_timeout=args.timeout_compile,
            test_timeout=args.timeout_test,
        )
        out = Path(args.out)
        state = out.with_name(out.name + ".state.jsonl")
        result = build(config, state, progress=print)
    finally:
        executor.close()
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


def _image(args: argparse.Namespace) -> int:
    from pytest_tebench.run import docker_image

    return docker_image.main([args.action, *args.rest])


def make_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="tebench", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)

    build = commands.add_parser("build", help="build TEBench instances from a repository's history")
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
    _add_executor_options(build)
    build.set_defaults(run=_build)

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
