"""What the app keeps for a session: inputs across pages, and the parts of it a URL carries.

Streamlit drops a widget's value when a run does not draw that widget (another page), so a
caption typed on Compare would be gone after a visit to the Perturbation lab. The router
(``app.py``) runs on every page and calls :func:`keep_inputs` first, which hands every input
listed in :data:`KEPT` back to Streamlit as a value of its own; the widgets then find it when
their page runs again. Such widgets take their defaults from :func:`default` (session state),
never from a ``value=``/``index=`` argument, so Streamlit sees one source of truth.

The Compare page's inputs and choices are also mirrored in the URL (``?candidate=...&ref=...
&ref=...&idf=...&tokenizer=...``, :func:`sync_compare_url`), so a link opens
the same example with the same numbers; the loaded judgment set is named
in the URL of the meta-evaluation pages (``?set=...``), so a reload finds it again while the
server keeps it.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any
from urllib.parse import quote, urlencode

import streamlit as st

#: inputs kept across pages: Compare, Perturbation lab, Judgments and the meta-evaluation
#: pages. Buttons and file uploaders are not here: Streamlit does not let a script set them.
KEPT: tuple[str, ...] = (
    # Compare captions
    "example",
    "candidate",
    "candidate_b",
    "references",
    "cider_idf",
    # Perturbation lab
    "lab_mode",
    "lab_example",
    "lab_candidate",
    "lab_references",
    "lab_perturbations",
    "lab_seed",
    "lab_n",
    "lab_cider_idf",
    "lab_metrics",
    "lab_table2",
    "lab_dataset",
    "lab_batch_perturbation",
    "lab_images",
    "lab_batch_seed",
    "lab_batch_metrics",
    # Judgments
    "judgment_source",
    "demo_set",
    "judgment_format",
    # Correlations, Significance, Pairwise accuracy, Robustness
    "human_column",
    "correlation_level",
    "resamples",
    "ci_kendall",
    "combined_correlation",
    "distribution_metric",
    "williams_correlation",
    "williams_alternative",
    "pair_a",
    "pair_b",
    "n_references",
    "draws",
    "seed",
    "metric_tie",
    "human_tie",
    "distractor_source",
    "forced_tie",
    # Systems (its uploaded files are kept by the page itself: see SYSTEMS_FILES)
    "systems_source",
    "systems_references",
    "systems_metrics",
    "systems_paired",
    "systems_resamples",
    "systems_trials",
    "systems_seed",
    "systems_a",
    "systems_b",
    "systems_key",
    "systems_split",
    "systems_on_missing",
    "systems_names",
    "systems_baseline",
    "systems_raw",
)
#: the Systems page's last uploaded results and annotations files, kept for the session
#: (Streamlit empties a file uploader whenever its page is left)
SYSTEMS_FILES = "_systems_files"
#: the graded/pairwise judgment set loaded on the Judgments page, and the distractor set
#: uploaded on the Robustness page
JSET_KEY = "judgment_set"
DISTRACTOR_SET_KEY = "distractor_set"

#: Compare's query parameters: the candidate, an optional second one, one ``ref`` per line
CANDIDATE_PARAM, CANDIDATE_B_PARAM, REF_PARAM = "candidate", "candidate_b", "ref"
#: Compare's choices in its URL, each as the library spells its value (``idf=corpus``,
#: ``tokenizer=ptb``), so a link reproduces every number
COMPARE_CHOICE_PARAMS: tuple[str, ...] = ("idf", "tokenizer")
#: the query parameter naming the loaded judgment set (a prefix of its content digest)
SET_PARAM = "set"
_COMPARE_URL = "_compare_url"


def url_path(title: str) -> str:
    """A page's URL path: its title in lower case, words joined by hyphens.

    >>> url_path("Compare captions"), url_path("Judgments"), url_path("I²CE & co.")
    ('compare-captions', 'judgments', 'i-ce-co')
    """
    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")


def keep_inputs(keys: Sequence[str] = KEPT) -> None:
    """Hand each listed input back to Streamlit as a value of its own (see the module doc)."""
    for key in keys:
        if key in st.session_state:
            st.session_state[key] = st.session_state[key]


def default(key: str, value: Any) -> None:
    """The value a kept widget starts with (its widget then takes no default argument)."""
    if key not in st.session_state:
        st.session_state[key] = value


def valid_choice(key: str, options: Sequence[Any], fallback: Any = None) -> None:
    """Drop a kept choice that is no longer among ``options`` (another set was loaded, other
    metrics were picked); ``fallback`` (when it is an option) takes its place."""
    if key in st.session_state and st.session_state[key] not in options:
        del st.session_state[key]
    if fallback is not None and fallback in options:
        default(key, fallback)


def valid_choices(key: str, options: Sequence[Any]) -> None:
    """:func:`valid_choice` for a multiselect: keep only the chosen values still offered."""
    if key in st.session_state:
        st.session_state[key] = [v for v in st.session_state[key] if v in options]


# -- example pickers -------------------------------------------------------------------------
def remember_example(picker: str, inputs: Mapping[str, str]) -> None:
    """Note what an example picker just put into its text areas (see :func:`name_own_inputs`)."""
    st.session_state[f"_{picker}_loaded"] = _captions(inputs)


def name_own_inputs(picker: str, fields: Sequence[str], own: str) -> None:
    """Put an example picker on ``own`` once its text areas no longer hold the example it
    loaded (typed over, or filled from a link): a picker still naming the example would say
    the captions on screen are that example's (issue 34). Call before the picker is drawn."""
    loaded = st.session_state.get(f"_{picker}_loaded")
    now = _captions({field: st.session_state.get(field, "") for field in fields})
    if loaded is not None and {k: now.get(k, ()) for k in loaded} != loaded:
        st.session_state[picker] = own


