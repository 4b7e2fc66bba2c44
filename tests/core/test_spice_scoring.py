"""SPICE graph building and matching (metric-spec §6.1 step 5, §6.2)."""

from __future__ import annotations

import gzip
import json
import math
from pathlib import Path

import pytest

from capeval_core.metrics.spice import Spice, SpicePrepared, match_tuples
from capeval_core.spice.corenlp import jar_order
from capeval_core.spice.graph import Concept, SceneGraph


def syn(table):
    """A toy synset lookup: word -> set of ids."""
    return lambda w: frozenset(table.get(w, ()))


def score(cand, refs, synsets=True):
    """Score hand-written tuples through Spice.segment (no parsing)."""
    texts = {("c",): "c", **{(f"r{k}",): f"r{k}" for k in range(len(refs))}}
    tuples = {"c": tuple(cand), **{f"r{k}": tuple(r) for k, r in enumerate(refs)}}
    metric = Spice(synsets=synsets)
    metric._synsets = lambda: (
        syn({"kid": {1}, "child": {1}, "sofa": {2}, "couch": {2}}) if synsets else None
    )
    return metric.segment(
        ("c",), tuple((f"r{k}",) for k in range(len(refs))), SpicePrepared(tuples, texts)
    )


def test_synonym_merge_in_reference_graph():
    g = SceneGraph(syn({"kid": {1}, "child": {1}}))
    g.add_tuples([("kid",), ("child",), ("kid", "small"), ("child", "small")])
    assert len(g.nodes) == 1
    assert g.nodes[0].obj.strings == ("kid", "child")
    assert [str(a) for a in g.nodes[0].attributes] == ["small"]


def test_no_merge_without_synsets():
    g = SceneGraph(None)
    g.add_tuples([("kid",), ("child",)])
    assert len(g.nodes) == 2


def test_be_prefix_stripped_and_duplicate_edges_merged():
    g = SceneGraph(None)
    g.add_tuples([("cat", "be on", "table"), ("cat", "on", "table")])
    assert [(s, str(r), t) for s, r, t in g.edges] == [(0, "on", 1)]


def test_synonym_match_and_status():
    value, d = score(
        [("kid",), ("couch",), ("kid", "on", "couch")],
        [[("child",), ("sofa",), ("child", "on", "sofa")]],
    )
    assert value == pytest.approx(1.0)
    assert [t.status for t in d.candidate] == ["synonym", "synonym", "synonym"]


def test_no_one_to_one_constraint():
    # two candidate tuples both match the one merged reference tuple: tp = 2, fn = -1
    d = SceneGraph(syn({"a": {1, 2}}))
    cands = [(Concept(("x",), frozenset({1})),), (Concept(("y",), frozenset({2})),)]
    refs = [(Concept(("a",), frozenset({1, 2})),)]
    first, status, hit = match_tuples(cands, refs)
    assert first == [0, 0] and status == ["synonym", "synonym"] and hit == [True]
    assert d is not None


def test_the_match_counted_is_the_first_and_only_it_is_marked_on_the_reference_side():
    """spice-1.0.jar's TupleSet.match_similar stops at a candidate tuple's first matching
    reference tuple and marks only that one true in its -detailed output; capeval marked every
    reference tuple any candidate tuple matched (R then did not follow from the marks), and
    called a tuple "exact" when a later, uncounted reference tuple shared its strings."""
    dog = Concept(("dog",), frozenset({1}))
    puppy = Concept(("puppy",), frozenset({1}))
    first, status, hit = match_tuples([(dog,)], [(puppy,), (dog,)])
    assert first == [0] and status == ["synonym"] and hit == [True, False]


