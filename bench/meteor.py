"""METEOR: capeval (compiled aligner) vs ``meteor-1.5.jar`` through pycocoevalcap, in one run.

Both sides score the same PTB tokens (tokenized once here). Reported:

* start-up: the first score of one pair in a fresh process (capeval's reference aligner,
  no numba; the jar: JVM start and loading its tables), and what a scoring worker pays
  before its first compiled batch;
* ``n_images`` COCO val2014 sets end to end in a fresh process, timed from its first line:
  capeval **cold** (empty user cache: the paraphrase index is expanded from the file the
  package ships, and written to the cache, during the run), capeval **cold, table indexed**
  (empty cache and the shipped file set aside, as for a paraphrase table other than the one
  it was made from: the 272 MB table is indexed during the run), capeval **warm** (the cache
  filled), and the jar (which loads everything at every start, so it has no cold/warm):
  :data:`ROUNDS` rounds, the jar and each capeval run alternating, each figure the median of
  its rounds (every round's time printed);
* per warm pair: another ``n_images`` sets scored by both in this process, resources
  loaded, the two alternating three times (best of each), divided by the pairs;
* the first run after installing capeval, when numba compiles the kernels (once), and the
  memory the loaded resources take.

Wall-clock ratios move with the load of a shared machine; each figure also has the CPU time
both sides used (every thread; the JVM's read from ``/proc``), which moves much less.
Corpus values are printed side by side. Prints ratios; asserts nothing.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

#: rounds of the end-to-end runs, jar and capeval alternating; each figure is their median
ROUNDS = 3

PAIR = ("a kid is sitting on a couch", ["a child sits on a sofa", "a boy on a sofa"])

# Each child scores the first batch of ``data`` (pre-tokenized captions) and prints JSON.
_CAPEVAL_RUN = """
import time
t0 = time.perf_counter()
import json, sys
from capeval_core.metrics import make_batch
from capeval_core.metrics.meteor import Meteor
hyps, refs = json.load(open(sys.argv[1]))[0]
r = Meteor(tokenizer="whitespace").score_batch(make_batch(hyps, refs, "whitespace"))
cpu = time.process_time()  # every thread of the process
print(json.dumps({"end_to_end": time.perf_counter() - t0, "cpu": cpu, "value": r.value}))
"""

# The same run without the shipped index (the path of a table it was not made from).
_CAPEVAL_RUN_INDEXING = (
    "import pathlib, capeval_core.meteor_shipped as shipped\n"
    "shipped.shipped_path = lambda: pathlib.Path('/nonexistent/meteor_paraphrase.npz')\n"
    + _CAPEVAL_RUN
)

# The JVM is a child of the child: its CPU time is read from /proc before it is stopped.
_JAR_RUN = """
import time
t0 = time.perf_counter()
import contextlib, io, json, os, sys
from pycocoevalcap.meteor.meteor import Meteor
hyps, refs = json.load(open(sys.argv[1]))[0]
with contextlib.redirect_stderr(io.StringIO()):
    jar = Meteor()
    value, _ = jar.compute_score(
        {i: r for i, r in enumerate(refs)}, {i: [h] for i, h in enumerate(hyps)}
    )
end = time.perf_counter() - t0
fields = open(f"/proc/{jar.meteor_p.pid}/stat").read().rsplit(")", 1)[1].split()
jvm = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
print(json.dumps({"end_to_end": end, "cpu": time.process_time() + jvm, "value": value}))
"""

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

# What a worker process pays before its first compiled batch, step by step.
_WORKER = """
import time, json
T = time.perf_counter
t0 = T()
from capeval_core.metrics import make_batch
from capeval_core.metrics import meteor
t1 = T()
from capeval_core.meteor_resources import meteor_synsets, paraphrase_index
meteor_synsets(); paraphrase_index()
t2 = T()
from capeval_core import meteor_kernel
t3 = T()
batch = make_batch([{hyp!r}] * 100, [{refs!r}] * 100, "whitespace")
meteor.Meteor(tokenizer="whitespace").score_batch(batch)
t4 = T()
print(json.dumps(dict(imports=t1 - t0, resources=t2 - t1, numba=t3 - t2, first=t4 - t3)))
"""

_RSS = """
import time

