"""THumB 1.0 as distributed (issue 32), on a 10-image excerpt of the released files
(tests/golden/thumb/SOURCE.md names their origin). References come from COCO val2014 in the
installed package."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from capeval_core.errors import JudgmentFormatError
from capeval_core.judgments import LOADERS, load_judgments
from capeval_core.judgments.external import join_scores_file
from capeval_core.judgments.thumb import HUMAN_LEFT_OUT, _same

HERE = Path(__file__).resolve().parent.parent / "golden" / "thumb"
JUDGMENTS = HERE / "mscoco_THumB-1.0.jsonl"
REFERENCES = HERE / "mscoco_references.json"


def _rows():
    return [json.loads(line) for line in JUDGMENTS.read_text().splitlines()]


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
    first = js.items[0]
    assert first.id == "974|Up-Down" and first.image_id == "974"
    assert first.candidate == "A group of people riding on the back of an elephant."
    assert js.human().tolist()[:2] == [3.5, 3.5]
    humans = {r["seg_id"]: r["hyp"] for r in _rows() if r["SYS"] == "Human"}
    # the Human caption's own COCO annotation is never a reference; 39081's second copy is
    for it in js.items:
        n_same = sum(_same(r) == _same(humans[it.image_id]) for r in it.references)
        assert n_same == (1 if it.image_id == "39081" else 0)


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
    assert any("predates" in note for note in js.notes)
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


def test_bad_rows_name_line_and_key(tmp_path):
    rows = _rows()
    rows[3]["seg_id"] = "975"
    path = tmp_path / "t.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows))
    with pytest.raises(JudgmentFormatError, match=r"t.jsonl, record 3, line 4, column 'seg_id'"):
        load_judgments(path, "thumb")
    rows = _rows()
    del rows[5]["Con"]
    path.write_text("\n".join(json.dumps(r) for r in rows))
    with pytest.raises(JudgmentFormatError, match=r"line 6, column 'Con'"):
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
    assert data["n_rows"] == 40 and data["dropped"] == {HUMAN_LEFT_OUT: 10}
    assert list(data["correlations"]) == ["bleu_1", "mine"]
    assert data["signatures"]["mine"].startswith("external:mine|sha256:")


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
    rows = [r for r in _rows() if r["seg_id"] == "974"]
    path = tmp_path / "t.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows))
    human = next(r["hyp"] for r in rows if r["SYS"] == "Human")
    coco = {rows[0]["image"]: ("c1.", human.lower().rstrip("."), "c3", "c4", "c5", "a sixth")}
    js = load_judgments(path, "thumb", coco=coco)
    assert {it.references for it in js.items} == {("c1.", "c3", "c4", "c5")}
    assert not js.notes
