"""SPICE on long captions: capeval's default parser (``stanford-pcfg``) beside spice-1.0.jar.

A paragraph caption reaches the jar as one sentence (coco-caption's tokenizer drops its full
stops), so its parse costs the PCFG's cube of the length. Printed, with the machine's load:

1. **Ten long captions** (:mod:`tools.spice_oracle.long_captions`: paragraphs of 90 to 400
   words written from COCO train2014 captions): per caption capeval's SPICE, parsed now, and
   its time, against the jar's SPICE in ``tests/golden/spice-long.json.gz`` (spice-1.0.jar at
   coco-caption's ``-Xmx8G``, written by ``tools/spice_oracle/make_long_golden.py``; running
   the jar on all ten again costs half an hour), equal when every category's counts and F
   are. Where PASCAL-50S is at hand, its long machine candidates (90 words or more) with five
   of their image's references, against the jar run now (``-Xmx8G -threads 1``, as
   coco-caption runs it but one parse at a time).
2. **320 words alone**: each in a process of its own, capeval's parse time and peak memory
   (the process's peak RSS) against the jar's (its ``Parsing test captions`` step, after its
   models are loaded, and its peak RSS), in the same run.
3. **PASCAL-50S end to end** (where at hand): ``capeval correlate --format pascal50s
   --metrics coco-caption``, the default preset, its time (a first run, with empty caches,
   parses every distinct sentence: about an hour on two busy cores), and SPICE's accuracy
   per category beside CLIPScore's Table 7; then how often SPICE ties a pair (both captions
   0, mostly: over a third of the MM pairs) and its accuracy were each tie decided for the
   second caption rather than counted half (where Table 7's MM figure lands); then, with the
   jar at hand, every MM candidate with the first draw of references against the jar run now.

PASCAL-50S is not in the repository: point ``$CAPEVAL_PASCAL50S`` at a folder holding
``pair_pascal.mat`` and ``pascal50S.mat`` as the CIDEr authors distribute them. Prints;
asserts nothing. ``python -m bench spice_long``.
"""

from __future__ import annotations

import gzip
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

#: the jar's SPICE of the ten long captions
GOLDEN = Path(__file__).resolve().parents[1] / "tests" / "golden" / "spice-long.json.gz"
#: where PASCAL-50S's files are (a folder), if anywhere
PASCAL_ENV = "CAPEVAL_PASCAL50S"
#: a candidate this long or longer counts as long
LONG_WORDS = 90
#: CLIPScore (Hessel et al. 2021), appendix Table 7: SPICE's accuracy per category (%)
TABLE7_SPICE = {"HC": 56.9, "HI": 96.3, "HM": 87.1, "MM": 66.4}

#: one caption parsed in a process of its own: its parse time and the process's peak RSS
_ALONE = """
import json, resource, sys, time
from capeval_core.spice.stanford_pcfg import caption_tuples, load_pipeline
parser = load_pipeline()
caption_tuples(parser, "a warm up caption")
text = sys.stdin.read()
start, cpu = time.perf_counter(), time.process_time()
caption_tuples(parser, text)
seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
print(json.dumps({"seconds": seconds, "cpu": cpu,
                  "rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
"""

#: a command run in a process of its own, reporting that process's peak RSS (kB)
_MEASURED = """
import json, resource, subprocess, sys, time
start = time.perf_counter()
done = subprocess.run(json.loads(sys.argv[1]), capture_output=True, text=True)
used = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"seconds": time.perf_counter() - start, "returncode": done.returncode,
                  "rss": used.ru_maxrss, "cpu": used.ru_utime + used.ru_stime,
                  "stderr": done.stderr[-20000:]}))
"""


def _load() -> str:
    return f"load {os.getloadavg()[0]:.1f}"


def _pascal_dir() -> Path | None:
    folder = os.environ.get(PASCAL_ENV)
    if not folder:
        return None
    path = Path(folder).expanduser()
    return path if (path / "pair_pascal.mat").is_file() else None


def _pascal_long_items() -> list[tuple[str, str, tuple[str, ...]]]:
    """PASCAL-50S's machine candidates of LONG_WORDS words or more: (label, tokens, five
    references), tokenized as coco-caption tokenizes."""
    folder = _pascal_dir()
    if folder is None:
        return []
    from capeval_core.judgments import load_judgments
    from capeval_core.tokenize import get_tokenizer

    jset = load_judgments(folder, "pascal50s", preset="clipscore-table7")
    tokenize = get_tokenizer("ptb").tokenize_batch
    out, seen = [], set()
    for item in jset.items:
        for cand in (item.candidate_a, item.candidate_b):
            tokens = tokenize([cand])[0]
            if len(tokens) >= LONG_WORDS and cand not in seen:
                seen.add(cand)
                refs = tuple(" ".join(t) for t in tokenize(list(item.references[:5])))
                out.append((f"PASCAL-50S {item.id}", " ".join(tokens), refs))
    return out


