"""pycocoevalcap's ``eval``: ``COCOEvalCap(coco, cocoRes).evaluate()``, every value capeval's.

Takes pycocotools ``COCO`` objects or anything with ``getImgIds()`` and ``imgToAnns``.
``evaluate`` tokenizes once and scores BLEU-1..4, METEOR, ROUGE-L, CIDEr-D and SPICE in one
:func:`capeval_core.scoring.score_set` call (worker processes on large sets), then fills
``eval``, ``imgToEval`` and ``evalImgs`` and prints pycocoevalcap's lines, in its order and
with its types; an image without a result, or with two, raises ``AssertionError`` naming it
after the lines pycocoevalcap prints before its BLEU asserts. One deliberate difference:
``imgToEval[i]["SPICE"]`` is image ``i``'s own SPICE; pycocoevalcap attaches the SPICE of
the ``k``-th image in sorted id order to the ``k``-th image of ``params["image_id"]``,
another image whenever those are not sorted. ``setImgToEvalImgs`` gets what
pycocoevalcap's gets (the ids as ``dict_keys``, ROUGE-L's and CIDEr's scores as arrays),
except that SPICE's ids come in sorted order, the order of its scores: so a subclass that
mends pycocoevalcap's attachment by sorting them (``sorted(imgIds)`` for ``"SPICE"``)
still attaches each image's own.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from capeval_core.coco_files import sorted_id_order
from capeval_core.metrics.bleu import SMALL, TINY
from capeval_core.metrics.spice import COUNTS_STATISTIC
from capeval_core.progress import StderrBar
from capeval_core.pycocoevalcap.bleu.bleu import Bleu
from capeval_core.pycocoevalcap.cider.cider import Cider
from capeval_core.pycocoevalcap.meteor.meteor import Meteor
from capeval_core.pycocoevalcap.rouge.rouge import Rouge
from capeval_core.pycocoevalcap.spice.spice import Spice, corpus_value, image_scores
from capeval_core.pycocoevalcap.tokenizer.ptbtokenizer import PTBTokenizer

#: the names pycocoevalcap's ``eval`` module holds, for code that imports them from it
#: (``evaluate`` scores with capeval's registry in one call, not through these classes)
__all__ = ["Bleu", "COCOEvalCap", "Cider", "Meteor", "PTBTokenizer", "Rouge", "Spice"]

#: pycocoevalcap's scorers in its order: the name ``method()`` gives and the keys it sets
SCORERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Bleu", ("Bleu_1", "Bleu_2", "Bleu_3", "Bleu_4")),
    ("METEOR", ("METEOR",)),
    ("Rouge", ("ROUGE_L",)),
    ("CIDEr", ("CIDEr",)),
    ("SPICE", ("SPICE",)),
)
#: capeval's key of each of pycocoevalcap's (the set ``--metrics coco-caption`` names)
KEYS = {
    "Bleu_1": "bleu_1",
    "Bleu_2": "bleu_2",
    "Bleu_3": "bleu_3",
    "Bleu_4": "bleu_4",
    "METEOR": "meteor",
    "ROUGE_L": "rouge_l",
    "CIDEr": "cider_d",
    "SPICE": "spice",
}


class COCOEvalCap:
    """coco-caption's evaluation of a results set against its annotations.

    The attribute ``workers`` (capeval's addition; None: one process per available CPU)
    scores large sets in that many worker processes; 0 keeps everything in this process.
    """

    def __init__(self, coco: Any, cocoRes: Any) -> None:
        self.evalImgs: list[dict[str, Any]] = []
        self.eval: dict[str, Any] = {}
        self.imgToEval: dict[Any, dict[str, Any]] = {}
        self.coco = coco
        self.cocoRes = cocoRes
        self.params = {"image_id": coco.getImgIds()}
        self.workers: int | None = None

    def evaluate(self) -> None:
        from capeval_core.scoring import score_set

        imgIds = self.params["image_id"]
        gts: dict[Any, Any] = {}
        res: dict[Any, Any] = {}
        for imgId in imgIds:
            gts[imgId] = self.coco.imgToAnns[imgId]
            res[imgId] = self.cocoRes.imgToAnns[imgId]
        print("tokenization...")
        ids = _captioned(gts, res)
        print("setting up scorers...")
        unscorable = _unscorable(gts, res, ids)
        if unscorable is not None:  # pycocoevalcap's BLEU asserts, once it says it computes
            print(f"computing {SCORERS[0][0]} score...")
            raise unscorable
        candidates = [res[i][0]["caption"] for i in ids]
        references = [[a["caption"] for a in gts[i]] for i in ids]
        # stdout as pycocoevalcap's; a bar on stderr only while a long caption's parse says
        # how far it is (the jar, too, writes its progress on stderr)
        with StderrBar("capeval", "step", shown=False, leave=False) as bar:
            scored = score_set(
                candidates,
                references,
                list(KEYS.values()),
                tokenizer="ptb",
                workers=self.workers,
                on_progress=bar,
            )
        results = scored.results
        # the ids as pycocoevalcap passes them (its tokenized dict's keys); SPICE's in sorted
        # order, the order its scores come in (see the module doc)
        in_order = dict.fromkeys(ids).keys()
        order = sorted_id_order(ids)
        in_sorted_order = dict.fromkeys(ids[k] for k in order).keys()
        for method, names in SCORERS:
            print(f"computing {method} score...")
            if method == "Bleu":
                _print_bleu(scored.statistics["bleu"]["bleu"])
            for name in names:
                score, scores = _values(name, results[KEYS[name]], scored, order)
                self.setEval(score, name)
                self.setImgToEvalImgs(
                    scores, in_sorted_order if name == "SPICE" else in_order, name
                )
                print("%s: %0.3f" % (name, score))  # noqa: UP031 - pycocoevalcap's format
        self.setEvalImgs()

    def setEval(self, score: Any, method: str) -> None:
        self.eval[method] = score

    def setImgToEvalImgs(self, scores: Any, imgIds: Any, method: str) -> None:
        for imgId, score in zip(imgIds, scores, strict=False):
            if imgId not in self.imgToEval:
                self.imgToEval[imgId] = {}
                self.imgToEval[imgId]["image_id"] = imgId
            self.imgToEval[imgId][method] = score

    def setEvalImgs(self) -> None:
        self.evalImgs = [eval for imgId, eval in self.imgToEval.items()]


def _captioned(gts: dict[Any, Any], res: dict[Any, Any]) -> list[Any]:
    """The image ids with a caption, once every caption is text (a TypeError naming the
    image, where pycocoevalcap's tokenizer raises AttributeError)."""
    # an image with neither a result nor a reference leaves both of pycocoevalcap's
    # tokenized dicts (a held-out image of the annotations file): not scored, no assertion
    ids = [i for i in gts if len(res[i]) or len(gts[i])]
    if not ids:  # pycocoevalcap: a ValueError once its METEOR reads no score
        raise ValueError("COCOEvalCap: no image of params['image_id'] has a caption")
    for where, anns in (("results", res), ("annotations", gts)):
        for i in ids:
            for j, ann in enumerate(anns[i]):
                text = ann["caption"]
                if not isinstance(text, str):  # pycocoevalcap's tokenizer: AttributeError
                    raise TypeError(
                        f"COCOEvalCap: caption {j + 1} of image {i!r} in the {where} must be "
                        f"text (got {type(text).__name__})"
                    )
    return ids


def _unscorable(gts: dict[Any, Any], res: dict[Any, Any], ids: list[Any]) -> AssertionError | None:
    """Where pycocoevalcap's BLEU, its first scorer, asserts (an image without a result or a
    reference drops out of its tokenized dicts, so their keys differ; one with two results
    fails ``len(hypo) == 1``), with the images named (pycocoevalcap's assertions say nothing)."""
    no_result = [i for i in ids if len(res[i]) == 0]
    no_reference = [i for i in ids if len(gts[i]) == 0]
    if no_result or no_reference:
        return AssertionError(
            "COCOEvalCap: every image of params['image_id'] needs a caption in the results and "
            "one in the annotations (pycocoevalcap asserts gts.keys() == res.keys()); without "
            f"a result: {no_result[:5]} ({len(no_result)}), without a reference: "
            f"{no_reference[:5]} ({len(no_reference)})"
        )
    many = [i for i in ids if len(res[i]) > 1]
    if many:
        return AssertionError(
            f"COCOEvalCap: images with more than one caption in the results: {many[:5]} "
            f"({len(many)}); pycocoevalcap asserts len(hypo) == 1"
        )
    return None


def _print_bleu(stats: np.ndarray) -> None:
    """What pycocoevalcap's ``Bleu(4).compute_score`` prints: the pooled counts, the ratio."""
    sums = stats.sum(axis=0)
    correct = [int(x) for x in sums[:4]]
    guess = [int(x) for x in sums[4:8]]
    testlen = int(sums[8])
    # the reference lengths summed one by one, in order, as BleuScorer sums them
    reflen = 0
    for x in stats[:, 9].tolist():
        reflen += int(x) if float(x).is_integer() else x
    print({"testlen": testlen, "reflen": reflen, "guess": guess, "correct": correct})
    print("ratio:", (testlen + TINY) / (reflen + SMALL))


def _values(name: str, result: Any, scored: Any, order: list[int]) -> tuple[Any, Any]:
    """One key's corpus value and per-image values with pycocoevalcap's types, SPICE's in
    sorted id order (``order``: the images' positions so sorted, as pycocoevalcap's ``Spice``
    returns them)."""
    if name == "SPICE":
        rows = scored.statistics["spice"][COUNTS_STATISTIC].tolist()
        scores = [image_scores(rows[k]) for k in order]
        # the mean over images in sorted id order, as pycocoevalcap's Spice sums them
        return corpus_value(scores), scores
    values = result.segment_values()
    if name in ("ROUGE_L", "CIDEr"):  # numpy arrays and means there
        return np.float64(result.value), np.array(values)
    return float(result.value), [float(v) for v in values]
