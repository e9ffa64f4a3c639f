"""Root conftest of the pytest-tebench repository.

``pytest_plugins`` may only be declared here, at the rootdir: it makes ``pytester`` available to
the test suite. The plugin under test needs nothing from this file; it is installed through its
``pytest11`` entry point like any user would install it.
"""

from __future__ import annotations

pytest_plugins = ["pytester"]
