"""Systems: several captioning systems scored on the same images, whether their differences
are significant, and the images where two of them differ most.

Inputs (uploaded COCO results files and references in any distributed shape, or the demo) ->
the Score button -> ``capeval_ui.cached`` -> drawing through ``capeval_ui.systems_views``: a
paper's table (×100 or raw, renamed systems, a chosen baseline) with LaTeX, Markdown and CSV
downloads. Scoring starts when Score is pressed (the demo is scored when the page opens) and
can be cancelled; a change of choices afterwards marks the table out of date. The choices are
in the URL, and a link naming uploaded files this server does not hold says so
(``capeval_ui.systems_state``). A bad upload shows the loader's message (file and image ids)
and keeps the widgets as they were; the last uploads and the last table stay for the
session, so a drill-down to Compare captions and back loses nothing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import streamlit as st

from capeval_core import CapevalError
from capeval_core.coco_files import DEFAULT_SPLIT, KARPATHY_SPLITS
from capeval_core.files import counted
from capeval_core.metrics import COCO_CAPTION_KEYS, available_keys, optional_keys
from capeval_core.stats.resampling import DEFAULT_RESAMPLES, DEFAULT_SEED, DEFAULT_TRIALS
from capeval_core.systems import CoverageError, comparison_signatures_text, dropped_said
from capeval_core.workers import ApartError
from capeval_ui import (
    cached,
    choices,
    current_tokenizer,
    state,
    store,
    systems_state,
    systems_views,
)

DEMO = "Demo: three systems on COCO val2014"
UPLOAD = "Upload results files"
COCO_VAL = "COCO val2014 (installed)"
OWN = "Upload a references file"
ON_MISSING = {
    "error": "error: stop and name the images",
    "intersect": "intersect: score the images every file captions",
}
ON_MISSING_LABEL = "When a file lacks images another captions"
#: the resampling controls' bounds
BOUNDS = {
    "systems_resamples": (100, 100_000),
    "systems_trials": (100, 1_000_000),
    "systems_seed": (0, 2**32 - 1),
}
TESTS = {
    "both": "both (p = the larger)",
    "bs": "paired bootstrap",
    "ar": "approximate randomization",
}


def _forget_removed(key: str, slot: int) -> None:
    """``on_change`` of an uploader: files the user removes (their ×) are forgotten, and with
    them their error (a visit to another page empties the uploader without calling this)."""
    if not st.session_state.get(key):
        if st.session_state.pop(REFUSED, False):  # the refused upload went: the files kept
            return  # from before stay
        kept = list(st.session_state.get(systems_state.FILES, ((), None)))
        if slot == 1 and kept[1] is not None:
            # dropping a file on the references uploader replaces its file: it is removed
            # first (this call), then the new one comes; if that is refused, these stay in use
            st.session_state[REMOVED_REFERENCES] = kept[1]
        kept[slot] = () if slot == 0 else None
        st.session_state[state.SYSTEMS_FILES] = tuple(kept)


def _kept_files(files, annotations) -> tuple[tuple[tuple[str, bytes], ...], tuple | None]:
    """The uploaded files, or those uploaded before on this session's visits to the page
    (a file uploader is empty again after a visit to Compare captions)."""
    uploads = tuple((f.name, f.getvalue()) for f in files or [])
    own = (annotations.name, annotations.getvalue()) if annotations is not None else None
    kept_uploads, kept_own = st.session_state.get(systems_state.FILES, ((), None))
    if uploads:
        kept_uploads = uploads
    if own is not None:
        kept_own = own
    if uploads or own is not None:  # the user chose files: a link's are no longer awaited
        systems_state.decline_linked_files()
    # kept only once they read well (_keep_files): a bad upload never replaces good files
    if not uploads and kept_uploads:
        names = ", ".join(name for name, _ in kept_uploads)
        st.text(  # file names are user text: never markdown
            f"Using the results files uploaded before: {names} (upload others to replace them)."
        )
    return kept_uploads, kept_own


#: set while the uploader holds files that were refused (and the kept ones are older)
REFUSED = "_systems_upload_refused"
#: the references file last removed from its uploader (a replaced file is removed first)
REMOVED_REFERENCES = "_systems_removed_references"
#: the files (their digests) and system names the baseline picker showed last
SHOWN_NAMES = "_systems_shown_names"


def _keep_files(kept: tuple) -> None:
    """Keep the files in use for this session's later visits: called once they have read
    well, so a bad upload leaves the files uploaded before in place."""
    st.session_state[systems_state.FILES] = kept
    st.session_state[REFUSED] = False
    st.session_state.pop(REMOVED_REFERENCES, None)


def _say_kept_files(own_references: bool) -> None:
    """After a refused upload: the files uploaded before stay in use, with their table (the
    uploader holds the refused file until it is removed, or replaced)."""
    st.session_state[REFUSED] = True
    results, own = st.session_state[systems_state.FILES]
    names = ", ".join(name for name, _ in results)
    if own and own_references:  # COCO val2014's otherwise, said on the next line
        names += f"; references: {own[0]}"
    st.text(  # file names are user text: never markdown
        f"The files uploaded before stay in use: {names}. Remove the new upload (its ×) or "
        "upload a corrected one."
    )


def _read(files: tuple, own_references: bool) -> tuple[Any, str]:
    """The uploads ``files`` aligned (``cached.systems_input``) and remembered by their
    digest for the URL (only once they read well: a link never names a refused set)."""
    kept = (files[0], files[1] if own_references else None)
    data = cached.systems_input(
        *kept, st.session_state["systems_split"], st.session_state["systems_on_missing"]
    )
    return data, systems_state.remember_files(kept)


def _read_or_keep(trying: tuple, own_references: bool) -> tuple[Any, str]:
    """Read the uploads; a refused upload says why, and the files that read well before
    stay in use with their table (a reload or a link then opens those, not the refused ones).
    Re-raises when nothing read well before."""
    try:
        read = _read(trying, own_references)
    except CapevalError as exc:
        before = st.session_state.get(systems_state.FILES)
        replaced = st.session_state.get(REMOVED_REFERENCES)
        if before and own_references and before[1] is None and replaced is not None:
            before = (before[0], replaced)  # a references file refused in place of this one
        if (
            not before
            or not before[0]
            or tuple(before) == tuple(trying)
            or (own_references and before[1] is None)
        ):
            raise
        try:  # the files before, with today's choices (another on-missing may refuse them)
            kept = _read(before, own_references)
        except CapevalError:
            raise exc from None  # the new upload's refusal is the one to say
        st.session_state[systems_state.FILES] = before
        st.error(_refusal(exc))
        _say_kept_files(own_references)
        return kept
    _keep_files(trying)
    return read


def _first_ids(ids: tuple) -> str:
    """The first twenty image ids of a note, and "…" when there are more."""
    return ", ".join(map(repr, ids[:20])) + (" …" if len(ids) > 20 else "")


def _refusal(exc: CapevalError) -> str:
    """Why the uploads were refused, in the page's words (the page's control for the
    command line's --on-missing)."""
    if isinstance(exc, CoverageError):
        return (
            f"{choices.page_message(exc.problem)}. Every system must caption the same images; "
            "to score only the images they all caption, choose “intersect” under "
            f"“{ON_MISSING_LABEL}” above."
        )
    return choices.page_message(str(exc))


