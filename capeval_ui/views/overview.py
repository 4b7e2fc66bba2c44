"""Page-level views: resources, the metric registry, the score summary and table."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd
import streamlit as st
from streamlit.errors import StreamlitPageNotFoundError

from capeval_core.inventory import ResourceInfo
from capeval_core.metrics import METRICS, metric_class
from capeval_core.results import MetricResult
from capeval_ui.formats import exact, is_small
from capeval_ui.state import fits_in_link, link_size, share_link, sizes, url_path
from capeval_ui.views.common import (
    dataframe,
    direction,
    format_number,
    in_app_words,
    key_label,
    render_details,
    render_intro,
    value_range,
)

#: metrics per row of the summary: at 1,024 px beside the open sidebar, four a row left a value
#: 97 px of the 98 that "1.0000" takes, and every card read "1.00…"; three give it 145 px
SUMMARY_PER_ROW = 3
#: the longest caption (in words) the Compare page and the lab score: captions are a sentence
#: or two, and scoring 1,000 words with every metric already takes about a second
MAX_WORDS = 1000
#: the longest caption whose evidence is drawn: beyond it the panels (token tables, alignment
#: figures, scene-graph layouts) take far longer than the scores, so only the scores show
EVIDENCE_MAX_WORDS = 100


# -- page-level views ------------------------------------------------------------------------
def page_link(page: str, label: str, icon: str) -> None:
    """``st.page_link`` that degrades to a hint when the page runs without the router.

    A page file run on its own (``streamlit run app_pages/home.py`` or AppTest) has no
    navigation, so Streamlit cannot resolve links to the other pages.
    """
    try:
        st.page_link(page, label=label, icon=icon)
    except StreamlitPageNotFoundError:
        st.info(f"{label}: start the whole app (`streamlit run app.py`) to open it.")


def copy_link(where: Any, *, holds: str = "") -> Any:
    """A "Copy link" popover in ``where`` (a column, or ``st``); returns the slot its address
    goes into (:func:`show_link`), filled once the page has written its URL. ``holds`` names
    what the link names by a digest instead of carrying it (an uploaded set)."""
    with where.popover("Copy link", icon=":material/link:"):
        st.caption(
            "This address opens this page with every choice on it (and the sidebar's "
            "tokenizer), so it shows these numbers again. Copy it with the icon at its right."
            + (
                f" {holds} is named by its digest: the link opens it on this server while it "
                "holds it; elsewhere, or after a restart, the page asks for it again."
                if holds
                else ""
            )
        )
        return st.empty()


def show_link(slot: Any, page: str, query: str) -> None:
    """The address of this view (``state.share_link``) in the slot of :func:`copy_link`; or,
    where the view does not fit in an address Streamlit reads, why there is none (a link of
    1,200 references opened the default example without a word)."""
    if not fits_in_link(query):
        slot.warning(
            f"This view does not fit in a link ({sizes(link_size(query))}; fewer references "
            "would fit). A reload opens the page's own choices."
        )
        return
    slot.code(share_link(url_path(page), query), language=None, wrap_lines=True)


def input_problems(
    candidate: str, references: Sequence[str], others: Mapping[str, str] | None = None
) -> list[str]:
    """What is missing from (or too long in) the Compare form, as messages for ``st.error``.

    ``others`` are further named captions to check for length (Compare's candidate B).
    """
    problems = []
    if not candidate.strip():
        problems.append("Enter a candidate caption to score.")
    if not references:
        problems.append("Enter at least one reference caption (one per line).")
    named = {"the candidate": candidate, **(others or {})}
    named.update({f"reference {i + 1}": r for i, r in enumerate(references)})
    for name, text in named.items():
        n = len(text.split())
        if n > MAX_WORDS:
            problems.append(
                f"Captions are scored up to {MAX_WORDS:,} words; {name} has {n:,}. "
                "Shorten it, or score long texts with the library or the CLI."
            )
    return problems


def longest_caption(texts: Sequence[str]) -> int:
    """Words in the longest of ``texts`` (to decide whether the evidence is drawn)."""
    return max((len(t.split()) for t in texts), default=0)


def split_lines(text: str) -> tuple[str, ...]:
    """One caption per non-blank line, surrounding spaces removed."""
    return tuple(line.strip() for line in text.splitlines() if line.strip())


def render_inventory(items: Sequence[ResourceInfo]) -> None:
    """The resource inventory as a table, a warning for anything missing, and a quieter note
    for a missing optional resource (only an opt-in feature needs it)."""
    frame = pd.DataFrame(
        [
            {
                "resource": i.name,
                "available": i.available,
                "version": i.version or "—",
                "detail": i.detail,
            }
            for i in items
        ]
    )
    dataframe(
        frame,
        hide_index=True,
        width="stretch",
        column_config={"available": st.column_config.CheckboxColumn()},
    )
    for item in items:
        if not item.available:
            notice = st.info if item.optional else st.warning
            notice(f"{item.name}: {item.detail}")


def render_registry() -> None:
    """Every registered metric (key, name, reported keys, range, direction) and its card."""
    frame = pd.DataFrame(
        [
            {
                "key": key,
                "name": cls.name,
                "reports": ", ".join(cls.report_keys()),
                "measures": cls.measures,
                "range": value_range(cls.bounds),
                "direction": direction(cls.higher_is_better),
            }
            for key, cls in METRICS.items()
        ]
    )
    dataframe(frame, hide_index=True, width="stretch")
    for key, cls in METRICS.items():
        with st.expander(f"{cls.name} — metric card"):
            render_card(key)


def render_card(key: str) -> None:
    """A metric's card (markdown shipped with the package, not user text); its code blocks
    (command lines) wrap instead of scrolling past the page."""
    for i, part in enumerate(metric_class(key).card().split("```")):
        if i % 2 == 0:
            if part.strip():
                st.markdown(part)
        else:
            language, _, code = part.partition("\n")
            st.code(code.rstrip("\n"), language=language.strip() or None, wrap_lines=True)


def render_scoring_errors(errors: Mapping[str, str]) -> None:
    """One warning per metric that could not score (e.g. a missing resource); the rest show."""
    for key, message in errors.items():
        st.warning(
            f"{metric_class(key).name} could not be scored: {in_app_words(message)}",
            icon=":material/warning:",
        )


def card_help(key: str, result: MetricResult) -> str:
    """A score card's "?": what the number measures, its range and direction in one line,
    the exact value where the card shows ``< 0.001``, then the signature that reproduces it."""
    value = f"\n\nExact value: {exact(result.value)}" if is_small(result.value) else ""
    return f"{metric_class(key).describe(key)}{value}\n\nSignature: `{result.signature}`"


def render_summary(results: Mapping[str, MetricResult]) -> None:
    """One ``st.metric`` per reported key: the numbers first, evidence below."""
    items = list(results.items())
    for start in range(0, len(items), SUMMARY_PER_ROW):
        row = items[start : start + SUMMARY_PER_ROW]
        # a short last row keeps the column width of the full rows
        columns = st.columns(SUMMARY_PER_ROW)[: len(row)]
        for column, (key, result) in zip(columns, row, strict=True):
            column.metric(
                key_label(key),
                format_number(result.value),
                help=card_help(key, result),
                border=True,
            )


def render_score_table(results: Mapping[str, MetricResult]) -> None:
    """Every key with its value, range, direction and signature (reproducible numbers)."""
    frame = pd.DataFrame(
        [
            {
                "key": key,
                "metric": key_label(key),
                "value": result.value,
                "range": value_range(metric_class(key).bounds),
                "direction": direction(metric_class(key).higher_is_better),
                "signature": str(result.signature),
            }
            for key, result in results.items()
        ]
    )
    dataframe(
        frame,
        hide_index=True,
        width="stretch",
        numbers=["value"],
        column_config={"signature": st.column_config.TextColumn(width="medium")},
    )
    if not results:
        return
    # the exact values and full signatures, copyable for a paper (the table rounds values and
    # truncates long signatures)
    width = max(len(k) for k in results)
    values = {k: repr(float(r.value)) for k, r in results.items()}
    value_width = max(len(v) for v in values.values())
    st.code(
        "\n".join(
            f"{k:<{width}}  {values[k]:<{value_width}}  {r.signature}" for k, r in results.items()
        ),
        language=None,
        wrap_lines=True,
    )


def render_metric(result: MetricResult, *, item: int = 0, key: str | None = None) -> None:
    """A metric's panel: its warnings first, then the evidence of one item."""
    for message in result.warnings:
        st.warning(in_app_words(message), icon=":material/warning:")
    if not result.segments:
        st.info("Nothing was scored.")
        return
    segment = result.segments[item]
    render_intro(metric_class(result.key).key)
    render_details(segment.details, segment, result, key or result.key)
