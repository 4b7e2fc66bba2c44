"""Malformed judgment files: each gives a JudgmentFormatError naming file, line and column."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from scipy.io import savemat

from capeval_core.errors import InputError, JudgmentFormatError
from capeval_core.judgments import load_judgments
from capeval_core.judgments.pascal50s import CATEGORIES

HEADER = "id,candidate,references,score\n"
TOKEN = "".join(f"{i}.jpg#{k}\tcaption {k} of {i}\n" for i in ("a", "b") for k in range(5))


def _flickr(tmp, rows, name="ExpertAnnotations.txt"):
    (tmp / "Flickr8k.token.txt").write_text(TOKEN)
    (tmp / name).write_text(rows)
    return tmp / name


def _pascal_inputs(tmp, votes=(1, -1), category=1):
    inputs = np.zeros((1, 1), dtype=[("name", "O"), ("sent1", "O"), ("sent2", "O")])
    inputs[0, 0] = ("p.jpg", "a", "b")
    result = np.zeros((1, 1), dtype=[("result", "O")])
    result[0, 0] = (np.array([list(votes)]),)
    savemat(
        tmp / "pair_pascal.mat",
        {"new_input": inputs, "result": result, "category": np.array([[category]])},
    )
    refs = np.zeros((1, 1), dtype=[("image", "O"), ("sentences", "O")])
    refs[0, 0] = ("p.jpg", np.array([["r1"], ["r2"]], dtype=object))
    savemat(tmp / "pascal50S.mat", {"refs": refs})
    return tmp


# (name, file name, bytes or a writer, format, options, message regex, where regex)
CASES = [
    (
        "bad encoding",
        "g.csv",
        HEADER.encode() + b"1,caf\xe9,x,2\n",
        "graded",
        {},
        r"offset 35",
        r"line 2",
    ),
    (
        "latin-1 in header",
        "g.csv",
        b"candid\xe2te,references,score\n",
        "graded",
        {},
        r"offset 6",
        r"line 1",
    ),
    (
        "missing candidate column",
        "g.csv",
        "id,references,score\n1,a,2\n",
        "graded",
        {},
        r"missing required column 'candidate'",
        r"line 1, column 'candidate'",
    ),
    (
        "missing references column",
        "g.csv",
        "candidate,score\na,2\n",
        "graded",
        {},
        r"missing required column 'references'",
        r"column 'references'",
    ),
    (
        "non-numeric score",
        "g.csv",
        HEADER + "1,a,b,2\n2,c,d,3\n3,e,f,good\n",
        "graded",
        {},
        r"not a number: 'good'",
        r"line 4, column 'score'",
    ),
    (
        "formula in score column",
        "g.csv",
        HEADER + "1,a,b,2\n2,c,d,3\n3,e,f,=1+2\n",
        "graded",
        {},
        r"formula",
        r"line 4, column 'score'",
    ),
    (
        "infinite score",
        "g.csv",
        HEADER + "1,a,b,2\n2,c,d,inf\n3,e,f,1\n",
        "graded",
        {},
        r"not a finite number",
        r"line 3, column 'score'",
    ),
    (
        "duplicate id",
        "g.csv",
        HEADER + "1,a,b,2\n1,c,d,3\n",
        "graded",
        {},
        r"duplicate id '1' \(first seen on line 2\)",
        r"line 3, column 'id'",
    ),
    (  # a JSON array on one line: every record is on line 1, so the record says which
        "duplicate id in a one-line JSON array",
        "g.json",
        '[{"id": 1, "candidate": "a", "references": ["b"], "score": 2}, '
        '{"id": 2, "candidate": "c", "references": ["d"], "score": 3}, '
        '{"id": "1", "candidate": "e", "references": ["f"], "score": 1}]',
        "graded",
        {},
        r"duplicate id '1' \(first seen on record 1, line 1\)",
        r"record 3, line 1, column 'id'",
    ),
    ("empty file", "g.csv", b"", "graded", {}, r"file is empty", r"g\.csv"),
    ("whitespace-only file", "g.tsv", b"  \n\n", "graded", {}, r"file is empty", r"g\.tsv"),
    ("header only", "g.csv", HEADER, "graded", {}, r"no data rows", r"g\.csv"),
    (
        "binary file",
        "g.csv",
        b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR",
        "graded",
        {},
        r"binary file \(NUL byte at offset 8\)",
        r"g\.csv",
    ),
    (
        "oversize file",
        "g.csv",
        HEADER + "1,a,b,2\n" * 20,
        "graded",
        {"max_bytes": 100},
        r"above the 100-byte cap",
        r"g\.csv",
    ),
    (
        "wrong delimiter",
        "g.csv",
        "id;candidate;references;score\n1;a;b;2\n",
        "graded",
        {},
        r"delimiter",
        r"line 1, column 'candidate'",
    ),
    (
        "ragged row",
        "g.csv",
        HEADER + "1,a,b,2\n2,c,d\n",
        "graded",
        {},
        r"expected 4 fields separated by commas, got 3",
        r"line 3",
    ),
    (
        "unclosed quote",
        "g.csv",
        HEADER + '1,"a,b,2\n',
        "graded",
        {},
        r"malformed comma-separated text: unexpected end of data",
        r"line 2",
    ),
    (
        # the quote opened on line 3 runs until the next quote mark, two lines further: that
        # line was named ("line 5"), with "commas-separated"
        "unclosed quote, a later quote mark",
        "g.csv",
        HEADER + "1,a dog,a dog,2\n" + '2,"a cat,a cat,3\n3,a bus,a bus,2\n4,a man,"x"y,1\n',
        "graded",
        {},
        r"malformed comma-separated text: .*\(a record from line 3 to line 5: check its quote "
        r"marks, from line 3 on\)",
        r"g\.csv, line 3:",
    ),
    (
        # a form feed in a caption: str.splitlines broke the line there, and the lines named
        # after it were one too high
        "a form feed in a caption, then a ragged row",
        "g.csv",
        HEADER + "1,a dog\x0con grass,a dog,2\n2,a cat,3\n",
        "graded",
        {},
        r"expected 4 fields separated by commas, got 3",
        r"g\.csv, line 3:",
    ),
    (
        "empty header field",
        "g.csv",
        "candidate,,score\na,b,1\n",
        "graded",
        {},
        r"header field 2 is empty",
        r"line 1, column 2",
    ),
    (
        "repeated header",
        "g.csv",
        "candidate,references,score,score\na,b,1,2\n",
        "graded",
        {},
        r"repeated",
        r"line 1, column 'score'",
    ),
    (
        "no score column",
        "g.csv",
        "candidate,references,note\na,b,hello\n",
        "graded",
        {},
        r"no numeric human-score column",
        r"line 1",
    ),
    (
        "no references in row",
        "g.csv",
        HEADER + "1,a,b,2\n2,c,,3\n",
        "graded",
        {},
        r"no references",
        r"line 3, column 'references'",
    ),
    (
        "unknown suffix",
        "g.xlsx",
        "candidate\n",
        "graded",
        {},
        r"cannot tell the format",
        r"g\.xlsx",
    ),
    (
        "bad JSON",
        "g.json",
        '[{"candidate": "a", "references": ["b"], "score": 1},\n{"cand',
        "graded",
        {},
        r"invalid JSON",
        r"record 2, line 2, column \d+",  # the record, as a results file's error names it
    ),
    (
        "JSON not an array",
        "g.json",
        '{"candidate": "a"}',
        "graded",
        {},
        r"expected a JSON array",
        r"line 1",
    ),
    (
        "JSON record not an object",
        "g.json",
        '[{"candidate": "a", "references": ["b"], "score": 1},\n 5]',
        "graded",
        {},
        r"expected an object",
        r"record 2, line 2",
    ),
    (
        "JSON references not text",
        "g.json",
        '[{"candidate": "a", "references": ["b", 3], "score": 1}]',
        "graded",
        {},
        r"reference 2: expected text, got int",
        r"record 1, line 1, column 'references'",
    ),
    (
        "JSONL bad line",
        "g.jsonl",
        '{"candidate": "a", "references": ["b"], "score": 1}\n{"candidate": "c",,}\n',
        "graded",
        {},
        r"invalid JSON",
        r"record 2, line 2, column \d+",
    ),
    (
        "JSONL candidate not text",
        "g.jsonl",
        '{"candidate": ["a"], "references": ["b"], "score": 1}\n',
        "graded",
        {},
        r"expected text, got a list",
        r"line 1, column 'candidate'",
    ),
    (
        "preferred not a/b/tie",
        "p.csv",
        "candidate_a,candidate_b,references,preferred\nx,y,z,a\nx,y,z,maybe\n",
        "pairwise",
        {},
        r"preferred must be one of a, b, tie \(got 'maybe'\)",
        r"line 3, column 'preferred'",
    ),
    (
        "negative votes",
        "p.csv",
        "candidate_a,candidate_b,references,votes_a,votes_b\nx,y,z,3,-1\n",
        "pairwise",
        {},
        r"votes cannot be negative",
        r"line 2, column 'votes_b'",
    ),
    (
        "fractional votes",
        "p.csv",
        "candidate_a,candidate_b,references,votes_a,votes_b\nx,y,z,2.5,1\n",
        "pairwise",
        {},
        r"whole number",
        r"line 2, column 'votes_a'",
    ),
    (
        "votes_b missing",
        "p.csv",
        "candidate_a,candidate_b,references,votes_a\nx,y,z,3\n",
        "pairwise",
        {},
        r"missing required column 'votes_b'",
        r"line 1, column 'votes_b'",
    ),
    (
        "no preference column",
        "p.tsv",
        "candidate_a\tcandidate_b\tref_1\nx\ty\tz\n",
        "pairwise",
        {},
        r"missing required column 'preferred'",
        r"line 1, column 'preferred'",
    ),
    (
        # every score with a decimal comma: no column was numeric, so the error was "no
        # numeric human-score column" at line 1; now the first cell, as with a few such cells
        "every score with a decimal comma",
        "g.csv",
        HEADER + '1,a,b,"3,5"\n2,c,d,"4,0"\n',
        "graded",
        {},
        r"not a number: '3,5' \(a decimal comma\? write 3\.5\)",
        r"line 2, column 'score'",
    ),
    (
        # ... and beside another numeric column, which was correlated instead, without a word
        "decimal-comma scores beside a count",
        "g.csv",
        'candidate,references,score,n_raters\na,b,"3,5",3\nc,d,"4,0",5\n',
        "graded",
        {},
        r"not a number: '3,5' \(a decimal comma",
        r"line 2, column 'score'",
    ),
    (
        "decimal-comma scores in a column of another name",
        "g.csv",
        'candidate,references,quality\na,b,"1,000"\nc,d,"2,5"\n',
        "graded",
        {},
        r"not a number: '1,000' \(a decimal comma or a thousands separator\? write 1\.000 or 1000",
        r"line 2, column 'quality'",
    ),
    (
        # the comma of 3,5 splits a ';'-separated row, refused before the header could say
        # the file is ';'-separated: the row's error asks it too
        "';'-separated with decimal commas",
        "g.csv",
        "id;candidate;references;score\n1;a;b;3,5\n",
        "graded",
        {},
        r"expected 1 fields separated by commas, got 2; the header has a single column "
        r"containing ';': is the file separated by ';'",
        r"^g\.csv, line 2: ",
    ),
    (
        "scores as lists",
        "g.json",
        json.dumps([{"candidate": "a", "references": ["b"], "score": [3, 3]}]),
        "graded",
        {},
        r"not a number: \[3, 3\]",
        r"record 1, line 1, column 'score'",
    ),
    (
        "preferred disagrees with votes",
        "p.csv",
        "candidate_a,candidate_b,references,preferred,votes_a,votes_b\nx,y,z,b,3,1\n",
        "pairwise",
        {},
        r"votes",
        r"line 2, column 'preferred'",
    ),
]


@pytest.mark.parametrize(
    ("name", "file", "content", "fmt", "options", "message", "where"),
    CASES,
    ids=[c[0] for c in CASES],
)
def test_malformed_generic(tmp_path, name, file, content, fmt, options, message, where):
    path = tmp_path / file
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    with pytest.raises(JudgmentFormatError) as info:
        load_judgments(path, fmt, **options)
    text = str(info.value)
    assert text.startswith(file), text  # names the file first
    assert re.search(message, text), text
    assert re.search(where, text), text
    assert isinstance(info.value, InputError)


def _expect(call, *patterns):
    with pytest.raises(JudgmentFormatError) as info:
        call()
    for p in patterns:
        assert re.search(p, str(info.value)), str(info.value)


def test_expert_score_out_of_range(tmp_path):
    _flickr(tmp_path, "a.jpg\tb.jpg#1\t1\t5\t1\n")
    _expect(
        lambda: load_judgments(tmp_path, "flickr8k-expert"),
        r"^ExpertAnnotations\.txt, line 1, column 'e2'",
        r"1-4",
    )


def test_expert_unknown_caption(tmp_path):
    _flickr(tmp_path, "a.jpg\tb.jpg#1\t1\t2\t1\na.jpg\tz.jpg#9\t1\t2\t1\n")
    _expect(
        lambda: load_judgments(tmp_path, "flickr8k-expert"),
        r"line 2, column 'caption_id'",
        r"not in Flickr8k\.token\.txt",
    )


def test_expert_ragged_row(tmp_path):
    _flickr(tmp_path, "a.jpg\tb.jpg#1\t1\t2\n")
    _expect(
        lambda: load_judgments(tmp_path, "flickr8k-expert"),
        r"ExpertAnnotations\.txt, line 1",
        r"expected 5 fields separated by tabs, got 4",
    )


def test_expert_duplicate_row(tmp_path):
    _flickr(tmp_path, "a.jpg\tb.jpg#1\t1\t2\t1\na.jpg\tb.jpg#1\t2\t2\t2\n")
    _expect(
        lambda: load_judgments(tmp_path, "flickr8k-expert"),
        r"line 2, column 'caption_id'",
        r"duplicate",
    )


def test_expert_token_file_missing(tmp_path):
    (tmp_path / "ExpertAnnotations.txt").write_text("a.jpg\tb.jpg#1\t1\t2\t1\n")
    _expect(lambda: load_judgments(tmp_path, "flickr8k-expert"), r"Flickr8k\.token\.txt")


def test_crowdflower_fraction_out_of_range(tmp_path):
    _flickr(tmp_path, "a.jpg\tb.jpg#1\t1.5\t3\t0\n", "CrowdFlowerAnnotations.txt")
    _expect(
        lambda: load_judgments(tmp_path, "flickr8k-cf"),
        r"CrowdFlowerAnnotations\.txt, line 1, column 'yes_fraction'",
    )


def test_flickr8k_values_the_distributed_files_never_hold(tmp_path):
    """Flickr8k as distributed (checked: 40,460 caption ids, 5,822 expert rows, 47,830
    CrowdFlower rows) has none of these; a copy that does was read without a word."""
    _flickr(tmp_path, "a.jpg\tb.jpg#1\t1\t1.5\t2\n")
    _expect(
        lambda: load_judgments(tmp_path, "flickr8k-expert"),
        r"ExpertAnnotations\.txt, line 1, column 'e2': expert scores are whole numbers 1-4",
    )
    _flickr(tmp_path, "a.jpg\tb.jpg#1\t0.5\t0\t3\n", "CrowdFlowerAnnotations.txt")
    _expect(
        lambda: load_judgments(tmp_path, "flickr8k-cf"),
        r"line 1, column 'yes_fraction': yes_fraction 0.5 is not n_yes / \(n_yes \+ n_no\)",
    )
    # no vote at all: its yes_fraction 0 was scored as a caption every judge refused
    rows = "a.jpg\tb.jpg#1\t1\t3\t0\nb.jpg\ta.jpg#2\t0\t0\t0\n"
    _flickr(tmp_path, rows, "CrowdFlowerAnnotations.txt")
    _expect(
        lambda: load_judgments(tmp_path, "flickr8k-cf"),
        r"^CrowdFlowerAnnotations\.txt, line 2, column 'n_yes': n_yes and n_no are both 0",
    )
    _flickr(tmp_path, "a.jpg\tb.jpg#1\t1\t2\t1\n")
    (tmp_path / "Flickr8k.token.txt").write_text(TOKEN + "a.jpg#0\tanother caption\n")
    _expect(
        lambda: load_judgments(tmp_path, "flickr8k-expert"),
        r"Flickr8k\.token\.txt, line 11, column 'caption_id': caption id 'a.jpg#0' is given twice",
    )


def test_truncated_mat(tmp_path):
    _pascal_inputs(tmp_path)
    data = (tmp_path / "pair_pascal.mat").read_bytes()
    (tmp_path / "pair_pascal.mat").write_bytes(data[: len(data) // 2])
    _expect(
        lambda: load_judgments(tmp_path, "pascal50s", "clipscore-table7"),
        r"^pair_pascal\.mat: cannot read this MATLAB file: it ends early \(truncated",
    )


_V73 = b"MATLAB 7.3 MAT-file, Platform: GLNXA64, HDF5 schema 1.00 .".ljust(116) + bytes(8)


@pytest.mark.parametrize(
    ("make", "why"),
    [
        (lambda good: b"<html>404</html>" * 20, "it does not start with a MATLAB header"),
        (lambda good: _V73 + b"\x00\x02IM" + bytes(100), "it is a MATLAB v7.3 \\(HDF5\\) file"),
        # bytes changed past the header: scipy says "Expecting matrix here" (a TypeError)
        (lambda good: good[:128] + bytes(b ^ 0x5A for b in good[128:]), "it is damaged"),
    ],
)
def test_an_unreadable_mat_says_why_in_words_not_exception_names(tmp_path, make, why):
    _pascal_inputs(tmp_path)
    path = tmp_path / "pair_pascal.mat"
    path.write_bytes(make(path.read_bytes()))
    with pytest.raises(JudgmentFormatError) as info:
        load_judgments(tmp_path, "pascal50s", "clipscore-table7")
    assert re.search(f"^pair_pascal\\.mat: cannot read this MATLAB file: {why}", str(info.value))
    assert not re.search(r"Error|Exception|: [A-Z][a-z]+[A-Z]", str(info.value)), info.value


def test_mat_missing_variable(tmp_path):
    _pascal_inputs(tmp_path)
    savemat(tmp_path / "pair_pascal.mat", {"other": np.zeros(3)})
    _expect(
        lambda: load_judgments(tmp_path, "pascal50s", "clipscore-table7"),
        r"pair_pascal\.mat, column 'new_input': missing variable",
    )


def test_mat_bad_votes_and_category(tmp_path):
    _pascal_inputs(tmp_path, votes=(1, 2))
    _expect(
        lambda: load_judgments(tmp_path, "pascal50s", "clipscore-table7"),
        r"pair_pascal\.mat, record 1, column 'result\.result'",
    )
    # the value as the file holds it, plainly (it was "got np.float64(5.0)")
    for category, got in ((7, "7"), (5.0, "5"), (2.5, "2.5")):
        _pascal_inputs(tmp_path, category=category)
        _expect(
            lambda: load_judgments(tmp_path, "pascal50s", "clipscore-table7"),
            r"record 1, column 'category': category must be 1-4 or one of HC/HI/HM/MM "
            rf"\(got {re.escape(got)}\)$",
        )
    _pascal_inputs(tmp_path, category=np.array(["HX"], dtype=object))
    _expect(
        lambda: load_judgments(tmp_path, "pascal50s", "clipscore-table7"),
        r"record 1, column 'category': category must be 1-4 .*\(got 'HX'\)$",
    )


def test_mat_category_as_label(tmp_path):
    # a copy that spells the categories out (a cell of labels, any case, or of codes as text)
    # reads like the codes
    for cell, code in (("hi", 2), ("MM", 4), ("3", 3)):
        _pascal_inputs(tmp_path, category=np.array([cell], dtype=object))
        by_label = load_judgments(tmp_path, "pascal50s", "clipscore-table7")
        _pascal_inputs(tmp_path, category=code)
        by_code = load_judgments(tmp_path, "pascal50s", "clipscore-table7")
        assert by_label.categories() == by_code.categories() == [CATEGORIES[code]]


def _one_image_refs(tmp):
    """A COCO captions file with one caption of image 1, as the Composite tests' references."""
    (tmp / "refs.json").write_text(
        json.dumps({"annotations": [{"image_id": 1, "id": 1, "caption": "x"}]})
    )


