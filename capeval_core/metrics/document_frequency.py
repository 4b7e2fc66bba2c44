"""CIDEr-D's document frequencies: per n-gram, how many images' references contain it.

The table type both IDF sources fill: the scored set's own references
(:func:`corpus_document_frequency`, coco-caption's behaviour) and those of
:mod:`capeval_core.metrics.idf` (COCO val2014's references, or a registered reference set). The
metric (:mod:`capeval_core.metrics.cider`) reads it; neither source needs the metric.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np

from capeval_core.metrics.ngrams import Ngram, coco_words, ngram_counts
from capeval_core.tokenize import Tokens

#: CIDEr-D's n-grams: 1 to ORDER words
ORDER = 4
#: an IDF source named ``set-<digest>``: a scored set's references (capeval_core.metrics.idf)
SET_PREFIX = "set-"


@dataclass(frozen=True)
class DocumentFrequency:
    """Per n-gram document frequencies and the log of the number of documents (images).

    ``df`` is a dict, or for COCO val2014 a memory-mapped table (capeval_core.metrics.idf_file)."""

    df: Mapping[Ngram, float]
    log_documents: float
    documents: int
    source: str

    def __post_init__(self) -> None:
        # log(df) takes few distinct values: computing each once keeps numpy's exact log cheap
        object.__setattr__(self, "_log_cache", {})
        object.__setattr__(self, "_idf_cache", {})

    def prefetch(self, grams: Iterable[Ngram]) -> None:
        """Look ``grams`` up in one call where the table can (COCO val2014's memory-mapped
        table, ``get_many``); :meth:`idf` then reads them from its cache. The values are the
        ones :meth:`idf` computes gram by gram."""
        get_many = getattr(self.df, "get_many", None)
        if get_many is None:
            return
        idf_cache: dict[Ngram, float] = self._idf_cache  # type: ignore[attr-defined]
        missing = [gram for gram in dict.fromkeys(grams) if gram not in idf_cache]
        for gram, d in zip(missing, get_many(missing), strict=True):
            idf_cache[gram] = self._idf_of(d)

    def idf(self, gram: Ngram) -> float:
        """``log(N) - log(max(1, df))``: 0 for an n-gram in every image, log N for an unseen one."""
        idf_cache: dict[Ngram, float] = self._idf_cache  # type: ignore[attr-defined]
        value = idf_cache.get(gram)
        if value is None:
            value = idf_cache[gram] = self._idf_of(self.df.get(gram, 0.0))
        return value

    def _idf_of(self, d: float) -> float:
        """The idf of an n-gram counted in ``d`` images (its log computed once per count)."""
        log_cache: dict[float, float] = self._log_cache  # type: ignore[attr-defined]
        log_df = log_cache.get(d)
        if log_df is None:
            log_df = log_cache[d] = float(np.log(max(1.0, d)))
        return self.log_documents - log_df


def corpus_document_frequency(
    reference_tokens: tuple[tuple[Tokens, ...], ...],
) -> DocumentFrequency:
    """Document frequency over the scored set: an image counts once per n-gram."""
    return corpus_statistics(reference_tokens)[0]


def corpus_statistics(
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
