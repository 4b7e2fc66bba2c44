"""Drawing the perturbation lab's results (``capeval_core.perturb``).

User text (captions, words) only ever appears in ``st.text`` and dataframe cells, which show
it literally. Chart labels are metric keys, perturbation labels and variant names from the
registry; any other label would go through :func:`html.escape` first (plotly interprets
``<b>``, ``<a href>``, ``<br>``).
"""

from __future__ import annotations

import html
from collections.abc import Sequence

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from capeval_core.perturb import (
    PERTURBATIONS,
    BatchPerturbation,
    Perturbation,
    PerturbationScores,
    Table2,
    split_words,
)
from capeval_ui.views import key_label, token_strip

_NUMBER = st.column_config.NumberColumn(format="%.4f")
_COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2")


def label(name: str) -> str:
    """Display label of a registered perturbation (or the name itself)."""
    spec = PERTURBATIONS.get(name)
    return spec.label if spec else name


def _safe(text: str) -> str:
    return html.escape(text, quote=True)


def render_perturbation(p: Perturbation) -> None:
    """The original and perturbed words side by side, changed slots highlighted."""
    original = split_words(p.original)[0]
    perturbed = split_words(p.perturbed)[0]
    marks = {
        "original": [c.position for c in p.changed if c.kind != "insert"],
        "perturbed": [c.new_position for c in p.changed if c.new_position is not None],
    }
    st.text(f"Perturbed: {p.perturbed}")
    if original or perturbed:
        st.dataframe(
            token_strip({"original": original, "perturbed": perturbed}, marks), width="content"
        )
    st.text(f"{p.note} (seed {p.seed})")
    if p.changed:
        with st.expander("What changed"):
            st.dataframe(p.to_frame(), hide_index=True, width="stretch")


def score_frame(scores: Sequence[PerturbationScores]) -> pd.DataFrame:
    """One row per perturbation and metric: before, after, delta."""
    frames = [s.to_frame().assign(perturbation=label(s.perturbation.name)) for s in scores]
    if not frames:
        return pd.DataFrame()
    out = pd.concat(frames, ignore_index=True)
    return out[["perturbation", "key", "before", "after", "delta", "relative", "signature"]]


def render_deltas(scores: Sequence[PerturbationScores], *, key: str) -> None:
    """Every metric's score before and after, as a table and a grouped bar chart of deltas."""
    frame = score_frame(scores)
    if frame.empty:
        return
    st.dataframe(
        frame,
        hide_index=True,
        width="stretch",
        column_config={c: _NUMBER for c in ("before", "after", "delta", "relative")},
    )
    keys = list(dict.fromkeys(frame["key"]))
    fig = go.Figure()
    for i, (name, group) in enumerate(frame.groupby("perturbation", sort=False)):
        fig.add_bar(
            x=[_safe(key_label(k)) for k in group["key"]],
            y=group["delta"].tolist(),
            name=_safe(str(name)),
            marker_color=_COLOURS[i % len(_COLOURS)],
        )
    fig.update_layout(
        barmode="group",
        height=320,
        margin={"l": 10, "r": 10, "t": 30, "b": 10},
        xaxis={
            "type": "category",
            "categoryorder": "array",
            "categoryarray": [_safe(key_label(k)) for k in keys],
        },
        yaxis={"title": "after − before"},
        legend={"orientation": "h", "y": 1.15, "x": 0},
    )
    st.plotly_chart(fig, key=key, width="stretch")


def render_table2(table: Table2, *, key: str) -> None:
    """The Table 2 rows (caption vs itself, synonyms, redundancy, word order) and a chart."""
    frame = table.to_frame()
    metrics = [c for c in frame.columns if c not in ("variant", "caption")]
    st.dataframe(
        frame,
        hide_index=True,
        width="stretch",
        column_config={c: _NUMBER for c in metrics},
    )
    fig = go.Figure()
    for i, row in frame.iterrows():
        fig.add_bar(
            x=[_safe(key_label(k)) for k in metrics],
            y=[row[k] for k in metrics],
            name=_safe(str(row["variant"])),
            marker_color=_COLOURS[int(i) % len(_COLOURS)],
        )
    fig.update_layout(
        barmode="group",
        height=320,
        margin={"l": 10, "r": 10, "t": 30, "b": 10},
        xaxis={"type": "category"},
        yaxis={"title": "score against the original caption"},
        legend={"orientation": "h", "y": 1.15, "x": 0},
    )
    st.plotly_chart(fig, key=key, width="stretch")


def render_batch(result: BatchPerturbation, *, key: str) -> None:
    """Summary per metric, the distribution of score changes, and correlations with humans."""
    n_changed = int(result.changed.sum())
    st.text(
        f"{label(result.name)} on {result.source}: {n_changed} of {len(result)} candidates "
        f"changed (seed {result.seed})."
    )
    for k, msg in result.skipped.items():
        st.warning(f"{k} skipped: {msg}")
    summary = result.summary()
    st.dataframe(
        summary,
        hide_index=True,
        width="stretch",
        column_config={
            c: _NUMBER
            for c in ("mean before", "mean delta", "median delta", "std delta", "share lowered")
        },
    )
    deltas = result.deltas()
    if n_changed:
        changed = deltas[deltas["changed"]]
        fig = go.Figure()
        for i, k in enumerate(result.keys):
            fig.add_box(
                y=changed.loc[changed["key"] == k, "delta"].tolist(),
                name=_safe(key_label(k)),
                marker_color=_COLOURS[i % len(_COLOURS)],
                boxmean=True,
            )
        fig.update_layout(
            height=360,
            margin={"l": 10, "r": 10, "t": 30, "b": 10},
            yaxis={"title": "after − before (changed items)"},
            showlegend=False,
        )
        st.plotly_chart(fig, key=f"{key}-box", width="stretch")
    corr = result.correlations()
    if corr.empty:
        st.info("This dataset has no human scores, so correlations are not computed.")
        return
    st.subheader("Correlation with human scores, before and after")
    st.dataframe(
        corr,
        hide_index=True,
        width="stretch",
        column_config={c: _NUMBER for c in ("before", "after", "change")},
    )
    fig = go.Figure()
    for i, when in enumerate(("before", "after")):
        sub = corr[corr["method"] == corr["method"].iloc[0]]
        fig.add_bar(
            x=[_safe(key_label(k)) for k in sub["key"]],
            y=sub[when].tolist(),
            name=when,
            marker_color=_COLOURS[i],
        )
    fig.update_layout(
        barmode="group",
        height=300,
        margin={"l": 10, "r": 10, "t": 30, "b": 10},
        yaxis={"title": f"{corr['method'].iloc[0]} with {_safe(result.human_name or 'human')}"},
        legend={"orientation": "h", "y": 1.15, "x": 0},
    )
    st.plotly_chart(fig, key=f"{key}-corr", width="stretch")
