"""AppTests of issue 32, as a metric designer uses the app: their own metric beside the
built-ins (a ``metric:`` column, a role per column, a joined scores file), THumB 1.0 loaded as
distributed, a human-column switch that does not rescore, the system-level heatmap, and
choices that survive a reload."""

from __future__ import annotations

import base64
import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from capeval_ui import cached, meta_views, state
from tests.app.apptest import ROOT, TIMEOUT

THUMB = Path(__file__).resolve().parent.parent / "golden" / "thumb"
ROWS = [
    ("a dog runs on the grass", "a dog running on grass|||a brown dog on grass", 5, 0.9),
    ("a dog on grass", "a dog running on grass|||a brown dog on grass", 4, 0.7),
    ("a cat sits on a mat", "a cat on a mat|||a kitten on a rug", 5, 0.8),
    ("a cat", "a cat on a mat|||a kitten on a rug", 3, 0.4),
    ("a red bus", "a man riding a horse|||a person on a horse", 1, 0.1),
    ("a man on a horse", "a man riding a horse|||a person on a horse", 5, 0.95),
    ("two people", "two women in a park|||two friends in a park", 2, 0.3),
    ("two women in a park", "two women in a park|||two friends", 4, 0.75),
]
CSV = "id,seg_id,candidate,references,quality,metric:mine,theirs\n" + "".join(
    f"r{i},{100 + i},{c},{r},{s},{m},{1 - m}\n" for i, (c, r, s, m) in enumerate(ROWS)
)


def _app(**state: Any) -> AppTest:
    state.setdefault("_meta_metrics_kept", ["meteor"])
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
    for key, value in state.items():
        at.session_state[key] = value
    return at


def _judgments(**state: Any) -> AppTest:
    at = _app(**state).run()
    at.switch_page("app_pages/judgments.py").run()
    assert not at.exception, at.exception
    return at


def _upload(at: AppTest, fmt: str, files: list[tuple[str, bytes]]) -> AppTest:
    at.radio(key="judgment_source").set_value("Upload a file").run()
    at.selectbox(key="judgment_format").select(fmt).run()
    at.file_uploader(key=f"judgment_files-{fmt}").set_value(
        [(name, data, "application/octet-stream") for name, data in files]
    )
    at.run()
    assert not at.exception, at.exception
    return at


def _frame_with(at: AppTest, column: str):
    return next(df.value for df in at.dataframe if column in df.value.columns)


def _figures(at: AppTest) -> list[dict[str, Any]]:
    return [json.loads(c.proto.spec) for c in at.get("plotly_chart")]


def test_metric_column_and_role_correlated_and_williams_tested_against_meteor() -> None:
    at = _upload(_judgments(), "graded", [("mine.csv", CSV.encode())])
    # ids are never offered as scores; each other numeric column has a role
    assert "role_seg_id" not in [s.key for s in at.selectbox]
    assert at.selectbox(key="role_quality").value == "human score"
    assert at.selectbox(key="role_metric:mine").value == "metric"
    at.selectbox(key="role_theirs").select("metric").run()
    at.button(key="load_judgments").click().run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    jset = at.session_state[state.JSET_KEY]
    assert jset.score_names == ("quality",) and jset.external_names == ("mine", "theirs")
    assert at.multiselect(key="meta_metrics").value == ["meteor", "mine", "theirs"]
    scores = _frame_with(at, "signature")
    # signed with the file as uploaded (the role made a column-mapped copy of it)
    sha = hashlib.sha256(CSV.encode()).hexdigest()[:12]
    assert scores.set_index("key").loc["mine", "signature"] == f"external:mine|sha256:{sha}"

    at.switch_page("app_pages/correlations.py").run()
    assert not at.exception, at.exception
    table = _frame_with(at, "95% CI low")
    assert {"meteor", "mine", "theirs"} <= set(table["metric"])
    row = table[(table["metric"] == "mine") & (table["method"] == "Pearson r")].iloc[0]
    human = np.array([r[2] for r in ROWS], dtype=float)
    assert row["statistic"] == pytest.approx(np.corrcoef([r[3] for r in ROWS], human)[0, 1])
    assert np.isfinite(row["95% CI low"])

    at.switch_page("app_pages/significance.py").run()
    assert not at.exception, at.exception
    matrix = next(df.value for df in at.dataframe if "mine (external)" in df.value.columns)
    assert set(matrix["metric"]) == {"METEOR", "mine (external)", "theirs (external)"}
    # mine against METEOR, tested in one direction or the other (one-sided test)
    mine = matrix.set_index("metric")
    assert np.isfinite(mine.loc["mine (external)", "METEOR"]) or np.isfinite(
        mine.loc["METEOR", "mine (external)"]
    )


