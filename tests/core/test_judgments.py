"""Judgment loaders on tiny files written in each published shape (judgment-formats.md)."""

from __future__ import annotations

import json
import re
import warnings

import numpy as np
import pytest
from scipy.io import savemat

from capeval_core.errors import CapevalWarning, JudgmentFormatError
from capeval_core.judgments import LOADERS, load_judgments
from capeval_core.judgments.flickr8k import NO_REFERENCES_LEFT, OWN_REFERENCE

IMAGES = ("a.jpg", "b.jpg", "c.jpg")


def caption(image, k):
    return f"the {image[0]} picture shows thing number {k}"


def write_token(folder):
    lines = [f"{img}#{k}\t{caption(img, k)}" for img in IMAGES for k in range(5)]
    (folder / "Flickr8k.token.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")


@pytest.fixture
def flickr(tmp_path):
    write_token(tmp_path)
    expert = [
        "a.jpg\ta.jpg#0\t1\t1\t2",  # own reference -> dropped by the preset
        "a.jpg\tb.jpg#1\t1\t2\t1",
        "b.jpg\tc.jpg#3\t4\t3\t4",
        "b.jpg\tb.jpg#2\t4\t4\t4",  # own reference
        "c.jpg\ta.jpg#4\t2\t2\t3",
    ]
    (tmp_path / "ExpertAnnotations.txt").write_text("\n".join(expert) + "\n")
    cf = [
        "a.jpg\ta.jpg#0\t1.0\t3\t0",
        "a.jpg\tb.jpg#1\t0.0\t0\t3",
        "b.jpg\tc.jpg#0\t0.333\t1\t2",
        *(f"c.jpg\tc.jpg#{k}\t1.0\t3\t0" for k in range(5)),  # every reference a candidate
    ]
    (tmp_path / "CrowdFlowerAnnotations.txt").write_text("\n".join(cf) + "\n")
    return tmp_path


def test_registry_names():
    assert set(LOADERS) == {
        "graded",
        "pairwise",
        "flickr8k-expert",
        "flickr8k-cf",
        "composite",
        "pascal50s",
        "abstract50s",
        "thumb",
    }


def test_flickr8k_expert_published(flickr):
    js = load_judgments(flickr, "flickr8k-expert")  # the folder, as distributed
    assert (js.n_read, js.n_kept, len(js)) == (5, 3, 9)
    assert js.dropped == {OWN_REFERENCE: 2}
    assert js.kendall_variant == "c" and js.preset == "published"
    assert js.score_names == ("expert",)
    assert js.human().tolist() == [1, 2, 1, 4, 3, 4, 2, 2, 3]
    first = js.items[0]
    assert first.candidate == caption("b.jpg", 1)
    assert first.references == tuple(caption("a.jpg", k) for k in range(5))
    assert js.describe() == f"5 read, 2 dropped ({OWN_REFERENCE}: 2), 3 scored as 9 rows"
    assert js.source == ("ExpertAnnotations.txt", "Flickr8k.token.txt")


def test_flickr8k_expert_mean_of_experts(flickr):
    js = load_judgments(flickr / "ExpertAnnotations.txt", "flickr8k-expert", "mean-of-experts")
    assert (js.n_read, js.n_kept, len(js)) == (5, 3, 3)
    assert js.score_names == ("mean", "e1", "e2", "e3")
    np.testing.assert_allclose(js.human(), [4 / 3, 11 / 3, 7 / 3])
    assert js.human("e3").tolist() == [1, 4, 3]
    assert js.content_digest != load_judgments(flickr, "flickr8k-expert").content_digest


def test_flickr8k_crowdflower_reference_removal(flickr):
    js = load_judgments(flickr, "flickr8k-cf")
    assert (js.n_read, js.n_kept, len(js)) == (8, 3, 3)
    assert js.dropped == {NO_REFERENCES_LEFT: 5}
    assert js.kendall_variant == "b"
    a_rows = [it for it in js.items if it.image_id == "a.jpg"]
    # a.jpg#0 is a CrowdFlower candidate of a.jpg: removed from all of a.jpg's rows
    assert all(it.references == tuple(caption("a.jpg", k) for k in range(1, 5)) for it in a_rows)
    assert js.items[2].references == tuple(caption("b.jpg", k) for k in range(5))
    assert js.human().tolist() == [1.0, 0.0, 0.333]


def _coco(path, refs):
    anns = [
        {"image_id": img, "id": 10 * img + k, "caption": c}
        for img, caps in refs.items()
        for k, c in enumerate(caps)
    ]
    path.write_text(json.dumps({"images": [{"id": i} for i in refs], "annotations": anns}))


