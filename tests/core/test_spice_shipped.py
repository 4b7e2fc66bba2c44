"""SPICE tuples shipped with the package (``capeval_core/spice/shipped.py``): read before the
parse cache, only for the parser identity that made them, and equal to a live parse."""

from __future__ import annotations

import random

import pytest

from capeval_core.spice import shipped
from capeval_core.spice.parse import CaptionParser, model_identity

PARSES = {
    "a dog on a red mat": [["dog", "on", "mat"], ["mat", "red"], ["dog"], ["mat"]],
    "two cats": [["cat", "2"], ["cat"]],
    "nothing to see": [],
    "un café crème": [["café"], ["crème", "café"]],
}


def _store(tmp_path, identity: str) -> shipped.ShippedParses:
    path = tmp_path / "parses.npz"
    shipped.write_parses(path, identity, PARSES, source="written here")
    return shipped.ShippedParses(path)


def test_written_parses_read_back_as_tuples(tmp_path):
    store = _store(tmp_path, "some-parser")
    assert store.identity == "some-parser" and len(store) == 4
    got = store.lookup([*PARSES, "a caption it does not hold"])
    assert got == {t: tuple(tuple(x) for x in v) for t, v in PARSES.items()}


def test_a_caption_with_a_line_break_cannot_be_written(tmp_path):
    with pytest.raises(ValueError, match="line break"):
        shipped.write_parses(tmp_path / "p.npz", "x", {"a\nb": []}, source="here")


def test_the_parser_reads_them_first_only_for_its_identity(tmp_path, monkeypatch):
    monkeypatch.setenv("CAPEVAL_CACHE_DIR", str(tmp_path / "cache"))
    identity = model_identity("stanford-pcfg")
    fake = {"a dog on a red mat": [["made", "up"]]}  # differs from a live parse on purpose
    path = tmp_path / "mine.npz"
    shipped.write_parses(path, identity, fake, source="here")
    monkeypatch.setattr(shipped, "shipped_sets", lambda: (shipped.ShippedParses(path),))
    parser = CaptionParser("stanford-pcfg", n_process=1)
    assert parser.uncached(["a dog on a red mat", "a cat"]) == ["a cat"]
    assert parser.parse(["a dog on a red mat"])["a dog on a red mat"] == (("made", "up"),)
    # another parser's identity, or the shipped parses turned off: parsed for real
    live = CaptionParser("stanford-pcfg", n_process=1, shipped=False, cache=False)
    real = live.parse(["a dog on a red mat"])["a dog on a red mat"]
    assert real != (("made", "up"),)
    monkeypatch.setenv(shipped.SHIPPED_ENV, "0")
    assert CaptionParser("stanford-pcfg", cache=False).parse(["a dog on a red mat"]) == {
        "a dog on a red mat": real
    }
    monkeypatch.delenv(shipped.SHIPPED_ENV)
    assert CaptionParser("stanford-emulation", cache=False).uncached(["a dog on a red mat"]) == [
        "a dog on a red mat"
    ]


@pytest.fixture(scope="module")
def coco_val():
    stores = [s for s in shipped.shipped_sets() if s.header["source"] == "COCO val2014"]
    assert len(stores) == 1, "the package ships COCO val2014's parses"
    return stores[0]


def test_the_shipped_coco_val2014_parses_are_the_default_parsers(coco_val):
    """Made by today's parser identity (a change of the parse or the rules without a rebuild
    of the file fails here), and holding every distinct val2014 caption as SPICE gets it."""
    from tools.spice_coco_parses import coco_texts

    assert coco_val.identity == model_identity("stanford-pcfg")
    texts = coco_texts("val")
    assert len(coco_val) == len(texts) == 197_313
    assert len(coco_val.lookup(texts)) == len(texts)


def test_shipped_coco_parses_equal_a_live_parse(coco_val):
    """200 val2014 captions drawn at random (fixed seed), parsed live without the shipped file."""
    from tools.spice_coco_parses import coco_texts

    sample = random.Random(2014).sample(coco_texts("val"), 200)
    live = CaptionParser("stanford-pcfg", cache=False, shipped=False, n_process=1).parse(sample)
    assert coco_val.lookup(sample) == live
