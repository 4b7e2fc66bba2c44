"""Systems: several captioning systems scored on the same images, whether their differences
are significant, and the images where two of them differ most.

Inputs (uploaded COCO results files and references in any distributed shape, or the demo) ->
``capeval_ui.cached`` -> drawing through ``capeval_ui.systems_views``: a paper's table (×100
or raw, renamed systems, a chosen baseline) with LaTeX, Markdown and CSV downloads. A bad
upload shows the loader's message (file and image ids) and keeps the widgets as they were;
the last uploads stay in use for the session, so a drill-down to Compare captions and back
loses nothing.
"""

from __future__ import annotations

import streamlit as st

from capeval_core import CapevalError
from capeval_core.coco_files import DEFAULT_SPLIT, KARPATHY_SPLITS
from capeval_core.metrics import COCO_CAPTION_KEYS, available_keys, optional_keys
from capeval_core.stats.resampling import DEFAULT_RESAMPLES, DEFAULT_SEED, DEFAULT_TRIALS
from capeval_core.systems import signatures_text
from capeval_ui import cached, choices, current_tokenizer, state, systems_views

DEMO = "Demo: three systems on COCO val2014"
UPLOAD = "Upload results files"
COCO_VAL = "COCO val2014 (installed)"
OWN = "Upload a references file"
ON_MISSING = {
    "error": "error: stop and name the images",
    "intersect": "intersect: score the images every file captions",
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
        kept = list(st.session_state.get(state.SYSTEMS_FILES, ((), None)))
        kept[slot] = () if slot == 0 else None
        st.session_state[state.SYSTEMS_FILES] = tuple(kept)


def _kept_files(files, annotations) -> tuple[tuple[tuple[str, bytes], ...], tuple | None]:
    """The uploaded files, or those uploaded before on this session's visits to the page
    (a file uploader is empty again after a visit to Compare captions)."""
    uploads = tuple((f.name, f.getvalue()) for f in files or [])
    own = (annotations.name, annotations.getvalue()) if annotations is not None else None
    kept_uploads, kept_own = st.session_state.get(state.SYSTEMS_FILES, ((), None))
    if uploads:
        kept_uploads = uploads
    if own is not None:
        kept_own = own
    st.session_state[state.SYSTEMS_FILES] = (kept_uploads, kept_own)
    if not uploads and kept_uploads:
        names = ", ".join(name for name, _ in kept_uploads)
        st.text(  # file names are user text: never markdown
            f"Using the results files uploaded before: {names} (upload others to replace them)."
        )
    return kept_uploads, kept_own


st.title("Systems")
st.caption(
    "Score two or more captioning systems on the same images with every metric, see each "
    "value with its bootstrap interval, test every system against the first (the baseline) "
    "with paired bootstrap resampling and approximate randomization, and find the images "
    "where two systems differ most."
)

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
if source == UPLOAD:
    files = st.file_uploader(
        'Results files, COCO format `[{"image_id": …, "caption": …}]` (other keys ignored); '
        "the first is the baseline unless you choose another",
        type=["json"],
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
            type=["json"],
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
        "When a file lacks images another captions (on-missing)",
        list(ON_MISSING),
        format_func=ON_MISSING.get,
        key="systems_on_missing",
        horizontal=True,
    )
left, right = st.columns([3, 2])
keys = left.multiselect(
    "Metrics",
    [*available_keys(), *optional_keys()],
    key="systems_metrics",
    help="METEOR and SPICE take longer on large sets; scores are cached per system.",
)
left.button(
    "coco-caption's metrics",
    key="systems_coco_caption",
    help="BLEU-1 to BLEU-4, METEOR, ROUGE-L, CIDEr-D and SPICE: what coco-caption reports and "
    "captioning papers print",
    on_click=lambda: st.session_state.update(systems_metrics=list(COCO_CAPTION_KEYS)),
)
paired = right.radio(
    "Paired test", list(TESTS), format_func=TESTS.get, key="systems_paired", horizontal=True
)
with st.expander("Resampling"):
    a, b, c = st.columns(3)
    n_resamples = a.number_input(
        "Bootstrap resamples", 100, 100_000, step=100, key="systems_resamples"
    )
    n_trials = b.number_input(
        "Randomization trials", 100, 1_000_000, step=1000, key="systems_trials"
    )
    seed = c.number_input("Seed", 0, 2**32 - 1, key="systems_seed")

try:
    if source == UPLOAD:
        uploads, own = _kept_files(files, annotations if refs_choice == OWN else None)
        if not uploads:
            st.info("Upload one or more results files (the first is the baseline).")
            st.stop()
        if refs_choice == OWN and own is None:
            st.info("Upload the references file, or use COCO val2014.")
            st.stop()
        data = cached.systems_input(
            uploads,
            own if refs_choice == OWN else None,
            st.session_state["systems_split"],
            st.session_state["systems_on_missing"],
        )
    else:
        data = cached.demo_systems_input()
    st.text(f"References: {data.reference_source}.")  # a file name is user text
    for i, lost in enumerate(data.dropped):
        if lost:
            shown = ", ".join(map(repr, lost[:20])) + (" …" if len(lost) > 20 else "")
            st.text(
                f"{data.sources[i]} lost {len(lost):,} image(s) another file does not "
                f"caption: {shown}"
            )
    with st.expander("System names and baseline"):
        names_text = st.text_input(
            "Names, comma-separated in file order (empty: the file names)",
            key="systems_names",
            placeholder=", ".join(data.names),
        )
        names = [n.strip() for n in names_text.split(",")] if names_text.strip() else None
        if names and len(names) != len(data.names):
            st.warning(f"Give {len(data.names)} names, one per file; the file names are used.")
            names = None
        shown_names = names or list(data.names)
        if st.session_state.get("systems_baseline") not in shown_names:
            st.session_state["systems_baseline"] = shown_names[0]
        baseline = st.selectbox(
            "Baseline (Δ and p compare every other system with it)",
            shown_names,
            key="systems_baseline",
        )
    first = shown_names.index(baseline)
    order = [first, *(i for i in range(len(data.names)) if i != first)]
    data = data.arranged(order, [shown_names[i] for i in order] if names else None)
    if not keys:
        st.info("Choose at least one metric.")
        st.stop()
    comparison = cached.systems_comparison(
        tuple(data.digest(i) for i in range(len(data.names))) + data.names,
        tuple(keys),
        current_tokenizer(),
        paired,
        int(n_resamples),
        int(n_trials),
        int(seed),
        _data=data,
    )
except CapevalError as exc:
    st.error(choices.page_message(str(exc)))
    st.stop()

for key, why in comparison.scores.skipped.items():
    st.warning(f"{key} could not be scored: {why}")
for line in comparison.left_out_warnings(shown=0):  # which images, and why: as text below
    st.warning(line)
if comparison.left_out():
    st.text("\n".join(comparison.left_out_lines()))  # image ids and captions are user text
if not comparison.keys:
    st.stop()

n_systems = len(comparison.systems)
st.subheader(f"{n_systems} system{'s' if n_systems != 1 else ''} on {len(data):,} images")
raw = st.toggle("Raw values (the metrics' own scale) instead of ×100", key="systems_raw")
systems_views.render_paper_table(comparison, raw)
systems_views.render_chart(comparison)
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
    row = systems_views.render_differences(comparison, system_a, system_b, metric_key)
    if row is not None:  # one click opens the image in Compare captions, as the table scores it
        idf = cached.systems_reference_set(digest, current_tokenizer(), _data=data)
        st.session_state[state.FROM_SYSTEMS] = systems_views.drill_down_note(
            row, system_a, system_b, metric_key, len(data), idf
        )
        st.switch_page(
            "app_pages/compare.py",
            query_params=systems_views.compare_params(row, current_tokenizer(), idf),
        )

csv_col, sig_col, json_col = st.columns(3)
csv_col.download_button(
    "Per-image scores (CSV)",
    cached.systems_per_item(digest, str(comparison.resampling), "csv", _comparison=comparison),
    file_name="capeval-systems.csv",
    mime="text/csv",
    key="systems_csv",
)
sig_col.download_button(
    "Signatures of the CSV (JSON)",
    signatures_text(comparison, "capeval-systems.csv"),
    file_name="capeval-systems.signatures.json",
    mime="application/json",
    key="systems_csv_signatures",
)
json_col.download_button(
    "Per-image scores (JSON)",
    cached.systems_per_item(digest, str(comparison.resampling), "json", _comparison=comparison),
    file_name="capeval-systems.json",
    mime="application/json",
    key="systems_json",
)
