"""BLEU-1..4 with the closest reference length, exactly as coco-caption computes it.

Spec: metric-spec §2 (pycocoevalcap 1.2 ``Bleu(4)``). One metric object reports all four
orders because they share their counts.
"""

from __future__ import annotations

import functools
import math
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass

from capeval_core.metrics.base import Metric, MetricConfig
from capeval_core.metrics.ngrams import Ngram, coco_words, ngram_counts
from capeval_core.options import check_choice
from capeval_core.results import SegmentScore
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

    ``counts`` holds the candidate's n-gram counts and ``max_ref_counts`` the most any one
    reference has of each of them; :attr:`ngrams` presents them as :class:`NgramCount` rows.
    """

    candidate: Tokens
    references: tuple[Tokens, ...]
    counts: Mapping[Ngram, int]
    max_ref_counts: Mapping[Ngram, int]
    correct: tuple[int, ...]
    guess: tuple[int, ...]
    candidate_length: int
    reference_length: float
    brevity_penalty: float

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
    Config = BleuConfig

    @classmethod
    def label(cls, key: str) -> str:
        return f"BLEU-{key.rsplit('_', 1)[-1]}"

    def segment(self, candidate: Tokens, references: tuple[Tokens, ...], prepared: None):
        n = MAX_ORDER
        candidate = coco_words(candidate)
        references = tuple(coco_words(r) for r in references)
        max_ref: dict[Ngram, int] = {}
        for ref in references:
            for gram, count in ngram_counts(ref, n).items():
                if count > max_ref.get(gram, 0):
                    max_ref[gram] = count
        counts: Counter[Ngram] = ngram_counts(candidate, n)
        correct = [0] * n
        clip_ref = {}
        for gram, count in counts.items():
            ref_count = clip_ref[gram] = max_ref.get(gram, 0)
            correct[len(gram) - 1] += min(ref_count, count)
        cand_len = len(candidate)
        guess = [max(0, cand_len - k + 1) for k in range(1, n + 1)]
        ref_len = _effective_length(
            [len(r) for r in references], cand_len, self.config.effective_length
        )
        ratio = (cand_len + TINY) / (ref_len + SMALL)
        scores, penalty = _bleu_scores(correct, guess, ratio)
        details = BleuDetails(
            candidate,
            references,
            counts,
            clip_ref,
            tuple(correct),
            tuple(guess),
            cand_len,
            ref_len,
            penalty,
        )
        return dict(zip(self.reports, scores, strict=True)), details

    def aggregate(self, segments: list[SegmentScore], prepared: None):
        n = MAX_ORDER
        correct = [0] * n
        guess = [0] * n
        cand_len = 0
        ref_len: float = 0
        for seg in segments:
            d: BleuDetails = seg.details
            cand_len += d.candidate_length
            ref_len += d.reference_length
            for k in range(n):
                correct[k] += d.correct[k]
                guess[k] += d.guess[k]
        ratio = (cand_len + TINY) / (ref_len + SMALL)
        scores, penalty = _bleu_scores(correct, guess, ratio)
        details = BleuCorpusDetails(tuple(correct), tuple(guess), cand_len, ref_len, penalty)
        return dict(zip(self.reports, scores, strict=True)), details
