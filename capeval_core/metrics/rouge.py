"""ROUGE-L (longest common subsequence F-measure, β = 1.2) as coco-caption computes it.

Spec: metric-spec §3 (pycocoevalcap 1.2 ``Rouge``): precision and recall are maximised over
the references independently, then combined.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from capeval_core.metrics.base import Metric, MetricConfig
from capeval_core.options import check_number
from capeval_core.tokenize import Tokens


@dataclass(frozen=True, kw_only=True)
class RougeConfig(MetricConfig):
    """``beta``: weight of recall against precision in the F-measure (coco-caption: 1.2)."""

    beta: float = 1.2

    def __post_init__(self) -> None:
        # the F-measure squares beta, which must stay a finite float
        object.__setattr__(self, "beta", check_number("beta", self.beta, above=0, at_most=1e150))


def lcs_length(a: Tokens, b: Tokens) -> int:
    """Length of the longest common subsequence (bit-parallel, Allison–Dix / Hyyrö).

    >>> lcs_length(("a", "b", "c", "d"), ("b", "d", "a"))
    2
    """
    if not a or not b:
        return 0
    masks: dict[str, int] = {}
    for i, tok in enumerate(a):
        masks[tok] = masks.get(tok, 0) | (1 << i)
    row = 0
    for tok in b:
        m = masks.get(tok, 0)
        x = m | row
        row = x & ~(x - ((row << 1) | 1))
    return row.bit_count()


def lcs_pairs(a: Tokens, b: Tokens) -> tuple[tuple[int, int], ...]:
    """Index pairs ``(i, j)`` with ``a[i] == b[j]`` of one longest common subsequence.

    >>> lcs_pairs(("a", "b", "c"), ("a", "c"))
    ((0, 0), (2, 1))
    """
    n, m = len(a), len(b)
    table = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(n - 1, -1, -1):
        row, below = table[i], table[i + 1]
        for j in range(m - 1, -1, -1):
            row[j] = below[j + 1] + 1 if a[i] == b[j] else max(below[j], row[j + 1])
    pairs = []
    i = j = 0
    while i < n and j < m:
        if a[i] == b[j]:
            pairs.append((i, j))
            i += 1
            j += 1
        elif table[i + 1][j] >= table[i][j + 1]:
            i += 1
        else:
            j += 1
    return tuple(pairs)


@dataclass(frozen=True)
class RougeReference:
    """LCS of the candidate with one reference, and that reference's P and R."""

    tokens: Tokens
    lcs: int
    precision: float
    recall: float
    f_measure: float


@dataclass(frozen=True)
class RougeDetails:
    """Evidence for one item: per-reference LCS, the maxima and the F-measure."""

    candidate: Tokens
    references: tuple[RougeReference, ...]
    precision: float
    recall: float
    f_measure: float

    @functools.cached_property
    def best_reference(self) -> int:
        """Index of the first reference with the highest F of its own (for drawing)."""
        fs = [r.f_measure for r in self.references]
        return fs.index(max(fs))

    def lcs_pairs(self, reference: int) -> tuple[tuple[int, int], ...]:
        """(candidate index, reference index) pairs of one LCS with ``reference``."""
        return lcs_pairs(self.candidate, self.references[reference].tokens)


def f_measure(precision: float, recall: float, beta: float) -> float:
    """coco-caption's F_β, 0 when either side is 0 (same float operations as the reference)."""
    if precision == 0 or recall == 0:
        return 0.0
    return ((1 + beta**2) * precision * recall) / float(recall + beta**2 * precision)


def _as_split(tokens: Tokens) -> Tokens:
    # coco-caption splits the joined string on " ": an empty caption is one empty token
    return tokens if tokens else ("",)


class RougeL(Metric):
    """ROUGE-L (Lin 2004) with β = 1.2, per pycocoevalcap 1.2.

    >>> r = RougeL(tokenizer="whitespace").score(["a cat sits on a mat"], [["a cat is on a mat"]])
    >>> round(r.value, 6)
    0.833333
    """

    key = "rouge_l"
    name = "ROUGE-L"
    measures = (
        "the longest sequence of the candidate's words found in a reference in the same "
        "order, not necessarily side by side (an F-measure of its precision and recall, "
        "β = 1.2)"
    )
    Config = RougeConfig

    def segment(self, candidate: Tokens, references: tuple[Tokens, ...], prepared: None):
        beta = self.config.beta
        cand = _as_split(candidate)
        per_ref = []
        for ref_tokens in references:
            ref = _as_split(ref_tokens)
            lcs = lcs_length(ref, cand)
            p_r, r_r = lcs / float(len(cand)), lcs / float(len(ref))
            per_ref.append(RougeReference(ref, lcs, p_r, r_r, f_measure(p_r, r_r, beta)))
        # maxima taken independently, possibly from different references (spec §3)
        p = max(r.precision for r in per_ref)
        r = max(r.recall for r in per_ref)
        f = f_measure(p, r, beta)
        return f, RougeDetails(cand, tuple(per_ref), p, r, f)
