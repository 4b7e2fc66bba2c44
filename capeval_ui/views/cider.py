"""The CIDEr-D panel: tf-idf weights, per-order cosines, the length penalty."""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from capeval_core.files import counted
from capeval_core.metrics.cider import CiderCorpusDetails, CiderDetails
from capeval_core.metrics.ngrams import ngram_counts
from capeval_core.results import MetricResult, SegmentScore
from capeval_ui.views.common import (
    INTROS,
    TERMS,
    bar_chart,
    dataframe,
    explain,
    format_number,
    order_radio,
    panel_columns,
    render_details,
)

INTROS["cider_d"] = (
    "CIDEr-D compares the candidate's word sequences with each reference's, giving more weight to"
    " the ones that are rare across images (so 'a man' counts little and 'surfboard' a lot)."
)
TERMS["cider_d"] = (
    (
        "tf-idf",
        (
            "term frequency × inverse document frequency: how often an n-gram is in this caption,"
            " times how rare it is across images"
        ),
    ),
    (
        "IDF source",
        (
            "where the rarity is counted: COCO val2014 (`idf-source` in the signature, 40,504 "
            "images) or the scored set (coco-caption's default; one image gives every weight 0)"
        ),
    ),
    ("length penalty", "exp(−Δ²/(2σ²)) for a length difference of Δ words, σ = 6"),
    ("×10", "CIDEr-D is scaled by 10, so scores above 1 are normal"),
)


@render_details.register
def _cider(details: CiderDetails, segment: SegmentScore, result: MetricResult, key: str) -> None:
    corpus = result.details
    if isinstance(corpus, CiderCorpusDetails):
        where = idf_source_label(corpus.idf_source)
        noun = "image" if corpus.documents == 1 else "images"
        st.markdown(
            f"**IDF source** (where rarity is counted): {where} ({corpus.documents:,} {noun}, "
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
    left, right = panel_columns([3, 2])
    with left:
        st.markdown("**Per-order similarity** (cosine × length penalty, mean over references, ×10)")
        frame = pd.DataFrame({"order": labels, "similarity": list(details.per_order)})
        dataframe(frame, hide_index=True, width="stretch", numbers=["similarity"])
        st.markdown(
            f"CIDEr-D = mean of the {len(orders)} orders = **{format_number(segment.value)}** "
            f"({counted(n_refs, 'reference')})."
        )
    with right:
        bar_chart(labels, {"similarity": list(details.per_order)}, "similarity", key=f"{key}-chart")

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
        "penalty": st.column_config.Column(help="Gaussian length penalty against this reference"),
        "×10 mean": st.column_config.Column(
            help="CIDEr-D against this reference alone: 10 × mean of the orders"
        ),
    }
    for n in orders:
        config[f"sim {n}"] = st.column_config.Column(help=f"{n}-gram cosine × length penalty")
    per_ref = pd.DataFrame(rows)
    numbers = ["penalty", "×10 mean", *(f"sim {n}" for n in orders)]
    dataframe(per_ref, hide_index=True, width="stretch", column_config=config, numbers=numbers)
    st.caption(
        f"Length penalty = exp(−(Δ bigrams)² / (2σ²)); the candidate has {details.vector.length} "
        "bigram(s). Each similarity is already multiplied by its length penalty."
    )

    st.markdown("**Candidate n-grams and their tf-idf weights**")
    order = order_radio(orders, key)
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
    dataframe(
        table,
        hide_index=True,
        width="stretch",
        numbers=["idf", "weight (count × idf)"],
    )


@explain.register
def _cider_why(a: CiderDetails, b: CiderDetails, key: str) -> str:
    def orders(d: CiderDetails) -> str:
        return " ".join(f"{format_number(s)}" for s in d.per_order)

    return (
        "tf-idf similarity to the references per n-gram order 1–4 (rare shared n-grams weigh "
        f"most): A {orders(a)}; B {orders(b)}"
    )


def idf_source_label(source: str) -> str:
    """Where CIDEr-D counted rarity, in the panel's words (a Systems table's registered set,
    ``set-...``, was called "COCO val2014").

    >>> idf_source_label("corpus"), idf_source_label("set-0123abcd")
    ('the scored set', "the Systems table's references")
    """
    return {"corpus": "the scored set", "coco-val2014": "COCO val2014"}.get(
        source, "the Systems table's references"
    )
