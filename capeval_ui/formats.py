"""How the app writes a number: one rule for cards, tables, chart labels and hover text.

Scores and statistics get fixed decimals (:data:`DIGITS`); a value closer to 0 than
:data:`SMALL` (but not 0) reads ``< 0.001`` everywhere (``> −0.001`` below 0), so BLEU-4's
``1.014e-08`` never reads ``0.0000`` in one place and ``1.014e-08`` in another (issue 42).
Where the exact value matters it goes beside the short one, in a tooltip or a hover label
(:func:`exact`). p-values follow the same rule (``p < 0.001`` is how papers print them).

Plain functions, no Streamlit: every page and view (the Systems page's too) writes its
numbers through this module, and the doctests below are the rule's specification. So does
text a user gave (a file name, a value from a link) that goes into a Markdown line:
:func:`literal`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable

#: what an empty or undefined cell shows (never "None" or "nan")
EMPTY = "—"
#: decimals of a score, a correlation or a p-value
DIGITS = 4
#: the smallest magnitude written with decimals; closer to 0 reads "< 0.001"
SMALL = 1e-3
SMALL_TEXT = "< 0.001"
#: a small value below 0, and the signed forms (a difference)
SMALL_NEGATIVE_TEXT = "> −0.001"
SMALL_POSITIVE_SIGNED = "< +0.001"
#: a p-value that underflowed to 0 in double precision (a p-value is never exactly 0)
UNDERFLOW_TEXT = "< 1e-300"


def _value(value: object) -> float | None:
    """``value`` as a float, or None for a missing or undefined one."""
    if value is None or isinstance(value, str):
        return None
    v = float(value)  # type: ignore[arg-type]
    return None if math.isnan(v) else v


def is_small(value: object) -> bool:
    """Whether ``value`` is written as ``< 0.001`` (or ``> −0.001``): not 0, closer than that.

    >>> is_small(3.989e-06), is_small(0.0), is_small(0.001), is_small(-2e-4)
    (True, False, False, True)
    """
    v = _value(value)
    return v is not None and v != 0 and abs(v) < SMALL


def format_number(value: object, digits: int = DIGITS) -> str:
    """A score with ``digits`` decimals; a value closer to 0 than 0.001 reads ``< 0.001``
    (:func:`exact` gives its digits for a tooltip); text is returned as it is.

    >>> format_number(0.123456), format_number(3.989e-06), format_number(0.0)
    ('0.1235', '< 0.001', '0.0000')
    >>> format_number(-0.0004), format_number(2.5, 1), format_number(None), format_number("—")
    ('> −0.001', '2.5', '—', '—')
    """
    if isinstance(value, str):
        return value
    v = _value(value)
    if v is None:
        return EMPTY
    if is_small(v):
        return SMALL_TEXT if v > 0 else SMALL_NEGATIVE_TEXT
    return f"{v:.{digits}f}".replace("-", "−")


def format_signed(value: object, digits: int = DIGITS) -> str:
    """A difference: :func:`format_number` with its sign (``+0.0312``, ``−0.2500``,
    ``< +0.001``).

    >>> format_signed(0.03125), format_signed(-0.25), format_signed(1e-5), format_signed(0.0)
    ('+0.0312', '−0.2500', '< +0.001', '+0.0000')
    """
    text = format_number(value, digits)
    v = _value(value)
    if v is None or text.startswith(("−", ">")):
        return text
    return SMALL_POSITIVE_SIGNED if is_small(v) else "+" + text


def format_pvalue(value: object) -> str:
    """A p-value: :data:`DIGITS` decimals, ``< 0.001`` below 0.001, ``< 1e-300`` where the
    double underflowed to 0.

    >>> [format_pvalue(p) for p in (0.0312, 9.6e-10, 0.0, float("nan"))]
    ['0.0312', '< 0.001', '< 1e-300', '—']
    """
    v = _value(value)
    if v is None:
        return EMPTY
    if v == 0:
        return UNDERFLOW_TEXT
    return format_number(v)


def format_percent(value: object, digits: int = 1) -> str:
    """A share in per cent with one decimal (``87.5%``).

    >>> format_percent(87.5), format_percent(None)
    ('87.5%', '—')
    """
    v = _value(value)
    return EMPTY if v is None else f"{v:.{digits}f}%"


def format_share(value: object, digits: int = 1) -> str:
    """A share (a fraction of 1) in per cent: :func:`format_percent` of ``100 · value``.

    >>> format_share(0.6666667), format_share(1.0), format_share(float("nan"))
    ('66.7%', '100.0%', '—')
    """
    v = _value(value)
    return EMPTY if v is None else format_percent(100.0 * v, digits)


def format_count(value: object) -> str:
    """A count, a whole number however it is stored (``15``, never ``15.000000``), with a
    thousands separator.

    >>> format_count(15.0), format_count(1000), format_count(None)
    ('15', '1,000', '—')
    """
    v = _value(value)
    return EMPTY if v is None else f"{round(v):,}"


def exact(value: object) -> str:
    """The value with six significant digits, for a tooltip or a hover label beside the
    short form (``3.98923e-06``).

    >>> exact(3.989234e-06), exact(0.123456789), exact(0.0), exact(None)
    ('3.98923e-06', '0.123457', '0', '—')
    """
    v = _value(value)
    return EMPTY if v is None else f"{v:.6g}"


def with_exact(value: object, digits: int = DIGITS) -> str:
    """The short form, and the exact value after it when the short one hides digits.

    >>> with_exact(3.989234e-06), with_exact(0.5)
    ('< 0.001 (exactly 3.98923e-06)', '0.5000')
    """
    text = format_number(value, digits)
    return f"{text} (exactly {exact(value)})" if is_small(value) else text


def hover_texts(values: Iterable[object]) -> list[str]:
    """Each value's :func:`exact` form, for a chart's hover labels (``customdata``)."""
    return [exact(v) for v in values]


def label_texts(values: Iterable[object], digits: int = DIGITS) -> list[str]:
    """Each value as a chart writes it beside its bar or in its cell: :func:`format_number`,
    as the tables write it (missing values: no label).

    >>> label_texts([0.8891, 0.0625, 3.989e-06, float("nan")])
    ['0.8891', '0.0625', '< 0.001', '']
    """
    return ["" if _value(v) is None else format_number(v, digits) for v in values]


#: what Markdown (and Streamlit's $...$ maths) reads in a line of text
_MARKDOWN = re.compile(r"([\\`*_{}\[\]()#+!|~<>$])")
#: where GitHub's Markdown makes a link by itself, from the text after escapes are read (so
#: a backslash does not stop it): https://..., www. and the @ of an e-mail address. A word
#: joiner (U+2060, invisible) inside each keeps it text; so does a colon before a word
#: (Streamlit's :smile: and :material/...: codes)
_BARE = re.compile(r"(?i)(?<=:)(?=//)|(?<=\bwww)(?=\.)|(?=@)|(?<=:)(?=\w)")
WORD_JOINER = "\u2060"


def literal(text: object) -> str:
    """``text`` escaped for a Markdown line (``st.warning``, ``st.caption``), so that it
    shows as typed: a link's value or a file's name is never a link, bold text or maths.

    >>> literal("[click](http://x) **b** $x$ a@b.org").replace(WORD_JOINER, "|")
    '\\\\[click\\\\]\\\\(http:|//x\\\\) \\\\*\\\\*b\\\\*\\\\* \\\\$x\\\\$ a|@b.org'
    """
    return _BARE.sub(WORD_JOINER, _MARKDOWN.sub(r"\\\1", str(text)))
