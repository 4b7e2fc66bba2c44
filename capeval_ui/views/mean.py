"""The MEAN panel: mean word vectors, cosines and nearest words."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
import streamlit as st

from capeval_core.files import counted
from capeval_core.metrics.mean import MeanDetails
from capeval_core.results import MetricResult, SegmentScore
from capeval_ui.views.common import (
    INTROS,
    TERMS,
    bar_chart,
    dataframe,
    explain,
    format_number,
    panel_columns,
    render_details,
)

INTROS["mean"] = (
    "MEAN averages each caption's word vectors and compares the averages: it hears what a caption"
    " is about, not its word order."
)
TERMS["mean"] = (
    ("mean vector", "the average of the content words' GloVe vectors"),
    ("cosine", "1 when two vectors point the same way, 0 when unrelated"),
)


# -- MEAN ---------------------------------------------------------------------------------------
def _nearest_text(nearest: Sequence[tuple[str, float]]) -> str:
    return ", ".join(f"{w} ({format_number(c)})" for w, c in nearest)


@render_details.register
def _mean(details: MeanDetails, segment: SegmentScore, result: MetricResult, key: str) -> None:
    if details.note:
        st.info(details.note, icon=":material/info:")
    n = len(details.cosines)
    st.metric(f"MEAN: mean cosine over {counted(n, 'reference')}", format_number(segment.value))
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
    dataframe(
        pd.DataFrame(rows),
        hide_index=True,
        width="stretch",
        numbers=["cosine"],
        column_config={
            "cosine": st.column_config.Column(
                help="cosine between this mean vector and the candidate's"
            ),
            # short headers: a grid never wraps one, and a candidate's half of a tab is narrow
            "nearest words to the mean": st.column_config.TextColumn(
                "nearest words",
                help="vocabulary words closest to this side's mean vector (cosine)",
            ),
            "stop words / OOV removed": st.column_config.TextColumn(
                "removed", help="stop words and out-of-vocabulary words, left out of the mean"
            ),
        },
    )
    _, middle, _ = panel_columns([1, 3, 1])
    with middle:
        bar_chart(
            [f"#{i + 1}" for i in range(n)],
            {"cosine": list(details.cosines)},
            "cosine with the candidate",
            key=f"{key}-chart",
        )
    oov = [*details.candidate.oov, *(w for r in details.references for w in r.oov)]
    if oov:
        st.caption("Words missing from the vectors (left out of the means):")
        st.text(" ".join(oov))


@explain.register
def _mean_why(a: MeanDetails, b: MeanDetails, key: str) -> str:
    def cosines(d: MeanDetails) -> str:
        return " ".join(f"{format_number(c)}" for c in d.cosines) or "none"

    return f"cosine of mean word vectors with each reference: A {cosines(a)}; B {cosines(b)}"
