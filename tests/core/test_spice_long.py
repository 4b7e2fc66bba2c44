"""SPICE on long sentences: a paragraph caption reaches the jar as one sentence.

The golden (``tests/golden/spice-long.json.gz``, written by
``tools/spice_oracle/make_long_golden.py`` with spice-1.0.jar and CoreNLP 3.6.0 on Java 17)
holds the jar's SPICE (at coco-caption's ``-Xmx8G``) of ten paragraph captions of 90 to 400
words made from COCO train2014 captions (as annotation ids), and what the jar gives a sentence
whose chart does not fit in its heap.
"""

from __future__ import annotations

import contextlib
import functools
import gzip
import io
import json
import math
import re
import subprocess
import sys
from pathlib import Path

import pytest

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "spice-long.json.gz"


@functools.cache
def golden() -> dict:
    with gzip.open(GOLDEN, "rt", encoding="utf-8") as fh:
        return json.load(fh)


def test_past_the_jars_limit_a_sentence_gets_what_the_jar_gives_it(monkeypatch):
    """The jar, when a sentence's chart does not fit in its heap, gives it CoreNLP's flat tree
    (every word XX), dependencies all on the last word, and no tuple; the other sentences of
    the text are parsed as usual. capeval past its limit (lowered here, so that the golden's
    250-word sentences are past it) gives the same tokens, tree, basic dependencies and tuples.
    """
    from capeval_core.spice.corenlp import corenlp_words, jar_order, sentences, tree_of
    from capeval_core.spice.pcfg import parser as pcfg_parser
    from capeval_core.spice.pcfg.ud import basic_dependencies
    from capeval_core.spice.stanford_pcfg import caption_tuples, load_pipeline

    monkeypatch.setattr(pcfg_parser, "JAR_MAX_WORDS", 200)
    parser = load_pipeline()
    records = golden()["fallback"]
    assert len(records) == 6 and any(len(r["sentences"]) == 2 for r in records)
    for record in records:
        ours = sentences(corenlp_words(record["text"]))
        assert ours == [[t[0] for t in s["tokens"]] for s in record["sentences"]]
        for words, jar in zip(ours, record["sentences"], strict=True):
            tree = parser.parse(words)
            assert str(tree) == jar["tree"]
            tags, heads, labels = basic_dependencies(tree)
            assert tags == [t[1] for t in jar["tokens"]]
            assert (heads, labels) == tree_of(
                len(words), jar["basic"]["edges"], jar["basic"]["roots"]
            )
            if len(words) > 200:
                assert tree.label == "X" and set(tags) == {"XX"}
        assert list(caption_tuples(parser, record["text"])) == jar_order(record["tuples"])


def test_a_long_caption_says_how_far_its_parse_is():
    from capeval_core.progress import listening
    from capeval_core.spice.stanford_pcfg import REPORT_FROM_WORDS, caption_tuples, load_pipeline

    words = ("a man on a red bike rides past two dogs and a cat " * 6).split()
    text = " ".join(words[:REPORT_FROM_WORDS])
    heard: list[str] = []
    with listening(heard.append):
        caption_tuples(load_pipeline(), text)
    assert heard[0] == f"parsing a {REPORT_FROM_WORDS}-word caption, 0 %"
    assert heard[-1] == f"parsing a {REPORT_FROM_WORDS}-word caption, 100 %"
    heard.clear()
    with listening(heard.append):
        caption_tuples(load_pipeline(), " ".join(words[: REPORT_FROM_WORDS - 1]))
    assert heard == []  # a shorter one is quick: nothing said


