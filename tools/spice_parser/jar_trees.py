"""The jar's tags and basic trees of the training captions, kept without their text.

    python tools/spice_parser/jar_trees.py pack ORACLE.jsonl [ORACLE.jsonl ...] STORE
    python tools/spice_parser/jar_trees.py unpack STORE CAPTIONS.tsv OUT.jsonl
    python tools/spice_parser/jar_trees.py count STORE

Why: the oracle needs hours of CPU for the train2014 captions, and every training of the
parser starts from its output. All the training reads of a record is its tags and basic tree
(the later stages follow from them: ``check_stages.py`` finds the jar's lemmas and tuples from
them for all 398,460 captions), so ``pack`` keeps the first captions of ``make_captions.py``'s
file (their number and a digest of their ids) and per word the jar's tag, head and label, as
small integers: no COCO text. ``unpack`` gives the records back in the oracle's layout for what
``make_data.py`` and ``evaluate.py`` read: the caption from the captions file, its words through
capeval's emulation of CoreNLP's tokenizer (the jar's tokens for every caption the oracle
parsed; a caption where they differed would keep its tokens in the store), and the tuples from
the jar's tree through capeval's deterministic stages (no lemmas or graphs: ``check_stages.py``
needs the oracle's own records). The oracle parses the captions after the store's ``count``,
and both files go to ``make_data.py``, which then writes the same files as from the oracle
alone.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import lzma
from pathlib import Path

import numpy as np

FORMAT = 1


def pack(records, out: Path) -> int:
    """Write the records' tags and basic trees to ``out`` (an xz-compressed npz); returns the
    captions kept. The records must be the first captions of ``make_captions.py``'s file, in
    its order: the store keeps their number and a digest of their ids, not the ids."""
    from capeval_core.spice.stanford import corenlp_words, tree_of

    names: dict[str, dict[str, int]] = {"tags": {}, "labels": {}}
    ids, sentences, sentence_lens, words = [], [], [], []
    tokens_kept: dict[str, list[str]] = {}
    for record in records:
        tokens = [t[0] for s in record["sentences"] for t in s["tokens"]]
        if corenlp_words(record["caption"]) != tokens:
            tokens_kept[str(record["id"])] = tokens
        ids.append(str(record["id"]))
        sentences.append(len(record["sentences"]))
        for s in record["sentences"]:
            n = len(s["tokens"])
            try:
                head, label = tree_of(n, s["basic"]["edges"], s["basic"]["roots"])
            except ValueError as e:
                raise ValueError(f"caption {record['id']}: {e}") from None
            if n > 127:
                raise ValueError(f"caption {record['id']}: a sentence of more than 127 words")
            sentence_lens.append(n)
            for d, (t, g, x) in enumerate(zip(s["tokens"], head, label, strict=True)):
                # a head as its distance from the word (0: the root): small, so it packs well
                words.append(
                    (
                        names["tags"].setdefault(t[1], len(names["tags"])),
                        (g - d) % 256,
                        names["labels"].setdefault(x, len(names["labels"])),
                    )
                )
    buffer = io.BytesIO()
    np.savez(
        buffer,
        format=np.array(FORMAT),
        count=np.array(len(ids)),
        ids_sha256=np.array(_digest(ids)),
        sentences=np.array(sentences, np.uint8),
        sentence_lens=np.array(sentence_lens, np.uint8),
        words=np.array(words, np.uint8).reshape(-1, 3),
        names=np.array(json.dumps(names)),
        tokens_kept=np.array(json.dumps(tokens_kept)),
    )
    out.write_bytes(lzma.compress(buffer.getvalue(), preset=9 | lzma.PRESET_EXTREME))
    return len(ids)


def unpack(store: Path, captions: list[tuple[str, str]], only: set[str] | None = None):
    """The stored captions as oracle records (id, caption, sentences' tokens and basic trees,
    tuples), in order; ``captions``: ``make_captions.py``'s ``(id, text)`` rows; ``only``:
    just the captions of these ids."""
    from capeval_core.spice.stanford import basic_graph, corenlp_words, jar_order, sentence_tuples

    data = _load(store)
    rows = captions[: int(data["count"])]
    if len(rows) != int(data["count"]) or _digest([i for i, _ in rows]) != str(data["ids_sha256"]):
        raise ValueError(f"{store}: not the first captions of this captions file")
    names = json.loads(str(data["names"]))
    tag_of = sorted(names["tags"], key=names["tags"].get)
    label_of = sorted(names["labels"], key=names["labels"].get)
    tokens_kept = json.loads(str(data["tokens_kept"]))
    words = data["words"].astype(np.int64)
    lens = iter(data["sentence_lens"].tolist())
    at = 0
    for (annotation_id, text), n_sentences in zip(rows, data["sentences"].tolist(), strict=True):
        if only is not None and annotation_id not in only:
            for _ in range(n_sentences):
                at += next(lens)
            continue
        tokens = tokens_kept.get(annotation_id) or corenlp_words(text)
        record = {"id": annotation_id, "caption": text, "sentences": [], "tuples": []}
        start = 0
        for _ in range(n_sentences):
            n = next(lens)
            mine = tokens[start : start + n]
            tags = [tag_of[k] for k in words[at : at + n, 0].tolist()]
            offsets = words[at : at + n, 1].tolist()
            heads = [d + (r if r < 128 else r - 256) for d, r in enumerate(offsets)]  # as pack's
            labels = [label_of[k] for k in words[at : at + n, 2].tolist()]
            at, start = at + n, start + n
            pairs = list(enumerate(zip(heads, labels, strict=True)))
            record["sentences"].append(
                {
                    "tokens": [[w, t] for w, t in zip(mine, tags, strict=True)],
                    "basic": {
                        "edges": [[h + 1, x, d + 1] for d, (h, x) in pairs if h != d],
                        "roots": [d + 1 for d, (h, _) in pairs if h == d],
                    },
                }
            )
            tuples = sentence_tuples(basic_graph(mine, tags, heads, labels))
            record["tuples"] += [list(t) for t in jar_order(tuples)]
        if start != len(tokens):
            raise ValueError(f"caption {annotation_id}: {len(tokens)} words, {start} stored")
        yield record


def stored_count(store: Path) -> int:
    """How many of the captions file's first captions the store holds."""
    return int(_load(store)["count"])


