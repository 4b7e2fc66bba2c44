"""The Significance page's drawing: the Williams p-value matrix and one pair's test with its
arithmetic written out."""

from __future__ import annotations

import math
from collections.abc import Mapping

import pandas as pd
import streamlit as st

from capeval_ui.formats import UNDERFLOW_TEXT, exact, format_count
from capeval_ui.meta_views.common import METHOD_LABELS, download_csv, render_heatmap
from capeval_ui.views import cell_width, format_number, format_pvalue, key_label, table


def render_williams_matrix(matrix: object, signatures: Mapping, about: Mapping) -> None:
    """p-values "row metric's |r| beats column metric's" (seed Fig. 4b; absolute correlations,
    as WMT's); green where p < 0.05."""
    frame = matrix.to_frame()
    render_heatmap(
        frame,
        key="williams-heatmap",
        title=f"Williams test p-values ({matrix.alternative}) on "
        f"{METHOD_LABELS[matrix.correlation]}",
        zmin=0,
        zmax=0.1,
        fmt="p",
    )
    negative = [key_label(k) for k, r in matrix.human_correlations.items() if r < 0]
    st.caption(
        "Row metric vs column metric: does the row's |r| beat the column's? The test compares "
        "absolute correlations, as WMT's does, so a metric where lower is better (a distance) "
        "is compared by its strength; metrics ordered by |correlation| with humans. "
        + (
            f"Negatively correlated here: {', '.join(negative)} (its |r| is tested, not a "
            "better metric). "
            if negative
            else ""
        )
        + "".join(
            f"{key_label(a)} and {key_label(b)}, each turned to agree with the humans, "
            f"correlate negatively with each other (r = {r:.4f}): their test takes |r| too, "
            "which makes its p smaller than the test on the signed correlation. "
            for a, b, r in matrix.opposed
        )
        + (
            "One-sided: H1 = the row metric correlates more strongly; — where it correlates "
            "less strongly (not tested, as Graham & Baldwin's script); equal correlations "
            "give t = 0, p = 0.5000 both ways."
            if matrix.alternative == "greater"
            else "Two-sided: H1 = the two correlations differ."
        )
        + f" n = {matrix.n:,} items; darker green = smaller p (scale capped at 0.1)."
    )
    shown = frame.copy()
    shown.index = [key_label(k) for k in shown.index]
    shown.columns = [key_label(k) for k in shown.columns]
    # every column wide enough for its name and the widest p ("< 1e-300": 84 px cut it)
    table(
        shown.reset_index(names="metric"),
        pvalues=list(shown.columns),
        widths={c: cell_width([c, UNDERFLOW_TEXT]) for c in shown.columns},
        key="williams-table",
    )
    corr = pd.DataFrame(
        {
            "metric": [key_label(k) for k in matrix.human_correlations],
            "correlation with humans": list(matrix.human_correlations.values()),
        }
    )
    download_csv(
        frame.reset_index(names="metric"),
        {k: signatures[k] for k in frame.index if k in signatures},
        "williams-pvalues.csv",
        key="williams-csv",
        settings={**about, **matrix.settings()},  # type: ignore[attr-defined]
    )
    table(corr, numbers=("correlation with humans",), key="williams-correlations")


def render_williams_detail(result: object, a: str, b: str, correlation: str) -> None:
    """The Williams test for one pair, with its arithmetic written out."""
    # two formulas, one per line: on one line they ran past the page at 1,280 px
    st.latex(
        r"t = (r_{12} - r_{13})\sqrt{\frac{(n-1)(1+r_{23})}"
        r"{2\frac{n-1}{n-3}|R| + \left(\frac{r_{12}+r_{13}}{2}\right)^2 (1-r_{23})^3}}"
    )
    st.latex(r"|R| = 1 - r_{12}^2 - r_{13}^2 - r_{23}^2 + 2 r_{12} r_{13} r_{23}")
    n, r12, r13, r23 = result.n, result.r12, result.r13, result.r23
    left = 2 * (n - 1) / (n - 3) * result.det_r
    right = ((r12 + r13) / 2) ** 2 * (1 - r23) ** 3
    rows = [
        ("r12 = |corr(human, A)|", r12, f"{METHOD_LABELS[correlation]} of {key_label(a)}"),
        ("r13 = |corr(human, B)|", r13, f"{METHOD_LABELS[correlation]} of {key_label(b)}"),
        ("r23 = |corr(A, B)|", r23, "between the two metrics"),
        ("n", n, "items"),
        (
            "|R|",
            result.det_r,
            f"1 - {r12:.4f}² - {r13:.4f}² - {r23:.4f}² + 2·{r12:.4f}·{r13:.4f}·{r23:.4f}",
        ),
        ("2(n-1)/(n-3)·|R|", left, f"2·{n - 1}/{n - 3}·{result.det_r:.6f}"),
        ("((r12+r13)/2)²(1-r23)³", right, f"({(r12 + r13) / 2:.4f})²·({1 - r23:.4f})³"),
        (
            "t",
            result.statistic,
            f"({r12:.4f} - {r13:.4f})·√({n - 1}·{1 + r23:.4f} / {left + right:.6f})",
        ),
        ("df", result.df, "n - 3"),
        (
            "p",
            result.pvalue,
            ("P(T > t)" if result.alternative == "greater" else "2·P(T > |t|)")
            + f" = {exact(result.pvalue)}",
        ),
    ]
    frame = pd.DataFrame(rows, columns=["quantity", "value", "arithmetic"])
    # n and df are counts (df came as 12.000000); p by the p-value rule; the rest with six
    # decimals, as the arithmetic beside them
    counts = {"n", "df"}
    shown = [
        format_pvalue(v) if q == "p" else format_count(v) if q in counts else format_number(v, 6)
        for q, v, _ in rows
    ]
    # the values stay in the data (a test reads them), not drawn: "result" writes each by the
    # rule, and a second column of the same numbers wrote n and df as 15.000000 and 12.000000
    table(
        frame.assign(shown=shown)[["quantity", "shown", "arithmetic", "value"]].rename(
            columns={"shown": "result"}
        ),
        widths={"arithmetic": "large"},
        hidden=("value",),
        key="williams-detail",
    )
    verdict = (
        "significant at 0.05"
        if math.isfinite(result.pvalue) and result.pvalue < 0.05
        else "not significant at 0.05"
    )
    # the result's own line writes p with four significant digits ("p = 0.5"): the app's
    # rule here, as in the table above it
    st.text(
        f"{key_label(a)} vs {key_label(b)}: Williams t = {format_number(result.statistic)}, "
        f"df = {format_count(result.df)}, p = {format_pvalue(result.pvalue)} "
        f"({result.alternative}) — {verdict}."
    )
