"""``capeval perturb``: one caption (the JSON contract of issue 8) and batch mode."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from capeval_core.cli import main
from capeval_core.perturb import perturb, score_perturbations

CAND = "a man riding a wave on a surfboard"
REFS = ["a man riding a wave on top of a surfboard", "a surfer rides a wave"]


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_one_caption_json_contract(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["perturb", "--candidate", CAND, "--perturbation", "shuffle", "--seed", "3"]
    for ref in REFS:
        args += ["--reference", ref]
    code, out, _ = _run(capsys, *args, "--metrics", "bleu_4", "rouge_l", "--json")
    assert code == 0
    data = json.loads(out)
    expected = perturb(CAND, "shuffle", seed=3)
    assert data["original"] == CAND and data["perturbed"] == expected.perturbed
    assert [(c["position"], c["old"], c["new"]) for c in data["changed"]] == [
        (c.position, c.old, c.new) for c in expected.changed
    ]
    (scores,) = score_perturbations(
        [expected], REFS, ["bleu_4", "rouge_l"], options={"cider_d": {"idf": "coco-val2014"}}
    )
    assert data["scores"] == {
        k: {"before": scores.before[k], "after": scores.after[k]} for k in ("bleu_4", "rouge_l")
    }


def test_one_caption_text_output_and_nothing_eligible(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(
        capsys,
        "perturb",
        "--candidate",
        "a man on a beach",
        "--reference",
        "a man",
        "--perturbation",
        "colour",
        "--metrics",
        "bleu_1",
    )
    assert code == 0
    assert "nothing eligible" in out and "bleu_1" in out


def test_errors_exit_2(capsys: pytest.CaptureFixture[str], tmp_path) -> None:
    code, _, err = _run(capsys, "perturb", "--candidate", "a", "--perturbation", "nope")
    assert code == 2 and "unknown perturbation" in err
    code, _, err = _run(capsys, "perturb", "--candidate", "a dog", "--perturbation", "swap")
    assert code == 2 and "--reference" in err
    graded = tmp_path / "x.csv"
    graded.write_text("candidate,references,score\na dog,a dog runs,3\n")
    code, _, err = _run(capsys, "perturb", "--dataset", str(graded), "--perturbation", "swap")
    assert code == 2 and "--format" in err
    # a file that is not there: said so (it was "cannot tell the format from the suffix ''")
    missing = str(tmp_path / "nonexist")
    code, _, err = _run(capsys, "perturb", "--dataset", missing, "--format", "graded",
                        "--perturbation", "swap")  # fmt: skip
    assert code == 2 and f"--dataset {missing}: no such file or folder" in err


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (
            ["--dataset", "demo-graded"],
            "--candidate, --reference: not used with --dataset demo-graded",
        ),
        (["--format", "graded", "--preset", "x"], "--format, --preset: not used without --dataset"),
        (["--images", "3"], "--images: not used without --dataset; leave it out"),
        (
            ["--max-caption-tokens", "5", "--max-bytes", "9"],
            "--max-bytes, --max-caption-tokens: not used without --dataset; leave them out",
        ),
        (
            ["--metrics", "bleu_4", "rouge_l", "--cider-idf", "corpus"],
            "--cider-idf: not used without cider_d among the metrics (bleu_4 rouge_l); "
            "leave it out",
        ),
    ],
)
def test_an_option_the_run_would_not_use_is_refused(
    capsys: pytest.CaptureFixture[str], extra: list[str], message: str
) -> None:
    """They were ignored without a word (a candidate beside --dataset, a preset without one)."""
    one = ["--candidate", "a dog runs", "--reference", "a dog", "--perturbation", "shuffle"]
    code, _, err = _run(capsys, "perturb", *one, *extra)
    assert code == 2 and message in err and err.count("\n") == 1


def test_a_judgment_file_s_limit_is_raised_by_the_option_its_message_names(
    capsys: pytest.CaptureFixture[str], tmp_path
) -> None:
    """A 1,100-token candidate was refused with "raise it with --max-caption-tokens", an
    option perturb did not have; it has the input limits of the other commands now."""
    path = tmp_path / "long.tsv"
    long = " ".join(["dog"] * 1100)
    rows = "".join(f"{long if i == 0 else 'a dog runs'}\ta dog runs\t{i}\n" for i in range(5))
    path.write_text("candidate\treferences\tscore\n" + rows)
    common = ("perturb", "--dataset", str(path), "--format", "graded", "--perturbation",
              "shuffle", "--metrics", "bleu_1", "--json")  # fmt: skip
    code, _, err = _run(capsys, *common)
    assert code == 2 and "raise it with --max-caption-tokens" in err
    code, out, err = _run(capsys, *common, "--max-caption-tokens", "2000")
    assert code == 0, err
    assert json.loads(out)["n"] == 5
    code, _, err = _run(capsys, *common, "--max-bytes", "100")
    assert code == 2 and "raise it with --max-bytes" in err and err.count("\n") == 1
    code, _, err = _run(capsys, "perturb", "--dataset", "demo-graded", "--perturbation",
                        "shuffle", "--max-references", "3")  # fmt: skip
    assert code == 2 and "--max-references: not used with --dataset demo-graded" in err


def test_cider_idf_is_taken_where_cider_d_is_scored(capsys: pytest.CaptureFixture[str]) -> None:
    one = ["--candidate", "a dog runs", "--reference", "a dog", "--perturbation", "shuffle"]
    code, out, err = _run(capsys, "perturb", *one, "--metrics", "cider_d", "--cider-idf", "corpus")
    assert code == 0 and "cider_d" in out and "not used" not in err


def test_batch_on_coco_val(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(
        capsys,
        "perturb",
        "--dataset",
        "coco-val",
        "--images",
        "40",
        "--perturbation",
        "shuffle",
        "--metrics",
        "bleu_4",
        "rouge_l",
        "--json",
    )
    assert code == 0
    data = json.loads(out)
    assert data["n"] == 40 and data["n_changed"] == 40
    assert data["deltas"]["bleu_4"]["mean delta"] < 0
    assert data["correlations"] == {}


def test_batch_on_the_synthetic_graded_demo(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(
        capsys,
        "perturb",
        "--dataset",
        "demo-graded",
        "--images",
        "50",
        "--perturbation",
        "drop_stopwords",
        "--metrics",
        "bleu_1",
        "--json",
    )
    assert code == 0
    data = json.loads(out)
    assert data["n"] == 50
    corr = data["correlations"]["bleu_1/pearson"]
    assert set(corr) == {"before", "after"} and corr["before"] != corr["after"]


@pytest.mark.parametrize(
    "argv",
    [
        ["--candidate", CAND, "--reference", REFS[0], "--reference", REFS[1]],
        ["--dataset", "demo-graded", "--images", "25"],
    ],
)
def test_the_text_report_carries_the_jsons_signatures(
    capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    """perturb's text report printed its numbers without signatures (its JSON had them);
    they follow the report as score's text report prints them, one line per key."""
    argv = ["perturb", *argv, "--perturbation", "shuffle", "--metrics", "bleu_1", "rouge_l"]
    code, text, _ = _run(capsys, *argv)
    assert code == 0
    _, out, _ = _run(capsys, *argv, "--json")
    signatures = json.loads(out)["signatures"]
    assert list(signatures) == ["bleu_1", "rouge_l"]
    block = text.split("\nsignatures\n", 1)[1].splitlines()
    assert [line.split(None, 1) for line in block] == [[k, s] for k, s in signatures.items()]


