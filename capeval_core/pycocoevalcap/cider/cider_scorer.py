"""pycocoevalcap's ``cider.cider_scorer``: ``CiderScorer``, to which code adds one
``(candidate, references)`` pair at a time (``scorer += (hypo, refs)``) before
``compute_score()``; capeval's CIDEr-D (:func:`~capeval_core.metrics.cider.cider_d_values`),
the document frequencies taken from the references added.

Its public methods as pycocoevalcap 1.2 has them: ``cook_append``, ``+=`` (a pair, or another
scorer), ``size``, ``copy``, ``compute_score``; the steps ``compute_doc_freq``,
``compute_cider``, ``counts2vec`` and ``sim`` are not offered.
"""

from __future__ import annotations

import numpy as np

from capeval_core.metrics.cider import ORDER, cider_d_values
from capeval_core.pycocoevalcap._inputs import Pairs


class CiderScorer(Pairs):
    """CIDEr-D (n = 4, σ = 6 by default) over the pairs added, as pycocoevalcap 1.2's.

    >>> scorer = CiderScorer(n=4, sigma=6.0)
    >>> scorer += ("a cat is on a mat", ["a cat sits on a mat"])
    >>> scorer += ("a dog is running", ["a dog runs in a park"])
    >>> score, scores = scorer.compute_score()
    >>> round(float(score), 6), scores.shape  # = pycocoevalcap 1.2
    (2.646651, (2,))
    """

    def __init__(
        self, test: str | None = None, refs: list[str] | None = None, n: int = 4,
        sigma: float = 6.0,
    ) -> None:  # fmt: skip
        if n != ORDER:
            raise ValueError(
                f"CiderScorer(n): capeval's CIDEr-D sums n-grams of 1 to {ORDER} words "
                f"(got n={n!r}), as pycocoevalcap's default"
            )
        super().__init__()
        self.n = n
        self.sigma = sigma
        self.cook_append(test, refs)

    def compute_score(
        self, option: object = None, verbose: int = 0
    ) -> tuple[np.float64, np.ndarray]:
        """``(mean CIDEr-D, per-pair array)``; ``option`` and ``verbose`` change nothing, as
        in pycocoevalcap."""
        if not self.crefs:  # pycocoevalcap: max() of no document frequencies, a ValueError
            raise ValueError("CiderScorer: no pair was added")
        # a pair added without references scores NaN, and so does the mean (pycocoevalcap
        # divides by its 0 references)
        scores = cider_d_values(*self.token_lists(), self.sigma)
        return np.mean(scores), scores
