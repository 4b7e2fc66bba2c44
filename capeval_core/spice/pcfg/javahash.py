"""The iteration order of a ``java.util.HashMap`` (and so of a ``HashSet``), emulated.

CoreNLP's ``UnaryGrammar`` adds its rules in the order a ``HashSet`` hands them out, and that
order decides both its unary closure and which of two tied unary chains the parser reads
back, so the emulated parser needs the same order. A HashMap iterates bucket by bucket; a
bucket keeps its entries in insertion order until it holds more than
:data:`TREEIFY_THRESHOLD`, when it becomes a red-black tree ordered by hash: from then on a
new entry is linked in right after its parent in the tree, and whichever node is the root
after rebalancing is moved to the front. This module replays exactly that (Java 8 to 17
behave alike), for maps that are never resized (CoreNLP's are sized up front).
"""

from __future__ import annotations

from collections.abc import Iterable

TREEIFY_THRESHOLD = 8
MIN_TREEIFY_CAPACITY = 64


def spread(h: int) -> int:
    """``HashMap.hash``: the key's hash code with its high half folded in (a signed int)."""
    h &= 0xFFFFFFFF
    h ^= h >> 16
    return h - (1 << 32) if h >= 1 << 31 else h


def table_size_for(capacity: int) -> int:
    """``HashMap.tableSizeFor``: the least power of two >= ``capacity`` (at least 1)."""
    return 1 << max(0, (capacity - 1).bit_length())


class _Node:
    __slots__ = ("hash", "key", "left", "parent", "red", "right")

    def __init__(self, key: object, h: int) -> None:
        self.key, self.hash = key, h
        self.left = self.right = self.parent = None
        self.red = False


class _Bin:
    """One bucket: its entries in iteration (linked) order, and its tree once it has one."""

    def __init__(self) -> None:
        self.order: list[_Node] = []
        self.root: _Node | None = None

    def add(self, node: _Node, table: int) -> None:
        if self.root is None:
            self.order.append(node)
            # Java links the new entry, then converts a bin that had 8 entries before it
            if len(self.order) > TREEIFY_THRESHOLD and table >= MIN_TREEIFY_CAPACITY:
                self._treeify()
            return
        parent = self._descend(node.hash)
        if node.hash <= parent.hash:
            parent.left = node
        else:
            parent.right = node
        node.parent = parent
        self.order.insert(self.order.index(parent) + 1, node)
        self._front(_balance(self.root, node))

    def _descend(self, h: int) -> _Node:
        p = self.root
        while True:
            nxt = p.left if p.hash >= h else p.right
            if nxt is None:
                return p
            p = nxt

    def _treeify(self) -> None:
        root = None
        for x in self.order:
            x.left = x.right = None
            if root is None:
                x.parent, x.red, root = None, False, x
                continue
            self.root = root
            parent = self._descend(x.hash)
            if x.hash <= parent.hash:
                parent.left = x
            else:
                parent.right = x
            x.parent = parent
            root = _balance(root, x)
        self._front(root)

    def _front(self, root: _Node) -> None:
        self.root = root
        self.order.remove(root)
        self.order.insert(0, root)


def _rotate_left(root: _Node, p: _Node) -> _Node:
    r = p.right
    p.right = r.left
    if r.left is not None:
        r.left.parent = p
    r.parent = p.parent
    if p.parent is None:
        root = r
        r.red = False
    elif p.parent.left is p:
        p.parent.left = r
    else:
        p.parent.right = r
    r.left, p.parent = p, r
    return root


def _rotate_right(root: _Node, p: _Node) -> _Node:
    ll = p.left
    p.left = ll.right
    if ll.right is not None:
        ll.right.parent = p
    ll.parent = p.parent
    if p.parent is None:
        root = ll
        ll.red = False
    elif p.parent.right is p:
        p.parent.right = ll
    else:
        p.parent.left = ll
    ll.right, p.parent = p, ll
    return root


def _balance(root: _Node, x: _Node) -> _Node:
    """Red-black insertion fix-up as ``HashMap.TreeNode.balanceInsertion`` does it; returns
    the root."""
    x.red = True
    while True:
        xp = x.parent
        if xp is None:
            x.red = False
            return x
        xpp = xp.parent
        if not xp.red or xpp is None:
            return root
        if xp is xpp.left:
            uncle = xpp.right
            if uncle is not None and uncle.red:
                uncle.red = xp.red = False
                xpp.red = True
                x = xpp
                continue
            if x is xp.right:
                x = xp
                root = _rotate_left(root, x)
                xp = x.parent
                xpp = None if xp is None else xp.parent
            if xp is not None:
                xp.red = False
                if xpp is not None:
                    xpp.red = True
                    root = _rotate_right(root, xpp)
        else:
            uncle = xpp.left
            if uncle is not None and uncle.red:
                uncle.red = xp.red = False
                xpp.red = True
                x = xpp
                continue
            if x is xp.left:
                x = xp
                root = _rotate_right(root, x)
                xp = x.parent
                xpp = None if xp is None else xp.parent
            if xp is not None:
                xp.red = False
                if xpp is not None:
                    xpp.red = True
                    root = _rotate_left(root, xpp)


def iteration_order(keys: Iterable[object], hash_codes: Iterable[int], table: int) -> list:
    """``keys`` (distinct, with their Java ``hashCode()``s) in the order a HashMap of
    ``table`` buckets iterates them after they were put in this order.

    >>> iteration_order(["b", "a"], [98, 97], 16)
    ['a', 'b']
    """
    bins: dict[int, _Bin] = {}
    for key, code in zip(keys, hash_codes, strict=True):
        h = spread(code)
        bins.setdefault(h & (table - 1), _Bin()).add(_Node(key, h), table)
    return [node.key for b in sorted(bins) for node in bins[b].order]
