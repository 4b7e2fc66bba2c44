"""The SPICE-1.0 oracle's golden file (``tests/golden/spice-oracle-train.json.gz``) as graphs.

Made by ``tools/spice_oracle/make_golden.py`` from the output of spice-1.0.jar with Stanford
CoreNLP 3.6.0 (``tools/spice_oracle/SpiceOracle.java``) on 3,000 COCO train2014 captions. The
file holds annotation ids, not caption text: words are re-read from the installed package
and PTB-tokenized (where CoreNLP tokenized differently, its tokens are stored).
"""

from __future__ import annotations

import functools
import gzip
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from capeval_core.spice.depgraph import DepGraph, Token

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "spice-oracle-train.json.gz"


@dataclass(frozen=True)
class OracleSentence:
    words: tuple[str, ...]
    tags: tuple[str, ...]
    lemmas: tuple[str, ...]
    graphs: dict[str, Any]  # "basic", "ccprocessed", "enhanced": {"edges", "roots"}
    tree: str  # the PCFG parser's constituency tree, Penn bracketing

    def graph(self, name: str) -> DepGraph:
        """One of the oracle's graphs as a :class:`DepGraph` (copy nodes included)."""
        return to_depgraph(self.words, self.tags, self.lemmas, self.graphs[name])


@dataclass(frozen=True)
class OracleCaption:
    annotation_id: int
    text: str
    sentences: tuple[OracleSentence, ...]
    tuples: tuple[tuple[str, ...], ...]  # SpiceParser's order; relations (subj, obj, rel)


def to_depgraph(words, tags, lemmas, graph: dict[str, Any]) -> DepGraph:
    """Oracle notation (1-based indices, ``"6'"`` for a copy of token 6) to a DepGraph."""
    g = DepGraph([Token(w, lem, t) for w, lem, t in zip(words, lemmas, tags, strict=True)])
    nodes: dict[Any, int] = {}

    def node(label: Any) -> int:
        if isinstance(label, int):
            return label - 1
        if label not in nodes:
            base = int(label.rstrip("'"))
            primes = len(label) - len(str(base))
            for p in range(1, primes + 1):  # copies are made in order of their primes
                key = str(base) + "'" * p
                if key not in nodes:
                    nodes[key] = g.add_copy(base - 1)
        return nodes[label]

    for label in sorted(
        {x for e in graph["edges"] for x in (e[0], e[2])} | set(graph["roots"]),
        key=lambda x: (isinstance(x, str), str(x)),
    ):
        node(label)
    g.edges = [[node(a), r, node(b)] for a, r, b in graph["edges"]]
    g.roots = [node(r) for r in graph["roots"]]
    return g


def edge_labels(graph: dict[str, Any]) -> set[tuple[str, str, str]]:
    """The oracle's edges as ``(governor, relation, dependent)`` label strings."""
    return {(str(a), r, str(b)) for a, r, b in graph["edges"]}


def _with_words(skeleton: str, words) -> str:
    """The golden's tree (leaves ``_``) with the sentence's words put back."""
    from capeval_core.spice.pcfg.trees import read_tree

    tree = read_tree(skeleton)
    leaves = [n for n in tree.subtrees() if n.is_leaf()]
    assert len(leaves) == len(words)
    for leaf, word in zip(leaves, words, strict=True):
        leaf.label = word
    return str(tree)


@functools.cache
def oracle_captions() -> tuple[OracleCaption, ...]:
    from capeval_core.resources import coco_captions
    from capeval_core.tokenize import get_tokenizer

    with gzip.open(GOLDEN, "rt", encoding="utf-8") as fh:
        records = json.load(fh)["records"]
    text_of = {c.annotation_id: c.caption for c in coco_captions("train")}
    raw = [text_of[r["id"]] for r in records]
    tokens = get_tokenizer("ptb").tokenize_batch(raw)
    out = []
    for r, toks in zip(records, tokens, strict=True):
        words = r.get("tokens") or [list(toks)]
        sentences = tuple(
            OracleSentence(
                tuple(w),
                tuple(s["tags"]),
                tuple(s["lemmas"]),
                {k: s[k] for k in ("basic", "ccprocessed", "enhanced")},
                _with_words(s["tree"], w),
            )
            for w, s in zip(words, r["sentences"], strict=True)
        )
        out.append(
            OracleCaption(r["id"], " ".join(toks), sentences, tuple(map(tuple, r["tuples"])))
        )
    return tuple(out)
