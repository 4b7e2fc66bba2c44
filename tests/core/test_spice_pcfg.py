"""The PCFG stage (``capeval_core/spice/pcfg``): CoreNLP 3.6.0's English PCFG without Java.

Java's hash-map order against OpenJDK's own, the unknown-word signatures against CoreNLP's, the
chart against brute force on a toy grammar; with the grammar the package ships, the compiled
chart against the numpy reference (bit for bit) and the jar's trees of the stage golden's
3,000 train2014 captions, on every clean clone. Where the CoreNLP 3.6.0 models jar is at hand
(``tools/spice_oracle``'s cache or ``$CAPEVAL_CORENLP_MODELS``), the shipped arrays against the
jar's grammar and the grammar's rule orders against Java's (slow).
"""

from __future__ import annotations

import itertools
import math
import os

import numpy as np
import pytest

from capeval_core.errors import MissingResourceError
from capeval_core.spice.pcfg import grammar as G
from capeval_core.spice.pcfg.cky import Chart, extract
from capeval_core.spice.pcfg.javahash import iteration_order
from capeval_core.spice.pcfg.lexicon import Lexicon, signature
from capeval_core.spice.pcfg.trees import parser_output, read_tree

# --- Java's HashMap order --------------------------------------------------------------------

# Integer keys put in this order into `new HashMap<>(64)`, and the map's keySet() order, printed
# by OpenJDK 17.0.15 (java.util.HashMap): 30 keys in one bucket (a red-black tree from the 9th
# on), then 40 keys with 12 in one bucket among others.
JAVA_IN_1 = [325, 1221, 965, 69, 1541, 1797, 709, 1413, 581, 1157, 389, 197, 133, 901, 453,
             1477, 1669, 1285, 1093, 5, 773, 645, 1349, 1861, 261, 517, 837, 1605, 1733,
             1029]  # fmt: skip
JAVA_OUT_1 = [965, 325, 1221, 1157, 1093, 1029, 69, 5, 197, 261, 133, 1541, 1797, 1861, 1669,
              1733, 1605, 709, 645, 901, 837, 773, 1413, 1285, 1349, 1477, 581, 389, 453,
              517]  # fmt: skip
JAVA_IN_2 = [875555, 786437, 975370, 196618, 2359341, 983046, 717638, 784636, 401220, 93760,
             328218, 882967, 908762, 589824, 1021508, 485932, 2162728, 626376, 1769490, 393231,
             812241, 108421, 686, 292762, 628442, 623766, 651300, 1572881, 654481, 462650, 410817,
             108109, 230632, 904319, 1376284, 1966103, 747859, 808134, 547978, 1179675]  # fmt: skip
JAVA_OUT_2 = [93760, 626376, 401220, 547978, 975370, 108421, 410817, 1572881, 786437, 196618,
              2359341, 983046, 1376284, 1179675, 589824, 2162728, 1769490, 1966103, 393231,
              808134, 1021508, 717638, 108109, 628442, 908762, 654481, 747859, 882967, 812241,
              292762, 328218, 623766, 485932, 230632, 651300, 875555, 686, 904319, 784636,
              462650]  # fmt: skip


@pytest.mark.parametrize(("keys", "order"), [(JAVA_IN_1, JAVA_OUT_1), (JAVA_IN_2, JAVA_OUT_2)])
def test_hash_map_order_is_openjdks(keys, order):
    assert iteration_order(keys, keys, 64) == order


# --- unknown-word signatures -------------------------------------------------------------------

# (word, position) -> signature, printed by CoreNLP 3.6.0's EnglishUnknownWordModel.getSignature
# with englishPCFG.ser.gz loaded (unknown-word level 2)
CORENLP_SIGNATURES = {
    ("frisbees", 1): "UNK-LCs", ("Frisbee", 0): "UNK-INITe", ("Frisbee", 1): "UNK-UCe",
    ("FRISBEE", 0): "UNK-ALLCe", ("x-ray", 1): "UNK-LC-DASHy", ("4", 1): "UNK-NUM",
    ("4th", 0): "UNK-LC-DIG", ("2x4", 1): "UNK-LC-DIG", ("a", 1): "UNK-LC", ("abc", 0): "UNK-LC",
    ("abcd", 1): "UNK-LCd", ("e-mail", 0): "UNK-LC-DASHl", ("3-d", 1): "UNK-LC-DASH-DIG",
    ("ÉCOLE", 1): "UNK-ALLCe", ("über", 0): "UNK-LCr", ("ǅemal", 0): "UNK-INITl",
    ("ǅemal", 1): "UNK-UCl", ("--", 0): "UNK-DASH", ("a1b2", 1): "UNK-LC-DIG",
    ("123456", 0): "UNK-NUM", ("TV", 1): "UNK-ALLC",
}  # fmt: skip


