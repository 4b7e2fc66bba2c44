"""The hardening issue's cases one by one: safe exports, outputs written whole, options and
limits with clear errors, and the small command-line fixes."""

from __future__ import annotations

import contextlib
import csv
import io
import json
import math
from pathlib import Path

import pandas as pd
import pytest

from capeval_core import InputError, OptionError, UnknownKeyError, get_metric, score
from capeval_core.cli import main
from capeval_core.files import Limits, atomic_output, csv_text, write_json
from capeval_core.judgments import load_judgments
from capeval_core.stats import export_csv

GOOD = Path(__file__).resolve().parents[1] / "malformed" / "good"


def _run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


def _coco(tmp: Path, ids: list, captions: list[str] | None = None) -> tuple[Path, Path]:
    captions = captions or [f"a dog number {k}" for k in range(len(ids))]
    res, ann = tmp / "results.json", tmp / "captions.json"
    res.write_text(
        json.dumps([{"image_id": i, "caption": c} for i, c in zip(ids, captions, strict=True)])
    )
    anns = [{"image_id": i, "id": k, "caption": f"a dog {k}"} for k, i in enumerate(ids)]
    ann.write_text(json.dumps({"annotations": anns}))
    return res, ann


# -- 1. CSV formula injection -------------------------------------------------------------------

FORMULAS = ['=HYPERLINK("http://x","y")', "+1+1", "-2+3", "@SUM(A1)", "\tx", "\rx"]


def test_per_item_csv_escapes_formula_image_ids(tmp_path):
    res, ann = _coco(tmp_path, [*FORMULAS, "plain", 7])
    out = tmp_path / "items.csv"
    code, _, err = _run("score", "--results", str(res), "--annotations", str(ann),
                        "--metrics", "rouge_l", "--per-item", str(out))  # fmt: skip
    assert code == 0, err
    rows = list(csv.reader(out.open(newline="", encoding="utf-8")))
    ids = [r[0] for r in rows[1:]]
    assert ids == [f"'{f}" for f in FORMULAS] + ["plain", "7"]
    assert all(not cell.startswith(("=", "+", "-", "@", "\t", "\r")) for r in rows for cell in r)


def test_one_writer_for_every_csv(tmp_path):
    """export_csv (the app's downloads) and the CLI's per-item file escape alike."""
    frame = pd.DataFrame({"image_id": FORMULAS, "value": [-0.5] * len(FORMULAS)})
    path = export_csv(tmp_path / "x.csv", frame, {"bleu_4": "bleu_4|tok:ptb"})
    body = path.read_text().splitlines()
    assert body == csv_text(["image_id", "value"], frame.itertuples(index=False)).splitlines()
    assert "-0.5" in body[1]  # numbers stay numbers


# -- outputs are complete or absent ---------------------------------------------------------------


def test_atomic_output_leaves_nothing_on_failure(tmp_path):
    target = tmp_path / "out.csv"
    target.write_text("the previous run\n")
    with pytest.raises(RuntimeError), atomic_output(target) as fh:
        fh.write("half a ")
        raise RuntimeError("interrupted")
    assert target.read_text() == "the previous run\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.csv"]
    with atomic_output(target) as fh:
        fh.write("complete\n")
    assert target.read_text() == "complete\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.csv"]


def test_unwritable_text_leaves_no_header_only_file(tmp_path):
    """A caption with a lone surrogate (JSON "\\ud800") used to leave a header-only CSV."""
    res, ann = _coco(tmp_path, [1, 2], ["a dog", "a \ud800 cat"])
    out = tmp_path / "items.csv"
    code, _, err = _run("score", "--results", str(res), "--annotations", str(ann),
                        "--per-item", str(out))  # fmt: skip
    assert code == 2 and "[1].caption" in err and "lone surrogate" in err
    assert not out.exists()


@pytest.mark.parametrize("where", ["missing folder", "a folder"])
@pytest.mark.parametrize("option", ["--per-item", "--json"])
def test_outputs_into_a_missing_folder_or_onto_a_folder(tmp_path, where, option):
    target = tmp_path / "nosuch" / "out.json" if where == "missing folder" else tmp_path
    if option == "--per-item":
        res, ann = _coco(tmp_path, [1])
        argv = ["score", "--results", str(res), "--annotations", str(ann), option, str(target)]
        if where == "a folder":
            target.joinpath("sub.csv").mkdir()
            argv[-1] = str(target / "sub.csv")
    else:
        judgments = tmp_path / "g.csv"
        judgments.write_text("candidate,references,score\na dog,a dog runs,1\n")
        argv = ["correlate", "--judgments", str(judgments), "--format", "graded", option]
        argv.append(str(target))
    code, out, err = _run(*argv)
    assert code == 2 and out == "" and len(err.splitlines()) == 1, err
    assert option in err and ("does not exist" in err or "is a folder" in err), err


