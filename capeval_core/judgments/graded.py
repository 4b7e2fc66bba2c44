"""Generic graded judgments: one row per judged candidate (CSV, TSV, JSON array, JSONL).

Columns (judgment-formats.md, "Generic formats"): ``id`` (optional; default: the line or
record number), ``image_id`` (optional), ``candidate``, references as ``references`` (a JSON
list in JSON/JSONL, ``|||``-separated text in CSV/TSV) or ``ref_1`` … ``ref_k`` columns, or a
COCO captions file keyed by ``image_id``; one or more numeric human-score columns (chosen with
``score_columns``; default: every numeric column not named above, pandas' index ``Unnamed: 0``
and id columns left out, the one named ``score``, ``human`` or ``rating`` first); optional
``system``.
"""

from __future__ import annotations

import os
import re
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TypeVar

from capeval_core.errors import CapevalWarning
from capeval_core.judgments.base import (
    DEFAULT_MAX_BYTES,
    REF_SEPARATOR,
    GradedItem,
    JudgmentSet,
    Row,
    blank_cells,
    caption_cell,
    cell_error,
    comma_hint,
    delimiter_hint,
    format_error,
    id_cell,
    image_key,
    is_missing,
    is_number,
    parse_number,
    places,
    read_records,
    text_cell,
    unique_ids,
)
from capeval_core.judgments.coco import read_coco_references
from capeval_core.judgments.external import (
    INDEX_COLUMN,
    METRIC_PREFIX,
    is_id_column,
    is_index_column,
    read_metric_cells,
    with_file_metrics,
)

_REF_COLUMN = re.compile(r"^ref_?(\d+)$")
#: a reference, or a (column, reference) pair
_R = TypeVar("_R", str, tuple[str, str])
KNOWN_COLUMNS = ("id", "image_id", "candidate", "references", "system")
#: names that say a column is the human score: among several numeric columns, the one so
#: named comes first (compared lower-case, with spaces and hyphens as underscores)
SCORE_NAMES = ("score", "human", "human_score", "rating", "human_rating")


def reference_columns(columns: Sequence[str]) -> list[str]:
    """``ref_1`` … ``ref_k`` columns in numeric order.

    >>> reference_columns(["ref_10", "candidate", "ref_2", "ref_1"])
    ['ref_1', 'ref_2', 'ref_10']
    """
    found = [(int(m.group(1)), c) for c in columns if (m := _REF_COLUMN.match(c))]
    return [c for _, c in sorted(found)]


def require_columns(
    path: Any,
    columns: Sequence[str],
    required: Sequence[str],
    missing: str = "missing required column",
) -> None:
    """Error naming the first missing column, with a delimiter hint for one-column headers."""
    for name in required:
        if name not in columns:
            raise format_error(
                path,
                f"{missing} {name!r} (columns found: {list(columns)}){delimiter_hint(columns)}",
                line=1,
                column=name,
            )


def _before_trailing_blanks(refs: list[_R]) -> list[_R]:
    """A row's references without the blanks after its last one: a ``ref_k`` column is as
    wide as the row with the most references, and ``a dog|||`` ends with a separator. A blank
    among filled references stays (a blank reference, kept and said).

    >>> _before_trailing_blanks(["a", "", "b", "", ""]), _before_trailing_blanks([("r1", "")])
    (['a', '', 'b'], [])
    """
    last = max((i for i, r in enumerate(refs) if (r[1] if isinstance(r, tuple) else r)), default=-1)
    return refs[: last + 1]


