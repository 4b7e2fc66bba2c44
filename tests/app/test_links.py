"""A page's state is its URL (issue 42): every choice that changes a number or a drawing is
written to the URL and restored from it, the "Copy link" holds that URL, and a link naming
data the server no longer holds says so instead of showing something else.

A reload or a copied link opened elsewhere is a new session that keeps only the URL: here a
second AppTest given the first one's query parameters. A server restart is
``store.forget_all()`` (the judgment sets a server holds live in ``capeval_ui.store``; the
demo sets are rebuilt the same anywhere). The browser tests (``test_browser.py``) do both
for real: a copied link in a fresh browser context, and a server stopped and started again.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qs

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from capeval_ui import choices, state, store
from tests.app.apptest import ROOT, TIMEOUT, as_shown, open_tab

GRADED_CSV = (
    "id,image_id,candidate,references,quality,system,metric:mine\n"
    "1,img1,a dog runs on the grass,a dog running on grass|||a brown dog runs,4,A,0.9\n"
    "2,img1,a cat sleeps,a dog running on grass|||a brown dog runs,1,B,0.1\n"
    "3,img2,a man rides a wave,a surfer rides a wave|||a man surfing,5,A,0.8\n"
    "4,img2,a wave,a surfer rides a wave|||a man surfing,2,B,0.3\n"
    "5,img3,two people on a beach,people walking on a beach|||two people at the sea,4,A,0.7\n"
    "6,img3,a red car,people walking on a beach|||two people at the sea,1,B,0.2\n"
    "7,img4,a bus on a street,a red bus in the city|||a bus drives down a road,5,A,0.6\n"
    "8,img4,a tree,a red bus in the city|||a bus drives down a road,2,B,0.4\n"
    "9,img5,a plate of food,a plate with rice and meat|||food on a white plate,4,A,0.75\n"
    "10,img5,a shoe,a plate with rice and meat|||food on a white plate,1,B,0.15\n"
    "11,img6,a cat on a sofa,a cat lying on a couch|||a grey cat on a sofa,5,A,0.85\n"
    "12,img6,a road,a cat lying on a couch|||a grey cat on a sofa,2,B,0.35\n"
)


@pytest.fixture(autouse=True)
def _a_server_of_its_own() -> Iterator[None]:
    """Each test starts with no uploaded set held, as on a fresh server."""
    store.forget_all()
    yield
    store.forget_all()


#: the meta-evaluation pages that score the set loaded on Judgments with the chosen metrics
META_PAGES = [
    "app_pages/correlations.py",
    "app_pages/significance.py",
    "app_pages/pairwise.py",
    "app_pages/robustness.py",
]


def _app(**params: Any) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
    for key, value in params.items():
        at.query_params[key] = value
    return at


def _open(page: str, **params: Any) -> AppTest:
    """``page`` opened by a link: a new session whose URL holds ``params``."""
    at = _app(**params).run()
    at.switch_page(page).run()
    assert not at.exception, at.exception
    return at


def _navigate(at: AppTest, page: str) -> None:
    """A click on a page in the sidebar: the browser opens its address, without the last
    page's query (an AppTest keeps it across ``switch_page``)."""
    for name in list(at.query_params):
        del at.query_params[name]
    at.switch_page(page).run()
    assert not at.exception, at.exception


def _params(at: AppTest) -> dict[str, Any]:
    return {k: at.query_params[k] for k in at.query_params}


def _copied(at: AppTest) -> dict[str, list[str]]:
    """The query of the page's "Copy link" (the address it shows)."""
    (popover,) = [p for p in at.get("popover") if p.proto.popover.label == "Copy link"]
    (link,) = [c.value for c in popover.code]
    return parse_qs(link.partition("?")[2], keep_blank_values=True)


def _as_lists(params: dict[str, Any]) -> dict[str, list[str]]:
    return {k: v if isinstance(v, list) else [v] for k, v in params.items()}


def _reopened(at: AppTest, page: str) -> AppTest:
    """The page opened from its copied link in a new session; the link is the URL."""
    copied = _copied(at)
    assert copied == _as_lists(_params(at)), "the copied link is not the page's URL"
    return _open(page, **copied)


def _frames(at: AppTest) -> list[pd.DataFrame]:
    return [df.value for df in at.dataframe]


def _assert_same_frames(a: AppTest, b: AppTest) -> None:
    left, right = _frames(a), _frames(b)
    assert len(left) == len(right)
    for x, y in zip(left, right, strict=True):
        pd.testing.assert_frame_equal(x.reset_index(drop=True), y.reset_index(drop=True))


# -- every choice comes back from the link -------------------------------------------------------
def test_significance_link_keeps_correlation_test_and_pair() -> None:
    """Issue 42: a Williams p of a Pearson, two-sided test became Kendall's, one-sided, on a
    reload."""
    at = _open("app_pages/significance.py")
    at.selectbox(key="williams_correlation").select("pearson").run()
    at.radio(key="williams_alternative").set_value("two-sided").run()
    at.selectbox(key="pair_a").select("meteor").run()
    at.selectbox(key="pair_b").select("bleu_4").run()
    at.radio(key="tokenizer").set_value("whitespace").run()
    assert not at.exception, at.exception
    params = _params(at)
    assert params["correlation"] == "pearson" and params["test"] == "two-sided"
    assert (params["a"], params["b"], params["tokenizer"]) == ("meteor", "bleu_4", "whitespace")
    again = _reopened(at, "app_pages/significance.py")
    assert again.selectbox(key="williams_correlation").value == "pearson"
    assert again.radio(key="williams_alternative").value == "two-sided"
    assert again.radio(key="tokenizer").value == "whitespace"
    assert (again.selectbox(key="pair_a").value, again.selectbox(key="pair_b").value) == (
        "meteor",
        "bleu_4",
    )
    _assert_same_frames(at, again)


def test_correlations_link_keeps_the_combined_metric_and_the_scatter_metric() -> None:
    at = _open("app_pages/correlations.py")
    at.selectbox(key="combined_correlation").select("spearman").run()
    at.selectbox(key="distribution_metric").select("rouge_l").run()
    at.select_slider(key="resamples").set_value(200).run()
    at.toggle(key="ci_kendall").set_value(False).run()
    assert not at.exception, at.exception
    params = _params(at)
    assert (params["combined"], params["scatter"], params["resamples"]) == (
        "spearman",
        "rouge_l",
        "200",
    )
    again = _reopened(at, "app_pages/correlations.py")
    assert again.selectbox(key="combined_correlation").value == "spearman"
    assert again.selectbox(key="distribution_metric").value == "rouge_l"
    assert again.select_slider(key="resamples").value == 200
    assert again.toggle(key="ci_kendall").value is False
    _assert_same_frames(at, again)