def test_the_demo_is_the_librarys_whatever_the_seed(capsys: pytest.CaptureFixture[str]) -> None:
    """--seed 5 built another demo than the library and the app's lab perturb (their seed 0):
    mean BLEU-1 before 0.4972 on the command line, 0.5252 in the library."""
    from capeval_core.perturb import batch_dataset, perturb_batch

    code, out, _ = _run(
        capsys, "perturb", "--dataset", "demo-graded", "--images", "25",
        "--perturbation", "shuffle", "--metrics", "bleu_1", "--seed", "5", "--json",
    )  # fmt: skip
    assert code == 0
    d = batch_dataset("demo-graded", 25)
    lib = perturb_batch(d.candidates, d.references, "shuffle", ["bleu_1"], seed=5, human=d.human)
    summary = lib.summary().set_index("key")
    assert (
        json.loads(out)["deltas"]["bleu_1"]["mean before"] == summary.loc["bleu_1", "mean before"]
    )


def test_a_unicode_digit_is_not_a_count(capsys: pytest.CaptureFixture[str]) -> None:
    """str.isdigit() takes ² and ③, int() does not: a traceback and exit 1."""
    code, out, err = _run(
        capsys, "perturb", "--candidate", "10² dogs and ③ cats", "--reference", "dogs",
        "--perturbation", "count", "--json",
    )  # fmt: skip
    assert code == 0 and "Traceback" not in err
    assert json.loads(out)["perturbed"] == "10² dogs and ③ cats"


