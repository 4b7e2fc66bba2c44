"""External metric scores (issue 32): ``metric:<name>`` columns, a joined scores file, the
library call, and their use beside built-in metrics (scoring, correlations, Williams)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from capeval_core.errors import InputError, JudgmentFormatError
from capeval_core.judgments import load_judgments
from capeval_core.judgments.external import add_metric_scores, join_scores_file
from capeval_core.judgments.scoring import score_judgments
from capeval_core.stats import williams_matrix

ROWS = [
    ("r1", "a dog runs on the grass", "a dog running on grass|||a brown dog on grass", 5, 0.9),
    ("r2", "a dog on grass", "a dog running on grass|||a brown dog on grass", 4, 0.7),
    ("r3", "a cat sits on a mat", "a cat on a mat|||a kitten on a rug", 5, 0.8),
    ("r4", "a cat", "a cat on a mat|||a kitten on a rug", 3, 0.4),
    ("r5", "a red bus", "a man riding a horse|||a person on a horse", 1, 0.1),
    ("r6", "a man on a horse", "a man riding a horse|||a person on a horse", 5, 0.95),
    ("r7", "two people", "two women in a park|||two friends in a park", 2, 0.3),
]


@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch):
    monkeypatch.setenv("CAPEVAL_CACHE_DIR", str(tmp_path / "cache"))


def _csv(tmp_path, rows=ROWS, header="id,candidate,references,quality,metric:mine"):
    p = tmp_path / "j.csv"
    lines = [header] + [",".join(str(c) for c in r) for r in rows]
    p.write_text("\n".join(lines) + "\n")
    return p


def _quality_and_x(tmp_path):
    """A set whose file has a second numeric column, ``x``, read as no human score."""
    path = _csv(tmp_path, header="id,candidate,references,quality,x")
    return load_judgments(path, "graded", score_columns=["quality"])


def test_metric_column_is_an_external_metric_not_a_human_score(tmp_path):
    js = load_judgments(_csv(tmp_path), "graded")
    assert js.score_names == ("quality",)
    assert js.external_names == ("mine",)
    assert js.external[0].values.tolist() == [r[4] for r in ROWS]
    assert js.external[0].signature.startswith("external:mine|sha256:")
    assert "metric:mine" in js.to_frame().columns


def test_metric_column_in_json_and_jsonl(tmp_path):
    records = [
        {"id": i, "candidate": c, "references": r.split("|||"), "q": s, "metric:mine": m}
        for i, c, r, s, m in ROWS
    ]
    (tmp_path / "j.json").write_text(json.dumps(records))
    (tmp_path / "j.jsonl").write_text("\n".join(json.dumps(r) for r in records))
    for name in ("j.json", "j.jsonl"):
        js = load_judgments(tmp_path / name, "graded")
        assert js.score_names == ("q",) and js.external_names == ("mine",)


def test_kept_row_without_metric_value_names_file_line_and_column(tmp_path):
    rows = [*ROWS[:2], ("r3", "a cat", "a cat on a mat", 5, "")]
    with pytest.raises(JudgmentFormatError) as err:
        load_judgments(_csv(tmp_path, rows), "graded")
    assert "j.csv, line 4, column 'metric:mine'" in str(err.value)


def test_dropped_row_may_lack_the_metric_value(tmp_path):
    rows = [*ROWS[:2], ("r3", "a cat", "a cat on a mat", "", "")]
    js = load_judgments(_csv(tmp_path, rows), "graded")
    assert len(js) == 2 and js.dropped == {"missing human score in column 'quality'": 1}
    assert js.dropped_at == {"missing human score in column 'quality'": "line 4"}


def test_metric_column_named_like_a_builtin_is_refused(tmp_path):
    header = "id,candidate,references,quality,metric:cider_d"
    with pytest.raises(JudgmentFormatError, match="built-in metric key"):
        load_judgments(_csv(tmp_path, header=header), "graded")


@pytest.mark.parametrize("name", ["bleu_4", "spice_object", "spice_count", "spice_size"])
def test_every_reported_key_is_refused_as_an_external_name(tmp_path, name):
    """SPICE's category keys (reported when asked for) were accepted as an external
    metric's name while ``bleu_4`` was refused: the two would be confused alike."""
    js = load_judgments(_csv(tmp_path), "graded")
    with pytest.raises(InputError, match="is a built-in metric key; rename it"):
        add_metric_scores(js, name, np.linspace(0, 1, len(js)))


