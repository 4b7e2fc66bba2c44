"""What long work deep inside a metric is doing, told to whoever draws the progress bar.

A paragraph caption reaches SPICE's parser as one sentence, and its chart takes minutes; the
batch engine, several calls above, only knows that SPICE is running. The parser calls
:func:`report` ("parsing a 215-word caption, 40 %"); the caller that draws a progress bar
hears it through :func:`listening` (same thread), or, when the work runs in a worker process
of the batch engine's pool, through the pool's queue (:func:`worker_channel` in the worker,
:func:`drain` in the caller's thread, which then tells its own listener).

>>> heard = []
>>> with listening(heard.append):
...     report("parsing a 215-word caption, 40 %")
>>> heard
['parsing a 215-word caption, 40 %']
>>> report("nobody listens")  # nothing happens

A label says how far the work is at its end ("..., 40 %": :func:`says_how_far`), so that a
command line quiet on small runs (``capeval score`` under a thousand images, the pycocoevalcap
drop-in) shows a bar on stderr while such work runs (:class:`StderrBar`).
"""

from __future__ import annotations

import contextlib
import math
import queue as queue_module
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import IO, Any

_LOCAL = threading.local()
#: in a worker process of a pool: the queue its parent drains (see :func:`worker_channel`)
_CHANNEL: Any = None


@contextlib.contextmanager
def listening(callback: Callable[[str], None]) -> Iterator[None]:
    """Hear :func:`report` calls made in this thread while the block runs (the innermost
    listener hears them)."""
    stack = _stack()
    stack.append(callback)
    try:
        yield
    finally:
        stack.pop()


def report(label: str) -> None:
    """Say what is being done now and how far it is ("parsing a 215-word caption, 40 %"): to
    this thread's listener, else to the parent of this worker process, else to no one."""
    stack = _stack()
    if stack:
        stack[-1](label)
    else:
        to_parent(label)


def share_reporter(label: str, every: float) -> Callable[[float], None]:
    """A long task's progress callback (its share done, 0 to 1): :func:`report` of
    "``label``, N %" at most once every ``every`` seconds, and when it is done.

    >>> said = []
    >>> with listening(said.append):
    ...     tell = share_reporter("parsing a 215-word caption", every=60.0)
    ...     tell(0.5); tell(1.0)
    >>> said
    ['parsing a 215-word caption, 0 %', 'parsing a 215-word caption, 100 %']
    """
    last = [-math.inf]

    def tell(done: float) -> None:
        now = time.monotonic()
        if now - last[0] >= every or done >= 1.0:
            last[0] = now
            report(f"{label}, {math.floor(100 * done)} %")

    tell(0.0)
    return tell


def to_parent(label: str) -> None:
    """In a worker process: pass ``label`` to the parent (nothing elsewhere)."""
    if _CHANNEL is not None:
        with contextlib.suppress(Exception):  # a full or closed queue only loses a message
            _CHANNEL.put_nowait(label)


def worker_channel(channel: Any) -> None:
    """In a worker process: send :func:`report` calls nobody here listens to to ``channel``
    (a multiprocessing queue its parent drains)."""
    global _CHANNEL
    _CHANNEL = channel


def drain(channel: Any, callback: Callable[[str], None]) -> None:
    """Hand the last message waiting in ``channel`` to ``callback`` (the others are stale)."""
    last = None
    while True:
        try:
            last = channel.get_nowait()
        except (queue_module.Empty, OSError, ValueError, EOFError):
            break
    if last is not None:
        callback(last)


def how_far(label: str) -> int | None:
    """The percentage ``label`` ends in ("N %", as :func:`report`'s labels do), or None (the
    batch engine's own labels count parts: "spice: 3 of 8").

    >>> how_far("spice: parsing a 215-word caption, 40 %"), how_far("spice: 3 of 8")
    (40, None)
    """
    head, _, tail = label.rpartition(" ")
    number = head.rpartition(" ")[2]
    return int(number) if tail == "%" and number.isdigit() else None


def says_how_far(label: str) -> bool:
    """Whether ``label`` is long work saying how far it is (:func:`how_far`).

    >>> says_how_far("spice: parsing a 215-word caption, 40 %"), says_how_far("spice: 3 of 8")
    (True, False)
    """
    return how_far(label) is not None


