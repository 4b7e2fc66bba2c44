"""SceneGraphParser's enhancements (metric-spec §6.1 step 3) against spice-1.0.jar.

Reference graphs: the stage golden file (``tests/golden/spice-oracle-train.json.gz``), made by
``tools/spice_oracle`` from spice-1.0.jar with Stanford CoreNLP 3.6.0 on 3,000 COCO train2014
captions: the jar's CC-processed graph of each caption in, the graph SpiceParser's rules read
out. The other tests pin the CoreNLP 3.6.0 behaviours the enhancements depend on (Java 8+
``HashMap`` iteration, ``SemanticGraph.getParent``) on small graphs.
"""

from __future__ import annotations

import pytest

from capeval_core.spice.depgraph import DepGraph, Token
from capeval_core.spice.enhancement import _integer_map_order, enhance
from capeval_core.spice.semgraph import SemGraph
from tests.core.spice_golden import oracle_captions


def _roots(g: DepGraph) -> list[str]:
    return [g.label(r) for r in g.roots]


@pytest.fixture(scope="module")
def golden():
    return {c.annotation_id: c for c in oracle_captions()}


def _enhanced(caption, k=0) -> DepGraph:
    g = caption.sentences[k].graph("ccprocessed")
    enhance(g, k)
    return g


def test_golden_enhanced_graphs_are_the_jars(golden):
    # spice-1.0.jar + CoreNLP 3.6.0: every caption's edges and roots after the enhancements
    differ = []
    for cap in golden.values():
        for k, s in enumerate(cap.sentences):
            got, want = _enhanced(cap, k), s.graph("enhanced")
            if got.labelled_edges() != want.labelled_edges() or _roots(got) != _roots(want):
                differ.append(cap.annotation_id)
    assert not differ, f"{len(differ)} of {len(golden)} captions differ, e.g. {differ[:5]}"


def test_golden_exercises_the_enhancements(golden):
    # the test above means something: the jar changes the graph of 541 golden captions
    changed = [
        c
        for c in golden.values()
        if c.sentences[0].graphs["ccprocessed"] != c.sentences[0].graphs["enhanced"]
    ]
    qmods = [
        c
        for c in changed
        if any(e[1] == "det:qmod" for e in c.sentences[0].graphs["enhanced"]["edges"])
    ]
    assert len(changed) > 500
    assert len(qmods) > 100


def test_quantity_word_takes_every_earlier_dependent(golden):
    # "covered in lots of cheese": "lots of" joins all of the quantity word's earlier
    # dependents, so "in" heads the multiword (spice-1.0.jar, annotation 504667)
    g = _enhanced(golden[504667])
    words = [t.word for t in g.tokens]
    qmod = [(words[gv], words[d]) for gv, r, d in g.edges if r == "det:qmod"]
    assert qmod == [("cheese", "in")]
    mwe = sorted(words[d] for gv, r, d in g.edges if r == "mwe" and words[gv] == "in")
    assert mwe == ["lots", "of"]


def test_pronoun_can_resolve_to_its_own_governor(golden):
    # "a living room with different furniture and items in it": "it" resolves to "room", its
    # governor, and the jar keeps the edge as a loop (annotation 614055)
    g = _enhanced(golden[614055])
    words = [t.word for t in g.tokens]
    loops = [(words[a], r) for a, r, b in g.edges if a == b]
    assert loops == [("room", "nmod:in")]


def test_root_pronoun_stays(golden):
    # "a stop light with a street sign next to it": the pronoun heads the sentence, and
    # getParent of a root is null, so the resolver skips it (spice-1.0.jar, annotation 732423)
    cap = golden[732423]
    g = _enhanced(cap)
    assert [g.tokens[r].word for r in g.roots] == ["it"]
    assert g.labelled_edges() == cap.sentences[0].graph("ccprocessed").labelled_edges()


def _graph(n: int, edges: list[tuple[int, str, int]], roots: list[int]) -> DepGraph:
    toks = [Token(f"w{i + 1}", f"w{i + 1}", "NN") for i in range(n)]
    return DepGraph(toks, [list(e) for e in edges], roots)


def test_children_come_in_java_hash_map_order():
    # CoreNLP 3.6.0 keys a node's children by IndexedWord (hash = 1-based index) in a HashMap
    # of 16 buckets: index 17 (bucket 1) comes before index 5
    g = _graph(20, [(0, "nmod:on", 4), (0, "nmod:near", 16)], [0])
    sg = SemGraph.build(g)
    assert [d for _, d in sg.out_edges(0)] == [16, 4]
    # 13 children grow the map to 32 buckets: back in position order
    many = [(0, "dep", d) for d in range(1, 13)] + [(0, "nmod:near", 16)]
    sg = SemGraph.build(_graph(20, many, [0]))
    assert [d for _, d in sg.out_edges(0)] == [*range(1, 13), 16]


def test_graph_is_built_in_typed_dependency_order():
    # CoreNLP 3.6.0 sorts a sentence's typed dependencies (dependent position, governor
    # position, relation name) and adds them in that order: a copy of token 3 whose edge name
    # sorts first enters the child map (same bucket as token 3) first
    g = _graph(4, [(0, "nmod:to", 2)], [0])
    copy = g.add_copy(2)
    g.edges.append([0, "nmod:from", copy])
    assert SemGraph.build(g, typed_order=True).out_edges(0) == [("nmod:from", copy), ("nmod:to", 2)]
    # otherwise g.edges is the order the edges were added
    assert SemGraph.build(g).out_edges(0) == [("nmod:to", 2), ("nmod:from", copy)]


def test_find_order_is_a_topological_sort_unless_cyclic():
    # semgrex's find(): reverse post-order of CoreNLP's depth-first walk
    g = _graph(4, [(1, "det", 0), (1, "nmod:on", 3), (3, "case", 2)], [1])
    assert SemGraph.build(g).find_order() == [1, 3, 2, 0]
    # a cycle makes the sort throw; semgrex then walks the vertex map
    g.edges.append([3, "dep", 1])
    assert SemGraph.build(g).find_order() == [0, 1, 2, 3]


def test_parent_is_the_first_parent_with_a_path_to_a_root():
    # getParent: node 3's parents by position are 1 and 2; only 2 leads to the root 0
    g = _graph(4, [(0, "dep", 2), (2, "dep", 3), (1, "dep", 3), (3, "dep", 1)], [0])
    sg = SemGraph.build(g)
    assert sg.parent(3) == 2
    assert sg.parent(0) is None


def test_pronouns_resolve_in_integer_hash_map_order():
    # SimplePronounResolution's HashMap<Integer, Integer>(1): 2 entries, 4 buckets
    assert _integer_map_order([3, 6]) == [6, 3]
    assert _integer_map_order([2, 5, 9]) == [5, 9, 2]
    assert _integer_map_order([4]) == [4]
