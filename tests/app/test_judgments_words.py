"""Judgment messages in each surface's words: a library message that names a keyword
argument reads, on the Judgments page, as the page's own control (``PAGE_WORDS``) and, on
the command line, as its flag (``CLI_WORDS``); neither shows the keyword."""

from __future__ import annotations

import pytest

from capeval_core.errors import CapevalError
from capeval_core.judgments.uploads import load_uploaded

GRADED = "candidate,references,{}\na dog,a dog runs,{}\na cat,a cat sits,{}\n"


def _message(files, fmt="graded"):
    with pytest.raises(CapevalError) as caught:
        load_uploaded(files, fmt)
    return str(caught.value)


def test_several_human_scores_are_all_read_the_one_named_score_first():
    """A file's numeric columns are its human scores (the Correlations page offers each);
    the one named as the score comes first, the one the pages open on."""
    jset = load_uploaded(
        [("j.csv", GRADED.format("fluency,quality", "3,4", "2,5").encode())], "graded"
    )
    assert jset.score_names == ("fluency", "quality")
    jset = load_uploaded(
        [("j.csv", GRADED.format("annotator,score", "7,4", "8,5").encode())], "graded"
    )
    assert jset.score_names == ("score", "annotator")


def _graded_upload(text: str):
    """The Judgments page with the graded file ``text`` uploaded, not loaded yet."""
    from streamlit.testing.v1 import AppTest

    from tests.app.apptest import ROOT, TIMEOUT

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
    at.session_state["_meta_metrics_kept"] = ["bleu_4"]
    at.run()
    at.switch_page("app_pages/judgments.py").run()
    at.radio(key="judgment_source").set_value("Upload a file").run()
    at.selectbox(key="judgment_format").select("graded").run()
    at.file_uploader(key="judgment_files-graded").set_value(("j.csv", text.encode(), "text/csv"))
    at.run()
    return at


def test_the_page_starts_from_the_column_named_as_the_score():
    """An `annotator` column before `score` was the first human score: the one the
    Correlations page opened on. The score comes first; pandas' index is offered no role."""
    from capeval_ui import state

    rows = "".join(f"{i},a dog {i},a dog runs|||a pup,{7 + i % 2},{1 + i % 5}\n" for i in range(6))
    at = _graded_upload("Unnamed: 0,candidate,references,annotator,score\n" + rows)
    assert "role_Unnamed: 0" not in [box.key for box in at.selectbox]  # never a score
    assert at.selectbox(key="role_annotator").value == "human score"
    assert at.selectbox(key="role_score").value == "human score"
    at.button(key="load_judgments").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert at.session_state[state.JSET_KEY].score_names == ("score", "annotator")
    at.switch_page("app_pages/correlations.py").run()
    assert at.selectbox(key="human_column").value == "score"


def test_every_score_set_to_ignore_is_said_and_not_loaded_anyway():
    """Every numeric column's role set to "ignore" passed no score columns, and the loader
    then read every numeric column as a human score: the ignored ones."""
    from capeval_ui import state

    rows = "".join(f"a dog {i},a dog runs|||a pup,{1 + i % 5}\n" for i in range(6))
    at = _graded_upload("candidate,references,score\n" + rows)
    at.selectbox(key="role_score").set_value("ignore").run()
    assert [w.value for w in at.warning if "No column has the role" in w.value]
    assert at.button(key="load_judgments").disabled
    assert state.JSET_KEY not in at.session_state or at.session_state[state.JSET_KEY] is None
    at.selectbox(key="role_score").set_value("human score").run()
    assert not [w for w in at.warning if "No column has the role" in w.value]
    assert not at.button(key="load_judgments").disabled
