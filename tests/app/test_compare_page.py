"""AppTest checks of issue 34 on the Compare page: the evidence follows every edit, every
number says what it means, every choice survives a reload."""

from __future__ import annotations

import json
import re
import warnings
from typing import Any

import pytest
from streamlit.testing.v1 import AppTest

from capeval_core import DegenerateCorpusWarning, score_many
from capeval_core.examples import BUILTIN_EXAMPLES, DEFAULT_EXAMPLE
from capeval_core.metrics import METRICS, REPORTED_KEYS, metric_class
from capeval_ui import choices, views
from capeval_ui.views import key_label
from tests.app.apptest import ROOT, TIMEOUT, open_tab
from tests.app.test_workbench import COMPARE, _app, _compare

DEFAULT = BUILTIN_EXAMPLES[DEFAULT_EXAMPLE]
#: issue 34's teacher's example: reference #2 wins METEOR, ROUGE-L and WMD, where the default
#: example's winners are #3, #1 and #3
HORSE = "a man is riding a horse on the beach"
SHORE = (
    "a person rides a horse along the shore",
    "a man on horseback at the beach",
    "someone riding a brown horse near the ocean",
)


def _details(candidate: str, references: tuple[str, ...]) -> dict[str, Any]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateCorpusWarning)
        scored = score_many(["meteor", "rouge_l", "wmd"], [candidate], [list(references)])
    return {k: r.segments[0].details for k, r in scored.items()}


def _figures(at: AppTest) -> list[dict[str, Any]]:
    return [json.loads(e.proto.spec) for e in at.get("plotly_chart")]


def _picked(at: AppTest, key: str) -> tuple[int, str]:
    """The picker's value and the label the browser shows for it."""
    box = at.selectbox(key=key)
    return box.value, box.options[box.index]


def _assert_evidence_on_the_winner(at: AppTest, candidate: str, refs: tuple[str, ...]) -> None:
    """Heading, picker and drawing of METEOR, ROUGE-L and WMD all name the winning reference."""
    details = _details(candidate, refs)
    open_tab(at, "METEOR")
    markdown = "\n".join(m.value for m in at.markdown)

    best = details["meteor"].best
    assert f"reference #{best + 1} wins" in markdown
    assert _picked(at, "meteor-reference") == (best, f"#{best + 1} (winning reference)")
    (figure,) = [
        f for f in _figures(at) if "hypothesis" in f["layout"]["yaxis"].get("ticktext", ())
    ]
    assert figure["layout"]["yaxis"]["ticktext"][0] == f"reference #{best + 1}"
    arithmetic = next(c.value for c in at.code if c.value.startswith("parameters:"))
    assert arithmetic.rstrip().endswith(f"= {details['meteor'].alignments[best].score:.4f}")

    open_tab(at, "ROUGE-L")
    rouge = details["rouge_l"]
    fs = [r.f_measure for r in rouge.references]
    best = fs.index(max(fs))
    assert _picked(at, "rouge_l-reference") == (best, f"#{best + 1} (highest F)")
    (table,) = [df.value for df in at.dataframe if "LCS" in df.value.columns]
    assert table["F"].idxmax() == best  # the table and the picker agree
    assert table.loc[best, "reference"] == f"#{best + 1} (highest F)"
    (tab,) = [t for t in at.tabs if t.label == METRICS["rouge_l"].name]
    (strip,) = [df.value for df in tab.dataframe if "candidate" in df.value.index]
    assert list(strip.index) == ["candidate", f"reference #{best + 1}"]

    open_tab(at, "WMD")
    text = "\n".join(t.value for t in at.text)
    wmd = details["wmd"]
    best = wmd.best
    shown = {m.label: m.value for m in at.metric}
    assert shown["winning reference"] == f"#{best + 1} of {len(refs)}"
    assert _picked(at, "wmd-reference") == (best, f"#{best + 1} (winning reference)")
    assert f"reference #{best + 1}: distance {wmd.pairs[best].distance:.4f}" in text


def test_the_picker_follows_the_winning_reference_after_an_edit() -> None:
    at = _compare()
    before = _details(DEFAULT.candidate, DEFAULT.references)
    assert (before["meteor"].best, before["rouge_l"].best_reference, before["wmd"].best) != (
        1,
        1,
        1,
    )
    at.text_area(key="candidate").input(HORSE)
    at.text_area(key="references").input("\n".join(SHORE)).run()
    assert not at.exception, at.exception
    _assert_evidence_on_the_winner(at, HORSE, SHORE)


