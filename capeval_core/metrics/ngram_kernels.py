"""Compiled n-gram loops (numba) for scoring small batches fast: BLEU's clipped counts and
CIDEr-D's values, in coco-caption's order of float operations.

A training loop scores 50-500 captions per call, thousands of times: there the numpy tables
of :mod:`.ngram_index` (a dozen sorts of every entry) and the evidence objects cost more than
the arithmetic. These kernels walk the sentences once, as coco-caption's Python does, so every
sequential sum is taken term by term in its order and the values are its values bit for bit
(tested against :class:`~capeval_core.metrics.cider.CiderD` and pycocoevalcap). The squares
and the length penalties, whose libm ``pow`` a compiler may turn into a multiplication, are
computed in Python (:func:`~capeval_core.metrics.cider._squares`) and passed in.

Words are coded as ids below :data:`MAX_VOCABULARY`, so an n-gram of order ``k`` packs into one
int64 (``k`` then its ids, 15 bits each); :func:`count_table` returns None for a larger
vocabulary and callers take the numpy path.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numba import njit

from capeval_core.tokenize import Tokens

MAX_ORDER = 4
#: word ids fit 15 bits: an order-4 code (4, then four ids) stays below 2**63
MAX_VOCABULARY = 2**15


@dataclass(frozen=True, eq=False)
class CountTable:
    """Every sentence's n-gram entries (orders 1..4) in coco-caption's counting order: all
    unigrams by first occurrence left to right, then bigrams, ... Entries of sentence ``s``
    are ``starts[s]:starts[s + 1]``; ``grams`` numbers the distinct n-grams of the table."""

    grams: np.ndarray
    counts: np.ndarray
    orders: np.ndarray
    starts: np.ndarray
    lengths: np.ndarray
    n_grams: int


@njit(cache=True)
def _entries(tokens, bounds):  # pragma: no cover - compiled
    """Every sentence's n-gram entries: distinct n-gram ids (numbered in order of first
    occurrence in the table, through an open-addressing hash of the packed codes), counts,
    orders and per-sentence entry bounds; and the number of distinct n-grams."""
    n_sent = bounds.size - 1
    top = 0
    for s in range(n_sent):
        top += MAX_ORDER * (bounds[s + 1] - bounds[s])
    bits = 4
    while (1 << bits) < 2 * top:
        bits += 1
    mask = (1 << bits) - 1
    keys = np.zeros(1 << bits, dtype=np.int64)  # codes are >= 2**15: 0 is an empty slot
    ids = np.empty(1 << bits, dtype=np.int64)
    grams = np.empty(top, dtype=np.int64)
    counts = np.empty(top, dtype=np.int64)
    orders = np.empty(top, dtype=np.int8)
    starts = np.empty(n_sent + 1, dtype=np.int64)
    last = np.full(top, -1, dtype=np.int64)  # per n-gram id: the sentence it was last seen in
    where = np.empty(top, dtype=np.int64)  # ... and its entry there
    n_grams = 0
    e = 0
    for s in range(n_sent):
        starts[s] = e
        a, b = bounds[s], bounds[s + 1]
        for k in range(1, MAX_ORDER + 1):
            for i in range(a, b - k + 1):
                code = np.int64(k)
                for j in range(i, i + k):
                    code = code * MAX_VOCABULARY + tokens[j]
                slot = np.int64(
                    (np.uint64(code) * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(64 - bits)
                )
                while keys[slot] != 0 and keys[slot] != code:
                    slot = (slot + 1) & mask
                if keys[slot] == 0:
                    keys[slot] = code
                    ids[slot] = n_grams
                    n_grams += 1
                g = ids[slot]
                if last[g] == s:
                    counts[where[g]] += 1
                else:
                    last[g] = s
                    where[g] = e
                    grams[e] = g
                    counts[e] = 1
                    orders[e] = k
                    e += 1
    starts[n_sent] = e
    return grams[:e], counts[:e], orders[:e], starts, n_grams


def count_table(sentences: Sequence[Tokens]) -> CountTable | None:
    """The n-gram entries of ``sentences``; None when they use :data:`MAX_VOCABULARY` words or
    more (the packed codes would overflow)."""
    flat = list(itertools.chain.from_iterable(sentences))
    vocabulary = dict.fromkeys(flat)
    if len(vocabulary) >= MAX_VOCABULARY:
        return None
    index = dict(zip(vocabulary, range(len(vocabulary)), strict=True))
    tokens = np.fromiter(map(index.__getitem__, flat), dtype=np.int64, count=len(flat))
    lengths = np.fromiter(map(len, sentences), dtype=np.int64, count=len(sentences))
    bounds = np.zeros(len(sentences) + 1, dtype=np.int64)
    np.cumsum(lengths, out=bounds[1:])
    grams, counts, orders, starts, n_grams = _entries(tokens, bounds)
    return CountTable(grams, counts, orders, starts, lengths, int(n_grams))


@njit(cache=True)
def document_frequency(grams, starts, ref_start, n_items, n_grams):  # pragma: no cover
    """Per n-gram, how many items have it in one of their references (sentences
    ``ref_start[i]:ref_start[i + 1]`` are item ``i``'s)."""
    df = np.zeros(n_grams, dtype=np.int64)
    seen = np.full(n_grams, -1, dtype=np.int64)
    for i in range(n_items):
        for s in range(ref_start[i], ref_start[i + 1]):
            for e in range(starts[s], starts[s + 1]):
                g = grams[e]
                if seen[g] != i:
                    seen[g] = i
                    df[g] += 1
    return df


@njit(cache=True)
def cider_scores(
    grams, orders, starts, weights, squares, bigrams, ref_start, n_items, penalty, n_grams
):  # pragma: no cover - compiled
    """CIDEr-D of every item: candidate ``i`` is sentence ``i``, its references the sentences
    ``ref_start[i]:ref_start[i + 1]``; ``weights`` and ``squares`` per entry, ``bigrams`` per
    sentence (coco-caption's "length"), ``penalty[d + bigrams.max()]`` the length penalty of a
    difference ``d`` of bigram counts."""
    n_sent = starts.size - 1
    norms = np.zeros((n_sent, MAX_ORDER))
    for s in range(n_sent):
        for e in range(starts[s], starts[s + 1]):
            norms[s, orders[e] - 1] += squares[e]  # in counting order, as coco-caption sums
        for k in range(MAX_ORDER):
            norms[s, k] = np.sqrt(norms[s, k])
    shift = bigrams.max() if n_sent else 0
    scratch = np.full(n_grams, -1.0)
    out = np.empty(n_items)
    val = np.empty(MAX_ORDER)
    for i in range(n_items):
        t = np.zeros(MAX_ORDER)
        for r in range(ref_start[i], ref_start[i + 1]):
            for e in range(starts[r], starts[r + 1]):
                scratch[grams[e]] = weights[e]
            p = penalty[bigrams[i] - bigrams[r] + shift]
            for k in range(MAX_ORDER):
                val[k] = 0.0
            for e in range(starts[i], starts[i + 1]):
                y = scratch[grams[e]]
                if y >= 0.0:
                    x = weights[e]
                    val[orders[e] - 1] += min(x, y) * y
            for k in range(MAX_ORDER):
                if norms[i, k] != 0 and norms[r, k] != 0:
                    val[k] /= norms[i, k] * norms[r, k]
                t[k] += val[k] * p
            for e in range(starts[r], starts[r + 1]):
                scratch[grams[e]] = -1.0
        score = (((t[0] + t[1]) + t[2]) + t[3]) / 4.0
        if ref_start[i + 1] == ref_start[i]:  # no reference: 0 / 0, as coco-caption's numpy
            out[i] = np.nan
            continue
        score /= ref_start[i + 1] - ref_start[i]
        score *= 10.0
        out[i] = score
    return out


@njit(cache=True)
def bleu_counts(
    grams, counts, orders, starts, lengths, ref_start, n_items, n_grams
):  # pragma: no cover - compiled
    """Per item: BLEU's clipped matches per order (each candidate n-gram counted at most as
    often as one reference has it) and the closest reference length (ties to the shorter)."""
    correct = np.zeros((n_items, MAX_ORDER), dtype=np.int64)
    ref_len = np.empty(n_items, dtype=np.int64)
    most = np.zeros(n_grams, dtype=np.int64)
    for i in range(n_items):
        best_d, best_l = -1, 0
        for r in range(ref_start[i], ref_start[i + 1]):
            for e in range(starts[r], starts[r + 1]):
                if counts[e] > most[grams[e]]:
                    most[grams[e]] = counts[e]
            d = abs(lengths[r] - lengths[i])
            if best_d < 0 or d < best_d or (d == best_d and lengths[r] < best_l):
                best_d, best_l = d, lengths[r]
        ref_len[i] = best_l
        for e in range(starts[i], starts[i + 1]):
            correct[i, orders[e] - 1] += min(counts[e], most[grams[e]])
        for r in range(ref_start[i], ref_start[i + 1]):
            for e in range(starts[r], starts[r + 1]):
                most[grams[e]] = 0
    return correct, ref_len
