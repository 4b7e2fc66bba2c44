"""The ``capeval`` command line: numbers, per-item output and error handling."""

from __future__ import annotations

import contextlib
import csv
import io
import json

import pytest

from capeval_core.cli import main
from capeval_core.errors import UnknownKeyError
from tests.conftest import golden_small, load_golden, requires_java


def _write_coco(tmp_path, cases, with_images=True):
    results = [{"image_id": 100 + i, "caption": c["candidate_raw"]} for i, c in enumerate(cases)]
    anns, aid = [], 0
    for i, c in enumerate(cases):
        for ref in c["references_raw"]:
            anns.append({"image_id": 100 + i, "id": aid, "caption": ref})
            aid += 1
    ann = {"annotations": anns}
    if with_images:
        ann["images"] = [{"id": 100 + i} for i in range(len(cases))]
    res_path, ann_path = tmp_path / "results.json", tmp_path / "captions.json"
    res_path.write_text(json.dumps(results))
    ann_path.write_text(json.dumps(ann))
    return res_path, ann_path


def _run(*argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


def test_json_output_matches_golden(tmp_path):
    # golden values: pycocoevalcap 1.2 on the same ten cases scored as one corpus
    res, ann = _write_coco(tmp_path, golden_small())
    code, out, _ = _run("score", "--results", str(res), "--annotations", str(ann), "--json")
    assert code == 0
    data = json.loads(out)
    corpus = load_golden("golden-small")["corpus"]
    # n_images: the table's "N images", which the JSON did not hold (compare's does); the
    # references by file name and digest, which no signature names
    assert set(data) == {"n_images", "references", "references_sha256", "corpus", "signatures"}
    assert data["references"] == ann.name and len(data["references_sha256"]) == 12
    assert data["n_images"] == len(golden_small())
    for k in range(4):
        assert data["corpus"][f"bleu_{k + 1}"] == pytest.approx(corpus["bleu"][k], abs=1e-12)
    assert data["corpus"]["rouge_l"] == pytest.approx(corpus["rouge_l"], abs=1e-12)
    assert data["corpus"]["cider_d"] == pytest.approx(corpus["cider_d"], abs=1e-12)
    assert data["signatures"]["cider_d"].startswith("cider_d|")


def test_the_text_table_signs_each_value_as_the_json_does(tmp_path):
    """score's table: a line per key with its value and the JSON's signature (the rows
    compare's and perturb's text reports print their signatures with)."""
    res, ann = _write_coco(tmp_path, golden_small())
    argv = (
        "score",
        "--results",
        str(res),
        "--annotations",
        str(ann),
        "--metrics",
        "bleu_4",
        "rouge_l",
    )
    code, text, _ = _run(*argv)
    assert code == 0
    data = json.loads(_run(*argv, "--json")[1])
    rows = [line.split(None, 2) for line in text.splitlines()[1:]]
    assert rows == [[k, f"{data['corpus'][k]:.6f}", s] for k, s in data["signatures"].items()]


def test_a_tiny_value_is_written_in_significant_digits_not_as_zero(tmp_path):
    """BLEU-4 of a caption with no 3-gram in its references is about 1e-08: six decimals
    wrote 0.000000, as if it were zero; perturb writes its values the same way."""
    case = {"candidate_raw": "rides a wave the big man",
            "references_raw": ["a surfer rides a big wave", "a man on a surfboard"]}  # fmt: skip
    res, ann = _write_coco(tmp_path, [case])
    argv = ("score", "--results", str(res), "--annotations", str(ann), "--metrics", "bleu_4")
    value = json.loads(_run(*argv, "--json")[1])["corpus"]["bleu_4"]
    assert 0 < value < 5e-7
    code, text, _ = _run(*argv)
    assert code == 0
    assert text.splitlines()[1].split(None, 2)[:2] == ["bleu_4", f"{value:.2e}"]


def test_table_output_and_per_item_csv(tmp_path):
    cases = golden_small()
    res, ann = _write_coco(tmp_path, cases)
    out_csv = tmp_path / "items.csv"
    code, out, _ = _run(
        "score",
        "--results",
        str(res),
        "--annotations",
        str(ann),
        "--metrics",
        "rouge_l",
        "bleu_4",
        "--per-item",
        str(out_csv),
    )
    assert code == 0
    assert "rouge_l" in out and "bleu_4" in out and "cider_d" not in out
    rows = list(csv.DictReader(out_csv.open()))
    assert list(rows[0]) == ["image_id", "rouge_l", "bleu_4"]
    assert len(rows) == len(cases)
    for row, case in zip(rows, cases, strict=True):
        assert float(row["rouge_l"]) == pytest.approx(case["rouge_l"], abs=1e-12)
        assert float(row["bleu_4"]) == pytest.approx(case["bleu"][3], abs=1e-12)


def test_per_item_json(tmp_path):
    cases = golden_small()
    res, ann = _write_coco(tmp_path, cases, with_images=False)
    out_json = tmp_path / "items.json"
    code, _, _ = _run(
        "score", "--results", str(res), "--annotations", str(ann), "--per-item", str(out_json)
    )
    assert code == 0
    rows = json.loads(out_json.read_text())
    assert [r["image_id"] for r in rows] == [100 + i for i in range(len(cases))]
    assert rows[2]["cider_d"] == pytest.approx(cases[2]["cider_d"], abs=1e-12)
    # its signatures beside it, as beside the CSV (the JSON list had none anywhere)
    sidecar = json.loads((tmp_path / "items.signatures.json").read_text())
    assert set(sidecar["signatures"]) == set(rows[0]) - {"image_id"}
    assert sidecar["signatures"]["cider_d"].startswith("cider_d|")


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda r, a: r.write_text(""), "is empty"),
        (lambda r, a: r.write_text("[{"), "invalid JSON"),
        (lambda r, a: r.write_text("[]"), "no captions"),
        (lambda r, a: r.write_text('[{"image_id": 999, "caption": "x"}]'), "no reference"),
        (lambda r, a: r.write_text('[{"image_id": 100}]'), "missing field 'caption'"),
        (
            lambda r, a: r.write_text(json.dumps([{"image_id": 100, "caption": "a"}] * 2)),
            "more than one caption",
        ),
        (lambda r, a: a.write_text('{"images": []}'), "'annotations' list"),
        (lambda r, a: a.unlink(), "does not exist"),
    ],
)
def test_clear_errors_with_non_zero_exit(tmp_path, mutate, message):
    res, ann = _write_coco(tmp_path, golden_small()[:2])
    mutate(res, ann)
    code, out, err = _run("score", "--results", str(res), "--annotations", str(ann))
    assert code == 2
    assert message in err
    assert out == ""


