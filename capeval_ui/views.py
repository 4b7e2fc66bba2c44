"""Drawing results: one render function per details type, plus the shared tables.

``render_details`` dispatches on the class of a segment's details (``functools.singledispatch``)
so a new metric adds one registered function here and no page changes (house style, "Pages
stay thin"). Unknown details fall back to the segment's scores.

User text (captions, tokens, n-grams) is only ever shown through ``st.text``, ``st.code``,
widget values and dataframe cells, which display text literally. It never goes into markdown
(which interprets ``*``, ``_``, ``[..](..)``, ``$``) and never into HTML. Plotly interprets
``<b>``, ``<a href>``, ``<br>`` in text, labels and hover text, so a word drawn in a figure
always goes through :func:`plot_text` (``html.escape``) first.
"""

from __future__ import annotations

import functools
import html
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st
from pandas.io.formats.style import Styler
from plotly.colors import sample_colorscale
from streamlit.errors import StreamlitPageNotFoundError

from capeval_core.metrics import METRICS, metric_class
from capeval_core.metrics.bleu import BleuDetails
from capeval_core.metrics.cider import CiderCorpusDetails, CiderDetails
from capeval_core.metrics.i2ce import I2CEDetails
from capeval_core.metrics.mean import MeanDetails
from capeval_core.metrics.meteor import MODULES, MeteorAlignment, MeteorDetails
from capeval_core.metrics.ngrams import ngram_counts
from capeval_core.metrics.rouge import RougeDetails
from capeval_core.metrics.spice import CATEGORIES as SPICE_CATEGORIES
from capeval_core.metrics.spice import GraphView, SpiceDetails, SpiceTuple
from capeval_core.metrics.wmd import Side as WMDSide
from capeval_core.metrics.wmd import WMDDetails, WMDPair
from capeval_core.resources import ResourceInfo
from capeval_core.results import MetricResult, SegmentScore

#: cell style of a matched token (readable on the light and the dark theme)
MATCH_STYLE = "background-color: #b7e4c7; color: #081c15; font-weight: 600"
_BLUE, _ORANGE, _GREEN = "#1f77b4", "#ff7f0e", "#2ca02c"
_NUMBER = st.column_config.NumberColumn(format="%.4f")
#: metrics per row of the summary; more would truncate the values on a laptop screen
SUMMARY_PER_ROW = 5
#: BLEU's ``effective_length`` option, in words
_REF_LENGTH = {
    "closest": "the reference length closest to c",
    "shortest": "the shortest reference",
    "average": "the mean reference length",
}


# -- shared pieces ---------------------------------------------------------------------------
def key_label(key: str) -> str:
    """Display name of a reported key: ``bleu_2`` -> "BLEU-2", ``cider_d`` -> "CIDEr-D"."""
    return metric_class(key).label(key)


def _direction(higher_is_better: bool) -> str:
    return "higher is better" if higher_is_better else "lower is better"


def _range(bounds: tuple[float, float]) -> str:
    return f"{bounds[0]:g} – {bounds[1]:g}"


def _order_radio(orders: list[int], key: str) -> int | None:
    """The n-gram order picker shared by the BLEU and CIDEr-D panels."""
    return st.radio(
        "n-gram order",
        orders,
        horizontal=True,
        format_func=lambda n: f"{n}-grams",
        key=f"{key}-order",
    )


def _bar_chart(
    x: Sequence[str], series: Mapping[str, Sequence[float]], y_title: str, *, key: str
) -> None:
    """A small grouped bar chart; ``x`` and series names must not be user text."""
    colours = [_BLUE, _ORANGE, _GREEN]
    # value labels only while they fit above the bars
    labelled = len(series) * len(x) <= 8
    fig = go.Figure()
    for i, (name, values) in enumerate(series.items()):
        fig.add_bar(
            x=list(x),
            y=[None if v is None or math.isnan(v) else v for v in values],
            name=name,
            marker_color=colours[i % len(colours)],
            texttemplate="%{y:.3f}" if labelled else None,
            textposition="outside" if labelled else "none",
            cliponaxis=False,
        )
    fig.update_layout(
        barmode="group",
        height=280,
        margin={"l": 10, "r": 10, "t": 30, "b": 10},
        xaxis={"type": "category"},
        yaxis={"title": y_title, "rangemode": "tozero"},
        legend={"orientation": "h", "y": 1.15, "x": 0},
        showlegend=len(series) > 1,
    )
    st.plotly_chart(fig, key=key, width="stretch")


def token_strip(rows: Mapping[str, Sequence[str]], marks: Mapping[str, Iterable[int]]) -> Styler:
    """Tokens as table cells, one row per sentence, matched positions highlighted.

    A dataframe shows each token literally, so markup in a caption stays text.
    """
    width = max((len(t) for t in rows.values()), default=0) or 1
    data = [[*tokens, *([""] * (width - len(tokens)))] for tokens in rows.values()]
    frame = pd.DataFrame(data, index=list(rows), columns=[str(i + 1) for i in range(width)])
    styles = pd.DataFrame("", index=frame.index, columns=frame.columns)
    for row, positions in marks.items():
        r = frame.index.get_loc(row)
        for p in positions:
            styles.iat[r, p] = MATCH_STYLE
    return frame.style.apply(lambda _: styles, axis=None)


def _show_tokens(styler: Styler) -> None:
    st.dataframe(styler, width="content")


# -- page-level views ------------------------------------------------------------------------
def page_link(page: str, label: str, icon: str) -> None:
    """``st.page_link`` that degrades to a hint when the page runs without the router.

    A page file run on its own (``streamlit run app_pages/home.py`` or AppTest) has no
    navigation, so Streamlit cannot resolve links to the other pages.
    """
    try:
        st.page_link(page, label=label, icon=icon)
    except StreamlitPageNotFoundError:
        st.info(f"{label}: start the whole app (`streamlit run app.py`) to open it.")


