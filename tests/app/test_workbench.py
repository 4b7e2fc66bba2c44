"""AppTest checks of issue 14 ("the app as a workbench people keep open"): inputs survive
navigation and travel in the URL, two candidates side by side, long input, the app's
settings. Numbers are compared with the library's on the same input."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import tomllib
import warnings
from pathlib import Path
from typing import Any

import pytest
from streamlit.testing.v1 import AppTest

from capeval_core import DegenerateCorpusWarning, score_many
from capeval_core.examples import BUILTIN_EXAMPLES, DEFAULT_EXAMPLE
from capeval_core.judgments import DEFAULT_MAX_BYTES
from capeval_core.metrics import METRICS, REPORTED_KEYS, metric_class
from capeval_ui import cached, choices, state, views
from capeval_ui.views import key_label
from tests.app.apptest import ROOT, TIMEOUT, as_shown, open_tab
from tests.app.test_links import META_PAGES

DEFAULT = BUILTIN_EXAMPLES[DEFAULT_EXAMPLE]
COMPARE = "app_pages/compare.py"


def _app(**params: Any) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
    for key, value in params.items():
        at.query_params[key] = value
    return at


def _compare(**params: Any) -> AppTest:
    at = _app(**params).run()
    at.switch_page(COMPARE).run()
    assert not at.exception, at.exception
    return at


def _scores(
    candidate: str, references: tuple[str, ...], keys: tuple[str, ...] = tuple(REPORTED_KEYS)
) -> dict:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateCorpusWarning)
        return score_many(
            list(keys),
            [candidate],
            [list(references)],
            options={"cider_d": {"idf": "coco-val2014"}},
        )


# -- the app's settings (.streamlit/config.toml, the router) -----------------------------------
def test_streamlit_config_binds_locally_and_caps_uploads_like_the_loaders() -> None:
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    assert config["server"]["address"] == "127.0.0.1"
    assert config["browser"]["gatherUsageStats"] is False
    assert config["client"]["toolbarMode"] == "minimal"  # no "Deploy" button
    # no whole-heap collection after each run of each person's page (issue 42)
    assert config["runner"]["postScriptGC"] is False
    # Streamlit counts maxUploadSize in MiB; the loaders' cap is in bytes: the same limit
    assert config["server"]["maxUploadSize"] * 1024 * 1024 == DEFAULT_MAX_BYTES


def test_the_app_server_runs_one_blas_thread() -> None:
    """A second BLAS thread only spun after a page's small matrix products, taking a core from
    the other people's work (issue 42): the app's process asks for one, whatever the
    environment asked for."""
    script = (
        "import json, numpy as np, capeval_ui;"
        "from threadpoolctl import threadpool_info;"
        "np.ones((300, 300)) @ np.ones((300, 300));"
        "print(json.dumps([(i['filepath'], i['num_threads']) for i in threadpool_info()]))"
    )
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "2", "OMP_NUM_THREADS": "2"}
    out = subprocess.run(
        [sys.executable, "-c", script], env=env, cwd=ROOT, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    libraries = json.loads(out.stdout.splitlines()[-1])
    assert any("openblas" in path for path, _ in libraries)  # numpy's BLAS was looked at
    assert {path: threads for path, threads in libraries} == {path: 1 for path, _ in libraries}


def test_page_urls_are_the_titles_and_the_icon_is_drawn_locally() -> None:
    tree = ast.parse((ROOT / "app.py").read_text())
    pages = {
        node.targets[0].id: ast.literal_eval(node.value)
        for node in tree.body
        if isinstance(node, ast.Assign)
        and isinstance(node.targets[0], ast.Name)
        and node.targets[0].id in ("CAPTION_PAGES", "META_PAGES")
    }
    titles = [title for group in pages.values() for _, title, _ in group]
    assert [state.url_path(t) for t in titles[1:]] == [
        "compare-captions",
        "systems",
        "perturbation-lab",
        "judgments",
        "correlations",
        "significance",
        "pairwise-accuracy",
        "robustness",
    ]
    config = next(
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "set_page_config"
    )
    icon = next(k.value.value for k in config.keywords if k.arg == "page_icon")
    # a ":material/...:" favicon is fetched from a font server; an emoji is drawn in place
    assert not icon.startswith(":"), icon


# -- inputs survive navigation, and travel in the URL ------------------------------------------
def test_compare_inputs_survive_a_visit_to_another_page() -> None:
    at = _compare()
    at.text_area(key="candidate").input("a dog runs on the beach")
    at.text_area(key="candidate_b").input("a cat sleeps")
    at.radio(key="cider_idf").set_value("scored set").run()
    for page in ("app_pages/perturb.py", "app_pages/judgments.py"):
        at.switch_page(page).run()
        assert not at.exception, at.exception
    at.switch_page(COMPARE).run()
    assert not at.exception, at.exception
    assert at.text_area(key="candidate").value == "a dog runs on the beach"
    assert at.text_area(key="candidate_b").value == "a cat sleeps"
    assert at.radio(key="cider_idf").value == "scored set"
    assert at.text_area(key="references").value == "\n".join(DEFAULT.references)


def test_lab_inputs_survive_a_visit_to_compare() -> None:
    at = _app().run()
    at.switch_page("app_pages/perturb.py").run()
    at.text_area(key="lab_candidate").input("a boy plays with a ball").run()
    at.multiselect(key="lab_perturbations").set_value(["shuffle"]).run()
    at.switch_page(COMPARE).run()
    at.switch_page("app_pages/perturb.py").run()
    assert not at.exception, at.exception
    assert at.text_area(key="lab_candidate").value == "a boy plays with a ball"
    assert at.multiselect(key="lab_perturbations").value == ["shuffle"]


def test_a_compare_link_opens_exactly_its_example() -> None:
    refs = ["a dog runs on the grass", "a brown dog running"]
    at = _compare(candidate="a dog running on grass", ref=refs)
    assert at.text_area(key="candidate").value == "a dog running on grass"
    assert at.text_area(key="references").value == "\n".join(refs)
    assert at.text_area(key="candidate_b").value == ""
    shown = {m.label: m.value for m in at.metric}
    expected = _scores("a dog running on grass", tuple(refs))
    assert shown["CIDEr-D"] == f"{expected['cider_d'].value:.4f}"


def _param(at: AppTest, key: str) -> list[str]:
    value = at.query_params[key]
    return value if isinstance(value, list) else [value]


def test_the_url_follows_the_inputs() -> None:
    at = _compare()
    assert _param(at, "candidate") == [DEFAULT.candidate]
    assert _param(at, "ref") == list(DEFAULT.references)
    at.text_area(key="candidate").input("two surfers")
    at.text_area(key="candidate_b").input("a wave").run()
    assert _param(at, "candidate") == ["two surfers"]
    assert _param(at, "candidate_b") == ["a wave"]
    # typing goes on: the URL written by the page never overwrites the text areas
    at.text_area(key="candidate").input("three surfers").run()
    assert at.text_area(key="candidate").value == "three surfers"
    assert _param(at, "candidate") == ["three surfers"]


# -- two candidates side by side -----------------------------------------------------------------
def test_two_candidates_side_by_side_metric_by_metric() -> None:
    a, b = DEFAULT.candidate, "a dog sleeps on a couch"
    at = _compare()
    at.text_area(key="candidate_b").input(b).run()
    assert not at.exception, at.exception
    frame = next(tb.value for tb in at.table if "higher" in tb.value.columns)
    expected_a, expected_b = _scores(a, DEFAULT.references), _scores(b, DEFAULT.references)
    rows = frame.set_index("metric")
    assert list(rows.index) == [key_label(k) for k in REPORTED_KEYS]
    for key in REPORTED_KEYS:
        row = rows.loc[key_label(key)]
        va, vb = expected_a[key].value, expected_b[key].value
        assert (row["A"], row["B"]) == (va, vb), key
        assert row["higher"] == views.winner(va, vb, metric_class(key).higher_is_better)
        assert row["why"], f"no evidence for {key}"
    # the caption on topic wins on every n-gram metric, and the evidence says why
    for key in ("bleu_1", "rouge_l", "cider_d", "meteor"):
        assert rows.loc[key_label(key), "higher"] == "A", key
    bleu_a = expected_a["bleu_4"].segments[0].details
    bleu_b = expected_b["bleu_4"].segments[0].details
    assert rows.loc["BLEU-1", "why"].startswith(
        f"clipped unigram matches: A {bleu_a.correct[0]}/{bleu_a.guess[0]}, "
        f"B {bleu_b.correct[0]}/{bleu_b.guess[0]}"
    )
    # each metric's tab draws both candidates' evidence
    tab = open_tab(at, METRICS["meteor"].name)
    assert [m.value for m in tab.markdown if m.value.startswith("**Candidate")] == [
        "**Candidate A**",
        "**Candidate B**",
    ]
    assert at.selectbox(key="meteor-b-reference").value == (
        expected_b["meteor"].segments[0].details.best
    )


def test_winner_follows_the_metric_direction() -> None:
    assert views.winner(0.2, 0.1) == "A"
    assert views.winner(0.2, 0.1, higher_is_better=False) == "B"
    assert views.winner(0.3, 0.3 + 1e-12) == "tie"


# -- long input ------------------------------------------------------------------------------------
def test_too_long_a_caption_gets_one_clear_limit_and_keeps_the_rest() -> None:
    at = _compare()
    long = " ".join(["dog"] * (views.MAX_WORDS + 1))
    at.text_area(key="candidate").input(long).run()
    assert not at.exception, at.exception
    errors = [e.value for e in at.error]
    assert errors == [
        f"Captions are scored up to {views.MAX_WORDS:,} words; the candidate has "
        f"{views.MAX_WORDS + 1:,}. Shorten it, or score long texts with the library or the CLI."
    ]
    assert at.text_area(key="references").value == "\n".join(DEFAULT.references)
    assert not at.metric


def test_a_long_caption_gets_its_scores_without_the_slow_evidence() -> None:
    at = _compare()
    long = " ".join([DEFAULT.candidate] * 20)  # 160 words
    at.text_area(key="candidate").input(long).run()
    assert not at.exception, at.exception
    shown = {m.label: m.value for m in at.metric}
    expected = _scores(long, DEFAULT.references, keys=("bleu_4",))
    assert shown["BLEU-4"] == f"{expected['bleu_4'].value:.4f}"
    assert not at.tabs
    assert any(f"up to {views.EVIDENCE_MAX_WORDS} words" in i.value for i in at.info)
    # one sentence of 160 words: SPICE's exact parser parses it, as the jar does
    assert "SPICE" in shown


@pytest.mark.parametrize("text", ["", "   "])
def test_an_empty_second_candidate_scores_one(text: str) -> None:
    at = _compare()
    at.text_area(key="candidate_b").input(text).run()
    assert not at.exception, at.exception
    assert not [tb for tb in at.table if "higher" in tb.value.columns]
    assert "candidate_b" not in at.query_params


# -- the perturbation lab ------------------------------------------------------------------------
def _lab(**session: Any) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app_pages/perturb.py"), default_timeout=TIMEOUT)
    at.session_state["lab_metrics"] = ["bleu_1", "bleu_4", "rouge_l"]
    for key, value in session.items():
        at.session_state[key] = value
    at.run()
    assert not at.exception, at.exception
    return at


def test_lab_colours_every_perturbation_apart_and_shows_no_meaningless_relative_change() -> None:
    from capeval_core.perturb import PERTURBATIONS

    refs = "\n".join(DEFAULT.references)
    at = _lab(lab_perturbations=list(PERTURBATIONS), lab_candidate="a surfer", lab_references=refs)
    specs = [json.loads(e.proto.spec) for e in at.get("plotly_chart")]
    deltas = next(s for s in specs if s["layout"]["yaxis"]["title"]["text"] == "after − before")
    colours = [trace["marker"]["color"] for trace in deltas["data"]]
    assert len(colours) == len(PERTURBATIONS) == len(set(colours))
    frame = next(df.value for df in at.dataframe if "relative" in df.value.columns)
    # BLEU-4 of a two-word caption reads 0.0000 (about 1e-9): no relative change is claimed
    tiny = frame[frame["before"].abs() < 5e-5]
    assert not tiny.empty and tiny["relative"].isna().all()


def test_lab_shuffle_lists_moved_words_with_their_places() -> None:
    from capeval_core.perturb import perturb

    at = _lab(lab_perturbations=["shuffle"])
    expected = perturb(DEFAULT.candidate, "shuffle", seed=0)
    changes = next(df.value for df in at.dataframe if "where" in df.value.columns)
    assert list(changes["where"]) == [
        f"moved from word {c.position + 1} to word {c.new_position + 1}" for c in expected.changed
    ]
    assert all(c.position != c.new_position for c in expected.changed)


def test_lab_batch_names_the_loaded_set_and_shows_example_captions() -> None:
    from capeval_core.judgments.demo import demo_graded

    jset = demo_graded(8, seed=3)
    at = _lab(
        lab_mode="Batch",
        lab_batch_metrics=["bleu_4"],
        lab_dataset=list(choices.LAB_DATASETS)[2],
        lab_images=20,
        **{state.JSET_KEY: jset},
    )
    at.button(key="lab_run_batch").click().run()
    assert not at.exception, at.exception
    text = "\n".join(t.value for t in at.text)
    assert f"the set loaded on the Judgments page ({', '.join(jset.source)}" in text
    assert jset.content_digest[:12] not in text
    examples = next(df.value for df in at.dataframe if "perturbed" in df.value.columns)
    assert 0 < len(examples) <= 8
    assert set(examples["original"]) <= set(jset.candidates)
    assert (examples["original"] != examples["perturbed"]).all()


# -- Judgments: uploads, formats, reload ----------------------------------------------------------
def _judgments() -> AppTest:
    at = _app().run()
    at.switch_page("app_pages/judgments.py").run()
    at.radio(key="judgment_source").set_value("Upload a file").run()
    assert not at.exception, at.exception
    return at


GRADED = (
    "candidate,references,quality\n"
    "a dog runs on the grass,a dog running on grass|||a brown dog runs,4\n"
    "a cat sleeps,a dog running on grass|||a brown dog runs,1\n"
    "a man rides a wave,a surfer rides a wave|||a man surfing,5\n"
)


def test_changing_the_format_clears_the_uploaded_files() -> None:
    """Issue 14: PASCAL-50S files, then the graded format and a CSV -> "tmp...: cannot tell
    the format from the suffix ''"."""
    at = _judgments()
    at.selectbox(key="judgment_format").select("pascal50s").run()
    at.file_uploader(key="judgment_files-pascal50s").set_value(
        [("pair_pascal.mat", b"x", "application/octet-stream")]
    )
    at.run()
    at.selectbox(key="judgment_format").select("graded").run()
    assert not at.file_uploader(key="judgment_files-graded").value
    at.file_uploader(key="judgment_files-graded").set_value(
        [("mine.csv", GRADED.encode(), "text/csv")]
    )
    at.run()
    at.button(key="load_judgments").click().run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    jset = at.session_state[state.JSET_KEY]
    assert len(jset) == 3 and jset.source == ("mine.csv",)


