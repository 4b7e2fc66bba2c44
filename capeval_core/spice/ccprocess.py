"""CoreNLP 3.6.0's step from the parser's basic UD tree to the CollapsedCCProcessed graph that
SPICE-1.0 reads (``SemanticGraphFactory.generateCCProcessedDependencies`` over English UD, no
extra dependencies: SPICE sets ``depparse.extradependencies`` but runs the ``parse`` annotator).

:func:`cc_process` takes what a dependency parser gives (words, tags, basic edges, root) and
runs CoreNLP's steps in CoreNLP's order:

1. passive subjects corrected (``nsubj`` of a verb with ``auxpass`` becomes ``nsubjpass``) and
   duplicate edges dropped (the parser's own output already has both);
2. multiword prepositions ("next to", "out of", "in front of", "on top of") joined into one
   ``case`` marker with ``mwe`` dependents;
3. coordinated prepositional phrases ("on a road and in a field") and coordinated prepositions
   ("walk to and from trains") expanded with copy nodes of the governor (``walk'``);
4. ``nmod``/``acl``/``advcl`` named after their case markers (``nmod:on``, ``nmod:in_front_of``;
   ``nmod:agent`` for a passive's "by");
5. ``conj`` named after its coordinator (``conj:and``, ``conj:negcc`` for "but not", ...);
6. relations shared through conjuncts (each conjunct gets its first conjunct's governors), and
   subjects of conjoined verbs and adjectives.

Every step is a function of the dependency graph alone: CoreNLP never looks at the
constituency tree here. Where a step's outcome depends on the order in which CoreNLP visits
nodes and edges (which marker wins when a word has two, which copy gets which prime), the
graph below reproduces the visiting order of CoreNLP's ``SemanticGraph``: hash maps keyed by
token index, Semgrex matches in topological order, copies numbered per word object.
"""

from __future__ import annotations

from collections.abc import Iterator

from capeval_core.spice.depgraph import DepGraph, Token, word_set

_SHIFT = 10  # a node's key: token index (1-based) << _SHIFT | copy count (< 1024)


class _Word:
    """One node object; CoreNLP numbers copies per object, so a token may have several."""

    __slots__ = ("copies", "index", "key", "original")

    def __init__(self, index: int, copy: int = 0, original: _Word | None = None) -> None:
        self.index = index
        self.key = index << _SHIFT | copy
        self.copies = 0
        self.original = original

    def soft_copy(self) -> _Word:
        if self.original is not None:
            return self.original.soft_copy()
        self.copies += 1
        return _Word(self.index, self.copies, self)


class _Edge:
    __slots__ = ("dep", "gov", "rel")

    def __init__(self, gov: _Word, rel: str, dep: _Word) -> None:
        self.gov = gov
        self.rel = rel
        self.dep = dep


def _capacity(size: int) -> int:
    """The table size of a Java HashMap that has held ``size`` entries (load factor 0.75)."""
    cap = 16
    while size > cap * 3 // 4:
        cap *= 2
    return cap


def _java_order(keys, cap: int) -> list[int]:
    """A Java HashMap's iteration order over node keys (hash = token index): by bucket, and
    by insertion within a bucket."""
    if len(keys) < 2:
        return list(keys)
    mask = cap - 1
    return sorted(keys, key=lambda k: (k >> _SHIFT) & mask)


