"""Meta-evaluation tables of a scored JudgmentSet, as the app pages and the bench show them.

Bootstrap intervals are the slow part of a correlation table; they are cached on disk next
to the judgment scores (:func:`~capeval_core.judgments.scoring.scores_cache_dir`), keyed by
the data themselves (a hash of both arrays), the method, the number of resamples, the seed
and the level, so reopening a set shows its intervals at once.
"""

from __future__ import annotations

import hashlib
import json
import math
import warnings
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
from scipy import stats

from capeval_core.judgments.scoring import scores_cache_dir
from capeval_core.resources import atomic_write
from capeval_core.stats.correlation import (
    METHODS,
    ConfidenceInterval,
    CorrelationResult,
    correlate,
    system_level,
)


def _ci_path(result: CorrelationResult, n_resamples: int, seed: int | None, level: float):
    h = hashlib.sha256()
    h.update(np.ascontiguousarray(result.x, dtype=float).tobytes())
    h.update(b"|")
    h.update(np.ascontiguousarray(result.y, dtype=float).tobytes())
    h.update(json.dumps([result.method, n_resamples, seed, level]).encode())
    return scores_cache_dir() / f"ci-{h.hexdigest()[:32]}.json"


def interval(
    result: CorrelationResult,
    level: float = 0.95,
    n_resamples: int = 1000,
    seed: int | None = 0,
    *,
    use_cache: bool = True,
) -> ConfidenceInterval:
    """``result.confidence_interval(...)``, cached on disk.

    >>> r = correlate([1, 2, 3, 4, 5, 6], [1, 3, 2, 5, 4, 6], "spearman")
    >>> interval(r, n_resamples=50, use_cache=False) == r.confidence_interval(n_resamples=50)
    True
    """
    path = _ci_path(result, n_resamples, seed, level) if use_cache else None
    if path is not None and path.is_file():
        try:
            low, high = json.loads(path.read_text())
            return ConfidenceInterval(
                float("nan") if low is None else low,
                float("nan") if high is None else high,
                level,
                n_resamples,
                seed,
            )
        except (OSError, ValueError, TypeError):
            pass  # unreadable entries are recomputed
    ci = result.confidence_interval(level, n_resamples, seed)
    if path is not None:
        with atomic_write(path, "w") as fh:
            fh.write(json.dumps([_finite(ci.low), _finite(ci.high)]))
    return ci


def _finite(v: float) -> float | None:
    return v if math.isfinite(v) else None


def correlation_table(
    human: Sequence[float],
    metric_scores: Mapping[str, Sequence[float]],
    *,
    methods: Sequence[str] = METHODS,
    ci_methods: Sequence[str] | None = None,
    systems: Sequence[str] | None = None,
    n_resamples: int = 1000,
    seed: int | None = 0,
    level: float = 0.95,
    use_cache: bool = True,
) -> pd.DataFrame:
    """One row per (metric, method): statistic, bootstrap interval, p-value, n.

    ``ci_methods`` (default: all ``methods``) get an interval, the others NaN bounds.
    ``systems`` switches to system-level correlations (per-system means; the bootstrap then
    resamples systems).

    >>> t = correlation_table([1, 2, 3, 4, 5], {"m": [1, 2, 4, 3, 5]}, n_resamples=20,
    ...                       use_cache=False)
    >>> list(t["method"]), round(float(t["statistic"].iloc[1]), 2)
    (['pearson', 'spearman', 'kendall_b', 'kendall_c'], 0.9)
    """
    ci_methods = methods if ci_methods is None else ci_methods
    rows = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", stats.ConstantInputWarning)
        for key, values in metric_scores.items():
            for method in methods:
                if systems is None:
                    r = correlate(values, human, method)
                else:
                    r = system_level(values, human, systems, method)
                ci = (
                    interval(r, level, n_resamples, seed, use_cache=use_cache)
                    if method in ci_methods and math.isfinite(r.statistic)
                    else None
                )
                rows.append(
                    {
                        "metric": key,
                        "method": method,
                        "statistic": r.statistic,
                        "ci_low": ci.low if ci else math.nan,
                        "ci_high": ci.high if ci else math.nan,
                        "pvalue": r.pvalue,
                        "n": r.n,
                        "level": r.level,
                    }
                )
    return pd.DataFrame(rows)


def spearman_between(
    metric_scores: Mapping[str, Sequence[float]], order: Sequence[str] | None = None
) -> pd.DataFrame:
    """Metric x metric Spearman's rho (seed Fig. 4a), rows and columns in ``order``.

    >>> spearman_between({"a": [1, 2, 3], "b": [3, 2, 1]}).loc["a", "b"]
    np.float64(-1.0)
    """
    keys = list(order or metric_scores)
    matrix = np.eye(len(keys))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", stats.ConstantInputWarning)
        for i in range(len(keys)):
            for j in range(i + 1, len(keys)):
                r = stats.spearmanr(metric_scores[keys[i]], metric_scores[keys[j]]).statistic
                matrix[i, j] = matrix[j, i] = r
    return pd.DataFrame(matrix, index=keys, columns=keys)
