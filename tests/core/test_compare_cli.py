"""``capeval compare``: the JSON contract, the table, per-image output and bad input."""

from __future__ import annotations

import contextlib
import csv
import io
import json
from pathlib import Path

import pytest

from capeval_core import InputError
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
    assert set(data) == {
        "systems", "corpus", "ci", "paired", "signatures", "n_images", "references",
        "references_sha256", "dropped",
    }  # fmt: skip
    assert data["dropped"]["other"] == {"n": 0, "image_ids": []}
    assert data["systems"] == ["base", "other", "reversed"]  # the file stems
    assert data["n_images"] == 60
    keys = ["bleu_1", "bleu_2", "bleu_3", "bleu_4", "rouge_l", "cider_d"]  # score's defaults
    assert list(data["corpus"]["base"]) == keys
    for k in keys:
        assert set(data["paired"][k]) == {"other", "reversed"}
        assert set(data["paired"][k]["other"]) == {
            "delta", "ci", "p_value", "p_bootstrap", "p_randomization"
        }  # fmt: skip
        low, high = data["ci"]["other"][k]
        assert low <= high
    for name, path in zip(data["systems"], paths, strict=True):
        code, alone, _ = _run("score", "--results", path, "--annotations", ann, "--json")
        assert code == 0
        assert json.loads(alone)["corpus"] == data["corpus"][name]  # bit for bit
        # the same references, named as score names them
        assert json.loads(alone)["references_sha256"] == data["references_sha256"]
    delta = data["paired"]["cider_d"]["other"]["delta"]
    assert delta == data["corpus"]["other"]["cider_d"] - data["corpus"]["base"]["cider_d"]
    # the printed table: the baseline, each system's delta, the marker of p < 0.05
    assert "Baseline: base" in out and "CIDEr-D (± 95% CI)" in out
    assert "Δ -" in out and ")*" in out
    assert "(p < 0.005)*" in out and "0.0050" not in out  # the floor of 200 resamples
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
    assert data["paired"]["rouge_l"]["B"]["p_bootstrap"] == p  # the one test run
    assert data["paired"]["rouge_l"]["B"]["p_randomization"] is None
    code, out, _ = _run(
        "compare", "--annotations", ann, "--results", *paths[:2], "--metrics", "rouge_l",
        "--paired", "ar", "--trials", 99, "--json", "-",
    )  # fmt: skip
    p_ar = json.loads(out)["paired"]["rouge_l"]["other"]["p_value"]
    assert p_ar * 100 == pytest.approx(round(p_ar * 100))  # (c + 1) / (99 + 1)


def test_per_item_csv_opens_in_pandas_is_spreadsheet_safe_and_signed(tmp_path):
    import pandas as pd

    ann, paths = _files(tmp_path, 30)
    items, as_json = tmp_path / "items.csv", tmp_path / "as-json.json"
    for out in (items, as_json):
        code, _, err = _run(
            "compare", "--annotations", ann, "--results", *paths, "--metrics", "bleu_4",
            "cider_d", "--per-item", out, "--trials", 100, "--resamples", 100,
        )  # fmt: skip
        assert code == 0, err
    frame = pd.read_csv(items)  # a plain read: no comment lines, one header
    data = json.loads(as_json.read_text())
    assert len(frame) == 30 == len(data["items"])
    assert list(frame.columns) == list(data["items"][0])
    assert frame["base: caption"][0].startswith("'=HYPERLINK")  # escaped, shown as text
    assert data["items"][0]["base: caption"].startswith("=HYPERLINK")  # the JSON as it is
    for column in frame.columns:
        from_json = [row[column] for row in data["items"]]
        if column.endswith(": caption"):
            assert frame[column].tolist()[1:] == from_json[1:]
        else:
            assert frame[column].tolist() == pytest.approx(from_json, rel=1e-15), column
    with open(items, newline="") as fh:
        rows = list(csv.reader(fh))
    assert not any(cell.startswith(("=", "+", "-", "@")) for row in rows for cell in row)
    sidecar = json.loads((tmp_path / "items.signatures.json").read_text())
    assert sidecar["describes"] == "items.csv"
    assert sidecar["signatures"] == data["signatures"]
    assert sidecar["signatures"]["bleu_4"].startswith("bleu|")
    assert sidecar["systems"] == ["base", "other", "reversed"] == data["systems"]
    assert not (tmp_path / "items.signatures.json").read_text().startswith("#")
    # the JSON has its sidecar too, as score's per-item JSON has: every per-image file alike
    beside_json = json.loads((tmp_path / "as-json.signatures.json").read_text())
    assert beside_json["describes"] == "as-json.json"
    assert beside_json["signatures"] == data["signatures"]
    assert beside_json["references_sha256"] == data["references_sha256"]


