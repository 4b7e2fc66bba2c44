"""Perturbation lab: perturb a caption (or a whole dataset) and see how every metric reacts.

Inputs -> one call through ``capeval_ui.cached`` -> drawing through ``capeval_ui.perturb_views``.
The perturbation list loops over the registry in ``capeval_core.perturb``. The lab starts from
the caption being studied on Compare (whose "Perturb caption A" button hands it over), and each
mode's inputs are kept in its URL (``?lab_caption=...&lab_ref=...``, ``?lab_mode=batch&...``),
so a reload or a copied link reopens the same view; a batch on the Judgments page's set names
it by its digest, and a link to it on a server without that set says so.
"""

from __future__ import annotations

import streamlit as st

from capeval_core import CapevalError, examples
from capeval_core.metrics import REPORTED_KEYS
from capeval_core.perturb import PERTURBATIONS
from capeval_ui import (
    cached,
    choices,
    current_tokenizer,
    example_picker,
    meta_views,
    perturb_views,
    progress,
    state,
    views,
)

MODES = ("One caption", "Batch")
DEFAULT_PERTURBATIONS = ["synonym", "redundant", "shuffle"]
#: the metrics the batch mode scores by default (fast, no extra resources)
BATCH_KEYS = ["bleu_4", "rouge_l", "cider_d", "meteor"]


#: the example picker: it fills the caption to perturb and the references
EXAMPLE = example_picker.Picker(
    "lab_example", "lab_candidate", "lab_references", "lab_draw", "lab_draw_again"
)


def _from_compare() -> None:
    """Start from the caption being studied on Compare (its candidate A and references),
    when there is one."""
    candidate = st.session_state.get("candidate", "")
    if candidate.strip():
        st.session_state["lab_candidate"] = candidate
        st.session_state["lab_references"] = st.session_state.get("references", "")


def _one_caption() -> None:
    state.default("lab_example", examples.DEFAULT_EXAMPLE)
    state.default("lab_perturbations", DEFAULT_PERTURBATIONS)
    state.default("lab_seed", 0)
    state.default("lab_n", 1)
    state.default("lab_cider_idf", choices.DEFAULT_IDF)
    state.default("lab_metrics", list(REPORTED_KEYS))
    state.default("lab_table2", False)
    example_name = example_picker.render(EXAMPLE)
    if example_name != choices.COCO_RANDOM:  # a link's draw beside other captions
        state.unused_link_value("lab_draw", "a draw is used only with the random COCO image")
    left, right = st.columns(2)
    candidate = left.text_area("Caption to perturb", key="lab_candidate", height=140)
    references = views.split_lines(
        right.text_area("References (one per line)", key="lab_references", height=140)
    )
    names = st.multiselect(
        "Perturbations",
        list(PERTURBATIONS),
        key="lab_perturbations",
        format_func=perturb_views.label,
        help="Each one is applied to the original caption on its own.",
    )
    c1, c2, c3 = st.columns(3)
    seed = int(c1.number_input("Seed", 0, state.SEED_MAX, step=1, key="lab_seed"))
    n = int(c2.number_input("Words to change", 1, state.LAB_MAX_WORDS, step=1, key="lab_n"))
    idf_label = c3.radio(
        "CIDEr-D IDF source",
        list(choices.IDF_SOURCES),
        key="lab_cider_idf",
        horizontal=True,
        help=choices.IDF_HELP,
    )
    keys = st.multiselect(
        "Metrics", list(REPORTED_KEYS), key="lab_metrics", format_func=views.key_label
    )
    table2 = st.toggle(
        "Table 2 preset: the caption against itself (upper bound), then synonyms, redundancy "
        "and word order, each scored against the original caption",
        key="lab_table2",
    )

    # a draw is named only beside its captions
    query = state.write(
        ONE_PARAMS, {} if example_name == choices.COCO_RANDOM else {"lab_draw": None}
    )
    views.show_link(views.copy_link(st), TITLE, query)

    problems = views.input_problems(candidate, references)
    if not keys:
        problems.append("Pick at least one metric.")
    for problem in problems:
        st.error(problem)
    if problems:
        st.stop()
    idf = choices.IDF_SOURCES.get(idf_label or choices.DEFAULT_IDF, "coco-val2014")
    tokenizer = current_tokenizer()
    if idf == "coco-val2014" and "cider_d" in keys:
        progress.prepare_coco_idf(tokenizer)

    if table2:
        st.subheader("Table 2 preset")
        with st.spinner(choices.scoring_message([candidate])):
            table, failed = cached.lab_table2(candidate, seed, tuple(keys), tokenizer, idf)
        for key, msg in failed.items():
            st.warning(f"{key} skipped: {choices.page_message(msg)}")
        perturb_views.render_table2(table, key="lab-table2-chart")

    if not names:
        st.info("Pick one or more perturbations to apply.")
        return
    with st.spinner(choices.scoring_message([candidate, *references])):
        scores, failed = cached.lab_perturb_and_score(
            candidate, references, tuple(names), seed, n, tuple(keys), tokenizer, idf
        )
    for key, msg in failed.items():
        st.warning(f"{key} skipped: {choices.page_message(msg)}")
    st.subheader("Scores before and after")
    perturb_views.render_deltas(scores, key="lab-deltas-chart")
    st.subheader("Perturbed captions")
    for s in scores:
        with st.container(border=True):
            st.text(perturb_views.label(s.perturbation.name))
            perturb_views.render_perturbation(s.perturbation)


