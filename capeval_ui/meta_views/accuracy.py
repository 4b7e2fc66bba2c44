"""The Pairwise accuracy and Robustness pages' drawing: accuracy per metric and category
(PASCAL-50S's HC/HI/HM/MM, or the distractor types), as a table and as bars."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from capeval_core.stats import ForcedChoiceResult
from capeval_ui.formats import format_percent
from capeval_ui.meta_views.common import COLOURS, download_csv, layout, safe
from capeval_ui.views import key_label, table

#: pixels per bar of the accuracy charts: room for a value label beside each bar
ACCURACY_BAR_PX = 22


def _accuracy_chart(frame: pd.DataFrame, groups: Sequence[str], *, key: str, title: str) -> None:
    """Accuracy per metric and group as horizontal bars, each value written beside its bar.

    Side by side vertical bars put neighbouring labels on top of each other ("77.577.5",
    issue 34); a row per bar gives every label its own line, whatever the number of groups.
    Labels and hover text are the table's own (:func:`format_percent`): plotly's d3 rounds
    a tie's exact quarter up (89.25 -> 89.3) where Python rounds it to even (89.2).
    """
    metrics = list(frame["metric"])
    fig = go.Figure()
    for i, group in enumerate(groups):
        labels = [format_percent(v) for v in frame[group]]
        fig.add_bar(
            y=metrics,
            x=frame[group],
            orientation="h",
            name=safe(group),
            marker_color=COLOURS[i % len(COLOURS)],
            text=labels,
            texttemplate="%{text}",
            hovertemplate="%{y}: %{text}<extra>" + safe(group) + "</extra>",
            textposition="outside",
            constraintext="both",
            textfont={"size": 12},
            cliponaxis=False,
        )
    bars = max(1, len(metrics) * len(groups))
    layout(
        fig,
        height=120 + ACCURACY_BAR_PX * bars,
        barmode="group",
        xaxis={"title": title, "range": [0, 112]},
        yaxis={"type": "category", "autorange": "reversed"},
    )
    st.plotly_chart(fig, key=key, width="stretch")


def keyed(frame: pd.DataFrame, keys: Sequence[str]) -> pd.DataFrame:
    """``frame`` with each row's metric key beside its label: the key the signatures file
    names it by (a label alone, "BLEU-4", matched none of its signatures).

    >>> keyed(pd.DataFrame({"metric": ["BLEU-4"], "overall": [75.0]}), ["bleu_4"]).columns.tolist()
    ['metric', 'key', 'overall']
    """
    out = frame.copy()
    out.insert(1, "key", list(keys))
    return out


def render_pairwise(
    results: Mapping[str, object],
    signatures: Mapping[str, str],
    draws_asked: int | None = None,
    about: Mapping[str, object] | None = None,
) -> None:
    """Accuracy (%) per metric and category (HC/HI/HM/MM) and overall, as table and chart.

    ``draws_asked`` is the number of draws the page asked for: when the pairs have no more
    references than are sampled, every draw is the same one and the text says so.
    """
    if not results:
        st.text("No metrics selected.")
        return
    first = next(iter(results.values()))
    cats = list(first.by_category)
    rows = []
    for key, r in results.items():
        row = {"metric": key_label(key)}
        row.update({c: 100 * v for c, v in r.by_category.items()})
        row["overall"] = 100 * r.accuracy
        rows.append(row)
    frame = pd.DataFrame(rows)
    table(frame, percents=[*cats, "overall"], key="pairwise-table")
    counts = ", ".join(f"{c}: {n:,}" for c, n in first.n_by_category.items())
    ties = f"broken at random, seed {first.seed}" if first.human_tie == "random" else "dropped"
    if draws_asked is not None and first.draws < draws_asked:
        draws = (
            f"{draws_asked} draws were asked; each pair has no more references than are "
            f"sampled, so every draw uses all of them and the {draws_asked} draws are one."
        )
    else:
        draws = f"Accuracy averaged over {first.draws} draw(s)."
    st.text(
        f"Pairs per category: {counts}. Human ties: {first.n_human_ties:,} "
        f"({ties}). Metric ties count as {first.metric_tie}. {draws}"
    )
    _accuracy_chart(frame, [*cats, "overall"], key="pairwise-bars", title="accuracy (%)")
    download_csv(
        keyed(frame, list(results)),
        signatures,
        "pairwise-accuracy.csv",
        key="pairwise-csv",
        settings=about,
    )


def render_forced_choice(
    results: Mapping[str, ForcedChoiceResult],
    signatures: Mapping[str, str],
    metric_tie: str,
    about: Mapping[str, object] | None = None,
    groups: str = "distractor type",
) -> None:
    """Forced-choice accuracy (%) per metric and distractor type (seed Table 5). ``groups``
    names what the set's groups are: ``"category"`` for a set whose pairs are grouped by
    category, as PASCAL-50S's HC/HI/HM/MM are, which are no distractor types."""
    if not results:
        st.text("No metrics selected.")
        return
    kinds = list(next(iter(results.values())).accuracy)
    rows = []
    for key, result in results.items():
        row = {"metric": key_label(key)}
        row.update({k: 100 * result.accuracy[k] for k in kinds})
        row["mean"] = float(np.mean([row[k] for k in kinds]))
        rows.append(row)
    frame = pd.DataFrame(rows)
    table(frame, percents=[*kinds, "mean"], key="robustness-table")
    first = next(iter(results.values()))
    left_out = (
        f" Left out: {first.without_correct:,} pair(s) marked a tie (no correct caption)."
        if first.without_correct
        else ""
    )
    st.text(
        f"Pairs per {groups}: "
        + ", ".join(f"{k}: {n:,}" for k, n in first.n.items())
        + f". A metric tie counts as {metric_tie}.{left_out}"
    )
    _accuracy_chart(frame, kinds, key="robustness-bars", title="correct caption preferred (%)")
    settings = {**(about or {}), "metric_tie": metric_tie}
    download_csv(
        keyed(frame, list(results)),
        signatures,
        "robustness.csv",
        key="robustness-csv",
        settings=settings,
    )
