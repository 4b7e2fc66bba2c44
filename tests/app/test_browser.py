"""The app in a real browser: Debian's chromium driven by Playwright, a screenshot per page.

Every page is opened on a server of its own, by its deep link, as that server's very first
request (a first run used to show a false "Page not found"); every request the browser makes
is recorded and must go to the app's own server. Needs ``/usr/bin/chromium``
(``apt-get install -y chromium``); Playwright's own browser download is never used.
Screenshots land in ``tests/app/screenshots/`` (git-ignored); ``tools/docs_screenshots.py``
turns them into the small ones committed under ``docs/screenshots/``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from bench.app_server import CHROMIUM, CHROMIUM_ARGS, VIEWPORT, RequestLog, ServerError, serve
from bench.app_server import settle as _settle

pytestmark = pytest.mark.browser

SCREENSHOTS = Path(__file__).resolve().parent / "screenshots"
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
#: every page: URL path (its deep link), title, screenshot name
PAGES = (
    ("", "capeval", "home"),
    ("compare-captions", "Compare captions", "compare"),
    ("systems", "Systems", "systems"),
    ("perturbation-lab", "Perturbation lab", "perturbation-lab"),
    ("judgments", "Judgments", "judgments"),
    ("correlations", "Correlations", "correlations"),
    ("significance", "Significance", "significance"),
    ("pairwise-accuracy", "Pairwise accuracy", "pairwise-accuracy"),
    ("robustness", "Robustness", "robustness"),
)
NAV = ("Home", *(title for path, title, _ in PAGES if path))
RENDER_TIMEOUT_MS = 180_000


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


@pytest.fixture(scope="module")
def browser(chromium: str) -> Iterator[object]:
    """One chromium for the module; each test opens a context (a new visitor) of its own."""
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        try:
            yield b
        finally:
            b.close()


@pytest.fixture
def visitor(browser) -> Iterator[tuple[object, RequestLog]]:  # type: ignore[no-untyped-def]
    """A new browser context and page, 1400 px wide, whose requests are recorded."""
    context = browser.new_context(viewport=VIEWPORT)
    page = context.new_page()
    page.set_default_timeout(RENDER_TIMEOUT_MS)
    requests = RequestLog(page)
    try:
        yield page, requests
    finally:
        context.close()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """One app server shared by the interaction tests; its log is checked for tracebacks."""
    log = tmp_path_factory.mktemp("streamlit") / "server.log"
    try:
        with serve(log) as url:
            yield url, log
    except ServerError as exc:
        pytest.fail(str(exc))


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
    page.set_viewport_size(VIEWPORT)
    return path


def _assert_no_error(page, log: Path) -> None:  # type: ignore[no-untyped-def]
    assert page.locator('[data-testid="stException"]').count() == 0, page.inner_text("body")
    text = page.inner_text('[data-testid="stMain"]')
    for marker in ERROR_MARKERS:
        assert marker not in text, f"{marker!r} on the page:\n{text}"
    assert "Traceback" not in log.read_text(), log.read_text()
    body = page.inner_text("body").lower()
    assert "not found" not in body and "does not seem to exist" not in body, body


def _assert_router_navigation(page) -> None:  # type: ignore[no-untyped-def]
    """The sidebar lists the router's pages, in the router's order."""
    links = page.locator('[data-testid="stSidebarNavLink"]')
    texts = [links.nth(i).inner_text() for i in range(links.count())]
    assert len(texts) == len(NAV), texts
    assert all(name in text for name, text in zip(NAV, texts, strict=True)), texts
    sidebar = page.locator('[data-testid="stSidebar"]').inner_text()
    assert "Tokenizer" in sidebar, sidebar


def _assert_local(requests: RequestLog, url: str) -> None:
    assert requests.urls, "no request was recorded"
    assert not requests.foreign(url), f"requests left the machine: {requests.foreign(url)}"


def _metric_value(page, label: str) -> float:  # type: ignore[no-untyped-def]
    box = page.locator('[data-testid="stMetric"]').filter(has=page.get_by_text(label, exact=True))
    value = box.first.locator('[data-testid="stMetricValue"]').inner_text()
    return float(value)


def _wait_for_page(page, path: str, title: str) -> None:  # type: ignore[no-untyped-def]
    page.get_by_role("heading", name=title).first.wait_for()
    if path == "judgments":
        page.get_by_role("button", name="Load demo").click()
        page.get_by_text("Loaded set", exact=True).wait_for()
        page.locator('[data-testid="stDataFrame"]').first.wait_for()
    elif path == "compare-captions":
        page.locator('[data-testid="stMetric"]').first.wait_for()
    elif path == "perturbation-lab":
        page.get_by_text("Scores before and after").wait_for()
    elif path:
        page.locator('[data-testid="stPlotlyChart"]').first.wait_for()
    else:
        page.get_by_text("Resources", exact=True).wait_for()
    _settle(page)


@pytest.mark.parametrize(("path", "title", "shot"), PAGES, ids=[p[2] for p in PAGES])
def test_a_fresh_server_opened_by_deep_link(
    visitor, tmp_path: Path, path: str, title: str, shot: str
) -> None:  # type: ignore[no-untyped-def]
    """Each page, on a server of its own, opened by its deep link as the first request: the
    router runs (sidebar, navigation), no "Page not found", no exception, nothing fetched
    from any other host."""
    page, requests = visitor
    log = tmp_path / "server.log"
    try:
        with serve(log) as url:
            page.goto(f"{url}/{path}")
            _wait_for_page(page, path, title)
            _screenshot(page, shot)
            _assert_no_error(page, log)
            _assert_router_navigation(page)
            # .streamlit/config.toml: a viewer's toolbar, no "Deploy"
            assert page.get_by_role("button", name="Deploy").count() == 0
            if path == "compare-captions":
                text = page.inner_text('[data-testid="stMain"]')
                for name in METRIC_NAMES:
                    assert name in text, f"{name} missing from the Compare page:\n{text}"
                # one caption is scored with COCO val2014 document frequencies by default
                assert _metric_value(page, "CIDEr-D") > 0
                assert re.search(r"Scored on the server in [\d,]+ ms", text), text
            if path == "perturbation-lab":
                text = page.inner_text('[data-testid="stMain"]')
                for word in ("Synonym substitution", "Word-order shuffle", "Perturbed:"):
                    assert word in text, f"{word!r} missing:\n{text}"
            _assert_local(requests, url)
    except ServerError as exc:
        pytest.fail(str(exc))


def _commit_text_area(page, label: str, text: str) -> None:  # type: ignore[no-untyped-def]
    area = page.get_by_label(label, exact=True)
    area.fill(text)
    area.press("Control+Enter")  # Streamlit applies a text area on Ctrl+Enter or on blur
    _settle(page)


def _nav(page, title: str) -> None:  # type: ignore[no-untyped-def]
    page.locator('[data-testid="stSidebarNavLink"]').filter(has_text=title).click()
    page.get_by_role("heading", name=title).first.wait_for()
    _settle(page)


def test_compare_caption_survives_a_visit_to_another_page(server, visitor) -> None:  # type: ignore[no-untyped-def]
    url, log = server
    page, requests = visitor
    page.goto(f"{url}/compare-captions")
    _wait_for_page(page, "compare-captions", "Compare captions")
    caption = "a dog jumps to catch a frisbee in a park"
    _commit_text_area(page, "Candidate caption (A)", caption)
    page.get_by_text(f"A: {caption}").wait_for()
    assert "candidate=a+dog+jumps" in page.url or "candidate=a%20dog%20jumps" in page.url
    _nav(page, "Perturbation lab")
    _nav(page, "Compare captions")
    assert page.get_by_label("Candidate caption (A)", exact=True).input_value() == caption
    page.get_by_text(f"A: {caption}").wait_for()
    _assert_no_error(page, log)
    _assert_local(requests, url)


def test_compare_link_opens_its_example_and_two_candidates(server, visitor) -> None:  # type: ignore[no-untyped-def]
    url, log = server
    page, requests = visitor
    page.goto(
        f"{url}/compare-captions?candidate=a+man+riding+a+wave+on+a+surfboard"
        "&candidate_b=a+dog+sleeping+on+a+couch"
        "&ref=a+surfer+rides+a+large+wave&ref=a+man+surfing+on+a+big+wave"
    )
    page.get_by_text("A scores higher on").wait_for()
    _settle(page)
    area = page.get_by_label("References (one per line)", exact=True)
    wanted = "a surfer rides a large wave\na man surfing on a big wave"
    if area.input_value() != wanted:  # a text area may still be taking its value
        page.wait_for_timeout(3000)
    assert area.input_value() == wanted, (page.url, page.inner_text('[data-testid="stMain"]'))
    _screenshot(page, "compare-two-candidates")
    _assert_no_error(page, log)
    for tab in ("METEOR", "SPICE"):
        page.get_by_role("tab", name=tab, exact=True).click()
        _settle(page)
        page.locator("text=Candidate B >> visible=true").first.wait_for()
    _assert_local(requests, url)


def test_compare_evidence_tabs(server, visitor) -> None:  # type: ignore[no-untyped-def]
    url, log = server
    page, requests = visitor
    page.goto(f"{url}/compare-captions")
    _wait_for_page(page, "compare-captions", "Compare captions")
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
    _assert_local(requests, url)


def test_perturbation_lab_table2(server, visitor) -> None:  # type: ignore[no-untyped-def]
    url, log = server
    page, requests = visitor
    page.goto(f"{url}/perturbation-lab")
    _wait_for_page(page, "perturbation-lab", "Perturbation lab")
    page.get_by_text("Table 2 preset").first.click()
    page.get_by_text("original (itself)").first.wait_for(state="attached")
    _settle(page)
    _screenshot(page, "perturbation-lab-table2")
    _assert_no_error(page, log)
    _assert_local(requests, url)


def test_a_reload_keeps_the_loaded_judgment_set(server, visitor) -> None:  # type: ignore[no-untyped-def]
    url, log = server
    page, requests = visitor
    page.goto(f"{url}/judgments")
    _wait_for_page(page, "judgments", "Judgments")
    assert "set=" in page.url, page.url
    page.reload()
    page.get_by_text("Loaded set", exact=True).wait_for()
    _settle(page)
    _assert_no_error(page, log)
    _assert_local(requests, url)


def test_systems_page(server, visitor) -> None:  # type: ignore[no-untyped-def]
    """The Systems page compares its demo systems: the table, the chart with error bars and
    the per-image table linked to Compare captions."""
    url, log = server
    page, requests = visitor
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
    _assert_local(requests, url)


def test_systems_row_click_opens_compare(server, visitor) -> None:  # type: ignore[no-untyped-def]
    """The drill-down as a user does it: one click on a row of "Where two systems differ"
    opens Compare captions on that image's two captions, with the table's CIDEr-D IDF (the
    set's) chosen and the note saying every number is the table's (issue 33; the numbers
    themselves are checked by the Systems page's AppTest, which cannot click a grid row)."""
    url, log = server
    page, requests = visitor
    page.goto(f"{url}/systems")
    page.get_by_role("heading", name="Where two systems differ").wait_for()
    grid = page.locator('.st-key-systems_items [data-testid="stDataFrame"]')
    grid.wait_for()
    _settle(page)
    grid.scroll_into_view_if_needed()
    box = grid.bounding_box()
    assert box is not None
    # the grid draws on a canvas: the first data row lies one header height below the top;
    # its row marker (the selection box) is the leftmost column
    page.mouse.move(box["x"] + 14, box["y"] + 52)
    page.mouse.click(box["x"] + 14, box["y"] + 52)
    page.wait_for_url("**/compare-captions**")
    page.get_by_text("every number here is the table's").wait_for()
    _settle(page)
    _assert_no_error(page, log)
    assert "Opened from Compare systems: image" in page.inner_text('[data-testid="stMain"]')
    chosen = page.locator('[data-testid="stRadio"] label:has(input:checked)').all_inner_texts()
    assert any("the Systems table's 200 images" in t for t in chosen), chosen
    for field in ("candidate", "candidate_b"):
        assert page.locator(f".st-key-{field} textarea").input_value().strip()
    _assert_local(requests, url)


# -- nothing cut at 1,280 px or 1,920 px wide (issue 34) ------------------------------------------
#: the issue's example: its longest reference was cut at "…near the ocea"
LONG_EXAMPLE = (
    "?candidate=a+man+is+riding+a+horse+on+the+beach"
    "&ref=a+person+rides+a+horse+along+the+shore"
    "&ref=a+man+on+horseback+at+the+beach"
    "&ref=someone+riding+a+brown+horse+near+the+ocean"
)
SECOND_CANDIDATE = "&candidate_b=a+woman+walks+her+dog+along+the+sandy+beach+at+sunset"
COMPARE_TABS = ("BLEU", "ROUGE-L", "CIDEr-D", "METEOR", "WMD", "SPICE", "MEAN", "I²CE")

#: every piece of text, label and table of the visible tab that shows less than it holds:
#: a box whose content is wider than the box (a label cut with "…", a caption or a table
#: that needs a scroll bar), a grid whose columns are wider than the grid, or anything
#: reaching past the main block's right edge
CUT_ELEMENTS_JS = """
() => {
  const main = document.querySelector('[data-testid="stMain"] [data-testid="stMainBlockContainer"]')
    || document.querySelector('[data-testid="stMain"]');
  const right = main.getBoundingClientRect().right;
  const panel = [...main.querySelectorAll('[role="tabpanel"]')]
    .find(p => !p.hidden && p.offsetParent !== null);
  const roots = [panel, ...main.querySelectorAll('[data-testid="stMetric"]')].filter(Boolean);
  const visible = e => e.offsetParent !== null && e.getBoundingClientRect().width > 0;
  const name = e => (e.getAttribute('data-testid') || e.tagName) + ': '
    + (e.innerText || e.getAttribute('aria-label') || '').trim().slice(0, 80);
  const cut = [];
  const texts = [
    '[data-testid="stMarkdownContainer"]', '[data-testid="stCaptionContainer"]',
    '[data-testid="stMetricLabel"]', '[data-testid="stMetricValue"]',
    '[data-testid="stWidgetLabel"]', '[data-testid="stText"]',
    '[data-testid="stTable"]', '[data-testid="stTableStyledTable"]',
    '[data-baseweb="select"] div[value]', 'label', 'h1', 'h2', 'h3', 'h4',
  ].join(', ');
  for (const root of roots) {
    for (const e of root.querySelectorAll(texts)) {
      if (!visible(e)) continue;
      if (e.scrollWidth > e.clientWidth + 1) cut.push('wider than its box: ' + name(e));
      if ((e.innerText || '').trim().endsWith('…')) cut.push('ends in an ellipsis: ' + name(e));
    }
    // the data grid draws on a canvas; its scroller says whether its columns fit
    for (const frame of root.querySelectorAll('[data-testid="stDataFrame"]')) {
      if (!visible(frame)) continue;
      const scroller = frame.querySelector('.dvn-scroller');
      if (scroller && scroller.scrollWidth > scroller.clientWidth + 1)
        cut.push(`data grid columns ${scroller.scrollWidth}px in ${scroller.clientWidth}px: `
          + name(frame));
    }
    for (const e of root.querySelectorAll('*')) {
      if (!visible(e)) continue;
      const r = e.getBoundingClientRect();
      if (r.width > 0 && r.right > right + 1) cut.push('past the main block: ' + name(e));
    }
  }
  return [...new Set(cut)];
}
"""


def _screenshot_at(page, name: str, width: int) -> Path:  # type: ignore[no-untyped-def]
    """Full-page screenshot ``width`` pixels wide (the window grown to the page's height)."""
    SCREENSHOTS.mkdir(exist_ok=True)
    height = page.evaluate(
        "() => Math.max(...[...document.querySelectorAll("
        '\'[data-testid="stMain"], [data-testid="stAppViewContainer"], section, body\')]'
        ".map(e => e.scrollHeight))"
    )
    page.set_viewport_size({"width": width, "height": min(max(int(height), 1000), 8000)})
    page.wait_for_timeout(800)
    path = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    page.set_viewport_size({"width": width, "height": VIEWPORT["height"]})
    return path


#: where the visible tab draws candidates A and B: the two outermost columns of its panel
PAIR_JS = """
() => {
  const panel = [...document.querySelectorAll('[data-testid="stMain"] [role="tabpanel"]')]
    .find(p => !p.hidden && p.offsetParent !== null);
  return [...panel.querySelectorAll('[data-testid="stColumn"]')]
    .filter(c => !c.parentElement.closest('[data-testid="stColumn"]'))
    .map(c => { const r = c.getBoundingClientRect();
                return {top: r.top, bottom: r.bottom, left: r.left, width: r.width}; });
}
"""


def _assert_pair_layout(page, width: int) -> None:  # type: ignore[no-untyped-def]
    """Two candidates: side by side at 1,920 px, A above B at 1,280 px, where half of a tab
    cut CIDEr-D's and METEOR's tables (issue 34)."""
    a, b = page.evaluate(PAIR_JS)
    if width >= 1920:
        assert a["top"] == b["top"] and b["left"] > a["left"] + a["width"] / 2, (a, b)
    else:
        assert b["top"] >= a["bottom"] and a["width"] == b["width"], (a, b)


@pytest.mark.parametrize(
    ("width", "candidates"),
    [
        pytest.param(1280, 1, id="1280-one-candidate"),
        pytest.param(1280, 2, id="1280-two-candidates"),
        pytest.param(1920, 1, id="1920-one-candidate"),
        pytest.param(1920, 2, id="1920-two-candidates"),
    ],
)
def test_compare_nothing_cut(server, browser, width: int, candidates: int) -> None:  # type: ignore[no-untyped-def]
    """Every Compare tab, with the issue's long example, one candidate or two (side by side
    at 1,920 px, one above the other at 1,280 px), at 1,280 and 1,920 px: no label ends in
    "…", no text or table is wider than its box, no grid's columns overflow the grid,
    nothing reaches past the main block."""
    url, log = server
    context = browser.new_context(viewport={"width": width, "height": VIEWPORT["height"]})
    page = context.new_page()
    page.set_default_timeout(RENDER_TIMEOUT_MS)
    requests = RequestLog(page)
    try:
        query = LONG_EXAMPLE + (SECOND_CANDIDATE if candidates == 2 else "")
        page.goto(f"{url}/compare-captions{query}")
        if candidates == 2:
            page.get_by_text("A scores higher on").wait_for()
        else:
            page.locator('[data-testid="stMetric"]').first.wait_for()
        _settle(page)
        problems: dict[str, list[str]] = {}
        for tab in COMPARE_TABS:
            page.get_by_role("tab", name=tab, exact=True).click()
            _settle(page)
            _assert_no_error(page, log)
            if candidates == 2:
                _assert_pair_layout(page, width)
            cut = page.evaluate(CUT_ELEMENTS_JS)
            # a full-page screenshot of what was cut, and of the pair's first tab for
            # docs/screenshots (the others would cost a few seconds each and show nothing)
            if cut or (candidates == 2 and tab == COMPARE_TABS[0]):
                shot = f"compare-{candidates}-{tab.lower().replace('²', '2')}-{width}"
                _screenshot_at(page, shot, width)
            if cut:
                problems[tab] = cut
        assert not problems, "\n".join(
            f"{tab}: {line}" for tab, lines in problems.items() for line in lines
        )
        _assert_local(requests, url)
    finally:
        context.close()
