"""Williams (1959) test for two dependent correlations sharing one variable (metric-spec §8).

Used as in Graham & Baldwin (EMNLP 2014) to ask whether metric A correlates with humans
better than metric B on the same items: r12 = corr(human, A), r13 = corr(human, B),
r23 = corr(A, B). Like the WMT scripts (and nlpstats), the **absolute values** of the three
correlations are used, so a metric where lower is better is compared by strength.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd
from scipy import stats

from capeval_core.errors import InputError
from capeval_core.options import is_whole
from capeval_core.stats.correlation import correlate, p_text
from capeval_core.stats.intervals import check_aligned

Alternative = Literal["greater", "two-sided"]
#: how far below 0 rounding takes |R| of correlations computed from one set of scores
_ROUNDING = 1e-9


@dataclass(frozen=True)
class WilliamsResult:
    """``statistic`` (t), ``pvalue``, ``df`` = n - 3, and the arithmetic behind them."""

    statistic: float
    pvalue: float
    df: int
    n: int
    r12: float
    r13: float
    r23: float
    det_r: float  # |R| = 1 - r12² - r13² - r23² + 2·r12·r13·r23
    alternative: str
    method: str = "williams"

    def __str__(self) -> str:
        """One line, p written as the Significance page's tables write it.

        >>> print(williams_test(0.65, 0.55, 0.30, 50))
        Williams t = 0.8161, df = 47, p = 0.2093 (greater)
        >>> print(williams_test(0.9, 0.8, 0.85, 100))
        Williams t = 4.1264, df = 97, p < 0.001 (greater)
        """
        return (
            f"Williams t = {self.statistic:.4f}, df = {self.df}, {p_text(self.pvalue)} "
            f"({self.alternative})"
        )


def _tied(r12: float, r13: float) -> bool:
    """Equal correlations (to 12 decimals, as rankings compare them): t = 0."""
    return round(r12, 12) == round(r13, 12)


def williams_test(
    r12: float,
    r13: float,
    r23: float,
    n: int,
    alternative: Alternative = "greater",
    *,
    absolute: bool = True,
) -> WilliamsResult:
    """Is corr(human, A) = ``r12`` higher than corr(human, B) = ``r13``?

    t = (r12 − r13)·sqrt((n − 1)(1 + r23) / D) with
    D = 2·((n − 1)/(n − 3))·|R| + ((r12 + r13)/2)²·(1 − r23)³,
    df = n − 3; ``"greater"``: p = P(T > t); ``"two-sided"``: p = 2·P(T > |t|).

    >>> r = williams_test(0.65, 0.55, 0.30, 50)
    >>> round(r.statistic, 6), round(r.pvalue, 7)
    (0.816078, 0.2092862)
    """
    if not is_whole(n):
        raise InputError(f"`n` must be a whole number of items (got {n!r})")
    if n <= 3:
        raise InputError(f"the Williams test needs n > 3 items (got {n})")
    if alternative not in ("greater", "two-sided"):
        raise InputError(f"`alternative` must be 'greater' or 'two-sided' (got {alternative!r})")
    for name, r in (("r12", r12), ("r13", r13), ("r23", r23)):
        if isinstance(r, bool) or not isinstance(r, int | float | np.integer | np.floating):
            raise InputError(f"`{name}` must be a correlation, a number (got {r!r})")
        if abs(r) > 1:  # NaN passes: a correlation that is not defined gives NaN below
            raise InputError(f"`{name}` must be a correlation, between -1 and 1 (got {r})")
    if absolute:
        r12, r13, r23 = abs(r12), abs(r13), abs(r23)
    det_r = 1 - r12**2 - r13**2 - r23**2 + 2 * r12 * r13 * r23
    if det_r < -_ROUNDING:
        raise InputError(
            f"r12 = {r12}, r13 = {r13} and r23 = {r23} cannot come from one set of scores "
            f"(the determinant of their matrix, |R| = {det_r:.3g}, is below 0)"
        )
    det_r = max(det_r, 0.0)  # rounding below 0, e.g. A and B the same scores
    denom = 2 * ((n - 1) / (n - 3)) * det_r + ((r12 + r13) / 2) ** 2 * (1 - r23) ** 3
    if not all(math.isfinite(v) for v in (r12, r13, r23)):
        t = math.nan
    elif _tied(r12, r13):
        # no difference to test, however small |R| is: a metric and its copy gave NaN or
        # p = 1 by the last bit of rounding
        t = 0.0
    elif denom <= 0:
        t = math.nan
    else:
        t = (r12 - r13) * math.sqrt((n - 1) * (1 + r23) / denom)
    df = n - 3
    if math.isnan(t):
        p = math.nan
    elif alternative == "greater":
        p = float(stats.t.sf(t, df))
    else:
        p = float(min(1.0, 2 * stats.t.sf(abs(t), df)))
    return WilliamsResult(float(t), p, df, n, r12, r13, r23, float(det_r), alternative)


@dataclass(frozen=True)
class WilliamsMatrix:
    """p-values for "row metric beats column metric", metrics ordered by |r| with humans."""

    metrics: tuple[str, ...]
    pvalues: np.ndarray
    human_correlations: Mapping[str, float]
    correlation: str
    alternative: str
    n: int
    #: pairs (A, B, r) whose scores, each turned to agree with the humans, correlate
    #: negatively (r): their test takes |r| (as WMT's), and its p is smaller than the signed
    #: test's (Graham & Baldwin's script)
    opposed: tuple[tuple[str, str, float], ...] = ()

    def to_frame(self) -> pd.DataFrame:
        return pd.DataFrame(self.pvalues, index=list(self.metrics), columns=list(self.metrics))

    def settings(self) -> dict[str, object]:
        """The test's choices, for a download's signatures file."""
        return {"correlation": self.correlation, "alternative": self.alternative, "n": self.n}

    def as_dict(self) -> dict[str, dict[str, float]]:
        return {
            a: {b: float(self.pvalues[i, j]) for j, b in enumerate(self.metrics)}
            for i, a in enumerate(self.metrics)
        }


def correlation_matrix(
    human: Sequence[float], metric_scores: Mapping[str, Sequence[float]], correlation: str
) -> tuple[dict[str, float], np.ndarray]:
    """corr(human, metric) per metric and corr(metric, metric) for every pair. Constant
    scores give NaN with one ConstantInputWarning naming them (not one per pair).

    >>> human, scores = [1, 2, 3, 4, 5], {"a": [1, 2, 3, 5, 4], "b": [2, 1, 4, 3, 5]}
    >>> with_human, between = correlation_matrix(human, scores, "pearson")
    >>> {k: round(v, 4) for k, v in with_human.items()}, between.round(4).tolist()
    ({'a': 0.9, 'b': 0.8}, [[1.0, 0.6], [0.6, 1.0]])
    """
    keys = list(metric_scores)
    # named as the caller's arguments, not correlate's x and y; every Series against the
    # next, so two metrics are compared even where `human` is no Series
    check_aligned(human=human, **{f"metric_scores[{k!r}]": metric_scores[k] for k in keys})
    for name, values in (
        ("the human scores", human),
        *((f"{k!r}", metric_scores[k]) for k in keys),
    ):
        v = np.asarray(values, dtype=float)
        if v.size and bool(np.all(v == v[0])):
            warnings.warn(
                f"{name} are constant: their correlations are not defined (NaN)",
                stats.ConstantInputWarning,
                stacklevel=3,
            )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", stats.ConstantInputWarning)
        with_human = {k: correlate(metric_scores[k], human, correlation).statistic for k in keys}
        between = np.eye(len(keys))
        for i in range(len(keys)):
            for j in range(i + 1, len(keys)):
                r = correlate(metric_scores[keys[i]], metric_scores[keys[j]], correlation)
                between[i, j] = between[j, i] = r.statistic
    return with_human, between


def williams_matrix(
    human: Sequence[float],
    metric_scores: Mapping[str, Sequence[float]],
    correlation: str = "pearson",
    alternative: Alternative = "greater",
) -> WilliamsMatrix:
    """Williams p-value for every ordered pair of metrics (row A vs column B).

    NaN on the diagonal and, for the one-sided test, wherever |r_A| < |r_B|: the reference
    script (Graham & Baldwin) refuses to test a metric that correlates less strongly. Equal
    correlations are tested both ways, t = 0 and p = 0.5, as :func:`williams_test` gives
    them (one pair's test and its cell in the matrix agree).

    >>> m = williams_matrix([1, 2, 3, 4, 5, 6], {"a": [1, 2, 3, 4, 6, 5], "b": [2, 1, 4, 3, 6, 5]})
    >>> m.metrics, bool(np.isnan(m.pvalues[1, 0]))
    (('a', 'b'), True)
    """
    if not isinstance(metric_scores, Mapping):
        raise InputError(
            "`metric_scores` must map each metric's name to its scores "
            f"(got {type(metric_scores).__name__})"
        )
    n = len(human)
    if n <= 3:  # said whatever the scores (a test is run only where one |r| is higher)
        raise InputError(f"the Williams test needs n > 3 items (got {n})")
    for k, v in metric_scores.items():
        if len(v) != n:
            raise InputError(f"scores of {k!r} have {len(v)} items, humans have {n}")
    with_human, between = correlation_matrix(human, metric_scores, correlation)
    keys = list(metric_scores)
    order = sorted(
        range(len(keys)),
        key=lambda i: -abs(with_human[keys[i]]) if np.isfinite(with_human[keys[i]]) else math.inf,
    )
    p = np.full((len(keys), len(keys)), np.nan)
    for a, i in enumerate(order):
        for b, j in enumerate(order):
            if i == j:
                continue
            r12, r13 = abs(with_human[keys[i]]), abs(with_human[keys[j]])
            if alternative == "greater" and not (r12 > r13 or _tied(r12, r13)):
                continue
            p[a, b] = williams_test(r12, r13, between[i, j], n, alternative).pvalue
    ordered = [keys[i] for i in order]
    opposed = tuple(
        (keys[i], keys[j], float(between[i, j] * sign))
        for a, i in enumerate(order)
        for j in order[a + 1 :]
        if (sign := np.sign(with_human[keys[i]]) * np.sign(with_human[keys[j]]))
        and between[i, j] * sign < 0
    )
    return WilliamsMatrix(
        tuple(ordered),
        p,
        {k: float(with_human[k]) for k in ordered},
        correlation,
        alternative,
        n,
        opposed,
    )


def williams_between(
    human: Sequence[float],
    scores_a: Sequence[float],
    scores_b: Sequence[float],
    correlation: str = "pearson",
    alternative: Alternative = "greater",
) -> WilliamsResult:
    """The Williams test of metric A against metric B on the same human scores, with the
    arithmetic: r12 = corr(A, human), r13 = corr(B, human), r23 = corr(A, B) and |R|.

    >>> r = williams_between([1, 2, 3, 4, 5, 6], [1, 2, 3, 4, 6, 5], [2, 1, 4, 3, 6, 5])
    >>> round(r.r12, 4), round(r.r13, 4), r.df
    (0.9429, 0.8286, 3)
    """
    check_aligned(human=human, scores_a=scores_a, scores_b=scores_b)
    n = len(human)
    for name, v in (("scores_a", scores_a), ("scores_b", scores_b)):
        if len(v) != n:
            raise InputError(f"`{name}` has {len(v)} items, `human` has {n}")
    pair = {"scores_a": scores_a, "scores_b": scores_b}
    with_human, between = correlation_matrix(human, pair, correlation)
    return williams_test(
        with_human["scores_a"], with_human["scores_b"], between[0, 1], n, alternative
    )
