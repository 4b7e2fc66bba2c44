"""Metric scores computed elsewhere, beside the built-in metrics (issue 32).

A metric designer has per-caption scores of their own metric (or of CLIPScore, PAC-S,
BERTScore computed with another tool). capeval takes them in three ways, and from then on
such an *external metric* is a metric key of the set like ``cider_d``: correlations with
bootstrap intervals, Williams tests, the combined metric, pairwise accuracy and the heatmap.

- a column named ``metric:<name>`` in a judgment file (CSV/TSV header or JSON key);
- a separate scores file (CSV, TSV, JSON or JSONL): the set's id columns
  (:attr:`JudgmentSet.id_columns`, ``id`` for the generic format) and one column per metric,
  joined with :func:`join_scores_file`;
- in code, :func:`add_metric_scores` with an array of values.

The signature of an external metric is ``external:<name>|sha256:<12 hex digits>``: the
checksum of the file the scores came from (of the values themselves when they came from
code), so a number can be traced back to the exact scores behind it.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from capeval_core.errors import InputError
from capeval_core.judgments.base import (
    DEFAULT_MAX_BYTES,
    ExternalScores,
    JudgmentSet,
    Row,
    cell_error,
    comma_hint,
    format_error,
    image_key,
    is_missing,
    parse_number,
    places,
    read_records,
    text_cell,
)

#: the prefix of a judgment-file column that holds an external metric's scores
METRIC_PREFIX = "metric:"
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.\-]*")
#: how many unmatched ids an error message lists
SHOWN_IDS = 5


def metric_columns(columns: Sequence[str]) -> dict[str, str]:
    """``metric:<name>`` columns of a header, as ``{column: name}``.

    >>> metric_columns(["candidate", "metric:clipscore", "quality"])
    {'metric:clipscore': 'clipscore'}
    """
    return {c: c[len(METRIC_PREFIX) :].strip() for c in columns if c.startswith(METRIC_PREFIX)}


def check_name(name: str, existing: Sequence[str] = ()) -> str:
    """An external metric's name, refused when empty, oddly spelled, a built-in metric key
    or any key a metric reports, SPICE's categories included (its numbers would be taken
    for capeval's) or already on the set."""
    from capeval_core.metrics import METRICS, OPTIONAL_KEYS, REPORTED_KEYS

    name = name.strip() if isinstance(name, str) else name
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise InputError(
            f"external metric name {name!r}: use letters, digits, '_', '.' or '-' "
            "(starting with a letter or digit)"
        )
    builtin = {_folded(k): k for k in (*METRICS, *REPORTED_KEYS, *OPTIONAL_KEYS)}
    if _folded(name) in builtin:  # "CIDEr-D" and "BLEU_4" too: shown beside cider_d, bleu_4
        same = "" if name in builtin.values() else f" ({builtin[_folded(name)]}, spelt otherwise)"
        raise InputError(
            f"external metric name {name!r} is a built-in metric key{same}; rename it "
            f"(e.g. {name + '_own'!r}) so the two are never confused"
        )
    if name in existing:
        raise InputError(f"the set already has an external metric named {name!r}")
    return name


def _folded(name: str) -> str:
    """A name without case and separators: "CIDEr-D", "cider_d" and "Cider.D" are one."""
    return re.sub(r"[-_.\s]", "", name).casefold()


def is_index_column(name: str) -> bool:
    """Whether a column is pandas' index as ``to_csv`` writes it without ``index=False``
    (headed ``Unnamed: 0`` once read back, or with an empty header): row numbers, never a
    score nor a metric.

    >>> [is_index_column(c) for c in ("Unnamed: 0", "Unnamed: 3", "", "score")]
    [True, True, True, False]
    """
    return bool(_INDEX_NAME.fullmatch(name.strip()))


_INDEX_NAME = re.compile(r"(?:Unnamed: \d+)?")
#: what an index column is, said when one is named as the human score
INDEX_COLUMN = "pandas' index column (to_csv without index=False: row numbers)"
_ID_NAME = re.compile(r"(?:^|[_\s.\-])id$", re.I)  # id, seg_id, set_id, image id, ...
_CAMEL_ID = re.compile(r"[a-z]I[dD]$")  # imageId, segID


def is_id_column(name: str) -> bool:
    """Whether a column name says it holds ids (never a score, even when numeric).

    >>> [is_id_column(c) for c in ("id", "seg_id", "set_id", "imageId", "quality", "valid")]
    [True, True, True, True, False, False]
    """
    name = name.strip()
    return bool(_ID_NAME.search(name) or _CAMEL_ID.search(name))