def _choose_files(fmt: str, files: list[tuple[str, bytes, str]], load: bool = True):  # type: ignore[no-untyped-def]
    """The Judgments page with ``files`` chosen for the format ``fmt`` (and Load pressed)."""
    at = _judgments()
    at.selectbox(key="judgment_format").select(fmt).run()
    at.file_uploader(key=f"judgment_files-{fmt}").set_value(files)
    at.run()
    if load:
        at.button(key="load_judgments").click().run()
    assert not at.exception, at.exception
    return at


def test_errors_name_the_uploaded_files_not_a_temporary_folder() -> None:
    at = _choose_files(
        "flickr8k-expert",
        [
            ("Flickr8k.token.txt", b"a.jpg#0\ta dog\n", "text/plain"),
            ("notes.txt", b"x", "text/plain"),
        ],
    )
    (error,) = [e.value for e in at.error]
    assert "ExpertAnnotations.txt" in error and "uploaded files" in error
    assert "tmp" not in error.replace("the uploaded files", ""), error


def test_the_token_file_alone_asks_for_the_annotations() -> None:
    """Before: "Flickr8k.token.txt, line 1: expected 5 fields", the one good file blamed."""
    at = _choose_files(
        "flickr8k-expert", [("Flickr8k.token.txt", b"a.jpg#0\ta dog\n", "text/plain")]
    )
    (error,) = [e.value for e in at.error]
    assert "ExpertAnnotations.txt not found among the uploaded files" in error, error
    assert "5 fields" not in error


