"""Accuracy of the ``stanford-emulation`` parser against the SPICE oracle's own parses.

    python tools/spice_parser/evaluate.py MODEL_DIR ORACLE.jsonl [--limit N] [--hold-out] \
        [--tuples] [--outcomes OUT.jsonl]

Tag accuracy, UAS/LAS (over all tokens; the root counts as attached to itself, label
``ROOT``), and the exact-tree rate (every tag, head and label equal) on the records of the
oracle file (with ``--hold-out``: only those ``make_data.py`` kept out of training). MODEL_DIR
is a packaged model (the spaCy pipeline with its ``graph/`` tree scorer), parsed exactly as
at run time. ``--outcomes`` writes, per caption, whether its tree and (with ``--tuples``) its
tuple list are the jar's, so that two models can be compared caption by caption (a sign test
over the captions one gets right and the other wrong).
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
    parser.add_argument("--outcomes", type=Path, help="per-caption outcomes as JSON lines")
    args = parser.parse_args()

    from make_data import HOLD_OUT, doc_of, oracle_records

    from capeval_core.spice.stanford import corenlp_words, load_pipeline, parse_words

    loaded = load_pipeline(args.model)
    nlp = loaded[0]
    golds, inputs, records = [], [], []
    for record in oracle_records([args.oracle]):
        if args.hold_out and int(record["id"]) % HOLD_OUT:
            continue
        gold = doc_of(nlp.vocab, record)
        words = corenlp_words(record["caption"])
        if gold is None or [t.text for t in gold] != words:
            continue
        golds.append(gold)
        inputs.append(words)
        records.append(record)
        if args.limit and len(golds) >= args.limit:
            break
    n_tok = tag = uas = las = exact = exact_tags = 0
    parsed = parse_words(loaded, inputs)
    outcomes = []
    for gold, (tags, heads, deps) in zip(golds, parsed, strict=True):
        same_tree = same_tags = True
        for g, p_tag, p_head, p_dep in zip(gold, tags, heads, deps, strict=True):
            n_tok += 1
            t_ok = g.tag_ == p_tag
            h_ok = g.head.i == p_head
            l_ok = h_ok and g.dep_ == p_dep
            tag += t_ok
            uas += h_ok
            las += l_ok
            same_tree &= t_ok and l_ok
            same_tags &= t_ok
        exact += same_tree
        exact_tags += same_tags
        outcomes.append({"exact_tree": same_tree})
    n = len(golds)
    extra = _tuple_agreement(records, inputs, parsed, outcomes) if args.tuples else {}
    if args.outcomes:
        with args.outcomes.open("w", encoding="utf-8") as out:
            for record, outcome in zip(records, outcomes, strict=True):
                out.write(json.dumps({"id": record["id"]} | outcome) + "\n")
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


def _tuple_agreement(records: list[dict], words_of: list, parsed: list, outcomes: list) -> dict:
    """Tuple precision/recall (per caption, as sets, micro-averaged) and the exact-list rate
    of the whole stanford-emulation pipeline on the parses, against the oracle's tuples; each
    caption's exact-list outcome is added to ``outcomes``."""
    from capeval_core.spice.stanford import basic_graph, jar_order, sentence_tuples

    hit = n_ours = n_jar = same = 0
    for record, words, (tags, heads, deps), outcome in zip(
        records, words_of, parsed, outcomes, strict=True
    ):
        ours = sentence_tuples(basic_graph(words, tags, heads, deps))
        jar = jar_order(record["tuples"])
        outcome["identical_tuples"] = ours == jar
        same += outcome["identical_tuples"]
        a, b = set(ours), set(jar)
        hit, n_ours, n_jar = hit + len(a & b), n_ours + len(a), n_jar + len(b)
    return {
        "tuple_precision": round(hit / max(n_ours, 1), 5),
        "tuple_recall": round(hit / max(n_jar, 1), 5),
        "identical_tuples": round(same / len(records), 5),
    }


if __name__ == "__main__":
    main()
