"""Accuracy of the ``stanford-emulation`` parser against the SPICE oracle's own parses.

    python tools/spice_parser/evaluate.py MODEL_DIR ORACLE.jsonl [--limit N] [--hold-out]

Tag accuracy, UAS/LAS (over all tokens; the root counts as attached to itself, label
``ROOT``), and the exact-tree rate (every tag, head and label equal) on the records of the
oracle file (with ``--hold-out``: only those ``make_data.py`` kept out of training).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("model", type=Path)
    parser.add_argument("oracle", type=Path)
    parser.add_argument("--limit", type=int, default=0)
    parser.add_argument("--hold-out", action="store_true")
    args = parser.parse_args()

    from make_data import HOLD_OUT, doc_of

    from capeval_core.spice.spacy_runtime import import_spacy, use_numpy_blas
    from capeval_core.spice.stanford import corenlp_words

    spacy = import_spacy()
    from spacy.tokens import Doc

    nlp = spacy.load(args.model)
    use_numpy_blas(nlp)
    golds, inputs = [], []
    with args.oracle.open(encoding="utf-8") as fh:
        for line in fh:
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                continue
            if args.hold_out and int(record["id"]) % HOLD_OUT:
                continue
            gold = doc_of(nlp.vocab, record)
            words = corenlp_words(record["caption"])
            if gold is None or [t.text for t in gold] != words:
                continue
            doc = Doc(nlp.vocab, words=words)
            for k, token in enumerate(doc):
                token.is_sent_start = k == 0
            golds.append(gold)
            inputs.append(doc)
            if args.limit and len(golds) >= args.limit:
                break
    n_tok = tag = uas = las = exact = exact_tags = 0
    for gold, doc in zip(golds, nlp.pipe(inputs, batch_size=256), strict=True):
        same_tree = same_tags = True
        for g, p in zip(gold, doc, strict=True):
            n_tok += 1
            t_ok = g.tag_ == p.tag_
            h_ok = g.head.i == p.head.i
            l_ok = h_ok and g.dep_ == p.dep_
            tag += t_ok
            uas += h_ok
            las += l_ok
            same_tree &= t_ok and l_ok
            same_tags &= t_ok
        exact += same_tree
        exact_tags += same_tags
    n = len(golds)
    print(
        json.dumps(
            {
                "sentences": n,
                "tokens": n_tok,
                "tag_accuracy": round(tag / n_tok, 5),
                "uas": round(uas / n_tok, 5),
                "las": round(las / n_tok, 5),
                "exact_tags": round(exact_tags / n, 5),
                "exact_tree": round(exact / n, 5),
            }
        )
    )


if __name__ == "__main__":
    main()