def test_an_error_shows_a_file_name_as_typed() -> None:
    """A file name is quoted in the error: Markdown in it must not turn bold or into a link."""
    data = b"candidate,references\na dog,a dog runs\n"
    at = _choose_files("graded", [("**mine** [x] $y$.csv", data, "text/csv")])
    errors = [e.value for e in at.error]
    assert errors and all("\\*\\*mine\\*\\* \\[x\\] \\$y\\$.csv" in e for e in errors)
    assert not any("`score_columns`" in e for e in errors), errors


def test_column_names_show_as_typed_in_labels_and_warnings() -> None:
    """A column name is user text: as a widget label or in a warning it was Markdown (an
    image there is fetched by the browser from wherever it points)."""
    hostile = "![x](http://example.invalid/p.png)"
    body = "".join(f"a dog {i},a dog runs,3,{i}\n" for i in range(4))
    data = f"candidate,references,{hostile},seg_id\n{body}".encode()
    at = _choose_files("graded", [("mine.csv", data, "text/csv")], load=False)
    role = at.selectbox(key=f"role_{hostile}")
    assert role.label == "\\!\\[x\\]\\(http:\u2060//example.invalid/p.png\\)"
    at.button(key="load_judgments").click().run()
    assert not at.error, [e.value for e in at.error]
    at.switch_page("app_pages/correlations.py").run()
    assert not at.exception, at.exception
    (constant,) = [w.value for w in at.warning if "for every caption" in w.value]
    assert "\\!\\[x\\]\\(http" in constant and as_shown(constant).count(hostile) == 1