class _Graph:
    """CoreNLP's ``SemanticGraph`` with its visiting orders: outgoing and incoming edges per
    node in hash maps keyed by the other end, the incoming map keeping the governor object
    that first entered it (``getParent`` returns that object, and copies are made of it).

    A map's capacity is taken from its present size (CoreNLP's maps keep the capacity of
    their largest size; they differ only for a word that once had more than 12 dependents).
    """

    __slots__ = ("_kids", "inn", "keyobj", "out", "roots", "tags", "words")

    def __init__(self, words: list[str], tags: list[str]) -> None:
        self.words = words  # by 1-based index
        self.tags = tags
        self.out: dict[int, dict[int, list[_Edge]]] = {}
        self.inn: dict[int, dict[int, tuple[_Word, list[_Edge]]]] = {}
        self.keyobj: dict[int, _Word] = {}
        self.roots: dict[int, _Word] = {}
        self._kids: dict[int, list[_Edge]] = {}  # ordered outgoing edges, until they change

    # -- building --------------------------------------------------------------------------
    def add_vertex(self, w: _Word) -> None:
        if w.key not in self.out:
            self.out[w.key] = {}
            self.inn[w.key] = {}
            self.keyobj[w.key] = w

    def add_edge(self, gov: _Word, dep: _Word, rel: str) -> _Edge:
        g, d = gov.key, dep.key
        if g not in self.out:
            self.add_vertex(gov)
        if d not in self.out:
            self.add_vertex(dep)
        e = _Edge(gov, rel, dep)
        om = self.out[g]
        lst = om.get(d)
        if lst is None:
            om[d] = [e]
        else:
            lst.append(e)
        im = self.inn[d]
        slot = im.get(g)
        if slot is None:
            im[g] = (gov, [e])
        else:
            slot[1].append(e)
        self._kids.pop(g, None)
        return e

    def remove_edge(self, e: _Edge) -> None:
        g, d = e.gov.key, e.dep.key
        om = self.out.get(g)
        lst = om.get(d) if om is not None else None
        if not lst:
            return
        for i, x in enumerate(lst):
            if x.rel == e.rel:
                del lst[i]
                break
        ilst = self.inn[d][g][1]
        for i, x in enumerate(ilst):
            if x.rel == e.rel:
                del ilst[i]
                break
        if not lst:
            del om[d]
        if not ilst:
            del self.inn[d][g]
        self._kids.pop(g, None)

    # -- reading, in CoreNLP's orders -----------------------------------------------------
    def vertices(self) -> list[_Word]:
        return [self.keyobj[k] for k in _java_order(self.out, _capacity(len(self.out)))]

    def snapshot(self) -> list[_Word]:
        """The vertices of ``makeSoftCopy`` in its order: the copy adds them edge by edge.

        Matching on the copy is matching on this graph before any change, so each stage
        collects its matches first and then acts."""
        seen: dict[int, _Word] = {}
        for v in self.vertices():
            for e in self.kids(v.key):
                if e.gov.key not in seen:
                    seen[e.gov.key] = e.gov
                if e.dep.key not in seen:
                    seen[e.dep.key] = e.dep
        return [seen[k] for k in _java_order(seen, _capacity(len(seen)))]

    def root_order(self) -> list[_Word]:
        return [self.roots[k] for k in _java_order(self.roots, 16)]

    def kids(self, key: int) -> list[_Edge]:
        got = self._kids.get(key)
        if got is None:
            om = self.out.get(key)
            if not om:
                got = []
            elif len(om) == 1:
                got = list(next(iter(om.values())))
            else:
                got = []
                for t in _java_order(om, _capacity(len(om))):
                    got.extend(om[t])
            self._kids[key] = got
        return got

    def edges(self) -> Iterator[_Edge]:
        for v in self.vertices():
            yield from self.kids(v.key)

    def is_tree(self) -> bool:
        """No node with two incoming edges (then no Semgrex match order changes a result)."""
        for im in self.inn.values():
            if len(im) > 1:
                return False
            for _, lst in im.values():
                if len(lst) > 1:
                    return False
        return True

    def get_edge(self, gov: int, dep: int) -> _Edge | None:
        om = self.out.get(gov)
        lst = om.get(dep) if om is not None else None
        return lst[0] if lst else None

    def reln(self, gov: int, dep: int) -> str | None:
        for e in self.kids(gov):
            if e.dep.key == dep:
                return e.rel
        return None

    def node_at(self, index: int) -> _Word | None:
        """``getNodeByIndexSafe``: the first vertex with this token index (a copy never comes
        before its original)."""
        return self.keyobj.get(index << _SHIFT)

    def word(self, w: _Word) -> str:
        return self.words[w.index]

    def parent(self, key: int) -> _Word | None:
        """``getParent``: the first governor (by index) from which a root can be reached."""
        im = self.inn.get(key)
        if not im or key in self.roots:
            return None
        if len(im) == 1:
            p, (obj, _) = next(iter(im.items()))
            if p in self.roots:
                return obj
        path = self._path_to_root(key, [])
        return path[-1] if path else None

    def _path_to_root(self, key: int, used: list[int]) -> list[_Word] | None:
        used.append(key)
        im = self.inn.get(key)
        parents = [p for p in sorted(im) if p not in used] if im else []
        if key in self.roots or not parents:
            used.pop()
            return [] if key in self.roots else None
        for p in parents:
            path = self._path_to_root(p, used)
            if path is not None:
                path.append(im[p][0])
                used.pop()
                return path
        used.pop()
        return None

    def topological(self, order: list[_Word]) -> list[_Word]:
        """The order Semgrex visits candidate nodes in: reverse DFS postorder from the
        vertices in ``order`` (``order`` itself if there is a cycle)."""
        result: list[_Word] = []
        seen: set[int] = set()
        done: set[int] = set()

        def visit(w: _Word) -> None:
            seen.add(w.key)
            for e in self.kids(w.key):
                t = e.dep
                if t.key in done:
                    continue
                if t.key in seen:
                    raise _Cycle
                visit(t)
            result.append(w)
            done.add(w.key)

        try:
            for v in order:
                if v.key not in seen:
                    visit(v)
        except _Cycle:
            return order
        result.reverse()
        return result


