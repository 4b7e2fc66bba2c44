"""Composite (Aditya et al. 2015): Mechanical Turk CSV files, one per source and aspect.

judgment-formats.md: correctness and thoroughness scores 1-5 per candidate; references come
from the source datasets' caption files; since headers vary between copies, columns are
mapped **by name** (case-insensitive; ``Input.``/``Answer.`` prefixes ignored), or given
explicitly with ``columns={"image": ..., "candidate": ..., "correctness": ...}``.

Two layouts are understood:

* tidy: one row per candidate with image, candidate and score column(s);
* packed (as in the copies circulating with the CLIPScore evaluation code): one row per
  image whose cell holds ``<image url>;<cand 1>;...;<cand k>;<score 1>;...;<score k>``; the
  aspect (``correctness`` / ``throughness``) and source (``8k``, ``30k``, ``coco``) then come
  from the file name, e.g. ``8k_correctness.csv``.

References: ``references_from`` (one file, or ``{"8k": ..., "30k": ..., "coco": ...}``) with
Flickr token files (``<image>#<k> \\t caption``) or COCO captions JSON; in a folder the files
``Flickr8k.token.txt``, ``results_20130124.token`` and ``captions_val2014.json`` are found
by name; COCO val2014 captions otherwise come from the installed pycocoevalcap.

External metric scores: a ``metric:<name>`` column of a tidy file holds that metric's score
of the row's candidate, as in the generic format; with several files, every file the preset
reads has the same ``metric:`` columns. A packed row holds several candidates, so there
the scores come in a scores file joined on ``id`` (the item ids of the set,
``<source>:<image>|<candidate>``) with
:func:`~capeval_core.judgments.external.join_scores_file`.
"""

from __future__ import annotations

import csv
import hashlib
import os
import re
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from capeval_core.judgments.base import (
    DEFAULT_MAX_BYTES,
    GradedItem,
    JudgmentSet,
    Row,
    blank_cells,
    delimiter_hint,
    format_error,
    parse_number,
    read_delimited,
    unique_ids,
)
from capeval_core.judgments.coco import read_coco_references
from capeval_core.judgments.external import (
    METRIC_PREFIX,
    add_metric_scores,
    file_checksum,
    metric_columns,
    read_metric_cells,
)

PRESETS = {
    "published": "human score = correctness; the human-rated reference itself is removed from "
    "the references; Kendall tau-c",
    "thoroughness": "human score = thoroughness; otherwise as published",
}
#: role -> accepted column names (compared lower-case without punctuation and prefixes)
SYNONYMS: dict[str, tuple[str, ...]] = {
    "image": ("image", "imageid", "img", "imageurl", "url", "imagefile", "filename", "imagepath"),
    "candidate": ("candidate", "caption", "sentence", "text", "description", "hypothesis"),
    "correctness": ("correctness", "correct", "correctnessscore"),
    "thoroughness": ("thoroughness", "throughness", "thorough", "thoroughnessscore"),
    "source": ("source", "dataset", "corpus"),
}
#: the library's other way to name a column (the command line and the pages reword it)
COLUMNS_OPTION = ", or map it with the `columns` option"
REFERENCES_OPTION = ", or pass `references_from` with its caption file"
SOURCE_FILES = {
    "8k": "Flickr8k.token.txt",
    "30k": "results_20130124.token",
    "coco": "captions_val2014.json",
}
_COCO_NAME = re.compile(r"COCO_[A-Za-z]+\d*_0*(\d+)$")


def _norm(name: str) -> str:
    name = re.sub(r"^(input|answer)\.", "", name.strip(), flags=re.IGNORECASE)
    return re.sub(r"[^a-z0-9]", "", name.lower())


def composite_image_key(value: str) -> str:
    """Image key shared by the CSVs and the caption files: the base name, no extension;
    COCO file names become their numeric id.

    >>> composite_image_key("http://x/COCO_val2014_000000391895.jpg")
    '391895'
    >>> composite_image_key("1000268201_693b08cb0e.jpg")
    '1000268201_693b08cb0e'
    """
    base = value.strip().rsplit("/", 1)[-1]
    base = base.rsplit(".", 1)[0] if "." in base else base
    m = _COCO_NAME.match(base)
    return str(int(m.group(1))) if m else base


