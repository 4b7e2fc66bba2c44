"""SPICE: cold vs warm parse cache on COCO val2014 sets, for each parser.

Cold = an empty parse cache (a temporary cache directory, so the parser parses every distinct
sentence, in one process per available CPU); warm = the same batch again in the same process
with the cache filled; then the ratio of the two parsers' cold times. Agreement with the jar
is ``bench spice_parity``. Prints; asserts nothing.
"""

from __future__ import annotations

import os
import tempfile
import time

from capeval_core.metrics import make_batch
from capeval_core.resources import CACHE_ENV, coco_caption_sets


def main(n_images: int = 5000) -> None:
    from capeval_core.meteor_resources import meteor_synsets

    sets = coco_caption_sets("val", n_images)
    batch = make_batch([s.candidate for s in sets], [s.references for s in sets], "ptb")
    distinct = len(
        {" ".join(t) for t in batch.candidate_tokens}
        | {" ".join(t) for refs in batch.reference_tokens for t in refs}
    )
    start = time.perf_counter()
    meteor_synsets()  # shared with METEOR; loaded once per process
    load_t = time.perf_counter() - start
    from capeval_core.spice.parse import PARSERS, CaptionParser

    workers = CaptionParser(cache=False).n_process
    print(f"SPICE, {n_images} COCO val2014 sets, {distinct} sentences, {workers} parse process(es)")
    print(f"  METEOR synsets load          : {load_t:6.2f} s")
    times = {}
    for parser in PARSERS:
        times[parser] = _cold_and_warm(batch, parser, distinct)
    new, old = times["stanford-emulation"][0], times["spacy-sm"][0]
    print(f"  cold, stanford-emulation / spacy-sm: {new / old:.2f}x")


def _cold_and_warm(batch, parser: str, distinct: int) -> tuple[float, float]:
    """Score the batch with an empty parse cache, then again with it filled."""
    from capeval_core.metrics.spice import Spice

    old = os.environ.get(CACHE_ENV)
    with tempfile.TemporaryDirectory() as tmp:
        os.environ[CACHE_ENV] = tmp
        try:
            start = time.perf_counter()
            cold = Spice(parser=parser).score_batch(batch, warn=False)
            cold_t = time.perf_counter() - start
            start = time.perf_counter()
            warm = Spice(parser=parser).score_batch(batch, warn=False)
            warm_t = time.perf_counter() - start
        finally:
            if old is None:
                os.environ.pop(CACHE_ENV, None)
            else:
                os.environ[CACHE_ENV] = old
    print(f"  {parser}:")
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
    return cold_t, warm_t
