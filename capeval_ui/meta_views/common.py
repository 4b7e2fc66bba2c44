"""What the meta-evaluation pages share: the set a page works on (and the words for a link
whose set this server does not hold), the metric picker, CSV downloads, the chart layout and
the metric x metric heatmap."""

from __future__ import annotations

import html
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from capeval_core.metrics import available_keys
from capeval_core.stats import to_csv_text
from capeval_core.stats.export import sidecar_path, signatures_text
from capeval_ui import cached, charts, choices, current_tokenizer, state, store
from capeval_ui.formats import UNDERFLOW_TEXT, exact, label_texts, literal
from capeval_ui.views import copy_link, key_label, page_link, show_link

METRICS_KEY = state.METRICS_KEY
METHOD_LABELS = {
    "pearson": "Pearson r",
    "spearman": "Spearman ρ",
    "kendall_b": "Kendall τb",
    "kendall_c": "Kendall τc",
}
COLOURS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2"]


def safe(text: object) -> str:
    """User text for a plotly label: markup escaped."""
    return html.escape(str(text))


def layout(fig: go.Figure, height: int = 360, **kwargs: object) -> go.Figure:
    """The meta pages' chart layout: legend above, small margins, the app's number rule."""
    fig.update_layout(
        height=height,
        margin={"l": 10, "r": 10, "t": 40, "b": 10},
        legend={"orientation": "h", "y": 1.12, "x": 0},
        **kwargs,
    )
    return charts.readable(fig)


# -- the set a page works on -------------------------------------------------------------------
def find_set(short: str) -> object | None:
    """The set a link names by its digest prefix: one this server has loaded, or a demo set
    (each is built the same on every server, so a link to a demo opens anywhere)."""
    found = store.find_set(short)
    if found is not None:
        return found
    for generator, n_images in (*choices.DEMO_SETS.values(), choices.DISTRACTOR_DEMO):
        demo = cached.demo_judgments(generator, n_images)
        if store.short_digest(demo) == short:
            store.remember_set(demo)
            return demo
    return None


def stop_if_linked_set_missing(key: str = state.JSET_KEY, what: str = "judgment set") -> None:
    """When the link that opened the page names a set this server does not hold (a restart,
    another machine), say so at the top, keep the URL and the choices, and stop: no numbers
    until the user loads it again or opens the demo (issue 42)."""
    short = state.linked_set(key, find_set)
    if short is None:
        return
    render_missing_set(key, what, short)
    st.stop()


def render_missing_set(
    key: str,
    what: str,
    short: str,
    *,
    where: str = "on the Judgments page",
    on_demo: Callable[[], None] | None = None,
) -> None:
    """The words and the two ways on, for a link whose set is not on this server: load it
    again (``where``; a link to the Judgments page unless it is this page), or open the
    demo (``on_demo``, else the page's demo fallback)."""
    st.warning(
        f"This link's {what} ({literal(short)}) is not on this server: "
        f"{store.dropped_words(store.SETS, short, 'sets')}, and a link cannot carry the file "
        "itself. "
        f"Load it again {where} (the choices in this link are kept), or open the demo. "
        "Nothing is computed until you do.",
        icon=":material/link_off:",
    )
    again, demo = st.columns(2)
    if where == "on the Judgments page":
        with again:
            page_link("app_pages/judgments.py", "Load it again", ":material/upload_file:")
    demo.button(
        "Open the demo",
        key=f"decline-{key}",
        on_click=on_demo or state.decline_linked_set,
        args=() if on_demo else (key,),
        icon=":material/science:",
    )


def set_for(kind: str) -> tuple[Any, str]:
    """The set a page works on, and where it came from: the loaded set when it is of
    ``kind`` ("graded" or "pairwise"), else the matching demo set (the page says so)."""
    loaded = st.session_state.get(state.JSET_KEY)
    if loaded is not None and loaded.kind == kind:
        return loaded, "loaded"
    label = next(name for name, (gen, _) in choices.DEMO_SETS.items() if gen == kind)
    generator, n_images = choices.DEMO_SETS[label]
    why = "no set loaded" if loaded is None else f"the loaded set is {loaded.kind}, not {kind}"
    return cached.demo_judgments(generator, n_images), f"demo ({why})"


