"""System level done right (issue 32): statistics of system means, intervals by resampling
items within systems, and a plain refusal with too few systems."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from capeval_core.errors import InputError
from capeval_core.judgments.analysis import at_level, correlation_table, spearman_between
from capeval_core.stats.within_systems import (
    WITHIN_SYSTEMS,
    resampled_means,
    rowwise,
    system_codes,
    system_intervals,
)


def _data(n_systems=5, per=40, seed=0):
    rng = np.random.default_rng(seed)
    systems = [f"s{s}" for s in range(n_systems) for _ in range(per)]
    quality = np.repeat(np.arange(n_systems, dtype=float), per)
    human = quality + rng.normal(0, 2.0, quality.size)
    metric = quality + rng.normal(0, 2.0, quality.size)
    other = rng.normal(0, 1.0, quality.size)
    return human, {"metric": metric, "other": other}, systems


@pytest.mark.parametrize("method", ["pearson", "spearman", "kendall_b", "kendall_c"])
def test_rowwise_matches_scipy(method):
    rng = np.random.default_rng(1)
    x = rng.integers(0, 4, size=(50, 6)).astype(float)  # ties on purpose
    y = rng.normal(size=(50, 6))
    got = rowwise(method, x, y)
    for row in range(50):
        if method == "pearson":
            want = stats.pearsonr(x[row], y[row]).statistic
        elif method == "spearman":
            want = stats.spearmanr(x[row], y[row]).statistic
        else:
            want = stats.kendalltau(x[row], y[row], variant=method[-1]).statistic
        assert got[row] == pytest.approx(want, nan_ok=True)


def test_resampling_keeps_every_system_and_draws_within_it():
    human, _, systems = _data()
    names, codes = system_codes(systems)
    means = resampled_means({"h": human}, codes, len(names), 300, seed=3)["h"]
    # every resample has a mean for each of the 5 systems, each near that system's own mean
    own = np.array([human[codes == s].mean() for s in range(5)])
    assert means.shape == (300, 5)
    assert np.all(np.abs(means - own) < 1.5)
    # by hand, the first system of the first resample
    rng = np.random.default_rng(3)
    members = np.flatnonzero(codes == 0)
    idx = members[rng.integers(0, members.size, size=(300, members.size))]
    assert means[0, 0] == pytest.approx(human[idx[0]].mean())


def test_table_at_system_level_uses_system_means_and_item_resampling():
    human, metrics, systems = _data()
    table = correlation_table(human, metrics, systems=systems, n_resamples=300, use_cache=False)
    assert set(table["n"]) == {5}
    row = table[(table.metric == "metric") & (table.method == "pearson")].iloc[0]
    h, m = at_level(human, metrics, systems)
    assert row.statistic == pytest.approx(stats.pearsonr(m["metric"], h).statistic)
    cis = system_intervals(metrics, human, systems, ("pearson",), n_resamples=300)
    assert (row.ci_low, row.ci_high) == (
        cis["metric", "pearson"].low,
        cis["metric", "pearson"].high,
    )
    assert cis["metric", "pearson"].method == WITHIN_SYSTEMS
    # resampling the 5 system means themselves would give a far wider interval (often NaN
    # resamples, ±1 values); items within systems keep every system, so the bounds sit
    # inside (-1, 1)
    assert -1 < row.ci_low <= row.statistic <= row.ci_high < 1


def test_heatmap_at_system_level_correlates_system_means():
    human, metrics, systems = _data()
    between = spearman_between(metrics, systems=systems)
    _, m = at_level(human, metrics, systems)
    assert between.loc["metric", "other"] == pytest.approx(
        stats.spearmanr(m["metric"], m["other"]).statistic
    )
    # 5 systems: Spearman takes multiples of 0.1 only
    assert round(between.loc["metric", "other"] * 10, 9) % 1 == 0
    item = spearman_between(metrics)
    assert item.loc["metric", "other"] != between.loc["metric", "other"]


def test_too_few_systems_is_said_plainly():
    human, metrics, systems = _data(n_systems=2)
    with pytest.raises(InputError, match="only 2 systems"):
        correlation_table(human, metrics, systems=systems, n_resamples=10, use_cache=False)
    with pytest.raises(InputError, match="only 2 systems"):
        spearman_between(metrics, systems=systems)


def test_system_level_result_resamples_items_within_systems():
    from capeval_core.judgments.analysis import interval
    from capeval_core.stats import system_level

    human, metrics, systems = _data()
    r = system_level(metrics["metric"], human, systems, "kendall_b")
    ci = r.confidence_interval(n_resamples=200, seed=4)
    want = system_intervals(metrics, human, systems, ("kendall_b",), n_resamples=200, seed=4)
    assert ci == want["metric", "kendall_b"] and ci.method == WITHIN_SYSTEMS
    assert interval(r, n_resamples=200, seed=4, use_cache=False) == ci


def test_a_missing_system_label_from_pandas_is_refused_not_a_system():
    """An empty cell read by pandas is NaN: it became a system of its own, "nan", and the
    correlation ran over it (a float column of system ids ended in a bare KeyError)."""
    import io

    import pandas as pd

    from capeval_core.stats import system_level

    df = pd.read_csv(io.StringIO("s,m,h\na,1,1\na,2,1\n,3,2\n,5,2\nc,4,3\nc,6,3\nd,2,1\n"))
    with pytest.raises(InputError, match=r"item 2 has no system \(nan\)"):
        system_level(df.m, df.h, df.s)
    with pytest.raises(InputError, match=r"item 1 has no system"):
        system_level([1, 2, 3, 4], [1, 2, 3, 4], pd.Series(["a", pd.NA, "b", "c"], dtype="string"))
    with pytest.raises(InputError, match=r"item 0 has no system \(nan\)"):
        system_level([1, 2, 3, 4], [1, 2, 3, 4], np.array([np.nan, 1.0, 2.0, 3.0]))