@pytest.mark.parametrize(
    ("name", "key"), [("CIDEr-D", "cider_d"), ("BLEU_4", "bleu_4"), ("rouge-l", "rouge_l")]
)
def test_a_builtin_key_spelt_otherwise_is_refused_as_an_external_name(tmp_path, name, key):
    """ "CIDEr-D" was accepted while "cider_d" was refused, and the CLI's table showed a row
    CIDEr-D under the built-in cider_d: case and separators no longer tell them apart."""
    js = load_judgments(_csv(tmp_path), "graded")
    with pytest.raises(InputError, match=f"is a built-in metric key \\({key}, spelt otherwise\\)"):
        add_metric_scores(js, name, np.linspace(0, 1, len(js)))
    add_metric_scores(js, "cider_like", np.linspace(0, 1, len(js)))  # a name of its own


def test_a_metric_named_as_the_human_score_is_refused(tmp_path):
    """The judgment file given as its own scores file added a metric `quality` correlating
    1.0 with the human score `quality`, and a Williams row for it."""
    js = _quality_and_x(tmp_path)
    with pytest.raises(JudgmentFormatError) as err:
        join_scores_file(js, tmp_path / "j.csv")
    assert str(err.value).startswith(
        "j.csv, line 1, column 'quality': a metric cannot be named as the set's human score "
        "'quality': its rows would read as the human score"
    )
    with pytest.raises(JudgmentFormatError, match="column 'metric:quality': a metric cannot"):
        load_judgments(_csv(tmp_path, header="id,candidate,references,quality,metric:quality"),
                       "graded")  # fmt: skip
    # in another case it reads as the same column to a person, and was correlated (1.0)
    with pytest.raises(JudgmentFormatError, match="column 'metric:Quality': a metric cannot"):
        load_judgments(_csv(tmp_path, header="id,candidate,references,quality,metric:Quality"),
                       "graded")  # fmt: skip


def test_scores_file_joined_by_id(tmp_path):
    js = _quality_and_x(tmp_path)
    scores = tmp_path / "scores.csv"
    # another order, and a row for an item the set does not have
    scores.write_text("mine,id\n" + "".join(f"{r[4]},{r[0]}\n" for r in reversed(ROWS)) + "9,zz\n")
    joined = join_scores_file(js, scores)
    assert joined.external_names == ("mine",)
    assert joined.external[0].values.tolist() == [r[4] for r in ROWS]
    assert joined.items_digest == js.items_digest
    assert joined.content_digest != js.content_digest
    assert any("match no item" in n for n in joined.notes)
    assert js.external == ()  # the loaded set itself is unchanged


def test_scores_file_keyed_by_the_users_own_id_name(tmp_path):
    """A set loaded with a column mapping ``seg`` -> ``id``: its scores file keeps the
    user's name ``seg`` (it was refused: "missing id column(s) ['id']"); ``id`` joins too,
    and a file with neither names both, and its own id column where a row fails."""
    js = _quality_and_x(tmp_path)
    scores = tmp_path / "scores.csv"
    scores.write_text("seg,mine\n" + "".join(f"{r[0]},{r[4]}\n" for r in ROWS))
    joined = join_scores_file(js, scores, id_names={"id": "seg"})
    assert joined.external[0].values.tolist() == [r[4] for r in ROWS]
    plain = tmp_path / "plain.csv"
    plain.write_text("id,mine\n" + "".join(f"{r[0]},{r[4]}\n" for r in ROWS))
    assert join_scores_file(js, plain, id_names={"id": "seg"}).external_names == ("mine",)
    scores.write_text("key,mine\nr1,0.5\n")
    with pytest.raises(JudgmentFormatError, match=r"\['id'\].*as its file named them: 'seg'"):
        join_scores_file(js, scores, id_names={"id": "seg"})
    scores.write_text("seg,mine\n" + "".join(f"{r[0]},{r[4]}\n" for r in ROWS[1:]))
    with pytest.raises(JudgmentFormatError, match=r"column 'seg'.*joined on \['seg'\]"):
        join_scores_file(js, scores, id_names={"id": "seg"})


def test_scores_file_with_unmatched_ids_is_a_clear_error(tmp_path):
    js = _quality_and_x(tmp_path)
    scores = tmp_path / "scores.json"
    scores.write_text(json.dumps([{"id": r[0], "mine": r[4]} for r in ROWS[:-2]]))
    with pytest.raises(JudgmentFormatError) as err:
        join_scores_file(js, scores)
    message = str(err.value)
    assert "scores.json" in message and "'r6'" in message and "'r7'" in message
    assert "2 of the set's 7 ids" in message
    assert js.external == ()


