"""The typed-dependency rules of CoreNLP 3.6.0's English UD converter, as tree tests.

Each relation (``nsubj``, ``dobj``, ``amod``, ...) is a set of structural rules read at a
phrase: "a noun phrase before this clause's verb phrase is its subject", "an adjective inside
a noun phrase modifies its head". CoreNLP states them as tree-regular expressions; here each
is a Python function that, given the phrase, yields the nodes the rule relates to it. The
words of a dependency are the head words of the two nodes (see ``ud``).

The rules follow CoreNLP's behaviour, including its odd corners (a relative pronoun can be
``nsubj`` of a clause it does not head; any ``ADJP`` under a verb phrase is ``xcomp``), since
the aim is to agree with the SPICE jar, not with a linguist. Where CoreNLP uses a rule whose
categories the English PCFG never produces (Charniak's AUX tags, web-text NFP and GW), the
rule is left out.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Iterator
from itertools import pairwise

from capeval_core.spice.pcfg.trees import basic_category as basic
from capeval_core.spice.pcfg.ud_heads import BE_GET, COPULAS, head_child
from capeval_core.spice.pcfg.ud_nodes import Node, word_set

Rule = Callable[[Node], Iterable[Node]]

# --- word lists (English facts, with the web-text spellings CoreNLP also accepts) ----------------

BE_AUX = word_set("am is are r be being 's 're 'm was were been s ai m art ar wase")
HAVE = word_set("have had has having 've ve v 'd d hvae hav as")
TIME = word_set(
    "monday mondays tuesday tuesdays wednesday wednesdays thursday thursdays friday fridays "
    "saturday saturdays sunday sundays year years month months week weeks day days morning "
    "mornings evening evenings night nights january jan. february feb. march mar. april apr. "
    "may june july august aug. september sept. october oct. november nov. december dec. today "
    "yesterday tomorrow spring summer fall autumn winter"
)
TIME_LOT = TIME | {"lot"}
SELF = word_set("myself yourself himself herself itself ourselves yourselves themselves")
SEEM = word_set(
    "seem seems seemed seeming resemble resembles resembled resembling become becomes became "
    "becoming remain remains remained remaining"
)
XCOMP_VERBS = word_set(
    "advise advises advised advising allow allows allowed allowing ask asks asked asking beg "
    "begs begged begging convice convinces convinced convincing demand demands demanded "
    "demanding desire desires desired desiring expect expects expected expecting encourage "
    "encourages encouraged encouraging force forces forced forcing implore implores implored "
    "imploring lobby lobbies lobbied lobbying order orders ordered ordering persuade persuades "
    "persuaded persuading pressure pressures pressured pressuring prompt prompts prompted "
    "prompting require requires required requiring tell tells told telling urge urges urged "
    "urging"
)
CCOMP_VERBS = word_set(
    "ask asks asked asking know knows knew knowing specify specifies specified specifying tell "
    "tells told telling understand understands understood understanding wonder wonders "
    "wondered wondering"
)
TELL = word_set("tell tells told telling")
NEGATIONS = frozenset({"not", "nt", "n't", "never"})
ETC = frozenset({"etc", "ect"})
EITHER = frozenset({"either", "neither", "both"})
PUNCT_LABELS = frozenset({".", ":", ",", "''", "``", "*", "-LRB-", "-RRB-", "HYPH"})
# labels a conjunct may not start with or be (quotes, brackets, separators)
_NOT_CONJUNCT = frozenset({"SBAR", "PRN", "``", "''", "-LRB-", "-RRB-", ",", ":", "."})
_NOT_CONJUNCT_PHRASE = frozenset({"PRN", "``", "''", "-LRB-", "-RRB-", ",", ":", "."})
_SEPARATORS = frozenset({"PRN", "``", "''", "-LRB-", "-RRB-", ",", ":", "."})


# --- primitive tests -----------------------------------------------------------------------------


def _lab(n: Node | None, *labels: str) -> bool:
    return n is not None and n.label in labels


def _cat(n: Node | None, *labels: str) -> bool:
    return n is not None and basic(n.label) in labels


def _starts(n: Node | None, *prefixes: str) -> bool:
    return n is not None and n.label.startswith(prefixes)


def _has_form(n: Node, forms: frozenset[str]) -> bool:
    """A child (the word, for a tag) is one of ``forms``, ignoring case."""
    return any(k.label.lower() in forms for k in n.kids)


def _has_exact(n: Node, *forms: str) -> bool:
    return any(k.label in forms for k in n.kids)


def _tagged_word(n: Node, prefixes: tuple[str, ...], forms: frozenset[str]) -> bool:
    """``n`` is a tag starting with one of ``prefixes`` over a word in ``forms``."""
    return n.label.startswith(prefixes) and _has_form(n, forms)


def _verb_in(n: Node, forms: frozenset[str]) -> bool:
    return _tagged_word(n, ("VB", "AUX"), forms)


def _copula(n: Node) -> bool:
    return _verb_in(n, COPULAS)


def _kid(n: Node, test: Callable[[Node], bool]) -> bool:
    return any(test(k) for k in n.kids)


def _kids(n: Node, test: Callable[[Node], bool]) -> list[Node]:
    return [k for k in n.kids if test(k)]


def _only(n: Node) -> Node | None:
    return n.kids[0] if len(n.kids) == 1 else None


def _only_child_is(n: Node, *labels: str) -> bool:
    only = _only(n)
    return only is not None and only.label in labels


def _nth(n: Node, i: int) -> Node | None:
    if i > 0:
        return n.kids[i - 1] if len(n.kids) >= i else None
    return n.kids[i] if len(n.kids) >= -i else None


def _left(n: Node) -> list[Node]:
    """Sisters before ``n``, nearest first."""
    if n.parent is None:
        return []
    return n.parent.kids[: n.position()][::-1]


def _right(n: Node) -> list[Node]:
    """Sisters after ``n``, nearest first."""
    if n.parent is None:
        return []
    return n.parent.kids[n.position() + 1 :]


def _prev(n: Node) -> Node | None:
    left = _left(n)
    return left[0] if left else None


def _next(n: Node) -> Node | None:
    right = _right(n)
    return right[0] if right else None


def _sisters(n: Node) -> list[Node]:
    return _left(n) + _right(n)


def _between(a: Node, b: Node) -> list[Node]:
    """Sisters strictly between ``a`` and ``b`` (same parent, either order)."""
    i, j = sorted((a.position(), b.position()))
    assert a.parent is not None
    return a.parent.kids[i + 1 : j]


def _chain(n: Node, via: Callable[[Node], bool]) -> Iterator[Node]:
    """Nodes below ``n`` reached through inner nodes that all pass ``via``."""
    for kid in n.kids:
        yield kid
        if via(kid):
            yield from _chain(kid, via)


def _below(n: Node) -> Iterator[Node]:
    for kid in n.kids:
        yield from kid.walk()


def _rightmost(n: Node) -> Iterator[Node]:
    while n.kids:
        n = n.kids[-1]
        yield n


def _leftmost(n: Node) -> Iterator[Node]:
    while n.kids:
        n = n.kids[0]
        yield n


def hk(n: Node) -> Node | None:
    """The head child as CoreNLP's tree patterns see it (chosen without the parent)."""
    if n.leaf:
        return None
    if n.bare_head is None:
        n.bare_head = head_child(n, None)
    return n.bare_head


def _head_path(n: Node) -> list[Node]:
    """The nodes down the head chain below ``n``, ending with the head word."""
    path = []
    while n.kids:
        if n.pre:
            path.append(n.kids[0])
            break
        h = hk(n)
        assert h is not None
        path.append(h)
        n = h
    return path


def _time_headed(n: Node) -> bool:
    """The head child is a noun tag over a time word ("Sunday", "morning")."""
    h = hk(n)
    return h is not None and h.label.startswith("NN") and _has_form(h, TIME)


def _etc(n: Node) -> bool:
    return n.label == "FW" and _has_form(n, ETC)


def _fw_etc(n: Node) -> bool:
    return n.label in ("ADVP", "NP") and bool(n.kids) and _etc(n.kids[0])


def _ends_etc(n: Node) -> bool:
    last = _nth(n, -1)
    return last is not None and (_etc(last) or _fw_etc(last))


def _objectless_pps(t: Node) -> Iterator[Node]:
    """The PP children of ``t`` (PP-TMP too) without a noun phrase of their own, leaving out
    one that follows a coordinator which itself follows something: the candidates both the
    clausal and the nominal modifier rules start from."""
    for k in t.kids:
        if k.label not in _PP_OR_TMP or _kid(k, lambda c: _cat(c, "NP", "WHNP", "NML")):
            continue
        prev = _prev(k)
        if prev is not None and _cat(prev, "CC", "CONJP") and _prev(prev) is not None:
            continue
        yield k


# --- category sets of the rules' phrase tests ----------------------------------------------------


def _forms(*bases: str, wh: bool = False, suffixes: tuple[str, ...] = ()) -> frozenset[str]:
    out = set()
    for b in bases:
        for pre in ("", "WH") if wh else ("",):
            for suf in ("", *suffixes):
                out.add(pre + b + suf)
    return frozenset(out)


_TA = ("-TMP", "-ADV")
NPISH = _forms("NP", wh=True, suffixes=_TA)  # NP, WHNP, NP-TMP, ...
_NMOD_HOSTS = _forms("NP", "ADJP", "ADVP", "NX", "NML", wh=True, suffixes=_TA) | {
    "VP", "NAC", "SQ", "FRAG", "PRN", "X", "RRC",
}  # fmt: skip
_ANY_PP = _forms("PP", wh=True, suffixes=_TA)
_PP_OR_TMP = frozenset({"WHPP", "WHPP-TMP", "PP", "PP-TMP"})
_NOMINAL = frozenset({"NP", "WHNP", "NML"})


def _pp_like(n: Node) -> bool:
    """Label holds "PP" and, optionally, -TMP (CoreNLP searches, so WHPP and PP-ADV also pass)."""
    return "PP" in n.label


# --- 1. auxiliaries, copulas ---------------------------------------------------------------------


def _aux(t: Node) -> Iterator[Node]:
    if t.label == "VP" and _kid(t, lambda k: k.label == "VP"):
        yield from _kids(t, lambda k: re.fullmatch(r"MD|VB.*|AUXG?|POS", k.label) is not None)
    if t.label in ("SQ", "SINV"):
        for k in t.kids:
            if k.label.startswith(("VB", "MD", "AUX")) and any(
                r.label.startswith(("VP", "ADJP")) for r in _right(k)
            ):
                yield k
    if t.label == "SINV":
        for k in t.kids:
            if (
                k.label == "VP"
                and _kid(k, lambda c: _tagged_word(c, ("VB", "AUX", "POS"), BE_AUX))
                and any(_lab(s, "VP") and _kid(s, lambda c: c.label == "VBG") for s in _left(k))
            ):
                yield k


def _participle_phrase(n: Node) -> bool:
    if n.label not in ("VP", "ADJP"):
        return False
    if _kid(n, lambda c: c.label in ("VBN", "VBD")):
        return True
    return _kid(
        n, lambda c: c.label in ("VP", "ADJP") and _kid(c, lambda d: d.label in ("VBN", "VBD"))
    ) and _kid(n, lambda c: c.label == "CC")


def _has_vbn_vbd(n: Node | None) -> bool:
    return n is not None and _kid(n, lambda c: c.label in ("VBD", "VBN"))


def _auxpass(t: Node) -> Iterator[Node]:
    if t.label == "VP" and _kid(t, _participle_phrase):
        yield from _kids(t, lambda k: _tagged_word(k, ("VB", "AUX", "POS"), BE_GET))
    if t.label in ("SQ", "SINV"):
        for k in t.kids:
            if _tagged_word(k, ("VB", "AUX", "POS"), BE_AUX) and any(
                r.label == "VP" and _has_vbn_vbd(r) for r in _right(k)
            ):
                yield k
    if t.label == "SINV":
        for k in t.kids:
            if k.label != "VP" or not any(s.label == "VP" and _has_vbn_vbd(s) for s in _left(k)):
                continue
            if _kid(k, lambda c: _tagged_word(c, ("VB", "AUX", "POS"), BE_AUX)) or _kid(
                k,
                lambda c: (
                    c.label == "VP"
                    and _kid(c, lambda d: _tagged_word(d, ("VB", "AUX", "POS"), BE_AUX))
                ),
            ):
                yield k


def _adjp_like_complement(n: Node) -> bool:
    label = n.label
    return (label.startswith(("ADJP", "PP", "UCP")) or label in ("NP", "WHNP")) and not _kid(
        n,
        lambda c: c.label in ("VBN", "VBD") and not any(r.label.startswith("N") for r in _right(c)),
    )


