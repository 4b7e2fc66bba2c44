"""METEOR 1.5 in pure Python, number for number with the ``meteor-1.5.jar`` coco-caption runs.

Spec: metric-spec §5. coco-caption sends each image to the jar as
``SCORE ||| ref1 ||| ... ||| refN ||| hyp`` (space-joined PTB tokens, §5.1); the jar splits the
line on ``|||``, normalises every part (§5.2), aligns the hypothesis with each reference through
four matchers and a beam search (§5.4-§5.5), keeps the statistics of the best reference
(§5.6-§5.7) and finally scores the corpus from the summed statistics (§5.8). Every quirk of
the jar is reproduced on purpose and marked with its spec section.
"""

from __future__ import annotations

import functools
import itertools
import math
import numbers
import operator
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np

from capeval_core.errors import OptionError
from capeval_core.java_lower import unicode13_lower
from capeval_core.metrics.base import Batch, Metric, MetricConfig
from capeval_core.metrics.statistics import SummedStatistics
from capeval_core.options import check_choice, check_number
from capeval_core.results import MetricResult, SegmentScore
from capeval_core.tokenize import Tokens

#: The matchers in the jar's order (module index 0..3, §5.1).
MODULES: tuple[str, ...] = ("exact", "stem", "synonym", "paraphrase")
EXACT, STEM, SYNONYM, PARAPHRASE = range(4)

#: §5.5 step 3: the scorer overwrites the aligner's weights with these for the search.
SEARCH_WEIGHTS: tuple[float, ...] = (1.0, 0.5, 0.5, 0.5)
BEAM_SIZE = 40

#: English parameters per task (§5.1): alpha, beta, gamma, delta, module weights.
TASKS: dict[str, tuple[float, float, float, float, tuple[float, float, float, float]]] = {
    "rank": (0.85, 0.20, 0.60, 0.75, (1.0, 0.6, 0.8, 0.6)),
    "adq": (0.75, 1.40, 0.45, 0.70, (1.0, 1.0, 0.6, 0.8)),
    "hter": (0.40, 1.50, 0.35, 0.55, (1.0, 0.2, 0.6, 0.8)),
    "li": (0.75, 1.40, 0.70, 0.50, (1.0, 0.5, 0.5, 0.5)),
    "tune": (0.5, 1.0, 0.5, 0.5, (1.0, 0.5, 0.5, 0.5)),
    "util": (0.65, 0.10, 0.55, 0.65, (1.0, 0.0, 0.0, 0.8)),
}


#: the task a signature names when the parameters used are no preset's (the jar's report
#: says "Task: Custom" once -p or -w is given); as an option, it takes every parameter
CUSTOM = "custom"
PARAMETER_NAMES = ("alpha", "beta", "gamma", "delta", "weights")


@dataclass(frozen=True, kw_only=True)
class MeteorConfig(MetricConfig):
    """``task`` picks the jar's English parameter set (its ``-t``); ``alpha``, ``beta``,
    ``gamma``, ``delta`` and ``weights`` override single values (the jar's ``-p`` and ``-w``
    override the four parameters, and the four weights, together).

    Parameters left as ``None`` are filled in from the task, so the signature records the
    values used, and its ``task`` says whose they are: the preset whose values they all
    are, else ``"custom"`` (as the jar's report says "Task: Custom" once ``-p`` or ``-w`` is
    given, its run id naming the values alone). So a task whose values were all replaced
    is not named as if it had counted, and one set of values has one signature however it
    was given. ``task="custom"`` takes every parameter (a signature passed back).

    >>> MeteorConfig(task="adq", alpha=0.5).task, MeteorConfig(alpha=0.85).task
    ('custom', 'rank')
    >>> MeteorConfig(task="custom", alpha=0.5)
    Traceback (most recent call last):
    ...
    capeval_core.errors.OptionError: `task` 'custom' takes every parameter: give beta, gamma, \
delta, weights too (or a task whose values fill them in)
    """

    task: str = "rank"
    alpha: float | None = None
    beta: float | None = None
    gamma: float | None = None
    delta: float | None = None
    weights: tuple[float, float, float, float] | None = None

    def __post_init__(self) -> None:
        check_choice("task", self.task, [*sorted(TASKS), CUSTOM])
        if self.task == CUSTOM:
            missing = [name for name in PARAMETER_NAMES if getattr(self, name) is None]
            if missing:
                raise OptionError(
                    f"`task` {CUSTOM!r} takes every parameter: give {', '.join(missing)} too "
                    "(or a task whose values fill them in)"
                )
            alpha, beta, gamma, delta, weights = TASKS["rank"]  # each replaced below
        else:
            alpha, beta, gamma, delta, weights = TASKS[self.task]
        defaults = {"alpha": alpha, "beta": beta, "gamma": gamma, "delta": delta}
        for name, default in defaults.items():
            value = getattr(self, name)
            if value is not None:
                value = check_number(
                    name, value, at_least=0.0, at_most=None if name == "beta" else 1.0
                )
            object.__setattr__(self, name, default if value is None else value)
        w = weights if self.weights is None else self.weights
        if isinstance(w, np.ndarray) and w.ndim == 1:  # a notebook's array of four weights
            w = w.tolist()
        if (
            isinstance(w, str | bytes)
            or not isinstance(w, Sequence)
            or len(w) != len(MODULES)
            or any(isinstance(x, bool) or not isinstance(x, numbers.Real) for x in w)
            or any(not 0.0 <= float(x) <= 1.0 for x in w)
        ):
            raise OptionError(
                f"`weights` must be {len(MODULES)} numbers in [0, 1], one per module "
                f"{MODULES} (got {self.weights!r})"
            )
        # as floats, -0.0 as 0.0: one signature for one set of weights (1 and 1.0 alike)
        object.__setattr__(self, "weights", tuple(float(x) + 0.0 for x in w))
        used = self.parameters
        named = next((task for task, values in TASKS.items() if values == used), CUSTOM)
        object.__setattr__(self, "task", named)

    @property
    def parameters(self) -> tuple[float, float, float, float, tuple[float, ...]]:
        return (self.alpha, self.beta, self.gamma, self.delta, self.weights)  # type: ignore[return-value]


# -- §5.1: the strings the jar sees -------------------------------------------------------------


_JAVA_TRIMMED = "".join(map(chr, range(0x21)))


def _java_trim(s: str) -> str:
    """Java's ``String.trim``: strips every character up to U+0020, nothing else."""
    return s.strip(_JAVA_TRIMMED)


