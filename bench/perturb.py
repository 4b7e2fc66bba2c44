"""Perturbation lab, batch mode: one perturbation applied to every candidate of COCO val2014
(candidate = first caption by annotation id, references = the others), scored before and
after with BLEU-4, ROUGE-L, CIDEr-D and METEOR (issue 8's goal: 5,000 candidates in <= 60 s).

Prints the time of each step of ``capeval_core.perturb.perturb_batch`` (perturbing,
tokenizing, scoring) for a few perturbations, the first run including the one-off loading of
METEOR's synonym and paraphrase resources. Asserts nothing.
"""

from __future__ import annotations

import time

from capeval_core.perturb import perturb_batch
from capeval_core.resources import coco_caption_sets

KEYS = ("bleu_4", "rouge_l", "cider_d", "meteor")
NAMES = ("synonym", "shuffle", "redundant")


def main(n_images: int = 5000) -> None:
    start = time.perf_counter()
    sets = coco_caption_sets("val", n_images)
    cands = [s.candidate for s in sets]
    refs = [s.references for s in sets]
    print(
        f"\n== Perturbation lab, batch mode: {len(sets)} COCO val2014 candidates, "
        f"{', '.join(KEYS)} (COCO captions read in {time.perf_counter() - start:.1f} s) =="
    )
    print(f"{'perturbation':<14} {'changed':>8} {'wall s':>7} {'CPU s':>7}  mean delta per metric")
    for i, name in enumerate(NAMES):
        start, cpu = time.perf_counter(), time.process_time()
        result = perturb_batch(cands, refs, name, KEYS, seed=0)
        seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
        deltas = "  ".join(
            f"{k} {(result.after[k] - result.before[k]).mean():+.4f}" for k in result.keys
        )
        first = " (incl. resource loading)" if i == 0 else ""
        changed = int(result.changed.sum())
        print(f"{name:<14} {changed:>8} {seconds:>7.1f} {cpu:>7.1f}  {deltas}{first}")
    print("goal: <= 60 s per perturbation for 5,000 candidates (CPU s: wall time on an idle core)")


if __name__ == "__main__":
    main()
