"""AppTest checks of the Systems page (issue 15): it runs on its own and through the router,
shows the library's comparison for uploaded results files once Score is pressed, sorts the
images by where two systems differ, links each to Compare captions, and names the file and
image ids of a bad upload while keeping the page as it was; its choices are its URL, and a link
naming files the server does not hold says so (issue 42)."""

from __future__ import annotations

import itertools
import json
from types import SimpleNamespace
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from streamlit.testing.v1 import AppTest

from capeval_core.resources import coco_caption_sets
from capeval_core.systems import References, compare_systems, load_systems, score_systems
from tests.app.apptest import ROOT, TIMEOUT, as_shown
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


def _upload(at: AppTest, files, annotations, score: bool = True) -> AppTest:
    """Upload results files and a references file, then press Score (unless told not to)."""
    at.radio(key="systems_source").set_value("Upload results files").run()
    at.radio(key="systems_references").set_value("Upload a references file").run()
    at.file_uploader(key="systems_results").set_value(
        [(n, d, "application/json") for n, d in files]
    )
    at.file_uploader(key="systems_annotations").set_value((*annotations, "application/json"))
    at.run()
    assert not at.exception, at.exception
    return _score(at) if score and not at.error else at


def _score(at: AppTest) -> AppTest:
    at.button(key="systems_score").click().run()
    assert not at.exception, at.exception
    return at


def _frame(at: AppTest, column: str):
    return next(df.value for df in at.dataframe if column in df.value.columns)


def test_page_runs_on_its_own_with_the_demo() -> None:
    at = _page()
    assert [t.value for t in at.title] == ["Systems"]
    assert not at.error, [e.value for e in at.error]
    # no file was uploaded: nothing was numbered (it said "demo as 'first caption'")
    assert not [t for t in at.text if "are numbered" in t.value]
    summary = _frame(at, "BLEU-4")  # the paper's table: values, then Δ and p
    assert list(summary["system"]) == [
        "first caption (baseline)", "second caption", "first caption reversed"
    ]  # fmt: skip
    deltas = [df.value for df in at.dataframe if "BLEU-4" in df.value.columns][1]
    assert deltas.iloc[0].tolist() == ["first caption (baseline)", "", ""]  # not "None"
    assert deltas["CIDEr-D"].iloc[2].startswith("-")  # reversed captions are worse
    assert any("Δ to the baseline, first caption" in t.value for t in at.text)
    assert any("References: demo" in t.value for t in at.text)
    assert len(at.get("plotly_chart")) == 1
    items = _frame(at, "open")
    assert items["open"].str.startswith("./compare-captions?candidate=").all()
    assert any("tokenizer, SPICE parser and CIDEr-D IDF" in c.value for c in at.caption)


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


def test_one_file_gives_its_values_and_intervals() -> None:
    files, ann = _uploads(10)
    at = _upload(_page(), files[:1], ann)
    assert not at.error, [e.value for e in at.error]
    frames = [df.value for df in at.dataframe if "BLEU-4" in df.value.columns]
    assert len(frames) == 1 and list(frames[0]["system"]) == ["mine (baseline)"]
    assert " ± " in frames[0]["CIDEr-D"].iloc[0]


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
    assert list(_frame(at, "BLEU-4")["system"]) == ["mine (baseline)", "theirs"]
    at.switch_page("app_pages/compare.py").run()
    assert not at.exception, at.exception
    at.switch_page(PAGE).run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    assert at.radio(key="systems_source").value == "Upload results files"
    assert at.radio(key="systems_paired").value == "bs"
    assert list(_frame(at, "BLEU-4")["system"]) == ["mine (baseline)", "theirs"]
    assert any("uploaded before: mine.json, theirs.json" in t.value for t in at.text)


def test_per_image_csv_download_opens_in_pandas_with_its_signatures_beside() -> None:
    import io

    import pandas as pd

    from capeval_core.systems import comparison_signatures_text, demo_systems, per_item_text

    at = _page()
    labels = [b.proto.label for b in at.get("download_button")]
    at_csv = labels.index("Per-image scores (CSV)")
    assert labels[at_csv + 1] == "Signatures of the CSV (JSON)"  # beside it
    # the page offers the library's texts: they read back plainly
    data = demo_systems(40)
    comparison = compare_systems(
        score_systems(data, KEYS, use_cache=False), n_resamples=200, n_trials=500
    )
    frame = pd.read_csv(io.StringIO(per_item_text(comparison, "csv")))
    assert len(frame) == len(data) and f"{data.names[0]}: bleu_4" in frame.columns
    sidecar = json.loads(comparison_signatures_text(comparison, "capeval-systems.csv"))
    assert set(sidecar["signatures"]) == set(KEYS)


def _expected_table(files, ann, order=(0, 1), names=None, raw=False):
    from capeval_core.systems_table import paper_table

    refs = References.from_annotations(json.loads(ann[1]), ann[0])
    data = load_systems(files, refs).arranged(list(order), names)
    comparison = compare_systems(
        score_systems(data, KEYS, use_cache=False), n_resamples=200, n_trials=500
    )
    return paper_table(comparison, raw=raw)


def test_rename_and_choose_the_baseline() -> None:
    files, ann = _uploads()
    at = _upload(_page(), files, ann)
    at.text_input(key="systems_names").set_value("Ours, Theirs").run()
    _score(at)
    assert not at.exception and not at.error
    values = _frame(at, "BLEU-4")
    assert list(values["system"]) == ["Ours (baseline)", "Theirs"]
    assert at.selectbox(key="systems_a").options == ["Ours", "Theirs"]
    at.selectbox(key="systems_baseline").set_value("Theirs").run()
    _score(at)
    assert not at.exception and not at.error
    values, deltas = [df.value for df in at.dataframe if "BLEU-4" in df.value.columns][:2]
    assert list(values["system"]) == ["Theirs (baseline)", "Ours"]
    expected = _expected_table(files, ann, (1, 0), ["Theirs", "Ours"])
    assert values["CIDEr-D"].tolist() == expected.value_frame()["CIDEr-D"].tolist()
    assert deltas.iloc[0]["CIDEr-D"] == "" and deltas.iloc[1]["CIDEr-D"] == (
        expected.delta_cell(1, expected.keys.index("cider_d"))
    )
    assert any("Δ to the baseline, Theirs" in t.value for t in at.text)
    labels = [b.proto.label for b in at.get("download_button")]
    assert {"Table (LaTeX)", "Table (Markdown)", "Table (CSV)"} <= set(labels)
    # the CSV has no room for signatures: a file of them beside it (the table had none)
    assert labels[labels.index("Table (CSV)") + 1] == "Signatures (JSON)"
    at.toggle(key="systems_raw").set_value(True).run()
    raw = _frame(at, "BLEU-4")
    as_raw = _expected_table(files, ann, (1, 0), ["Theirs", "Ours"], raw=True)
    assert raw["CIDEr-D"].tolist() == as_raw.value_frame()["CIDEr-D"].tolist()
    assert raw["CIDEr-D"].iloc[0] != values["CIDEr-D"].iloc[0]
    at.text_input(key="systems_names").set_value("Same, Same").run()
    assert not at.error  # said as a warning, the table kept (see below)
    assert any("differ from the others" in w.value for w in at.warning)