def jar_inputs(candidate: Tokens, references: Sequence[Tokens]) -> tuple[str, tuple[str, ...]]:
    """The hypothesis and references as the jar receives them from pycocoevalcap (§5.1).

    pycocoevalcap removes ``|||`` from the hypothesis and halves double spaces once, but not
    in the references; the jar then splits the whole ``SCORE`` line on ``|||``. So a
    reference containing ``|||`` reaches the jar as several references, which capeval
    reproduces (the details list the references as the jar saw them).

    >>> jar_inputs(("a", "|||", "dog"), [("a", "cat"), ("x", "|||", "y")])
    ('a dog', ('a cat', 'x', 'y'))
    """
    hyp = " ".join(candidate).replace("|||", "").replace("  ", " ")
    line = " ||| ".join(("SCORE", " ||| ".join(" ".join(r) for r in references), hyp))
    parts = [_java_trim(p) for p in line.split("|||")]
    return parts[-1], tuple(parts[1:-1])


# -- §5.2: normalisation ------------------------------------------------------------------------

_ALPHA = (
    "A-Za-z\u0160\u017d\u0161\u017e\u0178\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u017e"
    "\u0400-\u0527\ua640-\ua66e\ua67e-\ua697\u1d00-\u1d7f"
)
_ALNUM = _ALPHA + "0-9"
_SEPARATE = re.compile(f"([^{_ALNUM} \\t\\n\\x0b\\x0c\\r.'`,\\-\u2018\u2019])")  # step 2
_MULTIDOT = re.compile(r"\.(\.+)")  # step 3
_DOTMULTI_NEXT = re.compile(r"DOTMULTI\.([^.])")  # step 4
_COMMAS = (  # step 5: a comma between two digits stays
    re.compile(r"([^0-9]),([^0-9])"),
    re.compile(r"([0-9]),([^0-9])"),
    re.compile(r"([^0-9]),([0-9])"),
)
_HYPHEN = re.compile(f"([{_ALNUM}.])-([{_ALNUM}])")  # step 8
_APOSTROPHES = (  # step 9, English rules in the jar's order
    (re.compile(f"([^{_ALPHA}])'([^{_ALPHA}])"), r"\1 ' \2"),
    (re.compile(f"([^{_ALPHA}0-9])'([{_ALPHA}])"), r"\1 ' \2"),
    (re.compile(f"([{_ALPHA}])'([^{_ALPHA}])"), r"\1 ' \2"),
    (re.compile(f"([{_ALPHA}])'([{_ALPHA}])"), r"\1 '\2"),
    (re.compile(r"([0-9])'(s)"), r"\1 '\2"),
)
_HAS_ALPHA = re.compile(f"[{_ALPHA}]")
_WIDE_SPACES = re.compile("[ \u00a0\u2000-\u200a\u202f\u205f\u3000]+")  # step 12
_TOKEN_SEPARATORS = re.compile("[ \t\n\r\x0c]+")  # java.util.StringTokenizer's defaults
_PLAIN = re.compile("[a-z0-9 ]*")


@functools.lru_cache(maxsize=1 << 16)
def normalize(text: str) -> Tokens:
    """The jar's ``-norm`` normalisation (English, punctuation kept) and its word split (§5.2).

    >>> normalize("A black-and-white t-shirt (really)...")
    ('a', 'black', 'and', 'white', 't', 'shirt', '(', 'really', ')', '...')
    """
    if _PLAIN.fullmatch(text):
        # lower-case letters, digits and spaces only (most PTB output): every rewriting step
        # below is a no-op, only the final split on spaces remains
        return tuple(w for w in text.split(" ") if w)
    from capeval_core.meteor_resources import nonbreaking_prefixes

    s = _SEPARATE.sub(r" \1 ", " " + text + " ")  # steps 1-2
    s = _MULTIDOT.sub(r" DOTMULTI\1", s)  # step 3
    while "DOTMULTI." in s:  # step 4
        s = _DOTMULTI_NEXT.sub(r"DOTDOTMULTI \1", s)
        s = s.replace("DOTMULTI.", "DOTDOTMULTI")
    for pattern in _COMMAS:  # step 5
        s = pattern.sub(r"\1 , \2", s)
    s = s.replace("`", "'").replace("\u2018", "'").replace("\u2019", "'")  # step 6
    s = s.replace("\u201c", ' " ').replace("\u201d", ' " ').replace("''", ' " ')
    s = s.replace("\u2013", "-").replace("--", "-")  # step 7
    s = _HYPHEN.sub(r"\1 \2", s)  # step 8: intra-word hyphens split the word
    for pattern, repl in _APOSTROPHES:  # step 9
        s = pattern.sub(repl, s)
    # step 10: a final period is split off unless it belongs to an abbreviation; the words
    # are java.util.StringTokenizer's, so a vertical tab (Java's \s, not its) stays inside one
    tokens = [t for t in _TOKEN_SEPARATORS.split(s) if t]
    prefixes = nonbreaking_prefixes()
    out = []
    last = len(tokens) - 1
    for j, tok in enumerate(tokens):
        if len(tok) > 1 and tok.endswith("."):
            pre = tok[:-1]
            nxt = tokens[j + 1] if j < last else ""
            if "." in pre and _HAS_ALPHA.search(pre):
                tok = tok.replace(".", "")
            elif not (
                prefixes.get(pre) == 1
                or "a" <= nxt[:1] <= "z"
                or (prefixes.get(pre) == 2 and "0" <= nxt[:1] <= "9")
            ):
                tok = pre + " ."
        out.append(tok)
    s = " ".join(out)
    while "DOTDOTMULTI" in s:  # step 11
        s = s.replace("DOTDOTMULTI", "DOTMULTI.")
    s = s.replace("DOTMULTI", ".")
    s = unicode13_lower(_java_trim(_WIDE_SPACES.sub(" ", s)))  # steps 12-13, as Java 17 lowers
    return tuple(w for w in _TOKEN_SEPARATORS.split(s) if w)


# -- evidence types -----------------------------------------------------------------------------


class MeteorMatch(NamedTuple):
    """One aligned span: reference words ``[ref_start, ref_start + ref_len)`` with hypothesis
    words ``[hyp_start, hyp_start + hyp_len)``, found by module ``module`` (index in MODULES).
    """

    ref_start: int
    ref_len: int
    hyp_start: int
    hyp_len: int
    module: int

    @property
    def module_name(self) -> str:
        return MODULES[self.module]

    @property
    def ref_end(self) -> int:
        return self.ref_start + self.ref_len

    @property
    def hyp_end(self) -> int:
        return self.hyp_start + self.hyp_len