def test_the_picker_follows_a_reordering_of_the_references_and_keeps_a_choice_otherwise() -> None:
    at = _compare(candidate=HORSE, ref=list(SHORE))
    _assert_evidence_on_the_winner(at, HORSE, SHORE)
    # a reference picked by hand stays picked while the inputs stay, another tab opened or not
    open_tab(at, "METEOR")
    at.selectbox(key="meteor-reference").select(2).run()
    open_tab(at, "BLEU")
    at.radio(key="bleu-order").set_value(2).run()
    open_tab(at, "METEOR")
    assert at.selectbox(key="meteor-reference").value == 2
    # the winner moves to the top: every picker goes with it
    reordered = (SHORE[1], SHORE[2], SHORE[0])
    at.text_area(key="references").input("\n".join(reordered)).run()
    assert not at.exception, at.exception
    _assert_evidence_on_the_winner(at, HORSE, reordered)
    open_tab(at, "METEOR")
    assert at.selectbox(key="meteor-reference").value == 0


# -- every number says what it means ---------------------------------------------------------------
def test_each_score_card_says_what_it_measures_its_range_and_direction() -> None:
    at = _compare()
    labels = [key_label(k) for k in REPORTED_KEYS]
    cards = {m.label: m.proto.help for m in at.metric if m.label in labels}
    assert list(cards) == labels
    for key in REPORTED_KEYS:
        cls = metric_class(key)
        help_text = cards[key_label(key)]
        first, _, rest = help_text.partition("\n\n")
        assert first == cls.describe(key)
        assert cls.measured(key) in first
        # the signature stays in reach, below the meaning
        assert rest.startswith("Signature: `" + key.split("_")[0])
    assert cards["CIDEr-D"].startswith("CIDEr-D: ")
    assert "range 0 to 10, higher is better." in cards["CIDEr-D"]
    assert "range −1 to 1, higher is better." in cards["MEAN"]


# -- the example picker says what is on the page ---------------------------------------------------
def _captions(at: AppTest) -> str:
    return "\n".join(c.value for c in at.caption)


def test_the_example_picker_says_your_own_once_the_captions_are_edited() -> None:
    at = _compare()
    assert at.selectbox(key="example").value == DEFAULT_EXAMPLE
    # "Table 2" says where it comes from, beside the picker and in its help
    assert "Table 2 in Kilickaya et al. (2017)" in _captions(at)
    assert "Kilickaya et al. (2017)" in at.selectbox(key="example").help
    at.text_area(key="candidate").input(HORSE).run()
    assert not at.exception, at.exception
    assert at.selectbox(key="example").value == choices.YOUR_OWN
    assert "Kilickaya" not in _captions(at)
    assert at.text_area(key="candidate").value == HORSE  # nothing is replaced
    # an example picked again fills the text areas and is named again
    at.selectbox(key="example").select("Table 2 style: synonyms").run()
    example = BUILTIN_EXAMPLES["Table 2 style: synonyms"]
    assert at.text_area(key="candidate").value == example.candidate
    assert at.selectbox(key="example").value == "Table 2 style: synonyms"
    at.text_area(key="references").input("a surfer on a wave").run()
    assert at.selectbox(key="example").value == choices.YOUR_OWN
    # picking "your own" keeps what is typed
    at.selectbox(key="example").select(choices.YOUR_OWN).run()
    assert at.text_area(key="references").value == "a surfer on a wave"


def test_a_link_to_own_captions_opens_on_your_own() -> None:
    at = _compare(candidate=HORSE, ref=list(SHORE))
    assert at.selectbox(key="example").value == choices.YOUR_OWN
    same = _compare(candidate=DEFAULT.candidate, ref=list(DEFAULT.references))
    assert same.selectbox(key="example").value == DEFAULT_EXAMPLE


