"""CoreNLP 3.6.0's lemmas in pure Python (:mod:`capeval_core.spice.morphology`).

Reference lemmas come from CoreNLP 3.6.0's ``MorphaAnnotator`` (the lemma annotator SPICE
1.0 runs), through ``tools/spice_oracle`` (``MorphologyOracle.java``): the stage golden file
for every (word, tag) of 3,000 COCO train2014 captions, the cases below, and, where Java and
the jars are present, a live comparison on a seeded random sample.
"""

from __future__ import annotations

import random

import pytest

from capeval_core.errors import InputError, ResourceError
from capeval_core.spice import morphology
from capeval_core.spice.morphology import Morphology, Tables, lemma, lemmas
from tests.core.spice_golden import oracle_captions

# (word, tag) -> lemma, as CoreNLP 3.6.0's MorphaAnnotator gives it (tools/spice_oracle)
CASES = [
    (("dogs", "NNS"), "dog"),
    (("Dogs", "NNS"), "dog"),
    (("dogs", "NN"), "dogs"),  # the noun analysis needs a character after NN
    (("Dogs", "NNP"), "Dogs"),  # proper nouns are kept as written
    (("Dogs", "NNPS"), "Dogs"),
    (("Dogs", "JJ"), "dogs"),  # other tags are lower-cased only
    (("dogs", "NNp"), "dog"),  # ... and only an upper-case P makes a proper noun
    (("Dogs", "nnp"), "dog"),
    (("dogs", "vb"), "dog"),
    (("MICE", "NN"), "mice"),
    (("Mice", "NNS"), "mouse"),
    (("saw", "VBD"), "see"),
    (("saw", "NN"), "saw"),
    (("stopped", "VBD"), "stop"),  # an undoubling stem
    (("blopped", "VBD"), "blopp"),  # not one: the consonant stays doubled
    (("running", "VBG"), "run"),
    (("firemen", "NNS"), "fireman"),
    (("children", "NNS"), "child"),
    (("grand-children", "NNS"), "grand-child"),  # the part after a hyphen is analysed
    (("ice-creams", "NNS"), "ice-cream"),
    (("CAT-Dogs", "NNS"), "cat-dog"),
    (("dogs-cats", "NNS"), "dogs-cat"),
    (("--cats", "NNS"), "--cat"),
    (("cat-", "NNS"), "cat-_NNS"),  # a final hyphen: CoreNLP appends the tag
    (("cat--", "NNS"), "cat--_NNS"),
    (("-", "NNS"), "-_NNS"),
    (("re-", "VB"), "re-_VB"),
    (("re-used-car", "VBD"), "re-use"),  # a rule spanning the hyphen wins, the rest is lost
    (("dogs.", "NNS"), "dog."),
    (("them", "PRP"), "they"),
    (("THEM", "PRP"), "they"),
    (("Him", "PRP"), "he"),
    (("her", "PRP$"), "she"),
    (("Me", "PRP"), "I"),
    (("I", "PRP"), "I"),
    (("i", "PRP"), "i"),
    (("i", "PRP$"), "i"),
    (("I", "NNP"), "I"),
    (("an", "DT"), "a"),
    (("AN", "DT"), "a"),
    (("An", "ADD"), "a"),
    (("is", "VBZ"), "be"),
    (("IS", "VBZ"), "be"),
    (("'s", "POS"), "'s"),
    (("'s", "VBZ"), "be"),
    (("hers", "PRP"), "hers"),
    (("better", "JJR"), "better"),
    (("best", "JJS"), "best"),
    (("faster", "RBR"), "faster"),
    (("went", "VB"), "go"),
    (("ran_up", "VBD"), "run_up"),  # phrasal verb: verb, underscore, particle
    (("set_up", "VBD"), "set_up"),
    (("ran_up", "VB"), "run_up"),
    (("ran_UP", "VBD"), "ran_up"),  # not a particle: one word
    (("ran_xx", "VBD"), "ran_xx"),
    (("ran_up", "V"), "ran_up"),  # phrasal verbs need a VB tag
    (("ran_", "VBD"), "ran_"),
    (("a__up", "VBD"), "a__up"),
    (("_up", "VBD"), "_VBD_up"),
    (("", "NN"), "_NN"),
    (("a b", "NNS"), "a b"),
    (("x\u1cf0y", "NN"), "x\u1cf0y"),
    (("x\u1cf0y_z", "NN"), "x_y_z"),  # CoreNLP's stand-in for "_" is restored too
    (("a\u0085b", "NN"), "\u0085"),  # the lexer stops at a line separator
]


@pytest.mark.parametrize(("pair", "expected"), CASES, ids=[f"{w}/{t}" for (w, t), _ in CASES])
def test_cases(pair, expected):
    assert lemma(*pair) == expected


def test_golden_every_pair():
    """Every (word, tag) of the golden file's 3,000 captions gets CoreNLP's lemma."""
    pairs = {}
    for caption in oracle_captions():
        for s in caption.sentences:
            for w, t, lem in zip(s.words, s.tags, s.lemmas, strict=True):
                pairs.setdefault((w, t), lem)
    assert len(pairs) > 3000
    wrong = [(w, t, want, lemma(w, t)) for (w, t), want in pairs.items() if lemma(w, t) != want]
    assert wrong == []


def test_batch_matches_single():
    tokens = [("children", "NNS"), ("sitting", "VBG"), ("an", "DT"), ("children", "NNS")]
    assert lemmas(tokens) == [lemma(w, t) for w, t in tokens] == ["child", "sit", "a", "child"]


