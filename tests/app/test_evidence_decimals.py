"""Evidence writes numbers as the tables do (four decimals, ``< 0.001``): the WMD masses,
its Sankey and flow matrix, and each metric's one-line "why" under Compare's A/B verdict wrote
three (``0.333``)."""

from __future__ import annotations

import json
import re
import warnings

import numpy as np

from capeval_core import DegenerateCorpusWarning
from capeval_core.metrics import REPORTED_KEYS
from capeval_core.metrics.wmd import Side, WMDPair
from capeval_ui import views
from capeval_ui.views.common import explain
from tests.app.test_app import score_many

#: a decimal number written with exactly three decimals
THREE = re.compile(r"(?<![\d.])\d+\.\d{3}(?![\d])")


def _pair() -> WMDPair:
    cand = Side(("dog", "runs"), (), (), ("dog", "runs"), (1 / 3, 2 / 3))
    ref = Side(("dog", "grass"), (), (), ("dog", "grass"), (0.5, 0.5))
    plan = np.array([[1 / 3, 0.0], [1 / 6, 0.5]])
    cost = np.array([[0.0, 1.2345], [0.9876, 1.1111]])
    return WMDPair(0, cand, ref, cost, plan, float((plan * cost).sum()), 0.5)


def test_wmd_sankey_writes_masses_with_four_decimals() -> None:
    (sankey,) = [
        t
        for t in json.loads(views.wmd_sankey_figure(_pair()).to_json())["data"]
        if t["type"] == "sankey"
    ]
    assert sankey["node"]["label"][:2] == ["dog (0.3333)", "runs (0.6667)"]
    assert ".3f" not in json.dumps(sankey)
    assert sankey["node"]["customdata"][0] == "0.3333"
    assert "mass moved 0.1667" in " ".join(sankey["link"]["customdata"])


def test_wmd_flow_matrix_writes_four_decimals_as_the_tables() -> None:
    pair = _pair()
    (heatmap,) = json.loads(views.matrix_figure(pair, pair.plan, "mass moved (flow)").to_json())[
        "data"
    ]
    assert heatmap["text"] == [["0.3333", "0.0000"], ["0.1667", "0.5000"]]
    assert heatmap["texttemplate"] == "%{text}" and ".3f" not in json.dumps(heatmap)


def test_each_metrics_why_line_writes_four_decimals() -> None:
    refs = ["a brown dog runs on the green grass", "a dog running in a field"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateCorpusWarning)
        a = score_many(list(REPORTED_KEYS), ["a dog runs on grass"], [refs])
        b = score_many(list(REPORTED_KEYS), ["a cat sleeps on a red sofa"], [refs])
    lines = {
        k: explain(a[k].segments[0].details, b[k].segments[0].details, k) for k in REPORTED_KEYS
    }
    assert sum(bool(line) for line in lines.values()) >= 6, lines
    for key, line in lines.items():
        assert not THREE.search(line), (key, line)


def test_wmd_words_kept_write_four_decimals() -> None:
    """The "Words each side keeps" cell wrote ``dog 0.333``."""
    from capeval_ui.views import wmd

    side = Side(("a", "dog", "runs"), ("a",), (), ("dog", "runs"), (1 / 3, 2 / 3))
    row = wmd.side_row("candidate", side)
    assert row["words kept (share of the caption)"] == "dog 0.3333, runs 0.6667"
