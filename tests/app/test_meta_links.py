"""The meta-evaluation pages' state is their URL: the set a session holds, the Judgments
page's column mapping, and the link values a page reads but does not use.

A reload or a copied link is a new session that keeps only the URL: a second AppTest given
the first one's query parameters (see ``test_links.py``, whose helpers these tests share).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from capeval_ui import state, store
from tests.app.apptest import as_shown
from tests.app.test_links import (
    GRADED_CSV,
    _assert_same_frames,
    _link_warnings,
    _navigate,
    _open,
    _params,
    _reopened,
    _upload,
)


@pytest.fixture(autouse=True)
def _a_server_of_its_own() -> Iterator[None]:
    """Each test starts with no uploaded set held, as on a fresh server."""
    store.forget_all()
    yield
    store.forget_all()


def _demo_said(at) -> bool:  # type: ignore[no-untyped-def]
    return any("synthetic demo set" in i.value for i in at.info)


# -- the set a session holds is in every meta page's URL ---------------------------------------
@pytest.mark.parametrize("page", ["app_pages/pairwise.py", "app_pages/robustness.py"])
def test_a_reload_of_a_page_of_another_kind_keeps_the_sessions_set(page: str) -> None:
    """Pairwise accuracy and Robustness work on pairs: with a graded set loaded their URL
    named no set, so a reload there started a session without it, and Correlations then
    showed the demo instead of the uploaded file."""
    at = _upload(_open("app_pages/judgments.py"))
    at.switch_page(page).run()
    assert not at.exception, at.exception
    assert _params(at)["set"] == store.short_digest(at.session_state[state.JSET_KEY])
    again = _reopened(at, page)  # a reload: the same numbers on the page itself
    _assert_same_frames(at, again)
    for view in (at, again):
        _navigate(view, "app_pages/correlations.py")
        assert not _demo_said(view)  # the uploaded set, in both sessions
    _assert_same_frames(at, again)


#: the pages that do not use the judgment set, and how to show each one's view
CARRYING = {
    "home": ("app_pages/home.py", {}),
    "compare": ("app_pages/compare.py", {}),
    "systems": ("app_pages/systems.py", {}),
    "lab": ("app_pages/perturb.py", {}),
    "lab batch": ("app_pages/perturb.py", {"lab_mode": "Batch"}),  # on COCO captions
}


def _show(at, page: str, choices: dict[str, str]) -> None:  # type: ignore[no-untyped-def]
    """``page`` reached from the sidebar, then its radio ``choices`` made."""
    _navigate(at, page)
    for key, value in choices.items():
        at.radio(key=key).set_value(value).run()
    assert not at.exception, at.exception


def _shows_the_upload(at, short: str) -> bool:  # type: ignore[no-untyped-def]
    """Judgments (reached from the sidebar) shows the uploaded set named ``short``."""
    _navigate(at, "app_pages/judgments.py")
    return (
        state.JSET_KEY in at.session_state
        and store.short_digest(at.session_state[state.JSET_KEY]) == short
        and at.radio(key="judgment_source").value == "Upload a file"
        and any(s.value == "Loaded set" for s in at.subheader)
    )


@pytest.mark.parametrize("name", list(CARRYING))
def test_a_reload_of_a_page_that_does_not_use_the_set_keeps_it(name: str) -> None:
    """A set loaded on Judgments, then Compare (or Home, Systems, the lab) and a reload
    there: that page's URL did not name the set, so the new session had none, and Judgments
    and the meta pages showed no set or the demo. Every page's URL names it now."""
    page, choices = CARRYING[name]
    at = _upload(_open("app_pages/judgments.py"))
    short = _params(at)["set"]
    _show(at, page, choices)
    assert _params(at)["set"] == short, _params(at)
    again = _open(page, **_params(at))  # the reload
    assert not _link_warnings(again), _link_warnings(again)
    assert _params(again)["set"] == short
    assert _shows_the_upload(again, short)
    _navigate(again, "app_pages/correlations.py")
    assert not _demo_said(again)


def test_a_view_too_large_for_a_link_still_names_the_set() -> None:
    """A Compare view too large for a link writes only its size: the set is named beside
    it, so a reload there still keeps the set for the other pages."""
    at = _upload(_open("app_pages/judgments.py"))
    short = _params(at)["set"]
    _navigate(at, "app_pages/compare.py")
    refs = "\n".join(f"a man riding wave number {i}" for i in range(1100))
    at.text_area(key="references").set_value(refs).run()
    assert not at.exception, at.exception
    assert sorted(_params(at)) == ["set", state.TOO_LARGE] and _params(at)["set"] == short
    assert _shows_the_upload(_open("app_pages/compare.py", **_params(at)), short)