class ReferenceSource:
    """Where a row's references come from: its own cells or a COCO captions file."""

    def __init__(self, path: Any, columns: Sequence[str], references_from: Any, max_bytes: int):
        self.path = path
        self.ref_columns = reference_columns(columns)
        self.has_column = "references" in columns
        self.from_coco = (
            read_coco_references(references_from, max_bytes=max_bytes)
            if references_from is not None
            else None
        )
        self.coco = self.from_coco.captions if self.from_coco is not None else None
        self.coco_name = Path(references_from).name if references_from is not None else ""
        #: cells of the references column read, those read as one reference, and the lines
        #: of those that hold '|' or '||' (a separator mistyped for |||?)
        self.cells = self.single = 0
        self.piped: list[int] = []
        #: per column, the rows holding a blank reference beside filled ones: kept and scored
        #: as an empty reference, as coco-caption and `capeval score` score one
        self.blank: dict[str, list[Row]] = {}
        #: the image each row takes its references of the COCO captions file from
        self.image_of: dict[int, str] = {}
        if not (self.has_column or self.ref_columns or self.coco is not None):
            raise format_error(
                path,
                "missing required column 'references' (or ref_1 ... ref_k columns, or a COCO "
                f"captions file as `references_from`); columns found: {list(columns)}",
                line=1,
                column="references",
            )

    def get(self, row: Row, image_id: str) -> tuple[str, ...]:
        refs: list[str] = []
        column = "references"
        blank: list[str] = []  # the columns of the row's blank references
        if self.has_column:
            refs = _before_trailing_blanks(self._cell(row))
            blank = [] if all(refs) else ["references"]
        elif self.ref_columns:
            column = self.ref_columns[0]
            cells = _before_trailing_blanks(
                [
                    (c, text_cell(row.values.get(c), self.path, row, c).strip())
                    for c in self.ref_columns
                ]
            )
            refs = [text for _, text in cells]
            blank = [c for c, text in cells if not text]
        else:
            column = "image_id"
            if image_id not in (self.coco or {}):
                raise cell_error(
                    self.path,
                    row,
                    "image_id",
                    f"image_id {image_id!r} has no captions in {self.coco_name}",
                )
            refs = list(self.coco[image_id])  # type: ignore[index]
            self.image_of[id(row)] = image_id
        if not any(refs):
            raise cell_error(
                self.path, row, column, "no references: every candidate needs at least one"
            )
        for c in blank:
            self.blank.setdefault(c, []).append(row)
        return tuple(refs)

    def blank_cells(self, kept: Sequence[Row]) -> tuple[tuple[str, str], ...]:
        """:attr:`JudgmentSet.blank_references` of the ``kept`` rows: their own blank cells,
        or the blank captions of the COCO captions file their images take (scored as given,
        as coco-caption and `capeval score` score them)."""
        ids = {id(r) for r in kept}
        own = tuple(
            cell
            for column, rows in self.blank.items()
            for cell in blank_cells(column, [r for r in rows if id(r) in ids])
        )
        if self.from_coco is None:
            return own
        images = [self.image_of[id(r)] for r in kept if id(r) in self.image_of]
        return own + blank_cells("caption", self.from_coco.blank_rows(images), self.coco_name)

    def _cell(self, row: Row) -> list[str]:
        value = row.values.get("references")
        if isinstance(value, list):
            out = []
            for j, r in enumerate(value):
                if not isinstance(r, str):
                    raise cell_error(
                        self.path,
                        row,
                        "references",
                        f"reference {j + 1}: expected text, got {type(r).__name__}",
                    )
                out.append(r.strip())  # a blank one among others is kept, and said
            return out
        text = text_cell(value, self.path, row, "references")
        shown = text.strip() if len(text.strip()) <= 40 else text.strip()[:40] + "…"
        if REF_SEPARATOR not in text and _LIST_TEXT.match(text):
            raise cell_error(
                self.path,
                row,
                "references",
                f"the cell is a written-out list ({shown!r}), which would be read as one "
                f"reference: separate the references with {REF_SEPARATOR}",
            )
        # references one per line (a spreadsheet's Alt+Enter) were read as one reference; a
        # cell that uses ||| keeps a line break inside a reference (12 of COCO val2014's
        # 202,654 captions hold one)
        if REF_SEPARATOR not in text and ("\n" in text.strip() or "\r" in text.strip()):
            raise cell_error(
                self.path,
                row,
                "references",
                f"the cell breaks its line ({shown!r}), which would be read as one reference: "
                f"separate the references with {REF_SEPARATOR}, not one per line (a line "
                "break inside a reference: write a space)",
            )
        # a blank piece among others is a blank reference, kept and said (an empty cell
        # has none, and is refused)
        out = [r.strip() for r in text.split(REF_SEPARATOR)]
        self.cells += 1
        if len(out) == 1:
            self.single += 1
            if _SHORT_PIPES.search(text):
                self.piped.append(row.line)
        return out

    def warn_separators(self) -> None:
        """Warn when every cell was read as one reference and some hold '|' or '||': the
        references of a row were likely joined with a separator other than |||. A set of one
        reference per row is valid, so this warns rather than refuses."""
        if self.piped and self.single == self.cells:
            warnings.warn(
                f"{Path(self.path).name}: every row has one reference and {len(self.piped):,} "
                f"of them hold '|' or '||' (the first on line {self.piped[0]}): references "
                f"are separated by {REF_SEPARATOR}; each such cell was read as one reference",
                CapevalWarning,
                stacklevel=3,
            )