def input_problems(candidate: str, references: Sequence[str]) -> list[str]:
    """What is missing from the Compare form, as messages for ``st.error``."""
    problems = []
    if not candidate.strip():
        problems.append("Enter a candidate caption to score.")
    if not references:
        problems.append("Enter at least one reference caption (one per line).")
    return problems


def split_lines(text: str) -> tuple[str, ...]:
    """One caption per non-blank line, surrounding spaces removed."""
    return tuple(line.strip() for line in text.splitlines() if line.strip())


def render_inventory(items: Sequence[ResourceInfo]) -> None:
    """The resource inventory as a table, with a notice for anything missing."""
    frame = pd.DataFrame(
        [
            {
                "resource": i.name,
                "available": i.available,
                "version": i.version or "—",
                "detail": i.detail,
            }
            for i in items
        ]
    )
    st.dataframe(
        frame,
        hide_index=True,
        width="stretch",
        column_config={"available": st.column_config.CheckboxColumn()},
    )
    for item in items:
        if not item.available:
            st.warning(f"{item.name}: {item.detail}")


def render_registry() -> None:
    """Every registered metric (key, name, reported keys, range, direction) and its card."""
    frame = pd.DataFrame(
        [
            {
                "key": key,
                "name": cls.name,
                "reports": ", ".join(cls.report_keys()),
                "range": _range(cls.bounds),
                "direction": _direction(cls.higher_is_better),
            }
            for key, cls in METRICS.items()
        ]
    )
    st.dataframe(frame, hide_index=True, width="stretch")
    for key, cls in METRICS.items():
        with st.expander(f"{cls.name} — metric card"):
            render_card(key)


def render_card(key: str) -> None:
    """A metric's card (markdown shipped with the package, not user text)."""
    st.markdown(metric_class(key).card())


def render_scoring_errors(errors: Mapping[str, str]) -> None:
    """One warning per metric that could not score (e.g. a missing resource); the rest show."""
    for key, message in errors.items():
        st.warning(
            f"{metric_class(key).name} could not be scored: {message}", icon=":material/warning:"
        )


def render_summary(results: Mapping[str, MetricResult]) -> None:
    """One ``st.metric`` per reported key: the numbers first, evidence below."""
    items = list(results.items())
    for start in range(0, len(items), SUMMARY_PER_ROW):
        row = items[start : start + SUMMARY_PER_ROW]
        # a short last row keeps the column width of the full rows
        columns = st.columns(SUMMARY_PER_ROW)[: len(row)]
        for column, (key, result) in zip(columns, row, strict=True):
            column.metric(
                key_label(key), f"{result.value:.4f}", help=f"`{result.signature}`", border=True
            )


def render_score_table(results: Mapping[str, MetricResult]) -> None:
    """Every key with its value, range, direction and signature (reproducible numbers)."""
    frame = pd.DataFrame(
        [
            {
                "key": key,
                "metric": key_label(key),
                "value": result.value,
                "range": _range(metric_class(key).bounds),
                "direction": _direction(metric_class(key).higher_is_better),
                "signature": str(result.signature),
            }
            for key, result in results.items()
        ]
    )
    st.dataframe(
        frame,
        hide_index=True,
        width="stretch",
        column_config={
            "value": _NUMBER,
            "signature": st.column_config.TextColumn(width="medium"),
        },
    )
    if not results:
        return
    # the full signatures, copyable for a paper (the table column truncates long ones)
    width = max(len(k) for k in results)
    st.code(
        "\n".join(f"{k:<{width}}  {r.signature}" for k, r in results.items()),
        language=None,
        wrap_lines=True,
    )


def render_metric(result: MetricResult, *, item: int = 0, key: str | None = None) -> None:
    """A metric's panel: its warnings first, then the evidence of one item."""
    for message in result.warnings:
        st.warning(message, icon=":material/warning:")
    if not result.segments:
        st.info("Nothing was scored.")
        return
    segment = result.segments[item]
    render_details(segment.details, segment, result, key or result.key)


# -- one view per details type ---------------------------------------------------------------
@functools.singledispatch
def render_details(details: Any, segment: SegmentScore, result: MetricResult, key: str) -> None:
    """Fallback for details no view knows yet: the segment's scores as a table."""
    st.caption(f"No drawing for `{type(details).__name__}` yet; the item's scores:")
    frame = pd.DataFrame({"key": list(segment.scores), "value": list(segment.scores.values())})
    st.dataframe(frame, hide_index=True, column_config={"value": _NUMBER})


@render_details.register
def _bleu(details: BleuDetails, segment: SegmentScore, result: MetricResult, key: str) -> None:
    orders = list(range(1, len(details.correct) + 1))
    labels = [f"{n}-gram" for n in orders]
    keys = [k for k in metric_class(result.key).report_keys() if k in segment.scores]
    precisions = list(details.precisions)
    st.markdown("**Modified n-gram precision** (clipped matches / candidate n-grams)")
    left, right = st.columns([3, 2])
    with left:
        frame = pd.DataFrame(
            {
                "order": labels,
                "clipped matches": list(details.correct),
                "candidate n-grams": list(details.guess),
                "precision pₙ": precisions,
                "BLEU-n": [segment.scores[k] for k in keys],
            }
        )
        st.dataframe(
            frame,
            hide_index=True,
            width="stretch",
            column_config={"precision pₙ": _NUMBER, "BLEU-n": _NUMBER},
        )
        bp = details.brevity_penalty
        c, r = details.candidate_length, details.reference_length
        rule = "exp(1 − r/c), as c < r" if c < r else "1, as c ≥ r"
        mode = dict(result.signature.options).get("effective_length", "closest")
        st.markdown(
            f"**Brevity penalty** BP = **{bp:.4f}** with candidate length c = {c} and "
            f"reference length r = {r:g} ({_REF_LENGTH.get(mode, mode)}): BP = {rule}. "
            "BLEU-n = BP × geometric mean of p₁ … pₙ."
        )
    with right:
        _bar_chart(
            labels,
            {"precision pₙ": precisions, "BLEU-n": [segment.scores[k] for k in keys]},
            "value",
            key=f"{key}-chart",
        )

    st.markdown("**Candidate n-grams and their clipped counts**")
    order = _order_radio(orders, key)
    if order is None:  # only when the radio has no options
        return
    spans = details.matched_spans(order)
    covered = {i for start, end in spans for i in range(start, end)}
    st.caption(
        f"Highlighted: candidate tokens inside the {len(spans)} matched {order}-gram(s), "
        "counting each n-gram at most as often as one reference has it."
    )
    _show_tokens(token_strip({"candidate": details.candidate}, {"candidate": covered}))
    grams = [g for g in details.ngrams if len(g.ngram) == order]
    grams.sort(key=lambda g: (-g.clipped, -g.count))
    table = pd.DataFrame(
        {
            "n-gram": [" ".join(g.ngram) for g in grams],
            "count in candidate": [g.count for g in grams],
            "max count in one reference": [g.max_ref_count for g in grams],
            "clipped count": [g.clipped for g in grams],
        }
    )
    st.dataframe(table, hide_index=True, width="stretch")


