"""Robustness: binary forced choice between a correct caption and distracted ones (seed
Table 5: replace-scene, replace-person, share-scene, share-person), from the pairwise set
loaded on the Judgments page, an uploaded pairwise file, or generated from COCO val2014
captions."""

from __future__ import annotations

import streamlit as st

from capeval_core import CapevalError
from capeval_core.judgments import protocols
from capeval_core.judgments.demo import distractors_described
from capeval_ui import cached, choices, meta_views, state, store, views
from capeval_ui.formats import literal

GENERATED = "Generated from COCO val2014 captions (synthetic)"
UPLOADED = "Upload a pairwise file"
LOADED = "The pairwise set loaded on the Judgments page"
MAP_ON_JUDGMENTS = (
    "Columns named otherwise? Load the file on the Judgments page (format pairwise), which "
    "maps a file's columns to these, then choose “The pairwise set loaded on the Judgments "
    "page” here."
)
DISTRACTORS_UNUSED = "a distractor file is used only with “Upload a pairwise file”"


def load_distractors(name: str, data: bytes) -> bool:
    """Load an uploaded distractor file (generic pairwise format); on a CapevalError keep
    the previous set and remember the message."""
    try:
        jset = cached.load_upload(((name, data),), "pairwise", None)
    except CapevalError as exc:
        st.session_state["distractor_error"] = (name, str(exc))
        return False
    st.session_state.pop("distractor_error", None)
    st.session_state[state.DISTRACTOR_SET_KEY] = jset
    store.remember_set(jset)
    state.decline_linked_set(state.DISTRACTOR_SET_KEY)
    return True


def _kept(short: str | None) -> str:
    """What the page shows after a file was not loaded: the file loaded before, the generated
    set, or (a link naming a file this server does not hold) nothing yet. It said "the
    previous set is kept" when no file had been loaded."""
    before = st.session_state.get(state.DISTRACTOR_SET_KEY)
    if before is not None:
        return f"; the distractor file loaded before ({literal(', '.join(before.source))}) is kept"
    return "" if short is not None else "; the generated set is shown until a file is loaded"


TITLE = "Robustness"
METRIC_TIES = ["half", "correct", "wrong"]
SOURCES = {LOADED: "loaded", GENERATED: "generated", UPLOADED: "upload"}
PARAMS = state.robustness_params(SOURCES, METRIC_TIES)
st.title(TITLE)
# the columns the pairwise loader requires (capeval_core.judgments.pairwise): the text said
# "`candidate_a`, or the one marked `preferred`", and a file without `preferred` was refused
st.caption(
    "Each pair holds two captions, `candidate_a` and `candidate_b`, their `references`, and "
    "which caption is the correct one, given by a `preferred` column (`a` or `b`; a pair "
    "marked `tie` has no correct caption and is left out) or by vote counts `votes_a` and "
    "`votes_b` (the majority): one of the two is required. The optional `category` names the "
    "distractor type, e.g. the seed paper's replace-scene, replace-person, share-scene and "
    "share-person. A metric passes a pair when it scores the correct caption higher."
)
state.say_rejected(state.restore(PARAMS))
# a link naming a set this server does not hold (the loaded pairwise set, or an uploaded
# distractor file) says so, keeps its choices and computes nothing until the user decides
meta_views.stop_if_linked_set_missing()
short = state.linked_set(state.DISTRACTOR_SET_KEY, meta_views.find_set)
notice = st.container()  # filled below the choice of source, when the upload is the choice
if getattr(st.session_state.get(state.DISTRACTOR_SET_KEY), "kind", "pairwise") != "pairwise":
    # only a link puts a set of another kind here (an upload is read as pairwise): it was
    # drawn as one and ended in a traceback
    del st.session_state[state.DISTRACTOR_SET_KEY]
    st.warning(
        "This link's distractor set is a graded judgment set, not a pairwise one: it is not "
        "used here.",
        icon=":material/warning:",
    )
on_judgments = st.session_state.get(state.JSET_KEY)
loaded = on_judgments if getattr(on_judgments, "kind", None) == "pairwise" else None
state.default("distractor_source", LOADED if loaded is not None else GENERATED)
source = st.radio("Distractor set", [LOADED, GENERATED, UPLOADED], key="distractor_source")
if short is not None and source != UPLOADED:
    # another source chosen: the link's file is not awaited, and the URL follows the page (it
    # stayed the link's, which reopened the upload and its notice)
    state.decline_linked_set(state.DISTRACTOR_SET_KEY)
    state.unused_link_value(state.DISTRACTOR_SET_KEY, DISTRACTORS_UNUSED)
    short = None
if short is not None:
    with notice:
        meta_views.render_missing_set(
            state.DISTRACTOR_SET_KEY, "distractor file", short, where="below"
        )
