"""BLEU details: clipped counts, matched spans, brevity penalty, corpus pooling."""

from __future__ import annotations

import math

import pytest

from capeval_core.metrics.bleu import Bleu


def _score(cands, refs, **opts):
    return Bleu(tokenizer="whitespace", **opts).score(cands, refs)


def test_clipping_and_matched_spans():
    result = _score(["the the the cat"], [["the cat sat", "a cat and the dog"]])
    d = result.segments[0].details
    the = next(g for g in d.ngrams if g.ngram == ("the",))
    assert (the.count, the.max_ref_count, the.clipped) == (3, 1, 1)
    assert d.correct[0] == 2 and d.guess[0] == 4  # one "the" + "cat"
    assert d.matched_spans(1) == [(0, 1), (3, 4)]  # only the first "the" is matched
    assert d.matched_spans(2) == [(2, 4)]
    assert d.precisions[0] == 0.5
    assert d.guess == (4, 3, 2, 1)


def test_closest_reference_length_ties_go_to_shorter():
    d = _score(["a b c d"], [["a b c", "a b c d e"]]).segments[0].details
    assert d.reference_length == 3
    assert d.brevity_penalty == 1.0


def test_brevity_penalty_when_shorter():
    d = _score(["a b"], [["a b c d"]]).segments[0].details
    ratio = (2 + 1e-15) / (4 + 1e-9)
    assert d.brevity_penalty == pytest.approx(math.exp(1 - 1 / ratio))


def test_corpus_is_pooled_not_averaged():
    result = _score(["a b c d", "x y"], [["a b c d"], ["p q r s"]])
    mean = sum(result.segment_values("bleu_1")) / 2
    assert result.corpus["bleu_1"] != pytest.approx(mean)
    assert result.details.correct[0] == 4 and result.details.guess[0] == 6


def test_effective_length_options():
    refs = [["a b", "a b c d e f"]]
    assert (
        _score(["a b c d"], refs, effective_length="shortest").segments[0].details.reference_length
        == 2
    )
    assert (
        _score(["a b c d"], refs, effective_length="average").segments[0].details.reference_length
        == 4.0
    )
    with pytest.raises(ValueError, match="effective_length"):
        Bleu(effective_length="longest")


def test_compiled_values_equal_the_metric_bit_for_bit():
    """bleu_values (the training-loop path) against Bleu over the same tokens."""
    from capeval_core.metrics import Batch
    from capeval_core.metrics.bleu import bleu_values
    from tests.core.fast_paths_cases import cases

    for cands, refs in cases():
        batch = Batch.of_tokens(cands, refs)
        expected = Bleu(tokenizer="whitespace").score_batch(batch, warn=False)
        got = bleu_values(cands, refs)
        for k, key in enumerate(Bleu.reports):
            assert got.items[k] == expected.segment_values(key), key
            assert got.corpus[k] == expected.corpus[key], key
        assert got.totals == expected.details
