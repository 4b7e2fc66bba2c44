"""Readable numbers on every page (issue 42): one rule for cards, tables and chart labels
(fixed decimals, ``< 0.001`` closer to 0, never scientific notation and never 0.0000 for a
value that is not 0), and no column narrower than its header (the grid never wraps one: the
SPICE table's "first matching reference" header was cut at 1,280 px).

What the browser shows is checked here on what the server sends (the Styler's display
values, the cards, the figures' label texts); ``test_browser.py`` checks the drawn pages for
text cut at 1,280 px.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from streamlit.testing.v1 import AppTest

from capeval_ui import store
from capeval_ui.formats import SMALL_TEXT, format_number
from capeval_ui.views.common import cell_width
from tests.app.apptest import ROOT, TIMEOUT

#: the issue's example: BLEU-3 and BLEU-4 of this caption are 3.989e-06 and 1.014e-08
HORSE = "a man is riding a horse on the beach"
SHORE = ("a person rides a horse along the shore", "a man on horseback at the beach")
SCIENTIFIC = re.compile(r"\d[eE][-+]\d")
PAGES = {
    "compare": ("app_pages/compare.py", {"candidate": HORSE, "ref": list(SHORE)}),
    "lab": ("app_pages/perturb.py", {"lab_caption": HORSE, "lab_ref": list(SHORE)}),
    "judgments": ("app_pages/judgments.py", {}),
    "correlations": ("app_pages/correlations.py", {}),
    "significance": ("app_pages/significance.py", {}),
    "pairwise": ("app_pages/pairwise.py", {}),
    "robustness": ("app_pages/robustness.py", {}),
    "home": ("app_pages/home.py", {}),
}


@pytest.fixture(scope="module")
def pages() -> dict[str, AppTest]:
    """Every page as it first opens (Judgments with its demo loaded), run once."""
    store.forget_all()
    opened = {}
    for name, (page, params) in PAGES.items():
        at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
        for key, value in params.items():
            at.query_params[key] = value
        at.run()
        at.switch_page(page).run()
        if name == "judgments":
            at.button(key="load_demo").click().run()
        assert not at.exception, (name, at.exception)
        opened[name] = at
    return opened


def _shown_cells(df: Any) -> list[str]:
    import pyarrow as pa

    styler = df.proto.arrow_data.styler
    if not styler.display_values:
        return []
    frame = pa.ipc.open_stream(styler.display_values).read_pandas()
    return [str(v) for v in frame.to_numpy().ravel()]


def _chart_labels(at: AppTest) -> list[str]:
    labels = []
    for element in at.get("plotly_chart"):
        for trace in json.loads(element.proto.spec)["data"]:
            text = trace.get("text")
            if isinstance(text, list):
                labels += [
                    str(t) for row in text for t in (row if isinstance(row, list) else [row])
                ]
    return labels


@pytest.mark.parametrize("name", list(PAGES))
def test_every_number_reads_by_one_rule(pages: dict[str, AppTest], name: str) -> None:
    at = pages[name]
    shown = [m.value for m in at.metric]
    for df in at.dataframe:
        shown += _shown_cells(df)
    for tb in at.table:
        shown += _shown_cells(tb)
    shown += _chart_labels(at)
    scientific = [s for s in shown if SCIENTIFIC.search(s)]
    assert not scientific, scientific[:10]


def test_the_issues_tiny_bleu_reads_the_same_on_cards_tables_and_charts(
    pages: dict[str, AppTest],
) -> None:
    """BLEU-3 and BLEU-4 of the horse caption: `3.989e-06` on the cards and `0.0000` in the
    evidence table before; "< 0.001" in both now, and in the BLEU chart's labels."""
    at = pages["compare"]
    cards = {m.label: m.value for m in at.metric}
    assert cards["BLEU-3"] == cards["BLEU-4"] == SMALL_TEXT
    (orders,) = [df for df in at.dataframe if "BLEU-n" in df.value.columns]
    values = orders.value["BLEU-n"]
    assert [c for c in _shown_cells(orders) if c == SMALL_TEXT]
    assert all(v == 0 or format_number(v) != "0.0000" for v in values)
    assert SMALL_TEXT in _chart_labels(at)


@pytest.mark.parametrize("name", list(PAGES))
def test_no_column_is_narrower_than_its_header(pages: dict[str, AppTest], name: str) -> None:
    at = pages[name]
    cut = []
    for df in at.dataframe:
        for column, config in json.loads(df.proto.columns or "{}").items():
            width = config.get("width")
            label = config.get("label") or column
            if isinstance(width, int) and width < cell_width([label]):
                cut.append(f"{label!r}: {width} px")
    assert not cut, cut


def _figures(at: AppTest) -> list[dict[str, Any]]:
    return [json.loads(e.proto.spec) for e in at.get("plotly_chart")]


@pytest.mark.parametrize("name", list(PAGES))
def test_bar_labels_hide_rather_than_collide(pages: dict[str, AppTest], name: str) -> None:
    """Issue 42: two labels of neighbouring bars ran together ("0.8890.889"). A labelled bar
    chart shrinks each label to its bar and hides one that would be too small to read."""
    for figure in _figures(pages[name]):
        bars = [t for t in figure["data"] if t.get("type") == "bar" and t.get("text")]
        if not bars:
            continue
        assert figure["layout"].get("uniformtext") == {"minsize": 10, "mode": "hide"}
        assert all(t.get("constraintext") == "both" for t in bars)


def test_the_lab_draws_cider_on_an_axis_of_its_own(pages: dict[str, AppTest]) -> None:
    """Issue 42: the lab drew CIDEr-D (0–10) on one axis with the 0–1 metrics, flattening
    them. CIDEr-D's bars now stand on a right-hand axis whose range is ten times the left's
    (0 at the same height), and its title says so."""
    (figure,) = [
        f for f in _figures(pages["lab"]) if "after − before" in str(f["layout"]["yaxis"]["title"])
    ]
    for trace in figure["data"]:
        on_right = trace.get("yaxis") == "y2"
        assert on_right == ("CIDEr-D" in trace["x"]), trace["x"]
    layout = figure["layout"]
    assert "CIDEr-D (0–10 scale)" in layout["yaxis2"]["title"]["text"]
    left, right = layout["yaxis"]["range"], layout["yaxis2"]["range"]
    assert right == pytest.approx([10 * left[0], 10 * left[1]])
    assert left[0] < 0 < left[1] or left[0] == 0
