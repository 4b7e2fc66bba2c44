"""The PCFG's lexicon: which tags a word may take and log P(word | tag), as CoreNLP 3.6.0's
``BaseLexicon`` with its English unknown-word model scores them.

A word seen more than ``smooth_threshold`` times in the parser's treebank takes only the
tags it was seen with; a rarer known word any tag the smoothed estimate allows; an unknown
word the open-class tags, scored through its *signature* (case, dash, digits, last letter).
Scores are computed in double precision in CoreNLP's order of operations and rounded to
float32, as the parser's chart holds them.
"""

from __future__ import annotations

import functools
import math
import unicodedata
from collections.abc import Sequence

import numpy as np

from capeval_core.spice.pcfg.grammar import NULL, UNKNOWN_WORD, Grammar

NEG_INF = np.float32(-np.inf)
#: scores at or below this are "impossible" (CoreNLP's categorical cutoff)
CUTOFF = -100.0


def _div(a: float, b: float) -> float:
    """Java's double division (x / 0 is infinite or NaN, not an error)."""
    if b == 0.0:
        if a == 0.0 or math.isnan(a):
            return math.nan
        return math.copysign(math.inf, a)
    return a / b


def _log(x: float) -> float:
    """Java's ``Math.log`` on the values the lexicon produces (0 gives -inf)."""
    if x > 0.0:
        return math.log(x)
    return -math.inf if x == 0.0 else math.nan


def _float(x: float) -> np.float32:
    """The lexicon's categorical cutoff, then float32."""
    return np.float32(x) if x > CUTOFF else NEG_INF


def _is_upper(ch: str) -> bool:
    return unicodedata.category(ch) == "Lu"


def _is_title(ch: str) -> bool:
    return unicodedata.category(ch) == "Lt"


def signature(word: str, loc: int) -> str:
    """CoreNLP's level-2 unknown-word signature: ``UNK`` plus capitalisation (-ALLC, -INIT
    at the start of the sentence, -UC, -LC), -DASH, digits (-NUM, -DIG) and, for longer
    words without digits, the last letter lower-cased.

    >>> signature("frisbees", 3), signature("Frisbee", 0), signature("x-ray", 2), signature("4", 1)
    ('UNK-LCs', 'UNK-INITe', 'UNK-LC-DASHy', 'UNK-NUM')
    """
    has_digit = has_non_digit = has_lower = False
    for ch in word:
        if ch.isdigit() and unicodedata.category(ch) == "Nd":
            has_digit = True
        else:
            has_non_digit = True
            if ch.isalpha() and (unicodedata.category(ch) == "Ll" or _is_title(ch)):
                has_lower = True
    out = ["UNK"]
    if word and (_is_upper(word[0]) or _is_title(word[0])):
        out.append("-ALLC" if not has_lower else "-INIT" if loc == 0 else "-UC")
    elif has_lower:
        out.append("-LC")
    if "-" in word:
        out.append("-DASH")
    if has_digit:
        out.append("-NUM" if not has_non_digit else "-DIG")
    elif len(word) > 3:
        out.append(word[-1].lower())
    return "".join(out)


def _by_first(counts: dict[tuple[int, int], float]) -> dict[int, dict[int, float]]:
    out: dict[int, dict[int, float]] = {}
    for (w, t), c in counts.items():
        out.setdefault(w, {})[t] = c
    return out


def as_arrays(pairs: Sequence[tuple[int, np.float32]]) -> tuple[np.ndarray, np.ndarray]:
    """(tag, score) pairs as a tag array and a float32 score array."""
    return (
        np.array([t for t, _ in pairs], dtype=np.int64),
        np.array([s for _, s in pairs], dtype=np.float32),
    )


