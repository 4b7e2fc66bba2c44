"""``capeval compare``: the JSON contract, the table, per-image output and bad input."""

from __future__ import annotations

import contextlib
import csv
import io
import json

import pytest

from capeval_core.cli import main
from capeval_core.resources import coco_caption_file, coco_caption_sets


@pytest.fixture(autouse=True)
def _own_score_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("CAPEVAL_SCORES_CACHE_DIR", str(tmp_path / "scores"))


def _run(*argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([str(a) for a in argv])
    return code, out.getvalue(), err.getvalue()


def _files(tmp_path, n=60):
    sets = coco_caption_sets("val", n)
    ann = {
        "images": [{"id": s.image_id} for s in sets],
        "annotations": [
            {"image_id": s.image_id, "caption": r} for s in sets for r in s.references[1:]
        ],
    }
    (tmp_path / "captions.json").write_text(json.dumps(ann))
    systems = {
        "base": [s.candidate for s in sets],
        "other": [s.references[0] for s in sets],
        "reversed": [" ".join(reversed(s.candidate.split())) for s in sets],
    }
    systems["base"][0] = "=HYPERLINK(1) " + systems["base"][0]  # a formula in a caption
    paths = []
    for name, caps in systems.items():
        path = tmp_path / f"{name}.json"
        path.write_text(
            json.dumps(
                [{"image_id": s.image_id, "caption": c} for s, c in zip(sets, caps, strict=True)]
            )
        )
        paths.append(path)
    return tmp_path / "captions.json", paths


def test_json_contract_and_values_equal_capeval_score(tmp_path):
    ann, paths = _files(tmp_path)
    out_json = tmp_path / "out.json"
    code, out, _ = _run(
        "compare", "--annotations", ann, "--results", *paths, "--json", out_json,
        "--trials", 500, "--resamples", 200,
    )  # fmt: skip
    assert code == 0
    data = json.loads(out_json.read_text())
    assert set(data) == {"systems", "corpus", "ci", "paired", "signatures", "n_images"}
    assert data["systems"] == ["base", "other", "reversed"]  # the file stems
    assert data["n_images"] == 60
    keys = ["bleu_1", "bleu_2", "bleu_3", "bleu_4", "rouge_l", "cider_d"]  # score's defaults
    assert list(data["corpus"]["base"]) == keys
    for k in keys:
        assert set(data["paired"][k]) == {"other", "reversed"}
        assert set(data["paired"][k]["other"]) == {"delta", "ci", "p_value"}
        low, high = data["ci"]["other"][k]
        assert low <= high
    for name, path in zip(data["systems"], paths, strict=True):
        code, alone, _ = _run("score", "--results", path, "--annotations", ann, "--json")
        assert code == 0
        assert json.loads(alone)["corpus"] == data["corpus"][name]  # bit for bit
    delta = data["paired"]["cider_d"]["other"]["delta"]
    assert delta == data["corpus"]["other"]["cider_d"] - data["corpus"]["base"]["cider_d"]
    # the printed table: the baseline, each system's delta, the marker of p < 0.05
    assert "Baseline: base" in out and "CIDEr-D (± 95% CI)" in out
    assert "Δ -" in out and ")*" in out
    assert "seed 12345" in out


def test_names_tests_and_stdout_json(tmp_path):
    ann, paths = _files(tmp_path, 40)
    code, out, _ = _run(
        "compare", "--annotations", ann, "--results", *paths[:2], "--names", "A,B",
        "--metrics", "bleu_4", "rouge_l", "--paired", "bs", "--resamples", 100, "--json", "-",
    )  # fmt: skip
    assert code == 0
    data = json.loads(out)  # only JSON on stdout
    assert data["systems"] == ["A", "B"]
    assert "paired:bs|resamples:100|seed:12345" in data["signatures"]["bleu_4"]
    assert "trials" not in data["signatures"]["bleu_4"]  # no randomization run
    p = data["paired"]["rouge_l"]["B"]["p_value"]
    assert 1 / 101 <= p <= 1
    code, out, _ = _run(
        "compare", "--annotations", ann, "--results", *paths[:2], "--metrics", "rouge_l",
        "--paired", "ar", "--trials", 99, "--json", "-",
    )  # fmt: skip
    p_ar = json.loads(out)["paired"]["rouge_l"]["other"]["p_value"]
    assert p_ar * 100 == pytest.approx(round(p_ar * 100))  # (c + 1) / (99 + 1)


def test_per_item_csv_is_spreadsheet_safe_and_signed(tmp_path):
    ann, paths = _files(tmp_path, 30)
    items = tmp_path / "items.csv"
    code, _, _ = _run(
        "compare", "--annotations", ann, "--results", *paths, "--metrics", "bleu_4",
        "--per-item", items, "--trials", 100, "--resamples", 100,
    )  # fmt: skip
    assert code == 0
    text = items.read_text()
    comments = [line for line in text.splitlines() if line.startswith("#")]
    assert any(line.startswith("# signature bleu_4: bleu|") for line in comments)
    rows = list(csv.DictReader(line for line in text.splitlines() if not line.startswith("#")))
    assert len(rows) == 30
    assert rows[0]["base: caption"].startswith("'=HYPERLINK")  # escaped, shown as text
    assert {"image_id", "base: bleu_4", "other: bleu_4", "reversed: bleu_4"} <= set(rows[0])
    as_json = tmp_path / "items.json"
    code, _, _ = _run(
        "compare", "--annotations", ann, "--results", *paths[:2], "--metrics", "bleu_4",
        "--per-item", as_json, "--trials", 100, "--resamples", 100,
    )  # fmt: skip
    data = json.loads(as_json.read_text())
    assert data["systems"] == ["base", "other"]
    assert data["signatures"]["bleu_4"].startswith("bleu|")
    assert len(data["items"]) == 30 and "other: bleu_4" in data["items"][0]


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda rows: rows[:-1], "other.json lacks 1 image_id(s) of"),
        (lambda rows: [*rows, {"image_id": 7, "caption": "x"}], "other.json has 1 image_id(s)"),
        (lambda rows: [*rows, rows[2]], "other.json: 1 image_id(s) have more than one caption"),
        (lambda rows: {"not": "a list"}, "other.json: expected a list"),
    ],
)
def test_bad_results_give_one_line_and_status_2(tmp_path, edit, message):
    ann, paths = _files(tmp_path, 10)
    other = paths[1]
    other.write_text(json.dumps(edit(json.loads(other.read_text()))))
    code, out, err = _run("compare", "--annotations", ann, "--results", paths[0], other)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and message in err
    assert str(other) in err or other.name in err