def test_composite_tidy_columns_by_name(tmp_path):
    _coco(tmp_path / "captions_val2014.json", {1: ["a cat", "a dog on a mat"], 2: ["two men"]})
    (tmp_path / "coco_correctness.csv").write_text(
        "Input.image_url,Input.caption,Answer.Correctness,Answer.Thoroughness\n"
        "http://x/COCO_val2014_000000000001.jpg,a cat,5,4\n"
        "http://x/COCO_val2014_000000000001.jpg,a bird,1,2\n"
        "http://x/COCO_val2014_000000000002.jpg,two women,3,3\n"
    )
    js = load_judgments(tmp_path, "composite")
    assert (js.n_read, len(js)) == (3, 3)
    assert js.score_names == ("correctness",) and js.kendall_variant == "c"
    assert js.human().tolist() == [5, 1, 3]
    assert js.items[0].references == ("a dog on a mat",)  # the rated reference removed
    assert js.items[1].references == ("a cat", "a dog on a mat")
    assert any("removed" in n for n in js.notes)
    thorough = load_judgments(tmp_path, "composite", "thoroughness")
    assert thorough.human().tolist() == [4, 2, 3]


def test_composite_explicit_mapping_and_clear_error(tmp_path):
    _coco(tmp_path / "refs.json", {1: ["a cat"]})
    f = tmp_path / "mine.csv"
    f.write_text("pic,words,grade\n1.jpg,a dog,2\n")
    with pytest.raises(ValueError, match=r"mine\.csv, line 1, column 'image': cannot find"):
        load_judgments(f, "composite", references_from=tmp_path / "refs.json")
    js = load_judgments(
        f,
        "composite",
        references_from=tmp_path / "refs.json",
        columns={"image": "pic", "candidate": "words", "correctness": "grade"},
    )
    assert js.items[0].candidate == "a dog" and js.items[0].references == ("a cat",)


def test_composite_file_naming_no_source_says_how_to_name_one(tmp_path):
    """Its caption file in the folder, a file whose name names no source was told to put
    its caption file in the folder; the fix is its name, or a source column."""
    write_token(tmp_path)
    rows = f"a.jpg,{caption('b.jpg', 0)},4\na.jpg,a red bus,1\n"
    (tmp_path / "ratings.csv").write_text("image,candidate,correctness\n" + rows)
    with pytest.raises(JudgmentFormatError) as info:
        load_judgments(tmp_path, "composite")
    message = str(info.value)
    assert message.startswith("ratings.csv: no source for this file, so no caption file")
    assert "name the file after its source (e.g. '8k_ratings.csv') or add a source column" in (
        message
    )
    (tmp_path / "ratings.csv").rename(tmp_path / "8k_ratings.csv")
    by_name = load_judgments(tmp_path, "composite")
    (tmp_path / "8k_ratings.csv").unlink()
    with_column = "".join(f"{r},Flickr8k\n" for r in rows.splitlines())
    (tmp_path / "ratings.csv").write_text("image,candidate,correctness,source\n" + with_column)
    by_column = load_judgments(tmp_path, "composite")
    assert by_name.items == by_column.items and len(by_name) == 2


def test_composite_folder_of_capital_csv_suffixes(tmp_path):
    """A copy from Windows (8k_tidy.CSV) was "no .csv files in this folder"."""
    write_token(tmp_path)
    rows = f"image,candidate,correctness\na.jpg,{caption('b.jpg', 0)},4\na.jpg,a bus,1\n"
    (tmp_path / "8k_tidy.CSV").write_text(rows)
    js = load_judgments(tmp_path, "composite")
    assert js.source[0] == "8k_tidy.CSV" and js.human().tolist() == [4, 1]


def test_composite_packed_amt_files(tmp_path):
    write_token(tmp_path)
    row = f"http://x/a.jpg;{caption('a.jpg', 0)};a red bus;a small boat;5;2;1"
    (tmp_path / "8k_correctness.csv").write_text(f'HITId,Input.data\nh1,"{row}"\n')
    (tmp_path / "8k_throughness.csv").write_text(f'HITId,Input.data\nh1,"{row}"\n')
    js = load_judgments(tmp_path, "composite")
    assert (js.n_read, len(js)) == (1, 3)
    assert js.human().tolist() == [5, 2, 1]
    assert js.items[0].references == tuple(caption("a.jpg", k) for k in range(1, 5))
    assert js.items[1].references == tuple(caption("a.jpg", k) for k in range(5))
    assert any("throughness" in n for n in js.notes)


def _pascal(folder, n_refs=50, legacy=False):
    names = ["p1.jpg", "p2.jpg"]
    inputs = np.zeros((1, 3), dtype=[("name", "O"), ("sent1", "O"), ("sent2", "O")])
    rows = [
        ("p1.jpg", "a man", "a woman"),
        ("p2.jpg", "a dog", "a cat"),
        ("p1.jpg", "a tree", "a road"),
    ]
    for i, r in enumerate(rows):
        inputs[0, i] = r
    result = np.zeros((1, 3), dtype=[("result", "O")])
    result[0, 0] = (np.array([[1, 1, 1, -1, -1]]),)
    result[0, 1] = (np.array([[1, -1, -1, -1]]),)
    result[0, 2] = (np.array([[1, 1, -1, -1]]),)
    savemat(
        folder / "pair_pascal.mat",
        {
            "new_input": inputs,
            "result": result,
            "category": np.array([[1, 2, 4]]),
            "new_data": np.array([[6, 6], [6, 7], [1, 2]]),
        },
    )
    name_field = "name" if legacy else "image"
    refs = np.zeros((1, 2), dtype=[(name_field, "O"), ("sentences", "O")])
    for i, name in enumerate(names):
        sents = np.empty((n_refs + 2, 1), dtype=object)
        for k in range(n_refs + 2):
            sents[k, 0] = f"ref {k} of {name}"
        refs[0, i] = (name, sents)
    savemat(folder / "pascal50S.mat", {"train_sent_final" if legacy else "refs": refs})