#: the batch that ran (its settings, and the loaded set it ran on): its results stay on the
#: page, marked out of date once the settings change, until Run batch is pressed again
BATCH_RAN = "_lab_batch_ran"
#: set by Run batch, and by a link that ran a batch (``lab_run=1``, read into the session
#: key ``lab_batch_on``): run the settings shown
BATCH_GO = "_lab_batch_go"


def _start_batch() -> None:
    st.session_state[BATCH_GO] = True


def _batch() -> None:
    state.default("lab_images", 500)
    state.default("lab_batch_seed", 0)
    state.default("lab_batch_metrics", BATCH_KEYS)
    dataset_label = st.selectbox("Dataset", list(choices.LAB_DATASETS), key="lab_dataset")
    c1, c2, c3 = st.columns(3)
    name = c1.selectbox(
        "Perturbation",
        list(PERTURBATIONS),
        key="lab_batch_perturbation",
        format_func=perturb_views.label,
    )
    n_images = int(
        c2.number_input("Images", min_value=10, max_value=40_000, step=100, key="lab_images")
    )
    seed = int(c3.number_input("Seed", 0, state.SEED_MAX, step=1, key="lab_batch_seed"))
    keys = st.multiselect(
        "Metrics", list(REPORTED_KEYS), key="lab_batch_metrics", format_func=views.key_label
    )
    dataset = choices.LAB_DATASETS[dataset_label or next(iter(choices.LAB_DATASETS))]
    loaded = st.session_state.get(state.JSET_KEY) if dataset == "loaded" else None
    digest = loaded.content_digest if loaded is not None else ""
    settings = (
        dataset,
        n_images,
        name or "synonym",
        seed,
        tuple(keys),
        current_tokenizer(),
        digest,
    )
    go = st.session_state.pop(BATCH_GO, False)  # asked for these settings, now or never
    # a batch on the Judgments page's set runs only once a graded set is loaded there
    refused = dataset == "loaded" and (loaded is None or loaded.kind != "graded")
    if go and keys and not refused:
        st.session_state[BATCH_RAN] = (settings, loaded)
    ran = st.session_state.get(BATCH_RAN)
    current = ran is not None and ran[0] == settings
    # the URL names the Judgments page's set only when the batch runs on it; lab_run=1 only
    # while the results shown are these settings' (a link then shows them)
    query = state.write(BATCH_PARAMS, {state.JSET_KEY: loaded, "lab_batch_on": current})
    run, link = st.columns(2)
    views.show_link(views.copy_link(link), TITLE, query)  # a view with no metric is one too
    if not keys:
        st.error("Pick at least one metric.")
        st.stop()
    run.button("Run batch", key="lab_run_batch", type="primary", on_click=_start_batch)
    if go and refused:
        st.error("Load a graded judgment set on the Judgments page first.")
    if ran is None:
        if not (go and refused):
            st.info("Choose a dataset and a perturbation, then run.")
        return
    if not current:
        st.warning(
            "The results below are out of date: the settings changed since they ran. Press "
            "Run batch to run these.",
            icon=":material/history:",
        )
    (dataset, n_images, name, seed, keys, tokenizer, digest), loaded = ran
    with st.spinner("Perturbing and scoring every candidate…"):
        result = cached.lab_batch(dataset, n_images, name, seed, keys, tokenizer, digest, loaded)
    perturb_views.render_batch(result, key="lab-batch")


TITLE = "Perturbation lab"
ONE_PARAMS = state.lab_one_params(list(PERTURBATIONS), list(REPORTED_KEYS), choices.IDF_SOURCES)
BATCH_PARAMS = state.lab_batch_params(
    choices.LAB_DATASETS, list(PERTURBATIONS), list(REPORTED_KEYS)
)
st.title(TITLE)
st.caption(
    "How does each metric react to a synonym, a redundant word or a changed word order? "
    "Change a caption in a known way and compare every metric's score before and after. "
    "Perturbations are seeded: the same seed gives the same caption."
)
views.page_link("app_pages/compare.py", "Back to Compare captions", ":material/arrow_back:")
try:
    if "lab_candidate" not in st.session_state:  # a first visit: Compare's caption, if any
        example_picker.apply(EXAMPLE)
        _from_compare()
    # a reload or a link: the lab's inputs come back (each mode has its own parameters)
    restored = state.restore((*ONE_PARAMS, *BATCH_PARAMS))
    state.say_rejected(restored)
    if restored:  # a link's batch: run its settings when it ran one (lab_run=1), else none
        st.session_state.pop(BATCH_RAN, None)
        st.session_state[BATCH_GO] = bool(st.session_state.get("lab_batch_on"))
        state.valid_choices("lab_perturbations", list(PERTURBATIONS))
        state.valid_choices("lab_metrics", list(REPORTED_KEYS))
        state.valid_choices("lab_batch_metrics", list(REPORTED_KEYS))
    # a link to a batch on the Judgments page's set this server does not hold says so
    if (
        st.session_state.get("lab_mode") == "Batch"
        and choices.LAB_DATASETS.get(st.session_state.get("lab_dataset", "")) == "loaded"
    ):
        meta_views.stop_if_linked_set_missing()
    mode = st.radio("Mode", MODES, key="lab_mode", horizontal=True)
    if mode != "Batch":  # a link's lab_run=1 is for the batch it opens, not for a later visit
        st.session_state.pop(BATCH_GO, None)
    if mode == "Batch":
        _batch()
    else:
        _one_caption()
except CapevalError as exc:
    st.error(choices.page_message(str(exc)))
    st.stop()
