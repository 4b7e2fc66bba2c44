"""THumB 1.0's loader (issue 32) on a synthetic file in its exact format: 10 COCO val2014 images
x 5 systems, written by tools/make_thumb_fixture.py (tests/golden/thumb/SOURCE.md). References
come from COCO val2014 in the installed package. The files as distributed are not in the
repository (their repository states no licence): the tests that need them read the folder
named by ``CAPEVAL_THUMB_DIR`` and are skipped without it."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest

from capeval_core.errors import JudgmentFormatError
from capeval_core.judgments import LOADERS, load_judgments
from capeval_core.judgments.external import join_scores_file
from capeval_core.judgments.thumb import HUMAN_LEFT_OUT, _same, coco_val_by_file

HERE = Path(__file__).resolve().parent.parent / "golden" / "thumb"
JUDGMENTS = HERE / "mscoco_THumB-1.0.jsonl"
REFERENCES = HERE / "mscoco_references.json"


def _rows(path: Path = JUDGMENTS) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _machine_rows(path: Path = JUDGMENTS) -> list[dict]:
    return [r for r in _rows(path) if r["SYS"] != "Human"]


def test_registered_with_presets():
    assert LOADERS["thumb"].kind == "graded"
    assert list(LOADERS["thumb"].presets) == ["kasai2022", "kasai2022-with-human"]


def test_default_preset_leaves_human_out_with_four_coco_references():
    js = load_judgments(JUDGMENTS, "thumb")
    assert js.preset == "kasai2022" and js.format == "thumb"
    assert js.n_read == 50 and len(js) == 40 and js.dropped == {HUMAN_LEFT_OUT: 10}
    assert js.score_names == ("human_score", "P", "R", "Fl", "Con", "Inc")
    assert "seg_id" not in js.score_names and "set_id" not in js.score_names
    assert set(js.systems()) == {"Up-Down", "Unified-VLP", "VinVL-base", "VinVL-large"}
    assert {len(it.references) for it in js.items} == {4}
    machine = _machine_rows()
    assert [it.id for it in js.items] == [f"{r['seg_id']}|{r['SYS']}" for r in machine]
    assert [it.candidate for it in js.items] == [r["hyp"] for r in machine]
    assert js.human().tolist() == [r["human_score"] for r in machine]
    assert js.human("Fl").tolist() == [r["Fl"] for r in machine]
    humans = {r["seg_id"]: r["hyp"] for r in _rows() if r["SYS"] == "Human"}
    # the Human caption's own COCO annotation is never a reference; 39081's second copy is
    for it in js.items:
        n_same = sum(_same(r) == _same(humans[it.image_id]) for r in it.references)
        assert n_same == (1 if it.image_id == "39081" else 0)
    # 475330 has six COCO captions: the Karpathy split's first five, less the Human one
    (bears,) = {it.references for it in js.items if it.image_id == "475330"}
    coco = coco_val_by_file()["COCO_val2014_000000475330.jpg"]
    assert coco[5].strip() not in bears and set(bears) < {c.strip() for c in coco[:5]}


def test_with_human_no_human_caption_among_its_own_references():
    js = load_judgments(JUDGMENTS, "thumb", "kasai2022-with-human")
    assert len(js) == 50 and js.dropped == {}
    human = [it for it in js.items if it.system == "Human"]
    assert len(human) == 10
    for it in human:
        assert all(_same(r) != _same(it.candidate) for r in it.references), it.id
    assert any("removed" in note for note in js.notes)


def test_thumb_references_file_when_given():
    js = load_judgments(JUDGMENTS, "thumb", references_from=REFERENCES)
    refs = {
        json.loads(x)["seg_id"]: json.loads(x)["refs"]
        for x in REFERENCES.read_text().split("\n")
        if x
    }
    assert all(list(it.references) == refs[it.image_id] for it in js.items)
    humans = {r["seg_id"]: r["hyp"] for r in _rows() if r["SYS"] == "Human"}
    leaked = sum(any(_same(r) == _same(humans[s]) for r in refs[s]) for s in humans)
    assert leaked > 0
    assert any(note.startswith(f"{leaked:,} image(s) ") and "predates" in note for note in js.notes)
    with_human = load_judgments(
        JUDGMENTS, "thumb", "kasai2022-with-human", references_from=REFERENCES
    )
    for it in with_human.items:
        if it.system == "Human":
            assert all(_same(r) != _same(it.candidate) for r in it.references)


def test_folder_with_both_files(tmp_path):
    shutil.copy(JUDGMENTS, tmp_path)
    shutil.copy(REFERENCES, tmp_path)
    js = load_judgments(tmp_path, "thumb")
    assert js.source == ("mscoco_THumB-1.0.jsonl", "mscoco_references.json")


def test_metric_keys_and_scores_file(tmp_path):
    rows = _rows()
    for i, r in enumerate(rows):
        if r["SYS"] != "Human":  # left out by the default preset: may lack the score
            r["metric:mine"] = i / 100
    path = tmp_path / "t.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows))
    js = load_judgments(path, "thumb")
    assert js.external_names == ("mine",) and len(js.external[0].values) == 40
    with pytest.raises(JudgmentFormatError, match="'metric:mine'"):
        load_judgments(path, "thumb", "kasai2022-with-human")
    scores = tmp_path / "scores.csv"
    scores.write_text(
        "seg_id,SYS,theirs\n"
        + "".join(f"{r['seg_id']},{r['SYS']},{i}\n" for i, r in enumerate(rows))
    )
    joined = join_scores_file(js, scores)
    assert joined.external_names == ("mine", "theirs")
    machine = [i for i, r in enumerate(rows) if r["SYS"] != "Human"]
    assert np.array_equal(joined.external[1].values, machine)


def test_a_scores_file_s_human_rows_are_said_as_the_preset_s_not_as_unmatched(tmp_path):
    """A scores file of all five systems warned "10 row(s) match no item of the set"; one
    missing machine rows listed the Human rows among "the file's ids that match none",
    burying the ids it lacks. Now the Human rows are said as those the preset leaves out."""
    js = load_judgments(JUDGMENTS, "thumb")
    rows = _rows()
    scores = tmp_path / "scores.csv"
    scores.write_text(
        "seg_id,SYS,mine\n" + "".join(f"{r['seg_id']},{r['SYS']},{i}\n" for i, r in enumerate(rows))
    )
    joined = join_scores_file(js, scores)
    said = [n for n in joined.notes if n.startswith("scores.csv:")]
    humans = [i + 2 for i, r in enumerate(rows) if r["SYS"] == "Human"]
    assert said == [
        "scores.csv: 10 row(s) of the Human system, which preset 'kasai2022' leaves out "
        f"(ignored): lines {', '.join(map(str, humans[:5]))} and 5 more"
    ]
    first = _machine_rows()[0]
    lines = scores.read_text().splitlines()
    scores.write_text("\n".join(lines[:1] + [x for x in lines[1:] if not x.endswith(",0")]))
    with pytest.raises(JudgmentFormatError) as err:
        join_scores_file(js, scores)
    assert str(err.value) == (
        "scores.csv, column 'seg_id': 1 of the set's 40 ids have no row here (joined on "
        f"['seg_id', 'SYS']): '{first['seg_id']}|{first['SYS']}'; the set is unchanged"
    )


def test_bad_rows_name_line_and_key(tmp_path):
    rows = _rows()
    rows[3]["seg_id"] = "975"
    path = tmp_path / "t.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows))
    with pytest.raises(JudgmentFormatError, match=r"t.jsonl, record 4, line 4, column 'seg_id'"):
        load_judgments(path, "thumb")
    rows = _rows()
    del rows[5]["Con"]
    path.write_text("\n".join(json.dumps(r) for r in rows))
    with pytest.raises(JudgmentFormatError, match=r"line 6, column 'Con'"):
        load_judgments(path, "thumb")


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"P": 7.0}, r"line 3, column 'P': P is 7, outside THumB's 1 to 5"),
        ({"Fl": 0.5}, r"line 3, column 'Fl': Fl is 0.5, outside THumB's -5 to 0"),
        ({"human_score": 99.0}, r"column 'human_score': human_score is 99, but \(P \+ R\)"),
    ],
)
def test_scores_off_the_rubric_are_refused(tmp_path, change, message):
    """They were read, and moved every correlation without a word."""
    rows = _rows()
    rows[2].update(change)
    path = tmp_path / "t.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows))
    with pytest.raises(JudgmentFormatError, match=message):
        load_judgments(path, "thumb")


def test_correlate_cli_reads_thumb_with_a_scores_file(tmp_path, monkeypatch, capsys):
    from capeval_core.cli import main

    monkeypatch.setenv("CAPEVAL_CACHE_DIR", str(tmp_path / "cache"))
    rows = _rows()
    scores = tmp_path / "mine.json"
    scores.write_text(
        json.dumps([{"seg_id": r["seg_id"], "SYS": r["SYS"], "mine": len(r["hyp"])} for r in rows])
    )
    out = tmp_path / "out.json"
    argv = ["correlate", "--judgments", str(JUDGMENTS), "--format", "thumb", "--metrics"]
    code = main(
        [*argv, "bleu_1", "--metric-scores", str(scores), "--workers", "0", "--json", str(out)]
    )
    assert code == 0
    data = json.loads(out.read_text())
    # the text ends with the signatures the JSON holds (it printed none)
    signed = "".join(f"{k:<6}  {v}\n" for k, v in data["signatures"].items())
    assert capsys.readouterr().out.endswith(f"\n\nsignatures\n{signed}")
    assert data["n_rows"] == 40 and data["dropped"] == {HUMAN_LEFT_OUT: 10}
    assert list(data["correlations"]) == ["bleu_1", "mine"]
    assert data["signatures"]["mine"].startswith("external:mine|sha256:")
    # the references the summary line names, as `score --json` names its own (the JSON did not)
    from capeval_core.coco_files import describe_references

    refs = [it.references for it in load_judgments(JUDGMENTS, "thumb").items]
    assert data["references"] == "COCO val2014 captions (installed package)"
    assert data["references_sha256"] == describe_references("", refs)["references_sha256"]
    assert data["blank"] == {}


def test_correlate_cli_system_level_with_intervals(tmp_path, monkeypatch):
    from capeval_core.cli import main
    from capeval_core.judgments.analysis import at_level
    from capeval_core.judgments.scoring import score_judgments

    monkeypatch.setenv("CAPEVAL_CACHE_DIR", str(tmp_path / "cache"))
    out = tmp_path / "out.json"
    argv = ["correlate", "--judgments", str(JUDGMENTS), "--format", "thumb", "--metrics"]
    argv += ["bleu_1", "rouge_l", "--level", "system", "--resamples", "200", "--workers", "0"]
    assert main([*argv, "--json", str(out)]) == 0
    data = json.loads(out.read_text())
    assert data["level"] == "system" and data["resampling"]["over"] == "items within systems"
    js = load_judgments(JUDGMENTS, "thumb")
    # the preset chooses the rows and the human score: the JSON names it (it did not)
    assert data["format"] == "thumb" and data["preset"] == js.preset is not None
    values = score_judgments(js, ["bleu_1"], workers=0).values
    h, m = at_level(js.human(), values, js.systems())
    assert data["correlations"]["bleu_1"]["pearson"] == pytest.approx(
        np.corrcoef(m["bleu_1"], h)[0, 1]
    )
    low, high = data["intervals"]["bleu_1"]["pearson"]
    assert low <= data["correlations"]["bleu_1"]["pearson"] <= high
    # 4 systems: Williams on system means needs n > 3, so it runs with n = 4
    assert set(data["williams"]) == {"bleu_1", "rouge_l"}


def test_coco_references_are_the_karpathy_five_without_the_human_caption(tmp_path):
    rows = [r for r in _rows() if r["seg_id"] == _rows()[0]["seg_id"]]
    path = tmp_path / "t.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows))
    human = next(r["hyp"] for r in rows if r["SYS"] == "Human")
    coco = {rows[0]["image"]: ("c1.", human.lower().rstrip("."), "c3", "c4", "c5", "a sixth")}
    js = load_judgments(path, "thumb", coco=coco)
    assert {it.references for it in js.items} == {("c1.", "c3", "c4", "c5")}
    assert not js.notes


# -- THumB 1.0 as distributed (where a copy is at hand) ----------------------------------------
#: the folder holding THumB 1.0's mscoco_THumB-1.0.jsonl and mscoco_references.json
REAL_ENV = "CAPEVAL_THUMB_DIR"
#: sha256 of the files of THumB 1.0 at commit fd099b4f311d9c4fd24e6c58ef0df038ec1615f3
REAL_SHA256 = {
    "mscoco_THumB-1.0.jsonl": "463ebf947c793a541922ead33eb10a885e77c19e9c7d27cf89e034bfff643efa",
    "mscoco_references.json": "897672f1f53ed33a376237c33fabc89ebbd04b40e9ced82691c2e9c9324d8fdf",
}


@pytest.fixture(scope="module")
def real_thumb() -> Path:
    """THumB 1.0's folder as distributed, from ``$CAPEVAL_THUMB_DIR``; skipped without it."""
    folder = os.environ.get(REAL_ENV)
    if not folder:
        pytest.skip(
            f"THumB 1.0 as distributed is not in the repository (its repository states no "
            f"licence): set {REAL_ENV} to a folder holding its mscoco_THumB-1.0.jsonl and "
            "mscoco_references.json to run this"
        )
    path = Path(folder)
    for name, digest in REAL_SHA256.items():
        assert (path / name).is_file(), f"{REAL_ENV}={folder} holds no {name}"
        got = hashlib.sha256((path / name).read_bytes()).hexdigest()
        assert got == digest, f"{path / name} is not THumB 1.0 as distributed (sha256 {got})"
    return path


