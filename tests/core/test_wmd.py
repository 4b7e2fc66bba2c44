"""WMD (metric-spec §7): gensim's wmdistance to 1e-9, invariants, degenerate items, details."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from capeval_core.embeddings import Embeddings, _keyed_vectors, default_embeddings
from capeval_core.metrics import get_metric
from capeval_core.metrics.wmd import (
    WMD,
    WMDDetails,
    _costs,
    _emd,
    _side,
    _VectorTable,
    word_movers_distance,
)
from capeval_core.stopwords import wmd_stopwords
from tests.conftest import fresh_python


def _toy(words, vectors, name="toy") -> Embeddings:
    from gensim.models import KeyedVectors

    kv = KeyedVectors(vector_size=len(vectors[0]))
    kv.add_vectors(list(words), np.array(vectors, dtype=np.float32))
    return Embeddings(kv, name=name)


@pytest.fixture(scope="module")
def glove() -> Embeddings:
    return default_embeddings()


def _wmd(emb, cand, ref, **options):
    """Score one whitespace-tokenized pair and return its details."""
    metric = WMD(embeddings=emb, tokenizer="whitespace", **options)
    result = metric.score([cand], [[ref] if isinstance(ref, str) else ref])
    return result.segments[0].value, result.segments[0].details


def test_hand_computed_toy_distance():
    # unit vectors (0.6, 0.8) and (0, 1): Euclidean distance sqrt(0.36 + 0.04)
    emb = _toy(["cat", "dog"], [[3.0, 4.0], [0.0, 2.0]])
    value, d = _wmd(emb, "the cat", "a dog")
    assert d.distance == pytest.approx(math.sqrt(0.4), abs=1e-7)
    assert value == pytest.approx(math.exp(-math.sqrt(0.4)), abs=1e-7)
    # raw vectors (gensim 3): |(3, 4) - (0, 2)| = sqrt(13)
    value, d = _wmd(emb, "the cat", "a dog", normalize=False)
    assert d.distance == pytest.approx(math.sqrt(13.0), rel=1e-7)
    # sigma scales the exponent
    value, d = _wmd(emb, "the cat", "a dog", sigma=2.0)
    assert value == pytest.approx(math.exp(-math.sqrt(0.4) / 2), abs=1e-7)


def test_reference_pair_matches_gensim(glove):
    # dependencies.md: gensim 4.4 wmdistance = 0.362326 on the raw token lists (no stop-word
    # removal); the metric removes stop words first (§7), where gensim gives 0.648317
    cand = ["a", "man", "rides", "a", "horse", "on", "the", "beach"]
    ref = ["a", "person", "riding", "a", "horse", "along", "the", "shore"]
    table = _VectorTable(glove, set(cand) | set(ref), normalize=True)
    raw, _, _, _ = word_movers_distance(
        _side(tuple(cand), table, frozenset()), _side(tuple(ref), table, frozenset()), table
    )
    assert raw == pytest.approx(0.362326, abs=1e-6)
    kv = _keyed_vectors(glove.kv.index_to_key, glove.kv.vectors)  # gensim's own KeyedVectors
    assert raw == pytest.approx(kv.wmdistance(cand, ref), abs=1e-12)
    value, d = _wmd(glove, " ".join(cand), " ".join(ref))
    sw = wmd_stopwords()
    content = [[w for w in s if w not in sw] for s in (cand, ref)]
    assert d.distance == pytest.approx(kv.wmdistance(*content), abs=1e-12)
    assert d.distance == pytest.approx(0.648317, abs=1e-6)
    assert value == pytest.approx(math.exp(-d.distance))


def test_identity_is_zero_and_similarity_one(glove):
    value, d = _wmd(glove, "two dogs play in the snow near a red barn", "two dogs play in snow")
    assert value < 1
    value, d = _wmd(glove, "two dogs play in the snow", "two dogs play in the snow")
    assert d.distance == pytest.approx(0.0, abs=1e-12) and value == pytest.approx(1.0)


@pytest.mark.parametrize("normalize", [True, False])
def test_plan_marginals_equal_nbow_weights(glove, normalize):
    _, d = _wmd(
        glove, "a dog a dog and a cat on grass", "cat sits on the grass grass", normalize=normalize
    )
    pair = d.winner
    assert pair.candidate.words == ("dog", "cat", "grass")
    np.testing.assert_allclose(pair.candidate.weights, [2 / 4, 1 / 4, 1 / 4])
    np.testing.assert_allclose(pair.reference.weights, [1 / 4, 1 / 4, 2 / 4])
    np.testing.assert_allclose(pair.plan.sum(axis=1), pair.candidate.weights, atol=1e-12)
    np.testing.assert_allclose(pair.plan.sum(axis=0), pair.reference.weights, atol=1e-12)
    assert pair.distance == pytest.approx(float((pair.plan * pair.cost).sum()))
    assert pair.cost.shape == pair.plan.shape == (3, 3)
    flows = pair.flows()
    assert list(flows.columns) == ["candidate_word", "reference_word", "mass", "cost"]
    assert flows["mass"].sum() == pytest.approx(1.0)


@pytest.mark.parametrize("normalize", [True, False])
def test_symmetry(glove, normalize):
    a = "a man rides a horse on the beach"
    b = "a person riding a horse along the shore"
    _, ab = _wmd(glove, a, b, normalize=normalize)
    _, ba = _wmd(glove, b, a, normalize=normalize)
    assert ab.distance == pytest.approx(ba.distance, abs=1e-12)
    np.testing.assert_allclose(ab.winner.cost, ba.winner.cost.T)


@pytest.mark.parametrize("candidate", ["the of and a", "xqzzyv blorptang", "the xqzzyv", ""])
def test_empty_candidate_scores_zero_with_a_note(glove, candidate):
    value, d = _wmd(glove, candidate, ["a dog runs", "a cat sleeps"])
    assert value == 0.0
    assert math.isinf(d.distance)
    assert "no in-vocabulary content word" in d.note
    assert all(math.isinf(p.distance) and p.similarity == 0.0 for p in d.pairs)


def test_oov_and_stop_words_are_listed(glove):
    _, d = _wmd(glove, "the xqzzyv dog runs", "a dog is running")
    cand = d.winner.candidate
    assert cand.stopwords == ("the",)
    assert cand.oov == ("xqzzyv",)
    assert cand.words == ("dog", "runs") and cand.kept == 2
    assert d.winner.reference.stopwords == ("a", "is")
    # tokens that are not in the 153-word list stay (metric-spec §7)
    _, d = _wmd(glove, "dog 's toy", "dog toy")
    assert d.winner.candidate.words == ("dog", "'s", "toy")


def test_single_word_type_is_zero_distance(glove):
    value, d = _wmd(glove, "dog dog", "the dog")
    assert d.distance == 0.0 and value == 1.0
    assert d.winner.note == "one word type on both sides"


def test_all_zero_costs_give_infinity():
    # distinct words, identical vectors: gensim 4 returns +inf (|sum of costs| < 1e-8)
    emb = _toy(["cat", "kitty", "dog"], [[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    value, d = _wmd(emb, "cat", "kitty")
    assert math.isinf(d.distance) and value == 0.0
    assert d.winner.note == "all word costs are zero"


def test_max_over_references_and_mean_over_images(glove):
    metric = WMD(embeddings=glove)
    refs = ["a cat sleeps on a sofa", "a dog runs on the grass", "a plane in the sky"]
    result = metric.score(["a dog running on grass", "a plane flying"], [refs, refs])
    first = result.segments[0].details
    assert isinstance(first, WMDDetails)
    assert first.best == 1 and first.winner.reference.tokens[1] == "dog"
    assert result.segments[0].value == max(p.similarity for p in first.pairs)
    assert result.segments[1].details.best == 2
    assert result.value == pytest.approx(np.mean([s.value for s in result.segments]))


def test_details_are_frozen_and_read_only(glove):
    _, d = _wmd(glove, "a dog on grass", "a dog on the lawn")
    with pytest.raises(dataclasses.FrozenInstanceError):
        d.best = 3  # type: ignore[misc]
    with pytest.raises(ValueError):
        d.winner.plan[0, 0] = 1.0
    assert str(d).startswith("WMD d=")


def test_segment_without_prepare(glove):
    metric = WMD(embeddings=glove, tokenizer="whitespace")
    value, details = metric.segment(("dog", "runs"), (("dog", "sprints"),), None)
    batch_value = metric.score(["dog runs"], [["dog sprints"]]).value
    assert value == batch_value and details.winner.candidate.words == ("dog", "runs")


_IMAGE_REFERENCES = [
    "a dog runs on the grass",
    "a brown dog running across a field",
    "the of",  # no content word
    "a cat sleeps on a sofa",
]
_IMAGE_CANDIDATES = [
    "a dog running on grass",
    "a dog",
    "xqzzyv blorptang",
    "a cat on a sofa",
    "a dog running on grass",
]


def test_candidates_sharing_references_score_as_if_alone(glove):
    """Sides are built once per distinct caption in a batch; an item's values and evidence
    are those it gets when scored on its own."""
    metric = WMD(embeddings=glove)
    n = len(_IMAGE_CANDIDATES)
    together = metric.score(_IMAGE_CANDIDATES, [_IMAGE_REFERENCES] * n).segments
    assert together[0].details.pairs[1].reference is together[1].details.pairs[1].reference
    for cand, seg in zip(_IMAGE_CANDIDATES, together, strict=True):
        alone = metric.score([cand], [_IMAGE_REFERENCES]).segments[0]
        assert seg.value == alone.value and seg.details.best == alone.details.best
        for p, q in zip(seg.details.pairs, alone.details.pairs, strict=True):
            assert p.distance == q.distance or (math.isinf(p.distance) and math.isinf(q.distance))
            assert np.array_equal(p.cost, q.cost) and np.array_equal(p.plan, q.plan)
            assert p.candidate == q.candidate and p.reference == q.reference


def test_solver_call_equals_ot_emd(glove):
    """``_emd`` calls POT's network simplex directly: the plan is ``ot.emd``'s, bit for bit
    (a POT upgrade that changes what ``ot.emd`` does first shows up here)."""
    import ot

    captions = [tuple(c.split()) for c in _IMAGE_REFERENCES + _IMAGE_CANDIDATES]
    captions += [("dog", "dog", "cat", "grass", "field"), ("sofa", "cat", "cat")]
    table = _VectorTable(glove, {w for c in captions for w in c}, normalize=True)
    docs = [table.doc(c) for c in captions if table.doc(c).side.words]
    solved = 0
    for a in docs:
        for b, cost in zip(docs, _costs(a, docs, table), strict=True):
            expected = ot.emd(a.weights, b.weights, cost)
            assert np.array_equal(_emd(a, b, cost), expected)
            solved += 1
    assert solved > 50


def test_signature_records_vectors_and_normalisation(glove):
    sig = str(WMD(embeddings=glove).signature())
    assert "normalize:True" in sig and "sigma:1.0" in sig
    assert f"emb:{glove.identity}" in sig
    assert str(WMD(embeddings=glove, normalize=False).signature()) != sig
    other = _toy(["dog"], [[1.0, 2.0]], name="other")
    assert "emb:other/2d/1w/" in str(WMD(embeddings=other).signature())


def test_default_embeddings_are_used_without_argument(glove):
    assert get_metric("wmd").embeddings is glove


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"sigma": 0}, "sigma"),
        ({"sigma": float("inf")}, "sigma"),
        ({"normalize": "yes"}, "normalize"),
    ],
)
def test_bad_options(options, message):
    with pytest.raises(ValueError, match=message):
        WMD(**options)


@pytest.mark.slow
@pytest.mark.parametrize("normalize", [True, False])
def test_matches_gensim_wmdistance_on_1000_coco_pairs(glove, normalize):
    """Acceptance: gensim 4.4 ``wmdistance`` on the same vectors, 1e-9, ~4,000 pairs.

    gensim runs on its own KeyedVectors over the same memory-mapped array, so neither side
    sees norms the other computed.
    """
    from capeval_core.metrics import make_batch
    from capeval_core.resources import coco_caption_sets

    sets = coco_caption_sets("val", 1000)
    batch = make_batch([s.candidate for s in sets], [s.references for s in sets], "ptb")
    result = WMD(embeddings=glove, normalize=normalize).score_batch(batch)
    kv = _keyed_vectors(glove.kv.index_to_key, glove.kv.vectors)
    sw = wmd_stopwords()
    worst, pairs = 0.0, 0
    for i, seg in enumerate(result.segments):
        cand = [w for w in batch.candidate_tokens[i] if w not in sw]
        for j, ref in enumerate(batch.reference_tokens[i]):
            expected = kv.wmdistance(cand, [w for w in ref if w not in sw], norm=normalize)
            got = seg.details.pairs[j].distance
            if math.isinf(expected):
                assert math.isinf(got)
            else:
                worst = max(worst, abs(got - expected))
            pairs += 1
    assert pairs > 4000
    assert worst < 1e-9


def test_pot_imported_without_its_optional_backends():
    """WMD imports POT with its PyTorch/JAX/CuPy/TensorFlow backends switched off (they cost
    seconds and hundreds of MB per process), and leaves the switches as it found them."""
    import importlib.util

    if importlib.util.find_spec("torch") is None:
        pytest.skip("PyTorch is not installed: nothing to keep out")
    code = (
        "import os, sys\n"
        "import capeval_core\n"
        "capeval_core.score('wmd', ['a dog runs'], [['a dog is running']])\n"
        "assert 'ot' in sys.modules and 'torch' not in sys.modules\n"
        "assert not [k for k in os.environ if k.startswith('POT_BACKEND_')]\n"
        "print('ok')\n"
    )
    stdout = fresh_python(code)
    assert stdout.strip() == "ok"
