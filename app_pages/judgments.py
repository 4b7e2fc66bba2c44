"""Judgments: load human judgments (a bundled demo or an upload), map columns, preview,
validate, choose a protocol preset, and score them with the chosen metrics.

The loaded set lives in ``st.session_state`` (``state.JSET_KEY``); the other
meta-evaluation pages use it, and the URL names it (``?set=``, with where it came from, the
column mapping of a generic file and the metrics), so a reload or a copied link finds it again
while the server keeps it; a link whose set this server does not hold says so at the top and
keeps its choices until a set is loaded (its mapping goes into the boxes of the file uploaded
again; a column the file does not have is said in one line, and the rest is used). A failed
upload shows the loader's message (file, line, column, named as uploaded) and keeps the
previously loaded set. Changing the format starts a new upload: the uploader is one per format.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import streamlit as st

from capeval_core import CapevalError
from capeval_core.judgments import LOADERS
from capeval_core.judgments.mapping import (
    GRADED_ROLES,
    PAIRWISE_ROLES,
    SCORE_ROLES,
    default_role,
    role_renames,
    score_columns_offered,
)
from capeval_core.judgments.protocols import BY_FORMAT, missing_labels_warning
from capeval_ui import cached, choices, current_tokenizer, meta_views, state, store, views
from capeval_ui.formats import literal

UNMAPPED = "(none)"
NO_PRESET = "(no preset)"
#: why a link's preset beside the demo is not used (the page dropped it without a word)
PRESET_UNUSED = "a protocol preset is used only with an uploaded file"
#: the formats whose columns the page maps, and why a link's mapping is not used elsewhere
MAPPED_FORMATS = {"graded": GRADED_ROLES, "pairwise": PAIRWISE_ROLES}
MAPPING_UNUSED = "used only with an uploaded graded or pairwise file"
#: the link's columns the uploaded file does not have: (file name, the line saying so)
MAPPING_NOTE = "_judgment_mapping_note"


def _uploader_key(fmt: str) -> str:
    """One uploader per format: switching the format drops the files of the previous one."""
    return f"judgment_files-{fmt}"


def _uploaded(fmt: str) -> tuple[tuple[str, bytes], ...]:
    files = st.session_state.get(_uploader_key(fmt)) or []
    return tuple((f.name, f.getvalue()) for f in files)


def _mapping(columns: list[str], roles: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    """File column -> canonical name, from the mapping selectboxes."""
    pairs = []
    for role in roles:
        chosen = st.session_state.get(f"map_{role}", UNMAPPED)
        if chosen and chosen != UNMAPPED and chosen in columns:
            pairs.append((chosen, role))
    return tuple(pairs)


def _own_column(role: str, columns: list[str]) -> str:
    """A role box's default: the file's column of the role's name, else none."""
    return role if role in columns else UNMAPPED


def _mapping_from_link(name: str, columns: list[str], roles: tuple[str, ...]) -> None:
    """A restored link's mapping (``state.MAPPING_KEY``) into the boxes of the file now
    uploaded, once: its boxes are set from it below (a box it does not name to its
    default). The columns it names that the file does not have are said in one line."""
    if not st.session_state.pop(state.MAPPING_LINKED, False):
        return
    for key in [f"map_{role}" for role in roles] + [f"role_{c}" for c in columns]:
        st.session_state.pop(key, None)
    linked, score_roles = state.mapping_choices(st.session_state.get(state.MAPPING_KEY, []))
    lacking = [(c, role) for role, c in linked.items() if c and c not in columns] + [
        (c, role) for c, role in score_roles.items() if c not in columns
    ]
    st.session_state.pop(MAPPING_NOTE, None)
    if lacking:
        named = ", ".join(f"{column} ({role})" for column, role in lacking)
        rest = "; the rest of it is used" if len(lacking) < len(linked) + len(score_roles) else ""
        st.session_state[MAPPING_NOTE] = (
            name,
            f"This link's column mapping names {'a column' if len(lacking) == 1 else 'columns'} "
            f"{literal(name)} does not have: {literal(named)}{rest}.",
        )


