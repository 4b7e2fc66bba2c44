"""A judgment set's metric values are those of its rows scored as a set (``score``)."""

from __future__ import annotations

import numpy as np
import pytest

from capeval_core import score
from capeval_core.judgments import GradedItem, JudgmentSet
from capeval_core.judgments.scoring import score_judgments


def _set_with_a_repeated_row() -> JudgmentSet:
    """Two systems wrote the same caption of image 1: its row is there twice."""
    rows = [
        ("1", "a dog runs on the grass", ("a dog running on grass", "a brown dog in a field")),
        ("1", "a dog runs on the grass", ("a dog running on grass", "a brown dog in a field")),
        ("1", "a brown dog", ("a dog running on grass", "a brown dog in a field")),
        ("2", "a red bus on a street", ("a bus parked on a city street", "a red bus")),
        ("3", "two cats sleep", ("cats sleeping on a sofa", "two cats on a couch")),
    ]
    items = tuple(
        GradedItem(f"{image}|{k}", image, cand, refs, (float(k),))
        for k, (image, cand, refs) in enumerate(rows)
    )
    return JudgmentSet("graded", items, ("score",), ("toy.csv",), n_read=5, n_kept=5)


@pytest.mark.parametrize("key", ["cider_d", "bleu_4"])
def test_repeated_rows_are_scored_as_the_rows_of_the_set(key, tmp_path, monkeypatch):
    """CIDEr-D's IDF comes from the scored set: a row given twice counts twice, as ``score``
    on the rows counts it. Scored once per distinct row, every CIDEr-D value of the set
    differed from ``score``'s under the same signature (THumB: all 2,000 by up to 0.11)."""
    monkeypatch.setenv("CAPEVAL_SCORES_CACHE_DIR", str(tmp_path))
    jset = _set_with_a_repeated_row()
    got = score_judgments(jset, [key])
    alone = score(key, [it.candidate for it in jset.items], [it.references for it in jset.items])
    assert got.signatures[key] == str(alone.signature)
    np.testing.assert_array_equal(got.values[key], np.array(alone.segment_values()))
