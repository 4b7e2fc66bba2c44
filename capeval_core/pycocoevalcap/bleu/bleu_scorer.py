"""pycocoevalcap's ``bleu.bleu_scorer``: ``BleuScorer``, to which code adds one
``(candidate, references)`` pair at a time (``scorer += (hypo, refs)``) before
``compute_score(option, verbose)``; capeval's BLEU (:func:`~capeval_core.metrics.bleu.bleu_values`).

Its public methods as pycocoevalcap 1.2 has them: ``cook_append``, ``+=`` (a pair, or another
scorer), ``size``, ``copy``, ``compute_score``; and the module's functions ``precook``,
``cook_refs`` and ``cook_test``, which code reuses for its own BLEU statistics. The methods
that rescore or reweigh a
scorer's cooked counts (``ratio``, ``reflen``, ``testlen``, ``retest``, ``rescore``, ``compatible``,
``score_ratio``, ``recompute_score``, ``single_reflen``) and ``special_reflen`` are not offered.
"""

from __future__ import annotations

import operator
from typing import Any

from capeval_core.metrics.bleu import MAX_ORDER, SMALL, TINY, bleu_values
from capeval_core.pycocoevalcap._inputs import Pairs, ngram_counts

#: ``compute_score``'s options: how each candidate's reference length is chosen
OPTIONS = ("closest", "shortest", "average")


def precook(s: str, n: int = 4, out: bool = False) -> tuple[int, dict[tuple[str, ...], int]]:
    """``(words, counts)`` of a sentence: its length in whitespace-split words and the count
    of each 1- to ``n``-gram (``out`` is unused, as in pycocoevalcap)."""
    return len(s.split()), ngram_counts(s, n)


def cook_refs(
    refs: list[str], eff: str | None = None, n: int = 4
) -> tuple[list[int] | int | float, dict[tuple[str, ...], int]]:
    """``(reflen, maxcounts)`` of one image's references: their lengths (a list; the shortest
    for ``eff="shortest"``, the mean for ``"average"``) and each n-gram's largest count.

    >>> cook_refs(["a dog", "a dog a"], eff="shortest")
    (2, {('a',): 2, ('dog',): 1, ('a', 'dog'): 1, ('dog', 'a'): 1, ('a', 'dog', 'a'): 1})
    """
    lengths: list[int] = []
    maxcounts: dict[tuple[str, ...], int] = {}
    for ref in refs:
        length, counts = precook(ref, n)
        lengths.append(length)
        for ngram, count in counts.items():
            maxcounts[ngram] = max(maxcounts.get(ngram, 0), count)
    if eff == "shortest":
        return min(lengths), maxcounts
    if eff == "average":
        return float(sum(lengths)) / len(lengths), maxcounts
    return lengths, maxcounts


def cook_test(
    test: str, refs: tuple[Any, dict[tuple[str, ...], int]], eff: str | None = None, n: int = 4
) -> dict[str, Any]:
    """A candidate's BLEU statistics against :func:`cook_refs`' ``refs``: ``reflen`` (the
    closest reference length for ``eff="closest"``, ties to the shorter; else ``refs``' as
    given), ``testlen``, and per order the n-grams guessed (``guess``) and ``correct`` (clipped).

    >>> cook_test("a dog runs", cook_refs(["a dog", "a big dog"]), eff="closest")
    {'reflen': 3, 'testlen': 3, 'guess': [3, 2, 1, 0], 'correct': [2, 1, 0, 0]}
    """
    reflen, maxcounts = refs
    testlen, counts = precook(test, n, True)
    result: dict[str, Any] = {}
    if eff == "closest":
        result["reflen"] = min((abs(length - testlen), length) for length in reflen)[1]
    else:
        result["reflen"] = reflen
    result["testlen"] = testlen
    result["guess"] = [max(0, testlen - k + 1) for k in range(1, n + 1)]
    result["correct"] = [0] * n
    for ngram, count in counts.items():
        result["correct"][len(ngram) - 1] += min(maxcounts.get(ngram, 0), count)
    return result


