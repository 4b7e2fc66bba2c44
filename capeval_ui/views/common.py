"""Shared pieces of the views: labels, token strips, small charts, the details dispatch."""

from __future__ import annotations

import contextlib
import contextvars
import functools
import html
import math
from collections.abc import Hashable, Iterable, Iterator, Mapping, Sequence
from typing import Any

import pandas as pd
import plotly.graph_objects as go
import streamlit as st
from pandas.io.formats.style import Styler

from capeval_core.metrics import metric_class
from capeval_core.results import MetricResult, SegmentScore
from capeval_ui import charts, state
from capeval_ui.formats import (
    EMPTY,
    format_count,
    format_number,
    format_percent,
    format_pvalue,
    format_share,
    format_signed,
    is_small,
)

MATCH_STYLE = "background-color: #b7e4c7; color: #081c15; font-weight: 600"
BLUE, ORANGE, GREEN = "#1f77b4", "#ff7f0e", "#2ca02c"


# -- shared pieces ---------------------------------------------------------------------------
def key_label(key: str) -> str:
    """Display name of a reported key: ``bleu_2`` -> "BLEU-2", ``cider_d`` -> "CIDEr-D"; an
    external metric of a judgment set (not in the registry) keeps its own name."""
    from capeval_core.errors import UnknownKeyError

    try:
        return metric_class(key).label(key)
    except UnknownKeyError:
        return f"{key} (external)"


def direction(higher_is_better: bool) -> str:
    return "higher is better" if higher_is_better else "lower is better"


def value_range(bounds: tuple[float, float]) -> str:
    """``"−1 – 1"``: a minus sign, as the cards and their help write it, not a hyphen."""
    return f"{bounds[0]:g} – {bounds[1]:g}".replace("-", "−")


#: whether the panels being drawn are half the page wide (two candidates side by side)
_NARROW: contextvars.ContextVar[bool] = contextvars.ContextVar("narrow_panels", default=False)


@contextlib.contextmanager
def side_by_side() -> Iterator[None]:
    """Draw the panels inside as one of the two of :func:`candidate_pair`: their inner columns
    stack, since a quarter of the page cuts tables and charts (issue 34), and their tables
    fit :data:`NARROW_TABLE_PX`, the narrowest a half gets."""
    token, budget = _NARROW.set(True), _BUDGET.set(None)
    try:
        yield
    finally:
        _BUDGET.reset(budget)
        _NARROW.reset(token)


#: a tab narrower than this shows the two candidates' panels one above the other (A, then B):
#: half of a tab at 1,280 px (368 px of content) cut CIDEr-D's and METEOR's per-reference
#: tables, whose columns need about 665 px at their narrowest (issue 34). Measured with the
#: sidebar open: a tab is 820 px wide at 1,280 px (stacked) and 1,460 px at 1,920 px (side by
#: side, each half 688 px of content).
PAIR_STACK_PX = 1440
#: the key prefix of :func:`candidate_pair`'s containers (Streamlit gives each the CSS class
#: ``st-key-<key>``)
PAIR_KEY = "candidate-pair"
#: the one style rule of the Compare page: a container query on the width of the pair's own
#: container (not the window's), so a closed or widened sidebar counts too. Only the pair's
#: two columns stack; columns inside a half (the score cards) keep their row.
PAIR_CSS = f"""<style>
[class*="st-key-{PAIR_KEY}-"] {{ container: {PAIR_KEY} / inline-size; }}
@container {PAIR_KEY} (width < {PAIR_STACK_PX}px) {{
  [class*="st-key-{PAIR_KEY}-"] [data-testid="stColumn"]:not(
    [data-testid="stColumn"] [data-testid="stColumn"]
  ) {{ flex: 1 1 100%; min-width: 100%; }}
}}
</style>"""


def candidate_pair(key: str) -> list[Any]:
    """The two bordered columns of candidates A and B in a tab: side by side where the tab is
    at least :data:`PAIR_STACK_PX` wide, A above B where it is narrower (a 1,280 px window);
    draw each inside :func:`side_by_side`. ``key`` names the tab (one pair per tab)."""
    st.html(PAIR_CSS)  # style only: Streamlit puts it in its event container, it takes no room
    return st.container(key=f"{PAIR_KEY}-{key}").columns(2, border=True)


