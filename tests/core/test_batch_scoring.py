"""BLEU and CIDEr-D score a batch at once from integer n-gram tables: the same numbers, bit for
bit, as item-by-item scoring (which follows coco-caption's loops), and the same evidence."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from capeval_core.metrics import get_metric, make_batch
from capeval_core.metrics.cider import _Vectors
from capeval_core.metrics.document_frequency import corpus_statistics
from capeval_core.metrics.ngram_index import batch_ngrams, build_table
from capeval_core.metrics.ngrams import ngram_counts
from capeval_core.resources import coco_caption_sets

words = st.lists(st.sampled_from(["a", "b", "c", "d", "e", "a\u00a0b"]), max_size=14)
caption = words.map(" ".join)
items = st.lists(
    st.tuples(caption, st.lists(caption, min_size=1, max_size=4)), min_size=1, max_size=6
)


def _gram(table, g):
    inverse = {v: k for k, v in table.vocabulary.items()}
    ids = []
    while g >= 0:
        ids.append(g)
        g = int(table.prefix[g])
    return tuple(inverse[int(table.last[i])] for i in reversed(ids))


def _same_as_item_by_item(cands, refs, tokenizer="whitespace"):
    batch = make_batch(cands, refs, tokenizer)
    bleu = get_metric("bleu", tokenizer=tokenizer)
    fast = bleu.score_batch(batch, warn=False)
    for seg, c, r in zip(
        fast.segments, batch.candidate_tokens, batch.reference_tokens, strict=True
    ):
        value, details = bleu.segment(c, r, None)
        assert seg.scores == value
        assert seg.details == details
        assert seg.details.max_ref_counts == details.max_ref_counts
    cider = get_metric("cider_d", tokenizer=tokenizer)
    fast = cider.score_batch(batch, warn=False)
    vectors = _Vectors(*corpus_statistics(batch.reference_tokens))
    for seg, c, r in zip(
        fast.segments, batch.candidate_tokens, batch.reference_tokens, strict=True
    ):
        value, details = cider.segment(c, r, vectors)
        assert seg.value == value  # bit for bit
        assert seg.details.per_order == details.per_order
        assert seg.details.vector == details.vector
        assert seg.details.references == details.references


@settings(max_examples=80, deadline=None)
@given(items)
def test_random_batches_score_as_item_by_item(pairs):
    _same_as_item_by_item([c for c, _ in pairs], [r for _, r in pairs])


def test_edge_cases_score_as_item_by_item():
    cands = ["", "a a a a a a", "x", "a b c d e f g h", "a\u00a0b c"]
    refs = [["a b"], ["a", "a a", ""], ["y z"], ["a b c d e f g h", "h g f"], ["a b c"]]
    _same_as_item_by_item(cands, refs)
    _same_as_item_by_item(["a dog"], [["a dog runs"]])  # one image: every idf is 0


def test_coco_captions_score_as_item_by_item():
    sets = coco_caption_sets("val", 300)
    _same_as_item_by_item([s.candidate for s in sets], [s.references for s in sets], "ptb")


def test_tables_list_each_sentence_in_counting_order():
    sentences = [("a", "b", "a", "b", "c"), (), ("c",), ("b", "a", "b", "a")]
    table = build_table(sentences)
    for i, s in enumerate(sentences):
        entries = table.entries(i)
        got = [
            (_gram(table, int(g)), int(c))
            for g, c in zip(table.grams[entries], table.counts[entries], strict=True)
        ]
        assert got == list(ngram_counts(s, 4).items())
    more = table.extend([("a", "b", "z"), ("z", "z")])
    assert more.n_grams > table.n_grams
    assert (more.prefix[: table.n_grams] == table.prefix).all()  # old n-grams keep their ids
    entries = more.entries(0)
    assert [_gram(more, int(g)) for g in more.grams[entries]][:3] == [("a",), ("b",), ("z",)]


def test_systems_on_the_same_references_share_one_reference_table():
    refs = [["a dog runs", "the dog"], ["a cat"]]
    one = make_batch(["a dog", "a cat"], refs)
    two = make_batch(["the dog", "cats"], refs)
    # batches built by hand on one tokenization of the references share it
    from capeval_core.metrics import Batch

    two = Batch(
        two.candidates, two.references, two.candidate_tokens, one.reference_tokens, one.tokenizer
    )
    assert batch_ngrams(one).references is batch_ngrams(two).references
    assert batch_ngrams(one) is batch_ngrams(one)  # built once per batch


def test_a_pickled_batch_travels_without_its_tables():
    import pickle

    batch = make_batch(["a dog"], [["a dog runs"]])
    batch_ngrams(batch)
    copy = pickle.loads(pickle.dumps(batch))
    assert "_memos" in batch.__dict__ and "_memos" not in copy.__dict__
    assert copy == batch


@pytest.mark.parametrize("mode", ["closest", "shortest", "average"])
def test_reference_length_modes_score_as_item_by_item(mode):
    batch = make_batch(["a b c d", "a b"], [["a b", "a b c d e f"], ["a", "a b c"]], "whitespace")
    bleu = get_metric("bleu", tokenizer="whitespace", effective_length=mode)
    fast = bleu.score_batch(batch)
    for seg, c, r in zip(
        fast.segments, batch.candidate_tokens, batch.reference_tokens, strict=True
    ):
        assert seg.scores == bleu.segment(c, r, None)[0]
