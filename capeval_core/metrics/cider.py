"""CIDEr-D (Vedantam et al. 2015) exactly as coco-caption's ``Cider`` computes it.

Spec: metric-spec §4. The IDF comes from the scored set by default (so an image's score
depends on the other images scored with it) or from the COCO val2014 references
(``idf="coco-val2014"``), which makes single images and small batches meaningful.

Float operations follow the reference's order (``numpy.log`` for the IDF, ``pow`` for the
squares, ``e ** x`` for the length penalty, numpy means) so results agree bit for bit.
"""

from __future__ import annotations

import functools
import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from capeval_core.metrics.base import Batch, Metric, MetricConfig
from capeval_core.metrics.document_frequency import (
    ORDER,
    SET_PREFIX,
    DocumentFrequency,
)
from capeval_core.metrics.idf import (
    COCO_VAL_IDF_VERSION,
    coco_val_document_frequency,
    reference_set_document_frequency,
)
from capeval_core.metrics.ngram_index import BatchNgrams, NgramTable, batch_ngrams
from capeval_core.metrics.ngrams import Ngram, coco_words, ngram_counts
from capeval_core.metrics.statistics import ItemStatistics, MeanStatistics
from capeval_core.options import check_choice, check_number
from capeval_core.tokenize import Tokens

IDF_SOURCES = ("corpus", "coco-val2014")


@dataclass(frozen=True, kw_only=True)
class CiderConfig(MetricConfig):
    """``idf``: "corpus" (the scored set, as coco-caption), "coco-val2014", or ``set-…``: a
    set's references registered by :func:`capeval_core.metrics.idf.register_reference_set`
    (one image of a set scored as the set scores it)."""

    sigma: float = 6.0
    idf: str = "corpus"

    def __post_init__(self) -> None:
        if not (isinstance(self.idf, str) and self.idf.startswith(SET_PREFIX)):
            check_choice("idf", self.idf, IDF_SOURCES)
        # the length penalty divides by 2 sigma^2, which must stay a positive finite float
        sigma = check_number("sigma", self.sigma, at_least=1e-150, at_most=1e150)
        object.__setattr__(self, "sigma", sigma)


@dataclass(frozen=True)
class TfIdfVector:
    """A sentence's tf-idf weights per order, their norms and its bigram count."""

    weights: tuple[dict[Ngram, float], ...]
    norms: tuple[float, ...]
    length: int


def tfidf(counts: Counter[Ngram], df: DocumentFrequency) -> TfIdfVector:
    """Raw-count tf times IDF per order (no tf normalisation, as coco-caption)."""
    weights: list[dict[Ngram, float]] = [{} for _ in range(ORDER)]
    squares = [0.0] * ORDER
    length = 0
    for gram, tf in counts.items():
        k = len(gram) - 1
        w = float(tf) * df.idf(gram)
        weights[k][gram] = w
        squares[k] += pow(w, 2)
        if k == 1:
            # coco-caption's "length" counts bigrams
            length += tf
    return TfIdfVector(tuple(weights), tuple(math.sqrt(s) for s in squares), length)


def _penalty(delta: float, sigma: float) -> float:
    """Gaussian length penalty for a bigram-count difference, as coco-caption computes it."""
    return math.e ** (-(delta**2) / (2 * sigma**2))


def similarity(cand: TfIdfVector, ref: TfIdfVector, sigma: float) -> np.ndarray:
    """Per-order clipped cosine of two tf-idf vectors times the Gaussian length penalty."""
    penalty = _penalty(float(cand.length - ref.length), sigma)
    val = np.zeros(ORDER)
    for k in range(ORDER):
        ref_w = ref.weights[k]
        total = 0.0
        for gram, w in cand.weights[k].items():
            r = ref_w.get(gram)
            if r is not None:
                total += min(w, r) * r
        if cand.norms[k] != 0 and ref.norms[k] != 0:
            total /= cand.norms[k] * ref.norms[k]
        val[k] = total * penalty
    return val


@dataclass(frozen=True)
class CiderReference:
    """One reference's tf-idf vector and its per-order similarity with the candidate."""

    tokens: Tokens
    vector: TfIdfVector
    similarity: tuple[float, ...]


class _Evidence:
    """Builds an item's tf-idf vectors and per-reference similarities when first asked for
    (a batch scored at once keeps only arrays until then)."""

    def parts(self, item: int) -> tuple[TfIdfVector, tuple[CiderReference, ...]]:
        raise NotImplementedError


