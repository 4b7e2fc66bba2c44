"""The SPICE panel: tuples, the two scene graphs, per-category F."""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd
import plotly.graph_objects as go
import streamlit as st
from pandas.io.formats.style import Styler

from capeval_core.metrics.spice import CATEGORIES as SPICE_CATEGORIES
from capeval_core.metrics.spice import GraphView, SpiceDetails, SpiceTuple
from capeval_core.results import MetricResult, SegmentScore
from capeval_ui.views.common import (
    BLUE,
    GREEN,
    INTROS,
    MATCH_STYLE,
    ORANGE,
    TERMS,
    bar_chart,
    dataframe,
    explain,
    format_number,
    panel_columns,
    plot_text,
    render_details,
)

INTROS["spice"] = (
    "SPICE turns each caption into a scene graph (objects, their attributes, and relations "
    "between them) and scores how many of these facts the candidate and the references share."
)
TERMS["spice"] = (
    (
        "tuple",
        (
            "one fact: an object (dog), an object and attribute (dog, brown) or a relation (dog, "
            "on, grass)"
        ),
    ),
    (
        "synonym match",
        "every word of the tuple shares a WordNet synonym set with the reference tuple's",
    ),
    (
        "P, R, F",
        (
            "matched candidate tuples / all candidate tuples, matched candidate tuples / all "
            "reference tuples, and their harmonic mean (SPICE 1.0 counts each candidate "
            "tuple's match, so two may match one reference tuple and R can pass 1)"
        ),
    ),
)

# -- SPICE --------------------------------------------------------------------------------------
#: row style per tuple status (readable on the light and the dark theme)
SPICE_STATUS_STYLES = {
    "exact": MATCH_STYLE,
    "matched": MATCH_STYLE,
    "synonym": "background-color: #ffe8a3; color: #3d2c00; font-weight: 600",
    "missed": "background-color: #f6d3d3; color: #4a0d0d",
}
#: node colour per tuple kind in the scene-graph figures
SPICE_KIND_COLOURS = {"object": BLUE, "attribute": ORANGE, "relation": GREEN}
#: SPICE's category names as papers print them ("Cardinality" is "Count")
SPICE_CATEGORY_LABELS = {"All": "All (SPICE)", "Cardinality": "Count"}


def _concept(strings: Sequence[str]) -> str:
    """A concept's strings (synonyms merged into one node) as one label, not escaped."""
    return "/".join(strings)


def _spice_status(tuples: Sequence[SpiceTuple]) -> dict[tuple[tuple[str, ...], ...], str]:
    """Status of each tuple, by its concepts (the first tuple wins on duplicates)."""
    out: dict[tuple[tuple[str, ...], ...], str] = {}
    for t in tuples:
        out.setdefault(t.concepts, t.status)
    return out


def _styled_by_status(frame: pd.DataFrame) -> Styler:
    """A tuple table with every row coloured by its ``status`` column."""

    def row_style(row: pd.Series) -> list[str]:
        return [SPICE_STATUS_STYLES.get(row["status"], "")] * len(row)

    return frame.style.apply(row_style, axis=1)


Point = tuple[float, float]


def spice_layout(graph: GraphView) -> tuple[list[Point], list[list[Point]], list[Point]]:
    """Positions of the objects, of each object's attributes and of each relation's label.

    Attributes and relations are laid out as nodes of their own (a relation sits between
    its subject and its object), so the labels of a merged reference graph get room instead
    of piling onto the edges. networkx's Kamada-Kawai layout is deterministic; parts of the
    graph that share no edge are kept a little apart (at half the longest path inside any
    part, so one stray object does not shrink the rest).

    The layout depends on the graph's shape only (how many attributes each object has, which
    objects each relation joins), so it is computed once per shape: the references' graph of
    a page is laid out once however often its candidate is edited (the layout was a quarter
    of an edit's work on the server; issue 42's load goal).
    """
    shape = (
        tuple(len(attributes) for _, attributes in graph.nodes),
        tuple((source, target) for source, _, target in graph.edges),
    )
    objects, attributes, relations = _shape_layout(*shape)
    return list(objects), [list(a) for a in attributes], list(relations)


