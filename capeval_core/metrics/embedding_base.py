"""What WMD and MEAN share: injected word vectors, the default GloVe loaded lazily, and the
vectors' identity in the signature."""

from __future__ import annotations

import os
from typing import Any

from capeval_core.embeddings import Embeddings, default_identity, embeddings_or_default
from capeval_core.errors import OptionError
from capeval_core.metrics.base import Metric


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