class _Cycle(Exception):
    pass


# -- the relations ---------------------------------------------------------------------------
_CLAUSE_RELATIONS = word_set("conj xcomp ccomp acl advcl acl:relcl parataxis appos list")
# relations CoreNLP names with a colon but does not treat as a subtype of nmod or acl
_OWN_RELATIONS = frozenset(("nmod:tmod", "nmod:npmod", "nmod:poss", "acl:relcl"))
_NMOD_SUBTYPES = {"npmod": "nmod:npmod", "tmod": "nmod:tmod", "poss": "nmod:poss"}
_SUBJECTS = frozenset(("nsubj", "nsubjpass", "csubj", "csubjpass"))


def _case_marked(rel: str, marker: str) -> str:
    """``nmod``, ``acl`` or ``advcl`` (or a subtype made from one) named after ``marker``."""
    if rel in _OWN_RELATIONS:
        return rel
    base = rel.split(":", 1)[0]
    if base == "nmod":
        return _NMOD_SUBTYPES.get(marker, "nmod:" + marker)
    if base == "acl":
        return "acl:relcl" if marker == "relcl" else "acl:" + marker
    if base == "advcl":
        return "advcl:" + marker
    return rel


def _conj_value(g: _Graph, cc: _Word) -> str:
    """The ``conj`` subtype a coordinator gives ("but not", "rather than": ``negcc``)."""
    pos = cc.index
    word = g.word(cc)
    conj = word.lower()
    if conj == "not":
        prev = g.node_at(pos - 1)
        if prev is not None and g.word(prev).lower() == "but":
            return "conj:negcc"
    nxt = g.node_at(pos + 1)
    if nxt is None:
        return "conj:" + word
    second = g.word(nxt).lower()
    if conj == "but":
        if second == "rather":
            conj = "negcc"
        elif second == "also":
            conj = "and"
    elif (conj, second) in (("if", "not"), ("instead", "of"), ("rather", "than")):
        conj = "negcc"
    elif conj == "as" and second == "well":
        conj = "and"
    elif conj == "not" and second == "to":
        third = g.node_at(pos + 2)
        if third is not None and g.word(third).lower() == "mention":
            conj = "and"
    return "conj:" + conj


# -- 1. passive subjects, duplicates ------------------------------------------------------------
def _correct_passive_subjects(g: _Graph) -> None:
    """``gov >auxpass {} >nsubj|csubj subj``: the subject becomes passive (matches are
    independent of each other, so their order does not matter)."""
    found = []
    for key, gov in list(g.keyobj.items()):
        kids = g.kids(key)
        if any(e.rel == "auxpass" for e in kids):
            found += [(gov, e.dep) for e in kids if e.rel in ("nsubj", "csubj")]
    for gov, subj in found:
        edge = g.get_edge(gov.key, subj.key)
        if edge is not None and edge.rel in ("nsubj", "csubj"):
            g.remove_edge(edge)
            g.add_edge(gov, subj, edge.rel + "pass")


def _drop_duplicates(g: _Graph) -> None:
    """``deleteDuplicateEdges``: the edges between each pair of nodes sorted by relation,
    duplicates dropped (the order decides which edge a later step renames)."""
    for om in g.out.values():
        for lst in om.values():
            if len(lst) > 1:
                lst[:] = _sorted_unique(lst)
    for im in g.inn.values():
        for _, lst in im.values():
            if len(lst) > 1:
                lst[:] = _sorted_unique(lst)
    g._kids.clear()


def _sorted_unique(edges: list[_Edge]) -> list[_Edge]:
    kept: dict[str, _Edge] = {}
    for e in edges:
        kept.setdefault(e.rel, e)
    return [kept[r] for r in sorted(kept)]


# -- 2. multiword prepositions ------------------------------------------------------------------
def _in_order(text: str) -> tuple[str, ...]:
    return tuple(text.split())


# CoreNLP's lists, in its order; its regular list also spells " depending_on" and " prior_to"
# with a leading space, so those two never match and are left out here.
_TWO_WORD_REGULAR = _in_order(
    "across_from along_with alongside_of apart_from as_for as_from as_of as_per as_to "
    "aside_from based_on close_by close_to contrary_to compared_to compared_with except_for "
    "exclusive_of far_from followed_by inside_of irrespective_of next_to near_to off_of out_of "
    "outside_of owing_to preliminary_to preparatory_to previous_to pursuant_to regardless_of "
    "subsequent_to thanks_to together_with"
)
_TWO_WORD_COMPLEX = _in_order(
    "apart_from as_from aside_from away_from close_by close_to contrary_to far_from next_to "
    "near_to out_of outside_of pursuant_to regardless_of together_with"
)
_THREE_WORD = _in_order(
    "by_means_of in_accordance_with in_addition_to in_case_of in_front_of in_lieu_of "
    "in_place_of in_spite_of on_account_of on_behalf_of on_top_of with_regard_to "
    "with_respect_to"
)
_BIGRAMS = frozenset(_TWO_WORD_REGULAR + _TWO_WORD_COMPLEX)
_TRIGRAMS = frozenset(_THREE_WORD)
_SECOND_WORDS = frozenset(p.split("_")[1] for p in _BIGRAMS | _TRIGRAMS)


