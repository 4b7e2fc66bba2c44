"""The Snowball English ("Porter2") stemmer that METEOR 1.5's stem module uses (§5.4).

Written from the algorithm's published definition (the Snowball project's ``english.sbl``,
the version the ``meteor-1.5.jar`` of 2015 carries as ``org.tartarus.snowball.ext.englishStemmer``)
so that METEOR needs no stemming package (NLTK's ``EnglishStemmer`` differs from the jar's
on words like "realization", see the tests). The tests compare it with the jar's own stemmer
class word for word.

Like the Java original it counts UTF-16 code units: a character outside the Basic
Multilingual Plane is two units (it matters to the length test and the R1/R2 regions).
"""

from __future__ import annotations

import functools

_VOWELS = frozenset("aeiouy")
_DOUBLES = ("bb", "dd", "ff", "gg", "mm", "nn", "pp", "rr", "tt")
_LI_ENDINGS = frozenset("cdeghkmnrt")

#: words stemmed to a fixed form, or left alone, before anything else
_EXCEPTION1 = {
    "skis": "ski",
    "skies": "sky",
    "dying": "die",
    "lying": "lie",
    "tying": "tie",
    "idly": "idl",
    "gently": "gentl",
    "ugly": "ugli",
    "early": "earli",
    "only": "onli",
    "singly": "singl",
    "sky": "sky",
    "news": "news",
    "howe": "howe",
    "atlas": "atlas",
    "cosmos": "cosmos",
    "bias": "bias",
    "andes": "andes",
}
#: words left alone after step 1a
_EXCEPTION2 = frozenset(
    ("inning", "outing", "canning", "herring", "earring", "proceed", "exceed", "succeed")
)
#: prefixes after which R1 starts, whatever the letters
_R1_PREFIXES = ("gener", "commun", "arsen")

# Suffix lists of steps 2-4: the longest suffix present is the one that counts; when its
# condition fails, the step does nothing (no shorter suffix is tried).
_STEP2 = {
    "tional": "tion",
    "enci": "ence",
    "anci": "ance",
    "abli": "able",
    "entli": "ent",
    "izer": "ize",
    "ization": "ize",
    "ational": "ate",
    "ation": "ate",
    "ator": "ate",
    "alism": "al",
    "aliti": "al",
    "alli": "al",
    "fulness": "ful",
    "ousli": "ous",
    "ousness": "ous",
    "iveness": "ive",
    "iviti": "ive",
    "biliti": "ble",
    "bli": "ble",
    "ogi": "og",  # only after "l"
    "fulli": "ful",
    "lessli": "less",
    "li": "",  # only after a valid li-ending
}
_STEP3 = {
    "tional": "tion",
    "ational": "ate",
    "alize": "al",
    "icate": "ic",
    "iciti": "ic",
    "ical": "ic",
    "ful": "",
    "ness": "",
    "ative": "",  # only in R2
}
_STEP4 = (
    "al", "ance", "ence", "er", "ic", "able", "ible", "ant", "ement", "ment", "ent", "ism",
    "ate", "iti", "ous", "ive", "ize", "ion",
)  # fmt: skip


def _by_length(suffixes) -> tuple[tuple[int, frozenset[str]], ...]:
    """Suffixes grouped by length, longest first (for :func:`_longest`)."""
    lengths = sorted({len(s) for s in suffixes}, reverse=True)
    return tuple((n, frozenset(s for s in suffixes if len(s) == n)) for n in lengths)


def _longest(word: str, groups: tuple[tuple[int, frozenset[str]], ...]) -> str | None:
    """The longest of the suffixes (grouped by :func:`_by_length`) that ``word`` ends with."""
    for n, group in groups:
        if len(word) >= n and word[-n:] in group:
            return word[-n:]
    return None


_STEP1A = _by_length(("sses", "ied", "ies", "s", "us", "ss"))
_STEP1B = _by_length(("eed", "eedly", "ed", "edly", "ing", "ingly"))
_STEP2_GROUPS = _by_length(_STEP2)
_STEP3_GROUPS = _by_length(_STEP3)
_STEP4_GROUPS = _by_length(_STEP4)


def _region(word: str, start: int) -> int:
    """Position after the first non-vowel that follows a vowel, from ``start`` on."""
    n = len(word)
    i = start
    while i < n and word[i] not in _VOWELS:
        i += 1
    while i < n and word[i] in _VOWELS:
        i += 1
    return min(i + 1, n)


def _ends_short_syllable(word: str) -> bool:
    """A vowel followed by a non-vowel other than w, x or Y and preceded by a non-vowel; or a
    two-letter word, vowel then non-vowel."""
    n = len(word)
    if n >= 3:
        return (
            word[-1] not in _VOWELS
            and word[-1] not in "wxY"
            and word[-2] in _VOWELS
            and word[-3] not in _VOWELS
        )
    return n == 2 and word[0] in _VOWELS and word[1] not in _VOWELS


