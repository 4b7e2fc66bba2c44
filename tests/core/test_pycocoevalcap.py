"""The pycocoevalcap drop-in (``capeval_core.pycocoevalcap``): the same API and the same
numbers as pycocoevalcap 1.2 with its jars, per-image SPICE on the right image.

Reference values: ``tests/golden/pycocoevalcap-coco300.json.gz``, written by
``python -m tools.pycocoevalcap_oracle golden --images 300`` (pycocoevalcap 1.2, Java 17,
CoreNLP 3.4.1's PTB tokenizer, meteor-1.5.jar, spice-1.0.jar with CoreNLP 3.6.0, no -cache);
equality is exact (``==``, NaN equal to NaN). The ``slow`` tests run pycocoevalcap itself
where Java and the jars are present (a temporary copy of the installed package: see
``tools/pycocoevalcap_oracle.py``).
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
import io
import json
import math
import re

import numpy as np
import pytest

from capeval_core.pycocoevalcap.bleu.bleu import Bleu
from capeval_core.pycocoevalcap.cider.cider import Cider
from capeval_core.pycocoevalcap.cider.cider_scorer import CiderScorer
from capeval_core.pycocoevalcap.eval import COCOEvalCap
from capeval_core.pycocoevalcap.meteor.meteor import Meteor
from capeval_core.pycocoevalcap.rouge.rouge import Rouge
from capeval_core.pycocoevalcap.spice.spice import JAR_CATEGORIES, Spice
from capeval_core.pycocoevalcap.tokenizer.ptbtokenizer import PTBTokenizer
from tools import pycocoevalcap_oracle as oracle

#: the lines COCOEvalCap itself prints (pycocotools' timings and the jars' own chatter aside)
OWN_LINE = re.compile(
    r"^(tokenization\.\.\.|setting up scorers\.\.\.|computing \w+ score\.\.\.|\{'testlen'.*"
    r"|ratio: .*|(Bleu_[1-4]|METEOR|ROUGE_L|CIDEr|SPICE): \d+\.\d{3})$"
)
SCORE_KEYS = ("pr", "re", "f", "fn", "numImages", "fp", "tp")


def same(a, b) -> bool:
    """Exact equality of nested JSON-like values, NaN equal to NaN."""
    if isinstance(a, dict) and isinstance(b, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return a == b


def own_lines(printed: str) -> list[str]:
    return [line for line in printed.splitlines() if OWN_LINE.match(line)]


@pytest.fixture(scope="module")
def golden():
    return oracle.read_golden()


@pytest.fixture(scope="module")
def client_run(golden, tmp_path_factory):
    """The client script, import line changed, on the golden's images: what it printed and
    the JSON it dumped."""
    folder = tmp_path_factory.mktemp("client")
    ann, res = oracle.write_coco_files(folder, golden["image_ids"], golden["captions"])
    printed = oracle.run_client(oracle.DROPIN_IMPORT, ann, res, folder / "out.json")
    return printed, json.loads((folder / "out.json").read_text(encoding="utf-8"))


# -- the API ------------------------------------------------------------------------------------

MIRRORED = [
    ("eval", "COCOEvalCap", ("__init__", "evaluate", "setEval", "setImgToEvalImgs", "setEvalImgs")),
    ("tokenizer.ptbtokenizer", "PTBTokenizer", ("tokenize",)),
    ("bleu.bleu", "Bleu", ("__init__", "compute_score", "method")),
    (
        "bleu.bleu_scorer",
        "BleuScorer",
        ("__init__", "cook_append", "__iadd__", "size", "copy", "compute_score"),
    ),
    (
        "cider.cider_scorer",
        "CiderScorer",
        ("__init__", "cook_append", "__iadd__", "size", "copy", "compute_score"),
    ),
    ("meteor.meteor", "Meteor", ("__init__", "compute_score", "method", "_stat", "_score")),
    ("rouge.rouge", "Rouge", ("__init__", "calc_score", "compute_score", "method")),
    ("cider.cider", "Cider", ("__init__", "compute_score", "method")),
    ("spice.spice", "Spice", ("float_convert", "compute_score", "method")),
]


def _parameters(func) -> list[tuple[str, object, object]]:
    return [(p.name, p.kind, p.default) for p in inspect.signature(func).parameters.values()]


@pytest.mark.parametrize(("module", "name", "methods"), MIRRORED)
def test_modules_classes_and_signatures_are_pycocoevalcaps(module, name, methods):
    theirs = getattr(importlib.import_module(f"pycocoevalcap.{module}"), name)
    ours = getattr(importlib.import_module(f"capeval_core.pycocoevalcap.{module}"), name)
    for method in methods:
        assert _parameters(getattr(ours, method)) == _parameters(getattr(theirs, method)), method
    if hasattr(theirs, "method"):
        assert ours.method(None) == theirs.method(None)  # self unused: a constant


# -- the acceptance script ----------------------------------------------------------------------


def test_client_script_prints_pycocoevalcaps_numbers(golden, client_run):
    printed, _ = client_run
    assert own_lines(printed) == own_lines(golden["printed"])
    assert len(own_lines(printed)) == 2 + 5 + 2 + 8 + 8  # progress, headers, Bleu's, twice


def test_client_script_dumps_pycocoevalcaps_values(golden, client_run):
    _, ours = client_run
    theirs = golden["client"]
    assert same(ours["overall"], theirs["overall"])
    assert list(ours["overall"]) == [
        "Bleu_1", "Bleu_2", "Bleu_3", "Bleu_4", "METEOR", "ROUGE_L", "CIDEr", "SPICE"
    ]  # fmt: skip
    assert list(ours["imgToEval"]) == list(theirs["imgToEval"])  # same images, same order
    for image, row in ours["imgToEval"].items():
        expected = dict(theirs["imgToEval"][image])
        # the deliberate difference: each image's own SPICE (the jar's, by image id)
        expected["SPICE"] = golden["spice_by_image"][image]
        assert list(row) == list(expected)
        for key in row:
            assert same(row[key], expected[key]), (image, key)


def test_reference_attaches_spice_to_other_images_when_ids_are_unsorted(golden, client_run):
    """pycocoevalcap's Spice returns the images in sorted id order and COCOEvalCap zips that
    list with params['image_id'] (the annotation file's order here, unsorted as COCO's): the
    k-th image gets the SPICE of the k-th smallest id. capeval gives each image its own."""
    _, ours = client_run
    ids = list(golden["client"]["imgToEval"])  # params['image_id'], as the script set it
    assert ids == [str(i) for i in golden["image_ids"]] != sorted(ids, key=int)
    by_sorted = dict(zip(ids, sorted(ids, key=int), strict=True))
    theirs = golden["client"]["imgToEval"]
    own = golden["spice_by_image"]
    wrong = [i for i in ids if not same(theirs[i]["SPICE"], own[i])]
    assert len(wrong) > len(ids) // 2
    assert all(same(theirs[i]["SPICE"], own[by_sorted[i]]) for i in ids)
    assert all(same(ours["imgToEval"][i]["SPICE"], own[i]) for i in ids)
    # the corpus SPICE is the same mean either way
    assert same(ours["overall"]["SPICE"], golden["client"]["overall"]["SPICE"])


# -- the scorers called directly ----------------------------------------------------------------


def _direct(inputs):
    gts, res = inputs["gts"], inputs["res"]
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        bleu = Bleu(4).compute_score(gts, res)
    score, scores = Rouge().compute_score(gts, res)
    c_score, c_scores = Cider().compute_score(gts, res)
    s_score, s_scores = Spice().compute_score(gts, res)
    return {
        "Bleu": list(bleu),
        "Bleu_verbose": printed.getvalue(),
        "METEOR": list(Meteor().compute_score(gts, res)),
        "ROUGE_L": [float(score), *map(float, scores)],
        "CIDEr": [float(c_score), *map(float, c_scores)],
        "SPICE": [float(s_score), s_scores],
    }


def test_scorers_called_directly_give_pycocoevalcaps_values(golden):
    """Token strings as users pass them: double and trailing spaces, an empty caption,
    punctuation left in, a no-break space inside a token, a tab."""
    ours = _direct(golden["scorer_inputs"])
    theirs = golden["scorers"]
    for key in ("Bleu", "Bleu_verbose", "METEOR", "ROUGE_L", "CIDEr", "SPICE"):
        assert same(json.loads(json.dumps(ours[key])), theirs[key]), key


@pytest.mark.parametrize("n", [1, 2, 4])
@pytest.mark.parametrize("verbose", [0, 1, 2])
def test_bleu_prints_and_returns_what_pycocoevalcap_does(golden, n, verbose):
    """pycocoevalcap's Bleu is Python: it runs here, on the golden's token strings."""
    from pycocoevalcap.bleu.bleu import Bleu as TheirBleu

    gts, res = golden["scorer_inputs"]["gts"], golden["scorer_inputs"]["res"]
    printed = []
    for scorer in (TheirBleu(n), Bleu(n)):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            returned = scorer.compute_score(gts, res, verbose=verbose)
        printed.append((out.getvalue(), returned))
    assert printed[0] == printed[1]


@pytest.mark.parametrize("option", [None, "closest", "shortest", "average"])
@pytest.mark.parametrize("verbose", [0, 1, 2])
@pytest.mark.parametrize("pairs", [1, 7])
def test_bleu_scorer_adds_pairs_and_scores_as_pycocoevalcaps(golden, option, verbose, pairs):
    """Code that adds pairs to pycocoevalcap's BleuScorer itself (news captioning, report
    generation, sentence-BLEU loops) failed to import it. pycocoevalcap 1.2's BleuScorer is
    Python: it runs here beside ours, on the golden's token strings, every option (None:
    average for one pair, closest for more), printed counts and the cached second call."""
    from pycocoevalcap.bleu.bleu_scorer import BleuScorer as TheirScorer

    from capeval_core.pycocoevalcap.bleu.bleu_scorer import BleuScorer

    gts, res = golden["scorer_inputs"]["gts"], golden["scorer_inputs"]["res"]
    got = []
    for cls in (TheirScorer, BleuScorer):
        scorer = cls(n=4)
        for i in list(gts)[:pairs]:
            scorer += (res[i][0], gts[i])
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            first = scorer.compute_score(option=option, verbose=verbose)
        got.append((out.getvalue(), first, scorer.compute_score(), scorer.size()))
    assert got[0] == got[1]


def test_bleu_scorers_merge_and_copy_as_pycocoevalcaps(golden):
    from pycocoevalcap.bleu.bleu_scorer import BleuScorer as TheirScorer

    from capeval_core.pycocoevalcap.bleu.bleu_scorer import BleuScorer

    gts, res = golden["scorer_inputs"]["gts"], golden["scorer_inputs"]["res"]
    ids = list(gts)
    got = []
    for cls in (TheirScorer, BleuScorer):
        a, b = cls(res[ids[0]][0], gts[ids[0]]), cls(n=4)
        for i in ids[1:4]:
            b += (res[i][0], gts[i])
        merged = a.copy()
        merged += b
        got.append((merged.size(), merged.compute_score(option="closest"), a.size()))
    assert got[0] == got[1]


def test_the_copy_of_a_scored_bleu_scorer_is_scored_afresh_as_pycocoevalcaps(golden):
    """The copy kept the scored scorer's cached corpus values, so its compute_score returned
    them alone and ``score, scores = copy.compute_score()`` failed to unpack."""
    from pycocoevalcap.bleu.bleu_scorer import BleuScorer as TheirScorer

    from capeval_core.pycocoevalcap.bleu.bleu_scorer import BleuScorer

    gts, res = golden["scorer_inputs"]["gts"], golden["scorer_inputs"]["res"]
    got = []
    for cls in (TheirScorer, BleuScorer):
        scorer = cls(n=4)
        for i in list(gts)[:4]:
            scorer += (res[i][0], gts[i])
        scorer.compute_score()
        got.append(scorer.copy().compute_score(option="closest"))
    assert got[0] == got[1]
    assert len(got[1]) == 2 and len(got[1][1]) == 4  # (corpus values, each pair's)


def test_cider_scorer_adds_pairs_and_scores_as_pycocoevalcaps(golden):
    """pycocoevalcap 1.2's CiderScorer is Python: it runs here beside ours."""
    from pycocoevalcap.cider.cider_scorer import CiderScorer as TheirScorer

    from capeval_core.pycocoevalcap.cider.cider_scorer import CiderScorer

    gts, res = golden["scorer_inputs"]["gts"], golden["scorer_inputs"]["res"]
    got = []
    for cls in (TheirScorer, CiderScorer):
        scorer = cls(n=4, sigma=6.0)
        for i in gts:
            scorer += (res[i][0], gts[i])
        other = cls(n=4, sigma=6.0)
        other += (res[next(iter(gts))][0], gts[next(iter(gts))])
        scorer += other
        score, scores = scorer.compute_score()
        got.append((scorer.size(), float(score), scores.tolist()))
    assert got[0][:1] == got[1][:1]
    assert got[0][1] == pytest.approx(got[1][1], rel=1e-12)
    np.testing.assert_allclose(got[0][2], got[1][2], rtol=1e-12)


