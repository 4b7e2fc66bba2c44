"""pycocoevalcap's ``meteor.meteor``: ``Meteor().compute_score(gts, res)``, capeval's METEOR
1.5 (the jar's numbers, without the jar)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from capeval_core.metrics.meteor import Meteor as MeteorMetric
from capeval_core.pycocoevalcap import _inputs


class Meteor:
    """METEOR 1.5 (``-l en -norm``, the ranking task's parameters) as pycocoevalcap 1.2 runs
    ``meteor-1.5.jar``: the corpus score from the images' pooled statistics and each image's
    own. Nothing starts at construction (pycocoevalcap starts a JVM there).
    """

    def compute_score(
        self, gts: Mapping[Any, list[str]], res: Mapping[Any, list[str]]
    ) -> tuple[float, list[float]]:
        """``(corpus METEOR, per-image list)``, images in ``gts``'s order.

        Captions with single spaces between words are scored in worker processes when there
        are many (:func:`capeval_core.scoring.score_set`); others, whose spacing the jar
        sees, here as they are.
        """
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