def _load(store: Path) -> dict[str, np.ndarray]:
    with np.load(io.BytesIO(lzma.decompress(store.read_bytes()))) as z:
        data = {k: z[k] for k in z.files}
    if int(data["format"]) != FORMAT:
        raise ValueError(f"{store}: store format {int(data['format'])}, expected {FORMAT}")
    return data


def _digest(ids: list[str]) -> str:
    return hashlib.sha256("\n".join(ids).encode()).hexdigest()


def main() -> None:
    cli = argparse.ArgumentParser()
    sub = cli.add_subparsers(dest="command", required=True)
    p = sub.add_parser("pack")
    p.add_argument("paths", type=Path, nargs="+", help="oracle files, then the store to write")
    u = sub.add_parser("unpack")
    u.add_argument("store", type=Path)
    u.add_argument("captions", type=Path, help="make_captions.py's file")
    u.add_argument("out", type=Path)
    sub.add_parser("count").add_argument("store", type=Path)
    args = cli.parse_args()
    if args.command == "pack":
        from make_data import oracle_records  # a sibling script

        *oracles, out = args.paths
        print(f"{out}: {pack(oracle_records(oracles), out)} captions")
    elif args.command == "count":
        print(stored_count(args.store))
    else:
        with args.captions.open(encoding="utf-8") as fh:
            captions = [tuple(line.rstrip("\n").split("\t", 1)) for line in fh]
        with args.out.open("w", encoding="utf-8") as out:
            for record in unpack(args.store, captions):
                out.write(json.dumps(record) + "\n")


if __name__ == "__main__":
    main()