class _OwnFrequencies(CiderScorer):
    """A corpus-IDF subclass as client code writes one for pycocoevalcap's scorer."""

    def __init__(self, df):
        super().__init__(n=4, sigma=6.0)
        self.document_frequency = df


class _OwnStep(CiderScorer):
    def compute_doc_freq(self):  # pycocoevalcap calls this step; capeval's has none
        pass


@pytest.mark.parametrize(
    "make",
    [lambda: _OwnFrequencies({("dog",): 1.0}), _OwnStep],
    ids=["document_frequency", "compute_doc_freq"],
)
def test_cider_scorer_refuses_document_frequencies_it_would_not_read(make):
    """pycocoevalcap 1.2's CiderScorer scores with frequencies a subclass sets (its
    compute_doc_freq adds the references' counts to them); capeval's took its own from the
    references and returned the plain scorer's numbers without a word."""
    scorer = make()
    scorer += ("a dog runs", ["a dog runs on the grass", "a brown dog"])
    with pytest.raises(NotImplementedError, match="register_reference_set"):
        scorer.compute_score()


@pytest.mark.parametrize(
    ("gts", "res"),
    [
        ({1: [""], 2: ["a cat"]}, {1: ["a dog"], 2: [""]}),
        ({1: ["a  dog runs", ""], 2: [" a cat"]}, {1: ["a dog\truns "], 2: ["a cat"]}),
        ({"x": ("a dog runs",), "y": ["a cat"]}, {"x": ["a dog"], "y": ["a cat"]}),
        ({1: ["a dog runs"]}, {1: ["a dog"]}),
    ],
)
def test_odd_token_strings_score_as_pycocoevalcaps_python_scorers(gts, res):
    """Empty captions, double spaces, tabs, a tuple of references (BLEU asserts a list), a
    single image: BLEU, ROUGE-L and CIDEr-D are Python in pycocoevalcap 1.2, so they run
    here beside ours, values and exceptions alike."""
    from pycocoevalcap.bleu.bleu import Bleu as TheirBleu
    from pycocoevalcap.cider.cider import Cider as TheirCider
    from pycocoevalcap.rouge.rouge import Rouge as TheirRouge

    def outcome(scorer):  # the values, or the exception's class where it raises
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                score, scores = scorer.compute_score(gts, res)
        except Exception as exc:
            return type(exc).__name__
        return np.asarray(score).tolist(), np.asarray(scores).tolist()

    for theirs, ours in ((TheirBleu(4), Bleu(4)), (TheirRouge(), Rouge()), (TheirCider(), Cider())):
        assert same(outcome(ours), outcome(theirs)), type(ours).__name__


