"""Statistics: Williams test vectors (metric-spec §8), correlations equal scipy's, seeded
bootstrap, constant input, combined metric, pairwise and forced-choice accuracy, export."""

from __future__ import annotations

import io
import itertools
import json
import math
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from capeval_core.errors import InputError
from capeval_core.stats import (
    combine,
    correlate,
    default_subset,
    export_csv,
    forced_choice_accuracy,
    forced_choice_by_type,
    kendall,
    minmax,
    pairwise_accuracy,
    pearson,
    rank_subsets,
    sample_references,
    spearman,
    system_level,
    to_csv_text,
    williams_between,
    williams_matrix,
    williams_test,
)
from tests.conftest import fresh_python

# metric-spec §8: (r12, r13, r23, n) -> t, one-sided p (the p digits as printed there)
WILLIAMS_VECTORS = [
    ((0.65, 0.55, 0.30, 50), 0.816078, "0.2092862", 7),
    ((0.90, 0.80, 0.85, 100), 4.126423, "3.89621e-05", 6),
    ((0.45, 0.40, 0.70, 500), 1.621001, "0.0528259", 6),
]


@pytest.mark.parametrize(("args", "t", "p", "digits"), WILLIAMS_VECTORS)
def test_williams_vectors(args, t, p, digits):
    res = williams_test(*args)
    assert res.statistic == pytest.approx(t, abs=1e-6)
    assert f"{res.pvalue:.{digits}g}" == p
    assert res.df == args[3] - 3
    two = williams_test(*args, alternative="two-sided")
    assert two.pvalue == pytest.approx(2 * res.pvalue, rel=1e-12)
    r12, r13, r23, _ = args
    assert res.det_r == pytest.approx(1 - r12**2 - r13**2 - r23**2 + 2 * r12 * r13 * r23)


def test_williams_absolute_values_and_direction():
    assert williams_test(-0.65, -0.55, 0.30, 50).statistic == pytest.approx(0.816078, abs=1e-6)
    lower = williams_test(0.55, 0.65, 0.30, 50)
    assert lower.statistic < 0 and lower.pvalue > 0.5
    with pytest.raises(ValueError, match="n > 3"):
        williams_test(0.5, 0.4, 0.3, 3)


def _data(seed=0, n=60):
    rng = np.random.default_rng(seed)
    human = rng.normal(size=n)
    return human, {
        "good": human + rng.normal(scale=0.5, size=n),
        "fair": human + rng.normal(scale=1.0, size=n),
        "poor": human + rng.normal(scale=3.0, size=n),
    }


@pytest.mark.parametrize(
    ("fn", "ref"),
    [
        (pearson, sps.pearsonr),
        (spearman, sps.spearmanr),
        (lambda x, y: kendall(x, y, "b"), lambda x, y: sps.kendalltau(x, y, variant="b")),
        (lambda x, y: kendall(x, y, "c"), lambda x, y: sps.kendalltau(x, y, variant="c")),
    ],
)
def test_correlations_equal_scipy(fn, ref):
    human, metrics = _data()
    ours, theirs = fn(metrics["fair"], human), ref(metrics["fair"], human)
    assert ours.statistic == theirs.statistic
    assert ours.pvalue == theirs.pvalue
    assert ours.n == len(human)


def test_correlate_by_name_and_system_level():
    human, metrics = _data()
    assert correlate(metrics["good"], human, "kendall_c").method == "kendall_c"
    systems = [f"s{i % 6}" for i in range(len(human))]
    res = system_level(metrics["good"], human, systems, "spearman")
    df = pd.DataFrame({"m": metrics["good"], "h": human, "s": systems}).groupby("s").mean()
    assert res.n == 6 and res.level == "system"
    assert res.statistic == pytest.approx(sps.spearmanr(df["m"], df["h"]).statistic)


def test_bootstrap_is_seeded_and_reproducible():
    human, metrics = _data()
    for method in ("pearson", "spearman", "kendall_b", "kendall_c"):
        r = correlate(metrics["fair"], human, method)
        a = r.confidence_interval(n_resamples=200, seed=7)
        b = r.confidence_interval(n_resamples=200, seed=7)
        c = r.confidence_interval(n_resamples=200, seed=8)
        assert a == b and a.seed == 7 and a.n_resamples == 200
        assert (a.low, a.high) != (c.low, c.high)
        assert a.low < r.statistic < a.high


def test_bootstrap_pearson_stays_within_one():
    """An exactly linear pair whose sums round past 1 (-1.0000000000000002 here, before the
    clip): as scipy's pearsonr, a resample's r is at most 1 in size."""
    from capeval_core.stats import bootstrap_statistics

    x = np.array([9.5, 1.4, 9.5, 3.1, 4.2])
    y = np.array([-15.0, 1.2, -15.0, -2.2, -4.4])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # resamples drawing one value of a side are NaN
        values = bootstrap_statistics(x, y, "pearson", 200, seed=0)
    finite = values[np.isfinite(values)]
    assert finite.size > 100 and np.all(np.abs(finite) <= 1.0)
    assert np.any(finite == -1.0)