def _open_demo() -> None:
    """The "open the demo" button of a link whose files are not here: the user decided."""
    systems_state.decline_linked_files()
    st.session_state["systems_source"] = DEMO


st.title("Systems")
st.caption(
    "Score two or more captioning systems on the same images with every metric, see each "
    "value with its bootstrap interval, test every system against the first (the baseline) "
    "with paired bootstrap resampling and approximate randomization, and find the images "
    "where two systems differ most. Choose the files and metrics, then press Score."
)
notice = st.container()  # what a link could not bring goes at the top

URL = systems_state.params(
    {DEMO: "demo", UPLOAD: "upload"}, {COCO_VAL: "coco-val2014", OWN: "file"}, BOUNDS
)
restored = systems_state.restore(URL)
offered = [*available_keys(), *optional_keys()]
state.valid_choices("systems_metrics", offered)
for key, options in (  # a link's value the page does not offer is dropped for the default
    ("systems_source", (DEMO, UPLOAD)),
    ("systems_references", (COCO_VAL, OWN)),
    ("systems_paired", tuple(TESTS)),
    ("systems_on_missing", tuple(ON_MISSING)),
    ("systems_split", tuple(KARPATHY_SPLITS)),
):
    state.valid_choice(key, options)
state.default("systems_source", DEMO)
state.default("systems_references", COCO_VAL)
state.default("systems_metrics", list(choices.SYSTEMS_DEFAULT_KEYS))
state.default("systems_paired", next(iter(TESTS)))
state.default("systems_resamples", DEFAULT_RESAMPLES)
state.default("systems_trials", DEFAULT_TRIALS)
state.default("systems_seed", DEFAULT_SEED)
state.default("systems_split", DEFAULT_SPLIT)
state.default("systems_on_missing", "error")
state.default("systems_names", "")
state.default("systems_raw", False)

