"""The rules of issue 44 that are not refusals (the refusals are cases of
``tests/malformed/``): references as distributed scored as pycocoevalcap scores them,
outputs written all or none and naming inputs by file name only, external scores whose
id and text columns are no metrics, long scores files pivoted, degenerate metrics reported,
names escaped on the terminal and in text tables."""

from __future__ import annotations

import contextlib
import gzip
import io
import json
import re
from pathlib import Path

import numpy as np
import pytest

from capeval_core import files
from capeval_core.cli import main
from capeval_core.errors import InputError
from capeval_core.judgments import load_judgments
from capeval_core.judgments.external import join_scores_file

THUMB = Path(__file__).resolve().parent.parent / "golden" / "thumb" / "mscoco_THumB-1.0.jsonl"
RESULTS = [{"image_id": 1, "caption": "a dog runs"}, {"image_id": 2, "caption": "a red bus"}]
ANNS = [
    {"image_id": 1, "id": 1, "caption": "a dog running"},
    {"image_id": 1, "id": 2, "caption": "a dog on grass"},
    {"image_id": 2, "id": 3, "caption": "a bus"},
    {"image_id": 2, "id": 4, "caption": "a red bus"},
]


@pytest.fixture(autouse=True)
def _own_caches(tmp_path, monkeypatch):
    monkeypatch.setenv("CAPEVAL_SCORES_CACHE_DIR", str(tmp_path / "scores"))
    monkeypatch.setenv("CAPEVAL_CACHE_DIR", str(tmp_path / "cache"))


