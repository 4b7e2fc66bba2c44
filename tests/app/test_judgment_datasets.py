"""AppTests of the 50S datasets as distributed: ABSTRACT-50S and PASCAL-50S uploaded through
the Judgments page (their triplet consensus files in the real layout), their presets' lines,
and the warning wherever a set without labels is used (the Pairwise page draws no chart)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
from streamlit.testing.v1 import AppTest

from capeval_core.judgments.protocols import ABSTRACT50S, PASCAL50S
from capeval_ui import state
from tests.app.apptest import ROOT, TIMEOUT, as_shown
from tests.core.consensus_files import (
    PASCAL_ROWS,
    write_abstract,
    write_pascal_pairs,
    write_pascal_refs,
    write_triplets,
)


def _judgments(**state: Any) -> AppTest:
    # one fast metric keeps these runs short (the picker restores its choice from this key)
    state.setdefault("_meta_metrics_kept", ["bleu_4"])
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
    for key, value in state.items():
        at.session_state[key] = value
    at.run()
    at.switch_page("app_pages/judgments.py").run()
    assert not at.exception, at.exception
    return at


def _upload(at: AppTest, fmt: str, folder: Path, preset: str | None = None) -> AppTest:
    at.radio(key="judgment_source").set_value("Upload a file").run()
    at.selectbox(key="judgment_format").select(fmt).run()
    if preset is not None:
        at.selectbox(key="judgment_preset").select(preset).run()
    files = [(p.name, p.read_bytes(), "application/octet-stream") for p in sorted(folder.iterdir())]
    at.file_uploader(key=f"judgment_files-{fmt}").set_value(files)
    at.run()
    at.button(key="load_judgments").click().run()
    assert not at.exception, at.exception
    return at


def _texts(at: AppTest) -> str:
    return "\n".join(t.value for t in at.text)


def test_abstract50s_upload_loads_labelled_pairs_and_scores_them(tmp_path: Path) -> None:
    write_abstract(tmp_path, n_pairs=4)
    at = _upload(_judgments(), "abstract50s", tmp_path)
    assert not at.error, [e.value for e in at.error]
    jset = at.session_state[state.JSET_KEY]
    assert (jset.format, jset.preset, len(jset)) == ("abstract50s", "clipscore-table4", 4)
    assert np.isfinite(jset.preferences()).all()
    # the preset's line, the validation report and the triplet notes are on the page
    texts = _texts(at)
    assert ABSTRACT50S["clipscore-table4"].description in texts
    assert "Pairs: 4; labelled: 4" in texts
    assert "labels: majority of the triplets of consensus_abstract.mat" in texts
    assert not at.warning, [w.value for w in at.warning]
    at.switch_page("app_pages/pairwise.py").run()
    assert not at.exception, at.exception
    assert not at.warning, [w.value for w in at.warning]
    table = next(df.value for df in at.dataframe if "overall" in df.value.columns)
    assert list(table["metric"]) == ["BLEU-4"]
    # the knobs start from the preset
    assert at.number_input(key="n_references").value == 5
    assert at.selectbox(key="human_tie").value == "random"


def test_pascal50s_upload_with_the_consensus_file(tmp_path: Path) -> None:
    write_pascal_pairs(tmp_path, PASCAL_ROWS)
    write_pascal_refs(tmp_path)
    write_triplets(
        tmp_path / "consensus_pascal.mat",
        [
            ("a man and a woman", "a man", "a woman", -1),
            ("a dog and a cat", "a cat", "a dog", 1),
            ("a tree by a road", "a tree", "a road", 1),
        ],
    )
    at = _upload(_judgments(), "pascal50s", tmp_path, "spice-paper")
    assert not at.error, [e.value for e in at.error]
    jset = at.session_state[state.JSET_KEY]
    assert jset.preset == "spice-paper" and jset.preferences().tolist() == [-1, -1, 1]
    assert PASCAL50S["spice-paper"].description in _texts(at)
    at.switch_page("app_pages/pairwise.py").run()
    assert not at.exception, at.exception
    assert at.selectbox(key="metric_tie").value == "correct"  # the SPICE paper's rule
    table = next(df.value for df in at.dataframe if "overall" in df.value.columns)
    assert {"HC", "HM", "MM"} <= set(table.columns)


def test_the_table7_preset_shows_its_note(tmp_path: Path) -> None:
    at = _judgments()
    at.radio(key="judgment_source").set_value("Upload a file").run()
    at.selectbox(key="judgment_format").select("pascal50s").run()
    at.selectbox(key="judgment_preset").select("clipscore-table7").run()
    assert not at.exception, at.exception
    assert PASCAL50S["clipscore-table7"].description in _texts(at)
    assert PASCAL50S["clipscore-table7"].note in _texts(at)


def test_a_set_without_labels_warns_and_the_pairwise_page_draws_nothing(tmp_path: Path) -> None:
    write_abstract(tmp_path, n_pairs=4)
    (tmp_path / "consensus_abstract.mat").unlink()
    at = _upload(_judgments(), "abstract50s", tmp_path)
    assert not at.error, [e.value for e in at.error]
    warnings = [as_shown(w.value) for w in at.warning]
    assert any("None of the 4 pairs has a human label" in w for w in warnings), warnings
    assert any("consensus_abstract.mat not found" in w for w in warnings), warnings
    at.switch_page("app_pages/pairwise.py").run()
    assert not at.exception, at.exception
    warnings = [as_shown(w.value) for w in at.warning]
    assert any("None of the 4 pairs has a human label" in w for w in warnings), warnings
    assert not [df for df in at.dataframe if "overall" in df.value.columns]
    figures = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    assert not figures  # no empty chart


def test_a_partly_labelled_set_warns_on_the_pairwise_page(tmp_path: Path) -> None:
    rows = [("scene 0 ref 0", "b 0", "c 0", 1), ("scene 1 ref 0", "b 2", "c 2", -1)]
    write_abstract(tmp_path, n_pairs=4, rows=rows)
    at = _upload(_judgments(), "abstract50s", tmp_path)
    at.switch_page("app_pages/pairwise.py").run()
    assert not at.exception, at.exception
    warnings = [as_shown(w.value) for w in at.warning]
    assert any("2 of 4 pairs (50.0%) have no human label" in w for w in warnings), warnings
    assert [df for df in at.dataframe if "overall" in df.value.columns]  # drawn from 2 pairs
    assert at.get("plotly_chart")  # the chart the unlabelled set does not get


def test_the_chosen_preset_survives_a_visit_to_another_page() -> None:
    """The format was kept across pages, its preset went back to the format's first."""
    at = _judgments()
    at.radio(key="judgment_source").set_value("Upload a file").run()
    at.selectbox(key="judgment_format").select("pascal50s").run()
    at.selectbox(key="judgment_preset").select("clipscore-table7").run()
    at.switch_page("app_pages/home.py").run()
    at.switch_page("app_pages/judgments.py").run()
    assert not at.exception, at.exception
    assert at.selectbox(key="judgment_preset").value == "clipscore-table7"
    at.selectbox(key="judgment_format").select("graded").run()  # a preset it does not have
    assert not at.exception, at.exception
    assert at.selectbox(key="judgment_preset").value != "clipscore-table7"


