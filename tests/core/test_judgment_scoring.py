"""A judgment set scores each distinct (candidate, references) pair once: a caption judged by
several people (Flickr8k-Expert's published preset: three expert rows per caption) is one
scored caption, so every preset of a dataset gets the same metric values."""

from __future__ import annotations

import numpy as np
import pytest

from capeval_core import score
from capeval_core.judgments import GradedItem, JudgmentSet
from capeval_core.judgments.scoring import score_judgments

CAPTIONS = [
    ("1", "a dog runs on the grass", ("a dog running on grass", "a brown dog in a field")),
    ("1", "a brown dog", ("a dog running on grass", "a brown dog in a field")),
    ("2", "a red bus on a street", ("a bus parked on a city street", "a red bus")),
    ("3", "two cats sleep", ("cats sleeping on a sofa", "two cats on a couch")),
]


def _judged(times: int) -> JudgmentSet:
    """Each caption judged ``times`` times (a row per judge)."""
    items = tuple(
        GradedItem(f"{image}|{k}|{judge}", image, cand, refs, (float(judge),))
        for k, (image, cand, refs) in enumerate(CAPTIONS)
        for judge in range(times)
    )
    n = len(items)
    return JudgmentSet("graded", items, ("score",), ("toy.csv",), n_read=n, n_kept=n)


@pytest.mark.parametrize("key", ["cider_d", "bleu_4"])
def test_a_caption_judged_three_times_is_scored_once(key, tmp_path, monkeypatch):
    """CIDEr-D takes its IDF from the scored set: scored row by row, a caption's three
    expert rows counted its references three times and every value of the preset differed
    from the one-row-per-caption preset's (a candidate word no reference has weighed log 3N
    against log N)."""
    monkeypatch.setenv("CAPEVAL_SCORES_CACHE_DIR", str(tmp_path))
    once = score(key, [c for _, c, _ in CAPTIONS], [r for _, _, r in CAPTIONS])
    thrice = score_judgments(_judged(3), [key])
    assert thrice.signatures[key] == str(once.signature)
    np.testing.assert_array_equal(thrice.values[key], np.repeat(once.segment_values(), 3))
    np.testing.assert_array_equal(
        score_judgments(_judged(1), [key]).values[key], once.segment_values()
    )


def test_a_metrics_notes_on_the_set_come_from_the_cache_too(tmp_path, monkeypatch):
    """A set whose items all have the same references makes CIDEr-D's scored-set IDF 0:
    the note saying so is in the scores and warned of, cached runs too (it was warned of
    while scoring only)."""
    from capeval_core.errors import DegenerateCorpusWarning

    monkeypatch.setenv("CAPEVAL_SCORES_CACHE_DIR", str(tmp_path))
    refs = ("a dog running on grass",)
    items = tuple(
        GradedItem(str(i), str(i), cand, refs, (float(i),))
        for i, cand in enumerate(["a dog runs", "a cat sits", "two birds fly"])
    )
    jset = JudgmentSet("graded", items, ("score",), ("same.csv",), n_read=3, n_kept=3)
    runs = []
    for _ in range(2):
        with pytest.warns(DegenerateCorpusWarning, match="same references"):
            runs.append(score_judgments(jset, ["cider_d", "bleu_4"]))
    assert [r.from_cache["cider_d"] for r in runs] == [False, True]
    assert runs[0].notes == runs[1].notes
    assert set(runs[1].notes) == {"cider_d"}
    assert "log 3 - log 3 = 0" in runs[1].notes["cider_d"][0]