def test_unknown_metric(tmp_path):
    res, ann = _write_coco(tmp_path, golden_small()[:2])
    code, _, err = _run(
        "score", "--results", str(res), "--annotations", str(ann), "--metrics", "bleu_9"
    )
    assert code == 2 and err.startswith("capeval: error: --metrics: unknown metric 'bleu_9'; ")


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (
            ["score", "--results", "r.json", "--bogus"],
            "capeval score: error: unrecognized arguments: --bogus (see `capeval score --help`)",
        ),
        (  # README: score's --json is a switch; compare's takes a file, or - for stdout
            ["score", "--results", "r.json", "--json", "-"],
            "capeval score: error: score's --json takes no value (got '-'): it prints the JSON "
            "on standard output (see `capeval score --help`)",
        ),
        (  # the same line for each spelling (argparse's own words for --json=-)
            ["score", "--results", "r.json", "--json=-"],
            "capeval score: error: score's --json takes no value (got '-'): it prints the JSON "
            "on standard output (see `capeval score --help`)",
        ),
        (
            ["score", "--json=out.json", "--results", "r.json"],
            "capeval score: error: score's --json takes no value (got 'out.json'): it prints "
            "the JSON on standard output (see `capeval score --help`)",
        ),
        (
            ["score", "--results", "r.json", "--json", "out.json"],
            "capeval score: error: score's --json takes no value (got 'out.json'): it prints "
            "the JSON on standard output (see `capeval score --help`)",
        ),
        (  # a second results file is no --json value: no word about --json
            ["score", "--results", "r.json", "b.json", "--json"],
            "capeval score: error: unrecognized arguments: b.json (see `capeval score --help`)",
        ),
        (  # perturb's --json is a switch too: it said "unrecognized arguments: x.json"
            ["perturb", "--candidate", "a dog", "--reference", "a dog", "--json", "x.json"],
            "capeval perturb: error: perturb's --json takes no value (got 'x.json'): it prints "
            "the JSON on standard output (see `capeval perturb --help`)",
        ),
        (
            ["compare", "--results", "r.json", "--bogus", "1"],
            "capeval compare: error: unrecognized arguments: --bogus 1 (see `capeval compare "
            "--help`)",
        ),
    ],
)
def test_an_argument_no_option_takes_is_said_by_its_subcommand(argv, said, capsys):
    """argparse's top-level parser said them ("capeval: error: ... (see `capeval --help`)"),
    where a missing argument is said by the subcommand, whose help lists its options."""
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2
    assert capsys.readouterr().err == said + "\n"


