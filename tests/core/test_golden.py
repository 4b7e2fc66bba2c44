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
