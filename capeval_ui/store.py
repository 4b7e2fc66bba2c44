"""What this server process holds for every session: the judgment sets loaded here and the
Systems page's uploaded files.

A URL cannot carry an uploaded file, so a page names the set it works on by a prefix of its
content digest (``?set=…``, ``?distractors=…``); a reload, another tab or a copied link opened
while this server runs finds the set here again. A restart empties the store: a link naming a
set that is not here is then said to be so by the page (``capeval_ui.state.linked_set``).

A plain module-level mapping (a module is imported once per process), guarded by a lock since
every session's script runs in a thread of its own; it caches nothing, so it is not in
``capeval_ui.cached``.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence

#: how many loaded sets a link can find again (uploads are kept in memory this long anyway:
#: ``cached.load_upload`` keeps its last 8 results)
KEEP_SETS = 8
#: the digest prefix a URL carries: 64 bits, unique among the sets one server holds
PREFIX = 16


#: how many dropped prefixes a shelf remembers, to say why a link's data is gone (16 bytes
#: each: a day of a class loading sets)
REMEMBER_DROPPED = 4096


class Shelf:
    """The newest ``keep`` objects put here, by the digest prefix a URL names them with; the
    oldest beyond ``keep`` is dropped, and its prefix remembered (:meth:`was_dropped`).
    Locked: every session's script runs in its own thread."""

    def __init__(self, keep: int) -> None:
        self.keep = keep
        self._lock = threading.Lock()
        self._held: OrderedDict[str, object] = OrderedDict()
        self._dropped: OrderedDict[str, None] = OrderedDict()

    def put(self, short: str, obj: object) -> str:
        """Keep ``obj`` under ``short`` (as the newest); returns ``short``."""
        with self._lock:
            self._held.pop(short, None)
            self._dropped.pop(short, None)
            self._held[short] = obj
            while len(self._held) > self.keep:
                gone, _ = self._held.popitem(last=False)
                self._dropped[gone] = None
            while len(self._dropped) > REMEMBER_DROPPED:
                self._dropped.popitem(last=False)
        return short

    def was_dropped(self, short: str) -> bool:
        """Whether ``short`` was held here and dropped for newer ones (a link to it then
        finds nothing on a server that never restarted: the page says why).

        >>> shelf = Shelf(1)
        >>> _ = shelf.put("a", 1), shelf.put("b", 2)
        >>> shelf.was_dropped("a"), shelf.was_dropped("b"), shelf.was_dropped("c")
        (True, False, False)
        """
        with self._lock:
            return short in self._dropped

    def get(self, short: str) -> object | None:
        """What :meth:`put` kept under ``short``, or None (unknown prefix, dropped since, or
        held by another server process)."""
        with self._lock:
            return self._held.get(short)

    def clear(self) -> None:
        with self._lock:
            self._held.clear()
            self._dropped.clear()


#: the judgment sets (Judgments, the meta-evaluation pages, Robustness' distractors)
SETS = Shelf(KEEP_SETS)
#: the Systems page's uploaded results and references files (``capeval_ui.systems_state``)
FILES = Shelf(KEEP_SETS)
#: the column mapping an uploaded set was read with (the Judgments page's ``map=`` items),
#: by the set's prefix: the page's URL names it while the set is shown, whatever file the
#: boxes now map (a file that then failed to load took the link's mapping away)
MAPPINGS = Shelf(KEEP_SETS)


def short_digest(jset: object) -> str:
    """The prefix of ``jset``'s content digest that names it in a URL."""
    return str(jset.content_digest)[:PREFIX]  # type: ignore[attr-defined]


def remember_set(jset: object, mapping: Sequence[str] | None = None) -> str:
    """Keep ``jset`` findable by its digest prefix, with the column ``mapping`` it was read
    with when given (else the one kept for it before stays); returns the prefix.

    >>> class Set:
    ...     content_digest = "ab" * 32
    >>> short = remember_set(Set(), ["caption:candidate"])
    >>> remember_set(Set()) == short, mapping_of(Set())
    (True, ('caption:candidate',))
    >>> forget_all()
    """
    short = SETS.put(short_digest(jset), jset)
    kept = MAPPINGS.get(short) if mapping is None else tuple(mapping)
    if kept is not None:
        MAPPINGS.put(short, kept)  # as new as its set: dropped with it, not before
    return short


def mapping_of(jset: object) -> tuple[str, ...] | None:
    """The column mapping :func:`remember_set` kept for ``jset``, or None."""
    found = MAPPINGS.get(short_digest(jset))
    return None if found is None else tuple(found)  # type: ignore[arg-type]


def find_set(short: str) -> object | None:
    """A set :func:`remember_set` kept, or None."""
    return SETS.get(short)


def dropped_words(shelf: Shelf, short: str, what: str) -> str:
    """Why a link's data is not on this server, for its page: dropped for newer ones (the
    server keeps the last few, whoever loaded them), else a restart or another server."""
    if shelf.was_dropped(short):
        return (
            f"it was loaded on this server, which keeps the {shelf.keep} {what} loaded last "
            "by anyone using it, and more have been loaded since"
        )
    return "it was loaded on another server, or before this one restarted"


def forget_all() -> None:
    """Empty the store, as a restart of the server does (tests use it to open a link on a
    server that does not hold its data)."""
    SETS.clear()
    FILES.clear()
    MAPPINGS.clear()