@pytest.mark.parametrize("name", ["compare", "lab batch"])
def test_a_set_this_server_lost_is_kept_in_the_url_of_a_page_that_does_not_use_it(
    name: str,
) -> None:
    """After a restart, Compare (or a batch on COCO captions) with a set= it does not use:
    the page works as without it, says nothing of it and keeps it in its URL."""
    page, choices = CARRYING[name]
    at = _upload(_open("app_pages/judgments.py"))
    _show(at, page, choices)
    link = _params(at)
    store.forget_all()
    again = _open(page, **link)
    assert not [w.value for w in again.warning if "not on this server" in w.value]
    assert not _link_warnings(again), _link_warnings(again)
    assert _params(again)["set"] == link["set"]
    assert state.JSET_KEY not in again.session_state


# -- a link's values the page does not use are named -------------------------------------------
def test_a_preset_beside_the_demo_is_named_as_not_used() -> None:
    """source=demo&preset=...: the demo has no protocol preset, and the page dropped the
    link's preset from its address without a word."""
    at = _open("app_pages/judgments.py", source="demo", preset="kasai2022-with-human")
    (said,) = _link_warnings(at)
    assert (
        "preset=kasai2022-with-human (a protocol preset is used only with an uploaded file)"
        in as_shown(said)
    ), said
    assert "preset" not in _params(at)
    again = _open("app_pages/judgments.py", **_params(at))  # the address, reloaded
    assert not _link_warnings(again), _link_warnings(again)
    # nor kept for an upload: the warning said it was not used
    at.radio(key="judgment_source").set_value("Upload a file").run()
    at.selectbox(key="judgment_format").select("thumb").run()
    assert at.selectbox(key="judgment_preset").value == "kasai2022"  # the format's first


# -- the Judgments page's column mapping is in its URL -----------------------------------------
#: the graded file with its own names: caption and refs, and its metric column made a human
#: score (a column name with a colon in it)
RENAMED = GRADED_CSV.replace("candidate,references", "caption,refs")


def _choose_file(at, text: str = RENAMED, name: str = "mine.csv"):  # type: ignore[no-untyped-def]
    """Upload ``text`` as a graded file on the Judgments page, without loading it."""
    at.radio(key="judgment_source").set_value("Upload a file").run()
    at.selectbox(key="judgment_format").select("graded").run()
    at.file_uploader(key="judgment_files-graded").set_value((name, text.encode(), "text/csv"))
    at.run()
    assert not at.exception, at.exception
    return at


def test_a_judgments_link_keeps_its_column_mapping() -> None:
    """The mapping was not in the URL: after a restart the link asked for the file again,
    and the file uploaded again met the default mapping (no candidate column: not loaded)."""
    at = _choose_file(_open("app_pages/judgments.py"))
    at.selectbox(key="map_candidate").select("caption").run()
    at.selectbox(key="map_references").select("refs").run()
    at.selectbox(key="role_metric:mine").select("human score").run()
    at.button(key="load_judgments").click().run()
    assert not at.error, [e.value for e in at.error]
    assert at.session_state[state.JSET_KEY].score_names == ("quality", "mine")
    link = _params(at)
    assert link["map"] == ["caption:candidate", "refs:references", "metric:mine:human"], link

    store.forget_all()  # the server restarts: the link asks for the file again
    again = _open("app_pages/judgments.py", **link)
    assert any("is not on this server" in w.value for w in again.warning)
    assert _params(again) == link  # the URL stays the link, its mapping too
    _choose_file(again)
    assert again.selectbox(key="map_candidate").value == "caption"
    assert again.selectbox(key="map_references").value == "refs"
    assert again.selectbox(key="role_metric:mine").value == "human score"
    again.button(key="load_judgments").click().run()
    assert not again.error, [e.value for e in again.error]
    assert _params(again)["set"] == link["set"]  # the same file, mapped alike: the same set
    _assert_same_frames(at, again)


def test_a_file_that_fails_to_load_leaves_the_shown_sets_mapping_in_the_url() -> None:
    """A mapped file loaded, then another file that failed to load: the page said the set was
    kept, but its URL followed the new file's boxes and lost every ``map=``, so the link no
    longer refilled the boxes of the set's own file. It keeps the shown set's mapping."""
    at = _choose_file(_open("app_pages/judgments.py"))
    at.selectbox(key="map_candidate").select("caption").run()
    at.selectbox(key="map_references").select("refs").run()
    at.button(key="load_judgments").click().run()
    link = _params(at)
    assert link["map"] == ["caption:candidate", "refs:references"], link
    at.file_uploader(key="judgment_files-graded").set_value(
        ("notes.csv", b"some notes\nnothing here\n", "text/csv")
    )
    at.run()
    at.button(key="load_judgments").click().run()
    assert any("the previous set is kept" in e.value for e in at.error)
    assert _params(at) == link
    # the scores file joined to the set: a new set, read with the same columns
    at.file_uploader(key="metric_scores_file").set_value(
        ("s.csv", b"id,extra\n" + b"".join(b"%d,0.%d\n" % (i, i) for i in range(1, 13)), "text/csv")
    )
    at.run()
    at.button(key="join_scores").click().run()
    assert not at.exception and "scores_error" not in at.session_state
    joined = _params(at)
    assert joined["set"] != link["set"] and joined["map"] == link["map"], joined

    store.forget_all()  # the link after a restart: it fills the boxes of the set's file
    again = _choose_file(_open("app_pages/judgments.py", **link))
    assert again.selectbox(key="map_candidate").value == "caption"
    again.button(key="load_judgments").click().run()
    assert _params(again)["set"] == link["set"]


