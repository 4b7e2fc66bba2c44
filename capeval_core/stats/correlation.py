"""Correlations with human judgments: Pearson, Spearman, Kendall τb/τc (wrapping scipy),
with a seeded percentile-bootstrap confidence interval over items, item- or system-level.

Constant input gives NaN with scipy's ``ConstantInputWarning`` (house style, Statistics).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Literal, TypeVar

import numpy as np
from scipy import stats

from capeval_core.errors import InputError, refuse_text
from capeval_core.resources import available_cpus
from capeval_core.stats.intervals import (
    OVER_GROUPS,
    ConfidenceInterval,
    check_aligned,
    check_resamples,
    check_resampling,
    percentile_interval,
    seeded,
    tame,
)
from capeval_core.stats.kendall_counts import levels, resampled_kendall, sorted_groups

Method = Literal["pearson", "spearman", "kendall_b", "kendall_c"]
METHODS: tuple[str, ...] = ("pearson", "spearman", "kendall_b", "kendall_c")
_K = TypeVar("_K")
#: an array's stable sort order, where each tie group starts in it (None: no ties), and
#: each item's tie group
_Ties = tuple[np.ndarray, np.ndarray | None, np.ndarray]


@dataclass(frozen=True)
class CorrelationResult:
    """scipy-like result: ``statistic``, ``pvalue``, ``n``, ``method``; ``level`` is
    ``"item"`` or ``"system"``. The paired data are kept to resample them."""

    statistic: float
    pvalue: float
    n: int
    method: str
    level: str = "item"
    x: np.ndarray = field(default=None, repr=False, compare=False)  # type: ignore[assignment]
    y: np.ndarray = field(default=None, repr=False, compare=False)  # type: ignore[assignment]
    #: system level: the item scores, item human scores and each item's system behind the
    #: means ``x`` and ``y`` (the bootstrap resamples items within systems)
    items: tuple[np.ndarray, np.ndarray, tuple[str, ...]] | None = field(
        default=None, repr=False, compare=False
    )
    #: item level: the group of each pair where several pairs are one item's (one caption's
    #: rows, one per annotator): the bootstrap draws whole groups (see :func:`bootstrap_many`)
    groups: np.ndarray | None = field(default=None, repr=False, compare=False)

    def confidence_interval(
        self, level: float = 0.95, n_resamples: int = 1000, seed: int | None = 0
    ) -> ConfidenceInterval:
        """Percentile bootstrap over the correlated pairs, seeded and reproducible; at system
        level over the items within each system (every resample keeps every system).

        >>> r = pearson([1, 2, 3, 4, 5, 6], [1, 3, 2, 5, 4, 6])
        >>> r.confidence_interval(seed=1) == r.confidence_interval(seed=1)
        True
        """
        check_resampling(level, n_resamples)
        if self.items is not None:
            from capeval_core.stats.within_systems import system_intervals

            scores, humans, systems = self.items
            return system_intervals(
                {0: scores},
                humans,
                systems,
                (self.method,),
                level=level,
                n_resamples=n_resamples,
                seed=seed,
            )[0, self.method]
        values = bootstrap_statistics(
            self.x, self.y, self.method, n_resamples, seed, groups=self.groups
        )
        return percentile_interval(values, level, n_resamples, seed, self.interval_method)

    @property
    def interval_method(self) -> str:
        """How :meth:`confidence_interval` resamples at item level: items, or their groups."""
        grouped = group_labels(self.groups, self.n) if self.groups is not None else None
        return "percentile bootstrap over items" if grouped is None else OVER_GROUPS

    def __str__(self) -> str:
        """One line, p written as the Significance page's tables write it.

        >>> print(pearson([1, 2, 3, 4, 5], [2, 1, 4, 3, 5]))
        pearson = 0.8000 (p = 0.1041, n = 5)
        """
        return f"{self.method} = {self.statistic:.4f} ({p_text(self.pvalue)}, n = {self.n})"


def p_value_text(p: float) -> str:
    """A p-value as the app's tables write it: four decimals; ``< 0.001`` below 0.001 and
    ``< 1e-300`` where the double underflowed to 0 (a p-value is never exactly 0).

    >>> p_value_text(0.5), p_value_text(3.9e-05), p_value_text(0.0), p_value_text(float("nan"))
    ('0.5000', '< 0.001', '< 1e-300', 'nan')
    """
    if np.isnan(p):
        return "nan"
    if p == 0:
        return "< 1e-300"
    return "< 0.001" if p < 0.001 else f"{p:.4f}"


def p_text(p: float) -> str:
    """``p = 0.0312``, or ``p < 0.001``: :func:`p_value_text` after its ``p``.

    >>> p_text(0.5), p_text(3.9e-05), p_text(float("nan"))
    ('p = 0.5000', 'p < 0.001', 'p = nan')
    """
    value = p_value_text(p)
    return f"p {value}" if value.startswith("<") else f"p = {value}"


def _pair(
    x: Sequence[float], y: Sequence[float], names: tuple[str, str] = ("x", "y")
) -> tuple[np.ndarray, np.ndarray]:
    check_aligned(**dict(zip(names, (x, y), strict=True)))
    xa, ya = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if xa.ndim != 1 or xa.shape != ya.shape:
        raise InputError(
            f"`x` and `y` must be 1-D of the same length (got {xa.shape} and {ya.shape})"
        )
    if xa.size < 2:
        raise InputError(f"a correlation needs at least 2 items (got {xa.size})")
    return xa, ya


def _constant(x: np.ndarray, y: np.ndarray) -> bool:
    return bool(np.all(x == x[0]) or np.all(y == y[0]))


def _result(method: str, x: np.ndarray, y: np.ndarray, res, level: str) -> CorrelationResult:
    return CorrelationResult(
        float(res.statistic), float(res.pvalue), int(x.size), method, level, x, y
    )


def pearson(x: Sequence[float], y: Sequence[float]) -> CorrelationResult:
    """Pearson's r (``scipy.stats.pearsonr``).

    >>> round(pearson([1, 2, 3, 4], [1, 3, 2, 4]).statistic, 6)
    0.8
    """
    xa, ya = _pair(x, y)
    return _result("pearson", xa, ya, stats.pearsonr(xa, ya), "item")


def spearman(x: Sequence[float], y: Sequence[float]) -> CorrelationResult:
    """Spearman's ρ (``scipy.stats.spearmanr``).

    >>> round(spearman([1, 2, 3, 4], [1, 3, 2, 4]).statistic, 6)
    0.8
    """
    xa, ya = _pair(x, y)
    return _result("spearman", xa, ya, stats.spearmanr(xa, ya), "item")


def kendall(x: Sequence[float], y: Sequence[float], variant: str = "b") -> CorrelationResult:
    """Kendall's τ, ``variant`` "b" (scipy's default; Flickr8k-CF) or "c" (Flickr8k-Expert,
    Composite; metric-spec §8).

    >>> round(kendall([1, 2, 3, 4], [1, 3, 2, 4], variant="c").statistic, 6)
    0.666667
    """
    if variant not in ("b", "c"):
        raise InputError(f"`variant` must be 'b' or 'c' (got {variant!r})")
    xa, ya = _pair(x, y)
    if _constant(xa, ya):
        # scipy's kendalltau returns NaN silently here; warn like pearsonr/spearmanr do.
        warnings.warn(
            "An input array is constant; the correlation coefficient is not defined.",
            stats.ConstantInputWarning,
            stacklevel=2,
        )
        return CorrelationResult(np.nan, np.nan, int(xa.size), f"kendall_{variant}", "item", xa, ya)
    return _result(f"kendall_{variant}", xa, ya, stats.kendalltau(xa, ya, variant=variant), "item")


#: Fewest pairs for which a correlation's p-value is shown. scipy's p-values rest on a t
#: (Pearson, Spearman) or normal (Kendall) approximation that needs more pairs, and a handful
#: of systems cannot support the tiny p-values it prints: with five systems, even the exact
#: permutation test of Spearman's rho cannot go below a two-sided p of 2/120 = 1/60.
MIN_N_FOR_PVALUE = 10


def pvalue_meaningful(n: int) -> bool:
    """Whether a correlation over ``n`` pairs gets a p-value (:data:`MIN_N_FOR_PVALUE`).

    >>> pvalue_meaningful(5), pvalue_meaningful(200)
    (False, True)
    """
    return n >= MIN_N_FOR_PVALUE


def correlate(x: Sequence[float], y: Sequence[float], method: str = "pearson") -> CorrelationResult:
    """One of :data:`METHODS` by name.

    >>> r = correlate([1, 2, 3, 4, 5], [2, 1, 4, 3, 5], "spearman")
    >>> r.method, round(r.statistic, 4), round(r.pvalue, 4), r.n
    ('spearman', 0.8, 0.1041, 5)
    """
    if method == "pearson":
        return pearson(x, y)
    if method == "spearman":
        return spearman(x, y)
    if method in ("kendall_b", "kendall_c", "kendall"):
        return kendall(x, y, "c" if method == "kendall_c" else "b")
    raise InputError(f"unknown correlation {method!r}; choose one of {METHODS}")


def system_level(
    scores: Sequence[float],
    humans: Sequence[float],
    systems: Sequence[str],
    method: str = "pearson",
) -> CorrelationResult:
    """Correlation of per-system means (each system's items averaged first); its
    :meth:`~CorrelationResult.confidence_interval` resamples items within systems.

    >>> r = system_level([1, 2, 3, 5, 4, 6], [1, 1, 2, 2, 3, 3], ["a", "a", "b", "b", "c", "c"])
    >>> (r.n, r.level, round(r.statistic, 4))
    (3, 'system', 0.9707)
    """
    check_aligned(scores=scores, humans=humans, systems=systems)
    s, h = _pair(scores, humans, ("scores", "humans"))
    refuse_text(systems, "systems", "system names, one per item")
    if len(systems) != s.size:
        raise InputError(
            f"`systems` must have one entry per item (got {len(systems)} for {s.size} items)"
        )
    from capeval_core.stats.within_systems import check_enough_systems, system_codes

    names, codes = system_codes(systems)
    check_enough_systems(len(names))  # two systems' means always correlate ±1
    counts = np.bincount(codes, minlength=len(names))
    ms = np.bincount(codes, s, minlength=len(names)) / counts
    mh = np.bincount(codes, h, minlength=len(names)) / counts
    res = correlate(ms, mh, method)
    return CorrelationResult(
        res.statistic, res.pvalue, res.n, res.method, "system", ms, mh, (s, h, tuple(systems))
    )


def bootstrap_statistics(
    x: np.ndarray,
    y: np.ndarray,
    method: str,
    n_resamples: int = 1000,
    seed: int | None = 0,
    *,
    groups: Sequence[int] | np.ndarray | None = None,
) -> np.ndarray:
    """The correlation on ``n_resamples`` resamples of the pairs (drawn with replacement).

    Written by hand (not ``scipy.stats.bootstrap``) so the index draws are the same for every
    method and metric. A resample is represented by how often it draws each item (its
    weights), so nothing is copied: Pearson is weighted sums (one matrix product), Spearman
    the Pearson of weighted mid-ranks (sums that are exact, so taken in the cheapest order),
    and Kendall's tau-b/tau-c scipy's formulas on the weighted counts of concordant,
    discordant and tied pairs (:mod:`~capeval_core.stats.kendall_counts`, compiled).

    >>> x, y = np.arange(10.0), np.arange(10.0) ** 2
    >>> bool(np.allclose(bootstrap_statistics(x, y, "spearman", 5), 1.0))
    True
    """
    check_aligned(x=x, y=y)
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if x.ndim != 1 or x.shape != y.shape:
        raise InputError(
            f"`x` and `y` must be 1-D of the same length (got {x.shape} and {y.shape})"
        )
    return bootstrap_many({0: x}, y, (method,), n_resamples, seed, groups=groups)[0, method]


def bootstrap_many(
    xs: Mapping[_K, Sequence[float]],
    y: Sequence[float],
    methods: Sequence[str],
    n_resamples: int = 1000,
    seed: int | None = 0,
    on_progress: Callable[[float], None] | None = None,
    *,
    groups: Sequence[int] | np.ndarray | None = None,
) -> dict[tuple[_K, str], np.ndarray]:
    """:func:`bootstrap_statistics` of each ``x`` against the same ``y``, for each method.

    ``groups`` (one label per pair) makes it a cluster bootstrap: a resample draws groups
    with replacement and takes every pair of each (Flickr8k-Expert's published rows, three
    annotators' scores of one caption sharing its metric score, are not independent items:
    drawn one by one, the intervals came out about a quarter too narrow). Groups of one pair
    each draw exactly the resamples of ``groups=None``.

    Equal bit for bit to one call per pair, but a table of metrics costs little more than its
    per-metric arithmetic: each chunk of resample weights is drawn once, y's ranks and levels
    are computed once, and Kendall's tau-b and tau-c come from one count of the pairs.
    ``on_progress`` hears the share of the work done (0 to 1) after each chunk.

    >>> x, y = np.arange(10.0), np.arange(10.0) ** 2
    >>> many = bootstrap_many({"a": x, "b": -x}, y, ("pearson", "spearman"), 5, seed=3)
    >>> bool((many["b", "spearman"] == bootstrap_statistics(-x, y, "spearman", 5, 3)).all())
    True
    """
    refuse_text(methods, "methods", "correlation names")
    for key, x in xs.items():
        check_aligned(**{f"xs[{key!r}]": x, "y": y})
    y = np.asarray(y, dtype=float)
    arrays = {key: np.asarray(x, dtype=float) for key, x in xs.items()}
    for key, x in arrays.items():
        if y.ndim != 1 or x.shape != y.shape:
            raise InputError(
                f"`xs[{key!r}]` and `y` must be 1-D of the same length (got {x.shape} and "
                f"{y.shape})"
            )
    check_resamples(n_resamples, least=0)
    n = y.size
    labels = group_labels(groups, n)
    out: dict[tuple[_K, str], np.ndarray] = {}
    for key in arrays:
        for method in methods:
            if method not in METHODS and method != "kendall":
                raise InputError(f"unknown correlation {method!r}; choose one of {METHODS}")
            out[key, method] = np.full(n_resamples, np.nan)
    # a side with a NaN has a NaN correlation (scipy's), and so has every resample: an
    # interval from the resamples that miss its NaN items would stand around nothing
    arrays = {} if np.isnan(y).any() else {k: x for k, x in arrays.items() if not np.isnan(x).any()}
    if n == 0 or n_resamples == 0 or not arrays:
        if on_progress is not None:
            on_progress(1.0)
        return out
    kendalls = [m for m in methods if m.startswith("kendall")]
    spearman = "spearman" in methods
    ties = {key: _tie_groups(x) for key, x in arrays.items()} if spearman else {}
    exact = n <= _EXACT_RANKS
    y_ties = _tie_groups(y) if spearman and exact else None
    x_groups = {key: sorted_groups(x) for key, x in arrays.items()} if kendalls else {}
    y_levels = levels(y) if kendalls else None
    chunk = max(1, min(n_resamples, 2_000_000 // n))
    # the compiled Kendall count releases the GIL: metrics run on the other CPUs while this
    # thread does Pearson and Spearman (each metric's values do not depend on the split)
    workers = min(len(arrays), available_cpus()) if kendalls else 0
    with (
        warnings.catch_warnings(),
        np.errstate(invalid="ignore", divide="ignore"),
        ThreadPoolExecutor(max(workers, 1)) as pool,
    ):
        warnings.simplefilter("ignore")  # degenerate resamples give NaN, dropped later
        for start, w in _resample_weights(n, n_resamples, seed, chunk, labels):
            rows = slice(start, start + len(w))
            taus = {
                key: pool.submit(resampled_kendall, w, x_groups[key], y_levels)
                for key in (arrays if kendalls else ())
            }
            y_ranks = _y_ranks(w, y_ties) if y_ties else None
            for key, x in arrays.items():
                if "pearson" in methods:
                    out[key, "pearson"][rows] = _weighted_pearson(w, x, y)
                if y_ranks is not None:
                    out[key, "spearman"][rows] = _spearman_chunk(ties[key], y_ranks)
                elif spearman:  # too many items for exact sums: plain arithmetic
                    out[key, "spearman"][rows] = _weighted_pearson(
                        w, _weighted_ranks(w, x), _weighted_ranks(w, y)
                    )
            for key, task in taus.items():
                tau_b, tau_c = task.result()
                for method in kendalls:
                    out[key, method][rows] = tau_c if method == "kendall_c" else tau_b
            if on_progress is not None:
                on_progress(min((start + len(w)) / n_resamples, 1.0))
    return out


#: Spearman's sums are exact up to this many items (their cube fits a double's mantissa)
_EXACT_RANKS = 200_000


def _tie_groups(x: np.ndarray) -> _Ties:
    order = np.argsort(x, kind="stable")
    xs = x[order]
    first = np.r_[True, xs[1:] != xs[:-1]]
    group = np.empty(x.size, dtype=np.intp)
    group[order] = np.cumsum(first) - 1
    starts = None if first.all() else np.flatnonzero(first)
    return order, starts, group


@dataclass(frozen=True)
class _RankedY:
    """One chunk of resamples as Spearman needs it, shared by every x."""

    counts: np.ndarray  # the weights as int32
    m: np.ndarray  # resample sizes
    wy: np.ndarray  # weight x twice y's centred mid-rank, per item
    syy: np.ndarray  # spread of y's mid-ranks
    sxx_untied: np.ndarray  # spread of the mid-ranks of any x without ties


def _y_ranks(w: np.ndarray, y_ties: _Ties) -> _RankedY:
    counts = w.astype(np.int32)
    m = w.sum(axis=1)
    twice, g = _twice_centred_ranks(counts, y_ties)
    return _RankedY(counts, m, w * twice, _rank_spread(m, g), _rank_spread(m, counts))


def _twice_centred_ranks(counts: np.ndarray, ties: _Ties) -> tuple[np.ndarray, np.ndarray]:
    """Twice each item's weighted mid-rank less the mean rank (m + 1) / 2, as integers, and
    the weight of each tie group (in sorted order)."""
    order, starts, group = ties
    g = np.take(counts, order, axis=1)
    if starts is not None:
        g = np.add.reduceat(g, starts, axis=1, dtype=np.int32)
    # 2 mid-rank - (m + 1) = 2 (weight below) + g + 1 - (m + 1) = 2 cumsum(g) - g - m
    twice = np.cumsum(g, axis=1, dtype=np.int32)
    m = twice[:, -1:].copy()
    twice *= 2
    twice -= g
    twice -= m
    return np.take(twice, group, axis=1), g


def _rank_spread(m: np.ndarray, g: np.ndarray) -> np.ndarray:
    """Sum of squared deviations of the mid-ranks from their mean: (m³ - Σ g³) / 12."""
    return (m * m * m - np.einsum("ij,ij,ij->i", g, g, g, dtype=float)) / 12


def _spearman_chunk(x_ties: _Ties, y: _RankedY) -> np.ndarray:
    """Spearman's rho of each resample, bit for bit ``_weighted_pearson`` of the weighted
    mid-ranks, for less work.

    Every sum there is exact (multiples of 1/4 below 2**51 while the items are at most
    :data:`_EXACT_RANKS`), so these sums may be taken in any order and by any identity: the
    ranks are built in int32 (fast cumulative sums), the mean rank (m + 1) / 2 is known, and
    the spread of x's ranks needs only its tie groups' weights.
    """
    twice, g = _twice_centred_ranks(y.counts, x_ties)
    sxx = y.sxx_untied if x_ties[1] is None else _rank_spread(y.m, g)
    sxy = np.einsum("ij,ij->i", twice, y.wy, dtype=float) / 4
    return sxy / np.sqrt(sxx * y.syy)


def group_labels(groups: Sequence[int] | np.ndarray | None, n: int) -> np.ndarray | None:
    """Each pair's group as 0..G-1 in order of first appearance; None when every pair is
    its own group (the plain bootstrap, drawn the same way)."""
    if groups is None:
        return None
    g = np.asarray(groups)
    if g.shape != (n,):
        raise InputError(f"`groups` must be one label per pair ({n}; got shape {g.shape})")
    _, first, inverse = np.unique(g, return_index=True, return_inverse=True)
    if first.size == n:
        return None
    order = np.argsort(np.argsort(first, kind="stable"), kind="stable")
    return order[inverse.ravel()]


def _resample_weights(
    n: int, n_resamples: int, seed: int | None, chunk: int, groups: np.ndarray | None = None
):
    """``(start, weights)`` per chunk: how often each resample draws each item. The draws are
    ``rng.integers(0, n, size=(chunk, n))`` in order, so they match an index-based loop.
    With ``groups`` (labels 0..G-1) the draws are of groups, and each item weighs as its
    group."""
    size = n if groups is None else int(groups.max()) + 1
    rng = seeded(seed)
    for start in range(0, n_resamples, chunk):
        rows = min(chunk, n_resamples - start)
        idx = rng.integers(0, size, size=(rows, size))
        flat = (idx + (np.arange(rows) * size)[:, None]).ravel()
        w = np.bincount(flat, minlength=rows * size).reshape(rows, size).astype(float)
        yield start, w if groups is None else w[:, groups]


def _weighted_pearson(w: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Pearson's r of each resample; ``x``/``y`` 1-D (shared) or one row per resample."""
    m = w.sum(axis=1)
    x, y = tame(x), tame(y)
    if x.ndim == 1 and y.ndim == 1:
        # centred first, so the sums of squares do not cancel
        xc, yc = x - x.mean(), y - y.mean()
        sums = w @ np.stack([xc, yc, xc * xc, yc * yc, xc * yc], axis=1)
        sx, sy, sxx, syy, sxy = sums.T
        spread_x, spread_y = sxx - sx * sx / m, syy - sy * sy / m
        r = (sxy - sx * sy / m) / np.sqrt(spread_x * spread_y)
        # a resample drawing one value of a side leaves rounding, not 0, in its spread; scipy
        # gives NaN there, so rows whose spread is within rounding are checked exactly
        for side, spread, squares in ((x, spread_x, sxx), (y, spread_y, syy)):
            near = np.flatnonzero(spread <= 1e-9 * squares)
            if near.size:
                drawn = w[near] > 0
                low = np.where(drawn, side, np.inf).min(axis=1)
                high = np.where(drawn, side, -np.inf).max(axis=1)
                r[near[low == high]] = np.nan
        return np.clip(r, -1.0, 1.0)  # as scipy's pearsonr: rounding can pass 1 by an ulp
    # rows of mid-ranks (Spearman beyond exact sums): half-integers, a constant side is exact
    x = np.broadcast_to(x, w.shape)
    y = np.broadcast_to(y, w.shape)
    x = x - (w * x).sum(1, keepdims=True) / m[:, None]
    y = y - (w * y).sum(1, keepdims=True) / m[:, None]
    sxx, syy, sxy = (w * x * x).sum(1), (w * y * y).sum(1), (w * x * y).sum(1)
    return np.clip(sxy / np.sqrt(sxx * syy), -1.0, 1.0)


def _weighted_ranks(w: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Mid-ranks of ``x`` within each resample (an item drawn k times fills k ranks)."""
    order = np.argsort(x, kind="stable")
    xs = x[order]
    first = np.r_[True, xs[1:] != xs[:-1]]
    group = np.cumsum(first) - 1  # tie group of each sorted position
    starts = np.flatnonzero(first)
    group_w = np.add.reduceat(w[:, order], starts, axis=1)  # (resamples, groups)
    below = np.cumsum(group_w, axis=1) - group_w
    mid = below + (group_w + 1) / 2
    ranks = np.empty_like(w)
    ranks[:, order] = mid[:, group]
    return ranks
