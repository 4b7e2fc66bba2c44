"""SPICE's tuple matching and categories (metric-spec §6.2): each candidate tuple against the
merged reference graph, without a one-to-one constraint; TupleFilter's category word lists."""

from __future__ import annotations

from collections.abc import Sequence

from capeval_core.spice.depgraph import word_set
from capeval_core.spice.graph import Concept

# §6.2: SPICE's TupleFilter word lists (spice-1.0.jar, edu/anu/spice/TupleFilter).
CARDINALITY_WORDS = word_set("one two three four five six seven eight nine ten")
COLOR_WORDS = word_set(
    "black brown blue red yellow pink gray grey green dark light white cream orange purple "
    "maroon beige violet"
)
SIZE_WORDS = word_set(
    """baby illimitable scrawny beefy immeasurable short big immense sizable bony infinitesimal
    skeletal boundless lanky skimpy brawny large skinny broad lean slender bulky life-size slim
    chunky limitless small colossal little squat compact mammoth stocky corpulent massive stout
    cosmic meager strapping cubby measly sturdy curvy microscopic tall elfin mini teensy
    emaciated miniature teeny endless minuscule teeny-tiny enormous minute teeny-weeny epic
    narrow thick expansive obese thickset extensive outsized thin fat oversize tiny fleshy
    overweight titanic full-size paltry towering gargantuan petite trifling gaunt pint-size trim
    giant plump tubby gigantic pocket-size undersized grand portly underweight great pudgy
    unlimited heavy puny vast hefty rotund wee huge scanty whopping hulking scraggy wide"""
)

#: Categories SPICE reports with ``-subset`` ("Cardinality" is what papers call "Count").
CATEGORIES: tuple[str, ...] = (
    "All",
    "Object",
    "Attribute",
    "Relation",
    "Color",
    "Cardinality",
    "Size",
)


#: Categories of attribute tuples whose word is in one of TupleFilter's lists.
WORD_LIST_CATEGORIES: tuple[str, ...] = ("Color", "Cardinality", "Size")


def categories_of(t: tuple[Concept, ...]) -> tuple[str, ...]:
    """The categories a tuple counts in ("All" and its arity's, plus Color/Cardinality/Size
    for attributes whose word is in that list)."""
    if len(t) == 1:
        return ("All", "Object")
    if len(t) == 3:
        return ("All", "Relation")
    word = str(t[1])
    out = ("All", "Attribute")
    for name, words in (
        ("Color", COLOR_WORDS),
        ("Cardinality", CARDINALITY_WORDS),
        ("Size", SIZE_WORDS),
    ):
        if word in words:
            out += (name,)
    return out


def match_tuples(
    cand: Sequence[tuple[Concept, ...]], ref: Sequence[tuple[Concept, ...]], synsets: bool = True
) -> tuple[list[int | None], list[str], list[bool]]:
    """§6.2: for each candidate tuple, the first matching reference tuple (no one-to-one
    constraint: SPICE 1.0 counts each) and its status ("exact": that match shares a string at
    every position, "synonym", "missed"); and which reference tuples are some candidate
    tuple's first match, the ones the jar's ``-detailed`` output marks true.

    >>> d, c = Concept(("dog",), frozenset({1})), Concept(("puppy",), frozenset({1}))
    >>> match_tuples([(d,), (c,)], [(d,), (Concept(("cat",), frozenset()),)])
    ([0, 0], ['exact', 'synonym'], [True, False])
    """

    def keys(t: tuple[Concept, ...]) -> tuple[tuple[frozenset[str], frozenset[int]], ...]:
        return tuple((c.string_set, c.synsets) for c in t)

    ref_keys = [keys(u) for u in ref]
    by_arity: dict[int, list[int]] = {}
    for k, u in enumerate(ref_keys):
        by_arity.setdefault(len(u), []).append(k)
    first: list[int | None] = []
    status: list[str] = []
    ref_hit = [False] * len(ref)
    for t in cand:
        tk = keys(t)
        hit, exact = None, False
        for k in by_arity.get(len(tk), ()):
            rk = ref_keys[k]
            if synsets:
                ok = all(
                    not a[0].isdisjoint(b[0]) or not a[1].isdisjoint(b[1])
                    for a, b in zip(tk, rk, strict=True)
                )
            else:
                ok = all(a[0] == b[0] for a, b in zip(tk, rk, strict=True))
            if ok:
                ref_hit[k] = True
                hit = k
                exact = all(not a[0].isdisjoint(b[0]) for a, b in zip(tk, rk, strict=True))
                break
        first.append(hit)
        status.append("missed" if hit is None else "exact" if exact else "synonym")
    return first, status, ref_hit