def _linked_mapping_unused(fmt: str | None) -> None:
    """A link's mapping items the page cannot use (beside the demo, for a format it does not
    map, a role the format does not have), named in the link's warning and dropped."""
    items = st.session_state.get(state.MAPPING_KEY) or []
    roles = MAPPED_FORMATS.get(fmt or "")
    if roles is None:
        if state.unused_link_value(state.MAPPING_KEY, MAPPING_UNUSED, items):
            st.session_state[state.MAPPING_KEY] = []
        return
    unknown = state.unknown_mapping_items(items, roles, fmt == "graded")
    why = f"not a role of a {fmt} file's column"
    if unknown and state.unused_link_value(state.MAPPING_KEY, why, unknown):
        st.session_state[state.MAPPING_KEY] = [i for i in items if i not in unknown]


def _mapping_in_url(source: str, fmt: str | None, jset: Any) -> list[str] | None:
    """The mapping items the URL carries: those of the format's roles, for an upload of a
    format the page maps (none beside the demo, as for the preset). While a set read as
    ``fmt`` is shown, the mapping it was read with: the URL followed the boxes of the file
    uploaded since, and a file that failed to load took the set's mapping out of its link."""
    roles = MAPPED_FORMATS.get(fmt or "")
    if source == "Demo set" or roles is None:
        return None
    shown = None if jset is None or jset.format != fmt else store.mapping_of(jset)
    items = list(shown) if shown is not None else st.session_state.get(state.MAPPING_KEY) or []
    unknown = state.unknown_mapping_items(items, roles, fmt == "graded")
    return [i for i in items if i not in unknown]


def _column_roles(
    columns: list[str], numeric: list[str], mapping: tuple[tuple[str, str], ...]
) -> tuple[tuple[tuple[str, str], ...], tuple[str, ...] | None]:
    """A role per extra numeric column (human score, metric, ignore), drawn; the renames the
    roles need and the human-score columns in the loader's order (``role_renames``)."""
    offered, ids = score_columns_offered(columns, numeric, (c for c, _ in mapping))
    if not offered:
        return (), None
    st.markdown("**Role of each other numeric column**")
    if ids:
        st.caption("Id columns, never scores: " + literal(", ".join(ids)))
    grid = st.columns(3)
    roles = {}
    kept = state.mapping_choices(st.session_state.get(state.MAPPING_KEY, []))[1]
    for i, column in enumerate(offered):
        state.default(f"role_{column}", kept.get(column, default_role(column)))
        # a column name is user text: the label shows it as typed, never as Markdown
        roles[column] = grid[i % 3].selectbox(literal(column), SCORE_ROLES, key=f"role_{column}")
    return role_renames(roles)  # no humans: every score ignored, said by the page


def _own_id_names(jset: Any) -> dict[str, str]:
    """The set's id columns its column mapping renamed: set's name -> the file's own
    (``{"id": "seg"}``). A scores file keyed by ``seg`` was refused: "missing id column(s)
    ['id']"."""
    columns = state.mapping_choices(store.mapping_of(jset) or ())[0]
    return {c: columns[c] for c in jset.id_columns if columns.get(c)}


def _join_scores() -> None:
    """Join the uploaded scores file to the loaded set; on an error the set is unchanged.
    Not cached: the join is quick, and the set is new each time."""
    from capeval_core.judgments.uploads import join_uploaded_scores

    upload = st.session_state.get("metric_scores_file")
    jset = st.session_state.get(state.JSET_KEY)
    if upload is None or jset is None:
        return
    try:
        # joined again, a metric's scores are the new file's (its own corrected scores
        # were refused: "the set already has an external metric named ...")
        joined = join_uploaded_scores(
            jset, upload.name, upload.getvalue(), replace=True, id_names=_own_id_names(jset)
        )
    except CapevalError as exc:
        st.session_state["scores_error"] = str(exc)
        return
    st.session_state.pop("scores_error", None)
    _loaded(joined, store.mapping_of(jset))  # its columns are read as before


def _loaded(jset: object, mapping: Sequence[str] | None = None) -> None:
    """``jset`` is the session's set from now on (the user decided: a link's set that was
    not on this server is no longer waited for), read with the column ``mapping`` (its URL
    items) when one is given."""
    st.session_state[state.JSET_KEY] = jset
    store.remember_set(jset, mapping)
    state.decline_linked_set(state.JSET_KEY)


