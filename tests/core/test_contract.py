"""One contract every registered metric keeps (house style: the registry's contract test)."""

from __future__ import annotations

import dataclasses
import math
import re

import numpy as np
import pytest

from capeval_core import InputError, MetricResult, score
from capeval_core.metrics import METRICS, REPORTED_KEYS, get_metric
from capeval_core.results import Signature

CANDS = ["a man riding a horse on a beach", "two dogs play in the snow", "a red bus"]
REFS = [
    ["a person rides a horse along the shore", "a man on a horse at the beach"],
    ["dogs playing in snow", "two puppies run through the snow"],
    ["a red double decker bus on a street"],
]
ALL_KEYS = sorted(METRICS)


@pytest.mark.parametrize("key", ALL_KEYS)
def test_metadata(key):
    cls = METRICS[key]
    assert cls.key == key
    assert cls.name
    assert cls.bounds[0] < cls.bounds[1]
    assert isinstance(cls.higher_is_better, bool)
    assert cls.primary_key() in cls.report_keys()
    assert cls.card().startswith("# ")
    # one line a score card shows: what the number measures, its range and direction
    assert cls.measures and "\n" not in cls.measures
    lo, hi = (f"{b:g}".replace("-", "−") for b in cls.bounds)
    described = cls.describe()
    assert described.startswith(
        f"{cls.label(cls.primary_key())}: {cls.measured(cls.primary_key())}"
    )
    for reported in cls.report_keys():  # each reported number says what it is of
        assert "\n" not in cls.measured(reported)
        assert cls.describe(reported).startswith(f"{cls.label(reported)}: ")
    better = "higher" if cls.higher_is_better else "lower"
    assert described.endswith(f"range {lo} to {hi}, {better} is better.")
    assert dataclasses.is_dataclass(cls.Config)


def test_each_bleu_order_says_its_own_n():
    """Every BLEU card's help read "BLEU-2: ... of 1 to n words (BLEU-n)", n never filled."""
    bleu = METRICS["bleu"]
    assert "1 to n words" in bleu.measures  # the registry's row covers all four
    assert bleu.describe("bleu_1").startswith("BLEU-1: the share of the candidate's words ")
    for n in (2, 3, 4):
        assert f"BLEU-{n}: the share of the candidate's word sequences of 1 to {n} words" in (
            bleu.describe(f"bleu_{n}")
        )
    assert not any("BLEU-n" in bleu.describe(k) for k in bleu.report_keys())


@pytest.mark.parametrize("key", ALL_KEYS)
def test_one_segment_per_item_within_bounds(key):
    metric = get_metric(key)
    result = metric.score(CANDS, REFS)
    assert isinstance(result, MetricResult)
    assert len(result.segments) == len(CANDS)
    assert [s.index for s in result.segments] == [0, 1, 2]
    lo, hi = metric.bounds
    for k in metric.report_keys():
        assert lo <= result.corpus[k] <= hi
        for seg in result.segments:
            assert lo <= seg.scores[k] <= hi
            assert not math.isnan(seg.scores[k])
    assert result.segments[0].details is not None
    assert str(result).startswith(result.key)
    frame = result.to_frame()
    assert list(frame.columns) == ["index", *metric.report_keys()]
    assert len(frame) == len(CANDS)


@pytest.mark.parametrize("key", ALL_KEYS)
def test_deterministic(key):
    a = get_metric(key).score(CANDS, REFS)
    b = get_metric(key).score(CANDS, REFS)
    assert a.corpus == b.corpus
    assert [s.scores for s in a.segments] == [s.scores for s in b.segments]
    assert a.signature == b.signature


@pytest.mark.parametrize("key", ALL_KEYS)
def test_results_are_frozen(key):
    result = get_metric(key).score(CANDS, REFS)
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.key = "other"  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.segments[0].details.candidate = ()


@pytest.mark.parametrize("key", ALL_KEYS)
@pytest.mark.parametrize(
    ("cands", "refs", "message"),
    [
        (["a", "b"], [["a"]], "same length"),
        (["a"], [[]], "at least one reference"),
        ([], [], "empty"),
        ("a dog", [["a dog"]], "single string"),
        ([None], [["a"]], "candidates[0]"),
        (["a"], [["a", 3]], "references[0][1]"),
    ],
)
def test_validation_errors(key, cands, refs, message):
    with pytest.raises(InputError, match=re.escape(message)):
        get_metric(key).score(cands, refs)
    with pytest.raises(ValueError):  # InputError is a ValueError, as the issue asks
        get_metric(key).score(cands, refs)


