"""Word Mover's Distance as the coco-caption WMD scorer computes it, with its transport plan.

Spec: metric-spec §7 (ruotianluo/coco-caption ``pycocoevalcap/wmd``, Kilickaya et al. 2017;
distance = gensim 4.4 ``KeyedVectors.wmdistance``). Per reference: stop words removed, OOV
words dropped, nBOW weights, Euclidean word-vector costs, exact EMD; similarity
``exp(-d / sigma)``; per image the best reference; corpus = mean over images.

The distance agrees with gensim's ``wmdistance`` on the same vectors to 1e-9 (tests), but is
computed on the two documents' word types only (gensim pads both to the union vocabulary with
zero-mass rows and columns, which the exact solver ignores) and keeps the plan.
"""

from __future__ import annotations

import functools
import math
import os
import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import accumulate, pairwise
from typing import TYPE_CHECKING

import numpy as np

from capeval_core.embeddings import Embeddings
from capeval_core.metrics.base import Batch, MetricConfig
from capeval_core.metrics.embedding_base import EmbeddingMetric
from capeval_core.options import check_bool, check_number
from capeval_core.stopwords import wmd_stopwords
from capeval_core.tokenize import Tokens

if TYPE_CHECKING:
    import pandas as pd

#: gensim 4.x: a cost matrix whose sum is below this is "all zeros" → distance +∞ (§7 step 6)
ZERO_COST_SUM = 1e-8
#: ``ot.emd``'s default iteration limit of the network simplex
EMD_MAX_ITER = 100_000


@dataclass(frozen=True, kw_only=True)
class WMDConfig(MetricConfig):
    """``normalize``: unit-normalise vectors before the Euclidean costs (gensim 4; False =
    gensim 3's raw vectors, as the published coco-caption numbers). ``sigma``: the scale of
    ``exp(-d / sigma)``."""

    normalize: bool = True
    sigma: float = 1.0

    def __post_init__(self) -> None:
        check_bool("normalize", self.normalize)
        object.__setattr__(self, "sigma", check_number("sigma", self.sigma, above=0))


@dataclass(frozen=True)
class Side:
    """One document as WMD sees it: tokens, what was removed, and the nBOW it becomes.

    ``words`` are the distinct kept word types in order of first occurrence and ``weights``
    their nBOW mass (count / number of kept tokens, §7 step 4).
    """

    tokens: Tokens
    stopwords: tuple[str, ...]
    oov: tuple[str, ...]
    words: tuple[str, ...]
    weights: tuple[float, ...]

    @property
    def kept(self) -> int:
        """Number of kept tokens (in vocabulary and not stop words)."""
        return len(self.tokens) - len(self.stopwords) - len(self.oov)


@dataclass(frozen=True, eq=False)
class WMDPair:
    """The candidate against one reference: costs, optimal plan, distance and similarity.

    ``cost`` and ``plan`` have one row per candidate word type (``candidate.words``) and one
    column per reference word type (``reference.words``); ``plan[i, j]`` is the word mass
    moved from candidate word i to reference word j, so its row sums are the candidate's
    nBOW weights and its column sums the reference's. Both are empty when the distance was
    decided before transport (an empty side, one word type, an all-zero cost matrix).
    """

    reference_index: int
    candidate: Side
    reference: Side
    cost: np.ndarray
    plan: np.ndarray
    distance: float
    similarity: float
    note: str = ""

    def flows(self) -> pd.DataFrame:
        """Tidy table of the mass moved (nonzero plan entries), ready for a Sankey chart."""
        import pandas as pd  # only here: scoring processes never pay its import

        rows = [
            {
                "candidate_word": self.candidate.words[i],
                "reference_word": self.reference.words[j],
                "mass": float(self.plan[i, j]),
                "cost": float(self.cost[i, j]),
            }
            for i, j in zip(*np.nonzero(self.plan), strict=True)
        ]
        return pd.DataFrame(rows, columns=["candidate_word", "reference_word", "mass", "cost"])


@dataclass(frozen=True, eq=False)
class WMDDetails:
    """Evidence for one item: one :class:`WMDPair` per reference and the winning one."""

    candidate: Tokens
    references: tuple[Tokens, ...]
    pairs: tuple[WMDPair, ...]
    best: int
    note: str = ""
    normalize: bool = True

    @property
    def winner(self) -> WMDPair:
        """The reference pair with the highest similarity (the first on ties)."""
        return self.pairs[self.best]

    @property
    def distance(self) -> float:
        return self.winner.distance

    @property
    def similarity(self) -> float:
        return self.winner.similarity

    def __str__(self) -> str:
        return (
            f"WMD d={self.distance:.6f} sim={self.similarity:.6f} "
            f"(reference {self.best} of {len(self.pairs)})"
            + (f"; {self.note}" if self.note else "")
        )


