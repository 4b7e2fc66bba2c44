"""SPICE: cold vs warm parse cache on COCO val2014 sets, with and without the shipped parses.

Cold = an empty parse cache (a temporary cache directory); warm = the same batch again in the
same process with the cache filled. With the shipped COCO parses turned off, the parser
(``stanford-pcfg``, CoreNLP's PCFG itself) parses every distinct sentence of the first
:data:`PCFG_IMAGES` sets, in one process per available CPU (a cold parse of all 5,000 would
take minutes); with them on (as installed), the COCO captions of all ``n_images`` sets are
read, not parsed. ``bench spice_exact`` times the parser against the jar, ``bench
spice_parity`` the agreement with it. Prints; asserts nothing.
"""

from __future__ import annotations

import os
import tempfile
import time

from capeval_core.metrics import make_batch
from capeval_core.resources import CACHE_ENV, coco_caption_sets

#: sets the parser itself is timed on
PCFG_IMAGES = 300


def main(n_images: int = 5000) -> None:
    from capeval_core.meteor_resources import meteor_synsets
    from capeval_core.spice.parse import CaptionParser
    from capeval_core.spice.shipped import SHIPPED_ENV

    sets = coco_caption_sets("val", n_images)
    start = time.perf_counter()
    meteor_synsets()  # shared with METEOR; loaded once per process
    print(f"SPICE (stanford-pcfg), {CaptionParser(cache=False).n_process} parse process(es)")
    print(f"  METEOR synsets load: {time.perf_counter() - start:.2f} s")
    os.environ[SHIPPED_ENV] = "0"
    try:
        _cold_and_warm(sets[:PCFG_IMAGES], "shipped parses off")
    finally:
        os.environ.pop(SHIPPED_ENV, None)
    _cold_and_warm(sets, "shipped parses on")


def _cold_and_warm(sets, label: str) -> None:
    """Score the sets with an empty parse cache, then again with it filled."""
    from capeval_core.metrics.spice import Spice

    batch = make_batch([s.candidate for s in sets], [s.references for s in sets], "ptb")
    distinct = len(
        {" ".join(t) for t in batch.candidate_tokens}
        | {" ".join(t) for refs in batch.reference_tokens for t in refs}
    )
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
    print(f"  {len(sets)} sets, {distinct} distinct sentences, {label}:")
    print(
        f"    cold (empty parse cache)   : {cold_t:6.2f} s ({distinct / cold_t:,.0f} sentences/s)"
        f"   SPICE {cold.value:.4f}"
    )
    print(f"    warm (parse cache filled)  : {warm_t:6.2f} s   SPICE {warm.value:.4f}")
    cats = warm.details.categories
    print(
        "    categories (mean F where defined): "
        + ", ".join(f"{k} {v[2]:.3f}" for k, v in cats.items())
    )
