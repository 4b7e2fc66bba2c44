"""SPICE parity with spice-1.0.jar on COCO val2014 sets (needs the development-time oracle).

The jar (with CoreNLP 3.6.0, ``-detailed -subset`` as coco-caption runs it) scores the first
``n_images`` sets of the bench protocol (:func:`capeval_core.resources.coco_caption_sets`),
and its proposed tuples of every caption are dumped (``tools/spice_oracle``); both are cached
beside the jars, so a second run only scores capeval. Printed for SPICE's parser
(``stanford-pcfg``): images whose SPICE equals the jar's, images within 0.01, the corpus SPICE
and its relative difference, tuple precision and recall against the jar's tuples (per caption,
as sets, micro-averaged), and each category's corpus value (mean F over images where it is
defined) with its relative difference.
val2014 is measured here, never trained or tuned on. Prints; asserts nothing.
"""

from __future__ import annotations

import json
import math
import subprocess
import tempfile
from pathlib import Path

from capeval_core.errors import MissingResourceError
from capeval_core.metrics import make_batch
from capeval_core.resources import coco_caption_sets
from capeval_core.spice.corenlp import jar_order

PARITY_IMAGES = 1000
PARSERS = ("stanford-pcfg",)


def _jar_outputs(sets, texts_by_set) -> tuple[list[dict], dict[str, list]] | None:
    """The jar's per-image scores and per-caption tuples, from the cache or a fresh run."""
    from tools import spice_oracle

    reason = spice_oracle.available()
    if reason is not None:
        print(f"  SPICE parity vs the jar: skipped ({reason})")
        return None
    cache = spice_oracle.oracle_dir() / f"parity-val2014-{len(sets)}"
    scores_path, tuples_path = cache / "scores.json", cache / "tuples.jsonl"
    if not (scores_path.is_file() and tuples_path.is_file()):
        cache.mkdir(parents=True, exist_ok=True)
        items = [
            {"image_id": s.image_id, "test": texts[0], "refs": list(texts[1:])}
            for s, texts in zip(sets, texts_by_set, strict=True)
        ]
        with tempfile.TemporaryDirectory() as tmp:
            src = Path(tmp) / "in.json"
            src.write_text(json.dumps(items), encoding="utf-8")
            print(f"  running spice-1.0.jar on {len(sets)} val2014 sets (cached afterwards) ...")
            subprocess.run(
                [
                    "java",
                    "-Xmx8G",
                    "-cp",
                    spice_oracle.classpath(),
                    "edu.anu.spice.SpiceScorer",
                    str(src),
                    "-out",
                    str(scores_path),
                    "-subset",
                    "-detailed",
                    "-silent",
                ],
                check=True,
                capture_output=True,
            )
        distinct = list(dict.fromkeys(t for texts in texts_by_set for t in texts))
        spice_oracle.parse([(str(k), t) for k, t in enumerate(distinct)], tuples_path, workers=2)
    scores = json.loads(scores_path.read_text(encoding="utf-8"))
    tuples = {}
    for line in tuples_path.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        tuples[record["caption"]] = jar_order(record["tuples"])
    return scores, tuples


def _rel(ours: float, jar: float) -> str:
    return f"{(ours - jar) / jar:+.2%}" if jar else "n/a"


def main(n_images: int = 5000) -> None:
    from capeval_core.metrics.spice import Spice
    from capeval_core.spice.parse import CaptionParser
    from tools import spice_oracle

    n = min(n_images, PARITY_IMAGES)
    sets = coco_caption_sets("val", n)
    batch = make_batch([s.candidate for s in sets], [s.references for s in sets], "ptb")
    texts_by_set = [
        [" ".join(c), *(" ".join(r) for r in refs)]
        for c, refs in zip(batch.candidate_tokens, batch.reference_tokens, strict=True)
    ]
    print(f"SPICE parity with spice-1.0.jar + CoreNLP 3.6.0, {n} COCO val2014 sets")
    jar = _jar_outputs(sets, texts_by_set)
    if jar is None:
        return
    jar_scores, jar_tuples = jar
    spice_oracle.use_models_jar()  # stanford-pcfg reads the oracle's CoreNLP models jar
    jar_f = [item["scores"]["All"]["f"] for item in jar_scores]
    jar_corpus = sum(jar_f) / len(jar_f)
    distinct = list(dict.fromkeys(t for texts in texts_by_set for t in texts))
    for parser in PARSERS:
        try:
            result = Spice(parser=parser).score_batch(batch, warn=False)
        except MissingResourceError as exc:
            print(f"  {parser}: skipped ({exc})")
            continue
        ours = [seg.value for seg in result.segments]
        same = sum(abs(a - b) <= 1e-12 for a, b in zip(ours, jar_f, strict=True))
        near = sum(abs(a - b) <= 0.01 for a, b in zip(ours, jar_f, strict=True))
        parsed = CaptionParser(parser).parse(distinct)
        hit = n_ours = n_jar = 0
        for text in distinct:
            a, b = set(parsed[text]), set(jar_tuples[text])
            hit, n_ours, n_jar = hit + len(a & b), n_ours + len(a), n_jar + len(b)
        print(f"  {parser}:")
        print(
            f"    images identical {same / n:7.1%} ({same})   within 0.01 {near / n:7.1%} "
            f"({near})   corpus {result.value:.4f} vs jar {jar_corpus:.4f} "
            f"({_rel(result.value, jar_corpus)})"
        )
        print(
            f"    tuples vs the jar's: precision {hit / n_ours:.4f} ({hit} of {n_ours}), "
            f"recall {hit / n_jar:.4f} (of {n_jar})"
        )
        cats = []
        for cat, (_, _, f) in result.details.categories.items():
            values = [item["scores"][cat]["f"] for item in jar_scores]
            values = [v for v in values if v is not None and not math.isnan(v)]
            jar_cat = sum(values) / len(values) if values else math.nan
            cats.append(f"{cat} {f:.4f}/{jar_cat:.4f} ({_rel(f, jar_cat)})")
        print("    categories (ours/jar): " + ", ".join(cats))