def test_library_call_checks_length_and_name(tmp_path):
    js = _quality_and_x(tmp_path)
    with pytest.raises(InputError, match="one value per item"):
        add_metric_scores(js, "mine", [1.0, 2.0])
    with pytest.raises(InputError, match="built-in"):
        add_metric_scores(js, "meteor", np.zeros(len(js)))
    a = add_metric_scores(js, "mine", np.arange(len(js)))
    b = add_metric_scores(js, "mine", np.arange(len(js))[::-1])
    assert a.external[0].signature != b.external[0].signature


def test_external_scored_beside_builtins_without_rescoring(tmp_path, monkeypatch):
    from capeval_core import batch

    js = load_judgments(_csv(tmp_path), "graded")
    calls = []
    real = batch.score_metric
    monkeypatch.setattr(batch, "score_metric", lambda *a, **k: calls.append(a[0]) or real(*a, **k))
    first = score_judgments(js, ["bleu_4", "mine"], workers=0)
    assert first.keys == ("bleu_4", "mine")
    assert first.values["mine"].tolist() == [r[4] for r in ROWS]
    assert first.signatures["mine"] == js.external[0].signature
    # another external metric on the same items: the built-in metric comes from the cache
    more = add_metric_scores(js, "other", np.linspace(0, 1, len(js)))
    again = score_judgments(more, ["bleu_4", "mine", "other"], workers=0)
    assert calls == ["bleu"] and again.from_cache["bleu_4"]
    matrix = williams_matrix(more.human(), again.values, "pearson")
    assert set(matrix.metrics) == {"bleu_4", "mine", "other"}


def test_pairwise_library_call_gives_accuracy(tmp_path):
    from capeval_core.stats import pairwise_accuracy

    p = tmp_path / "p.csv"
    p.write_text(
        "candidate_a,candidate_b,references,preferred\n"
        "a dog,a cat,a dog runs|||a dog,a\n"
        "a cat,a dog,a dog runs|||a dog,b\n"
        "a bus,a horse,a horse|||a horse runs,b\n"
    )
    js = load_judgments(p, "pairwise")
    js = add_metric_scores(js, "mine", [1.0, 0.0, 0.2], [0.0, 1.0, 0.9])
    scores = score_judgments(js, ["bleu_1", "mine"], workers=0)
    res = pairwise_accuracy(scores.values_a["mine"], scores.values_b["mine"], js.preferences())
    assert res.as_dict()["all"] == 1.0


def test_pairwise_file_metric_columns_per_candidate(tmp_path):
    from capeval_core.stats import pairwise_accuracy

    p = tmp_path / "p.csv"
    head = "candidate_a,candidate_b,references,preferred,metric:mine:a,metric:mine:b\n"
    p.write_text(
        head + "a dog,a cat,a dog runs|||a dog,a,0.9,0.1\n"
        "a cat,a dog,a dog runs|||a dog,b,0.2,0.8\n"
        "a bus,a horse,a horse|||a horse runs,b,0.4,0.3\n"
    )
    js = load_judgments(p, "pairwise")
    assert js.external_names == ("mine",)
    assert js.external[0].values.tolist() == [[0.9, 0.2, 0.4], [0.1, 0.8, 0.3]]
    scores = score_judgments(js, ["mine"], workers=0)
    res = pairwise_accuracy(scores.values_a["mine"], scores.values_b["mine"], js.preferences())
    assert res.as_dict()["all"] == pytest.approx(2 / 3)
    p.write_text(head.replace(",metric:mine:b", "") + "a dog,a cat,a dog,a,0.9\n")
    with pytest.raises(JudgmentFormatError, match="metric:mine:b"):
        load_judgments(p, "pairwise")


def test_numeric_id_columns_are_never_default_human_scores(tmp_path):
    p = tmp_path / "j.csv"
    p.write_text("seg_id,set_id,candidate,references,quality\n974,5,a dog,a dog runs,4\n")
    js = load_judgments(p, "graded")
    assert js.score_names == ("quality",)


def test_other_human_columns_share_the_metric_scores(tmp_path, monkeypatch):
    from capeval_core import batch

    calls = []
    real = batch.score_metric
    monkeypatch.setattr(batch, "score_metric", lambda *a, **k: calls.append(a[0]) or real(*a, **k))
    path = _csv(tmp_path, header="id,candidate,references,quality,other")
    both = load_judgments(path, "graded", score_columns=["quality", "other"])
    one = load_judgments(path, "graded", score_columns=["other"])
    assert one.content_digest != both.content_digest
    assert one.items_digest == both.items_digest
    first = score_judgments(both, ["rouge_l"], workers=0)
    second = score_judgments(one, ["rouge_l"], workers=0)
    assert calls == ["rouge_l"] and second.from_cache["rouge_l"]
    assert np.array_equal(first.values["rouge_l"], second.values["rouge_l"])
