"""What the app keeps for a session, and a page's state in its URL: one place for both.

Streamlit drops a widget's value when a run does not draw that widget (another page), so a
caption typed on Compare would be gone after a visit to the Perturbation lab. The router
(``app.py``) runs on every page and calls :func:`keep_inputs` first, which hands every input
listed in :data:`KEPT` back to Streamlit as a value of its own; the widgets then find it when
their page runs again. Such widgets take their defaults from :func:`default` (session state),
never from a ``value=``/``index=`` argument, so Streamlit sees one source of truth.

**A page's state is its URL** (issue 42). Each page lists its inputs as :class:`Param`\\ s
(:data:`COMPARE`, :data:`LAB_ONE`, :data:`CORRELATIONS`, ...): every choice that changes a
number or a drawing, spelled in the URL as the library spells it (``idf=corpus``,
``correlation=kendall_b``). A page calls :func:`restore` before its widgets (a link or a
reload fills them) and :func:`write` after them (the address bar, and its "Copy link", then
reopen exactly this view). What the user changed since the app last read or wrote the URL is
never overwritten: a URL is restored only when it is not the one the app has seen.

**Data a URL cannot carry** (an uploaded judgment set, a Systems table's references) is named
by a digest; the server holds it (``capeval_ui.store``) while it runs. A link naming data this
server does not hold leaves the name pending (:func:`linked_set`): the page says so, keeps
the URL and the choices, and shows no numbers until the user decides (issue 42).

**The session's judgment set is named on every page** (``set=``), also on pages that do not
use it (Home, Compare, Systems, the Perturbation lab): a reload there is a new session, and
without the name the set was gone for the Judgments and meta-evaluation pages too. Such a
page carries it (:func:`restore` and :func:`write` add it to the page's own parameters): one
this server holds comes back at once; one it does not is kept in the URL without a word
(the page does not use it), and a page that uses it says so when a link opens there.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

import streamlit as st

from capeval_core.examples import COCO_POOL
from capeval_ui import TOKENIZER_KEY, TOKENIZERS, store

#: each Compare panel (a metric key, "-b" after it for candidate B's) and what it lets the
#: reader choose; the choice's session key is "{panel}-{what}"
_PANELS = tuple(
    (f"{metric}{side}", what)
    for metric, what in (
        ("bleu", "order"),
        ("cider_d", "order"),
        ("rouge_l", "reference"),
        ("meteor", "reference"),
        ("wmd", "reference"),
    )
    for side in ("", "-b")
)

#: inputs kept across pages: Compare, Perturbation lab, Judgments and the meta-evaluation
#: pages. Buttons and file uploaders are not here: Streamlit does not let a script set them.
KEPT: tuple[str, ...] = (
    # Compare captions
    "example",
    "candidate",
    "candidate_b",
    "references",
    "cider_idf",
    "compare_tab",
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
    "judgment_preset",
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
    # Compare's panels (n-gram order, reference), drawn only while their tab is open
    *(f"{panel}-{what}" for panel, what in _PANELS),
)
#: the Systems page's last uploaded results and annotations files, kept for the session
#: (Streamlit empties a file uploader whenever its page is left)
SYSTEMS_FILES = "_systems_files"
#: the graded/pairwise judgment set loaded on the Judgments page, and the distractor set
#: uploaded on the Robustness page
JSET_KEY = "judgment_set"
DISTRACTOR_SET_KEY = "distractor_set"
#: the note Compare captions shows when opened from a row of the Systems page (a dict with the
#: two captions it is about and its text; see systems_views.drill_down_note)
FROM_SYSTEMS = "_from_systems"


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
        _note_dropped(key, [st.session_state.pop(key)])
    if fallback is not None and fallback in options:
        default(key, fallback)


def valid_choices(key: str, options: Sequence[Any]) -> None:
    """:func:`valid_choice` for a multiselect: keep only the chosen values still offered. A
    choice of which none is offered (a link's ``metric=foo``) is forgotten, so the page's
    default applies, as the note on the link says (an empty box asked for a metric)."""
    if key in st.session_state:
        chosen = list(st.session_state[key])
        kept = [v for v in chosen if v in options]
        _note_dropped(key, [v for v in chosen if v not in options])
        if chosen and not kept:
            del st.session_state[key]
        else:
            st.session_state[key] = kept


def nearest_choice(key: str, options: Sequence[int]) -> None:
    """A kept number not among a slider's ``options`` (a link's ``resamples=5000``) becomes
    the nearest of them, and the link's value is noted as not used (:func:`rejected`);
    the slider itself would fall back to its first option in silence."""
    value = st.session_state.get(key)
    if value is None or value in options:
        return
    st.session_state[key] = min(options, key=lambda o: (abs(o - value), o))
    # the link's value as it spelt it: resamples=-5 was first brought within its field (1),
    # and that 1 was quoted as the link's
    unused_link_value(key, f"the nearest offered, {st.session_state[key]}, is used")


def clamp(key: str, low: int, high: int) -> None:
    """Bring a kept number into a widget's range (an edited link's ``draws=99``)."""
    if key in st.session_state:
        value = int(st.session_state[key])
        st.session_state[key] = min(max(value, low), high)
        if value != st.session_state[key] and (param := st.session_state.get(_LINKED, {}).get(key)):
            _note(param, *_nearest(param, value, st.session_state[key]))


# -- example pickers -------------------------------------------------------------------------
def remember_example(picker: str, inputs: Mapping[str, str]) -> None:
    """Note what an example picker just put into its text areas (see :func:`name_own_inputs`)."""
    st.session_state[f"_{picker}_loaded"] = _captions(inputs)


def name_own_inputs(
    picker: str,
    fields: Sequence[str],
    own: str,
    known: Mapping[str, Mapping[str, str]] | None = None,
) -> str | None:
    """Put an example picker on ``own`` once its text areas no longer hold the example it
    loaded (typed over, or filled from a link): a picker still naming the example would say
    the captions on screen are that example's (issue 34). Call before the picker is drawn.

    Captions that are one of the ``known`` examples' (name -> its text areas), as a link to
    it holds them, name that example instead (a reload said "Your own captions" beside an
    example's captions); its name is returned."""
    loaded = st.session_state.get(f"_{picker}_loaded")
    now = _captions({field: st.session_state.get(field, "") for field in fields})
    if loaded is None or {k: now.get(k, ()) for k in loaded} == loaded:
        return None
    for name, inputs in (known or {}).items():
        example = _captions(inputs)
        if {k: now.get(k, ()) for k in example} == example:
            st.session_state[picker] = name
            remember_example(picker, inputs)
            return name
    st.session_state[picker] = own
    return None


def _captions(inputs: Mapping[str, str]) -> dict[str, tuple[str, ...]]:
    """Text areas as the captions they hold (one per non-blank line, spaces trimmed)."""
    return {
        k: tuple(line.strip() for line in str(v).splitlines() if line.strip())
        for k, v in inputs.items()
    }


# -- a page's state in its URL ---------------------------------------------------------------
#: the largest seed a page's number field takes (a browser's number input is a double: a
#: link's seed of 10**309 broke the lab for the whole session, 2**53 + 1 showed as 2**53)
SEED_MAX = 2**31 - 1
#: the most words the lab changes in one caption
LAB_MAX_WORDS = 10_000


@dataclass(frozen=True)
class Param:
    """One input of a page as its URL carries it.

    ``key`` is the session key (the widget's), ``name`` the query parameter. ``kind``:
    ``"text"`` (one value), ``"lines"`` (a text area, one parameter per line, blank and
    indented lines as typed), ``"list"`` (a
    multiselect, one parameter per item), ``"int"``, ``"bool"``, ``"index"`` (a 0-based
    position, written from 1 as a reader counts) or ``"set"`` (data the server holds, named
    by its digest prefix; see :func:`linked_set`). ``spell`` maps a control's labels to their
    URL spelling (the library's value); a spelling it does not know is not restored.
    ``absent`` is what a restored link without the parameter sets (None: leaves the value);
    a text field emptied is written as an empty parameter (``ref=``) unless ``absent`` says
    a link without it means the same.
    ``low``/``high`` bound a number (an edited link's ``seed=-3`` opens as 0).
    """

    key: str
    name: str
    kind: str = "text"
    spell: Mapping[str, str] | None = None
    absent: Any = None
    low: int | None = None
    high: int | None = None
    #: further session values a restore of this parameter sets (e.g. "the link chose")
    also: Mapping[str, Any] = field(default_factory=dict)


#: the URL the app last read or wrote in this session (parameter -> values)
_SEEN = "_url_seen"
#: digest prefixes of sets a restored link named, by session key, until found or declined
_PENDING = "_linked_sets"
#: parameters of the last restored link that named something not offered (name -> value)
_REJECTED = "_url_rejected"
#: in the run a link opens: the session keys it set (key -> Param), and the place of the
#: page's warning with the parameters it does not say (see :func:`say_rejected`)
_LINKED = "_url_linked"
_SLOT = "_url_rejected_slot"
#: why a parameter's second value is not used
SECOND_VALUE = "a second value: the first is used"


def _url() -> dict[str, tuple[str, ...]]:
    params = st.query_params
    return {name: tuple(params.get_all(name)) for name in params}


#: the URLs the app wrote in the last run and in the run before it. A run writes its URL
#: more than once (choices, then the table drawn), and a browser busy drawing applies them
#: late: a click made meanwhile comes back with an earlier one, even the URL of the run
#: before the last. That is not a link, and restoring it undid the click. Older URLs are
#: links again: the same address opened later (a table's row, after other pages ran) opens
#: what it names.
_WRITTEN = "_url_written"
_WRITTEN_BEFORE = "_url_written_before"


def _history_navigation() -> bool:
    """Whether this run is the browser's Back or Forward (Streamlit's run context says so)."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    return bool(getattr(get_script_run_ctx(), "is_history_navigation", False))


def link_is_new() -> bool:
    """Whether the URL names inputs the app has not seen in this session: a shared link, a
    reload (a new session), an address typed or edited, the browser's Back and Forward.
    Back to the URL of the change before was one the app had written (a late echo, above),
    so the page kept its inputs and wrote them again: the first Back did nothing. A run the
    browser's history starts is a link whenever its URL is not the one last written."""
    url = _url()
    written = st.session_state.get(_WRITTEN, [])
    if _history_navigation():
        return bool(url) and url != (written[-1] if written else st.session_state.get(_SEEN))
    seen = st.session_state.get(_SEEN)
    own = (*st.session_state.get(_WRITTEN_BEFORE, []), *written)
    return bool(url) and url != seen and url not in own


def restore(params: Sequence[Param], other_names: Sequence[str] = ()) -> bool:
    """Fill the session from the URL when it is a new link (:func:`link_is_new`): True when
    it did. A value the page does not offer (an unknown spelling, a number that is not one)
    is left out and noted (:func:`rejected`); the caller checks that the choices are still
    offered (:func:`valid_choice`, :func:`valid_choices`). A parameter that is none of
    ``params`` nor ``other_names`` (read by the page itself) is noted too. A page without the
    judgment set among ``params`` carries it (:data:`SET`; see the module doc). A set this
    server holds goes into the session at once; another is pending (:func:`linked_set`)."""
    if not any(param.key == JSET_KEY for param in params):
        params = (*params, SET)
    new = link_is_new()
    st.session_state[_PICKER_DRAWN] = False  # until this run's page draws its picker
    st.session_state[_WRITTEN_BEFORE] = [] if new else st.session_state.get(_WRITTEN, [])
    st.session_state[_WRITTEN] = []
    st.session_state[_LINKED] = {}
    st.session_state.pop(_SLOT, None)
    if not new:
        return False
    url = _url()
    st.session_state[_SEEN] = url
    rejected: dict[str, tuple[str, str]] = {}  # name -> (the link's value, why not used)
    known = {param.name for param in params} | set(other_names)
    for name in url:  # a misspelt or another page's parameter was dropped without a word
        if name == TOO_LARGE:
            rejected[name] = (url[name][0], "")
        elif name not in known:
            rejected[name] = (url[name][0], "not a setting of this page")
    for param in params:
        values = url.get(param.name)
        if param.key == TOKENIZER_KEY:  # the router set it, before the sidebar drew it
            if values and _from_url(param, values) is _REJECT:
                rejected[param.name] = (values[0], "")
            elif values and len(values) > 1:  # said as for every other parameter
                rejected[param.name] = (values[1], SECOND_VALUE)
            continue
        if not values:
            if param.absent is not None:
                st.session_state[param.key] = param.absent
            continue
        if len(values) > 1 and param.kind not in ("lines", "list"):
            rejected[param.name] = (values[1], SECOND_VALUE)
        value = _from_url(param, values)
        if value is _REJECT:
            rejected[param.name] = (param.kind == "list" and _unused(param, values, value)) or (
                values[0],
                "",
            )
            continue
        if (unused := _unused(param, values, value)) is not None:
            rejected[param.name] = unused
        st.session_state[_LINKED][param.key] = param
        if param.kind == "set":
            pending = st.session_state.setdefault(_PENDING, {})
            found = store.find_set(value)
            if found is None:
                pending[param.key] = value
            else:  # a page that does not use it finds it too, before the user leaves it
                pending.pop(param.key, None)
                st.session_state[param.key] = found
        else:
            st.session_state[param.key] = value
        for key, also in param.also.items():
            st.session_state[key] = also
    st.session_state[_REJECTED] = rejected
    return True


def rejected() -> dict[str, str]:
    """Parameters of the link restored last that named a value not offered here (the
    value, and why in brackets after it where the page said why)."""
    said = st.session_state.get(_REJECTED) or {}
    return {name: f"{value} ({why})" if why else value for name, (value, why) in said.items()}


def say_rejected(restored: bool, exclude: Sequence[str] = ()) -> None:
    """One warning, in the run a link opens (``restored``), for its values the page did not
    use (:func:`rejected`): they were replaced by the page's own choices without a word, and
    the rewritten address no longer held them. ``exclude``: values the page says itself.
    Values the page drops later in the run (:func:`valid_choice`: a column the set does not
    have) join the same warning.

    The slot is placed in every run, drawn or not: an element only in a link's first run
    moved every later element of the page one place, and the browser rebuilt each expander
    the reader had opened, closed, at their first edit after a reload or a link."""
    slot = st.empty()
    if not restored:
        return
    st.session_state[_SLOT] = (slot, tuple(exclude))
    _say()


#: the address whose parameters Home last named as not its settings (:func:`say_not_settings`)
_NAMED_FOREIGN = "_url_named_foreign"


def say_not_settings(params: Sequence[Param]) -> None:
    """Home's "values not used" warning for an address naming parameters that are none of
    ``params`` (``/?foo=bar`` was kept without a word, where every other page says "not a
    setting of this page"), in the run it opens. The address is not restored nor rewritten:
    a page opened by a link runs with it from its first run, but a session's first run may
    be Home's with another page's address (a test's link), and that page restores it."""
    url = _url()
    own = {param.name for param in params} | {SET.name}
    new = link_is_new() and url != st.session_state.get(_NAMED_FOREIGN)
    st.session_state[_NAMED_FOREIGN] = url
    st.session_state[_REJECTED] = {
        name: (values[0], "not a setting of this page")
        for name, values in url.items()
        if name not in own
    }
    say_rejected(new)


def _say() -> None:
    """Draw the rejected values in the slot :func:`say_rejected` placed (if any)."""
    from capeval_ui.formats import literal

    slot, exclude = st.session_state.get(_SLOT, (None, ()))
    said_of = st.session_state.get(_REJECTED) or {}
    bad = {k: v for k, v in said_of.items() if k not in exclude}
    too_large = bad.pop(TOO_LARGE, (None,))[0]
    said = []
    if too_large is not None:
        said.append(
            f"This address was written for a view too large for a link ({sizes(too_large)}), "
            "so it cannot open that view again: the page shows its own choices."
        )
    if bad:
        shown = "; ".join(
            f"{k}={_cut(value)}" + (f" ({why})" if why else "") for k, (value, why) in bad.items()
        )
        said.append(
            f"This link's values not used here: {literal(shown)}. The page shows its own "
            "choices for them."
        )
    if slot is not None and said:
        slot.warning(" ".join(said), icon=":material/link_off:")


def _cut(text: str, keep: int = 80) -> str:
    """A long link value as the warning names it: both ends, and how much is left out
    between them (cut after 80 characters, two long captions alike at the start read the
    same). The reason the page gives follows it uncut.

    >>> _cut("short")
    'short'
    >>> _cut("abcdefghij" * 3, keep=10)
    'abcde…(20 characters left out)…fghij'
    """
    if len(text) <= keep:
        return text
    head = tail = keep // 2
    return f"{text[:head]}…({len(text) - head - tail:,} characters left out)…{text[-tail:]}"


def _note_dropped(key: str, dropped: Sequence[Any]) -> None:
    """Name values a page dropped as not offered (see :func:`say_rejected`), when they are
    what a link just restored (choices kept from earlier in a session go without a word)."""
    param = st.session_state.get(_LINKED, {}).get(key)
    if param is not None and dropped:
        _note(param, ", ".join(_to_url(param, dropped if param.kind == "list" else dropped[0])))


def unused_link_value(key: str, why: str, values: Sequence[str] | None = None) -> bool:
    """Name a value the link just restored for ``key`` that the page then did not use
    (``why``), in the run's "values not used" warning (it was restored without a word, or
    said as used). ``values``: the items of a list not used (default: the link's first
    value, as it spelt it). Returns whether it did (the value was the link's)."""
    param = st.session_state.get(_LINKED, {}).get(key)
    given = _url().get(param.name) if param is not None else None  # as the link spelt it
    if param is not None and given:
        _note(param, ", ".join(values) if values else given[0], why)
        return True
    return False


def _note(param: Param, value: str, why: str = "") -> None:
    """Add a link's value (and why it was not used) to the warning of its run
    (:func:`say_rejected`)."""
    st.session_state.setdefault(_REJECTED, {})[param.name] = (value, why)
    _say()


def _nearest(param: Param, value: int, used: int) -> tuple[str, str]:
    return _to_url(param, value)[0], f"the nearest in range, {_to_url(param, used)[0]}, is used"


def _unused(param: Param, values: tuple[str, ...], value: Any) -> tuple[str, str] | None:
    """How a link's values were not taken as they are: list items not offered, a number
    brought within its field; None when all were."""
    if param.kind == "list":
        unknown = [v for v in values if v != "" and _unspell(param, v) is _REJECT]
        return (", ".join(unknown), "") if unknown else None
    if (
        param.kind in ("int", "index")
        and (raw := int(values[0]) - (param.kind == "index")) != value
    ):
        return _nearest(param, raw, value)
    return None


_REJECT = object()


def _unspell(param: Param, value: str) -> Any:
    if param.spell is None:
        return value
    labels = {spelled: label for label, spelled in param.spell.items()}
    return labels.get(value, _REJECT)


def _from_url(param: Param, values: tuple[str, ...]) -> Any:
    """The session value of a parameter's URL values (or ``_REJECT``)."""
    kind = param.kind
    if kind == "lines":
        return "\n".join(values)
    if kind == "list":  # "metric=" is a list emptied; a value given twice counts once
        given = [_unspell(param, v) for v in dict.fromkeys(values) if v != ""]
        kept = [v for v in given if v is not _REJECT]
        # none offered (metric=foo): the page's own choice, not an empty box asking for one
        return _REJECT if given and not kept else kept
    if kind in ("int", "index"):
        try:
            number = int(values[0]) - (1 if kind == "index" else 0)
        except ValueError:
            return _REJECT
        if param.low is not None:
            number = max(number, param.low)
        if param.high is not None:
            number = min(number, param.high)
        return number
    if kind == "set" and not values[0].strip():
        # set= names no set: said as not used, as an empty tab= is; it waited for a set of
        # that name, kept set= in the address, and a meta page said "set () is not here"
        return _REJECT
    if kind == "bool":  # another word ("maybe") is named as not used, not read as off
        word = values[0].lower()
        return True if word in _TRUE else False if word in _FALSE else _REJECT
    return _unspell(param, values[0])


#: how a link may spell a switch on or off
_TRUE = ("1", "true", "on", "yes")
_FALSE = ("0", "false", "off", "no", "")


def _to_url(param: Param, value: Any) -> list[str]:
    """A session value as the parameter's URL values (none: the parameter is left out)."""
    spell = param.spell or {}
    kind = param.kind
    if value is None:
        return []
    if kind == "lines":  # every line as typed, blank ones too: a reload shows the box as left
        lines = str(value).split("\n")
        return lines if lines != [""] else _blank(param)
    if kind == "list":
        return [str(spell.get(v, v)) for v in value] or _blank(param)
    if kind == "index":
        return [str(int(value) + 1)]
    if kind == "int":
        return [str(int(value))]
    if kind == "bool":
        return ["1" if value else "0"]
    if kind == "set":
        digest = getattr(value, "content_digest", None)
        return [digest[:16]] if digest else []
    text = str(spell.get(value, value))
    return [text] if text.strip() else _blank(param)


def _blank(param: Param) -> list[str]:
    """An emptied text field or multiselect as the URL says it: ``ref=``, ``metric=``,
    unless a link without the parameter means the same (``absent``). Left out, a reload
    filled it with the page's defaults again and showed numbers where the page had said
    there were none."""
    free = param.spell is None or param.kind == "list"
    return [""] if param.absent is None and free else []


#: the URL of a view too large for a link (:func:`fits_in_link`): ``<values>-<characters>``
#: of the query it would hold, so a reload says why it opens the page's own choices (it
#: opened them silently)
TOO_LARGE = "too_large"


def sizes(marker: str) -> str:
    """What a :func:`link_size` (a :data:`TOO_LARGE` marker) says, beside a link's limits.

    >>> sizes("1102-36000")
    '1,102 values and 36,000 characters; a link holds at most 1,000 values and 524,288 characters'
    """
    from streamlit.runtime.state import query_params as read

    from capeval_ui.formats import literal

    fields, _, chars = marker.partition("-")
    held = (
        f"{int(fields):,} values and {int(chars):,} characters"
        if fields.isdigit() and chars.isdigit()
        else literal(marker[:40])
    )
    return (
        f"{held}; a link holds at most {read.CLIENT_STATE_QUERY_STRING_MAX_FIELDS:,} values "
        f"and {read.CLIENT_STATE_QUERY_STRING_MAX_LENGTH:,} characters"
    )


def link_size(query: str) -> str:
    """``<values>-<characters>`` of ``query``, as Streamlit counts them (the :data:`TOO_LARGE`
    marker's value)."""
    return f"{query.count('&') + 1 if query else 0}-{len(query)}"


def fits_in_link(query: str) -> bool:
    """Whether Streamlit reads ``query`` from an address: it ignores a whole query of more
    than its most values or characters."""
    from streamlit.runtime.state import query_params as read

    fields, chars = map(int, link_size(query).split("-"))
    return (
        chars <= read.CLIENT_STATE_QUERY_STRING_MAX_LENGTH
        and fields <= read.CLIENT_STATE_QUERY_STRING_MAX_FIELDS
    )


def carried_set() -> dict[str, list[str]]:
    """The judgment set this session holds (or a link's, pending) as query parameters
    (``{"set": [...]}``, or nothing): every page's URL carries it, and so does a link a page
    builds to another (a Systems row's Compare link opens a new session)."""
    short = _live_pending().get(JSET_KEY)
    carried = [short] if short else _to_url(SET, st.session_state.get(JSET_KEY))
    return {SET.name: carried} if carried else {}


def write(params: Sequence[Param], values: Mapping[str, Any] | None = None) -> str:
    """Write a page's inputs into its URL (the reverse of :func:`restore`) and return the
    query string. ``values`` (session key -> value) gives inputs the session does not hold
    as such (the set a page works on). Nothing changes while a link's set is pending: the
    user has not decided yet, and the URL stays the link they opened. A page without the
    judgment set among ``params`` names the session's (or the link's, pending) all the same
    (see the module doc). A view too large for a link writes :data:`TOO_LARGE` (and that
    set) alone; the query is returned all the same."""
    pending = _live_pending()
    if any(p.kind == "set" and p.key in pending for p in params):
        return urlencode(_url(), doseq=True)
    given = values or {}
    query: dict[str, list[str]] = {}
    for param in params:
        value = given[param.key] if param.key in given else st.session_state.get(param.key)
        if param.key == KEPT_METRICS and st.session_state.get(_PICKER_DRAWN):
            # the metrics the picker shows, not those kept for other pages: a metric this
            # page does not offer was named, and a reload warned it was not used
            value = st.session_state.get(METRICS_KEY, value)
        spelled = _to_url(param, value)
        if spelled:
            query[param.name] = spelled
    carried: list[str] = []
    if not any(param.key == JSET_KEY for param in params):
        carried = carried_set().get(SET.name, [])
        if carried:
            query[SET.name] = carried
    full = urlencode(query, doseq=True)
    if not fits_in_link(full):
        query = {TOO_LARGE: [link_size(full)], **({SET.name: carried} if carried else {})}
    flat = {name: tuple(v) for name, v in query.items()}
    # sent again when this session last wrote another URL: a run cut short by the next (an
    # uploader's file replaced: removed, then added) may reach the browser after that run
    # began with the browser's older URL, which then stayed in the address bar
    if _url() != flat or st.session_state.get(_SEEN) != flat:
        st.query_params.from_dict({k: v if len(v) > 1 else v[0] for k, v in query.items()})
    st.session_state[_SEEN] = flat
    st.session_state.setdefault(_WRITTEN, []).append(flat)
    return full


def share_link(page: str, query: str) -> str:
    """The address that opens this view: the page's address as the browser gave it (with
    the server's name and any base path) and ``query``; from the app's root
    (``/compare-captions?...``) when the browser has not said (a page run in a test)."""
    here = (st.context.url or "").rstrip("/")
    base = here if here else f"/{page}".rstrip("/")
    return f"{base}?{query}" if query else base or "/"


def tokenizer_from_url(key: str = TOKENIZER_KEY, offered: Sequence[str] = TOKENIZERS) -> None:
    """The router's part of :func:`restore`: a link's tokenizer, set before the sidebar
    draws its control (a page runs after it, too late to change it)."""
    if not link_is_new():
        return
    values = st.query_params.get_all(TOKENIZER.name)
    if values and values[0] in offered:
        st.session_state[key] = values[0]


# -- data a URL names, held by the server ------------------------------------------------------
def linked_set(key: str, lookup: Callable[[str], Any]) -> str | None:
    """The set a restored link named for ``key`` (its digest prefix): put into the session
    when ``lookup`` finds it on this server (None returned), else returned, so the page can
    say the link's data is not here. None as well when no link named one."""
    pending = _live_pending()
    short = pending.get(key)
    if short is None:
        return None
    current = st.session_state.get(key)
    if current is not None and str(getattr(current, "content_digest", "")).startswith(short):
        pending.pop(key, None)
        return None
    found = lookup(short)
    if found is None:
        return short
    st.session_state[key] = found
    pending.pop(key, None)
    return None


def _live_pending() -> dict[str, str]:
    """The sets still waited for: those the URL still names (a page the user went on to,
    whose URL does not name them, drops them: the link was left)."""
    pending = st.session_state.get(_PENDING) or {}
    named = {value for values in _url().values() for value in values}
    for key in [k for k, short in pending.items() if short not in named]:
        del pending[key]
    return pending


def decline_linked_set(key: str) -> None:
    """The user decided (opened the demo, loaded another set): the link's set is no longer
    waited for."""
    (st.session_state.get(_PENDING) or {}).pop(key, None)


# -- the metric selection of the meta-evaluation pages --------------------------------------------
#: the multiselect's own key, and the plain key mirroring it (a widget's own key is dropped
#: when a page without it runs, so the choice is kept under a plain key)
METRICS_KEY = "meta_metrics"
KEPT_METRICS = "_meta_metrics_kept"
#: whether this run's page drew the metric picker (then its URL names what the picker shows)
_PICKER_DRAWN = "_meta_metrics_drawn"
#: external metric names the picker has offered in this session (None: a link chose the
#: metrics, so an external metric offered now is not added to them)
SEEN_EXTERNAL = "_meta_external_seen"


def chosen_metrics(
    options: Sequence[str], external: Sequence[str], fallback: Sequence[str]
) -> None:
    """Put the kept metric choice into the picker's key before it is drawn: the metrics
    chosen on any meta-evaluation page (``fallback`` at first), and an external metric the
    first time a set offers it (it is what its designer came to compare), unless a link
    named the metrics."""
    kept = list(st.session_state.get(KEPT_METRICS, fallback))
    seen = st.session_state.get(SEEN_EXTERNAL, [])
    if seen is None:  # a link chose: what it offers now counts as seen
        st.session_state[SEEN_EXTERNAL] = list(external)
    else:
        new = [k for k in external if k not in seen]
        if new:
            st.session_state[SEEN_EXTERNAL] = [*seen, *new]
            kept += [k for k in new if k not in kept]
    if KEPT_METRICS in st.session_state.get(_LINKED, {}):  # a link's names this set lacks
        _note_dropped(KEPT_METRICS, [k for k in kept if k not in options])
        offered = [k for k in kept if k in options]
        # a link naming none of them (metric=foo) gets the page's own, as its note says (an
        # empty box asked for a metric, as valid_choices once did)
        kept = offered if offered or not kept else list(fallback)
    st.session_state[KEPT_METRICS] = kept
    st.session_state[METRICS_KEY] = [k for k in kept if k in options]
    st.session_state[_PICKER_DRAWN] = True


def keep_metrics() -> None:
    """The picker's ``on_change``: the choice kept under the plain key."""
    st.session_state[KEPT_METRICS] = list(st.session_state[METRICS_KEY])


# -- every page's parameters --------------------------------------------------------------------
#: the sidebar's tokenizer: every page whose numbers depend on it carries it
TOKENIZER = Param(TOKENIZER_KEY, "tokenizer", spell={t: t for t in TOKENIZERS})

#: Compare's evidence panels: the n-gram order and the reference each one draws, for
#: candidate A and B (widget keys ``<metric>[-b]-order`` / ``-reference``, the same names)
COMPARE_PANELS: tuple[Param, ...] = tuple(
    Param(
        f"{panel}-{what}",
        f"{panel}-{what}",
        "int" if what == "order" else "index",
        low=1 if what == "order" else 0,
        also={} if what == "order" else {f"{panel}-reference-linked": True},
    )
    for panel, what in _PANELS
)


def compare_params(idf_sources: Mapping[str, str], tabs: Sequence[str]) -> tuple[Param, ...]:
    """Compare's parameters: the candidate, an optional second one, one ``ref`` per line,
    the random COCO example's draw (the page writes it while its picker shows one), the
    CIDEr-D IDF source, the tokenizer, the open tab and each panel's choice (the offered
    labels and their spellings come from the page)."""
    return (
        Param("candidate", "candidate"),
        Param("candidate_b", "candidate_b", absent=""),
        Param("references", "ref", "lines"),
        Param("coco_draw", "coco_draw", "int", low=0, high=COCO_POOL - 1),
        Param("cider_idf", "idf", spell=idf_sources),
        TOKENIZER,
        Param("compare_tab", "tab", spell={t: t for t in tabs}),
        *COMPARE_PANELS,
    )


def lab_one_params(
    perturbations: Sequence[str], metrics: Sequence[str], idf_sources: Mapping[str, str]
) -> tuple[Param, ...]:
    """The lab's one-caption parameters (``lab_`` before each, apart from the tokenizer; the
    COCO draw is written while the picker shows one)."""
    return (
        Param("lab_mode", "lab_mode", spell={"One caption": "one", "Batch": "batch"}),
        Param("lab_candidate", "lab_caption"),
        Param("lab_references", "lab_ref", "lines"),
        Param("lab_draw", "lab_coco_draw", "int", low=0, high=COCO_POOL - 1),
        Param("lab_perturbations", "lab_perturbation", "list", spell=_same(perturbations)),
        Param("lab_seed", "lab_seed", "int", low=0, high=SEED_MAX),
        Param("lab_n", "lab_n", "int", low=1, high=LAB_MAX_WORDS),
        Param("lab_cider_idf", "lab_idf", spell=idf_sources),
        Param("lab_metrics", "lab_metric", "list", spell=_same(metrics)),
        Param("lab_table2", "lab_table2", "bool"),
        TOKENIZER,
    )


def lab_batch_params(
    datasets: Mapping[str, str], perturbations: Sequence[str], metrics: Sequence[str]
) -> tuple[Param, ...]:
    """The lab's batch parameters; ``lab_run`` says the batch was run (a link shows its
    results). The Judgments page's set a batch may run on is carried as on every page that
    has no :data:`SET` of its own (:func:`write`), whichever dataset the batch runs on."""
    return (
        Param("lab_mode", "lab_mode", spell={"One caption": "one", "Batch": "batch"}),
        Param("lab_dataset", "lab_dataset", spell=datasets),
        Param("lab_batch_perturbation", "lab_batch_perturbation", spell=_same(perturbations)),
        Param("lab_images", "lab_images", "int", low=10, high=40_000),
        Param("lab_batch_seed", "lab_batch_seed", "int", low=0, high=SEED_MAX),
        Param("lab_batch_metrics", "lab_batch_metric", "list", spell=_same(metrics)),
        Param("lab_batch_on", "lab_run", "bool", absent=False),
        TOKENIZER,
    )


def _same(options: Sequence[str]) -> dict[str, str]:
    return {o: o for o in options}


#: the meta-evaluation pages' shared parameters: the set, the metrics, the human-score column
SET = Param(JSET_KEY, "set", "set")
METRICS = Param(KEPT_METRICS, "metric", "list", also={SEEN_EXTERNAL: None})
HUMAN = Param("human_column", "human")


#: the Judgments page's column mapping of a generic file, as its URL spells it: one
#: ``column:role`` item (``map=caption:candidate``) per box that differs from its default
MAPPING_KEY = "judgment_mapping"
#: set when a link is restored: its mapping goes into the boxes once a file's columns are known
MAPPING_LINKED = "_judgment_mapping_linked"
#: a numeric column's role (``capeval_core.judgments.mapping.SCORE_ROLES``) as the URL says it
SCORE_ROLE_WORDS = {"human score": "human", "metric": "metric", "ignore": "ignore"}


def mapping_items(columns: Mapping[str, str], score_roles: Mapping[str, str]) -> list[str]:
    """A column mapping as its URL items: ``column:role`` for each role's column (``role ->
    column``; "" for none) and for each numeric column's role (``column -> role``).

    >>> mapping_items({"candidate": "caption", "system": ""}, {"metric:mine": "human score"})
    ['caption:candidate', ':system', 'metric:mine:human']
    """
    return [f"{column}:{role}" for role, column in columns.items()] + [
        f"{column}:{SCORE_ROLE_WORDS[role]}" for column, role in score_roles.items()
    ]


def mapping_choices(items: Sequence[str]) -> tuple[dict[str, str], dict[str, str]]:
    """The reverse of :func:`mapping_items`: ``(role -> column, column -> numeric role)``. A
    role is the text after the last colon (a column name may hold colons; no role does).

    >>> mapping_choices(["caption:candidate", ":system", "metric:mine:human"])
    ({'candidate': 'caption', 'system': ''}, {'metric:mine': 'human score'})
    """
    labels = {word: label for label, word in SCORE_ROLE_WORDS.items()}
    columns: dict[str, str] = {}
    score_roles: dict[str, str] = {}
    for item in items:
        column, _, role = item.rpartition(":")
        if role in labels:
            score_roles[column] = labels[role]
        else:
            columns[role] = column
    return columns, score_roles


def unknown_mapping_items(items: Sequence[str], roles: Sequence[str], scores: bool) -> list[str]:
    """The items that name no role a file of the format has (``roles``, and the numeric
    columns' roles when ``scores``), or no colon at all.

    >>> unknown_mapping_items(["caption:candidate", "q:human", "x:y", "x"], ["candidate"], False)
    ['q:human', 'x:y', 'x']
    """
    known = set(roles) | (set(SCORE_ROLE_WORDS.values()) if scores else set())
    return [i for i in items if ":" not in i or i.rpartition(":")[2] not in known]


def judgments_params(demo_sets: Mapping[str, str], formats: Sequence[str]) -> tuple[Param, ...]:
    """Judgments: where the set came from (demo or upload, which demo, which format and
    protocol preset, how a generic file's columns are mapped), the set itself and the
    metrics scored."""
    return (
        Param("judgment_source", "source", spell={"Demo set": "demo", "Upload a file": "upload"}),
        Param("demo_set", "demo", spell=demo_sets),
        Param("judgment_format", "format", spell=_same(formats)),
        Param("judgment_preset", "preset"),
        Param(MAPPING_KEY, "map", "list", absent=[]),
        SET,
        METRICS,
        TOKENIZER,
    )


def correlations_params(methods: Sequence[str]) -> tuple[Param, ...]:
    """Correlations: human column, level, bootstrap, the combined metric's correlation and
    the metric drawn against the human scores."""
    return (
        SET,
        METRICS,
        HUMAN,
        Param("correlation_level", "level", spell={"item": "item", "system": "system"}),
        Param("resamples", "resamples", "int", low=1),
        Param("ci_kendall", "ci_kendall", "bool"),
        Param("combined_correlation", "combined", spell=_same(methods)),
        Param("distribution_metric", "scatter"),
        TOKENIZER,
    )


def significance_params(methods: Sequence[str], alternatives: Sequence[str]) -> tuple[Param, ...]:
    """Significance: the correlation, the test's direction and the pair detailed."""
    return (
        SET,
        METRICS,
        HUMAN,
        Param("williams_correlation", "correlation", spell=_same(methods)),
        Param("williams_alternative", "test", spell=_same(alternatives)),
        Param("pair_a", "a"),
        Param("pair_b", "b"),
        TOKENIZER,
    )


def pairwise_params(metric_ties: Sequence[str], human_ties: Sequence[str]) -> tuple[Param, ...]:
    """Pairwise accuracy: the protocol's knobs."""
    return (
        SET,
        METRICS,
        Param("n_references", "refs", "int", low=1),
        Param("draws", "draws", "int", low=1, high=20),
        Param("seed", "seed", "int", low=0, high=SEED_MAX),
        Param("metric_tie", "metric_tie", spell=_same(metric_ties)),
        Param("human_tie", "human_tie", spell=_same(human_ties)),
        TOKENIZER,
    )


def robustness_params(sources: Mapping[str, str], metric_ties: Sequence[str]) -> tuple[Param, ...]:
    """Robustness: which distractor set (the loaded one, the generated one, an upload,
    named by its digest) and how a metric tie counts."""
    return (
        Param("distractor_source", "source", spell=sources),
        SET,
        Param(DISTRACTOR_SET_KEY, "distractors", "set"),
        METRICS,
        Param("forced_tie", "tie", spell=_same(metric_ties)),
        TOKENIZER,
    )