def _java_double(x: int) -> str:
    """``Double.toString`` of an integer-valued double, as the jar prints statistics."""
    if abs(x) < 10_000_000:
        return f"{x}.0"
    digits = str(abs(x))
    mantissa = digits[0] + "." + (digits[1:].rstrip("0") or "0")
    return f"{'-' if x < 0 else ''}{mantissa}E{len(digits) - 1}"


@dataclass(frozen=True)
class MeteorStats:
    """The jar's 23 sufficient statistics of one (hypothesis, reference) pair (§5.8).

    Per-module tuples are indexed like :data:`MODULES`.
    """

    hyp_length: int
    ref_length: int
    hyp_function_words: int
    ref_function_words: int
    content_hyp: tuple[int, int, int, int]
    content_ref: tuple[int, int, int, int]
    function_hyp: tuple[int, int, int, int]
    function_ref: tuple[int, int, int, int]
    chunks: int
    matched_hyp: int
    matched_ref: int

    def as_tuple(self) -> tuple[int, ...]:
        """The 23 numbers in the jar's order."""
        stages = []
        for m in range(len(MODULES)):
            stages += [
                self.content_hyp[m],
                self.content_ref[m],
                self.function_hyp[m],
                self.function_ref[m],
            ]
        return (
            self.hyp_length,
            self.ref_length,
            self.hyp_function_words,
            self.ref_function_words,
            *stages,
            self.chunks,
            self.matched_hyp,
            self.matched_ref,
        )

    def line(self) -> str:
        """The statistics line exactly as the jar prints it (``"8.0 7.0 ..."``)."""
        return " ".join(_java_double(x) for x in self.as_tuple())

    @classmethod
    def from_numbers(cls, numbers: Sequence[float]) -> MeteorStats:
        """Parse 23 numbers; the matched totals are recomputed from the stages, as EVAL does."""
        if len(numbers) != 23:
            raise ValueError(f"a METEOR statistics line has 23 numbers (got {len(numbers)})")
        v = [round(float(x)) for x in numbers]
        stages = [v[4 + 4 * m : 8 + 4 * m] for m in range(len(MODULES))]
        c_h, c_r, f_h, f_r = (tuple(s[k] for s in stages) for k in range(4))
        return cls(
            v[0], v[1], v[2], v[3], c_h, c_r, f_h, f_r,  # type: ignore[arg-type]
            v[20], sum(c_h) + sum(f_h), sum(c_r) + sum(f_r),
        )  # fmt: skip

    @classmethod
    def from_row(cls, v: Sequence[int]) -> MeteorStats:
        """The 23 integers in the jar's order, taken as they are (the matched totals too)."""
        return cls(
            v[0], v[1], v[2], v[3],
            (v[4], v[8], v[12], v[16]), (v[5], v[9], v[13], v[17]),
            (v[6], v[10], v[14], v[18]), (v[7], v[11], v[15], v[19]),
            v[20], v[21], v[22],
        )  # fmt: skip

    @property
    def perfect(self) -> bool:
        """Every word of both sides matched, in a single chunk (§5.7, §5.8)."""
        return (
            self.matched_hyp == self.hyp_length
            and self.matched_ref == self.ref_length
            and self.chunks == 1
        )


def _div(a: float, b: float) -> float:
    """Division with Java's IEEE semantics (x/0 is ±inf or NaN, never an exception)."""
    if b == 0.0:
        if a == 0.0 or math.isnan(a):
            return math.nan
        return math.copysign(math.inf, a) * math.copysign(1.0, b)
    return a / b


@dataclass(frozen=True)
class MeteorScore:
    """Precision, recall, F-mean, fragmentation, penalty and score from statistics (§5.7)."""

    precision: float
    recall: float
    fmean: float
    fragmentation: float
    penalty: float
    score: float


def score_statistics(
    stats: MeteorStats, parameters: tuple[float, float, float, float, Sequence[float]]
) -> MeteorScore:
    """§5.7, in the jar's order of floating-point operations: the weighted matches add up
    every module's content words (count x weight x delta) before any function word
    (count x weight x (1 - delta)), and ``frag ** beta`` is the jar's ``Math.pow``
    (:func:`capeval_core.meteor_pow.jar_pow`).

    >>> s = MeteorStats.from_numbers([3, 3, 1, 1, 2, 2, 1, 1] + [0] * 12 + [1, 3, 3])
    >>> score_statistics(s, MeteorConfig().parameters).score
    1.0
    """
    from capeval_core.meteor_pow import jar_pow

    alpha, beta, gamma, delta, weights = parameters
    lw_h = (
        delta * (stats.hyp_length - stats.hyp_function_words)
        + (1.0 - delta) * stats.hyp_function_words
    )
    lw_r = (
        delta * (stats.ref_length - stats.ref_function_words)
        + (1.0 - delta) * stats.ref_function_words
    )
    mw_h = 0.0
    for m, w in enumerate(weights):
        mw_h += stats.content_hyp[m] * w * delta
    mw_r = 0.0
    for m, w in enumerate(weights):
        mw_r += stats.content_ref[m] * w * delta
    for m, w in enumerate(weights):
        mw_h += stats.function_hyp[m] * w * (1.0 - delta)
    for m, w in enumerate(weights):
        mw_r += stats.function_ref[m] * w * (1.0 - delta)
    precision = _div(mw_h, lw_h)
    recall = _div(mw_r, lw_r)
    fmean = _div(1.0, _div(1.0 - alpha, precision) + _div(alpha, recall))
    if stats.perfect:
        frag = 0.0
    else:
        frag = _div(stats.chunks, (stats.matched_hyp + stats.matched_ref) / 2.0)
    penalty = gamma * jar_pow(frag, beta) if not math.isnan(frag) else math.nan
    score = fmean * (1.0 - penalty)
    if math.isnan(score):  # empty sentences or no matches: 0/0 in the jar
        score = 0.0
    return MeteorScore(precision, recall, fmean, frag, penalty, max(score, 0.0))


@dataclass(frozen=True)
class MeteorAlignment:
    """The hypothesis aligned with one reference: everything METEOR looked at (§5.9).

    ``candidates`` holds every candidate match per module (generation order), ``fixed`` the
    unambiguous matches pre-selected before the search, ``alignment`` the chosen matches
    sorted by reference position and ``chunks`` that alignment cut into chunks.
    """

    reference: str
    ref_tokens: Tokens
    candidates: tuple[tuple[MeteorMatch, ...], ...]
    fixed: tuple[MeteorMatch, ...]
    alignment: tuple[MeteorMatch, ...]
    chunks: tuple[tuple[MeteorMatch, ...], ...]
    hyp_function: tuple[bool, ...]
    ref_function: tuple[bool, ...]
    stats: MeteorStats
    precision: float
    recall: float
    fmean: float
    fragmentation: float
    penalty: float
    score: float


