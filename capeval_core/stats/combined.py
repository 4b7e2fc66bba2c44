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
from capeval_core.stats.correlation import METHODS, correlate
from capeval_core.stats.intervals import check_aligned, tame
from capeval_core.stats.williams import williams_test

#: the default combination named in the product brief, used where all are present
DEFAULT_COMBINATION = ("wmd", "spice", "meteor")


def minmax(values: Sequence[float]) -> np.ndarray:
    """Scale to [0, 1] over the scored set; a constant metric becomes all zeros.

    >>> minmax([2.0, 4.0, 3.0]).tolist()
    [0.0, 1.0, 0.5]
    """
    v = np.asarray(values, dtype=float)
    if v.ndim != 1 or v.size == 0:
        raise InputError(f"min-max scaling needs one score per item (got shape {v.shape})")
    lo, hi = np.nanmin(v), np.nanmax(v)
    if hi == lo:
        return np.zeros_like(v)
    with np.errstate(over="ignore"):
        span = hi - lo
    if not np.isfinite(span):  # a span past the largest float (-1e308 to 1e308): halved
        return (v / 2 - lo / 2) / (hi / 2 - lo / 2)
    return (v - lo) / span


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
    check_aligned(**{f"metric_scores[{k!r}]": metric_scores[k] for k in subset})
    sizes = {k: len(metric_scores[k]) for k in subset}
    if len(set(sizes.values())) > 1:
        raise InputError(f"the metrics combined must score the same items (items: {sizes})")
    return np.mean([minmax(metric_scores[k]) for k in subset], axis=0)


