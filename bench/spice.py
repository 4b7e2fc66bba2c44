"""SPICE (spaCy re-implementation): cold vs warm parse cache on COCO val2014 sets.

Cold = an empty parse cache (a temporary cache directory, so spaCy parses every distinct
sentence, in one process per available CPU); warm = the same batch again in the same process
with the cache filled. The SPICE jar is not run here (it needs CoreNLP models that are not
installed). Prints; asserts nothing.
"""

from __future__ import annotations

import os
import tempfile
import time

from capeval_core.metrics import make_batch
from capeval_core.resources import CACHE_ENV, coco_caption_sets


def main(n_images: int = 5000) -> None:
    from capeval_core.meteor_resources import meteor_synsets
    from capeval_core.metrics.spice import Spice

    sets = coco_caption_sets("val", n_images)
    batch = make_batch([s.candidate for s in sets], [s.references for s in sets], "ptb")
    distinct = len(
        {" ".join(t) for t in batch.candidate_tokens}
        | {" ".join(t) for refs in batch.reference_tokens for t in refs}
    )
    start = time.perf_counter()
    meteor_synsets()  # shared with METEOR; loaded once per process
    load_t = time.perf_counter() - start
    from capeval_core.spice.parse import CaptionParser

    workers = CaptionParser(cache=False).n_process
    print(
        f"SPICE (spaCy re-implementation), {n_images} COCO val2014 sets, {distinct} sentences, "
        f"{workers} parse process(es)"
    )
    print(f"  METEOR synsets load          : {load_t:6.2f} s")
    old = os.environ.get(CACHE_ENV)
    with tempfile.TemporaryDirectory() as tmp:
        os.environ[CACHE_ENV] = tmp
        try:
            start = time.perf_counter()
            cold = Spice().score_batch(batch, warn=False)
            cold_t = time.perf_counter() - start
            start = time.perf_counter()
            warm = Spice().score_batch(batch, warn=False)
            warm_t = time.perf_counter() - start
        finally:
            if old is None:
                os.environ.pop(CACHE_ENV, None)
            else:
                os.environ[CACHE_ENV] = old
    print(
        f"  cold (empty parse cache)     : {cold_t:6.2f} s ({distinct / cold_t:,.0f} sentences/s)"
        f"   SPICE {cold.value:.4f}"
    )
    print(f"  warm (parse cache filled)    : {warm_t:6.2f} s   SPICE {warm.value:.4f}")
    cats = warm.details.categories
    print(
        "  categories (mean F where defined): "
        + ", ".join(f"{k} {v[2]:.3f}" for k, v in cats.items())
    )
