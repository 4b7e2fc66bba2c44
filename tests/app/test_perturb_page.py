"""AppTest checks of the Perturbation lab page (issue 8): it runs on its own and through the
router once registered, widgets work by key, numbers are the library's, the Table 2 preset
reproduces the pattern, and markup in captions is shown literally."""

from __future__ import annotations

from typing import Any

import pytest
from streamlit.testing.v1 import AppTest

from capeval_core.examples import BUILTIN_EXAMPLES, DEFAULT_EXAMPLE
from capeval_core.judgments.demo import demo_graded
from capeval_core.perturb import perturb, score_perturbations
from capeval_ui import choices, state
from tests.app.apptest import ROOT, TIMEOUT
from tests.app.test_app import HOSTILE, HOSTILE_MARKERS, _elements, assert_shown_as_text

PAGE = "app_pages/perturb.py"
KEYS = ["bleu_1", "bleu_4", "rouge_l"]
DEFAULT = BUILTIN_EXAMPLES[DEFAULT_EXAMPLE]


def _lab(**state: Any) -> AppTest:
    at = AppTest.from_file(str(ROOT / PAGE), default_timeout=TIMEOUT)
    at.session_state["lab_metrics"] = KEYS  # fast metrics keep the tests short
    for key, value in state.items():
        at.session_state[key] = value
    at.run()
    assert not at.exception, at.exception
    return at


def _delta_table(at: AppTest):
    tables = [df.value for df in at.dataframe if "delta" in df.value.columns]
    assert len(tables) == 1
    return tables[0]


def test_page_runs_on_its_own_with_every_metric() -> None:
    at = AppTest.from_file(str(ROOT / PAGE), default_timeout=TIMEOUT).run()
    assert not at.exception, at.exception
    assert [t.value for t in at.title] == ["Perturbation lab"]
    assert at.multiselect(key="lab_perturbations").value == ["synonym", "redundant", "shuffle"]


def test_page_reachable_through_the_router() -> None:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT).run()
    at.switch_page(PAGE).run()
    assert not at.exception, at.exception
    assert [t.value for t in at.title] == ["Perturbation lab"]
    assert at.radio(key="tokenizer").value == "ptb"


def test_scores_before_and_after_are_the_library_values() -> None:
    at = _lab(lab_perturbations=["shuffle", "colour"], lab_seed=2)
    table = _delta_table(at)
    ps = [perturb(DEFAULT.candidate, n, seed=2) for n in ("shuffle", "colour")]
    expected = score_perturbations(
        ps, DEFAULT.references, KEYS, options={"cider_d": {"idf": "coco-val2014"}}
    )
    assert len(table) == 2 * len(KEYS)
    rows = table.set_index(["perturbation", "key"])
    for label, s in zip(("Word-order shuffle", "Colour change"), expected, strict=True):
        for k in KEYS:
            assert rows.loc[(label, k), "before"] == s.before[k]
            assert rows.loc[(label, k), "after"] == s.after[k]
            assert rows.loc[(label, k), "delta"] == s.delta(k)
    texts = [t.value for t in at.text]
    assert f"Perturbed: {ps[0].perturbed}" in texts
    assert any("nothing eligible" in t for t in texts)  # no colour in the example
    assert len(at.get("plotly_chart")) == 1


def test_seed_and_words_to_change_by_key() -> None:
    caption = "a child on a couch with a small dog"
    refs = "\n".join(DEFAULT.references)
    at = _lab(lab_perturbations=["synonym"], lab_candidate=caption, lab_references=refs)
    at.number_input(key="lab_seed").set_value(5).run()
    at.number_input(key="lab_n").set_value(2).run()
    assert not at.exception, at.exception
    expected = perturb(caption, "synonym", seed=5, n=2)
    assert f"Perturbed: {expected.perturbed}" in [t.value for t in at.text]
    changes = [df.value for df in at.dataframe if "change" in df.value.columns]
    assert len(changes) == 1 and len(changes[0]) == 2
    assert list(changes[0]["word"]) == [c.old for c in expected.changed]
    assert list(changes[0]["where"]) == [f"word {c.position + 1}" for c in expected.changed]


def test_picking_an_example_fills_the_text_areas() -> None:
    at = _lab()
    name = "Table 2 style: word order"
    at.selectbox(key="lab_example").select(name).run()
    assert not at.exception, at.exception
    assert at.text_area(key="lab_candidate").value == BUILTIN_EXAMPLES[name].candidate


