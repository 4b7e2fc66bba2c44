"""Triplet consensus labels (ABSTRACT-50S, PASCAL-50S) on small .mat files written in the
real layout: one struct array ``triplets`` with fields A, B, C and rating, as MATLAB saves
it (1xN or Nx1; A/B/C as cells holding a char array, or as plain char arrays)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.io import loadmat, savemat

from capeval_core.errors import JudgmentFormatError, OptionError
from capeval_core.judgments import load_judgments
from capeval_core.judgments.consensus import match_triplets, read_triplets
from capeval_core.judgments.matfile import elements, field_of, number_of, text_of
from capeval_core.judgments.protocols import (
    ABSTRACT50S,
    ALL_REFERENCES,
    PASCAL50S,
    accuracy_signature,
    missing_labels_warning,
    protocol_for,
)
from tests.core.consensus_files import (
    PASCAL_ROWS,
    write_abstract,
    write_pascal_pairs,
    write_pascal_refs,
    write_triplets,
)


def test_scipy_struct_array_layouts_read_the_same(tmp_path):
    """How scipy returns the struct array: records without squeeze_me/struct_as_record,
    objects with them; the accessors read both, 1xN and Nx1, cells and char arrays."""
    rows = [("ref one", "b cand", "c cand", 1), ("ref two", "b cand", "c cand", -1)]
    for shape in ("row", "column"):
        for strings in ("cell", "char"):
            path = write_triplets(tmp_path / "t.mat", rows, shape=shape, strings=strings)
            raw = loadmat(path)["triplets"]
            assert raw.dtype.names == ("A", "B", "C", "rating")  # a record array, 2-D
            assert raw.shape == ((1, 2) if shape == "row" else (2, 1))
            squeezed = loadmat(path, squeeze_me=True, struct_as_record=False)["triplets"]
            assert squeezed.shape == (2,)  # objects, 1-D either way
            for structs in (elements(raw), elements(squeezed)):
                got = [
                    (
                        text_of(field_of(s, ("A",), path, "triplets", i), path, "A", i),
                        number_of(field_of(s, ("rating",), path, "triplets", i), path, "r", i),
                    )
                    for i, s in enumerate(structs)
                ]
                assert got == [("ref one", 1.0), ("ref two", -1.0)], (shape, strings)
            assert [t.rating for t in read_triplets(path)] == [1, -1]


def test_one_triplet_file_is_a_list_of_one(tmp_path):
    path = write_triplets(tmp_path / "t.mat", [("r", "b", "c", -1)])
    (t,) = read_triplets(path)
    assert (t.record, t.a, t.b, t.c, t.rating) == (1, "r", "b", "c", -1)


# -- ABSTRACT-50S ---------------------------------------------------------------------------
@pytest.mark.parametrize(("shape", "strings"), [("row", "cell"), ("column", "char")])
def test_abstract50s_loads_400_labelled_pairs_200_hc_200_hi(tmp_path, shape, strings):
    write_abstract(tmp_path)
    rows = [
        (
            f"scene {i // 2} ref {k}",
            f"b {i}",
            f"c {i}",
            (1 if i % 2 == 0 else -1) * (1 - 2 * (k == 2)),
        )
        for i in range(400)
        for k in range(3)
    ]
    write_triplets(tmp_path / "consensus_abstract.mat", rows, shape=shape, strings=strings)
    js = load_judgments(tmp_path, "abstract50s")
    assert (len(js), js.n_read, js.preset) == (400, 400, "clipscore-table4")
    assert np.isfinite(js.preferences()).all()
    cats = js.categories()
    assert cats[:200] == ["HC"] * 200 and cats[200:] == ["HI"] * 200
    assert [(it.votes_a, it.votes_b, it.preferred) for it in js.items[:2]] == [
        (2, 1, "a"),
        (1, 2, "b"),
    ]
    first = js.items[0]
    assert (first.candidate_a, first.candidate_b) == ("b 0", "c 0")
    assert len(first.references) == 48 and first.references[0] == "scene 0 ref 0"
    assert missing_labels_warning(js) is None
    assert any("400 of 400 pairs labelled, 0 human ties" in n for n in js.notes), js.notes
    assert js.source == (
        "abstract48S.json",
        "abstract_candsB.json",
        "abstract_candsC.json",
        "consensus_abstract.mat",
    )


def test_abstract50s_from_the_consensus_file_alone(tmp_path):
    write_abstract(tmp_path, n_pairs=4, lists=False, refs=False)
    js = load_judgments(tmp_path / "consensus_abstract.mat", "abstract50s")
    assert [(it.candidate_a, it.candidate_b) for it in js.items] == [
        ("b 0", "c 0"),
        ("b 1", "c 1"),
        ("b 2", "c 2"),
        ("b 3", "c 3"),
    ]
    assert js.preferences().tolist() == [1, -1, 1, -1]
    # references: the triplets' A sentences
    assert js.items[1].references == ("scene 0 ref 0", "scene 0 ref 1", "scene 0 ref 2")
    assert js.source == ("consensus_abstract.mat",)
    assert any("the triplets' A sentences" in n for n in js.notes)
    assert any("no categories" in n for n in js.notes)  # 4 pairs are not the 400
    assert js.categories() == [None] * 4


def test_abstract50s_mismatched_triplets_and_pairs_without_triplets(tmp_path):
    rows = [
        ("r0", "b 0", "c 0", 1),
        ("r1", "b 0", "c 0", 1),
        ("r2", "B  0 ", "c 0", -1),  # whitespace and case do not matter
        ("x", "not a pair", "c 1", 1),  # matches nothing
        ("r3", "b 2", "c 2", -1),
        ("y", "b 9", "c 9", 1),  # matches nothing
    ]
    write_abstract(tmp_path, n_pairs=4, rows=rows)
    js = load_judgments(tmp_path, "abstract50s")
    assert len(js) == 4  # references come from abstract48S.json: every pair stays
    assert js.preferences()[[0, 2]].tolist() == [1, -1]
    assert np.isnan(js.preferences()[[1, 3]]).all()
    notes = "\n".join(js.notes)
    assert "2 triplets of consensus_abstract.mat match no pair" in notes
    assert "records 4, 6" in notes
    assert "2 pairs have no triplet in consensus_abstract.mat, so no label (pairs 2, 4)" in notes
    assert missing_labels_warning(js) == (
        "2 of 4 pairs (50.0%) have no human label; accuracies use the 2 labelled pairs."
    )
    assert (js.items[0].votes_a, js.items[0].votes_b) == (2, 1)


def test_abstract50s_ties_and_swapped_candidates(tmp_path):
    rows = [
        ("r0", "b 0", "c 0", 1),
        ("r1", "b 0", "c 0", -1),  # 1 vs 1: a human tie
        ("r2", "c 1", "b 1", 1),  # B and C swapped: +1 means "c 1", candidate b
        ("r3", "c 1", "b 1", 1),
        ("r4", "b 1", "c 1", 1),  # same pair, usual order: candidate a
    ]
    write_abstract(tmp_path, n_pairs=2, rows=rows)
    js = load_judgments(tmp_path, "abstract50s")
    assert [(it.votes_a, it.votes_b, it.preferred) for it in js.items] == [
        (1, 1, "tie"),
        (1, 2, "b"),
    ]
    assert js.preferences().tolist() == [0, -1]
    assert any("1 human ties" in n for n in js.notes)
    # the tie is a label: it is broken (or dropped) by the preset's human-tie rule
    assert missing_labels_warning(js) is None


def test_abstract50s_without_the_consensus_file_warns_everywhere(tmp_path):
    write_abstract(tmp_path, n_pairs=2)
    (tmp_path / "consensus_abstract.mat").unlink()
    js = load_judgments(tmp_path, "abstract50s")
    assert np.isnan(js.preferences()).all()
    assert missing_labels_warning(js) == (
        "None of the 2 pairs has a human label (no human labels: consensus_abstract.mat not "
        "found), so there is no accuracy to compute."
    )


@pytest.mark.parametrize(
    ("rating", "message"),
    [
        (math.nan, r"rating is NaN: a missing judgment, not a tie"),
        (2.0, r"rating must be \+1 \(B more like A\) or -1 \(C more like A\), got 2"),
        (0.0, r"got 0$"),
    ],
)
def test_bad_ratings_are_errors_naming_file_record_and_field(tmp_path, rating, message):
    rows = [("r0", "b 0", "c 0", 1), ("r1", "b 0", "c 0", rating)]
    write_abstract(tmp_path, n_pairs=1, rows=rows)
    with pytest.raises(JudgmentFormatError, match=message) as info:
        load_judgments(tmp_path, "abstract50s")
    assert str(info.value).startswith(
        "consensus_abstract.mat, record 2, column 'triplets.rating': "
    ), info.value


def test_truncated_consensus_file(tmp_path):
    write_abstract(tmp_path, n_pairs=2)
    path = tmp_path / "consensus_abstract.mat"
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(JudgmentFormatError, match=r"^consensus_abstract\.mat: cannot read"):
        load_judgments(tmp_path, "abstract50s")


def test_missing_field_and_foreign_file(tmp_path):
    write_abstract(tmp_path, n_pairs=1)
    t = np.zeros((1, 1), dtype=[("A", "O"), ("B", "O"), ("C", "O")])
    t[0, 0] = ("r", "b 0", "c 0")
    savemat(tmp_path / "consensus_abstract.mat", {"triplets": t})
    with pytest.raises(JudgmentFormatError, match=r"record 1, column 'triplets\.rating'"):
        load_judgments(tmp_path, "abstract50s")
    # triplets that name none of the pairs: the wrong file, not an unlabelled set
    write_triplets(tmp_path / "consensus_abstract.mat", [("r", "p", "q", 1)])
    with pytest.raises(JudgmentFormatError, match=r"is this the consensus file"):
        load_judgments(tmp_path, "abstract50s")


def test_repeated_candidates_are_given_to_their_pairs_in_order():
    from capeval_core.judgments.consensus import Triplet

    pairs = [("same a", "same b"), ("other", "pair"), ("same a", "same b")]
    triplets = [
        Triplet(1, "r1", "same a", "same b", 1),
        Triplet(2, "r2", "same a", "same b", 1),
        Triplet(3, "r3", "other", "pair", -1),
        Triplet(4, "r4", "same a", "same b", -1),
    ]
    m = match_triplets(pairs, triplets, "c.mat")
    assert [(p.votes_a, p.votes_b) for p in m.pairs] == [(2, 0), (0, 1), (0, 1)]
    # two runs for three pairs sharing their candidates cannot be told apart
    m = match_triplets([*pairs, ("same a", "same b")], triplets, "c.mat")
    assert m.ambiguous == (1, 2, 4) and m.pairs[0] is None and m.pairs[1] is not None


def test_kilickaya2017_scores_all_48_references_and_drops_ties(tmp_path):
    write_abstract(tmp_path, n_pairs=4)
    js = load_judgments(tmp_path, "abstract50s", "kilickaya2017")
    protocol = protocol_for(js)
    assert protocol is ABSTRACT50S["kilickaya2017"]
    assert protocol.sampling == (ALL_REFERENCES, 1) and protocol.human_tie == "drop"
    sig = accuracy_signature(
        "bleu_4|tok:ptb",
        js,
        n_references=ALL_REFERENCES,
        draws=1,
        seed=0,
        metric_tie="half",
        human_tie="drop",
    )
    assert sig == (
        "bleu_4|tok:ptb|pairwise:abstract50s|preset:kilickaya2017|labels:triplet-majority|"
        "refs:triplets:allx1|seed:0|metric-tie:half|human-tie:drop"
    )


def test_unknown_preset(tmp_path):
    write_abstract(tmp_path, n_pairs=1)
    with pytest.raises(OptionError, match=r"unknown preset 'published' for the abstract50s format"):
        load_judgments(tmp_path, "abstract50s", "published")


# -- PASCAL-50S -----------------------------------------------------------------------------
def test_pascal50s_consensus_labels_and_triplet_references(tmp_path):
    write_pascal_pairs(tmp_path, PASCAL_ROWS)
    write_triplets(
        tmp_path / "consensus_pascal.mat",
        [
            ("t ref 1", "a man", "a woman", -1),
            ("t ref 2", "a man", "a woman", -1),
            ("t ref 3", "a man", "a woman", 1),
            ("t ref 4", "a cat", "a dog", 1),  # swapped: votes for sent2
            ("t ref 5", "a cat", "a dog", -1),
        ],
    )
    js = load_judgments(tmp_path, "pascal50s")  # pascal50S.mat is not needed
    assert js.preset == "clipscore-table4" and js.source == (
        "pair_pascal.mat",
        "consensus_pascal.mat",
    )
    # the consensus disagrees with the 11 votes for pair 1: the labels are the triplets'
    assert [(it.votes_a, it.votes_b, it.preferred) for it in js.items] == [
        (1, 2, "b"),
        (1, 1, "tie"),
    ]
    assert js.items[0].references == ("t ref 1", "t ref 2", "t ref 3")
    assert [it.category for it in js.items] == ["HC", "MM"]
    # pair 3 has no triplet and so no references: dropped, and said so
    assert (js.n_read, js.n_kept) == (3, 2)
    assert js.dropped == {"no triplet and no reference file: no references": 1}
    assert any("1 pairs have no triplet" in n and "(pairs 3)" in n for n in js.notes)
    # with pascal50S.mat passed, pair 3 stays, unlabelled, with the file's references
    write_pascal_refs(tmp_path)
    with_refs = load_judgments(tmp_path, "pascal50s", refs_file=tmp_path / "pascal50S.mat")
    assert len(with_refs) == 3 and with_refs.items[2].preferred is None
    assert with_refs.items[0].references[0] == "file ref 0 of p1.jpg"
    assert "1 of 3 pairs (33.3%) have no human label" in missing_labels_warning(with_refs)


def test_pascal50s_table7_keeps_the_votes_and_the_file_references(tmp_path):
    write_pascal_pairs(tmp_path, PASCAL_ROWS)
    write_pascal_refs(tmp_path)
    js = load_judgments(tmp_path, "pascal50s", "clipscore-table7")
    assert [(it.votes_a, it.votes_b) for it in js.items] == [(2, 1), (1, 2), (1, 1)]
    assert js.source == ("pair_pascal.mat", "pascal50S.mat")
    assert protocol_for(js).labels == "votes" and protocol_for(js).note


def test_pascal50s_consensus_presets_need_the_consensus_file(tmp_path):
    write_pascal_pairs(tmp_path, PASCAL_ROWS)
    write_pascal_refs(tmp_path)
    with pytest.raises(JudgmentFormatError) as info:
        load_judgments(tmp_path, "pascal50s", "spice-paper")
    assert str(info.value).startswith("consensus_pascal.mat: not found beside pair_pascal.mat")
    assert "clipscore-table7" in str(info.value)


def test_presets_are_named_after_papers_with_one_line_each():
    from capeval_core.judgments import LOADERS

    assert (
        list(LOADERS["pascal50s"].presets)
        == list(PASCAL50S)
        == [
            "clipscore-table4",
            "clipscore-table7",
            "spice-paper",
        ]
    )
    assert list(LOADERS["abstract50s"].presets) == ["clipscore-table4", "kilickaya2017"]
    assert PASCAL50S["spice-paper"].metric_tie == "correct"
    for presets in (PASCAL50S, ABSTRACT50S):
        for p in presets.values():
            assert "\n" not in p.description and len(p.description) < 300, p.name


def test_pycocoevalcap_smoothing_ranks_captions_without_a_matching_4gram():
    """The mechanism behind the clipscore-table7 BLEU-4 note: per caption, a candidate with
    no 4-gram in common with the references keeps a small non-zero BLEU-4 that follows its
    lower-order precisions, so such a pair is not a metric tie (it would be under a BLEU
    that scores 0 when one precision is 0)."""
    from capeval_core import score_many

    refs = [["a man is riding a brown horse on the beach"]] * 2
    cands = ["a man riding on a beach", "a dog sitting on a sofa"]  # no shared 4-gram
    (bleu,) = score_many(["bleu_4"], cands, refs, tokenizer="whitespace").values()
    values = [s.value for s in bleu.segments]
    details = [s.details for s in bleu.segments]
    assert [d.correct[3] for d in details] == [0, 0]
    assert all(0 < v < 1e-3 for v in values), values
    assert values[0] > values[1]  # more matched unigrams-trigrams: ranked first
    # the 4-gram factor is coco-caption's (0 + 1e-15) / (n + 1e-9)
    p = [
        (c + 1e-15) / (g + 1e-9) for c, g in zip(details[0].correct, details[0].guess, strict=True)
    ]
    expected = (p[0] * p[1] * p[2] * p[3]) ** 0.25 * details[0].brevity_penalty
    assert values[0] == pytest.approx(expected, rel=1e-12)


def test_bleu4_zero_ties_tool_reproduces_the_accuracy_and_counts_the_pairs(tmp_path, monkeypatch):
    """tools/bleu4_zero_ties.py: its draws are those of score_judgments (the same BLEU-4
    accuracy), and pairs of captions without a matching 4-gram become half-credit ties when
    such captions score 0."""
    import importlib.util
    from pathlib import Path

    from capeval_core.judgments.scoring import score_judgments
    from capeval_core.stats import pairwise_accuracy

    monkeypatch.setenv("CAPEVAL_CACHE_DIR", str(tmp_path / "cache"))
    spec = importlib.util.spec_from_file_location(
        "bleu4_zero_ties", Path(__file__).resolve().parents[2] / "tools" / "bleu4_zero_ties.py"
    )
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    write_pascal_pairs(tmp_path, PASCAL_ROWS)  # two-word candidates: never a 4-gram
    write_pascal_refs(tmp_path)
    js = load_judgments(tmp_path, "pascal50s", "clipscore-table7")
    rows = tool.report(js, tokenizer="whitespace")
    scores = score_judgments(js, ["bleu_4"], tokenizer="whitespace", workers=0)
    expected = pairwise_accuracy(
        scores.values_a["bleu_4"], scores.values_b["bleu_4"], js.preferences(), js.categories()
    ).as_dict()
    assert {c: r["accuracy"] for c, r in rows.items()} == expected
    assert rows["overall"]["pairs"] == 3 and rows["overall"]["both_zero"] == 1.0
    assert {r["accuracy_unsmoothed"] for r in rows.values()} == {0.5}
    no_consensus = ["--judgments", str(tmp_path), "--format", "pascal50s"]
    assert tool.main([*no_consensus, "--preset", "clipscore-table4"]) == 2