def test_references_as_image_id_lists_and_shared_images() -> None:
    files, ann = _uploads(12)
    coco = json.loads(ann[1])
    gts: dict = {}
    for a in coco["annotations"]:
        gts.setdefault(str(a["image_id"]), []).append(a["caption"])
    at = _upload(_page(), files, ("gts.json", json.dumps(gts).encode()))
    assert not at.error, [e.value for e in at.error]
    via_gts = _frame(at, "BLEU-4")
    expected = _expected_table(files, ann)
    assert via_gts["CIDEr-D"].tolist() == expected.value_frame()["CIDEr-D"].tolist()
    assert any("References: gts.json" in t.value for t in at.text)
    rows = json.loads(files[1][1])
    short = [files[0], ("theirs.json", json.dumps(rows[2:]).encode())]
    at = _upload(at, short, ann)
    (error,) = [as_shown(e.value) for e in at.error]
    # the page's own words: its radio button, never the command line's --on-missing
    assert "theirs.json lacks 2 image_id(s)" in error and "--on-missing" not in error
    assert "choose “intersect” under “When a file lacks images another captions”" in error
    at.radio(key="systems_on_missing").set_value("intersect").run()
    _score(at)
    assert not at.error, [e.value for e in at.error]
    assert any(
        f"mine.json: 2 images dropped (not captioned by theirs): {rows[0]['image_id']!r}" in t.value
        for t in at.text
    )
    assert any("10 images" in h.value for h in at.subheader)


def test_a_removed_file_takes_its_error_with_it() -> None:
    files, _ = _uploads(10)
    bad = ("refs.json", json.dumps({"images": []}).encode())
    at = _upload(_page(), files, bad)
    (error,) = [e.value for e in at.error]
    assert "refs.json" in error
    at.file_uploader(key="systems_annotations").set_value(None).run()  # its ×
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    assert any("Upload the references file" in i.value for i in at.info)
    at.file_uploader(key="systems_results").set_value([]).run()
    assert not at.error and any("Upload one or more results files" in i.value for i in at.info)


def test_the_coco_caption_button_chooses_a_papers_metrics() -> None:
    """One click gives the metrics coco-caption reports, the table's columns in their order."""
    from capeval_core.metrics import COCO_CAPTION_KEYS

    at = _page(systems_metrics=["cider_d"])
    at.button(key="systems_coco_caption").click().run()
    assert not at.exception, at.exception
    assert at.multiselect(key="systems_metrics").value == list(COCO_CAPTION_KEYS)
    _score(at)
    summary = _frame(at, "BLEU-4")
    assert list(summary.columns[1:]) == [
        "BLEU-1", "BLEU-2", "BLEU-3", "BLEU-4", "METEOR", "ROUGE-L", "CIDEr-D", "SPICE"
    ]  # fmt: skip


def test_chart_panels_in_the_papers_order_in_rows_that_leave_room_for_ticks() -> None:
    from capeval_ui.systems_views import PANELS_PER_ROW, systems_chart
    from tests.core.test_systems_table import fixed_comparison

    comparison = fixed_comparison()  # seven metrics in selection order
    fig = systems_chart(comparison)
    titles = [a.text for a in fig.layout.annotations]
    assert titles == ["BLEU-1", "BLEU-4", "METEOR", "ROUGE-L", "CIDEr-D", "SPICE", "WMD"]
    domains = [fig.layout[f"xaxis{i if i > 1 else ''}"].domain for i in range(1, 8)]
    for left, right in itertools.pairwise(domains[:PANELS_PER_ROW]):
        assert right[0] - left[1] >= 0.07  # a gap for the next panel's y ticks
    assert domains[PANELS_PER_ROW][0] == domains[0][0]  # the fifth panel starts a new row
    bars = [t for t in fig.data if t.name == "A&amp;B_v2"]
    # on the paper table's scale, ×100 unless raw (test_review_findings checks the toggle)
    assert len(bars) == 7 and bars[4].y[0] == 100 * comparison.corpus["A&B_v2"]["cider_d"]


