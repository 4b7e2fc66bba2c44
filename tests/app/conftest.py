"""The browser tests' shared fixtures: Debian's chromium and one browser per module."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from bench.app_server import CHROMIUM, CHROMIUM_ARGS


@pytest.fixture(scope="module")
def chromium() -> str:
    """Debian's chromium, or skip (fail under CI: the browser check must run there)."""
    if not Path(CHROMIUM).is_file():
        message = (
            f"chromium must be installed at {CHROMIUM} for the browser tests: "
            "run `apt-get install -y chromium`"
        )
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return CHROMIUM


#: the tests' chromium compiles JavaScript no further than V8's mid tier (Maglev): a test's
#: pages live seconds, and the top tier's compiles cost about 8 % of chromium's CPU in Compare's
#: tab walk (four alternating runs each); what the pages do is the same at every tier
TEST_ARGS = ["--js-flags=--max-opt=2"]


@pytest.fixture(scope="module")
def browser(chromium: str) -> Iterator[object]:
    """One chromium for the module; each test opens a context (a new visitor) of its own."""
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS + TEST_ARGS)
        try:
            yield b
        finally:
            b.close()
