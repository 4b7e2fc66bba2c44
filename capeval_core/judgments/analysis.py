"""Meta-evaluation tables of a scored JudgmentSet, as the app pages and the bench show them.

Bootstrap intervals are the slow part of a correlation table; they are cached on disk next
to the judgment scores (:func:`~capeval_core.batch.scores_cache_dir`), keyed by
the data themselves (a hash of both arrays), the method, the number of resamples, the seed
and the level, so reopening a set shows its intervals at once.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

from capeval_core.batch import scores_cache_dir
from capeval_core.errors import InputError
from capeval_core.resources import discard_damaged, write_cache_entry
from capeval_core.stats.combined import SubsetResult, rank_subsets
from capeval_core.stats.correlation import (
    METHODS,
    ConfidenceInterval,
    CorrelationResult,
    bootstrap_many,
    correlate,
    group_labels,
    percentile_interval,
    system_level,
)
from capeval_core.stats.intervals import check_aligned
from capeval_core.stats.within_systems import (
    check_enough_systems,
    system_codes,
    system_intervals,
    system_means,
)


def _ci_path(
    result: CorrelationResult, n_resamples: int, seed: int | None, level: float
) -> Path | None:
    """Where the interval is cached; None for ``seed=None`` (fresh resamples each call: a
    cache returned the first call's draw every time)."""
    if seed is None:
        return None
    h = hashlib.sha256()
    h.update(np.ascontiguousarray(result.x, dtype=float).tobytes())
    h.update(b"|")
    h.update(np.ascontiguousarray(result.y, dtype=float).tobytes())
    if result.items is not None:  # system level: the items behind the means decide
        scores, humans, systems = result.items
        h.update(np.ascontiguousarray(scores, dtype=float).tobytes())
        h.update(np.ascontiguousarray(humans, dtype=float).tobytes())
        h.update(json.dumps(list(systems)).encode())
    if result.groups is not None:  # a cluster bootstrap draws other resamples
        h.update(b"|groups|")
        h.update(np.ascontiguousarray(result.groups, dtype=np.int64).tobytes())
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
    ci = _cached_ci(path, level, n_resamples, seed, result.interval_method)
    if ci is None:
        ci = result.confidence_interval(level, n_resamples, seed)
        _store_ci(path, ci)
    return ci


def _intervals(
    results: Mapping[tuple[str, str], CorrelationResult],
    level: float,
    n_resamples: int,
    seed: int | None,
    use_cache: bool,
    on_progress: Callable[[float], None] | None = None,
) -> dict[tuple[str, str], ConfidenceInterval]:
    """:func:`interval` of each (metric, method) result, all sharing one ``y`` (and its
    ``groups``). The cache
    misses are bootstrapped together (one :func:`bootstrap_many` per set of missing methods),
    which draws the resamples once instead of once per interval. ``on_progress`` hears the
    share of the bootstrap done (0 to 1)."""
    cis: dict[tuple[str, str], ConfidenceInterval] = {}
    paths = {}
    missing: dict[str, list[str]] = {}
    for (key, method), r in results.items():
        paths[key, method] = _ci_path(r, n_resamples, seed, level) if use_cache else None
        ci = _cached_ci(paths[key, method], level, n_resamples, seed, r.interval_method)
        if ci is None:
            missing.setdefault(key, []).append(method)
        else:
            cis[key, method] = ci
    by_methods: dict[tuple[str, ...], list[str]] = {}
    for key, methods in missing.items():
        by_methods.setdefault(tuple(methods), []).append(key)
    n_calls = len(by_methods)
    for g, (methods, keys) in enumerate(by_methods.items()):
        xs = {key: results[key, methods[0]].x for key in keys}
        first = results[keys[0], methods[0]]
        step = None
        if on_progress is not None:
            step = lambda done, g=g: on_progress((g + done) / n_calls)  # noqa: E731
        values = bootstrap_many(xs, first.y, methods, n_resamples, seed, step, groups=first.groups)
        for key in keys:
            for method in methods:
                ci = percentile_interval(
                    values[key, method], level, n_resamples, seed, first.interval_method
                )
                _store_ci(paths[key, method], ci)
                cis[key, method] = ci
    return cis


def _cached_ci(
    path: Path | None, level: float, n_resamples: int, seed: int | None, method: str
) -> ConfidenceInterval | None:
    if path is None or not path.is_file():
        return None
    try:
        bounds = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError, RecursionError) as exc:
        return _discard_ci(path, f"unreadable: {type(exc).__name__}")

    def bound(b: object) -> bool:
        return b is None or (isinstance(b, int | float) and not isinstance(b, bool))

    if isinstance(bounds, list) and len(bounds) in (2, 3) and all(map(bound, bounds[:2])):
        # written before entries counted the resamples left out ([low, high]) or carried a
        # checksum ([low, high, left out]): drawn again
        return None
    if not isinstance(bounds, dict) or set(bounds) != {"bounds", "sha256"}:
        return _discard_ci(path, "expected {bounds, sha256}")
    bounds, check = bounds["bounds"], bounds["sha256"]
    if check != _checksum(bounds):  # a changed digit is valid JSON and a number all the same
        return _discard_ci(path, "its bounds do not match their checksum")
    if not (
        isinstance(bounds, list)
        and len(bounds) == 3
        and all(map(bound, bounds[:2]))
        and type(bounds[2]) is int
        and 0 <= bounds[2] <= n_resamples
        # no bounds exactly when every resample was left out, and low <= high
        and (bounds[0] is None) == (bounds[1] is None) == (bounds[2] == n_resamples)
        and (bounds[0] is None or bounds[0] <= bounds[1])
    ):
        return _discard_ci(path, "expected [low, high, resamples left out]")
    low, high = (float("nan") if b is None else float(b) for b in bounds[:2])
    return ConfidenceInterval(low, high, level, n_resamples, seed, method, bounds[2])