@pytest.mark.parametrize(
    ("fmt", "kind"), [(f, k) for f in ("graded", "pairwise") for k in ("csv", "tsv", "json")]
)
def test_each_generic_format_offers_a_template_that_loads(
    fmt: str, kind: str, tmp_path: Path
) -> None:
    from capeval_core.judgments import load_judgments
    from capeval_ui import meta_views

    at = _judgments()
    at.selectbox(key="judgment_format").select(fmt).run()
    assert not at.exception, at.exception
    labels = [b.label for b in at.get("download_button")]
    assert f"{kind.upper()} template" in labels
    assert any("Columns" in m.value for m in at.markdown)
    path = tmp_path / f"{fmt}-template.{kind}"
    path.write_text(meta_views.template(fmt, kind))
    jset = load_judgments(path, fmt)
    assert len(jset) == 2 and jset.kind == fmt


def test_a_reload_keeps_the_loaded_set() -> None:
    at = _app().run()
    at.switch_page("app_pages/judgments.py").run()
    at.button(key="load_demo").click().run()
    jset = at.session_state[state.JSET_KEY]
    short = at.query_params["set"]
    short = short[0] if isinstance(short, list) else short
    assert jset.content_digest.startswith(short)
    # a reload is a new session that keeps only the URL
    again = _app(set=short).run()
    again.switch_page("app_pages/judgments.py").run()
    assert not again.exception, again.exception
    assert again.session_state[state.JSET_KEY] is jset
    assert any(s.value == "Loaded set" for s in again.subheader)
    # a name the server does not know leaves the page as a fresh one
    fresh = _app(set="0" * 16).run()
    fresh.switch_page("app_pages/judgments.py").run()
    assert state.JSET_KEY not in fresh.session_state