def set_or_stop(kind: str) -> tuple[Any, bool]:
    """The judgment set a page works on (the loaded one, else the demo), with its banner,
    and whether it is the loaded one (the URL names it then). A link naming a set this
    server does not hold, or a set that cannot be had, stops the page with words."""
    from capeval_core import CapevalError

    stop_if_linked_set_missing()
    try:
        jset, origin = set_for(kind)
    except CapevalError as exc:
        st.error(choices.page_message(str(exc)))
        st.stop()
    loaded = origin == "loaded"
    if loaded:
        store.remember_set(jset)
    render_set_banner(jset, origin)
    return jset, loaded


def set_link(
    jset: Any, loaded: bool, title: str, params: Sequence[state.Param]
) -> tuple[Any, dict]:
    """The page's "Copy link", filled with its URL (written now): the link names the set
    loaded on the Judgments page by its digest, also where this page shows a demo (the set
    is of the other kind: a reload without it started a session without the set, and the
    other pages then showed the demo), and names nothing when no set is loaded. Returns the
    link's slot and the set the URL names, for writing the URL again after choices made
    further down the page."""
    session_set = jset if loaded else st.session_state.get(state.JSET_KEY)
    named = "The loaded set" if loaded else "The set loaded on the Judgments page"
    holds = "" if session_set is None or session_set.synthetic else named
    link = copy_link(st, holds=holds)
    set_shown = {state.JSET_KEY: session_set}
    show_link(link, title, state.write(params, set_shown))
    return link, set_shown


def render_set_banner(jset: object, origin: str) -> None:
    """Which set the page works on; a demo fallback is said in so many words."""
    if origin != "loaded":
        st.info(
            f"Using the synthetic demo set ({origin.removeprefix('demo ').strip('()')}). "
            "Load your own judgments on the Judgments page.",
            icon=":material/science:",
        )
    st.text(str(jset))  # file names are user text: shown literally
    render_notes(jset)


def render_notes(jset: object) -> None:
    """What the loader noticed in the set's files (references that look joined with another
    separator than ``|||``, ...), one line each, as text; every page says them beside the set it
    shows."""
    for note in jset.notes:
        st.text(f"Note: {note}")


# -- items a metric left out (issue 41) -------------------------------------------------------
def render_left_out(jset: object, scores: object) -> None:
    """A metric's notes on the set, then which items a metric could not score and why
    (nothing when every item was scored): a warning with the counts, the ids and reasons as
    plain text (they are user text)."""
    from capeval_core.judgments.scoring import left_out_lines

    said = scores.notes.values()  # type: ignore[attr-defined]
    for note in dict.fromkeys(n for notes in said for n in notes):  # CIDEr-D's IDF, cached too
        st.warning(choices.page_message(note))
    lines = left_out_lines(jset, scores)
    if not lines:
        return
    unit = "items" if jset.kind == "graded" else "pairs"  # type: ignore[attr-defined]
    n = len(scores.left_out())  # type: ignore[attr-defined]
    total = len(jset)  # type: ignore[arg-type]
    st.warning(
        f"{n:,} of {total:,} {unit} left out: a metric could not score them (which and "
        f"why below); the statistics here use the {total - n:,} {unit} every metric scored."
    )
    st.text("\n".join(lines))


def scored_on_common_items(
    jset: Any, keys: tuple[str, ...], *protocol: int
) -> tuple[str, Any, Any]:
    """The set scored with ``keys`` in the sidebar's tokenizer (``protocol``: a pairwise set's
    references, draws and seed), what was left out said (:func:`render_left_out`), then the
    tokenizer, and the set and scores on the items every metric scored
    (``capeval_core.judgments.scoring.on_common_items``): a page's statistics use those."""
    from capeval_core.judgments.scoring import on_common_items

    tokenizer = current_tokenizer()
    scores = cached.judgment_scores(jset.content_digest, keys, tokenizer, *protocol, _jset=jset)
    render_left_out(jset, scores)
    return (tokenizer, *on_common_items(jset, scores))


