"""pycocoevalcap's ``bleu.bleu_scorer``: ``BleuScorer``, to which code adds one
``(candidate, references)`` pair at a time (``scorer += (hypo, refs)``) before
``compute_score(option, verbose)``; capeval's BLEU (:func:`~capeval_core.metrics.bleu.bleu_values`).

Its public methods as pycocoevalcap 1.2 has them: ``cook_append``, ``+=`` (a pair, or another
scorer), ``size``, ``copy``, ``compute_score``. The methods that rescore or reweigh a
scorer's cooked counts (``ratio``, ``reflen``, ``testlen``, ``retest``, ``rescore``, ``compatible``,
``score_ratio``, ``recompute_score``, ``single_reflen``) and ``special_reflen`` are not offered.
"""

from __future__ import annotations

import numbers
from typing import Any

from capeval_core.metrics.bleu import MAX_ORDER, SMALL, TINY, bleu_values
from capeval_core.pycocoevalcap._inputs import Pairs

#: ``compute_score``'s options: how each candidate's reference length is chosen
OPTIONS = ("closest", "shortest", "average")


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
        if isinstance(n, bool) or not isinstance(n, numbers.Integral) or not 1 <= n <= MAX_ORDER:
            raise ValueError(
                f"BleuScorer(n): capeval computes BLEU-1 to BLEU-{MAX_ORDER} (got n={n!r})"
            )
        if special_reflen is not None:
            raise ValueError(
                "BleuScorer(special_reflen=...): capeval chooses each candidate's reference "
                "length by compute_score's option (closest, shortest or average)"
            )
        super().__init__()
        self.n = int(n)
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
        values = bleu_values(*self.token_lists(), option)
        n = self.n
        # lengths are whole numbers but for the average of the references' lengths (with no
        # pair added, pycocoevalcap's 0 it starts from)
        length: Any = float if option == "average" and self.crefs else int
        if verbose > 1:  # each pair's counts (cooked for 4 orders whatever n), as printed
            for correct, guess, testlen, reflen, lengths in values.counts:
                comps = {"reflen": lengths, "testlen": testlen, "guess": guess, "correct": correct}
                print(comps, length(reflen))
        if verbose > 0:  # the pooled counts and the length ratio, as pycocoevalcap prints them
            totals = values.totals
            reflen = length(totals.reference_length)
            print(
                {
                    "testlen": totals.candidate_length,
                    "reflen": reflen,
                    "guess": list(totals.guess[:n]),
                    "correct": list(totals.correct[:n]),
                }
            )
            print("ratio:", (totals.candidate_length + TINY) / (reflen + SMALL))
        self._score = values.corpus[:n]
        return self._score, values.items[:n]