# -- readable tables (what each cell shows) -------------------------------------------------------
def shown(df: Any) -> Any:
    """A dataframe element's cells as the browser shows them (the Styler's display values)."""
    import pyarrow as pa

    styler = df.proto.arrow_data.styler
    if not styler.display_values:
        return df.value.astype(str)
    return pa.ipc.open_stream(styler.display_values).read_pandas()


def _meta(page: str, **session: Any) -> AppTest:
    at = _app().run()
    for key, value in session.items():
        at.session_state[key] = value
    at.switch_page(page).run()
    assert not at.exception, at.exception
    return at


def _every_cell(at: AppTest) -> set[str]:
    return {str(v) for df in at.dataframe for v in shown(df).to_numpy().ravel()}


@pytest.mark.parametrize("page", META_PAGES)
def test_no_cell_reads_none_or_nan(page: str) -> None:
    at = _meta(page)
    cells = _every_cell(at)
    assert cells and not {"None", "nan", "NaN", "<NA>"} & cells
    # the browser draws a missing value as "None" unless the table names a placeholder
    assert all(df.proto.placeholder == views.EMPTY for df in at.dataframe)


def test_compare_tables_name_a_placeholder_for_missing_values() -> None:
    at = _compare()
    for tab in [t.label for t in at.tabs]:
        open_tab(at, tab)
        assert at.dataframe and all(df.proto.placeholder == views.EMPTY for df in at.dataframe)
    open_tab(at, METRICS["mean"].name)
    mean = next(df for df in at.dataframe if "nearest words to the mean" in df.value.columns)
    assert mean.value["cosine"].isna().iloc[0]  # the candidate's own row has no cosine