#: pixels a table may take in the panel being drawn (see :func:`dataframe`)
_BUDGET: contextvars.ContextVar[int | None] = contextvars.ContextVar("table_px", default=None)


class _Column:
    """A column of :func:`panel_columns`: the Streamlit column, which also tells the tables
    drawn inside it how many pixels they have."""

    def __init__(self, column: Any, share: float) -> None:
        self._column, self._share = column, share
        self._tokens: list[contextvars.Token[int | None]] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self._column, name)

    def __enter__(self) -> Any:
        budget = table_budget()
        self._tokens.append(_BUDGET.set(round(budget * self._share) - 16))
        return self._column.__enter__()

    def __exit__(self, *exc: Any) -> Any:
        _BUDGET.reset(self._tokens.pop())
        return self._column.__exit__(*exc)


@contextlib.contextmanager
def evidence_tab() -> Iterator[None]:
    """Draw a candidate's panel across a whole tab: its tables wider than the tab at
    1,280 px wrap (see :func:`dataframe`)."""
    token = _BUDGET.set(TABLE_PX)
    try:
        yield
    finally:
        _BUDGET.reset(token)


def table_budget() -> int:
    """Pixels a table has where it is drawn: a tab at 1,280 px (:func:`evidence_tab`), one
    of two side by side panels, or a column of :func:`panel_columns` inside either; the
    page's width at 1,280 px elsewhere (a wider table scrolled there, its last columns cut,
    issue 42), so a page's tables wrap their cells rather than scroll on a laptop."""
    budget = _BUDGET.get()
    if budget is not None:
        return budget
    return NARROW_TABLE_PX if _NARROW.get() else PAGE_TABLE_PX


def panel_columns(spec: int | Sequence[float]) -> list[Any]:
    """``st.columns(spec)`` for a panel's content, or as many containers one above the other
    inside :func:`side_by_side`."""
    if _NARROW.get():
        return [st.container() for _ in range(spec if isinstance(spec, int) else len(spec))]
    weights = [1.0] * spec if isinstance(spec, int) else [float(w) for w in spec]
    return [
        _Column(column, w / sum(weights))
        for column, w in zip(st.columns(spec), weights, strict=True)
    ]


def order_radio(orders: list[int], key: str) -> int | None:
    """The n-gram order picker shared by the BLEU and CIDEr-D panels: an order a link names
    that the panel does not draw gives way to the nearest it draws, and the link's note says
    which (bleu-order=9 showed the 1-grams under a note naming no order; bleu-order=-2 said
    "the nearest in range, 1, is used")."""
    if orders:
        state.nearest_choice(f"{key}-order", orders)
    state.valid_choice(f"{key}-order", orders)  # no orders at all: the link's is named
    return st.radio(
        "n-gram order",
        orders,
        horizontal=True,
        format_func=lambda n: f"{n}-grams",
        key=f"{key}-order",
    )


def reference_picker(n: int, best: int, winner: str, inputs: Hashable, *, key: str) -> int | None:
    """The per-reference picker of a panel, on the winning reference after every change of
    ``inputs`` (the texts the panel was drawn from) and on the reader's choice otherwise.

    A selectbox keeps its position when its options change, so after an edit it would draw a
    reference that no longer wins under a heading that names the new winner (issue 34); the
    widget's state is therefore reset whenever the inputs it was last drawn for change, unless
    a link named the reference (its inputs are the link's).
    """
    widget, drawn_for = f"{key}-reference", f"{key}-reference-inputs"
    if st.session_state.pop(f"{widget}-linked", False):
        st.session_state[drawn_for] = (inputs, best)
        state.valid_choice(widget, range(n))  # a link's #9 of 3 references is named
    stale = st.session_state.get(drawn_for) != (inputs, best)
    if stale or st.session_state.get(widget) not in range(n):
        st.session_state[widget] = best
        st.session_state[drawn_for] = (inputs, best)
    return st.selectbox(
        "Reference",
        list(range(n)),
        format_func=lambda i: f"#{i + 1}" + (f" ({winner})" if i == best else ""),
        key=widget,
    )


#: the inputs each side's panels last had (see :func:`forget_stale_references`)
_SIDE_INPUTS = "_compare_side_inputs"