def test_bad_per_item_suffix(tmp_path):
    res, ann = _write_coco(tmp_path, golden_small()[:2])
    code, _, err = _run(
        "score",
        "--results",
        str(res),
        "--annotations",
        str(ann),
        "--per-item",
        str(tmp_path / "x.txt"),
    )
    assert code == 2 and ".csv or .json" in err


def test_metrics_and_info_subcommands():
    code, out, _ = _run("metrics")
    assert code == 0 and "cider_d" in out and "bleu_2" in out
    code, out, _ = _run("info")
    assert code == 0 and "COCO 2014 captions" in out


def test_coco_caption_names_the_metrics_coco_caption_reports(tmp_path):
    """``--metrics coco-caption``: BLEU-1..4, METEOR, ROUGE-L, CIDEr-D and SPICE, in that order,
    beside other keys without repeats, in every command that takes --metrics."""
    from capeval_core.cli.arguments import metric_keys
    from capeval_core.cli.correlate import _correlate_keys
    from capeval_core.metrics import COCO_CAPTION_KEYS

    assert metric_keys(["coco-caption"], ()) == list(COCO_CAPTION_KEYS)
    assert metric_keys(["wmd,coco-caption", "bleu_4"], ()) == ["wmd", *COCO_CAPTION_KEYS]
    assert _correlate_keys(["coco-caption"]) == (list(COCO_CAPTION_KEYS), [])
    code, out, _ = _run("metrics")
    assert code == 0 and "coco-caption    bleu_1 bleu_2" in out
    assert "bleu            bleu_1 bleu_2 bleu_3 bleu_4" in out  # accepted, so listed
    with pytest.raises(UnknownKeyError, match=r"available: .*, coco-caption$"):
        metric_keys(["nosuch"], ())
    res, ann = _write_coco(tmp_path, golden_small()[:2])
    argv = ("score", "--results", str(res), "--annotations", str(ann), "--json")
    code, out, err = _run(*argv, "--metrics", "coco-caption")
    assert code == 0, err
    assert list(json.loads(out)["corpus"]) == list(COCO_CAPTION_KEYS)


def test_score_says_how_many_captions_spice_parses_before_it_parses_them(tmp_path, monkeypatch):
    """SPICE's parse is its slow part (minutes for the exact parser on a cold cache): on a large
    batch the CLI says how many captions it parses, once, and not when the cache has them."""
    import capeval_core.cli.score as score_command

    monkeypatch.setenv("CAPEVAL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(score_command, "PROGRESS_FROM", 1)  # a small batch counts as large here
    cases = [
        {"candidate_raw": "a dog runs on the grass", "references_raw": ["a dog on grass", "a dog"]},
        {"candidate_raw": "a red bus", "references_raw": ["a bus on a street", "a red bus"]},
    ]
    res, ann = _write_coco(tmp_path, cases)
    argv = ("score", "--results", str(res), "--annotations", str(ann), "--metrics", "spice")
    code, _, err = _run(*argv)
    assert code == 0
    # 6 captions, 1 twice, none of them COCO's (whose parses ship)
    assert "SPICE: parsing 5 captions with the stanford-pcfg parser" in err
    code, _, err = _run(*argv)
    assert code == 0 and "SPICE: parsing" not in err


@pytest.mark.parametrize("command", ["score", "compare"])
@pytest.mark.parametrize("parser", ["stanford-emulation", "spacy-sm", "spacy"])
def test_a_retired_or_unknown_spice_parser_gets_one_line_naming_the_parser(
    tmp_path, command, parser
):
    """Before any file is read (the results file does not exist): exit 2, one line."""
    missing = str(tmp_path / "results.json")
    code, out, err = _run(command, "--results", missing, "--spice-parser", parser)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "'stanford-pcfg'" in err and parser in err
    assert ("retired" in err) == (parser != "spacy")
    code, _, err = _run(
        command, "--results", missing, "--metrics", "spice", "--spice-parser", "stanford-pcfg"
    )
    assert code == 2 and "results.json" in err and "parser" not in err  # accepted, then the file


DEFAULT = "default: bleu_1 bleu_2 bleu_3 bleu_4 rouge_l cider_d"


@pytest.mark.parametrize("command", ["score", "compare"])
@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (
            ["--metrics", "bleu_4", "rouge_l", "--cider-idf", "coco-val2014"],
            "--cider-idf: not used without cider_d among the metrics (bleu_4 rouge_l); "
            "leave it out",
        ),
        (
            ["--metrics", "bleu", "--cider-idf", "corpus"],
            "--cider-idf: not used without cider_d among the metrics "
            "(bleu_1 bleu_2 bleu_3 bleu_4); leave it out",
        ),
        (
            ["--spice-max-words", "5"],
            f"--spice-max-words: not used without spice among the metrics ({DEFAULT}); "
            "leave it out",
        ),
        (
            ["--metrics", "cider_d", "--spice-parser", "stanford-pcfg", "--spice-max-words", "5"],
            "--spice-parser, --spice-max-words: not used without spice among the metrics "
            "(cider_d); leave them out",
        ),
    ],
)
def test_a_metric_option_no_metric_of_the_run_reads_is_refused(tmp_path, command, extra, message):
    """They were ignored without a word (exit 0). Refused before any file is read: the
    results file does not exist."""
    missing = str(tmp_path / "results.json")
    code, out, err = _run(command, "--results", missing, *extra)
    assert (code, out, err) == (2, "", f"capeval: error: {message}\n")