def test_p_values_are_never_zero_and_small_n_gets_none() -> None:
    from capeval_ui.views import format_pvalue

    # issue 42: one rule for every small value, the exact one beside it where it matters
    assert format_pvalue(0.0) == "< 1e-300" and format_pvalue(1.4e-24) == "< 0.001"
    at = _meta("app_pages/correlations.py")
    frame = next(df for df in at.dataframe if "95% CI low" in df.value.columns)
    cells = shown(frame)
    assert "0" not in set(cells["pvalue"]) and "0.0000" not in set(cells["pvalue"])
    # system level: 5 systems, too few for a p-value (issue 14: p = 1.4e-24 for n = 5)
    at.radio(key="correlation_level").set_value("system").run()
    assert not at.exception, at.exception
    frame = next(df for df in at.dataframe if "95% CI low" in df.value.columns)
    assert set(frame.value["n"]) == {5}
    assert frame.value["pvalue"].isna().all()
    assert set(frame.value["note"]) == {"no p-value: n < 10"}
    assert any("too few for a meaningful p-value" in w.value for w in at.warning)


def test_kendall_intervals_say_the_bootstrap_is_off() -> None:
    at = _meta("app_pages/correlations.py", ci_kendall=False)
    frame = next(df for df in at.dataframe if "95% CI low" in df.value.columns)
    values = frame.value
    kendall = values["method"].str.startswith("Kendall")
    assert values.loc[kendall, "95% CI low"].isna().all()
    assert set(values.loc[kendall, "note"]) == {"no interval: bootstrap for Kendall is off"}
    assert values.loc[~kendall, "95% CI low"].notna().all()
    assert set(values.loc[~kendall, "note"]) == {""}


def test_williams_cells_never_read_zero_and_hover_the_exact_p_value() -> None:
    from capeval_ui.meta_views import heatmap_text

    # issue 14: the heatmap showed 0.000; issue 42: "< 0.001" as everywhere else
    assert heatmap_text(0.0003, "p") == "< 0.001" and heatmap_text(0.0, "p") == "< 1e-300"
    at = _meta("app_pages/significance.py")
    frame = next(df for df in at.dataframe if df.value.shape == (4, 5))
    cells = shown(frame).set_index("metric")
    for value, text in zip(
        frame.value.set_index("metric").to_numpy().ravel(), cells.to_numpy().ravel(), strict=True
    ):
        if value == value:  # not NaN
            assert text == views.format_pvalue(value)
    heat = next(
        json.loads(e.proto.spec) for e in at.get("plotly_chart") if "Williams" in e.proto.spec
    )
    trace = heat["data"][0]
    for row, exact_row in zip(trace["text"], trace["customdata"], strict=True):
        for text, exact in zip(row, exact_row, strict=True):
            if exact == views.EMPTY:  # undefined (NaN)
                assert text == ""
                continue
            assert text in ("< 0.001", "< 1e-300") or float(text) >= 0.001, text
            assert text == heatmap_text(float(exact), "p")  # the hover's exact value


