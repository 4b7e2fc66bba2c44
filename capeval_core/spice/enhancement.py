"""SceneGraphParser's enhancements of the CC-processed graph (metric-spec §6.1 step 3), as SPICE
1.0 runs them: quantificational modifiers ("a bunch of bananas"), then pronoun resolution.

SceneGraphParser's compound and particle collapsing only annotate nodes that SPICE never reads,
so they change nothing here. Matches are found, and the graph changed, in CoreNLP's own orders
(:mod:`capeval_core.spice.semgraph`).
"""

from __future__ import annotations

import re

from capeval_core.spice.depgraph import DepGraph, word_set
from capeval_core.spice.semgraph import SemGraph

# §6.1 step 3: the quantity words of SceneGraphParser's three quantificational patterns (Java's
# (?i:...) folds ASCII letters only)
_QUANT_A = re.compile(
    r"lot|assortment|number|couple|bunch|handful|litany|sheaf|slew|dozen|series|variety"
    r"|multitude|wad|clutch|wave|mountain|array|spate|string|ton|range|plethora|heap|sort|form"
    r"|kind|type|version|bit|pair|triple|total",
    re.IGNORECASE | re.ASCII,
)
_QUANT_B = re.compile(
    r"lots|many|several|plenty|tons|dozens|multitudes|mountains|loads|pairs|tens|hundreds"
    r"|thousands|millions|billions|trillions|[0-9]+s",
    re.IGNORECASE | re.ASCII,
)
_QUANT_C = re.compile(
    r"some|all|both|neither|everyone|nobody|one|two|three|four|five|six|seven|eight|nine"
    r"|ten|hundred|thousand|million|billion|trillion|[0-9]+",
    re.IGNORECASE | re.ASCII,
)
_A_AN = re.compile(r"an?", re.IGNORECASE | re.ASCII)
_OF = re.compile(r"of", re.IGNORECASE | re.ASCII)

#: CoreNLP's singular pronouns (its coreference dictionaries): a pronoun among these takes a
#: singular antecedent (§6.1 step 3); matched case-sensitively, as CoreNLP does.
SINGULAR_PRONOUNS = word_set(
    "i me myself mine my yourself he him himself his she her herself hers it itself its one "
    "oneself one's"
)

QMOD = "det:qmod"


def enhance(g: DepGraph, sentence: int = 0) -> None:
    """Quantificational modifiers, then pronoun resolution, in place.

    ``g`` is one sentence's CC-processed graph (``sentence``: its position in the caption,
    which CoreNLP's node hashes include). Afterwards ``g.edges`` lists the edges in the order
    CoreNLP added them, which the tuple rules read as the graph's insertion order.

    >>> from capeval_core.spice.ccprocess import cc_process
    >>> from capeval_core.spice.corenlp import basic_graph
    >>> g = cc_process(basic_graph(["a", "bunch", "of", "bananas"], ["DT", "NN", "IN", "NNS"],
    ...                            [1, 1, 3, 1], ["det", "ROOT", "case", "nmod"]))
    >>> enhance(g)
    >>> [e for e in g.as_triples() if e[1] in ("det:qmod", "mwe")]
    [('bananas', 'det:qmod', 'a'), ('a', 'mwe', 'bunch'), ('a', 'mwe', 'of')]
    """
    sg = SemGraph.build(g, sentence=sentence, typed_order=True)
    quantificational_modifiers(sg)
    resolve_pronouns(sg)
    sg.write_back()


# --- quantificational modifiers --------------------------------------------------------------


def _word(sg: SemGraph, v: int) -> str:
    return sg.graph.tokens[v].word


def _tag(sg: SemGraph, v: int) -> str:
    return sg.graph.tokens[v].tag


def _of_child(sg: SemGraph, gov: int):
    """``gov >case {word:/(?i:of)/}``: the matching case dependents, in edge order."""
    return (c for r, c in sg.out_edges(gov) if r == "case" and _OF.fullmatch(_word(sg, c)))


