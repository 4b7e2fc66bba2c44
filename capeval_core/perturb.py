"""Perturbations of a caption: what each metric does when a caption changes in a known way.

The seed paper's Table 2 shows, on one example, what corpus numbers hide: BLEU, ROUGE and
CIDEr drop when words are reordered, CIDEr collapses on synonyms, WMD barely moves. This
module makes that experiment repeatable on any caption and on whole datasets.

Every perturbation is registered in :data:`PERTURBATIONS` (house style, principle 4), is pure
and seeded (``random.Random(seed % 2**64)``: a negative seed is not its absolute value), and
returns a frozen :class:`Perturbation` that records what changed. A caption with nothing
eligible comes back unchanged, with a note saying so.

Perturbations work on the words of the raw caption (:func:`split_words`: runs of letters and
digits, with inner apostrophes and hyphens); the text between words (spaces, punctuation) is
kept where it was, except by the word-order perturbations, which move whitespace-delimited
chunks whole ("3.5", "U.S.", "wave.") so that a tokenizer reads the same tokens in another
order. Word lists (people, scenes, objects, colours, numbers, modifiers) are small
curated files of this project in ``capeval_core/data/perturb_*.txt``; synonyms come from
METEOR's WordNet synonym file (:mod:`capeval_core.meteor_resources`).

>>> p = perturb("A man rides a wave.", "swap", seed=1)
>>> p.perturbed
'A rides man a wave.'
>>> [(c.old, c.position, c.new_position) for c in p.changed]
[('man', 1, 2), ('rides', 2, 1)]
"""

from __future__ import annotations

import functools
import math
import random
import re
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from importlib.resources import files
from typing import Any

import numpy as np
import pandas as pd

from capeval_core.errors import CapevalError, InputError, UnknownKeyError, refuse_text
from capeval_core.stopwords import wmd_stopwords

# -- words --------------------------------------------------------------------------------------
_WORD = re.compile(r"[^\W_]+(?:['\u2019-][^\W_]+)*")
_SPACE_BEFORE_PUNCT = re.compile(r"\s+(?=[.,;:!?)\]}])")
_SPACE_AFTER_OPENING = re.compile(r"(?<=[(\[{])\s+")
#: brackets or quotes around nothing but spaces, left where the words inside were dropped
_EMPTY_PAIR = re.compile(r"\(\s*\)|\[\s*\]|\{\s*\}|\"\s*\"|'\s*'")


