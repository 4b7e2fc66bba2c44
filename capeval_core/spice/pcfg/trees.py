"""Phrase-structure trees as CoreNLP 3.6.0 prints them (Penn bracketing).

The PCFG stage builds these, and the conversion to Universal Dependencies reads them; the
oracle's ``tree`` field is the same notation, so a tree can be compared with the jar's as a
string.
"""

from __future__ import annotations

import functools
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


#: characters that start an annotation on a category (Penn Treebank language pack)
_ANNOTATION_CHARS = frozenset("-=|#^~_[")


@functools.lru_cache(maxsize=1 << 14)
def basic_category(label: str) -> str:
    """The category without its annotations ("NP^S-TMP" -> "NP"); a label that starts and
    ends with the same annotation character, like "-LRB-", is kept whole. Remembered: the
    head and relation rules ask it of the same few labels millions of times.

    >>> basic_category("NP^S-TMP"), basic_category("-LRB-^NP"), basic_category("@VP|VBZ_")
    ('NP', '-LRB-', '@VP')
    """
    first = ""
    for i, ch in enumerate(label):
        if ch in _ANNOTATION_CHARS:
            if i == 0:
                first = ch
            elif first and i > 1 and ch == first:
                first = ""
            else:
                return label[:i]
    return label


def parser_output(binary: Tree, words: list[str], boundary_tag: str, boundary_word: str) -> Tree:
    """The tree CoreNLP's parser hands on, from its binarized best parse (grammar states as
    labels, the boundary word last): nodes the binarization made (labels with '@') spliced
    out, the boundary removed, annotations stripped from every category but ``-TMP`` on
    phrases (the flag CoreNLP's pipeline sets), and ``words`` as the leaves.

    >>> b = read_tree("(ROOT (S^ROOT (NP^S (NN^NP dogs)) (@S| (VP^S (VBP^VP run)))) (.$$. .$.))")
    >>> str(parser_output(b, ["dogs", "run"], ".$$.", ".$."))
    '(ROOT (S (NP (NN dogs)) (VP (VBP run))))'
    """

    def splice(node: Tree) -> Tree:
        if node.is_leaf():
            return Tree(node.label)
        children: list[Tree] = []
        for child in map(splice, node.children):
            if not child.is_leaf() and "@" in child.label:
                children.extend(child.children)
            else:
                children.append(child)
        return Tree(node.label, children)

    def strip(node: Tree) -> Tree:
        if node.is_leaf():
            return Tree(node.label)
        label = basic_category(node.label)
        if not node.is_preterminal() and "-TMP" in node.label:
            label += "-TMP"
        return Tree(label, [strip(c) for c in node.children])

    tree = splice(binary)
    if tree.children and tree.children[-1].label in (boundary_tag, boundary_word):
        tree.children.pop()
    tree = strip(tree)
    leaves = [node for node in tree.subtrees() if node.is_leaf()]
    if len(leaves) != len(words):
        raise ValueError(f"a parse of {len(leaves)} words for a sentence of {len(words)}")
    for leaf, word in zip(leaves, words, strict=True):
        leaf.label = word
    return tree
