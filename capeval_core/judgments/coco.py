"""COCO captions annotation files as a source of references (judgment-formats.md, last shape).

``{"images": [...], "annotations": [{"image_id": int, "id": int, "caption": str}, ...]}``:
references of an image are its captions in annotation-id order.
"""

from __future__ import annotations

import os
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

from capeval_core.errors import JudgmentFormatError
from capeval_core.files import json_line, parse_json
from capeval_core.judgments.base import (
    DEFAULT_MAX_BYTES,
    Row,
    format_error,
    id_cell,
    image_key,
    read_text,
)


@dataclass(frozen=True)
class CocoReferences:
    """A COCO captions file's references, and where its blank captions are: each is kept
    and scored as an empty reference, as coco-caption scores one, and a set says those it
    uses (:meth:`blank_rows`)."""

    captions: dict[str, tuple[str, ...]]
    #: per image (as text), the annotation records (from 0) of its blank captions
    blank: dict[str, tuple[int, ...]]
    text: str = field(repr=False)

    def blank_rows(self, images: Iterable[str], shown: int = 5) -> list[Row]:
        """The blank captions of ``images`` as rows in file order, for
        :func:`~capeval_core.judgments.base.blank_cells`; the first ``shown`` (those a
        message names) with their line, found only for them: finding one decodes the file
        up to it."""
        records = sorted({r for image in images for r in self.blank.get(image, ())})
        return [
            Row((json_line(self.text, ["annotations", r]) or 0) if k < shown else 0, {}, record=r)
            for k, r in enumerate(records)
        ]


def load_coco_references(
    path: str | os.PathLike[str], *, max_bytes: int = DEFAULT_MAX_BYTES
) -> dict[str, tuple[str, ...]]:
    """``image_id`` (as text) -> its captions, from a COCO captions annotation file."""
    return read_coco_references(path, max_bytes=max_bytes).captions


def read_coco_references(
    path: str | os.PathLike[str], *, max_bytes: int = DEFAULT_MAX_BYTES
) -> CocoReferences:
    """:func:`load_coco_references` with where the file's blank captions are."""
    text = read_text(path, max_bytes)
    data = parse_json(text, lambda message, **where: format_error(path, message, **where))
    if not isinstance(data, dict) or not isinstance(data.get("annotations"), list):
        raise format_error(
            path,
            "expected a COCO captions file: an object with an "
            "'annotations' list of {image_id, id, caption}",
        )
    by_image: dict[str, list[tuple[int, int, str]]] = defaultdict(list)
    blank: dict[str, list[int]] = defaultdict(list)
    for i, ann in enumerate(data["annotations"]):
        problem = _problem(ann)
        if problem:
            message, column = problem
            line = json_line(text, ["annotations", i])
            raise format_error(path, message, record=i, line=line, column=column)
        try:
            image = id_cell(ann["image_id"], path, Row(None, ann, record=i), "image_id")  # type: ignore[arg-type]
        except JudgmentFormatError:  # raised again with its line, looked up on an error only
            line = json_line(text, ["annotations", i])
            id_cell(ann["image_id"], path, Row(line, ann, record=i), "image_id")  # type: ignore[arg-type]
            raise
        order = ann.get("id", i)
        by_image[image_key(image)].append(
            (order if isinstance(order, int) else i, i, ann["caption"])
        )
        if not ann["caption"].strip():
            blank[image_key(image)].append(i)
    if not by_image:
        raise format_error(path, "the 'annotations' list is empty")
    return CocoReferences(
        {k: tuple(c for *_, c in sorted(v)) for k, v in by_image.items()},
        {k: tuple(v) for k, v in blank.items()},
        text,
    )


def _problem(ann: object) -> tuple[str, str] | None:
    """What is wrong with one annotation record, and the column it concerns."""
    if not isinstance(ann, dict):
        return "expected an object", "annotations"
    for key in ("image_id", "caption"):
        if key not in ann:
            return f"annotation has no {key!r}", key
    if not isinstance(ann["caption"], str):
        return "caption must be a string", "caption"
    return None