def test_a_row_opens_in_compare_with_the_tables_numbers() -> None:
    """The drill-down: a clicked row's parameters open Compare captions on both captions and
    the references with the table's tokenizer, SPICE parser and CIDEr-D IDF (the set's,
    registered by name), so its CIDEr-D for A and B is the table's for that image; another
    IDF source there says its CIDEr-D differs, and editing the captions drops the note."""
    from capeval_core.metrics.idf import register_reference_set
    from capeval_core.tokenize import get_tokenizer
    from capeval_ui import cached, state, systems_views
    from tests.app.test_workbench import COMPARE, _app

    files, ann = _uploads()
    at = _upload(_page(), files, ann)
    at.selectbox(key="systems_key").set_value("cider_d").run()
    top = _frame(at, "open").iloc[0]
    # the set's references, as the page registers them on a click (AppTest cannot click a
    # dataframe row); the document frequencies do not depend on the images' order
    refs = [list(r) for r in _frame(at, "open")["reference_list"]]
    idf = register_reference_set(refs, get_tokenizer("ptb"))
    held = SimpleNamespace(references=refs)  # what the page hands over: its SystemsInput
    assert cached.systems_reference_set(("this set",), "ptb", _data=held) == idf
    params = systems_views.compare_params(top, "ptb", idf, "mine", "theirs", "cider_d", 30)
    assert params["ref"] == list(top["reference_list"]) and params["idf"] == idf
    # the row's "open" link (a new tab) names the table's tokenizer and IDF (the
    # set as the page registered it, its images in the table's order); it named the captions
    # and references alone, and Compare took COCO val2014's IDF: other CIDEr-D values
    linked = parse_qs(urlsplit(top["open"]).query)
    assert {k: v for k, v in linked.items() if k not in ("idf", "from_idf")} == {
        k: v if isinstance(v, list) else [v]
        for k, v in params.items()
        if k not in ("idf", "from_idf")
    }
    new_tab = _app(**{k: v if k == "ref" else v[0] for k, v in linked.items()}).run()
    new_tab.switch_page(COMPARE).run()
    assert not new_tab.exception, new_tab.exception
    (opened,) = [tb.value for tb in new_tab.table if "higher" in tb.value.columns]
    opened_cider = opened.set_index("metric").loc["CIDEr-D"]
    assert opened_cider["A"] == pytest.approx(top["value_a"], rel=1e-12, abs=1e-15)
    assert opened_cider["B"] == pytest.approx(top["value_b"], rel=1e-12, abs=1e-15)
    note = systems_views.drill_down_note(top, "mine", "theirs", "cider_d", 30, idf)

    compare = _app(**params)
    compare.session_state[state.FROM_SYSTEMS] = note
    compare.run()
    compare.switch_page(COMPARE).run()
    assert not compare.exception, compare.exception
    assert compare.radio(key="cider_idf").value == note["idf_label"]
    assert [i for i in compare.info if "every number here is the table's" in i.value]
    (verdict,) = [tb.value for tb in compare.table if "higher" in tb.value.columns]
    cider = verdict.set_index("metric").loc["CIDEr-D"]
    assert cider["A"] == pytest.approx(top["value_a"], rel=1e-12, abs=1e-15)
    assert cider["B"] == pytest.approx(top["value_b"], rel=1e-12, abs=1e-15)
    # a reload names the IDF source as the drill-down did
    reloaded = _app(**params).run()
    reloaded.switch_page(COMPARE).run()
    assert len(refs) == 30 and reloaded.radio(key="cider_idf").value == note["idf_label"]
    (again,) = [tb.value for tb in reloaded.table if "higher" in tb.value.columns]
    assert again.equals(verdict)
    compare.radio(key="cider_idf").set_value("COCO val2014").run()
    assert [i for i in compare.info if "its value differs from the table's" in i.value]
    # once the captions are edited, the note is no longer about them
    compare.text_area(key="candidate").input("a different caption").run()
    assert not [i for i in compare.info if note["text"] in i.value]


def test_a_reload_of_an_image_opened_from_a_row_keeps_its_note() -> None:
    """The note saying which row of which table Compare captions shows (the table's values,
    and whether its CIDEr-D is the table's) was the session's alone: a reload, or the row's
    "open" link, showed the image without it. Once the captions are edited it goes, from
    the page and from its address."""
    from capeval_ui import state, systems_views
    from tests.app.test_workbench import COMPARE, _app

    files, ann = _uploads(12)
    at = _upload(_page(), files, ann)
    at.selectbox(key="systems_key").set_value("cider_d").run()
    top = _frame(at, "open").iloc[0]  # the page registered its set's IDF as it drew the row
    opened = parse_qs(urlsplit(top["open"]).query)
    params = {k: v if k == "ref" else v[0] for k, v in opened.items()}
    note = systems_views.drill_down_note(top, "mine", "theirs", "cider_d", 12, params["idf"])
    clicked = _app(**params)
    clicked.session_state[state.FROM_SYSTEMS] = note  # what a click on the row keeps
    clicked.run()
    clicked.switch_page(COMPARE).run()
    assert not clicked.exception, clicked.exception

    def said(app: AppTest) -> list[str]:
        return [i.value for i in app.info if i.value.startswith("Opened from Systems")]

    assert len(said(clicked)) == 1 and said(clicked)[0].startswith(note["text"])
    for source in (note["idf_label"], "COCO val2014"):  # the table's numbers, then others
        clicked.radio(key="cider_idf").set_value(source).run()
        url = {k: clicked.query_params[k] for k in clicked.query_params}
        reloaded = _app(**url).run()
        reloaded.switch_page(COMPARE).run()
        assert not reloaded.exception, reloaded.exception
        assert said(reloaded) == said(clicked), source
        idf = reloaded.radio(key="cider_idf")
        assert (idf.options, idf.value) == (clicked.radio(key="cider_idf").options, source)
        assert not [w for w in reloaded.warning if "not used" in w.value]
    clicked.text_area(key="candidate").input("a different caption").run()
    assert not said(clicked)
    assert not [name for name in clicked.query_params if name.startswith("from_")]


def test_a_link_with_a_broken_row_note_names_its_values_and_shows_none() -> None:
    """A hand-edited note (a value that is no number) is no note: the link's warning names
    it, and the address drops the note as the page shows none."""
    from tests.app.test_workbench import COMPARE, _app

    at = _app(candidate="a dog", ref="a dog runs", from_image="7", from_images="3",
              from_metric="bleu_4", from_a="A", from_b="B", from_a_value="0.5",
              from_b_value="lots", from_idf="set-0123").run()  # fmt: skip
    at.switch_page(COMPARE).run()
    assert not at.exception, at.exception
    assert not [i for i in at.info if i.value.startswith("Opened from Systems")]
    (warning,) = [w.value for w in at.warning if "not used" in w.value]
    assert (
        "values not used here: from_b_value=lots (not a number: no note of a Systems row is "
        "shown). The page" in as_shown(warning)
    ), warning
    assert not [name for name in at.query_params if name.startswith("from_")]


# -- scoring on request, the URL, links (issue 42) ------------------------------------------------
def _keys_shown(at: AppTest) -> list[str]:
    """The metric columns of the paper's table on the page."""
    return list(_frame(at, "system").columns[1:])


