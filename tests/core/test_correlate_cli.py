"""``capeval correlate``: table output, the JSON contract, and exit code 2 on bad files."""

from __future__ import annotations

import contextlib
import io
import json

import pytest

from capeval_core.cli import main
from tests.core.consensus_files import (
    PASCAL_ROWS,
    write_abstract,
    write_pascal_pairs,
    write_pascal_refs,
    write_triplets,
)

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


#: the keys of correlate's JSON for a pairwise set
PAIRWISE_JSON_KEYS = {
    "n_pairs", "n_labelled", "accuracy", "signatures", "preset", "blank", "blank_references",
    "judgments", "warnings",
}  # fmt: skip


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
    assert "the Kendall variant papers report" not in out  # a graded file of one's own
    assert "8 read, 8 scored" in err
    data = json.loads(out_json.read_text())
    assert set(data) == {
        "n_rows", "dropped", "dropped_at", "format", "preset", "human", "level", "correlations",
        "pvalues", "williams", "williams_test", "signatures", "blank", "blank_references",
        "judgments", "warnings",
    }  # fmt: skip
    assert data["level"] == "item" and data["human"] == "quality"
    assert data["format"] == "graded" and data["preset"] is None
    # the p-values' settings, as the text's heading names them (only the text did)
    assert data["williams_test"] == {
        "correlation": "pearson",
        "alternative": "greater",
        "compares": "absolute correlations",
    }
    assert "Williams test p-values (greater, pearson; row's |r| beats column's;" in out
    assert data["signatures"]["bleu_4"].startswith("bleu")
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


def test_external_metric_columns_and_scores_file(tmp_path):
    p = tmp_path / "graded.csv"
    mine = [0.9, 0.7, 0.8, 0.4, 0.1, 0.95, 0.3, 0.75]
    p.write_text(
        "id,candidate,references,quality,metric:mine\n"
        + "".join(
            f"r{i},{c},{r},{s},{m}\n"
            for i, ((c, r, s), m) in enumerate(zip(ROWS, mine, strict=True))
        )
    )
    scores = tmp_path / "scores.csv"
    scores.write_text("id,theirs\n" + "".join(f"r{i},{-m}\n" for i, m in enumerate(mine)))
    out_json = tmp_path / "out.json"
    code, _, err = _run(
        "correlate",
        "--judgments",
        str(p),
        "--format",
        "graded",
        "--metrics",
        "meteor",
        "--metric-scores",
        str(scores),
        "--json",
        str(out_json),
    )
    assert code == 0, err
    data = json.loads(out_json.read_text())
    assert list(data["correlations"]) == ["meteor", "mine", "theirs"]
    assert set(data["williams"]) == {"meteor", "mine", "theirs"}
    assert data["williams"]["mine"]["meteor"] is not None or data["williams"]["meteor"]["mine"]
    assert data["correlations"]["theirs"]["pearson"] == pytest.approx(
        -data["correlations"]["mine"]["pearson"]
    )
    assert data["signatures"]["mine"].startswith("external:mine|sha256:")
    assert data["signatures"]["theirs"].startswith("external:theirs|sha256:")
    # --metrics may name an external metric; an unmatched id in the scores file exits 2
    scores.write_text("id,theirs\nr0,1\n")
    code, _, err = _run(
        "correlate",
        "--judgments",
        str(p),
        "--format",
        "graded",
        "--metrics",
        "mine",
        "--metric-scores",
        str(scores),
    )
    assert code == 2 and "scores.csv" in err and "'r1'" in err
    code, _, err = _run(
        "correlate", "--judgments", str(p), "--format", "graded", "--metrics", "bleu_1,mine"
    )
    assert code == 0, err
    code, _, err = _run(
        "correlate", "--judgments", str(p), "--format", "graded", "--metrics", "nosuch"
    )
    # named by its flag, with coco-caption among the names, as score's and compare's
    assert code == 2 and err.startswith("capeval: error: --metrics: unknown metric 'nosuch'")
    assert err.rstrip().endswith(", coco-caption"), err


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
    assert set(data) == PAIRWISE_JSON_KEYS
    assert (data["n_pairs"], data["n_labelled"], data["preset"]) == (2, 2, None)
    assert data["accuracy"] == {"rouge_l": {"HI": 1.0, "HC": 1.0, "overall": 1.0}}
    assert data["signatures"]["rouge_l"].startswith("rouge_l|")
    assert "|pairwise:pairwise|preset:none|labels:file|" in data["signatures"]["rouge_l"]


def test_json_to_stdout_is_the_json_alone(tmp_path):
    """`--json -` prints nothing else on stdout (the table went there too), graded and
    pairwise alike; a file keeps the table on stdout."""
    pairs = tmp_path / "pairs.jsonl"
    row = {"candidate_a": "a dog", "candidate_b": "a bus", "references": ["a dog runs"]}
    pairs.write_text("\n".join(json.dumps({**row, "preferred": p}) for p in "ab"))
    for path, fmt, key in (
        (_graded(tmp_path), "graded", "correlations"),
        (pairs, "pairwise", "accuracy"),
    ):
        code, out, err = _run("correlate", "--judgments", str(path), "--format", fmt,
                              "--metrics", "bleu_4", "--json", "-")  # fmt: skip
        assert code == 0, err
        assert key in json.loads(out)
        to_file = str(tmp_path / "o.json")
        code, out, err = _run("correlate", "--judgments", str(path), "--format", fmt,
                              "--metrics", "bleu_4", "--json", to_file)  # fmt: skip
        assert code == 0 and out.startswith("metric"), err
        # the text ends with the numbers' signatures, as the JSON holds them (it had none)
        data = json.loads((tmp_path / "o.json").read_text())
        assert out.endswith(f"\n\nsignatures\nbleu_4  {data['signatures']['bleu_4']}\n")


def test_human_column_rows_need_a_value_in_that_column_only(tmp_path):
    """A row with a `score` but no `rater2` is a row of the `score` correlation; without
    --human the column named `score` is correlated (every score column is read, and the
    drop names the empty one), with --human rater2 the row without one is dropped."""
    p = tmp_path / "two.csv"
    p.write_text(
        "id,candidate,references,score,rater2\n1,a dog runs,a dog running,3,2\n"
        "2,a cat,a cat on a mat,4,4\n3,a red bus,a bus on a street,2,1\n"
        "4,two birds,birds on a wire,5,\n"
    )
    common = ("correlate", "--judgments", str(p), "--format", "graded", "--metrics", "bleu_4")
    code, out, err = _run(*common, "--human", "score", "--json", "-")
    assert code == 0, err
    assert json.loads(out)["n_rows"] == 4 and json.loads(out)["dropped"] == {}
    code, out, err = _run(*common, "--json", "-")
    assert code == 0, err
    # the reason one key (a program reads it), where its rows are apart
    reason = "missing human score in column 'rater2'"
    assert json.loads(out)["dropped"] == {reason: 1}
    assert json.loads(out)["dropped_at"] == {reason: "line 5"}
    assert json.loads(out)["human"] == "score" and "human score: 'score'" in err
    code, out, err = _run(*common, "--human", "rater2", "--json", "-")
    assert code == 0, err
    assert json.loads(out)["dropped"] == {reason: 1}


def test_a_constant_human_score_is_warned_of(tmp_path):
    p = tmp_path / "const.csv"
    p.write_text(
        "candidate,references,score\na dog,a dog runs,3\na cat,a cat sits,3\nbus,a bus,3\n"
    )
    code, _, err = _run("correlate", "--judgments", str(p), "--format", "graded",
                        "--metrics", "bleu_4")  # fmt: skip
    assert code == 0, err
    assert "warning: the human score 'score' is constant (3 for all 3 items)" in err


