"""Training data for the tree scorer: the pipeline's encoder outputs and the jar's trees.

    python tools/spice_parser/graph_features.py MODEL_DIR DATA_DIR OUT_DIR

For every Doc of ``make_data.py``'s ``train.spacy`` and ``dev.spacy`` (the jar's tokens, tags and
basic trees), the trained pipeline at MODEL_DIR tags the words as it does at run time, and its
two encoders (the tagger's, and the one trained for the transition parser) give each word a
vector; ``OUT_DIR/{train,dev}.npz`` hold those vectors (float16), the sentence lengths and the
jar's heads (0: the root; ``i``: word ``i``, 1-based), labels and tags, as indices into
``OUT_DIR/names.json``. Same model and data, same arrays.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np


def main() -> None:
    cli = argparse.ArgumentParser()
    cli.add_argument("model", type=Path)
    cli.add_argument("data", type=Path)
    cli.add_argument("out", type=Path)
    args = cli.parse_args()

    from spacy.tokens import Doc, DocBin

    from capeval_core.spice.spacy_runtime import import_spacy, use_numpy_blas
    from capeval_core.spice.stanford import encoder_features

    nlp = import_spacy().load(args.model)
    use_numpy_blas(nlp)
    names: dict[str, dict[str, int]] = {"labels": {}, "tags": {}}
    args.out.mkdir(parents=True, exist_ok=True)
    for part in ("train", "dev"):
        golds = list(DocBin().from_disk(args.data / f"{part}.spacy").get_docs(nlp.vocab))
        feats, lens, heads, labels, tags = [], [], [], [], []
        for start in range(0, len(golds), 2000):
            batch = golds[start : start + 2000]
            docs = [
                Doc(nlp.vocab, words=[t.text for t in g], sent_starts=[t.is_sent_start for t in g])
                for g in batch
            ]
            for gold, f in zip(batch, encoder_features(nlp, docs), strict=True):
                feats.append(f.astype(np.float16))
                lens.append(len(gold))
                heads += [0 if t.head.i == t.i else t.head.i + 1 for t in gold]
                labels += [names["labels"].setdefault(t.dep_, len(names["labels"])) for t in gold]
                tags += [names["tags"].setdefault(t.tag_, len(names["tags"])) for t in gold]
            print(part, start + len(batch), flush=True)
        np.savez(
            args.out / f"{part}.npz",
            feats=np.vstack(feats),
            lens=np.array(lens),
            heads=np.array(heads),
            labels=np.array(labels),
            tags=np.array(tags),
        )
    (args.out / "names.json").write_text(json.dumps(names), encoding="utf-8")


if __name__ == "__main__":
    main()
