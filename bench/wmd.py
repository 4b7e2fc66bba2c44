"""WMD: capeval vs a plain loop over gensim ``wmdistance`` on the same COCO images and vectors.

Both run in this process on the same COCO val2014 images (candidate = first caption by
annotation id, references = the others), PTB-tokenized once by capeval, stop words removed
(metric-spec §7), default GloVe 6B 50-d vectors. gensim gets its own KeyedVectors over the
same memory-mapped array so each side computes its own norms. Also prints resident memory:
this process with the default vectors loaded, and a fresh process that imports what the app
imports and loads them.
"""

from __future__ import annotations

import math
import subprocess
import sys
import time
from pathlib import Path

from capeval_core.embeddings import _keyed_vectors, default_embeddings
from capeval_core.metrics import make_batch
from capeval_core.metrics.wmd import WMD
from capeval_core.resources import coco_caption_sets
from capeval_core.stopwords import wmd_stopwords

#: a fresh process: the app's imports, the default vectors, one WMD and one MEAN score
_APP_PROBE = """
import importlib.util
for name in ("streamlit", "plotly"):
    if importlib.util.find_spec(name):
        __import__(name)
import capeval_core
from capeval_core.embeddings import default_embeddings
default_embeddings()
capeval_core.score("wmd", ["a dog runs"], [["a dog is running"]])
capeval_core.score("mean", ["a dog runs"], [["a dog is running"]])
print(open("/proc/self/status").read())
"""


def _rss_mb(status: str | None = None) -> float:
    """VmRSS of this process (or of a /proc status text) in MB; NaN where /proc is missing."""
    try:
        text = status if status is not None else Path("/proc/self/status").read_text()
    except OSError:
        return math.nan
    for line in text.splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return math.nan


def run_gensim(kv, cands, refs, normalize: bool) -> tuple[float, float, list[list[float]]]:
    """The coco-caption scorer's loop: wmdistance per reference, exp(-d), max, mean."""
    start = time.perf_counter()
    distances, best = [], []
    for cand, group in zip(cands, refs, strict=True):
        ds = [kv.wmdistance(cand, ref, norm=normalize) for ref in group]
        distances.append(ds)
        best.append(max(0.0 if math.isinf(d) else math.exp(-d) for d in ds))
    return time.perf_counter() - start, sum(best) / len(best), distances


def main(n_images: int = 5000) -> None:
    import logging

    logging.getLogger("gensim").setLevel(logging.ERROR)  # "no words in vocabulary" warnings
    sets = coco_caption_sets("val", n_images)
    rss_start = _rss_mb()
    start = time.perf_counter()
    emb = default_embeddings()
    load_s = time.perf_counter() - start
    rss_loaded = _rss_mb()
    batch = make_batch([s.candidate for s in sets], [s.references for s in sets], "ptb")
    sw = wmd_stopwords()
    cands = [[w for w in toks if w not in sw] for toks in batch.candidate_tokens]
    refs = [[[w for w in r if w not in sw] for r in group] for group in batch.reference_tokens]
    n_pairs = sum(len(g) for g in refs)
    kv = _keyed_vectors(emb.kv.index_to_key, emb.kv.vectors)
    print(
        f"\n== WMD on {len(sets)} COCO val2014 images ({n_pairs} EMDs), GloVe 6B 50-d "
        f"(loaded in {load_s:.2f} s) =="
    )
    print(
        f"{'mode':<11} {'capeval s':>10} {'gensim s':>9} {'speed-up':>9}  corpus values, max |Δd|"
    )
    for normalize in (True, False):
        metric = WMD(embeddings=emb, normalize=normalize)
        metric.signature()  # digest and (normalised mode) norms outside the timing
        emb.vectors(["the"], normalize=normalize)
        start = time.perf_counter()
        result = metric.score_batch(batch)
        ours_s = time.perf_counter() - start
        theirs_s, theirs_v, distances = run_gensim(kv, cands, refs, normalize)
        worst = max(
            abs(seg.details.pairs[j].distance - d)
            for seg, ds in zip(result.segments, distances, strict=True)
            for j, d in enumerate(ds)
            if not math.isinf(d)
        )
        mode = "normalised" if normalize else "raw"
        print(
            f"{mode:<11} {ours_s:>10.3f} {theirs_s:>9.3f} {theirs_s / ours_s:>8.1f}x  "
            f"capeval {result.value:.12f}  gensim {theirs_v:.12f}  {worst:.1e}"
        )
    print(
        f"resident memory: {rss_start:.0f} MB before the vectors, {rss_loaded:.0f} MB with "
        f"them loaded, {_rss_mb():.0f} MB after scoring (this process)"
    )
    probe = subprocess.run(
        [sys.executable, "-c", _APP_PROBE], capture_output=True, text=True, check=False
    )
    if probe.returncode == 0:
        print(
            f"resident memory of a fresh process with the app's imports, the default vectors "
            f"and one WMD + MEAN score: {_rss_mb(probe.stdout):.0f} MB"
        )
    else:
        print(f"app memory probe failed: {probe.stderr.strip().splitlines()[-1:]}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 5000)