@dataclass(frozen=True, eq=False)
class _Doc:
    """A side with what the solver reads: its words' rows in the table, its nBOW weights as
    float64 and their sum (as numpy sums them: ``ot.emd`` rescales by it)."""

    side: Side
    rows: np.ndarray
    weights: np.ndarray
    mass: np.float64

    @classmethod
    def of(cls, side: Side, table: _VectorTable) -> _Doc:
        weights = np.array(side.weights)
        rows = np.array([table.row[w] for w in side.words], dtype=np.intp)
        return cls(side, rows, weights, weights.sum())


class _VectorTable:
    """The batch's word vectors, looked up once: word → row of a small float32 matrix; and
    each distinct caption's side, built once (the candidates of an image share references)."""

    def __init__(self, embeddings: Embeddings, words: set[str], normalize: bool) -> None:
        known = sorted(w for w in words if w in embeddings)
        self.row = {w: i for i, w in enumerate(known)}
        dim = embeddings.dimension
        self.matrix = (
            embeddings.vectors(known, normalize=normalize)
            if known
            else np.zeros((0, dim), dtype=np.float32)
        )
        self._docs: dict[Tokens, _Doc] = {}

    def doc(self, tokens: Tokens) -> _Doc:
        """The side of ``tokens`` with its rows and weights (memoised per caption)."""
        doc = self._docs.get(tokens)
        if doc is None:
            doc = self._docs[tokens] = _Doc.of(_side(tokens, self, wmd_stopwords()), self)
        return doc


def _side(tokens: Tokens, table: _VectorTable, stopwords: frozenset[str]) -> Side:
    """Stop words removed (as the coco-caption scorer does before calling gensim), then OOV
    words dropped (gensim, case-sensitive lookup), then nBOW weights (§7 steps 1 and 4)."""
    stop = tuple(t for t in tokens if t in stopwords)
    content = [t for t in tokens if t not in stopwords]
    oov = tuple(t for t in content if t not in table.row)
    kept = [t for t in content if t in table.row]
    counts = Counter(kept)  # insertion order = first occurrence
    n = len(kept)
    return Side(tokens, stop, oov, tuple(counts), tuple(c / float(n) for c in counts.values()))


def _costs(candidate: _Doc, references: Sequence[_Doc], table: _VectorTable) -> list[np.ndarray]:
    """§7 step 5: Euclidean costs in float64 (scipy's cdist, as gensim) on the float32 rows,
    per reference; one cdist for all of them, as each entry depends on its two rows only."""
    from scipy.spatial.distance import cdist

    m = table.matrix
    cost = cdist(m[candidate.rows], m[np.concatenate([r.rows for r in references])])
    edges = accumulate((len(r.rows) for r in references), initial=0)
    return [np.ascontiguousarray(cost[:, lo:hi]) for lo, hi in pairwise(edges)]


#: POT's switches for its optional array backends (WMD hands it numpy arrays only)
POT_BACKENDS_OFF = (
    "POT_BACKEND_DISABLE_PYTORCH",
    "POT_BACKEND_DISABLE_JAX",
    "POT_BACKEND_DISABLE_CUPY",
    "POT_BACKEND_DISABLE_TENSORFLOW",
)


@functools.cache
def _emd_solver():
    """POT's network simplex and its result check.

    Importing POT imports PyTorch, JAX, CuPy and TensorFlow wherever they are installed
    (seconds and hundreds of MB in every process, scoring workers included), none of which
    WMD uses; so unless POT is already loaded, its own switches turn them off for the import
    and are put back afterwards.
    """
    if "ot" not in sys.modules:
        unset = [k for k in POT_BACKENDS_OFF if k not in os.environ]
        os.environ.update(dict.fromkeys(unset, "1"))
        try:
            import ot.lp.emd_wrap  # noqa: F401
        finally:
            for key in unset:
                os.environ.pop(key, None)
    from ot.lp.emd_wrap import check_result, emd_c

    return emd_c, check_result


def _emd(a: _Doc, b: _Doc, cost: np.ndarray) -> np.ndarray:
    """The optimal plan, as ``ot.emd(a, b, cost)`` computes it: the same solver call on the
    same arrays (positive float64 weights, C-ordered float64 costs), without the wrapper's
    backend dispatch, marginal check and dual centring (the duals are not used), which take
    four times as long as the solve on these small problems (POT 0.9.4 to 0.9.7)."""
    emd_c, check_result = _emd_solver()
    b_weights = b.weights * a.mass / b.mass  # ot.emd gives b the mass of a, in this order
    plan, _, _, _, code = emd_c(a.weights, b_weights, cost, EMD_MAX_ITER, 1)
    check_result(code)  # warns, as ot.emd does, when the solver stopped short of optimal
    return plan