def _run(*argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([str(a) for a in argv])
    return code, out.getvalue(), err.getvalue()


def _score(tmp_path, anns, images=({"id": 1}, {"id": 2}), metrics=("bleu_4", "rouge_l", "cider_d")):
    (tmp_path / "r.json").write_text(json.dumps(RESULTS))
    (tmp_path / "a.json").write_text(json.dumps({"images": list(images), "annotations": anns}))
    code, out, err = _run(
        "score", "--results", tmp_path / "r.json", "--annotations", tmp_path / "a.json",
        "--metrics", *metrics, "--json",
    )  # fmt: skip
    assert code == 0, err
    return json.loads(out)["corpus"], err


# -- references as distributed ---------------------------------------------------------------


def test_blank_reference_scores_as_pycocoevalcap_with_a_warning(tmp_path):
    # pycocoevalcap 1.2 (COCOEvalCap's tokenizer and scorers, these four annotations with the
    # second caption "   "): Bleu_4 0.0236435402157205, ROUGE_L 0.8333333333333333,
    # CIDEr 2.9358460874400354 (3.4391177992575344 with the caption kept), METEOR 0.9142857142857143
    anns = [dict(a) for a in ANNS]
    anns[1]["caption"] = "   "
    corpus, err = _score(tmp_path, anns)
    assert corpus["bleu_4"] == pytest.approx(0.0236435402157205, abs=1e-12)
    assert corpus["rouge_l"] == pytest.approx(0.8333333333333333, abs=1e-12)
    assert corpus["cider_d"] == pytest.approx(2.9358460874400354, abs=1e-9)
    said = "1 image(s) have a blank reference: image 1 (list 'annotations', record 2, line 1)"
    assert said in err and "as pycocoevalcap" in err
    assert err.count("\n") == 1


def _lines(rows):
    """A JSON list with one record per line, after a line of its own (record k on line k + 1)."""
    return "[\n" + ",\n".join(json.dumps(r) for r in rows) + "\n]\n"


def test_blank_captions_and_references_are_named_by_image_record_and_line(tmp_path):
    """The warnings named bare image ids ("(2)"), which a file of thousands of records does
    not find: each named image comes with its record and line, in every reference shape."""
    rows = [{"image_id": i, "caption": "" if i in (2, 4) else f"a dog {i}"} for i in range(1, 5)]
    res = tmp_path / "r.json"
    res.write_text(_lines(rows))
    anns = [{"image_id": i, "caption": " " if i == 3 else "a dog"} for i in range(1, 5)]
    coco = tmp_path / "coco.json"
    coco.write_text('{"annotations": ' + _lines(anns) + "}")
    gts = tmp_path / "gts.json"
    gts.write_text('{"1": ["a dog"],\n "2": ["a dog"],\n "3": ["a dog",\n "  "],\n "4": ["a"]}')
    karpathy = tmp_path / "dataset_coco.json"
    images = [
        {
            "split": "test",
            "cocoid": i,
            "sentences": [{"raw": "a dog"}, {"raw": " " if i == 3 else "a"}],
        }
        for i in range(1, 5)
    ]
    karpathy.write_text('{"images": ' + _lines(images) + "}")
    blank = f"results file {res}: 2 of 4 caption(s) are blank: image 2 (record 2, line 3), " \
        "image 4 (record 4, line 5); each is scored"  # fmt: skip
    for refs, place in (
        (coco, "list 'annotations', record 3, line 4"),
        (gts, "record 2, line 4"),
        (karpathy, "list 'images', record 3, line 4, sentences[1].raw"),
    ):
        code, _, err = _run("score", "--results", res, "--annotations", refs, "--metrics", "bleu_4")
        assert code == 0 and blank in err, err
        said = f"references file {refs}: 1 image(s) have a blank reference: image 3 ({place});"
        assert said in err, err
    code, _, err = _run("compare", "--results", res, "--annotations", coco, "--metrics", "bleu_4")
    assert code == 0 and blank in err, err
    many = [{"image_id": i, "caption": ""} for i in range(1, 9)]
    res.write_text(_lines(many))
    gts.write_text(json.dumps({i: ["a dog"] for i in range(1, 9)}))
    code, _, err = _run("score", "--results", res, "--annotations", gts, "--metrics", "bleu_4")
    assert "image 5 (record 5, line 6) and 3 more; each" in err


def test_images_listed_twice_score_once_as_pycocotools(tmp_path):
    # pycocoevalcap 1.2 on the same file with images [1, 2, 1] and [2, 1, 2]: the numbers of
    # [1, 2] (pycocotools' imgs dict keeps each image once, at its first place)
    plain, _ = _score(tmp_path, ANNS)
    twice, err = _score(tmp_path, ANNS, images=({"id": 1}, {"id": 2}, {"id": 1}))
    assert twice == plain
    assert "list 'images': 1 image id(s) appear more than once (1)" in err
    assert plain["cider_d"] == pytest.approx(3.4391177992575344, abs=1e-9)


def test_annotation_ids_used_twice_are_each_a_reference(tmp_path):
    anns = [*ANNS, dict(ANNS[1])]  # the record repeated: pycocotools' imgToAnns keeps both
    corpus, err = _score(tmp_path, anns)
    plain, _ = _score(tmp_path, [*ANNS, dict(ANNS[1], id=99)])
    assert corpus == plain and err == ""  # ids numbered per image are common and harmless


# -- outputs --------------------------------------------------------------------------------


def test_write_all_leaves_nothing_when_one_output_fails(tmp_path):
    good = tmp_path / "a.json"
    good.write_text("old\n")
    missing = tmp_path / "gone" / "b.json"
    with pytest.raises(InputError, match="does not exist"):
        files.write_all([("--json", good, "new\n"), ("--per-item", missing, "x\n")])
    assert good.read_text() == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.json"]


def test_compare_outputs_name_the_references_by_file_name(tmp_path):
    ann = tmp_path / "private-folder" / "captions.json"
    ann.parent.mkdir()
    ann.write_text(json.dumps({"images": [{"id": 1}, {"id": 2}], "annotations": ANNS}))
    paths = []
    for name, caps in (("base", ("a dog runs", "a red bus")), ("new", ("a dog", "a bus"))):
        paths.append(tmp_path / f"{name}.json")
        paths[-1].write_text(
            json.dumps([{"image_id": i, "caption": c} for i, c in zip((1, 2), caps, strict=True)])
        )
    common = ["compare", "--results", *paths, "--annotations", ann, "--resamples", "20",
              "--trials", "20", "--metrics", "bleu_4", "--workers", "0"]  # fmt: skip
    for fmt in ("latex", "markdown", "text"):
        code, out, err = _run(*common, "--table", fmt)
        assert code == 0, err
        assert str(tmp_path) not in out and "captions.json" in out
        assert re.search(r"sha256 [0-9a-f]{12}", out)
    per_item, out_json = tmp_path / "items.csv", tmp_path / "out.json"
    code, _, err = _run(*common, "--per-item", per_item, "--json", out_json)
    assert code == 0, err
    sidecar = json.loads((tmp_path / "items.signatures.json").read_text())
    assert sidecar["references"] == "captions.json" and len(sidecar["references_sha256"]) == 12
    assert str(tmp_path) not in out_json.read_text() + per_item.read_text()
    code, _, err = _run(*common, "--per-item", tmp_path / "items.json")
    assert code == 0 and str(tmp_path) not in (tmp_path / "items.json").read_text()


def test_names_with_newlines_and_escapes_stay_on_their_line(tmp_path):
    ann = tmp_path / "captions.json"
    ann.write_text(json.dumps({"images": [{"id": 1}, {"id": 2}], "annotations": ANNS}))
    paths = []
    for name in ("a", "b"):
        paths.append(tmp_path / f"{name}.json")
        paths[-1].write_text(json.dumps(RESULTS))
    names = "base\nline,\x1b[31mred\x1b[0m"
    common = ["compare", "--results", *paths, "--annotations", ann, "--resamples", "20",
              "--trials", "20", "--metrics", "bleu_4", "--workers", "0"]  # fmt: skip
    common += ["--names", names]
    for fmt in ("text", "markdown", None):
        code, out, err = _run(*common, *(("--table", fmt) if fmt else ()))
        assert code == 0, err
        assert "\x1b" not in out + err
        shown = "base\\\\nline" if fmt == "markdown" else "base\\nline"  # a Markdown \\
        assert shown in out and "u001b" in out
        # no row broken in two: no line starts with what followed the newline
        assert not [x for x in out.splitlines() if x.lstrip("|* ").startswith("line")]
    code, out, _ = _run(*common, "--table", "latex")
    assert code == 0 and "\x1b" not in out and "\nline" not in out


def test_a_warning_names_its_file_as_an_error_names_it(tmp_path):
    """A warning printed a file name's control characters raw (an escape sequence turned the
    terminal red, a newline broke the line), where an error on the same file escaped them."""
    results = tmp_path / "r\x1b[31m\n.json"
    results.write_text(json.dumps([{"image_id": 1, "caption": ""}, *RESULTS[1:]]))
    (tmp_path / "a.json").write_text(json.dumps({"annotations": ANNS}))
    code, _, err = _run(
        "score", "--results", results, "--annotations", tmp_path / "a.json", "--metrics", "bleu_1"
    )
    assert code == 0 and "\x1b" not in err and err.count("\n") == 1, err
    assert f"capeval: warning: results file {files.printable(str(results))}: 1 of 2" in err
    gone = tmp_path / "gone\x1b[31m\n.json"  # the error on a file of such a name
    code, _, err = _run("score", "--results", gone, "--annotations", tmp_path / "a.json")
    assert code == 2 and "\x1b" not in err and err.count("\n") == 1, err
    assert f"capeval: error: results file {files.printable(str(gone))}: " in err


def test_a_warning_names_an_option_by_its_flag(capsys):
    """A warning in the library's words (use idf='coco-val2014') said to the command line as
    its errors say them (use --cider-idf coco-val2014)."""
    import warnings

    from capeval_core.cli import _one_line_warnings
    from capeval_core.errors import DegenerateCorpusWarning

    show = _one_line_warnings(warnings.showwarning)
    show(DegenerateCorpusWarning("Score more images or use idf='coco-val2014'."),
         DegenerateCorpusWarning, "x.py", 1)  # fmt: skip
    assert capsys.readouterr().err == (
        "capeval: warning: Score more images or use --cider-idf coco-val2014.\n"
    )


def test_printable_escapes_controls_and_bidi_overrides():
    assert files.printable("a\tb\u202ec\x7f") == "a\\tb\\u202ec\\u007f"
    assert files.printable("plain café") == "plain café"


# -- external scores --------------------------------------------------------------------------


def _thumb_scores(tmp_path, header, rows):
    path = tmp_path / "scores.csv"
    path.write_text(header + "\n" + "".join(rows))
    return path


def test_thumb_set_id_and_text_columns_are_no_metrics(tmp_path):
    js = load_judgments(THUMB, "thumb")
    rows = [json.loads(line) for line in THUMB.read_text().splitlines()]
    path = _thumb_scores(
        tmp_path,
        "SYS,seg_id,set_id,image,RefCLIPS",
        [f"{r['SYS']},{r['seg_id']},{r['set_id']},{r['image']},{i / 7:.4f}\n"
         for i, r in enumerate(rows)],
    )  # fmt: skip
    joined = join_scores_file(js, path)
    assert joined.external_names == ("RefCLIPS",)
    assert any("not scores, left out: 'set_id', 'image'" in n for n in joined.notes)


def test_long_file_is_pivoted_to_the_wide_numbers(tmp_path):
    js = load_judgments(THUMB, "thumb")
    rows = [json.loads(line) for line in THUMB.read_text().splitlines()]
    values = {(r["seg_id"], r["SYS"]): (i / 3, (i * 7) % 5) for i, r in enumerate(rows)}
    wide = _thumb_scores(
        tmp_path, "seg_id,SYS,a_metric,b_metric",
        [f"{s},{y},{a},{b}\n" for (s, y), (a, b) in values.items()],
    )  # fmt: skip
    long = tmp_path / "long.csv"
    long.write_text(
        "SYS,seg_id,set_id,metric,score\n"
        + "".join(
            f"{y},{s},0,{m},{v}\n"
            for (s, y), pair in values.items()
            for m, v in zip(("a_metric", "b_metric"), pair, strict=True)
        )
    )
    from_wide, from_long = join_scores_file(js, wide), join_scores_file(js, long)
    assert from_long.external_names == from_wide.external_names == ("a_metric", "b_metric")
    for a, b in zip(from_wide.external, from_long.external, strict=True):
        assert np.array_equal(a.values, b.values)


def test_constant_external_metric_is_reported_and_left_out_of_williams(tmp_path):
    rows = [json.loads(line) for line in THUMB.read_text().splitlines()]
    scores = _thumb_scores(
        tmp_path, "seg_id,SYS,flat,varied",
        [f"{r['seg_id']},{r['SYS']},0.5,{len(r['hyp'])}\n" for r in rows],
    )  # fmt: skip
    out = tmp_path / "out.json"
    code, _, err = _run(
        "correlate", "--judgments", THUMB, "--format", "thumb", "--metrics", "bleu_1",
        "--metric-scores", scores, "--workers", "0", "--json", out, "--resamples", "5",
    )  # fmt: skip
    assert code == 0, err
    data = json.loads(out.read_text())
    assert "warning: flat is constant (0.5 for all 40 values)" in err
    assert data["intervals"]["flat"]["pearson"] == [None, None]  # NaN bounds are null
    assert all(v is None for v in data["correlations"]["flat"].values())
    assert "flat" not in data["williams"] and "varied" in data["williams"]


# -- messages in the words of the command line ------------------------------------------------


def test_limits_are_named_by_their_flags_and_compare_accepts_them(tmp_path):
    ann = tmp_path / "captions.json"
    ann.write_text(json.dumps({"images": [{"id": 1}, {"id": 2}], "annotations": ANNS}))
    long = tmp_path / "long.json"
    long.write_text(json.dumps([dict(RESULTS[0], caption="a dog " * 3), RESULTS[1]]))
    for command in ("score", "compare"):
        code, _, err = _run(
            command, "--results", long, "--annotations", ann, "--max-caption-tokens", "4"
        )
        assert code == 2 and "(raise it with --max-caption-tokens" in err
        assert "`max_caption_tokens`" not in err and err.count("\n") == 1
    other = tmp_path / "other.json"
    other.write_text(long.read_text())
    code, _, err = _run(
        "compare", "--results", long, other, "--annotations", ann,
        "--max-caption-tokens", "10", "--metrics", "bleu_4", "--resamples", "10", "--workers", "0",
    )  # fmt: skip
    assert code == 0, err


def test_a_split_for_references_without_splits_is_refused(tmp_path):
    ann = tmp_path / "captions.json"
    ann.write_text(json.dumps({"images": [{"id": 1}, {"id": 2}], "annotations": ANNS}))
    (tmp_path / "r.json").write_text(json.dumps(RESULTS))
    code, _, err = _run("score", "--results", tmp_path / "r.json", "--split", "val")
    assert code == 2 and "without --annotations the references are COCO val2014" in err
    karpathy = tmp_path / "dataset_coco.json"
    images = [
        {"split": "val", "cocoid": i, "sentences": [{"raw": c["caption"]} for c in ANNS
                                                    if c["image_id"] == i]}
        for i in (1, 2)
    ]  # fmt: skip
    karpathy.write_text(json.dumps({"images": images}))
    code, out, err = _run(
        "score", "--results", tmp_path / "r.json", "--annotations", karpathy, "--split", "val",
        "--metrics", "cider_d", "--json",
    )  # fmt: skip
    assert code == 0, err
    assert json.loads(out)["corpus"]["cider_d"] == pytest.approx(3.4391177992575344, abs=1e-9)


# -- results files in the shapes people have them ----------------------------------------------


@pytest.mark.parametrize(
    ("name", "content", "said"),
    [
        (
            "r.jsonl",
            "\n".join(json.dumps(r) for r in RESULTS).encode(),
            "r.jsonl, line 2, column 1: invalid JSON: Extra data; the file reads like JSON "
            "Lines (one value per line)",
        ),
        (
            "r.json.gz",
            gzip.compress(json.dumps(RESULTS).encode(), mtime=0),
            "r.json.gz: this file is gzip-compressed; decompress it first",
        ),
        (
            "r.json",
            json.dumps({"results": RESULTS}).encode(),
            'r.json: expected a list of {image_id, caption} records (got an object {"results": ',
        ),
    ],
    ids=["json-lines", "gzip", "wrapped-list"],
)
def test_a_results_file_of_another_shape_is_named_as_what_it_is(tmp_path, name, content, said):
    """JSON Lines, a gzip file and a list wrapped in an object were refused with what json or
    the decoder said (Extra data; a binary file; a list expected), not with what the file is."""
    (tmp_path / name).write_bytes(content)
    (tmp_path / "a.json").write_text(
        json.dumps({"images": [{"id": 1}, {"id": 2}], "annotations": ANNS})
    )
    code, out, err = _run(
        "score", "--results", tmp_path / name, "--annotations", tmp_path / "a.json"
    )
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and said in err, err


def test_only_the_named_blank_captions_are_looked_up(tmp_path, monkeypatch):
    """Each line is found by reading the text up to its record: looked up for every blank
    record, a file of many blank captions was read once per record."""
    asked = []
    real = files.json_line
    monkeypatch.setattr(
        files, "json_line", lambda text, path: asked.append(path) or real(text, path)
    )
    res, refs = tmp_path / "r.json", tmp_path / "gts.json"
    res.write_text(_lines([{"image_id": i, "caption": ""} for i in range(1, 41)]))
    refs.write_text(json.dumps({i: ["a dog"] for i in range(1, 41)}))
    code, _, err = _run("score", "--results", res, "--annotations", refs, "--metrics", "bleu_4")
    assert code == 0 and "and 35 more" in err
    assert asked == [[k] for k in range(5)]
