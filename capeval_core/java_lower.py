"""Java's ``String.toLowerCase`` (English locale), which the reference jars lower-case with.

It differs from Python's ``str.lower`` only in when a capital sigma becomes final (ς):
Java's ``ConditionalSpecialCasing`` makes it final when, within the word around it, a cased
letter comes before it and none after it, and takes the word from ``BreakIterator``'s word
instance (the JDK's own rules, not Unicode's). Python looks across case-ignorable characters
instead, so "ΟΔΟΣ3-WAY" is "οδος3-way" in Java (the word ends at "3") and "οδοσ3-way" in
Python. This module segments text by the JDK's word rules and decides each sigma that way.
Java 17 also lowers by Unicode 13.0, so the few capitals whose lower case came later stay as
they are (:func:`unicode13_lower`).
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["java_lower", "unicode13_lower"]

_SIGMA = "\u03a3"

#: the capital letters whose lower case Unicode 14 added (Ⱟ, four Latin letters, Vithkuqi):
#: Python 3.11's ``str.lower`` maps them, Java 17, on Unicode 13.0, leaves them as they are.
#: Every other character Java 17 lowers as Python does (all code points compared with
#: OpenJDK 17.0.15: tests/core/test_java_lower.py).
_AFTER_UNICODE_13 = re.compile(
    "([\u2c2f\ua7c0\ua7d0\ua7d6\ua7d8\U00010570-\U0001057a\U0001057c-\U0001058a"
    "\U0001058c-\U00010592\U00010594\U00010595])"
)


def unicode13_lower(text: str) -> str:
    """``str.lower`` as Java 17 lowers characters (by Unicode 13.0): the letters whose lower
    case came later are kept, so a jar's and capeval's words stay equal.

    >>> unicode13_lower("A Dog \u2c2f"), "A Dog \u2c2f".lower()
    ('a dog \u2c2f', 'a dog \u2c5f')
    """
    if text.isascii() or not _AFTER_UNICODE_13.search(text):
        return text.lower()
    pieces = _AFTER_UNICODE_13.split(text)  # the kept letters at the odd places
    return "".join(p if i % 2 else p.lower() for i, p in enumerate(pieces))


# Each character's class in the JDK's word-break rules, one letter each:
# L letter, D digit, E enclosing mark, a danda, K kanji, T katakana, H hiragana, C CJK
# diacritic, p "." (mid-word, mid-number and number prefix), q quotes (mid-word and
# mid-number), n mid-number only, m mid-word only, r number prefix only, s number suffix,
# l line separator, R carriage return, t tab, w other space, x other control, o anything
# else.
_FIXED = {
    ".": "p",
    "'": "q",
    '"': "q",
    ",": "n",
    "\u066b": "n",
    "\u2027": "m",
    "\u00ad": "m",  # a format character, but the rules name it as mid-word
    "#": "r",
    "%": "s",
    "&": "s",
    "\u00a2": "s",
    "\u066a": "s",
    "\u2030": "s",
    "\u2031": "s",
    "\n": "l",
    "\x0c": "l",
    "\u2028": "l",
    "\u2029": "l",
    "\r": "R",
    "\t": "t",
    "\u0964": "a",
    "\u0965": "a",
    "\u3005": "K",
}


def _class(char: str) -> str:
    fixed = _FIXED.get(char)
    if fixed is not None:
        return fixed
    code = ord(char)
    if 0x4E00 <= code <= 0x9FA5 or 0xF900 <= code <= 0xFA2D:
        return "K"
    if 0x30A1 <= code <= 0x30FA or code in (0x30FD, 0x30FE):
        return "T"
    if 0x3041 <= code <= 0x3094 or code in (0x309D, 0x309E):
        return "H"
    if 0x3099 <= code <= 0x309C or code in (0x30FB, 0x30FC):
        return "C"
    category = unicodedata.category(char)
    if category[0] == "L" or category == "Mc":
        return "L"
    if category[0] == "N":
        return "D"
    if category in ("Mn", "Me"):
        return "E"
    if category in ("Pd", "Pc"):
        return "m"
    if category == "Sc":
        return "r"
    if category == "Zs":
        return "w"
    if category in ("Cc", "Zl", "Zp"):
        return "x"
    return "o"


_LET = "(?:LE*)"
_NUMBER = "(?:DE*)+(?:[pqn](?:DE*)+)*"
_WORD = f"{_LET}+(?:[mpq]{_LET}+)*a?"
_TAIL = f"(?:{_NUMBER}{_WORD})*(?:{_NUMBER}s?)?"
#: the rules after "break after every character": a longest match of any one is a word
_RULES = tuple(
    re.compile(rule)
    for rule in (
        f"(?:{_WORD})?{_TAIL}",  # words and numbers, with a number suffix
        f"[rp]{_TAIL}",  # the same after a number prefix
        "(?:[tw]E*)*R?l?",  # runs of spaces, with one line end
        "[TC]*",
        "[HC]*",
        "K*",
        "[^ElRtx]E+",  # anything else but a control with its enclosing marks
    )
)


def _word_ends(classes: str) -> list[int]:
    """Where each word ends, as the JDK's word BreakIterator finds them from the start."""
    ends = []
    pos = 0
    while pos < len(classes):
        longest = max((len(m.group()) for r in _RULES if (m := r.match(classes, pos))), default=0)
        pos += max(1, longest)  # at least one character: "break after every character"
        ends.append(pos)
    return ends


def _cased(char: str) -> bool:
    """``ConditionalSpecialCasing.isCased``: a Lu, Ll or Lt letter, or one of its few
    Other_Lowercase/Other_Uppercase ranges (Python's ``islower`` knows more of them)."""
    if unicodedata.category(char) in ("Lu", "Ll", "Lt"):
        return True
    c = ord(char)
    return (
        0x02B0 <= c <= 0x02B8
        or 0x02C0 <= c <= 0x02C1
        or 0x02E0 <= c <= 0x02E4
        or c in (0x0345, 0x037A)
        or 0x1D2C <= c <= 0x1D61
        or 0x2160 <= c <= 0x217F
        or 0x24B6 <= c <= 0x24E9
    )


def java_lower(text: str) -> str:
    """``text.toLowerCase(Locale.ENGLISH)`` as Java computes it.

    >>> java_lower("ΟΔΟΣ3-WAY"), java_lower("ΑΣ-Β"), java_lower("WAYΣ@D")
    ('οδος3-way', 'ασ-β', 'wayς@d')
    """
    if _SIGMA not in text:
        return unicode13_lower(text)
    # format characters (Cf) are invisible to the rules: they never end a word
    kept = [i for i, ch in enumerate(text) if ch == "\u00ad" or unicodedata.category(ch) != "Cf"]
    visible = "".join(text[i] for i in kept)
    ends = set(_word_ends("".join(map(_class, visible))))
    # Java asks the iterator whether a word ends at each position in turn; after a character
    # outside the Basic Multilingual Plane (two UTF-16 units) that is not the text's first, it
    # starts from the unit between them and always answers yes
    ends.update(q + 1 for q, ch in enumerate(visible) if ch > "\uffff" and kept[q] > 0)
    out = list(text)
    start = 0
    for end in sorted(ends):
        word = visible[start:end]
        for k, ch in enumerate(word):
            if ch == _SIGMA:
                final = any(map(_cased, word[:k])) and not any(map(_cased, word[k + 1 :]))
                out[kept[start + k]] = "\u03c2" if final else "\u03c3"
        start = end
    return "".join(ch if ch in "\u03c2\u03c3" else unicode13_lower(ch) for ch in out)