def test_score_per_item_csv_opens_in_pandas_with_a_sidecar(tmp_path):
    import pandas as pd

    ann, paths = _files(tmp_path, 12)
    code, out, err = _run(
        "score", "--results", paths[0], "--annotations", ann, "--metrics", "bleu_4", "rouge_l",
        "--per-item", tmp_path / "one.csv", "--json",
    )  # fmt: skip
    assert code == 0, err
    frame = pd.read_csv(tmp_path / "one.csv")
    assert list(frame.columns) == ["image_id", "bleu_4", "rouge_l"] and len(frame) == 12
    sidecar = json.loads((tmp_path / "one.signatures.json").read_text())
    assert sidecar["signatures"] == json.loads(out)["signatures"]


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
    code, _, err = _run("compare", "--annotations", ann, "--results", *paths, "--names", "a,b")
    assert code == 2 and "--names gives 2 name(s) for 3 results file(s)" in err
    code, _, err = _run("compare", "--annotations", ann, "--results", *paths, "--metrics", "nope")
    assert code == 2 and "unknown metric" in err
    rows = json.loads(paths[0].read_text())
    stray = [*rows, {"image_id": 1, "caption": "an image with no reference"}]
    for path in paths[:2]:  # one record a line, after "[": record k on line k + 1
        path.write_text("[\n" + ",\n".join(json.dumps(r) for r in stray) + "\n]")
    code, _, err = _run("compare", "--annotations", ann, "--results", *paths[:2])
    n = len(stray)
    said = f"1 image_id(s) of {paths[0]} have no reference in {ann}: image 1 (record {n}, line "
    assert code == 2 and f"{said}{n + 1})" in err, err
    code, _, err = _run("score", "--annotations", ann, "--results", paths[0])
    assert code == 2 and f"{said}{n + 1})" in err, err


def test_trials_with_paired_bootstrap_alone_are_refused(tmp_path):
    """--trials with --paired bs was ignored without a word (exit 0); refused before any
    file is read. --resamples and --seed are read with every --paired: the intervals."""
    ann, paths = _files(tmp_path, 10)
    missing = [tmp_path / "a.json", tmp_path / "b.json"]
    code, out, err = _run("compare", "--results", *missing, "--paired", "bs", "--trials", 50)
    message = "--trials: not used with --paired bs (trials are approximate randomization's)"
    assert (code, out, err) == (2, "", f"capeval: error: {message}; leave it out\n")
    common = ("compare", "--annotations", ann, "--results", *paths[:2], "--metrics", "bleu_4")
    for extra in (
        ("--paired", "bs", "--resamples", 20, "--seed", 3),
        ("--paired", "ar", "--trials", 20, "--resamples", 20),
        ("--trials", 20, "--resamples", 20),  # both, the default
    ):
        code, _, err = _run(*common, *extra)
        assert code == 0 and "not used" not in err, err


