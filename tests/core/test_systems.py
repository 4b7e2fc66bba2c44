"""Several systems on the same images: loading, scoring in one pass, intervals and tests."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

from capeval_core import CapevalWarning, InputError, score, score_many
from capeval_core.metrics import REPORTED_KEYS, get_metric, make_batch
from capeval_core.metrics.statistics import weights_from_indices
from capeval_core.resources import coco_caption_sets
from capeval_core.stats.resampling import bootstrap, bootstrap_indices
from capeval_core.systems import (
    References,
    compare_systems,
    load_systems,
    references_fields,
    score_systems,
)

FAST_KEYS = ("bleu_1", "bleu_2", "bleu_3", "bleu_4", "rouge_l", "cider_d")


@pytest.fixture(autouse=True)
def _own_score_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("CAPEVAL_SCORES_CACHE_DIR", str(tmp_path / "scores"))


def _sets(n: int):
    return coco_caption_sets("val", n)


def _reverse(caption: str) -> str:
    return " ".join(reversed(caption.split()))


def _write(tmp_path, name, rows):
    path = tmp_path / name
    path.write_text(json.dumps(rows))
    return path


def _files(tmp_path, sets, systems):
    """An annotations file (references = every caption but the first two) and one results
    file per ``systems`` entry, a function of the image's caption set."""
    ann = {
        "images": [{"id": s.image_id} for s in sets],
        "annotations": [
            {"image_id": s.image_id, "id": j, "caption": r}
            for s in sets
            for j, r in enumerate(s.references[1:])
        ],
    }
    ann_path = _write(tmp_path, "captions.json", ann)
    paths = [
        _write(tmp_path, f"{name}.json", [{"image_id": s.image_id, "caption": fn(s)} for s in sets])
        for name, fn in systems.items()
    ]
    return ann_path, paths


def _data(sets, systems):
    refs = References("test", {s.image_id: tuple(s.references[1:]) for s in sets}, None)
    rows = {name: [(s.image_id, fn(s)) for s in sets] for name, fn in systems.items()}
    uploads = [
        (f"{name}.json", json.dumps([{"image_id": i, "caption": c} for i, c in r]).encode())
        for name, r in rows.items()
    ]
    return load_systems(uploads, refs)


def test_corpus_values_equal_scoring_each_system_alone():
    sets = _sets(120)
    systems = {"first": lambda s: s.candidate, "second": lambda s: s.references[0]}
    data = _data(sets, systems)
    keys = [*FAST_KEYS, "meteor"]
    scores = score_systems(data, keys, use_cache=False)
    refs = [list(s.references[1:]) for s in sets]
    for name, fn in systems.items():
        alone = score_many(keys, [fn(s) for s in sets], refs)
        for key in keys:
            assert scores.corpus[name][key] == alone[key].value, (name, key)  # bit for bit
            assert scores.items[name][key].tolist() == alone[key].segment_values()


def test_identical_copy_gives_zero_delta_and_p_one():
    sets = _sets(150)
    data = _data(sets, {"a": lambda s: s.candidate, "copy": lambda s: s.candidate})
    scores = score_systems(data, [*FAST_KEYS, "meteor"], use_cache=False)
    result = compare_systems(scores, n_resamples=300, n_trials=500)
    for key in scores.keys:
        paired = result.paired[key]["copy"]
        assert paired.delta == 0.0
        assert paired.confidence_interval == (0.0, 0.0)
        assert paired.p_bootstrap == 1.0 and paired.p_randomization == 1.0
        assert result.ci["a"][key] == result.ci["copy"][key]


#: metrics that ignore word order: reversing a caption's words leaves them unchanged
ORDER_FREE = {"bleu_1", "wmd", "mean"}


@pytest.mark.slow
def test_reversed_captions_are_found_worse_by_every_metric():
    sets = _sets(1000)
    data = _data(
        sets, {"original": lambda s: s.candidate, "reversed": lambda s: _reverse(s.candidate)}
    )
    scores = score_systems(data, list(REPORTED_KEYS), use_cache=False)
    assert scores.skipped == {}
    result = compare_systems(scores, n_resamples=1000, n_trials=2000)
    for key in scores.keys:
        paired = result.paired[key]["reversed"]
        if key in ORDER_FREE:  # the same bag of words: exactly the same score
            assert paired.delta == 0.0 and paired.p_value == 1.0, key
        else:
            assert paired.delta < 0, key
            assert paired.p_bootstrap < 0.01 and paired.p_randomization < 0.01, key
            assert paired.confidence_interval[1] < 0, key


