"""capeval's Streamlit app: the router. It computes nothing.

Page config, the shared sidebar (tokenizer choice, stored in ``st.session_state``) and one
navigation (``st.navigation`` over ``app_pages/``). Run with ``streamlit run app.py``.
"""

from __future__ import annotations

import streamlit as st

from capeval_ui import TOKENIZER_KEY, TOKENIZERS

st.set_page_config(page_title="capeval", page_icon=":material/insights:", layout="wide")

# The pages live in app_pages/, not pages/: a folder named `pages` beside the main script makes
# Streamlit take its legacy multipage path on a process's first run (a false "Page not found").
PAGES = [
    st.Page(
        "app_pages/home.py", title="Home", icon=":material/home:", url_path="start", default=True
    ),
    st.Page(
        "app_pages/compare.py",
        title="Compare captions",
        icon=":material/compare_arrows:",
        url_path="compare-captions",
    ),
    st.Page(
        "app_pages/systems.py",
        title="Systems",
        icon=":material/leaderboard:",
        url_path="systems",
    ),
    st.Page(
        "app_pages/perturb.py",
        title="Perturbation lab",
        icon=":material/science:",
        url_path="perturbation-lab",
    ),
]
META_PAGES = [
    st.Page(
        "app_pages/judgments.py", title="Judgments", icon=":material/fact_check:", url_path="human"
    ),
    st.Page(
        "app_pages/correlations.py",
        title="Correlations",
        icon=":material/scatter_plot:",
        url_path="correlation",
    ),
    st.Page(
        "app_pages/significance.py",
        title="Significance",
        icon=":material/functions:",
        url_path="williams",
    ),
    st.Page(
        "app_pages/pairwise.py",
        title="Pairwise accuracy",
        icon=":material/balance:",
        url_path="pairwise-accuracy",
    ),
    st.Page(
        "app_pages/robustness.py",
        title="Robustness",
        icon=":material/shield:",
        url_path="distractors",
    ),
]
page = st.navigation({"Captions": PAGES, "Meta-evaluation": META_PAGES})

with st.sidebar:
    st.radio(
        "Tokenizer",
        TOKENIZERS,
        key=TOKENIZER_KEY,
        format_func={
            "ptb": "PTB (coco-caption)",
            "whitespace": "whitespace (pre-tokenized text)",
        }.get,
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
