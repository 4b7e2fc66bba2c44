"""Property tests: metrics never crash on any text and keep their invariants."""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from capeval_core import score_many
from capeval_core.metrics.rouge import lcs_length, lcs_pairs

KEYS = ["bleu_1", "bleu_2", "bleu_3", "bleu_4", "rouge_l", "cider_d"]
text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=60)
words = st.lists(st.sampled_from(["a", "b", "c", "d", "e", "f"]), max_size=12).map(tuple)


@pytest.mark.filterwarnings("ignore::capeval_core.DegenerateCorpusWarning")
@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(text, st.lists(text, min_size=1, max_size=3)), min_size=1, max_size=4))
def test_any_text_scores_within_bounds(items):
    cands = [c for c, _ in items]
    refs = [r for _, r in items]
    results = score_many(KEYS, cands, refs)
    for key, result in results.items():
        hi = 10.0 if key == "cider_d" else 1.0
        assert 0.0 <= result.value <= hi + 1e-9
        assert len(result.segments) == len(items)
        for seg in result.segments:
            assert not math.isnan(seg.value)
            assert 0.0 <= seg.value <= hi + 1e-9


@settings(max_examples=200, deadline=None)
@given(words, words)
def test_bit_parallel_lcs_equals_dynamic_programming(a, b):
    pairs = lcs_pairs(a, b)
    assert lcs_length(a, b) == len(pairs) == lcs_length(b, a)
    assert all(a[i] == b[j] for i, j in pairs)
    assert all(p[0] < q[0] and p[1] < q[1] for p, q in itertools.pairwise(pairs))


@settings(max_examples=50, deadline=None)
@given(
    st.lists(
        st.sampled_from(["a", "man", "dog", "rides", "horse", "on", "the", "beach"]),
        min_size=1,
        max_size=10,
    )
)
def test_identical_caption_has_rouge_one_and_bleu_near_one(tokens):
    caption = " ".join(tokens)
    results = score_many(["rouge_l", "bleu_1"], [caption], [[caption]], tokenizer="whitespace")
    assert results["rouge_l"].value == 1.0
    assert abs(results["bleu_1"].value - 1.0) < 1e-8
