"""How much of the ``stanford-pcfg`` chart an exact pruning could skip: a measurement.

    python -m tools.spice_oracle.pcfg_pruning ORACLE.jsonl [--skip N] [--limit N]

A chart item may be left out without changing the parse only where a bound proves that no
parse through it reaches the best parse's score. This takes the best score itself as the
threshold (no real pruning knows it in advance, so these are the most any such bound gives) and
an outside score from a coarser grammar (each coarse rule the best of the fine rules it merges)
as the bound, and counts the live items it keeps:

- ``basic``: the 100 basic categories;
- ``history``: every state but the binarization's history (``@NP^PP-B| NN^NP_ ...`` becomes
  ``@NP^PP-B``), the finest projection still much smaller than the grammar.

It also times the full chart against one whose words may take only the jar's own tags (from
the oracle record), the most a tagger in front of the PCFG could save, and counts the parses a
beam (the best states of each cell by inside score) keeps. Needs the CoreNLP 3.6.0
models jar. Prints JSON.
"""

from __future__ import annotations

import argparse
import itertools
import json
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from capeval_core.spice.pcfg import cky
from capeval_core.spice.pcfg.grammar import Grammar, load_grammar
from capeval_core.spice.pcfg.lexicon import Lexicon
from capeval_core.spice.pcfg.parser import americanize
from capeval_core.spice.pcfg.trees import basic_category
from tools.spice_oracle import use_models_jar

PROJECTIONS: dict[str, Callable[[str], str]] = {
    "basic": basic_category,
    "history": lambda s: s.split("|")[0] if s.startswith("@") else s,
}


