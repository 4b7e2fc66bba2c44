"""METEOR: capeval's pure-Python port vs ``meteor-1.5.jar`` through pycocoevalcap.

Both score the same PTB tokens (capeval's emulation tokenizes once for both, so only METEOR
is timed). Reported: the first score in a fresh process (capeval once its paraphrase index
exists vs the jar's JVM start-up), ``n_images`` COCO val2014 sets end to end (resource
loading / JVM start-up included), a warm single pair, and the resident memory the loaded
METEOR resources take. Prints ratios; asserts nothing.
"""

from __future__ import annotations

import contextlib
import io
import statistics
import subprocess
import sys
import time

from capeval_core.metrics import make_batch
from capeval_core.resources import coco_caption_sets

PAIR = ("a kid is sitting on a couch", ["a child sits on a sofa", "a boy on a sofa"])

_CAPEVAL_FIRST = """
import time
t = time.perf_counter()
from capeval_core.metrics.meteor import Meteor
v = Meteor(tokenizer="whitespace").score([{hyp!r}], [{refs!r}]).value
print(time.perf_counter() - t, v)
"""

_JAR_FIRST = """
import time
t = time.perf_counter()
from pycocoevalcap.meteor.meteor import Meteor
v = Meteor().compute_score({{0: {refs!r}}}, {{0: [{hyp!r}]}})[0]
print(time.perf_counter() - t, v)
"""

_RSS = """
import time

def rss():
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS"):
            return int(line.split()[1]) / 1024

from capeval_core.metrics import meteor
before = rss()
t = time.perf_counter()
meteor.Meteor(tokenizer="whitespace").score([{hyp!r}], [{refs!r}])
print(rss() - before, time.perf_counter() - t)
"""


def _fresh(code: str) -> tuple[float, float, str]:
    """Run ``code`` in a new interpreter: wall time of the process and its printed numbers."""
    start = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.split()
    return time.perf_counter() - start, float(out[0]), out[1] if len(out) > 1 else ""


def main(n_images: int = 5000) -> None:
    from capeval_core.meteor_resources import paraphrase_index

    paraphrase_index()  # build it now if needed, so the timings below never include that
    hyp, refs = PAIR

    print(f"METEOR 1.5: capeval vs meteor-1.5.jar (pycocoevalcap), {n_images} COCO val2014 sets")
    cap_proc, cap_in, cap_v = _fresh(_CAPEVAL_FIRST.format(hyp=hyp, refs=refs))
    jar_proc, jar_in, jar_v = _fresh(_JAR_FIRST.format(hyp=hyp, refs=refs))
    print(
        f"  first score, fresh process : capeval {cap_proc:6.2f} s (import+load+score "
        f"{cap_in:.2f} s) | jar {jar_proc:6.2f} s ({jar_in:.2f} s) | "
        f"jar/capeval {jar_proc / cap_proc:5.1f}x   values {cap_v} vs {jar_v}"
    )

    sets = coco_caption_sets("val", n_images)
    batch = make_batch([s.candidate for s in sets], [s.references for s in sets], "ptb")
    from capeval_core.metrics.meteor import Meteor

    metric = Meteor()
    start = time.perf_counter()
    ours = metric.score_batch(batch)  # includes loading the resources in this process
    cap_t = time.perf_counter() - start

    from pycocoevalcap.meteor.meteor import Meteor as JarMeteor

    gts = {i: [" ".join(r) for r in refs_] for i, refs_ in enumerate(batch.reference_tokens)}
    res = {i: [" ".join(c)] for i, c in enumerate(batch.candidate_tokens)}
    start = time.perf_counter()
    with contextlib.redirect_stderr(io.StringIO()):
        jar = JarMeteor()
        theirs, _ = jar.compute_score(gts, res)
    jar_t = time.perf_counter() - start
    print(
        f"  {n_images} sets end to end     : capeval {cap_t:6.2f} s | jar {jar_t:6.2f} s "
        f"(JVM start-up included) | jar/capeval {jar_t / cap_t:5.1f}x   "
        f"corpus {ours.value:.12f} vs {theirs:.12f}"
    )

    one = make_batch([hyp], [refs], "whitespace")
    metric_ws = Meteor(tokenizer="whitespace")
    cap_times = []
    for _ in range(200):
        start = time.perf_counter()
        metric_ws.score_batch(one)
        cap_times.append(time.perf_counter() - start)
    jar_times = []
    for _ in range(50):
        start = time.perf_counter()
        jar.compute_score({0: refs}, {0: [hyp]})
        jar_times.append(time.perf_counter() - start)
    cap_med, jar_med = statistics.median(cap_times), statistics.median(jar_times)
    print(
        f"  warm single pair (median)  : capeval {cap_med * 1e3:6.2f} ms | jar "
        f"{jar_med * 1e3:6.2f} ms (pipe round trip) | jar/capeval {jar_med / cap_med:5.1f}x"
    )

    rss_mb, load_s = _fresh(_RSS.format(hyp=hyp, refs=refs))[1:]
    print(
        f"  resident memory of the loaded METEOR resources: {rss_mb:.0f} MB "
        f"(loaded in {float(load_s):.2f} s; the jar runs with -Xmx2G)"
    )


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 5000)
