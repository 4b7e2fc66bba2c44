"""Column mapping for generic judgment files whose headers use other names.

The app asks which column holds the candidate, the references, the ids, ...; the file is
then rewritten with the canonical names (judgment-formats.md, "Generic formats") and read by
the ordinary loader, so every validation rule still applies. Only the names change, where
they stand: every record keeps its line, so an error names the line the file has.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from capeval_core.errors import CapevalError, JudgmentFormatError
from capeval_core.files import object_members
from capeval_core.judgments.base import (
    DEFAULT_MAX_BYTES,
    JudgmentSet,
    format_from_suffix,
    read_records,
)
from capeval_core.judgments.external import METRIC_PREFIX, is_id_column
from capeval_core.judgments.graded import (
    KNOWN_COLUMNS,
    named_score,
    numeric_columns,
    reference_columns,
)

#: canonical roles of the generic graded and pairwise formats
GRADED_ROLES = ("candidate", "references", "id", "image_id", "system")
PAIRWISE_ROLES = (
    "candidate_a",
    "candidate_b",
    "references",
    "preferred",
    "votes_a",
    "votes_b",
    "category",
    "id",
    "image_id",
)


#: what an extra numeric column of a graded file can be: the human score, a metric's
#: per-caption scores (``metric:<name>``), or neither (``ignored:<name>``)
SCORE_ROLES = ("human score", "metric", "ignore")


def score_columns_offered(
    columns: Sequence[str], numeric: Sequence[str], mapped: Iterable[str]
) -> tuple[list[str], list[str]]:
    """``(offered, ids)``: the columns a role is asked for (numeric ones and ``metric:``
    columns not mapped to a role above), and the id columns, which are never scores (nor is
    pandas' index, ``Unnamed: 0``, which is not numeric to the loader)."""
    mapped = set(mapped)
    free = [c for c in columns if c not in mapped]
    offered = [
        c for c in free if not is_id_column(c) and (c in numeric or c.startswith(METRIC_PREFIX))
    ]
    return offered, [c for c in free if is_id_column(c)]


def default_role(column: str) -> str:
    """A ``metric:`` column is a metric; any other numeric column a human score."""
    return SCORE_ROLES[1] if column.startswith(METRIC_PREFIX) else SCORE_ROLES[0]


def role_renames(
    roles: Mapping[str, str],
) -> tuple[tuple[tuple[str, str], ...], tuple[str, ...]]:
    """The renames the chosen ``roles`` (column -> one of :data:`SCORE_ROLES`) need, and the
    human-score columns in the loader's order: the one named as the score (``score``,
    ``rating``, ...) first, which the Correlations page opens on.

    >>> role_renames({"metric:bleu": "human score", "fluency": "metric", "score": "human score"})
    ((('metric:bleu', 'bleu'), ('fluency', 'metric:fluency')), ('score', 'bleu'))
    """
    renames: list[tuple[str, str]] = []
    humans: list[str] = []
    for column, role in roles.items():
        external = column.startswith(METRIC_PREFIX)
        plain = column[len(METRIC_PREFIX) :] if external else column
        if role == SCORE_ROLES[0]:
            if external:
                renames.append((column, plain))
            humans.append(plain)
        elif role == SCORE_ROLES[1] and not external:
            renames.append((column, f"{METRIC_PREFIX}{column}"))
        elif role == SCORE_ROLES[2] and external:
            renames.append((column, f"ignored:{plain}"))
    named = named_score([c for c in roles if not c.startswith(METRIC_PREFIX)])
    if named in humans:
        humans.remove(named)
        humans.insert(0, named)
    return tuple(renames), tuple(humans)


def peek_columns(
    path: str | os.PathLike[str], *, max_bytes: int = DEFAULT_MAX_BYTES
) -> tuple[list[str], list[str]]:
    """``(columns, numeric columns)`` of a CSV/TSV/JSON/JSONL file, validated as the loaders do.

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "j.csv"
    >>> _ = p.write_text("caption,refs,grade\\na dog,a dog runs,3\\n")
    >>> peek_columns(p)
    (['caption', 'refs', 'grade'], ['grade'])
    """
    _, columns, rows = read_records(path, max_bytes=max_bytes)
    exclude = set(KNOWN_COLUMNS) | set(reference_columns(columns))
    return columns, numeric_columns(columns, rows, exclude)


def remap_columns(
    path: str | os.PathLike[str], mapping: Mapping[str, str], out: str | os.PathLike[str]
) -> Path:
    """Write ``path`` to ``out`` with columns renamed ``{file column: canonical name}``.

    Columns not in ``mapping`` keep their names. A file that cannot be decoded is copied
    unchanged, so the loader reports the problem with its usual message.

    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "j.csv").write_text("caption,grade\\na dog,3\\n")
    >>> remap_columns(d / "j.csv", {"caption": "candidate"}, d / "m.csv").read_text()
    'candidate,grade\\na dog,3\\n'
    """
    src, dst = Path(path), Path(out)
    data = src.read_bytes()
    mapping = {k: v for k, v in mapping.items() if k and v and k != v}
    try:
        text = data.decode("utf-8-sig")
        fmt = format_from_suffix(src)
    except (UnicodeDecodeError, CapevalError):  # the loader reports these properly
        dst.write_bytes(data)
        return dst
    if not mapping:
        dst.write_bytes(data)
        return dst
    if fmt in ("csv", "tsv"):
        head, sep, rest = text.partition("\n")
        delimiter = "," if fmt == "csv" else "\t"
        fields = next(csv.reader([head.rstrip("\r")], delimiter=delimiter), [])
        clash = _clash([f.strip() for f in fields], mapping)
        if clash:
            raise JudgmentFormatError(f"{src.name}, line 1: {clash}")
        buf = io.StringIO()
        csv.writer(buf, delimiter=delimiter, lineterminator="").writerow(
            [mapping.get(f.strip(), f) for f in fields]
        )
        dst.write_text(buf.getvalue() + sep + rest, encoding="utf-8")
    elif fmt == "jsonl":
        lines = []
        for n, raw in enumerate(text.split("\n"), start=1):
            try:
                lines.append(_renamed_keys(raw, mapping, array=False) or raw)
            except _Clash as clash:
                raise JudgmentFormatError(f"{src.name}, line {n}: {clash}") from None
        dst.write_text("\n".join(lines), encoding="utf-8")
    else:
        try:
            dst.write_text(_renamed_keys(text, mapping, array=True) or text, encoding="utf-8")
        except _Clash as clash:
            line = text.count("\n", 0, clash.pos) + 1
            raise JudgmentFormatError(f"{src.name}, line {line}: {clash}") from None
    return dst


def in_own_names(
    exc: JudgmentFormatError, columns: Sequence[str], mapping: Mapping[str, str]
) -> JudgmentFormatError:
    """A loader's error about the renamed copy of a file (:func:`remap_columns`) in the
    file's own column names: the column it names, and the header it lists, are those the
    user sees in the file, with what each mapped column was read as. ``columns`` is the
    file's own header, ``mapping`` ``{file column: canonical name}``.

    >>> exc = JudgmentFormatError("j.csv, line 1, column 'references': missing required "
    ...     "column 'references'; columns found: ['candidate', 'grade']")
    >>> exc.column = "references"
    >>> print(in_own_names(exc, ["caption", "grade"], {"caption": "candidate"}))
    j.csv, line 1, column 'references': missing required column 'references'; columns found: \
['caption', 'grade'] ('caption' read as 'candidate')
    >>> exc = JudgmentFormatError("j.csv, line 2, column 'candidate': expected text, got null")
    >>> exc.column = "candidate"
    >>> print(in_own_names(exc, ["caption", "grade"], {"caption": "candidate"}))
    j.csv, line 2, column 'caption' (read as 'candidate'): expected text, got null
    """
    mapping = {k: v for k, v in mapping.items() if k in columns and v and k != v}
    if not mapping:
        return exc
    own = _own_names(mapping)
    message = str(exc)
    renamed = repr([mapping.get(c, c) for c in columns])
    read_as = ", ".join(f"{k!r} read as {v!r}" for k, v in mapping.items())
    message = message.replace(renamed, f"{list(columns)!r} ({read_as})")
    column = getattr(exc, "column", None)
    if isinstance(column, str) and column in own:
        where, sep, rest = message.partition(": ")
        named = f"column {column!r}"
        if where.endswith(named):  # the place the message starts with (files.locate)
            where = f"{where.removesuffix(named)}column {own[column]!r} (read as {column!r})"
            message = where + sep + rest
            exc.column = own[column]  # type: ignore[attr-defined]
    exc.args = (message, *exc.args[1:])
    return exc


def set_in_own_names(jset: JudgmentSet, mapping: Mapping[str, str]) -> JudgmentSet:
    """A set read from a renamed copy of a file, its blank cells and the reasons rows were
    dropped naming the file's own columns (``column 'caption'``, not ``'candidate'``)."""
    own = _own_names(mapping)
    if not own:
        return jset

    def said(reason: str) -> str:
        for new, old in own.items():
            reason = reason.replace(f"column {new!r}", f"column {old!r}")
        return reason

    return dataclasses.replace(
        jset,
        blank=tuple((own.get(column, column), rows) for column, rows in jset.blank),
        blank_references=tuple((own.get(c, c), rows) for c, rows in jset.blank_references),
        dropped={said(r): n for r, n in jset.dropped.items()},
        dropped_at={said(r): where for r, where in jset.dropped_at.items()},
        dropped_keys={key: said(rows) for key, rows in jset.dropped_keys.items()},
    )


def _own_names(mapping: Mapping[str, str]) -> dict[str, str]:
    """``{name read as: the file's own column}`` for the columns ``mapping`` renames, where
    one column alone was read as that name (two read as one cannot be told apart).

    >>> _own_names({"caption": "candidate", "a": "x", "b": "x", "id": "id", "": "y"})
    {'candidate': 'caption'}
    """
    renamed = {k: v for k, v in mapping.items() if k and v and k != v}
    targets = list(renamed.values())
    return {v: k for k, v in renamed.items() if targets.count(v) == 1}


class _Clash(Exception):
    """A record holding both a mapped column and the name it is mapped to (at ``pos``)."""

    def __init__(self, message: str, pos: int) -> None:
        super().__init__(message)
        self.pos = pos


def _clash(names: Sequence[str], mapping: Mapping[str, str]) -> str | None:
    """Why renaming ``names`` by ``mapping`` would give two columns one name, or None: a
    column mapped to a name the file already has for a column not mapped away (the loader
    then said "given twice", of a file that gives nothing twice).

    >>> _clash(["candidate", "caption"], {"caption": "candidate"}).split(":")[0]
    "the column 'caption' is mapped to 'candidate', a column the file has too"
    >>> _clash(["candidate", "caption"], {"caption": "candidate", "candidate": "system"})
    """
    present = set(names)
    for source, target in mapping.items():
        if source in present and target in present and target not in mapping:
            return (
                f"the column {source!r} is mapped to {target!r}, a column the file has too: "
                f"give {target!r} a role of its own, or leave {source!r} unmapped"
            )
    return None


def _renamed_keys(text: str, mapping: Mapping[str, str], *, array: bool) -> str | None:
    """``text`` (a JSON array of records, or one record) with each record's keys renamed
    where they stand, so that every line and every other byte stay as the file has them: the
    loader then reports a problem (a key given twice, a bad value) where the file has it.
    None when the text is not that shape (the loader says what it is instead).

    >>> text = '[{"caption": "a", "n": 1},\\n {"caption": "b"}]'
    >>> _renamed_keys(text, {"caption": "candidate"}, array=True)
    '[{"candidate": "a", "n": 1},\\n {"candidate": "b"}]'
    """
    from json import decoder

    space = decoder.WHITESPACE.match
    dec = json.JSONDecoder()
    spans: list[tuple[int, int, str]] = []  # (start, end, new name) of each renamed key
    clashes: list[tuple[str, int]] = []  # (why, where) of records that would repeat a name

    def record(pos: int) -> int:  # the object at pos; returns the position after it
        members, end = object_members(text, pos, dec)
        spans.extend(
            (m.key_start, m.key_end, json.dumps(mapping[m.name], ensure_ascii=False))
            for m in members
            if m.name in mapping
        )
        why = _clash([m.name for m in members], mapping)
        if why:
            clashes.append((why, pos))
        return end

    try:
        pos = space(text, 0).end()
        if not array:
            if not text.strip() or text[pos] != "{":
                return None
            record(pos)
        else:
            if text[pos] != "[":
                return None
            pos = space(text, pos + 1).end()
            while text[pos] != "]":
                pos = record(pos) if text[pos] == "{" else dec.raw_decode(text, pos)[1]
                pos = space(text, pos).end()
                if text[pos] == ",":
                    pos = space(text, pos + 1).end()
    except (ValueError, IndexError, RecursionError):
        return None
    if clashes:
        raise _Clash(*clashes[0])
    parts, at = [], 0
    for start, end, name in spans:
        parts += [text[at:start], name]
        at = end
    return "".join([*parts, text[at:]])