def test_unknown_word_signatures_are_corenlps():
    assert {k: signature(*k) for k in CORENLP_SIGNATURES} == CORENLP_SIGNATURES


# --- the unary closure as CoreNLP builds it ----------------------------------------------------


def test_unary_closure_combines_rules_in_the_order_they_come_and_does_not_revise():
    f = np.float32
    # 1 -> 2 first, then 2 -> 3 makes 1 -> 3 (-3); 1 -> 2 is not improved later, but add a
    # better 0 -> 2 after 2 -> 3: 0 -> 3 is made from it then (-1.5)
    rules = [(1, 2, f(-1.0)), (2, 3, f(-2.0)), (0, 2, f(-0.5)), (0, 1, f(-0.25))]
    by_parent, closed = G.unary_closure(rules, 4)
    assert sorted(by_parent) == sorted(rules)
    best = {(p, c): s for p, c, s in closed}
    assert best[(1, 3)] == f(-3.0)
    assert best[(0, 3)] == f(-2.5)  # 0 -> 2 -> 3, or 0 -> 1 -> 2 -> 3 = -3.25: the max
    assert best[(0, 2)] == f(-0.5)  # direct beats 0 -> 1 -> 2 (-1.25)
    assert all(p != c for p, c, _ in closed)


# --- the chart on a toy grammar, against brute force ---------------------------------------------

STATES = ["ROOT", "S", "NP", "VP", "DT", "NN", "VBZ", "NNS", "@S", ".$$."]
TAGS = ["DT", "NN", "VBZ", "NNS", ".$$."]
BINARY = [  # (parent, left, right, log-probability)
    ("ROOT", "S", ".$$.", 0.0),
    ("ROOT", "NP", ".$$.", -2.0),
    ("S", "NP", "VP", -0.3),
    ("S", "NP", "@S", -1.1),
    ("@S", "VP", "NP", -0.4),
    ("NP", "DT", "NN", -0.5),
    ("NP", "DT", "NNS", -0.9),
    ("NP", "NP", "NP", -2.5),
    ("VP", "VBZ", "NP", -0.7),
]
UNARY = [("NP", "NN", -1.2), ("NP", "NNS", -0.6), ("VP", "VBZ", -0.8), ("S", "VP", -2.0)]
COUNTS = {  # (word, tag): count; every word seen over 100 times, so only these tags
    ("a", "DT"): 500, ("the", "DT"): 600, ("dog", "NN"): 300, ("dog", "VBZ"): 20,
    ("runs", "VBZ"): 200, ("runs", "NNS"): 150, ("cats", "NNS"): 400, ("sees", "VBZ"): 250,
    (".$.", ".$$."): 1000,
}  # fmt: skip


