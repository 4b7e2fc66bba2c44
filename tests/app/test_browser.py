"""The app in a real browser: Debian's chromium driven by Playwright, a screenshot per page.

Every page is opened on a server of its own, by its deep link, as that server's very first
request (a first run used to show a false "Page not found"); every request the browser makes
is recorded and must go to the app's own server. Needs ``/usr/bin/chromium``
(``apt-get install -y chromium``); Playwright's own browser download is never used.
Screenshots land in ``tests/app/screenshots/`` (git-ignored); ``tools/docs_screenshots.py``
turns them into the small ones committed under ``docs/screenshots/``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from bench.app_server import VIEWPORT, RequestLog, ServerError, serve
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
#: what a Python error on a page reads like (whole words: the SPICE card names the jar's
#: NullPointerException and OutOfMemoryError)
ERROR_MARKERS = (r"\bTraceback\b", r"\bError:", r"\bException\b")
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
#: the pages opened on a server of their own: the deep-link router does not depend on the page
#: (home, and the page with the most resources); every other page is opened by its link on the
#: shared server (``test_nothing_cut_on_any_page_at_1280``, the copied-link tests)
FRESH = ("home", "compare")
RENDER_TIMEOUT_MS = 180_000
#: a laptop's window, where issue 42 found text cut
LAPTOP = {"width": 1280, "height": VIEWPORT["height"]}


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


@pytest.fixture
def server(shared_server: tuple[str, Path]) -> tuple[str, Path]:
    """The app server the interaction tests share (``conftest.shared_server``); its log is
    checked for tracebacks."""
    return shared_server


def _screenshot(page, name: str) -> Path:  # type: ignore[no-untyped-def]
    """Full-page screenshot; Streamlit scrolls inside its main section, so grow the window."""
    SCREENSHOTS.mkdir(exist_ok=True)
    height = page.evaluate(
        "() => Math.max(...[...document.querySelectorAll("
        '\'[data-testid="stMain"], [data-testid="stAppViewContainer"], section, body\')]'
        ".map(e => e.scrollHeight))"
    )
    page.set_viewport_size({"width": 1400, "height": min(max(int(height), 1000), 8000)})
    _settle(page)  # a grid and a chart repaint once the window grew
    path = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    page.set_viewport_size(VIEWPORT)
    return path


def _assert_no_error(page, log: Path) -> None:  # type: ignore[no-untyped-def]
    assert page.locator('[data-testid="stException"]').count() == 0, page.inner_text("body")
    text = page.inner_text('[data-testid="stMain"]')
    for marker in ERROR_MARKERS:
        assert not re.search(marker, text), f"{marker!r} on the page:\n{text}"
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
    """Home or Compare captions drawn (the pages opened before any other)."""
    page.get_by_role("heading", name=title).first.wait_for()
    if path == "compare-captions":
        page.locator('[data-testid="stMetric"]').first.wait_for()
    else:
        page.get_by_text("Resources", exact=True).wait_for()
    _settle(page)


@pytest.mark.parametrize(
    ("path", "title", "shot"), [p for p in PAGES if p[2] in FRESH], ids=list(FRESH)
)
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


def test_back_and_forward_undo_and_redo_a_change(server, visitor) -> None:  # type: ignore[no-untyped-def]
    """Back after a change: the URL of the state before is one the app wrote itself, which it
    took for a late echo of its own, so the page kept its inputs and wrote them again: the
    first Back did nothing, and the state before the change could not be reached."""
    url, log = server
    page, requests = visitor
    page.goto(f"{url}/compare-captions")
    _wait_for_page(page, "compare-captions", "Compare captions")
    area = page.get_by_label("Candidate caption (A)", exact=True)
    before = area.input_value()
    caption = "a dog jumps to catch a frisbee in a park"
    _commit_text_area(page, "Candidate caption (A)", caption)
    page.get_by_text(f"A: {caption}").wait_for()
    _settle(page)
    page.go_back()
    page.get_by_text(f"A: {before}").wait_for()
    _settle(page)
    assert area.input_value() == before and "frisbee" not in page.url
    page.go_forward()
    page.get_by_text(f"A: {caption}").wait_for()
    _settle(page)
    assert area.input_value() == caption and "frisbee" in page.url
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


def test_systems_page_and_a_row_click_to_compare(server, visitor) -> None:  # type: ignore[no-untyped-def]
    """The Systems page compares its demo systems: the table, the chart with error bars and
    the per-image table linked to Compare captions. Then the drill-down as a user does it:
    one click on a row of "Where two systems differ" opens Compare captions on that image's
    two captions, with the table's CIDEr-D IDF (the set's) chosen and the note saying every
    number is the table's (issue 33; the numbers themselves are checked by the Systems page's
    AppTest, which cannot click a grid row)."""
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

    grid = page.locator('.st-key-systems_items [data-testid="stDataFrame"]')
    grid.wait_for()
    grid.scroll_into_view_if_needed()
    _settle(page)
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
    assert "Opened from Systems: image" in page.inner_text('[data-testid="stMain"]')
    chosen = page.locator('[data-testid="stRadio"] label:has(input:checked)').all_inner_texts()
    assert any("the Systems table's 200 images" in t for t in chosen), chosen
    for field in ("candidate", "candidate_b"):
        assert page.locator(f".st-key-{field} textarea").input_value().strip()
    _assert_local(requests, url)


def test_a_references_file_replaced_by_a_bad_one_keeps_the_table_and_its_link(
    server, visitor, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    """A bad references file dropped on the one in use: the uploader removes the old file,
    then adds the new (two runs). The error was said, but the good file was forgotten: the
    table went, the address lost ``files=`` and ``scored=1`` (a reload showed no table), and
    removing the bad file asked for references again. Now the good files stay in use, with
    their table and their link, as after a bad results file."""
    import json
    import time

    from bench.systems import _write
    from capeval_core.resources import coco_caption_sets
    from tests.app.test_systems_browser import open_uploads

    url, log = server
    page, _ = visitor
    ann, results = _write(tmp_path, coco_caption_sets("val", 12))
    bad = json.loads(ann.read_text())
    del bad["annotations"][2]["caption"]
    bad_ann = tmp_path / "bad_references.json"
    bad_ann.write_text(json.dumps(bad))
    open_uploads(page, url, results[:2], ann)
    annotations = page.locator('.st-key-systems_annotations input[type="file"]')
    page.locator(".st-key-systems_score button").first.click()
    page.get_by_text("2 systems on 12 images", exact=True).wait_for()
    _settle(page)
    annotations.set_input_files(str(bad_ann))  # dropped on the file in use: replaces it
    page.get_by_text("stay in use", exact=False).first.wait_for()
    _settle(page)

    def table_and_link() -> tuple[bool, str]:
        deadline = time.monotonic() + 30  # the browser applies the address after drawing
        while "scored=1" not in page.url and time.monotonic() < deadline:
            time.sleep(0.2)
        return "2 systems on 12 images" in page.inner_text('[data-testid="stMain"]'), page.url

    shown, address = table_and_link()
    assert shown and "bad_references.json" in page.inner_text('[data-testid="stMain"]')
    assert "files=" in address and "scored=1" in address, address
    page.reload()
    page.get_by_text("2 systems on 12 images", exact=True).wait_for()  # the link's table
    _settle(page)
    assert "files=" in page.url and "scored=1" in page.url
    _assert_no_error(page, log)


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
#: the charts a tab's evidence draws, at least
EVIDENCE_CHARTS = {"METEOR": 1, "WMD": 3, "SPICE": 3}

#: every piece of text, label and table of the visible tab that shows less than it holds:
#: a box whose content is wider than the box (a label cut with "…", a caption or a table
#: that needs a scroll bar), a grid whose columns are wider than the grid, or anything
#: reaching past the main block's right edge
CUT_ELEMENTS_JS = r"""
(whole) => {
  const main = document.querySelector('[data-testid="stMain"] [data-testid="stMainBlockContainer"]')
    || document.querySelector('[data-testid="stMain"]');
  const right = main.getBoundingClientRect().right;
  const panel = [...main.querySelectorAll('[role="tabpanel"]')]
    .find(p => !p.hidden && p.offsetParent !== null);
  // a page with tabs: the visible tab and the cards above it; any other page: all of it
  const roots = panel && !whole
    ? [panel, ...main.querySelectorAll('[data-testid="stMetric"]')]
    : [main];
  const visible = e => e.offsetParent !== null && e.getBoundingClientRect().width > 0;
  // inside a box that clips it (a formula's stretched root sign, a closed expander), an
  // element shows nothing past that box; the box itself is checked
  const clipped = e => {
    for (let a = e.parentElement; a && a !== main; a = a.parentElement) {
      if (/hidden|clip/.test(getComputedStyle(a).overflowX))
        return a.getBoundingClientRect().right <= right + 1;
    }
    return false;
  };
  const keyed = e => ((e.closest('[class*="st-key-"]')?.className || '').match(/st-key-\S+/)
    || [''])[0];
  const name = e => keyed(e) + ' ' + (e.getAttribute('data-testid') || e.tagName) + ': '
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
      if (!visible(e) || e.closest('[data-testid="stSpinner"]')) continue;  // a passing state
      if (e.scrollWidth > e.clientWidth + 1) cut.push('wider than its box: ' + name(e));
      if ((e.innerText || '').trim().endsWith('…')) cut.push('ends in an ellipsis: ' + name(e));
    }
    // the data grid draws on a canvas; its scroller says whether its columns fit
    for (const frame of root.querySelectorAll('[data-testid="stDataFrame"]')) {
      // the Judgments preview shows a file's own columns, as many as it has: it scrolls
      if (!visible(frame) || frame.closest('.st-key-judgments-preview')) continue;
      const scroller = frame.querySelector('.dvn-scroller');
      if (scroller && scroller.scrollWidth > scroller.clientWidth + 1)
        cut.push(`data grid columns ${scroller.scrollWidth}px in ${scroller.clientWidth}px: `
          + name(frame));
    }
    for (const e of root.querySelectorAll('*')) {
      if (!visible(e) || clipped(e)) continue;
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
    _settle(page)  # a grid and a chart repaint once the window grew
    path = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    page.set_viewport_size({"width": width, "height": VIEWPORT["height"]})
    return path


def _open_expanders(page) -> None:  # type: ignore[no-untyped-def]
    """Every expander open: what it holds is on the page too."""
    page.evaluate(
        "() => document.querySelectorAll("
        "'[data-testid=\"stExpander\"] details:not([open]) > summary')"
        ".forEach(s => s.click())"
    )
    _settle(page)


def _resize(page, width: int) -> None:  # type: ignore[no-untyped-def]
    """The window ``width`` wide, once the charts and grids have answered the resize (their
    resize observers run with the next frames, so the page may not have changed yet)."""
    page.set_viewport_size({"width": width, "height": VIEWPORT["height"]})
    page.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
    page.wait_for_timeout(100)
    _settle(page)


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
    ("widths", "candidates"),
    [
        pytest.param((1280,), 1, id="1280-one-candidate"),
        # one candidate at 1,920 px has more room than at 1,280 px: not checked again
        pytest.param((1920, 1280), 2, id="1920-and-1280-two-candidates"),
    ],
)
def test_compare_nothing_cut(server, browser, widths: tuple[int, ...], candidates: int) -> None:  # type: ignore[no-untyped-def]
    """Every Compare tab, with the issue's long example, one candidate at 1,280 px or two at
    1,920 px (side by side) and at 1,280 px (one above the other): no label ends in "…", no
    text or table is wider than its box, no grid's columns overflow the grid, nothing reaches
    past the main block; each tab draws its evidence. With two candidates at 1,280 px, the
    page around the tabs (its tables in expanders) too.

    The two widths share one page: each tab is checked at the width its click drew it at,
    then the window takes the other width and the tab is checked again (the pair's layout is
    a container query, the charts and grids follow their box), so each width sees tabs drawn
    at it and tabs resized to it. A fresh page per width cost a page load and eight reruns."""
    url, log = server
    context = browser.new_context(viewport={"width": widths[0], "height": VIEWPORT["height"]})
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
        order = list(widths)
        for tab in COMPARE_TABS:
            page.get_by_role("tab", name=tab, exact=True).click()
            _settle(page)
            _assert_no_error(page, log)
            for i, width in enumerate(order):
                if i:
                    _resize(page, width)
                if candidates == 2:
                    _assert_pair_layout(page, width)
                # the evidence is drawn: the alignment / the Sankey and its two heatmaps /
                # the two scene graphs and the per-category chart
                charts = page.locator('[data-testid="stPlotlyChart"]:visible').count()
                assert charts >= EVIDENCE_CHARTS.get(tab, 0), (tab, width, charts)
                cut = page.evaluate(CUT_ELEMENTS_JS)
                # a full-page screenshot of what was cut, and of the pair's first tab for
                # docs/screenshots (the others would cost a few seconds each and show nothing)
                if cut or (candidates == 2 and tab == COMPARE_TABS[0]):
                    shot = f"compare-{candidates}-{tab.lower().replace('²', '2')}-{width}"
                    _screenshot_at(page, shot, width)
                if cut:
                    problems[f"{tab} at {width} px"] = cut
            order.reverse()  # the next tab is drawn at the width this one ended at
        if candidates == 2:  # the page around the tabs at 1,280 px, expanders open
            _resize(page, LAPTOP["width"])
            _open_expanders(page)
            if cut := page.evaluate(CUT_ELEMENTS_JS, True):
                _screenshot_at(page, "compare-page-1280", LAPTOP["width"])
                problems["the page"] = cut
        assert not problems, "\n".join(
            f"{tab}: {line}" for tab, lines in problems.items() for line in lines
        )
        _assert_local(requests, url)
    finally:
        context.close()


