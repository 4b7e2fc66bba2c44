"""Write the long-sentence SPICE golden (``tests/golden/spice-long.json.gz``).

    python -m tools.spice_oracle.make_long_golden OUT.json.gz [long|fallback] [--up-to N]
        [--over N] [--heap 8G]

(one part only: the other is kept from OUT.json.gz as it is; ``--up-to N`` / ``--over N``:
the long captions of at most / more than N words only, the others kept)

Two parts, both from train2014 text (:mod:`.long_captions`):

- ``long``: the ten long candidates (90 to 400 words, each one sentence to the jar) with their
  references, scored by spice-1.0.jar as coco-caption runs it (``java ... SpiceScorer IN.json -out
  OUT.json -detailed -subset -silent``), with ``-threads 1`` so that no two long charts are
  in the heap at once (:data:`JAR_COMMAND`); per image the jar's counts and
  F of every category, and the candidate's tuples. The captions are kept as annotation ids
  (the test rebuilds them).
- ``fallback``: what the jar gives a sentence whose chart does not fit in its heap, measured
  at ``-Xmx1200m`` (SpiceOracle.java, Java's serial collector, with which CoreNLP recovers from
  the OutOfMemoryError; see the SPICE card): per sentence the tokens (word, tag, lemma), the
  tree and the basic dependencies, and the caption's tuples.
"""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from tools import spice_oracle
from tools.spice_oracle.golden import write_golden
from tools.spice_oracle.long_captions import long_items

#: the SPICE jar's command, as coco-caption runs it but with one parse thread (``HEAP``: 8G as
#: coco-caption, or less with ``--heap``: the parses do not depend on it while every chart
#: fits, 1.3 GB at 215 words, 4.3 GB at 400)
JAR_COMMAND = (
    "java -XmxHEAP -cp CLASSPATH edu.anu.spice.SpiceScorer IN.json -out OUT.json "
    "-detailed -subset -silent -threads 1"
)
#: the heap the fallback records are made at
FALLBACK_HEAP = "1200m"


def fallback_texts() -> list[str]:
    """Texts with a sentence far too long for ``FALLBACK_HEAP``: four long candidates, one
    after a short sentence, one with digits and capitals."""
    items = long_items()
    texts = [items[k].candidate for k in (6, 7, 8, 9)]
    texts.append("Two dogs play in the park. " + items[6].candidate)
    texts.append(items[7].candidate.replace("two", "2").replace(" man ", " John "))
    return texts


def run_jar(items, heap: str) -> list[dict]:
    """spice-1.0.jar's ``-detailed`` output on ``items``, in order."""
    spice_oracle.compile_drivers()
    payload = [
        {"image_id": it.image_id, "test": it.candidate, "refs": list(it.references)} for it in items
    ]
    with tempfile.TemporaryDirectory() as tmp:
        src, out = Path(tmp) / "in.json", Path(tmp) / "out.json"
        src.write_text(json.dumps(payload), encoding="utf-8")
        command = JAR_COMMAND.replace("HEAP", heap).split()
        command[command.index("CLASSPATH")] = spice_oracle.classpath()
        command[command.index("IN.json")] = str(src)
        command[command.index("OUT.json")] = str(out)
        subprocess.run(command, check=True, capture_output=True)
        return json.loads(out.read_text(encoding="utf-8"))


def long_part(up_to: int, over: int, heap: str) -> list[dict]:
    """The jar's scores and candidate tuples of the long captions of more than ``over`` and at
    most ``up_to`` words."""
    items = [it for it in long_items() if over < len(it.candidate.split()) <= up_to]
    scored = {r["image_id"]: r for r in run_jar(items, heap)}
    out = []
    for it in items:
        r = scored[it.image_id]
        out.append(
            {
                "image_id": it.image_id,
                "words": len(it.candidate.split()),
                "candidate_ids": list(it.candidate_ids),
                "reference_ids": list(it.reference_ids),
                "scores": {
                    cat: {k: s[k] for k in ("tp", "fp", "fn", "f")}
                    for cat, s in r["scores"].items()
                },
                "tuples": [t["tuple"] for t in r["test_tuples"]],
            }
        )
    return out


def fallback_part() -> list[dict]:
    """The jar's record of each of :func:`fallback_texts` at ``FALLBACK_HEAP``."""
    texts = fallback_texts()
    with tempfile.TemporaryDirectory() as tmp:
        src, out = Path(tmp) / "in.tsv", Path(tmp) / "out.jsonl"
        src.write_text("".join(f"{k}\t{t}\n" for k, t in enumerate(texts)), encoding="utf-8")
        spice_oracle.java("edu.anu.spice.SpiceOracle", str(src), str(out), heap=FALLBACK_HEAP)
        records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    return [
        {
            "text": text,
            "sentences": [
                {"tokens": s["tokens"], "tree": s["tree"], "basic": s["basic"]}
                for s in record["sentences"]
            ],
            "tuples": record["tuples"],
        }
        for text, record in zip(texts, records, strict=True)
    ]


def main() -> None:
    dst, args = Path(sys.argv[1]), sys.argv[2:]
    heap = "8G"
    if "--heap" in args:
        at = args.index("--heap")
        heap = args[at + 1]
        del args[at : at + 2]
    bounds = {"--up-to": 10**9, "--over": 0}
    for flag in bounds:
        if flag in args:
            at = args.index(flag)
            bounds[flag] = int(args[at + 1])
            del args[at : at + 2]
    parts = args or ["long", "fallback"]
    payload = {"long": [], "fallback": []}
    if dst.is_file():
        with gzip.open(dst, "rt", encoding="utf-8") as fh:
            payload.update(json.load(fh))
    if "long" in parts:
        fresh = {r["image_id"]: r for r in long_part(bounds["--up-to"], bounds["--over"], heap)}
        payload["long_command"] = JAR_COMMAND.replace("HEAP", heap)
        kept = {r["image_id"]: r for r in payload["long"] if r["image_id"] not in fresh}
        order = [it.image_id for it in long_items()]
        merged = {**kept, **fresh}
        payload["long"] = [merged[i] for i in order if i in merged]
    if "fallback" in parts:
        payload["fallback"] = fallback_part()
    payload.update(
        source="spice-1.0.jar + CoreNLP 3.6.0 on Java 17",
        fallback_command=f"SpiceOracle.java at -Xmx{FALLBACK_HEAP}, -XX:+UseSerialGC",
    )
    write_golden(dst, payload)
    print(f"{dst}: {len(payload['long'])} long captions, {len(payload['fallback'])} fallback texts")


if __name__ == "__main__":
    main()