@dataclass(frozen=True)
class MeteorDetails:
    """Evidence for one item: the strings the jar saw, one alignment per reference, the winner.

    ``best`` is the first reference with the strictly highest score (``reference_scores``);
    its statistics ``stats`` are the item's (§5.7). The full evidence per reference,
    :attr:`alignments`, is the reference aligner's: a batch scored by the compiled aligner
    computes it when it is first read (the two agree statistic for statistic).
    """

    candidate: Tokens
    references: tuple[Tokens, ...]
    hypothesis: str
    hyp_tokens: Tokens
    best: int
    reference_scores: tuple[float, ...]
    stats: MeteorStats
    parameters: tuple[float, float, float, float, tuple[float, ...]] = field(repr=False)
    _alignments: tuple[MeteorAlignment, ...] | None = field(default=None, repr=False, compare=False)

    @property
    def alignments(self) -> tuple[MeteorAlignment, ...]:
        """One alignment per reference as the jar saw them (§5.9)."""
        if self._alignments is None:
            aligner = _aligner()
            refs = jar_inputs(self.candidate, self.references)[1]
            alignments = tuple(
                aligner.align(self.hyp_tokens, normalize(r), self.parameters, r) for r in refs
            )
            object.__setattr__(self, "_alignments", alignments)
        return self._alignments  # type: ignore[return-value]

    @property
    def winner(self) -> MeteorAlignment:
        return self.alignments[self.best]

    @property
    def score(self) -> float:
        return self.reference_scores[self.best]


@dataclass(frozen=True)
class MeteorCorpusDetails:
    """Summed statistics behind the corpus METEOR (chunks only of imperfect items, §5.8)."""

    stats: MeteorStats
    perfect_items: int
    precision: float
    recall: float
    fmean: float
    fragmentation: float
    penalty: float
    score: float


def aggregate_statistics(items: Sequence[MeteorStats]) -> MeteorStats:
    """Sum statistics as the jar's EVAL does: chunks are added only for imperfect items."""
    sums = [sum(column) for column in zip(*(s.as_tuple() for s in items), strict=True)]
    if not sums:
        sums = [0] * 23
    sums[20] = sum(s.chunks for s in items if not s.perfect)
    return MeteorStats.from_row(sums)


# -- §5.4-§5.6: the aligner ---------------------------------------------------------------------


# A candidate as the search sees it, a plain tuple for speed:
# (match, ref mask, hyp mask, search weight, distance, hyp start, hyp end, ref end), where the
# masks have one bit per covered word, the search weight is floor(len_hyp * w) +
# floor(len_ref * w) (§5.5 step 3) and the distance is |ref start - hyp start|.
_Candidate = tuple[MeteorMatch, int, int, int, int, int, int, int]


def _make_candidate(m: MeteorMatch) -> _Candidate:
    sw = SEARCH_WEIGHTS[m.module]
    return (
        m,
        ((1 << m.ref_len) - 1) << m.ref_start,
        ((1 << m.hyp_len) - 1) << m.hyp_start,
        math.floor(m.hyp_len * sw) + math.floor(m.ref_len * sw),
        abs(m.ref_start - m.hyp_start),
        m.hyp_start,
        m.hyp_start + m.hyp_len,
        m.ref_start + m.ref_len,
    )


# A path (§5.5 step 2) is a list, mutated in place where the jar mutates it:
# [-(m1 + m2), chunks, distance, idx, last, used ref mask, used hyp mask, chosen], where
# ``chosen`` is a linked list (candidate, rest) of the matches this path selected.
# §5.5 step 4: sort by more matched weight, then fewer chunks, then smaller distance; Python's
# sort is stable like the jar's, so remaining ties keep insertion order.
_PATH_ORDER = operator.itemgetter(0, 1, 2)


def _beam_search(
    n_ref: int, lists: list[list[_Candidate]], fixed: dict[int, _Candidate]
) -> list[_Candidate]:
    """§5.5 steps 2-6, including the jar's distance bug. Returns the chosen candidates."""
    used_ref = used_hyp = 0
    for c in fixed.values():
        used_ref |= c[1]
        used_hyp |= c[2]
    current: list[list] = [[0, 0, 0, 0, -1, used_ref, used_hyp, None]]
    for cur in range(n_ref):
        current.sort(key=_PATH_ORDER)
        del current[BEAM_SIZE:]
        nxt: list[list] = []
        bit = 1 << cur
        candidates = lists[cur]
        for p in current:
            negw, chunks, dist, idx, last, ur, uh, chosen = p
            if ur & bit:
                if cur < idx:  # inside a match this path already took
                    nxt.append(p)
                    continue
                c = fixed.get(idx)
                if c is None:
                    continue
                # a fixed match is counted when the search reaches it
                p[0] = negw - c[3]
                if last != -1 and c[5] != last:
                    p[1] = chunks + 1
                p[2] = dist + c[4]
                p[3] = c[7]
                p[4] = c[6]
                nxt.append(p)
                continue
            for c in candidates:
                if ur & c[1] or uh & c[2]:
                    continue
                nxt.append(
                    [
                        negw - c[3],
                        chunks + 1 if last != -1 and c[5] != last else chunks,
                        dist,
                        c[7],
                        c[6],
                        ur | c[1],
                        uh | c[2],
                        (c, chosen),
                    ]
                )
                # §5.5 step 5, jar bug kept: the distance goes to the parent path, so later
                # copies and the "skip" successor inherit it, the copy itself does not
                dist += c[4]
            # the "skip" successor: leaving this reference word unmatched closes the chunk
            p[1] = chunks + 1 if last != -1 else chunks
            p[2] = dist
            p[3] = idx + 1
            p[4] = -1
            nxt.append(p)
        current = nxt or current[:1]
    current.sort(key=_PATH_ORDER)
    del current[BEAM_SIZE:]
    for p in current:  # cur == n_ref: close the open chunk
        if p[4] != -1:
            p[1] += 1
    current.sort(key=_PATH_ORDER)
    chosen = list(fixed.values())
    node = current[0][7]
    while node is not None:
        chosen.append(node[0])
        node = node[1]
    return chosen