def test_a_cached_run_says_cider_ds_note_on_the_set_again(tmp_path):
    """CIDEr-D's note on a set whose items all have the same references (every score 0) was
    said by the first run only: a second run read the values from the cache, silently, and
    its JSON lost the warning."""
    p = tmp_path / "same.csv"
    p.write_text(
        "candidate,references,score\na dog runs,a dog is running,3\n"
        "a cat sits,a dog is running,2\ntwo birds fly,a dog is running,1\n"
    )
    said = []
    for run in range(2):
        out = tmp_path / f"run{run}.json"
        code, _, err = _run("correlate", "--judgments", str(p), "--format", "graded",
                            "--metrics", "cider_d", "bleu_4", "--json", str(out))  # fmt: skip
        assert code == 0, err
        assert err.count("CIDEr-D takes its IDF from the scored set") == 1, err
        said.append(json.loads(out.read_text())["warnings"])
    assert said[0] == said[1]
    assert any("every one of its 3 images has the same references" in w for w in said[1])


def test_too_few_items_for_a_williams_test_are_said(tmp_path):
    """Three items gave the JSON an empty "williams" and no word on why."""
    p = tmp_path / "three.csv"
    p.write_text("candidate,references,score\n" + "".join(f"{c},{r},{s}\n" for c, r, s in ROWS[:3]))
    code, out, err = _run("correlate", "--judgments", str(p), "--format", "graded",
                          "--metrics", "bleu_1", "rouge_l", "--json", "-")  # fmt: skip
    assert code == 0, err
    assert json.loads(out)["williams"] == {}
    said = 'warning: no Williams test: it needs at least 4 items (got 3); "williams" is empty'
    assert said in err
    code, out, err = _run("correlate", "--judgments", str(p), "--format", "graded",
                          "--metrics", "bleu_1", "rouge_l")  # fmt: skip
    assert "warning: no Williams test: it needs at least 4 items (got 3)\n" in err
    code, out, err = _run("correlate", "--judgments", str(_graded(tmp_path)), "--format",
                          "graded", "--metrics", "bleu_1", "rouge_l", "--json", "-")  # fmt: skip
    assert code == 0 and json.loads(out)["williams"] and "no Williams test" not in err


def test_set_level_refusals_name_the_file_before_any_scoring(tmp_path, monkeypatch):
    """One row, a row without a system at --level system, and a --metric-scores column named
    as the file's own metric: one line each, naming the file by the path given (as score and
    compare name theirs; it was the file's name alone), and no progress before it."""
    monkeypatch.chdir(tmp_path.parent)
    here = tmp_path.name  # the path as typed: relative, in a folder
    one = tmp_path / "one.csv"
    one.write_text("id,candidate,references,score\n1,a dog,a dog runs,3\n")
    code, _, err = _run("correlate", "--judgments", f"{here}/one.csv", "--format", "graded")
    assert code == 2
    assert err == (
        f"capeval: error: {here}/one.csv: 1 read, 1 scored; a correlation needs at least 2 items\n"
    )
    sys_csv = tmp_path / "sys.csv"
    sys_csv.write_text(
        "id,candidate,references,score,system,metric:mine\n1,a dog,a dog runs,3,A,0.1\n"
        "2,a cat,a cat sits,4,,0.5\n3,a bus,a red bus,2,B,0.2\n"
    )
    code, _, err = _run("correlate", "--judgments", f"{here}/sys.csv", "--format", "graded",
                        "--level", "system")  # fmt: skip
    assert code == 2 and err.count("\n") == 1
    assert err.startswith(
        f"capeval: error: {here}/sys.csv: --level system needs a system for every item"
    )
    assert "1 of 3 items have none (the first: id '2')" in err
    # two systems: refused before any scoring too (it was said after the scoring's progress)
    two = tmp_path / "two.csv"
    two.write_text(sys_csv.read_text().replace(",,0.5", ",A,0.5"))
    code, _, err = _run("correlate", "--judgments", f"{here}/two.csv", "--format", "graded",
                        "--level", "system")  # fmt: skip
    assert code == 2 and err.count("\n") == 1, err
    assert err.startswith(
        f"capeval: error: {here}/two.csv: no system-level correlation can be shown: "
    )
    assert "only 2 systems" in err
    scores = tmp_path / "ms.csv"
    scores.write_text("id,mine\n1,0.3\n2,0.4\n3,0.9\n")
    code, _, err = _run("correlate", "--judgments", f"{here}/sys.csv", "--format", "graded",
                        "--metric-scores", f"{here}/ms.csv")  # fmt: skip
    assert code == 2
    assert err.startswith(
        f"capeval: error: {here}/ms.csv, line 1, column 'mine': the set already has an "
        "external metric"
    )
    bad = tmp_path / "bad.csv"  # the loader's own refusal, as the path given too
    bad.write_text("candidate,references,quality\na,b,1\nc,d,lots\n")
    code, _, err = _run("correlate", "--judgments", f"{here}/bad.csv", "--format", "graded")
    assert err.startswith(f"capeval: error: {here}/bad.csv, line 3, column 'quality': ")
    (tmp_path / "pascal").mkdir()  # a file of a folder given: the folder as typed, its name
    code, _, err = _run("correlate", "--judgments", f"{here}/pascal", "--format", "pascal50s")
    assert code == 2 and err.startswith(f"capeval: error: {here}/pascal/pair_pascal.mat: "), err


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
    code, out, err = _run(
        "correlate",
        "--judgments",
        str(tmp_path),
        "--format",
        "flickr8k-expert",
        "--metrics",
        "bleu_4",
        "--tokenizer",
        "whitespace",
        "--resamples",
        "20",
        "--json",
        str(tmp_path / "o.json"),
    )
    assert code == 0, err
    # the table lists both Kendall variants: a line says which one papers on the set report
    assert "kendall_c: the Kendall variant papers report on flickr8k-expert" in out
    data = json.loads((tmp_path / "o.json").read_text())
    assert data["n_rows"] == 12 and sum(data["dropped"].values()) == 2
    # an expert's row is not an item of its own: the bootstrap draws captions
    assert data["resampling"]["over"] == "captions (each caption's rows together)"


def test_json_never_overwrites_a_file_read_beside_a_judgments_file(tmp_path):
    """Given as a file, Flickr8k-Expert's annotations read Flickr8k.token.txt from their
    folder: --json naming the token file is refused, as for the folder, and it is kept."""
    token = "".join(
        f"{i}.jpg#{k}\t{c} {k}\n" for i, c in (("a", "a dog"), ("b", "a cat")) for k in range(5)
    )
    (tmp_path / "Flickr8k.token.txt").write_text(token)
    (tmp_path / "ExpertAnnotations.txt").write_text(
        "a.jpg\tb.jpg#1\t1\t1\t2\nb.jpg\ta.jpg#2\t2\t1\t1\n"
    )
    code, _, err = _run(
        "correlate",
        "--judgments",
        str(tmp_path / "ExpertAnnotations.txt"),
        "--format",
        "flickr8k-expert",
        "--metrics",
        "bleu_4",
        "--json",
        str(tmp_path / "Flickr8k.token.txt"),
    )
    assert code == 2
    assert "is the Flickr8k.token.txt of --judgments this run reads" in err
    assert (tmp_path / "Flickr8k.token.txt").read_text() == token


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


def _correlate_json(tmp_path, path, fmt, *extra):
    out_json = tmp_path / f"{fmt}.json"
    code, out, err = _run(
        "correlate",
        "--judgments",
        str(path),
        "--format",
        fmt,
        "--metrics",
        "bleu_4",
        "cider_d",
        "--tokenizer",
        "whitespace",
        "--workers",
        "0",
        "--json",
        str(out_json),
        *extra,
    )
    assert code == 0, err
    return json.loads(out_json.read_text()), out, err