class _Ready(_Evidence):
    def __init__(self, vector: TfIdfVector, references: tuple[CiderReference, ...]) -> None:
        self.vector, self.references = vector, references

    def parts(self, item: int) -> tuple[TfIdfVector, tuple[CiderReference, ...]]:
        return self.vector, self.references


@dataclass(frozen=True)
class CiderDetails:
    """Evidence for one item: ``per_order``, each n-gram order's cosine with the references
    (length-penalised, averaged over them, times 10: their mean is the item's score), and
    the tf-idf vectors behind them.

    :attr:`vector` (the candidate's tf-idf vector) and :attr:`references` (each reference's
    vector and similarity) are built when first asked for.
    """

    candidate: Tokens
    per_order: tuple[float, ...]
    sigma: float
    evidence: _Evidence = field(repr=False, compare=False)
    item: int = field(default=0, repr=False, compare=False)

    @functools.cached_property
    def _parts(self) -> tuple[TfIdfVector, tuple[CiderReference, ...]]:
        return self.evidence.parts(self.item)

    @property
    def vector(self) -> TfIdfVector:
        return self._parts[0]

    @property
    def references(self) -> tuple[CiderReference, ...]:
        return self._parts[1]

    def length_penalty(self, reference: int) -> float:
        """The Gaussian length penalty against one reference."""
        return _penalty(
            float(self.vector.length - self.references[reference].vector.length), self.sigma
        )


@dataclass(frozen=True)
class CiderCorpusDetails:
    """Where the IDF came from and how many documents it counts."""

    idf_source: str
    documents: int
    log_documents: float


class _Vectors:
    """Per-batch memo: each distinct sentence's tf-idf vector is computed once."""

    def __init__(
        self, df: DocumentFrequency, counts: dict[Tokens, Counter[Ngram]] | None = None
    ) -> None:
        self.df = df
        self._counts = counts or {}
        self._vectors: dict[Tokens, TfIdfVector] = {}

    def __call__(self, words: Tokens) -> TfIdfVector:
        vector = self._vectors.get(words)
        if vector is None:
            counts = self._counts.get(words) or ngram_counts(words, ORDER)
            vector = self._vectors[words] = tfidf(counts, self.df)
        return vector


def _looked_up(df: DocumentFrequency, batch: Batch) -> _Vectors:
    """The batch's vectors over a table of its own (not the scored set's), every n-gram of
    the batch looked up in the table at once (:meth:`DocumentFrequency.prefetch`)."""
    sentences = dict.fromkeys(map(coco_words, batch.candidate_tokens))
    sentences.update((coco_words(t), None) for refs in batch.reference_tokens for t in refs)
    counts = {words: ngram_counts(words, ORDER) for words in sentences}
    df.prefetch(gram for grams in counts.values() for gram in grams)
    return _Vectors(df, counts)


@dataclass(frozen=True)
class _CorpusIdf:
    """What a corpus-IDF batch needs before scoring: how many documents the IDF counts."""

    source: str
    documents: int
    log_documents: float