def test_table2_preset_reproduces_the_pattern() -> None:
    at = _lab(lab_perturbations=[], lab_metrics=["bleu_4", "rouge_l", "wmd"])
    at.toggle(key="lab_table2").set_value(True).run()
    assert not at.exception, at.exception
    captions = next(df.value for df in at.dataframe if "caption" in df.value.columns)
    variants = ["original (itself)", "synonyms", "redundancy", "word order"]
    assert list(captions["variant"]) == variants
    # a metric per row, a variant per column
    frame = next(df.value for df in at.dataframe if "original (itself)" in df.value.columns)
    rows = frame.set_index("key")[variants].T
    assert rows.loc["original (itself)", "bleu_4"] == pytest.approx(1.0)
    for variant in ("synonyms", "redundancy", "word order"):
        assert rows.loc[variant, "bleu_4"] < 1.0
    # WMD ignores word order; BLEU-4 and ROUGE-L do not
    assert rows.loc["word order", "wmd"] == pytest.approx(1.0)
    assert rows.loc["word order", "rouge_l"] < 1.0


def test_empty_inputs_give_errors() -> None:
    at = _lab()
    at.text_area(key="lab_candidate").input("  ").run()
    assert not at.exception, at.exception
    assert [e.value for e in at.error] == ["Enter a candidate caption to score."]


def test_batch_mode_on_the_synthetic_demo() -> None:
    at = _lab(lab_mode="Batch", lab_batch_metrics=["bleu_4", "rouge_l"])
    at.selectbox(key="lab_dataset").select(list(choices.LAB_DATASETS)[1])
    at.selectbox(key="lab_batch_perturbation").select("shuffle")
    at.number_input(key="lab_images").set_value(50)
    at.button(key="lab_run_batch").click().run()
    assert not at.exception, at.exception
    frames = [df.value for df in at.dataframe]
    summary = next(f for f in frames if "mean delta" in f.columns)
    assert list(summary["key"]) == ["bleu_4", "rouge_l"]
    assert (summary["mean delta"] < 0).all()
    corr = next(f for f in frames if "method" in f.columns)
    assert set(corr["key"]) == {"bleu_4", "rouge_l"}
    assert len(at.get("plotly_chart")) == 2  # distribution + correlations


def test_a_changed_batch_setting_waits_for_run_batch() -> None:
    """After one Run batch every change ran a batch of its own: each step of Images (up to
    40,000) started a run of minutes, with no way to stop it."""
    at = _lab(lab_mode="Batch", lab_batch_metrics=["bleu_4"])
    at.selectbox(key="lab_dataset").select(list(choices.LAB_DATASETS)[1])
    at.number_input(key="lab_images").set_value(20)
    at.button(key="lab_run_batch").click().run()
    ran = [df.value for df in at.dataframe]
    assert ran and at.query_params["lab_run"] == "1"
    at.number_input(key="lab_images").set_value(30).run()
    assert not at.exception, at.exception
    assert [w.value for w in at.warning if "out of date" in w.value]
    assert all(a.equals(b) for a, b in zip(ran, [df.value for df in at.dataframe], strict=True))
    assert at.query_params["lab_run"] == "0"  # a link to these settings has run nothing
    at.button(key="lab_run_batch").click().run()
    assert not at.warning and at.query_params["lab_run"] == "1"


@pytest.mark.parametrize(
    ("link", "then"),
    [
        # a link that ran a batch, opened on the one-caption mode, then switched to Batch
        ({"lab_mode": "one", "lab_run": "1", "lab_images": "10"}, ("lab_mode", "Batch")),
        # a link that ran a batch with no metric (nothing ran), then a metric picked
        (
            {"lab_mode": "batch", "lab_run": "1", "lab_images": "10", "lab_batch_metric": ""},
            ("lab_batch_metrics", ["bleu_4"]),
        ),
    ],
)
def test_a_batch_runs_only_when_asked(link, then) -> None:
    """A link's lab_run=1 outlived a run that could not start: a later switch to Batch, or
    a metric picked, started a batch (of up to 40,000 images) that nobody asked for."""
    at = AppTest.from_file(str(ROOT / "app_pages" / "perturb.py"), default_timeout=TIMEOUT)
    for key, value in link.items():
        at.query_params[key] = value
    at.run()
    key, value = then
    if key == "lab_mode":
        at.radio(key=key).set_value(value).run()
    else:
        at.multiselect(key=key).set_value(value).run()
    assert not at.exception, at.exception
    assert not [df for df in at.dataframe if "mean delta" in df.value.columns]
    assert [i.value for i in at.info if "then run" in i.value]


def test_a_refused_batch_is_not_kept_as_results() -> None:
    """Run batch on the Judgments page's set with none loaded, then a change: the page said
    "the results below are out of date" above no results."""
    at = _lab(lab_mode="Batch", lab_batch_metrics=["bleu_4"])
    at.selectbox(key="lab_dataset").select(list(choices.LAB_DATASETS)[2])
    at.button(key="lab_run_batch").click().run()
    assert [e.value for e in at.error] == [
        "Load a graded judgment set on the Judgments page first."
    ]
    assert at.query_params["lab_run"] == "0"
    at.number_input(key="lab_images").set_value(20).run()
    assert not at.warning and not at.error
    assert [i.value for i in at.info if "then run" in i.value]


