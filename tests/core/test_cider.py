"""CIDEr-D details and the COCO val2014 IDF source."""

from __future__ import annotations

import math

import pytest

from capeval_core import score
from capeval_core.metrics.cider import CiderD
from capeval_core.tokenize import get_tokenizer

CANDS = ["a dog runs on the grass", "a cat sleeps on a sofa", "a red bus on a street"]
REFS = [["a dog running on grass"], ["a cat sleeping on a couch"], ["a bus on the road"]]


def test_details_add_up_to_the_score():
    result = CiderD(tokenizer="whitespace").score(CANDS, REFS)
    d = result.segments[0].details
    assert len(d.per_order) == 4
    assert sum(d.per_order) / 4 == pytest.approx(result.segments[0].value)
    assert d.length_penalty(0) == pytest.approx(math.exp(-((5 - 4) ** 2) / 72))
    # an n-gram found in every image's references carries no weight
    assert d.vector.weights[0][("a",)] == 0.0
    assert d.vector.weights[0][("dog",)] == pytest.approx(math.log(3))
    assert result.details.idf_source == "corpus" and result.details.documents == 3


@pytest.mark.slow
def test_coco_val_idf_scores_a_single_image(tmp_path, monkeypatch):
    from capeval_core.metrics import idf

    monkeypatch.setenv("CAPEVAL_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(idf, "_tables", {})  # build it here, not from this process's memory
    for stale in (
        f"{idf.COCO_VAL_IDF_VERSION}-ptb-corenlp-3.4.1-1-0123456789abcdef.df",  # other captions
        "coco-val2014-df-v1-ptb-corenlp-3.4.1-1-0123456789abcdef.checked-pickle",  # capeval's
        "coco-val2014-df-v1-ptb-corenlp-3.4.1-1-0123456789abcdef.pickle",  # earlier formats
    ):
        (tmp_path / stale).write_bytes(b"a table built from other captions or by another format")
    result = score(
        "cider_d", ["a man riding a horse"], [["a man rides a horse"]], idf="coco-val2014"
    )
    assert result.warnings == ()
    assert result.details.documents == 40_504
    assert result.value > 1.0
    assert "idf-source:coco-val2014" in str(result.signature)
    # cached for the next process; the stale tables of the same tokenizer are removed
    assert [p.name for p in tmp_path.glob("coco-val2014-df-*") if p.suffix != ".lock"] == [
        idf._cache_path(get_tokenizer("ptb")).name
    ]
    weights = result.segments[0].details.vector.weights[0]
    assert weights[("a",)] < weights[("horse",)]  # frequent words weigh less


def test_a_registered_sets_idf_scores_one_image_as_the_whole_set_does():
    """idf='set-…' (a scored set's references, registered): each image alone gets the value
    idf='corpus' gives it within the set, bit for bit; an unknown set is a clear error."""
    from capeval_core.errors import CapevalError
    from capeval_core.metrics.idf import has_reference_set, register_reference_set
    from capeval_core.resources import coco_caption_sets

    sets = coco_caption_sets("val", 40)
    cands = [s.candidate for s in sets]
    refs = [list(s.references) for s in sets]
    whole = CiderD().score(cands, refs)
    name = register_reference_set(refs, get_tokenizer("ptb"))
    assert name.startswith("set-") and has_reference_set(name)
    assert register_reference_set(refs, get_tokenizer("ptb")) == name  # named by content
    alone = CiderD(idf=name)
    for i in (0, 7, 39):
        one = alone.score([cands[i]], [refs[i]])
        assert one.segments[0].value == whole.segments[i].value
    assert f"idf:{name}" in str(alone.score([cands[0]], [refs[0]]).signature)
    with pytest.raises(CapevalError, match="set-0000000000000000"):
        CiderD(idf="set-0000000000000000").score([cands[0]], [refs[0]])


def test_compiled_values_equal_the_metric_bit_for_bit():
    """cider_d_values (the training-loop path) against CiderD over the same tokens."""
    from capeval_core.metrics import Batch
    from capeval_core.metrics.cider import cider_d_values
    from tests.core.fast_paths_cases import cases

    for cands, refs in cases():
        batch = Batch.of_tokens(cands, refs)
        expected = CiderD(tokenizer="whitespace").score_batch(batch, warn=False)
        got = cider_d_values(cands, refs)
        assert got.tolist() == expected.segment_values()
        assert float(got.mean()) == expected.value


def test_order_sums_are_what_the_metric_averages_bit_for_bit():
    """cider_d_order_sums (the pycocoevalcap drop-in's CiderScorer with n other than 4 combines
    its orders itself) gives each item's per-order sums over its references: their mean over
    the four orders, over the references, times 10, is CiderD's value, bit for bit; an item
    without references is scored against one empty reference: a row of zeros."""
    import numpy as np

    from capeval_core.metrics import Batch
    from capeval_core.metrics.cider import cider_d_order_sums
    from tests.core.fast_paths_cases import cases

    for cands, refs in cases():
        sums = cider_d_order_sums(cands, refs)
        assert sums.shape == (len(cands), 4)
        expected = CiderD(tokenizer="whitespace").score_batch(Batch.of_tokens(cands, refs))
        for row, group, value in zip(sums, refs, expected.segment_values(), strict=True):
            score = np.mean(row)  # CiderD.segment's operations, in its order
            score /= len(group)
            score *= 10.0
            assert float(score) == value
    cands, refs = [("a", "cat"), ("a", "dog")], [[("a", "cat")], [("the", "dog")]]
    without = cider_d_order_sums([*cands, ("a", "bird")], [*refs, []])
    assert without[2].tolist() == [0.0] * 4
    empty = cider_d_order_sums([*cands, ("a", "bird")], [*refs, [()]])
    assert without.tolist() == empty.tolist()