def test_bootstrap_recomputes_corpus_statistics_not_a_mean():
    sets = _sets(60)
    cands = [s.candidate for s in sets]
    refs = [list(s.references) for s in sets]
    batch = make_batch(cands, refs)
    indices = next(bootstrap_indices(len(sets), 4, seed=7))
    for key, tol in (("bleu", 1e-12), ("meteor", 1e-12), ("cider_d", 1e-6)):
        metric = get_metric(key)
        result = metric.score_batch(batch)
        stats = metric.resampling(result, batch)
        boot = bootstrap({"s": stats}, n_resamples=4, seed=7)["s"]
        primary = stats.keys.index(metric.primary_key())
        for row, idx in enumerate(indices):
            # the resample scored from scratch: duplicates included, as coco-caption would
            plain = score(
                metric.primary_key(), [cands[i] for i in idx], [refs[i] for i in idx]
            ).value
            assert boot[row, primary] == pytest.approx(plain, rel=tol, abs=tol), key
            mean = np.mean(np.array(result.segment_values(metric.primary_key()))[idx])
            assert abs(plain - mean) > 1e-4, key  # a mean of item values would be wrong


def test_cider_resample_by_hand():
    # three images; the resample draws image 0 twice and image 2 once: its IDF counts
    # image 0's references twice, over N = 3 documents
    cands = ["a dog runs on grass", "a red bus", "two cats sleep"]
    refs = [["a dog running on the grass"], ["a bus on a street"], ["cats sleeping on a bed"]]
    batch = make_batch(cands, refs, "whitespace")
    metric = get_metric("cider_d", tokenizer="whitespace")
    stats = metric.resampling(metric.score_batch(batch), batch)
    by_hand = score(
        "cider_d",
        [cands[0], cands[0], cands[2]],
        [refs[0], refs[0], refs[2]],
        tokenizer="whitespace",
    ).value
    got = stats.resample(weights_from_indices(np.array([[0, 0, 2]]), 3))[0, 0]
    assert got == pytest.approx(by_hand, rel=1e-6)
    assert got != pytest.approx(stats.resample(np.array([[1.0, 0.0, 1.0]]))[0, 0], rel=1e-3)


def test_seeds_reproduce_p_values_across_processes(tmp_path):
    from tests.conftest import fresh_python

    sets = _sets(80)
    ann, paths = _files(
        tmp_path, sets, {"a": lambda s: s.candidate, "b": lambda s: s.references[0]}
    )
    code = (
        "import json, os\n"
        f"os.environ['CAPEVAL_SCORES_CACHE_DIR'] = {str(tmp_path / 'cache')!r}\n"
        "from capeval_core.systems import load_systems, score_systems, compare_systems\n"
        f"data = load_systems({[str(p) for p in paths]!r}, {str(ann)!r})\n"
        "scores = score_systems(data, ['bleu_4', 'cider_d'])\n"
        "import sys\n"
        "for seed in (1, 2):\n"
        "    r = compare_systems(scores, n_resamples=200, n_trials=300, seed=seed)\n"
        "    print(json.dumps([r.paired[k]['b'].p_bootstrap for k in r.keys]"
        " + [r.paired[k]['b'].p_randomization for k in r.keys] + [r.ci['b']['cider_d']]))\n"
    )
    first, second = fresh_python(code).splitlines(), fresh_python(code).splitlines()
    assert first == second  # the same seed, the same p-values and intervals
    assert first[0] != first[1]  # and another seed draws other resamples


def test_mismatched_and_duplicate_ids_name_the_file_and_ids(tmp_path):
    sets = _sets(10)
    ann, (a, _) = _files(tmp_path, sets, {"a": lambda s: s.candidate, "b": lambda s: s.candidate})
    rows = json.loads(a.read_text())
    short = _write(tmp_path, "short.json", rows[:-2])
    with pytest.raises(InputError, match=r"short\.json lacks 2 image_id\(s\) of .*a\.json: "):
        load_systems([a, short], ann)
    extra = _write(tmp_path, "extra.json", [*rows, {"image_id": 4242, "caption": "x"}])
    with pytest.raises(InputError, match=r"extra\.json has 1 image_id\(s\) .*a\.json lacks: 4242"):
        load_systems([a, extra], ann)
    twice = _write(tmp_path, "twice.json", [*rows, rows[3]])
    with pytest.raises(InputError, match=rf"twice\.json: 1 image_id\(s\) .*{rows[3]['image_id']}"):
        load_systems([a, twice], ann)
    with pytest.raises(InputError, match=r"4242.*|no reference"):
        load_systems([extra, extra], ann, names=["x", "y"])
    with pytest.raises(InputError, match="system names must be unique"):
        load_systems([a, a], ann)