def _match_a(c: SemGraph, w2: int) -> tuple[int, int, int, int] | None:
    """``{word:quantity}=w2 >det {word:/(?i:an?)/}=w1 >/nmod.*/ ({tag:/(NN.*|PRP.*)/}=gov
    >case {word:/(?i:of)/}=w3) . {}=w3``: the first match at ``w2``, as (w1, w2, w3, gov)."""
    if not _QUANT_A.fullmatch(_word(c, w2)):
        return None
    out = c.out_edges(w2)
    for r, w1 in out:
        if r != "det" or not _A_AN.fullmatch(_word(c, w1)):
            continue
        for r2, gov in out:
            if not r2.startswith("nmod") or not _tag(c, gov).startswith(("NN", "PRP")):
                continue
            for w3 in _of_child(c, gov):
                if c.index[w3] == c.index[w2] + 1:
                    return w1, w2, w3, gov
    return None


def _match_b(c: SemGraph, w1: int) -> tuple[int, int, int] | None:
    """``{word:quantity}=w1 >/nmod.*/ ({tag:/(NN.*|PRP.*)/}=gov >case {word:/(?i:of)/}=w2)
    . {}=w2``: the first match, as (w1, w2, gov)."""
    if not _QUANT_B.fullmatch(_word(c, w1)):
        return None
    for r, gov in c.out_edges(w1):
        if r.startswith("nmod") and _tag(c, gov).startswith(("NN", "PRP")):
            for w2 in _of_child(c, gov):
                if c.index[w2] == c.index[w1] + 1:
                    return w1, w2, gov
    return None


def _match_c(c: SemGraph, w1: int) -> tuple[int, int, int] | None:
    """``{word:quantity}=w1 [>/nmod.*/ ({tag:/(NN.*)/}=gov >case ({word:/(?i:of)/}=w2
    $+ {}=det) >det {}=det) | >/nmod.*/ ({tag:/(PRP.*)/}=gov >case {word:/(?i:of)/}=w2)]
    . {}=w2``: the first match (the alternatives in order), as (w1, w2, gov)."""
    if not _QUANT_C.fullmatch(_word(c, w1)):
        return None
    out = c.out_edges(w1)
    for r, gov in out:  # a noun whose "of" is directly followed by one of its determiners
        if r.startswith("nmod") and _tag(c, gov).startswith("NN"):
            dets = {c.index[d] for r2, d in c.out_edges(gov) if r2 == "det"}
            for w2 in _of_child(c, gov):
                if c.index[w2] + 1 in dets and c.index[w2] == c.index[w1] + 1:
                    return w1, w2, gov
    for r, gov in out:  # "all of them"
        if r.startswith("nmod") and _tag(c, gov).startswith("PRP"):
            for w2 in _of_child(c, gov):
                if c.index[w2] == c.index[w1] + 1:
                    return w1, w2, gov
    return None


def quantificational_modifiers(sg: SemGraph) -> None:
    """§6.1 step 3 (``processQuanftificationModifiers``): for each pattern in turn, matched on
    a copy of the graph (one match per quantity word), the noun after "of" takes the quantity
    word's place below its parent (or as root), and the quantity words hang below the noun as
    one multiword ``det:qmod``."""
    for match in (_match_a, _match_b, _match_c):
        if not any(match(sg, v) for v in sg.vertices):
            continue  # the copy has the same edges: no match there either
        copy = sg.soft_copy()
        for head in copy.find_order():
            m = match(copy, head)
            if m is None:
                continue
            *words, gov = m
            first = match is _match_a
            quantity = words[first]  # (w1, w2, w3): "a bunch of"; (w1, w2): "lots of"
            if not _promote(sg, quantity, gov):
                return  # CoreNLP gives up on all remaining matches and patterns
            # "a whole bunch of": amod dependents before the quantity word join it; with
            # "lots of" and "two of", every dependent before it does
            extra = sg.children_with_rel(quantity, "amod") if first else sg.children(quantity)
            words += [d for d in extra if sg.index[d] < sg.index[quantity]]
            words.sort(key=sg.order_key.__getitem__)
            _multiword(sg, gov, words)


