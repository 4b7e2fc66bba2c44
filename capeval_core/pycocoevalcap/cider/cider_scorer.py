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

import operator

import numpy as np

from capeval_core.metrics.cider import ORDER, cider_d_order_sums, cider_d_values
from capeval_core.pycocoevalcap._inputs import Pairs, ngram_counts
from capeval_core.tokenize import Tokens


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
        super().__init__()
        self.n = n  # checked when scoring, as pycocoevalcap uses it there
        self.sigma = sigma
        self.cook_append(test, refs)

    def compute_score(
        self, option: object = None, verbose: int = 0
    ) -> tuple[np.float64, np.ndarray]:
        """``(mean CIDEr-D, per-pair array)``; ``option`` and ``verbose`` change nothing, as
        in pycocoevalcap."""
        _refuse_own_frequencies(self)
        if not self.crefs:  # pycocoevalcap: max() of no document frequencies, a ValueError
            raise ValueError("CiderScorer: no pair was added")
        n = operator.index(self.n)  # pycocoevalcap's range(n): TypeError for 4.0, True is 1
        cands, refs = self.token_lists()
        longest = max(len(words) for words in (*cands, *(r for group in refs for r in group)))
        if n < ORDER and longest > n:  # pycocoevalcap has no place for the longer n-grams
            raise IndexError(
                f"CiderScorer(n={n}): pycocoevalcap 1.2 counts n-grams of 1 to {ORDER} words "
                f"whatever n is and has room for n orders only, so a caption of {longest} "
                "words cannot be scored (its IndexError: list index out of range)"
            )
        if n == ORDER:
            # a pair added without references scores NaN, and so does the mean (pycocoevalcap
            # divides by its 0 references)
            scores = cider_d_values(cands, refs, self.sigma)
        else:
            scores = _mean_over_orders(cands, refs, self.sigma, n)
        return np.mean(scores), scores


#: pycocoevalcap's steps over its cooked counts, which capeval's scorer neither has nor calls
_STEPS = ("compute_doc_freq", "compute_cider", "counts2vec", "sim")


def _refuse_own_frequencies(scorer: CiderScorer) -> None:
    """A scorer given document frequencies of its own (set as ``document_frequency`` or
    ``ref_len``, or a subclass's own step) would score with capeval's from its references all
    the same: other numbers than pycocoevalcap's, without a word. Refused instead."""
    given = [name for name in ("document_frequency", "ref_len") if name in vars(scorer)]
    given += [name for name in _STEPS if hasattr(scorer, name)]
    if given:
        raise NotImplementedError(
            f"CiderScorer: capeval's takes the document frequencies from the references added "
            f"and reads no {', '.join(given)} of its own, so it would score without them; "
            "for another corpus's frequencies, score capeval_core's cider_d with its idf option "
            "(capeval_core.metrics.idf.register_reference_set names a corpus of your own)"
        )


def _mean_over_orders(
    candidates: list[Tokens], references: list[list[Tokens]], sigma: float, n: int
) -> np.ndarray:
    """CIDEr-D as pycocoevalcap computes it for ``n`` other than 4: the mean of ``n`` per-order
    similarities, of which the 1- to 4-word n-grams (all it counts) fill the first ones and the
    rest are 0. Each image's 10 * mean / references in its float operations: the mean is
    ``np.mean`` of the ``n`` values, whose sum numpy orders otherwise from 8 values on."""
    if n <= 0:  # no order, no word (else IndexError above): an empty mean
        return np.full(len(candidates), np.nan)
    totals = cider_d_order_sums(candidates, references, sigma)
    scores = np.empty(len(candidates))
    for i, (row, group) in enumerate(zip(totals, references, strict=True)):
        if not group:  # 0 / 0 in pycocoevalcap
            scores[i] = np.nan
            continue
        per_order = np.zeros(n)
        per_order[: min(n, ORDER)] = row[: min(n, ORDER)]
        score = np.mean(per_order)
        score /= len(group)
        score *= 10.0
        scores[i] = score
    return scores