def test_systems_are_aligned_in_the_annotations_image_order(tmp_path):
    sets = _sets(12)
    ann, (a, b) = _files(
        tmp_path, sets, {"a": lambda s: s.candidate, "b": lambda s: s.references[0]}
    )
    rows = json.loads(b.read_text())
    shuffled = _write(tmp_path, "b.json", rows[::-1])  # another order in the file
    data = load_systems([a, shuffled], ann, names=["x", "y"])
    assert list(data.image_ids) == [s.image_id for s in sets]
    assert data.candidates[1] == tuple(s.references[0] for s in sets)
    assert data.names == ("x", "y")


def test_differences_sort_by_the_gap_between_two_systems():
    sets = _sets(40)
    data = _data(sets, {"a": lambda s: s.candidate, "b": lambda s: _reverse(s.candidate)})
    scores = score_systems(data, ["bleu_4", "rouge_l"], use_cache=False)
    table = scores.differences("a", "b", "rouge_l")
    gaps = table["difference"].abs().tolist()
    assert gaps == sorted(gaps, reverse=True)
    first = table.iloc[0]
    i = data.image_ids.index(first["image_id"])
    assert first["caption_a"] == data.candidates[0][i]
    assert first["caption_b"] == data.candidates[1][i]
    assert first["value_b"] - first["value_a"] == first["difference"]
    assert first["value_a"] == scores.items["a"]["rouge_l"][i]
    assert first["references"] == list(data.references[i])
    with pytest.raises(InputError, match="unknown system"):
        scores.differences("a", "zzz", "rouge_l")


def test_scores_are_cached_per_system(monkeypatch):
    sets = _sets(30)
    data = _data(sets, {"a": lambda s: s.candidate, "b": lambda s: s.references[0]})
    first = score_systems(data, ["bleu_4", "cider_d"])
    again = score_systems(data, ["bleu_4", "cider_d"])
    assert not any(first.from_cache.values()) and all(again.from_cache.values())
    assert first.corpus == again.corpus
    grown = _data(
        sets,
        {
            "a": lambda s: s.candidate,
            "b": lambda s: s.references[0],
            "c": lambda s: s.references[1],
        },
    )
    from capeval_core import batch

    scored = []
    real = batch.score_metric
    monkeypatch.setattr(batch, "score_metric", lambda *a: scored.append(len(a[3])) or real(*a))
    third = score_systems(grown, ["bleu_4"])
    assert scored == [1]  # only the new system is scored
    assert third.corpus["a"]["bleu_4"] == first.corpus["a"]["bleu_4"]
    # resampled values are kept per system too: the same intervals, without resampling
    from capeval_core.stats import resampling

    before = compare_systems(first, n_resamples=50, n_trials=50)
    calls = []
    real_bootstrap = resampling.bootstrap
    monkeypatch.setattr(
        resampling,
        "bootstrap",
        lambda todo, *a: calls.append(sorted(todo)) or real_bootstrap(todo, *a),
    )
    after = compare_systems(first, n_resamples=50, n_trials=50)
    assert calls == [] and after.ci == before.ci
    assert compare_systems(first, n_resamples=50, n_trials=50, seed=3).ci != before.ci
    assert len(calls) == 1