@pytest.mark.parametrize("legacy", [False, True])
def test_pascal50s(tmp_path, legacy):
    _pascal(tmp_path, legacy=legacy)
    js = load_judgments(tmp_path, "pascal50s", "clipscore-table7")
    assert js.kind == "pairwise" and (js.n_read, len(js)) == (3, 3)
    assert [it.category for it in js.items] == ["HC", "HI", "MM"]
    assert [(it.votes_a, it.votes_b, it.preferred) for it in js.items] == [
        (3, 2, "a"),
        (1, 3, "b"),
        (2, 2, "tie"),
    ]
    assert js.preferences().tolist() == [1, -1, 0]
    assert len(js.items[0].references) == 50  # the first 50 are the references
    assert js.items[0].references[0] == "ref 0 of p1.jpg"
    assert js.items[0].candidate_a == "a man" and js.items[0].candidate_b == "a woman"


def test_abstract50s(tmp_path):
    refs = [{"image_id": i, "caption": f"ref {k} of {i}"} for i in (1, 2) for k in range(48)]
    (tmp_path / "abstract48S.json").write_text(json.dumps(refs))
    (tmp_path / "abstract_candsB.json").write_text(
        json.dumps([{"image_id": 1, "caption": "b one"}, {"image_id": 2, "caption": "b two"}])
    )
    (tmp_path / "abstract_candsC.json").write_text(
        json.dumps([{"image_id": 1, "caption": "c one"}, {"image_id": 2, "caption": "c two"}])
    )
    js = load_judgments(tmp_path, "abstract50s")
    assert len(js) == 2 and len(js.items[0].references) == 48
    assert js.items[1].candidate_a == "b two" and js.items[1].preferred is None
    assert np.isnan(js.preferences()).all()
    assert "no human labels: consensus_abstract.mat not found" in js.notes
    # a consensus file without the `triplets` struct array is refused, not guessed at
    savemat(tmp_path / "consensus_abstract.mat", {"labels": np.array([[1.0, -1.0]])})
    with pytest.raises(JudgmentFormatError, match=r"column 'triplets': missing variable"):
        load_judgments(tmp_path, "abstract50s")


GRADED = [
    {
        "id": "x1",
        "image_id": 1,
        "candidate": "a dog runs",
        "references": ["a dog", "dog running"],
        "quality": 4,
        "fluency": 3.5,
        "system": "s1",
    },
    {
        "id": "x2",
        "image_id": 2,
        "candidate": "=cmd|' /C calc'!A0",
        "references": ["a cat"],
        "quality": 1,
        "fluency": 2,
        "system": "s2",
    },
]


def _write_graded(path, fmt):
    if fmt == "json":
        path.write_text(json.dumps(GRADED, indent=1))
    elif fmt == "jsonl":
        path.write_text("\n".join(json.dumps(r) for r in GRADED) + "\n")
    else:
        sep = "," if fmt == "csv" else "\t"
        lines = [
            sep.join(
                ["id", "image_id", "candidate", "ref_1", "ref_2", "quality", "fluency", "system"]
            )
        ]
        for r in GRADED:
            refs = [*r["references"], ""][:2]
            cells = [
                r["id"],
                str(r["image_id"]),
                r["candidate"],
                *refs,
                str(r["quality"]),
                str(r["fluency"]),
                r["system"],
            ]
            lines.append(sep.join(f'"{c}"' if "," in c and sep == "," else c for c in cells))
        path.write_text("\n".join(lines) + "\n")


@pytest.mark.parametrize("fmt", ["csv", "tsv", "json", "jsonl"])
def test_generic_graded_formats(tmp_path, fmt):
    path = tmp_path / f"judgments.{fmt}"
    _write_graded(path, fmt)
    js = load_judgments(path, "graded")
    assert js.score_names == ("quality", "fluency")
    assert [it.id for it in js.items] == ["x1", "x2"]
    assert js.items[0].references == ("a dog", "dog running")
    assert js.items[1].candidate == "=cmd|' /C calc'!A0"  # loaded verbatim, never evaluated
    assert js.human("fluency").tolist() == [3.5, 2.0]
    assert js.systems() == ["s1", "s2"] and js.items[0].image_id == "1"


def test_generic_graded_pipes_bom_and_coco_references(tmp_path):
    p = tmp_path / "g.csv"
    p.write_bytes("\ufeffcandidate,references,score\na dog,a dog ||| a pup,2\n,x,1\n".encode())
    js = load_judgments(p, "graded")
    assert js.items[0].references == ("a dog", "a pup") and js.items[0].id == "2"
    assert js.blank == (("candidate", "line 3"),) and "column 'candidate', line 3" in str(js)
    _coco(tmp_path / "captions.json", {7: ["seven a", "seven b"]})
    q = tmp_path / "h.tsv"
    q.write_text("image_id\tcandidate\tscore\n7\ta seven\t3\n")
    js = load_judgments(q, "graded", references_from=tmp_path / "captions.json")
    assert js.items[0].references == ("seven a", "seven b")
    assert js.source == ("h.tsv", "captions.json")


