"""The test-side rule shared by the host and the guards: SWE-bench's own split of a pull request."""

from __future__ import annotations

import pytest

from pytest_tebench.integrity.sandbox.tebench_core import is_test_side


@pytest.mark.parametrize(
    ("path", "repo"),
    [
        # paths of real test_patch rows (SWE-bench Lite / Verified) and the helpers tests import
        ("tests/test_requests.py", "psf/requests"),
        ("testing/python/approx.py", "pytest-dev/pytest"),
        ("django/test/testcases.py", "django/django"),
        ("sympy/testing/pytest.py", "sympy/sympy"),
        ("sympy/utilities/pytest.py", "sympy/sympy"),
        ("xarray/testing.py", "pydata/xarray"),
        ("xarray/tests/__init__.py", "pydata/xarray"),
        ("astropy/tests/helper.py", "astropy/astropy"),
        ("pylint/testutils/checker_test_case.py", "pylint-dev/pylint"),
        ("tests/roots/test-ext-autodoc/target/__init__.py", "sphinx-doc/sphinx"),
        ("Tests/Helpers.py", "any/repo"),
        ("web/e2e/login.py", "any/repo"),
        ("testing/conftest.py", "pytest-dev/pytest"),
    ],
)
def test_test_content_is_test_side(path: str, repo: str) -> None:
    assert is_test_side(path, repo)


@pytest.mark.parametrize(
    ("path", "repo"),
    [
        # paths of real gold patches
        ("requests/models.py", "psf/requests"),
        ("django/db/models/query.py", "django/django"),
        ("sympy/core/basic.py", "sympy/sympy"),
        ("sphinx/ext/autodoc/__init__.py", "sphinx-doc/sphinx"),
        # pytest's runner is its product: src/ is never test content there
        ("src/_pytest/logging.py", "pytest-dev/pytest"),
        ("src/pytest/__init__.py", "pytest-dev/pytest"),
    ],
)
def test_product_code_is_not_test_side(path: str, repo: str) -> None:
    assert not is_test_side(path, repo)


def test_the_runner_is_product_only_in_the_repository_whose_product_it_is() -> None:
    assert is_test_side("src/_pytest/logging.py", "someone/else")
    assert is_test_side("src/_pytest/logging.py")