def split_words(text: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The caption's words and the text around them: ``len(gaps) == len(words) + 1``.

    >>> split_words("A man's red t-shirt, on a beach.")
    (('A', "man's", 'red', 't-shirt', 'on', 'a', 'beach'), ('', ' ', ' ', ' ', ', ', ' ', ' ', '.'))
    """
    words, gaps, pos = [], [], 0
    for m in _WORD.finditer(text):
        gaps.append(text[pos : m.start()])
        words.append(m.group())
        pos = m.end()
    gaps.append(text[pos:])
    return tuple(words), tuple(gaps)


def join_words(words: Sequence[str], gaps: Sequence[str]) -> str:
    """Inverse of :func:`split_words`.

    >>> join_words(*split_words("a dog, running."))
    'a dog, running.'
    """
    return "".join(g + w for g, w in zip(gaps, words, strict=False)) + gaps[len(words)]


def _match_case(like: str, word: str) -> str:
    if like.isupper() and len(like) > 1:
        return word.upper()
    if like[:1].isupper():
        return word[:1].upper() + word[1:]
    return word


def _shouts(words: Sequence[str]) -> bool:
    """Whether a caption is written in capitals: its words of two letters or more all are
    (a one-letter "A" says nothing of it: "A MAN" gave "Four MEN").

    >>> _shouts(["A", "MAN", "RIDING"]), _shouts(["A", "man"]), _shouts(["A", "."])
    (True, False, False)
    """
    cased = [w for w in words if len(w) > 1 and w.upper() != w.lower()]
    return bool(cased) and all(w.isupper() for w in cased)


def _in_case(words: Sequence[str], like: str, word: str) -> str:
    """``word`` as it stands in place of ``like`` in the caption ``words``."""
    return word.upper() if _shouts(words) else _match_case(like, word)


# -- results ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Change:
    """One word-level edit.

    ``kind`` is "replace" (a word swapped for another), "move" (a word now in another place;
    ``old`` and ``new`` are that word), "insert" or "delete". ``position`` indexes the original
    caption's words (for an insertion: the original word it went before, or ``len(words)`` at
    the end); ``new_position`` indexes the perturbed caption's words (None for a deletion).
    ``old`` is "" for an insertion and ``new`` is "" for a deletion.
    """

    position: int
    old: str
    new: str
    kind: str = "replace"
    new_position: int | None = None

    def __str__(self) -> str:
        return f"{self.kind} @{self.position}: {self.old!r} -> {self.new!r}"


@dataclass(frozen=True)
class Perturbation:
    """A perturbed caption and the evidence of what changed (``changed`` is empty when
    nothing was eligible; ``note`` then says why). ``perturb(original, name, seed=seed,
    **dict(options))`` reproduces it."""

    original: str
    perturbed: str
    changed: tuple[Change, ...]
    name: str
    seed: int
    note: str
    options: tuple[tuple[str, Any], ...] = ()

    @property
    def is_changed(self) -> bool:
        """Whether the caption changed at all."""
        return self.perturbed != self.original

    def to_frame(self) -> pd.DataFrame:
        """One row per change: kind, position, new position, old word, new word."""
        return pd.DataFrame(
            [
                {
                    "kind": c.kind,
                    "position": c.position,
                    "new position": c.new_position,
                    "old": c.old,
                    "new": c.new,
                }
                for c in self.changed
            ],
            columns=["kind", "position", "new position", "old", "new"],
        )

    def __str__(self) -> str:
        return f"{self.name}(seed={self.seed}): {self.perturbed!r} ({self.note})"


@dataclass(frozen=True)
class PerturbationSpec:
    """A registered perturbation: its name, a label and one-line description, the options it
    takes (name -> default), and the function doing the work."""

    name: str
    label: str
    description: str
    apply: Callable[..., tuple[list[str], list[str], list[Change], str]] = field(repr=False)
    defaults: Mapping[str, Any] = field(default_factory=dict)


PERTURBATIONS: dict[str, PerturbationSpec] = {}


def _register(name: str, label: str, description: str, **defaults: Any):
    def wrap(fn):
        PERTURBATIONS[name] = PerturbationSpec(name, label, description, fn, defaults)
        return fn

    return wrap


def available_perturbations() -> list[str]:
    """Registry names, in registry order.

    >>> available_perturbations()[:3]
    ['synonym', 'redundant', 'shuffle']
    """
    return list(PERTURBATIONS)


def perturbation_spec(name: str) -> PerturbationSpec:
    """The registered perturbation ``name`` (``UnknownKeyError`` names the choices)."""
    spec = PERTURBATIONS.get(name)
    if spec is None:
        raise UnknownKeyError(
            f"unknown perturbation {name!r}; available: {', '.join(PERTURBATIONS)}"
        )
    return spec


def perturb(caption: str, name: str, *, seed: int = 0, **options: Any) -> Perturbation:
    """Apply the registered perturbation ``name`` to ``caption``, deterministically for ``seed``.

    Options (see each perturbation's ``defaults``): ``n`` (how many edits; synonym, redundant,
    swap, the replacements), ``positions`` (which word indices; synonym), ``mode`` and
    ``length`` (redundant).

    >>> perturb("a child on a sofa", "synonym", positions=[1]).perturbed
    'a kid on a sofa'
    >>> perturb("on it", "synonym").note
    'nothing eligible: no word with a WordNet synonym'
    """
    if not isinstance(caption, str):
        raise InputError(f"`caption` must be a string (got {type(caption).__name__})")
    _check_seed(seed)
    spec = perturbation_spec(name)
    unknown = sorted(set(options) - set(spec.defaults))
    if unknown:
        raise InputError(
            f"perturbation {name!r} takes options {sorted(spec.defaults) or 'none'} "
            f"(got {', '.join(unknown)})"
        )
    # numpy's integers and arrays (a notebook's np.int64(2)) as the Python values they equal
    given = {
        k: v.item() if isinstance(v, np.generic) else v.tolist() if isinstance(v, np.ndarray) else v
        for k, v in options.items()
    }
    opts = {**spec.defaults, **given}
    n = opts.get("n")
    if n is not None and (isinstance(n, bool) or not isinstance(n, int) or n < 1):
        raise InputError(f"option `n` must be a positive integer or None (got {n!r})")
    words, gaps = split_words(caption)
    new_words, new_gaps, changes, note = spec.apply(
        list(words), list(gaps), random.Random(int(seed) % 2**64), **opts
    )
    perturbed = join_words(new_words, new_gaps) if changes else caption
    stored = tuple((k, tuple(v) if isinstance(v, list) else v) for k, v in sorted(given.items()))
    return Perturbation(caption, perturbed, tuple(changes), name, int(seed), note, stored)


def perturb_each(
    caption: str, names: Sequence[str], *, seed: int = 0, n: int | None = None
) -> tuple[Perturbation, ...]:
    """``caption`` perturbed by each of ``names`` in turn, all with ``seed``; ``n`` (when
    given) is the number of edits of the perturbations that take ``n``, and the others leave
    it out.

    >>> [(p.name, p.options) for p in perturb_each("a man rides a wave", ["swap", "shuffle"],
    ...                                            seed=1, n=2)]
    [('swap', (('n', 2),)), ('shuffle', ())]
    """
    refuse_text(names, "names", "perturbation names")
    out = []
    for name in names:
        takes_n = n is not None and "n" in perturbation_spec(name).defaults
        out.append(perturb(caption, name, seed=seed, **({"n": n} if takes_n else {})))
    return tuple(out)


def _nothing(what: str) -> tuple[list[str], list[str], list[Change], str]:
    return [], [], [], f"nothing eligible: {what}"


def _pick(rng: random.Random, eligible: Sequence[int], n: int | None) -> list[int]:
    """``n`` of the eligible positions (all when None), in caption order."""
    if n is None or n >= len(eligible):
        return list(eligible)
    return sorted(rng.sample(list(eligible), n))


def _replacements(
    words: list[str],
    gaps: list[str],
    new: Mapping[int, str],
    what: str,
    total: int,
    sites: int | None = None,
) -> tuple[list[str], list[str], list[Change], str]:
    """``sites``: how many of the ``total`` eligible places changed, where one place
    changes several words (a count: "a dog is" -> "three dogs are"); default one a word."""
    out = list(words)
    changes = []
    for i in sorted(new):
        out[i] = _in_case(words, words[i], new[i])
        # "a dog" -> "an elephant", "an orange bus" -> "a red bus": the article agrees
        article = words[i - 1].lower() if i > 0 and i - 1 not in new else ""
        if article in ("a", "an") and _article_for(out[i]) != article:
            out[i - 1] = _in_case(words, words[i - 1], _article_for(out[i]))
            changes.append(Change(i - 1, words[i - 1], out[i - 1], "replace", i - 1))
        changes.append(Change(i, words[i], out[i], "replace", i))
    done = len(new) if sites is None else sites
    return out, gaps, changes, f"replaced {done} of {total} eligible {what}"


#: word starts read with a vowel sound though spelt with a consonant, and the reverse
_AN_BEFORE = ("hour", "honest", "honor", "honour", "heir")
_A_BEFORE = ("uni", "use", "usu", "ute", "uti", "eu", "ewe", "one", "once", "uk")


def _article_for(word: str) -> str:
    """The indefinite article before ``word``, by the sound it starts with.

    >>> [_article_for(w) for w in ("elephant", "horse", "hour", "umbrella", "uniform")]
    ['an', 'a', 'an', 'an', 'a']
    """
    low = word.lower()
    if low.startswith(_AN_BEFORE):
        return "an"
    if low.startswith(_A_BEFORE):
        return "a"
    return "an" if low[:1] in ("a", "e", "i", "o", "u") else "a"


def _content(word: str) -> bool:
    return word.isalpha() and word.lower() not in wmd_stopwords()


# -- word lists ---------------------------------------------------------------------------------
@functools.cache
def word_list(name: str) -> tuple[tuple[str, ...], ...]:
    """A shipped list ``data/perturb_<name>.txt``: one entry per line, its forms split by
    spaces (e.g. singular and plural); ``#`` starts a comment line, and what follows ``|``
    on a line is what the entry says (:func:`_kinds`), not a form.

    >>> word_list("person")[0]
    ('man', 'men')
    """
    return tuple(forms for forms, _ in _entries(name))


@functools.cache
def _entries(name: str) -> tuple[tuple[tuple[str, ...], tuple[str, ...]], ...]:
    path = files("capeval_core") / f"data/perturb_{name}.txt"
    try:
        text = path.read_text("utf-8")
    except FileNotFoundError:
        raise UnknownKeyError(f"no word list {name!r} (looked for {path})") from None
    out = []
    for line in text.splitlines():
        if line.strip() and line[0] != "#":
            forms, _, said = line.partition("|")
            out.append((tuple(forms.split()), tuple(said.split())))
    return tuple(out)


#: what a person word may say of the person, by aspect; any other word after "|" is a role
_GENDERS = frozenset({"male", "female"})
_AGES = frozenset({"baby", "child", "teen", "adult"})


def _kinds(said: Sequence[str]) -> tuple[frozenset[str] | None, ...]:
    """Gender, ages and role a list entry says (None: it says nothing of that)."""
    out = []
    for aspect in (_GENDERS, _AGES, None):
        got = frozenset(w for w in said if (w in aspect if aspect else w not in _GENDERS | _AGES))
        out.append(got or None)
    return tuple(out)


def _contradicts(a: Sequence[str], b: Sequence[str]) -> bool:
    """Whether two entries' kinds (after "|") exclude each other in something both say.

    >>> man, guy, boy, person = ("male", "adult"), ("male", "adult"), ("male", "child"), ()
    >>> _contradicts(man, boy), _contradicts(man, guy), _contradicts(man, person)
    (True, False, False)
    """
    return any(
        x is not None and y is not None and not x & y
        for x, y in zip(_kinds(a), _kinds(b), strict=True)
    )


def _lexicon_swap(
    words: list[str], gaps: list[str], rng: random.Random, list_name: str, what: str, n: int | None
):
    """Replace listed words by other entries of the list, in the same form; an entry is
    replaced only by one it contradicts (:func:`_contradicts`) when the list says kinds."""
    listed = _entries(list_name)
    entries = [forms for forms, _ in listed]
    kinds = [said for _, said in listed]
    judged = any(kinds)  # a list saying nothing of its words: every other entry is fine
    where: dict[str, tuple[int, int]] = {}
    for e, forms in enumerate(entries):
        for f, form in enumerate(forms):  # an invariant noun (sheep sheep) reads as singular
            where.setdefault(form, (e, f))

    def options(word: str) -> list[str]:
        entry, form = where[word]
        return [
            forms[form]
            for e, forms in enumerate(entries)
            if e != entry
            and len(forms) > form
            and forms[form] != word
            and (not judged or _contradicts(kinds[entry], kinds[e]))
        ]

    def base(word: str) -> tuple[str, str]:  # "man's" is "man" with its "'s" kept
        low = word.lower()
        for ending in ("'s", "\u2019s"):
            if low.endswith(ending) and low[: -len(ending)] in where:
                return low[: -len(ending)], word[-len(ending) :]
        return low, ""

    listed_at = [i for i, w in enumerate(words) if base(w)[0] in where]
    eligible = [i for i in listed_at if options(base(words[i])[0])]
    if not eligible:
        if listed_at:  # "a person": no word of the list says otherwise
            return _nothing(f"no {what} that another of capeval's {list_name} words contradicts")
        return _nothing(f"no {what} from capeval's list of {list_name} words")
    new = {}
    for i in _pick(rng, eligible, n):
        stem, ending = base(words[i])
        new[i] = rng.choice(options(stem)) + ending
    return _replacements(words, gaps, new, f"{what}s", len(eligible))


# -- the perturbations ---------------------------------------------------------------------------
def _lemmas(word: str) -> set[str]:
    from capeval_core.meteor_resources import meteor_synsets

    s = meteor_synsets()
    out = {word, s.morph(word), *s.exceptions.get(word, ())}
    out.discard("")
    return out


def _inflect(like: str, base: str, lemma: str) -> str:
    """``lemma`` inflected as ``like`` is from ``base`` (plural/-s, -ing, -ed; else as is).

    >>> _inflect("couches", "couch", "sofa"), _inflect("sitting", "sit", "pose")
    ('sofas', 'posing')
    """
    if like == base:
        return lemma
    if like.endswith("s") and not base.endswith("s"):
        if lemma.endswith(("s", "x", "z", "ch", "sh")):
            return lemma + "es"
        if lemma.endswith("y") and lemma[-2:-1] not in "aeiou":
            return lemma[:-1] + "ies"
        return lemma + "s"
    if like.endswith("ing"):
        return (lemma[:-1] if lemma.endswith("e") and not lemma.endswith("ee") else lemma) + "ing"
    if like.endswith("ed"):
        return lemma + ("d" if lemma.endswith("e") else "ed")
    return lemma


@functools.cache
def _irregular() -> dict[str, tuple[str, ...]]:
    """base form -> its irregular inflections (the reverse of METEOR's exception file)."""
    from capeval_core.meteor_resources import meteor_synsets

    out: dict[str, list[str]] = {}
    for form, bases in meteor_synsets().exceptions.items():
        for base in bases:
            out.setdefault(base, []).append(form)
    return {k: tuple(v) for k, v in out.items()}


def _ing_spellings(lemma: str) -> set[str]:
    """The ways an -ing form of ``lemma`` is spelt (pose: posing, sit: sitting, lie: lying)."""
    out = {lemma + "ing", lemma + lemma[-1:] + "ing"}
    if lemma.endswith("e"):
        out.add(lemma[:-1] + "ing")
    if lemma.endswith("ie"):
        out.add(lemma[:-2] + "ying")
    return out


@functools.lru_cache(maxsize=50_000)
def _is_ing_form(word: str) -> bool:
    """Whether ``word`` is the -ing form of a verb of METEOR's synonym file ("posing",
    "singing", "sleeping"), not a base verb or a noun ending in "ing" ("sing", "bring",
    "king": their stems "se", "br", "k" are no verbs).

    >>> [_is_ing_form(w) for w in ("posing", "singing", "lying", "sing", "bring", "king")]
    [True, True, True, False, False, False]
    """
    if not word.endswith("ing"):
        return False
    from capeval_core.meteor_resources import meteor_synsets
    from capeval_core.senses import synset_pos

    s, parts = meteor_synsets(), synset_pos()
    for lemma in _lemmas(word) - {word}:
        if word not in _ing_spellings(lemma):
            continue
        kinds = {parts.get(i) for i in s.synsets_of(lemma)}
        # a verb; or a word the file gives no part of speech (sleep, walk), not a letter
        # or an abbreviation ("k", "br")
        if "verb" in kinds or (None in kinds and len(lemma) >= 3):
            return True
    return False


def _form_like(word: str, base: str, member: str, own: frozenset[int]) -> str | None:
    """``member`` in the form ``word`` has (plural, -ing, -ed), or None when that form is not
    a known word sharing a synset with ``word`` (so no misspelt or wrong-class forms)."""
    from capeval_core.meteor_resources import meteor_synsets

    s = meteor_synsets()
    member_lemmas = _lemmas(member) - {member}
    if word == base:  # an uninflected word takes uninflected synonyms ("human", not "humans")
        return None if member_lemmas else member
    if _is_ing_form(word):  # "talking" takes an -ing form; "sing" is none, "singing" is
        if _is_ing_form(member):
            return member  # already an -ing form ("posing" for "sitting")
        # a base ("sing", an irregular verb all the same) is made an -ing form below; a form
        # made of an inflected word ("posed") is no word of the file and is refused there
    else:
        suffix = word[len(base) :] if word.startswith(base) else word[-3:]
        if member_lemmas and member.endswith(suffix[-2:]):
            return member  # already inflected the same way ("sofas" for "couches")
        if member_lemmas or member in _irregular():
            return None  # inflected otherwise, or irregular ("child" has no plural "childs")
    form = _inflect(word, base, member)
    if form == member or not (s.synsets_of(form) & own):
        return None
    if not word.endswith("s") and form not in s.synsets:
        return None  # -ing/-ed forms must be words of the file themselves
    return form


@functools.lru_cache(maxsize=50_000)
def synonyms(word: str, pos: str | None = None, *, common: bool = False) -> tuple[str, ...]:
    """Single-word WordNet synonyms of ``word`` (sharing a synset in METEOR's synonym file),
    in the same inflection as ``word``. Other forms of the same lemma ("dog" for "dogs") are
    left out.

    ``pos`` ("noun", "verb", "adj", "adv") keeps the synsets of that part of speech only;
    ``common`` keeps the synonyms of the word's common senses (:mod:`capeval_core.senses`).
    The ones sharing the most synsets come first, then (with ``common``) the most similar, or
    else alphabetical.

    >>> synonyms("child")[:1], "sofas" in synonyms("couches"), "posing" in synonyms("sitting")
    (('kid',), True, True)
    >>> "snitch" in synonyms("grass"), "snitch" in synonyms("grass", "noun")
    (True, False)
    >>> synonyms("grass", "noun", common=True)[:1], "toy" in synonyms("play", "verb", common=True)
    (('pasture',), False)
    """
    from capeval_core.meteor_resources import meteor_synsets, synset_members

    s, members = meteor_synsets(), synset_members()
    word = word.lower()
    own = s.synsets_of(word)
    if pos is not None:
        from capeval_core.senses import synset_pos

        parts = synset_pos()
        own = frozenset(i for i in own if parts.get(i) == pos)
    if not own:
        return ()
    lemmas = _lemmas(word)
    base = word if s.synsets.get(word) and len(lemmas) == 1 else s.morph(word) or word
    if word in s.exceptions:
        base = s.exceptions[word][0]
    shared: dict[str, int] = {}
    for i in own:
        for m in members[i]:
            if not (m.isalpha() and m.isascii()) or m in lemmas or word in _lemmas(m):
                continue
            form = _form_like(word, base, m, own)
            if form is not None and form not in lemmas:
                shared[form] = max(shared.get(form, 0), len(s.synsets_of(form) & own))
    if not common:
        return tuple(sorted(shared, key=lambda m: (-shared[m], m)))
    from capeval_core.senses import COMMON_SENSE_SIMILARITY, similarity

    close = {m: similarity(word, m) for m in shared}
    kept = [m for m, c in close.items() if c is not None and c >= COMMON_SENSE_SIMILARITY]
    # most senses shared first (child: kid shares two, baby one), then the most similar
    return tuple(sorted(kept, key=lambda m: (-shared[m], -close[m], m)))  # type: ignore[operator]


@_register(
    "synonym",
    "Synonym substitution",
    "replace content words by a WordNet synonym of the same part of speech, from one of the "
    "word's common senses (METEOR's synonym file; SPICE's parser's tags; GloVe similarity)",
    n=1,
    positions=None,
)
def _synonym(words, gaps, rng, *, n, positions):
    from capeval_core.meteor_resources import meteor_synsets
    from capeval_core.senses import word_parts

    s = meteor_synsets()
    numbers = {f[1] for f in word_list("count")}
    # cheap pre-filter (a content word in a synset at all), then the tagger's part of speech
    maybe = [
        i
        for i, w in enumerate(words)
        if _content(w) and w.lower() not in numbers and s.synsets_of(w.lower())
    ]
    if positions is not None:
        if isinstance(positions, int | str):  # one index, not a list of them
            raise InputError(
                f"option `positions` must be a list of word indices (got {positions!r})"
            )
        bad = [
            p
            for p in positions
            if isinstance(p, bool) or not isinstance(p, int) or not 0 <= p < len(words)
        ]
        if bad:
            raise InputError(
                f"option `positions` must hold word indices 0-{len(words) - 1} (got {bad})"
            )
        maybe = [i for i in maybe if i in set(positions)]
        n = None
    if not maybe:
        return _nothing("no word with a WordNet synonym")
    starts, at = [], 0
    for gap, word in zip(gaps, words, strict=False):
        starts.append(at + len(gap))
        at += len(gap) + len(word)
    parts = word_parts(join_words(words, gaps), starts)
    maybe = [i for i in maybe if parts[i] is not None]
    order = list(maybe) if n is None else rng.sample(maybe, len(maybe))
    new: dict[int, str] = {}
    for i in order:
        if n is not None and len(new) >= n:
            break
        options = synonyms(words[i], parts[i], common=True)
        if options:
            new[i] = options[0]  # the closest synonym of the word's common senses
    if not new:
        return _nothing("no word with a WordNet synonym of its part of speech and common senses")
    return _replacements(
        words, gaps, new, "content words with a synonym of their part of speech", len(maybe)
    )


_DETERMINERS = frozenset(
    {"a", "an", "the", "this", "that", "these", "those", "his", "her", "its", "their", "my"}
    | {"our", "your", "some", "two", "three", "four"}
)


def _insert(
    words: list[str], gaps: list[str], inserts: Mapping[int, str], note: str
) -> tuple[list[str], list[str], list[Change], str]:
    """Insert ``inserts[i]`` before original word ``i`` (``len(words)``: at the end)."""
    out_w, out_g, changes = [], [], []
    if _shouts(words):  # "A MAN casually RIDING": an inserted word is in capitals too
        inserts = {i: w.upper() for i, w in inserts.items()}
    for i in range(len(words) + 1):
        if i in inserts:
            out_g.append(gaps[i] if i < len(words) else " ")
            changes.append(Change(i, "", inserts[i], "insert", len(out_w)))
            out_w.append(inserts[i])
            if i < len(words):
                out_g.append(" ")
        elif i < len(words):
            out_g.append(gaps[i])
        if i < len(words):
            out_w.append(words[i])
    out_g.append(gaps[len(words)])
    return out_w, out_g, changes, note


@_register(
    "redundant",
    "Redundant words",
    "insert adjectives before nouns and adverbs before -ing verbs ('modifier'), or repeat a "
    "phrase ('repeat')",
    n=1,
    mode="modifier",
    length=1,
)
def _redundant(words, gaps, rng, *, n, mode, length):
    # checked in either mode, as ``n`` is (which "repeat" does not use either)
    if isinstance(length, bool) or not isinstance(length, int) or length < 1:
        raise InputError(f"option `length` must be a positive integer (got {length!r})")
    if mode == "modifier":
        slots: dict[int, list[str]] = {}
        adjectives = [f[0] for f in word_list("adjective")]
        # words the lists know as adjectives: no slot before them ("a tall small room"),
        # and an -ing word after them is a noun ("a large building"), not a verb
        modifiers = {*adjectives, *(f[0] for f in word_list("colour"))}
        for i, w in enumerate(words):
            prev = words[i - 1].lower() if i else ""
            if w.lower() in modifiers:
                continue
            if _content(w) and prev in _DETERMINERS:
                fit = (
                    [a for a in adjectives if _article_for(a) == prev]
                    if prev in ("a", "an")
                    else adjectives
                )
                slots[i] = [a for a in fit if a != w.lower()]
            elif (
                _content(w)
                and w.lower().endswith("ing")
                and len(w) > 4
                and prev not in modifiers  # "red clothing", "a large building": nouns
            ):
                slots[i] = [f[0] for f in word_list("adverb")]
        slots = {i: s for i, s in slots.items() if s}
        if not slots:
            return _nothing("no noun after a determiner and no -ing verb")
        chosen = _pick(rng, sorted(slots), n)
        inserts = {i: rng.choice(slots[i]) for i in chosen}
        return _insert(
            words, gaps, inserts, f"inserted {len(inserts)} modifier(s) at {len(slots)} slots"
        )
    if mode == "repeat":
        eligible = [i for i in range(len(words) - length + 1) if _content(words[i])]
        if not eligible:
            return _nothing(f"no phrase of {length} word(s) starting with a content word")
        start = rng.choice(eligible)
        phrase = words[start : start + length]
        end = start + length
        out_w = [*words[:end], *phrase, *words[end:]]
        out_g = [*gaps[:end], *([" "] * length), *gaps[end:]]
        changes = [Change(end, "", w, "insert", end + k) for k, w in enumerate(phrase)]
        return out_w, out_g, changes, f"repeated a {length}-word phrase at word {start}"
    raise InputError(f"option `mode` must be 'modifier' or 'repeat' (got {mode!r})")


def _chunks(words: Sequence[str], gaps: Sequence[str]) -> list[tuple[str, tuple[int, ...]]]:
    """The caption's whitespace-delimited chunks, each with the indices of its words.

    A word-order perturbation moves chunks whole, so that what a tokenizer reads as one token
    ("3.5", "10:30", "U.S.", "$5", "dog_house", "t-shirt,") stays one.

    >>> _chunks(*split_words("on a dog_house holds 3.5 kg."))[2:]
    [('dog_house', (2, 3)), ('holds', (4,)), ('3.5', (5, 6)), ('kg.', (7,))]
    """
    out: list[tuple[str, tuple[int, ...]]] = []
    text, owned = "", []
    for i in range(len(words) + 1):
        parts = re.split(r"(\s+)", gaps[i])
        for k, part in enumerate(parts):
            if k % 2:  # whitespace: the chunk ends
                if text:
                    out.append((text, tuple(owned)))
                text, owned = "", []
            else:
                text += part
        if i < len(words):
            text += words[i]
            owned.append(i)
    if text:
        out.append((text, tuple(owned)))
    return out


def _joined(words: Sequence[str], gaps: Sequence[str]) -> set[int]:
    """The indices of the words that share their chunk with another word (:func:`_chunks`):
    parts of one token, not words of their own.

    >>> sorted(_joined(*split_words("a dog in the U.S. at 10:30")))
    [4, 5, 7, 8]
    """
    return {i for _, owned in _chunks(words, gaps) if len(owned) > 1 for i in owned}


def _moves(words: Sequence[str], order: Sequence[int]) -> list[Change]:
    """One "move" per word that changed place when word ``order[j]`` went to slot ``j`` (from
    its ``position`` to its ``new_position``). Of equal words, those that can stay in a slot
    holding the same word stay, so "a" moved from 0 to 0 is never listed."""
    origin: dict[str, list[int]] = {}
    for slot, i in enumerate(order):
        origin.setdefault(words[i], []).append(slot)
    changes = []
    for word, slots in origin.items():
        before = [i for i, w in enumerate(words) if w == word]
        stay = set(before) & set(slots)
        moved_from = [i for i in before if i not in stay]
        moved_to = [s for s in slots if s not in stay]
        changes += [
            Change(i, word, word, "move", j) for i, j in zip(moved_from, moved_to, strict=True)
        ]
    changes.sort(key=lambda c: c.position)
    return changes


def _reorder_units(words: Sequence[str], gaps: Sequence[str]):
    """The chunks a word-order perturbation moves: all chunks, the indices of those holding
    words (a chunk of punctuation only stays in its place), and each of those chunks' words
    in lower case (what tells two orders apart: "a dog and A cat" is no new order)."""
    chunks = _chunks(words, gaps)
    movable = [k for k, (_, owned) in enumerate(chunks) if owned]
    keys = {k: tuple(words[i].lower() for i in chunks[k][1]) for k in movable}
    return chunks, movable, keys


def _reordered(words, chunks, movable, perm, note):
    """The caption with the word-holding chunk ``perm[j]`` in the place of ``movable[j]``,
    chunks joined by single spaces. The text of each chunk is kept, so the tokens a
    tokenizer reads are the caption's own, in another order."""
    order = list(range(len(chunks)))
    for slot, k in zip(movable, perm, strict=True):
        order[slot] = k
    new_words, new_gaps = split_words(" ".join(chunks[k][0] for k in order))
    word_order = [i for k in order for i in chunks[k][1]]
    return list(new_words), list(new_gaps), _moves(words, word_order), note


def _sequence(keys: Mapping[int, tuple[str, ...]], perm: Sequence[int]) -> list[str]:
    return [w for k in perm for w in keys[k]]


@_register(
    "shuffle",
    "Word-order shuffle",
    "shuffle the order of the words (same multiset of tokens: words joined by punctuation, "
    "as in '3.5' or 'U.S.', move together)",
)
def _shuffle(words, gaps, rng):
    chunks, movable, keys = _reorder_units(words, gaps)
    units = set(keys.values())
    if not any(a + b != b + a for a in units for b in units):
        return _nothing("fewer than two different words (or chunks of words) to reorder")
    perm = list(movable)
    while _sequence(keys, perm) == _sequence(keys, movable):  # another order exists: ends
        rng.shuffle(perm)
    return _reordered(words, chunks, movable, perm, f"shuffled {len(movable)} chunks of words")


@_register(
    "swap",
    "Adjacent swap",
    "swap two neighbouring (different) words; words joined by punctuation move together",
    n=1,
)
def _swap(words, gaps, rng, *, n):
    chunks, movable, keys = _reorder_units(words, gaps)
    eligible = [
        m
        for m in range(len(movable) - 1)
        if keys[movable[m]] + keys[movable[m + 1]] != keys[movable[m + 1]] + keys[movable[m]]
    ]
    if not eligible:
        return _nothing("no two different neighbouring words")
    perm = list(movable)
    done = 0
    for m in rng.sample(eligible, len(eligible)):
        if n is not None and done >= n:  # None: as many as can move
            break
        if perm[m] == movable[m] and perm[m + 1] == movable[m + 1]:  # each moves once
            perm[m], perm[m + 1] = movable[m + 1], movable[m]
            done += 1
    return _reordered(words, chunks, movable, perm, f"swapped {done} pair(s) of neighbouring words")


@_register(
    "drop_stopwords",
    "Drop stop words",
    "remove every stop word (the 153-word list coco-caption's WMD removes)",
)
def _drop_stopwords(words, gaps, rng):
    stop = wmd_stopwords()
    # a word joined to others by punctuation is no word of its own ("U.S.", "p.m.": "s" and
    # "m" are stop words, and dropping them left "U..")
    joined = _joined(words, gaps)
    drop = [i for i, w in enumerate(words) if w.lower() in stop and i not in joined]
    if not drop:
        return _nothing("no stop word")
    if len(drop) == len(words):
        return _nothing("every word is a stop word (nothing would be left)")
    out_w, out_g, changes = [], [gaps[0]], []
    for i, w in enumerate(words):
        if i in drop:
            out_g[-1] = out_g[-1] + gaps[i + 1]
            changes.append(Change(i, w, "", "delete", None))
        else:
            out_w.append(w)
            out_g.append(gaps[i + 1])
    # no brackets or quotes left around nothing ("(the) dog" -> "dog", not "() dog"); one
    # space between words, none before closing punctuation or after an opening bracket, none
    # at either end: "(the dog) is on it" -> "(dog)", not "( dog) "
    out_g = [
        _SPACE_AFTER_OPENING.sub(
            "", _SPACE_BEFORE_PUNCT.sub("", re.sub(r"\s+", " ", _EMPTY_PAIR.sub(" ", g)))
        )
        for g in out_g
    ]
    out_g[0] = out_g[0].lstrip()
    out_g[-1] = out_g[-1].rstrip()
    return out_w, out_g, changes, f"dropped {len(drop)} stop word(s)"


@_register(
    "replace_person",
    "Replace person",
    "replace a person word (man, girl, ...) by one of capeval's list of person words that "
    "contradicts it (in gender, age or role; never a synonym or a broader word)",
    n=1,
)
def _replace_person(words, gaps, rng, *, n):
    return _lexicon_swap(words, gaps, rng, "person", "person word", n)


@_register(
    "replace_scene",
    "Replace scene",
    "replace a scene word (beach, kitchen, ...) by another from capeval's list of scene words",
    n=1,
)
def _replace_scene(words, gaps, rng, *, n):
    return _lexicon_swap(words, gaps, rng, "scene", "scene word", n)


@_register(
    "object_swap",
    "Object swap",
    "replace an object word (dog, pizza, ...) by another from capeval's list of object words",
    n=1,
)
def _object_swap(words, gaps, rng, *, n):
    return _lexicon_swap(words, gaps, rng, "object", "object word", n)


@_register(
    "count",
    "Count change",
    "change a number (two -> five, 3 -> 7), or 'a dog' -> 'two dogs' for a listed noun",
    n=1,
)
def _count(words, gaps, rng, *, n):
    numbers = {f[1]: int(f[0]) for f in word_list("count")}
    names = {v: k for k, v in numbers.items()}
    plural = {
        forms[0]: forms[1]
        for lst in ("person", "object", "scene")
        for forms in word_list(lst)
        if len(forms) > 1
    }
    values: dict[int, int | None] = {}  # eligible position -> its count (None: a/an)
    # digits joined to others by punctuation are no count ("3.5", "10:30", "1,000")
    joined = _joined(words, gaps)
    for i, w in enumerate(words):
        if i in joined:
            continue
        low = w.lower()
        nxt = words[i + 1].lower() if i + 1 < len(words) else ""
        # ASCII digits only: "10²" and "③" are digits to str.isdigit, not to int()
        value = numbers.get(low, int(low) if low.isascii() and low.isdigit() else None)
        if value == 1 and nxt not in plural:
            continue  # "one apple": the noun could not be made plural
        if (value is not None and 0 < value <= 12) or (low in ("a", "an") and nxt in plural):
            values[i] = value
    eligible = list(values)
    if not eligible:
        return _nothing("no number and no 'a'/'an' before a listed noun")
    new: dict[int, str] = {}
    picked = _pick(rng, eligible, n)
    for i in picked:
        low, nxt, value = (
            words[i].lower(),
            words[i + 1].lower() if i + 1 < len(words) else "",
            values[i],
        )
        if value is None or value == 1:  # "a dog", "one dog", "1 dog": the noun made plural
            new[i] = names[rng.randint(2, 5)] if not low.isdigit() else str(rng.randint(2, 5))
            if plural[nxt] != nxt:  # "sheep" stays "sheep"
                new[i + 1] = plural[nxt]
            j = i + 2  # the verb: right after the noun, or after a relative pronoun
            if j < len(words) - 1 and words[j].lower() in _RELATIVE:
                j += 1
            # only the caption's subject (its first words) owns the verb that follows: in
            # "a girl next to a kite is smiling" the verb is the girl's, not the kite's
            verb = _plural_verb(words[j].lower()) if i == 0 and j < len(words) else None
            if verb is not None:  # "a dog that is running" -> "three dogs that are running"
                new[j] = verb
            continue
        pool = [v for v in range(2 if value > 1 else 1, 13) if v != value]
        choice = rng.choice(pool)
        new[i] = str(choice) if low.isdigit() else names[choice]
    return _replacements(words, gaps, new, "counts", len(eligible), sites=len(picked))


#: the singular verbs after a noun a count change makes plural, and their plural forms
_PLURAL_VERB = {"is": "are", "was": "were", "has": "have", "does": "do"}
#: the words of a relative clause's start, after which the noun's verb follows ("that runs")
_RELATIVE = frozenset({"that", "who", "which"})


def _plural_verb(word: str) -> str | None:
    """The plural of a third-person singular verb ("runs" -> "run", "watches" -> "watch",
    "flies" -> "fly"), a verb in METEOR's synonym file; None for any other word."""
    if word in _PLURAL_VERB:
        return _PLURAL_VERB[word]
    if len(word) < 4 or not word.endswith("s") or word.endswith("ss"):
        return None
    from capeval_core.meteor_resources import meteor_synsets
    from capeval_core.senses import synset_pos

    synsets, parts = meteor_synsets(), synset_pos()
    bases = [word[:-1]]
    if word.endswith("ies"):
        bases.append(word[:-3] + "y")
    elif word.endswith("es"):
        bases.append(word[:-2])
    for base in bases:
        if any(parts.get(i) == "verb" for i in synsets.synsets_of(base)):
            return base
    if word in _third_person_verbs():  # "sleeps", "smiles": no verb sense decided above
        if word.endswith("ies"):
            return word[:-3] + "y"
        return (
            word[:-2]
            if word.endswith(("sses", "shes", "ches", "xes", "zzes", "oes"))
            else word[:-1]
        )
    return None


@functools.cache
def _third_person_verbs() -> frozenset[str]:
    """Words SPICE's parser's lexicon saw tagged VBZ in its training treebank (CoreNLP's
    English PCFG, shipped with the package): the verbs METEOR's synonym table leaves without
    a part of speech (sleep, walk, smile)."""
    from capeval_core.spice.pcfg.grammar import load_grammar

    grammar = load_grammar()
    vbz = {i for i, name in enumerate(grammar.tags) if name.split("^")[0] == "VBZ"}
    return frozenset(
        word for word, w in grammar.words.items() if vbz.intersection(grammar.word_tags.get(w, ()))
    )


@_register(
    "colour",
    "Colour change",
    "replace a colour word by another from capeval's list of colour words",
    n=1,
)
def _colour(words, gaps, rng, *, n):
    return _lexicon_swap(words, gaps, rng, "colour", "colour word", n)


# -- scoring one caption ---------------------------------------------------------------------------
#: below this a score reads as 0 (four decimals), and a change relative to it means nothing
RELATIVE_MIN = 5e-5


@dataclass(frozen=True)
class PerturbationScores:
    """Every metric's score of a caption before and after one perturbation.

    ``before[key]``/``after[key]`` are segment scores against the same references;
    ``signatures[key]`` reproduces them. ``notes[key]``: what the metric said of the scored
    set (CIDEr-D's IDF from one image's references: every score 0).
    """

    perturbation: Perturbation
    references: tuple[str, ...]
    before: Mapping[str, float]
    after: Mapping[str, float]
    signatures: Mapping[str, str]
    notes: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    def delta(self, key: str) -> float:
        """``after - before`` for one key (0 within the tie tolerance: :func:`change`)."""
        return float(change(self.after[key], self.before[key]))

    def to_frame(self) -> pd.DataFrame:
        """One row per key: before, after, delta, relative change."""
        rows = []
        for key in self.before:
            b, a = self.before[key], self.after[key]
            d = self.delta(key)
            rows.append(
                {
                    "perturbation": self.perturbation.name,
                    "key": key,
                    "before": b,
                    "after": a,
                    "delta": d,
                    "relative": d / b if abs(b) >= RELATIVE_MIN else math.nan,
                    "signature": self.signatures[key],
                }
            )
        return pd.DataFrame(rows)


def change(after: Any, before: Any) -> Any:
    """``after - before``, 0 where the two are equal up to the forced-choice tie tolerance
    (:data:`capeval_core.stats.pairwise.TIE_TOLERANCE`, relative to the larger): WMD's solver
    leaves -2.2e-18 between a caption and its shuffle, which is no change (NaN stays NaN).

    >>> change(np.array([0.5 - 1e-16, 0.25, 1e-12]), np.array([0.5, 0.5, 1e-10])).tolist()
    [0.0, -0.25, -9.900000000000001e-11]
    """
    from capeval_core.stats.pairwise import preference

    after, before = np.asarray(after, dtype=float), np.asarray(before, dtype=float)
    return np.where(preference(after, before) == 0, 0.0, after - before)


def _score_pairs(
    keys: Sequence[str],
    candidates: Sequence[str],
    references: Sequence[Sequence[str]],
    tokenizer: str,
    options: Mapping[str, Mapping[str, Any]] | None,
    errors: dict[str, CapevalError] | None,
    notes: dict[str, tuple[str, ...]] | None = None,
) -> tuple[dict[str, list[float]], dict[str, str]]:
    from capeval_core.api import score_many
    from capeval_core.errors import DegenerateCorpusWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateCorpusWarning)
        results = score_many(
            keys,
            candidates,
            references,
            tokenizer=tokenizer,
            options=options,
            warn=False,
            errors=errors,
        )
    values = {k: r.segment_values(k) for k, r in results.items()}
    if notes is not None:  # the degenerate-set notes the warning filter above kept quiet
        notes.update({k: tuple(r.warnings) for k, r in results.items() if r.warnings})
    return values, {k: str(r.signature) for k, r in results.items()}