def _hash_set_order(indices: list[int]) -> list[int]:
    """A Java ``HashSet<Integer>``'s iteration order over ``indices`` (added ascending)."""
    return sorted(indices, key=lambda i: i & (_capacity(len(indices)) - 1))


def _multiword_prepositions(g: _Graph) -> bool:
    """Joins the multiword prepositions of adjacent vertices; True if any matched."""
    vlist = sorted(g.out)
    lower = [g.words[k >> _SHIFT].lower() for k in vlist]
    if _SECOND_WORDS.isdisjoint(lower):
        return False
    bigrams: dict[str, list[int]] = {}
    trigrams: dict[str, list[int]] = {}
    for i in range(1, len(vlist)):
        bi = lower[i - 1] + "_" + lower[i]
        if bi in _BIGRAMS:
            found = bigrams.setdefault(bi, [])
            if vlist[i - 1] >> _SHIFT not in found:
                found.append(vlist[i - 1] >> _SHIFT)
        if i > 1:
            tri = lower[i - 2] + "_" + bi
            if tri in _TRIGRAMS:
                found = trigrams.setdefault(tri, [])
                if vlist[i - 2] >> _SHIFT not in found:
                    found.append(vlist[i - 2] >> _SHIFT)
    if not bigrams and not trigrams:
        return False
    for preps, found, step in (
        (_TWO_WORD_REGULAR, bigrams, _two_word_regular),
        (_TWO_WORD_COMPLEX, bigrams, _two_word_complex),
        (_THREE_WORD, trigrams, _three_word),
    ):
        for prep in preps:
            if prep in found:
                for i in _hash_set_order(found[prep]):
                    step(g, i)
    return True


def _leaf(g: _Graph, w: _Word) -> bool:
    return not g.out.get(w.key)


def _two_word_regular(g: _Graph, i: int) -> None:
    """``gov >case|advmod w1 >case w2`` (both leaves) becomes ``case(gov, w1) mwe(w1, w2)``."""
    w1, w2 = g.node_at(i), g.node_at(i + 1)
    if w1 is None or w2 is None or not _leaf(g, w1) or not _leaf(g, w2):
        return
    into_w2 = g.inn[w2.key]
    govs = [
        p
        for p, (_, edges) in g.inn[w1.key].items()
        if p in into_w2
        and any(e.rel in ("case", "advmod") for e in edges)
        and any(e.rel == "case" for e in into_w2[p][1])
    ]
    if not govs:
        return
    if len(govs) == 1:
        gov = g.keyobj[govs[0]]
    else:  # the first in Semgrex's order
        gov = next(w for w in g.topological(g.vertices()) if w.key in govs)
    _multiword_expression(g, gov, "case", (w1, w2))


def _two_word_complex(g: _Graph, i: int) -> None:
    """``w1 >nmod (gov2 >case w2)`` becomes ``gov2 >case (w1 >mwe w2)`` in w1's place."""
    w1, w2 = g.node_at(i), g.node_at(i + 1)
    if w1 is None or w2 is None or not _leaf(g, w2):
        return
    found = None
    for e in g.kids(w1.key):
        if e.rel != "nmod":
            continue
        if not any(x.rel == "case" and x.dep.key == w2.key for x in g.kids(e.dep.key)):
            continue
        if w1.key in g.roots:
            found = (None, e.dep)
            break
        parents = _incoming(g, w1.key)
        if parents:
            found = (parents[0].gov, e.dep)
            break
    if found is None:
        return
    gov, gov2 = found
    edge = g.get_edge(w1.key, gov2.key)
    g.remove_edge(edge)
    if w1.key in g.roots:
        del g.roots[w1.key]
        g.add_vertex(gov2)
        g.roots[gov2.key] = gov2
    else:
        if gov is None:
            gov = g.parent(w1.key)
        if gov is None:
            return
        rel = edge.rel
        if any(e.rel == "cop" for e in g.kids(w1.key)):
            rel2 = g.get_edge(gov.key, w1.key).rel
            if rel2 in _CLAUSE_RELATIONS:
                rel = rel2
        g.add_edge(gov, gov2, rel)
    _move_children(g, w1, gov2)
    _multiword_expression(g, gov2, "case", (w1, w2))


