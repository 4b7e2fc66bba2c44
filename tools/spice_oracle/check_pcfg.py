"""The ``stanford-pcfg`` parser against every record of an oracle file, stage by stage.

    python -m tools.spice_oracle.check_pcfg ORACLE.jsonl [--skip N] [--limit N] [--show K]

For each caption: CoreNLP's tokens and sentences from its text; each sentence's parse tree
from the PCFG (against the jar's ``tree``), its basic dependencies from that tree (against the
jar's ``basic``), and the caption's tuples through every later stage (against the jar's
proposed tuples, in order). Needs the CoreNLP 3.6.0 models jar
(``$CAPEVAL_CORENLP_MODELS``, or the oracle's cache). Prints the counts as JSON and the first
few differences; a truncated last line (a file still being written) is skipped.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from capeval_core.spice.corenlp import (
    basic_graph,
    corenlp_words,
    jar_order,
    sentence_tuples,
    sentences,
    tree_of,
)
from capeval_core.spice.pcfg.parser import PCFGParser
from capeval_core.spice.pcfg.ud import basic_dependencies
from tools.spice_oracle import use_models_jar


def check(parser: PCFGParser, record: dict) -> list[str]:
    """Which stages differ from the jar on one record (empty: none)."""
    jar = record["sentences"]
    ours = sentences(corenlp_words(record["caption"]))
    if [w for s in ours for w in s] != [t[0] for s in jar for t in s["tokens"]]:
        return ["tokens"]
    if [len(s) for s in ours] != [len(s["tokens"]) for s in jar]:
        return ["sentences"]
    problems: set[str] = set()
    tuples = []
    for k, (words, s) in enumerate(zip(ours, jar, strict=True)):
        tree = parser.parse(words)
        if str(tree) != s["tree"]:
            problems.add("trees")
        tags, heads, labels = basic_dependencies(tree)
        if (heads, labels) != tree_of(len(words), s["basic"]["edges"], s["basic"]["roots"]):
            problems.add("basic")
        tuples += sentence_tuples(basic_graph(words, tags, heads, labels), k)
    if tuples != jar_order(record["tuples"]):
        problems.add("tuples")
    return sorted(problems)


def main() -> None:
    cli = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    cli.add_argument("oracle", type=Path)
    cli.add_argument("--skip", type=int, default=0, help="skip the first N records")
    cli.add_argument("--limit", type=int, default=None, help="check at most N records")
    cli.add_argument("--show", type=int, default=5, help="print the first K differences")
    args = cli.parse_args()
    use_models_jar()
    parser = PCFGParser()
    counts = {"captions": 0, "tokens": 0, "sentences": 0, "trees": 0, "basic": 0, "tuples": 0}
    shown, start = 0, time.perf_counter()
    with args.oracle.open(encoding="utf-8") as fh:
        for n, line in enumerate(fh):
            if n < args.skip:
                continue
            if args.limit is not None and n >= args.skip + args.limit:
                break
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                continue
            counts["captions"] += 1
            problems = check(parser, record)
            for stage in problems:
                counts[stage] += 1
            if problems and shown < args.show:
                shown += 1
                print(f"{record['id']}: {', '.join(problems)} differ: {record['caption']!r}")
    counts["seconds"] = round(time.perf_counter() - start, 1)
    print(json.dumps(counts))


if __name__ == "__main__":
    main()
