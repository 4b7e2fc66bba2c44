"""Head choice for the conversion to Universal Dependencies (CoreNLP 3.6.0's semantic heads).

CoreNLP's English UD converter chooses heads with a Collins-style table of rules per phrase
category, changed so that content words head their phrases: a noun heads a prepositional
phrase, the verb after its auxiliaries heads the clause, a copula's complement heads the
sentence. The tables below are that choice written as data; the exceptions (auxiliaries,
copulas, "not only"-style conjunction phrases, the first of coordinated heads) are code.

A rule is a direction and a list of categories. ``left``/``right`` try each category in turn
and take its leftmost/rightmost child; ``leftdis``/``rightdis`` take the first child from that
side that is any of them; ``leftexcept``/``rightexcept`` the first that is none of them. When
the last rule finds nothing, the first (or last) child that is not punctuation heads.
"""

from __future__ import annotations

from capeval_core.spice.pcfg.trees import basic_category as basic
from capeval_core.spice.pcfg.ud_nodes import PUNCT_TAGS, Node, word_set


def _rules(*rules: str) -> tuple[tuple[str, ...], ...]:
    """Rules written as "direction CAT CAT ..." strings."""
    return tuple(tuple(r.split()) for r in rules)


_NP = _rules(
    "rightdis NN NNP NNPS NNS NX NML JJR WP",
    "left NP PRP",
    "rightdis $ ADJP FW CD JJ QP",
    "rightdis JJS DT WDT NML PRN RB RBR ADVP",
    "left POS",
)
_PP = _rules("left NP S SBAR SBARQ ADVP PP VP ADJP FRAG UCP PRN", "right")
_VP = _rules("left TO VBD VBN MD VBZ VB VBG VBP VP AUX AUXG ADJP JJP NN NNS JJ NP NNP")
_ROOT = _rules("left S SQ SINV SBAR FRAG")

RULES: dict[str, tuple[tuple[str, ...], ...]] = {
    "ADJP": _rules(
        "left $",
        "rightdis NNS NN NNP JJ QP VBN VBG",
        "left ADJP",
        "rightdis JJP JJR JJS DT RB RBR CD IN VBD",
        "left ADVP NP",
    ),
    "JJP": _rules("left NNS NN $ QP JJ VBN VBG ADJP JJP JJR NP JJS DT FW RBR RBS SBAR RB"),
    "ADVP": _rules(
        "rightdis RB RBR RBS JJ JJR JJS",
        "rightdis RP DT NN CD NP VBN NNP CC FW NNS ADJP NML",
        "left",
    ),
    "CONJP": _rules("right JJ RB", "left CC IN", "right VB"),
    "FRAG": _rules("left IN", "right RB", "left NP", "left ADJP ADVP FRAG S SBAR VP"),
    "INTJ": _rules("rightdis NNS NN NNP", "left"),
    "LST": _rules("right LS :"),
    "NAC": _rules("left NN NNS NML NNP NNPS NP NAC EX $ CD QP PRP VBG JJ JJS JJR ADJP JJP FW"),
    "PP": _PP,
    "WHPP": _PP,
    "PRN": _rules("left VP SQ S SINV SBAR NP ADJP PP ADVP INTJ WHNP NAC VBP JJ NN NNP"),
    "PRT": _rules("right RP"),
    "QP": _rules("right $ NNS NN CD JJ PDT DT IN RB NCD QP JJR JJS"),
    "RRC": _rules("left RRC", "right VP ADJP JJP NP PP ADVP"),
    "S": _rules("left VP S FRAG SBAR ADJP UCP TO", "right NP"),
    "SBAR": _rules("left S SQ SINV SBAR FRAG VP WHNP WHPP WHADVP WHADJP IN DT"),
    "SBARQ": _rules("left SQ S SINV SBARQ FRAG SBAR"),
    "SINV": _rules("left VBZ VBD VBP VB MD VBN VP S SINV ADJP JJP NP"),
    "SQ": _rules("left VP SQ ADJP VB VBZ VBD VBP MD AUX AUXG"),
    "UCP": _rules("left"),
    "VP": _VP,
    "VB": _VP,
    "WHADJP": _rules("left ADJP JJ JJR WP", "right RB", "right"),
    "WHADVP": _rules("rightdis WRB WHADVP RB JJ"),
    "WHNP": _rules(
        "rightdis NN NNP NNPS NNS NX NML JJR WP",
        "left WHNP NP",
        "rightdis $ ADJP PRN FW",
        "right CD",
        "rightdis JJ JJS RB QP",
        "left WHPP WHADJP WP$ WDT",
    ),
    "X": _rules("right S VP ADJP JJP NP SBAR PP X"),
    "NP": _NP,
    "NX": _NP,
    "NML": _NP,
    "POSSP": _rules("right POS"),
    "ROOT": _ROOT,
    "TOP": _ROOT,
    "TYPO": _rules("left NN NP NML NNP NNPS TO VBD VBN MD VBZ VB VBG VBP VP ADJP JJP FRAG"),
    "ADV": _rules("right RB RBR RBS FW ADVP TO CD JJR JJ IN NP NML JJS NN"),
    "EDITED": _rules("left"),
    "META": _rules("left"),
    "XS": _rules("right IN"),
    "EMBED": _rules("right INTJ"),
    "MWE": _rules("left"),
    "PCONJP": _rules("left"),
}

