"""CoreNLP 3.6.0's exhaustive PCFG parse (``ExhaustivePCFGParser``), in numpy.

The chart holds, for every span and grammar state, the best inside log-probability in
float32, computed as CoreNLP computes it so that the numbers agree to the bit:

- a binary rule over a split adds ``(rule + left) + right`` in float32; the best over rules
  and splits is a maximum, so the order they are tried in does not matter;
- unary rules are applied once per cell, state by state in increasing order, each through
  the closed unary grammar: a state improved by a lower-numbered one passes the improvement
  on, one improved by a higher-numbered one does not (:func:`_unaries`);
- the sentence ends in a boundary word that only the whole sentence combines with.

The best parse is then read back as CoreNLP's pipeline reads it (:func:`extract`): not by
back-pointers but by scoring, at each node, every way of building it from the chart and
taking the best in double precision, the first of equals in the order CoreNLP tries them, so
nearly tied parses resolve as they do in Java.
"""

from __future__ import annotations

import contextlib
import functools
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from capeval_core.errors import ResourceError
from capeval_core.spice.pcfg.grammar import BOUNDARY_WORD, Grammar
from capeval_core.spice.pcfg.lexicon import Lexicon, as_arrays
from capeval_core.spice.pcfg.trees import Tree

NEG_INF = np.float32(-np.inf)
#: the score CoreNLP gives every tag of a word when it parses again after a failure
FLOOD_SCORE = np.float32(-1000.0)
#: the compiled chart is dense up to this many words, sparse beyond. Parsing 400 COCO train
#: captions (10 words on average) took 7.5 % less time sparse, the same trees; a chart alone
#: was 5 % quicker sparse at 7 words, 16 % at 40, and dense was quicker up to 6 (8-18 %). The
#: sparse cells also take a third of the dense ones' memory (46 MB at 40 words, 2.7 GB at 320).
DENSE_MAX_WORDS = 6
#: no taggings: (tags, scores) arrays of length 0
_NONE = (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32))


@dataclass(frozen=True)
class _Rules:
    """The grammar's rules laid out for the chart."""

    # binary rules sorted by parent (stable), with each parent's run start
    parent: np.ndarray
    left: np.ndarray
    right: np.ndarray
    score: np.ndarray
    runs: np.ndarray
    run_parent: np.ndarray
    # binary rules of each parent in the grammar's order, for reading parses back
    by_parent: dict[int, np.ndarray]
    # unary (core) rules of each parent in CoreNLP's order
    unary_by_parent: dict[int, list[tuple[int, np.float32]]]
    # closed unary rules split by direction (child < parent, child > parent)
    up: tuple[np.ndarray, np.ndarray, np.ndarray]
    down: tuple[np.ndarray, np.ndarray, np.ndarray]
    is_tag: np.ndarray
    # for the compiled kernel: binary rules grouped by left child (``by_left[0][l]`` is the
    # first of ``l``'s), and closed unary rules grouped by child, each as (start, ...arrays)
    by_left: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]
    by_child: tuple[np.ndarray, np.ndarray, np.ndarray]


@functools.cache
def _rules(g: Grammar) -> _Rules:
    if len(g.states) > np.iinfo(np.uint16).max + 1:  # the compiled chart's state numbers
        raise ValueError(f"a grammar of {len(g.states)} states (at most 65,536)")
    order = np.argsort(g.b_parent, kind="stable")
    parent = g.b_parent[order]
    runs = np.flatnonzero(np.r_[True, parent[1:] != parent[:-1]])
    by_parent: dict[int, list[int]] = {}
    for i, p in enumerate(g.b_parent.tolist()):
        by_parent.setdefault(p, []).append(i)
    unary: dict[int, list[tuple[int, np.float32]]] = {}
    for p, c, s in zip(g.u_parent.tolist(), g.u_child.tolist(), g.u_score, strict=True):
        unary.setdefault(p, []).append((c, s))
    up = g.c_child < g.c_parent
    is_tag = np.zeros(len(g.states), dtype=bool)
    is_tag[g.tag_state[g.tag_state >= 0]] = True
    n_states = len(g.states)
    left_order = np.lexsort((g.b_right, g.b_left))  # by left child, then right child
    child_order = np.argsort(g.c_child, kind="stable")
    return _Rules(
        parent=parent,
        left=g.b_left[order],
        right=g.b_right[order],
        score=g.b_score[order],
        runs=runs,
        run_parent=parent[runs],
        by_parent={p: np.array(ix, dtype=np.int64) for p, ix in by_parent.items()},
        unary_by_parent=unary,
        up=(g.c_parent[up], g.c_child[up], g.c_score[up]),
        down=(g.c_parent[~up], g.c_child[~up], g.c_score[~up]),
        is_tag=is_tag,
        by_left=(
            _group_starts(g.b_left, n_states),
            g.b_right[left_order].astype(np.int32),
            g.b_parent[left_order].astype(np.int32),
            g.b_score[left_order].astype(np.float32),
        ),
        by_child=(
            _group_starts(g.c_child, n_states),
            g.c_parent[child_order].astype(np.int32),
            g.c_score[child_order].astype(np.float32),
        ),
    )