def test_scoring_waits_for_score_and_a_change_marks_the_table_out_of_date() -> None:
    files, ann = _uploads(12)
    at = _page()  # the demo is scored when the page opens
    demo = list(_frame(at, "system")["system"])
    at = _upload(at, files, ann, score=False)
    assert not at.error, [e.value for e in at.error]
    (stale,) = [w.value for w in at.warning if "out of date" in w.value]
    assert "the files, references or on-missing choice changed" in stale
    assert list(_frame(at, "system")["system"]) == demo  # still the demo's, until Score
    _score(at)
    assert list(_frame(at, "system")["system"]) == ["mine (baseline)", "theirs"]
    assert _keys_shown(at) == ["BLEU-4", "CIDEr-D"]
    assert not [w for w in at.warning if "out of date" in w.value]
    at.multiselect(key="systems_metrics").select("rouge_l").run()
    (stale,) = [w.value for w in at.warning if "out of date" in w.value]
    assert "the metrics changed" in stale
    assert _keys_shown(at) == ["BLEU-4", "CIDEr-D"]  # the table scored, marked, until Score
    at.number_input(key="systems_seed").set_value(7).run()
    (stale,) = [w.value for w in at.warning if "out of date" in w.value]
    assert "the metrics and the resampling changed" in stale
    _score(at)
    assert _keys_shown(at) == ["BLEU-4", "ROUGE-L", "CIDEr-D"]
    assert not [w for w in at.warning if "out of date" in w.value]


def test_the_metric_picker_names_the_metrics_as_the_table_does() -> None:
    at = _page(systems_metrics=["bleu_1", "cider_d"])
    picker = at.multiselect(key="systems_metrics")
    assert picker.value == ["bleu_1", "cider_d"]  # keys underneath, as the URL spells them
    shown = list(picker.proto.options)
    assert "BLEU-1" in shown and "CIDEr-D" in shown and "bleu_1" not in shown


def test_a_cancelled_or_superseded_run_is_said_so_and_an_unrelated_click_resumes_it() -> None:
    """What the page does after a run that did not finish (the browser test cancels a real
    one): Cancel stops it; new choices supersede it; a click that changes no number (the raw
    toggle) starts it again."""
    from capeval_ui import systems_state

    at = _page()
    (request,) = [at.session_state[systems_state.TABLE]["request"]]
    at.session_state[systems_state.RUNNING] = request
    at.session_state[systems_state.CANCELLED] = True
    at.run()
    assert any("Scoring cancelled" in i.value for i in at.info)
    assert systems_state.RUNNING not in at.session_state
    at.session_state[systems_state.RUNNING] = request
    at.multiselect(key="systems_metrics").select("rouge_l").run()
    assert any("the choices changed while it ran" in i.value for i in at.info)
    assert _keys_shown(at) == ["BLEU-4", "CIDEr-D"]
    _score(at)
    now = at.session_state[systems_state.TABLE]["request"]
    at.session_state[systems_state.RUNNING] = now
    at.session_state[systems_state.TABLE] = None  # the run that was cut short had no table
    at.toggle(key="systems_raw").set_value(True).run()
    assert not [i for i in at.info if "stopped" in i.value or "cancelled" in i.value]
    assert _keys_shown(at) == ["BLEU-4", "ROUGE-L", "CIDEr-D"]  # resumed, and finished


def _open_link(params: dict[str, Any]) -> AppTest:
    """A link opened in a new browser: a new session whose URL holds ``params``."""
    at = AppTest.from_file(str(ROOT / PAGE), default_timeout=TIMEOUT)
    for key, value in params.items():
        at.query_params[key] = value
    at.run()
    assert not at.exception, at.exception
    return at


def _link(at: AppTest) -> dict[str, Any]:
    """The page's URL, as "Copy link" shows it."""
    (popover,) = [p for p in at.get("popover") if p.proto.popover.label == "Copy link"]
    (code,) = [c.value for c in popover.code]
    query = parse_qs(code.partition("?")[2])
    current = {k: at.query_params[k] for k in at.query_params}
    assert {k: v if isinstance(v, list) else [v] for k, v in current.items()} == query
    return {k: v if len(v) > 1 else v[0] for k, v in query.items()}


def test_every_choice_is_in_the_url_and_a_link_reopens_the_same_numbers() -> None:
    from capeval_ui import systems_state

    systems_state.forget_all_files()
    files, ann = _uploads(12)
    at = _upload(_page(), files, ann, score=False)
    at.text_input(key="systems_names").set_value("Ours, Theirs").run()
    at.selectbox(key="systems_baseline").set_value("Theirs").run()
    at.radio(key="systems_paired").set_value("bs").run()
    at.radio(key="systems_on_missing").set_value("intersect").run()
    _score(at)
    at.toggle(key="systems_raw").set_value(True).run()
    at.selectbox(key="systems_key").set_value("cider_d").run()
    link = _link(at)
    assert link["source"] == "upload" and link["references"] == "file"
    assert (link["names"], link["baseline"]) == ("Ours, Theirs", "Theirs")
    assert link["metric"] == KEYS and link["paired"] == "bs"
    assert (link["on_missing"], link["raw"], link["differences"]) == ("intersect", "1", "cider_d")
    assert (link["resamples"], link["trials"], link["scored"]) == ("200", "500", "1")
    assert len(link["files"]) == systems_state.PREFIX
    assert link["tokenizer"] == "ptb"  # the table's numbers depend on it too
    # another browser on the same server: the same table, scored on opening
    again = _open_link(link)
    assert not again.error, [e.value for e in again.error]
    assert again.multiselect(key="systems_metrics").value == KEYS
    assert again.toggle(key="systems_raw").value is True
    for frame in ("system", "open"):
        pd_equal = _frame(again, frame).equals(_frame(at, frame))
        assert pd_equal, frame
    assert _link(again) == link


def test_a_link_to_an_out_of_date_demo_table_waits_for_score() -> None:
    """The demo's link after a change not yet scored (no scored=1) opened a table scored
    on opening, of other metrics and numbers than the table the link was copied from."""
    at = _page()  # the demo, scored on opening
    at.multiselect(key="systems_metrics").set_value(["bleu_4", "rouge_l"]).run()
    assert [w for w in at.warning if "out of date" in w.value]
    link = _link(at)
    assert "scored" not in link
    again = _open_link(link)
    assert not again.dataframe and not again.get("plotly_chart")
    assert again.multiselect(key="systems_metrics").value == ["bleu_4", "rouge_l"]
    assert _link(again) == link  # and its own link is the one it was opened from
    _score(again)
    assert _keys_shown(again) == ["BLEU-4", "ROUGE-L"]
    # a link of a table shown (scored=1) is scored on opening, the demo's too
    scored = _link(again)
    assert scored["scored"] == "1" and _keys_shown(_open_link(scored)) == ["BLEU-4", "ROUGE-L"]