def forget_stale_references(inputs: Mapping[str, Hashable], *, keep: bool = False) -> None:
    """Drop every reference picker's choice of a side (``""`` A, ``"-b"`` B) whose inputs
    changed since the last run: :func:`reference_picker` resets only a panel it draws, so a
    closed tab's choice stayed in the URL after an edit, and a link reopened a reference that
    no longer was the one a reader picked. ``keep``: a link just set the inputs and choices."""
    before = st.session_state.get(_SIDE_INPUTS, {})
    st.session_state[_SIDE_INPUTS] = dict(inputs)
    if keep:
        return
    changed = {side for side, now in inputs.items() if side in before and before[side] != now}
    for param in state.COMPARE_PANELS:
        panel, _, what = param.key.rpartition("-")
        side = "-b" if panel.endswith("-b") else ""
        if what == "reference" and side in changed:
            st.session_state.pop(param.key, None)
            st.session_state.pop(f"{param.key}-inputs", None)


def bar_chart(
    x: Sequence[str], series: Mapping[str, Sequence[float]], y_title: str, *, key: str
) -> None:
    """A small grouped bar chart; ``x`` and series names must not be user text. Each bar
    is labelled by the app's number rule (``capeval_ui.charts``): a label that does not
    fit its bar is hidden, never written over its neighbour's; the exact value on hover."""
    colours = [BLUE, ORANGE, GREEN]
    fig = go.Figure()
    for i, (name, values) in enumerate(series.items()):
        shown = [None if v is None or math.isnan(v) else v for v in values]
        fig.add_bar(
            x=list(x),
            y=shown,
            name=name,
            marker_color=colours[i % len(colours)],
            hovertemplate=f"{name}, %{{x}}: %{{customdata}}<extra></extra>",
            **charts.bar_labels([float("nan") if v is None else v for v in shown]),
        )
    fig.update_layout(
        barmode="group",
        bargroupgap=0.08,
        height=280,
        margin={"l": 10, "r": 10, "t": 30, "b": 10},
        xaxis={"type": "category"},
        yaxis={"title": y_title, "rangemode": "tozero"},
        legend={"orientation": "h", "y": 1.15, "x": 0},
        showlegend=len(series) > 1,
    )
    charts.readable(fig)
    st.plotly_chart(fig, key=key, width="stretch")


def token_strip(rows: Mapping[str, Sequence[str]], marks: Mapping[str, Iterable[int]]) -> Styler:
    """Tokens as table cells, one row per sentence, matched positions highlighted.

    A dataframe shows each token literally, so markup in a caption stays text.
    """
    width = max((len(t) for t in rows.values()), default=0) or 1
    data = [[*tokens, *([""] * (width - len(tokens)))] for tokens in rows.values()]
    frame = pd.DataFrame(data, index=list(rows), columns=[str(i + 1) for i in range(width)])
    styles = pd.DataFrame("", index=frame.index, columns=frame.columns)
    for row, positions in marks.items():
        r = frame.index.get_loc(row)
        for p in positions:
            styles.iat[r, p] = MATCH_STYLE
    # styles looked up by label, so a slice of the strip keeps its own (see show_tokens)
    return frame.style.apply(lambda part: styles.loc[part.index, part.columns], axis=None)


def dataframe(
    data: Any,
    *,
    numbers: Iterable[str] = (),
    signed: Iterable[str] = (),
    pvalues: Iterable[str] = (),
    **kwargs: Any,
) -> Any:
    """``st.dataframe`` whose empty cells read :data:`EMPTY`: the browser shows a missing
    value as "None" otherwise (whatever a Styler says for it). The ``numbers`` columns show
    scores as :func:`format_number` writes them, as the score cards do, ``signed`` ones
    differences (:func:`format_signed`) and ``pvalues`` p-values (:func:`format_pvalue`); the
    cells keep their values, so a column sorts by them. A ``NumberColumn`` of theirs takes no
    ``format``: the grid draws a column's format instead of the Styler's text."""
    kwargs.setdefault("placeholder", EMPTY)
    frame = data.data if isinstance(data, Styler) else data
    if isinstance(frame, pd.DataFrame):
        given = kwargs.get("column_config") or {}
        merged: dict[Any, Any] = dict(_text_widths(frame))
        for column, config in given.items():
            # a column configured without a width keeps the width of its text
            keep = merged.get(column) if isinstance(config, Mapping) else None
            if isinstance(keep, Mapping):
                config = {**keep, **{k: v for k, v in config.items() if v is not None}}
            merged[column] = config
        kwargs["column_config"] = merged
    rule = {
        **dict.fromkeys(numbers, format_number),
        **dict.fromkeys(signed, format_signed),
        **dict.fromkeys(pvalues, format_pvalue),
    }
    rule = {c: f for c, f in rule.items() if c in frame.columns}
    if rule:
        data = data.style.format(rule)
        kwargs["column_config"] = small_value_help(frame, rule, kwargs.get("column_config"))
    if isinstance(frame, pd.DataFrame):
        _fit_grid(frame, kwargs, table_budget())
    if isinstance(frame, pd.DataFrame):
        shown = kwargs.get("column_order")
        drawn = frame if shown is None else frame[list(shown)]
        kwargs["column_config"] = _headers_whole(drawn, kwargs.get("column_config") or {})
    return st.dataframe(data, **kwargs)


