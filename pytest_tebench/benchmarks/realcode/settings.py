"""RealCodeJava's options and the settings its adapter is made with.

Registered in the plugin's one ``--tebench-*`` group (cheap to import); the Maven options
(JDK, Maven version, timeouts, repository) are the ones every Java benchmark shares.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_tebench.benchmarks.realcode.scoring import DEFAULT_RULE
from pytest_tebench.benchmarks.realcode.scoring import RULES
from pytest_tebench.run.maven.settings import MAVEN_OPTIONS
from pytest_tebench.run.maven.settings import MavenSettings
from pytest_tebench.settings import OptionSpec

REALCODE_OPTIONS: tuple[OptionSpec, ...] = (
    *MAVEN_OPTIONS,
    OptionSpec(
        "realcode-rule", choices=RULES, default=DEFAULT_RULE,
        help="RealCodeJava: when a body passes. 'tests': every PASS_TO_PASS and FAIL_TO_PASS test passes; "
        "'dry-run' (MERA's rule): some selected test passes and every one that passed on the untouched "
        "repository still does. Default: %(default)s.",
    ),
)  # fmt: skip


@dataclass(frozen=True)
class RealcodeSettings:
    maven: MavenSettings
    rule: str = DEFAULT_RULE

    @classmethod
    def from_values(cls, values: Mapping[str, Any], cache_dir: Path) -> RealcodeSettings:
        return cls(
            maven=MavenSettings.from_values(values, cache_dir),
            rule=str(values.get("realcode_rule") or DEFAULT_RULE),
        )
