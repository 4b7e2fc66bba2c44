"""A long caption's scene graph writes no label over another: at 98 words (some sixty
nodes) the graph drawn in a fixed 520 px wrote labels on top of each other; now the plot grows
taller until each label has its own place, at the width of a graph's half of a tab."""

from __future__ import annotations

import html
import itertools
import json
import warnings

from capeval_core import DegenerateCorpusWarning, score
from capeval_ui.views import spice_graph_figure
from capeval_ui.views.spice import GRAPH_WIDTH_PX

#: a made-up paragraph caption of 98 words
LONG = (
    "a young man in a red shirt and blue jeans is riding a brown horse along a sandy beach "
    "while two small white dogs run beside him near the calm water and a tall woman with a "
    "yellow umbrella walks on the wet sand behind a wooden fence where three children are "
    "building a large castle with green buckets and a black cat sleeps on a striped towel "
    "next to an old blue boat under a cloudy grey sky with many seagulls flying over the "
    "rocks and a red kite flies above the white lighthouse on the hill"
)
#: an average character's width (em) a sans-serif label takes at most, and the least gap (px)
CHAR_EM, GAP_PX = 0.55, 1.0


def _label_boxes(figure: dict) -> list[tuple[float, float, float, float, str]]:
    """Each label with its marker as a box in screen pixels (x right, y down), the plot
    ``GRAPH_WIDTH_PX`` wide and as tall as the figure less its margins."""
    layout = figure["layout"]
    (x0, x1), (y0, y1) = layout["xaxis"]["range"], layout["yaxis"]["range"]
    plot_h = layout["height"] - layout["margin"]["t"] - layout["margin"]["b"]
    boxes = []
    for trace in figure["data"]:
        if trace.get("mode") != "markers+text":
            continue
        font, marker = trace["textfont"]["size"], trace["marker"]["size"]
        for x, y, text in zip(trace["x"], trace["y"], trace["text"], strict=True):
            px = (x - x0) / (x1 - x0) * GRAPH_WIDTH_PX
            py = (y1 - y) / (y1 - y0) * plot_h
            shown = html.unescape(text)  # plot_text escaped it
            half = max(len(shown) * font * CHAR_EM, marker) / 2
            tall = 1.2 * font
            if trace["textposition"] == "bottom center":
                boxes.append((px - half, py - marker / 2, px + half, py + marker / 2 + tall, text))
            else:
                boxes.append((px - half, py - marker / 2 - tall, px + half, py + marker / 2, text))
    return boxes


def test_a_98_word_captions_graph_gives_every_label_its_own_place() -> None:
    assert len(LONG.split()) == 98
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateCorpusWarning)
        details = score("spice", [LONG], [["a man rides a horse on a beach"]]).segments[0].details
    graph = details.candidate_graph
    figure = json.loads(spice_graph_figure(graph, details.candidate, "candidate").to_json())
    boxes = _label_boxes(figure)
    assert len(boxes) >= 50  # objects, attributes and relations of a long caption
    touching = [
        (a[4], b[4])
        for a, b in itertools.combinations(boxes, 2)
        if a[0] < b[2] + GAP_PX
        and b[0] < a[2] + GAP_PX
        and a[1] < b[3] + GAP_PX
        and b[1] < a[3] + GAP_PX
    ]
    assert not touching, touching
    assert all(b[0] >= -0.5 and b[2] <= GRAPH_WIDTH_PX + 0.5 for b in boxes)  # none cut off
    assert figure["layout"]["height"] >= 520