def default_subset(available: Sequence[str]) -> tuple[str, ...]:
    """WMD + SPICE + METEOR, restricted to those scored (empty if none is).

    >>> default_subset(["bleu_4", "meteor", "spice", "cider_d"]), default_subset(["bleu_4"])
    (('spice', 'meteor'), ())
    """
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

    With 11 metrics that is 2,047 subsets; their correlations with the humans (and with the
    best single metric, for the Williams test) are computed for all subsets at once (the
    subsets' means built from their shared prefixes, Pearson and Spearman as matrix
    arithmetic, Kendall from the compiled pair count scipy's values are matched by), equal
    to one :func:`correlate` call per subset up to rounding (issue 32: this call was most
    of the Correlations page's time). Non-finite scores take that plain path. A one-metric
    subset is correlated on the metric's own scores, so its row equals :func:`correlate` of
    the metric exactly: min-max scaling changes no correlation, but its rounding could
    merge or split near-ties (0.1 + 0.2 against 0.3) and move Spearman's and Kendall's.

    >>> res = rank_subsets([1, 2, 3, 4, 5], {"a": [1, 2, 3, 5, 4], "b": [3, 1, 2, 4, 5]})
    >>> [r.name for r in res]
    ['a', 'a + b', 'b']
    """
    return _rank_subsets(human, metric_scores, correlation, alternative, max_size, fast=True)


def _rank_subsets(
    human: Sequence[float],
    metric_scores: Mapping[str, Sequence[float]],
    correlation: str,
    alternative: str,
    max_size: int | None,
    *,
    fast: bool,
) -> tuple[SubsetResult, ...]:
    """:func:`rank_subsets`; ``fast=False`` is the straightforward computation, one
    :func:`correlate` call per subset (the reference the fast path is tested against)."""
    keys = list(metric_scores)
    if not keys:
        raise InputError("`metric_scores` is empty")
    if correlation not in METHODS and correlation != "kendall":
        raise InputError(f"unknown correlation {correlation!r}; choose one of {METHODS}")
    check_aligned(**{"human": human}, **{f"metric_scores[{k!r}]": metric_scores[k] for k in keys})
    h = np.asarray(human, dtype=float)
    n = len(human)
    normalised = {k: minmax(metric_scores[k]) for k in keys}
    subsets = [
        subset
        for size in range(1, (max_size or len(keys)) + 1)
        for subset in itertools.combinations(keys, size)
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", stats.ConstantInputWarning)
        # the metric's own values (see above); the subsets' means use the scaled ones
        single = {k: correlate(metric_scores[k], human, correlation).statistic for k in keys}
        best = max(keys, key=lambda k: abs(single[k]) if math.isfinite(single[k]) else -1)
        # r23 against the best metric's own values too, the variable r12 correlated
        own_best = tame(np.asarray(metric_scores[best], dtype=float))
        plain = (
            not fast
            or h.ndim != 1
            or n < 3
            or not np.isfinite(h).all()
            or any(v.shape != h.shape or not np.isfinite(v).all() for v in normalised.values())
        )
        with_human = with_best = None  # None: one correlate call per subset
        if not plain:
            means = _subset_means(normalised, subsets)
            with_human, with_best = _correlations(means, (h, own_best), correlation)
        out = []
        for row, subset in enumerate(subsets):
            size = len(subset)
            if size == 1:
                r = single[subset[0]]
            elif with_human is not None:
                r = float(with_human[row])
            else:
                values = np.mean([normalised[k] for k in subset], axis=0)
                r = correlate(values, human, correlation).statistic
            p = math.nan
            testable = subset != (best,) and n > 3 and math.isfinite(r)
            # not lower as the ranking sees it, to 12 decimals (the fast path's 0.8 against
            # correlate's 0.7999999999999999): a tie is tested too, t = 0 and p = 0.5, as the
            # Williams matrix tests a tied pair
            not_lower = round(abs(r), 12) >= round(abs(single[best]), 12)
            if testable and (alternative == "two-sided" or not_lower):
                if with_best is not None:
                    r23 = float(with_best[row])
                else:
                    values = np.mean([normalised[k] for k in subset], axis=0)
                    r23 = correlate(values, own_best, correlation).statistic
                p = williams_test(r, single[best], r23, n, alternative).pvalue  # type: ignore[arg-type]
            out.append(SubsetResult(subset, float(r), p, best))
    return tuple(sorted(out, key=_rank_key))


def _rank_key(result: SubsetResult) -> float:
    """Higher |r| first, NaN last. |r| is compared to 12 decimals, so subsets whose
    correlations are equal but for rounding (a constant metric added, a metric and its
    copy) keep their enumeration order, fewer metrics first, however they were computed."""
    r = result.statistic
    return -round(abs(r), 12) if math.isfinite(r) else math.inf


def _subset_means(
    normalised: Mapping[str, np.ndarray], subsets: Sequence[tuple[str, ...]]
) -> np.ndarray:
    """One row per subset: the mean of its metrics' normalised scores. Each subset's sum is
    its prefix's sum plus its last metric (the prefix comes earlier in ``subsets``), which
    adds the rows in the order ``np.mean(..., axis=0)`` does."""
    first = next(iter(normalised.values()))
    out = np.empty((len(subsets), first.size))
    sums: dict[tuple[str, ...], np.ndarray] = {}
    for row, subset in enumerate(subsets):
        last = normalised[subset[-1]]
        total = last.copy() if len(subset) == 1 else sums[subset[:-1]] + last
        sums[subset] = total
        np.divide(total, len(subset), out=out[row])
    return out


def _correlations(rows: np.ndarray, ys: Sequence[np.ndarray], method: str) -> list[np.ndarray]:
    """Per ``y`` of ``ys``, ``correlate(row, y, method).statistic`` of every row (NaN where a
    side is constant). The rows' ranks or sort orders are computed once for all ``ys``."""
    constant = rows.max(axis=1) == rows.min(axis=1)
    if method == "pearson":
        out = [_pearson_rows(rows, y) for y in ys]
    elif method == "spearman":
        ranks = np.concatenate(_in_threads(lambda part: stats.rankdata(part, axis=1), rows))
        out = [_pearson_rows(ranks, stats.rankdata(y)) for y in ys]
    else:
        out = _kendall_rows(rows, ys, "c" if method == "kendall_c" else "b")
    for r, y in zip(out, ys, strict=True):
        r[constant] = np.nan
        if np.all(y == y[0]):
            r[:] = np.nan
    return out


def _kendall_rows(rows: np.ndarray, ys: Sequence[np.ndarray], variant: str) -> list[np.ndarray]:
    """Kendall's tau of every row with each ``y``: the compiled pair count (scipy's value)
    with one draw of each item, rows spread over threads (the count releases the GIL)."""
    from capeval_core.stats.kendall_counts import levels, resampled_kendall, sorted_groups

    y_levels = [levels(y) for y in ys]
    ones = np.ones((1, rows.shape[1]))
    out = [np.empty(len(rows)) for _ in ys]

    def part_rows(lo: int, hi: int) -> None:
        for i in range(lo, hi):
            groups = sorted_groups(rows[i])
            for r, yl in zip(out, y_levels, strict=True):
                tau_b, tau_c = resampled_kendall(ones, groups, yl)
                r[i] = (tau_c if variant == "c" else tau_b)[0]

    _in_threads(lambda part: part_rows(*part), _parts(len(rows)))
    return out


def _parts(n_rows: int) -> list[tuple[int, int]]:
    """Row ranges, one per worker thread (each at least 64 rows)."""
    from capeval_core.resources import available_cpus

    workers = max(1, min(available_cpus(), 8, n_rows // 64))
    bounds = np.linspace(0, n_rows, workers + 1).astype(int)
    return list(itertools.pairwise(bounds.tolist()))


def _in_threads(fn, parts) -> list:
    """``fn`` of each part (row ranges, or the rows of each range when ``parts`` is an
    array), in threads: numpy's sorts and the compiled count release the GIL. The results
    are in the parts' order, and each row's value does not depend on the split."""
    from concurrent.futures import ThreadPoolExecutor

    if isinstance(parts, np.ndarray):
        parts = [parts[lo:hi] for lo, hi in _parts(len(parts))]
    with ThreadPoolExecutor(len(parts)) as pool:
        return list(pool.map(fn, parts))


def _pearson_rows(rows: np.ndarray, y: np.ndarray) -> np.ndarray:
    xc = rows - rows.mean(axis=1, keepdims=True)
    yc = y - y.mean()
    with np.errstate(invalid="ignore", divide="ignore"):
        r = (xc @ yc) / np.sqrt(np.einsum("ij,ij->i", xc, xc) * (yc @ yc))
    return np.clip(r, -1.0, 1.0)
