"""The PCFG chart's inner loops, compiled (numba): the same float32 cells as the numpy
reference in :mod:`.cky`, bit for bit, in two layouts: dense (:func:`fill`, for sentences of
up to six words, where it is quickest) and sparse (:func:`fill_columns`, for longer ones, in a
third of the dense chart's memory).

Bit-identical because every score is computed by the same float32 operations in the same
association (a binary item is ``(rule + left) + right``; a unary one ``child + rule``) and
only maxima are taken over them, which do not depend on the order they are tried in (no
score is NaN or +inf: a dead child is -inf, and -inf in a sum is never the maximum).

**Sparse chart.** A cell keeps only its live states (about a fifth of the 12,977 at any width),
as a state number (``uint16``) and a score: about 6 bytes a live state against 4 bytes a
state in a dense chart, a third of its size. The chart is built column by column (all spans
ending at one word, :func:`fill_columns`, from the shortest up): span ``(start, end)`` needs
``(start, m)``, finished in an earlier column, and ``(m, end)``, finished in this one. So the
column being built is dense (its cells are read at random as right children) and every
finished cell is stored sparse (read in order as a left child: its live states one by one).

For each span, each split point, each live left state (those with a binary rule
first, so the others are never visited), each rule with that left child: the same sums as
CoreNLP's loops, without its bookkeeping of split-point bounds, and with every read of a
left child in order.

**Dense chart.** The loops follow CoreNLP's own shape: for each span, each left child state,
each rule with that left child, only the split points where both children can be live.

The unary step is CoreNLP's sequential pass (states in increasing order, each passing its
score as it is at its visit through its closed unary rules), which gives what :func:`.cky._unaries`
gives: a state's score at its visit is final for chains climbing in state number, and a
rule to a lower state improves that state after its visit, so the improvement goes no further.
"""

from __future__ import annotations

import numpy as np
from numba import njit, types
from numba.typed import List

NEG_INF = np.float32(-np.inf)


@njit(cache=True, nogil=True)
def unaries(v, c_start, c_parent, c_score):  # pragma: no cover - compiled
    """CoreNLP's unary step on one cell ``v`` in place (closed rules grouped by child)."""
    for s in range(v.shape[0]):
        vs = v[s]
        if vs == NEG_INF:
            continue
        for k in range(c_start[s], c_start[s + 1]):
            cand = vs + c_score[k]
            p = c_parent[k]
            if cand > v[p]:
                v[p] = cand


@njit(cache=True, nogil=True)
def unaries_renumbered(v, number, c_start, c_parent, c_score):  # pragma: no cover - compiled
    """:func:`unaries` on a cell whose states are renumbered (``v[number[s]]`` is state
    ``s``'s score; ``c_parent`` in the new numbers, rules grouped by child in the old),
    visiting the states in their own order, as CoreNLP does."""
    for s in range(v.shape[0]):
        vs = v[number[s]]
        if vs == NEG_INF:
            continue
        for k in range(c_start[s], c_start[s + 1]):
            cand = vs + c_score[k]
            p = c_parent[k]
            if cand > v[p]:
                v[p] = cand


@njit(cache=True, nogil=True)
def fill_columns(
    first,
    last,
    n,
    col,
    idx,
    val,
    off,
    n_left,
    n_live,
    lex_start,
    lex_state,
    lex_score,
    has_left,
    l_start,
    l_right,
    l_parent,
    l_score,
    number,
    c_start,
    c_parent,
    c_score,
):  # pragma: no cover - compiled
    """Build the columns ``first`` to ``last - 1`` (a column: the spans ending there).

    States are renumbered (state ``s`` is ``number[s]`` here, the most often live first, so
    that the cells' busy part stays in the processor's nearest cache): the binary rules
    (``l_*``, grouped by left child), the tag scores and the stored cells use the new
    numbers; the unary step visits the states in their own order (:func:`unaries_renumbered`).

    ``col`` (rows: start) is the dense column under construction, all -inf on entry and
    left so. The finished cells of column ``end`` go to ``idx[end]`` (state numbers) and
    ``val[end]`` (scores), appended to those typed lists: cell ``(start, end)`` is entries
    ``off[start, end]`` on, its ``n_left`` states with a binary rule as left child first,
    then the rest, ``n_live`` in all. Word ``i``'s tag scores are entries
    ``lex_start[i]:lex_start[i + 1]`` of ``lex_state`` / ``lex_score``. The sentence's
    last word is the boundary, which only the whole sentence combines with: of the spans
    ending there only it and the boundary's own cell are built."""
    for end in range(first, last):
        word = col[end - 1]
        for j in range(lex_start[end - 1], lex_start[end]):
            word[lex_state[j]] = lex_score[j]
        unaries_renumbered(word, number, c_start, c_parent, c_score)
        whole = end == n
        for start in range(end - 2, -1, -1):
            if whole and start != 0:
                continue
            v = col[start]
            for m in range(start + 1, end):
                if whole and m != end - 1:
                    continue
                left_idx = idx[m]
                left_val = val[m]
                right = col[m]
                o = off[start, m]
                for j in range(o, o + n_left[start, m]):
                    ls = left_idx[j]
                    score_l = left_val[j]
                    for k in range(l_start[ls], l_start[ls + 1]):
                        # -inf (a dead right child) gives -inf, never the maximum
                        cand = (l_score[k] + score_l) + right[l_right[k]]
                        p = l_parent[k]
                        v[p] = max(v[p], cand)
            unaries_renumbered(v, number, c_start, c_parent, c_score)
        cells_idx, cells_val = _store(col, end, off, n_left, n_live, has_left)
        idx.append(cells_idx)
        val.append(cells_val)