def rss():
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS"):
            return int(line.split()[1]) / 1024

from capeval_core.metrics import make_batch, meteor
before = rss()
t = time.perf_counter()
meteor.Meteor(tokenizer="whitespace").score_batch(
    make_batch([{hyp!r}] * 100, [{refs!r}] * 100, "whitespace")
)
print(rss() - before, time.perf_counter() - t)
"""


def _run(code: str, *args: str, env: dict[str, str] | None = None) -> tuple[float, str]:
    """Run ``code`` in a new interpreter: its wall time and what it printed."""
    start = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, **(env or {})},
    ).stdout
    return time.perf_counter() - start, out


def _batches(n_images: int) -> list:
    """Two disjoint sets of ``n_images`` COCO val2014 images as PTB tokens, space-joined."""
    from capeval_core.metrics import make_batch
    from capeval_core.resources import coco_caption_sets

    sets = coco_caption_sets("val", 2 * n_images)
    out = []
    for part in (sets[:n_images], sets[n_images:]):
        batch = make_batch([s.candidate for s in part], [s.references for s in part], "ptb")
        hyps = [" ".join(c) for c in batch.candidate_tokens]
        refs = [[" ".join(r) for r in rs] for rs in batch.reference_tokens]
        out.append((hyps, refs))
    return out


def _per_pair(data: list, n_images: int) -> None:
    """Warm time per (hypothesis, reference) pair, both sides in this process, alternating."""
    import contextlib
    import io

    from pycocoevalcap.meteor.meteor import Meteor as JarMeteor

    from capeval_core.metrics import make_batch
    from capeval_core.metrics.meteor import Meteor

    metric = Meteor(tokenizer="whitespace")
    first, second = (make_batch(h, r, "whitespace") for h, r in data)
    gts = {i: r for i, r in enumerate(data[1][1])}
    res = {i: [h] for i, h in enumerate(data[1][0])}
    pairs = sum(len(r) for r in data[1][1])
    with contextlib.redirect_stderr(io.StringIO()):
        metric.score_batch(first)  # loads the resources and kernels
        jar = JarMeteor()
        jar.compute_score(
            {i: r for i, r in enumerate(data[0][1])}, {i: [h] for i, h in enumerate(data[0][0])}
        )
        ours, theirs, ours_cpu, theirs_cpu = [], [], [], []
        for _ in range(3):
            start, cpu = time.perf_counter(), time.process_time()
            value = metric.score_batch(second).value
            ours.append(time.perf_counter() - start)
            ours_cpu.append(time.process_time() - cpu)
            start, cpu, jvm = time.perf_counter(), time.process_time(), _cpu_of(jar.meteor_p.pid)
            jar_value, _ = jar.compute_score(gts, res)
            theirs.append(time.perf_counter() - start)
            theirs_cpu.append(time.process_time() - cpu + _cpu_of(jar.meteor_p.pid) - jvm)
    cap, jar_t = min(ours) / pairs, min(theirs) / pairs
    cap_cpu, jar_cpu = min(ours_cpu) / pairs, min(theirs_cpu) / pairs
    print(
        f"  per warm pair ({pairs} pairs of {n_images} other sets, best of 3, alternating): "
        f"capeval {cap * 1e6:6.1f} us | jar {jar_t * 1e6:6.1f} us | "
        f"jar/capeval {jar_t / cap:5.1f}x; CPU time {cap_cpu * 1e6:.1f} us vs "
        f"{jar_cpu * 1e6:.1f} us: {jar_cpu / cap_cpu:4.1f}x   "
        f"corpus {_same(value, jar_value)}   ({_load()})"
    )


def _median(runs: list[dict], key: str) -> float:
    return statistics.median(run[key] for run in runs)


def _each(runs: list[dict]) -> str:
    """Each run's wall time: the spread behind a median."""
    return "median of " + ", ".join(f"{run['end_to_end']:.2f}" for run in runs)


