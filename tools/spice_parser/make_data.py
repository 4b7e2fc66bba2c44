"""Training data for the ``stanford-emulation`` parser: the SPICE oracle's parses as spaCy DocBins.

    python tools/spice_parser/make_data.py OUT_DIR ORACLE.jsonl [ORACLE.jsonl ...] \
        [--captions train.tsv --positions 0:178413,180000:197846]

Each oracle record (``tools/spice_oracle``: SPICE-1.0's CoreNLP 3.6.0 pipeline on a COCO
train2014 caption) becomes one Doc: CoreNLP's tokens, its PTB tags, and its *basic* UD tree
(heads and labels; the root's label is ``ROOT``). Records whose annotation id is divisible by
``HOLD_OUT`` go to ``dev.spacy`` (model selection), the rest to ``train.spacy``. Only
train2014 captions are used: val2014 is where SPICE parity is measured. ``--positions`` keeps
only the captions at those line ranges of ``make_captions.py``'s file (the shipped model's data:
what the oracle had parsed, in 20,000-caption chunks, when it was made).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

HOLD_OUT = 50  # 2 % of the captions, chosen by annotation id (independent of file order)


def doc_of(vocab, record: dict):
    from spacy.tokens import Doc

    from capeval_core.spice.stanford import tree_of

    words, tags, heads, deps, starts = [], [], [], [], []
    for s in record["sentences"]:
        offset = len(words)
        n = len(s["tokens"])
        try:
            head, label = tree_of(n, s["basic"]["edges"], s["basic"]["roots"])
        except ValueError:
            return None  # not a tree (never seen, but a Doc needs one head per token)
        starts.extend([True] + [False] * (n - 1))
        words += [t[0] for t in s["tokens"]]
        tags += [t[1] for t in s["tokens"]]
        heads += [offset + h for h in head]
        deps += label
    return Doc(vocab, words=words, tags=tags, heads=heads, deps=deps, sent_starts=starts)


def main() -> None:
    import spacy
    from spacy.tokens import DocBin

    cli = argparse.ArgumentParser()
    cli.add_argument("out", type=Path)
    cli.add_argument("oracle", type=Path, nargs="+")
    cli.add_argument("--captions", type=Path, help="make_captions.py's file (for --positions)")
    cli.add_argument("--positions", help="START:END line ranges of --captions, comma-separated")
    args = cli.parse_args()
    keep = _ids_at(args.captions, args.positions) if args.positions else None
    out = args.out
    out.mkdir(parents=True, exist_ok=True)
    nlp = spacy.blank("en")
    bins = {"train": DocBin(), "dev": DocBin()}
    seen: set[str] = set()
    counts = {"train": 0, "dev": 0, "skipped": 0}
    for record in oracle_records(args.oracle):
        if keep is not None and str(record["id"]) not in keep:
            continue
        if record["caption"] in seen:
            continue
        seen.add(record["caption"])
        doc = doc_of(nlp.vocab, record)
        if doc is None:
            counts["skipped"] += 1
            continue
        part = "dev" if int(record["id"]) % HOLD_OUT == 0 else "train"
        bins[part].add(doc)
        counts[part] += 1
    for part, docbin in bins.items():
        docbin.to_disk(out / f"{part}.spacy")
    print(json.dumps(counts))


def oracle_records(paths):
    """The records of oracle files (JSON lines), in order; a line still being written is
    skipped, so a running oracle's output can be read."""
    for path in paths:
        with open(path, encoding="utf-8") as fh:
            for line in fh:
                try:
                    yield json.loads(line)
                except json.JSONDecodeError:
                    continue


def _ids_at(captions: Path, positions: str) -> set[str]:
    """Annotation ids on the given line ranges (0-based, end exclusive) of the captions file."""
    ranges = [tuple(int(x) for x in part.split(":")) for part in positions.split(",")]
    with captions.open(encoding="utf-8") as fh:
        return {
            line.split("\t", 1)[0]
            for k, line in enumerate(fh)
            if any(start <= k < end for start, end in ranges)
        }


if __name__ == "__main__":
    main()
