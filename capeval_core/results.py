"""Frozen result types: a metric's corpus value, one SegmentScore per item, and a Signature."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np

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

    @classmethod
    def parse(cls, text: str) -> Signature:
        """The signature ``text`` prints, its option values typed again (``6.0`` a float,
        ``True`` a bool, ``1.0,0.6`` a tuple), so a printed number can be scored again:
        ``score(key, candidates, references, tokenizer=sig.tokenizer, **dict(sig.options))``.

        >>> sig = Signature.parse("meteor|task:rank|alpha:0.85|weights:1.0,0.6|tok:ptb|capeval:1")
        >>> sig.metric, dict(sig.options), sig.tokenizer
        ('meteor', {'task': 'rank', 'alpha': 0.85, 'weights': (1.0, 0.6)}, 'ptb')
        >>> str(sig)
        'meteor|task:rank|alpha:0.85|weights:1.0,0.6|tok:ptb|capeval:1'

        A statistic's signature follows its metric's (``capeval compare``'s paired tests, a
        pairwise accuracy's protocol): the metric's part, up to ``capeval:``, is read.

        >>> str(Signature.parse("bleu|tok:ptb|capeval:1|paired:bs|resamples:9|seed:1"))
        'bleu|tok:ptb|capeval:1'
        """
        metric, *parts = text.strip().split("|")
        named = [part.partition(":") for part in parts]
        keys = [k for k, _, _ in named]
        if "capeval" in keys:
            named = named[: keys.index("capeval") + 1]  # the metric's part
            keys = keys[: len(named)]
        if (
            not metric
            or keys.count("tok") != 1
            or keys[-1] != "capeval"
            or any(not sep or not value for _, sep, value in named)
        ):
            raise ValueError(
                f"not a capeval signature (metric|name:value|...|tok:...|capeval:version): {text!r}"
            )
        at = keys.index("tok")
        return cls(
            metric,
            tuple((k, _typed(v)) for k, _, v in named[:at]),
            named[at][2],
            tuple((k, v) for k, _, v in named[at + 1 : -1]),
            named[-1][2],
        )

    def as_dict(self) -> dict[str, Any]:
        """Plain data for JSON output."""
        return {
            "metric": self.metric,
            "options": dict(self.options),
            "tokenizer": self.tokenizer,
            "resources": dict(self.resources),
            "version": self.version,
        }


def left_out_line(
    what: str, missing: Mapping[Any, str], total: int, unit: str = "items", shown: int = 5
) -> str:
    """One line saying how many items ``what`` left out and which, with the reasons:
    ``missing`` maps an item's id (or index) to why it was not scored.

    >>> left_out_line("SPICE", {7: "a sentence of 215 words"}, 500, "images")
    'SPICE left out 1 of 500 images (not scored): 7 (a sentence of 215 words)'
    """
    items = list(missing.items())
    listed = "; ".join(f"{k} ({why})" for k, why in items[:shown])
    more = f"; ... ({len(items) - shown:,} more)" if len(items) > shown else ""
    return f"{what} left out {len(items):,} of {total:,} {unit} (not scored): {listed}{more}"


def _typed(text: str) -> Any:
    """An option's value read back from its printed text (:func:`_fmt`'s inverse for the
    types options take: bools, whole numbers, floats, words, tuples of numbers).

    >>> _typed("True"), _typed("20"), _typed("6.0"), _typed("1e-05"), _typed("1e+20")
    (True, 20, 6.0, 1e-05, 1e+20)
    >>> _typed("1.0,0.6"), _typed("set-3f2a"), _typed("1_000"), _typed("nan")
    ((1.0, 0.6), 'set-3f2a', '1_000', 'nan')
    """
    if text in ("True", "False"):
        return text == "True"
    if "," in text:
        pieces = [_typed(t) for t in text.split(",")]
        if all(isinstance(p, int | float) and not isinstance(p, bool) for p in pieces):
            return tuple(pieces)
        return text
    if re.fullmatch(r"-?[0-9]+", text):
        return int(text)
    if re.fullmatch(r"-?[0-9]+(\.[0-9]+)?(e[+-]?[0-9]+)?|-?inf", text):
        return float(text)  # as repr writes a float: no "_", no other digits, no "nan"
    return text


def _fmt(value: Any) -> str:
    """An option's value as a signature prints it: a float as the shortest text that reads
    back as it (``-0.0`` as ``0.0``, a numpy float as the Python float it equals), so one
    value is printed one way; a tuple's values joined by commas.

    >>> _fmt(-0.0), _fmt(np.float32(1.2)), _fmt((1.0, 0.6)), _fmt(20)
    ('0.0', '1.2000000476837158', '1.0,0.6', '20')
    """
    if isinstance(value, tuple):
        return ",".join(_fmt(v) for v in value)
    if isinstance(value, float | np.floating):
        return repr(float(value) + 0.0)
    return str(value)


@dataclass(frozen=True)
class SegmentScore:
    """One item's score(s) and the evidence behind them.

    ``scores`` maps every key the metric reports (BLEU reports ``bleu_1`` … ``bleu_4``) to
    its value; ``key`` names the one ``value`` returns. An item the metric could not score
    (see :attr:`MetricResult.missing`) has NaN for every key, no details, and the reason in
    ``missing``.
    """

    index: int
    key: str
    scores: Mapping[str, float]
    details: Any = None
    missing: str | None = None

    @property
    def value(self) -> float:
        return self.scores[self.key]

    def __str__(self) -> str:
        if self.missing is not None:
            return f"#{self.index} {self.key} missing ({self.missing})"
        return f"#{self.index} {self.key}={self.value:.6f}"


@dataclass(frozen=True)
class MetricResult:
    """A corpus score, its per-item segments and its signature, from one call.

    Corpus and segment values come from one call because CIDEr-D's IDF and BLEU's pooled
    counts depend on the whole set.

    Items the metric could not score (a limit the user set, a caption its parser refuses)
    are :attr:`missing`, each with its reason; the corpus value is then the metric's value
    on the other items alone, computed as if the missing ones were not in the set (means
    over the scored items, BLEU's and METEOR's statistics pooled over them, CIDEr-D's
    document frequencies from their references).
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
        """Per-item values of ``key`` (default: this result's key), in input order (NaN
        where the item is :attr:`missing`)."""
        k = key or self.key
        return [s.scores[k] for s in self.segments]

    @property
    def missing(self) -> dict[int, str]:
        """The items this metric could not score: ``{item index: reason}`` (empty when it
        scored every item).

        >>> from capeval_core import score
        >>> score("rouge_l", ["a dog"], [["a dog runs"]]).missing
        {}
        """
        return {s.index: s.missing for s in self.segments if s.missing is not None}

    def scored(self) -> MetricResult:
        """The same result with only the items it scored (their indices kept)."""
        if not any(s.missing is not None for s in self.segments):
            return self
        return replace(self, segments=tuple(s for s in self.segments if s.missing is None))

    def to_frame(self) -> pd.DataFrame:
        """Tidy per-item table: one row per item, one column per reported key (and, when
        some item is missing, a ``missing`` column with the reason, empty where scored)."""
        import pandas as pd  # only here: scoring processes never pay its import

        rows = [{"index": s.index, **s.scores} for s in self.segments]
        columns = ["index", *self.corpus]
        if self.missing:
            for row, s in zip(rows, self.segments, strict=True):
                row["missing"] = s.missing or ""
            columns.append("missing")
        return pd.DataFrame(rows, columns=columns)

    def __str__(self) -> str:
        n = len(self.segments)
        left = len(self.missing)
        count = f"n={n}" if not left else f"n={n}, {left} missing"
        return f"{self.key} = {self.value:.5f} ({count}) [{self.signature}]"
