"""CoreNLP 3.6.0's lemmas (the ``lemma`` annotator SPICE 1.0 runs), in pure Python.

SPICE stores, for each token, what CoreNLP's ``MorphaAnnotator`` gives for its ``(word,
tag)``; SPICE lower-cases it afterwards. CoreNLP's analyser is a lexer over ``word_TAG``:

* the tag picks the analysis: tags starting ``NN`` plus one more character other than ``P``
  (``NNS``) get the noun rules, ``NNP``/``NNPS`` keep the word exactly as written, tags
  starting ``V`` get the verb rules, every other tag (``NN`` itself included: the noun rule
  needs a character after ``NN``) only lower-cases the word;
* a few (word, tag) pairs have their own analysis before that (``them``/PRP -> ``they``,
  ``an``/DT -> ``a``, ``'s``/VBZ -> ``be``, ``I``/PRP kept as ``I``);
* noun and verb words go through ordered suffix rules (the longest match wins, then the
  first rule). A hyphen splits a word: the part up to the first hyphen is only
  lower-cased and the rest is analysed again, so ``ice-creams`` -> ``ice-cream``; a word
  ending in a hyphen gets ``_TAG`` appended (``cat-``/NNS -> ``cat-_NNS``), as CoreNLP does;
* verbs written ``verb_particle`` (``ran_up``/VBD) are lemmatised as ``run_up``.

This module implements the general rules. CoreNLP also carries long lists of irregular
forms; instead of those lists, ``capeval_core/data/spice_morphology.tsv`` holds only the
entries where these rules and CoreNLP 3.6.0 disagree, generated from CoreNLP itself over the
400,000 GloVe 6B words and the COCO train2014 caption words (and regular-looking inflections
of them) crossed with the Penn Treebank tags, plus the verb stems whose final consonant
CoreNLP undoubles (``stopped`` -> ``stop``)::

    python -m tools.spice_oracle.make_lemma_exceptions capeval_core/data/spice_morphology.tsv

What the tables cannot know: an irregular form of a word outside that vocabulary
(``coosies`` -> ``coosie``), and a listed hyphenated word that the general rules happen to
get right, as the start of a longer unseen word (``hoop-lamses`` -> ``hoop-la``). Words
with tabs, carriage returns or other line separators inside follow CoreNLP only for the
first such character; an empty tag is refused (SPICE's pipeline always tags).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from importlib import resources

from capeval_core.errors import InputError, ResourceError
from capeval_core.java_lower import java_lower

DATA = "spice_morphology.tsv"
_MEMO_LIMIT = 1_000_000

#: particles after an underscore that make a ``verb_particle`` token a phrasal verb
_PARTICLE_WORDS = (
    "abroad across after ahead along aside away around back down forward in off on over out "
    "round together through up"
)
PARTICLES = frozenset(_PARTICLE_WORDS.split())

# CoreNLP hides these inside a word while it lexes ``word_TAG`` (and restores them after)
_QUOTE = {"_": "\u1cf0", " ": "\u1cf1", "\n": "\u1cf2"}
_QUOTE_TABLE = str.maketrans(_QUOTE)
_UNQUOTE_TABLE = str.maketrans({v: k for k, v in _QUOTE.items()})
# separators the lexer stops at: its answer is then the first of them
_SEPARATORS = frozenset("\t\r\u2028\u2029\u000b\u000c\u0085")
# The rules' letter classes hold ASCII letters of either case; their literal letters also
# match the four other characters whose upper or lower case is an ASCII letter
_ASCII_LOWER = str.maketrans({chr(c): chr(c + 32) for c in range(ord("A"), ord("Z") + 1)})
_LITERAL_VARIANTS = {"s": "\u017f", "i": "\u0131\u0130", "k": "\u212a"}
_FOLD = str.maketrans({v: k for k, vs in _LITERAL_VARIANTS.items() for v in vs})


def _caseless_literals(regex: str) -> str:
    """``regex`` with each literal letter outside ``[...]`` widened to its variants."""
    out, in_class = [], False
    for ch in regex:
        if ch == "[" and not in_class:
            in_class = True
        elif ch == "]" and in_class:
            in_class = False
        elif not in_class and ch in _LITERAL_VARIANTS:
            ch = f"[{ch}{_LITERAL_VARIANTS[ch]}]"
        out.append(ch)
    return "".join(out)


# -- the general rules ----------------------------------------------------------------------
_MACROS = {
    "A": r"[+a-z0-9']",
    "V": "[aeiou]",
    "VY": "[aeiouy]",
    "C": "[bcdfghjklmnpqrstvwxyz]",
    "CXY": "[bcdfghjklmnpqrstvwxz]",
    "CXY2": "(?:" + "|".join(c + c for c in "bcdfghjklmnpqrstvwxz") + ")",
    "S2": "(?:ss|zz)",
    "S": "(?:[sxz]|[cs]h)",
    "PRE": "(?:be|ex|in|mis|pre|pro|re)",
    "EDING": "(?:ed|ing)",
    "ESEDING": "(?:es|ed|ing)",
}

# An action turns the matched text into the lemma:
#   ("stem", n, add)   drop n characters, lower-case, append add
#   ("lower",)         lower-case
#   ("double", n)      drop n characters and the doubled consonant before them, unless the
#                      stem is not one CoreNLP undoubles (then keep the consonant)
#   ("semi", n, add)   drop the inflection (es/ed/ing, read off the last letter) and n more
#                      characters, lower-case, append add
Action = tuple


def _stem(n: int, add: str = "") -> Action:
    return ("stem", n, add)


_LOWER: Action = ("lower",)

# shared by nouns and verbs, after each one's own rules
_PLURAL_RULES: list[tuple[str, Action]] = [
    ("{A}*(?:us|ss|sis|eed)", _LOWER),
    ("{A}*{V}ses", _stem(1)),
    ("{A}+{CXY}zes", _stem(2)),
    ("{A}*{VY}zes", _stem(1)),
    ("{A}+{S2}es", _stem(2)),
    ("{A}+{V}rses", _stem(1)),
    ("{A}+onses", _stem(1)),
    ("{A}+{S}es", _stem(2)),
    ("{A}+thes", _stem(1)),
    ("{A}+{CXY}[cglsv]es", _stem(1)),
    ("{A}+ettes", _stem(1)),
    ("{A}+{C}ies", _stem(3, "y")),
    ("{A}*{CXY}oes", _stem(2)),
    ("{A}+s", _stem(1)),
]

_NOUN_RULES: list[tuple[str, Action]] = [
    ("{A}+-works", _LOWER),
    ("{A}+hedra", _stem(2, "ron")),
    ("(?:{A}*metr|{A}*litr|{A}+ett)es", _stem(1)),
    ("{A}+itis", _LOWER),
    ("{A}*phobia", _LOWER),
    ("{A}+philia", _LOWER),
    ("(?:{A}*-abus|{A}*-us)es", _stem(1)),  # one rule: its alternatives with a hyphen
    ("(?:{A}*[hlmp]ous|{A}*[af]us)es", _stem(1)),  # and those without
    ("{A}*shoes", _stem(1)),
    ("{A}+uses", _stem(2)),
    (r"(?:{A}|\.)+\.s\.", _LOWER),
    (r"(?:{A}|\.)+\.'s\.", _stem(4, ".")),
    (r"(?:{A}|\.)+s\.", _stem(2, ".")),
    ("{A}*men", _stem(2, "an")),
    ("{A}*wives", _stem(3, "fe")),
    ("{A}+zoa", _stem(1, "on")),
    ("{A}+iia", _stem(2, "um")),
    ("{A}+e[mn]ia", _LOWER),
    ("{A}+ia", _stem(1, "um")),
    ("{A}+la", _stem(1, "um")),
    ("[dmclxvi]+i", _LOWER),  # roman numerals
    ("{A}+i", _stem(1, "us")),
    ("{A}+ae", _stem(2, "a")),
    ("{A}+ata", _stem(3, "a")),
    *_PLURAL_RULES,
]

_VERB_RULES: list[tuple[str, Action]] = [
    ("{PRE}*creat{EDING}", ("semi", 0, "e")),
    ("{PRE}*rout{EDING}", ("semi", 0, "e")),
    ("{A}*-us{ESEDING}", ("semi", 0, "e")),  # one rule, as for nouns
    ("(?:{A}*[hlmp]ous|{A}*[af]us){ESEDING}", ("semi", 0, "e")),
    ("{A}*shoes", _stem(1)),
    ("{A}+uses", _stem(2)),
    ("{A}+used", _stem(2)),
    ("{A}+using", _stem(3)),
    *_PLURAL_RULES,
    # -ed
    ("{A}+{CXY}zed", _stem(2)),
    ("{A}*{VY}zed", _stem(1)),
    ("{A}+{S2}ed", _stem(2)),
    ("{A}+{CXY}zing", _stem(3)),
    ("{A}*{VY}zing", _stem(3, "e")),
    ("{A}+{S2}ing", _stem(3)),
    ("{C}+{V}lled", _stem(2)),
    ("{C}+{V}lling", _stem(3)),
    ("{A}*{C}{V}{CXY2}ed", ("double", 2)),
    ("{A}*{C}{V}{CXY2}ing", ("double", 3)),
    ("{CXY}+ed", _LOWER),
    ("{PRE}*{C}{V}nged", _stem(2)),
    ("{A}+icked", _stem(2)),
    ("{A}*{C}ined", _stem(2, "e")),
    ("{A}*{C}{V}[npwx]ed", _stem(2)),
    ("{PRE}*{C}+ored", _stem(2, "e")),
    ("{A}+ctored", _stem(2)),
    ("{A}*{C}[clnt]ored", _stem(2, "e")),
    ("{A}+[eo]red", _stem(2)),
    ("{A}+{C}ied", _stem(3, "y")),
    ("{A}*qu{V}{C}ed", _stem(2, "e")),
    ("{A}+u{V}ded", _stem(2, "e")),
    ("{A}*{C}leted", _stem(2, "e")),
    ("{PRE}*{C}+[ei]ted", _stem(2, "e")),
    ("{A}+[ei]ted", _stem(2)),
    ("{PRE}{CXY}{{2}}eated", _stem(2)),
    ("{A}*{V}{CXY}{{2}}eated", _stem(2, "e")),
    ("{A}+[eo]ated", _stem(2)),
    ("{A}+{V}ated", _stem(2, "e")),
    ("{A}*{V}{{2}}[cgsv]ed", _stem(2, "e")),
    ("{A}*{V}{{2}}{C}ed", _stem(2)),
    ("{A}+[rw]led", _stem(2)),
    ("{A}+thed", _stem(2, "e")),
    ("{A}+ued", _stem(2, "e")),
    ("{A}+{CXY}[cglsv]ed", _stem(2, "e")),
    ("{A}+{CXY}{{2}}ed", _stem(2)),
    ("{A}+{VY}{{2}}ed", _stem(2)),
    ("{A}+ed", _stem(2, "e")),
    # -ing
    ("{CXY}+ing", _LOWER),
    ("{PRE}*{C}{V}nging", _stem(3)),
    ("{A}+icking", _stem(3)),
    ("{A}*{C}ining", _stem(3, "e")),
    ("{A}*{C}{V}[npwx]ing", _stem(3)),
    ("{A}*qu{V}{C}ing", _stem(3, "e")),
    ("{A}+u{V}ding", _stem(3, "e")),
    ("{A}*{C}leting", _stem(3, "e")),
    ("{PRE}*{C}+[ei]ting", _stem(3, "e")),
    ("{A}+[ei]ting", _stem(3)),
    ("{A}*{PRE}{CXY}{{2}}eating", _stem(3)),
    ("{A}*{V}{CXY}{{2}}eating", _stem(3, "e")),
    ("{A}+[eo]ating", _stem(3)),
    ("{A}+{V}ating", _stem(3, "e")),
    ("{A}*{V}{{2}}[cgsv]ing", _stem(3, "e")),
    ("{A}*{V}{{2}}{C}ing", _stem(3)),
    ("{A}+[rw]ling", _stem(3)),
    ("{A}+thing", _stem(3, "e")),
    ("{A}+{CXY}[cglsv]ing", _stem(3, "e")),
    ("{A}+{CXY}{{2}}ing", _stem(3)),
    ("{A}+uing", _stem(3, "e")),
    ("{A}+{VY}{{2}}ing", _stem(3)),
    ("{A}+ying", _stem(3)),
    ("{A}*{CXY}oing", _stem(3)),
    ("{PRE}*{C}+oring", _stem(3, "e")),
    ("{A}+ctoring", _stem(3)),
    ("{A}*{C}[clt]oring", _stem(3, "e")),
    ("{A}+[eo]ring", _stem(3)),
    ("{A}+ing", _stem(3, "e")),
]


@dataclass(frozen=True)
class _State:
    """One analysis (nouns or verbs): its rules compiled for matching a hyphen-free run as a
    whole (one alternation, tried in rule order) and, apart, the rules that span a hyphen."""

    plain: re.Pattern
    plain_actions: tuple[Action, ...]
    hyphen: tuple[tuple[re.Pattern, Action], ...]

    @classmethod
    def compile(cls, rules: list[tuple[str, Action]]) -> _State:
        plain, actions, hyphen = [], [], []
        for pattern, action in rules:
            regex = _caseless_literals(pattern.format(**_MACROS))
            if "-" in pattern:
                hyphen.append((re.compile(regex), action))
            else:
                plain.append(f"(?P<r{len(actions)}>{regex})")
                actions.append(action)
        return cls(re.compile("|".join(plain)), tuple(actions), tuple(hyphen))


_NOUN = _State.compile(_NOUN_RULES)
_VERB = _State.compile(_VERB_RULES)


@dataclass
class Tables:
    """Where the general rules are not CoreNLP: per analysis, the words (ASCII-lower-cased)
    whose lemma is listed; per (word, tag), the pairs with their own analysis (a lemma, or
    ``None``: the word as written); and the stems whose doubled consonant is undoubled."""

    noun: dict[str, str] = field(default_factory=dict)
    verb: dict[str, str] = field(default_factory=dict)
    pair: dict[tuple[str, str], str | None] = field(default_factory=dict)
    undouble: frozenset[str] = frozenset()


class Morphology:
    """The analyser over a set of :class:`Tables` (``lemma`` uses the shipped ones)."""

    def __init__(self, tables: Tables) -> None:
        self.tables = tables
        self._cache: dict[tuple[str, str], str] = {}
        # listed words with a hyphen also match the start of a longer word (CoreNLP's lists
        # are rules: "hoop-la" wins over the split in "hoop-lamses"), by their first part
        self._analyses = {}
        for name, state, listed in (("noun", _NOUN, tables.noun), ("verb", _VERB, tables.verb)):
            spanning: dict[str, list[str]] = {}
            for w in listed:
                if "-" in w:
                    spanning.setdefault(w[: w.index("-")], []).append(w)
            self._analyses[name] = (state, listed, spanning)

    def lemma(self, word: str, tag: str) -> str:
        key = (word, tag)
        hit = self._cache.get(key)
        if hit is None:
            if len(self._cache) >= _MEMO_LIMIT:  # bounded: a long-lived app sees any text
                self._cache.clear()
            hit = self._cache[key] = self._compute(word, tag)
        return hit

    def _compute(self, word: str, tag: str) -> str:
        if not isinstance(word, str) or not isinstance(tag, str):
            raise InputError(f"lemma(word, tag) takes two strings, got {word!r}, {tag!r}")
        if not tag:
            raise InputError(f"lemma of {word!r}: the tag is empty (expected a Penn tag)")
        if tag.startswith("VB") and "_" in word:
            parts = word.split("_")
            while parts and not parts[-1]:  # as Java's String.split drops trailing empties
                parts.pop()
            if len(parts) == 2 and parts[1] in PARTICLES:
                return self._word(parts[0], tag) + "_" + parts[1]
        return self._word(word, tag)

    def _word(self, word: str, tag: str) -> str:
        quoted = word.translate(_QUOTE_TABLE)
        out = self._quoted(quoted, tag)
        return out.translate(_UNQUOTE_TABLE) if quoted != word else out

    def _quoted(self, text: str, tag: str) -> str:
        for ch in text:
            if ch in _SEPARATORS:
                return ch
        if not text:
            return "_" + tag
        key = text.translate(_ASCII_LOWER)
        pair = self.tables.pair
        for k in (key, key.translate(_FOLD)):  # listed as read, else as a literal rule reads
            if (k, tag) in pair:
                own = pair[k, tag]
                return text if own is None else own
        if len(tag) > 2 and tag[:2].lower() == "nn":
            if tag[2] == "P":
                return text
            return self._analyse(text, key, tag, "noun")
        if tag[0] in "Vv":
            return self._analyse(text, key, tag, "verb")
        return java_lower(text)

    def _analyse(self, text: str, key: str, tag: str, analysis: str) -> str:
        """The noun or verb analysis of ``text`` (``key``: its ASCII-lower-cased form)."""
        if not text:  # after a final hyphen CoreNLP's lexer returns the tag it reads next
            return "_" + tag
        state, listed, spanning = self._analyses[analysis]
        own = listed.get(key)
        if own is None:
            own = listed.get(key.translate(_FOLD))
        if own is not None:
            return own
        run = key.find("-")
        if run < 0:
            m = state.plain.fullmatch(key)
            if m is None:
                return java_lower(text)
            action = state.plain_actions[int(m.lastgroup[1:])]
            return self._act(action, text, key)
        best, chosen, literal = run + 1, None, None  # what spans the hyphen beats the split
        for word in spanning.get(key[:run], ()):  # if longer (equal: the earlier rule)
            if len(word) > best and key.startswith(word):
                best, literal = len(word), word
        for pattern, action in state.hyphen:
            for end in range(len(key), best, -1):
                if pattern.fullmatch(key, 0, end):
                    best, chosen, literal = end, action, None
                    break
        if literal is not None:
            return listed[literal]
        if chosen is not None:
            return self._act(chosen, text[:best], key[:best])
        head = run + 1
        return java_lower(text[:head]) + self._analyse(text[head:], key[head:], tag, analysis)

    def _act(self, action: Action, text: str, key: str) -> str:
        kind = action[0]
        if kind == "stem":
            return java_lower(text[: len(text) - action[1]]) + action[2]
        if kind == "lower":
            return java_lower(text)
        if kind == "double":
            low = java_lower(text)
            cut = len(text) - action[1]
            stem = low[: cut - 1]
            return stem if stem in self.tables.undouble else stem + low[cut - 1]
        last = key[-1]  # "semi": the inflection's last letter, read exactly
        cut = len(text) - {"s": 2, "d": 2, "g": 3}[last] - action[1] if last in "sdg" else 0
        return java_lower(text[:cut]) + action[2]


# -- the shipped tables ---------------------------------------------------------------------
def read_tables(lines: Iterable[str]) -> Tables:
    """Tables from the data file's lines (``#`` comments; tab-separated records:
    ``noun word lemma``, ``verb word lemma``, ``pair word tag lemma``, ``keep word tag``,
    ``undouble stem``)."""
    t = Tables()
    undouble = set()
    for n, line in enumerate(lines, 1):
        line = line.rstrip("\n")
        if not line or line.startswith("#"):
            continue
        kind, *rest = line.split("\t")
        if kind in ("noun", "verb") and len(rest) == 2:
            getattr(t, kind)[rest[0]] = rest[1]
        elif kind == "pair" and len(rest) == 3:
            t.pair[rest[0], rest[1]] = rest[2]
        elif kind == "keep" and len(rest) == 2:
            t.pair[rest[0], rest[1]] = None
        elif kind == "undouble" and len(rest) == 1:
            undouble.add(rest[0])
        else:
            raise ResourceError(f"{DATA}, line {n}: unexpected record {line[:80]!r}")
    t.undouble = frozenset(undouble)
    return t


def write_tables(t: Tables) -> str:
    """The data file's text for ``t`` (sorted, so regeneration gives the same bytes)."""
    rows = [
        "# CoreNLP 3.6.0's lemmas where capeval_core.spice.morphology's general rules give",
        "# another; generated by tools/spice_oracle/make_lemma_exceptions.py (do not edit)",
    ]
    rows += [f"noun\t{w}\t{v}" for w, v in sorted(t.noun.items())]
    rows += [f"verb\t{w}\t{v}" for w, v in sorted(t.verb.items())]
    for (w, tag), v in sorted(t.pair.items()):
        rows.append(f"keep\t{w}\t{tag}" if v is None else f"pair\t{w}\t{tag}\t{v}")
    rows += [f"undouble\t{s}" for s in sorted(t.undouble)]
    return "".join(r + "\n" for r in rows)