def zero_as_noise(
    frame: pd.DataFrame, columns: Iterable[str], scale: Iterable[str], rel: float = 1e-9
) -> pd.DataFrame:
    """``frame`` with each value of ``columns`` smaller than ``rel`` times the largest
    magnitude of its row's ``scale`` columns set to 0.0: a difference of two equal scores
    summed in another order (0.3 − (0.1 + 0.2) = −5.6e-17) is 0, not ``> −0.001``, and does
    not count as a difference. A real difference keeps every digit, however small (BLEU-4 of
    1e-08 against 0 reads ``< +0.001``), and the column stays numeric for sorting.

    >>> f = pd.DataFrame({"d": [-5.6e-17, -4e-05, 1e-08], "v": [0.3, 0.3, 1e-08]})
    >>> zero_as_noise(f, ["d"], ["v"])["d"].tolist()
    [0.0, -4e-05, 1e-08]
    """
    out = frame.copy()
    scale = [c for c in scale if c in out.columns]
    size = out[scale].abs().max(axis=1) if scale else pd.Series(0.0, index=out.index)
    for column in columns:
        if column in out.columns:
            values = out[column]
            out[column] = values.mask(values.abs() <= rel * size, 0.0)
    return out


#: a column's tooltip where a cell reads "< 0.001" (a grid cell has no tooltip of its own)
SMALL_HELP = (
    "< 0.001: closer to 0 than 0.001, and not 0 (the exact value is in the downloads and "
    "the signature block)."
)


def small_value_help(
    frame: pd.DataFrame, columns: Iterable[str], config: Mapping[Any, Any] | None
) -> dict[Any, Any]:
    """``config`` with :data:`SMALL_HELP` added to the help of each of ``columns`` holding
    a value written ``< 0.001`` (issue 42: the short form says where the exact one is)."""
    out = dict(config or {})
    for column in columns:
        if column not in frame.columns or not any(is_small(v) for v in frame[column]):
            continue
        given = out.get(column)
        given = dict(given) if isinstance(given, Mapping) else {}
        help_text = given.get("help")
        given["help"] = f"{help_text} {SMALL_HELP}" if help_text else SMALL_HELP
        out[column] = given
    return out


#: pixels of the grid's named column widths
_NAMED_WIDTHS = {"small": 75, "medium": 200, "large": 400}


#: a table of at most this many rows is drawn whole when its rows grow to wrap their text
WHOLE_ROWS = 15
#: pixels of a grid's header row
HEADER_PX = 35
#: pixels of a grid's frame and borders beside its columns
GRID_FRAME_PX = 8
#: pixels of one line of text in a grid cell, and of the cell's padding
LINE_PX, ROW_PAD_PX = 21, 10


#: pixels of the row-marker column a grid adds when its rows can be selected
ROW_MARKER_PX = 40