def test_a_linked_mapping_naming_columns_the_file_lacks_says_so_and_keeps_the_rest() -> None:
    link = {"source": "upload", "format": "graded", "map": ["caption:candidate", "text:references"]}
    at = _choose_file(_open("app_pages/judgments.py", **link))
    said = [as_shown(w.value) for w in at.warning if "column mapping" in w.value]
    assert said == [
        "This link's column mapping names a column mine.csv does not have: text (references); "
        "the rest of it is used."
    ], said
    assert at.selectbox(key="map_candidate").value == "caption"  # the rest is kept
    assert at.selectbox(key="map_references").value == "(none)"
    at.selectbox(key="map_references").select("refs").run()
    assert _params(at)["map"] == ["caption:candidate", "refs:references"]
    at.button(key="load_judgments").click().run()
    assert not at.error and not [w for w in at.warning if "column mapping" in w.value]


@pytest.mark.parametrize(
    ("params", "named"),
    [
        (
            {"source": "demo", "map": "caption:candidate"},
            "map=caption:candidate (used only with an uploaded graded or pairwise file)",
        ),
        (
            {"source": "upload", "format": "pascal50s", "map": "caption:candidate"},
            "map=caption:candidate (used only with an uploaded graded or pairwise file)",
        ),
        (
            {"source": "upload", "format": "graded", "map": ["caption:candidate", "x:bogus"]},
            "map=x:bogus (not a role of a graded file's column",
        ),
        (
            {"source": "upload", "format": "pairwise", "map": ["quality:human"]},
            "map=quality:human (not a role of a pairwise file's column",
        ),
    ],
)
def test_a_linked_mapping_the_page_cannot_use_is_named(params: dict, named: str) -> None:
    at = _open("app_pages/judgments.py", **params)
    (said,) = _link_warnings(at)
    assert named in as_shown(said), said
    again = _open("app_pages/judgments.py", **_params(at))  # the address, reloaded
    assert not _link_warnings(again), _link_warnings(again)


def test_an_upload_under_the_demo_choice_says_so() -> None:
    """Source "Demo set" above an uploaded set (the box changed without Load demo, or a link
    naming both): the boxes and the numbers below disagreed without a word."""
    at = _upload(_open("app_pages/judgments.py"))
    at.radio(key="judgment_source").set_value("Demo set").run()
    for view in (at, _reopened(at, "app_pages/judgments.py")):
        said = [as_shown(c.value) for c in view.caption if "press Load" in c.value]
        assert said == [
            "The set below was read from mine.csv: press Load demo to load the graded demo."
        ], said


def test_an_uploaded_sets_link_names_no_demo() -> None:
    """An uploaded set's URL carried demo=graded, a box that is not drawn beside an upload
    and says nothing of what is shown. A reload shows the same set and choices without it."""
    at = _upload(_open("app_pages/judgments.py"))
    link = _params(at)
    assert "demo" not in link, link
    again = _reopened(at, "app_pages/judgments.py")
    assert not _link_warnings(again), _link_warnings(again)
    assert again.radio(key="judgment_source").value == "Upload a file"
    assert again.selectbox(key="judgment_format").value == "graded"
    assert _params(again) == link
    _assert_same_frames(at, again)
    again.radio(key="judgment_source").set_value("Demo set").run()  # its box, drawn, is named
    assert _params(again)["demo"] == "graded"


def _press_load(at) -> list[str]:  # type: ignore[no-untyped-def]
    return [as_shown(c.value) for c in at.caption if "press Load" in c.value]


def test_a_changed_column_mapping_box_says_load_applies_it() -> None:
    """A mapping box changed after Load: the set below was still the one read with the old
    mapping, and nothing said so."""
    at = _choose_file(_open("app_pages/judgments.py"))
    at.selectbox(key="map_candidate").select("caption").run()
    at.selectbox(key="map_references").select("refs").run()
    at.button(key="load_judgments").click().run()
    assert not at.error and not _press_load(at), _press_load(at)
    loaded = at.session_state[state.JSET_KEY]
    at.selectbox(key="role_metric:mine").select("human score").run()
    assert _press_load(at) == [
        "The set below was read with another column mapping than the boxes above: press Load "
        "to read it with these choices."
    ], _press_load(at)
    assert at.session_state[state.JSET_KEY] is loaded  # still the set read before
    at.selectbox(key="role_metric:mine").select("metric").run()  # back as it was loaded
    assert not _press_load(at), _press_load(at)
    at.selectbox(key="role_metric:mine").select("human score").run()
    at.button(key="load_judgments").click().run()
    assert not _press_load(at), _press_load(at)
    assert at.session_state[state.JSET_KEY].score_names == ("quality", "mine")
