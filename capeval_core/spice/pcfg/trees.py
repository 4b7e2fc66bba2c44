"""Phrase-structure trees as CoreNLP 3.6.0 prints them (Penn bracketing).

The PCFG stage builds these, and the conversion to Universal Dependencies reads them; the
oracle's ``tree`` field is the same notation, so a tree can be compared with the jar's as a
string.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field


@dataclass(eq=False)
class Tree:
    """A node: ``label`` and ``children`` (a leaf has none and its label is the word)."""

    label: str
    children: list[Tree] = field(default_factory=list)

    def is_leaf(self) -> bool:
        return not self.children

    def is_preterminal(self) -> bool:
        return len(self.children) == 1 and self.children[0].is_leaf()

    def leaves(self) -> list[str]:
        """The words, left to right."""
        return [node.label for node in self.subtrees() if node.is_leaf()]

    def preterminals(self) -> list[Tree]:
        """The tag nodes, left to right."""
        return [node for node in self.subtrees() if node.is_preterminal()]

    def subtrees(self) -> Iterator[Tree]:
        """Every node, parents before children, left to right."""
        stack = [self]
        while stack:
            node = stack.pop()
            yield node
            stack.extend(reversed(node.children))

    def __str__(self) -> str:
        """Penn bracketing on one line, as CoreNLP's ``Tree.toString()``.

        >>> str(read_tree("(ROOT (NP (DT a) (NN dog)))"))
        '(ROOT (NP (DT a) (NN dog)))'
        """
        if self.is_leaf():
            return self.label
        return "(" + " ".join([self.label, *map(str, self.children)]) + ")"


def read_tree(text: str) -> Tree:
    """A tree from its Penn bracketing (labels and words hold no spaces or brackets).

    >>> read_tree("(ROOT (NP (DT a) (NN dog)))").leaves()
    ['a', 'dog']
    """
    tokens = text.replace("(", " ( ").replace(")", " ) ").split()
    stack: list[Tree] = []
    root: Tree | None = None
    pos = 0
    while pos < len(tokens):
        token = tokens[pos]
        if token == "(":
            node = Tree(tokens[pos + 1])
            if stack:
                stack[-1].children.append(node)
            stack.append(node)
            pos += 2
            continue
        if token == ")":
            if not stack:
                raise ValueError(f"unbalanced ')' in tree {text!r}")
            root = stack.pop()
        elif stack:
            stack[-1].children.append(Tree(token))
        else:
            raise ValueError(f"word outside brackets in tree {text!r}")
        pos += 1
    if stack or root is None:
        raise ValueError(f"unbalanced '(' in tree {text!r}")
    return root
