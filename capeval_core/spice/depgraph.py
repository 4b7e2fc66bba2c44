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
    Nodes are token positions; CoreNLP's copy nodes ("walk to and from": ``walk'``) are extra
    nodes after the sentence's tokens, ``copy_of`` mapping each to the token it copies.
    """

    tokens: list[Token]
    edges: list[list[Any]] = field(default_factory=list)
    roots: list[int] = field(default_factory=list)
    copy_of: dict[int, int] = field(default_factory=dict)

    def add_copy(self, node: int) -> int:
        """A new copy of token ``node`` (same word, lemma and tag); returns its node."""
        original = self.copy_of.get(node, node)
        self.tokens.append(self.tokens[original])
        self.copy_of[len(self.tokens) - 1] = original
        return len(self.tokens) - 1

    def label(self, node: int) -> str:
        """CoreNLP's name of a node: its 1-based index, with one prime per copy (``"6'"``)."""
        original = self.copy_of.get(node)
        if original is None:
            return str(node + 1)
        primes = sum(1 for c, o in self.copy_of.items() if o == original and c <= node)
        return str(original + 1) + "'" * primes

    def labelled_edges(self) -> set[tuple[str, str, str]]:
        """The edges as ``(governor, relation, dependent)`` labels, for comparisons."""
        return {(self.label(g), r, self.label(d)) for g, r, d in self.edges}

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