def _captions(inputs: Mapping[str, str]) -> dict[str, tuple[str, ...]]:
    """Text areas as the captions they hold (one per non-blank line, spaces trimmed)."""
    return {
        k: tuple(line.strip() for line in str(v).splitlines() if line.strip())
        for k, v in inputs.items()
    }


#: the note Compare captions shows when opened from a row of Compare systems (a dict with the
#: two captions it is about and its text; see systems_views.drill_down_note)
FROM_SYSTEMS = "_from_systems"


# -- Compare's URL ---------------------------------------------------------------------------
def _compare_params() -> dict[str, Any]:
    params = st.query_params
    out: dict[str, Any] = {}
    if CANDIDATE_PARAM in params:
        out["candidate"] = params.get(CANDIDATE_PARAM, "")
    if CANDIDATE_B_PARAM in params:
        out["candidate_b"] = params.get(CANDIDATE_B_PARAM, "")
    refs = params.get_all(REF_PARAM)
    if refs:
        out["references"] = "\n".join(refs)
    for name in COMPARE_CHOICE_PARAMS:
        if name in params:
            out[name] = params.get(name, "")
    return out


def _new_link() -> dict[str, Any]:
    """Compare's parameters when the URL names inputs the page did not write itself (a shared
    link, a reload in a new session), else nothing."""
    wanted = _compare_params()
    if not wanted or wanted == st.session_state.get(_COMPARE_URL):
        return {}
    return wanted


def compare_from_url(choices: Mapping[str, tuple[str, Mapping[str, str]]] | None = None) -> bool:
    """Fill Compare's inputs from the URL when it names an example the page did not write
    itself (a shared link, a new tab): True when it did. Inputs the user typed since the page
    last wrote the URL are never overwritten.

    ``choices`` maps a choice's parameter to its control's key and options (label -> the
    library's value, as the control offers them); a value the control does not offer is
    ignored.
    """
    wanted = _new_link()
    if not wanted:
        return False
    # what the link names, exactly: a missing second candidate is none; missing references
    # or candidate leave the ones on the page
    st.session_state["candidate_b"] = wanted.get("candidate_b", "")
    for key in ("candidate", "references"):
        if key in wanted:
            st.session_state[key] = wanted[key]
    for name, (key, options) in (choices or {}).items():
        labels = {value: label for label, value in options.items()}
        if wanted.get(name) in labels:
            st.session_state[key] = labels[wanted[name]]
    st.session_state[_COMPARE_URL] = wanted
    return True


def tokenizer_from_url(key: str, offered: Sequence[str]) -> None:
    """The router's half of :func:`compare_from_url`: a link's tokenizer, set before the
    sidebar draws its control (a page runs after it, too late to change it)."""
    value = _new_link().get("tokenizer")
    if value in offered:
        st.session_state[key] = value


def _compare_url_params(
    candidate: str,
    candidate_b: str,
    references: Sequence[str],
    choices: Mapping[str, str],
) -> tuple[dict[str, Any], dict[str, Any]]:
    """What the page remembers writing, and the query parameters themselves."""
    wanted: dict[str, Any] = {"candidate": candidate}
    params: dict[str, Any] = {CANDIDATE_PARAM: candidate}
    if candidate_b.strip():
        wanted["candidate_b"] = candidate_b
        params[CANDIDATE_B_PARAM] = candidate_b
    if references:
        wanted["references"] = "\n".join(references)
        params[REF_PARAM] = list(references)
    for name in COMPARE_CHOICE_PARAMS:
        if name in choices:
            wanted[name] = params[name] = choices[name]
    return wanted, params


def sync_compare_url(
    candidate: str,
    candidate_b: str,
    references: Sequence[str],
    choices: Mapping[str, str] | None = None,
) -> str:
    """Write Compare's inputs and ``choices`` (parameter -> the library's value) into the
    URL, so the address bar is a link to this example; returns the query string."""
    wanted, params = _compare_url_params(candidate, candidate_b, references, choices or {})
    st.session_state[_COMPARE_URL] = wanted
    if dict(_flat(st.query_params)) != dict(_flat_items(params)):
        st.query_params.from_dict(params)
    return urlencode(params, doseq=True, quote_via=quote)


def share_link(page: str, query: str) -> str:
    """The address of ``page`` (its URL path) with ``query``: whole when the browser told the
    server where the app is, else from the app's root (``/compare-captions?...``)."""
    base = (st.context.url or "").rstrip("/")
    return f"{base}/{page}?{query}"


