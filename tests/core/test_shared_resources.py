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


def _at_once(fn, n: int = 4) -> list:  # type: ignore[no-untyped-def]
    """``fn()`` in ``n`` threads started together; their results."""
    barrier = threading.Barrier(n)
    results: list = [None] * n

    def run(i: int) -> None:
        barrier.wait()
        results[i] = fn()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


def test_once_computes_a_value_once_for_threads_asking_together():
    import time

    from capeval_core.once import once

    calls = []

    @once
    def slow(name: str) -> object:
        calls.append(name)
        time.sleep(0.2)  # long enough for every thread to ask before it is stored
        return object()

    first, *others = _at_once(lambda: slow("table"))
    assert calls == ["table"] and all(o is first for o in others)
    slow.cache_clear()
    assert slow("table") is not first and calls == ["table", "table"]


def test_people_opening_compare_together_read_the_idf_table_once(monkeypatch):
    """Three sessions' first visits used to read the COCO val2014 table three times."""
    import time

    from capeval_core.metrics import idf
    from capeval_core.tokenize import get_tokenizer

    reads = []

    def read(tokenizer, on_progress=None):  # type: ignore[no-untyped-def]
        reads.append(tokenizer.name)
        time.sleep(0.2)
        return object()

    monkeypatch.setattr(idf, "_tables", {})
    monkeypatch.setattr(idf, "_load_or_build", read)
    tables = _at_once(lambda: idf.coco_val_document_frequency(get_tokenizer("ptb")))
    assert len(reads) == 1 and all(t is tables[0] for t in tables)


def test_the_word_vectors_and_spices_grammar_are_shared_by_threads_asking_together():
    from capeval_core.embeddings import _default_table
    from capeval_core.spice.pcfg.grammar import load_grammar
    from capeval_core.spice.stanford_pcfg import load_pipeline

    for loader in (_default_table, load_grammar, load_pipeline):
        loader.cache_clear()
        first, *others = _at_once(loader)
        assert all(o is first for o in others), loader.__name__