def _outcome(call):
    """What a call returns and prints, or its exception's class and what it printed."""
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            got = call()
    except Exception as exc:
        return type(exc).__name__, out.getvalue()
    if isinstance(got, tuple):
        got = tuple(np.asarray(g).tolist() if isinstance(g, np.ndarray) else g for g in got)
    return got, out.getvalue()


@pytest.mark.parametrize("option", [None, "closest", "shortest", "average", "longest"])
@pytest.mark.parametrize("verbose", [0, 1, 2])
def test_bleu_of_no_pair_is_0_as_pycocoevalcaps(option, verbose):
    """An empty set (a training loop's empty batch): pycocoevalcap 1.2's BleuScorer returns
    zeros and prints its counts, and checks the option only per pair; capeval raised
    ValueError ("no pair was added")."""
    from pycocoevalcap.bleu.bleu import Bleu as TheirBleu
    from pycocoevalcap.bleu.bleu_scorer import BleuScorer as TheirScorer

    from capeval_core.pycocoevalcap.bleu.bleu_scorer import BleuScorer

    for n in (2, 4):
        theirs = _outcome(lambda n=n: TheirScorer(n=n).compute_score(option, verbose))
        ours = _outcome(lambda n=n: BleuScorer(n=n).compute_score(option, verbose))
        assert ours == theirs
        assert ours[0] == ([0.0] * n, [[]] * n)
    theirs = _outcome(lambda: TheirBleu(4).compute_score({}, {}, verbose=verbose))
    assert _outcome(lambda: Bleu(4).compute_score({}, {}, verbose=verbose)) == theirs


def test_bleu_scorer_asserts_an_unknown_option_as_pycocoevalcaps():
    """pycocoevalcap 1.2 asserts the option (AssertionError); capeval raised ValueError."""
    from pycocoevalcap.bleu.bleu_scorer import BleuScorer as TheirScorer

    from capeval_core.pycocoevalcap.bleu.bleu_scorer import BleuScorer

    for cls in (TheirScorer, BleuScorer):
        scorer = cls(n=4)
        scorer += ("a cat", ["a cat sits"])
        with pytest.raises(AssertionError, match="unsupported reflen option"):
            scorer.compute_score(option="longest")


@pytest.mark.parametrize("words", [0, 2**15], ids=["compiled", "too-many-words"])
def test_cider_scorer_gives_nan_to_a_pair_without_references_as_pycocoevalcaps(words):
    """pycocoevalcap 1.2's CiderScorer divides such a pair's sum by its 0 references (NaN,
    and a NaN mean); the pair still counts among the documents of the IDF. capeval raised
    ZeroDivisionError, and with more distinct words than its compiled tables pack (the
    batch tables' path) "references[1] is empty"."""
    from pycocoevalcap.cider.cider_scorer import CiderScorer as TheirScorer

    from capeval_core.pycocoevalcap.cider.cider_scorer import CiderScorer

    many = [" ".join(f"w{i}" for i in range(words))] if words else []
    pairs = [
        ("a cat w1", ["a cat sits", "a cat", *many]),
        ("a dog", []),
        ("two men", ["two men play"]),
    ]
    got = []
    for cls in (TheirScorer, CiderScorer):
        scorer = cls(n=4, sigma=6.0)
        for pair in pairs:
            scorer += pair
        with np.errstate(invalid="ignore"):  # pycocoevalcap's 0 / 0
            score, scores = scorer.compute_score()
        got.append((score, scores.tolist()))
    (their_score, theirs), (our_score, ours) = got
    assert math.isnan(their_score) and math.isnan(our_score)
    assert math.isnan(ours[1]) and math.isnan(theirs[1])
    assert [ours[0], ours[2]] == pytest.approx([theirs[0], theirs[2]], rel=1e-12)


def test_spice_of_no_image_is_nan_as_pycocoevalcaps():
    """pycocoevalcap 1.2's Spice returns np.mean of no image, (nan, []); capeval raised
    InputError ("`candidates` is empty")."""
    score, scores = Spice().compute_score({}, {})
    assert isinstance(score, np.float64) and math.isnan(score) and scores == []


def test_cider_of_references_without_words_is_0_where_pycocoevalcap_stops():
    """The one documented difference on these inputs (README: Deliberate differences)."""
    from pycocoevalcap.cider.cider import Cider as TheirCider

    gts, res = {1: [""], 2: [""]}, {1: ["a dog"], 2: [""]}
    with pytest.raises(ValueError, match="empty sequence"):
        TheirCider().compute_score(gts, res)
    score, scores = Cider().compute_score(gts, res)
    assert score == 0.0 and scores.tolist() == [0.0, 0.0]


def test_return_types_and_shapes_are_pycocoevalcaps():
    gts = {"b": ["a dog runs on the grass", "a brown dog"], "a": ["a red bus"]}
    res = {"b": ["a dog running"], "a": ["a bus on a road"]}
    with contextlib.redirect_stdout(io.StringIO()):
        score, scores = Bleu(4).compute_score(gts, res)
    assert isinstance(score, list) and len(score) == 4 and all(type(s) is float for s in score)
    assert len(scores) == 4 and all(len(row) == 2 and type(row[0]) is float for row in scores)
    with contextlib.redirect_stdout(io.StringIO()):
        assert len(Bleu(2).compute_score(gts, res)[0]) == 2
    for scorer in (Rouge(), Cider()):
        score, scores = scorer.compute_score(gts, res)
        assert type(score) is np.float64 and isinstance(scores, np.ndarray) and scores.shape == (2,)
    score, scores = Meteor().compute_score(gts, res)
    assert type(score) is float and type(scores) is list and type(scores[0]) is float
    score, scores = Spice().compute_score(gts, res)
    assert type(score) is np.float64 and len(scores) == 2
    for row in scores:
        assert list(row) == list(JAR_CATEGORIES)
        assert all(list(row[c]) == list(SCORE_KEYS) for c in row)
        assert all(type(v) is float for c in row for v in row[c].values())
    # sorted id order, as pycocoevalcap: "a" first although gts lists "b" first
    assert scores == [Spice().compute_score({k: gts[k]}, {k: res[k]})[1][0] for k in ("a", "b")]
    assert Spice().float_convert(None) != Spice().float_convert(None)  # NaN