def test_a_link_to_files_the_server_does_not_hold_says_so_and_shows_no_numbers() -> None:
    """After a restart the link's uploads are gone: the page says so at the top, keeps the
    link's choices and URL, and shows no numbers until the user uploads the files again (the
    table then waits for Score) or opens the demo."""
    from capeval_ui import systems_state

    files, ann = _uploads(12)
    at = _upload(_page(systems_metrics=["cider_d"]), files, ann)
    at.text_input(key="systems_names").set_value("Ours, Theirs").run()
    _score(at)
    link = _link(at)
    expected = _frame(at, "system")
    systems_state.forget_all_files()  # the server restarted
    opened = _open_link(link)
    (notice,) = [w.value for w in opened.warning]
    assert "This link's results files are not on this server" in notice
    assert not opened.dataframe and not opened.error
    assert opened.multiselect(key="systems_metrics").value == ["cider_d"]
    assert opened.session_state["systems_names"] == "Ours, Theirs"  # drawn once files come
    assert {k: opened.query_params[k] for k in opened.query_params} == link  # kept as opened
    # the user decides: the same files again, then Score
    opened = _upload(opened, files, ann, score=False)
    assert not [w for w in opened.warning if "not on this server" in w.value]
    assert not [df for df in opened.dataframe if "system" in df.value.columns]
    _score(opened)
    assert _frame(opened, "system").equals(expected)
    # or the demo
    systems_state.forget_all_files()
    demo = _open_link(link)
    demo.button(key="systems_open_demo").click().run()
    assert not demo.exception, demo.exception
    assert demo.radio(key="systems_source").value == "Demo: three systems on COCO val2014"
    assert "first caption (baseline)" in list(_frame(demo, "system")["system"])


def test_the_demo_chosen_after_a_link_to_absent_files_has_its_own_address() -> None:
    """Chosen with the radio (not "Open the demo"), the demo was scored while the address kept
    the link's uploads: a reload or a copied link showed the upload notice and no table."""
    from capeval_ui import systems_state

    systems_state.forget_all_files()
    link = {"source": "upload", "metric": ["bleu_4", "rouge_l"], "files": "0123456789abcdef",
            "scored": "1"}  # fmt: skip
    at = _open_link(link)
    assert [w for w in at.warning if "not on this server" in w.value]
    at.radio(key="systems_source").set_value("Demo: three systems on COCO val2014").run()
    at.multiselect(key="systems_metrics").set_value(["bleu_4"]).run()
    _score(at)
    shown = _frame(at, "system")
    now = _link(at)
    assert now["source"] == "demo" and "files" not in now and now["metric"] == "bleu_4"
    again = _open_link(now)  # the copied link reopens the same table
    assert _frame(again, "system").equals(shown)
    # a demo link naming files: the files are no upload to wait for
    at = _open_link({"source": "demo", "metric": "bleu_4", "files": "garbage"})
    at.multiselect(key="systems_metrics").set_value(["bleu_4", "rouge_l"]).run()
    _score(at)
    now = _link(at)
    assert now["metric"] == ["bleu_4", "rouge_l"] and "files" not in now


def test_a_limit_is_named_as_the_apps_never_as_a_command_line_flag() -> None:
    """A caption over the token limit: the loader names the file and the image; the page says
    it keeps the limit (the command line raises it), never to use a flag here."""
    files, ann = _uploads(10)
    rows = json.loads(files[1][1])
    rows[3]["caption"] = "a dog " * 600
    files[1] = ("theirs.json", json.dumps(rows).encode())
    at = _upload(_page(), files, ann, score=False)
    (error,) = [e.value for e in at.error]
    assert "theirs.json" in error and "1,000-token limit" in error
    assert "the page keeps this limit" in error and "raise it with" not in error


def test_an_edited_link_opens_with_the_nearest_choices_the_page_offers() -> None:
    """A hand-edited link: numbers outside the controls' bounds are brought within them,
    values the page does not offer give way to the defaults; no crash, no error."""
    at = _open_link(
        {
            "source": "demo",
            "resamples": "5",
            "seed": "99999999999",
            "paired": "t-test",
            "metric": ["bleu_4", "no_such_metric"],
            "on_missing": "maybe",
        }
    )
    assert not at.error, [e.value for e in at.error]
    assert at.number_input(key="systems_resamples").value == 100
    assert at.number_input(key="systems_seed").value == 2**32 - 1
    assert at.radio(key="systems_paired").value == "both"
    assert at.multiselect(key="systems_metrics").value == ["bleu_4"]
    assert _keys_shown(_score(at)) == ["BLEU-4"]  # a link without scored=1 waits for Score


def test_a_system_named_by_its_file_is_shown_as_typed() -> None:
    """A file name went into the baseline's caption as Markdown (bold text, maths)."""
    files, annotations = _uploads(12)
    files = [("**mine** $x$.json", files[0][1]), files[1]]
    at = _upload(_page(), files, annotations)
    assert not at.error, [e.value for e in at.error]
    captions = [c.value for c in at.caption]
    assert "Against the baseline, \\*\\*mine\\*\\* \\$x\\$:" in captions


def test_a_refused_upload_keeps_the_files_uploaded_before() -> None:
    """A bad results file replaced the good ones it followed: they had to be uploaded again.
    Then they were kept, but their table went, and the URL named the refused set: a reload
    opened that set, its error and no table. Now the good files stay in use with their table,
    in the URL too, and removing the refused upload changes nothing."""
    files, annotations = _uploads(12)
    at = _upload(_page(), files, annotations)
    assert not at.error
    table = _frame(at, "BLEU-4")
    link = _link(at)
    for bad in (b"[", json.dumps([{"image_id": 1, "caption": "a"}] * 2).encode()):
        at.file_uploader(key="systems_results").set_value([("bad.json", bad, "application/json")])
        at.run()
        assert not at.exception, at.exception
        (error,) = [e.value for e in at.error]
        assert "bad.json" in error
        texts = [t.value for t in at.text]
        assert (
            "The files uploaded before stay in use: mine.json, theirs.json; references: "
            "captions.json. Remove the new upload (its ×) or upload a corrected one."
        ) in texts
        assert _frame(at, "BLEU-4").equals(table)
        assert _link(at) == link  # a reload or a link opens the good files
    reopened = _open_link(link)
    assert not reopened.error and _frame(reopened, "BLEU-4").equals(table)
    at.file_uploader(key="systems_results").set_value([]).run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    texts = [t.value for t in at.text]
    before = "Using the results files uploaded before: mine.json, theirs.json"
    assert any(t.startswith(before) for t in texts)
    assert _frame(at, "BLEU-4").equals(table)


