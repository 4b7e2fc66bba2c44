"""One caption never stops a dataset (issue 41): an item a metric cannot score (a limit the
user set, a caption the parser refuses) is missing for that metric with its reason; every
other item and metric is scored; the CLI, the JSON and the reports say how many items were
left out and which; correlations and paired tests use the items every compared metric
scored; cached reruns keep the missing values and their reasons."""

from __future__ import annotations

import dataclasses
import json
import math
import warnings

import numpy as np
import pytest

from capeval_core import score_many
from capeval_core.cli import main
from capeval_core.errors import InputError, ItemsLeftOutWarning, OptionError
from capeval_core.metrics import make_batch
from capeval_core.metrics.bleu import Bleu
from capeval_core.metrics.cider import CiderD
from capeval_core.metrics.meteor import Meteor
from capeval_core.metrics.spice import Spice
from capeval_core.resources import coco_caption_sets
from tests.conftest import requires_java

#: a made-up caption of one 100-word sentence (the kind a detailed captioner writes)
LONG = " ".join(["a man and a dog"] * 20)
#: over every sentence of the COCO captions used here (24 words at most), under LONG
LIMIT = 60
SPICE_LIMIT = {"spice": {"max_sentence_words": LIMIT}}
#: the reason SPICE gives for LONG
OVER = f"a sentence of 100 words, over the limit of {LIMIT} (max_sentence_words)"
#: the same on the command line, in its flag's words
OVER_CLI = OVER.replace("(max_sentence_words)", "(--spice-max-words)")


@pytest.fixture(autouse=True)
def _own_score_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("CAPEVAL_SCORES_CACHE_DIR", str(tmp_path / "scores"))


def _sets(n: int = 30):
    return coco_caption_sets("val", n)


def _dataset(n: int = 30, long_at: tuple[int, ...] = (3,)):
    sets = _sets(n)
    cands = [LONG if i in long_at else s.candidate for i, s in enumerate(sets)]
    refs = [list(s.references) for s in sets]
    return sets, cands, refs


# -- the metric interface ------------------------------------------------------------------------


def test_an_item_over_the_users_limit_is_missing_and_every_other_item_is_scored():
    _, cands, refs = _dataset()
    with pytest.warns(ItemsLeftOutWarning, match=r"SPICE left out 1 of 30 items .*: 3 \("):
        limited = Spice(max_sentence_words=LIMIT).score(cands, refs)
    assert limited.missing == {3: f"candidate: {OVER}"}
    assert math.isnan(limited.segments[3].value) and limited.segments[3].details is None
    # every other item: the value it gets with no limit at all, bit for bit
    full = Spice().score(cands, refs)
    kept = [i for i in range(len(cands)) if i != 3]
    assert [limited.segments[i].value for i in kept] == [full.segments[i].value for i in kept]
    # the corpus value is SPICE's on the other items: the mean over them
    alone = Spice().score([cands[i] for i in kept], [refs[i] for i in kept])
    assert limited.value == alone.value
    assert limited.details.images == alone.details.images
    assert "1 missing" in str(limited) and "missing" in limited.to_frame().columns
    # the limit is in the signature; without it the signature is what it always was
    assert f"max_sentence_words:{LIMIT}" in str(limited.signature)
    assert "max_sentence_words" not in str(full.signature)
    # the other metrics score every item
    results = score_many(
        ["bleu_4", "rouge_l", "spice"], cands, refs, options=SPICE_LIMIT, warn=False
    )
    assert results["bleu_4"].missing == {} and results["rouge_l"].missing == {}
    assert results["spice"].missing.keys() == {3}


def test_a_reference_over_the_limit_leaves_its_item_out():
    _, cands, refs = _dataset(8, long_at=())
    refs[5] = [*refs[5], LONG]
    result = Spice(max_sentence_words=LIMIT).score_batch(make_batch(cands, refs), warn=False)
    assert result.missing == {5: f"reference {len(refs[5])}: {OVER}"}


def test_no_item_left_means_no_value():
    result = Spice(max_sentence_words=5).score_batch(make_batch([LONG], [["a dog"]]), warn=False)
    assert result.missing.keys() == {0} and math.isnan(result.value)


@pytest.mark.parametrize("bad", [0, -3, 2.5, True, "150"])
def test_the_limit_is_a_positive_whole_number(bad):
    with pytest.raises(OptionError, match="max_sentence_words"):
        Spice(max_sentence_words=bad)


