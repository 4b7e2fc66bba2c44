"""pycocoevalcap 1.2's public API, computed by capeval: no Java, the same numbers.

Replace ``pycocoevalcap`` by ``capeval_core.pycocoevalcap`` in the import lines and nothing
else changes::

    from pycocotools.coco import COCO
    from capeval_core.pycocoevalcap.eval import COCOEvalCap

    coco = COCO("captions_val2014.json")
    cocoRes = coco.loadRes("results.json")
    cocoEval = COCOEvalCap(coco, cocoRes)
    cocoEval.params["image_id"] = cocoRes.getImgIds()
    cocoEval.evaluate()
    cocoEval.eval["CIDEr"], cocoEval.imgToEval[391895]["SPICE"]["All"]["f"]

The modules are pycocoevalcap's: ``eval.COCOEvalCap``, ``tokenizer.ptbtokenizer.PTBTokenizer``,
``bleu.bleu.Bleu``, ``meteor.meteor.Meteor``, ``rouge.rouge.Rouge``, ``cider.cider.Cider`` and
``spice.spice.Spice``, with its constructors, methods, arguments, return types, assertions and
printed lines. Each scorer is capeval's metric of the registry (one implementation per
metric); ``COCOEvalCap.evaluate`` scores all eight values in worker processes on large sets
(:func:`capeval_core.scoring.score_set`, the call behind ``capeval score``).

Deliberate differences (the README's "Coming from pycocoevalcap" lists them all): per-image
SPICE in ``COCOEvalCap.imgToEval`` is the image's own (pycocoevalcap attaches it to another
image when the ids are not in sorted order); nothing starts Java or writes into the package
folder. ``Bleu(n)`` and ``Cider(n=...)`` count n-grams of 1 to 4 words whatever ``n`` is, as
pycocoevalcap's: other values of ``n`` give its values or its ``IndexError``.
"""
