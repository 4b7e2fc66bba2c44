"""Correlations page, its table: item-level Pearson, Spearman and Kendall tau-b/tau-c of 11
metrics with 2,000 human scores (THumB 1.0's size under the default preset, issue 32), each
with a 1,000-resample bootstrap interval, as the page computes it (intervals not cached).

The reference is the straightforward computation on the same index draws: scipy.stats
(``pearsonr``, ``spearmanr``, ``kendalltau``) on each resample's drawn pairs, then the
percentiles. Prints both times, their ratio, per-method times and the largest difference
between the two tables' interval bounds. Asserts nothing. The data are synthetic with
THumB's shape: human scores on its 16 distinct values, metrics with its kinds of ties
(many zeros, a few grades, rounded values, continuous). ``--images`` is not used.

Then the whole page's core calls on the same data, as
``capeval_core.judgments.analysis.correlation_report`` makes them (the page's cached call, without
Streamlit), one by one: the table, the metric x metric Spearman heatmap and
``rank_subsets`` (the combined metric over all 2,047 subsets of 11 metrics, with THumB's
default correlation, Kendall tau-b), each timed, and ``rank_subsets`` beside the
straightforward computation (one ``correlate`` call per subset) with the largest
difference of their values.
"""

from __future__ import annotations

import time
import warnings

import numpy as np

N_ITEMS = 2000
N_METRICS = 11
N_RESAMPLES = 1000
SEED = 0
METHODS = ("pearson", "spearman", "kendall_b", "kendall_c")
#: THumB 1.0's distinct human_score values over the 2,000 non-Human rows
THUMB_LEVELS = (1.9, 2, 2.5, 2.9, 3, 3.4, 3.5, 3.8, 3.9, 4, 4.4, 4.5, 4.7, 4.8, 4.9, 5)


def thumb_like(seed: int = 0) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """Human scores and 11 metrics' scores with THumB's size and kinds of ties."""
    rng = np.random.default_rng(seed)
    human = rng.choice(np.array(THUMB_LEVELS), N_ITEMS)
    z = (human - human.mean()) / human.std()
    metrics = {}
    for i in range(N_METRICS):
        signal = 0.2 + 0.05 * i
        raw = signal * z + rng.normal(size=N_ITEMS)
        kind = i % 4
        if kind == 0:  # BLEU-4-like: a third of the captions score exactly 0
            raw = np.where(raw < np.quantile(raw, 0.33), 0.0, raw - raw.min())
        elif kind == 1:  # a handful of grades
            raw = np.digitize(raw, np.quantile(raw, [0.2, 0.4, 0.6, 0.8])).astype(float)
        elif kind == 2:  # rounded to 3 decimals
            raw = np.round(raw, 3)
        metrics[f"metric_{i + 1}"] = raw
    return human, metrics