def _abstract_pairs(folder):
    """Four ABSTRACT-50S pairs whose consensus prefers the candidate closer to the
    references, and one pair (4) that no triplet names."""
    scenes = {
        0: "a boy kicks a red ball in the park",
        1: "a girl sits under a tall tree",
    }
    pairs = [
        (0, "a boy kicks a red ball", "an owl sleeps on a log", 1),
        (0, "a dog runs away", "a boy kicks a ball in the park", -1),
        (1, "a girl sits under a tree", "a pizza on a table", 1),
        (1, "a cat on a roof", "a girl under a tall tree", 0),
    ]
    (folder / "abstract_candsB.json").write_text(
        json.dumps([{"image_id": s, "caption": b} for s, b, _, _ in pairs])
    )
    (folder / "abstract_candsC.json").write_text(
        json.dumps([{"image_id": s, "caption": c} for s, _, c, _ in pairs])
    )
    (folder / "abstract48S.json").write_text(
        json.dumps(
            [
                {"image_id": s, "caption": f"{text} {k}"}
                for s, text in scenes.items()
                for k in range(6)
            ]
        )
    )
    rows = [
        (f"{scenes[s]} {k}", b, c, winner if k else -winner)
        for s, b, c, winner in pairs[:3]
        for k in range(3)
    ]
    write_triplets(folder / "consensus_abstract.mat", rows)
    return folder


def test_abstract50s_json_contract_and_notes(tmp_path):
    folder = _abstract_pairs(tmp_path)
    data, _, err = _correlate_json(tmp_path, folder, "abstract50s")
    assert set(data) == PAIRWISE_JSON_KEYS
    assert (data["n_pairs"], data["n_labelled"], data["preset"]) == (4, 3, "clipscore-table4")
    assert set(data["accuracy"]) == {"bleu_4", "cider_d"}
    # 4 pairs are not the 400 of the distribution: no HC/HI, one "none" group and overall
    for row in data["accuracy"].values():
        assert set(row) == {"none", "overall"}
        assert row["overall"] == 1.0  # each metric prefers what the triplets prefer
    sig = data["signatures"]["bleu_4"]
    assert sig.startswith("bleu|") and "|labels:triplet-majority|refs:triplets:5x5|" in sig
    assert "preset:clipscore-table4" in sig and sig.endswith("metric-tie:half|human-tie:random")
    assert "capeval: warning: 1 pairs have no triplet in consensus_abstract.mat" in err
    assert f"warning: {folder.name}: 1 of 4 pairs (25.0%) have no human label" in err
    assert "3 labelled pairs scored" in err


def test_abstract50s_without_labels_is_refused_like_pascal50s(tmp_path):
    # issue 44: a pairwise set none of whose pairs has a label has no accuracy to compute;
    # every format refuses it with one line (exit 2), and no JSON is written
    folder = _abstract_pairs(tmp_path)
    (folder / "consensus_abstract.mat").unlink()
    out = tmp_path / "out.json"
    code, stdout, err = _run(
        "correlate", "--judgments", str(folder), "--format", "abstract50s",
        "--preset", "kilickaya2017", "--workers", "0", "--json", str(out),
    )  # fmt: skip
    assert code == 2 and stdout == "" and not out.exists()
    assert err.count("\n") == 1, err
    assert "None of the 4 pairs has a human label (no human labels: " in err
    assert "consensus_abstract.mat not found" in err


def test_pascal50s_presets_choose_the_labels(tmp_path):
    write_pascal_pairs(tmp_path, PASCAL_ROWS)
    write_pascal_refs(tmp_path)
    table7, _, err = _correlate_json(
        tmp_path, tmp_path, "pascal50s", "--preset", "clipscore-table7"
    )
    assert table7["preset"] == "clipscore-table7" and table7["n_labelled"] == 3
    assert set(table7["accuracy"]["bleu_4"]) == {"HC", "MM", "HM", "overall"}
    assert "labels:vote-majority|refs:file:5x5" in table7["signatures"]["bleu_4"]
    assert "capeval: warning: labels: majority of the votes of pair_pascal.mat" in err
    # without a consensus file the default is the votes; clipscore-table4 asks for the file
    default, _, _ = _correlate_json(tmp_path, tmp_path, "pascal50s")
    assert default["preset"] == "clipscore-table7" and default["n_labelled"] == 3
    code, _, err = _run(
        "correlate",
        "--judgments",
        str(tmp_path),
        "--format",
        "pascal50s",
        "--preset",
        "clipscore-table4",
    )
    assert code == 2
    assert err.startswith(  # a file of the folder given: the folder as given, and its name
        f"capeval: error: {tmp_path / 'consensus_pascal.mat'}: not found beside pair_pascal.mat"
    )
    write_triplets(
        tmp_path / "consensus_pascal.mat",
        [("a man and a woman", "a man", "a woman", -1), ("a dog and a cat", "a dog", "a cat", 1)],
    )
    table4, _, _ = _correlate_json(tmp_path, tmp_path, "pascal50s")
    assert table4["preset"] == "clipscore-table4" and table4["n_pairs"] == 2
    # one triplet (so one reference) per pair: the signature says every reference, one draw
    assert "labels:triplet-majority|refs:triplets:allx1" in table4["signatures"]["bleu_4"]


@pytest.mark.parametrize(
    ("extra", "named"),
    [
        (["--level", "system"], "--level: not used"),
        (["--resamples", "10"], "--resamples: not used"),
        (["--williams-correlation", "kendall_b"], "--williams-correlation: not used"),
        (["--human", "score"], "--human: not used"),
        (["--level", "item", "--resamples", "0"], "--level, --resamples: not used"),
    ],
)
def test_graded_only_options_with_a_pairwise_set_are_refused(tmp_path, extra, named):
    """A pairwise set gives pairwise accuracies: no level, intervals, Williams tests or
    human-score column. These were ignored without a word (exit 0); refused before any file
    is read, so the set is not read twice."""
    write_pascal_pairs(tmp_path, PASCAL_ROWS)
    write_pascal_refs(tmp_path)
    code, out, err = _run(
        "correlate", "--judgments", str(tmp_path), "--format", "pascal50s", *extra
    )
    where = "with a pairwise set (--format pascal50s gives pairwise accuracies)"
    assert code == 2 and out == "" and err.count("\n") == 1
    assert err.startswith(f"capeval: error: {named} {where}; leave ")
    code, _, err = _run("correlate", "--judgments", str(tmp_path / "x.csv"), "--format",
                        "pairwise", *extra)  # fmt: skip
    assert code == 2 and "with a pairwise set (--format pairwise" in err


def test_the_seed_of_a_graded_set_without_resamples_is_refused(tmp_path):
    """A graded set draws nothing at random but its bootstrap resamples; a pairwise set's
    seed samples references and breaks human ties, so it is always read."""
    p = _graded(tmp_path)
    base = ["correlate", "--judgments", str(p), "--format", "graded", "--metrics", "bleu_4",
            "rouge_l", "--tokenizer", "whitespace", "--workers", "0"]  # fmt: skip
    message = (
        "capeval: error: --seed: not used with a graded set without --resamples (it seeds the "
        "bootstrap resamples); leave it out\n"
    )
    for extra in (["--seed", "5"], ["--seed", "0", "--resamples", "0"]):
        code, out, err = _run(*base, *extra)
        assert (code, out, err) == (2, "", message)
    for extra in ([], ["--seed", "5", "--resamples", "10"], ["--resamples", "0"]):
        code, _, err = _run(*base, *extra)
        assert code == 0 and "not used" not in err, err
    write_pascal_pairs(tmp_path, PASCAL_ROWS)
    write_pascal_refs(tmp_path)
    _, _, err = _correlate_json(tmp_path, tmp_path, "pascal50s", "--seed", "5")
    assert "draw(s)" in err and "not used" not in err
    # "of 5 references" was said of pairs with 4 too (one draw, all of them): "up to" 5
    assert "5 draw(s) of up to 5 references" in err, err