def _bare_adjective_clause(n: Node) -> bool:
    only = _only(n) if n.label == "S" else None
    return only is not None and only.label == "ADJP" and _kid(only, lambda c: c.label == "JJ")


def _cop(t: Node) -> Iterator[Node]:
    if t.label == "VP":
        for k in t.kids:
            if k.label.startswith(("VB", "AUX")) and _has_form(k, COPULAS):
                right = _right(k)
                if any(_adjp_like_complement(r) for r in right) or any(
                    _bare_adjective_clause(r) for r in right
                ):
                    yield k
    if t.label in ("SQ", "SINV"):
        for k in t.kids:
            if not (k.label.startswith(("VB", "AUX")) and _has_form(k, COPULAS)):
                continue
            right = _right(k)
            if (
                any(r.label == "ADJP" and not _has_vbn_vbd(r) for r in right)
                or any(r.label == "NP" and any(s.label == "NP" for s in _right(r)) for r in right)
                or any(_bare_adjective_clause(r) for r in right)
            ):
                yield k
    if t.label == "SBARQ" and _kid(t, lambda k: k.label == "WHNP" and _has_exact(k, "WP")):
        yield from _kids(t, lambda k: k.label.startswith(("VB", "AUX")) and _has_form(k, COPULAS))
    if t.label == "SINV":
        h = hk(t)
        if h is not None and h.label == "NP":
            for np2 in _right(h):
                if np2.label != "NP":
                    continue
                for vp in _right(np2):
                    if vp.label == "VP" and _kid(vp, _copula):
                        yield vp


# --- 2. coordination -----------------------------------------------------------------------------

_CLAUSES = frozenset({"VP", "S", "SBAR", "SBARQ", "SINV", "SQ", "RRC"})
_PHRASES_5 = (
    _forms("ADJP", "JJP", "PP", "QP", "ADVP", "NX", "NML")
    | _forms("NP", wh=True, suffixes=_TA)
    | _forms("UCP", suffixes=_TA)
)
_PHRASES_6 = (
    _forms("ADJP", "PP", "ADVP", "NX", "NML")
    | _forms("NP", wh=True, suffixes=_TA)
    | (_forms("UCP", suffixes=_TA))
)
_PHRASES_9 = (
    frozenset({"VP", "S", "SBAR", "SBARQ", "SINV", "ADJP", "PP", "QP", "ADVP", "NX", "NML"})
    | _forms("NP", wh=True, suffixes=_TA)
    | _forms("UCP", suffixes=_TA)
)


def _cc_or_conjp(n: Node) -> bool:
    return n.label in ("CC", "CONJP")


def _conjunct_start(n: Node) -> bool:
    """A category that can follow a separator as a conjunct (clauses, phrases, words)."""
    label = n.label
    return label.startswith(("S", "A", "N", "V", "PP", "PRP", "J", "W", "R")) or label.endswith(
        "SINV"
    )


def _clause_left_ok(n: Node, extra: tuple[str, ...]) -> bool:
    return not n.label.startswith(("``", "-LRB-", "PRN", "PP", "ADVP", "RB", *extra))


def _conj(t: Node) -> Iterator[Node]:
    label = t.label
    kids = t.kids
    if label in _CLAUSES:
        for i, c in enumerate(kids):
            if not _cc_or_conjp(c):
                continue
            left = kids[:i]
            if i + 1 < len(kids):
                nxt = kids[i + 1]
                if (
                    any(_clause_left_ok(s, ("MWE",)) for s in left)
                    and nxt.label not in _NOT_CONJUNCT
                ):
                    yield nxt
                if (
                    any(_clause_left_ok(s, ()) for s in left)
                    and nxt.label == "ADVP"
                    and i + 2 < len(kids)
                    and kids[i + 2].label not in _NOT_CONJUNCT_PHRASE
                ):
                    yield kids[i + 2]
    if label == "SBAR":
        for i, c in enumerate(kids[:-1]):
            if (
                _cc_or_conjp(c)
                and _cat(kids[i + 1], "SBAR")
                and any(_cat(s, "SBAR") for s in kids[:i])
            ):
                yield kids[i + 1]
    if label in ("VP", "S", "SBAR", "SBARQ", "SINV", "SQ"):
        yield from _clause_comma_conjuncts(t)
    if label in _PHRASES_5:
        for i, c in enumerate(kids):
            if (
                _cc_or_conjp(c)
                and i + 1 < len(kids)
                and any(s.label not in ("``", "-LRB-", "PRN") for s in kids[:i])
                and kids[i + 1].label not in _NOT_CONJUNCT_PHRASE
            ):
                yield kids[i + 1]
        yield from _kids(t, _etc)
        yield from _kids(t, _fw_etc)
    if label in _PHRASES_6:
        for i, c in enumerate(kids):
            if (
                _cc_or_conjp(c)
                and i + 2 < len(kids)
                and any(s.label not in ("``", "-LRB-", "PRN") for s in kids[:i])
                and kids[i + 1].label == "ADVP"
                and kids[i + 2].label not in _NOT_CONJUNCT_PHRASE
            ):
                yield kids[i + 2]
        coordinated = (
            any(
                _cc_or_conjp(c) and any(s.label not in ("``", "-LRB-", "PRN") for s in kids[:i])
                for i, c in enumerate(kids)
            )
            or _kid(t, _etc)
            or _kid(t, _fw_etc)
        )
        if coordinated:
            for i, p in enumerate(kids[:-1]):
                if p.label in _SEPARATORS:
                    nxt = kids[i + 1]
                    if _conjunct_start(nxt) or _etc(nxt):
                        yield nxt
    if label in ("NX", "NML"):
        coordinated = any(_cc_or_conjp(c) and i > 0 for i, c in enumerate(kids)) or _kid(t, _etc)
        if coordinated:
            for i, p in enumerate(kids):
                if (
                    p.label == ","
                    and i > 0
                    and kids[i - 1].label.startswith(
                        ("A", "N", "V", "PP", "PRP", "J", "W", "R", "S")
                    )
                ):
                    yield kids[i - 1]
    if label in _PHRASES_9:
        for i, c in enumerate(kids):
            if c.label != "CC":
                continue
            for j in range(i + 1, len(kids) - 1):
                if _cc_or_conjp(kids[j]) and kids[j + 1].label not in _NOT_CONJUNCT_PHRASE:
                    yield kids[j + 1]
        if kids and (_etc(kids[-1]) or _fw_etc(kids[-1])):
            yield kids[-1]
    if label == "PCONJP":
        for i, c in enumerate(kids[:-1]):
            if c.label == "CC" and kids[i + 1].label in ("IN", "TO"):
                yield kids[i + 1]
    # "A / B" with a slash tagged as a comma between two same-category nodes
    for i in range(len(kids) - 2):
        a, slash, b = kids[i], kids[i + 1], kids[i + 2]
        if "," in slash.label and any("/" in k.label for k in slash.kids) and a.label == b.label:
            yield b


def _clause_comma_conjuncts(root: Node) -> Iterator[Node]:
    """Clause conjuncts after a separator: "S, S and S" (CoreNLP's comma-list clause rule)."""
    kids = root.kids
    if not any(
        _cc_or_conjp(c) and any(_clause_left_ok(s, ()) for s in kids[:i])
        for i, c in enumerate(kids)
    ):
        return
    head = hk(root)
    for i, p in enumerate(kids[:-1]):
        if p.label not in _SEPARATORS:
            continue
        target = kids[i + 1]
        if not _conjunct_start(target):
            continue
        j = i + 1
        before = kids[:j]
        ok = False
        for ci, c in enumerate(before):
            if not _cc_or_conjp(c):
                continue
            if not any(s is head for s in kids[:ci]):
                continue
            if any(_separator_like(x) for x in kids[ci + 1 : j]):
                continue
            ok = True
            break
        if not ok:
            for si, s in enumerate(before):
                if not _separator_like(s) or not any(h is head for h in kids[:si]):
                    continue
                no_cc_before = not any(
                    x.label.startswith("CC") or x.label.endswith("CONJP") for x in kids[:si]
                )
                inner_comma = False
                th = hk(target) if target.kids else None
                for ti, tc in enumerate(target.kids):
                    if tc.label == "," and any(r is th for r in target.kids[ti + 1 :]):
                        inner_comma = True
                if no_cc_before or inner_comma:
                    ok = True
                    break
        if ok:
            yield target


def _separator_like(n: Node) -> bool:
    return n.label.startswith(":") or n.label.endswith(",")


def _cc(t: Node) -> Iterator[Node]:
    for k in t.kids:
        if (k.label == "CC" and not _has_form(k, EITHER)) or (
            k.label == "CONJP" and not _not_only(k)
        ):
            yield k


def _not_only(n: Node) -> bool:
    """A CONJP holding "not" right before "only"/"just"/"merely"."""
    kids = n.kids
    return any(
        a.label == "RB"
        and _has_form(a, frozenset({"not"}))
        and b.label in ("RB", "JJ")
        and _has_form(b, frozenset({"only", "just", "merely"}))
        for a, b in pairwise(kids)
    )


def _punct(t: Node) -> Iterator[Node]:
    yield from _kids(t, lambda k: k.label in PUNCT_LABELS)


# --- 3. subjects ---------------------------------------------------------------------------------


def _has_ex(n: Node) -> bool:
    return _kid(n, lambda c: c.label == "EX")


def _to_vp(n: Node) -> bool:
    return n.label == "VP" and _kid(n, lambda c: c.label == "TO")


def _nsubj(t: Node) -> Iterator[Node]:
    label = t.label
    kids = t.kids
    if label == "S":
        under_vp = t.parent is not None and t.parent.label == "VP"
        for k in kids:
            if (
                k.label in ("NP", "WHNP")
                and not _has_ex(k)
                and not _time_headed(k)
                and any(r.label == "VP" and (not under_vp or not _to_vp(r)) for r in _right(k))
            ):
                yield k
            if (
                k.label == "NP"
                and _time_headed(k)
                and not any(r.label == "NP" for r in _right(k))
                and any(r.label == "VP" for r in _right(k))
            ):
                yield k
        if t.parent is not None and t.parent.label == "VP":
            for i, k in enumerate(kids[:-1]):
                if k.label == "NP" and kids[i + 1].label in ("NP", "ADJP"):
                    yield k
        if any(k.label == "NP" and _has_ex(k) for k in kids):
            for vp in _chain(t, lambda n: n.label == "VP"):
                if vp.label == "VP":
                    yield from _kids(vp, lambda c: c.label == "NP")
    if label in ("SQ", "PRN"):
        for k in kids:
            if k.label == "NP" and not _has_ex(k) and any(r.label == "VP" for r in _right(k)):
                yield k
    if label == "SQ":

        def no_vp_after(k: Node) -> bool:
            return not any(r.label == "VP" for r in _right(k))

        for i, k in enumerate(kids):
            if k.label != "NP" or _has_ex(k):
                continue
            prev = kids[i - 1] if i > 0 else None
            if prev is not None and _copula(prev) and no_vp_after(k):
                yield k
            if (
                prev is not None
                and prev.label.startswith(("VB", "AUX"))
                and no_vp_after(k)
                and not any(s.label in ("NP", "WHNP") for s in _left(t))
            ):
                yield k
            if (
                prev is not None
                and prev.label == "RB"
                and i > 1
                and kids[i - 2].label.startswith(("VB", "AUX"))
                and no_vp_after(k)
            ):
                yield k
        for k in kids:
            if k.label == "NP" and _has_ex(k):
                yield from (r for r in _right(k) if r.label == "NP")
    if label == "SBARQ":
        whnps = _kids(t, lambda k: k.label == "WHNP")
        sqs = _kids(t, lambda k: k.label == "SQ")
        if whnps and any(
            _kid(sq, lambda c: c.label == "VP" and not any(s.label == "NP" for s in _left(c)))
            for sq in sqs
        ):
            yield from whnps
        if whnps and any(
            _kid(
                sq,
                lambda c: (
                    c.label.startswith("VB")
                    and not _has_form(c, COPULAS)
                    and not any(s.label == "NP" for s in _left(c))
                    and not any(s.label == "VP" for s in _right(c))
                ),
            )
            for sq in sqs
        ):
            yield from whnps
        for sq in sqs:
            if _kid(sq, _copula) and not _kid(sq, lambda c: c.label == "VP"):
                yield sq
        if _kid(t, _copula) and _kid(t, lambda k: k.label == "WHNP" and _has_exact(k, "WP")):
            yield from _kids(t, lambda k: k.label == "NP")
        for wh in whnps:
            for v in _right(wh):
                if not _copula(v):
                    continue
                for adj in _right(v):
                    if adj.label == "ADJP" and not any(
                        n.label == "NP" and any(a is adj for a in _right(n)) for n in _right(v)
                    ):
                        yield wh
        first = _nth(t, 1)
        if _lab(first, "WHNP") and any(
            _kid(sq, _copula)
            and (
                _kid(sq, lambda c: c.label == "NP" and _has_ex(c))
                or _kid(sq, lambda c: c.label == "PP")
            )
            for sq in sqs
        ):
            assert first is not None
            yield first
    if label == "SINV":
        for i, k in enumerate(kids):
            if k.label not in ("NP", "WHNP"):
                continue
            prev = kids[i - 1] if i > 0 else None
            verbish = ("VP", "VBZ", "VBD", "VBP", "VB", "MD", "AUX")
            after_verb = prev is not None and prev.label in verbish
            after_adverb = (
                prev is not None
                and _cat(prev, "RB", "ADVP")
                and i > 1
                and kids[i - 2].label in verbish
            )
            alone = prev is None and not any(_cat(s, "NP") for s in _sisters(k))
            if after_verb or after_adverb or alone:
                yield k
        for i, k in enumerate(kids):
            if k.label != "NP":
                continue
            for np2 in kids[i + 1 :]:
                if np2.label == "NP" and any(
                    r.label == "VP" and _kid(r, _copula) for r in _right(np2)
                ):
                    yield np2
    if label == "SBAR":
        whnps = _kids(t, lambda k: k.label == "WHNP")
        if whnps:

            def vp_no_np(n: Node) -> bool:
                return n.label == "VP" and not any(s.label == "NP" for s in _left(n))

            if any(
                k.label == "S" and _kid(k, vp_no_np) and not _kid(k, lambda c: c.label == "SBAR")
                for k in kids
            ) or (_kid(t, vp_no_np) and not _kid(t, lambda c: c.label == "S")):
                yield from whnps
        elif (
            _kid(t, lambda k: k.label == "S" and not _np_then_vp(k))
            and t.parent is not None
            and t.parent.label == "VP"
        ):
            s = t.parent.parent
            if s is not None and s.label == "S":
                prev = _prev(s)
                if _lab(prev, "WHNP"):
                    assert prev is not None
                    yield prev