def _capeval(items) -> tuple[list, list[float]]:
    """capeval's SPICE details of each (candidate, references), parsed now one at a time (a
    parse cache of its own), and the time each took."""
    from capeval_core.metrics.spice import Spice
    from capeval_core.spice.stanford_pcfg import caption_tuples, load_pipeline

    caption_tuples(load_pipeline(), "a warm up caption")
    details, seconds = [], []
    old = os.environ.get("CAPEVAL_CACHE_DIR")
    try:
        for _, cand, refs in items:
            with tempfile.TemporaryDirectory() as tmp:
                os.environ["CAPEVAL_CACHE_DIR"] = tmp
                start = time.perf_counter()
                result = Spice(parser="stanford-pcfg").score([cand], [list(refs)])
                seconds.append(time.perf_counter() - start)
            details.append(result.segments[0].details)
    finally:
        if old is None:
            os.environ.pop("CAPEVAL_CACHE_DIR", None)
        else:
            os.environ["CAPEVAL_CACHE_DIR"] = old
    return details, seconds


def _same(details, jar: dict | None) -> bool:
    """capeval's categories against the jar's (``-detailed`` scores: tp, fp, fn, f)."""
    if jar is None:
        return False
    for name, want in jar.items():
        ours = details.categories.get(name)
        if ours is None or (ours.tp, ours.fp, ours.fn) != (want["tp"], want["fp"], want["fn"]):
            return False
        if want["f"] is None or (isinstance(want["f"], float) and math.isnan(want["f"])):
            if not math.isnan(ours.f):
                return False
        elif abs(ours.f - want["f"]) > 1e-12:
            return False
    return True


def _golden_long() -> list[dict]:
    with gzip.open(GOLDEN, "rt", encoding="utf-8") as fh:
        return json.load(fh)["long"]


def _jar_command(src: Path, out: Path) -> list[str]:
    from tools import spice_oracle

    spice_oracle.compile_drivers()
    command = ["java", "-Xmx8G", "-cp", spice_oracle.classpath(), "edu.anu.spice.SpiceScorer"]
    return [*command, str(src), "-out", str(out), "-detailed", "-subset", "-silent",
            "-threads", "1"]  # fmt: skip


def _jar(items) -> tuple[list[dict | None], float | None, dict]:
    """The jar's SPICE categories of each item, its time parsing the candidates, and the measurement
    of its process (time, peak RSS)."""
    with tempfile.TemporaryDirectory() as tmp:
        src, out = Path(tmp) / "in.json", Path(tmp) / "out.json"
        payload = [
            {"image_id": k, "test": cand, "refs": list(refs)}
            for k, (_, cand, refs) in enumerate(items)
        ]
        src.write_text(json.dumps(payload), encoding="utf-8")
        measured = _measured(_jar_command(src, out))
        if measured["returncode"] != 0 or not out.is_file():
            return [None] * len(items), None, measured
        scores = {r["image_id"]: r["scores"] for r in json.loads(out.read_text())}
    # SpiceScorer times its two parsing steps: references, then the candidates
    steps = re.findall(r"Threads\( StanfordCoreNLP \) \[([^\]]+)\]", measured["stderr"])
    seconds = _seconds(steps[-1]) if steps else None
    return [scores.get(k) for k in range(len(items))], seconds, measured


def _seconds(text: str) -> float:
    """A Guava Stopwatch string ("6.441 min", "01:35.672 minutes", "5.317 seconds") in s."""
    number = text.split()[0]
    if ":" in number:
        parts = [float(p) for p in number.split(":")]
        return sum(p * 60**k for k, p in enumerate(reversed(parts)))
    scale = {"ns": 1e-9, "μs": 1e-6, "ms": 1e-3, "s": 1, "seconds": 1, "min": 60,
             "minutes": 60, "h": 3600, "hours": 3600}  # fmt: skip
    return float(number) * scale.get(text.split()[1], 1.0)