def test_batch_mode_on_a_judgment_set_loaded_on_the_judgments_page() -> None:
    at = _lab(lab_mode="Batch", lab_batch_metrics=["bleu_4"])
    loaded = list(choices.LAB_DATASETS)[2]
    at.selectbox(key="lab_dataset").select(loaded)
    at.button(key="lab_run_batch").click().run()
    assert [e.value for e in at.error] == [
        "Load a graded judgment set on the Judgments page first."
    ]
    jset = demo_graded(8, seed=3)  # what the Judgments page would have put in the session
    at.session_state[state.JSET_KEY] = jset
    at.number_input(key="lab_images").set_value(20)
    at.run()
    assert not at.exception, at.exception
    # nothing ran: the set loaded waits for Run batch
    assert not at.warning and [i.value for i in at.info if "then run" in i.value]
    at.button(key="lab_run_batch").click().run()
    assert not at.exception and not at.warning, at.exception
    frames = [df.value for df in at.dataframe]
    summary = next(f for f in frames if "mean delta" in f.columns)
    assert list(summary["key"]) == ["bleu_4"]
    corr = next(f for f in frames if "method" in f.columns)
    assert set(corr["key"]) == {"bleu_4"}  # the loaded set's human scores were used


def test_markup_in_captions_is_shown_literally() -> None:
    at = _lab(lab_perturbations=["shuffle", "synonym"])
    at.text_area(key="lab_candidate").input(HOSTILE)
    at.text_area(key="lab_references").input(f"{HOSTILE}\na man riding a wave").run()
    at.toggle(key="lab_table2").set_value(True).run()
    assert not at.exception, at.exception
    elements = list(_elements(at._tree))
    assert not [e for e in elements if e.type == "html"]
    assert_shown_as_text(elements, HOSTILE_MARKERS)
    cells = {str(v) for df in at.dataframe for v in df.value.to_numpy().ravel()}
    assert any("<script>" in c for c in cells)


def test_a_reload_shows_the_references_box_as_typed() -> None:
    """The URL held each reference trimmed, without the blank lines: a reload closed up a
    blank line between references and dropped a trailing one, so the box came back other
    than it was left (blank lines and edge spaces are no part of any reference)."""
    typed = "a man riding a horse\n\n  a horse on the shore \n\n"
    at = _lab(lab_perturbations=["shuffle"])
    at.text_area(key="lab_references").input(typed).run()
    assert not at.exception, at.exception
    before = _delta_table(at)
    again = AppTest.from_file(str(ROOT / PAGE), default_timeout=TIMEOUT)
    for name in at.query_params:  # a reload: a new session that keeps only the URL
        again.query_params[name] = at.query_params[name]
    again.run()
    assert not again.exception, again.exception
    assert again.text_area(key="lab_references").value == typed
    assert _delta_table(again).equals(before)


def _loaded_batch() -> AppTest:
    """A batch of BLEU-4 and ROUGE-L on a graded set as the Judgments page loads it."""
    at = _lab(lab_mode="Batch", lab_batch_metrics=["bleu_4", "rouge_l"])
    at.selectbox(key="lab_dataset").select(list(choices.LAB_DATASETS)[2])
    at.session_state[state.JSET_KEY] = demo_graded(8, seed=3)
    at.number_input(key="lab_images").set_value(20).run()
    at.button(key="lab_run_batch").click().run()
    assert not at.exception, at.exception
    return at


def _shown(df: Any) -> Any:
    """A dataframe's cells as the browser draws them (its Styler's display values)."""
    import pyarrow as pa

    return pa.ipc.open_stream(df.proto.arrow_data.styler.display_values).read_pandas()


def test_the_batch_summary_writes_the_share_lowered_in_per_cent() -> None:
    """The share of changed captions a metric scored lower read 0.350000 (a raw float); a
    share reads in per cent by the app's rule (35.0%), and the count as a whole number."""
    from capeval_ui.formats import format_percent

    at = _loaded_batch()
    (summary,) = [df for df in at.dataframe if "share lowered" in df.value.columns]
    shown = _shown(summary)
    shares = summary.value["share lowered"]
    assert list(shown["share lowered"]) == [format_percent(100 * v) for v in shares]
    assert all(text.endswith("%") for text in shown["share lowered"])
    assert list(shown["n changed"]) == [f"{n:,}" for n in summary.value["n changed"]]


def test_the_batch_examples_name_each_item_by_the_sets_id() -> None:
    """The examples' "item" column (and so its download) held row numbers (1, 2, ...), not
    the ids of the set loaded on the Judgments page."""
    from capeval_core.perturb import item_seed

    at = _loaded_batch()
    jset, name = demo_graded(8, seed=3), at.selectbox(key="lab_batch_perturbation").value
    (examples,) = [df.value for df in at.dataframe if "perturbed" in df.value.columns]
    changed = [
        it.id
        for i, it in enumerate(jset.items[:20])
        if perturb(it.candidate, name, seed=item_seed(0, i)).is_changed
    ]
    assert list(examples["item"]) == changed[: len(examples)]
    assert len(examples) and all("|" in str(i) for i in examples["item"])