def _discard_ci(path: Path, reason: str) -> None:
    """Delete a damaged interval entry (it is bootstrapped again), saying so once."""
    discard_damaged(path, "confidence-interval cache entry", reason, "it is computed again")


def _store_ci(path: Path | None, ci: ConfidenceInterval) -> None:
    if path is not None:
        bounds = [_finite(ci.low), _finite(ci.high), ci.left_out]
        text = json.dumps({"bounds": bounds, "sha256": _checksum(bounds)})
        write_cache_entry(path, lambda fh: fh.write(text), "w")


def _checksum(bounds: object) -> str:
    """SHA-256 of an interval entry's bounds as written (JSON), which the entry carries."""
    return hashlib.sha256(json.dumps(bounds).encode()).hexdigest()


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
    on_progress: Callable[[float], None] | None = None,
    groups: Sequence[int] | np.ndarray | None = None,
) -> pd.DataFrame:
    """One row per (metric, method): statistic, bootstrap interval, p-value, n.
    ``ci_left_out`` counts the interval's resamples that had no correlation (one side's
    scores all equal in them, as with few items and coarse human scores): the interval is
    drawn from the others.

    ``ci_methods`` (default: all ``methods``) get an interval, the others NaN bounds.
    ``systems`` switches to system-level correlations (per-system means; the bootstrap then
    resamples the items within each system, as machine-translation meta-evaluation does;
    fewer than 3 systems is an error saying so). ``groups`` (item level: the caption of each
    row, ``JudgmentSet.resampling_groups``) makes the bootstrap draw whole captions.
    ``on_progress`` hears the share of the bootstrap done (0 to 1); a table whose intervals
    are all cached reports nothing.

    >>> t = correlation_table([1, 2, 3, 4, 5], {"m": [1, 2, 4, 3, 5]}, n_resamples=20,
    ...                       use_cache=False)
    >>> list(t["method"]), round(float(t["statistic"].iloc[1]), 2)
    (['pearson', 'spearman', 'kendall_b', 'kendall_c'], 0.9)
    """
    ci_methods = methods if ci_methods is None else ci_methods
    _check_pairs(human, metric_scores, systems)
    if systems is not None:
        _check_systems(systems)
    labels = group_labels(groups, len(human)) if systems is None else None
    results = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", stats.ConstantInputWarning)
        for key, values in metric_scores.items():
            for method in methods:
                if systems is None:
                    r = correlate(values, human, method)
                    if labels is not None:
                        r = dataclasses.replace(r, groups=labels)
                else:
                    r = system_level(values, human, systems, method)
                results.append((key, method, r))
    wanted = {
        (key, r.method): r
        for key, method, r in results
        if method in ci_methods and math.isfinite(r.statistic)
    }
    if systems is None:
        cis = _intervals(wanted, level, n_resamples, seed, use_cache, on_progress)
    elif not wanted:
        cis = {}
    else:  # items resampled within systems (see capeval_core.stats.within_systems)
        wanted_keys = list(dict.fromkeys(key for key, _ in wanted))
        cis = {
            km: ci
            for km, ci in system_intervals(
                {k: metric_scores[k] for k in wanted_keys},
                human,
                systems,
                [m for m in ci_methods if m in methods],
                level=level,
                n_resamples=n_resamples,
                seed=seed,
            ).items()
            if km in wanted
        }
    rows = []
    for key, method, r in results:
        ci = cis.get((key, r.method)) if method in ci_methods else None
        rows.append(
            {
                "metric": key,
                "method": method,
                "statistic": r.statistic,
                "ci_low": ci.low if ci else math.nan,
                "ci_high": ci.high if ci else math.nan,
                "ci_left_out": ci.left_out if ci else 0,
                "pvalue": r.pvalue,
                "n": r.n,
                "level": r.level,
            }
        )
    return pd.DataFrame(rows)