@functools.cache
def default_morphology() -> Morphology:
    """The analyser with the shipped tables, loaded once per process."""
    path = resources.files("capeval_core") / "data" / DATA
    try:
        with path.open("r", encoding="utf-8") as fh:
            return Morphology(read_tables(fh))
    except OSError as exc:
        raise ResourceError(f"cannot read capeval's lemma tables ({DATA}): {exc}") from exc


def lemma(word: str, tag: str) -> str:
    """CoreNLP 3.6.0's lemma of ``word`` tagged ``tag`` (before SPICE lower-cases it).

    >>> lemma("dogs", "NNS"), lemma("ran", "VBD"), lemma("Dogs", "NNP"), lemma("Dogs", "NN")
    ('dog', 'run', 'Dogs', 'dogs')
    >>> lemma("them", "PRP"), lemma("ice-creams", "NNS"), lemma("picked_up", "VBD")
    ('they', 'ice-cream', 'pick_up')
    """
    return default_morphology().lemma(word, tag)


def lemmas(tokens: Iterable[tuple[str, str]]) -> list[str]:
    """:func:`lemma` of each ``(word, tag)``, memoised across calls.

    >>> lemmas([("children", "NNS"), ("sitting", "VBG"), ("an", "DT")])
    ['child', 'sit', 'a']
    """
    m = default_morphology()
    memo = m._cache.get
    out = []
    for pair in tokens:
        hit = memo(pair)
        out.append(hit if hit is not None else m.lemma(*pair))
    return out