def test_a_refused_first_upload_is_not_in_the_url() -> None:
    """The URL named a refused upload's digest: a reload opened it again, with its error."""
    at = _page()
    at.radio(key="systems_source").set_value("Upload results files").run()
    at.file_uploader(key="systems_results").set_value([("bad.json", b"[", "application/json")])
    at.run()
    assert [e.value for e in at.error]
    assert "files" not in at.query_params  # no Copy link before a table: the address is it


def test_the_same_references_renamed_are_named_as_uploaded() -> None:
    """The comparison is cached on the files' contents: the notes named the references file
    the table was first scored with after the same references came as another file."""
    files, ann = _uploads(12)
    at = _upload(_page(), files, ann)
    assert not at.error, [e.value for e in at.error]
    assert any(f"references: {ann[0]} " in t.value for t in at.text)
    at = _upload(at, files, ("renamed.json", ann[1]))
    assert not at.error, [e.value for e in at.error]
    notes = [t.value for t in at.text if "references: " in t.value]
    assert notes and all("references: renamed.json " in n for n in notes), notes


def test_a_single_images_cider_note_is_shown() -> None:
    """The page ignored the note: CIDEr-D 0 for one image, with no word why."""
    files, ann = _uploads(1)
    at = _upload(_page(), files, ann)
    assert not at.error, [e.value for e in at.error]
    notes = [as_shown(w.value) for w in at.warning if "single image" in w.value]
    assert len(notes) == 1 and notes[0].endswith("Score more images together."), notes


def test_the_note_of_a_row_opened_in_compare_shows_names_as_typed() -> None:
    """System names went into Compare's st.info as Markdown (bold, a live link)."""
    import pandas as pd

    from capeval_ui.systems_views import drill_down_note

    row = pd.Series(
        {"image_id": "*7*", "caption_a": "a", "caption_b": "b", "value_a": 0.1, "value_b": 0.2}
    )
    note = drill_down_note(row, "**A** [x](http://e.example)", "B", "bleu_4", 3, "set-1")
    assert "\\*\\*A\\*\\* \\[x\\]\\(http:\u2060//e.example\\)" in note["text"]
    assert "image \\*7\\*" in note["text"]


def test_two_results_files_of_one_name_are_numbered() -> None:
    """Two models' results.json stopped the page ("both give the system name 'results'"),
    and the names box that could fix it only shows once files load: a dead end."""
    files, ann = _uploads(12)
    same = [("results.json", files[0][1]), ("results.json", files[1][1])]
    at = _upload(_page(), same, ann)
    assert not at.error, [e.value for e in at.error]
    assert list(_frame(at, "BLEU-4")["system"])[:2] == ["results (baseline)", "results (2)"]
    said = [t.value for t in at.text if t.value.startswith("Results files with the same name")]
    assert said == [
        "Results files with the same name are numbered: results.json as 'results (2)'. Name "
        "the systems under “System names and baseline”."
    ]


@pytest.mark.parametrize("typed", ["A, A, B", "A, , B"])
def test_names_typed_twice_or_empty_keep_the_table(typed: str) -> None:
    """Names given twice, or one left empty, removed the table with an error that blamed
    "results files demo and demo" and asked to "give names explicitly"."""
    at = _page()
    table = _frame(at, "BLEU-4")
    at.text_input(key="systems_names").set_value(typed).run()
    assert not at.error, [e.value for e in at.error]
    (said,) = [w.value for w in at.warning if w.value.startswith("System names:")]
    assert "each must be given and differ from the others" in said
    assert _frame(at, "BLEU-4").equals(table)


def test_a_links_baseline_or_switch_the_page_cannot_use_is_named() -> None:
    """baseline=nonexistent became the first system, raw=maybe became off: no word."""
    at = _open_link(
        {"source": "demo", "metric": "bleu_4", "baseline": "nonexistent", "raw": "maybe"}
    )
    (said,) = [w.value for w in at.warning if "values not used here" in w.value]
    assert "baseline=nonexistent" in said and "raw=maybe" in said


def test_a_links_differences_the_page_cannot_use_are_named_before_score() -> None:
    """A link without scored=1 waits for Score: its a, b and differences were kept as they
    came, in the address too, and dropped without a word once Score drew the table."""
    link = {"source": "demo", "metric": ["bleu_4", "rouge_l"], "a": "nobody",
            "b": "first caption reversed", "differences": "spice"}  # fmt: skip
    at = _open_link(link)
    (said,) = [as_shown(w.value) for w in at.warning if "values not used here" in w.value]
    assert "a=nobody" in said and "differences=spice" in said and "b=" not in said, said
    shown = _link(at)  # what Score will show: the first system, the link's b, a metric
    assert (shown["a"], shown["b"], shown["differences"]) == (
        "first caption", "first caption reversed", "bleu_4"
    )  # fmt: skip
    _score(at)
    assert not [w for w in at.warning if "values not used here" in w.value]
    assert at.selectbox(key="systems_a").value == "first caption"
    assert at.selectbox(key="systems_b").value == "first caption reversed"
    assert at.selectbox(key="systems_key").value == "bleu_4"
    assert {k: v for k, v in _link(at).items() if k != "scored"} == shown


def test_a_new_baseline_is_said_as_such_in_the_out_of_date_note() -> None:
    """Choosing another baseline said "the files, references or on-missing choice changed"."""
    at = _page()
    systems = list(_frame(at, "BLEU-4")["system"])
    at.selectbox(key="systems_baseline").select(systems[1]).run()
    (note,) = [w.value for w in at.warning if "out of date" in w.value]
    assert "the names or the baseline changed" in note and "files" not in note


def test_the_baseline_follows_its_file_when_the_systems_are_renamed() -> None:
    """A baseline chosen, then names typed: the baseline went back to the first file, and
    the table was scored against another system without a word."""
    at = _page()
    systems = list(at.selectbox(key="systems_baseline").options)
    at.selectbox(key="systems_baseline").select(systems[2]).run()
    at.text_input(key="systems_names").set_value("X, Y, Z").run()
    assert not at.exception, at.exception
    assert at.selectbox(key="systems_baseline").value == "Z"


