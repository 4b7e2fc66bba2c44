"""SceneGraphParser's enhancements of the CC-processed graph (metric-spec §6.1 step 3):
quantificational modifiers ("a bunch of bananas") and pronoun resolution."""

from __future__ import annotations

import re

from capeval_core.spice.depgraph import DepGraph, word_set

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


def enhance(g: DepGraph) -> None:
    """Quantificational modifiers, then pronoun resolution (compounds/particles only annotate).

    >>> from capeval_core.spice.spacy_sm import to_ud_graph
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
