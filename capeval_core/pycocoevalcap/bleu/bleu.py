"""pycocoevalcap's ``bleu.bleu``: ``Bleu(n).compute_score(gts, res)``, capeval's BLEU."""

from __future__ import annotations

import numbers
from collections.abc import Mapping
from typing import Any

from capeval_core.metrics.bleu import MAX_ORDER
from capeval_core.pycocoevalcap import _inputs
from capeval_core.pycocoevalcap.bleu.bleu_scorer import BleuScorer


class Bleu:
    """BLEU-1..n with the closest reference length, as pycocoevalcap 1.2 (n at most 4).

    >>> score, scores = Bleu(4).compute_score({1: ["a cat sits on a mat"]},
    ...                                       {1: ["a cat is on a mat"]}, verbose=0)
    >>> [round(s, 6) for s in score], len(scores), len(scores[0])  # = pycocoevalcap 1.2
    ([0.833333, 0.707107, 0.5, 8e-05], 4, 1)
    """

    def __init__(self, n: int = 4) -> None:
        if isinstance(n, bool) or not isinstance(n, numbers.Integral) or not 1 <= n <= MAX_ORDER:
            raise ValueError(
                f"Bleu(n): capeval computes BLEU-1 to BLEU-{MAX_ORDER} (got n={n!r}); "
                "pycocoevalcap's default is 4"
            )
        self._n = int(n)  # numpy's 4 too, as pycocoevalcap takes it
        self._hypo_for_image: dict[Any, Any] = {}
        self.ref_for_image: dict[Any, Any] = {}

    def compute_score(
        self, gts: Mapping[Any, list[str]], res: Mapping[Any, list[str]], verbose: int = 1
    ) -> tuple[list[float], list[list[float]]]:
        """``(corpus BLEU-1..n, per-image lists of BLEU-1..n)``, images in ``gts``'s order;
        ``verbose > 0`` prints the pooled counts and the length ratio, ``verbose > 1`` each
        image's counts first, as pycocoevalcap."""
        ids = _inputs.check(gts, res, "Bleu")
        cands, refs = _inputs.texts(gts, res, ids)
        scorer = BleuScorer(n=self._n)
        for cand, group in zip(cands, refs, strict=True):
            scorer += (cand, group)
        return scorer.compute_score(option="closest", verbose=verbose)  # type: ignore[return-value]

    def method(self) -> str:
        return "Bleu"