#: seconds between two lines of a progress bar written to a file (stderr redirected)
LOG_INTERVAL = 30.0


class _LogLines:
    """A file for tqdm when stderr is no terminal (a log, a CI job): tqdm redraws its bar
    after a carriage return, which a terminal overwrites and a file keeps, every redraw on one
    endless line. Here the bar's state is a line of its own every :data:`LOG_INTERVAL` seconds
    (long work: how far it is, on what) and when the bar is closed; messages pass as they are.

    >>> import io
    >>> out = io.StringIO()
    >>> log = _LogLines(out, interval=3600)
    >>> for text in ("\\rscoring: 0 of 3", "\\rscoring: 1 of 3", "\\r    \\r", "a warning", "\\n",
    ...              "\\rscoring: 3 of 3", "\\n"):
    ...     _ = log.write(text)
    >>> out.getvalue().splitlines()
    ['a warning', 'scoring: 3 of 3']
    """

    def __init__(self, stream: IO[str], interval: float | None = None) -> None:
        self._stream = stream
        self._interval = LOG_INTERVAL if interval is None else interval
        self._shown_at: float | None = None
        self._pending: str | None = None
        self._last: str | None = None
        self._in_message = False

    def write(self, text: str) -> int:
        if not text:  # tqdm writes "" before its last redraw
            return 0
        if "\r" in text:  # a redraw, or a clear (spaces) before a message
            line = next((s for s in reversed(text.split("\r")) if s.strip()), "").rstrip()
            if line:
                self._pending = line
                now = time.monotonic()
                if self._shown_at is None:  # the bar's first state: kept, not yet a line
                    self._shown_at = now
                elif now - self._shown_at >= self._interval:
                    self._emit(now)
        elif text == "\n" and not self._in_message:  # the bar closed: its last state
            if self._pending is not None:
                self._emit(time.monotonic())
        else:
            self._stream.write(text)
            self._in_message = not text.endswith("\n")
        return len(text)

    def _emit(self, now: float) -> None:
        if self._pending != self._last:  # tqdm draws its last state again as it closes
            self._stream.write(f"{self._pending}\n")
            self._last = self._pending
        self._pending, self._shown_at = None, now

    def flush(self) -> None:
        self._stream.flush()


def stderr_tqdm(**options: Any) -> Any:
    """A tqdm bar on stderr: redrawn in place on a terminal, and one line at a time into a
    file (:class:`_LogLines`) when stderr is redirected."""
    from tqdm import tqdm

    stream = sys.stderr
    if getattr(stream, "isatty", lambda: False)():
        return tqdm(file=stream, **options)
    # a log keeps its lines: a bar that a terminal clears at its end ends on its last state
    return tqdm(file=_LogLines(stream), **{**options, "leave": True})


class StderrBar:
    """An ``on_progress(done, total, label)`` callback drawing a tqdm bar on stderr: from the
    start when ``shown``, else from the first label of long work (:func:`says_how_far`, a long
    caption's parse) on, so that a quick run prints nothing and a parse of minutes shows that
    work is going on and on what. Use it as a context manager (the bar is closed at the end).
    """

    def __init__(self, desc: str, unit: str, *, shown: bool, leave: bool = True) -> None:
        self._options = {"desc": desc, "unit": unit, "leave": leave}
        self._bar: Any = None
        if shown:
            self._open(0, None)

    def _open(self, done: int, total: int | None) -> None:
        self._bar = stderr_tqdm(total=total, initial=done, **self._options)

    def __call__(self, done: int, total: int, label: str) -> None:
        if self._bar is None:
            if not says_how_far(label):
                return
            self._open(done, total)
        bar = self._bar
        bar.total = total
        bar.n = done
        bar.set_postfix_str(label)  # refreshes the bar

    @property
    def shown(self) -> bool:
        """Whether the bar is on stderr now."""
        return self._bar is not None

    def write(self, line: str) -> None:
        """Print ``line`` on stderr clear of the bar (only while it is shown)."""
        if self._bar is not None:
            self._bar.write(line, file=self._bar.fp)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()

    def __enter__(self) -> StderrBar:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _stack() -> list[Callable[[str], None]]:
    stack = getattr(_LOCAL, "stack", None)
    if stack is None:
        stack = _LOCAL.stack = []
    return stack
