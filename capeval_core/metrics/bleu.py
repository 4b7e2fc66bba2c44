"""BLEU-1..4 with the closest reference length, exactly as coco-caption computes it.

Spec: metric-spec §2 (pycocoevalcap 1.2 ``Bleu(4)``). One metric object reports all four
orders because they share their counts.
"""

from __future__ import annotations

import functools
import itertools
import math
import operator
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from capeval_core.metrics.base import Batch, Metric, MetricConfig
from capeval_core.metrics.ngram_index import batch_ngrams
from capeval_core.metrics.ngrams import Ngram, coco_words, ngram_counts
from capeval_core.metrics.statistics import SummedStatistics
from capeval_core.options import check_choice
from capeval_core.results import MetricResult, SegmentScore
from capeval_core.tokenize import Tokens

# coco-caption's smoothing constants: they keep per-image scores finite and non-zero.
TINY = 1e-15
SMALL = 1e-9
MAX_ORDER = 4


@dataclass(frozen=True, kw_only=True)
class BleuConfig(MetricConfig):
    """``effective_length``: how the reference length is chosen (coco-caption: closest)."""

    effective_length: str = "closest"

    def __post_init__(self) -> None:
        check_choice("effective_length", self.effective_length, ("closest", "shortest", "average"))


@dataclass(frozen=True)
class NgramCount:
    """A candidate n-gram, how often it occurs, the most any one reference has, and the clip."""

    ngram: Ngram
    count: int
    max_ref_count: int

    @property
    def clipped(self) -> int:
        return min(self.count, self.max_ref_count)


@dataclass(frozen=True)
class BleuDetails:
    """Evidence for one item: clipped counts per order, lengths and brevity penalty.

    ``candidate`` and ``references`` are the words BLEU counts. :attr:`counts` holds the
    candidate's n-gram counts and :attr:`max_ref_counts` the most any one reference has of
    each of them (both built when first asked for); :attr:`ngrams` presents them as
    :class:`NgramCount` rows.
    """

    candidate: Tokens
    references: tuple[Tokens, ...]
    correct: tuple[int, ...]
    guess: tuple[int, ...]
    candidate_length: int
    reference_length: float
    brevity_penalty: float

    @functools.cached_property
    def counts(self) -> Counter[Ngram]:
        """The candidate's n-gram counts, orders 1..4, in counting order."""
        return ngram_counts(self.candidate, MAX_ORDER)

    @functools.cached_property
    def max_ref_counts(self) -> dict[Ngram, int]:
        """For each candidate n-gram, the most times any one reference has it."""
        return _max_ref_counts(self.counts, self.references)

    @functools.cached_property
    def ngrams(self) -> tuple[NgramCount, ...]:
        """Every candidate n-gram (orders 1..4, first occurrence order) with its clip."""
        return tuple(NgramCount(g, c, self.max_ref_counts[g]) for g, c in self.counts.items())

    @property
    def precisions(self) -> tuple[float, ...]:
        """Modified n-gram precision per order (NaN where the candidate has no n-gram)."""
        return tuple(
            c / g if g else math.nan for c, g in zip(self.correct, self.guess, strict=True)
        )

    def matched_spans(self, order: int) -> list[tuple[int, int]]:
        """Candidate token spans ``(start, end)`` of matched ``order``-grams, clipped.

        The first ``clipped`` occurrences of each n-gram count as matched, so a repeated word
        beyond what any reference has stays unhighlighted.
        """
        budget = {g.ngram: g.clipped for g in self.ngrams if len(g.ngram) == order}
        spans = []
        for i in range(len(self.candidate) - order + 1):
            gram = self.candidate[i : i + order]
            if budget.get(gram, 0) > 0:
                budget[gram] -= 1
                spans.append((i, i + order))
        return spans


@dataclass(frozen=True)
class BleuCorpusDetails:
    """Pooled statistics behind the corpus BLEU (not the mean of per-item scores)."""

    correct: tuple[int, ...]
    guess: tuple[int, ...]
    candidate_length: int
    reference_length: float
    brevity_penalty: float


def _max_ref_counts(
    counts: Mapping[Ngram, int], references: tuple[Tokens, ...]
) -> dict[Ngram, int]:
    max_ref: dict[Ngram, int] = {}
    for ref in references:
        for gram, count in ngram_counts(ref, MAX_ORDER).items():
            if count > max_ref.get(gram, 0):
                max_ref[gram] = count
    return {gram: max_ref.get(gram, 0) for gram in counts}


def _effective_length(lengths: list[int], cand_len: int, mode: str) -> float:
    if mode == "closest":
        # ties go to the shorter reference, as min over (distance, length) pairs
        return min((abs(r - cand_len), r) for r in lengths)[1]
    if mode == "shortest":
        return min(lengths)
    return float(sum(lengths)) / len(lengths)


