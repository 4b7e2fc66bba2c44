"""THumB 1.0 (Kasai et al. 2022, "Transparent Human Evaluation for Image Captioning"), read as
distributed: ``mscoco_THumB-1.0.jsonl``, one JSON object per judged caption.

Keys: ``SYS`` (the system: Up-Down, Unified-VLP, VinVL-base, VinVL-large, Human), ``seg_id``
(the COCO image id, as text), ``set_id`` (the image's index in the Karpathy test split),
``hyp`` (the caption), ``image`` (its COCO val2014 file name), ``P`` precision and ``R``
recall (1-5), ``Fl`` fluency, ``Con`` conciseness and ``Inc`` inclusive language (penalties,
0 or negative), ``human_score`` = (P + R) / 2 + Fl + Con + Inc. 500 images x 5 systems.
``seg_id`` and ``set_id`` are ids, never human scores.

References: by default the image's COCO val2014 captions from the installed package, found by
the ``image`` file name, as the Karpathy split keeps them (the first five by annotation id),
without the Human system's caption (it is one of those five); or THumB's own
``mscoco_references.json`` (JSON lines, despite the suffix: per image its ``seg_id`` and 4
``refs``) when it is given.

The file's history: the authors re-aligned the Human rows after the first release, and the
references file was not regenerated with them; in the fixed release, 39 of its 500 reference
lists hold that image's Human caption. So neither file is trusted blindly: the Human caption
is matched against the image's captions (case, punctuation and spacing aside), and under
``kasai2022-with-human`` no reference equal to the Human caption is kept (the notes say how
many were removed). COCO has one image (39081) whose Human caption appears twice, once with
a final period; there the other copy stays a reference under ``kasai2022`` (as in THumB's
own references file) and is removed under ``kasai2022-with-human``.

Presets, after the paper's protocol: ``kasai2022`` (its main setting: the four machine
systems, each caption against the 4 references that remain once the Human caption is
removed) and ``kasai2022-with-human`` (all five systems; the Human caption scored against the
other references of its image).
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

from capeval_core.judgments.base import (
    DEFAULT_MAX_BYTES,
    GradedItem,
    JudgmentSet,
    Row,
    blank_before_last,
    blank_cells,
    blank_references_left_out,
    caption_cell,
    cell_error,
    count_into,
    folder_name,
    format_error,
    parse_number,
    read_jsonl_records,
    text_cell,
    unique_ids,
)
from capeval_core.judgments.external import ID_SEPARATOR, read_metric_cells, with_file_metrics

#: preset name -> description; the first is the default
PRESETS = {
    "kasai2022": "Kasai et al. 2022, main setting: the 4 machine systems (Human rows left "
    "out), each caption against its image's COCO captions without the Human one (4 references)",
    "kasai2022-with-human": "all 5 systems; the Human caption scored against the other "
    "references of its image (none equal to it)",
}
#: human-score columns, the default first
HUMAN_COLUMNS = ("human_score", "P", "R", "Fl", "Con", "Inc")
#: what identifies a row (a scores file joined to a THumB set names both)
ID_COLUMNS = ("seg_id", "SYS")
REQUIRED = ("SYS", "seg_id", "hyp", "image", *HUMAN_COLUMNS)
HUMAN_SYSTEM = "Human"
#: THumB 1.0's systems: a row of any other is refused, so no fifth "system" enters the
#: system-level correlations the presets promise over these
SYSTEMS = ("Up-Down", "Unified-VLP", "VinVL-base", "VinVL-large", HUMAN_SYSTEM)
#: captions per image in the Karpathy split THumB's images come from: the first five of the
#: image's COCO captions by annotation id (three THumB images have a sixth in COCO, which the
#: split, and so the paper's 4 references, leave out)
KARPATHY_CAPTIONS = 5
FILE_NAME = "mscoco_THumB-1.0.jsonl"
REFERENCES_NAME = "mscoco_references.json"
HUMAN_LEFT_OUT = "Human system (preset)"
_IMAGE = re.compile(r"COCO_val2014_(\d{12})\.jpg")


def _same(text: str) -> str:
    """Captions compared without case, punctuation or spacing (THumB's ``hyp`` is cleaned,
    truecased text; COCO's captions are as typed).

    >>> _same("A man riding a horse.") == _same(" a man riding a horse ")
    True
    """
    return " ".join(re.sub(r"[^a-z0-9]+", " ", text.lower()).split())


@functools.lru_cache(maxsize=1)
def coco_val_by_file() -> Mapping[str, tuple[str, ...]]:
    """COCO val2014 file name -> its captions in annotation-id order (installed package)."""
    from capeval_core.resources import coco_caption_file

    data = coco_caption_file("val")
    names = {img["id"]: img["file_name"] for img in data["images"]}
    by_image: dict[str, list[tuple[int, str]]] = {}
    for ann in data["annotations"]:
        by_image.setdefault(names[ann["image_id"]], []).append((ann["id"], ann["caption"]))
    return {name: tuple(c for _, c in sorted(caps)) for name, caps in by_image.items()}


def load_thumb(
    path: str | os.PathLike[str],
    *,
    preset: str | None = None,
    references_from: str | os.PathLike[str] | None = None,
    score_columns: Sequence[str] | None = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
    coco: Mapping[str, Sequence[str]] | None = None,
) -> JudgmentSet:
    """Read THumB 1.0's judgments (the ``.jsonl`` file, or a folder holding it, and
    optionally its references file) with the ``kasai2022`` (default) or
    ``kasai2022-with-human`` preset.

    ``coco`` maps a COCO val2014 file name to its captions (default: the installed package's).
    ``score_columns`` picks human columns (default: all six, ``human_score`` first).
    ``metric:<name>`` keys are external metric scores; a Human row left out by the preset
    may lack them.
    """
    preset = preset or next(iter(PRESETS))
    if preset not in PRESETS:
        raise format_error(path, f"unknown preset {preset!r}; choose one of {list(PRESETS)}")
    path, references_from = _files(Path(path), references_from)
    rows = read_jsonl_records(path, max_bytes=max_bytes)
    columns = list(dict.fromkeys(k for r in rows for k in r.values))
    names = tuple(score_columns) if score_columns else HUMAN_COLUMNS
    for name in names:
        if name not in HUMAN_COLUMNS:
            raise format_error(
                path,
                f"{name!r} is not a human-score column of THumB; choose from {list(HUMAN_COLUMNS)}",
                column=name,
            )
    for row in rows:
        for key in REQUIRED:
            if key not in row.values:
                raise cell_error(path, row, key, f"missing key {key!r}")
    parsed = [_parse(path, row) for row in rows]
    unique_ids(path, ((f"{p['seg_id']}{ID_SEPARATOR}{p['SYS']}", row) for p, row in parsed))
    human = {p["image"]: p["hyp"] for p, _ in parsed if p["SYS"] == HUMAN_SYSTEM}
    notes: list[str] = []
    left_out: dict[str, Row] = {}  # per image, the line of its references file, if blanks
    if references_from is None:
        refs = _coco_references(path, parsed, human, coco, notes)
        sources = (path.name, "COCO val2014 captions (installed package)")
    else:
        refs, left_out = _file_references(references_from, parsed, max_bytes)
        sources = (path.name, Path(references_from).name)
    with_human = preset == "kasai2022-with-human"
    # the blank references left out of those of the images the preset's rows take
    used = {p["image"] for p, _ in parsed if with_human or p["SYS"] != HUMAN_SYSTEM}
    rows_out = [left_out[image] for image in used if image in left_out]
    if rows_out:
        notes.append(blank_references_left_out(blank_cells("refs", rows_out, sources[1])))
    if with_human:
        removed = 0
        for image, caption in human.items():
            kept = tuple(r for r in refs[image] if _same(r) != _same(caption))
            removed += len(refs[image]) - len(kept)
            refs[image] = kept
        if removed:
            notes.append(
                f"{removed:,} reference(s) equal to their image's Human caption removed, so "
                "no Human caption is scored against itself"
            )
    elif references_from is not None:
        leaked = sum(any(_same(r) == _same(c) for r in refs[image]) for image, c in human.items())
        if leaked:
            notes.append(
                f"{leaked:,} image(s) of the references file list their Human caption among "
                "the references (the file predates the re-alignment of the Human rows)"
            )
    items: list[GradedItem] = []
    kept_rows: list[int] = []
    blank: list[Row] = []  # kept rows whose hyp is empty: scored as given, and said
    dropped: dict[str, int] = {}
    dropped_keys: dict[str, str] = {}  # a scores file's rows of these are said as such
    left_out_rows = f"of the {HUMAN_SYSTEM} system, which preset {preset!r} leaves out"
    blank_images: dict[str, None] = {}  # images given a blank COCO caption as a reference
    for i, (p, row) in enumerate(parsed):
        if p["SYS"] == HUMAN_SYSTEM and not with_human:
            count_into(dropped, HUMAN_LEFT_OUT)
            dropped_keys[f"{p['seg_id']}{ID_SEPARATOR}{p['SYS']}"] = left_out_rows
            continue
        references = refs[p["image"]]
        if not references:
            raise format_error(
                path, "no references left for this image", line=row.line, column="image"
            )
        kept_rows.append(i)
        blank += [row] if not p["hyp"] else []
        if references_from is None and "" in references:  # a blank COCO caption, kept
            blank_images.setdefault(p["image"], None)
        items.append(
            GradedItem(
                f"{p['seg_id']}{ID_SEPARATOR}{p['SYS']}",
                p["seg_id"],
                p["hyp"],
                references,
                tuple(p[c] for c in names),
                p["SYS"],
            )
        )
    external = read_metric_cells(path, rows, kept_rows, columns)
    jset = JudgmentSet(
        "graded",
        tuple(items),
        names,
        sources,
        n_read=len(rows),
        n_kept=len(items),
        dropped=dropped,
        format="thumb",
        preset=preset,
        notes=tuple(notes),
        id_columns=ID_COLUMNS,
        blank=blank_cells("hyp", blank),
        blank_references=_coco_blanks(sources[1], list(blank_images)),
        dropped_keys=dropped_keys,
    )
    return with_file_metrics(jset, path, external)


def _files(
    path: Path, references_from: str | os.PathLike[str] | None
) -> tuple[Path, str | os.PathLike[str] | None]:
    """The judgments file, and the references file: as given, or found beside it in a
    folder (THumB's own name)."""
    if not path.is_dir():
        return path, references_from
    found = sorted(path.glob("*.jsonl"))
    judgments = path / FILE_NAME if (path / FILE_NAME).is_file() else None
    if judgments is None and len(found) == 1:
        judgments = found[0]
    if judgments is None:
        raise format_error(
            path / FILE_NAME,
            f"{FILE_NAME} not found in the folder {folder_name(path)!r} (nor exactly one "
            "other .jsonl file)",
        )
    if references_from is None and (path / REFERENCES_NAME).is_file():
        references_from = path / REFERENCES_NAME
    return judgments, references_from


def _parse(path: Path, row: Row) -> tuple[dict, Row]:
    v = row.values
    out: dict = {k: text_cell(v[k], path, row, k).strip() for k in ("SYS", "seg_id")}
    out["hyp"] = caption_cell(row, path, "hyp").strip()
    if out["SYS"] not in SYSTEMS:
        raise cell_error(
            path,
            row,
            "SYS",
            f"SYS {out['SYS']!r} is not one of THumB 1.0's systems ({', '.join(SYSTEMS)}), "
            "which its presets score; judge other systems' captions as a graded set (a "
            "`system` column)",
        )
    image = text_cell(v["image"], path, row, "image").strip()
    match = _IMAGE.fullmatch(image)
    if match is None:
        raise cell_error(
            path,
            row,
            "image",
            f"expected a COCO val2014 file name (COCO_val2014_<12 digits>.jpg), got {image!r}",
        )
    if str(int(match.group(1))) != out["seg_id"]:
        raise cell_error(
            path, row, "seg_id", f"seg_id {out['seg_id']!r} is not the image id of {image!r}"
        )
    out["image"] = image
    for c in HUMAN_COLUMNS:
        out[c] = parse_number(v[c], path, row, c)
    _check_scale(path, row, out)
    return out, row


#: THumB 1.0's rubric: precision and recall 1 to 5, penalties 0 or below
_SCALE = {
    "P": (1.0, 5.0),
    "R": (1.0, 5.0),
    "Fl": (-5.0, 0.0),
    "Con": (-5.0, 0.0),
    "Inc": (-5.0, 0.0),
}


def _check_scale(path: Path, row: Row, out: dict) -> None:
    """A score off the rubric, or a human_score that is not (P + R) / 2 + Fl + Con + Inc,
    is refused: it would move every correlation without a word."""
    for c, (low, high) in _SCALE.items():
        if not low <= out[c] <= high:
            raise cell_error(
                path, row, c, f"{c} is {out[c]:g}, outside THumB's {low:g} to {high:g}"
            )
    total = (out["P"] + out["R"]) / 2 + out["Fl"] + out["Con"] + out["Inc"]
    if abs(total - out["human_score"]) > 1e-6:
        raise cell_error(
            path,
            row,
            "human_score",
            f"human_score is {out['human_score']:g}, but (P + R) / 2 + Fl + Con + Inc is {total:g}",
        )


def _coco_references(
    path: Path,
    parsed: Sequence[tuple[dict, Row]],
    human: Mapping[str, str],
    coco: Mapping[str, Sequence[str]] | None,
    notes: list[str],
) -> dict[str, tuple[str, ...]]:
    """Per image file, its first five COCO captions (the Karpathy split's) without the Human
    caption's own annotation."""
    coco = coco_val_by_file() if coco is None else coco
    refs: dict[str, tuple[str, ...]] = {}
    unmatched = 0
    for p, row in parsed:
        image = p["image"]
        if image in refs:
            continue
        if image not in coco:
            raise cell_error(
                path, row, "image", f"{image!r} is not a COCO val2014 image with captions"
            )
        captions = list(coco[image])[:KARPATHY_CAPTIONS]
        caption = human.get(image)
        if caption is not None:
            exact = [i for i, c in enumerate(captions) if c.strip() == caption]
            close = [i for i, c in enumerate(captions) if _same(c) == _same(caption)]
            own = (exact or close)[:1]
            if own:
                del captions[own[0]]
            else:
                unmatched += 1
        refs[image] = tuple(c.strip() for c in captions)
    other = sum(len(r) != KARPATHY_CAPTIONS - 1 for r in refs.values())
    if other:
        notes.append(
            f"{other:,} image(s) have other than {KARPATHY_CAPTIONS - 1} references (fewer "
            f"than {KARPATHY_CAPTIONS} COCO captions, or no Human caption among them)"
        )
    if unmatched:
        notes.append(
            f"{unmatched:,} Human caption(s) match none of their image's COCO captions; those "
            "images keep all their COCO captions as references"
        )
    return refs


def _coco_blanks(source: str, images: Sequence[str]) -> tuple[tuple[str, str], ...]:
    """:attr:`JudgmentSet.blank_references` of COCO captions that are blank: a set says the
    images they are of (the installed package's val2014 captions have none).

    >>> _coco_blanks("COCO", ["a.jpg", "b.jpg"])
    (('caption', "COCO, images 'a.jpg' and 'b.jpg'"),)
    """
    if not images:
        return ()
    named = [repr(image) for image in images[:5]]
    if len(images) > len(named):
        listed = f"{', '.join(named)} and {len(images) - len(named):,} more"
    else:
        listed = " and ".join(filter(None, (", ".join(named[:-1]), named[-1])))
    word = "images" if len(images) > 1 else "image"
    return (("caption", f"{source}, {word} {listed}"),)


def _file_references(
    references_from: str | os.PathLike[str],
    parsed: Sequence[tuple[dict, Row]],
    max_bytes: int,
) -> tuple[dict[str, tuple[str, ...]], dict[str, Row]]:
    """Per image file, its references from THumB's references file (keyed by ``seg_id``),
    and the lines of those that list a blank reference before a filled one: read without
    it (a blank after the last is no reference, in every format)."""
    rows = read_jsonl_records(references_from, max_bytes=max_bytes)
    by_seg: dict[str, tuple[str, ...]] = {}
    blank: dict[str, Row] = {}
    for row in rows:
        if "seg_id" not in row.values or "refs" not in row.values:
            key = "seg_id" if "seg_id" not in row.values else "refs"
            raise format_error(references_from, f"missing key {key!r}", line=row.line, column=key)
        refs = row.values["refs"]
        if not isinstance(refs, list) or not all(isinstance(r, str) for r in refs):
            raise format_error(
                references_from, "'refs' must be a list of texts", line=row.line, column="refs"
            )
        seg = text_cell(row.values["seg_id"], references_from, row, "seg_id").strip()
        by_seg[seg] = tuple(r.strip() for r in refs if r.strip())
        if blank_before_last(refs):
            blank[seg] = row
    out: dict[str, tuple[str, ...]] = {}
    left_out: dict[str, Row] = {}
    for p, row in parsed:
        if p["seg_id"] not in by_seg:
            raise format_error(
                references_from,
                f"no references for seg_id {p['seg_id']!r} (judgments line {row.line})",
                column="seg_id",
            )
        out[p["image"]] = by_seg[p["seg_id"]]
        if p["seg_id"] in blank:
            left_out[p["image"]] = blank[p["seg_id"]]
    return out, left_out
