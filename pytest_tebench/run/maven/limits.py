"""Which of the run's resource limits failing tests ran into, read from Surefire's reports.

The sandbox caps a build's memory, processes and scratch space (``/tmp`` and ``$HOME`` are small
RAM-backed file systems; docs/docker.md), and a machine has limits of its own. A test that needs
more fails there whatever the code says, as a test that needs an external host does
(:mod:`~pytest_tebench.run.maven.hosts`): a fact about where it ran, never about an instance or a
model. This module reads the failure messages and stack traces Surefire wrote
(:attr:`TestOutcome.trace`) for the texts the JDK leaves when a limit was met:

* memory: ``java.lang.OutOfMemoryError: Java heap space``, ``GC overhead limit exceeded``,
  ``Metaspace``, ``Direct buffer memory`` (``Cannot reserve N bytes of direct buffer memory``);
* processes: ``OutOfMemoryError: unable to create native thread`` (JDK 11 and later; ``unable to
  create new native thread`` on JDK 8), ``Cannot run program ...: error=11, Resource temporarily
  unavailable``;
* disk space: ``java.io.IOException: No space left on device``, ``Disk quota exceeded``;
* open files: ``Too many open files``;
* a native library the environment lacks: ``libharfbuzz.so.0: cannot open shared object file``
  (a headless JDK's ``libfontmanager`` on an image without the font stack). A library of the
  project's own that was not built (``no foo in java.library.path``) is not read as one.

``OutOfMemoryError: Requested array size exceeds VM limit`` is no limit of the run's: no heap
holds such an array, so a test that asks for one fails everywhere.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from pytest_tebench.run.maven.surefire import TestOutcome

MEMORY = "memory"
PROCESSES = "processes"
DISK = "disk space"
OPEN_FILES = "open files"

#: Each limit and the texts that show a test met it, in the order a reason names them.
_SIGNS = (
    (
        PROCESSES,
        re.compile(
            r"OutOfMemoryError: unable to create (?:new )?native thread"
            r"|error=11, Resource temporarily unavailable"
        ),
    ),
    (
        MEMORY,
        re.compile(
            r"OutOfMemoryError: (?:Java heap space|GC overhead limit exceeded|Metaspace"
            r"|Compressed class space|Direct buffer memory|Cannot reserve \d+ bytes of direct buffer memory)"
        ),
    ),
    (DISK, re.compile(r"No space left on device|Disk quota exceeded")),
    (OPEN_FILES, re.compile(r"Too many open files")),
)


#: ``<library>.so[.N]: cannot open shared object file`` as ``dlopen`` words it.
_NO_LIBRARY = re.compile(r"([\w.+-]+\.so(?:\.\d+)*): cannot open shared object file")


def limits_met(text: str) -> list[str]:
    """The run's limits ``text`` (a failure's message and trace) shows a test ran into, then each
    native library it shows missing (``native library <name>``)."""
    found = [limit for limit, sign in _SIGNS if sign.search(text)]
    libraries = dict.fromkeys(match[1] for match in _NO_LIBRARY.finditer(text))
    return found + [f"native library {library}" for library in libraries]


def limit_needs(outcomes: Iterable[TestOutcome]) -> dict[str, list[str]]:
    """Test id -> the limits its failure shows it ran into, for those of ``outcomes`` that failed
    so."""
    return {str(o.test): found for o in outcomes if (found := limits_met(o.failure_text))}
