"""The Systems page in a real browser (issue 42 items 3 and 5, issue 43 item 5): a run is
started with Score and stopped with Cancel, or abandoned by closing the tab; either way the
server's scoring workers are gone at once and its log shows no error (the InvalidStateError of
a worker pool broken while its run was cancelled). Needs ``/usr/bin/chromium``."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from bench.app_load import process_tree, server_pid
from bench.app_server import VIEWPORT, ServerError, serve
from bench.app_server import settle as _settle
from bench.systems import _write

pytestmark = pytest.mark.browser

#: images per system: enough for the page to score in worker processes (batch.MIN_PART)
N_IMAGES = 1200
#: a bound on the waits for the server (a stuck run fails instead of hanging)
BOUND_S = 240


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Path]]:
    from capeval_core.resources import coco_caption_sets

    return _write(tmp_path_factory.mktemp("systems"), coco_caption_sets("val", N_IMAGES))


@pytest.fixture
def server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, Path]]:
    """A server of its own, with an empty score cache (every run scores in workers) and no
    SPICE parses cached: the reversed captions are parsed afresh, so a run lasts long enough
    to be stopped (with an earlier run's parses, it could finish before the server saw the tab
    close). The rest of the user cache (IDF tables, METEOR's index) is the user's."""
    from capeval_core.resources import CACHE_ENV, cache_dir

    monkeypatch.setenv("CAPEVAL_SCORES_CACHE_DIR", str(tmp_path / "scores"))
    user, mine = cache_dir(), tmp_path / "cache"
    mine.mkdir()
    for entry in user.iterdir():
        if not entry.name.startswith("spice-parses"):
            (mine / entry.name).symlink_to(entry)
    monkeypatch.setenv(CACHE_ENV, str(mine))
    log = tmp_path / "server.log"
    try:
        with serve(log) as url:
            yield url, log
    except ServerError as exc:
        pytest.fail(str(exc))


def _workers(server_process: int) -> list[int]:
    """The scoring (and parse) worker processes of the server: spawned interpreters."""
    out = []
    for pid in process_tree(server_process)[1:]:
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if b"spawn_main" in cmdline:
            out.append(pid)
    return out


def _until(condition, what: str) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + BOUND_S
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"not within {BOUND_S} s: {what}")
        time.sleep(0.2)


def open_uploads(page, url: str, results: list[Path], ann: Path) -> None:  # type: ignore[no-untyped-def]
    """Open the Systems page and upload ``results`` and the references file ``ann``."""
    page.goto(f"{url}/systems")
    page.get_by_role("heading", name="Systems", exact=True).wait_for()
    _settle(page)
    page.get_by_text("Upload results files", exact=True).click()
    _settle(page)
    page.get_by_text("Upload a references file", exact=True).click()
    _settle(page)
    page.locator('.st-key-systems_results input[type="file"]').set_input_files(
        [str(p) for p in results]
    )
    # the next upload waits for this one's run, as a person does: on a loaded machine the page
    # can be quiet before that run starts, and a file set on the other uploader as it starts
    # was dropped (the uploader showed no file; CI's page still asked for the references)
    page.get_by_text("Upload the references file, or use COCO val2014.").wait_for()
    _settle(page)
    page.locator('.st-key-systems_annotations input[type="file"]').set_input_files(str(ann))
    page.get_by_text(f"References: {ann.name}.", exact=True).wait_for()
    _settle(page)


def _start_scoring(page, url: str, files: tuple[Path, list[Path]]) -> tuple[int, int]:  # type: ignore[no-untyped-def]
    """Upload the files, choose coco-caption's metrics, press Score; once the server's
    workers are scoring, return the server's process id."""
    ann, results = files
    open_uploads(page, url, results, ann)
    page.locator(".st-key-systems_coco_caption button").first.click()
    _settle(page)
    before = _entries()
    page.locator(".st-key-systems_score button").first.click()
    server = server_pid(url.rpartition(":")[2])
    _until(lambda: len(_workers(server)) >= 2, "the server's scoring workers start")
    return server, before


#: score cache entries of a finished run: 3 systems x coco-caption's 5 metrics (BLEU-1..4 are one)
FINISHED_ENTRIES = 3 * 5


def _entries() -> int:
    """Entries in the server's score cache (the demo scored on opening made some)."""
    return len(list(Path(os.environ["CAPEVAL_SCORES_CACHE_DIR"]).glob("*.npz")))


def _unfinished(before: int) -> bool:
    """The run stopped before scoring everything: it added fewer score cache entries than a
    finished run does (``before``: the entries when Score was pressed)."""
    return _entries() - before < FINISHED_ENTRIES


def _assert_clean_log(log: Path) -> None:
    text = log.read_text(errors="replace")
    for marker in ("Traceback", "InvalidStateError", "BrokenProcessPool"):
        assert marker not in text, text[-3000:]


def test_cancel_stops_the_run_and_its_workers(server, browser, files) -> None:  # type: ignore[no-untyped-def]
    url, log = server
    context = browser.new_context(viewport=VIEWPORT)
    page = context.new_page()
    page.set_default_timeout(BOUND_S * 1000)
    try:
        process, before = _start_scoring(page, url, files)
        running = _workers(process)
        page.locator(".st-key-systems_cancel button").first.click()
        page.get_by_text("Scoring cancelled").wait_for()
        _until(lambda: not _workers(process), "the workers are gone after Cancel")
        # a scoring process that did not stop in time is killed: its workers, no longer the
        # server's, end on their own once their parent is gone
        _until(
            lambda: all(not Path(f"/proc/{pid}").exists() for pid in running),
            "every process of the run is gone after Cancel",
        )
        main = page.inner_text('[data-testid="stMain"]')
        assert f"3 systems on {N_IMAGES:,} images" not in main  # no table of the cancelled run
        _until(
            lambda: page.locator(".st-key-systems_cancel").count() == 0,
            "the Cancel button is gone once the run stopped",
        )
        assert _unfinished(before)
        _assert_clean_log(log)
    finally:
        context.close()


def test_a_closed_tab_frees_the_workers_of_its_run(server, browser, files) -> None:  # type: ignore[no-untyped-def]
    url, log = server
    context = browser.new_context(viewport=VIEWPORT)
    page = context.new_page()
    page.set_default_timeout(BOUND_S * 1000)
    try:
        process, before = _start_scoring(page, url, files)
    finally:
        context.close()  # the person closes the tab mid-run
    _until(lambda: not _workers(process), "the workers are gone after the tab closed")
    assert _unfinished(before)
    _assert_clean_log(log)
