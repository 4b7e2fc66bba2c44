"""JudgmentSet (what every loader returns) and the validated file readers the loaders share.

The validation rules follow ``judgment-formats.md`` ("Validation rules (every loader)"):
UTF-8 with or without BOM, a clear error naming the file and the first bad byte offset for
other encodings, required columns, numeric scores, duplicate ids, a size cap (default 200 MB),
and a report of what was dropped and why.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import math
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from capeval_core import files
from capeval_core.errors import JudgmentFormatError, UnknownKeyError
from capeval_core.files import DEFAULT_MAX_BYTES, SURROGATE_ESCAPE, Fail, locate

if TYPE_CHECKING:
    import pandas as pd

#: Separator of references packed into one CSV/TSV cell (judgment-formats.md, generic formats).
REF_SEPARATOR = "|||"

Kind = Literal["graded", "pairwise"]


@dataclass(frozen=True)
class ExternalScores:
    """One external metric's per-item values (:mod:`~capeval_core.judgments.external` reads
    and joins them): graded sets one value per item, pairwise sets two rows (candidate a,
    candidate b) of one value per pair."""

    name: str
    values: np.ndarray = field(repr=False, compare=False)
    checksum: str
    source: str

    @property
    def signature(self) -> str:
        """``external:<name>|sha256:<12 hex digits>`` (the checksum of its source)."""
        return f"external:{self.name}|sha256:{self.checksum[:12]}"

    @property
    def values_digest(self) -> str:
        return hashlib.sha256(np.ascontiguousarray(self.values, dtype=float).tobytes()).hexdigest()


@dataclass(frozen=True)
class GradedItem:
    """One judged candidate: its references and one value per human-score column."""

    id: str
    image_id: str
    candidate: str
    references: tuple[str, ...]
    scores: tuple[float, ...]
    system: str | None = None


@dataclass(frozen=True)
class PairItem:
    """Two candidates for one image and the human preference between them.

    ``votes_a``/``votes_b`` are None when the file gives only ``preferred``; ``preferred`` is
    None when the set has no human labels (e.g. ABSTRACT-50S without its consensus file).
    """

    id: str
    image_id: str
    candidate_a: str
    candidate_b: str
    references: tuple[str, ...]
    preferred: Literal["a", "b", "tie"] | None
    votes_a: int | None = None
    votes_b: int | None = None
    category: str | None = None


@dataclass(frozen=True)
class JudgmentSet:
    """Human judgments as read, validated and filtered by a protocol preset.

    ``n_read`` counts source rows, ``dropped`` maps a reason to how many source rows it
    removed, ``n_kept`` counts the source rows that remain; ``len(set)`` counts items, which
    is larger when a preset expands rows (Flickr8k-Expert: one row per expert).

    >>> item = GradedItem("1", "img", "a dog", ("a dog runs",), (3.0,))
    >>> js = JudgmentSet("graded", (item,), ("score",), ("toy.csv",), n_read=2, n_kept=1,
    ...                  dropped={"own reference": 1})
    >>> js.describe()
    '2 read, 1 dropped (own reference: 1), 1 scored'
    >>> from dataclasses import replace
    >>> replace(js, dropped_at={"own reference": "line 3"}).describe()
    '2 read, 1 dropped (own reference (line 3): 1), 1 scored'

    ``blank`` names, per caption column, where the blank cells of the kept rows are; they
    are scored as given (an empty caption, as coco-caption scores one), and said:

    >>> item = GradedItem("4", "img", "", ("a dog runs",), (1.0,))
    >>> JudgmentSet("graded", (item,), ("score",), ("toy.csv",), n_read=1, n_kept=1,
    ...             blank=(("candidate", "line 4"),)).describe()
    "1 read, 1 scored (blank captions scored as given: column 'candidate', line 4)"

    A set restricted to the items every metric scored keeps those counts of the file as
    read, and says so (:attr:`left_out`):

    >>> full = JudgmentSet("graded", (item, replace(item, id="5")), ("score",), ("toy.csv",),
    ...                    n_read=2, n_kept=2, blank=(("candidate", "line 4"),))
    >>> replace(full, items=full.items[1:], left_out=1).describe()
    "2 read, 2 scored (blank captions scored as given: column 'candidate', line 4); 1 of these \
2 items shown, those every metric scored (1 left out; the counts and places before are the \
file's as read)"
    """

    kind: Kind
    items: tuple[GradedItem, ...] | tuple[PairItem, ...]
    score_names: tuple[str, ...]
    source: tuple[str, ...]
    n_read: int
    n_kept: int
    dropped: Mapping[str, int] = field(default_factory=dict)
    format: str = "graded"
    preset: str | None = None
    #: Kendall variant the preset's published protocol reports ("b" or "c"; metric-spec §8)
    kendall_variant: str = "b"
    notes: tuple[str, ...] = ()
    synthetic: bool = False
    content_digest: str = ""
    #: metric scores computed elsewhere (``metric:<name>`` columns, a scores file, or
    #: :func:`~capeval_core.judgments.external.add_metric_scores`), in the order added
    external: tuple[ExternalScores, ...] = ()
    #: digest of the scored texts alone (candidates and references, in item order): what
    #: built-in metric scores are cached by, so another human column, other human scores or
    #: an external metric never rescore the built-in ones
    items_digest: str = ""
    #: the columns that identify an item in a scores file joined to the set (their cells
    #: joined by ``|``, in this order, give the item's ``id``)
    id_columns: tuple[str, ...] = ("id",)
    #: per item, the key a scores file's row is joined on (its id-column cells joined by
    #: ``|``); empty: the item ids. Several items may share one key (Flickr8k-Expert's
    #: published preset: one row per expert, one metric score per caption)
    join_keys: tuple[str, ...] = ()
    #: per caption column with blank cells among the kept rows, the column and where those
    #: rows are (:func:`places`); empty captions are scored as given, and :meth:`describe`
    #: says so
    blank: tuple[tuple[str, str], ...] = ()
    #: as :attr:`blank`, for blank references among filled ones (a piece of a ``|||`` cell, a
    #: JSON list's entry or a ``ref_k`` cell before the row's last reference): kept and scored
    #: as an empty reference, as coco-caption and `capeval score` score one. Blanks after the
    #: row's last reference are no reference (a row narrower than the file, a ``|||`` at the
    #: end)
    blank_references: tuple[tuple[str, str], ...] = ()
    #: where the rows dropped for a reason of :attr:`dropped` are (:func:`places`), for the
    #: reasons a loader can place; apart from the reason, which stays one key in a JSON
    dropped_at: Mapping[str, str] = field(default_factory=dict)
    #: items the set lost after it was read: those some metric could not score, which the
    #: statistics that compare metrics leave out
    #: (:func:`~capeval_core.judgments.scoring.on_common_items`). What was read, dropped and
    #: blank stays the file's as read, and :meth:`describe` says how many items are shown
    left_out: int = 0
    #: per join key (:meth:`item_keys`) of a row the loader dropped, which rows those are
    #: ("of the Human system, which preset 'kasai2022' leaves out"): a scores file's row of
    #: one is said as such, not as matching no item
    dropped_keys: Mapping[str, str] = field(default_factory=dict, repr=False, compare=False)
    #: what tells this set apart from the same rows read elsewhere (an upload's file names and
    #: column mapping): part of :attr:`content_digest` when given, so that a server holding
    #: sets by digest keeps two people's uploads of the same rows apart
    provenance: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "dropped", dict(self.dropped))
        if not self.items_digest:
            object.__setattr__(self, "items_digest", _texts_digest(self))
        if not self.content_digest:
            digest = _digest(self)
            if self.external:
                h = hashlib.sha256(digest.encode())
                for ext in self.external:
                    h.update(f"|{ext.signature}|{ext.values_digest}".encode())
                digest = h.hexdigest()
            object.__setattr__(self, "content_digest", digest)

    def item_keys(self) -> tuple[str, ...]:
        """The key each item is joined on by a scores file (:attr:`join_keys`, else its id)."""
        return self.join_keys or tuple(it.id for it in self.items)

    def resampling_groups(self) -> np.ndarray | None:
        """Per item, its group for a bootstrap that draws whole groups: the items sharing a
        join key are one caption's rows (Flickr8k-Expert's published preset). None when
        every item is its own."""
        keys = self.join_keys
        if not keys or len(set(keys)) == len(keys):
            return None
        return np.unique(np.asarray(keys), return_inverse=True)[1].ravel()

    @property
    def external_names(self) -> tuple[str, ...]:
        """The names of the external metrics, usable as metric keys of this set."""
        return tuple(e.name for e in self.external)

    def __hash__(self) -> int:
        return hash(self.content_digest)

    def __len__(self) -> int:
        return len(self.items)

    # -- summaries ------------------------------------------------------------------------
    def dropped_reason(self, reason: str) -> str:
        """A reason of :attr:`dropped` with where its rows are, where the loader said."""
        where = self.dropped_at.get(reason)
        return f"{reason} ({where})" if where else reason

    def describe(self) -> str:
        """One line: what was read, dropped and scored."""
        parts = [f"{self.n_read:,} read"]
        total = sum(self.dropped.values())
        if total:
            reasons = "; ".join(f"{self.dropped_reason(r)}: {n:,}" for r, n in self.dropped.items())
            parts.append(f"{total:,} dropped ({reasons})")
        kept = f"{self.n_kept:,} scored"
        as_read = len(self.items) + self.left_out  # the items before any was left out
        if as_read != self.n_kept:
            kept += f" as {as_read:,} rows"
        blanks = [
            f"blank {what} scored as given: {said_cells(cells)}"
            for what, cells in (("captions", self.blank), ("references", self.blank_references))
            if cells
        ]
        if blanks:
            kept += f" ({'; '.join(blanks)})"
        parts.append(kept)
        line = ", ".join(parts)
        if self.left_out:
            unit = "items" if self.kind == "graded" else "pairs"
            line += (
                f"; {len(self.items):,} of these {as_read:,} {unit} shown, those every metric "
                f"scored ({self.left_out:,} left out; the counts and places before are the "
                "file's as read)"
            )
        return f"SYNTHETIC demo: {line}" if self.synthetic else line

    def __str__(self) -> str:
        return f"{self.format} ({', '.join(self.source)}): {self.describe()}"

    # -- columns --------------------------------------------------------------------------
    @property
    def candidates(self) -> list[str]:
        """Graded sets: the candidates in item order."""
        self._need("graded")
        return [it.candidate for it in self.items]  # type: ignore[union-attr]

    @property
    def references(self) -> list[tuple[str, ...]]:
        return [it.references for it in self.items]

    def human(self, name: str | None = None) -> np.ndarray:
        """Graded sets: one human-score column (default: the first) as floats."""
        self._need("graded")
        col = 0 if name is None else self._score_index(name)
        return np.array([it.scores[col] for it in self.items], dtype=float)  # type: ignore[union-attr]

    def systems(self) -> list[str | None]:
        """Graded sets: the ``system`` of each item (None where the file has none)."""
        self._need("graded")
        return [it.system for it in self.items]  # type: ignore[union-attr]

    def preferences(self) -> np.ndarray:
        """Pairwise sets: +1 (a preferred), -1 (b), 0 (tie), NaN (unlabelled), from votes
        where the file gives them, else from ``preferred``."""
        self._need("pairwise")
        out = np.full(len(self.items), np.nan)
        for i, it in enumerate(self.items):
            if it.votes_a is not None and it.votes_b is not None:  # type: ignore[union-attr]
                if it.votes_a or it.votes_b:  # type: ignore[union-attr]  # no vote: no label
                    out[i] = np.sign(it.votes_a - it.votes_b)  # type: ignore[union-attr]
            elif it.preferred is not None:  # type: ignore[union-attr]
                out[i] = {"a": 1.0, "b": -1.0, "tie": 0.0}[it.preferred]  # type: ignore[union-attr]
        return out

    def categories(self) -> list[str | None]:
        self._need("pairwise")
        return [it.category for it in self.items]  # type: ignore[union-attr]

    def to_frame(self) -> pd.DataFrame:
        """Tidy table, one row per item; references joined with ``|||``."""
        import pandas as pd  # only here: scoring processes never pay its import

        rows = []
        for it in self.items:
            row = {k: v for k, v in it.__dict__.items() if k not in ("references", "scores")}
            row["references"] = REF_SEPARATOR.join(it.references)
            if isinstance(it, GradedItem):
                row.update(dict(zip(self.score_names, it.scores, strict=True)))
            rows.append(row)
        frame = pd.DataFrame(rows)
        for ext in self.external:
            if self.kind == "graded":
                frame[f"metric:{ext.name}"] = ext.values
            else:
                frame[f"metric:{ext.name}:a"], frame[f"metric:{ext.name}:b"] = ext.values
        return frame

    def _need(self, kind: str) -> None:
        if self.kind != kind:
            raise TypeError(f"this is a {self.kind} judgment set, not a {kind} one")

    def _score_index(self, name: str) -> int:
        try:
            return self.score_names.index(name)
        except ValueError:
            raise UnknownKeyError(
                f"no human-score column {name!r}; this set has {list(self.score_names)}"
            ) from None


def _texts_digest(js: JudgmentSet) -> str:
    """sha256 of what metrics score: the kind, and per item its candidate(s) and references."""
    h = hashlib.sha256(js.kind.encode())
    for it in js.items:
        texts = (
            [it.candidate, *it.references]
            if isinstance(it, GradedItem)
            else [it.candidate_a, it.candidate_b, *it.references]
        )
        h.update(json.dumps(texts, ensure_ascii=False).encode())
        h.update(b"\n")
    return h.hexdigest()


def _digest(js: JudgmentSet) -> str:
    """sha256 of the normalised content (kind, score names, provenance, items)."""
    h = hashlib.sha256()
    h.update(json.dumps([js.kind, list(js.score_names)]).encode())
    if js.provenance:  # a set without one keeps the digest it always had
        h.update(json.dumps(list(js.provenance), ensure_ascii=False).encode())
    for it in js.items:
        h.update(json.dumps(list(it.__dict__.values()), ensure_ascii=False).encode())
        h.update(b"\n")
    return h.hexdigest()


# ---------------------------------------------------------------------------------------
# Errors and readers
# ---------------------------------------------------------------------------------------
def folder_name(path: Path) -> str:
    """A folder's name for a message: its own, or the working folder's for ``.`` (whose
    name is empty: "in the folder ''")."""
    return path.name or path.resolve().name or str(path)


def format_error(
    path: str | os.PathLike[str],
    message: str,
    *,
    line: int | None = None,
    column: str | int | None = None,
    record: int | None = None,
) -> JudgmentFormatError:
    """A JudgmentFormatError whose message starts with file, line/record and column.

    >>> str(format_error("x.csv", "not a number: 'abc'", line=3, column="score"))
    "x.csv, line 3, column 'score': not a number: 'abc'"
    """
    exc = locate(
        Path(path).name, message, record=record, line=line, column=column, error=JudgmentFormatError
    )
    exc.path, exc.line, exc.column = str(path), line, column  # type: ignore[attr-defined]
    return exc  # type: ignore[return-value]


def cell_error(
    path: str | os.PathLike[str], row: Row, column: str | int | None, message: str
) -> JudgmentFormatError:
    """:func:`format_error` at a row's line and record, in one of its columns."""
    return format_error(path, message, line=row.line, column=column, record=row.record)


