"""Write the SPICE stage golden file from oracle records (``python -m tools.spice_oracle``).

    python tools/spice_oracle/make_golden.py ORACLE.jsonl N tests/golden/spice-oracle-train.json.gz

Keeps the first ``N`` records (COCO train2014 captions in a seeded random order). COCO text is
not committed: a record holds the caption's annotation id, and the tests re-read the caption
from the installed package and PTB-tokenize it; CoreNLP's own tokens are stored only where they
differ from the caption's words (about 1 caption in 4,000: "at&t" is split, a final "." added).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from golden import SOURCE, write_golden

from capeval_core.spice.pcfg.trees import read_tree


def skeleton(tree: str) -> str:
    """A tree without its words: each leaf ``_`` (the words come back from the caption)."""
    t = read_tree(tree)
    for node in t.subtrees():
        if node.is_leaf():
            node.label = "_"
    return str(t)


def slim(record: dict) -> dict:
    words = record["caption"].split(" ")
    sentences = []
    tokens = [t for s in record["sentences"] for t in s["tokens"]]
    for s in record["sentences"]:
        sentences.append(
            {
                "tags": [t[1] for t in s["tokens"]],
                "lemmas": [t[2] for t in s["tokens"]],
                "basic": s["basic"],
                "ccprocessed": s["ccprocessed"],
                "enhanced": s["enhanced"],
                "tree": skeleton(s["tree"]),
            }
        )
    out: dict = {"id": int(record["id"]), "sentences": sentences, "tuples": record["tuples"]}
    if [t[0] for t in tokens] != words:
        out["tokens"] = [[t[0] for t in s["tokens"]] for s in record["sentences"]]
    return out


def main() -> None:
    src, n, dst = Path(sys.argv[1]), int(sys.argv[2]), Path(sys.argv[3])
    records = []
    with src.open(encoding="utf-8") as fh:
        for line in fh:
            records.append(slim(json.loads(line)))
            if len(records) == n:
                break
    write_golden(
        dst,
        {
            "source": SOURCE,
            "split": "train2014",
            "records": records,
        },
    )
    print(f"{dst}: {len(records)} captions")


if __name__ == "__main__":
    main()