def test_pairwise_and_robustness_links_keep_their_knobs() -> None:
    at = _open("app_pages/pairwise.py")
    at.number_input(key="n_references").set_value(2).run()
    at.number_input(key="draws").set_value(3).run()
    at.number_input(key="seed").set_value(4).run()
    at.selectbox(key="metric_tie").select("wrong").run()
    assert not at.exception, at.exception
    again = _reopened(at, "app_pages/pairwise.py")
    assert [again.number_input(key=k).value for k in ("n_references", "draws", "seed")] == [2, 3, 4]
    assert again.selectbox(key="metric_tie").value == "wrong"
    _assert_same_frames(at, again)

    at = _open("app_pages/robustness.py")
    at.radio(key="forced_tie").set_value("correct").run()
    at.multiselect(key=state.METRICS_KEY).set_value(["rouge_l", "bleu_4"]).run()
    again = _reopened(at, "app_pages/robustness.py")
    assert again.radio(key="forced_tie").value == "correct"
    assert again.multiselect(key=state.METRICS_KEY).value == ["rouge_l", "bleu_4"]
    _assert_same_frames(at, again)


def test_judgments_link_keeps_its_source_and_set() -> None:
    """Issue 42: after a reload the loaded set stayed but the Source control said "Demo
    set"."""
    at = _open("app_pages/judgments.py")
    _upload(at)
    params = _params(at)
    assert params["source"] == "upload" and params["format"] == "graded" and "set" in params
    again = _reopened(at, "app_pages/judgments.py")
    assert again.radio(key="judgment_source").value == "Upload a file"
    assert again.session_state[state.JSET_KEY] is at.session_state[state.JSET_KEY]
    _assert_same_frames(at, again)


def test_lab_links_keep_mode_perturbation_seed_and_metrics() -> None:
    at = _open("app_pages/perturb.py", lab_metric=["bleu_4", "cider_d"])
    at.toggle(key="lab_table2").set_value(True).run()
    at.number_input(key="lab_seed").set_value(3).run()
    assert not at.exception, at.exception
    again = _reopened(at, "app_pages/perturb.py")
    assert again.toggle(key="lab_table2").value is True
    assert again.number_input(key="lab_seed").value == 3
    assert again.multiselect(key="lab_metrics").value == ["bleu_4", "cider_d"]
    _assert_same_frames(at, again)

    at.radio(key="lab_mode").set_value("Batch").run()
    at.selectbox(key="lab_dataset").select("Synthetic graded demo (has human-like scores)").run()
    at.selectbox(key="lab_batch_perturbation").select("shuffle").run()
    at.number_input(key="lab_images").set_value(40).run()
    at.number_input(key="lab_batch_seed").set_value(5).run()
    at.multiselect(key="lab_batch_metrics").set_value(["bleu_4", "cider_d"]).run()
    at.button(key="lab_run_batch").click().run()
    assert not at.exception, at.exception
    params = _params(at)
    assert params["lab_mode"] == "batch" and params["lab_run"] == "1"
    assert params["lab_batch_perturbation"] == "shuffle" and params["lab_batch_seed"] == "5"
    again = _reopened(at, "app_pages/perturb.py")
    assert again.radio(key="lab_mode").value == "Batch"
    assert again.selectbox(key="lab_batch_perturbation").value == "shuffle"
    assert again.multiselect(key="lab_batch_metrics").value == ["bleu_4", "cider_d"]
    _assert_same_frames(at, again)


def test_compare_link_keeps_the_tab_and_each_panels_choice() -> None:
    refs = ["a man rides a wave on a surfboard", "a surfer on a big wave", "a man surfing"]
    at = _open("app_pages/compare.py", candidate="a man surfing on a wave", ref=refs)
    at.radio(key="bleu-order").set_value(3).run()
    open_tab(at, "METEOR")  # the BLEU panel is no longer drawn: its choice is kept
    at.selectbox(key="meteor-reference").set_value(2).run()
    assert not at.exception, at.exception
    params = _params(at)
    assert (params["tab"], params["bleu-order"], params["meteor-reference"]) == ("METEOR", "3", "3")
    again = _reopened(at, "app_pages/compare.py")
    assert again.selectbox(key="meteor-reference").value == 2  # #3, not the winning one
    assert again.session_state["compare_tab"] == "METEOR"
    assert again.session_state["bleu-order"] == 3
    open_tab(again, "BLEU")
    assert again.radio(key="bleu-order").value == 3


@pytest.mark.parametrize(
    ("page", "field", "name"),
    [
        ("app_pages/compare.py", "references", "ref"),
        ("app_pages/compare.py", "candidate", "candidate"),
        ("app_pages/perturb.py", "lab_references", "lab_ref"),
        ("app_pages/perturb.py", "lab_candidate", "lab_caption"),
    ],
)
def test_an_emptied_field_stays_empty_in_its_link(page: str, field: str, name: str) -> None:
    """An emptied text area was left out of the URL, so a reload or the copied link brought
    the example's captions back and showed numbers where the page had said there were none."""
    at = _open(page)
    at.text_area(key=field).input("").run()
    assert at.error and not at.metric and not at.dataframe
    assert _params(at)[name] == ""
    again = _reopened(at, page)
    assert again.text_area(key=field).value == ""
    assert [e.value for e in again.error] == [e.value for e in at.error]
    assert not again.metric and not _frames(again)