# -- 3./4. command-line input errors ------------------------------------------------------------


def test_correlate_unknown_human_column(tmp_path):
    judgments = tmp_path / "g.csv"
    judgments.write_text("candidate,references,fluency\na dog,a dog runs,1\nb,c,2\n")
    code, _, err = _run("correlate", "--judgments", str(judgments), "--format", "graded",
                        "--human", "nosuch")  # fmt: skip
    assert code == 2 and "no human-score column 'nosuch'" in err and "fluency" in err


def test_unknown_preset_for_a_format_without_presets(tmp_path):
    judgments = tmp_path / "g.csv"
    judgments.write_text("candidate,references,score\na dog,a dog runs,1\n")
    code, _, err = _run("correlate", "--judgments", str(judgments), "--format", "graded",
                        "--preset", "nosuch")  # fmt: skip
    assert code == 2 and "unknown preset 'nosuch'" in err
    with pytest.raises(OptionError, match="presets: published, mean-of-experts"):
        load_judgments(judgments, "flickr8k-expert", "nosuch")


def test_score_accepts_a_utf8_bom(tmp_path):
    res, ann = _coco(tmp_path, [1, 2])
    res.write_bytes(b"\xef\xbb\xbf" + res.read_bytes())
    ann.write_bytes(b"\xef\xbb\xbf" + ann.read_bytes())
    code, out, err = _run("score", "--results", str(res), "--annotations", str(ann), "--json")
    assert code == 0, err
    assert set(json.loads(out)["corpus"]) == {"bleu_1", "bleu_2", "bleu_3", "bleu_4", "rouge_l",
                                              "cider_d"}  # fmt: skip


# -- 8. small ones ------------------------------------------------------------------------------


def test_metrics_as_comma_lists_or_words(tmp_path):
    res, ann = _coco(tmp_path, [1, 2])
    outputs = []
    for metrics in (["bleu_4,rouge_l"], ["bleu_4", "rouge_l"], ["bleu_4,", "rouge_l,bleu_4"]):
        code, out, err = _run("score", "--results", str(res), "--annotations", str(ann),
                              "--json", "--metrics", *metrics)  # fmt: skip
        assert code == 0, err
        outputs.append(json.loads(out)["corpus"])
    assert outputs[0] == outputs[1] == outputs[2] and list(outputs[0]) == ["bleu_4", "rouge_l"]
    code, _, err = _run("score", "--results", str(res), "--annotations", str(ann),
                        "--metrics", "bleu_4,nosuch")  # fmt: skip
    assert code == 2 and "unknown metric 'nosuch'" in err


def test_unknown_metric_lists_each_key_once():
    with pytest.raises(UnknownKeyError) as info:
        get_metric("bleu_9")
    listed = str(info.value).split("available: ")[1].split(", ")
    assert len(listed) == len(set(listed)) and "rouge_l" in listed and "bleu" in listed


# -- 5. library options -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "options", "names"),
    [
        ("cider_d", {"idf": "bogus"}, ["`idf`", "'corpus'", "'coco-val2014'"]),
        ("cider_d", {"sigma": 0}, ["`sigma`", ">= 1e-150"]),
        ("cider_d", {"sigma": "x"}, ["`sigma`", "finite number"]),
        ("rouge_l", {"beta": math.nan}, ["`beta`", "> 0"]),
        ("rouge_l", {"beta": -1.0}, ["`beta`", "> 0"]),
        ("rouge_l", {"beta": 0}, ["`beta`", "> 0"]),
        ("bleu_4", {"tokenizer": 123}, ["`tokenizer`", "'ptb'", "'whitespace'"]),
        ("meteor", {"weights": (1, 1)}, ["`weights`", "4 numbers in [0, 1]"]),
        ("spice", {"synsets": "yes"}, ["`synsets`", "True or False"]),
        ("wmd", {"embeddings": 3}, ["`embeddings`", "KeyedVectors"]),
        ("bleu_4", {"order": 5}, ["unknown option", "effective_length"]),
    ],
)
def test_option_errors_name_the_option_and_the_allowed_values(key, options, names):
    with pytest.raises(OptionError) as info:
        score(key, ["a dog"], [["a dog runs"]], **options)
    for name in names:
        assert name in str(info.value), str(info.value)
    assert isinstance(info.value, InputError)  # and so a ValueError, as before


