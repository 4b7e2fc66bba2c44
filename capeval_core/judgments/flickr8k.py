"""Flickr8k-Expert and Flickr8k-CrowdFlower, read as distributed (judgment-formats.md).

Both are tab-separated without a header and name captions of ``Flickr8k.token.txt``
(``<image_file>#<k> \\t caption``), which must lie beside them (or be passed as
``token_file``). References of a judged image are its own five captions.

Having no header, these files carry no ``metric:<name>`` column: an external metric's scores
come in a scores file joined on :data:`ID_COLUMNS` (``image_file`` and ``caption_id``, as in
the annotation file) with
:func:`~capeval_core.judgments.external.join_scores_file`; under the Expert "published"
preset the three experts' rows of a caption share its one score.
"""

from __future__ import annotations

import csv
import os
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

from capeval_core.judgments.base import (
    DEFAULT_MAX_BYTES,
    GradedItem,
    JudgmentSet,
    Row,
    blank_cells,
    count_into,
    folder_name,
    format_error,
    parse_number,
    read_delimited,
    unique_ids,
)

TOKEN_FILE = "Flickr8k.token.txt"
EXPERT_FILE = "ExpertAnnotations.txt"
CROWDFLOWER_FILE = "CrowdFlowerAnnotations.txt"
EXPERT_COLUMNS = ("image_file", "caption_id", "e1", "e2", "e3")
CROWDFLOWER_COLUMNS = ("image_file", "caption_id", "yes_fraction", "n_yes", "n_no")
#: what a scores file joined to a Flickr8k set names per row (a judged caption of an image)
ID_COLUMNS = ("image_file", "caption_id")

#: preset name -> description; the first is the default
EXPERT_PRESETS = {
    "published": "drop rows whose candidate is one of the image's references; each expert's "
    "score its own row; Kendall tau-c",
    "mean-of-experts": "drop rows whose candidate is one of the image's references; one row "
    "per caption scored by the mean of the three experts; Kendall tau-c",
}
CROWDFLOWER_PRESETS = {
    "published": "keep all rows; remove from each image's references every reference that is "
    "also a CrowdFlower candidate of that image; score = yes_fraction; Kendall tau-b",
}
OWN_REFERENCE = "candidate is one of the image's references (preset)"
NO_REFERENCES_LEFT = "no references left after removing the image's candidates (preset)"


class Captions:
    """``Flickr8k.token.txt``: caption ids to text and images to their captions."""

    def __init__(self, path: Path, max_bytes: int) -> None:
        self.path = path
        _, rows = read_delimited(
            path,
            "\t",
            header=("caption_id", "caption"),
            max_bytes=max_bytes,
            quoting=csv.QUOTE_NONE,
        )
        self.text: dict[str, str] = {}
        self.rows: dict[str, Row] = {}  # where each caption is, to say a blank one
        self.by_image: dict[str, list[str]] = defaultdict(list)
        #: per image, where its blank captions are: each is also a blank reference of the
        #: image, kept and scored as an empty reference (as coco-caption scores one)
        self.blank_of: dict[str, list[Row]] = defaultdict(list)
        for row in rows:
            cid = row.values["caption_id"].strip()
            image, sep, k = cid.rpartition("#")
            if not sep or not image or not k.isdigit():
                raise format_error(
                    path,
                    f"caption id {cid!r} is not <image_file>#<k>",
                    line=row.line,
                    column="caption_id",
                )
            caption = row.values["caption"].strip()
            if cid in self.text:  # a second text for one id: which one was judged?
                raise format_error(
                    path,
                    f"caption id {cid!r} is given twice",
                    line=row.line,
                    column="caption_id",
                )
            self.text[cid] = caption
            self.rows[cid] = row
            self.by_image[image].append(caption)
            if not caption:
                self.blank_of[image].append(row)

    def caption(self, cid: str, source: Path, row: Row) -> str:
        if cid not in self.text:
            raise format_error(
                source,
                f"caption id {cid!r} is not in {self.path.name}",
                line=row.line,
                column="caption_id",
            )
        return self.text[cid]

    def references(self, image: str, source: Path, row: Row) -> tuple[str, ...]:
        if image not in self.by_image:
            raise format_error(
                source,
                f"image {image!r} has no captions in {self.path.name}",
                line=row.line,
                column="image_file",
            )
        return tuple(self.by_image[image])

    def blank(self, cids: list[str]) -> tuple[tuple[str, str], ...]:
        """:attr:`JudgmentSet.blank` for the judged captions ``cids`` that are empty: where
        their text is, in this file (scored as given, as coco-caption scores one)."""
        rows = [self.rows[c] for c in cids if not self.text[c]]
        return blank_cells("caption", rows, self.path.name)

    def blank_references(self, items: Sequence[GradedItem]) -> tuple[tuple[str, str], ...]:
        """:attr:`JudgmentSet.blank_references` of ``items``: where the blank captions are
        that are among their references (an image's blank caption is a blank reference of
        it, unless the preset removed it)."""
        rows = [r for it in items if "" in it.references for r in self.blank_of[it.image_id]]
        return blank_cells("caption", rows, self.path.name)


