"""Loaded once per process, however many threads ask at the same moment.

``functools.cache`` lets every thread that asks before the first answer is stored compute an
answer of its own. The app serves each person's page in a thread of its own, so three people
opening Compare together loaded the COCO val2014 IDF table (then 1.2 s, 400 MB) three times, and
the word vectors and SPICE's grammar twice or three times (issue 42). :func:`once` holds a
lock per argument tuple while the first caller computes; the others wait for its answer.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])


def once(fn: F) -> F:
    """``functools.cache`` for loaders: each value is computed by one thread while the others
    asking for it wait (a failure is not kept: the next call tries again).

    >>> calls = []
    >>> @once
    ... def table(name):
    ...     calls.append(name)
    ...     return name.upper()
    >>> table("idf"), table("idf"), calls
    ('IDF', 'IDF', ['idf'])
    """
    values: dict[Any, Any] = {}
    locks: dict[Any, threading.RLock] = {}
    guard = threading.Lock()

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        key = (args, tuple(sorted(kwargs.items())))
        try:
            return values[key]
        except KeyError:
            pass
        with guard:
            lock = locks.setdefault(key, threading.RLock())
        with lock:
            if key not in values:
                values[key] = fn(*args, **kwargs)
            return values[key]

    def cache_clear() -> None:
        with guard:
            values.clear()
            locks.clear()

    wrapper.cache_clear = cache_clear  # type: ignore[attr-defined]
    return wrapper  # type: ignore[return-value]
