"""capeval's Streamlit app: the router. It computes nothing.

Page config, the shared sidebar (tokenizer choice, stored in ``st.session_state`` and named in
every page's URL), the session state kept across pages (``capeval_ui.state``) and one navigation
(``st.navigation`` over ``app_pages/``). Run with ``streamlit run app.py``.
"""

from __future__ import annotations

import streamlit as st

from capeval_ui import TOKENIZER_KEY, TOKENIZERS, state

# An emoji favicon is drawn by the browser itself; a ":material/...:" page icon would be
# fetched from a font server on every page load (the app stays offline).
st.set_page_config(page_title="capeval", page_icon="📏", layout="wide")

#: (file, title, icon): the URL path of every page is its title, slugged (/compare-captions,
#: /judgments), so a deep link reads as the page it opens; Home is the root.
CAPTION_PAGES = (
    ("app_pages/home.py", "Home", ":material/home:"),
    ("app_pages/compare.py", "Compare captions", ":material/compare_arrows:"),
    ("app_pages/systems.py", "Systems", ":material/leaderboard:"),
    ("app_pages/perturb.py", "Perturbation lab", ":material/science:"),
)
META_PAGES = (
    ("app_pages/judgments.py", "Judgments", ":material/fact_check:"),
    ("app_pages/correlations.py", "Correlations", ":material/scatter_plot:"),
    ("app_pages/significance.py", "Significance", ":material/functions:"),
    ("app_pages/pairwise.py", "Pairwise accuracy", ":material/balance:"),
    ("app_pages/robustness.py", "Robustness", ":material/shield:"),
)


def _page(path: str, title: str, icon: str) -> st.Page:
    if path == CAPTION_PAGES[0][0]:
        return st.Page(path, title=title, icon=icon, default=True)
    return st.Page(path, title=title, icon=icon, url_path=state.url_path(title))


# Widgets of other pages lose their values when a page without them runs; the router runs on
# every page, so it keeps them here (inputs survive navigation within a session).
state.keep_inputs()
#: the sidebar's words for the library's tokenizers (another is shown by its key)
TOKENIZER_LABELS = {"ptb": "PTB (coco-caption)", "whitespace": "whitespace (pre-tokenized text)"}

# a link names its tokenizer (?tokenizer=...): set before the sidebar draws it; each page
# restores the rest of its state from the URL itself (capeval_ui.state)
state.tokenizer_from_url(TOKENIZER_KEY, TOKENIZERS)
page = st.navigation(
    {
        "Captions": [_page(*p) for p in CAPTION_PAGES],
        "Meta-evaluation": [_page(*p) for p in META_PAGES],
    }
)

with st.sidebar:
    st.radio(
        "Tokenizer",
        TOKENIZERS,
        key=TOKENIZER_KEY,
        format_func=lambda key: TOKENIZER_LABELS.get(key, key),
        help=(
            "PTB emulates the Java tokenizer coco-caption runs, so scores match pycocoevalcap. "
            "Whitespace only splits on spaces, for text that is already tokenized."
        ),
    )
    st.caption(
        "**capeval** scores image captions offline, with the same numbers as pycocoevalcap, "
        "and shows the evidence behind every number."
    )

page.run()