def test_scores_file_joined_by_id_and_unmatched_ids_leave_the_set_unchanged() -> None:
    plain = "\n".join(line.rsplit(",", 2)[0] for line in CSV.splitlines()) + "\n"
    at = _upload(_judgments(), "graded", [("plain.csv", plain.encode())])
    at.button(key="load_judgments").click().run()
    before = at.session_state[state.JSET_KEY]
    assert before.external_names == ()
    bad = "id,clip\n" + "".join(f"r{i},{r[3]}\n" for i, r in enumerate(ROWS[:5]))
    at.file_uploader(key="metric_scores_file").set_value(("clip.csv", bad.encode(), "text/csv"))
    at.run()
    at.button(key="join_scores").click().run()
    assert not at.exception, at.exception
    errors = [e.value for e in at.error]
    assert any("the loaded set is unchanged" in e and "'r5'" in e for e in errors), errors
    assert at.session_state[state.JSET_KEY] is before
    good = "id,clip\n" + "".join(f"r{i},{r[3]}\n" for i, r in enumerate(ROWS))
    at.file_uploader(key="metric_scores_file").set_value(("clip.csv", good.encode(), "text/csv"))
    at.run()
    at.button(key="join_scores").click().run()
    assert not at.exception, at.exception
    joined = at.session_state[state.JSET_KEY]
    assert joined.external_names == ("clip",) and joined.items_digest == before.items_digest
    assert "clip" in at.multiselect(key="meta_metrics").value
    # corrected scores joined again: a bad row is said as such (it was a name clash), then
    # the good file replaces the scores joined before
    typo = good.replace(f"r3,{ROWS[3][3]}", "r3,oops")
    at.file_uploader(key="metric_scores_file").set_value(("clip.csv", typo.encode(), "text/csv"))
    at.run()
    at.button(key="join_scores").click().run()
    (said,) = [e.value for e in at.error if "clip.csv" in e.value]
    assert "line 5, column 'clip'" in said and "oops" in said, said
    assert at.session_state[state.JSET_KEY] is joined
    fixed = "id,clip\n" + "".join(f"r{i},{1 - r[3]}\n" for i, r in enumerate(ROWS))
    at.file_uploader(key="metric_scores_file").set_value(("clip.csv", fixed.encode(), "text/csv"))
    at.run()
    at.button(key="join_scores").click().run()
    assert not at.error, [e.value for e in at.error]
    again = at.session_state[state.JSET_KEY]
    assert again.external_names == ("clip",)
    assert again.external[0].values.tolist() == [1 - r[3] for r in ROWS]
    assert any("replaced the scores joined before of clip" in n for n in again.notes)


def test_thumb_loaded_as_distributed_with_coco_references(tmp_path: Path) -> None:
    shutil.copy(THUMB / "mscoco_THumB-1.0.jsonl", tmp_path)
    files = [(p.name, p.read_bytes()) for p in tmp_path.iterdir()]
    at = _upload(_judgments(_meta_metrics_kept=["bleu_4"]), "thumb", files)
    assert at.selectbox(key="judgment_preset").value == "kasai2022"
    at.button(key="load_judgments").click().run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    jset = at.session_state[state.JSET_KEY]
    assert (jset.format, jset.preset, len(jset)) == ("thumb", "kasai2022", 40)
    assert "COCO val2014" in jset.source[1]
    at.switch_page("app_pages/correlations.py").run()
    assert not at.exception, at.exception
    assert at.selectbox(key="human_column").options[0] == "human_score"
    assert "seg_id" not in at.selectbox(key="human_column").options
    assert "set_id" not in at.selectbox(key="human_column").options