def load_files(
    files: tuple[tuple[str, bytes], ...],
    fmt: str,
    preset: str | None,
    mapping: tuple[tuple[str, str], ...] = (),
    score_columns: tuple[str, ...] | None = None,
    items: Sequence[str] | None = None,
) -> bool:
    """Load uploaded files into the session; on a CapevalError keep the previous set and
    remember the message. ``items`` is ``mapping`` as the URL spells it (the boxes that
    differ from their default). Returns whether the new set was loaded."""
    try:
        jset = cached.load_upload(files, fmt, preset, mapping, score_columns)
    except CapevalError as exc:
        st.session_state["judgment_error"] = str(exc)
        return False
    st.session_state.pop("judgment_error", None)
    st.session_state.pop(MAPPING_NOTE, None)  # the user chose the columns and loaded the file
    _loaded(jset, items)
    return True


def _load_demo() -> None:
    label = st.session_state.get("demo_set", next(iter(choices.DEMO_SETS)))
    generator, n_images = choices.DEMO_SETS[label]
    try:
        _loaded(cached.demo_judgments(generator, n_images))
        st.session_state.pop("judgment_error", None)
    except CapevalError as exc:
        st.session_state["judgment_error"] = str(exc)


def _not_loaded(
    jset: Any,
    source: str,
    demo: str | None,
    fmt: str | None,
    preset: str | None,
    mapping: Sequence[str] | None = None,
) -> str:
    """What the boxes above choose that the set shown was not loaded with (a box changed
    without Load, or a link naming both): the boxes and the numbers below then disagreed
    without a word. ``mapping``: the column-mapping boxes' URL items, when they are drawn.
    Empty when they agree."""
    if jset is None:
        return ""
    if source == "Demo set":
        chosen = choices.DEMO_SETS.get(demo or "", (None,))[0]
        if not jset.synthetic:
            files = literal(", ".join(jset.source))
            which = f"the {chosen} demo" if chosen else "the demo"
            return f"The set below was read from {files}: press Load demo to load {which}."
        if chosen not in (None, jset.kind):
            return f"The set below is the {jset.kind} demo: press Load demo to load this one."
        return ""
    if jset.synthetic:
        return ""
    read_with = store.mapping_of(jset)  # None: not known, and not said
    remapped = mapping is not None and read_with is not None and tuple(mapping) != read_with
    loaded_with = [
        f"as {jset.format}" if fmt != jset.format else "",
        f"with preset {jset.preset or NO_PRESET}"
        if fmt == jset.format and (preset or NO_PRESET) != (jset.preset or NO_PRESET)
        else "",
        "with another column mapping than the boxes above"
        if fmt == jset.format and remapped
        else "",
    ]
    said = " and ".join(w for w in loaded_with if w)
    return (
        f"The set below was read {said}: press Load to read it with these choices." if said else ""
    )


TITLE = "Judgments"
PARAMS = state.judgments_params(
    {label: gen for label, (gen, _) in choices.DEMO_SETS.items()}, list(LOADERS)
)
st.title(TITLE)
st.caption(
    "Human judgments of captions: a graded file (one score per caption) or a pairwise one "
    "(which of two captions people preferred). The other meta-evaluation pages use the set "
    "loaded here, or a synthetic demo set when none is."
)
restored = state.restore(PARAMS)
state.say_rejected(restored)
if restored:  # the link's mapping (none: the defaults) goes into the boxes of the next file
    st.session_state[state.MAPPING_LINKED] = True
# a link naming a set this server does not hold: said at the top; the controls below load it
missing = state.linked_set(state.JSET_KEY, meta_views.find_set)
if missing:
    meta_views.render_missing_set(
        state.JSET_KEY, "judgment set", missing, where="below", on_demo=_load_demo
    )

# first drawn in a session holding an uploaded set (a link opened on another page): the radio
# said "Demo set" above that set, and the page's URL wrote source=demo beside its digest
loaded_before = st.session_state.get(state.JSET_KEY)
if loaded_before is not None and not getattr(loaded_before, "synthetic", True):
    state.default("judgment_source", "Upload a file")
    # and its format and preset, as the demo box below names its demo: the boxes' defaults
    # named another set than the one shown (said as "press Load", with no file to load)
    if loaded_before.format in LOADERS:
        state.default("judgment_format", loaded_before.format)
        state.default("judgment_preset", loaded_before.preset or NO_PRESET)