def _bleu_scores(
    correct: list[int] | tuple[int, ...], guess: list[int] | tuple[int, ...], ratio: float
) -> tuple[list[float], float]:
    """BLEU-1..n and the brevity penalty, in coco-caption's order of float operations."""
    scores = []
    running = 1.0
    for c, g in zip(correct, guess, strict=True):
        running *= (float(c) + TINY) / (float(g) + SMALL)
        scores.append(running ** (1.0 / (len(scores) + 1)))
    penalty = 1.0
    if ratio < 1:
        penalty = math.exp(1 - 1 / ratio)
        scores = [s * penalty for s in scores]
    return scores, penalty


class Bleu(Metric):
    """BLEU-1..4 (Papineni et al. 2002) as in pycocoevalcap 1.2.

    >>> r = Bleu(tokenizer="whitespace").score(["a cat sits on a mat"], [["a cat is on a mat"]])
    >>> round(r.corpus["bleu_1"], 6), round(r.corpus["bleu_2"], 6)
    (0.833333, 0.707107)
    """

    key = "bleu"
    name = "BLEU"
    reports = ("bleu_1", "bleu_2", "bleu_3", "bleu_4")
    primary = "bleu_4"
    measures = (
        "the share of the candidate's word sequences of 1 to n words (BLEU-n) that a "
        "reference also has (clipped precisions, their geometric mean, a short-candidate penalty)"
    )
    Config = BleuConfig

    @classmethod
    def label(cls, key: str) -> str:
        return f"BLEU-{key.rsplit('_', 1)[-1]}"

    @classmethod
    def measured(cls, key: str) -> str:
        n = key.rsplit("_", 1)[-1]
        if not n.isdigit():
            return cls.measures
        if n == "1":
            return (
                "the share of the candidate's words that a reference also has (clipped "
                "precision, a short-candidate penalty)"
            )
        return (
            f"the share of the candidate's word sequences of 1 to {n} words that a reference "
            "also has (clipped precisions, their geometric mean, a short-candidate penalty)"
        )

    def segment(self, candidate: Tokens, references: tuple[Tokens, ...], prepared: Any):
        n = MAX_ORDER
        candidate = coco_words(candidate)
        references = tuple(coco_words(r) for r in references)
        counts: Counter[Ngram] = ngram_counts(candidate, n)
        clip_ref = _max_ref_counts(counts, references)
        correct = [0] * n
        for gram, count in counts.items():
            correct[len(gram) - 1] += min(clip_ref[gram], count)
        cand_len = len(candidate)
        guess = [max(0, cand_len - k + 1) for k in range(1, n + 1)]
        ref_len = _effective_length(
            [len(r) for r in references], cand_len, self.config.effective_length
        )
        return self._item(candidate, references, correct, guess, cand_len, ref_len)

    def _item(
        self,
        candidate: Tokens,
        references: tuple[Tokens, ...],
        correct: Sequence[int],
        guess: Sequence[int],
        cand_len: int,
        ref_len: float,
    ) -> tuple[dict[str, float], BleuDetails]:
        ratio = (cand_len + TINY) / (ref_len + SMALL)
        scores, penalty = _bleu_scores(correct, guess, ratio)
        details = BleuDetails(
            candidate, references, tuple(correct), tuple(guess), cand_len, ref_len, penalty
        )
        return dict(zip(self.reports, scores, strict=True)), details

    def score_items(
        self, batch: Batch, prepared: Any
    ) -> list[tuple[dict[str, float], BleuDetails]]:
        """The whole batch at once: clipped counts from the batch's integer n-gram tables,
        then the same float operations as :meth:`segment`, item by item."""
        grams = batch_ngrams(batch)
        correct = grams.clipped_counts().tolist()
        cand_lens = grams.candidates.lengths
        lengths = grams.references.lengths
        offsets = grams.ref_offsets
        mode = self.config.effective_length
        if mode == "closest":
            # min over (distance, length) pairs: ties go to the shorter reference
            item_len = np.repeat(cand_lens, np.diff(offsets))
            key = np.abs(lengths - item_len) * _LENGTH_KEY + lengths
            ref_lens = (np.minimum.reduceat(key, offsets[:-1]) % _LENGTH_KEY).tolist()
        elif mode == "shortest":
            ref_lens = np.minimum.reduceat(lengths, offsets[:-1]).tolist()
        else:
            sums = np.add.reduceat(lengths, offsets[:-1]).tolist()
            ref_lens = [float(t) / int(c) for t, c in zip(sums, np.diff(offsets), strict=True)]
        guesses, values = _item_values(correct, cand_lens, ref_lens)
        out = []
        for i, cand_len in enumerate(cand_lens.tolist()):
            scores, penalty = values[i]
            details = BleuDetails(
                grams.candidate_words[i],
                grams.reference_words[i],
                tuple(correct[i]),
                tuple(guesses[i]),
                cand_len,
                ref_lens[i],
                penalty,
            )
            out.append((dict(zip(self.reports, scores, strict=True)), details))
        return out

    def aggregate(self, segments: list[SegmentScore], prepared: Any):
        return _pooled([s.details for s in segments], self.reports)

    def sufficient_statistics(self, result: MetricResult) -> dict[str, np.ndarray]:
        """Per item: clipped matches and n-grams per order, candidate and reference length."""
        rows = [
            (*d.correct, *d.guess, d.candidate_length, d.reference_length)
            for d in (s.details for s in result.segments)
        ]
        return {"bleu": np.array(rows, dtype=float).reshape(len(rows), 2 * MAX_ORDER + 2)}

    def item_statistics(self, values, statistics, batch) -> BleuStatistics:
        return BleuStatistics(self.reports, np.asarray(statistics["bleu"], dtype=float))


