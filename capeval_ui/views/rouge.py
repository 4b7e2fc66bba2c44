"""The ROUGE-L panel: the longest common subsequence against each reference."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from capeval_core.metrics.rouge import RougeDetails
from capeval_core.results import MetricResult, SegmentScore
from capeval_ui.views.common import (
    INTROS,
    TERMS,
    bar_chart,
    dataframe,
    explain,
    format_number,
    reference_picker,
    render_details,
    show_tokens,
    token_strip,
)

INTROS["rouge_l"] = (
    "ROUGE-L finds the longest sequence of the candidate's words that also appear in a "
    "reference in the same order (not necessarily side by side)."
)
TERMS["rouge_l"] = (
    ("LCS", "longest common subsequence: words in the same order, gaps allowed"),
    (
        "P, R, F",
        (
            "LCS / candidate length, LCS / reference length, and their weighted harmonic mean (β "
            "= 1.2)"
        ),
    ),
)


@render_details.register
def _rouge(details: RougeDetails, segment: SegmentScore, result: MetricResult, key: str) -> None:
    beta = dict(result.signature.options).get("beta", 1.2)
    p_col, r_col, f_col = st.columns(3)
    # short labels: three to a row fit side by side at 1,280 px; the help says the rest
    p_col.metric(
        "P", format_number(details.precision), help="LCS / candidate length, best reference"
    )
    r_col.metric("R", format_number(details.recall), help="LCS / reference length, best reference")
    f_col.metric(
        f"F (β = {beta:g})", format_number(details.f_measure), help="ROUGE-L: P and R combined"
    )
    st.caption(
        "Precision = LCS / candidate length and recall = LCS / reference length are maximised "
        "over the references independently (possibly from different references), then "
        "combined: F = (1 + β²)·P·R / (R + β²·P)."
    )
    best = details.best_reference
    refs = details.references
    # the table across the panel (a caption per row needs the width), its chart below
    frame = pd.DataFrame(
        {
            "reference": [
                f"#{i + 1}" + (" (highest F)" if i == best else "") for i in range(len(refs))
            ],
            "LCS": [r.lcs for r in refs],
            "P": [r.precision for r in refs],
            "R": [r.recall for r in refs],
            "F": [r.f_measure for r in refs],
            "text": [" ".join(r.tokens) for r in refs],
        }
    )
    dataframe(frame, hide_index=True, width="stretch", numbers=["P", "R", "F"])
    bar_chart(
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
    texts = (tuple(details.candidate), tuple(tuple(r.tokens) for r in details.references))
    chosen = reference_picker(len(details.references), best, "highest F", texts, key=key)
    if chosen is None:  # only when there is no reference
        return
    pairs = details.lcs_pairs(chosen)
    reference = details.references[chosen]
    ref_row = f"reference #{chosen + 1}"
    show_tokens(
        token_strip(
            {"candidate": details.candidate, ref_row: reference.tokens},
            {"candidate": [i for i, _ in pairs], ref_row: [j for _, j in pairs]},
        )
    )
    st.text(f"LCS ({reference.lcs} tokens): " + " ".join(details.candidate[i] for i, _ in pairs))


@explain.register
def _rouge_why(a: RougeDetails, b: RougeDetails, key: str) -> str:
    def best(d: RougeDetails) -> str:
        lcs = max((r.lcs for r in d.references), default=0)
        p, r = format_number(d.precision), format_number(d.recall)
        return f"{lcs} of {len(d.candidate)} words in order (P {p}, R {r})"

    return f"longest common subsequence with a reference: A {best(a)}; B {best(b)}"
