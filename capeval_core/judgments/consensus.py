"""Triplet consensus labels of PASCAL-50S and ABSTRACT-50S (the CIDEr authors' consensus
package: ``consensus_pascal.mat``, ``consensus_abstract.mat``).

Each file holds one variable, ``triplets``: a struct array (1xN or Nx1) with the fields ``A``
(a reference sentence), ``B`` and ``C`` (the two candidates of a pair) and ``rating`` (+1:
the worker found ``B`` more like ``A``; -1: ``C``). Every pair has one triplet per reference
(48), stored one pair after another. Triplets are matched to the pairs of a dataset by their
candidate strings (whitespace and case aside; ``B``/``C`` may be in either order), so the
file's order is never trusted. A pair's label is the majority of its triplets; equal counts
are a human tie, left to the protocol's human-tie rule (broken at random, seeded, or dropped).
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from capeval_core.judgments.base import (
    DEFAULT_MAX_BYTES,
    Row,
    blank_cells,
    blank_references_left_out,
    format_error,
)
from capeval_core.judgments.matfile import (
    elements,
    field_of,
    load_mat,
    number_of,
    text_of,
    variable,
)

VARIABLE = "triplets"
#: ``rating`` values: +1 = B is more like A, -1 = C is
RATINGS = (1.0, -1.0)


@dataclass(frozen=True)
class Triplet:
    """One worker's judgment: which of ``b``, ``c`` is more like the reference ``a``."""

    record: int  # 1-based element number in the struct array, as MATLAB counts
    a: str
    b: str
    c: str
    rating: int


def read_triplets(
    path: str | os.PathLike[str], max_bytes: int = DEFAULT_MAX_BYTES
) -> tuple[Triplet, ...]:
    """Every triplet of a consensus ``.mat`` file, validated.

    A NaN rating is an error (a missing judgment is not a tie), as is any value but +1/-1.
    """
    path = Path(path)
    mat = load_mat(path, max_bytes)
    structs = elements(variable(mat, (VARIABLE,), path))
    if not structs:
        raise format_error(path, f"{VARIABLE!r} is empty: no triplets", column=VARIABLE)
    out = []
    for i, s in enumerate(structs):
        a, b, c = (
            text_of(field_of(s, (name,), path, VARIABLE, i), path, f"{VARIABLE}.{name}", i)
            for name in ("A", "B", "C")
        )
        where = f"{VARIABLE}.rating"
        rating = number_of(field_of(s, ("rating",), path, VARIABLE, i), path, where, i)
        if math.isnan(rating):
            raise format_error(
                path,
                "rating is NaN: a missing judgment, not a tie (expected +1: B more like A, "
                "or -1: C more like A)",
                record=i,
                column=where,
            )
        if rating not in RATINGS:
            raise format_error(
                path,
                f"rating must be +1 (B more like A) or -1 (C more like A), got {rating:g}",
                record=i,
                column=where,
            )
        out.append(Triplet(i + 1, a, b, c, int(rating)))
    return tuple(out)


def match_key(text: str) -> str:
    """Candidates match whitespace- and case-insensitively.

    >>> match_key("  A man\\tRiding ") == match_key("a man riding")
    True
    """
    return " ".join(text.split()).casefold()


@dataclass(frozen=True)
class PairVotes:
    """The triplets of one pair: votes for its candidates a and b, their references (the
    ``A`` sentences, in file order), the record of its first triplet and the records of
    those whose ``A`` is blank (left out of the references, and said where they are used:
    :func:`blank_a_left_out`)."""

    votes_a: int
    votes_b: int
    references: tuple[str, ...]
    first: int
    blank_a: tuple[int, ...] = ()


@dataclass(frozen=True)
class ConsensusMatch:
    """Triplets matched to pairs. ``pairs[i]`` is None where pair i has no triplet;
    ``unmatched`` and ``ambiguous`` hold triplet record numbers."""

    source: str
    pairs: tuple[PairVotes | None, ...]
    unmatched: tuple[int, ...]
    ambiguous: tuple[int, ...]
    n_triplets: int

    @property
    def without_triplets(self) -> list[int]:
        return [i for i, p in enumerate(self.pairs) if p is None]

    @property
    def n_ties(self) -> int:
        return sum(1 for p in self.pairs if p is not None and p.votes_a == p.votes_b)

    def notes(self, pair_names: Sequence[str] | None = None) -> list[str]:
        """What the match found, one line each: labelled pairs and ties, triplets that match
        no pair, pairs without a triplet."""
        n = len(self.pairs)
        labelled = n - len(self.without_triplets)
        lines = [
            f"labels: majority of the triplets of {self.source} ({self.n_triplets:,} "
            f"triplets); {labelled:,} of {n:,} pairs labelled, {self.n_ties:,} human ties "
            "(equal counts)"
        ]
        if self.unmatched:
            lines.append(
                f"{len(self.unmatched):,} triplets of {self.source} match no pair by their "
                f"candidates B, C (records {_some(self.unmatched)}); they are not used"
            )
        if self.ambiguous:
            lines.append(
                f"{len(self.ambiguous):,} triplets of {self.source} name candidates shared by "
                f"several pairs and cannot be told apart (records {_some(self.ambiguous)}); "
                "they are not used"
            )
        if self.without_triplets:
            shown = [
                pair_names[i] if pair_names is not None else str(i + 1)
                for i in self.without_triplets[:5]
            ]
            more = " ..." if len(self.without_triplets) > 5 else ""
            lines.append(
                f"{len(self.without_triplets):,} pairs have no triplet in {self.source}, so "
                f"no label (pairs {', '.join(shown)}{more})"
            )
        return lines


