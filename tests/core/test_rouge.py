"""ROUGE-L details: per-reference LCS, independent maxima, LCS index pairs."""

from __future__ import annotations

import pytest

from capeval_core.metrics.rouge import RougeL, f_measure


def test_independent_maxima_may_come_from_different_references():
    result = RougeL(tokenizer="whitespace").score(["a b c d"], [["a b", "a b c d e f g h"]])
    d = result.segments[0].details
    assert [r.lcs for r in d.references] == [2, 4]
    assert d.precision == 1.0  # from the second reference
    assert d.recall == 1.0  # from the first reference
    assert d.f_measure == 1.0 == result.value
    assert d.best_reference == 0  # its own F (0.709) beats the second one's (0.629)


def test_lcs_pairs_align_equal_tokens():
    d = RougeL(tokenizer="whitespace").score(["a x b y c"], [["a b c"]]).segments[0].details
    assert d.lcs_pairs(0) == ((0, 0), (2, 1), (4, 2))


def test_f_measure_weights_recall():
    assert f_measure(0.5, 1.0, 1.2) == pytest.approx((1 + 1.44) * 0.5 / (1 + 1.44 * 0.5))
    assert f_measure(0.0, 1.0, 1.2) == 0.0