def _fail(path: str | os.PathLike[str]) -> Fail:
    return lambda message, **where: format_error(path, message, **where)


def read_bytes(path: str | os.PathLike[str], max_bytes: int = DEFAULT_MAX_BYTES) -> bytes:
    """The file's bytes, refusing missing, oversize and empty files and folders."""
    return files.read_bytes(path, max_bytes=max_bytes, fail=_fail(path))


def read_text(path: str | os.PathLike[str], max_bytes: int = DEFAULT_MAX_BYTES) -> str:
    """UTF-8 text (a BOM is dropped); binary, UTF-16 and other encodings give a clear error."""
    return files.read_text(path, max_bytes=max_bytes, fail=_fail(path))


@dataclass(frozen=True)
class Row:
    """One record of a table or JSON file with where it came from."""

    line: int
    values: dict[str, Any]
    record: int | None = None  # its index in a JSON file, from 0 (messages count from 1)

    @property
    def place(self) -> str:
        """Where the row is, for a message naming another: its record too where it has one
        (a JSON array on one line holds every record on line 1). A record of a file without
        lines (a MATLAB struct array) has line 0 and is named by its record alone."""
        if self.record is None:
            return f"line {self.line}"
        return (
            f"record {self.record + 1}"  # counted from 1, as lines
            if not self.line
            else f"record {self.record + 1}, line {self.line}"
        )


