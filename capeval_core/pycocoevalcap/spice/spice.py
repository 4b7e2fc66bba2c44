"""pycocoevalcap's ``spice.spice``: ``Spice().compute_score(gts, res)``, capeval's SPICE 1.0
(the jar's numbers with CoreNLP 3.6.0's parser, without Java)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from capeval_core.coco_files import nan_skipping_mean
from capeval_core.metrics.spice import COUNTS_STATISTIC, category_scores
from capeval_core.pycocoevalcap import _inputs

#: the categories in the order the jar's ``-subset`` output lists them
JAR_CATEGORIES = ("All", "Relation", "Cardinality", "Attribute", "Size", "Color", "Object")
#: each category's fields, in the jar's order
SCORE_KEYS = ("pr", "re", "f", "fn", "numImages", "fp", "tp")


def image_scores(counts: Sequence[float]) -> dict[str, dict[str, float]]:
    """One image's SPICE as pycocoevalcap returns it: per category (the jar's order) ``pr``,
    ``re``, ``f``, ``fn``, ``numImages``, ``fp``, ``tp`` as floats, NaN where the jar gives
    null; from a row of SPICE's ``category_counts`` statistic. An image SPICE left out (a
    caption its parser refuses; see ``Spice.unscorable``) has NaN everywhere.

    >>> image_scores([2, 1, 1] + [0, 0, 0] * 6)["All"]
    {'pr': 0.6666666666666666, 're': 0.6666666666666666, 'f': 0.6666666666666666, 'fn': 1.0, \
'numImages': 1.0, 'fp': 1.0, 'tp': 2.0}
    """
    if any(math.isnan(x) for x in counts):  # an image SPICE could not score
        return {name: dict.fromkeys(SCORE_KEYS, math.nan) for name in JAR_CATEGORIES}
    cats = category_scores(counts)
    out = {}
    for name in JAR_CATEGORIES:
        c = cats[name]
        out[name] = {
            "pr": float(c.precision),
            "re": float(c.recall),
            "f": float(c.f),
            "fn": float(c.fn),
            "numImages": 1.0,
            "fp": float(c.fp),
            "tp": float(c.tp),
        }
    return out


def score_images(
    candidates: Sequence[str], references: Sequence[Sequence[str]], **score_options: Any
) -> list[dict[str, dict[str, float]]]:
    """Each image's SPICE output (:func:`image_scores`) for tokenized captions, parsed as
    they are; ``score_options`` go to :func:`capeval_core.scoring.score_set`."""
    from capeval_core.scoring import score_set

    scored = score_set(
        candidates,
        references,
        ["spice"],
        tokenizer="whitespace",
        options={"spice": {"parse_input": "raw"}},
        **score_options,
    )
    return [image_scores(row) for row in scored.statistics["spice"][COUNTS_STATISTIC].tolist()]


def corpus_value(scores: Sequence[dict[str, dict[str, float]]]) -> np.float64:
    """The mean of the images' All F in their order, as pycocoevalcap takes it; over the
    images SPICE scored when it left some out (capeval's mean of SPICE,
    :func:`~capeval_core.coco_files.nan_skipping_mean`), NaN when it left out every one."""
    return nan_skipping_mean([s["All"]["f"] for s in scores])


class Spice:
    """SPICE 1.0 as pycocoevalcap 1.2 runs ``spice-1.0.jar`` with ``-subset``: no Java, no
    CoreNLP download (its parser's grammar ships with capeval), no 8 GB heap.

    >>> score, scores = Spice().compute_score({1: ["a kid on a couch"]},
    ...                                       {1: ["a child sitting on a sofa"]})
    >>> round(float(score), 4), sorted(scores[0]["Object"])
    (0.8, ['f', 'fn', 'fp', 'numImages', 'pr', 're', 'tp'])
    """

    def float_convert(self, obj: Any) -> float:
        try:
            return float(obj)
        except (TypeError, ValueError):
            return np.nan

    def compute_score(
        self, gts: Mapping[Any, list[str]], res: Mapping[Any, list[str]]
    ) -> tuple[np.float64, list[dict[str, dict[str, float]]]]:
        """``(mean of the images' All F, per-image category dicts)``, the images in sorted id
        order as pycocoevalcap returns them (:class:`~capeval_core.pycocoevalcap.eval.COCOEvalCap`
        attaches each to its own image). Many new captions are parsed in worker processes."""
        _inputs.check(gts, res, "Spice")
        ids = sorted(gts.keys())
        if not ids:  # pycocoevalcap: the mean of no image
            return np.float64(np.nan), []
        cands, refs = _inputs.texts(gts, res, ids)
        scores = score_images(cands, refs)
        average = corpus_value(scores)
        return average, scores

    def method(self) -> str:
        return "SPICE"