def _score_alone(
    keys: Sequence[str],
    captions: Sequence[str],
    references: Sequence[str],
    tokenizer: str,
    options: Mapping[str, Mapping[str, Any]] | None,
    errors: dict[str, CapevalError] | None,
    notes: dict[str, tuple[str, ...]] | None = None,
) -> tuple[dict[str, list[float]], dict[str, str]]:
    """Each caption scored against ``references`` as a set of its own, as ``capeval score``
    scores a file of that one caption: coco's tokenizer reads a line-final "A." by the line
    after it, so scoring the captions together gave one caption two "before" scores.

    A metric failing on any caption goes to ``errors`` (when given) for all of them.
    """
    keys = list(keys)
    scored: dict[str, dict[str, float]] = {}
    sigs: dict[str, str] = {}
    failed: dict[str, CapevalError] = {}
    for caption in dict.fromkeys(captions):  # one score for each caption however often
        left = [k for k in keys if k not in failed]
        if failed and not left:
            break
        found: dict[str, tuple[str, ...]] = {}
        errs: dict[str, CapevalError] | None = None if errors is None else {}
        values, s = _score_pairs(left, [caption], [references], tokenizer, options, errs, found)
        failed.update(errs or {})
        sigs.update(s)
        scored[caption] = {k: v[0] for k, v in values.items()}
        if notes is not None:
            for k, said in found.items():
                notes[k] = tuple(dict.fromkeys((*notes.get(k, ()), *said)))
    if errors is not None:
        errors.update(failed)
    kept = [k for k in dict.fromkeys(keys) if k not in failed]
    return {k: [scored[c][k] for c in captions] for k in kept}, {k: sigs[k] for k in kept}


