"""CoreNLP 3.6.0's ``SemanticGraph`` as SceneGraphParser and SpiceParser walk it (§6.1 steps 3-4).

SPICE's enhancements and tuple rules are semgrex patterns, and the order of their matches (hence
of the tuples, which the scene-graph merging depends on) is the order in which CoreNLP's graph
hands out nodes and edges. That order comes from Java hash maps keyed by the nodes, whose hash is
``29 * sentence + index`` (copies share their token's hash): a map iterates its buckets
(``hash & (capacity - 1)``, the capacity doubling from 16 whenever the map grows past 3/4 full and
never shrinking), and within one bucket its keys in insertion order. So on short sentences nodes
come in token order (a copy in its token's bucket, in the order they were added), while on longer
ones a child at index 17 comes before a child at index 5 (below a node whose child map holds 16
buckets).

:class:`SemGraph` keeps a :class:`~capeval_core.spice.depgraph.DepGraph`'s nodes in those maps,
with CoreNLP's other orders: ``getParent`` (the first parent, by position, that leads to a root),
the sorted child and edge lists, and the order in which semgrex's ``find()`` visits the nodes
(reverse post-order of a depth-first walk in map order; the map order itself when the graph has a
cycle).
"""

from __future__ import annotations

from collections.abc import Iterator

from capeval_core.spice.depgraph import DepGraph

#: CoreNLP orders the typed dependencies of a sentence before building its graph (by dependent
#: position, governor position, relation name), the root taking the governor position 0.
ROOT = "root"


def _grow(capacity: int, size: int) -> int:
    """A Java ``HashMap``'s table size after its ``size``-th distinct key went in."""
    while size > capacity * 3 // 4:
        capacity *= 2
    return capacity