def test_scores_near_the_largest_float_keep_their_interval_and_combination():
    """An external metric with 1e308 and -1e308 among its scores: the squares overflowed, the
    resampled r was 0 or NaN (an interval of [0, 0] around r = 0.32), and the min-max
    normalisation of the combined metric gave NaN."""
    from capeval_core.stats import bootstrap_statistics
    from capeval_core.stats.combined import minmax

    x = np.array([1e308, -1e308, 0.3, 0.4, 0.2, 0.9])
    y = np.array([4.0, 3.0, 2.0, 5.0, 1.0, 3.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        values = bootstrap_statistics(x, y, "pearson", 300, seed=0)
        scaled = bootstrap_statistics(x / 1e300, y, "pearson", 300, seed=0)
        np.testing.assert_allclose(values, scaled, rtol=1e-12)  # r does not see the scale
        assert minmax(x).tolist() == [1.0, 0.0, 0.5, 0.5, 0.5, 0.5]


def test_system_level_intervals_near_the_largest_float_are_the_scaled_ones():
    """The system means of 1e308 overflowed before any correlation (an interval of
    [-0.0, 0.27] where the same scores scaled down give [-0.31, 1.0])."""
    from capeval_core.stats.within_systems import system_intervals

    x = np.array([1e308, -1e308, 0.3, 0.4, 0.2, 0.9, 0.5, 0.1])
    y = [4.0, 3.0, 2.0, 5.0, 1.0, 3.0, 2.0, 4.0]
    systems = list("abcdabcd")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # resamples of a constant side are NaN
        huge = system_intervals({"m": x}, y, systems, ["pearson"], n_resamples=200)
        scaled = system_intervals({"m": x / 1e300}, y, systems, ["pearson"], n_resamples=200)
    got, want = huge["m", "pearson"], scaled["m", "pearson"]
    assert (got.low, got.high) == pytest.approx((want.low, want.high), rel=1e-12)


def test_bootstrap_vectorised_pearson_matches_a_loop():
    from capeval_core.stats import bootstrap_statistics

    human, metrics = _data(n=30)
    x = metrics["fair"]
    fast = bootstrap_statistics(x, human, "spearman", 50, seed=3)
    idx = np.random.default_rng(3).integers(0, 30, size=(50, 30))
    slow = [sps.spearmanr(x[i], human[i]).statistic for i in idx]
    np.testing.assert_allclose(fast, slow, rtol=1e-10)


def test_bootstrap_many_equals_one_call_per_metric(monkeypatch):
    from capeval_core.stats import bootstrap_many, bootstrap_statistics
    from capeval_core.stats import correlation as corr

    rng = np.random.default_rng(4)
    human = rng.integers(1, 5, 300).astype(float)  # 4 grades
    metrics = {
        "fair": human + rng.normal(size=300),
        "tied": np.round(human + rng.normal(size=300)),
        "noise": rng.normal(size=300),
    }
    methods = ("pearson", "spearman", "kendall_b", "kendall_c")
    many = bootstrap_many(metrics, human, methods, 250, seed=2)
    assert set(many) == {(k, m) for k in metrics for m in methods}
    for (key, method), values in many.items():
        one = bootstrap_statistics(metrics[key], human, method, 250, seed=2)
        assert np.array_equal(values, one, equal_nan=True), (key, method)
    # Spearman's exact integer sums equal the plain weighted Pearson of the weighted ranks
    monkeypatch.setattr(corr, "_EXACT_RANKS", 0)
    plain = bootstrap_many(metrics, human, ("spearman",), 250, seed=2)
    assert all(np.array_equal(plain[k], many[k]) for k in plain)


def _tied_data(n, levels, seed):
    """Human grades on ``levels`` values; metrics with ties (rounded, a block of zeros) and
    without, and one on as many levels as items."""
    rng = np.random.default_rng(seed)
    human = rng.integers(0, levels, n) / 2 + 1
    return human, {
        "rounded": np.round(human + rng.normal(size=n), 1),
        "zeros": np.where(rng.random(n) < 0.3, 0.0, human + rng.normal(size=n)),
        "continuous": rng.normal(size=n),
        "graded": rng.integers(0, 3, n).astype(float),
    }


def _scipy_per_resample(x, y, method, idx):
    """The straightforward reference: scipy on each resample's drawn pairs."""
    fn = {
        "pearson": sps.pearsonr,
        "spearman": sps.spearmanr,
        "kendall_b": lambda a, b: sps.kendalltau(a, b, variant="b"),
        "kendall_c": lambda a, b: sps.kendalltau(a, b, variant="c"),
    }[method]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return np.array([fn(x[i], y[i]).statistic for i in idx])


@pytest.mark.parametrize(("n", "levels"), [(6, 2), (40, 3), (300, 16), (250, 250)])
def test_bootstrap_equals_scipy_on_each_resample(n, levels):
    """Every resampled value, and so every interval, is scipy's on the same draws
    (``default_rng(seed).integers(0, n, size=(R, n))``); Kendall's bit for bit, whichever
    side has ties, with NaN where a resample is constant (n = 6 draws some)."""
    from capeval_core.stats import bootstrap_many
    from capeval_core.stats.correlation import percentile_interval

    human, metrics = _tied_data(n, levels, seed=n)
    methods = ("pearson", "spearman", "kendall_b", "kendall_c")
    many = bootstrap_many(metrics, human, methods, 400, seed=11)
    idx = np.random.default_rng(11).integers(0, n, size=(400, n))
    for (key, method), values in many.items():
        ref = _scipy_per_resample(metrics[key], human, method, idx)
        if method.startswith("kendall"):
            assert np.array_equal(values, ref, equal_nan=True), (key, method)
        else:
            assert np.array_equal(np.isnan(values), np.isnan(ref)), (key, method)
            np.testing.assert_allclose(values, ref, rtol=0, atol=1e-12, err_msg=str(key))
        ours = percentile_interval(values, 0.95, 400, 11)
        finite = ref[np.isfinite(ref)]
        low, high = np.quantile(finite, [0.025, 0.975])
        assert abs(ours.low - low) <= 1e-12 and abs(ours.high - high) <= 1e-12, (key, method)


def test_correlation_table_intervals_equal_the_reference():
    """The Correlations page's table: scipy's point estimates and intervals equal to the
    percentiles of scipy on each resample."""
    from capeval_core.judgments.analysis import correlation_table

    human, metrics = _tied_data(200, 16, seed=3)
    table = correlation_table(human, metrics, n_resamples=300, seed=5, use_cache=False)
    idx = np.random.default_rng(5).integers(0, 200, size=(300, 200))
    for row in table.itertuples():
        x = metrics[row.metric]
        if row.method.startswith("kendall"):
            point = sps.kendalltau(x, human, variant=row.method[-1]).statistic
        else:
            point = correlate(x, human, row.method).statistic
        assert row.statistic == point
        ref = _scipy_per_resample(x, human, row.method, idx)
        low, high = np.quantile(ref[np.isfinite(ref)], [0.025, 0.975])
        assert abs(row.ci_low - low) <= 1e-12 and abs(row.ci_high - high) <= 1e-12, row


def test_kendall_counts_give_both_variants_in_one_pass():
    from capeval_core.stats.kendall_counts import levels, resampled_kendall, sorted_groups

    human, metrics = _tied_data(50, 4, seed=9)
    x = metrics["rounded"]
    idx = np.random.default_rng(2).integers(0, 50, size=(30, 50))
    w = np.stack([np.bincount(i, minlength=50) for i in idx]).astype(float)
    b, c = resampled_kendall(w, sorted_groups(x), levels(human))
    assert np.array_equal(b, _scipy_per_resample(x, human, "kendall_b", idx))
    assert np.array_equal(c, _scipy_per_resample(x, human, "kendall_c", idx))
    # Kendall's tau is symmetric: the sorted side and the levelled side may be swapped
    b2, c2 = resampled_kendall(w, sorted_groups(human), levels(x))
    assert np.array_equal(c, c2)
    np.testing.assert_allclose(b, b2, rtol=0, atol=1e-15)  # the two square roots swap


def test_bootstrap_values_do_not_depend_on_the_worker_threads(monkeypatch):
    from capeval_core.stats import bootstrap_many
    from capeval_core.stats import correlation as corr

    human, metrics = _tied_data(120, 5, seed=4)
    methods = ("spearman", "kendall_b", "kendall_c")
    threaded = bootstrap_many(metrics, human, methods, 200, seed=1)
    monkeypatch.setattr(corr, "available_cpus", lambda: 1)
    single = bootstrap_many(metrics, human, methods, 200, seed=1)
    assert all(np.array_equal(threaded[k], single[k], equal_nan=True) for k in threaded)


def test_bootstrap_refuses_an_unknown_method():
    from capeval_core.errors import InputError
    from capeval_core.stats import bootstrap_many

    with pytest.raises(InputError, match="unknown correlation 'kendal_b'"):
        bootstrap_many({"m": [1.0, 2, 3]}, [1.0, 3, 2], ("kendal_b",), 5)


@pytest.mark.parametrize("method", ["pearson", "spearman", "kendall_b", "kendall_c"])
def test_constant_input_gives_nan_with_scipy_warning(method):
    with pytest.warns(sps.ConstantInputWarning):
        r = correlate([1.0] * 5, [1, 2, 3, 4, 5], method)
    assert math.isnan(r.statistic)


def test_williams_matrix_refuses_lower_and_diagonal():
    human, metrics = _data(n=200)
    m = williams_matrix(human, metrics)
    assert m.metrics == ("good", "fair", "poor")
    assert all(math.isnan(m.pvalues[i, i]) for i in range(3))
    assert np.isnan(m.pvalues[np.tril_indices(3)]).all()  # lower-correlated rows refused
    r = {k: sps.pearsonr(v, human).statistic for k, v in metrics.items()}
    r23 = sps.pearsonr(metrics["good"], metrics["fair"]).statistic
    expected = williams_test(r["good"], r["fair"], r23, 200).pvalue
    assert m.pvalues[0, 1] == pytest.approx(expected)
    two = williams_matrix(human, metrics, "kendall_c", alternative="two-sided")
    assert np.isfinite(two.pvalues[1, 0]) and two.pvalues[1, 0] == pytest.approx(two.pvalues[0, 1])


def test_combined_arithmetic():
    assert minmax([3, 5, 4]).tolist() == [0.0, 1.0, 0.5]
    assert minmax([2, 2]).tolist() == [0.0, 0.0]
    scores = {"a": [0, 5, 10], "b": [1, 3, 2], "meteor": [0.1, 0.2, 0.3]}
    np.testing.assert_allclose(combine(scores, ["a", "b"]), [0.0, 0.75, 0.75])
    assert default_subset(["bleu_4", "meteor", "wmd"]) == ("wmd", "meteor")
    human, metrics = _data(n=100)
    ranked = rank_subsets(human, metrics)
    assert len(ranked) == 7
    stats_ = [abs(r.statistic) for r in ranked]
    assert stats_ == sorted(stats_, reverse=True)
    best = next(r for r in ranked if r.subset == ("good",))
    assert math.isnan(best.pvalue_vs_best) and best.best_single == "good"
    pair = next(r for r in ranked if r.subset == ("good", "fair"))
    assert pair.statistic == pytest.approx(
        sps.pearsonr(combine(metrics, ["fair", "good"]), human).statistic
    )


def test_sample_references_is_seeded():
    refs = [[f"r{i}" for i in range(50)], ["x", "y"]]
    a = sample_references(refs, 5, 3, seed=1)
    assert a == sample_references(refs, 5, 3, seed=1) and a != sample_references(refs, 5, 3, 2)
    assert all(len(d[0]) == 5 and len(set(d[0])) == 5 and d[1] == ("x", "y") for d in a)


# hand-made: pair 1 right, 2 wrong, 3 metric tie, 4 human tie (a wins by metric)
A = [0.9, 0.1, 0.5, 0.8]
B = [0.1, 0.9, 0.5, 0.2]
PREF = [1, 1, -1, 0]
CATS = ["HC", "HI", "HI", "MM"]


@pytest.mark.parametrize(("rule", "credit"), [("half", 0.5), ("correct", 1.0), ("wrong", 0.0)])
def test_pairwise_accuracy_metric_tie_rules(rule, credit):
    r = pairwise_accuracy(A, B, PREF, CATS, metric_tie=rule, human_tie="drop")
    assert r.n == 3 and r.n_human_ties == 1
    assert r.accuracy == pytest.approx((1 + 0 + credit) / 3)
    assert r.by_category["HC"] == 1.0
    assert r.by_category["HI"] == pytest.approx(credit / 2)
    assert math.isnan(r.by_category["MM"])


def test_pairwise_accuracy_human_tie_random_is_seeded():
    accs = {
        pairwise_accuracy(A, B, PREF, CATS, human_tie="random", seed=s).by_category["MM"]
        for s in range(20)
    }
    assert accs == {0.0, 1.0}  # the coin decides; both sides happen across seeds
    r1 = pairwise_accuracy(A, B, PREF, CATS, seed=5)
    assert r1 == pairwise_accuracy(A, B, PREF, CATS, seed=5)
    assert r1.n == 4 and r1.seed == 5


def test_pairwise_accuracy_averages_draws():
    a = np.array([[0.9, 0.2], [0.1, 0.2]])
    b = np.array([[0.1, 0.3], [0.5, 0.3]])
    r = pairwise_accuracy(a, b, [1, -1])
    assert r.draws == 2 and r.accuracy == pytest.approx((0.5 + 1.0) / 2)


def test_scores_equal_but_for_rounding_noise_are_a_metric_tie():
    """Issue 34: WMD ignores word order, yet its transport solver leaves ~1e-16 between a
    caption and its shuffle; such a tie counts half, so a shuffle scores exactly 50 %."""
    correct = np.array([0.5, 0.7, 3.2, 0.1])
    noisy = correct + np.array([1e-16, -2e-16, 4e-15, 0.0])
    assert forced_choice_accuracy(correct, {"shuffled": noisy}).accuracy == {"shuffled": 0.5}
    r = pairwise_accuracy(correct, noisy, [1, -1, 1, -1])
    assert r.accuracy == 0.5
    # a real difference is not a tie, nor are two tiny smoothed BLEU-4 values
    assert forced_choice_accuracy([0.5], {"d": [0.5 - 1e-6]}).accuracy == {"d": 1.0}
    assert forced_choice_accuracy([6.8e-09], {"d": [1.4e-12]}).accuracy == {"d": 1.0}
    assert forced_choice_accuracy([0.0], {"d": [0.0]}).accuracy == {"d": 0.5}


def test_forced_choice_accuracy():
    r = forced_choice_accuracy(
        [0.9, 0.5, 0.3, 0.7], {"shuffled": [0.1, 0.5, 0.4, 0.2], "other-image": [0, 0, 0, 0]}
    )
    assert r.accuracy == {"shuffled": 0.625, "other-image": 1.0}
    assert r.n == {"shuffled": 4, "other-image": 4}
    assert forced_choice_accuracy([1, 1], [1, 0], metric_tie="wrong").accuracy == {
        "distracted": 0.5
    }


def test_forced_choice_by_type_takes_the_preferred_caption_as_correct():
    """The Robustness page's grouping: a pair whose humans prefer ``b`` has its correct
    caption in ``b``; pairs without a category are "distracted"; types keep first-seen order
    and each is scored on its own pairs only."""
    a = [0.9, 0.2, 0.6, 0.5, 0.1]
    b = [0.1, 0.8, 0.7, 0.5, 0.3]
    prefs = np.array([1.0, -1.0, 1.0, 1.0, np.nan])
    cats = ["shuffled", "shuffled", None, "other-image", None]
    r = forced_choice_by_type(a, b, prefs, cats)
    assert list(r.accuracy) == ["shuffled", "distracted", "other-image"]
    # shuffled: a wins, then b (preferred) wins; distracted: b beats a twice (NaN: a correct)
    assert r.accuracy == {"shuffled": 1.0, "distracted": 0.0, "other-image": 0.5}
    assert r.n == {"shuffled": 2, "distracted": 2, "other-image": 1}
    assert r.metric_tie == "half"
    assert forced_choice_by_type(a, b, prefs, cats, metric_tie="wrong").accuracy["other-image"] == 0
    # each type equals forced_choice_accuracy on its own rows
    alone = forced_choice_accuracy([0.9, 0.8], {"shuffled": [0.1, 0.2]})
    assert alone.accuracy["shuffled"] == r.accuracy["shuffled"]


def test_forced_choice_by_type_checks_lengths_and_ties():
    from capeval_core.errors import InputError

    with pytest.raises(InputError, match=r"same length \(got 2, 2, 1 and 2\)"):
        forced_choice_by_type([1, 2], [2, 1], [1], ["x", "y"])
    with pytest.raises(InputError, match="metric_tie"):
        forced_choice_by_type([1], [2], [1], ["x"], metric_tie="never")  # type: ignore[arg-type]
    assert forced_choice_by_type([], [], [], []).accuracy == {}


def test_williams_between_is_the_matrix_entry_with_its_arithmetic():
    from capeval_core.errors import InputError

    rng = np.random.default_rng(4)
    human = rng.normal(size=60)
    a = human + rng.normal(scale=0.5, size=60)
    b = human + rng.normal(scale=1.5, size=60)
    for method in ("pearson", "kendall_b"):
        r = williams_between(human, a, b, method, "greater")
        matrix = williams_matrix(human, {"a": a, "b": b}, method, "greater")
        assert matrix.metrics == ("a", "b")
        assert r.pvalue == pytest.approx(matrix.pvalues[0, 1], rel=1e-12)
        assert r.r12 == pytest.approx(correlate(a, human, method).statistic)
        assert r.r13 == pytest.approx(correlate(b, human, method).statistic)
        assert r.r23 == pytest.approx(correlate(a, b, method).statistic)
        assert r.n == 60 and r.alternative == "greater"
    two = williams_between(human, a, b, "pearson", "two-sided")
    assert two.pvalue == pytest.approx(2 * williams_between(human, a, b).pvalue)
    with pytest.raises(InputError, match="`scores_b` has 59 items, `human` has 60"):
        williams_between(human, a, b[:-1])


def test_export_escapes_formulas_and_carries_signatures(tmp_path):
    frame = pd.DataFrame(
        {
            "candidate": ['=HYPERLINK("http://x")', "+1", "-2+3", "@SUM(A1)", "\tx", "ok"],
            "score": [-0.5, 1, 2, 3, 4, 5],
        }
    )
    text = to_csv_text(frame)
    assert "#" not in text
    back = pd.read_csv(io.StringIO(text))  # a plain read (issue 33)
    assert all(str(v).startswith("'") for v in back["candidate"][:5])
    assert back["candidate"][5] == "ok"
    assert back["score"].tolist() == [-0.5, 1, 2, 3, 4, 5]
    path = export_csv(tmp_path / "out.csv", frame, {"cider_d": "cider_d|sigma:6.0|tok:ptb"})
    assert path.read_text(encoding="utf-8").startswith("candidate,score")
    sidecar = json.loads((tmp_path / "out.signatures.json").read_text())
    assert sidecar["signatures"] == {"cider_d": "cider_d|sigma:6.0|tok:ptb"}
    assert sidecar["describes"] == "out.csv" and sidecar["capeval"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert not any(line.startswith(("=", "+", "-", "@")) for line in text.splitlines())


def _tied_metrics(n, seed):
    """Scores with the kinds of ties metrics have: many zeros, a few grades, rounded values,
    a constant metric and two identical ones (equal subsets' correlations tie exactly)."""
    rng = np.random.default_rng(seed)
    human = rng.choice([1.0, 2.0, 2.5, 3.0, 4.0, 5.0], n)
    z = human - human.mean()
    raw = {f"m{i}": 0.3 * i * z + rng.normal(size=n) for i in range(6)}
    raw["m0"] = np.where(raw["m0"] < 0, 0.0, raw["m0"])
    raw["m1"] = np.digitize(raw["m1"], [-1, 0, 1]).astype(float)
    raw["m2"] = np.round(raw["m2"], 1)
    raw["flat"] = np.full(n, 0.5)
    raw["copy"] = raw["m4"].copy()
    return human, raw


@pytest.mark.parametrize("method", ["pearson", "spearman", "kendall_b", "kendall_c"])
@pytest.mark.parametrize("alternative", ["greater", "two-sided"])
def test_rank_subsets_equals_one_correlate_call_per_subset(method, alternative):
    from capeval_core.stats.combined import _rank_subsets, _subset_means

    human, metrics = _tied_metrics(300, seed=len(method))
    fast = rank_subsets(human, metrics, method, alternative)
    plain = _rank_subsets(human, metrics, method, alternative, None, fast=False)
    assert len(fast) == len(plain) == 2**8 - 1
    assert [r.best_single for r in fast] == [r.best_single for r in plain]
    # the same subsets in the same order (ties between equal subsets kept in their order)
    assert [r.subset for r in fast] == [r.subset for r in plain]
    np.testing.assert_allclose(
        [r.statistic for r in fast], [r.statistic for r in plain], rtol=0, atol=1e-12
    )
    np.testing.assert_allclose(
        [r.pvalue_vs_best for r in fast], [r.pvalue_vs_best for r in plain], rtol=1e-9, atol=0
    )
    assert sum(math.isnan(r.statistic) for r in fast) == 1  # the constant metric alone
    # the subsets' means are np.mean's, bit for bit
    keys = list(metrics)
    subsets = [s for k in range(1, len(keys) + 1) for s in itertools.combinations(keys, k)]
    normalised = {k: minmax(v) for k, v in metrics.items()}
    means = _subset_means(normalised, subsets)
    for row, subset in zip(means, subsets, strict=True):
        assert (row == np.mean([normalised[k] for k in subset], axis=0)).all()


def test_rank_subsets_with_missing_scores_takes_the_plain_path():
    human, metrics = _data(n=40)
    metrics = {k: np.asarray(v, dtype=float).copy() for k, v in metrics.items()}
    first = next(iter(metrics))
    metrics[first][3] = np.nan
    ranked = rank_subsets(human, metrics, "spearman")
    assert len(ranked) == 2 ** len(metrics) - 1


# -- the package imports its statistics on first use ---------------------------------------------
def test_every_public_name_of_the_package_resolves_to_its_module() -> None:
    import capeval_core.stats as stats
    from capeval_core.stats import correlation, export, williams

    assert stats.williams_test is williams.williams_test
    assert stats.to_csv_text is export.to_csv_text and stats.METHODS is correlation.METHODS
    assert all(getattr(stats, name) is not None for name in stats.__all__)
    assert set(stats.__all__) <= set(dir(stats))
    with pytest.raises(AttributeError, match="no attribute 'nothing_here'"):
        stats.nothing_here  # noqa: B018


def test_writing_a_csv_does_not_import_scipy() -> None:
    """``capeval score --per-item`` names its sidecar through ``stats.export``: that must not
    load the statistics (scipy.stats took 1.2 s of a 1.7 s run on two images)."""
    code = (
        "import sys\n"
        "from capeval_core.stats.export import sidecar_path, to_csv_text\n"
        "from capeval_core.stats import safe_cell\n"
        "print(sorted(m for m in ('scipy.stats', 'capeval_core.stats.correlation') "
        "if m in sys.modules))\n"
    )
    assert fresh_python(code).strip() == "[]"


# -- bad and degenerate input (a sweep of the library as a caller uses it) ----------------------
@pytest.mark.parametrize("method", ["pearson", "spearman", "kendall_b", "kendall_c"])
def test_bootstrap_of_unequal_lengths_is_refused_not_a_crash(method):
    """Kendall's compiled count read past the shorter array: the interpreter died (SIGSEGV);
    Pearson and Spearman broke deep in numpy."""
    from capeval_core.stats import bootstrap_many, bootstrap_statistics

    with pytest.raises(InputError, match=r"`x` and `y` must be 1-D of the same length"):
        bootstrap_statistics(np.arange(20.0), np.arange(10.0), method, 5)
    with pytest.raises(InputError, match=r"`xs\['m'\]` and `y` must be 1-D"):
        bootstrap_many({"m": np.arange(6.0)}, np.arange(10.0), (method,), 5)


@pytest.mark.parametrize("method", ["pearson", "spearman", "kendall_b", "kendall_c"])
def test_a_nan_correlation_has_a_nan_interval(method):
    """Spearman and Kendall ranked the NaN as the largest value: r NaN, interval (0.6, 1.0)."""
    x = [1, 2, 3, 4, 5, 6, 7, np.nan]
    y = [2, 1, 4, 3, 6, 5, 8, 7]
    r = correlate(x, y, method)
    assert math.isnan(r.statistic)
    ci = r.confidence_interval(n_resamples=200)
    assert math.isnan(ci.low) and math.isnan(ci.high)
    s = [0.3, 0.5, 0.2, 0.9, np.nan, 0.8, 0.1, 0.7, 0.6, 0.35, 0.55, 0.15]
    systems = list("aabbccddeeff")
    r = system_level(s, list(range(12)), systems, method)
    assert math.isnan(r.statistic) and math.isnan(r.confidence_interval(n_resamples=200).low)


@pytest.mark.parametrize("method", ["pearson", "spearman", "kendall_b", "kendall_c"])
def test_constant_human_means_give_a_nan_system_interval(method):
    """Means of one repeated value differ in their last bits: Pearson's rows gave an interval
    of (-6.7e-16, 3.7e-16) around r = NaN."""
    s = [0.3, 0.5, 0.2, 0.9, 0.4, 0.8, 0.1, 0.7, 0.6, 0.35, 0.55, 0.15]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sps.ConstantInputWarning)
        r = system_level(s, [0.1] * 12, list("aabbccddeeff"), method)
    ci = r.confidence_interval(n_resamples=200)
    assert math.isnan(r.statistic) and math.isnan(ci.low) and math.isnan(ci.high)


def test_tiny_scores_keep_their_interval():
    """Squares of 1e-170 underflow to 0: the interval was (1.0, 1.0) around r = 0.886."""
    x, y = np.array([1.0, 3, 2, 5, 4, 6]), np.arange(1.0, 7)
    tiny = pearson(x * 1e-170, y).confidence_interval()
    plain = pearson(x, y).confidence_interval()
    assert tiny.low == pytest.approx(plain.low, rel=1e-12)
    assert tiny.high == pytest.approx(plain.high, rel=1e-12)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"level": 95}, r"`level` must be between 0 and 1, e.g. 0.95 \(got 95\)"),
        ({"level": -0.5}, r"`level` must be between 0 and 1"),
        ({"n_resamples": -1}, r"`n_resamples` must be from 1 to 1,000,000 \(got -1\)"),
        ({"n_resamples": 100.0}, r"`n_resamples` must be a whole number"),
        # 10**11 asked numpy for 745 GiB (a traceback of MemoryError)
        ({"n_resamples": 10**11}, r"`n_resamples` must be from 1 to 1,000,000"),
    ],
)
def test_interval_arguments_are_checked(kwargs, message):
    """level=95 failed in numpy ("Quantiles must be in the range [0, 1]"), level=-0.5 gave
    low > high."""
    for r in (
        pearson([1, 3, 2, 5, 4, 6], [1, 2, 3, 4, 5, 6]),
        system_level([1, 2, 3, 5, 4, 6], [1, 1, 2, 2, 3, 3], list("aabbcc")),
    ):
        with pytest.raises(InputError, match=message):
            r.confidence_interval(**kwargs)


