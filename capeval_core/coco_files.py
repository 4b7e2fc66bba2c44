"""Reading COCO-format files: results (``[{"image_id", "caption"}]``) and captions
annotations (``{"annotations": [...], "images": [...]}``), from paths or uploads.

Every file goes through :mod:`capeval_core.files` (size cap, encodings, JSON depth, lone
surrogates) and every record is validated, so bad input ends in one :class:`InputError`
naming the file, record and field. ``capeval score``, ``capeval compare`` and the Systems page
read their files here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from capeval_core import files
from capeval_core.errors import InputError
from capeval_core.files import Limits

#: a file to read: a path, or an upload as (file name, bytes)
Source = str | Path | tuple[str, bytes]

#: how a caller raises each limit (the command line's flags by default)
LIMIT_FLAGS: Mapping[str, str] = {
    "max_bytes": "--max-bytes",
    "max_caption_tokens": "--max-caption-tokens",
    "max_references": "--max-references",
}


@dataclass(frozen=True)
class CocoBatch:
    """Candidates and references of the images in a results file, in evaluation order."""

    image_ids: tuple[Any, ...]
    candidates: tuple[str, ...]
    references: tuple[tuple[str, ...], ...]


def read_json_source(source: Source, role: str, limits: Limits | None = None) -> tuple[str, Any]:
    """``(display name, parsed JSON)`` of a path or an upload, with every check of
    :func:`capeval_core.files.read_json`."""
    limits = limits or Limits()
    if isinstance(source, tuple):
        name, data = source
        fail = files.failer(f"{role} file {name}")
        if len(data) > limits.max_bytes:
            raise fail(
                f"{len(data):,} bytes, above the {limits.max_bytes:,}-byte limit (raise it with "
                f"{LIMIT_FLAGS['max_bytes']} if the data are genuine)"
            )
        if not data.strip():
            raise fail("file is empty")
        return name, files.parse_json(files.decode_text(data, fail), fail)
    path = Path(source)
    value = files.read_json(
        path,
        max_bytes=limits.max_bytes,
        fail=files.failer(f"{role} file {path}"),
        raise_with=LIMIT_FLAGS["max_bytes"],
    )
    return str(path), value


def image_id_of(value: Any, fail: files.Fail, record: int, field: str = "image_id") -> Any:
    """A COCO image id: a whole number or text. ``true`` would match id 1 (``True == 1``),
    a fraction names no image, and lists and objects are no ids at all."""
    if isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool)):
        return value
    raise fail(
        f"expected an integer or a string (got {files.json_kind(value)})",
        record=record,
        column=field,
    )


def caption_rows(
    rows: Any, path: str | Path, role: str, limits: Limits | None = None, key: str | None = None
) -> list[tuple[Any, str]]:
    """``(image_id, caption)`` pairs from a list of COCO caption records, validated.

    ``key`` names the list inside the file (``annotations``) for the messages.
    """
    limits = limits or Limits()
    label = f"{role} file {path}" + (f", list {key!r}" if key else "")
    fail = files.failer(label)
    if not isinstance(rows, list):
        raise fail("expected a list of {image_id, caption} records")
    out = []
    for i, row in enumerate(rows):
        if not isinstance(row, dict):
            raise fail(f"expected an object, got {files.json_kind(row)}", record=i)
        for field in ("image_id", "caption"):
            if field not in row:
                raise fail(f"missing field '{field}'", record=i)
        image_id = image_id_of(row["image_id"], fail, i)
        caption = row["caption"]
        if not isinstance(caption, str):
            raise fail(f"expected text, got {files.json_kind(caption)}", record=i, column="caption")
        problem = limits.caption_problem(caption)
        if problem:
            raise fail(over_limit(problem, "max_caption_tokens"), record=i, column="caption")
        out.append((image_id, caption))
    return out


def over_limit(problem: str, limit: str) -> str:
    return f"{problem} (raise it with {LIMIT_FLAGS[limit]} if the data are genuine)"


def load_coco(
    results_path: Path, annotations_path: Path, limits: Limits | None = None
) -> CocoBatch:
    """Read a COCO results file and a COCO captions file into one ordered batch, held to
    ``limits`` (default: :class:`~capeval_core.files.Limits`)."""
    limits = limits or Limits()
    results = caption_rows(
        read_json_source(results_path, "results", limits)[1], results_path, "results", limits
    )
    if not results:
        raise InputError(f"results file {results_path} holds no captions")
    ann = read_json_source(annotations_path, "annotations", limits)[1]
    if not isinstance(ann, dict) or "annotations" not in ann:
        raise InputError(
            f"annotations file {annotations_path}: expected an object with an 'annotations' list"
        )
    refs: dict[Any, list[str]] = {}
    for image_id, caption in caption_rows(
        ann["annotations"], annotations_path, "annotations", limits, "annotations"
    ):
        refs.setdefault(image_id, []).append(caption)
    for image_id, captions in refs.items():
        problem = limits.references_problem(len(captions))
        if problem:
            raise InputError(
                f"annotations file {annotations_path}: image_id {image_id!r} has "
                + over_limit(problem, "max_references")
            )
    cands: dict[Any, str] = {}
    for i, (image_id, caption) in enumerate(results):
        if image_id in cands:
            raise InputError(
                f"results file {results_path}, record {i}: image_id {image_id!r} has more than "
                "one caption (one candidate per image is expected)"
            )
        cands[image_id] = caption
    missing = [i for i in cands if i not in refs]
    if missing:
        shown = ", ".join(map(repr, missing[:5])) + (" ..." if len(missing) > 5 else "")
        raise InputError(
            f"{len(missing)} image_id(s) of {results_path} have no reference in "
            f"{annotations_path}: {shown}"
        )
    order = evaluation_order(ann, cands, annotations_path)
    return CocoBatch(
        tuple(order), tuple(cands[i] for i in order), tuple(tuple(refs[i]) for i in order)
    )


def evaluation_order(ann: dict, cands: Mapping[Any, str], path: str | Path) -> list[Any]:
    """The images in pycocotools' order: the annotation file's ``images`` list where it lists
    every captioned image, else the results' own order (what ``COCOEvalCap`` scores)."""
    images = ann.get("images")
    if isinstance(images, list):
        fail = files.failer(f"annotations file {path}, list 'images'")
        listed = [
            image_id_of(img["id"], fail, i, "id")
            for i, img in enumerate(images)
            if isinstance(img, dict) and "id" in img
        ]
        order = [i for i in dict.fromkeys(listed) if i in cands]
        if len(order) == len(cands):
            return order
    return list(cands)
