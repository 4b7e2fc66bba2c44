"""pycocoevalcap: the drop-in (``capeval_core.pycocoevalcap``) against pycocoevalcap 1.2 with
all its jars, in one run.

1. A client script written as captioning repositories write it (``COCO``, ``loadRes``,
   ``COCOEvalCap``, ``params['image_id']``, ``evaluate()``, the scores and ``imgToEval``
   dumped to JSON: ``tools.pycocoevalcap_oracle.CLIENT``) on N COCO val2014 images (seeded
   random, in the annotation file's order, default 5,000), all eight values, each run in a
   fresh process:

   * capeval, import line changed, from empty caches (a new cache folder: METEOR's
     paraphrase index, SPICE's parse cache, all of it built in the run);
   * capeval again from a new cache folder holding the user cache's one-time resources
     (METEOR's paraphrase index, the IDF tables) but no parses;
   * pycocoevalcap with its jars (CoreNLP 3.4.1's tokenizer, meteor-1.5.jar, spice-1.0.jar
     with CoreNLP 3.6.0 from Maven, without ``-cache``, Java 17, Nashorn on the module path:
     see ``tools/pycocoevalcap_oracle.py``), where Java and the jars are present.

   The candidates: no COCO-format results file of a public captioning model whose repository
   states a licence that allows redistribution was found (the results that repositories carry
   come without a licence; coco-caption's own example results are COCO's human references,
   one per image), so they are made from COCO train2014 captions as a retrieval captioner
   makes them (``tools.pycocoevalcap_oracle.model_like_captions``): half are training
   captions word for word, as beam search often gives, half spliced from two and new to the
   SPICE parser (about 2,400 of 5,000 distinct captions, what a model's test output has).

2. ``Cider().compute_score`` and ``Bleu(4).compute_score`` on 100 captions x 5 references,
   warm (a training loop's reward call): median time of repeated calls, both libraries.

Times are wall seconds and CPU seconds (this process's children, Java and the worker
processes included). Prints; asserts nothing.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import random
import statistics
import tempfile
import time
from pathlib import Path

from capeval_core.resources import CACHE_ENV, available_cpus
from tools import pycocoevalcap_oracle as oracle

KEYS = ("Bleu_1", "Bleu_2", "Bleu_3", "Bleu_4", "METEOR", "ROUGE_L", "CIDEr", "SPICE")


def _cpu() -> float:
    t = os.times()
    return t.children_user + t.children_system


def _images(n_images: int) -> tuple[list[int], list[str]]:
    """``n_images`` COCO val2014 image ids (seed 2014, the annotation file's order) and each
    one's model-like caption."""
    from capeval_core.resources import coco_caption_file

    data = coco_caption_file("val")
    first: dict[int, tuple[int, str]] = {}
    for a in data["annotations"]:
        if a["image_id"] not in first or a["id"] < first[a["image_id"]][0]:
            first[a["image_id"]] = (a["id"], a["caption"])
    chosen = set(random.Random(2014).sample(sorted(first), min(n_images, len(first))))
    ids = [im["id"] for im in data["images"] if im["id"] in chosen]
    return ids, oracle.model_like_captions([first[i][1] for i in ids])


def _run(import_line: str, ann: Path, res: Path, out: Path, env: dict[str, str]):
    cpu = _cpu()
    start = time.perf_counter()
    printed = oracle.run_client(import_line, ann, res, out, env)
    wall = time.perf_counter() - start
    return wall, _cpu() - cpu, printed, json.loads(out.read_text(encoding="utf-8"))


def _with_cache(folder: Path) -> dict[str, str]:
    env = dict(os.environ)
    env[CACHE_ENV] = str(folder)
    env.pop("CAPEVAL_SCORES_CACHE_DIR", None)
    return env


def _same(a, b) -> bool:
    """Equality of SPICE's nested dicts, NaN (the jar's null) equal to NaN."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return a == b or (a != a and b != b)


def _agreement(ours: dict, theirs: dict) -> list[str]:
    """Per key: the largest difference of the corpus value and of the per-image values; SPICE
    per image against the reference's own, by image (see the SPICE line)."""
    lines = []
    rows_o, rows_t = ours["imgToEval"], theirs["imgToEval"]
    for key in KEYS:
        corpus = abs(ours["overall"][key] - theirs["overall"][key])
        if key == "SPICE":
            lines.append(f"  {key:<8} corpus |diff| {corpus:.1e}")
            continue
        diffs = [abs(rows_o[i][key] - rows_t[i][key]) for i in rows_o]
        same = sum(d == 0 for d in diffs)
        lines.append(
            f"  {key:<8} corpus |diff| {corpus:.1e}, per image max |diff| {max(diffs):.1e} "
            f"({same:,} of {len(diffs):,} identical)"
        )
    # pycocoevalcap's k-th image holds the SPICE of the k-th smallest id
    keys = list(rows_t)
    place = dict(zip(sorted(keys, key=int), keys, strict=True))
    own = sum(_same(rows_o[k]["SPICE"], rows_t[place[k]]["SPICE"]) for k in keys)
    moved = sum(place[k] != k for k in keys)
    lines.append(
        f"  SPICE    per image: capeval's equals the jar's own for {own:,} of {len(keys):,} "
        f"images; pycocoevalcap attached {moved:,} of them to another image (ids not sorted)"
    )
    return lines


def _scorer_speed() -> list[str]:
    """Warm Cider and Bleu on 100 captions x 5 references, both libraries, median times."""
    from pycocoevalcap.bleu.bleu import Bleu as TheirBleu
    from pycocoevalcap.cider.cider import Cider as TheirCider

    from capeval_core.pycocoevalcap.bleu.bleu import Bleu
    from capeval_core.pycocoevalcap.cider.cider import Cider
    from capeval_core.pycocoevalcap.tokenizer.ptbtokenizer import PTBTokenizer
    from capeval_core.resources import coco_caption_sets

    sets = coco_caption_sets("val", 600)[500:600]  # other images than a reward loop's first
    tok = PTBTokenizer()
    gts = tok.tokenize({s.image_id: [{"caption": r} for r in s.references[:5]] for s in sets})
    res = tok.tokenize({s.image_id: [{"caption": s.candidate}] for s in sets})

    def median(call, rounds: int) -> float:
        call()
        times = []
        for _ in range(rounds):
            start = time.perf_counter()
            call()
            times.append(time.perf_counter() - start)
        return statistics.median(times)

    out = []
    quiet = contextlib.redirect_stdout(io.StringIO())
    with quiet:
        pairs = {
            "Cider().compute_score": (
                lambda: TheirCider().compute_score(gts, res),
                lambda: Cider().compute_score(gts, res),
            ),
            "Bleu(4).compute_score": (
                lambda: TheirBleu(4).compute_score(gts, res, verbose=0),
                lambda: Bleu(4).compute_score(gts, res, verbose=0),
            ),
        }
        measured = {
            name: (median(theirs, 30), median(ours, 300)) for name, (theirs, ours) in pairs.items()
        }
    for name, (theirs, ours) in measured.items():
        goal = " (goal >= 20x)" if name.startswith("Cider") else ""
        out.append(
            f"  {name:<22} pycocoevalcap {theirs * 1e3:7.2f} ms   capeval {ours * 1e3:6.2f} ms"
            f"   {theirs / ours:5.1f}x{goal}"
        )
    return out


def main(n_images: int = 5000) -> None:
    workers = available_cpus()
    print(
        f"\n== pycocoevalcap drop-in: COCOEvalCap.evaluate(), all eight values, {n_images:,} "
        f"COCO val2014 images, model-like captions; capeval with {workers} worker process(es) =="
    )
    print(f"load before: {os.getloadavg()[0]:.1f} (uptime's 1-minute load)")
    ids, captions = _images(n_images)
    why = oracle.available()
    from bench.systems import _linked_cache

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        ann, res = oracle.write_coco_files(folder, ids, captions)
        runs = {}
        runs["capeval, empty caches"] = _run(
            oracle.DROPIN_IMPORT, ann, res, folder / "cold.json", _with_cache(folder / "c1")
        )
        runs["capeval, one-time resources kept"] = _run(
            oracle.DROPIN_IMPORT,
            ann,
            res,
            folder / "kept.json",
            _with_cache(_linked_cache(folder / "c2")),
        )
        if why is None:
            site = oracle.oracle_copy(folder)
            runs["pycocoevalcap + jars"] = _run(
                oracle.REFERENCE_IMPORT, ann, res, folder / "ref.json", oracle.java_env(site)
            )
    print(f"{'':<36}{'seconds':>9}{'CPU s':>9}")
    for name, (wall, cpu, _, _) in runs.items():
        print(f"{name:<36}{wall:>9.1f}{cpu:>9.1f}")
    print(f"load after: {os.getloadavg()[0]:.1f}")
    if why is not None:
        print(f"pycocoevalcap with its jars not run: {why}")
    else:
        ref = runs["pycocoevalcap + jars"]
        for name in ("capeval, empty caches", "capeval, one-time resources kept"):
            print(f"pycocoevalcap's time / {name}'s: {ref[0] / runs[name][0]:.1f}x (goal >= 20x)")
        print("agreement with pycocoevalcap (capeval, empty caches):")
        for line in _agreement(runs["capeval, empty caches"][3], ref[3]):
            print(line)
    print("warm scorer calls, 100 captions x 5 references:")
    for line in _scorer_speed():
        print(line)