def _three_word(g: _Graph, i: int) -> None:
    """``w2 >case w1 >nmod (gov2 >case w3)`` becomes ``gov2 >case (w1 >mwe w2 >mwe w3)``."""
    w1, w2, w3 = g.node_at(i), g.node_at(i + 1), g.node_at(i + 2)
    if w1 is None or w2 is None or w3 is None or not _leaf(g, w1) or not _leaf(g, w3):
        return
    kids = g.kids(w2.key)
    if not any(x.rel == "case" and x.dep.key == w1.key for x in kids):
        return
    found = None
    for e in kids:
        if e.rel not in ("nmod", "acl", "advcl"):
            continue
        if not any(x.rel in ("case", "mark") and x.dep.key == w3.key for x in g.kids(e.dep.key)):
            continue
        parents = _incoming(g, w2.key)
        if parents:
            found = (parents[0].gov, e.dep)
            break
        if w2.key in g.roots:
            found = (None, e.dep)
            break
    if found is None:
        return
    gov, gov2 = found
    marker = "case"
    edge = g.get_edge(w2.key, gov2.key)
    g.remove_edge(edge)
    if w2.key in g.roots:
        del g.roots[w2.key]
        g.add_vertex(gov2)
        g.roots[gov2.key] = gov2
    else:
        if gov is None:
            gov = g.parent(w2.key)
        if gov is None:
            return
        rel = g.get_edge(gov.key, w2.key).rel
        if rel == "nmod" and edge.rel in ("acl", "advcl"):
            rel = edge.rel
            marker = "mark"
        g.add_edge(gov, gov2, rel)
    _move_children(g, w2, gov2)
    _multiword_expression(g, gov2, marker, (w1, w2, w3))


def _incoming(g: _Graph, key: int) -> list[_Edge]:
    im = g.inn.get(key)
    if not im:
        return []
    edges: list[_Edge] = []
    for s in _java_order(im, _capacity(len(im))):
        edges.extend(im[s][1])
    return edges


def _move_children(g: _Graph, old: _Word, new: _Word) -> None:
    moved = sorted(g.kids(old.key), key=lambda e: (e.dep.key, e.rel))
    for e in moved:
        g.remove_edge(e)
        g.add_edge(new, e.dep, e.rel)


def _multiword_expression(g: _Graph, gov: _Word, rel: str, words: tuple[_Word, ...]) -> None:
    if not g.roots:
        return
    head = None
    for w in words:
        wgov = g.parent(w.key)
        if wgov is not None:
            edge = g.get_edge(wgov.key, w.key)
            if edge is not None:
                g.remove_edge(edge)
        if head is None:
            g.add_edge(gov, w, rel)
            head = w
        else:
            g.add_edge(head, w, "mwe")


# -- 3. coordinated prepositional phrases and prepositions ----------------------------------
def _groups(matches) -> list[tuple[_Word, list[_Word], _Word]]:
    """Consecutive (gov, cc, conj) matches with the same gov and cc, as CoreNLP groups them."""
    groups = []
    old_gov = old_cc = None
    conjs: list[_Word] = []
    for gov, cc, conj in matches:
        if old_gov is not None and (gov.key != old_gov.key or cc.key != old_cc.key):
            groups.append((old_gov, conjs, old_cc))
            conjs = []
        old_gov, old_cc = gov, cc
        conjs.append(conj)
    if old_gov is not None:
        groups.append((old_gov, conjs, old_cc))
    return groups


def _pp_conjunction_matches(g: _Graph):
    """``{} >nmod|acl|advcl ((gov >case {}) >cc cc >conj (conj >case {}))``."""
    for top in g.topological(g.snapshot()):
        for e in g.kids(top.key):
            if e.rel not in ("nmod", "acl", "advcl"):
                continue
            gov = e.dep
            kids = g.kids(gov.key)
            n_case = sum(1 for x in kids if x.rel == "case")
            if not n_case:
                continue
            ccs = [x.dep for x in kids if x.rel == "cc"]
            conjs = [x.dep for x in kids if x.rel == "conj"]
            for _ in range(n_case):
                for cc in ccs:
                    for conj in conjs:
                        for x in g.kids(conj.key):
                            if x.rel == "case":
                                yield gov, cc, conj


