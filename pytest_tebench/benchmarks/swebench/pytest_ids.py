"""Test names that changed between pytest releases, matched so a row's lists meet the log.

pytest 8.0 (2024-01-27, pytest-dev/pytest#11456) puts an underscore before the counter that
makes duplicated parametrize ids unique when the id ends in a digit: ``test_unparse[1234-1234_0]``
where pytest 7 wrote ``test_unparse[1234-12340]``. SWE-bench Verified's lists were made in 2024
with pytest 8 where a spec leaves pytest unpinned (sphinx 3.1-4.1, matplotlib 3.5), while the
environments here resolve unpinned packages as PyPI stood on 2023-11-01 (pytest 7.4.3): the same
test under the other spelling. Grading takes an expected name missing from the log's status map
from its other spelling when exactly that one is in the log; nothing else is renamed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from collections.abc import Mapping

#: A parametrized name whose id ends in ``<digit>_<counter>]``: pytest 8's disambiguated form.
_PYTEST8_DUPLICATE = re.compile(r"^(?P<head>.*\[.*\d)_(?P<counter>\d+)\]$")


def pytest7_name(name: str) -> str | None:
    """pytest 7's spelling of pytest 8's disambiguated ``name``, or None if it is not one."""
    match = _PYTEST8_DUPLICATE.match(name)
    if match is None:
        return None
    return f"{match['head']}{match['counter']}]"


def renamed_tests(expected: Iterable[str], status_map: Mapping[str, str]) -> dict[str, str]:
    """``{expected name: the log's name of that test}`` for each expected name absent from
    ``status_map`` that the log has under the other pytest version's spelling (either way)."""
    by_pytest7_spelling: dict[str, str] = {}
    for logged in status_map:
        legacy = pytest7_name(logged)
        if legacy is not None:
            by_pytest7_spelling[legacy] = logged
    renamed: dict[str, str] = {}
    for name in expected:
        if name in status_map:
            continue
        legacy = pytest7_name(name)
        if legacy is not None and legacy in status_map:
            renamed[name] = legacy  # the row is pytest 8's, the log pytest 7's
        elif name in by_pytest7_spelling:
            renamed[name] = by_pytest7_spelling[name]  # the row is pytest 7's, the log pytest 8's
    return renamed
