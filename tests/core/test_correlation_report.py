"""What the Correlations page shows, assembled by ``capeval_core.judgments.analysis``: the
table, the metric x metric Spearman matrix ordered by |Spearman| with the humans, and the
combined metric, at item or system level."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from capeval_core.errors import InputError
from capeval_core.judgments.analysis import (
    CorrelationReport,
    at_level,
    correlation_report,
    correlation_table,
    spearman_between,
)
from capeval_core.stats import rank_subsets


def _data(n_systems=4, per=30, seed=2):
    rng = np.random.default_rng(seed)
    systems = [f"s{s}" for s in range(n_systems) for _ in range(per)]
    quality = np.repeat(np.arange(n_systems, dtype=float), per) + rng.normal(0, 1, n_systems * per)
    human = quality + rng.normal(0, 0.5, quality.size)
    metrics = {
        "weak": quality + rng.normal(0, 3.0, quality.size),
        "strong": quality + rng.normal(0, 0.3, quality.size),
        "anti": -quality + rng.normal(0, 1.0, quality.size),  # strong, but negative
        "flat": np.full(quality.size, 0.5),  # constant: NaN correlations
    }
    return human, metrics, systems


def _same_subsets(got, want) -> None:
    assert [s.name for s in got] == [s.name for s in want]
    np.testing.assert_array_equal([s.statistic for s in got], [s.statistic for s in want])


def test_item_level_report_is_the_table_the_heatmap_and_the_subsets():
    human, metrics, _ = _data()
    r = correlation_report(
        human, metrics, human_name="quality", n_resamples=50, seed=3, use_cache=False
    )
    assert isinstance(r, CorrelationReport)
    assert (r.human_name, r.level, r.n_resamples, r.seed, r.ci_kendall) == (
        "quality",
        "item",
        50,
        3,
        True,
    )
    table = correlation_table(human, metrics, n_resamples=50, seed=3, use_cache=False)
    pd.testing.assert_frame_equal(r.table, table)
    # ordered by |Spearman| with the humans, the constant metric (NaN) last
    spear = table[table["method"] == "spearman"].set_index("metric")["statistic"]
    assert list(r.between.index) == ["strong", "anti", "weak", "flat"]
    assert abs(spear["strong"]) > abs(spear["anti"]) > abs(spear["weak"])
    assert math.isnan(spear["flat"])
    pd.testing.assert_frame_equal(r.between, spearman_between(metrics, list(r.between.index)))
    _same_subsets(r.combined, rank_subsets(human, metrics, "pearson"))


def test_kendall_intervals_only_when_asked():
    human, metrics, _ = _data()
    r = correlation_report(human, metrics, n_resamples=30, ci_kendall=False, use_cache=False)
    kendall = r.table[r.table["method"].str.startswith("kendall") & (r.table["metric"] != "flat")]
    assert kendall["ci_low"].isna().all() and kendall["statistic"].notna().all()
    pearson = r.table[(r.table["method"] == "pearson") & (r.table["metric"] != "flat")]
    assert pearson["ci_low"].notna().all()
    assert not r.ci_kendall


def test_system_level_report_uses_system_means_throughout():
    human, metrics, systems = _data()
    r = correlation_report(
        human,
        metrics,
        systems=systems,
        n_resamples=30,
        combined_on="kendall_b",
        use_cache=False,
    )
    assert r.level == "system"
    assert set(r.table["n"]) == {4}
    level_human, level_values = at_level(human, metrics, systems)
    assert len(level_human) == 4
    _same_subsets(r.combined, rank_subsets(level_human, level_values, "kendall_b"))
    pd.testing.assert_frame_equal(
        r.between, spearman_between(metrics, list(r.between.index), systems)
    )


def test_progress_is_heard_and_no_metrics_make_an_empty_report():
    human, metrics, _ = _data()
    heard: list[float] = []
    correlation_report(
        human, {"strong": metrics["strong"]}, n_resamples=30, use_cache=False,
        on_progress=heard.append,
    )  # fmt: skip
    assert heard and heard[-1] == pytest.approx(1.0)
    empty = correlation_report(human, {}, n_resamples=30, use_cache=False)
    assert empty.combined == () and empty.table.empty and empty.between.empty


def test_too_few_systems_is_an_error():
    human, metrics, _ = _data()
    with pytest.raises(InputError, match="system-level"):
        correlation_report(human, metrics, systems=["a", "b"] * 60, use_cache=False)


def test_seed_none_intervals_are_drawn_afresh_not_cached(tmp_path, monkeypatch):
    """With ``seed=None`` the cache returned the first call's random interval every time."""
    monkeypatch.setenv("CAPEVAL_SCORES_CACHE_DIR", str(tmp_path))
    human, metrics, _ = _data()
    lows = {
        float(
            correlation_table(
                human, {"weak": metrics["weak"]}, methods=("pearson",), n_resamples=50, seed=None
            ).ci_low.iloc[0]
        )
        for _ in range(4)
    }
    assert len(lows) > 1
    assert not list(tmp_path.glob("ci-*.json"))
    # a seeded interval is still cached, and read back the same
    first = correlation_table(
        human, {"weak": metrics["weak"]}, methods=("pearson",), n_resamples=50, seed=3
    )
    assert len(list(tmp_path.glob("ci-*.json"))) == 1
    again = correlation_table(
        human, {"weak": metrics["weak"]}, methods=("pearson",), n_resamples=50, seed=3
    )
    pd.testing.assert_frame_equal(first, again)