def _np_then_vp(n: Node) -> bool:
    return any(k.label == "NP" and any(r.label == "VP" for r in _right(k)) for k in n.kids)


def _passive_vp(n: Node) -> bool:
    return (
        n.label == "VP"
        and _kid(n, lambda c: _verb_in(c, BE_GET))
        and _kid(n, lambda c: c.label == "VP" and _has_vbn_vbd(c))
    )


def _nsubjpass(t: Node) -> Iterator[Node]:
    if _kid(t, _passive_vp):
        yield from _kids(t, lambda k: k.label in ("WHNP", "NP") and not _has_ex(k))


def _clausal_subject_candidates(t: Node) -> Iterator[tuple[Node, list[Node]]]:
    for k in t.kids:
        if k.label in ("SBAR", "S") and not _lab(_next(k), ","):
            vps = [
                r
                for r in _right(k)
                if r.label == "VP" and not any(s.label == "NP" for s in _left(r))
            ]
            if vps:
                yield k, vps


def _csubj(t: Node) -> Iterator[Node]:
    for k, _vps in _clausal_subject_candidates(t):
        yield k


def _csubjpass(t: Node) -> Iterator[Node]:
    for k, vps in _clausal_subject_candidates(t):
        for vp in vps:
            if _kid(vp, lambda c: c.label == "VP" and _has_vbn_vbd(c)) and _kid(
                vp, lambda c: _tagged_word(c, ("VB", "AUX"), BE_GET)
            ):
                yield k
                break
            if any(
                d.label == "VP"
                and _has_vbn_vbd(d)
                and d.parent is not None
                and d.parent.label == "VP"
                and _kid(d.parent, lambda c: _verb_in(c, BE_GET))
                for d in _chain(vp, lambda n: n.label == "VP")
            ):
                yield k
                break


# --- 4. objects and clausal complements ----------------------------------------------------------


def _object_np(k: Node) -> bool:
    """NP/WHNP that is an object rather than a time expression ("every morning")."""
    if k.label not in ("NP", "WHNP"):
        return False
    nxt = _next(k)
    if not _time_headed(k) and not _lab(nxt, "NP"):
        return True
    if _lab(nxt, "NP-TMP"):
        return True
    return nxt is not None and nxt.label == "NP" and _time_headed(nxt)


def _colon_list_excluded(t: Node, target: Node) -> bool:
    """The head child is followed by an NP, a colon and then ``target`` (a list, not an object)."""
    h = hk(t)
    if h is None:
        return False
    for np in _right(h):
        if np.label != "NP":
            continue
        for colon in _right(np):
            if colon.label == ":" and any(x is target for x in _right(colon)):
                return True
    return False


def _dobj(t: Node) -> Iterator[Node]:
    label = t.label
    kids = t.kids
    if label == "VP":
        if not _kid(t, lambda k: _verb_in(k, COPULAS) or _verb_in(k, SEEM)):
            for k in kids:
                if _object_np(k) and not _colon_list_excluded(t, k):
                    yield k
        for s in kids:
            if s.label == "S":
                for k in s.kids:
                    if k.label in ("NP", "WHNP") and any(_to_vp(r) for r in _right(k)):
                        yield k
    if (
        label == "SQ"
        and any(s.label == "WHNP" for s in _left(t))
        and not _kid(t, lambda k: k.label == "VP")
    ):
        verbs = _kids(t, lambda k: k.label.startswith("VB"))
        if len(verbs) == 1 and not _has_form(verbs[0], COPULAS):
            yield from (k for k in kids if _object_np(k))
    if label == "SBARQ":
        for wh in kids:
            if (
                wh.label == "WHNP"
                and not _has_exact(wh, "WRB")
                and not _time_headed(wh)
                and any(
                    _dobj_question_vp(v)
                    for v in _chain(t, lambda n: n.label in ("SQ", "SINV", "S", "VP"))
                )
            ):
                yield wh
        for wh in kids:
            if wh.label != "WHNP":
                continue
            for v in _right(wh):
                if not _copula(v):
                    continue
                right = _right(v)
                for adj in right:
                    if (
                        adj.label == "ADJP"
                        and not _kid(
                            adj,
                            lambda c: c.label == "PP" and not _kid(c, lambda d: d.label == "NP"),
                        )
                        and any(n.label == "NP" and any(a is adj for a in _right(n)) for n in right)
                    ):
                        yield wh
    if label == "SBAR":
        whs = _kids(t, lambda k: k.label == "WHNP" and not _has_exact(k, "WRB"))
        if whs and _kid(
            t,
            lambda s: (
                s.label == "S"
                and _kid(s, lambda c: c.label == "NP")
                and _kid(s, _relative_object_vp)
            ),
        ):
            yield from whs


def _pp_ending_in_prep(n: Node) -> bool:
    return n.label == "PP" and bool(n.kids) and n.kids[-1].label in ("IN", "TO")


def _relative_object_vp(v: Node) -> bool:
    return (
        v.label == "VP"
        and not _kid(v, lambda c: c.label == "SBAR")
        and not any(_pp_ending_in_prep(d) for d in _chain(v, lambda n: n.label == "VP"))
        and not _kid(v, lambda c: c.label == "S" and _kid(c, _to_vp))
    )


def _dobj_question_vp(v: Node) -> bool:
    return (
        v.label == "VP"
        and not _kid(v, lambda c: c.label in ("NP", "TO"))
        and not _kid(v, lambda c: c.label == "S" and _kid(c, _to_vp))
        and not _kid(
            v,
            lambda c: (
                c.label.startswith(("VB", "AUX"))
                and _has_form(c, COPULAS)
                and any(r.label == "VP" and _has_vbn_vbd(r) for r in _right(c))
            ),
        )
        and not _kid(v, lambda c: c.label == "PP" and _only_child_is(c, "IN", "TO"))
        and any(s.label == "NP" and not _has_exact(s, "-NONE-") for s in _left(v))
    )


def _iobj(t: Node) -> Iterator[Node]:
    kids = t.kids
    for i, k in enumerate(kids[:-1]):
        nxt = kids[i + 1]
        if (
            k.label == "NP"
            and not any("$" in c.label for c in k.kids)
            and not _time_headed(k)
            and nxt.label == "NP"
            and not _time_headed(nxt)
        ):
            yield k
    for k in kids:
        if k.label != "NP":
            continue
        for n1 in k.kids:
            if n1.label != "NP" or any("$" in c.label for c in n1.kids):
                continue
            sis = _sisters(n1)
            if any(s.label in ("CC", "CONJP", ",") for s in sis):
                continue
            if any(r.label == ":" for r in _right(n1)):
                continue
            if any(_second_object(n2) for n2 in _right(n1)):
                yield k
                break


def _second_object(n: Node) -> bool:
    if n.label != "NP":
        return False
    only = _only(n)
    if only is not None and only.label == "PRP" and _has_form(only, SELF):
        return False
    if only is not None and only.label == "DT":
        return False
    return not _kid(n, lambda c: c.label.startswith("NN") and _has_form(c, TIME_LOT))


def _s_with_vp(n: Node) -> bool:
    return n.label == "S" and _kid(n, lambda c: c.label == "VP")


def _reaches_vp_through_s(n: Node) -> bool:
    return any(d.label == "VP" for d in _chain(n, lambda x: x.label == "S"))


def _that_whether(n: Node | None) -> bool:
    return (
        n is not None and n.label in ("IN", "DT") and _has_form(n, frozenset({"that", "whether"}))
    )


def _wh_clause(sbar: Node) -> bool:
    """A WH clause opened by a WH word other than "how" with nothing but adverbs before it."""
    for w in sbar.kids:
        if w.label not in ("WHADVP", "WHNP"):
            continue
        if not _kid(w, lambda c: c.label == "WRB" and not _has_form(c, frozenset({"how"}))):
            continue
        if any(not s.label.startswith(("RB", "ADVP")) for s in _left(w)):
            continue
        return True
    return False


def _to_clause_inside(n: Node) -> bool:
    return _kid(n, lambda c: c.label == "S" and _kid(c, _to_vp))