@render_details.register
def _rouge(details: RougeDetails, segment: SegmentScore, result: MetricResult, key: str) -> None:
    beta = dict(result.signature.options).get("beta", 1.2)
    p_col, r_col, f_col = st.columns(3)
    p_col.metric("P (max over references)", f"{details.precision:.4f}")
    r_col.metric("R (max over references)", f"{details.recall:.4f}")
    f_col.metric(f"F (β = {beta:g})", f"{details.f_measure:.4f}")
    st.caption(
        "Precision = LCS / candidate length and recall = LCS / reference length are maximised "
        "over the references independently (possibly from different references), then "
        "combined: F = (1 + β²)·P·R / (R + β²·P)."
    )
    best = details.best_reference
    left, right = st.columns([3, 2])
    with left:
        frame = pd.DataFrame(
            {
                "reference": [f"#{i + 1}" for i in range(len(details.references))],
                "text": [" ".join(r.tokens) for r in details.references],
                "LCS": [r.lcs for r in details.references],
                "P": [r.precision for r in details.references],
                "R": [r.recall for r in details.references],
                "F": [r.f_measure for r in details.references],
            }
        )
        st.dataframe(
            frame,
            hide_index=True,
            width="stretch",
            column_config={"P": _NUMBER, "R": _NUMBER, "F": _NUMBER},
        )
    with right:
        refs = details.references
        _bar_chart(
            [f"#{i + 1}" for i in range(len(refs))],
            {
                "P": [r.precision for r in refs],
                "R": [r.recall for r in refs],
                "F": [r.f_measure for r in refs],
            },
            "per reference",
            key=f"{key}-chart",
        )

    st.markdown("**Longest common subsequence**")
    chosen = st.selectbox(
        "Reference",
        list(range(len(details.references))),
        index=best,
        format_func=lambda i: f"#{i + 1}" + (" (highest F)" if i == best else ""),
        key=f"{key}-reference",
    )
    if chosen is None:  # only when there is no reference
        return
    pairs = details.lcs_pairs(chosen)
    reference = details.references[chosen]
    ref_row = f"reference #{chosen + 1}"
    _show_tokens(
        token_strip(
            {"candidate": details.candidate, ref_row: reference.tokens},
            {"candidate": [i for i, _ in pairs], ref_row: [j for _, j in pairs]},
        )
    )
    st.text(f"LCS ({reference.lcs} tokens): " + " ".join(details.candidate[i] for i, _ in pairs))


@render_details.register
def _cider(details: CiderDetails, segment: SegmentScore, result: MetricResult, key: str) -> None:
    corpus = result.details
    if isinstance(corpus, CiderCorpusDetails):
        where = "the scored set" if corpus.idf_source == "corpus" else "COCO val2014"
        noun = "image" if corpus.documents == 1 else "images"
        st.markdown(
            f"**IDF source:** {where} ({corpus.documents:,} {noun}, "
            f"log N = {corpus.log_documents:.4f}); σ = {details.sigma:g}."
        )
        if corpus.idf_source == "corpus" and corpus.documents == 1:
            st.info(
                "Switch the **CIDEr-D IDF source** above to **COCO val2014** to see "
                "informative weights for a single image.",
                icon=":material/lightbulb:",
            )
    orders = list(range(1, len(details.per_order) + 1))
    labels = [f"{n}-gram" for n in orders]
    n_refs = len(details.references)
    left, right = st.columns([3, 2])
    with left:
        st.markdown("**Per-order similarity** (cosine × length penalty, mean over references, ×10)")
        frame = pd.DataFrame({"order": labels, "similarity": list(details.per_order)})
        st.dataframe(frame, hide_index=True, width="stretch", column_config={"similarity": _NUMBER})
        st.markdown(
            f"CIDEr-D = mean of the {len(orders)} orders = **{segment.value:.4f}** "
            f"({n_refs} reference{'s' if n_refs != 1 else ''})."
        )
    with right:
        _bar_chart(
            labels, {"similarity": list(details.per_order)}, "similarity", key=f"{key}-chart"
        )

    st.markdown("**Per reference**")
    rows = []
    for i, ref in enumerate(details.references):
        row: dict[str, Any] = {
            "reference": f"#{i + 1}",
            "text": " ".join(ref.tokens),
            "bigrams": ref.vector.length,
            "penalty": details.length_penalty(i),
        }
        row.update({f"sim {n}": s for n, s in zip(orders, ref.similarity, strict=True)})
        row["×10 mean"] = 10.0 * sum(ref.similarity) / len(ref.similarity)
        rows.append(row)
    config: dict[str, Any] = {
        "penalty": st.column_config.NumberColumn(
            format="%.4f", help="Gaussian length penalty against this reference"
        ),
        "×10 mean": st.column_config.NumberColumn(
            format="%.4f", help="CIDEr-D against this reference alone: 10 × mean of the orders"
        ),
    }
    for n in orders:
        config[f"sim {n}"] = st.column_config.NumberColumn(
            format="%.4f", help=f"{n}-gram cosine × length penalty"
        )
    st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch", column_config=config)
    st.caption(
        f"Length penalty = exp(−(Δ bigrams)² / (2σ²)); the candidate has {details.vector.length} "
        "bigram(s). Each similarity is already multiplied by its length penalty."
    )

    st.markdown("**Candidate n-grams and their tf-idf weights**")
    order = _order_radio(orders, key)
    if order is None:  # only when the radio has no options
        return
    weights = details.vector.weights[order - 1]
    counts = ngram_counts(details.candidate, order)
    table = pd.DataFrame(
        [
            {
                "n-gram": " ".join(gram),
                "count": counts[gram],
                "idf": weight / counts[gram] if counts[gram] else 0.0,
                "weight (count × idf)": weight,
                "references with it": sum(
                    gram in r.vector.weights[order - 1] for r in details.references
                ),
            }
            for gram, weight in weights.items()
        ],
        columns=["n-gram", "count", "idf", "weight (count × idf)", "references with it"],
    ).sort_values("weight (count × idf)", ascending=False, kind="stable")
    st.dataframe(
        table,
        hide_index=True,
        width="stretch",
        column_config={"idf": _NUMBER, "weight (count × idf)": _NUMBER},
    )