def _promote(sg: SemGraph, quantity: int, gov: int) -> bool:
    """The noun takes the quantity word's incoming edge (or root); False where CoreNLP stops."""
    if quantity in sg.roots:
        del sg.roots[quantity]
        sg.add_root(gov)
    else:
        parent = sg.parent(quantity)
        if parent is None:
            return False
        rel = sg.out[parent][quantity][0][0]
        sg.remove_edge(parent, rel, quantity)
        sg.add_edge(parent, rel, gov)
    edges = sg.out.get(quantity, {}).get(gov)
    if edges:
        sg.remove_edge(quantity, edges[0][0], gov)
    return True


def _multiword(sg: SemGraph, gov: int, words: list[int]) -> None:
    """``createMultiWordExpression``: each word loses its incoming edges; the first hangs
    below ``gov`` as ``det:qmod``, the others below the first as ``mwe``."""
    if not sg.roots or not words:
        return
    head = None
    for w in words:
        for parent, rel in sg.in_edges(w):
            sg.remove_edge(parent, rel, w)
        if head is None:
            sg.add_edge(gov, QMOD, w)
            head = w
        else:
            sg.add_edge(head, "mwe", w)


# --- pronouns --------------------------------------------------------------------------------


def resolve_pronouns(sg: SemGraph) -> None:
    """§6.1 step 3 (SimplePronounResolution, then ``resolvePronouns``): every pronoun after
    the first word that has a parent is resolved to the first noun (singular for a singular
    pronoun) of a breadth-first search from the first root, if that noun comes earlier; the
    pronoun's edges then move to it (its root status instead, for a root pronoun)."""
    root = sg.first_root()
    if root is None:
        return
    pairs: dict[int, int] = {}
    for tok in sorted(sg.vertices, key=sg.order_key.__getitem__):
        if sg.index[tok] <= 1 or not _tag(sg, tok).startswith("PRP"):
            continue
        node = sg.node_by_index(sg.index[tok])
        if node is None or sg.parent(node) is None:
            continue
        ante = _first_noun(sg, root, _word(sg, tok) in SINGULAR_PRONOUNS)
        if ante is not None and sg.index[ante] < sg.index[node]:
            pairs[sg.index[tok]] = sg.index[ante]
    for pron_index in _integer_map_order(list(pairs)):
        mention = sg.node_by_index(pairs[pron_index])
        pronoun = sg.node_by_index(pron_index)
        if mention is None or pronoun is None:
            continue
        if pronoun in sg.roots:
            del sg.roots[pronoun]
            sg.add_to_roots(mention)
        else:
            for gov, rel, _ in sg.sorted_edges(pronoun, outgoing=False):
                sg.remove_edge(gov, rel, pronoun)
                sg.add_edge(gov, rel, mention)
        for _, rel, dep in sg.sorted_edges(pronoun, outgoing=True):
            sg.remove_edge(pronoun, rel, dep)
            sg.add_edge(mention, rel, dep)


def _first_noun(sg: SemGraph, start: int, singular: bool) -> int | None:
    """Breadth-first, children by position: the first NN/NNP (or NNS/NNPS too)."""
    nouns = ("NN", "NNP") if singular else ("NN", "NNP", "NNS", "NNPS")
    seen: set[int] = set()
    queue = [start]
    k = 0
    while k < len(queue):
        node = queue[k]
        k += 1
        if node in seen:
            continue
        seen.add(node)
        if _tag(sg, node) in nouns:
            return node
        queue.extend(sg.child_list(node))
    return None


def _integer_map_order(keys: list[int]) -> list[int]:
    """Iteration order of a Java ``HashMap<Integer, _>(1)`` after putting ``keys`` in order."""
    capacity = 1
    for size in range(1, len(keys) + 1):  # a table of 1 doubles at once, then at 3/4 full
        while size > int(capacity * 0.75):
            capacity *= 2
    return sorted(keys, key=lambda k: (k ^ (k >> 16)) & (capacity - 1))
