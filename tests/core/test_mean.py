"""MEAN: cosine of mean word vectors (stop words removed), averaged over the references."""

from __future__ import annotations

import math

import numpy as np
import pytest

from capeval_core.embeddings import Embeddings, cosine, default_embeddings
from capeval_core.metrics import get_metric
from capeval_core.metrics.mean import Mean, MeanDetails
from capeval_core.stopwords import wmd_stopwords


def _toy() -> Embeddings:
    from gensim.models import KeyedVectors

    kv = KeyedVectors(vector_size=2)
    kv.add_vectors(
        ["cat", "dog", "sofa", "grass"],
        np.array([[1.0, 0.0], [0.0, 2.0], [3.0, 4.0], [-1.0, 0.0]], dtype=np.float32),
    )
    return Embeddings(kv, name="toy")


@pytest.fixture(scope="module")
def glove() -> Embeddings:
    return default_embeddings()


def _mean(emb, cand, refs, **options):
    result = Mean(embeddings=emb, tokenizer="whitespace", **options).score([cand], [refs])
    return result.segments[0].value, result.segments[0].details


def test_hand_computed_toy_values():
    emb = _toy()
    # candidate mean (0.5, 1); references: "sofa" (3, 4) and "grass" (-1, 0)
    value, d = _mean(emb, "the cat and the dog", ["a sofa", "grass"])
    cos1 = (0.5 * 3 + 1 * 4) / (math.hypot(0.5, 1) * 5)
    cos2 = -0.5 / math.hypot(0.5, 1)
    assert d.cosines == pytest.approx((cos1, cos2), abs=1e-12)
    assert value == pytest.approx((cos1 + cos2) / 2, abs=1e-12)  # averaged, not the max
    assert d.candidate.words == ("cat", "dog") and d.candidate.stopwords == ("the", "and", "the")
    np.testing.assert_allclose(d.candidate.vector, [0.5, 1.0])
    # normalize=True averages unit vectors: (0.5, 0.5) against (0.6, 0.8)
    value, d = _mean(emb, "cat dog", ["sofa"], normalize=True)
    assert value == pytest.approx((0.3 + 0.4) / (math.sqrt(0.5) * 1.0), abs=1e-7)


def test_repeated_words_weigh_more():
    _, d = _mean(_toy(), "cat cat dog", ["sofa"])
    np.testing.assert_allclose(d.candidate.vector, [2 / 3, 2 / 3])


def test_glove_value_equals_numpy_definition(glove):
    cand = "a man rides a horse on the beach"
    refs = ["a person riding a horse along the shore", "a horse on the sand"]
    value, d = _mean(glove, cand, refs)
    sw = wmd_stopwords()

    def mean_vec(text):
        return np.mean([glove.kv[w].astype(np.float64) for w in text.split() if w not in sw], 0)

    u = mean_vec(cand)
    expected = [
        float(u @ mean_vec(r) / (np.linalg.norm(u) * np.linalg.norm(mean_vec(r)))) for r in refs
    ]
    assert d.cosines == pytest.approx(expected, abs=1e-12)
    assert value == pytest.approx(np.mean(expected), abs=1e-12)
    # reference value of this implementation (capeval 0.1.0, GloVe 6B 50-d)
    assert _mean(glove, cand, [refs[0]])[0] == pytest.approx(0.905213, abs=1e-6)


def test_identical_captions_score_one(glove):
    value, _ = _mean(glove, "two dogs play in the snow", ["two dogs play in the snow"])
    assert value == pytest.approx(1.0, abs=1e-12)


@pytest.mark.parametrize("candidate", ["the of and a", "xqzzyv blorptang", ""])
def test_candidate_without_content_words_scores_zero_with_a_note(glove, candidate):
    value, d = _mean(glove, candidate, ["a dog runs", "a cat sleeps"])
    assert value == 0.0 and d.cosines == (0.0, 0.0)
    assert "no in-vocabulary content word" in d.note
    assert d.candidate_nearest == ()