def test_comparison_json_has_exactly_the_documented_keys():
    sets = _sets(40)
    data = _data(sets, {"a": lambda s: s.candidate, "b": lambda s: s.references[0]})
    result = compare_systems(
        score_systems(data, ["bleu_4", "cider_d"], use_cache=False), n_resamples=100, n_trials=100
    )
    out = result.as_dict()
    assert set(out) == {
        "systems", "corpus", "ci", "paired", "signatures", "n_images", "references",
        "references_sha256", "dropped",
    }  # fmt: skip
    assert out["references_sha256"] == references_fields(data)["references_sha256"]
    assert out["dropped"] == {"a": {"n": 0, "image_ids": []}, "b": {"n": 0, "image_ids": []}}
    assert out["systems"] == ["a", "b"] and out["n_images"] == 40
    assert set(out["paired"]["bleu_4"]) == {"b"}  # every system but the baseline
    b = out["paired"]["bleu_4"]["b"]
    assert set(b) == {"delta", "ci", "p_value", "p_bootstrap", "p_randomization"}
    # each test's own p, which the text gives; p_value is the larger (both were run)
    paired = result.paired["bleu_4"]["b"]
    assert (b["p_bootstrap"], b["p_randomization"]) == (paired.p_bootstrap, paired.p_randomization)
    assert b["p_value"] == max(b["p_bootstrap"], b["p_randomization"])
    assert out["signatures"]["cider_d"].startswith("cider_d|")
    assert "paired:bs+ar|resamples:100|trials:100|seed:12345" in out["signatures"]["cider_d"]
    low, high = out["ci"]["a"]["cider_d"]
    assert low <= out["corpus"]["a"]["cider_d"] <= high


def test_intersect_in_the_library_and_arranging_the_systems(tmp_path):
    sets = _sets(12)
    ann, (a, b) = _files(
        tmp_path, sets, {"a": lambda s: s.candidate, "b": lambda s: s.references[0]}
    )
    rows = json.loads(b.read_text())
    short = _write(tmp_path, "short.json", rows[3:])
    with pytest.raises(InputError, match="--on-missing intersect"):
        load_systems([a, short], ann)
    data = load_systems([a, short], ann, on_missing="intersect")
    assert list(data.image_ids) == [s.image_id for s in sets[3:]]
    assert data.lost(0) == tuple(s.image_id for s in sets[:3]) and data.lost(1) == ()
    swapped = data.arranged([1, 0], ["theirs", "mine"])
    assert swapped.names == ("theirs", "mine") and swapped.sources[0].endswith("short.json")
    assert swapped.candidates == data.candidates[::-1] and swapped.lost(1) == data.lost(0)
    assert swapped.digest(0) == data.digest(1)  # the score cache follows the captions
    with pytest.raises(InputError, match="system names must be unique"):
        data.arranged([0, 1], ["x", "x"])
    with pytest.raises(InputError, match="each of the 2 systems once"):
        data.arranged([0, 0])


def test_spice_categories_are_means_over_the_images_where_defined():
    """spice_object ... spice_size equal SPICE's own summary of the per-image category
    F-scores (as coco-caption averages them: images whose references lack the category are
    left out), per image and corpus, and the table says how many images were left out."""
    from capeval_core.metrics.spice import CATEGORY_KEYS, Spice
    from capeval_core.systems_table import categories_left_out, paper_table

    sets = _sets(40)
    systems = {"a": lambda s: s.candidate, "b": lambda s: s.references[0]}
    data = _data(sets, systems)
    keys = ["spice", *CATEGORY_KEYS]
    scores = score_systems(data, keys, use_cache=False)
    assert scores.keys == tuple(keys)
    refs = [list(s.references[1:]) for s in sets]
    for name, fn in systems.items():
        alone = Spice().score([fn(s) for s in sets], refs)
        assert scores.corpus[name]["spice"] == alone.value
        for key, category in CATEGORY_KEYS.items():
            per_image = [seg.details.categories[category].f for seg in alone.segments]
            np.testing.assert_array_equal(scores.items[name][key], per_image)
            assert scores.corpus[name][key] == alone.details.categories[category][2], key
            left_out = int(np.isnan(scores.items[name][key]).sum())
            assert left_out == len(sets) - alone.details.images[category]
    assert 0 < int(np.isnan(scores.items["a"]["spice_count"]).sum()) < len(sets)
    comparison = compare_systems(scores, n_resamples=100, n_trials=100)
    low, high = comparison.ci["a"]["spice_object"]
    assert low <= comparison.corpus["a"]["spice_object"] <= high
    assert 0 <= comparison.paired["spice_count"]["b"].p_value <= 1
    missing = categories_left_out(comparison)
    assert missing["spice_count"] == int(np.isnan(scores.items["a"]["spice_count"]).sum())
    table = paper_table(comparison)
    assert "SPICE Count" in table.labels and table.keys[0] == "spice"
    assert f"SPICE Count {missing['spice_count']:,}" in table.notes[-1]
    assert "images left out" in comparison.format_table()


