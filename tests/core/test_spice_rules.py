"""SPICE tuple rules 1-12 and enhancements (metric-spec §6.1, §6.3) on the spacy-sm parser.

Expected tuples are written from the spec (subject, relation, object order); a test checks
that they are among the extracted tuples, so parser noise elsewhere does not break it.
"""

from __future__ import annotations

import pytest

from capeval_core.spice.enhancement import enhance
from capeval_core.spice.parse import PARSERS, CaptionParser
from capeval_core.spice.rules import extract_tuples
from capeval_core.spice.spacy_sm import to_ud_graph
from tests.conftest import fresh_python

# caption -> tuples that must be extracted (rule or enhancement in the comment)
CASES: list[tuple[str, set[tuple[str, ...]]]] = [
    ("a man riding a horse", {("man", "ride", "horse")}),  # 2 acl + lemma fix
    ("a man is riding a horse", {("man", "ride", "horse")}),  # 1
    ("a man is sitting on a bench", {("man", "sit on", "bench")}),  # 1 with nmod:on
    ("a man picks up a ball", {("man", "pick up", "ball")}),  # 1 with compound:prt
    ("a cat is on a table", {("cat", "on", "table")}),  # 3 copular + case
    ("a dog is next to a car", {("dog", "next to", "car")}),  # 3 copular + mwe case
    ("a dog next to a car", {("dog", "next to", "car")}),  # 6 multiword preposition
    ("a man in front of a building", {("man", "in front of", "building")}),  # 6, 3-word
    ("a plane flying out of a cloud", {("plane", "fly out of", "cloud")}),  # 2 + out_of
    ("the sky is blue", {("sky", "blue")}),  # 3 copular attribute / 5
    ("the man is a doctor", {("man", "doctor")}),  # 3 copular noun predicate
    ("a red bus", {("bus", "red")}),  # 4 amod
    ("a red and white bus", {("bus", "red"), ("bus", "white")}),  # 4 + conj propagation
    ("a bowl of fruit", {("bowl", "of", "fruit")}),  # 6 nmod:of
    ("a man's hat", {("man", "have", "hat")}),  # 7 possessive
    ("a kite is flown by a boy", {("boy", "fly", "kite")}),  # 8 passive agent
    ("two dogs", {("dog", "two"), ("dog",)}),  # 9 nummod
    ("three cats sleeping on two beds", {("cat", "three"), ("bed", "two")}),  # 9
    ("2 dogs", {("dog", "2")}),  # 9 digits stay digits
    ("a bunch of bananas", {("banana", "a")}),  # enhancement (a) + 9 qmod
    ("lots of people", {("people", "lot")}),  # enhancement (b) + 9
    ("two of the dogs", {("dog", "two")}),  # enhancement (c) + 9
    ("tennis racket", {("racket", "tennis")}),  # 10 compound
    ("a man and a woman riding horses", {("man", "ride", "horse"), ("woman", "ride", "horse")}),
    ("a woman holding her umbrella", {("woman", "have", "umbrella")}),  # pronoun resolution
    ("a cat licking its paw", {("cat", "have", "paw")}),  # pronoun (singular)
    ("there is a dog on the table", {("dog", "on", "table")}),  # expletive
    ("a man sitting and reading a book", {("man", "read", "book")}),  # conj acl propagation
    ("a black dog", {("dog",), ("dog", "black")}),  # 12 object
    ("people skiing down a hill", {("people", "ski down", "hill")}),  # 2 + lemma
    ("a boy hiding behind a tree", {("boy", "hide behind", "tree")}),  # lemma "hide"
]


CAPTIONS = [c for c, _ in CASES] + ["tennis racket", "a dog running"]
#: the parsers built on spaCy pipelines (stanford-pcfg is CoreNLP's PCFG and needs the user's
#: models jar: tests/core/test_spice_pcfg.py)
SPACY_PARSERS = ("spacy-sm", "stanford-emulation")


@pytest.fixture(scope="module")
def parsed_by():
    """Each parser's tuples of the rule sentences, parsed in this process."""
    return {
        name: CaptionParser(name, cache=False, n_process=1).parse(CAPTIONS)
        for name in SPACY_PARSERS
    }


@pytest.fixture(scope="module")
def parsed(parsed_by):
    return parsed_by["spacy-sm"]


@pytest.mark.parametrize(("caption", "expected"), CASES, ids=[c for c, _ in CASES])
def test_rule_tuples(parsed, caption, expected):
    got = set(parsed[caption])
    assert expected <= got, f"missing {expected - got}; got {sorted(got)}"


def test_compound_parts_are_not_objects(parsed):
    # rule 10 remembers both words; rule 12 then skips them
    assert ("racket",) not in parsed["tennis racket"]
    assert ("tennis",) not in parsed["tennis racket"]


def test_rule_11_does_not_fire():
    # "a man and a woman" with a relation on "man" only: SPICE 1.0 does not copy it to "woman"
    g = to_ud_graph(
        ["man", "and", "woman", "near", "car"],
        ["man", "and", "woman", "near", "car"],
        ["NN", "CC", "NN", "IN", "NN"],
        ["ROOT", "cc", "conj", "prep", "pobj"],
        [0, 0, 0, 0, 3],
    )
    enhance(g)
    tuples = extract_tuples(g)
    assert ("man", "near", "car") in tuples
    assert ("woman", "near", "car") not in tuples


