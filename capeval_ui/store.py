"""What this server process holds for every session: the judgment sets loaded here.

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

#: how many loaded sets a link can find again (uploads are kept in memory this long anyway:
#: ``cached.load_upload`` keeps its last 8 results)
KEEP_SETS = 8
#: the digest prefix a URL carries: 64 bits, unique among the sets one server holds
PREFIX = 16

_lock = threading.Lock()
_sets: OrderedDict[str, object] = OrderedDict()


def short_digest(jset: object) -> str:
    """The prefix of ``jset``'s content digest that names it in a URL."""
    return str(jset.content_digest)[:PREFIX]  # type: ignore[attr-defined]


def remember_set(jset: object) -> str:
    """Keep ``jset`` findable by its digest prefix (newest last; the oldest beyond
    :data:`KEEP_SETS` is dropped); returns the prefix."""
    short = short_digest(jset)
    with _lock:
        _sets.pop(short, None)
        _sets[short] = jset
        while len(_sets) > KEEP_SETS:
            _sets.popitem(last=False)
    return short


def find_set(short: str) -> object | None:
    """A set :func:`remember_set` kept, or None (unknown prefix, dropped since, or held by
    another server process)."""
    with _lock:
        return _sets.get(short)


def forget_all() -> None:
    """Empty the store, as a restart of the server does (tests use it to open a link on a
    server that does not hold its set)."""
    with _lock:
        _sets.clear()