# -- METEOR ---------------------------------------------------------------------------------------
#: line colour per METEOR module (exact, stem, synonym, paraphrase)
MODULE_COLOURS = dict(zip(MODULES, (_BLUE, _ORANGE, _GREEN, "#9467bd"), strict=True))
_UNMATCHED = "#8c8c8c"
_HYP_Y, _REF_Y = 1.0, 0.0


def plot_text(text: str) -> str:
    """User text made literal for plotly, which interprets ``<b>``, ``<br>``, ``<a href>``."""
    return html.escape(text, quote=True)


def _positions(tokens: Sequence[str]) -> list[float]:
    """x centre of each token in a row, spaced by its length so long words do not overlap."""
    out, x = [], 0.0
    for token in tokens:
        width = max(len(token), 2) + 2.0
        out.append(x + width / 2)
        x += width
    return out


def _span(xs: Sequence[float], tokens: Sequence[str], start: int, end: int) -> tuple[float, float]:
    """Left and right edge (x) of tokens ``start .. end - 1`` of a row."""
    left = xs[start] - (max(len(tokens[start]), 2) + 1.0) / 2
    right = xs[end - 1] + (max(len(tokens[end - 1]), 2) + 1.0) / 2
    return left, right


def meteor_alignment_figure(details: MeteorDetails, reference: int) -> go.Figure:
    """Hypothesis over one reference (tokens as METEOR normalised them), a line per aligned
    span coloured by its module, and a dashed box around each chunk on both rows.

    Traces: two token rows of text (matched and unmatched words, per row), then exactly one
    ``lines`` trace per match of the alignment; shapes: two rectangles per chunk.
    """
    alignment = details.alignments[reference]
    hyp, ref = details.hyp_tokens, alignment.ref_tokens
    hx, rx = _positions(hyp), _positions(ref)
    # centre the shorter row under the longer one
    width_h = _span(hx, hyp, 0, len(hyp))[1] if hyp else 0.0
    width_r = _span(rx, ref, 0, len(ref))[1] if ref else 0.0
    shift_h, shift_r = max(0.0, (width_r - width_h) / 2), max(0.0, (width_h - width_r) / 2)
    hx = [x + shift_h for x in hx]
    rx = [x + shift_r for x in rx]
    hyp_module = {
        i: m.module_name for m in alignment.alignment for i in range(m.hyp_start, m.hyp_end)
    }
    ref_module = {
        j: m.module_name for m in alignment.alignment for j in range(m.ref_start, m.ref_end)
    }

    fig = go.Figure()
    rows = (
        ("hypothesis", hyp, hx, _HYP_Y, hyp_module, alignment.hyp_function),
        (f"reference #{reference + 1}", ref, rx, _REF_Y, ref_module, alignment.ref_function),
    )
    for row, tokens, xs, y, modules, function in rows:
        for matched in (True, False):
            idx = [i for i in range(len(tokens)) if (i in modules) == matched]
            if not idx:
                continue
            fig.add_scatter(
                x=[xs[i] for i in idx],
                y=[y] * len(idx),
                mode="text",
                text=[plot_text(tokens[i]) for i in idx],
                textposition="middle center",
                textfont={
                    "size": 16,
                    "color": [MODULE_COLOURS[modules[i]] for i in idx] if matched else _UNMATCHED,
                },
                hovertext=[
                    f"{row} word {i + 1}: {plot_text(tokens[i])}<br>"
                    f"{'function' if function[i] else 'content'} word; "
                    + (f"matched ({modules[i]})" if matched else "not matched")
                    for i in idx
                ],
                hoverinfo="text",
                showlegend=False,
                name=f"{row} ({'matched' if matched else 'unmatched'})",
            )
    seen: set[str] = set()
    gap = 0.17  # where lines start and end, away from the text
    for m in alignment.alignment:
        name = m.module_name
        h_left, h_right = _span(hx, hyp, m.hyp_start, m.hyp_end)
        r_left, r_right = _span(rx, ref, m.ref_start, m.ref_end)
        h_mid = (hx[m.hyp_start] + hx[m.hyp_end - 1]) / 2
        r_mid = (rx[m.ref_start] + rx[m.ref_end - 1]) / 2
        xs: list[float | None] = [h_mid, r_mid]
        ys: list[float | None] = [_HYP_Y - gap, _REF_Y + gap]
        if m.hyp_len > 1:  # a bracket under a multi-word span
            xs += [None, h_left + 0.5, h_right - 0.5]
            ys += [None, _HYP_Y - gap, _HYP_Y - gap]
        if m.ref_len > 1:
            xs += [None, r_left + 0.5, r_right - 0.5]
            ys += [None, _REF_Y + gap, _REF_Y + gap]
        words_h = plot_text(" ".join(hyp[m.hyp_start : m.hyp_end]))
        words_r = plot_text(" ".join(ref[m.ref_start : m.ref_end]))
        fig.add_scatter(
            x=xs,
            y=ys,
            mode="lines",
            line={"color": MODULE_COLOURS[name], "width": 3},
            name=name,
            legendgroup=name,
            showlegend=name not in seen,
            hovertext=f"{name}: {words_h} → {words_r}",
            hoverinfo="text",
        )
        seen.add(name)
    for chunk in alignment.chunks:
        first, last = chunk[0], chunk[-1]
        for xs, tokens, start, end, y in (
            (hx, hyp, first.hyp_start, last.hyp_end, _HYP_Y),
            (rx, ref, first.ref_start, last.ref_end, _REF_Y),
        ):
            left, right = _span(xs, tokens, start, end)
            fig.add_shape(
                type="rect",
                x0=left,
                x1=right,
                y0=y - 0.12,
                y1=y + 0.12,
                line={"color": _UNMATCHED, "width": 1.5, "dash": "dot"},
                fillcolor="rgba(140, 140, 140, 0.08)",
                layer="below",
            )
    span = max(width_h, width_r, 1.0)
    fig.update_layout(
        height=260,
        margin={"l": 10, "r": 10, "t": 40, "b": 10},
        xaxis={"visible": False, "range": [-0.5, span + 0.5], "fixedrange": True},
        yaxis={
            "range": [-0.35, 1.35],
            "fixedrange": True,
            "tickvals": [_REF_Y, _HYP_Y],
            "ticktext": [f"reference #{reference + 1}", "hypothesis"],
            "showgrid": False,
            "zeroline": False,
        },
        legend={"orientation": "h", "y": 1.18, "x": 0, "title": {"text": "module"}},
        showlegend=True,
    )
    return fig