@pytest.mark.parametrize("scorer", [Bleu(4), Meteor(), Rouge(), Cider(), Spice()])
def test_scorers_assert_where_pycocoevalcap_asserts(scorer):
    gts = {1: ["a dog"], 2: ["a cat"]}
    with pytest.raises(AssertionError, match="same image ids"):
        scorer.compute_score(gts, {1: ["a dog"]})
    with pytest.raises(AssertionError, match=r"exactly one caption.*got 2"):
        scorer.compute_score(gts, {1: ["a dog"], 2: ["a cat", "a kitten"]})
    if not isinstance(scorer, Meteor):  # pycocoevalcap's Meteor asserts no reference
        with pytest.raises(AssertionError, match="no reference"):
            scorer.compute_score({1: ["a dog"], 2: []}, {1: ["a dog"], 2: ["a cat"]})
    with pytest.raises(TypeError, match="PTBTokenizer"):
        scorer.compute_score({1: [{"caption": "a dog"}]}, {1: [{"caption": "a dog"}]})


def test_meteor_scores_an_image_without_references_against_an_empty_one():
    """pycocoevalcap's Meteor hands the jar " ||| ".join([]) and scores it; ours asserted."""
    gts = {1: ["a man riding a horse", "a person on a horse"], 2: []}
    res = {1: ["a man on a horse"], 2: ["a dog"]}
    # pycocoevalcap 1.2 with meteor-1.5.jar: (0.8125, [0.8666666666666667, 0.0])
    assert Meteor().compute_score(gts, res) == (0.8125, [0.8666666666666667, 0.0])
    assert Meteor().compute_score({**gts, 2: [""]}, res) == Meteor().compute_score(gts, res)


def test_bleu_of_a_greek_sign_lower_cased_as_the_jar_does() -> None:
    """The tokenizer jar lower-cases "ΟΔΟΣ3-WAY" to "οδος3-way" (the word Java's final sigma
    looks at ends at the digit); it was "οδοσ3-way" here, and BLEU-4 0.669."""
    gts = PTBTokenizer().tokenize({1: [{"caption": "a road sign reading οδος3-way"}]})
    res = PTBTokenizer().tokenize({1: [{"caption": "a road sign reading ΟΔΟΣ3-WAY"}]})
    # pycocoevalcap 1.2 (Stanford CoreNLP 3.4.1 tokenizer jar, OpenJDK 17): 0.9999999994791672
    assert Bleu(4).compute_score(gts, res, verbose=0)[0][3] == 0.9999999994791672


#: (hypothesis, references, the jar's statistics line for them, its EVAL score of that line):
#: pycocoevalcap 1.2's ``Meteor()._stat`` and ``EVAL ||| line`` written to its JVM
#: (meteor-1.5.jar -stdio -l en -norm, OpenJDK 17); its ``_score`` raises TypeError in Python 3.
_METEOR_STAT_LINES = [
    ("a dog runs on the grass", ["a dog is running on grass", "the dog runs"],
     "6.0 3.0 3.0 1.0 2.0 2.0 1.0 1.0" + " 0.0" * 12 + " 2.0 3.0 3.0", 0.4035028092615153),
    ("a  man |||  rides", ["a man riding a horse"],
     "3.0 5.0 1.0 2.0 1.0 1.0 1.0 1.0 1.0 1.0" + " 0.0" * 10 + " 1.0 3.0 3.0", 0.2890826312571535),
    ("", ["a cat"], "0.0 2.0 0.0 1.0" + " 0.0" * 19, 0.0),
    ("A Man, riding!", ["a man is riding a bike .", "men ride"],
     "5.0 7.0 2.0 4.0 2.0 2.0 1.0 1.0" + " 0.0" * 12 + " 2.0 3.0 3.0", 0.24623202927375937),
    ("a man riding a horse", ["a man riding a horse"],
     "5.0 5.0 2.0 2.0 3.0 3.0 2.0 2.0" + " 0.0" * 12 + " 1.0 5.0 5.0", 1.0),
    ("a dog", [], "2.0 0.0 1.0" + " 0.0" * 20, 0.0),
    # a vertical tab is no word break for the jar (java.util.StringTokenizer's), except where
    # String.trim strips it at either end
    ("a dog\x0bruns", ["a dog runs"],
     "2.0 3.0 1.0 1.0 0.0 0.0 1.0 1.0" + " 0.0" * 12 + " 1.0 1.0 1.0", 0.06106870229007633),
    ("a dog runs", ["a dog\x0bruns"],
     "3.0 2.0 1.0 1.0 0.0 0.0 1.0 1.0" + " 0.0" * 12 + " 1.0 1.0 1.0", 0.0898876404494382),
    ("Mr.\x0bsmith runs", ["mr. smith runs"],
     "2.0 3.0 0.0 0.0 1.0 1.0" + " 0.0" * 14 + " 1.0 1.0 1.0", 0.14035087719298242),
    ("\x0ba\x0b\x0bdog runs .\x0b", ["a dog runs"],
     "3.0 3.0 1.0 1.0 1.0 1.0" + " 0.0" * 14 + " 1.0 1.0 1.0", 0.17142857142857143),
]  # fmt: skip


@pytest.mark.parametrize(("hypothesis", "references", "line", "score"), _METEOR_STAT_LINES)
def test_meteor_stat_and_score_give_the_jars_line_and_eval(hypothesis, references, line, score):
    """Reward code collects ``_stat`` lines per caption and scores single captions with
    ``_score``; both existed only with the JVM before."""
    meteor = Meteor()
    assert meteor._stat(hypothesis, references) == line
    assert meteor._score(hypothesis, references) == score
    with meteor.lock:  # held around calls of its own, as code written for the JVM does
        assert meteor._stat(hypothesis, references) == line
    meteor.__del__()  # code that ends the JVM itself keeps working


def test_bleu_takes_numpys_integers_and_cider_no_image_raises_as_pycocoevalcaps():
    from pycocoevalcap.bleu.bleu import Bleu as TheirBleu
    from pycocoevalcap.cider.cider import Cider as TheirCider

    gts, res = {1: ["a man riding a horse"]}, {1: ["a man on a horse"]}
    with contextlib.redirect_stdout(io.StringIO()):
        theirs = TheirBleu(np.int64(4)).compute_score(gts, res)
    assert Bleu(np.int64(4)).compute_score(gts, res, verbose=0) == theirs  # was a ValueError
    with pytest.raises(ValueError):
        TheirCider().compute_score({}, {})
    with pytest.raises(ValueError, match="no image"):  # was nan and numpy's warnings
        Cider().compute_score({}, {})


# Three images: one with a single reference and an empty candidate; the short set has no
# caption longer than 3 words (pycocoevalcap's Cider(n=3) raises IndexError on a longer one).
ORDER_GTS = {
    1: ["a cat sits on a mat", "a cat is on the mat"],
    2: ["a dog runs in the park"],
    3: ["a man rides a horse on a beach", "a person on a horse"],
}
ORDER_RES = {1: ["a cat is on a mat"], 2: [""], 3: ["a man riding a horse"]}
SHORT_GTS = {1: ["a cat", "the cat sits"], 2: ["dog"], 3: ["a man rides"]}
SHORT_RES = {1: ["a cat"], 2: [""], 3: ["man rides"]}

