"""The seed paper's naive combined metric (product brief, ``combined``): min–max normalise
each metric to [0, 1] over the scored set, then average a subset; every subset ranked.
"""

from __future__ import annotations

import itertools
import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats

from capeval_core.errors import InputError
from capeval_core.stats.correlation import correlate
from capeval_core.stats.williams import williams_test

#: the default combination named in the product brief, used where all are present
DEFAULT_COMBINATION = ("wmd", "spice", "meteor")


def minmax(values: Sequence[float]) -> np.ndarray:
    """Scale to [0, 1] over the scored set; a constant metric becomes all zeros.

    >>> minmax([2.0, 4.0, 3.0]).tolist()
    [0.0, 1.0, 0.5]
    """
    v = np.asarray(values, dtype=float)
    lo, hi = np.nanmin(v), np.nanmax(v)
    return np.zeros_like(v) if hi == lo else (v - lo) / (hi - lo)


def combine(metric_scores: Mapping[str, Sequence[float]], subset: Sequence[str]) -> np.ndarray:
    """Mean of the min–max normalised scores of ``subset``.

    >>> combine({"a": [0, 10], "b": [1, 3]}, ["a", "b"]).tolist()
    [0.0, 1.0]
    """
    if not subset:
        raise InputError("`subset` must name at least one metric")
    missing = [k for k in subset if k not in metric_scores]
    if missing:
        raise InputError(f"no scores for {missing}; have {list(metric_scores)}")
    return np.mean([minmax(metric_scores[k]) for k in subset], axis=0)


def default_subset(available: Sequence[str]) -> tuple[str, ...]:
    """WMD + SPICE + METEOR, restricted to those scored (empty if none is)."""
    return tuple(k for k in DEFAULT_COMBINATION if k in available)


@dataclass(frozen=True)
class SubsetResult:
    """One combination: its correlation with humans and its Williams p against the best
    single metric (NaN for that metric itself and, one-sided, where it is not higher)."""

    subset: tuple[str, ...]
    statistic: float
    pvalue_vs_best: float
    best_single: str

    @property
    def name(self) -> str:
        return " + ".join(self.subset)


def rank_subsets(
    human: Sequence[float],
    metric_scores: Mapping[str, Sequence[float]],
    correlation: str = "pearson",
    alternative: str = "greater",
    max_size: int | None = None,
) -> tuple[SubsetResult, ...]:
    """Every non-empty subset (up to ``max_size`` metrics), best correlation first.

    >>> res = rank_subsets([1, 2, 3, 4, 5], {"a": [1, 2, 3, 5, 4], "b": [3, 1, 2, 4, 5]})
    >>> [r.name for r in res]
    ['a', 'a + b', 'b']
    """
    keys = list(metric_scores)
    if not keys:
        raise InputError("`metric_scores` is empty")
    n = len(human)
    normalised = {k: minmax(metric_scores[k]) for k in keys}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", stats.ConstantInputWarning)
        single = {k: correlate(normalised[k], human, correlation).statistic for k in keys}
        best = max(keys, key=lambda k: abs(single[k]) if math.isfinite(single[k]) else -1)
        out = []
        for size in range(1, (max_size or len(keys)) + 1):
            for subset in itertools.combinations(keys, size):
                values = np.mean([normalised[k] for k in subset], axis=0)
                r = (
                    correlate(values, human, correlation).statistic
                    if size > 1
                    else single[subset[0]]
                )
                p = math.nan
                testable = subset != (best,) and n > 3 and math.isfinite(r)
                if testable and (alternative == "two-sided" or abs(r) > abs(single[best])):
                    r23 = correlate(values, normalised[best], correlation).statistic
                    p = williams_test(r, single[best], r23, n, alternative).pvalue  # type: ignore[arg-type]
                out.append(SubsetResult(subset, float(r), p, best))
    return tuple(
        sorted(out, key=lambda s: -abs(s.statistic) if math.isfinite(s.statistic) else math.inf)
    )