@pytest.mark.parametrize(
    ("page", "start", "field", "name"),
    [
        ("app_pages/perturb.py", {}, "lab_perturbations", "lab_perturbation"),
        ("app_pages/perturb.py", {}, "lab_metrics", "lab_metric"),
        (
            "app_pages/perturb.py",
            {"lab_mode": "batch", "lab_images": "10", "lab_run": "1"},
            "lab_batch_metrics",
            "lab_batch_metric",
        ),
        ("app_pages/correlations.py", {}, state.METRICS_KEY, "metric"),
        ("app_pages/pairwise.py", {}, state.METRICS_KEY, "metric"),
    ],
)
def test_an_emptied_multiselect_stays_empty_in_its_link(
    page: str, start: dict[str, str], field: str, name: str
) -> None:
    """An emptied multiselect was left out of the URL: a reload brought the page's default
    metrics or perturbations back and showed tables where the page had asked for a choice."""
    at = _open(page, **start)
    at.multiselect(key=field).set_value([]).run()
    asked = [
        e.value
        for e in (*at.error, *at.warning, *at.info)
        if "Pick" in e.value or "Choose" in e.value
    ]
    assert asked and not at.dataframe
    assert _params(at)[name] == ""
    again = _reopened(at, page)  # the copied link, shown beside the request too
    assert again.multiselect(key=field).value == []
    assert not again.dataframe and not _link_warnings(again)


def test_a_list_value_given_twice_counts_once() -> None:
    at = _open("app_pages/correlations.py", metric=["bleu_4", "bleu_4", "rouge_l"])
    assert at.multiselect(key=state.METRICS_KEY).value == ["bleu_4", "rouge_l"]


def test_a_judgments_link_keeps_the_preset_its_set_was_loaded_with(tmp_path) -> None:
    """The preset box was not in the URL: a reload showed another protocol's description
    beside the set loaded with the first."""
    from tests.core.consensus_files import write_abstract

    write_abstract(tmp_path, n_pairs=4)
    at = _open("app_pages/judgments.py", metric="bleu_4")
    at.radio(key="judgment_source").set_value("Upload a file").run()
    at.selectbox(key="judgment_format").select("abstract50s").run()
    at.selectbox(key="judgment_preset").select("kilickaya2017").run()
    uploads = [
        (p.name, p.read_bytes(), "application/octet-stream") for p in sorted(tmp_path.iterdir())
    ]
    at.file_uploader(key="judgment_files-abstract50s").set_value(uploads)
    at.run()
    at.button(key="load_judgments").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert _params(at)["preset"] == "kilickaya2017"
    again = _reopened(at, "app_pages/judgments.py")
    assert again.session_state[state.JSET_KEY].preset == "kilickaya2017"
    assert again.selectbox(key="judgment_preset").value == "kilickaya2017"
    assert [t.value for t in again.text] == [t.value for t in at.text]
    assert not [c.value for c in again.caption if "press Load" in c.value]
    # the box changed without Load: the link names the box's preset beside the set read
    # with the first, and the page showed both without a word (a link alike)
    at.selectbox(key="judgment_preset").select("clipscore-table4").run()
    for view in (at, _reopened(at, "app_pages/judgments.py")):
        said = [c.value for c in view.caption if "press Load" in c.value]
        assert said == [
            "The set below was read with preset kilickaya2017: press Load to read it with "
            "these choices."
        ], said
    # a demo set has no preset to link
    at.radio(key="judgment_source").set_value("Demo set").run()
    assert "preset" not in _params(at)
    at.button(key="load_demo").click().run()  # the graded demo; the box then names another
    at.selectbox(key="demo_set").select(list(choices.DEMO_SETS)[1]).run()
    for view in (at, _reopened(at, "app_pages/judgments.py")):
        said = [c.value for c in view.caption if "press Load" in c.value]
        assert said == ["The set below is the graded demo: press Load demo to load this one."]


@pytest.mark.parametrize(
    ("page", "picker", "source"),
    [
        ("app_pages/compare.py", "example", "example_source"),
        ("app_pages/perturb.py", "lab_example", "lab_example_source"),
    ],
)
def test_a_link_to_a_builtin_example_names_it(page: str, picker: str, source: str) -> None:
    """A reload of a picked example said "Your own captions" beside the example's captions."""
    from capeval_core.examples import BUILTIN_EXAMPLES, DEFAULT_EXAMPLE

    name = next(n for n in BUILTIN_EXAMPLES if n != DEFAULT_EXAMPLE)
    at = _open(page)
    at.selectbox(key=picker).select(name).run()
    again = _reopened(at, page)
    assert again.selectbox(key=picker).value == name
    assert again.session_state[source] == BUILTIN_EXAMPLES[name].source
    said = f"This example: {BUILTIN_EXAMPLES[name].source}"
    assert said in [c.value for c in again.caption] and said in [c.value for c in at.caption]
    # captions typed over are the user's own, as before
    field = "candidate" if picker == "example" else "lab_candidate"
    again.text_area(key=field).input("a caption of my own").run()
    assert again.selectbox(key=picker).value == "Your own captions"


@pytest.mark.parametrize(
    ("page", "picker", "draw", "field", "again_button"),
    [
        ("app_pages/compare.py", "example", "coco_draw", "candidate", "draw"),
        ("app_pages/perturb.py", "lab_example", "lab_coco_draw", "lab_candidate", "lab_draw_again"),
    ],
)
def test_a_link_to_a_random_coco_image_names_the_image(
    page: str, picker: str, draw: str, field: str, again_button: str
) -> None:
    """A reload of a random COCO example said "Your own captions": the URL held its captions
    but not which image they were. The lab's "random" image was always the first one."""
    from capeval_ui import choices

    at = _open(page)
    at.selectbox(key=picker).select(choices.COCO_RANDOM).run()
    seen = {at.text_area(key=field).value}
    for _ in range(6):  # six draws from 500 images: all the same one has odds 500**-5
        at.button(key=again_button).click().run()
        assert not at.exception, at.exception
        seen.add(at.text_area(key=field).value)
    assert len(seen) > 1, "the random example always drew the same image"
    said = next(c.value for c in at.caption if c.value.startswith("This example: COCO val2014"))
    assert draw in _params(at)
    again = _reopened(at, page)
    assert again.selectbox(key=picker).value == choices.COCO_RANDOM
    assert said in [c.value for c in again.caption]
    assert again.text_area(key=field).value == at.text_area(key=field).value
    # captions typed over are the user's own, and the URL no longer names a draw
    again.text_area(key=field).input("a caption of my own").run()
    assert again.selectbox(key=picker).value == "Your own captions"
    assert draw not in _params(again)