def test_references_as_a_dict_are_refused():
    with pytest.raises(InputError, match=r"`references` must be a list .* not a dict"):
        score("bleu_4", ["a dog"], {"a dog": ["a dog runs"]})


# -- 6. limits ----------------------------------------------------------------------------------


def test_caption_limit_is_documented_and_can_be_raised(tmp_path):
    long = "a dog " * 600  # 1,200 tokens
    res, ann = _coco(tmp_path, [1], [long])
    code, _, err = _run("score", "--results", str(res), "--annotations", str(ann))
    assert code == 2 and "1,200 tokens, above the 1,000-token limit" in err
    assert "--max-caption-tokens" in err
    code, _, err = _run("score", "--results", str(res), "--annotations", str(ann),
                        "--max-caption-tokens", "2000", "--metrics", "rouge_l")  # fmt: skip
    assert code == 0, err


def test_file_size_cap_can_be_raised(tmp_path):
    res, ann = _coco(tmp_path, [1, 2])
    code, _, err = _run("score", "--results", str(res), "--annotations", str(ann),
                        "--max-bytes", "20")  # fmt: skip
    assert code == 2 and "above the 20-byte cap" in err and "--max-bytes" in err
    code, _, err = _run("score", "--results", str(res), "--annotations", str(ann),
                        "--max-bytes", "100000", "--metrics", "rouge_l")  # fmt: skip
    assert code == 0, err


def _graded_csv(tmp: Path) -> Path:
    path = tmp / "graded.csv"
    path.write_text("candidate,references,score\na dog runs,a dog,3\na cat,a red bus,1\n")
    return path


@pytest.mark.parametrize("option", ["--results", "--annotations", "--embeddings"])
def test_a_dash_for_a_file_read_is_said_to_be_no_stdin(tmp_path, option):
    """``correlate --json -`` writes to standard output, so ``--results -`` reads like
    standard input: it said "results file -: file does not exist"."""
    res, ann = _coco(tmp_path, [1, 2])
    paths = {"--results": str(res), "--annotations": str(ann), option: "-"}
    argv = [a for option_, path in paths.items() for a in (option_, path)]
    code, out, err = _run("score", *argv, "--metrics", "rouge_l")
    assert (code, out) == (2, "")
    assert err == (
        f"capeval: error: {option} -: capeval reads files, not standard input; give a file name\n"
    )
    code, out, _ = _run("correlate", "--judgments", str(_graded_csv(tmp_path)), "--format",
                        "graded", "--metrics", "rouge_l", "--json", "-")  # fmt: skip
    assert code == 0 and json.loads(out)["n_rows"] == 2  # the one dash: standard output


@pytest.mark.parametrize("cap", ["64000000000", str(2**63 - 1)])
def test_a_cap_beyond_memory_reads_a_small_file(tmp_path, cap):
    """A cap above the machine's memory is a cap, not an allocation (it was a MemoryError or
    an OverflowError)."""
    res, ann = _coco(tmp_path, [1, 2])
    code, out, err = _run("score", "--results", str(res), "--annotations", str(ann),
                          "--max-bytes", cap, "--metrics", "rouge_l")  # fmt: skip
    assert code == 0, err
    assert "rouge_l" in out


@pytest.mark.parametrize("option", ["--annotations", "--per-item", "--embeddings"])
def test_an_empty_path_is_refused_not_read_as_left_out(tmp_path, option):
    """An unset shell variable gives ''; --annotations '' scored against COCO val2014 and
    --per-item '' wrote nothing, both with exit 0 and no word."""
    res, ann = _coco(tmp_path, [1, 2])
    refs = [] if option == "--annotations" else ["--annotations", str(ann)]
    code, _, err = _run("score", "--results", str(res), *refs, "--metrics", "rouge_l", option, "")
    assert code == 2
    assert err.strip() == f"capeval: error: {option} is empty: give a file name"