def test_spice_scoring_passes_a_long_parses_progress_to_the_status_label(tmp_path, monkeypatch):
    """Through the batch engine in this process: the status shows the metric and the parse."""
    from capeval_core import batch
    from capeval_core.metrics import make_batch, metric_class
    from capeval_core.spice.stanford_pcfg import REPORT_FROM_WORDS

    monkeypatch.setenv("CAPEVAL_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("CAPEVAL_SPICE_SHIPPED", "0")
    words = ("a man on a red bike rides past two dogs and a cat " * 6).split()
    cands = [" ".join(words[:REPORT_FROM_WORDS]), "a dog on a mat"]
    refs = [["a man rides a bike past dogs"], ["a dog lies on a mat"]]
    tokenized = make_batch(cands, refs, "ptb")
    labels: list[str] = []
    values: dict = {}
    batch.score_all(
        [("spice", tmp_path / "spice.npz")],
        {"spice": metric_class("spice")(tokenizer="ptb")},
        {},
        "ptb",
        [tokenized],
        lambda m, path, v: values.update(v),
        {},
        "raise",
        pool=None,
        workers=1,
        status=labels.append,
    )
    assert f"spice: parsing a {REPORT_FROM_WORDS}-word caption, 100 %" in labels
    assert values["spice"].shape == (1, 2)


def test_a_deep_tree_of_a_long_sentence_is_converted_within_pythons_recursion_limit(
    monkeypatch,
):
    """A chain of phrases each inside the last makes a tree about as deep as the sentence is
    long; its conversion walks it recursively, with the limit raised for it while it runs."""
    import contextlib
    import inspect

    from capeval_core.spice import stanford_pcfg

    parser = stanford_pcfg.load_pipeline()
    text = "the dog " + "of the man " * 12  # 38 words, a tree 50 levels deep
    expected = stanford_pcfg.caption_tuples(parser, text)
    old = sys.getrecursionlimit()
    try:
        sys.setrecursionlimit(len(inspect.stack()) + 60)
        assert stanford_pcfg.caption_tuples(parser, text) == expected
        assert sys.getrecursionlimit() == len(inspect.stack()) + 60
        monkeypatch.setattr(stanford_pcfg, "_recursion_for", lambda n: contextlib.nullcontext())
        with pytest.raises(RecursionError):
            stanford_pcfg.caption_tuples(parser, text)
    finally:
        sys.setrecursionlimit(old)


def test_the_golden_holds_ten_long_captions_rebuilt_from_train2014():
    """The ten paragraphs (90 to 400 words, three of them 250 or more) are rebuilt from
    train2014 as the golden's jar scored them: the same captions, references and lengths."""
    from tools.spice_oracle.long_captions import LENGTHS, long_items

    records = golden()["long"]
    assert [r["words"] for r in records] == list(LENGTHS)
    assert sum(250 <= n <= 400 for n in LENGTHS) >= 3 and min(LENGTHS) >= 90
    assert "-Xmx8G" in golden()["long_command"]
    for item, record in zip(long_items(), records, strict=True):
        assert item.image_id == record["image_id"]
        assert list(item.candidate_ids) == record["candidate_ids"]
        assert list(item.reference_ids) == record["reference_ids"]
        assert len(item.candidate.split()) == record["words"]
        assert item.paragraph.startswith("The image shows ") and item.paragraph.count(". ") > 5


#: the lengths ``make test`` checks: 163 words is past the 150-word limit capeval once had (a
#: PASCAL-50S candidate's length). The others take from half a minute to minutes each: they are
#: ``long`` (``make test-long``; ``python -m bench spice_long`` checks all ten against the
#: golden too)
MAKE_TEST_WORDS = (90, 120, 163)


def _long_case(words: int):
    marks: tuple = () if words <= 90 else (pytest.mark.slow,)
    if words not in MAKE_TEST_WORDS:
        marks = (*marks, pytest.mark.long)
    return pytest.param(words, marks=marks, id=f"{words}-words")


@pytest.mark.parametrize(
    "words", [_long_case(n) for n in (90, 120, 150, 163, 190, 215, 250, 290, 320, 400)]
)
def test_a_long_caption_gets_the_jars_spice(words, tmp_path, monkeypatch):
    """Each golden paragraph, rebuilt from train2014 and parsed now by capeval: per category
    the jar's counts and F, and the jar's scene-graph tuples of the candidate and of the
    references. The 90-word one runs in the fast
    suite (seconds); the others cost up to minutes each (the cube of the length) and are
    slow; those not in :data:`MAKE_TEST_WORDS` are ``long`` too and left to
    ``make test-long``."""
    from capeval_core.metrics.spice import Spice
    from tools.spice_oracle.long_captions import long_items

    monkeypatch.setenv("CAPEVAL_CACHE_DIR", str(tmp_path))  # parsed now, not read back
    record = next(r for r in golden()["long"] if r["words"] == words)
    item = next(it for it in long_items() if it.image_id == record["image_id"])
    assert len(item.candidate.split()) == words
    details = Spice().score([item.candidate], [list(item.references)]).segments[0].details
    for name, jar in record["scores"].items():
        ours = details.categories[name]
        assert (ours.tp, ours.fp, ours.fn) == (jar["tp"], jar["fp"], jar["fn"]), name
        if jar["f"] is None:
            assert math.isnan(ours.f), name
        else:
            assert ours.f == pytest.approx(jar["f"], abs=1e-12), name
    for graph, key in ((details.candidate, "tuples"), (details.reference, "ref_tuples")):
        ours = sorted(tuple("/".join(sorted(c)) for c in t.concepts) for t in graph)
        jar = sorted(tuple("/".join(sorted(c.split("/"))) for c in t) for t in record[key])
        assert ours == jar, key


def test_a_workers_long_work_reaches_the_parent_named_after_its_metric():
    """In a pool's worker nobody listens: what the work reports goes to the parent's queue,
    named after the metric; the parent hands the latest message to its status label."""
    import queue

    from capeval_core import batch, progress

    channel: queue.Queue = queue.Queue()
    progress.worker_channel(channel)
    try:
        say = "parsing a 90-word caption, 5 %"
        assert batch._shared_part("spice", lambda: progress.report(say)) is None
        progress.report("parsing a 90-word caption, 50 %")  # no metric known: as it is
    finally:
        progress.worker_channel(None)
    progress.report("nobody hears this")
    assert list(channel.queue) == [
        "spice: parsing a 90-word caption, 5 %",
        "parsing a 90-word caption, 50 %",
    ]
    heard: list[str] = []
    progress.drain(channel, heard.append)
    assert heard == ["parsing a 90-word caption, 50 %"] and channel.empty()


#: a caption just long enough to say how far its parse is, and a short one
LONG_CAPTION = " ".join(("a man on a red bike rides past two dogs and a cat " * 6).split()[:60])
SMALL_SET = [
    {"image_id": 1, "caption": LONG_CAPTION, "refs": ["a man rides a bike past dogs"]},
    {"image_id": 2, "caption": "a dog on a mat", "refs": ["a dog lies on a mat"]},
]
#: what the bar says while the long caption parses
PARSING = re.compile(r"spice: parsing a 60-word caption, \d+ %")


def _score_files(folder: Path) -> list[str]:
    """``capeval score`` arguments for :data:`SMALL_SET` written to ``folder``."""
    from capeval_core.spice.stanford_pcfg import REPORT_FROM_WORDS

    assert len(LONG_CAPTION.split()) == REPORT_FROM_WORDS
    results, annotations = folder / "results.json", folder / "captions.json"
    results.write_text(json.dumps([{k: s[k] for k in ("image_id", "caption")} for s in SMALL_SET]))
    anns = [
        {"image_id": s["image_id"], "id": 10 * s["image_id"] + k, "caption": r}
        for s in SMALL_SET
        for k, r in enumerate(s["refs"])
    ]
    annotations.write_text(json.dumps({"annotations": anns}))
    return ["score", "--results", str(results), "--annotations", str(annotations),
            "--metrics", "bleu_4", "spice", "--json"]  # fmt: skip


class _Terminal(io.StringIO):
    """stderr as a terminal shows it: the bar is redrawn in place (a file gets lines)."""

    def isatty(self) -> bool:
        return True


def _main(argv: list[str], err: io.StringIO | None = None) -> tuple[int, str, str]:
    from capeval_core.cli import main

    out, err = io.StringIO(), _Terminal() if err is None else err
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


def test_a_long_parses_progress_in_a_log_file_is_lines_not_carriage_returns(tmp_path, monkeypatch):
    """stderr redirected to a file (a log, a CI job) kept every redraw of the bar after a
    carriage return, one endless line; it gets the bar's state as lines of their own (here
    every redraw: the interval set to 0), and the last one when the bar closes."""
    from capeval_core import progress

    monkeypatch.setenv("CAPEVAL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("CAPEVAL_SPICE_SHIPPED", "0")
    monkeypatch.setattr(progress, "LOG_INTERVAL", 0.0)
    code, _, err = _main(_score_files(tmp_path), err=io.StringIO())
    assert code == 0, err
    assert "\r" not in err
    lines = err.splitlines()
    assert any("spice: parsing a 60-word caption" in line for line in lines), err
    assert len(lines) == len(set(lines)) > 1  # each state once, on its own line


def test_a_bar_a_terminal_clears_ends_on_its_last_state_in_a_log(monkeypatch) -> None:
    """A bar that leaves nothing on a terminal (the drop-in's) left a log on an interval's
    line, never its end: in a log it ends on its last state."""
    from capeval_core import progress

    monkeypatch.setattr(progress, "LOG_INTERVAL", 3600.0)
    err = io.StringIO()
    with contextlib.redirect_stderr(err), progress.StderrBar("inner", "step", shown=True,
                                                             leave=False) as bar:  # fmt: skip
        for done in (1, 2, 3):
            bar(done, 3, f"spice: {done} of 3")
    assert err.getvalue().count("\n") == 1 and "spice: 3 of 3" in err.getvalue()


def test_capeval_score_shows_a_long_parses_progress_on_stderr_only(tmp_path, monkeypatch):
    """A small set (no bar otherwise) scored in this process: while the 60-word caption parses
    stderr shows the bar with the metric and how far the parse is; stdout (the JSON) is what a
    run that parses nothing prints (the same set again, its parses now cached), whose stderr
    stays empty."""
    monkeypatch.setenv("CAPEVAL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("CAPEVAL_SPICE_SHIPPED", "0")
    argv = _score_files(tmp_path)
    code, out, err = _main(argv)
    assert code == 0, err
    assert "spice: parsing a 60-word caption, 100 %" in err and PARSING.search(err)
    assert json.loads(out)["corpus"]["spice"] > 0
    code, again, quiet = _main(argv)
    assert code == 0 and again == out and quiet == ""


#: ``capeval score`` with the batch engine's threshold lowered so that two items go to two
#: worker processes (the long caption's parse among their work)
WORKER_SCRIPT = """
import sys
from capeval_core import batch, progress, resources, scoring
from capeval_core.cli import main

progress.LOG_INTERVAL = 0  # stderr is a pipe: every state of the bar as a line

batch.MIN_PART = 1
scoring.available_cpus = resources.available_cpus = lambda: 2  # never capped below two
in_workers = batch.score_in_workers


def said(*args, **kwargs):
    print("scored in worker processes", file=sys.stderr)
    return in_workers(*args, **kwargs)


batch.score_in_workers = said
sys.exit(main(sys.argv[1:]))
"""


def test_capeval_score_shows_a_long_parse_in_a_worker_on_stderr_only(tmp_path, monkeypatch):
    """The same set scored in two worker processes: the parse in a worker reaches the parent's
    bar on stderr, named after SPICE; stdout is the in-process run's JSON."""
    monkeypatch.setenv("CAPEVAL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("CAPEVAL_SPICE_SHIPPED", "0")
    argv = _score_files(tmp_path)
    done = subprocess.run(
        [sys.executable, "-c", WORKER_SCRIPT, *argv], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert "scored in worker processes" in done.stderr and PARSING.search(done.stderr)
    code, out, quiet = _main(argv)  # in this process, the parses cached
    assert code == 0 and quiet == "" and done.stdout == out


class _Coco:
    """What ``COCOEvalCap`` reads of a pycocotools ``COCO``."""

    def __init__(self, anns: dict) -> None:
        self.imgToAnns = anns

    def getImgIds(self) -> list:
        return list(self.imgToAnns)


def test_the_drop_ins_evaluate_shows_a_long_parse_on_stderr_and_prints_pycocoevalcaps_lines(
    tmp_path, monkeypatch
):
    """``COCOEvalCap.evaluate()``: stdout keeps pycocoevalcap's lines (the same as a run that
    parses nothing); the long parse is shown on stderr, as the jar writes its own there."""
    from capeval_core.pycocoevalcap.eval import COCOEvalCap
    from capeval_core.spice import parse

    # a parse cache of its own (the other caches, METEOR's paraphrase index, are the user's)
    monkeypatch.setattr(parse, "parse_cache_path", lambda: tmp_path / "spice-parses.sqlite")
    monkeypatch.setenv("CAPEVAL_SPICE_SHIPPED", "0")
    gts = _Coco({s["image_id"]: [{"caption": r} for r in s["refs"]] for s in SMALL_SET})
    res = _Coco({s["image_id"]: [{"caption": s["caption"]}] for s in SMALL_SET})
    runs = []
    for _ in range(2):  # parsed, then read from the parse cache
        out, err = io.StringIO(), _Terminal()
        ev = COCOEvalCap(gts, res)
        ev.workers = 0
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            ev.evaluate()
        runs.append((out.getvalue(), err.getvalue(), ev.eval))
    (out, err, scores), (again, quiet, scores_again) = runs
    assert "spice: parsing a 60-word caption, 100 %" in err and quiet == ""
    assert out == again and out.startswith("tokenization...\nsetting up scorers...\n")
    assert "SPICE: " in out and "%" not in out and scores == scores_again
