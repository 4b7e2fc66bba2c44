"""AppTest checks of the Streamlit app: every page runs, shows the core's numbers, and treats
user text as text.

Widgets are reached by their keys; numbers are compared with ``capeval_core.score_many`` on
the same input, so the page can only pass by showing what the library computes.
"""

from __future__ import annotations

import json
import math
import re
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from capeval_core import (
    DegenerateCorpusWarning,
    MetricResult,
    MissingResourceError,
    score_many,
)
from capeval_core.examples import BUILTIN_EXAMPLES, COCO_POOL, DEFAULT_EXAMPLE
from capeval_core.metrics import METRICS, REPORTED_KEYS
from capeval_ui import cached, choices, state, views
from capeval_ui.views import key_label
from capeval_ui.views.common import PAIR_CSS
from tests.app.apptest import ROOT, TIMEOUT, open_tab

PAGES = ("app_pages/home.py", "app_pages/compare.py")
DEFAULT = BUILTIN_EXAMPLES[DEFAULT_EXAMPLE]
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
    at.switch_page("app_pages/compare.py").run()
    assert not at.exception, at.exception
    return at


def _expected(
    candidate: str,
    references: tuple[str, ...],
    tokenizer: str = "ptb",
    idf: str = "coco-val2014",
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
        assert shown[key_label(key)] == views.format_number(result.value), key
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


def assert_shown_as_text(elements: list[Any], figure_markers: tuple[str, ...]) -> None:
    """No markdown element carries ``HOSTILE_MARKERS``, none allows HTML, and no plotly
    figure's spec holds ``figure_markers`` (words drawn in figures are escaped)."""
    for element in elements:
        proto = getattr(element, "proto", None)
        text = str(proto) if proto is not None else ""
        if element.type in MARKDOWN_TYPES:
            assert not any(m in text for m in HOSTILE_MARKERS), (element.type, text)
        if proto is not None and getattr(proto, "allow_html", False):
            pytest.fail(f"{element.type} allows HTML: {text}")
        if element.type == "plotly_chart":
            spec = json.dumps(json.loads(proto.spec))
            assert not any(m in spec for m in figure_markers), spec


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
    # the cards' prose as markdown, their code blocks (command lines) as wrapping code
    cards = "\n".join([*(m.value for m in at.markdown), *(c.value for c in at.code)])
    for cls in METRICS.values():
        for i, part in enumerate(cls.card().split("```")):
            text = part.strip() if i % 2 == 0 else part.partition("\n")[2].strip()
            assert text in cards, (cls.key, text[:80])
    assert all(c.proto.wrap_lines for c in at.code)


def test_home_shows_no_warning_on_first_contact_and_the_shipped_spice_parser(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """First contact on a machine without any CoreNLP jar: no warning, SPICE's exact parser is
    listed as shipped with the package."""
    monkeypatch.setenv("CAPEVAL_CORENLP_MODELS", str(tmp_path / "absent.jar"))
    cached.inventory.clear()
    try:
        at = _app().run()
        assert not at.exception, at.exception
        assert not at.warning, [w.value for w in at.warning]
        table = at.dataframe[0].value
        row = table[table["resource"] == "SPICE parser (CoreNLP 3.6.0 PCFG)"].iloc[0]
        assert row["available"] and "COCO val2014" in row["detail"]
        assert "absent.jar" not in row["detail"]
    finally:
        cached.inventory.clear()


# -- Compare: numbers ----------------------------------------------------------------------------
def test_compare_shows_the_library_values_for_the_default_example() -> None:
    at = _compare()
    assert at.text_area(key="candidate").value == DEFAULT.candidate
    assert at.text_area(key="references").value == "\n".join(DEFAULT.references)
    _assert_shows(at, _expected(DEFAULT.candidate, DEFAULT.references))


def test_compare_has_one_tab_per_registered_metric() -> None:
    at = _compare()
    assert [t.label for t in at.tabs] == [cls.name for cls in METRICS.values()]


def test_default_example_scores_cider_with_coco_val_document_frequencies() -> None:
    """One caption is scored with COCO val2014's IDF by default (issue 14): CIDEr-D > 0."""
    at = _compare()
    expected = _expected(DEFAULT.candidate, DEFAULT.references)
    assert expected["cider_d"].value > 0
    assert at.radio(key="cider_idf").value == "COCO val2014"
    assert "idf-source" in _score_table(at).set_index("key").loc["cider_d", "signature"]
    assert not at.warning
    _assert_shows(at, expected)


def test_one_image_cider_warning_is_shown_for_the_scored_set() -> None:
    at = _compare()
    at.radio(key="cider_idf").set_value("scored set").run()
    open_tab(at, "CIDEr-D")  # the warning is the CIDEr-D panel's
    expected = _expected(DEFAULT.candidate, DEFAULT.references, idf="corpus")["cider_d"]
    assert expected.warnings, "the core should warn about a one-image corpus"
    assert [w.value for w in at.warning] == [views.in_app_words(w) for w in expected.warnings]
    assert expected.value == 0.0


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
    example = BUILTIN_EXAMPLES[name]
    assert at.text_area(key="candidate").value == example.candidate
    _assert_shows(at, _expected(example.candidate, example.references))


def test_random_coco_example_draws_from_coco_val() -> None:
    at = _compare()
    at.selectbox(key="example").select(choices.COCO_RANDOM).run()
    assert not at.exception, at.exception
    pool = {s.candidate: s for s in cached.coco_examples(COCO_POOL)}
    for _ in range(2):
        candidate = at.text_area(key="candidate").value
        assert candidate in pool
        refs = pool[candidate].references
        assert at.text_area(key="references").value == "\n".join(refs)
        _assert_shows(at, _expected(candidate, refs))
        at.button(key="draw").click().run()
        assert not at.exception, at.exception


def test_switching_the_idf_source_to_the_scored_set_and_back() -> None:
    at = _compare(tokenizer="whitespace")
    at.radio(key="cider_idf").set_value("scored set").run()
    assert not at.exception, at.exception
    _assert_shows(at, _expected(DEFAULT.candidate, DEFAULT.references, "whitespace", "corpus"))
    assert "idf-source" not in _score_table(at).set_index("key").loc["cider_d", "signature"]
    at.radio(key="cider_idf").set_value("COCO val2014").run(timeout=600)
    assert not at.exception, at.exception
    expected = _expected(DEFAULT.candidate, DEFAULT.references, "whitespace", "coco-val2014")
    assert expected["cider_d"].value > 0
    _assert_shows(at, expected)
    assert not at.warning


def test_evidence_widgets_work_by_key() -> None:
    at = _compare()
    open_tab(at, "BLEU")
    at.radio(key="bleu-order").set_value(3).run()
    open_tab(at, "ROUGE-L")
    at.selectbox(key="rouge_l-reference").select(2).run()
    open_tab(at, "CIDEr-D")
    at.radio(key="cider_d-order").set_value(4).run()
    assert not at.exception, at.exception
    cider = next(df.value for df in at.dataframe if "weight (count × idf)" in df.value.columns)
    assert all(len(g.split()) == 4 for g in cider["n-gram"])
    # the BLEU panel, drawn again, kept its order while another tab was open
    open_tab(at, "BLEU")
    bleu = next(df.value for df in at.dataframe if "clipped count" in df.value.columns)
    assert all(len(g.split()) == 3 for g in bleu["n-gram"])
    assert open_tab(at, "ROUGE-L") and at.selectbox(key="rouge_l-reference").value == 2


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
        at.selectbox(key="example").select(choices.COCO_RANDOM).run()
        assert not at.exception, at.exception
        assert any("pycocoevalcap is not installed" in e.value for e in at.error)
        # the previous example stays, and is still scored
        assert at.text_area(key="candidate").value == DEFAULT.candidate
        assert at.metric
        # the picker names it (it said "Random COCO" beside the other example's captions),
        # and the URL names no image whose captions never came
        assert at.selectbox(key="example").value == DEFAULT_EXAMPLE
        assert "coco_draw" not in at.query_params
    finally:
        cached.coco_examples.clear()


# -- user text is text -----------------------------------------------------------------------------
def test_markup_in_captions_is_shown_literally() -> None:
    at = _compare()
    at.text_area(key="candidate").input(HOSTILE)
    at.text_area(key="candidate_b").input(f"{HOSTILE} again")  # both candidates' panels
    at.text_area(key="references").input(f"{HOSTILE}\na man riding a wave").run()
    assert not at.exception, at.exception
    assert at.text_area(key="candidate").value == HOSTILE

    elements = list(_elements(at._tree))
    # the one st.html is the page's own constant style sheet (A above B in a narrow tab)
    html = {e.proto.body for e in elements if e.type == "html"}
    assert html == {PAIR_CSS}, f"st.html other than the pair's style sheet: {html}"
    # words drawn in figures are escaped ("&lt;b&gt;"); plotly ignores markdown
    assert_shown_as_text(elements, PLOTLY_MARKUP)

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


def _strip_script() -> None:
    from capeval_ui import views

    words = "a man in a red shirt is riding a brown horse on the sandy beach near the ocean"
    views.show_tokens(views.token_strip({"candidate": words.split()}, {"candidate": [1, 9, 17]}))


def test_a_wrapped_token_strip_highlights_exactly_the_matched_words() -> None:
    at = AppTest.from_function(_strip_script, default_timeout=TIMEOUT).run()
    assert not at.exception, at.exception
    assert len(at.dataframe) > 1, "expected the strip to wrap"
    marked = []
    for df in at.dataframe:
        styles = df.proto.arrow_data.styler.styles
        columns = list(df.value.columns)
        # a styled cell is named by its place in its own strip: row0_colK
        marked += [columns[int(k)] for k in re.findall(r"_row0_col(\d+)\b", styles)]
        marked_css = "background-color" in styles
        assert marked_css == any(c in ("2", "10", "18") for c in columns)
    assert marked == ["2", "10", "18"]


def _link_script() -> None:
    import streamlit as st

    from capeval_ui import views

    views.show_link(st.empty(), "compare-captions", "&".join(["ref=a+dog"] * 1200))
    views.show_link(st.empty(), "compare-captions", "&".join(["ref=a+dog"] * 900))


def test_a_view_past_a_link_s_limits_says_so_instead_of_a_link() -> None:
    """A link of 1,200 references opened the default example without a word (Streamlit
    reads at most 1,000 query values); 900 still make a link."""
    at = AppTest.from_function(_link_script, default_timeout=TIMEOUT).run()
    assert not at.exception, at.exception
    (said,) = [w.value for w in at.warning]
    assert said.startswith(
        "This view does not fit in a link (1,200 values and 11,999 characters; a link holds "
        "at most 1,000 values and 524,288 characters"
    )
    assert [c.value for c in at.code] == ["/compare-captions?" + "&".join(["ref=a+dog"] * 900)]


# -- Compare: the METEOR, WMD and MEAN panels ------------------------------------------------------
def _figures(at: AppTest) -> list[dict[str, Any]]:
    """Every plotly figure on the page, as the JSON spec the browser receives."""
    return [json.loads(e.proto.spec) for e in _elements(at._tree) if e.type == "plotly_chart"]


def _meteor_figure(at: AppTest) -> dict[str, Any]:
    found = [f for f in _figures(at) if "hypothesis" in f["layout"]["yaxis"].get("ticktext", [])]
    assert len(found) == 1, "expected one METEOR alignment figure"
    return found[0]


def _sankey(at: AppTest) -> dict[str, Any]:
    found = [f["data"][0] for f in _figures(at) if f["data"][0]["type"] == "sankey"]
    assert len(found) == 1, "expected one WMD Sankey"
    return found[0]


def _shown_tokens(figure: dict[str, Any], row: str) -> list[str]:
    """The words of one token row of the METEOR figure, in position order."""
    points = [
        (x, t)
        for trace in figure["data"]
        if trace.get("mode") == "text" and trace["name"].startswith(row)
        for x, t in zip(trace["x"], trace["text"], strict=True)
    ]
    return [t for _, t in sorted(points)]


def test_meteor_panel_draws_the_alignment_of_the_chosen_reference() -> None:
    at = _compare()
    open_tab(at, "METEOR")
    details = _expected(DEFAULT.candidate, DEFAULT.references)["meteor"].segments[0].details
    selector = at.selectbox(key="meteor-reference")
    assert selector.value == details.best
    others = [i for i in range(len(details.alignments)) if i != details.best]
    for chosen in [details.best, *others]:
        if chosen != details.best:
            at.selectbox(key="meteor-reference").select(chosen).run()
            assert not at.exception, at.exception
        alignment = details.alignments[chosen]
        figure = _meteor_figure(at)
        assert figure["layout"]["yaxis"]["ticktext"][0] == f"reference #{chosen + 1}"
        assert _shown_tokens(figure, "reference") == list(alignment.ref_tokens)
        assert _shown_tokens(figure, "hypothesis") == list(details.hyp_tokens)
        lines = [t for t in figure["data"] if t.get("mode") == "lines"]
        assert [t["name"] for t in lines] == [m.module_name for m in alignment.alignment]
        # one dotted box per chunk on each row
        assert len(figure["layout"].get("shapes", [])) == 2 * len(alignment.chunks)
        arithmetic = next(c.value for c in at.code if c.value.startswith("parameters:"))
        assert arithmetic.rstrip().endswith(f"= {alignment.score:.4f}")
        assert "α = 0.85, β = 0.2, γ = 0.6, δ = 0.75" in arithmetic


def test_meteor_panel_colours_lines_by_module_with_a_legend() -> None:
    candidate, reference = "a kid is sitting on a couch", "a child sits on a sofa"
    at = _compare()
    at.text_area(key="candidate").input(candidate)
    at.text_area(key="references").input(reference).run()
    assert not at.exception, at.exception
    details = _expected(candidate, (reference,))["meteor"].segments[0].details
    open_tab(at, "METEOR")
    lines = [t for t in _meteor_figure(at)["data"] if t.get("mode") == "lines"]
    modules = {m.module_name for m in details.winner.alignment}
    assert len(modules) > 1, "expected several modules"
    assert {t["name"] for t in lines if t["showlegend"]} == modules
    for trace in lines:
        assert trace["line"]["color"] == views.MODULE_COLOURS[trace["name"]]


def test_wmd_panel_sankey_moves_the_plan_of_the_chosen_reference() -> None:
    at = _compare()
    open_tab(at, "WMD")
    details = _expected(DEFAULT.candidate, DEFAULT.references)["wmd"].segments[0].details
    assert at.selectbox(key="wmd-reference").value == details.best
    for chosen in [details.best, *(i for i in range(len(details.pairs)) if i != details.best)]:
        if chosen != details.best:
            at.selectbox(key="wmd-reference").select(chosen).run()
            assert not at.exception, at.exception
        pair = details.pairs[chosen]
        link = _sankey(at)["link"]
        assert sum(link["value"]) == pytest.approx(1.0, abs=1e-9)
        n = len(pair.candidate.words)
        moved = np.zeros_like(pair.plan)
        for s, t, v in zip(link["source"], link["target"], link["value"], strict=True):
            moved[s, t - n] = v
        np.testing.assert_allclose(moved, pair.plan, atol=1e-12)
        assert f"distance {pair.distance:.4f}" in "\n".join(t.value for t in at.text)
    shown = {m.label: m.value for m in at.metric}
    assert shown["distance"] == f"{details.distance:.4f}"
    assert shown["similarity, σ = 1"] == f"{details.similarity:.4f}"


def test_wmd_and_mean_notes_are_shown_for_a_candidate_of_stop_words() -> None:
    at = _compare()
    at.text_area(key="candidate").input("a the of on").run()
    assert not at.exception, at.exception
    results = _expected("a the of on", DEFAULT.references)
    _assert_shows(at, results)
    for tab, key in (("WMD", "wmd"), ("MEAN", "mean")):
        open_tab(at, tab)
        assert results[key].segments[0].details.note in [i.value for i in at.info]


def test_mean_panel_shows_the_library_cosines_and_nearest_words() -> None:
    at = _compare()
    open_tab(at, "MEAN")
    result = _expected(DEFAULT.candidate, DEFAULT.references)["mean"]
    details = result.segments[0].details
    shown = {m.label: m.value for m in at.metric}
    label = f"MEAN: mean cosine over {len(details.cosines)} references"
    assert shown[label] == f"{result.value:.4f}"
    frame = next(df.value for df in at.dataframe if "nearest words to the mean" in df.value.columns)
    assert list(frame["cosine"].iloc[1:]) == list(details.cosines)
    assert list(frame["words used"]) == [
        " ".join(s.words) for s in (details.candidate, *details.references)
    ]
    first = frame["nearest words to the mean"].iloc[0]
    assert first.startswith(f"{details.candidate_nearest[0][0]} (")


def test_a_missing_resource_leaves_the_other_metrics_on_the_page(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def missing(*args: Any, **kwargs: Any) -> None:
        raise MissingResourceError("the GloVe vectors are not installed (test)")

    monkeypatch.setattr("capeval_core.embeddings.default_embeddings", missing)
    cached.clear_scores()
    try:
        at = _compare()
        warnings_shown = [w.value for w in at.warning]
        for name in ("WMD", "MEAN"):
            assert any(
                w.startswith(f"{name} could not be scored") and "not installed (test)" in w
                for w in warnings_shown
            ), warnings_shown
        shown = {m.label for m in at.metric}
        assert "METEOR" in shown and "CIDEr-D" in shown
        assert "WMD" not in shown and "MEAN" not in shown
        open_tab(at, "METEOR")
        _meteor_figure(at)  # the other panels still draw
    finally:
        cached.clear_scores()


def test_a_resource_provided_later_scores_the_same_inputs_without_a_restart(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def missing(*args: Any, **kwargs: Any) -> None:
        raise MissingResourceError("the GloVe vectors are not installed (test)")

    cached.clear_scores()
    try:
        with monkeypatch.context() as patch:
            patch.setattr("capeval_core.embeddings.default_embeddings", missing)
            at = _compare()
            assert "WMD" not in {m.label for m in at.metric}
        at.run(timeout=TIMEOUT)  # the same inputs, the vectors back: no stale error
        assert not at.exception, at.exception
        assert not any(w.value.startswith("WMD could not be scored") for w in at.warning)
        shown = {m.label for m in at.metric}
        assert "WMD" in shown and "MEAN" in shown and "METEOR" in shown
    finally:
        cached.clear_scores()


def test_spice_scores_with_the_exact_parser_and_without_any_jar(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("CAPEVAL_CORENLP_MODELS", str(tmp_path / "no-such.jar"))
    at = _compare()
    assert not at.exception, at.exception
    assert not any(w.value.startswith("SPICE could not be scored") for w in at.warning)
    assert "SPICE" in {m.label for m in at.metric}
    assert not [r for r in at.radio if "parser" in r.label.lower()]  # nothing to choose


def test_spinner_names_the_paraphrase_index_build(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(
        "capeval_core.meteor_resources.paraphrase_index_path", lambda: tmp_path / "none.idx"
    )
    assert "paraphrase index" in choices.scoring_message([])
    # the COCO IDF has its own progress bar before scoring: the spinner said it was built on
    # every run, long after its table was in memory
    assert "IDF" not in choices.scoring_message([])
    # a paragraph caption: SPICE's parse of it is named before it starts (issue 41)
    long = choices.scoring_message(["a dog runs.", " and ".join(["a dog"] * 40)])
    assert "SPICE parses a 119-word sentence" in long
    assert "SPICE" not in choices.scoring_message(["a dog runs.", "a cat sleeps."])


# Markup in a caption, as the issue gives it: HTML, a markdown link, emphasis and LaTeX.
ISSUE_HOSTILE = "<b>x</b><script>alert(1)</script>[link](http://x) *a* $b$"
# What plotly would interpret as markup; its own <br> and <extra> tags are ours.
PLOTLY_MARKUP = ("<b>", "</b>", "<script", "</script", "<a ")


@pytest.mark.parametrize("tokenizer", ["ptb", "whitespace"])
def test_markup_in_captions_stays_text_in_the_new_panels(tokenizer: str) -> None:
    at = _compare(tokenizer=tokenizer)
    at.text_area(key="candidate").input(f"{ISSUE_HOSTILE} a man riding a wave <")
    at.text_area(key="references").input(f"{ISSUE_HOSTILE}\na man > riding a wave").run()
    assert not at.exception, at.exception
    for tab in [t.label for t in at.tabs]:  # the page with each tab open in turn
        open_tab(at, tab)
        elements = list(_elements(at._tree))
        assert not [e for e in elements if e.type == "html"]
        assert_shown_as_text(elements, PLOTLY_MARKUP)
    # the tokens are drawn, escaped: METEOR's rows and the WMD labels ("<" is a GloVe word)
    open_tab(at, "METEOR")
    assert "&lt;" in json.dumps(_meteor_figure(at))
    open_tab(at, "WMD")
    assert any("&lt;" in label for label in _sankey(at)["node"]["label"])
    # and the words WMD drops are listed as dataframe cells (plain text)
    kept = next(df.value for df in at.dataframe if "out of vocabulary" in df.value.columns)
    assert "<b>" in kept["out of vocabulary"].iloc[0]


def test_wmd_figures_escape_every_word() -> None:
    from capeval_core.metrics.wmd import Side, WMDPair

    words = ("<b>x</b>", "<a href='http://x'>y</a>")
    side = Side(words, (), (), words, (0.5, 0.5))
    plan = np.array([[0.5, 0.0], [0.0, 0.5]])
    pair = WMDPair(0, side, side, np.array([[0.0, 1.0], [1.0, 0.0]]), plan, 0.0, 1.0)
    for figure in (
        views.wmd_sankey_figure(pair),
        views.matrix_figure(pair, pair.cost, "word distance (cost)", 2),
    ):
        spec = json.dumps(json.loads(figure.to_json()))
        assert "<b>" not in spec and "<a " not in spec, spec
        assert "&lt;b&gt;x&lt;/b&gt;" in spec


# -- meta-evaluation pages ------------------------------------------------------------------------
META_PAGES = (
    "app_pages/judgments.py",
    "app_pages/correlations.py",
    "app_pages/significance.py",
    "app_pages/pairwise.py",
    "app_pages/robustness.py",
)
GRADED_CSV = (
    "id,image_id,candidate,references,quality\n"
    "1,img1,a dog runs on the grass,a dog running on grass|||a brown dog runs,4\n"
    "2,img1,a cat sleeps,a dog running on grass|||a brown dog runs,1\n"
    "3,img2,a man rides a wave,a surfer rides a wave|||a man surfing,5\n"
    "4,img2,a wave,a surfer rides a wave|||a man surfing,2\n"
    "5,img3,two people on a beach,people walking on a beach|||two people at the sea,4\n"
    "6,img3,a red car,people walking on a beach|||two people at the sea,1\n"
)


def _meta(page: str, **state: Any) -> AppTest:
    at = _app(**state).run()
    at.switch_page(page).run()
    assert not at.exception, at.exception
    return at


def _frame_with(at: AppTest, column: str) -> pd.DataFrame:
    return next(df.value for df in at.dataframe if column in df.value.columns)


@pytest.mark.parametrize("page", META_PAGES)
def test_meta_pages_run_via_the_router(page: str) -> None:
    at = _meta(page)
    assert at.radio(key="tokenizer").value == "ptb"
    assert not at.error


@pytest.mark.parametrize("page", META_PAGES)
def test_meta_page_runs_on_its_own(page: str) -> None:
    at = AppTest.from_file(str(ROOT / page), default_timeout=TIMEOUT).run()
    assert not at.exception, at.exception


def test_pages_without_a_loaded_set_say_they_use_the_demo() -> None:
    at = _meta("app_pages/correlations.py")
    assert any("synthetic demo set" in i.value for i in at.info)


def test_judgments_demo_loads_and_scores_with_the_fast_metrics() -> None:
    at = _meta("app_pages/judgments.py")
    at.button(key="load_demo").click().run()
    assert not at.exception, at.exception
    assert at.session_state[state.JSET_KEY].synthetic
    assert at.multiselect(key="meta_metrics").value == list(choices.FAST_KEYS)
    scores = _frame_with(at, "signature")
    assert list(scores["key"]) == list(choices.FAST_KEYS)


def test_upload_through_the_file_uploader_maps_columns_and_loads() -> None:
    renamed = GRADED_CSV.replace("candidate,references,quality", "caption,refs,quality")
    at = _meta("app_pages/judgments.py")
    at.radio(key="judgment_source").set_value("Upload a file").run()
    at.selectbox(key="judgment_format").select("graded").run()
    at.file_uploader(key="judgment_files-graded").set_value(
        ("mine.csv", renamed.encode(), "text/csv")
    )
    at.run()
    assert not at.exception, at.exception
    at.selectbox(key="map_candidate").select("caption").run()
    at.selectbox(key="map_references").select("refs").run()
    assert at.selectbox(key="role_quality").value == "human score"
    at.button(key="load_judgments").click().run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    jset = at.session_state[state.JSET_KEY]
    assert len(jset) == 6 and jset.score_names == ("quality",)
    assert jset.items[0].candidate == "a dog runs on the grass"
    # the Correlations page now uses it (no demo banner) and shows the library's numbers
    at.switch_page("app_pages/correlations.py").run()
    assert not at.exception, at.exception
    assert not any("synthetic demo set" in i.value for i in at.info)
    table = _frame_with(at, "95% CI low")
    from capeval_core.judgments.scoring import score_judgments
    from capeval_core.stats import correlate

    expected = score_judgments(jset, ["bleu_4"], use_cache=False).values["bleu_4"]
    row = table[(table["metric"] == "bleu_4") & (table["method"] == "Pearson r")].iloc[0]
    assert row["statistic"] == pytest.approx(correlate(expected, jset.human(), "pearson").statistic)


def test_malformed_upload_shows_an_error_and_keeps_the_loaded_set() -> None:
    at = _meta("app_pages/judgments.py")
    at.button(key="load_demo").click().run()
    before = at.session_state[state.JSET_KEY]
    at.radio(key="judgment_source").set_value("Upload a file").run()
    at.selectbox(key="judgment_format").select("graded").run()
    bad = "id,candidate,references,quality\n1,a dog,a dog runs,4\n2,a cat,a cat,=1+2\n"
    at.file_uploader(key="judgment_files-graded").set_value(("bad.csv", bad.encode(), "text/csv"))
    at.run()
    at.button(key="load_judgments").click().run()
    assert not at.exception, at.exception
    errors = [e.value for e in at.error]
    assert len(errors) == 1 and "bad.csv" in errors[0] and "line 3" in errors[0], errors
    assert "'quality'" in errors[0]
    assert at.session_state[state.JSET_KEY] is before


def test_correlation_widgets_by_key() -> None:
    at = _meta("app_pages/correlations.py")
    at.multiselect(key="meta_metrics").set_value(["bleu_4", "rouge_l"]).run()
    at.selectbox(key="human_column").select("corruption_level").run()
    at.radio(key="correlation_level").set_value("system").run()
    at.select_slider(key="resamples").set_value(200).run()
    assert not at.exception, at.exception
    table = _frame_with(at, "95% CI low")
    assert set(table["metric"]) == {"bleu_4", "rouge_l"}
    assert set(table["level"]) == {"system"} and set(table["n"]) == {5}
    at.selectbox(key="combined_correlation").select("pearson").run()
    combined = _frame_with(at, "subset")
    assert len(combined) == 3  # every non-empty subset of two metrics


def test_significance_matrix_and_pair_detail() -> None:
    from capeval_core.judgments.scoring import score_judgments
    from capeval_core.stats import williams_matrix

    at = _meta("app_pages/significance.py")
    at.selectbox(key="williams_correlation").select("pearson").run()
    at.radio(key="williams_alternative").set_value("two-sided").run()
    assert not at.exception, at.exception
    jset = cached.demo_judgments("graded", 200)
    scores = score_judgments(jset, list(choices.FAST_KEYS))
    expected = williams_matrix(jset.human(), scores.values, "pearson", "two-sided")
    shown = next(df.value for df in at.dataframe if df.value.shape == (4, 5)).set_index("metric")
    import numpy as np

    np.testing.assert_allclose(shown.to_numpy(float), expected.pvalues, equal_nan=True)
    # the tests compare |r|, as WMT's: said where the matrix is shown
    assert any("compares absolute correlations" in c.value for c in at.caption)
    at.selectbox(key="pair_a").select("rouge_l").run()
    at.selectbox(key="pair_b").select("bleu_4").run()
    detail = _frame_with(at, "arithmetic").set_index("quantity")
    assert detail.loc["df", "value"] == len(jset) - 3


def test_pairwise_knobs_by_key() -> None:
    at = _meta("app_pages/pairwise.py")
    # the demo pairs have 3 references: sample 2 of them, so the draws differ
    at.number_input(key="n_references").set_value(2).run()
    at.number_input(key="draws").set_value(2).run()
    at.selectbox(key="metric_tie").select("wrong").run()
    at.selectbox(key="human_tie").select("drop").run()
    assert not at.exception, at.exception
    table = _frame_with(at, "overall")
    assert {"HC", "HI", "HM", "MM"} <= set(table.columns)
    assert any("averaged over 2 draw(s)" in t.value for t in at.text)


def test_robustness_generated_and_uploaded() -> None:
    at = _meta("app_pages/robustness.py")
    table = _frame_with(at, "mean")
    assert {"other-image", "shuffled", "replaced-words", "dropped-words"} <= set(table.columns)
    upload = (
        "candidate_a,candidate_b,references,preferred,category\n"
        "a man rides a wave,a man rides a horse,a surfer rides a wave|||a man surfing,a,"
        "replace-scene\n"
        "a dog on grass,a man on grass,a dog lying on grass|||a brown dog,a,replace-person\n"
        # a tie names no correct caption: it was scored as if candidate_a were correct
        "a cat on a bed,a dog on a bed,a cat sleeping on a bed,tie,replace-person\n"
        # a type of ties alone has no pair: its column was NaN, and so was every mean
        "a red bus,a blue bus,a red bus on a street,tie,share-scene\n"
    )
    at.radio(key="distractor_source").set_value("Upload a pairwise file").run()
    at.file_uploader(key="distractor_file").set_value(("d.csv", upload.encode(), "text/csv"))
    at.run()
    at.button(key="load_distractors").click().run()
    assert not at.exception, at.exception
    table = _frame_with(at, "mean")
    assert {"replace-scene", "replace-person"} <= set(table.columns)
    assert "share-scene" not in table.columns and table["mean"].notna().all()
    said = [t.value for t in at.text if t.value.startswith("Pairs per distractor type")]
    assert said == [
        "Pairs per distractor type: replace-scene: 1, replace-person: 1. A metric tie counts "
        "as half. Left out: 2 pair(s) marked a tie (no correct caption)."
    ]


def _robustness_upload(at: AppTest, name: str, text: str) -> None:
    at.radio(key="distractor_source").set_value("Upload a pairwise file").run()
    at.file_uploader(key="distractor_file").set_value((name, text.encode(), "text/csv"))
    at.run()
    at.button(key="load_distractors").click().run()
    assert not at.exception, at.exception


def test_robustness_describes_the_columns_its_loader_requires() -> None:
    """The page said the correct caption is "`candidate_a`, or the one marked `preferred`":
    a file without `preferred` read as fine, and was refused. The text names `preferred` or
    the votes as required, and a file written by it loads (votes) or is refused (neither)."""
    at = _meta("app_pages/robustness.py")
    (said,) = [c.value for c in at.caption if c.value.startswith("Each pair holds")]
    assert "`preferred`" in said and "`votes_a`" in said and "`votes_b`" in said, said
    assert "one of the two is required" in said and "or the one marked" not in said, said
    rows = "a man rides a wave,a man rides a horse,a surfer rides a wave,{},replace-scene\n"
    _robustness_upload(
        at,
        "votes.csv",
        "candidate_a,candidate_b,references,votes_a,votes_b,category\n" + rows.format("3,1"),
    )
    assert not at.error and "replace-scene" in _frame_with(at, "mean").columns
    _robustness_upload(
        at,
        "pairs.csv",
        "candidate_a,candidate_b,references,category\n" + rows.format("").replace(",,", ","),
    )
    assert any("missing required column 'preferred'" in e.value for e in at.error)


def test_a_robustness_file_not_loaded_says_what_is_shown_instead() -> None:
    """A refused file said "the previous set is kept" with no file loaded before (the page
    showed the generated set). Now the error names its file and says what is shown: the
    generated set, or the file loaded before; a new file chosen clears it."""
    at = _meta("app_pages/robustness.py")
    no_preference = "candidate_a,candidate_b,references\na dog,a cat,a dog runs\n"
    _robustness_upload(at, "pairs.csv", no_preference)
    (said,) = [e.value for e in at.error]
    assert said.startswith(
        "pairs.csv was not loaded; the generated set is shown until a file is loaded. "
        "pairs.csv, line 1, column 'preferred': missing required column"
    ), said
    # the page has no column mapping: it points to the Judgments page, which has
    assert any("Load the file on the Judgments page (format pairwise)" in i.value for i in at.info)
    good = "candidate_a,candidate_b,references,preferred\na dog,a cat,a dog runs,a\n"
    at.file_uploader(key="distractor_file").set_value(("d.csv", good.encode(), "text/csv"))
    at.run()
    assert not at.error  # the error was pairs.csv's, not this file's
    at.button(key="load_distractors").click().run()
    _robustness_upload(at, "again.csv", no_preference)
    (said,) = [e.value for e in at.error]
    assert said.startswith("again.csv was not loaded; the distractor file loaded before (d.csv)")
    assert at.session_state[state.DISTRACTOR_SET_KEY].source == ("d.csv",)


def test_meta_pages_show_uploaded_markup_literally() -> None:
    hostile = GRADED_CSV.replace("a cat sleeps", HOSTILE.replace(",", " ")).replace(
        "quality", "<b>q</b>"
    )
    at = _meta("app_pages/judgments.py")
    at.radio(key="judgment_source").set_value("Upload a file").run()
    at.file_uploader(key="judgment_files-graded").set_value(("x.csv", hostile.encode(), "text/csv"))
    at.run()
    at.button(key="load_judgments").click().run()
    assert not at.error, [e.value for e in at.error]
    for page in ("app_pages/judgments.py", "app_pages/correlations.py"):
        at.switch_page(page).run()
        assert not at.exception, at.exception
        for element in _elements(at._tree):
            proto = getattr(element, "proto", None)
            text = str(proto) if proto is not None else ""
            if element.type in MARKDOWN_TYPES:
                assert not any(m in text for m in HOSTILE_MARKERS), (element.type, text)
            if element.type == "plotly_chart":
                assert "<b>q</b>" not in json.loads(proto.spec).__repr__()


# -- Compare: the SPICE and I²CE panels -----------------------------------------------------------
def _spice_graphs(at: AppTest) -> dict[str, dict[str, Any]]:
    """The two SPICE scene-graph figures, by title (candidate / references)."""
    titles = ("candidate", "references (one merged graph)")
    found = {
        f["layout"]["title"]["text"]: f
        for f in _figures(at)
        if f["layout"].get("title", {}).get("text") in titles
    }
    assert set(found) == set(titles), list(found)
    return found


def test_spice_panel_shows_the_library_tuples_graphs_and_categories() -> None:
    at = _compare()
    result = _expected(DEFAULT.candidate, DEFAULT.references)["spice"]
    details = result.segments[0].details
    tab = open_tab(at, "SPICE")
    shown = {m.label: m.value for m in tab.metric}
    assert shown["SPICE = F"] == f"{result.value:.4f}"

    frames = [df.value for df in tab.dataframe]
    candidate = next(f for f in frames if "first matching reference tuple" in f.columns)
    reference = next(
        f for f in frames if "tuple" in f.columns and "first matching reference tuple" not in f
    )
    assert list(candidate["tuple"]) == [str(t) for t in details.candidate]
    assert list(candidate["status"]) == [t.status for t in details.candidate]
    assert list(candidate["first matching reference tuple"]) == [
        "" if t.match is None else str(details.reference[t.match]) for t in details.candidate
    ]
    assert list(reference["tuple"]) == [str(t) for t in details.reference]
    assert list(reference["status"]) == [t.status for t in details.reference]
    # the default example has exact matches and misses on both sides
    assert {"exact", "missed"} <= set(candidate["status"])
    assert {"matched", "missed"} <= set(reference["status"])

    categories = next(f for f in frames if "category" in f.columns).set_index("category")
    assert list(categories.index) == [
        "All (SPICE)", "Object", "Attribute", "Relation", "Color", "Count", "Size"
    ]  # fmt: skip
    library = details.categories
    names = {"All (SPICE)": "All", "Count": "Cardinality"}
    for label, row in categories.iterrows():
        expected = library[names.get(label, label)]
        assert list(row[["P", "R", "F"]]) == [
            "—" if np.isnan(v) else f"{v:.4f}"
            for v in (expected.precision, expected.recall, expected.f)
        ], label
        assert (row["tp"], row["fp"], row["fn"]) == (expected.tp, expected.fp, expected.fn)
    assert categories.loc["Color", "F"] == "—", "no colour in the references: NaN"

    graphs = _spice_graphs(at)
    for figure, graph in (
        (graphs["candidate"], details.candidate_graph),
        (graphs["references (one merged graph)"], details.reference_graph),
    ):
        traces = {t["name"]: t for t in figure["data"] if t.get("name")}
        objects = [
            w
            for name in ("object (matched)", "object (missed)")
            for w in traces.get(name, {}).get("text", [])
        ]
        assert sorted(objects) == sorted("/".join(o) for o, _ in graph.nodes)
        relations = [
            w
            for name in ("relation (matched)", "relation (missed)")
            for w in traces.get(name, {}).get("text", [])
        ]
        assert sorted(relations) == sorted("/".join(r) for _, r, _ in graph.edges)
    # matched candidate objects are filled markers, missed ones open
    cand = {t["name"]: t for t in graphs["candidate"]["data"] if t.get("name")}
    assert cand["object (matched)"]["marker"]["symbol"] == "circle"


def test_spice_graph_figure_escapes_every_word() -> None:
    from capeval_core.metrics.spice import GraphView, SpiceTuple

    bold, link = ("<b>x</b>",), ("<a href='http://x'>y</a>",)
    script = ("<script>alert(1)</script>",)
    graph = GraphView(((bold, (script,)), (link, ())), ((0, script, 1),))
    tuples = (
        SpiceTuple((bold,), "exact", 0),
        SpiceTuple((bold, script), "missed", None),
        SpiceTuple((bold, script, link), "synonym", 0),
    )
    spec = json.dumps(json.loads(views.spice_graph_figure(graph, tuples, "t").to_json()))
    assert not any(m in spec for m in PLOTLY_MARKUP), spec
    assert "&lt;b&gt;x&lt;/b&gt;" in spec and "&lt;script&gt;" in spec


def test_spice_layout_gives_every_label_its_own_place() -> None:
    """Objects, attributes and relation labels (incl. parallel relations between one pair and
    a part sharing no edge with the rest) all get distinct, finite, repeatable positions."""
    from capeval_core.metrics.spice import GraphView

    man, wave, board, top = ("man",), ("wave",), ("surfboard",), ("top",)
    graph = GraphView(
        ((man, (("tall",),)), (wave, (("big",), ("blue",))), (board, ()), (top, ())),
        ((0, ("ride",), 1), (0, ("surf on",), 1), (0, ("stand on",), 2), (2, ("in",), 1)),
    )
    objects, attributes, relations = views.spice_layout(graph)
    points = [*objects, *(p for ps in attributes for p in ps), *relations]
    assert [len(a) for a in attributes] == [1, 2, 0, 0] and len(relations) == 4
    assert all(math.isfinite(c) for p in points for c in p)
    assert min(math.dist(p, q) for i, p in enumerate(points) for q in points[i + 1 :]) > 0.05
    assert views.spice_layout(graph) == (objects, attributes, relations)


@pytest.mark.parametrize(("tokenizer", "escaped"), [("ptb", "&gt;"), ("whitespace", "&lt;/b")])
def test_markup_in_captions_stays_text_in_the_spice_graphs(tokenizer: str, escaped: str) -> None:
    hostile = "a <b>dog</b> on a <script>alert(1)</script> couch"
    at = _compare(tokenizer=tokenizer)
    at.text_area(key="candidate").input(hostile)
    at.text_area(key="references").input(f"{hostile}\na dog on a sofa").run()
    open_tab(at, "SPICE")
    for figure in _spice_graphs(at).values():
        spec = json.dumps(figure)
        assert not any(m in spec for m in PLOTLY_MARKUP), spec
        # the parsed words are drawn, escaped ("dog</b" with whitespace, ">" with PTB)
        assert escaped in spec, spec
    # the tuples themselves are dataframe cells (plain text)
    frames = [df.value for df in open_tab(at, "SPICE").dataframe]
    assert any("tuple" in f.columns for f in frames)


def test_i2ce_panel_shows_the_library_cosines() -> None:
    at = _compare()
    result = _expected(DEFAULT.candidate, DEFAULT.references)["i2ce"]
    details = result.segments[0].details
    tab = open_tab(at, "I²CE")
    shown = {m.label: m.value for m in tab.metric}
    assert shown[f"I²CE: mean cosine over {len(details.cosines)} references"] == (
        f"{result.value:.4f}"
    )
    frame = next(df.value for df in tab.dataframe if "cosine" in df.value.columns)
    assert list(frame["cosine"].iloc[1:]) == list(details.cosines)
    assert list(frame["tokens"]) == [
        " ".join(s.tokens) for s in (details.candidate, *details.references)
    ]
    assert list(frame["out of vocabulary"]) == [
        " ".join(s.unknown) for s in (details.candidate, *details.references)
    ]
    bars = [f for f in _figures(at) if f["layout"]["yaxis"].get("title", {}).get("text")]
    assert any(
        list(t["y"]) == pytest.approx(list(details.cosines))
        for f in bars
        for t in f["data"]
        if t.get("type") == "bar"
    )


def test_i2ce_panel_lists_out_of_vocabulary_words() -> None:
    candidate = "a man riding a zzqxwave on a surfboard"
    at = _compare()
    at.text_area(key="candidate").input(candidate).run()
    assert not at.exception, at.exception
    details = _expected(candidate, DEFAULT.references)["i2ce"].segments[0].details
    assert "zzqxwave" in details.candidate.unknown
    frame = next(df.value for df in open_tab(at, "I²CE").dataframe if "cosine" in df.value.columns)
    assert "zzqxwave" in frame["out of vocabulary"].iloc[0]


#: per meta-evaluation page: its CSV downloads and what their signatures file must hold besides
#: the set (files, format, preset, digest): the choices that reproduce the table
DOWNLOAD_SETTINGS = {
    "app_pages/correlations.py": {
        "correlations.csv": {"human", "level", "resamples", "seed", "kendall_intervals"},
        "combined-metric.csv": {"human", "level", "combined_ranked_on"},
    },
    "app_pages/significance.py": {"williams-pvalues.csv": {"human", "correlation", "alternative"}},
    "app_pages/pairwise.py": {"pairwise-accuracy.csv": set()},
    "app_pages/robustness.py": {"robustness.csv": {"metric_tie"}},
}


@pytest.mark.parametrize("page", list(DOWNLOAD_SETTINGS))
def test_every_csv_download_has_its_signatures_and_settings_beside_it(page, monkeypatch) -> None:
    """The combined metric's and the Williams p-values' CSVs had no signatures file; the
    others' named the metrics alone, not the set, resampling, test or tie rule behind them."""
    from capeval_ui.meta_views import common

    made: dict[str, tuple[dict, dict]] = {}
    real = common.signatures_text

    def spy(signatures, describes="", **extra):
        made[describes] = (dict(signatures or {}), extra.get("settings", {}))
        return real(signatures, describes, **extra)

    monkeypatch.setattr(common, "signatures_text", spy)
    at = _meta(page)
    labels = [b.proto.label for b in at.get("download_button")]
    assert labels.count("Signatures (JSON)") == labels.count("Download CSV") > 0, labels
    for name, keys in DOWNLOAD_SETTINGS[page].items():
        signatures, settings = made[name]
        assert signatures and all(s for s in signatures.values()), name
        assert {"judgments", "format", "preset", "set_sha256", *keys} <= set(settings), name


@pytest.mark.parametrize(
    ("page", "name"),
    [
        ("app_pages/pairwise.py", "pairwise-accuracy.csv"),
        ("app_pages/robustness.py", "robustness.csv"),
    ],
)
def test_accuracy_csv_rows_name_the_keys_their_signatures_have(page, name, monkeypatch) -> None:
    """The accuracy CSVs named each row by its label ("BLEU-4") while their signatures file
    names metrics by key ("bleu_4"): no row could be matched to its signature."""
    from capeval_ui.meta_views import common

    frames: list[pd.DataFrame] = []
    made: dict[str, dict] = {}
    real_csv, real_sig = common.to_csv_text, common.signatures_text
    monkeypatch.setattr(common, "to_csv_text", lambda f: frames.append(f) or real_csv(f))

    def spy(signatures, describes="", **extra):
        made[describes] = dict(signatures or {})
        return real_sig(signatures, describes, **extra)

    monkeypatch.setattr(common, "signatures_text", spy)
    at = _meta(page)
    assert not at.exception, at.exception
    (frame,) = [f for f in frames if "metric" in f.columns and "overall" in f.columns] or [
        f for f in frames if "metric" in f.columns and "mean" in f.columns
    ]
    assert list(frame.columns[:2]) == ["metric", "key"]
    assert list(frame["key"]) == list(made[name]) and all(made[name].values())


def test_system_level_downloads_leave_the_p_values_empty_as_the_page_does(monkeypatch) -> None:
    """With 5 systems the page said "too few for a meaningful p-value" while correlations.csv
    still had its p-values: now the download follows the page's rule, and its signatures file
    says why the cells are empty. A Williams test (the combined table's, the Significance
    page's) takes its degrees of freedom from n and keeps its p-value on the page and in the
    download alike."""
    from capeval_core.stats import MIN_N_FOR_PVALUE
    from capeval_ui.meta_views import common

    frames: dict[str, pd.DataFrame] = {}
    settings: dict[str, dict] = {}
    real_csv, real_sig = common.to_csv_text, common.signatures_text

    def csv_spy(frame):
        frames[f"#{len(frames)}"] = frame.copy()
        return real_csv(frame)

    def sig_spy(signatures, describes="", **extra):
        settings[describes] = extra.get("settings", {})
        return real_sig(signatures, describes, **extra)

    monkeypatch.setattr(common, "to_csv_text", csv_spy)
    monkeypatch.setattr(common, "signatures_text", sig_spy)
    at = _meta("app_pages/correlations.py")
    at.multiselect(key="meta_metrics").set_value(["bleu_4", "rouge_l"]).run()
    at.selectbox(key="human_column").select("corruption_level").run()
    frames.clear()
    at.radio(key="correlation_level").set_value("system").run()
    assert not at.exception, at.exception
    assert _frame_with(at, "95% CI low")["pvalue"].isna().all()  # the page's rule
    table = next(f for f in frames.values() if "pvalue" in f.columns)
    combined = next(f for f in frames.values() if "Williams p vs best single" in f.columns)
    assert set(table["n"]) == {5} and table["pvalue"].isna().all()
    shown = _frame_with(at, "subset")["Williams p vs best single"]
    np.testing.assert_array_equal(combined["Williams p vs best single"], shown)
    why = (
        "left empty: n = 5 systems, too few for a meaningful p-value "
        f"(shown from n = {MIN_N_FOR_PVALUE})"
    )
    assert settings["correlations.csv"]["pvalues"] == why
    assert "pvalues" not in settings["combined-metric.csv"]


def _opposed_script() -> None:
    import numpy as np

    from capeval_core.stats import williams_matrix
    from capeval_ui.meta_views.significance import render_williams_matrix

    rng = np.random.default_rng(0)
    a = rng.normal(size=40)
    b = -0.6 * a + 0.8 * rng.normal(size=40)
    matrix = williams_matrix(a + b + rng.normal(size=40), {"bleu_4": a, "cider_d": b})
    render_williams_matrix(matrix, {}, {})


def test_the_williams_matrix_says_two_metrics_that_agree_with_humans_but_not_each_other() -> None:
    """The tests take |r23| (as WMT's): for two metrics that both agree with the humans and
    correlate negatively with each other, their p is smaller than the signed test's."""
    at = AppTest.from_function(_opposed_script, default_timeout=TIMEOUT).run()
    assert not at.exception, at.exception
    said = " ".join(c.value for c in at.caption)
    assert "CIDEr-D and BLEU-4, each turned to agree with the humans, correlate negatively" in said
    assert "(r = -0.5183)" in said


def _spice_over_one_script() -> None:
    from capeval_core.metrics.spice import Spice
    from capeval_ui import views

    result = Spice().score(["a piece and the world"], [["a man"]])
    segment = result.segments[0]
    views.render_details(segment.details, segment, result, "spice")


def test_spice_above_one_is_explained_where_it_is_drawn() -> None:
    """Two candidate tuples match the one reference tuple (spice-1.0.jar gives R = 2 and
    SPICE 1.3333 too): the page said only "2 of 2 candidate tuple(s) match"."""
    at = AppTest.from_function(_spice_over_one_script, default_timeout=TIMEOUT).run()
    assert not at.exception, at.exception
    said = " ".join(c.value for c in at.caption)
    assert "R passes 1 here: SPICE 1.0 matches each candidate tuple on its own" in said
    assert "2 candidate tuples matched the 1 reference tuple(s)" in said


def _bleu_equal_lengths_script() -> None:
    from capeval_core.metrics.bleu import Bleu
    from capeval_ui import views

    result = Bleu().score(["a man riding a horse"], [["a man riding a horse", "a dog"]])
    segment = result.segments[0]
    views.render_details(segment.details, segment, result, "bleu")


def test_bleus_brevity_rule_at_equal_lengths_is_the_one_applied() -> None:
    """c = r: pycocoevalcap 1.2's BLEU gives BP = exp(1 - (r + 1e-9) / (c + 1e-15)), just under
    1 (here 0.9999999998, not 1); the page said "BP = 1, as c ≥ r"."""
    at = AppTest.from_function(_bleu_equal_lengths_script, default_timeout=TIMEOUT).run()
    assert not at.exception, at.exception
    said = " ".join(m.value for m in at.markdown)
    assert "c = 5 and reference length r = 5" in said and "BP = 1, as c" not in said
    assert "exp(1 − (r + 10⁻⁹) / (c + 10⁻¹⁵)), just under 1" in said
