"""Kendall's tau-b and tau-c of many bootstrap resamples from one pass over the pairs
(compiled with numba), equal to ``scipy.stats.kendalltau`` on each resample's drawn pairs.

A resample is the number of times it draws each item (its weights). Walking the items in
x order, tie group by tie group, a Fenwick tree over y's levels holds the weight already
seen (strictly smaller x) at each level, so each drawn item adds its concordant minus
discordant pairs in O(log levels). The same pass counts the tied pairs and the distinct
values of each side, which is everything both variants need: tau-b and tau-c come from
one count, not two. The counts are integers, so the order of the sums does not matter, and
the final arithmetic is scipy's (``kendalltau`` in scipy 1.17), so every value is bit for
bit the one scipy gives on the drawn pairs (the example's values are scipy 1.17.1's
``kendalltau`` of them).

>>> w = np.array([[1.0, 1, 1, 1], [2, 0, 1, 1]])
>>> x, y = np.array([1.0, 2, 3, 4]), np.array([1.0, 3, 2, 4])
>>> b, c = resampled_kendall(w, sorted_groups(x), levels(y))
>>> b.round(6).tolist(), c.round(6).tolist()  # the second draws items 0, 0, 2 and 3
([0.666667, 1.0], [0.666667, 0.9375])
"""

from __future__ import annotations

import numpy as np
from numba import njit

#: m, concordant minus discordant, x-tied pairs, y-tied pairs, distinct x, distinct y
_FIELDS = 6


def sorted_groups(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``x``'s stable sort order and where each tie group starts in it (plus the end)."""
    order = np.argsort(x, kind="stable")
    xs = x[order]
    starts = np.flatnonzero(np.r_[True, xs[1:] != xs[:-1]])
    return order, np.r_[starts, x.size]


def levels(y: np.ndarray) -> tuple[np.ndarray, int]:
    """Each item's level among ``y``'s distinct values (0 the smallest) and their number."""
    values, code = np.unique(y, return_inverse=True)
    return code.astype(np.intp).ravel(), int(values.size)


@njit(cache=True, nogil=True)
def _pair_counts(w, order, starts, code, n_levels):  # pragma: no cover - compiled
    rows, n = w.shape
    out = np.zeros((rows, _FIELDS), np.int64)
    tree = np.zeros(n_levels + 1, np.int64)  # Fenwick tree, 1-based: level l at l + 1
    at_level = np.zeros(n_levels, np.int64)
    level = code[order]  # y's level in x order
    drawn = np.empty(n, np.int64)  # one resample's weights in x order
    for r in range(rows):
        for t in range(n):
            drawn[t] = np.int64(w[r, order[t]])
        tree[:] = 0
        at_level[:] = 0
        total = 0
        s = 0
        xtie = 0
        nx = 0
        for g in range(starts.size - 1):
            group = 0
            for t in range(starts[g], starts[g + 1]):
                lv = level[t]
                less = 0
                k = lv
                while k > 0:
                    less += tree[k]
                    k -= k & -k
                # earlier items have strictly smaller x: `less` have smaller y (concordant),
                # total - less - at_level[lv] larger y (discordant); no branch on c == 0
                s += drawn[t] * (2 * less + at_level[lv] - total)
                group += drawn[t]
            if group == 0:
                continue
            for t in range(starts[g], starts[g + 1]):
                c = drawn[t]
                if c == 0:
                    continue
                lv = level[t]
                at_level[lv] += c
                k = lv + 1
                while k <= n_levels:
                    tree[k] += c
                    k += k & -k
            total += group
            xtie += group * (group - 1) // 2
            nx += 1
        ytie = 0
        ny = 0
        for lv in range(n_levels):
            c = at_level[lv]
            if c > 0:
                ytie += c * (c - 1) // 2
                ny += 1
        out[r, 0] = total
        out[r, 1] = s
        out[r, 2] = xtie
        out[r, 3] = ytie
        out[r, 4] = nx
        out[r, 5] = ny
    return out


def resampled_kendall(
    weights: np.ndarray,
    x_groups: tuple[np.ndarray, np.ndarray],
    y_levels: tuple[np.ndarray, int],
) -> tuple[np.ndarray, np.ndarray]:
    """``(tau_b, tau_c)`` of each row of ``weights`` (draws per item), NaN where a side is
    constant. ``x_groups`` is :func:`sorted_groups` of x, ``y_levels`` :func:`levels` of y;
    both are computed once and shared by every chunk of resamples (and y's by every x)."""
    order, starts = x_groups
    code, n_levels = y_levels
    counts = _pair_counts(
        np.ascontiguousarray(weights, dtype=np.float64), order, starts, code, n_levels
    )
    m, s, xtie, ytie, nx, ny = counts.T
    tot = m * (m - 1) // 2
    degenerate = (xtie == tot) | (ytie == tot)
    with np.errstate(invalid="ignore", divide="ignore"):
        # scipy's expressions, in its order of operations
        b = s / np.sqrt(tot - xtie) / np.sqrt(tot - ytie)
        k = np.minimum(nx, ny)
        c = 2 * s / (m**2 * (k - 1) / k)
    b = np.where(degenerate, np.nan, np.clip(b, -1.0, 1.0))
    c = np.where(degenerate, np.nan, np.clip(c, -1.0, 1.0))
    return b, c