def test_a_caption_the_parser_refuses_is_missing_and_the_batch_goes_on(monkeypatch):
    """A parser that refuses one caption (an InputError for it) costs that item only: the
    captions are parsed again in halves until the refused one is alone."""
    from capeval_core.spice.parse import CaptionParser

    _, cands, refs = _dataset(12, long_at=(7,))
    real = CaptionParser.parse

    def refusing(self, texts):
        texts = list(texts)
        if any(t.startswith("a man and a dog a man") for t in texts):
            raise InputError("this parser takes no caption like that")
        return real(self, texts)

    monkeypatch.setattr(CaptionParser, "parse", refusing)
    result = Spice().score_batch(make_batch(cands, refs), warn=False)
    assert result.missing.keys() == {7}
    assert "parser refuses it: this parser takes no caption like that" in result.missing[7]
    kept = [i for i in range(12) if i != 7]
    monkeypatch.setattr(CaptionParser, "parse", real)
    alone = Spice().score([cands[i] for i in kept], [refs[i] for i in kept])
    assert result.value == alone.value


def _leaving_out(cls, left: dict[int, str]):
    """``cls`` made to leave ``left`` out, as a metric with a per-item limit would."""

    class LeavesOut(cls):
        def unscorable(self, batch, prepared):
            return left

    return LeavesOut


@pytest.mark.parametrize("cls", [Bleu, CiderD], ids=["bleu", "cider_d"])  # METEOR: below
def test_pooled_metrics_without_an_item_are_the_metric_on_the_others(cls):
    """What a coco-caption user gets by removing the item from the files: BLEU's and
    METEOR's statistics pooled over the other items, CIDEr-D's document frequencies from
    their references (coco-caption's own numbers on the smaller set, as capeval gives them)."""
    _, cands, refs = _dataset(20, long_at=())
    left = {4: "a limit", 11: "another limit"}
    result = _leaving_out(cls, left)().score_batch(make_batch(cands, refs), warn=False)
    kept = [i for i in range(20) if i not in left]
    alone = cls().score([cands[i] for i in kept], [refs[i] for i in kept])
    assert result.corpus == alone.corpus
    assert [result.segments[i].value for i in kept] == [s.value for s in alone.segments]
    assert result.missing == left
    # resampling covers the scored items, and recomputes the corpus value bit for bit
    resampled = cls().resampling(result, make_batch(cands, refs))
    assert len(resampled) == len(kept) and resampled.point() == dict(result.corpus)


@pytest.mark.slow
@requires_java
def test_pooled_values_without_items_are_coco_captions_on_the_files_without_them():
    """The oracle: pycocoevalcap 1.2 (Java PTB tokenizer, BLEU, CIDEr-D, the METEOR 1.5 jar)
    run on the files with the left-out items removed gives the corpus values capeval gives
    when those items are left out."""
    import contextlib
    import io

    from pycocoevalcap.bleu.bleu import Bleu as CocoBleu
    from pycocoevalcap.cider.cider import Cider as CocoCider
    from pycocoevalcap.meteor.meteor import Meteor as CocoMeteor
    from pycocoevalcap.tokenizer.ptbtokenizer import PTBTokenizer

    _, cands, refs = _dataset(40, long_at=())
    left = {2: "a limit", 17: "a limit", 33: "a limit"}
    kept = [i for i in range(40) if i not in left]
    gts = {i: [{"caption": r} for r in refs[i]] for i in kept}
    res = {i: [{"caption": cands[i]}] for i in kept}
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        tok = PTBTokenizer()
        gts_t, res_t = tok.tokenize(gts), tok.tokenize(res)
        bleu, _ = CocoBleu(4).compute_score(gts_t, res_t)
        meteor, _ = CocoMeteor().compute_score(gts_t, res_t)
    cider, _ = CocoCider().compute_score(gts_t, res_t)
    batch = make_batch(cands, refs)
    got = {
        cls.key: _leaving_out(cls, left)().score_batch(batch, warn=False)
        for cls in (Bleu, CiderD, Meteor)
    }
    # bit for bit (measured: every difference 0.0)
    assert got["bleu"].corpus == {f"bleu_{k + 1}": bleu[k] for k in range(4)}
    assert got["cider_d"].value == cider and got["meteor"].value == meteor