def test_resamples_above_the_cap_are_refused_in_one_line(tmp_path):
    """--resamples 99999999999 asked numpy for 745 GiB and ended in a traceback (exit 1);
    compare capped its resamples, correlate did not. Refused before the file is read."""
    base = ["correlate", "--judgments", str(tmp_path / "x.csv"), "--format", "graded",
            "--metrics", "bleu_4", "--resamples"]  # fmt: skip
    err_io = io.StringIO()
    with contextlib.redirect_stderr(err_io), pytest.raises(SystemExit) as refused:
        main([*base, "99999999999"])
    err = err_io.getvalue()
    assert refused.value.code == 2 and err.count("\n") == 1 and "Traceback" not in err
    assert "--resamples: expected a whole number from 0 to 1,000,000, got 99999999999" in err
    code, _, err = _run(*base, "1000000")  # the cap itself is taken: the missing file is said
    assert code == 2 and "x.csv" in err and "--resamples" not in err


def test_spice_categories_are_refused_before_any_scoring(tmp_path):
    """``--metrics spice_object`` printed correlations under that name computed from SPICE's
    own value (each item's Object F-score was never read); refused as score refuses it."""
    from capeval_core.errors import OptionError
    from capeval_core.judgments import load_judgments
    from capeval_core.judgments.scoring import score_judgments

    p = _graded(tmp_path)
    code, out, err = _run("correlate", "--judgments", str(p), "--format", "graded",
                          "--metrics", "spice_object", "rouge_l")  # fmt: skip
    assert (code, out) == (2, "") and "scoring" not in err
    assert err.endswith("capeval: error: spice_object is reported by `capeval compare` and "
                        "score_systems only (when asked for); score('spice', ...) gives each "
                        "item's categories in its details\n")  # fmt: skip
    with pytest.raises(OptionError, match="spice_object is reported by `capeval compare`"):
        score_judgments(load_judgments(p, "graded"), ["rouge_l", "spice_object"])
    # a set's own metric of that name is refused as bleu_4 is: its numbers would read as SPICE's
    own = tmp_path / "own.csv"
    rows = p.read_text().splitlines()
    own.write_text("\n".join([rows[0] + ",metric:spice_object"]
                             + [f"{r},0.{i}" for i, r in enumerate(rows[1:])]) + "\n")  # fmt: skip
    code, out, err = _run("correlate", "--judgments", str(own), "--format", "graded", "--metrics",
                          "rouge_l", "--tokenizer", "whitespace")  # fmt: skip
    assert (code, out) == (2, "")
    assert "column 'metric:spice_object': external metric name 'spice_object' is a built-in" in err


def test_williams_correlation_with_one_metric_is_refused(tmp_path):
    """The Williams test compares two metrics: with one, --williams-correlation was ignored
    without a word. Said once the set's own metric columns are known, before any scoring."""
    p = _graded(tmp_path)
    base = ["correlate", "--judgments", str(p), "--format", "graded", "--tokenizer",
            "whitespace", "--workers", "0", "--williams-correlation", "spearman"]  # fmt: skip
    code, out, err = _run(*base, "--metrics", "cider_d")
    message = "--williams-correlation: not used with one metric (a Williams test compares two)"
    assert (code, out) == (2, "") and err.endswith(f"capeval: error: {message}; leave it out\n")
    assert "scoring" not in err
    for metrics in (["cider_d", "rouge_l"], ["bleu"]):  # bleu: four keys
        code, out, err = _run(*base, "--metrics", *metrics)
        assert code == 0 and "Williams test p-values (greater, spearman;" in out, err


def test_spice_max_words_without_spice_is_refused(tmp_path):
    """--spice-max-words with no spice among the metrics was ignored without a word (exit 0);
    refused before the judgments are read (the file does not exist)."""
    base = ["correlate", "--judgments", str(tmp_path / "x.csv"), "--format", "graded"]
    code, out, err = _run(*base, "--metrics", "bleu_4", "--spice-max-words", "5")
    message = "--spice-max-words: not used without spice among the metrics (bleu_4)"
    assert (code, out, err) == (2, "", f"capeval: error: {message}; leave it out\n")
    code, _, err = _run(*base, "--spice-max-words", "5")
    assert code == 2 and "(default: bleu_4 rouge_l cider_d); leave it out" in err
    code, _, err = _run(*base, "--metrics", "coco-caption", "--spice-max-words", "5")
    assert code == 2 and "x.csv: no such file" in err


def test_correlate_help_lists_every_preset_with_its_line():
    from capeval_core.judgments.protocols import BLEU4_NOTE, PASCAL50S, SPICE_NOTE

    code, out, _ = _run_help("correlate")
    assert code == 0
    flat = " ".join(out.split())
    for name, protocol in PASCAL50S.items():
        assert f"{name}: {protocol.description}" in flat
    assert "kilickaya2017: Kilickaya et al. 2017" in flat
    # each metric's note is a paragraph of its own
    for note in (BLEU4_NOTE, SPICE_NOTE):
        assert f"note: {' '.join(note.split())}" in flat
        assert f"\nnote: {note.split()[0]} {note.split()[1]}" in out


def _run_help(command):
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit) as info:
        main([command, "--help"])
    return info.value.code, out.getvalue(), ""


def test_the_preset_decides_what_a_human_tie_becomes(tmp_path):
    rows = [
        ("a red ball 0", "a red ball", "a blue car", 1),
        ("a red ball 1", "a red ball", "a blue car", -1),  # 1 vs 1: a human tie
        ("a tall tree 0", "a tall tree", "a small cat", 1),
    ]
    write_abstract(tmp_path, n_pairs=2, rows=rows, lists=False, refs=False)
    _, _, err = _correlate_json(tmp_path, tmp_path, "abstract50s")
    assert "2 labelled pairs scored, 1 human ties broken at random (seed 0)" in err
    _, _, err = _correlate_json(tmp_path, tmp_path, "abstract50s", "--preset", "kilickaya2017")
    assert "1 labelled pairs scored, 1 human ties dropped" in err


def test_flickr8k_expert_with_a_scores_file(tmp_path, monkeypatch):
    """A headerless format: the scores file joins on image_file and caption_id."""
    from tests.core.test_judgments import write_token

    monkeypatch.setenv("CAPEVAL_CACHE_DIR", str(tmp_path / "cache"))
    write_token(tmp_path)
    judged = [
        ("a.jpg", "b.jpg#1"),
        ("a.jpg", "c.jpg#2"),
        ("b.jpg", "c.jpg#3"),
        ("c.jpg", "a.jpg#4"),
    ]
    judged += [("b.jpg", "a.jpg#0"), ("c.jpg", "b.jpg#4")]
    expert = [
        f"{img}\t{cid}\t{1 + k % 4}\t{1 + (k + 1) % 4}\t{1 + k % 4}"
        for k, (img, cid) in enumerate(judged)
    ]
    (tmp_path / "ExpertAnnotations.txt").write_text("\n".join(expert) + "\n")
    scores = tmp_path / "mine.csv"
    scores.write_text(
        "image_file,caption_id,mine\n"
        + "".join(f"{img},{cid},{k % 4}\n" for k, (img, cid) in enumerate(judged))
    )
    out_json = tmp_path / "out.json"
    code, _, err = _run(
        "correlate",
        "--judgments",
        str(tmp_path),
        "--format",
        "flickr8k-expert",
        "--metrics",
        "bleu_1",
        "--metric-scores",
        str(scores),
        "--json",
        str(out_json),
    )
    assert code == 0, err
    data = json.loads(out_json.read_text())
    assert list(data["correlations"]) == ["bleu_1", "mine"]
    assert data["signatures"]["mine"].startswith("external:mine|sha256:")


