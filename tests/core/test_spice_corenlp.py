"""CoreNLP's stages around the parse, composed, against the SPICE jar.

Given the jar's own tags and basic tree (the parse's output), CoreNLP's re-tokenization,
lemmas, CC-processing, SceneGraphParser's enhancements and SpiceParser's rules must give
exactly the jar's proposed tuples, in order (golden: tests/core/spice_golden.py).
"""

from __future__ import annotations

import pytest

from capeval_core.spice.corenlp import (
    basic_graph,
    corenlp_words,
    jar_order,
    sentence_tuples,
    tree_of,
)
from tests.core.spice_golden import oracle_captions


def _basic_of(sentence):
    """The golden's basic tree as the parser's output: heads (root: itself) and labels."""
    basic = sentence.graphs["basic"]
    return tree_of(len(sentence.words), basic["edges"], basic["roots"])


def test_jar_trees_give_the_jar_tuples_through_every_later_stage():
    differ = []
    for caption in oracle_captions():
        tuples = []
        for k, sentence in enumerate(caption.sentences):
            heads, deps = _basic_of(sentence)
            g = basic_graph(sentence.words, sentence.tags, heads, deps)
            assert [t.lemma for t in g.tokens] == list(sentence.lemmas)
            tuples += sentence_tuples(g, k)
        jar = jar_order(caption.tuples)
        if tuples != jar:
            differ.append((caption.annotation_id, tuples, jar))
    assert len(oracle_captions()) == 3000
    assert differ == []


def test_a_jar_graph_becomes_heads_and_labels_and_a_word_without_a_head_is_refused():
    edges = [[2, "det", 1], [2, "nmod", 4], [4, "case", 3]]  # "a dog on grass"
    assert tree_of(4, edges, [2]) == ([1, 1, 3, 1], ["det", "ROOT", "case", "nmod"])
    with pytest.raises(ValueError, match="word 3 of 4 has no head"):
        tree_of(4, [e for e in edges if e[2] != 3], [2])


def test_the_jar_writes_a_relation_with_its_object_before_its_relation():
    jar = [["man"], ["man", "tall"], ["man", "kite", "fly"]]
    assert jar_order(jar) == [("man",), ("man", "tall"), ("man", "fly", "kite")]
    assert jar_order(jar_order(jar)) == [tuple(t) for t in jar]


def test_corenlp_tokens_of_every_golden_caption():
    for caption in oracle_captions():
        assert corenlp_words(caption.text) == [w for s in caption.sentences for w in s.words]


def test_the_stage_check_tool_flags_each_stage_that_differs():
    from tools.spice_oracle.check_stages import check

    caption = oracle_captions()[0]
    record = {
        "caption": caption.text,
        "sentences": [
            {
                "tokens": [list(t) for t in zip(s.words, s.tags, s.lemmas, strict=True)],
                "basic": s.graphs["basic"],
            }
            for s in caption.sentences
        ],
        "tuples": [list(t) for t in caption.tuples],
    }
    assert check(record) == []
    assert check(record | {"caption": caption.text + " again"}) == ["tokens"]
    assert check(record | {"tuples": record["tuples"][::-1]}) == ["tuples"]
    first = record["sentences"][0]["tokens"][0]
    first[2] = first[2] + "x"
    assert check(record) == ["lemmas"]


def test_brackets_in_a_lower_case_caption_keep_corenlps_names():
    # spice-1.0.jar with CoreNLP 3.6.0 (tools/spice_oracle/SpiceOracle.java) tokenizes
    # "a dog [ brown ] on a { mat }" so
    assert corenlp_words("a dog [ brown ] on a { mat }") == [
        "a", "dog", "-LSB-", "brown", "-RSB-", "on", "a", "-LCB-", "mat", "-RCB-",
    ]  # fmt: skip


def test_each_corenlp_sentence_of_a_caption_is_parsed_alone():
    """As the jar does: two sentences are two trees (each with its root), the second's tuples
    numbered as CoreNLP's second sentence; a caption as coco-caption feeds SPICE stays one."""
    from capeval_core.spice import stanford_pcfg
    from capeval_core.spice.pcfg.ud import basic_dependencies

    parser = stanford_pcfg.load_pipeline()
    given: list[list[str]] = []

    class Recording:
        def parse(self, words, progress=None):
            given.append(list(words))
            return parser.parse(words, progress=progress)

    texts = ["A dog runs. A cat sleeps!", "a man riding a wave on a surfboard", ""]
    got = stanford_pcfg.parse_texts(Recording(), texts, 64)
    assert given == [
        ["A", "dog", "runs", "."],
        ["A", "cat", "sleeps", "!"],
        ["a", "man", "riding", "a", "wave", "on", "a", "surfboard"],
    ]
    first, second = given[0], given[1]
    expected = [
        *sentence_tuples(basic_graph(first, *basic_dependencies(parser.parse(first))), 0),
        *sentence_tuples(basic_graph(second, *basic_dependencies(parser.parse(second))), 1),
    ]
    assert list(got[0]) == expected and got[2] == ()
    assert len(got) == len(texts)
