"""Drawing a comparison of captioning systems: the table with intervals and tests, a chart of
every metric per system with error bars, and the images where two systems differ most, each
linked to Compare captions.

User text (captions, references, file and system names) is shown in dataframes only, never in
markdown or HTML; where a system name labels a plotly chart it is escaped first.
"""

from __future__ import annotations

import html
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, urlencode

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st
from plotly.subplots import make_subplots

from capeval_core.errors import UnknownKeyError
from capeval_core.metrics import metric_class
from capeval_core.systems import SystemsComparison, comparison_signatures_text
from capeval_core.systems_table import paper_table
from capeval_ui.formats import SMALL_NEGATIVE_TEXT, literal
from capeval_ui.state import Param
from capeval_ui.views import cell_width, format_number, signature_block
from capeval_ui.views.common import dataframe, zero_as_noise

_COLOURS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2"]
#: the Compare captions page (relative to this page's URL) and its query parameters: the
#: first candidate, the second, and every reference (repeated)
COMPARE_PAGE = "./compare-captions"


def label(key: str) -> str:
    return metric_class(key).label(key)


def compare_link(params: dict[str, Any]) -> str:
    """The Compare captions URL of :func:`compare_params`: both captions of an image with its
    references, and the table's tokenizer and CIDEr-D IDF, so a new tab shows its numbers.

    >>> compare_link({"candidate": "a dog", "candidate_b": "a cat", "ref": ["a pet"],
    ...               "tokenizer": "ptb", "idf": "set-0123"})
    './compare-captions?candidate=a%20dog&candidate_b=a%20cat&ref=a%20pet&tokenizer=ptb&idf=set-0123'
    """
    return f"{COMPARE_PAGE}?{urlencode(params, doseq=True, quote_via=quote)}"


def render_paper_table(comparison: SystemsComparison, raw: bool = False) -> None:
    """The paper's table (:func:`capeval_core.systems_table.paper_table`): values with their
    intervals and † marks, then Δ and p against the baseline (its own cells empty), with
    LaTeX, Markdown and CSV downloads of the same table (the first two give the signatures
    under their notes; beside the CSV, which has no room for them, a signatures file)."""
    table = paper_table(comparison, raw=raw)
    text = st.column_config.TextColumn
    config = {"system": text("System")}
    dataframe(
        table.value_frame(), hide_index=True, width="stretch", column_config=config,
        key="systems_paper_values",
    )  # fmt: skip
    if len(comparison.systems) > 1:
        st.text(f"Δ to the baseline, {comparison.baseline}, and p (in brackets):")
        dataframe(
            table.delta_frame(), hide_index=True, width="stretch", column_config=config,
            key="systems_paper_deltas",
        )  # fmt: skip
    st.text("\n".join(table.notes))  # they name systems and files: user text, never markdown
    columns = st.columns(4)
    for col, (fmt, name, mime) in zip(
        columns[:3],
        (
            ("latex", "LaTeX", "application/x-tex"),
            ("markdown", "Markdown", "text/markdown"),
            ("csv", "CSV", "text/csv"),
        ),
        strict=True,
    ):
        extension = {"latex": "tex", "markdown": "md", "csv": "csv"}[fmt]
        col.download_button(
            f"Table ({name})",
            table.render(fmt),
            file_name=f"capeval-systems-table.{extension}",
            mime=mime,
            key=f"systems_table_{fmt}",
        )
    columns[3].download_button(
        "Signatures (JSON)",
        comparison_signatures_text(comparison, "capeval-systems-table.csv", table.notes),
        file_name="capeval-systems-table.signatures.json",
        mime="application/json",
        key="systems_table_signatures",
    )


def comparison_frame(comparison: SystemsComparison) -> pd.DataFrame:
    """One row per (system, metric): value, interval, difference to the baseline, p-values."""
    frame = comparison.to_frame()
    frame.insert(1, "metric", [label(k) for k in frame["key"]])
    frame["significant"] = frame["p_value"] < 0.05
    frame["signature"] = [comparison.signature(k) for k in frame["key"]]
    return frame