# -- the engine and its cache ----------------------------------------------------------------------


def test_a_damaged_reasons_array_is_discarded_and_recomputed(tmp_path):
    from capeval_core import batch
    from capeval_core.errors import DamagedCacheWarning

    path = tmp_path / "entry.npz"
    batch.save_entry(path, {"spice": np.array([[0.5]]), batch.MISSING: np.array([[1.0]])})
    with pytest.warns(DamagedCacheWarning, match="missing:reason"):
        assert batch.load_entry(path, ["spice"], (1, 1)) is None
    assert not path.exists()
    batch.save_entry(path, {"spice": np.array([[np.nan]]), batch.MISSING: np.array([["why"]])})
    assert batch.load_entry(path, ["spice"], (1, 1))[batch.MISSING].tolist() == [["why"]]


def test_missing_values_and_reasons_survive_the_cache_and_parts():
    from capeval_core import batch

    parts = [
        {"spice": np.array([[0.5, 0.25]])},
        {"spice": np.array([[np.nan, 0.75]]), batch.MISSING: np.array([["too long", ""]])},
    ]
    merged = batch.merge_parts(parts)
    assert merged[batch.MISSING].tolist() == [["", "", "too long", ""]]
    np.testing.assert_array_equal(merged["spice"], [[0.5, 0.25, np.nan, 0.75]])
    assert batch.merge_parts(parts[:1]).keys() == {"spice"}


def test_judgments_left_out_items_correlate_on_the_common_items_and_stay_cached():
    from capeval_core.judgments.analysis import correlation_report
    from capeval_core.judgments.demo import demo_graded
    from capeval_core.judgments.scoring import (
        judgments_left_out_json,
        left_out_lines,
        on_common_items,
        score_judgments,
    )

    js = demo_graded(8)
    items = list(js.items)
    items[3] = dataclasses.replace(items[3], candidate=LONG)
    js = dataclasses.replace(js, items=tuple(items), content_digest="", items_digest="")
    keys = ["bleu_4", "spice"]
    scores = score_judgments(js, keys, options=SPICE_LIMIT)
    assert scores.missing == {"spice": {3: f"candidate: {OVER}"}}
    assert math.isnan(scores.values["spice"][3]) and np.isfinite(scores.values["bleu_4"]).all()
    lines = left_out_lines(js, scores)
    assert lines[0].startswith(f"SPICE left out 1 of {len(js)} items (not scored): 42|s3 (")
    assert lines[-1].endswith(f"use the {len(js) - 1} items every metric scored")
    assert judgments_left_out_json(js, scores)["ids"] == ["42|s3"]
    common, on = on_common_items(js, scores)
    assert len(common) == len(js) - 1 and common.content_digest != js.content_digest
    report = correlation_report(common.human(), on.values, n_resamples=20, use_cache=False)
    assert set(report.table["n"]) == {len(js) - 1}
    kept = [i for i in range(len(js)) if i != 3]
    np.testing.assert_array_equal(on.values["bleu_4"], scores.values["bleu_4"][kept])
    # a cached rerun: the same values, the same missing item and reason
    again = score_judgments(js, keys, options=SPICE_LIMIT)
    assert all(again.from_cache.values()) and again.missing == scores.missing
    np.testing.assert_array_equal(again.values["spice"], scores.values["spice"])
    # nothing left out: the same objects
    plain = score_judgments(js, ["bleu_4"])
    assert on_common_items(js, plain) == (js, plain) and left_out_lines(js, plain) == []


def test_pairwise_a_pair_is_left_out_when_either_caption_is():
    from capeval_core.judgments.demo import demo_pairwise
    from capeval_core.judgments.scoring import on_common_items, score_judgments
    from capeval_core.stats import pairwise_accuracy

    pw = demo_pairwise(12)
    items = list(pw.items)
    items[2] = dataclasses.replace(items[2], candidate_b=LONG)
    pw = dataclasses.replace(pw, items=tuple(items), content_digest="", items_digest="")
    scores = score_judgments(pw, ["bleu_4", "spice"], options=SPICE_LIMIT)
    assert list(scores.missing["spice"]) == [2]
    assert scores.missing["spice"][2].startswith("caption b: a sentence of 100 words")
    common, on = on_common_items(pw, scores)
    assert len(common) == len(pw) - 1 and on.values_a["spice"].shape[1] == len(pw) - 1
    result = pairwise_accuracy(
        on.values_a["spice"], on.values_b["spice"], common.preferences(), common.categories()
    )
    assert result.n <= len(pw) - 1 and all(math.isfinite(v) for v in result.as_dict().values())