def toy_grammar() -> G.Grammar:
    s = {name: i for i, name in enumerate(STATES)}
    t = {name: i for i, name in enumerate(TAGS)}
    words = {w: i for i, w in enumerate(sorted({w for w, _ in COUNTS}))}
    seen: dict[tuple[int, int], float] = {}
    for (w, tag), c in COUNTS.items():
        for key in ((words[w], t[tag]), (words[w], G.NULL), (G.NULL, t[tag]), (G.NULL, G.NULL)):
            seen[key] = seen.get(key, 0.0) + c
    by_parent, closed = G.unary_closure([(s[p], s[c], np.float32(x)) for p, c, x in UNARY], 10)
    word_tags: dict[int, list[int]] = {}
    for w, tag in COUNTS:
        word_tags.setdefault(words[w], []).append(t[tag])
    arr = np.array
    return G.Grammar(
        stamp="toy",
        states=tuple(STATES),
        tags=tuple(TAGS),
        words=words,
        tag_state=arr([s[x] for x in TAGS], dtype=np.int32),
        b_parent=arr([s[r[0]] for r in BINARY], dtype=np.int32),
        b_left=arr([s[r[1]] for r in BINARY], dtype=np.int32),
        b_right=arr([s[r[2]] for r in BINARY], dtype=np.int32),
        b_score=arr([r[3] for r in BINARY], dtype=np.float32),
        u_parent=arr([r[0] for r in by_parent], dtype=np.int32),
        u_child=arr([r[1] for r in by_parent], dtype=np.int32),
        u_score=arr([r[2] for r in by_parent], dtype=np.float32),
        c_parent=arr([r[0] for r in closed], dtype=np.int32),
        c_child=arr([r[1] for r in closed], dtype=np.int32),
        c_score=arr([r[2] for r in closed], dtype=np.float32),
        seen=seen,
        unseen={(G.NULL, G.NULL): 1.0, (G.NULL, t["NN"]): 1.0},
        word_tags={w: tuple(ts) for w, ts in word_tags.items()},
        open_tags=(t["NN"],),
        lexicon_tags=tuple(range(len(TAGS))),
        smooth=(1.0, 0.2),
        smooth_threshold=100,
        unknown_level=2,
    )


def brute_force(g: G.Grammar, words: list[str]) -> tuple[float, str]:
    """Every derivation of ROOT over ``words`` + the boundary, scored in float64."""
    lex = Lexicon(g)
    seq = [*words, G.BOUNDARY_WORD]
    binary = [(r[0], r[1], r[2], r[3]) for r in BINARY]
    unary = {(p, c): x for p, c, x in UNARY}

    def derive(state: str, i: int, j: int, depth: int = 0) -> list[tuple[float, str]]:
        out = []
        if j - i == 1 and state in TAGS:
            score = lex.score(lex.word_id(seq[i]), TAGS.index(state), i, seq[i])
            if score > -np.inf:
                out.append((float(score), f"({state} {seq[i]})"))
        for p, left, right, x in binary:
            if p != state:
                continue
            for m in range(i + 1, j):
                for (a, ta), (b, tb) in itertools.product(derive(left, i, m), derive(right, m, j)):
                    out.append((x + a + b, f"({state} {ta} {tb})"))
        if depth < 3:
            for (p, c), x in unary.items():
                if p == state:
                    out += [(x + a, f"({state} {t})") for a, t in derive(c, i, j, depth + 1)]
        return out

    return max(derive("ROOT", 0, len(seq)))


@pytest.mark.parametrize(
    "words",
    [["a", "dog"], ["dog", "runs"], ["the", "dog", "runs"], ["a", "dog", "sees", "the", "cats"],
     ["the", "cats", "runs", "a", "dog"], ["cats", "sees", "dog", "runs"]],
)  # fmt: skip
def test_the_chart_finds_the_best_derivation(words):
    g = toy_grammar()
    chart = Chart(g, Lexicon(g), words)
    score, tree = brute_force(g, words)
    assert math.isclose(float(chart.best_score), score, rel_tol=1e-6)
    assert str(extract(chart)) == tree


def test_a_tie_is_read_back_as_the_first_split_and_rule_in_the_grammars_order():
    # "cats cats cats": NP NP NP -> (NP (NP NP) NP) or (NP NP (NP NP)): the same three float
    # scores summed in double in another order, an exact tie; CoreNLP's k-best search keeps
    # the first it tried, the leftmost split point
    g = toy_grammar()
    chart = Chart(g, Lexicon(g), ["cats", "cats", "cats"])
    tree = extract(chart)
    np_np = tree.children[0]
    assert np_np.label == "NP" and len(np_np.children[0].leaves()) == 1


def test_a_sentence_the_grammar_cannot_parse_is_parsed_again_with_every_tag():
    g = toy_grammar()
    chart = Chart(g, Lexicon(g), ["sees", "sees"])  # VBZ VBZ: no rule takes it
    assert chart.flooded and chart.has_parse()


def test_the_parser_output_drops_the_boundary_and_the_annotations():
    binary = read_tree(
        "(ROOT (S^ROOT (NP-TMP^S (DT^NP a) (@NP| (NN^NP day))) (VP^S (VBZ^VP runs))) (.$$. .$.))"
    )
    tree = parser_output(binary, ["a", "day", "goes"], ".$$.", ".$.")
    assert str(tree) == "(ROOT (S (NP-TMP (DT a) (NN day)) (VP (VBZ goes))))"