def test_composite_missing_score_column(tmp_path):
    _one_image_refs(tmp_path)
    f = tmp_path / "c.csv"
    f.write_text("image,caption\n1.jpg,a dog\n")
    _expect(
        lambda: load_judgments(f, "composite", references_from=tmp_path / "refs.json"),
        r"c\.csv, line 1, column 'correctness': cannot find the correctness column",
    )


def test_composite_score_out_of_range(tmp_path):
    _one_image_refs(tmp_path)
    f = tmp_path / "c.csv"
    f.write_text("image,caption,correctness\n1.jpg,a dog,9\n")
    _expect(
        lambda: load_judgments(f, "composite", references_from=tmp_path / "refs.json"),
        r"c\.csv, line 2, column 'correctness': scores are 1-5",
    )


def test_composite_image_without_references_names_the_image_column(tmp_path):
    """It named the score column; the fault is the image."""
    _one_image_refs(tmp_path)
    f = tmp_path / "c.csv"
    f.write_text("image,caption,correctness\n1.jpg,a dog,3\n7.jpg,a cat,2\n")
    _expect(
        lambda: load_judgments(f, "composite", references_from=tmp_path / "refs.json"),
        r"c\.csv, line 3, column 'image': image '7' has no references",
    )
    _expect(
        lambda: load_judgments(f, "composite"),
        r"no source for this file, so no caption file: its name names none \(8k, 30k or coco\)"
        r".*\(with its caption file beside it: Flickr8k\.token\.txt, ",
    )