@pytest.mark.parametrize(
    ("extra", "named"),
    [
        (["--paired", "ar"], "--paired: not used"),
        (["--trials", "50"], "--trials: not used"),
        (["--on-missing", "intersect"], "--on-missing: not used"),
        (["--paired", "both", "--on-missing", "error"], "--paired, --on-missing: not used"),
    ],
)
def test_test_options_with_one_results_file_are_refused(tmp_path, extra, named):
    """One results file gets its intervals and no paired test, and has no other file's
    images to match: these options were ignored without a word (exit 0)."""
    code, out, err = _run("compare", "--results", tmp_path / "a.json", *extra)
    where = "with one --results file (no other system to compare it with)"
    assert code == 2 and out == "" and err.count("\n") == 1
    assert err.startswith(f"capeval: error: {named} {where}; leave ")


def _signature_block(text: str) -> list[list[str]]:
    """The ``key  signature`` lines after a text report's "signatures" heading."""
    block = text.split("\nsignatures\n", 1)[1].splitlines()
    return [line.split(None, 1) for line in block]


def test_the_text_report_carries_the_jsons_signatures(tmp_path):
    """compare's table printed its numbers without signatures (its JSON had them); they
    follow the table as score's text report prints them, one line per key."""
    ann, paths = _files(tmp_path, 20)
    argv = (
        "compare", "--annotations", ann, "--results", *paths[:2], "--metrics", "bleu_4",
        "rouge_l", "--paired", "bs", "--resamples", 50,
    )  # fmt: skip
    code, text, err = _run(*argv)
    assert code == 0, err
    code, out, err = _run(*argv, "--json", "-")
    signatures = json.loads(out)["signatures"]
    assert list(signatures) == ["bleu_4", "rouge_l"]
    assert "|resamples:50|" in signatures["bleu_4"]
    assert _signature_block(text) == [[k, s] for k, s in signatures.items()]


def test_one_results_file_says_intervals_not_tests(tmp_path):
    """The text of one file's intervals described paired tests against a baseline that
    were never run (its options are refused as not used)."""
    good = Path(__file__).resolve().parents[1] / "malformed" / "good"
    code, out, err = _run(
        "compare", "--results", good / "results.json", "--annotations", good / "captions.json",
        "--metrics", "bleu_1", "--resamples", 50,
    )  # fmt: skip
    assert code == 0, err
    assert "bootstrap interval over images (50 resamples, seed 12345)." in out
    assert ": 1 system, " in out.splitlines()[0]  # it read "1 systems"
    for word in ("against the baseline", "randomization", "Null hypothesis", "p < 0.05"):
        assert word not in out
    # the JSON's signature names what made its numbers: no paired test, no trials
    code, out, err = _run(
        "compare", "--results", good / "results.json", "--annotations", good / "captions.json",
        "--metrics", "bleu_1", "--resamples", 50, "--json", "-",
    )  # fmt: skip
    signature = json.loads(out)["signatures"]["bleu_1"]
    assert "resamples:50|seed:12345" in signature
    assert "paired:" not in signature and "trials:" not in signature


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


# -- references and results as they are distributed (issue 33) ------------------------------


def _three_shapes(tmp_path, n=20, extra=5):
    """The references of ``n`` COCO val2014 images as COCO annotations, as a
    ``{image_id: [captions]}`` object (string keys, as JSON writes them) and as a Karpathy
    ``dataset_coco.json`` whose test split holds them (``extra`` more images in val)."""
    data = coco_caption_file("val")
    images = data["images"][: n + extra]
    ids = [img["id"] for img in images]
    by_id: dict = {i: [] for i in ids}
    for a in data["annotations"]:
        if a["image_id"] in by_id:
            by_id[a["image_id"]].append(a["caption"])
    test = ids[:n]
    coco = {
        "images": [{"id": i} for i in test],
        "annotations": [{"image_id": i, "caption": c} for i in test for c in by_id[i][1:]],
    }
    gts = {str(i): by_id[i][1:] for i in test}
    karpathy = {
        "dataset": "coco",
        "images": [
            {
                "split": "test" if j < n else "val",
                "cocoid": i,
                "filepath": "val2014",
                "sentences": [{"raw": c, "tokens": c.lower().split()} for c in by_id[i][1:]],
            }
            for j, i in enumerate(ids)
        ],
    }
    paths = {}
    for name, value in (("coco", coco), ("gts", gts), ("karpathy", karpathy)):
        paths[name] = tmp_path / f"{name}.json"
        paths[name].write_text(json.dumps(value))
    results = []
    for k, name in enumerate(("sys_a", "sys_b")):
        path = tmp_path / f"{name}.json"
        rows = [
            # string ids and extra keys, as some repositories ship them
            {"image_id": str(i), "caption": by_id[i][k], "id": j, "score": -1.5}
            for j, i in enumerate(test)
        ]
        path.write_text(json.dumps(rows))
        results.append(path)
    return paths, results, ids[n:]