# --- the models jar --------------------------------------------------------------------------


def test_a_missing_models_jar_says_how_to_provide_it(tmp_path, monkeypatch):
    monkeypatch.setenv(G.MODELS_ENV, str(tmp_path / "nothing.jar"))
    with pytest.raises(MissingResourceError, match="not a file"):
        G.models_jar()
    monkeypatch.delenv(G.MODELS_ENV)
    monkeypatch.setattr("capeval_core.resources.pycocoevalcap_dir", lambda: tmp_path)
    with pytest.raises(MissingResourceError, match=r"Maven Central.*CAPEVAL_CORENLP_MODELS"):
        G.models_jar()


@pytest.fixture(scope="module")
def real_grammar():
    """CoreNLP 3.6.0's grammar as the package ships it (no jar, no Java)."""
    return G.load_grammar()


@pytest.fixture(scope="module")
def jar_grammar():
    """CoreNLP's grammar read from the models jar, where one is at hand (slow tests only)."""
    from tools.spice_oracle import use_models_jar

    before = os.environ.get(G.MODELS_ENV)
    jar = use_models_jar()
    if jar is None:
        pytest.skip(
            f"no CoreNLP 3.6.0 models jar: set ${G.MODELS_ENV}, or fetch the oracle "
            "(`python -m tools.spice_oracle fetch`)"
        )
    yield G.load_grammar(jar)
    if before is None:
        os.environ.pop(G.MODELS_ENV, None)


def test_the_shipped_grammar_loads_and_says_where_it_came_from(real_grammar):
    source = G.shipped_source()
    # edu.stanford.nlp:stanford-corenlp:3.6.0:models as Maven Central serves it (SHA-256 of
    # the jar and of englishPCFG.ser.gz in it, recorded by tools/spice_pcfg_grammar.py)
    assert source["jar_sha256"] == (
        "d285157bd7887ee3018094b5dbae092e49088b023361ccdb550ee1daf9b2c9bd"
    )
    assert source["stamp"] == G.GRAMMAR_3_6_0 == real_grammar.stamp
    assert "GPL-3.0-or-later" in source["licence"]
    # the sizes CoreNLP 3.6.0's englishPCFG reports (stateIndex, tagIndex, wordIndex, rules)
    g = real_grammar
    assert (len(g.states), len(g.tags), len(g.words)) == (12977, 614, 48050)
    assert (len(g.b_parent), len(g.u_parent), len(g.c_parent)) == (46091, 3135, 12905)


def test_a_damaged_shipped_grammar_is_refused_with_one_clear_line(tmp_path, monkeypatch):
    import shutil

    from capeval_core.errors import ResourceError

    arrays, record = G.shipped_paths()
    shutil.copy(record, tmp_path / record.name)
    (tmp_path / arrays.name).write_bytes(arrays.read_bytes()[:-10] + b"0123456789")
    monkeypatch.setattr(
        G, "shipped_paths", lambda: (tmp_path / arrays.name, tmp_path / record.name)
    )
    G.shipped_source.cache_clear()
    try:
        with pytest.raises(ResourceError, match="does not match its recorded checksum"):
            G.read_shipped()
        (tmp_path / arrays.name).unlink()
        G.shipped_source.cache_clear()
        with pytest.raises(MissingResourceError, match="missing from the installed package"):
            G.read_shipped()
    finally:
        G.shipped_source.cache_clear()


@pytest.mark.slow
def test_the_shipped_grammar_is_the_jars(real_grammar, jar_grammar):
    from tools.spice_pcfg_grammar import same_grammar

    assert same_grammar(real_grammar, jar_grammar) == []


def test_each_tag_has_a_state_of_its_own(real_grammar):
    """A word's tag scores go into its chart cell in one assignment, which needs no two tags
    on one state."""
    states = real_grammar.tag_state[real_grammar.tag_state >= 0]
    assert len(np.unique(states)) == len(states) > 0