def test_a_missing_file_in_the_working_folder_names_that_folder(tmp_path, monkeypatch):
    """Given as ".", the folder's name was empty ("in the folder ''")."""
    monkeypatch.chdir(tmp_path)
    _expect(
        lambda: load_judgments(".", "flickr8k-expert"),
        rf"ExpertAnnotations\.txt not found in the folder '{tmp_path.name}'",
    )


@pytest.mark.parametrize("votes", ["99999999999999999999999", "1e300"])
def test_a_vote_count_beyond_a_float_s_whole_numbers_is_refused(tmp_path, votes):
    """It was read as 99999999999999991611392 (1e300 as "a whole number"), and the app's
    preview of the set then failed on every visit."""
    f = tmp_path / "p.csv"
    f.write_text(
        "id,candidate_a,candidate_b,references,votes_a,votes_b\n"
        f"1,a dog,a cat,a dog runs,{votes},1\n"
    )
    _expect(
        lambda: load_judgments(f, "pairwise"),
        r"p\.csv, line 2, column 'votes_a': a count of at most 9,007,199,254,740,992",
    )


def test_coco_reference_file_errors(tmp_path):
    g = tmp_path / "g.csv"
    g.write_text("image_id,candidate,score\n5,a dog,2\n")
    (tmp_path / "caps.json").write_text('{"images": []}')
    _expect(
        lambda: load_judgments(g, "graded", references_from=tmp_path / "caps.json"),
        r"^caps\.json: expected a COCO captions file",
    )
    (tmp_path / "caps.json").write_text(
        json.dumps({"annotations": [{"image_id": 1, "id": 1, "caption": "x"}]})
    )
    _expect(
        lambda: load_judgments(g, "graded", references_from=tmp_path / "caps.json"),
        r"g\.csv, line 2, column 'image_id': image_id '5' has no captions in caps\.json",
    )


