"""The WMD panel: where the word mass moves (Sankey), cost and flow matrices."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st
from plotly.colors import sample_colorscale

from capeval_core.metrics.wmd import Side as WMDSide
from capeval_core.metrics.wmd import WMDDetails, WMDPair
from capeval_core.results import MetricResult, SegmentScore
from capeval_ui.formats import DIGITS, label_texts, with_exact
from capeval_ui.views.common import (
    BLUE,
    INTROS,
    ORANGE,
    TERMS,
    dataframe,
    explain,
    format_number,
    plot_text,
    reference_picker,
    render_details,
)

INTROS["wmd"] = (
    "WMD (Word Mover's Distance) measures how far the candidate's words must travel, in a space "
    "of word meanings, to become the reference's words; close meanings travel little."
)
TERMS["wmd"] = (
    ("nBOW", "normalised bag of words: each kept word's share of the caption (they sum to 1)"),
    ("cost", "the distance between two word vectors"),
    (
        "flow",
        "how much of a candidate word's share moves to a reference word (the transport plan)",
    ),
    ("similarity", "exp(−WMD/σ): 1 for the same words, smaller the farther they travel"),
    (
        "stop words, OOV",
        ("very common words removed first, and words missing from the vectors (out of vocabulary)"),
    ),
)

# -- WMD --------------------------------------------------------------------------------------
#: word distance colours: pale for (almost) the same word, red for far apart
_COST_SCALE = "YlOrRd"
#: the numbers written in the cost and flow cells (plotly's automatic size shrinks to ~8 px)
HEATMAP_TEXT_PX = 14


def wmd_sankey_figure(pair: WMDPair) -> go.Figure:
    """Candidate words (left) to reference words (right): link width = mass moved, link
    colour = word distance (the cost), with a colour bar. Labels are escaped user text."""
    flows = pair.flows()
    cand, ref = pair.candidate, pair.reference
    weights = [*cand.weights, *ref.weights]
    labels = [
        f"{plot_text(w)} ({format_number(m)})"
        for w, m in zip([*cand.words, *ref.words], weights, strict=True)
    ]
    n = len(cand.words)
    source = [cand.words.index(w) for w in flows["candidate_word"]]
    target = [n + ref.words.index(w) for w in flows["reference_word"]]
    top = float(pair.cost.max()) if pair.cost.size else 1.0
    top = top if top > 0 else 1.0
    colours = sample_colorscale(_COST_SCALE, [min(c / top, 1.0) for c in flows["cost"]])
    link_colours = [c.replace("rgb(", "rgba(").replace(")", ", 0.7)") for c in colours]
    fig = go.Figure(
        go.Sankey(
            arrangement="snap",
            node={
                "label": labels,
                "color": [BLUE] * n + [ORANGE] * len(ref.words),
                "pad": 18,
                "thickness": 16,
                # the app's number rule, written here: plotly's d3 format knows no "< 0.001"
                "customdata": [with_exact(m) for m in weights],
                "hovertemplate": "%{label}: mass %{customdata}<extra></extra>",
                "line": {"width": 0},
            },
            textfont={"size": 14, "color": "#262730", "shadow": "none"},
            link={
                "source": source,
                "target": target,
                "value": [float(v) for v in flows["mass"]],
                "color": link_colours,
                "customdata": [
                    f"{plot_text(a)} → {plot_text(b)}<br>mass moved {with_exact(m)}"
                    for a, b, m in zip(
                        flows["candidate_word"], flows["reference_word"], flows["mass"], strict=True
                    )
                ],
                "hovertemplate": "%{customdata}<extra></extra>",
            },
        )
    )
    # an invisible scatter carries the colour bar of the word distances
    fig.add_scatter(
        x=[None],
        y=[None],
        mode="markers",
        marker={
            "colorscale": _COST_SCALE,
            "cmin": 0.0,
            "cmax": top,
            "color": [0.0],
            "showscale": True,
            "colorbar": {"title": {"text": "word distance"}, "thickness": 12},
        },
        hoverinfo="skip",
        showlegend=False,
    )
    fig.update_layout(
        height=max(260, 48 * max(len(cand.words), len(ref.words))),
        margin={"l": 10, "r": 10, "t": 30, "b": 10},
        xaxis={"visible": False},
        yaxis={"visible": False},
        font={"size": 13},
    )
    return fig


def matrix_figure(pair: WMDPair, matrix: np.ndarray, title: str, digits: int = DIGITS) -> go.Figure:
    """A candidate-word × reference-word heatmap with its values written in the cells by the
    app's number rule (``digits`` decimals, ``< 0.001``), the exact value on hover."""
    x = [plot_text(w) for w in pair.reference.words]
    y = [plot_text(w) for w in pair.candidate.words]
    fig = go.Figure(
        go.Heatmap(
            z=matrix,
            x=x,
            y=y,
            colorscale=_COST_SCALE if "distance" in title else "Blues",
            zmin=0.0,
            text=[label_texts(row, digits) for row in matrix],
            texttemplate="%{text}",
            customdata=[[with_exact(v, digits) for v in row] for row in matrix],
            textfont={"size": HEATMAP_TEXT_PX},
            hovertemplate=f"%{{y}} → %{{x}}<br>{title}: %{{customdata}}<extra></extra>",
            colorbar={"thickness": 10},
        )
    )
    fig.update_layout(
        title={"text": title, "font": {"size": 14}},
        height=max(240, 46 * len(y) + 130),
        margin={"l": 10, "r": 10, "t": 40, "b": 10},
        xaxis={"type": "category", "title": "reference words", "side": "bottom"},
        yaxis={"type": "category", "title": "candidate words", "autorange": "reversed"},
    )
    return fig