def test_workers_keep_the_reasons_of_the_parts(monkeypatch):
    """Scored in parts by worker processes, with the long caption in one part only: the
    values and reasons are the in-process ones."""
    import capeval_core.batch as batch
    from capeval_core.judgments.demo import demo_graded
    from capeval_core.judgments.scoring import score_judgments

    monkeypatch.setattr(batch, "MIN_PART", 4)
    js = demo_graded(2)
    items = list(js.items)
    items[1] = dataclasses.replace(items[1], candidate=LONG)
    js = dataclasses.replace(js, items=tuple(items), content_digest="", items_digest="")
    serial = score_judgments(js, ["spice"], options=SPICE_LIMIT, use_cache=False)
    parallel = score_judgments(js, ["spice"], options=SPICE_LIMIT, use_cache=False, workers=2)
    assert parallel.missing == serial.missing and list(serial.missing["spice"]) == [1]
    np.testing.assert_array_equal(parallel.values["spice"], serial.values["spice"])


# -- systems ---------------------------------------------------------------------------------------


def _systems(n: int = 30):
    from capeval_core.systems import References, load_systems

    sets = _sets(n)
    systems = {
        "a": [s.candidate for s in sets],
        "b": [LONG if i == 3 else s.references[0] for i, s in enumerate(sets)],
        "c": [LONG if i == 5 else s.references[1] for i, s in enumerate(sets)],
    }
    refs = References("test", {s.image_id: tuple(s.references[2:]) for s in sets}, None)
    uploads = []
    for name, caps in systems.items():
        rows = [{"image_id": s.image_id, "caption": c} for s, c in zip(sets, caps, strict=True)]
        if name == "c":  # its own record order: scored (and summed) in it, as capeval score
            rows.reverse()
        uploads.append((f"{name}.json", json.dumps(rows).encode()))
    return sets, systems, load_systems(uploads, refs)


def test_systems_compare_a_metric_on_the_images_every_system_scored():
    from capeval_core.systems import compare_systems, score_systems
    from capeval_core.systems_table import paper_table

    sets, systems, data = _systems()
    keys = ["bleu_4", "spice"]
    scores = score_systems(data, keys, options=SPICE_LIMIT)
    ids = data.image_ids
    assert scores.left_out("spice") == {
        "b": {ids[3]: f"candidate: {OVER}"},
        "c": {ids[5]: f"candidate: {OVER}"},
    }
    assert scores.left_out("bleu_4") == {}
    refs = [list(s.references[2:]) for s in sets]
    assert data.order(2) is not None  # c's file lists the images backwards
    for name, caps in systems.items():  # each system's value: capeval score on its file
        order = list(range(len(sets)))[:: -1 if name == "c" else 1]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ItemsLeftOutWarning)
            alone = Spice(max_sentence_words=LIMIT).score(
                [caps[i] for i in order], [refs[i] for i in order]
            )
        assert scores.corpus[name]["spice"] == alone.value
    compared = [i for i in range(len(sets)) if i not in (3, 5)]
    assert scores.compared == {"spice": tuple(compared)}
    comparison = compare_systems(scores, n_resamples=100, n_trials=100)
    # SPICE is compared on the images every system scored: values, intervals, tests
    for name, caps in systems.items():
        on = Spice().score([caps[i] for i in compared], [refs[i] for i in compared])
        assert comparison.corpus[name]["spice"] == on.value
        low, high = comparison.ci[name]["spice"]
        assert low <= on.value <= high
    delta = comparison.corpus["b"]["spice"] - comparison.corpus["a"]["spice"]
    assert comparison.paired["spice"]["b"].delta == pytest.approx(delta, abs=1e-12)
    assert comparison.corpus["b"]["bleu_4"] == scores.corpus["b"]["bleu_4"]  # all images
    assert comparison.n_compared("spice") == len(compared) and comparison.n_compared("bleu_4") == 30
    out = comparison.as_dict()
    assert out["left_out"]["spice"]["n"] == 2
    assert out["left_out"]["spice"]["image_ids"] == [ids[3], ids[5]]
    assert out["left_out"]["spice"]["n_compared"] == len(compared)
    assert {(r["system"], r["image_id"]) for r in out["left_out"]["spice"]["reasons"]} == {
        ("b", ids[3]),
        ("c", ids[5]),
    }
    json.dumps(out, allow_nan=False)
    text = comparison.format_table()
    assert f"SPICE: compared on the {len(compared)} of 30 images every system's SPICE" in text
    assert f"SPICE of b left out 1 of 30 images (not scored): {ids[3]} (candidate:" in text
    notes = " ".join(paper_table(comparison).notes)
    assert f"SPICE on {len(compared)} (2 left out)" in notes
    warning = comparison.left_out_warnings()
    assert len(warning) == 1 and f"image ids {ids[3]}, {ids[5]}" in warning[0]
    # shown=-1 listed all but the last id and said "(-1 more)"
    for shown in (-1, 2.5, True):
        with pytest.raises(InputError, match="`shown` must be a whole number"):
            comparison.left_out_warnings(shown)
        with pytest.raises(InputError, match="`shown` must be a whole number"):
            comparison.left_out_lines(shown)
    frame = scores.item_frame()
    assert frame["b: spice left out"].iloc[3].startswith("candidate:")
    # a cached rerun keeps the missing images and their reasons
    again = score_systems(data, keys, options=SPICE_LIMIT)
    assert all(again.from_cache.values()) and again.missing == scores.missing
    assert compare_systems(again, n_resamples=100, n_trials=100).ci == comparison.ci