def test_the_lab_example_picker_says_your_own_once_the_caption_is_edited() -> None:
    at = AppTest.from_file(str(ROOT / "app_pages/perturb.py"), default_timeout=TIMEOUT)
    at.session_state["lab_metrics"] = ["bleu_4"]
    at.run()
    assert at.selectbox(key="lab_example").value == DEFAULT_EXAMPLE
    assert "Table 2 in Kilickaya et al. (2017)" in _captions(at)
    at.text_area(key="lab_candidate").input(HORSE).run()
    assert not at.exception, at.exception
    assert at.selectbox(key="lab_example").value == choices.YOUR_OWN
    assert at.text_area(key="lab_candidate").value == HORSE


# -- one number format, the app's own words ----------------------------------------------------
#: what pandas appends to a cell that has a tooltip
TOOLTIP = '<span class="pd-t"></span>'


def _shown(element: Any) -> Any:
    """A table's cells as the browser shows them (its Styler's display values)."""
    import pyarrow as pa

    styler = element.proto.arrow_data.styler
    assert styler.display_values, "expected a formatted table"
    shown = pa.ipc.open_stream(styler.display_values).read_pandas()
    # a cell's tooltip anchor is not its text
    return shown.map(lambda v: v.replace(TOOLTIP, "") if isinstance(v, str) else v)


def test_a_tiny_score_reads_the_same_on_its_card_its_tables_and_the_a_b_table() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateCorpusWarning)
        bleu_3 = score_many(["bleu"], [HORSE], [list(SHORE)])["bleu"].corpus["bleu_3"]
    assert 0 < bleu_3 < 5e-5  # issue 34: 0.0000 on the card, 3.989e-06 in the A/B table
    text = views.format_number(bleu_3)
    assert text == "< 0.001"  # issue 42: one rule, the exact value in the card's tooltip
    at = _compare(candidate=HORSE, ref=list(SHORE))
    (card,) = [m for m in at.metric if m.label == "BLEU-3"]
    assert card.value == text and f"{bleu_3:.6g}" in card.help
    (scores,) = [df for df in at.dataframe if "signature" in df.value.columns]
    assert _shown(scores).set_index("key").loc["bleu_3", "value"] == text
    (orders,) = [df for df in at.dataframe if "BLEU-n" in df.value.columns]
    assert _shown(orders)["BLEU-n"].iloc[2] == text
    at.text_area(key="candidate_b").input("a dog sleeps on a couch").run()
    assert not at.exception, at.exception
    (verdict,) = [tb for tb in at.table if "higher" in tb.value.columns]
    # a static table's cell is Markdown: escaped, so that it shows the text as written
    from capeval_ui.formats import literal

    assert _shown(verdict).set_index("metric").loc["BLEU-3", "A"] == literal(text)
    # the exact value on hover: pandas' tooltip rule for that cell, which the table keeps
    assert f'content: "exactly {bleu_3:.6g}"' in verdict.proto.arrow_data.styler.styles


def test_messages_on_the_page_say_controls_not_library_options() -> None:
    at = _compare()
    at.radio(key="cider_idf").set_value("scored set").run()
    open_tab(at, "CIDEr-D")  # its panel's warning
    words = [e.value for kind in ("warning", "error", "info") for e in at.get(kind)]
    assert any("CIDEr-D IDF source" in w.value and "COCO val2014" in w.value for w in at.warning)
    for message in words:
        assert not re.search(r"\w+\s*=\s*['\"]", message), message


# -- every choice in the URL, a link to copy -------------------------------------------------------
def _param(at: AppTest, key: str) -> str:
    value = at.query_params[key]
    return value[0] if isinstance(value, list) else value


def test_every_choice_is_in_the_url_and_comes_back_on_a_reload() -> None:
    at = _compare()
    assert [_param(at, k) for k in ("idf", "tokenizer")] == ["coco-val2014", "ptb"]
    at.radio(key="cider_idf").set_value("scored set").run()
    at.radio(key="tokenizer").set_value("whitespace").run()
    assert not at.exception, at.exception
    params = {k: _param(at, k) for k in ("idf", "tokenizer", "candidate")}
    assert params == {"idf": "corpus", "tokenizer": "whitespace", "candidate": DEFAULT.candidate}
    # a reload is a new session that keeps only the URL
    params["ref"] = list(DEFAULT.references)
    again = _compare(**params)
    assert again.radio(key="cider_idf").value == "scored set"
    assert again.radio(key="tokenizer").value == "whitespace"
    (scores,) = [df.value for df in again.dataframe if "signature" in df.value.columns]
    signatures = scores.set_index("key")["signature"]
    assert "tok:whitespace" in signatures["bleu_4"]
    assert "idf-source" not in signatures["cider_d"]  # the scored set
    assert "parser:stanford-pcfg|" in signatures["spice"]


