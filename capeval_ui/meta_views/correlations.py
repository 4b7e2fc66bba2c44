"""The Correlations page's drawing: the correlation table and chart, the metric x metric
Spearman heatmap, each metric against the human scores (scatter, box and violin plots) and
the combined metric."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from capeval_core.stats import MIN_N_FOR_PVALUE, pvalue_meaningful
from capeval_ui import charts
from capeval_ui.formats import format_number, hover_texts
from capeval_ui.meta_views.common import (
    COLOURS,
    METHOD_LABELS,
    download_csv,
    layout,
    render_heatmap,
    safe,
)
from capeval_ui.views import key_label, table


def render_correlation_table(
    report: object, kendall_variant: str, signatures: Mapping, about: Mapping
) -> None:
    """Statistic, bootstrap interval, p-value per metric and method; the set's Kendall variant
    named explicitly; no p-value where too few pairs make it meaningless, and intervals that
    were not computed say why."""
    frame = report.table.copy()
    n = int(frame["n"].max()) if len(frame) else 0
    unit = "systems" if report.level == "system" else "items"
    # the page's rule, and its downloads': the signatures file says why the cells are empty
    withheld = (
        ""
        if pvalue_meaningful(n)
        else f"left empty: n = {n} {unit}, too few for a meaningful p-value "
        f"(shown from n = {MIN_N_FOR_PVALUE})"
    )
    if withheld:
        st.warning(
            f"n = {n} {unit}: too few for a meaningful p-value (shown from n = "
            f"{MIN_N_FOR_PVALUE}). The correlations stand; their bootstrap intervals "
            + (
                "resample the items within each system, so they show how far each system's "
                "mean could move."
                if report.level == "system"
                else f"over {n} items are wide, as they should be."
            ),
            icon=":material/warning:",
        )
        frame["pvalue"] = np.nan
    frame.insert(0, "metric name", [key_label(k) for k in frame["metric"]])
    kendall = frame["method"].str.startswith("kendall").to_numpy()
    frame["method"] = [METHOD_LABELS.get(m, m) for m in frame["method"]]
    level = 95
    low, high = f"{level}% CI low", f"{level}% CI high"
    frame = frame.rename(columns={"ci_low": low, "ci_high": high})
    notes = []
    for k, left_out in zip(kendall, frame["ci_left_out"], strict=True):
        why = []
        if k and not report.ci_kendall:
            why.append("no interval: bootstrap for Kendall is off")
        if left_out:  # resamples with one side's scores all equal have no correlation
            why.append(
                f"interval from {report.n_resamples - left_out:,} of {report.n_resamples:,} "
                f"resamples: {left_out:,} had one side's scores all equal"
            )
        if withheld:
            why.append(f"no p-value: n < {MIN_N_FOR_PVALUE}")
        notes.append("; ".join(why))
    frame["note"] = notes
    table(
        frame,
        numbers=("statistic", low, high, "level"),
        pvalues=("pvalue",),
        integers=("n",),
        help={"pvalue": f"shown from n = {MIN_N_FOR_PVALUE} pairs", "note": "why a cell is —"},
        # the metric's key and the level (the caption says it) stay in the data, not drawn:
        # the table fits its page at 1,280 px
        hidden=("metric", "level", "ci_left_out"),
        key="correlation-table",
    )
    intervals = "" if report.ci_kendall else " (Pearson and Spearman only: Kendall's is off)"
    over = (
        "items within systems (each system's mean recomputed per resample)"
        if report.level == "system"
        else "captions (each caption's rows drawn together)"
        if report.grouped  # type: ignore[attr-defined]
        else "items"
    )
    rows = (
        " The p-values count each row as an item, so they are too small for rows that share a "
        "caption."
        if report.grouped  # type: ignore[attr-defined]
        else ""
    )
    st.caption(
        f"{report.level.capitalize()} level. Kendall: τb corrects for ties in both variables "
        "(scipy's default); τc (Stuart's) "
        f"suits rectangular tables such as 4-point grades. This set's protocol reports "
        f"**τ{kendall_variant}**. Intervals{intervals}: percentile bootstrap over {over}, "
        f"{report.n_resamples:,} resamples, seed {report.seed}.{rows}"
    )
    settings = {**about, **report.settings()}  # type: ignore[attr-defined]
    download = report.table.copy()
    if withheld:  # the page's rule: no p-value below the threshold, and the sidecar says why
        download["pvalue"] = np.nan
        settings["pvalues"] = withheld
    download_csv(
        download, signatures, "correlations.csv", key="correlations-csv", settings=settings
    )


def render_correlation_chart(report: object) -> None:
    """Grouped bars (metric x method) with the bootstrap intervals as error bars."""
    frame = report.table
    fig = go.Figure()
    for i, method in enumerate(dict.fromkeys(frame["method"])):
        rows = frame[frame["method"] == method]
        stat = rows["statistic"].to_numpy(float)
        name = METHOD_LABELS.get(method, method)
        fig.add_bar(
            x=[key_label(k) for k in rows["metric"]],
            y=stat,
            name=name,
            marker_color=COLOURS[i % len(COLOURS)],
            # the table's text, not plotly's d3 rounding of the value
            customdata=[
                format_number(v)
                + (f", 95% CI [{format_number(lo)}, {format_number(hi)}]" if lo == lo else "")
                for v, lo, hi in zip(stat, rows["ci_low"], rows["ci_high"], strict=True)
            ],
            hovertemplate="%{x}: %{customdata}<extra>" + name + "</extra>",
            error_y={
                "type": "data",
                "symmetric": False,
                "array": np.nan_to_num(rows["ci_high"].to_numpy(float) - stat),
                "arrayminus": np.nan_to_num(stat - rows["ci_low"].to_numpy(float)),
                "thickness": 1.2,
            },
        )
    layout(
        fig,
        barmode="group",
        yaxis={"title": f"correlation with {safe(report.human_name)}"},
        xaxis={"type": "category"},
    )
    st.plotly_chart(fig, key="correlation-bars", width="stretch")


#: the longest heatmap title, in characters, that a phone's width (390 px) shows whole
HEATMAP_TITLE_CHARS = 32


def render_spearman_heatmap(report: object) -> None:
    """Metric x metric Spearman ρ, ordered by |ρ| with humans (seed Fig. 4a). The order is
    said in a caption: in the title, a plot does not wrap it and a phone cut it."""
    system = getattr(report, "level", "item") == "system"
    st.caption(
        f"Between the metrics' system means ({len(report.between)} metrics), "
        "ordered by correlation with humans."
        if system
        else "Ordered by correlation with humans."
    )
    render_heatmap(
        report.between,
        key="spearman-heatmap",
        title="Spearman ρ between system means" if system else "Spearman ρ between metrics",
        zmin=-1,
        zmax=1,
    )


def grade_bins(human: np.ndarray) -> tuple[np.ndarray, list[str]]:
    """Each item's bin and the bin names in numeric order: the human grades as they are, or
    5 quantile bins when there are more than 10 distinct values (issue 32: bins named by
    their range sort as numbers, not as text).

    >>> human = np.r_[np.linspace(1.9, 3.9, 8), [4.0] * 8, [4.5] * 8, [5.0] * 8]
    >>> codes, names = grade_bins(human)
    >>> names, names == sorted(names)
    (['1.9–3.67', '3.67–4', '4–4.5', '4.5–5'], False)
    >>> [int(c) for c in codes[[0, 7, 8, 16]]]
    [0, 1, 2, 3]
    """
    human = np.asarray(human, dtype=float)
    values = np.unique(human)
    if values.size <= 10:
        return np.searchsorted(values, human), [f"{v:g}" for v in values]
    edges = np.unique(np.quantile(human, np.linspace(0, 1, 6)))
    codes = np.clip(np.searchsorted(edges, human, side="right") - 1, 0, len(edges) - 2)
    names = [f"{edges[i]:.3g}–{edges[i + 1]:.3g}" for i in range(len(edges) - 1)]
    used = np.unique(codes)
    return np.searchsorted(used, codes), [names[i] for i in used]


def violin_span(key: str, values: np.ndarray) -> dict[str, object]:
    """How far a violin's density is drawn: a metric with known bounds (BLEU, METEOR, ...
    in [0, 1]) never past them, so no violin shows scores below 0 or above 1; other metrics
    (external ones) plotly's default.

    >>> violin_span("bleu_4", np.array([0.0, 0.2, 1.0]))
    {'spanmode': 'manual', 'span': [0.0, 1.0]}
    """
    from capeval_core.errors import UnknownKeyError
    from capeval_core.metrics import metric_class

    try:
        low, high = metric_class(key).bounds
    except UnknownKeyError:
        return {}
    finite = values[np.isfinite(values)]
    if finite.size == 0:
        return {}
    lo = max(float(finite.min()), low) if np.isfinite(low) else float(finite.min())
    hi = min(float(finite.max()), high) if np.isfinite(high) else float(finite.max())
    return {"spanmode": "manual", "span": [lo, hi]}


def render_distribution(human: np.ndarray, values: np.ndarray, key: str, human_name: str) -> None:
    """One metric's scores per human grade (seed Fig. 3): box plots (median, quartiles, mean)
    beside violin plots (the whole distribution, within the metric's bounds)."""
    codes, names = grade_bins(np.asarray(human, dtype=float))
    values = np.asarray(values, dtype=float)
    box, violin = go.Figure(), go.Figure()
    for i, grade in enumerate(names):
        mask = codes == i
        name = safe(grade)
        colour = COLOURS[i % len(COLOURS)]
        box.add_box(y=values[mask], name=name, marker_color=colour, boxmean=True, showlegend=False)
        violin.add_violin(
            y=values[mask],
            name=name,
            line_color=colour,
            box_visible=True,
            meanline_visible=True,
            points=False,
            showlegend=False,
            **violin_span(key, values[mask]),
        )
    axes = {
        "xaxis": {"title": f"human score: {safe(human_name)}", "type": "category"},
        "yaxis": {"title": key_label(key)},
    }
    left, right = st.columns(2)
    with left:
        layout(box, title={"text": "box plots", "font": {"size": 14}}, **axes)
        st.plotly_chart(box, key=f"distribution-{key}", width="stretch")
    with right:
        layout(violin, title={"text": "violin plots", "font": {"size": 14}}, **axes)
        st.plotly_chart(violin, key=f"violin-{key}", width="stretch")


#: the most points the scatter draws (a random sample beyond, seeded)
SCATTER_POINTS = 5000


def render_scatter(
    human: np.ndarray,
    values: np.ndarray,
    captions: Sequence[str],
    key: str,
    human_name: str,
    seed: int = 0,
    jitter: bool = True,
) -> None:
    """Metric score against human score, one point per item, the caption on hover. Grades
    are jittered sideways a little so equal grades do not hide each other (``jitter=False``:
    points where they are, e.g. system means)."""
    human = np.asarray(human, dtype=float)
    values = np.asarray(values, dtype=float)
    rng = np.random.default_rng(seed)
    idx = np.arange(human.size)
    if idx.size > SCATTER_POINTS:
        idx = np.sort(rng.choice(idx, SCATTER_POINTS, replace=False))
    step = np.diff(np.unique(human)).min() if np.unique(human).size > 1 else 1.0
    few = np.unique(human).size <= 10
    shift = rng.uniform(-0.15, 0.15, idx.size) * step if jitter and few else 0.0
    hover = [safe(captions[i]) for i in idx]
    fig = go.Figure(
        go.Scattergl(
            x=human[idx] + shift,
            y=values[idx],
            mode="markers",
            marker={"size": 6, "opacity": 0.55, "color": COLOURS[0]},
            customdata=np.stack([hover_texts(human[idx]), hover_texts(values[idx])], axis=1),
            hovertext=hover,
            hovertemplate="%{hovertext}<br>human %{customdata[0]}, metric "
            "%{customdata[1]}<extra></extra>",
        )
    )
    layout(
        fig,
        height=380,
        xaxis={"title": f"human score: {safe(human_name)}"},
        yaxis={"title": key_label(key)},
    )
    st.plotly_chart(fig, key=f"scatter-{key}", width="stretch")
    if idx.size < human.size:
        st.caption(f"{idx.size:,} of {human.size:,} items drawn (a random sample, seed {seed}).")


#: the widest a bar label's character is drawn (px, plotly's 12 px sans-serif digits)
LABEL_CHAR_PX = 8


def label_room(texts: Sequence[str]) -> int:
    """Pixels beside a bar's end that hold the longest of its value labels ``texts``.

    >>> label_room(["0.4534", "< 0.001"])
    68
    """
    return LABEL_CHAR_PX * max((len(t) for t in texts), default=0) + 12


def render_combined(report: object, signatures: Mapping, about: Mapping, top: int = 15) -> None:
    """Every subset of the metrics, min–max normalised and averaged, ranked."""
    rows = [
        {
            "rank": i + 1,
            "subset": " + ".join(key_label(k) for k in s.subset),
            "metrics": len(s.subset),
            "correlation": s.statistic,
            "Williams p vs best single": s.pvalue_vs_best,
            "best single metric": key_label(s.best_single),
        }
        for i, s in enumerate(report.combined)
    ]
    frame = pd.DataFrame(rows)
    if frame.empty:
        st.text("No metrics selected.")
        return
    table(
        frame,
        numbers=("correlation",),
        pvalues=("Williams p vs best single",),
        help={
            "Williams p vs best single": "one-sided: — where the subset correlates less "
            "strongly than the best single metric (or is that metric); a tie is t = 0, "
            "p = 0.5000, as in the Significance page's matrix; a Williams test "
            "takes its t's degrees of freedom from n, so it is given for few systems too, as "
            "on the Significance page"
        },
        height=min(38 + 35 * len(frame), 420),
        key="combined-table",
    )
    shown = frame.head(top).iloc[::-1]
    values = [float(v) for v in shown["correlation"]]
    labels = charts.bar_labels(values)
    fig = go.Figure(
        go.Bar(
            x=shown["correlation"],
            y=shown["subset"],
            orientation="h",
            marker_color=["#2ca02c" if m > 1 else "#1f77b4" for m in shown["metrics"]],
            hovertemplate="%{y}: %{customdata}<extra></extra>",
            **labels,
        )
    )
    layout(fig, height=80 + 28 * len(shown), xaxis={"title": "correlation with humans"})
    # each label is written past its bar's end: the right margin holds the longest (a 10 px
    # margin cut the best subset's 0.4534 to 0.453, and every label on a phone)
    fig.update_layout(margin_r=label_room(labels["text"]))
    low, high = min(0.0, *values), max(0.0, *values)
    if low < 0:  # a negative bar's label is written left of it: room before the axis' start
        fig.update_xaxes(range=[low - 0.35 * (high - low), high])
    fig.update_yaxes(type="category")
    st.plotly_chart(fig, key="combined-bars", width="stretch")
    settings = {**about, **report.settings()}  # type: ignore[attr-defined]
    download_csv(frame, signatures, "combined-metric.csv", key="combined-csv", settings=settings)