def _judgments(tmp_path, header, cells, name="j.csv"):
    """A graded file of ROWS with ``header``'s extra columns filled by ``cells(i, score)``."""
    p = tmp_path / name
    rows = "".join(f"{c},{r},{cells(i, s)}\n" for i, (c, r, s) in enumerate(ROWS))
    p.write_text(f"candidate,references,{header}\n{rows}")
    return p


def _correlate(path, *extra):
    return _run("correlate", "--judgments", str(path), "--format", "graded", "--metrics",
                "bleu_4", "--tokenizer", "whitespace", "--json", "-", *extra)  # fmt: skip


@pytest.mark.parametrize(
    ("header", "cells"),
    [
        ("annotator,score", lambda i, s: f"{7 + i % 2},{s}"),  # an annotator id before the score
        ("Unnamed: 0,score", lambda i, s: f"{i},{s}"),  # pandas' index, as read back
        ("Unnamed: 0,quality", lambda i, s: f"{i},{s}"),  # ... beside a score of another name
    ],
)
def test_the_human_score_column_is_the_score_not_the_first_number(tmp_path, header, cells):
    """The first numeric column was correlated: an annotator id or pandas' index instead of
    the score, exit 0 and no word. Now the score is read, and the run says which."""
    score = header.split(",")[1]
    code, out, err = _correlate(_judgments(tmp_path, header, cells))
    assert code == 0, err
    data = json.loads(out)
    assert data["human"] == score and f"human score: {score!r}" in err
    code, out_named, err = _correlate(_judgments(tmp_path, "score", lambda i, s: s, "n.csv"))
    assert code == 0, err
    assert data["correlations"] == json.loads(out_named)["correlations"]


def test_two_columns_named_as_the_score_are_said_so(tmp_path):
    """The refusal said "none is named score" of a file with `score` and `rating`."""
    code, out, err = _correlate(_judgments(tmp_path, "score,rating", lambda i, s: f"{s},{6 - s}"))
    assert code == 2 and out == ""
    assert "and more than one is named score, human or rating: choose one with --human" in err


def test_several_numeric_columns_none_named_score_are_refused(tmp_path):
    """Which of `fluency` and `quality` is the human score is the user's to say: one line
    naming both and --human (not the library's keyword)."""
    p = _judgments(tmp_path, "fluency,quality", lambda i, s: f"{6 - s},{s}")
    code, out, err = _correlate(p)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith(f"capeval: error: {p}, line 1:")
    assert "'fluency', 'quality'" in err and "choose one with --human NAME" in err
    assert "score_columns" not in err
    code, out, err = _correlate(p, "--human", "quality")
    assert code == 0 and json.loads(out)["human"] == "quality", err


def test_pandas_index_is_never_a_score_nor_a_metric(tmp_path):
    """Named as the human score, pandas' index is refused; in a scores file it is left out,
    as the judgment loader leaves it out of the human scores."""
    p = _judgments(tmp_path, "Unnamed: 0,score", lambda i, s: f"{i},{s}")
    code, _, err = _correlate(p, "--human", "Unnamed: 0")
    assert code == 2 and "column 'Unnamed: 0': pandas' index column" in err
    assert "not a human score" in err
    scores = tmp_path / "mine.csv"
    scores.write_text("Unnamed: 0,id,mine\n" + "".join(f"{i},{i + 2},0.{i}\n" for i in range(8)))
    code, out, err = _correlate(_judgments(tmp_path, "score", lambda i, s: s, "n.csv"),
                                "--metric-scores", str(scores))  # fmt: skip
    assert code == 0 and list(json.loads(out)["correlations"]) == ["bleu_4", "mine"], err


def test_references_joined_with_one_pipe_warn_on_one_line(tmp_path):
    p = _judgments(tmp_path, "score", lambda i, s: s)
    p.write_text(p.read_text().replace("|||", "|"))
    code, out, err = _correlate(p)
    assert code == 0 and json.loads(out)["n_rows"] == len(ROWS)
    warned = [line for line in err.splitlines() if line.startswith("capeval: warning:")]
    assert warned == [
        f"capeval: warning: {p}: every row has one reference and 8 of them hold '|' or '||' "
        "(the first on line 2): references are separated by |||; each such cell was read as "
        "one reference"
    ]


def test_a_scores_file_missing_ids_is_said_in_the_command_line_s_words(tmp_path):
    """The library's "the set is unchanged" (a caller keeps its set) means nothing to a run
    that stops: the line ends with the ids."""
    scores = tmp_path / "mine.csv"
    scores.write_text("id,mine\n" + "".join(f"{i},0.{i}\n" for i in range(2, 8)))
    code, _, err = _correlate(_judgments(tmp_path, "score", lambda i, s: s),
                              "--metric-scores", str(scores))  # fmt: skip
    assert code == 2 and err.count("\n") == 1
    assert err.rstrip().endswith("(joined on ['id']): '8', '9'") and "unchanged" not in err


def test_resamples_without_a_correlation_are_said_and_counted_in_the_json(tmp_path):
    """Yes/no human scores on eight captions: some resamples draw one answer only and have
    no correlation; the intervals come from the others, which the run now says."""
    import numpy as np

    from capeval_core.api import score
    from tests.core.test_correlation_report import _constant_rows

    quality = [1, 0, 1, 0, 0, 1, 0, 0]
    p = tmp_path / "yes_no.csv"
    p.write_text(
        "candidate,references,quality\n"
        + "".join(f"{c},{r},{q}\n" for (c, r, _), q in zip(ROWS, quality, strict=True))
    )
    code, out, err = _run(
        "correlate", "--judgments", str(p), "--format", "graded", "--metrics", "rouge_l",
        "--tokenizer", "whitespace", "--resamples", "300", "--seed", "2", "--json", "-",
    )  # fmt: skip
    assert code == 0, err
    rouge = score(
        "rouge_l", [c for c, _, _ in ROWS], [r.split("|||") for _, r, _ in ROWS],
        tokenizer="whitespace",
    ).segment_values()  # fmt: skip
    expected = _constant_rows([np.array(quality, float), np.array(rouge)], 300, 2)
    assert expected > 0
    data = json.loads(out)
    assert data["resampling"]["left_out"] == {"rouge_l": dict.fromkeys(
        ("pearson", "spearman", "kendall_b", "kendall_c"), expected
    )}  # fmt: skip
    assert f"capeval: warning: up to {expected} of 300 resamples had one side's scores all" in err


def test_human_naming_a_preset_points_to_the_preset(tmp_path):
    """Composite's thoroughness is a preset, not a column: `--human thoroughness` said only
    "this set has ['correctness']"."""
    (tmp_path / "captions_val2014.json").write_text(json.dumps({
        "images": [{"id": 1}, {"id": 2}],
        "annotations": [{"image_id": 1, "caption": "a cat"}, {"image_id": 1, "caption": "a dog"},
                        {"image_id": 2, "caption": "two men"}],
    }))  # fmt: skip
    (tmp_path / "coco_correctness.csv").write_text(
        "Input.image_url,Input.caption,Answer.Correctness,Answer.Thoroughness\n"
        "http://x/COCO_val2014_000000000001.jpg,a cat,5,4\n"
        "http://x/COCO_val2014_000000000001.jpg,a bird,1,2\n"
        "http://x/COCO_val2014_000000000002.jpg,two women,3,3\n"
    )
    code, _, err = _run("correlate", "--judgments", str(tmp_path), "--format", "composite",
                        "--human", "thoroughness", "--metrics", "bleu_1")  # fmt: skip
    assert code == 2 and err.count("\n") == 1, err
    assert "'thoroughness' is a preset of the format: --preset thoroughness" in err