def places(rows: Sequence[Row], limit: int = 5) -> str:
    """Where ``rows`` are, for a message, as the loaders' errors name a row: the first
    ``limit`` and how many more.

    >>> places([Row(4, {})]), places([Row(4, {}), Row(7, {}), Row(9, {})])
    ('line 4', 'lines 4, 7 and 9')
    >>> places([Row(n, {}) for n in range(2, 10)])
    'lines 2, 3, 4, 5, 6 and 3 more'
    >>> places([Row(1, {}, record=0)]), places([Row(1, {}, record=0), Row(1, {}, record=2)])
    ('record 1, line 1', 'records 1 (line 1) and 3 (line 1)')
    >>> places([Row(0, {}, record=3), Row(0, {}, record=5)])  # a MATLAB struct array's
    'records 4 and 6'
    """
    shown = list(rows[:limit])
    more = len(rows) - len(shown)
    if len(rows) == 1:
        return rows[0].place
    # a JSON file: its records, each with its line (a one-line array has one line)
    records = any(r.record is not None for r in shown)
    each = [
        (f"{r.record + 1} (line {r.line})" if r.line else str(r.record + 1))
        if records
        else str(r.line)
        for r in shown
    ]
    listed = ", ".join(each) if more else f"{', '.join(each[:-1])} and {each[-1]}"
    text = ("records " if records else "lines ") + listed
    return f"{text} and {more:,} more" if more else text