# pycocoevalcap 1.2's values, printed by its Python scorers on ORDER_* (SHORT_* for n=3):
# `score, scores = Cider(**options).compute_score(gts, res)`, `[float(score), scores.tolist()]`.
# Its CiderScorer cooks 1- to 4-grams whatever n is and averages n per-order values, so n
# above 4 adds zeros to the mean (numpy sums 8 values or more pairwise: n=9 checks that order).
CIDER_ORDERS = [
    ({"n": 5}, False, [1.8180845746845125, [3.919592168625381, 0.0, 1.5346615554281566]]),
    ({"n": 9}, False, [1.0100469859358403, [2.1775512047918784, 0.0, 0.8525897530156425]]),
    ({"n": 3}, True, [3.242983060503373, [4.223612902074409, 0.0, 5.50533627943571]]),
    ({"sigma": 1.0}, False, [1.9198912129459256, [4.899490210781726, 0.0, 0.86018342805605]]),
    (
        {"n": 6, "sigma": 2.5},
        False,
        [1.4082792505394461, [3.2663268071878178, 0.0, 0.9585109444305207]],
    ),
]


@pytest.mark.parametrize(("options", "short", "expected"), CIDER_ORDERS)
def test_cider_n_and_sigma_give_pycocoevalcaps_values(options, short, expected):
    """capeval raised ValueError for any n but 4."""
    from capeval_core.pycocoevalcap.cider.cider_scorer import CiderScorer

    gts, res = (SHORT_GTS, SHORT_RES) if short else (ORDER_GTS, ORDER_RES)
    score, scores = Cider(**options).compute_score(gts, res)
    assert type(score) is np.float64 and scores.shape == (3,)
    assert [float(score), scores.tolist()] == expected
    scorer = CiderScorer(**options)
    for i in gts:
        scorer += (res[i][0], gts[i])
    assert scorer.compute_score()[1].tolist() == expected[1]


def test_cider_n_raises_what_pycocoevalcap_raises():
    """pycocoevalcap 1.2: IndexError ("list index out of range") for n below 4 and a caption
    longer than n words (n=True is 1), TypeError for an n that is not an integer; its
    constructor takes `test` and `refs` and leaves them unused."""
    for n in (0, 1, 2, 3, True):
        with pytest.raises(IndexError, match="list index out of range"):
            Cider(n=n).compute_score(ORDER_GTS, ORDER_RES)
    with pytest.raises(IndexError, match="list index out of range"):
        Cider(n=2).compute_score(SHORT_GTS, SHORT_RES)  # "the cat sits": 3 words
    with pytest.raises(TypeError, match="'float' object cannot be interpreted as an integer"):
        Cider(n=4.0).compute_score(ORDER_GTS, ORDER_RES)
    unused = Cider("a dog", ["a cat"]).compute_score(ORDER_GTS, ORDER_RES)
    assert unused[1].tolist() == Cider().compute_score(ORDER_GTS, ORDER_RES)[1].tolist()


# pycocoevalcap 1.2's Bleu(3).compute_score(ORDER_GTS, ORDER_RES, verbose=1): returned and printed
BLEU_3 = (
    [0.526889344254029, 0.4873528649001904, 0.3892907824769966],
    [
        [0.9999999996666668, 0.0, 0.7999999996800004],
        [0.9999999996500001, 0.0, 0.6324555317648827],
        [0.9085602960778836, 0.0, 5.108729546934668e-06],
    ],
)
BLEU_3_PRINTED = (
    "{'testlen': 11, 'reflen': 17, 'guess': [11, 9, 7], 'correct': [10, 7, 3]}\n"
    "ratio: 0.6470588234913496\n"
)


def test_bleu_n_returns_and_raises_what_pycocoevalcap_does():
    """pycocoevalcap 1.2 counts 1- to 4-grams whatever n is: Bleu(5) raises IndexError once
    an image is scored (zeros for no image), n <= 0 returns empty lists after printing its
    counts, n=True is 1, and an n that is not an integer raises TypeError. capeval raised
    ValueError in the constructor for all of these."""
    assert _outcome(lambda: Bleu(3).compute_score(ORDER_GTS, ORDER_RES)) == (
        BLEU_3,
        BLEU_3_PRINTED,
    )
    with pytest.raises(IndexError, match="list index out of range"):
        Bleu(5).compute_score(ORDER_GTS, ORDER_RES)
    assert _outcome(lambda: Bleu(5).compute_score({}, {}))[0] == ([0.0] * 5, [[]] * 5)
    empty = _outcome(lambda: Bleu(0).compute_score(ORDER_GTS, ORDER_RES))
    assert empty == (
        ([], []),
        "{'testlen': 11, 'reflen': 17, 'guess': [], 'correct': []}\nratio: 0.6470588234913496\n",
    )
    assert _outcome(lambda: Bleu(-1).compute_score(ORDER_GTS, ORDER_RES)) == empty
    assert Bleu(True).compute_score(ORDER_GTS, ORDER_RES, verbose=0) == (
        BLEU_3[0][:1],
        BLEU_3[1][:1],
    )
    with pytest.raises(TypeError, match="'float' object cannot be interpreted as an integer"):
        Bleu(2.0).compute_score(ORDER_GTS, ORDER_RES)


@pytest.mark.parametrize("n", [0, 1, 2, 3, 5, 8, 9, True, 4.0])
@pytest.mark.parametrize("sigma", [6.0, 0.5])
@pytest.mark.parametrize("short", [False, True], ids=["long", "short"])
def test_other_orders_and_sigmas_match_pycocoevalcaps_python_scorers(n, sigma, short):
    """pycocoevalcap 1.2's BLEU and CIDEr-D are Python: they run here beside ours (values to
    the last bit, printed lines, exception classes)."""
    from pycocoevalcap.bleu.bleu import Bleu as TheirBleu
    from pycocoevalcap.cider.cider import Cider as TheirCider

    gts, res = (SHORT_GTS, SHORT_RES) if short else (ORDER_GTS, ORDER_RES)
    theirs = _outcome(lambda: TheirCider(n=n, sigma=sigma).compute_score(gts, res))
    assert _outcome(lambda: Cider(n=n, sigma=sigma).compute_score(gts, res)) == theirs
    theirs = _outcome(lambda: TheirBleu(n).compute_score(gts, res, verbose=2))
    assert _outcome(lambda: Bleu(n).compute_score(gts, res, verbose=2)) == theirs


def test_eval_module_holds_the_scorers_names():
    """Code importing PTBTokenizer or Bleu from pycocoevalcap.eval got an ImportError."""
    from capeval_core.pycocoevalcap import eval as ours

    for cls in (PTBTokenizer, Bleu, Meteor, Rouge, Cider, Spice):
        assert getattr(ours, cls.__name__) is cls


def test_tokenizer_takes_records_and_keeps_image_ids():
    captions = {
        "img-2": [{"caption": "A dog (really) isn't here.", "id": 7}],
        391895: [{"caption": "Two\ncats."}, {"caption": "..."}],
        5: [],
    }
    assert PTBTokenizer().tokenize(captions) == {
        "img-2": ["a dog -lrb- really -rrb- is n't here"],
        391895: ["two cats", ""],
    }


class _Coco:
    """Anything with getImgIds() and imgToAnns, as COCOEvalCap reads it."""

    def __init__(self, anns: dict) -> None:
        self.imgToAnns = anns

    def getImgIds(self):
        return list(self.imgToAnns)