def test_the_workers_warning_has_a_line_of_its_own(tmp_path, monkeypatch):
    """It was printed inside the progress bar's block, on the bar's line."""
    monkeypatch.setattr("capeval_core.resources.available_cpus", lambda: 1)
    code, _, err = _run(
        "correlate", "--judgments", str(_graded(tmp_path)), "--format", "graded",
        "--metrics", "bleu_4", "--tokenizer", "whitespace", "--workers", "30",
    )  # fmt: skip
    assert code == 0, err
    assert (
        "capeval: warning: --workers 30: 1 CPU(s) available here, so no worker process is used"
        in err.splitlines()
    )


def test_blank_captions_and_missing_scores_are_named_on_stderr(tmp_path):
    """The summary line names the file, and there the line and column of each blank
    caption (scored as given) and of each row dropped for a missing human score."""
    p = tmp_path / "blank.csv"
    p.write_text(
        "id,candidate,references,score\n1,a dog runs,a dog running,3\n2,,a cat on a mat,4\n"
        "3,a red bus,a bus on a street,2\n4,two birds,birds on a wire,\n5,a man,a man rides,1\n"
    )
    code, out, err = _run(
        "correlate", "--judgments", str(p), "--format", "graded", "--metrics", "bleu_4",
        "--json", "-",
    )  # fmt: skip
    assert code == 0, err
    assert (
        "graded (blank.csv): 5 read, 1 dropped (missing human score in column 'score' (line 5): "
        "1), 4 scored (blank captions scored as given: column 'candidate', line 3)\n"
    ) in err
    # the JSON places them as the summary does (it said nothing of them)
    assert json.loads(out)["blank"] == {"candidate": "line 3"}
    q = tmp_path / "pairs.csv"
    q.write_text(
        "candidate_a,candidate_b,references,category,preferred\n"
        "a dog runs,a cat sits,a dog running,share-scene,a\n"
        "two cats on a couch,,two cats sleeping on a couch,share-scene,a\n"
    )
    code, out, err = _run(
        "correlate", "--judgments", str(q), "--format", "pairwise", "--metrics", "bleu_4",
        "--json", "-",
    )  # fmt: skip
    assert code == 0, err
    assert (
        "pairwise (pairs.csv): 2 read, 2 scored (blank captions scored as given: column "
        "'candidate_b', line 3)\n"
    ) in err
    assert json.loads(out)["blank"] == {"candidate_b": "line 3"}


def test_a_nan_correlation_is_said_with_its_reason(tmp_path):
    """Human scores of 1e308 overflow Pearson's sums: the table printed `nan` and every
    Williams cell '-', exit 0 and no word. Now one line names the correlations and why."""
    p = _judgments(tmp_path, "score", lambda i, s: "1e308" if i % 2 else s)
    code, out, err = _correlate(p, "--metrics", "rouge_l")
    assert code == 0, err
    assert json.loads(out)["correlations"]["bleu_4"]["pearson"] is None
    warned = [line for line in err.splitlines() if "NaN" in line]
    assert warned == [
        "capeval: warning: pearson of bleu_4, rouge_l are NaN (null in the JSON): the human "
        "score 'score' overflows a float (its values, up to 1e+308, sum past the largest "
        "float, 1.8e+308); the Williams tests (pearson) leave bleu_4, rouge_l out"
    ]
    # system level: human means equal across systems (each system's items differ)
    q = _judgments(tmp_path, "system,score", lambda i, s: f"s{i % 4},{1 if i < 4 else 5}", "s.csv")
    code, out, err = _run("correlate", "--judgments", str(q), "--format", "graded",
                          "--metrics", "bleu_4", "--level", "system")  # fmt: skip
    assert code == 0, err
    assert "nan" in out
    assert (
        "capeval: warning: pearson, spearman, kendall_b, kendall_c of bleu_4 are NaN: the "
        "human score 'score' is the same (3) for every system"
    ) in err


def test_the_judgment_file_as_its_own_metric_scores_is_refused(tmp_path):
    """It added a metric `score` correlating 1.0 with the human score, and a Williams row."""
    p = tmp_path / "g.csv"
    p.write_text("id,candidate,references,score\n" + "".join(
        f"{i},{c},{r},{s}\n" for i, (c, r, s) in enumerate(ROWS)
    ))  # fmt: skip
    code, out, err = _correlate(p, "--metric-scores", str(p))
    assert code == 2 and out == "" and err.count("\n") == 1, err
    assert err.startswith(
        f"capeval: error: {p}, line 1, column 'score': a metric cannot be named as the set's "
        "human score 'score'"
    )


def test_intervals_are_in_the_text_table_when_resampled(tmp_path):
    """--resamples printed the same table as without it: the intervals were in the JSON only."""
    to_file = tmp_path / "o.json"
    code, out, err = _run("correlate", "--judgments", str(_graded(tmp_path)), "--format",
                          "graded", "--metrics", "rouge_l", "--tokenizer", "whitespace",
                          "--resamples", "50", "--json", str(to_file))  # fmt: skip
    assert code == 0, err
    data = json.loads(to_file.read_text())
    row = next(line for line in out.splitlines() if line.startswith("rouge_l "))
    for method, value in data["correlations"]["rouge_l"].items():
        low, high = data["intervals"]["rouge_l"][method]
        assert f"{value:.4f} [{low:.4f}, {high:.4f}]" in row
    assert (
        "[low, high]: 95% percentile bootstrap intervals, 50 resamples over items (seed 0)" in out
    )
    # every correlation NaN (a constant human score): no interval shown, so no legend for one
    flat = tmp_path / "flat.csv"
    flat.write_text("candidate,references,quality\n" + "".join(f"{c},{r},3\n" for c, r, _ in ROWS))
    code, out, err = _run("correlate", "--judgments", str(flat), "--format", "graded",
                          "--metrics", "rouge_l", "--tokenizer", "whitespace",
                          "--resamples", "50")  # fmt: skip
    assert code == 0 and "nan" in out, err
    assert "[low, high]" not in out


def test_what_correlate_says_of_a_scores_file_names_its_rows(tmp_path):
    """The set's notes were printed as `note: ...` (every other line is `capeval: warning:`),
    a row matching no item was counted without its line, a folder was asked to be 'the
    judgment file itself', and ids written 1.0 against the set's 1 showed the set's alone."""
    p = tmp_path / "g.csv"
    p.write_text("id,candidate,references,score\n" + "".join(
        f"{i},{c},{r},{s}\n" for i, (c, r, s) in enumerate(ROWS, start=1)
    ))  # fmt: skip
    scores = tmp_path / "mine.csv"
    scores.write_text("id,caption,mine\n" + "".join(f"{i},x,0.{i}\n" for i in range(1, 10)))
    code, _, err = _correlate(p, "--metric-scores", str(scores))
    assert code == 0, err
    lines = err.splitlines()
    assert not [line for line in lines if line.startswith("note:")]
    assert f"capeval: warning: {scores}: not scores, left out: 'caption'" in lines
    assert f"capeval: warning: {scores}: 1 row(s) match no item of the set (ignored): line 10" in (
        lines
    )
    code, _, err = _correlate(p, "--metric-scores", str(tmp_path))
    assert code == 2 and "this is a folder, not a file: give the scores file itself" in err
    scores.write_text("id,mine\n" + "".join(f"{i}.0,0.{i}\n" for i in range(1, 9)))
    code, _, err = _correlate(p, "--metric-scores", str(scores))
    assert code == 2 and err.count("\n") == 1
    assert "8 of the set's 8 ids have no row here (joined on ['id']): '1', '2', '3', '4', " in err
    assert "; the file's ids that match none: '1.0', '2.0', '3.0', '4.0', '5.0' and 3 more" in err


