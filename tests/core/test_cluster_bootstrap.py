"""The cluster bootstrap of correlation intervals: Flickr8k-Expert's published preset gives
each expert's score its own row, three rows per caption sharing the caption's metric score.
Drawn row by row, those rows counted as independent items and the intervals came out about
a quarter too narrow; a resample now draws whole captions."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from scipy import stats

from capeval_core.judgments.analysis import correlation_table
from capeval_core.stats.correlation import bootstrap_many, bootstrap_statistics

METHODS = ("pearson", "spearman", "kendall_b", "kendall_c")


def _rows(captions: int = 60, seed: int = 0):
    """Three expert rows per caption, sharing the caption's metric score."""
    rng = np.random.default_rng(seed)
    quality = rng.normal(size=captions)
    metric = quality + rng.normal(size=captions)
    experts = np.clip(np.round(2.5 + quality[:, None] + rng.normal(size=(captions, 3))), 1, 4)
    groups = np.repeat([f"c{i}" for i in range(captions)], 3)
    return np.repeat(metric, 3), experts.ravel(), groups


def _by_hand(x, y, groups, method, n_resamples, seed):
    """Draw captions with replacement (numpy's integers, in order), take all their rows, and
    correlate with scipy."""
    labels = list(dict.fromkeys(groups))
    rows = {g: np.flatnonzero(groups == g) for g in labels}
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, len(labels), size=(n_resamples, len(labels)))
    out = []
    for draw in draws:
        idx = np.concatenate([rows[labels[i]] for i in draw])
        if method == "pearson":
            out.append(stats.pearsonr(x[idx], y[idx])[0])
        elif method == "spearman":
            out.append(stats.spearmanr(x[idx], y[idx])[0])
        else:
            out.append(stats.kendalltau(x[idx], y[idx], variant=method[-1])[0])
    return np.array(out)


@pytest.mark.parametrize("method", METHODS)
def test_a_resample_draws_whole_captions(method):
    x, y, groups = _rows()
    got = bootstrap_statistics(x, y, method, 40, seed=5, groups=groups)
    np.testing.assert_allclose(got, _by_hand(x, y, groups, method, 40, 5), rtol=1e-9)


def test_groups_of_one_item_draw_the_plain_bootstrap():
    x, y, _ = _rows()
    plain = bootstrap_many({"m": x}, y, METHODS, 30, seed=2)
    single = bootstrap_many({"m": x}, y, METHODS, 30, seed=2, groups=np.arange(x.size))
    for method in METHODS:
        np.testing.assert_array_equal(plain["m", method], single["m", method])


def test_groups_must_be_one_label_per_pair():
    x, y, groups = _rows()
    from capeval_core.errors import InputError

    with pytest.raises(InputError, match="one label per pair"):
        bootstrap_statistics(x, y, "pearson", 10, groups=groups[:-1])


def test_caption_intervals_are_wider_than_row_intervals_and_cached_apart(tmp_path, monkeypatch):
    monkeypatch.setenv("CAPEVAL_SCORES_CACHE_DIR", str(tmp_path))
    x, y, groups = _rows(captions=150, seed=3)
    rows = correlation_table(y, {"m": x}, methods=("pearson",), n_resamples=400, seed=1)
    captions = correlation_table(
        y, {"m": x}, methods=("pearson",), n_resamples=400, seed=1, groups=groups
    )
    assert rows.statistic.iloc[0] == captions.statistic.iloc[0]  # the estimate is the rows'
    width = (captions.ci_high - captions.ci_low).iloc[0]
    assert width > 1.25 * (rows.ci_high - rows.ci_low).iloc[0]
    assert len(list(tmp_path.glob("ci-*.json"))) == 2  # one entry each, not one for both


def test_an_interval_says_it_drew_groups():
    """A cluster interval from the library said "percentile bootstrap over items"."""
    from capeval_core.judgments.analysis import interval
    from capeval_core.stats.correlation import correlate
    from capeval_core.stats.intervals import OVER_GROUPS

    x, y, groups = _rows()
    plain = correlate(x, y, "pearson")
    grouped = dataclasses.replace(plain, groups=groups)
    assert plain.confidence_interval(n_resamples=20).method == "percentile bootstrap over items"
    assert grouped.confidence_interval(n_resamples=20).method == OVER_GROUPS
    assert interval(grouped, n_resamples=20, use_cache=False).method == OVER_GROUPS
