"""The PCFG chart's inner loops, compiled (numba): the same float32 cells as the numpy
reference in :mod:`.cky`, bit for bit, several times faster.

Bit-identical because every score is computed by the same float32 operations in the same
association (a binary item is ``(rule + left) + right``; a unary one ``child + rule``) and
only maxima are taken over them, which do not depend on the order they are tried in.

The loops follow CoreNLP's own shape rather than the numpy code's: for each split point,
each *live* state of the left cell, each rule with that left child. Most of the 13,000
grammar states are dead in most cells, so this touches a small part of the rule table.

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
def _live(v, out):  # pragma: no cover - compiled
    """The states of ``v`` with a score, into ``out``; how many."""
    k = 0
    for s in range(v.shape[0]):
        if v[s] != NEG_INF:
            out[k] = s
            k += 1
    return k


@njit(cache=True, nogil=True)
def fill(
    chart, row, n, l_start, l_right, l_parent, l_score, c_start, c_parent, c_score
):  # pragma: no cover - compiled
    """Fill ``chart`` in place: ``chart[row[start, end]]`` is the cell of a span (-1: never
    built). The width-1 rows hold the lexicon's tag scores on entry; every built row ends
    with its unary step done. Binary rules come grouped by left child (``l_start``)."""
    n_states = chart.shape[1]
    live = np.empty((chart.shape[0], n_states), dtype=np.int32)
    n_live = np.zeros(chart.shape[0], dtype=np.int64)
    for start in range(n):
        r = row[start, start + 1]
        unaries(chart[r], c_start, c_parent, c_score)
        n_live[r] = _live(chart[r], live[r])
    for width in range(2, n + 1):
        for start in range(n - width + 1):
            end = start + width
            r = row[start, end]
            if r < 0:
                continue
            v = chart[r]
            for m in range(start + 1, end):
                lr = row[start, m]
                rr = row[m, end]
                if lr < 0 or rr < 0 or n_live[lr] == 0 or n_live[rr] == 0:
                    continue
                left = chart[lr]
                right = chart[rr]
                ll = live[lr]
                for i in range(n_live[lr]):
                    ls = ll[i]
                    lv = left[ls]
                    for k in range(l_start[ls], l_start[ls + 1]):
                        # no test on the right child: a dead one adds -inf, which no max takes
                        cand = (l_score[k] + lv) + right[l_right[k]]
                        p = l_parent[k]
                        v[p] = max(v[p], cand)
            unaries(v, c_start, c_parent, c_score)
            n_live[r] = _live(v, live[r])
