"""The stanford-emulation parser's tree scorer: a BiLSTM with biaffine arc scores, label and
tag scores, its arcs decoded by Eisner's algorithm into the best projective tree.

Why a graph-based scorer: the jar's PCFG chooses whole trees, and a greedy transition parser
choosing one arc at a time plateaued below it. This scorer reads the two encoders of the
trained spaCy pipeline (the tagger's and the one trained for the parser), scores every head for
every word, and Eisner's algorithm finds the best tree among the projective ones, which is where
the jar's basic trees are (all but 4 of 39,847 sampled train2014 captions). Weights are trained
offline with PyTorch (``tools/spice_parser/train_graph.py``) and run here in numpy.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import numpy as np


class Tree(NamedTuple):
    """One sentence's tags, heads (spaCy's convention: the root is its own head) and labels."""

    tags: list[str]
    heads: list[int]
    labels: list[str]


@dataclass(frozen=True)
class TreeScorer:
    """Weights of the BiLSTM + biaffine scorer, by PyTorch's parameter names, and the names
    of its labels and tags."""

    weights: dict[str, np.ndarray]
    labels: tuple[str, ...]
    tags: tuple[str, ...]

    @classmethod
    def load(cls, folder: Path) -> TreeScorer:
        with np.load(folder / "weights.npz") as z:
            weights = {k: z[k].astype(np.float32) for k in z.files}
        names = {}
        for part in ("labels", "tags"):
            text = (folder / f"{part}.json").read_text(encoding="utf-8")
            names[part] = tuple(json.loads(text))
        return cls(weights, **names)

    def parse(self, features: Sequence[np.ndarray]) -> list[Tree]:
        """Each sentence's tree, given its encoder features (words x dims). Sentences of one
        length are scored together, without padding, so a sentence's tree does not depend on
        the others but through float rounding in the matrix products (none seen in tests)."""
        out: list[Tree] = [Tree([], [], [])] * len(features)
        by_length: dict[int, list[int]] = {}
        for i, f in enumerate(features):
            by_length.setdefault(len(f), []).append(i)
        for n, members in by_length.items():
            if n == 0:
                continue
            x = np.stack([features[i] for i in members]).astype(np.float32)
            log_p, label_dep, label_head, tag_logits = self.scores(x)
            heads = decode(log_p)
            labels = self.label_logits(label_dep, label_head, heads).argmax(axis=-1)
            tags = tag_logits.argmax(axis=-1)
            for row, i in enumerate(members):
                h = [d if j == 0 else j - 1 for d, j in enumerate(heads[row].tolist())]
                out[i] = Tree(
                    [self.tags[k] for k in tags[row].tolist()],
                    h,
                    [self.labels[k] for k in labels[row].tolist()],
                )
        return out

    def scores(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """log P(head | word) as (batch, words, 1 + words), head 0 the root; each word's and
        each candidate head's vectors for the label scores; the tag scores."""
        w = self.weights
        h = x
        layer = 0
        while f"lstm.weight_ih_l{layer}" in w:
            forward = _lstm(h, *(w[f"lstm.{k}_l{layer}"] for k in _LSTM_KEYS))
            backward = _lstm(h[:, ::-1], *(w[f"lstm.{k}_l{layer}_reverse"] for k in _LSTM_KEYS))
            h = np.concatenate([forward, backward[:, ::-1]], axis=-1)
            layer += 1
        n_b, _, dim = h.shape
        with_root = np.concatenate([np.broadcast_to(w["root"], (n_b, 1, dim)), h], axis=1)
        dep = _relu_layer(h, w["dep.0.weight"], w["dep.0.bias"])
        head = _relu_layer(with_root, w["head.0.weight"], w["head.0.bias"])
        s = (dep @ w["U"]) @ head.transpose(0, 2, 1)
        s += (head @ w["u.weight"].T + w["u.bias"]).transpose(0, 2, 1)
        s -= s.max(axis=-1, keepdims=True)
        s -= np.log(np.exp(s).sum(axis=-1, keepdims=True))
        label_dep = _relu_layer(h, w["ldep.0.weight"], w["ldep.0.bias"])
        label_head = _relu_layer(with_root, w["lhead.0.weight"], w["lhead.0.bias"])
        tag_logits = h @ w["tag.weight"].T + w["tag.bias"]
        return s, label_dep, label_head, tag_logits

    def label_logits(
        self, label_dep: np.ndarray, label_head: np.ndarray, heads: np.ndarray
    ) -> np.ndarray:
        """Label scores of each word under its chosen head (0: the root)."""
        chosen = label_head[np.arange(len(heads))[:, None], heads]
        both = np.concatenate([label_dep, chosen], axis=-1)
        return both @ self.weights["lout.weight"].T + self.weights["lout.bias"]


_LSTM_KEYS = ("weight_ih", "weight_hh", "bias_ih", "bias_hh")


def _relu_layer(x: np.ndarray, weight: np.ndarray, bias: np.ndarray) -> np.ndarray:
    """ReLU(x W^T + b) over the last axis, as one matrix product."""
    flat = x.reshape(-1, x.shape[-1]) @ weight.T + bias
    return np.maximum(flat, 0.0).reshape(*x.shape[:-1], -1)


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 0.5 * (np.tanh(0.5 * x) + 1.0)


