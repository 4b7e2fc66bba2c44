"""SPICE on long captions: capeval's default parser (``stanford-pcfg``) beside spice-1.0.jar.

A paragraph caption reaches the jar as one sentence (coco-caption's tokenizer drops its full
stops), so its parse costs the PCFG's cube of the length. Printed, with the machine's load:

1. **Ten long captions** (:mod:`tools.spice_oracle.long_captions`: COCO train2014 captions
   joined into 90 to 400 words) and, where PASCAL-50S is at hand, its long machine candidates
   (over 90 words) with five of their image's references: per caption capeval's SPICE and
   parse time, the jar's SPICE (``-Xmx8G -threads 1``, as coco-caption runs it but one parse
   at a time) and whether they are equal; the total parse time of each (the jar's: its
   ``Parsing test captions`` step, after its models are loaded).
2. **320 words alone**: each in a process of its own, capeval's parse time and peak memory
   (the process's peak RSS) against the jar's.
3. **PASCAL-50S end to end** (where at hand): ``capeval correlate --format pascal50s
   --metrics coco-caption``, the default preset, its time, and SPICE's accuracy per
   category beside CLIPScore's Table 7.

PASCAL-50S is not in the repository: point ``$CAPEVAL_PASCAL50S`` at a folder holding
``pair_pascal.mat`` and ``pascal50S.mat`` as the CIDEr authors distribute them. Prints;
asserts nothing. ``python -m bench spice_long``.
"""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

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
start = time.perf_counter()
caption_tuples(parser, text)
seconds = time.perf_counter() - start
print(json.dumps({"seconds": seconds, "rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
"""

#: a command run in a process of its own, reporting that process's peak RSS (kB)
_MEASURED = """
import json, resource, subprocess, sys, time
start = time.perf_counter()
done = subprocess.run(json.loads(sys.argv[1]), capture_output=True, text=True)
print(json.dumps({"seconds": time.perf_counter() - start, "returncode": done.returncode,
                  "rss": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss,
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


def _capeval(items) -> tuple[list[float], list[float]]:
    """capeval's SPICE and parse time of each (candidate, references), one at a time."""
    from capeval_core.metrics.spice import Spice
    from capeval_core.spice.stanford_pcfg import caption_tuples, load_pipeline

    parser = load_pipeline()
    caption_tuples(parser, "a warm up caption")
    values, seconds = [], []
    for _, cand, refs in items:
        start = time.perf_counter()
        caption_tuples(parser, cand)
        seconds.append(time.perf_counter() - start)
        old = os.environ.get("CAPEVAL_CACHE_DIR")
        with tempfile.TemporaryDirectory() as tmp:  # a parse cache of its own: parsed again
            os.environ["CAPEVAL_CACHE_DIR"] = tmp
            try:
                result = Spice(parser="stanford-pcfg").score([cand], [list(refs)])
            finally:
                if old is None:
                    os.environ.pop("CAPEVAL_CACHE_DIR", None)
                else:
                    os.environ["CAPEVAL_CACHE_DIR"] = old
        values.append(result.segments[0].value)
    return values, seconds


def _jar_command(src: Path, out: Path) -> list[str]:
    from tools import spice_oracle

    spice_oracle.compile_drivers()
    command = ["java", "-Xmx8G", "-cp", spice_oracle.classpath(), "edu.anu.spice.SpiceScorer"]
    return [*command, str(src), "-out", str(out), "-detailed", "-subset", "-silent",
            "-threads", "1"]  # fmt: skip


def _jar(items) -> tuple[list[float | None], float | None, dict]:
    """The jar's SPICE of each item, its time parsing the candidates, and the measurement
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
        scores = {r["image_id"]: r["scores"]["All"]["f"] for r in json.loads(out.read_text())}
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

    items = [(f"train2014 image {it.image_id}", it.candidate, it.references)
             for it in long_items()]  # fmt: skip
    items += _pascal_long_items()
    print(f"SPICE on long captions, stanford-pcfg against spice-1.0.jar ({_load()})")
    ours, our_seconds = _capeval(items)
    reason = spice_oracle.available()
    jar, jar_seconds = [None] * len(items), None
    if reason is None:
        jar, jar_seconds, _ = _jar(items)
    print(f"  {'words':>5}  {'capeval':>8}  {'jar':>8}  {'equal':>5}  {'capeval s':>9}  caption")
    equal = 0
    for (label, cand, _), v, j, s in zip(items, ours, jar, our_seconds, strict=True):
        same = j is not None and abs(v - j) < 1e-9
        equal += same
        shown = "-" if j is None else f"{j:.4f}"
        print(f"  {len(cand.split()):>5}  {v:>8.4f}  {shown:>8}  {'yes' if same else 'NO':>5}"
              f"  {s:>9.1f}  {label}")  # fmt: skip
    print(f"  equal to the jar's SPICE: {equal} of {len(items)}"
          + ("" if reason is None else f" (the jar: skipped, {reason})"))  # fmt: skip
    total = sum(our_seconds)
    if jar_seconds is not None:
        print(f"  parsing them all: capeval {total:.0f} s, the jar {jar_seconds:.0f} s "
              f"(capeval {jar_seconds / total:.2f}x as fast; {_load()})")  # fmt: skip
    else:
        print(f"  parsing them all: capeval {total:.0f} s")
    _alone(items, reason)
    _pascal(reason)


def _alone(items, reason: str | None) -> None:
    """The 320-word caption, each tool in a process of its own."""
    label, cand, refs = next(it for it in items if len(it[1].split()) == 320)
    ours = _alone_capeval(cand)
    line = (f"  320 words alone: capeval {ours['seconds']:.0f} s, peak RSS "
            f"{ours['rss'] / 2**20:.2f} GB")  # fmt: skip
    if reason is None:
        _, seconds, measured = _jar([(label, cand, refs)])
        if seconds is not None:
            line += (f"; the jar {seconds:.0f} s parsing it ({measured['seconds']:.0f} s with "
                     f"start-up), peak RSS {measured['rss'] / 2**20:.2f} GB "
                     f"(capeval {seconds / ours['seconds']:.2f}x as fast)")  # fmt: skip
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
          f"{seconds:.0f} s; SPICE accuracy (CLIPScore Table 7): {shown}; "
          f"at most {worst:.1f} points from it ({_load()})")  # fmt: skip


def _spice_accuracy(data: dict) -> dict[str, float]:
    """SPICE's accuracy per category in ``capeval correlate``'s JSON."""
    return {c: float(v) for c, v in data["accuracy"]["spice"].items() if c in TABLE7_SPICE}