def blank_cells(column: str, rows: Sequence[Row], file: str = "") -> tuple[tuple[str, str], ...]:
    """:attr:`JudgmentSet.blank`'s entry for ``column`` when ``rows`` (the kept rows whose
    cell in it is blank) are some, else nothing. ``file`` names the file the rows are in
    when it is not the set's first (a dataset's captions come from a file of their own).

    >>> blank_cells("candidate_b", [Row(4, {})]), blank_cells("candidate_a", [])
    ((('candidate_b', 'line 4'),), ())
    >>> blank_cells("caption", [Row(7, {}), Row(7, {})], "Flickr8k.token.txt")
    (('caption', 'Flickr8k.token.txt, line 7'),)
    """
    if not rows:
        return ()
    # one row once: a caption judged several times (Flickr8k's experts) is one blank cell
    unique = sorted({(r.line, r.record or 0): r for r in rows}.items())
    unique = [r for _, r in unique]
    return ((column, f"{file}, {places(unique)}" if file else places(unique)),)


def said_cells(cells: Sequence[tuple[str, str]]) -> str:
    """Blank cells (:func:`blank_cells`) as the summary line says them.

    >>> said_cells([("ref_2", "line 3"), ("caption", "Flickr8k.token.txt, line 7")])
    "column 'ref_2', line 3; column 'caption', Flickr8k.token.txt, line 7"
    """
    return "; ".join(f"column {column!r}, {where}" for column, where in cells)