def test_bootstrap_many_refuses_more_resamples_than_the_cap():
    """``bootstrap_many`` (the correlate command's and the app's intervals) took any count:
    10**11 asked numpy for 745 GiB. Zero stays allowed (no intervals)."""
    from capeval_core.stats import bootstrap_many

    x, y = {"m": [1.0, 3, 2, 5]}, [1.0, 2, 3, 4]
    with pytest.raises(InputError, match=r"`n_resamples` must be from 0 to 1,000,000"):
        bootstrap_many(x, y, ("pearson",), 10**11, seed=0)
    assert bootstrap_many(x, y, ("pearson",), 0, seed=0)["m", "pearson"].shape == (0,)


def test_a_sparse_key_compared_with_a_copy_is_not_significant():
    """A resample drawing none of the defined items is NaN; it made every null value NaN and
    p = 1 / (R + 1): an identical copy 'significant' at 0.001."""
    from capeval_core.metrics.statistics import NanMeanStatistics
    from capeval_core.stats import resampling

    v = np.full(40, np.nan)
    v[[1, 5, 9]] = [0.2, 0.4, 0.6]
    a = NanMeanStatistics.from_values(("x",), {"x": v})
    b = NanMeanStatistics.from_values(("x",), {"x": v.copy()})
    boot = resampling.bootstrap({"a": a, "b": b}, 1000, seed=1)
    assert np.isnan(boot["a"][:, 0]).any()  # the case: some resamples draw no defined item
    result = resampling.paired_tests(a, b, boot["a"], boot["b"])["x"]
    assert result.delta == 0.0 and result.p_bootstrap == 1.0 and result.p_randomization == 1.0