def _meteor_arithmetic(alignment: MeteorAlignment, options: Mapping[str, Any]) -> str:
    """METEOR's formulas (metric-spec §5.7) with this pair's numbers filled in."""
    alpha, beta, gamma, delta = (float(options[k]) for k in ("alpha", "beta", "gamma", "delta"))
    weights = tuple(float(w) for w in options["weights"])
    s = alignment.stats
    content_h = s.hyp_length - s.hyp_function_words
    content_r = s.ref_length - s.ref_function_words
    lw_h = delta * content_h + (1 - delta) * s.hyp_function_words
    lw_r = delta * content_r + (1 - delta) * s.ref_function_words
    mw_h = sum(
        w * (delta * c + (1 - delta) * f)
        for w, c, f in zip(weights, s.content_hyp, s.function_hyp, strict=True)
    )
    mw_r = sum(
        w * (delta * c + (1 - delta) * f)
        for w, c, f in zip(weights, s.content_ref, s.function_ref, strict=True)
    )
    w_text = ", ".join(f"{n} {w:g}" for n, w in zip(MODULES, weights, strict=True))
    if s.perfect:
        frag = "Frag  = 0   (every word matched in one chunk)"
    else:
        frag = (
            f"Frag  = chunks / mean matched = {s.chunks} / (({s.matched_hyp} + "
            f"{s.matched_ref}) / 2) = {alignment.fragmentation:.4f}"
        )
    lines = [
        f"parameters: α = {alpha:g}, β = {beta:g}, γ = {gamma:g}, δ = {delta:g}; "
        f"module weights: {w_text}",
        "",
        f"hypothesis: {s.hyp_length} words ({content_h} content, {s.hyp_function_words} function)"
        f" -> weighted length δ·{content_h} + (1−δ)·{s.hyp_function_words} = {lw_h:.4f}",
        f"reference:  {s.ref_length} words ({content_r} content, {s.ref_function_words} function)"
        f" -> weighted length δ·{content_r} + (1−δ)·{s.ref_function_words} = {lw_r:.4f}",
        f"matched, weighted Σ w_m·(δ·content + (1−δ)·function): hypothesis {mw_h:.4f}, "
        f"reference {mw_r:.4f}",
        "",
        f"P     = {mw_h:.4f} / {lw_h:.4f} = {alignment.precision:.4f}",
        f"R     = {mw_r:.4f} / {lw_r:.4f} = {alignment.recall:.4f}",
        f"Fmean = P·R / (α·P + (1−α)·R) = {alignment.fmean:.4f}",
        frag,
        f"Pen   = γ·Frag^β = {gamma:g} × {alignment.fragmentation:.4f}^{beta:g} = "
        f"{alignment.penalty:.4f}",
        f"score = Fmean·(1 − Pen) = {alignment.fmean:.4f} × (1 − {alignment.penalty:.4f}) = "
        f"{alignment.score:.4f}",
    ]
    if math.isnan(alignment.fmean * (1 - alignment.penalty)):
        lines.append("        (0/0 where nothing matched: the jar scores it 0)")
    return "\n".join(lines)


