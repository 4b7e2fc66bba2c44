"""Pairwise accuracy (PASCAL-50S protocol, judgment-formats.md) and forced-choice accuracy.

Knobs of the published protocol: 5 references sampled per pair, 5 draws, a seed; a metric
tie (equal up to :data:`TIE_TOLERANCE`) counts as half ("correct" and "wrong" are the
alternatives); human ties broken at random with the seed ("drop" is the alternative).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from capeval_core.errors import InputError, ItemsLeftOutWarning, refuse_text
from capeval_core.options import is_whole
from capeval_core.stats.intervals import check_aligned, is_missing, seeded

MetricTie = Literal["half", "correct", "wrong"]
HumanTie = Literal["random", "drop"]
_TIE_CREDIT = {"half": 0.5, "correct": 1.0, "wrong": 0.0}
#: two scores closer than this, relative to the larger, are a metric tie: a transport solver or
#: a summation order leaves ~1e-16 noise between scores the metric means to be equal (WMD
#: ignores word order, so a shuffled caption ties; issue 34). Relative, never absolute:
#: coco-caption's smoothed BLEU-4 ranks captions by values of 1e-12 .. 1e-8, and so must we.
TIE_TOLERANCE = 1e-9


def preference(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """+1 where ``a`` scores higher, -1 where ``b`` does, 0 for a tie within
    :data:`TIE_TOLERANCE` (NaN where either score is NaN).

    >>> preference(np.array([0.5, 0.3, 0.2]), np.array([0.5 + 1e-15, 0.2, 0.3])).tolist()
    [0.0, 1.0, -1.0]
    """
    diff = a - b
    scale = np.maximum(np.abs(a), np.abs(b))
    return np.where(np.abs(diff) <= TIE_TOLERANCE * scale, 0.0, np.sign(diff))


#: the labels ``PairItem.preferred`` uses, as the numbers :func:`pairwise_accuracy` counts
PREFERENCE_LABELS = {"a": 1.0, "b": -1.0, "tie": 0.0}


def _preferences(preferences: Sequence[float] | Sequence[str] | np.ndarray) -> np.ndarray:
    """Human preferences as floats: +1 (a), -1 (b), 0 (a tie) or NaN (no label), or the
    labels "a", "b", "tie" (and None) of ``PairItem.preferred``; any other value is refused
    with its pair (a 2 was silently never matched: a loss every time)."""
    raw = np.asarray(preferences)
    if raw.dtype.kind in "OUS" and raw.ndim == 1:  # labels, or numbers among them
        pref = np.empty(raw.size)
        for i, v in enumerate(raw.tolist()):
            if isinstance(v, str) and v not in PREFERENCE_LABELS:
                raise InputError(f"{_TAKES}; pair {i} has {v!r}")
            pref[i] = PREFERENCE_LABELS[v] if isinstance(v, str) else np.nan if is_missing(v) else v
    else:
        pref = np.asarray(preferences, dtype=float)
    if pref.ndim != 1:
        raise InputError(f"`preferences` must be one value per pair (got shape {pref.shape})")
    bad = np.flatnonzero(~np.isnan(pref) & ~np.isin(pref, (-1.0, 0.0, 1.0)))
    if bad.size:
        raise InputError(f"{_TAKES}; pair {bad[0]} has {pref[bad[0]]:g}")
    return pref


_TAKES = (
    "`preferences` must be +1 or 'a' (a preferred), -1 or 'b' (b preferred), 0 or 'tie', "
    "or NaN or None (no label)"
)


def _unscored(scored: np.ndarray, what: str) -> np.ndarray:
    """Pairs with a NaN score in any draw, said in a warning: they are left out, as pairs
    without a label are (counted as losses before, in silence)."""
    missing = ~scored
    if missing.any():
        warnings.warn(
            f"{what}: {int(missing.sum())} of {missing.size} pairs have no score (NaN) and "
            "are left out",
            ItemsLeftOutWarning,
            stacklevel=3,
        )
    return missing


def sample_references(
    references: Sequence[Sequence[str]],
    n_references: int = 5,
    draws: int = 5,
    seed: int | None = 0,
) -> list[list[tuple[str, ...]]]:
    """``draws`` lists with, per pair, ``n_references`` references sampled without
    replacement (all of them when a pair has fewer).

    >>> sample_references([["a", "b", "c"]], n_references=2, draws=1, seed=0)
    [[('b', 'c')]]
    """
    for name, value in (("n_references", n_references), ("draws", draws)):
        if not is_whole(value) or value < 1:
            raise InputError(f"`{name}` must be a whole number >= 1 (got {value!r})")
    refuse_text(references, "references", "reference lists, one per pair")
    for i, refs in enumerate(references):
        refuse_text(refs, f"references[{i}]", "reference captions")
    rng = seeded(seed)
    out = []
    for _ in range(draws):
        drawn = []
        for refs in references:
            refs = tuple(refs)
            if len(refs) <= n_references:
                drawn.append(refs)
            else:
                idx = rng.choice(len(refs), size=n_references, replace=False)
                drawn.append(tuple(refs[i] for i in idx))
        out.append(drawn)
    return out


@dataclass(frozen=True)
class PairwiseAccuracyResult:
    """Accuracy overall and per category, with every knob that produced it."""

    accuracy: float
    by_category: Mapping[str, float]
    n: int
    n_by_category: Mapping[str, int]
    n_human_ties: int
    metric_tie: str
    human_tie: str
    draws: int
    seed: int | None
    method: str = "pairwise accuracy"

    def as_dict(self) -> dict[str, float]:
        return {**self.by_category, "overall": self.accuracy}


def pairwise_accuracy(
    scores_a: Sequence[float] | np.ndarray,
    scores_b: Sequence[float] | np.ndarray,
    preferences: Sequence[float] | Sequence[str] | np.ndarray,
    categories: Sequence[str | None] | None = None,
    *,
    metric_tie: MetricTie = "half",
    human_tie: HumanTie = "random",
    seed: int | None = 0,
) -> PairwiseAccuracyResult:
    """How often the metric prefers the candidate people preferred.

    ``scores_a``/``scores_b``: one value per pair, or shape (draws, pairs) for sampled
    references (accuracy is averaged over draws). ``preferences``: +1 a, -1 b, 0 tie, or
    ``PairItem.preferred``'s labels "a", "b", "tie".

    >>> r = pairwise_accuracy([0.9, 0.2, 0.5], [0.1, 0.4, 0.5], [1, -1, 1])
    >>> r.accuracy
    0.8333333333333334
    """
    if metric_tie not in _TIE_CREDIT:
        raise InputError(f"`metric_tie` must be one of {list(_TIE_CREDIT)} (got {metric_tie!r})")
    if human_tie not in ("random", "drop"):
        raise InputError(f"`human_tie` must be 'random' or 'drop' (got {human_tie!r})")
    check_aligned(
        scores_a=scores_a, scores_b=scores_b, preferences=preferences, categories=categories
    )
    a = np.atleast_2d(np.asarray(scores_a, dtype=float))
    b = np.atleast_2d(np.asarray(scores_b, dtype=float))
    pref = _preferences(preferences).copy()
    if a.shape != b.shape or a.ndim != 2 or a.shape[1] != pref.size:
        raise InputError(
            f"scores of a {a.shape}, b {b.shape} and {pref.size} preferences do not match"
        )
    cats = np.array(
        ["all"] * pref.size if categories is None else _category_labels(categories, "none"),
        dtype=object,
    )
    if cats.size != pref.size:
        raise InputError(f"{cats.size} categories for {pref.size} pairs")
    labelled = ~np.isnan(pref)
    ties = labelled & (pref == 0)
    unscored = _unscored(
        np.isfinite(a).all(axis=0) & np.isfinite(b).all(axis=0), "pairwise_accuracy"
    )
    keep = labelled & ~unscored
    if human_tie == "random":
        # seeded coin per tied pair, drawn in pair order so the result is reproducible
        rng = seeded(seed)
        pref[ties] = np.where(rng.random(int(ties.sum())) < 0.5, 1.0, -1.0)
    else:
        keep &= ~ties
    diff = preference(a, b)  # (draws, pairs)
    credit = np.where(diff == 0, _TIE_CREDIT[metric_tie], (diff == pref).astype(float))
    per_pair = credit.mean(axis=0)
    by_cat, n_cat = {}, {}
    for c in dict.fromkeys(cats.tolist()):
        mask = keep & (cats == c)
        n_cat[c] = int(mask.sum())
        by_cat[c] = float(per_pair[mask].mean()) if mask.any() else float("nan")
    overall = float(per_pair[keep].mean()) if keep.any() else float("nan")
    return PairwiseAccuracyResult(
        overall,
        by_cat,
        int(keep.sum()),
        n_cat,
        int(ties.sum()),
        metric_tie,
        human_tie,
        a.shape[0],
        seed,
    )


@dataclass(frozen=True)
class ForcedChoiceResult:
    """Per distractor type: how often the correct caption outscored the distracted one.
    ``without_correct`` counts the pairs left out because their humans tied: they name no
    correct caption."""

    accuracy: Mapping[str, float]
    n: Mapping[str, int]
    metric_tie: str
    method: str = "forced-choice accuracy"
    without_correct: int = 0


def forced_choice_accuracy(
    correct_scores: Sequence[float] | np.ndarray,
    distracted_scores: Mapping[str, Sequence[float]] | Sequence[float],
    *,
    metric_tie: MetricTie = "half",
) -> ForcedChoiceResult:
    """Binary forced choice (seed paper, Table 5): correct vs each distractor type.

    >>> forced_choice_accuracy([0.9, 0.5], {"shuffled": [0.2, 0.5]}).accuracy
    {'shuffled': 0.75}
    """
    if metric_tie not in _TIE_CREDIT:
        raise InputError(f"`metric_tie` must be one of {list(_TIE_CREDIT)} (got {metric_tie!r})")
    groups = (
        dict(distracted_scores)
        if isinstance(distracted_scores, Mapping)
        else {"distracted": distracted_scores}
    )
    for kind, values in groups.items():
        check_aligned(**{"correct_scores": correct_scores, f"distracted_scores[{kind!r}]": values})
    correct = np.asarray(correct_scores, dtype=float)
    acc, n = {}, {}
    for kind, values in groups.items():
        d = np.asarray(values, dtype=float)
        if d.shape != correct.shape or d.ndim != 1:
            raise InputError(
                f"{kind!r}: distracted scores of shape {d.shape} for correct scores of shape "
                f"{correct.shape} (one score per pair each)"
            )
        scored = ~_unscored(np.isfinite(correct) & np.isfinite(d), f"forced choice, {kind!r}")
        diff = preference(correct[scored], d[scored])
        credit = np.where(diff == 0, _TIE_CREDIT[metric_tie], (diff > 0).astype(float))
        acc[kind] = float(credit.mean()) if credit.size else float("nan")
        n[kind] = int(credit.size)
    return ForcedChoiceResult(acc, n, metric_tie)


def _category_labels(categories: Sequence[object], missing: str) -> list[object]:
    """Each pair's category, ``missing`` where it has none: None, an empty text, and the NaN
    or ``pd.NA`` pandas reads an empty cell as (a NaN category equals no other, so its pairs
    were counted in no category: n 0, accuracy NaN). One text is refused, not read as one
    category per character."""
    if isinstance(categories, str):
        raise InputError(
            f"`categories` must hold one category per pair, not one text ({categories!r})"
        )

    return [missing if is_missing(c) or c == "" else c for c in categories]


def forced_choice_by_type(
    scores_a: Sequence[float] | np.ndarray,
    scores_b: Sequence[float] | np.ndarray,
    preferences: Sequence[float] | Sequence[str] | np.ndarray,
    categories: Sequence[str | None],
    *,
    metric_tie: MetricTie = "half",
) -> ForcedChoiceResult:
    """Forced-choice accuracy per distractor type of a pairwise set whose pairs hold a
    correct caption and a distracted one: ``a`` is the correct caption, or ``b`` where the
    human preference is negative (unlabelled, NaN: ``a``). A pair marked a tie (0) has no
    correct caption: it is left out and counted in ``without_correct`` (it was scored as if
    ``a`` were correct). Pairs are grouped by their category (none: "distracted"), in the order
    the categories first appear, and each type is scored against the correct captions of
    its own pairs.

    >>> r = forced_choice_by_type([0.9, 0.1, 0.4, 0.3, 0.5], [0.2, 0.8, 0.5, 0.1, 0.5],
    ...                           [1, -1, 1, 0, 0], ["shuffled", "shuffled", None, None, "x"])
    >>> r.accuracy, r.n, r.without_correct  # type "x" has ties alone: it has no column
    ({'shuffled': 1.0, 'distracted': 0.0}, {'shuffled': 2, 'distracted': 1}, 2)
    """
    check_aligned(
        scores_a=scores_a, scores_b=scores_b, preferences=preferences, categories=categories
    )
    a = np.asarray(scores_a, dtype=float)
    b = np.asarray(scores_b, dtype=float)
    prefs = _preferences(preferences)
    if not len(a) == len(b) == len(prefs) == len(categories):
        raise InputError(
            "`scores_a`, `scores_b`, `preferences` and `categories` must have the same length "
            f"(got {len(a)}, {len(b)}, {len(prefs)} and {len(categories)})"
        )
    cats = np.array(_category_labels(categories, "distracted"), dtype=object)
    correct, distracted = np.where(prefs < 0, b, a), np.where(prefs < 0, a, b)
    labelled = prefs != 0  # NaN (no label) keeps a as the correct caption
    acc: dict[str, float] = {}
    n: dict[str, int] = {}
    for kind in dict.fromkeys(cats[labelled].tolist()):  # a type of ties alone has no pair
        rows = (cats == kind) & labelled
        # one call per type: forced_choice_accuracy pairs each type with its own correct rows
        r = forced_choice_accuracy(correct[rows], {kind: distracted[rows]}, metric_tie=metric_tie)
        acc.update(r.accuracy)
        n.update(r.n)
    return ForcedChoiceResult(acc, n, metric_tie, without_correct=int(np.count_nonzero(~labelled)))