@pytest.mark.parametrize(
    "cell", ['"[""a dog running"", ""a dog on grass""]"', "\"['a dog running', 'a dog on grass']\""]
)
def test_a_references_cell_written_as_a_list_is_refused(tmp_path, cell):
    """A JSON or Python list in a CSV cell was read as one reference (brackets and all)."""
    p = tmp_path / "g.csv"
    p.write_text(f"candidate,references,score\na dog runs,{cell},3\n")
    where = r"g\.csv, line 2, column 'references': the cell is a written-out list "
    with pytest.raises(JudgmentFormatError, match=where + r".* references with \|\|\|"):
        load_judgments(p, "graded")
    p.write_text("candidate,references,score\na dog runs,[a photo] of a dog,3\n")
    assert load_judgments(p, "graded").items[0].references == ("[a photo] of a dog",)


@pytest.mark.parametrize("fmt", ["csv", "tsv"])
def test_references_one_per_line_are_refused(tmp_path, fmt):
    """Two references on two lines of a cell (a spreadsheet's Alt+Enter) were read as one
    reference, line break and all; inside a |||-separated cell, a line break stays part of
    its reference (COCO val2014 has such captions)."""
    sep = "," if fmt == "csv" else "\t"
    p = tmp_path / f"g.{fmt}"
    p.write_text(f'candidate{sep}references{sep}score\na dog{sep}"a dog runs\na pup"{sep}3\n')
    where = rf"g\.{fmt}, line 3, column 'references': the cell breaks its line"
    with pytest.raises(JudgmentFormatError, match=where + r".* references with \|\|\|"):
        load_judgments(p, "graded")
    p.write_text(f'candidate{sep}references{sep}score\na dog{sep}"a dog\nruns|||a pup"{sep}3\n')
    assert load_judgments(p, "graded").items[0].references == ("a dog\nruns", "a pup")


