"""A number reads the same in a table and in the chart beside it, on every page: chart labels
and hover text are written by the same Python formatter as the table's cells (plotly's d3
rounds a tie up, 89.25 -> 89.3, where Python rounds it to even, 89.2), with the same number
of decimals."""

from __future__ import annotations

import json
from typing import Any

import pyarrow as pa
from streamlit.testing.v1 import AppTest

from capeval_ui import store
from tests.app.apptest import ROOT, TIMEOUT
from tests.app.test_links import _open


def _cells(df: Any) -> dict[str, list[str]]:
    """A table's cells as the browser shows them (the Styler's display values), by column."""
    styler = df.proto.arrow_data.styler
    frame = pa.ipc.open_stream(styler.display_values).read_pandas()
    frame.columns = list(df.value.columns)
    return {str(c): [str(v) for v in frame[c]] for c in frame.columns}


def _traces(at: AppTest, key: str) -> list[dict[str, Any]]:
    (spec,) = [json.loads(e.proto.spec) for e in at.get("plotly_chart") if key in e.proto.id]
    return spec["data"]


def _accuracy_labels_match_the_table(at: AppTest, last: str, chart: str) -> None:
    (df,) = [df for df in at.dataframe if list(df.value.columns)[-1:] == [last]]
    cells = _cells(df)
    for trace in _traces(at, chart):
        group = trace["name"]
        assert trace["text"] == cells[group], group
        assert trace["texttemplate"] == "%{text}"
        assert "%{x" not in trace.get("hovertemplate", ""), trace.get("hovertemplate")


def test_robustness_bars_read_as_the_table() -> None:
    """Ties count half, so accuracies are exact quarters: BLEU-4 shuffled 89.25 % read 89.2%
    in the table and 89.3 on its bar."""
    store.forget_all()
    at = _open("app_pages/robustness.py")
    _accuracy_labels_match_the_table(at, "mean", "robustness-bars")


def test_pairwise_bars_read_as_the_table() -> None:
    """ROUGE-L overall on the demo pairs, 67.25 %: 67.2% in the table, 67.3 on its bar."""
    at = _open("app_pages/pairwise.py")
    _accuracy_labels_match_the_table(at, "overall", "pairwise-bars")


def test_correlation_bars_hover_the_tables_values() -> None:
    """The bars' hover wrote plotly's rounding of the value (``hoverformat``), not the
    table's."""
    at = _open("app_pages/correlations.py")
    (df,) = [df for df in at.dataframe if "95% CI low" in df.value.columns]
    cells = _cells(df)
    pairs = zip(cells["metric name"], cells["method"], strict=True)
    shown = dict(zip(pairs, cells["statistic"], strict=True))
    for trace in _traces(at, "correlation-bars"):
        assert trace["hovertemplate"].startswith("%{x}: %{customdata}"), trace["hovertemplate"]
        for metric, hover in zip(trace["x"], trace["customdata"], strict=True):
            assert hover.split(",")[0] == shown[metric, trace["name"]], (metric, hover)


def test_combined_metric_bars_read_as_the_table() -> None:
    """The combined-metric table wrote 0.2405 and its bar 0.240 (three decimals)."""
    at = _open("app_pages/correlations.py")
    (df,) = [df for df in at.dataframe if "best single metric" in df.value.columns]
    cells = _cells(df)
    shown = dict(zip(cells["subset"], cells["correlation"], strict=True))
    (trace,) = _traces(at, "combined-bars")
    assert trace["text"] and trace["texttemplate"] == "%{text}"
    for subset, text in zip(trace["y"], trace["text"], strict=True):
        assert text == shown[subset], subset


def test_heatmap_cells_read_as_the_tables() -> None:
    """The Williams heatmap wrote 0.444 beside the table's 0.4439, and the Spearman heatmap
    1.000 / 0.893: four decimals, as every table (they fit the cells at 1,280 px with nine
    metrics)."""
    at = _open("app_pages/significance.py")
    (df,) = [df for df in at.dataframe if df.value.shape == (4, 5)]
    cells = _cells(df)
    (trace,) = _traces(at, "williams-heatmap")
    for i, row in enumerate(trace["y"]):
        assert cells["metric"][i] == row
        for column, text in zip(trace["x"], trace["text"][i], strict=True):
            assert text == ("" if cells[column][i] == "—" else cells[column][i]), (row, column)
    at = _open("app_pages/correlations.py")
    (spearman,) = [e for e in at.get("plotly_chart") if "spearman" in e.proto.id]
    (trace,) = json.loads(spearman.proto.spec)["data"]
    assert trace["text"][0][0] == "1.0000"
    assert all(len(t.split(".")[-1]) == 4 for row in trace["text"] for t in row if t)


def test_the_one_pair_line_writes_p_by_the_apps_rule() -> None:
    """It wrote the result's own ``p = 0.5`` (four significant digits) under a table
    reading 0.5000."""
    at = _open("app_pages/significance.py")
    (detail,) = [df for df in at.dataframe if "arithmetic" in df.value.columns]
    p = _cells(detail)["result"][list(detail.value["quantity"]).index("p")]
    (line,) = [t.value for t in at.text if "Williams t = " in t.value]
    assert f"p = {p} (" in line, (line, p)


def test_compare_spice_category_bars_read_as_the_table() -> None:
    """SPICE's "Per category" table wrote 0.5455 and its bar 0.545."""
    from tests.app.apptest import open_tab

    at = AppTest.from_file(str(ROOT / "app_pages" / "compare.py"), default_timeout=TIMEOUT)
    at.run()
    open_tab(at, "SPICE")
    (df,) = [df for df in at.dataframe if list(df.value.columns)[:2] == ["category", "tp"]]
    shown = dict(zip(df.value["category"], df.value["F"], strict=True))
    (trace,) = _traces(at, "-chart")
    assert [t for t in trace["text"] if t]
    for category, text in zip(trace["x"], trace["text"], strict=True):
        assert text == ("" if shown[category] == "—" else shown[category]), category
