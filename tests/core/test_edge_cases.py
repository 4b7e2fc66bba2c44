"""Documented behaviour on degenerate input (Foundation issue, "Edge cases").

- An empty candidate (or one that tokenizes to nothing, e.g. only punctuation) is scored,
  not rejected, exactly as coco-caption scores it: BLEU a vanishing positive number, ROUGE-L
  0 (1 if a reference is empty too: coco-caption compares two empty tokens), CIDEr-D 0.
- A 10,000-word caption is scored in reasonable time.
- Non-ASCII text is tokenized and scored.
- Mismatched lengths and missing references raise a ValueError (``InputError``).
"""

from __future__ import annotations

import warnings

import pytest

from capeval_core import DegenerateCorpusWarning, InputError, score, score_many

KEYS = ["bleu_1", "bleu_4", "rouge_l", "cider_d"]
OTHER_IMAGE = ("a cat on a sofa", ["a cat sleeping on a couch"])


@pytest.mark.parametrize("candidate", ["", "   ", "...", "!", "?", ". , ; : -- ``''"])
def test_empty_or_punctuation_only_candidate(candidate):
    results = score_many(
        KEYS,
        [candidate, OTHER_IMAGE[0]],
        [["a dog runs on the grass"], OTHER_IMAGE[1]],
    )
    seg = {k: r.segments[0].value for k, r in results.items()}
    assert results["bleu_4"].segments[0].details.candidate == ()
    assert 0 <= seg["bleu_1"] < 1e-12
    assert seg["rouge_l"] == 0.0
    assert seg["cider_d"] == 0.0


def test_runs_of_marks_survive_tokenization():
    # coco-caption removes only the listed tokens: "!?!" is one token not on the list
    # (metric-spec §1.1), so it stays and is scored like a word
    result = score_many(["bleu_1"], ["!?!", "a cat"], [["a dog"], ["a cat"]])["bleu_1"]
    assert result.segments[0].details.candidate == ("!?!",)


def test_empty_candidate_and_reference_rouge_quirk():
    # coco-caption splits "" into [""], so two empty captions have an LCS of one empty token
    assert score("rouge_l", [""], [[""]]).value == 1.0


def test_ten_thousand_words():
    words = ("a man rides a brown horse along the sandy beach at sunset " * 1000).split()
    assert len(words) > 10_000
    long_caption = " ".join(words[:10_000])
    results = score_many(
        KEYS, [long_caption, OTHER_IMAGE[0]], [["a man riding a horse on a beach"], OTHER_IMAGE[1]]
    )
    assert len(results["bleu_4"].segments[0].details.candidate) == 10_000
    # far longer than the reference: the clipped precision is tiny but defined
    assert 0 < results["bleu_1"].segments[0].value < 0.01
    assert 0 < results["rouge_l"].segments[0].value < 0.01
    assert results["cider_d"].segments[0].value == 0.0  # Gaussian length penalty underflows


def test_non_ascii_text():
    results = score_many(
        KEYS,
        ["Un café très chaud — «délicieux»", "ein Hund läuft über die Wiese"],
        [["un café chaud sur une table"], ["ein Hund läuft auf der Wiese"]],
    )
    tokens = results["bleu_1"].segments[0].details.candidate
    assert "café" in tokens and "très" in tokens
    assert results["bleu_1"].segments[1].value > 0.5


def test_mismatched_lengths_is_a_value_error():
    with pytest.raises(ValueError, match=r"same length \(got 2 and 1\)"):
        score("bleu_4", ["a", "b"], [["a"]])


def test_missing_references_is_a_value_error():
    with pytest.raises(ValueError, match=r"references\[1\]"):
        score("cider_d", ["a", "b"], [["a"], []])
    with pytest.raises(InputError, match=r"references\[0\]"):
        score("rouge_l", ["a"], [None])


def test_single_reference_may_be_a_bare_string():
    assert score("bleu_1", ["a dog"], ["a dog"]).value == pytest.approx(1.0, abs=1e-9)


def test_one_image_cider_warns_and_explains():
    with pytest.warns(DegenerateCorpusWarning, match="single image"):
        result = score("cider_d", ["a dog runs"], [["a dog runs"]])
    assert result.value == 0.0
    assert result.warnings and "every tf-idf weight" in result.warnings[0]
    details = result.segments[0].details
    assert all(w == 0.0 for order in details.vector.weights for w in order.values())


def test_no_warning_for_two_images():
    with warnings.catch_warnings():
        warnings.simplefilter("error", DegenerateCorpusWarning)
        result = score("cider_d", ["a dog runs", "a cat"], [["a dog runs"], ["a cat sleeps"]])
    assert result.warnings == ()
    assert result.segments[0].value > 0
