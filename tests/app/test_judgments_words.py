"""Judgment messages in each surface's words: a library message that names a keyword
argument reads, on the Judgments page, as the page's own control (``PAGE_WORDS``) and, on
the command line, as its flag (``CLI_WORDS``); neither shows the keyword."""

from __future__ import annotations

import pytest

from capeval_core.cli import cli_message
from capeval_core.errors import CapevalError
from capeval_core.judgments.uploads import load_uploaded
from capeval_ui.choices import page_message

GRADED = "candidate,references,{}\na dog,a dog runs,{}\na cat,a cat sits,{}\n"


def _message(files, fmt="graded"):
    with pytest.raises(CapevalError) as caught:
        load_uploaded(files, fmt)
    return str(caught.value)


def test_two_candidate_human_scores_say_how_each_surface_chooses():
    message = _message([("j.csv", GRADED.format("fluency,quality", "3,4", "2,5").encode())])
    assert "`score_columns`" in message
    page, cli = page_message(message), cli_message(message)
    assert 'give one of them the role "human score" under Column mapping' in page
    assert "choose one with --human NAME" in cli
    assert "score_columns" not in page + cli


@pytest.mark.parametrize(
    ("name", "header", "said"),
    [
        ("8k_tidy.csv", "pic,candidate,correctness", "; rename its header to one of those"),
        ("8k_tidy.csv", "image;candidate;correctness", "is the file separated by ';'"),
        ("ratings.csv", "image,candidate,correctness", "name the file after its source"),
    ],
)
def test_composite_messages_name_no_keyword_on_a_page_or_the_command_line(name, header, said):
    """Composite's column mapping (`columns`) and caption file (`references_from`) are
    keywords neither surface has: their suggestion is dropped, the fix each has is kept."""
    token = "".join(f"a.jpg#{k}\ta dog {k}\n" for k in range(5))
    sep = ";" if ";" in header else ","
    data = f"{header}\na.jpg{sep}a cat{sep}4\n".encode()
    files = [(name, data), ("Flickr8k.token.txt", token.encode())]
    message = _message(files, "composite")
    page, cli = page_message(message), cli_message(message)
    assert said in cli and said in page.replace("\\", "")
    assert "`columns`" not in page + cli and "references_from" not in page + cli
    assert "columns={" not in page + cli


def test_a_join_error_says_the_set_is_unchanged_once_on_the_page():
    """The page says "the loaded set is unchanged" before the message; the library's own
    words said it a second time."""
    from capeval_core.judgments.uploads import join_uploaded_scores

    jset = load_uploaded([("j.csv", GRADED.format("score", "3", "4").encode())], "graded")
    with pytest.raises(CapevalError) as caught:
        join_uploaded_scores(jset, "mine.csv", b"id,mine\n2,0.5\n")
    assert "; the set is unchanged" in str(caught.value)
    assert "unchanged" not in page_message(str(caught.value))
    assert page_message(str(caught.value)).endswith("'3'")


def test_the_page_starts_from_the_column_named_as_the_score():
    """An `annotator` column before `score` was a human score by default too, and the first:
    the one the Correlations page opened on. Beside a column named as the score, the others
    start ignored, as the loader reads such a file."""
    from streamlit.testing.v1 import AppTest

    from capeval_ui import state
    from tests.app.apptest import ROOT, TIMEOUT

    rows = "".join(f"a dog {i},a dog runs|||a pup,{7 + i % 2},{1 + i % 5}\n" for i in range(6))
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
    at.session_state["_meta_metrics_kept"] = ["bleu_4"]
    at.run()
    at.switch_page("app_pages/judgments.py").run()
    at.radio(key="judgment_source").set_value("Upload a file").run()
    at.selectbox(key="judgment_format").select("graded").run()
    data = ("candidate,references,annotator,score\n" + rows).encode()
    at.file_uploader(key="judgment_files-graded").set_value(("j.csv", data, "text/csv"))
    at.run()
    assert at.selectbox(key="role_annotator").value == "ignore"
    assert at.selectbox(key="role_score").value == "human score"
    at.button(key="load_judgments").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert at.session_state[state.JSET_KEY].score_names == ("score",)