source = st.radio("Systems", [DEMO, UPLOAD], key="systems_source", horizontal=True)
if source != UPLOAD:
    systems_state.forget_linked_files()
if source == UPLOAD:
    files = st.file_uploader(
        'Results files, COCO format `[{"image_id": …, "caption": …}]` (other keys ignored); '
        "the first is the baseline unless you choose another",
        # any file: the reader says in one line what a .jsonl, .json.gz or .csv is (the
        # browser's "files are not allowed" chip said it only on hover)
        type=None,
        accept_multiple_files=True,
        key="systems_results",
        on_change=_forget_removed,
        args=("systems_results", 0),
    )
    refs_choice = st.radio("References", [COCO_VAL, OWN], key="systems_references", horizontal=True)
    annotations = None
    if refs_choice == OWN:
        up, split_col = st.columns([3, 1])
        annotations = up.file_uploader(
            'References: COCO captions `{"annotations": [{"image_id", "caption"}], …}`, '
            "`{image_id: [captions]}` or Karpathy's `dataset_coco.json`",
            type=None,  # any file, as the results files above
            key="systems_annotations",
            on_change=_forget_removed,
            args=("systems_annotations", 1),
        )
        split_col.selectbox(
            "Karpathy split",
            KARPATHY_SPLITS,
            key="systems_split",
            help="read from a Karpathy dataset_coco.json only",
        )
    st.radio(
        ON_MISSING_LABEL,
        list(ON_MISSING),
        format_func=ON_MISSING.get,
        key="systems_on_missing",
        horizontal=True,
    )
# full width, names not keys: eight chips (coco-caption's metrics) fit at 1,280 px
keys = st.multiselect(
    "Metrics",
    offered,
    format_func=systems_views.label,
    key="systems_metrics",
    help="METEOR and SPICE take longer on large sets; scores are cached per system.",
)
coco_col, paired_col = st.columns([1, 2], vertical_alignment="bottom")
coco_col.button(
    "coco-caption's metrics",
    key="systems_coco_caption",
    help="BLEU-1 to BLEU-4, METEOR, ROUGE-L, CIDEr-D and SPICE: what coco-caption reports and "
    "captioning papers print",
    on_click=lambda: st.session_state.update(systems_metrics=list(COCO_CAPTION_KEYS)),
)
paired = paired_col.radio(
    "Paired test", list(TESTS), format_func=TESTS.get, key="systems_paired", horizontal=True
)
with st.expander("Resampling"):
    a, b, c = st.columns(3)
    n_resamples = a.number_input(
        "Bootstrap resamples", *BOUNDS["systems_resamples"], step=100, key="systems_resamples"
    )
    n_trials = b.number_input(
        "Randomization trials", *BOUNDS["systems_trials"], step=1000, key="systems_trials"
    )
    seed = c.number_input("Seed", *BOUNDS["systems_seed"], key="systems_seed")