#: a caption-like sentence whose chart says which states are live most often (its order
#: only speeds the sparse chart up: any order gives the same cells)
CALIBRATION = (
    "a man in a red shirt is riding a bike down a busy street next to a white car while two "
    "small dogs run on the green grass near a tall building and a woman holds an umbrella"
)


@dataclass(frozen=True)
class _Renumbered:
    """The sparse chart's state numbers (:func:`.kernel.fill_columns`): ``number[s]`` is
    state ``s``'s, ``state[i]`` the state numbered ``i``; the binary rules grouped by left
    child and the closed unary rules' parents in those numbers."""

    number: np.ndarray
    state: np.ndarray
    has_left: np.ndarray
    by_left: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]
    by_child: tuple[np.ndarray, np.ndarray, np.ndarray]


def _live_ranking(g: Grammar) -> np.ndarray:
    """The states by how many cells of :data:`CALIBRATION`'s chart they are live in, most
    first (ties in their own order)."""
    chart = Chart(g, Lexicon(g), CALIBRATION.split(), layout="dense")
    live = np.zeros(len(g.states), dtype=np.int64)
    for cell in chart.cells.values():
        live += cell > NEG_INF
    return np.argsort(-live, kind="stable")


#: the version of the cached rankings (a change of CALIBRATION or of the ranking: one more)
RANKING_VERSION = 1


def _cached_live_ranking(g: Grammar) -> np.ndarray:
    """:func:`_live_ranking`, kept in the user cache per grammar: its chart and the dense
    kernel's load cost a process 0.7 s before its first sparse chart. Any ranking gives
    the same cells (it only orders the states in memory), so a ranking that fails its
    checks is only computed again."""
    from capeval_core.resources import cache_dir, discard_damaged, dump_checked, load_checked

    sizes = f"{len(g.states)}-{len(g.b_parent)}-{len(g.c_parent)}"
    name = f"pcfg-live-ranking-{g.stamp}-{sizes}-v{RANKING_VERSION}.checked-pickle"
    path = cache_dir() / name
    try:
        state = load_checked(path)
        if isinstance(state, np.ndarray) and np.array_equal(
            np.sort(state), np.arange(len(g.states))
        ):
            return state
        discard_damaged(
            path, "PCFG state ranking", "not a ranking of the grammar's states", "ranking again"
        )
    except FileNotFoundError:
        pass
    except ResourceError as exc:
        discard_damaged(path, "PCFG state ranking", str(exc), "ranking again")
    state = _live_ranking(g)
    with contextlib.suppress(OSError):  # an unwritable cache costs the chart again
        dump_checked(state, path)
    return state


@functools.cache
def _renumbered(g: Grammar) -> _Renumbered:
    """States numbered by :func:`_cached_live_ranking`: the most often live first."""
    n_states = len(g.states)
    state = _cached_live_ranking(g)
    number = np.empty(n_states, dtype=np.int64)
    number[state] = np.arange(n_states)
    left, right, parent = number[g.b_left], number[g.b_right], number[g.b_parent]
    order = np.lexsort((right, left))
    c_start, c_parent, c_score = _rules(g).by_child
    return _Renumbered(
        number=number,
        state=state,
        has_left=np.bincount(left, minlength=n_states) > 0,
        by_left=(
            _group_starts(left, n_states),
            right[order].astype(np.int32),
            parent[order].astype(np.int32),
            g.b_score[order].astype(np.float32),
        ),
        by_child=(c_start, number[c_parent].astype(np.int32), c_score),
    )