class SemGraph:
    """The maps of one CoreNLP ``SemanticGraph`` over a DepGraph's nodes (see module docs).

    ``out[v]`` maps each dependent of ``v`` to the relations of its edges from ``v`` (in the
    order they were added, with a global sequence number), ``inc[v]`` each governor to theirs;
    ``vertices`` and ``roots`` are the graph's vertex map and root set in insertion order.
    """

    def __init__(self, g: DepGraph, sentence: int = 0) -> None:
        self.graph = g
        n = len(g.tokens)
        original = [g.copy_of.get(v, v) for v in range(n)]
        copies = [0] * n
        seen: dict[int, int] = {}
        for v in range(n):
            if v in g.copy_of:
                seen[original[v]] = copies[v] = seen.get(original[v], 0) + 1
        #: 1-based token position of each node (copies share their token's)
        self.index = [o + 1 for o in original]
        #: ``IndexedWord.compareTo`` order: position, then copy count
        self.order_key = [(self.index[v], copies[v]) for v in range(n)]
        self.hash = [29 * sentence + i for i in self.index]
        self.out: dict[int, dict[int, list[tuple[str, int]]]] = {}
        self.inc: dict[int, dict[int, list[str]]] = {}
        self._out_cap: dict[int, int] = {}
        self.vertices: dict[int, None] = {}
        self._vertex_cap = 16
        self.roots: dict[int, None] = {}
        self._root_cap = 16
        self._seq = 0

    # construction ---------------------------------------------------------------------------
    @classmethod
    def build(cls, g: DepGraph, *, sentence: int = 0, typed_order: bool = False) -> SemGraph:
        """The graph CoreNLP builds from ``g``'s edges and roots.

        With ``typed_order`` the edges go in as CoreNLP adds a freshly converted sentence's
        typed dependencies (sorted, the root among them); without, in ``g.edges``' order (the
        order a previous stage added them), the roots after them.
        """
        sg = cls(g, sentence)
        if typed_order:
            idx, key = sg.index, sg.order_key
            entries = [(gv, r, d) for gv, r, d in g.edges] + [(None, ROOT, d) for d in g.roots]
            entries.sort(
                key=lambda e: (
                    idx[e[2]],
                    0 if e[0] is None else idx[e[0]],
                    e[1],
                    key[e[2]][1],
                    0 if e[0] is None else key[e[0]][1],
                )
            )
            for gv, r, d in entries:
                if gv is None:
                    sg.add_root(d)
                else:
                    sg.add_edge(gv, r, d)
        else:
            for gv, r, d in g.edges:
                sg.add_edge(gv, r, d)
            for d in g.roots:
                sg.add_root(d)
        return sg

    def soft_copy(self) -> SemGraph:
        """``makeSoftCopy``: the same edges added in this graph's edge order, one root only."""
        sg = SemGraph.__new__(SemGraph)
        sg.graph, sg.index, sg.order_key, sg.hash = (
            self.graph,
            self.index,
            self.order_key,
            self.hash,
        )
        sg.out, sg.inc, sg._out_cap = {}, {}, {}
        sg.vertices, sg._vertex_cap, sg.roots, sg._root_cap, sg._seq = {}, 16, {}, 16, 0
        first = self.first_root()
        if first is not None:
            sg.roots[first] = None  # setRoot: in the root set, not yet a vertex
        for gv, r, d in self.edge_list():
            sg.add_edge(gv, r, d)
        return sg

    def write_back(self) -> None:
        """Store the edges (in the order they were added) and roots (in set order) in the
        DepGraph this graph was built from."""
        edges = [(s, gv, r, d) for gv, m in self.out.items() for d, es in m.items() for r, s in es]
        edges.sort()
        self.graph.edges = [[gv, r, d] for _, gv, r, d in edges]
        self.graph.roots = self.root_order()

    # mutation (DirectedMultiGraph.add / removeEdge, the root set) ---------------------------
    def add_vertex(self, v: int) -> None:
        if v not in self.vertices:
            self.vertices[v] = None
            if len(self.vertices) > self._vertex_cap * 3 // 4:
                self._vertex_cap *= 2
            self.out[v], self.inc[v] = {}, {}
            self._out_cap[v] = 16

    def add_edge(self, gov: int, rel: str, dep: int) -> None:
        if gov not in self.vertices:
            self.add_vertex(gov)
        if dep not in self.vertices:
            self.add_vertex(dep)
        self._seq += 1
        out = self.out[gov]
        es = out.get(dep)
        if es is None:
            es = out[dep] = []
            if len(out) > self._out_cap[gov] * 3 // 4:
                self._out_cap[gov] *= 2
        es.append((rel, self._seq))
        self.inc[dep].setdefault(gov, []).append(rel)

    def remove_edge(self, gov: int, rel: str, dep: int) -> bool:
        """Removes the first such edge; a pair left without edges leaves the maps."""
        es = self.out.get(gov, {}).get(dep)
        k = next((k for k, e in enumerate(es or ()) if e[0] == rel), None)
        if k is None:
            return False
        del es[k]
        if not es:
            del self.out[gov][dep]
        back = self.inc[dep][gov]
        back.remove(rel)
        if not back:
            del self.inc[dep][gov]
        return True

    def add_root(self, v: int) -> None:
        self.add_vertex(v)
        self.add_to_roots(v)

    def add_to_roots(self, v: int) -> None:
        if v not in self.roots:
            self.roots[v] = None
            self._root_cap = _grow(self._root_cap, len(self.roots))

    # iteration orders -----------------------------------------------------------------------
    def _hash_order(self, keys, capacity: int) -> list[int]:
        mask, h = capacity - 1, self.hash
        return sorted(keys, key=lambda v: (h[v] ^ (h[v] >> 16)) & mask)

    def vertex_order(self) -> list[int]:
        """``vertexSet()``."""
        return self._hash_order(self.vertices, self._vertex_cap)

    def root_order(self) -> list[int]:
        """``getRoots()``."""
        return self._hash_order(self.roots, self._root_cap)

    def first_root(self) -> int | None:
        roots = self.root_order()
        return roots[0] if roots else None

    def out_edges(self, v: int) -> list[tuple[str, int]]:
        """``outgoingEdgeIterable(v)`` as ``(relation, dependent)`` pairs."""
        out = self.out.get(v)
        if not out:
            return []
        return [(r, d) for d in self._hash_order(out, self._out_cap[v]) for r, _ in out[d]]

    def in_edges(self, v: int) -> list[tuple[int, str]]:
        """The incoming edges as ``(governor, relation)`` pairs, in no particular order (SPICE
        only tests for them, removes them all, or sorts them)."""
        return [(g, r) for g, rels in self.inc.get(v, {}).items() for r in rels]

    def children(self, v: int) -> list[int]:
        """``getChildren(v)``: the dependents, in map order."""
        return self._hash_order(self.out.get(v, ()), self._out_cap.get(v, 16))

    def child_list(self, v: int) -> list[int]:
        """``getChildList(v)``: the dependents by position."""
        return sorted(self.out.get(v, ()), key=self.order_key.__getitem__)

    def children_with_rel(self, v: int, rel: str) -> list[int]:
        """``getChildrenWithReln``: a new hash set filled in edge order, iterated."""
        kids = dict.fromkeys(d for r, d in self.out_edges(v) if r == rel)
        return self._hash_order(kids, _grow(16, len(kids)))

    def child_with_rel(self, v: int, rel: str) -> int | None:
        """``getChildWithReln``: the first such dependent in edge order."""
        return next((d for r, d in self.out_edges(v) if r == rel), None)

    def edge_list(self) -> Iterator[tuple[int, str, int]]:
        """``edgeIterable()``: vertex by vertex in map order."""
        for v in self.vertex_order():
            for r, d in self.out_edges(v):
                yield v, r, d

    def sorted_edges(self, v: int, outgoing: bool) -> list[tuple[int, str, int]]:
        """``getOutEdgesSorted`` / ``getIncomingEdgesSorted``: by governor, dependent, name."""
        if outgoing:
            edges = [(v, r, d) for r, d in self.out_edges(v)]
        else:
            edges = [(g, r, v) for g, r in self.in_edges(v)]
        key = self.order_key
        return sorted(edges, key=lambda e: (key[e[0]], key[e[2]], e[1]))

    def node_by_index(self, index: int) -> int | None:
        """``getNodeByIndexSafe``: the first vertex, in map order, at that 1-based position."""
        return next((v for v in self.vertex_order() if self.index[v] == index), None)

    def parent(self, v: int) -> int | None:
        """``getParent``: the first parent, by position, from which parents lead to a root
        without revisiting a node of the path; none for a root."""
        if v in self.roots:
            return None
        used = [v]
        for p in self._parents_by_position(v, used):
            if self._reaches_root(p, used):
                return p
        return None

    def _parents_by_position(self, v: int, used: list[int]) -> list[int]:
        return sorted(
            (p for p in self.inc.get(v, ()) if p not in used), key=self.order_key.__getitem__
        )

    def _reaches_root(self, v: int, used: list[int]) -> bool:
        if v in self.roots:
            return True
        used.append(v)
        try:
            return any(self._reaches_root(p, used) for p in self._parents_by_position(v, used))
        finally:
            used.pop()

    def find_order(self) -> list[int]:
        """The nodes in the order semgrex's ``find()`` tries them: CoreNLP's topological sort
        (reverse post-order of a depth-first walk, vertices and children in map order), or the
        vertex map's order when the graph has a cycle."""
        order: list[int] = []
        state: dict[int, bool] = {}  # False while on the walk's stack, True when finished
        for start in self.vertex_order():
            if start in state:
                continue
            state[start] = False
            stack = [(start, iter(self.out_edges(start)))]
            while stack:
                v, it = stack[-1]
                for _, d in it:
                    done = state.get(d)
                    if done:
                        continue
                    if done is False:
                        return self.vertex_order()
                    state[d] = False
                    stack.append((d, iter(self.out_edges(d))))
                    break
                else:
                    stack.pop()
                    state[v] = True
                    order.append(v)
        order.reverse()
        return order