def render_table(comparison: SystemsComparison) -> None:
    """The full table: every system and metric with its interval, then (with a baseline) Δ
    and the p-values, then each metric's signature. One frame drawn as two tables of its
    columns, each narrow enough for the page at 1,280 px (as one table it ran past the page,
    its last columns cut); every column stays in the data of both."""
    # a Δ of equal values summed in another order read -0.0000
    deltas = ["delta", "delta_ci_low", "delta_ci_high"]
    frame = zero_as_noise(comparison_frame(comparison), deltas, ["value"])
    pct = f"{comparison.resampling.level * 100:g}%"

    def number(label_: str, **kwargs: Any) -> Any:
        # a grid sizes a number column wider than its text: each is given its width; no
        # format, so the cells show the app's rule (dataframe's numbers, signed, pvalues)
        return st.column_config.NumberColumn(
            label_, width=cell_width([label_, SMALL_NEGATIVE_TEXT]), **kwargs
        )

    config = {
        "value": number("value"),
        "ci_low": number(f"{pct} CI low"),
        "ci_high": number(f"{pct} CI high"),
        "bootstrap_mean": number("bootstrap mean"),
        "delta": number("Δ", help="minus the baseline's value"),
        "delta_ci_low": number("Δ low", help=f"low end of Δ's {pct} interval"),
        "delta_ci_high": number("Δ high", help=f"high end of Δ's {pct} interval"),
        "p_bootstrap": number(
            "p boot",
            help="p of the paired bootstrap (sacrebleu's: one tail, about half a two-sided p)",
        ),
        "p_randomization": number("p rand", help="p of approximate randomization (two-sided)"),
        "p_value": number("p", help="the larger of the tests' p-values"),
        "significant": st.column_config.CheckboxColumn("p < 0.05"),
    }
    rule = {
        "numbers": ["value", "ci_low", "ci_high", "bootstrap_mean"],
        "signed": deltas,
        "pvalues": ["p_bootstrap", "p_randomization", "p_value"],
    }
    names = ["system", "metric"]
    dataframe(
        frame,
        hide_index=True,
        width="stretch",
        column_config=config,
        column_order=[*names, "value", "ci_low", "ci_high", "bootstrap_mean"],
        key="systems_table",
        **rule,
    )
    if len(comparison.systems) > 1:
        st.caption(f"Against the baseline, {literal(comparison.baseline)}:")
        against = ["delta", "delta_ci_low", "delta_ci_high", "p_bootstrap", "p_randomization"]
        dataframe(
            frame[frame["system"] != comparison.baseline],
            hide_index=True,
            width="stretch",
            column_config=config,
            column_order=[*names, *against, "p_value", "significant"],
            key="systems_table_paired",
            **rule,
        )
    signature_block({label(k): comparison.signature(k) for k in comparison.keys})


def _error_bars(
    comparison: SystemsComparison, system: str, key: str, scale: float = 1.0
) -> tuple[float, float]:
    low, high = comparison.ci[system][key]
    value = comparison.corpus[system][key]
    if not (math.isfinite(low) and math.isfinite(high)):
        return 0.0, 0.0
    return scale * max(high - value, 0.0), scale * max(value - low, 0.0)


#: panels per row of the chart: eleven side by side left their y ticks over the neighbours'
#: bars (issue 33)
PANELS_PER_ROW = 4


