"""Frozen result types: a metric's corpus value, one SegmentScore per item, and a Signature."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd


@dataclass(frozen=True)
class Signature:
    """Everything needed to reproduce a number: metric, options, tokenizer, resources, version.

    >>> str(Signature("rouge_l", (("beta", 1.2),), "whitespace", (), "0.1.0"))
    'rouge_l|beta:1.2|tok:whitespace|capeval:0.1.0'
    """

    metric: str
    options: tuple[tuple[str, Any], ...]
    tokenizer: str
    resources: tuple[tuple[str, str], ...]
    version: str

    def __str__(self) -> str:
        parts = [self.metric]
        parts += [f"{k}:{_fmt(v)}" for k, v in self.options]
        parts.append(f"tok:{self.tokenizer}")
        parts += [f"{k}:{v}" for k, v in self.resources]
        parts.append(f"capeval:{self.version}")
        return "|".join(parts)

    def as_dict(self) -> dict[str, Any]:
        """Plain data for JSON output."""
        return {
            "metric": self.metric,
            "options": dict(self.options),
            "tokenizer": self.tokenizer,
            "resources": dict(self.resources),
            "version": self.version,
        }


def _fmt(value: Any) -> str:
    if isinstance(value, tuple):
        return ",".join(_fmt(v) for v in value)
    return str(value)


@dataclass(frozen=True)
class SegmentScore:
    """One item's score(s) and the evidence behind them.

    ``scores`` maps every key the metric reports (BLEU reports ``bleu_1`` … ``bleu_4``) to
    its value; ``key`` names the one ``value`` returns.
    """

    index: int
    key: str
    scores: Mapping[str, float]
    details: Any = None

    @property
    def value(self) -> float:
        return self.scores[self.key]

    def __str__(self) -> str:
        return f"#{self.index} {self.key}={self.value:.6f}"


@dataclass(frozen=True)
class MetricResult:
    """A corpus score, its per-item segments and its signature, from one call.

    Corpus and segment values come from one call because CIDEr-D's IDF and BLEU's pooled
    counts depend on the whole set.
    """

    key: str
    corpus: Mapping[str, float]
    segments: tuple[SegmentScore, ...]
    signature: Signature
    details: Any = None
    warnings: tuple[str, ...] = field(default=())

    @property
    def value(self) -> float:
        """The corpus value of ``key``."""
        return self.corpus[self.key]

    @property
    def keys(self) -> tuple[str, ...]:
        """Every key this result reports."""
        return tuple(self.corpus)

    def select(self, key: str) -> MetricResult:
        """The same result viewed through another reported key (``bleu_2`` of a BLEU result)."""
        if key not in self.corpus:
            raise KeyError(f"{key!r} is not reported by this result (it has {list(self.corpus)})")
        segments = tuple(replace(s, key=key) for s in self.segments)
        return replace(self, key=key, segments=segments)

    def segment_values(self, key: str | None = None) -> list[float]:
        """Per-item values of ``key`` (default: this result's key), in input order."""
        k = key or self.key
        return [s.scores[k] for s in self.segments]

    def to_frame(self) -> pd.DataFrame:
        """Tidy per-item table: one row per item, one column per reported key."""
        import pandas as pd  # only here: scoring processes never pay its import

        rows = [{"index": s.index, **s.scores} for s in self.segments]
        return pd.DataFrame(rows, columns=["index", *self.corpus])

    def __str__(self) -> str:
        return f"{self.key} = {self.value:.5f} (n={len(self.segments)}) [{self.signature}]"