#: a references cell holding a JSON or Python list of strings: ["a dog", "a cat"]
_LIST_TEXT = re.compile(r"""\s*\[\s*["'].*["']\s*\]\s*$""", re.DOTALL)
#: '|' or '||' on its own, not part of the separator |||
_SHORT_PIPES = re.compile(r"(?<!\|)\|{1,2}(?!\|)")


def row_id(row: Row, columns: Sequence[str], path: Any, fmt: str, n: int) -> str:
    """A row's ``id`` cell, or in a file without an ``id`` column its line (CSV, TSV, JSON
    Lines) or record number ``n`` (a JSON array). A blank cell in a file that has one is
    refused: numbering that row by its line joined it to another row of a scores file, or
    called it a duplicate of the id its line number happened to match."""
    by_line = fmt in ("csv", "tsv", "jsonl")
    if "id" not in columns:
        return str(row.line if by_line else n)
    if "id" not in row.values:  # a JSON record without the key its neighbours have
        what = "no id in this record"
    else:
        value = text_cell(row.values.get("id"), path, row, "id").strip()
        if value:
            return value
        what = "empty id cell"
    raise cell_error(
        path,
        row,
        "id",
        f"{what}: give every row an id, or leave the column out (rows are then numbered by "
        f"{'line' if by_line else 'record'})",
    )


def numeric_columns(columns: Sequence[str], rows: Sequence[Row], exclude: set[str]) -> list[str]:
    """Columns at least half of whose non-empty cells are numbers (judgment-formats.md: "default:
    every numeric column not named above"), id columns (``seg_id``, ``set_id``, ...), pandas'
    index (``Unnamed: 0``) and ``metric:`` columns left out. A column with a few non-numbers
    still counts, so those cells are reported as errors rather than silently ignored."""
    out = []
    for c in columns:
        # external metrics, ids (seg_id, set_id, ...) and pandas' index (Unnamed: 0) are
        # never human scores by default
        if c in exclude or c.startswith(METRIC_PREFIX) or is_id_column(c) or is_index_column(c):
            continue
        cells = [r.values.get(c) for r in rows]
        cells = [v for v in cells if not is_missing(v)]
        if cells and sum(is_number(v) for v in cells) * 2 >= len(cells):
            out.append(c)
    return out


def default_scores(found: Sequence[str]) -> list[str]:
    """The human-score columns of a file that names none: every numeric column, the one
    named as the score (:data:`SCORE_NAMES`) first, so that it is the one correlated by
    default (an ``annotator`` column before ``score`` was). Which of several others is
    meant is the caller's to say (``correlate`` asks for ``--human``).

    >>> default_scores(["annotator", "score"]), default_scores(["fluency", "quality"])
    (['score', 'annotator'], ['fluency', 'quality'])
    """
    named = named_score(found)
    return [named, *(c for c in found if c != named)] if named is not None else list(found)


def _first_bad_score(
    path: Any, columns: Sequence[str], rows: Sequence[Row], exclude: set[str], found: list[str]
) -> None:
    """The error of the first cell that is no number in the column that looks like the
    score, when that column is not numeric: the column named as the score, or where no
    column is numeric, the one of numbers with a decimal comma (``3,5``). A file whose
    every score is ``3,5`` was refused at line 1 as having no score column (one with a few
    such cells named the cell), or had its ``n_raters`` correlated instead."""
    other = [
        c
        for c in columns
        if c not in exclude
        and not c.startswith(METRIC_PREFIX)
        and not is_id_column(c)
        and not is_index_column(c)
    ]
    column = named_score(other)
    if column in found:
        return
    if column is None and not found:
        comma = [c for c in other if _mostly_comma_numbers([r.values.get(c) for r in rows])]
        column = comma[0] if len(comma) == 1 else None
    for row in rows if column is not None else ():
        cell = row.values.get(column)
        if not is_missing(cell):
            parse_number(cell, path, row, column)


def _mostly_comma_numbers(cells: Sequence[Any]) -> bool:
    cells = [c for c in cells if isinstance(c, str) and not is_missing(c)]
    return bool(cells) and sum(bool(comma_hint(c)) for c in cells) * 2 >= len(cells)


def named_score(columns: Sequence[str]) -> str | None:
    """The one column whose name says it is the human score (:data:`SCORE_NAMES`), or None
    (none or several are).

    >>> named_score(["annotator", "Human score"]), named_score(["score", "rating"])
    ('Human score', None)
    """
    named = [c for c in columns if is_score_name(c)]
    return named[0] if len(named) == 1 else None


