"""A judgment file's ``id`` column: a blank cell in it is refused where it is, and a file
without the column numbers its rows by line (or a JSON array's by record)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from capeval_core.errors import JudgmentFormatError
from capeval_core.judgments import load_judgments

GRADED = [
    ("g1", "a dog runs on the grass", "a dog running on grass|||a brown dog on grass", 5),
    ("g2", "a dog on grass", "a dog running on grass|||a brown dog on grass", 4),
    ("g3", "a cat sits on a mat", "a cat on a mat|||a kitten on a rug", 5),
    ("g4", "a cat", "a cat on a mat|||a kitten on a rug", 3),
]
PAIRS = [
    ("p1", "a dog on grass", "a red bus", "a dog running on grass|||a brown dog", "A"),
    ("p2", "a cat", "a cat on a mat", "a cat on a mat|||a kitten on a rug", "B"),
    ("p3", "a man rides", "a horse", "a man riding a horse|||a person on a horse", "A"),
]
HINT = "give every row an id, or leave the column out"


def _graded_csv(tmp_path, ids, name="g.csv"):
    body = "".join(f"{i},{c},{r},{s}\n" for i, (_, c, r, s) in zip(ids, GRADED, strict=True))
    p = tmp_path / name
    p.write_text("id,candidate,references,score\n" + body)
    return p


def _pairs_csv(tmp_path, ids, name="p.csv"):
    body = "".join(f"{i},{a},{b},{r},{v}\n" for i, (_, a, b, r, v) in zip(ids, PAIRS, strict=True))
    p = tmp_path / name
    p.write_text("id,candidate_a,candidate_b,references,preferred\n" + body)
    return p


@pytest.mark.parametrize("blank", ["", "   ", '""'])
def test_a_blank_id_cell_in_a_graded_csv_is_refused_at_its_line(tmp_path, blank):
    """Row 3's blank id became '4', its line: joined to another item's metric score, or a
    'duplicate id' pointing at a line whose cell was empty."""
    path = _graded_csv(tmp_path, ["g1", "g2", blank, "g4"])
    with pytest.raises(JudgmentFormatError) as err:
        load_judgments(path, "graded")
    assert str(err.value) == (
        f"g.csv, line 4, column 'id': empty id cell: {HINT} (rows are then numbered by line)"
    )


def test_a_blank_id_cell_no_longer_reads_as_a_duplicate_of_its_line_number(tmp_path):
    """Line 5's blank cell was id '5', "a duplicate of line 2", whose id is 5."""
    path = _graded_csv(tmp_path, ["5", "g2", "g3", ""], "dup.csv")
    with pytest.raises(JudgmentFormatError, match=r"dup\.csv, line 5, column 'id': empty id"):
        load_judgments(path, "graded")


def test_a_null_id_in_a_graded_json_is_refused_at_its_record(tmp_path):
    records = [
        {"id": i, "candidate": c, "references": r.split("|||"), "score": s} for i, c, r, s in GRADED
    ]
    records[1]["id"] = None
    path = tmp_path / "g.json"
    path.write_text(json.dumps(records))
    with pytest.raises(JudgmentFormatError) as err:
        load_judgments(path, "graded")
    assert str(err.value) == (
        f"g.json, record 2, line 1, column 'id': empty id cell: {HINT} "
        "(rows are then numbered by record)"
    )
    jsonl = tmp_path / "g.jsonl"
    records[1]["id"] = " "
    jsonl.write_text("\n".join(json.dumps(r) for r in records))
    with pytest.raises(JudgmentFormatError, match=r"record 2, line 2, column 'id': empty id"):
        load_judgments(jsonl, "graded")
    # the first record of an array is on line 1 too: still numbered by record, not line
    records[1]["id"], records[0]["id"] = 2, None
    path.write_text(json.dumps(records))
    with pytest.raises(JudgmentFormatError, match=r"record 1, .*numbered by record\)$"):
        load_judgments(path, "graded")
    # a record without the key its neighbours have: not an "empty cell"
    del records[0]["id"]
    jsonl.write_text("\n".join(json.dumps(r) for r in records))
    with pytest.raises(JudgmentFormatError, match=r"line 1, column 'id': no id in this record"):
        load_judgments(jsonl, "graded")


def test_a_blank_id_cell_in_a_pairwise_file_is_refused_at_its_line(tmp_path):
    path = _pairs_csv(tmp_path, ["p1", "", "p3"])
    with pytest.raises(JudgmentFormatError) as err:
        load_judgments(path, "pairwise")
    assert str(err.value) == (
        f"p.csv, line 3, column 'id': empty id cell: {HINT} (rows are then numbered by line)"
    )
    records = [
        {"id": i, "candidate_a": a, "candidate_b": b, "references": r.split("|||"),
         "preferred": v}
        for i, a, b, r, v in PAIRS
    ]  # fmt: skip
    records[2]["id"] = None
    path = tmp_path / "p.json"
    path.write_text(json.dumps(records, indent=1))
    with pytest.raises(JudgmentFormatError, match=r"record 3, line \d+, column 'id': empty id"):
        load_judgments(path, "pairwise")


def test_a_file_without_an_id_column_numbers_its_rows_as_before(tmp_path):
    path = tmp_path / "g.csv"
    body = "".join(f"{c},{r},{s}\n" for _, c, r, s in GRADED)
    path.write_text("candidate,references,score\n" + body)
    assert [it.id for it in load_judgments(path, "graded").items] == ["2", "3", "4", "5"]
    path = tmp_path / "p.csv"
    body = "".join(f"{a},{b},{r},{v}\n" for _, a, b, r, v in PAIRS)
    path.write_text("candidate_a,candidate_b,references,preferred\n" + body)
    assert [it.id for it in load_judgments(path, "pairwise").items] == ["2", "3", "4"]


def test_correlate_says_the_blank_id_cell_in_one_line(tmp_path):
    """Through the CLI: exit 2, one line on stderr, where the row had been joined to the
    --metric-scores row of its line number."""
    path = _graded_csv(tmp_path, ["1", "2", "", "4"])
    scores = tmp_path / "s.csv"
    scores.write_text("id,mine\n1,0.1\n2,0.2\n4,0.4\n5,0.5\n")
    proc = subprocess.run(
        [sys.executable, "-m", "capeval_core.cli", "correlate", "--judgments", str(path),
         "--format", "graded", "--metric-scores", str(scores), "--workers", "0"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 2 and proc.stdout == ""
    (line,) = proc.stderr.strip().splitlines()
    assert line.startswith("capeval: error: ") and line.endswith(
        f"g.csv, line 4, column 'id': empty id cell: {HINT} (rows are then numbered by line)"
    )