def test_batch_on_a_judgment_file_takes_human_as_its_score_column(
    capsys: pytest.CaptureFixture[str], tmp_path
) -> None:
    """A file with two score columns, none named score, is refused until --human chooses;
    --dataset then reads that column (it read the file before --human, and was refused)."""
    path = tmp_path / "two.csv"
    rows = "".join(f"a dog {i},a dog runs|||a pup,{1 + i % 3},{5 - i % 4}\n" for i in range(6))
    path.write_text("candidate,references,fluency,quality\n" + rows)
    common = ("perturb", "--dataset", str(path), "--format", "graded", "--perturbation",
              "shuffle", "--metrics", "bleu_1", "--json")  # fmt: skip
    code, _, err = _run(capsys, *common)
    assert code == 2 and "--human NAME" in err
    code, out, err = _run(capsys, *common, "--human", "quality")
    assert code == 0, err
    assert json.loads(out)["n"] == 6
    # the set is named by its file (it was "6 read, 6 scored" alone), in the JSON and the text
    assert json.loads(out)["dataset"] == "two.csv (6 read, 6 scored)"
    code, out, err = _run(capsys, *common[:-1], "--human", "quality")
    assert code == 0 and out.startswith("shuffle on two.csv (6 read, 6 scored): ")


def test_one_caption_says_what_score_says_of_degenerate_input(capsys) -> None:
    """CIDEr-D from one caption's references is 0 before and after, and a blank reference is
    scored as an empty one: `score` warned of both, `perturb` printed 0 -> 0 silently."""
    code, out, err = _run(
        capsys, "perturb", "--candidate", "a man rides a horse", "--reference",
        "A man riding a horse.", "--reference", "   ", "--perturbation", "shuffle",
        "--metrics", "cider_d", "--cider-idf", "corpus", "--json",
    )  # fmt: skip
    assert code == 0, err
    data = json.loads(out)  # the warnings went to stderr
    assert data["scores"]["cider_d"] == {"before": 0.0, "after": 0.0}
    lines = err.splitlines()
    assert "capeval: warning: --reference 2 (in the order given) is blank" in lines[0]
    # said of each caption scored alone (it spoke of "2 images", then of the caption and its
    # perturbation sharing the references, after each was scored alone)
    assert lines[1].startswith("capeval: warning: cider_d: with --cider-idf corpus each caption")
    assert "a set of one image" in lines[1] and "share" not in lines[1]
    assert "--cider-idf coco-val2014" in lines[1] and "images" not in lines[1]
    # the default IDF for one caption: no note
    code, _, err = _run(
        capsys, "perturb", "--candidate", "a man rides a horse", "--reference",
        "A man riding a horse.", "--perturbation", "shuffle", "--metrics", "cider_d",
    )  # fmt: skip
    assert code == 0 and "warning" not in err, err


PERTURB_JSON = [sys.executable, "-m", "capeval_core.cli", "perturb", "--candidate",
                "a red dog runs on the grass", "--reference", "a dog runs",
                "--perturbation", "shuffle", "--metrics", "bleu_4", "--json"]  # fmt: skip


