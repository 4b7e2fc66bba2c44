"""METEOR's fragmentation penalty ``frag ** beta`` with the jar's own values (metric-spec §5.7).

meteor-1.5.jar raises the fragmentation (chunks over the mean number of matched words) to the
power beta with Java's ``Math.pow``. On x86-64 HotSpot (OpenJDK 17: the interpreter and both
compilers call one intrinsic) that function is faithfully rounded, not correctly rounded, and
neither is the C library's ``pow`` (glibc's): for beta = 0.2 they disagree, by one unit in the
last place, on about one base in 800, and ``Math.pow`` misses the correctly rounded result on
one distinct base in 1,600 (1,500 to 1,900 for the tasks' other betas; none for beta = 1). So
capeval computes the power by a rule that does not depend on the platform's mathematics
library:

* for beta of a METEOR task (:data:`capeval_core.metrics.meteor.TASKS`) and every base the
  jar can form from at most :data:`SPARSE_MAX` matched words (``c / (s / 2.0)``, ``c`` chunks
  ``<= s / 2``): ``Math.pow``'s own result, read from ``data/meteor_pow.npz``. The table
  holds every value for ``s <= DENSE_MAX`` (any pair the compiled aligner scores) and, up to
  ``SPARSE_MAX``, the bases where ``Math.pow`` is not correctly rounded with the direction of
  its error (``tools/meteor_pow_table.py`` made it with OpenJDK 17 on x86-64);
* any other base or beta (a corpus of many images, a beta given by hand): the correctly
  rounded power, which is ``Math.pow``'s on all but about one base in 1,600 (measured on the
  table's domain), computed with :mod:`decimal` at 40 digits. A corpus's pooled statistics
  can therefore still be one unit in the last place off the jar's, that rarely.

A value is a function of the double ``x`` alone, so a base formed from other counts that
rounds to a tabled double gets the tabled value, as ``Math.pow`` would give.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from decimal import Context, Decimal
from importlib.resources import files

import numpy as np

#: every base ``c / (s / 2.0)`` with ``s <= DENSE_MAX`` has its value in the table (the
#: compiled aligner's pairs: at most 64 words a side)
DENSE_MAX = 128
#: up to here the table lists the bases where ``Math.pow`` is not correctly rounded
SPARSE_MAX = 8192
TABLE = "data/meteor_pow.npz"

_DIGITS = 40


def correctly_rounded_pow(x: float, beta: float) -> float:
    """``x ** beta`` rounded once to the nearest double (``x >= 0``, ``beta >= 0``).

    >>> correctly_rounded_pow(0.5, 0.2), correctly_rounded_pow(0.0, 0.2)
    (0.8705505632961241, 0.0)
    """
    if math.isnan(x) or math.isnan(beta):
        return math.nan
    if beta == 0.0 or x == 1.0:
        return 1.0
    if x == 0.0:
        return 0.0 if beta > 0.0 else math.inf
    if math.isinf(x):
        return math.inf if beta > 0.0 else 0.0
    digits = _DIGITS
    while True:
        ctx = Context(prec=digits, Emin=-999_999, Emax=999_999)
        exact = ctx.exp(ctx.multiply(Decimal(beta), ctx.ln(Decimal(x))))
        y = float(exact)
        # the decimal is within 10**(1 - digits) of the power (relative): it decides the
        # rounding unless it lies that close to the midpoint between two doubles
        other = math.nextafter(y, math.inf if Decimal(y) < exact else -math.inf)
        mid = (Decimal(y) + Decimal(other)) / 2
        if y == 0.0 or math.isinf(y) or abs(exact - mid) > exact.scaleb(8 - digits).copy_abs():
            return y
        digits *= 2


@dataclass(frozen=True)
class PowTable:
    """``Math.pow(x, beta)`` of meteor-1.5.jar's JVM for one beta (see the module doc)."""

    beta: float
    #: values for ``(s, c)``, ``0 <= c <= s // 2``, ``s <= DENSE_MAX``, at ``offsets[s] + c``
    dense: np.ndarray
    #: base -> +1 or -1: ``Math.pow`` is the double above or below the correctly rounded one
    errors: dict[float, int]

    @functools.cached_property
    def by_base(self) -> dict[float, float]:
        s = np.repeat(np.arange(DENSE_MAX + 1), np.diff(dense_offsets()))
        c = np.arange(len(self.dense)) - dense_offsets()[s]
        with np.errstate(invalid="ignore"):
            x = c / (s / 2.0)
        x[0] = 0.0  # the perfect alignment's fragmentation
        return dict(zip(x.tolist(), self.dense.tolist(), strict=True))


@functools.cache
def dense_offsets() -> np.ndarray:
    """Where row ``s`` (bases ``c / (s / 2.0)``, ``c = 0 .. s // 2``) starts; row 0 is the
    single base 0.0."""
    sizes = np.arange(DENSE_MAX + 1) // 2 + 1
    out = np.zeros(DENSE_MAX + 2, dtype=np.int64)
    np.cumsum(sizes, out=out[1:])
    return out


@functools.cache
def pow_tables() -> dict[float, PowTable]:
    """The shipped tables by beta."""
    with files("capeval_core").joinpath(TABLE).open("rb") as f:
        data = np.load(f, allow_pickle=False)
        tables = {}
        for k, beta in enumerate(data["betas"].tolist()):
            p, q, sign = (data[f"{name}_{k}"] for name in ("error_p", "error_q", "error_sign"))
            errors = dict(zip((p / q).tolist(), sign.tolist(), strict=True))
            tables[beta] = PowTable(beta, data[f"dense_{k}"].astype(np.float64), errors)
    return tables


@functools.lru_cache(maxsize=1 << 16)
def jar_pow(x: float, beta: float) -> float:
    """``Math.pow(x, beta)`` as meteor-1.5.jar computes it, for a fragmentation ``x``.

    >>> jar_pow(110 / 117, 0.2)  # correctly rounded (and glibc's pow): 0.9877370960092114
    0.9877370960092116
    """
    table = pow_tables().get(beta)
    if table is not None:
        value = table.by_base.get(x)
        if value is not None:
            return value
    y = correctly_rounded_pow(x, beta)
    if table is not None and x in table.errors:
        y = math.nextafter(y, math.inf * table.errors[x])
    return y


@functools.lru_cache(maxsize=16)
def dense_values(beta: float) -> np.ndarray:
    """The values the compiled aligner looks up, indexed like :attr:`PowTable.dense`: the
    table's for a task's beta, else correctly rounded powers (computed once per beta)."""
    table = pow_tables().get(beta)
    if table is not None:
        return table.dense
    offsets = dense_offsets()
    out = np.empty(int(offsets[-1]), dtype=np.float64)
    for s in range(DENSE_MAX + 1):
        for c in range(s // 2 + 1):
            out[offsets[s] + c] = correctly_rounded_pow(c / (s / 2.0) if c else 0.0, beta)
    return out