def source_of(name: str) -> str | None:
    low = name.lower()
    for key in ("30k", "8k", "coco"):
        if low.startswith(key) or f"flickr{key}" in low or f"_{key}" in low:
            return key
    return None


def aspect_of(name: str) -> str | None:
    low = name.lower()
    if "correct" in low:
        return "correctness"
    if "thorough" in low or "throughness" in low:
        return "thoroughness"
    return None


def _token_references(
    path: Path, max_bytes: int
) -> tuple[dict[str, tuple[str, ...]], dict[str, list[Row]]]:
    """Per image key, its captions, and the rows of its blank ones."""
    _, rows = read_delimited(
        path, "\t", header=("caption_id", "caption"), max_bytes=max_bytes, quoting=csv.QUOTE_NONE
    )
    out: dict[str, list[str]] = defaultdict(list)
    blank: dict[str, list[Row]] = defaultdict(list)
    for row in rows:
        image = row.values["caption_id"].strip().rpartition("#")[0]
        if not image:
            raise format_error(
                path,
                "expected <image_file>#<k> in the first field",
                line=row.line,
                column="caption_id",
            )
        out[composite_image_key(image)].append(row.values["caption"].strip())
        if not out[composite_image_key(image)][-1]:
            blank[composite_image_key(image)].append(row)
    return {k: tuple(v) for k, v in out.items()}, blank


