"""The registry shortcuts: score_many's shared tokenization, error collection and warnings."""

from __future__ import annotations

import warnings

import pytest

from capeval_core import DegenerateCorpusWarning, MissingResourceError, score_many
from capeval_core.metrics import METRICS, REPORTED_KEYS, RougeL


def test_error_collection_keeps_the_other_metrics(monkeypatch):
    def missing(self, batch):
        raise MissingResourceError("no vectors here; install them with pip")

    monkeypatch.setattr(RougeL, "prepare", missing)
    errors: dict = {}
    results = score_many(["bleu_4", "rouge_l"], ["a dog"], [["a dog runs"]], errors=errors)
    assert list(results) == ["bleu_4"]
    assert list(errors) == ["rouge_l"] and "install them" in str(errors["rouge_l"])
    with pytest.raises(MissingResourceError):
        score_many(["bleu_4", "rouge_l"], ["a dog"], [["a dog runs"]])


def test_warn_false_keeps_the_note_without_a_python_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error", DegenerateCorpusWarning)
        result = score_many(["cider_d"], ["a dog"], [["a dog"]], warn=False)["cider_d"]
    assert result.warnings


def test_bleu_orders_share_one_computation():
    results = score_many(["bleu_1", "bleu_4"], ["a dog runs"], [["a dog runs fast"]])
    assert results["bleu_1"].segments[0].details is results["bleu_4"].segments[0].details
    assert results["bleu_1"].key == "bleu_1" and results["bleu_4"].key == "bleu_4"


@pytest.mark.parametrize(
    ("key", "label"), [("bleu_2", "BLEU-2"), ("rouge_l", "ROUGE-L"), ("cider_d", "CIDEr-D")]
)
def test_labels(key, label):
    assert REPORTED_KEYS[key].label(key) == label


def test_every_reported_key_has_a_label():
    for key, cls in REPORTED_KEYS.items():
        assert cls.label(key)
    assert set(METRICS) <= {cls.key for cls in REPORTED_KEYS.values()}


def test_scoring_pauses_the_collector_and_restores_it():
    """The cyclic collector is off while a batch is scored and back on afterwards, also
    after an error; a caller who had it off keeps it off."""
    import gc

    from capeval_core.metrics import RougeL
    from capeval_core.metrics.base import collector_paused

    seen = []

    class Probe(RougeL):
        def segment(self, candidate, references, prepared):
            seen.append(gc.isenabled())
            return super().segment(candidate, references, prepared)

    assert gc.isenabled()
    Probe().score(["a dog"], [["a dog runs"]])
    assert seen == [False] and gc.isenabled()
    with pytest.raises(RuntimeError), collector_paused():
        raise RuntimeError("boom")
    assert gc.isenabled()
    gc.disable()
    try:
        with collector_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


# -- score_caption: one caption with many metrics, and why any of them is missing --------------
def test_score_caption_is_score_many_on_one_caption():
    from capeval_core.api import score_caption

    keys = ("bleu_1", "bleu_4", "rouge_l", "cider_d")
    refs = ("a man riding a wave", "a surfer on a wave")
    got = score_caption(keys, "a man on a wave", refs, options={"cider_d": {"idf": "corpus"}})
    want = score_many(
        keys, ["a man on a wave"], [refs], options={"cider_d": {"idf": "corpus"}}, warn=False
    )
    assert list(got.results) == list(keys) and got.errors == {} and got.missing == frozenset()
    for key in keys:
        assert got.results[key].value == want[key].value
        assert str(got.results[key].signature) == str(want[key].signature)


def test_score_caption_keeps_degenerate_notes_without_a_python_warning():
    from capeval_core.api import score_caption

    with warnings.catch_warnings():
        warnings.simplefilter("error", DegenerateCorpusWarning)
        got = score_caption(["cider_d"], "a dog", ["a dog"], options={"cider_d": {"idf": "corpus"}})
    assert got.results["cider_d"].warnings


def test_score_caption_names_failed_metrics_by_metric_and_marks_missing_resources(monkeypatch):
    """Errors are keyed by the metric (``bleu``, not ``bleu_2``); only a missing resource is
    in ``missing`` (the app retries those outside its cache)."""
    from capeval_core import OptionError
    from capeval_core.api import score_caption
    from capeval_core.metrics import Bleu

    def missing(self, batch):
        raise MissingResourceError("no vectors here; install them with pip")

    def invalid(self, batch):
        raise OptionError("bad n (test)")

    monkeypatch.setattr(RougeL, "prepare", missing)
    monkeypatch.setattr(Bleu, "prepare", invalid)
    got = score_caption(["bleu_2", "bleu_4", "rouge_l", "cider_d"], "a dog", ["a dog runs"])
    assert list(got.results) == ["cider_d"]
    assert got.errors == {
        "bleu": "bad n (test)",
        "rouge_l": "no vectors here; install them with pip",
    }
    assert got.missing == frozenset({"rouge_l"})
