"""Systems: three captioning systems x COCO val2014 images, BLEU, ROUGE-L, CIDEr-D, METEOR and
SPICE with the paired tests, beside pycocoevalcap scoring the same three files, in one run.

The three systems caption each image with its first caption (by annotation id), its second,
and the first with its words reversed; the references are the image's other captions.
capeval runs ``capeval compare`` the library way (load, score in one worker process per
available CPU, 1,000 bootstrap resamples and 10,000 randomization trials against the first
system), then the same command line in a fresh process with the scores cached. Cold = empty
score and SPICE parse caches, one-time resources (METEOR's paraphrase index) linked from the
user cache. pycocoevalcap tokenizes with its Java PTB tokenizer and runs BLEU, METEOR (its
jar), ROUGE-L and CIDEr-D on each file; it has no SPICE here (the jar needs CoreNLP models
that are not installed) and no significance tests. Goal (issue): <= 60 s cold, <= 3 s
cached. Then the Systems page's own path, cold (a new, empty cache folder): every metric the
page offers, scored and tested with the calls and defaults its cached function makes, and the
longest wait between two progress updates (issue #33: <= 60 s, progress every few seconds).
Prints; asserts nothing.
"""

from __future__ import annotations

import contextlib
import io
import itertools
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from capeval_core.resources import CACHE_ENV, available_cpus, cache_dir, coco_caption_sets

KEYS = ("bleu_4", "rouge_l", "cider_d", "meteor", "spice")


def _write(folder: Path, sets) -> tuple[Path, list[Path]]:
    ann = {
        "images": [{"id": s.image_id} for s in sets],
        "annotations": [
            {"image_id": s.image_id, "id": j, "caption": r}
            for s in sets
            for j, r in enumerate(s.references[1:])
        ],
    }
    ann_path = folder / "captions.json"
    ann_path.write_text(json.dumps(ann))
    systems = {
        "first": [s.candidate for s in sets],
        "second": [s.references[0] for s in sets],
        "reversed": [" ".join(reversed(s.candidate.split())) for s in sets],
    }
    paths = []
    for name, caps in systems.items():
        path = folder / f"{name}.json"
        rows = [{"image_id": s.image_id, "caption": c} for s, c in zip(sets, caps, strict=True)]
        path.write_text(json.dumps(rows))
        paths.append(path)
    return ann_path, paths


def _pycocoevalcap(sets, paths: list[Path]) -> tuple[float, dict[str, dict[str, float]]]:
    from pycocoevalcap.bleu.bleu import Bleu
    from pycocoevalcap.cider.cider import Cider
    from pycocoevalcap.meteor.meteor import Meteor
    from pycocoevalcap.rouge.rouge import Rouge
    from pycocoevalcap.tokenizer.ptbtokenizer import PTBTokenizer

    gts = {s.image_id: [{"caption": r} for r in s.references[1:]] for s in sets}
    values: dict[str, dict[str, float]] = {}
    start = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        tok = PTBTokenizer()
        meteor = Meteor()  # one JVM for the three files, as a script scoring them would
        for path in paths:
            rows = json.loads(path.read_text())
            res = {r["image_id"]: [{"caption": r["caption"]}] for r in rows}
            g, r = tok.tokenize(gts), tok.tokenize(res)
            bleu, _ = Bleu(4).compute_score(g, r)
            values[path.stem] = {
                "bleu_4": bleu[3],
                "meteor": meteor.compute_score(g, r)[0],
                "rouge_l": float(Rouge().compute_score(g, r)[0]),
                "cider_d": float(Cider().compute_score(g, r)[0]),
            }
        del meteor
    return time.perf_counter() - start, values


