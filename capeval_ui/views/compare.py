"""Two candidates against the same references: which one each metric scores higher, and why.

The "why" of a metric is the registered :func:`~capeval_ui.views.common.explain` of its panel
module (clipped n-gram counts for BLEU, the alignment for METEOR, the tuples for SPICE, ...).
"""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd
import streamlit as st
from pandas.io.formats.style import Styler

from capeval_core.files import counted
from capeval_core.metrics import metric_class
from capeval_core.results import MetricResult
from capeval_ui.formats import exact, is_small, literal
from capeval_ui.views.common import (
    explain,
    format_number,
    format_signed,
    key_label,
    no_contest,
)

#: scores closer than this are a tie (the metrics print 4 decimals)
TIE = 1e-9


def winner(a: float, b: float, higher_is_better: bool = True) -> str:
    """``"A"``, ``"B"`` or ``"tie"``: which candidate the metric prefers.

    >>> winner(0.5, 0.25), winner(0.5, 0.25, higher_is_better=False), winner(1.0, 1.0)
    ('A', 'B', 'tie')
    """
    if abs(a - b) <= TIE:
        return "tie"
    return "A" if (a > b) == higher_is_better else "B"


def comparison_frame(
    results_a: Mapping[str, MetricResult], results_b: Mapping[str, MetricResult]
) -> pd.DataFrame:
    """One row per key both candidates have: both scores, the difference, the preferred
    candidate and the evidence behind it."""
    rows = []
    for key, a in results_a.items():
        b = results_b.get(key)
        if b is None:
            continue
        cls = metric_class(key)
        why = floor = ""
        if a.segments and b.segments:
            why = explain(a.segments[0].details, b.segments[0].details, key)
            floor = no_contest(a.segments[0].details, b.segments[0].details, key)
        rows.append(
            {
                "metric": key_label(key),
                "A": a.value,
                "B": b.value,
                "A − B": a.value - b.value,
                "higher": "tie" if floor else winner(a.value, b.value, cls.higher_is_better),
                "why": f"{floor}; {why}" if floor and why else floor or why,
            }
        )
    return pd.DataFrame(rows, columns=["metric", "A", "B", "A − B", "higher", "why"])


def render_comparison(
    results_a: Mapping[str, MetricResult], results_b: Mapping[str, MetricResult]
) -> None:
    """The metric-by-metric verdict: a count, then the table (numbers and evidence)."""
    frame = comparison_frame(results_a, results_b)
    counts = frame["higher"].value_counts()
    n_a, n_b, n_tie = (int(counts.get(k, 0)) for k in ("A", "B", "tie"))
    st.markdown(
        f"**A scores higher on {n_a} of {len(frame)} metrics, B on {n_b}"
        + (f", {counted(n_tie, 'tie')}" if n_tie else "")
        + ".** Each row says what the metric counted for each candidate."
    )
    st.table(comparison_styler(frame))


def comparison_styler(frame: pd.DataFrame) -> Styler:
    """The verdict as a static table: every row and the whole "why" in view (no user text in
    it); a value written "< 0.001" shows its exact value on hover (a static table's cells
    take tooltips). A static table reads its cells as Markdown, so the numbers are escaped:
    "> −0.001" was a quote block showing "−0.001"."""
    numbers = {"A": format_number, "B": format_number, "A − B": format_signed}
    styler = frame.style.format(
        {column: (lambda v, f=f: literal(f(v))) for column, f in numbers.items()}
    ).hide(axis="index")
    tips = pd.DataFrame("", index=frame.index, columns=frame.columns)
    for column in numbers:
        tips[column] = [f"exactly {exact(v)}" if is_small(v) else "" for v in frame[column]]
    if tips.to_numpy().any():
        styler = styler.set_tooltips(tips)
    return styler