def test_home_keeps_the_sidebars_tokenizer_in_its_url() -> None:
    """Home wrote no URL: a reload after choosing a tokenizer there gave the default back,
    and a link's tokenizer=whitespace stayed in the address after PTB was chosen."""
    at = _app().run()
    at.radio(key=state.TOKENIZER_KEY).set_value("whitespace").run()
    assert _params(at)["tokenizer"] == "whitespace"
    again = _app(**_params(at)).run()
    assert again.radio(key=state.TOKENIZER_KEY).value == "whitespace"
    again.radio(key=state.TOKENIZER_KEY).set_value("ptb").run()
    assert _params(again)["tokenizer"] == "ptb"
    (said,) = _link_warnings(_app(tokenizer="bert").run())
    assert "tokenizer=bert" in said


def test_the_copy_link_names_the_page_once() -> None:
    """Issue 42: Compare's link read /compare-captions/compare-captions?… (a blank page)."""
    at = _open("app_pages/correlations.py")
    (popover,) = [p for p in at.get("popover") if p.proto.popover.label == "Copy link"]
    (link,) = [c.value for c in popover.code]
    path = link.partition("?")[0]
    assert path.endswith("/correlations") and path.count("correlations") == 1


# -- data a link cannot carry -------------------------------------------------------------------
def _upload(at: AppTest, fmt: str = "graded", text: str = GRADED_CSV) -> AppTest:
    """Upload ``text`` as a ``fmt`` file on the Judgments page and load it."""
    at.radio(key="judgment_source").set_value("Upload a file").run()
    at.selectbox(key="judgment_format").select(fmt).run()
    at.file_uploader(key=f"judgment_files-{fmt}").set_value(("mine.csv", text.encode(), "text/csv"))
    at.run()
    at.button(key="load_judgments").click().run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    return at


def _says_not_on_this_server(at: AppTest) -> bool:
    return any("is not on this server" in w.value for w in at.warning)


def _numbers_shown(at: AppTest) -> bool:
    return bool(at.dataframe) or bool(at.get("plotly_chart")) or bool(at.metric)


def test_a_link_to_an_uploaded_set_after_a_restart_says_so_and_keeps_its_choices() -> None:
    """Issue 42: after a restart, /correlations?set=… showed the demo set's results,
    rewrote the URL (human=quality) and dropped the external metric."""
    at = _open("app_pages/judgments.py")
    _upload(at)
    at.switch_page("app_pages/correlations.py").run()
    at.multiselect(key=state.METRICS_KEY).set_value(["bleu_4", "mine"]).run()
    at.selectbox(key="combined_correlation").select("pearson").run()
    assert not at.exception, at.exception
    link = _params(at)
    assert link["metric"] == ["bleu_4", "mine"] and link["human"] == "quality"

    store.forget_all()  # the server restarts
    again = _open("app_pages/correlations.py", **link)
    assert _says_not_on_this_server(again)
    assert not _numbers_shown(again)
    assert not any("synthetic demo set" in i.value for i in again.info)
    assert _params(again) == link  # the URL stays the link
    assert again.session_state[state.KEPT_METRICS] == ["bleu_4", "mine"]
    assert again.session_state["combined_correlation"] == "pearson"

    # the user loads the set again: the link's choices are all there, the external one too
    _navigate(again, "app_pages/judgments.py")
    assert not _says_not_on_this_server(again)  # this page's URL names no set
    _upload(again)
    _navigate(again, "app_pages/correlations.py")
    assert again.multiselect(key=state.METRICS_KEY).value == ["bleu_4", "mine"]
    assert again.selectbox(key="combined_correlation").value == "pearson"
    assert again.selectbox(key="human_column").value == "quality"


def test_a_link_to_a_set_dropped_for_newer_ones_says_so_not_a_restart() -> None:
    """The server keeps the last sets loaded by anyone: in a class, the ninth student's set
    dropped the first's, and the first's link said the server had restarted."""
    at = _open("app_pages/judgments.py")
    _upload(at)
    link = _params(at)

    class Newer:
        def __init__(self, i: int) -> None:
            self.content_digest = f"{i:016x}" + "0" * 48

    for i in range(store.KEEP_SETS):
        store.remember_set(Newer(i))
    again = _open("app_pages/correlations.py", **link)
    (said,) = [w.value for w in again.warning if "is not on this server" in w.value]
    assert f"which keeps the {store.KEEP_SETS} sets loaded last by anyone" in said, said
    assert "restarted" not in said
    store.forget_all()  # a restart: said as before
    again = _open("app_pages/correlations.py", **link)
    (said,) = [w.value for w in again.warning if "is not on this server" in w.value]
    assert "before this one restarted" in said


def test_open_the_demo_is_the_users_choice() -> None:
    at = _open("app_pages/judgments.py")
    _upload(at)
    at.switch_page("app_pages/significance.py").run()
    link = _params(at)
    store.forget_all()
    again = _open("app_pages/significance.py", **link)
    assert _says_not_on_this_server(again) and not _numbers_shown(again)
    again.button(key=f"decline-{state.JSET_KEY}").click().run()
    assert not again.exception, again.exception
    assert not _says_not_on_this_server(again)
    assert any("synthetic demo set" in i.value for i in again.info)
    assert _numbers_shown(again)
    assert "set" not in _params(again)  # the URL now names what is shown


def test_the_judgments_page_says_so_and_loads_it_again() -> None:
    at = _open("app_pages/judgments.py")
    _upload(at)
    link = _params(at)
    store.forget_all()
    again = _open("app_pages/judgments.py", **link)
    assert _says_not_on_this_server(again)
    assert not any(s.value == "Loaded set" for s in again.subheader)
    assert again.radio(key="judgment_source").value == "Upload a file"
    _upload(again)
    assert not _says_not_on_this_server(again)
    assert any(s.value == "Loaded set" for s in again.subheader)
    assert _params(again)["set"] == link["set"]  # the same file: the same set


def test_a_link_to_a_demo_set_opens_on_any_server() -> None:
    at = _open("app_pages/judgments.py")
    at.button(key="load_demo").click().run()
    link = _params(at)
    store.forget_all()  # a demo is built the same anywhere: nothing is missing
    again = _open("app_pages/correlations.py", **link)
    assert not _says_not_on_this_server(again)
    assert again.session_state[state.JSET_KEY].synthetic