def test_reference_shapes_give_the_values_of_coco_annotations(tmp_path):
    paths, results, _ = _three_shapes(tmp_path)
    keys = ["bleu_1", "bleu_4", "rouge_l", "cider_d", "meteor"]
    seen = {}
    for shape, path in paths.items():
        code, out, err = _run(
            "score", "--results", results[0], "--annotations", path, "--metrics", *keys, "--json"
        )
        assert code == 0, err
        seen[shape] = json.loads(out)["corpus"]
        code, out, err = _run(
            "compare", "--results", *results, "--annotations", path, "--metrics", *keys,
            "--json", "-", "--trials", 50, "--resamples", 50,
        )  # fmt: skip
        assert code == 0, err
        compared = json.loads(out)
        assert compared["n_images"] == 20
        assert compared["corpus"]["sys_a"] == seen[shape]
        seen[f"{shape} b"] = compared["corpus"]["sys_b"]
    assert seen["gts"] == seen["coco"] and seen["karpathy"] == seen["coco"]
    assert seen["gts b"] == seen["coco b"] and seen["karpathy b"] == seen["coco b"]
    assert seen["coco"]["cider_d"] > 0


def test_karpathy_split_is_chosen_and_named(tmp_path):
    paths, _, val_ids = _three_shapes(tmp_path)
    val = tmp_path / "val-results.json"
    val.write_text(json.dumps([{"image_id": i, "caption": "a photo"} for i in val_ids]))
    code, _, err = _run("score", "--results", val, "--annotations", paths["karpathy"])
    assert code == 2 and "have no reference in" in err and "split test" in err
    code, out, err = _run(
        "score", "--results", val, "--annotations", paths["karpathy"], "--split", "val", "--json"
    )
    assert code == 0, err
    assert set(json.loads(out)["corpus"]) >= {"bleu_4", "cider_d"}
    from capeval_core.coco_files import read_references

    with pytest.raises(InputError, match=r"no image of split 'restval' \(splits found: test"):
        read_references(paths["karpathy"], "restval")


def test_score_defaults_to_coco_val2014_like_compare(tmp_path):
    _, results, _ = _three_shapes(tmp_path, extra=0)
    code, alone, err = _run("score", "--results", results[0], "--metrics", "bleu_4", "--json")
    assert code == 0, err
    code, out, err = _run(
        "compare", "--results", results[0], "--metrics", "bleu_4", "--json", "-",
        "--resamples", 50,
    )  # fmt: skip
    assert code == 0, err  # one system: intervals, no test (so no --trials)
    data = json.loads(out)
    assert data["systems"] == ["sys_a"] and data["paired"] == {"bleu_4": {}}
    assert json.loads(alone)["corpus"] == data["corpus"]["sys_a"]