@functools.lru_cache(maxsize=256)
def _shape_layout(
    n_attributes: tuple[int, ...], edges: tuple[tuple[int, int], ...]
) -> tuple[tuple[Point, ...], tuple[tuple[Point, ...], ...], tuple[Point, ...]]:
    """:func:`spice_layout` of a graph of this shape (immutable: a cached value is shared)."""
    import networkx as nx

    g = nx.Graph()
    for i, n in enumerate(n_attributes):
        g.add_node(("o", i))
        for k in range(n):
            g.add_edge(("o", i), ("a", i, k), weight=0.7)
    for e, (source, target) in enumerate(edges):
        g.add_edge(("o", source), ("r", e), weight=0.6)
        g.add_edge(("r", e), ("o", target), weight=0.6)
    dist = {a: dict(d) for a, d in nx.shortest_path_length(g, weight="weight")}
    far = max(1.5, 0.5 * max((v for d in dist.values() for v in d.values()), default=0.0))
    for a in g:
        for b in g:
            dist[a].setdefault(b, far)
    xy = nx.kamada_kawai_layout(g, dist=dist) if len(g) > 1 else dict.fromkeys(g, (0.0, 0.0))
    at = {node: (float(p[0]), float(p[1])) for node, p in xy.items()}
    objects = tuple(at[("o", i)] for i in range(len(n_attributes)))
    attributes = tuple(tuple(at[("a", i, k)] for k in range(n)) for i, n in enumerate(n_attributes))
    relations = tuple(at[("r", e)] for e in range(len(edges)))
    return objects, attributes, relations


#: the plot width (px) labels are placed for: a graph's half of the SPICE tab in a 1,280 px
#: window (a 402 px chart less its margins; wider only spreads them more). At 560 px, more
#: than the chart gets there, the labels at either side were cut off
GRAPH_WIDTH_PX = 380
#: the plot's height (px) before labels that would touch push it taller
GRAPH_HEIGHT_PX = 430
#: the figure's margins above (title) and below (legend) the plot
GRAPH_MARGIN_TOP, GRAPH_MARGIN_BOTTOM = 40, 50
#: label font and marker sizes (px) per kind
LABEL_FONT_PX = {"object": 14, "attribute": 13, "relation": 13}
MARKER_PX = {"object": 16, "attribute": 11, "relation": 11}
#: a generous average character width (em) of the sans-serif font, and the gap kept between
#: two labels (px)
_CHAR_EM, _LABEL_GAP_PX = 0.62, 4.0

Box = tuple[float, float, float, float]


@dataclass(frozen=True)
class LabelledLayout:
    """:func:`spice_layout` in pixels with room for every label: positions (x right, y up,
    as the figure draws them), each node's box (label and marker, screen pixels: x0, y0, x1,
    y1 with y down) in the order objects, attributes, relations, and the plot's height."""

    objects: tuple[Point, ...]
    attributes: tuple[tuple[Point, ...], ...]
    relations: tuple[Point, ...]
    boxes: tuple[Box, ...]
    height_px: float


def _box(x: float, y: float, text: str, kind: str) -> Box:
    """The screen box of a marker at (x, y) and its label: above it, a relation's below."""
    font, marker = LABEL_FONT_PX[kind], MARKER_PX[kind]
    half = max(len(text) * font * _CHAR_EM, marker) / 2
    tall = 1.3 * font
    if kind == "relation":
        return (x - half, y - marker / 2, x + half, y + marker / 2 + tall)
    return (x - half, y - marker / 2 - tall, x + half, y + marker / 2)


def _overlap(a: Box, b: Box) -> bool:
    gap = _LABEL_GAP_PX
    return a[0] < b[2] + gap and b[0] < a[2] + gap and a[1] < b[3] + gap and b[1] < a[3] + gap