def test_reference_without_content_words_counts_zero(glove):
    value, d = _mean(glove, "a dog runs", ["a dog runs", "the of"])
    assert d.cosines[0] == pytest.approx(1.0) and d.cosines[1] == 0.0
    assert value == pytest.approx(0.5)
    assert "[1]" in d.note


def test_oov_words_are_listed(glove):
    _, d = _mean(glove, "the xqzzyv dog", ["a dog"])
    assert d.candidate.oov == ("xqzzyv",) and d.candidate.words == ("dog",)


def test_nearest_words_are_lazy(glove):
    _, d = _mean(glove, "a dog runs on the grass", ["a horse in a field"])
    assert isinstance(d, MeanDetails)
    assert "candidate_nearest" not in d.__dict__  # nothing scanned yet
    near = d.candidate_nearest
    assert len(near) == 5 and all(isinstance(w, str) and -1 <= s <= 1 for w, s in near)
    assert d.candidate_nearest is near  # cached
    assert len(d.reference_nearest) == 1 and len(d.reference_nearest[0]) == 5


def test_signature_and_default_embeddings(glove):
    metric = get_metric("mean")
    assert metric.embeddings is glove
    sig = str(metric.signature())
    assert f"emb:{glove.identity}" in sig and "normalize:False" in sig
    assert str(get_metric("mean", normalize=True).signature()) != sig
    assert "emb:toy/2d/4w/" in str(Mean(embeddings=_toy()).signature())


def test_corpus_is_mean_of_items(glove):
    result = Mean(embeddings=glove).score(
        ["a dog on grass", "a red bus"], [["a dog on the lawn"], ["a bus on a street", "a bus"]]
    )
    assert result.value == pytest.approx(np.mean([s.value for s in result.segments]))
    assert all(-1 <= s.value <= 1 for s in result.segments)


def test_pickled_details_drop_the_vector_table_but_keep_nearest_words():
    import pickle

    from capeval_core.metrics.mean import Mean

    result = Mean().score(["a dog runs on the grass"], [["a dog running on grass"]])
    details = result.segments[0].details
    data = pickle.dumps(result)
    assert len(data) < 100_000  # the GloVe table is ~90 MB
    copy = pickle.loads(data).segments[0].details
    assert copy.embeddings is None
    assert copy.candidate_nearest == details.candidate_nearest
    assert copy.reference_nearest == details.reference_nearest
    assert details.embeddings is not None  # the original keeps its table


def test_candidates_sharing_references_score_as_if_alone(glove):
    """Sides and norms are computed once per distinct caption in a batch; an item's values
    are those it gets when scored on its own."""
    refs = ["a dog runs on the grass", "a brown dog running", "the of", "a cat sleeps"]
    cands = ["a dog running on grass", "a dog", "xqzzyv", "a cat on a sofa", "a dog"]
    metric = Mean(embeddings=glove)
    together = metric.score(cands, [refs] * len(cands)).segments
    assert together[0].details.references[0] is together[1].details.references[0]
    for cand, seg in zip(cands, together, strict=True):
        alone = metric.score([cand], [refs]).segments[0]
        assert seg.value == alone.value and seg.details.cosines == alone.details.cosines
        assert np.array_equal(seg.details.candidate.vector, alone.details.candidate.vector)
        assert seg.details.note == alone.details.note


def test_cosine_with_known_norms_is_the_same_number():
    rng = np.random.default_rng(0)
    for _ in range(200):
        u, v = rng.standard_normal((2, 50))
        norms = (float(np.linalg.norm(u)), float(np.linalg.norm(v)))
        assert cosine(u, v, norms=norms) == cosine(u, v)
    assert cosine(np.ones(3), np.ones(3), norms=(3**0.5, 3**0.5)) <= 1.0
    assert cosine(np.zeros(3), np.ones(3), norms=(0.0, 3**0.5)) == 0.0
