"""Drawing the meta-evaluation pages: one module per page, as ``capeval_ui.views`` has one per
metric's panel (issue 43). The pages read widgets, call ``capeval_ui.cached`` once and hand
the result here; their state (the URL, the kept metric choice, the set a link names) lives in
``capeval_ui.state``.

- :mod:`~capeval_ui.meta_views.common`: the set a page works on, the metric picker, CSV
  downloads, the chart layout, heatmaps
- :mod:`~capeval_ui.meta_views.judgments`: formats and templates, validation, preview, scores
- :mod:`~capeval_ui.meta_views.correlations`: correlations, scatter, distributions, the
  combined metric
- :mod:`~capeval_ui.meta_views.significance`: Williams tests
- :mod:`~capeval_ui.meta_views.accuracy`: pairwise and forced-choice accuracy

User text (captions, file and column names, categories) is shown only in dataframes and
``st.text``, never in markdown or HTML; where it labels a plotly chart it is passed through
``html.escape`` first (plotly interprets ``<b>``, ``<a href>``, ``<br>``).
"""

from __future__ import annotations

from capeval_ui.meta_views.accuracy import (
    ACCURACY_BAR_PX,
    render_forced_choice,
    render_pairwise,
)
from capeval_ui.meta_views.common import (
    METHOD_LABELS,
    METRICS_KEY,
    download_csv,
    external_not_offered,
    find_set,
    heatmap_text,
    metric_picker,
    render_heatmap,
    render_left_out,
    render_missing_set,
    render_notes,
    render_set_banner,
    scored_on_common_items,
    set_about,
    set_for,
    set_link,
    set_or_stop,
    stop_if_linked_set_missing,
)
from capeval_ui.meta_views.correlations import (
    SCATTER_POINTS,
    grade_bins,
    render_combined,
    render_correlation_chart,
    render_correlation_table,
    render_distribution,
    render_scatter,
    render_spearman_heatmap,
    violin_span,
)
from capeval_ui.meta_views.judgments import (
    FORMAT_HELP,
    TEMPLATE_TYPES,
    render_format_help,
    render_preview,
    render_scores,
    render_validation,
    scores_frame,
    template,
)
from capeval_ui.meta_views.significance import render_williams_detail, render_williams_matrix

__all__ = [
    "ACCURACY_BAR_PX",
    "FORMAT_HELP",
    "METHOD_LABELS",
    "METRICS_KEY",
    "SCATTER_POINTS",
    "TEMPLATE_TYPES",
    "download_csv",
    "external_not_offered",
    "find_set",
    "grade_bins",
    "heatmap_text",
    "metric_picker",
    "render_combined",
    "render_correlation_chart",
    "render_correlation_table",
    "render_distribution",
    "render_forced_choice",
    "render_format_help",
    "render_heatmap",
    "render_left_out",
    "render_missing_set",
    "render_notes",
    "render_pairwise",
    "render_preview",
    "render_scatter",
    "render_scores",
    "render_set_banner",
    "render_spearman_heatmap",
    "render_validation",
    "render_williams_detail",
    "render_williams_matrix",
    "scored_on_common_items",
    "scores_frame",
    "set_about",
    "set_for",
    "set_link",
    "set_or_stop",
    "stop_if_linked_set_missing",
    "template",
    "violin_span",
]
