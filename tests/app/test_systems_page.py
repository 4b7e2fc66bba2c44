"""AppTest checks of the Systems page (issue 15): it runs on its own and through the router,
shows the library's comparison for uploaded results files, sorts the images by where two
systems differ, links each to Compare captions, and names the file and image ids of a bad
upload while keeping the page as it was."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from streamlit.testing.v1 import AppTest

from capeval_core.resources import coco_caption_sets
from capeval_core.systems import References, compare_systems, load_systems, score_systems
from tests.app.apptest import ROOT, TIMEOUT
from tests.app.test_app import HOSTILE, HOSTILE_MARKERS, MARKDOWN_TYPES, _elements

PAGE = "app_pages/systems.py"
KEYS = ["bleu_4", "cider_d"]
#: fewer resamples and trials keep the tests short
FAST = {"systems_metrics": KEYS, "systems_resamples": 200, "systems_trials": 500}


@pytest.fixture(autouse=True)
def _own_score_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("CAPEVAL_SCORES_CACHE_DIR", str(tmp_path / "scores"))


def _page(**state: Any) -> AppTest:
    at = AppTest.from_file(str(ROOT / PAGE), default_timeout=TIMEOUT)
    for key, value in {**FAST, **state}.items():
        at.session_state[key] = value
    at.run()
    assert not at.exception, at.exception
    return at


def _uploads(n: int = 30, hostile: bool = False):
    sets = coco_caption_sets("val", n)
    ann = {
        "images": [{"id": s.image_id} for s in sets],
        "annotations": [
            {"image_id": s.image_id, "caption": r} for s in sets for r in s.references[1:]
        ],
    }
    first = [s.candidate for s in sets]
    if hostile:
        first[0] = HOSTILE
    second = [s.references[0] for s in sets]
    files = [
        (
            f"{name}.json",
            json.dumps(
                [{"image_id": s.image_id, "caption": c} for s, c in zip(sets, caps, strict=True)]
            ).encode(),
        )
        for name, caps in (("mine", first), ("theirs", second))
    ]
    return files, ("captions.json", json.dumps(ann).encode())


def _upload(at: AppTest, files, annotations) -> AppTest:
    at.radio(key="systems_source").set_value("Upload results files").run()
    at.radio(key="systems_references").set_value("Upload an annotations file").run()
    at.file_uploader(key="systems_results").set_value(
        [(n, d, "application/json") for n, d in files]
    )
    at.file_uploader(key="systems_annotations").set_value((*annotations, "application/json"))
    at.run()
    assert not at.exception, at.exception
    return at


def _frame(at: AppTest, column: str):
    return next(df.value for df in at.dataframe if column in df.value.columns)


def test_page_runs_on_its_own_with_the_demo() -> None:
    at = _page()
    assert [t.value for t in at.title] == ["Systems"]
    assert not at.error, [e.value for e in at.error]
    summary = _frame(at, "BLEU-4 ±")
    assert list(summary["system"]) == ["first caption", "second caption", "first caption reversed"]
    assert any("the baseline, first caption, so its own" in c.value for c in at.caption)
    assert len(at.get("plotly_chart")) == 1
    items = _frame(at, "open")
    assert items["open"].str.startswith("./compare-captions?candidate=").all()


def test_page_reachable_through_the_router() -> None:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
    for key, value in FAST.items():
        at.session_state[key] = value
    at.run()
    at.switch_page(PAGE).run()
    assert not at.exception, at.exception
    assert [t.value for t in at.title] == ["Systems"]
    assert at.radio(key="tokenizer").value == "ptb"


def test_uploaded_files_show_the_library_comparison() -> None:
    files, ann = _uploads()
    at = _upload(_page(), files, ann)
    assert not at.error, [e.value for e in at.error]
    refs = References.from_annotations(json.loads(ann[1]), ann[0])
    expected = compare_systems(
        score_systems(load_systems(files, refs), KEYS, use_cache=False),
        n_resamples=200,
        n_trials=500,
    )
    table = _frame(at, "p_randomization").set_index(["system", "key"])
    for s in ("mine", "theirs"):
        for k in KEYS:
            row = table.loc[(s, k)]
            assert row["value"] == expected.corpus[s][k]
            assert (row["ci_low"], row["ci_high"]) == expected.ci[s][k]
            if s == "theirs":
                paired = expected.paired[k][s]
                assert row["delta"] == paired.delta
                assert row["p_bootstrap"] == paired.p_bootstrap
                assert row["p_randomization"] == paired.p_randomization
    assert table.loc[("theirs", "cider_d"), "signature"].startswith("cider_d|")


def test_per_image_table_sorted_and_linked_to_compare_captions() -> None:
    files, ann = _uploads()
    at = _upload(_page(), files, ann)
    at.selectbox(key="systems_key").set_value("cider_d").run()
    items = _frame(at, "open")
    gaps = items["difference"].abs().tolist()
    assert gaps == sorted(gaps, reverse=True) and gaps[0] > 0
    top = items.iloc[0]
    url = urlsplit(top["open"])
    assert url.path == "./compare-captions"
    query = parse_qs(url.query)
    assert query["candidate"] == [top["caption_a"]]
    assert query["candidate_b"] == [top["caption_b"]]
    assert query["ref"] == top["references"].split(" | ")
    # B against A: swapping the systems flips the sign
    at.selectbox(key="systems_a").set_value("theirs").run()
    at.selectbox(key="systems_b").set_value("mine").run()
    flipped = _frame(at, "open")
    assert flipped.iloc[0]["difference"] == -top["difference"]
    # the same system twice: a note instead of a table
    at.selectbox(key="systems_b").set_value("theirs").run()
    assert any("two different systems" in i.value for i in at.info)


def test_bad_upload_names_the_file_and_ids_and_keeps_the_choices() -> None:
    files, ann = _uploads(10)
    rows = json.loads(files[1][1])
    files[1] = ("theirs.json", json.dumps([*rows, rows[4]]).encode())
    at = _page(systems_metrics=["bleu_4"])
    at = _upload(at, files, ann)
    errors = [e.value for e in at.error]
    assert len(errors) == 1
    assert "theirs.json" in errors[0] and str(rows[4]["image_id"]) in errors[0]
    assert at.multiselect(key="systems_metrics").value == ["bleu_4"]
    assert at.radio(key="systems_source").value == "Upload results files"


def test_one_file_asks_for_another() -> None:
    files, ann = _uploads(10)
    at = _upload(_page(), files[:1], ann)
    assert any("two or more" in i.value for i in at.info)
    assert not at.error


def test_markup_in_captions_is_shown_literally() -> None:
    files, ann = _uploads(hostile=True)
    at = _upload(_page(), files, ann)
    assert not at.error, [e.value for e in at.error]
    for element in _elements(at._tree):
        if getattr(element, "type", None) in MARKDOWN_TYPES:
            text = str(getattr(element, "value", ""))
            assert not any(m in text for m in HOSTILE_MARKERS), text
    items = _frame(at, "open")
    assert HOSTILE in set(items["caption_a"])  # in the table, as text


def test_uploads_and_choices_survive_a_visit_to_compare() -> None:
    """Leaving the page empties its file uploaders: the page keeps the files uploaded before
    (and says so), and its choices are kept like every page's inputs."""
    files, ann = _uploads()
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
    for key, value in FAST.items():
        at.session_state[key] = value
    at.run()
    at.switch_page(PAGE).run()
    at.radio(key="systems_paired").set_value("bs")
    _upload(at, files, ann)
    assert list(_frame(at, "BLEU-4 ±")["system"]) == ["mine", "theirs"]
    at.switch_page("app_pages/compare.py").run()
    assert not at.exception, at.exception
    at.switch_page(PAGE).run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    assert at.radio(key="systems_source").value == "Upload results files"
    assert at.radio(key="systems_paired").value == "bs"
    assert list(_frame(at, "BLEU-4 ±")["system"]) == ["mine", "theirs"]
    assert any("uploaded before: mine.json, theirs.json" in t.value for t in at.text)


def test_per_image_csv_download_opens_in_pandas_with_its_signatures_beside() -> None:
    import io

    import pandas as pd

    from capeval_core.systems import demo_systems, per_item_text, signatures_text

    at = _page()
    labels = [b.proto.label for b in at.get("download_button")]
    assert labels[:2] == ["Per-image scores (CSV)", "Signatures of the CSV (JSON)"]
    # the page offers the library's texts: they read back plainly
    data = demo_systems(40)
    comparison = compare_systems(
        score_systems(data, KEYS, use_cache=False), n_resamples=200, n_trials=500
    )
    frame = pd.read_csv(io.StringIO(per_item_text(comparison, "csv")))
    assert len(frame) == len(data) and f"{data.names[0]}: bleu_4" in frame.columns
    sidecar = json.loads(signatures_text(comparison, "capeval-systems.csv"))
    assert set(sidecar["signatures"]) == set(KEYS)