def score_perturbations(
    perturbations: Sequence[Perturbation],
    references: Sequence[str],
    keys: Sequence[str],
    *,
    tokenizer: str = "ptb",
    options: Mapping[str, Mapping[str, Any]] | None = None,
    errors: dict[str, CapevalError] | None = None,
) -> tuple[PerturbationScores, ...]:
    """Score each perturbation's original and perturbed caption against ``references``.

    Each caption is scored as a set of its own, so every number is what ``capeval score``
    gives on that one caption (and "before" is the same whichever perturbations go with
    it). With CIDEr-D's default ``idf="corpus"`` the document frequencies come from the one
    image's references, which makes every weight 0; pass
    ``options={"cider_d": {"idf": "coco-val2014"}}`` for one caption. A metric failing with a
    CapevalError goes to ``errors`` when given (the rest still score).

    >>> p = perturb("a man riding a wave", "shuffle", seed=0)
    >>> s = score_perturbations([p], ["a man riding a wave"], ["bleu_1", "bleu_4"])[0]
    >>> s.delta("bleu_1"), s.delta("bleu_4") < 0
    (0.0, True)
    """
    refuse_text(keys, "keys", "metric keys")
    refs = tuple(references)
    if isinstance(references, str) or not refs:
        raise InputError("`references` must be a non-empty list of captions")
    one = isinstance(perturbations, Perturbation | str)
    perturbations = () if one else tuple(perturbations)  # a generator, used once
    if one or not all(isinstance(p, Perturbation) for p in perturbations):
        raise InputError("`perturbations` must be a list of Perturbation (from perturb())")
    if not perturbations:
        return ()
    cands = [p.original for p in perturbations] + [p.perturbed for p in perturbations]
    notes: dict[str, tuple[str, ...]] = {}
    values, sigs = _score_alone(list(keys), cands, refs, tokenizer, options, errors, notes)
    n = len(perturbations)
    return tuple(
        PerturbationScores(
            p,
            refs,
            {k: v[i] for k, v in values.items()},
            {k: v[n + i] for k, v in values.items()},
            sigs,
            notes,
        )
        for i, p in enumerate(perturbations)
    )