class BleuScorer(Pairs):
    """BLEU-1..n over the pairs added, as pycocoevalcap 1.2's ``BleuScorer`` (n at most 4).

    >>> scorer = BleuScorer(n=4)
    >>> scorer += ("a cat is on a mat", ["a cat sits on a mat"])
    >>> score, scores = scorer.compute_score(option="closest")
    >>> [round(s, 6) for s in score], len(scores)  # = pycocoevalcap 1.2
    ([0.833333, 0.707107, 0.5, 8e-05], 4)
    """

    def __init__(
        self, test: str | None = None, refs: list[str] | None = None, n: int = 4,
        special_reflen: float | None = None,
    ) -> None:  # fmt: skip
        if special_reflen is not None:
            raise ValueError(
                "BleuScorer(special_reflen=...): capeval chooses each candidate's reference "
                "length by compute_score's option (closest, shortest or average)"
            )
        super().__init__()
        self.n = n  # checked when scoring, as pycocoevalcap uses it there
        self._score: list[float] | None = None
        self.cook_append(test, refs)

    def _changed(self) -> None:
        self._score = None

    def _check_compatible(self, other: object) -> None:
        if not isinstance(other, BleuScorer) or other.n != self.n:
            raise AssertionError("incompatible BLEUs.")

    def compute_score(
        self, option: str | None = None, verbose: int = 0
    ) -> tuple[list[float], list[list[float]]] | list[float]:
        """``(corpus BLEU-1..n, per-pair lists of BLEU-1..n)``; ``option``: ``"closest"``,
        ``"shortest"`` or ``"average"`` reference length (None: ``"average"`` for one pair,
        else ``"closest"``, as pycocoevalcap). As there, a second call before another pair is
        added returns the corpus values alone (the cached ``_score``)."""
        n = operator.index(self.n)  # pycocoevalcap's range(n): TypeError for 2.0, True is 1
        if self._score is not None:
            return self._score
        if option is None:
            option = "average" if len(self.crefs) == 1 else "closest"
        if not self.crefs:  # pycocoevalcap checks the option per pair: no pair, no check
            option = "closest"
        if option not in OPTIONS:  # pycocoevalcap's assert, with the options named
            raise AssertionError(
                f"BleuScorer: unsupported reflen option {option!r} (closest, shortest or average)"
            )
        if n > MAX_ORDER and self.crefs and self.crefs[0] and self.ctest[0] is not None:
            # pycocoevalcap cooks 1- to 4-grams whatever n is, and its first pair's counts
            # have no fifth order to add up
            raise IndexError(
                f"BleuScorer(n={n}): pycocoevalcap 1.2 counts n-grams of 1 to {MAX_ORDER} words "
                "whatever n is, so a pair scored with n above 4 has no count to read (its "
                "IndexError: list index out of range)"
            )
        values = bleu_values(*self.token_lists(), option)
        totals = values.totals
        # lengths are whole numbers but for the average of the references' lengths (with no
        # pair added, pycocoevalcap's 0 it starts from)
        length: Any = float if option == "average" and self.crefs else int
        if verbose > 1:  # each pair's counts (cooked for 4 orders whatever n), as printed
            for correct, guess, testlen, reflen, lengths in values.counts:
                comps = {"reflen": lengths, "testlen": testlen, "guess": guess, "correct": correct}
                print(comps, length(reflen))
        if verbose > 0:  # the pooled counts and the length ratio, as pycocoevalcap prints them
            reflen = length(totals.reference_length)
            print(
                {
                    "testlen": totals.candidate_length,
                    "reflen": reflen,
                    "guess": _orders(totals.guess, n, 0),
                    "correct": _orders(totals.correct, n, 0),
                }
            )
            print("ratio:", (totals.candidate_length + TINY) / (reflen + SMALL))
        self._score = _orders(values.corpus, n, 0.0)
        return self._score, [list(v) for v in _orders(values.items, n, ())]


def _orders(values: Any, n: int, fill: Any) -> list[Any]:
    """The first ``n`` orders' values as pycocoevalcap lists them: none for ``n <= 0`` (its
    ``range(n)``) and, past the 4 counted (no pair scored), ``fill``: a BLEU of 0, a count of
    0, no per-pair value."""
    n = max(n, 0)
    return [*values[:n], *[fill] * (n - min(n, len(values)))]