elif loaded_before is not None:
    demos = [label for label, (kind, _) in choices.DEMO_SETS.items() if kind == loaded_before.kind]
    if demos:
        state.default("demo_set", demos[0])
source = st.radio("Source", ["Demo set", "Upload a file"], key="judgment_source", horizontal=True)
if source == "Demo set" and state.unused_link_value("judgment_preset", PRESET_UNUSED):
    # not kept for an upload either: the link's preset was said not to be used
    del st.session_state["judgment_preset"]
#: the column-mapping boxes as the URL spells them, while they are drawn (for the note below)
boxes: list[str] | None = None
if source == "Demo set":
    _linked_mapping_unused(None)
    pick, button = st.columns([4, 1], vertical_alignment="bottom")
    pick.selectbox("Demo set", list(choices.DEMO_SETS), key="demo_set")
    button.button("Load demo", key="load_demo", on_click=_load_demo, icon=":material/science:")
else:
    fmt = st.selectbox(
        "Format",
        list(LOADERS),
        key="judgment_format",
        format_func=lambda name: f"{name}: {LOADERS[name].description}",
    )
    loader = LOADERS[fmt]
    _linked_mapping_unused(fmt)
    meta_views.render_format_help(fmt)
    st.file_uploader(
        "Judgment file(s): one file, or every file of a multi-file dataset",
        key=_uploader_key(fmt),
        accept_multiple_files=True,
        # the error of the files before is not this upload's (both were shown at once)
        on_change=lambda: st.session_state.pop("judgment_error", None),
    )
    presets = list(loader.presets) or [NO_PRESET]
    # a kept preset of another format goes, and the format's first takes its place as a
    # value of its own (dropped alone, the box went on showing "(no preset)", which it does
    # not offer, while the page used the first)
    state.valid_choice("judgment_preset", presets, presets[0])
    preset = st.selectbox(
        "Protocol preset",
        presets,
        key="judgment_preset",
        help="The published protocol of the dataset is the first one.",
    )
    if loader.presets:
        st.text(loader.presets.get(preset, ""))
        note = getattr(BY_FORMAT.get(fmt, {}).get(preset), "note", "")
        if note:
            with st.expander("Note on this preset"):
                st.text(note)
    files = _uploaded(fmt)
    mapping: tuple[tuple[str, str], ...] = ()
    score_columns: tuple[str, ...] | None = None
    #: the mapping as the URL spells it, remembered with the set it loads
    items: list[str] | None = [] if fmt in MAPPED_FORMATS else None
    too_many = loader.one_file and len(files) > 1
    if too_many:  # loading them said "this is a folder" and named neither file
        st.warning(
            f"The {fmt} format reads one file, and {len(files)} are uploaded "
            f"({literal(', '.join(name for name, _ in files))}): remove all but one.",
            icon=":material/warning:",
        )
    if files and fmt in ("graded", "pairwise") and len(files) == 1:
        try:
            columns, numeric = cached.upload_columns(*files[0])
        except CapevalError as exc:
            if str(exc) != st.session_state.get("judgment_error"):  # else said once, below
                st.error(f"Could not read the file: {choices.page_message(str(exc))}")
            columns, numeric = [], []
        if columns:
            roles = MAPPED_FORMATS[fmt]
            _mapping_from_link(files[0][0], columns, roles)
            note = st.session_state.get(MAPPING_NOTE)
            if note and note[0] == files[0][0]:
                st.warning(note[1], icon=":material/link_off:")
            with st.expander("Column mapping", expanded=True):
                # each box starts from the session's mapping (a link's, or the one chosen
                # before this file was uploaded again), else the column of the role's name
                kept = state.mapping_choices(st.session_state.get(state.MAPPING_KEY, []))[0]
                options = [UNMAPPED, *columns]
                grid = st.columns(3)
                for i, role in enumerate(roles):
                    own = _own_column(role, columns)
                    chosen = kept.get(role, own) or UNMAPPED
                    state.valid_choice(f"map_{role}", options, chosen if chosen in options else own)
                    grid[i % 3].selectbox(f"{role} column", options, key=f"map_{role}")
                mapping = _mapping(columns, roles)
                score_roles: dict[str, str] = {}
                if fmt == "graded":
                    offered = score_columns_offered(columns, numeric, (c for c, _ in mapping))[0]
                    extra, score_columns = _column_roles(columns, numeric, mapping)
                    mapping += extra
                    score_roles = {c: st.session_state[f"role_{c}"] for c in offered}
                # the URL's mapping: each box that differs from its default
                st.session_state[state.MAPPING_KEY] = state.mapping_items(
                    {
                        role: "" if box == UNMAPPED else box
                        for role in roles
                        if (box := st.session_state[f"map_{role}"]) != _own_column(role, columns)
                    },
                    {c: r for c, r in score_roles.items() if r != default_role(c)},
                )
                items = boxes = st.session_state[state.MAPPING_KEY]
    # every numeric column set to another role: the loader would read them as scores anyway
    no_score = score_columns == ()
    if no_score:
        st.warning(
            "No column has the role “human score”: give one that role to load the file.",
            icon=":material/warning:",
        )
    st.button(
        "Load",
        key="load_judgments",
        type="primary",
        disabled=not files or no_score or too_many,
        on_click=lambda: load_files(
            files, fmt, None if preset == NO_PRESET else preset, mapping, score_columns, items
        ),
        icon=":material/upload_file:",
    )

