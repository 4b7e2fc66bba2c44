"""The browser tests' shared fixtures: Debian's chromium, one browser per module, and one app
server for every test worker."""

from __future__ import annotations

import contextlib
import fcntl
import functools
import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from bench.app_server import CHROMIUM, CHROMIUM_ARGS, answers, start, stop


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


@pytest.fixture(scope="session", autouse=True)
def _one_component_scan() -> Iterator[None]:
    """Every AppTest scans the installed distributions' metadata for Streamlit components
    (about 0.3 s of parsing each: the AppTests took 84 s of CPU with it, 62 s without); the
    installed packages do not change during a test run, so the first scan's answer serves
    every AppTest. A server scans once when it starts, as before."""
    from streamlit.components.v2 import manifest_scanner

    scan = functools.cache(manifest_scanner.scan_component_manifests)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(manifest_scanner, "scan_component_manifests", lambda: list(scan()))
        yield


#: the tests' chromium compiles JavaScript no further than V8's mid tier (Maglev): a test's
#: pages live seconds, and the top tier's compiles cost 4-8 % of chromium's CPU (Compare's tab
#: walk, three copied-link tests; alternating runs); what the pages do is the same at every tier
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


#: the servers this process started, kept so that it reaps the one it stops (another worker
#: may stop it instead)
_STARTED: dict[int, subprocess.Popen[bytes]] = {}


@contextlib.contextmanager
def _registry(root: Path) -> Iterator[Path]:
    """The shared server's record (``root/app-server.json``), held under a file lock."""
    with (root / "app-server.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield root / "app-server.json"
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


@pytest.fixture(scope="session")
def shared_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """One app server for the browser tests of every test worker (URL and log): a server's
    first visits load every resource (Compare's alone about 4 s of CPU), so a server per
    worker paid that once more for each. The first worker to need it starts it; the
    record counts its users, and the last to finish stops it."""
    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent  # the run's directory, shared by its workers
    with _registry(root) as record:
        state = json.loads(record.read_text()) if record.exists() else None
        if state and answers(state["url"]):
            state["users"] += 1
        else:
            log = root / f"app-server-{os.getpid()}.log"
            try:
                proc, url = start(log)
            except Exception as exc:  # ServerError, or no port
                pytest.fail(str(exc))
            _STARTED[proc.pid] = proc
            state = {"pid": proc.pid, "url": url, "log": str(log), "users": 1}
        record.write_text(json.dumps(state))
    try:
        yield state["url"], Path(state["log"])
    finally:
        with _registry(root) as record:
            state = json.loads(record.read_text())
            state["users"] -= 1
            if state["users"]:
                record.write_text(json.dumps(state))
            else:
                record.unlink()
                stop(state["pid"], _STARTED.get(state["pid"]))