def _chunks(alignment: list[MeteorMatch]) -> list[tuple[MeteorMatch, ...]]:
    """§5.6: chunks recounted from the final alignment, scanning the reference."""
    chunks: list[list[MeteorMatch]] = []
    prev_end = None
    prev_ref_end = None
    for m in alignment:  # sorted by ref start; a gap in the reference closes a chunk
        if chunks and m.ref_start == prev_ref_end and m.hyp_start == prev_end:
            chunks[-1].append(m)
        else:
            chunks.append([m])
        prev_end, prev_ref_end = m.hyp_end, m.ref_end
    return [tuple(c) for c in chunks]


def _stem(word: str) -> str:
    """§5.4: the jar's Snowball English stemmer (see :mod:`capeval_core.meteor_stemmer`)."""
    from capeval_core.meteor_stemmer import stem

    return stem(word)


class _SentenceViews(NamedTuple):
    """A sentence indexed for the word-level matchers (§5.4): positions by word, by stem and
    by synset id."""

    at: dict[str, list[int]]
    stems: tuple[str, ...]
    stems_at: dict[str, list[int]]
    synsets: tuple[frozenset[int], ...]
    synset_at: dict[int, list[int]]
    synset_ids: frozenset[int]


class MeteorAligner:
    """The four matchers, the beam search and the counting of §5.4-§5.6 for one pair.

    Holds the loaded resources and small per-sentence caches (a hypothesis is aligned with
    every reference of its image).
    """

    def __init__(self) -> None:
        from capeval_core.meteor_resources import (
            function_words,
            meteor_synsets,
            paraphrase_index,
        )

        self.function_words = function_words()
        self.synsets = meteor_synsets()
        self.paraphrases = paraphrase_index()
        self._keys_cache: dict[Tokens, list[tuple[int, int, int]]] = {}
        self._spans_cache: dict[Tokens, dict[str, list[int]]] = {}
        self._views_cache: dict[Tokens, _SentenceViews] = {}

    def _keys(self, words: Tokens) -> list[tuple[int, int, int]]:
        """``(start, length, key)`` of the sentence's spans that are a phrase 1 (cached: a
        hypothesis is aligned with every reference of its image)."""
        cached = self._keys_cache.get(words)
        if cached is None:
            cached = self.paraphrases.sentence_keys(words)
            if len(self._keys_cache) > 50_000:
                self._keys_cache.clear()
            self._keys_cache[words] = cached
        return cached

    def _spans(self, words: Tokens) -> dict[str, list[int]]:
        """The sentence's spans of up to the table's longest phrase, text -> starts."""
        cached = self._spans_cache.get(words)
        if cached is None:
            cached = {}
            for length in range(1, min(self.paraphrases.max_words, len(words)) + 1):
                for start in range(len(words) - length + 1):
                    cached.setdefault(" ".join(words[start : start + length]), []).append(start)
            if len(self._spans_cache) > 50_000:
                self._spans_cache.clear()
            self._spans_cache[words] = cached
        return cached

    def _paraphrase(self, from_words: Tokens, to_words: Tokens):
        """§5.4 (a): walk ``from_words``; every phrase 2 found verbatim in ``to_words``.

        Yields (from start, from length, to start, to length) in generation order: by start,
        then phrase length, then table order, then position in ``to_words``.
        """
        spans = self._spans(to_words)
        for start, length, key in self._keys(from_words):
            for text in self.paraphrases.targets(key):
                for to in spans.get(text, ()):
                    yield start, length, to, text.count(" ") + 1

    def _views(self, words: Tokens) -> _SentenceViews:
        """What the exact, stem and synonym matchers need of a sentence (cached: a hypothesis
        meets every reference of its image, a reference every hypothesis of its image)."""
        views = self._views_cache.get(words)
        if views is None:
            syn_of = self.synsets.synsets_of
            at: dict[str, list[int]] = {}
            stems_at: dict[str, list[int]] = {}
            synset_at: dict[int, list[int]] = {}
            stems = tuple(_stem(w) for w in words)
            synsets = tuple(syn_of(w) for w in words)
            for j, w in enumerate(words):
                at.setdefault(w, []).append(j)
                stems_at.setdefault(stems[j], []).append(j)
                for s in synsets[j]:
                    synset_at.setdefault(s, []).append(j)
            views = _SentenceViews(at, stems, stems_at, synsets, synset_at, frozenset(synset_at))
            if len(self._views_cache) > 50_000:
                self._views_cache.clear()
            self._views_cache[words] = views
        return views

    def candidates(self, hyp: Tokens, ref: Tokens) -> tuple[tuple[MeteorMatch, ...], ...]:
        """Candidate matches per module, in the jar's generation order (§5.4): by reference
        position, then hypothesis position."""
        exact: list[MeteorMatch] = []
        stem: list[MeteorMatch] = []
        syn: list[MeteorMatch] = []
        para: list[MeteorMatch] = []
        h = self._views(hyp)
        for i, w in enumerate(ref):
            for j in h.at.get(w, ()):
                exact.append(MeteorMatch(i, 1, j, 1, EXACT))
        # §5.4 special case: identical sentences are aligned by the exact module only
        if hyp != ref:
            r = self._views(ref)
            for i, w in enumerate(ref):
                for j in h.stems_at.get(r.stems[i], ()):
                    if hyp[j] != w:
                        stem.append(MeteorMatch(i, 1, j, 1, STEM))
            for i, w in enumerate(ref):
                shared = r.synsets[i] & h.synset_ids  # synonyms: S(ref word) meets S(hyp word)
                if not shared:
                    continue
                found = {j for s in shared for j in h.synset_at[s]}
                for j in sorted(found):
                    if hyp[j] != w:
                        syn.append(MeteorMatch(i, 1, j, 1, SYNONYM))
            for k, length, s, size in self._paraphrase(ref, hyp):
                para.append(MeteorMatch(k, length, s, size, PARAPHRASE))
            for s, length, t, size in self._paraphrase(hyp, ref):
                para.append(MeteorMatch(t, size, s, length, PARAPHRASE))
        return (tuple(exact), tuple(stem), tuple(syn), tuple(para))

    def align(
        self,
        hyp: Tokens,
        ref: Tokens,
        parameters: tuple[float, float, float, float, Sequence[float]],
        reference: str = "",
    ) -> MeteorAlignment:
        """Align one hypothesis with one reference and score the pair (§5.4-§5.7)."""
        by_module = self.candidates(hyp, ref)
        n_ref, n_hyp = len(ref), len(hyp)
        lists: list[list[_Candidate]] = [[] for _ in range(n_ref)]
        cov_ref = [0] * n_ref
        cov_hyp = [0] * n_hyp
        for matches in by_module:  # lists keep module order, then generation order
            for m in matches:
                lists[m.ref_start].append(_make_candidate(m))
                for i in range(m.ref_start, m.ref_start + m.ref_len):
                    cov_ref[i] += 1
                for j in range(m.hyp_start, m.hyp_start + m.hyp_len):
                    cov_hyp[j] += 1
        # §5.5 step 1: a reference position with one candidate whose words no other candidate
        # touches is fixed before the search
        fixed: dict[int, _Candidate] = {}
        for i, cands in enumerate(lists):
            if len(cands) == 1:
                m = cands[0][0]
                if all(cov_ref[x] == 1 for x in range(m.ref_start, m.ref_end)) and all(
                    cov_hyp[x] == 1 for x in range(m.hyp_start, m.hyp_end)
                ):
                    fixed[i] = cands[0]
        chosen = _beam_search(n_ref, lists, fixed)
        alignment = sorted((c[0] for c in chosen), key=lambda m: m.ref_start)
        chunks = _chunks(alignment)
        hyp_function = tuple(w in self.function_words for w in hyp)
        ref_function = tuple(w in self.function_words for w in ref)
        c_h, c_r, f_h, f_r = ([0] * 4 for _ in range(4))
        for m in alignment:  # §5.6: content/function words per module, on both sides
            for j in range(m.hyp_start, m.hyp_end):
                (f_h if hyp_function[j] else c_h)[m.module] += 1
            for i in range(m.ref_start, m.ref_end):
                (f_r if ref_function[i] else c_r)[m.module] += 1
        stats = MeteorStats(
            n_hyp,
            n_ref,
            sum(hyp_function),
            sum(ref_function),
            tuple(c_h),  # type: ignore[arg-type]
            tuple(c_r),  # type: ignore[arg-type]
            tuple(f_h),  # type: ignore[arg-type]
            tuple(f_r),  # type: ignore[arg-type]
            len(chunks),
            sum(m.hyp_len for m in alignment),
            sum(m.ref_len for m in alignment),
        )
        s = score_statistics(stats, parameters)
        return MeteorAlignment(
            reference,
            ref,
            by_module,
            tuple(sorted((c[0] for c in fixed.values()), key=lambda m: m.ref_start)),
            tuple(alignment),
            tuple(chunks),
            hyp_function,
            ref_function,
            stats,
            s.precision,
            s.recall,
            s.fmean,
            s.fragmentation,
            s.penalty,
            s.score,
        )


