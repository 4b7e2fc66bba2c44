"""What WMD and MEAN share: injected word vectors, the default GloVe loaded lazily, and the
vectors' identity in the signature."""

from __future__ import annotations

import os
from typing import Any

from capeval_core.embeddings import Embeddings, default_identity, embeddings_or_default
from capeval_core.errors import OptionError
from capeval_core.metrics.base import Batch, Metric
from capeval_core.stopwords import wmd_stopwords


class EmbeddingMetric(Metric):
    """A metric over word vectors: ``Metric(embeddings=load_embeddings(path))``; without one
    the default GloVe 6B 50-d vectors are used (loaded once per process, on first use)."""

    def __init__(self, *, embeddings: Embeddings | Any | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if not (
            embeddings is None
            or isinstance(embeddings, Embeddings | str | os.PathLike)
            or (hasattr(embeddings, "key_to_index") and hasattr(embeddings, "vectors"))
        ):
            raise OptionError(
                "`embeddings` must be an Embeddings (see load_embeddings), a gensim "
                f"KeyedVectors, a path or None (got {type(embeddings).__name__})"
            )
        self._embeddings = embeddings
        self._resolved: Embeddings | None = None

    @property
    def embeddings(self) -> Embeddings:
        """The vectors in use (the default GloVe, loaded on first use, when none was given)."""
        if self._resolved is None:
            self._resolved = embeddings_or_default(self._embeddings)
        return self._resolved

    def resources(self) -> dict[str, str]:
        if self._embeddings is None and self._resolved is None:
            return {"emb": default_identity()}  # without loading gensim where nothing is scored
        return {"emb": self.embeddings.identity}

    def unscorable(self, batch: Batch, prepared: Any) -> dict[int, str]:
        """With ``normalize``, the items using a word whose vector is all zeros: it has no
        unit vector (gensim's lookup gives NaN and the score would be NaN); the other items
        are scored. Stop words are never looked up, so theirs do not count."""
        if not getattr(self.config, "normalize", False):
            return {}
        stop = wmd_stopwords()
        words = {t for toks in batch.candidate_tokens for t in toks}
        words |= {t for refs in batch.reference_tokens for toks in refs for t in toks}
        zero = set(self.embeddings.zero_vectors(words - stop))
        if not zero:
            return {}
        out = {}
        for i, (cand, refs) in enumerate(
            zip(batch.candidate_tokens, batch.reference_tokens, strict=True)
        ):
            for where, toks in (
                ("candidate", cand),
                *((f"reference {j + 1}", r) for j, r in enumerate(refs)),
            ):
                hit = next((t for t in toks if t in zero), None)
                if hit is not None:
                    out[i] = (
                        f"{where}: the vector of {hit!r} in {self.embeddings.name} is all zeros, "
                        "which has no unit vector to normalise to (give the word a vector, or "
                        "remove its line)"
                    )
                    break
        return out
