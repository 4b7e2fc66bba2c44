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
from plotly.colors import qualitative

from capeval_core.perturb import (
    PERTURBATIONS,
    BatchPerturbation,
    Perturbation,
    PerturbationScores,
    Table2,
    split_words,
)
from capeval_ui import charts
from capeval_ui.formats import format_number, hover_texts, literal
from capeval_ui.meta_views.common import METHOD_LABELS
from capeval_ui.views import key_label, show_tokens, signature_block, table, token_strip

#: one colour per series, distinct for all eleven perturbations at once (24 colours)
COLOURS: tuple[str, ...] = tuple(qualitative.Dark24)
#: perturbed captions listed as examples in batch mode
BATCH_EXAMPLES = 8


def label(name: str) -> str:
    """Display label of a registered perturbation (or the name itself)."""
    spec = PERTURBATIONS.get(name)
    return spec.label if spec else name


def _safe(text: str) -> str:
    return html.escape(text, quote=True)


def changes_frame(p: Perturbation) -> pd.DataFrame:
    """What changed, word by word, with word numbers counted from 1 (as a reader counts)."""
    rows = []
    for c in p.changed:
        if c.kind == "move":
            what = f"moved from word {c.position + 1} to word {c.new_position + 1}"  # type: ignore[operator]
            rows.append({"change": "move", "word": c.old, "now": c.new, "where": what})
        elif c.kind == "insert":
            where = f"inserted as word {c.new_position + 1}"  # type: ignore[operator]
            rows.append({"change": "insert", "word": "", "now": c.new, "where": where})
        elif c.kind == "delete":
            rows.append(
                {"change": "delete", "word": c.old, "now": "", "where": f"word {c.position + 1}"}
            )
        else:
            rows.append(
                {"change": c.kind, "word": c.old, "now": c.new, "where": f"word {c.position + 1}"}
            )
    return pd.DataFrame(rows, columns=["change", "word", "now", "where"])


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
        show_tokens(token_strip({"original": original, "perturbed": perturbed}, marks))
    st.text(f"{p.note} (seed {p.seed})")
    if p.changed:
        with st.expander("What changed"):
            table(changes_frame(p), key=f"changes-{p.name}")


def score_frame(scores: Sequence[PerturbationScores]) -> pd.DataFrame:
    """One row per perturbation and metric: before, after, delta."""
    frames = [s.to_frame().assign(perturbation=label(s.perturbation.name)) for s in scores]
    if not frames:
        return pd.DataFrame()
    out = pd.concat(frames, ignore_index=True)
    return out[["perturbation", "key", "before", "after", "delta", "relative", "signature"]]


#: legend entries a chart's height leaves room for, and what each entry past them adds: on a
#: phone the legend takes a row per entry, above the plot, out of the chart's height (ten
#: perturbations left the plot some 70 px)
LEGEND_ROWS_FREE, LEGEND_ROW_PX = 4, 30


def _bar_layout(fig: go.Figure, y_title: str, height: int = 320, entries: int = 0) -> None:
    fig.update_layout(
        barmode="group",
        height=height + LEGEND_ROW_PX * max(0, entries - LEGEND_ROWS_FREE),
        margin={"l": 10, "r": 10, "t": 30, "b": 10},
        yaxis={"title": y_title},
        # anchored by its foot just above the plot, the legend grows upwards (plotly widens
        # the top margin for it): anchored by its head at y=1.15, three entries wrapped on a
        # phone's width hung down over the bars
        legend={"orientation": "h", "y": 1.02, "yanchor": "bottom", "x": 0},
    )
    charts.readable(fig)