def test_failed_first_load_claims_no_previous_set() -> None:
    at = _upload(_judgments(), "graded", [("bad.csv", b"id,candidate,references,q\n1,a,b,x\n")])
    at.button(key="load_judgments").click().run()
    errors = [e.value for e in at.error]
    assert errors and all("previous set" not in e for e in errors), errors


def test_human_column_and_level_switch_do_not_rescore(monkeypatch) -> None:
    from capeval_core.judgments import scoring

    calls = []
    real = scoring.score_judgments

    def counted(*args, **kwargs):
        calls.append(args[1])
        return real(*args, **kwargs)

    monkeypatch.setattr(scoring, "score_judgments", counted)
    at = _app(_meta_metrics_kept=["bleu_4", "rouge_l"]).run()
    at.switch_page("app_pages/correlations.py").run()
    assert not at.exception, at.exception
    first = len(calls)
    options = at.selectbox(key="human_column").options
    assert len(options) > 1
    at.selectbox(key="human_column").select(options[1]).run()
    at.radio(key="correlation_level").set_value("system").run()
    at.selectbox(key="human_column").select(options[0]).run()
    assert not at.exception, at.exception
    assert len(calls) == first  # no change here needs a metric score again


def test_system_level_heatmap_uses_system_means() -> None:
    at = _app(_meta_metrics_kept=["bleu_4", "rouge_l", "cider_d"]).run()
    at.switch_page("app_pages/correlations.py").run()
    at.radio(key="correlation_level").set_value("system").run()
    assert not at.exception, at.exception
    jset = meta_views.set_for("graded")[0]
    n_systems = len(set(jset.systems()))
    heat = next(
        f for f in _figures(at) if "system means" in f["layout"].get("title", {}).get("text", "")
    )
    z = heat["data"][0]["z"]
    if isinstance(z, dict):  # plotly's typed array: base64 bytes, dtype, shape
        z = np.frombuffer(base64.b64decode(z["bdata"]), dtype=z["dtype"]).reshape(
            [int(n) for n in str(z["shape"]).split(",")]
        )
    z = np.asarray(z, dtype=float)
    assert z.shape == (3, 3)
    # Spearman over n systems takes values 1 - 6 d / (n^3 - n) only (no ties in the means)
    step = 6 / (n_systems**3 - n_systems)
    assert np.allclose(np.round((1 - z) / step), (1 - z) / step)


def test_a_reload_keeps_metrics_human_column_and_level() -> None:
    at = _app(_meta_metrics_kept=["bleu_4", "rouge_l"]).run()
    at.switch_page("app_pages/correlations.py").run()
    human = at.selectbox(key="human_column").options[1]
    at.selectbox(key="human_column").select(human).run()
    at.radio(key="correlation_level").set_value("system").run()
    params = dict(at.query_params)
    assert params["human"] in (human, [human]) and params["level"] in ("system", ["system"])
    assert params["metric"] == ["bleu_4", "rouge_l"]
    # a reload: a new session, the same URL
    again = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
    for key, values in params.items():
        again.query_params[key] = values
    again.run()
    again.switch_page("app_pages/correlations.py").run()
    assert not again.exception, again.exception
    assert again.multiselect(key="meta_metrics").value == ["bleu_4", "rouge_l"]
    assert again.selectbox(key="human_column").value == human
    assert again.radio(key="correlation_level").value == "system"


