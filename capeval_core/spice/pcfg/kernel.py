"""The PCFG chart's inner loops, compiled (numba): the same float32 cells as the numpy
reference in :mod:`.cky`, bit for bit, several times faster.

Bit-identical because every score is computed by the same float32 operations in the same
association (a binary item is ``(rule + left) + right``; a unary one ``child + rule``) and
only maxima are taken over them, which do not depend on the order they are tried in.

The loops follow CoreNLP's own shape rather than the numpy code's: for each span, each
left child state, each rule with that left child, only the split points where both children
can be live (:func:`fill`).

The unary step is CoreNLP's sequential pass (states in increasing order, each passing its
score as it is at its visit through its closed unary rules), which gives what :func:`.cky._unaries`
gives: a state's score at its visit is final for chains climbing in state number, and a
rule to a lower state improves that state after its visit, so the improvement goes no further.
"""

from __future__ import annotations

import numpy as np
from numba import njit

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