# Word lists of the auxiliary and copula tests (English facts; CoreNLP adds web-text typos).
AUXILIARIES = word_set(
    "will wo shall sha may might should would can could ca must 'll ll -ll cold has have had "
    "having 've ve v of hav hvae as get gets getting got gotten do does did 'd d du to 2 na a "
    "ot ta the too"
)
COPULAS = word_set("be being been am are r is ai was were 'm m 're 's s `s art ar wase")
BE_GET = COPULAS | word_set("get getting gets got gotten")
_VERB_TAGS = word_set("TO MD VB VBD VBP VBZ VBG VBN AUX AUXG")
_AUX_ONLY_TAGS = word_set("TO MD AUX AUXG")
_PARTICIPLE_TAGS = frozenset({"VBN", "VBG", "VBD"})


class UnknownCategory(ValueError):
    """A phrase label with no head rule (CoreNLP raises here too)."""


def _locate(kids: list[Node], rule: tuple[str, ...], last_resort: bool) -> Node | None:
    how, cats = rule[0], rule[1:]
    idx = -1
    labels = [basic(k.label) for k in kids]
    if how == "left":
        idx = next((i for c in cats for i, lab in enumerate(labels) if lab == c), -1)
    elif how == "right":
        idx = next((i for c in cats for i in range(len(labels) - 1, -1, -1) if labels[i] == c), -1)
    elif how == "leftdis":
        idx = next((i for i, lab in enumerate(labels) if lab in cats), -1)
    elif how == "rightdis":
        idx = next((i for i in range(len(labels) - 1, -1, -1) if labels[i] in cats), -1)
    elif how == "leftexcept":
        idx = next((i for i, lab in enumerate(labels) if lab not in cats), -1)
    elif how == "rightexcept":
        idx = next((i for i in range(len(labels) - 1, -1, -1) if labels[i] not in cats), -1)
    if idx < 0:
        if not last_resort:
            return None
        # nothing named matched: the first non-punctuation child from the rule's side
        if how.startswith("left"):
            fallback = ("leftexcept", *sorted(PUNCT_TAGS))
            found = _locate(kids, fallback, False)
            return found if found is not None else kids[0]
        fallback = ("rightexcept", *sorted(PUNCT_TAGS))
        found = _locate(kids, fallback, False)
        return found if found is not None else kids[-1]
    return kids[_skip_conjunction(idx, kids)]


def _skippable(node: Node, was_interjection: bool) -> bool:
    if node.pre and (node.label in PUNCT_TAGS or (not was_interjection and node.label == "UH")):
        return True
    return node.label == "INTJ" and not was_interjection


def _previous_conjunct(idx: int, kids: list[Node], was_interjection: bool) -> int:
    seen_separator = False
    new = idx
    while new >= 0:
        new -= 1
        if new < 0:
            return new
        label = basic(kids[new].label)
        if label in (",", ":"):
            seen_separator = True
        elif (
            kids[new].pre and (label in PUNCT_TAGS or (not was_interjection and label == "UH"))
        ) or (label == "INTJ" and not was_interjection):
            continue
        else:
            if not seen_separator:
                new = -1
            break
    return new


