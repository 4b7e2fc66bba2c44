"""How often capeval's tree-to-UD conversion gives the SPICE jar's basic dependency trees.

Reads an oracle file (JSON lines from ``python -m tools.spice_oracle parse``: each sentence
with the jar's constituency ``tree`` and ``basic`` graph), converts each tree with
``capeval_core.spice.pcfg.ud.basic_dependencies`` and compares heads and labels word by word:

    python -m tools.spice_oracle.check_ud ORACLE.jsonl [--skip N] [--limit N] [--show K] [--multi]

It prints the share of sentences that agree exactly, the confusion of (jar label -> ours) over
the words that differ, and the first K differing sentences. A truncated last line (a file
still being written) is skipped.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

from capeval_core.spice.corenlp import tree_of
from capeval_core.spice.pcfg.trees import read_tree
from capeval_core.spice.pcfg.ud import basic_dependencies


def sentences(
    path: Path, skip: int = 0, limit: int | None = None, multi: bool = False
) -> Iterator[tuple[str, dict]]:
    """(record id, sentence) in file order: the sentences of single-sentence records, or with
    ``multi`` every sentence of every record (``skip`` and ``limit`` count sentences)."""
    seen = 0
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                continue
            if len(record["sentences"]) != 1 and not multi:
                continue
            for sentence in record["sentences"]:
                seen += 1
                if seen <= skip:
                    continue
                if limit is not None and seen > skip + limit:
                    return
                yield record["id"], sentence


def compare(sentence: dict) -> tuple[list[int], list[str], list[int], list[str]]:
    """The jar's (heads, labels) and ours for one oracle sentence."""
    n = len(sentence["tokens"])
    jar_heads, jar_labels = tree_of(n, sentence["basic"]["edges"], sentence["basic"]["roots"])
    _, heads, labels = basic_dependencies(read_tree(sentence["tree"]))
    return jar_heads, jar_labels, heads, labels


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("oracle", type=Path)
    ap.add_argument("--skip", type=int, default=0, help="skip the first N sentences")
    ap.add_argument("--limit", type=int, default=None, help="check at most N sentences")
    ap.add_argument("--show", type=int, default=5, help="print the first K differences")
    ap.add_argument("--multi", action="store_true", help="also check records of several sentences")
    args = ap.parse_args(argv)

    total = same = 0
    confusion: Counter[tuple[str, str]] = Counter()
    shown = 0
    errors = 0
    for rid, s in sentences(args.oracle, args.skip, args.limit, args.multi):
        total += 1
        try:
            jh, jl, h, lab = compare(s)
        except Exception as exc:  # a crash is a difference worth seeing, not a stop
            errors += 1
            if shown < args.show:
                shown += 1
                print(f"--- {rid} raised {type(exc).__name__}: {exc}\n{s['tree']}")
            continue
        if (jh, jl) == (h, lab):
            same += 1
            continue
        for a, b, c, d in zip(jh, jl, h, lab, strict=True):
            if (a, b) != (c, d):
                confusion[(b, d if a == c else d + "@")] += 1
        if shown < args.show:
            shown += 1
            words = [t[0] for t in s["tokens"]]
            print(f"--- {rid}\n{s['tree']}")
            for i, w in enumerate(words):
                mark = "" if (jh[i], jl[i]) == (h[i], lab[i]) else "   <<"
                print(
                    f"  {i + 1:>2} {w:<14} jar {jl[i]:<12} {jh[i] + 1:>2}"
                    f"   ours {lab[i]:<12} {h[i] + 1:>2}{mark}"
                )
    if total == 0:
        print("no sentences", file=sys.stderr)
        return 1
    print(f"\n{same}/{total} sentences agree ({100 * same / total:.2f} %), {errors} raised")
    print("differing words, jar label -> ours (@: other head):")
    for (a, b), c in confusion.most_common(40):
        print(f"  {c:>5}  {a:<12} -> {b}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