#: the seed paper's Table 2 rows: (label, perturbation, options)
TABLE2_ROWS: tuple[tuple[str, str | None, tuple[tuple[str, Any], ...]], ...] = (
    ("original (itself)", None, ()),
    ("synonyms", "synonym", (("n", 2),)),
    ("redundancy", "redundant", (("mode", "repeat"), ("length", 2))),
    ("word order", "shuffle", ()),
)


@dataclass(frozen=True)
class Table2:
    """The seed paper's Table 2 experiment on one caption: the caption scored against itself
    (the upper bound), then synonyms, redundancy and word order, each scored against the
    original caption as the only reference."""

    caption: str
    rows: tuple[tuple[str, Perturbation], ...]
    scores: Mapping[str, Mapping[str, float]]
    signatures: Mapping[str, str]

    def to_frame(self) -> pd.DataFrame:
        """One row per variant: its label, text, and a column per key."""
        return pd.DataFrame(
            [
                {"variant": label, "caption": p.perturbed, **self.scores[label]}
                for label, p in self.rows
            ]
        )


def table2(
    caption: str,
    keys: Sequence[str],
    *,
    seed: int = 0,
    tokenizer: str = "ptb",
    options: Mapping[str, Mapping[str, Any]] | None = None,
    errors: dict[str, CapevalError] | None = None,
) -> Table2:
    """Reproduce the Table 2 pattern on ``caption`` (see :class:`Table2`); each variant is
    scored as a set of its own, as :func:`score_perturbations` scores.

    >>> t = table2("a man riding a wave on a surfboard", ["bleu_4"], seed=0)
    >>> [round(t.scores[label]["bleu_4"], 3) for label, _ in t.rows][0]
    1.0
    """
    if not isinstance(caption, str) or not caption.strip():
        raise InputError("`caption` must be a non-empty string")
    refuse_text(keys, "keys", "metric keys")
    rows = []
    for label, name, opts in TABLE2_ROWS:
        if name is None:
            rows.append((label, Perturbation(caption, caption, (), "identity", seed, "itself")))
        else:
            rows.append((label, perturb(caption, name, seed=seed, **dict(opts))))
    values, sigs = _score_alone(
        list(keys), [p.perturbed for _, p in rows], [caption], tokenizer, options, errors
    )
    scores = {label: {k: v[i] for k, v in values.items()} for i, (label, _) in enumerate(rows)}
    return Table2(caption, tuple(rows), scores, sigs)