class CiderD(Metric):
    """CIDEr-D: n = 4, σ = 6, ×10, clipped, with the Gaussian length penalty.

    >>> cands = ["a cat sits on a mat", "a dog runs"]
    >>> refs = [["a cat is on a mat"], ["a dog is running"]]
    >>> round(CiderD(tokenizer="whitespace").score(cands, refs).value, 6)  # = pycocoevalcap 1.2
    3.264683
    """

    key = "cider_d"
    name = "CIDEr-D"
    bounds = (0.0, 10.0)
    measures = (
        "agreement with the references on word sequences of 1 to 4 words, rare ones weighing "
        "more (tf-idf cosine × 10, with a length penalty)"
    )
    Config = CiderConfig

    def resources(self) -> dict[str, str]:
        if self.config.idf == "coco-val2014":
            return {"idf-source": COCO_VAL_IDF_VERSION}
        return {}

    def segments_independent(self) -> bool:
        return self.config.idf != "corpus"  # the scored set's own document frequencies

    def prepare(self, batch: Batch) -> _Vectors | _CorpusIdf:
        if self.config.idf == "coco-val2014":
            return _looked_up(coco_val_document_frequency(self.tokenizer), batch)
        if self.config.idf.startswith(SET_PREFIX):
            return _looked_up(reference_set_document_frequency(self.config.idf), batch)
        n = len(batch)
        return _CorpusIdf("corpus", n, float(np.log(float(n))))

    def set_notes(self, batch: Batch) -> list[str]:
        if self.segments_independent() or not len(batch):
            return []
        n = len(batch)
        if n == 1:
            where, advice = "this set is a single image", "Score more images together"
        elif len(set(batch.reference_tokens)) == 1:
            where = f"every one of its {n:,} images has the same references"
            advice = "Score images with their own references together"
        else:
            return []
        return [
            f"CIDEr-D takes its IDF from the scored set, and {where}: every n-gram of the "
            f"references then occurs in {n} of {n} images, so its idf is log {n} - log {n} = "
            f"0, every tf-idf weight of the references is 0 and so is every score. {advice} "
            "or use idf='coco-val2014'."
        ]

    def segment(self, candidate: Tokens, references: tuple[Tokens, ...], prepared: _Vectors | None):
        """One item, n-gram by n-gram. With the scored set's IDF the document frequencies
        come from the whole batch, so ``prepared`` must hold them (``_Vectors`` of
        :func:`~capeval_core.metrics.document_frequency.corpus_document_frequency`);
        :meth:`score_batch` scores such batches at once."""
        if not isinstance(prepared, _Vectors):
            raise TypeError("CiderD.segment needs the document frequencies (a _Vectors)")
        sigma = self.config.sigma
        candidate = coco_words(candidate)
        cand = prepared(candidate)
        total = np.zeros(ORDER)
        refs = []
        for ref_tokens in map(coco_words, references):
            vec = prepared(ref_tokens)
            sim = similarity(cand, vec, sigma)
            total += sim
            refs.append(CiderReference(ref_tokens, vec, tuple(float(x) for x in sim)))
        score = np.mean(total)
        score /= len(references)
        score *= 10.0
        per_order = tuple(float(x) * 10.0 / len(references) for x in total)
        evidence = _Ready(cand, tuple(refs))
        return float(score), CiderDetails(candidate, per_order, sigma, evidence)

    def score_items(self, batch: Batch, prepared: _Vectors | _CorpusIdf):
        if isinstance(prepared, _Vectors):
            return super().score_items(batch, prepared)
        return _BatchScores(batch_ngrams(batch), self.config.sigma).items()

    def aggregate(self, segments, prepared: _Vectors | _CorpusIdf) -> tuple[dict[str, float], Any]:
        corpus, _ = super().aggregate(segments, prepared)
        df = prepared.df if isinstance(prepared, _Vectors) else prepared
        return corpus, CiderCorpusDetails(df.source, df.documents, df.log_documents)

    def item_statistics(self, values, statistics, batch) -> ItemStatistics:
        """With the scored set's IDF a resample recomputes the document frequencies from its
        own references (coco-caption's CIDEr on the resampled list: a twice-drawn image's
        references count twice, and N is the resample's length)."""
        if self.config.idf != "corpus":
            return MeanStatistics.from_values(self.report_keys(), values)
        return CiderStatistics(
            self.report_keys(),
            np.ascontiguousarray(values[self.key], dtype=float),
            batch,
            self.config.sigma,
        )


# -- the whole batch at once ------------------------------------------------------------------
#
# The float operations are coco-caption's, in its order: weights tf * idf, squares by Python's
# pow (libm's, which differs from x * x in the last bit for about 1 value in 1,000), norms as
# sums in counting order, cosines summed over the candidate's n-grams in counting order,
# per-order values summed over the references in order. Only independent operations run
# side by side; every sequential sum is taken term by term (see _ordered_sums).