def _lstm(
    x: np.ndarray, w_ih: np.ndarray, w_hh: np.ndarray, b_ih: np.ndarray, b_hh: np.ndarray
) -> np.ndarray:
    """One direction of a PyTorch LSTM (gates in / forget / cell / out) over (batch, time, dim)."""
    n_b, n_t, _ = x.shape
    hidden = w_hh.shape[1]
    pre = (x.reshape(n_b * n_t, -1) @ w_ih.T + (b_ih + b_hh)).reshape(n_b, n_t, -1)
    h = np.zeros((n_b, hidden), np.float32)
    c = np.zeros((n_b, hidden), np.float32)
    out = np.empty((n_b, n_t, hidden), np.float32)
    for t in range(n_t):
        z = pre[:, t] + h @ w_hh.T
        i, f, g, o = np.split(z, 4, axis=1)
        c = _sigmoid(f) * c + _sigmoid(i) * np.tanh(g)
        h = _sigmoid(o) * np.tanh(c)
        out[:, t] = h
    return out


#: the longest word span decoded as one tree. Eisner's time is cubic in the length (about 12 s
#: for 1,000 words), and no caption comes near this (COCO's longest have about 50 words).
EISNER_SPAN = 256


def decode(scores: np.ndarray, span: int = EISNER_SPAN) -> np.ndarray:
    """:func:`eisner`'s tree, for sentences of up to ``span`` words; a longer one is decoded in
    consecutive pieces of ``span`` words, each piece's best tree on its own arcs, and every
    piece's root under the first piece's root: still one projective tree, in time linear in the
    length. Same numbering as :func:`eisner`."""
    n = scores.shape[1]
    if n <= span:
        return eisner(scores)
    heads = np.empty(scores.shape[:2], np.int64)
    for a in range(0, n, span):
        b = min(a + span, n)
        columns = np.concatenate([[0], np.arange(a + 1, b + 1)])
        piece = eisner(scores[:, a:b][:, :, columns])
        heads[:, a:b] = np.where(piece == 0, 0, piece + a)
    first_root = heads[:, :span].argmin(axis=1) + 1  # the first piece's word under the root
    later = (heads == 0) & (np.arange(n) >= span)
    heads[later] = np.broadcast_to(first_root[:, None], heads.shape)[later]
    return heads


def eisner(scores: np.ndarray) -> np.ndarray:
    """The best projective tree with a single word under the root, for each sentence of a
    batch of equal length (Eisner 1996, first order).

    ``scores[b, d, h]``: the score of head ``h`` (0: the root; ``i``: word ``i``, 1-based) for
    word ``d + 1``. Returns ``heads[b, d]`` in the same numbering. Ties go to the first
    candidate, as numpy's argmax does, so the result is a function of the scores alone.
    """
    n_b, n, _ = scores.shape
    arc = np.full((n_b, n + 1, n + 1), -np.inf)
    arc[:, :, 1:] = scores.transpose(0, 2, 1)  # arc[b, head, dependent]
    # complete[0]: span s..t headed at t; complete[1]: headed at s. incomplete: an arc s-t.
    complete = np.full((2, n_b, n + 1, n + 1), -np.inf)
    incomplete = np.full((2, n_b, n + 1, n + 1), -np.inf)
    complete_split = np.zeros((2, n_b, n + 1, n + 1), np.int64)
    incomplete_split = np.zeros((n_b, n + 1, n + 1), np.int64)
    words = np.arange(1, n + 1)
    complete[:, :, words, words] = 0.0
    for span in range(1, n):  # every span of this length at once: s = 1 .. n - span
        s = np.arange(1, n + 1 - span)
        t = s + span
        r = s[:, None] + np.arange(span)[None, :]  # the split points s .. t-1 of each span
        joined = complete[1][:, s[:, None], r] + complete[0][:, r + 1, t[:, None]]
        best = joined.argmax(axis=2)
        top = np.take_along_axis(joined, best[..., None], axis=2)[..., 0]
        incomplete_split[:, s, t] = best + s
        incomplete[0][:, s, t] = top + arc[:, t, s]  # head t, dependent s
        incomplete[1][:, s, t] = top + arc[:, s, t]  # head s, dependent t
        left = complete[0][:, s[:, None], r] + incomplete[0][:, r, t[:, None]]
        best = left.argmax(axis=2)
        complete[0][:, s, t] = np.take_along_axis(left, best[..., None], axis=2)[..., 0]
        complete_split[0][:, s, t] = best + s
        right = incomplete[1][:, s[:, None], r + 1] + complete[1][:, r + 1, t[:, None]]
        best = right.argmax(axis=2)  # split points s+1 .. t
        complete[1][:, s, t] = np.take_along_axis(right, best[..., None], axis=2)[..., 0]
        complete_split[1][:, s, t] = best + s + 1
    whole = arc[:, 0, 1:] + complete[0][:, 1, 1:] + complete[1][:, 1:, n]
    roots = whole.argmax(axis=1) + 1
    heads = np.zeros((n_b, n + 1), np.int64)
    for b in range(n_b):
        _follow(b, int(roots[b]), n, complete_split, incomplete_split, heads[b])
    return heads[:, 1:]


def _follow(b: int, root: int, n: int, complete_split, incomplete_split, heads) -> None:
    """Read one sentence's tree back from the split points (no recursion)."""
    heads[root] = 0
    todo = [(0, 1, root), (1, root, n)]  # kinds: 0/1 complete (head right/left), 2/3 arc
    while todo:
        kind, s, t = todo.pop()
        if s == t:
            continue
        if kind < 2:
            r = complete_split[kind, b, s, t]
            todo += [(0, s, r), (2, r, t)] if kind == 0 else [(3, s, r), (1, r, t)]
        else:
            r = incomplete_split[b, s, t]
            if kind == 2:
                heads[s] = t
            else:
                heads[t] = s
            todo += [(1, s, r), (0, r + 1, t)]
