"""The Dask executor's names and options (plain data; importing this never imports Dask).

``--tebench-executor=dask://HOST:PORT`` (plain TCP) or ``dask+tls://HOST:PORT`` (TLS, with the
certificates of Dask's own security configuration) names the scheduler;
``--tebench-dask-scheduler-file=PATH`` names it through the file ``dask scheduler
--scheduler-file`` writes (the executor is then ``dask``).
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_tebench.errors import InputError
from pytest_tebench.settings import OptionSpec

#: ``--tebench-executor`` value that means "the scheduler of --tebench-dask-scheduler-file".
DASK_FROM_FILE = "dask"
#: fnmatch patterns of the Dask executor names, offered through ``pytest_tebench_executor_names``.
DASK_EXECUTOR_PATTERNS = ("dask://*", "dask+tls://*", DASK_FROM_FILE)
#: Where builds run on a worker: the sandbox, or the worker host itself (trusted predictions only).
WORKER_EXECUTORS = ("docker", "local")
DEFAULT_RETRIES = 2
DEFAULT_CONNECT_TIMEOUT = 30.0

_ADDRESS = re.compile(
    r"(?P<scheme>dask|dask\+tls)://(?P<host>\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.-]+):(?P<port>\d{1,5})"
)


def retries(value: str) -> int:
    if value.isdigit() and int(value) <= 10:
        return int(value)
    raise argparse.ArgumentTypeError(f"not a number of retries from 0 to 10: {value!r}")


def scheduler_file(value: str) -> Path:
    path = Path(value).expanduser()
    if not path.is_file():
        raise argparse.ArgumentTypeError(
            f"no scheduler file at {value} (dask scheduler --scheduler-file writes it)"
        )
    return path.resolve()


DASK_OPTIONS: tuple[OptionSpec, ...] = (
    OptionSpec(
        "dask-scheduler-file", metavar="PATH", type=scheduler_file,
        help="Dispatch items to the Dask cluster whose scheduler wrote PATH (dask scheduler "
        "--scheduler-file); same as --tebench-executor=dask://HOST:PORT. See docs/dask.md.",
    ),
    OptionSpec(
        "dask-worker-executor", choices=WORKER_EXECUTORS, default="docker",
        help="Dask: where a worker runs builds: 'docker' (the sandbox, needs an engine on every worker "
        "host) or 'local' (the worker host's JDKs and Maven, unsandboxed: trusted predictions only). "
        "Default: %(default)s.",
    ),
    OptionSpec(
        "dask-retries", metavar="N", type=retries, default=DEFAULT_RETRIES,
        help="Dask: times an item's task is submitted again when it raised (a worker that dies "
        "mid-build is replaced by the scheduler on its own). Default: %(default)s.",
    ),
)  # fmt: skip


@dataclass(frozen=True)
class DaskTarget:
    """Which scheduler to reach, and how builds run on its workers."""

    #: ``tcp://HOST:PORT`` or ``tls://HOST:PORT``; None when ``scheduler_file`` names it.
    address: str | None
    scheduler_file: Path | None
    worker_executor: str = "docker"
    retries: int = DEFAULT_RETRIES
    connect_timeout: float = DEFAULT_CONNECT_TIMEOUT

    @property
    def shown(self) -> str:
        return self.address or f"scheduler file {self.scheduler_file}"


def is_dask_executor(name: str) -> bool:
    return name == DASK_FROM_FILE or name.startswith(("dask://", "dask+tls://"))


def dask_target(executor: str, values: Mapping[str, Any]) -> DaskTarget | None:
    """The cluster a run's options name, None when the executor is not Dask's.

    Raises :class:`InputError` for a malformed address or contradicting options."""
    file_value = values.get("dask_scheduler_file")
    file = Path(file_value) if file_value else None
    if not is_dask_executor(executor):
        if file is not None:
            raise InputError(
                "--tebench-dask-scheduler-file names a Dask cluster, but --tebench-executor is "
                f"{executor!r}; drop one of them"
            )
        return None
    given_retries = values.get("dask_retries")
    common: dict[str, Any] = {
        "worker_executor": str(values.get("dask_worker_executor") or "docker"),
        "retries": DEFAULT_RETRIES if given_retries is None else int(given_retries),
    }
    if executor == DASK_FROM_FILE:
        if file is None:
            raise InputError(
                "--tebench-executor=dask needs --tebench-dask-scheduler-file=PATH (or use dask://HOST:PORT)"
            )
        return DaskTarget(None, file, **common)
    if file is not None:
        raise InputError(
            f"--tebench-executor={executor} and --tebench-dask-scheduler-file both name a scheduler; use one"
        )
    match = _ADDRESS.fullmatch(executor)
    if match is None or not 0 < int(match["port"]) < 65536:
        raise InputError(f"--tebench-executor: {executor!r} is not dask://HOST:PORT or dask+tls://HOST:PORT")
    scheme = "tls" if match["scheme"] == "dask+tls" else "tcp"
    return DaskTarget(f"{scheme}://{match['host']}:{match['port']}", None, **common)