def _distance(
    candidate: _Doc, reference: _Doc, cost: np.ndarray
) -> tuple[float, np.ndarray, np.ndarray, str]:
    """``(distance, cost, plan, note)`` of two nBOW documents whose costs are known."""
    empty = np.zeros((0, 0))
    cand, ref = candidate.side, reference.side
    # §7 step 2: an empty side (all stop words / OOV) → +∞
    if not cand.words or not ref.words:
        side = "candidate" if not cand.words else "reference"
        return math.inf, empty, empty, f"{side} has no in-vocabulary content word"
    # §7 step 3: one word type in the union → 0 (both sides hold that one word)
    if len(cand.words) == 1 and cand.words == ref.words:
        return 0.0, np.zeros((1, 1)), np.ones((1, 1)), "one word type on both sides"
    # §7 step 6 (gensim 4.x): an (almost) all-zero cost matrix → +∞. The costs are >= 0, so
    # their sum is at least the first one: only a matrix that starts near zero needs summing
    if cost[0, 0] < ZERO_COST_SUM and abs(cost.sum()) < ZERO_COST_SUM:
        return math.inf, cost, np.zeros_like(cost), "all word costs are zero"
    # §7 step 7: exact EMD (POT's network simplex); the plan's cost is the distance
    plan = _emd(candidate, reference, cost)
    return float((plan * cost).sum()), cost, plan, ""


def word_movers_distance(
    candidate: Side, reference: Side, table: _VectorTable
) -> tuple[float, np.ndarray, np.ndarray, str]:
    """``(distance, cost, plan, note)`` of two nBOW documents, following gensim 4.4's
    ``wmdistance`` step by step (metric-spec §7)."""
    cand, ref = _Doc.of(candidate, table), _Doc.of(reference, table)
    return _distance(cand, ref, _costs(cand, [ref], table)[0])


class WMD(EmbeddingMetric):
    """exp(−WMD/σ) against the closest reference, as coco-caption's WMD scorer (§7).

    Heavy resources are injected: ``WMD(embeddings=load_embeddings(path))``; without one the
    default GloVe 6B 50-d vectors are used (loaded once per process).

    >>> r = WMD().score(["a man rides a horse on the beach"],
    ...                 [["a person riding a horse along the shore"]])
    >>> round(r.segments[0].details.distance, 6), round(r.value, 6)
    (0.648317, 0.522925)
    >>> r.segments[0].details.winner.candidate.words
    ('man', 'rides', 'horse', 'beach')
    """

    key = "wmd"
    name = "WMD"
    bounds = (0.0, 1.0)
    measures = (
        "how little the candidate's words must move in meaning to become the closest "
        "reference's: exp(−distance/σ) of the Word Mover's Distance over word vectors"
    )
    Config = WMDConfig

    def prepare(self, batch: Batch) -> _VectorTable:
        words = {t for toks in batch.candidate_tokens for t in toks}
        words |= {t for refs in batch.reference_tokens for toks in refs for t in toks}
        return _VectorTable(self.embeddings, words - wmd_stopwords(), self.config.normalize)

    def segment(
        self, candidate: Tokens, references: tuple[Tokens, ...], prepared: _VectorTable | None
    ) -> tuple[float, WMDDetails]:
        stopwords = wmd_stopwords()
        table = prepared
        if table is None:  # called outside score(): look up this item's words only
            words = set(candidate).union(*references) - stopwords
            table = _VectorTable(self.embeddings, words, self.config.normalize)
        cand = table.doc(candidate)
        refs = [table.doc(r) for r in references]
        costs = _costs(cand, refs, table)
        pairs = []
        for j, ref in enumerate(refs):
            distance, cost, plan, note = _distance(cand, ref, costs[j])
            # §7: similarity exp(-d / sigma); +∞ → 0
            similarity = 0.0 if math.isinf(distance) else math.exp(-distance / self.config.sigma)
            for arr in (cost, plan):
                arr.setflags(write=False)
            pairs.append(WMDPair(j, cand.side, ref.side, cost, plan, distance, similarity, note))
        # §7: per image the max over references (first on ties)
        best = max(range(len(pairs)), key=lambda k: (pairs[k].similarity, -k))
        note = ""
        if not cand.side.words:
            note = "candidate has no in-vocabulary content word (all stop words or OOV): 0"
        elif all(math.isinf(p.distance) for p in pairs):
            note = "no reference could be compared (distance +inf): 0"
        details = WMDDetails(
            candidate, references, tuple(pairs), best, note, normalize=self.config.normalize
        )
        return pairs[best].similarity, details


__all__ = ["WMD", "Side", "WMDConfig", "WMDDetails", "WMDPair", "word_movers_distance"]