def spice_label_layout(graph: GraphView, width_px: float = GRAPH_WIDTH_PX) -> LabelledLayout:
    """Where each node and its label go on a plot ``width_px`` wide: :func:`spice_layout`'s
    places scaled to pixels, then, from the top down, a node whose label would touch one
    already placed moves down below it. A long caption's graph (98 words: some sixty nodes)
    grows taller instead of writing its labels over each other.

    >>> from capeval_core.metrics.spice import GraphView
    >>> g = GraphView(((("man",), (("tall",),)), (("horse",), ())), ((0, ("ride",), 1),))
    >>> laid = spice_label_layout(g)
    >>> len(laid.boxes), laid.height_px >= GRAPH_HEIGHT_PX
    (4, True)
    """
    objects, attributes, relations = spice_layout(graph)
    nodes: list[tuple[Point, str, str]] = []
    nodes += [(objects[i], _concept(obj), "object") for i, (obj, _) in enumerate(graph.nodes)]
    for i, (_, attrs) in enumerate(graph.nodes):
        nodes += [(p, _concept(a), "attribute") for p, a in zip(attributes[i], attrs, strict=True)]
    nodes += [
        (p, _concept(r), "relation") for p, (_, r, _) in zip(relations, graph.edges, strict=True)
    ]
    if not nodes:
        return LabelledLayout((), (), (), (), float(GRAPH_HEIGHT_PX))
    xs, ys = [p[0] for p, _, _ in nodes], [p[1] for p, _, _ in nodes]
    x_span, y_span = (max(xs) - min(xs)) or 1.0, (max(ys) - min(ys)) or 1.0
    top = 1.3 * max(LABEL_FONT_PX.values()) + max(MARKER_PX.values())  # the highest label's room
    placed: dict[int, Box] = {}
    at: dict[int, Point] = {}
    # from the top of the graph down (screen y grows downwards)
    order = sorted(range(len(nodes)), key=lambda k: (-nodes[k][0][1], nodes[k][0][0]))
    done: list[Box] = []
    for k in order:
        (x, y), text, kind = nodes[k]
        half = _box(0.0, 0.0, text, kind)[2]
        sx = (x - min(xs)) / x_span * width_px
        sx = min(max(sx, half), max(width_px - half, half))  # the label inside the plot
        sy = top + (max(ys) - y) / y_span * (GRAPH_HEIGHT_PX - 2 * top)
        box = _box(sx, sy, text, kind)
        while clash := [b for b in done if _overlap(box, b)]:
            sy += max(b[3] for b in clash) + _LABEL_GAP_PX + 0.5 - box[1]
            box = _box(sx, sy, text, kind)
        done.append(box)
        placed[k], at[k] = box, (sx, -sy)
    height = float(max(GRAPH_HEIGHT_PX, math.ceil(max(b[3] for b in done) + _LABEL_GAP_PX)))
    points = [at[k] for k in range(len(nodes))]
    n_obj = len(graph.nodes)
    cursor = iter(points[n_obj : n_obj + sum(len(a) for a in attributes)])
    return LabelledLayout(
        tuple(points[:n_obj]),
        tuple(tuple(next(cursor) for _ in a) for a in attributes),
        tuple(points[len(nodes) - len(relations) :]),
        tuple(placed[k] for k in range(len(nodes))),
        height,
    )


