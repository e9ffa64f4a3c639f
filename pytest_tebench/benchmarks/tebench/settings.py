"""TEBench's own options and the settings an adapter is made with.

The options are registered by the pytest plugin in its one ``--tebench-*`` group (and by the
``tebench`` command where a subcommand needs them); the values reach
:meth:`TebenchSettings.from_values` as a plain mapping keyed by option ``dest``.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_tebench.run.maven.settings import DEFAULT_TIMEOUT_WARMUP
from pytest_tebench.run.maven.settings import MAVEN_OPTIONS
from pytest_tebench.run.maven.settings import MavenSettings
from pytest_tebench.settings import OptionSpec
from pytest_tebench.settings import fraction

DEFAULT_GOLD_RUNS = 2


def gold_runs(value: str) -> int:
    if value.isdigit() and 1 <= int(value) <= 20:
        return int(value)
    raise argparse.ArgumentTypeError(f"not a number of gold runs from 1 to 20: {value!r}")


SCORINGS = ("paper", "reference")
#: The three TEBench change types, in the order the paper's tables use.
LABELS: tuple[str, ...] = ("breaking", "stale", "missing")

TEBENCH_OPTIONS: tuple[OptionSpec, ...] = (
    *MAVEN_OPTIONS,
    OptionSpec(
        "allow-non-test-edits", action="store_true",
        help="TEBench: also apply prediction hunks outside the test tree (production code, pom.xml). "
        "Off by default: a prediction must not change the code it is judged against.",
    ),
    OptionSpec(
        "skip-update", action="store_true",
        help="TEBench: score identification only: no builds, no update metrics (fast, needs no JDK "
        "or Maven).",
    ),
    OptionSpec(
        "scoring", choices=SCORINGS, default="paper",
        help="TEBench composite update score: 'paper' (s_exec x (0.3 s_line + 0.3 s_branch + 0.4 s_mod)) "
        "or 'reference' (the reference code's variant). Default: %(default)s.",
    ),
    OptionSpec(
        "gold-runs", metavar="N", type=gold_runs, default=DEFAULT_GOLD_RUNS,
        help="TEBench: run gold's selected tests N times on V0; tests whose outcome changes are flaky "
        "and dropped from the selection. Default: %(default)s.",
    ),
    OptionSpec(
        "recompile", action="store_true",
        help="TEBench: compile the production code and the whole test tree in every Maven launch, as a "
        "plain 'mvn test' does, instead of the production code once per instance and the test tree "
        "once per gold tree, a launch compiling only the test sources its tree changed and those "
        "naming them (the verdicts are the same; see docs/building.md).",
    ),
    OptionSpec(
        "network", action="store_true",
        help="TEBench: let the tests reach the network (Docker: the test containers get one; Maven stays "
        "offline), for gold and predictions alike. Off by default: a test that needs an external host "
        "makes its instance unsupported_environment.",
    ),
    OptionSpec("min-f1", metavar="X", type=fraction,
               help="TEBench: same as --tebench-fail-under=f1=X (micro identification F1, 0..1)."),
    OptionSpec("min-update", metavar="X", type=fraction,
               help="TEBench: same as --tebench-fail-under=oa=X (update score OA, mean s_update, 0..1)."),
)  # fmt: skip


@dataclass(frozen=True)
class UpdateSettings:
    """How update scoring runs (None in the settings when it is switched off)."""

    scoring: str  # "paper" | "reference"
    jdk: str | None
    timeout_compile: float
    timeout_test: float
    maven_version: str | None
    #: The Maven local repository shared by every build of the run.
    maven_repo: Path
    #: Limit of each online warm-up step (a cold one downloads a project's whole build).
    timeout_warmup: float = DEFAULT_TIMEOUT_WARMUP
    #: Runs of gold's selected tests on V0; tests whose outcome changes are flaky and dropped.
    gold_runs: int = DEFAULT_GOLD_RUNS
    #: Where Maven distributions are downloaded (None: the default cache's).
    maven_dist: Path | None = None
    #: Compile the production code once per instance and gold's test trees once, and reuse them
    #: (``--tebench-recompile`` off).
    prebuilt: bool = True
    #: The tests may reach the network (``--tebench-network``), gold's and predictions' alike.
    network: bool = False

    @classmethod
    def from_maven(
        cls,
        maven: MavenSettings,
        scoring: str = "paper",
        gold_runs: int = DEFAULT_GOLD_RUNS,
        *,
        prebuilt: bool = True,
        network: bool = False,
    ) -> UpdateSettings:
        return cls(
            scoring=scoring,
            jdk=maven.jdk,
            timeout_compile=maven.timeout_compile,
            timeout_test=maven.timeout_test,
            maven_version=maven.maven_version,
            maven_repo=maven.maven_repo,
            timeout_warmup=maven.timeout_warmup,
            gold_runs=gold_runs,
            maven_dist=maven.maven_dist,
            prebuilt=prebuilt,
            network=network,
        )


@dataclass(frozen=True)
class TebenchSettings:
    allow_non_test_edits: bool = False
    #: None with ``--tebench-skip-update``: identification only.
    update: UpdateSettings | None = None
    min_f1: float | None = None
    min_update: float | None = None

    @classmethod
    def from_values(cls, values: Mapping[str, Any], cache_dir: Path) -> TebenchSettings:
        maven = MavenSettings.from_values(values, cache_dir)
        scoring = str(values.get("scoring") or "paper")
        return cls(
            allow_non_test_edits=bool(values.get("allow_non_test_edits")),
            update=None
            if values.get("skip_update")
            else UpdateSettings.from_maven(
                maven,
                scoring,
                int(values.get("gold_runs") or DEFAULT_GOLD_RUNS),
                prebuilt=not values.get("recompile"),
                network=bool(values.get("network")),
            ),
            min_f1=values.get("min_f1"),
            min_update=values.get("min_update"),
        )

    @property
    def scoring(self) -> str | None:
        return None if self.update is None else self.update.scoring