def test_robustness_link_to_an_uploaded_distractor_file_after_a_restart() -> None:
    upload = (
        "candidate_a,candidate_b,references,preferred,category\n"
        "a man rides a wave,a man rides a horse,a surfer rides a wave|||a man surfing,a,"
        "replace-scene\n"
        "a dog on grass,a man on grass,a dog lying on grass|||a brown dog,a,replace-person\n"
    )
    at = _open("app_pages/robustness.py")
    at.radio(key="distractor_source").set_value("Upload a pairwise file").run()
    at.file_uploader(key="distractor_file").set_value(("d.csv", upload.encode(), "text/csv"))
    at.run()
    at.button(key="load_distractors").click().run()
    assert not at.exception, at.exception
    link = _params(at)
    assert link["source"] == "upload" and "distractors" in link
    store.forget_all()
    again = _open("app_pages/robustness.py", **link)
    assert _says_not_on_this_server(again) and not _numbers_shown(again)
    assert _params(again) == link
    # another source chosen with the radio: the file is not awaited and the address follows
    # (it kept source=upload, and a reload reopened the notice)
    again.radio(key="distractor_source").set_value(
        "Generated from COCO val2014 captions (synthetic)"
    )
    again.run()
    assert not _says_not_on_this_server(again) and _numbers_shown(again)
    assert _params(again)["source"] == "generated" and "distractors" not in _params(again)


def test_a_robustness_link_whose_distractor_set_is_graded_says_so() -> None:
    """``distractors=`` naming a graded set this server holds (a digest from a Judgments
    link) was drawn as pairs: a TypeError traceback. One line now, and the generated set.
    A pairwise file's ``distractors=`` beside another source is named as not used."""
    at = _open("app_pages/judgments.py")
    at.button(key="load_demo").click().run()  # the graded demo: its digest is held here
    graded = at.session_state[state.JSET_KEY]
    assert graded.kind == "graded"
    short = _params(at)["set"]
    again = _open("app_pages/robustness.py", source="upload", distractors=short)
    assert not again.exception, again.exception
    said = " ".join(w.value for w in again.warning)
    assert "distractor set is a graded judgment set, not a pairwise one" in said, said
    assert _numbers_shown(again) and "distractors" not in _params(again)
    # a pairwise file beside another source: dropped from the address without a word
    at = _open("app_pages/robustness.py")
    at.radio(key="distractor_source").set_value("Upload a pairwise file").run()
    pairs = "candidate_a,candidate_b,references,preferred\na dog runs,a cat,a dog|||a pup,a\n"
    at.file_uploader(key="distractor_file").set_value(("d.csv", pairs.encode(), "text/csv"))
    at.run()
    at.button(key="load_distractors").click().run()
    digest = _params(at)["distractors"]
    beside = _open("app_pages/robustness.py", source="generated", distractors=digest)
    (said,) = _link_warnings(beside)
    assert "distractors=" + digest in said and "used only with" in said, said
    linked = _open("app_pages/robustness.py", source="loaded", set=short)  # on Judgments
    assert not linked.exception, linked.exception
    said = " ".join(i.value for i in linked.info)
    assert "The set loaded on the Judgments page is graded, not pairwise" in said, said


def test_lab_batch_on_the_judgments_set_after_a_restart() -> None:
    at = _open("app_pages/judgments.py")
    _upload(at)
    at.switch_page("app_pages/perturb.py").run()
    at.radio(key="lab_mode").set_value("Batch").run()
    at.selectbox(key="lab_dataset").select("Judgment set loaded on the Judgments page").run()
    at.number_input(key="lab_images").set_value(10).run()
    at.multiselect(key="lab_batch_metrics").set_value(["bleu_4"]).run()
    at.button(key="lab_run_batch").click().run()
    assert not at.exception, at.exception
    link = _params(at)
    assert link["lab_dataset"] == "loaded" and "set" in link
    store.forget_all()
    again = _open("app_pages/perturb.py", **link)
    assert _says_not_on_this_server(again) and not _numbers_shown(again)


def test_compare_link_to_a_systems_idf_set_this_server_does_not_hold() -> None:
    refs = ["a man rides a wave on a surfboard", "a surfer on a big wave"]
    link = {"candidate": "a man surfing", "ref": refs, "idf": "set-0123456789abcdef"}
    at = _open("app_pages/compare.py", **link)
    assert any("IDF source (set-0123456789abcdef" in w.value for w in at.warning)
    assert not at.metric  # nothing scored until the user picks a source
    assert _params(at)["idf"] == "set-0123456789abcdef"
    at.button(key="use-idf-scored set").click().run()
    assert not at.exception, at.exception
    assert at.metric and _params(at)["idf"] == "corpus"


def _choice_page() -> None:
    """A page with one choice in its URL, drawn as every page draws its choices."""
    import streamlit as st

    from capeval_ui import state

    params = (state.Param("choice", "choice"),)
    state.restore(params)
    st.selectbox("Choice", ["a", "b", "c"], key="choice")
    state.write(params)


def test_a_click_that_comes_back_with_an_earlier_url_of_the_app_is_kept() -> None:
    """A browser busy drawing applies the URLs a run writes late: a click can come back with
    the URL of the run before the last. That URL is the app's own, not a link; restoring it
    undid the click (the Systems page scored its three default metrics after "coco-caption's
    metrics" was pressed, in the load bench's browsers)."""
    at = AppTest.from_function(_choice_page, default_timeout=TIMEOUT).run()
    first = _params(at)
    assert first == {"choice": "a"}
    at.selectbox(key="choice").select("b").run()
    assert _params(at) == {"choice": "b"}
    at.query_params.update(first)  # the browser has not applied "choice=b" yet
    at.selectbox(key="choice").select("c").run()
    assert at.selectbox(key="choice").value == "c" and _params(at) == {"choice": "c"}


def test_a_link_the_app_wrote_runs_ago_is_still_restored() -> None:
    """Only the last two runs' URLs are the app's own: the same address as a link later (a
    table row opening its image again, after other pages ran) opens what it names."""
    at = AppTest.from_function(_choice_page, default_timeout=TIMEOUT).run()
    at.selectbox(key="choice").select("b").run()
    linked = _params(at)
    for value in ("c", "a"):
        at.selectbox(key="choice").select(value).run()
    at.query_params.update(linked)
    at.run()
    assert at.selectbox(key="choice").value == "b"


