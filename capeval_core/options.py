"""Checks for public options: each raises :class:`~capeval_core.errors.OptionError` naming the
option and what it allows, before any work starts (house style: validate once, at the
public boundary).

>>> check_number("sigma", 6.0, above=0)
6.0
>>> check_number("sigma", "x", above=0)
Traceback (most recent call last):
...
capeval_core.errors.OptionError: `sigma` must be a finite number > 0 (got 'x')
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from typing import Any

import numpy as np

from capeval_core.errors import OptionError


def _shown(value: Any, limit: int = 60) -> str:
    try:
        text = repr(value)
    except Exception:  # a foreign object whose repr fails still gets a message
        text = f"<{type(value).__name__}>"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def check_choice(name: str, value: Any, allowed: Sequence[str]) -> str:
    """``value`` if it is one of ``allowed``.

    >>> check_choice("idf", "bogus", ("corpus", "coco-val2014"))
    Traceback (most recent call last):
    ...
    capeval_core.errors.OptionError: `idf` must be one of 'corpus', 'coco-val2014' (got 'bogus')
    """
    if not isinstance(value, str) or value not in allowed:
        choices = ", ".join(repr(a) for a in allowed)
        raise OptionError(f"`{name}` must be one of {choices} (got {_shown(value)})")
    return value


def is_whole(value: object) -> bool:
    """Whether ``value`` is a whole number: a Python or numpy integer, not True or 1.0.

    >>> is_whole(3), is_whole(np.int64(3)), is_whole(True), is_whole(3.0)
    (True, True, False, False)
    """
    return isinstance(value, int | np.integer) and not isinstance(value, bool)


def check_bool(name: str, value: Any) -> bool:
    """``value`` if it is True or False (not 0, 1 or "yes"); numpy's ``np.True_`` as the
    Python bool it equals.

    >>> import numpy as np
    >>> check_bool("normalize", np.False_)
    False
    """
    if isinstance(value, np.bool_):
        return bool(value)
    if not isinstance(value, bool):
        raise OptionError(f"`{name}` must be True or False (got {_shown(value)})")
    return value


def check_number(
    name: str,
    value: Any,
    *,
    above: float | None = None,
    at_least: float | None = None,
    at_most: float | None = None,
) -> float:
    """``value`` as the float it equals, if it is a finite real number within the bounds:
    ``> above``, ``>= at_least``, ``<= at_most``.

    One value, one float, so one signature: ``6`` and ``6.0`` both give ``6.0`` (a signature
    printed ``sigma:6`` for one and ``sigma:6.0`` for the other, the same number signed
    twice), ``-0.0`` gives ``0.0``, and a numpy number gives the Python float it equals
    (a float32 ``1.2`` computes with 1.2000000476837158, and is signed so).

    >>> import numpy as np
    >>> check_number("beta", np.float32(1.2)), check_number("sigma", 6), check_number("a", -0.0)
    (1.2000000476837158, 6.0, 0.0)
    """
    bounds = []
    if above is not None:
        bounds.append(f"> {above:g}")
    if at_least is not None:
        bounds.append(f">= {at_least:g}")
    if at_most is not None:
        bounds.append(f"<= {at_most:g}")
    wanted = "a finite number" + (" " + " and ".join(bounds) if bounds else "")
    ok = isinstance(value, numbers.Real) and not isinstance(value, bool)
    if ok:
        try:
            x = float(value)
        except OverflowError:  # a whole number beyond any float (10**400)
            x = math.inf
        ok = (
            math.isfinite(x)
            and (above is None or x > above)
            and (at_least is None or x >= at_least)
            and (at_most is None or x <= at_most)
        )
    if not ok:
        raise OptionError(f"`{name}` must be {wanted} (got {_shown(value)})")
    return x + 0.0  # -0.0 + 0.0 is 0.0
