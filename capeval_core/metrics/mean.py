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
from capeval_core.options import check_bool
from capeval_core.stopwords import wmd_stopwords
from capeval_core.tokenize import Tokens

#: how many nearest vocabulary words the details list for each mean vector
NEAREST_TOPN = 5


@dataclass(frozen=True, kw_only=True)
class MeanConfig(MetricConfig):
    """``normalize``: average unit-normalised word vectors instead of the raw ones."""

    normalize: bool = False

    def __post_init__(self) -> None:
        check_bool("normalize", self.normalize)


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
    measures = (
        "the cosine between the average word vector of the candidate's content words and each "
        "reference's, averaged over the references"
    )
    Config = MeanConfig

    def prepare(self, batch: Batch) -> dict[Tokens, tuple[MeanSide, float]]:
        """Every distinct caption's side and the norm of its mean vector, computed once for
        the batch (the candidates of an image share references)."""
        captions = dict.fromkeys(batch.candidate_tokens)
        captions.update(dict.fromkeys(t for refs in batch.reference_tokens for t in refs))
        return self._sides(list(captions))

    def _sides(self, captions: list[Tokens]) -> dict[Tokens, tuple[MeanSide, float]]:
        """Each caption's side and norm, over one lookup of all their words' vectors."""
        emb = self.embeddings
        stopwords = wmd_stopwords()
        words = {t for toks in captions for t in toks} - stopwords
        known = sorted(w for w in words if w in emb)
        row = {w: i for i, w in enumerate(known)}
        matrix = emb.vectors(known, normalize=self.config.normalize).astype(np.float64)
        sides = {}
        for tokens in captions:
            side = _side(tokens, row, matrix, stopwords)
            sides[tokens] = (side, float(np.linalg.norm(side.vector)))
        return sides

    def segment(
        self,
        candidate: Tokens,
        references: tuple[Tokens, ...],
        prepared: dict[Tokens, tuple[MeanSide, float]] | None,
    ) -> tuple[float, MeanDetails]:
        sides = prepared
        if sides is None:  # called outside score(): this item's captions only
            sides = self._sides(list(dict.fromkeys((candidate, *references))))
        cand, cand_norm = sides[candidate]
        refs, ref_norms = zip(*(sides[r] for r in references), strict=True)
        # a side without content words has no direction: its cosine counts as 0, like WMD's
        # +∞ distance → 0 similarity (metric-spec §7), and is noted rather than raised
        cosines = tuple(
            cosine(cand.vector, r.vector, norms=(cand_norm, norm)) if r.words else 0.0
            for r, norm in zip(refs, ref_norms, strict=True)
        )
        note = ""
        if not cand.words:
            note = "candidate has no in-vocabulary content word (all stop words or OOV): 0"
        elif not all(r.words for r in refs):
            empty = [j for j, r in enumerate(refs) if not r.words]
            note = f"reference(s) {empty} have no in-vocabulary content word: cosine 0"
        value = math.fsum(cosines) / len(cosines)
        return value, MeanDetails(cand, refs, cosines, note, self.embeddings)


def _side(
    tokens: Tokens, row: dict[str, int], matrix: np.ndarray, stopwords: frozenset[str]
) -> MeanSide:
    """Stop words removed, OOV words dropped (metric-spec §7 steps 1-2), then the mean of
    the remaining words' rows of ``matrix`` (float64)."""
    stop = tuple(t for t in tokens if t in stopwords)
    content = [t for t in tokens if t not in stopwords]
    words = tuple(t for t in content if t in row)
    oov = tuple(t for t in content if t not in row)
    rows = matrix[[row[w] for w in words]]  # every token: repeated words weigh more (as WMD)
    mean = np.mean(rows, axis=0) if words else np.zeros(matrix.shape[1])
    mean.setflags(write=False)
    return MeanSide(tokens, words, stop, oov, mean)


__all__ = ["Mean", "MeanConfig", "MeanDetails", "MeanSide"]
