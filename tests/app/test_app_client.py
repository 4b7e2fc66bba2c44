"""The load bench's Compare people (``bench/app_client.py``) speak Streamlit's protocol
without a browser: an edit they send must be the page's edit, scored and drawn as a
browser's is, or the bench would time something else."""

from __future__ import annotations

import asyncio
from pathlib import Path
from urllib.parse import parse_qs

from bench.app_client import PageSession
from bench.app_load import CANDIDATE, _server_ms

CAPTION = "a brown horse runs along a sandy beach at dusk"


def test_an_edit_sent_by_the_protocol_client_is_scored_and_drawn(
    shared_server: tuple[str, Path],
) -> None:
    url, _ = shared_server

    async def visit() -> tuple:
        async with PageSession(url, "compare-captions") as person:
            first = await person.run()
            written = person.query_string
            edited = await person.run(**{CANDIDATE: CAPTION})
            return first, written, edited, person.query_string

    first, written, edited, rewritten = asyncio.run(visit())
    assert first.errors == [] and edited.errors == []
    assert CANDIDATE in first.widgets  # the page's text area, found by its label
    assert f"A: {CAPTION}" in edited.texts and f"A: {CAPTION}" not in first.texts
    assert _server_ms(edited.text()) >= 0  # the page's own report of the server's time
    # the client sends back the URL the app wrote, as a browser does: the edit is in it
    assert parse_qs(rewritten)["candidate"] == [CAPTION]
    assert parse_qs(written)["candidate"] != [CAPTION]
