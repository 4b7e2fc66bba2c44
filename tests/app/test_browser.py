"""The app in a real browser: Debian's chromium driven by Playwright, a screenshot per page.

Needs ``/usr/bin/chromium`` (``apt-get install -y chromium``); Playwright's own browser
download is never used. Screenshots land in ``tests/app/screenshots/`` (git-ignored).
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
SCREENSHOTS = Path(__file__).resolve().parent / "screenshots"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
METRIC_NAMES = (
    "BLEU-1",
    "BLEU-2",
    "BLEU-3",
    "BLEU-4",
    "ROUGE-L",
    "CIDEr-D",
    "METEOR",
    "WMD",
    "MEAN",
)
# Text Streamlit shows when a script raises; none of it may appear on a page.
ERROR_MARKERS = ("Traceback", "Error:", "Exception")
STARTUP_S = 90
#: the meta-evaluation pages: URL path and title
META_PAGES = (
    ("human", "Judgments"),
    ("correlation", "Correlations"),
    ("williams", "Significance"),
    ("pairwise-accuracy", "Pairwise accuracy"),
    ("distractors", "Robustness"),
)
RENDER_TIMEOUT_MS = 120_000


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def chromium() -> str:
    """Debian's chromium, or skip (fail under CI: the browser check must run there)."""
    if not Path(CHROMIUM).is_file():
        message = (
            f"chromium must be installed at {CHROMIUM} for the browser tests: "
            "run `apt-get install -y chromium`"
        )
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return CHROMIUM


@contextlib.contextmanager
def _serve(log: Path) -> Iterator[str]:
    """``streamlit run app.py`` on a free local port, stopped by its PID on exit."""
    port = _free_port()
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "streamlit",
                "run",
                "app.py",
                "--server.headless",
                "true",
                "--server.address",
                "127.0.0.1",
                "--server.port",
                str(port),
                "--browser.gatherUsageStats",
                "false",
            ],
            cwd=ROOT,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + STARTUP_S
        while True:
            if proc.poll() is not None:
                pytest.fail(f"streamlit exited with {proc.returncode}:\n{log.read_text()}")
            try:
                with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as resp:
                    if resp.read().decode().strip() == "ok":
                        break
            except (urllib.error.URLError, OSError):
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"streamlit did not answer within {STARTUP_S} s:\n{log.read_text()}")
            time.sleep(0.5)
        yield url
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.kill(proc.pid, signal.SIGKILL)
                proc.wait(timeout=15)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """One app server shared by the page tests; its log is checked for tracebacks."""
    log = tmp_path_factory.mktemp("streamlit") / "server.log"
    with _serve(log) as url:
        yield url, log


@pytest.fixture(scope="module")
def browser_page(chromium: str) -> Iterator[object]:
    """One chromium page, 1400 px wide, shared by the tests of this module."""
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.set_default_timeout(RENDER_TIMEOUT_MS)
            yield page
        finally:
            browser.close()


def _settle(page) -> None:  # type: ignore[no-untyped-def]
    """Wait until Streamlit has finished the run: no running icon, no stale element."""
    page.wait_for_selector('[data-testid="stApp"]')
    page.wait_for_function(
        "() => !document.querySelector("
        '\'[data-testid^="stStatusWidgetRunning"], [data-testid="stStatusWidgetNewYearsIcon"]\')'
        " && !document.querySelector('[data-stale=\"true\"]')"
    )
    # plotly draws after the run; give it a moment
    page.wait_for_timeout(1500)


def _screenshot(page, name: str) -> Path:  # type: ignore[no-untyped-def]
    """Full-page screenshot; Streamlit scrolls inside its main section, so grow the window."""
    SCREENSHOTS.mkdir(exist_ok=True)
    height = page.evaluate(
        "() => Math.max(...[...document.querySelectorAll("
        '\'[data-testid="stMain"], [data-testid="stAppViewContainer"], section, body\')]'
        ".map(e => e.scrollHeight))"
    )
    page.set_viewport_size({"width": 1400, "height": min(max(int(height), 1000), 8000)})
    page.wait_for_timeout(800)
    path = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    page.set_viewport_size({"width": 1400, "height": 1000})
    return path


def _assert_no_error(page, log: Path) -> None:  # type: ignore[no-untyped-def]
    assert page.locator('[data-testid="stException"]').count() == 0, page.inner_text("body")
    text = page.inner_text('[data-testid="stMain"]')
    for marker in ERROR_MARKERS:
        assert marker not in text, f"{marker!r} on the page:\n{text}"
    assert "Traceback" not in log.read_text(), log.read_text()


def _assert_router_navigation(page) -> None:  # type: ignore[no-untyped-def]
    """The sidebar lists the router's pages, in the router's order."""
    links = page.locator('[data-testid="stSidebarNavLink"]')
    texts = [links.nth(i).inner_text() for i in range(links.count())]
    names = [
        "Home",
        "Compare captions",
        "Systems",
        "Perturbation lab",
        *(title for _, title in META_PAGES),
    ]
    assert len(texts) == len(names), texts
    assert all(name in text for name, text in zip(names, texts, strict=True)), texts


def test_home_page(server: tuple[str, Path], browser_page) -> None:  # type: ignore[no-untyped-def]
    url, log = server
    page = browser_page
    page.goto(url)
    page.get_by_role("heading", name="capeval").wait_for()
    page.get_by_text("Resources", exact=True).wait_for()
    _settle(page)
    _screenshot(page, "home")
    _assert_no_error(page, log)
    _assert_router_navigation(page)
    assert "not found" not in page.inner_text("body").lower()


