"""CIDEr-D (Vedantam et al. 2015) exactly as coco-caption's ``Cider`` computes it.

Spec: metric-spec §4. The IDF comes from the scored set by default (so an image's score
depends on the other images scored with it) or from the COCO val2014 references
(``idf="coco-val2014"``), which makes single images and small batches meaningful.

Float operations follow the reference's order (``numpy.log`` for the IDF, ``pow`` for the
squares, ``e ** x`` for the length penalty, numpy means) so results agree bit for bit.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from typing import Any

import numpy as np

from capeval_core.metrics.base import Batch, Metric, MetricConfig
from capeval_core.metrics.ngrams import Ngram, coco_words, ngram_counts
from capeval_core.options import check_choice, check_number
from capeval_core.tokenize import Tokens

ORDER = 4
IDF_SOURCES = ("corpus", "coco-val2014")


@dataclass(frozen=True, kw_only=True)
class CiderConfig(MetricConfig):
    """``idf``: "corpus" (the scored set, as coco-caption) or "coco-val2014"."""

    sigma: float = 6.0
    idf: str = "corpus"

    def __post_init__(self) -> None:
        check_choice("idf", self.idf, IDF_SOURCES)
        # the length penalty divides by 2 sigma^2, which must stay a positive finite float
        check_number("sigma", self.sigma, at_least=1e-150, at_most=1e150)


@dataclass(frozen=True)
class DocumentFrequency:
    """Per n-gram document frequencies and the log of the number of documents (images)."""

    df: dict[Ngram, float]
    log_documents: float
    documents: int
    source: str

    def __post_init__(self) -> None:
        # log(df) takes few distinct values: computing each once keeps numpy's exact log cheap
        object.__setattr__(self, "_log_cache", {})
        object.__setattr__(self, "_idf_cache", {})

    def idf(self, gram: Ngram) -> float:
        """``log(N) - log(max(1, df))``: 0 for an n-gram in every image, log N for an unseen one."""
        idf_cache: dict[Ngram, float] = self._idf_cache  # type: ignore[attr-defined]
        value = idf_cache.get(gram)
        if value is None:
            d = self.df.get(gram, 0.0)
            log_cache: dict[float, float] = self._log_cache  # type: ignore[attr-defined]
            log_df = log_cache.get(d)
            if log_df is None:
                log_df = log_cache[d] = float(np.log(max(1.0, d)))
            value = idf_cache[gram] = self.log_documents - log_df
        return value


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


def similarity(cand: TfIdfVector, ref: TfIdfVector, sigma: float) -> np.ndarray:
    """Per-order clipped cosine of two tf-idf vectors times the Gaussian length penalty."""
    delta = float(cand.length - ref.length)
    penalty = math.e ** (-(delta**2) / (2 * sigma**2))
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


@dataclass(frozen=True)
class CiderDetails:
    """Evidence for one item: tf-idf weights, per-order cosines (with penalty), the score."""

    candidate: Tokens
    vector: TfIdfVector
    references: tuple[CiderReference, ...]
    per_order: tuple[float, ...]
    sigma: float

    def length_penalty(self, reference: int) -> float:
        """The Gaussian length penalty against one reference."""
        delta = float(self.vector.length - self.references[reference].vector.length)
        return math.e ** (-(delta**2) / (2 * self.sigma**2))


@dataclass(frozen=True)
class CiderCorpusDetails:
    """Where the IDF came from and how many documents it counts."""

    idf_source: str
    documents: int
    log_documents: float


def corpus_document_frequency(
    reference_tokens: tuple[tuple[Tokens, ...], ...],
) -> DocumentFrequency:
    """Document frequency over the scored set: an image counts once per n-gram."""
    return _corpus_statistics(reference_tokens)[0]


def _corpus_statistics(
    reference_tokens: tuple[tuple[Tokens, ...], ...],
) -> tuple[DocumentFrequency, dict[Tokens, Counter[Ngram]]]:
    """The scored set's document frequencies, plus each reference's n-gram counts for reuse."""
    df: Counter[Ngram] = Counter()
    counts: dict[Tokens, Counter[Ngram]] = {}
    for refs in reference_tokens:
        seen: set[Ngram] = set()
        for ref in map(coco_words, refs):
            if ref not in counts:
                counts[ref] = ngram_counts(ref, ORDER)
            seen.update(counts[ref])
        df.update(seen)
    n = len(reference_tokens)
    table = DocumentFrequency(
        {g: float(c) for g, c in df.items()}, float(np.log(float(n))), n, "corpus"
    )
    return table, counts


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
    Config = CiderConfig

    def resources(self) -> dict[str, str]:
        if self.config.idf == "coco-val2014":
            from capeval_core.idf import COCO_VAL_IDF_VERSION

            return {"idf-source": COCO_VAL_IDF_VERSION}
        return {}

    def segments_independent(self) -> bool:
        return self.config.idf != "corpus"  # the scored set's own document frequencies

    def prepare(self, batch: Batch) -> _Vectors:
        if self.config.idf == "coco-val2014":
            from capeval_core.idf import coco_val_document_frequency

            return _Vectors(coco_val_document_frequency(self.tokenizer))
        return _Vectors(*_corpus_statistics(batch.reference_tokens))

    def corpus_warnings(self, batch: Batch, prepared: _Vectors) -> list[str]:
        if prepared.df.source == "corpus" and len(batch) == 1:
            return [
                "CIDEr-D takes its IDF from the scored set, and this set is a single image: "
                "every n-gram then occurs in 1 of 1 images, so its idf is log 1 - log 1 = 0, "
                "every tf-idf weight is 0 and so is the score. Score more images together "
                "or use idf='coco-val2014'."
            ]
        return []

    def segment(self, candidate: Tokens, references: tuple[Tokens, ...], prepared: _Vectors):
        sigma = self.config.sigma
        candidate = coco_words(candidate)
        cand = tfidf(ngram_counts(candidate, ORDER), prepared.df)
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
        return float(score), CiderDetails(candidate, cand, tuple(refs), per_order, sigma)

    def aggregate(self, segments, prepared: _Vectors) -> tuple[dict[str, float], Any]:
        corpus, _ = super().aggregate(segments, prepared)
        df = prepared.df
        return corpus, CiderCorpusDetails(df.source, df.documents, df.log_documents)