def _evaluate(gts: dict, res: dict, ids=None) -> tuple[COCOEvalCap, str]:
    ev = COCOEvalCap(
        _Coco({k: [{"caption": c} for c in v] for k, v in gts.items()}),
        _Coco({k: [{"caption": c} for c in v] for k, v in res.items()}),
    )
    if ids is not None:
        ev.params["image_id"] = ids
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        ev.evaluate()
    return ev, printed.getvalue()


def test_each_image_gets_its_own_spice_on_unsorted_ids():
    """Jar-free: with ids in a non-sorted order, imgToEval[id]["SPICE"] is what SPICE gives
    that image alone (an image's SPICE depends on its own captions only)."""
    gts = {
        30: ["a man riding a horse on a beach"],
        10: ["two dogs play in the grass", "dogs on a lawn"],
        20: ["a red bus on a city street"],
    }
    res = {30: ["a person on a horse"], 10: ["two dogs playing"], 20: ["a bus parked"]}
    ev, _ = _evaluate(gts, res)
    assert list(ev.imgToEval) == [30, 10, 20]
    for i in gts:
        alone = Spice().compute_score({i: gts[i]}, {i: res[i]})[1][0]
        assert same(ev.imgToEval[i]["SPICE"], alone), i
    assert ev.evalImgs == list(ev.imgToEval.values())
    assert list(ev.imgToEval[30]) == ["image_id", *ev.eval]


class _SortingSpiceFix(COCOEvalCap):
    """A subclass client code carries to mend pycocoevalcap's SPICE attachment: it sorts the
    ids it is given for SPICE (the order pycocoevalcap's Spice returns its scores in). It
    also keeps what each call received, as a logging hook would."""

    def setImgToEvalImgs(self, scores, imgIds, method):
        self.calls = [*getattr(self, "calls", []), (method, scores, imgIds)]
        if method == "SPICE":
            imgIds = sorted(imgIds)
        super().setImgToEvalImgs(scores, imgIds, method)


def test_a_subclass_sorting_spices_ids_still_attaches_each_images_own():
    """With pycocoevalcap 1.2 such a subclass gets each image's own SPICE; with the ids
    passed in their given order and the scores reordered to match, sorting them again
    attached every image's SPICE to another one."""
    gts = {
        30: ["a man riding a horse on a beach"],
        10: ["two dogs play in the grass", "dogs on a lawn"],
        20: ["a red bus on a city street"],
    }
    res = {30: ["a person on a horse"], 10: ["two dogs playing"], 20: ["a bus parked"]}
    ev = _SortingSpiceFix(
        _Coco({k: [{"caption": c} for c in v] for k, v in gts.items()}),
        _Coco({k: [{"caption": c} for c in v] for k, v in res.items()}),
    )
    with contextlib.redirect_stdout(io.StringIO()):
        ev.evaluate()
    for i in gts:
        alone = Spice().compute_score({i: gts[i]}, {i: res[i]})[1][0]
        assert same(ev.imgToEval[i]["SPICE"], alone), i
    # what pycocoevalcap 1.2 passes: its tokenized dict's keys; ROUGE-L's and CIDEr's
    # scores as the arrays its scorers return, the others as lists
    kinds = {method: (type(scores), type(ids)) for method, scores, ids in ev.calls}
    assert kinds["ROUGE_L"] == kinds["CIDEr"] == (np.ndarray, type({}.keys()))
    assert kinds["Bleu_1"] == kinds["METEOR"] == kinds["SPICE"] == (list, type({}.keys()))
    given = {method: list(ids) for method, _, ids in ev.calls}
    assert given["CIDEr"] == [30, 10, 20] and given["SPICE"] == [10, 20, 30]


def test_evaluate_takes_string_ids_and_a_subset_of_images():
    gts = {"b": ["a dog runs on the grass"], "a": ["a red bus"], "c": ["a cat"]}
    res = {"b": ["a dog running"], "a": ["a bus on a road"], "c": ["a cat sleeping"]}
    ev, printed = _evaluate(gts, res, ids=["a", "b"])
    assert list(ev.imgToEval) == ["a", "b"]
    assert own_lines(printed)[:3] == [
        "tokenization...",
        "setting up scorers...",
        "computing Bleu score...",
    ]
    assert printed.splitlines()[3].startswith("{'testlen': ")
    assert type(ev.eval["Bleu_4"]) is float and type(ev.eval["CIDEr"]) is np.float64
    assert type(ev.imgToEval["a"]["ROUGE_L"]) is np.float64
    assert type(ev.imgToEval["a"]["METEOR"]) is float


def test_ids_of_both_kinds_work_in_evaluate_and_not_in_spices_sorted_list():
    gts = {1: ["a dog runs on the grass"], "a": ["a red bus"]}
    res = {1: ["a dog running"], "a": ["a bus on a road"]}
    ev, _ = _evaluate(gts, res)
    assert list(ev.imgToEval) == [1, "a"]
    assert same(
        ev.imgToEval["a"]["SPICE"], Spice().compute_score({"a": gts["a"]}, {"a": res["a"]})[1][0]
    )
    with pytest.raises(TypeError):
        Spice().compute_score(gts, res)


def test_evaluate_scores_the_coco_caption_set():
    from capeval_core.metrics import COCO_CAPTION_KEYS
    from capeval_core.pycocoevalcap.eval import KEYS, SCORERS

    assert sorted(KEYS.values()) == sorted(COCO_CAPTION_KEYS)
    assert [k for _, names in SCORERS for k in names] == list(KEYS)


def test_evaluate_leaves_out_an_image_without_any_caption():
    """An image of the annotations with no caption and no result (held out) leaves both of
    pycocoevalcap's tokenized dicts, which then agree; ours asserted."""
    gts = {1: ["a dog runs on the grass", "a brown dog"], 2: ["a red bus"], 3: []}
    res = {1: ["a dog runs"], 2: ["a bus"], 3: []}
    with_it, printed = _evaluate(gts, res)
    without, printed_without = _evaluate(gts, res, ids=[1, 2])
    assert with_it.eval == without.eval and printed == printed_without
    assert list(with_it.imgToEval) == [1, 2]
    with pytest.raises(ValueError, match="no image"):
        _evaluate(gts, res, ids=[3])


def test_evaluate_asserts_on_missing_and_double_results():
    gts = {1: ["a dog"], 2: ["a cat"]}
    with pytest.raises(AssertionError, match=r"without a result: \[2\]"):
        _evaluate(gts, {1: ["a dog"], 2: []})
    with pytest.raises(AssertionError, match="more than one caption"):
        _evaluate(gts, {1: ["a dog"], 2: ["a cat", "a kitten"]})


# What pycocoevalcap 1.2's COCOEvalCap.evaluate() prints on stdout before its BLEU asserts
# (`assert(len(hypo) == 1)` for two results of one image, `assert(gts.keys() == res.keys())`
# for an image without a result), a bare AssertionError: recorded by running it (Java 17,
# its PTBTokenizer jar) on UNSCORABLE_GTS with each of UNSCORABLE_RES, as
# test_live_evaluate_prints_pycocoevalcaps_lines_before_it_asserts does.
PRINTED_BEFORE_ASSERTION = "tokenization...\nsetting up scorers...\ncomputing Bleu score...\n"
UNSCORABLE_GTS = {1: ["a dog runs"], 2: ["a cat sits", "a small cat"]}
UNSCORABLE_RES = {
    "two results": {1: ["a dog"], 2: ["a cat", "a kitten"]},
    "no result": {1: ["a dog"], 2: []},
}


