"""``--option METRIC.NAME=VALUE``: any option a metric's Config takes, on score, compare and
correlate, so that a library signature with a non-default option has a command."""

from __future__ import annotations

import contextlib
import dataclasses
import io
import json

import pytest

from capeval_core.cli import main
from capeval_core.metrics import METRICS
from capeval_core.metrics.cider import CiderD
from capeval_core.metrics.rouge import RougeL

CAPTIONS = {
    1: ("a dog runs on the grass", ["a dog running on grass", "a brown dog on the lawn"]),
    2: ("a man riding a horse on a beach", ["a man rides a horse", "a person on a horse"]),
    3: ("two cats sleep on a red sofa", ["two cats asleep on a couch", "cats on a red sofa"]),
    4: ("a plate of food on a table", ["a plate with food on it", "food on a wooden table"]),
}


@pytest.fixture(autouse=True)
def _own_score_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("CAPEVAL_SCORES_CACHE_DIR", str(tmp_path / "scores"))


def _run(*argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main([str(a) for a in argv])
        except SystemExit as exc:  # argparse's refusals
            code = exc.code
    return code, out.getvalue(), err.getvalue()


def _files(tmp_path):
    res = tmp_path / "res.json"
    res.write_text(json.dumps([{"image_id": i, "caption": c} for i, (c, _) in CAPTIONS.items()]))
    refs = tmp_path / "refs.json"
    refs.write_text(json.dumps({str(i): r for i, (_, r) in CAPTIONS.items()}))
    return res, refs


def test_score_takes_a_metrics_options_as_the_library_does(tmp_path):
    res, refs = _files(tmp_path)
    argv = ["score", "--results", res, "--annotations", refs, "--metrics", "rouge_l", "cider_d",
            "--tokenizer", "whitespace", "--json"]  # fmt: skip
    code, out, err = _run(*argv, "--option", "rouge_l.beta=1.0", "--option", "cider_d.sigma=8")
    assert code == 0, err
    data = json.loads(out)
    cands = [c for c, _ in CAPTIONS.values()]
    refs_ = [r for _, r in CAPTIONS.values()]
    rouge = RougeL(tokenizer="whitespace", beta=1.0).score(cands, refs_)
    cider = CiderD(tokenizer="whitespace", sigma=8.0).score(cands, refs_)
    assert data["corpus"]["rouge_l"] == pytest.approx(rouge.value, abs=1e-12)
    assert data["corpus"]["cider_d"] == pytest.approx(cider.value, abs=1e-12)
    assert data["signatures"]["rouge_l"] == str(rouge.signature) and "beta:1.0" in out
    assert data["signatures"]["cider_d"] == str(cider.signature) and "sigma:8.0" in out
    code, out, _ = _run(*argv)  # without: the defaults, another number
    assert json.loads(out)["corpus"]["rouge_l"] != pytest.approx(rouge.value, abs=1e-6)


@pytest.mark.parametrize(
    ("option", "said"),
    [
        ("rouge_l.beta=x", "rouge_l.beta='x': expected a number"),
        ("rouge_l.bet=1", "rouge_l has no option 'bet' (its options: beta)"),
        ("rouge_l", "expected METRIC.NAME=VALUE"),
        ("nope.x=1", "unknown metric 'nope'"),
        ("cider_d.idf=corpus", "--option cider_d.idf: use --cider-idf"),
        ("rouge_l.beta=1_0", "rouge_l.beta='1_0': expected a number"),  # float() reads 10
        ("meteor.alpha=2", "meteor.alpha='2': `alpha` must be a finite number"),
        ("wmd.normalize=maybe", "wmd.normalize='maybe': expected true or false"),
        ("rouge_l.beta=inf", "rouge_l.beta='inf': expected finite numbers"),
    ],
)
def test_a_bad_option_is_one_line_and_exit_2(tmp_path, option, said):
    res, refs = _files(tmp_path)
    code, out, err = _run("score", "--results", res, "--annotations", refs, "--metrics",
                          "rouge_l", "meteor", "wmd", "--option", option)  # fmt: skip
    assert code == 2 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and said in lines[0], err


def test_an_option_of_a_metric_not_scored_is_refused_before_any_file_is_read(tmp_path):
    code, _, err = _run("score", "--results", tmp_path / "none.json", "--metrics", "rouge_l",
                        "--option", "meteor.alpha=0.5")  # fmt: skip
    assert code == 2
    assert (
        err.strip()
        == "capeval: error: --option meteor.alpha: meteor is not among the metrics (rouge_l)"
    )
    res, refs = _files(tmp_path)
    code, _, err = _run("score", "--results", res, "--annotations", refs, "--metrics", "rouge_l",
                        "--option", "rouge_l.beta=1", "--option", "rouge_l.beta=2")  # fmt: skip
    assert code == 2 and "--option rouge_l.beta given twice, with two values" in err


def test_compare_and_correlate_sign_the_option(tmp_path):
    res, refs = _files(tmp_path)
    other = tmp_path / "other.json"
    other.write_text(
        json.dumps([{"image_id": i, "caption": r[0]} for i, (_, r) in CAPTIONS.items()])
    )
    code, out, err = _run("compare", "--annotations", refs, "--results", res, other, "--metrics",
                          "rouge_l", "--resamples", 10, "--paired", "bs", "--json", "-",
                          "--option", "rouge_l.beta=2.5")  # fmt: skip
    assert code == 0, err
    assert "|beta:2.5|" in json.loads(out)["signatures"]["rouge_l"]
    graded = tmp_path / "g.csv"
    graded.write_text("id,candidate,references,score\n" + "".join(
        f"{i},{c},{'|||'.join(r)},{i % 3}\n" for i, (c, r) in CAPTIONS.items()
    ))  # fmt: skip
    code, out, err = _run("correlate", "--judgments", graded, "--format", "graded", "--metrics",
                          "rouge_l", "--json", "-", "--option", "rouge_l.beta=2.5")  # fmt: skip
    assert code == 0, err
    assert "|beta:2.5|" in json.loads(out)["signatures"]["rouge_l"]


def test_metrics_options_lists_every_option_of_every_metric():
    code, out, _ = _run("metrics", "--options")
    assert code == 0
    names = [line.split()[0] for line in out.splitlines()]
    expected = [f"{k}.{f.name}" for k, c in METRICS.items() for f in dataclasses.fields(c.Config)]
    assert names == expected and "rouge_l.beta" in names
    assert "default 1.2" in next(line for line in out.splitlines() if line.startswith("rouge_l."))


def test_options_that_need_each_other_are_checked_together(tmp_path):
    """METEOR's task=custom needs its parameters beside it: each option was checked alone,
    so a custom task printed in a signature could not be given back on the command line."""
    from capeval_core import score

    res, refs = _files(tmp_path)
    params = {"alpha": 0.5, "beta": 1.5, "gamma": 0.35, "delta": 0.55}
    options = [f"meteor.{k}={v}" for k, v in params.items()]
    argv = ["score", "--results", res, "--annotations", refs, "--metrics", "meteor",
            "--tokenizer", "whitespace", "--json", "--option", "meteor.task=custom",
            "--option", "meteor.weights=1.0,0.2,0.6,0.8",
            "--option", " meteor . alpha =0.5"]  # fmt: skip
    for option in options[1:]:
        argv += ["--option", option]
    code, out, err = _run(*argv)
    assert code == 0, err
    library = score(
        "meteor",
        [c for c, _ in CAPTIONS.values()],
        [r for _, r in CAPTIONS.values()],
        tokenizer="whitespace",
        task="custom",
        weights=(1.0, 0.2, 0.6, 0.8),
        **params,
    )
    assert json.loads(out)["corpus"]["meteor"] == library.value
    code, _, err = _run(*argv[:10], "--option", "meteor.task=custom")  # without them
    assert code == 2 and "--option meteor.task='custom': `task` 'custom' takes every" in err


def test_correlate_takes_the_options_it_has_no_flag_for(tmp_path):
    """correlate has no --cider-idf: --option cider_d.idf pointed to that flag anyway."""
    graded = tmp_path / "g.csv"
    graded.write_text("id,candidate,references,score\n" + "".join(
        f"{i},{c},{'|||'.join(r)},{i % 3}\n" for i, (c, r) in CAPTIONS.items()
    ))  # fmt: skip
    code, out, err = _run("correlate", "--judgments", graded, "--format", "graded",
                          "--metrics", "cider_d", "--json", "-",
                          "--option", "cider_d.idf=coco-val2014")  # fmt: skip
    assert code == 0, err
    assert "|idf:coco-val2014|" in json.loads(out)["signatures"]["cider_d"]
    code, _, err = _run("correlate", "--judgments", graded, "--format", "graded", "--metrics",
                        "spice", "--option", "spice.max_sentence_words=90")  # fmt: skip
    assert code == 2 and "--option spice.max_sentence_words: use --spice-max-words" in err