def test_a_key_given_twice_in_one_object_is_refused_where_it_is(tmp_path):
    """json keeps the last value of a repeated key without a word: two reference lists for
    one image were read as the second, two ids in a record as the last. The place is the
    key's second time: the start of its object (line 1, column 1 of a ``{image_id: [...]}``
    file) said nothing."""
    res, ann = _coco(tmp_path, [1, 2])
    gts = tmp_path / "gts.json"
    gts.write_text('{"1": ["a dog runs"],\n "2": ["a bus"], "1": ["a cat"]}')
    code, _, err = _run("score", "--results", str(res), "--annotations", str(gts))
    assert code == 2
    assert err.strip() == (
        f"capeval: error: references file {gts}, line 2, column 18: invalid JSON: key '1' "
        "given twice in one object"
    )
    res.write_text('[{"image_id": 1, "caption": "a dog"},\n {"image_id": 2, "image_id": 1}]')
    code, _, err = _run("score", "--results", str(res), "--annotations", str(ann))
    assert code == 2 and "line 2, column 18: invalid JSON: key 'image_id' given twice" in err
    rows = tmp_path / "j.json"
    rows.write_text('[{"candidate": "a", "references": ["a"], "score": 1, "score": 2}]')
    with pytest.raises(InputError, match=r"j\.json, record 1, line 1: invalid JSON: key 'score'"):
        load_judgments(rows, "graded")


def test_a_json_syntax_error_names_the_record_that_holds_it(tmp_path):
    """A syntax error gave its line and column alone, where a repeated key or a bad value
    named its record too: the record (a list's element, counted from 1) that holds the
    error, or deeper the JSON path of what holds it, as a repeated key is placed."""
    res, ann = _coco(tmp_path, [1, 2])
    res.write_text(
        '[{"image_id": 1, "caption": "a dog"},\n {"image_id": 2, "caption": "a cat" "x"}]'
    )
    code, _, err = _run("score", "--results", str(res), "--annotations", str(ann))
    assert code == 2 and err == (
        f"capeval: error: results file {res}, record 2, line 2, column 37: invalid JSON: "
        "Expecting ',' delimiter\n"
    )
    res.write_text('[{"image_id": 1, "caption": "a dog"},\n {"image_id": 2, "caption": "a c')
    code, _, err = _run("score", "--results", str(res), "--annotations", str(ann))
    assert code == 2 and err.startswith(
        f"capeval: error: results file {res}, record 2, line 2, column 29: invalid JSON: a "
        "string that is never closed"
    )
    # a comma missing between two records is in neither: its line and column alone
    res.write_text('[{"image_id": 1, "caption": "a dog"}\n {"image_id": 2, "caption": "a"}]')
    code, _, err = _run("score", "--results", str(res), "--annotations", str(ann))
    assert code == 2 and err.startswith(
        f"capeval: error: results file {res}, line 2, column 2: invalid JSON: Expecting ','"
    )
    res.write_text('[{"image_id": 1, "caption": "a dog"}, {"image_id": 2, "caption": "a"}]')
    ann.write_text(
        '{"annotations": [{"image_id": 1, "caption": "a dog"},\n'
        ' {"image_id": 2, "caption": "a cat",}]}'
    )
    code, _, err = _run("score", "--results", str(res), "--annotations", str(ann))
    assert code == 2 and err == (
        f"capeval: error: references file {ann}, line 2, column 37: invalid JSON: Expecting "
        "property name enclosed in double quotes (at annotations[1])\n"
    )


@pytest.mark.parametrize("json_flag", [[], ["--json"]])
def test_a_note_on_the_scored_set_is_said_once(tmp_path, json_flag):
    """One image's CIDEr-D (its own IDF makes every weight 0) was warned of twice on the
    table (a live warning and the result's note) and once with --json."""
    res, ann = _coco(tmp_path, [1])
    code, _, err = _run("score", "--results", str(res), "--annotations", str(ann),
                        "--metrics", "cider_d", *json_flag)  # fmt: skip
    assert code == 0 and err.count("this set is a single image") == 1
    # one prefix for every warning of the CLI, as for its errors
    assert "capeval: warning: cider_d: CIDEr-D takes its IDF from the scored set" in err


def test_reference_limit_in_the_loaders(tmp_path):
    path = tmp_path / "g.json"
    path.write_text(json.dumps([{"candidate": "a", "references": ["b"] * 30, "score": 1}]))
    with pytest.raises(InputError, match=r"g\.json, item '1', column 'references': 30 refer"):
        load_judgments(path, "graded", max_references=20)
    assert len(load_judgments(path, "graded", max_references=30)) == 1
    assert Limits().max_references == 1000 and Limits().max_caption_tokens == 1000


