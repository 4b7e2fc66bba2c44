"""Progress shown while the server works: a bar a long call moves, and the one-time
preparation of the COCO val2014 document frequencies.

Kept apart from ``capeval_ui.cached``, which only caches: a cached function creates its bar
here and removes it before it returns, so a cache hit replays nothing visible.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

import streamlit as st

from capeval_core.errors import CapevalError


def progress_bar(text: str) -> tuple[Any, Callable[[int, int, str], None]]:
    """A Streamlit progress bar and the ``on_progress(done, total, label)`` that moves it."""
    bar = st.progress(0.0, text=text)

    def progress(done: int, total: int, label: str) -> None:
        bar.progress(min(done / max(total, 1), 1.0), text=f"Scoring: {label} ({done}/{total})")

    return bar, progress


@contextlib.contextmanager
def long_work_bar(what: str) -> Iterator[None]:
    """A bar, while the block runs, for long work deep inside a metric that says how far it
    is (:func:`capeval_core.progress.report`: a paragraph caption's SPICE parse, which showed
    a still spinner for a minute); nothing is drawn unless such work reports. Removed at the
    end, so a cached call that draws it replays nothing visible."""
    from capeval_core import progress as long_work

    bar = st.empty()

    def heard(label: str) -> None:
        bar.progress(min((long_work.how_far(label) or 0) / 100, 1.0), text=f"{what}: {label}")

    try:
        with long_work.listening(heard):
            yield
    finally:
        bar.empty()


def prepare_coco_idf(tokenizer: str) -> None:
    """Have the COCO val2014 document frequencies of ``tokenizer`` in memory before scoring:
    read back from the user cache (about a second, with a spinner), or built there once with
    a progress bar. The table stays in the process (``capeval_core.metrics.idf``) for every
    session.

    A build that cannot run (no pycocoevalcap) is left to the scoring call, which reports it
    as CIDEr-D's error.
    """
    from capeval_core.metrics import idf
    from capeval_core.tokenize import get_tokenizer

    tok = get_tokenizer(tokenizer)
    where = idf.coco_val_state(tok)
    if where == "memory":
        return
    if where == "cache":
        with st.spinner("Reading the COCO val2014 document frequencies from the cache…"):
            _quietly(idf.coco_val_document_frequency, tok)
        return
    bar = st.progress(0.0, text="Building the COCO val2014 document frequencies (once)…")

    def progress(done: int, total: int, what: str) -> None:
        bar.progress(
            min(done / max(total, 1), 1.0),
            text=f"Building the COCO val2014 document frequencies once: {what}",
        )

    _quietly(idf.coco_val_document_frequency, tok, progress)
    bar.empty()


def _quietly(fn: Any, *args: Any) -> None:
    # a failure is reported by the scoring call, as CIDEr-D's error
    with contextlib.suppress(CapevalError):
        fn(*args)