def _scaled_bars(
    fig: go.Figure, series: Sequence[tuple[str, dict[str, float]]], y_title: str
) -> list[str]:
    """Grouped bars, one series per name (metric key -> value), each metric on the axis of
    its scale (CIDEr-D's 0–10 on its own, right-hand axis: on one axis with the 0–1 metrics
    it flattens them, issue 42); returns the x categories in order."""
    keys = list(dict.fromkeys(k for _, values in series for k in values))
    groups = charts.scale_groups(keys)
    for i, (name, values) in enumerate(series):
        for g, (_, group) in enumerate(groups):
            shown = [k for k in group if k in values]
            fig.add_bar(
                x=[_safe(key_label(k)) for k in shown],
                y=[values[k] for k in shown],
                name=_safe(name),
                marker_color=COLOURS[i % len(COLOURS)],
                offsetgroup=str(i),
                legendgroup=str(i),
                showlegend=g == 0,
                yaxis=charts.axis_of(g),
                customdata=hover_texts(values[k] for k in shown),
                hovertemplate="%{x}: %{customdata}<extra>" + _safe(name) + "</extra>",
            )
    titles = _axis_titles(groups, y_title)
    charts.scaled_axes(
        fig,
        [
            (scale, [v for _, values in series for k, v in values.items() if k in group], title)
            for (scale, group), title in zip(groups, titles, strict=True)
        ],
    )
    return [_safe(key_label(k)) for _, group in groups for k in group]


def _axis_titles(groups: Sequence[tuple[float, Sequence[str]]], y_title: str) -> list[str]:
    """One title per axis: the quantity, and the metrics and range when there are two."""
    if len(groups) < 2:
        return [y_title]
    return [
        f"{y_title}: {charts.scale_title(scale, keys, [key_label(k) for k in keys])}"
        for scale, keys in groups
    ]


def render_deltas(scores: Sequence[PerturbationScores], *, key: str) -> None:
    """Every metric's score before and after, as a table and a grouped bar chart of deltas
    (CIDEr-D on an axis of its own)."""
    frame = score_frame(scores)
    if frame.empty:
        return
    table(
        _named_metrics(frame, at=2),
        numbers=("before", "after"),
        signed=("delta", "relative"),
        help={"relative": "(after − before) / before; — where before reads as 0"},
        hidden=("key", "signature"),
        key=f"{key}-table",
    )
    signature_block(dict(zip(frame["key"], frame["signature"], strict=True)))
    fig = go.Figure()
    series = [
        (str(name), dict(zip(group["key"], group["delta"], strict=True)))
        for name, group in frame.groupby("perturbation", sort=False)
    ]
    _bar_layout(fig, "after − before", entries=len(series))
    order = _scaled_bars(fig, series, "after − before")
    fig.update_xaxes(type="category", categoryorder="array", categoryarray=order)
    st.plotly_chart(fig, key=key, width="stretch")


def render_table2(table2: Table2, *, key: str) -> None:
    """The Table 2 rows (caption vs itself, synonyms, redundancy, word order) and a chart
    (CIDEr-D on an axis of its own)."""
    frame = table2.to_frame()
    metrics = [c for c in frame.columns if c not in ("variant", "caption")]
    variants = list(frame["variant"])
    table(frame[["variant", "caption"]], key=f"{key}-captions")
    # a metric per row, a variant per column: eleven metric columns ran past the page
    scores = frame.set_index("variant")[metrics].T.reset_index(names="key")
    scores.insert(1, "metric", [key_label(k) for k in scores["key"]])
    table(scores, numbers=variants, hidden=("key",), key=f"{key}-table")
    fig = go.Figure()
    series = [(str(row["variant"]), {k: row[k] for k in metrics}) for _, row in frame.iterrows()]
    _bar_layout(fig, "score against the original caption", entries=len(series))
    order = _scaled_bars(fig, series, "score against the original caption")
    fig.update_xaxes(type="category", categoryorder="array", categoryarray=order)
    st.plotly_chart(fig, key=key, width="stretch")


def _named_metrics(frame: pd.DataFrame, at: int = 1) -> pd.DataFrame:
    """``frame`` with a ``metric`` column at ``at``: each key by the name the examples beside
    it and every other page use (BLEU-4, not bleu_4); the key stays in the data."""
    shown = frame.copy()
    shown.insert(at, "metric", [key_label(k) for k in frame["key"]])
    return shown