def test_systems_where_a_metric_scored_nothing_in_common():
    from capeval_core.systems import compare_systems, score_systems
    from capeval_core.systems_table import paper_table

    _, _, data = _systems(6)
    scores = score_systems(data, ["spice"], options={"spice": {"max_sentence_words": 1}})
    comparison = compare_systems(scores, n_resamples=50, n_trials=50)
    assert comparison.n_compared("spice") == 0
    assert math.isnan(comparison.corpus["a"]["spice"])
    assert math.isnan(comparison.paired["spice"]["b"].p_value)
    assert "compared on the 0 of 6 images" in comparison.format_table()
    assert "SPICE on 0 (6 left out)" in " ".join(paper_table(comparison).notes)
    json.dumps(comparison.as_dict(), allow_nan=False)


def test_a_system_whose_every_image_is_left_out_keeps_the_others_values():
    """One system's captions all over the limit, scored in one batch with the others (their
    SPICE categories' statistics beside): that system has no value, the others keep theirs."""
    from capeval_core.systems import References, compare_systems, load_systems, score_systems

    sets = _sets(8)
    refs = References("test", {s.image_id: tuple(s.references[2:]) for s in sets}, None)
    rows = {
        "a": [s.candidate for s in sets],
        "b": [LONG for _ in sets],
        "c": [s.references[1] for s in sets],
    }
    data = load_systems(
        [
            (f"{n}.json", json.dumps([{"image_id": s.image_id, "caption": c}
                                      for s, c in zip(sets, caps, strict=True)]).encode())
            for n, caps in rows.items()
        ],
        refs,
    )  # fmt: skip
    scores = score_systems(data, ["spice", "spice_object"], options=SPICE_LIMIT)
    assert math.isnan(scores.corpus["b"]["spice"]) and len(scores.missing["b"]["spice"]) == 8
    for name in ("a", "c"):
        alone = Spice().score(rows[name], [list(s.references[2:]) for s in sets])
        assert scores.corpus[name]["spice"] == alone.value
        assert scores.corpus[name]["spice_object"] == alone.details.categories["Object"][2]
    comparison = compare_systems(scores, n_resamples=20, n_trials=20)
    assert comparison.n_compared("spice") == 0 and "SPICE of b left out 8 of 8" in (
        comparison.format_table()
    )


# -- the command line ------------------------------------------------------------------------------


def _coco_files(tmp_path, n: int = 12, long_at: int = 3):
    sets = _sets(n)
    results = [
        {"image_id": s.image_id, "caption": LONG if i == long_at else s.candidate}
        for i, s in enumerate(sets)
    ]
    ann = {
        "images": [{"id": s.image_id} for s in sets],
        "annotations": [{"image_id": s.image_id, "caption": r} for s in sets for r in s.references],
    }
    (tmp_path / "res.json").write_text(json.dumps(results))
    (tmp_path / "ann.json").write_text(json.dumps(ann))
    return sets, tmp_path / "res.json", tmp_path / "ann.json"