def _cpu_of(pid: int) -> float:
    """CPU seconds a process (every thread) has used so far, from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _same(ours: float, jar: float) -> str:
    """Both corpus values, and whether they are the same double."""
    return f"{ours!r} vs {jar!r} ({'equal' if ours == jar else 'DIFFER'})"


def _load() -> str:
    return f"load {os.getloadavg()[0]:.1f}"


def main(n_images: int = 5000) -> None:
    from capeval_core.meteor_resources import paraphrase_index

    paraphrase_index()  # the user cache's index exists before the warm runs
    hyp, refs = PAIR
    print(f"METEOR 1.5: capeval vs meteor-1.5.jar (pycocoevalcap), {n_images} COCO val2014 sets")

    cap_proc, out = _run(_CAPEVAL_FIRST.format(hyp=hyp, refs=refs))
    cap_v = out.split()[1]
    jar_proc, out = _run(_JAR_FIRST.format(hyp=hyp, refs=refs))
    jar_v = out.split()[1]
    print(
        f"  start-up, first score of one pair in a fresh process: capeval {cap_proc:5.2f} s "
        f"| jar {jar_proc:5.2f} s | jar/capeval {jar_proc / cap_proc:5.1f}x   "
        f"values {cap_v} vs {jar_v}   ({_load()})"
    )
    worker = json.loads(_run(_WORKER.format(hyp=hyp, refs=refs))[1])
    print(
        "  a scoring worker's start-up (compiled path): imports {imports:.2f} s, synonyms and "
        "index {resources:.2f} s, numba {numba:.2f} s, first 100-item part {first:.2f} s "
        "(the jar: {jar:.2f} s before any score)".format(jar=jar_proc, **worker)
    )

    data = _batches(n_images)
    with tempfile.TemporaryDirectory(prefix="capeval-bench-meteor-") as tmp:
        path = Path(tmp) / "captions.json"
        path.write_text(json.dumps(data))
        # the sides alternate, each cold run from a cache of its own; every figure is the
        # median of its rounds (one run is noisy: a cold run right after the jar's has
        # measured anywhere from 2 to 3.6 s)
        jar, cold, indexing, warm = [], [], [], []
        for round_ in range(ROUNDS):
            jar.append(json.loads(_run(_JAR_RUN, str(path))[1]))
            cold_env = {"CAPEVAL_CACHE_DIR": str(Path(tmp) / f"cache-{round_}")}
            cold.append(json.loads(_run(_CAPEVAL_RUN, str(path), env=cold_env)[1]))
            indexing_env = {"CAPEVAL_CACHE_DIR": str(Path(tmp) / f"cache-indexing-{round_}")}
            indexing.append(json.loads(_run(_CAPEVAL_RUN_INDEXING, str(path), env=indexing_env)[1]))
            warm.append(json.loads(_run(_CAPEVAL_RUN, str(path))[1]))
        jar_e2e, jar_cpu = _median(jar, "end_to_end"), _median(jar, "cpu")
        runs = (("cold", cold), ("cold, table indexed", indexing), ("warm", warm))
        for name, rounds in runs:
            e2e, cpu = _median(rounds, "end_to_end"), _median(rounds, "cpu")
            print(
                f"  {n_images} sets end to end, {name}: capeval {e2e:6.2f} s "
                f"({_each(rounds)}) | jar {jar_e2e:6.2f} s ({_each(jar)}; JVM start-up "
                f"included) | jar/capeval {jar_e2e / e2e:5.1f}x; CPU time {cpu:.2f} s vs "
                f"{jar_cpu:.2f} s: {jar_cpu / cpu:4.1f}x   "
                f"corpus {_same(rounds[0]['value'], jar[0]['value'])}   ({_load()})"
            )
        fresh_env = {
            "CAPEVAL_CACHE_DIR": str(Path(tmp) / "cache-2"),
            "NUMBA_CACHE_DIR": str(Path(tmp) / "numba"),
        }
        first = json.loads(_run(_CAPEVAL_RUN, str(path), env=fresh_env)[1])
    _per_pair(data, n_images)
    print(
        f"  the first run after installing (numba compiles the kernels, once): "
        f"{first['end_to_end']:.2f} s end to end"
    )
    rss_mb, load_s = _run(_RSS.format(hyp=hyp, refs=refs))[1].split()
    print(
        f"  resident memory of the loaded METEOR resources and kernels: {float(rss_mb):.0f} MB "
        f"(loaded in {float(load_s):.2f} s; the jar runs with -Xmx2G)"
    )


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 5000)
