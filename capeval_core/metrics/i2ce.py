"""I²CE: cosine of learned sentence vectors, averaged over the references.

Spec: product brief, metric table (seed metric I²CE, from "Intrinsic Image Captioning
Evaluation"): sentence vectors from the encoder of a GRU sequence-to-sequence autoencoder
(Bahdanau attention in the decoder, frozen GloVe word embeddings) trained to reconstruct
captions; the score is the cosine of the candidate's and a reference's vectors, averaged over
the references. capeval ships the trained encoder (``capeval_core/data/i2ce/``) and runs it in
numpy (:mod:`capeval_core.i2ce.model`), so scoring needs no torch. The card gives the exact
training command and a sanity check.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from capeval_core.embeddings import cosine
from capeval_core.errors import OptionError
from capeval_core.i2ce.model import POOLINGS, I2CEEncoder, default_encoder, load_encoder
from capeval_core.metrics.base import Batch, Metric, MetricConfig
from capeval_core.options import check_choice
from capeval_core.tokenize import Tokens


@dataclass(frozen=True, kw_only=True)
class I2CEConfig(MetricConfig):
    """``pooling``: the sentence vector is the mean of the encoder's states over the tokens
    (``"mean"``, default) or its final states (``"final"``). With an attention decoder the
    final states need not summarise the caption, and the sanity evaluation in the card shows
    they separate same-image from other-image captions far worse (AUC 0.66 vs 0.87)."""

    pooling: str = "mean"

    def __post_init__(self) -> None:
        check_choice("pooling", self.pooling, POOLINGS)


@dataclass(frozen=True, eq=False)
class I2CESide:
    """One caption: its tokens, those the vocabulary lacks (read as ``<unk>``), its vector."""

    tokens: Tokens
    unknown: tuple[str, ...]
    vector: np.ndarray


@dataclass(frozen=True, eq=False)
class I2CEDetails:
    """Evidence for one item: both sides' sentence vectors and the cosine per reference
    (each reference's score; the item's value is their mean)."""

    candidate: I2CESide
    references: tuple[I2CESide, ...]
    cosines: tuple[float, ...]
    note: str = ""

    def __str__(self) -> str:
        cos = ", ".join(f"{c:.4f}" for c in self.cosines)
        return f"I²CE cosines [{cos}]" + (f"; {self.note}" if self.note else "")


class I2CE(Metric):
    """Cosine of I²CE sentence vectors (numpy encoder), averaged over the references.

    ``encoder`` takes an :class:`~capeval_core.i2ce.model.I2CEEncoder` or the path of an
    ``i2ce.npz`` written by ``capeval train-i2ce``; the default is the shipped encoder.

    >>> r = I2CE().score(["a man rides a horse on the beach"],
    ...                  [["a person riding a horse along the shore", "a red bus"]])
    >>> d = r.segments[0].details
    >>> len(d.cosines), d.cosines[0] > d.cosines[1], d.candidate.vector.shape
    (2, True, (256,))
    """

    key = "i2ce"
    name = "I²CE"
    bounds = (-1.0, 1.0)
    measures = (
        "the cosine between learned sentence vectors of the candidate and each reference, "
        "averaged over the references"
    )
    Config = I2CEConfig

    def __init__(self, *, encoder: I2CEEncoder | str | Path | None = None, **kwargs: Any):
        super().__init__(**kwargs)
        if not (encoder is None or isinstance(encoder, I2CEEncoder | str | os.PathLike)):
            raise OptionError(
                "`encoder` must be an I2CEEncoder, the path of an i2ce.npz or None "
                f"(got {type(encoder).__name__})"
            )
        self._encoder = encoder
        self._resolved: I2CEEncoder | None = None
        self._last: dict[Tokens, tuple[I2CESide, float]] = {}

    @property
    def encoder(self) -> I2CEEncoder:
        """The encoder in use (the shipped one, loaded on first use, when none was given)."""
        if self._resolved is None:
            if self._encoder is None:
                self._resolved = default_encoder()
            elif isinstance(self._encoder, I2CEEncoder):
                self._resolved = self._encoder
            else:
                self._resolved = load_encoder(self._encoder)
        return self._resolved

    def resources(self) -> dict[str, str]:
        return {"i2ce": self.encoder.identity}

    def prepare(self, batch: Batch) -> dict[Tokens, tuple[I2CESide, float]]:
        """Every distinct caption's side and vector norm, encoded in one batched numpy call.

        Captions the previous batch encoded are taken from it: systems scored one after
        another on the same images share their references, which are most of the work. A
        caption's vector does not depend on the batch it is encoded in (to 1e-12 in the tests;
        equal here), so the values are those of encoding each batch alone."""
        unique = list(dict.fromkeys(batch.candidate_tokens))
        unique += [t for refs in batch.reference_tokens for t in refs]
        unique = list(dict.fromkeys(unique))
        last = self._last
        sides = self._encode([t for t in unique if t not in last])
        sides.update((t, last[t]) for t in unique if t in last)
        self._last = sides  # one batch kept: bounded however long the metric lives
        return sides

    def _encode(self, token_lists: list[Tokens]) -> dict[Tokens, tuple[I2CESide, float]]:
        encoder = self.encoder
        vectors = encoder.encode(token_lists, self.config.pooling)
        vectors.setflags(write=False)
        return {
            tokens: (I2CESide(tokens, encoder.unknown(tokens), v), float(np.linalg.norm(v)))
            for tokens, v in zip(token_lists, vectors, strict=True)
        }

    def segment(
        self,
        candidate: Tokens,
        references: tuple[Tokens, ...],
        prepared: dict[Tokens, tuple[I2CESide, float]] | None,
    ) -> tuple[float, I2CEDetails]:
        sides = prepared
        if sides is None:  # called outside score(): encode this item's captions only
            sides = self._encode(list(dict.fromkeys((candidate, *references))))
        cand, cand_norm = sides[candidate]
        refs, ref_norms = zip(*(sides[r] for r in references), strict=True)
        # an empty caption has no vector: its cosine counts as 0, as MEAN's does
        cosines = tuple(
            cosine(cand.vector, r.vector, norms=(cand_norm, norm))
            for r, norm in zip(refs, ref_norms, strict=True)
        )
        note = ""
        if not candidate:
            note = "candidate has no tokens: 0"
        elif not all(references):
            empty = [j for j, r in enumerate(references) if not r]
            note = f"reference(s) {empty} have no tokens: cosine 0"
        value = math.fsum(cosines) / len(cosines)
        return value, I2CEDetails(cand, refs, cosines, note)


__all__ = ["I2CE", "I2CEConfig", "I2CEDetails", "I2CESide"]