def _expand_pp_conjunctions(g: _Graph) -> None:
    """A coordinated PP ("on a road and in a field"): the PP's governor is copied for each
    further conjunct, which it governs with the first conjunct's relation."""
    for gov, conjs, cc in _groups(_pp_conjunction_matches(g)):
        nmod_gov = g.parent(gov.key)
        if nmod_gov is None:
            continue
        conj_gov = nmod_gov.original or nmod_gov
        rel = g.reln(nmod_gov.key, gov.key)
        copies = []
        for conj in conjs:
            copy = nmod_gov.soft_copy()
            edge = g.get_edge(gov.key, conj.key)
            if edge is not None:
                g.remove_edge(edge)
                g.add_edge(copy, conj, rel)
            g.add_edge(conj_gov, copy, "conj")
            copies.append(copy)
        edge = g.get_edge(gov.key, cc.key)
        if edge is not None:
            g.remove_edge(edge)
            g.add_edge(conj_gov, cc, "cc")
        _name_conjuncts(g, conj_gov, copies, cc)


def _prep_conjunction_matches(g: _Graph):
    """``{} >case (gov >cc cc >conj conj)``: coordinated prepositions."""
    for top in g.topological(g.snapshot()):
        for e in g.kids(top.key):
            if e.rel != "case":
                continue
            kids = g.kids(e.dep.key)
            ccs = [x.dep for x in kids if x.rel == "cc"]
            conjs = [x.dep for x in kids if x.rel == "conj"]
            for cc in ccs:
                for conj in conjs:
                    yield e.dep, cc, conj


def _expand_prep_conjunctions(g: _Graph) -> None:
    """Coordinated prepositions ("walk to and from trains"): the verb is copied for each
    further preposition, the copy governing the same noun named after that preposition."""
    for gov, conjs, cc in _groups(_prep_conjunction_matches(g)):
        case_gov = g.parent(gov.key)
        if case_gov is None:
            continue
        case_gov_gov = g.parent(case_gov.key)
        if case_gov_gov is None:
            continue
        conj_gov = case_gov_gov.original or case_gov_gov
        rel = g.reln(case_gov_gov.key, case_gov.key)
        copies = []
        for conj in conjs:
            copy = case_gov_gov.soft_copy()
            g.add_edge(conj_gov, copy, "conj")
            copies.append(copy)
            g.add_edge(copy, case_gov, rel)
            _add_case_markers(g, copy, case_gov, [conj])
        _name_conjuncts(g, conj_gov, copies, cc)


def _name_conjuncts(g: _Graph, gov: _Word, conjs: list[_Word], cc: _Word) -> None:
    for conj in conjs:
        edge = g.get_edge(gov.key, conj.key)
        if edge.rel == "conj" or conj.index > cc.index:
            edge.rel = _conj_value(g, cc)


# -- 4. case markers ---------------------------------------------------------------------------
def _add_case_markers(g: _Graph, gov: _Word, mod: _Word, markers: list[_Word]) -> None:
    """Names the (first) edge gov -> mod after its markers; CoreNLP adds a second edge for
    markers that are not adjacent (and then joins the rest without underscores)."""
    edge = g.get_edge(gov.key, mod.key)
    last = 0
    name = ""
    first = True
    for cm in markers:
        if last == 0 or cm.index == last + 1:
            if not first:
                name += "_"
            name += g.word(cm)
            first = False
        else:
            g.add_edge(gov, mod, _case_marked(edge.rel, name.lower()))
            name = g.word(cm)
            first = True
        last = cm.index
    edge.rel = _case_marked(edge.rel, name.lower())


_PREP_RELATIONS = frozenset(("nmod", "advcl", "acl"))


def _case_marker_information(g: _Graph, passive: bool, mwe: bool, tree: bool) -> None:
    """Passive agents, then three-, two- and one-word case markers, each pass matched on the
    graph the previous one left. A marker list is skipped when the previous match had the
    same list: that can happen only where a node has two governors, so in a tree the matches
    need not be visited in Semgrex's order."""
    if passive:
        agents = []
        for key in g.keyobj:
            kids = g.kids(key)
            if any(e.rel == "auxpass" for e in kids):
                agents += [
                    e
                    for e in kids
                    if e.rel == "nmod"
                    and any(
                        x.rel == "case" and g.word(x.dep).lower() == "by" for x in g.kids(e.dep.key)
                    )
                ]
        for e in agents:
            g.get_edge(e.gov.key, e.dep.key).rel = "nmod:agent"
    old: list[int] = []
    for width in (3, 2, 1) if mwe else (1,):
        order = list(g.keyobj.values()) if tree else g.topological(g.snapshot())
        found = []
        for gov in order:
            for e in g.kids(gov.key):
                if e.rel not in _PREP_RELATIONS:
                    continue
                for x in g.kids(e.dep.key):
                    if x.rel != "case":
                        continue
                    if width == 1:
                        found.append((gov, e.dep, [x.dep]))
                        continue
                    mwes = [y.dep for y in g.kids(x.dep.key) if y.rel == "mwe"]
                    if width == 2:
                        found += [(gov, e.dep, sorted((x.dep, c2), key=_by_key)) for c2 in mwes]
                        continue
                    for c2 in mwes:
                        for c3 in mwes:
                            if c3.key != c2.key:
                                found.append((gov, e.dep, sorted((x.dep, c2, c3), key=_by_key)))
        for gov, mod, markers in found:
            keys = [w.key for w in markers]
            if keys != old:
                _add_case_markers(g, gov, mod, markers)
                old = keys


