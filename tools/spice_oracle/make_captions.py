"""The captions the SPICE oracle parses: COCO train2014 as SPICE receives them.

    python tools/spice_oracle/make_captions.py OUT.tsv

Every train2014 caption of the installed pycocoevalcap, PTB-tokenized as coco-caption feeds
SPICE (capeval's ``ptb`` tokenizer), in a random order (``random.Random(2026)``) so that any
prefix is a random sample, duplicates and empty captions dropped: ``annotation_id<TAB>text``
lines. The stage goldens and ``check_pcfg.py`` read the oracle's output of this file;
never val2014, where SPICE parity is measured.
"""

from __future__ import annotations

import random
import sys

SEED = 2026


def caption_rows() -> tuple[list[tuple[str, str]], int]:
    """The file's ``(annotation id, text)`` rows, in order, and how many captions there were."""
    from capeval_core.resources import coco_captions
    from capeval_core.tokenize import get_tokenizer

    captions = list(coco_captions("train"))
    tokens = get_tokenizer("ptb").tokenize_batch([c.caption for c in captions])
    rows = [(str(c.annotation_id), " ".join(t)) for c, t in zip(captions, tokens, strict=True)]
    random.Random(SEED).shuffle(rows)
    seen: set[str] = set()
    kept = []
    for annotation_id, text in rows:
        if text.strip() and text not in seen:
            seen.add(text)
            kept.append((annotation_id, text))
    return kept, len(captions)


def main() -> None:
    rows, total = caption_rows()
    with open(sys.argv[1], "w", encoding="utf-8") as fh:
        fh.writelines(f"{annotation_id}\t{text}\n" for annotation_id, text in rows)
    print(f"{sys.argv[1]}: {len(rows)} captions of {total}")


if __name__ == "__main__":
    main()