def test_the_real_file_loads_with_four_coco_references_per_caption(real_thumb):
    """All 500 Human captions are found among their image's first five COCO captions."""
    js = load_judgments(real_thumb / "mscoco_THumB-1.0.jsonl", "thumb")
    assert js.n_read == 2500 and len(js) == 2000 and js.dropped == {HUMAN_LEFT_OUT: 500}
    assert {len(it.references) for it in js.items} == {4} and not js.notes
    assert js.human().tolist() == [
        r["human_score"] for r in _machine_rows(real_thumb / "mscoco_THumB-1.0.jsonl")
    ]
    with_human = load_judgments(real_thumb, "thumb", "kasai2022-with-human")
    assert len(with_human) == 2500
    for it in with_human.items:
        if it.system == "Human":
            assert all(_same(r) != _same(it.candidate) for r in it.references), it.id


def test_the_real_references_file_lists_human_captions_it_predates(real_thumb):
    """THumB's references file was not regenerated after the Human rows were re-aligned: the
    loader counts the images whose references hold their Human caption (39 of 500 in THumB
    1.0's files, counted here from the files themselves)."""
    js = load_judgments(real_thumb, "thumb")
    humans = {
        r["seg_id"]: r["hyp"]
        for r in _rows(real_thumb / "mscoco_THumB-1.0.jsonl")
        if r["SYS"] == "Human"
    }
    refs = {
        (row := json.loads(line))["seg_id"]: row["refs"]
        for line in (real_thumb / "mscoco_references.json").read_text().splitlines()
        if line
    }
    leaked = sum(any(_same(r) == _same(humans[s]) for r in refs[s]) for s in humans)
    assert leaked == 39
    assert any(note.startswith(f"{leaked} image(s) ") for note in js.notes)


@pytest.mark.parametrize(("value", "said"), [(None, "null"), (True, "true")])
def test_a_json_null_score_is_named_as_the_file_has_it(tmp_path, value, said):
    """It said "not a number: None" of the file's null."""
    rows = _rows()
    rows[2]["P"] = value
    path = tmp_path / "t.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows))
    with pytest.raises(JudgmentFormatError) as err:
        load_judgments(path, "thumb")
    assert str(err.value).endswith(f"line 3, column 'P': not a number: {said}")