#: the pages and views no other test checks at 1,280 px, as a link opens them: URL path and
#: query, what shows once it is drawn, a button to press first. Compare's tabs are the test
#: above; the pages with a "Copy link" are checked on the view their link test makes.
VIEWS = (
    pytest.param("", "Resources", None, id="home"),
    pytest.param(
        "systems",
        "Where two systems differ",
        "Score",
        id="systems",
    ),
    pytest.param(
        "perturbation-lab?lab_mode=batch&lab_run=1&lab_images=20&lab_dataset=demo-graded"
        "&lab_batch_metric=bleu_4&lab_batch_metric=cider_d",
        "Correlation with human scores, before and after",
        None,
        id="lab-batch",
    ),
)


def _assert_nothing_cut(page, shot: str) -> None:  # type: ignore[no-untyped-def]
    """The whole page at 1,280 px, every expander open: nothing cut (a screenshot ``shot``
    either way)."""
    _open_expanders(page)
    _screenshot_at(page, shot, LAPTOP["width"])
    cut = page.evaluate(CUT_ELEMENTS_JS, True)
    assert not cut, "\n".join(cut)


@pytest.mark.parametrize(("path", "ready", "press"), VIEWS)
def test_nothing_cut_on_any_page_at_1280(server, browser, path: str, ready: str, press) -> None:  # type: ignore[no-untyped-def]
    """Every page at a laptop's width (issue 42): no label ends in "…", no text or table is
    wider than its box, no grid's columns overflow the grid, nothing reaches past the main
    block. (The grid's headers are drawn on a canvas: their widths are checked in
    ``test_readable.py``.)"""
    url, log = server
    context = browser.new_context(viewport=LAPTOP)
    page = context.new_page()
    page.set_default_timeout(RENDER_TIMEOUT_MS)
    requests = RequestLog(page)
    try:
        page.goto(f"{url}/{path}")
        page.locator('[data-testid="stMain"] h1').first.wait_for()
        _settle(page)
        shown = page.get_by_text(ready).filter(visible=True).first
        for _ in range(3):  # a click while the page redraws is lost: press again
            if press and page.get_by_role("button", name=press, exact=True).count():
                page.get_by_role("button", name=press, exact=True).first.click()
            try:
                shown.wait_for(timeout=RENDER_TIMEOUT_MS // 3)
                break
            except Exception:  # not there yet
                _settle(page)
        shown.wait_for()
        _settle(page)
        _assert_no_error(page, log)
        name = path.split("?")[0] or "home"
        _assert_nothing_cut(page, f"{name}-{'batch' if 'batch' in path else 'page'}-1280")
        _assert_local(requests, url)
    finally:
        context.close()


#: every chip of the metric picker: its label, and whether its text is cut
CHIPS_JS = """
() => [...document.querySelectorAll('.st-key-systems_metrics [data-tag]')].map(tag => {
  const text = tag.querySelector('[title]') || tag;
  return [text.innerText.trim(), text.scrollWidth > text.clientWidth + 1];
})
"""


def test_the_metric_chips_show_whole_names_at_1280_px(server, browser) -> None:  # type: ignore[no-untyped-def]
    """Issue 42: the chips were cut at 1,280 px, and showed keys (bleu_1) where the table
    shows names (BLEU-1)."""
    from capeval_core.metrics import COCO_CAPTION_KEYS, metric_class

    url, log = server
    context = browser.new_context(viewport=LAPTOP)
    page = context.new_page()
    page.set_default_timeout(RENDER_TIMEOUT_MS)
    try:
        # the picker as a user sees it before uploading: nothing is scored (the demo's table
        # with these metrics would cost the test most of its time)
        query = "source=upload&" + "&".join(
            f"metric={k}" for k in (*COCO_CAPTION_KEYS, "wmd", "mean", "i2ce")
        )
        page.goto(f"{url}/systems?{query}")
        page.get_by_role("heading", name="Systems", exact=True).wait_for()
        _settle(page)
        chips = page.evaluate(CHIPS_JS)
        names = [metric_class(k).label(k) for k in (*COCO_CAPTION_KEYS, "wmd", "mean", "i2ce")]
        assert [text for text, _ in chips] == names
        assert not [text for text, cut in chips if cut]
        _assert_no_error(page, log)
    finally:
        context.close()


#: each score card's value, the width its text takes and the width its box gives it (the
#: box ends the text in "…" via CSS, so neither its text nor its scrollWidth says it is cut)
CARD_VALUES_JS = """
() => [...document.querySelectorAll('[data-testid="stMetricValue"]')].map(value => {
  const box = value.querySelector('[data-testid="stMarkdownContainer"]') || value;
  const text = document.createRange();
  text.selectNodeContents(box);
  return [value.innerText.trim(), text.getBoundingClientRect().width,
          box.getBoundingClientRect().width];
})
"""


def test_the_score_cards_show_whole_values_at_1024_px(server, browser) -> None:  # type: ignore[no-untyped-def]
    """At 1,024 px the sidebar stays open beside the page, and four cards a row gave each
    value 97 px of the 98 that 1.0000 takes: every card read "1.00…", "0.94…"."""
    url, log = server
    context = browser.new_context(viewport={"width": 1024, "height": VIEWPORT["height"]})
    page = context.new_page()
    page.set_default_timeout(RENDER_TIMEOUT_MS)
    try:
        page.goto(f"{url}/compare-captions{LONG_EXAMPLE}")
        page.locator('[data-testid="stMetricValue"]').first.wait_for()
        _settle(page)
        assert page.locator('[data-testid="stSidebar"]').is_visible()
        cards = page.evaluate(CARD_VALUES_JS)
        assert len(cards) >= len(METRIC_NAMES), cards
        cut = [(value, text, room) for value, text, room in cards if text > room + 0.5]
        assert not cut, cut
        _assert_no_error(page, log)
    finally:
        context.close()


#: the labels of a chart's markers that reach past its plot area (plotly cuts them there)
LABELS_PAST_THE_PLOT_JS = """
() => [...document.querySelectorAll('[data-testid="stPlotlyChart"]')].flatMap(chart => {
  const area = chart.querySelector('rect.nsewdrag');
  if (!area) return [];
  const box = area.getBoundingClientRect();
  return [...chart.querySelectorAll('.scatterlayer .textpoint text')].filter(t => {
    const r = t.getBoundingClientRect();
    return r.width > 0 && (r.left < box.left - 0.5 || r.right > box.right + 0.5);
  }).map(t => t.textContent);
})
"""


def test_the_scene_graphs_labels_stay_inside_their_plot_at_1280_px(server, browser) -> None:  # type: ignore[no-untyped-def]
    """The scene graphs were laid out for a 560 px plot that is some 380 px at 1,280 px: the
    labels at either side ("man", "brown", "horse", "on" here) were cut off."""
    from urllib.parse import urlencode

    url, log = server
    context = browser.new_context(viewport=LAPTOP)
    page = context.new_page()
    page.set_default_timeout(RENDER_TIMEOUT_MS)
    try:
        refs = ["a person rides a brown horse along the beach", "a man on a horse near the ocean"]
        query = urlencode(
            {"candidate": "a man riding a horse on a beach", "ref": refs, "tab": "SPICE"},
            doseq=True,
        )
        page.goto(f"{url}/compare-captions?{query}")
        page.get_by_text("Scene graphs").wait_for()
        labels = page.locator(".scatterlayer .textpoint text")
        labels.first.wait_for()  # the charts draw after the text above them
        _settle(page)
        assert labels.count() >= 10
        assert page.evaluate(LABELS_PAST_THE_PLOT_JS) == []
        _assert_no_error(page, log)
    finally:
        context.close()


# -- a page's state is its URL (issue 42) ----------------------------------------------------------
#: what a page shows as numbers: the cards, the grids' cells, the charts' texts (labels, ticks,
#: heatmap cells); only what is visible (a hidden tab's grid draws nothing)
NUMBERS_JS = """
() => {
  const main = document.querySelector('[data-testid="stMain"]');
  const visible = e => e.getBoundingClientRect().width > 0;  // a hidden tab's are 0 wide
  const out = [];
  const take = (selector, kind, text) => {
    for (const e of main.querySelectorAll(selector))
      if (visible(e)) out.push(kind + ' ' + text(e));
  };
  take('[data-testid="stMetricValue"]', 'card', e => e.innerText);
  take('[data-testid="stDataFrame"] table td', 'cell', e => e.innerText);
  take('[data-testid="stTable"] td', 'table', e => e.innerText);
  take('[data-testid="stPlotlyChart"] svg text', 'chart', e => e.textContent);
  return out;
}
"""


def _pick(page, key: str, option: str | re.Pattern[str]) -> None:  # type: ignore[no-untyped-def]
    """Choose ``option`` in the selectbox ``key`` as a user does: open it, click the option.
    A click opens the list again if the first did not: right after a choice in a box, the
    first click on the next box leaves its list shut (chromium and this Streamlit, every
    time), and a rerun may redraw the box while it opens. The waits grow, so the usual
    second click comes after 1.5 s (a fixed 10 s wait had cost 10 s per such choice). On a
    loaded machine (the whole suite in three workers on two cores) four tries once left the
    list shut, and the click then waited for an option that never showed: the last tries
    repeat."""
    choice = page.get_by_role("option", name=option, exact=isinstance(option, str)).first
    for wait_ms in (1_500, 5_000, 15_000, 30_000, 30_000, 30_000):
        _settle(page)
        page.locator(f".st-key-{key} input[role=combobox]").click()
        try:
            choice.wait_for(timeout=wait_ms)
            break
        except Exception:  # the list is shut: close whatever is open, and click again
            page.keyboard.press("Escape")
    choice.click()
    _settle(page)


def _click(page, key: str, label: str) -> None:  # type: ignore[no-untyped-def]
    """Click the radio option, toggle or button ``label`` of the widget ``key``."""
    page.locator(f".st-key-{key}").get_by_text(label, exact=True).first.click()
    _settle(page)


def _type(page, key: str, value: str) -> None:  # type: ignore[no-untyped-def]
    """Type a number into the number input ``key`` and apply it."""
    field = page.locator(f".st-key-{key} input")
    field.fill(value)
    field.press("Enter")
    _settle(page)


def _copied_link(page) -> str:  # type: ignore[no-untyped-def]
    """What the page's "Copy link" shows (the popover opened and closed again)."""
    page.get_by_role("button", name="Copy link").first.click()
    code = page.locator('[data-testid="stPopoverBody"] code').first
    code.wait_for()
    link = code.inner_text().strip()
    page.keyboard.press("Escape")
    return link


def _same_address(a: str, b: str) -> bool:
    """Two URLs of the same page with the same query (however spaces are written)."""
    from urllib.parse import parse_qs, urlsplit

    x, y = urlsplit(a), urlsplit(b)
    return (x.netloc, x.path, parse_qs(x.query)) == (y.netloc, y.path, parse_qs(y.query))


def _numbers(page, ready: str) -> list[str]:  # type: ignore[no-untyped-def]
    """The numbers the page shows, with the window as tall as the page (the grids and charts
    below the fold draw nothing until scrolled to)."""
    page.get_by_text(ready).filter(visible=True).first.wait_for()
    _settle(page)
    size = page.viewport_size
    height = page.evaluate(
        "() => Math.max(...[...document.querySelectorAll("
        '\'[data-testid="stMain"], [data-testid="stAppViewContainer"], section, body\')]'
        ".map(e => e.scrollHeight))"
    )
    page.set_viewport_size({"width": size["width"], "height": min(max(int(height), 1000), 8000)})
    try:
        # read until three reads half a second apart agree and show numbers: a chart may
        # still be drawing, and a page still opening on a busy machine shows none yet
        reads = [page.evaluate(NUMBERS_JS)]
        for _ in range(60):
            if reads[-1] and len(reads) >= 3 and reads[-1] == reads[-2] == reads[-3]:
                break
            page.wait_for_timeout(500)
            _settle(page)
            reads.append(page.evaluate(NUMBERS_JS))
        return reads[-1]
    finally:
        page.set_viewport_size(size)


def _compare_choices(page) -> None:  # type: ignore[no-untyped-def]
    _click(page, "cider_idf", "scored set")
    page.get_by_role("tab", name="METEOR", exact=True).click()
    _settle(page)
    _pick(page, "meteor-reference", re.compile(r"^#1\b"))  # the winner or not


def _lab_choices(page) -> None:  # type: ignore[no-untyped-def]
    text = page.inner_text('[data-testid="stMain"]')  # the lab as it opens
    for word in ("Synonym substitution", "Word-order shuffle", "Perturbed:"):
        assert word in text, f"{word!r} missing:\n{text}"
    _click(
        page,
        "lab_table2",
        "Table 2 preset: the caption against itself (upper bound), then "
        "synonyms, redundancy and word order, each scored against the original caption",
    )
    _type(page, "lab_seed", "3")


def _judgments_choices(page) -> None:  # type: ignore[no-untyped-def]
    _pick(page, "demo_set", "Pairwise demo (synthetic, PASCAL-50S style, 400 pairs)")
    page.get_by_role("button", name="Load demo").click()
    page.get_by_text("Loaded set", exact=True).wait_for()
    _settle(page)


def _correlations_choices(page) -> None:  # type: ignore[no-untyped-def]
    _pick(page, "combined_correlation", "Pearson r")
    _pick(page, "distribution_metric", "ROUGE-L")
    _click(page, "correlation_level", "system")


def _significance_choices(page) -> None:  # type: ignore[no-untyped-def]
    _pick(page, "williams_correlation", "Pearson r")
    _click(page, "williams_alternative", "two-sided")
    _pick(page, "pair_a", "BLEU-4")


def _pairwise_choices(page) -> None:  # type: ignore[no-untyped-def]
    _pick(page, "metric_tie", "wrong")
    _type(page, "draws", "2")


def _robustness_choices(page) -> None:  # type: ignore[no-untyped-def]
    _click(page, "forced_tie", "correct")


#: (URL path, non-default choices a user makes on the page as it opens, what shows once the
#: page is drawn)
LINKED = (
    ("compare-captions", _compare_choices, "Score table with signatures"),
    ("perturbation-lab", _lab_choices, "Scores before and after"),
    ("judgments", _judgments_choices, "Loaded set"),
    ("correlations", _correlations_choices, "Combined metric"),
    ("significance", _significance_choices, "One pair, with the arithmetic"),
    ("pairwise-accuracy", _pairwise_choices, "Pairs per category"),
    ("robustness", _robustness_choices, "Pairs per distractor type"),
)


#: the pages whose screenshot for docs/screenshots the link test takes (home and Compare come
#: from the tests that open them on a fresh server, Systems from its own test)
DOCS_SHOTS = {p[2] for p in PAGES} - set(FRESH) - {"systems"}


@pytest.mark.parametrize(("path", "choose", "ready"), LINKED, ids=[p[0] for p in LINKED])
def test_each_copied_link_reopens_its_view_in_a_new_browser(  # type: ignore[no-untyped-def]
    server, browser, path: str, choose, ready: str
) -> None:
    """Issue 42: on each page, non-default choices made by clicking at a laptop's width, then
    "Copy link"; the link, opened by another visitor (a fresh browser context), shows the same
    numbers. A reload keeps the loaded judgment set (it once fell back to the demo's), and
    the view the choices made has nothing cut at 1,280 px (Compare's tabs: the test above)."""
    url, log = server
    first = browser.new_context(viewport=LAPTOP)
    second = browser.new_context(viewport=LAPTOP)
    try:
        page = first.new_page()
        page.set_default_timeout(RENDER_TIMEOUT_MS)
        requests = RequestLog(page)
        page.goto(f"{url}/{path}")
        page.locator('[data-testid="stMain"] h1').first.wait_for()
        _settle(page)
        choose(page)
        shown = _numbers(page, ready)
        if path in DOCS_SHOTS:  # the view as docs/screenshots shows it, 1,400 px wide
            _screenshot(page, path)
            page.set_viewport_size(LAPTOP)
        link = _copied_link(page)
        assert _same_address(link, page.url), (link, page.url)  # the address bar's
        assert link.startswith(f"{url}/{path}?") and link.count(f"/{path}") == 1, link
        other = second.new_page()
        other.set_default_timeout(RENDER_TIMEOUT_MS)
        other_requests = RequestLog(other)
        other.goto(link)
        again = _numbers(other, ready)
        if again != shown:
            _screenshot(other, f"link-{path}-reopened")
        differ = [(a, b) for a, b in zip(shown, again, strict=False) if a != b]
        assert shown and again == shown, (path, link, len(shown), len(again), differ[:10])
        assert _same_address(other.url, link), (other.url, link)
        _assert_no_error(other, log)
        if path == "judgments":
            page.reload()
            assert _numbers(page, ready) == shown
        if path != "compare-captions":
            _assert_nothing_cut(page, f"link-{path}-1280")
        _assert_local(requests, url)
        _assert_local(other_requests, url)
    finally:
        first.close()
        second.close()


GRADED_UPLOAD = "id,image_id,candidate,references,quality,metric:mine\n" + "".join(
    f"{i},img{i // 2},{c},a dog running on grass|||a man surfing on a wave,{q},{m}\n"
    for i, (c, q, m) in enumerate(
        [
            ("a dog runs on the grass", 5, 0.9),
            ("a cat sleeps", 1, 0.1),
            ("a man rides a wave", 4, 0.8),
            ("a red car", 1, 0.2),
            ("a dog on grass", 4, 0.7),
            ("a surfer on a wave", 5, 0.85),
            ("a plate of food", 1, 0.15),
            ("two dogs play", 3, 0.5),
            ("a wave", 2, 0.3),
            ("a man surfing", 4, 0.75),
            ("a bus", 1, 0.05),
            ("a brown dog runs", 5, 0.95),
        ]
    )
)


def test_a_link_opened_after_a_restart_says_its_set_is_gone(browser, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Issue 42: a Correlations link to an uploaded set, opened after the server restarted,
    showed the demo set's numbers and rewrote the URL. Now the page says the set is not on
    this server, keeps the URL and shows no numbers until the user opens the demo."""
    upload = tmp_path / "mine.csv"
    upload.write_text(GRADED_UPLOAD)
    try:
        with serve(tmp_path / "before.log") as url:
            context = browser.new_context(viewport=VIEWPORT)
            page = context.new_page()
            page.set_default_timeout(RENDER_TIMEOUT_MS)
            page.goto(f"{url}/judgments")
            page.locator('[data-testid="stMain"] h1').first.wait_for()
            _settle(page)
            _click(page, "judgment_source", "Upload a file")
            page.locator(".st-key-judgment_files-graded input[type=file]").set_input_files(upload)
            _settle(page)
            page.locator(".st-key-load_judgments button").click()
            page.get_by_text("Loaded set", exact=True).wait_for()
            _settle(page)
            _nav(page, "Correlations")
            _pick(page, "combined_correlation", "Pearson r")
            assert _numbers(page, "Combined metric")
            link = _copied_link(page).replace(url, "")
            assert "set=" in link and "metric=mine" in link and "combined=pearson" in link
            context.close()
        with serve(tmp_path / "after.log") as url:
            context = browser.new_context(viewport=VIEWPORT)
            page = context.new_page()
            page.set_default_timeout(RENDER_TIMEOUT_MS)
            requests = RequestLog(page)
            page.goto(f"{url}{link}")
            page.get_by_text("is not on this server").wait_for()
            _settle(page)
            assert page.url == f"{url}{link}"  # the URL stays the link
            assert page.evaluate(NUMBERS_JS) == []
            main = page.inner_text('[data-testid="stMain"]')
            assert "synthetic demo set" not in main, main
            page.get_by_role("button", name="Open the demo").click()
            assert _numbers(page, "Combined metric")
            assert "synthetic demo set" in page.inner_text('[data-testid="stMain"]')
            _assert_no_error(page, tmp_path / "after.log")
            _assert_local(requests, url)
            context.close()
    except ServerError as exc:
        pytest.fail(str(exc))


def test_a_refused_file_type_does_not_take_the_last_files_error(
    server, visitor, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    """Robustness: a pairwise file refused by the loader, then a file of a type the uploader
    refuses (``notes.txt``). The browser keeps the first file and shows the second beside it
    as refused, without a rerun: the error read "The file was not loaded ...", as if it were
    the new file's. It names its file now."""
    url, log = server
    page, _ = visitor
    pairs = tmp_path / "pairs.csv"
    pairs.write_text(
        "id,image_id,candidate_a,candidate_b,references,category\n"
        "1,i1,a dog on grass,a cat on grass,a dog runs on grass,replace-scene\n"
    )
    notes = tmp_path / "notes.txt"
    notes.write_text("junk\n")
    page.goto(f"{url}/robustness?source=upload")
    uploader = page.locator(".st-key-distractor_file input[type=file]")
    uploader.wait_for(state="attached")
    _settle(page)
    uploader.set_input_files(str(pairs))
    _settle(page)
    page.locator(".st-key-load_distractors button").click()
    error = page.locator('[data-testid="stAlertContentError"]')
    error.get_by_text("missing required column", exact=False).wait_for()
    _settle(page)
    uploader.set_input_files(str(notes))
    page.get_by_text("files are not allowed", exact=False).wait_for()
    _settle(page)
    said = error.inner_text()
    assert said.startswith("pairs.csv was not loaded"), said
    assert "previous set is kept" not in said, said
    assert "Traceback" not in log.read_text(), log.read_text()
