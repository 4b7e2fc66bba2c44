"""Drawing results: one render function per details type, plus the shared tables.

``render_details`` dispatches on the class of a segment's details (``functools.singledispatch``)
so a new metric adds one registered function here and no page changes (house style, "Pages
stay thin"). Unknown details fall back to the segment's scores.

User text (captions, tokens, n-grams) is only ever shown through ``st.text``, widget values
and dataframe cells, which display text literally. It never goes into markdown (which
interprets ``*``, ``_``, ``[..](..)``, ``$``), never into HTML, and never into plotly labels
(which interpret ``<b>``, ``<a href>``, ``<br>``); charts are labelled with orders and
reference numbers only.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pandas as pd
import plotly.graph_objects as go
import streamlit as st
from pandas.io.formats.style import Styler
from streamlit.errors import StreamlitPageNotFoundError

from capeval_core.metrics import METRICS, metric_class
from capeval_core.metrics.bleu import BleuDetails
from capeval_core.metrics.cider import CiderCorpusDetails, CiderDetails
from capeval_core.metrics.ngrams import ngram_counts
from capeval_core.metrics.rouge import RougeDetails
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
    cls = metric_class(key)
    if len(cls.report_keys()) == 1:
        return cls.name
    return f"{cls.name}-{key.rsplit('_', 1)[-1]}"


def _direction(higher_is_better: bool) -> str:
    return "higher is better" if higher_is_better else "lower is better"


def _range(bounds: tuple[float, float]) -> str:
    return f"{bounds[0]:g} – {bounds[1]:g}"


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

    A page file run on its own (``streamlit run pages/home.py`` or AppTest) has no
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
    order = st.radio(
        "n-gram order",
        orders,
        horizontal=True,
        format_func=lambda n: f"{n}-grams",
        key=f"{key}-order",
    )
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
    order = st.radio(
        "n-gram order",
        orders,
        horizontal=True,
        format_func=lambda n: f"{n}-grams",
        key=f"{key}-order",
    )
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
