"""pycocoevalcap's ``rouge.rouge``: ``Rouge().compute_score(gts, res)``, capeval's ROUGE-L."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from capeval_core.metrics.rouge import RougeL, lcs_length
from capeval_core.pycocoevalcap import _inputs


def my_lcs(string: Sequence[str], sub: Sequence[str]) -> int:
    """Length of the longest common subsequence of two token lists.

    >>> my_lcs(["a", "b", "c", "d"], ["b", "d", "a"])
    2
    """
    return lcs_length(tuple(string), tuple(sub))


class Rouge:
    """ROUGE-L (β = 1.2, the ``beta`` attribute) as pycocoevalcap 1.2.

    >>> round(Rouge().calc_score(["a cat sits on a mat"], ["a cat is on a mat"]), 6)
    0.833333
    """

    def __init__(self) -> None:
        self.beta = 1.2

    def calc_score(self, candidate: list[str], refs: list[str]) -> float:
        """ROUGE-L of one candidate (a list of one caption) against its references."""
        assert len(candidate) == 1, "Rouge.calc_score: `candidate` must hold one caption"
        assert len(refs) > 0, "Rouge.calc_score: `refs` holds no reference caption"
        metric = RougeL(tokenizer="whitespace", beta=self.beta)
        refs_tokens = tuple(_inputs.spaced(r) for r in refs)
        return metric.segment(_inputs.spaced(candidate[0]), refs_tokens, None)[0]

    def compute_score(
        self, gts: Mapping[Any, list[str]], res: Mapping[Any, list[str]]
    ) -> tuple[np.float64, np.ndarray]:
        """``(mean ROUGE-L, per-image array)``, images in ``gts``'s order."""
        ids = _inputs.check(gts, res, "Rouge")
        cands, refs = _inputs.texts(gts, res, ids)
        metric = RougeL(tokenizer="whitespace", beta=self.beta)
        result = metric.score_batch(_inputs.spaced_batch(cands, refs), warn=False)
        score = np.array(result.segment_values())
        return np.mean(score), score

    def method(self) -> str:
        return "Rouge"