@functools.cache
def _aligner() -> MeteorAligner:
    return MeteorAligner()


class _Vocabulary:
    """Integer ids of the words this process has aligned, and what the compiled aligner reads
    of each word: its UTF-8 text, stem id, function-word flag and sorted synset ids (§5.4).
    Grows by doubling; words are never forgotten (their number is bounded by the language).
    """

    def __init__(self) -> None:
        from capeval_core.meteor_resources import function_words, meteor_synsets

        self._synsets_of = meteor_synsets().synsets_of
        self._function = function_words()
        self.ids: dict[str, int] = {}
        self._stem_ids: dict[str, int] = {}
        self._synset_ids: dict[int, int] = {}  # WordNet offset -> dense id (< 2**24)
        self._stem = np.empty(1024, dtype=np.int64)
        self._func = np.empty(1024, dtype=np.uint8)
        self._syn_off = np.zeros(1025, dtype=np.int64)
        self._syn = np.empty(4096, dtype=np.int64)
        self._text_off = np.zeros(1025, dtype=np.int64)
        self._text = np.empty(8192, dtype=np.uint8)

    @staticmethod
    def _room(arr: np.ndarray, need: int) -> np.ndarray:
        if need <= len(arr):
            return arr
        grown = np.zeros(max(need, 2 * len(arr)), dtype=arr.dtype)
        grown[: len(arr)] = arr
        return grown

    def add(self, words: Sequence[str]) -> None:
        """Give ids to new words (in this order)."""
        n = len(self.ids)
        end = n + len(words)
        stem_ids, synset_ids = self._stem_ids, self._synset_ids
        stems, synsets, texts = [], [], []
        for k, word in enumerate(words, n):
            self.ids[word] = k
            stems.append(stem_ids.setdefault(_stem(word), len(stem_ids)))
            synsets.append(
                sorted(synset_ids.setdefault(i, len(synset_ids)) for i in self._synsets_of(word))
            )
            texts.append(word.encode("utf-8", "surrogatepass"))  # a lone surrogate: no match
        self._stem = self._room(self._stem, end)
        self._stem[n:end] = stems
        self._func = self._room(self._func, end)
        self._func[n:end] = [w in self._function for w in words]
        self._syn_off = self._room(self._syn_off, end + 1)
        self._syn_off[n + 1 : end + 1] = self._syn_off[n] + np.cumsum([len(x) for x in synsets])
        self._syn = self._room(self._syn, int(self._syn_off[end]))
        self._syn[self._syn_off[n] : self._syn_off[end]] = list(
            itertools.chain.from_iterable(synsets)
        )
        self._text_off = self._room(self._text_off, end + 1)
        self._text_off[n + 1 : end + 1] = self._text_off[n] + np.cumsum([len(t) for t in texts])
        self._text = self._room(self._text, int(self._text_off[end]))
        self._text[self._text_off[n] : self._text_off[end]] = np.frombuffer(
            b"".join(texts), dtype=np.uint8
        )

    def arrays(self) -> tuple[np.ndarray, ...]:
        """Stem ids, function flags, synset offsets and ids, text offsets and bytes."""
        n = len(self.ids)
        return (
            self._stem[:n],
            self._func[:n],
            self._syn_off[: n + 1],
            self._syn[: self._syn_off[n]],
            self._text_off[: n + 1],
            self._text[: self._text_off[n]],
        )