#: reference lengths below this (about a million words) sort with their distance in one int
_LENGTH_KEY = 2**20


def _item_values(
    correct: list[list[int]], cand_lens: np.ndarray, ref_lens: Sequence[float]
) -> tuple[list[list[int]], list[tuple[list[float], float]]]:
    """Every item's n-gram counts per order and its BLEU-1..4 and brevity penalty:
    :func:`_bleu_scores` for all items at once. The element-wise products and quotients are
    the same IEEE operations side by side; the roots and exp are Python's (libm's), as
    coco-caption's."""
    guess = np.maximum(cand_lens[:, None] - np.arange(MAX_ORDER)[None, :], 0)
    factors = (np.array(correct, dtype=float).reshape(-1, MAX_ORDER) + TINY) / (guess + SMALL)
    running = np.cumprod(factors, axis=1)  # 1.0 * f1, then * f2, ...: sequential
    roots = [[r ** (1.0 / (k + 1)) for r in running[:, k].tolist()] for k in range(MAX_ORDER)]
    ratios = ((cand_lens + TINY) / (np.array(ref_lens, dtype=float) + SMALL)).tolist()
    values = []
    for i in range(len(ratios)):
        scores = [roots[k][i] for k in range(MAX_ORDER)]
        penalty = 1.0
        if ratios[i] < 1:
            penalty = math.exp(1 - 1 / ratios[i])
            scores = [x * penalty for x in scores]
        values.append((scores, penalty))
    return guess.tolist(), values


@dataclass(frozen=True)
class BleuValues:
    """What :func:`bleu_values` gives: corpus BLEU-1..4, each item's, the pooled counts and
    each item's counts (``counts[i]``: clipped matches and n-grams per order, candidate
    length, effective reference length, every reference's length)."""

    corpus: list[float]
    items: list[list[float]]
    totals: BleuCorpusDetails
    counts: list[tuple[list[int], list[int], int, float, list[int]]]


