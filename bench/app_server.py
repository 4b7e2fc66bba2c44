"""The app in a browser, for the browser tests and the Compare-page bench: ``streamlit run
app.py`` on a free local port, and Debian's chromium driven by Playwright.

Playwright's own browser download is never used: chromium must be at :data:`CHROMIUM`
(``apt-get install -y chromium``). Every request the browser makes is recorded, so a caller
can check that nothing leaves the machine.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
STARTUP_S = 90
VIEWPORT = {"width": 1400, "height": 1000}


class ServerError(RuntimeError):
    """The app server did not start (its log is in the message)."""


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start(log: Path) -> tuple[subprocess.Popen[bytes], str]:
    """``streamlit run app.py`` (settings from .streamlit/config.toml) on a free local port,
    its output in ``log``; returns the process and its URL once it answers."""
    port = free_port()
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(port)],
            cwd=ROOT,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + STARTUP_S
    while not answers(url):
        if proc.poll() is not None:
            raise ServerError(f"streamlit exited with {proc.returncode}:\n{log.read_text()}")
        if time.monotonic() > deadline:
            stop(proc.pid, proc)
            raise ServerError(f"streamlit did not answer within {STARTUP_S} s:\n{log.read_text()}")
        time.sleep(0.5)
    return proc, url


def answers(url: str) -> bool:
    """Whether the app server at ``url`` is up."""
    try:
        with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as resp:
            return bool(resp.read().decode().strip() == "ok")
    except (urllib.error.URLError, OSError):
        return False


def stop(pid: int, proc: subprocess.Popen[bytes] | None = None) -> None:
    """Stop the server ``pid`` (SIGTERM, then SIGKILL after 15 s) and wait until it is gone;
    ``proc`` when this process started it (it is reaped), else it is watched in /proc (a
    server another test worker started)."""

    def gone(timeout: float) -> bool:
        if proc is not None:
            try:
                proc.wait(timeout=timeout)
                return True
            except subprocess.TimeoutExpired:
                return False
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                stat = Path(f"/proc/{pid}/stat").read_text()
            except OSError:
                return True
            if stat[stat.rfind(")") + 2] == "Z":  # ended, its parent has not reaped it
                return True
            time.sleep(0.1)
        return False

    for sig in (signal.SIGTERM, signal.SIGKILL):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, sig)
        if gone(15):
            return


@contextlib.contextmanager
def serve(log: Path) -> Iterator[str]:
    """A server of :func:`start` for the ``with`` block; stopped by its PID on exit."""
    proc, url = start(log)
    try:
        yield url
    finally:
        if proc.poll() is None:
            stop(proc.pid, proc)


class RequestLog:
    """Every URL a page asked for (HTTP requests and websockets)."""

    def __init__(self, page) -> None:  # type: ignore[no-untyped-def]
        self.urls: list[str] = []
        page.on("request", lambda request: self.urls.append(request.url))
        page.on("websocket", lambda ws: self.urls.append(ws.url))

    def foreign(self, base_url: str) -> list[str]:
        """The requests to any host but the app server's (data: and blob: URLs are local)."""
        home = urlsplit(base_url).netloc
        return [
            u
            for u in self.urls
            if urlsplit(u).scheme not in ("data", "blob", "about") and urlsplit(u).netloc != home
        ]


#: how long the page must stay unchanged after a run before it counts as drawn (ms): plotly
#: and the data grid draw after the run's last message
QUIET_MS = 300
#: true once Streamlit's run is over (``stApp``'s script state, which turns to
#: ``rerunRequested`` the moment a widget asks for a run), no element is stale, every visible
#: plotly chart has drawn its SVG, and nothing in the page has changed for ``quiet`` ms (a
#: MutationObserver, installed on first use, stamps the last change)
SETTLED_JS = """
(quiet) => {
  if (!window.__capevalLastChange) {
    window.__capevalLastChange = performance.now();
    new MutationObserver(() => { window.__capevalLastChange = performance.now(); })
      .observe(document.body,
               {subtree: true, childList: true, attributes: true, characterData: true});
  }
  const app = document.querySelector('[data-testid="stApp"]');
  if (!app || app.getAttribute('data-test-script-state') !== 'notRunning') return false;
  if (document.querySelector('[data-stale="true"]')) return false;
  const charts = [...document.querySelectorAll('[data-testid="stPlotlyChart"]')]
    .filter(c => c.offsetParent !== null && c.getBoundingClientRect().width > 0);
  if (charts.some(c => !c.querySelector('.main-svg'))) return false;
  return performance.now() - window.__capevalLastChange > quiet;
}
"""


def settle(page, quiet_ms: int = QUIET_MS) -> None:  # type: ignore[no-untyped-def]
    """Wait until Streamlit has finished the run and the page has drawn it (a fixed pause
    cost 1.5 s a step and still raced a page that computed for longer)."""
    page.wait_for_function(SETTLED_JS, arg=quiet_ms, polling=100)
