"""The Systems page's state: its choices in its URL, the uploaded files a link names, and the
table it scored when the user pressed Score.

**Its URL.** Every choice that changes a number (the systems, references, names and baseline,
metrics, on-missing choice, paired test and resampling, raw values, the differences' systems
and metric) is written to the URL and restored from a link (:data:`PARAMS`,
:func:`restore`, :func:`write`); choices are spelled as the library spells them
(``paired=bs``, ``metric=cider_d``), with the sidebar's tokenizer, through the app's one URL
mechanism (:mod:`capeval_ui.state`).

**Files a link cannot carry.** Uploaded results files are named in the URL by a digest of
their content (``files=…``); this server process keeps the files it was given
(:func:`remember_files`), so a link opened in another browser finds them while the server
runs. A link naming files the server does not hold (a restart, another machine) leaves them
pending (:func:`linked_files`): the page says so at the top, keeps the link's choices, and
shows no numbers until the user uploads files or opens the demo.

**Scoring on request.** Scoring starts when the user presses Score (the demo is scored when
the page first opens, and a link to a table, ``scored=1``, is scored when opened: it asks for
that table). The table keeps the :class:`Request` it was scored for; a change of
choices afterwards marks it out of date (:func:`changes`). A run that did not finish was
cancelled (the Cancel button), or superseded by new choices, or interrupted by another click
that changed nothing the numbers depend on: the last is resumed (:func:`interrupted`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from urllib.parse import urlencode

import streamlit as st

from capeval_ui import TOKENIZER_KEY, current_tokenizer, state, store
from capeval_ui.state import SYSTEMS_FILES as FILES  # (results files, references file or None)
from capeval_ui.state import Param

#: the session keys of what the page keeps besides its widgets (and FILES, the files in use)
TABLE = "_systems_table"  # the last table scored: {"request", "comparison", "data"}
RUNNING = "_systems_running"  # the Request of a run under way (left set if it did not finish)
CANCELLED = "_systems_cancelled"  # the Cancel button was pressed during a run
OPENED = "_systems_opened"  # the page opened the demo once already
_LINKED = "_systems_linked_files"  # the files digest a link named, until found or declined
_LINK_SCORED = "_systems_link_scored"  # a link restored showed a table: score it on opening


def params(
    sources: Mapping[str, str], references: Mapping[str, str], bounds: Mapping[str, tuple[int, int]]
) -> tuple[Param, ...]:
    """The Systems page's URL: ``sources`` and ``references`` map the radios' labels to
    their spelling (``source=upload``, ``references=coco-val2014``), ``bounds`` the number
    inputs' keys to their (low, high) (an edited link's number is brought within them)."""

    def number(key: str, name: str) -> Param:
        low, high = bounds[key]
        return Param(key, name, "int", low=low, high=high)

    return (
        Param("systems_source", "source", spell=sources),
        Param("systems_references", "references", spell=references),
        Param("systems_split", "split"),
        Param("systems_on_missing", "on_missing"),
        Param("systems_names", "names", absent=""),
        Param("systems_baseline", "baseline"),
        Param("systems_metrics", "metric", "list"),
        Param("systems_paired", "paired"),
        number("systems_resamples", "resamples"),
        number("systems_trials", "trials"),
        number("systems_seed", "seed"),
        Param("systems_raw", "raw", "bool"),
        Param("systems_a", "a"),
        Param("systems_b", "b"),
        Param("systems_key", "differences"),
        state.TOKENIZER,
    )


#: the parameter naming the uploaded files (a digest prefix of their content)
FILES_PARAM = "files"
#: present (``scored=1``) when the page showed the table of exactly these choices: a link
#: then reopens the table, scored at once; without it, the link waits for Score as the page did
SCORED_PARAM = "scored"
#: digits of the files' digest a URL carries (64 bits)
PREFIX = store.PREFIX
#: the two parameters :func:`write` adds to the page's (their values are given, not kept)
_FILES = Param("_systems_files_in_url", FILES_PARAM)
_SCORED = Param("_systems_scored_in_url", SCORED_PARAM, "bool")


def restore(page_params: Sequence[Param]) -> bool:
    """Fill the choices from the URL when it is a link the page has not seen in this session
    (a shared link, a reload; :func:`capeval_ui.state.restore`): True when it did. Also notes
    the files the link names (:func:`linked_files`) and whether it showed a table."""
    restored = state.restore(page_params, (FILES_PARAM, SCORED_PARAM))
    state.say_rejected(restored)
    if not restored:
        return False
    files = st.query_params.get_all(FILES_PARAM)
    st.session_state[_LINKED] = files[0] if files else None
    st.session_state[_LINK_SCORED] = st.query_params.get_all(SCORED_PARAM) == ["1"]
    return True


def link_shows_table() -> bool:
    """Whether a link just restored showed a table (``scored=1``); asked once per link."""
    return bool(st.session_state.pop(_LINK_SCORED, False))


def write(page_params: Sequence[Param], files: str | None, scored: bool = False) -> str:
    """Write the choices (and ``files``, the digest of the uploads in use; ``scored``, whether
    the table of these choices is shown) into the URL and return its query string. A link
    whose files are pending keeps its URL: the user has not decided yet."""
    if linked_files() is not None:
        return urlencode(
            {name: st.query_params.get_all(name) for name in st.query_params}, doseq=True
        )
    given = {
        _FILES.key: files,
        _SCORED.key: True if scored else None,
        TOKENIZER_KEY: current_tokenizer(),  # the sidebar's, or the default on a page alone
    }
    return state.write((*page_params, _FILES, _SCORED), given)


# -- the uploaded files, held by this server process (``capeval_ui.store``) -------------------
Files = tuple[tuple[tuple[str, bytes], ...], tuple[str, bytes] | None]


def files_digest(files: Files) -> str:
    """The digest prefix naming a set of uploads (names and content) in a URL."""
    uploads, own = files
    h = hashlib.sha256()
    for name, data in (*uploads, *((own,) if own else ())):
        h.update(name.encode("utf-8") + b"\0" + hashlib.sha256(data).digest())
    h.update(b"references" if own else b"coco")
    return h.hexdigest()[:PREFIX]


def remember_files(files: Files) -> str:
    """Keep ``files`` findable by their digest (the newest ``store.KEEP_SETS`` sets)."""
    return store.FILES.put(files_digest(files), files)


def find_files(short: str) -> Files | None:
    """Files :func:`remember_files` kept, or None (unknown, dropped, or another server's)."""
    return store.FILES.get(short)  # type: ignore[return-value]


def forget_all_files() -> None:
    """Empty the store, as a restart of the server does (tests open a link on a server that
    does not hold its files)."""
    store.FILES.clear()


def linked_files() -> str | None:
    """The digest of files a link named that are not in this session yet: found on this
    server, they are put in use (None returned); else the digest is returned, and the page
    says the link's files are not here."""
    short = st.session_state.get(_LINKED)
    if short is None:
        return None
    kept = st.session_state.get(FILES)
    if kept and kept[0] and files_digest(kept) == short:
        st.session_state[_LINKED] = None
        return None
    found = find_files(short)
    if found is None:
        return short
    st.session_state[FILES] = found
    st.session_state[_LINKED] = None
    return None


def forget_linked_files() -> None:
    """The demo is in use: a link's uploads are not awaited, and the URL follows the page
    again (it stayed the link's, and a reload reopened the upload and its notice)."""
    st.session_state[_LINKED] = None


def decline_linked_files() -> None:
    """The user decided (uploaded files, opened the demo): the link's files are not awaited,
    nor its table (files uploaded again wait for Score)."""
    st.session_state[_LINKED] = None
    st.session_state.pop(_LINK_SCORED, None)


# -- scoring on request ---------------------------------------------------------------------
@dataclass(frozen=True)
class Request:
    """Everything a table's numbers depend on; a table scored for another request is out of
    date."""

    systems: tuple[str, ...]  # each system's content digest, in table order
    names: tuple[str, ...]
    metrics: tuple[str, ...]
    tokenizer: str
    paired: str
    n_resamples: int
    n_trials: int
    seed: int


#: how the page names each field of a Request when it changed
_CHANGED = {
    "systems": "the files, references or on-missing choice",
    "names": "the names or the baseline",
    "metrics": "the metrics",
    "tokenizer": "the tokenizer",
    "paired": "the paired test",
    "n_resamples": "the resampling",
    "n_trials": "the resampling",
    "seed": "the resampling",
}


def changes(scored: Request, now: Request) -> list[str]:
    """What differs between the request a table was scored for and the page's choices now.

    >>> a = Request(("x",), ("A",), ("bleu_4",), "ptb", "both", 1000, 10000, 1)
    >>> changes(a, Request(("x",), ("A",), ("cider_d",), "ptb", "both", 1000, 10000, 2))
    ['the metrics', 'the resampling']
    >>> b = Request(("x", "y"), ("A", "B"), ("bleu_4",), "ptb", "both", 1000, 10000, 1)
    >>> changes(b, Request(("y", "x"), ("B", "A"), ("bleu_4",), "ptb", "both", 1000, 10000, 1))
    ['the names or the baseline']
    """
    # the same systems in another order: another baseline, not other files
    reordered = scored.systems != now.systems and sorted(scored.systems) == sorted(now.systems)
    out: list[str] = []
    for f in fields(Request):
        if f.name == "names" and scored.systems != now.systems and not reordered:
            continue  # other files bring other names
        name = "names" if f.name == "systems" and reordered else f.name
        if getattr(scored, f.name) != getattr(now, f.name) and _CHANGED[name] not in out:
            out.append(_CHANGED[name])
    return out


def interrupted(now: Request) -> str | None:
    """After a run that did not finish: ``"cancelled"`` (the Cancel button),
    ``"superseded"`` (the choices changed meanwhile) or ``"resume"`` (another click that
    changes no number, e.g. the raw-values toggle: the run starts again); None when no run
    was cut short. Forgets the run either way."""
    running = st.session_state.pop(RUNNING, None)
    cancelled = st.session_state.pop(CANCELLED, False)
    if running is None:
        return None
    if cancelled:
        return "cancelled"
    return "resume" if running == now else "superseded"


def cancel() -> None:
    """The Cancel button's callback: the run it interrupts is not resumed."""
    st.session_state[CANCELLED] = True