def _some(records: Sequence[int], limit: int = 5) -> str:
    shown = ", ".join(str(r) for r in records[:limit])
    return shown + (" ..." if len(records) > limit else "")


def _runs(triplets: Sequence[Triplet]) -> list[tuple[tuple[str, str], list[Triplet]]]:
    """Consecutive triplets with the same candidates (the file stores one pair's together)."""
    runs: list[tuple[tuple[str, str], list[Triplet]]] = []
    for t in triplets:
        key = (match_key(t.b), match_key(t.c))
        if runs and runs[-1][0] == key:
            runs[-1][1].append(t)
        else:
            runs.append((key, [t]))
    return runs


def match_triplets(
    pairs: Sequence[tuple[str, str]], triplets: Sequence[Triplet], source: str
) -> ConsensusMatch:
    """Votes and references of each pair ``(candidate a, candidate b)`` from ``triplets``.

    A triplet belongs to the pair whose candidates are its ``B`` and ``C`` (``B`` = a is
    tried first, then ``B`` = b). Where several pairs have the same candidates, the file's
    runs of consecutive triplets are given to them in order when there is one run per pair;
    otherwise those triplets are reported as ambiguous and the pairs stay unlabelled.

    >>> t = [Triplet(1, "r1", "x", "y", 1), Triplet(2, "r2", "y", "x", 1),
    ...      Triplet(3, "r3", "p", "q", -1)]
    >>> m = match_triplets([("x", "y")], t, "c.mat")
    >>> m.pairs[0], m.unmatched
    (PairVotes(votes_a=1, votes_b=1, references=('r1', 'r2'), first=1, blank_a=()), (3,))
    """
    index: dict[tuple[str, str], list[int]] = {}
    for i, (a, b) in enumerate(pairs):
        index.setdefault((match_key(a), match_key(b)), []).append(i)
    groups: dict[tuple[str, str], list[tuple[bool, list[Triplet]]]] = {}
    unmatched: list[int] = []
    for (kb, kc), run in _runs(triplets):
        if (kb, kc) in index:
            groups.setdefault((kb, kc), []).append((False, run))
        elif (kc, kb) in index:
            groups.setdefault((kc, kb), []).append((True, run))
        else:
            unmatched.extend(t.record for t in run)
    assigned: dict[int, list[tuple[bool, list[Triplet]]]] = {}
    ambiguous: list[int] = []
    for key, runs in groups.items():
        owners = index[key]
        if len(owners) == 1:
            assigned[owners[0]] = runs
        elif len(runs) == len(owners):
            for owner, run in zip(owners, runs, strict=True):
                assigned[owner] = [run]
        else:
            ambiguous.extend(t.record for _, run in runs for t in run)
    out: list[PairVotes | None] = []
    for i in range(len(pairs)):
        runs = assigned.get(i)
        if not runs:
            out.append(None)
            continue
        votes_a = votes_b = 0
        refs, blank_a = [], []
        for swapped, run in runs:
            for t in run:
                if (t.rating > 0) != swapped:  # B is candidate a unless swapped
                    votes_a += 1
                else:
                    votes_b += 1
                if t.a:
                    refs.append(t.a)
                else:
                    blank_a.append(t.record)
        first = min(t.record for _, run in runs for t in run)
        out.append(PairVotes(votes_a, votes_b, tuple(refs), first, tuple(sorted(blank_a))))
    return ConsensusMatch(
        source, tuple(out), tuple(sorted(unmatched)), tuple(sorted(ambiguous)), len(triplets)
    )


def blank_a_left_out(pairs: Sequence[PairVotes], source: str) -> list[str]:
    """The note of pairs scored against their triplets' ``A`` sentences: where the blank
    ones left out of those references are (nothing when there are none).

    >>> blank_a_left_out([PairVotes(2, 1, ("r1",), 1, (2, 3))], "c.mat")
    ["blank references left out (not scored): column 'triplets.A', c.mat, records 2 and 3"]
    """
    rows = [Row(0, {}, record=r - 1) for p in pairs for r in p.blank_a]  # Row counts from 0
    cells = blank_cells("triplets.A", rows, source)
    return [blank_references_left_out(cells)] if cells else []


def pairs_from_triplets(triplets: Sequence[Triplet]) -> list[tuple[str, str]]:
    """The distinct candidate pairs ``(B, C)`` in the order the file first names them
    (for a consensus file used without the dataset's pair list)."""
    seen: set[tuple[str, str]] = set()
    out = []
    for t in triplets:
        kb, kc = match_key(t.b), match_key(t.c)
        if (kb, kc) in seen or (kc, kb) in seen:
            continue
        seen.add((kb, kc))
        out.append((t.b, t.c))
    return out