@pytest.mark.parametrize("parser", ["stanford-emulation", "spacy-sm"])
def test_a_link_naming_a_retired_parser_scores_with_the_exact_one_and_says_so(parser) -> None:
    """Links from the versions that offered three parsers still open: a note names the
    retired parser, SPICE is scored with stanford-pcfg, and the page's URL drops the choice."""
    at = _compare(candidate=HORSE, ref=list(SHORE), spice_parser=parser)
    assert not at.exception, at.exception
    (note,) = [i.value for i in at.info if parser in i.value]
    assert "retired" in note and "stanford-pcfg" in note
    (scores,) = [df.value for df in at.dataframe if "signature" in df.value.columns]
    assert "parser:stanford-pcfg|" in scores.set_index("key")["signature"]["spice"]
    assert "spice_parser" not in at.query_params
    assert _param(at, "candidate") == HORSE
    # said once: not also as a value "not a setting of this page"
    assert not [w.value for w in at.warning if "not a setting of this page" in w.value]


def test_a_link_naming_the_parser_in_use_says_nothing_and_junk_is_named() -> None:
    at = _compare(candidate=HORSE, ref=list(SHORE), spice_parser="stanford-pcfg")
    assert not [m.value for m in (*at.warning, *at.info) if "spice" in m.value]
    at = _compare(candidate=HORSE, ref=list(SHORE), spice_parser="bogus")
    (said,) = [w.value for w in at.warning if "spice" in w.value]
    assert "bogus" in said and "not a setting of this page" in said


def test_the_copy_link_holds_the_whole_address() -> None:
    at = _compare(candidate=HORSE, ref=list(SHORE))
    (popover,) = [p for p in at.get("popover") if p.proto.popover.label == "Copy link"]
    (link,) = [c.value for c in popover.code]
    path, _, query = link.partition("?")
    assert path.endswith("/compare-captions")
    from urllib.parse import parse_qs

    parsed = parse_qs(query)
    assert parsed["candidate"] == [HORSE]
    assert parsed["ref"] == list(SHORE)
    assert parsed["idf"] == ["coco-val2014"] and parsed["tokenizer"] == ["ptb"]


# -- the Perturbation lab takes Compare's caption, and keeps its own on a reload -------------------
LAB = "app_pages/perturb.py"


def test_a_coco_image_handed_to_the_lab_is_named_there() -> None:
    """Compare's random COCO image, handed to the lab, was "Your own captions" there (the
    built-in examples were named)."""
    at = _compare()
    at.selectbox(key="example").select(choices.COCO_RANDOM).run()
    said = next(c.value for c in at.caption if c.value.startswith("This example: COCO"))
    at.session_state["lab_metrics"] = ["bleu_4"]
    at.button(key="to_lab").click().run()
    assert not at.exception, at.exception
    assert at.selectbox(key="lab_example").value == choices.COCO_RANDOM
    assert said in [c.value for c in at.caption]


def test_the_lab_opens_on_the_caption_studied_on_compare_and_leads_back() -> None:
    at = _compare()
    at.text_area(key="candidate").input(HORSE)
    at.text_area(key="references").input("\n".join(SHORE)).run()
    at.session_state["lab_metrics"] = ["bleu_4"]  # keeps the lab's scoring short
    at.button(key="to_lab").click().run()
    assert not at.exception, at.exception
    assert [t.value for t in at.title] == ["Perturbation lab"]
    assert at.text_area(key="lab_candidate").value == HORSE
    assert at.text_area(key="lab_references").value == "\n".join(SHORE)
    assert at.selectbox(key="lab_example").value == choices.YOUR_OWN
    links = [e.proto for e in at.get("page_link")]
    assert any(link.label == "Back to Compare captions" for link in links)
    # the way back finds Compare as it was left
    at.switch_page(COMPARE).run()
    assert at.text_area(key="candidate").value == HORSE


def test_a_first_visit_to_the_lab_starts_from_compare() -> None:
    at = _compare()
    at.text_area(key="candidate").input(HORSE).run()
    at.session_state["lab_metrics"] = ["bleu_4"]
    at.switch_page(LAB).run()
    assert not at.exception, at.exception
    assert at.text_area(key="lab_candidate").value == HORSE