def test_a_refused_upload_is_said_once(tmp_path: Path) -> None:
    """The column-mapping preview and the Load both said it: two errors for one file."""
    (tmp_path / "g.csv").write_text("candidate,references,score\n")  # a header, no rows
    at = _upload(_judgments(), "graded", tmp_path)
    errors = [e.value for e in at.error]
    assert len(errors) == 1 and errors[0].startswith("The file was not loaded. g.csv")


def test_a_pair_without_a_vote_is_dropped_and_said_on_the_pairwise_page(tmp_path: Path) -> None:
    """A pairwise upload with an empty vote (pandas' NaN) was refused; now the pair is
    dropped and the set's summary says so, as a graded row without a score is."""
    (tmp_path / "p.csv").write_text(
        "id,candidate_a,candidate_b,references,votes_a,votes_b\n"
        "p1,a dog runs,a cat,a dog running,3,1\n"
        "p2,a cat on a mat,a bus,a cat on a mat,4,0\n"
        "p3,a bus,a man on a horse,a man riding a horse,,5\n"
        "p4,a kitten,a cat,a cat on a mat,0,2\n"
    )
    at = _upload(_judgments(), "pairwise", tmp_path)
    assert not at.error, [e.value for e in at.error]
    at.switch_page("app_pages/pairwise.py").run()
    assert not at.exception, at.exception
    assert (
        "pairwise (p.csv): 4 read, 1 dropped (missing human vote in column 'votes_a' (line 4): 1),"
        " 3 scored"
    ) in _texts(at)


def test_robustness_counts_pascal50s_pairs_per_category_not_distractor_type(
    tmp_path: Path,
) -> None:
    """PASCAL-50S's HC/HI/HM/MM were said "Pairs per distractor type" on the Robustness page:
    they are categories, and the generated set's groups stay distractor types."""
    write_pascal_pairs(tmp_path, PASCAL_ROWS)
    write_pascal_refs(tmp_path)
    at = _upload(_judgments(), "pascal50s", tmp_path, "clipscore-table7")
    at.switch_page("app_pages/robustness.py").run()
    assert not at.exception, at.exception
    said = [t.value for t in at.text if t.value.startswith("Pairs per ")]
    assert len(said) == 1 and said[0].startswith("Pairs per category: H"), said
    at.radio(key="distractor_source").set_value(
        "Generated from COCO val2014 captions (synthetic)"
    ).run()
    said = [t.value for t in at.text if t.value.startswith("Pairs per ")]
    assert len(said) == 1 and said[0].startswith("Pairs per distractor type: "), said