def test_qmod_graph_shape():
    g = to_ud_graph(
        ["a", "bunch", "of", "bananas"],
        ["a", "bunch", "of", "banana"],
        ["DT", "NN", "IN", "NNS"],
        ["det", "ROOT", "prep", "pobj"],
        [1, 1, 1, 2],
    )
    enhance(g)
    assert g.roots == [3]
    assert ("bananas", "det:qmod", "a") in g.as_triples()
    assert ("banana", "a") in extract_tuples(g)


def test_number_after_noun_is_ignored():
    # rule 9: the nummod must precede the noun ("number 5" gives nothing)
    g = to_ud_graph(["rooms", "5"], ["room", "5"], ["NNS", "CD"], ["ROOT", "nummod"], [0, 0])
    assert ("room", "5") not in extract_tuples(g)


def test_relation_strings_keep_particle_space():
    # rule 1 with lemma "be" and a particle: the predicate is " <particle>" (leading space)
    g = to_ud_graph(
        ["man", "is", "up", "tree"],
        ["man", "be", "up", "tree"],
        ["NN", "VBZ", "RP", "NN"],
        ["nsubj", "ROOT", "prt", "dobj"],
        [1, 1, 1, 1],
    )
    assert ("man", " up", "tree") in extract_tuples(g)


def test_lemma_fixes():
    from capeval_core.spice.spacy_sm import Lemmatizer

    lem = Lemmatizer(
        {
            "exc": {"verb": {"flown": ["fly"]}},
            "index": {"verb": frozenset({"rid", "ride", "sit", "sing", "singe", "park"})},
            "rules": {"verb": [["ing", ""], ["ing", "e"], ["ed", ""]]},
        }
    )
    assert lem("riding", "VBG") == "ride"
    assert lem("sitting", "VBG") == "sit"
    assert lem("singing", "VBG") == "sing"
    assert lem("flown", "VBN") == "fly"
    assert lem("parked", "VBD") == "park"


@pytest.mark.parametrize("name", SPACY_PARSERS)
def test_parallel_parse_equals_in_process(parsed_by, name, monkeypatch):
    """Large batches are split between this process and spawned workers (chunks claimed by
    cancelling their queued future): every caption is parsed once, to the same tuples."""
    import capeval_core.spice.parse as sp

    monkeypatch.setattr(sp, "PARALLEL_MIN", 8)
    monkeypatch.setattr(sp, "MIN_CHUNK", 3)
    parser = CaptionParser(name, cache=False, n_process=2)
    here: list[str] = []
    tuples_of = parser.tuples_of

    def counted(texts):
        here.extend(texts)
        return tuples_of(texts)

    parser.tuples_of = counted
    captions = CAPTIONS
    got = parser.parse(captions)
    assert got == {c: parsed_by[name][c] for c in captions}
    # the first chunks are queued to the worker before this process can claim them
    assert 0 < len(set(captions) - set(here)) < len(captions)
    assert len(here) == len(set(here))  # no caption parsed twice here


def test_spacy_import_leaves_torch_importable():
    """spaCy is imported with PyTorch hidden (thinc would import it); torch still imports
    afterwards where it is installed."""
    import importlib.util

    if importlib.util.find_spec("torch") is None:
        pytest.skip("PyTorch is not installed")
    code = (
        "import sys\n"
        "from capeval_core.spice.spacy_sm import load_spacy_model\n"
        "load_spacy_model()\n"
        "assert 'torch' not in sys.modules\n"
        "import torch\n"
        "print(torch.tensor([1, 2]).sum().item())\n"
    )
    stdout = fresh_python(code)
    assert stdout.strip() == "3"


def test_every_parser_but_the_pcfg_is_a_spacy_pipeline():
    assert set(PARSERS) - set(SPACY_PARSERS) == {"stanford-pcfg"}


@pytest.mark.parametrize("name", SPACY_PARSERS)
def test_parser_multiplies_with_numpy_blas_to_the_same_tuples(parsed_by, name):
    """Every layer of each loaded model uses numpy's BLAS (spacy_runtime.MATMUL), and the
    tuples equal those of thinc's default blis ops on the rule sentences."""
    from thinc.api import NumpyOps

    from capeval_core.spice.parse import model_identity
    from capeval_core.spice.spacy_runtime import MATMUL

    parser = CaptionParser(name, cache=False, n_process=1)
    parser._load()
    nodes = [node for _, comp in parser.model[0].pipeline for node in comp.model.walk()]
    assert nodes and all(not node.ops.use_blis for node in nodes)
    assert MATMUL in model_identity(name)
    numpy_ops, blis = nodes[0].ops, NumpyOps(use_blis=True)
    captions = [c for c, _ in CASES]
    try:  # the loaded pipeline is shared by this thread's parsers: put its ops back after
        for node in nodes:
            node.ops = blis
        got = dict(zip(captions, parser.tuples_of(captions), strict=True))
    finally:
        for node in nodes:
            node.ops = numpy_ops
    assert got == {c: parsed_by[name][c] for c in captions}


@pytest.mark.parametrize("name", ["stanford-pcfg", "stanford-emulation"])
def test_parsers_of_one_thread_share_the_loaded_model(name):
    """Each SPICE metric instance makes its own parser; within a thread they share one loaded
    model (a scoring worker scores SPICE in several parts), other threads load their own."""
    import threading

    first, second = CaptionParser(name, cache=False), CaptionParser(name, cache=False)
    assert first.model is second.model
    other: list = []
    thread = threading.Thread(target=lambda: other.append(CaptionParser(name, cache=False).model))
    thread.start()
    thread.join()
    assert other and other[0] is not first.model