def blank_before_last(texts: Sequence[str]) -> bool:
    """Whether a blank text comes before the last filled one: a blank reference a generic
    file keeps (one after the last is no reference, in every format).

    >>> blank_before_last(["a", " ", "b"]), blank_before_last(["a", "", ""])
    (True, False)
    """
    filled = [bool(t.strip()) for t in texts]
    last = max((i for i, f in enumerate(filled) if f), default=-1)
    return not all(filled[: last + 1])


def blank_references_left_out(cells: Sequence[tuple[str, str]]) -> str:
    """The note of a loader whose dataset's files are read without their blank references
    (where a generic file keeps one as an empty reference), worded as the summary line says
    the blank references a set keeps.

    >>> blank_references_left_out([("refs", "mscoco_references.json, line 3")])
    "blank references left out (not scored): column 'refs', mscoco_references.json, line 3"
    """
    return f"blank references left out (not scored): {said_cells(cells)}"


def read_delimited(
    path: str | os.PathLike[str],
    delimiter: str,
    *,
    header: Sequence[str] | None = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
    quoting: int = csv.QUOTE_MINIMAL,
) -> tuple[list[str], list[Row]]:
    """Rows of a CSV/TSV file; ``header=None`` reads the header from the first line.

    Ragged rows (more or fewer fields than the header) are errors naming the line.
    ``quoting=csv.QUOTE_NONE`` suits files whose captions may start with a quote mark
    (the Flickr8k text files are plain tab-separated, without quoting).
    """
    text = read_text(path, max_bytes)
    # lines as the file has them: str.splitlines also breaks at a form feed or U+2028 in a
    # caption, and every line named after it was one too high
    reader = csv.reader(
        io.StringIO(text, newline=""), delimiter=delimiter, strict=True, quoting=quoting
    )
    rows: list[Row] = []
    columns: list[str] | None = list(header) if header is not None else None
    width = len(columns) if columns is not None else 0
    unnamed: list[int] = []  # header fields left empty after the first, from 0
    filled: tuple[int, int] | None = None  # the first (line, field) with a value under one
    line = 0  # the last line read: the next record starts after it
    try:
        for fields in reader:
            line = reader.line_num
            if not fields or all(not f.strip() for f in fields):
                continue
            if columns is None:
                columns = [f.strip() for f in fields]
                width = len(columns)
                unnamed = _check_header(path, columns, delimiter)
                columns = [c for i, c in enumerate(columns) if i not in unnamed]
                continue
            if len(fields) != width:
                raise format_error(
                    path,
                    f"expected {width} fields separated by {_name(delimiter)}, "
                    f"got {len(fields)}{delimiter_hint(columns)}",
                    line=line,
                )
            if unnamed:
                if filled is None:
                    filled = next(((line, i) for i in unnamed if fields[i].strip()), None)
                fields = [f for i, f in enumerate(fields) if i not in unnamed]
            rows.append(Row(line, dict(zip(columns, fields, strict=True))))
    except csv.Error as exc:
        # named where the record starts: a quote mark never closed makes one field of the
        # lines after it, and csv stops where it meets the next quote mark
        start, end = line + 1, reader.line_num
        runs = (
            f" (a record from line {start} to line {end}: check its quote marks, from line "
            f"{start} on)"
            if end > start
            else ""
        )
        kind = _name(delimiter).removesuffix("s")  # "comma-separated"
        raise format_error(
            path, f"malformed {kind}-separated text: {exc}{runs}", line=start
        ) from None
    if columns is None or (header is None and not rows):
        raise format_error(path, "no data rows")
    if filled is not None:
        at, i = filled
        raise format_error(
            path,
            f"header field {i + 1} is empty, and line {at} has a value under it: name the column",
            line=1,
            column=i + 1,
        )
    return columns, rows


def delimiter_hint(columns: Sequence[str]) -> str:
    """For a header read as one column that holds another delimiter: the question whether
    the file is separated by it (empty otherwise). A row of such a file may be refused
    before its header is (``3,5`` splits a ';'-separated row in two at the comma).

    >>> delimiter_hint(["id;candidate;score"])
    "; the header has a single column containing ';': is the file separated by ';' rather than \
the delimiter its suffix implies?"
    """
    if len(columns) != 1:
        return ""
    sep = next((s for s in (";", ",", "\t", "|") if s in columns[0]), None)
    if sep is None:
        return ""
    return (
        f"; the header has a single column containing {sep!r}: is the file separated by "
        f"{sep!r} rather than the delimiter its suffix implies?"
    )