def _ccomp(t: Node) -> Iterator[Node]:
    label = t.label
    kids = t.kids
    if label == "VP":
        for k in kids:
            if (
                k.label == "S"
                and _kid(
                    k,
                    lambda c: (
                        c.label == "VP" and not (c.kids and c.kids[0].label in ("TO", "VBG", "VBN"))
                    ),
                )
                and not any(s.label == "NP" for s in _left(k))
            ):
                yield k
            if k.label == "SBAR":
                first = _nth(k, 1)
                if _kid(k, lambda c: c.label == "S" and _reaches_vp_through_s(c)) and _that_whether(
                    first
                ):
                    yield k
                if _kid(
                    k,
                    lambda c: (
                        c.label == "SBAR"
                        and _kid(c, lambda d: d.label == "S" and _reaches_vp_through_s(d))
                        and _that_whether(_nth(c, 1))
                    ),
                ) and _kid(k, lambda c: c.label in ("CC", "CONJP")):
                    yield k
                second = _nth(k, 2)
                no_lead = not _lab(first, "IN", "WHADVP") and not (
                    second is not None
                    and second.label in ("IN", "WHADVP")
                    and _lab(_prev(second), "ADVP", "RB")
                )
                if (
                    _kid(k, _s_with_vp)
                    and no_lead
                    and (
                        not any(s.label == "NP" for s in _left(k))
                        or _kid(t, lambda c: c.label.startswith("V") and _has_form(c, TELL))
                    )
                ):
                    yield k
                if (
                    _kid(k, _s_with_vp)
                    and not any(s.label == "NP" for s in _left(k))
                    and _lab(first, "WHADVP")
                    and first is not None
                    and _kid(first, lambda c: c.label == "WRB" and _has_form(c, frozenset({"how"})))
                ):
                    yield k
            if _cat(k, "SBARQ"):
                yield k
        if _kid(t, lambda c: c.label.startswith("VB") and _has_form(c, HAVE)):
            for k in kids:
                if (
                    k.label == "S"
                    and _kid(k, lambda c: _cat(c, "NP"))
                    and _kid(k, lambda c: c.label == "VP")
                ):
                    yield k
        if _kid(t, lambda c: c.label.startswith("V") and _has_form(c, CCOMP_VERBS)):
            has_tell = _kid(t, lambda c: c.label.startswith("V") and _has_form(c, TELL))
            for k in kids:
                if not _cat(k, "SBAR"):
                    continue
                if any(_cat(s, "SBAR", "S") or s.label == ":" for s in _left(k)):
                    continue
                if not has_tell and any(s.label == "NP" for s in _left(k)):
                    continue
                candidates = [k]
                h = hk(k)
                if h is not None and _cat(h, "SBAR"):
                    candidates.append(h)
                if any(
                    _wh_clause(s) and not _to_clause_inside(s)
                    for s in candidates
                    if _cat(s, "SBAR")
                ):
                    yield k
    if _cat(t, "S", "SINV"):
        for i, k in enumerate(kids):
            if not _cat(k, "S", "SBARQ"):
                continue
            nxt = kids[i + 1] if i + 1 < len(kids) else None
            if nxt is None or nxt.label not in (",", ".", "''"):
                continue
            prev = kids[i - 1] if i > 0 else None
            if prev is not None and prev.label in ("CC", "CONJP", ":"):
                continue
            if (
                prev is not None
                and prev.label == ","
                and i > 1
                and kids[i - 2].label in ("CC", "CONJP")
            ):
                continue
            if _kid(
                k, lambda c: c.label == "VP" and _kid(c, lambda d: d.label in ("TO", "VBG", "VBN"))
            ):
                continue
            if _kid(k, lambda c: c.label == "VP" and _participial(_nth(c, 1))):
                continue
            if any(
                _cat(s, "S")
                and s is not k
                and any(x is k for x in _right(s))
                and not any(_cat(x, "CC", "CONJP") for x in _right(s))
                for s in kids
            ):
                continue
            yield k
    if label == "ADVP":
        for k in kids:
            if k.label != "SBAR":
                continue
            if _kid(k, lambda c: c.label == "WHNP") or (
                _kid(
                    k,
                    lambda c: (
                        c.label == "IN" and any(re.match(r"(?i)(as|that)", w.label) for w in c.kids)
                    ),
                )
                and _kid(
                    k,
                    lambda c: (
                        c.label == "S"
                        and _kid(
                            c, lambda d: d.label == "VP" and not _kid(d, lambda e: e.label == "TO")
                        )
                    ),
                )
            ):
                yield k
    if label == "ADJP":
        for k in kids:
            if (
                k.label == "SBAR"
                and not _kid(k, lambda c: c.label == "IN" and _has_exact(c, "as"))
                and _kid(k, lambda c: c.label == "S")
            ):
                yield k
    if label == "S":
        first = _nth(t, 1)
        if (
            _lab(first, "SBAR")
            and first is not None
            and _lab(_nth(first, 1), "IN")
            and _that_whether(_nth(first, 1))
            and not _lab(_next(first), "VP")
        ):
            yield first
    if _cat(t, "NP") and _kid(t, lambda c: c.label in ("JJ", "NN", "NNS")):
        for k in kids:
            if k.label == "SBAR" and (
                not _kid(k, lambda c: c.label == "S" and _kid(c, _to_vp))
                or not any(s.label in ("NP", "NN", "NNP", "NNS") for s in _left(k))
            ):
                yield k


def _participial(vp: Node | None) -> bool:
    """A VP opening with a participle (possibly after an adverb)."""
    if vp is None or vp.label != "VP":
        return False
    first, second = _nth(vp, 1), _nth(vp, 2)
    if _lab(first, "VBG", "VBN"):
        return True
    return (
        second is not None
        and second.label in ("VBG", "VBN")
        and any(s.label == "ADVP" for s in _left(second))
    )


def _ing_vp(n: Node) -> bool:
    return n.label == "VP" and _kid(n, lambda c: c.label == "VBG")


def _order_before(n: Node) -> bool:
    prev = _prev(n)
    return prev is not None and prev.label == "NN" and _has_exact(prev, "order")


def _adjective_clause(n: Node) -> bool:
    """@S holding an @ADJP with an adjective and no NP or S before that ADJP."""
    return _cat(n, "S") and _kid(
        n,
        lambda a: (
            _cat(a, "ADJP")
            and _kid(a, lambda c: c.label.startswith("JJ"))
            and not any(_cat(s, "NP", "S") for s in _left(a))
        ),
    )


def _xcomp(t: Node) -> Iterator[Node]:
    label = t.label
    kids = t.kids
    if label == "VP":
        for k in kids:
            if k.label == "S" and _kid(k, _to_vp) and not _order_before(k):
                left = _left(k)
                if not any(s.label == "NP" for s in left) or any(
                    s.label.startswith("V") and _has_form(s, XCOMP_VERBS) for s in left
                ):
                    yield k
            if (
                k.label == "S"
                and not _order_before(k)
                and any(c.label == "NP" and _lab(_next(c), "NP", "ADJP") for c in k.kids)
            ):
                yield k
        h = hk(t)
        if h is not None and h.label.startswith(("VB", "AUX")):
            nxt = _next(h)
            if (
                _lab(nxt, "VP")
                and nxt is not None
                and _kid(nxt, lambda c: c.label in ("VB", "VBG"))
            ):
                yield nxt
        parent_be = (
            t.parent is not None
            and t.parent.label == "VP"
            and _kid(t.parent, lambda c: c.label in ("VB", "AUX") and _has_exact(c, "be"))
        )
        if not parent_be:
            for k in kids:
                if k.label == "SBAR" and _kid(
                    k, lambda s: s.label == "S" and not _order_before(s) and _kid(s, _to_vp)
                ):
                    yield k
        if t.parent is not None and t.parent.label == "VP":
            for k in kids:
                only = _only(k)
                if (
                    k.label == "S"
                    and not _order_before(k)
                    and only is not None
                    and only.label == "NP"
                ):
                    yield k
        for k in kids:
            if k.label == "S" and not _kid(k, lambda c: c.label == "VP"):
                yield k
        if any(s.label.startswith("VB") and _has_form(s, COPULAS) for s in _left(t)):
            for k in kids:
                if k.label.startswith("VB"):
                    nxt = _next(k)
                    if nxt is not None and _adjective_clause(nxt):
                        yield nxt
        for k in kids:
            if (
                k.label == "S"
                and _kid(k, _ing_vp)
                and not _kid(k, lambda c: c.label == "NP")
                and not _comma_after_phrase(k)
                and not any(s.label == ":" or s.label == "VBG" for s in _left(k))
            ):
                yield k
        if any(_copula(s) for s in _left(t)) and _kid(
            t, lambda c: c.label.startswith("VB") and _has_form(c, SEEM)
        ):
            yield from _kids(t, lambda c: c.label == "NP")
        if _kid(t, lambda c: _verb_in(c, SEEM)):
            for k in kids:
                if _object_np(k) and not _colon_list_excluded(t, k):
                    yield k
        if not any(s.label == "NP" and _has_ex(s) for s in _sisters(t)):
            path = _head_path(t)
            if any(
                c.label.startswith(("VB", "AUX")) and _has_form(c, COPULAS) and c in path
                for c in kids
            ):
                yield from _kids(t, lambda c: c.label == "NP")
        yield from _kids(t, lambda c: c.label == "ADJP")
        if not any(s.label.startswith("VB") and _has_form(s, COPULAS) for s in _left(t)):
            for k in kids:
                if not k.label.startswith("VB"):
                    continue
                if _has_form(k, SEEM):
                    yield from (r for r in _right(k) if r.label == "VP")
                nxt = _next(k)
                if nxt is not None and _adjective_clause(nxt):
                    yield nxt
    if label == "ADJP":
        for k in kids:
            first = _nth(k, 1)
            if (
                k.label == "S"
                and _lab(first, "VP")
                and first is not None
                and _lab(_nth(first, 1), "TO")
            ):
                yield k
    if label == "SINV":
        h = hk(t)
        if h is not None and h.label == "VP" and _kid(h, _copula):
            for np in _left(h):
                if np.label == "NP":
                    yield from (x for x in _left(np) if x.label == "NP")


def _comma_after_phrase(k: Node) -> bool:
    """``k`` follows a comma that follows an NP/VP (or a PP/ADVP after an NP)."""
    prev = _prev(k)
    if prev is None or prev.label != ",":
        return False
    before = _prev(prev)
    if before is None:
        return False
    if _cat(before, "NP", "VP"):
        return True
    return _cat(before, "PP", "ADVP") and any(_cat(s, "NP") for s in _left(before))


# --- 5. modifiers of verbs and clauses -----------------------------------------------------------


def _mark(t: Node) -> Iterator[Node]:
    label = t.label
    kids = t.kids
    if label == "VP" and _kid(t, lambda c: c.label == "VP"):
        yield from _kids(t, lambda c: c.label == "TO")
    if label in ("SBAR", "SBAR-TMP"):
        for k in kids:
            if k.label in ("IN", "DT", "MWE") and any(r.label in ("S", "FRAG") for r in _right(k)):
                yield k
    if label == "SBAR":
        parent = t.parent
        context = (
            any(s.label.startswith(("VB", "AUX")) for s in _left(t))
            or _lab(_prev(t), "NP", "NN", "NNS")
            or _lab(parent, "ADJP", "PP")
            or (
                parent is not None
                and _cat(parent, "NP", "UCP", "SBAR")
                and _kid(parent, lambda c: c.label in ("CC", "CONJP"))
                and any(s.label.startswith(("VB", "AUX")) for s in _left(parent))
            )
        )
        if context:
            yield from _kids(
                t, lambda k: k.label in ("IN", "DT") and _has_exact(k, "that", "whether")
            )
    if label in ("PP", "PP-TMP", "PP-ADV"):
        for k in kids:
            if k.label in ("IN", "TO", "MWE", "PCONJP", "VBN", "JJ") and _cat(
                _next(k), "SBAR", "S"
            ):
                yield k


def _rel(t: Node) -> Iterator[Node]:
    if t.label == "SBAR":
        whs = _kids(t, lambda k: k.label == "WHNP" and not _has_exact(k, "WRB"))
        if whs and any(
            s.label == "S"
            and _kid(s, lambda c: c.label == "NP")
            and _kid(
                s,
                lambda v: (
                    v.label == "VP"
                    and (
                        _kid(v, lambda c: c.label == "SBAR")
                        or any(_pp_ending_in_prep(d) for d in _chain(v, lambda n: n.label == "VP"))
                        or _kid(v, lambda c: c.label == "S" and _kid(c, _to_vp))
                    )
                ),
            )
            for s in t.kids
        ):
            yield from whs
    if t.label == "SBARQ":
        for wh in t.kids:
            if (
                wh.label == "WHNP"
                and not _has_exact(wh, "WRB")
                and not _time_headed(wh)
                and any(
                    _copula(v) and not any(r.label == "VP" for r in _right(v))
                    for v in _chain(t, lambda n: n.label in ("SQ", "SINV"))
                )
            ):
                yield wh


def _expl(t: Node) -> Iterator[Node]:
    for k in t.kids:
        if k.label == "NP" and any(d.label == "EX" for d in _chain(k, lambda n: n.label == "NP")):
            yield k


def _opens_with_subordinator(sbar: Node) -> bool:
    first = _nth(sbar, 1)
    if first is None or first.label not in ("IN", "MWE"):
        return False
    if _has_form(first, frozenset({"that", "whether"})):
        return False
    nxt = _next(first)
    return not (nxt is not None and nxt.label == "NN" and _has_exact(nxt, "order"))


_LEADING_OK = ("CC", "CONJP", "``", ",", "INTJ", "PP")


def _advcl_sbar(x: Node) -> bool:
    """An @SBAR that reads as an adverbial clause (a subordinator, inversion, "so that")."""
    if not _cat(x, "SBAR"):
        return False
    if _kid(
        x, lambda c: c.label in ("IN", "MWE") and not _has_form(c, frozenset({"that", "whether"}))
    ):
        return True
    only = _only(x)
    if (
        only is not None
        and only.label == "SINV"
        and only.kids
        and only.kids[0].label.startswith(("VB", "MD", "AUX"))
    ):
        return True
    if _kid(x, lambda c: c.label in ("RB", "IN") and _has_exact(c, "so", "now")) and _kid(
        x, lambda c: c.label == "IN" and _has_exact(c, "that")
    ):
        return True
    first, second = _nth(x, 1), _nth(x, 2)
    return (
        _lab(first, "ADVP")
        and first is not None
        and _kid(first, lambda c: c.label == "RB" and _has_exact(c, "now"))
        and _lab(second, "IN")
        and second is not None
        and _has_exact(second, "that")
    )


def _wh_sbars(target: Node) -> list[Node]:
    """``target`` and, when its head child is an SBAR, that child (CoreNLP's ``== | <#`` pair)."""
    out = [target]
    h = hk(target)
    if h is not None and _cat(h, "SBAR"):
        out.append(h)
    return out


def _advcl_wh(sbar: Node) -> bool:
    return _cat(sbar, "SBAR") and _wh_clause(sbar) and not _to_clause_inside(sbar)