def _skip_conjunction(idx: int, kids: list[Node]) -> int:
    """A head found right after a conjunction moves to the first conjunct (CoreNLP's fix-up)."""
    if idx < 2 or basic(kids[idx - 1].label) not in ("CC", "CONJP"):
        return idx
    was_interjection = basic(kids[idx].label) == "UH"
    new = idx - 2
    while new >= 0 and _skippable(kids[new], was_interjection):
        new -= 1
    while new >= 2:
        previous = _previous_conjunct(new, kids, was_interjection)
        if previous < 0:
            break
        new = previous
    return new if new >= 0 else idx


def _aux_like(node: Node, vocabulary: frozenset[str], tag_alone: bool) -> bool:
    if not node.pre:
        return False
    if tag_alone and node.label in _AUX_ONLY_TAGS:
        return True
    return node.label in _VERB_TAGS and node.word.lower() in vocabulary


def _has_aux(kids: list[Node], vocabulary: frozenset[str], tag_alone: bool) -> bool:
    return any(_aux_like(k, vocabulary, tag_alone) for k in kids)


def _participle_kid(node: Node) -> bool:
    return any(k.pre and k.label in _PARTICIPLE_TAGS for k in node.kids)


def _passive_or_progressive(kids: list[Node]) -> bool:
    # CoreNLP's test looks one level into each VP child for a participle; for a phrase inside
    # that VP it reads the VP's own label where it means the inner one, so every inner phrase
    # counts as a VP conjunct whose participle a later CC can confirm. Kept as it behaves.
    found_aux = found_vp = False
    for kid in kids:
        if _aux_like(kid, BE_GET, False):
            found_aux = True
        elif kid.phrasal and kid.label.startswith("VP"):
            participle_in_vp = False
            for inner in kid.kids:
                if inner.pre:
                    if inner.label in _PARTICIPLE_TAGS:
                        found_vp = True
                        break
                    if inner.label == "CC" and participle_in_vp:
                        found_vp = True
                        break
                elif inner.phrasal and kid.label == "VP":
                    participle_in_vp = _participle_kid(inner)
        if found_aux and found_vp:
            break
    return found_aux and found_vp


def _tmp_free(node: Node) -> bool:
    """Children the auxiliary rules may pick: no -TMP/-ADV, no VP that only holds a date."""
    if "-TMP" in node.label or "-ADV" in node.label:
        return False
    return not (node.label.startswith("VP") and _bare_temporal_vp(node))


def _bare_temporal_vp(node: Node) -> bool:
    labels = [k.label for k in node.kids]
    if "NP-TMP" not in labels:
        return False
    if any(lab.startswith("V") for lab in labels):
        return False
    return not any(lab in ("NNP", "NN", "NNPS", "NNS", "NP", "JJ", "ADJP", "S") for lab in labels)


def _existential(node: Node, parent: Node | None) -> bool:
    if parent is None:
        return False
    mother = basic(node.label)
    if mother == "VP":
        for kid in parent.kids:
            if kid.label == "VP":
                break
            if "EX" in _tags_below(kid):
                return True
        return False
    if mother.startswith("SQ"):
        return any(
            not kid.label.startswith("VB") and "EX" in _tags_below(kid) for kid in parent.kids
        )
    return False


def _tags_below(node: Node) -> list[str]:
    return [d.label for d in node.walk() if d.pre]


def _wh_question(node: Node, parent: Node | None) -> bool:
    if not node.label.startswith("SQ") or parent is None or parent.label != "SBARQ":
        return False
    return any(k.label.startswith("WH") for k in parent.kids)


def _conjp_head(node: Node) -> Node | None:
    kids = node.kids
    for i, kid in enumerate(kids[:-1]):
        nxt = kids[i + 1]
        if kid.label != "CC" or not kid.pre:
            continue
        w = kid.word.lower()
        if w in ("but", "and") and nxt.label == "RB" and nxt.pre and nxt.word.lower() == "not":
            return nxt
    for i, kid in enumerate(kids[:-1]):
        nxt = kids[i + 1]
        if kid.label == "CC" and kid.pre and kid.word.lower() == "but":
            if _only_word(nxt, "RB", ("also", "rather")):
                return nxt
            if (
                nxt.label == "ADVP"
                and len(nxt.kids) == 1
                and _only_word(nxt.kids[0], "RB", ("also", "rather"))
            ):
                return nxt
    for i, kid in enumerate(kids[:-1]):
        nxt = kids[i + 1]
        if kid.label == "CC" and kid.pre and kid.word.lower() == "and":
            if _only_word(nxt, "RB", ("yet",)):
                return nxt
            if (
                nxt.label == "ADVP"
                and len(nxt.kids) == 1
                and _only_word(nxt.kids[0], "RB", ("yet",))
            ):
                return nxt
    return None


