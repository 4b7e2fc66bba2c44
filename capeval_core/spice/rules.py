"""SPICE 1.0's tuple rules (metric-spec §6.1 step 4): objects, attributes and relations read
off the enhanced dependency graph, in SpiceParser's order.

Each rule is one of SpiceParser's semgrex patterns, matched node by node in the order semgrex
visits them and, at each node, edge by edge in CoreNLP's edge order
(:mod:`capeval_core.spice.semgraph`), so the tuples come out as SpiceParser lists them,
duplicates included.
"""

from __future__ import annotations

from capeval_core.java_lower import java_lower
from capeval_core.spice.depgraph import DepGraph, is_noun, is_plural
from capeval_core.spice.semgraph import SemGraph

#: Bumped whenever the tokens, the conversion or the rules change, so cached tuples are not
#: reused (3: brackets in a lower-case raw caption keep CoreNLP's -LRB- names).
RULES_VERSION = 3


Tuple = tuple[str, ...]

# Java's String.trim(): every character up to U+0020
_TRIM = "".join(map(chr, range(33)))


def _obj_rel(rel: str) -> bool:
    """``/(iobj|dobj|nmod:.*)/``."""
    return rel in ("iobj", "dobj") or rel.startswith("nmod:")


def _dot_obj(rel: str) -> bool:
    """``/.obj/``: dobj, iobj (any one character, then "obj")."""
    return len(rel) == 4 and rel.endswith("obj")


def _nmod_not_agent(rel: str) -> bool:
    """``/(nmod:((?!agent).)*$)/``: an nmod with no "agent" after the colon."""
    return rel.startswith("nmod:") and "agent" not in rel[5:]


