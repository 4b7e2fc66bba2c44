"""What every AppTest of the app shares."""

from __future__ import annotations

import re
from pathlib import Path

#: the repository, where app.py and its pages are
ROOT = Path(__file__).resolve().parents[2]

#: seconds an AppTest run may take before it is called hung: a bound on a stuck script, not a
#: speed check (the first run of a page loads models and data, and CI's two cores may be busy)
TIMEOUT = 180


def open_tab(at, label: str):  # type: ignore[no-untyped-def]
    """Open Compare's tab ``label`` (the page draws only the open tab) and return it."""
    at.session_state["compare_tab"] = label
    at.run()
    assert not at.exception, at.exception
    found = [t for t in at.tabs if t.label == label]
    assert len(found) == 1, [t.label for t in at.tabs]
    return found[0]


def as_shown(markdown: str) -> str:
    """An element's Markdown as the page shows it: the escapes of file names and cell text
    (``\\_``, ``\\*``) and the word joiners that keep a bare address text removed."""
    return re.sub(r"\\(.)", r"\1", markdown).replace("\u2060", "")  # formats.WORD_JOINER