class _CompiledAligner:
    """Drives :func:`capeval_core.meteor_kernel.align_pairs` over a batch: distinct sentences
    as word ids, their paraphrase spans, then every (hypothesis, reference) pair at once.
    Pairs the kernel leaves (a side over 64 words) go to the reference aligner."""

    def __init__(self) -> None:
        self.vocabulary = _Vocabulary()
        #: pairs of the last batch the kernel left to the reference aligner
        self.fallbacks = 0
        # the app scores from several threads: a word's id must not be seen before its data
        self._lock = threading.Lock()

    #: items are aligned in chunks of about this many pairs (bounds memory and the packed
    #: sort keys of :func:`~capeval_core.meteor_kernel.sentence_synsets`)
    CHUNK_PAIRS = 200_000

    def score(
        self,
        hyps: Sequence[Tokens],
        refs: Sequence[Sequence[Tokens]],
        parameters: tuple[float, float, float, float, tuple[float, ...]],
    ) -> tuple[list[int], list[tuple[float, ...]], list[MeteorStats]]:
        """Per item: the best reference, every reference's score, the best one's statistics."""
        from capeval_core.meteor_resources import paraphrase_index_written

        best: list[int] = []
        scores: list[tuple[float, ...]] = []
        stats: list[MeteorStats] = []
        self.fallbacks = 0
        start = 0
        while start < len(hyps):
            stop, pairs = start, 0
            while stop < len(hyps) and (pairs == 0 or pairs + len(refs[stop]) <= self.CHUNK_PAIRS):
                pairs += len(refs[stop])
                stop += 1
            b, sc, st = self._score(hyps[start:stop], refs[start:stop], parameters)
            best += b
            scores += sc
            stats += st
            start = stop
        paraphrase_index_written()  # a first run's index file is complete when scores are
        return best, scores, stats

    def _score(
        self,
        hyps: Sequence[Tokens],
        refs: Sequence[Sequence[Tokens]],
        parameters: tuple[float, float, float, float, tuple[float, ...]],
    ) -> tuple[list[int], list[tuple[float, ...]], list[MeteorStats]]:
        from capeval_core import meteor_kernel as kernel
        from capeval_core.meteor_pow import dense_offsets, dense_values
        from capeval_core.meteor_resources import paraphrase_index

        sentence_ids: dict[Tokens, int] = {}
        pair_hyp: list[int] = []
        pair_ref: list[int] = []
        item_off = [0]
        for hyp, rs in zip(hyps, refs, strict=True):
            h = sentence_ids.setdefault(hyp, len(sentence_ids))
            for r in rs:
                pair_hyp.append(h)
                pair_ref.append(sentence_ids.setdefault(r, len(sentence_ids)))
            item_off.append(len(pair_hyp))
        sentences = list(sentence_ids)
        lengths = np.fromiter(map(len, sentences), dtype=np.int64, count=len(sentences))
        s_off = np.zeros(len(sentences) + 1, dtype=np.int64)
        np.cumsum(lengths, out=s_off[1:])
        with self._lock:
            vocabulary = self.vocabulary
            ids = vocabulary.ids
            words = itertools.chain.from_iterable(sentences)
            new = [w for w in dict.fromkeys(words) if w not in ids]
            if new:
                vocabulary.add(new)
            s_words = np.fromiter(
                map(ids.__getitem__, itertools.chain.from_iterable(sentences)),
                dtype=np.int64,
                count=int(s_off[-1]),
            )
            # views of the words so far: a later growth copies, so they stay as they are
            w_stem, w_func, syn_off, syn_ids, w_text_off, w_text = vocabulary.arrays()
        syn_pos, syn_pos_off = kernel.sentence_synsets(s_off, s_words, syn_off, syn_ids)
        index = paraphrase_index(wait_for_file=False)
        a = index.arrays
        text, word_pos, span_hash, span_off, bloom, key_start, key_len, key_id, key_off = (
            kernel.sentence_spans(
                s_off, s_words, w_text_off, w_text, index.max_words, a["phrase_slots"],
                a["phrase_hash"], a["phrase_key"], a["phrase_prefix"], a["key_text"],
                a["key_text_offsets"],
            )
        )  # fmt: skip
        alpha, beta, gamma, delta, weights = parameters
        pow_values = dense_values(beta)
        stats, scores = kernel.align_pairs(
            np.array(pair_hyp, dtype=np.int64), np.array(pair_ref, dtype=np.int64),
            s_off, s_words, w_stem, w_func, syn_pos, syn_pos_off,
            word_pos, text, span_hash, span_off, bloom, key_start, key_len, key_id, key_off,
            a["key_entry_offsets"], a["target_hash"], a["target_words"], a["target_text"],
            a["target_start"], a["target_end"], alpha, gamma, delta, np.array(weights),
            pow_values, dense_offsets(),
        )  # fmt: skip
        rows = stats.tolist()
        values = scores.tolist()
        for p in np.flatnonzero(stats[:, 0] < 0).tolist():  # beyond the kernel: in Python
            self.fallbacks += 1
            aligned = _aligner().align(sentences[pair_hyp[p]], sentences[pair_ref[p]], parameters)
            rows[p] = list(aligned.stats.as_tuple())
            values[p] = aligned.score
        best, item_scores, item_stats = [], [], []
        for k in range(len(hyps)):
            lo, hi = item_off[k], item_off[k + 1]
            b = lo
            for p in range(lo + 1, hi):  # the first reference with the strictly best score
                if values[p] > values[b]:
                    b = p
            best.append(b - lo)
            item_scores.append(tuple(values[lo:hi]))
            item_stats.append(MeteorStats.from_row(rows[b]))
        return best, item_scores, item_stats


@functools.cache
def _compiled() -> _CompiledAligner:
    return _CompiledAligner()


#: below this many items, a process that has not loaded the compiled aligner yet scores with
#: the reference one: the same numbers, without numba's one-time start-up (about a second)
SMALL_BATCH = 64


