"""The Metric base class, input validation and the tokenized batch every metric scores.

Authors implement :meth:`Metric.segment` (and optionally :meth:`Metric.prepare` for corpus
statistics, :meth:`Metric.aggregate` when the corpus value is not the mean of the items, and
:meth:`Metric.unscorable` when some item may be beyond it: such items are left out with the
reason, the others scored as a set of their own). Callers use :meth:`Metric.score`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import math
import warnings
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from importlib.resources import files
from typing import Any, ClassVar

import numpy as np

from capeval_core._version import __version__
from capeval_core.errors import (
    CapevalError,
    DegenerateCorpusWarning,
    InputError,
    ItemsLeftOutWarning,
    OptionError,
    UnknownKeyError,
)
from capeval_core.metrics.statistics import ItemStatistics, MeanStatistics
from capeval_core.results import MetricResult, SegmentScore, Signature, left_out_line
from capeval_core.tokenize import TOKENIZERS, Tokenizer, Tokens, get_tokenizer


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector while a batch is scored.

    Scoring allocates hundreds of thousands of small objects that all stay alive (the
    evidence of every item); the collector would rescan them again and again (40% of SPICE's
    time on 5,000 COCO images). They hold no reference cycles, so nothing piles up: whoever
    paused the collector turns it back on.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


@dataclass(frozen=True)
class Batch:
    """Validated captions and their tokens: what every metric's ``score`` works on.

    References are tokenized in one call and candidates in another, as coco-caption does,
    because the PTB tokenizer looks across caption boundaries.
    """

    candidates: tuple[str, ...]
    references: tuple[tuple[str, ...], ...]
    candidate_tokens: tuple[Tokens, ...]
    reference_tokens: tuple[tuple[Tokens, ...], ...]
    tokenizer: str

    def __len__(self) -> int:
        return len(self.candidates)

    @classmethod
    def of_tokens(
        cls, candidates: Sequence[Tokens], references: Sequence[Sequence[Tokens]]
    ) -> Batch:
        """A batch of captions given as tokens (a caller that tokenized them already, as the
        pycocoevalcap scorers' ``compute_score`` inputs are): each text is its tokens joined.
        Checked as :func:`validate_inputs` checks texts (a metric would break deep inside).

        >>> Batch.of_tokens([("a", "dog")], [[]])
        Traceback (most recent call last):
        capeval_core.errors.InputError: `references[0]` is empty: every candidate needs at \
least one reference
        """
        if len(candidates) != len(references):
            raise InputError(
                f"`candidates` and `references` must have the same length (got "
                f"{len(candidates)} and {len(references)})"
            )
        if not len(candidates):
            raise InputError("`candidates` is empty: nothing to score")
        for i, group in enumerate(references):
            if isinstance(group, str) or not len(group):
                raise InputError(
                    f"`references[{i}]` is empty: every candidate needs at least one reference"
                    if not len(group)
                    else f"`references[{i}]` must be a list of token tuples, not a string"
                )
        _check_tokens(candidates, "candidates")
        _check_tokens([r for group in references for r in group], "references' tokens")
        return cls(
            tuple(" ".join(c) for c in candidates),
            tuple(tuple(" ".join(r) for r in group) for group in references),
            tuple(tuple(c) for c in candidates),
            tuple(tuple(tuple(r) for r in group) for group in references),
            "whitespace",
        )

    def memo(self, name: str, build: Callable[[], Any]) -> Any:
        """A value derived from this batch, built once (the n-gram tables BLEU and CIDEr-D
        share). Memos are not pickled: a batch sent to a worker process arrives bare."""
        memos = self.__dict__.setdefault("_memos", {})
        if name not in memos:
            memos[name] = build()
        return memos[name]

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state.pop("_memos", None)
        return state

    def part(self, start: int, stop: int) -> Batch:
        """Items ``start:stop`` with their tokens as tokenized here (no re-tokenizing, so
        the PTB tokenizer's cross-caption context is kept)."""
        return Batch(
            self.candidates[start:stop],
            self.references[start:stop],
            self.candidate_tokens[start:stop],
            self.reference_tokens[start:stop],
            self.tokenizer,
        )

    def subset(self, indices: Sequence[int]) -> Batch:
        """The items at ``indices`` with their tokens as tokenized here (as :meth:`part`)."""
        return Batch(
            tuple(self.candidates[i] for i in indices),
            tuple(self.references[i] for i in indices),
            tuple(self.candidate_tokens[i] for i in indices),
            tuple(self.reference_tokens[i] for i in indices),
            self.tokenizer,
        )


def _check_tokens(captions: Sequence[Any], what: str, tokenizer: str = "") -> None:
    """Each caption a sequence of strings (a caption given as one string would be scored
    character by character)."""
    by = f" from the tokenizer {tokenizer!r}" if tokenizer else ""
    for i, tokens in enumerate(captions):
        if isinstance(tokens, str | bytes) or not all(isinstance(t, str) for t in tokens):
            raise InputError(
                f"`{what}[{i}]`{by} must be a sequence of token strings (got {tokens!r:.60})"
            )


def validate_inputs(
    candidates: Sequence[str], references: Sequence[Sequence[str] | str]
) -> tuple[tuple[str, ...], tuple[tuple[str, ...], ...]]:
    """Check shapes and types once, at the public boundary.

    ``references[i]`` is the list of reference captions of item ``i``; a bare string is
    accepted as a single reference.

    >>> validate_inputs(["a dog"], ["a dog runs"])
    (('a dog',), (('a dog runs',),))
    """
    if isinstance(candidates, str):
        raise InputError("`candidates` must be a list of strings, not a single string")
    if isinstance(references, str):
        raise InputError("`references` must be a list (one entry per candidate), not a string")
    for name, value in (("candidates", candidates), ("references", references)):
        if hasattr(value, "columns") and hasattr(value, "iloc"):  # iterating gives the columns
            raise InputError(
                f"`{name}` is a table (a DataFrame): give one list per candidate, e.g. "
                "df.values.tolist() for one reference per column"
            )
        if isinstance(value, Mapping | set | frozenset) or not isinstance(value, Iterable):
            raise InputError(
                f"`{name}` must be a list (one entry per candidate), not a {type(value).__name__}"
            )
    cands = tuple(candidates)
    refs_in = list(references)
    if len(cands) != len(refs_in):
        raise InputError(
            f"`candidates` and `references` must have the same length "
            f"(got {len(cands)} and {len(refs_in)})"
        )
    if not cands:
        raise InputError("`candidates` is empty: nothing to score")
    for i, c in enumerate(cands):
        if not isinstance(c, str):
            raise InputError(f"`candidates[{i}]` must be a string (got {type(c).__name__})")
    refs: list[tuple[str, ...]] = []
    for i, item in enumerate(refs_in):
        if isinstance(item, bytes | bytearray) or getattr(item, "ndim", None) == 0:
            kind = (
                "bytes: decode them first" if isinstance(item, bytes | bytearray) else "a 0-d array"
            )
            raise InputError(f"`references[{i}]` must be a list of strings (got {kind})")
        if isinstance(item, Mapping | set | frozenset) or not (
            item is None or isinstance(item, str | Iterable)
        ):
            raise InputError(
                f"`references[{i}]` must be a list of strings (got {type(item).__name__})"
            )
        group = (item,) if isinstance(item, str) else tuple(item) if item is not None else ()
        if not group:
            raise InputError(
                f"`references[{i}]` is empty: every candidate needs at least one reference"
            )
        for j, r in enumerate(group):
            if not isinstance(r, str):
                raise InputError(
                    f"`references[{i}][{j}]` must be a string (got {type(r).__name__})"
                )
        refs.append(group)
    return cands, tuple(refs)


def make_batch(
    candidates: Sequence[str],
    references: Sequence[Sequence[str] | str],
    tokenizer: str | Tokenizer = "ptb",
) -> Batch:
    """Validate and tokenize (references in one call, candidates in another)."""
    cands, refs = validate_inputs(candidates, references)
    tok = get_tokenizer(tokenizer)
    flat = [r for group in refs for r in group]
    flat_tokens = _tokenized(tok, flat, "references")
    ref_tokens: list[tuple[Tokens, ...]] = []
    pos = 0
    for group in refs:
        ref_tokens.append(tuple(flat_tokens[pos : pos + len(group)]))
        pos += len(group)
    cand_tokens = tuple(_tokenized(tok, list(cands), "candidates"))
    return Batch(cands, refs, cand_tokens, tuple(ref_tokens), tok.name)


def _tokenized(tok: Tokenizer, texts: list[str], what: str) -> list[Tokens]:
    """``tok.tokenize_batch(texts)``, checked: one tuple of strings per text (a tokenizer of
    the caller's own may drop a caption or give lists or strings). capeval's own tokenizers
    give exactly that: their output is not checked again (a tenth of a batch's making)."""
    out = tok.tokenize_batch(texts)
    if type(tok) in TOKENIZERS.values():
        return out
    out = list(out)
    if len(out) != len(texts):
        raise InputError(
            f"the tokenizer {tok.name!r} gave {len(out)} token lists for {len(texts)} {what}"
        )
    _check_tokens(out, what, tok.name)
    return [t if type(t) is tuple else tuple(t) for t in out]


@dataclass(frozen=True, kw_only=True)
class MetricConfig:
    """Options of a metric; subclasses add fields with the paper's defaults."""


#: ``field(metadata=UNLESS_DEFAULT)``: an option left out of the signature while it holds its
#: default (an option added later that changes nothing at its default, so the signatures and
#: score-cache entries made before it stay valid)
UNLESS_DEFAULT: Mapping[str, str] = {"signature": "unless-default"}


class Metric(ABC):
    """Base class: subclasses set the class metadata and implement :meth:`segment`."""

    key: ClassVar[str]
    name: ClassVar[str]
    #: Keys this metric reports; the first is its primary key unless ``primary`` says otherwise.
    reports: ClassVar[tuple[str, ...]] = ()
    primary: ClassVar[str | None] = None
    #: Keys reported only when asked for (SPICE's categories): per-item values from the
    #: sufficient statistics (:meth:`optional_values`), NaN on items where they are undefined,
    #: so they stay out of ``report_keys`` and of what every caller scores by default.
    optional_reports: ClassVar[tuple[str, ...]] = ()
    higher_is_better: ClassVar[bool] = True
    bounds: ClassVar[tuple[float, float]] = (0.0, 1.0)
    #: what the number measures, in a phrase a reader without the paper follows (a score
    #: card's help; range and direction come from ``bounds`` and ``higher_is_better``)
    measures: ClassVar[str] = ""
    Config: ClassVar[type[MetricConfig]] = MetricConfig

    def __init__(
        self,
        *,
        tokenizer: str | Tokenizer = "ptb",
        config: MetricConfig | None = None,
        **options: Any,
    ) -> None:
        if config is not None and options:
            raise OptionError("pass either `config` or keyword options, not both")
        if config is None:
            config = self.configured(options)
        elif not isinstance(config, self.Config):
            raise OptionError(
                f"`config` of metric {self.key!r} must be a {self.Config.__name__} "
                f"(got {type(config).__name__})"
            )
        self.config = config
        self.tokenizer = get_tokenizer(tokenizer)

    @classmethod
    def configured(cls, options: Mapping[str, Any]) -> MetricConfig:
        """The metric's :attr:`Config` of keyword ``options``, every name and value checked
        (also for a metric a call does not score: its options were ignored unchecked)."""
        valid = [f.name for f in dataclasses.fields(cls.Config)]
        unknown = sorted(set(options) - set(valid))
        if unknown:
            raise OptionError(
                f"unknown option(s) {unknown} for metric {cls.key!r}; valid options: {valid}"
            )
        return cls.Config(**options)

    # -- metadata ---------------------------------------------------------------------------
    @classmethod
    def report_keys(cls) -> tuple[str, ...]:
        return cls.reports or (cls.key,)

    @classmethod
    def primary_key(cls) -> str:
        return cls.primary or cls.report_keys()[0]

    @classmethod
    def value_key(cls, key: str) -> str:
        """The reported key whose values ``key`` asks for: ``key`` itself where the metric
        reports it (``bleu_1``, ``spice_object``), the metric's value (``bleu_4``) for its own
        key (``bleu``). One rule for every caller: a copy that fell back to the value for
        any other key once gave SPICE's value under a category's name.

        >>> from capeval_core.metrics import metric_class
        >>> [metric_class(k).value_key(k) for k in ("bleu", "bleu_1", "spice_object")]
        ['bleu_4', 'bleu_1', 'spice_object']
        """
        if key in cls.report_keys() or key in cls.optional_reports:
            return key
        if key == cls.key:
            return cls.primary_key()
        raise UnknownKeyError(f"metric {cls.key!r} reports no {key!r}")

    @classmethod
    def label(cls, key: str) -> str:
        """Display name of a reported key (``"BLEU-2"`` for ``bleu_2``)."""
        return cls.name

    @classmethod
    def describe(cls, key: str | None = None) -> str:
        """One line to read a reported number by: what it measures, its range and direction
        (a bare number says none of it; issue 34).

        >>> from capeval_core.metrics import metric_class
        >>> print(metric_class("cider_d").describe())  # doctest: +ELLIPSIS
        CIDEr-D: agreement with the references on ...; range 0 to 10, higher is better.
        """
        lo, hi = cls.bounds
        better = "higher" if cls.higher_is_better else "lower"
        key = key or cls.primary_key()
        span = f"{lo:g} to {hi:g}".replace("-", "−")
        return f"{cls.label(key)}: {cls.measured(key)}; range {span}, {better} is better."

    @classmethod
    def measured(cls, key: str) -> str:
        """What the reported ``key`` measures: :attr:`measures`, unless a metric reporting
        several numbers says each one's (BLEU-2 is of 1 to 2 words, not of "n")."""
        return cls.measures

    @classmethod
    def card(cls) -> str:
        """The metric card (markdown) shipped with the package."""
        return (files("capeval_core.metrics") / "cards" / f"{cls.key}.md").read_text("utf-8")

    def resources(self) -> Mapping[str, str]:
        """Resource identities that enter the signature (embeddings, model versions, ...)."""
        return {}

    def signature(self) -> Signature:
        options = tuple(
            (f.name, getattr(self.config, f.name))
            for f in dataclasses.fields(self.config)
            if not (f.metadata == UNLESS_DEFAULT and getattr(self.config, f.name) == f.default)
        )
        return Signature(
            self.key, options, self.tokenizer.name, tuple(self.resources().items()), __version__
        )

    def segments_independent(self) -> bool:
        """Whether an item's value depends on its own candidate and references alone, so a
        batch may be scored in parts (in parallel) with the same per-item values. Metrics
        with corpus statistics (CIDEr-D's document frequencies) say no."""
        return True

    #: what :meth:`shared_work` does, as a progress bar names it ("spice: parsing new
    #: captions, 3 of 16")
    shared_work_label: ClassVar[str] = "preparing"

    def shared_work(self, batches: Sequence[Batch], pieces: int) -> list[Callable[[], Any]]:
        """Work that the parts of these batches, scored apart, would each repeat, as about
        ``pieces`` picklable calls to run before the parts (in worker processes); the calls
        leave their results in an on-disk cache that the parts read. Default: none (SPICE
        parses each distinct caption once this way)."""
        return []

    # -- what callers use -------------------------------------------------------------------
    def score(
        self, candidates: Sequence[str], references: Sequence[Sequence[str] | str]
    ) -> MetricResult:
        """Score candidates against their references: corpus value and one segment per item."""
        return self.score_batch(make_batch(candidates, references, self.tokenizer))

    def score_batch(self, batch: Batch, *, warn: bool = True) -> MetricResult:
        """Score an already tokenized batch (lets several metrics share one tokenization).

        Degenerate-input notes always go into ``MetricResult.warnings``; ``warn=False`` skips
        the Python warning (for callers that show the notes themselves, such as the app).
        """
        if batch.tokenizer != self.tokenizer.name:
            raise InputError(
                f"batch was tokenized with {batch.tokenizer!r} but metric {self.key!r} "
                f"uses {self.tokenizer.name!r}"
            )
        with collector_paused():
            prepared = self.prepare(batch)
            left_out = self.unscorable(batch, prepared)
            if left_out:
                return self._score_leaving_out(batch, prepared, left_out, warn)
            notes = tuple(self.set_notes(batch))
            for note in notes if warn else ():
                warnings.warn(note, DegenerateCorpusWarning, stacklevel=3)
            segments = []
            for i, (value, details) in enumerate(self.score_items(batch, prepared)):
                scores = value if isinstance(value, Mapping) else {self.primary_key(): float(value)}
                segments.append(SegmentScore(i, self.primary_key(), scores, details))
            if len(segments) != len(batch):  # a metric of one's own: its corpus value was
                # the mean of the scores it gave, and a join by position misplaced them
                raise CapevalError(
                    f"metric {self.key!r} gave {len(segments):,} scores for "
                    f"{len(batch):,} items: it must give one per item"
                )
            corpus, corpus_details = self.aggregate(segments, prepared)
        return MetricResult(
            self.primary_key(), corpus, tuple(segments), self.signature(), corpus_details, notes
        )

    def _score_leaving_out(
        self, batch: Batch, prepared: Any, left_out: Mapping[int, str], warn: bool
    ) -> MetricResult:
        """:meth:`score_batch` when some items cannot be scored: the others are scored as a
        set of their own (tokens as tokenized with all items, corpus statistics from the
        kept items alone: :meth:`prepare_kept`), the left-out items get NaN and the reason."""
        key, keys = self.primary_key(), self.report_keys()
        if warn:
            line = left_out_line(self.name, left_out, len(batch))
            warnings.warn(line, ItemsLeftOutWarning, stacklevel=4)
        kept = [i for i in range(len(batch)) if i not in left_out]
        segments: dict[int, SegmentScore] = {
            i: SegmentScore(i, key, dict.fromkeys(keys, math.nan), None, why)
            for i, why in left_out.items()
        }
        if not kept:
            corpus, corpus_details, notes = dict.fromkeys(keys, math.nan), None, ()
        else:
            sub = batch.subset(kept)
            sub_prepared = self.prepare_kept(sub, prepared)
            notes = tuple(self.set_notes(sub))
            for note in notes if warn else ():
                warnings.warn(note, DegenerateCorpusWarning, stacklevel=4)
            scored = []
            for i, (value, details) in zip(kept, self.score_items(sub, sub_prepared), strict=True):
                scores = value if isinstance(value, Mapping) else {key: float(value)}
                scored.append(SegmentScore(i, key, scores, details))
            segments.update((s.index, s) for s in scored)
            corpus, corpus_details = self.aggregate(scored, sub_prepared)
        return MetricResult(
            key,
            corpus,
            tuple(segments[i] for i in range(len(batch))),
            self.signature(),
            corpus_details,
            notes,
        )

    # -- what authors implement -------------------------------------------------------------
    def prepare(self, batch: Batch) -> Any:
        """Corpus statistics needed by :meth:`segment` (default: none)."""
        return None

    def unscorable(self, batch: Batch, prepared: Any) -> Mapping[int, str]:
        """The items of ``batch`` this metric cannot score, ``{index: reason}``: a limit the
        user set (SPICE's ``max_sentence_words``) or something the item alone needs that is
        not there (a caption the parser refuses). They are left out, every other item is
        scored (:meth:`prepare_kept`). Default: none. A resource every item needs (word
        vectors, a grammar) is not an item's: its absence raises
        :class:`~capeval_core.errors.MissingResourceError` and the metric is skipped."""
        return {}

    def prepare_kept(self, batch: Batch, prepared: Any) -> Any:
        """:meth:`prepare` for ``batch``, the items kept when :meth:`unscorable` leaves some
        out; ``prepared`` is what :meth:`prepare` gave for all items. Default: prepared
        again from the kept items, so corpus statistics (CIDEr-D's document frequencies) are
        the kept items' alone, as if the others were not in the set. A metric whose prepared
        data hold per-caption work that covers any subset (SPICE's parses) returns it."""
        return self.prepare(batch)

    def set_notes(self, batch: Batch) -> list[str]:
        """Notes on degenerate but valid input (raised as DegenerateCorpusWarning when
        scored). They follow from the batch's captions and the options alone, never from
        computed statistics, so that values read from a cache are noted as freshly scored
        ones are (``SystemsScores.notes``)."""
        return []

    def score_items(
        self, batch: Batch, prepared: Any
    ) -> Sequence[tuple[float | Mapping[str, float], Any]]:
        """Every item's value (or values by key) and details, in order: :meth:`segment` item
        by item. Metrics that score a whole batch faster at once (BLEU, CIDEr-D) override
        this, giving the same values as :meth:`segment` bit for bit."""
        return [
            self.segment(c, r, prepared)
            for c, r in zip(batch.candidate_tokens, batch.reference_tokens, strict=True)
        ]

    @abstractmethod
    def segment(
        self, candidate: Tokens, references: tuple[Tokens, ...], prepared: Any
    ) -> tuple[float | Mapping[str, float], Any]:
        """One item's value (or values by key) and its details dataclass."""

    def aggregate(
        self, segments: list[SegmentScore], prepared: Any
    ) -> tuple[dict[str, float], Any]:
        """Corpus values (default: arithmetic mean of the items, as coco-caption) and details."""
        corpus = {
            k: float(np.mean(np.array([s.scores[k] for s in segments]))) for k in self.report_keys()
        }
        return corpus, None

    # -- resampling (significance tests between systems) -------------------------------------
    def sufficient_statistics(self, result: MetricResult) -> dict[str, np.ndarray]:
        """Per-item arrays (one row per item), beyond the item values, that
        :meth:`item_statistics` needs to recompute the corpus value on resampled items.
        Default: none, the corpus value being the mean of the item values. Plain arrays, so
        scoring workers can send them back and the score cache can keep them."""
        return {}

    def optional_values(self, statistics: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        """Per-item values of :attr:`optional_reports` from :meth:`sufficient_statistics`
        (NaN where undefined). Default: none."""
        return {}

    def item_statistics(
        self,
        values: Mapping[str, np.ndarray],
        statistics: Mapping[str, np.ndarray],
        batch: Batch,
    ) -> ItemStatistics:
        """How this metric's corpus value is recomputed on resampled or swapped items.

        ``values`` maps every reported key to the item values, ``statistics`` holds
        :meth:`sufficient_statistics` and ``batch`` is the scored batch. Default: the mean
        of the item values, as the default :meth:`aggregate` takes it; a metric that
        aggregates otherwise overrides both (the registry's contract test checks that
        ``item_statistics(...).point()`` equals the corpus value bit for bit).
        """
        return MeanStatistics.from_values(self.report_keys(), values)

    def resampling(self, result: MetricResult, batch: Batch) -> ItemStatistics:
        """:meth:`item_statistics` of a result of this metric on ``batch``; over the items
        it scored when some are :attr:`~capeval_core.results.MetricResult.missing`."""
        if result.missing:
            result = result.scored()
            batch = batch.subset([s.index for s in result.segments])
        values = {k: np.asarray(result.segment_values(k), dtype=float) for k in result.corpus}
        return self.item_statistics(values, self.sufficient_statistics(result), batch)
