"""Pairwise accuracy, PASCAL-50S style: how often each metric prefers the caption people
preferred, per category (HC, HI, HM, MM), with the protocol's knobs in view."""

from __future__ import annotations

import streamlit as st

from capeval_core import CapevalError
from capeval_core.judgments.protocols import (
    GENERIC,
    accuracy_signature,
    label_counts,
    missing_labels_warning,
    protocol_for,
)
from capeval_ui import cached, choices, meta_views, state

METRIC_TIES, HUMAN_TIES = ["half", "correct", "wrong"], ["random", "drop"]

TITLE = "Pairwise accuracy"
PARAMS = state.pairwise_params(METRIC_TIES, HUMAN_TIES)
st.title(TITLE)
state.say_rejected(state.restore(PARAMS))
jset, loaded = meta_views.set_or_stop("pairwise")
missing = missing_labels_warning(jset)
if missing:
    st.warning(choices.page_message(missing))
if label_counts(jset)[1] == 0:
    st.stop()  # no chart of nothing

keys = meta_views.metric_picker(jset.external_names)
protocol = protocol_for(jset)
if protocol is GENERIC:
    st.caption(
        "Published protocol (Vedantam et al. 2015): 5 references sampled per pair, averaged "
        "over 5 draws; a metric tie counts as half; human ties broken at random (seeded)."
    )
else:
    st.text(f"Preset {jset.preset}: {protocol.description}.")  # the knobs start from it
    if protocol.note:
        with st.expander("Note on this preset"):
            st.text(protocol.note)
most = max(len(it.references) for it in jset.items)
preset_refs, preset_draws = protocol.sampling
state.default("n_references", preset_refs if preset_refs <= max(50, most) else most)
state.default("draws", preset_draws)
state.default("seed", 0)
state.default("metric_tie", protocol.metric_tie)
state.default("human_tie", protocol.human_tie)
state.clamp("n_references", 1, max(50, most))
c1, c2, c3, c4, c5 = st.columns(5)
n_references = c1.number_input("References per pair", 1, max(50, most), key="n_references")
draws = c2.number_input("Draws", 1, 20, key="draws")
seed = c3.number_input("Seed", 0, state.SEED_MAX, key="seed")
metric_tie = c4.selectbox(
    "Metric tie",
    METRIC_TIES,
    key="metric_tie",
    help="Credit for equal scores.",
)
human_tie = c5.selectbox(
    "Human tie",
    HUMAN_TIES,
    key="human_tie",
    help="Pairs with equal votes.",
)
meta_views.set_link(jset, loaded, TITLE, PARAMS)
if not keys:
    st.warning("Choose at least one metric.")
    st.stop()

try:
    tokenizer, jset, scores = meta_views.scored_on_common_items(
        jset, keys, int(n_references), int(draws), int(seed)
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
    st.error(choices.page_message(str(exc)))
    st.stop()

signatures = {
    k: accuracy_signature(
        scores.signatures[k],
        jset,
        n_references=int(n_references),
        draws=int(draws),
        seed=int(seed),
        metric_tie=metric_tie,
        human_tie=human_tie,
    )
    for k in scores.keys
}
meta_views.render_pairwise(results, signatures, int(draws), meta_views.set_about(jset))
