"""SPICE 1.0's tuple rules (metric-spec §6.1 step 4): objects, attributes and relations read
off the enhanced dependency graph, in SpiceParser's order."""

from __future__ import annotations

from capeval_core.spice.depgraph import DepGraph, is_noun, is_plural

#: Bumped whenever the conversion or the rules change, so cached tuples are not reused.
RULES_VERSION = 1


Tuple = tuple[str, ...]


def _is_obj_rel(rel: str) -> bool:
    return rel in ("iobj", "dobj") or rel.startswith("nmod:")


def extract_tuples(g: DepGraph) -> list[Tuple]:
    """The SPICE tuples of one enhanced sentence graph, in rule order.

    Objects are ``(noun,)``, attributes ``(noun, attribute)`` and relations ``(subject,
    relation, object)`` (SPICE stores relations as subject, object, relation internally).

    >>> from capeval_core.spice.spacy_sm import to_ud_graph
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
            if r != "nsubj" or not is_noun(tags[s]):
                continue
            for r2, o in out[p]:
                if _is_obj_rel(r2) and is_noun(tags[o]):
                    tuples.append((lem[s], predicate(p, r2), lem[o]))
    # Rule 2: acl ("man riding horse").
    for s in range(n):
        for r, p in out[s]:
            if r != "acl" or not tags[p].startswith("V"):
                continue
            for r2, o in out[p]:
                if _is_obj_rel(r2) and is_noun(tags[o]):
                    tuples.append((lem[s], predicate(p, r2), lem[o]))
    # Rule 3: subject-predicate pairs without a noun object, then copular clauses.
    for copular in (False, True):
        for p in range(n):
            if has(p, "cop") != copular:
                continue
            if not copular and any(_is_obj_rel(r) and is_noun(tags[o]) for r, o in out[p]):
                continue
            for r, s in out[p]:
                if r != "nsubj" or not is_noun(tags[s]):
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
        if not is_noun(tags[gov]):
            continue
        for r, m in out[gov]:
            if r.startswith("nmod:"):
                prep = r.replace("nmod:", "").replace("_", " ")
                if prep not in ("poss", "agent"):
                    tuples.append((lem[gov], prep, lem[m]))
    # Rule 7: possessives.
    for gov in range(n):
        if is_noun(tags[gov]):
            for r, m in out[gov]:
                if r == "nmod:poss" and is_noun(tags[m]):
                    tuples.append((lem[m], "have", lem[gov]))
    # Rule 8: passive agents.
    for p in range(n):
        if not tags[p].startswith("V"):
            continue
        for r, s in out[p]:
            if r == "nmod:agent" and is_noun(tags[s]):
                for r2, o in out[p]:
                    if r2 == "nsubjpass" and is_noun(tags[o]):
                        tuples.append((lem[s], predicate(p), lem[o]))
    # Rule 9: numbers of plural nouns, in SPICE's three positions.
    _numbers(g, out, lem, tags, tuples)
    # Rule 10: noun compounds.
    compound_parts: set[int] = set()
    for tail in range(n):
        if is_noun(tags[tail]):
            for r, head in out[tail]:
                if r == "compound" and is_noun(tags[head]):
                    compound_parts.update((tail, head))
                    tuples.append((lem[tail], lem[head]))
    # Rule 11 (noun conjunction propagation) never fires in SPICE 1.0: not implemented.
    # Rule 12: every noun not part of a compound.
    tuples.extend((lem[i],) for i in range(n) if is_noun(tags[i]) and i not in compound_parts)
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
            if is_plural(tags[o])
            and (dot_obj(r) or (nmod_not_agent(r) and any(r2 == "case" for r2, _ in out[o])))
        ]

    # (a) plural subject with a plural object (one match per predicate)
    for p in range(n):
        subj = next((s for r, s in out[p] if r == "nsubj" and is_plural(tags[s])), None)
        objs = plural_objects(p) if subj is not None else []
        if objs:
            number(subj)
            number(objs[0])
    incoming = [g.incoming(i) for i in range(n)]
    # (b) plural subject without one, or a plural root
    for s in range(n):
        if not is_plural(tags[s]):
            continue
        if s in g.roots or any(r == "nsubj" and not plural_objects(gv) for gv, r in incoming[s]):
            number(s)
    # (c) any other plural noun
    for w in range(n):
        if not is_plural(tags[w]) or w in g.roots:
            continue
        if any(r == "nsubj" for _, r in incoming[w]):
            continue
        if any(
            (dot_obj(r) or r.startswith("nmod"))
            and any(r2 == "nsubj" and is_plural(tags[s]) for r2, s in out[gv])
            for gv, r in incoming[w]
        ):
            continue
        number(w)
