"""The stanford-emulation tree scorer: numpy against PyTorch, Eisner against brute force."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest

from capeval_core.spice.biaffine import TreeScorer, decode, eisner
from capeval_core.spice.stanford import model_dir

#: written by tools/spice_parser/train_graph.py (PyTorch 2.15, CPU) with the shipped weights:
#: 20 held-out train2014 captions' encoder vectors, PyTorch's log P(head | word), its label
#: scores under each word's best head and its tag scores
REFERENCE = Path(__file__).resolve().parents[1] / "golden" / "spice-tree-scorer-reference.npz"


@pytest.fixture(scope="module")
def scorer() -> TreeScorer:
    return TreeScorer.load(model_dir() / "graph")


#: float32 products differ in their last bits between BLAS kernels (machines): a relative
#: tolerance for the large negative log-probabilities of impossible heads (-375 +- 3e-4 seen)
CLOSE = {"rtol": 1e-5, "atol": 2e-4}


def test_numpy_scores_equal_pytorch_on_the_reference_sentences(scorer):
    ref = np.load(REFERENCE)
    offsets = np.concatenate([[0], np.cumsum(ref["lens"])])
    at = 0
    for i, n in enumerate(ref["lens"]):
        x = ref["feats"][offsets[i] : offsets[i + 1]].astype(np.float32)[None]
        log_p, label_dep, label_head, tag_logits = scorer.scores(x)
        torch_log_p = ref["logp"][at : at + n * (n + 1)].reshape(n, n + 1)
        at += n * (n + 1)
        np.testing.assert_allclose(log_p[0], torch_log_p, **CLOSE)
        heads = log_p.argmax(-1)
        logits = scorer.label_logits(label_dep, label_head, heads)[0]
        torch_logits = ref["label_logits"][offsets[i] : offsets[i + 1]]
        np.testing.assert_allclose(logits, torch_logits, **CLOSE)
        assert (logits.argmax(-1) == torch_logits.argmax(-1)).all()
        torch_tags = ref["tag_logits"][offsets[i] : offsets[i + 1]]
        np.testing.assert_allclose(tag_logits[0], torch_tags, **CLOSE)
    assert len(ref["lens"]) == 20


def _is_projective_tree(heads: tuple[int, ...]) -> bool:
    """One word under the root, no cycle, no crossing arcs (words 1..n, root 0)."""
    n = len(heads)
    if sum(h == 0 for h in heads) != 1:
        return False
    for d in range(1, n + 1):  # every word reaches the root within n steps
        seen, h = 0, d
        while h != 0 and seen <= n:
            h, seen = heads[h - 1], seen + 1
        if h != 0:
            return False
    arcs = [(min(d, h), max(d, h)) for d, h in enumerate(heads, start=1)]
    return not any(a < c < b < e for a, b in arcs for c, e in arcs)


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5])
def test_eisner_finds_the_best_projective_tree(n):
    rng = np.random.default_rng(n)
    scores = rng.normal(size=(12, n, n + 1))
    trees = [t for t in itertools.product(range(n + 1), repeat=n) if _is_projective_tree(t)]
    found = eisner(scores)
    for b in range(len(scores)):
        total = [sum(scores[b, d, h] for d, h in enumerate(t)) for t in trees]
        best = trees[int(np.argmax(total))]
        assert tuple(found[b].tolist()) == best


def test_eisner_gives_a_projective_tree_for_long_sentences():
    rng = np.random.default_rng(0)
    for heads in eisner(rng.normal(size=(20, 60, 61))):
        assert _is_projective_tree(tuple(heads.tolist()))


def test_a_sentence_longer_than_the_span_is_one_tree_of_pieces_each_eisners_own():
    rng = np.random.default_rng(1)
    scores = rng.normal(size=(3, 23, 24))
    assert (decode(scores, span=23) == eisner(scores)).all()  # up to the span: one tree
    heads = decode(scores, span=10)
    for b in range(len(scores)):
        assert _is_projective_tree(tuple(heads[b].tolist()))
        first_root = int(np.flatnonzero(heads[b] == 0)[0]) + 1
        assert first_root <= 10
        for a in (0, 10, 20):  # each piece: Eisner's tree on its own arcs
            cols = [0, *range(a + 1, min(a + 10, 23) + 1)]
            alone = eisner(scores[b : b + 1, a : a + 10][:, :, cols])[0]
            want = [0 if h == 0 else h + a for h in alone.tolist()]
            got = [0 if a and h == first_root else h for h in heads[b, a : a + 10].tolist()]
            assert got == want


def test_a_sentences_tree_does_not_depend_on_its_batch(scorer):
    ref = np.load(REFERENCE)
    offsets = np.concatenate([[0], np.cumsum(ref["lens"])])
    feats = [ref["feats"][offsets[i] : offsets[i + 1]] for i in range(len(ref["lens"]))]
    together = scorer.parse(feats)
    alone = [scorer.parse([f])[0] for f in feats]
    assert together == alone
    tags, heads, labels = together[0]
    assert len(tags) == len(heads) == len(labels) == len(feats[0])
    assert sum(h == i for i, h in enumerate(heads)) == 1  # one root, its own head
    assert set(labels) <= set(scorer.labels) and "ROOT" in labels
    assert set(tags) <= set(scorer.tags) and "NN" in scorer.tags


@pytest.mark.torch
def test_the_tree_crfs_partition_and_marginals_equal_brute_force():
    """train_graph.py's tree CRF: log Z over every projective tree with one word under the root
    and its gradient (each arc's marginal probability), sentences of several lengths padded
    into one batch."""
    torch = pytest.importorskip("torch", reason="the tree CRF trains with torch only")
    from tools.spice_parser.train_graph import tree_log_partition

    lens = [1, 2, 3, 4, 5, 3]
    scores = torch.randn(
        len(lens), 5, 6, dtype=torch.float64, generator=torch.Generator().manual_seed(0)
    )
    scores.requires_grad_(True)
    log_z = tree_log_partition(scores, torch.tensor(lens))
    log_z.sum().backward()
    for b, n in enumerate(lens):
        trees = [t for t in itertools.product(range(n + 1), repeat=n) if _is_projective_tree(t)]
        s = scores.detach()[b].numpy()
        totals = np.array([sum(s[d, h] for d, h in enumerate(t)) for t in trees])
        top = totals.max()
        assert float(log_z.detach()[b]) == pytest.approx(
            top + np.log(np.exp(totals - top).sum()), abs=1e-9
        )
        p = np.exp(totals - top) / np.exp(totals - top).sum()
        marginals = np.zeros((5, 6))
        for weight, tree in zip(p, trees, strict=True):
            for d, h in enumerate(tree):
                marginals[d, h] += weight
        np.testing.assert_allclose(scores.grad[b].numpy(), marginals, atol=1e-9)