def _advcl(t: Node) -> Iterator[Node]:
    label = t.label
    kids = t.kids
    if label == "VP":
        for k in kids:
            if _cat(k, "SBAR") and (_advcl_sbar(k) or any(_advcl_sbar(c) for c in k.kids)):
                yield k
    if label in ("S", "SQ", "SINV"):
        for k in kids:
            if k.label not in ("SBAR", "SBAR-TMP") or not _opens_with_subordinator(k):
                continue
            if not any(not s.label.startswith(_LEADING_OK) for s in _left(k)) and not _lab(
                _next(k), "VP"
            ):
                yield k
            if (
                not _cat(_next(k), "VP")
                and _lab(_next(k), ",")
                and any(_cat(r, "NP") for r in _right(k))
            ):
                yield k
    if label == "SBARQ":
        for k in kids:
            if (
                k.label in ("SBAR", "SBAR-TMP", "SBAR-ADV")
                and _opens_with_subordinator(k)
                and _lab(_next(k), ",")
                and any(_cat(r, "SQ", "S", "SBARQ") for r in _right(k))
            ):
                yield k
    if label in ("S", "SQ"):
        for k in kids:
            if _cat(k, "SBAR") and any(
                _advcl_wh(s) and not any(x.label == ":" for x in _left(s)) for s in _wh_sbars(k)
            ):
                yield k
    if label == "VP":
        has_ccomp_verb = _kid(t, lambda c: c.label.startswith("V") and _has_form(c, CCOMP_VERBS))
        has_tell = _kid(t, lambda c: c.label.startswith("V") and _has_form(c, TELL))
        for k in kids:
            if not _cat(k, "SBAR") or any(s.label == ":" for s in _left(k)):
                continue
            context = (
                not has_ccomp_verb
                or any(_cat(s, "SBAR", "S") for s in _left(k))
                or (not has_tell and any(s.label == "NP" for s in _left(k)))
            )
            if context and any(_advcl_wh(s) for s in _wh_sbars(k)):
                yield k
    if _cat(t, "S"):
        for k in kids:
            right = _right(k)
            if (
                _cat(k, "SBAR")
                and any(_cat(r, "NP") for r in right)
                and any(_cat(r, "VP") for r in right)
            ):
                yield k
            if (
                _cat(k, "S")
                and _kid(k, _to_vp)
                and _lab(_next(k), ",")
                and any(_cat(r, "NP") for r in _right(k)[1:])
            ):
                yield k
    if label == "NP":
        yield from _than_clauses(t)
    if label == "ADVP" and _kid(t, lambda c: c.label == "ADVP"):
        yield from _kids(t, lambda c: c.label == "SBAR")
    if label in ("S", "SINV"):
        for i, k in enumerate(kids):
            if k.label != "S":
                continue
            verbs = _kids(k, lambda c: c.label == "VP") + [
                v.kids[0] for v in k.kids if v.label == "VP" and v.kids and v.kids[0].label == "VP"
            ]
            if not any(_participial(v) for v in verbs):
                continue
            prev = kids[i - 1] if i > 0 else None
            nxt = kids[i + 1] if i + 1 < len(kids) else None
            before_ok = (
                prev is not None
                and prev.label == ","
                and i > 1
                and (
                    _cat(kids[i - 2], "NP")
                    or (
                        _cat(kids[i - 2], "PP")
                        and any(_cat(s, "NP") for s in _sisters(kids[i - 2]))
                    )
                )
            )
            after_ok = (
                nxt is not None
                and nxt.label == ","
                and i + 2 < len(kids)
                and _cat(kids[i + 2], "NP")
            )
            if before_ok or after_ok:
                yield k
    if label == "VP":
        for k in kids:
            if (
                _cat(k, "S")
                and _kid(k, lambda v: v.label == "VP" and _participial(v))
                and _comma_after_phrase(k)
            ):
                yield k
        for k in kids:
            if k.label == "S" and _kid(k, _ing_vp):
                for ing in _left(k):
                    if ing.label == "VBG" and not any(
                        c.label == ":" and any(x is ing for x in _left(c)) for c in _left(k)
                    ):
                        yield k
                        break
        for k in kids:
            if (
                k.label == "S"
                and any(s.label == "NP" for s in _left(k))
                and _kid(k, _to_vp)
                and not any(s.label.startswith("V") and _has_form(s, XCOMP_VERBS) for s in _left(k))
            ):
                yield k
    if label == "SBARQ" and _kid(t, lambda c: c.label == "WHNP"):
        for k in kids:
            if k.label == "S" and _kid(k, lambda v: v.label == "VP" and _lab(_nth(v, 1), "TO")):
                yield k
    if label in _ADVCL_PP_HOSTS and not _ends_etc(t):
        for k in _objectless_pps(t):
            only = _only(k)
            if only is not None and only.label in ("IN", "TO"):
                continue
            if _kid(k, lambda c: _cat(c, "CC", "CONJP")):
                continue
            if _kid(k, lambda c: "PP" not in c.label and "IN" not in c.label):
                yield k
    if label in ("VP", "ADJP") and _kid(
        t,
        lambda p: (
            _cat(p, "PP")
            and _kid(p, lambda c: _cat(c, "SBAR", "S"))
            and any(r.label in ("CONJP", "CC") for r in _right(p))
        ),
    ):
        yield from _kids(t, lambda c: c.label in ("PP", "PP-TMP", "PP-ADV"))


_ADVCL_PP_HOSTS = _forms("ADJP", "ADVP", wh=True, suffixes=_TA) | {
    "VP", "SQ", "FRAG", "PRN", "X", "RRC", "S",
}  # fmt: skip


def _copula_no_vp(v: Node) -> bool:
    return _copula(v) and not _lab(_next(v), "VP")


def _reduced_relative_vp(v: Node, stranded: tuple[str, ...]) -> bool:
    """The VP of "(the man) I saw": not copular, no object, no clause, no stranded preposition
    (a PP ending in one of the ``stranded`` tags)."""
    if v.label != "VP":
        return False
    if _kid(v, _copula_no_vp):
        return False
    chain = list(_chain(v, lambda n: n.label == "VP"))
    if any(_copula(d) and _lab(_next(d), "VP") and _has_vbn_vbd(_next(d)) for d in chain):
        return False
    if any(d.label == "NP" for d in chain):
        return False
    if _kid(v, lambda c: c.label == "SBAR"):
        return False
    return not any(d.label == "PP" and d.kids and d.kids[-1].label in stranded for d in chain)


def _than_clauses(t: Node) -> Iterator[Node]:
    yield from _np_sbar_clauses(t, than=True)


def _np_sbar_clauses(t: Node, than: bool) -> Iterator[Node]:
    """SBARs after an NP that read as "than" clauses (``than``) or reduced relatives."""
    kids = t.kids
    stranded = ("IN", "TO", "MWE") if than else ("IN", "TO")
    for i, np in enumerate(kids):
        if np.label != "NP":
            continue
        for sbar in kids[i + 1 :]:
            if sbar.label != "SBAR":
                continue
            if than:
                if not _kid(
                    sbar, lambda c: c.label in ("IN", "MWE") and _has_form(c, frozenset({"than"}))
                ):
                    continue
            elif _kid(
                sbar,
                lambda c: c.label == "IN" and _has_form(c, frozenset({"than", "that", "whether"})),
            ):
                continue
            if _kid(sbar, lambda c: c.label in ("WHPP", "WHNP", "WHADVP")):
                continue
            if not _kid(
                sbar,
                lambda s: (
                    s.label == "S"
                    and _kid(
                        s,
                        lambda n: (
                            _cat(n, "NP")
                            and any(_reduced_relative_vp(v, stranded) for v in _right(n))
                        ),
                    )
                ),
            ):
                continue
            only = _only(sbar)
            if only is not None and only.label == "S" and not _kid(only, _to_vp):
                continue
            if any(c.label == "CC" and any(x is sbar for x in _right(c)) for c in _right(np)):
                continue
            yield sbar


def _tmod(t: Node) -> Iterator[Node]:
    label = t.label
    kids = t.kids
    if label in ("VP", "ADJP", "RRC"):
        for k in kids:
            if k.label == "NP-TMP":
                yield k
            if k.label == "VP":
                h = hk(k)
                if _lab(h, "NP-TMP") and not any(
                    s.label.startswith(",") or "CC" in s.label or s.label.endswith("CONJP")
                    for s in _sisters(k)
                ):
                    yield k
            if k.label == "NP" and _time_headed(k):
                nxt = _next(k)
                if not (nxt is not None and nxt.label.startswith("JJ") and _has_exact(nxt, "old")):
                    yield k
    if _cat(t, "PP"):
        for k in kids:
            if k.label not in ("IN", "TO", "VBG", "FW"):
                continue
            for np in _right(k):
                if not _cat(np, "NP"):
                    continue
                nxt = _next(np)
                if _lab(nxt, "NP-TMP") or (
                    _lab(nxt, "NP") and nxt is not None and _time_headed(nxt)
                ):
                    assert nxt is not None
                    yield nxt
    if label == "S":
        for k in kids:
            if (
                k.label == "NP-TMP"
                and any(r.label == "VP" for r in _right(k))
                and any(s.label == "NP" for s in _sisters(k))
            ):
                yield k
            if (
                k.label == "NP"
                and _time_headed(k)
                and any(
                    n.label == "NP" and any(v.label == "VP" for v in _right(n)) for n in _right(k)
                )
            ):
                yield k
    if label == "SBAR" and t.parent is not None and t.parent.label == "NP" and _when_clause(t):
        yield t.parent
    if label == "SBARQ" and _kid(t, lambda c: c.label == "SQ" and _kid(c, lambda d: _cat(d, "NP"))):
        yield from _kids(t, lambda c: _cat(c, "WHNP") and _time_headed(c))
    if label == "NP":
        yield from _kids(t, lambda c: c.label == "NP-TMP")


def _when_clause(t: Node) -> bool:
    """An SBAR "when NP VP" (the VP not a bare copula) after an NP and no CC."""

    def subject_then_verb(s: Node) -> bool:
        for n in s.kids:
            v = _next(n)
            if n.label == "NP" and v is not None and v.label == "VP" and not _kid(v, _copula_no_vp):
                return True
        return False

    return (
        _kid(
            t,
            lambda w: (
                _cat(w, "WHADVP") and _kid(w, lambda c: c.label == "WRB" and _has_exact(c, "when"))
            ),
        )
        and _kid(t, lambda s: s.label == "S" and subject_then_verb(s))
        and not any(s.label == "CC" for s in _left(t))
        and any(s.label == "NP" for s in _left(t))
    )


def _relative_sbar(sbar: Node) -> bool:
    """An SBAR with a WH phrase (through SBARs) or only a clause that is not "to" + verb."""
    if sbar.label != "SBAR":
        return False
    if any(d.label in ("WHPP", "WHNP") for d in _chain(sbar, lambda n: n.label == "SBAR")):
        return True
    only = _only(sbar)
    return only is not None and only.label == "S" and not _kid(only, _to_vp)


def _where_when_why(sbar: Node) -> bool:
    def wrb(c: Node) -> bool:
        return c.label == "WRB" and any(re.match(r"(?i)(where|why|when)", x.label) for x in c.kids)

    return sbar.label == "SBAR" and _kid(sbar, lambda w: w.label == "WHADVP" and _kid(w, wrb))


def _relcl(t: Node) -> Iterator[Node]:
    parent = t.parent
    if parent is None or any(_etc(s) or _fw_etc(s) for s in _right(t)):
        return
    if (
        _cat(t, "NP", "WHNP", "NML")
        and _cat(parent, "NP", "WHNP")
        and not any(_cat(s, "NP", "WHNP", "NML") for s in _left(t))
    ):
        for sbar in _right(t):
            if _relative_sbar(sbar) and not any(
                c.label in ("CC", "CONJP") for c in _between(t, sbar)
            ):
                yield sbar
    if (
        t.label in ("NP", "NML")
        and _cat(parent, "NP")
        and not any(s.label in ("NP", "NML") for s in _left(t))
    ):
        yield from (sbar for sbar in _right(t) if _where_when_why(sbar))


def _relcl_inner(t: Node) -> Iterator[Node]:
    if _cat(t, "NP", "WHNP") and _kid(t, lambda c: c.label == "RRC"):
        h = hk(t)
        if _lab(h, "NP", "WHNP", "NML", "DT", "S"):
            yield from _kids(t, lambda c: c.label == "RRC")
    if _cat(t, "ADVP") and _kid(
        t,
        lambda a: (
            _cat(a, "ADVP")
            and _kid(
                a, lambda c: c.label == "RB" and any(x.label.endswith("where") for x in c.kids)
            )
        ),
    ):
        yield from _kids(t, lambda c: _cat(c, "SBAR"))
    if t.label == "NP":
        yield from _np_sbar_clauses(t, than=False)


