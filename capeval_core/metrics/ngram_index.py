"""Integer n-gram tables: every sentence's n-grams (orders 1..4) as ids and counts, in numpy.

BLEU and CIDEr-D score a whole batch at once from these tables (and CIDEr-D's bootstrap
recomputes its IDF from them). Each sentence's entries are kept in the order
:func:`~capeval_core.metrics.ngrams.ngram_counts` inserts them (all unigrams left to right
by first occurrence, then bigrams, ...), because CIDEr-D's floating-point sums follow that
order and exact parity with coco-caption depends on it.

A table is built for the references first and then *extended* with the candidates, so the
references' n-grams keep their ids whatever candidates are scored against them: several
systems scored on the same references share one reference table.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from capeval_core.tokenize import Tokens

MAX_ORDER = 4
#: an order-k code is (k-1)-gram id * _STRIDE + token id: ids and tokens below 2**31 fit int64,
#: and the codes of a table stay valid in the tables that extend it
_STRIDE = 2**31


@dataclass(frozen=True, eq=False)
class NgramTable:
    """Sentences as rows of (n-gram id, count) entries, and every n-gram's identity.

    Entries of sentence ``s`` are ``indptr[s]:indptr[s + 1]`` of ``grams``, ``counts`` and
    ``orders`` (1..4), in counting order. An n-gram id ``g`` of order ``k > 1`` is the
    ``(k-1)``-gram ``prefix[g]`` followed by token ``last[g]``; unigrams have ``prefix -1``.
    """

    vocabulary: dict[str, int]
    prefix: np.ndarray
    last: np.ndarray
    gram_orders: np.ndarray
    lengths: np.ndarray
    indptr: np.ndarray
    grams: np.ndarray
    counts: np.ndarray
    orders: np.ndarray
    #: per order k (index k - 1): code -> id lookup, sorted codes and their ids
    _codes: tuple[tuple[np.ndarray, np.ndarray], ...] = field(repr=False)

    @property
    def n_sentences(self) -> int:
        return self.lengths.size

    @property
    def n_grams(self) -> int:
        return self.prefix.size

    def entries(self, sentence: int) -> slice:
        return slice(int(self.indptr[sentence]), int(self.indptr[sentence + 1]))

    def extend(self, sentences: Sequence[Tokens]) -> NgramTable:
        """A table of ``sentences`` whose n-grams already here keep their ids."""
        return _build(sentences, self)

    @functools.cached_property
    def entry_sentence(self) -> np.ndarray:
        """The sentence of every entry."""
        return np.repeat(np.arange(self.n_sentences), np.diff(self.indptr))


def build_table(sentences: Sequence[Tokens]) -> NgramTable:
    """The n-gram table of ``sentences`` (orders 1..4).

    >>> t = build_table([("a", "b", "a")])
    >>> t.grams.tolist(), t.counts.tolist(), t.orders.tolist()
    ([0, 1, 2, 3, 4], [2, 1, 1, 1, 1], [1, 1, 2, 2, 3])
    """
    return _build(sentences, None)


def _lookup(codes_sorted: np.ndarray, ids_sorted: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """Ids of ``codes`` in a sorted code table, -1 where absent."""
    if codes_sorted.size == 0:
        return np.full(codes.size, -1, dtype=np.int64)
    pos = np.searchsorted(codes_sorted, codes)
    pos = np.minimum(pos, codes_sorted.size - 1)
    found = codes_sorted[pos] == codes
    return np.where(found, ids_sorted[pos], -1)


def _first_occurrences(key: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Indices of the first occurrence of each distinct value of ``key``, and its count."""
    if key.size == 0:
        return key.copy(), key.copy()
    order = np.argsort(key)  # not stable (numpy's fast sort): the first index is taken below
    sorted_key = key[order]
    starts = np.flatnonzero(np.concatenate([[True], sorted_key[1:] != sorted_key[:-1]]))
    counts = np.diff(np.append(starts, key.size))
    return np.minimum.reduceat(order, starts), counts