def _fit_grid(frame: pd.DataFrame, kwargs: dict[str, Any], budget: int) -> None:
    """Narrow the columns of a grid wider than ``budget`` pixels until it fits, each down to
    its longest word at the least, and let their cells wrap onto as many lines as their
    longest value needs: a grid past its panel scrolled, its last columns cut at 1,280 px
    (issue 34). Changes ``kwargs`` in place."""
    config = dict(kwargs.get("column_config") or {})
    shown = kwargs.get("column_order")
    widths = _column_widths(frame if shown is None else frame[list(shown)], config)
    index = 0 if kwargs.get("hide_index") else cell_width([*map(str, frame.index)], maximum=240)
    room = budget - index - GRID_FRAME_PX
    if kwargs.get("on_select") not in (None, "ignore"):  # the grid adds its row markers
        room -= ROW_MARKER_PX
    if sum(widths.values()) <= room:
        return
    # a cell wraps at its spaces, a header never: a column keeps its header's width
    floors = {
        c: min(
            w,
            max(
                cell_width(word for v in frame[c] for word in format_number(v).split()),
                header_width(c, config),
            ),
        )
        for c, w in widths.items()
    }
    spare = sum(widths.values()) - sum(floors.values())
    factor = max(0.0, room - sum(floors.values())) / max(spare, 1)
    lines = 1
    for column, width in widths.items():  # only the columns shown
        narrowed = floors[column] + int((width - floors[column]) * factor)
        if narrowed >= width:
            continue
        given = config.get(column)
        config[column] = {**(given if isinstance(given, Mapping) else {}), "width": narrowed}
        longest = max((len(format_number(v)) for v in [column, *frame[column]]), default=0)
        lines = max(lines, math.ceil(longest * 8.5 / max(narrowed - 24, 1)))
    kwargs["column_config"] = config
    # the grid wraps a cell's text only in rows taller than 4rem
    row = max(kwargs.get("row_height") or 0, 66, lines * LINE_PX + ROW_PAD_PX)
    kwargs["row_height"] = row
    if "height" not in kwargs and len(frame) <= WHOLE_ROWS:  # taller rows: all still in view
        kwargs["height"] = HEADER_PX + row * len(frame) + GRID_FRAME_PX


def header_width(column: Any, config: Mapping[Any, Any]) -> int:
    """Pixels a column's header needs uncut: its label (the configured one, else its name);
    the grid never wraps a header (issue 42: "first matching reference" was cut)."""
    given = config.get(column)
    label = given.get("label") if isinstance(given, Mapping) else None
    return cell_width([label or str(column)])


def _headers_whole(frame: pd.DataFrame, config: Mapping[Any, Any]) -> dict[Any, Any]:
    """``config`` with every column at least as wide as its header (:func:`header_width`)."""
    out = dict(config)
    for column, width in _column_widths(frame, config).items():
        need = header_width(column, config)
        given = out.get(column)
        if isinstance(given, Mapping) and given.get("width") is not None and width < need:
            out[column] = {**given, "width": need}
    return out


def _column_widths(frame: pd.DataFrame, config: Mapping[Any, Any]) -> dict[Any, int]:
    """Pixels of each column of a grid: as configured, or as wide as its longest value."""
    widths = {}
    for column in frame.columns:
        given = config.get(column)
        width = given.get("width") if isinstance(given, Mapping) else None
        if isinstance(width, str):
            width = _NAMED_WIDTHS.get(width)
        if not isinstance(width, int):
            width = cell_width([column, *(format_number(v) for v in frame[column])])
        widths[column] = width
    return widths


def _text_widths(frame: pd.DataFrame, skip: Iterable[object] = ()) -> dict[str, Any]:
    """A column of text as wide as its longest value (a caption, a list of words): the grid's
    default width cuts a reference at "…near the ocea" (issue 34)."""
    skipped = set(skip)
    return {
        column: st.column_config.TextColumn(
            width=cell_width([column, *frame[column]], maximum=TEXT_MAX_PX)
        )
        for column in frame.columns
        if column not in skipped
        and (frame[column].dtype == object or pd.api.types.is_string_dtype(frame[column]))
        and all(isinstance(v, str) for v in frame[column])
    }


#: the widest a text column grows to show its longest value (then the table scrolls)
TEXT_MAX_PX = 640


#: pixels a table may take before it is drawn as a wrapping table: a tab's width at 1,280 px,
#: or a candidate's half of :func:`candidate_pair` at its narrowest, the tab just
#: :data:`PAIR_STACK_PX` wide (less the gap of 16 px between the halves, and each half's
#: border and padding, 34 px); stacked at 1,280 px, a half is wider (a grid past its panel
#: scrolls, its last columns cut)
TABLE_PX, NARROW_TABLE_PX = 816, (PAIR_STACK_PX - 16) // 2 - 34
#: pixels a table elsewhere on a page may take: the inside of an expander at 1,280 px (784 px,
#: measured), the narrowest box a page's tables are drawn in
PAGE_TABLE_PX = 780
#: pixels a token strip may take before it wraps onto another strip, likewise (a strip past
#: it was cut after word 7; issue 34)
STRIP_PX, NARROW_STRIP_PX = TABLE_PX - 16, NARROW_TABLE_PX - 6


