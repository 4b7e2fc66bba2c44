"""Pairwise accuracy, PASCAL-50S style: how often each metric prefers the caption people
preferred, per category (HC, HI, HM, MM), with the protocol's knobs in view."""

from __future__ import annotations

import streamlit as st

from capeval_core import CapevalError
from capeval_ui import cached, current_tokenizer, meta_views, state

st.title("Pairwise accuracy")
jset = meta_views.set_or_stop("pairwise")

keys = meta_views.metric_picker()
st.caption(
    "Published protocol (Vedantam et al. 2015): 5 references sampled per pair, averaged "
    "over 5 draws; a metric tie counts as half; human ties broken at random (seeded)."
)
state.default("n_references", cached.PASCAL_REFERENCES)
state.default("draws", cached.PASCAL_DRAWS)
state.default("seed", 0)
c1, c2, c3, c4, c5 = st.columns(5)
n_references = c1.number_input("References per pair", 1, 50, key="n_references")
draws = c2.number_input("Draws", 1, 20, key="draws")
seed = c3.number_input("Seed", 0, 2**31 - 1, key="seed")
metric_tie = c4.selectbox(
    "Metric tie", ["half", "correct", "wrong"], key="metric_tie", help="Credit for equal scores."
)
human_tie = c5.selectbox(
    "Human tie", ["random", "drop"], key="human_tie", help="Pairs with equal votes."
)
if not keys:
    st.warning("Choose at least one metric.")
    st.stop()

try:
    tokenizer = current_tokenizer()
    scores = cached.judgment_scores(
        jset.content_digest, keys, tokenizer, int(n_references), int(draws), int(seed), _jset=jset
    )
    results = cached.pairwise_report(
        jset.content_digest,
        tuple(scores.keys),
        tokenizer,
        int(n_references),
        int(draws),
        int(seed),
        metric_tie,
        human_tie,
        _jset=jset,
        _scores=scores,
    )
except CapevalError as exc:
    st.error(str(exc))
    st.stop()

meta_views.render_pairwise(results, scores.signatures, int(draws))