def test_pairwise_preferences_other_than_plus_minus_one_are_refused():
    """A preference of 2 never equalled a metric's +1: counted a loss every time, silently;
    forced_choice_by_type took its sign."""
    with pytest.raises(InputError, match=r"pair 0 has 2"):
        pairwise_accuracy([0.9, 0.2], [0.1, 0.4], [2, -2])
    with pytest.raises(InputError, match=r"pair 1 has -2"):
        forced_choice_by_type([0.9, 0.2], [0.1, 0.4], [1, -2], ["s", "s"])
    with pytest.raises(InputError, match=r"one value per pair \(got shape \(2, 1\)\)"):
        pairwise_accuracy([0.9, 0.2], [0.1, 0.4], [[1], [-1]])


def test_a_pair_without_a_score_is_left_out_and_said():
    """A NaN score counted as a loss (accuracy 0.5 of 2 pairs, no word)."""
    from capeval_core.errors import ItemsLeftOutWarning

    with pytest.warns(ItemsLeftOutWarning, match=r"1 of 2 pairs have no score"):
        r = pairwise_accuracy([0.9, np.nan], [0.1, 0.4], [1, -1])
    assert r.accuracy == 1.0 and r.n == 1
    with pytest.warns(ItemsLeftOutWarning, match=r"1 of 2 pairs have no score"):
        f = forced_choice_accuracy([0.9, 0.5], {"shuffled": [0.2, np.nan]})
    assert f.accuracy == {"shuffled": 1.0} and f.n == {"shuffled": 1}


