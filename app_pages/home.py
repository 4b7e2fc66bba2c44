"""Home: what capeval is, which resources it finds, which metrics it has."""

from __future__ import annotations

import streamlit as st

from capeval_ui import cached, views

st.title("capeval")
st.markdown(
    "Image-captioning metrics that give **the same numbers as pycocoevalcap**, in Python and "
    "offline, and **show why**: every score comes with its evidence (clipped n-gram counts, "
    "the longest common subsequence, tf-idf weights) and a signature that reproduces it."
)
views.page_link("app_pages/compare.py", label="Compare captions", icon=":material/compare_arrows:")

st.subheader("Resources")
views.render_inventory(cached.inventory())

st.subheader("Metrics")
views.render_registry()