def _locate(
    path: str | os.PathLike[str], name: str, token_file: str | os.PathLike[str] | None
) -> tuple[Path, Path]:
    """The annotation file and the token file, from a file path or the dataset folder."""
    p = Path(path)
    annotations = p / name if p.is_dir() else p
    if p.is_dir() and not annotations.is_file():
        raise format_error(p / name, f"{name} not found in the folder {folder_name(p)!r}")
    token = Path(token_file) if token_file is not None else annotations.parent / TOKEN_FILE
    if not token.is_file():
        if token_file is not None:
            raise format_error(token, "file does not exist")
        raise format_error(
            token,
            f"{TOKEN_FILE} not found beside {annotations.name}: it holds the captions the "
            "annotations name; put it in the same folder",
        )
    return annotations, token


def _rows(path: Path, columns: tuple[str, ...], max_bytes: int) -> list[Row]:
    _, rows = read_delimited(
        path, "\t", header=columns, max_bytes=max_bytes, quoting=csv.QUOTE_NONE
    )
    unique_ids(
        path,
        ((f"{r.values['image_file']}|{r.values['caption_id']}", r) for r in rows),
        column="caption_id",
    )
    return rows


def load_flickr8k_expert(
    path: str | os.PathLike[str],
    *,
    preset: str | None = None,
    token_file: str | os.PathLike[str] | None = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> JudgmentSet:
    """``ExpertAnnotations.txt`` (or its folder) with the "published" or "mean-of-experts" preset.

    Published protocol: 5,822 rows read, 158 own-reference rows dropped, 5,664 captions kept,
    16,992 rows (one per expert), Kendall τc.
    """
    preset = preset or "published"
    if preset not in EXPERT_PRESETS:
        raise format_error(
            path,
            f"unknown preset {preset!r} for flickr8k-expert; choose one of {list(EXPERT_PRESETS)}",
        )
    annotations, token = _locate(path, EXPERT_FILE, token_file)
    captions = Captions(token, max_bytes)
    rows = _rows(annotations, EXPERT_COLUMNS, max_bytes)
    dropped: dict[str, int] = {}
    items: list[GradedItem] = []
    keys: list[str] = []
    judged: list[str] = []  # the caption ids of the kept rows
    kept = 0
    for row in rows:
        image = row.values["image_file"].strip()
        cid = row.values["caption_id"].strip()
        experts = []
        for c in ("e1", "e2", "e3"):
            score = parse_number(row.values[c], annotations, row, c)
            if not (1 <= score <= 4 and score.is_integer()):
                raise format_error(
                    annotations,
                    f"expert scores are whole numbers 1-4 (got {score:g})",
                    line=row.line,
                    column=c,
                )
            experts.append(score)
        candidate = captions.caption(cid, annotations, row)
        references = captions.references(image, annotations, row)
        if candidate in references:
            count_into(dropped, OWN_REFERENCE)
            continue
        kept += 1
        judged.append(cid)
        ident = f"{image}|{cid}"
        keys += [ident] * (3 if preset == "published" else 1)
        if preset == "published":
            items += [
                GradedItem(f"{ident}|e{k}", image, candidate, references, (s,))
                for k, s in enumerate(experts, start=1)
            ]
        else:
            items.append(
                GradedItem(ident, image, candidate, references, (sum(experts) / 3, *experts))
            )
    names = ("expert",) if preset == "published" else ("mean", "e1", "e2", "e3")
    notes = (
        (
            "each expert's score is its own row (3 rows per caption); bootstrap intervals "
            "draw whole captions, but a Williams test counts the rows as independent items, "
            "so its p-values are too small here: test with the mean-of-experts preset",
        )
        if (preset == "published")
        else ()
    )
    return JudgmentSet(
        "graded",
        tuple(items),
        names,
        (annotations.name, token.name),
        n_read=len(rows),
        n_kept=kept,
        dropped=dropped,
        format="flickr8k-expert",
        preset=preset,
        kendall_variant="c",
        notes=notes,
        id_columns=ID_COLUMNS,
        join_keys=tuple(keys),
        blank=captions.blank(judged),
        blank_references=captions.blank_references(items),
    )


def load_flickr8k_crowdflower(
    path: str | os.PathLike[str],
    *,
    preset: str | None = None,
    token_file: str | os.PathLike[str] | None = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> JudgmentSet:
    """``CrowdFlowerAnnotations.txt`` (or its folder) with the "published" preset (τb)."""
    preset = preset or "published"
    if preset not in CROWDFLOWER_PRESETS:
        raise format_error(
            path,
            f"unknown preset {preset!r} for flickr8k-cf; choose one of {list(CROWDFLOWER_PRESETS)}",
        )
    annotations, token = _locate(path, CROWDFLOWER_FILE, token_file)
    captions = Captions(token, max_bytes)
    rows = _rows(annotations, CROWDFLOWER_COLUMNS, max_bytes)
    parsed = []
    candidates_of: dict[str, set[str]] = defaultdict(set)
    for row in rows:
        image = row.values["image_file"].strip()
        cid = row.values["caption_id"].strip()
        fraction = parse_number(row.values["yes_fraction"], annotations, row, "yes_fraction")
        if not 0 <= fraction <= 1:
            raise format_error(
                annotations,
                f"yes_fraction must lie in [0, 1] (got {fraction:g})",
                line=row.line,
                column="yes_fraction",
            )
        votes = []
        for c in ("n_yes", "n_no"):
            votes.append(parse_number(row.values[c], annotations, row, c, integer=True))
            if votes[-1] < 0:
                raise format_error(
                    annotations, "vote counts cannot be negative", line=row.line, column=c
                )
        if not sum(votes):  # its yes_fraction (0) would be scored as a caption all refused
            raise format_error(
                annotations,
                "n_yes and n_no are both 0: a row without a vote is no judgment",
                line=row.line,
                column="n_yes",
            )
        # a copy may round the fraction (0.333); one that disagrees with its counts is wrong
        if abs(fraction - votes[0] / sum(votes)) > 0.01:
            raise format_error(
                annotations,
                f"yes_fraction {fraction:g} is not n_yes / (n_yes + n_no) = "
                f"{votes[0]:g} / {sum(votes):g} (to two decimals)",
                line=row.line,
                column="yes_fraction",
            )
        candidate = captions.caption(cid, annotations, row)
        references = captions.references(image, annotations, row)
        candidates_of[image].add(candidate)
        parsed.append((row, image, cid, candidate, references, fraction))
    dropped: dict[str, int] = {}
    items = []
    judged: list[str] = []  # the caption ids of the kept rows
    for _row, image, cid, candidate, references, fraction in parsed:
        # The preset removes every reference that is also a CrowdFlower candidate of the image
        # (for all rows of that image), so no candidate is scored against itself.
        kept_refs = tuple(r for r in references if r not in candidates_of[image])
        if not kept_refs:
            count_into(dropped, NO_REFERENCES_LEFT)
            continue
        items.append(GradedItem(f"{image}|{cid}", image, candidate, kept_refs, (fraction,)))
        judged.append(cid)
    return JudgmentSet(
        "graded",
        tuple(items),
        ("yes_fraction",),
        (annotations.name, token.name),
        n_read=len(rows),
        n_kept=len(items),
        dropped=dropped,
        format="flickr8k-cf",
        preset=preset,
        kendall_variant="b",
        id_columns=ID_COLUMNS,
        blank=captions.blank(judged),
        blank_references=captions.blank_references(items),
    )