def test_the_baseline_follows_its_file_when_the_names_are_swapped() -> None:
    """Names A, B, C with B the baseline, then B, A, C: the picker still read B, now the
    first file, and Δ and p were computed against another system without a word."""
    at = _page()
    at.text_input(key="systems_names").set_value("A, B, C").run()
    at.selectbox(key="systems_baseline").select("B").run()
    at.text_input(key="systems_names").set_value("B, A, C").run()
    assert not at.exception, at.exception
    assert at.selectbox(key="systems_baseline").value == "A"  # the second file's new name
    at.text_input(key="systems_names").set_value("C, A, B").run()
    assert at.selectbox(key="systems_baseline").value == "A"


def test_a_link_reopened_in_the_session_keeps_its_baseline() -> None:
    """The baseline follows its file on a rename, but a link's names and baseline are taken
    as they are: reopened in the same session (Back, an address written a few runs ago), a
    link naming "theirs, mine" with baseline mine had its baseline moved to the first file."""
    files, ann = _uploads(12)
    at = _upload(_page(), files, ann)
    at.text_input(key="systems_names").set_value("theirs, mine").run()
    at.selectbox(key="systems_baseline").select("mine").run()
    link = _link(at)
    assert link["baseline"] == "mine"
    at.text_input(key="systems_names").set_value("").run()
    at.selectbox(key="systems_baseline").select("theirs").run()
    for key, value in link.items():  # the same address, opened again in this session
        at.query_params[key] = value
    at.run()
    assert not at.exception, at.exception
    assert at.session_state["systems_names"] == "theirs, mine"
    assert at.selectbox(key="systems_baseline").value == "mine"
    assert at.query_params["baseline"] == "mine"


def test_blank_captions_of_a_results_file_are_named() -> None:
    """A results file with "" captions was scored without a word (as pycocoevalcap scores
    them); the page names the file and the images, each with its record and line as the
    command line names them (it gave bare ids)."""
    files, ann = _uploads(12)
    rows = json.loads(files[1][1])
    rows[3]["caption"] = ""
    text = json.dumps(rows, indent=1).encode()  # four lines a record: record 4 on line 14
    at = _upload(_page(), [files[0], (files[1][0], text)], ann)
    blank = [t.value for t in at.text if "are blank" in t.value]
    assert blank == [
        f"{files[1][0]}: 1 of 12 caption(s) are blank, each scored as an empty caption (as "
        f"pycocoevalcap scores it): image {rows[3]['image_id']!r} (record 4, line 14)"
    ]
    assert not at.error and _frame(at, "system") is not None


def test_a_refused_upload_with_choices_that_refuse_the_files_before_says_one_thing() -> None:
    """Files that read well with "intersect", a bad upload, then "error": the page said the
    bad file's error, that the files before stay in use, then refused those too."""
    files, ann = _uploads(12)
    short = json.loads(files[1][1])[:-2]  # the second file lacks two images
    files = [files[0], (files[1][0], json.dumps(short).encode())]
    at = _page(systems_on_missing="intersect")
    at = _upload(at, files, ann)
    assert not at.error, [e.value for e in at.error]
    at.file_uploader(key="systems_results").set_value([("bad.json", b"[", "application/json")])
    at.run()
    assert any("stay in use" in t.value for t in at.text)
    at.radio(key="systems_on_missing").set_value("error").run()
    assert not at.exception, at.exception
    (error,) = [e.value for e in at.error]
    assert "bad.json" in error
    assert not any("stay in use" in t.value for t in at.text)


def test_the_kept_files_note_names_the_references_in_use() -> None:
    """After a refused upload with COCO val2014 chosen as references, the note still named
    the references file uploaded before."""
    files, ann = _uploads(12)  # COCO val2014 images: their references are installed
    at = _upload(_page(), files, ann)
    at.file_uploader(key="systems_results").set_value([("bad.json", b"[", "application/json")])
    at.run()
    at.radio(key="systems_references").set_value("COCO val2014 (installed)").run()
    (note,) = [t.value for t in at.text if "stay in use" in t.value]
    assert note.startswith("The files uploaded before stay in use: mine.json, theirs.json.")


def _served(at: AppTest) -> tuple[str, str]:
    """The addresses the two per-image downloads serve: named by a digest of their bytes."""
    labels = ("Per-image scores (CSV)", "Per-image scores (JSON)")
    urls = {b.proto.label: b.proto.url for b in at.get("download_button")}
    return urls[labels[0]], urls[labels[1]]


def test_the_per_image_downloads_follow_the_table_shown() -> None:
    """The downloads were cached by the files and the resampling alone: after the metrics or
    the tokenizer changed and Score was pressed, they served the earlier table's values."""
    files, ann = _uploads(12)
    at = _upload(_page(), files, ann)
    served = [_served(at)]
    at.multiselect(key="systems_metrics").set_value(["rouge_l"]).run()
    _score(at)
    served.append(_served(at))
    at.session_state["tokenizer"] = "whitespace"  # the sidebar's choice (the page alone here)
    at.run()
    _score(at)
    served.append(_served(at))
    csv, json_ = zip(*served, strict=True)
    assert len(set(csv)) == 3 and len(set(json_)) == 3, served


def _shown(df: Any) -> Any:
    """A dataframe's cells as the browser draws them (its Styler's display values)."""
    import pyarrow as pa

    styler = df.proto.arrow_data.styler
    assert styler.display_values, "expected the app's rule to write the cells"
    return pa.ipc.open_stream(styler.display_values).read_pandas()


def _view(comparison: Any, key: str, n_images: int) -> Any:
    """The differences of "Base" and "small|model" on ``key``, as the page asks for them."""
    from capeval_ui import systems_views

    return systems_views.DifferencesView(
        comparison=comparison,
        a="Base",
        b="small|model",
        key=key,
        tokenizer="ptb",
        idf="corpus",
        n_images=n_images,
    )


