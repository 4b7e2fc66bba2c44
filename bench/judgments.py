"""Meta-evaluation bench: a ~17,000-row synthetic graded set (the demo generator: COCO val
captions, 5 synthetic systems per image) scored with every registered metric plus all
statistics, cold (empty score and SPICE parse caches; one-time resource builds excluded),
again with only the parses cached, and from the cache; scoring in one worker process per
available CPU. Prints times; no assertions. Goal (issue): <= 60 s cold, <= 2 s from cache.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
import warnings
from pathlib import Path

from capeval_core.metrics import METRICS, metric_class
from capeval_core.resources import CACHE_ENV, available_cpus, cache_dir


def _stats(jset, scores) -> dict[str, float]:
    from capeval_core.judgments.analysis import correlation_table
    from capeval_core.stats import correlate, rank_subsets, williams_matrix

    human = jset.human()
    times = {}
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for values in scores.values.values():
            for method in ("pearson", "spearman", "kendall_b", "kendall_c"):
                correlate(values, human, method)
        times["correlations"] = time.perf_counter() - start
        start = time.perf_counter()
        # the app's path: intervals cached on disk next to the scores
        correlation_table(
            human, scores.values, ci_methods=("pearson", "spearman"), n_resamples=1000, seed=0
        )
        times["bootstrap CIs (pearson+spearman, 1000)"] = time.perf_counter() - start
        start = time.perf_counter()
        williams_matrix(human, scores.values, "kendall_c")
        times["williams matrix (kendall_c)"] = time.perf_counter() - start
        start = time.perf_counter()
        rank_subsets(human, scores.values, "pearson")
        times["combined subsets (pearson)"] = time.perf_counter() - start
    return times


def _cpu_seconds() -> float:
    """CPU time of this process and its finished children: steadier than wall time on a shared
    machine, and it shows how much of the wall time the worker processes kept busy."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def main(n_images: int = 3400) -> None:
    """``n_images`` COCO images x 5 systems = rows (3,400 -> 17,000)."""
    from capeval_core.batch import scores_cache_dir
    from capeval_core.judgments.demo import demo_graded
    from capeval_core.judgments.scoring import score_judgments
    from capeval_core.spice.parse import parse_cache_path

    # `python -m bench` passes --images (default 5,000, sized for the metric benches); this
    # bench is specified at ~17,000 rows, so it uses at most 3,400 images.
    n_images = min(n_images, 3400)
    start = time.perf_counter()
    jset = demo_graded(n_images, seed=0)
    print(f"judgments bench: {jset.describe()} ({time.perf_counter() - start:.1f} s to build)")
    # one key per metric: the primary key (bleu_4 for BLEU)
    keys = [metric_class(k).primary_key() for k in METRICS]
    workers = available_cpus()
    print(f"  scoring in {workers} worker process(es)")
    # Cold = the per-caption caches start empty (judgment scores, SPICE parses); one-time
    # resources (METEOR's paraphrase index, IDF tables) are linked from the user cache, as a
    # user who has scored anything before would have them.
    old = os.environ.get(CACHE_ENV)
    with tempfile.TemporaryDirectory() as tmp:
        for entry in cache_dir().iterdir():
            if entry.is_file() and entry.name != parse_cache_path().name:
                (Path(tmp) / entry.name).symlink_to(entry)
        os.environ[CACHE_ENV] = tmp
        try:
            # cold; then with a fresh score cache but the parses kept (a second file, or
            # other options, over the same captions); then everything from the cache
            for label in ("cold", "parses cached", "cached"):
                if label == "parses cached":
                    shutil.rmtree(scores_cache_dir())
                finished: dict[str, float] = {}
                cpu = _cpu_seconds()
                start = time.perf_counter()

                def progress(done, total, label, finished=finished, start=start):
                    name = label.removesuffix(" done")  # "bleu done" as each metric finishes
                    if label != name and name in METRICS:
                        finished[name] = time.perf_counter() - start

                scores = score_judgments(
                    jset, keys, workers=workers, on_progress=progress, on_error="skip"
                )
                scoring = time.perf_counter() - start
                stat_times = _stats(jset, scores)
                total = scoring + sum(stat_times.values())
                cpu = _cpu_seconds() - cpu
                print(
                    f"  {label:<13} total {total:6.1f} s  (scoring {scoring:.1f} s, "
                    f"statistics {sum(stat_times.values()):.1f} s; CPU {cpu:.0f} s in all "
                    "processes)"
                )
                if label == "cold":
                    print("      metrics done at (s after the start of scoring):")
                    for name, sec in sorted(finished.items(), key=lambda kv: kv[1]):
                        print(f"      {name:<10} {sec:6.1f} s")
                    for name, sec in stat_times.items():
                        print(f"      {name:<30} {sec:6.2f} s")
                    for name, msg in scores.skipped.items():
                        print(f"      {name:<10} skipped: {msg[:100]}")
        finally:
            if old is None:
                os.environ.pop(CACHE_ENV, None)
            else:
                os.environ[CACHE_ENV] = old
