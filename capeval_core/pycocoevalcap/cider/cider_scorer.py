"""pycocoevalcap's ``cider.cider_scorer``: ``CiderScorer``, to which code adds one
``(candidate, references)`` pair at a time (``scorer += (hypo, refs)``) before
``compute_score()``; capeval's CIDEr-D (:func:`~capeval_core.metrics.cider.cider_d_values`),
the document frequencies taken from the references added.

Its public methods as pycocoevalcap 1.2 has them: ``cook_append``, ``+=`` (a pair, or another
scorer), ``size``, ``copy``, ``compute_score``; the steps ``compute_doc_freq``,
``compute_cider``, ``counts2vec`` and ``sim`` are not offered.
"""

from __future__ import annotations

import copy as _copy

import numpy as np

from capeval_core.metrics.cider import ORDER, cider_d_values


class CiderScorer:
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
        self.n = n
        self.sigma = sigma
        self.crefs: list[list[str]] = []
        self.ctest: list[str | None] = []
        self.cook_append(test, refs)

    def cook_append(self, test: str | None, refs: list[str] | None) -> None:
        """Add one candidate and its references (nothing without references)."""
        if refs is not None:
            for text in (test, *refs):
                if text is not None and not isinstance(text, str):
                    raise TypeError(
                        f"CiderScorer: captions are strings (got {type(text).__name__})"
                    )
            self.crefs.append(list(refs))
            self.ctest.append(test)

    def __iadd__(self, other: tuple[str, list[str]] | CiderScorer) -> CiderScorer:
        if type(other) is tuple:
            self.cook_append(other[0], other[1])
        else:
            self.ctest.extend(other.ctest)
            self.crefs.extend(other.crefs)
        return self

    def size(self) -> int:
        """How many pairs were added."""
        return len(self.crefs)

    def copy(self) -> CiderScorer:
        """A scorer holding the same pairs."""
        return _copy.deepcopy(self)

    def compute_score(
        self, option: object = None, verbose: int = 0
    ) -> tuple[np.float64, np.ndarray]:
        """``(mean CIDEr-D, per-pair array)``; ``option`` and ``verbose`` change nothing, as
        in pycocoevalcap."""
        if not self.crefs:  # pycocoevalcap: max() of no document frequencies, a ValueError
            raise ValueError("CiderScorer: no pair was added")
        if any(t is None for t in self.ctest):
            raise TypeError("CiderScorer: a pair was added without a candidate")
        scores = cider_d_values(
            [tuple(t.split()) for t in self.ctest],  # type: ignore[union-attr]
            [[tuple(r.split()) for r in refs] for refs in self.crefs],
            self.sigma,
        )
        return np.mean(scores), scores
