"""CoreNLP's stages around the parse (``capeval_core.spice.corenlp``) against every record of an
oracle file.

    python tools/spice_oracle/check_stages.py ORACLE.jsonl

The committed goldens check a few thousand captions in ``make test``; this runs the same check
on everything the oracle parsed (``make_captions.py``'s file: about 400,000 captions, a few
minutes).
From each caption's text: CoreNLP's tokens; from the jar's own tags and basic tree: its lemmas
and its proposed tuples, in order. Prints the counts as JSON and the first few differences.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from capeval_core.spice.corenlp import (
    basic_graph,
    corenlp_words,
    jar_order,
    sentence_tuples,
    tree_of,
)


def check(record: dict) -> list[str]:
    """Which stages differ from the jar on one record (empty: none)."""
    sentences = record["sentences"]
    words = [t[0] for s in sentences for t in s["tokens"]]
    problems = [] if corenlp_words(record["caption"]) == words else ["tokens"]
    tuples, lemmas_ok = [], True
    for k, s in enumerate(sentences):
        heads, deps = tree_of(len(s["tokens"]), s["basic"]["edges"], s["basic"]["roots"])
        g = basic_graph([t[0] for t in s["tokens"]], [t[1] for t in s["tokens"]], heads, deps)
        lemmas_ok &= [t.lemma for t in g.tokens] == [t[2] for t in s["tokens"]]
        tuples += sentence_tuples(g, k)
    jar = jar_order(record["tuples"])
    return problems + ([] if lemmas_ok else ["lemmas"]) + ([] if tuples == jar else ["tuples"])


def main() -> None:
    cli = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    cli.add_argument("oracle", type=Path)
    args = cli.parse_args()
    counts = {"captions": 0, "sentences": 0, "tokens": 0, "lemmas": 0, "tuples": 0}
    shown = 0
    with args.oracle.open(encoding="utf-8") as fh:
        for line in fh:
            record = json.loads(line)
            counts["captions"] += 1
            counts["sentences"] += len(record["sentences"])
            problems = check(record)
            for stage in problems:
                counts[stage] += 1
            if problems and shown < 5:
                shown += 1
                print(f"{record['id']}: {', '.join(problems)} differ: {record['caption']!r}")
    print(json.dumps(counts))


if __name__ == "__main__":
    main()