def test_one_reference_per_row_holding_short_pipes_warns(tmp_path):
    """References joined with '|' or '||' were read as one reference without a word; a set
    of one reference per row is valid, so it is loaded with a warning saying the separator."""
    p = tmp_path / "g.csv"
    p.write_text("candidate,references,score\na,a dog|a pup,1\nb,a cat||a kitten,2\nc,a bus,3\n")
    with pytest.warns(CapevalWarning, match=r"g\.csv: every row has one reference and 2 of"):
        js = load_judgments(p, "graded")
    assert js.items[0].references == ("a dog|a pup",)
    p.write_text("candidate,references,score\na,a dog|a pup,1\nb,a cat|||a kitten,2\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a row of two references: the separator is known
        load_judgments(p, "graded")
        p.write_text("candidate,references,score\na,a dog,1\nb,a cat,2\n")
        load_judgments(p, "graded")  # one reference per row, no pipe: no warning


def test_generic_graded_missing_score_is_dropped_and_reported(tmp_path):
    """The drop names the column and the line: "1 dropped (missing human score: 1)" sent
    the user searching the file for the empty cell."""
    p = tmp_path / "g.csv"
    p.write_text("candidate,references,score\na,b,1\nc,d,\ne,f,3\n")
    js = load_judgments(p, "graded")
    reason = "missing human score in column 'score'"
    assert (js.n_read, js.n_kept, js.dropped) == (3, 2, {reason: 1})
    assert js.dropped_at == {reason: "line 3"}
    assert js.describe() == f"3 read, 1 dropped ({reason} (line 3): 1), 2 scored"


def test_missing_scores_name_a_few_lines_and_how_many_more(tmp_path):
    p = tmp_path / "g.csv"
    rows = "".join(f"c{i},d,{'' if i % 2 else i},{i if i < 3 else ''}\n" for i in range(20))
    p.write_text("candidate,references,score,fluency\n" + rows)
    js = load_judgments(p, "graded", score_columns=["score", "fluency"])
    assert js.dropped == {
        "missing human score in column 'score'": 10,
        "missing human score in column 'fluency'": 8,
    }
    assert js.dropped_at == {
        "missing human score in column 'score'": "lines 3, 5, 7, 9, 11 and 5 more",
        "missing human score in column 'fluency'": "lines 6, 8, 10, 12, 14 and 3 more",
    }
    q = tmp_path / "g.json"
    q.write_text(
        json.dumps([{"candidate": "a", "references": ["b"], "score": s} for s in (1, None)])
    )
    js = load_judgments(q, "graded", score_columns=["score"])
    assert js.dropped_at == {"missing human score in column 'score'": "record 2, line 1"}


def test_blank_candidates_are_scored_and_said_with_line_and_column(tmp_path):
    """An empty candidate is scored as given (coco-caption scores an empty caption, and
    `capeval score` does too, with a warning), and the set's summary names where it is: the
    page said "15 read, 15 scored" and the empty caption went unnoticed."""
    p = tmp_path / "g.csv"
    p.write_text("candidate,references,score\na dog,a dog runs,3\n  ,a cat sits,2\n,x,\n")
    js = load_judgments(p, "graded")
    assert [it.candidate for it in js.items] == ["a dog", ""]  # the dropped row is not said
    assert str(js) == (
        "graded (g.csv): 3 read, 1 dropped (missing human score in column 'score' (line 4): 1), "
        "2 scored (blank captions scored as given: column 'candidate', line 3)"
    )
    p.write_text("candidate,references,score\na dog,a dog runs,3\n")
    assert "blank" not in load_judgments(p, "graded").describe()


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_blank_pairwise_candidates_are_scored_and_said_with_line_and_column(tmp_path, fmt):
    """The empty distractor of a forced choice always lost, lifting accuracy unsaid."""
    rows = [
        ("p1", "a dog runs", "a cat sits", "a dog running", "a"),
        ("p2", "two cats on a couch", "", "two cats sleeping on a couch", "a"),
        ("p3", "", "a bird flies", "a red car", "b"),
        ("p4", "a man", " ", "a man rides", "a"),
    ]
    names = ("id", "candidate_a", "candidate_b", "references", "preferred")
    p = tmp_path / f"p.{fmt}"
    if fmt == "csv":
        p.write_text(",".join(names) + "\n" + "".join(",".join(r) + "\n" for r in rows))
        where = "column 'candidate_a', line 4; column 'candidate_b', lines 3 and 5"
    else:
        p.write_text("".join(json.dumps(dict(zip(names, r, strict=True))) + "\n" for r in rows))
        where = (
            "column 'candidate_a', record 3, line 3; "
            "column 'candidate_b', records 2 (line 2) and 4 (line 4)"
        )
    js = load_judgments(p, "pairwise")
    assert [(it.candidate_a, it.candidate_b) for it in js.items][1:] == [
        ("two cats on a couch", ""),
        ("", "a bird flies"),
        ("a man", ""),
    ]
    assert (
        str(js) == f"pairwise (p.{fmt}): 4 read, 4 scored (blank captions scored as given: {where})"
    )


def test_an_empty_references_cell_is_refused_with_line_and_column(tmp_path):
    """A row with no reference at all cannot be scored: refused, naming where."""
    p = tmp_path / "p.csv"
    p.write_text("candidate_a,candidate_b,references,preferred\na dog,a cat,a dog,a\nx,y,,a\n")
    with pytest.raises(JudgmentFormatError) as err:
        load_judgments(p, "pairwise")
    assert str(err.value) == (
        "p.csv, line 3, column 'references': no references: every candidate needs at least one"
    )
    q = tmp_path / "g.csv"
    q.write_text("candidate,ref_1,ref_2,score\na dog,a dog,,3\nx, ,,1\n")
    with pytest.raises(JudgmentFormatError, match=r"^g\.csv, line 3, column 'ref_1': no ref"):
        load_judgments(q, "graded")


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_generic_pairwise(tmp_path, fmt):
    rows = [
        {
            "candidate_a": "a dog",
            "candidate_b": "a cat",
            "references": ["a dog runs"],
            "votes_a": 3,
            "votes_b": 1,
            "category": "HC",
        },
        {
            "candidate_a": "a man",
            "candidate_b": "a boy",
            "references": ["a man walks"],
            "votes_a": 2,
            "votes_b": 2,
            "category": "HM",
        },
    ]
    p = tmp_path / f"p.{fmt}"
    if fmt == "jsonl":
        p.write_text("\n".join(json.dumps(r) for r in rows))
    else:
        p.write_text(
            "candidate_a,candidate_b,references,votes_a,votes_b,category\n"
            + "".join(
                f"{r['candidate_a']},{r['candidate_b']},{r['references'][0]},{r['votes_a']},"
                f"{r['votes_b']},{r['category']}\n"
                for r in rows
            )
        )
    js = load_judgments(p, "pairwise")
    assert js.preferences().tolist() == [1, 0] and js.categories() == ["HC", "HM"]
    q = tmp_path / "pref.tsv"
    q.write_text("candidate_a\tcandidate_b\tref_1\tpreferred\na\tb\tc\tB\n")
    assert load_judgments(q, "pairwise").items[0].preferred == "b"


def test_a_pair_nobody_voted_on_has_no_label_not_a_tie(tmp_path):
    """votes 0 and 0 loaded as a tie, which the random human-tie rule then counted as a
    judged pair; it is an unlabelled one (said as such by the pages and the CLI)."""
    from capeval_core.judgments.protocols import label_counts

    p = tmp_path / "p.csv"
    p.write_text(
        "candidate_a,candidate_b,references,votes_a,votes_b\n"
        "a dog,a cat,a dog runs,3,1\na dog,a cat,a dog runs,0,0\na cat,a dog,a dog runs,2,2\n"
    )
    js = load_judgments(p, "pairwise")
    prefs = js.preferences()
    assert prefs[0] == 1 and np.isnan(prefs[1]) and prefs[2] == 0
    assert [it.preferred for it in js.items] == ["a", None, "tie"]
    assert label_counts(js)[1] == 2  # two labelled pairs of three
    both = tmp_path / "q.csv"
    both.write_text("candidate_a,candidate_b,references,votes_a,votes_b,preferred\n"
                    "a dog,a cat,a dog runs,0,0,tie\n")  # fmt: skip
    with pytest.raises(JudgmentFormatError, match=r"say nothing \(no vote, no label\)"):
        load_judgments(both, "pairwise")


def test_content_digest_is_content_only(tmp_path):
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    a.write_text("candidate,references,score\na dog,a pup,2\n")
    b.write_text("candidate,references,score\r\na dog,a pup,2.0\r\n")
    assert load_judgments(a, "graded").content_digest == load_judgments(b, "graded").content_digest


def test_scoring_is_cached_and_matches_direct_scores(tmp_path, monkeypatch, flickr):
    from capeval_core import score_many
    from capeval_core.judgments.scoring import score_judgments

    monkeypatch.setenv("CAPEVAL_CACHE_DIR", str(tmp_path / "cache"))
    js = load_judgments(flickr, "flickr8k-expert")
    seen = []
    keys = ["bleu_4", "rouge_l", "cider_d"]
    cold = score_judgments(
        js, keys, tokenizer="whitespace", on_progress=lambda d, t, label: seen.append((d, t))
    )
    assert seen[-1] == (3, 3) and not any(cold.from_cache.values())
    warm = score_judgments(js, keys, tokenizer="whitespace")
    assert all(warm.from_cache.values())
    uniq = js.items[::3]  # experts expanded: three identical rows per caption
    direct = score_many(
        keys, [it.candidate for it in uniq], [it.references for it in uniq], tokenizer="whitespace"
    )
    for k in keys:
        np.testing.assert_allclose(warm.values[k], np.repeat(direct[k].segment_values(), 3))
        assert warm.signatures[k] == str(direct[k].signature)


def test_pairwise_scoring_samples_references(tmp_path, monkeypatch):
    from capeval_core.judgments.scoring import score_judgments

    monkeypatch.setenv("CAPEVAL_CACHE_DIR", str(tmp_path / "cache"))
    _pascal(tmp_path)
    js = load_judgments(tmp_path, "pascal50s", "clipscore-table7")
    s = score_judgments(
        js, ["bleu_4"], tokenizer="whitespace", n_references=5, draws=3, seed=1, workers=0
    )
    assert s.values_a["bleu_4"].shape == (3, 3) and s.sampling["draws"] == 3


def test_worker_processes_give_the_serial_values(monkeypatch, tmp_path):
    """With workers, metrics whose items are independent are scored in parts by spawned
    processes; CIDEr-D (corpus IDF) stays whole. Every value equals the in-process one, the
    progress label names each part's metric and items done, and the file that took the
    batches to the workers is gone afterwards."""
    import tempfile

    monkeypatch.setattr("capeval_core.resources.available_cpus", lambda: 2)  # never capped

    import capeval_core.batch as batch
    import capeval_core.judgments.scoring as scoring
    from capeval_core.judgments.demo import demo_graded

    monkeypatch.setattr(batch, "MIN_PART", 4)
    js = demo_graded(6, seed=0)
    keys = ["bleu_4", "rouge_l", "cider_d", "meteor"]
    metrics = {k: batch.metric_class(k)(tokenizer="ptb") for k in keys}
    tasks = batch.plan_tasks([(k, None) for k in keys], metrics, len(js), 2)
    assert [t for t in tasks if t[0] == "cider_d"] == [("cider_d", 0, len(js))]
    assert sum(1 for t in tasks if t[0] == "meteor") == 4
    serial = scoring.score_judgments(js, keys, use_cache=False)
    seen = []
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    parallel = scoring.score_judgments(
        js,
        keys,
        workers=2,
        use_cache=False,
        on_progress=lambda d, t, label: seen.append((d, label)),
    )
    for k in keys:
        assert np.array_equal(parallel.values[k], serial.values[k]), k
    assert seen[-1][0] == len(keys)
    # the label moves as parts come back, naming the metric and the items done (it is said
    # again while the workers are busy: the caller's chance to stop the run)
    parts = [label for _, label in seen if label.startswith("meteor: ")]
    parts = [p for i, p in enumerate(parts) if i == 0 or p != parts[i - 1]]
    counts = [
        tuple(map(int, re.fullmatch(r"meteor: (\d+) of (\d+) items", p).groups())) for p in parts
    ]
    assert len(counts) == 3 and counts == sorted(counts) and counts[-1][0] < counts[-1][1], seen
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("failure", ["pool cannot start", "worker died"])
def test_scoring_survives_worker_failures(monkeypatch, failure):
    """A pool that cannot start, or a worker that dies, costs only speed: those parts are
    scored in this process, to the same values."""
    from concurrent.futures import Future
    from concurrent.futures.process import BrokenProcessPool

    import capeval_core.batch as batch
    import capeval_core.judgments.scoring as scoring
    from capeval_core.judgments.demo import demo_graded

    class DeadPool:
        def __init__(self, *args, **kwargs):
            if failure == "pool cannot start":
                raise OSError("no semaphores here")

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def submit(self, fn, *args):
            future = Future()
            future.set_exception(BrokenProcessPool("a worker died"))
            return future

        def shutdown(self, **kwargs):
            pass

    monkeypatch.setattr(batch, "MIN_PART", 4)
    js = demo_graded(4, seed=1)
    keys = ["bleu_4", "rouge_l", "cider_d"]
    serial = scoring.score_judgments(js, keys, use_cache=False)
    monkeypatch.setattr(batch, "ProcessPoolExecutor", DeadPool)
    rescued = scoring.score_judgments(js, keys, workers=2, use_cache=False)
    for k in keys:
        assert np.array_equal(rescued.values[k], serial.values[k]), k


def test_only_worker_processes_freeze_their_heap(monkeypatch):
    """A scoring worker freezes what it holds after a task (resources and caches: never
    rescanned by the collector); scoring in this process, e.g. in the app, never does."""
    import gc

    import capeval_core.batch as engine
    from capeval_core.metrics import make_batch

    batch = make_batch(["a dog runs"], [("a dog is running",)], "whitespace")
    gc.unfreeze()
    engine.score_metric("bleu", {}, "whitespace", [batch])
    assert gc.get_freeze_count() == 0 and gc.isenabled()
    monkeypatch.setattr(engine, "_IN_WORKER", True)
    try:
        values = engine.score_metric("bleu", {}, "whitespace", [batch])
        assert gc.get_freeze_count() > 0 and gc.isenabled()
    finally:
        gc.unfreeze()
    assert values["bleu_1"].shape == (1, 1)


def test_spice_in_workers_parses_shared_captions_first(monkeypatch, tmp_path):
    """SPICE scored in parts by workers: the uncached captions are parsed first as shared
    work, the parts read them from the cache, and the values equal an in-process run over a
    separate, empty cache."""
    import capeval_core.batch as batch

    monkeypatch.setattr("capeval_core.resources.available_cpus", lambda: 2)  # never capped
    import capeval_core.judgments.scoring as scoring
    from capeval_core.judgments.demo import demo_graded
    from capeval_core.spice import stanford_pcfg

    monkeypatch.setattr(batch, "MIN_PART", 4)
    # the parser's thresholds: any batch is shared out, in chunks of 250 captions
    monkeypatch.setattr(stanford_pcfg, "PARALLEL_MIN", 1)
    monkeypatch.setattr(stanford_pcfg, "MIN_CHUNK", 250)
    shared_seen = []
    real = batch._shared_work

    def spy(*args):
        out = real(*args)
        shared_seen.append({k: len(v) for k, v in out.items()})
        return out

    monkeypatch.setattr(batch, "_shared_work", spy)
    js = demo_graded(3, seed=2)
    monkeypatch.setenv("CAPEVAL_CACHE_DIR", str(tmp_path / "parallel"))
    labels = []
    parallel = scoring.score_judgments(
        js,
        ["bleu_4", "spice"],
        workers=2,
        use_cache=False,
        on_progress=lambda done, total, label: labels.append(label),
    )
    assert shared_seen == [{"spice": 1}]  # one piece: fewer captions than MIN_CHUNK
    # the bar moves as shared work comes back, and says what it is
    assert "spice: parsing new captions, 1 of 1" in labels
    monkeypatch.setenv("CAPEVAL_CACHE_DIR", str(tmp_path / "serial"))
    serial = scoring.score_judgments(js, ["bleu_4", "spice"], use_cache=False)
    for k in ("bleu_4", "spice"):
        assert np.array_equal(parallel.values[k], serial.values[k]), k


# -- external metric scores in the published formats (issue 32) -----------------------------
def test_flickr8k_expert_joins_a_scores_file_on_image_and_caption(flickr):
    from capeval_core.judgments.external import join_scores_file

    scores = flickr / "scores.tsv"
    scores.write_text(
        "image_file\tcaption_id\tmine\n"
        "c.jpg\ta.jpg#4\t0.3\n"
        "a.jpg\tb.jpg#1\t0.1\n"
        "b.jpg\tc.jpg#3\t0.2\n"
        "a.jpg\ta.jpg#0\t0.9\n"  # a row the preset dropped (own reference)
    )
    js = join_scores_file(load_judgments(flickr, "flickr8k-expert"), scores)
    assert js.id_columns == ("image_file", "caption_id")
    # published preset: the three experts' rows of a caption share its one score
    assert js.external[0].values.tolist() == [0.1] * 3 + [0.2] * 3 + [0.3] * 3
    assert "scores.tsv: 1 row(s) match no item of the set (ignored): line 5" in js.notes
    mean = join_scores_file(load_judgments(flickr, "flickr8k-expert", "mean-of-experts"), scores)
    assert mean.external[0].values.tolist() == [0.1, 0.2, 0.3]
    scores.write_text("image_file\tcaption_id\tmine\na.jpg\tb.jpg#1\t0.1\n")
    with pytest.raises(JudgmentFormatError, match=r"2 of the set's 3 ids .*'b\.jpg\|c\.jpg#3'"):
        join_scores_file(mean, scores)
    scores.write_text("caption_id\tmine\nb.jpg#1\t0.1\n")
    with pytest.raises(JudgmentFormatError, match=r"missing id column\(s\) \['image_file'\]"):
        join_scores_file(mean, scores)


def test_flickr8k_crowdflower_joins_a_scores_file(flickr):
    from capeval_core.judgments.external import join_scores_file

    scores = flickr / "scores.csv"
    scores.write_text(
        "image_file,caption_id,metric:mine\na.jpg,a.jpg#0,1\na.jpg,b.jpg#1,2\nb.jpg,c.jpg#0,3\n"
    )
    js = join_scores_file(load_judgments(flickr, "flickr8k-cf"), scores)
    assert js.external_names == ("mine",) and js.external[0].values.tolist() == [1, 2, 3]


def test_composite_metric_columns(tmp_path):
    _coco(tmp_path / "captions_val2014.json", {1: ["a cat", "a dog on a mat"], 2: ["two men"]})
    header = "Input.image_url,Input.caption,Answer.Correctness,metric:mine\n"
    (tmp_path / "coco_correctness.csv").write_text(
        header + "http://x/COCO_val2014_000000000001.jpg,a cat,5,0.9\n"
        "http://x/COCO_val2014_000000000001.jpg,a bird,1,0.2\n"
    )
    (tmp_path / "coco_x_correctness.csv").write_text(
        header + "http://x/COCO_val2014_000000000002.jpg,two women,3,0.5\n"
    )
    js = load_judgments(tmp_path, "composite")
    assert js.score_names == ("correctness",)
    assert js.external_names == ("mine",)
    assert js.external[0].values.tolist() == [0.9, 0.2, 0.5]
    assert js.external[0].signature.startswith("external:mine|sha256:")
    # a kept row without its score: file, line and column
    (tmp_path / "coco_x_correctness.csv").write_text(
        header + "http://x/COCO_val2014_000000000002.jpg,two women,3,\n"
    )
    with pytest.raises(
        JudgmentFormatError, match=r"coco_x_correctness\.csv, line 2, column 'metric:mine'"
    ):
        load_judgments(tmp_path, "composite")
    # files that disagree on the metric columns
    (tmp_path / "coco_x_correctness.csv").write_text(
        "Input.image_url,Input.caption,Answer.Correctness\n"
        "http://x/COCO_val2014_000000000002.jpg,two women,3\n"
    )
    with pytest.raises(JudgmentFormatError, match=r"column 'metric:mine'.*different metric"):
        load_judgments(tmp_path, "composite")


def test_composite_packed_rows_join_a_scores_file(tmp_path):
    from capeval_core.judgments.external import join_scores_file

    write_token(tmp_path)
    row = f"http://x/a.jpg;{caption('a.jpg', 0)};a red bus;5;2"
    (tmp_path / "8k_correctness.csv").write_text(f'HITId,Input.data\nh1,"{row}"\n')
    js = load_judgments(tmp_path, "composite")
    scores = tmp_path / "scores.json"
    scores.write_text(json.dumps([{"id": it.id, "mine": k / 2} for k, it in enumerate(js.items)]))
    assert join_scores_file(js, scores).external[0].values.tolist() == [0.0, 0.5]
    (tmp_path / "8k_correctness.csv").write_text(f'HITId,Input.data,metric:mine\nh1,"{row}",1\n')
    with pytest.raises(JudgmentFormatError, match=r"column 'metric:mine'.*join a scores file"):
        load_judgments(tmp_path, "composite")


def test_pascal50s_joins_a_scores_file_on_pair_numbers(tmp_path):
    from capeval_core.judgments.external import join_scores_file

    _pascal(tmp_path)
    js = load_judgments(tmp_path, "pascal50s", "clipscore-table7")
    scores = tmp_path / "scores.csv"
    scores.write_text("id,mine:a,mine:b\n3,0.5,0.6\n1,0.9,0.1\n2,0.2,0.8\n")
    joined = join_scores_file(js, scores)
    assert joined.external[0].values.tolist() == [[0.9, 0.2, 0.5], [0.1, 0.8, 0.6]]
    scores.write_text("id,mine:a,mine:b\n1,0.9,0.1\n")
    with pytest.raises(JudgmentFormatError, match=r"2 of the set's 3 ids .*'2', '3'"):
        join_scores_file(js, scores)


def test_abstract50s_joins_a_scores_file_on_pair_numbers(tmp_path):
    from capeval_core.judgments.external import join_scores_file

    refs = [{"image_id": i, "caption": f"ref {k} of {i}"} for i in (1, 2) for k in range(48)]
    (tmp_path / "abstract48S.json").write_text(json.dumps(refs))
    for side in "BC":
        (tmp_path / f"abstract_cands{side}.json").write_text(
            json.dumps([{"image_id": i, "caption": f"{side} {i}"} for i in (1, 2)])
        )
    js = load_judgments(tmp_path, "abstract50s")
    scores = tmp_path / "scores.jsonl"
    scores.write_text(
        '{"id": 2, "metric:mine:a": 0.3, "metric:mine:b": 0.4}\n'
        '{"id": 1, "metric:mine:a": 0.1, "metric:mine:b": 0.2}\n'
    )
    joined = join_scores_file(js, scores)
    assert joined.external_names == ("mine",)
    assert joined.external[0].values.tolist() == [[0.1, 0.3], [0.2, 0.4]]