def systems_chart(comparison: SystemsComparison, raw: bool = False) -> go.Figure:
    """One panel per metric (its own scale: CIDEr-D runs to 10) in the papers' order, at most
    :data:`PANELS_PER_ROW` to a row, a bar per system with the bootstrap interval as error
    bars. The values are on the paper table's scale (×100, or ``raw``: the metrics' own), and
    a bar's hover is its table cell: the chart was on the raw scale under a ×100 table."""
    table = paper_table(comparison, raw=raw)
    keys = list(table.keys)
    cols = max(min(len(keys), PANELS_PER_ROW), 1)
    rows = max(math.ceil(len(keys) / cols), 1)
    scale = "" if raw else " ×100"
    fig = make_subplots(
        rows=rows,
        cols=cols,
        subplot_titles=[label(k) for k in keys],
        horizontal_spacing=0.08,
        vertical_spacing=0.3 / rows if rows > 1 else 0.0,
    )
    for i, s in enumerate(comparison.systems):
        for j, k in enumerate(keys):
            plus, minus = _error_bars(comparison, s, k, table.scale)
            fig.add_trace(
                go.Bar(
                    x=[html.escape(s)],
                    y=[comparison.corpus[s][k] * table.scale],
                    error_y={"type": "data", "array": [plus], "arrayminus": [minus]},
                    marker_color=_COLOURS[i % len(_COLOURS)],
                    name=html.escape(s),
                    legendgroup=html.escape(s),
                    showlegend=j == 0,
                    customdata=[html.escape(table.cell(i, j))],
                    hovertemplate=f"{html.escape(s)}<br>{label(k)}{scale} %{{customdata}}"
                    "<extra></extra>",
                ),
                row=j // cols + 1,
                col=j % cols + 1,
            )
    fig.update_xaxes(showticklabels=False)
    fig.update_yaxes(nticks=5, tickfont={"size": 10})
    fig.update_layout(
        title={
            "text": "Raw values (the metrics' own scale), as the table"
            if raw
            else "Values ×100, as the table",
            "font": {"size": 14},
        },
        height=120 + 240 * rows,
        margin={"l": 10, "r": 10, "t": 80, "b": 10},
        legend={"orientation": "h", "y": -0.08, "x": 0},
        bargap=0.25,
    )
    return fig


def render_chart(comparison: SystemsComparison, raw: bool = False) -> None:
    """The chart on the paper table's scale (``raw``: the metrics' own, as its toggle)."""
    st.plotly_chart(systems_chart(comparison, raw), width="stretch", key="systems_chart")


@dataclass(frozen=True, kw_only=True)
class DifferencesView:
    """What "Where two systems differ" shows: systems ``a`` and ``b`` of ``comparison``
    image by image on ``key``, and what a row's Compare captions needs to give the table's
    numbers: its ``tokenizer``, its CIDEr-D ``idf`` (the set's references, registered by
    name) and the set's ``n_images``."""

    comparison: SystemsComparison
    a: str
    b: str
    key: str
    tokenizer: str
    idf: str
    n_images: int
    #: query parameters every link carries (the session's judgment set: a row's link opens a
    #: new session, which kept no set)
    carried: Mapping[str, Any] = field(default_factory=dict)

    def compare_params(self, row: pd.Series) -> dict[str, Any]:
        """Compare captions' query parameters for ``row`` (:func:`compare_params`)."""
        return {
            **compare_params(
                row, self.tokenizer, self.idf, self.a, self.b, self.key, self.n_images
            ),
            **self.carried,
        }

    def drill_down_note(self, row: pd.Series) -> dict[str, Any]:
        """What Compare captions keeps when opened from ``row`` (:func:`drill_down_note`)."""
        return drill_down_note(row, self.a, self.b, self.key, self.n_images, self.idf)


def differences_frame(view: DifferencesView) -> pd.DataFrame:
    """The images sorted by where ``view.a`` and ``view.b`` differ most on ``view.key``, each
    with its link to Compare captions (``a``'s caption as the candidate, ``b``'s beside it,
    scored with the table's tokenizer and CIDEr-D IDF: without them a new tab showed other
    CIDEr-D values than the row's), and the note saying which row of which table it is."""
    table = view.comparison.scores.differences(view.a, view.b, view.key)
    table["reference_list"] = table["references"]  # kept for a drill-down, not shown
    table["open"] = [compare_link(view.compare_params(row)) for _, row in table.iterrows()]
    table["references"] = [" | ".join(r) for r in table["references"]]
    return table


