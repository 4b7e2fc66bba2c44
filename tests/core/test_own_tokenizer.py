"""A tokenizer of your own is known by its name alone: it may not take the name of one of
capeval's (a subclass of PTBTokenizer inherited it), and its numbers are never read from or
written to a disk cache, where an edit of its code read the numbers of the code before."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from capeval_core import OptionError, score
from capeval_core.judgments import GradedItem, JudgmentSet
from capeval_core.judgments.scoring import score_judgments
from capeval_core.metrics import idf
from capeval_core.systems import SystemsInput, compare_systems, score_systems
from capeval_core.tokenize import PTBTokenizer

CANDIDATES = ["a man rides a red bike", "the dog sleeps on a sofa", "two cats on a bed"]
REFERENCES = [
    ["a man riding a bicycle", "a person on a red bike"],
    ["a dog asleep on the couch", "a brown dog on a sofa"],
    ["cats lying on a bed", "two cats sleeping"],
]


def _dropping(*dropped: str) -> type:
    """A tokenizer named "mine" that leaves out the words ``dropped``: the same name for
    other code, as after an edit."""

    class Mine:
        name = "mine"

        def tokenize_batch(self, texts):
            return [tuple(w for w in t.lower().split() if w not in dropped) for t in texts]

        def tokenize(self, text):
            return self.tokenize_batch([text])[0]

    return Mine


@pytest.fixture(autouse=True)
def _caches(tmp_path, monkeypatch):
    monkeypatch.setenv("CAPEVAL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("CAPEVAL_SCORES_CACHE_DIR", str(tmp_path / "scores"))


def test_a_subclass_of_ptb_keeping_its_name_is_refused():
    """A PTBTokenizer subclass dropping articles signed its numbers as the ptb tokenizer's
    and built the COCO val2014 IDF table every later ptb run read (CIDEr-D 1.5338 became
    2.3738 for every process after it)."""

    class NoArticles(PTBTokenizer):
        def tokenize_batch(self, texts):
            return [
                tuple(w for w in t if w not in ("a", "the")) for t in super().tokenize_batch(texts)
            ]

    with pytest.raises(OptionError, match=r"NoArticles\) needs a name of its own: 'ptb-corenlp"):
        score("cider_d", CANDIDATES, REFERENCES, tokenizer=NoArticles())

    class Named(NoArticles):
        name = "ptb-without-articles"

    got = score("bleu_1", CANDIDATES, REFERENCES, tokenizer=Named())
    assert "tok:ptb-without-articles|" in str(got.signature)


def test_an_edited_tokenizer_of_your_own_is_never_read_from_the_score_caches(tmp_path):
    items = tuple(
        GradedItem(str(i), str(i), c, tuple(r), (float(i),))
        for i, (c, r) in enumerate(zip(CANDIDATES, REFERENCES, strict=True))
    )
    jset = JudgmentSet("graded", items, ("score",), ("g.csv",), n_read=3, n_kept=3)
    data = SystemsInput(("s",), (1, 2, 3), (tuple(CANDIDATES),),
                        tuple(tuple(r) for r in REFERENCES), ("s.json",), "refs.json")  # fmt: skip
    before, after = _dropping(), _dropping("a", "the")
    for edit in (before, after):
        judged = score_judgments(jset, ["rouge_l"], tokenizer=edit())
        systems = score_systems(data, ["rouge_l"], tokenizer=edit())
        compare_systems(systems, n_resamples=20, seed=1)
        expected = score("rouge_l", CANDIDATES, REFERENCES, tokenizer=edit())
        assert judged.values["rouge_l"].tolist() == expected.segment_values()
        assert systems.items["s"]["rouge_l"].tolist() == expected.segment_values()
        assert not judged.from_cache["rouge_l"] and not systems.from_cache["rouge_l"]
    assert not (tmp_path / "scores").exists() or not any((tmp_path / "scores").iterdir())


def test_coco_val_idf_of_a_tokenizer_of_your_own_is_counted_in_memory_only(tmp_path, monkeypatch):
    """The table was written to disk and kept in memory under the tokenizer's name: a
    tokenizer of your own edited (or another with its name) read the first one's table."""
    captions = [
        SimpleNamespace(image_id=i, caption=c)
        for i, refs in enumerate(REFERENCES * 3)
        for c in refs
    ]
    monkeypatch.setattr(idf.resources, "coco_captions", lambda split: captions)
    monkeypatch.setattr(idf, "_tables", {})
    before, after = _dropping(), _dropping("a", "the")
    values = [
        score("cider_d", CANDIDATES, REFERENCES, tokenizer=edit(), idf="coco-val2014").value
        for edit in (before, after)
    ]
    assert values[0] != values[1]
    for edit in (before, after):  # as counted apart, once more
        monkeypatch.setattr(idf, "_tables", {})
        alone = score("cider_d", CANDIDATES, REFERENCES, tokenizer=edit(), idf="coco-val2014")
        assert alone.value == values[[before, after].index(edit)]
    assert not (tmp_path / "cache").exists() or not list((tmp_path / "cache").glob("*.df"))


@pytest.mark.parametrize("name", ["bpe|v2", "", 7])
def test_a_tokenizer_name_a_signature_cannot_hold_is_refused(name):
    """A name with '|' made a signature that does not parse back, and scoring with the cache
    on stopped with a ValueError about the signature."""
    mine = _dropping()()
    mine.name = name
    with pytest.raises(OptionError, match=r"a tokenizer's name must be a text without '\|'"):
        score("bleu_4", CANDIDATES, REFERENCES, tokenizer=mine)