def test_abstract_mismatched_pairs(tmp_path):
    (tmp_path / "abstract48S.json").write_text(json.dumps([{"image_id": 1, "caption": "r"}]))
    (tmp_path / "abstract_candsB.json").write_text(json.dumps([{"image_id": 1, "caption": "b"}]))
    (tmp_path / "abstract_candsC.json").write_text(json.dumps([{"image_id": 2, "caption": "c"}]))
    _expect(
        lambda: load_judgments(tmp_path, "abstract50s"),
        r"abstract_candsC\.json, record 1, line 1, column 'image_id'",
    )


def test_missing_file_and_unknown_format(tmp_path):
    _expect(
        lambda: load_judgments(tmp_path / "nope.csv", "graded"), r"^nope\.csv: file does not exist"
    )
    with pytest.raises(KeyError, match="unknown judgment format"):
        load_judgments(tmp_path / "x.csv", "nope")


def test_formula_cells_load_verbatim_and_export_escaped(tmp_path):
    from capeval_core.stats import to_csv_text

    p = tmp_path / "g.csv"
    p.write_text(HEADER + '1,"=HYPERLINK(""http://evil"",""x"")",@SUM(A1),2\n2,+cmd,-x,3\n')
    js = load_judgments(p, "graded")
    assert js.items[0].candidate == '=HYPERLINK("http://evil","x")'
    assert js.items[1].candidate == "+cmd"
    text = to_csv_text(js.to_frame())
    body = text.split("\n")[1:]
    for bad in ("=HYPERLINK", "+cmd", "@SUM", "-x"):
        assert all(not cell.startswith(bad) for line in body for cell in line.split(","))
        assert f"'{bad}" in text or f"\"'{bad}" in text


