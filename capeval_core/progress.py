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
"""

from __future__ import annotations

import contextlib
import queue as queue_module
import threading
from collections.abc import Callable, Iterator
from typing import Any

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
    """Say what is being done now: to this thread's listener, else to the parent of this
    worker process, else to no one."""
    stack = _stack()
    if stack:
        stack[-1](label)
    else:
        to_parent(label)


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


def _stack() -> list[Callable[[str], None]]:
    stack = getattr(_LOCAL, "stack", None)
    if stack is None:
        stack = _LOCAL.stack = []
    return stack