@render_details.register
def _meteor(details: MeteorDetails, segment: SegmentScore, result: MetricResult, key: str) -> None:
    options = dict(result.signature.options)
    best = details.best
    n_refs = len(details.alignments)
    if not n_refs:
        st.info("No reference to align with.")
        return
    st.markdown(
        f"**METEOR = {segment.value:.4f}**: the best of the {n_refs} reference alignments "
        f"(reference #{best + 1} wins; ties go to the first)."
    )
    chosen = st.selectbox(
        "Reference",
        list(range(n_refs)),
        index=best,
        format_func=lambda i: f"#{i + 1}" + (" (winning reference)" if i == best else ""),
        key=f"{key}-reference",
    )
    if chosen is None:
        return
    alignment = details.alignments[chosen]
    st.markdown("**Alignment** (words as METEOR sees them after its normalisation)")
    st.plotly_chart(
        meteor_alignment_figure(details, chosen), key=f"{key}-alignment", width="stretch"
    )
    st.caption(
        f"{len(alignment.alignment)} aligned span(s) in {len(alignment.chunks)} chunk(s) "
        "(dotted boxes: runs of matches that are adjacent and in the same order on both "
        "sides); grey words are unmatched. Hover a word or a line for details."
    )
    left, right = st.columns([4, 3])
    with left:
        st.markdown("**The arithmetic**")
        st.code(_meteor_arithmetic(alignment, options), language=None, wrap_lines=True)
    with right:
        st.markdown("**Matched words per module**")
        s = alignment.stats
        counts = {
            "weight w_m": [float(w) for w in options["weights"]],
            "hypothesis, content": list(s.content_hyp),
            "hypothesis, function": list(s.function_hyp),
            "reference, content": list(s.content_ref),
            "reference, function": list(s.function_ref),
        }
        frame = pd.DataFrame.from_dict(counts, orient="index", columns=list(MODULES))
        st.dataframe(frame, width="stretch")
        st.caption("The jar's 23 statistics for this pair:")
        st.code(s.line(), language=None, wrap_lines=True)

    st.markdown("**Per reference**")
    table = pd.DataFrame(
        {
            "reference": [f"#{i + 1}" + (" (winner)" if i == best else "") for i in range(n_refs)],
            "normalised text": [" ".join(a.ref_tokens) for a in details.alignments],
            "matches": [len(a.alignment) for a in details.alignments],
            "chunks": [len(a.chunks) for a in details.alignments],
            "P": [a.precision for a in details.alignments],
            "R": [a.recall for a in details.alignments],
            "Fmean": [a.fmean for a in details.alignments],
            "Frag": [a.fragmentation for a in details.alignments],
            "Pen": [a.penalty for a in details.alignments],
            "score": [a.score for a in details.alignments],
        }
    )
    number_cols = ("P", "R", "Fmean", "Frag", "Pen", "score")
    st.dataframe(
        table,
        hide_index=True,
        width="stretch",
        column_config={c: _NUMBER for c in number_cols},
    )
    with st.expander(f"Every candidate match the four matchers found for reference #{chosen + 1}"):
        chosen_set = set(alignment.alignment)
        fixed = set(alignment.fixed)
        hyp, ref = details.hyp_tokens, alignment.ref_tokens
        rows = [
            {
                "module": m.module_name,
                "hypothesis words": " ".join(hyp[m.hyp_start : m.hyp_end]),
                "hypothesis position": m.hyp_start + 1,
                "reference words": " ".join(ref[m.ref_start : m.ref_end]),
                "reference position": m.ref_start + 1,
                "pre-selected": m in fixed,
                "in the alignment": m in chosen_set,
            }
            for matches in alignment.candidates
            for m in matches
        ]
        st.dataframe(
            pd.DataFrame(
                rows,
                columns=[
                    "module",
                    "hypothesis words",
                    "hypothesis position",
                    "reference words",
                    "reference position",
                    "pre-selected",
                    "in the alignment",
                ],
            ),
            hide_index=True,
            width="stretch",
        )
        st.caption(
            "Matches are generated module by module (exact, stem, synonym, paraphrase); "
            "unambiguous ones are pre-selected, then a beam search picks the alignment with "
            "the most matched words and the fewest chunks."
        )


# -- WMD --------------------------------------------------------------------------------------
#: word distance colours: pale for (almost) the same word, red for far apart
_COST_SCALE = "YlOrRd"


