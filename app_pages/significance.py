"""Significance: the Williams test between every pair of metrics (seed Fig. 4b), one- or
two-sided, on the chosen correlation; and the test for one pair with its arithmetic."""

from __future__ import annotations

import streamlit as st

from capeval_core import CapevalError
from capeval_core.stats import METHODS
from capeval_ui import cached, choices, meta_views, state, views
from capeval_ui.views import key_label

TITLE = "Significance"
ALTERNATIVES = ["greater", "two-sided"]
PARAMS = state.significance_params(list(METHODS), ALTERNATIVES)
st.title(TITLE)
st.caption(
    "Is one metric's correlation with people really stronger than another's, or could the "
    "difference be chance? The Williams test answers for two correlations measured on the "
    "same captions (a small p-value: the difference is unlikely to be chance). It compares "
    "absolute correlations (|r|, as WMT's), so a distance, where lower is better, counts by "
    "its strength."
)
state.say_rejected(state.restore(PARAMS))
jset, loaded = meta_views.set_or_stop("graded")

keys = meta_views.metric_picker(jset.external_names)
left, middle, right = st.columns(3)
state.valid_choice("human_column", list(jset.score_names))
human_name = left.selectbox("Human score", list(jset.score_names), key="human_column")
state.valid_choice("williams_correlation", list(METHODS), f"kendall_{jset.kendall_variant}")
correlation = middle.selectbox(
    "Correlation",
    list(METHODS),
    key="williams_correlation",
    format_func=meta_views.METHOD_LABELS.get,
)
alternative = right.radio("Test", ALTERNATIVES, key="williams_alternative", horizontal=True)
link, set_shown = meta_views.set_link(jset, loaded, TITLE, PARAMS)
if len(keys) < 2:
    st.warning("Choose at least two metrics to compare.")
    st.stop()

try:
    tokenizer, jset, scores = meta_views.scored_on_common_items(jset, keys)
    matrix = cached.williams(
        jset.content_digest,
        tuple(scores.keys),
        tokenizer,
        human_name,
        correlation,
        alternative,
        _jset=jset,
        _scores=scores,
    )
except CapevalError as exc:
    st.error(choices.page_message(str(exc)))
    st.stop()

st.subheader("p-value matrix")
if jset.resampling_groups() is not None:  # Flickr8k-Expert's published rows, one per expert
    st.warning(
        "This set gives a caption several rows (one per annotator): the test counts each row "
        "as an independent item, so its p-values are too small. Test on one row per caption "
        "(Flickr8k-Expert: the mean-of-experts preset)."
    )
meta_views.render_williams_matrix(matrix, scores.signatures, meta_views.set_about(jset, human_name))

st.subheader("One pair, with the arithmetic")
pick_a, pick_b = st.columns(2)
ordered = list(matrix.metrics)
state.valid_choice("pair_a", ordered, ordered[0])
state.valid_choice("pair_b", ordered, ordered[min(1, len(ordered) - 1)])
a = pick_a.selectbox("Metric A", ordered, key="pair_a", format_func=key_label)
b = pick_b.selectbox("Metric B", ordered, key="pair_b", format_func=key_label)
views.show_link(link, TITLE, state.write(PARAMS, set_shown))
if a == b:
    st.warning("Choose two different metrics.")
    st.stop()
result = cached.williams_pair(
    jset.content_digest,
    tokenizer,
    human_name,
    a,
    b,
    correlation,
    alternative,
    _jset=jset,
    _scores=scores,
)
meta_views.render_williams_detail(result, a, b, correlation)