def test_the_lab_keeps_its_inputs_on_a_reload() -> None:
    at = _app().run()
    at.session_state["lab_metrics"] = ["bleu_4", "rouge_l"]
    at.switch_page(LAB).run()
    at.text_area(key="lab_candidate").input(HORSE)
    at.text_area(key="lab_references").input("\n".join(SHORE))
    at.multiselect(key="lab_perturbations").set_value(["shuffle"])
    at.number_input(key="lab_seed").set_value(7).run()
    assert not at.exception, at.exception
    params = {k: at.query_params[k] for k in at.query_params}
    # a reload is a new session that keeps only the URL
    again = _app(**params).run()
    again.switch_page(LAB).run()
    assert not again.exception, again.exception
    assert again.text_area(key="lab_candidate").value == HORSE
    assert again.text_area(key="lab_references").value == "\n".join(SHORE)
    assert again.multiselect(key="lab_perturbations").value == ["shuffle"]
    assert again.number_input(key="lab_seed").value == 7
    assert again.multiselect(key="lab_metrics").value == ["bleu_4", "rouge_l"]
    assert again.selectbox(key="lab_example").value == choices.YOUR_OWN


# -- Robustness: ties count half, labels readable ------------------------------------------------
def test_robustness_counts_wmd_ties_on_shuffled_captions_half_and_labels_every_bar() -> None:
    from capeval_ui import meta_views

    at = _app().run()
    at.session_state["_meta_metrics_kept"] = ["wmd", "bleu_4"]
    at.switch_page("app_pages/robustness.py").run()
    assert not at.exception, at.exception
    frame = next(df.value for df in at.dataframe if "shuffled" in df.value.columns)
    rows = frame.set_index("metric")
    # WMD ignores word order: a shuffled caption ties with its original, a tie counts half
    assert rows.loc["WMD", "shuffled"] == 50.0
    assert rows.loc["BLEU-4", "shuffled"] > 50.0
    (chart,) = [
        json.loads(e.proto.spec)
        for e in at.get("plotly_chart")
        if "correct caption preferred" in e.proto.spec
    ]
    # one row per bar, each value written outside its bar, with room for it
    bars = sum(len(trace["y"]) for trace in chart["data"])
    assert {trace["orientation"] for trace in chart["data"]} == {"h"}
    assert {trace["textposition"] for trace in chart["data"]} == {"outside"}
    assert chart["layout"]["height"] >= meta_views.ACCURACY_BAR_PX * bars


# -- nothing cut side by side ----------------------------------------------------------------------
def test_side_by_side_panel_labels_are_short_and_heatmap_numbers_readable() -> None:
    from capeval_ui.views import wmd

    at = _compare(candidate=HORSE, ref=list(SHORE))
    at.text_area(key="candidate_b").input("a dog sleeps on a couch").run()
    assert not at.exception, at.exception
    for name in ("ROUGE-L", "WMD", "SPICE"):
        tab = open_tab(at, name)
        labels = [m.label for m in tab.metric]
        assert len(labels) == 6, (name, labels)  # three per candidate, a third of a half each
        # about 18 characters fit a third of half the page at 1,280 px ("distance WMD (winn…")
        assert all(len(label) <= 18 for label in labels), labels
    open_tab(at, "WMD")
    heatmaps = [f for f in _figures(at) if f["data"] and f["data"][0]["type"] == "heatmap"]
    assert len(heatmaps) == 4  # cost and flow, per candidate
    for figure in heatmaps:
        assert figure["data"][0]["textfont"]["size"] == wmd.HEATMAP_TEXT_PX >= 12


def test_side_by_side_panels_stack_their_inner_columns_and_text_columns_fit_their_text() -> None:
    at = _compare(candidate=HORSE, ref=list(SHORE))
    # one candidate: a caption's column is as wide as its longest text ("…near the ocea"),
    # or, where the table would be wider than the tab, its rows tall enough to wrap it
    open_tab(at, "ROUGE-L")
    (rouge,) = [df for df in at.dataframe if "LCS" in df.value.columns]
    config = json.loads(rouge.proto.columns)
    needed = views.cell_width(["text", *rouge.value["text"]])
    assert config["text"]["width"] >= needed or rouge.proto.row_height > 64
    at.text_area(key="candidate_b").input("a dog sleeps on a couch").run()
    assert not at.exception, at.exception
    for name in ("BLEU", "CIDEr-D", "METEOR"):
        tab = open_tab(at, name)
        # the two candidates' halves, and no column inside either: a quarter of the page
        # cut the BLEU tables side by side
        assert len(tab.columns) == 2, name