def _measured(command: list[str], stdin: str | None = None) -> dict:
    """Run ``command`` in a process of its own: its time, exit status, peak RSS (kB), stderr."""
    if stdin is not None:
        done = subprocess.run(command, input=stdin, capture_output=True, text=True)
        return {"stdout": done.stdout, "returncode": done.returncode, "stderr": done.stderr}
    done = subprocess.run(
        [sys.executable, "-c", _MEASURED, json.dumps(command)], capture_output=True, text=True
    )
    return json.loads(done.stdout)


def _alone_capeval(text: str) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", _ALONE], input=text, capture_output=True, text=True, check=True
    )
    return json.loads(done.stdout)


def main(n_images: int = 0) -> None:
    from tools import spice_oracle
    from tools.spice_oracle.long_captions import long_items

    golden = {r["image_id"]: r for r in _golden_long()}
    ten = [(f"train2014 image {it.image_id}", it.candidate, it.references)
           for it in long_items()]  # fmt: skip
    print(f"SPICE on long captions, stanford-pcfg against spice-1.0.jar ({_load()})")
    ours, our_seconds = _capeval(ten)
    jar = [golden.get(it.image_id, {}).get("scores") for it in long_items()]
    print("  ten paragraphs against the jar's golden (spice-1.0.jar, -Xmx8G):")
    equal = _table(ten, ours, jar, our_seconds)
    print(f"  equal to the jar's SPICE (every category): {equal} of {len(ten)}; capeval parsed "
          f"them in {sum(our_seconds):.0f} s ({_load()})")  # fmt: skip
    reason = spice_oracle.available()
    pascal = _pascal_long_items()
    if pascal:
        mine, seconds = _capeval(pascal)
        live, jar_seconds = [None] * len(pascal), None
        if reason is None:
            live, jar_seconds, _ = _jar(pascal)
        print("  PASCAL-50S's long candidates against the jar run now (-Xmx8G -threads 1):")
        equal = _table(pascal, mine, live, seconds)
        line = f"  equal: {equal} of {len(pascal)}"
        if jar_seconds is not None:
            line += (f"; parsing them: capeval {sum(seconds):.0f} s, the jar "
                     f"{jar_seconds:.0f} s")  # fmt: skip
        print(line + ("" if reason is None else f" (the jar: skipped, {reason})"))
    _alone(ten, reason)
    _pascal(reason)


def _table(items, ours, jar, seconds) -> int:
    """Print one line per caption; the number equal to the jar's."""
    print(f"  {'words':>5}  {'capeval':>8}  {'jar':>8}  {'equal':>5}  {'capeval s':>9}  caption")
    equal = 0
    for (label, cand, _), d, j, s in zip(items, ours, jar, seconds, strict=True):
        same = _same(d, j)
        equal += same
        shown = "-" if j is None or j["All"]["f"] is None else f"{j['All']['f']:.4f}"
        print(f"  {len(cand.split()):>5}  {d.categories['All'].f:>8.4f}  {shown:>8}"
              f"  {'yes' if same else 'NO':>5}  {s:>9.1f}  {label}")  # fmt: skip
    return equal


def _alone(items, reason: str | None) -> None:
    """The 320-word caption, each tool in a process of its own."""
    label, cand, refs = next(it for it in items if len(it[1].split()) == 320)
    ours = _alone_capeval(cand)
    line = (f"  320 words alone: capeval {ours['seconds']:.0f} s parsing it ({ours['cpu']:.0f} s "
            f"CPU), peak RSS {ours['rss'] / 2**20:.2f} GB")  # fmt: skip
    if reason is None:
        _, seconds, measured = _jar([(label, cand, refs)])
        if seconds is not None:
            line += (f"; the jar {seconds:.0f} s parsing it ({measured['seconds']:.0f} s with "
                     f"start-up, {measured['cpu']:.0f} s CPU in all threads), peak RSS "
                     f"{measured['rss'] / 2**20:.2f} GB (capeval "
                     f"{seconds / ours['seconds']:.2f}x as fast)")  # fmt: skip
    print(line + f" ({_load()})")


