"""A loaded set's notes (what its loader noticed in the files) are said on every page that
shows the set read from them, as the Judgments page says them."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from capeval_ui import store
from tests.app.test_links import _open, _upload

#: references joined with "|" instead of "|||": each cell is read as one reference, and the
#: pairwise loader notes it
PIPED = (
    "candidate_a,candidate_b,references,preferred,category\n"
    "a man rides a wave,a man rides a horse,a surfer rides a wave|a man surfing,a,replace-scene\n"
    "a dog on grass,a man on grass,a dog lying on grass|a brown dog,a,replace-person\n"
)


@pytest.fixture(autouse=True)
def _a_server_of_its_own() -> Iterator[None]:
    store.forget_all()
    yield
    store.forget_all()


def _notes(at) -> list[str]:  # type: ignore[no-untyped-def]
    return [t.value for t in at.text if t.value.startswith("Note: ")]


def test_robustness_says_the_notes_of_an_uploaded_distractor_file() -> None:
    """Robustness showed the file's summary line but not its notes: a file whose references
    were read one per cell (joined with "|") was tested without a word."""
    at = _open("app_pages/robustness.py")
    at.radio(key="distractor_source").set_value("Upload a pairwise file").run()
    at.file_uploader(key="distractor_file").set_value(("d.csv", PIPED.encode(), "text/csv")).run()
    at.button(key="load_distractors").click().run()
    assert not at.exception, at.exception
    (said,) = _notes(at)
    assert "d.csv: every row has one reference" in said and "'|'" in said, said

    # the same set loaded on the Judgments page: its notes there and here read alike
    judged = _upload(_open("app_pages/judgments.py"), "pairwise", PIPED)
    assert _notes(judged) == [said.replace("d.csv", "mine.csv")]
    judged.switch_page("app_pages/robustness.py").run()
    assert not judged.exception, judged.exception
    assert _notes(judged) == [said.replace("d.csv", "mine.csv")]


def test_pairwise_says_the_notes_of_the_set_loaded_on_judgments() -> None:
    """Correlations, Significance and Pairwise accuracy showed the loaded set's summary line
    but not its notes: its banner says them now, as Judgments does."""
    at = _upload(_open("app_pages/judgments.py"), "pairwise", PIPED)
    (said,) = _notes(at)
    at.switch_page("app_pages/pairwise.py").run()
    assert not at.exception, at.exception
    assert _notes(at) == [said]


def test_a_systems_rows_compare_link_names_the_sessions_set() -> None:
    """A Systems row's "open" link (a new tab: a new session) named no judgment set, while
    every page's URL does: the set was gone in the tab it opened."""
    from urllib.parse import parse_qs, urlsplit

    at = _upload(_open("app_pages/judgments.py"), "pairwise", PIPED)
    named = at.query_params["set"]
    at.switch_page("app_pages/systems.py").run(timeout=120)
    assert not at.exception, at.exception
    links = next(df.value for df in at.dataframe if "open" in df.value.columns)["open"]
    assert len(links) and all(parse_qs(urlsplit(u).query)["set"] == [named] for u in links)


#: every item has the same references: CIDEr-D's scored-set IDF is 0 for every n-gram
SAME_REFERENCES = (
    "candidate,references,score\n"
    "a dog runs,a dog is running,3\n"
    "a cat sits,a dog is running,2\n"
    "two birds fly,a dog is running,1\n"
)


def test_the_correlations_page_says_cider_ds_note_on_the_set() -> None:
    """The meta-evaluation pages showed CIDEr-D's zeros on a set whose items share their
    references without the note that says why (the scoring's warning was silenced), and a
    cached run could not say it: the note now comes with the scores."""
    at = _upload(_open("app_pages/judgments.py"), "graded", SAME_REFERENCES)
    at.switch_page("app_pages/correlations.py").run()
    assert not at.exception, at.exception
    said = [w.value for w in at.warning if "CIDEr-D takes its IDF" in w.value]
    assert len(said) == 1 and "log 3 - log 3 = 0" in said[0], [w.value for w in at.warning]
