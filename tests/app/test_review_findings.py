"""Findings of a browser review of the pages, each checked on what the server sends: files
the Systems page's readers explain are let through to them, Compare's timing line says what
it timed, and Judgments says its summary once."""

from __future__ import annotations

import gzip
import json

import pytest

from tests.app.test_systems_page import _frame, _page, _upload, _uploads

#: files a user may give where JSON is read, each with what the reader says of it
MISREAD = {
    "mine.jsonl": (
        b'{"image_id": 1, "caption": "a"}\n{"image_id": 2, "caption": "b"}\n',
        "JSON Lines",
    ),
    "mine.json.gz": (gzip.compress(b"[]"), "gzip-compressed; decompress it first"),
    "mine.csv": (b"image_id,caption\n1,a dog\n", "reads like a CSV file"),
}


@pytest.fixture(autouse=True)
def _own_score_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("CAPEVAL_SCORES_CACHE_DIR", str(tmp_path / "scores"))


def _accepts(types: list[str], name: str) -> bool:
    """Whether the browser lets ``name`` through an uploader of ``types`` (none: any file)."""
    return not types or any(name.lower().endswith(t.lower()) for t in types)


@pytest.mark.parametrize("key", ["systems_results", "systems_annotations"])
def test_systems_uploaders_let_files_through_to_the_readers_message(key: str) -> None:
    """``type=["json"]`` gave a .jsonl, .json.gz or .csv file only the browser's red chip
    ("files are not allowed", on hover): the reader's line saying what the file is (JSON
    Lines, gzip, CSV) was never reached."""
    files, annotations = _uploads(12)
    at = _upload(_page(), files, annotations)
    (uploader,) = [u for u in at.get("file_uploader") if u.proto.id.endswith(key)]
    for name in MISREAD:
        assert _accepts(list(uploader.proto.type), name), (key, name, list(uploader.proto.type))
    table = _frame(at, "BLEU-4")
    for name, (data, said) in MISREAD.items():
        if key == "systems_results":
            at.file_uploader(key=key).set_value([(name, data, "application/octet-stream")])
        else:
            at.file_uploader(key=key).set_value((name, data, "application/octet-stream"))
        at.run()
        assert not at.exception, at.exception
        (error,) = [e.value for e in at.error]
        assert name.replace(".", "") in error.replace("\\", "").replace(".", ""), error
        assert said in error, error
        assert _frame(at, "BLEU-4").equals(table)


def test_compare_says_the_time_the_shown_scores_took() -> None:
    """After another evidence tab was opened, the line said "Scored on the server in 6 ms" of
    a caption that took seconds: it timed the rerun, which read the scores from the cache."""
    from streamlit.testing.v1 import AppTest

    from capeval_ui import cached
    from tests.app.apptest import ROOT, TIMEOUT, open_tab

    cached.clear_scores()
    at = AppTest.from_file(str(ROOT / "app_pages" / "compare.py"), default_timeout=TIMEOUT)
    at.run()
    assert not at.exception, at.exception

    def timing() -> str:
        (line,) = [c.value for c in at.caption if c.value.startswith("Scored on the server")]
        return line

    first = timing()
    assert "kept" not in first, first
    open_tab(at, "ROUGE-L")
    again = timing()
    assert again.split(":")[0] == first.split(":")[0], (first, again)
    assert again.endswith("(these scores were kept: shown again without scoring)."), again


def test_judgments_says_its_summary_once() -> None:
    """ "20 read, 20 scored" was printed under the heading and again under the cards."""
    from streamlit.testing.v1 import AppTest

    from tests.app.apptest import ROOT, TIMEOUT

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
    at.run()
    at.switch_page("app_pages/judgments.py").run()
    at.button(key="load_demo").click().run()
    assert not at.exception, at.exception
    from capeval_ui import state

    jset = at.session_state[state.JSET_KEY]
    summary = jset.describe()
    said = [t.value for t in at.text if summary in t.value]
    assert said == [str(jset)], said


def test_lab_batch_names_metrics_and_correlations_as_the_other_pages() -> None:
    """The batch summary's ``key`` column showed bleu_4 beside the examples' BLEU-4, and its
    correlation chart's axis read "pearson with quality/score" where the other pages say
    "Pearson r"."""
    from tests.app.test_perturb_page import _loaded_batch

    at = _loaded_batch()
    (summary,) = [df for df in at.dataframe if "mean delta" in df.value.columns]
    assert summary.proto.column_order[0] == "metric"
    assert "key" not in summary.proto.column_order
    assert list(summary.value["metric"]) == ["BLEU-4", "ROUGE-L"]
    (examples,) = [df for df in at.dataframe if "perturbed" in df.value.columns]
    assert {"BLEU-4", "ROUGE-L"} <= set(examples.value.columns)
    (corr,) = [df for df in at.dataframe if "method" in df.value.columns]
    assert "key" not in corr.proto.column_order
    assert set(corr.value["method"]) <= {"Pearson r", "Spearman ρ", "Kendall τb", "Kendall τc"}
    (chart,) = [e for e in at.get("plotly_chart") if e.proto.id.endswith("-corr")]
    title = json.loads(chart.proto.spec)["layout"]["yaxis"]["title"]["text"]
    assert title.startswith("Pearson r with "), title


def test_lab_one_caption_table_names_metrics_as_the_chart() -> None:
    """The one-caption table's ``key`` column showed bleu_4 beside its chart's BLEU-4."""
    from tests.app.test_perturb_page import _lab

    at = _lab(lab_perturbations=["shuffle"])
    (deltas,) = [df for df in at.dataframe if "delta" in df.value.columns]
    assert "key" not in deltas.proto.column_order and "metric" in deltas.proto.column_order
    assert list(deltas.value["metric"]) == ["BLEU-1", "BLEU-4", "ROUGE-L"]


def test_systems_chart_follows_the_tables_scale() -> None:
    """The table said "Values ×100, one decimal" while the bars below were on the raw scale
    (0–1, 0–10 for CIDEr-D) with "Raw values" off."""
    at = _page()

    def drawn() -> tuple[dict, dict]:
        table = next(df.value for df in at.dataframe if df.value.columns[0] == "system")
        (chart,) = [e for e in at.get("plotly_chart") if e.proto.id.endswith("systems_chart")]
        return table.set_index("system"), json.loads(chart.proto.spec)

    for raw, title, decimals in ((False, "×100", 1), (True, "Raw values", 4)):
        at.toggle(key="systems_raw").set_value(raw).run()
        assert not at.exception, at.exception
        table, spec = drawn()
        assert title in spec["layout"]["title"]["text"]
        titles = [a["text"] for a in spec["layout"]["annotations"]]
        bars = [t for t in spec["data"] if t["type"] == "bar"]
        assert bars
        for trace in bars:
            panel = int(trace["xaxis"][1:] or 1) - 1
            system = next(r for r in table.index if r.startswith(trace["name"]))
            cell = table.loc[system, titles[panel]]
            assert trace["customdata"] == [cell]  # the hover is the table's cell
            assert cell.startswith(f"{trace['y'][0]:.{decimals}f}"), (cell, trace["y"])