@pytest.mark.parametrize(
    ("references", "message"),
    [
        ({"1": "a dog"}, "image_id 1: expected a list of captions"),
        ({"1": ["a dog", 3]}, "image_id 1, record 2, line 1, column 'caption': expected text"),
        (
            {"images": [{"split": "test", "sentences": []}]},
            "record 1, line 1: missing field 'cocoid'",
        ),
        (
            {"images": [{"split": "test", "cocoid": 1, "sentences": [{"tokens": []}]}]},
            "record 1, line 1, column 'sentences[0]': each sentence needs its 'raw' text",
        ),
        (  # which sentence, as a JSON path inside the record
            {"images": [{"split": "test", "cocoid": 1, "sentences": [{"raw": "a"}, {"raw": 5}]}]},
            "record 1, line 1, column 'sentences[1].raw': expected text, got a number 5",
        ),
        (
            {"images": [{"split": "test", "cocoid": 1, "sentences": [{"raw": "a " * 2000}]}]},
            "record 1, line 1, column 'sentences[0].raw': caption has 2,000 tokens",
        ),
        (["a", "b"], "expected an object with an 'annotations' list (COCO captions)"),
    ],
)
def test_bad_references_name_the_file_and_field(tmp_path, references, message):
    path = tmp_path / "refs.json"
    path.write_text(json.dumps(references))
    results = tmp_path / "r.json"
    results.write_text(json.dumps([{"image_id": 1, "caption": "a dog"}]))
    code, out, err = _run("score", "--results", results, "--annotations", path)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and message in err and "refs.json" in err


def test_on_missing_intersect_scores_the_shared_images_and_names_the_lost(tmp_path):
    ann, paths = _files(tmp_path, 30)
    base, other, rev = (json.loads(p.read_text()) for p in paths)
    paths[1].write_text(json.dumps(other[:-2]))  # lacks the last two images
    paths[2].write_text(json.dumps([*rev, {"image_id": 7, "caption": "an image of no one"}]))
    code, out, err = _run("compare", "--annotations", ann, "--results", *paths)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "other.json lacks 2 image_id(s)" in err and "--on-missing intersect" in err
    argv = ["compare", "--annotations", ann, "--results", *paths, "--metrics", "bleu_4",
            "cider_d", "--trials", 50, "--resamples", 50, "--on-missing", "intersect"]  # fmt: skip
    code, out, err = _run(*argv, "--json", "-")
    assert code == 0, err
    data = json.loads(out)
    last_two = [row["image_id"] for row in base[-2:]]
    assert data["n_images"] == 28
    assert data["dropped"] == {
        "base": {"n": 2, "image_ids": last_two},
        "other": {"n": 0, "image_ids": []},
        "reversed": {"n": 3, "image_ids": [*last_two, 7]},
    }
    # the shared images score as `capeval score` scores them alone
    shared = tmp_path / "shared.json"
    shared.write_text(json.dumps(base[:-2]))
    code, alone, _ = _run(
        "score", "--results", shared, "--annotations", ann, "--metrics", "bleu_4", "cider_d",
        "--json",
    )  # fmt: skip
    assert json.loads(alone)["corpus"] == data["corpus"]["base"]
    code, out, _ = _run(*argv)
    assert code == 0
    assert "on-missing: intersect" in out
    # which system lacks the images, never read as the file's own lack (it has them)
    assert f"base.json (base): 2 images dropped (not captioned by other): {last_two[0]!r}" in out
    assert "reversed.json (reversed): 3 images dropped (not captioned by other" in out
    assert ", 7" in out