def _check_systems(systems: Sequence[str | None]) -> None:
    names, _ = system_codes(systems)
    check_enough_systems(len(names))


def _check_pairs(
    human: Sequence[float],
    metric_scores: Mapping[str, Sequence[float]],
    systems: Sequence[str | None] | None = None,
) -> None:
    """Every metric's scores aligned with ``human`` and as many, said with the caller's
    arguments (correlate's own errors name its `x` and `y`)."""
    named = {f"metric_scores[{k!r}]": v for k, v in metric_scores.items()}
    check_aligned(human=human, **named, systems=systems)
    for name, values in named.items():
        if np.ndim(values) != 1 or np.shape(values) != np.shape(human):
            raise InputError(
                f"`human` and `{name}` must be 1-D of the same length (got "
                f"{np.shape(human)} and {np.shape(values)})"
            )


def at_level(
    human: Sequence[float],
    metric_scores: Mapping[str, Sequence[float]],
    systems: Sequence[str | None] | None,
) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """The human scores and metric scores at the chosen level: as they are (``systems`` None)
    or one mean per system, so every statistic of a system-level view uses system values.

    >>> h, m = at_level([1, 2, 3, 4], {"m": [0, 2, 4, 4]}, ["a", "a", "b", "b"])
    >>> h.tolist(), m["m"].tolist()
    ([1.5, 3.5], [1.0, 4.0])
    """
    check_aligned(
        human=human,
        **{f"metric_scores[{k!r}]": v for k, v in metric_scores.items()},
        systems=systems,
    )
    if systems is None:
        return np.asarray(human, dtype=float), {
            k: np.asarray(v, dtype=float) for k, v in metric_scores.items()
        }
    return system_means(human, systems)[1], {
        k: system_means(v, systems)[1] for k, v in metric_scores.items()
    }


def spearman_between(
    metric_scores: Mapping[str, Sequence[float]],
    order: Sequence[str] | None = None,
    systems: Sequence[str | None] | None = None,
) -> pd.DataFrame:
    """Metric x metric Spearman's rho (seed Fig. 4a), rows and columns in ``order``; with
    ``systems``, between the metrics' system means (fewer than 3 systems: an error).

    >>> spearman_between({"a": [1, 2, 3], "b": [3, 2, 1]}).loc["a", "b"]
    np.float64(-1.0)
    """
    check_aligned(**{f"metric_scores[{k!r}]": v for k, v in metric_scores.items()}, systems=systems)
    if systems is not None:
        _check_systems(systems)
        metric_scores = {k: system_means(v, systems)[1] for k, v in metric_scores.items()}
    keys = list(order or metric_scores)
    matrix = np.eye(len(keys))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", stats.ConstantInputWarning)
        for i in range(len(keys)):
            for j in range(i + 1, len(keys)):
                r = stats.spearmanr(metric_scores[keys[i]], metric_scores[keys[j]]).statistic
                matrix[i, j] = matrix[j, i] = r
    return pd.DataFrame(matrix, index=keys, columns=keys)


