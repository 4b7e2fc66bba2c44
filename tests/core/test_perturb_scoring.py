"""Every number of the perturbation lab is what ``capeval score`` gives on that caption set.

coco's tokenizer splits a line-final "A." only when the next line starts with a capital, so
scoring the original and the perturbed captions in one batch gave one caption two "before"
scores: "A sign shows the big letter A." read 1.0 beside a synonym and 0.857 beside its
stop words dropped.
"""

from __future__ import annotations

import numpy as np
import pytest

from capeval_core import score
from capeval_core.perturb import perturb, perturb_batch, score_perturbations, table2

CAPTION = "A sign shows the big letter A."
REFS = ["a sign shows the big letter a"]
# pycocoevalcap 1.2 (PTBTokenizer + Bleu(4)) on this caption alone: "a sign shows the big
# letter a." against the reference, BLEU-1 0.8571428568979593
ALONE_BLEU_1 = 0.8571428568979593
NAMES = ("synonym", "drop_stopwords", "shuffle", "swap", "redundant", "colour")


def _alone(key: str, caption: str, refs: list[str]) -> float:
    return score(key, [caption], [refs]).value


@pytest.mark.parametrize("name", NAMES)
def test_before_is_the_caption_scored_alone_whatever_the_perturbation(name: str) -> None:
    (s,) = score_perturbations([perturb(CAPTION, name, seed=0)], REFS, ["bleu_1"])
    assert s.before["bleu_1"] == pytest.approx(ALONE_BLEU_1, abs=1e-12)
    assert s.after["bleu_1"] == pytest.approx(_alone("bleu_1", s.perturbation.perturbed, REFS))


def test_several_perturbations_together_score_as_each_alone() -> None:
    ps = [perturb(CAPTION, name, seed=0) for name in NAMES]
    keys = ["bleu_1", "bleu_4", "rouge_l"]
    for s in score_perturbations(ps, REFS, keys):
        for key in keys:
            assert s.before[key] == pytest.approx(_alone(key, CAPTION, REFS), abs=1e-12)
            assert s.after[key] == pytest.approx(
                _alone(key, s.perturbation.perturbed, REFS), abs=1e-12
            )


def test_table2_rows_score_as_each_alone() -> None:
    t = table2(CAPTION, ["bleu_1"], seed=0)
    for label, p in t.rows:
        assert t.scores[label]["bleu_1"] == pytest.approx(
            _alone("bleu_1", p.perturbed, [CAPTION]), abs=1e-12
        )


@pytest.mark.parametrize("name", ["synonym", "drop_stopwords", "shuffle"])
def test_a_batch_scores_as_the_originals_file_and_the_perturbed_file(name: str) -> None:
    """Before: the originals scored as one set, in order; after: the perturbed captions."""
    cands = [CAPTION, "A dog sits on the big letter A.", "Big letter A.", "a cat on a mat"]
    refs = [REFS, ["a dog on a letter a"], ["a big letter a"], ["a cat sits on a mat"]]
    b = perturb_batch(cands, refs, name, ["bleu_1"], seed=0)
    perturbed = [p.perturbed for p in b.perturbations]
    assert list(b.before["bleu_1"]) == pytest.approx(
        score("bleu_1", cands, refs).segment_values(), abs=1e-12
    )
    assert list(b.after["bleu_1"]) == pytest.approx(
        score("bleu_1", perturbed, refs).segment_values(), abs=1e-12
    )


def test_share_lowered_leaves_out_float_noise() -> None:
    """WMD gave a shuffled caption -1.1e-16 below its original: counted as "lowered"."""
    from capeval_core.perturb import BatchPerturbation
    from capeval_core.stats.pairwise import TIE_TOLERANCE

    ps = tuple(perturb(c, "shuffle", seed=0) for c in ("a dog runs", "a cat sleeps", "a b c"))
    before = np.array([0.5, 0.25, 0.8])
    after = before + np.array([-1.1e-16, -0.1, -0.8 * TIE_TOLERANCE / 2])
    b = BatchPerturbation(
        "shuffle", 0, "", ("wmd",), ps, {"wmd": before}, {"wmd": after}, {"wmd": ""}
    )
    assert b.summary().loc[0, "share lowered"] == pytest.approx(1 / 3)


def test_a_change_within_the_tie_tolerance_is_no_change() -> None:
    """WMD under a shuffle moved by solver noise (-2.2e-18 on values near 0.6): the batch
    summary (CLI, app, JSON) and the per-item deltas showed it as a change beside "share
    lowered 0"; a change counts beyond the tie tolerance as "lowered" does."""
    from capeval_core.perturb import BatchPerturbation

    ps = tuple(perturb(c, "shuffle", seed=0) for c in ("a dog runs", "a cat sleeps", "a b c"))
    before = np.array([0.603351, 0.25, 1e-10])
    # a float's noise (one unit in the last place each way), and a real change of a tiny value
    after = np.array([np.nextafter(0.603351, 0.0), np.nextafter(0.25, 1.0), 1e-10 - 1e-12])
    b = BatchPerturbation(
        "shuffle", 0, "", ("wmd",), ps, {"wmd": before}, {"wmd": after}, {"wmd": ""},
        human=np.array([1.0, 2.0, 3.0]),
    )  # fmt: skip
    assert b.deltas()["delta"].tolist() == [0.0, 0.0, pytest.approx(-1e-12)]
    row = b.summary().iloc[0]
    assert row["median delta"] == 0.0 and row["share lowered"] == pytest.approx(1 / 3)
    assert row["mean delta"] == pytest.approx(-1e-12 / 3, rel=1e-9)
