"""A SPICE parse stopped part way (Ctrl-C, the app's Cancel) keeps the captions it parsed in
the parse cache, so that the next run parses only the rest."""

from __future__ import annotations

import sqlite3

import pytest

from capeval_core.spice import stanford_pcfg
from capeval_core.spice.parse import CaptionParser, parse_cache_path

CAPTIONS = [
    "a dog runs on the grass",
    "two red cars parked on a street",
    "a man riding a brown horse",
    "a cat sleeping on a sofa",
    "children play in the park",
    "a plate of food on a table",
]


def _cached() -> set[str]:
    con = sqlite3.connect(parse_cache_path())
    try:
        return {t for (t,) in con.execute("SELECT text FROM parses")}
    finally:
        con.close()


@pytest.mark.parametrize("stop", [KeyboardInterrupt, RuntimeError])
def test_a_parse_stopped_part_way_keeps_what_it_parsed(tmp_path, monkeypatch, stop):
    """Interrupted at the 4th caption, the in-process parse (a set under 1,000 captions)
    wrote none of the 3 it had parsed: the next run began again from the first."""
    monkeypatch.setenv("CAPEVAL_CACHE_DIR", str(tmp_path))
    real = stanford_pcfg.caption_tuples
    calls: list[str] = []

    def parse_until_the_fourth(parser, text):  # type: ignore[no-untyped-def]
        calls.append(text)
        if len(calls) == 4:
            raise stop
        return real(parser, text)

    monkeypatch.setattr(stanford_pcfg, "caption_tuples", parse_until_the_fourth)
    with pytest.raises(stop):
        CaptionParser(shipped=False, n_process=1).parse(CAPTIONS)
    assert _cached() == set(CAPTIONS[:3])

    calls.clear()
    monkeypatch.setattr(stanford_pcfg, "caption_tuples", lambda p, t: calls.append(t) or real(p, t))
    again = CaptionParser(shipped=False, n_process=1).parse(CAPTIONS)
    assert calls == CAPTIONS[3:]  # the first three come from the cache
    assert again == CaptionParser(cache=False, shipped=False, n_process=1).parse(CAPTIONS)
    assert _cached() == set(CAPTIONS)
