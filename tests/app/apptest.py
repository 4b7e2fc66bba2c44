"""What every AppTest of the app shares."""

from __future__ import annotations

from pathlib import Path

#: the repository, where app.py and its pages are
ROOT = Path(__file__).resolve().parents[2]

#: seconds an AppTest run may take before it is called hung: a bound on a stuck script, not a
#: speed check (the first run of a page loads models and data, and CI's two cores may be busy)
TIMEOUT = 180