def test_a_long_token_strip_wraps_onto_further_strips_side_by_side() -> None:
    long = "a man in a red shirt is riding a brown horse on the sandy beach near the blue ocean"
    n = len(long.split())
    at = _compare(candidate=long, ref=list(SHORE))
    at.text_area(key="candidate_b").input("a dog sleeps on a couch").run()
    assert not at.exception, at.exception
    (tab,) = [t for t in at.tabs if t.label == "BLEU"]
    side_a = tab.columns[0]
    strips = [df for df in side_a.dataframe if list(df.value.index) == ["candidate"]]
    assert len(strips) > 1
    positions = [c for df in strips for c in df.value.columns]
    assert positions == [str(i + 1) for i in range(n)]  # every word, once, in order
    for df in strips:
        widths = [c["width"] for c in json.loads(df.proto.columns).values() if "width" in c]
        label = views.cell_width(["candidate"], maximum=240)
        assert label + sum(widths) <= views.NARROW_STRIP_PX or len(widths) == 1


def test_home_lists_what_each_metric_measures() -> None:
    at = _app().run()
    assert not at.exception, at.exception
    (registry,) = [df.value for df in at.dataframe if "measures" in df.value.columns]
    assert dict(zip(registry["key"], registry["measures"], strict=True)) == {
        key: cls.measures for key, cls in METRICS.items()
    }


def test_an_edited_lab_link_with_values_out_of_range_still_opens() -> None:
    at = _app(lab_caption=HORSE, lab_seed="-3", lab_n="0", lab_perturbation=["shuffle", "nope"])
    at.session_state["lab_metrics"] = ["bleu_4"]
    at.run()
    at.switch_page(LAB).run()
    assert not at.exception, at.exception
    assert at.text_area(key="lab_candidate").value == HORSE
    assert at.number_input(key="lab_seed").value == 0
    assert at.number_input(key="lab_n").value == 1
    assert at.multiselect(key="lab_perturbations").value == ["shuffle"]


def test_a_compare_link_with_unknown_choices_keeps_the_defaults() -> None:
    at = _compare(candidate=HORSE, ref=list(SHORE), idf="bogus", tokenizer="nope")
    assert at.radio(key="cider_idf").value == choices.DEFAULT_IDF
    assert at.radio(key="tokenizer").value == "ptb"
    assert _param(at, "idf") == "coco-val2014"  # the page writes what it scored with


def test_bleu_values_standing_on_the_smoothing_constant_are_a_tie_in_the_verdict() -> None:
    """Neither candidate shares a 3-word sequence with a reference: BLEU-3 of 6.6e-7 and
    1.3e-11 are pycocoevalcap's smoothing constant under the lengths, and the verdict
    counted them as a win for A."""
    refs = ["a man riding a wave on top of a surfboard", "a surfer rides a large wave in the ocean"]
    at = _compare(candidate="a man surfing", candidate_b="the man surfing today", ref=refs)
    (verdict,) = [tb for tb in at.table if "higher" in tb.value.columns]
    rows = verdict.value.set_index("metric")
    for order in ("BLEU-3", "BLEU-4"):
        assert rows.loc[order, "A"] > rows.loc[order, "B"] > 0  # the values still differ
        assert rows.loc[order, "higher"] == "tie"
    assert rows.loc["BLEU-3", "why"].startswith(
        "neither candidate matches a 3-word sequence of a reference: BLEU-3 is 0 for both"
    )
    # the lowest order without a match, said with why BLEU-4 is 0 (it read as a typo)
    assert rows.loc["BLEU-4", "why"].startswith(
        "neither candidate matches a 3-word sequence of a reference, so no 4-word one either: "
        "BLEU-4 is 0 for both"
    )
    # A matches a 2-word sequence and B none: BLEU-2 stands on A's words, a win
    assert rows.loc["BLEU-2", "higher"] == "A"
    counts = verdict.value["higher"].value_counts()
    (said,) = [m.value for m in at.markdown if m.value.startswith("**A scores higher on")]
    assert f", {counts['tie']} tie" in said