def test_a_words_tag_scores_at_once_are_each_tags_score(real_grammar):
    """The lexicon scores a word's tags on arrays (:meth:`Lexicon._scores`); each must be
    :meth:`Lexicon.score`'s float32, bit for bit, for every tag: frequent, rare and unknown
    words, every unknown-word signature shape, at the sentence's start and after it."""
    lexicon = Lexicon(real_grammar)
    g = real_grammar
    frequent = [w for w in ("a", "dog", "is", "the", "on", "of") if w in g.words]
    rare = [
        word
        for word, w in itertools.islice(g.words.items(), 0, 60000, 1500)
        if lexicon.known(w) and g.seen.get((w, G.NULL), 0.0) <= g.smooth_threshold
    ][:12]
    unknown = ["frisbees", "Frisbee", "FRISBEE", "x-ray", "4", "4x4", "qzv", "Zzyzx-9"]
    assert len(frequent) == 6 and len(rare) >= 8
    tags = range(len(g.tags))
    differ = []
    for word in [*frequent, *rare, *unknown]:
        w = lexicon.word_id(word)
        for loc in (0, 3):
            at_once = lexicon._scores(w, tags, loc, word)
            one_by_one = [lexicon.score(w, t, loc, word) for t in tags]
            bits = np.array(at_once, dtype=np.float32).view(np.int32)
            if not np.array_equal(bits, np.array(one_by_one, dtype=np.float32).view(np.int32)):
                differ.append((word, loc))
    assert differ == []


def test_the_compiled_chart_is_the_numpy_charts_bit_for_bit(real_grammar):
    """Every cell of every span, as float32 bits, in both compiled layouts (dense, for short
    sentences, and sparse, for long ones), on the stage golden's first 100 captions (and once
    more with every tag flooded, CoreNLP's recovery parse)."""
    from capeval_core.spice.pcfg.parser import americanize
    from tests.core.spice_golden import oracle_captions

    lexicon = Lexicon(real_grammar)
    sentences = [s.words for c in oracle_captions()[:100] for s in c.sentences]
    differ = []
    for words in sentences:
        w = [americanize(x) for x in words]
        b = Chart(real_grammar, lexicon, w, kernel="numpy")
        for layout in ("dense", "sparse"):
            a = Chart(real_grammar, lexicon, w, layout=layout)
            if a.cells.keys() != b.cells.keys() or any(
                not np.array_equal(a.cells[k].view(np.int32), b.cells[k].view(np.int32))
                for k in a.cells
            ):
                differ.append((layout, words))
    assert len(sentences) >= 100 and differ == []
    # the recovery parse: every tag of every word at CoreNLP's flood score
    flooded = []
    for kernel, layout in (("numpy", None), ("compiled", "dense"), ("compiled", "sparse")):
        words = ["a", "dog", "on", "a", "mat"]
        chart = Chart(real_grammar, lexicon, words, kernel=kernel, layout=layout)
        chart.flooded, chart.cells = True, {}
        chart._fill()
        flooded.append(chart.cells)
    for cells in flooded[1:]:
        assert cells.keys() == flooded[0].keys()
        assert all(np.array_equal(cells[k].view(np.int32), flooded[0][k].view(np.int32))
                   for k in cells)  # fmt: skip


def test_a_long_sentences_chart_is_sparse_and_says_how_far_it_is(real_grammar):
    """Past DENSE_MAX_WORDS the compiled chart keeps each cell's live states only, reads back
    as dense cells, and reports its progress column by column up to 1."""
    from capeval_core.spice.pcfg.cky import DENSE_MAX_WORDS, SparseCells

    words = ("a man on a red bike rides past two dogs and a cat " * 4).split()[:48]
    assert len(words) > DENSE_MAX_WORDS
    heard: list[float] = []
    chart = Chart(real_grammar, Lexicon(real_grammar), words, progress=heard.append)
    assert isinstance(chart.cells, SparseCells)
    dense = Chart(real_grammar, Lexicon(real_grammar), words, layout="dense")
    assert chart.cells.keys() == dense.cells.keys()
    assert all(np.array_equal(chart.cells[k].view(np.int32), dense.cells[k].view(np.int32))
               for k in dense.cells)  # fmt: skip
    assert str(extract(chart)) == str(extract(dense))
    # a third of the dense chart's memory, or less
    assert chart.cells.nbytes() < len(dense.cells) * len(real_grammar.states) * 4 / 3
    assert len(heard) == len(words) + 1 and heard[-1] == 1.0 and heard == sorted(heard)


