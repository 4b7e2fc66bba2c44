"""pycocoevalcap's ``bleu.bleu``: ``Bleu(n).compute_score(gts, res)``, capeval's BLEU."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from capeval_core.pycocoevalcap import _inputs
from capeval_core.pycocoevalcap.bleu.bleu_scorer import BleuScorer


class Bleu:
    """BLEU-1..n with the closest reference length, as pycocoevalcap 1.2.

    As there, n-grams are counted up to 4 words whatever ``n`` is: ``n`` above 4 raises
    ``IndexError`` once an image is scored, ``n <= 0`` gives empty lists, and an ``n`` that is
    not an integer raises ``TypeError`` when scoring.

    >>> score, scores = Bleu(4).compute_score({1: ["a cat sits on a mat"]},
    ...                                       {1: ["a cat is on a mat"]}, verbose=0)
    >>> [round(s, 6) for s in score], len(scores), len(scores[0])  # = pycocoevalcap 1.2
    ([0.833333, 0.707107, 0.5, 8e-05], 4, 1)
    """

    def __init__(self, n: int = 4) -> None:
        self._n = n  # as pycocoevalcap: used (and checked) when scoring
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