@pytest.mark.parametrize("key", ALL_KEYS)
def test_signature_names_metric_tokenizer_and_version(key):
    from capeval_core import __version__

    sig = str(get_metric(key).signature())
    assert sig.startswith(key + "|")
    assert "tok:ptb-corenlp-3.4.1" in sig
    assert f"capeval:{__version__}" in sig
    assert "tok:whitespace" in str(get_metric(key, tokenizer="whitespace").signature())


@pytest.mark.parametrize("key", ALL_KEYS)
def test_a_signature_names_each_part_once_and_its_tokenizer_can_be_passed_back(key):
    """SPICE named ``synsets`` twice (the option, then the synonym data), so a signature read
    as key:value pairs lost the option; ``tok:ptb-corenlp-3.4.1`` was no tokenizer capeval
    took back."""
    metric = get_metric(key, **({"synsets": True} if key == "spice" else {}))
    names = [part.split(":", 1)[0] for part in str(metric.signature()).split("|")[1:]]
    assert len(names) == len(set(names)), names
    tok = dict(part.split(":", 1) for part in str(metric.signature()).split("|")[1:])["tok"]
    assert str(get_metric(key, tokenizer=tok).signature()) == str(metric.signature())


@pytest.mark.parametrize(
    ("key", "options"),
    [
        ("bleu", {"effective_length": "shortest"}),
        ("rouge_l", {"beta": 1.0}),
        ("cider_d", {"sigma": 3.0}),
        ("cider_d", {"idf": "coco-val2014"}),
    ],
)
def test_signature_changes_with_options(key, options):
    assert str(get_metric(key).signature()) != str(get_metric(key, **options).signature())


def _numeric_options(key: str) -> list[str]:
    """The options of ``key`` that take real numbers (a float or a tuple of floats)."""
    return [f.name for f in dataclasses.fields(METRICS[key].Config) if "float" in str(f.type)]


def _options_of(signature: str) -> tuple[str, dict[str, object]]:
    """A signature read back into its tokenizer and keyword options, typed again
    (:meth:`Signature.parse`, as a user passing a printed number back would)."""
    parsed = Signature.parse(signature)
    return parsed.tokenizer, dict(parsed.options)


@pytest.mark.parametrize("key", [k for k in ALL_KEYS if _numeric_options(k)])
def test_a_number_given_as_an_int_or_an_equal_float_signs_one_way(key):
    """``sigma=6`` signed ``sigma:6`` and ``sigma=6.0`` signed ``sigma:6.0``: one number
    under two signatures (and two score-cache entries). Each numeric option of every metric,
    given as whole numbers, signs as the equal floats; -0.0 signs as 0.0."""
    config = get_metric(key).config
    for name in _numeric_options(key):
        value = getattr(config, name)  # the float(s) used, a task's value where None
        whole = tuple(round(v) for v in value) if isinstance(value, tuple) else round(value)
        equal = tuple(float(v) for v in whole) if isinstance(whole, tuple) else float(whole)
        as_int = str(get_metric(key, **{name: whole}).signature())
        assert as_int == str(get_metric(key, **{name: equal}).signature()), name
        text = ",".join(map(str, equal)) if isinstance(equal, tuple) else str(equal)
        assert f"|{name}:{text}|" in as_int
    if key == "meteor":
        zero = str(get_metric(key, alpha=-0.0, weights=(1, -0.0, 0, 0)).signature())
        assert zero == str(get_metric(key, alpha=0.0, weights=(1, 0, 0, 0)).signature())
        assert "-0.0" not in zero


@pytest.mark.parametrize(
    ("key", "options"),
    [
        *((k, {}) for k in ALL_KEYS),
        ("cider_d", {"sigma": 3}),
        ("rouge_l", {"beta": 1}),
        ("wmd", {"sigma": 2, "normalize": False}),
        ("meteor", {"task": "adq", "alpha": 0.5, "weights": (1, 0, 0.25, 1)}),
        ("spice", {"max_sentence_words": 20, "synsets": False}),
    ],
)
def test_a_signature_passes_back_into_the_same_options(key, options):
    """Every number can be reproduced from its signature: its options, read back as the
    types the metric takes, configure a metric with the same signature."""
    signed = get_metric(key, **options).signature()
    signature = str(signed)
    assert Signature.parse(signature) == signed  # every part read back as it was
    tok, back = _options_of(signature)
    assert set(back) >= set(options)
    assert str(get_metric(key, tokenizer=tok, **back).signature()) == signature