def test_the_json_is_named_only_when_one_is_written(tmp_path):
    """'(null in the JSON)' was said of a run that wrote no JSON."""
    p = _judgments(tmp_path, "score", lambda i, s: 3)
    argv = ("correlate", "--judgments", str(p), "--format", "graded", "--metrics", "bleu_4")
    code, _, err = _run(*argv)
    assert code == 0 and "is constant (3 for all 8 items)" in err and "JSON" not in err
    code, _, err = _run(*argv, "--json", "-")
    assert code == 0 and "every correlation is undefined (null in the JSON)" in err
    # a constant metric alike: candidates sharing no word with their references
    q = tmp_path / "q.csv"
    q.write_text("candidate,references,score\n" + "".join(
        f"word{i},{r},{s}\n" for i, (_, r, s) in enumerate(ROWS)
    ))  # fmt: skip
    code, _, err = _run("correlate", "--judgments", str(q), "--format", "graded",
                        "--metrics", "bleu_4", "rouge_l")  # fmt: skip
    assert code == 0 and "rouge_l is constant (0 for all 8 values)" in err and "JSON" not in err


def test_unlabelled_pairs_are_named_by_file_and_line(tmp_path):
    """'1 of 3 pairs (33.3%) have no human label; ....' named no file nor line, and ended
    with a full stop after the sentence's own."""
    p = tmp_path / "pairs.csv"
    p.write_text(
        "candidate_a,candidate_b,references,votes_a,votes_b\n"
        "a dog runs,a cat,a dog running,2,1\na cat sits,a bus,a cat sitting,0,0\n"
        "two birds,a man,two birds fly,0,3\n"
    )
    code, _, err = _run("correlate", "--judgments", str(p), "--format", "pairwise",
                        "--metrics", "bleu_1")  # fmt: skip
    assert code == 0, err
    lines = err.splitlines()
    assert (
        f"capeval: warning: {p}: no vote for either candidate, so no human label: line 3"
    ) in lines
    assert (
        f"capeval: warning: {p}: 1 of 3 pairs (33.3%) have no human label; accuracies use "
        "the 2 labelled pairs"
    ) in lines
    p.write_text("candidate_a,candidate_b,references,votes_a,votes_b\na dog,a cat,a dog,0,0\n")
    code, _, err = _run("correlate", "--judgments", str(p), "--format", "pairwise",
                        "--metrics", "bleu_1")  # fmt: skip
    assert code == 2 and err == (
        f"capeval: error: {p}: None of the 1 pairs has a human label, so there is no "
        "accuracy to compute\n"
    )


def test_cider_ds_advice_names_no_option_correlate_lacks(tmp_path, monkeypatch):
    """Every item with the same references zeroes CIDEr-D's corpus IDF; the warning told the
    user to "use --cider-idf coco-val2014", which correlate refuses as unknown. correlate
    leaves that advice out; perturb, which has the option, keeps it."""
    p = tmp_path / "same.csv"
    p.write_text(
        "candidate,references,score\n"
        + "".join(f"{c},a dog running|||a brown dog,{s}\n" for c, s in
                  (("a dog runs", 3), ("a cat sits", 1), ("a dog walks", 2)))
    )  # fmt: skip
    code, _, err = _run("correlate", "--judgments", str(p), "--format", "graded", "--metrics",
                        "cider_d", "bleu_4")  # fmt: skip
    said = [line for line in err.splitlines() if "CIDEr-D takes its IDF" in line]
    assert code == 0 and len(said) == 1, err
    assert said[0].endswith("Score images with their own references together.")
    assert "--cider-idf" not in err and "idf=" not in err
    # a metric's warning is in the JSON's too, as said (scored again: a cached run is silent)
    monkeypatch.setenv("CAPEVAL_CACHE_DIR", str(tmp_path / "again"))
    code, out, err = _run("correlate", "--judgments", str(p), "--format", "graded", "--metrics",
                          "cider_d", "bleu_4", "--json", "-")  # fmt: skip
    assert code == 0 and said[0].removeprefix("capeval: warning: ") in json.loads(out)["warnings"]


def test_rows_left_out_are_warned_and_the_json_names_its_inputs(tmp_path):
    """A row dropped for a missing human score was said only in the summary line, with no
    `capeval: warning:`; the JSON recorded neither the scores file's ignored row nor which
    files were read."""
    import hashlib

    p = tmp_path / "g.csv"
    p.write_text("id,candidate,references,score\n" + "".join(
        f"{i},{c},{r},{'' if i == 4 else s}\n" for i, (c, r, s) in enumerate(ROWS, start=1)
    ))  # fmt: skip
    scores = tmp_path / "extra.csv"
    scores.write_text("id,mine\n" + "".join(f"{i},0.{i}\n" for i in (1, 2, 3, 5, 6, 7, 8, 99)))
    code, out, err = _correlate(p, "--metric-scores", str(scores))
    assert code == 0, err
    dropped = "1 row(s) dropped, not scored: missing human score in column 'score' (line 5): 1"
    ignored = "1 row(s) match no item of the set (ignored): line 9"
    assert f"capeval: warning: {p}: {dropped}" in err.splitlines()
    data = json.loads(out)
    # the files by name, with a content digest (no folder of this machine)
    assert data["judgments"] == {"g.csv": hashlib.sha256(p.read_bytes()).hexdigest()[:12]}
    assert data["metric_scores"] == {
        "extra.csv": hashlib.sha256(scores.read_bytes()).hexdigest()[:12]
    }
    negative = "the Williams tests compare absolute correlations (|r|, as WMT's): mine"
    assert data["warnings"][:2] == [f"g.csv: {dropped}", f"extra.csv: {ignored}"]
    assert len(data["warnings"]) == 4 and data["warnings"][2].startswith(negative)
    # mine, turned to agree with the humans, correlates negatively with bleu_4
    assert data["warnings"][3].startswith("the Williams tests take |r| between two metrics")
    assert str(tmp_path) not in out


def test_williams_p_values_are_written_as_the_significance_page_writes_them(tmp_path):
    """The matrix wrote p with %9.4g (0.04629, 0.5) and a correlation's line with .3g, where
    the app's tables and WilliamsResult write four decimals and `< 0.001`."""
    import re

    from capeval_core.stats.correlation import pearson

    p = _graded(tmp_path)
    code, out, err = _run("correlate", "--judgments", str(p), "--format", "graded", "--metrics",
                          "bleu_1", "bleu_4", "rouge_l", "--tokenizer", "whitespace")  # fmt: skip
    assert code == 0, err
    lines = out.split("Williams test p-values", 1)[1].splitlines()[2:5]
    cells = [c for line in lines for c in re.split(r"\s{2,}", line.strip())[1:]]
    assert len(cells) == 9 and "-" in cells
    assert all(re.fullmatch(r"-|< 0\.001|\d\.\d{4}", c) for c in cells), cells
    assert str(pearson([1, 2, 3, 4, 5], [2, 1, 4, 3, 5])) == "pearson = 0.8000 (p = 0.1041, n = 5)"
    assert "(p < 0.001, n = 20)" in str(pearson(range(20), [i + i % 3 for i in range(20)]))


def _graded_and_scores(tmp_path, header: str, cells) -> tuple:
    """The graded file of ROWS and a scores file for it: its ``header`` ("id,<names>") and
    one line of ``cells(i, human score)`` per row."""
    p = tmp_path / "g.csv"
    p.write_text("id,candidate,references,score\n" + "".join(
        f"{i},{c},{r},{s}\n" for i, (c, r, s) in enumerate(ROWS, start=1)
    ))  # fmt: skip
    scores = tmp_path / "mine.csv"
    scores.write_text(f"{header}\n" + "".join(
        f"{i},{cells(i, s)}\n" for i, (_, _, s) in enumerate(ROWS, start=1)
    ))  # fmt: skip
    return p, scores