class Coarse:
    """A projection of the grammar: max-merged binary and closed unary rules."""

    def __init__(self, g: Grammar, project: Callable[[str], str]) -> None:
        names = sorted({project(s) for s in g.states})
        index = {c: i for i, c in enumerate(names)}
        self.proj = np.array([index[project(s)] for s in g.states])
        self.size = c = len(names)
        keys = (self.proj[g.b_parent].astype(np.int64) * c + self.proj[g.b_left]) * c
        keys += self.proj[g.b_right]
        uniq, inv = np.unique(keys, return_inverse=True)
        self.score = np.full(len(uniq), -np.inf)
        np.maximum.at(self.score, inv, g.b_score.astype(np.float64))
        self.parent, self.left, self.right = uniq // (c * c), (uniq // c) % c, uniq % c
        ukeys, uinv = np.unique(
            self.proj[g.c_parent].astype(np.int64) * c + self.proj[g.c_child], return_inverse=True
        )
        uscore = np.full(len(ukeys), -np.inf)
        np.maximum.at(uscore, uinv, g.c_score.astype(np.float64))
        keep = ukeys // c != ukeys % c
        self.u_parent, self.u_child, self.u_score = ukeys[keep] // c, ukeys[keep] % c, uscore[keep]

    def _close(self, v: np.ndarray, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
        while True:  # any chain of unary rules: an upper bound on CoreNLP's sequential step
            cand = v[src] + self.u_score
            live = cand > v[dst]
            if not live.any():
                return v
            np.maximum.at(v, dst[live], cand[live])

    def outside(self, chart: cky.Chart) -> dict[tuple[int, int], np.ndarray]:
        """Coarse outside scores over the fine chart's cells (upper bounds on the fine ones)."""
        inside: dict[tuple[int, int], np.ndarray] = {}
        for span in sorted(chart.cells, key=lambda k: k[1] - k[0]):
            v = np.full(self.size, -np.inf)
            if span[1] - span[0] == 1:
                np.maximum.at(v, self.proj, chart.cells[span].astype(np.float64))
            else:
                for a, b in self._splits(span, inside):
                    np.maximum.at(v, self.parent, self.score + a[self.left] + b[self.right])
                v = self._close(v, self.u_child, self.u_parent)
            inside[span] = v
        out = {k: np.full(self.size, -np.inf) for k in inside}
        out[(0, chart.n)][self.proj[chart.g.goal]] = 0.0
        for span in sorted(inside, key=lambda k: k[0] - k[1]):
            o = self._close(out[span], self.u_parent, self.u_child)
            for m in range(span[0] + 1, span[1]):
                left, right = (span[0], m), (m, span[1])
                if left in inside and right in inside:
                    top = o[self.parent] + self.score
                    np.maximum.at(out[left], self.left, top + inside[right][self.right])
                    np.maximum.at(out[right], self.right, top + inside[left][self.left])
        return out

    @staticmethod
    def _splits(span: tuple[int, int], inside: dict) -> list[tuple[np.ndarray, np.ndarray]]:
        s, e = span
        return [
            (inside[(s, m)], inside[(m, e)])
            for m in range(s + 1, e)
            if (s, m) in inside and (m, e) in inside
        ]


class TagChart(cky.Chart):
    """The chart with each word's tags limited to those of one basic tag (the jar's)."""

    def __init__(self, g: Grammar, lexicon: Lexicon, words: list[str], tags: list[str]) -> None:
        base = np.array([basic_category(t) for t in g.tags])
        self.allowed = [g.tag_state[(base == tag) & (g.tag_state >= 0)] for tag in tags]
        super().__init__(g, lexicon, words)

    def _lexical(self, start: int) -> np.ndarray:
        v = super()._lexical(start)
        if start >= len(self.allowed):
            return v  # the boundary word
        kept = np.full_like(v, cky.NEG_INF)
        kept[self.allowed[start]] = v[self.allowed[start]]
        cky._unaries(kept, self.rules)
        return kept


class BeamChart(cky.Chart):
    """The chart keeping only the ``beam`` best states of each cell by inside score."""

    def __init__(self, g: Grammar, lexicon: Lexicon, words: list[str], beam: int) -> None:
        self.beam = beam
        super().__init__(g, lexicon, words)

    def _binary(self, start: int, end: int) -> np.ndarray:
        v = super()._binary(start, end)
        live = np.flatnonzero(v > cky.NEG_INF)
        if end - start < self.n and live.size > self.beam:
            v[live[np.argsort(-v[live], kind="stable")[self.beam :]]] = cky.NEG_INF
        return v


def main() -> None:
    cli = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    cli.add_argument("oracle", type=Path)
    cli.add_argument("--skip", type=int, default=0, help="skip the first N records")
    cli.add_argument("--limit", type=int, default=25, help="measure at most N records")
    cli.add_argument("--beam", type=int, default=500, help="states a cell keeps in the beam")
    args = cli.parse_args()
    use_models_jar()
    g = load_grammar()
    lexicon = Lexicon(g)
    coarse = {name: Coarse(g, p) for name, p in PROJECTIONS.items()}
    live = 0
    kept = dict.fromkeys(coarse, 0)
    seconds = {"full": 0.0, "jar tags": 0.0}
    same = same_beam = sentences = 0
    with args.oracle.open(encoding="utf-8") as f:
        records = [
            json.loads(line) for line in itertools.islice(f, args.skip, args.skip + args.limit)
        ]
    for record in records:
        for s in record["sentences"]:
            words = [americanize(t[0]) for t in s["tokens"]]
            started = time.perf_counter()
            chart = cky.Chart(g, lexicon, words)
            seconds["full"] += time.perf_counter() - started
            started = time.perf_counter()
            tagged = TagChart(g, lexicon, words, [t[1] for t in s["tokens"]])
            seconds["jar tags"] += time.perf_counter() - started
            parse = str(cky.extract(chart))
            same += str(cky.extract(tagged)) == parse
            same_beam += str(cky.extract(BeamChart(g, lexicon, words, args.beam))) == parse
            sentences += 1
            best = float(chart.best_score) - 1e-3
            for name, c in coarse.items():
                out = c.outside(chart)
                for span, v in chart.cells.items():
                    bound = v.astype(np.float64) + out[span][c.proj]
                    kept[name] += int(np.count_nonzero(bound >= best))
            live += sum(int(np.count_nonzero(v > cky.NEG_INF)) for v in chart.cells.values())
    print(
        json.dumps(
            {
                "sentences": sentences,
                "live items per sentence": round(live / sentences),
                "kept by the coarse outside bound": {
                    name: f"{100 * k / live:.1f} %" for name, k in kept.items()
                },
                "ms per sentence": {k: round(1000 * v / sentences, 1) for k, v in seconds.items()},
                "jar-tag chart gives the same parse": f"{same} of {sentences}",
                f"beam of {args.beam} gives the same parse": f"{same_beam} of {sentences}",
            },
            indent=1,
        )
    )


if __name__ == "__main__":
    main()