# -- batch mode ----------------------------------------------------------------------------------
def _check_seed(seed: object) -> None:
    """A seed is an integer of any sign; not True, 1.5 or "3". A negative one is taken modulo
    2**64, as :func:`item_seed` takes it (``random.Random`` drops the sign: seed -3 gave seed
    3's perturbations)."""
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer):
        raise InputError(f"`seed` must be an integer (got {seed!r})")


def item_seed(seed: int, index: int) -> int:
    """The seed item ``index`` of a batch run with ``seed`` uses (reproduces it alone). Every
    seed is taken modulo 2**64 (SeedSequence takes none below 0).

    >>> item_seed(0, 0) == item_seed(0, 0) != item_seed(0, 1)
    True
    """
    return int(np.random.SeedSequence([int(seed) % 2**64, int(index)]).generate_state(1)[0])


@dataclass(frozen=True, eq=False)
class BatchPerturbation:
    """A perturbation applied to every candidate of a dataset, and its effect on the metrics.

    ``before[key]``/``after[key]`` hold one segment score per item; ``human`` (graded judgment
    sets only) the human scores the correlations are computed against; ``ids`` the dataset's
    own ids of the items (COCO image ids, a judgment set's item ids), so a table names the
    items as the dataset does.
    """

    name: str
    seed: int
    source: str
    keys: tuple[str, ...]
    perturbations: tuple[Perturbation, ...]
    before: Mapping[str, np.ndarray]
    after: Mapping[str, np.ndarray]
    signatures: Mapping[str, str]
    human: np.ndarray | None = None
    human_name: str | None = None
    skipped: Mapping[str, str] = field(default_factory=dict)
    ids: tuple[Any, ...] | None = None

    def __len__(self) -> int:
        return len(self.perturbations)

    @property
    def item_ids(self) -> tuple[Any, ...]:
        """Each item's id in row order: the dataset's (:attr:`ids`), else its row number
        counted from 1.

        >>> b = perturb_batch(["a dog"], [["a dog"]], "shuffle", ["bleu_1"], ids=[391895])
        >>> b.item_ids, perturb_batch(["a dog"], [["a dog"]], "shuffle", ["bleu_1"]).item_ids
        ((391895,), (1,))
        """
        return self.ids if self.ids is not None else tuple(range(1, len(self) + 1))

    @property
    def changed(self) -> np.ndarray:
        """Boolean mask of the items the perturbation changed."""
        return np.array([p.is_changed for p in self.perturbations], dtype=bool)

    def deltas(self) -> pd.DataFrame:
        """Tidy per-item frame: item (its id, :attr:`item_ids`), key, before, after, delta,
        changed."""
        changed = self.changed
        frames = [
            pd.DataFrame(
                {
                    "item": list(self.item_ids),
                    "key": key,
                    "before": self.before[key],
                    "after": self.after[key],
                    "delta": change(self.after[key], self.before[key]),
                    "changed": changed,
                }
            )
            for key in self.before
        ]
        return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()

    def summary(self) -> pd.DataFrame:
        """Per key, over the changed items: mean/median/std of the change, share lowered.

        A change, and "lowered", is one beyond the forced-choice tie tolerance
        (:func:`change`): WMD's transport solver leaves ~1e-16 between a caption and its
        shuffle, no change.
        """
        mask = self.changed
        rows = []
        for key in self.before:
            d = change(self.after[key], self.before[key])[mask]
            lowered = d < 0
            rows.append(
                {
                    "key": key,
                    "n changed": int(mask.sum()),
                    "mean before": float(np.mean(self.before[key][mask])) if d.size else math.nan,
                    "mean delta": float(np.mean(d)) if d.size else math.nan,
                    "median delta": float(np.median(d)) if d.size else math.nan,
                    "std delta": float(np.std(d)) if d.size else math.nan,
                    "share lowered": float(np.mean(lowered)) if d.size else math.nan,
                    "signature": self.signatures.get(key, ""),
                }
            )
        return pd.DataFrame(rows)

    def correlations(
        self, methods: Sequence[str] = ("pearson", "spearman", "kendall_b")
    ) -> pd.DataFrame:
        """Per key and method: correlation with the human scores before and after (empty
        without human scores; NaN where it is not defined: a constant metric, one item)."""
        from capeval_core.stats import correlate

        if self.human is None:
            return pd.DataFrame(columns=["key", "method", "before", "after", "change"])

        def r(values: np.ndarray, method: str) -> float:
            if len(values) < 2:  # a one-row file: no correlation, as for a constant one
                return math.nan
            return correlate(values, self.human, method).statistic

        rows = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a constant metric gives NaN
            for key in self.before:
                for method in methods:
                    b, a = r(self.before[key], method), r(self.after[key], method)
                    rows.append(
                        {
                            "key": key,
                            "method": method,
                            "before": b,
                            "after": a,
                            "change": float(change(a, b)),
                        }
                    )
        return pd.DataFrame(rows)


