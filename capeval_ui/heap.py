"""The server's long-lived objects kept out of Python's full garbage collections (issue 42).

A loaded resource (word vectors, METEOR's tables, the parser's grammar, the pages' modules)
is some 400,000 objects the process keeps until it ends. Streamlit's collection after every
run is off (``.streamlit/config.toml``), and Python's own full collection, which still runs
every few dozen edits, walked all of them: about 0.3 s holding the interpreter lock, so every
person's page stood still. After a page run that loaded something that large, the router
collects once and freezes what is alive (``gc.freeze``): later full collections walk only
what was made since. Frozen objects are still freed when nothing refers to them; only a
reference cycle among them would stay, and a freeze happens on the few runs that load.
"""

from __future__ import annotations

import gc
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

#: memory blocks a page run must add for the router to freeze the heap after it: Compare's
#: first run adds about 1.5 million (its resources); a run that loads nothing adds a few
#: thousand, and its garbage is collected as usual
LOADED_BLOCKS = 500_000

_lock = threading.Lock()
_blocks_at_freeze = 0


@contextmanager
def freeze_after_loading() -> Iterator[None]:
    """Around a page run: if the heap grew by :data:`LOADED_BLOCKS` during it (and since the
    last freeze: several people's first runs load the same resources at once), collect once
    and freeze what is alive."""
    global _blocks_at_freeze
    before = sys.getallocatedblocks()
    try:
        yield
    finally:
        now = sys.getallocatedblocks()
        if now - before >= LOADED_BLOCKS and now - _blocks_at_freeze >= LOADED_BLOCKS:
            with _lock:
                if sys.getallocatedblocks() - _blocks_at_freeze >= LOADED_BLOCKS:
                    gc.collect()
                    gc.freeze()
                    _blocks_at_freeze = sys.getallocatedblocks()