def test_a_comparison_computed_apart_equals_the_one_computed_here():
    """The app scores a large comparison in a process of its own (issue 42's load goal): the
    same numbers, its progress and stages told here, and its warnings as asked."""
    from capeval_core.errors import DegenerateCorpusWarning
    from capeval_core.systems import score_and_compare, score_and_compare_apart

    sets = _sets(60)
    data = _data(sets, {"a": lambda s: s.candidate, "b": lambda s: _reverse(s.candidate)})
    options = dict(paired="both", n_resamples=200, n_trials=300, seed=7, on_error="skip")
    here = score_and_compare(data, FAST_KEYS, **options)
    told: list[tuple] = []
    apart = score_and_compare_apart(
        data,
        FAST_KEYS,
        on_progress=lambda *p: told.append(("progress", *p)),
        on_stage=lambda text: told.append(("stage", text)),
        ignore=(DegenerateCorpusWarning,),
        **options,
    )
    assert apart.as_dict() == here.as_dict()
    assert apart.to_frame().equals(here.to_frame())
    assert told[-1] == ("stage", "Bootstrap resamples and paired tests…")
    last = [t for t in told if t[0] == "progress"][-1]  # (the last is told again each second)
    assert last[1] == last[2]  # every step done


def test_library_arguments_are_checked_with_their_names():
    """seed=-1 failed in numpy's bit generator, n_resamples=1 gave ± 0 and p = 0.5, 10**13
    resamples ran out of memory; two systems of one name kept one system's scores."""
    from capeval_core.systems import SystemsInput, compare_systems, score_systems

    data = SystemsInput(
        ("a", "b"), (1, 2), (("a dog", "a cat"), ("a dog runs", "a cat")),
        (("a dog runs",), ("a cat sleeps",)), ("a.json", "b.json"), "refs",
    )  # fmt: skip
    scores = score_systems(data, ["bleu_4"], use_cache=False)
    for kwargs, message in (
        ({"seed": -1}, r"`seed` must be a whole number >= 0"),
        ({"n_resamples": 1}, r"`n_resamples` must be a whole number from 2 to 1,000,000"),
        ({"n_resamples": 10**13}, r"from 2 to 1,000,000 \(got 10000000000000\)"),
        ({"n_trials": 0}, r"`n_trials` must be a whole number from 1"),
        ({"level": "0.95"}, r"`level` must be between 0 and 1"),
    ):
        with pytest.raises(InputError, match=message):
            compare_systems(scores, use_cache=False, **kwargs)
    with pytest.raises(InputError, match=r"both give the system name 'a'"):
        SystemsInput(("a", "a"), (1,), (("x",), ("y",)), (("r",),), ("a.json", "b.json"), "t")
    with pytest.raises(InputError, match=r"one tuple of reference captions per image"):
        SystemsInput(("a",), (1,), (("x",),), ("a dog",), ("a.json",), "t")


def test_a_metric_that_scored_no_image_reads_n_a_in_the_report():
    """The text report printed 'nan ± nan' and 'Δ +nan' where the tables print n/a."""
    from capeval_core.systems import SystemsInput, compare_systems, score_systems

    data = SystemsInput(
        ("a", "b"), (1, 2), (("a dog runs", "a cat"), ("a dog", "a cat sits")),
        (("a dog runs",), ("a cat sleeps",)), ("a.json", "b.json"), "refs",
    )  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        scores = score_systems(
            data, ["bleu_4", "spice"], options={"spice": {"max_sentence_words": 1}}, use_cache=False
        )
        text = compare_systems(scores, n_resamples=50, n_trials=50, use_cache=False).format_table()
    assert "nan" not in text and "n/a" in text


