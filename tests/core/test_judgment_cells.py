"""Cells as spreadsheets, pandas and R write them: missing-value markers, decimal commas and
pandas' index column, in judgment files and in scores files joined to a set."""

from __future__ import annotations

import json

import pytest

from capeval_core.errors import JudgmentFormatError
from capeval_core.judgments import load_judgments
from capeval_core.judgments.external import join_scores_file

ROWS = [
    ("r1", "a dog runs on the grass", "a dog running on grass|||a brown dog on grass", 5),
    ("r2", "a dog on grass", "a dog running on grass|||a brown dog on grass", 4),
    ("r3", "a cat sits on a mat", "a cat on a mat|||a kitten on a rug", 5),
    ("r4", "a cat", "a cat on a mat|||a kitten on a rug", 3),
    ("r5", "a red bus", "a man riding a horse|||a person on a horse", 1),
]


def _write(tmp_path, text, name="j.csv"):
    p = tmp_path / name
    p.write_text(text)
    return p


def _judgments(tmp_path, rows=ROWS, name="j.csv"):
    body = "".join(f"{i},{c},{r},{s}\n" for i, c, r, s in rows)
    return _write(tmp_path, "id,candidate,references,score\n" + body, name)


@pytest.mark.parametrize("marker", ["NaN", "NA", "n/a", "N/A", "nan", " na "])
def test_a_missing_value_marker_drops_the_row_as_an_empty_cell_does(tmp_path, marker):
    """`NaN`/`NA` (pandas' and R's missing value) was "not a finite number", exit 2, where an
    empty cell dropped the row: now both drop it, for the same reason."""
    rows = [*ROWS[:2], ("r3", "a cat", "a cat on a mat", marker), *ROWS[3:]]
    js = load_judgments(_judgments(tmp_path, rows), "graded")
    rows[2] = ("r3", "a cat", "a cat on a mat", "")
    empty = load_judgments(_judgments(tmp_path, rows, "e.csv"), "graded")
    assert len(js) == 4 and js.dropped == empty.dropped == {
        "missing human score in column 'score'": 1
    }
    assert js.dropped_at == {"missing human score in column 'score'": "line 4"}


def test_a_json_nan_drops_the_row_and_inf_stays_refused(tmp_path):
    records = [{"candidate": c, "references": r.split("|||"), "score": s} for _, c, r, s in ROWS]
    text = "\n".join(json.dumps(r) for r in records).replace('"score": 4', '"score": NaN')
    js = load_judgments(_write(tmp_path, text, "j.jsonl"), "graded")
    assert js.dropped_at == {"missing human score in column 'score'": "record 2, line 2"}
    rows = [*ROWS[:2], ("r3", "a cat", "a cat on a mat", "inf"), *ROWS[3:]]
    with pytest.raises(JudgmentFormatError, match=r"line 4, column 'score': not a finite number"):
        load_judgments(_judgments(tmp_path, rows, "inf.csv"), "graded")


@pytest.mark.parametrize("marker", ["", "NaN", "NA"])
def test_a_missing_value_in_a_scores_file_is_one_error_whatever_its_marker(tmp_path, marker):
    """In a scores file every item needs its score: an empty cell was "no 'mine' score for
    id", `NaN` "not a finite number" and `NA` "not a number". Now one error for all three."""
    js = load_judgments(_judgments(tmp_path), "graded")
    cells = ["0.5", "0.4", marker, "0.3", "0.1"]
    scores = _write(
        tmp_path, "id,mine\n" + "".join(f"r{i + 1},{c}\n" for i, c in enumerate(cells)), "s.csv"
    )
    with pytest.raises(JudgmentFormatError) as err:
        join_scores_file(js, scores)
    assert str(err.value) == "s.csv, line 4, column 'mine': no 'mine' score for id 'r3'"


@pytest.mark.parametrize("other", [True, False])
def test_a_scores_column_of_decimal_commas_is_refused_not_left_out(tmp_path, other):
    """`mine` written as "1,7" was left out as "not scores", exit 0, with `other` beside it
    (and alone, "no metric column besides the ids"). Now refused at its first cell, in the
    judgment loader's words."""
    js = load_judgments(_judgments(tmp_path), "graded")
    cells = ["NA", "1,7", "2,5", "0,3", "4,1"]  # a missing value first: the first comma named
    header = "id,mine,other\n" if other else "id,mine\n"
    body = "".join(f'r{i + 1},"{c}"' + (",0.5\n" if other else "\n") for i, c in enumerate(cells))
    scores = _write(tmp_path, header + body, "s.csv")
    with pytest.raises(JudgmentFormatError) as err:
        join_scores_file(js, scores)
    assert str(err.value) == (
        "s.csv, line 3, column 'mine': not a number: '1,7' (a decimal comma? write 1.7)"
    )