def _by_key(w: _Word) -> int:
    return w.key


# -- 5. conjunctions ---------------------------------------------------------------------------
def _conj_information(g: _Graph) -> None:
    """``gov >cc cc >conj conj``: conj named after cc (each gov's edges are its own, so the
    order of the governors does not matter)."""
    found = []
    for key, gov in g.keyobj.items():
        kids = g.kids(key)
        ccs = [x.dep for x in kids if x.rel == "cc"]
        if ccs:
            conjs = [x.dep for x in kids if x.rel == "conj"]
            found += [(gov, cc, conj) for cc in ccs for conj in conjs]
    for gov, conjs, cc in _groups(found):
        _name_conjuncts(g, gov, conjs, cc)


# -- 6. sharing through conjuncts ------------------------------------------------------------
def _active(tag: str) -> bool:
    return tag in ("VB", "VBZ", "VBP") or tag.startswith("JJ")


def _treat_cc(g: _Graph) -> None:
    """Each conjunct gets its first conjunct's governors (not ``case``), and a verb or
    adjective conjunct without a subject gets the first conjunct's subject."""
    edges = list(g.edges())
    into: dict[int, list[_Edge]] = {}
    subject: dict[int, _Edge] = {}
    passive_aux: set[int] = set()
    relcl_heads: set[int] = set()
    for e in edges:
        into.setdefault(e.dep.key, []).append(e)
        if e.rel == "auxpass":
            passive_aux.add(e.gov.key)
        if e.rel in _SUBJECTS and e.gov.key not in subject:
            subject[e.gov.key] = e
        if e.rel == "acl:relcl":
            relcl_heads.add(e.gov.key)
    for e in edges:
        if not e.rel.startswith("conj:"):
            continue
        gov, dep = e.gov, e.dep
        for e1 in into.get(gov.key, ()):
            if e1.gov.key == dep.key or e1.rel == "case":
                continue
            if gov.key in relcl_heads and dep.key in relcl_heads and e1.rel in ("dobj", "nsubj"):
                continue
            g.add_edge(e1.gov, dep, e1.rel)
        tag = g.tags[dep.index]
        if gov.key in subject and tag[:2] in ("VB", "JJ") and dep.key not in subject:
            subj = subject[gov.key]
            rel = subj.rel
            if rel == "nsubjpass" and _active(tag):
                rel = "nsubj"
            elif rel == "csubjpass" and _active(tag):
                rel = "csubj"
            elif rel == "nsubj" and dep.key in passive_aux:
                rel = "nsubjpass"
            elif rel == "csubj" and dep.key in passive_aux:
                rel = "csubjpass"
            g.add_edge(dep, subj.dep, rel)


# -- the whole step ----------------------------------------------------------------------------
def cc_process(basic: DepGraph) -> DepGraph:
    """CoreNLP 3.6.0's CollapsedCCProcessed graph of a basic UD tree (copy nodes included).

    ``basic`` holds the parser's tokens (word and tag are read), its basic edges and roots.
    A tree without coordination or multiword prepositions (most captions) only has its
    prepositional relations named; anything else goes through the emulated graph, where
    each step runs only if the relations it looks for are present.
    """
    tokens = basic.tokens[: len(basic.tokens) - len(basic.copy_of)]
    edges = basic.edges
    multiword = _has_multiword(tokens, edges, basic.roots)
    if not multiword and _is_tree_without_coordination(basic):
        return _simple(tokens, edges, basic.roots, any(r == "auxpass" for _, r, _ in edges))
    return _emulated(tokens, edges, basic.roots, multiword)


def _is_tree_without_coordination(basic: DepGraph) -> bool:
    rels = {r for _, r, _ in basic.edges}
    return (
        len(basic.roots) == 1
        and "cc" not in rels
        and "mwe" not in rels
        and len({d for _, _, d in basic.edges}) == len(basic.edges)
        and not any(r.startswith("conj:") for r in rels)
    )


def _is_plain(basic: DepGraph) -> bool:
    """Whether :func:`cc_process` takes the direct path for this graph."""
    tokens = basic.tokens[: len(basic.tokens) - len(basic.copy_of)]
    return _is_tree_without_coordination(basic) and not _has_multiword(
        tokens, basic.edges, basic.roots
    )