def bleu_values(
    candidates: Sequence[Tokens],
    references: Sequence[Sequence[Tokens]],
    effective_length: str = "closest",
) -> BleuValues:
    """BLEU-1..4 of the corpus and of every item, with the closest reference length, as
    coco-caption's ``Bleu(4)``: the values of :class:`Bleu` bit for bit, without evidence
    objects, the counts in compiled loops (:mod:`.ngram_kernels`) for training loops that
    score a few hundred captions per call. ``items[k][i]`` is item ``i``'s BLEU-``k + 1``.
    ``effective_length`` as :class:`BleuConfig`'s (coco-caption's ``BleuScorer`` options).

    >>> v = bleu_values([("a", "cat", "sits")], [[("a", "cat", "sits", "down")]])
    >>> [round(x, 4) for x in v.corpus], v.totals.candidate_length
    ([0.7165, 0.7165, 0.7165, 0.0227], 3)
    """
    from capeval_core.metrics.ngram_kernels import bleu_counts, count_table

    for i, group in enumerate(references):
        if not len(group):  # coco-caption's min (or mean) over no length raises these types too
            why = f"item {i} has no reference: its {effective_length} reference length is undefined"
            raise ZeroDivisionError(why) if effective_length == "average" else ValueError(why)
    cands = [coco_words(c) for c in candidates]
    refs = [[coco_words(r) for r in group] for group in references]
    n = len(cands)
    table = count_table(cands + [r for group in refs for r in group])
    if table is None:  # too many distinct words to pack: the batch tables
        batch = Batch.of_tokens(cands, refs)
        bleu = Bleu(tokenizer="whitespace", effective_length=effective_length)
        result = bleu.score_batch(batch, warn=False)
        items = [result.segment_values(k) for k in Bleu.reports]
        counts = [
            (
                list(d.correct),
                list(d.guess),
                d.candidate_length,
                d.reference_length,
                [len(r) for r in d.references],
            )
            for d in (seg.details for seg in result.segments)
        ]
        return BleuValues([result.corpus[k] for k in Bleu.reports], items, result.details, counts)
    ref_start = np.full(n + 1, n, dtype=np.int64)
    np.cumsum([len(group) for group in refs], out=ref_start[1:])
    ref_start[1:] += n
    correct_arr, ref_len_arr = bleu_counts(
        table.grams, table.counts, table.orders, table.starts, table.lengths, ref_start, n,
        table.n_grams,
    )  # fmt: skip
    correct = correct_arr.tolist()
    cand_lens = table.lengths[:n]
    lengths = table.lengths.tolist()
    all_lens = [lengths[a:b] for a, b in itertools.pairwise(ref_start.tolist())]
    ref_lens = (
        ref_len_arr.tolist()
        if effective_length == "closest"
        else [
            _effective_length(group, c, effective_length)
            for group, c in zip(all_lens, cand_lens.tolist(), strict=True)
        ]
    )
    guesses, values = _item_values(correct, cand_lens, ref_lens)
    items = [[v[0][k] for v in values] for k in range(MAX_ORDER)]
    total = _Pooled(
        tuple(int(x) for x in correct_arr.sum(axis=0).tolist()) if n else (0,) * MAX_ORDER,
        tuple(int(x) for x in np.sum(guesses, axis=0).tolist()) if n else (0,) * MAX_ORDER,
        int(cand_lens.sum()),
        sum(ref_lens),
    )
    corpus, totals = _pooled([total], Bleu.reports)
    counts = list(zip(correct, guesses, cand_lens.tolist(), ref_lens, all_lens, strict=True))
    return BleuValues([corpus[k] for k in Bleu.reports], items, totals, counts)


def _pooled(details: Sequence[Any], reports: tuple[str, ...]):
    """Corpus BLEU from pooled statistics, in coco-caption's order of operations."""
    n = MAX_ORDER
    correct = [0] * n
    guess = [0] * n
    cand_len = 0
    ref_len: float = 0
    for d in details:
        cand_len += d.candidate_length
        ref_len += d.reference_length
        for k in range(n):
            correct[k] += d.correct[k]
            guess[k] += d.guess[k]
    ratio = (cand_len + TINY) / (ref_len + SMALL)
    scores, penalty = _bleu_scores(correct, guess, ratio)
    corpus = BleuCorpusDetails(tuple(correct), tuple(guess), cand_len, ref_len, penalty)
    return dict(zip(reports, scores, strict=True)), corpus


@dataclass(frozen=True)
class _Pooled:
    """One item's statistics read back from a row of :class:`BleuStatistics`."""

    correct: tuple[int, ...]
    guess: tuple[int, ...]
    candidate_length: int
    reference_length: float


@dataclass(frozen=True, eq=False)
class BleuStatistics(SummedStatistics):
    """Per item: clipped matches (4), candidate n-grams (4), candidate and reference length.

    A resample's BLEU pools its items' statistics, as the corpus BLEU does.
    """

    def point(self) -> dict[str, float]:
        # the sums _pooled takes: integers (exact in any order), and the reference lengths
        # one by one in item order (they are floats with effective_length="average")
        ints = self.matrix[:, : 2 * MAX_ORDER + 1].astype(np.int64).sum(axis=0).tolist()
        ref_len = functools.reduce(operator.add, self.matrix[:, -1].tolist(), 0)
        total = _Pooled(tuple(ints[:MAX_ORDER]), tuple(ints[MAX_ORDER:-1]), ints[-1], ref_len)
        return _pooled([total], self.keys)[0]

    def finish(self, sums: np.ndarray, total: np.ndarray) -> np.ndarray:
        correct, guess = sums[:, :MAX_ORDER], sums[:, MAX_ORDER : 2 * MAX_ORDER]
        ratio = (sums[:, -2] + TINY) / (sums[:, -1] + SMALL)
        running = np.ones(sums.shape[0])
        out = np.empty((sums.shape[0], MAX_ORDER))
        for k in range(MAX_ORDER):
            running = running * ((correct[:, k] + TINY) / (guess[:, k] + SMALL))
            out[:, k] = running ** (1.0 / (k + 1))
        penalty = np.where(ratio < 1, np.exp(1 - 1 / ratio), 1.0)
        return out * penalty[:, None]