not_loaded = _not_loaded(
    st.session_state.get(state.JSET_KEY),
    source,
    st.session_state.get("demo_set"),
    st.session_state.get("judgment_format"),
    st.session_state.get("judgment_preset"),
    boxes,
)
if not_loaded:
    st.caption(not_loaded)

if "judgment_error" in st.session_state:
    kept = "; the previous set is kept" if st.session_state.get(state.JSET_KEY) else ""
    st.error(
        f"The file was not loaded{kept}. {choices.page_message(st.session_state['judgment_error'])}"
    )

# the preset box is the upload's: a demo set, or a format without presets, has none to link;
# the mapping is a generic upload's; the demo box is the demo's (beside an upload, demo=graded
# named a set that is not shown)
uploading = source != "Demo set" and st.session_state.get("judgment_preset") != NO_PRESET
URL_VALUES: dict[str, Any] = {} if uploading else {"judgment_preset": None}
if source != "Demo set":
    URL_VALUES["demo_set"] = None
jset = st.session_state.get(state.JSET_KEY)
URL_VALUES[state.MAPPING_KEY] = _mapping_in_url(
    source, st.session_state.get("judgment_format"), jset
)
if missing:
    st.stop()  # the URL stays the link's until the user loads a set or opens the demo
if jset is None:
    state.write(PARAMS, URL_VALUES)
    st.info("No set loaded yet: load a demo set or upload a file.")
    st.stop()
store.remember_set(jset)

st.subheader("Loaded set")
st.text(str(jset))
meta_views.render_validation(jset)
missing = missing_labels_warning(jset)
if missing:
    st.warning(choices.page_message(missing))
with st.expander("Preview (first 200 rows)", expanded=True):
    meta_views.render_preview(jset)

with st.expander("Your own metric: join a scores file"):
    own = _own_id_names(jset)  # the file's own names of the id columns, as it was mapped
    st.caption(
        "Per-caption scores of a metric computed elsewhere, correlated and tested beside "
        f"the built-in ones: CSV, TSV, JSON or JSONL with the id column(s) "
        f"{literal(', '.join(own.get(c, c) for c in jset.id_columns))} and "
        + (
            "per metric two columns, <name>:a and <name>:b (the scores of candidates a and b)."
            if jset.kind == "pairwise"
            else "one column per metric."
        )
    )
    st.file_uploader("Scores file", key="metric_scores_file")
    st.button("Join", key="join_scores", on_click=_join_scores, icon=":material/join:")
    if "scores_error" in st.session_state:
        st.error(
            "The scores file was not joined; the loaded set is unchanged. "
            f"{choices.page_message(st.session_state['scores_error'])}"
        )

st.subheader("Scores")
keys = meta_views.metric_picker(jset.external_names)
holds = "" if jset.synthetic else "The loaded set"
views.show_link(views.copy_link(st, holds=holds), TITLE, state.write(PARAMS, URL_VALUES))
try:
    scores = cached.judgment_scores(jset.content_digest, keys, current_tokenizer(), _jset=jset)
except CapevalError as exc:
    st.error(choices.page_message(str(exc)))
    st.stop()
meta_views.render_scores(jset, scores, key="judgment-scores-csv")
