"""Home: what capeval is, which resources it finds, which metrics it has."""

from __future__ import annotations

import streamlit as st

from capeval_ui import cached, state, views

# Home scores nothing, but the sidebar's tokenizer is chosen here too: its URL holds it
# (the router restores it), so a reload keeps the choice the other pages then score with,
# and the judgment set the session holds, for the pages that use it (state.restore).
# An address naming anything else is named as not Home's settings, and left as it is.
if set(st.query_params) <= {state.TOKENIZER.name, state.SET.name}:
    state.say_rejected(state.restore((state.TOKENIZER,)))
    state.write((state.TOKENIZER,))
else:
    state.say_not_settings((state.TOKENIZER,))

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