@njit(cache=True)
def new_columns():  # pragma: no cover - compiled
    """The typed lists that :func:`fill_columns` appends the columns' cells to, column 0
    (no spans end at 0) empty. Made and read here, in cached compiled code: a typed list made
    or read from Python compiles its methods in every process (0.9 s before a first sparse
    chart)."""
    idx = List.empty_list(types.uint16[::1])
    val = List.empty_list(types.float32[::1])
    idx.append(np.zeros(0, dtype=np.uint16))
    val.append(np.zeros(0, dtype=np.float32))
    return idx, val


@njit(cache=True)
def column(idx, val, end):  # pragma: no cover - compiled
    """Column ``end``'s stored entries (state numbers, scores)."""
    return idx[end], val[end]


@njit(cache=True, nogil=True)
def _store(col, end, off, n_left, n_live, has_left):  # pragma: no cover - compiled
    """Column ``end``'s cells as (state, score) entries, each cell's states with a left rule
    first; the dense rows are reset to -inf."""
    total = 0
    for start in range(end):
        row = col[start]
        for s in range(row.shape[0]):
            if row[s] != NEG_INF:
                total += 1
    out_idx = np.empty(total, dtype=np.uint16)
    out_val = np.empty(total, dtype=np.float32)
    j = 0
    for start in range(end):
        row = col[start]
        first = j
        off[start, end] = first
        for s in range(row.shape[0]):
            if row[s] != NEG_INF and has_left[s]:
                out_idx[j] = s
                out_val[j] = row[s]
                j += 1
        n_left[start, end] = j - first
        for s in range(row.shape[0]):
            if row[s] != NEG_INF and not has_left[s]:
                out_idx[j] = s
                out_val[j] = row[s]
                j += 1
        n_live[start, end] = j - first
        row[:] = NEG_INF
    return out_idx, out_val


@njit(cache=True, nogil=True)
def fill(
    chart, row, n, l_start, l_right, l_parent, l_score, c_start, c_parent, c_score
):  # pragma: no cover - compiled
    """Fill ``chart`` in place: ``chart[row[start, end]]`` is the cell of a span (-1: never
    built). The width-1 rows hold the lexicon's tag scores on entry; every built row ends
    with its unary step done. Binary rules come grouped by left child (``l_start``).

    As in CoreNLP, each state's *extents* bound the split points: over the spans starting at
    ``start`` a state is live from end ``near_r`` to end ``far_r`` at most, over those ending
    at ``end`` from start ``near_l`` down to ``far_l``; a rule is tried only at the split
    points both its children's extents allow (about half the work at 60 words)."""
    n_states = chart.shape[1]
    near_r = np.full((n + 1, n_states), n + 1, dtype=np.int32)
    far_r = np.full((n + 1, n_states), -1, dtype=np.int32)
    near_l = np.full((n + 1, n_states), -1, dtype=np.int32)
    far_l = np.full((n + 1, n_states), n + 1, dtype=np.int32)
    for width in range(1, n + 1):
        for start in range(n - width + 1):
            end = start + width
            r = row[start, end]
            if r < 0:
                continue
            v = chart[r]
            if width > 1:
                _binary(v, chart, row, start, end, near_r, far_r, near_l, far_l,
                        l_start, l_right, l_parent, l_score)  # fmt: skip
            unaries(v, c_start, c_parent, c_score)
            for s in range(n_states):
                if v[s] != NEG_INF:
                    near_r[start, s] = min(near_r[start, s], end)
                    far_r[start, s] = max(far_r[start, s], end)
                    near_l[end, s] = max(near_l[end, s], start)
                    far_l[end, s] = min(far_l[end, s], start)


@njit(cache=True, nogil=True)
def _binary(
    v, chart, row, start, end, near_r, far_r, near_l, far_l, l_start, l_right, l_parent, l_score
):  # pragma: no cover - compiled
    """The binary rules into the cell ``v`` of the span ``(start, end)``."""
    for ls in range(v.shape[0]):
        lo_left = near_r[start, ls]
        if lo_left >= end:
            continue
        hi_left = far_r[start, ls]
        for k in range(l_start[ls], l_start[ls + 1]):
            rs = l_right[k]
            lo = max(lo_left, far_l[end, rs])
            hi = min(hi_left, near_l[end, rs])
            if lo > hi:
                continue
            score = l_score[k]
            best = NEG_INF
            for m in range(lo, hi + 1):
                a = row[start, m]
                b = row[m, end]
                if a >= 0 and b >= 0:
                    # no test for dead children: -inf added in is never the maximum
                    best = max(best, (score + chart[a, ls]) + chart[b, rs])
            p = l_parent[k]
            v[p] = max(v[p], best)