def _relcl_all(t: Node) -> Iterator[Node]:
    yield from _relcl(t)
    yield from _relcl_inner(t)


# --- 6. modifiers of nouns -----------------------------------------------------------------------


def _amod(t: Node) -> Iterator[Node]:
    kids = t.kids
    if t.label in _AMOD_HOSTS:
        for k in kids:
            if k.label not in (
                "ADJP", "WHADJP", "JJ", "JJR", "JJS", "JJP", "VBN", "VBG", "VBD", "IN",
            ):  # fmt: skip
                continue
            if _kid(k, lambda c: c.label == "QP" and not _kid(c, lambda d: d.label == "$")):
                continue
            if _lab(_prev(k), "CC"):
                continue
            yield k
    if t.label == "ADJP" and not _kid(t, lambda c: c.label in ("CC", "CONJP")):
        for k in kids:
            if k.label in ("JJ", "NNP"):
                yield from (s for s in _sisters(k) if s.label in ("JJ", "NNP"))
    if t.label in NPISH:
        yield from _np_cd_after_comma(t)


_AMOD_HOSTS = frozenset({"NP", "NP-TMP", "NP-ADV", "NX", "NML", "NAC", "WHNP", "INTJ"})


def _np_cd_after_comma(t: Node) -> Iterator[Node]:
    for k in t.kids:
        only = _only(k)
        if (
            k.label == "NP"
            and only is not None
            and only.label == "CD"
            and _lab(_prev(k), ",")
            and any(re.match(r"(WH)?NP", s.label) for s in _left(k))
            and not any(s.label in ("CC", "CONJP") for s in _sisters(k))
        ):
            yield k


_NOMINAL_HOSTS = _forms("NP", "NX", "NML", wh=True, suffixes=_TA)


def _nummod(t: Node) -> Iterator[Node]:
    if t.label in _NOMINAL_HOSTS:
        for k in t.kids:
            if k.label in ("CD", "QP") and not _lab(_prev(k), "CC"):
                yield k
            only = _only(k)
            if (
                k.label == "ADJP"
                and only is not None
                and only.label == "QP"
                and not _kid(only, lambda d: d.label == "$")
            ):
                yield k
    if t.label == "QP" and _kid(t, lambda c: c.label == "$"):
        yield from _kids(t, lambda c: c.label == "QP")


_COMPOUND_HOSTS = _forms("NP", "NX", "NAC", "NML", wh=True, suffixes=_TA)
_NOUNISH = ("NP", "NML", "NN", "NNS", "NNP", "NNPS", "FW", "AFX")


def _possessive_end(n: Node) -> bool:
    return any(
        d.label == "POS" or (d.label == "VBZ" and _has_exact(d, "'s")) for d in _rightmost(n)
    )


def _compound(t: Node) -> Iterator[Node]:
    kids = t.kids
    if t.label in _COMPOUND_HOSTS:
        for i, k in enumerate(kids):
            if k.label not in _NOUNISH or _possessive_end(k) or _lab(_prev(k), ","):
                continue
            for j in range(i + 1, len(kids)):
                sister = kids[j]
                if sister.label in ("NN", "NNS", "NNP", "NNPS", "FW", "CD") and not any(
                    p.label == "POS" for p in kids[i + 1 : j]
                ):
                    yield k
                    break
        h = hk(t)
        if (
            _lab(h, "NN", "NNS", "NNP", "NNPS")
            and not _possessive_end(t)
            and _kid(t, lambda c: c.label in ("JJ", "JJR", "JJS"))
        ):
            for k in kids:
                if (
                    k.label in ("NP", "NML", "NN", "NNS", "NNP", "NNPS", "FW")
                    and not _possessive_end(k)
                    and _lab(_next(k), "JJ", "JJR", "JJS")
                ):
                    yield k
    if t.label in ("QP", "ADJP"):
        for k in kids:
            # CoreNLP's test reads "$" in its list as an end anchor, so "$" itself never matches
            if k.label in ("CD", "#") and not _lab(_prev(k), "CC"):
                yield k
    if t.label in ("ADJP", "ADVP"):
        for k in kids:
            if k.label != "FW":
                continue
            prev = _prev(k)
            if prev is not None and (
                (prev.label == "FW" and not _has_form(prev, frozenset({"etc"})))
                or (prev.label == "IN" and _has_exact(prev, "in", "In"))
            ):
                yield prev


def _appos(t: Node) -> Iterator[Node]:
    kids = t.kids
    plain = (
        not _kid(t, lambda c: c.label in ("CC", "CONJP"))
        and not _kid(t, _fw_etc)
        and not _kid(t, _etc)
    )
    if plain:
        for k in kids:
            only = _only(k)
            if (
                k.label == "NP"
                and not (only is not None and only.label == "CD")
                and _lab(_prev(k), ",")
                and any(re.match(r"(WH)?NP", s.label) for s in _left(k))
            ):
                yield k
    for k in kids:
        if k.label == "PRN" and _kid(
            k,
            lambda n: (
                n.label == "NP"
                and _kid(n, lambda c: c.label.startswith(("NN", "CD")))
                and any(s.label == "-LRB-" for s in _left(n))
                and _lab(_next(n), "-RRB-")
            ),
        ):
            yield k
    if _cat(t, "WHNP", "NP"):
        for k in kids:
            only = _only(k)
            if (
                k.label == "NP"
                and not (only is not None and only.label == "CD")
                and _lab(_nth(k, 1), "-LRB-")
                and _lab(_nth(k, -1), "-RRB-")
                and any(re.match(r"(WH)?NP", s.label) for s in _left(k))
                and not any(s.label in ("CC", "CONJP") for s in _sisters(k))
            ):
                yield k
    if t.label in ("NP", "NP-TMP", "NP-ADV") and plain:
        for i, k in enumerate(kids[:-2]):
            if k.label == "NNP" and kids[i + 1].label == "," and kids[i + 2].label == "NNP":
                yield kids[i + 2]
    for k in kids if t.label in NPISH else ():
        if (
            k.label == "PRN"
            and _lab(_nth(k, 1), "-LRB-")
            and _lab(_nth(k, -1), "-RRB-")
            and not any(re.fullmatch(r"POS|WP\$|PRP\$|[,$#]|CC|RB|CD", d.label) for d in _below(k))
            and any(
                d.label in ("NNP", "NN")
                and any(re.match(r"(?:[A-Z]\.?){2,}", w.label) for w in d.kids)
                for d in _chain(k, lambda n: n.label == "NP")
            )
        ):
            yield k
    if plain and t.label in NPISH:
        for k in kids:
            only = _only(k)
            prev = _prev(k)
            if (
                k.label == "NP"
                and only is not None
                and only.label == "NNP"
                and prev is not None
                and re.match(r"(WH)?NP", prev.label)
                and not _kid(prev, lambda c: c.label == "POS")
            ):
                yield k
    if t.label in ("FRAG", "NP"):
        for i, k in enumerate(kids[:-2]):
            only = _only(k)
            if (
                k.label == "NP"
                and only is not None
                and only.label in ("NN", "NNS")
                and ":" in kids[i + 1].label
                and _cat(kids[i + 2], "SQ", "S")
            ):
                yield kids[i + 2]


def _discourse(t: Node) -> Iterator[Node]:
    for k in t.kids:
        if k.label == "INTJ":
            yield k
        elif k.label == "PRN" and _lab(_nth(k, 1), ",", "-LRB-") and _lab(_nth(k, 2), "INTJ"):
            third = _nth(k, 3)
            if third is None or third.label in (",", "-RRB-"):
                yield k


def _acl(t: Node) -> Iterator[Node]:
    kids = t.kids
    if t.label in ("WHNP", "WHNP-TMP", "WHNP-ADV", "NP", "NP-TMP", "NP-ADV", "NML", "NX"):
        for k in kids:
            if (
                k.label == "VP"
                and _kid(k, lambda c: c.label in ("VBG", "VBN", "VBD"))
                and any(_cat(s, "NP", "NML", "NX") for s in _left(k))
            ):
                yield k
        for i, k in enumerate(kids[:-1]):
            if k.label == ",":
                vp = kids[i + 1]
                if vp.label == "VP" and _participial(vp):
                    yield vp
    if t.label in _NOMINAL_HOSTS and not _ends_etc(t):
        for k in _objectless_pps(t):
            if not _kid(
                k,
                lambda c: not any(s in c.label for s in ("PP", "CC", "CONJP", ",")),
            ):
                continue
            if _kid(
                k,
                lambda p: (
                    _cat(p, "PP")
                    and _lab(_nth(p, 1), "IN", "RB", "MWE", "PCONJP", "VBN", "JJ")
                    and _cat(_nth(p, 2), "NP")
                ),
            ):
                continue
            yield k
    if t.label == "NP" or t.label.startswith("NP-"):
        for k in kids:
            if (
                k.label == "S"
                and _kid(k, _to_vp)
                and any(s.label in ("NP", "NN", "NNP", "NNS") for s in _left(k))
            ):
                yield k
            if (
                k.label == "SBAR"
                and _kid(k, lambda s: s.label == "S" and _kid(s, _to_vp))
                and any(s.label in ("NP", "NN", "NNP", "NNS") for s in _left(k))
            ):
                yield k


_ADVMOD_HOSTS_1 = (
    frozenset({"VP", "ADJP", "JJP", "WHADJP", "S", "SQ", "SBAR", "SBARQ", "SINV", "XS", "RRC"})
    | NPISH
)
_ADVERBS = ("RB", "RBR", "RBS", "WRB", "ADVP", "WHADVP")


def _negative(n: Node) -> bool:
    return _has_form(n, NEGATIONS)


def _adverb(n: Node) -> bool:
    return n.label in _ADVERBS and not _negative(n) and not _kid(n, _etc)


def _advmod(t: Node) -> Iterator[Node]:
    label = t.label
    kids = t.kids
    if label in _ADVMOD_HOSTS_1:
        for k in kids:
            if not _adverb(k):
                continue
            inner = [d for d in _chain(k, lambda n: "ADVP" in n.label) if _cat(d, "ADVP")]
            at_advp = any(
                _kid(
                    d,
                    lambda c: (
                        c.label == "IN" and any(re.search(r"(?i:at)", w.label) for w in c.kids)
                    ),
                )
                for d in inner
            )
            np_advp = any(_kid(d, lambda c: c.label == "NP") for d in inner)
            if not (at_advp and np_advp):
                yield k
    if label == "QP":
        yield from _kids(
            t,
            lambda c: c.label in ("IN", "RB", "RBR", "RBS", "PDT", "DT", "JJ", "JJR", "JJS", "XS"),
        )
        for k in kids:
            if (
                k.label == "MWE"
                and _kid(
                    k,
                    lambda c: (
                        c.label in ("JJR", "RBR", "IN")
                        and _has_form(c, frozenset({"more", "less"}))
                    ),
                )
                and _kid(k, lambda c: c.label == "IN" and _has_form(c, frozenset({"than"})))
            ):
                yield k
    if label in ("ADVP", "WHADVP"):
        coordinators = _kids(t, lambda c: c.label.startswith("CC") or c.label.endswith("CONJP"))
        h = hk(t)
        for k in kids:
            if k.label not in (*_ADVERBS, "JJ") or _negative(k) or _has_form(k, frozenset({"no"})):
                continue
            if _kid(k, _etc):
                continue
            if not coordinators:
                yield k
                continue
            if h is not None and not any(
                h in _sisters(c)
                and k in _sisters(c)
                and min(h.position(), k.position()) < c.position() < max(h.position(), k.position())
                for c in coordinators
            ):
                yield k
    if label == "SBAR":
        yield from _kids(t, lambda c: c.label == "WHNP" and _has_exact(c, "WRB"))
    if label == "SBARQ" and _lab(_nth(t, 1), "WHADVP"):
        yield t.kids[0]
    if label == "XS":
        yield from _kids(t, lambda c: c.label == "JJ")
    if _PP_END.search(label):
        h = hk(t)
        if h is not None:
            yield from (s for s in _left(h) if _adverb(s))
        if _kid(t, lambda c: _cat(c, "NP", "WHNP")):
            yield from _kids(t, _adverb)
    if label == "CONJP":
        yield from _kids(t, lambda c: c.label == "RB" and not _negative(c) and not _kid(c, _etc))


