"""The HTML report in a real browser: Debian's headless chromium, driven with playwright's API.

The page is rendered from the recorded demo reports, opened from a file (as users open it,
offline), used like a user would (filters, sorting, an item's drill-down), and every uncaught
exception or console error fails the test. A screenshot is kept in the test's tmp_path; set
TEBENCH_SCREENSHOT=PATH to keep one elsewhere (that is how docs/report-screenshot.png is made).
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pytest_tebench.report.html import load_runs
from pytest_tebench.report.html import write_html

from conftest import chromium_path

REPORTS = Path(__file__).parent / "fixtures" / "reports"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"

pytestmark = pytest.mark.browser


class Page:
    """A browser page that records every JavaScript error it sees."""

    def __init__(self, page: Any) -> None:
        self.page = page
        self.errors: list[str] = []
        page.on("pageerror", lambda error: self.errors.append(f"uncaught: {error}"))
        page.on(
            "console", lambda msg: self.errors.append(f"console: {msg.text}") if msg.type == "error" else None
        )

    def open(self, path: Path) -> None:
        self.page.goto(path.as_uri())

    def wait_ready(self, seconds: float = 60.0) -> None:
        """Until the page's script says it has drawn everything; a script error fails at once."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if self.errors:
                pytest.fail(f"JavaScript errors: {self.errors}", pytrace=False)
            if self.page.locator("body[data-ready=true]").count():
                return
            self.page.wait_for_timeout(100)
        pytest.fail(f"the page was not ready after {seconds} s", pytrace=False)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    executable = chromium_path()
    assert executable is not None  # the browser marker skipped (or failed, in CI) otherwise
    with sync_playwright() as playwright:
        # --no-sandbox: CI runs as root, where Chromium's sandbox refuses to start
        launched = playwright.chromium.launch(executable_path=executable, args=["--no-sandbox"])
        yield launched
        launched.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1500, "height": 1000})
    yield Page(context.new_page())
    context.close()


@pytest.fixture(scope="module")
def demo_page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("html") / "demo.html"
    write_html(load_runs([REPORTS / "gold.json", REPORTS / "models.json"]), path, title="pytest-tebench demo")
    return path


def test_demo_report_opens_offline_without_script_errors(page: Page, demo_page: Path, tmp_path: Path) -> None:
    # nothing may come from the network: every request other than the file itself is refused
    requests: list[str] = []
    page.page.route("**/*", lambda route: (requests.append(route.request.url), route.abort())
                    if not route.request.url.startswith("file:") else route.continue_())  # fmt: skip
    page.open(demo_page)
    page.wait_ready()
    assert requests == []
    assert page.errors == []

    items = page.page.locator("#item-body tr")
    total = sum(
        len(run.report["results"]) for run in load_runs([REPORTS / "gold.json", REPORTS / "models.json"])
    )
    assert items.count() == total
    # the first item is open: both patches coloured side by side, its tests and its identified items
    detail = page.page.locator("#detail")
    assert detail.locator(".patches .hl").count() == 2
    assert detail.locator(".hl .l.a").count() > 0
    assert detail.locator(".sets .tp li").count() > 0

    shot = tmp_path / "report.png"
    page.page.screenshot(path=str(shot), full_page=True)
    assert shot.read_bytes().startswith(PNG_MAGIC) and shot.stat().st_size > 50_000
    assert page.errors == []
    if os.environ.get("TEBENCH_SCREENSHOT"):
        # the README's picture: the leaderboard's top, then one item of a model that got some things wrong
        page.page.select_option("#filters [name=model]", "partial")
        page.page.locator("#item-body tr").first.click()
        page.page.set_viewport_size({"width": 1400, "height": 1250})
        page.page.locator("#items").scroll_into_view_if_needed()
        page.page.evaluate("document.getElementById('items').scrollIntoView()")
        page.page.screenshot(path=os.environ["TEBENCH_SCREENSHOT"])


def test_filters_sorting_and_drill_down_work(page: Page, demo_page: Path) -> None:
    page.open(demo_page)
    page.wait_ready()
    report = load_runs([REPORTS / "models.json"])[0].report
    not_applied = [r for r in report["results"] if r["status"] == "not_applied"]
    errors = [r for r in report["results"] if r["status"] == "error"]
    assert not_applied and errors

    page.page.select_option("#filters [name=status]", "not_applied")
    rows = page.page.locator("#item-body tr")
    assert rows.count() == len(not_applied)
    rows.first.click()
    detail = page.page.locator("#detail")
    # git's own words for a patch that does not apply, as the record has them
    assert not_applied[0]["error"].splitlines()[0] in detail.locator("pre.error").first.inner_text()

    page.page.select_option("#filters [name=status]", "error")
    page.page.locator("#item-body tr").first.click()
    assert errors[0]["error"].splitlines()[0] in detail.locator("pre.error").first.inner_text()
    assert "no patch in the record" in detail.inner_text() or detail.locator(".hl").count() >= 1

    page.page.select_option("#filters [name=status]", "")
    page.page.fill("#filters [name=text]", "6f3adb06")
    texts = page.page.locator("#item-body tr td:first-child").all_inner_texts()
    assert texts and all("6f3adb06" in t for t in texts)

    # sorting a leaderboard column by micro F1: lowest first, then (second click) highest first
    f1 = {
        model: summary["identification"]["micro"]["f1"]
        for run in load_runs([REPORTS / "gold.json", REPORTS / "models.json"])
        for model, summary in run.report["summary"].items()
    }
    board = page.page.locator("table.board").first
    header = board.locator("thead tr:nth-child(2) th[title='identification.micro.f1']")
    header.click()
    assert f1[board.locator("tbody tr th.model").first.inner_text()] == min(f1.values())
    header.click()
    assert f1[board.locator("tbody tr th.model").first.inner_text()] == max(f1.values())
    assert min(f1.values()) < max(f1.values())
    assert page.errors == []


def test_a_script_error_is_caught(page: Page, tmp_path: Path) -> None:
    """The error capture itself works: a page that throws is seen as one."""
    broken = tmp_path / "broken.html"
    broken.write_text("<html><body><script>null.nothing();</script></body></html>", encoding="utf-8")
    page.open(broken)
    page.page.wait_for_load_state("load")
    assert len(page.errors) == 1 and "uncaught" in page.errors[0]