def _merge(
    codes: np.ndarray, ids: np.ndarray, new_codes: np.ndarray, new_ids: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Two sorted code tables (the second's codes all new) merged into one sorted table."""
    if codes.size == 0:
        return new_codes, new_ids
    dest = np.searchsorted(codes, new_codes) + np.arange(new_codes.size)
    merged_codes = np.empty(codes.size + new_codes.size, dtype=np.int64)
    merged_ids = np.empty_like(merged_codes)
    mask = np.ones(merged_codes.size, dtype=bool)
    mask[dest] = False
    merged_codes[dest], merged_ids[dest] = new_codes, new_ids
    merged_codes[mask], merged_ids[mask] = codes, ids
    return merged_codes, merged_ids


def _build(sentences: Sequence[Tokens], base: NgramTable | None) -> NgramTable:
    vocabulary = dict(base.vocabulary) if base is not None else {}
    old_vocabulary = len(vocabulary)
    flat = list(itertools.chain.from_iterable(sentences))
    for token in dict.fromkeys(flat):
        if token not in vocabulary:
            vocabulary[token] = len(vocabulary)
    tokens = np.fromiter(map(vocabulary.__getitem__, flat), dtype=np.int64, count=len(flat))
    lengths = np.fromiter(map(len, sentences), dtype=np.int64, count=len(sentences))
    n_tokens = tokens.size
    starts = np.zeros(len(sentences) + 1, dtype=np.int64)
    np.cumsum(lengths, out=starts[1:])
    sentence_of = np.repeat(np.arange(len(sentences)), lengths)
    remaining = lengths[sentence_of] - (np.arange(n_tokens) - starts[sentence_of])

    prefix = [base.prefix] if base is not None else []
    last = [base.last] if base is not None else []
    gram_orders = [base.gram_orders] if base is not None else []
    n_grams = base.n_grams if base is not None else 0
    codes_out = []
    per_order = []  # (positions, gram ids, counts) of first occurrences per order
    previous = np.zeros(0, dtype=np.int64)  # (k-1)-gram id at each position
    stride = np.int64(_STRIDE)
    for k in range(1, MAX_ORDER + 1):
        valid = np.flatnonzero(remaining >= k)
        codes = tokens if k == 1 else previous[valid] * stride + tokens[valid + k - 1]
        known_codes, known_ids = (
            base._codes[k - 1] if base is not None else (np.zeros(0, np.int64),) * 2
        )
        ids = _lookup(known_codes, known_ids, codes)
        new = ids < 0
        if new.any():
            if k == 1:
                # every token new to the vocabulary occurs here: the new unigrams are those
                fresh = np.arange(old_vocabulary, len(vocabulary), dtype=np.int64)
                inverse = codes[new] - old_vocabulary
            else:
                fresh, inverse = np.unique(codes[new], return_inverse=True)
            ids[new] = n_grams + inverse
            new_ids = np.arange(n_grams, n_grams + fresh.size, dtype=np.int64)
            if k == 1:
                prefix.append(np.full(fresh.size, -1, dtype=np.int64))
                last.append(fresh)
            else:
                prefix.append(fresh // stride)
                last.append(fresh % stride)
            gram_orders.append(np.full(fresh.size, k, dtype=np.int8))
            n_grams += fresh.size
            codes_out.append(_merge(known_codes, known_ids, fresh, new_ids))
        else:
            codes_out.append((known_codes, known_ids))
        # within a sentence, each n-gram counted once, at its first position
        full = np.full(n_tokens, -1, dtype=np.int64)
        full[valid] = ids
        previous = full
        first, counts = _first_occurrences(sentence_of[valid] * np.int64(n_grams + 1) + ids)
        # left to right: mark the first positions instead of sorting them
        at = np.zeros(valid.size, dtype=np.int64)
        at[first] = counts
        first = np.flatnonzero(at)
        per_order.append((valid[first], ids[first], at[first], k))
    # Entries grouped by sentence, orders 1..4 within a sentence, first positions left to
    # right within an order (the counting order): each entry's place is computed, not sorted.
    n_sent = len(sentences)
    per_sentence = np.stack(
        [np.bincount(sentence_of[p], minlength=n_sent) for p, _, _, _ in per_order], axis=1
    )
    indptr = np.zeros(n_sent + 1, dtype=np.int64)
    np.cumsum(per_sentence.sum(axis=1), out=indptr[1:])
    before = indptr[:-1, None] + np.cumsum(per_sentence, axis=1) - per_sentence
    size = int(indptr[-1])
    grams = np.empty(size, dtype=np.int64)
    counts = np.empty(size, dtype=np.int64)
    orders = np.empty(size, dtype=np.int8)
    for k, (p, g, c, _) in enumerate(per_order):
        sent = sentence_of[p]
        block_start = np.cumsum(per_sentence[:, k]) - per_sentence[:, k]
        dest = before[sent, k] + (np.arange(p.size) - block_start[sent])
        grams[dest], counts[dest], orders[dest] = g, c, k + 1
    return NgramTable(
        vocabulary,
        np.concatenate(prefix) if prefix else np.zeros(0, np.int64),
        np.concatenate(last) if last else np.zeros(0, np.int64),
        np.concatenate(gram_orders) if gram_orders else np.zeros(0, np.int8),
        lengths,
        indptr,
        grams,
        counts,
        orders,
        tuple(codes_out),
    )


@dataclass(frozen=True, eq=False)
class BatchNgrams:
    """The n-gram tables of a batch: one row per reference (the items' references in
    order), one row per candidate, with shared ids. Words are coco-caption's
    (:func:`~capeval_core.metrics.ngrams.coco_words`)."""

    references: NgramTable
    candidates: NgramTable
    #: item i's references are rows ref_offsets[i]:ref_offsets[i + 1] of ``references``
    ref_offsets: np.ndarray
    candidate_words: tuple[Tokens, ...]
    reference_words: tuple[tuple[Tokens, ...], ...]

    @property
    def n_items(self) -> int:
        return self.candidates.n_sentences

    @functools.cached_property
    def reference_item(self) -> np.ndarray:
        """The item of every reference row."""
        return np.repeat(np.arange(self.n_items), np.diff(self.ref_offsets))

    @functools.cached_property
    def item_grams(self) -> tuple[np.ndarray, np.ndarray]:
        """``(keys, max counts)``: every (item, n-gram) pair among an item's references as
        the sorted key ``item * 2**31 + id``, with the most times one reference has it."""
        refs = self.references
        keys = self.reference_item[refs.entry_sentence] * np.int64(_STRIDE) + refs.grams
        unique, inverse = np.unique(keys, return_inverse=True)
        most = np.zeros(unique.size, dtype=np.int64)
        np.maximum.at(most, inverse, refs.counts)
        return unique, most

    def document_frequency(self) -> np.ndarray:
        """Per n-gram id (candidates' ids included), in how many items' references it occurs."""
        keys, _ = self.item_grams
        return np.bincount(keys % _STRIDE, minlength=self.candidates.n_grams)

    @functools.cached_property
    def candidate_best_counts(self) -> np.ndarray:
        """Per candidate entry, the most times one reference of its item has that n-gram
        (-1 where none has it)."""
        cand = self.candidates
        keys, most = self.item_grams
        return _lookup(keys, most, cand.entry_sentence * np.int64(_STRIDE) + cand.grams)

    def clipped_counts(self) -> np.ndarray:
        """Per item and order, BLEU's clipped matches: each candidate n-gram counted at most
        as often as one reference has it. Shape ``(items, 4)``, ints."""
        cand = self.candidates
        item = cand.entry_sentence
        clipped = np.minimum(cand.counts, np.maximum(self.candidate_best_counts, 0))
        slot = item * MAX_ORDER + (cand.orders.astype(np.int64) - 1)
        out = np.bincount(slot, weights=clipped, minlength=self.n_items * MAX_ORDER)
        return out.reshape(self.n_items, MAX_ORDER).astype(np.int64)

    @functools.cached_property
    def reference_lookup(self) -> tuple[np.ndarray, np.ndarray]:
        """``(keys, entries)``: every reference entry as the sorted key ``row * 2**31 + id``
        and its entry index, to find a candidate n-gram in a given reference."""
        refs = self.references
        keys = refs.entry_sentence * np.int64(_STRIDE) + refs.grams
        order = np.argsort(keys)  # keys are distinct: an n-gram is one entry of its row
        return keys[order], order


#: the reference tables of the last few reference sets, by identity (several systems scored
#: against one reference set share one table)
_REFERENCE_TABLES: list[tuple[object, NgramTable, tuple[tuple[Tokens, ...], ...]]] = []


def _reference_table(
    reference_tokens: tuple[tuple[Tokens, ...], ...],
) -> tuple[NgramTable, tuple[tuple[Tokens, ...], ...]]:
    from capeval_core.metrics.ngrams import coco_words

    for tokens, table, words in _REFERENCE_TABLES:
        if tokens is reference_tokens:
            return table, words
    words = tuple(tuple(coco_words(r) for r in refs) for refs in reference_tokens)
    table = build_table([r for refs in words for r in refs])
    _REFERENCE_TABLES.insert(0, (reference_tokens, table, words))
    del _REFERENCE_TABLES[2:]
    return table, words


def batch_ngrams(batch: object) -> BatchNgrams:
    """The n-gram tables of a :class:`~capeval_core.metrics.base.Batch`, built once per batch
    (and the reference table once per reference set)."""
    from capeval_core.metrics.ngrams import coco_words

    def build() -> BatchNgrams:
        refs, ref_words = _reference_table(batch.reference_tokens)  # type: ignore[attr-defined]
        cand_words = tuple(coco_words(c) for c in batch.candidate_tokens)  # type: ignore[attr-defined]
        offsets = np.zeros(len(cand_words) + 1, dtype=np.int64)
        np.cumsum([len(r) for r in ref_words], out=offsets[1:])
        return BatchNgrams(refs, refs.extend(cand_words), offsets, cand_words, ref_words)

    return batch.memo("ngrams", build)  # type: ignore[attr-defined]