def spice_graph_figure(graph: GraphView, tuples: Sequence[SpiceTuple], title: str) -> go.Figure:
    """One scene graph laid out by :func:`spice_label_layout`, a relation's label on the bent
    edge from its subject to its object (arrow towards the object). Colour = kind (object,
    attribute, relation); a filled marker = the tuple matched, an open one = missed.

    Every word is escaped user text (:func:`plot_text`).
    """
    status = _spice_status(tuples)
    laid = spice_label_layout(graph)
    pos, attribute_pos, relation_pos = laid.objects, laid.attributes, laid.relations
    # (kind, matched) -> x, y, label, hover
    points: dict[tuple[str, bool], tuple[list, list, list, list]] = {}

    def add(kind: str, key: tuple, x: float, y: float, label: str, what: str) -> None:
        state = status.get(key, "missed")
        matched = state != "missed"
        xs, ys, labels, hovers = points.setdefault((kind, matched), ([], [], [], []))
        xs.append(x)
        ys.append(y)
        labels.append(plot_text(label))
        hovers.append(f"{kind}: {what}<br>{state}")

    fig = go.Figure()
    for i, (obj, attributes) in enumerate(graph.nodes):
        x, y = pos[i]
        add("object", (obj,), x, y, _concept(obj), plot_text(_concept(obj)))
        for attribute, (ax, ay) in zip(attributes, attribute_pos[i], strict=True):
            fig.add_scatter(
                x=[x, ax],
                y=[y, ay],
                mode="lines",
                line={"color": "rgba(255, 127, 14, 0.35)", "width": 1, "dash": "dot"},
                hoverinfo="skip",
                showlegend=False,
            )
            add(
                "attribute",
                (obj, attribute),
                ax,
                ay,
                _concept(attribute),
                f"{plot_text(_concept(obj))} is {plot_text(_concept(attribute))}",
            )

    for (source, relation, target), (mx, my) in zip(graph.edges, relation_pos, strict=True):
        (x0, y0), (x1, y1) = pos[source], pos[target]
        fig.add_scatter(
            x=[x0, mx, x1],
            y=[y0, my, y1],
            mode="lines",
            line={"color": "rgba(44, 160, 44, 0.45)", "width": 1.5},
            hoverinfo="skip",
            showlegend=False,
        )
        if source != target:  # arrow head on the half towards the relation's object
            fig.add_annotation(
                x=mx + 0.6 * (x1 - mx),
                y=my + 0.6 * (y1 - my),
                ax=mx,
                ay=my,
                xref="x",
                yref="y",
                axref="x",
                ayref="y",
                text="",
                showarrow=True,
                arrowhead=2,
                arrowsize=1.2,
                arrowwidth=1.5,
                arrowcolor="rgba(44, 160, 44, 0.8)",
            )
        subject, obj = graph.nodes[source][0], graph.nodes[target][0]
        add(
            "relation",
            (subject, relation, obj),
            mx,
            my,
            _concept(relation),
            f"{plot_text(_concept(subject))} → {plot_text(_concept(relation))} → "
            f"{plot_text(_concept(obj))}",
        )

    for kind in ("object", "attribute", "relation"):
        for matched in (True, False):
            if (kind, matched) not in points:
                continue
            xs, ys, labels, hovers = points[(kind, matched)]
            colour = SPICE_KIND_COLOURS[kind]
            fig.add_scatter(
                x=xs,
                y=ys,
                mode="markers+text",
                text=labels,
                textposition="top center" if kind != "relation" else "bottom center",
                textfont={"size": 14 if kind == "object" else 13, "color": colour},
                marker={
                    "size": 16 if kind == "object" else 11,
                    "symbol": {"object": "circle", "attribute": "square", "relation": "diamond"}[
                        kind
                    ]
                    + ("" if matched else "-open"),
                    "color": colour,
                    "line": {"width": 2, "color": colour},
                },
                hovertext=hovers,
                hoverinfo="text",
                name=f"{kind} ({'matched' if matched else 'missed'})",
            )
    # one unit a pixel: the plot is as tall as its labels need (a long caption's graph grows)
    fig.update_layout(
        title={"text": title, "font": {"size": 15}},
        height=int(laid.height_px) + GRAPH_MARGIN_TOP + GRAPH_MARGIN_BOTTOM,
        margin={"l": 10, "r": 10, "t": GRAPH_MARGIN_TOP, "b": GRAPH_MARGIN_BOTTOM},
        xaxis={"visible": False, "range": [0, GRAPH_WIDTH_PX], "fixedrange": True},
        yaxis={"visible": False, "range": [-laid.height_px, 0], "fixedrange": True},
        legend={"orientation": "h", "y": -0.02, "x": 0, "yanchor": "top", "font": {"size": 12}},
        showlegend=True,
    )
    return fig


def _dash(value: float) -> str:
    """A score as the cards write it, or "—" for NaN (no such tuple in the references)."""
    return format_number(value)


#: the candidate tuples' column naming the reference tuple each one matched
MATCH_COLUMN = "first matching reference tuple"


def _spice_tuple_frame(
    tuples: Sequence[SpiceTuple], matches: Sequence[SpiceTuple] = ()
) -> pd.DataFrame:
    rows = []
    for t in tuples:
        row = {"tuple": str(t), "kind": t.kind, "status": t.status}
        if matches:
            row[MATCH_COLUMN] = "" if t.match is None else str(matches[t.match])
        rows.append(row)
    columns = ["tuple", "kind", "status"] + ([MATCH_COLUMN] if matches else [])
    return pd.DataFrame(rows, columns=columns)