def _group_starts(keys: np.ndarray, n: int) -> np.ndarray:
    """Where each key's run starts once ``keys`` are sorted (``n + 1`` entries)."""
    return np.r_[0, np.cumsum(np.bincount(keys, minlength=n))].astype(np.int64)


def _relax(v: np.ndarray, parent: np.ndarray, child: np.ndarray, score: np.ndarray) -> bool:
    """One pass of closed unary rules over ``v`` (in place); whether anything improved."""
    cand = v[child] + score
    live = cand > v[parent]
    if not live.any():
        return False
    np.maximum.at(v, parent[live], cand[live])
    return True


def _unaries(v: np.ndarray, rules: _Rules) -> None:
    """CoreNLP's unary step on one cell (in place). It visits states in increasing order and
    applies each one's closed rules with the state's score as it is then: so a state's score
    at its visit is the best over chains of rules that climb in state number, and the final
    score of a state adds one more rule from any state visited after it."""
    while _relax(v, *rules.up):
        pass
    _relax(v, *rules.down)  # from the scores at each state's visit: computed before any update


class SparseCells(Mapping[tuple[int, int], np.ndarray]):
    """The compiled chart's cells, each stored as its live states (state number and score,
    :func:`.kernel.fill_columns`), read as dense float32 vectors like the numpy chart's
    (the last :data:`CACHED` read are kept: reading a parse back asks for the same cells
    many times)."""

    CACHED = 1024

    def __init__(
        self,
        spans: Sequence[tuple[int, int]],
        idx: list[np.ndarray],
        val: list[np.ndarray],
        off: np.ndarray,
        n_live: np.ndarray,
        state: np.ndarray,
    ) -> None:
        self._spans = dict.fromkeys(spans)
        self._idx, self._val, self._off, self._n_live = idx, val, off, n_live
        self._state = state  # the kernel's state numbers -> the grammar's
        self._cache: OrderedDict[tuple[int, int], np.ndarray] = OrderedDict()

    def live(self, span: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
        """The cell's live states (the grammar's numbers) and their scores, in no order."""
        if span not in self._spans:
            raise KeyError(span)
        start, end = span
        o, k = int(self._off[start, end]), int(self._n_live[start, end])
        return self._state[self._idx[end][o : o + k]], self._val[end][o : o + k]

    def __getitem__(self, span: tuple[int, int]) -> np.ndarray:
        cell = self._cache.get(span)
        if cell is not None:
            self._cache.move_to_end(span)
            return cell
        states, scores = self.live(span)
        cell = np.full(len(self._state), NEG_INF, dtype=np.float32)
        cell[states] = scores
        cell.flags.writeable = False
        self._cache[span] = cell
        if len(self._cache) > self.CACHED:
            self._cache.popitem(last=False)
        return cell

    def __contains__(self, span: object) -> bool:
        return span in self._spans

    def __iter__(self) -> Iterator[tuple[int, int]]:
        return iter(self._spans)

    def __len__(self) -> int:
        return len(self._spans)

    def nbytes(self) -> int:
        """The memory the stored cells take."""
        return sum(a.nbytes for a in self._idx) + sum(a.nbytes for a in self._val)


class Chart:
    """Inside scores of one sentence (its words plus the boundary word).

    ``kernel`` is ``"compiled"`` (:mod:`.kernel`, the default) or ``"numpy"`` (the reference
    the compiled loops are checked against, cell by cell, bit for bit). The compiled chart is
    dense up to :data:`DENSE_MAX_WORDS` words and sparse beyond (:class:`SparseCells`; a
    third of the memory), unless ``layout`` says ``"dense"`` or ``"sparse"``. ``progress``,
    where given, hears the share of the sparse chart's work done (0 to 1) as it goes, a
    column of spans at a time."""

    def __init__(
        self,
        g: Grammar,
        lexicon: Lexicon,
        words: Sequence[str],
        kernel: str = "compiled",
        progress: Callable[[float], None] | None = None,
        layout: str | None = None,
    ) -> None:
        if kernel not in ("compiled", "numpy"):
            raise ValueError(f"`kernel` must be 'compiled' or 'numpy' (got {kernel!r})")
        if layout not in (None, "dense", "sparse"):
            raise ValueError(f"`layout` must be None, 'dense' or 'sparse' (got {layout!r})")
        self.g, self.lexicon, self.rules = g, lexicon, _rules(g)
        self.kernel, self.layout = kernel, layout
        self.progress = progress
        self.words = [*words, BOUNDARY_WORD]
        self.n = len(self.words)
        self.flooded = False
        self.cells: Mapping[tuple[int, int], np.ndarray] = {}
        self._fill()
        if not self.has_parse() and not self.flooded:  # CoreNLP's recovery parse
            self.flooded = True
            self.cells = {}
            self._fill()

    def has_parse(self) -> bool:
        return bool(self.cells[(0, self.n)][self.g.goal] > NEG_INF)

    @property
    def best_score(self) -> np.float32:
        return self.cells[(0, self.n)][self.g.goal]

    def spans(self) -> list[tuple[int, int]]:
        """The spans whose cells are built, by width: every word, then the spans that do not
        end at the boundary word, then the whole sentence (the boundary combines only there)."""
        n = self.n
        out = [(start, start + 1) for start in range(n)]
        for width in range(2, n + 1):
            starts = range(1) if width == n else range(n - width)
            out.extend((start, start + width) for start in starts)
        return out

    def _fill(self) -> None:
        if self.kernel == "compiled":
            self._fill_compiled()
            return
        self.live: dict[tuple[int, int], np.ndarray] = {}  # each cell's states with a score
        for start, end in self.spans():
            cell = self._lexical(start) if end - start == 1 else self._binary(start, end)
            self.cells[(start, end)] = cell
            self.live[(start, end)] = cell > NEG_INF

    def _fill_compiled(self) -> None:
        sparse = self.n - 1 > DENSE_MAX_WORDS if self.layout is None else self.layout == "sparse"
        if sparse:
            self._fill_sparse()
            return
        from capeval_core.spice.pcfg import kernel

        spans = self.spans()
        row = np.full((self.n, self.n + 1), -1, dtype=np.int64)
        chart = np.full((len(spans), len(self.g.states)), NEG_INF, dtype=np.float32)
        for k, (start, end) in enumerate(spans):
            row[start, end] = k
            if end - start == 1:
                self._tag_scores(start, chart[k])
        r = self.rules
        kernel.fill(chart, row, self.n, *r.by_left, *r.by_child)
        self.cells = {span: chart[k] for k, span in enumerate(spans)}

    def _fill_sparse(self) -> None:
        from capeval_core.spice.pcfg import kernel

        n, n_states, r = self.n, len(self.g.states), _renumbered(self.g)
        lex_start, lex_state, lex_score = self._lexical_entries()
        lex_state = r.number[lex_state].astype(np.int32)
        col = np.full((n, n_states), NEG_INF, dtype=np.float32)
        idx, val = kernel.new_columns()
        off = np.zeros((n + 1, n + 1), dtype=np.int64)
        n_left = np.zeros((n + 1, n + 1), dtype=np.int32)
        n_live = np.zeros((n + 1, n + 1), dtype=np.int32)
        args = (n, col, idx, val, off, n_left, n_live, lex_start, lex_state, lex_score,
                r.has_left, *r.by_left, r.number, *r.by_child)  # fmt: skip
        if self.progress is None:
            kernel.fill_columns(1, n + 1, *args)
        else:  # a column at a time, each taking its share of the work (its spans' splits)
            work = np.cumsum([1 + end * (end - 1) / 2 for end in range(1, n + 1)])
            for end in range(1, n + 1):
                kernel.fill_columns(end, end + 1, *args)
                self.progress(float(work[end - 1] / work[-1]))
        del col
        columns = [kernel.column(idx, val, end) for end in range(n + 1)]
        self.cells = SparseCells(
            self.spans(), [c[0] for c in columns], [c[1] for c in columns], off, n_live, r.state
        )

    def _lexical_entries(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Each word's tag scores (before unaries) as (state, score) entries, word ``i``'s
        from ``starts[i]`` to ``starts[i + 1]``."""
        v = np.empty(len(self.g.states), dtype=np.float32)
        states, scores, starts = [], [], [0]
        for start in range(self.n):
            v.fill(NEG_INF)
            self._tag_scores(start, v)
            live = np.flatnonzero(v > NEG_INF)
            states.append(live)
            scores.append(v[live])
            starts.append(starts[-1] + live.size)
        return (
            np.array(starts, dtype=np.int64),
            np.concatenate(states).astype(np.int32),
            np.concatenate(scores).astype(np.float32),
        )

    def _lexical(self, start: int) -> np.ndarray:
        v = np.full(len(self.g.states), NEG_INF, dtype=np.float32)
        self._tag_scores(start, v)
        _unaries(v, self.rules)
        return v

    def _tag_scores(self, start: int, v: np.ndarray) -> None:
        """The lexicon's scores of the word at ``start`` into its cell ``v`` (before unaries)."""
        g, lex, word = self.g, self.lexicon, self.words[start]
        boundary = word == BOUNDARY_WORD
        tags, scores = lex.tagging_arrays(word, start) if not self.flooded or boundary else _NONE
        if not tags.size:
            tags, scores = as_arrays(lex.all_taggings(word, start))
        states = g.tag_state[tags]
        v[states[states >= 0]] = scores[states >= 0]  # a tag has its own state (or none)
        if self.flooded and not boundary:
            v[self.rules.is_tag & (v == NEG_INF)] = FLOOD_SCORE

    def _binary(self, start: int, end: int) -> np.ndarray:
        r = self.rules
        # cells ending at the boundary word but for the last one are never built (-inf)
        splits = [
            m for m in range(start + 1, end) if (start, m) in self.cells and (m, end) in self.cells
        ]
        pairs = [(self.cells[(start, m)], self.cells[(m, end)]) for m in splits]
        v = np.full(len(self.g.states), NEG_INF, dtype=np.float32)
        if pairs:
            live_l = np.logical_or.reduce([self.live[(start, m)] for m in splits])
            live_r = np.logical_or.reduce([self.live[(m, end)] for m in splits])
            use = np.flatnonzero(live_l[r.left] & live_r[r.right])
            if use.size:
                lc, rc, score = r.left[use], r.right[use], r.score[use]
                tot = (score + pairs[0][0][lc]) + pairs[0][1][rc]
                for a, b in pairs[1:]:
                    np.maximum(tot, (score + a[lc]) + b[rc], out=tot)
                runs = np.flatnonzero(np.r_[True, r.parent[use][1:] != r.parent[use][:-1]])
                v[r.parent[use][runs]] = np.maximum.reduceat(tot, runs)
        _unaries(v, r)
        return v


def extract(chart: Chart, goal: int | None = None, start: int = 0, end: int | None = None) -> Tree:
    """The best parse as CoreNLP's pipeline reads it back (grammar states as labels, the
    boundary word included): its parser annotator asks for the 1-best of the lazy k-best
    search, which at each node takes the way of building it with the highest score summed in
    double precision (the rule's, then each child's chart score), the first of equals in the
    order binary rules over split points (left to right, each parent's rules in the grammar's
    order), then unary rules, are tried."""
    g, r = chart.g, chart.rules
    goal = g.goal if goal is None else goal
    end = chart.n if end is None else end
    label = g.states[goal]
    if end - start == 1 and r.is_tag[goal]:
        word = chart.words[start]
        tag = g.tag_index[label]
        lex = chart.lexicon
        if chart.flooded or lex.score(lex.word_id(word), tag, start, word) > NEG_INF:
            return Tree(label, [Tree(word)])
    best, how = -np.inf, None
    rules = r.by_parent.get(goal)
    if rules is not None:
        score, left, right = g.b_score[rules].astype(np.float64), g.b_left[rules], g.b_right[rules]
        for split in range(start + 1, end):
            left_cell = chart.cells.get((start, split))
            right_cell = chart.cells.get((split, end))
            if left_cell is None or right_cell is None:
                continue
            tot = (score + left_cell[left]) + right_cell[right].astype(np.float64)
            k = int(np.argmax(tot))  # the first of the highest
            if tot[k] > best:
                best, how = float(tot[k]), (split, int(rules[k]))
    cell = chart.cells[(start, end)]
    for child, score in r.unary_by_parent.get(goal, ()):
        tot = float(score) + float(cell[child])
        if child != goal and tot > best:
            best, how = tot, (None, child)
    if how is None:
        raise ValueError(f"no parse of {label} over words {start}-{end} can be read back")
    split, which = how
    if split is None:
        return Tree(label, [extract(chart, which, start, end)])
    return Tree(
        label,
        [
            extract(chart, int(g.b_left[which]), start, split),
            extract(chart, int(g.b_right[which]), split, end),
        ],
    )