if source != UPLOADED and st.session_state.get(state.DISTRACTOR_SET_KEY) is not None:
    # a link's distractor file beside another source was dropped from the address unsaid
    state.unused_link_value(state.DISTRACTOR_SET_KEY, DISTRACTORS_UNUSED)
if loaded is not None and source != LOADED:
    st.info(
        "A pairwise set is loaded on the Judgments page; choose the first option to test it here.",
        icon=":material/info:",
    )
    st.text(str(loaded))
if source == LOADED and loaded is None:
    what = "The set loaded on" if on_judgments is not None else "No set is loaded on"
    kind = " is graded, not pairwise" if on_judgments is not None else ""
    st.info(
        f"{what} the Judgments page{kind} (load a pairwise one there, e.g. PASCAL-50S): "
        "showing the generated set.",
        icon=":material/info:",
    )
if source == UPLOADED:
    upload = st.file_uploader(
        "Pairwise file (CSV, TSV, JSON or JSONL)",
        type=["csv", "tsv", "json", "jsonl"],
        key="distractor_file",
        # the error of the file before is not the new one's
        on_change=lambda: st.session_state.pop("distractor_error", None),
    )
    if upload is not None:
        st.button(
            "Load",
            key="load_distractors",
            type="primary",
            on_click=load_distractors,
            args=(upload.name, upload.getvalue()),
        )
    if "distractor_error" in st.session_state:
        # named by its file: a file of a type the uploader refuses is shown beside it and
        # changes nothing here, and "The file was not loaded" read as that file's error
        name, message = st.session_state["distractor_error"]
        st.error(f"{literal(name)} was not loaded{_kept(short)}. {choices.page_message(message)}")
        if "missing required column" in message:  # the Judgments page maps a file's columns
            st.info(MAP_ON_JUDGMENTS, icon=":material/info:")

if short is not None:
    st.stop()  # the URL stays the link's until the user uploads a file or opens the demo
try:
    jset = st.session_state.get(state.DISTRACTOR_SET_KEY) if source == UPLOADED else None
    if source == LOADED:
        jset = loaded
    if jset is None:
        jset = cached.demo_judgments(*choices.DISTRACTOR_DEMO)
        if source == UPLOADED:
            st.info("No distractor file loaded yet: showing the generated set.")
        st.text(f"Generated distractor types: {distractors_described()}.")
    st.text(str(jset))
    meta_views.render_notes(jset)  # as the Judgments page says them
    if not len(jset):
        st.warning("The distractor set has no pairs: there is nothing to draw.")
        st.stop()
    # An external metric has scores only for the captions of the set it came with (it cannot
    # score new ones): offered for that set, named as missing for any other (issue 32).
    keys = meta_views.metric_picker(jset.external_names)
    unscored = [
        k for k in getattr(on_judgments, "external_names", ()) if k not in jset.external_names
    ]
    if unscored:
        st.info(meta_views.external_not_offered(unscored), icon=":material/info:")
    metric_tie = st.radio("Metric tie", METRIC_TIES, key="forced_tie", horizontal=True)
    # the URL names the distractor file the page shows by its digest, and the set loaded on
    # the Judgments page whichever source is shown: without it, a reload started a session
    # without that set, and the other pages then showed the demo
    shown = {
        state.JSET_KEY: on_judgments,
        state.DISTRACTOR_SET_KEY: jset if source == UPLOADED and not jset.synthetic else None,
    }
    # what the link names by a digest instead of carrying it (an upload; a demo is rebuilt)
    distractors = not jset.synthetic and jset is not on_judgments
    judgments = on_judgments is not None and not on_judgments.synthetic
    holds = {
        (True, True): "The distractor set, like the Judgments page's set,",
        (True, False): "The distractor set",
        (False, True): "The Judgments page's set",
    }.get((distractors, judgments), "")
    views.show_link(views.copy_link(st, holds=holds), TITLE, state.write(PARAMS, shown))
    if not keys:
        st.warning("Choose at least one metric.")
        st.stop()
    # every reference of a pair, one draw: forced choice samples nothing
    tokenizer, jset, scores = meta_views.scored_on_common_items(
        jset, keys, protocols.ALL_REFERENCES, 1, 0
    )
    results = cached.forced_choice_report(
        jset.content_digest, tuple(scores.keys), tokenizer, metric_tie, _jset=jset, _scores=scores
    )
except CapevalError as exc:
    st.error(choices.page_message(str(exc)))
    st.stop()

# the Judgments page's set is grouped by category (PASCAL-50S's HC/HI/HM/MM), not distractor type
meta_views.render_forced_choice(
    results,
    scores.signatures,
    metric_tie,
    meta_views.set_about(jset),
    groups="category" if source == LOADED and loaded is not None else "distractor type",
)
