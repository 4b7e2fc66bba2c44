"""A mutable tree for the conversion to Universal Dependencies, and the tree tests its rules use.

The conversion reshapes the parse before it reads dependencies off it (``ud_transform``), then
asks structural questions of it: a node's children and sisters, its head child, a unary chain.
Those questions live here as small functions, so each rule reads as plain Python.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

from capeval_core.spice.pcfg.trees import Tree

#: Punctuation tags of the Penn Treebank (the head rules avoid them as heads).
PUNCT_TAGS = frozenset({"''", "``", "-LRB-", "-RRB-", ".", ":", ","})

#: Characters that start a function tag or index on a Penn label (``NP-TMP``, ``NP=2``).
_ANNOTATION = "-=|#^~_["


class Node:
    """A tree node with a parent link; a leaf holds its word and 1-based token index."""

    __slots__ = ("bare_head", "head", "index", "kids", "label", "parent")

    def __init__(self, label: str, kids: list[Node] | None = None, index: int = 0):
        self.label = label
        self.kids: list[Node] = []
        self.parent: Node | None = None
        self.index = index
        self.head: Node | None = None  # the head word's leaf, once heads are found
        self.bare_head: Node | None = None  # head child found without looking at the parent
        for kid in kids or ():
            self.append(kid)

    def append(self, kid: Node) -> None:
        kid.parent = self
        self.kids.append(kid)

    def set_kids(self, kids: list[Node]) -> None:
        self.kids = list(kids)
        for kid in self.kids:
            kid.parent = self

    @property
    def leaf(self) -> bool:
        return not self.kids

    @property
    def pre(self) -> bool:
        """A preterminal: one child, a word."""
        return len(self.kids) == 1 and not self.kids[0].kids

    @property
    def phrasal(self) -> bool:
        return bool(self.kids) and not self.pre

    @property
    def word(self) -> str:
        """The word under a preterminal (its only child's label)."""
        return self.kids[0].label if self.kids else self.label

    def position(self) -> int:
        assert self.parent is not None
        return next(i for i, k in enumerate(self.parent.kids) if k is self)

    def walk(self) -> Iterator[Node]:
        """Every node, parents first, left to right (the order tree searches visit them)."""
        stack = [self]
        while stack:
            node = stack.pop()
            yield node
            stack.extend(reversed(node.kids))

    def leaves(self) -> list[Node]:
        return [n for n in self.walk() if n.leaf]

    def __repr__(self) -> str:
        if self.leaf:
            return f"{self.label}-{self.index}"
        return "(" + " ".join([self.label, *map(repr, self.kids)]) + ")"


def from_tree(tree: Tree) -> Node:
    """A copy of a parse as :class:`Node` s, leaves numbered from 1 left to right."""
    counter = [0]

    def build(t: Tree) -> Node:
        if t.is_leaf():
            counter[0] += 1
            return Node(t.label, index=counter[0])
        return Node(t.label, [build(c) for c in t.children])

    return build(tree)


def basic(label: str) -> str:
    """A label without its function tags (``NP-TMP`` -> ``NP``; ``-LRB-`` stays whole)."""
    at_zero = ""
    for i, ch in enumerate(label):
        if ch in _ANNOTATION:
            if i == 0:
                at_zero = ch
            elif at_zero and i > 1 and ch == at_zero:
                at_zero = ""
            else:
                return label[:i]
    return label


def word_set(text: str) -> frozenset[str]:
    """The space-separated words of ``text`` as a set (for word lists written inline)."""
    return frozenset(text.split())


# --- label and word tests -------------------------------------------------------------------


def lab(*labels: str) -> Callable[[Node], bool]:
    """A test that a node's label is one of ``labels`` exactly."""
    wanted = frozenset(labels)
    return lambda n: n.label in wanted


def cat(*labels: str) -> Callable[[Node], bool]:
    """A test on the basic category (``NP`` also takes ``NP-TMP``)."""
    wanted = frozenset(labels)
    return lambda n: basic(n.label) in wanted


def rx(pattern: str, flags: int = 0) -> Callable[[Node], bool]:
    """A test that a regular expression occurs in the label (a search, not a full match)."""
    compiled = re.compile(pattern, flags)
    return lambda n: compiled.search(n.label) is not None


def words(*forms: str) -> Callable[[Node], bool]:
    """A test that a label is one of ``forms``, ignoring case."""
    wanted = frozenset(f.lower() for f in forms)
    return lambda n: n.label.lower() in wanted


def exact(*forms: str) -> Callable[[Node], bool]:
    """A test that a label is one of ``forms``, case included."""
    wanted = frozenset(forms)
    return lambda n: n.label in wanted


ANY: Callable[[Node], bool] = lambda n: True  # noqa: E731


# --- structure ---------------------------------------------------------------------------------


def has_kid(n: Node, test: Callable[[Node], bool]) -> bool:
    return any(test(k) for k in n.kids)


def kids_where(n: Node, test: Callable[[Node], bool]) -> list[Node]:
    return [k for k in n.kids if test(k)]


def only_kid(n: Node) -> Node | None:
    return n.kids[0] if len(n.kids) == 1 else None


def first_kid(n: Node) -> Node | None:
    return n.kids[0] if n.kids else None


def last_kid(n: Node) -> Node | None:
    return n.kids[-1] if n.kids else None


def nth_kid(n: Node, i: int) -> Node | None:
    """The ``i``-th child counting from 1 (negative: from the end)."""
    if i > 0:
        return n.kids[i - 1] if len(n.kids) >= i else None
    return n.kids[i] if len(n.kids) >= -i else None


def sisters(n: Node) -> list[Node]:
    if n.parent is None:
        return []
    return [k for k in n.parent.kids if k is not n]


def left_sisters(n: Node) -> list[Node]:
    """Sisters before ``n``, nearest first."""
    if n.parent is None:
        return []
    i = n.position()
    return n.parent.kids[:i][::-1]


def right_sisters(n: Node) -> list[Node]:
    """Sisters after ``n``, nearest first."""
    if n.parent is None:
        return []
    i = n.position()
    return n.parent.kids[i + 1 :]


def prev_sister(n: Node) -> Node | None:
    left = left_sisters(n)
    return left[0] if left else None


def next_sister(n: Node) -> Node | None:
    right = right_sisters(n)
    return right[0] if right else None


def descendants(n: Node) -> Iterator[Node]:
    """Every node below ``n`` (not ``n``), parents first."""
    for kid in n.kids:
        yield from kid.walk()


def dominates(n: Node, test: Callable[[Node], bool]) -> bool:
    return any(test(d) for d in descendants(n))


def leftmost_descendants(n: Node) -> Iterator[Node]:
    while n.kids:
        n = n.kids[0]
        yield n


def rightmost_descendants(n: Node) -> Iterator[Node]:
    while n.kids:
        n = n.kids[-1]
        yield n


def chain_descendants(n: Node, via: Callable[[Node], bool]) -> Iterator[Node]:
    """Nodes reached from ``n`` down a path whose inner nodes all pass ``via``."""
    for kid in n.kids:
        yield kid
        if via(kid):
            yield from chain_descendants(kid, via)


def preterminal_tags(n: Node) -> list[str]:
    return [d.label for d in n.walk() if d.pre]