def test_a_caption_column_is_still_left_out_with_a_comma_number_among_its_cells(tmp_path):
    js = load_judgments(_judgments(tmp_path), "graded")
    captions = ["a dog", "3,5", "a cat", "two cats", "a bus"]
    body = "".join(f'r{i + 1},"{c}",0.{i}\n' for i, c in enumerate(captions))
    out = join_scores_file(js, _write(tmp_path, "id,caption,mine\n" + body, "s.csv"))
    assert out.external_names == ("mine",)
    assert "s.csv: not scores, left out: 'caption'" in out.notes


def _pandas_csv(tmp_path, frame_rows, header, name):
    """A CSV as pandas' ``DataFrame.to_csv(path)`` writes it: its index first, unnamed."""
    body = "".join(f"{n}," + ",".join(map(str, r)) + "\n" for n, r in enumerate(frame_rows))
    return _write(tmp_path, "," + header + "\n" + body, name)


def test_pandas_index_column_is_read_and_never_a_score_in_both_kinds_of_file(tmp_path):
    """`DataFrame.to_csv(path)` heads its index with an empty field: judgment and scores
    files were refused, "header field 1 is empty". Now it is pandas' index, as `Unnamed: 0`
    (the name pandas reads it back under) is, in both kinds of file."""
    plain = load_judgments(_judgments(tmp_path), "graded")
    js = load_judgments(
        _pandas_csv(tmp_path, ROWS, "id,candidate,references,score", "pd.csv"), "graded"
    )
    assert js.score_names == ("score",) and js.items == plain.items
    scores = [(f"r{i + 1}", f"0.{i}") for i in range(len(ROWS))]
    for name, header in (("s.csv", ""), ("u.csv", "Unnamed: 0")):
        body = "".join(f"{n},{i},{v}\n" for n, (i, v) in enumerate(scores))
        out = join_scores_file(js, _write(tmp_path, f"{header},id,mine\n" + body, name))
        assert out.external_names == ("mine",) and out.notes == js.notes, name
        assert out.external[0].values.tolist() == [0.0, 0.1, 0.2, 0.3, 0.4]


def test_a_trailing_empty_column_is_read_when_its_cells_are_empty_too(tmp_path):
    """A spreadsheet's trailing delimiter (`score,` and `5,` on every line) was refused,
    "header field 5 is empty"; a value under an empty header field still is, and says where."""
    body = "".join(f"{i},{c},{r},{s},\n" for i, c, r, s in ROWS)
    path = _write(tmp_path, "id,candidate,references,score,\n" + body)
    js = load_judgments(path, "graded")
    assert js.items == load_judgments(_judgments(tmp_path, name="p.csv"), "graded").items
    path.write_text(path.read_text() + "r9,a dog,a dog runs,1,7\n")
    with pytest.raises(JudgmentFormatError) as err:
        load_judgments(path, "graded")
    assert str(err.value) == (
        "j.csv, line 1, column 5: header field 5 is empty, and line 7 has a value under it: "
        "name the column"
    )


def test_a_scores_file_s_row_of_a_dropped_judgment_is_said_as_such(tmp_path):
    """The row of a judgment dropped for its missing score read "match no item of the set",
    as a row of an id the file never had; now each is said for what it is."""
    rows = [*ROWS[:2], ("r3", "a cat", "a cat on a mat", "NA"), *ROWS[3:]]
    js = load_judgments(_judgments(tmp_path, rows), "graded")
    ids = [r[0] for r in ROWS] + ["r9"]
    body = "".join(f"{i},0.{n}\n" for n, i in enumerate(ids))
    out = join_scores_file(js, _write(tmp_path, "id,mine\n" + body, "s.csv"))
    assert [n for n in out.notes if n.startswith("s.csv")] == [
        "s.csv: 1 row(s) of items dropped for a missing human score in column 'score' "
        "(ignored): line 4",
        "s.csv: 1 row(s) match no item of the set (ignored): line 7",
    ]


def test_a_score_column_of_decimal_commas_is_named_among_missing_values(tmp_path):
    """`NA` cells counted as text against the decimal commas beside them: the file was
    refused as having no score column rather than at its first decimal comma."""
    marks = ["NA", "3,5", "NA", "NA", "4,5"]
    body = "".join(f'{i},{c},{r},"{m}"\n' for (i, c, r, _), m in zip(ROWS, marks, strict=True))
    path = _write(tmp_path, "id,candidate,references,quality\n" + body)
    with pytest.raises(JudgmentFormatError) as err:
        load_judgments(path, "graded")
    assert str(err.value) == (
        "j.csv, line 3, column 'quality': not a number: '3,5' (a decimal comma? write 3.5)"
    )


PAIRS = [
    ("p1", "a dog runs on the grass", "a cat", "a dog running on grass", 3, 1, "a"),
    ("p2", "a cat sits on a mat", "a red bus", "a cat on a mat", 4, 0, "a"),
    ("p3", "a red bus", "a man on a horse", "a man riding a horse", 0, 5, "b"),
    ("p4", "a kitten on a rug", "a cat", "a cat on a mat", 2, 2, "tie"),
]