def extract_tuples(g: DepGraph, sentence: int = 0) -> list[Tuple]:
    """The SPICE tuples of one enhanced sentence graph, in SpiceParser's order.

    Objects are ``(noun,)``, attributes ``(noun, attribute)`` and relations ``(subject,
    relation, object)`` (SPICE stores relations as subject, object, relation internally).
    ``g.edges`` is read as the order CoreNLP added the edges (see
    :func:`~capeval_core.spice.enhancement.enhance`); ``sentence`` is the sentence's position
    in its caption.

    >>> from capeval_core.spice.ccprocess import cc_process
    >>> from capeval_core.spice.corenlp import basic_graph
    >>> g = cc_process(basic_graph(["two", "dogs"], ["CD", "NNS"], [1, 1], ["nummod", "ROOT"]))
    >>> extract_tuples(g)
    [('dog', 'two'), ('dog',)]
    """
    sg = SemGraph.build(g, sentence=sentence)
    toks = g.tokens
    lem = [java_lower(t.lemma.strip(_TRIM)) for t in toks]  # as the jar's toLowerCase
    tags = [t.tag for t in toks]
    noun = [is_noun(t) for t in tags]
    plural = [is_plural(t) for t in tags]
    nodes = sg.find_order()
    out = {v: sg.out_edges(v) for v in nodes}
    rels = {v: {r for r, _ in out[v]} for v in nodes}
    roots = sg.roots
    tuples: list[Tuple] = []

    def predicate(pred: int) -> str:
        """``getPredicate``: the lemma, with the verb's first particle."""
        part = next((d for r, d in out[pred] if r == "compound:prt"), None)
        if part is None:
            return toks[pred].lemma
        verb = "" if toks[pred].lemma == "be" else toks[pred].lemma
        return f"{verb} {toks[part].word}"

    def with_prep(text: str, rel: str) -> str:
        if rel.startswith("nmod:") and rel not in ("nmod:poss", "nmod:agent"):
            return text + rel.replace("nmod:", " ").replace("_", " ")
        return text

    # {}=pred >nsubj {tag:/NNP?S?/}=subj >/(iobj|dobj|nmod:.*)/=objreln {tag:/NNP?S?/}=obj
    # !> cop {}
    for p in nodes:
        if "nsubj" not in rels[p] or "cop" in rels[p]:
            continue
        for r, s in out[p]:
            if r == "nsubj" and noun[s]:
                for r2, o in out[p]:
                    if _obj_rel(r2) and noun[o]:
                        tuples.append((lem[s], with_prep(predicate(p), r2), lem[o]))
    # {}=subj >acl ({tag:/V.*/}=pred >/(iobj|dobj|nmod:.*)/=objreln {tag:/NNP?S?/}=obj)
    for s in nodes:
        if "acl" not in rels[s]:
            continue
        for r, p in out[s]:
            if r == "acl" and tags[p].startswith("V"):
                for r2, o in out[p]:
                    if _obj_rel(r2) and noun[o]:
                        tuples.append((lem[s], with_prep(predicate(p), r2), lem[o]))
    # {}=pred >nsubj {tag:/NNP?S?/}=subj !>/(iobj|dobj|nmod:.*)/ {tag:/NNP?S?/} !>cop {}
    # then {}=pred >nsubj {tag:/NNP?S?/}=subj >cop {}
    for copular in (False, True):
        for p in nodes:
            if "nsubj" not in rels[p] or ("cop" in rels[p]) != copular:
                continue
            if not copular and any(_obj_rel(r) and noun[o] for r, o in out[p]):
                continue
            cops = sum(r == "cop" for r, _ in out[p]) if copular else 1
            case = sg.child_with_rel(p, "case")
            for r, s in out[p]:
                if r != "nsubj" or not noun[s]:
                    continue
                for _ in range(cops):
                    if case is not None:
                        prep = " ".join(
                            [toks[case].word]
                            + [toks[m].word for m in sg.children_with_rel(case, "mwe")]
                        )
                        tuples.append((lem[s], prep, lem[p]))
                    elif toks[p].lemma != "be":
                        tuples.append((lem[s], lem[p]))
    # {}=obj >/(amod)/ {}=adj
    for o in nodes:
        tuples.extend((lem[o], lem[a]) for r, a in out[o] if r == "amod")
    # {tag:/J.*/}=adj >nsubj {}=obj
    for a in nodes:
        if tags[a].startswith("J"):
            tuples.extend((lem[o], lem[a]) for r, o in out[a] if r == "nsubj")
    # {tag:/NNP?S?/}=gov >/nmod:.*/=reln {}=mod
    for gov in nodes:
        if noun[gov]:
            for r, m in out[gov]:
                if r.startswith("nmod:"):
                    prep = r.replace("nmod:", "").replace("_", " ")
                    if prep not in ("poss", "agent"):
                        tuples.append((lem[gov], prep, lem[m]))
    # {tag:/NNP?S?/}=gov >/nmod:poss/=reln {tag:/NNP?S?/}=mod
    for gov in nodes:
        if noun[gov]:
            for r, m in out[gov]:
                if r == "nmod:poss" and noun[m]:
                    tuples.append((lem[m], "have", lem[gov]))
    # {tag:/V.*/}=pred >/nmod:agent/=reln {tag:/NNP?S?/}=subj >nsubjpass {tag:/NNP?S?/}=obj
    for p in nodes:
        if tags[p].startswith("V") and "nmod:agent" in rels[p]:
            for r, s in out[p]:
                if r == "nmod:agent" and noun[s]:
                    for r2, o in out[p]:
                        if r2 == "nsubjpass" and noun[o]:
                            tuples.append((lem[s], predicate(p), lem[o]))

    # numbers: checkForNumericAttribute on the nodes of three patterns, one match per node
    def number(word: int) -> None:
        nummod = sg.child_with_rel(word, "nummod")
        if nummod is not None:
            if sg.index[nummod] < sg.index[word]:  # "number 5" gives nothing
                tuples.append((lem[word], lem[nummod]))
            return
        qmod = sg.child_with_rel(word, "det:qmod")
        if qmod is not None:
            tuples.append((lem[word], lem[qmod]))

    def plural_pp(o: int) -> bool:
        return plural[o] and "case" in rels[o]

    # {}=pred >nsubj {tag:/NNP?S/}=subj [ >/(.obj)/ ({tag:/NNP?S/}=obj) |
    #   >/(nmod:((?!agent).)*$)/ ({tag:/NNP?S/}=obj >case {}) ]
    for p in nodes:
        if "nsubj" not in rels[p]:
            continue
        match = None
        for r, s in out[p]:
            if r == "nsubj" and plural[s]:
                obj = next((o for r2, o in out[p] if _dot_obj(r2) and plural[o]), None)
                if obj is None:
                    obj = next(
                        (o for r2, o in out[p] if _nmod_not_agent(r2) and plural_pp(o)), None
                    )
                if obj is not None:
                    match = s, obj
                    break
        if match is not None:
            number(match[0])
            number(match[1])

    def plural_object(p: int) -> bool:
        return any(
            (_dot_obj(r) and plural[o]) or (_nmod_not_agent(r) and plural_pp(o)) for r, o in out[p]
        )

    # {tag:/NNP?S/}=subj [ == {$} | <nsubj ({} !>/.obj/ {tag:/NNP?S/}
    #   !>/(nmod:((?!agent).)*$)/ ({tag:/NNP?S/} > case {}) )]
    for s in nodes:
        if plural[s] and (
            s in roots or any(r == "nsubj" and not plural_object(gv) for gv, r in sg.in_edges(s))
        ):
            number(s)
    # {tag:/NNP?S/}=word !== {$} !<nsubj {} !</.obj|nmod.*/ ({} >nsubj {tag:/NNP?S/})
    for w in nodes:
        if not plural[w] or w in roots:
            continue
        inc = sg.in_edges(w)
        if any(r == "nsubj" for _, r in inc):
            continue
        if any(
            (_dot_obj(r) or r.startswith("nmod"))
            and any(r2 == "nsubj" and plural[s] for r2, s in out[gv])
            for gv, r in inc
        ):
            continue
        number(w)
    # {tag:/NNP?S?/}=tail >/(compound)/ {tag:/NNP?S?/}=head
    compound_parts: set[int] = set()
    for tail in nodes:
        if noun[tail]:
            for r, head in out[tail]:
                if r == "compound" and noun[head]:
                    compound_parts.update((tail, head))
                    tuples.append((lem[tail], lem[head]))
    # SpiceParser's noun-conjunction rule compares strings with nodes and never fires.
    # {tag:/NNP?S?/}=word, unless part of a compound
    tuples.extend((lem[w],) for w in nodes if noun[w] and w not in compound_parts)
    return tuples
