"""The example picker of Compare captions and the Perturbation lab: a built-in example, a
random COCO val2014 image or the user's own captions, filling the page's text areas.

A link holds the captions and, for a COCO image, its draw: a reload names the example the
captions are (``capeval_ui.state.name_own_inputs``), not "Your own captions".
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import streamlit as st

from capeval_core import CapevalError, examples
from capeval_ui import choices, state


@dataclass(frozen=True)
class Picker:
    """A page's picker: its session key and the text areas it fills (``cleared`` are
    emptied by an example, e.g. Compare's candidate B). ``draw`` is the session key of the
    COCO image drawn (the page's URL names it), ``button`` the key of "Draw another
    image"."""

    key: str
    candidate: str
    references: str
    draw: str
    button: str
    cleared: tuple[str, ...] = ()

    @property
    def source(self) -> str:
        """Session key of the line saying where the example comes from."""
        return f"{self.key}_source"

    @property
    def error(self) -> str:
        """Session key of the message of an example that could not be loaded."""
        return f"{self.key}_error"

    @property
    def shown(self) -> str:
        """Session key of the example the text areas were last filled from."""
        return f"_{self.key}_shown"

    def inputs(self, example: examples.Example) -> dict[str, str]:
        """The text areas as ``example`` fills them."""
        return {
            self.candidate: example.candidate,
            **dict.fromkeys(self.cleared, ""),
            self.references: "\n".join(example.references),
        }


def apply(picker: Picker) -> None:
    """Fill the text areas from the picked example (a fresh draw for the random COCO one).

    A widget callback, run before a page's try block: a CapevalError (COCO captions not
    installed) is kept for the picker to show, and the captions on the page stay."""
    name = st.session_state.get(picker.key, examples.DEFAULT_EXAMPLE)
    if name == choices.YOUR_OWN:  # the captions on the page stay as they are
        return
    draw = st.session_state.get(picker.draw, 0)
    if name == choices.COCO_RANDOM:
        draw = random.randrange(examples.COCO_POOL)
    try:
        example = choices.load_example(name, draw)
    except CapevalError as exc:
        st.session_state[picker.error] = str(exc)
        # the picker names what the text areas hold, not the example that failed
        st.session_state[picker.key] = st.session_state.get(picker.shown, choices.YOUR_OWN)
        return
    if name == choices.COCO_RANDOM:  # the URL names a draw once its captions are here
        st.session_state[picker.draw] = draw
    st.session_state.pop(picker.error, None)
    st.session_state.update(picker.inputs(example))
    st.session_state[picker.source] = example.source
    st.session_state[picker.shown] = name
    state.remember_example(picker.key, picker.inputs(example))


def render(picker: Picker) -> str:
    """The picker, "Draw another image" beside a COCO draw, the example's source or a note
    that the captions are the user's own; returns the example's name. Captions that are no
    longer the picked example's put it on "Your own captions" first."""
    known = choices.known_examples(st.session_state.get(picker.draw))
    fields = (picker.candidate, *picker.cleared, picker.references)
    inputs = {name: picker.inputs(example) for name, example in known.items()}
    if named := state.name_own_inputs(picker.key, fields, choices.YOUR_OWN, inputs):
        st.session_state[picker.source] = known[named].source
    pick, again = st.columns([4, 1], vertical_alignment="bottom")
    name = pick.selectbox(
        "Example",
        choices.example_names(),
        key=picker.key,
        on_change=apply,
        args=(picker,),
        help=f"“Table 2 style” examples follow {examples.TABLE2_SOURCE}",
    )
    if name == choices.COCO_RANDOM:
        again.button("Draw another image", key=picker.button, on_click=apply, args=(picker,))
    if picker.error in st.session_state:
        st.error(
            "Could not load the example: " + choices.page_message(st.session_state[picker.error])
        )
    if name == choices.YOUR_OWN:
        st.caption("Your own captions: pick an example above to replace them.")
    elif picker.source in st.session_state:
        st.caption(f"This example: {st.session_state[picker.source]}")
    return name