def _pascal(reason: str | None) -> None:
    """PASCAL-50S end to end with the five coco-caption metrics, as a user runs it."""
    folder = _pascal_dir()
    if folder is None:
        print(f"  PASCAL-50S: skipped (point ${PASCAL_ENV} at its folder)")
        return
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out.json"
        start = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-m", "capeval_core.cli", "correlate", "--format", "pascal50s",
             "--judgments", str(folder), "--metrics", "coco-caption", "--json", str(out)],
            capture_output=True, text=True,
        )  # fmt: skip
        seconds = time.perf_counter() - start
        if done.returncode != 0 or not out.is_file():
            tail = done.stderr.strip().splitlines()[-1:] or ["(nothing)"]
            print(f"  PASCAL-50S: stopped after {seconds:.0f} s: {tail[0]}")
            return
        data = json.loads(out.read_text(encoding="utf-8"))
    accuracy = _spice_accuracy(data)
    shown = "  ".join(
        f"{c} {100 * accuracy[c]:.1f} ({TABLE7_SPICE[c]})" for c in TABLE7_SPICE if c in accuracy
    )
    worst = max((abs(100 * accuracy[c] - TABLE7_SPICE[c]) for c in accuracy), default=math.nan)
    print(f"  PASCAL-50S, --metrics coco-caption, default preset: ran to the end in "
          f"{seconds:.0f} s (with the parse and score caches as they were); SPICE accuracy "
          f"(CLIPScore Table 7): {shown}; at most {worst:.1f} points from it "
          f"({_load()})")  # fmt: skip
    _spice_ties(folder)
    _mm_against_jar(folder, reason)


def _mm_against_jar(folder: Path, reason: str | None) -> None:
    """SPICE of every MM candidate, with the first draw of references, against the jar run
    now: the machine captions are where SPICE ties most, so where its MM accuracy rests on
    its values being the jar's."""
    if reason is not None:
        print(f"  PASCAL-50S's MM candidates against the jar: skipped ({reason})")
        return
    from capeval_core.judgments import load_judgments
    from capeval_core.metrics.spice import Spice
    from capeval_core.stats.pairwise import sample_references
    from capeval_core.tokenize import get_tokenizer

    jset = load_judgments(folder, "pascal50s")
    drawn = sample_references([it.references for it in jset.items], 5, 5, 0)[0]  # as _spice_ties
    rows = [k for k, c in enumerate(jset.categories()) if c == "MM"]
    cands = [jset.items[k].candidate_a for k in rows] + [jset.items[k].candidate_b for k in rows]
    refs = [list(drawn[k]) for k in rows] * 2
    ours = Spice().score(cands, refs).segments
    tokenize = get_tokenizer("ptb").tokenize_batch

    def joined(texts: list[str]) -> list[str]:
        return [" ".join(t) for t in tokenize(texts)]

    pairs = zip(joined(cands), refs, strict=True)
    items = [(f"MM {k}", c, tuple(joined(r))) for k, (c, r) in enumerate(pairs)]
    start = time.perf_counter()
    jar, _, _ = _jar(items)
    equal = sum(_same(s.details, j) for s, j in zip(ours, jar, strict=True))
    print(f"  PASCAL-50S's MM candidates (the first draw of references) against the jar run now: "
          f"{equal} of {len(items)} equal in every category (the jar took "
          f"{time.perf_counter() - start:.0f} s; {_load()})")  # fmt: skip


def _spice_ties(folder: Path) -> None:
    """How often SPICE scores a pair's two captions the same (both 0, mostly), and SPICE's
    accuracy were each such tie decided for the second caption (as a strict ``>`` between
    the two scores decides it) instead of counted half: a diagnostic of where a published
    figure may differ, never capeval's rule. Scored as ``correlate`` scored them (cached)."""
    import numpy as np

    from capeval_core.judgments import load_judgments
    from capeval_core.judgments.scoring import score_judgments
    from capeval_core.stats.pairwise import preference

    jset = load_judgments(folder, "pascal50s")
    cats = np.array(jset.categories(), dtype=object)
    pref = np.asarray(jset.preferences(), dtype=float)
    scores = score_judgments(jset, ["spice"], n_references=5, draws=5, seed=0, workers=0)
    diff = preference(scores.values_a["spice"], scores.values_b["spice"])
    ties, second = [], []
    for c in TABLE7_SPICE:
        rows = (cats == c) & np.isin(pref, (-1.0, 1.0))  # pairs people did not tie
        d = diff[:, rows]
        p = np.broadcast_to(pref[rows], d.shape)
        ties.append(f"{c} {100 * (d == 0).mean():.1f} %")
        second.append(f"{c} {100 * ((d == p) | ((d == 0) & (p == -1))).mean():.1f}")
    print(f"  SPICE ties (equal scores) per category: {', '.join(ties)}; were each decided for "
          f"the second caption instead of counted half: {'  '.join(second)}")  # fmt: skip


def _spice_accuracy(data: dict) -> dict[str, float]:
    """SPICE's accuracy per category in ``capeval correlate``'s JSON."""
    return {c: float(v) for c, v in data["accuracy"]["spice"].items() if c in TABLE7_SPICE}