def test_box_bins_in_numeric_order_and_violins_within_bounds() -> None:
    rng = np.random.default_rng(0)
    human = np.r_[np.linspace(1.9, 3.9, 8), [4.0] * 8, [4.5] * 8, [5.0] * 8]
    words = ["a dog", "a dog on grass", "a cat", "two people", "a red bus", "a man"]
    lines = ["id,candidate,references,quality"] + [
        f"r{i},{words[i % 6]} {i},{words[(i + int(rng.integers(3))) % 6]}|||a photo,{h}"
        for i, h in enumerate(human)
    ]
    at = _upload(_judgments(), "graded", [("c.csv", ("\n".join(lines) + "\n").encode())])
    at.button(key="load_judgments").click().run()
    at.switch_page("app_pages/correlations.py").run()
    at.selectbox(key="distribution_metric").select("meteor").run()
    assert not at.exception, at.exception
    figures = _figures(at)
    box = next(f for f in figures if f["layout"].get("title", {}).get("text") == "box plots")
    names = [trace["name"] for trace in box["data"]]
    assert names == ["1.9–3.67", "3.67–4", "4–4.5", "4.5–5"]  # not text order ("4.5–5" < "4–4.5")
    violin = next(f for f in figures if f["layout"].get("title", {}).get("text") == "violin plots")
    for trace in violin["data"]:
        assert trace["spanmode"] == "manual" and 0 <= trace["span"][0] <= trace["span"][1] <= 1


def test_system_level_scatter_has_one_point_per_system() -> None:
    at = _app(_meta_metrics_kept=["bleu_4"]).run()
    at.switch_page("app_pages/correlations.py").run()
    at.radio(key="correlation_level").set_value("system").run()
    assert not at.exception, at.exception
    jset = meta_views.set_for("graded")[0]
    scatter = next(f for f in _figures(at) if f["data"][0]["type"] == "scattergl")
    assert sorted(scatter["data"][0]["hovertext"]) == sorted(set(jset.systems()))
    assert not [f for f in _figures(at) if f["data"][0]["type"] == "violin"]


def test_robustness_offers_an_external_metric_only_for_the_set_it_scores() -> None:
    from capeval_core.judgments.external import add_metric_scores

    pairs = cached.demo_judgments("pairwise", 400)
    prefs = pairs.preferences()
    # a metric that always scores the correct caption (a, or b where humans preferred b) higher
    a = (prefs >= 0).astype(float)
    pairs = add_metric_scores(pairs, "mine", a, 1 - a)
    at = _app(**{"_meta_metrics_kept": ["rouge_l"], state.JSET_KEY: pairs}).run()
    at.switch_page("app_pages/robustness.py").run()
    assert not at.exception, at.exception
    assert "mine (external)" in at.multiselect(key=meta_views.METRICS_KEY).options
    frame = _frame_with(at, "mean")
    row = frame[frame["metric"] == "mine (external)"]
    assert len(row) == 1 and float(row["mean"].iloc[0]) == 100.0
    assert not any("Not offered here" in i.value for i in at.info)
    # the generated distractors: the external metric cannot score them, and the page says so
    at.radio(key="distractor_source").set_value(
        "Generated from COCO val2014 captions (synthetic)"
    ).run()
    assert not at.exception, at.exception
    assert "mine (external)" not in set(_frame_with(at, "mean")["metric"])
    notes = [i.value for i in at.info if "Not offered here" in i.value]
    assert len(notes) == 1 and "mine" in notes[0] and "\n" not in notes[0]


def test_scores_file_help_names_the_pairwise_columns() -> None:
    pairs = cached.demo_judgments("pairwise", 40)
    at = _judgments(**{state.JSET_KEY: pairs})
    captions = [c.value for c in at.caption if "id column(s)" in c.value]
    assert captions and "<name>:a and <name>:b" in captions[0], captions


def test_an_interval_from_fewer_resamples_says_so_in_its_note() -> None:
    """Yes/no human scores on eight captions: resamples that draw one answer only have no
    correlation, and the table's note says how many the interval stands without."""
    quality = [1, 0, 1, 0, 0, 1, 0, 0]
    csv = "candidate,references,quality,metric:mine\n" + "".join(
        f"{c},{r},{q},{m}\n" for (c, r, _, m), q in zip(ROWS, quality, strict=True)
    )
    at = _upload(_judgments(), "graded", [("yes_no.csv", csv.encode())])
    at.button(key="load_judgments").click().run()
    at.switch_page("app_pages/correlations.py").run()
    assert not at.exception, at.exception
    table = _frame_with(at, "95% CI low")
    row = table[(table["metric"] == "mine") & (table["method"] == "Pearson r")].iloc[0]
    left_out = int(row["ci_left_out"])
    assert left_out > 0 and np.isfinite(row["95% CI low"])
    assert f"{1000 - left_out:,} of 1,000 resamples: {left_out:,} had one side's" in row["note"]


