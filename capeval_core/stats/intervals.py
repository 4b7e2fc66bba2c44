"""Bootstrap intervals: the result type and the percentile interval of resampled statistics,
shared by item-level resampling (:mod:`.correlation`), resampling within systems
(:mod:`.within_systems`) and the judgment analyses.

>>> import numpy as np
>>> ci = percentile_interval(np.array([1.0, 2.0, np.nan, 3.0]), 0.5, 4, 0)  # NaN left out
>>> ci.low, ci.high, ci.left_out
(1.5, 2.5, 1)
"""

from __future__ import annotations

import itertools
import sys
from dataclasses import dataclass

import numpy as np

from capeval_core.errors import InputError
from capeval_core.options import is_whole


@dataclass(frozen=True)
class ConfidenceInterval:
    """A bootstrap interval and how it was drawn (so it can be reproduced). ``left_out``
    resamples had no statistic (a correlation of a resample whose scores on one side are all
    equal) and are not in the percentile interval, which then stands on fewer draws."""

    low: float
    high: float
    level: float
    n_resamples: int
    seed: int | None
    method: str = "percentile bootstrap over items"
    left_out: int = 0


#: the most resamples or trials a run takes: a million resamples of every system's values
#: already take minutes and gigabytes; 10**13 ran until memory ran out, with a traceback
MAX_RESAMPLES = 1_000_000


def check_resamples(n_resamples: object, least: int = 1) -> None:
    """``n_resamples`` a whole number from ``least`` to :data:`MAX_RESAMPLES`, said as the
    argument's name (numpy's own errors name neither; 10**11 asked for 745 GiB)."""
    if not is_whole(n_resamples):
        raise InputError(f"`n_resamples` must be a whole number (got {n_resamples!r})")
    if not least <= n_resamples <= MAX_RESAMPLES:
        raise InputError(
            f"`n_resamples` must be from {least} to {MAX_RESAMPLES:,} (got {n_resamples:,})"
        )


def check_resampling(level: object, n_resamples: object) -> None:
    """``level`` a number strictly between 0 and 1 and ``n_resamples`` a whole number from 1
    to :data:`MAX_RESAMPLES`, said as the argument's name (numpy's own errors name neither).

    >>> check_resampling(95, 1000)
    Traceback (most recent call last):
    capeval_core.errors.InputError: `level` must be between 0 and 1, e.g. 0.95 (got 95)
    """
    real = isinstance(level, int | float | np.integer | np.floating)
    if isinstance(level, bool | np.bool_) or not real or not 0 < level < 1:
        raise InputError(f"`level` must be between 0 and 1, e.g. 0.95 (got {level!r})")
    check_resamples(n_resamples)


def seeded(seed: object) -> np.random.Generator:
    """``numpy.random.default_rng(seed)`` for a seed that is None or a whole number >= 0,
    said as the argument (numpy's own errors for "3", -1 or 1.5 name neither).

    >>> seeded(-1)
    Traceback (most recent call last):
    capeval_core.errors.InputError: `seed` must be None or a whole number >= 0 (got -1)
    """
    if seed is not None and not (is_whole(seed) and seed >= 0):  # type: ignore[operator]
        raise InputError(f"`seed` must be None or a whole number >= 0 (got {seed!r})")
    return np.random.default_rng(seed)  # type: ignore[arg-type]


def check_aligned(**named: object) -> None:
    """Refuse pandas Series whose indexes differ: values are paired by position, as scipy
    pairs them, where pandas' own ``corr`` lines items up by index, so two Series of the
    same items in another order gave another correlation without a word.

    >>> import pandas as pd
    >>> check_aligned(x=pd.Series([1, 2], index=["a", "b"]), y=pd.Series([2, 1], index=["b", "a"]))
    Traceback (most recent call last):
    capeval_core.errors.InputError: `x` and `y` are pandas Series with different indexes: \
values are paired by position; align them first (e.g. y.reindex(x.index)) or pass .to_numpy()
    """
    pd = sys.modules.get("pandas")  # no Series without pandas loaded: nothing imported here
    if pd is None:
        return
    series = [(name, v) for name, v in named.items() if isinstance(v, pd.Series)]
    for (first, a), (other, b) in itertools.pairwise(series):
        if not a.index.equals(b.index):
            raise InputError(
                f"`{first}` and `{other}` are pandas Series with different indexes: values "
                f"are paired by position; align them first (e.g. {other}.reindex({first}.index)) "
                "or pass .to_numpy()"
            )


def is_missing(value: object) -> bool:
    """Whether a label is missing: None, NaN, or pandas' ``pd.NA`` (what an empty cell reads
    as), without importing pandas where it is not loaded.

    >>> is_missing(None), is_missing(float("nan")), is_missing("a"), is_missing(0)
    (True, True, False, False)
    """
    pd = sys.modules.get("pandas")
    nan = isinstance(value, float | np.floating) and bool(np.isnan(value))
    return value is None or nan or (pd is not None and value is pd.NA)


#: the method of an interval whose resamples drew groups of items (a caption's rows)
OVER_GROUPS = "percentile bootstrap over groups of items (a group's items drawn together)"


def percentile_interval(
    values: np.ndarray,
    level: float,
    n_resamples: int,
    seed: int | None,
    method: str = "percentile bootstrap over items",
) -> ConfidenceInterval:
    """The percentile interval of bootstrap ``values`` (NaN, from degenerate resamples, left
    out), shared by :meth:`~capeval_core.stats.correlation.CorrelationResult.confidence_interval`
    and batched callers."""
    finite = values[np.isfinite(values)]
    left_out = int(values.size - finite.size)
    if finite.size == 0:
        return ConfidenceInterval(np.nan, np.nan, level, n_resamples, seed, method, left_out)
    alpha = (1 - level) / 2
    low, high = np.quantile(finite, [alpha, 1 - alpha])
    return ConfidenceInterval(float(low), float(high), level, n_resamples, seed, method, left_out)


def tame(v: np.ndarray) -> np.ndarray:
    """``v`` divided by its largest magnitude where its squares would overflow or underflow,
    before a resampled correlation (values of 1e308 gave an interval of [0, 0], of 1e-170 one
    of [1, 1]); a correlation does not change with the scale, and every other ``v`` is
    returned as it is, so its resamples keep every bit."""
    top = float(np.max(np.abs(v))) if v.size else 0.0
    return v / top if np.isfinite(top) and (top > 1e150 or 0 < top < 1e-150) else v