def _constant_rows(values: list[np.ndarray], n_resamples: int, seed: int) -> int:
    """Resamples in which some side is constant, drawn as the bootstrap documents its draws
    (``default_rng(seed).integers(0, n, size=(n_resamples, n))``)."""
    n = values[0].size
    idx = np.random.default_rng(seed).integers(0, n, size=(n_resamples, n))
    constant = np.zeros(n_resamples, dtype=bool)
    for v in values:
        drawn = v[idx]
        constant |= (drawn == drawn[:, :1]).all(axis=1)
    return int(constant.sum())


def test_resamples_without_a_correlation_are_counted_and_kept_through_the_cache(
    tmp_path, monkeypatch
):
    """Binary human scores on few items: some resamples draw one grade only and have no
    correlation. The interval was drawn from the others without a word."""
    monkeypatch.setenv("CAPEVAL_SCORES_CACHE_DIR", str(tmp_path))
    human = np.array([0, 1, 0, 0, 1, 0, 0, 0, 1, 0], dtype=float)
    metric = np.array([0.1, 0.9, 0.2, 0.3, 0.7, 0.1, 0.4, 0.2, 0.8, 0.3])
    expected = _constant_rows([human, metric], 500, 4)
    assert expected > 0
    first = correlation_table(
        human, {"m": metric}, methods=("pearson", "spearman"), n_resamples=500, seed=4
    )
    assert first["ci_left_out"].tolist() == [expected, expected]
    again = correlation_table(  # from the cache: the count is kept with the bounds
        human, {"m": metric}, methods=("pearson", "spearman"), n_resamples=500, seed=4
    )
    pd.testing.assert_frame_equal(first, again)
    # an entry written before the count was kept ([low, high]) is drawn again, silently
    for path in tmp_path.glob("ci-*.json"):
        path.write_text("[0.5, 0.9]")
    older = correlation_table(
        human, {"m": metric}, methods=("pearson", "spearman"), n_resamples=500, seed=4
    )
    pd.testing.assert_frame_equal(first, older)
    # items with both grades in every resample leave none out
    wide = correlation_table(
        np.tile([0.0, 1.0], 50), {"m": np.linspace(0, 1, 100)}, methods=("pearson",),
        n_resamples=200, seed=4, use_cache=False,
    )  # fmt: skip
    assert wide["ci_left_out"].tolist() == [0]