def test_cli_score_warns_once_exits_0_and_lists_them_in_the_json(tmp_path, capsys):
    sets, res, ann = _coco_files(tmp_path)
    argv = ["score", "--results", str(res), "--annotations", str(ann)]
    argv += ["--metrics", "bleu_1", "bleu_4", "spice", "--spice-max-words", str(LIMIT), "--json"]
    assert main(argv) == 0
    out = capsys.readouterr()
    data = json.loads(out.out)
    image_id = sets[3].image_id
    assert data["left_out"] == {
        "spice": {
            "n": 1,
            "image_ids": [image_id],
            # in the words of the warning line (it named the library's max_sentence_words)
            "reasons": [{"image_id": image_id, "reason": f"candidate: {OVER_CLI}"}],
        }
    }
    warned = [line for line in out.err.splitlines() if "warning" in line]
    assert warned == [
        f"capeval: warning: SPICE left out 1 of 12 images (not scored): {image_id} (candidate: "
        f"{OVER_CLI}); its value is over the other images"
    ]
    assert math.isfinite(data["corpus"]["spice"]) and math.isfinite(data["corpus"]["bleu_4"])


def test_cli_score_says_a_metric_that_scored_no_image_has_no_value(tmp_path, capsys):
    """Every image left out: no "value over the other images", there are none."""
    _, res, ann = _coco_files(tmp_path, n=2, long_at=0)
    argv = ["score", "--results", str(res), "--annotations", str(ann), "--json"]
    assert main([*argv, "--metrics", "spice", "--spice-max-words", "3"]) == 0
    out = capsys.readouterr()
    assert json.loads(out.out)["corpus"]["spice"] is None
    (warned,) = [line for line in out.err.splitlines() if "warning" in line]
    assert warned.startswith("capeval: warning: SPICE left out 2 of 2 images (not scored): ")
    assert warned.endswith("; it has no value (nan; null in the JSON)")


@pytest.mark.parametrize("suffix", ["csv", "json"])
def test_cli_score_per_item_says_why_a_value_is_missing(tmp_path, capsys, suffix):
    """The per-image file has the reason beside the empty value, as Systems' files do."""
    import csv

    sets, res, ann = _coco_files(tmp_path)
    out = tmp_path / f"items.{suffix}"
    argv = ["score", "--results", str(res), "--annotations", str(ann), "--per-item", str(out)]
    assert main([*argv, "--metrics", "bleu_4", "spice", "--spice-max-words", str(LIMIT)]) == 0
    capsys.readouterr()
    if suffix == "csv":
        with out.open(newline="") as fh:
            rows = list(csv.DictReader(fh))
    else:
        rows = json.loads(out.read_text())
    assert list(rows[0]) == ["image_id", "bleu_4", "spice", "spice left out"]
    assert [r["spice left out"] for r in rows] == [
        f"candidate: {OVER_CLI}" if i == 3 else "" for i in range(len(sets))
    ]
    assert rows[3]["spice"] in ("nan", None) and rows[3]["bleu_4"] not in ("nan", None)


def test_cli_score_without_a_limit_lists_nothing(tmp_path, capsys):
    _, res, ann = _coco_files(tmp_path, long_at=-1)
    argv = ["score", "--results", str(res), "--annotations", str(ann), "--metrics", "spice"]
    assert main([*argv, "--json"]) == 0
    out = capsys.readouterr()
    assert set(json.loads(out.out)) == {
        "n_images", "references", "references_sha256", "corpus", "signatures"
    }  # fmt: skip
    assert "warning" not in out.err


def test_cli_compare_warns_and_writes_the_left_out_images(tmp_path, capsys):
    sets, res, ann = _coco_files(tmp_path)
    other = tmp_path / "other.json"
    other.write_text(json.dumps([{"image_id": s.image_id, "caption": s.references[0]}
                                 for s in sets]))  # fmt: skip
    argv = ["compare", "--results", str(other), str(res), "--annotations", str(ann)]
    argv += ["--metrics", "bleu_4", "spice", "--spice-max-words", str(LIMIT)]
    argv += ["--resamples", "50", "--trials", "50", "--json", str(tmp_path / "out.json")]
    assert main(argv) == 0
    err = capsys.readouterr().err
    warned = [line for line in err.splitlines() if "warning" in line]
    assert len(warned) == 1 and warned[0].startswith(
        f"capeval: warning: SPICE could not score 1 of 12 images for some system (image ids "
        f"{sets[3].image_id}; "
    )
    assert "use the 11 images every system scored" in warned[0]
    data = json.loads((tmp_path / "out.json").read_text())
    assert data["left_out"]["spice"]["image_ids"] == [sets[3].image_id]
    assert "bleu_4" not in data["left_out"]