def test_general_rules_without_tables():
    """The general rules alone: regular forms right, irregular ones wrong (hence the tables)."""
    bare = Morphology(Tables())
    assert bare.lemma("boxes", "NNS") == "box"
    assert bare.lemma("cities", "NNS") == "city"
    assert bare.lemma("making", "VBG") == "make"
    assert bare.lemma("stopped", "VBD") == "stopp"  # the undoubling stems are data
    assert bare.lemma("children", "NNS") == "children"
    assert bare.lemma("leaves", "NNS") == "leave"  # CoreNLP lists "leaf"
    assert Morphology(Tables(undouble=frozenset({"stop"}))).lemma("stopped", "VBD") == "stop"


def test_listed_hyphenated_word_starts_a_longer_one():
    """CoreNLP 3.6.0 gives "hoop-la" for hoop-lamses/NNS: its listed "hoop-la" is a rule that
    beats splitting at the hyphen, and the rest of the word is lost."""
    m = Morphology(Tables(noun={"hoop-la": "hoop-la"}))
    assert m.lemma("hoop-lamses", "NNS") == "hoop-la"
    assert Morphology(Tables()).lemma("hoop-lamses", "NNS") == "hoop-lams"


def test_lower_cases_as_java_17():
    """CoreNLP lower-cases with Java's toLowerCase, which on Java 17 (Unicode 13.0) keeps the
    capitals whose lower case Unicode 14 added (Python 3.11 lowers them), and makes a capital
    sigma final by the JDK's word rules (checked against OpenJDK 17.0.15:
    tests/core/test_java_lower.py)."""
    m = Morphology(Tables())
    assert m.lemma("DOG\u2c2fS", "NNS") == "dog\u2c2fs"  # Python's lower: "dog\u2c5fs"
    assert m.lemma("\ua7c0BC", "JJ") == "\ua7c0bc"
    assert m.lemma("\u039f\u0394\u039f\u03a33-WAY", "JJ") == "\u03bf\u03b4\u03bf\u03c23-way"


def test_tables_round_trip():
    t = Tables(
        noun={"children": "child"},
        verb={"ran": "run"},
        pair={("them", "PRP"): "they", ("i", "PRP"): None},
        undouble=frozenset({"stop"}),
    )
    assert morphology.read_tables(morphology.write_tables(t).splitlines()) == t


def test_shipped_tables():
    shipped = morphology.default_morphology().tables
    assert len(shipped.noun) + len(shipped.verb) + len(shipped.pair) > 1_000
    assert "stop" in shipped.undouble
    assert shipped.pair[("i", "PRP")] is None  # "I" is kept as written


def test_bad_table_line_names_the_line():
    with pytest.raises(ResourceError, match=r"line 2: unexpected record 'nounx"):
        morphology.read_tables(["# comment", "nounx\ta\tb"])


@pytest.mark.parametrize("tag", ["", None])
def test_bad_tag(tag):
    with pytest.raises(InputError):
        lemma("dogs", tag)


# -- the live oracle -----------------------------------------------------------------------
_SUFFIXES = (
    "s es ies ed ied ing ying men wives i ae ata ia la zes sses ses oes ses ches shes ves ing "
    "led lled ored ated eated ting tting ning nning ping pping ged gging ued uing ings ers "
    "est er ly itis hedra zoa s. .s."
)
_TAGS = "NN NNS NNS NNS NNP NNPS VB VBD VBG VBN VBP VBZ VBZ VBG VBD JJ JJR JJS RB IN DT PRP"
_ONSETS = "b c d f g h j k l m n p r s t v w z bl br ch cl cr dr fl gr pl pr sh sk sl sn st"
_VOWELS = "a e i o u ai ea ee oo ou y"
_CODAS = "b c d f g k l m n p r s t v x z ck ll nd ng nt rr ss st tt"


def random_pairs(rng: random.Random, n: int) -> list[tuple[str, str]]:
    """Made-up words with real suffixes (hyphens, capitals, phrasal verbs among them) and
    real caption words, each with a random tag."""
    real = sorted({w for c in oracle_captions() for s in c.sentences for w in s.words})
    onsets, vowels, codas = _ONSETS.split(), _VOWELS.split(), [*_CODAS.split(), ""]
    suffixes, tags = _SUFFIXES.split(), _TAGS.split()
    out = []
    for _ in range(n):
        syllables = rng.randint(1, 3)
        stem = "".join(rng.choice(onsets) + rng.choice(vowels) for _ in range(syllables))
        word = stem + rng.choice(codas) + rng.choice(suffixes)
        roll = rng.random()
        if roll < 0.25:
            word = rng.choice(real)
        elif roll < 0.35:
            word = rng.choice(real) + "-" + word
        elif roll < 0.4:
            word = word.capitalize()
        elif roll < 0.43:
            word = word.upper()
        tag = rng.choice(tags)
        if rng.random() < 0.03:
            word, tag = word + "_" + rng.choice(["up", "down", "out", "off"]), "VBD"
        out.append((word, tag))
    return out


@pytest.mark.slow
def test_live_oracle_random_sample():
    """A seeded random sample, mostly words in no table, against CoreNLP itself."""
    from tools import spice_oracle

    reason = spice_oracle.available()
    if reason is not None:
        pytest.skip(reason)
    pairs = random_pairs(random.Random(13), 20_000)
    shipped = morphology.default_morphology().tables
    unlisted = [
        (w, t) for w, t in pairs if w.lower() not in shipped.noun and w.lower() not in shipped.verb
    ]
    assert len(unlisted) > 15_000
    expected = spice_oracle.lemmas(pairs)
    got = lemmas(pairs)
    wrong = [(p, e, g) for p, e, g in zip(pairs, expected, got, strict=True) if e != g]
    assert wrong == []