def test_table_formats_print_a_papers_table(tmp_path):
    import pandas as pd

    ann, paths = _files(tmp_path, 40)
    argv = ["compare", "--annotations", ann, "--results", *paths, "--metrics", "cider_d",
            "rouge_l", "bleu_4", "--resamples", 1000, "--trials", 1000]  # fmt: skip
    code, latex, err = _run(*argv, "--table", "latex", "--json", tmp_path / "out.json")
    assert code == 0, err
    data = json.loads((tmp_path / "out.json").read_text())
    assert "\\begin{tabular}{lrrr}" in latex and "\\toprule" in latex and "\\bottomrule" in latex
    header = next(line for line in latex.splitlines() if line.startswith("System &"))
    assert header == "System & BLEU-4 & ROUGE-L & CIDEr-D \\\\"  # the papers' order
    cider = f"{data['corpus']['base']['cider_d'] * 100:.1f}"
    assert "base (baseline) & " in latex and cider in latex
    assert "($<$ 0.001)" in latex  # reversed captions: p at the floor of 1,000 resamples
    code, md, _ = _run(*argv, "--table", "markdown")
    assert md.startswith("| System | BLEU-4 | ROUGE-L | CIDEr-D |")
    assert "None" not in md and "0.0010" not in md and "†" in md
    code, text, _ = _run(*argv, "--table", "text", "--raw")
    assert f"{data['corpus']['base']['cider_d']:.4f} ± " in text
    code, table_csv, err = _run(*argv, "--table", "csv")
    frame = pd.read_csv(io.StringIO(table_csv))
    base = frame[frame["system"] == "base"]
    assert len(frame) == 9 and base["delta"].isna().all() and base["p"].isna().all()
    # its numbers' signatures (under the other tables) on stderr: stdout stays a plain CSV
    said = err.splitlines()
    assert said[0] == "capeval: the CSV's notes and signatures:", err
    for label, key in (("BLEU-4", "bleu_4"), ("ROUGE-L", "rouge_l"), ("CIDEr-D", "cider_d")):
        assert f"  {label}: {data['signatures'][key]}" in said
        assert f"{label}: `{data['signatures'][key]}`" in md
    assert "signature" not in table_csv and "|" not in table_csv
    code, _, err = _run(*argv, "--table", "markdown", "--json", "-")
    assert code == 2 and "--table and --json -" in err
    code, _, err = _run(*argv, "--raw")  # was ignored without --table
    assert code == 2 and "--raw applies to --table" in err


def test_spice_categories_by_key_in_the_json_and_only_where_kept(tmp_path):
    ann, paths = _files(tmp_path, 15)
    code, out, err = _run(
        "compare", "--annotations", ann, "--results", *paths[:2], "--metrics", "spice",
        "spice_count,spice_color", "--json", "-", "--trials", 50, "--resamples", 50,
    )  # fmt: skip
    assert code == 0, err
    data = json.loads(out)
    assert list(data["corpus"]["base"]) == ["spice", "spice_count", "spice_color"]
    assert data["signatures"]["spice_count"].startswith("spice|")
    code, _, err = _run("score", "--results", paths[0], "--annotations", ann, "--metrics",
                        "spice_count")  # fmt: skip
    assert code == 2 and "spice_count is reported by `capeval compare` only" in err


def test_a_single_images_cider_note_is_said_once_and_again_from_the_cache(tmp_path):
    """The note was a live warning of each system's scoring: twice on a first run, not at
    all once the values came from the cache."""
    ann, paths = _files(tmp_path, n=1)
    args = ("compare", "--results", *paths[:2], "--annotations", ann)
    for run in ("scored", "cached"):
        code, _, err = _run(*args, "--metrics", "cider_d", "bleu_4")
        assert code == 0, err
        assert err.count("this set is a single image") == 1, (run, err)
        assert "use --cider-idf coco-val2014" in err and "idf='" not in err


def test_a_paired_test_on_one_image_is_said_in_one_line(tmp_path):
    """The p-values of a comparison on one image are NaN with scipy's DegenerateDataWarning,
    which printed as Python prints a warning: a file, a line number and a line of code."""
    ann, paths = _files(tmp_path, n=1)
    code, out, err = _run("compare", "--results", *paths[:2], "--annotations", ann,
                          "--metrics", "bleu_4")  # fmt: skip
    assert code == 0, err
    assert "(p = n/a)" in out
    said = [line for line in err.splitlines() if "on one image" in line]
    assert len(said) == 1 and said[0].startswith("capeval: warning: "), err
    assert "DegenerateDataWarning" not in err and ".py:" not in err


