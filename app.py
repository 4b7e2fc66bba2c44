"""capeval's Streamlit app: the router. It computes nothing.

Page config, the shared sidebar (tokenizer choice, stored in ``st.session_state``) and one
navigation (``st.navigation`` over ``pages/``). Run with ``streamlit run app.py``.
"""

from __future__ import annotations

import streamlit as st

from capeval_ui import TOKENIZER_KEY, TOKENIZERS

st.set_page_config(page_title="capeval", page_icon=":material/insights:", layout="wide")

# The URL paths must differ from the file names. Streamlit still treats a `pages/` folder next
# to the main script as a legacy multipage app until `st.navigation` has run once in the
# process (and AppTest resets that before every run); a legacy page whose name matched ours
# ("home", "compare") would then be run directly, without this router and its sidebar.
PAGES = [
    st.Page("pages/home.py", title="Home", icon=":material/home:", url_path="start", default=True),
    st.Page(
        "pages/compare.py",
        title="Compare captions",
        icon=":material/compare_arrows:",
        url_path="compare-captions",
    ),
    st.Page(
        "pages/perturb.py",
        title="Perturbation lab",
        icon=":material/science:",
        url_path="perturbation-lab",
    ),
]
META_PAGES = [
    st.Page(
        "pages/judgments.py", title="Judgments", icon=":material/fact_check:", url_path="human"
    ),
    st.Page(
        "pages/correlations.py",
        title="Correlations",
        icon=":material/scatter_plot:",
        url_path="correlation",
    ),
    st.Page(
        "pages/significance.py",
        title="Significance",
        icon=":material/functions:",
        url_path="williams",
    ),
    st.Page(
        "pages/pairwise.py",
        title="Pairwise accuracy",
        icon=":material/balance:",
        url_path="pairwise-accuracy",
    ),
    st.Page(
        "pages/robustness.py",
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
