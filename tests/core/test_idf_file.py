"""The memory-mapped document-frequency table (capeval_core.metrics.idf_file) holds exactly what a
set of n-grams per image counts, and reads back what was written."""

from __future__ import annotations

import math
from collections import Counter

import pytest

from capeval_core.metrics import idf_file
from capeval_core.metrics.ngrams import coco_words, ngram_set
from capeval_core.resources import coco_caption_sets
from capeval_core.tokenize import get_tokenizer


def _reference_counts(images, order):
    """The counting the table replaces: a set of n-grams per image, counted in a dict."""
    df: Counter = Counter()
    for captions in images:
        seen: set = set()
        for caption in captions:
            seen |= ngram_set(caption, order)
        df.update(seen)
    return {g: float(c) for g, c in df.items()}


@pytest.fixture(scope="module")
def coco_images():
    """The references of 2,000 COCO val2014 images, tokenized as CIDEr-D sees them."""
    sets = coco_caption_sets("val", 2000)
    flat = [r for s in sets for r in s.references]
    tokens = iter(get_tokenizer("ptb").tokenize_batch(flat))
    return [[coco_words(next(tokens)) for _ in s.references] for s in sets]


def test_the_table_counts_what_a_set_per_image_counts(coco_images, tmp_path):
    expected = _reference_counts(coco_images, 4)
    path = tmp_path / "df.idx"
    idf_file.write(path, idf_file.count_images(coco_images, 4), 4, {"documents": 2000})
    counts, header = idf_file.read(path)
    assert header["documents"] == 2000 and counts.order == 4
    assert len(counts) == len(expected) > 100_000
    assert dict(counts) == expected  # every n-gram, decoded from its key, with its count
    for gram, count in list(expected.items())[::97]:
        assert counts.get(gram) == count and counts[gram] == count and gram in counts


def test_a_look_up_of_what_was_not_counted_finds_nothing(coco_images):
    counts = idf_file.NgramCounts(idf_file.count_images(coco_images[:50], 4), 4)
    first = next(iter(counts))
    absent = [
        ("zzyzx",),  # a word no caption has
        (first[0], "zzyzx"),
        ("a", "a", "a", "a"),  # known words, never in this order
        ("a", "man", "riding", "a", "horse"),  # longer than the table's n-grams
        (),
    ]
    for gram in absent:
        assert counts.get(gram) is None and counts.get(gram, 0.0) == 0.0 and gram not in counts
        with pytest.raises(KeyError):
            counts[gram]
    assert counts.get("a") is None  # not a tuple of words


def test_a_batch_look_up_gives_what_each_look_up_gives(coco_images):
    """get_many (one call for a batch's n-grams) against get, gram by gram: counted n-grams
    of every order, n-grams of known words that were never counted, unknown words at each
    position, and lengths the table does not hold."""
    counts = idf_file.NgramCounts(idf_file.count_images(coco_images[:300], 4), 4)
    counted = [g for g in counts if len(g) > 1][::50] + [(w,) for w in ("a", "man", "dog")]
    others = coco_images[300][0]  # a caption of another image: partly counted, partly not
    grams = [
        *counted,
        *(others[i : i + n] for n in (1, 2, 3, 4) for i in range(len(others) - n + 1)),
        ("zzyzx",), ("zzyzx", "a"), ("a", "zzyzx"), ("a", "man", "zzyzx", "a"),
        ("a", "a", "a", "a"), ("a", "man", "riding", "a", "horse"), (),
    ]  # fmt: skip
    looked_up = counts.get_many(grams)
    assert looked_up == [counts.get(g, 0.0) for g in grams]
    assert sum(v > 0 for v in looked_up) > len(counted) and 0.0 in looked_up
    assert counts.get_many([]) == []


def test_prefetched_idf_is_the_idf_computed_gram_by_gram(coco_images):
    from capeval_core.metrics.document_frequency import DocumentFrequency

    def table(df):
        return DocumentFrequency(df, math.log(300.0), 300, "test")

    counts = idf_file.NgramCounts(idf_file.count_images(coco_images[:300], 4), 4)
    grams = [g for caption in coco_images[300] for g in ngram_set(caption, 4)]
    grams += [("zzyzx",), ("a", "zzyzx")]
    prefetched, plain = table(counts), table(counts)
    prefetched.prefetch(grams)
    assert len(prefetched._idf_cache) == len(set(grams))  # type: ignore[attr-defined]
    assert [prefetched.idf(g) for g in grams] == [plain.idf(g) for g in grams]
    in_a_dict = table(dict(counts))
    in_a_dict.prefetch(grams)  # nothing to look up at once: each idf() reads the dict
    assert [in_a_dict.idf(g) for g in grams] == [plain.idf(g) for g in grams]


def test_words_beyond_ascii_round_trip(tmp_path):
    images = [[("a", "café", "crème")], [("west", "25", "1/2", "street"), ("café",)]]
    path = tmp_path / "df.idx"
    idf_file.write(path, idf_file.count_images(images, 3), 3, {"documents": 2})
    counts, _ = idf_file.read(path)
    assert dict(counts) == _reference_counts(images, 3)
    assert counts[("café",)] == 2.0 and counts[("a", "café", "crème")] == 1.0