def test_reference_marks_are_the_jars_on_a_train2014_item():
    """COCO train2014 captions: spice-1.0.jar with CoreNLP 3.6.0 (-detailed -subset) marks
    (picture) and (man) true and (view/scene) false (its -detailed output); tp = 2 of 18."""
    refs = [
        "a man taking a picture of a bird",
        "a man taking a picture of a bus 's side view mirror",
        "a man taking a picture of a cake with a construction scene on top",
        "a man taking a picture of a car",
    ]
    cand = "a man taking a picture of a battery source giving electricity to various devices"
    d = Spice().score([cand], [refs]).segments[0].details
    total = d.categories["All"]
    assert (total.tp, total.fn) == (2, 16)
    assert sorted(str(t) for t in d.reference if t.status == "matched") == ["(man)", "(picture)"]


def test_precision_recall_f():
    value, d = score([("dog",), ("cat",)], [[("dog",), ("grass",), ("dog", "brown")]])
    all_ = d.categories["All"]
    assert (all_.tp, all_.fp, all_.fn) == (1, 1, 2)
    assert all_.precision == pytest.approx(0.5)
    assert all_.recall == pytest.approx(1 / 3)
    assert value == pytest.approx(2 * 0.5 / 3 / (0.5 + 1 / 3))


def test_nan_categories_where_reference_has_none():
    _, d = score([("dog",), ("dog", "red")], [[("dog",)]])
    assert math.isnan(d.categories["Color"].f)
    assert math.isnan(d.categories["Attribute"].f)
    assert d.categories["Object"].f == pytest.approx(1.0)
    assert not math.isnan(d.categories["All"].f)


def test_color_count_size_categories():
    _, d = score(
        [("dog",), ("dog", "white"), ("dog", "two"), ("dog", "big")],
        [[("dog",), ("dog", "white"), ("dog", "two"), ("dog", "small")]],
    )
    assert d.categories["Color"].f == pytest.approx(1.0)
    assert d.categories["Cardinality"].f == pytest.approx(1.0)
    assert d.categories["Size"].f == 0.0


def test_empty_candidate_and_reference():
    value, d = score([], [[("dog",)]])
    assert value == 0.0 and d.categories["All"].precision == 0.0
    value, d = score([("dog",)], [[]])
    assert value == 0.0 and d.categories["All"].recall == 0.0
    assert math.isnan(d.categories["Object"].f)


def test_corpus_is_mean_of_image_f():
    metric = Spice()
    result = metric.score(["a dog on the grass", "a red bus"], [["a dog on grass"], ["a car"]])
    values = [s.value for s in result.segments]
    assert result.value == pytest.approx(sum(values) / 2)
    assert "Object" in result.details.categories


def test_signature_records_parser_and_options():
    sig = str(Spice().signature())
    assert "parser:stanford-pcfg|" in sig and "synsets:True" in sig
    # the shipped grammar's source (CoreNLP 3.6.0's englishPCFG: CRC and size), the rules
    assert "model:stanford-pcfg-1/englishPCFG-c7b6ced1-1883795/" in sig and "/rules-" in sig
    assert str(Spice(synsets=False).signature()) != sig


@pytest.mark.parametrize("retired", ["stanford-emulation", "spacy-sm"])
def test_a_retired_parser_is_refused_naming_the_one_left(retired):
    """A signature of an earlier version names its parser; asking for it again gets one line
    saying what it was and which parser gives SPICE's numbers, never another parse."""
    from capeval_core.errors import InputError, OptionError
    from capeval_core.spice.parse import CaptionParser, model_identity

    with pytest.raises(OptionError, match=f"parser '{retired}' .* retired.* use 'stanford-pcfg'"):
        Spice(parser=retired)
    for call in (lambda: CaptionParser(retired), lambda: model_identity(retired)):
        with pytest.raises(InputError, match="retired") as caught:
            call()
        assert "\n" not in str(caught.value)
    with pytest.raises(OptionError, match="`parser` must be one of 'stanford-pcfg'"):
        Spice(parser="stanford")