def test_a_closed_pipe_ends_the_output_quietly() -> None:
    """``capeval ... --json | head -c 1``: the reader closed the pipe, and the command printed
    BrokenPipeError's traceback twice (once more as the interpreter flushed at exit)."""
    proc = subprocess.Popen(PERTURB_JSON, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()  # the reader is gone before anything is written
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 1
    assert err == "", err


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full (a device that is full)")
def test_output_to_a_full_disk_is_said_in_one_line() -> None:
    """Output to a full disk ended in OSError's traceback (exit 1)."""
    with open("/dev/full", "w") as full:
        proc = subprocess.run(PERTURB_JSON, stdout=full, stderr=subprocess.PIPE, text=True)
    assert (proc.returncode, proc.stderr) == (
        2,
        "capeval: error: could not write the output: No space left on device\n",
    )


def test_another_oserror_is_not_said_to_be_the_outputs(monkeypatch) -> None:
    """Any OSError without a file name was said as "could not write the output" (with
    "None" for one without a reason): only a full disk, a quota or a device's error are."""
    import errno

    import capeval_core.cli as cli

    def broken(args) -> int:  # type: ignore[no-untyped-def]
        raise OSError(errno.ENOSYS, "Function not implemented")

    parser = cli.build_parser()
    monkeypatch.setattr(cli, "build_parser", lambda: parser)
    parser._subparsers._group_actions[0].choices["perturb"].set_defaults(func=broken)  # type: ignore[union-attr]
    with pytest.raises(OSError, match="Function not implemented"):
        main(PERTURB_JSON[3:])


def test_dataset_rows_dropped_are_warned_and_structured_in_the_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A row dropped for a missing human score was said only inside the `dataset` string
    (free text) and with no `capeval: warning:` line."""
    p = tmp_path / "g.csv"
    p.write_text(
        "id,candidate,references,score\n1,a dog runs,a dog running,3\n2,a cat,a cat on a mat,4\n"
        "3,a red bus,a bus on a street,\n4,a man,a man rides,1\n5,two birds,birds on a wire,2\n"
    )
    argv = ["perturb", "--dataset", str(p), "--format", "graded", "--perturbation", "shuffle"]
    code, out, err = _run(capsys, *argv, "--metrics", "bleu_4", "--json")
    assert code == 0, err
    assert (
        f"capeval: warning: {p}: 1 row(s) dropped, not scored: missing human score in column "
        "'score' (line 4): 1"
    ) in err.splitlines()
    data = json.loads(out)
    assert data["dropped"] == {"missing human score in column 'score'": 1}
    assert data["dropped_at"] == {"missing human score in column 'score'": "line 4"}


def test_dataset_errors_name_the_file_by_the_path_given(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--human nope` said "no human-score column 'nope'; this set has ['score']" of no file,
    and a file's errors named it by name where correlate names it by the path given."""
    p = tmp_path / "plain.csv"
    p.write_text("candidate,references,score\na dog,a dog runs,3\na cat,a cat sits,2\n")
    argv = ["perturb", "--dataset", str(p), "--format", "graded", "--perturbation", "shuffle"]
    code, _, err = _run(capsys, *argv, "--human", "nope", "--metrics", "bleu_4")
    assert code == 2
    assert err == f"capeval: error: {p}: no human-score column 'nope'; this set has ['score']\n"
    p.write_text("candidate,references,score\na dog,a dog runs,3\na cat,a cat sits,lots\n")
    code, _, err = _run(capsys, *argv, "--metrics", "bleu_4")
    assert code == 2 and err.startswith(f"capeval: error: {p}, line 3, column 'score': "), err


def test_a_long_caption_s_tagging_shows_how_far_it_is(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """synonym tags the caption with SPICE's parser, whose chart grows with the cube of the
    sentence's length: a 400-word caption ran for many minutes with nothing on stderr. A
    long sentence's parse now says how far it is, on a bar; its output is the same."""
    from capeval_core.spice import stanford_pcfg

    caption = "a brown dog runs after a red ball on the green grass of a quiet park"
    code, quiet, err = _run(capsys, "perturb", "--candidate", caption, "--reference", "a dog",
                            "--perturbation", "synonym", "--metrics", "bleu_1")  # fmt: skip
    assert code == 0 and "tagging" not in err
    # the same run as if its sentence were long (a real one takes minutes)
    monkeypatch.setattr(stanford_pcfg, "REPORT_FROM_WORDS", 10)
    from capeval_core import senses

    monkeypatch.setattr(senses, "_TAGS", {})  # parsed again, not from the tags kept
    code, out, err = _run(capsys, "perturb", "--candidate", caption, "--reference", "a dog",
                          "--perturbation", "synonym", "--metrics", "bleu_1")  # fmt: skip
    assert code == 0 and out == quiet
    assert "capeval perturb" in err and "tagging a 16-word caption, 100 %" in err


def test_a_sentence_over_the_parser_s_limit_is_said(capsys: pytest.CaptureFixture[str]) -> None:
    """Past the parser's limit (544 words, spice-1.0.jar's) synonym's tagger leaves every word
    untagged, so nothing is replaced: the run said nothing of why."""
    caption = " ".join(["a dog runs on the grass and"] * 80)  # 560 words, no full stop
    code, _, err = _run(capsys, "perturb", "--candidate", caption, "--reference", "a dog",
                        "--perturbation", "synonym", "--metrics", "bleu_1")  # fmt: skip
    assert code == 0
    assert (
        "capeval: warning: --candidate: a sentence of 560 words is over the parser's limit of "
        "544 words: its words get no part of speech, so no synonym"
    ) in err.splitlines()


def test_a_dataset_s_notes_are_warned_of(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """THumB's note that references list a Human caption (and the rows its preset drops)
    were said by correlate, never by perturb --dataset."""
    import shutil

    golden = Path(__file__).resolve().parent.parent / "golden" / "thumb"
    for name in ("mscoco_THumB-1.0.jsonl", "mscoco_references.json"):
        shutil.copy(golden / name, tmp_path)
    code, _, err = _run(capsys, "perturb", "--dataset", str(tmp_path), "--format", "thumb",
                        "--perturbation", "shuffle", "--metrics", "bleu_1")  # fmt: skip
    assert code == 0, err
    lines = err.splitlines()
    assert (
        f"capeval: warning: {tmp_path / 'mscoco_THumB-1.0.jsonl'}: 10 row(s) dropped, not scored: "
        "Human system (preset): 10"
    ) in lines
    assert "capeval: warning: 2 image(s) of the references file list their Human caption " in err


#: BLEU-4 of this caption against these references is about 1e-08, and 2e-12 after shuffle
#: seed 1: values six decimals wrote 0.000000
TINY = "rides a wave the big man"
TINY_REFS = ("a surfer rides a big wave", "a man on a surfboard")


def test_one_caption_s_tiny_values_are_written_as_score_writes_them(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """ "bleu_4 0.000000 -> 0.000000 (+0.000000)" for 1.09e-08 -> 1.93e-12; the JSON keeps them
    whole."""
    refs = ["--reference", TINY_REFS[0], "--reference", TINY_REFS[1]]
    args = ["perturb", "--candidate", TINY, "--perturbation", "shuffle", "--seed", "1",
            "--metrics", "bleu_4", *refs]  # fmt: skip
    code, out, _ = _run(capsys, *args, "--json")
    assert code == 0
    scores = json.loads(out)["scores"]["bleu_4"]
    before, after = scores["before"], scores["after"]
    assert 0 < after < before < 5e-7
    code, out, _ = _run(capsys, *args)
    assert code == 0
    line = next(x for x in out.splitlines() if x.startswith("bleu_4 "))
    assert "0.000000" not in line
    assert f"{before:.2e} -> {after:.2e}  ({after - before:+.2e})" in line


def test_a_batch_table_writes_every_number_one_way(
    capsys: pytest.CaptureFixture[str], tmp_path
) -> None:
    """The batch table mixed 0.000008 with -4.764674e-09 (pandas' choice per column): each is
    written as score writes a value, a nonzero one never as 0.000000."""
    path = tmp_path / "tiny.tsv"
    refs = "|||".join(TINY_REFS)
    path.write_text(
        "candidate\treferences\tscore\n" + "".join(f"{TINY}\t{refs}\t{i}\n" for i in range(6))
    )
    common = ("perturb", "--dataset", str(path), "--format", "graded", "--perturbation",
              "shuffle", "--metrics", "bleu_4", "--seed", "1")  # fmt: skip
    code, out, _ = _run(capsys, *common, "--json")
    assert code == 0
    deltas = json.loads(out)["deltas"]["bleu_4"]
    code, out, _ = _run(capsys, *common)
    assert code == 0
    row = next(x for x in out.splitlines() if x.startswith("bleu_4 ")).split()
    header = ["mean before", "mean delta", "median delta", "std delta", "share lowered"]
    shown = dict(zip(header, row[2:], strict=True))
    for name, text in shown.items():
        value = deltas[name]
        if value != 0 and abs(value) < 5e-7:
            assert text == f"{value:.2e}", (name, text)
        else:
            assert text == f"{value:.6f}", (name, text)
    assert any("e-" in t for t in shown.values())  # the case the test is about