def test_a_negative_correlation_in_a_williams_test_is_said_once(tmp_path):
    """The tests compare |r| (as WMT's), so a distance with r = -0.9 "beat" BLEU-4 with
    r = +0.3 and read as the better metric: one warning line names the negative ones."""
    p, scores = _graded_and_scores(tmp_path, "id,distance", lambda i, s: 6 - s + i % 2 / 10)
    code, out, err = _correlate(p, "--metric-scores", str(scores))
    assert code == 0, err
    said = [line for line in err.splitlines() if "absolute correlations" in line]
    assert len(said) == 1, err
    assert said[0].startswith("capeval: warning: the Williams tests compare absolute correlations")
    assert "distance correlates negatively with 'score' (pearson)" in said[0]
    assert "bleu_4" not in said[0]
    data = json.loads(out)
    assert (
        data["correlations"]["distance"]["pearson"] < 0 < data["correlations"]["bleu_4"]["pearson"]
    )
    assert said[0].removeprefix("capeval: warning: ") in data["warnings"]
    # none negative: nothing said
    p, scores = _graded_and_scores(tmp_path, "id,closeness", lambda i, s: s + i % 2 / 10)
    code, _, err = _correlate(p, "--metric-scores", str(scores))
    assert code == 0 and "absolute correlations" not in err, err


def test_a_note_of_williams_tests_only_when_one_runs(tmp_path):
    """Flickr8k-Expert's published preset warned that "a Williams test counts the rows as
    independent items" on a run of one metric, which runs none."""
    from tests.core.test_judgments import write_token

    write_token(tmp_path)
    (tmp_path / "ExpertAnnotations.txt").write_text(
        "a.jpg\tb.jpg#1\t1\t2\t1\nb.jpg\tc.jpg#3\t4\t3\t4\nc.jpg\ta.jpg#2\t2\t2\t3\n"
    )
    argv = ["correlate", "--judgments", str(tmp_path), "--format", "flickr8k-expert"]
    code, _, err = _run(*argv, "--metrics", "bleu_1", "--tokenizer", "whitespace")
    assert code == 0 and "Williams" not in err, err
    code, _, err = _run(*argv, "--metrics", "bleu_1", "rouge_l", "--tokenizer", "whitespace")
    assert code == 0 and "a Williams test counts the rows as independent items" in err, err


def test_items_left_out_say_what_correlate_computes(tmp_path):
    """The warning said "correlations, Williams tests, the combined metric and accuracies
    use ...": the command has no combined metric, and a graded set no accuracy."""
    p = tmp_path / "g.csv"
    p.write_text("id,candidate,references,score\n" + "".join(
        f"{i},{'two small birds sit on a long wire' if i == 2 else c},{r},{s}\n"
        for i, (c, r, s) in enumerate(ROWS, start=1)
    ))  # fmt: skip
    code, _, err = _run("correlate", "--judgments", str(p), "--format", "graded", "--metrics",
                        "bleu_4", "spice", "--spice-max-words", "6", "--workers", "0")  # fmt: skip
    assert code == 0, err
    (warned,) = [line for line in err.splitlines() if line.startswith("capeval: warning:")]
    assert warned.endswith("; correlations and Williams tests use the 7 items every metric scored")


def test_what_this_machine_said_stays_out_of_the_json(tmp_path, monkeypatch):
    """The JSON's warnings are the data's and the options': a --workers over this machine's
    CPUs (a warning start_pool gives) made the same run's JSON differ between machines."""
    import warnings

    from capeval_core import batch
    from capeval_core.errors import MachineWarning

    monkeypatch.setattr(batch, "worker_cap", lambda asked: (1, "this machine has 1 CPU"))
    with pytest.warns(MachineWarning, match="workers=4: this machine has 1 CPU"):
        assert batch.start_pool(4) is None
    p = tmp_path / "g.csv"
    p.write_text("id,candidate,references,score\n" + "".join(
        f"{i},{c},{r},{s}\n" for i, (c, r, s) in enumerate(ROWS, start=1)
    ))  # fmt: skip
    real = batch.score_all

    def said_by_the_machine(*args, **kwargs):
        warnings.warn("workers=4: this machine has 1 CPU", MachineWarning, stacklevel=2)
        return real(*args, **kwargs)

    monkeypatch.setattr(batch, "score_all", said_by_the_machine)
    monkeypatch.setenv("CAPEVAL_SCORES_CACHE_DIR", str(tmp_path / "cache"))
    code, out, err = _correlate(p)
    assert code == 0, err
    assert "capeval: warning: workers=4: this machine has 1 CPU" in err.splitlines()
    assert not any("workers=4" in w for w in json.loads(out)["warnings"])


def test_a_pairwise_file_with_a_missing_vote_is_scored_with_the_pair_dropped_and_said(tmp_path):
    """pandas' NaN vote (an empty cell) stopped `correlate --format pairwise` with exit 2;
    now the pair is dropped and said, as a graded row without a score is."""
    p = tmp_path / "pairs.csv"
    p.write_text(
        "candidate_a,candidate_b,references,votes_a,votes_b\n"
        "a dog on grass,a red bus,a dog running on grass,3,1\n"
        "a cat,a cat on a mat,a cat on a mat,,4\n"
        "a man on a horse,a bus,a man riding a horse,5,0\n"
    )
    code, _, err = _run("correlate", "--judgments", str(p), "--format", "pairwise",
                          "--metrics", "bleu_1")  # fmt: skip
    assert code == 0, err
    said = "3 read, 1 dropped (missing human vote in column 'votes_a' (line 3): 1), 2 scored"
    assert f"pairwise (pairs.csv): {said}" in err
    assert "1 row(s) dropped, not scored: missing human vote in column 'votes_a' (line 3)" in err


def test_two_metrics_opposed_to_each_other_in_a_williams_test_are_said(tmp_path):
    """Both agree with the humans and disagree with each other: their test takes |r23| (as
    WMT's), which makes its p smaller than the signed test's; a warning says so."""
    p, scores = _graded_and_scores(
        tmp_path, "id,up,down", lambda i, s: f"{s + 3 * (-1) ** i},{s - 3 * (-1) ** i}"
    )
    code, out, err = _correlate(p, "--metric-scores", str(scores))
    assert code == 0, err
    said = [line for line in err.splitlines() if "correlate negatively with each" in line]
    assert len(said) == 1, err
    assert said[0].startswith("capeval: warning: the Williams tests take |r| between two metrics")
    assert "each turned to agree with 'score'" in said[0] and "up and down (-0.6525)" in said[0]
    assert said[0].removeprefix("capeval: warning: ") in json.loads(out)["warnings"]


def test_the_json_carries_each_correlations_p_value(tmp_path):
    """The library's correlations carry scipy's p-values; the JSON had the statistics alone."""
    from scipy import stats as sps

    p, scores = _graded_and_scores(tmp_path, "id,mine", lambda i, s: s + (-1) ** i * 0.7 + i / 10)
    code, out, err = _correlate(p, "--metric-scores", str(scores))
    assert code == 0, err
    data = json.loads(out)
    human = [s for _, _, s in ROWS]
    mine = [s + (-1) ** i * 0.7 + i / 10 for i, (_, _, s) in enumerate(ROWS, start=1)]
    expected = {  # scipy 1.17's p-values on the same vectors
        "pearson": sps.pearsonr(mine, human).pvalue,
        "spearman": sps.spearmanr(mine, human).pvalue,
        "kendall_b": sps.kendalltau(mine, human, variant="b").pvalue,
        "kendall_c": sps.kendalltau(mine, human, variant="c").pvalue,
    }
    assert data["pvalues"]["mine"] == pytest.approx(expected)
    assert set(data["pvalues"]) == set(data["correlations"]) == {"bleu_4", "mine"}
