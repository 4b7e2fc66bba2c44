"""What the app loads once per process, whichever thread asks (issue 42): the app runs each
script run in a thread of its own, so anything kept per thread is loaded again for every
Compare edit, holding the interpreter lock while the other people's pages wait."""

from __future__ import annotations

import threading

from capeval_core.spice.parse import DEFAULT_PARSER, CaptionParser


def _in_a_new_thread(fn):  # type: ignore[no-untyped-def]
    box = []
    thread = threading.Thread(target=lambda: box.append(fn()))
    thread.start()
    thread.join()
    return box[0]


def _parser() -> CaptionParser:
    return CaptionParser(DEFAULT_PARSER, cache=False, shipped=False)


def test_spices_parser_is_loaded_once_for_every_thread():
    assert _in_a_new_thread(lambda: _parser().model) is _parser().model
    # and it parses the same in both
    text = "a man rides a big wave on a surfboard"
    ours = _parser().tuples_of([text])
    assert _in_a_new_thread(lambda: _parser().tuples_of([text])) == ours and ours[0]