@pytest.mark.parametrize(
    ("page", "params"),
    [
        ("app_pages/judgments.py", {"set": "[click](http://example.org) **expired**"}),
        ("app_pages/correlations.py", {"set": "[click](http://example.org) **expired**"}),
        ("app_pages/compare.py", {"idf": "set-x [click](http://example.org) **expired**"}),
    ],
)
def test_a_value_from_a_link_is_shown_as_typed(page: str, params: dict[str, str]) -> None:
    """A link's value went into the page's own warning as Markdown: a live link, bold text."""
    at = _open(page, **params)
    (said,) = [w.value for w in at.warning if "not on this server" in w.value]
    assert "\\[click\\]\\(http:\u2060//example.org\\) \\*\\*expired\\*\\*" in said
    assert "[click](" not in said.replace("\\[click\\]\\(", "")


# -- link values the page cannot use (a sweep of every page's parameters) --------------------
def _link_warnings(at: AppTest) -> list[str]:
    return [w.value for w in at.warning if "values not used here" in w.value]


def test_a_links_values_the_page_does_not_offer_are_named():
    """tab=bogus, idf=bogus and a misspelt candiate= were replaced by defaults without a
    word, and the rewritten address no longer held them."""
    at = _open("app_pages/compare.py", tab="bogus", idf="bogus", candiate="a dog")
    (said,) = _link_warnings(at)
    for part in ("tab=bogus", "idf=bogus", "candiate=a dog \\(not a setting of this page\\)"):
        assert part in said, said
    # a link the page wrote itself opens without a word
    again = _reopened(at, "app_pages/compare.py")
    assert not _link_warnings(again)


@pytest.mark.parametrize(
    ("page", "params", "named"),
    [
        # dropped once the page knew its options (valid_choice), after the link was read
        ("app_pages/correlations.py", {"human": "bogus"}, "human=bogus"),
        ("app_pages/correlations.py", {"scatter": "bogus"}, "scatter=bogus"),
        ("app_pages/correlations.py", {"metric": ["bleu_4", "bogus"]}, "metric=bogus"),
        ("app_pages/significance.py", {"a": "bogus", "b": "bleu_4"}, "a=bogus"),
        ("app_pages/systems.py", {"metric": ["bleu_4", "bogus"]}, "metric=bogus"),
        ("app_pages/systems.py", {"a": "zzz", "scored": "1"}, "a=zzz"),
        # an item of a list the page does not offer
        ("app_pages/perturb.py", {"lab_metric": ["bleu_4", "bogus"]}, "lab\\_metric=bogus"),
        # a second value of a parameter that takes one
        (
            "app_pages/compare.py",
            {"candidate": ["a dog", "a cat"]},
            "candidate=a cat \\(a second value: the first is used\\)",
        ),
        # a tokenizer not offered; a panel's order or reference the panel does not draw
        # (with a value of Compare's: a test's link runs Home first, which keeps an address
        # of its own values only, as a browser opening Compare's address does not)
        ("app_pages/compare.py", {"tokenizer": "bert", "candidate": "a dog"}, "tokenizer=bert"),
        # the tokenizer given twice: the first was used without a word (every other
        # parameter's second value was named)
        (
            "app_pages/compare.py",
            {"tokenizer": ["whitespace", "ptb"], "candidate": "a dog"},
            "tokenizer=ptb \\(a second value: the first is used\\)",
        ),
        # an order past the panel's or below 1: both name the order shown (bleu-order=7
        # showed the 1-grams under a note that named none)
        (
            "app_pages/compare.py",
            {"tab": "BLEU", "bleu-order": "7"},
            "bleu-order=7 \\(the nearest offered, 4, is used\\)",
        ),
        (
            "app_pages/compare.py",
            {"tab": "CIDEr-D", "cider_d-order": "9"},
            "cider\\_d-order=9 \\(the nearest offered, 4, is used\\)",
        ),
        (
            "app_pages/compare.py",
            {"tab": "BLEU", "bleu-order": "-2"},
            "bleu-order=-2 \\(the nearest in range, 1, is used\\)",
        ),
        # candidate B's panel without a candidate B: dropped from the address unsaid
        (
            "app_pages/compare.py",
            {"tab": "BLEU", "candidate": "a dog", "bleu-b-order": "3"},
            "bleu-b-order=3 \\(a panel of candidate B, and there is none\\)",
        ),
        (
            "app_pages/compare.py",
            {"tab": "ROUGE-L", "rouge_l-reference": "9"},
            "rouge\\_l-reference=9",
        ),
        # numbers brought within their fields
        (
            "app_pages/compare.py",
            {"tab": "METEOR", "meteor-reference": "0"},
            "meteor-reference=0 \\(the nearest in range, 1, is used\\)",
        ),
        (
            "app_pages/pairwise.py",
            {"refs": "999"},
            "refs=999 \\(the nearest in range, 50, is used\\)",
        ),
    ],
)
def test_a_links_values_the_page_drops_later_are_named_too(
    page: str, params: dict[str, Any], named: str
) -> None:
    """A link's human=bogus, a=bogus, metric=bogus, a second candidate= and a number out of
    its field's range were replaced or dropped without a word (the first check of the page's
    options came after the warning was drawn)."""
    at = _open(page, **params)
    (said,) = _link_warnings(at)
    assert named in said, said
    again = _reopened(at, page)  # the page's own link then opens without a word
    assert not _link_warnings(again), _link_warnings(again)


def test_home_names_a_parameter_it_does_not_take() -> None:
    """/?foo=bar kept foo=bar without a word, where every other page says "not a setting of
    this page"; the warning is the link's first run's, as on the other pages."""
    at = _app(foo="bar").run()
    assert not at.exception, at.exception
    (said,) = _link_warnings(at)
    assert "foo=bar \\(not a setting of this page\\)" in said, said
    at.run()
    assert not _link_warnings(at)


@pytest.mark.parametrize(
    ("page", "own"),
    [
        ("app_pages/judgments.py", {"source": "demo"}),
        ("app_pages/correlations.py", {"level": "item"}),
    ],
)
def test_an_empty_set_is_named_and_dropped(page: str, own: dict[str, str]) -> None:
    """set= (empty) was kept in the address without a word, waited for as a set of no name
    (the meta pages said "This link's judgment set () is not on this server"). ``own``: a
    value of the page, so that the test's first run, Home's, leaves the address to it."""
    at = _open(page, set="", **own)
    (said,) = _link_warnings(at)
    assert "set=." in said or "set=;" in said, said
    assert "set" not in _params(at)
    assert not [w for w in at.warning if "is not on this server" in w.value]