def _utf16(word: str) -> str:
    """The word as UTF-16 code units (a supplementary character becomes its surrogates)."""
    if not word or max(word) <= "\uffff":
        return word
    return "".join(
        chr(c)
        if c <= 0xFFFF
        else chr(0xD800 + ((c - 0x10000) >> 10)) + chr(0xDC00 + ((c - 0x10000) & 0x3FF))
        for c in map(ord, word)
    )


def _from_utf16(units: str) -> str:
    return units.encode("utf-16-le", "surrogatepass").decode("utf-16-le")


@functools.lru_cache(maxsize=1 << 17)
def stem(word: str) -> str:
    """The Snowball English stem of a lower-cased word.

    >>> [stem(w) for w in ("sitting", "couches", "generously", "running", "skies", "dying")]
    ['sit', 'couch', 'generous', 'run', 'sky', 'die']
    """
    units = _utf16(word)
    out = _stem(units)
    return out if units is word else _from_utf16(out)


def _stem(word: str) -> str:
    fixed = _EXCEPTION1.get(word)
    if fixed is not None:
        return fixed
    if len(word) < 3:
        return word
    # prelude: a leading apostrophe goes; y at the start or after a vowel is a consonant (Y)
    if word.startswith("'"):
        word = word[1:]
    if word.startswith("y"):
        word = "Y" + word[1:]
    if "y" in word:
        chars = list(word)
        for i in range(1, len(chars)):
            if chars[i] == "y" and chars[i - 1] in _VOWELS:
                chars[i] = "Y"
        word = "".join(chars)
    # regions
    p1 = len(word)
    for prefix in _R1_PREFIXES:
        if word.startswith(prefix):
            p1 = len(prefix)
            break
    else:
        p1 = _region(word, 0)
    p2 = _region(word, p1)
    if p1 == len(word):
        p2 = len(word)
    word = _step1a(word)
    if word not in _EXCEPTION2:
        word = _step1b(word, p1)
        word = _step1c(word)
        word = _step2(word, p1)
        word = _step3(word, p1, p2)
        word = _step4(word, p2)
        word = _step5(word, p1, p2)
    return word.replace("Y", "y")


def _step1a(word: str) -> str:
    for s in ("'s'", "'s", "'"):
        if word.endswith(s):
            word = word[: -len(s)]
            break
    s = _longest(word, _STEP1A)
    if s == "sses":
        return word[:-2]
    if s in ("ied", "ies"):
        return word[:-3] + ("i" if len(word) - 3 >= 2 else "ie")
    if s == "s" and any(c in _VOWELS for c in word[:-2]):
        return word[:-1]  # the part before the s holds a vowel not immediately before it
    return word


def _step1b(word: str, p1: int) -> str:
    s = _longest(word, _STEP1B)
    if s is None:
        return word
    start = len(word) - len(s)
    if s in ("eed", "eedly"):
        return word[:start] + "ee" if start >= p1 else word
    if not any(c in _VOWELS for c in word[:start]):
        return word
    word = word[:start]
    if word.endswith(("at", "bl", "iz")):
        return word + "e"
    if word.endswith(_DOUBLES):
        return word[:-1]
    if len(word) == p1 and _ends_short_syllable(word):
        return word + "e"
    return word


def _step1c(word: str) -> str:
    if len(word) > 2 and word[-1] in "yY" and word[-2] not in _VOWELS:
        return word[:-1] + "i"
    return word


def _step2(word: str, p1: int) -> str:
    s = _longest(word, _STEP2_GROUPS)
    if s is None or len(word) - len(s) < p1:
        return word
    start = len(word) - len(s)
    if s == "ogi":
        return word[:start] + "og" if start > 0 and word[start - 1] == "l" else word
    if s == "li":
        return word[:start] if start > 0 and word[start - 1] in _LI_ENDINGS else word
    return word[:start] + _STEP2[s]


def _step3(word: str, p1: int, p2: int) -> str:
    s = _longest(word, _STEP3_GROUPS)
    if s is None or len(word) - len(s) < p1:
        return word
    start = len(word) - len(s)
    if s == "ative":
        return word[:start] if start >= p2 else word
    return word[:start] + _STEP3[s]


def _step4(word: str, p2: int) -> str:
    s = _longest(word, _STEP4_GROUPS)
    if s is None or len(word) - len(s) < p2:
        return word
    start = len(word) - len(s)
    if s == "ion":
        return word[:start] if start > 0 and word[start - 1] in "st" else word
    return word[:start]


def _step5(word: str, p1: int, p2: int) -> str:
    if word.endswith("e"):
        start = len(word) - 1
        if start >= p2 or (start >= p1 and not _ends_short_syllable(word[:start])):
            return word[:start]
    elif word.endswith("l"):
        start = len(word) - 1
        if start >= p2 and start > 0 and word[start - 1] == "l":
            return word[:start]
    return word