def examples_frame(result: BatchPerturbation, n: int = BATCH_EXAMPLES) -> pd.DataFrame:
    """The first ``n`` changed items in row order, each named by its dataset's id (a COCO
    image id, a judgment set's item id): the caption before and after, and each metric's
    change."""
    rows = []
    ids = result.item_ids
    for i, p in enumerate(result.perturbations):
        if not p.is_changed:
            continue
        row = {"item": ids[i], "original": p.original, "perturbed": p.perturbed}
        row.update({key_label(k): result.after[k][i] - result.before[k][i] for k in result.keys})
        rows.append(row)
        if len(rows) >= n:
            break
    columns = ["item", "original", "perturbed", *(key_label(k) for k in result.keys)]
    return pd.DataFrame(rows, columns=columns)


def render_batch(result: BatchPerturbation, *, key: str) -> None:
    """Summary per metric, example captions, the distribution of score changes, and
    correlations with humans."""
    n_changed = int(result.changed.sum())
    st.text(
        f"{label(result.name)} on {result.source}: {n_changed:,} of {len(result):,} candidates "
        f"changed (seed {result.seed})."
    )
    for k, msg in result.skipped.items():
        st.warning(f"{k} skipped: {literal(msg)}")
    summary = result.summary()
    table(
        _named_metrics(summary),
        numbers=("mean before", "std delta"),
        signed=("mean delta", "median delta"),
        shares=("share lowered",),
        integers=("n changed",),
        hidden=("key", "signature"),
        key=f"{key}-summary",
    )
    if "signature" in summary.columns:
        signature_block(dict(zip(summary["key"], summary["signature"], strict=True)))
    if n_changed:
        st.markdown(f"**Examples** (the first {min(n_changed, BATCH_EXAMPLES)} changed captions)")
        examples = examples_frame(result)
        table(
            examples,
            signed=[key_label(k) for k in result.keys],
            widths={"original": "large", "perturbed": "large"},
            key=f"{key}-examples",
        )
    deltas = result.deltas()
    if n_changed:
        changed = deltas[deltas["changed"]]
        fig = go.Figure()
        groups = charts.scale_groups(list(result.keys))
        drawn: list[tuple[float, list[float], str]] = []
        titles = _axis_titles(groups, "after − before (changed items)")
        for g, ((scale, group), title) in enumerate(zip(groups, titles, strict=True)):
            values: list[float] = []
            for k in group:
                ys = changed.loc[changed["key"] == k, "delta"].tolist()
                values += ys
                fig.add_box(
                    y=ys,
                    name=_safe(key_label(k)),
                    marker_color=COLOURS[list(result.keys).index(k) % len(COLOURS)],
                    boxmean=True,
                    yaxis=charts.axis_of(g),
                )
            drawn.append((scale, values, title))
        _bar_layout(fig, titles[0], height=360)
        charts.scaled_axes(fig, drawn)
        fig.update_layout(showlegend=False)
        st.plotly_chart(fig, key=f"{key}-box", width="stretch")
    corr = result.correlations()
    if corr.empty:
        st.info("This dataset has no human scores, so correlations are not computed.")
        return
    st.subheader("Correlation with human scores, before and after")
    method = corr["method"].iloc[0]
    sub = corr[corr["method"] == method]
    table(
        _named_metrics(corr.assign(method=[METHOD_LABELS.get(m, m) for m in corr["method"]])),
        numbers=("before", "after"),
        signed=("change",),
        hidden=("key",),
        key=f"{key}-corr-table",
    )
    fig = go.Figure()
    for i, when in enumerate(("before", "after")):
        fig.add_bar(
            x=[_safe(key_label(k)) for k in sub["key"]],
            y=sub[when].tolist(),
            name=when,
            marker_color=COLOURS[i],
            customdata=[format_number(v) for v in sub[when]],  # as the table writes it
            hovertemplate="%{x}: %{customdata}<extra>" + when + "</extra>",
        )
    name = METHOD_LABELS.get(method, method)
    _bar_layout(fig, f"{name} with {_safe(result.human_name or 'human')}", height=300)
    st.plotly_chart(fig, key=f"{key}-corr", width="stretch")