def test_compare_page(server: tuple[str, Path], browser_page) -> None:  # type: ignore[no-untyped-def]
    url, log = server
    page = browser_page
    # the app's root first: a server's very first run may otherwise be the legacy one
    # (see test_fresh_server_opened_on_compare)
    page.goto(url)
    page.get_by_role("heading", name="capeval").wait_for()
    page.goto(f"{url}/compare-captions")
    page.get_by_role("heading", name="Compare captions").wait_for()
    page.locator('[data-testid="stMetric"]').first.wait_for()
    _settle(page)
    _screenshot(page, "compare")
    _assert_no_error(page, log)
    text = page.inner_text('[data-testid="stMain"]')
    for name in METRIC_NAMES:
        assert name in text, f"{name} missing from the Compare page:\n{text}"
    for tab in ("ROUGE-L", "CIDEr-D", "METEOR", "WMD", "SPICE", "MEAN"):
        page.get_by_role("tab", name=tab, exact=True).click()
        _settle(page)
        _screenshot(page, f"compare-{tab.lower()}")
        _assert_no_error(page, log)
        if tab in ("METEOR", "WMD", "SPICE"):
            # the evidence is drawn: the alignment / the Sankey and its two heatmaps / the
            # two scene graphs and the per-category chart
            charts = page.locator('[data-testid="stPlotlyChart"]:visible')
            assert charts.count() >= {"METEOR": 1, "WMD": 3, "SPICE": 3}[tab], tab


def test_fresh_server_opened_on_compare(chromium: str, browser_page, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A new server whose first visitor opens /compare-captions runs the router: no false
    "Page not found" (a folder named ``pages`` beside ``app.py`` made Streamlit's first run
    of a process a legacy multipage run; the pages live in ``app_pages/``)."""
    log = tmp_path / "server.log"
    with _serve(log) as url:
        page = browser_page
        page.goto(f"{url}/compare-captions")
        page.get_by_role("heading", name="Compare captions").wait_for()
        page.locator('[data-testid="stMetric"]').first.wait_for()
        _settle(page)
        _screenshot(page, "compare-fresh-server")
        _assert_no_error(page, log)
        sidebar = page.locator('[data-testid="stSidebar"]').inner_text()
        assert "Tokenizer" in sidebar, sidebar
        _assert_router_navigation(page)
        assert "not found" not in page.inner_text("body").lower()


@pytest.mark.parametrize(("path", "title"), META_PAGES)
def test_meta_evaluation_page(
    server: tuple[str, Path], browser_page, path: str, title: str
) -> None:  # type: ignore[no-untyped-def]
    """Each meta-evaluation page renders its charts from the demo set without an error."""
    url, log = server
    page = browser_page
    page.goto(url)
    page.get_by_role("heading", name="capeval").wait_for()
    page.goto(f"{url}/{path}")
    page.get_by_role("heading", name=title).wait_for()
    if path == "human":
        page.get_by_role("button", name="Load demo").click()
        page.get_by_text("Loaded set", exact=True).wait_for()
        page.locator('[data-testid="stDataFrame"]').first.wait_for()
    else:
        page.locator('[data-testid="stPlotlyChart"]').first.wait_for()
    _settle(page)
    _screenshot(page, f"meta-{path}")
    _assert_no_error(page, log)


def test_perturbation_lab_page(server: tuple[str, Path], browser_page) -> None:  # type: ignore[no-untyped-def]
    url, log = server
    page = browser_page
    page.goto(url)  # the root first, so the router has run (see test_browser.py)
    page.get_by_role("heading", name="capeval").wait_for()
    page.goto(f"{url}/perturbation-lab")
    page.get_by_role("heading", name="Perturbation lab").wait_for()
    page.get_by_text("Scores before and after").wait_for()
    _settle(page)
    _screenshot(page, "perturbation-lab")
    _assert_no_error(page, log)
    text = page.inner_text('[data-testid="stMain"]')
    for word in ("Synonym substitution", "Word-order shuffle", "Perturbed:"):
        assert word in text, f"{word!r} missing:\n{text}"
    page.get_by_text("Table 2 preset").first.click()
    page.get_by_text("original (itself)").first.wait_for(state="attached")
    _settle(page)
    _screenshot(page, "perturbation-lab-table2")
    _assert_no_error(page, log)


def test_systems_page(server: tuple[str, Path], browser_page) -> None:  # type: ignore[no-untyped-def]
    """The Systems page compares its demo systems: the table, the chart with error bars and
    the per-image table linked to Compare captions."""
    url, log = server
    page = browser_page
    page.goto(url)  # the root first, so the router has run
    page.get_by_role("heading", name="capeval").wait_for()
    page.goto(f"{url}/systems")
    page.get_by_role("heading", name="Systems", exact=True).wait_for()
    page.get_by_role("heading", name="Where two systems differ").wait_for()
    page.locator('[data-testid="stPlotlyChart"]').first.wait_for()
    _settle(page)
    _screenshot(page, "systems")
    _assert_no_error(page, log)
    text = page.inner_text('[data-testid="stMain"]')
    for word in ("3 systems on", "BLEU-4", "CIDEr-D", "Per-image scores (CSV)"):
        assert word in text, f"{word!r} missing from the Systems page:\n{text}"
    assert page.locator('[data-testid="stDataFrame"]').count() >= 2
    # error bars are drawn: plotly renders them as paths in the chart
    assert page.locator('[data-testid="stPlotlyChart"] .errorbar').count() >= 1
