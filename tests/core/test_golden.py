"""BLEU, ROUGE-L and CIDEr-D against the golden files.

Reference values: pycocoevalcap 1.2 (Java 17 PTB tokenizer, Python scorers), produced by the
team as described in each golden file; tolerance 1e-12 (the implementation is in fact exact).
"""

from __future__ import annotations

import pytest

from capeval_core import score_many
from tests.conftest import golden_coco200, golden_small, load_golden

KEYS = ["bleu_1", "bleu_2", "bleu_3", "bleu_4", "rouge_l", "cider_d"]
TOL = 1e-12


def _check(results, items, corpus):
    for i, item in enumerate(items):
        for k in range(4):
            key = f"bleu_{k + 1}"
            assert results[key].segments[i].scores[key] == pytest.approx(item["bleu"][k], abs=TOL)
        assert results["rouge_l"].segments[i].value == pytest.approx(item["rouge_l"], abs=TOL)
        assert results["cider_d"].segments[i].value == pytest.approx(item["cider_d"], abs=TOL)
    for k in range(4):
        assert results[f"bleu_{k + 1}"].value == pytest.approx(corpus["bleu"][k], abs=TOL)
    assert results["rouge_l"].value == pytest.approx(corpus["rouge_l"], abs=TOL)
    assert results["cider_d"].value == pytest.approx(corpus["cider_d"], abs=TOL)


def test_small_from_tokenized_strings():
    cases = golden_small()
    results = score_many(
        KEYS,
        [c["candidate_tok"] for c in cases],
        [c["references_tok"] for c in cases],
        tokenizer="whitespace",
    )
    _check(results, cases, load_golden("golden-small")["corpus"])


def test_small_from_raw_strings_with_ptb():
    cases = golden_small()
    results = score_many(
        KEYS, [c["candidate_raw"] for c in cases], [c["references_raw"] for c in cases]
    )
    _check(results, cases, load_golden("golden-small")["corpus"])
    for i, case in enumerate(cases):
        assert " ".join(results["bleu_4"].segments[i].details.candidate) == case["candidate_tok"]


def test_coco200_from_raw_strings_with_ptb():
    items, cands, refs = golden_coco200()
    results = score_many(KEYS, cands, refs)
    _check(results, items, load_golden("coco200-scores")["corpus"])


def test_no_break_space_inside_a_token_splits_like_coco_caption():
    """PTB keeps "25 1/2" as one token joined by U+00A0; coco-caption's BLEU and CIDEr split
    it with ``str.split()`` while ROUGE-L's ``split(" ")`` does not. Oracle: pycocoevalcap 1.2's
    Python scorers on the same token strings (no Java involved)."""
    from pycocoevalcap.bleu.bleu import Bleu
    from pycocoevalcap.cider.cider import Cider
    from pycocoevalcap.rouge.rouge import Rouge

    from capeval_core.metrics import make_batch

    cands = ["parking is off limits on West 25 1/2 street", "a red bus on a road"]
    refs = [["no parking on 25 1/2 street", "a street sign"], ["a bus on the road"]]
    batch = make_batch(cands, refs)
    assert "25\u00a01/2" in batch.candidate_tokens[0]
    gts = {i: [" ".join(r) for r in group] for i, group in enumerate(batch.reference_tokens)}
    res = {i: [" ".join(c)] for i, c in enumerate(batch.candidate_tokens)}
    bleu, bleu_items = Bleu(4).compute_score(gts, res, verbose=0)
    rouge, rouge_items = Rouge().compute_score(gts, res)
    cider, cider_items = Cider().compute_score(gts, res)
    ours = score_many(KEYS, cands, refs)
    for k in range(4):
        assert ours[f"bleu_{k + 1}"].segment_values() == bleu_items[k]
        assert ours[f"bleu_{k + 1}"].value == bleu[k]
    assert ours["rouge_l"].segment_values() == list(rouge_items)
    assert ours["rouge_l"].value == rouge
    assert ours["cider_d"].segment_values() == list(cider_items)
    assert ours["cider_d"].value == cider