in_use = None  # the digest of the uploads in use, for the URL
trying = None  # the uploaded files this run reads, kept once they read well
try:
    if source == UPLOAD:
        fresh = bool(files) or annotations is not None
        linked = systems_state.linked_files()
        if linked is not None and not fresh:
            # a link's files, not on this server: say so, keep its choices, show no numbers
            why = store.dropped_words(store.FILES, linked, "uploads")
            notice.warning(
                f"This link's results files are not on this server ({why}): upload them "
                "again below, and the link's choices are kept; or open the demo.",
                icon=":material/link_off:",
            )
            notice.button("Open the demo instead", key="systems_open_demo", on_click=_open_demo)
            systems_state.write(URL, None)
            st.stop()
        uploads, own = _kept_files(files, annotations if refs_choice == OWN else None)
        if not uploads:
            st.info("Upload one or more results files (the first is the baseline).")
            systems_state.write(URL, None)
            st.stop()
        if refs_choice == OWN and own is None:
            st.info("Upload the references file, or use COCO val2014.")
            systems_state.write(URL, None)
            st.stop()
        trying = (uploads, own)
        data, in_use = _read_or_keep(trying, refs_choice == OWN)
    else:
        data = cached.demo_systems_input()
    st.text(f"References: {data.reference_source}.")  # a file name is user text
    numbered = [  # uploads only: the demo's systems come from no file
        f"{file} as {name!r}"
        for file, name in zip(data.sources, data.names, strict=True)
        if source == UPLOAD and Path(file).stem != name
    ]
    if numbered:  # two models' results.json: the page tells them apart, the user names them
        st.text(
            f"Results files with the same name are numbered: {', '.join(numbered)}. Name the "
            "systems under “System names and baseline”."
        )
    for i in range(len(data.names)):  # a model that stopped at once wrote ""
        if blank := data.blank(i):
            st.text(
                f"{data.sources[i]}: {len(blank):,} of {len(data):,} caption(s) are blank, "
                f"each scored as an empty caption (as pycocoevalcap scores it): "
                f"{data.blank_named(i)}"
            )
    for i, lost in enumerate(data.dropped):
        if lost:
            st.text(f"{data.sources[i]}: {dropped_said(data, i)}: {_first_ids(lost)}")
    names_note = st.empty()  # above the expander: a closed one hid why names went unused
    with st.expander("System names and baseline"):
        names_text = st.text_input(
            "Names, comma-separated in file order (empty: the file names)",
            key="systems_names",
            placeholder=", ".join(data.names),
        )
        names = [n.strip() for n in names_text.split(",")] if names_text.strip() else None
        if names and len(names) != len(data.names):
            names_note.warning(
                f"System names: give {len(data.names)}, one per file; the file names are used."
            )
            names = None
        elif names and (not all(names) or len(set(names)) != len(names)):
            names_note.warning(
                "System names: each must be given and differ from the others; the file names "
                "are used."
            )
            names = None
        shown_names = names or list(data.names)
        # the baseline follows its file when the systems are renamed (it went back to the
        # first file without a word, and to another file when the names were swapped: it
        # kept its name); a link's baseline the page does not show is named, and a link's
        # names and baseline (reopened in this session) are taken as they are
        contents = tuple(data.digest(i) for i in range(len(data.names)))
        before_contents, before = st.session_state.get(SHOWN_NAMES, ((), []))
        chosen = st.session_state.get("systems_baseline")
        if not restored and before_contents == contents and chosen in before:
            st.session_state["systems_baseline"] = shown_names[before.index(chosen)]
        st.session_state[SHOWN_NAMES] = (contents, shown_names)
        state.valid_choice("systems_baseline", shown_names, shown_names[0])
        baseline = st.selectbox(
            "Baseline (Δ and p compare every other system with it)",
            shown_names,
            key="systems_baseline",
        )
    first = shown_names.index(baseline)
    order = [first, *(i for i in range(len(data.names)) if i != first)]
    data = data.arranged(order, [shown_names[i] for i in order] if names else None)
