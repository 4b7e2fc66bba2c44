"""Parse COCO 2014's captions with SPICE's exact parser, ahead of time, for the package.

SPICE reads each caption's tuples; parsing COCO val2014's 197,000 distinct captions with
``stanford-pcfg`` takes about half an hour on two cores (train2014's 398,000 about 50 min), so
the package ships them (``capeval_core/data/spice_parses/``, read by
:mod:`capeval_core.spice.shipped`). This tool rebuilds a split's file from the shipped grammar,
resumably and in parallel:

    python -m tools.spice_coco_parses parse --split val|train --work DIR [--workers N]
    python -m tools.spice_coco_parses pack --split val|train --work DIR

``parse`` writes one file per chunk of captions into ``DIR`` as it finishes it, so a stopped
run goes on where it stopped; ``pack`` checks that every chunk is there and was made by the
current parser identity, then writes the package file. Captions are parsed as coco-caption
hands them to SPICE: PTB-tokenized, lower-cased, punctuation removed, tokens joined by spaces.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

CHUNK = 500
PARSER = "stanford-pcfg"


def coco_texts(split: str) -> list[str]:
    """The distinct texts SPICE parses for ``split``'s captions, sorted (a stable order)."""
    from capeval_core.resources import coco_captions
    from capeval_core.tokenize import get_tokenizer

    captions = [c.caption for c in coco_captions(split)]
    tokens = get_tokenizer("ptb").tokenize_batch(captions)
    return sorted({" ".join(t) for t in tokens})


def _chunk_path(work: Path, k: int) -> Path:
    return work / f"chunk-{k:05d}.json.gz"


def _parse_chunk(work: str, k: int, texts: list[str]) -> tuple[int, float]:
    """Runs in a worker: parse one chunk and write it atomically."""
    from capeval_core.spice.parse import CaptionParser

    start = time.perf_counter()
    parser = CaptionParser(PARSER, cache=False, n_process=1)
    tuples = parser.tuples_of(texts)
    record = {
        "identity": parser.model_id,
        "texts": texts,
        "tuples": [[list(t) for t in caption] for caption in tuples],
    }
    path = _chunk_path(Path(work), k)
    tmp = path.with_suffix(".tmp")
    with gzip.open(tmp, "wt", encoding="utf-8") as fh:
        json.dump(record, fh, ensure_ascii=False)
    tmp.replace(path)
    return k, time.perf_counter() - start


def parse(split: str, work: Path, workers: int) -> None:
    texts = coco_texts(split)
    work.mkdir(parents=True, exist_ok=True)
    chunks = [texts[k : k + CHUNK] for k in range(0, len(texts), CHUNK)]
    todo = [k for k in range(len(chunks)) if not _chunk_path(work, k).is_file()]
    print(f"{len(texts):,} distinct captions in {len(chunks)} chunks; {len(todo)} to parse")
    done = 0
    with ProcessPoolExecutor(workers) as pool:
        futures = [pool.submit(_parse_chunk, str(work), k, chunks[k]) for k in todo]
        for future in as_completed(futures):
            k, seconds = future.result()
            done += 1
            print(f"chunk {k}: {seconds:.1f} s ({done}/{len(todo)})", flush=True)


def pack(split: str, work: Path) -> Path:
    from capeval_core.spice.parse import model_identity
    from capeval_core.spice.shipped import shipped_path, write_parses

    texts = coco_texts(split)
    identity = model_identity(PARSER)
    n_chunks = -(-len(texts) // CHUNK)
    parsed: dict[str, list[list[str]]] = {}
    for k in range(n_chunks):
        path = _chunk_path(work, k)
        if not path.is_file():
            sys.exit(f"{path} is missing: run `parse` again to finish")
        with gzip.open(path, "rt", encoding="utf-8") as fh:
            record = json.load(fh)
        if record["identity"] != identity:
            sys.exit(f"{path} was parsed by {record['identity']}, not {identity}")
        parsed.update(zip(record["texts"], record["tuples"], strict=True))
    missing = [t for t in texts if t not in parsed]
    if missing:
        sys.exit(f"{len(missing)} captions are in no chunk (first: {missing[0]!r})")
    out = shipped_path(f"coco-{split}2014")
    write_parses(out, identity, {t: parsed[t] for t in texts}, source=f"COCO {split}2014")
    print(f"wrote {out} ({out.stat().st_size / 1e6:.1f} MB, {len(texts):,} captions)")
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("step", choices=("parse", "pack"))
    ap.add_argument("--split", default="val", choices=("train", "val"))
    ap.add_argument("--work", type=Path, required=True, help="folder for the chunk files")
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args(argv)
    if args.step == "parse":
        parse(args.split, args.work, args.workers)
    else:
        pack(args.split, args.work)


if __name__ == "__main__":
    main()
