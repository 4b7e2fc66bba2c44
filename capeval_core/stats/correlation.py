"""Correlations with human judgments: Pearson, Spearman, Kendall τb/τc (wrapping scipy),
with a seeded percentile-bootstrap confidence interval over items, item- or system-level.

Constant input gives NaN with scipy's ``ConstantInputWarning`` (house style, Statistics).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
from scipy import stats

from capeval_core.errors import InputError

Method = Literal["pearson", "spearman", "kendall_b", "kendall_c"]
METHODS: tuple[str, ...] = ("pearson", "spearman", "kendall_b", "kendall_c")


@dataclass(frozen=True)
class ConfidenceInterval:
    """A bootstrap interval and how it was drawn (so it can be reproduced)."""

    low: float
    high: float
    level: float
    n_resamples: int
    seed: int | None
    method: str = "percentile bootstrap over items"


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

    def confidence_interval(
        self, level: float = 0.95, n_resamples: int = 1000, seed: int | None = 0
    ) -> ConfidenceInterval:
        """Percentile bootstrap over the correlated pairs, seeded and reproducible.

        >>> r = pearson([1, 2, 3, 4, 5, 6], [1, 3, 2, 5, 4, 6])
        >>> r.confidence_interval(seed=1) == r.confidence_interval(seed=1)
        True
        """
        values = bootstrap_statistics(self.x, self.y, self.method, n_resamples, seed)
        values = values[np.isfinite(values)]
        if values.size == 0:
            return ConfidenceInterval(np.nan, np.nan, level, n_resamples, seed)
        alpha = (1 - level) / 2
        low, high = np.quantile(values, [alpha, 1 - alpha])
        return ConfidenceInterval(float(low), float(high), level, n_resamples, seed)

    def __str__(self) -> str:
        return f"{self.method} = {self.statistic:.4f} (p = {self.pvalue:.3g}, n = {self.n})"


def _pair(x: Sequence[float], y: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
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


def correlate(x: Sequence[float], y: Sequence[float], method: str = "pearson") -> CorrelationResult:
    """One of :data:`METHODS` by name."""
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
    """Correlation of per-system means (each system's items averaged first).

    >>> r = system_level([1, 2, 3, 5, 4, 6], [1, 1, 2, 2, 3, 3], ["a", "a", "b", "b", "c", "c"])
    >>> (r.n, r.level, round(r.statistic, 4))
    (3, 'system', 0.9707)
    """
    s, h = _pair(scores, humans)
    if len(systems) != s.size:
        raise InputError(
            f"`systems` must have one entry per item (got {len(systems)} for {s.size} items)"
        )
    names = list(dict.fromkeys(systems))
    index = {n: i for i, n in enumerate(names)}
    codes = np.array([index[v] for v in systems])
    counts = np.bincount(codes, minlength=len(names))
    ms = np.bincount(codes, s, minlength=len(names)) / counts
    mh = np.bincount(codes, h, minlength=len(names)) / counts
    res = correlate(ms, mh, method)
    return CorrelationResult(res.statistic, res.pvalue, res.n, res.method, "system", ms, mh)


def _statistic_fn(method: str) -> Callable[[np.ndarray, np.ndarray], float]:
    if method.startswith("kendall"):
        variant = "c" if method.endswith("c") else "b"
        return lambda a, b: stats.kendalltau(a, b, variant=variant).statistic
    if method == "spearman":
        return lambda a, b: stats.spearmanr(a, b).statistic
    return lambda a, b: stats.pearsonr(a, b).statistic


def bootstrap_statistics(
    x: np.ndarray, y: np.ndarray, method: str, n_resamples: int = 1000, seed: int | None = 0
) -> np.ndarray:
    """The correlation on ``n_resamples`` resamples of the pairs (drawn with replacement).

    Written by hand (not ``scipy.stats.bootstrap``) so Pearson and Spearman can be computed
    for many resamples at once and the index draws are the same for every method.
    """
    rng = np.random.default_rng(seed)
    n = x.size
    out = np.empty(n_resamples)
    chunk = max(1, min(n_resamples, 2_000_000 // max(n, 1)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # degenerate resamples give NaN, dropped later
        for start in range(0, n_resamples, chunk):
            idx = rng.integers(0, n, size=(min(chunk, n_resamples - start), n))
            xs, ys = x[idx], y[idx]
            if method in ("pearson", "spearman"):
                if method == "spearman":
                    xs, ys = stats.rankdata(xs, axis=1), stats.rankdata(ys, axis=1)
                xs = xs - xs.mean(axis=1, keepdims=True)
                ys = ys - ys.mean(axis=1, keepdims=True)
                with np.errstate(invalid="ignore", divide="ignore"):
                    out[start : start + len(idx)] = (xs * ys).sum(1) / np.sqrt(
                        (xs * xs).sum(1) * (ys * ys).sum(1)
                    )
            else:
                fn = _statistic_fn(method)
                for j in range(len(idx)):
                    out[start + j] = fn(xs[j], ys[j])
    return out