def is_score_name(column: str) -> bool:
    """Whether a column's name says it is the human score (:data:`SCORE_NAMES`)."""
    return re.sub(r"[\s-]+", "_", column.strip().lower()) in SCORE_NAMES


def load_graded(
    path: str | os.PathLike[str],
    *,
    file_format: str | None = None,
    score_columns: Sequence[str] | None = None,
    references_from: str | os.PathLike[str] | None = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
    preset: str | None = None,
    kendall_variant: str = "b",
    checksum: str | None = None,
) -> JudgmentSet:
    """Read a generic graded file into a JudgmentSet.

    ``metric:<name>`` columns are external metric scores, signed with the file's sha256
    (``checksum`` when given: the original file's, when ``path`` is a column-mapped copy).

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "j.csv"
    >>> _ = p.write_text("id,candidate,references,quality\\n1,a dog,a dog runs|||a pup,3\\n")
    >>> load_graded(p).items[0]
    GradedItem(id='1', image_id='1', candidate='a dog', references=('a dog runs', 'a pup'), \
scores=(3.0,), system=None)
    """
    fmt, columns, rows = read_records(path, file_format, max_bytes=max_bytes)
    require_columns(path, columns, ["candidate"])
    refs = ReferenceSource(path, columns, references_from, max_bytes)
    exclude = set(KNOWN_COLUMNS) | set(refs.ref_columns)
    if score_columns is None:
        found = numeric_columns(columns, rows, exclude)
        _first_bad_score(path, columns, rows, exclude, found)
        if not found:
            raise format_error(
                path,
                "no numeric human-score column found (columns: "
                f"{list(columns)}); name one with `score_columns`",
                line=1,
            )
        scores = default_scores(found)
    else:
        scores = list(score_columns)
        require_columns(path, columns, scores, "no human-score column")
        for c in scores:
            if c.startswith(METRIC_PREFIX):
                raise format_error(
                    path,
                    "a metric: column holds an external metric's scores, not human scores",
                    line=1,
                    column=c,
                )
            if is_index_column(c):
                raise format_error(path, f"{INDEX_COLUMN}, not a human score", line=1, column=c)
    missing: dict[str, list[Row]] = {}  # per score column, the rows dropped for it
    blank: list[Row] = []
    kept_rows: list[Row] = []
    items: list[GradedItem] = []
    kept: list[int] = []
    dropped_keys: dict[str, str] = {}  # a scores file's rows of these are said as such
    ids: list[tuple[str, Row]] = []
    for n, row in enumerate(rows, start=1):
        ident = row_id(row, columns, path, fmt, n)
        ids.append((ident, row))
        image = (
            image_key(id_cell(row.values["image_id"], path, row, "image_id"))
            if row.values.get("image_id") not in (None, "")
            else ident
        )
        candidate = caption_cell(row, path, "candidate").strip()
        references = refs.get(row, image)
        values: list[float] = []
        for c in scores:
            cell = row.values.get(c)
            if is_missing(cell):  # empty, null, NaN, NA, n/a: no score, the row is dropped
                values = []
                break
            values.append(parse_number(cell, path, row, c))
        system = row.values.get("system")
        if not values:  # an item has a value in every score column: say which one was empty
            missing.setdefault(c, []).append(row)
            dropped_keys[ident] = f"of items dropped for a missing human score in column {c!r}"
            continue
        blank += [row] if not candidate else []
        kept.append(n - 1)
        kept_rows.append(row)
        items.append(
            GradedItem(
                ident,
                image,
                candidate,
                references,
                tuple(values),
                None if system in (None, "") else text_cell(system, path, row, "system").strip(),
            )
        )
    unique_ids(path, ids)
    refs.warn_separators()
    external = read_metric_cells(path, rows, kept, columns)
    jset = JudgmentSet(
        "graded",
        tuple(items),
        tuple(scores),
        _sources(path, references_from),
        n_read=len(rows),
        n_kept=len(items),
        # which rows lack a score, and where (a reason of its own per column)
        dropped={f"missing human score in column {c!r}": len(w) for c, w in missing.items()},
        dropped_at={f"missing human score in column {c!r}": places(w) for c, w in missing.items()},
        format="graded",
        preset=preset,
        kendall_variant=kendall_variant,
        blank=blank_cells("candidate", blank),
        blank_references=refs.blank_cells(kept_rows),
        dropped_keys=dropped_keys,
    )
    return with_file_metrics(jset, path, external, checksum)


def _sources(*paths: Any) -> tuple[str, ...]:
    return tuple(Path(p).name for p in paths if p is not None)
