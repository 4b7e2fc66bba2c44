"""Correlations with human judgments: Pearson, Spearman, Kendall τb and τc per metric with
bootstrap intervals; the metric x metric Spearman heatmap (seed Fig. 4a); each metric against
the human scores (a scatter with the captions on hover, and the score distributions per human
grade as box and violin plots, seed Fig. 3); the combined metric over every subset, ranked.
"""

from __future__ import annotations

import streamlit as st

from capeval_core import CapevalError
from capeval_core.stats import METHODS
from capeval_core.stats.within_systems import system_means
from capeval_ui import cached, choices, meta_views, state, views
from capeval_ui.formats import literal
from capeval_ui.views import key_label

TITLE = "Correlations"
PARAMS = state.correlations_params(list(METHODS))
#: the bootstrap resamples the slider offers (a link's other number takes the nearest)
RESAMPLES = [200, 500, 1000, 2000]
st.title(TITLE)
st.caption(
    "How closely does each metric follow the people who judged the captions? A correlation "
    "of 1 means the metric ranks the captions exactly as people do, 0 that it does not "
    "follow them at all."
)
restored = state.restore(PARAMS)
state.nearest_choice("resamples", RESAMPLES)
state.say_rejected(restored)
jset, loaded = meta_views.set_or_stop("graded")

keys = meta_views.metric_picker(jset.external_names)
left, middle, right = st.columns(3)
state.valid_choice("human_column", list(jset.score_names))
human_name = left.selectbox("Human score", list(jset.score_names), key="human_column")
has_systems = any(s is not None for s in jset.systems())
levels = ["item", "system"] if has_systems else ["item"]
state.valid_choice("correlation_level", levels)
level = middle.radio(
    "Level",
    levels,
    key="correlation_level",
    horizontal=True,
    help="System level correlates the per-system means (the set's `system` column).",
)
state.default("resamples", 1000)
n_resamples = right.select_slider("Bootstrap resamples", RESAMPLES, key="resamples")
state.default("ci_kendall", len(jset) <= 5000)
ci_kendall = st.toggle(
    "Bootstrap intervals for Kendall too",
    key="ci_kendall",
    help="Pearson and Spearman intervals are fast; Kendall's take longer on large sets.",
)
state.valid_choice("combined_correlation", list(METHODS), f"kendall_{jset.kendall_variant}")
combined_on = st.selectbox(
    "Correlation for the combined metric",
    list(METHODS),
    key="combined_correlation",
    format_func=meta_views.METHOD_LABELS.get,
)
if keys:
    # the metric drawn against the human scores, chosen further down, before it is drawn
    state.valid_choice("distribution_metric", list(keys), keys[0])
link, set_shown = meta_views.set_link(jset, loaded, TITLE, PARAMS)
if not keys:
    st.warning("Choose at least one metric.")
    st.stop()

try:
    tokenizer, jset, scores = meta_views.scored_on_common_items(jset, keys)
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
    st.error(choices.page_message(str(exc)))
    st.stop()

st.subheader("Correlation with humans")
human_values = jset.human(human_name)
if human_values.size and (human_values == human_values[0]).all():
    st.warning(
        f"The human score {literal(repr(human_name))} is {human_values[0]:g} for every caption: no "
        "correlation with it is defined (the table shows —)."
    )
meta_views.render_correlation_chart(report)
about = meta_views.set_about(jset)  # named in the downloads' signatures files
meta_views.render_correlation_table(report, jset.kendall_variant, scores.signatures, about)

st.subheader("Metric × metric Spearman ρ")
meta_views.render_spearman_heatmap(report)

st.subheader("Each metric against the human scores")
st.caption(
    "One point per caption (hover for the caption); below, the metric's scores for each "
    "human grade: box plots give the median, quartiles and mean, violin plots the whole "
    "distribution (seed Fig. 3)."
)
state.valid_choice("distribution_metric", list(scores.keys))
shown = st.selectbox("Metric", list(scores.keys), key="distribution_metric", format_func=key_label)
views.show_link(link, TITLE, state.write(PARAMS, set_shown))
if shown and level == "system":
    # the statistics above are on system means, so is this plot: one point per system
    systems = jset.systems()
    names, human_means = system_means(jset.human(human_name), systems)
    _, metric_means = system_means(scores.values[shown], systems)
    st.caption("System level: one point per system (its mean human and metric scores).")
    meta_views.render_scatter(
        human_means, metric_means, list(names), shown, f"{human_name} (system mean)", jitter=False
    )
elif shown:
    human = jset.human(human_name)
    meta_views.render_scatter(human, scores.values[shown], jset.candidates, shown, human_name)
    meta_views.render_distribution(human, scores.values[shown], shown, human_name)

st.subheader("Combined metric")
st.caption(
    "Each metric min–max normalised over this set, then averaged over a subset; every "
    "subset ranked by its |correlation| with humans, with the Williams p-value against the "
    "best single metric (one-sided, on absolute correlations as WMT's)."
)
meta_views.render_combined(report, scores.signatures, about)