# -- shared widgets --------------------------------------------------------------------------------
def metric_picker(external: Sequence[str] = ()) -> tuple[str, ...]:
    """Multiselect over every registered key and the set's ``external`` metrics; default the
    fast ones (BLEU-4, ROUGE-L, CIDEr-D, METEOR), kept across pages
    (``state.chosen_metrics``)."""
    options = [*available_keys(), *external]
    state.chosen_metrics(options, external, choices.FAST_KEYS)
    keys = st.multiselect(
        "Metrics",
        options,
        key=METRICS_KEY,
        format_func=key_label,
        on_change=state.keep_metrics,
        help="The default metrics are fast. WMD and MEAN load word embeddings on first use.",
    )
    return tuple(keys)


def external_not_offered(names: Sequence[str]) -> str:
    """One line: these external metrics are not offered because they cannot score the
    captions shown (their scores come with the Judgments page's set)."""
    listed = ", ".join(names)
    return (
        f"Not offered here: {listed} (external; scores come only with the Judgments page's "
        "set and cannot be computed for these captions)."
    )


def set_about(jset: Any, human_name: str | None = None) -> dict[str, Any]:
    """The judgment set a download was made from, for its signatures file: its files, format,
    preset and content digest (and the human score used)."""
    about: dict[str, Any] = {
        "judgments": list(jset.source),
        "format": jset.format,
        "preset": jset.preset,
        "set_sha256": jset.content_digest[:12],
    }
    if human_name is not None:
        about["human"] = human_name
    return about


def download_csv(
    frame: pd.DataFrame,
    signatures: Mapping[str, str],
    file_name: str,
    *,
    key: str,
    settings: Mapping[str, Any] | None = None,
) -> None:
    """A CSV download that is safe in a spreadsheet and opens with a plain
    ``pandas.read_csv``, and beside it the signatures as JSON: the metrics' signatures and
    the ``settings`` behind the table (the set, the test, the resampling), which the CSV has
    no room for."""
    described = bool(signatures or settings)
    left, right = st.columns(2) if described else (st, None)
    left.download_button(
        "Download CSV",
        to_csv_text(frame),
        file_name=file_name,
        mime="text/csv",
        key=key,
        icon=":material/download:",
    )
    if right is None:
        return
    right.download_button(
        "Signatures (JSON)",
        signatures_text(
            signatures, file_name, **({"settings": dict(settings)} if settings else {})
        ),
        file_name=sidecar_path(file_name).name,
        mime="application/json",
        key=f"{key}-signatures",
        icon=":material/download:",
    )


# -- metric x metric heatmaps -------------------------------------------------------------------
def heatmap_text(value: float, fmt: str) -> str:
    """A heatmap cell as the tables write it: four decimals, ``< 0.001`` closer to 0 (p-values,
    ``fmt="p"``: and ``< 1e-300`` where the double underflowed to 0), empty where undefined.

    >>> heatmap_text(0.0003, "p"), heatmap_text(0.4439, "p"), heatmap_text(0.5, "r")
    ('< 0.001', '0.4439', '0.5000')
    """
    if fmt == "p" and value == 0:
        return UNDERFLOW_TEXT
    return label_texts([value])[0]


def render_heatmap(
    matrix: pd.DataFrame, *, key: str, title: str, zmin: float, zmax: float, fmt: str = "r"
) -> None:
    """A labelled heatmap of a metric x metric table (labels are registry keys); ``fmt="p"``
    writes p-values (:func:`heatmap_text`); the exact value is in the hover label."""
    labels = [key_label(k) for k in matrix.index]
    z = matrix.to_numpy(float)
    text = [[heatmap_text(v, fmt) for v in row] for row in z]
    fig = go.Figure(
        go.Heatmap(
            z=z,
            x=labels,
            y=labels,
            text=text,
            customdata=[[exact(v) for v in row] for row in z],
            texttemplate="%{text}",
            hovertemplate="%{y} vs %{x}: %{customdata}<extra></extra>",
            colorscale="RdBu" if zmin < 0 else "Greens_r",
            zmin=zmin,
            zmax=zmax,
            hoverongaps=False,
        )
    )
    layout(fig, height=120 + 45 * len(labels), title={"text": title, "font": {"size": 14}})
    fig.update_yaxes(autorange="reversed", type="category")
    fig.update_xaxes(type="category", side="bottom")
    st.plotly_chart(fig, key=key, width="stretch")