def perturb_batch(
    candidates: Sequence[str],
    references: Sequence[Sequence[str]],
    name: str,
    keys: Sequence[str],
    *,
    seed: int = 0,
    perturb_options: Mapping[str, Any] | None = None,
    tokenizer: str = "ptb",
    options: Mapping[str, Mapping[str, Any]] | None = None,
    human: Sequence[float] | None = None,
    human_name: str | None = None,
    source: str = "",
    on_error: str = "raise",
    ids: Sequence[Any] | None = None,
) -> BatchPerturbation:
    """Perturb every candidate (item ``i`` with :func:`item_seed` ``(seed, i)``) and score the
    originals and the perturbed captions with ``keys`` against the same references.

    References are tokenized once for both runs. ``on_error="skip"`` records a metric that
    fails with a CapevalError in ``skipped`` instead of raising. ``ids`` (one per candidate,
    e.g. :attr:`BatchDataset.ids`) name the items in the results' tables.

    >>> b = perturb_batch(["a dog runs", "a cat sleeps"], [["a dog is running"], ["a cat"]],
    ...                   "shuffle", ["bleu_1"])
    >>> int(b.changed.sum()), float((b.after["bleu_1"] - b.before["bleu_1"]).max())
    (2, 0.0)
    """
    from capeval_core.metrics import check_reported_key, make_batch, metric_class
    from capeval_core.tokenize import get_tokenizer

    if on_error not in ("raise", "skip"):
        raise InputError(f"`on_error` must be 'raise' or 'skip' (got {on_error!r})")
    _check_seed(seed)
    refuse_text(keys, "keys", "metric keys")
    keys = list(keys)  # a generator is read twice
    for key in keys:  # spice_object was scored as SPICE's own value, under its name
        check_reported_key(key)
    for label, value in (("perturb_options", perturb_options), ("options", options)):
        if value is not None and not isinstance(value, Mapping):
            raise InputError(f"`{label}` must be a dict (got {type(value).__name__})")
    if options is not None and not all(isinstance(v, Mapping) for v in options.values()):
        raise InputError("`options` must map a metric key to a dict of its options")
    if human is not None:
        try:
            human = np.asarray(human, dtype=float)
        except (TypeError, ValueError):
            raise InputError("`human` must be one number per candidate") from None
        if human.ndim != 1:
            raise InputError(f"`human` must be one number per candidate (got shape {human.shape})")
    if human is not None and len(human) != len(candidates):
        raise InputError(
            f"`human` and `candidates` must have the same length (got {len(human)} and "
            f"{len(candidates)})"
        )
    if ids is not None:
        refuse_text(ids, "ids", "item ids")
        ids = tuple(ids)
        if len(ids) != len(candidates):
            raise InputError(
                f"`ids` and `candidates` must have the same length (got {len(ids)} and "
                f"{len(candidates)})"
            )
    spec = perturbation_spec(name)
    extra = dict(perturb_options or {})
    if spec.name == "synonym":  # tag every caption in one batch, not one call each
        from capeval_core.senses import tag_captions

        tag_captions(list(candidates))
    pert = tuple(
        perturb(c, spec.name, seed=item_seed(seed, i), **extra) for i, c in enumerate(candidates)
    )
    batch = make_batch(candidates, references, tokenizer)
    tok = get_tokenizer(tokenizer)
    perturbed = tuple(p.perturbed for p in pert)
    after_batch = replace(
        batch,
        candidates=perturbed,
        candidate_tokens=tuple(tok.tokenize_batch(list(perturbed))),
    )
    options = options or {}
    before: dict[str, np.ndarray] = {}
    after: dict[str, np.ndarray] = {}
    sigs: dict[str, str] = {}
    skipped: dict[str, str] = {}
    done: dict[str, tuple[Any, Any] | CapevalError] = {}
    with warnings.catch_warnings():
        from capeval_core.errors import DegenerateCorpusWarning

        warnings.simplefilter("ignore", DegenerateCorpusWarning)
        for key in dict.fromkeys(keys):
            cls = metric_class(key)
            if cls.key not in done:
                try:
                    metric = cls(tokenizer=tokenizer, **dict(options.get(cls.key, {})))
                    done[cls.key] = (
                        metric.score_batch(batch, warn=False),
                        metric.score_batch(after_batch, warn=False),
                    )
                except CapevalError as exc:
                    if on_error == "raise":
                        raise
                    done[cls.key] = exc
            res = done[cls.key]
            if isinstance(res, CapevalError):
                skipped[key] = str(res)
                continue
            report = cls.value_key(key)
            before[key] = np.asarray(res[0].segment_values(report), dtype=float)
            after[key] = np.asarray(res[1].segment_values(report), dtype=float)
            sigs[key] = str(res[0].signature)
    return BatchPerturbation(
        spec.name,
        int(seed),
        source,
        tuple(before),
        pert,
        before,
        after,
        sigs,
        None if human is None else np.asarray(human, dtype=float),
        human_name,
        skipped,
        ids,
    )


