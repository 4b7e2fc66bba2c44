"""pycocoevalcap's ``meteor.meteor``: ``Meteor().compute_score(gts, res)``, capeval's METEOR
1.5 (the jar's numbers, without the jar)."""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from typing import Any

from capeval_core.metrics.meteor import Meteor as MeteorMetric
from capeval_core.metrics.meteor import (
    MeteorStats,
    aggregate_statistics,
    score_statistics,
)
from capeval_core.pycocoevalcap import _inputs


class Meteor:
    """METEOR 1.5 (``-l en -norm``, the ranking task's parameters) as pycocoevalcap 1.2 runs
    ``meteor-1.5.jar``: the corpus score from the images' pooled statistics and each image's
    own. Nothing starts at construction (pycocoevalcap starts a JVM there); ``lock`` is
    there for code that holds it around its own calls, as pycocoevalcap's guards its JVM.
    """

    def __init__(self) -> None:
        self.lock = threading.Lock()

    def compute_score(
        self, gts: Mapping[Any, list[str]], res: Mapping[Any, list[str]]
    ) -> tuple[float, list[float]]:
        """``(corpus METEOR, per-image list)``, images in ``gts``'s order.

        Captions with single spaces between words are scored in worker processes when there
        are many (:func:`capeval_core.scoring.score_set`); others, whose spacing the jar
        sees, here as they are.
        """
        with self.lock:
            return self._compute_score(gts, res)

    def _compute_score(
        self, gts: Mapping[Any, list[str]], res: Mapping[Any, list[str]]
    ) -> tuple[float, list[float]]:
        # an image without references is scored against an empty one, as the jar is handed
        # pycocoevalcap's " ||| ".join([]) (its Meteor asserts no len(ref) >= 1)
        gts = (
            {i: g if len(g) else [""] for i, g in gts.items()} if isinstance(gts, Mapping) else gts
        )
        ids = _inputs.check(gts, res, "Meteor", strict=False)
        cands, refs = _inputs.texts(gts, res, ids)
        if all(map(_inputs.plain, cands)) and all(_inputs.plain(r) for g in refs for r in g):
            from capeval_core.scoring import score_set

            result = score_set(cands, refs, ["meteor"], tokenizer="whitespace").results["meteor"]
        else:
            metric = MeteorMetric(tokenizer="whitespace")
            result = metric.score_batch(_inputs.spaced_batch(cands, refs), warn=False)
        return float(result.value), [float(v) for v in result.segment_values()]

    def method(self) -> str:
        return "METEOR"

    def _stat(self, hypothesis_str: str, reference_list: Sequence[str]) -> str:
        """The jar's statistics line for one hypothesis and its references (its ``SCORE``
        answer: the best reference's 23 numbers), which reward and evaluation code collects
        to score later; the strings are read as pycocoevalcap hands them to the jar."""
        return self._details(hypothesis_str, reference_list).stats.line()

    def _score(self, hypothesis_str: str, reference_list: Sequence[str]) -> float:
        """One hypothesis's METEOR, the jar's ``EVAL`` of its statistics line.

        pycocoevalcap 1.2's ``_score`` writes text to the JVM's byte pipe and raises
        ``TypeError`` under Python 3; this returns the score that code was written to read.
        """
        with self.lock:
            details = self._details(hypothesis_str, reference_list)
            stats = MeteorStats.from_numbers(details.stats.line().split())  # as EVAL reads it
            return score_statistics(aggregate_statistics([stats]), details.parameters).score

    def __del__(self) -> None:
        """Nothing to stop (pycocoevalcap's ends its JVM here); code calling it works."""

    @staticmethod
    def _details(hypothesis_str: str, reference_list: Sequence[str]) -> Any:
        for text in (hypothesis_str, *reference_list):
            if not isinstance(text, str):
                raise TypeError(f"Meteor: captions are strings (got {type(text).__name__})")
        metric = MeteorMetric(tokenizer="whitespace")
        batch = _inputs.spaced_batch([hypothesis_str], [list(reference_list)])
        return metric.score_batch(batch, warn=False).segments[0].details