def test_at_least_thirty_malformed_cases():
    import sys

    module = sys.modules[__name__]
    extra = [
        n
        for n in dir(module)
        if n.startswith("test_")
        and n
        not in (
            "test_malformed_generic",
            "test_at_least_thirty_malformed_cases",
            "test_formula_cells_load_verbatim_and_export_escaped",
        )
    ]
    assert len(CASES) + len(extra) >= 30


def test_a_json_true_score_is_named_as_the_file_writes_it(tmp_path):
    """Generic JSON files said "not a number: True" of a score written true (THumB's loader
    alone had learned to say it as written); a null score is a missing one, its row dropped."""
    path = tmp_path / "g.jsonl"
    rows = '{"candidate": "a dog", "references": ["a dog runs"], "score": 2}\n'
    path.write_text(rows + '{"candidate": "a cat", "references": ["a cat sits"], "score": true}')
    with pytest.raises(JudgmentFormatError) as info:
        load_judgments(path, "graded")
    assert str(info.value).endswith("column 'score': not a number: true"), str(info.value)
    path.write_text(rows + '{"candidate": "a cat", "references": ["a cat sits"], "score": null}')
    assert load_judgments(path, "graded").dropped == {"missing human score in column 'score'": 1}


def test_a_gzipped_judgment_file_is_said_as_every_reader_says_it(tmp_path):
    """ "cannot tell the format from the suffix 'gz'", where the results reader says what the
    file is."""
    import gzip

    from capeval_core.errors import JudgmentFormatError
    from capeval_core.judgments import load_judgments

    path = tmp_path / "g.csv.gz"
    path.write_bytes(gzip.compress(b"candidate,references,score\na dog,a dog,1\n"))
    with pytest.raises(JudgmentFormatError, match=r"g\.csv\.gz: this file is gzip-compressed; "):
        load_judgments(path, "graded")
