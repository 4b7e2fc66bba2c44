"""A metric of one's own (a Metric subclass, put in the registry by hand): its numbers are never
read from the disk score cache, and it must give one score per item."""

from __future__ import annotations

import pytest

import capeval_core.metrics as registry
from capeval_core import CapevalError, batch
from capeval_core.judgments import graded
from capeval_core.judgments.scoring import score_judgments
from capeval_core.metrics.base import Metric

ROWS = [
    ("a dog runs on the grass", "a dog running on grass|||a brown dog on the lawn", 5),
    ("a dog on grass", "a dog running on grass|||a brown dog on the lawn", 4),
    ("a cat", "a cat on a mat|||a kitten sitting on a rug", 3),
    ("a red bus", "a man riding a horse|||a person on a horse", 1),
]


class Overlap(Metric):
    """Share of the candidate's words in its best reference, times ``scale`` (the "code")."""

    key = "overlap"
    name = "Overlap"
    scale = 1.0

    def segment(self, candidate, references, prepared):
        best = max(len(set(candidate) & set(r)) for r in references)
        return self.scale * best / max(1, len(candidate)), None


def _register(monkeypatch: pytest.MonkeyPatch, cls: type[Metric]) -> None:
    """Into the registry by hand, as a user would (for this test only)."""
    monkeypatch.setitem(registry.METRICS, cls.key, cls)
    for key in cls.report_keys():
        monkeypatch.setitem(registry.REPORTED_KEYS, key, cls)


@pytest.fixture
def jset(tmp_path, monkeypatch):
    monkeypatch.setenv("CAPEVAL_SCORES_CACHE_DIR", str(tmp_path / "scores"))
    path = tmp_path / "g.csv"
    path.write_text("candidate,references,score\n" + "".join(f"{c},{r},{s}\n" for c, r, s in ROWS))
    return graded.load_graded(path)


def test_an_edit_of_ones_own_metric_is_scored_again_not_read_from_the_cache(jset, monkeypatch):
    """The signature names the key, options, tokenizer and capeval's version, not the code
    of a metric of one's own: an edit read the numbers of the code before (same signature)."""
    _register(monkeypatch, Overlap)
    first = score_judgments(jset, ["overlap", "bleu_4"], workers=1)
    monkeypatch.setattr(Overlap, "scale", 0.5)  # the user edits their metric
    second = score_judgments(jset, ["overlap", "bleu_4"], workers=1)
    assert second.signatures["overlap"] == first.signatures["overlap"]
    assert list(second.values["overlap"]) == pytest.approx(list(first.values["overlap"] / 2))
    assert not second.from_cache["overlap"] and second.from_cache["bleu_4"]  # capeval's: cached
    assert not batch.cacheable(first.signatures["overlap"])


def test_a_metric_giving_one_score_too_few_is_refused(monkeypatch):
    class Short(Overlap):
        key = "short"

        def score_items(self, batch, prepared):
            return list(super().score_items(batch, prepared))[:-1]

    with pytest.raises(CapevalError, match="metric 'short' gave 1 scores for 2 items"):
        Short().score(["a dog", "a cat"], [["a dog runs"], ["a cat sits"]])


def test_a_metric_of_ones_own_with_a_bar_in_its_key_is_scored_not_cached(jset, monkeypatch):
    """A "|" in the key (or an option's value) made its signature unreadable, and scoring a
    judgment set with it failed with "not a capeval signature" while deciding to cache."""

    class Barred(Overlap):
        key = "my|overlap"

    _register(monkeypatch, Barred)
    scores = score_judgments(jset, ["my|overlap", "bleu_4"], workers=1)
    assert len(scores.values["my|overlap"]) == len(jset)
    assert not scores.from_cache["my|overlap"]