@pytest.mark.parametrize("command", ["score", "compare"])
@pytest.mark.parametrize(
    "extra",
    [
        ["--cider-idf", "coco-val2014"],  # the default metrics hold cider_d
        ["--metrics", "coco-caption", "--cider-idf", "corpus", "--spice-max-words", "5"],
        ["--metrics", "bleu_4", "spice", "--spice-parser", "stanford-pcfg"],
    ],
)
def test_a_metric_option_some_metric_of_the_run_reads_is_taken(tmp_path, command, extra):
    """Any metric of the run that reads the option is enough (groups and the default list
    expanded); the run then goes on to read the results file."""
    missing = str(tmp_path / "results.json")
    code, _, err = _run(command, "--results", missing, *extra)
    assert code == 2 and "results.json" in err and "not used" not in err


def test_score_options_at_their_defaults_are_not_taken_for_given(tmp_path):
    """Only an option the command line gave is refused: none of these runs names one."""
    res, ann = _write_coco(tmp_path, [{"candidate_raw": "a dog", "references_raw": ["a dog"]}])
    for metrics in (["bleu_4"], ["rouge_l", "bleu_1"]):
        code, _, err = _run(
            "score", "--results", str(res), "--annotations", str(ann), "--metrics", *metrics
        )
        assert code == 0 and "not used" not in err, err


def test_info_shows_the_shipped_spice_grammar_without_any_jar(tmp_path, monkeypatch):
    monkeypatch.setenv("CAPEVAL_CORENLP_MODELS", str(tmp_path / "absent.jar"))
    code, out, _ = _run("info")
    line = next(x for x in out.splitlines() if x.startswith("SPICE parser"))
    assert code == 0 and " ok " in line and "englishPCFG-3.6.0.npz" in line
    assert "COCO val2014" in line and "absent.jar" not in line


@pytest.mark.slow
@requires_java
def test_cli_matches_pycocoevalcap_end_to_end(tmp_path, monkeypatch):
    """The same COCO files through pycocoevalcap's COCOEvalCap and through ``capeval score``."""
    import pycocoevalcap.eval as coco_eval
    from pycocoevalcap.eval import COCOEvalCap
    from pycocotools.coco import COCO

    from capeval_core.resources import coco_caption_sets

    sets = coco_caption_sets("val", 400)
    images = [{"id": s.image_id} for s in sets]
    anns = [
        {"image_id": s.image_id, "id": 10 * s.image_id + j, "caption": c}
        for s in sets
        for j, c in enumerate(s.references)
    ]
    # candidates shifted by one image, so scores spread over the whole range
    results = [
        {"image_id": s.image_id, "caption": sets[i - 1].candidate} for i, s in enumerate(sets)
    ]
    ann_path, res_path = tmp_path / "captions.json", tmp_path / "results.json"
    ann_path.write_text(json.dumps({"images": images, "annotations": anns}))
    res_path.write_text(json.dumps(results))

    class _Skipped:  # METEOR and SPICE are not part of this check
        def compute_score(self, gts, res):
            return 0.0, [0.0] * len(gts)

        def method(self):
            return "skipped"

    monkeypatch.setattr(coco_eval, "Meteor", _Skipped)
    monkeypatch.setattr(coco_eval, "Spice", _Skipped)
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        coco = COCO(str(ann_path))
        evaluator = COCOEvalCap(coco, coco.loadRes(str(res_path)))
        evaluator.evaluate()
    code, out, _ = _run(
        "score", "--results", str(res_path), "--annotations", str(ann_path), "--json"
    )
    assert code == 0
    ours = json.loads(out)["corpus"]
    names = {
        "bleu_1": "Bleu_1",
        "bleu_2": "Bleu_2",
        "bleu_3": "Bleu_3",
        "bleu_4": "Bleu_4",
        "rouge_l": "ROUGE_L",
        "cider_d": "CIDEr",
    }
    for key, name in names.items():
        assert ours[key] == evaluator.eval[name], key


