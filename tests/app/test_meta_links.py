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