except CapevalError as exc:  # no files that read well to fall back on
    st.error(_refusal(exc))
    systems_state.write(URL, None)
    st.stop()

request = systems_state.Request(
    tuple(data.digest(i) for i in range(len(data.names))),
    data.names,
    tuple(keys),
    current_tokenizer(),
    paired,
    int(n_resamples),
    int(n_trials),
    int(seed),
)
score_col, cancel_col, link_col = st.columns([1, 1, 3], vertical_alignment="center")
pressed = score_col.button(
    "Score", key="systems_score", type="primary", icon=":material/play_arrow:", disabled=not keys
)
cancel_slot = cancel_col.empty()
table = st.session_state.get(systems_state.TABLE)
cut_short = systems_state.interrupted(request)
linked_table = systems_state.link_shows_table()
# the demo scores itself on a first visit, not for a link to a table that was out of date
# (no scored=1): that showed a table of other numbers than the one the link was copied from
first_visit = (
    source == DEMO
    and table is None
    and not st.session_state.get(systems_state.OPENED)
    and (not restored or linked_table)
)
asked = pressed or cut_short == "resume" or linked_table
score_now = bool(keys) and (asked or (first_visit and not cut_short))
# the differences' choices of the table about to be shown, or, before a table, of the one
# Score would draw: a link's value not among them is named in the run it opens (it was kept,
# in the address too, then dropped without a word when Score was pressed)
view = table["request"] if table is not None and not score_now else request
if view.metrics:
    for widget, options in (
        ("systems_a", view.names),
        ("systems_b", view.names),
        ("systems_key", view.metrics),
    ):
        state.valid_choice(widget, options)
    state.default("systems_a", view.names[0])
    state.default("systems_b", view.names[min(1, len(view.names) - 1)])
    state.default("systems_key", view.metrics[0])  # the link below holds what is drawn
# scored=1 only while the table of these choices is about to be shown
shows_request = score_now or (table is not None and table["request"] == request)
query = systems_state.write(URL, in_use, scored=shows_request)
with link_col.popover("Copy link", icon=":material/link:"):
    st.caption(
        "This address opens the page with these choices (uploaded files are named by their "
        "content: a server that no longer holds them asks for them again). Copy it with the "
        "icon at its right:"
    )
    st.code(state.share_link(state.url_path("Systems"), query), language=None, wrap_lines=True)
if cut_short == "cancelled" and not pressed:
    st.info(
        "Scoring cancelled; its worker processes were stopped. Press Score to start again "
        "(metrics scored before the cancel come back from the cache).",
        icon=":material/cancel:",
    )
elif cut_short == "superseded" and not pressed:
    st.info(
        "Scoring stopped: the choices changed while it ran. Press Score to score these.",
        icon=":material/edit:",
    )
if score_now:
    st.session_state[systems_state.OPENED] = True
    st.session_state[systems_state.RUNNING] = request
    cancel_slot.button(
        "Cancel",
        key="systems_cancel",
        icon=":material/stop:",
        on_click=systems_state.cancel,
        help="Stop this run and its worker processes",
    )
    try:
        comparison = cached.systems_comparison(
            # the references' name too: the table's notes and downloads name the file
            (*request.systems, *data.names, data.reference_source),
            request.metrics,
            request.tokenizer,
            paired,
            request.n_resamples,
            request.n_trials,
            request.seed,
            _data=data,
        )
    except (CapevalError, ApartError) as exc:  # ApartError: its process died (out of memory)
        st.session_state.pop(systems_state.RUNNING, None)
        cancel_slot.empty()
        st.error(choices.page_message(str(exc)))
        st.stop()
    st.session_state.pop(systems_state.RUNNING, None)
    cancel_slot.empty()
    table = {"request": request, "comparison": comparison, "data": data}
    st.session_state[systems_state.TABLE] = table
if not keys:
    st.info("Choose at least one metric.")