def test_a_signatures_tokenizer_name_is_taken_back(tmp_path):
    """Every signature says ``tok:ptb-corenlp-3.4.1``; --tokenizer refused it (invalid choice)."""
    cases = golden_small()
    res, ann = _write_coco(tmp_path, cases, with_images=False)
    runs = []
    for tok in ("ptb", "ptb-corenlp-3.4.1"):
        code, out, err = _run(
            "score", "--results", str(res), "--annotations", str(ann), "--tokenizer", tok,
            "--metrics", "bleu_4", "cider_d", "--json",
        )  # fmt: skip
        assert code == 0, err
        runs.append(json.loads(out))
    assert runs[0] == runs[1]


def test_score_names_its_references_in_the_text_json_and_per_item_sidecar(tmp_path):
    """No signature names the data: a saved score said 200 images and not against which
    references (a Karpathy split, COCO val2014, a file). Each output names them, one digest."""
    res, ann = _write_coco(tmp_path, golden_small())
    argv = ["score", "--results", str(res), "--annotations", str(ann)]
    _, text, _ = _run(*argv, "--per-item", str(tmp_path / "items.csv"))
    _, out, _ = _run(*argv, "--json")
    digest = json.loads(out)["references_sha256"]
    assert f"references from {ann.name}, sha256 {digest}" in text.splitlines()[0]
    sidecar = json.loads((tmp_path / "items.signatures.json").read_text(encoding="utf-8"))
    assert (sidecar["references"], sidecar["references_sha256"]) == (ann.name, digest)


@pytest.mark.parametrize("output", [(), ("--json",)], ids=["text", "json"])
def test_score_digests_its_references_once_per_run(tmp_path, monkeypatch, output):
    """score digested the references (every caption, JSON-encoded and hashed) once for the
    table or the JSON and again for the per-item sidecar: once per run now, the same name
    and digest in every output."""
    from capeval_core import coco_files

    calls = []
    describe = coco_files.describe_references

    def counted(*args, **kwargs):
        calls.append(args)
        return describe(*args, **kwargs)

    monkeypatch.setattr(coco_files, "describe_references", counted)
    res, ann = _write_coco(tmp_path, golden_small())
    items = tmp_path / "items.csv"
    argv = ["score", "--results", str(res), "--annotations", str(ann), "--metrics", "bleu_4"]
    code, out, err = _run(*argv, "--per-item", str(items), *output)
    assert code == 0, err
    assert len(calls) == 1
    sidecar = json.loads((tmp_path / "items.signatures.json").read_text(encoding="utf-8"))
    digest = sidecar["references_sha256"]
    if output:
        assert json.loads(out)["references_sha256"] == digest
    else:
        assert f"references from {ann.name}, sha256 {digest}" in out.splitlines()[0]


@pytest.mark.parametrize("module", ["capeval_core", "capeval_core.cli"])
def test_python_dash_m_runs_the_command(module):
    """``python -m capeval_core --help`` said "No module named capeval_core.__main__"."""
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-m", module, "--help"], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage: capeval")


