"""A mutable tree for the conversion to Universal Dependencies.

The conversion reshapes the parse before it reads dependencies off it (``ud_transform``), so it
works on its own copy with parent links, word indices and, once found, head words.
"""

from __future__ import annotations

from collections.abc import Iterator

from capeval_core.spice.pcfg.trees import Tree

#: Punctuation tags of the Penn Treebank (the head rules avoid them as heads).
PUNCT_TAGS = frozenset({"''", "``", "-LRB-", "-RRB-", ".", ":", ","})


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
        return self.parent.kids.index(self)  # nodes compare by identity

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


def word_set(text: str) -> frozenset[str]:
    """The space-separated words of ``text`` as a set (for word lists written inline)."""
    return frozenset(text.split())