@pytest.mark.parametrize(
    ("case", "message"),
    [("two results", r"more than one caption.*\[2\]"), ("no result", r"without a result: \[2\]")],
)
def test_evaluate_prints_pycocoevalcaps_lines_before_it_asserts(case, message):
    """capeval printed "tokenization..." alone before its assertion."""
    ev = COCOEvalCap(
        _Coco({k: [{"caption": c} for c in v] for k, v in UNSCORABLE_GTS.items()}),
        _Coco({k: [{"caption": c} for c in v] for k, v in UNSCORABLE_RES[case].items()}),
    )
    printed = io.StringIO()
    with pytest.raises(AssertionError, match=message), contextlib.redirect_stdout(printed):
        ev.evaluate()
    assert printed.getvalue() == PRINTED_BEFORE_ASSERTION
    assert ev.eval == {} and ev.imgToEval == {}


def test_evaluate_names_the_image_of_a_caption_that_is_not_text():
    """Before: "`candidates[0]` must be a string", a name of capeval's internals, no image."""
    gts = {1: ["a dog"], 2: ["a cat"]}
    with pytest.raises(TypeError, match=r"caption 1 of image 2 in the results .*NoneType"):
        _evaluate(gts, {1: ["a dog"], 2: [None]})
    with pytest.raises(TypeError, match=r"caption 2 of image 1 in the annotations .*int"):
        _evaluate({1: ["a dog", 7], 2: ["a cat"]}, {1: ["a dog"], 2: ["a cat"]})


# -- the slow live checks: pycocoevalcap itself -------------------------------------------------


@pytest.fixture(scope="module")
def live(tmp_path_factory):
    """pycocoevalcap (a copy with its jars) and the drop-in, each running the client script
    on 30 COCO val2014 images other than the golden's, in the annotation file's order."""
    why = oracle.available()
    if why:
        pytest.skip(why)
    from capeval_core.resources import coco_caption_file

    data = coco_caption_file("val")
    golden_ids = set(oracle.read_golden()["image_ids"])
    first: dict[int, tuple[int, str]] = {}
    for a in data["annotations"]:
        if a["image_id"] not in first or a["id"] < first[a["image_id"]][0]:
            first[a["image_id"]] = (a["id"], a["caption"])
    ids = [im["id"] for im in reversed(data["images"]) if im["id"] not in golden_ids][:30]
    captions = [first[j][1] for j in ids[1:] + ids[:1]]  # another image's caption
    folder = tmp_path_factory.mktemp("live")
    site = oracle.oracle_copy(folder)
    ann, res = oracle.write_coco_files(folder, ids, captions)
    theirs = oracle.run_client(
        oracle.REFERENCE_IMPORT, ann, res, folder / "theirs.json", oracle.java_env(site)
    )
    ours = oracle.run_client(oracle.DROPIN_IMPORT, ann, res, folder / "ours.json")
    load = json.loads
    return (
        ids,
        (theirs, load((folder / "theirs.json").read_text())),
        (ours, load((folder / "ours.json").read_text())),
    )


@pytest.mark.slow
def test_live_client_script_matches_pycocoevalcap(live):
    _, (their_print, theirs), (our_print, ours) = live
    assert own_lines(our_print) == own_lines(their_print)
    assert list(ours["overall"]) == list(theirs["overall"])
    assert same(ours["overall"], theirs["overall"])
    # every per-image value but SPICE, which pycocoevalcap attaches to other images here
    assert list(ours["imgToEval"]) == list(theirs["imgToEval"])
    for image, row in ours["imgToEval"].items():
        expected = theirs["imgToEval"][image]
        assert list(row) == list(expected)
        for key in row:
            if key != "SPICE":
                assert same(row[key], expected[key]), (image, key)


_UNSCORABLE_SCRIPT = """
import json, sys
from pycocoevalcap.eval import COCOEvalCap

class Coco:
    def __init__(self, anns):
        self.imgToAnns = anns

    def getImgIds(self):
        return list(self.imgToAnns)

gts, res = (
    {int(k): [{"caption": c} for c in v] for k, v in json.loads(arg).items()}
    for arg in sys.argv[1:]
)
try:
    COCOEvalCap(Coco(gts), Coco(res)).evaluate()
except AssertionError as exc:
    print("AssertionError:", repr(str(exc)))
"""


@pytest.mark.slow
@pytest.mark.parametrize("case", list(UNSCORABLE_RES))
def test_live_evaluate_prints_pycocoevalcaps_lines_before_it_asserts(case, tmp_path):
    why = oracle.available()
    if why:
        pytest.skip(why)
    import subprocess
    import sys

    site = oracle.oracle_copy(tmp_path)
    script = tmp_path / "unscorable.py"
    script.write_text(_UNSCORABLE_SCRIPT, encoding="utf-8")
    args = [json.dumps(UNSCORABLE_GTS), json.dumps(UNSCORABLE_RES[case])]
    done = subprocess.run(
        [sys.executable, str(script), *args],
        env=oracle.java_env(site),
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp_path,
    )
    assert done.stdout == PRINTED_BEFORE_ASSERTION + "AssertionError: ''\n"


@pytest.mark.slow
def test_live_reference_misattaches_spice_and_ours_does_not(live):
    """With the reference's own code: its k-th image (unsorted ids) holds the SPICE of the
    k-th smallest id; capeval's holds the image's own (which is, in the reference's output,
    under the image at that id's place)."""
    _, (_, theirs), (_, ours) = live
    keys = list(theirs["imgToEval"])  # params['image_id']: the annotation file's order
    order = sorted(keys, key=int)
    by_place = dict(zip(order, keys, strict=True))  # id -> the image holding its SPICE there
    assert keys != order
    for key in keys:
        assert same(ours["imgToEval"][key]["SPICE"], theirs["imgToEval"][by_place[key]]["SPICE"])
    moved = [
        k for k in keys if not same(ours["imgToEval"][k]["SPICE"], theirs["imgToEval"][k]["SPICE"])
    ]
    assert len(moved) > len(keys) // 2


@pytest.mark.parametrize("module", ["bleu.bleu_scorer", "cider.cider_scorer"])
def test_the_scorer_modules_cooking_functions_are_pycocoevalcaps(module):
    """``precook``, ``cook_refs`` and ``cook_test`` were missing (an ImportError for code that
    reuses them, e.g. for a training reward); they are Python in pycocoevalcap 1.2, so they
    run here beside ours on the same sentences, every argument they take."""
    ours = importlib.import_module(f"capeval_core.pycocoevalcap.{module}")
    theirs = importlib.import_module(f"pycocoevalcap.{module}")
    refs = ["a dog runs on the grass", "a  brown dog\truns", "", "dog dog dog"]
    tests = ["a dog runs", "", "dog dog dog dog on grass", "a brown dog runs on the green grass"]
    for n in (1, 2, 4):
        for s in [*refs, *tests]:
            assert ours.precook(s, n) == theirs.precook(s, n)
            assert type(ours.precook(s, n)) is type(theirs.precook(s, n))
        if module.startswith("bleu"):
            for eff in (None, "closest", "shortest", "average"):
                cooked = ours.cook_refs(refs, eff=eff, n=n)
                assert cooked == theirs.cook_refs(refs, eff=eff, n=n)
                for t in tests:
                    got = ours.cook_test(t, cooked, eff=eff, n=n)
                    assert got == theirs.cook_test(t, cooked, eff=eff, n=n)
                    assert list(got) == ["reflen", "testlen", "guess", "correct"]
        else:
            assert ours.cook_refs(refs, n=n) == theirs.cook_refs(refs, n=n)
            for t in tests:
                assert ours.cook_test(t, n=n) == theirs.cook_test(t, n=n)