def test_a_caption_gets_the_sparse_chart_and_the_dense_charts_cells(real_grammar):
    """Past DENSE_MAX_WORDS, caption lengths included: the default chart is sparse, and its
    cells and tree are the dense chart's, bit for bit."""
    from capeval_core.spice.pcfg.cky import DENSE_MAX_WORDS, SparseCells

    words = ["a", "man", "in", "a", "red", "shirt", "rides", "a", "bike"]
    assert DENSE_MAX_WORDS < len(words) <= 10  # a caption's length
    chart = Chart(real_grammar, Lexicon(real_grammar), words)
    dense = Chart(real_grammar, Lexicon(real_grammar), words, layout="dense")
    assert isinstance(chart.cells, SparseCells) and not isinstance(dense.cells, SparseCells)
    assert all(np.array_equal(chart.cells[k].view(np.int32), dense.cells[k].view(np.int32))
               for k in dense.cells)  # fmt: skip
    assert str(extract(chart)) == str(extract(dense))


def test_the_state_ranking_is_cached_and_a_damaged_one_ranked_again(
    real_grammar, tmp_path, monkeypatch
):
    """The sparse chart's state order is read from the user cache after its first chart; a
    damaged or foreign file is discarded with one warning and ranked again."""
    import pickle
    import warnings

    from capeval_core.errors import DamagedCacheWarning
    from capeval_core.resources import dump_checked
    from capeval_core.spice.pcfg import cky

    monkeypatch.setenv("CAPEVAL_CACHE_DIR", str(tmp_path))
    ranking = cky._live_ranking(real_grammar)
    assert sorted(ranking.tolist()) == list(range(len(real_grammar.states)))
    assert np.array_equal(cky._cached_live_ranking(real_grammar), ranking)
    (path,) = tmp_path.glob("pcfg-live-ranking-*")

    def no_chart(g):  # type: ignore[no-untyped-def]
        raise AssertionError("ranked again")

    monkeypatch.setattr(cky, "_live_ranking", no_chart)
    assert np.array_equal(cky._cached_live_ranking(real_grammar), ranking)  # read back
    monkeypatch.setattr(cky, "_live_ranking", lambda g: ranking)
    for damage in ("bytes", "not a ranking"):
        if damage == "bytes":
            path.write_bytes(pickle.dumps(ranking))  # unchecked: not a capeval cache file
        else:
            dump_checked(np.zeros(len(ranking), dtype=np.int64), path)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            assert np.array_equal(cky._cached_live_ranking(real_grammar), ranking)
        assert [w.category for w in caught] == [DamagedCacheWarning]
        assert "PCFG state ranking" in str(caught[0].message)


@pytest.mark.slow
def test_the_real_grammars_unary_rules_come_in_corenlps_order(real_grammar, tmp_path):
    from tools import spice_oracle

    if reason := spice_oracle.available():
        pytest.skip(f"the oracle cannot run: {reason}")
    dump = tmp_path / "grammar.tsv"
    spice_oracle.java("edu.stanford.nlp.parser.lexparser.PcfgOracle", "grammar", str(dump))
    rows = [line.split("\t") for line in dump.read_text().splitlines()]
    g = real_grammar

    def bits(x) -> int:
        return int(np.float32(x).view(np.int32))

    mine = [
        (kind, int(p), int(c), bits(x))
        for kind, rules in (
            ("U", (g.u_parent, g.u_child, g.u_score)),
            ("C", (g.c_parent, g.c_child, g.c_score)),
        )
        for p, c, x in zip(*rules, strict=True)
    ]
    assert mine == [(k, int(p), int(c), int(b)) for k, p, c, b in rows]


#: the golden captions are parsed in this many parts, each a test of its own, so that the
#: test workers share the half minute of parsing
GOLDEN_PARTS = 3


@pytest.mark.parametrize("part", range(GOLDEN_PARTS))
def test_the_golden_captions_parse_to_the_jars_trees(real_grammar, part):
    """The jar's printed trees of the stage golden's 3,000 train2014 captions, parsed live
    with the shipped grammar (no jar)."""
    from capeval_core.spice.pcfg.parser import PCFGParser
    from tests.core.spice_golden import oracle_captions

    parser = PCFGParser(real_grammar)
    assert len(oracle_captions()) == 3000  # every one is in one of the parts
    captions = oracle_captions()[part::GOLDEN_PARTS]
    differ = [
        (caption.annotation_id, s.tree)
        for caption in captions
        for s in caption.sentences
        if str(parser.parse(s.words)) != s.tree
    ]
    assert differ == []