def test_williams_arithmetic_writes_counts_whole_and_each_value_once() -> None:
    """The one-pair table showed n as 1000.000000 and df as 997.000000 in a second column of
    the same values (its p with six decimals, not by the p-value rule): n and df read as
    whole numbers, and each value once, in "result" (the values stay in the data)."""
    at = _meta("app_pages/significance.py")
    detail = next(df for df in at.dataframe if "arithmetic" in df.value.columns)
    values = detail.value.set_index("quantity")["value"]
    cells = shown(detail)
    drawn = [c for c in cells.columns if c in detail.proto.column_order] or list(cells.columns)
    assert "value" not in drawn, drawn
    result = cells.set_index("quantity")["result"]
    assert result["n"] == f"{int(values['n']):,}" and result["df"] == f"{int(values['df']):,}"
    assert result["p"] == views.format_pvalue(values["p"])
    every = {str(v) for c in drawn for v in cells[c]}
    assert not {f"{values[q]:.6f}" for q in ("n", "df")} & every, every


def test_williams_p_columns_hold_the_widest_p_value() -> None:
    """The p matrix's columns were 84 px, for "1.23e-45"; the app writes an underflowed p
    "< 1e-300", which needs more (the grid cuts a cell's text with "…")."""
    from capeval_ui.formats import UNDERFLOW_TEXT
    from capeval_ui.views import cell_width

    at = _meta("app_pages/significance.py")
    matrix = next(df for df in at.dataframe if df.value.shape == (4, 5))
    config = json.loads(matrix.proto.columns)
    for column in matrix.value.columns.drop("metric"):
        assert config[column]["width"] >= cell_width([column, UNDERFLOW_TEXT]), column


def test_meta_charts_hover_in_plain_decimals() -> None:
    at = _meta("app_pages/correlations.py")
    for element in at.get("plotly_chart"):
        layout = json.loads(element.proto.spec)["layout"]
        assert layout["yaxis"].get("hoverformat") == ".4f", layout.get("title")
        assert layout["yaxis"].get("exponentformat") == "e"


def test_correlations_show_a_scatter_with_captions_and_violins() -> None:
    at = _meta("app_pages/correlations.py")
    specs = [json.loads(e.proto.spec) for e in at.get("plotly_chart")]
    scatter = next(s["data"][0] for s in specs if s["data"][0]["type"] == "scattergl")
    jset = cached.demo_judgments("graded", 200)
    assert len(scatter["hovertext"]) == len(jset)
    assert scatter["hovertext"][0] == jset.candidates[0]
    assert any(s["data"][0]["type"] == "violin" for s in specs)
    assert any(s["data"][0]["type"] == "box" for s in specs)


def test_robustness_uses_the_pairwise_set_loaded_on_judgments() -> None:
    pairs = cached.demo_judgments("pairwise", 400)
    at = _meta("app_pages/robustness.py", **{state.JSET_KEY: pairs})
    assert at.radio(key="distractor_source").value.startswith("The pairwise set loaded")
    frame = next(df.value for df in at.dataframe if "mean" in df.value.columns)
    assert set(pairs.categories()) <= set(frame.columns)
    assert str(pairs) in [t.value for t in at.text]
    # another source chosen: the page says a loaded set is there
    at.radio(key="distractor_source").set_value(
        "Generated from COCO val2014 captions (synthetic)"
    ).run()
    assert any("A pairwise set is loaded" in i.value for i in at.info)


def test_pairwise_draws_that_collapse_are_explained() -> None:
    at = _meta("app_pages/pairwise.py")  # the demo pairs have 3 references; 5 are sampled
    text = "\n".join(t.value for t in at.text)
    assert "5 draws were asked" in text and "the 5 draws are one" in text


# -- plain words -----------------------------------------------------------------------------------
def test_each_panel_says_in_one_sentence_what_it_shows_and_keeps_the_terms() -> None:
    at = _compare()
    for cls in METRICS.values():
        tab = open_tab(at, cls.name)
        assert views.INTROS[cls.key] in [c.value for c in tab.caption], cls.key
        assert any(e.label == "Terms used in this panel" for e in tab.expander), cls.key
    meteor = open_tab(at, METRICS["meteor"].name)
    assert any("the jar's 23 statistics" in e.label for e in meteor.expander)


def test_ptb_brackets_are_explained_where_they_show() -> None:
    at = _compare()
    at.text_area(key="candidate").input("a man (a surfer) rides a wave").run()
    assert not at.exception, at.exception
    notes = [c.value for c in at.caption if c.value.startswith("Brackets appear")]
    assert notes and "-lrb- = (" in notes[0] and "-rrb- = )" in notes[0]