def _help(command):
    """``capeval COMMAND --help`` on one line (argparse wraps it at the terminal's width)."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit):
        main([command, "--help"])
    return " ".join(out.getvalue().split())


def test_perturb_help_names_the_registrys_perturbations_and_graded_formats(monkeypatch):
    """--perturbation said "registry name" and --format "(e.g. graded)": the names come from
    the registries, a perturbation registered later included."""
    from capeval_core.judgments import LOADERS
    from capeval_core.perturb import PERTURBATIONS

    monkeypatch.setenv("COLUMNS", "1000")  # no name broken at its hyphen
    monkeypatch.setitem(PERTURBATIONS, "my_own", PERTURBATIONS["swap"])
    text = _help("perturb")
    assert f"the perturbation: {', '.join(PERTURBATIONS)}" in text and "my_own" in text
    graded = [k for k, loader in LOADERS.items() if loader.kind == "graded"]
    assert f"a graded one ({', '.join(graded)})" in text and "pairwise" in text
    assert "--max-caption-tokens N" in text


def test_help_says_the_defaults_and_what_a_file_must_hold(monkeypatch):
    """compare's --resamples and --seed did not say their defaults, nor that the seed draws
    the intervals too; correlate's --metric-scores named the join columns of two formats."""
    monkeypatch.setenv("COLUMNS", "1000")
    from capeval_core.cli import build_parser

    compare = build_parser()._subparsers._group_actions[0].choices["compare"]
    defaults = {a.dest: a.default for a in compare._actions}
    text = _help("compare")
    assert f"(default {defaults['resamples']:,}, sacrebleu's)" in text
    assert f"(default {defaults['seed']}, sacrebleu's)" in text
    assert "seed of the bootstrap intervals and of both paired tests" in text
    text = _help("correlate")
    for said in ("seg_id and SYS", "image_file and caption_id", "<name>:a and <name>:b",
                 "no row stops the run", "ignored, with a warning"):  # fmt: skip
        assert said in text, said
    text = _help("score")
    assert "captioned twice, is refused" in text and "'<key> left out' column" in text


def test_the_readme_says_which_command_takes_which_metric_option():
    """README gave --embeddings to score, compare, correlate and perturb: only score has it."""
    from pathlib import Path

    from capeval_core.cli import build_parser
    from capeval_core.cli.arguments import METRIC_OPTIONS

    commands = build_parser()._subparsers._group_actions[0].choices
    has = {
        name: [d for d in METRIC_OPTIONS if any(a.dest == d for a in commands[name]._actions)]
        for name in ("score", "compare", "correlate", "perturb")
    }
    assert has == {
        "score": ["cider_idf", "spice_parser", "spice_max_words", "embeddings"],
        "compare": ["cider_idf", "spice_parser", "spice_max_words"],
        "correlate": ["spice_max_words"],
        "perturb": ["cider_idf"],
    }
    readme = " ".join((Path(__file__).parents[2] / "README.md").read_text().split())
    synopsis = "compare takes all but --embeddings, # correlate --spice-max-words alone and "
    assert synopsis + "perturb --cider-idf alone" in readme
    assert "`--embeddings` (`wmd`, `mean`; `score` only)" in readme
    assert "(`capeval score --embeddings PATH`, the one command with that option" in readme


@pytest.mark.parametrize(("given", "used"), [((), None), (("--workers", "0"), 0)])
def test_score_takes_workers_as_compare_and_correlate_do(tmp_path, monkeypatch, given, used):
    """score started worker processes itself past 1,000 images and had no --workers to
    keep a run in one process (compare and correlate have it)."""
    from capeval_core import scoring
    from capeval_core.resources import available_cpus

    asked = []
    score_set = scoring.score_set

    def heard(*args, **kwargs):
        asked.append(kwargs["workers"])
        return score_set(*args, **kwargs)

    monkeypatch.setattr(scoring, "score_set", heard)
    res, ann = _write_coco(tmp_path, golden_small())
    argv = ["score", "--results", str(res), "--annotations", str(ann), "--metrics", "bleu_4"]
    code, _, err = _run(*argv, *given)
    assert code == 0, err
    assert asked == [available_cpus() if used is None else used]


def test_train_i2ce_help_says_what_each_option_is_and_its_default():
    """Most of train-i2ce's options had no help, and none said its default."""
    text = " ".join(_help("train-i2ce").split())
    for option in ("--output", "--vocab-size", "--max-captions", "--decoder-hidden",
                   "--attention", "--epochs", "--batch-size", "--lr", "--seed",
                   "--val-captions", "--log-every"):  # fmt: skip
        upper = option[2:].replace("-", "_").upper()
        after = text.split(f"{option} {upper} ", 1)[1]
        assert "(default: " in after.split(" --", 1)[0], option
