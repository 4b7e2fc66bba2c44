"""Bootstrap intervals and paired significance tests between captioning systems.

sacrebleu's conventions (Post 2018; its ``significance`` module): resample *images* and
recompute each metric's corpus value as the metric aggregates it (through
:class:`~capeval_core.metrics.statistics.ItemStatistics`: BLEU's and METEOR's summed
statistics, CIDEr-D's IDF from the resampled references, means otherwise), not the mean of
per-image values.

- Bootstrap (Koehn 2004): ``n_resamples`` resamples of the images with replacement, drawn by
  ``numpy.random.default_rng(seed)``; every system is scored on the same resamples (paired).
  The interval is sacrebleu's: the sorted resampled values at ``floor(R (1 - level) / 2)``
  from either end.
- Paired bootstrap test (sacrebleu's, after the Moses script): the p-value compares the
  observed absolute difference with the resampled absolute differences centred on their
  mean. This is not a two-sided test: the resampled differences lie around the observed
  one, so the count sees one tail, and p is about half a two-sided test's. ``"both"``
  reports the larger p, which is approximate randomization's (two-sided) whenever the
  bootstrap's is smaller.
- One image: a paired test on one item carries no information (every resample is that
  image; every swap gives the same absolute difference), so both p-values are NaN, with
  ``scipy.stats.DegenerateDataWarning``, and :attr:`PairedResult.p_value` is NaN (the
  bootstrap's was 1 / (R + 1), the least there is: "significant"). Images that all differ
  alike keep the bootstrap's p: its null has no spread, so p is 1 / (R + 1), as its
  interval (the difference, zero width) says; randomization tests them too.
- Approximate randomization (Riezler & Maxwell 2005): ``n_trials`` times, each image's two
  captions are swapped with probability 1/2 (references fixed); the p-value compares the
  observed absolute difference with the pseudo-systems' absolute differences.
- p-values are ``(c + 1) / (R + 1)`` with ``c`` the resampled statistics **at least as
  large** as the observed one (Noreen 1989). sacrebleu counts strictly larger ones, which
  gives a system compared with an identical copy p = 1 / (R + 1), "significant"; here it
  gets p = 1.

Weights and swaps are drawn in chunks of rows, always the same for the same ``n``, ``R``
and seed, so every process reproduces the same p-values; the swaps are sacrebleu's draw
for any number of images (:func:`randomization_swaps`).

>>> from capeval_core.metrics.statistics import MeanStatistics
>>> a = MeanStatistics.from_values(("x",), {"x": np.linspace(0.0, 1.0, 50)})
>>> b = MeanStatistics.from_values(("x",), {"x": np.linspace(0.0, 1.0, 50) + 0.2})
>>> boot = bootstrap({"a": a, "b": b}, n_resamples=200, seed=1)
>>> test = paired_tests(a, b, boot["a"], boot["b"], n_trials=500, seed=1)
>>> round(test["x"].delta, 6), test["x"].p_bootstrap < 0.01, test["x"].p_randomization < 0.01
(0.2, True, True)
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np
from scipy.stats import DegenerateDataWarning

from capeval_core.errors import InputError
from capeval_core.metrics.statistics import ItemStatistics, weights_from_indices
from capeval_core.stats.intervals import seeded

_K = TypeVar("_K")

#: sacrebleu's defaults: 1,000 bootstrap resamples, 10,000 randomization trials, seed 12345
DEFAULT_RESAMPLES = 1000
DEFAULT_TRIALS = 10_000
DEFAULT_SEED = 12345
PAIRED_TESTS = ("bs", "ar", "both")

#: rows of weights or swaps held at once: about this many cells
_CELLS = 2_000_000


def _chunk_rows(n: int, rows: int) -> int:
    return max(1, min(rows, _CELLS // max(n, 1)))


def bootstrap_indices(n: int, n_resamples: int, seed: int | None) -> Iterator[np.ndarray]:
    """The resampled image indices, chunk by chunk: ``(rows, n)`` arrays drawn with
    ``rng.integers(0, n, size=(rows, n))`` from ``default_rng(seed)``, in order."""
    rng = seeded(seed)
    chunk = _chunk_rows(n, n_resamples)
    for start in range(0, n_resamples, chunk):
        yield rng.integers(0, n, size=(min(chunk, n_resamples - start), n))


def randomization_swaps(n: int, n_trials: int, seed: int | None) -> Iterator[np.ndarray]:
    """The swaps of approximate randomization, chunk by chunk: boolean ``(rows, n)`` arrays
    (True: the first pseudo-system keeps the first system's caption), together equal to
    sacrebleu's one draw ``default_rng(seed).integers(2, size=(n_trials, n), dtype=bool)``
    for any ``n``. numpy draws booleans 32 to a 32-bit word and drops a call's unused bits,
    so each call here draws whole words (rows a multiple of 32 / gcd(n, 32)) and the
    stream goes on as one call's would (other cuts matched it in their first chunk only)."""
    rng = seeded(seed)
    chunk = _chunk_rows(n, n_trials)
    step = 32 // math.gcd(max(n, 1), 32)
    block = -(-chunk // step) * step  # the chunk rounded up to whole words
    for start in range(0, n_trials, block):
        swaps = rng.integers(2, size=(min(block, n_trials - start), n), dtype=bool)
        for row in range(0, len(swaps), chunk):
            yield swaps[row : row + chunk]


def _check(systems: Mapping[Any, ItemStatistics]) -> int:
    sizes = {len(s) for s in systems.values()}
    if len(sizes) != 1:
        raise InputError(f"systems must have the same number of items (got {sorted(sizes)})")
    n = sizes.pop()
    if n == 0:
        raise InputError("nothing to resample: the systems have no items")
    return n


def bootstrap(
    systems: Mapping[_K, ItemStatistics],
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int | None = DEFAULT_SEED,
) -> dict[_K, np.ndarray]:
    """Every system's corpus values on the same bootstrap resamples: ``(R, keys)`` each.

    Systems scored against the same references share the work that depends on them only
    (CIDEr-D's resampled reference norms).
    """
    if n_resamples < 1:
        raise InputError(f"`n_resamples` must be at least 1 (got {n_resamples})")
    n = _check(systems)
    parts: dict[_K, list[np.ndarray]] = {k: [] for k in systems}
    for indices in bootstrap_indices(n, n_resamples, seed):
        weights = weights_from_indices(indices, n)
        memo: dict[Any, Any] = {}
        for name, stats in systems.items():
            parts[name].append(stats.resample(weights, memo))
    return {name: np.concatenate(p) for name, p in parts.items()}


def confidence_interval(values: np.ndarray, level: float = 0.95) -> tuple[float, float]:
    """sacrebleu's percentile interval: the sorted values at ``floor(R (1 - level) / 2)``
    from either end (indices 25 and 974 of 1,000 at 95%); NaN values are left out.

    >>> confidence_interval(np.arange(1000.0))
    (25.0, 974.0)
    """
    if not 0 < level < 1:
        raise InputError(f"`level` must be between 0 and 1 (got {level})")
    values = np.sort(values[np.isfinite(values)])
    if values.size == 0:
        return (math.nan, math.nan)
    lower = math.floor(values.size * (1 - level) / 2 + 1e-9)
    return (float(values[lower]), float(values[values.size - lower - 1]))


def p_value(null: np.ndarray, observed: float) -> float:
    """``(c + 1) / (R + 1)``, ``c`` the null statistics at least as large as ``observed``.

    >>> p_value(np.zeros(9), 0.0), p_value(np.arange(9.0), 7.5)
    (1.0, 0.2)
    """
    count = int(np.count_nonzero(null >= observed))
    return (count + 1) / (null.size + 1)


@dataclass(frozen=True)
class PairedResult:
    """One metric key: a system against the baseline.

    ``delta`` is system minus baseline on all images; ``confidence_interval`` the bootstrap
    interval of the paired difference; the p-values those of the tests run (None where not
    run): approximate randomization's is two-sided, the paired bootstrap's sacrebleu's (about
    one-sided; see the module's note). :attr:`p_value` is the larger of them: a difference
    called significant by it is significant by both tests; NaN where a test run gave NaN
    (one image: the module's note).
    """

    delta: float
    confidence_interval: tuple[float, float]
    p_bootstrap: float | None
    p_randomization: float | None

    @property
    def p_value(self) -> float:
        ps = [p for p in (self.p_bootstrap, self.p_randomization) if p is not None]
        if not ps or any(math.isnan(p) for p in ps):
            return math.nan
        return max(ps)


def paired_tests(
    baseline: ItemStatistics,
    system: ItemStatistics,
    baseline_boot: np.ndarray,
    system_boot: np.ndarray,
    *,
    tests: str = "both",
    n_trials: int = DEFAULT_TRIALS,
    seed: int | None = DEFAULT_SEED,
    level: float = 0.95,
) -> dict[str, PairedResult]:
    """The system against the baseline, per reported key.

    ``baseline_boot``/``system_boot`` are :func:`bootstrap` values on the same resamples
    (they give the interval of the difference, and the bootstrap test's null). ``tests`` is
    ``"bs"`` (paired bootstrap), ``"ar"`` (approximate randomization) or ``"both"``.
    """
    return paired_tests_many(
        {0: (baseline, system, baseline_boot, system_boot)},
        tests=tests,
        n_trials=n_trials,
        seed=seed,
        level=level,
    )[0]


def paired_tests_many(
    pairs: Mapping[_K, tuple[ItemStatistics, ItemStatistics, np.ndarray, np.ndarray]],
    *,
    tests: str = "both",
    n_trials: int = DEFAULT_TRIALS,
    seed: int | None = DEFAULT_SEED,
    level: float = 0.95,
) -> dict[_K, dict[str, PairedResult]]:
    """:func:`paired_tests` of several (baseline, system) pairs on the same images (e.g. one
    per metric): the same swaps for all, each chunk of them drawn once."""
    if tests not in PAIRED_TESTS:
        raise InputError(f"`tests` must be one of {PAIRED_TESTS} (got {tests!r})")
    if n_trials < 1 and tests != "bs":
        raise InputError(f"`n_trials` must be at least 1 (got {n_trials})")
    observed: dict[_K, np.ndarray] = {}
    points: dict[_K, tuple[dict[str, float], dict[str, float]]] = {}
    for name, (baseline, system, baseline_boot, system_boot) in pairs.items():
        if len(baseline) != len(system):
            raise InputError(
                f"the systems must have the same number of items (got {len(baseline)} and "
                f"{len(system)})"
            )
        if np.shape(baseline_boot) != np.shape(system_boot):
            raise InputError(
                "the bootstrap values must come from the same resamples (got shapes "
                f"{np.shape(baseline_boot)} and {np.shape(system_boot)})"
            )
        base_point, sys_point = baseline.point(), system.point()
        points[name] = (base_point, sys_point)
        observed[name] = np.array([abs(sys_point[k] - base_point[k]) for k in baseline.keys])
    one_image = [name for name, (baseline, *_) in pairs.items() if len(baseline) == 1]
    if one_image:
        warnings.warn(
            f"{_named(one_image, pairs)} compared on one image: a paired test on one image "
            "carries no information, so its p-values are NaN",
            DegenerateDataWarning,
            stacklevel=3,
        )
    ar_pairs = {k: (b, s) for k, (b, s, _, _) in pairs.items() if k not in one_image}
    p_ar = (
        _randomization(ar_pairs, {k: observed[k] for k in ar_pairs}, n_trials, seed)
        if tests in ("ar", "both") and ar_pairs
        else {}
    )
    if tests in ("ar", "both"):
        p_ar.update({k: np.full(observed[k].size, np.nan) for k in one_image})
    out: dict[_K, dict[str, PairedResult]] = {}
    for name, (baseline, _, baseline_boot, system_boot) in pairs.items():
        base_point, sys_point = points[name]
        diffs = system_boot - baseline_boot
        results = {}
        for j, k in enumerate(baseline.keys):
            p_bs = None
            if tests in ("bs", "both"):
                # a resample drawing none of a sparse key's defined items is NaN: left out,
                # as the interval leaves it out (else every null is NaN and p = 1 / (R + 1))
                sample = np.abs(diffs[:, j])
                sample = sample[np.isfinite(sample)]
                if name in one_image or not sample.size:
                    p_bs = math.nan
                else:
                    p_bs = _p_or_nan(sample - sample.mean(), observed[name][j])
            results[k] = PairedResult(
                sys_point[k] - base_point[k],
                confidence_interval(diffs[:, j], level),
                p_bs,
                float(p_ar[name][j]) if name in p_ar else None,
            )
        out[name] = results
    return out


def _named(names: list[Any], pairs: Mapping[Any, Any]) -> str:
    """The pairs a warning is about: "the systems" when it is about all, else their names."""
    if len(names) == len(pairs):
        return "the systems"
    return ", ".join(map(repr, names[:5])) + (" ..." if len(names) > 5 else "")


def _p_or_nan(null: np.ndarray, observed: float) -> float:
    return p_value(null, observed) if math.isfinite(observed) else math.nan


#: two differences closer than this, relative to the observed one, are equal: a swap that
#: reproduces the observed difference sums its items in another order (a few ulps off)
_TIE = 1e-9


def _at_least(null: np.ndarray, observed: np.ndarray) -> np.ndarray:
    """Per column, the rows of ``null`` at least as large as ``observed``, ties included."""
    return np.count_nonzero(null >= (observed - _TIE * np.abs(observed))[None, :], axis=0)


def _randomization(
    pairs: Mapping[_K, tuple[ItemStatistics, ItemStatistics]],
    observed: Mapping[_K, np.ndarray],
    n_trials: int,
    seed: int | None,
) -> dict[_K, np.ndarray]:
    n = _check({i: s for i, pair in enumerate(pairs.values()) for s in pair})
    counts = {name: np.zeros(observed[name].size, dtype=np.int64) for name in pairs}
    # Pairs whose statistics are summed per item share one product per chunk of swaps: the
    # swapped sums of every metric at once (see SummedStatistics.swap).
    summed = {}
    for name, (baseline, system) in pairs.items():
        b, s = baseline.additive(), system.additive()
        if b is not None and s is not None and type(b) is type(s) and len(b) == len(s):
            summed[name] = (b, s)
    others = [name for name in pairs if name not in summed]
    if summed:
        # float64: a swap that gives the observed difference again is a tie, counted as at
        # least as large; float32 sums missed such ties by 1e-7 and halved p (a false †)
        diff = np.hstack([s.matrix - b.matrix for b, s in summed.values()]).astype(np.float64)
        widths = np.cumsum([0] + [s.matrix.shape[1] for _, s in summed.values()])
        totals = [(b.matrix.sum(axis=0), s.matrix.sum(axis=0)) for b, s in summed.values()]
    for take in randomization_swaps(n, n_trials, seed):
        if summed:
            moved = take.astype(np.float64) @ diff
            size = np.full(take.shape[0], float(n))
            for j, (name, (_, s)) in enumerate(summed.items()):
                part = moved[:, widths[j] : widths[j + 1]]
                base_total, sys_total = totals[j]
                with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                    first = s.finish(base_total + part, size)
                    second = s.finish(sys_total - part, size)
                counts[name] += _at_least(np.abs(first - second), observed[name])
        for name in others:
            baseline, system = pairs[name]
            first, second = system.swap(baseline, take)
            counts[name] += _at_least(np.abs(first - second), observed[name])
    return {
        name: np.where(np.isfinite(observed[name]), (counts[name] + 1) / (n_trials + 1), np.nan)
        for name in pairs
    }
