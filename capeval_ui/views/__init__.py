"""Drawing results: one module per metric's panel, plus the shared pieces and page views.

``render_details`` (in :mod:`~capeval_ui.views.common`) dispatches on the class of a segment's
details (``functools.singledispatch``); each metric module registers its panel, so a new metric
adds one module here and no page changes (house style, "Pages stay thin"). Unknown details
fall back to the segment's scores. Pages use ``from capeval_ui import views`` and
``views.<function>``; importing the package registers every panel.

User text (captions, tokens, n-grams) is only ever shown through ``st.text``, ``st.code``,
widget values and dataframe cells, which display text literally. It never goes into markdown
(which interprets ``*``, ``_``, ``[..](..)``, ``$``) and never into HTML. Plotly interprets
``<b>``, ``<a href>``, ``<br>`` in text, labels and hover text, so a word drawn in a figure
always goes through :func:`plot_text` (``html.escape``) first. The one piece of HTML the
views send is a constant style sheet (:func:`candidate_pair`'s), with no user text in it.
"""

from __future__ import annotations

from capeval_ui.views import bleu, cider, i2ce, mean, meteor, rouge, spice, wmd
from capeval_ui.views.common import (
    EMPTY,
    INTROS,
    MATCH_STYLE,
    NARROW_STRIP_PX,
    candidate_pair,
    cell_width,
    evidence_tab,
    explain,
    forget_stale_references,
    format_number,
    format_percent,
    format_pvalue,
    format_signed,
    in_app_words,
    key_label,
    plot_text,
    render_details,
    show_tokens,
    side_by_side,
    signature_block,
    table,
    token_strip,
)
from capeval_ui.views.compare import comparison_frame, render_comparison, winner
from capeval_ui.views.meteor import MODULE_COLOURS, meteor_alignment_figure
from capeval_ui.views.overview import (
    EVIDENCE_MAX_WORDS,
    MAX_WORDS,
    copy_link,
    input_problems,
    longest_caption,
    page_link,
    render_card,
    render_inventory,
    render_metric,
    render_registry,
    render_score_table,
    render_scoring_errors,
    render_summary,
    show_link,
    split_lines,
)
from capeval_ui.views.spice import spice_graph_figure, spice_label_layout, spice_layout
from capeval_ui.views.wmd import matrix_figure, wmd_sankey_figure

#: the panel modules, one per metric (imported for their ``render_details`` registrations)
PANELS = (bleu, rouge, cider, meteor, wmd, mean, spice, i2ce)

__all__ = [
    "EMPTY",
    "EVIDENCE_MAX_WORDS",
    "INTROS",
    "MATCH_STYLE",
    "MAX_WORDS",
    "MODULE_COLOURS",
    "NARROW_STRIP_PX",
    "PANELS",
    "candidate_pair",
    "cell_width",
    "comparison_frame",
    "copy_link",
    "evidence_tab",
    "explain",
    "forget_stale_references",
    "format_number",
    "format_percent",
    "format_pvalue",
    "format_signed",
    "in_app_words",
    "input_problems",
    "key_label",
    "longest_caption",
    "matrix_figure",
    "meteor_alignment_figure",
    "page_link",
    "plot_text",
    "render_card",
    "render_comparison",
    "render_details",
    "render_inventory",
    "render_metric",
    "render_registry",
    "render_score_table",
    "render_scoring_errors",
    "render_summary",
    "show_link",
    "show_tokens",
    "side_by_side",
    "signature_block",
    "spice_graph_figure",
    "spice_label_layout",
    "spice_layout",
    "split_lines",
    "table",
    "token_strip",
    "winner",
    "wmd_sankey_figure",
]
