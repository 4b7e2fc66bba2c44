"""Every resource the package ships is named in the README's licence table with its origin
and licence (a merge once dropped three rows without anyone noticing)."""

from __future__ import annotations

import fnmatch
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _licence_rows() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("\n## Licence\n", 1)[1]
    return [line for line in section.splitlines() if line.startswith("| ")]


def test_every_shipped_data_file_has_a_licence_row():
    rows = _licence_rows()
    named = [
        m.removeprefix("capeval_core/data/")
        for row in rows
        for m in re.findall(r"`([^`]+)`", row.split(" | ")[0])  # a row may list several
    ]
    shipped = sorted(p.name for p in (ROOT / "capeval_core" / "data").iterdir())
    unnamed = [
        name
        for name in shipped
        if not any(fnmatch.fnmatch(name, n.rstrip("/")) for n in named)
        and not name.startswith((".", "__"))
    ]
    assert not unnamed, f"shipped without a licence row: {unnamed}"


def test_every_row_names_an_origin_and_a_licence():
    for row in _licence_rows()[2:]:  # the header and its rule first
        cells = [c.strip() for c in row.strip("|").split(" | ")]
        assert len(cells) == 3 and all(cells), row
