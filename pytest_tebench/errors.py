"""Error types shared by every stage.

The split matters for honesty: a :class:`HarnessError` means *we* could not evaluate (the item
is a pytest error and never a score), a :class:`PredictionError` means the model's submission
is at fault (the item fails and is scored as such).
"""

from __future__ import annotations

from collections.abc import Mapping


class TebenchError(Exception):
    """Base class of every error raised by pytest-tebench."""


class HarnessError(TebenchError):
    """The harness could not evaluate an item: repository, instance, toolchain or executor trouble."""

    #: The result record's status for an item that fails with this error.
    status = "error"

    def __init__(
        self,
        message: str = "",
        *,
        log_tail: str = "",
        timings: Mapping[str, float] | None = None,
        workspace: str = "",
    ) -> None:
        super().__init__(message)
        #: The end of the build log that explains the failure ("" when no build ran).
        self.log_tail = log_tail
        #: Seconds spent per phase before the failure; stages add theirs as the error passes up.
        self.timings: dict[str, float] = dict(timings or {})
        #: The kept workspace (``--tebench-keep-workspaces``), for a look at the evidence.
        self.workspace = workspace


class UnsupportedEnvironment(HarnessError):
    """The instance's environment cannot be had here: no Python of that version in Debian
    (SWE-bench), no JDK that satisfies the build, an artifact published nowhere reachable
    (TEBench). A fact about the instance and this machine: never a score, never a harness bug."""

    status = "unsupported_environment"


class InputError(HarnessError):
    """A dataset or predictions file is malformed; the message names the file, line and field."""

    def __init__(self, message: str, *, source: str = "", line: int | None = None) -> None:
        where = source + (f":{line}" if line is not None else "")
        super().__init__(f"{where}: {message}" if where else message)
        self.source = source
        self.line = line
        self.reason = message


class PredictionError(TebenchError):
    """The prediction itself cannot be evaluated (it does not apply, or it is empty)."""
