"""pycocoevalcap's ``cider.cider``: ``Cider().compute_score(gts, res)``, capeval's CIDEr-D."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from capeval_core.pycocoevalcap import _inputs
from capeval_core.pycocoevalcap.cider.cider_scorer import CiderScorer


class Cider:
    """CIDEr-D (n = 4, σ = 6) with the IDF of the scored images, as pycocoevalcap 1.2.

    As there, ``test`` and ``refs`` are unused and n-grams are counted up to 4 words whatever
    ``n`` is: ``n`` above 4 gives 4/n of the value with trailing zeros in its mean, below 4
    raises ``IndexError`` for a caption longer than ``n`` words.

    Fast enough for a training loop: a call on a few hundred captions pays no start-up (no
    process, nothing loaded), about 20 times faster than pycocoevalcap's.

    >>> gts = {1: ["a cat sits on a mat"], 2: ["a dog runs in a park"]}
    >>> res = {1: ["a cat is on a mat"], 2: ["a dog is running"]}
    >>> score, scores = Cider().compute_score(gts, res)
    >>> round(float(score), 6), scores.shape  # = pycocoevalcap 1.2
    (2.646651, (2,))
    """

    def __init__(self, test: Any = None, refs: Any = None, n: int = 4, sigma: float = 6.0):
        self._n = n
        self._sigma = sigma

    def compute_score(
        self, gts: Mapping[Any, list[str]], res: Mapping[Any, list[str]]
    ) -> tuple[np.float64, np.ndarray]:
        """``(corpus CIDEr-D, per-image array)``, images in ``gts``'s order."""
        ids = _inputs.check(gts, res, "Cider")
        if not ids:  # pycocoevalcap: max() of no document frequencies, a ValueError
            raise ValueError("Cider: gts and res hold no image")
        cands, refs = _inputs.texts(gts, res, ids)
        scorer = CiderScorer(n=self._n, sigma=self._sigma)
        for cand, group in zip(cands, refs, strict=True):
            scorer += (cand, group)
        return scorer.compute_score()

    def method(self) -> str:
        return "CIDEr"
