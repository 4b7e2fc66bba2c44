"""The dependency graph SPICE's stages pass along: tokens with lemma and tag, and
``[governor, relation, dependent]`` edges (Universal Dependencies as CoreNLP 3.6.0 names them)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NamedTuple


def word_set(text: str) -> frozenset[str]:
    """A word list written as one string (easier to compare with the Java sources)."""
    return frozenset(text.split())


def is_noun(tag: str) -> bool:
    """SPICE's ``{tag:/NNP?S?/}``: NN, NNS, NNP, NNPS."""
    return tag in ("NN", "NNS", "NNP", "NNPS")


def is_plural(tag: str) -> bool:
    """SPICE's ``{tag:/NNP?S/}``: NNS, NNPS."""
    return tag in ("NNS", "NNPS")


class Token(NamedTuple):
    """One word of a sentence: surface form (lower-cased by SPICE only in tuples), lemma, tag."""

    word: str
    lemma: str
    tag: str


@dataclass
class DepGraph:
    """A mutable dependency multigraph over the tokens of one sentence (UD, collapsed).

    ``edges`` holds ``[governor, relation, dependent]`` triples; ``roots`` the root tokens.
    """

    tokens: list[Token]
    edges: list[list[Any]] = field(default_factory=list)
    roots: list[int] = field(default_factory=list)

    def add(self, gov: int, rel: str, dep: int) -> None:
        if gov != dep and [gov, rel, dep] not in self.edges:
            self.edges.append([gov, rel, dep])

    def out(self, node: int) -> list[tuple[str, int]]:
        """Outgoing ``(relation, dependent)`` pairs in dependent order (CoreNLP's child order)."""
        return sorted(((r, d) for g, r, d in self.edges if g == node), key=lambda e: e[1])

    def incoming(self, node: int) -> list[tuple[int, str]]:
        return [(g, r) for g, r, d in self.edges if d == node]

    def children(self, node: int, rel: str) -> list[int]:
        return [d for r, d in self.out(node) if r == rel]

    def child(self, node: int, rel: str) -> int | None:
        kids = self.children(node, rel)
        return kids[0] if kids else None

    def parent(self, node: int) -> int | None:
        inc = self.incoming(node)
        return inc[0][0] if inc else None

    def as_triples(self) -> list[tuple[str, str, str]]:
        """Readable edges ``(governor word, relation, dependent word)`` for tests and views."""
        w = [t.word for t in self.tokens]
        return [(w[g], r, w[d]) for g, r, d in sorted(self.edges, key=lambda e: (e[2], e[0]))]
