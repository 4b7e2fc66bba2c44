"""Charts keep their words out of each other's way at a phone's width (390 px) and a laptop's
(1,024 px with the sidebar open): a value label past its bar's end has a margin to be written
in, a legend that wraps grows above the plot rather than down over its bars, and a title fits
on one line. Checked on the figures the pages send, as the browser draws them from those."""

from __future__ import annotations

import json
from typing import Any

from streamlit.testing.v1 import AppTest

from tests.app.test_links import _open

#: a phone's window less the page's padding (16 px a side), the widest a chart is drawn there
PHONE_CHART_PX = 390 - 2 * 16
#: the widest an average character of plotly's sans-serif font is, per px of its size
CHAR_EM = 0.6


def _figure(at: AppTest, key: str) -> dict[str, Any]:
    (spec,) = [json.loads(e.proto.spec) for e in at.get("plotly_chart") if key in e.proto.id]
    return spec


def test_the_combined_metric_bars_have_room_for_their_labels() -> None:
    """The labels past the bars' ends were cut by a 10 px right margin: every one on a phone,
    and the best subset's 0.4534 read 0.453 at 1,024 px."""
    at = _open("app_pages/correlations.py")
    figure = _figure(at, "combined-bars")
    (bars,) = figure["data"]
    assert bars["textposition"] == "outside" and bars["cliponaxis"] is False
    longest = max(len(t) for t in bars["text"])
    font = bars.get("textfont", {}).get("size", 12)  # plotly's default
    assert figure["layout"]["margin"]["r"] >= longest * font * CHAR_EM, figure["layout"]["margin"]


def test_the_heatmaps_title_fits_a_phone() -> None:
    """The title "Spearman ρ between metrics (ordered by correlation with humans)" ran past a
    390 px window; the order is said in a caption above the chart."""
    at = _open("app_pages/correlations.py")
    title = _figure(at, "spearman-heatmap")["layout"]["title"]
    assert len(title["text"]) * title["font"]["size"] * CHAR_EM <= PHONE_CHART_PX, title
    assert [c for c in at.caption if "ordered by correlation with humans" in c.value.lower()]


def test_the_labs_legend_stays_above_its_bars() -> None:
    """The legend hung from y=1.15 by its head: on a phone its three entries wrapped onto
    three rows, drawn over the bars. Anchored by its foot above the plot, it grows upwards."""
    at = _open("app_pages/perturb.py")
    legend = _figure(at, "lab-deltas-chart")["layout"]["legend"]
    assert legend.get("yanchor") == "bottom" and legend["y"] >= 1, legend


def test_the_labs_chart_grows_with_its_legend() -> None:
    """With all ten perturbations the legend took a phone's chart (some 70 px of bars were
    left): each entry past four adds a row's height."""
    from capeval_core.perturb import PERTURBATIONS
    from capeval_ui.perturb_views import LEGEND_ROW_PX, LEGEND_ROWS_FREE

    few = _figure(_open("app_pages/perturb.py"), "lab-deltas-chart")["layout"]["height"]
    every = list(PERTURBATIONS)
    at = _open("app_pages/perturb.py", lab_perturbation=every)
    height = _figure(at, "lab-deltas-chart")["layout"]["height"]
    assert height >= few + LEGEND_ROW_PX * (len(every) - LEGEND_ROWS_FREE - 1), (few, height)