def test_the_report_says_the_paired_bootstraps_p_counts_one_tail():
    """The report and the docstring called the paired bootstrap's p two-sided; it is
    sacrebleu's count of one tail, about half a two-sided p."""
    import numpy as np

    from capeval_core.metrics.statistics import MeanStatistics
    from capeval_core.stats import resampling
    from capeval_core.systems import SystemsInput, compare_systems, score_systems

    # sacrebleu's (Moses') rule, written out: |d*| centred on its mean against |delta|
    rng = np.random.default_rng(7)
    base = rng.normal(0.5, 0.2, 80)
    a = MeanStatistics.from_values(("x",), {"x": base})
    b = MeanStatistics.from_values(("x",), {"x": base + rng.normal(0.05, 0.2, 80)})
    boot = resampling.bootstrap({"a": a, "b": b}, n_resamples=400, seed=2)
    got = resampling.paired_tests(a, b, boot["a"], boot["b"], tests="bs")["x"]
    d = np.abs(boot["b"][:, 0] - boot["a"][:, 0])
    null = d - d.mean()
    want = (np.count_nonzero(null >= abs(got.delta)) + 1) / (null.size + 1)
    assert got.p_bootstrap == pytest.approx(want)
    # a two-sided bootstrap p (the centred differences, both tails) is about twice it
    centred = (boot["b"][:, 0] - boot["a"][:, 0]) - got.delta
    two_sided = (np.count_nonzero(np.abs(centred) >= abs(got.delta)) + 1) / (null.size + 1)
    assert got.p_bootstrap < 0.75 * two_sided
    data = SystemsInput(
        ("a", "b"), (1, 2, 3), (("a dog runs", "a cat", "two men"), ("a dog", "a cat sits", "men")),
        (("a dog runs",), ("a cat sleeps",), ("two men walk",)), ("a.json", "b.json"), "refs",
    )  # fmt: skip
    scores = score_systems(data, ["bleu_1"], use_cache=False)
    said = "The paired bootstrap p is sacrebleu's: it counts one tail"
    for paired, shown in (("bs", True), ("both", True), ("ar", False)):
        text = compare_systems(
            scores, paired=paired, n_resamples=20, n_trials=20, use_cache=False
        ).format_table()
        assert (said in text) is shown, paired


def test_one_results_file_keys_string_and_options_typo_are_said(tmp_path):
    """load_systems("s1.json") read each character as a file ("results file s: file does
    not exist"); score_systems(data, "bleu_4") said "unknown metric 'b'"; an options key
    "cidr" was accepted and applied to nothing; on_error="ignore" was taken."""
    from capeval_core.errors import OptionError
    from capeval_core.systems import SystemsInput, load_systems, score_systems

    with pytest.raises(InputError, match=r"`results` must be a list of results files"):
        load_systems(str(tmp_path / "s1.json"))
    data = SystemsInput(("a",), (1,), (("a dog",),), (("a dog runs",),), ("a.json",), "refs")
    for kwargs, message in (
        ({"keys": "bleu_4"}, r"`keys` must be a list of metric keys"),
        ({"keys": ["cider_d"], "options": {"cidr": {"idf": "corpus"}}}, r"got 'cidr'"),
        ({"keys": ["bleu_4"], "on_error": "ignore"}, r"`on_error` must be 'raise' or 'skip'"),
    ):
        with pytest.raises(OptionError, match=message):
            score_systems(data, use_cache=False, **kwargs)


def test_messages_call_the_references_a_references_file() -> None:
    """The page's label and most messages said "references file", three "annotations file"."""
    from capeval_core.coco_files import References

    with pytest.raises(InputError, match=r"^references file refs\.json: expected an object"):
        References.from_annotations([], "refs.json")
    with pytest.warns(UserWarning, match=r"^references file refs\.json, list 'images'"):
        References.from_annotations(
            {
                "images": [{"id": 1}, {"id": 1}],
                "annotations": [{"image_id": 1, "id": 1, "caption": "a dog"}],
            },
            "refs.json",
        )


def test_references_given_as_a_dict_in_memory(tmp_path):
    """A notebook's {image_id: [captions]} ended in a bare TypeError (a path was expected)."""
    from capeval_core.systems import load_systems

    for name, caption in (("a", "a dog"), ("b", "a cat")):
        (tmp_path / f"{name}.json").write_text(json.dumps([{"image_id": 1, "caption": caption}]))
    refs = {"1": ["a dog runs", "a brown dog"]}
    (tmp_path / "refs.json").write_text(json.dumps(refs))
    files = [tmp_path / "a.json", tmp_path / "b.json"]
    given = load_systems(files, refs)
    assert given.references == load_systems(files, tmp_path / "refs.json").references
    assert given.reference_source == "the references given"
    with pytest.raises(InputError, match=r"references: give a file path.*\(got int\)"):
        load_systems(files, 5)


