"""Compare captions: score one candidate (or two, side by side in a wide window, one above
the other in a narrower one) against the same references with every metric.

Inputs -> one call through ``capeval_ui.cached`` per candidate -> drawing through
``capeval_ui.views``. The panels loop over the metric registry, so a new metric needs no
change here. The inputs survive a visit to another page (``capeval_ui.state``) and are kept in
the URL with every choice (``?candidate=...&candidate_b=...&ref=...&ref=...&idf=...&
tokenizer=...&tab=...``, and each panel's n-gram order or reference), so the
address is a link that reproduces every number and drawing; the "Copy link" button shows it
whole. An image opened from a Systems table's row carries the note saying which row of which
table it is (``from_image=...&from_a_value=...``) while its captions are shown, so a reload
says it too. A link naming a Systems table's IDF set this server does not hold says so and
scores nothing until the user picks another source. A link naming a retired SPICE parser
(``spice_parser=...``) gets a note; SPICE has one parser now.
"""

from __future__ import annotations

import time

import streamlit as st

from capeval_core import CapevalError, examples
from capeval_core.files import counted
from capeval_core.metrics import METRICS, REPORTED_KEYS
from capeval_ui import (
    cached,
    choices,
    current_tokenizer,
    example_picker,
    progress,
    state,
    systems_views,
    views,
)
from capeval_ui.formats import literal

#: where the session keeps the time each set of inputs took to score, the latest few
SCORED_MS, KEPT_TIMINGS = "compare_scored_ms", 32

#: the example picker: it fills candidate A and the references, and empties candidate B
EXAMPLE = example_picker.Picker(
    "example", "candidate", "references", "coco_draw", "draw", ("candidate_b",)
)


def _idf_sources() -> dict[str, str]:
    """The IDF sources offered: COCO val2014 and the scored set, and a Systems table's set
    while this page shows an image opened from it, or a link names it (registered in this
    server process: a link from the table's "open" column opens in a new session)."""
    from capeval_core.metrics.idf import (
        SET_PREFIX,
        has_reference_set,
        reference_set_document_frequency,
    )

    sources = dict(choices.IDF_SOURCES)
    note = st.session_state.get(state.FROM_SYSTEMS)
    if note and has_reference_set(note["idf"]):
        sources[note["idf_label"]] = note["idf"]
    for name in ("idf", "from_idf"):  # the link's source, and its drill-down's table's
        linked = st.query_params.get(name, "")
        if (
            linked.startswith(SET_PREFIX)
            and has_reference_set(linked)
            and linked not in sources.values()
        ):
            # named as the drill-down named it (a reload called it "a Systems table's
            # references")
            n_images = reference_set_document_frequency(linked).documents
            sources[systems_views.idf_label(n_images)] = linked
    return sources


def _missing_idf(restored: bool) -> str | None:
    """The IDF set a link named that this server does not hold (a Systems table's references
    registered before a restart, or on another server), until the user picks a source."""
    from capeval_core.metrics.idf import SET_PREFIX

    linked = state.rejected().get("idf", "") if restored else ""
    if linked.startswith(SET_PREFIX):
        st.session_state[MISSING_IDF] = linked
    return st.session_state.get(MISSING_IDF)


def _use_idf(label: str | None = None) -> None:
    """The user decided which IDF source scores this link's captions (button or radio)."""
    st.session_state.pop(MISSING_IDF, None)
    if label is not None:
        st.session_state["cider_idf"] = label


#: the link's IDF set this server does not hold (see _missing_idf)
MISSING_IDF = "_compare_missing_idf"
IDF_SOURCES = _idf_sources()
TABS = [cls.name for cls in METRICS.values()]
#: the page's parameters, and the note of an image opened from a Systems table's row
PARAMS = (*state.compare_params(IDF_SOURCES, TABS), *systems_views.NOTE_URL)


def _to_lab() -> None:
    """Hand candidate A and the references to the Perturbation lab (button callback)."""
    inputs = {
        "lab_candidate": st.session_state.get("candidate", ""),
        "lab_references": st.session_state.get("references", ""),
    }
    st.session_state.update(inputs)
    st.session_state["lab_mode"] = "One caption"
    # the example Compare names (its captions unchanged), a COCO image's draw too
    name = st.session_state.get("example", choices.YOUR_OWN)
    st.session_state["lab_example"] = name
    if name != choices.YOUR_OWN:
        st.session_state["lab_example_source"] = st.session_state.get("example_source")
        if "coco_draw" in st.session_state:
            st.session_state["lab_draw"] = st.session_state["coco_draw"]
        state.remember_example("lab_example", inputs)


