"""Write the SPICE scoring golden file: the jar's tuples in, the jar's per-image scores out.

    python tools/spice_oracle/make_scoring_golden.py SCORES.json TUPLES.jsonl OUT.json.gz

``SCORES.json`` is spice-1.0.jar's ``-detailed -subset`` output (as coco-caption runs it) on
COCO train2014 images (candidate: the image's first caption by annotation id; references:
the others; all PTB-tokenized), ``TUPLES.jsonl`` the oracle's record of each of those captions
(``python -m tools.spice_oracle parse``; its ``id`` is the caption's annotation id). The golden
keeps, per image, the annotation ids of its captions, the jar's counts and F per category
(null where the jar gives null), and per caption the proposed tuples.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from golden import write_golden


def main() -> None:
    scores, tuples, dst = (Path(a) for a in sys.argv[1:4])
    by_caption = {}
    for line in tuples.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        by_caption[int(record["id"])] = record["tuples"]
    images = []
    for item in json.loads(scores.read_text(encoding="utf-8")):
        images.append(
            {
                "image_id": item["image_id"],
                "scores": {
                    cat: {k: s[k] for k in ("tp", "fp", "fn", "f")}
                    for cat, s in item["scores"].items()
                },
            }
        )
    write_golden(
        dst,
        {
            "source": "spice-1.0.jar -detailed -subset + CoreNLP 3.6.0",
            "split": "train2014",
            "images": images,
            "tuples": {str(i): t for i, t in by_caption.items()},
        },
    )
    print(f"{dst}: {len(images)} images, {len(by_caption)} captions")


if __name__ == "__main__":
    main()
