"""System-level meta-evaluation: statistics of per-system means, and their bootstrap intervals
by resampling items within each system (issue 32).

With a handful of systems, resampling the systems themselves says little (5 systems give
5**5 resamples, most with repeated systems); machine-translation meta-evaluation (WMT's
metrics task, e.g. Mathur et al. 2020; Freitag et al. 2021) resamples the *items* behind each
system's score instead, which keeps every system and measures how much its mean moves. Each
resample draws, for every system, as many of its items as it has, with replacement; the same
draws serve every metric and the human scores (a paired bootstrap), and each correlation is
taken across the resampled system means.

>>> h = [1, 2, 2, 3, 3, 4, 4, 5, 5, 6]
>>> m = [1, 1, 2, 3, 2, 4, 5, 5, 6, 6]
>>> s = ["a", "a", "b", "b", "c", "c", "d", "d", "e", "e"]
>>> names, means = system_means(m, s)
>>> names, means.tolist()
(('a', 'b', 'c', 'd', 'e'), [1.0, 2.5, 3.0, 5.0, 6.0])
>>> ci = system_intervals({"m": m}, h, s, ("pearson",), n_resamples=200, seed=0)["m", "pearson"]
>>> ci.low <= 1.0 and ci.method
'percentile bootstrap over items within systems'
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import TypeVar

import numpy as np

from capeval_core.errors import InputError
from capeval_core.files import counted
from capeval_core.stats.intervals import (
    ConfidenceInterval,
    check_aligned,
    check_resampling,
    is_missing,
    percentile_interval,
    seeded,
    tame,
)

_K = TypeVar("_K", bound=Hashable)
#: fewest systems a correlation between systems is shown for (two points always give ±1)
MIN_SYSTEMS = 3
WITHIN_SYSTEMS = "percentile bootstrap over items within systems"


def system_codes(systems: Sequence[str | None]) -> tuple[tuple[str, ...], np.ndarray]:
    """System names in first-seen order and each item's index among them; items without a
    system are an error (a system-level statistic needs every item's system): None, and the
    NaN or ``pd.NA`` pandas reads an empty cell as (each was a system of its own, "nan").

    >>> system_codes(["a", "b", "a"])[1].tolist()
    [0, 1, 0]
    >>> system_codes(["a", float("nan")])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    capeval_core.errors.InputError: item 1 has no system (nan): system level needs one for ...
    """
    systems = list(systems)
    for i, s in enumerate(systems):
        if is_missing(s):
            raise InputError(f"item {i} has no system ({s}): system level needs one for every item")
    names = tuple(dict.fromkeys(systems))  # type: ignore[arg-type]
    index = {n: i for i, n in enumerate(names)}
    return names, np.array([index[s] for s in systems], dtype=np.intp)


def system_means(
    values: Sequence[float], systems: Sequence[str | None]
) -> tuple[tuple[str, ...], np.ndarray]:
    """``(system names, mean value per system)``."""
    check_aligned(values=values, systems=systems)
    names, codes = system_codes(systems)
    v = np.asarray(values, dtype=float)
    if v.shape != codes.shape:
        raise InputError(f"`values` has {v.size} items, `systems` {codes.size}")
    counts = np.bincount(codes, minlength=len(names))
    return names, np.bincount(codes, v, minlength=len(names)) / counts


def check_enough_systems(n_systems: int) -> None:
    """Refuse a system-level correlation across fewer than :data:`MIN_SYSTEMS` systems,
    one message for every caller (a table, a matrix, one correlation)."""
    why = too_few_systems(n_systems)
    if why:
        raise InputError(f"no system-level correlation can be shown: {why}")


def too_few_systems(n_systems: int) -> str | None:
    """Why no system-level correlation can be shown, or None when it can.

    >>> too_few_systems(2)
    'only 2 systems: a correlation across fewer than 3 systems is always ±1 or undefined'
    """
    if n_systems >= MIN_SYSTEMS:
        return None
    return (
        f"only {counted(n_systems, 'system')}: a correlation across fewer "
        f"than {MIN_SYSTEMS} systems is always ±1 or undefined"
    )


def resampled_means(
    arrays: Mapping[_K, np.ndarray],
    codes: np.ndarray,
    n_systems: int,
    n_resamples: int,
    seed: int | None,
) -> dict[_K, np.ndarray]:
    """``(n_resamples, n_systems)`` means of each array, items resampled within systems with
    ``default_rng(seed)`` (system by system, in order of first appearance)."""
    rng = seeded(seed)
    out = {k: np.empty((n_resamples, n_systems)) for k in arrays}
    for s in range(n_systems):
        members = np.flatnonzero(codes == s)
        # chunks of resamples keep the index array near 2 million cells
        chunk = max(1, min(n_resamples, 2_000_000 // max(members.size, 1)))
        for start in range(0, n_resamples, chunk):
            rows = min(chunk, n_resamples - start)
            idx = members[rng.integers(0, members.size, size=(rows, members.size))]
            for k, v in arrays.items():
                out[k][start : start + rows, s] = v[idx].mean(axis=1)
    return out


def rowwise(method: str, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The correlation of each row of ``x`` with the same row of ``y`` (few columns: the
    systems), as scipy defines it; NaN where a row is constant, or holds a NaN."""
    with np.errstate(invalid="ignore", divide="ignore"):
        if method == "pearson":
            r = _pearson_rows(x, y)
        elif method == "spearman":
            from scipy.stats import rankdata

            r = _pearson_rows(rankdata(x, axis=1), rankdata(y, axis=1))
        elif method in ("kendall_b", "kendall_c", "kendall"):
            i, j = np.triu_indices(x.shape[1], k=1)
            sx, sy = np.sign(x[:, i] - x[:, j]), np.sign(y[:, i] - y[:, j])
            s = (sx * sy).sum(axis=1)
            if method == "kendall_c":
                n = x.shape[1]
                m = np.minimum(_distinct(x), _distinct(y))
                r = np.where(m > 1, 2 * s / (n * n * (m - 1) / m), np.nan)
            else:
                r = s / np.sqrt((sx * sx).sum(axis=1) * (sy * sy).sum(axis=1))
        else:
            raise InputError(f"unknown correlation {method!r}")
    return np.where(_constant_rows(x) | _constant_rows(y), np.nan, r)


def _constant_rows(a: np.ndarray) -> np.ndarray:
    """Rows that are constant up to the rounding of their means (the means of one repeated
    value differ in the last bits: a correlation of rounding, not of scores), or hold NaN
    (rankdata and the signs would rank NaN, scipy gives NaN)."""
    spread = np.ptp(a, axis=1)
    return np.isnan(spread) | (spread <= 64 * np.finfo(float).eps * np.abs(a).max(axis=1))


def _pearson_rows(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    x = x - x.mean(axis=1, keepdims=True)
    y = y - y.mean(axis=1, keepdims=True)
    r = (x * y).sum(axis=1) / np.sqrt((x * x).sum(axis=1) * (y * y).sum(axis=1))
    return np.clip(r, -1.0, 1.0)  # as scipy's pearsonr: rounding can pass 1 by an ulp


def _distinct(a: np.ndarray) -> np.ndarray:
    s = np.sort(a, axis=1)
    return 1 + (np.diff(s, axis=1) != 0).sum(axis=1)


def system_intervals(
    metric_scores: Mapping[_K, Sequence[float]],
    human: Sequence[float],
    systems: Sequence[str | None],
    methods: Sequence[str],
    *,
    level: float = 0.95,
    n_resamples: int = 1000,
    seed: int | None = 0,
) -> dict[tuple[_K, str], ConfidenceInterval]:
    """Percentile interval of each (metric, method) system-level correlation with humans,
    items resampled within systems (the same draws for every metric and method)."""
    check_resampling(level, n_resamples)
    check_aligned(
        human=human,
        **{f"metric_scores[{k!r}]": v for k, v in metric_scores.items()},
        systems=systems,
    )
    names, codes = system_codes(systems)
    # tamed as the item-level resamples are: no mean or square past the largest float
    arrays: dict = {k: tame(np.asarray(v, dtype=float)) for k, v in metric_scores.items()}
    key = object()
    arrays[key] = tame(np.asarray(human, dtype=float))
    means = resampled_means(arrays, codes, len(names), n_resamples, seed)
    out: dict[tuple[_K, str], ConfidenceInterval] = {}
    for k in metric_scores:
        # a NaN score makes the statistic NaN (scipy's), and so every resample, as at item
        # level: not an interval from the resamples that happen to miss it
        nan = bool(np.isnan(arrays[k]).any() or np.isnan(arrays[key]).any())
        for method in methods:
            values = np.full(n_resamples, np.nan) if nan else rowwise(method, means[k], means[key])
            out[k, method] = percentile_interval(values, level, n_resamples, seed, WITHIN_SYSTEMS)
    return out