def test_compare_systems_without_its_cache_makes_no_cache_folder(tmp_path, monkeypatch):
    """use_cache=False still made the score cache's folder (the paths were computed first)."""
    from capeval_core.systems import compare_systems, demo_systems, score_systems

    folder = tmp_path / "scores"
    monkeypatch.setenv("CAPEVAL_SCORES_CACHE_DIR", str(folder))
    scores = score_systems(demo_systems(3), ["rouge_l"], use_cache=False)
    compare_systems(scores, n_resamples=20, n_trials=20, use_cache=False)
    assert not folder.exists()


def test_the_resampling_signature_gives_the_level_as_it_was_used() -> None:
    """``level:{:g}`` wrote 0.9500004 as 0.95 and 0.9999996 as 1: other intervals, one name."""
    from capeval_core.systems import demo_systems

    scores = score_systems(demo_systems(6), ["bleu_4"], use_cache=False)
    for level, shown in ((0.95, "level:0.95"), (0.9500004, "level:0.9500004")):
        comparison = compare_systems(scores, n_resamples=20, n_trials=20, level=level)
        assert str(comparison.resampling).endswith(shown)


def test_one_name_per_sidecar_writer() -> None:
    """Two functions were named ``signatures_text``: the sidecar JSON of any signatures
    (``stats.export``) and a comparison's (``systems``), which gathers what that file says
    and has the first write it. The comparison's is named so, and writes what the other
    would of its signatures, systems and references."""
    from capeval_core import systems
    from capeval_core.stats import export
    from capeval_core.systems import comparison_signatures_text, demo_systems, references_fields

    assert not hasattr(systems, "signatures_text")
    c = compare_systems(
        score_systems(demo_systems(3), ["rouge_l"], use_cache=False), use_cache=False
    )
    expected = export.signatures_text(
        {"rouge_l": c.signature("rouge_l")},
        "items.csv",
        systems=list(c.systems),
        **references_fields(c.scores.input),
    )
    assert comparison_signatures_text(c, "items.csv") == expected
    assert json.loads(expected)["signatures"]["rouge_l"].endswith(f"|{c.resampling}")


def test_blank_captions_are_named_with_record_and_line_as_the_command_line(tmp_path):
    """The Systems page named a results file's blank captions by bare image ids; the command
    line names image, record and line (``warn_blank_captions``). The input carries the places,
    in the file's order, and keeps them when the systems are rearranged."""
    refs = {1: ["a dog"], 2: ["a cat"], 3: ["a car"]}
    (tmp_path / "refs.json").write_text(json.dumps(refs))
    rows = [{"image_id": 3, "caption": " "}, {"image_id": 1, "caption": "a dog"},
            {"image_id": 2, "caption": ""}]  # fmt: skip
    (tmp_path / "new.json").write_text(json.dumps(rows, indent=1))
    base = [{"image_id": k, "caption": "a thing"} for k in refs]
    (tmp_path / "base.json").write_text(json.dumps(base))
    with pytest.warns(CapevalWarning, match="blank") as said:
        data = load_systems([tmp_path / "base.json", tmp_path / "new.json"], tmp_path / "refs.json")
    expected = "image 3 (record 1, line 2), image 2 (record 3, line 10)"
    assert data.blank_named(1) == expected
    assert expected in str(said[0].message)  # as the command line says them
    assert data.blank_named(0) == ""
    assert data.arranged([1, 0]).blank_named(0) == expected


def test_a_single_images_cider_d_note_is_warned_of_from_the_cache_too(tmp_path, monkeypatch):
    """score_systems warned of CIDEr-D's note on a single image only while scoring: a
    library caller's second run, read from the cache, had ``notes`` but no warning."""
    from capeval_core.errors import DegenerateCorpusWarning
    from capeval_core.systems import SystemsInput, score_systems

    monkeypatch.setenv("CAPEVAL_SCORES_CACHE_DIR", str(tmp_path))
    data = SystemsInput(("a",), (1,), (("a dog runs",),), (("a dog is running",),),
                        ("a.json",), "refs.json")  # fmt: skip
    for cached in (False, True):
        with pytest.warns(DegenerateCorpusWarning, match="single image"):
            scores = score_systems(data, ["cider_d"])
        assert scores.from_cache["cider_d"] is cached
        assert "single image" in scores.notes["cider_d"][0]