@pytest.mark.parametrize("key", sorted(REPORTED_KEYS))
def test_a_printed_signature_scores_the_same_number_again(key):
    """A printed signature passed back as its text gave `beta` must be a number (got '2.0'):
    read by :meth:`Signature.parse`, it scores the same number under the same signature."""
    options = {"rouge_l": {"beta": 2.0}, "cider_d": {"sigma": 3.0}, "wmd": {"normalize": False}}
    first = score(key, CANDS, REFS, **options.get(key, {}))
    parsed = Signature.parse(str(first.signature))
    again = score(key, CANDS, REFS, tokenizer=parsed.tokenizer, **dict(parsed.options))
    assert str(again.signature) == str(first.signature)
    assert again.value == first.value or (math.isnan(again.value) and math.isnan(first.value))


def test_a_text_that_is_no_signature_is_refused_by_parse():
    for text in ("", "bleu", "bleu|tok:ptb", "bleu|effective_length|tok:ptb|capeval:1"):
        with pytest.raises(ValueError, match="not a capeval signature"):
            Signature.parse(text)


@pytest.mark.parametrize("key", ALL_KEYS)
def test_unknown_option_is_a_clear_error(key):
    with pytest.raises(InputError, match="unknown option"):
        get_metric(key, no_such_option=1)


@pytest.mark.parametrize("key", sorted(REPORTED_KEYS))
def test_score_shortcut_goes_through_the_registry(key):
    via_shortcut = score(key, CANDS, REFS)
    direct = REPORTED_KEYS[key]().score(CANDS, REFS)
    assert via_shortcut.key == key
    assert via_shortcut.value == direct.corpus[key]


@pytest.mark.parametrize("key", ALL_KEYS)
def test_item_statistics_recompute_the_corpus_value(key):
    """What significance tests between systems resample: ``item_statistics(...).point()``
    is the metric's own aggregate bit for bit, every item weighted once gives it back, and
    swapping items with an identical system changes nothing."""
    from capeval_core.metrics import make_batch

    metric = get_metric(key)
    batch = make_batch(CANDS, REFS)
    result = metric.score_batch(batch)
    stats = metric.resampling(result, batch)
    report = metric.report_keys()
    # keys reported only when asked for (SPICE's categories) follow the reported ones
    assert stats.keys == (*report, *metric.optional_reports) or stats.keys == report
    assert len(stats) == len(CANDS)
    point = stats.point()
    assert {k: point[k] for k in report} == dict(result.corpus)
    once = stats.resample(np.ones((1, len(CANDS))))[0]
    expected = [result.corpus[k] if k in report else point[k] for k in stats.keys]
    np.testing.assert_allclose(once, expected, rtol=1e-6, atol=1e-12)  # NaN where undefined
    first, second = stats.swap(stats, np.array([[True, False, True], [False, False, True]]))
    np.testing.assert_array_equal(first, second)
    np.testing.assert_allclose(first[0], once, rtol=1e-6, atol=1e-12)


def test_a_statistics_signature_parses_to_its_metrics():
    """compare's paired tests and a pairwise accuracy print their own parts after the
    metric's signature; Signature.parse refused those lines ("not a capeval signature")."""
    from capeval_core.judgments.demo import demo_pairwise
    from capeval_core.judgments.protocols import accuracy_signature
    from capeval_core.systems.comparison import ResamplingSignature

    signed = get_metric("cider_d", sigma=3.0).signature()
    paired = f"{signed}|{ResamplingSignature('both', 1000, 10000, 12345, 0.95)}"
    accuracy = accuracy_signature(
        str(signed),
        demo_pairwise(),
        n_references=5,
        draws=5,
        seed=0,
        metric_tie="half",
        human_tie="random",
    )
    assert accuracy.startswith(f"{signed}|pairwise:")
    for text in (paired, accuracy):
        assert Signature.parse(text) == signed, text


def test_parse_refuses_a_signature_without_its_tokenizer_or_version_and_keeps_words():
    """An empty tokenizer or version, or two tokenizers, read as a signature; words that
    Python's float() also reads (1_000, nan, other scripts' digits) became numbers."""
    for text in ("bleu|tok:|capeval:1", "bleu|tok:ptb|capeval:", "bleu|tok:ptb|tok:w|capeval:1"):
        with pytest.raises(ValueError, match="not a capeval signature"):
            Signature.parse(text)
    parsed = Signature.parse("m|a:1_000|b:nan|c:\u0661\u0662|d:1e+20|e:-inf|tok:ptb|capeval:1")
    assert dict(parsed.options) == {"a": "1_000", "b": "nan", "c": "\u0661\u0662", "d": 1e20,
                                    "e": -math.inf}  # fmt: skip
