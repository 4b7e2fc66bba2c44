"""The reshaping CoreNLP 3.6.0 applies to a parse before it reads dependencies off it.

The English UD converter first normalises the phrase-structure tree: it strips function tags
(keeping NP-TMP), groups multi-word prepositions ("such as", "because of") under an MWE node,
renames UCP phrases, splits flat coordinated noun phrases into conjuncts, restructures
quantifier phrases, removes unary X-over-X chains, and moves a few adverbs ("not", "then")
into the phrase they modify. Each step below does what the corresponding step of CoreNLP's
``CoordinationTransformer`` does, in the same order, written as plain tree edits; where a step
searches the tree it visits nodes in the same order CoreNLP's does, since that decides which
of several candidate spots is edited first.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from capeval_core.spice.pcfg.trees import basic_category as basic
from capeval_core.spice.pcfg.ud_nodes import Node, word_set

Test = Callable[[Node], bool]


# --- small edit operations -----------------------------------------------------------------------


def _wrap(parent: Node, first: Node, last: Node, label: str) -> Node:
    """Put the children of ``parent`` from ``first`` to ``last`` under a new ``label`` node."""
    i, j = first.position(), last.position()
    i, j = min(i, j), max(i, j)
    new = Node(label, parent.kids[i : j + 1])
    parent.set_kids([*parent.kids[:i], new, *parent.kids[j + 1 :]])
    return new


def _detach(node: Node) -> None:
    parent = node.parent
    assert parent is not None
    parent.kids.pop(node.position())
    node.parent = None


def _insert(parent: Node, index: int, node: Node) -> None:
    parent.kids.insert(index, node)
    node.parent = parent


def _move_after(node: Node, anchor: Node) -> None:
    """Move ``node`` to be the sister right after ``anchor``."""
    _detach(node)
    parent = anchor.parent
    assert parent is not None
    _insert(parent, anchor.position() + 1, node)


def _splice(node: Node) -> None:
    """Replace ``node`` by its children."""
    parent = node.parent
    assert parent is not None
    i = node.position()
    parent.set_kids([*parent.kids[:i], *node.kids, *parent.kids[i + 1 :]])


class _Pre:
    """A preterminal-like test: label in ``tags`` with a word child among ``forms`` (in any
    case unless ``case``). ``words``, the forms in lower case: a tree with none of them among
    its labels has no node that passes."""

    __slots__ = ("case", "tags", "wanted", "words")

    def __init__(self, tags: tuple[str, ...], forms: tuple[str, ...], case: bool = False):
        self.tags = tags
        self.case = case
        self.words = frozenset(f.lower() for f in forms)
        self.wanted = frozenset(forms) if case else self.words

    def __call__(self, n: Node) -> bool:
        if n.label not in self.tags:
            return False
        if self.case:
            return any(k.label in self.wanted for k in n.kids)
        return any(k.label.lower() in self.wanted for k in n.kids)


class _Tree:
    """The tree being reshaped and its phrases and tags in search order (parents first, left
    to right; no step edits at a word). Most of the forty-odd searches find nothing, so the
    list is made once and again only after an edit, not walked afresh for every search."""

    def __init__(self, root: Node) -> None:
        self.root = root
        self._nodes: list[Node] | None = None

    def nodes(self) -> list[Node]:
        if self._nodes is None:
            self._nodes = [n for n in self.root.walk() if n.kids]
        return self._nodes

    def edited(self) -> None:
        self._nodes = None


def _first_match(tree: _Tree, find: Callable[[Node], tuple | None]) -> tuple | None:
    for node in tree.nodes():
        found = find(node)
        if found is not None:
            return found
    return None


def _repeat(tree: _Tree, find: Callable[[Node], tuple | None], edit: Callable[..., None]) -> None:
    """Edit at the first match, search again from the top, until nothing matches."""
    while (found := _first_match(tree, find)) is not None:
        edit(*found)
        tree.edited()


# --- 1. labels -----------------------------------------------------------------------------------

_KEEP_TMP = re.compile(r"(NP|UCP).*-TMP.*")
_KEEP_ADV = re.compile(r"(NP|UCP).*-ADV.*")


def _clean_labels(tree: _Tree) -> None:
    if tree.root.label == "TOP":
        tree.root.label = "ROOT"
    for node in tree.nodes():
        label = node.label
        suffix = (
            "-TMP" if _KEEP_TMP.fullmatch(label) else "-ADV" if _KEEP_ADV.fullmatch(label) else ""
        )
        node.label = basic(label) + suffix


def _strip_empty(tree: _Tree) -> bool:
    """Remove empty elements (-NONE-) and the phrases they leave empty; False if nothing is
    left."""
    root = tree.root
    while (empty := next((n for n in root.walk() if n.label == "-NONE-"), None)) is not None:
        tree.edited()
        target = empty
        while True:
            if target is root:
                return False
            parent = target.parent
            assert parent is not None
            _detach(target)
            if parent.kids:
                break
            target = parent
    return True


# --- 2. multi-word expressions -------------------------------------------------------------------


@dataclass(frozen=True)
class _MweSearch:
    """The search for one multi-word expression, and the words it needs: one of each set must
    be among the tree's labels (most trees hold none of the expressions, and are not searched).
    """

    find: Callable[[Node], tuple | None]
    needs: tuple[frozenset[str], ...]

    def possible(self, labels: set[str]) -> bool:
        return all(not need.isdisjoint(labels) for need in self.needs)


def _needs(*words: str) -> tuple[frozenset[str], ...]:
    return tuple(frozenset([w]) for w in words)


def _adjacent_pair(
    parents: tuple[str, ...], first: _Pre, second: Test, second_word: str = ""
) -> _MweSearch:
    """Find ``first`` immediately followed by ``second`` under a node of category ``parents``
    (``second_word``: the word ``second`` needs, when it is not a :class:`_Pre`)."""

    def find(node: Node) -> tuple | None:
        if node.leaf or basic(node.label) not in parents:
            return None
        for a, b in zip(node.kids, node.kids[1:], strict=False):
            if first(a) and second(b):
                return node, a, b, None
        return None

    second_words = second.words if isinstance(second, _Pre) else frozenset([second_word])
    return _MweSearch(find, (first.words, second_words))


def _adjacent_triple(
    parents: tuple[str, ...], first: _Pre, second: _Pre, third: _Pre
) -> _MweSearch:
    def find(node: Node) -> tuple | None:
        if node.leaf or basic(node.label) not in parents:
            return None
        kids = node.kids
        for a, b, c in zip(kids, kids[1:], kids[2:], strict=False):
            if first(a) and second(b) and third(c):
                return node, a, b, c
        return None

    return _MweSearch(find, (first.words, second.words, third.words))


def _as_well_as(node: Node) -> tuple | None:
    if node.leaf or basic(node.label) != "CONJP" or len(node.kids) < 2:
        return None
    a, b, c = node.kids[0], node.kids[1], node.kids[-1]
    if _Pre(("RB",), ("as",))(a) and _Pre(("RB",), ("well",))(b) and _Pre(("IN",), ("as",))(c):
        return node, a, b, c
    return None


def _as_well(node: Node) -> tuple | None:
    if node.leaf or basic(node.label) not in ("ADVP", "CONJP"):
        return None
    a, b = node.kids[0], node.kids[-1]
    if _Pre(("RB",), ("as",))(a) and _Pre(("IN", "RB"), ("well",))(b):
        return node, a, b, None
    return None


def _order_like(n: Node) -> bool:
    if _Pre(("NN", "NP", "RB"), ("order",))(n):
        return True
    return (
        n.label in ("NN", "NP", "RB") and len(n.kids) == 1 and _Pre(("NN",), ("order",))(n.kids[0])
    )


def _between_like(n: Node) -> bool:
    tags = ("IN", "NP", "PP", "RB", "ADVP")
    if _Pre(tags, ("between",))(n):
        return True
    return n.label in tags and len(n.kids) == 1 and _Pre(("IN", "RB"), ("between",))(n.kids[0])


def _better_particle(n: Node) -> bool:
    return (
        basic(n.label) in ("PRT", "ADVP")
        and len(n.kids) == 1
        and _Pre(("RBR",), ("better",), case=True)(n.kids[0])
    )


def _at_least(node: Node) -> tuple | None:
    if node.leaf or basic(node.label) not in ("S", "SQ", "VP", "ADVP", "PP"):
        return None
    for advp in node.kids:
        if basic(advp.label) != "ADVP":
            continue
        nxt = _next(advp)
        if nxt is not None and nxt.label == "RB" and _has_word_re(nxt, r"(?i)(once|twice)"):
            continue
        for a, b in zip(advp.kids, advp.kids[1:], strict=False):
            if _Pre(("IN", "RB"), ("at",))(a) and _Pre(("JJS", "RBS"), ("least",))(b):
                return advp, a, b, None
    return None


def _has_word_re(n: Node, pattern: str) -> bool:
    return any(re.search(pattern, k.label) for k in n.kids)


def _next(n: Node) -> Node | None:
    if n.parent is None:
        return None
    i = n.position()
    kids = n.parent.kids
    return kids[i + 1] if i + 1 < len(kids) else None


_MWE_SEARCHES: tuple[_MweSearch, ...] = (
    _MweSearch(_as_well_as, _needs("as", "well")),
    _MweSearch(_as_well, _needs("as", "well")),
    _adjacent_pair(("PP",), _Pre(("JJ",), ("such",)), _Pre(("IN",), ("as",))),
    _adjacent_pair(("PP",), _Pre(("JJ", "IN"), ("due",)), _Pre(("IN", "TO"), ("to",))),
    _adjacent_pair(
        ("PP", "CONJP"),
        _Pre(("IN", "RB"), ("because", "instead")),
        _Pre(("IN",), ("of",), case=True),
    ),
    _adjacent_pair(("ADVP", "SBAR"), _Pre(("IN", "RB"), ("in",)), _Pre(("NN",), ("case",))),
    _adjacent_pair(("ADVP", "PP"), _Pre(("IN", "RB"), ("of",)), _Pre(("NN", "RB"), ("course",))),
    _adjacent_pair(("SBAR", "PP"), _Pre(("IN", "RB"), ("in",)), _order_like, "order"),
    _adjacent_pair(
        ("PP", "CONJP", "SBAR"), _Pre(("IN", "RB"), ("rather",)), _Pre(("IN",), ("than",))
    ),
    _adjacent_triple(
        ("CONJP",),
        _Pre(("IN", "RB"), ("not",)),
        _Pre(("TO",), ("to",)),
        _Pre(("VB", "RB"), ("mention",)),
    ),
    _adjacent_pair(
        ("PP", "SBAR"), _Pre(("JJ", "IN", "RB"), ("so",)), _Pre(("IN", "TO"), ("that",))
    ),
    _adjacent_pair(("SBAR",), _Pre(("IN", "RB"), ("as",)), _Pre(("IN",), ("if",))),
    _adjacent_pair(("PP",), _Pre(("JJ", "RB"), ("prior",)), _Pre(("TO", "IN"), ("to",))),
    _adjacent_pair(("PP",), _Pre(("IN",), ("as",)), _Pre(("TO", "IN"), ("to",))),
    _adjacent_pair(("ADVP",), _Pre(("RB", "NN"), ("kind",)), _Pre(("IN", "RB"), ("of",))),
    _adjacent_triple(
        ("SBAR",),
        _Pre(("IN", "RB"), ("whether",)),
        _Pre(("CC",), ("or",)),
        _Pre(("RB",), ("not",)),
    ),
    _adjacent_triple(
        ("CONJP",),
        _Pre(("IN",), ("as",)),
        _Pre(("VBN",), ("opposed",)),
        _Pre(("TO", "IN"), ("to",)),
    ),
    _adjacent_pair(
        ("ADVP", "CONJP"), _Pre(("VB", "RB", "VBD"), ("let",)), _Pre(("RB", "JJ"), ("alone",))
    ),
    _adjacent_pair(("ADVP", "PP"), _Pre(("IN", "RB"), ("in",)), _between_like, "between"),
    _adjacent_pair(
        ("ADVP", "QP", "ADJP"), _Pre(("DT", "RB"), ("all",)), _Pre(("CC", "RB", "IN"), ("but",))
    ),
    _adjacent_pair(
        ("ADVP", "INTJ"), _Pre(("NN", "DT", "RB"), ("that",)), _Pre(("VBZ", "RB"), ("is",))
    ),
    _adjacent_pair(("WHADVP",), _Pre(("WRB",), ("how",)), _Pre(("VB",), ("come",))),
    _adjacent_pair(("VP",), _Pre(("VBD",), ("had", "'d"), case=True), _better_particle, "better"),
    _adjacent_pair(
        ("QP", "XS"), _Pre(("JJR", "RBR", "IN"), ("more", "less")), _Pre(("IN",), ("than",))
    ),
    _adjacent_pair(("QP",), _Pre(("JJR", "RBR", "IN"), ("up",)), _Pre(("IN", "TO"), ("to",))),
    _MweSearch(_at_least, _needs("at", "least")),
)


def _make_mwe(parent: Node, first: Node, second: Node, third: Node | None) -> None:
    _wrap(parent, first, second, "MWE")
    if third is not None:
        _move_after(third, second)


def _according_to(node: Node) -> tuple | None:
    if node.label != "PP":
        return None
    for a, b in zip(node.kids, node.kids[1:], strict=False):
        if _Pre(("VBG",), ("according",))(a) and b.label == "PP":
            for to in b.kids:
                if _Pre(("TO", "IN"), ("to",), case=True)(to):
                    return a, b, to
    return None


def _apply_according_to(according: Node, inner_pp: Node, to: Node) -> None:
    parent = according.parent
    assert parent is not None
    mwe = _wrap(parent, according, according, "MWE")
    _detach(to)
    _insert(mwe, 1, to)
    _splice(inner_pp)


def _but_also(node: Node) -> tuple | None:
    if node.label != "CONJP" or node.parent is None:
        return None
    cc = next((k for k in node.kids if _Pre(("CC",), ("but",), case=True)(k)), None)
    rb = next((k for k in node.kids if _Pre(("RB",), ("also",), case=True)(k)), None)
    if cc is None or rb is None:
        return None
    nxt = _next(node)
    if nxt is not None and not any(k.kids for k in nxt.kids):
        nxt = None
    return node, cc, rb, nxt


def _apply_but_also(conjp: Node, cc: Node, rb: Node, nxt: Node | None) -> None:
    _move_after(cc, conjp)
    _move_after(rb, cc)
    if nxt is not None:
        _detach(rb)
        _insert(nxt, 0, rb)
    parent = rb.parent
    assert parent is not None
    _wrap(parent, rb, rb, "ADVP")
    _detach(conjp)


def _at_superlative(node: Node) -> tuple | None:
    if node.leaf or basic(node.label) not in ("ADVP", "QP"):
        return None
    for a, b in zip(node.kids, node.kids[1:], strict=False):
        if _Pre(("IN", "RB"), ("at",))(a) and b.label in ("JJS", "RBS"):
            return node, a, b
    return None


def _apply_at_superlative(parent: Node, at: Node, sup: Node) -> None:
    at.label = "IN"
    advp = _wrap(parent, at, at, "ADVP")
    _detach(sup)
    _insert(advp, 1, sup)
    _wrap(advp, sup, sup, "NP")


def _at_all(node: Node) -> tuple | None:
    if node.leaf or basic(node.label) != "ADVP":
        return None
    for a, b in zip(node.kids, node.kids[1:], strict=False):
        if _Pre(("RB", "IN"), ("at",))(a) and _Pre(("RB", "DT"), ("all",))(b):
            return node, a, b
    return None


def _apply_at_all(head: Node, at: Node, everything: Node) -> None:
    head.label = "PP"
    at.label = "IN"
    _wrap(head, everything, everything, "NP")


def _multiword(tree: _Tree) -> None:
    # every label in lower case, words and categories: until the searches below are done the
    # only edits add MWE nodes, so a search whose words are not here finds nothing
    labels = {n.label.lower() for n in tree.root.walk()}
    for search in _MWE_SEARCHES:
        if search.possible(labels):
            _repeat(tree, search.find, _make_mwe)
    _repeat(tree, _according_to, _apply_according_to)
    _repeat(tree, _but_also, _apply_but_also)
    _repeat(tree, _at_superlative, _apply_at_superlative)
    _repeat(tree, _at_all, _apply_at_all)


def _flat_prep_cc(node: Node) -> tuple | None:
    """ "to and from": PP starting preposition, conjunction, preposition."""
    if node.label != "PP" or len(node.kids) < 3:
        return None
    p1, cc, p2 = node.kids[0], node.kids[1], node.kids[2]
    if p1.label in ("IN", "TO") and cc.label == "CC" and p2.label in ("IN", "TO"):
        return node, p1, cc, p2
    return None


def _apply_prep_cc(pp: Node, p1: Node, cc: Node, p2: Node) -> None:
    _wrap(pp, p1, cc, "PCONJP")
    _move_after(p2, cc)


# --- 3. UCP renaming -----------------------------------------------------------------------------


def _ucp_category(node: Node) -> str | None:
    """The category a UCP is renamed to (from its first children), or None to keep it."""
    kids = node.kids
    first = kids[0].label
    second = kids[1].label if len(kids) > 1 else None

    def adj_like(label: str | None) -> bool:
        return label is not None and label.startswith(("JJ", "ADJP"))

    def noun_like(label: str | None) -> bool:
        return label is not None and label.startswith("N")

    last = kids[-1]
    older = last.label == "ADJP" and any(_Pre(("JJR",), ("younger", "older"))(k) for k in last.kids)
    rest = node.label[3:]
    if adj_like(first) or (first == "DT" and adj_like(second)) or older:
        return "ADJP" + rest
    if noun_like(first) or (first == "DT" and noun_like(second)):
        return "NP" + rest
    if first.startswith("ADVP"):
        return "ADVP"
    return None


def _renamed_ucp(node: Node) -> tuple | None:
    if node.label.startswith("UCP"):
        category = _ucp_category(node)
        if category is not None:
            return node, category
    return None


def _rename(node: Node, label: str) -> None:
    node.label = label


def _ucp(tree: _Tree) -> None:
    """Rename UCPs by their first child; a renamed child can make its UCP parent qualify, so
    search again from the top after each renaming (as CoreNLP's rewrite loop does)."""
    _repeat(tree, _renamed_ucp, _rename)


# --- 4. flat coordinated noun phrases ------------------------------------------------------------


def _head_tag(node: Node) -> str:
    return "ADJP" if node.label.startswith("JJ") else "NP"


def _flat_cc(node: Node) -> tuple[Node, int] | None:
    """A conjunction tag inside a flat NP with at least two more children after it."""
    if not node.pre or not node.label.startswith("CC"):
        return None
    parent = node.parent
    if parent is None or not parent.label.startswith("NP"):
        return None
    kids = parent.kids
    i = node.position()
    if (
        len(kids) > i + 2
        and not any(k.label.startswith("NP") for k in kids[i:])
        and i != 0
        and not kids[i + 1].label.startswith("CC")
    ):
        return parent, i
    return None


def _split_flat_cc(t: Node, cc_at: int) -> None:
    """Group the conjuncts of a flat NP around its conjunction (CoreNLP's four cases)."""
    sib = list(t.kids)
    more = [i for i in range(cc_at + 1, len(sib) - 1) if sib[i].label.startswith("CC")]
    before = sib[cc_at - 1].label
    if (
        cc_at == 1
        and (before in ("DT", "JJ", "RB") or sib[cc_at + 1].label != "DT")
        and not (before.startswith("NP") or before in ("ADJP", "NNS"))
    ):
        # "a CC b c ..." -> "(a CC b) c ..."
        left = Node(_head_tag(sib[0]), sib[: cc_at + 2])
        rest = sib[cc_at + 2 :]
        if not more:
            t.set_kids([left, *rest])
            return
        index, comma = more[0], False
        if sib[index - 1].label == ",":
            index, comma = index - 1, True
        if cc_at + 2 < index:
            group = Node(_head_tag(sib[index - 1]), [left, *sib[cc_at + 2 : index]])
            kids = [group, *sib[index:]]
        else:
            kids = [left, *rest]
        start = 3 if comma else 2
        right = Node("NP", kids[start:])
        t.set_kids([*kids[:start], right])
        return
    if (
        cc_at == 2
        and sib[0].label.startswith("DT")
        and sib[1].label != "NNS"
        and (len(sib) == 5 or (more and more[0] == 5))
    ):
        # "DT a CC b c" -> "DT (a CC b) c"
        group = Node(_head_tag(sib[1]), sib[1 : cc_at + 2])
        t.set_kids([sib[0], group, *sib[cc_at + 2 :]])
        return
    if cc_at > 2 and sib[cc_at - 2].label == "," and sib[cc_at - 1].label != "NNS":
        # "... a, b CC c ..." -> "... (a, b CC c) ..."
        members = sib[cc_at - 3 : cc_at + 2]
        i = cc_at - 4
        while i > 0 and sib[i].label == ",":
            members = [sib[i - 1], sib[i], *members]
            i -= 2
        i = max(i, -1)
        group = Node(_head_tag(sib[cc_at - 1]), members)
        t.set_kids([*sib[: i + 1], group, *sib[cc_at + 2 :]])
        return
    # "the new phone book and tour guide": each side of the conjunction becomes a phrase
    preconj = None
    begin = 0
    first = sib[0]
    if first.kids and first.kids[0].label.lower() in ("either", "neither", "both"):
        preconj = Node("CC", [first.kids[0]])
        begin = 1
    left = Node(_head_tag(sib[cc_at - 1]), sib[begin : cc_at - 1])
    comma_left = sib[cc_at - 1].label == ","
    if not comma_left:
        left.append(sib[cc_at - 1])
    cc = sib[cc_at]
    next_cc = more[0] if more else len(sib)
    right = Node(_head_tag(sib[next_cc - 1]), sib[cc_at + 1 : next_cc - 1])
    comma_right = sib[next_cc - 1].label == ","
    if not comma_right:
        right.append(sib[next_cc - 1])
    rest = sib[next_cc:]
    parts: list[Node] = []
    if preconj is not None:
        parts.append(preconj)
    if left.kids:
        parts.append(left)
    if comma_left:
        parts.append(sib[cc_at - 1])
    parts.append(cc)
    if right.kids:
        parts.append(right)
    if more:
        group = Node("NP", parts)
        head = [group, sib[next_cc - 1]] if comma_right else [group]
        t.set_kids([*head, *rest])
    else:
        tail = [sib[next_cc - 1]] if comma_right else []
        t.set_kids([*rest, *parts, *tail])


def _coordination(tree: _Tree) -> None:
    _repeat(tree, _flat_cc, _split_flat_cc)


# --- 5. quantifier phrases -----------------------------------------------------------------------


def _qp_pair(node: Node) -> tuple | None:
    if node.label != "NP":
        return None
    for a, b in zip(node.kids, node.kids[1:], strict=False):
        if a.label == "QP" and b.label == "QP" and any(k.label == "CC" for k in b.kids):
            return node, a, b
    return None


def _apply_qp_pair(np: Node, left: Node, right: Node) -> None:
    qp = _wrap(np, left, right, "QP")
    _splice(left)
    _splice(right)
    assert qp.kids


def _deep(n: Node) -> bool:
    """A child that is a phrase (its children have children)."""
    return any(k.kids for k in n.kids)


_MONEY_OR_CC = re.compile(r"^[$]|CC$")


def _qp_cc(node: Node) -> tuple | None:
    if node.label != "QP" or any(_deep(k) for k in node.kids):
        return None
    kids = node.kids
    for i, cc in enumerate(kids):
        if cc.label != "CC" or i == 0 or i == len(kids) - 1:
            continue
        left_num = any(_MONEY_OR_CC.search(k.label) for k in kids[:i])
        right_num = any(_MONEY_OR_CC.search(k.label) for k in kids[i + 1 :])
        return node, kids[0], kids[i - 1], kids[i + 1], kids[-1], left_num, right_num
    return None


def _apply_qp_cc(qp: Node, l1: Node, r1: Node, l2: Node, r2: Node, lnum: bool, rnum: bool) -> None:
    _wrap(qp, l1, r1, "QP" if lnum else "NP")
    _wrap(qp, l2, r2, "QP" if rnum else "NP")


_MONEY_TAIL = re.compile(r"^([$]|CD)$")


def _qp_money(node: Node) -> tuple | None:
    if node.label != "QP" or not node.kids:
        return None
    kids = node.kids
    for i, k in enumerate(kids):
        if not re.search(r"^[$]$", k.label) or i + 1 >= len(kids):
            continue
        after = kids[i + 1 :]
        if any(not _MONEY_TAIL.match(a.label) for a in after):
            continue
        if any(_deep(a) for a in after):
            continue
        return node, kids[i + 1], kids[-1]
    return None


def _apply_qp_money(qp: Node, left: Node, right: Node) -> None:
    _wrap(qp, left, right, "QP")


def _quantifiers(tree: _Tree) -> None:
    _repeat(tree, _qp_pair, _apply_qp_pair)
    _repeat(tree, _qp_cc, _apply_qp_cc)
    _repeat(tree, _qp_money, _apply_qp_money)


# --- 6. copular WH-questions ---------------------------------------------------------------------

_COPULA = word_set("be being been am are r is ai was were 'm m 're 's s `s art ar wase")


def _is_copula_verb(n: Node) -> bool:
    return n.label.startswith("VB") and any(k.label.lower() in _COPULA for k in n.kids)


def _flat_sq(node: Node) -> tuple | None:
    if node.label != "SBARQ":
        return None
    for what, sq in zip(node.kids, node.kids[1:], strict=False):
        if what.label != "WHNP" or not any(k.label == "WP" for k in what.kids):
            continue
        if sq.label != "SQ":
            continue
        kids = sq.kids
        verbs = [k for k in kids if _is_copula_verb(k)]
        if not verbs:
            continue
        if any(
            k.label.startswith("VB") and any(c.label.lower() not in _COPULA for c in k.kids)
            for k in kids
        ):
            continue
        if any(
            k.label.startswith("V")
            and any(c.label.startswith("VB") for c in k.kids)
            and any(c.label.lower() not in _COPULA for c in k.kids)
            for k in kids
        ):
            continue
        first = kids[0]
        if (
            _is_copula_verb(first)
            and len(kids) > 1
            and kids[1].label == "NP"
            and any(_Pre(("EX",), ("there",), case=True)(c) for c in kids[1].kids)
        ):
            continue
        if any(
            k.label == "ADJP"
            and any(
                c.label == "PP" and len(c.kids) == 1 and c.kids[0].label in ("IN", "TO")
                for c in k.kids
            )
            for k in kids
        ):
            continue
        for verb in verbs:
            i = verb.position()
            if i + 1 < len(kids) and kids[i + 1].label == "PP":
                continue
            return (sq,)
    return None


def _apply_flat_sq(sq: Node) -> None:
    _splice(sq)


# --- 7. dates ------------------------------------------------------------------------------------

_MONTH = re.compile(
    r"January|February|March|April|May|June|July|August|September|October|November|December|"
    r"Jan\.|Feb\.|Mar\.|Apr\.|Aug\.|Sep\.|Sept\.|Oct\.|Nov\.|Dec\."
)


def _only(n: Node) -> Node | None:
    return n.kids[0] if len(n.kids) == 1 else None


def _month_np(n: Node) -> Node | None:
    inner = _only(n) if n.label == "NP" else None
    if inner is not None and inner.label == "NNP" and inner.pre and _MONTH.search(inner.word):
        return inner
    return None


def _year_np(n: Node) -> Node | None:
    inner = _only(n) if n.label == "NP" else None
    if inner is not None and inner.label == "CD" and len(inner.kids) == 1:
        return inner
    return None


def _month_year(node: Node) -> tuple | None:
    if node.label != "NP" or len(node.kids) != 2:
        return None
    month, year = _month_np(node.kids[0]), _year_np(node.kids[1])
    if month is not None and year is not None:
        return node, [month, year]
    return None


def _month_day_year(node: Node) -> tuple | None:
    if node.label != "NP" or len(node.kids) != 3:
        return None
    md, comma, yr = node.kids
    if md.label != "NP" or len(md.kids) != 2 or comma.label != "," or comma.word != ",":
        return None
    month, day = md.kids
    if not (month.label == "NNP" and month.pre and _MONTH.search(month.word)):
        return None
    if not (day.label == "CD" and len(day.kids) == 1) or len(comma.kids) != 1:
        return None
    year = _year_np(yr)
    if year is None:
        return None
    return node, [month, day, comma, year]


def _apply_flatten(node: Node, kids: list[Node]) -> None:
    node.set_kids(kids)


def _dates(tree: _Tree) -> None:
    _repeat(tree, _month_year, _apply_flatten)
    _repeat(tree, _month_day_year, _apply_flatten)


# --- 8. X over X ---------------------------------------------------------------------------------


def _x_over_x(tree: _Tree) -> None:
    while True:
        for node in tree.nodes():
            kid = _only(node)
            if kid is not None and kid.label == node.label and kid.kids:
                if node is tree.root:
                    kid.parent = None
                    tree.root = kid
                else:
                    _splice(node)
                tree.edited()
                break
        else:
            return


# --- 9. "and yet", "and so" ----------------------------------------------------------------------

_CLAUSE_OR_PP = re.compile(r"^(S(?!YM)|PP|VP)")
_CLAUSE_OR_PP_PARENT = re.compile(r"^(S|PP|VP)")


def _and_yet(node: Node) -> tuple | None:
    if not _CLAUSE_OR_PP_PARENT.match(node.label):
        return None
    kids = node.kids
    for i, first in enumerate(kids):
        if not _CLAUSE_OR_PP.search(first.label):
            continue
        for j in range(i + 1, len(kids) - 2):
            cc, adv, after = kids[j], kids[j + 1], kids[j + 2]
            if cc.label != "CC" or adv.label not in ("RB", "ADVP"):
                continue
            if not _CLAUSE_OR_PP.search(after.label):
                continue
            if not _Pre(("CC",), ("and",), case=True)(cc):
                continue
            if _Pre(("RB",), ("yet", "so"), case=True)(adv) or (
                adv.label == "ADVP"
                and any(_Pre(("RB", "IN"), ("so",), case=True)(k) for k in adv.kids)
            ):
                return node, cc, adv
    return None


def _apply_and_yet(parent: Node, start: Node, end: Node) -> None:
    _wrap(parent, start, end, "CONJP")


# --- 10. adverbs moved into the phrase they modify -----------------------------------------------

_SEPARATOR = frozenset({",", "CC", "CONJP"})


def _not_then(adv: Node) -> bool:
    if adv.label == "RB":
        return any(k.label in ("not", "then") for k in adv.kids)
    return adv.label == "ADVP" and len(adv.kids) == 1 and adv.kids[0].label == "RB"


def _moved_adverb(
    parent_ok: Callable[[str], bool],
    first_ok: Callable[[str], bool],
    dest_ok: Callable[[str], bool],
) -> Callable:
    def find(node: Node) -> tuple | None:
        if node.leaf or not parent_ok(node.label):
            return None
        kids = node.kids
        for i, first in enumerate(kids):
            if not first_ok(first.label):
                continue
            for j in range(i + 1, len(kids) - 2):
                sep, adv, dest = kids[j], kids[j + 1], kids[j + 2]
                if sep.label in _SEPARATOR and _not_then(adv) and dest_ok(dest.label):
                    return adv, dest
        return None

    return find


def _frag_adverb(node: Node) -> tuple | None:
    if node.leaf or not node.label.startswith("FRAG"):
        return None
    for adv, dest in zip(node.kids, node.kids[1:], strict=False):
        if adv.label in ("ADVP", "RB") and dest.label == "VP":
            return adv, dest
    return None


def _apply_move_first(adv: Node, dest: Node) -> None:
    _detach(adv)
    _insert(dest, 0, adv)


_PHRASE_START = re.compile(r"^(S|PP|VP|NP)")
_PHRASE_START_NO_SYM = re.compile(r"^(S(?!YM)|PP|VP|NP)")


def _move_rb(tree: _Tree) -> None:
    _repeat(
        tree,
        _moved_adverb(
            lambda s: s.startswith(("S", "PP", "VP", "NP")),
            lambda s: bool(_PHRASE_START.match(s)),
            lambda s: bool(_PHRASE_START_NO_SYM.match(s)),
        ),
        _apply_move_first,
    )
    _repeat(
        tree,
        _moved_adverb(
            lambda s: s.startswith("ADVP"),
            lambda s: s.startswith("ADVP"),
            lambda s: s.startswith(("NP-ADV", "ADVP", "PP")),
        ),
        _apply_move_first,
    )
    _repeat(tree, _frag_adverb, _apply_move_first)


# --- 11. "after", "before", ... clauses under a noun phrase are prepositional --------------------


def _sbar_to_pp(tree: _Tree) -> None:
    temporal = ("after", "before", "until", "since", "during")
    for node in tree.nodes():
        if node.label != "NP":
            continue
        for i, np in enumerate(node.kids):
            if np.label != "NP":
                continue
            for sbar in node.kids[i + 1 :]:
                if sbar.label != "SBAR":
                    continue
                kids = sbar.kids
                if any(
                    _Pre(("IN",), temporal)(k) and any(s.label == "S" for s in kids[j + 1 :])
                    for j, k in enumerate(kids)
                ):
                    sbar.label = "PP"


# --- 12. "now that" ------------------------------------------------------------------------------


def _now_that(node: Node) -> tuple | None:
    if node.label != "ADVP" or len(node.kids) < 2:
        return None
    now, sbar = node.kids[0], node.kids[1]
    if (
        _Pre(("RB",), ("now",))(now)
        and sbar.label == "SBAR"
        and sbar.kids
        and _Pre(("IN",), ("that",))(sbar.kids[0])
    ):
        return node, sbar
    return None


def _apply_now_that(advp: Node, sbar: Node) -> None:
    advp.label = "SBAR"
    _splice(sbar)


def normalize(root: Node) -> Node:
    """The tree CoreNLP reads dependencies from (edits ``root`` in place; returns the root).

    >>> from capeval_core.spice.pcfg.trees import read_tree
    >>> from capeval_core.spice.pcfg.ud_nodes import from_tree
    >>> flat = "(ROOT (NP (NP (DT a) (NN dog) (CC and) (NN cat) (NNS toys))))"
    >>> normalize(from_tree(read_tree(flat)))
    (ROOT (NP (DT a-1) (NP (NN dog-2) (CC and-3) (NN cat-4)) (NNS toys-5)))
    """
    tree = _Tree(root)
    _clean_labels(tree)
    if not _strip_empty(tree):
        raise ValueError("the tree holds only empty elements")
    _multiword(tree)
    _repeat(tree, _flat_prep_cc, _apply_prep_cc)
    _ucp(tree)
    _coordination(tree)
    _quantifiers(tree)
    _repeat(tree, _flat_sq, _apply_flat_sq)
    _dates(tree)
    _x_over_x(tree)
    _repeat(tree, _and_yet, _apply_and_yet)
    _move_rb(tree)
    _sbar_to_pp(tree)
    _repeat(tree, _now_that, _apply_now_that)
    return tree.root