def test_williams_arguments_that_no_scores_give_are_refused():
    with pytest.raises(InputError, match=r"`r12` must be a correlation, between -1 and 1"):
        williams_test(1.5, 0.2, 0.1, 100)
    with pytest.raises(InputError, match=r"`n` must be a whole number of items \(got 3.5\)"):
        williams_test(0.9, 0.8, 0.85, 3.5)
    with pytest.raises(InputError, match=r"cannot come from one set of scores"):
        williams_test(0.9, -0.9, 0.9, 50, absolute=False)
    # n <= 3 is said whatever the scores (it was raised only where one |r| was higher)
    for scores in ({"a": [1, 2, 3], "b": [3, 2, 1]}, {"a": [1, 2, 3], "b": [1, 3, 2]}):
        with pytest.raises(InputError, match=r"needs n > 3 items \(got 3\)"):
            williams_matrix([1, 2, 3], scores)


@pytest.mark.parametrize("method", ["pearson", "spearman", "kendall_b", "kendall_c"])
def test_a_metric_against_its_copy_is_t_0(method):
    """|R| is 0 up to rounding: Pearson and Spearman gave NaN, the Kendalls p = 1."""
    rng = np.random.default_rng(3)
    human = rng.normal(size=20)
    a = human + rng.normal(size=20) * 0.5
    r = williams_between(human, a, a.copy(), method, "two-sided")
    assert r.statistic == 0.0 and r.pvalue == 1.0


