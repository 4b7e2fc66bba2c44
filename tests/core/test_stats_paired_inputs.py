"""Inputs paired across arguments: pandas Series refused alike by every public function
that pairs two or more of them, a one-metric subset equal to the correlation table, the
labels pairwise accuracy takes, and the fewest systems a system-level view shows."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from capeval_core.errors import InputError
from capeval_core.judgments.analysis import (
    at_level,
    correlation_report,
    correlation_table,
    spearman_between,
)
from capeval_core.stats import (
    combine,
    correlate,
    forced_choice_accuracy,
    forced_choice_by_type,
    pairwise_accuracy,
    rank_subsets,
    system_level,
    williams_between,
)
from capeval_core.stats.intervals import check_aligned
from capeval_core.stats.within_systems import system_intervals, system_means

#: the same six items in two orders: aligned by index they correlate +1, by position -1
H = pd.Series([1.0, 2, 3, 4, 5, 6], index=list("abcdef"))
M = pd.Series([6.0, 5, 4, 3, 2, 1], index=list("fedcba"))
SYSTEMS = ["s", "s", "t", "t", "u", "u"]


def _message(**named: object) -> str:
    with pytest.raises(InputError) as err:
        check_aligned(**named)
    return str(err.value)


def _refused(call, message: str) -> None:
    with pytest.raises(InputError) as err:
        call()
    assert str(err.value) == message


def test_misaligned_series_are_refused_by_every_function_pairing_them():
    """rank_subsets(h, {"m": m}) ranked 'm' at -1.0, combine and spearman_between paired the
    two by position too, while correlate refused them: now all refuse with one message."""
    human_m = _message(human=H, **{"metric_scores['m']": M})
    _refused(lambda: rank_subsets(H, {"m": M}), human_m)
    _refused(
        lambda: correlation_table(H, {"m": M}, n_resamples=10, use_cache=False),
        human_m,  # named as the caller's arguments, not correlate's `x` and `y`
    )
    two = _message(**{"metric_scores['h']": H, "metric_scores['m']": M})
    _refused(lambda: combine({"h": H, "m": M}, ["h", "m"]), two)
    _refused(lambda: spearman_between({"h": H, "m": M}), two)
    _refused(lambda: at_level(H, {"m": M}, None), human_m)  # what correlate takes its levels by
    # a plain human score: the two metrics are still compared with each other
    _refused(lambda: williams_between(list(range(6)), H, M), _message(scores_a=H, scores_b=M))
    _refused(
        lambda: forced_choice_accuracy(H, {"x": M}),
        _message(correct_scores=H, **{"distracted_scores['x']": M}),
    )
    prefs = pd.Series([1, -1, 1, 1, -1, 1], index=list("fedcba"))
    _refused(
        lambda: forced_choice_by_type(H, H, prefs, ["x"] * 6),
        _message(scores_b=H, preferences=prefs),
    )
    cats = pd.Series(["x"] * 6, index=list("fedcba"))
    _refused(
        lambda: pairwise_accuracy(H, H, [1] * 6, cats),
        _message(scores_b=H, categories=cats),
    )
    systems = pd.Series(SYSTEMS, index=list("fedcba"))
    _refused(lambda: system_means(H, systems), _message(values=H, systems=systems))
    _refused(lambda: system_level(H, H, systems), _message(humans=H, systems=systems))
    _refused(
        lambda: system_intervals({"m": H}, H, systems, ["pearson"], n_resamples=10),
        _message(**{"metric_scores['m']": H}, systems=systems),
    )


def test_correlation_table_names_the_callers_arguments_for_a_length_mismatch():
    with pytest.raises(InputError) as err:
        correlation_table([1, 2, 3, 4], {"m": [1, 2, 3]}, n_resamples=10, use_cache=False)
    assert str(err.value) == (
        "`human` and `metric_scores['m']` must be 1-D of the same length (got (4,) and (3,))"
    )


def test_aligned_series_are_still_paired():
    aligned = M.reindex(H.index)
    assert rank_subsets(H, {"m": aligned})[0].statistic == pytest.approx(1.0)
    assert spearman_between({"h": H, "m": aligned}).loc["h", "m"] == pytest.approx(1.0)


#: 0.4 and the next double up: min-max scaling over [0.1, 0.9] rounds both to one value,
#: a tie the metric's own scores do not have
NEAR_TIE = [0.1, 0.9, 0.4, float(np.nextafter(0.4, 1.0)), 0.2, 0.6]
HUMAN = [1.0, 6.0, 4.0, 3.0, 2.0, 5.0]


@pytest.mark.parametrize("method", ["pearson", "spearman", "kendall_b", "kendall_c"])
def test_a_one_metric_subset_is_the_metrics_own_correlation_exactly(method):
    """The combined ranking's one-metric row correlated the min-max scaled scores, whose
    rounding merged a near-tie: Spearman 0.9856 against the table's 0.9429."""
    want = correlate(NEAR_TIE, HUMAN, method).statistic
    for rows in (
        rank_subsets(HUMAN, {"m": NEAR_TIE}, method),
        rank_subsets(HUMAN, {"m": NEAR_TIE, "o": [3.0, 1, 2, 6, 5, 4]}, method),
    ):
        assert {r.subset: r.statistic for r in rows}["m",] == want


