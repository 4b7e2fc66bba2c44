"""Correlations with human judgments: Pearson, Spearman, Kendall τb and τc per metric with
bootstrap intervals; the metric x metric Spearman heatmap (seed Fig. 4a); score
distributions per human grade (seed Fig. 3); the combined metric over every subset, ranked.
"""

from __future__ import annotations

import streamlit as st

from capeval_core import CapevalError
from capeval_core.stats import METHODS
from capeval_ui import cached, current_tokenizer, meta_views
from capeval_ui.views import key_label

st.title("Correlations")
jset = meta_views.set_or_stop("graded")

keys = meta_views.metric_picker()
left, middle, right = st.columns(3)
human_name = left.selectbox("Human score", list(jset.score_names), key="human_column")
has_systems = any(s is not None for s in jset.systems())
level = middle.radio(
    "Level",
    ["item", "system"] if has_systems else ["item"],
    key="correlation_level",
    horizontal=True,
    help="System level correlates the per-system means (the set's `system` column).",
)
n_resamples = right.select_slider(
    "Bootstrap resamples", [200, 500, 1000, 2000], value=1000, key="resamples"
)
ci_kendall = st.toggle(
    "Bootstrap intervals for Kendall too",
    value=len(jset) <= 5000,
    key="ci_kendall",
    help="Pearson and Spearman intervals are fast; Kendall's take longer on large sets.",
)
combined_on = st.selectbox(
    "Correlation for the combined metric",
    list(METHODS),
    index=list(METHODS).index(f"kendall_{jset.kendall_variant}"),
    key="combined_correlation",
    format_func=meta_views.METHOD_LABELS.get,
)
if not keys:
    st.warning("Choose at least one metric.")
    st.stop()

try:
    tokenizer = current_tokenizer()
    scores = cached.judgment_scores(jset.content_digest, keys, tokenizer, _jset=jset)
    report = cached.correlation_report(
        jset.content_digest,
        tuple(scores.keys),
        tokenizer,
        human_name,
        level,
        n_resamples,
        0,
        ci_kendall,
        combined_on,
        _jset=jset,
        _scores=scores,
    )
except CapevalError as exc:
    st.error(str(exc))
    st.stop()

st.subheader("Correlation with humans")
meta_views.render_correlation_chart(report)
meta_views.render_correlation_table(report, jset.kendall_variant, scores.signatures)

st.subheader("Metric × metric Spearman ρ")
meta_views.render_spearman_heatmap(report)

st.subheader("Scores per human grade")
shown = st.selectbox("Metric", list(scores.keys), key="distribution_metric", format_func=key_label)
if shown:
    meta_views.render_distribution(jset.human(human_name), scores.values[shown], shown, human_name)

st.subheader("Combined metric")
st.caption(
    "Each metric min–max normalised over this set, then averaged over a subset; every "
    "subset ranked by its correlation with humans, with the Williams p-value against the "
    "best single metric (one-sided)."
)
meta_views.render_combined(report)
