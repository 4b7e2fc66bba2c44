"""Per-item statistics from which a metric's corpus value is recomputed on other item sets.

Significance tests between captioning systems (``capeval_core.stats.resampling``) score a
system again on bootstrap resamples of its images and on pseudo-systems that swap images
with another system. The corpus value must then be recomputed the way the metric itself
aggregates it (sacrebleu's convention): BLEU and METEOR from summed sufficient statistics,
CIDEr-D with its IDF recomputed from the resampled references, the other metrics as the
mean of their item values. Each metric says how through
:meth:`~capeval_core.metrics.base.Metric.item_statistics`, which returns one of the
classes here; a resample is a row of item weights (how often it draws each item), so a
chunk of resamples is one matrix product.

numpy only: the scoring worker processes import this module with every metric.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np


class ItemStatistics(ABC):
    """One system's scores under one metric, as resampling needs them.

    ``keys`` are the metric's reported keys, in the column order of every array returned.
    """

    keys: tuple[str, ...]

    @abstractmethod
    def __len__(self) -> int:
        """Number of items."""

    @abstractmethod
    def point(self) -> dict[str, float]:
        """The corpus value of every key over all items, computed by the metric's own
        aggregation: bit for bit what ``Metric.score`` returns."""

    @abstractmethod
    def resample(self, weights: np.ndarray, memo: dict[Any, Any] | None = None) -> np.ndarray:
        """Corpus values of resamples, shape ``(R, len(keys))``.

        ``weights`` has shape ``(R, n)``: how often each resample draws each item (a
        bootstrap resample of n items has weights summing to n). ``memo`` may be shared by
        the calls for several systems on the same weights, so work that depends on the
        references only (CIDEr-D's reference norms) is done once.
        """

    def additive(self) -> SummedStatistics | None:
        """The statistics that approximate randomization swaps, when they are summed per item
        (so swaps of several metrics can share one matrix product); None otherwise."""
        return None

    @abstractmethod
    def swap(self, other: ItemStatistics, take: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Corpus values of the two pseudo-systems of approximate randomization.

        ``take`` is an ``(R, n)`` array of booleans (or of 0.0 and 1.0); the first
        pseudo-system has this system's item where it is True and ``other``'s elsewhere, the
        second the opposite. The references stay fixed, so each item's own statistics do not
        change.
        """


def _check_pair(a: ItemStatistics, b: ItemStatistics) -> None:
    if type(a) is not type(b) or a.keys != b.keys or len(a) != len(b):
        raise ValueError(
            f"cannot swap items between {type(a).__name__}{a.keys} of {len(a)} items and "
            f"{type(b).__name__}{b.keys} of {len(b)} items"
        )


@dataclass(frozen=True, eq=False)
class SummedStatistics(ItemStatistics):
    """Statistics whose weighted column sums determine the corpus value.

    ``matrix`` has one row per item; subclasses turn summed rows (and the total weight) into
    corpus values in :meth:`finish`.
    """

    keys: tuple[str, ...]
    matrix: np.ndarray

    def __len__(self) -> int:
        return self.matrix.shape[0]

    def additive(self) -> SummedStatistics:
        return self

    @abstractmethod
    def finish(self, sums: np.ndarray, total: np.ndarray) -> np.ndarray:
        """Corpus values ``(R, K)`` from summed statistics ``(R, d)`` and total weights ``(R,)``."""

    def resample(self, weights: np.ndarray, memo: dict[Any, Any] | None = None) -> np.ndarray:
        weights = np.asarray(weights, dtype=float)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            return self.finish(weights @ self.matrix, weights.sum(axis=1))

    def swap(self, other: ItemStatistics, take: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        _check_pair(self, other)
        assert isinstance(other, SummedStatistics)
        # The first pseudo-system sums other's rows, plus (self - other) where it takes
        # self's item: one product per chunk. Identical systems give a zero difference, so
        # both pseudo-systems are exactly the systems' own sums.
        moved = np.asarray(take, dtype=float) @ (self.matrix - other.matrix)
        total = np.full(moved.shape[0], float(len(self)))
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            first = self.finish(other.matrix.sum(axis=0) + moved, total)
            second = self.finish(self.matrix.sum(axis=0) - moved, total)
        return first, second


@dataclass(frozen=True, eq=False)
class MeanStatistics(SummedStatistics):
    """Metrics whose corpus value is the mean of the item values (ROUGE-L, SPICE, WMD, ...).

    >>> s = MeanStatistics.from_values(("x",), {"x": np.array([1.0, 2.0, 4.0])})
    >>> s.point()["x"], s.resample(np.array([[3.0, 0.0, 0.0], [0.0, 1.0, 2.0]])).ravel().tolist()
    (2.3333333333333335, [1.0, 3.3333333333333335])
    """

    columns: tuple[np.ndarray, ...] = field(default=(), repr=False)

    @classmethod
    def from_values(cls, keys: Sequence[str], values: Mapping[str, np.ndarray]) -> MeanStatistics:
        columns = tuple(np.ascontiguousarray(values[k], dtype=float) for k in keys)
        matrix = np.column_stack(columns) if columns else np.zeros((0, 0))
        return cls(tuple(keys), matrix, columns)

    def point(self) -> dict[str, float]:
        # the same call on the same contiguous array as Metric.aggregate: the same float
        return {k: float(np.mean(c)) for k, c in zip(self.keys, self.columns, strict=True)}

    def finish(self, sums: np.ndarray, total: np.ndarray) -> np.ndarray:
        return sums / total[:, None]


@dataclass(frozen=True, eq=False)
class NanMeanStatistics(SummedStatistics):
    """Means over the items where a key is defined (not NaN): SPICE's category F-scores,
    which SPICE's summary averages over the images whose references have such tuples. The
    matrix holds each key's values (0 where undefined), then each key's 0/1 mask; a
    resample's value is its weighted sum over its weighted count of defined items.

    >>> s = NanMeanStatistics.from_values(("x",), {"x": np.array([1.0, np.nan, 4.0])})
    >>> s.point()["x"], s.resample(np.array([[3.0, 0.0, 0.0], [0.0, 2.0, 1.0]])).ravel().tolist()
    (2.5, [1.0, 4.0])
    """

    columns: tuple[np.ndarray, ...] = field(default=(), repr=False)

    @classmethod
    def from_values(
        cls, keys: Sequence[str], values: Mapping[str, np.ndarray]
    ) -> NanMeanStatistics:
        columns = tuple(np.ascontiguousarray(values[k], dtype=float) for k in keys)
        masks = [np.isfinite(c) for c in columns]
        parts = [np.where(m, c, 0.0) for c, m in zip(columns, masks, strict=True)]
        parts += [m.astype(float) for m in masks]
        matrix = np.column_stack(parts) if parts else np.zeros((0, 0))
        return cls(tuple(keys), matrix, columns)

    def point(self) -> dict[str, float]:
        # the defined items in order, as SPICE's summary (and Metric.aggregate) take them
        out = {}
        for k, c in zip(self.keys, self.columns, strict=True):
            defined = c[np.isfinite(c)]
            out[k] = float(np.mean(defined)) if defined.size else float("nan")
        return out

    def finish(self, sums: np.ndarray, total: np.ndarray) -> np.ndarray:
        k = len(self.keys)
        return sums[:, :k] / sums[:, k:]


def weights_from_indices(indices: np.ndarray, n: int) -> np.ndarray:
    """How often each row of ``indices`` (R, m) draws each of ``n`` items: ``(R, n)`` floats.

    >>> weights_from_indices(np.array([[0, 0, 2], [1, 2, 2]]), 3).tolist()
    [[2.0, 0.0, 1.0], [0.0, 1.0, 2.0]]
    """
    rows = indices.shape[0]
    flat = (indices + (np.arange(rows) * n)[:, None]).ravel()
    return np.bincount(flat, minlength=rows * n).reshape(rows, n).astype(float)