@dataclass(frozen=True)
class CorrelationReport:
    """What the Correlations page shows: the correlation table, the metric x metric
    Spearman matrix and the combined metric's subsets, with the choices that made them."""

    table: pd.DataFrame  # one row per (metric, method), as correlation_table gives it
    between: pd.DataFrame  # metric x metric Spearman, ordered by |rho| with humans
    combined: tuple[SubsetResult, ...]  # best first
    human_name: str
    level: str  # "item" or "system"
    n_resamples: int
    seed: int
    ci_kendall: bool = True
    #: the item-level bootstrap drew whole captions (``groups``), not rows
    grouped: bool = False
    #: the correlation the combined metric's subsets are ranked on
    combined_on: str = "pearson"

    def settings(self) -> dict[str, object]:
        """The choices behind the numbers, for a download's signatures file: with the
        metrics' signatures and the set, they reproduce the table."""
        return {
            "human": self.human_name,
            "level": self.level,
            "resamples": self.n_resamples,
            "seed": self.seed,
            "kendall_intervals": self.ci_kendall,
            "resampled": "captions" if self.grouped else "items",
            "combined_ranked_on": self.combined_on,
        }


def correlation_report(
    human: Sequence[float],
    metric_scores: Mapping[str, Sequence[float]],
    *,
    human_name: str = "human",
    systems: Sequence[str | None] | None = None,
    n_resamples: int = 1000,
    seed: int = 0,
    ci_kendall: bool = True,
    combined_on: str = "pearson",
    use_cache: bool = True,
    on_progress: Callable[[float], None] | None = None,
    groups: Sequence[int] | np.ndarray | None = None,
) -> CorrelationReport:
    """Every correlation of ``metric_scores`` with ``human`` with bootstrap intervals
    (:func:`correlation_table`; Pearson and Spearman only unless ``ci_kendall``), the metric
    x metric Spearman matrix ordered by each metric's |Spearman| with the humans (NaN last),
    and the combined metric over every subset of the metrics ranked on ``combined_on``
    (:func:`~capeval_core.stats.rank_subsets`). With ``systems`` all three are at system
    level (system means; the bootstrap resamples items within systems); ``groups`` as
    :func:`correlation_table`'s. ``on_progress`` hears the share of the bootstrap done (0 to
    1); ``use_cache`` keeps the intervals on disk.

    >>> r = correlation_report([1, 2, 3, 4, 5], {"a": [1, 2, 3, 5, 4], "b": [5, 1, 2, 3, 4]},
    ...                        n_resamples=20, ci_kendall=False, use_cache=False)
    >>> list(r.between.index), r.combined[0].name, r.level
    (['a', 'b'], 'a', 'item')
    """
    ci_methods = ("pearson", "spearman", "kendall_b", "kendall_c")
    table = correlation_table(
        human,
        metric_scores,
        ci_methods=ci_methods if ci_kendall else ("pearson", "spearman"),
        systems=systems,
        n_resamples=n_resamples,
        seed=seed,
        use_cache=use_cache,
        on_progress=on_progress,
        groups=groups,
    )
    spear = {}
    if len(table):  # no metrics: an empty table without columns
        rows = table[table["method"] == "spearman"]
        spear = dict(zip(rows["metric"], rows["statistic"], strict=True))
    order = sorted(
        metric_scores, key=lambda k: -abs(spear[k]) if math.isfinite(spear[k]) else math.inf
    )
    # at system level the heatmap and the combined metric use system means, like the table
    level_human, level_values = at_level(human, metric_scores, systems)
    combined = rank_subsets(level_human, level_values, combined_on) if metric_scores else ()
    return CorrelationReport(
        table,
        spearman_between(metric_scores, order, systems),
        combined,
        human_name,
        "item" if systems is None else "system",
        n_resamples,
        seed,
        ci_kendall,
        grouped=systems is None and group_labels(groups, len(human)) is not None,
        combined_on=combined_on,
    )
