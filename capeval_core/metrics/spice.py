"""SPICE 1.0 without Java: SPICE-1.0's CoreNLP pipeline recomputed stage by stage (metric-spec §6).

coco-caption hands SPICE the PTB-tokenized captions (§6.1 step 1), so by default the joined
batch tokens are parsed; ``parse_input="raw"`` parses the original captions instead. All
captions of a batch are parsed once in :meth:`Spice.prepare` (batched, through the parse
cache of :mod:`capeval_core.spice.parse`); :meth:`Spice.segment` looks their tuples up by
text, builds the candidate graph and the merged reference graph, and matches tuples without a
one-to-one constraint (§6.2).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from capeval_core.errors import InputError, OptionError
from capeval_core.metrics.base import UNLESS_DEFAULT, Batch, Metric, MetricConfig
from capeval_core.options import check_bool, check_choice
from capeval_core.results import SegmentScore
from capeval_core.spice.graph import SceneGraph, concept_lookup
from capeval_core.spice.matching import (
    CATEGORIES,
    WORD_LIST_CATEGORIES,
    categories_of,
    match_tuples,
)
from capeval_core.spice.parse import (
    DEFAULT_PARSER,
    PARSERS,
    RETIRED_PARSERS,
    CaptionParser,
    model_identity,
    parse_into_cache,
    retired_parser_message,
)
from capeval_core.spice.rules import Tuple
from capeval_core.tokenize import Tokens


@dataclass(frozen=True, kw_only=True)
class SpiceConfig(MetricConfig):
    """``synsets=False`` is SPICE's ``-noSynsets`` (no synonym matching, no node merging);
    ``parse_input`` picks what is parsed: the batch tokens, as coco-caption, or raw text;
    ``parser`` is ``"stanford-pcfg"``, the only one (CoreNLP 3.6.0's PCFG itself, with the
    grammar the package ships: the jar's tuples); it stays an option so that signatures name
    it, and the retired ``"stanford-emulation"`` and ``"spacy-sm"`` get a message naming it.

    ``max_sentence_words`` bounds the parse's time and memory (they grow with the cube and
    the square of a sentence's length): a caption with a longer sentence, counted in the
    words SPICE-1.0's CoreNLP makes and cut into sentences as it cuts them, is not parsed,
    and the items with it (as candidate or reference) are left out of SPICE with that
    reason; every other item is scored. Default None: no limit, as the jar.

    >>> SpiceConfig(parser="stanford-emulation")
    Traceback (most recent call last):
    ...
    capeval_core.errors.OptionError: SPICE's parser 'stanford-emulation' (a learned emulation \
of the jar's parses) was retired: its numbers were not the SPICE jar's; use 'stanford-pcfg', \
SPICE-1.0's own CoreNLP 3.6.0 PCFG (the jar's numbers)
    """

    synsets: bool = True
    parse_input: str = "tokens"
    parser: str = DEFAULT_PARSER
    max_sentence_words: int | None = field(default=None, metadata=UNLESS_DEFAULT)

    def __post_init__(self) -> None:
        check_bool("synsets", self.synsets)
        check_choice("parse_input", self.parse_input, ("tokens", "raw"))
        if isinstance(self.parser, str) and self.parser in RETIRED_PARSERS:
            raise OptionError(retired_parser_message(self.parser))
        check_choice("parser", self.parser, tuple(PARSERS))
        limit = self.max_sentence_words
        if isinstance(limit, np.integer):  # as the int it equals (signatures print it so)
            limit = int(limit)
            object.__setattr__(self, "max_sentence_words", limit)
        if limit is not None and (
            not isinstance(limit, int) or isinstance(limit, bool) or limit < 1
        ):
            raise OptionError(
                f"`max_sentence_words` must be a whole number >= 1 or None (got {limit!r})"
            )


@dataclass(frozen=True)
class SpiceTuple:
    """One tuple as drawn: the strings of each concept, and how it matched.

    ``status`` is ``"exact"`` (its match, the first matching reference tuple, shares a
    string at every position), ``"synonym"`` (that match is through synsets) or
    ``"missed"``; reference tuples are ``"matched"`` (some candidate tuple's match, as the
    jar marks them) or ``"missed"``. ``match`` is, for candidate tuples, the index of that
    reference tuple (``None`` when missed or for reference tuples).
    """

    concepts: tuple[tuple[str, ...], ...]
    status: str
    match: int | None

    @property
    def kind(self) -> str:
        return ("object", "attribute", "relation")[len(self.concepts) - 1]

    def __str__(self) -> str:
        return "(" + ", ".join("/".join(c) for c in self.concepts) + ")"


@dataclass(frozen=True)
class SpiceCategory:
    """Counts and P/R/F of one category (NaN P/R/F where the reference has no such tuple)."""

    tp: int
    fp: int
    fn: int
    precision: float
    recall: float
    f: float


@dataclass(frozen=True)
class GraphView:
    """A scene graph ready to draw: nodes (object strings, attribute strings) and edges
    ``(source node, relation strings, target node)``."""

    nodes: tuple[tuple[tuple[str, ...], tuple[tuple[str, ...], ...]], ...]
    edges: tuple[tuple[int, tuple[str, ...], int], ...]


@dataclass(frozen=True)
class SpiceDetails:
    """Evidence of one item: tuples with match status, both graphs, per-category scores."""

    candidate: tuple[SpiceTuple, ...]
    reference: tuple[SpiceTuple, ...]
    candidate_graph: GraphView
    reference_graph: GraphView
    categories: Mapping[str, SpiceCategory]

    @property
    def f(self) -> float:
        return self.categories["All"].f


@dataclass(frozen=True)
class SpiceCorpusDetails:
    """SPICE's own summary: per category, the mean P/R/F over images where it is not NaN."""

    categories: Mapping[str, tuple[float, float, float]]
    images: Mapping[str, int]


@dataclass(frozen=True)
class SpicePrepared:
    """Tuples of every parsed caption, and a text parsed for each token sequence (what
    :meth:`Spice.segment`, given tokens alone, reads; with ``parse_input="raw"`` several
    captions can share tokens, so :meth:`Spice.score_items` scores each item on its own).

    ``reference_graphs`` memoises the merged reference graph of each reference set, keyed by
    the texts parsed (not their tokens, which raw captions differing in spacing or line
    breaks share): judgment sets score several candidates against the same references.
    """

    tuples: Mapping[str, tuple[Tuple, ...]]
    texts: Mapping[Tokens, str]
    reference_graphs: dict[tuple[str, ...], SceneGraph] = field(default_factory=dict)
    #: texts not parsed, and why: over ``max_sentence_words``, or refused by the parser
    refused: Mapping[str, str] = field(default_factory=dict)


def _parse_each_refusal(
    parser: CaptionParser, texts: list[str], refused: dict[str, str]
) -> dict[str, tuple[Tuple, ...]]:
    """``parser.parse(texts)``; when the parser refuses a caption (an :class:`InputError`),
    the texts are parsed again in halves (each parsed half goes to the parse cache) until
    the refused captions are alone: each goes into ``refused`` with the parser's message,
    the others are parsed. One caption never stops a batch."""
    if not texts:
        return {}
    try:
        return parser.parse(texts)
    except InputError as exc:
        if len(texts) == 1:
            refused[texts[0]] = f"the {parser.parser} parser refuses it: {exc}"
            return {}
    mid = len(texts) // 2
    out = _parse_each_refusal(parser, texts[:mid], refused)
    out.update(_parse_each_refusal(parser, texts[mid:], refused))
    return out


def _prf(tp: int, n_cand: int, n_ref: int, nan: bool) -> SpiceCategory:
    fp, fn = n_cand - tp, n_ref - tp
    if nan:
        return SpiceCategory(tp, fp, fn, math.nan, math.nan, math.nan)
    p = tp / (tp + fp) if tp + fp > 0 else 0.0
    r = tp / (tp + fn) if n_ref > 0 else 0.0
    f = 2 * p * r / (p + r) if p > 0 and r > 0 else 0.0
    return SpiceCategory(tp, fp, fn, p, r, f)


def category_scores(counts: Sequence[float]) -> dict[str, SpiceCategory]:
    """Each category's counts and P/R/F from a row of the ``category_counts`` statistic, as
    :meth:`Spice.segment` computes them.

    >>> category_scores([1, 1, 2] + [0, 0, 0] * 6)["All"].f
    0.4
    """
    out = {}
    for j, cat in enumerate(CATEGORIES):
        tp, fp, fn = (int(x) for x in counts[3 * j : 3 * j + 3])
        out[cat] = _prf(tp, tp + fp, tp + fn, nan=cat != "All" and tp + fn == 0)
    return out


#: the optional keys of SPICE's categories and the category each reports (SPICE's names)
CATEGORY_KEYS: Mapping[str, str] = {
    "spice_object": "Object",
    "spice_attribute": "Attribute",
    "spice_relation": "Relation",
    "spice_color": "Color",
    "spice_count": "Cardinality",
    "spice_size": "Size",
}
#: the sufficient statistic holding each item's category F-scores (columns: CATEGORY_KEYS)
CATEGORY_STATISTIC = "category_f"
#: the sufficient statistic holding each item's tp, fp and fn of every category of
#: ``CATEGORIES`` (columns: All's tp, fp, fn, then Object's, ...): with :func:`category_scores`
#: they give back SPICE's per-image output (what pycocoevalcap's ``Spice`` returns)
COUNTS_STATISTIC = "category_counts"


def _view(graph: SceneGraph) -> GraphView:
    nodes = tuple((n.obj.strings, tuple(a.strings for a in n.attributes)) for n in graph.nodes)
    edges = tuple((s, rel.strings, t) for s, rel, t in graph.edges)
    return GraphView(nodes, edges)


class Spice(Metric):
    """SPICE 1.0 (Anderson et al., 2016); the parse is chosen by ``parser`` (metric-spec §6).

    >>> r = Spice().score(["a kid on a couch"], [["a child sitting on a sofa"]])
    >>> [str(t) for t in r.segments[0].details.candidate]
    ['(kid)', '(couch)', '(kid, on, couch)']
    >>> [t.status for t in r.segments[0].details.candidate]
    ['synonym', 'synonym', 'missed']
    """

    key = "spice"
    name = "SPICE"
    bounds = (0.0, 1.0)
    measures = (
        "the F1 of the candidate's scene-graph tuples (objects, attributes, relations) "
        "against the references'"
    )
    Config = SpiceConfig
    #: SPICE's category F-scores, asked for by key ("can captioners count?", SPICE §5)
    optional_reports = tuple(CATEGORY_KEYS)
    shared_work_label = "parsing new captions"

    @classmethod
    def label(cls, key: str) -> str:
        """``"SPICE"``, or ``"SPICE Count"`` for ``spice_count``."""
        if key in CATEGORY_KEYS:
            return f"SPICE {key.removeprefix('spice_').capitalize()}"
        return cls.name

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._parser: CaptionParser | None = None
        self._lookup = None

    def resources(self) -> Mapping[str, str]:
        from capeval_core.meteor_resources import resource_identity

        out = {"model": model_identity(self.config.parser)}
        if self.config.synsets:  # not "synsets", the option's key: a signature names each once
            out["synset-data"] = resource_identity()
        return out

    def _synsets(self):
        if not self.config.synsets:
            return None
        if self._lookup is None:
            from capeval_core.meteor_resources import meteor_synsets

            # one loader shared with METEOR (§5.4, §6.1)
            self._lookup = concept_lookup(meteor_synsets().synsets_of)
        return self._lookup

    def _text(self, tokens: Tokens, caption: str) -> str:
        """The text parsed for one caption: its tokens joined, or itself when raw."""
        return caption if self.config.parse_input == "raw" else " ".join(tokens)

    def _item_texts(self, batch: Batch) -> list[tuple[str, tuple[str, ...]]]:
        """Each item's candidate text and reference texts, as parsed. Raw captions are kept
        apart even when their tokens are the same: U+0085 (NEL) splits words as a space
        does, but SPICE's CoreNLP reads it as an ellipsis; the PTB tokenizer lower-cases."""
        return [
            (self._text(c, craw), tuple(map(self._text, refs, raws)))
            for c, craw, refs, raws in zip(
                batch.candidate_tokens,
                batch.candidates,
                batch.reference_tokens,
                batch.references,
                strict=True,
            )
        ]

    def _texts(self, batch: Batch) -> dict[Tokens, str]:
        """A text parsed for each distinct token sequence of the batch (the first caption's
        with those tokens; see :class:`SpicePrepared`)."""
        texts: dict[Tokens, str] = {}
        pairs = [(batch.candidate_tokens[i], batch.candidates[i]) for i in range(len(batch))]
        for toks, raws in zip(batch.reference_tokens, batch.references, strict=True):
            pairs.extend(zip(toks, raws, strict=True))
        for toks, raw in pairs:
            texts.setdefault(tuple(toks), self._text(toks, raw))
        return texts

    def _all_texts(self, batch: Batch) -> list[str]:
        """Every distinct text the batch's items parse, candidates first."""
        items = self._item_texts(batch)
        out = dict.fromkeys(cand for cand, _ in items)
        for _, refs in items:
            out.update(dict.fromkeys(refs))
        return list(out)

    def _caption_parser(self) -> CaptionParser:
        if self._parser is None:
            self._parser = CaptionParser(self.config.parser)
        return self._parser

    def over_limit(self, texts: Iterable[str]) -> dict[str, str]:
        """The ``texts`` with a sentence longer than ``max_sentence_words``, and why (none
        without a limit). Words and sentences are SPICE-1.0's CoreNLP's (what the
        stanford-pcfg parser parses)."""
        limit = self.config.max_sentence_words
        if limit is None:
            return {}
        from capeval_core.spice.corenlp import corenlp_words, sentences

        out = {}
        for text in dict.fromkeys(texts):
            longest = max((len(s) for s in sentences(corenlp_words(text))), default=0)
            if longest > limit:
                out[text] = (
                    f"a sentence of {longest} words, over the limit of {limit} (max_sentence_words)"
                )
        return out

    def uncached(self, batch: Batch) -> int:
        """How many distinct captions of the batch the parse cache lacks (and would be
        parsed): the parse is SPICE's slow part, so a caller can say what is coming."""
        texts = self._all_texts(batch)
        skip = self.over_limit(texts)
        return len(self._caption_parser().uncached([t for t in texts if t not in skip]))

    def prepare(self, batch: Batch) -> SpicePrepared:
        """Parse every distinct caption of the batch once (batched, through the parse cache),
        but those over ``max_sentence_words``; a caption the parser refuses is recorded with
        its message (the items with it are left out: :meth:`unscorable`)."""
        texts = self._all_texts(batch)
        refused = self.over_limit(texts)
        wanted = [t for t in texts if t not in refused]
        tuples = _parse_each_refusal(self._caption_parser(), wanted, refused)
        return SpicePrepared(tuples, self._texts(batch), refused=refused)

    def unscorable(self, batch: Batch, prepared: SpicePrepared) -> dict[int, str]:
        """The items whose candidate or one of whose references was not parsed, and why."""
        if not prepared.refused:
            return {}
        refused = prepared.refused
        out = {}
        for i, (cand, refs) in enumerate(self._item_texts(batch)):
            if cand in refused:
                out[i] = f"candidate: {refused[cand]}"
                continue
            for j, text in enumerate(refs):
                if text in refused:
                    out[i] = f"reference {j + 1}: {refused[text]}"
                    break
        return out

    def prepare_kept(self, batch: Batch, prepared: SpicePrepared) -> SpicePrepared:
        """The parses of all items serve the kept ones (SPICE has no corpus statistics)."""
        return prepared

    def shared_work(self, batches: Sequence[Batch], pieces: int) -> list[Callable[[], Any]]:
        """The uncached captions of all parts, parsed once in chunks into the parse cache
        (parts of one set share captions: a caption can be another image's reference)."""
        parser = self._caption_parser()
        if not parser.use_cache:
            return []
        texts: dict[str, None] = {}
        for batch in batches:
            texts.update(dict.fromkeys(self._all_texts(batch)))
        skip = self.over_limit(texts)
        missing = parser.uncached([t for t in texts if t not in skip])
        if len(missing) < parser.parallel_min:
            return []
        size = max(parser.min_chunk, -(-len(missing) // pieces))
        return [
            functools.partial(parse_into_cache, missing[k : k + size], self.config.parser)
            for k in range(0, len(missing), size)
        ]

    def score_items(
        self, batch: Batch, prepared: SpicePrepared
    ) -> list[tuple[float, SpiceDetails]]:
        """Each item scored on its own captions' parses (:meth:`_item_texts`)."""
        return [self._score_texts(c, refs, prepared) for c, refs in self._item_texts(batch)]

    def segment(
        self, candidate: Tokens, references: tuple[Tokens, ...], prepared: SpicePrepared
    ) -> tuple[float, SpiceDetails]:
        """One item given as tokens, each read as the text ``prepared.texts`` holds for it
        (with raw captions, the first caption with those tokens)."""
        texts = prepared.texts
        return self._score_texts(
            texts[tuple(candidate)], tuple(texts[tuple(r)] for r in references), prepared
        )

    def _score_texts(
        self, candidate: str, references: tuple[str, ...], prepared: SpicePrepared
    ) -> tuple[float, SpiceDetails]:
        synsets = self._synsets()
        cand_graph = SceneGraph(synsets)
        cand_graph.add_tuples(prepared.tuples[candidate])
        ref_graph = prepared.reference_graphs.get(references)
        if ref_graph is None:  # all references of the image in one graph (§6.1)
            ref_graph = prepared.reference_graphs[references] = SceneGraph(synsets)
            for ref in references:
                ref_graph.add_tuples(prepared.tuples[ref])
        cand, ref = cand_graph.tuples(), ref_graph.tuples()
        use = synsets is not None
        first, status, ref_hit = match_tuples(cand, ref, use)
        tp = dict.fromkeys(CATEGORIES, 0)
        n_cand = dict.fromkeys(CATEGORIES, 0)
        n_ref = dict.fromkeys(CATEGORIES, 0)
        cand_cats = [categories_of(t) for t in cand]
        ref_cats = [categories_of(u) for u in ref]
        for cats, hit in zip(cand_cats, first, strict=True):
            for cat in cats:
                n_cand[cat] += 1
                tp[cat] += hit is not None
        for cats in ref_cats:
            for cat in cats:
                n_ref[cat] += 1
        # SPICE scores a category on both tuple sets filtered to it: a Color/Cardinality/Size
        # tuple counts only when it matches a reference tuple of that category (arity
        # categories need no second pass: tuples only match tuples of their arity)
        for cat in WORD_LIST_CATEGORIES:
            if n_cand[cat]:
                cand_c = [t for t, cats in zip(cand, cand_cats, strict=True) if cat in cats]
                ref_c = [u for u, cats in zip(ref, ref_cats, strict=True) if cat in cats]
                tp[cat] = sum(h is not None for h in match_tuples(cand_c, ref_c, use)[0])
        categories = {
            cat: _prf(tp[cat], n_cand[cat], n_ref[cat], nan=cat != "All" and n_ref[cat] == 0)
            for cat in CATEGORIES
        }
        details = SpiceDetails(
            tuple(
                SpiceTuple(tuple([c.strings for c in t]), s, m)
                for t, s, m in zip(cand, status, first, strict=True)
            ),
            tuple(
                SpiceTuple(tuple([c.strings for c in t]), "matched" if hit else "missed", None)
                for t, hit in zip(ref, ref_hit, strict=True)
            ),
            _view(cand_graph),
            _view(ref_graph),
            categories,
        )
        return categories["All"].f, details

    def sufficient_statistics(self, result: Any) -> dict[str, np.ndarray]:
        """Each item's F-score of every category of :data:`CATEGORY_KEYS` (NaN where its
        references have no such tuple), for the optional ``spice_*`` keys; the corpus value
        of ``spice`` itself is the mean of the item values."""
        rows = [
            [s.details.categories[cat].f for cat in CATEGORY_KEYS.values()] for s in result.segments
        ]
        counts = [
            [getattr(c, k) for c in s.details.categories.values() for k in ("tp", "fp", "fn")]
            for s in result.segments
        ]
        return {
            CATEGORY_STATISTIC: np.asarray(rows, dtype=float).reshape(-1, len(CATEGORY_KEYS)),
            COUNTS_STATISTIC: np.asarray(counts, dtype=float).reshape(-1, 3 * len(CATEGORIES)),
        }

    def optional_values(self, statistics: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        table = statistics.get(CATEGORY_STATISTIC)
        if table is None:
            return {}
        return {k: np.ascontiguousarray(table[:, j]) for j, k in enumerate(CATEGORY_KEYS)}

    def item_statistics(
        self, values: Mapping[str, np.ndarray], statistics: Mapping[str, np.ndarray], batch: Any
    ) -> Any:
        """The mean of the item values, as :meth:`aggregate`; with the category statistics,
        also each category's mean over the images where it is defined."""
        from capeval_core.metrics.statistics import MeanStatistics, NanMeanStatistics

        optional = self.optional_values(statistics)
        if not optional:
            return MeanStatistics.from_values(self.report_keys(), values)
        return NanMeanStatistics.from_values(
            (*self.report_keys(), *optional), {**values, **optional}
        )

    def aggregate(
        self, segments: list[SegmentScore], prepared: Any
    ) -> tuple[dict[str, float], SpiceCorpusDetails]:
        """SPICE = mean over images of the All F-score; categories as SPICE's own summary."""
        corpus = {"spice": float(np.mean([s.scores["spice"] for s in segments]))}
        cats: dict[str, tuple[float, float, float]] = {}
        counts: dict[str, int] = {}
        for cat in CATEGORIES:
            rows = [s.details.categories[cat] for s in segments]
            rows = [c for c in rows if not math.isnan(c.f)]
            counts[cat] = len(rows)
            cats[cat] = (
                tuple(
                    float(np.mean([getattr(c, k) for c in rows]))
                    for k in ("precision", "recall", "f")
                )
                if rows
                else (math.nan, math.nan, math.nan)
            )
        return corpus, SpiceCorpusDetails(cats, counts)
