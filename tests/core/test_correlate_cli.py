"""``capeval correlate``: table output, the JSON contract, and exit code 2 on bad files."""

from __future__ import annotations

import contextlib
import io
import json

import pytest

from capeval_core.cli import main

ROWS = [
    ("a dog runs on the grass", "a dog running on grass|||a brown dog on the lawn", 5),
    ("a dog on grass", "a dog running on grass|||a brown dog on the lawn", 4),
    ("a cat sits on a mat", "a cat on a mat|||a kitten sitting on a rug", 5),
    ("a cat", "a cat on a mat|||a kitten sitting on a rug", 3),
    ("a red bus", "a man riding a horse|||a person on a horse", 1),
    ("a man on a horse", "a man riding a horse|||a person on a horse", 5),
    ("two people", "two women walking in a park|||two friends in a park", 2),
    ("two women in a park", "two women walking in a park|||two friends in a park", 4),
]


@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch):
    monkeypatch.setenv("CAPEVAL_CACHE_DIR", str(tmp_path / "cache"))


def _run(*argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


def _graded(tmp_path):
    p = tmp_path / "graded.csv"
    p.write_text("candidate,references,quality\n" + "".join(f"{c},{r},{s}\n" for c, r, s in ROWS))
    return p


def test_graded_table_and_json_contract(tmp_path):
    p = _graded(tmp_path)
    out_json = tmp_path / "out.json"
    code, out, err = _run(
        "correlate",
        "--judgments",
        str(p),
        "--format",
        "graded",
        "--metrics",
        "bleu_4",
        "rouge_l",
        "cider_d",
        "--tokenizer",
        "whitespace",
        "--json",
        str(out_json),
    )
    assert code == 0, err
    assert "pearson" in out and "kendall_c" in out and "Williams" in out
    assert "8 read, 8 scored" in err
    data = json.loads(out_json.read_text())
    assert set(data) == {"n_rows", "dropped", "correlations", "williams"}
    assert data["n_rows"] == 8 and data["dropped"] == {}
    assert set(data["correlations"]) == {"bleu_4", "rouge_l", "cider_d"}
    for row in data["correlations"].values():
        assert set(row) == {"pearson", "spearman", "kendall_b", "kendall_c"}
        assert all(v is None or -1 <= v <= 1 for v in row.values())
    assert set(data["williams"]) == {"bleu_4", "rouge_l", "cider_d"}
    for a, row in data["williams"].items():
        assert row[a] is None  # NaN on the diagonal -> null
    # a second run comes from the cache and gives the same JSON
    code, _, _ = _run(
        "correlate",
        "--judgments",
        str(p),
        "--format",
        "graded",
        "--metrics",
        "bleu_4",
        "rouge_l",
        "cider_d",
        "--tokenizer",
        "whitespace",
        "--json",
        str(tmp_path / "2.json"),
    )
    assert code == 0 and json.loads((tmp_path / "2.json").read_text()) == data


def test_pairwise_json_contract(tmp_path):
    p = tmp_path / "pairs.jsonl"
    rows = [
        {
            "candidate_a": "a dog on grass",
            "candidate_b": "a red bus",
            "references": ["a dog running on grass"],
            "preferred": "a",
            "category": "HI",
        },
        {
            "candidate_a": "a cat",
            "candidate_b": "a cat on a mat",
            "references": ["a cat on a mat"],
            "preferred": "b",
            "category": "HC",
        },
    ]
    p.write_text("\n".join(json.dumps(r) for r in rows))
    code, out, err = _run(
        "correlate",
        "--judgments",
        str(p),
        "--format",
        "pairwise",
        "--metrics",
        "rouge_l",
        "--tokenizer",
        "whitespace",
        "--json",
        "-",
    )
    assert code == 0, err
    data = json.loads(out[out.index("{") :])
    assert data == {"n_pairs": 2, "accuracy": {"rouge_l": {"HI": 1.0, "HC": 1.0, "overall": 1.0}}}


def test_flickr8k_folder(tmp_path):
    token = "".join(
        f"{i}.jpg#{k}\t{c} {k}\n"
        for i, c in (
            ("a", "a dog runs on grass"),
            ("b", "a cat sits on a mat"),
            ("c", "a man rides"),
        )
        for k in range(5)
    )
    (tmp_path / "Flickr8k.token.txt").write_text(token)
    (tmp_path / "ExpertAnnotations.txt").write_text(
        "a.jpg\ta.jpg#0\t4\t4\t4\n"  # own reference: dropped
        "a.jpg\tb.jpg#1\t1\t1\t2\n"
        "b.jpg\tc.jpg#2\t1\t1\t1\n"
        "c.jpg\tc.jpg#1\t4\t4\t3\n"  # own reference: dropped
        "c.jpg\ta.jpg#3\t1\t2\t1\n"
        "b.jpg\ta.jpg#2\t2\t1\t1\n"
    )
    code, _, err = _run(
        "correlate",
        "--judgments",
        str(tmp_path),
        "--format",
        "flickr8k-expert",
        "--metrics",
        "bleu_4",
        "--tokenizer",
        "whitespace",
        "--json",
        str(tmp_path / "o.json"),
    )
    assert code == 0, err
    data = json.loads((tmp_path / "o.json").read_text())
    assert data["n_rows"] == 12 and sum(data["dropped"].values()) == 2


def test_malformed_file_exits_2_with_message(tmp_path):
    p = tmp_path / "bad.csv"
    p.write_text("candidate,references,quality\na,b,1\nc,d,lots\n")
    code, out, err = _run("correlate", "--judgments", str(p), "--format", "graded")
    assert code == 2 and out == ""
    assert "bad.csv, line 3, column 'quality': not a number" in err


def test_unknown_metric_exits_2(tmp_path):
    code, _, err = _run(
        "correlate",
        "--judgments",
        str(_graded(tmp_path)),
        "--format",
        "graded",
        "--metrics",
        "nope",
    )
    assert code == 2 and "unknown metric" in err
