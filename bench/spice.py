"""SPICE: cold vs warm parse cache on COCO val2014 sets, for each parser.

Cold = an empty parse cache (a temporary cache directory, so the parser parses every distinct
sentence, in one process per available CPU); warm = the same batch again in the same process
with the cache filled. The cold runs alternate between the parsers, ``ROUNDS`` times each, and
the ratio of their cold times is given per round and as the median: on a shared machine one
run's ratio swings by a few tenths. ``stanford-pcfg`` (the default, CoreNLP's PCFG itself) is
timed cold on the first :data:`PCFG_IMAGES` sets, beside ``stanford-emulation``, with the
shipped COCO parses off; ``bench spice_exact`` times it as it is used, against the jar.
Agreement with the jar is ``bench spice_parity``. Prints; asserts nothing.
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time

from capeval_core.metrics import make_batch
from capeval_core.resources import CACHE_ENV, coco_caption_sets

#: cold runs of each parser, alternating, for the median ratio
ROUNDS = 3
#: the spaCy-based parsers, timed on the whole protocol
SPACY_PARSERS = ("stanford-emulation", "spacy-sm")
#: sets the PCFG parser is timed on (a cold parse of all 5,000 would take minutes)
PCFG_IMAGES = 300


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
    from capeval_core.spice.parse import CaptionParser

    workers = CaptionParser(cache=False).n_process
    print(f"SPICE, {n_images} COCO val2014 sets, {distinct} sentences, {workers} parse process(es)")
    print(f"  METEOR synsets load          : {load_t:6.2f} s")
    cold: dict[str, list[float]] = {parser: [] for parser in SPACY_PARSERS}
    for round_ in range(ROUNDS):
        for parser in SPACY_PARSERS:
            cold[parser].append(_cold_and_warm(batch, parser, distinct, report=round_ == 0)[0])
    ratios = [
        new / old for new, old in zip(cold["stanford-emulation"], cold["spacy-sm"], strict=True)
    ]
    for parser, times in cold.items():
        print(
            f"  cold, {parser}, {ROUNDS} alternating runs: "
            + ", ".join(f"{t:.2f} s" for t in times)
        )
    print(
        "  cold, stanford-emulation / spacy-sm: "
        + ", ".join(f"{r:.2f}x" for r in ratios)
        + f"; median {statistics.median(ratios):.2f}x"
    )
    _pcfg(sets[:PCFG_IMAGES])


def _pcfg(sets) -> None:
    """stanford-pcfg against stanford-emulation, cold, on the same few sets, with the shipped
    COCO parses turned off (so the parser itself is timed)."""
    from capeval_core.spice.shipped import SHIPPED_ENV

    batch = make_batch([s.candidate for s in sets], [s.references for s in sets], "ptb")
    distinct = len(
        {" ".join(t) for t in batch.candidate_tokens}
        | {" ".join(t) for refs in batch.reference_tokens for t in refs}
    )
    print(f"  stanford-pcfg, {len(sets)} sets, {distinct} sentences, shipped parses off:")
    os.environ[SHIPPED_ENV] = "0"
    try:
        times = {
            parser: _cold_and_warm(batch, parser, distinct, report=False)[0]
            for parser in ("stanford-pcfg", "stanford-emulation")
        }
    finally:
        os.environ.pop(SHIPPED_ENV, None)
    per = {p: t / distinct * 1000 for p, t in times.items()}
    print(
        f"    cold: stanford-pcfg {times['stanford-pcfg']:.2f} s ({per['stanford-pcfg']:.1f} ms "
        f"a sentence), stanford-emulation {times['stanford-emulation']:.2f} s "
        f"({per['stanford-emulation']:.1f} ms): "
        f"{times['stanford-pcfg'] / times['stanford-emulation']:.1f}x"
    )


def _cold_and_warm(batch, parser: str, distinct: int, report: bool) -> tuple[float, float]:
    """Score the batch with an empty parse cache, then again with it filled; print if ``report``."""
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
    if not report:
        return cold_t, warm_t
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