if table is None:
    if keys and not cut_short:
        st.info("Press Score to score these systems with these metrics.")
    st.stop()
if table["request"] != request:
    changed = " and ".join(systems_state.changes(table["request"], request))
    st.warning(
        f"The table below is out of date: {changed} changed since it was scored. Press Score "
        "to score the choices above.",
        icon=":material/history:",
    )
comparison, data = table["comparison"], table["data"]
tokenizer = table["request"].tokenizer

for key, why in comparison.scores.skipped.items():
    st.warning(f"{key} could not be scored: {choices.page_message(why)}")
for notes in comparison.scores.notes.values():  # CIDEr-D's single image, cached runs too
    for note in notes:
        st.warning(choices.page_message(note))
for line in comparison.left_out_warnings(shown=0):  # which images, and why: as text below
    st.warning(line)
if comparison.left_out():
    st.text("\n".join(comparison.left_out_lines()))  # image ids and captions are user text
if not comparison.keys:
    st.stop()

n_systems = len(comparison.systems)
st.subheader(f"{counted(n_systems, 'system')} on {counted(len(data), 'image')}")
raw = st.toggle("Raw values (the metrics' own scale) instead of ×100", key="systems_raw")
systems_views.render_paper_table(comparison, raw)
systems_views.render_chart(comparison, raw)
with st.expander("Every value with its interval, difference to the baseline and p-values"):
    systems_views.render_table(comparison)
    st.caption(f"Resampling: {comparison.resampling}.")

digest = tuple(data.digest(i) for i in range(len(data.names))) + data.names
st.subheader("Where two systems differ")
for widget, options in (
    ("systems_a", comparison.systems),
    ("systems_b", comparison.systems),
    ("systems_key", comparison.keys),
):
    if st.session_state.get(widget) not in (None, *options):  # from another comparison
        del st.session_state[widget]
pick_a, pick_b, pick_key = st.columns(3)
state.default("systems_a", comparison.systems[0])
state.default("systems_b", comparison.systems[min(1, len(comparison.systems) - 1)])
system_a = pick_a.selectbox("System A", comparison.systems, key="systems_a")
system_b = pick_b.selectbox("System B", comparison.systems, key="systems_b")
metric_key = pick_key.selectbox(
    "Metric", comparison.keys, format_func=systems_views.label, key="systems_key"
)
if system_a == system_b:
    st.info("Choose two different systems.")
else:
    # the set's references as Compare's IDF source: a row's click and its "open" link alike
    idf = cached.systems_reference_set(digest, tokenizer, _data=data)
    view = systems_views.DifferencesView(
        comparison=comparison,
        a=system_a,
        b=system_b,
        key=metric_key,
        tokenizer=tokenizer,
        idf=idf,
        n_images=len(data),
        carried=state.carried_set(),
    )
    row = systems_views.render_differences(view)
    if row is not None:  # one click opens the image in Compare captions, as the table scores it
        st.session_state[state.FROM_SYSTEMS] = view.drill_down_note(row)
        st.switch_page("app_pages/compare.py", query_params=view.compare_params(row))

csv_col, sig_col, json_col = st.columns(3)
csv_col.download_button(
    "Per-image scores (CSV)",
    cached.systems_per_item(table["request"], data.reference_source, "csv", _comparison=comparison),
    file_name="capeval-systems.csv",
    mime="text/csv",
    key="systems_csv",
)
sig_col.download_button(
    "Signatures of the CSV (JSON)",
    comparison_signatures_text(comparison, "capeval-systems.csv"),
    file_name="capeval-systems.signatures.json",
    mime="application/json",
    key="systems_csv_signatures",
)
json_col.download_button(
    "Per-image scores (JSON)",
    cached.systems_per_item(
        table["request"], data.reference_source, "json", _comparison=comparison
    ),
    file_name="capeval-systems.json",
    mime="application/json",
    key="systems_json",
)
systems_state.write(URL, in_use, scored=table["request"] == request)  # with all choices drawn