def _has_multiword(tokens: list[Token], edges, roots) -> bool:
    """Whether adjacent vertices spell one of CoreNLP's multiword prepositions."""
    nodes = {d for _, _, d in edges}
    nodes.update(g for g, _, _ in edges)
    nodes.update(roots)
    lower = [tokens[i].word.lower() for i in sorted(nodes)]
    if _SECOND_WORDS.isdisjoint(lower):
        return False
    for i in range(1, len(lower)):
        bi = lower[i - 1] + "_" + lower[i]
        if bi in _BIGRAMS or (i > 1 and lower[i - 2] + "_" + bi in _TRIGRAMS):
            return True
    return False


def _simple(tokens: list[Token], edges, roots, passive: bool) -> DepGraph:
    """The steps that act on a tree without coordination or multiword prepositions:
    passive subjects and agents, and one-word case markers (a word's markers in the order
    CoreNLP visits its dependents, each renaming the relation again)."""
    kids: dict[int, list[tuple[int, str]]] = {}
    for gv, r, d in edges:
        kids.setdefault(gv, []).append((d, r))
    auxpass = {gv for gv, r, _ in edges if r == "auxpass"} if passive else set()
    out = DepGraph(list(tokens))
    for gv, r, d in edges:
        if gv in auxpass:
            if r in ("nsubj", "csubj"):
                r += "pass"
            elif r == "nmod" and any(
                rel == "case" and tokens[m].word.lower() == "by" for m, rel in kids.get(d, ())
            ):
                r = "nmod:agent"
        if r in _PREP_RELATIONS and d in kids:
            own = kids[d]
            mask = _capacity(len({m for m, _ in own})) - 1
            for m, rel in sorted(own, key=lambda k: ((k[0] + 1) & mask, k[0])):
                if rel == "case":
                    r = _case_marked(r, tokens[m].word.lower())
        out.edges.append([gv, r, d])
    out.edges.sort(key=lambda e: (e[2], e[0], e[1]))
    out.roots = list(roots)
    return out


def _emulated(tokens: list[Token], edges, roots, multiword: bool) -> DepGraph:
    """All of CoreNLP's steps over the emulated ``SemanticGraph`` (``multiword``: whether
    the words spell a multiword preposition at all)."""
    g = _Graph([""] + [t.word for t in tokens], [""] + [t.tag for t in tokens])
    deps = [(d + 1, gv + 1, r) for gv, r, d in edges]
    deps += [(r + 1, 0, "root") for r in roots]
    deps.sort()
    rels = set()
    parallel = False  # two edges between one pair of nodes
    tree = True
    last = (0, 0)
    for d, gv, r in deps:
        if gv == 0:
            w = _Word(d)
            g.add_vertex(w)
            g.roots.setdefault(w.key, w)
        else:
            g.add_edge(_Word(gv), _Word(d), r)
            rels.add(r)
            if d == last[0]:
                tree = False
                parallel = parallel or gv == last[1]
            last = (d, gv)

    if not g.roots:  # CoreNLP's matchers need a root; the rest runs without them
        if parallel:
            _drop_duplicates(g)
        _treat_cc(g)
        return _to_depgraph(tokens, g)
    if "auxpass" in rels:
        _correct_passive_subjects(g)
    if parallel:
        _drop_duplicates(g)
    multiword = multiword and _multiword_prepositions(g)
    coordination = "cc" in rels and "conj" in rels
    if coordination and "case" in rels:
        _expand_pp_conjunctions(g)
        _expand_prep_conjunctions(g)
        tree = tree and g.is_tree()
    if "case" in rels or multiword:
        _case_marker_information(g, "auxpass" in rels, "mwe" in rels or multiword, tree)
    if coordination:
        _conj_information(g)
        _treat_cc(g)
    elif any(r.startswith("conj:") for r in rels):
        _treat_cc(g)
    return _to_depgraph(tokens, g)


def _to_depgraph(tokens: list[Token], g: _Graph) -> DepGraph:
    out = DepGraph(list(tokens))
    keys = set(g.out)
    keys.update(g.roots)
    node: dict[int, int] = {}
    for key in sorted(keys):
        copy = key & ((1 << _SHIFT) - 1)
        node[key] = (key >> _SHIFT) - 1 if copy == 0 else out.add_copy((key >> _SHIFT) - 1)
    seen = set()
    for om in g.out.values():
        for lst in om.values():
            for e in lst:
                t = (node[e.gov.key], e.rel, node[e.dep.key])
                if t not in seen:
                    seen.add(t)
                    out.edges.append(list(t))
    out.edges.sort(key=lambda e: (e[2], e[0], e[1]))
    out.roots = [node[w.key] for w in g.root_order()]
    return out
