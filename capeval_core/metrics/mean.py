"""MEAN: cosine similarity of mean word vectors, averaged over the references.

Spec: product brief, metric table ("seed metric MEAN: cosine of mean word vectors (stop words
removed), averaged over refs", from "Intrinsic Image Captioning Evaluation"). It shares WMD's
preprocessing (metric-spec §7 steps 1-2: the coco-caption stop-word list, OOV words dropped,
case-sensitive lookup) so the two embedding metrics see the same content words.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from capeval_core.embeddings import Embeddings, cosine
from capeval_core.metrics.base import Batch, MetricConfig
from capeval_core.metrics.embedding_base import EmbeddingMetric
from capeval_core.stopwords import wmd_stopwords
from capeval_core.tokenize import Tokens

#: how many nearest vocabulary words the details list for each mean vector
NEAREST_TOPN = 5


@dataclass(frozen=True, kw_only=True)
class MeanConfig(MetricConfig):
    """``normalize``: average unit-normalised word vectors instead of the raw ones."""

    normalize: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.normalize, bool):
            raise ValueError(f"`normalize` must be True or False (got {self.normalize!r})")


@dataclass(frozen=True, eq=False)
class MeanSide:
    """One caption: its tokens, the words averaged, what was removed, and the mean vector."""

    tokens: Tokens
    words: tuple[str, ...]
    stopwords: tuple[str, ...]
    oov: tuple[str, ...]
    vector: np.ndarray


@dataclass(frozen=True, eq=False)
class MeanDetails:
    """Evidence for one item: each side's words and mean vector, and the cosine per reference.

    ``candidate_nearest`` / ``reference_nearest`` (the vocabulary words closest to each mean
    vector) scan the whole vocabulary, so they are computed on first access only.
    """

    candidate: MeanSide
    references: tuple[MeanSide, ...]
    cosines: tuple[float, ...]
    note: str = ""
    embeddings: Embeddings | None = field(default=None, repr=False)

    @functools.cached_property
    def candidate_nearest(self) -> tuple[tuple[str, float], ...]:
        """``(word, cosine)`` of the vocabulary words nearest to the candidate's mean."""
        return self._nearest(self.candidate)

    @functools.cached_property
    def reference_nearest(self) -> tuple[tuple[tuple[str, float], ...], ...]:
        """Per reference, ``(word, cosine)`` of the vocabulary words nearest to its mean."""
        return tuple(self._nearest(ref) for ref in self.references)

    def __getstate__(self) -> dict[str, Any]:
        """Pickle without the vector table (90 MB for GloVe): the nearest words are computed
        first, so an unpickled copy (e.g. from the app's cache) still has them."""
        _ = self.candidate_nearest, self.reference_nearest
        return {**self.__dict__, "embeddings": None}

    def _nearest(self, side: MeanSide) -> tuple[tuple[str, float], ...]:
        if self.embeddings is None or not side.words:
            return ()
        return self.embeddings.nearest(side.vector, NEAREST_TOPN)

    def __str__(self) -> str:
        cos = ", ".join(f"{c:.4f}" for c in self.cosines)
        return f"MEAN cosines [{cos}]" + (f"; {self.note}" if self.note else "")


class Mean(EmbeddingMetric):
    """Cosine of mean word vectors (stop words removed), averaged over the references.

    >>> r = Mean().score(["a man rides a horse on the beach"],
    ...                  [["a person riding a horse along the shore"]])
    >>> round(r.value, 6), r.segments[0].details.candidate.words
    (0.905213, ('man', 'rides', 'horse', 'beach'))
    """

    key = "mean"
    name = "MEAN"
    bounds = (-1.0, 1.0)
    Config = MeanConfig

    def prepare(self, batch: Batch) -> dict[str, np.ndarray]:
        """Every content word's vector (float64), looked up once for the batch."""
        words = {t for toks in batch.candidate_tokens for t in toks}
        words |= {t for refs in batch.reference_tokens for toks in refs for t in toks}
        return self._lookup(words)

    def _lookup(self, words: set[str]) -> dict[str, np.ndarray]:
        emb = self.embeddings
        known = sorted(w for w in words - wmd_stopwords() if w in emb)
        if not known:
            return {}
        rows = emb.vectors(known, normalize=self.config.normalize).astype(np.float64)
        return dict(zip(known, rows, strict=True))

    def _side(self, tokens: Tokens, vectors: dict[str, np.ndarray]) -> MeanSide:
        stopwords = wmd_stopwords()
        stop = tuple(t for t in tokens if t in stopwords)
        content = [t for t in tokens if t not in stopwords]
        words = tuple(t for t in content if t in vectors)
        oov = tuple(t for t in content if t not in vectors)
        if words:  # every token counts, so repeated words weigh more (as WMD's nBOW)
            mean = np.mean(np.stack([vectors[w] for w in words]), axis=0)
        else:
            mean = np.zeros(self.embeddings.dimension)
        mean.setflags(write=False)
        return MeanSide(tokens, words, stop, oov, mean)

    def segment(
        self,
        candidate: Tokens,
        references: tuple[Tokens, ...],
        prepared: dict[str, np.ndarray] | None,
    ) -> tuple[float, MeanDetails]:
        vectors = prepared
        if vectors is None:  # called outside score(): look up this item's words only
            vectors = self._lookup(set(candidate).union(*references))
        cand = self._side(candidate, vectors)
        refs = tuple(self._side(r, vectors) for r in references)
        # a side without content words has no direction: its cosine counts as 0, like WMD's
        # +∞ distance → 0 similarity (metric-spec §7), and is noted rather than raised
        cosines = tuple(cosine(cand.vector, r.vector) if r.words else 0.0 for r in refs)
        note = ""
        if not cand.words:
            note = "candidate has no in-vocabulary content word (all stop words or OOV): 0"
        elif not all(r.words for r in refs):
            empty = [j for j, r in enumerate(refs) if not r.words]
            note = f"reference(s) {empty} have no in-vocabulary content word: cosine 0"
        value = math.fsum(cosines) / len(cosines)
        return value, MeanDetails(cand, refs, cosines, note, self.embeddings)


__all__ = ["Mean", "MeanConfig", "MeanDetails", "MeanSide"]
