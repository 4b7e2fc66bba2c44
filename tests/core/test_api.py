"""The registry shortcuts: score_many's shared tokenization, error collection and warnings."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pandas as pd
import pytest

from capeval_core import (
    DegenerateCorpusWarning,
    InputError,
    MissingResourceError,
    score,
    score_many,
)
from capeval_core.metrics import METRICS, REPORTED_KEYS, Batch, RougeL
from capeval_core.tokenize import get_tokenizer


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


# -- a sweep of the API with what callers hand it ----------------------------------------------
_C = ["a black cat sits on a red mat", "two dogs run"]
_R = [["a cat is on a mat"], ["a dog running", "the dog runs fast"]]


def test_a_key_is_the_number_it_names_or_refused():
    """get_metric("bleu_1").score(...).value was BLEU-4, score("spice_object") overall SPICE."""
    from capeval_core import OptionError, get_metric

    assert get_metric("bleu_4").score(_C, _R).value == score("bleu_4", _C, _R).value
    with pytest.raises(OptionError, match=r"get_metric\('bleu_1'\) would be BLEU"):
        get_metric("bleu_1")
    for call in (
        lambda: score("spice_object", _C, _R),
        lambda: score_many(["spice_color"], _C, _R),
    ):
        with pytest.raises(OptionError, match=r"reported by `capeval compare` and score_systems"):
            call()


def test_cider_over_one_reference_set_is_noted():
    """Several candidates for one image: every IDF is 0 and every score 0, in silence."""
    from capeval_core import DegenerateCorpusWarning

    refs = ["a dog runs on the grass", "a brown dog running"]
    with pytest.warns(DegenerateCorpusWarning, match=r"every one of its 2 images has the same"):
        result = score("cider_d", ["a dog runs on the grass", "a cat sleeps"], [refs, refs])
    assert result.segment_values() == [0.0, 0.0]


def test_spice_scores_a_caption_with_a_lone_surrogate():
    """The parse cache (SQLite, UTF-8) raised UnicodeEncodeError: the whole run stopped."""
    result = score("spice", ["a do\udc80g runs"], [["a dog runs"]], tokenizer="whitespace")
    assert 0.0 <= result.value <= 1.0


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda: Batch.of_tokens([("a", "dog"), ("a",)], [[("a", "dog")], []]),
            r"`references\[1\]` is empty",
        ),
        (lambda: Batch.of_tokens([("a",)], [[("a",)], [("b",)]]), r"same length \(got 1 and 2\)"),
        (
            lambda: Batch.of_tokens(["a dog"], [[("a", "dog")]]),
            r"`candidates\[0\]` must be a sequence of token",
        ),
        (
            lambda: score("bleu", ["a cat"], [b"a cat"]),
            r"`references\[0\]`.*bytes: decode them first",
        ),
        (
            lambda: score("bleu", _C, pd.DataFrame({"r1": ["a", "b"], "r2": ["c", "d"]})),
            r"a table \(a DataFrame\)",
        ),
        (
            lambda: score_many(["bleu"], _C, _R, options={"bleu": {"tokenizer": "whitespace"}}),
            r"give it once",
        ),
        (
            lambda: get_tokenizer("ptb").tokenize_batch("a dog"),
            r"a list of captions, not one string",
        ),
        (
            lambda: score("bleu", _C, _R, tokenizer=_DroppingTokenizer()),
            r"gave 2 token lists for 3 references",
        ),
    ],
)
def test_bad_input_is_one_clear_error(call, message):
    """Each was a ZeroDivisionError, a numpy or zip error deep inside, or a silent wrong
    number (a DataFrame's column names as references, a string tokenized per character)."""
    from capeval_core import CapevalError

    with pytest.raises(CapevalError, match=message):
        call()


class _DroppingTokenizer:
    name = "mine"

    def tokenize_batch(self, texts):  # drops the last caption
        return [tuple(t.split()) for t in texts][:-1]

    def tokenize(self, text):
        return tuple(text.split())


def test_numpy_options_score_as_the_number_their_signature_prints():
    """beta=np.float32(1.2) signed "beta:1.2" but computed with 1.2000000476837158."""
    a = score("rouge_l", _C, _R, beta=np.float32(1.2))
    b = score("rouge_l", _C, _R, beta=float(np.float32(1.2)))
    assert a.value == b.value and str(a.signature) == str(b.signature)
    assert str(a.signature) != str(score("rouge_l", _C, _R, beta=1.2).signature)
    spice = score("spice", ["a dog runs"], [["a dog runs"]], max_sentence_words=np.int64(20))
    assert "max_sentence_words:20|" in str(spice.signature)


@pytest.mark.parametrize(
    ("key", "name"), [("cider_d", "sigma"), ("wmd", "sigma"), ("meteor", "beta")]
)
def test_a_whole_number_beyond_any_float_is_an_option_error(key, name):
    """sigma=10**400 raised Python's OverflowError from the option check, not the
    OptionError naming the option that every other bad value gets."""
    from capeval_core import OptionError, get_metric

    with pytest.raises(OptionError, match=rf"`{name}` must be a finite number"):
        get_metric(key, **{name: 10**400})


def test_vectors_handed_in_with_a_nan_are_refused_by_word(tmp_path):
    from gensim.models import KeyedVectors

    from capeval_core.errors import ResourceError

    kv = KeyedVectors(vector_size=2)
    kv.add_vectors(["dog", "runs", "cat"], np.array([[1, 0], [np.nan, 1], [0, 1]], np.float32))
    for key in ("wmd", "mean"):
        with pytest.raises(ResourceError, match=r"the vector of 'runs' .* is not finite"):
            score(key, ["dog runs", "cat"], [["dog"], ["cat"]], embeddings=kv)
    with pytest.raises(InputError, match=r"is a folder"):
        score("wmd", ["a cat"], [["a cat"]], embeddings=tmp_path)


def test_keys_from_a_generator_are_all_scored():
    """The key check used a generator's keys up, and nothing was scored: {} without a word."""
    from capeval_core.api import score_caption

    refs = [["a dog runs on the grass"]]
    got = score_many((k for k in ("bleu_1", "rouge_l")), ["a dog runs"], refs)
    assert list(got) == ["bleu_1", "rouge_l"]
    assert got["bleu_1"].value == score_many(["bleu_1"], ["a dog runs"], refs)["bleu_1"].value
    one = score_caption(map(str, ["bleu_1"]), "a dog runs", ["a dog runs on the grass"])
    assert list(one.results) == ["bleu_1"]


def test_one_text_where_a_list_is_expected_is_refused_naming_the_argument(tmp_path):
    """Iterated, one text gave one item per character: references of one letter each,
    systems "a", "a", "b", ..., and messages such as "unknown metric 'b'"."""
    from capeval_core import perturb as lab
    from capeval_core.errors import InputError
    from capeval_core.judgments import load_judgments
    from capeval_core.stats import bootstrap_many, sample_references, system_level
    from capeval_core.systems import load_systems

    p = lab.perturb("a man rides a wave", "shuffle", seed=0)
    (tmp_path / "a.json").write_text('[{"image_id": 1, "caption": "a dog"}]')
    (tmp_path / "b.json").write_text('[{"image_id": 1, "caption": "a cat"}]')
    (tmp_path / "g.csv").write_text("candidate,references,score\na dog,a dog runs,3\n")
    calls = {
        "keys": lambda: lab.score_perturbations([p], ["a man surfing"], "bleu_1"),
        "names": lambda: lab.perturb_each("a man rides a wave", "swap"),
        "methods": lambda: bootstrap_many({"m": [1, 2, 3]}, [1, 3, 2], "pearson", 5),
        "references[0]": lambda: sample_references(["abc def", "xyz"], 2, 1),
        "systems": lambda: system_level([1, 2, 3, 4, 5, 6], [1, 2, 3, 4, 5, 6], "aabbcc"),
        "score_columns": lambda: load_judgments(tmp_path / "g.csv", "graded",
                                                score_columns="score"),
    }  # fmt: skip
    for name, call in calls.items():
        with pytest.raises(InputError, match=rf"`{re.escape(name)}` must be a list of .*, not one"):
            call()
    with pytest.raises(InputError, match="`names` must be a list of system names"):
        load_systems([tmp_path / "a.json", tmp_path / "b.json"], {"1": ["a dog"]}, names="xy")
    with pytest.raises(InputError, match="`keys` must be a list of metric keys"):
        lab.table2("a man rides a wave", "bleu_4")


def test_numpy_scalars_and_arrays_are_taken_as_the_python_values_they_equal():
    """A notebook's np.int64(200), np.float32(0.9), np.array weights and np.False_ were
    refused with messages such as "must be a whole number ... (got np.int64(200))"."""
    from capeval_core import perturb as lab
    from capeval_core.stats import correlate
    from capeval_core.systems import SystemsInput, compare_systems, score_systems

    weights = [1.0, 1.0, 0.6, 0.8]
    as_list = score("meteor", ["a dog"], [["a dog runs"]], weights=weights)
    as_array = score("meteor", ["a dog"], [["a dog runs"]], weights=np.array(weights))
    assert as_array.value == as_list.value and str(as_array.signature) == str(as_list.signature)
    flag = score("wmd", ["a dog"], [["a dog runs"]], normalize=np.False_)
    assert str(flag.signature) == str(
        score("wmd", ["a dog"], [["a dog runs"]], normalize=False).signature
    )
    swapped = lab.perturb("a man rides a big wave", "swap", n=np.int64(2), seed=3)
    assert swapped == lab.perturb("a man rides a big wave", "swap", n=2, seed=3)
    picked = lab.perturb("a child on a sofa", "synonym", positions=np.array([1]))
    assert picked == lab.perturb("a child on a sofa", "synonym", positions=[1])
    r = correlate([1, 2, 3, 4, 5], [2, 1, 4, 3, 5])
    ci = r.confidence_interval(level=np.float32(0.5), n_resamples=np.int64(40))
    ref = r.confidence_interval(level=0.5, n_resamples=40)
    assert (ci.low, ci.high) == (ref.low, ref.high)
    captions = (("a dog", "a cat", "a car"), ("a dog runs", "a cat", "a red car"))
    refs = (("a dog runs",), ("a cat sleeps",), ("a red car",))
    data = SystemsInput(("a", "b"), (1, 2, 3), captions, refs, ("a", "b"), "r")
    scores = score_systems(data, ["bleu_1"], use_cache=False)
    got = compare_systems(scores, n_resamples=np.int64(50), n_trials=np.int64(20),
                          seed=np.int64(1), use_cache=False)  # fmt: skip
    want = compare_systems(scores, n_resamples=50, n_trials=20, seed=1, use_cache=False)
    assert got.paired["bleu_1"]["b"].p_value == want.paired["bleu_1"]["b"].p_value
    assert str(got.resampling) == str(want.resampling)


def test_score_caption_names_its_own_argument_when_references_are_empty():
    from capeval_core.api import score_caption
    from capeval_core.errors import InputError

    with pytest.raises(InputError, match=r"^`references` is empty: give at least one"):
        score_caption(["bleu_1"], "a dog", [])


def test_misplaced_arguments_are_said_as_the_argument_not_a_bare_error():
    """Each ended in a TypeError or AttributeError from deep inside."""
    from capeval_core import perturb as lab
    from capeval_core.errors import InputError
    from capeval_core.stats import sample_references, williams_matrix, williams_test
    from capeval_core.systems import SystemsInput, score_systems

    p = lab.perturb("a man rides a wave", "shuffle", seed=0)
    data = SystemsInput(("a",), (1,), (("a dog",),), (("a dog runs",),), ("a",), "r")
    h = [1.0, 2.0, 3.0, 4.0, 5.0]
    calls = {
        r"`n_references` must be a whole number >= 1 \(got 2.0\)":
            lambda: sample_references([["a", "b", "c"]], 2.0, 1),
        r"`draws` must be a whole number >= 1 \(got True\)":
            lambda: sample_references([["a", "b", "c"]], 2, True),
        r"`r12` must be a correlation, a number \(got None\)":
            lambda: williams_test(None, 0.5, 0.5, 20),
        r"`metric_scores` must map each metric's name to its scores \(got list\)":
            lambda: williams_matrix(h, [h, h]),
        r"`workers` must be a whole number >= 0 \(got '2'\)":
            lambda: score_systems(data, ["bleu_1"], workers="2", use_cache=False),
        r"`errors` must be a dict to collect them in \(got list\)":
            lambda: score_many(["bleu_1"], ["a dog"], [["a dog"]], errors=[]),
        r"`perturbations` must be a list of Perturbation":
            lambda: lab.score_perturbations(p, ["a man surfing"], ["bleu_1"]),
    }  # fmt: skip
    for message, call in calls.items():
        with pytest.raises(InputError, match=message):
            call()
    scored = lab.score_perturbations((q for q in [p]), ["a man surfing"], ["bleu_1"])
    assert len(scored) == 1  # a generator of them is taken


def test_paths_and_positions_of_the_wrong_kind_are_said_as_the_argument():
    from capeval_core import perturb as lab
    from capeval_core.embeddings import load_embeddings
    from capeval_core.errors import InputError
    from capeval_core.judgments import load_judgments

    with pytest.raises(InputError, match=r"`path` must be a file or folder path \(got NoneType\)"):
        load_judgments(None, "graded")
    with pytest.raises(InputError, match=r"`path` must be a word-vector file's path"):
        load_embeddings(None)
    with pytest.raises(InputError, match=r"`name` must be text"):
        load_embeddings("vectors.txt", name=5)
    with pytest.raises(InputError, match=r"`positions` must be a list of word indices \(got 1\)"):
        lab.perturb("a child on a sofa", "synonym", positions=1)


def test_options_of_a_metric_not_scored_are_checked_all_the_same():
    """options={"cider_d": {"sigma": "x"}} passed without a word when CIDEr-D was not scored."""
    from capeval_core.errors import OptionError

    with pytest.raises(OptionError, match=r"^`options\['cider_d'\]`: `sigma` must be a finite"):
        score_many(["bleu_1"], ["a dog"], [["a dog"]], options={"cider_d": {"sigma": "x"}})
    with pytest.raises(OptionError, match=r"unknown option\(s\) \['sigam'\] for metric 'cider_d'"):
        score_many(["bleu_1"], ["a dog"], [["a dog"]], options={"cider_d": {"sigam": 6.0}})
    ok = score_many(["bleu_1"], ["a dog"], [["a dog"]], options={"cider_d": {"sigma": 6.0}})
    assert list(ok) == ["bleu_1"]


def test_the_batch_engine_checks_the_options_of_metrics_it_does_not_score():
    """score_set (the CLI's and the drop-in's scoring) let them pass where score_many now
    refuses them: the check lives where both configure their metrics."""
    from capeval_core.errors import OptionError
    from capeval_core.scoring import score_set

    with pytest.raises(OptionError, match=r"^`options\['meteor'\]`: unknown option"):
        score_set(["a dog"], [["a dog runs"]], ["bleu_1"], options={"meteor": {"bogus": 1}})