def test_lab_synonyms_keep_the_part_of_speech() -> None:
    """Issue 14: grass -> "snitch" (the verb "to grass on someone") in "a dog on the grass"."""
    from capeval_core.perturb import perturb

    caption = "a dog plays on the grass"
    refs = "\n".join(DEFAULT.references)
    for seed in range(3):
        at = _lab(
            lab_perturbations=["synonym"],
            lab_candidate=caption,
            lab_references=refs,
            lab_seed=seed,
            lab_n=3,
        )
        expected = perturb(caption, "synonym", seed=seed, n=3)
        assert f"Perturbed: {expected.perturbed}" in [t.value for t in at.text]
        changes = next(df.value for df in at.dataframe if "where" in df.value.columns)
        new = dict(zip(changes["word"], changes["now"], strict=True))
        assert new.get("grass") not in ("snitch", "pot", "dope", "shop")
        assert new.get("plays") not in ("toys", "dallies")


def test_a_link_with_a_candidate_only_keeps_the_references() -> None:
    at = _compare(candidate="two dogs on a beach")
    assert at.text_area(key="candidate").value == "two dogs on a beach"
    assert at.text_area(key="references").value == "\n".join(DEFAULT.references)
    assert at.metric


def test_token_cells_are_as_wide_as_their_words() -> None:
    """Issue 14: token cells cut words ("puppie", "undergroun")."""
    at = _compare()
    at.text_area(key="candidate").input("two puppies play underground").run()
    assert not at.exception, at.exception
    strip = next(
        df
        for df in at.dataframe
        if list(df.value.index) == ["candidate"] and "underground" in df.value.to_numpy()
    )
    widths = json.loads(strip.proto.columns)
    for column in strip.value.columns:
        word = str(strip.value[column].iloc[0])
        assert widths[column]["width"] >= views.cell_width([word]), (column, word)


def test_compare_bar_charts_hover_in_plain_decimals() -> None:
    at = _compare()
    bars = [json.loads(e.proto.spec) for e in at.get("plotly_chart")]
    bars = [s for s in bars if s["data"] and s["data"][0].get("type") == "bar"]
    assert bars
    for spec in bars:
        assert spec["layout"]["yaxis"]["hoverformat"] == ".4f"


def test_flickr8k_expert_intervals_resample_captions_and_say_so() -> None:
    """The published preset's three expert rows of a caption were resampled as independent
    items (intervals about a quarter too narrow); the page says what it resampled."""
    names = ("a dog runs on grass", "a cat sits on a mat", "a man rides", "two birds fly")
    token = "".join(
        f"{i}.jpg#{k}\t{c} {k}\n" for i, c in zip("abcd", names, strict=True) for k in range(5)
    )
    grades = [(1, 1, 2), (1, 2, 1), (3, 4, 3), (2, 2, 1), (4, 3, 4), (1, 1, 1)]
    pairs = [("a", "b#1"), ("b", "c#2"), ("c", "c#1"), ("d", "a#3"), ("b", "a#2"), ("a", "d#0")]
    expert = "".join(
        f"{i}.jpg\t{c[0]}.jpg#{c[2]}\t{e1}\t{e2}\t{e3}\n"
        for (i, c), (e1, e2, e3) in zip(pairs, grades, strict=True)
    )
    at = _choose_files(
        "flickr8k-expert",
        [
            ("Flickr8k.token.txt", token.encode(), "text/plain"),
            ("ExpertAnnotations.txt", expert.encode(), "text/plain"),
        ],
    )
    assert not at.error, [e.value for e in at.error]
    jset = at.session_state[state.JSET_KEY]
    assert jset.resampling_groups() is not None
    at.switch_page("app_pages/correlations.py").run()
    assert not at.exception, at.exception
    assert any(
        "percentile bootstrap over captions (each caption's rows drawn together)" in c.value
        and "The p-values count each row as an item" in c.value
        for c in at.caption
    ), [c.value for c in at.caption]
    # a Williams test cannot draw captions: the page says its p-values are too small
    at.switch_page("app_pages/significance.py").run()
    assert not at.exception, at.exception
    assert any("its p-values are too small" in w.value for w in at.warning)