def test_reference_graph_shared_by_candidates_of_one_reference_set():
    """Judgment sets score several candidates against one reference set: its merged graph
    is built once per batch, and each candidate scores as it would alone."""
    refs = ["a dog on the grass", "a brown dog running"]
    cands = ["a dog on grass", "a cat", "a brown dog"]
    together = Spice().score(cands, [refs] * 3)
    alone = [Spice().score([c], [refs]).segments[0] for c in cands]
    assert [s.value for s in together.segments] == [s.value for s in alone]
    assert [s.details.reference for s in together.segments] == [a.details.reference for a in alone]


def test_shared_work_parses_each_uncached_caption_once(tmp_path, monkeypatch):
    """Scored in parts by workers, SPICE first parses the set's uncached captions in pieces
    into the parse cache (each distinct caption once), which the parts then read."""
    from capeval_core.metrics import make_batch
    from capeval_core.spice import stanford_pcfg
    from capeval_core.spice.parse import CaptionParser

    monkeypatch.setenv("CAPEVAL_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(stanford_pcfg, "PARALLEL_MIN", 1)  # the parser's thresholds
    monkeypatch.setattr(stanford_pcfg, "MIN_CHUNK", 1)
    batch = make_batch(
        ["a dog on a bed", "a cat on a mat"],
        [("a dog lying on a bed", "a cat on a mat"), ("a cat on a mat", "a red mat")],
        "whitespace",
    )
    work = Spice(tokenizer="whitespace").shared_work([batch.part(0, 1), batch.part(1, 2)], 3)
    texts = [t for call in work for t in call.args[0]]
    assert sorted(texts) == sorted(
        {"a dog on a bed", "a cat on a mat", "a dog lying on a bed", "a red mat"}
    )
    assert len(work) == 2  # four captions in (about) three pieces of at least two
    for call in work:
        call()
    assert CaptionParser().uncached(texts) == []
    assert Spice(tokenizer="whitespace").shared_work([batch], 3) == []  # nothing left to do


# -- against the jar: its tuples in, its per-image scores out ---------------------------------
#: spice-1.0.jar with CoreNLP 3.6.0, `-detailed -subset` as coco-caption runs it, on 500 COCO
#: train2014 images (candidate: first caption by annotation id, references: the others),
#: with each caption's proposed tuples from tools/spice_oracle/SpiceOracle.java; written by
#: tools/spice_oracle/make_scoring_golden.py.
SCORING_GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "spice-oracle-scores.json.gz"


def test_jar_tuples_give_the_jar_per_image_scores():
    from collections import defaultdict

    from capeval_core.resources import coco_captions
    from capeval_core.spice.matching import CATEGORIES

    with gzip.open(SCORING_GOLDEN, "rt", encoding="utf-8") as fh:
        golden = json.load(fh)
    by_image = defaultdict(list)
    for c in coco_captions("train"):
        by_image[c.image_id].append(c.annotation_id)
    jar_tuples = {int(i): tuple(jar_order(ts)) for i, ts in golden["tuples"].items()}
    metric = Spice()
    mismatched = []
    for item in golden["images"]:
        ids = sorted(by_image[item["image_id"]])
        texts = {(f"c{i}",): f"c{i}" for i in ids}
        prepared = SpicePrepared({f"c{i}": jar_tuples[i] for i in ids}, texts)
        _, details = metric.segment((f"c{ids[0]}",), tuple((f"c{i}",) for i in ids[1:]), prepared)
        for cat in CATEGORIES:
            jar, ours = item["scores"][cat], details.categories[cat]
            same = (jar["tp"], jar["fp"], jar["fn"]) == (ours.tp, ours.fp, ours.fn) and (
                math.isnan(ours.f)
                if jar["f"] is None
                else ours.f == pytest.approx(jar["f"], abs=1e-12)
            )
            if not same:
                mismatched.append((item["image_id"], cat, jar, ours))
    assert len(golden["images"]) == 500
    assert mismatched == []