# -- datasets of a batch run ---------------------------------------------------------------------
#: what :func:`batch_dataset` knows: COCO val2014's first images, the synthetic graded demo, a
#: graded judgment set given to it
BATCH_DATASETS = ("coco-val", "demo-graded", "loaded")


@dataclass(frozen=True, eq=False)
class BatchDataset:
    """The inputs of :func:`perturb_batch` for one dataset: candidates and references, the
    human scores and their column where the dataset has them, a sentence naming it, and the
    items' own ids in row order (COCO image ids, a judgment set's item ids)."""

    candidates: Sequence[str]
    references: Sequence[Sequence[str]]
    source: str
    human: np.ndarray | None = None
    human_name: str | None = None
    ids: tuple[Any, ...] | None = None


#: the seed of the synthetic graded demo a batch run perturbs (its captions and scores), the
#: same for the library, the app's lab and ``capeval perturb --dataset demo-graded``
DEMO_SEED = 0


def batch_dataset(
    dataset: str,
    n_images: int,
    *,
    jset: Any = None,
    described_as: str = "the judgment set",
) -> BatchDataset:
    """The candidates a batch run perturbs (see :data:`BATCH_DATASETS`).

    ``"coco-val"``: the first ``n_images`` COCO val2014 images (first caption as candidate,
    the others as references; no human scores). ``"demo-graded"``: the synthetic graded demo
    on ``n_images // 5`` images (seed 0), with its first human-score column. ``"loaded"``:
    the first ``n_images`` candidates of the graded judgment set ``jset``, with its first
    human-score column; the source reads "``described_as`` (its files; first N candidates)".

    >>> from capeval_core.judgments import GradedItem, JudgmentSet
    >>> items = (GradedItem("1", "img1", "a dog", ("a dog runs",), (4.0,)),
    ...          GradedItem("2", "img2", "a cat", ("a cat",), (2.0,)))
    >>> jset = JudgmentSet("graded", items, ("q",), ("mine.csv",), n_read=2, n_kept=2)
    >>> d = batch_dataset("loaded", 1, jset=jset)
    >>> d.candidates, d.ids, d.human_name, d.source
    (['a dog'], ('1',), 'q', 'the judgment set (mine.csv; first 1 candidates)')
    """
    if isinstance(n_images, bool) or not isinstance(n_images, int | np.integer) or n_images < 1:
        raise InputError(f"`n_images` must be a whole number of at least 1 (got {n_images!r})")
    if dataset == "loaded":
        if jset is None or getattr(jset, "kind", None) != "graded":
            kind = "no set" if jset is None else f"a {jset.kind} one"
            raise InputError(f"`jset` must be a graded judgment set (got {kind})")
        rows = min(n_images, len(jset))
        human_name = jset.score_names[0]
        names = ", ".join(jset.source) or "uploaded file"
        return BatchDataset(
            jset.candidates[:rows],
            jset.references[:rows],
            f"{described_as} ({names}; first {rows:,} candidates)",
            jset.human(human_name)[:rows],
            human_name,
            tuple(it.id for it in jset.items[:rows]),
        )
    if dataset == "coco-val":
        from capeval_core.resources import coco_caption_sets

        sets = coco_caption_sets("val", n_images)
        return BatchDataset(
            [s.candidate for s in sets],
            [s.references for s in sets],
            f"COCO val2014, first {len(sets)} images",
            ids=tuple(s.image_id for s in sets),
        )
    if dataset == "demo-graded":
        from capeval_core.judgments.demo import demo_graded

        demo = demo_graded(max(1, n_images // 5), seed=DEMO_SEED)
        human_name = demo.score_names[0]
        return BatchDataset(
            demo.candidates,
            demo.references,
            f"synthetic graded demo ({len(demo)} candidates)",
            demo.human(human_name),
            human_name,
            tuple(it.id for it in demo.items),
        )
    raise UnknownKeyError(
        f"unknown batch dataset {dataset!r}; choose one of {', '.join(BATCH_DATASETS)}"
    )


__all__ = [
    "BATCH_DATASETS",
    "PERTURBATIONS",
    "TABLE2_ROWS",
    "BatchDataset",
    "BatchPerturbation",
    "Change",
    "Perturbation",
    "PerturbationScores",
    "PerturbationSpec",
    "Table2",
    "available_perturbations",
    "batch_dataset",
    "item_seed",
    "join_words",
    "perturb",
    "perturb_batch",
    "perturb_each",
    "perturbation_spec",
    "score_perturbations",
    "split_words",
    "synonyms",
    "table2",
    "word_list",
]