def _neg(t: Node) -> Iterator[Node]:
    label = t.label
    kids = t.kids
    if label in ("VP", "NP", "NP-TMP", "NP-ADV", "ADJP", "SQ", "S", "FRAG", "CONJP", "PP"):
        yield from _kids(t, lambda c: c.label == "RB" and _negative(c))
    if label in ("VP", "ADJP", "S", "SBAR", "SINV", "FRAG"):
        for k in kids:
            h = hk(k) if k.label == "ADVP" else None
            if h is not None and h.label == "RB" and _negative(h):
                yield k
    if label == "VP" and t.parent is not None and t.parent.label == "SQ":
        yield from (s for s in _left(t) if s.label == "RB" and _negative(s))
    if label in ("NP", "NP-TMP", "NP-ADV", "NAC", "NML", "NX", "ADJP", "ADVP"):
        for k in kids:
            if (
                k.label in ("DT", "RB")
                and _has_form(k, frozenset({"no"}))
                and any(
                    re.match(r"N[MNXP]|CD|JJ|JJR|FW|ADJP|QP|RB|RBR|PRP(?![$])|PRN", r.label)
                    for r in _right(k)
                )
            ):
                yield k
    if label in ("ADVP", "WHADVP") and not _kid(t, lambda c: c.label in ("CC", "CONJP")):
        yield from _kids(
            t, lambda c: c.label in (*_ADVERBS, "JJ") and _has_form(c, frozenset({"no"}))
        )


def _npmod(t: Node) -> Iterator[Node]:
    kids = t.kids
    if _cat(t, "ADVP", "ADJP", "WHADJP", "WHADVP", "PP", "WHPP"):
        h = hk(t)
        if (
            h is not None
            and h.label in ("JJ", "JJR", "IN", "RB", "RBR")
            and not _has_exact(h, "notwithstanding")
        ):
            prev = _prev(h)
            if (
                prev is not None
                and _cat(prev, "NP")
                and not _kid(prev, lambda c: c.label in ("NNP", "NNPS"))
            ):
                yield prev
    if _cat(t, "ADJP") and not _kid(t, lambda c: c.label in ("CC", "CONJP")):
        for k in kids:
            if k.label == "NN" and any(r.label.startswith("JJ") for r in _right(k)):
                yield k
    if _cat(t, "ADVP"):
        h = hk(t)
        if h is not None and h.label.startswith(("RB", "ADVP")):
            yield from (r for r in _right(h) if _cat(r, "NP"))
    if _cat(t, "NP", "WHNP"):
        yield from _kids(t, lambda c: c.label.startswith("NP-ADV"))
        for k in kids:
            only = _only(k)
            is_self = (
                k.label == "NP"
                and only is not None
                and only.label == "PRP"
                and _has_form(only, SELF)
            ) or (k.label == "PRP" and _has_form(k, SELF))
            if not is_self:
                continue
            for noun in _left(k):
                if noun.label not in ("NP", "NN", "NNS", "NNP", "NNPS", "PRP"):
                    continue
                if not any(re.search(r"^,|CC|CONJP$", x.label) for x in _between(noun, k)):
                    yield k
                    break
    if _cat(t, "NP") and len(kids) == 2:
        a, b = kids
        if (
            _cat(a, "NP")
            and any(x.label == "%" for x in _head_path(a))
            and _cat(b, "NP")
            and any(x.label in ("days", "month", "months") for x in _head_path(b))
        ):
            yield b
    if _cat(t, "VP"):
        yield from _kids(t, lambda c: c.label.startswith("NP-ADV"))
    if _cat(t, "NP", "ADVP", "QP"):
        for d in _chain(t, lambda n: "ADVP" in n.label):
            if (
                _cat(d, "ADVP")
                and _kid(
                    d,
                    lambda c: (
                        c.label == "IN" and any(re.search(r"(?i:at)", w.label) for w in c.kids)
                    ),
                )
                and _kid(d, lambda c: c.label == "NP")
            ):
                yield d


def _mwe(t: Node) -> Iterator[Node]:
    yield from _kids(
        t,
        lambda c: c.label in (
            "IN", "TO", "RB", "NP", "NN", "JJ", "VB", "CC", "VBZ", "VBD", "ADVP", "PP", "JJS",
            "RBS",
        ),
    )  # fmt: skip


_PP_END = re.compile(r"PP(-TMP|-ADV)?$")
_DET_FOLLOW = re.compile(r"N[MNXP]|CD|JJ|FW|ADJP|QP|RB|PRP(?![$])|PRN")
_DET_BLOCK = re.compile(r"^PRP[$]|POS")
_DET_NOMINAL = re.compile(r"NP|NN|CD|RBS|JJ")
_WH_DET_NOMINAL = re.compile(r"NP|NN|CD|RBS")


def _det(t: Node) -> Iterator[Node]:
    label = t.label
    kids = t.kids
    if label in ("NP", "NP-TMP", "NP-ADV", "NAC", "NML", "NX", "X"):
        for i, k in enumerate(kids):
            if k.label != "DT" or _has_form(k, EITHER | {"no"}):
                continue
            right = kids[i + 1 :]
            if _lab(_next(k), "DT") or any(r.label == "CC" for r in right):
                continue
            for j, det in enumerate(right):
                if not _DET_FOLLOW.match(det.label):
                    continue
                between = right[:j]
                blocked = False
                for bi, x in enumerate(between):
                    if _DET_BLOCK.search(x.label) and not any(
                        "''" in y.label for y in between[bi + 1 :]
                    ):
                        blocked = True
                        break
                if not blocked:
                    yield k
                    break
    if label in ("NP", "NP-TMP", "NP-ADV"):
        for i, k in enumerate(kids):
            if k.label != "DT":
                continue
            right = kids[i + 1 :]
            nxt = _next(k)
            has_cc = any(r.label == "CC" for r in right)
            nounish_after = any(r.label.startswith(("NN", "NX", "NML")) for r in right)
            preconjunction = (
                _has_form(k, EITHER)
                and not _lab(nxt, "DT")
                and not has_cc
                and nounish_after
                and not any(r.label == "NP" and _kid(r, lambda c: c.label == "CC") for r in right)
            )
            before_coordination = not _has_form(k, EITHER | {"no"}) and has_cc and nounish_after
            before_adjective = (
                not _has_form(k, frozenset({"no"}))
                and any(r.label.startswith("JJ") and not _starts(_next(r), "NN") for r in right)
                and not has_cc
                and not _lab(nxt, "DT")
            )
            if preconjunction or before_coordination or before_adjective:
                yield k
    if label in ("NP", "NP-TMP", "NP-ADV") and any(d.label == "PRP" for d in _leftmost(t)):
        last = _nth(t, -1)
        if last is not None and last.label in ("NP", "DT", "RB"):
            leaf = list(_rightmost(last))
            if leaf and leaf[-1].label.lower() in ("all", "both", "each"):
                yield last
    if label == "WHNP":
        for k in kids:
            if k.label == "NP":
                yield from (s for s in _left(k) if s.label == "WHNP" and _has_exact(s, "WDT"))
    if _cat(t, "WHNP", "ADVP", "ADJP"):
        for k in kids:
            if not _DET_NOMINAL.match(k.label):
                continue
            for d in _left(k):
                if d.label not in ("DT", "WDT", "WP") or _has_form(d, frozenset({"no"})):
                    continue
                if d.label in ("WDT", "WP") or not any(
                    r.label in ("CC", "CONJP") for r in _right(d)
                ):
                    yield d
    if _cat(t, "NP"):
        for k in kids:
            if _WH_DET_NOMINAL.match(k.label):
                yield from (s for s in _left(k) if s.label in ("WDT", "WP"))


def _predet(t: Node) -> Iterator[Node]:
    kids = t.kids
    if t.label in NPISH | {"NX", "NAC", "NML"}:
        for i, k in enumerate(kids):
            if (
                k.label in ("PDT", "DT")
                and _lab(_next(k), "DT", "WP$", "PRP$")
                and any(r.label.startswith(("NN", "NX", "NML")) for r in kids[i + 1 :])
                and not any(r.label == "CC" for r in kids[i + 1 :])
            ):
                yield k
    if t.label in NPISH:
        if not any(r.label == "CC" for r in _right(t)):
            for i, k in enumerate(kids):
                if (
                    k.label in ("PDT", "DT")
                    and _lab(_next(k), "DT")
                    and any(
                        r.label.startswith("JJ") and not _starts(_next(r), "NN")
                        for r in kids[i + 1 :]
                    )
                ):
                    yield k
        if _lab(_nth(t, -1), "DT"):
            yield from _kids(t, lambda c: c.label == "PDT")


_PRECONJ_CLAUSAL = re.compile(r"^S|VP|ADJP|PP|ADVP|UCP(-TMP|-ADV)?|NX|NML|SBAR$")


def _preconj(t: Node) -> Iterator[Node]:
    kids = t.kids
    label = t.label
    nominal = label in ("NP", "NP-TMP", "NP-ADV", "NX", "NML")
    clausal = bool(_PRECONJ_CLAUSAL.search(label))
    for i, k in enumerate(kids):
        right = kids[i + 1 :]
        either = k.label in ("PDT", "CC", "DT") and _has_form(k, EITHER)
        not_only = (
            k.label == "CONJP"
            and _kid(k, lambda c: c.label == "RB" and _has_form(c, frozenset({"not"})))
            and _kid(
                k,
                lambda c: (
                    c.label in ("RB", "JJ") and _has_form(c, frozenset({"only", "merely", "just"}))
                ),
            )
        )
        if nominal or clausal:
            if either and any(r.label == "CC" for r in right):
                yield k
            if not_only and any(r.label in ("CC", "CONJP") for r in right):
                yield k
        if (
            nominal
            and either
            and _kid(t, lambda c: c.label == "NP" and _kid(c, lambda d: d.label == "CC"))
        ):
            yield k


_POSS_HOST = re.compile(r"(WH)?(NP|INTJ|ADJP|PRN|NAC|NX|NML)(-.*)?")
_NP_OR_NML = re.compile(r"(WH)?(NP|NML)(-.*)?")
_NP_NML_OR_NX = re.compile(r"(WH)?(NP|NML|NX)(-.*)?")


def _poss(t: Node) -> Iterator[Node]:
    kids = t.kids
    label = t.label
    if _POSS_HOST.fullmatch(label):
        yield from _kids(t, lambda c: c.label in ("WP$", "PRP$"))
    if _NP_OR_NML.fullmatch(label):
        nominal = ("WHNP", "WHNML", "NP", "NML")

        def possessive(n: Node) -> bool:
            return _kid(n, lambda c: c.label == "POS" or (c.label == "VBZ" and _has_exact(c, "'s")))

        coordinated = any(
            c.label in ("CC", "CONJP") and any(r.label in nominal for r in _right(c)) for c in kids
        )
        if not coordinated:
            yield from _kids(t, lambda c: c.label in nominal and possessive(c))
        for k in kids:
            if (
                k.label in nominal
                and any(
                    c.label in ("CC", "CONJP") and any(r.label in nominal for r in _right(c))
                    for c in k.kids
                )
                and _kid(k, lambda c: c.label in nominal and possessive(c))
            ):
                yield k
    if _NP_NML_OR_NX.fullmatch(label):
        for i, k in enumerate(kids):
            if not k.label.startswith(("NN", "NP")):
                continue
            for pos in kids[i + 1 :]:
                if (
                    pos.label == "POS"
                    and any("'" in w.label for w in pos.kids)
                    and any(r.label.startswith("NN") for r in _right(pos))
                    and not any(x.label.startswith(("NN", "NP")) for x in _between(k, pos))
                ):
                    yield k
                    break


_CASE_NOMINAL = re.compile(r"(WH)?(NP|NML)(-TMP|-ADV)?")


def _case(t: Node) -> Iterator[Node]:
    kids = t.kids
    label = t.label
    pp = _pp_like(t)
    if pp:
        for k in kids:
            if k.label not in ("IN", "TO", "MWE", "PCONJP", "VBN", "JJ"):
                continue
            nxt = _next(k)
            if _cat(nxt, "SBAR"):
                continue
            if not _cat(nxt, "S"):
                yield k
            elif nxt is not None and nxt.label == "S":
                first = _nth(nxt, 1)
                if _lab(first, "VP") and first is not None and _lab(_nth(first, 1), "NN"):
                    yield k
    if _CASE_NOMINAL.fullmatch(label):
        yield from _kids(t, lambda c: c.label == "POS")
        yield from _kids(t, lambda c: c.label == "VBZ" and _has_exact(c, "'s"))
    if pp:
        if _lab(_nth(t, 1), "CC") and _lab(_nth(t, 2), "NP"):
            yield t.kids[0]
        first = _nth(t, 1)
        if _lab(first, "VBG") and not _kid(
            t, lambda p: _cat(p, "PP") and _kid(p, lambda c: _cat(c, "SBAR", "S"))
        ):
            assert first is not None
            yield first
    if _cat(t, "ADVP"):
        yield from _kids(t, lambda c: c.label == "IN")