def test_a_reports_combined_row_equals_its_table_row():
    report = correlation_report(
        HUMAN,
        {"m": NEAR_TIE},
        n_resamples=10,
        use_cache=False,
        combined_on="kendall_c",
        ci_kendall=False,
    )
    table = report.table.set_index(["metric", "method"])["statistic"]
    assert report.combined[0].statistic == table["m", "kendall_c"]


def test_pairwise_accuracy_takes_the_labels_a_pair_item_holds():
    """["a", "a", "b"] (PairItem.preferred's labels) ended in numpy's bare "could not
    convert string to float: 'a'"."""
    numbers = pairwise_accuracy([0.9, 0.2, 0.5, 0.4], [0.1, 0.4, 0.5, 0.1], [1, -1, 1, np.nan])
    labels = pairwise_accuracy(
        [0.9, 0.2, 0.5, 0.4], [0.1, 0.4, 0.5, 0.1], pd.Series(["a", "b", "a", None])
    )
    assert (labels.accuracy, labels.n) == (numbers.accuracy, numbers.n)
    tied = pairwise_accuracy([0.9, 0.2], [0.1, 0.4], ["tie", "b"], human_tie="drop")
    assert tied.n_human_ties == 1 and tied.n == 1
    with pytest.raises(InputError) as err:
        pairwise_accuracy([0.9, 0.2], [0.1, 0.4], ["a", "x"])
    assert str(err.value) == (
        "`preferences` must be +1 or 'a' (a preferred), -1 or 'b' (b preferred), 0 or 'tie', "
        "or NaN or None (no label); pair 1 has 'x'"
    )


def test_system_level_refuses_two_systems_as_the_table_does():
    """system_level gave ±1 with p = 1 for two systems where correlation_table refused."""
    scores, humans, systems = [1.0, 2, 3, 4], [1.0, 2, 4, 3], ["s", "s", "t", "t"]
    with pytest.raises(InputError) as table:
        correlation_table(humans, {"m": scores}, systems=systems, use_cache=False)
    with pytest.raises(InputError) as one:
        system_level(scores, humans, systems)
    assert (
        str(one.value)
        == str(table.value)
        == (
            "no system-level correlation can be shown: only 2 systems: a correlation across "
            "fewer than 3 systems is always ±1 or undefined"
        )
    )


@pytest.mark.parametrize("method", ["spearman", "kendall_b"])
@pytest.mark.parametrize("fast", [True, False])
def test_williams_r23_uses_the_best_metrics_own_values(method, fast):
    """r12 is the best metric's own correlation, so r23 is taken against its own values too
    (against the scaled ones, whose rounding merged a near-tie, the two described two
    variables)."""
    from capeval_core.stats import williams_test
    from capeval_core.stats.combined import _rank_subsets

    other = [0.3, 0.5, 0.1, 0.6, 0.2, 0.4]
    rows = _rank_subsets(HUMAN, {"m": NEAR_TIE, "o": other}, method, "two-sided", None, fast=fast)
    got = {r.subset: r for r in rows}
    assert got["m",].best_single == "m"
    mean = combine({"m": NEAR_TIE, "o": other}, ["m", "o"])
    r23 = correlate(mean, NEAR_TIE, method).statistic
    want = williams_test(got["m", "o"].statistic, got["m",].statistic, r23, 6, "two-sided")
    assert got["m", "o"].pvalue_vs_best == pytest.approx(want.pvalue, rel=1e-9)


def test_a_subset_tied_with_the_best_metric_is_tested_as_the_williams_matrix_tests_a_tie():
    """The Williams matrix gives a tied pair t = 0, p = 0.5; the combined ranking gave a
    metric's copy (and the two together) no p-value for the same comparison."""
    from capeval_core.stats import williams_matrix

    h = [1, 2, 3, 4, 5, 6, 7, 8]
    x = [1, 3, 2, 4, 6, 5, 8, 7]
    ranked = {r.subset: r.pvalue_vs_best for r in rank_subsets(h, {"m": x, "c": list(x)})}
    matrix = williams_matrix(h, {"m": x, "c": list(x)}).pvalues
    assert matrix[1, 0] == ranked[("c",)] == ranked[("m", "c")] == 0.5
    assert math.isnan(ranked[("m",)])  # the best metric itself