def _ordered_sums(values: np.ndarray, group: np.ndarray, n_groups: int) -> np.ndarray:
    """Per group, ``((0.0 + v0) + v1) + ...`` over its values in the order given.

    ``group`` (non-decreasing) names each value's group; ``values`` may have extra columns,
    summed the same way. Each pass adds the r-th value of every group at once, so the sums
    are the sequential ones, bit for bit.

    >>> _ordered_sums(np.array([1.0, 2.0, 3.0]), np.array([0, 0, 2]), 3).tolist()
    [3.0, 0.0, 3.0]
    """
    out = np.zeros((n_groups, *values.shape[1:]))
    if group.size == 0:
        return out
    start = np.flatnonzero(np.concatenate([[True], group[1:] != group[:-1]]))
    sizes = np.diff(np.append(start, group.size))
    rank = np.arange(group.size) - np.repeat(start, sizes)
    top = int(sizes.max())
    by_rank = np.argsort(rank.astype(np.int16) if top < 2**15 else rank, kind="stable")
    bounds = np.searchsorted(rank[by_rank], np.arange(top + 1))
    for r in range(top):
        idx = by_rank[bounds[r] : bounds[r + 1]]
        out[group[idx]] += values[idx]
    return out


def _squares(counts: np.ndarray, df_index: np.ndarray, idf_of: np.ndarray) -> np.ndarray:
    """``pow(tf * idf, 2)`` per entry with Python's pow, once per distinct (tf, df) pair."""
    if counts.size == 0:
        return np.zeros(0)
    width = idf_of.size
    codes = counts.astype(np.int64) * width + df_index
    top = int(codes.max()) + 1
    if top <= 16 * codes.size:  # a table over every code: no sort
        present = np.zeros(top, dtype=bool)
        present[codes] = True
        unique = np.flatnonzero(present)
        where = np.zeros(top, dtype=np.int64)
        where[unique] = np.arange(unique.size)
        inverse = where[codes]
    else:
        unique, inverse = np.unique(codes, return_inverse=True)
    weights = (unique // width).astype(float) * idf_of[unique % width]
    return np.array([pow(w, 2) for w in weights.tolist()])[inverse]


@dataclass(frozen=True, eq=False)
class _SideWeights:
    """tf-idf weights of one table's entries and each sentence's per-order norms."""

    weights: np.ndarray
    norms: np.ndarray  # (sentences, ORDER)

    @classmethod
    def of(cls, table: NgramTable, df_index: np.ndarray, idf_of: np.ndarray) -> _SideWeights:
        entry_df = df_index[table.grams]
        weights = table.counts.astype(float) * idf_of[entry_df]
        squares = _squares(table.counts, entry_df, idf_of)
        group = table.entry_sentence * ORDER + (table.orders.astype(np.int64) - 1)
        sums = _ordered_sums(squares, group, table.n_sentences * ORDER)
        return cls(weights, np.sqrt(sums).reshape(table.n_sentences, ORDER))


def _bigrams(table: NgramTable) -> np.ndarray:
    """coco-caption's CIDEr "length": the count of bigrams, one fewer than the words."""
    return np.maximum(table.lengths - 1, 0)


def _matches(grams: BatchNgrams) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every (reference row, candidate entry, reference entry) where a candidate n-gram of
    an item occurs in one of its references, in reference row then candidate-entry order."""
    cand = grams.candidates
    # only candidate n-grams found in some reference of their item are looked up
    present = np.flatnonzero(grams.candidate_best_counts > 0)
    per_item = np.bincount(cand.entry_sentence[present], minlength=grams.n_items)
    item_start = np.zeros(grams.n_items + 1, dtype=np.int64)
    np.cumsum(per_item, out=item_start[1:])
    rows = grams.reference_item
    per_row = per_item[rows]
    total = int(per_row.sum())
    q_row = np.repeat(np.arange(rows.size), per_row)
    first = np.repeat(np.cumsum(per_row) - per_row, per_row)
    q_entry = present[np.repeat(item_start[rows], per_row) + (np.arange(total) - first)]
    ref_keys, ref_entries = grams.reference_lookup
    keys = q_row * np.int64(2**31) + cand.grams[q_entry]
    pos = np.minimum(np.searchsorted(ref_keys, keys), max(ref_keys.size - 1, 0))
    found = ref_keys[pos] == keys if ref_keys.size else np.zeros(keys.size, dtype=bool)
    return q_row[found], q_entry[found], ref_entries[pos[found]]


class _BatchScores(_Evidence):
    """CIDEr-D of every item of a batch with the batch's own IDF, from its n-gram tables."""

    def __init__(self, grams: BatchNgrams, sigma: float) -> None:
        self.grams, self.sigma = grams, sigma
        n = grams.n_items
        df = grams.document_frequency()
        log_documents = float(np.log(float(n)))
        distinct, df_index = np.unique(df, return_inverse=True)
        # the same scalar operations as DocumentFrequency.idf
        self.idf_of = np.array(
            [log_documents - float(np.log(max(1.0, float(d)))) for d in distinct.tolist()]
        )
        self.cand = _SideWeights.of(grams.candidates, df_index, self.idf_of)
        self.refs = _SideWeights.of(grams.references, df_index, self.idf_of)
        rows = grams.reference_item
        q_row, q_cand, q_ref = _matches(grams)
        w_c, w_r = self.cand.weights[q_cand], self.refs.weights[q_ref]
        terms = np.minimum(w_c, w_r) * w_r
        group = q_row * ORDER + (grams.candidates.orders[q_cand].astype(np.int64) - 1)
        val = _ordered_sums(terms, group, rows.size * ORDER).reshape(rows.size, ORDER)
        nh, nr = self.cand.norms[rows], self.refs.norms
        both = (nh != 0) & (nr != 0)
        val[both] /= (nh * nr)[both]
        delta = (_bigrams(grams.candidates)[rows] - _bigrams(grams.references)).astype(float)
        penalties = {d: _penalty(d, sigma) for d in set(delta.tolist())}
        val *= np.array([penalties[d] for d in delta.tolist()])[:, None]
        self.similarity = val
        self.cand_bigrams = _bigrams(grams.candidates).tolist()
        self.ref_bigrams = _bigrams(grams.references).tolist()
        self.total = _ordered_sums(val, rows, n)
        t = self.total
        score = (((t[:, 0] + t[:, 1]) + t[:, 2]) + t[:, 3]) / 4.0  # np.mean of 4, exactly
        score /= np.diff(grams.ref_offsets).astype(float)
        score *= 10.0
        self.scores = score

    def items(self) -> list[tuple[float, CiderDetails]]:
        n_refs = np.diff(self.grams.ref_offsets).tolist()
        out = []
        for i, (value, total, j) in enumerate(
            zip(self.scores.tolist(), self.total.tolist(), n_refs, strict=True)
        ):
            per_order = tuple(x * 10.0 / j for x in total)
            details = CiderDetails(self.grams.candidate_words[i], per_order, self.sigma, self, i)
            out.append((value, details))
        return out

    def _vector(
        self, table: NgramTable, side: _SideWeights, row: int, words: Tokens, length: int
    ) -> TfIdfVector:
        entries = table.entries(row)
        weights: list[dict[Ngram, float]] = [{} for _ in range(ORDER)]
        counted = ngram_counts(words, ORDER)  # the table's entries, in the same order
        for gram, w in zip(counted, side.weights[entries].tolist(), strict=True):
            weights[len(gram) - 1][gram] = w
        norms = tuple(side.norms[row].tolist())
        return TfIdfVector(tuple(weights), norms, length)

    def parts(self, item: int) -> tuple[TfIdfVector, tuple[CiderReference, ...]]:
        g = self.grams
        cand = self._vector(
            g.candidates, self.cand, item, g.candidate_words[item], self.cand_bigrams[item]
        )
        refs = []
        for j, words in enumerate(g.reference_words[item]):
            row = int(g.ref_offsets[item]) + j
            vec = self._vector(g.references, self.refs, row, words, self.ref_bigrams[row])
            refs.append(CiderReference(words, vec, tuple(self.similarity[row].tolist())))
        return cand, tuple(refs)


def cider_d_order_sums(
    candidates: Sequence[Tokens], references: Sequence[Sequence[Tokens]], sigma: float = 6.0
) -> np.ndarray:
    """Every item's four per-order similarities (1- to 4-word n-grams, length penalty
    included) summed over its references, with the items' own IDF (coco-caption's
    ``Cider``): what CIDEr-D averages over the orders, divides by the references and
    multiplies by 10. For scorers that combine the orders otherwise (pycocoevalcap's
    ``CiderScorer`` with ``n`` other than 4). An item without references is scored against
    one empty reference (its row is 0), which adds no document frequency.

    >>> sums = cider_d_order_sums([("a", "cat"), ("a", "dog")], [[("a", "cat")], [("the", "dog")]])
    >>> sums.round(6).tolist()  # cider_d_values: 10 * (1 + 1) / 4 = 5, 10 * 0.5 / 4 = 1.25
    [[1.0, 1.0, 0.0, 0.0], [0.5, 0.0, 0.0, 0.0]]
    """
    cands = [coco_words(c) for c in candidates]
    refs = [[coco_words(r) for r in group] or [()] for group in references]
    return _BatchScores(batch_ngrams(Batch.of_tokens(cands, refs)), sigma).total


def cider_d_values(
    candidates: Sequence[Tokens], references: Sequence[Sequence[Tokens]], sigma: float = 6.0
) -> np.ndarray:
    """Every item's CIDEr-D with the items' own IDF (coco-caption's ``Cider``), nothing else:
    the values of :class:`CiderD` (``idf="corpus"``) bit for bit, without evidence objects,
    in compiled loops (:mod:`.ngram_kernels`) for training loops that score a few hundred
    captions per call. The corpus value is ``np.mean`` of them, as coco-caption takes it.

    >>> cider_d_values([("a", "cat"), ("a", "dog")], [[("a", "cat")], [("the", "dog")]]).round(6)
    array([5.  , 1.25])
    """
    from capeval_core.metrics.ngram_kernels import cider_scores, count_table, document_frequency

    cands = [coco_words(c) for c in candidates]
    refs = [[coco_words(r) for r in group] for group in references]
    n = len(cands)
    table = count_table(cands + [r for group in refs for r in group])
    if table is None:  # too many distinct words to pack: the batch tables
        # an item without references (pycocoevalcap's CiderScorer allows one) is NaN, as in
        # the kernel: scored against one empty reference, which adds no document frequency
        empty = [i for i, group in enumerate(refs) if not group]
        batch = Batch.of_tokens(cands, [group or [()] for group in refs])
        scores = _BatchScores(batch_ngrams(batch), sigma).scores
        scores[empty] = np.nan
        return scores
    ref_start = np.full(n + 1, n, dtype=np.int64)
    np.cumsum([len(group) for group in refs], out=ref_start[1:])
    ref_start[1:] += n
    df = document_frequency(table.grams, table.starts, ref_start, n, table.n_grams)
    log_documents = float(np.log(float(n)))
    # each distinct df (0..n) once, found by a table rather than a sort
    present = np.zeros(n + 1, dtype=bool)
    present[df] = True
    distinct = np.flatnonzero(present)
    position = np.zeros(n + 1, dtype=np.int64)
    position[distinct] = np.arange(distinct.size)
    # the same scalar operations as DocumentFrequency.idf
    idf_of = np.array(
        [log_documents - float(np.log(max(1.0, float(d)))) for d in distinct.tolist()]
    )
    entry_df = position[df][table.grams]
    weights = table.counts.astype(float) * idf_of[entry_df]
    squares = _squares(table.counts, entry_df, idf_of)
    bigrams = np.maximum(table.lengths - 1, 0)
    top = int(bigrams.max()) if bigrams.size else 0
    penalty = np.array([_penalty(float(d), sigma) for d in range(-top, top + 1)])
    return cider_scores(
        table.grams, table.orders, table.starts, weights, squares, bigrams, ref_start, n,
        penalty, table.n_grams,
    )  # fmt: skip


# -- resampling -------------------------------------------------------------------------------
#
# A resample's CIDEr-D needs every n-gram's document frequency among the resample's references
# (``df_r(g)``: the summed weights of the items whose references have g) and, from it, each
# norm and cosine numerator as a sum of ``coefficient * idf_r(g) ** 2`` over n-grams. Most
# reference n-grams occur in the references of one item only; their df_r is that item's
# weight, so their terms are summed into one coefficient per row and item beforehand. The
# others' df_r are one sparse product of the weights with the (n-gram x item) incidence.
# float32: resampled values are compared with a tolerance, not bit for bit, and the sparse
# products and look-ups run twice as fast.


@dataclass(frozen=True, eq=False)
class _ReferenceSide:
    """What resamples of every system scored against the same references share.

    The squared IDF of a resample has one row per shared reference n-gram (in the references
    of two or more items) and then one per item (the n-grams of that item's references
    only: their df is the item's weight).
    """

    shared: np.ndarray  # reference n-gram id -> its row among the shared n-grams, or -1
    column: np.ndarray  # reference n-gram id -> its row of the squared IDF
    incidence: Any  # CSR (shared n-grams x items)
    squares: Any  # CSR (reference rows * ORDER x IDF rows): tf ** 2
    rows: np.ndarray  # the item of every reference row


@functools.lru_cache(maxsize=4)
def _reference_side(grams: BatchNgrams) -> _ReferenceSide:
    from scipy import sparse

    refs = grams.references
    keys, _ = grams.item_grams
    item, gram = keys // 2**31, keys % 2**31
    df = np.bincount(gram, minlength=refs.n_grams)
    shared_ids = np.flatnonzero(df >= 2)
    shared = np.full(refs.n_grams, -1, dtype=np.int64)
    shared[shared_ids] = np.arange(shared_ids.size)
    column = shared.copy()
    single = df[gram] == 1
    column[gram[single]] = shared_ids.size + item[single]
    many = ~single
    incidence = sparse.csr_matrix(
        (np.ones(int(many.sum()), dtype=np.float32), (shared[gram[many]], item[many])),
        shape=(shared_ids.size, grams.n_items),
    )
    row = refs.entry_sentence * ORDER + (refs.orders.astype(np.int64) - 1)
    squares = sparse.csr_matrix(
        (refs.counts.astype(np.float32) ** 2, (row, column[refs.grams])),
        shape=(refs.n_sentences * ORDER, shared_ids.size + grams.n_items),
    )
    return _ReferenceSide(shared, column, incidence, squares, grams.reference_item)


def _idf_squares(counts: np.ndarray, documents: np.ndarray) -> np.ndarray:
    """``(log N - log max(1, df)) ** 2`` (float32) for df ``counts`` (one column per resample,
    whose N is in ``documents``); a table look-up when every N is the same whole number (a
    bootstrap's), df being whole numbers from 0 to N."""
    if counts.size and np.all(documents == documents[0]) and documents[0] == int(documents[0]):
        top = int(documents[0])
        with np.errstate(divide="ignore"):
            k = np.maximum(np.arange(top + 1, dtype=np.float64), 1.0)
            table = ((np.log(documents[0]) - np.log(k)) ** 2).astype(np.float32)
        return table[counts.astype(np.int32)]
    with np.errstate(divide="ignore"):
        idf = np.log(documents)[None, :] - np.log(np.maximum(counts, 1.0, dtype=np.float64))
    return (idf * idf).astype(np.float32)


@dataclass(frozen=True, eq=False)
class CiderStatistics(ItemStatistics):
    """CIDEr-D with the scored set's IDF: a resample recomputes every item's score with the
    document frequencies of the resample's own references (as coco-caption's CIDEr of the
    resampled list: a twice-drawn image's references count twice, and N is the resample's
    length).

    Tf-idf weights are tf times idf, so ``min(tf_c idf, tf_r idf) tf_r idf`` is
    ``min(tf_c, tf_r) tf_r idf ** 2``: every norm and numerator is a fixed sparse matrix
    times the squared IDF. Approximate randomization swaps candidates only, so the IDF, and
    each item's score, stay.
    """

    keys: tuple[str, ...]
    values: np.ndarray
    batch: Batch = field(repr=False)
    sigma: float = 6.0

    def __len__(self) -> int:
        return self.values.size

    @functools.cached_property
    def grams(self) -> BatchNgrams:
        """The batch's n-gram tables, built when a resample first needs them."""
        return batch_ngrams(self.batch)

    def point(self) -> dict[str, float]:
        return {self.keys[0]: float(np.mean(self.values))}

    def additive(self) -> MeanStatistics:
        """Swapping candidates keeps the references, so the IDF and each item's score: the
        randomization test swaps item values, as for a mean."""
        return MeanStatistics.from_values(self.keys, {self.keys[0]: self.values})

    def swap(self, other: ItemStatistics, take: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        if not isinstance(other, CiderStatistics) or len(other) != len(self):
            raise ValueError("CIDEr-D items can only be swapped with CIDEr-D items")
        return self.additive().swap(other.additive(), take)

    @functools.cached_property
    def _system(self) -> _SystemSide:
        from scipy import sparse

        g = self.grams
        side = _reference_side(g)
        cand = g.candidates
        n_shared = side.incidence.shape[0]
        n_rows = g.n_items * ORDER
        row = cand.entry_sentence * ORDER + (cand.orders.astype(np.int64) - 1)
        sq = cand.counts.astype(np.float32) ** 2
        in_refs = cand.grams < side.shared.size
        # a column per shared n-gram, then one per item (n-grams of that item's references)
        col = np.full(cand.grams.size, -1, dtype=np.int64)
        col[in_refs] = side.column[cand.grams[in_refs]]
        squares = sparse.csr_matrix(
            (sq[col >= 0], (row[col >= 0], col[col >= 0])), shape=(n_rows, n_shared + g.n_items)
        )
        # an n-gram in no reference has df 0 in every resample: idf = log N
        nowhere = np.bincount(row[~in_refs], weights=sq[~in_refs], minlength=n_rows)
        q_row, q_cand, q_ref = _matches(g)
        tf_c = cand.counts[q_cand].astype(np.float32)
        tf_r = g.references.counts[q_ref].astype(np.float32)
        num_row = q_row * ORDER + (cand.orders[q_cand].astype(np.int64) - 1)
        # only (reference, order) pairs with a match can have a non-zero cosine
        rows, num_row = np.unique(num_row, return_inverse=True)
        numerators = sparse.csr_matrix(
            (np.minimum(tf_c, tf_r) * tf_r, (num_row, side.column[cand.grams[q_cand]])),
            shape=(rows.size, n_shared + g.n_items),
        )
        reference = rows // ORDER
        item = g.reference_item[reference]
        delta = (_bigrams(cand)[item] - _bigrams(g.references)[reference]).astype(float)
        penalty = np.exp(-(delta**2) / (2 * self.sigma**2)).astype(np.float32)
        per_item = sparse.csr_matrix(
            (penalty, (item, np.arange(rows.size))), shape=(g.n_items, rows.size)
        )
        return _SystemSide(
            squares, nowhere.astype(np.float32), numerators, rows, item * ORDER + rows % ORDER,
            per_item,
        )  # fmt: skip

    def resample(self, weights: np.ndarray, memo: dict[Any, Any] | None = None) -> np.ndarray:
        weights = np.asarray(weights, dtype=float)
        memo = {} if memo is None else memo
        return np.concatenate(
            [
                self._resample_chunk(weights[start : start + _CHUNK], start, memo)
                for start in range(0, weights.shape[0], _CHUNK)
            ]
        )[:, None]

    def _resample_chunk(self, weights: np.ndarray, start: int, memo: dict[Any, Any]) -> np.ndarray:
        g = self.grams
        side = _reference_side(g)
        documents = weights.sum(axis=1)
        # the caller shares ``memo`` between systems resampled with the same weights only
        key = ("cider_d", id(side), start, weights.shape)
        if key not in memo:
            w32 = weights.T.astype(np.float32)  # (items, R)
            idf2 = np.vstack(
                [
                    _idf_squares(side.incidence @ w32, documents),
                    _idf_squares(w32, documents),  # an item's own n-grams: df = its weight
                ]
            )
            memo[key] = (idf2, np.sqrt(side.squares @ idf2))
        idf2, norms_r = memo[key]
        system = self._system
        log_n2 = (np.log(documents) ** 2).astype(np.float32)
        norms_c = np.sqrt(system.squares @ idf2 + system.nowhere[:, None] * log_n2[None, :])
        num = system.numerators @ idf2
        denom = norms_c[system.candidate_rows] * norms_r[system.rows]
        # a match with a non-zero idf makes both norms non-zero
        sim = np.divide(num, denom, out=np.zeros_like(num), where=num > 0)
        per_item = (system.per_item @ sim).astype(np.float64)  # penalty-weighted sums
        score = per_item * (10.0 / ORDER) / np.diff(g.ref_offsets)[:, None]
        return np.einsum("ri,ir->r", weights, score) / documents


@dataclass(frozen=True, eq=False)
class _SystemSide:
    """One system's sparse coefficients over the columns of the squared IDF (shared
    reference n-grams, then one per item for n-grams of one item's references)."""

    squares: Any  # CSR (items * ORDER x columns): candidate tf ** 2
    nowhere: np.ndarray  # per item * ORDER: tf ** 2 summed over n-grams in no reference
    numerators: Any  # CSR (matched rows x columns): min(tf_c, tf_r) * tf_r
    rows: np.ndarray  # each matched row's reference row * ORDER + order - 1
    candidate_rows: np.ndarray  # and its candidate's item * ORDER + order - 1
    per_item: Any  # CSR (items x matched rows): the length penalty, summing rows per item


#: resamples per CIDEr-D chunk: (reference rows x 4 x chunk) float32 arrays stay small
_CHUNK = 64
