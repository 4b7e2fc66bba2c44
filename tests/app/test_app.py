"""AppTest checks of the Streamlit app: every page runs, shows the core's numbers, and treats
user text as text.

Widgets are reached by their keys; numbers are compared with ``capeval_core.score_many`` on
the same input, so the page can only pass by showing what the library computes.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from capeval_core import (
    DegenerateCorpusWarning,
    MetricResult,
    MissingResourceError,
    score_many,
)
from capeval_core.metrics import METRICS, REPORTED_KEYS
from capeval_ui import cached
from capeval_ui.views import key_label

ROOT = Path(__file__).resolve().parents[2]

TIMEOUT = 60
PAGES = ("pages/home.py", "pages/compare.py")
DEFAULT = cached.BUILTIN_EXAMPLES[cached.DEFAULT_EXAMPLE]
# Markup of every kind a renderer could interpret: HTML, markdown links/emphasis, LaTeX.
HOSTILE = "<b>x</b><script>alert(1)</script> a [link](http://x) *bold* $x$ _u_"
HOSTILE_MARKERS = ("<script>", "alert", "<b>", "[link]", "http://x")
# Element types whose text is rendered as markdown (alerts, captions and titles included).
MARKDOWN_TYPES = {
    "markdown",
    "caption",
    "latex",
    "title",
    "header",
    "subheader",
    "divider",
    "error",
    "warning",
    "info",
    "success",
    "exception",
}


def _app(**state: Any) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
    for key, value in state.items():
        at.session_state[key] = value
    return at


def _compare(**state: Any) -> AppTest:
    at = _app(**state).run()
    at.switch_page("pages/compare.py").run()
    assert not at.exception, at.exception
    return at


def _expected(
    candidate: str,
    references: tuple[str, ...],
    tokenizer: str = "ptb",
    idf: str = "corpus",
) -> dict[str, MetricResult]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateCorpusWarning)
        return score_many(
            list(REPORTED_KEYS),
            [candidate],
            [list(references)],
            tokenizer=tokenizer,
            options={"cider_d": {"idf": idf}},
        )


def _score_table(at: AppTest) -> pd.DataFrame:
    tables = [df.value for df in at.dataframe if "signature" in df.value.columns]
    assert len(tables) == 1, "expected exactly one score table with signatures"
    return tables[0]


def _assert_shows(at: AppTest, expected: dict[str, MetricResult]) -> None:
    """The summary metrics and the score table show exactly the library's values."""
    shown = {m.label: m.value for m in at.metric}
    table = _score_table(at).set_index("key")
    assert list(table.index) == list(REPORTED_KEYS)
    for key, result in expected.items():
        assert shown[key_label(key)] == f"{result.value:.4f}", key
        assert table.loc[key, "value"] == result.value, key
        assert table.loc[key, "signature"] == str(result.signature), key


def _elements(node: Any) -> Iterator[Any]:
    """Every element of an AppTest tree, blocks descended into."""
    children = getattr(node, "children", None)
    if isinstance(children, dict):
        for child in children.values():
            yield from _elements(child)
    else:
        yield node


# -- smoke: the router and every page ----------------------------------------------------------
def test_app_runs_and_lands_on_home() -> None:
    at = _app().run()
    assert not at.exception, at.exception
    assert [t.value for t in at.title] == ["capeval"]
    assert at.radio(key="tokenizer").value == "ptb"


@pytest.mark.parametrize("page", PAGES)
def test_switch_page_reaches_every_page(page: str) -> None:
    at = _app().run()
    at.switch_page(page).run()
    assert not at.exception, at.exception
    # the shared sidebar is there on every page
    assert at.radio(key="tokenizer").value == "ptb"


@pytest.mark.parametrize("page", PAGES)
def test_page_runs_on_its_own(page: str) -> None:
    at = AppTest.from_file(str(ROOT / page), default_timeout=TIMEOUT).run()
    assert not at.exception, at.exception