def show_tokens(styler: Styler) -> None:
    """A token strip, each column as wide as its longest token (no word is cut), wrapped
    onto further strips where the panel is too narrow for all its words."""
    frame = styler.data
    widths = {column: cell_width(frame[column]) for column in frame.columns}
    for columns in strip_lines(
        list(widths.values()),
        NARROW_STRIP_PX if _NARROW.get() else STRIP_PX,
        cell_width([*map(str, frame.index)], maximum=240),
    ):
        part = frame.iloc[:, columns]
        config = {c: st.column_config.TextColumn(width=widths[c]) for c in part.columns}
        # without cell ids Streamlit writes the same styles (a styled cell keeps its id) in
        # about half the time: a strip has a column per word
        styled = Styler(part, cell_ids=False).use(styler.export())
        dataframe(styled, width="content", column_config=config)
    bracket_note(*(frame.loc[row].tolist() for row in frame.index))


def strip_lines(widths: Sequence[int], budget: int, label: int) -> list[list[int]]:
    """Column positions per strip: as many as fit ``budget`` pixels beside the row labels
    (``label`` pixels), at least one per strip.

    >>> strip_lines([100, 100, 100, 100], 330, 100)
    [[0, 1], [2, 3]]
    """
    lines: list[list[int]] = [[]]
    used = label
    for i, width in enumerate(widths):
        if lines[-1] and used + width > budget:
            lines.append([])
            used = label
        lines[-1].append(i)
        used += width
    return lines


def cell_width(values: Iterable[object], *, minimum: int = 36, maximum: int = 420) -> int:
    """Pixels a column needs to show its longest value uncut (about 8.5 px a character).

    >>> cell_width(["a", "puppies"]), cell_width(["underground"])
    (84, 118)
    """
    longest = max((len(str(v)) for v in values), default=0)
    return max(minimum, min(maximum, round(8.5 * longest + 24)))


# -- readable numbers: the rule lives in capeval_ui.formats ------------------------------------
def _text_cell(value: object) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return str(value)


def table(
    frame: pd.DataFrame,
    *,
    numbers: Iterable[str] = (),
    signed: Iterable[str] = (),
    pvalues: Iterable[str] = (),
    percents: Iterable[str] = (),
    shares: Iterable[str] = (),
    integers: Iterable[str] = (),
    digits: int = 4,
    widths: Mapping[str, int | str] | None = None,
    help: Mapping[str, str] | None = None,
    height: int | None = None,
    hide_index: bool = True,
    hidden: Iterable[str] = (),
    key: str | None = None,
) -> None:
    """A dataframe that reads well: every number formatted as its kind (scores with
    ``digits`` decimals, p-values by :func:`format_pvalue`, ``percents`` (already in per
    cent) and ``shares`` (fractions of 1) in per cent, ``integers`` as whole numbers), no cell
    showing "None"/"nan" (a missing number shows :data:`EMPTY`: say why in a column or a
    caption of the caller's; missing text shows nothing), and each column wide enough for its
    values. The cells keep their values (sorting and tests see numbers). ``hidden`` columns
    stay in the data but are not drawn (a signature goes in :func:`signature_block`).
    """
    numbers, signed, pvalues = list(numbers), list(signed), list(pvalues)
    formats: dict[str, Any] = {}
    for column in numbers:
        formats[column] = functools.partial(format_number, digits=digits)
    for column in signed:
        formats[column] = functools.partial(format_signed, digits=digits)
    for column in pvalues:
        formats[column] = format_pvalue
    for column in percents:
        formats[column] = format_percent
    for column in shares:
        formats[column] = format_share
    for column in integers:
        formats[column] = format_count
    for column in frame.columns:
        if column not in formats and frame[column].dtype == object:
            formats[column] = _text_cell
    formats = {c: f for c, f in formats.items() if c in frame.columns}
    styler = frame.style.format(formats)
    config: dict[str, Any] = {}
    for column in frame.columns:
        shown = [frame[column].name, *(formats.get(column, str)(v) for v in frame[column])]
        width = (widths or {}).get(column) or cell_width(shown, maximum=360)
        config[column] = st.column_config.Column(width=width, help=(help or {}).get(column))
    config = small_value_help(frame, [*numbers, *signed, *pvalues], config)
    kwargs: dict[str, Any] = {"height": height} if height else {}
    hidden = [c for c in hidden if c in frame.columns]
    if hidden:  # kept in the data (a download, a test), not drawn
        kwargs["column_order"] = [c for c in frame.columns if c not in hidden]
    dataframe(
        styler,
        hide_index=hide_index,
        width="stretch",
        column_config=config,
        key=key,
        **kwargs,
    )


