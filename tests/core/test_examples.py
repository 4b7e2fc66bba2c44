"""The built-in caption examples and the COCO val2014 draw (``capeval_core.examples``)."""

from __future__ import annotations

import pytest

from capeval_core import InputError, score_many
from capeval_core.examples import (
    BUILTIN_EXAMPLES,
    COCO_POOL,
    DEFAULT_EXAMPLE,
    TABLE2_SOURCE,
    Example,
    coco_example,
)
from capeval_core.resources import CaptionSet, coco_caption_sets


def test_the_table2_examples_share_one_image_and_cite_the_paper() -> None:
    table2 = {name: ex for name, ex in BUILTIN_EXAMPLES.items() if name.startswith("Table 2")}
    assert DEFAULT_EXAMPLE in table2
    assert len(table2) == 4
    references = {ex.references for ex in BUILTIN_EXAMPLES.values()}
    assert len(references) == 1 and len(next(iter(references))) == 5
    assert all(ex.source == TABLE2_SOURCE for ex in table2.values())
    assert "Kilickaya et al. (2017)" in TABLE2_SOURCE
    original = table2["Table 2 style: original"].candidate.split()
    assert sorted(table2["Table 2 style: word order"].candidate.split()) == sorted(original)
    assert set(table2["Table 2 style: redundancy"].candidate.split()) == set(original)


def test_the_examples_show_what_they_are_named_after() -> None:
    """Synonyms and word order drop BLEU-4 below the original; the short caption is hit by
    BLEU's brevity penalty (BLEU-1 below its unigram precision of 1)."""
    refs = BUILTIN_EXAMPLES[DEFAULT_EXAMPLE].references

    def bleu(name: str, key: str) -> float:
        return score_many([key], [BUILTIN_EXAMPLES[name].candidate], [refs])[key].value

    original = bleu("Table 2 style: original", "bleu_4")
    assert bleu("Table 2 style: synonyms", "bleu_4") < original
    assert bleu("Table 2 style: word order", "bleu_4") < original
    assert bleu("Too short: brevity penalty", "bleu_1") < 0.5


def test_examples_are_frozen() -> None:
    with pytest.raises(AttributeError):
        BUILTIN_EXAMPLES[DEFAULT_EXAMPLE].candidate = "x"  # type: ignore[misc]


def test_coco_example_draws_modulo_the_pool_and_names_the_image() -> None:
    pool = [
        CaptionSet(9, "a dog", ("a dog runs", "a brown dog")),
        CaptionSet(4, "a cat", ("a cat",)),
    ]
    assert coco_example(pool, 0) == Example(
        "a dog", ("a dog runs", "a brown dog"), "COCO val2014 image 9"
    )
    assert coco_example(pool, 5) == coco_example(pool, 1)
    assert coco_example(pool, 5).source == "COCO val2014 image 4"
    with pytest.raises(InputError, match="`pool`"):
        coco_example([], 0)


def test_coco_example_from_the_installed_val2014_captions() -> None:
    pool = coco_caption_sets("val", COCO_POOL)
    assert len(pool) == COCO_POOL
    example = coco_example(pool, COCO_POOL + 2)
    assert example.candidate == pool[2].candidate
    assert example.references == pool[2].references
    assert example.source == f"COCO val2014 image {pool[2].image_id}"
