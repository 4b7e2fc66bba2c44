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
    parser.add_argument(
        "--tuples", action="store_true", help="also the SPICE tuples through every stage"
    )
    args = parser.parse_args()

    from make_data import HOLD_OUT, doc_of

    from capeval_core.spice.spacy_runtime import import_spacy, use_numpy_blas
    from capeval_core.spice.stanford import corenlp_words

    spacy = import_spacy()
    from spacy.tokens import Doc

    nlp = spacy.load(args.model)
    use_numpy_blas(nlp)
    golds, inputs, records = [], [], []
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
            starts = [True] + [False] * (len(words) - 1)
            golds.append(gold)
            inputs.append(Doc(nlp.vocab, words=words, sent_starts=starts))
            records.append(record)
            if args.limit and len(golds) >= args.limit:
                break
    n_tok = tag = uas = las = exact = exact_tags = 0
    parsed = list(nlp.pipe(inputs, batch_size=256))
    for gold, doc in zip(golds, parsed, strict=True):
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
    extra = _tuple_agreement(records, parsed) if args.tuples else {}
    print(
        json.dumps(
            extra
            | {
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


def _tuple_agreement(records: list[dict], parsed: list) -> dict:
    """Tuple precision/recall (per caption, as sets, micro-averaged) and the exact-list rate
    of the whole stanford-emulation pipeline on the parses, against the oracle's tuples."""
    from capeval_core.spice.stanford import basic_graph, sentence_tuples

    hit = n_ours = n_jar = same = 0
    for record, doc in zip(records, parsed, strict=True):
        g = basic_graph(
            [t.text for t in doc],
            [t.tag_ for t in doc],
            [t.head.i for t in doc],
            [t.dep_ for t in doc],
        )
        ours = sentence_tuples(g)
        jar = [tuple(t) if len(t) < 3 else (t[0], t[2], t[1]) for t in record["tuples"]]
        same += ours == jar
        a, b = set(ours), set(jar)
        hit, n_ours, n_jar = hit + len(a & b), n_ours + len(a), n_jar + len(b)
    return {
        "tuple_precision": round(hit / max(n_ours, 1), 5),
        "tuple_recall": round(hit / max(n_jar, 1), 5),
        "identical_tuples": round(same / len(records), 5),
    }


if __name__ == "__main__":
    main()