def test_bleu_names_all_of_bleus_keys(tmp_path):
    """`capeval metrics` says bleu stands for bleu_1 ... bleu_4; compare showed one column,
    "BLEU-bleu", holding BLEU-4 again (and score a row "bleu")."""
    ann, paths = _files(tmp_path, n=5)
    code, out, err = _run("compare", "--results", *paths[:2], "--annotations", ann,
                          "--metrics", "bleu", "--json", "-")  # fmt: skip
    assert code == 0, err
    bleu = ["bleu_1", "bleu_2", "bleu_3", "bleu_4"]
    assert list(json.loads(out)["signatures"]) == bleu
    code, out, err = _run("score", "--results", paths[0], "--annotations", ann, "--metrics", "bleu")
    assert code == 0, err
    assert [line.split()[0] for line in out.splitlines()[1:]] == bleu


def test_an_option_given_twice_takes_both_lists_or_is_refused(tmp_path):
    """argparse kept the last value of an option given twice: `--results a --results b`
    compared one system, `--metrics x --metrics y` scored y, a second --per-item or --seed
    replaced the first, all without a word."""
    ann, paths = _files(tmp_path, 20)
    code, out, err = _run(
        "compare", "--annotations", ann, "--results", paths[0], "--results", paths[1],
        "--metrics", "bleu_4", "--metrics", "rouge_l", "--paired", "bs", "--resamples", 20,
        "--json", "-",
    )  # fmt: skip
    assert code == 0, err
    data = json.loads(out)
    assert data["systems"] == ["base", "other"]
    assert list(data["corpus"]["base"]) == ["bleu_4", "rouge_l"]
    for twice, said in (
        (["--seed", 3, "--seed", 4], "--seed is given twice (3 and 4): give it once"),
        (
            ["--per-item", tmp_path / "a.csv", "--per-item", tmp_path / "b.csv"],
            f"--per-item is given twice ({tmp_path / 'a.csv'} and {tmp_path / 'b.csv'})",
        ),
    ):
        err_io = io.StringIO()
        with contextlib.redirect_stderr(err_io), pytest.raises(SystemExit) as refused:
            main([
                str(a) for a in ("compare", "--annotations", ann, "--results", *paths[:2],
                                 "--metrics", "bleu_4", *twice)
            ])  # fmt: skip
        err = err_io.getvalue()
        assert refused.value.code == 2 and said in err and len(err.splitlines()) == 1, err
        assert not (tmp_path / "a.csv").exists()
    # a value holding a line break is written escaped: still one line
    err_io = io.StringIO()
    with contextlib.redirect_stderr(err_io), pytest.raises(SystemExit):
        main(["perturb", "--perturbation", "shuffle", "--candidate", "a\nb", "--candidate", "c"])
    assert err_io.getvalue().count("\n") == 1 and "(a\\nb and c)" in err_io.getvalue()


def test_workers_beyond_the_cpus_are_not_started(tmp_path, monkeypatch):
    """--workers 30 on two CPUs started 31 processes (100,000 was accepted too)."""
    from capeval_core import systems

    monkeypatch.setattr("capeval_core.resources.available_cpus", lambda: 2)
    asked = []
    real = systems.score_systems

    def spy(*args, **kwargs):
        asked.append(kwargs.get("workers"))
        return real(*args, **kwargs)

    monkeypatch.setattr(systems, "score_systems", spy)
    ann, paths = _files(tmp_path, 20)
    code, out, err = _run(
        "compare", "--annotations", ann, "--results", *paths[:2], "--metrics", "bleu_4",
        "--workers", 30, "--json", "-",
    )  # fmt: skip
    assert code == 0, err
    assert asked == [2]
    assert "--workers 30: 2 CPU(s) available here, so 2 worker processes are used" in err
    json.loads(out)  # the warning went to stderr