def _pairs(tmp_path, rows, name, columns=("votes_a", "votes_b")):
    head = ",".join(["id", "candidate_a", "candidate_b", "references", *columns])
    pick = {"votes_a": 4, "votes_b": 5, "preferred": 6}
    body = "".join(
        ",".join(str(r[i]) for i in (0, 1, 2, 3, *(pick[c] for c in columns))) + "\n" for r in rows
    )
    return _write(tmp_path, f"{head}\n{body}", name)


@pytest.mark.parametrize("marker", ["", "NaN", "NA", "n/a"])
def test_a_pair_with_a_missing_vote_is_dropped_and_said_as_a_graded_row_is(tmp_path, marker):
    """A pairwise file with a missing vote (pandas writes NaN as an empty cell) was refused,
    "not a number: ''", where a graded file's row without a score is dropped and said."""
    rows = [*PAIRS[:2], (*PAIRS[2][:4], marker, *PAIRS[2][5:]), PAIRS[3]]
    js = load_judgments(_pairs(tmp_path, rows, "p.csv"), "pairwise")
    reason = "missing human vote in column 'votes_a'"
    assert [it.id for it in js.items] == ["p1", "p2", "p4"]
    assert js.dropped == {reason: 1} and js.dropped_at == {reason: "line 4"}
    assert js.describe().startswith(f"4 read, 1 dropped ({reason} (line 4): 1), 3 scored")


def test_a_json_null_vote_drops_the_pair(tmp_path):
    records = [
        {"candidate_a": a, "candidate_b": b, "references": [r], "votes_a": va, "votes_b": vb}
        for _, a, b, r, va, vb, _ in PAIRS
    ]
    records[3]["votes_b"] = None
    text = "\n".join(json.dumps(r) for r in records)
    js = load_judgments(_write(tmp_path, text, "p.jsonl"), "pairwise")
    assert js.dropped_at == {"missing human vote in column 'votes_b'": "record 4, line 4"}
    assert len(js) == 3


@pytest.mark.parametrize("marker", ["", "NA", "nan"])
def test_a_pair_with_a_missing_preference_is_dropped_and_said(tmp_path, marker):
    rows = [PAIRS[0], (*PAIRS[1][:6], marker), *PAIRS[2:]]
    js = load_judgments(_pairs(tmp_path, rows, "p.csv", ("preferred",)), "pairwise")
    reason = "missing human preference in column 'preferred'"
    assert js.dropped == {reason: 1} and js.dropped_at == {reason: "line 3"}
    assert [it.preferred for it in js.items] == ["a", "b", "tie"]


def test_a_pair_keeps_its_label_from_whichever_of_preference_and_votes_it_has(tmp_path):
    """With both kinds of column, a missing vote beside a preference (or a missing preference
    beside votes) is no missing judgment: the pair is kept."""
    rows = [(*PAIRS[0][:4], "", "", "a"), (*PAIRS[1][:6], "NA"), *PAIRS[2:]]
    columns = ("votes_a", "votes_b", "preferred")
    js = load_judgments(_pairs(tmp_path, rows, "p.csv", columns), "pairwise")
    assert js.dropped == {} and [it.preferred for it in js.items] == ["a", "a", "b", "tie"]
    assert (js.items[0].votes_a, js.items[1].votes_a) == (None, 4)


@pytest.mark.parametrize(
    ("cell", "column", "message"),
    [
        ("1.5", "votes_a", "expected a whole number"),
        ("-1", "votes_a", "votes cannot be negative"),
        ("x", "preferred", r"preferred must be one of a, b, tie \(got 'x'\)"),
    ],
)
def test_a_pair_s_judgment_present_but_wrong_stays_refused(tmp_path, cell, column, message):
    columns = ("votes_a", "votes_b") if column != "preferred" else ("preferred",)
    rows = [PAIRS[0], (*PAIRS[1][:4], cell, PAIRS[1][5], cell), *PAIRS[2:]]
    with pytest.raises(JudgmentFormatError, match=rf"line 3, column '{column}': {message}"):
        load_judgments(_pairs(tmp_path, rows, "p.csv", columns), "pairwise")


def test_a_scores_file_s_row_of_a_dropped_pair_is_said_as_such(tmp_path):
    rows = [*PAIRS[:2], (*PAIRS[2][:4], "NA", *PAIRS[2][5:]), PAIRS[3]]
    js = load_judgments(_pairs(tmp_path, rows, "p.csv"), "pairwise")
    body = "".join(f"{r[0]},0.{n},0.{n + 1}\n" for n, r in enumerate(PAIRS))
    out = join_scores_file(js, _write(tmp_path, "id,mine:a,mine:b\n" + body, "s.csv"))
    assert [n for n in out.notes if n.startswith("s.csv")] == [
        "s.csv: 1 row(s) of pairs dropped for a missing human vote in column 'votes_a' "
        "(ignored): line 4"
    ]