def _note_from_link() -> None:
    """The note of an image opened from a Systems table's row, as the link restored says it
    (a reload showed the image without it); its values that say no note are named."""
    values = {p.name: st.session_state.get(p.key, "") for p in systems_views.NOTE_URL}
    note, unused = systems_views.note_from_link(
        st.session_state.get("candidate", ""), st.session_state.get("candidate_b", ""), values
    )
    if note is None:
        st.session_state.pop(state.FROM_SYSTEMS, None)
    else:
        st.session_state[state.FROM_SYSTEMS] = note
    for param in systems_views.NOTE_URL:
        if param.name in unused:
            state.unused_link_value(param.key, unused[param.name])


def _evidence(results: dict, key: str, suffix: str = "") -> None:
    cls = METRICS[key]
    views.render_metric(results[cls.primary_key()], key=f"{cls.key}{suffix}")


TITLE = "Compare captions"
st.title(TITLE)
st.caption(
    "Score a caption against reference captions with every metric, and see what each metric "
    "counted to get its number. Add a second candidate to see which one each metric prefers."
)

try:
    state.default("example", examples.DEFAULT_EXAMPLE)
    state.default("candidate_b", "")
    state.default("cider_idf", choices.DEFAULT_IDF)
    if st.session_state["cider_idf"] not in IDF_SOURCES:  # a set this page no longer offers
        st.session_state["cider_idf"] = choices.DEFAULT_IDF
    if "candidate" not in st.session_state:
        example_picker.apply(EXAMPLE)
    # a parser name of the versions that offered a choice is said below, once: not also as
    # "not a setting of this page"
    parser = st.query_params.get("spice_parser")
    restored = state.restore(PARAMS, ("spice_parser",) if choices.is_parser_name(parser) else ())
    missing_idf = _missing_idf(restored)
    if restored:  # a link says the note of a Systems row, or no note
        _note_from_link()
    state.say_rejected(restored, exclude=("idf",) if missing_idf else ())
    if missing_idf:
        st.warning(
            f"This link's CIDEr-D IDF source ({literal(missing_idf)}, the references of a Systems "
            "table) is not on this server: it was registered on another server, or before this "
            "one restarted. Open the Systems page on the same files and click the image again, "
            "or score these captions with another IDF source (CIDEr-D then differs from the "
            "table's). Nothing is scored until you choose.",
            icon=":material/link_off:",
        )
        for column, label in zip(
            st.columns(len(choices.IDF_SOURCES)), choices.IDF_SOURCES, strict=True
        ):
            column.button(
                f"Use {label}'s IDF",
                key=f"use-idf-{label}",
                on_click=_use_idf,
                args=(label,),
            )
    if note := choices.retired_parser_note(parser):
        st.info(note)
    example_name = example_picker.render(EXAMPLE)
    if example_name != choices.COCO_RANDOM:  # a link's draw beside other captions
        state.unused_link_value("coco_draw", "a draw is used only with the random COCO image")

    left, right = st.columns(2)
    candidate = left.text_area("Candidate caption (A)", key="candidate", height=100)
    candidate_b = left.text_area(
        "Second candidate (B, optional)",
        key="candidate_b",
        height=100,
        placeholder="Another caption of the same image, to compare with A metric by metric",
    )
    references = views.split_lines(
        right.text_area("References (one per line)", key="references", height=268)
    )
    idf_label = st.radio(
        "CIDEr-D IDF source",
        list(IDF_SOURCES),
        key="cider_idf",
        horizontal=True,
        help=choices.IDF_HELP,
        on_change=_use_idf,
    )
    idf = IDF_SOURCES.get(idf_label or choices.DEFAULT_IDF, "coco-val2014")
    tokenizer = current_tokenizer()
    if missing_idf:  # the URL stays the link's until the user picks a source
        st.stop()
    two = bool(candidate_b.strip())
    views.forget_stale_references(
        {
            "": (candidate, tuple(references), tokenizer),
            "-b": (candidate_b, tuple(references), tokenizer),
        },
        keep=restored,
    )
    # candidate B's panel choices only while there is a candidate B (a link's are named)
    only_a = {p.key: None for p in state.COMPARE_PANELS if "-b-" in p.key and not two}
    for key in only_a:
        state.unused_link_value(key, "a panel of candidate B, and there is none")
    if example_name != choices.COCO_RANDOM:  # a draw is named only beside its captions
        only_a["coco_draw"] = None
    # the note of an image opened from a Systems row, while these are its captions
    opened_from = st.session_state.get(state.FROM_SYSTEMS)
    if not opened_from or (opened_from["candidate"], opened_from["candidate_b"]) != (
        candidate.strip(),
        candidate_b.strip(),
    ):
        opened_from = None
    only_a.update(systems_views.note_in_url(opened_from))
    query = state.write(PARAMS, only_a)
    share, lab = st.columns(2)
    if lab.button(
        "Perturb caption A in the lab",
        key="to_lab",
        icon=":material/science:",
        on_click=_to_lab,
        help="Opens the Perturbation lab on this candidate and these references.",
    ):
        st.switch_page("app_pages/perturb.py")
    link = views.copy_link(share)
    views.show_link(link, TITLE, query)

    problems = views.input_problems(candidate, references, {"candidate B": candidate_b})
    for problem in problems:
        st.error(problem)
    if problems:
        st.stop()

    if idf == "coco-val2014":
        progress.prepare_coco_idf(tokenizer)
    keys = tuple(REPORTED_KEYS)
    started = time.perf_counter()
    with st.spinner(choices.scoring_message([candidate, candidate_b, *references])):
        scored = cached.score_captions(keys, candidate, references, tokenizer, idf)
        scored_b = (
            cached.score_captions(keys, candidate_b, references, tokenizer, idf) if two else None
        )
    server_ms = 1000 * (time.perf_counter() - started)
    # the time these scores took when this session first had them: a rerun (another tab, a
    # panel's choice) reads them from the cache in a few ms, and said "Scored in 6 ms" of a
    # caption that took 6 s
    timings = st.session_state.setdefault(SCORED_MS, {})
    scored_as = (keys, candidate, candidate_b if two else None, references, tokenizer, idf)
    kept = scored_as in timings
    server_ms = timings.setdefault(scored_as, server_ms)
    while len(timings) > KEPT_TIMINGS:
        timings.pop(next(iter(timings)))
