"""SPICE tuples shipped with the package (``capeval_core/spice/shipped.py``): read before the
parse cache, only for the parser identity that made them, and equal to a live parse."""

from __future__ import annotations

import random

import pytest

from capeval_core.errors import ResourceError
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
    monkeypatch.setattr(shipped, "OPEN_MIN", 1)  # the file is read for any number of texts
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
    other = tmp_path / "other.npz"
    shipped.write_parses(other, "another-parser-1/rules-1", fake, source="here")
    monkeypatch.setattr(shipped, "shipped_sets", lambda: (shipped.ShippedParses(other),))
    assert CaptionParser("stanford-pcfg", cache=False).uncached(["a dog on a red mat"]) == [
        "a dog on a red mat"
    ]


def test_lookup_opens_a_later_file_only_for_texts_still_unfound(tmp_path, monkeypatch):
    """The larger file (COCO train2014's) is not read when the first holds every text."""
    monkeypatch.setattr(shipped, "OPEN_MIN", 1)
    first, second = tmp_path / "a.npz", tmp_path / "b.npz"
    shipped.write_parses(first, "p", {"a dog on a red mat": [["dog"]]}, source="one")
    shipped.write_parses(second, "p", {"two cats": [["cat", "2"]]}, source="two")
    stores = (shipped.ShippedParses(first), shipped.ShippedParses(second))
    monkeypatch.setattr(shipped, "shipped_sets", lambda: stores)
    assert shipped.lookup("p", ["a dog on a red mat"]) == {"a dog on a red mat": (("dog",),)}
    assert stores[0].is_read and not stores[1].is_read
    assert shipped.lookup("p", ["a dog on a red mat", "two cats", "absent"]) == {
        "a dog on a red mat": (("dog",),),
        "two cats": (("cat", "2"),),
    }


def test_a_few_texts_do_not_open_a_file_not_yet_read(tmp_path, monkeypatch):
    """Fewer than OPEN_MIN unfound texts are parsed rather than paying for reading a file;
    once read (by a larger lookup), the file serves any lookup."""
    monkeypatch.setattr(shipped, "OPEN_MIN", 3)
    path = tmp_path / "p.npz"
    shipped.write_parses(path, "p", {"two cats": [["cat", "2"]]}, source="here")
    store = shipped.ShippedParses(path)
    monkeypatch.setattr(shipped, "shipped_sets", lambda: (store,))
    assert shipped.lookup("p", ["two cats", "a cat"]) == {} and not store.is_read
    assert shipped.lookup("p", ["two cats", "a cat", "a dog"]) == {"two cats": (("cat", "2"),)}
    assert store.is_read
    assert shipped.lookup("p", ["two cats"]) == {"two cats": (("cat", "2"),)}


def test_the_environment_variable_keeps_the_files_it_names(tmp_path, monkeypatch):
    """``coco-val2014`` keeps that file alone (how the SPICE bench makes train2014 captions new
    to the parser); a name no file has is one clear error, not a quiet full parse."""
    monkeypatch.setattr(shipped, "OPEN_MIN", 1)
    paths = [tmp_path / "coco-val2014.npz", tmp_path / "coco-train2014.npz"]
    for path in paths:
        shipped.write_parses(path, "p", {f"from {path.stem}": [["x"]]}, source=path.stem)
    stores = tuple(shipped.ShippedParses(p) for p in paths)
    monkeypatch.setattr(shipped, "shipped_sets", lambda: stores)
    texts = ["from coco-val2014", "from coco-train2014"]
    assert set(shipped.lookup("p", texts)) == set(texts)
    monkeypatch.setenv(shipped.SHIPPED_ENV, "coco-val2014")
    assert set(shipped.lookup("p", texts)) == {"from coco-val2014"}
    monkeypatch.setenv(shipped.SHIPPED_ENV, " coco-train2014, coco-val2014 ")
    assert set(shipped.lookup("p", texts)) == set(texts)
    monkeypatch.setenv(shipped.SHIPPED_ENV, "off")
    assert shipped.lookup("p", texts) == {}
    monkeypatch.setenv(shipped.SHIPPED_ENV, "coco-val")
    with pytest.raises(ResourceError, match=r"names coco-val: .*shipped: coco-val2014, coco-t"):
        shipped.lookup("p", texts)


#: distinct texts SPICE gets from each COCO 2014 split (PTB tokens joined by spaces), counted
#: by ``tools.spice_coco_parses.coco_texts`` on the captions pycocoevalcap 1.2's SPICE jar holds
COCO_TEXTS = {"val": 197_313, "train": 398_460}


@pytest.fixture(scope="module", params=sorted(COCO_TEXTS))
def coco_split(request):
    from tools.spice_coco_parses import coco_texts

    split = request.param
    stores = [s for s in shipped.shipped_sets() if s.header["source"] == f"COCO {split}2014"]
    assert len(stores) == 1, f"the package ships COCO {split}2014's parses"
    return split, stores[0], coco_texts(split)


def test_the_shipped_coco_parses_are_the_default_parsers(coco_split):
    """Made by today's parser identity (a change of the parse or the rules without a rebuild
    of the file fails here), and holding every distinct caption of the split as SPICE gets it."""
    split, store, texts = coco_split
    assert store.identity == model_identity("stanford-pcfg")
    assert len(store) == len(texts) == COCO_TEXTS[split]
    assert len(store.lookup(texts)) == len(texts)


def test_shipped_coco_parses_equal_a_live_parse(coco_split):
    """200 captions of the split drawn at random (fixed seed), parsed live without the file."""
    _, store, texts = coco_split
    sample = random.Random(2014).sample(texts, 200)
    live = CaptionParser("stanford-pcfg", cache=False, shipped=False, n_process=1).parse(sample)
    assert store.lookup(sample) == live