def signature_block(signatures: Mapping[str, str]) -> None:
    """Each metric's signature in full, copyable for a paper (a grid column cut them, or ran
    a table past its page at 1,280 px)."""
    if not signatures:
        return
    width = max(len(k) for k in signatures)
    st.caption("Signatures (each reproduces its metric's numbers):")
    st.code(
        "\n".join(f"{k:<{width}}  {sig}" for k, sig in signatures.items()),
        language=None,
        wrap_lines=True,
    )


# -- the app's words --------------------------------------------------------------------------
#: library spellings in the core's messages -> the same advice in the words of the page's
#: controls: a reader of the app is never asked to type Python (issue 34)
APP_WORDS: dict[str, str] = {
    "use idf='coco-val2014'": "pick “COCO val2014” as the CIDEr-D IDF source above",
}


def in_app_words(message: str) -> str:
    """A core message with its library spellings said as the app's controls say them.

    >>> in_app_words("Score more images together or use idf='coco-val2014'.")
    'Score more images together or pick “COCO val2014” as the CIDEr-D IDF source above.'
    """
    for library, app in APP_WORDS.items():
        message = message.replace(library, app)
    return message


# -- one view per details type ---------------------------------------------------------------
@functools.singledispatch
def render_details(details: Any, segment: SegmentScore, result: MetricResult, key: str) -> None:
    """Fallback for details no view knows yet: the segment's scores as a table."""
    st.caption(f"No drawing for `{type(details).__name__}` yet; the item's scores:")
    frame = pd.DataFrame({"key": list(segment.scores), "value": list(segment.scores.values())})
    dataframe(frame, hide_index=True, numbers=["value"])


def plot_text(text: str) -> str:
    """User text made literal for plotly, which interprets ``<b>``, ``<br>``, ``<a href>``."""
    return html.escape(text, quote=True)


@functools.singledispatch
def explain(details: Any, other: Any, key: str) -> str:
    """One plain line with the evidence behind two candidates' scores on ``key`` (``details``
    of candidate A, ``other`` of candidate B, same references). Each panel module registers
    its metric's; a metric without one gets no line."""
    return ""


@functools.singledispatch
def no_contest(details: Any, other: Any, key: str) -> str:
    """Why two candidates' scores on ``key`` say nothing between them although they differ
    (both values stand on a constant, not on what the candidates matched), for the A/B
    verdict to call it a tie; empty when the difference counts (every metric but those
    whose panel module registers a reason)."""
    return ""


# -- plain words for teachers, exact terms for researchers ----------------------------------------
#: metric key -> one plain sentence of what its panel shows (each panel module adds its own)
INTROS: dict[str, str] = {}
#: metric key -> (term, meaning) pairs for the panel's "Terms" expander
TERMS: dict[str, tuple[tuple[str, str], ...]] = {}
#: how the PTB tokenizer writes brackets (coco-caption's tokens)
PTB_BRACKETS = {"-lrb-": "(", "-rrb-": ")", "-lsb-": "[", "-rsb-": "]", "-lcb-": "{", "-rcb-": "}"}


def render_intro(key: str) -> None:
    """The panel's plain sentence, and its exact terms in an expander."""
    if key in INTROS:
        st.caption(INTROS[key])
    terms = TERMS.get(key)
    if terms:
        with st.expander("Terms used in this panel"):
            st.markdown("\n".join(f"- **{term}**: {meaning}" for term, meaning in terms))


def bracket_note(*token_lists: Sequence[str]) -> None:
    """Say what ``-lrb-`` and its kin are when any of them is shown."""
    seen = sorted({t for tokens in token_lists for t in tokens if t in PTB_BRACKETS})
    if seen:
        st.caption(
            "Brackets appear as the PTB tokenizer writes them: "
            + ", ".join(f"{t} = {PTB_BRACKETS[t]}" for t in seen)
            + " (as in coco-caption, so the counts match pycocoevalcap)."
        )