def _prt(t: Node) -> Iterator[Node]:
    if t.label == "VP":
        yield from _kids(t, lambda c: c.label == "PRT")
    if t.label == "ADJP" and _kid(t, lambda c: c.label.startswith("VB")):
        yield from _kids(t, lambda c: c.label == "RP")


def _parataxis(t: Node) -> Iterator[Node]:
    kids = t.kids
    label = t.label
    if label == "VP":
        yield from _kids(
            t, lambda c: c.label == "PRN" and _kid(c, lambda d: d.label in ("S", "SINV", "SBAR"))
        )
        for s in _sisters(t):
            if s.label == "PRN" and (
                _kid(s, lambda d: d.label in ("S", "SINV", "SBAR"))
                or (_kid(s, lambda d: d.label == "VP") and _kid(s, lambda d: _cat(d, "NP")))
            ):
                yield s
    if label in ("S", "FRAG", "VP"):
        first = _nth(t, 1)
        cc_after_first = first is not None and any(
            r.label in ("CC", "CONJP") for r in _right(first)
        )
        if not cc_after_first:
            for i, c in enumerate(kids[:-1]):
                if c.label == ":" and kids[i + 1].label.startswith("S"):
                    yield kids[i + 1]
    if _cat(t, "S", "FRAG"):
        for i, x in enumerate(kids):
            if not _cat(x, "S", "SBARQ", "SQ", "FRAG"):
                continue
            right = kids[i + 1 :]
            if any(_cat(r, "CC", "CONJP", "MWE") for r in right):
                continue
            if any(":" in r.label and any(";" in c.label for c in r.kids) for r in right):
                continue
            yield from (r for r in right if _cat(r, "S", "SBARQ", "SQ", "FRAG"))
    if _cat(t, "S", "FRAG", "VP") and not _kid(t, lambda c: _cat(c, "CONJP", "CC")):
        for i, c in enumerate(kids[:-1]):
            if (
                c.label == ":"
                and any(s.label.startswith("V") for s in _left(c))
                and _cat(kids[i + 1], "NP")
            ):
                yield kids[i + 1]
    if label in ("FRAG", "NP"):
        for i, k in enumerate(kids[:-2]):
            if (
                k.label == "NP"
                and ":" in kids[i + 1].label
                and _cat(kids[i + 2], "SQ", "S")
                and any(d.label in ("NNP", "NNPS") for d in _below(k))
            ):
                yield kids[i + 2]


def _list(t: Node) -> Iterator[Node]:
    kids = t.kids
    for i, np in enumerate(kids):
        if np.label != "NP" or any(r.label in ("CC", "CONJP", "MWE") for r in _right(np)):
            continue
        if i + 2 < len(kids) and "," in kids[i + 1].label and kids[i + 2].label == "NP":
            second = kids[i + 2]
            if i + 4 < len(kids) and "," in kids[i + 3].label and kids[i + 4].label == "NP":
                yield second
            for j in range(i + 3, len(kids) - 1):
                if "," in kids[j].label and kids[j + 1].label == "NP":
                    yield kids[j + 1]


def _prep(t: Node) -> Iterator[Node]:
    for k in t.kids:
        only = _only(k)
        if k.label == "PP" and only is not None and only.label in ("IN", "TO"):
            yield k


def _nmod(t: Node) -> Iterator[Node]:
    kids = t.kids
    label = t.label
    if label in _NMOD_HOSTS:
        if not _ends_etc(t):
            for k in kids:
                if k.label in _PP_OR_TMP and (
                    _kid(k, lambda c: _cat(c, *_NOMINAL))
                    or _kid(k, lambda c: c.label == "PP" and _kid(c, lambda d: _cat(d, *_NOMINAL)))
                ):
                    yield k
        for k in kids:
            only = _only(k)
            if k.label == "S" and only is not None and only.label in _PP_OR_TMP:
                yield k
    if label in _ANY_PP:
        for k in kids:
            if k.label in _ANY_PP and not _lab(_prev(k), "IN", "VBG", "VBN", "TO"):
                yield k
    if label in ("S", "SINV") and _kid(t, lambda c: c.label in ("VP", "S")):
        for k in kids:
            if k.label in ("PP", "PP-TMP") and not _kid(k, lambda c: c.label in ("SBAR", "S")):
                yield k
    if label in ("SBAR", "SBARQ") and _kid(t, lambda c: c.label in ("S", "SQ")):
        yield from _kids(t, lambda c: bool(re.match(r"(WH)?PP", c.label)))
    if _cat(t, "NP"):
        for k in kids:
            if _cat(k, "UCP", "PRN") and _cat(hk(k), "PP"):
                yield k
    if label == "SBARQ":
        for wh in kids:
            if wh.label != "WHNP":
                continue
            right = _right(wh)
            for v in right:
                if not _copula(v):
                    continue
                for adj in _right(v):
                    if (
                        adj.label == "ADJP"
                        and _kid(
                            adj,
                            lambda p: p.label == "PP" and _only_child_is(p, "IN"),
                        )
                        and any(
                            n.label == "NP" and any(a is adj for a in _right(n)) for n in _right(v)
                        )
                    ):
                        yield wh
            if any(
                (r.label == "VP" and _kid(r, _bare_in_pp))
                or (r.label == "SQ" and _kid(r, lambda v: v.label == "VP" and _kid(v, _bare_in_pp)))
                for r in right
            ):
                yield wh


def _bare_in_pp(n: Node) -> bool:
    only = _only(n)
    return n.label == "PP" and only is not None and only.label == "IN"


# --- the table -----------------------------------------------------------------------------------


def _any(label: str) -> bool:
    return True


def _among(labels: Iterable[str]) -> Callable[[str], bool]:
    wanted = frozenset(labels)
    return lambda label: label in wanted


def _matching(pattern: str) -> Callable[[str], bool]:
    compiled = re.compile(pattern)
    return lambda label: compiled.fullmatch(label) is not None


#: (name, CoreNLP's parent relation, which phrase labels the rules are tried at, the rules), in
#: CoreNLP's order. The parent decides which label wins when several rules relate one pair.
RELATIONS: tuple[tuple[str, str | None, Callable[[str], bool], Rule], ...] = (
    ("aux", "dep", _among({"VP", "SQ", "SINV", "CONJP"}), _aux),
    ("auxpass", "aux", _among({"VP", "SQ", "SINV"}), _auxpass),
    ("cop", "aux", _among({"VP", "SQ", "SINV", "SBARQ"}), _cop),
    (
        "conj",
        "dep",
        _among(
            _forms("NP", wh=True, suffixes=_TA)
            | _forms("UCP", suffixes=_TA)
            | {"VP", "ADJP", "PP", "QP", "ADVP", "S", "NX", "SBAR", "SBARQ", "SINV", "SQ", "JJP"}
            | {"NML", "RRC", "PCONJP"}
        ),
        _conj,
    ),
    ("cc", "dep", _any, _cc),
    ("punct", "dep", _any, _punct),
    ("nsubj", "subj", _among({"S", "SQ", "SBARQ", "SINV", "SBAR", "PRN"}), _nsubj),
    ("nsubjpass", "nsubj", _among({"S", "SQ"}), _nsubjpass),
    ("csubj", "subj", _among({"S"}), _csubj),
    ("csubjpass", "csubj", _among({"S"}), _csubjpass),
    ("dobj", "obj", _among({"VP", "SQ", "SBAR", "SBARQ"}), _dobj),
    ("iobj", "obj", _among({"VP"}), _iobj),
    ("nmod", "mod", _any, _nmod),
    ("ccomp", "comp", _matching(r"VP|SINV|S|ADJP|ADVP|NP(-.*)?"), _ccomp),
    ("xcomp", "comp", _among({"VP", "ADJP", "SINV"}), _xcomp),
    ("mark", "mod", _among({"SBAR", "SBAR-TMP", "VP", "PP", "PP-TMP", "PP-ADV"}), _mark),
    ("rel", "comp", _among({"SBAR", "SBARQ"}), _rel),
    ("expl", "dep", _among({"S", "SQ", "SINV"}), _expl),
    ("advcl", "mod", _among({"VP", "S", "SQ", "SINV", "SBARQ", "NP", "ADVP", "ADJP"}), _advcl),
    ("nmod:tmod", "nmod", _among({"VP", "S", "ADJP", "PP", "SBAR", "SBARQ", "NP", "RRC"}), _tmod),
    ("acl:relcl", "mod", _matching(r"(WH)?(NP|NML|ADVP)(-.*)?"), _relcl_all),
    ("nummod", "mod", _among(NPISH | {"NML", "NX", "ADJP", "WHADJP", "QP"}), _nummod),
    ("amod", "mod", _among(_AMOD_HOSTS | {"ADJP"}), _amod),
    (
        "compound",
        "mod",
        _among(_COMPOUND_HOSTS | _forms("ADVP", "ADJP", "QP", wh=True, suffixes=_TA)),
        _compound,
    ),
    ("appos", "mod", _among(NPISH | {"FRAG"}), _appos),
    ("acl", "mod", _matching(r"WHNP|WHNP-TMP|WHNP-ADV|NP(-[A-Z]+)?|NML|NX"), _acl),
    (
        "advmod",
        "mod",
        _among(
            {"VP", "ADJP", "WHADJP", "ADVP", "WHADVP", "S", "SBAR", "SINV", "SQ", "SBARQ", "XS"}
            | _forms("PP", "NP", wh=True, suffixes=_TA)
            | {"RRC", "CONJP", "JJP", "QP"}
        ),
        _advmod,
    ),
    (
        "neg",
        "advmod",
        _among(
            {"VP", "ADJP", "S", "SBAR", "SINV", "SQ", "NP", "NP-TMP", "NP-ADV", "FRAG", "CONJP"}
            | {"PP", "NAC", "NML", "NX", "ADVP", "WHADVP"}
        ),
        _neg,
    ),
    ("mwe", "mod", _among({"MWE"}), _mwe),
    ("det", "mod", _among(NPISH | {"NAC", "NML", "NX", "X", "ADVP", "ADJP"}), _det),
    ("det:predet", "mod", _among(_COMPOUND_HOSTS), _predet),
    (
        "cc:preconj",
        "mod",
        _among(
            {"S", "VP", "ADJP", "PP", "ADVP", "NX", "NML", "SBAR"}
            | _forms("UCP", suffixes=_TA)
            | _forms("NP", suffixes=_TA)
        ),
        _preconj,
    ),
    ("nmod:poss", "mod", _matching(r"(WH)?(NP|ADJP|INTJ|PRN|NAC|NX|NML)(-.*)?"), _poss),
    ("case", "mod", _matching(r"(WH)?(PP.*|SBARQ|NP|NML|ADVP)(-TMP|-ADV)?"), _case),
    ("compound:prt", "mod", _among({"VP", "ADJP"}), _prt),
    ("nmod:npmod", "mod", _matching(r"VP|(WH)?(NP|ADJP|ADVP|PP|QP)(-TMP|-ADV)?"), _npmod),
    ("parataxis", "dep", _among({"S", "VP", "FRAG", "NP"}), _parataxis),
    ("discourse", "mod", _any, _discourse),
    ("list", "dep", _among({"FRAG"}), _list),
    ("prep", "comp", _among({"VP", "ADJP"}), _prep),
)

#: The relation hierarchy (child -> parent) for relations with no rules of their own.
PARENTS: dict[str, str | None] = {
    "dep": None,
    "arg": "dep",
    "subj": "arg",
    "comp": "arg",
    "obj": "comp",
    "mod": "dep",
    **{name: parent for name, parent, _, _ in RELATIONS},
}


def is_ancestor(upper: str, lower: str) -> bool:
    """``upper`` is ``lower`` or one of its ancestors in CoreNLP's relation hierarchy."""
    node: str | None = lower
    while node is not None:
        if node == upper:
            return True
        node = PARENTS.get(node)
    return False


@functools.cache
def _rules_at(label: str) -> tuple[tuple[str, Rule], ...]:
    """The relations (name, rules) tried at a phrase labelled ``label``, in CoreNLP's order
    (worked out once per label, not once per phrase)."""
    return tuple((name, rule) for name, _parent, applies, rule in RELATIONS if applies(label))


def related(t: Node) -> list[tuple[str, Node]]:
    """Every (relation, node) pair the rules find at phrase ``t``, in CoreNLP's order."""
    out: list[tuple[str, Node]] = []
    for name, rule in _rules_at(t.label):
        seen: set[int] = set()  # a rule may reach one node twice; it relates it once
        for target in rule(t):
            if id(target) not in seen:
                seen.add(id(target))
                out.append((name, target))
    return out
