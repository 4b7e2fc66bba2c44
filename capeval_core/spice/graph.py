"""SPICE's scene graphs (metric-spec §6.1 step 5): tuples merged into objects, attributes and
relations, concepts merged through METEOR's synonym sets."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from capeval_core.spice.rules import Tuple


class Concept:
    """A set of strings and the union of their synsets (mutable while a graph is built)."""

    __slots__ = ("string_set", "strings", "synsets")

    def __init__(self, strings: tuple[str, ...], synsets: frozenset[int]) -> None:
        self.strings = strings
        self.string_set = frozenset(strings)
        self.synsets = synsets

    def equal(self, other: Concept) -> bool:
        return self.string_set == other.string_set and self.synsets == other.synsets

    def similar(self, other: Concept) -> bool:
        """§6.2: synsets meet or strings meet."""
        return not self.synsets.isdisjoint(other.synsets) or not self.string_set.isdisjoint(
            other.string_set
        )

    def merge(self, other: Concept) -> None:
        self.strings = self.strings + tuple(s for s in other.strings if s not in self.string_set)
        self.string_set = self.string_set | other.string_set
        self.synsets = self.synsets | other.synsets

    def __str__(self) -> str:
        return "/".join(self.strings)


def concept_lookup(synsets_of: Callable[[str], frozenset[int]]) -> Callable[[str], frozenset[int]]:
    """SPICE's synset lookup of a tuple string (spaces become underscores), memoised: a
    batch looks the same few thousand strings up hundreds of thousands of times."""
    memo: dict[str, frozenset[int]] = {}

    def lookup(s: str) -> frozenset[int]:
        found = memo.get(s)
        if found is None:
            found = memo[s] = synsets_of(s.strip().lower().replace(" ", "_"))
        return found

    return lookup


@dataclass
class _Node:
    obj: Concept
    attributes: list[Concept] = field(default_factory=list)


class SceneGraph:
    """Objects with attributes and relation edges, built from tuples (§6.1 step 5).

    ``synsets`` maps a tuple string to its synsets (:func:`concept_lookup` over METEOR's
    ``S``), or is ``None`` for SPICE's ``-noSynsets``: no synonym matching, no node merging.

    >>> sg = SceneGraph(None)
    >>> sg.add_tuples([("dog",), ("dog", "brown"), ("dog", "on", "grass"), ("dog", "brown")])
    >>> [tuple(str(c) for c in t) for t in sg.tuples()]
    [('dog',), ('dog', 'brown'), ('grass',), ('dog', 'on', 'grass')]
    """

    def __init__(self, synsets) -> None:
        self.synsets = synsets
        self.nodes: list[_Node] = []
        self.edges: list[tuple[int, Concept, int]] = []

    def concept(self, s: str) -> Concept:
        if self.synsets is None:
            return Concept((s,), frozenset())
        return Concept((s,), self.synsets(s))

    def node(self, s: str) -> int:
        """Get-or-add an object node; with synsets, any overlap merges (§6.1 step 5).

        A node equal to the concept of ``s`` wins; otherwise the first node most similar to
        it absorbs it; otherwise it becomes a new node.
        """
        syn = self.synsets(s) if self.synsets is not None else frozenset()
        best, best_sim = -1, 0.0
        for k, node in enumerate(self.nodes):
            obj = node.obj
            if obj.strings == (s,) and obj.synsets == syn:
                return k
            if self.synsets is None or best_sim == 1.0:
                continue
            if s in obj.string_set:
                sim = 1.0
            elif obj.synsets.isdisjoint(syn):
                continue
            else:
                sim = len(obj.synsets & syn) / len(obj.synsets | syn)
            if sim > best_sim:
                best, best_sim = k, sim
        c = Concept((s,), syn)
        if best >= 0:
            self.nodes[best].obj.merge(c)
            return best
        self.nodes.append(_Node(c))
        return len(self.nodes) - 1

    def _similar(self, a: Concept, b: Concept) -> bool:
        return a.similar(b) if self.synsets is not None else a.equal(b)

    def add_tuple(self, t: Tuple) -> None:
        if len(t) == 1:
            self.node(t[0])
        elif len(t) == 2:
            node = self.nodes[self.node(t[0])]
            c = self.concept(t[1])
            if any(a.equal(c) for a in node.attributes):
                return
            for a in node.attributes:
                if self._similar(a, c):
                    a.merge(c)
                    return
            node.attributes.append(c)
        else:
            src, tgt = self.node(t[0]), self.node(t[2])
            rel = t[1][3:] if t[1].startswith("be ") else t[1]
            c = self.concept(rel)
            same = [e for e in self.edges if e[0] == src and e[2] == tgt]
            if any(e[1].equal(c) for e in same):
                return
            for e in same:
                if self._similar(e[1], c):
                    e[1].merge(c)
                    return
            self.edges.append((src, c, tgt))

    def add_tuples(self, tuples: Iterable[Tuple]) -> None:
        for t in tuples:
            self.add_tuple(t)

    def tuples(self) -> list[tuple[Concept, ...]]:
        """Objects and their attributes node by node, then the relations (§6.1 step 6)."""
        out: list[tuple[Concept, ...]] = []
        for node in self.nodes:
            out.append((node.obj,))
            out.extend((node.obj, a) for a in node.attributes)
        out.extend((self.nodes[s].obj, rel, self.nodes[t].obj) for s, rel, t in self.edges)
        return out