def wmd_sankey_figure(pair: WMDPair) -> go.Figure:
    """Candidate words (left) to reference words (right): link width = mass moved, link
    colour = word distance (the cost), with a colour bar. Labels are escaped user text."""
    flows = pair.flows()
    cand, ref = pair.candidate, pair.reference
    labels = [f"{plot_text(w)} ({m:.2f})" for w, m in zip(cand.words, cand.weights, strict=True)]
    labels += [f"{plot_text(w)} ({m:.2f})" for w, m in zip(ref.words, ref.weights, strict=True)]
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
                "color": [_BLUE] * n + [_ORANGE] * len(ref.words),
                "pad": 18,
                "thickness": 16,
                "hovertemplate": "%{label}: mass %{value:.3f}<extra></extra>",
                "line": {"width": 0},
            },
            textfont={"size": 14, "color": "#262730", "shadow": "none"},
            link={
                "source": source,
                "target": target,
                "value": [float(v) for v in flows["mass"]],
                "color": link_colours,
                "customdata": [
                    f"{plot_text(a)} → {plot_text(b)}"
                    for a, b in zip(flows["candidate_word"], flows["reference_word"], strict=True)
                ],
                "hovertemplate": ("%{customdata}<br>mass moved %{value:.3f}<extra></extra>"),
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


def _matrix_figure(pair: WMDPair, matrix: np.ndarray, title: str, fmt: str) -> go.Figure:
    """A candidate-word × reference-word heatmap with its values written in the cells."""
    x = [plot_text(w) for w in pair.reference.words]
    y = [plot_text(w) for w in pair.candidate.words]
    fig = go.Figure(
        go.Heatmap(
            z=matrix,
            x=x,
            y=y,
            colorscale=_COST_SCALE if "distance" in title else "Blues",
            zmin=0.0,
            texttemplate=f"%{{z:{fmt}}}",
            hovertemplate=f"%{{y}} → %{{x}}<br>{title}: %{{z:{fmt}}}<extra></extra>",
            colorbar={"thickness": 10},
        )
    )
    fig.update_layout(
        title={"text": title, "font": {"size": 14}},
        height=max(220, 40 * len(y) + 120),
        margin={"l": 10, "r": 10, "t": 40, "b": 10},
        xaxis={"type": "category", "title": "reference words", "side": "bottom"},
        yaxis={"type": "category", "title": "candidate words", "autorange": "reversed"},
    )
    return fig


def _side_rows(name: str, side: WMDSide) -> dict[str, Any]:
    return {
        "side": name,
        "words kept (nBOW weight)": ", ".join(
            f"{w} {m:.3f}" for w, m in zip(side.words, side.weights, strict=True)
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
    d_col.metric("distance WMD (winning reference)", f"{details.distance:.4f}")
    s_col.metric(f"similarity exp(−WMD/σ), σ = {sigma:g}", f"{details.similarity:.4f}")
    r_col.metric("winning reference", f"#{best + 1} of {len(details.pairs)}")
    chosen = st.selectbox(
        "Reference",
        list(range(len(details.pairs))),
        index=best,
        format_func=lambda i: f"#{i + 1}" + (" (winning reference)" if i == best else ""),
        key=f"{key}-reference",
    )
    if chosen is None:
        return
    pair = details.pairs[chosen]
    st.text(
        f"reference #{chosen + 1}: distance {pair.distance:.4f}, similarity {pair.similarity:.4f}"
    )
    if pair.note:
        st.info(f"Reference #{chosen + 1}: {pair.note}.", icon=":material/info:")
    if pair.plan.size and float(pair.plan.sum()) > 0:
        st.markdown(
            "**Where the word mass moves** (width = mass moved, colour = word distance; the "
            "numbers are each word's nBOW weight)"
        )
        st.plotly_chart(wmd_sankey_figure(pair), key=f"{key}-sankey", width="stretch")
        left, right = st.columns(2)
        with left:
            st.plotly_chart(
                _matrix_figure(pair, pair.cost, "word distance (cost)", ".2f"),
                key=f"{key}-cost",
                width="stretch",
            )
        with right:
            st.plotly_chart(
                _matrix_figure(pair, pair.plan, "mass moved (flow)", ".3f"),
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
            _side_rows("candidate", pair.candidate),
            _side_rows(f"reference #{chosen + 1}", pair.reference),
        ]
    )
    st.dataframe(frame, hide_index=True, width="stretch")
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
    st.dataframe(
        table,
        hide_index=True,
        width="stretch",
        column_config={"distance": _NUMBER, "similarity": _NUMBER},
    )


# -- MEAN ---------------------------------------------------------------------------------------
def _nearest_text(nearest: Sequence[tuple[str, float]]) -> str:
    return ", ".join(f"{w} ({c:.2f})" for w, c in nearest)


@render_details.register
def _mean(details: MeanDetails, segment: SegmentScore, result: MetricResult, key: str) -> None:
    if details.note:
        st.info(details.note, icon=":material/info:")
    n = len(details.cosines)
    st.metric(
        f"MEAN: mean cosine over {n} reference{'s' if n != 1 else ''}", f"{segment.value:.4f}"
    )
    st.caption(
        "Each caption becomes the mean of its content words' vectors (stop words and "
        "out-of-vocabulary words removed); the score is the cosine between the candidate's "
        "mean and each reference's, averaged."
    )
    rows = [
        {
            "side": "candidate",
            "words used": " ".join(details.candidate.words),
            "cosine": None,
            "nearest words to the mean": _nearest_text(details.candidate_nearest),
            "stop words / OOV removed": " ".join(
                (*details.candidate.stopwords, *details.candidate.oov)
            ),
        }
    ]
    for i, (ref, cosine, nearest) in enumerate(
        zip(details.references, details.cosines, details.reference_nearest, strict=True)
    ):
        rows.append(
            {
                "side": f"reference #{i + 1}",
                "words used": " ".join(ref.words),
                "cosine": cosine,
                "nearest words to the mean": _nearest_text(nearest),
                "stop words / OOV removed": " ".join((*ref.stopwords, *ref.oov)),
            }
        )
    st.dataframe(
        pd.DataFrame(rows),
        hide_index=True,
        width="stretch",
        column_config={
            "cosine": st.column_config.NumberColumn(
                format="%.4f", help="cosine between this mean vector and the candidate's"
            ),
            "nearest words to the mean": st.column_config.TextColumn(
                width="large",
                help="vocabulary words closest to this side's mean vector (cosine)",
            ),
        },
    )
    _, middle, _ = st.columns([1, 3, 1])
    with middle:
        _bar_chart(
            [f"#{i + 1}" for i in range(n)],
            {"cosine": list(details.cosines)},
            "cosine with the candidate",
            key=f"{key}-chart",
        )
    oov = [*details.candidate.oov, *(w for r in details.references for w in r.oov)]
    if oov:
        st.caption("Words missing from the vectors (left out of the means):")
        st.text(" ".join(oov))


# -- SPICE --------------------------------------------------------------------------------------
#: row style per tuple status (readable on the light and the dark theme)
SPICE_STATUS_STYLES = {
    "exact": MATCH_STYLE,
    "matched": MATCH_STYLE,
    "synonym": "background-color: #ffe8a3; color: #3d2c00; font-weight: 600",
    "missed": "background-color: #f6d3d3; color: #4a0d0d",
}
#: node colour per tuple kind in the scene-graph figures
SPICE_KIND_COLOURS = {"object": _BLUE, "attribute": _ORANGE, "relation": _GREEN}
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
    """
    import networkx as nx

    g = nx.Graph()
    for i, (_, attributes) in enumerate(graph.nodes):
        g.add_node(("o", i))
        for k in range(len(attributes)):
            g.add_edge(("o", i), ("a", i, k), weight=0.7)
    for e, (source, _, target) in enumerate(graph.edges):
        g.add_edge(("o", source), ("r", e), weight=0.6)
        g.add_edge(("r", e), ("o", target), weight=0.6)
    dist = {a: dict(d) for a, d in nx.shortest_path_length(g, weight="weight")}
    far = max(1.5, 0.5 * max((v for d in dist.values() for v in d.values()), default=0.0))
    for a in g:
        for b in g:
            dist[a].setdefault(b, far)
    xy = nx.kamada_kawai_layout(g, dist=dist) if len(g) > 1 else dict.fromkeys(g, (0.0, 0.0))
    at = {node: (float(p[0]), float(p[1])) for node, p in xy.items()}
    objects = [at[("o", i)] for i in range(len(graph.nodes))]
    attributes = [[at[("a", i, k)] for k in range(len(a))] for i, (_, a) in enumerate(graph.nodes)]
    relations = [at[("r", e)] for e in range(len(graph.edges))]
    return objects, attributes, relations


def spice_graph_figure(graph: GraphView, tuples: Sequence[SpiceTuple], title: str) -> go.Figure:
    """One scene graph laid out by :func:`spice_layout`, a relation's label on the bent
    edge from its subject to its object (arrow towards the object). Colour = kind (object,
    attribute, relation); a filled marker = the tuple matched, an open one = missed.

    Every word is escaped user text (:func:`plot_text`).
    """
    status = _spice_status(tuples)
    pos, attribute_pos, relation_pos = spice_layout(graph)
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
    every = [*pos, *(p for ps in attribute_pos for p in ps), *relation_pos] or [(0.0, 0.0)]
    xs, ys = [p[0] for p in every], [p[1] for p in every]
    fig.update_layout(
        title={"text": title, "font": {"size": 15}},
        height=520,
        margin={"l": 10, "r": 10, "t": 40, "b": 50},
        # room for the labels around the outermost markers
        xaxis={"visible": False, "range": [min(xs) - 0.35, max(xs) + 0.35], "fixedrange": True},
        yaxis={"visible": False, "range": [min(ys) - 0.25, max(ys) + 0.3], "fixedrange": True},
        legend={"orientation": "h", "y": -0.02, "x": 0, "yanchor": "top", "font": {"size": 12}},
        showlegend=True,
    )
    return fig


def _dash(value: float) -> str:
    """A score with 4 decimals, or "—" for NaN (no such tuple in the references)."""
    return "—" if math.isnan(value) else f"{value:.4f}"


def _spice_tuple_frame(
    tuples: Sequence[SpiceTuple], matches: Sequence[SpiceTuple] = ()
) -> pd.DataFrame:
    rows = []
    for t in tuples:
        row = {"tuple": str(t), "kind": t.kind, "status": t.status}
        if matches:
            row["first matching reference tuple"] = "" if t.match is None else str(matches[t.match])
        rows.append(row)
    columns = ["tuple", "kind", "status"] + (["first matching reference tuple"] if matches else [])
    return pd.DataFrame(rows, columns=columns)


@render_details.register
def _spice(details: SpiceDetails, segment: SegmentScore, result: MetricResult, key: str) -> None:
    total = details.categories["All"]
    p_col, r_col, f_col = st.columns(3)
    p_col.metric("P (candidate tuples matched)", f"{total.precision:.4f}")
    r_col.metric("R (reference tuples found)", f"{total.recall:.4f}")
    f_col.metric("SPICE = F", f"{total.f:.4f}")
    st.caption(
        f"{total.tp} of {len(details.candidate)} candidate tuple(s) match a tuple of the "
        f"references' merged scene graph ({total.tp + total.fn} tuples): P = tp / (tp + fp), "
        "R = tp / (tp + fn), F = 2PR / (P + R). A tuple matches when every element shares a "
        "word or a WordNet synset with the same element of a reference tuple."
    )

    st.markdown("**Scene graphs** (filled: the tuple matched; open: missed; hover for details)")
    left, right = st.columns(2)
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
    left, right = st.columns(2)
    with left:
        st.caption("Candidate tuples")
        st.dataframe(
            _styled_by_status(_spice_tuple_frame(details.candidate, details.reference)),
            hide_index=True,
            width="stretch",
        )
    with right:
        st.caption("Reference tuples (all references merged)")
        st.dataframe(
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
    left, right = st.columns([3, 2])
    with left:
        st.dataframe(
            frame,
            hide_index=True,
            width="stretch",
        )
    with right:
        _bar_chart(labels[1:], {"F": [c.f for c in cats[1:]]}, "F", key=f"{key}-chart")


# -- I²CE ---------------------------------------------------------------------------------------
@render_details.register
def _i2ce(details: I2CEDetails, segment: SegmentScore, result: MetricResult, key: str) -> None:
    if details.note:
        st.info(details.note, icon=":material/info:")
    n = len(details.cosines)
    pooling = dict(result.signature.options).get("pooling", "mean")
    st.metric(
        f"I²CE: mean cosine over {n} reference{'s' if n != 1 else ''}", f"{segment.value:.4f}"
    )
    st.caption(
        "Each caption is encoded by the I²CE autoencoder's GRU encoder (sentence vector = "
        f"{pooling} pooling of its states); the score is the cosine between the candidate's "
        "vector and each reference's, averaged. Words the vocabulary lacks are read as `<unk>`."
    )
    rows: list[dict[str, Any]] = [
        {
            "side": "candidate",
            "tokens": " ".join(details.candidate.tokens),
            "cosine": None,
            "out of vocabulary": " ".join(details.candidate.unknown),
        }
    ]
    for i, (ref, cosine) in enumerate(zip(details.references, details.cosines, strict=True)):
        rows.append(
            {
                "side": f"reference #{i + 1}",
                "tokens": " ".join(ref.tokens),
                "cosine": cosine,
                "out of vocabulary": " ".join(ref.unknown),
            }
        )
    st.dataframe(
        pd.DataFrame(rows),
        hide_index=True,
        width="stretch",
        column_config={
            "cosine": st.column_config.NumberColumn(
                format="%.4f", help="cosine between this sentence vector and the candidate's"
            ),
            "out of vocabulary": st.column_config.TextColumn(
                help="words missing from the encoder's vocabulary (encoded as <unk>)"
            ),
        },
    )
    _, middle, _ = st.columns([1, 3, 1])
    with middle:
        _bar_chart(
            [f"#{i + 1}" for i in range(n)],
            {"cosine": list(details.cosines)},
            "cosine with the candidate",
            key=f"{key}-chart",
        )
    oov = [*details.candidate.unknown, *(w for r in details.references for w in r.unknown)]
    if not oov:
        st.caption("Every word is in the encoder's vocabulary.")