@pytest.mark.parametrize("option", [None, "closest", "shortest", "average"])
@pytest.mark.parametrize("n_pairs", [1, 2])
def test_a_pair_without_references_raises_what_pycocoevalcap_raises(option, n_pairs):
    """With "closest" capeval returned numbers (its vectorised reference length read another
    pair's length); pycocoevalcap 1.2 raises ValueError (min over no length) or
    ZeroDivisionError (their mean), as capeval now does, naming the pair."""
    from pycocoevalcap.bleu.bleu_scorer import BleuScorer as TheirBleuScorer

    from capeval_core.pycocoevalcap.bleu.bleu_scorer import BleuScorer

    pairs = [("a b c", []), ("a b", ["a b d"])][:n_pairs]
    raised = []
    for cls in (TheirBleuScorer, BleuScorer):
        scorer = cls()
        for pair in pairs:
            scorer += pair
        quiet = contextlib.redirect_stdout(io.StringIO())
        with pytest.raises((ValueError, ZeroDivisionError)) as info, quiet:
            scorer.compute_score(option=option)
        raised.append(type(info.value))
    assert raised[0] is raised[1]


# -- capeval's own paths give the drop-in's corpus values -----------------------------------------


@pytest.fixture(scope="module")
def golden_files(golden, tmp_path_factory):
    """The golden's references and results as COCO files (images in COCO val2014's order,
    which is not sorted by id)."""
    return oracle.write_coco_files(
        tmp_path_factory.mktemp("files"), golden["image_ids"], golden["captions"]
    )


def test_systems_average_spice_over_sorted_ids_as_pycocoevalcap(golden, golden_files):
    """pycocoevalcap's Spice averages the images in sorted id order, the other scorers in the
    references file's: on these 300 images the two orders' sums differ in the last bit
    (0.19747362866442414 in file order). The reference's SPICE is pycocoevalcap 1.2's
    COCOEvalCap with spice-1.0.jar (the golden's ``client``)."""
    from capeval_core.systems import load_systems, score_systems

    ann, res = golden_files
    data = load_systems([res], ann)
    assert list(data.image_ids) != sorted(data.image_ids)
    scores = score_systems(data, ["rouge_l", "cider_d", "spice"], use_cache=False)
    got = scores.corpus[data.names[0]]
    theirs = golden["client"]["overall"]
    assert got["spice"] == theirs["SPICE"]
    assert got["rouge_l"] == theirs["ROUGE_L"] and got["cider_d"] == theirs["CIDEr"]


def test_capeval_score_averages_spice_over_sorted_ids_as_pycocoevalcap(golden, golden_files):
    """``capeval score`` gives COCOEvalCap's corpus values to the last bit, SPICE's too (it
    took SPICE's mean in the references file's order). Reference: the golden's ``client``
    (pycocoevalcap 1.2 with spice-1.0.jar)."""
    from capeval_core.cli import main

    ann, res = golden_files
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        argv = ["score", "--results", str(res), "--annotations", str(ann), "--json"]
        code = main([*argv, "--metrics", "rouge_l", "cider_d", "spice"])
    assert code == 0
    corpus = json.loads(out.getvalue())["corpus"]
    theirs = golden["client"]["overall"]
    assert corpus["spice"] == theirs["SPICE"]
    assert corpus["rouge_l"] == theirs["ROUGE_L"] and corpus["cider_d"] == theirs["CIDEr"]


def test_compare_gives_score_spice_when_spice_leaves_images_out(golden, golden_files, tmp_path):
    """With images left out (--spice-max-words), compare took SPICE's mean over the compared
    images in file order, and disagreed with ``capeval score`` in the last bit."""
    from capeval_core.cli import main

    ann, res = golden_files
    other = tmp_path / "reversed.json"
    other.write_text(json.dumps(json.loads(res.read_text())[::-1]), encoding="utf-8")
    limit = ["--metrics", "spice", "--spice-max-words", "11", "--annotations", str(ann)]

    def run(*argv: str) -> dict:
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            assert main([*argv, *limit]) == 0
        return json.loads(out.getvalue())

    scored = run("score", "--results", str(res), "--json")
    assert "left_out" in scored  # the limit leaves images out
    both = ["--results", str(res), str(other), "--resamples", "20", "--trials", "20"]
    compared = run("compare", *both, "--json", "-")
    assert {s: c["spice"] for s, c in compared["corpus"].items()} == {
        res.stem: scored["corpus"]["spice"],
        other.stem: scored["corpus"]["spice"],
    }


def test_spices_mean_is_the_one_capeval_score_and_systems_take():
    """The drop-in's SPICE mean and capeval score's and Systems' (``coco_caption_mean``) were
    two functions skipping the images SPICE left out; they are one. Over the images scored
    each is pycocoevalcap's ``np.mean(np.array(spice_scores))`` bit for bit, the drop-in's a
    ``np.float64`` as there, and with every image left out it is NaN without numpy's "Mean of
    empty slice" warning (as it is for no image at all)."""
    import warnings

    from capeval_core.coco_files import coco_caption_mean, nan_skipping_mean
    from capeval_core.pycocoevalcap.spice.spice import corpus_value

    rng = np.random.default_rng(7)
    for size in (1, 2, 7, 8, 9, 130, 1000):  # numpy sums in blocks of 8 and 128
        values = rng.random(size) * rng.choice([1e-8, 1.0, 1e8], size)
        values[rng.random(size) < 0.3] = np.nan
        kept = values[~np.isnan(values)]
        if not kept.size:
            continue
        ids = rng.permutation(size).tolist()
        in_id_order = [values[k] for k in sorted(range(size), key=ids.__getitem__)]
        scores = [{"All": {"f": float(v)}} for v in in_id_order]
        theirs = np.mean(np.array([v for v in in_id_order if not math.isnan(v)]))
        ours = corpus_value(scores)
        assert type(ours) is np.float64 and ours == theirs
        assert coco_caption_mean(values, ids) == float(theirs)
        assert type(coco_caption_mean(values, ids)) is float
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        nothing = corpus_value([{"All": {"f": math.nan}}] * 3)
        assert type(nothing) is np.float64 and math.isnan(nothing)
        assert math.isnan(coco_caption_mean([math.nan, math.nan], [2, 1]))
    assert type(nan_skipping_mean([0.5])) is np.float64


def test_meteor_after_a_refused_result_still_scores_and_says_a_bare_string():
    """A result given as a bare string (not a list) is refused in words: its message said
    "got 5" (the string's characters) as if five captions were given. The scorer stays usable
    after it (pycocoevalcap's keeps its lock held, and its next call waits forever)."""
    meteor = Meteor()
    gts = {1: ["a dog runs on the grass"]}
    with pytest.raises(AssertionError, match="got a string of 5 characters, not a list"):
        meteor.compute_score(gts, {1: "a dog"})
    assert meteor.lock.acquire(timeout=1)  # released when the call raised
    meteor.lock.release()
    score, scores = meteor.compute_score(gts, {1: ["a dog runs on the grass"]})
    assert score == 1.0 and scores == [1.0]