def _flat(params: Any) -> list[tuple[str, tuple[str, ...]]]:
    return [(k, tuple(params.get_all(k))) for k in params]


def _flat_items(params: Mapping[str, Any]) -> list[tuple[str, tuple[str, ...]]]:
    return [(k, tuple(v) if isinstance(v, list) else (v,)) for k, v in params.items()]


# -- a page's own inputs in its URL -------------------------------------------------------------
#: the Perturbation lab's inputs in its URL: session key -> (parameter, kind). Kinds: "text"
#: (one value), "lines" (a text area, one parameter per line), "list" (a multiselect, one
#: per item), "int". Parameters start with ``lab_``, apart from Compare's.
LAB_URL: dict[str, tuple[str, str]] = {
    "lab_candidate": ("lab_caption", "text"),
    "lab_references": ("lab_ref", "lines"),
    "lab_perturbations": ("lab_perturbation", "list"),
    "lab_seed": ("lab_seed", "int"),
    "lab_n": ("lab_n", "int"),
    "lab_cider_idf": ("lab_idf", "text"),
    "lab_metrics": ("lab_metric", "list"),
}
_LAB_URL = "_lab_url"


def inputs_from_url(
    fields: Mapping[str, tuple[str, str]] = LAB_URL, memory: str = _LAB_URL
) -> bool:
    """Fill a page's inputs from its URL when the URL names values the page did not write
    itself (a reload in a new session, a shared link): True when it did. What the user
    changed since the page last wrote the URL is never overwritten. The caller checks that
    the choices are still offered (:func:`valid_choice`, :func:`valid_choices`)."""
    params = st.query_params
    wanted = {
        key: tuple(params.get_all(param)) for key, (param, _) in fields.items() if param in params
    }
    if not wanted or wanted == st.session_state.get(memory):
        return False
    for key, values in wanted.items():
        kind = fields[key][1]
        if kind == "lines":
            st.session_state[key] = "\n".join(values)
        elif kind == "list":
            st.session_state[key] = list(values)
        elif kind == "int":
            with contextlib.suppress(ValueError):
                st.session_state[key] = int(values[0])
        else:
            st.session_state[key] = values[0]
    st.session_state[memory] = wanted
    return True


def sync_inputs_url(
    fields: Mapping[str, tuple[str, str]] = LAB_URL, memory: str = _LAB_URL
) -> None:
    """Write a page's inputs into its URL (the reverse of :func:`inputs_from_url`)."""
    wanted: dict[str, tuple[str, ...]] = {}
    for key, (_, kind) in fields.items():
        if key not in st.session_state:
            continue
        value = st.session_state[key]
        if kind == "lines":
            values = tuple(line.strip() for line in str(value).splitlines() if line.strip())
        elif kind == "list":
            values = tuple(str(v) for v in value)
        else:
            values = (str(value),)
        if values:
            wanted[key] = values
    st.session_state[memory] = wanted
    params = {fields[key][0]: list(values) for key, values in wanted.items()}
    if dict(_flat(st.query_params)) != {p: tuple(v) for p, v in params.items()}:
        st.query_params.from_dict(params)


# -- the loaded judgment set ---------------------------------------------------------------------
def share_judgment_set(digest: str) -> None:
    """Name the loaded set in the URL (a reload of the page then finds it again)."""
    short = digest[:16]
    if st.query_params.get(SET_PARAM) != short:
        st.query_params[SET_PARAM] = short


def restore_judgment_set(key: str, lookup: Callable[[str], Any]) -> None:
    """After a reload: put the set the URL names back into the session (``lookup`` finds it
    among the sets this server process has loaded; a set it no longer has stays unloaded)."""
    if key in st.session_state:
        return
    short = st.query_params.get(SET_PARAM)
    if short:
        found = lookup(short)
        if found is not None:
            st.session_state[key] = found


# -- the meta-evaluation choices in the URL ------------------------------------------------------
#: query parameter -> the session key it restores: the chosen metrics (the picker's kept
#: list), the human-score column and the correlation level
META_CHOICE_PARAMS: dict[str, str] = {
    "metric": "_meta_metrics_kept",
    "human": "human_column",
    "level": "correlation_level",
}
_CHOICES_RESTORED = "_choices_restored"


def restore_choices() -> None:
    """Once per session (a reload starts a new one): the choices the URL names, for every
    key the session does not hold yet."""
    if st.session_state.get(_CHOICES_RESTORED):
        return
    st.session_state[_CHOICES_RESTORED] = True
    for param, key in META_CHOICE_PARAMS.items():
        values = st.query_params.get_all(param)
        if values and key not in st.session_state:
            st.session_state[key] = list(values) if param == "metric" else values[0]


def share_choices(**choices: Any) -> None:
    """Write meta-evaluation choices into the URL (``metric=`` once per chosen metric)."""
    for param, value in choices.items():
        wanted = [str(v) for v in value] if isinstance(value, list | tuple) else [str(value)]
        if st.query_params.get_all(param) != wanted:
            st.query_params[param] = wanted if param == "metric" else wanted[0]
