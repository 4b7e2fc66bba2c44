"""pycocoevalcap's ``cider.cider_scorer``: ``CiderScorer``, to which code adds one
``(candidate, references)`` pair at a time (``scorer += (hypo, refs)``) before
``compute_score()``; capeval's CIDEr-D (:func:`~capeval_core.metrics.cider.cider_d_values`),
the document frequencies taken from the references added.

Its public methods as pycocoevalcap 1.2 has them: ``cook_append``, ``+=`` (a pair, or another
scorer), ``size``, ``copy``, ``compute_score``, and the module's functions ``precook``,
``cook_refs`` and ``cook_test``; the steps ``compute_doc_freq``,
``compute_cider``, ``counts2vec`` and ``sim`` are not offered.
"""

from __future__ import annotations

import numpy as np

from capeval_core.metrics.cider import ORDER, cider_d_values
from capeval_core.pycocoevalcap._inputs import Pairs, ngram_counts


def precook(s: str, n: int = 4, out: bool = False) -> dict[tuple[str, ...], int]:
    """Each 1- to ``n``-gram of a sentence (split at whitespace) with its count (``out`` is
    unused, as in pycocoevalcap).

    >>> dict(precook("a dog", 2))
    {('a',): 1, ('dog',): 1, ('a', 'dog'): 1}
    """
    return ngram_counts(s, n)


def cook_refs(refs: list[str], n: int = 4) -> list[dict[tuple[str, ...], int]]:
    """:func:`precook` of each of one image's references."""
    return [precook(ref, n) for ref in refs]


def cook_test(test: str, n: int = 4) -> dict[tuple[str, ...], int]:
    """:func:`precook` of a candidate."""
    return precook(test, n, True)


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