class _References:
    def __init__(self, folder: Path, given: object, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self.paths: dict[str | None, Path] = {}
        if isinstance(given, Mapping):
            self.paths = {k: Path(v) for k, v in given.items()}
        elif given is not None:
            self.paths = {None: Path(given)}  # type: ignore[arg-type]
        else:
            for src, name in SOURCE_FILES.items():
                if (folder / name).is_file():
                    self.paths[src] = folder / name
        self.loaded: dict[str | None, dict[str, tuple[str, ...]]] = {}
        #: per caption file read, where the blank captions of an image are
        self.blank_at: dict[str | None, Callable[[Sequence[str]], list[Row]]] = {}
        #: per caption file, the images (keys) whose blank captions are references kept
        self.kept_blank: dict[str | None, list[str]] = {}

    def names(self) -> list[str]:
        return [p.name for p in self.paths.values()]

    def lookup(
        self, source: str | None, key: str, where: Path, row: Row, column: str
    ) -> tuple[str, ...]:
        src = self._source(source)
        if src not in self.loaded:
            self.loaded[src] = self._load(src, where)
        refs = self.loaded[src].get(key)
        if not refs:
            raise format_error(
                where,
                f"image {key!r} has no references in the {src or 'given'} caption file",
                line=row.line,
                column=column,
            )
        return refs

    def _source(self, source: str | None) -> str | None:
        return source if source in self.paths else None if None in self.paths else source

    def keep_blank(self, source: str | None, key: str) -> None:
        """Say the blank captions of image ``key``: an item kept them as references."""
        self.kept_blank.setdefault(self._source(source), []).append(key)

    def blank_references(self) -> tuple[tuple[str, str], ...]:
        """:attr:`JudgmentSet.blank_references`: per caption file, where the blank captions
        the kept items take as references are (scored as given, as coco-caption scores
        them). COCO val2014's captions of the installed package have none."""
        return tuple(
            cell
            for src, keys in self.kept_blank.items()
            if src in self.blank_at
            for cell in blank_cells("caption", self.blank_at[src](keys), self.paths[src].name)
        )

    def _load(self, src: str | None, where: Path) -> dict[str, tuple[str, ...]]:
        path = self.paths.get(src)
        if path is None:
            if src == "coco":
                from capeval_core.resources import coco_captions

                by: dict[str, list[str]] = defaultdict(list)
                for c in coco_captions("val"):
                    by[str(c.image_id)].append(c.caption)
                return {k: tuple(v) for k, v in by.items()}
            if not src:
                # the folder's caption files are found by source: this file names none
                found = [k for k in self.paths if k]
                named = f"{found[0] if len(found) == 1 else '8k'}_{where.name}"
                beside = (
                    ""
                    if found
                    else f" (with its caption file beside it: {', '.join(SOURCE_FILES.values())})"
                )
                raise format_error(
                    where,
                    "no source for this file, so no caption file: its name names none (8k, "
                    f"30k or coco) and it has no source column; name the file after its "
                    f"source (e.g. {named!r}){beside} or add a source column{REFERENCES_OPTION}",
                )
            raise format_error(
                where,
                f"no caption file for source {src!r}: pass "
                "`references_from` (a Flickr token file or COCO captions JSON)",
            )
        if path.suffix.lower() == ".json":
            coco = read_coco_references(path, max_bytes=self.max_bytes)
            self.blank_at[src] = coco.blank_rows
            return coco.captions  # keyed by image_key, as the CSVs' images are looked up
        captions, blank = _token_references(path, self.max_bytes)
        self.blank_at[src] = lambda keys: [r for k in dict.fromkeys(keys) for r in blank[k]]
        return captions


def _find(columns: Sequence[str], role: str, given: Mapping[str, str]) -> str | None:
    if role in given:
        return given[role] if given[role] in columns else None
    wanted = SYNONYMS[role]
    for c in columns:
        if _norm(c) in wanted:
            return c
    return None


def _missing(path: Path, role: str, columns: Sequence[str], given: Mapping[str, str]):
    if role in given:
        return format_error(
            path,
            f"the column {given[role]!r} given for {role!r} is not in "
            f"the header (columns found: {list(columns)})",
            line=1,
            column=given[role],
        )
    # a file of another delimiter is read as one column: the delimiter is the fix, not a name
    fix = delimiter_hint(columns) or f"; rename its header to one of those{COLUMNS_OPTION}"
    return format_error(
        path,
        f"cannot find the {role} column: looked for a header named one "
        f"of {list(SYNONYMS[role])} (case-insensitive); columns found: {list(columns)}{fix}",
        line=1,
        column=role,
    )


def _packed_column(columns: Sequence[str], rows: list[Row]) -> str | None:
    for c in columns:
        cell = rows[0].values.get(c, "").strip()
        if cell.lower().startswith("http") and cell.count(";") >= 2:
            return c
    return None


def load_composite(
    path: str | os.PathLike[str],
    *,
    preset: str | None = None,
    references_from: str | os.PathLike[str] | Mapping[str, str | os.PathLike[str]] | None = None,
    columns: Mapping[str, str] | None = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> JudgmentSet:
    """Composite CSV file(s) (a file, or the folder holding them) with a preset."""
    preset = preset or "published"
    if preset not in PRESETS:
        raise format_error(
            path, f"unknown preset {preset!r} for composite; choose one of {list(PRESETS)}"
        )
    aspect = "correctness" if preset == "published" else "thoroughness"
    given = dict(columns or {})
    p = Path(path)
    # .CSV as well: a copy from Windows may have its suffix in capitals
    files = (
        sorted(f for f in p.iterdir() if f.suffix.lower() == ".csv" and f.is_file())
        if p.is_dir()
        else [p]
    )
    if not files:
        raise format_error(p, "no .csv files in this folder")
    refs = _References(p if p.is_dir() else p.parent, references_from, max_bytes)
    items: list[GradedItem] = []
    dropped: dict[str, int] = {}
    notes: list[str] = []
    n_read = 0
    used: list[str] = []
    metrics: dict[str, list[float]] = {}
    metric_files: list[Path] = []
    blank: list[tuple[str, str]] = []
    for f in files:
        header, rows = read_delimited(f, ",", max_bytes=max_bytes)
        file_aspect = aspect_of(f.name)
        if (
            file_aspect is not None
            and file_aspect != aspect
            and _find(header, aspect, given) is None
        ):
            notes.append(f"{f.name}: {file_aspect} file not used by preset {preset!r}")
            continue
        used.append(f.name)
        n_read += len(rows)
        found, removed, external, empty = _read_file(f, header, rows, aspect, given, refs)
        # where a blank candidate is: by line in the first file read, by file and line after
        blank += blank_cells(*empty, "" if f.name == used[0] else f.name)
        if used[1:] and set(external) != set(metrics):
            differ = sorted(set(metrics) ^ set(external))[0]
            raise format_error(
                f,
                f"{f.name} and {used[0]} have different metric: columns; every file read "
                f"needs {METRIC_PREFIX}{differ} or none does",
                line=1,
                column=METRIC_PREFIX + differ,
            )
        if external:
            metric_files.append(f)
        for name, values in external.items():
            metrics.setdefault(name, []).extend(values)
        items += found
        if removed:
            notes.append(
                f"{f.name}: {removed:,} candidate(s) were among their references and "
                "were removed from them"
            )
    jset = JudgmentSet(
        "graded",
        tuple(items),
        (aspect,),
        (*used, *refs.names()),
        n_read=n_read,
        n_kept=len(items),
        dropped=dropped,
        format="composite",
        preset=preset,
        kendall_variant="c",
        notes=tuple(notes),
        blank=tuple(blank),
        blank_references=refs.blank_references(),
    )
    if metrics:
        # one checksum over the files the scores came from, in the order read
        checksum = hashlib.sha256(
            "".join(file_checksum(f) for f in metric_files).encode()
        ).hexdigest()
        source = ", ".join(f.name for f in metric_files)
        for name, values in metrics.items():
            jset = add_metric_scores(jset, name, values, checksum=checksum, source=source)
    return jset


def _read_file(
    f: Path,
    header: list[str],
    rows: list[Row],
    aspect: str,
    given: Mapping[str, str],
    refs: _References,
) -> tuple[list[GradedItem], int, dict[str, list[float]], tuple[str, list[Row]]]:
    """The file's items, how many had their own text among the references, its
    ``metric:`` columns' scores (by metric name, in item order), and the candidate column
    with the rows whose candidate is blank (scored as given, as coco-caption scores one)."""
    src_col = _find(header, "source", given)
    file_source = source_of(f.name)
    cand_col = _find(header, "candidate", given)
    judged: list[tuple[Row, str, str, str, float, str]] = []  # row, source, image, cand, score
    external: dict[str, list[float]] = {}
    image_column = ""  # where a row names its image, for a message about the image
    if cand_col is None and "candidate" not in given and (packed := _packed_column(header, rows)):
        image_column = packed
        if metric_columns(header):
            raise format_error(
                f,
                "a packed row holds several candidates, so a metric: column cannot say "
                "whose score it is; join a scores file on the set's ids instead",
                line=1,
                column=next(iter(metric_columns(header))),
            )
        for row in rows:
            parts = row.values[packed].split(";")
            k = (len(parts) - 1) // 2
            if k < 1 or len(parts) != 2 * k + 1:
                raise format_error(
                    f,
                    "expected '<url>;<candidates>;<scores>' with as many "
                    f"scores as candidates (got {len(parts)} parts)",
                    line=row.line,
                    column=packed,
                )
            for j in range(k):
                cell = Row(row.line, {packed: parts[1 + k + j]})
                score = parse_number(parts[1 + k + j], f, cell, packed)
                judged.append(
                    (
                        row,
                        file_source or "",
                        composite_image_key(parts[0]),
                        parts[1 + j].strip(),
                        score,
                        packed,
                    )
                )
    else:
        img_col = _find(header, "image", given)
        if img_col is None:
            raise _missing(f, "image", header, given)
        image_column = img_col
        if cand_col is None:
            raise _missing(f, "candidate", header, given)
        score_col = _find(header, aspect, given)
        if score_col is None:
            raise _missing(f, aspect, header, given)
        for row in rows:
            src = row.values[src_col].strip().lower() if src_col else file_source or ""
            cell = row.values[score_col]
            score = parse_number(cell, f, row, score_col)
            judged.append(
                (
                    row,
                    source_of(src) or src,
                    composite_image_key(row.values[img_col]),
                    row.values[cand_col].strip(),
                    score,
                    score_col,
                )
            )
        external = read_metric_cells(f, rows, range(len(rows)), header)
    unique_ids(f, ((f"{s}:{i}|{c}", r) for r, s, i, c, _, _ in judged), column="candidate")
    items = []
    removed = 0
    blank: list[Row] = []
    for row, src, image, candidate, score, col in judged:
        if not 1 <= score <= 5:
            raise format_error(f, f"scores are 1-5 (got {score:g})", line=row.line, column=col)
        references = refs.lookup(src or None, image, f, row, image_column)
        # Preset: the human-rated reference itself leaves the references (judgment-formats.md).
        kept = tuple(r for r in references if r != candidate)
        removed += len(kept) != len(references)
        if not kept:
            raise format_error(
                f, "no references left after removing the candidate", line=row.line, column=col
            )
        blank += [row] if not candidate else []
        if any(not r.strip() for r in kept):  # a blank caption of the image, kept
            refs.keep_blank(src or None, image)
        items.append(GradedItem(f"{src}:{image}|{candidate}", image, candidate, kept, (score,)))
    return items, removed, external, (cand_col or image_column, blank)
