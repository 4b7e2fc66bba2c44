"""Compare captions: score one candidate against its references with every metric.

Inputs -> one call through ``capeval_ui.cached`` -> drawing through ``capeval_ui.views``.
The panels loop over the metric registry, so a new metric needs no change here.
"""

from __future__ import annotations

import random

import streamlit as st

from capeval_core import CapevalError
from capeval_core.metrics import METRICS, REPORTED_KEYS
from capeval_ui import cached, current_tokenizer, views


def _apply_example() -> None:
    """Fill the text areas from the picked example (a fresh draw for the random COCO one).

    Runs as a widget callback, before the page's try block, so a CapevalError (COCO captions
    not installed) is kept for the page to show instead of escaping the run.
    """
    name = st.session_state.get("example", cached.DEFAULT_EXAMPLE)
    if name == cached.COCO_RANDOM:
        st.session_state["coco_draw"] = random.randrange(cached.COCO_POOL)
    try:
        example = cached.load_example(name, st.session_state.get("coco_draw", 0))
    except CapevalError as exc:
        st.session_state["example_error"] = str(exc)
        return
    st.session_state.pop("example_error", None)
    st.session_state["candidate"] = example.candidate
    st.session_state["references"] = "\n".join(example.references)
    st.session_state["example_source"] = example.source


st.title("Compare captions")

try:
    if "candidate" not in st.session_state:
        _apply_example()

    pick, draw = st.columns([4, 1], vertical_alignment="bottom")
    pick.selectbox("Example", cached.example_names(), key="example", on_change=_apply_example)
    if st.session_state.get("example") == cached.COCO_RANDOM:
        draw.button("Draw another image", key="draw", on_click=_apply_example)
    if "example_error" in st.session_state:
        st.error(f"Could not load the example: {st.session_state['example_error']}")
    st.caption(f"Last example loaded: {st.session_state.get('example_source', 'none')}")

    left, right = st.columns(2)
    candidate = left.text_area("Candidate caption", key="candidate", height=160)
    references = views.split_lines(
        right.text_area("References (one per line)", key="references", height=160)
    )
    idf_label = st.radio(
        "CIDEr-D IDF source",
        list(cached.IDF_SOURCES),
        key="cider_idf",
        horizontal=True,
        help=(
            "The scored set is what coco-caption does; with one image every weight is 0. "
            "COCO val2014 takes document frequencies from the 40,504 val images' references: "
            "the table is built once per tokenizer (it can take a minute or two) and then cached."
        ),
    )

    problems = views.input_problems(candidate, references)
    for problem in problems:
        st.error(problem)
    if problems:
        st.stop()

    idf = cached.IDF_SOURCES[idf_label or cached.DEFAULT_IDF]
    with st.spinner(cached.scoring_message(idf)):
        scored = cached.score_captions(
            tuple(REPORTED_KEYS), candidate, references, current_tokenizer(), idf
        )
except CapevalError as exc:
    st.error(str(exc))
    st.stop()

views.render_scoring_errors(scored.errors)
results = scored.results
views.render_summary(results)
with st.expander("Score table with signatures"):
    views.render_score_table(results)

tabs = st.tabs([cls.name for cls in METRICS.values()])
for tab, cls in zip(tabs, METRICS.values(), strict=True):
    with tab:
        if cls.key in scored.errors:
            st.info(f"{cls.name} could not be scored; see the warning above.")
            continue
        views.render_metric(results[cls.primary_key()], key=cls.key)