def test_other_bad_input(tmp_path):
    ann, paths = _files(tmp_path, 10)
    code, _, err = _run("compare", "--annotations", ann, "--results", paths[0])
    assert code == 2 and "two or more" in err
    code, _, err = _run("compare", "--annotations", ann, "--results", *paths, "--names", "a,b")
    assert code == 2 and "2 system name(s) for 3 results file(s)" in err
    code, _, err = _run("compare", "--annotations", ann, "--results", *paths, "--metrics", "nope")
    assert code == 2 and "unknown metric" in err
    rows = json.loads(paths[0].read_text())
    stray = [*rows, {"image_id": 1, "caption": "an image with no reference"}]
    for path in paths[:2]:
        path.write_text(json.dumps(stray))
    code, _, err = _run("compare", "--annotations", ann, "--results", *paths[:2])
    assert code == 2 and "have no reference in" in err and ": 1" in err


def test_coco_val2014_references_by_default(tmp_path):
    # results on COCO val image ids, no --annotations: the installed package's references,
    # scored as `capeval score` scores the same images against captions_val2014.json
    data = coco_caption_file("val")
    images = data["images"][:25]
    ids = {img["id"] for img in images}
    anns = [a for a in data["annotations"] if a["image_id"] in ids]
    subset = tmp_path / "val-subset.json"
    subset.write_text(json.dumps({"images": images, "annotations": anns}))
    first = {}
    for a in anns:
        first.setdefault(a["image_id"], a["caption"])
    paths = []
    for name, caps in (("one", first), ("two", {i: "a photo of something" for i in ids})):
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps([{"image_id": i, "caption": c} for i, c in caps.items()]))
        paths.append(path)
    code, out, err = _run(
        "compare", "--results", *paths, "--metrics", "bleu_4", "cider_d", "--json", "-",
        "--trials", 100, "--resamples", 100,
    )  # fmt: skip
    assert code == 0, err
    result = json.loads(out)
    assert result["n_images"] == 25
    code, alone, _ = _run(
        "score", "--results", paths[0], "--annotations", subset, "--metrics", "bleu_4", "cider_d",
        "--json",
    )  # fmt: skip
    assert json.loads(alone)["corpus"] == result["corpus"]["one"]


def test_files_in_other_orders_score_as_capeval_score_does(tmp_path):
    # No images list: `capeval score` takes each file's own record order, and the PTB
    # tokenizer looks into the next caption ("... a P." before "A black cat" splits the
    # period off). A file in another order is tokenized and summed in its own order.
    sets = coco_caption_sets("val", 20)
    ann = {
        "annotations": [{"image_id": s.image_id, "caption": r} for s in sets for r in s.references]
    }
    (tmp_path / "captions.json").write_text(json.dumps(ann))
    caps = [s.candidate for s in sets]
    caps[3], caps[4] = "a red sign with a big letter P.", "A black cat sits on a car"
    rows = [{"image_id": s.image_id, "caption": c} for s, c in zip(sets, caps, strict=True)]
    (tmp_path / "a.json").write_text(json.dumps(rows))
    (tmp_path / "b.json").write_text(json.dumps(rows[::-1]))  # the same captions, reversed
    keys = ["bleu_1", "bleu_4", "rouge_l", "cider_d"]
    code, out, _ = _run(
        "compare", "--annotations", tmp_path / "captions.json", "--results", tmp_path / "a.json",
        tmp_path / "b.json", "--metrics", *keys, "--json", "-", "--trials", 50, "--resamples", 50,
    )  # fmt: skip
    assert code == 0
    data = json.loads(out)
    for name in ("a", "b"):
        code, alone, _ = _run(
            "score", "--results", tmp_path / f"{name}.json", "--annotations",
            tmp_path / "captions.json", "--metrics", *keys, "--json",
        )  # fmt: skip
        assert json.loads(alone)["corpus"] == data["corpus"][name]
    # the order changed the tokens, so the two "systems" differ although their captions agree
    assert data["corpus"]["a"] != data["corpus"]["b"]
