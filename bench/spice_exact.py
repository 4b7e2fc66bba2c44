"""SPICE's default parser (``stanford-pcfg``, the jar's numbers) against ``spice-1.0.jar``.

1. **One system**: the first ``n_images`` COCO val2014 images (ascending id) with their five
   val2014 references, as the Karpathy test protocol scores them; as the system's captions,
   COCO *train2014* captions (one per image, in annotation order), with the shipped parses
   kept to val2014's (``CAPEVAL_SPICE_SHIPPED=coco-val2014``), so every candidate is parsed as
   a new model's would be. Cold: an empty user cache, every available CPU. Then the jar on
   the same input in the same run (where the development-time oracle is fetched), per-image
   SPICE compared.
2. **Throughput** on captions outside the shipped parses, both after loading: capeval in one
   process, the jar's pipeline (``SpiceOracle.java``) in one JVM; each timed on two sizes and
   the difference taken, so loading cancels out.
3. **Long input**: single sentences of 60, 100 and 150 words, and a 200-word description of
   several sentences.

Prints; asserts nothing. ``python -m bench spice_exact [--images N]``.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import tempfile
import time
from pathlib import Path

from capeval_core.resources import CACHE_ENV, coco_captions
from capeval_core.spice.shipped import SHIPPED_ENV

#: captions per size of the throughput runs (the difference is what is timed)
THROUGHPUT = (200, 1200)


def _system(n_images: int) -> tuple[list[str], list[tuple[str, ...]], list[int]]:
    """Candidates (train2014 captions) and five val2014 references per image."""
    from collections import defaultdict

    by_image: dict[int, list] = defaultdict(list)
    for c in coco_captions("val"):
        by_image[c.image_id].append(c)
    images = sorted(by_image)[:n_images]
    refs = [
        tuple(c.caption for c in sorted(by_image[i], key=lambda c: c.annotation_id)) for i in images
    ]
    train = coco_captions("train")
    cands = [train[k].caption for k in range(len(images))]
    return cands, refs, images


def _fresh_cache() -> tempfile.TemporaryDirectory:
    tmp = tempfile.TemporaryDirectory()
    os.environ[CACHE_ENV] = tmp.name
    return tmp


def main(n_images: int = 5000) -> None:
    from capeval_core.meteor_resources import meteor_synsets
    from capeval_core.metrics import make_batch
    from capeval_core.metrics.spice import Spice

    cands, refs, images = _system(n_images)
    batch = make_batch(cands, refs, "ptb")
    print(f"SPICE, default parser, one system on {len(images)} COCO val2014 images")
    old = {name: os.environ.get(name) for name in (CACHE_ENV, SHIPPED_ENV)}
    tmp = _fresh_cache()
    os.environ[SHIPPED_ENV] = "coco-val2014"  # the references' parses, not the candidates'
    try:
        start = time.perf_counter()
        meteor_synsets()  # SPICE's synonyms: part of a cold run
        result = Spice().score_batch(batch, warn=False)
        cold = time.perf_counter() - start
    finally:
        tmp.cleanup()
        for name, value in old.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
    print(f"  capeval, empty user cache : {cold:6.1f} s   SPICE {result.value:.4f}")
    ours = [s.value for s in result.segments]
    texts = (
        [" ".join(t) for t in batch.candidate_tokens],
        [[" ".join(t) for t in r] for r in batch.reference_tokens],
    )
    _against_jar(images, texts, ours, cold)
    _throughput()
    _long_input()


def _against_jar(images, texts, ours: list[float], cold: float) -> None:
    from tools import spice_oracle

    reason = spice_oracle.available()
    if reason is not None:
        print(f"  spice-1.0.jar: skipped ({reason})")
        return
    cands, refs = texts
    items = [
        {"image_id": i, "test": c, "refs": r} for i, c, r in zip(images, cands, refs, strict=True)
    ]
    with tempfile.TemporaryDirectory() as tmp:
        src, out = Path(tmp) / "in.json", Path(tmp) / "out.json"
        src.write_text(json.dumps(items), encoding="utf-8")
        start = time.perf_counter()
        subprocess.run(
            ["java", "-Xmx8G", "-cp", spice_oracle.classpath(), "edu.anu.spice.SpiceScorer",
             str(src), "-out", str(out), "-subset", "-silent"],
            check=True, capture_output=True,
        )  # fmt: skip
        jar_t = time.perf_counter() - start
        jar = {r["image_id"]: r["scores"]["All"]["f"] for r in json.loads(out.read_text())}
    same = sum(
        1
        for i, v in zip(images, ours, strict=True)
        if (math.isnan(v) and jar[i] is None) or (jar[i] is not None and abs(v - jar[i]) < 1e-9)
    )
    differ = [
        i
        for i, v in zip(images, ours, strict=True)
        if jar[i] is not None and abs(v - jar[i]) >= 1e-9
    ]
    mean_jar = sum(v for v in jar.values() if v is not None) / len(jar)
    print(f"  spice-1.0.jar, same input : {jar_t:6.1f} s   SPICE {mean_jar:.4f}")
    print(
        f"  capeval is {jar_t / cold:.1f}x faster; per-image SPICE equal on {same} of {len(images)}"
    )
    if differ:
        print(f"  images that differ: {differ[:20]}{' ...' if len(differ) > 20 else ''}")


def _throughput() -> None:
    from capeval_core.spice.parse import CaptionParser
    from capeval_core.tokenize import get_tokenizer

    train = coco_captions("train")
    pool = [" ".join(t) for t in get_tokenizer("ptb").tokenize_batch(
        [c.caption for c in train[100_000 : 100_000 + THROUGHPUT[1]]])]  # fmt: skip
    small, large = pool[: THROUGHPUT[0]], pool
    parser = CaptionParser("stanford-pcfg", cache=False, shipped=False, n_process=1)
    parser.tuples_of(["a warm up caption"])  # loaded and compiled
    times = []
    for texts in (small, large):
        start = time.perf_counter()
        parser.tuples_of(texts)
        times.append(time.perf_counter() - start)
    ours = (len(large) - len(small)) / (times[1] - times[0])
    print(f"  parse throughput, one process, after loading: capeval {ours:.0f} sentences/s")
    from tools import spice_oracle

    if spice_oracle.available() is not None:
        return
    jar_times = []
    with tempfile.TemporaryDirectory() as tmp:
        for texts in (small, large):
            start = time.perf_counter()
            spice_oracle.parse([(str(k), t) for k, t in enumerate(texts)], Path(tmp) / "o.jsonl")
            jar_times.append(time.perf_counter() - start)
    jar = (len(large) - len(small)) / (jar_times[1] - jar_times[0])
    print(f"    the jar's pipeline, one JVM, after loading: {jar:.0f} sentences/s "
          f"(capeval {ours / jar:.1f}x)")  # fmt: skip


def _long_input() -> None:
    from capeval_core.spice.stanford_pcfg import caption_tuples, load_pipeline

    parser = load_pipeline()
    caption_tuples(parser, "a warm up caption")
    words = " and ".join(c.caption.lower().strip(" .") for c in coco_captions("train")[:60]).split()
    sentences = [c.caption.strip(" .") + "." for c in coco_captions("train")[60:100]]
    description = " ".join(sentences)
    description = " ".join(description.split()[:200])
    cases = [(f"one sentence of {n} words", " ".join(words[:n])) for n in (60, 100, 150)]
    cases.append(("a 200-word description of several sentences", description))
    for label, text in cases:
        start = time.perf_counter()
        caption_tuples(parser, text)
        print(f"  long input, {label}: {time.perf_counter() - start:.2f} s")