def test_a_file_cut_short_or_a_csv_named_json_is_said_in_words_that_end(tmp_path):
    """A results file cut short read "invalid JSON: Unterminated string starting at" (json's
    message, which expects the position after it); an Excel CSV named .json read "Expecting
    value" with no word of CSV; a JSON-lines line cut short was called a file."""
    res, ann = _coco(tmp_path, [1, 2, 3])
    whole = res.read_text()
    res.write_text(whole[: whole.index("number 1") + 3])
    code, _, err = _run("score", "--results", str(res), "--annotations", str(ann))
    assert code == 2 and err.count("\n") == 1, err
    assert err.rstrip().endswith("a string that is never closed (is the file cut short?)"), err
    res.write_text(whole[: whole.rindex("}") + 1])  # the array's "]" lost
    code, _, err = _run("score", "--results", str(res), "--annotations", str(ann))
    assert code == 2 and "at the end of the file (is it cut short?)" in err, err
    res.write_bytes(b"\xef\xbb\xbfimage_id,caption\r\n1,a dog\r\n")
    code, _, err = _run("score", "--results", str(res), "--annotations", str(ann))
    assert code == 2 and "its first line reads like a CSV file's ('image_id,caption')" in err
    for not_csv in ('results = [{"image_id": 1, "caption": "a"}]', "// captions, v2\n[]"):
        res.write_text(not_csv)  # a comma on the first line does not make a CSV header
        code, _, err = _run("score", "--results", str(res), "--annotations", str(ann))
        assert code == 2 and "invalid JSON: Expecting value" in err and "CSV" not in err, err
    lines = tmp_path / "j.jsonl"
    lines.write_text('{"image_id": 1, "caption": "a dog", "score": 3}\n{"image_id": 2, "capt\n')
    with pytest.raises(InputError, match=r"line 2, column 17: .*is the line cut short\?\)$"):
        load_judgments(lines, format="graded")


def test_blank_result_captions_are_said_and_scored_as_given(tmp_path):
    """A results file with "" captions (a model that stopped at once) was scored without a
    word; pycocoevalcap scores them too, so capeval scores them, and says which images."""
    res, ann = _coco(tmp_path, [1, 2, 3], ["", "a dog number 1", "  "])
    code, _, err = _run("score", "--results", str(res), "--annotations", str(ann),
                        "--metrics", "bleu_4")  # fmt: skip
    line = (
        "results file {}: 2 of 3 caption(s) are blank: image 1 (record 1, line 1), image 3 "
        "(record 3, line 1); each is scored as an empty"
    )
    assert code == 0 and line.format(res) in err, err
    other = tmp_path / "other.json"
    other.write_text(json.dumps([{"image_id": i, "caption": "a dog"} for i in (1, 2, 3)]))
    code, _, err = _run("compare", "--results", str(res), str(other), "--annotations", str(ann),
                        "--metrics", "bleu_4")  # fmt: skip
    assert code == 0 and err.count("caption(s) are blank") == 1 and line.format(res) in err


def test_json_through_a_link_writes_its_target_and_a_device_takes_the_text(tmp_path):
    """``--json`` replaced its path by a new file once complete: a link became a file (its
    target left as it was), and a device (``/dev/full`` reached through a link) became a
    JSON file, with exit 0 and no error. A link's target is replaced now, and a device or a
    pipe is written to: a full one is the one clear line."""
    import os
    import stat

    judgments = _graded_csv(tmp_path)
    argv = ["correlate", "--judgments", str(judgments), "--format", "graded", "--metrics",
            "rouge_l", "--tokenizer", "whitespace", "--json"]  # fmt: skip
    target, link = tmp_path / "target.json", tmp_path / "link.json"
    target.write_text("old")
    link.symlink_to(target)
    code, _, err = _run(*argv, str(link))
    assert code == 0, err
    assert link.is_symlink() and json.loads(target.read_text())["n_rows"] == 2
    null = tmp_path / "null.json"  # the library's one-file writer, onto a device
    null.symlink_to(os.devnull)
    write_json(null, {"a": 1})
    assert null.is_symlink() and stat.S_ISCHR(os.stat(null).st_mode)
    if not Path("/dev/full").exists():
        pytest.skip("no /dev/full (a device that is full)")
    full = tmp_path / "full.json"
    full.symlink_to("/dev/full")  # a link, so that old code replaced the link, not the device
    code, _, err = _run(*argv, str(full))
    assert code == 2
    assert err.endswith(f"--json {full}: cannot write it (No space left on device)\n"), err
    assert full.is_symlink() and stat.S_ISCHR(os.stat(full).st_mode)