class Meteor(Metric):
    """METEOR 1.5 (Denkowski & Lavie 2014) exactly as coco-caption runs ``meteor-1.5.jar``.

    Segment values are the jar's per-image scores; the corpus value comes from the summed
    statistics (so it is not the mean of the segments).

    >>> r = Meteor(tokenizer="whitespace").score(
    ...     ["a kid is sitting on a couch"], [["a child sits on a sofa"]]
    ... )
    >>> round(r.value, 6), r.segments[0].details.stats.line()[:23]
    (0.797654, '7.0 6.0 4.0 3.0 0.0 0.0')
    """

    key = "meteor"
    name = "METEOR"
    bounds = (0.0, 1.0)
    measures = (
        "how well the candidate's words align with the best reference's (same word, stem, "
        "synonym or paraphrase), recall weighted, penalised when the matches are scattered"
    )
    Config = MeteorConfig

    def resources(self) -> dict[str, str]:
        from capeval_core.meteor_resources import (
            INDEX_FORMAT,
            PARAPHRASE_TABLE,
            resource_identity,
        )

        return {
            "meteor": resource_identity(),
            "paraphrase": f"{PARAPHRASE_TABLE.rsplit('/', 1)[-1]} (index v{INDEX_FORMAT})",
        }

    def prepare(self, batch: Batch) -> None:
        return None

    def segment(
        self, candidate: Tokens, references: tuple[Tokens, ...], prepared: Any
    ) -> tuple[float, MeteorDetails]:
        """One item by the pure-Python reference aligner (the full evidence at once)."""
        aligner = prepared if isinstance(prepared, MeteorAligner) else _aligner()
        parameters = self.config.parameters  # type: ignore[attr-defined]
        hypothesis, jar_refs = jar_inputs(candidate, references)
        hyp = normalize(hypothesis)
        alignments = tuple(aligner.align(hyp, normalize(r), parameters, r) for r in jar_refs)
        best = 0
        for i, a in enumerate(alignments):  # the first reference with the strictly best score
            if a.score > alignments[best].score:
                best = i
        scores = tuple(a.score for a in alignments)
        details = MeteorDetails(
            candidate, references, hypothesis, hyp, best, scores, alignments[best].stats,
            parameters, alignments,
        )  # fmt: skip
        return alignments[best].score, details

    def score_items(self, batch: Batch, prepared: Any) -> list[tuple[float, MeteorDetails]]:
        """The whole batch through the compiled aligner (:mod:`capeval_core.meteor_kernel`):
        the same statistics and scores as :meth:`segment`, bit for bit; the evidence of an
        item is computed when it is first read. A small batch in a process that has not
        loaded the compiled aligner yet goes through :meth:`segment` (no numba start-up)."""
        if len(batch) < SMALL_BATCH and not _compiled.cache_info().currsize:
            return super().score_items(batch, prepared)  # type: ignore[return-value]
        from capeval_core.meteor_resources import prefetch_paraphrase_index

        prefetch_paraphrase_index()  # a first run builds it meanwhile, in the background
        # numba's start-up here, while that build reads its file: the build's kernels then
        # load at once (a first run is 0.1 s shorter)
        from capeval_core import meteor_kernel

        meteor_kernel.start_up()
        parameters = self.config.parameters  # type: ignore[attr-defined]
        items = list(zip(batch.candidate_tokens, batch.reference_tokens, strict=True))
        jar = [jar_inputs(c, r) for c, r in items]
        hyps = [normalize(h) for h, _ in jar]
        refs = [[normalize(r) for r in rs] for _, rs in jar]
        best, scores, stats = _compiled().score(hyps, refs, parameters)
        out = []
        for k, (cand, references) in enumerate(items):
            details = MeteorDetails(
                cand, references, jar[k][0], hyps[k], best[k], scores[k], stats[k], parameters
            )
            out.append((scores[k][best[k]], details))
        return out

    def aggregate(
        self, segments: list[SegmentScore], prepared: Any
    ) -> tuple[dict[str, float], MeteorCorpusDetails]:
        items = [s.details.stats for s in segments]
        total = aggregate_statistics(items)
        s = score_statistics(total, self.config.parameters)  # type: ignore[attr-defined]
        details = MeteorCorpusDetails(
            total,
            sum(x.perfect for x in items),
            s.precision,
            s.recall,
            s.fmean,
            s.fragmentation,
            s.penalty,
            s.score,
        )
        return {self.key: s.score}, details

    def sufficient_statistics(self, result: MetricResult) -> dict[str, np.ndarray]:
        """Per item the jar's 23 statistics, chunks zeroed where the item is perfect (the
        jar's EVAL adds chunks of imperfect items only, §5.8)."""
        rows = []
        for seg in result.segments:
            stats = seg.details.stats
            row = list(stats.as_tuple())
            if stats.perfect:
                row[20] = 0
            rows.append(row)
        return {"meteor": np.array(rows, dtype=float).reshape(len(rows), 23)}

    def item_statistics(self, values, statistics, batch) -> MeteorStatistics:
        return MeteorStatistics(
            self.report_keys(),
            np.asarray(statistics["meteor"], dtype=float),
            self.config.parameters,  # type: ignore[attr-defined]
        )


@dataclass(frozen=True, eq=False)
class MeteorStatistics(SummedStatistics):
    """Per item the jar's 23 statistics (chunks only of imperfect items): a resample's METEOR
    scores its summed statistics, as the corpus METEOR does."""

    parameters: tuple[float, float, float, float, tuple[float, ...]] = (0, 0, 0, 0, ())

    def _total(self, sums: Sequence[int]) -> MeteorStats:
        v = [int(x) for x in sums]
        stages = [v[4 + 4 * m : 8 + 4 * m] for m in range(len(MODULES))]
        c_h, c_r, f_h, f_r = (tuple(s[k] for s in stages) for k in range(4))
        return MeteorStats(v[0], v[1], v[2], v[3], c_h, c_r, f_h, f_r, v[20], v[21], v[22])  # type: ignore[arg-type]

    def point(self) -> dict[str, float]:
        # integer sums in any order are the jar's; scored by the same function
        sums = self.matrix.astype(np.int64).sum(axis=0).tolist()
        return {self.keys[0]: score_statistics(self._total(sums), self.parameters).score}

    def finish(self, sums: np.ndarray, total: np.ndarray) -> np.ndarray:
        """:func:`score_statistics` for many summed rows at once, in the same order of
        operations (numpy's IEEE division gives the jar's x/0 semantics)."""
        from capeval_core.meteor_pow import jar_pow

        alpha, beta, gamma, delta, weights = self.parameters
        hyp_len, ref_len, hyp_fw, ref_fw = sums[:, 0], sums[:, 1], sums[:, 2], sums[:, 3]
        lw_h = delta * (hyp_len - hyp_fw) + (1.0 - delta) * hyp_fw
        lw_r = delta * (ref_len - ref_fw) + (1.0 - delta) * ref_fw
        mw_h = np.zeros(sums.shape[0])
        mw_r = np.zeros(sums.shape[0])
        # the jar's order: content words of every module (hypothesis, then reference), then
        # function words
        for j, factor in ((4, delta), (5, delta), (6, 1.0 - delta), (7, 1.0 - delta)):
            weighted = mw_h if j % 2 == 0 else mw_r  # updated in place
            for m, w in enumerate(weights):
                weighted += sums[:, j + 4 * m] * w * factor
        with np.errstate(divide="ignore", invalid="ignore"):
            precision, recall = mw_h / lw_h, mw_r / lw_r
            fmean = 1.0 / ((1.0 - alpha) / precision + alpha / recall)
            chunks, matched_h, matched_r = sums[:, 20], sums[:, 21], sums[:, 22]
            perfect = (matched_h == hyp_len) & (matched_r == ref_len) & (chunks == 1)
            frag = np.where(perfect, 0.0, chunks / ((matched_h + matched_r) / 2.0))
        bases, where = np.unique(frag, return_inverse=True)
        power = np.array([jar_pow(x, beta) for x in bases.tolist()])[where.reshape(-1)]
        score = fmean * (1.0 - gamma * power)
        return np.maximum(np.nan_to_num(score, nan=0.0), 0.0)[:, None]