def file_checksum(path: str | os.PathLike[str]) -> str:
    """sha256 of a file's bytes (hex)."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def add_metric_scores(
    jset: JudgmentSet,
    name: str,
    values: Sequence[float] | np.ndarray,
    values_b: Sequence[float] | np.ndarray | None = None,
    *,
    checksum: str | None = None,
    source: str = "values",
) -> JudgmentSet:
    """A copy of ``jset`` with the external metric ``name`` added (the set is not changed).

    Graded sets take one value per item; pairwise sets the values of candidate a
    (``values``) and of candidate b (``values_b``). ``checksum`` defaults to the sha256 of
    the values themselves.

    >>> from capeval_core.judgments.base import GradedItem, JudgmentSet
    >>> items = tuple(GradedItem(str(i), str(i), "a dog", ("a dog",), (float(i),))
    ...               for i in range(3))
    >>> js = JudgmentSet("graded", items, ("q",), ("toy",), n_read=3, n_kept=3)
    >>> new = add_metric_scores(js, "mine", [0.1, 0.5, 0.9])
    >>> new.external_names, new.external[0].signature.split("|")[0], js.external_names
    (('mine',), 'external:mine', ())
    """
    name = check_name(name, jset.external_names)
    n = len(jset)
    arrays = [values] if jset.kind == "graded" else [values, values_b]
    if jset.kind == "pairwise" and values_b is None:
        raise InputError("a pairwise set needs `values_b`: the scores of candidate b")
    rows = []
    for label, v in zip(("values", "values_b"), arrays, strict=False):
        arr = np.asarray(v, dtype=float)
        if arr.ndim != 1 or arr.size != n:
            raise InputError(
                f"`{label}` of {name!r} must have one value per item of the set "
                f"(got shape {arr.shape} for {n:,} items)"
            )
        if not np.isfinite(arr).all():
            bad = int(np.flatnonzero(~np.isfinite(arr))[0])
            raise InputError(
                f"`{label}` of {name!r}: item {jset.items[bad].id!r} has no finite value "
                f"({arr[bad]})"
            )
        rows.append(arr)
    data = rows[0] if jset.kind == "graded" else np.stack(rows)
    data.setflags(write=False)
    ext = ExternalScores(name, data, "", source)
    ext = dataclasses.replace(ext, checksum=checksum or ext.values_digest)
    return dataclasses.replace(
        jset, external=(*jset.external, ext), content_digest="", items_digest=jset.items_digest
    )


def join_scores_file(
    jset: JudgmentSet,
    path: str | os.PathLike[str],
    *,
    file_format: str | None = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
    replace: bool = False,
    id_names: Mapping[str, str] | None = None,
) -> JudgmentSet:
    """A copy of ``jset`` with every metric column of a scores file added, joined on the set's
    id columns (:attr:`JudgmentSet.id_columns`), or on the names ``id_names`` gives them
    (set's column -> the user's own name, as a column mapping renamed it: ``{"id": "seg"}``)
    where the file has that name instead. Metric columns are the ``metric:<name>``
    columns when there are any, else every column that is not an id column.

    Several items may share a key (Flickr8k-Expert's published preset: the three experts'
    rows of one caption get its one score). Every item of the set needs a row; ids the set
    does not have (e.g. rows a preset dropped) are allowed and counted in the set's notes.
    A generic file without an ``id`` column numbers its items by line (CSV, TSV, JSONL) or
    record (JSON array, from 1). On any error the set is unchanged (a new one is returned
    only on success).

    Pairwise sets: columns ``<name>:a`` and ``<name>:b`` (or ``metric:<name>:a`` ...) hold
    the two candidates' scores.

    An external metric the set has already is refused unless ``replace``: then its scores
    are the file's (a metric designer joining corrected scores), said in the set's notes.

    Columns that are not scores: every id column (the set's, and any other whose name says
    id: ``set_id``, ``image_id``, ``segId``) and every column of text only (a caption, an
    image file name) are left out (said in the notes), and so is pandas' index (``Unnamed: 0``
    or an empty first header field: row numbers). A column whose every cell is a number
    written with a decimal comma is refused at its first cell. A long file (the set's ids, a
    ``metric`` column naming the metric and one column of values, as leaderboards distribute
    scores) is pivoted to one column per metric: each (id, metric) once, a repeat refused.
    """
    _, columns, rows = read_records(path, file_format, max_bytes=max_bytes, what="scores file")
    own = dict(id_names or {})
    # the file's own names of the set's id columns: an error names them as the file has them
    ids = tuple(
        own[c] if c not in columns and own.get(c) in columns else c for c in jset.id_columns
    )
    missing = [c for c in ids if c not in columns]
    if missing:
        also = [f"{own[c]!r} for {c!r}" for c in missing if own.get(c) and own[c] != c]
        raise format_error(
            path,
            f"missing id column(s) {missing}: a scores file for this {jset.format} set joins "
            f"on {list(ids)}"
            + (f" (or as its file named them: {', '.join(also)})" if also else "")
            + f" (columns found: {list(columns)})",
            line=1,
            column=missing[0],
        )
    columns, rows, left_out = _wide(path, columns, rows, ids)
    metrics = _score_columns(path, columns, ids, jset.kind)
    by_id: dict[str, Row] = {}
    for row in rows:
        key = _row_key(path, row, ids)
        if key in by_id:
            raise cell_error(
                path, row, ids[0], f"duplicate id {key!r} (first seen on {by_id[key].place})"
            )
        by_id[key] = row
    wanted = list(jset.item_keys())
    unmatched = [i for i in dict.fromkeys(wanted) if i not in by_id]
    if unmatched:
        # a few of the file's own ids beside them: '1.0' against '1' is seen at once
        # not the rows the set dropped (a preset's Human rows): those are no one's match
        theirs = [i for i in by_id if i not in set(wanted) and i not in jset.dropped_keys]
        held = f"; the file's ids that match none: {_shown(theirs)}" if theirs else ""
        raise format_error(
            path,
            f"{len(unmatched):,} of the set's {len(set(wanted)):,} ids have no row here "
            f"(joined on {list(ids)}): {_shown(unmatched)}{held}; the set is unchanged",
            column=ids[0],
        )
    checksum = file_checksum(path)
    source = Path(path).name
    out = jset
    replaced = [e.name for e in jset.external if e.name in metrics] if replace else []
    if replaced:
        out = dataclasses.replace(
            jset, external=tuple(e for e in jset.external if e.name not in replaced)
        )
    for name, cols in metrics.items():
        _file_name(path, cols[0], name, out.external_names, jset.score_names)
        arrays = [
            [_score(path, by_id[i], c, f"no {c!r} score for id {i!r}") for i in wanted]
            for c in cols
        ]
        out = add_metric_scores(out, name, *arrays, checksum=checksum, source=source)
    notes = []
    if replaced:
        notes.append(f"{source}: replaced the scores joined before of {', '.join(replaced)}")
    if left_out:
        notes.append(f"{source}: not scores, left out: {', '.join(map(repr, left_out))}")
    wanted_keys = set(wanted)
    extra: dict[str, list[Row]] = {}  # which rows (those the set dropped, or none) -> rows
    for key, row in by_id.items():
        if key not in wanted_keys:
            extra.setdefault(jset.dropped_keys.get(key, ""), []).append(row)
    for which, found in sorted(extra.items(), key=lambda e: e[0] == ""):
        which = which or "match no item of the set"
        notes.append(f"{source}: {len(found):,} row(s) {which} (ignored): {places(found)}")
    if notes:
        out = dataclasses.replace(out, notes=(*out.notes, *notes))
    return out


def _shown(ids: Sequence[str]) -> str:
    """The first :data:`SHOWN_IDS` ids, and how many more.

    >>> _shown(["1", "2"]), _shown([str(i) for i in range(7)])
    ("'1', '2'", "'0', '1', '2', '3', '4' and 2 more")
    """
    more = f" and {len(ids) - SHOWN_IDS:,} more" if len(ids) > SHOWN_IDS else ""
    return ", ".join(repr(i) for i in ids[:SHOWN_IDS]) + more


def _score(path: str | os.PathLike[str], row: Row, column: str, missing: str) -> float:
    """The number in ``column`` of ``row``; where the cell is empty (or NaN, NA: a missing
    value as pandas and R write one), an error saying ``missing``."""
    cell = row.values.get(column)
    if is_missing(cell):
        raise cell_error(path, row, column, missing)
    return parse_number(cell, path, row, column)


#: the column that names the metric of each row in a long scores file
LONG_NAME_COLUMNS = ("metric", "metric_name", "measure")


def _wide(
    path: str | os.PathLike[str], columns: Sequence[str], rows: Sequence[Row], ids: Sequence[str]
) -> tuple[list[str], list[Row], list[str]]:
    """``(columns, rows, left out)`` with the columns that hold no scores left out (other id
    columns, text-only columns) and a long file pivoted to one column per metric."""
    # pandas' index (an empty first header field, or ``Unnamed: 0`` as read back): row
    # numbers, left out without a word, as the judgment loader leaves it out of the scores
    index = [c for c in columns if c not in ids and is_index_column(c)]
    columns = [c for c in columns if c not in index]
    other = [c for c in columns if c not in ids]
    text_only = [c for c in other if _text_only(rows, c)]
    for c in text_only:
        if not is_id_column(c):
            _refuse_decimal_commas(path, rows, c)
    left_out = [c for c in other if is_id_column(c) or (c in text_only and not _long_name(c))]
    names = [c for c in other if _long_name(c) and c in text_only]
    values = [c for c in other if c not in left_out and c not in names]
    if not names:
        return [c for c in columns if c not in left_out], list(rows), left_out
    if len(names) > 1 or len(values) != 1:
        raise format_error(
            path,
            f"a long scores file has the id columns {list(ids)}, one column naming the metric "
            f"({names[0]!r}) and one column of values (found {values or 'none'}); or give one "
            "column per metric",
            line=1,
            column=names[0],
        )
    name_col, value_col = names[0], values[0]
    wide: dict[tuple, Row] = {}
    seen: dict[tuple, int] = {}
    metrics: list[str] = []
    for row in rows:
        metric = str(row.values.get(name_col) or "").strip()
        if not metric:
            raise cell_error(path, row, name_col, "no metric name")
        key = tuple(row.values.get(c) for c in ids)
        if (key, metric) in seen:
            raise cell_error(
                path,
                row,
                value_col,
                f"a second {metric!r} score for the same ids (first on line "
                f"{seen[key, metric]}); a long file holds each (id, metric) once",
            )
        seen[key, metric] = row.line
        if metric not in metrics:
            metrics.append(metric)
        if key not in wide:
            wide[key] = Row(row.line, {c: row.values.get(c) for c in ids}, row.record)
        wide[key].values[metric] = row.values.get(value_col)
    clash = [m for m in metrics if m in ids]
    if clash:
        raise format_error(path, f"metric name {clash[0]!r} is an id column", column=name_col)
    return [*ids, *metrics], list(wide.values()), left_out


def _long_name(column: str) -> bool:
    return column.strip().lower() in LONG_NAME_COLUMNS


def _text_only(rows: Sequence[Row], column: str) -> bool:
    """Whether every filled cell of ``column`` is text that is no number (a caption, a file
    name, a metric's name): such a column holds no scores."""
    from capeval_core.judgments.base import is_number

    filled = [r.values.get(column) for r in rows if not is_missing(r.values.get(column))]
    return bool(filled) and all(isinstance(v, str) and not is_number(v) for v in filled)


def _refuse_decimal_commas(path: str | os.PathLike[str], rows: Sequence[Row], column: str) -> None:
    """Refuse a column whose every filled cell is a number written with a decimal comma
    (``1,7``: a spreadsheet of a comma-decimal locale), naming its first cell, as the
    judgment loader refuses such a score; it holds scores, and was left out as text."""
    filled = [r for r in rows if not is_missing(r.values.get(column))]
    if all(isinstance(r.values[column], str) and comma_hint(r.values[column]) for r in filled):
        parse_number(filled[0].values[column], path, filled[0], column)


def _score_columns(
    path: str | os.PathLike[str], columns: Sequence[str], ids: Sequence[str], kind: str
) -> dict[str, list[str]]:
    """External metric name -> its column(s) in a scores file."""
    prefixed = metric_columns(columns)
    chosen = (
        {c: n for c, n in prefixed.items()} if prefixed else {c: c for c in columns if c not in ids}
    )
    if not chosen:
        raise format_error(path, f"no metric column besides the ids {list(ids)}", line=1)
    if kind == "graded":
        return {name: [c] for c, name in chosen.items()}
    out: dict[str, list[str]] = {}
    for c, name in chosen.items():
        base, _, side = name.rpartition(":")
        if side not in ("a", "b") or not base:
            raise format_error(
                path,
                "a pairwise scores file names its columns <name>:a and <name>:b",
                line=1,
                column=c,
            )
        out.setdefault(base, ["", ""])["ab".index(side)] = c
    for name, cols in out.items():
        if "" in cols:
            raise format_error(
                path, f"metric {name!r} needs both {name}:a and {name}:b columns", line=1
            )
    return out


def _row_key(path: str | os.PathLike[str], row: Row, ids: Sequence[str]) -> str:
    parts = []
    for c in ids:
        value = row.values.get(c)
        if value is None or (isinstance(value, str) and not value.strip()):
            raise cell_error(path, row, c, "empty id cell")
        parts.append(image_key(text_cell(value, path, row, c) if isinstance(value, str) else value))
    return ID_SEPARATOR.join(parts)


#: joins the id columns of a set whose items are identified by several (THumB: seg_id, SYS)
ID_SEPARATOR = "|"


def read_metric_cells(
    path: str | os.PathLike[str], rows: Sequence[Row], kept: Sequence[int], columns: Sequence[str]
) -> dict[str, list[float]]:
    """The ``metric:`` columns of a judgment file's kept rows (indices ``kept``), by metric
    name. A kept row without a value is an error naming file, line and column; a row the
    loader dropped may lack it."""
    out: dict[str, list[float]] = {}
    for column, name in metric_columns(columns).items():
        _file_name(path, column, name)
        out[name] = _cells(path, rows, kept, column, name)
    return out


def read_pair_metric_cells(
    path: str | os.PathLike[str],
    rows: Sequence[Row],
    columns: Sequence[str],
    kept: Sequence[int] | None = None,
) -> dict[str, tuple[list[float], list[float]]]:
    """A pairwise file's ``metric:<name>:a`` and ``metric:<name>:b`` columns (the scores of
    candidate a and of candidate b) of its kept rows (indices ``kept``; default: all), by
    metric name."""
    sides: dict[str, dict[str, str]] = {}
    for column, full in metric_columns(columns).items():
        name, _, side = full.rpartition(":")
        if side not in ("a", "b") or not name:
            raise format_error(
                path,
                "a pairwise file names its metric columns metric:<name>:a and metric:<name>:b",
                line=1,
                column=column,
            )
        _file_name(path, column, name)
        sides.setdefault(name, {})[side] = column
    out: dict[str, tuple[list[float], list[float]]] = {}
    kept = range(len(rows)) if kept is None else kept
    for name, found in sides.items():
        for side in ("a", "b"):
            if side not in found:
                raise format_error(
                    path,
                    f"metric {name!r} has no column {METRIC_PREFIX}{name}:{side}",
                    line=1,
                    column=next(iter(found.values())),
                )
        out[name] = (
            _cells(path, rows, kept, found["a"], name),
            _cells(path, rows, kept, found["b"], name),
        )
    return out


def _file_name(
    path: str | os.PathLike[str],
    column: str,
    name: str,
    existing: Sequence[str] = (),
    human: Sequence[str] = (),
) -> None:
    """check_name, its refusal naming the file and the column; a metric named as one of the
    set's ``human`` score columns, in any case, is refused too (the judgment file itself given
    as the scores file correlated its human score with itself, 1.0, and Williams-tested it)."""
    try:
        check_name(name, existing)
    except InputError as exc:
        raise format_error(path, str(exc), line=1, column=column) from None
    same = [h for h in human if h.casefold() == name.casefold()]  # 'Score' reads as 'score'
    if same:
        raise format_error(
            path,
            f"a metric cannot be named as the set's human score {same[0]!r}: its rows would read "
            "as the human score; rename the column (or give the metric scores, not the "
            "judgment file)",
            line=1,
            column=column,
        )


def _cells(
    path: str | os.PathLike[str], rows: Sequence[Row], kept: Sequence[int], column: str, name: str
) -> list[float]:
    missing = f"no score of the external metric {name!r} in a row that is kept"
    return [_score(path, rows[i], column, missing) for i in kept]


def with_file_metrics(
    jset: JudgmentSet,
    path: str | os.PathLike[str],
    metrics: Mapping[str, list[float] | tuple[list[float], list[float]]],
    checksum: str | None = None,
) -> JudgmentSet:
    """``jset`` with the ``metric:`` columns read by :func:`read_metric_cells` (graded) or
    :func:`read_pair_metric_cells` (pairwise) added, their checksum the judgment file's
    (or ``checksum``: the original's, when ``path`` is a column-mapped copy of it)."""
    if not metrics:
        return jset
    checksum = checksum or file_checksum(path)
    for name in metrics:
        column = f"{METRIC_PREFIX}{name}" + (":a" if jset.kind == "pairwise" else "")
        _file_name(path, column, name, human=jset.score_names)
    for name, values in metrics.items():
        arrays = values if isinstance(values, tuple) else (values,)
        jset = add_metric_scores(jset, name, *arrays, checksum=checksum, source=Path(path).name)
    return jset


__all__ = [
    "METRIC_PREFIX",
    "ExternalScores",
    "add_metric_scores",
    "check_name",
    "file_checksum",
    "is_id_column",
    "is_index_column",
    "join_scores_file",
    "metric_columns",
    "read_metric_cells",
    "read_pair_metric_cells",
    "with_file_metrics",
]