def _check_header(path: str | os.PathLike[str], columns: list[str], delimiter: str) -> list[int]:
    """Refuse a name repeated in a header; return where (from 0) fields after the first are
    empty: a spreadsheet's trailing delimiter, whose cells must be empty too. An empty first
    field is pandas' index (``DataFrame.to_csv`` without ``index=False``), never a score."""
    seen: dict[str, int] = {}
    unnamed: list[int] = []
    for i, name in enumerate(columns, start=1):
        if not name:
            if i > 1:
                unnamed.append(i - 1)
            continue
        if name in seen:
            raise format_error(
                path,
                f"column name repeated in the header (fields {seen[name]} and {i})",
                line=1,
                column=name,
            )
        seen[name] = i
    return unnamed


def _name(delimiter: str) -> str:
    return {",": "commas", "\t": "tabs", ";": "semicolons"}.get(delimiter, repr(delimiter))


def read_json_records(
    path: str | os.PathLike[str], *, max_bytes: int = DEFAULT_MAX_BYTES
) -> list[Row]:
    """Objects of a JSON array file, each with the line it starts on."""
    text = read_text(path, max_bytes)
    fail = _fail(path)
    surrogates = bool(SURROGATE_ESCAPE.search(text))
    decoder = json.JSONDecoder(object_pairs_hook=files.unique_object)
    pos = _skip_ws(text, 0)
    if pos >= len(text) or text[pos] != "[":
        files.parse_json(text, fail)  # reports invalid JSON with its line and column
        raise format_error(path, "expected a JSON array of objects (one per row)", line=1)
    rows: list[Row] = []
    pos = _skip_ws(text, pos + 1)
    line, counted = 1, 0  # lines are counted on from the previous record, not from the top
    while True:
        if pos < len(text) and text[pos] == "]" and not rows:
            break
        line += text.count("\n", counted, pos)
        counted = pos
        obj, end = _decode(
            lambda p=pos: decoder.raw_decode(text, p), path, len(rows), line, where=(text, pos)
        )
        if not isinstance(obj, dict):
            raise format_error(
                path, f"expected an object, got {type(obj).__name__}", record=len(rows), line=line
            )
        files.check_json_value(obj, fail, surrogates=surrogates, record=len(rows), line=line)
        rows.append(Row(line, obj, record=len(rows)))
        pos = _skip_ws(text, end)
        if pos < len(text) and text[pos] == ",":
            pos = _skip_ws(text, pos + 1)
            continue
        if pos < len(text) and text[pos] == "]":
            break
        line = text.count("\n", 0, pos) + 1
        raise format_error(
            path, f"invalid JSON: expected ',' or ']' after record {len(rows)}", line=line
        )
    if _skip_ws(text, pos + 1) < len(text):
        raise format_error(
            path, "invalid JSON: extra data after the array", line=text.count("\n", 0, pos + 1) + 1
        )
    if not rows:
        raise format_error(path, "the JSON array is empty: no data rows")
    return rows


def _decode(
    decode: Any,
    path: Any,
    record: int,
    line: int,
    line_offset: int = 0,
    *,
    where: tuple[str, int] | None = None,
    unit: str = "file",
) -> tuple[Any, int]:
    """``decode()`` (a JSON decoder call); every failure is a format error naming where.
    ``line_offset`` turns the decoder's line numbers into the file's; ``where`` is the text
    decoded and the position it starts from; ``unit`` what that text is (a file, a line)."""
    try:
        return decode()
    except json.JSONDecodeError as exc:
        raise format_error(
            path,
            files.json_reason(exc, unit),
            record=record,
            line=exc.lineno + line_offset,
            column=exc.colno,
        ) from None
    except RecursionError:
        raise format_error(
            path,
            f"JSON nested too deeply (more than {files.MAX_JSON_DEPTH} levels)",
            record=record,
            line=line,
        ) from None
    except ValueError as exc:  # e.g. an integer of more than 4,300 digits
        long = files.long_number(*where) if where is not None else None
        if long is not None:
            at_line, column, message = long
            raise format_error(
                path, message, record=record, line=at_line + line_offset, column=column
            ) from None
        raise format_error(path, f"invalid JSON: {exc}", record=record, line=line) from None