def _only_word(node: Node, tag: str, forms: tuple[str, ...]) -> bool:
    return node.label == tag and node.pre and node.word.lower() in forms


def _copula_question_head(node: Node) -> Node | None:
    """Heads of "what is wrong", "who am I", "such a idea this was" (no copula heads)."""
    kids = node.kids
    if node.label == "SBARQ":
        for i, wh in enumerate(kids):
            if wh.label != "WHNP":
                continue
            for j in range(i + 1, len(kids)):
                verb = kids[j]
                if verb.label.startswith("VB") and verb.pre and verb.word.lower() in COPULAS:
                    for k in range(j + 1, len(kids)):
                        if kids[k].label == "ADJP":
                            return kids[k]
        for i, wh in enumerate(kids):
            if wh.label != "WHNP":
                continue
            for j in range(i + 1, len(kids) - 1):
                verb = kids[j]
                if (
                    verb.label.startswith("VB")
                    and verb.pre
                    and verb.word.lower() in COPULAS
                    and kids[j + 1].label == "NP"
                    and not any(k.label == "ADJP" for k in kids[j + 1 :])
                ):
                    return wh
    if node.label == "SINV":
        for i, first in enumerate(kids):
            if first.label != "NP":
                continue
            for j in range(i + 1, len(kids)):
                if kids[j].label != "NP":
                    continue
                for k in range(j + 1, len(kids)):
                    vp = kids[k]
                    if vp.label == "VP" and any(
                        (c.label.startswith("VB") or c.label.startswith("AUX"))
                        and c.pre
                        and c.word.lower() in COPULAS
                        for c in vp.kids
                    ):
                        return first
    return None


def head_child(node: Node, parent: Node | None = None) -> Node:
    """The child of ``node`` that heads it (``parent``: the node's parent, for "there is")."""
    if node.leaf:
        raise ValueError("a word has no head child")
    kids = node.kids
    if len(kids) == 1:
        return kids[0]
    mother = basic(node.label)
    if mother == "CONJP":
        found = _conjp_head(node)
        if found is not None:
            return found
    if mother in ("SBARQ", "SINV"):
        found = _copula_question_head(node)
        if found is not None:
            return found
    if mother in ("VP", "SQ", "SINV"):
        allowed = None
        if _has_aux(kids, AUXILIARIES, True) or _passive_or_progressive(kids):
            rule = ("left", "VP", "ADJP") if _has_aux(kids, COPULAS, True) else ("left", "VP")
            allowed = [k for k in kids if _tmp_free(k)]
            found = _locate(allowed, rule, False) if allowed else None
            if found is not None:
                return found
        if (
            _has_aux(kids, COPULAS, False)
            and not _existential(node, parent)
            and not _wh_question(node, parent)
        ):
            side = "right" if mother == "SQ" else "left"
            rule = (side, "VP", "ADJP", "NP", "UCP", "PP", "WHADJP", "WHNP")
            if allowed is None:
                allowed = [k for k in kids if _tmp_free(k)]
            found = _locate(allowed, rule, False) if allowed else None
            if found is not None and mother == "SQ" and found.label.startswith("NP"):
                before = kids[: next(i for i, k in enumerate(kids) if k is found)]
                if not any(k.label.startswith("NP") for k in before):
                    found = None
            if found is not None:
                return found
    rules = RULES.get(mother)
    if rules is None:
        raise UnknownCategory(f"no head rule for category {mother!r} in {node!r}")
    for i, rule in enumerate(rules):
        found = _locate(kids, rule, i == len(rules) - 1)
        if found is not None:
            return found
    raise AssertionError("the last rule always finds a head")


def percolate(root: Node) -> None:
    """Set ``head`` (the head word's leaf) on every node, children first."""

    def visit(node: Node) -> None:
        if node.leaf:
            node.head = node
            return
        for kid in node.kids:
            visit(kid)
        node.head = head_child(node, node.parent).head

    visit(root)


def highest_with_same_head(node: Node) -> Node:
    """The top of the chain of ancestors that share ``node``'s head word."""
    while node.parent is not None and node.parent.head is node.head:
        node = node.parent
    return node