def _near_zero_tables() -> None:
    """The full table and the differences of a comparison whose Δ and B − A are a hair
    below zero (0.3 against 0.1 + 0.2), with an interval end that shows as zero and one that
    does not."""
    import dataclasses

    import numpy as np

    from capeval_core.stats.resampling import PairedResult
    from capeval_ui import systems_views
    from tests.app.test_systems_page import _view
    from tests.core.test_systems_table import fixed_comparison

    c = fixed_comparison()
    hair = 0.3 - (0.1 + 0.2)
    paired = {
        k: {**by, "small|model": PairedResult(hair, (-4e-05, -6e-05), 0.2, 0.2)}
        for k, by in c.paired.items()
    }
    n = len(c.scores.input.image_ids)
    items = {
        s: {k: np.full(n, 0.1 + 0.2 if s == "Base" else 0.3) for k in c.keys} for s in c.systems
    }
    c = dataclasses.replace(c, scores=dataclasses.replace(c.scores, items=items), paired=paired)
    systems_views.render_table(c)
    systems_views.render_differences(_view(c, "bleu_4", n))


def test_a_difference_that_rounds_to_zero_reads_without_a_minus() -> None:
    """A Δ of -5.6e-17 (0.3 against 0.1 + 0.2) read -0.0000 in the full table, and B − A so
    in the differences (whose note counted the image as one that differs): both read
    +0.0000 now. A real Δ end of -4e-05 or -6e-05 read -0.0000 or -0.0001: "> −0.001" now, by
    the app's rule, as the p-values are (they read 0.2 and 0.0321 by %.4g before)."""
    from capeval_ui.formats import format_pvalue, format_signed

    at = AppTest.from_function(_near_zero_tables, default_timeout=TIMEOUT).run()
    assert not at.exception, at.exception
    # the table against the baseline: its rows are the other systems'
    (paired,) = [
        df for df in at.dataframe if "delta" in df.value and "Base" not in set(df.value["system"])
    ]
    (items,) = [df for df in at.dataframe if "difference" in df.value.columns]
    shown = {
        column: set(_shown(df)[column])
        for df, columns in (
            (paired, ("delta", "delta_ci_low", "delta_ci_high", "p_value")),
            (items, ("difference",)),
        )
        for column in columns
    }
    assert shown["delta"] == {"+0.0000", "+0.0213"}, shown
    assert shown["delta_ci_low"] == {"> −0.001", "+0.0100"}
    assert shown["delta_ci_high"] == {"> −0.001", "+0.0300"}
    assert shown["difference"] == {"+0.0000"}
    p_values = paired.value.set_index("system")["p_value"]
    assert shown["p_value"] == {format_pvalue(p) for p in p_values}
    assert format_signed(-6e-05) == "> −0.001"
    assert any(c.value.startswith("0 of 50 images differ") for c in at.caption)


def _near_zero_differences() -> None:
    """The differences of BLEU-4 values closer to 0 than 0.001 (the issue's 1.014e-08 among
    them), a difference that is float noise, and ordinary values."""
    import dataclasses

    import numpy as np

    from capeval_ui import systems_views
    from tests.app.test_systems_page import _view
    from tests.core.test_systems_table import fixed_comparison

    c = fixed_comparison()
    n = len(c.scores.input.image_ids)
    base = np.full(n, 0.3)
    base[:4] = [1.014e-08, 0.0, 4e-05, 0.25]
    other = np.full(n, 0.1 + 0.2)
    other[:4] = [0.0, 2e-05, 4e-05, 0.5]
    items = {s: {k: base if s == "Base" else other for k in c.keys} for s in c.systems}
    c = dataclasses.replace(c, scores=dataclasses.replace(c.scores, items=items))
    systems_views.render_differences(_view(c, "bleu_4", n))


def test_differences_write_values_near_zero_as_compare_does() -> None:
    """BLEU-4's 1.014e-08 read 0.0000 in "Where two systems differ" (and 1e-04 as 0.0001),
    where Compare captions writes "< 0.001"; the cells keep their values, so the columns
    sort by them, and a difference that is float noise reads +0.0000 and is not counted."""
    from capeval_ui.formats import SMALL_TEXT, format_number, format_signed

    at = AppTest.from_function(_near_zero_differences, default_timeout=TIMEOUT).run()
    assert not at.exception, at.exception
    (df,) = [df for df in at.dataframe if "difference" in df.value.columns]
    values, shown = df.value, _shown(df)
    for column in ("value_a", "value_b"):
        assert values[column].dtype == float  # sortable by value
        assert list(shown[column]) == [format_number(v) for v in values[column]]
    assert list(shown["difference"]) == [format_signed(v) for v in values["difference"]]
    row = dict(zip(values["value_a"], shown["value_a"], strict=True))
    assert row[1.014e-08] == row[4e-05] == SMALL_TEXT and row[0.0] == "0.0000"
    by_image = dict(zip(values["image_id"], shown["difference"], strict=True))
    assert by_image[0] == "> −0.001" and by_image[1] == "< +0.001" and by_image[2] == "+0.0000"
    assert by_image[4] == "+0.0000"  # 0.3 against 0.1 + 0.2
    assert any(c.value.startswith("3 of 50 images differ") for c in at.caption)
    help_a = json.loads(df.proto.columns)["value_a"]["help"]
    assert "< 0.001: closer to 0 than 0.001" in help_a


def test_the_differences_view_holds_what_a_rows_table_link_and_note_need() -> None:
    """``differences_frame`` and ``render_differences`` took the same seven arguments, and the
    page passed them again, in other orders, to the row's link and note: one view now holds
    them. Each row's "open" link and the note a click keeps are the view's, and the same as
    the functions give from the seven values."""
    import dataclasses

    import numpy as np

    from capeval_ui import systems_views
    from tests.core.test_systems_table import fixed_comparison

    c = fixed_comparison()
    n = len(c.scores.input.image_ids)
    items = {s: {k: np.linspace(0, i + 1, n) for k in c.keys} for i, s in enumerate(c.systems)}
    c = dataclasses.replace(c, scores=dataclasses.replace(c.scores, items=items))
    view = _view(c, "cider_d", n)
    table = systems_views.differences_frame(view)
    assert len(table) == n and list(table["image_id"]) != []
    for _, row in table.iterrows():
        params = systems_views.compare_params(
            row, "ptb", "corpus", "Base", "small|model", "cider_d", n
        )
        assert view.compare_params(row) == params
        assert row["open"] == systems_views.compare_link(params)
        assert view.drill_down_note(row) == systems_views.drill_down_note(
            row, "Base", "small|model", "cider_d", n, "corpus"
        )
    assert row["references"] == " | ".join(row["reference_list"])
