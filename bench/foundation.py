"""Tokenize + BLEU + ROUGE-L + CIDEr-D: capeval vs pycocoevalcap on the same COCO images.

Both run in this process on the same 5,000 COCO val2014 images (candidate = first caption by
annotation id, references = the others). pycocoevalcap tokenizes with its Java PTB tokenizer
(JVM start-up included, as users pay it); capeval with its Python emulation.
"""

from __future__ import annotations

import contextlib
import io
import time
from collections.abc import Callable
from typing import Any

from capeval_core.metrics import get_metric, make_batch
from capeval_core.resources import coco_caption_sets


def _timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def run_pycocoevalcap(sets) -> tuple[dict[str, float], dict[str, float]]:
    from pycocoevalcap.bleu.bleu import Bleu
    from pycocoevalcap.cider.cider import Cider
    from pycocoevalcap.rouge.rouge import Rouge
    from pycocoevalcap.tokenizer.ptbtokenizer import PTBTokenizer

    gts = {s.image_id: [{"caption": r} for r in s.references] for s in sets}
    res = {s.image_id: [{"caption": s.candidate}] for s in sets}
    times, values = {}, {}
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        tok = PTBTokenizer()
        times["tokenize"], (g, r) = _timed(lambda: (tok.tokenize(gts), tok.tokenize(res)))
        times["bleu"], (bleu, _) = _timed(lambda: Bleu(4).compute_score(g, r))
    times["rouge_l"], (rouge, _) = _timed(lambda: Rouge().compute_score(g, r))
    times["cider_d"], (cider, _) = _timed(lambda: Cider().compute_score(g, r))
    values = {"bleu_4": bleu[3], "rouge_l": float(rouge), "cider_d": float(cider)}
    return times, values


def run_capeval(sets) -> tuple[dict[str, float], dict[str, float]]:
    cands = [s.candidate for s in sets]
    refs = [s.references for s in sets]
    times, values = {}, {}
    times["tokenize"], batch = _timed(lambda: make_batch(cands, refs, "ptb"))
    for key, report in (("bleu", "bleu_4"), ("rouge_l", "rouge_l"), ("cider_d", "cider_d")):
        metric = get_metric(key)
        times[key], result = _timed(lambda m=metric: m.score_batch(batch))
        values[report] = result.corpus[report]
    return times, values


def main(n_images: int = 5000) -> None:
    sets = coco_caption_sets("val", n_images)
    n_refs = sum(len(s.references) for s in sets)
    print(
        f"\n== Foundation: tokenize + BLEU + ROUGE-L + CIDEr-D on {len(sets)} COCO val2014 "
        f"images ({n_refs} references) =="
    )
    ours_t, ours_v = run_capeval(sets)
    theirs_t, theirs_v = run_pycocoevalcap(sets)
    ours_t["total"] = sum(ours_t.values())
    theirs_t["total"] = sum(theirs_t.values())
    print(f"{'step':<10} {'capeval s':>10} {'pycocoevalcap s':>16} {'speed-up':>9}")
    for step in ours_t:
        ratio = theirs_t[step] / ours_t[step] if ours_t[step] else float("inf")
        print(f"{step:<10} {ours_t[step]:>10.3f} {theirs_t[step]:>16.3f} {ratio:>8.1f}x")
    for key, value in ours_v.items():
        print(
            f"{key:<10} capeval {value:.12f}  pycocoevalcap {theirs_v[key]:.12f}  "
            f"diff {abs(value - theirs_v[key]):.1e}"
        )