def _skip_ws(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in " \t\r\n":
        pos += 1
    return pos


def read_jsonl_records(
    path: str | os.PathLike[str], *, max_bytes: int = DEFAULT_MAX_BYTES
) -> list[Row]:
    """Objects of a JSON-lines file (blank lines skipped), each with its line number."""
    text = read_text(path, max_bytes)
    fail = _fail(path)
    surrogates = bool(SURROGATE_ESCAPE.search(text))
    rows: list[Row] = []
    for n, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        obj, _ = _decode(
            lambda r=raw: (files.loads(r), 0),
            path,
            len(rows),
            n,
            n - 1,
            where=(raw, 0),
            unit="line",
        )
        if not isinstance(obj, dict):
            raise format_error(
                path, f"expected an object, got {type(obj).__name__}", record=len(rows), line=n
            )
        files.check_json_value(obj, fail, surrogates=surrogates, record=len(rows), line=n)
        rows.append(Row(n, obj, record=len(rows)))
    if not rows:
        raise format_error(path, "no data rows")
    return rows


def read_records(
    path: str | os.PathLike[str],
    file_format: str | None = None,
    *,
    max_bytes: int = DEFAULT_MAX_BYTES,
    what: str = "judgment file",
) -> tuple[str, list[str], list[Row]]:
    """``(format, columns, rows)`` of a CSV, TSV, JSON or JSONL file (format from the suffix).

    For JSON/JSONL the columns are the union of the record keys in first-seen order. ``what``
    names the file a folder given in its place is asked to be.
    """
    if Path(path).is_dir():
        raise format_error(path, f"this is a folder, not a file: give the {what} itself")
    fmt = (file_format or format_from_suffix(path)).lower()
    if fmt in ("csv", "tsv"):
        columns, rows = read_delimited(path, "," if fmt == "csv" else "\t", max_bytes=max_bytes)
        return fmt, columns, rows
    if fmt in ("json", "jsonl"):
        reader = read_json_records if fmt == "json" else read_jsonl_records
        rows = reader(path, max_bytes=max_bytes)
        columns = list(dict.fromkeys(k for r in rows for k in r.values))
        return fmt, columns, rows
    raise format_error(path, f"unknown file format {fmt!r}; use csv, tsv, json or jsonl")


def format_from_suffix(path: str | os.PathLike[str]) -> str:
    """A judgment file's table format named by its suffix (the loader's, and the column
    mapping's, which reads the header before the loader does)."""
    suffix = Path(path).suffix.lower().lstrip(".")
    fmt = {
        "csv": "csv",
        "tsv": "tsv",
        "tab": "tsv",
        "txt": "tsv",
        "json": "json",
        "jsonl": "jsonl",
        "ndjson": "jsonl",
    }.get(suffix)
    if fmt is None and suffix in ("gz", "gzip"):  # as every other reader says it
        raise format_error(path, "this file is gzip-compressed; decompress it first")
    if fmt is None:
        raise format_error(
            path,
            f"cannot tell the format from the suffix {suffix!r}: name the file .csv, .tsv, "
            ".json or .jsonl, or pass `file_format`",
        )
    return fmt


#: What a number cell may hold: ASCII digits only (Python's ``float`` also takes ``1_0``,
#: full-width ``４`` and Arabic-Indic ``٣``, which no spreadsheet writes as a number), or the
#: words inf/nan, which are then refused as not finite.
_NUMBER = re.compile(
    r"[+-]?(?:(?:\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?|inf|infinity|nan)", re.ASCII | re.IGNORECASE
)


def _number(value: Any) -> float | None:
    """The value of a number cell (possibly inf or NaN), or None when it is not a number.

    >>> _number(" 2.5 "), _number("1e3"), _number("1_0"), _number("４"), _number(True)
    (2.5, 1000.0, None, None, None)
    """
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        try:
            return float(value)
        except OverflowError:
            return math.inf
    if isinstance(value, float):
        return value
    if isinstance(value, str) and _NUMBER.fullmatch(text := value.strip()):
        return float(text)
    return None


def parse_number(
    value: Any, path: str | os.PathLike[str], row: Row, column: str, *, integer: bool = False
) -> float:
    """A finite number from a cell, or an error naming file, line and column."""

    def fail(message: str) -> JudgmentFormatError:
        return cell_error(path, row, column, message)

    number = _number(value)
    if number is None:
        text = str(value).strip() if isinstance(value, str) else ""
        hint = " (a spreadsheet formula?)" if text[:1] in ("=", "+", "-", "@") else ""
        raise fail(f"not a number: {_as_written(value, row)}{hint or comma_hint(text)}")
    if not math.isfinite(number):
        raise fail(f"not a finite number: {_show(value)}")
    if integer and number != int(number):
        raise fail(f"expected a whole number, got {_show(value)}")
    if integer and abs(number) > MAX_COUNT:  # a float no longer holds every whole number there
        raise fail(f"a count of at most {MAX_COUNT:,} is expected, got {_show(value)}")
    return number


_DECIMAL_COMMA = re.compile(r"[+-]?\d+,(\d+)", re.ASCII)


def comma_hint(text: str) -> str:
    """What a number written with a comma (a spreadsheet of a comma-decimal locale) means to
    say, for a message; empty for other text.

    >>> comma_hint("3,5"), comma_hint("good")
    (' (a decimal comma? write 3.5)', '')
    >>> comma_hint("1,000")
    ' (a decimal comma or a thousands separator? write 1.000 or 1000)'
    """
    m = _DECIMAL_COMMA.fullmatch(text.strip())
    if m is None:
        return ""
    dot, plain = text.strip().replace(",", "."), text.strip().replace(",", "")
    if len(m.group(1)) == 3:
        return f" (a decimal comma or a thousands separator? write {dot} or {plain})"
    return f" (a decimal comma? write {dot})"


#: the largest whole number a count may be: 2**53, beyond which a float skips whole numbers
#: (99999999999999999999999 was read as 99999999999999991611392, and broke the table)
MAX_COUNT = 2**53


#: how pandas and R write a missing value (``NaN``, ``NA``; any case) and how a person types
#: one (``n/a``): such a cell is missing, as an empty one is
MISSING_MARKERS = ("nan", "na", "n/a")


def is_missing(value: Any) -> bool:
    """Whether a cell holds no value: empty, JSON ``null``, NaN, or a missing-value marker
    (:data:`MISSING_MARKERS`). ``inf`` is a value, and refused as not finite where read.

    >>> [is_missing(v) for v in (None, " ", "NaN", "NA", "n/a", float("nan"), "inf", 0, "na x")]
    [True, True, True, True, True, True, False, False, False]
    """
    if value is None:
        return True
    if isinstance(value, float):
        return math.isnan(value)
    return isinstance(value, str) and value.strip().lower() in ("", *MISSING_MARKERS)


def is_number(value: Any) -> bool:
    """Whether a cell holds a finite number (by the rules of :func:`parse_number`)."""
    number = _number(value)
    return number is not None and math.isfinite(number)


def _as_written(value: Any, row: Row) -> str:
    """A cell's value as its file has it: JSON's ``null``, ``true`` and ``false`` (Python's
    ``None`` and ``True`` are no words of the file's), a table's missing cell as empty.

    >>> _as_written(None, Row(2, {}, record=1)), _as_written(True, Row(2, {}, record=1))
    ('null', 'true')
    >>> _as_written(None, Row(3, {})), _as_written("n/a", Row(3, {}))
    ('an empty cell', "'n/a'")
    """
    if value is None or isinstance(value, bool):
        return json.dumps(value) if row.record is not None else "an empty cell"
    return _show(value)


def _show(value: Any, limit: int = 40) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def text_cell(value: Any, path: str | os.PathLike[str], row: Row, column: str) -> str:
    """A text cell; JSON numbers are accepted as their text, other JSON types are errors."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    raise cell_error(path, row, column, f"expected text, got {type(value).__name__}")


def image_key(value: object) -> str:
    """Image ids compare as text: ``391895``, ``"391895"`` and ``391895.0`` are one image.

    >>> image_key(391895), image_key("391895"), image_key(" a.jpg ")
    ('391895', '391895', 'a.jpg')
    """
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return str(value).strip()


def caption_cell(row: Row, path: str | os.PathLike[str], column: str) -> str:
    """A caption cell: text only. A JSON ``null``, number, list or object is an error naming
    the line (a null caption would otherwise score as an empty one); an empty CSV cell is
    empty text, which the loader decides about.

    >>> caption_cell(Row(1, {"hyp": None}), "t.jsonl", "hyp")
    Traceback (most recent call last):
    ...
    capeval_core.errors.JudgmentFormatError: t.jsonl, line 1, column 'hyp': \
expected text, got null
    """
    from capeval_core.files import json_kind

    if column not in row.values:
        raise cell_error(path, row, column, f"no {column!r} in this record")
    value = row.values[column]
    if isinstance(value, str):
        return value
    raise cell_error(path, row, column, f"expected text, got {json_kind(value)}")


def id_cell(value: Any, path: str | os.PathLike[str], row: Row, column: str) -> Any:
    """An id cell as read: text or a whole number. ``true``, lists, objects and fractions
    are errors (``true`` would otherwise match id 1, and a list is no id at all)."""
    if isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool)):
        return value
    if isinstance(value, float) and value.is_integer():
        return value
    raise cell_error(
        path, row, column, f"an id must be text or a whole number (got {_show(value)})"
    )


def count_into(counter: dict[str, int], reason: str, n: int = 1) -> None:
    if n:
        counter[reason] = counter.get(reason, 0) + n


def unique_ids(
    path: str | os.PathLike[str], ids: Iterable[tuple[str, Row]], column: str = "id"
) -> None:
    """Raise on the first repeated id, naming both rows."""
    seen: dict[str, Row] = {}
    for ident, row in ids:
        if ident in seen:
            raise cell_error(
                path, row, column, f"duplicate id {ident!r} (first seen on {seen[ident].place})"
            )
        seen[ident] = row
