"""SpiceParser's tuple rules (metric-spec §6.1 step 4) against spice-1.0.jar.

Reference tuples: the stage golden file (``tests/golden/spice-oracle-train.json.gz``), made by
``tools/spice_oracle`` from spice-1.0.jar with Stanford CoreNLP 3.6.0 on 3,000 COCO train2014
captions. SpiceParser's proposed tuples are an ordered list (the scene-graph merging depends on
the order), so they are compared as lists, duplicates included; the jar writes relations as
(subject, object, relation).
"""

from __future__ import annotations

import pytest

from capeval_core.spice.corenlp import jar_order
from capeval_core.spice.depgraph import DepGraph, Token
from capeval_core.spice.enhancement import enhance
from capeval_core.spice.rules import extract_tuples
from tests.core.spice_golden import oracle_captions


@pytest.fixture(scope="module")
def golden():
    return oracle_captions()


def _differing(golden, stage: str) -> list[int]:
    differ = []
    for cap in golden:
        got = []
        for k, s in enumerate(cap.sentences):
            g = s.graph(stage)
            if stage == "ccprocessed":
                enhance(g, k)
            got += extract_tuples(g, k)
        if jar_order(got) != list(cap.tuples):
            differ.append(cap.annotation_id)
    return differ


def test_golden_tuples_from_the_jars_enhanced_graphs(golden):
    # spice-1.0.jar + CoreNLP 3.6.0: its enhanced graph in, its proposed tuples out
    differ = _differing(golden, "enhanced")
    assert not differ, f"{len(differ)} of {len(golden)} captions differ, e.g. {differ[:5]}"


def test_golden_tuples_from_the_jars_cc_processed_graphs(golden):
    # the jar's CC-processed graph through capeval's enhancements and rules
    differ = _differing(golden, "ccprocessed")
    assert not differ, f"{len(differ)} of {len(golden)} captions differ, e.g. {differ[:5]}"


def test_golden_tuples_are_not_in_position_order(golden):
    # the tests above check the order, not only the tuples: in the jar's lists, objects
    # follow semgrex's walk of the graph, not sentence positions, and some repeat
    def out_of_order(cap) -> bool:
        lemmas = [lemma.lower() for lemma in cap.sentences[0].lemmas]
        objects = [t[0] for t in cap.tuples if len(t) == 1]
        if len(cap.sentences) > 1 or any(lemmas.count(o) != 1 for o in objects):
            return False
        positions = [lemmas.index(o) for o in objects]
        return positions != sorted(positions)

    unordered = [c for c in golden if out_of_order(c)]
    repeated = [c for c in golden if len(set(c.tuples)) < len(c.tuples)]
    assert len(unordered) > 1000
    assert len(repeated) > 50


def _graph(words, lemmas, tags, edges, roots) -> DepGraph:
    toks = [Token(*x) for x in zip(words, lemmas, tags, strict=True)]
    return DepGraph(toks, [list(e) for e in edges], roots)


def test_every_match_is_a_tuple():
    # semgrex yields one match per edge combination: two copulas give the pair twice
    g = _graph(
        ["man", "is", "is", "tall"],
        ["man", "be", "be", "tall"],
        ["NN", "VBZ", "VBZ", "JJ"],
        [(3, "nsubj", 0), (3, "cop", 1), (3, "cop", 2)],
        [3],
    )
    assert extract_tuples(g) == [("man", "tall"), ("man", "tall"), ("man", "tall"), ("man",)]


def test_numbers_of_the_first_match_per_predicate():
    # the plural-subject patterns run with findNextMatchingNode, one match per predicate: of
    # "two dogs and three cats chase mice" only the first subject gets its number
    g = _graph(
        ["two", "dogs", "and", "three", "cats", "chase", "mice"],
        ["two", "dog", "and", "three", "cat", "chase", "mouse"],
        ["CD", "NNS", "CC", "CD", "NNS", "VBP", "NNS"],
        [
            (1, "nummod", 0),
            (5, "nsubj", 1),
            (1, "cc", 2),
            (4, "nummod", 3),
            (1, "conj:and", 4),
            (5, "nsubj", 4),
            (5, "dobj", 6),
        ],
        [5],
    )
    tuples = extract_tuples(g)
    assert ("dog", "two") in tuples
    assert ("cat", "three") not in tuples