def test_the_pcfg_parser_needs_no_models_jar(tmp_path, monkeypatch):
    from capeval_core.spice.corenlp import jar_order
    from capeval_core.spice.parse import CaptionParser

    monkeypatch.setenv(G.MODELS_ENV, str(tmp_path / "no-such.jar"))
    monkeypatch.setattr("capeval_core.resources.pycocoevalcap_dir", lambda: tmp_path)
    parser = CaptionParser("stanford-pcfg", cache=False, shipped=False, n_process=1)
    assert parser.model_id.startswith(f"stanford-pcfg-1/{G.GRAMMAR_3_6_0}/")
    # spice-1.0.jar with CoreNLP 3.6.0 (tools/spice_oracle's SpiceOracle.java) proposes these
    # tuples for this caption
    jar = [["mat", "red"], ["dog", "mat", "on"], ["dog"], ["mat"]]
    got = parser.parse(["a dog on a red mat"])["a dog on a red mat"]
    assert list(got) == jar_order(jar)


def test_the_golden_captions_give_the_jars_tuples(real_grammar):
    """End to end through the parse workers: the first 150 captions of the stage golden (enough
    for workers to start; every golden caption's tree is the jar's, tested above, and the
    jar's trees give its tuples, tested below)."""
    from capeval_core.spice.corenlp import jar_order
    from capeval_core.spice.parse import CaptionParser
    from tests.core.spice_golden import oracle_captions

    captions = oracle_captions()[:150]
    parser = CaptionParser("stanford-pcfg", cache=False, shipped=False, n_process=2)
    assert len(captions) >= parser.parallel_min  # parse workers start
    got = parser.parse(c.text for c in captions)
    differ = [c.annotation_id for c in captions if list(got[c.text]) != jar_order(c.tuples)]
    assert differ == []


def test_a_sentence_longer_than_the_jar_parses_gets_corenlps_fallback_tree():
    """Past JAR_MAX_WORDS the jar's chart does not fit in coco-caption's heap and CoreNLP
    gives the sentence a flat tree (every word XX under X): no parse is attempted."""
    from capeval_core.spice.pcfg.parser import JAR_MAX_WORDS, PCFGParser, fallback_tree

    parser = PCFGParser(toy_grammar())
    assert str(parser.parse(["a", "dog"])) == "(ROOT (NP (DT a) (NN dog)))"
    words = ["dog"] * (JAR_MAX_WORDS + 1)
    tree = parser.parse(words)
    assert str(tree) == str(fallback_tree(words)) and tree.label == "X"
    assert {t.label for t in tree.children} == {"XX"} and tree.leaves() == words


def test_the_jars_trees_convert_to_the_jars_basic_trees_and_tuples():
    """No CoreNLP needed: the stage golden's 3,000 phrase-structure trees (the jar's PCFG
    parses) through the UD conversion and every later stage give the jar's basic trees and
    its tuples, in order."""
    from capeval_core.spice.corenlp import basic_graph, jar_order, sentence_tuples, tree_of
    from capeval_core.spice.pcfg.ud import basic_dependencies
    from tests.core.spice_golden import oracle_captions

    basic_differ, tuples_differ = [], []
    for caption in oracle_captions():
        tuples = []
        for k, s in enumerate(caption.sentences):
            tags, heads, labels = basic_dependencies(read_tree(s.tree))
            basic = s.graphs["basic"]
            if (heads, labels) != tree_of(len(s.words), basic["edges"], basic["roots"]):
                basic_differ.append(caption.annotation_id)
            assert tags == list(s.tags)
            tuples += sentence_tuples(basic_graph(s.words, tags, heads, labels), k)
        if tuples != jar_order(caption.tuples):
            tuples_differ.append(caption.annotation_id)
    assert len(oracle_captions()) == 3000
    assert basic_differ == [] and tuples_differ == []