def test_home_lists_resources_and_every_metric_with_its_card() -> None:
    at = _app().run()
    frames = [df.value for df in at.dataframe]
    resources = next(f for f in frames if "resource" in f.columns)
    assert "capeval" in set(resources["resource"])
    registry = next(f for f in frames if "direction" in f.columns)
    assert list(registry["key"]) == list(METRICS)
    assert len(at.expander) == len(METRICS)
    cards = "\n".join(m.value for m in at.markdown)
    for cls in METRICS.values():
        assert cls.card().strip() in cards


# -- Compare: numbers ----------------------------------------------------------------------------
def test_compare_shows_the_library_values_for_the_default_example() -> None:
    at = _compare()
    assert at.text_area(key="candidate").value == DEFAULT.candidate
    assert at.text_area(key="references").value == "\n".join(DEFAULT.references)
    _assert_shows(at, _expected(DEFAULT.candidate, DEFAULT.references))


def test_compare_has_one_tab_per_registered_metric() -> None:
    at = _compare()
    assert [t.label for t in at.tabs] == [cls.name for cls in METRICS.values()]


def test_one_image_cider_warning_is_shown() -> None:
    at = _compare()
    expected = _expected(DEFAULT.candidate, DEFAULT.references)["cider_d"]
    assert expected.warnings, "the core should warn about a one-image corpus"
    assert [w.value for w in at.warning] == list(expected.warnings)


def test_changing_the_candidate_rescores() -> None:
    at = _compare()
    at.text_area(key="candidate").input("a surfer riding a big wave").run()
    assert not at.exception, at.exception
    _assert_shows(at, _expected("a surfer riding a big wave", DEFAULT.references))


def test_tokenizer_choice_reaches_the_signature() -> None:
    at = _compare(tokenizer="whitespace")
    expected = _expected(DEFAULT.candidate, DEFAULT.references, tokenizer="whitespace")
    _assert_shows(at, expected)
    assert "tok:whitespace" in _score_table(at)["signature"].iloc[0]


def test_picking_an_example_fills_both_text_areas() -> None:
    at = _compare()
    name = "Table 2 style: word order"
    at.selectbox(key="example").select(name).run()
    assert not at.exception, at.exception
    example = cached.BUILTIN_EXAMPLES[name]
    assert at.text_area(key="candidate").value == example.candidate
    _assert_shows(at, _expected(example.candidate, example.references))


def test_random_coco_example_draws_from_coco_val() -> None:
    at = _compare()
    at.selectbox(key="example").select(cached.COCO_RANDOM).run()
    assert not at.exception, at.exception
    pool = {s.candidate: s for s in cached.coco_examples(cached.COCO_POOL)}
    for _ in range(2):
        candidate = at.text_area(key="candidate").value
        assert candidate in pool
        refs = pool[candidate].references
        assert at.text_area(key="references").value == "\n".join(refs)
        _assert_shows(at, _expected(candidate, refs))
        at.button(key="draw").click().run()
        assert not at.exception, at.exception


def test_switching_the_idf_source_to_coco_val() -> None:
    # whitespace keeps the one-off build of the val2014 table short (the PTB one is slower)
    at = _compare(tokenizer="whitespace")
    at.radio(key="cider_idf").set_value("COCO val2014").run(timeout=600)
    assert not at.exception, at.exception
    expected = _expected(DEFAULT.candidate, DEFAULT.references, "whitespace", "coco-val2014")
    assert expected["cider_d"].value > 0
    _assert_shows(at, expected)
    assert not at.warning
    assert "idf-source" in _score_table(at).set_index("key").loc["cider_d", "signature"]


