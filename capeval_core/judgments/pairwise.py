"""Generic pairwise judgments: one row per pair (CSV, TSV, JSON array, JSONL).

Columns (judgment-formats.md): ``candidate_a``, ``candidate_b``, references as for graded
files, and either ``preferred`` (``a``/``b``/``tie``) or vote counts ``votes_a``/``votes_b``;
optional ``category`` (e.g. HC/HI/HM/MM), ``id`` and ``image_id``.
"""

from __future__ import annotations

import os
from pathlib import Path

from capeval_core.judgments.base import (
    DEFAULT_MAX_BYTES,
    JudgmentSet,
    PairItem,
    Row,
    blank_cells,
    caption_cell,
    cell_error,
    format_error,
    id_cell,
    image_key,
    is_missing,
    parse_number,
    places,
    read_records,
    text_cell,
    unique_ids,
)
from capeval_core.judgments.external import read_pair_metric_cells, with_file_metrics
from capeval_core.judgments.graded import ReferenceSource, require_columns, row_id

PREFERENCES = ("a", "b", "tie")


def preference_from_votes(votes_a: int, votes_b: int) -> str | None:
    """Majority of the votes; equal counts are a tie (broken later by the human-tie rule),
    and no vote at all is no label (it was a tie, which the random tie rule then counted as
    a judged pair).

    >>> preference_from_votes(6, 4), preference_from_votes(5, 5), preference_from_votes(0, 0)
    ('a', 'tie', None)
    """
    if votes_a == votes_b == 0:
        return None
    return "a" if votes_a > votes_b else "b" if votes_b > votes_a else "tie"


def load_pairwise(
    path: str | os.PathLike[str],
    *,
    file_format: str | None = None,
    references_from: str | os.PathLike[str] | None = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
    preset: str | None = None,
    checksum: str | None = None,
) -> JudgmentSet:
    """Read a generic pairwise file into a JudgmentSet of kind ``"pairwise"``; its
    ``metric:<name>:a``/``:b`` columns are an external metric (``checksum`` as in
    :func:`~capeval_core.judgments.graded.load_graded`).

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "p.jsonl"
    >>> _ = p.write_text('{"candidate_a": "a dog", "candidate_b": "a cat", '
    ...                  '"references": ["a dog runs"], "votes_a": 3, "votes_b": 1}\\n')
    >>> load_pairwise(p).items[0].preferred
    'a'
    """
    fmt, columns, rows = read_records(path, file_format, max_bytes=max_bytes)
    require_columns(path, columns, ["candidate_a", "candidate_b"])
    has_votes = "votes_a" in columns or "votes_b" in columns
    if has_votes:
        require_columns(path, columns, ["votes_a", "votes_b"])
    elif "preferred" not in columns:
        raise format_error(
            path,
            "missing required column 'preferred' (or votes_a and "
            f"votes_b); columns found: {list(columns)}",
            line=1,
            column="preferred",
        )
    refs = ReferenceSource(path, columns, references_from, max_bytes)
    items: list[PairItem] = []
    ids = []
    blank: dict[str, list[Row]] = {"candidate_a": [], "candidate_b": []}
    unvoted: list[Row] = []  # no vote for either candidate: no label, said where
    missing: dict[str, list[Row]] = {}  # per reason, the rows dropped for it
    dropped_keys: dict[str, str] = {}  # a scores file's rows of these are said as such
    kept: list[int] = []
    kept_rows: list[Row] = []
    for n, row in enumerate(rows, start=1):
        ident = row_id(row, columns, path, fmt, n)
        ids.append((ident, row))
        image = (
            image_key(id_cell(row.values["image_id"], path, row, "image_id"))
            if row.values.get("image_id") not in (None, "")
            else ident
        )
        cand_a = caption_cell(row, path, "candidate_a").strip()
        cand_b = caption_cell(row, path, "candidate_b").strip()
        references = refs.get(row, image)
        preferred = _preferred(path, row) if "preferred" in columns else None
        votes_a = votes_b = None
        no_vote = next(
            (c for c in ("votes_a", "votes_b") if has_votes and is_missing(row.values.get(c))),
            None,
        )
        if has_votes and no_vote is None:
            votes_a, votes_b = (_votes(path, row, c) for c in ("votes_a", "votes_b"))
            from_votes = preference_from_votes(votes_a, votes_b)
            if preferred is not None and preferred != from_votes:
                raise cell_error(
                    path,
                    row,
                    "preferred",
                    f"preferred is {preferred!r} but the votes "
                    f"({votes_a} vs {votes_b}) say "
                    + (repr(from_votes) if from_votes else "nothing (no vote, no label)"),
                )
            preferred = from_votes
            unvoted += [row] if from_votes is None else []
        elif preferred is None:  # no human judgment: the row is dropped, and said, as graded
            reason = (
                f"missing human vote in column {no_vote!r}"
                if no_vote
                else "missing human preference in column 'preferred'"
            )
            missing.setdefault(reason, []).append(row)
            dropped_keys[ident] = f"of pairs dropped for a {reason}"
            continue
        for column, text in (("candidate_a", cand_a), ("candidate_b", cand_b)):
            blank[column] += [row] if not text else []
        category = row.values.get("category")
        category = (
            None if category in (None, "") else text_cell(category, path, row, "category").strip()
        )
        kept.append(n - 1)
        kept_rows.append(row)
        items.append(
            PairItem(
                ident,
                image,
                cand_a,
                cand_b,
                references,
                preferred,
                votes_a,
                votes_b,
                category,
            )
        )  # type: ignore[arg-type]
    unique_ids(path, ids)
    refs.warn_separators()
    external = read_pair_metric_cells(path, rows, columns, kept)
    sources = tuple(Path(p).name for p in (path, references_from) if p is not None)
    # the count of unlabelled pairs is said wherever the set is used; this says which
    notes = (
        (f"{sources[0]}: no vote for either candidate, so no human label: {places(unvoted)}",)
        if unvoted
        else ()
    )
    jset = JudgmentSet(
        "pairwise",
        tuple(items),
        (),
        sources,
        n_read=len(rows),
        n_kept=len(items),
        dropped={reason: len(w) for reason, w in missing.items()},
        dropped_at={reason: places(w) for reason, w in missing.items()},
        format="pairwise",
        preset=preset,
        notes=notes,
        blank=tuple(b for column, found in blank.items() for b in blank_cells(column, found)),
        blank_references=refs.blank_cells(kept_rows),
        dropped_keys=dropped_keys,
    )
    return with_file_metrics(jset, path, external, checksum)


def _preferred(path, row) -> str | None:
    """A ``preferred`` cell: ``a``, ``b`` or ``tie``, or None when missing (empty, null,
    NaN, NA, n/a); any other value is an error."""
    value = row.values.get("preferred")
    if is_missing(value):
        return None
    raw = text_cell(value, path, row, "preferred").strip()
    if raw.lower() not in PREFERENCES:
        raise cell_error(
            path, row, "preferred", f"preferred must be one of a, b, tie (got {raw!r})"
        )
    return raw.lower()


def _votes(path, row, column: str) -> int:
    value = parse_number(row.values.get(column, ""), path, row, column, integer=True)
    if value < 0:
        raise cell_error(path, row, column, f"votes cannot be negative (got {int(value)})")
    return int(value)