def test_a_choice_kept_from_earlier_in_the_session_is_dropped_without_a_word() -> None:
    """Only a link's own values are named: the page does not warn about a session's choices."""
    at = _open("app_pages/compare.py")
    at.session_state["human_column"] = "a column of another set"
    _navigate(at, "app_pages/correlations.py")
    assert at.selectbox(key="human_column").value == "quality"
    assert not _link_warnings(at)


def test_a_number_beyond_a_field_is_brought_within_it_not_a_crash():
    """lab_seed=10**309 broke the lab for the whole session (OverflowError in the number
    field); a pairwise seed past 2**31 - 1 became 0; resamples=5000 became 200."""
    at = _open("app_pages/perturb.py", lab_seed="1" + "0" * 309, lab_n="1" + "0" * 40)
    assert at.session_state["lab_seed"] == state.SEED_MAX
    assert at.session_state["lab_n"] == state.LAB_MAX_WORDS
    _navigate(at, "app_pages/compare.py")
    _navigate(at, "app_pages/perturb.py")  # and the lab opens again on a later visit
    at = _open("app_pages/pairwise.py", seed="2147483648")
    assert at.number_input(key="seed").value == state.SEED_MAX
    at = _open("app_pages/correlations.py", resamples="5000")
    assert at.select_slider(key="resamples").value == 2000
    (said,) = _link_warnings(at)
    assert "resamples=5000 \\(the nearest offered, 2000, is used\\)" in said
    # below the field too: the link's -5 is quoted, not the 1 it was first brought to
    at = _open("app_pages/correlations.py", resamples="-5")
    assert at.select_slider(key="resamples").value == 200
    (said,) = _link_warnings(at)
    assert "resamples=-5 \\(the nearest offered, 200, is used\\)" in said, said


def test_a_bare_address_in_a_links_value_is_not_made_a_link():
    """GitHub's Markdown links https://..., www. and e-mail addresses by itself, after the
    escapes are read: the 'not on this server' warning made a link's value clickable (seen
    in a browser). A word joiner keeps each one text."""
    value = "https://evil.example/login a@b.example www.x.org"
    at = _open("app_pages/robustness.py", source="upload", distractors=value)
    (said,) = [w.value for w in at.warning if "not on this server" in w.value]
    for bare in ("https://", "a@b", "www."):
        assert bare not in said, said
    assert as_shown(said).count(value) == 1
    # beside another source the file is not awaited: the value is named as not used, as text
    at = _open("app_pages/robustness.py", distractors=value)
    (said,) = [w.value for w in at.warning if "values not used" in w.value]
    assert "https://" not in said and value in as_shown(said) and "used only" in said


def test_a_long_value_not_used_keeps_both_ends_and_says_how_much_is_cut() -> None:
    """The warning cut each value after 80 characters: two long captions alike at the start
    read the same, and the reason after the value ("not a setting of this page") was lost."""
    value = "a dog runs on the grass " + "and on the sand " * 20 + "by the sea at dusk"
    at = _open("app_pages/compare.py", candiate=value)
    (said,) = _link_warnings(at)
    shown = as_shown(said)
    assert "candiate=a dog runs on the grass" in shown, shown
    assert "by the sea at dusk (not a setting of this page)" in shown, shown
    assert f"({len(value) - 80:,} characters left out)" in shown, shown


@pytest.mark.parametrize(
    "page",
    [
        "app_pages/compare.py",
        "app_pages/perturb.py",
        "app_pages/correlations.py",
        "app_pages/significance.py",
        "app_pages/pairwise.py",
        "app_pages/robustness.py",
        "app_pages/judgments.py",
        "app_pages/systems.py",
    ],
)
def test_a_link_the_page_wrote_is_used_whole(page: str) -> None:
    """Every value of a page's own link is one it reads: no 'values not used here' when the
    copied link opens (a parameter the page writes but does not restore would be named)."""
    at = _open(page)
    again = _open(page, **_as_lists(_params(at)))
    assert not _link_warnings(again), _link_warnings(again)


def test_a_view_too_large_for_a_link_says_so_on_reload_instead_of_another_view() -> None:
    """1,100 references: Streamlit reads no query of more than 1,000 values, so a reload
    opened the default example, with other numbers, and said nothing."""
    at = _open("app_pages/compare.py")
    refs = "\n".join(f"a man riding wave number {i}" for i in range(1100))
    at.text_area(key="references").set_value(refs).run()
    assert not at.exception, at.exception
    (values,) = _params(at).values()  # the address holds the query's size alone
    fields, chars = map(int, values.split("-"))
    assert list(_params(at)) == [state.TOO_LARGE] and fields > 1100 and chars > 30_000
    assert at.text_area(key="references").value == refs  # this session keeps them
    reloaded = _open("app_pages/compare.py", **_params(at))
    (said,) = [w.value for w in reloaded.warning if "too large for a link" in w.value]
    assert said.startswith(
        f"This address was written for a view too large for a link ({fields:,} values and "
        f"{chars:,} characters; a link holds at most 1,000 values and 524,288 characters), so "
        "it cannot open that view again"
    )
    # a view that fits writes its values again
    at.text_area(key="references").set_value("a man riding a wave").run()
    assert state.TOO_LARGE not in _params(at) and _params(at)["ref"] == "a man riding a wave"


def test_a_closed_panels_reference_goes_with_an_edit_of_its_candidate() -> None:
    """A reference picked on the METEOR tab stayed in the URL after candidate B was edited
    on another tab: this session then drew the new winner, a reload the old pick."""
    refs = ["a man rides a wave on a surfboard", "a surfer on a big wave", "a man surfing",
            "a person surfing on a big wave"]  # fmt: skip
    at = _open("app_pages/compare.py", candidate="a man surfing on a wave",
               candidate_b="a surfer riding", ref=refs, tab="METEOR")  # fmt: skip
    at.selectbox(key="meteor-b-reference").set_value(1).run()
    at.selectbox(key="meteor-reference").set_value(2).run()
    assert _params(at)["meteor-b-reference"] == "2"
    open_tab(at, "BLEU")
    at.text_area(key="candidate_b").input("a person surfing on a big wave").run()
    assert not at.exception, at.exception
    assert "meteor-b-reference" not in _params(at)  # B's pick went with B's edit
    assert _params(at)["meteor-reference"] == "3"  # A's inputs did not change
    open_tab(at, "METEOR")
    here = at.selectbox(key="meteor-b-reference").value
    again = _reopened(at, "app_pages/compare.py")
    assert again.selectbox(key="meteor-b-reference").value == here  # the winner, both ways
    assert again.selectbox(key="meteor-reference").value == 2