except CapevalError as exc:
    st.error(choices.page_message(str(exc)))
    st.stop()

# what these results are of, so a result still on screen while new input is scored never
# reads as the new input's
n_refs = len(references)
st.caption(
    f"Scored on the server in {server_ms:,.0f} ms: {'2 candidates' if two else '1 candidate'} "
    f"× {counted(n_refs, 'reference')}, every metric"
    + (" (these scores were kept: shown again without scoring)." if kept else ".")
)
st.text(f"A: {candidate.strip()}" + (f"\nB: {candidate_b.strip()}" if two else ""))

views.render_scoring_errors(scored.errors)
if opened_from:
    st.info(systems_views.drill_down_text(opened_from, idf), icon=":material/table_chart:")
results = scored.results
if scored_b is None:
    views.render_summary(results)
    with st.expander("Score table with signatures"):
        views.render_score_table(results)
else:
    views.render_scoring_errors(
        {k: v for k, v in scored_b.errors.items() if k not in scored.errors}
    )
    views.render_comparison(results, scored_b.results)
    with st.expander("Score tables with signatures"):
        st.text("Candidate A")
        views.render_score_table(results)
        st.text("Candidate B")
        views.render_score_table(scored_b.results)

longest = views.longest_caption([candidate, candidate_b, *references])
if longest > views.EVIDENCE_MAX_WORDS:
    st.info(
        f"The evidence panels are drawn for captions of up to {views.EVIDENCE_MAX_WORDS} words; "
        f"the longest here has {longest:,}. The scores above are complete.",
        icon=":material/info:",
    )
    st.stop()

state.valid_choice("compare_tab", TABS)
# the open tab is a choice of the view, so it is in the URL: switching reruns the page, and
# only the open tab is drawn (the others' panels keep their choices: state.KEPT)
tabs = st.tabs(TABS, key="compare_tab", on_change="rerun")
for tab, cls in zip(tabs, METRICS.values(), strict=True):
    if not tab.open:
        continue
    with tab:
        if cls.key in scored.errors:
            st.info(f"{cls.name} could not be scored; see the warning above.")
            continue
        if scored_b is None:
            with views.evidence_tab():
                _evidence(results, cls.key)
            continue
        side_a, side_b = views.candidate_pair(cls.key)
        with side_a, views.side_by_side():
            st.markdown("**Candidate A**")
            _evidence(results, cls.key)
        with side_b, views.side_by_side():
            st.markdown("**Candidate B**")
            _evidence(scored_b.results, cls.key, "-b")

# the panels' choices (n-gram order, reference) exist once drawn: the URL and its link now
views.show_link(link, TITLE, state.write(PARAMS, only_a))
