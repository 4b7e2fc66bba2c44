"""Streamlit helpers shared by the pages: ``cached`` (every st.cache_*), ``choices`` (what the
pages offer and their wording), ``state`` (session and URL) and ``views`` (drawing).

The app's shared settings live in ``st.session_state`` under the keys below, so a page run on
its own (``AppTest.from_file("app_pages/compare.py")``) falls back to the same defaults as the
router's sidebar.
"""

from __future__ import annotations

import streamlit as st
from threadpoolctl import threadpool_limits

from capeval_core import workers
from capeval_core.tokenize import TOKENIZERS as _TOKENIZER_REGISTRY

#: how far below the server the app's scoring workers run (``os.nice`` steps): the requests
#: of the people using the app (a Compare edit, a page opened) are served first while a large
#: Systems or Judgments table is scored in the background (issue 42); the command line keeps
#: its workers at its own priority
WORKER_NICENESS = 10
workers.set_niceness(WORKER_NICENESS)

#: BLAS and OpenMP threads in the app's server process. A page's matrices are small (one
#: caption's word vectors, I2CE's encoder on a few sentences) and large sets are scored in
#: worker processes, which run one thread each (``capeval_core.batch``). A second OpenBLAS
#: thread only spun after each call: a Compare edit cost the server 0.18 s of CPU with it and
#: 0.07 s without, in the same 0.07 s of wall time, and the spinning took the cores from the
#: other people's work (issue 42). The limit reaches the libraries loaded by now (numpy's
#: OpenBLAS); scipy's BLAS and POT's OpenMP load later and no edit calls them.
SERVER_THREADS = 1
threadpool_limits(SERVER_THREADS)

#: session-state key of the sidebar's tokenizer choice
TOKENIZER_KEY = "tokenizer"
#: tokenizer keys offered in the sidebar, the library's registry's; the first is the default
#: (coco-caption compatible)
TOKENIZERS: tuple[str, ...] = tuple(_TOKENIZER_REGISTRY)


def current_tokenizer() -> str:
    """The tokenizer chosen in the sidebar, or the default when a page runs on its own."""
    value = st.session_state.get(TOKENIZER_KEY, TOKENIZERS[0])
    return value if value in TOKENIZERS else TOKENIZERS[0]
