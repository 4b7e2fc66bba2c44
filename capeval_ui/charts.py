"""How the app's plotly charts write numbers and share axes: one rule for every page.

Value labels follow ``capeval_ui.formats`` as the tables do (four decimals, ``< 0.001`` for a
value closer to 0), and the exact value is in the hover label. A label that does not fit
beside its bar is hidden rather than written over its neighbour's (``0.8890.889``, issue 42):
plotly shrinks an outside label to its bar's width and :data:`UNIFORM_TEXT` hides one it
would have to make smaller than a readable size. Metrics whose ranges differ by an order of
magnitude (CIDEr-D's 0–10 beside BLEU's 0–1) get an axis each (:func:`scale_groups`), so
neither is flattened.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import plotly.graph_objects as go

from capeval_ui.formats import DIGITS, hover_texts, label_texts

#: labels smaller than this (px) to fit their bar are hidden, never drawn over another's
UNIFORM_TEXT = {"minsize": 10, "mode": "hide"}


def bar_labels(values: Sequence[float], digits: int = DIGITS) -> dict[str, object]:
    """Keyword arguments of a bar trace writing each value beside its bar by the app's rule,
    with the exact value on hover (add ``hovertemplate`` with ``%{customdata}``)."""
    return {
        "text": label_texts(values, digits),
        "texttemplate": "%{text}",
        "textposition": "outside",
        "constraintext": "both",
        "cliponaxis": False,
        "customdata": hover_texts(values),
    }


def readable(fig: go.Figure) -> go.Figure:
    """Plain decimals in ticks and hover labels (never SI prefixes, "72.59795μ"), and bar
    labels that hide rather than collide."""
    fig.update_layout(uniformtext=UNIFORM_TEXT)
    fig.update_yaxes(hoverformat=".4f", exponentformat="e")
    fig.update_xaxes(exponentformat="e")
    return fig


def metric_scale(key: str) -> float:
    """The upper end of a metric's range, as the axis it is drawn on: 1 for the metrics in
    [0, 1], 10 for CIDEr-D; 1 for a metric the registry does not know (an external one) or
    whose range is open.

    >>> metric_scale("bleu_4"), metric_scale("cider_d"), metric_scale("mine")
    (1.0, 10.0, 1.0)
    """
    from capeval_core.errors import UnknownKeyError
    from capeval_core.metrics import metric_class

    try:
        low, high = metric_class(key).bounds
    except UnknownKeyError:
        return 1.0
    top = max(abs(low), abs(high))
    return float(top) if math.isfinite(top) and top > 0 else 1.0


def scale_groups(keys: Sequence[str]) -> list[tuple[float, list[str]]]:
    """``keys`` grouped by :func:`metric_scale`, smallest scale first: one axis each.

    >>> scale_groups(["bleu_4", "cider_d", "rouge_l"])
    [(1.0, ['bleu_4', 'rouge_l']), (10.0, ['cider_d'])]
    """
    groups: dict[float, list[str]] = {}
    for key in keys:
        groups.setdefault(metric_scale(key), []).append(key)
    return sorted(groups.items())


def scale_title(scale: float, keys: Sequence[str], labels: Sequence[str]) -> str:
    """An axis title naming the metrics drawn on it and their range.

    >>> scale_title(10.0, ["cider_d"], ["CIDEr-D"])
    'CIDEr-D (0–10 scale)'
    """
    names = ", ".join(labels) if len(labels) <= 2 else "other metrics"
    return f"{names} (0–{scale:g} scale)"


def scaled_axes(
    fig: go.Figure,
    groups: Sequence[tuple[float, Sequence[float], str]],
    *,
    pad: float = 0.12,
) -> None:
    """Give each scale group of a chart its own y axis (the first on the left, the second on
    the right, overlaid), with 0 at the same height and the ranges in the ratio of the
    scales, so bars of the two groups compare as shares of their ranges and neither group
    is flattened. ``groups``: (scale, the values drawn on it, axis title), smallest scale
    first; at most two. Traces of group ``i`` are drawn with ``yaxis="y"`` or ``"y2"``
    (:func:`axis_of`)."""
    if not groups:
        return
    base = groups[0][0]
    # every value in units of the first axis: the one range both axes show
    spans = [v * base / scale for scale, values, _ in groups for v in values if math.isfinite(v)]
    low, high = min([0.0, *spans]), max([0.0, *spans])
    room = (high - low) * pad or base * pad
    low, high = low - (room if low < 0 else 0), high + room
    fig.update_layout(yaxis={"title": groups[0][2], "range": [low, high]})
    if len(groups) > 1:
        scale, _, title = groups[1]
        ratio = scale / base
        fig.update_layout(
            yaxis2={
                "title": title,
                "range": [low * ratio, high * ratio],
                "overlaying": "y",
                "side": "right",
                "showgrid": False,
                "hoverformat": ".4f",
                "exponentformat": "e",
            }
        )


def axis_of(group: int) -> str:
    """The y axis of scale group ``group`` (:func:`scaled_axes`).

    >>> axis_of(0), axis_of(1)
    ('y', 'y2')
    """
    return "y" if group == 0 else f"y{group + 1}"