def test_the_text_report_names_its_references_as_score_does(tmp_path):
    """compare's text header gave the references' full path (a folder of this machine) and no
    digest, where its tables, its JSON and score's header give the file name and digest."""
    ann, paths = _files(tmp_path, 10)
    argv = ("--annotations", ann, "--metrics", "bleu_4")
    code, out, err = _run("compare", "--results", *paths[:2], *argv, "--resamples", 50,
                          "--trials", 50, "--json", tmp_path / "out.json")  # fmt: skip
    assert code == 0, err
    data = json.loads((tmp_path / "out.json").read_text())
    named = f"references from {data['references']}, sha256 {data['references_sha256']}"
    header = out.splitlines()[0]
    assert header.endswith(f"10 images, {named}") and str(tmp_path) not in header, header
    code, scored, err = _run("score", "--results", paths[0], *argv)
    assert code == 0 and scored.splitlines()[0].endswith(named), err


def test_a_file_given_twice_is_said_once_or_by_both_spellings(tmp_path):
    """ "--results lists X twice (as X too)" said one name twice."""
    ann, paths = _files(tmp_path, 5)
    args = ("--annotations", ann, "--metrics", "bleu_4")
    code, _, err = _run("compare", "--results", paths[0], paths[1], paths[0], *args)
    assert code == 2
    assert err == (
        f"capeval: error: --results lists {paths[0]} twice: compare different systems' files\n"
    )
    other = tmp_path / "sub" / ".." / paths[0].name
    (tmp_path / "sub").mkdir()
    code, _, err = _run("compare", "--results", paths[0], other, *args)
    assert code == 2 and err == (
        f"capeval: error: --results lists one file twice, as {paths[0]} and {other}: compare "
        "different systems' files\n"
    )


def test_images_left_out_by_on_missing_intersect_are_warned_of(tmp_path):
    """The images a file lost to --on-missing intersect were said on stdout or in the JSON
    only (stderr empty), and under --table csv as an unprefixed note."""
    ann, paths = _files(tmp_path, 12)
    base = json.loads(paths[0].read_text())
    paths[1].write_text(json.dumps(base[:-1]))
    lost = base[-1]["image_id"]
    argv = ["compare", "--annotations", ann, "--results", paths[0], paths[1], "--metrics",
            "bleu_4", "--trials", 20, "--resamples", 20, "--on-missing", "intersect"]  # fmt: skip
    for extra in ([], ["--json", "-"], ["--table", "csv"]):
        code, _, err = _run(*argv, *extra)
        assert code == 0, err
        assert (
            f"capeval: warning: {paths[0]} (base): 1 image dropped (not captioned by "
            f"{paths[1].stem}): {lost!r}"
        ) in err.splitlines(), extra


def test_the_report_names_the_spice_word_limit_by_its_flag(tmp_path):
    """The report said "over the limit of 3 (max_sentence_words)", the library's keyword,
    where the JSON and the warnings say (--spice-max-words)."""
    ann, paths = _files(tmp_path, 3)
    argv = ["compare", "--annotations", ann, "--results", paths[0], "--metrics", "spice",
            "--spice-max-words", 3, "--resamples", 20, "--workers", 0]  # fmt: skip
    code, out, err = _run(*argv)
    assert code == 0, err
    assert "(--spice-max-words)" in out and "(max_sentence_words)" not in out


def test_counts_of_missing_image_ids_are_written_with_thousands_separators(tmp_path):
    """ "lacks 2990 image_id(s)": every other message writes 1,000."""
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps([{"image_id": i, "caption": "a dog"} for i in range(1200)]))
    b.write_text(json.dumps([{"image_id": i, "caption": "a dog"} for i in range(199)]))
    refs = tmp_path / "refs.json"
    refs.write_text(json.dumps({str(i): ["a dog runs"] for i in range(1200)}))
    code, _, err = _run("compare", "--results", a, b, "--annotations", refs, "--metrics", "bleu_4")
    assert code == 2 and "lacks 1,001 image_id(s) of" in err, err