def test_a_long_caption_s_spice_parse_shows_how_far_it_is(monkeypatch, tmp_path) -> None:
    """An 80-word caption is one sentence to SPICE's parser: the page showed a still spinner
    (a minute for 200 words) where the SPICE card promises "parsing a 215-word caption, 40 %"."""
    from streamlit.delta_generator import DeltaGenerator

    from capeval_ui import cached

    monkeypatch.setenv("CAPEVAL_CACHE_DIR", str(tmp_path))  # no parse cached before
    cached.clear_scores()
    shown: list[str] = []
    real = DeltaGenerator.progress

    def record(self, value, text=None):
        shown.append(text or "")
        return real(self, value, text=text)

    monkeypatch.setattr(DeltaGenerator, "progress", record)
    sentence = (
        "a man in a red shirt and a woman with a blue hat stand beside a brown dog that "
        "sits on the grass near a white fence while two children play with a ball "
    )
    long = " ".join((sentence * 3).split()[:80])
    at = _compare(candidate=long, ref=["a man and a woman with a dog in a park"])
    assert not at.exception, at.exception
    parsing = [t for t in shown if t.startswith("SPICE: parsing a 80-word caption, ")]
    assert parsing and parsing[-1].endswith(" %")
    # the bar is gone once the numbers are there
    assert not [p for p in at.get("progress") if "SPICE" in str(p.proto)]
    cached.clear_scores()


def test_a_candidate_too_short_for_the_order_is_said_to_have_none() -> None:
    """A reference word for word but three words long has no 4-word sequence: its BLEU-4
    (0.0316, pycocoevalcap's 1e-6 precision) and a caption matching nothing (4.5e-16) are
    both 0 unsmoothed; the row said A "shares" no 4-word sequence, as if it had one."""
    from capeval_core.api import score
    from capeval_ui.views.compare import comparison_frame

    refs = ["a man riding", "a man riding a horse on a beach"]
    keys = ["bleu_3", "bleu_4"]
    a = {k: score(k, ["a man riding"], [refs]) for k in keys}
    b = {k: score(k, ["dog cat bird fish"], [refs]) for k in keys}
    rows = comparison_frame(a, b).set_index("metric")
    assert rows.loc["BLEU-3", "higher"] == "A"  # A matches every word sequence it has
    assert rows.loc["BLEU-4", "higher"] == "tie"
    assert rows.loc["BLEU-4", "why"].startswith(
        "neither candidate matches a 4-word sequence of a reference (A has none): BLEU-4 is 0"
    )


def test_a_tiny_negative_difference_keeps_its_sign_in_the_static_table():
    """The verdict's table is static, and Streamlit reads its cells as Markdown: "> −0.001"
    (A − B of BLEU-4 here, -6.4e-05) was a quote block that showed "−0.001"."""
    from capeval_core.api import score
    from capeval_ui.views.compare import comparison_frame, comparison_styler

    refs = [
        "a dog running on grass",
        "a brown dog runs across a field",
        "a dog playing in a park",
    ]
    a = {"bleu_4": score("bleu_4", ["a dog runs on the grass"], [refs])}
    b = {"bleu_4": score("bleu_4", ["a brown dog running in a green field"], [refs])}
    frame = comparison_frame(a, b)
    assert -1e-3 < frame.loc[0, "A − B"] < 0
    html = comparison_styler(frame).to_html()
    assert ">\\> −0.001<" in html and ">\\< 0.001<" in html


def test_meteors_matched_words_are_whole_numbers_below_the_weights():
    """The per-module table stacks one float row (the weights) above four count rows, so
    every cell was drawn as a float: 3.0 matched words."""
    at = _compare()
    open_tab(at, "METEOR")
    (table,) = [df for df in at.dataframe if "weight w_m" in df.value.index]
    shown = _shown(table)
    counts = table.value.drop(index="weight w_m")
    assert (counts == counts.round()).all().all()
    for module in counts.columns:
        assert list(shown[module][1:]) == [f"{int(n)}" for n in counts[module]]
    assert shown.iloc[0].tolist() == [f"{w:g}" for w in table.value.loc["weight w_m"]]