def test_williams_says_which_scores_are_constant():
    """correlation_matrix swallowed scipy's ConstantInputWarning: p NaN, no word."""
    with pytest.warns(sps.ConstantInputWarning, match=r"'scores_a' are constant"):
        r = williams_between([1, 2, 3, 4, 5, 6], [1] * 6, [2, 1, 4, 3, 6, 5])
    assert math.isnan(r.pvalue)


def test_rank_subsets_compares_with_the_best_to_12_decimals():
    """The fast path's 0.8 was 'higher' than correlate's 0.7999999999999999 where the
    reference path saw a tie: to 12 decimals both see the tie, which is tested as the
    Williams matrix tests one (t = 0, p = 0.5)."""
    human, metrics = [1, 2, 3, 4], {"a": [1, 2, 4, 3], "b": [3, 1, 2, 4]}
    fast = {r.subset: r for r in rank_subsets(human, metrics, "spearman")}
    assert round(fast["a", "b"].statistic, 12) == round(fast["a",].statistic, 12)
    assert fast["a", "b"].pvalue_vs_best == 0.5


def test_degenerate_shapes_are_said_with_the_argument():
    with pytest.raises(InputError, match=r"min-max scaling needs one score per item"):
        minmax([])
    with pytest.raises(InputError, match=r"must score the same items"):
        combine({"a": [1, 2, 3], "b": [1, 2]}, ["a", "b"])
    with pytest.raises(InputError, match=r"only 1 system: a correlation across fewer than 3"):
        system_level([1, 2, 3], [1, 2, 3], ["a"] * 3)
    with pytest.raises(InputError, match=r"item 1 has no system"):
        system_level([1, 2, 3], [1, 2, 3], ["a", None, "b"])


