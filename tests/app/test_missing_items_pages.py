"""The Systems and Judgments pages when a metric cannot score some items (issue 41): the page
says how many were left out and which (ids and reasons as plain text), every other item and
metric is shown, and the statistics use the items every compared metric scored.

The app has no widget for SPICE's ``max_sentence_words``; the tests give the option a
default for the run, as a deployment bounding the parse would."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest
from streamlit.testing.v1 import AppTest

from capeval_core.judgments.demo import demo_graded
from capeval_core.metrics.spice import SpiceConfig
from capeval_core.resources import coco_caption_sets
from capeval_ui import state
from tests.app.apptest import ROOT, TIMEOUT

#: a made-up caption of one 79-word sentence, and a limit under it and over every COCO
#: caption these tests use
LONG = " ".join(["a woman and a cat"] * 15) + " near a red door"
LIMIT = 60


@pytest.fixture(autouse=True)
def _limit(tmp_path, monkeypatch):
    monkeypatch.setenv("CAPEVAL_SCORES_CACHE_DIR", str(tmp_path / "scores"))
    monkeypatch.setitem(SpiceConfig.__init__.__kwdefaults__, "max_sentence_words", LIMIT)


def _run(at: AppTest) -> AppTest:
    at.run()
    assert not at.exception, at.exception
    return at


def test_systems_page_says_which_images_a_metric_left_out() -> None:
    sets = coco_caption_sets("val", 14)
    ann = {
        "images": [{"id": s.image_id} for s in sets],
        "annotations": [
            {"image_id": s.image_id, "caption": r} for s in sets for r in s.references[1:]
        ],
    }
    captions = {
        "plain": [s.candidate for s in sets],
        "wordy": [LONG if i == 4 else s.references[0] for i, s in enumerate(sets)],
    }
    files = [
        (f"{name}.json", json.dumps([{"image_id": s.image_id, "caption": c}
                                     for s, c in zip(sets, caps, strict=True)]).encode())
        for name, caps in captions.items()
    ]  # fmt: skip
    at = AppTest.from_file(str(ROOT / "app_pages/systems.py"), default_timeout=TIMEOUT)
    for key, value in {
        "systems_metrics": ["bleu_4", "spice"],
        "systems_resamples": 200,
        "systems_trials": 200,
    }.items():
        at.session_state[key] = value
    _run(at)
    at.radio(key="systems_source").set_value("Upload results files").run()
    at.radio(key="systems_references").set_value("Upload a references file").run()
    at.file_uploader(key="systems_results").set_value(
        [(n, d, "application/json") for n, d in files]
    )
    at.file_uploader(key="systems_annotations").set_value(
        ("captions.json", json.dumps(ann).encode(), "application/json")
    )
    _run(at)
    at.button(key="systems_score").click()  # scoring starts when Score is pressed
    _run(at)
    assert not at.error, [e.value for e in at.error]
    warnings = [w.value for w in at.warning]
    assert (
        "SPICE could not score 1 of 14 images for some system (which and why below): its "
        "values, intervals and tests use the 13 images every system scored"
    ) in warnings
    text = "\n".join(t.value for t in at.text)
    assert f"SPICE of wordy left out 1 of 14 images (not scored): {sets[4].image_id} (" in text
    assert "(candidate: a sentence of 79 words, over the limit of 60 (max_sentence_words))" in text
    # every other metric and system is on the page, SPICE on the images both scored
    table = next(df.value for df in at.dataframe if "p_randomization" in df.value.columns)
    assert set(table["key"]) == {"bleu_4", "spice"} and set(table["system"]) == set(captions)


def test_correlations_page_uses_the_items_every_metric_scored() -> None:
    js = demo_graded(6)
    items = list(js.items)
    items[7] = dataclasses.replace(items[7], candidate=LONG)
    js = dataclasses.replace(js, items=tuple(items), content_digest="", items_digest="")
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
    values: dict[str, Any] = {state.JSET_KEY: js, state.KEPT_METRICS: ["bleu_4", "spice"]}
    for key, value in values.items():
        at.session_state[key] = value
    _run(at)
    at.switch_page("app_pages/correlations.py")
    _run(at)
    assert not at.error, [e.value for e in at.error]
    n = len(js)
    assert (
        f"1 of {n} items left out: a metric could not score them (which and why below); the "
        f"statistics here use the {n - 1} items every metric scored."
    ) in [w.value for w in at.warning]
    text = "\n".join(t.value for t in at.text)
    line = f"SPICE left out 1 of {n} items (not scored): {items[7].id} (candidate: a sentence"
    assert line in text
    table = next(df.value for df in at.dataframe if "95% CI low" in df.value.columns)
    assert set(table["metric"]) >= {"bleu_4", "spice"}
    assert set(table["n"]) == {n - 1}


def test_correlations_page_warns_of_a_constant_human_score() -> None:
    js = demo_graded(4)
    items = tuple(dataclasses.replace(it, scores=(3.0,) * len(it.scores)) for it in js.items)
    js = dataclasses.replace(js, items=items, content_digest="", items_digest="")
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
    at.session_state[state.JSET_KEY] = js
    at.session_state[state.KEPT_METRICS] = ["bleu_4"]
    _run(at)
    at.switch_page("app_pages/correlations.py")
    _run(at)
    name = js.score_names[0]
    assert (
        f"The human score {name!r} is 3 for every caption: no correlation with it is defined "
        "(the table shows —)."
    ) in [w.value for w in at.warning]