def test_cli_correlate_uses_the_common_items_and_says_so(tmp_path, capsys):
    from capeval_core.judgments.demo import demo_graded

    js = demo_graded(4)
    rows = [
        {
            "id": it.id,
            "candidate": LONG if i == 2 else it.candidate,
            "references": list(it.references),
            "score": it.scores[0],
        }
        for i, it in enumerate(js.items)
    ]
    path = tmp_path / "judgments.json"
    path.write_text(json.dumps(rows))
    argv = ["correlate", "--judgments", str(path), "--format", "graded"]
    argv += ["--metrics", "bleu_4", "spice", "--spice-max-words", str(LIMIT)]
    argv += ["--json", str(tmp_path / "out.json"), "--workers", "0"]
    assert main(argv) == 0
    err = capsys.readouterr().err
    warned = [line for line in err.splitlines() if line.startswith("capeval: warning")]
    assert len(warned) == 1
    assert f"SPICE left out 1 of {len(rows)} items (not scored): {rows[2]['id']} (" in warned[0]
    assert f"use the {len(rows) - 1} items every metric scored" in warned[0]
    assert "(--spice-max-words)" in warned[0] and "max_sentence_words" not in warned[0]
    data = json.loads((tmp_path / "out.json").read_text())
    assert data["left_out"]["n"] == 1 and data["left_out"]["ids"] == [rows[2]["id"]]
    (reason,) = data["left_out"]["by_metric"]["spice"]
    assert reason["reason"].endswith("(--spice-max-words)")  # the warning's words
    assert data["left_out"]["n_used"] == len(rows) - 1
    assert data["n_rows"] == len(rows)
    # the correlations are those of the common items
    from scipy import stats

    kept = [r for i, r in enumerate(rows) if i != 2]
    bleu = score_many(["bleu_4"], [r["candidate"] for r in kept], [r["references"] for r in kept])
    expected = stats.pearsonr(bleu["bleu_4"].segment_values(), [r["score"] for r in kept])
    assert data["correlations"]["bleu_4"]["pearson"] == pytest.approx(expected.statistic)


def test_cli_correlate_with_too_few_common_items_says_why_in_one_line(tmp_path, capsys):
    """Warnings that promised a JSON ("null in the JSON"), then "a correlation needs at
    least 2 items (got 1)" without the cause: SPICE's left-out items."""
    from capeval_core.judgments.demo import demo_graded

    js = demo_graded(1)
    rows = [
        {"candidate": LONG if i else it.candidate, "references": list(it.references), "score": i}
        for i, it in enumerate(js.items[:3])
    ]
    path = tmp_path / "judgments.json"
    path.write_text(json.dumps(rows))
    argv = ["correlate", "--judgments", str(path), "--format", "graded", "--workers", "0"]
    argv += ["--metrics", "bleu_4", "spice", "--spice-max-words", str(LIMIT)]
    assert main([*argv, "--json", str(tmp_path / "out.json")]) == 2
    err = capsys.readouterr().err
    assert not [line for line in err.splitlines() if "warning" in line]
    (said,) = [line for line in err.splitlines() if line.startswith("capeval: error:")]
    assert said.endswith(
        "judgments.json: 1 of 3 items scored by every metric (SPICE left out 2 of 3 items, the "
        f"first: 2 (candidate: {OVER_CLI})): a correlation needs at least 2"
    )
    assert not (tmp_path / "out.json").exists()


def test_one_caption_a_metric_cannot_score_is_named_and_the_others_score():
    """Compare captions' call: the metric that left the caption out says why, as a metric
    that could not run does; the others score it."""
    from capeval_core.api import score_caption

    got = score_caption(["bleu_1", "spice"], LONG, ["a dog"], options=SPICE_LIMIT)
    assert list(got.results) == ["bleu_1"]
    assert got.errors == {"spice": f"SPICE could not score this caption: candidate: {OVER}"}