def _reference(human, metrics) -> tuple[dict[tuple[str, str], tuple[float, float]], dict]:
    """scipy on each resample, then the 2.5th and 97.5th percentiles; seconds per method."""
    from scipy import stats

    fns = {
        "pearson": stats.pearsonr,
        "spearman": stats.spearmanr,
        "kendall_b": lambda a, b: stats.kendalltau(a, b, variant="b"),
        "kendall_c": lambda a, b: stats.kendalltau(a, b, variant="c"),
    }
    idx = np.random.default_rng(SEED).integers(0, N_ITEMS, size=(N_RESAMPLES, N_ITEMS))
    bounds, seconds = {}, dict.fromkeys(METHODS, 0.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for key, x in metrics.items():
            for method in METHODS:
                start = time.perf_counter()
                values = np.array([fns[method](x[i], human[i]).statistic for i in idx])
                values = values[np.isfinite(values)]
                low, high = np.quantile(values, [0.025, 0.975])
                seconds[method] += time.perf_counter() - start
                bounds[key, method] = (float(low), float(high))
    return bounds, seconds


def page_calls(human: np.ndarray, metrics: dict[str, np.ndarray]) -> None:
    """The Correlations page's core calls, timed one by one (issue 32)."""
    from capeval_core.judgments.analysis import correlation_table, spearman_between
    from capeval_core.stats import rank_subsets
    from capeval_core.stats.combined import _rank_subsets

    combined_on = "kendall_b"  # the page's default for a set without a Kendall preset

    def timed(fn):
        start = time.perf_counter()
        value = fn()
        return value, time.perf_counter() - start

    rank_subsets(human, metrics, combined_on)  # loads the compiled count once
    table, t_table = timed(
        lambda: correlation_table(
            human, metrics, n_resamples=N_RESAMPLES, seed=SEED, use_cache=False
        )
    )
    spear = table[table["method"] == "spearman"].set_index("metric")["statistic"]
    order = sorted(metrics, key=lambda k: -abs(spear[k]))
    _, t_heat = timed(lambda: spearman_between(metrics, order, None))
    ranked, t_rank = timed(lambda: rank_subsets(human, metrics, combined_on))
    plain, t_plain = timed(
        lambda: _rank_subsets(human, metrics, combined_on, "greater", None, fast=False)
    )
    total = t_table + t_heat + t_rank
    same = [r.subset for r in ranked] == [r.subset for r in plain]
    diff = max(abs(a.statistic - b.statistic) for a, b in zip(ranked, plain, strict=True))
    print(
        f"Correlations page, core calls ({N_ITEMS:,} items x {N_METRICS} metrics, "
        f"{2**N_METRICS - 1:,} subsets, combined on {combined_on}):"
    )
    print(f"  table with intervals (not cached):                        {t_table:7.2f} s")
    print(f"  metric x metric heatmap:                                  {t_heat:7.2f} s")
    print(f"  rank_subsets:                                             {t_rank:7.2f} s")
    print(f"  page total:                                               {total:7.2f} s")
    print(
        f"  rank_subsets, one correlate call per subset (reference):  {t_plain:7.2f} s "
        f"({t_plain / t_rank:.1f}x; same order: {same}; largest difference {diff:.2g})"
    )


def main(n_images: int = 0) -> None:
    from capeval_core.judgments.analysis import correlation_table
    from capeval_core.stats import bootstrap_many

    human, metrics = thumb_like()
    print(
        f"Correlations table: {N_ITEMS:,} items x {N_METRICS} metrics, item level, "
        f"{', '.join(METHODS)}, {N_RESAMPLES:,} resamples each"
    )

    def table():
        return correlation_table(
            human, metrics, n_resamples=N_RESAMPLES, seed=SEED, use_cache=False
        )

    start = time.perf_counter()
    table()
    first = time.perf_counter() - start
    runs = []
    for _ in range(3):
        start = time.perf_counter()
        ours = table()
        runs.append(time.perf_counter() - start)
    ours_s = min(runs)
    print(f"  capeval, first call in the process (loads compiled code): {first:7.2f} s")
    print(f"  capeval, best of 3:                                       {ours_s:7.2f} s")
    per_method = {}
    for method in METHODS:
        start = time.perf_counter()
        bootstrap_many(metrics, human, (method,), N_RESAMPLES, SEED)
        per_method[method] = time.perf_counter() - start

    bounds, ref_seconds = _reference(human, metrics)
    ref_s = sum(ref_seconds.values())
    print(f"  scipy per resample (reference):                           {ref_s:7.2f} s")
    print(f"  ratio reference / capeval:                                {ref_s / ours_s:7.1f}x")
    print("  per method, all 11 metrics (capeval alone | reference):")
    for method in METHODS:
        print(f"    {method:10s} {per_method[method]:6.2f} s | {ref_seconds[method]:6.2f} s")
    diff = max(
        max(
            abs(row.ci_low - bounds[row.metric, row.method][0]),
            abs(row.ci_high - bounds[row.metric, row.method][1]),
        )
        for row in ours.itertuples()
    )
    print(f"  largest difference between the two tables' interval bounds: {diff:.3g}")
    print()
    page_calls(human, metrics)