def test_a_set_opened_by_a_link_elsewhere_is_an_upload_on_the_judgments_page() -> None:
    """A Correlations link to an uploaded set, then Judgments: its source read "Demo set"
    above the uploaded set, and its URL wrote source=demo beside the set's digest."""
    at = _upload(_open("app_pages/judgments.py"))
    at.switch_page("app_pages/correlations.py").run()
    link = _params(at)
    again = _open("app_pages/correlations.py", **link)
    assert again.session_state[state.JSET_KEY].synthetic is False
    _navigate(again, "app_pages/judgments.py")
    assert again.radio(key="judgment_source").value == "Upload a file"
    assert _params(again)["source"] == "upload" and _params(again)["set"] == link["set"]
    assert not [c.value for c in again.caption if "press Load" in c.value]


def test_a_pairwise_set_opened_by_a_link_elsewhere_names_its_format_and_demo() -> None:
    """A Pairwise-accuracy link to a pairwise set, then Judgments: the boxes showed their
    defaults (format graded, the graded demo), and the page said "press Load" to read the
    set shown as those, with no file to load (and a demo that would replace it)."""
    upload = (
        "candidate_a,candidate_b,references,preferred\n"
        "a man rides a wave,a man rides a horse,a surfer rides a wave|||a man surfing,a\n"
        "a dog on grass,a man on grass,a dog lying on grass|||a brown dog,a\n"
    )
    at = _upload(_open("app_pages/judgments.py"), "pairwise", upload)
    assert at.session_state[state.JSET_KEY].kind == "pairwise"
    demo = _open("app_pages/judgments.py")
    demo.selectbox(key="demo_set").select(list(choices.DEMO_SETS)[1]).run()
    demo.button(key="load_demo").click().run()  # the pairwise demo
    for view in (at, demo):
        view.switch_page("app_pages/pairwise.py").run()
        again = _open("app_pages/pairwise.py", **_params(view))
        _navigate(again, "app_pages/judgments.py")
        assert not again.exception, again.exception
        said = [c.value for c in again.caption if "press Load" in c.value]
        assert not said, said
    assert again.selectbox(key="demo_set").value == list(choices.DEMO_SETS)[1]


def test_a_draw_beside_other_captions_is_named_as_not_used() -> None:
    """coco_draw=99999 with one's own captions said "the nearest in range, 499, is used", but
    no draw was used and the page's URL dropped it."""
    at = _open("app_pages/compare.py", candidate="a dog", ref="a dog runs", coco_draw="99999")
    (said,) = [w.value for w in at.warning if "coco" in w.value]
    assert "99999" in said and "used only with the random COCO image" in said
    assert "499" not in said and "coco_draw" not in _params(at)
    lab = _open("app_pages/perturb.py", lab_caption="a dog", lab_ref="a dog runs",
                lab_coco_draw="99999")  # fmt: skip
    (said,) = [w.value for w in lab.warning if "coco" in w.value]
    assert "99999" in said and "used only with the random COCO image" in said
    assert "lab_coco_draw" not in _params(lab)


@pytest.mark.parametrize(
    ("page", "params", "key", "default"),
    [
        (
            "app_pages/systems.py",
            {"metric": "foo", "scored": "1"},
            "systems_metrics",
            ["bleu_4", "rouge_l", "cider_d"],
        ),
        ("app_pages/perturb.py", {"lab_metric": ["nope", "zzz"]}, "lab_metrics", None),
        (
            "app_pages/perturb.py",
            {"lab_mode": "batch", "lab_batch_metric": "zzz"},
            "lab_batch_metrics",
            ["bleu_4", "rouge_l", "cider_d", "meteor"],
        ),
    ],
)
def test_a_link_naming_no_offered_metric_keeps_the_pages_own(page, params, key, default) -> None:
    """metric=foo: the warning said the page shows its own choices, but the box was empty and
    asked for a metric (Systems and both modes of the lab)."""
    from capeval_core.metrics import REPORTED_KEYS

    at = _open(page, **params)
    assert not at.exception, at.exception
    assert at.multiselect(key=key).value == (default or list(REPORTED_KEYS))
    named = params.get("metric") or params.get("lab_batch_metric") or "nope, zzz"
    assert [w for w in _link_warnings(at) if named in w]
    assert not [i for i in at.info if "at least one metric" in i.value]


@pytest.mark.parametrize("page", META_PAGES)
def test_a_link_naming_no_offered_metric_keeps_the_meta_pages_own(page) -> None:
    """metric=foo on a meta-evaluation page said the page shows its own choices, then showed
    an empty Metrics box, "Choose at least one metric." and rewrote the URL to metric=."""
    from capeval_ui.state import METRICS_KEY

    at = _open(page, metric="foo")
    assert at.multiselect(key=METRICS_KEY).value == list(choices.FAST_KEYS)
    assert [w for w in _link_warnings(at) if "metric=foo" in w]
    assert not [i for i in at.info if "at least one metric" in i.value]
    assert _params(at).get("metric") not in ("", [""], "foo")


def _layout(at: AppTest) -> list[str]:
    """The kinds of the page's top-level elements, in order: what places each of them."""
    return [type(child).__name__ for child in at.main.children.values()]


@pytest.mark.parametrize(
    ("page", "params"),
    [
        ("app_pages/compare.py", {"candidate": "a dog runs", "ref": ["a dog running"]}),
        ("app_pages/judgments.py", {"source": "demo", "demo": "graded"}),
    ],
)
def test_a_links_first_run_places_the_page_as_every_later_run(page, params):
    """The run a link opens placed one element more (the slot of its "values not used"
    warning) above the rest: every later element moved one place at the next run, and the
    browser rebuilt each expander the reader had opened, closed, at their first edit."""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
    for key, value in params.items():
        at.query_params[key] = value
    at.run()
    at.switch_page(page).run()
    assert not at.exception
    first = _layout(at)
    at.run()
    assert _layout(at) == first