class Lexicon:
    """Tag scores of words at sentence positions, from a :class:`Grammar`'s counts."""

    def __init__(self, grammar: Grammar) -> None:
        if grammar.unknown_level != 2:
            raise ValueError(f"unknown-word signatures of level {grammar.unknown_level}")
        self.g = grammar
        self.total = grammar.seen.get((NULL, NULL), 0.0)
        self.total_unseen = grammar.unseen.get((NULL, NULL), 0.0)
        self.unk_rules = grammar.open_tags
        self._unknown_index = grammar.words.get(UNKNOWN_WORD)
        # per-tag terms of every score, for :meth:`_scores` (all tags of a word at once)
        n_tags = len(grammar.tags)
        c_t = np.array([grammar.seen.get((NULL, t), 0.0) for t in range(n_tags)])
        unseen_t = np.array([grammar.unseen.get((NULL, t), 0.0) for t in range(n_tags)])
        with np.errstate(divide="ignore", invalid="ignore"):  # Java's x / 0
            self._p_t = c_t / self.total
            self._p_t_u = unseen_t / self.total_unseen

    @functools.cached_property
    def _seen_by_word(self) -> dict[int, dict[int, float]]:
        """``seen`` as {word: {tag: count}}: a word's counts for all its tags in one lookup."""
        return _by_first(self.g.seen)

    @functools.cached_property
    def _unseen_by_signature(self) -> dict[int, dict[int, float]]:
        return _by_first(self.g.unseen)

    def word_id(self, word: str) -> int:
        """The word's number, or -2 for a word the grammar never numbered (it has no counts)."""
        return self.g.words.get(word, -2)

    def known(self, w: int) -> bool:
        return w in self.g.word_tags

    def score(self, w: int, tag: int, loc: int, word: str) -> np.float32:
        """log P(word | tag) as float32, or -inf (``BaseLexicon.score``)."""
        seen = self.g.seen
        c_tw = seen.get((w, tag), 0.0)
        c_w = seen.get((w, NULL), 0.0)
        c_t = seen.get((NULL, tag), 0.0)
        if c_w > 0.0:
            p_t_u = _div(self.g.unseen.get((NULL, tag), 0.0), self.total_unseen)
            if c_w > self.g.smooth_threshold and c_tw > 0.0:
                pb_t_w = c_tw / c_w
            else:
                s1 = self.g.smooth[1]
                pb_t_w = (c_tw + s1 * p_t_u) / (c_w + s1)
            p_t = _div(c_t, self.total)
            p_w = _div(c_w, self.total)
            return _float(_log(_div(pb_t_w * p_w, p_t)))
        return self._unknown_score(tag, loc, word, c_t)

    def _unknown_score(self, tag: int, loc: int, word: str, c_t_seen: float) -> np.float32:
        """``EnglishUnknownWordModel.score``: P(tag | signature) smoothed with P(tag | unseen)."""
        unseen = self.g.unseen
        sig = self.g.words.get(signature(word, loc), -2)
        c_ts = unseen.get((sig, tag), 0.0)
        c_s = unseen.get((sig, NULL), 0.0)
        p_t_u = _div(unseen.get((NULL, tag), 0.0), self.total_unseen)
        s0 = self.g.smooth[0]
        pb_t_s = (c_ts + s0 * p_t_u) / (c_s + s0)
        p_t = _div(c_t_seen, self.total)
        p_w = _div(1.0, self.total)
        # the unknown-word model rounds to float32 itself, then the lexicon again: no change
        return _float(_log(_div(pb_t_s * p_w, p_t)))

    def taggings(self, word: str, loc: int) -> tuple[tuple[int, np.float32], ...]:
        """(tag, score) for every tag the parser tries for ``word`` at ``loc`` and scores
        above the cutoff (``ruleIteratorByWord`` then ``score``)."""
        # the position matters only to an unknown word's signature, through loc == 0
        return self._taggings(word, loc == 0)

    @functools.lru_cache(maxsize=200_000)  # noqa: B019 (a lexicon lives as long as its grammar)
    def _taggings(self, word: str, first: bool) -> tuple[tuple[int, np.float32], ...]:
        loc = 0 if first else 1
        w = self.word_id(word)
        if self.known(w):
            if self.g.seen.get((w, NULL), 0.0) > self.g.smooth_threshold:
                tags = self.g.word_tags[w]
            else:  # flexible tagging: any tag with a finite score
                tags = self.g.lexicon_tags
        else:
            tags = self.unk_rules
        scores = self._scores(w, tags, loc, word)
        return tuple((t, s) for t, s in zip(tags, scores, strict=True) if s > NEG_INF)

    def tagging_arrays(self, word: str, loc: int) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`taggings` as two arrays (tags, float32 scores): a chart cell takes them in
        one assignment."""
        return self._tagging_arrays(word, loc == 0)

    @functools.lru_cache(maxsize=200_000)  # noqa: B019 (as _taggings)
    def _tagging_arrays(self, word: str, first: bool) -> tuple[np.ndarray, np.ndarray]:
        return as_arrays(self._taggings(word, first))

    def _scores(self, w: int, tags: Sequence[int], loc: int, word: str) -> list[np.float32]:
        """:meth:`score` of every tag in ``tags``, its arithmetic done on arrays: the same
        double-precision operations in the same order, and Python's ``math.log`` for Java's
        ``Math.log`` (tested equal to :meth:`score` on every tag)."""
        g = self.g
        t = np.asarray(tags, dtype=np.int64)
        p_t_u, p_t = self._p_t_u[t], self._p_t[t]
        seen = g.seen
        c_w = seen.get((w, NULL), 0.0)
        with np.errstate(divide="ignore", invalid="ignore"):  # Java's x / 0
            if c_w > 0.0:
                known = self._seen_by_word.get(w, {})
                c_tw = np.array([known.get(tag, 0.0) for tag in tags])
                s1 = g.smooth[1]
                pb = (c_tw + s1 * p_t_u) / (c_w + s1)
                if c_w > g.smooth_threshold:
                    pb = np.where(c_tw > 0.0, c_tw / c_w, pb)
                x = (pb * _div(c_w, self.total)) / p_t
            else:
                sig = g.words.get(signature(word, loc), -2)
                by_sig = self._unseen_by_signature.get(sig, {})
                c_ts = np.array([by_sig.get(tag, 0.0) for tag in tags])
                c_s = g.unseen.get((sig, NULL), 0.0)
                s0 = g.smooth[0]
                pb = (c_ts + s0 * p_t_u) / (c_s + s0)
                x = (pb * _div(1.0, self.total)) / p_t
        return [_float(_log(v)) for v in x.tolist()]

    def all_taggings(self, word: str, loc: int) -> list[tuple[int, np.float32]]:
        """Every tag with a finite score (CoreNLP's fallback when no proposed tag scored)."""
        tags = range(len(self.g.tags))
        scores = self._scores(self.word_id(word), tags, loc, word)
        return [(t, s) for t, s in zip(tags, scores, strict=True) if s > NEG_INF]
