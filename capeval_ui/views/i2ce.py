"""The I²CE panel: sentence-vector cosines and out-of-vocabulary words."""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from capeval_core.files import counted
from capeval_core.metrics.i2ce import I2CEDetails
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

INTROS["i2ce"] = (
    "I²CE reads each caption with a small neural network trained on captions, turns it into one "
    "sentence vector, and compares the vectors."
)
TERMS["i2ce"] = (
    ("encoder", "the GRU half of an autoencoder trained here to rebuild captions"),
    ("<unk>", "the token a word missing from the network's vocabulary is read as"),
)


# -- I²CE ---------------------------------------------------------------------------------------
@render_details.register
def _i2ce(details: I2CEDetails, segment: SegmentScore, result: MetricResult, key: str) -> None:
    if details.note:
        st.info(details.note, icon=":material/info:")
    n = len(details.cosines)
    pooling = dict(result.signature.options).get("pooling", "mean")
    st.metric(f"I²CE: mean cosine over {counted(n, 'reference')}", format_number(segment.value))
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
    dataframe(
        pd.DataFrame(rows),
        hide_index=True,
        width="stretch",
        numbers=["cosine"],
        column_config={
            "cosine": st.column_config.Column(
                help="cosine between this sentence vector and the candidate's"
            ),
            "out of vocabulary": st.column_config.TextColumn(
                help="words missing from the encoder's vocabulary (encoded as <unk>)"
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
    oov = [*details.candidate.unknown, *(w for r in details.references for w in r.unknown)]
    if not oov:
        st.caption("Every word is in the encoder's vocabulary.")


@explain.register
def _i2ce_why(a: I2CEDetails, b: I2CEDetails, key: str) -> str:
    def cosines(d: I2CEDetails) -> str:
        return " ".join(f"{format_number(c)}" for c in d.cosines) or "none"

    return f"cosine of sentence vectors with each reference: A {cosines(a)}; B {cosines(b)}"