def _cpu_seconds() -> float:
    """CPU time of this process and its finished children (the scoring workers, the cached
    run): steadier than wall time on a shared machine."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def _linked_cache(folder: Path) -> Path:
    """A new cache folder holding links to the user cache's one-time resources (METEOR's
    paraphrase index, IDF tables) but no scores and no SPICE parses: a cold run."""
    from capeval_core.spice.parse import parse_cache_path

    folder.mkdir()
    for entry in cache_dir().iterdir():
        if entry.is_file() and entry.name != parse_cache_path().name:
            (folder / entry.name).symlink_to(entry)
    return folder


def _page_cold(data, cache: Path, workers: int) -> dict:
    """The Systems page's scoring path (``capeval_ui.cached.systems_comparison``: the same
    core calls, arguments and defaults) on every metric the page offers, from an empty cache;
    times, the longest wait between progress updates, and what was skipped."""
    from capeval_core.metrics import available_keys, optional_keys
    from capeval_core.systems import compare_systems, score_systems

    keys = [*available_keys(), *optional_keys()]
    updates: list[tuple[float, str]] = []
    old = os.environ.get(CACHE_ENV)
    os.environ[CACHE_ENV] = str(cache)
    try:
        start = time.perf_counter()

        def progress(done, total, label):
            updates.append((time.perf_counter() - start, f"{label} ({done}/{total})"))

        scores = score_systems(
            data, keys, tokenizer="ptb", workers=workers, on_progress=progress, on_error="skip"
        )
        scored = time.perf_counter() - start
        compare_systems(scores, paired="both")
        total = time.perf_counter() - start
    finally:
        if old is None:
            os.environ.pop(CACHE_ENV, None)
        else:
            os.environ[CACHE_ENV] = old
    marks = [(0.0, "start"), *updates, (scored, "scored")]
    parsed = _new_to_the_parser(data)
    wait, after = max((b[0] - a[0], a[1]) for a, b in itertools.pairwise(marks))
    return {
        "keys": keys,
        "total": total,
        "scored": scored,
        "wait": wait,
        "after": after,
        "updates": len(updates),
        "skipped": dict(scores.skipped),
        "parsed": parsed,
    }


def _new_to_the_parser(data) -> int:
    """How many distinct captions SPICE's default parser had to parse: those the package does
    not ship parsed (COCO 2014's captions ship parsed; a system's own captions are new)."""
    from capeval_core.metrics import make_batch, metric_class
    from capeval_core.spice.parse import CaptionParser

    spice = metric_class("spice")(tokenizer="ptb")
    texts: dict[str, None] = {}
    for captions in data.candidates:
        batch = make_batch(captions, data.references, "ptb")
        texts.update(dict.fromkeys(spice._texts(batch).values()))
    return len(CaptionParser(spice.config.parser, cache=False).uncached(list(texts)))


def _page_cold_process(ann: Path, paths: list[Path], cache: Path, workers: int) -> dict:
    """:func:`_page_cold` in a fresh interpreter: nothing the runs before it loaded or
    memoized in this process makes it warmer. The modules the Systems page imports (scipy.stats
    and pandas through ``capeval_core.stats``, the page's views) are imported first, as they
    are when its Score button is pressed; nothing is scored or loaded from disk before."""
    code = (
        "import json, sys\n"
        "from pathlib import Path\n"
        "import capeval_core.stats.resampling, capeval_core.systems, capeval_ui.systems_views\n"
        "from bench.systems import _page_cold\n"
        "from capeval_core.systems import load_systems\n"
        "ann, cache, workers, *paths = sys.argv[1:]\n"
        "data = load_systems([Path(p) for p in paths], Path(ann))\n"
        "print(json.dumps(_page_cold(data, Path(cache), int(workers))))\n"
    )
    args = [str(ann), str(cache), str(workers), *map(str, paths)]
    out = subprocess.run(
        [sys.executable, "-c", code, *args], check=True, capture_output=True, text=True
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(n_images: int = 5000) -> None:
    from capeval_core.systems import compare_systems, load_systems, score_systems

    sets = coco_caption_sets("val", n_images)
    workers = available_cpus()
    print(
        f"\n== Systems: 3 systems x {len(sets)} COCO val2014 images, {', '.join(KEYS)}, "
        f"paired tests; {workers} worker process(es) =="
    )
    old = os.environ.get(CACHE_ENV)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        cache = _linked_cache(folder / "cache")
        ann, paths = _write(folder, sets)
        os.environ[CACHE_ENV] = str(cache)
        try:
            finished: dict[str, float] = {}
            cpu = _cpu_seconds()
            start = time.perf_counter()

            def progress(done, total, name):
                finished[name] = time.perf_counter() - start

            data = load_systems(paths, ann)
            loaded = time.perf_counter() - start
            scores = score_systems(data, KEYS, workers=workers, on_progress=progress)
            scored = time.perf_counter() - start
            comparison = compare_systems(scores)
            cold = time.perf_counter() - start
            # the workers have exited (the pool closed): their CPU time is counted
            cold_cpu = _cpu_seconds() - cpu
            env = {**os.environ, CACHE_ENV: str(cache)}
            command = [
                sys.executable, "-m", "capeval_core.cli", "compare", "--annotations", str(ann),
                "--results", *map(str, paths), "--metrics", *KEYS, "--json", str(folder / "o.json"),
            ]  # fmt: skip
            cpu = _cpu_seconds()
            start = time.perf_counter()
            subprocess.run(command, env=env, check=True, capture_output=True)
            cached = time.perf_counter() - start
            cached_cpu = _cpu_seconds() - cpu
        finally:
            if old is None:
                os.environ.pop(CACHE_ENV, None)
            else:
                os.environ[CACHE_ENV] = old
        page = _page_cold_process(ann, paths, _linked_cache(folder / "page-cache"), workers)
        cpu = _cpu_seconds()
        theirs_t, theirs = _pycocoevalcap(sets, paths)
        theirs_cpu = _cpu_seconds() - cpu
        again = json.loads((folder / "o.json").read_text())
    print(f"{'':<34}{'seconds':>9}{'CPU s':>9}")
    print(f"{'capeval cold, all in':<34}{cold:>9.1f}{cold_cpu:>9.1f}")
    print(f"{'  reading the files':<34}{loaded:>9.1f}")
    from capeval_core.metrics import metric_class

    for name in KEYS:
        metric = metric_class(name).key  # progress names the metric ("bleu done" for bleu_4)
        if f"{metric} done" in finished:
            print(f"{'  ' + metric + ' done at':<34}{finished[metric + ' done']:>9.1f}")
    print(f"{'  resampling (1,000 bs + 10,000 ar)':<34}{cold - scored:>9.1f}")
    print(f"{'capeval cached (fresh CLI process)':<34}{cached:>9.1f}{cached_cpu:>9.1f}")
    print(
        f"Systems page cold, 3 systems x {len(data):,} images x every metric "
        f"({len(page['keys'])} keys): {page['total']:.1f} s (scoring {page['scored']:.1f} s, "
        f"tests {page['total'] - page['scored']:.1f} s); {page['updates']} progress updates, "
        f"the longest wait {page['wait']:.1f} s (after {page['after']!r}); SPICE parsed "
        f"{page['parsed']:,} captions new to the package (the other captions are COCO "
        "val2014's, which ship parsed; a real system's are new unless they repeat COCO "
        "captions word for word)"
    )
    for key, why in page["skipped"].items():
        print(f"  skipped {key}: {why.splitlines()[0][:120]}")
    print(f"{'pycocoevalcap (no SPICE, no tests)':<34}{theirs_t:>9.1f}{theirs_cpu:>9.1f}")
    print("(pycocoevalcap's CPU time leaves out its Java processes)")
    print(
        f"pycocoevalcap's time / capeval's: cold {theirs_t / cold:.1f}x (capeval also runs SPICE "
        f"and the tests), cached {theirs_t / cached:.0f}x"
    )
    print(f"{'system':<10} {'key':<8} {'capeval':>16} {'pycocoevalcap':>16} {'diff':>8}")
    for name, row in theirs.items():
        for key, value in row.items():
            ours = comparison.corpus[name][key]
            print(f"{name:<10} {key:<8} {ours:>16.12f} {value:>16.12f} {abs(ours - value):>8.1e}")
    same = all(
        again["corpus"][s][k] == comparison.corpus[s][k] for s in again["corpus"] for k in KEYS
    )
    print(f"cached run gives the same corpus values: {same}")
    for key in KEYS:
        tests = comparison.paired[key]
        row = ", ".join(
            f"{s} {tests[s].delta:+.4f} (p {tests[s].p_value:.4f})" for s in comparison.systems[1:]
        )
        print(f"  {key:<8} vs {comparison.baseline}: {row}")