def test_paired_tests_refuse_systems_of_other_sizes():
    """With tests="bs" only, systems of 40 and 30 items were compared without a word."""
    from capeval_core.metrics.statistics import MeanStatistics
    from capeval_core.stats import resampling

    a = MeanStatistics.from_values(("x",), {"x": np.linspace(0, 1, 40)})
    b = MeanStatistics.from_values(("x",), {"x": np.linspace(0, 1, 30)})
    boot = np.zeros((10, 1))
    with pytest.raises(InputError, match=r"same number of items \(got 40 and 30\)"):
        resampling.paired_tests(a, b, boot, boot, tests="bs")
    with pytest.raises(InputError, match=r"same resamples"):
        resampling.paired_tests(a, a, boot, np.zeros((9, 1)), tests="bs")


@pytest.mark.parametrize("seed", range(3))
def test_randomization_counts_the_swaps_that_tie_the_observed_difference(seed):
    """Five of 60 items differ: |Δ| is reached again by swapping all five or none, so the
    exact p is 2/32 = 0.0625. float32 swapped sums missed those ties by 1e-7: p = 0.033, a
    false † under the default --paired both."""
    from capeval_core.metrics.statistics import MeanStatistics
    from capeval_core.stats import resampling

    rng = np.random.default_rng(seed)
    a = rng.uniform(0.2, 0.8, 60)
    b = a.copy()
    b[:5] += rng.uniform(0.05, 0.2, 5)
    base = MeanStatistics.from_values(("x",), {"x": a})
    system = MeanStatistics.from_values(("x",), {"x": b})
    boot = resampling.bootstrap({"a": base, "b": system}, 1000, seed=1)
    p = resampling.paired_tests(base, system, boot["a"], boot["b"], tests="ar", seed=1)
    # 10,000 trials: the exact 0.0625 within four standard errors (0.0024 each)
    assert abs(p["x"].p_randomization - 2 / 32) < 4 * math.sqrt(0.0625 * 0.9375 / 10_000)


def test_a_category_pandas_read_as_nan_is_the_uncategorised_one():
    """NaN equals no category, so its pairs were in none: forced choice reported {nan: nan}
    with n 0 and dropped the pair; pairwise accuracy's categories no longer added up to n."""
    import pandas as pd

    from capeval_core.stats import forced_choice_by_type, pairwise_accuracy

    got = forced_choice_by_type([0.9, 0.1], [0.2, 0.8], [1, -1], [np.nan, "s"])
    assert got.n == {"distracted": 1, "s": 1} and got.accuracy == {"distracted": 1.0, "s": 1.0}
    cats = pd.Series([pd.NA, "HC", ""], dtype=object)
    r = pairwise_accuracy([0.9, 0.1, 0.3], [0.2, 0.8, 0.1], [1, -1, 1], categories=cats)
    assert dict(r.n_by_category) == {"none": 2, "HC": 1}
    assert sum(r.n_by_category.values()) == r.n
    with pytest.raises(InputError, match="one category per pair, not one text"):
        pairwise_accuracy([0.9, 0.1], [0.2, 0.8], [1, -1], categories="HC")


def test_series_of_the_same_items_in_another_order_are_refused_not_paired_by_position():
    """pearson(m, h) of two Series in different orders gave -0.529 where m.corr(h) gives
    0.983: values were paired by position, as scipy pairs them, without a word."""
    import pandas as pd

    from capeval_core.stats import bootstrap_many, bootstrap_statistics, correlate

    m = pd.Series([0.9, 0.1, 0.5, 0.3], index=list("dacb"))
    h = pd.Series([1.0, 2, 3, 4], index=list("abcd"))
    for call in (
        lambda: correlate(m, h, "pearson"),
        lambda: bootstrap_statistics(m, h, "pearson", 10),
        lambda: bootstrap_many({"m": m}, h, ("pearson",), 10),
    ):
        with pytest.raises(InputError, match="pandas Series with different indexes"):
            call()
    aligned = correlate(m, h.reindex(m.index), "pearson").statistic
    assert aligned == pytest.approx(m.corr(h))  # pandas lines them up by index
    # the same index (a data frame's columns): paired as they are
    df = pd.DataFrame({"m": m.to_numpy(), "h": h.to_numpy()}, index=list("wxyz"))
    assert correlate(df.m, df.h, "pearson").statistic == pytest.approx(df.m.corr(df.h))


def test_a_seed_numpy_refuses_is_said_as_the_argument():
    """seed="x" or -1 ended in numpy's TypeError or ValueError, naming neither the argument
    nor what it takes."""
    from capeval_core.stats import (
        bootstrap_statistics,
        correlate,
        pairwise_accuracy,
        sample_references,
    )

    r = correlate([1, 2, 3, 4, 5], [2, 1, 4, 3, 5])
    for seed in ("x", -1, 1.5, True):
        for call in (
            lambda s=seed: r.confidence_interval(n_resamples=10, seed=s),
            lambda s=seed: bootstrap_statistics([1, 2, 3], [3, 1, 2], "pearson", 10, s),
            lambda s=seed: pairwise_accuracy([0.5, 0.1], [0.2, 0.3], [0, 1], seed=s),
            lambda s=seed: sample_references([["a", "b", "c"]], 1, 1, seed=s),
        ):
            with pytest.raises(InputError, match=r"`seed` must be None or a whole number >= 0"):
                call()
    assert r.confidence_interval(n_resamples=10, seed=np.int64(3)) == r.confidence_interval(
        n_resamples=10, seed=3
    )