def test_a_page_s_link_names_the_metrics_it_shows_not_those_kept_for_others() -> None:
    """A joined metric is kept across pages, but the Pairwise page's demo set cannot offer
    it: its URL named it all the same, and a reload warned "values not used: metric=mine"
    and dropped it from the metrics kept."""
    at = _upload(_judgments(), "graded", [("mine.csv", CSV.encode())])
    at.button(key="load_judgments").click().run()
    assert "mine" in at.multiselect(key="meta_metrics").value
    at.switch_page("app_pages/pairwise.py").run()
    assert not at.exception, at.exception
    shown = at.multiselect(key="meta_metrics").value
    assert "mine" not in shown
    linked = at.query_params["metric"]
    assert ([linked] if isinstance(linked, str) else list(linked)) == list(shown)
    # the link opened in a new session: no warning about it
    again = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
    for key in at.query_params:
        again.query_params[key] = at.query_params[key]
    again.run()
    again.switch_page("app_pages/pairwise.py").run()
    assert not again.exception, again.exception
    assert not [w.value for w in again.warning if "not used here" in w.value]
    assert again.multiselect(key="meta_metrics").value == shown
    # back on a page that offers it, the session still has it
    at.switch_page("app_pages/correlations.py").run()
    assert "mine" in at.multiselect(key="meta_metrics").value


def test_two_files_for_a_one_file_format_are_said_before_load() -> None:
    """A second file dropped on the graded uploader joined the first; Load then said "the
    uploaded files: this is a folder, not a file" and named neither."""
    from capeval_core.errors import JudgmentFormatError
    from capeval_core.judgments.uploads import load_uploaded

    files = [("a.csv", CSV.encode()), ("b.csv", CSV.encode())]
    at = _upload(_judgments(), "graded", files)
    (said,) = [w.value for w in at.warning if "reads one file" in w.value]
    assert "The graded format reads one file, and 2 are uploaded (a.csv, b.csv)" in said
    assert at.button(key="load_judgments").disabled
    with pytest.raises(JudgmentFormatError, match=r"^a\.csv, b\.csv: the graded format reads"):
        load_uploaded(files, "graded")


def test_a_new_upload_drops_the_last_loads_error() -> None:
    """After a failed Load, choosing another file showed its own error beside the last
    one's, two red lines naming two files."""
    bad = CSV.replace(",5,0.9,", ",five,0.9,", 1)
    at = _upload(_judgments(), "graded", [("first.csv", bad.encode())])
    at.button(key="load_judgments").click().run()
    assert [e.value for e in at.error if "first.csv" in e.value]
    at.file_uploader(key="judgment_files-graded").set_value(
        [("second.csv", b'candidate,references\n"a dog,x\n', "application/octet-stream")]
    )
    at.run()
    assert not at.exception, at.exception
    assert not [e.value for e in at.error if "first.csv" in e.value]


def test_a_scores_file_keeps_the_id_name_the_mapping_renamed() -> None:
    """A set loaded with the mapping ``seg`` -> ``id``: the help named ``id`` and a scores
    file keyed by the user's own ``seg`` was refused ("missing id column(s) ['id']"). The
    help names ``seg`` and the file joins."""
    plain = "\n".join(line.rsplit(",", 2)[0] for line in CSV.splitlines()) + "\n"
    own = plain.replace("id,seg_id,", "seg,seg_id,", 1)
    at = _upload(_judgments(), "graded", [("own.csv", own.encode())])
    at.selectbox(key="map_id").select("seg").run()
    at.button(key="load_judgments").click().run()
    assert not at.error, [e.value for e in at.error]
    assert any("id column(s) seg and" in c.value for c in at.caption)
    scores = "seg,clip\n" + "".join(f"r{i},{r[3]}\n" for i, r in enumerate(ROWS))
    at.file_uploader(key="metric_scores_file").set_value(("clip.csv", scores.encode(), "text/csv"))
    at.run()
    at.button(key="join_scores").click().run()
    assert not at.error, [e.value for e in at.error]
    assert at.session_state[state.JSET_KEY].external_names == ("clip",)