def compare_params(
    row: pd.Series, tokenizer: str, idf: str, a: str, b: str, key: str, n_images: int
) -> dict[str, Any]:
    """Compare captions' query parameters for one row of :func:`differences_frame`: both
    captions, the references, the table's tokenizer and CIDEr-D IDF (``idf``: the set's
    references, registered by name), so every number there is the table's, and the note
    that says where it came from (:func:`drill_down_note`), so a reload says it too.

    >>> row = pd.Series({"image_id": 7, "caption_a": "a dog", "caption_b": "a cat",
    ...                  "reference_list": ["a | b"], "value_a": 0.5, "value_b": 0.25})
    >>> params = compare_params(row, "ptb", "set-0123", "A", "B", "bleu_4", 30)
    >>> params["ref"], params["from_image"], params["from_b_value"]
    (['a | b'], '7', '0.25')
    """
    return {
        "candidate": row["caption_a"],
        "candidate_b": row["caption_b"],
        "ref": list(row["reference_list"]),
        "tokenizer": tokenizer,
        "idf": idf,
        **_note_values(row, a, b, key, n_images, idf),
    }


def render_differences(view: DifferencesView) -> pd.Series | None:
    """The differences table; returns the row the reader clicked (one click opens it in
    Compare captions), if any."""
    # a difference of equal scores summed in another order read -0.0000, and counted as one
    table = zero_as_noise(differences_frame(view), ["difference"], ["value_a", "value_b"])
    a, b, name = view.a, view.b, label(view.key)
    # the values by the app's rule (BLEU-4's 1e-08 read 0.0000 here, < 0.001 in Compare):
    # number columns without a format of their own show the rule's text and sort by value
    number = st.column_config.NumberColumn
    config: dict[str, Any] = {
        "image_id": st.column_config.TextColumn("image id", width=88),
        "caption_a": st.column_config.TextColumn("caption A"),
        "caption_b": st.column_config.TextColumn("caption B"),
        "value_a": number("A", width=cell_width(["A", SMALL_NEGATIVE_TEXT])),
        "value_b": number("B", width=cell_width(["B", SMALL_NEGATIVE_TEXT])),
        "difference": number("B − A", width=cell_width(["B − A", SMALL_NEGATIVE_TEXT])),
        "open": st.column_config.LinkColumn(
            "new tab",
            display_text="open",
            help="both captions with the references, in a new tab",
            width=72,  # its cells read "open", not the address
        ),
    }
    # the headers name A and B (a header never wraps: with the systems' names in each, the
    # table ran past the page at 1,280 px)
    st.text(f"A: {a}; B: {b}; values of {name}.")  # system names are user text
    st.caption("Click a row to open its image, with its references, in Compare captions.")
    event = dataframe(
        table,
        hide_index=True,
        width="stretch",
        column_config=config,
        key="systems_items",
        numbers=["value_a", "value_b"],
        signed=["difference"],
        # the references are in the data (and in Compare, a click away), not drawn: with
        # them the table ran past the page at 1,280 px
        column_order=[c for c in table.columns if c not in ("references", "reference_list")],
        on_select="rerun",
        selection_mode="single-row",
    )
    rows = list(event.selection.rows) if event is not None else []
    gaps = np.abs(table["difference"].to_numpy())
    st.caption(
        f"{int(np.count_nonzero(gaps > 0)):,} of {len(table):,} images differ on {name}; "
        "the largest differences first. Compare captions, opened from a row, scores the image "
        "with this table's tokenizer, SPICE parser and CIDEr-D IDF (this set's document "
        "frequencies), so its numbers are the ones here."
    )
    return table.iloc[rows[0]] if rows else None


def idf_label(n_images: int) -> str:
    """How Compare captions names a Systems table's references as its IDF source."""
    return f"the Systems table's {n_images:,} images"


#: the drill-down note in Compare captions' URL (:func:`compare_params`), each held in the
#: session under its own key while a link is read (see :func:`note_from_link`)
NOTE_URL: tuple[Param, ...] = tuple(
    Param(f"_systems_note_{name}", name, absent="")
    for name in (
        "from_image",
        "from_images",
        "from_metric",
        "from_a",
        "from_b",
        "from_a_value",
        "from_b_value",
        "from_idf",
    )
)


def _note_values(row: pd.Series, a: str, b: str, key: str, n_images: int, idf: str) -> dict:
    values = (row["image_id"], n_images, key, a, b, row["value_a"], row["value_b"], idf)
    return {
        p.name: repr(float(v)) if p.name.endswith("_value") else str(v)
        for p, v in zip(NOTE_URL, values, strict=True)
    }