@render_details.register
def _spice(details: SpiceDetails, segment: SegmentScore, result: MetricResult, key: str) -> None:
    total = details.categories["All"]
    p_col, r_col, f_col = st.columns(3)
    # short labels: three to a row fit side by side at 1,280 px; the help says the rest
    p_col.metric("P", format_number(total.precision), help="candidate tuples matched")
    r_col.metric(
        "R", format_number(total.recall), help="matched candidate tuples / reference tuples"
    )
    f_col.metric("SPICE = F", format_number(total.f), help="P and R combined (F1)")
    st.caption(
        f"{total.tp} of {len(details.candidate)} candidate tuple(s) match a tuple of the "
        f"references' merged scene graph ({total.tp + total.fn} tuples): P = tp / (tp + fp), "
        "R = tp / (tp + fn), F = 2PR / (P + R). A tuple matches when every element shares a "
        "word or a WordNet synset with the same element of a reference tuple; a reference "
        "tuple is marked matched when it is some candidate tuple's match, as the jar marks it."
        + (
            f" R passes 1 here: SPICE 1.0 matches each candidate tuple on its own (no one-to-one "
            f"matching), and {total.tp} candidate tuples matched the {total.tp + total.fn} "
            "reference tuple(s), some the same one (the jar gives this value too)."
            if total.fn < 0
            else ""
        )
    )

    st.markdown("**Scene graphs** (filled: the tuple matched; open: missed; hover for details)")
    left, right = panel_columns(2)
    with left:
        st.plotly_chart(
            spice_graph_figure(details.candidate_graph, details.candidate, "candidate"),
            key=f"{key}-candidate-graph",
            width="stretch",
        )
    with right:
        st.plotly_chart(
            spice_graph_figure(
                details.reference_graph, details.reference, "references (one merged graph)"
            ),
            key=f"{key}-reference-graph",
            width="stretch",
        )

    st.markdown("**Tuples** (green: exact string match; yellow: synonym only; red: missed)")
    left, right = panel_columns(2)
    with left:
        st.caption("Candidate tuples")
        dataframe(
            _styled_by_status(_spice_tuple_frame(details.candidate, details.reference)),
            hide_index=True,
            width="stretch",
            # a short header: a grid never wraps one, and a half of a tab is narrow
            column_config={
                MATCH_COLUMN: st.column_config.TextColumn(
                    "first match", help="the first reference tuple this tuple matches"
                )
            },
        )
    with right:
        st.caption("Reference tuples (all references merged)")
        dataframe(
            _styled_by_status(_spice_tuple_frame(details.reference)),
            hide_index=True,
            width="stretch",
        )

    st.markdown("**Per category** (— where the references have no tuple of the category)")
    labels = [SPICE_CATEGORY_LABELS.get(c, c) for c in SPICE_CATEGORIES]
    cats = [details.categories[c] for c in SPICE_CATEGORIES]
    frame = pd.DataFrame(
        {
            "category": labels,
            "tp": [c.tp for c in cats],
            "fp": [c.fp for c in cats],
            "fn": [c.fn for c in cats],
            # text cells: the grid would show NaN as "None"
            "P": [_dash(c.precision) for c in cats],
            "R": [_dash(c.recall) for c in cats],
            "F": [_dash(c.f) for c in cats],
        }
    )
    left, right = panel_columns([3, 2])
    with left:
        dataframe(
            frame,
            hide_index=True,
            width="stretch",
        )
    with right:
        bar_chart(labels[1:], {"F": [c.f for c in cats[1:]]}, "F", key=f"{key}-chart")


@explain.register
def _spice_why(a: SpiceDetails, b: SpiceDetails, key: str) -> str:
    def tuples(d: SpiceDetails) -> str:
        t = d.categories["All"]
        p, r = _dash(t.precision), _dash(t.recall)
        return f"{t.tp} of {len(d.candidate)} tuples match (P {p}, R {r})"

    return f"scene-graph tuples: A {tuples(a)}; B {tuples(b)}"