def test_series_refusals_name_the_callers_arguments():
    import pandas as pd

    from capeval_core.stats import pairwise_accuracy, system_level, williams_matrix

    shuffled = pd.Series([0.2, 0.3, 0.1, 0.4], index=[2, 1, 0, 3])
    plain = pd.Series([0.5, 0.1, 0.3, 0.2])
    with pytest.raises(InputError, match=r"^`scores_a` and `scores_b` are pandas Series"):
        pairwise_accuracy(plain, shuffled, [1, -1, 1, 1])
    with pytest.raises(InputError, match=r"^`scores` and `humans` are pandas Series"):
        system_level(plain, shuffled, ["a", "a", "b", "b"])
    with pytest.raises(InputError, match=r"^`human` and `metric_scores\['m'\]` are pandas"):
        williams_matrix(plain, {"m": shuffled, "n": plain})


def test_a_paired_test_on_one_image_is_nan_and_said():
    """One image: every resample is that image, so the bootstrap's null was all 0 and
    p = 1 / (R + 1), 'significant' (the CLI printed "bs < 0.001"); a paired test on one item
    carries no information. Now NaN for both tests, with scipy's DegenerateDataWarning, and
    the CLI's and the paper table's format_p writes it "n/a"."""
    from capeval_core.metrics.statistics import MeanStatistics
    from capeval_core.stats import resampling
    from capeval_core.systems import format_p

    a = MeanStatistics.from_values(("x",), {"x": np.array([0.25])})
    b = MeanStatistics.from_values(("x",), {"x": np.array([0.75])})
    boot = resampling.bootstrap({"a": a, "b": b}, 1000, seed=1)
    for tests in ("bs", "ar", "both"):
        with pytest.warns(sps.DegenerateDataWarning, match="one image"):
            got = resampling.paired_tests(a, b, boot["a"], boot["b"], tests=tests)["x"]
        assert got.delta == 0.5
        if tests != "ar":
            assert math.isnan(got.p_bootstrap)
        if tests != "bs":
            assert math.isnan(got.p_randomization)
        assert math.isnan(got.p_value)
    assert format_p(got.p_value, 1000) == "n/a"


def test_images_that_all_differ_alike_keep_the_bootstraps_p_and_a_copy_p_1():
    """Four images that all gain exactly 0.25: every resample's difference is 0.25, so the
    bootstrap's p is the least there is, 1 / (R + 1), as its zero-width interval says, and
    no warning (only one image carries no information); randomization tests it too. A copy
    (difference 0) keeps p = 1."""
    from capeval_core.metrics.statistics import MeanStatistics
    from capeval_core.stats import resampling

    values = np.array([0.0, 0.25, 0.5, 0.75])
    a = MeanStatistics.from_values(("x",), {"x": values})
    b = MeanStatistics.from_values(("x",), {"x": values + 0.25})
    copy = MeanStatistics.from_values(("x",), {"x": values.copy()})
    boot = resampling.bootstrap({"a": a, "b": b, "c": copy}, 1000, seed=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = resampling.paired_tests(a, b, boot["a"], boot["b"], n_trials=1000, seed=1)["x"]
        same_p = resampling.paired_tests(a, copy, boot["a"], boot["c"], n_trials=100)["x"]
    assert got.confidence_interval == (0.25, 0.25) and got.p_bootstrap == 1 / 1001
    # every swap moves 0.25 / 4 either way per image: |Δ| is reached again by none or all
    # swapped, 2 of 16 patterns: p about 1/8 (1,000 trials: within four standard errors)
    assert 0.08 < got.p_randomization < 0.17 and got.p_value == got.p_randomization
    assert same_p.p_bootstrap == 1.0 and same_p.p_value == 1.0


def test_williams_result_line_writes_p_as_the_tables():
    """It wrote ``p = 0.5`` and ``p = 3.896e-05`` (four significant digits) where the
    Significance page's tables write 0.5000 and < 0.001."""
    assert str(williams_test(0.5, 0.5, 0.3, 50)).endswith("p = 0.5000 (greater)")
    assert "p < 0.001" in str(williams_test(0.90, 0.80, 0.85, 100))
    assert "p = 0.2093 " in str(williams_test(0.65, 0.55, 0.30, 50))


def test_williams_matrix_tests_equal_correlations_as_the_one_pair_test():
    """A metric and its copy read — both ways in the matrix while the one-pair test of the
    same two gave t = 0, p = 0.5 (Williams 1959: r12 = r13 gives t = 0)."""
    human, metrics = _data(n=80)
    metrics = {"good": metrics["good"], "copy": list(metrics["good"]), "poor": metrics["poor"]}
    m = williams_matrix(human, metrics)
    i, j = m.metrics.index("good"), m.metrics.index("copy")
    pair = williams_between(human, metrics["good"], metrics["copy"])
    assert pair.statistic == 0.0 and pair.pvalue == pytest.approx(0.5)
    assert m.pvalues[i, j] == pytest.approx(0.5) and m.pvalues[j, i] == pytest.approx(0.5)
    k = m.metrics.index("poor")
    assert np.isnan(m.pvalues[k, i]) and np.isnan(m.pvalues[k, j])  # weaker: not tested


def test_williams_matrix_names_pairs_whose_absolute_r23_is_not_their_signed_one():
    """The tests take |r23| (as WMT's): right for a distance (turned to agree with humans, its
    correlation with the other metric changes sign too), not for two metrics that both agree
    with humans and correlate negatively with each other, where |r23| makes p smaller than
    Graham & Baldwin's signed test. Such pairs are named, with the turned r23."""
    rng = np.random.default_rng(0)
    a = rng.normal(size=40)
    b = -0.6 * a + 0.8 * rng.normal(size=40)
    human = a + b + rng.normal(size=40)
    m = williams_matrix(human, {"a": a, "b": b, "distance": -a})
    r_ab = sps.pearsonr(a, b).statistic
    assert r_ab < 0 < sps.pearsonr(a, human).statistic and sps.pearsonr(b, human).statistic > 0
    assert m.opposed == (("b", "a", pytest.approx(r_ab)), ("b", "distance", pytest.approx(r_ab)))
    r12, r13 = m.human_correlations["b"], m.human_correlations["a"]
    signed = williams_test(r12, r13, r_ab, 40, absolute=False)
    assert signed.pvalue > m.pvalues[0, 1]  # the signed test is the stricter one here
    assert williams_matrix(*_data(n=200)).opposed == ()