def test_a_models_jar_without_corenlp_360s_grammar_is_refused(tmp_path):
    import zipfile

    from capeval_core.errors import ResourceError

    not_a_zip = tmp_path / "a.jar"
    not_a_zip.write_text("no zip")
    other = tmp_path / "b.jar"
    with zipfile.ZipFile(other, "w") as zf:
        zf.writestr(G.GRAMMAR_MEMBER, b"another version's grammar")
    empty = tmp_path / "c.jar"
    with zipfile.ZipFile(empty, "w") as zf:
        zf.writestr("README", b"")
    with pytest.raises(ResourceError, match="no readable"):
        G.grammar_stamp(not_a_zip)
    with pytest.raises(ResourceError, match=r"another englishPCFG than CoreNLP 3\.6\.0's"):
        G.grammar_stamp(other)
    with pytest.raises(ResourceError, match="no readable"):
        G.grammar_stamp(empty)


@pytest.mark.slow
def test_a_damaged_grammar_cache_is_discarded_and_read_again(jar_grammar, tmp_path, monkeypatch):
    from capeval_core.errors import DamagedCacheWarning

    monkeypatch.setenv("CAPEVAL_CACHE_DIR", str(tmp_path))
    jar = G.models_jar()
    G.grammar_cache_path(jar).write_bytes(b"not a grammar")
    G.load_grammar.cache_clear()
    try:
        with pytest.warns(DamagedCacheWarning, match="PCFG grammar cache"):
            again = G.load_grammar(jar)
        assert again.states == jar_grammar.states
        assert np.array_equal(again.c_score, jar_grammar.c_score)
    finally:
        G.load_grammar.cache_clear()


# raw text as a library caller may pass it (coco-caption's PTB step removes the punctuation
# that ends sentences, so no COCO caption reaches SPICE with two): several CoreNLP sentences,
# brackets, capitals, abbreviations
RAW_TEXTS = (
    "A dog runs along the beach. A small cat sleeps on a red mat.",
    "Two men are playing chess in a park! One of them is smiling?",
    "The bus is yellow... It has a black stripe and three doors.",
    "A boy (in a blue shirt) throws a ball to Dr. Smith.",
    "Is this a kitchen? Yes, it has a stove, a sink and two windows.",
    "a woman holds an umbrella . the rain falls on the busy street",
    # odd words: accents, digits, symbols, URLs, emoji, other scripts, British spellings
    "A café with crème brûlée on the menu in Zürich.",
    "The 747 is landing at 5:30 pm on runway 27L.",
    "A man's 3-year-old son rides a 10-speed bike & eats 1/2 of a hot-dog.",
    "TWO DOGS PLAYING IN THE SNOW",
    "a colour photo of a grey cat in the centre of the theatre",
    'A sign reads "STOP" in big red letters; it\'s next to a [bracketed] {box}.',
    "A dog 🐶 on a couch with 一只猫 and a ½ pizza for €5.",
    "Visit http://example.com/photos?id=3 or mail john.doe@example.com about the bike.",
    "A train — red and white — leaves the station.Cows grazing.Sheep sleeping.",
    "An E.T. doll on a T.V. stand at O'Neill's pub on 42nd Street.",
)


@pytest.mark.slow
def test_raw_texts_of_several_sentences_give_the_jars_tuples(real_grammar, tmp_path):
    """The jar run on the texts now (its tokens, sentences and proposed tuples) against
    stanford-pcfg's, end to end from the raw text."""
    import json

    from capeval_core.spice.corenlp import corenlp_words, jar_order, sentences
    from capeval_core.spice.pcfg.parser import PCFGParser
    from capeval_core.spice.stanford_pcfg import caption_tuples
    from tools import spice_oracle

    if reason := spice_oracle.available():
        pytest.skip(f"the oracle cannot run: {reason}")
    out = tmp_path / "raw.jsonl"
    spice_oracle.parse([(str(k), text) for k, text in enumerate(RAW_TEXTS)], out)
    records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert sum(len(r["sentences"]) > 1 for r in records) >= 4
    parser = PCFGParser(real_grammar)
    for text, record in zip(RAW_TEXTS, records, strict=True):
        jar_sentences = [[t[0] for t in s["tokens"]] for s in record["sentences"]]
        assert sentences(corenlp_words(text)) == jar_sentences, text
        assert list(caption_tuples(parser, text)) == jar_order(record["tuples"]), text