def side_row(name: str, side: WMDSide) -> dict[str, Any]:
    """One side's row of "Words each side keeps": kept words with their shares, removed ones."""
    return {
        "side": name,
        "words kept (share of the caption)": ", ".join(
            f"{w} {format_number(m)}" for w, m in zip(side.words, side.weights, strict=True)
        ),
        "stop words removed": " ".join(side.stopwords),
        "out of vocabulary": " ".join(side.oov),
    }


@render_details.register
def _wmd(details: WMDDetails, segment: SegmentScore, result: MetricResult, key: str) -> None:
    options = dict(result.signature.options)
    sigma = float(options.get("sigma", 1.0))
    if details.note:
        st.info(details.note, icon=":material/info:")
    if not details.pairs:
        return
    best = details.best
    d_col, s_col, r_col = st.columns(3)
    # short labels: three to a row fit side by side at 1,280 px; the help says the rest
    d_col.metric(
        "distance",
        format_number(details.distance),
        help="Word Mover's Distance to the winning reference (the closest)",
    )
    s_col.metric(
        f"similarity, σ = {sigma:g}",
        format_number(details.similarity),
        help="exp(−WMD/σ): the reported WMD score",
    )
    r_col.metric("winning reference", f"#{best + 1} of {len(details.pairs)}")
    texts = tuple((tuple(p.candidate.tokens), tuple(p.reference.tokens)) for p in details.pairs)
    chosen = reference_picker(len(details.pairs), best, "winning reference", texts, key=key)
    if chosen is None:
        return
    pair = details.pairs[chosen]
    st.text(
        f"reference #{chosen + 1}: distance {format_number(pair.distance)}, "
        f"similarity {format_number(pair.similarity)}"
    )
    if pair.note:
        st.info(f"Reference #{chosen + 1}: {pair.note}.", icon=":material/info:")
    if pair.plan.size and float(pair.plan.sum()) > 0:
        st.markdown(
            "**Where the word mass moves** (width = mass moved, colour = word distance; the "
            "numbers are each word's share of its caption, its nBOW weight)"
        )
        st.plotly_chart(wmd_sankey_figure(pair), key=f"{key}-sankey", width="stretch")
        # one above the other: side by side, two candidates' panels left each matrix a
        # quarter of the page, too narrow for its numbers
        st.plotly_chart(
            matrix_figure(pair, pair.cost, "word distance (cost)", 2),
            key=f"{key}-cost",
            width="stretch",
        )
        st.plotly_chart(
            matrix_figure(pair, pair.plan, "mass moved (flow)"),
            key=f"{key}-flow",
            width="stretch",
        )
        st.caption(
            "WMD = Σ flow × cost over every cell: the cheapest way to move the candidate's "
            "word mass onto the reference's. Rows of the flow sum to the candidate's nBOW "
            "weights, columns to the reference's."
        )
    st.markdown("**Words each side keeps**")
    frame = pd.DataFrame(
        [
            side_row("candidate", pair.candidate),
            side_row(f"reference #{chosen + 1}", pair.reference),
        ]
    )
    # short headers: a grid never wraps one, and a candidate's half of a tab is narrow
    dataframe(
        frame,
        hide_index=True,
        width="stretch",
        column_config={
            "words kept (share of the caption)": st.column_config.TextColumn(
                "words kept (share)",
                help="each content word and its share of the caption (its nBOW weight)",
            ),
            "stop words removed": st.column_config.TextColumn(
                "stop words", help="coco-caption's stop words, removed first"
            ),
            "out of vocabulary": st.column_config.TextColumn(
                "OOV", help="out of vocabulary: words without a vector, removed"
            ),
        },
    )
    st.caption(
        "Stop words (coco-caption's list) are removed first, then words missing from the "
        "vectors; what remains becomes a normalised bag of words (nBOW)."
    )
    st.markdown("**Per reference**")
    table = pd.DataFrame(
        {
            "reference": [
                f"#{p.reference_index + 1}" + (" (winner)" if i == best else "")
                for i, p in enumerate(details.pairs)
            ],
            "text": [" ".join(p.reference.tokens) for p in details.pairs],
            "distance": [p.distance for p in details.pairs],
            "similarity": [p.similarity for p in details.pairs],
            "note": [p.note for p in details.pairs],
        }
    )
    dataframe(
        table,
        hide_index=True,
        width="stretch",
        numbers=["distance", "similarity"],
    )


@explain.register
def _wmd_why(a: WMDDetails, b: WMDDetails, key: str) -> str:
    return (
        "distance the word mass travels to the closest reference (smaller: higher score): "
        f"A {format_number(a.distance)}, B {format_number(b.distance)}"
    )