def drill_down_note(
    row: pd.Series, a: str, b: str, key: str, n_images: int, idf: str
) -> dict[str, Any]:
    """What Compare captions keeps when opened from a row: the two captions it is about (the
    note goes once they are edited), the set's IDF source and its label on that page, the
    table's own values for the image, and the note's URL parameters."""
    values = (float(row["value_a"]), float(row["value_b"]))
    given = _note_values(row, a, b, key, n_images, idf)
    return _note(row["caption_a"], row["caption_b"], given, n_images, label(key), values)


def note_from_link(
    candidate: str, candidate_b: str, values: dict[str, str]
) -> tuple[dict[str, Any] | None, dict[str, str]]:
    """The note about ``candidate`` and ``candidate_b`` that a link's parameters
    (:data:`NOTE_URL` name -> value) say, or None; and the parameters given that say no
    note (name -> why), for the link's "values not used" warning.

    >>> note, bad = note_from_link("a", "b", {"from_image": "7", "from_images": "3",
    ...     "from_metric": "bleu_4", "from_a": "A", "from_b": "B", "from_a_value": "0.5",
    ...     "from_b_value": "x", "from_idf": "set-1"})
    >>> note, bad
    (None, {'from_b_value': 'not a number: no note of a Systems row is shown'})
    """
    given = {p.name: str(values.get(p.name) or "") for p in NOTE_URL}
    if not any(given.values()):
        return None, {}
    bad: dict[str, str] = {}
    n_images = int(given["from_images"]) if given["from_images"].isdigit() else 0
    if n_images < 1:
        bad["from_images"] = "not a number of images"
    try:
        name = label(given["from_metric"])
    except UnknownKeyError:
        bad["from_metric"] = "not a metric"
    numbers: list[float] = []
    for side in ("a", "b"):
        try:
            numbers.append(float(given[f"from_{side}_value"]))
        except ValueError:
            bad[f"from_{side}_value"] = "not a number"
    if bad:
        return None, {n: f"{why}: no note of a Systems row is shown" for n, why in bad.items()}
    missing = [n for n, v in given.items() if not v]
    if missing:  # one value named for the note: the rest went with it
        first = next(n for n, v in given.items() if v)
        return None, {first: f"a note of a Systems row needs {', '.join(missing)} too"}
    return _note(candidate, candidate_b, given, n_images, name, (numbers[0], numbers[1])), {}


def _note(
    candidate: str,
    candidate_b: str,
    given: dict[str, str],
    n_images: int,
    name: str,
    values: tuple[float, float],
) -> dict[str, Any]:
    a, b = given["from_a"], given["from_b"]
    return {
        "candidate": candidate.strip(),
        "candidate_b": candidate_b.strip(),
        "idf": given["from_idf"],
        "idf_label": idf_label(n_images),
        "params": given,
        "text": (
            # system names and image ids are user text: shown as typed, never as Markdown
            f"Opened from Systems: image {literal(given['from_image'])} of {n_images:,}; "
            f"the table's {name} for it: {literal(a)} {format_number(values[0])}, "
            f"{literal(b)} {format_number(values[1])}."
        ),
    }


def note_in_url(note: dict[str, Any] | None) -> dict[str, str | None]:
    """The note's parameters as :func:`capeval_ui.state.write` takes them (session key ->
    value): those of the note shown, or none when no note is."""
    return {p.key: note["params"][p.name] if note else None for p in NOTE_URL}


def drill_down_text(note: dict[str, Any], idf: str) -> str:
    """The note, saying whether this page's numbers are the table's: they are while its
    CIDEr-D IDF source is the table's set (the tokenizer and SPICE parser came with it)."""
    same = (
        "With the table's tokenizer, SPICE parser and CIDEr-D IDF, every number here is the "
        "table's."
        if idf == note["idf"]
        else f"CIDEr-D here takes another IDF source than the table ({note['idf_label']}), so "
        "its value differs from the table's."
    )
    return f"{note['text']} {same}"
