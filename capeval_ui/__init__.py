"""Streamlit helpers shared by the pages: ``cached`` (every st.cache_*), ``choices`` (what the
pages offer and their wording), ``state`` (session and URL) and ``views`` (drawing).

The app's shared settings live in ``st.session_state`` under the keys below, so a page run on
its own (``AppTest.from_file("app_pages/compare.py")``) falls back to the same defaults as the
router's sidebar.
"""

from __future__ import annotations

import streamlit as st

#: session-state key of the sidebar's tokenizer choice
TOKENIZER_KEY = "tokenizer"
#: tokenizer keys offered in the sidebar; the first is the default (coco-caption compatible)
TOKENIZERS: tuple[str, ...] = ("ptb", "whitespace")


def current_tokenizer() -> str:
    """The tokenizer chosen in the sidebar, or the default when a page runs on its own."""
    value = st.session_state.get(TOKENIZER_KEY, TOKENIZERS[0])
    return value if value in TOKENIZERS else TOKENIZERS[0]
