"""capeval_ui.heap: a page run that loads a resource freezes it out of later full collections
(issue 42: a full collection over the loaded models held every person's page for 0.3 s)."""

from __future__ import annotations

import gc
import subprocess
import sys

import pytest

from capeval_ui import heap
from tests.app.apptest import ROOT


@pytest.fixture
def fresh(monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    """No freeze yet, a small threshold, no automatic collection (only the module's own is
    counted); the test process's heap unfrozen afterwards."""
    monkeypatch.setattr(heap, "LOADED_BLOCKS", 20_000)
    monkeypatch.setattr(heap, "_blocks_at_freeze", 0)
    gc.unfreeze()
    gc.disable()
    yield
    gc.enable()
    gc.unfreeze()


def _full_collections() -> int:
    return gc.get_stats()[2]["collections"]


def test_a_run_that_loads_freezes_once_and_a_run_that_does_not_leaves_the_heap(fresh) -> None:  # type: ignore[no-untyped-def]
    with heap.freeze_after_loading():
        kept = [[i] for i in range(100_000)]  # a resource: many small objects kept
    frozen = gc.get_freeze_count()
    assert frozen >= len(kept)
    with heap.freeze_after_loading():  # an ordinary run: a little, mostly freed again
        scratch = [[i] for i in range(1_000)]
        del scratch
    assert gc.get_freeze_count() == frozen


def test_runs_loading_at_once_freeze_once(fresh) -> None:  # type: ignore[no-untyped-def]
    """Several people's first runs load the same resources together: the first run to end
    collects and freezes, the others find nothing new since."""
    collections = _full_collections()
    outer = heap.freeze_after_loading()
    outer.__enter__()  # a second person's run, begun before the load
    with heap.freeze_after_loading():
        kept = [[i] for i in range(100_000)]
    frozen = gc.get_freeze_count()
    outer.__exit__(None, None, None)
    assert gc.get_freeze_count() == frozen >= len(kept)
    assert _full_collections() == collections + 1


def test_the_router_freezes_after_compares_first_run_and_not_after_home() -> None:
    """In a process of its own, as a fresh server: Home loads no resource, Compare does."""
    script = (
        "import gc;"
        "from streamlit.testing.v1 import AppTest;"
        "at = AppTest.from_file('app.py', default_timeout=120); at.run();"
        "home = gc.get_freeze_count();"
        "at.switch_page('app_pages/compare.py').run();"
        "assert not at.exception, at.exception;"
        "print(home, gc.get_freeze_count())"
    )
    out = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-2000:]
    home, compare = map(int, out.stdout.split()[-2:])
    assert home == 0
    assert compare > 100_000  # the loaded models, pages and libraries