def test_evidence_widgets_work_by_key() -> None:
    at = _compare()
    at.radio(key="bleu-order").set_value(3).run()
    at.selectbox(key="rouge_l-reference").select(2).run()
    at.radio(key="cider_d-order").set_value(4).run()
    assert not at.exception, at.exception
    frames = [df.value for df in at.dataframe]
    bleu = next(f for f in frames if "clipped count" in f.columns)
    assert all(len(g.split()) == 3 for g in bleu["n-gram"])
    cider = next(f for f in frames if "weight (count × idf)" in f.columns)
    assert all(len(g.split()) == 4 for g in cider["n-gram"])


# -- Compare: invalid input ----------------------------------------------------------------------
def test_empty_candidate_gives_an_error_and_keeps_the_references() -> None:
    at = _compare()
    at.text_area(key="candidate").input("   ").run()
    assert not at.exception, at.exception
    assert [e.value for e in at.error] == ["Enter a candidate caption to score."]
    assert at.text_area(key="references").value == "\n".join(DEFAULT.references)
    assert not at.metric


def test_no_references_gives_an_error_and_keeps_the_candidate() -> None:
    at = _compare()
    at.text_area(key="references").input("\n  \n").run()
    assert not at.exception, at.exception
    assert len(at.error) == 1 and "reference" in at.error[0].value
    assert at.text_area(key="candidate").value == DEFAULT.candidate
    assert not at.metric


def test_missing_coco_captions_give_an_error_not_a_crash(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def missing(*args: Any, **kwargs: Any) -> None:
        raise MissingResourceError("pycocoevalcap is not installed (test)")

    monkeypatch.setattr("capeval_core.resources.coco_caption_sets", missing)
    cached.coco_examples.clear()
    try:
        at = _compare()
        at.selectbox(key="example").select(cached.COCO_RANDOM).run()
        assert not at.exception, at.exception
        assert any("pycocoevalcap is not installed" in e.value for e in at.error)
        # the previous example stays, and is still scored
        assert at.text_area(key="candidate").value == DEFAULT.candidate
        assert at.metric
    finally:
        cached.coco_examples.clear()


# -- user text is text -----------------------------------------------------------------------------
def test_markup_in_captions_is_shown_literally() -> None:
    at = _compare()
    at.text_area(key="candidate").input(HOSTILE)
    at.text_area(key="references").input(f"{HOSTILE}\na man riding a wave").run()
    assert not at.exception, at.exception
    assert at.text_area(key="candidate").value == HOSTILE

    elements = list(_elements(at._tree))
    assert not [e for e in elements if e.type == "html"], "no st.html on the Compare page"
    for element in elements:
        proto = getattr(element, "proto", None)
        text = str(proto) if proto is not None else ""
        if element.type in MARKDOWN_TYPES:
            assert not any(m in text for m in HOSTILE_MARKERS), (element.type, text)
        if proto is not None and getattr(proto, "allow_html", False):
            pytest.fail(f"{element.type} allows HTML: {text}")
        if element.type == "plotly_chart":
            spec = json.dumps(json.loads(proto.spec))
            assert not any(m in spec for m in HOSTILE_MARKERS), spec

    # the tokens do appear, as dataframe cells (plain text)
    cells = {str(v) for df in at.dataframe for v in df.value.to_numpy().ravel()}
    assert "<script>" in cells


# -- views: the fallback for details no view knows ------------------------------------------------
def _fallback_script() -> None:
    from capeval_core.results import MetricResult, SegmentScore, Signature
    from capeval_ui import views

    signature = Signature("new_metric", (), "whitespace", (), "0")
    segment = SegmentScore(0, "new_metric", {"new_metric": 0.25}, details=object())
    result = MetricResult("new_metric", {"new_metric": 0.25}, (segment,), signature)
    views.render_details(segment.details, segment, result, "new")


def test_unknown_details_fall_back_to_the_segment_scores() -> None:
    at = AppTest.from_function(_fallback_script, default_timeout=TIMEOUT).run()
    assert not at.exception, at.exception
    frame = at.dataframe[0].value
    assert list(frame["key"]) == ["new_metric"] and list(frame["value"]) == [0.25]
