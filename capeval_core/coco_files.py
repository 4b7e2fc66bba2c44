"""Reading captioning files as they are distributed: results (``[{"image_id", "caption",
...}]``) and references in any of three shapes, from paths or uploads:

* COCO captions annotations (``{"annotations": [...], "images": [...]}``);
* ``{image_id: [caption, ...]}``, the ``gts`` shape pycocoevalcap's scorers take (captions
  as text or as ``{"caption": ...}`` records);
* Karpathy's ``dataset_coco.json`` (``{"images": [{"split", "cocoid", "sentences":
  [{"raw"}]}]}``), of which one split (``test`` by default) is read.

Image ids are whole numbers or text; text of digits only (``"391895"``) is the number, since
JSON object keys are always text and files disagree on which they write.

References as distributed, one rule each (pycocoevalcap 1.2 measured on each case):

* a blank reference (``""`` or spaces) is kept and scored as an empty reference, as
  pycocoevalcap scores it (in the measured case it lowers CIDEr-D and no other metric), with
  a warning that names the images; text the PTB tokenizer empties (``"..."``) is scored the
  same way, as it is there;
* an image with no reference at all (``{"42": []}``, ``"sentences": []``) is refused: every
  pycocoevalcap scorer requires one;
* an image listed twice in a COCO file's ``images`` is scored once, at its first place, as
  pycocotools indexes it, with a warning; annotation records that share an ``id`` are each a
  reference, as pycocotools' ``imgToAnns`` keeps them;
* an image twice in one split of a Karpathy file is refused with both records: that is no
  file Karpathy distributed, and merging the two records' sentences would be a guess.

Every file goes through :mod:`capeval_core.files` (size cap, encodings, JSON depth, lone
surrogates) and every record is validated, so bad input ends in one :class:`InputError`
naming the file, record and field. ``capeval score``, ``capeval compare`` and the Systems page
read their files here.
"""

from __future__ import annotations

import json
import os
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from capeval_core import files
from capeval_core.errors import CapevalWarning, InputError
from capeval_core.files import Limits
from capeval_core.results import MetricResult

#: a file to read: a path, or an upload as (file name, bytes)
Source = str | Path | tuple[str, bytes]

#: how a message says to raise each limit: the keyword argument of the library, which the
#: command line shows as its flag (``--max-caption-tokens``) and a page as its control
LIMIT_FLAGS: Mapping[str, str] = {
    "max_bytes": "the `max_bytes` option",
    "max_caption_tokens": "the `max_caption_tokens` option",
    "max_references": "the `max_references` option",
}


#: the splits of Karpathy's ``dataset_coco.json``
KARPATHY_SPLITS = ("test", "val", "train", "restval")
#: the split read from a Karpathy file unless another is asked for (the usual test images)
DEFAULT_SPLIT = "test"
COCO_VAL_SOURCE = "COCO val2014 captions (from the installed pycocoevalcap)"


@dataclass(frozen=True)
class CocoBatch:
    """Candidates and references of the images in a results file, in evaluation order;
    ``reference_source`` names where the references came from (:attr:`References.source`)."""

    image_ids: tuple[Any, ...]
    candidates: tuple[str, ...]
    references: tuple[tuple[str, ...], ...]
    reference_source: str = ""

    def references_named(self) -> dict[str, str]:
        """How an output names these references: :func:`describe_references`."""
        return describe_references(self.reference_source, self.references)


def read_json_source(
    source: Source, role: str, limits: Limits | None = None
) -> tuple[str, Any, str]:
    """``(display name, parsed JSON, text)`` of a path or an upload, read, decoded and parsed
    with every check of :mod:`capeval_core.files`; the text gives a bad record's line
    (:func:`record_lines`)."""
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
        text = files.decode_text(data, fail)
        return name, files.parse_json(text, fail), text
    path = Path(source)
    fail = files.failer(f"{role} file {path}")
    text = files.read_text(
        path, max_bytes=limits.max_bytes, fail=fail, raise_with=LIMIT_FLAGS["max_bytes"]
    )
    return str(path), files.parse_json(text, fail), text


def record_lines(text: str | None, *key: str) -> files.Lines | None:
    """Record index (from 0) -> the line it starts on, of the list at ``key`` in a JSON
    ``text`` (the top-level list without one); None without a text (a dict given in memory)."""
    if text is None:
        return None
    return lambda record: files.json_line(text, [*key, record])


def canonical_id(value: int | str) -> int | str:
    """An image id as one value whichever way a file wrote it: text of digits (no leading
    zero) is the number, so ``"391895"`` (a JSON key) and ``391895`` name one image.

    >>> [canonical_id(v) for v in ("391895", 42, "COCO_val2014_42", "007")]
    [391895, 42, 'COCO_val2014_42', '007']
    """
    digits = isinstance(value, str) and value.isascii() and value.isdigit()
    if digits and (value == "0" or not value.startswith("0")):
        return int(value)
    return value


def image_id_of(value: Any, fail: files.Fail, record: int, field: str = "image_id") -> Any:
    """A COCO image id: a whole number or text (see :func:`canonical_id`). ``true`` would
    match id 1 (``True == 1``), a fraction names no image, and lists and objects are no ids
    at all."""
    if isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool)):
        return canonical_id(value)
    raise fail(
        f"expected an integer or a string (got {files.json_kind(value)})",
        record=record,
        column=field,
    )


def caption_rows(
    rows: Any,
    path: str | Path,
    role: str,
    limits: Limits | None = None,
    key: str | None = None,
    text: str | None = None,
) -> list[tuple[Any, str]]:
    """``(image_id, caption)`` pairs from a list of COCO caption records, validated.

    ``key`` names the list inside the file (``annotations``) for the messages; ``text``, the
    file's JSON, gives a bad record's line.
    """
    limits = limits or Limits()
    label = f"{role} file {path}" + (f", list {key!r}" if key else "")
    fail = files.failer(label, record_lines(text, *([key] if key else [])))
    if not isinstance(rows, list):
        raise fail(
            f"expected a list of {{image_id, caption}} records (got {files.json_kind(rows)})"
        )
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


@dataclass(frozen=True)
class References:
    """The references of a set of images and the images' listed order (or None).

    ``captions`` maps an image id to its reference captions; ``images``, where the file
    lists its images (COCO's ``images``, a ``gts`` object's keys, a Karpathy split), holds
    ``{"id": ...}`` per image in that order, the order pycocoevalcap scores them in.
    """

    source: str
    captions: Mapping[Any, tuple[str, ...]]
    images: tuple[dict[str, Any], ...] | None
    shape: str = "coco"

    @classmethod
    def from_annotations(
        cls, data: Any, source: str, limits: Limits | None = None, text: str | None = None
    ) -> References:
        """From a parsed COCO captions file (``{"annotations": [...], "images": [...]}``);
        ``text``, the file's JSON, gives a bad record's line."""
        if not isinstance(data, dict) or "annotations" not in data:
            raise InputError(
                f"references file {source}: expected an object with an 'annotations' list"
            )
        refs: dict[Any, list[str]] = {}
        blank_at: dict[Any, Any] = {}
        lines = record_lines(text, "annotations")
        for i, (image_id, caption) in enumerate(
            caption_rows(data["annotations"], source, "references", limits, "annotations", text)
        ):
            refs.setdefault(image_id, []).append(caption)
            if not caption.strip() and image_id not in blank_at:
                blank_at[image_id] = _place_of(i, lines, "list 'annotations'")
        listed = _listed_images(data.get("images"), source, text)
        checked = _checked(refs, source, limits, blank_at)
        _warn_repeats(data, source)
        return cls(source, checked, listed, "coco")

    @classmethod
    def from_json(
        cls,
        data: Any,
        source: str,
        split: str = DEFAULT_SPLIT,
        limits: Limits | None = None,
        text: str | None = None,
    ) -> References:
        """From any of the three shapes (see the module), told apart by their keys; ``text``,
        the file's JSON, gives a bad record's line.

        >>> refs = References.from_json({"42": ["a dog", "a brown dog"]}, "gts.json")
        >>> refs.shape, dict(refs.captions)
        ('dict', {42: ('a dog', 'a brown dog')})
        """
        if isinstance(data, dict) and "annotations" in data:
            return cls.from_annotations(data, source, limits, text)
        images = data.get("images") if isinstance(data, dict) else None
        if isinstance(images, list) and images and isinstance(images[0], dict):
            if "sentences" in images[0]:
                return _karpathy(images, source, split, limits, text)
        elif isinstance(data, dict) and data and "images" not in data:
            return _gts(data, source, limits, text)
        raise InputError(
            f"references file {source}: expected an object with an 'annotations' list (COCO "
            "captions), {image_id: [captions]} or Karpathy's dataset_coco.json (images with "
            f"'split', 'cocoid' and 'sentences') (got {_kind(data)})"
        )


def _listed_images(images: Any, source: str, text: str | None) -> tuple[dict[str, Any], ...] | None:
    """A COCO file's ``images`` as ``{"id": ...}`` in its order, each id checked where the
    file has it (an entry without one is skipped, as pycocotools has no image for it)."""
    if not isinstance(images, list):
        return None
    fail = files.failer(f"references file {source}, list 'images'", record_lines(text, "images"))
    return tuple(
        {"id": image_id_of(img["id"], fail, i, "id")}
        for i, img in enumerate(images)
        if isinstance(img, dict) and "id" in img
    )


def _kind(data: Any) -> str:
    if isinstance(data, dict):
        return "an object with keys " + ", ".join(map(repr, list(data)[:5])) if data else "{}"
    return files.json_kind(data)


def _warn_repeats(data: dict, source: str) -> None:
    """Images listed twice: read as pycocotools reads them (see the module), and said, since
    a file listing its images twice is often two files joined, whose annotations then count
    twice too (in pycocoevalcap as here). Annotation ids used twice are not said: many
    files number each image's captions from 0, and pycocoevalcap's references do not depend
    on the ids."""

    rows = data.get("images")
    if not isinstance(rows, list):
        return
    counts: dict[Any, int] = {}
    for row in rows:
        if isinstance(row, dict) and isinstance(row.get("id"), int | str):
            counts[row["id"]] = counts.get(row["id"], 0) + 1
    twice = [k for k, n in counts.items() if n > 1]
    if twice:
        shown = _first_five(twice)
        warnings.warn(
            f"references file {source}, list 'images': {len(twice):,} image id(s) appear more "
            f"than once ({shown}); scored once, at its first place, as pycocotools indexes it",
            CapevalWarning,
            stacklevel=3,
        )


def warn_blank_captions(
    rows: Sequence[tuple[Any, str]], source: str, text: str | None = None
) -> None:
    """Say a results file's blank captions (a model that stopped at once writes ""): scored
    as given, as pycocoevalcap scores them, but a researcher wants to know they are there,
    and where (each by image id, record and, with the file's ``text``, line)."""

    blank = [i for i, (_, caption) in enumerate(rows) if not caption.strip()]
    if blank:
        lines = record_lines(text)  # a line is found for the named records only
        named = [(rows[i][0], record_place(i, lines)) for i in blank[:NAMED]]
        shown = named_places(named + [(rows[i][0], None) for i in blank[NAMED:]])
        warnings.warn(
            f"results file {source}: {len(blank):,} of {len(rows):,} caption(s) are blank: "
            f"{shown}; each is scored as an empty caption, as pycocoevalcap scores it",
            CapevalWarning,
            stacklevel=3,
        )


def record_place(record: int, lines: files.Lines | None, *around: str | None) -> str:
    """Where a record is, as a message says it: ``around[0]`` (the list) before its number
    (counted from 1) and line, ``around[1]`` (a JSON path inside it) after them.

    >>> record_place(1, lambda r: 4), record_place(0, None, "list 'images'", "sentences[1].raw")
    ('record 2, line 4', "list 'images', record 1, sentences[1].raw")
    """
    before, after = [*around, None, None][:2]
    line = lines(record) if lines is not None else None
    parts = [before, f"record {record + 1}", f"line {line}" if line else None, after]
    return ", ".join(p for p in parts if p)


def named_at(ids: Sequence[Any], place: Callable[[Any], str | None]) -> str:
    """:func:`named_places` of ``ids``, ``place(image_id)`` asked for the named ones only."""
    named = [(k, place(k)) for k in ids[:NAMED]]
    return named_places(named + [(k, None) for k in ids[NAMED:]])


def _place_of(record: int, lines: files.Lines | None, *around: str | None) -> Callable[[], str]:
    """:func:`record_place`, asked for later: a line is found only for a place a message
    names."""
    return lambda: record_place(record, lines, *around)


#: how many images a message names before it says how many more there are
NAMED = 5


def named_places(places: Sequence[tuple[Any, str | None]]) -> str:
    """Images and where a file has them (None: not said), the first :data:`NAMED` of them, as
    a message says them.

    >>> named_places([(2, "record 2, line 4"), ("x", None)])
    "image 2 (record 2, line 4), image 'x'"
    >>> named_places([(i, None) for i in range(7)])
    'image 0, image 1, image 2, image 3, image 4 and 2 more'
    """
    shown = ", ".join(
        f"image {image_id!r}" + (f" ({place})" if place else "")
        for image_id, place in places[:NAMED]
    )
    more = len(places) - NAMED
    return shown + (f" and {more:,} more" if more > 0 else "")


def _first_five(ids: Sequence[Any]) -> str:
    """The first five of ``ids`` for a message, and "..." when there are more.

    >>> _first_five([1, 2]), _first_five(list(range(7)))
    ('1, 2', '0, 1, 2, 3, 4 ...')
    """
    return ", ".join(map(repr, ids[:5])) + (" ..." if len(ids) > 5 else "")


def _checked(
    refs: Mapping[Any, list[str]],
    source: str,
    limits: Limits | None,
    blank_at: Mapping[Any, Any] | None = None,
) -> dict[Any, tuple[str, ...]]:
    """The references, each image checked; a warning names the images with a blank
    reference, each where the file has its first one (``blank_at``: image id -> a callable
    giving that place, asked for the named images only)."""
    limits = limits or Limits()
    blank = []
    for image_id, captions in refs.items():
        if not captions:
            raise InputError(
                f"references file {source}: image_id {image_id!r} has no reference (every "
                "image needs one; pycocoevalcap's scorers refuse an empty list too)"
            )
        if any(not c.strip() for c in captions):
            blank.append(image_id)
        problem = limits.references_problem(len(captions))
        if problem:
            raise InputError(
                f"references file {source}: image_id {image_id!r} has "
                + over_limit(problem, "max_references")
            )
    if blank:
        blank_at = blank_at or {}
        shown = named_at(blank, lambda k: blank_at[k]() if k in blank_at else None)
        warnings.warn(
            f"references file {source}: {len(blank):,} image(s) have a blank reference: "
            f"{shown}; each is scored as an empty reference, as pycocoevalcap scores it",
            CapevalWarning,
            stacklevel=3,
        )
    return {k: tuple(v) for k, v in refs.items()}


def _caption(value: Any, fail: files.Fail, record: int, column: str, limits: Limits) -> str:
    if not isinstance(value, str):
        raise fail(f"expected text, got {files.json_kind(value)}", record=record, column=column)
    problem = limits.caption_problem(value)
    if problem:
        raise fail(over_limit(problem, "max_caption_tokens"), record=record, column=column)
    return value


def _gts(data: dict, source: str, limits: Limits | None, text: str | None = None) -> References:
    """``{image_id: [caption or {"caption": ...}, ...]}`` (pycocoevalcap's ``gts``)."""
    limits = limits or Limits()
    refs: dict[Any, list[str]] = {}
    blank_at: dict[Any, Any] = {}
    for key, captions in data.items():
        fail = files.failer(
            f"references file {source}, image_id {canonical_id(key)!r}", record_lines(text, key)
        )
        if not isinstance(captions, list):
            raise fail(
                "expected a list of captions (the {image_id: [captions]} shape; COCO "
                f"annotations need an 'annotations' list), got {files.json_kind(captions)}"
            )
        image_id = canonical_id(key)
        out = refs.setdefault(image_id, [])
        for j, c in enumerate(captions):
            if isinstance(c, dict) and "caption" in c:
                c = c["caption"]
            out.append(_caption(c, fail, j, "caption", limits))
            if not out[-1].strip() and image_id not in blank_at:
                blank_at[image_id] = _place_of(j, record_lines(text, key))
    if not refs:
        raise InputError(f"references file {source} holds no images")
    return References(
        source, _checked(refs, source, limits, blank_at), tuple({"id": k} for k in refs), "dict"
    )


def _karpathy(
    images: list, source: str, split: str, limits: Limits | None, text: str | None = None
) -> References:
    """One split of Karpathy's ``dataset_coco.json``: ``cocoid`` the image id, each
    ``sentences[].raw`` a reference, in the file's order."""
    limits = limits or Limits()
    fail = files.failer(f"references file {source}, list 'images'", record_lines(text, "images"))
    refs: dict[Any, list[str]] = {}
    blank_at: dict[Any, Any] = {}
    lines = record_lines(text, "images")
    first: dict[Any, int] = {}
    splits: dict[str, int] = {}
    for i, img in enumerate(images):
        if not isinstance(img, dict):
            raise fail(f"expected an object, got {files.json_kind(img)}", record=i)
        for name in ("split", "cocoid", "sentences"):
            if name not in img:
                raise fail(
                    f"missing field '{name}' (Karpathy's dataset_coco.json lists images with "
                    "'split', 'cocoid' and 'sentences')",
                    record=i,
                )
        if not isinstance(img["split"], str):
            raise fail(
                f"expected text, got {files.json_kind(img['split'])}", record=i, column="split"
            )
        splits[img["split"]] = splits.get(img["split"], 0) + 1
        if img["split"] != split:
            continue
        image_id = image_id_of(img["cocoid"], fail, i, "cocoid")
        if image_id in first:
            raise fail(
                f"cocoid {image_id!r} is listed twice in split {split!r} (records "
                f"{first[image_id] + 1} and {i + 1}); Karpathy's file lists each image once, "
                "and merging the two records' sentences would be a guess: keep one",
                record=i,
                column="cocoid",
            )
        first[image_id] = i
        sentences = img["sentences"]
        if not isinstance(sentences, list):
            raise fail(
                f"expected a list, got {files.json_kind(sentences)}", record=i, column="sentences"
            )
        out = refs.setdefault(image_id, [])
        for k, sentence in enumerate(sentences):
            # the place inside the record as a JSON path (README: `annotations[3].caption`)
            if not isinstance(sentence, dict) or "raw" not in sentence:
                raise fail("each sentence needs its 'raw' text", record=i, column=f"sentences[{k}]")
            out.append(_caption(sentence["raw"], fail, i, f"sentences[{k}].raw", limits))
            if not out[-1].strip() and image_id not in blank_at:
                blank_at[image_id] = _place_of(i, lines, "list 'images'", f"sentences[{k}].raw")
    if not refs:
        found = ", ".join(f"{k} ({v:,})" for k, v in splits.items()) or "none"
        raise InputError(
            f"references file {source}: no image of split {split!r} (splits found: {found})"
        )
    return References(
        f"{source}, split {split}",
        _checked(refs, source, limits, blank_at),
        tuple({"id": k} for k in refs),
        "karpathy",
    )


def coco_val_references() -> References:
    """COCO val2014's references, read from the installed pycocoevalcap (about 2 s)."""
    from capeval_core.resources import coco_caption_file

    data = coco_caption_file("val")
    images = tuple({"id": img.get("id")} for img in data.get("images", []) if isinstance(img, dict))
    refs = References.from_annotations({"annotations": data["annotations"]}, COCO_VAL_SOURCE)
    return References(refs.source, refs.captions, images)


def read_references(
    source: Source | References | Mapping[Any, Any] | None,
    split: str = DEFAULT_SPLIT,
    limits: Limits | None = None,
) -> References:
    """The references of a path or upload in any shape, or COCO val2014 (``None``); a dict
    already in memory is read as such a file's JSON would be (a notebook's
    ``{image_id: [captions]}`` ended in a bare TypeError)."""
    if isinstance(source, References):
        return source
    if source is None:
        return coco_val_references()
    if split not in KARPATHY_SPLITS:
        raise InputError(f"split must be one of {', '.join(KARPATHY_SPLITS)} (got {split!r})")
    if isinstance(source, Mapping):
        return References.from_json(source, "the references given", split, limits)
    if not isinstance(source, str | os.PathLike | tuple):
        raise InputError(
            "references: give a file path, a (name, bytes) upload or a dict "
            f"{{image_id: [captions]}} (got {type(source).__name__})"
        )
    name, data, text = read_json_source(source, "references", limits)
    return References.from_json(data, name, split, limits, text)


def load_coco(
    results_path: Source,
    annotations_path: Source | References | None = None,
    limits: Limits | None = None,
    split: str = DEFAULT_SPLIT,
) -> CocoBatch:
    """Read a results file and its references (any shape, see the module; None: COCO
    val2014) into one ordered batch, held to ``limits`` (default:
    :class:`~capeval_core.files.Limits`)."""
    limits = limits or Limits()
    results_name, rows, text = read_json_source(results_path, "results", limits)
    results = caption_rows(rows, results_name, "results", limits, text=text)
    if not results:
        raise InputError(f"results file {results_name} holds no captions")
    warn_blank_captions(results, results_name, text)
    refs = read_references(annotations_path, split, limits)
    cands: dict[Any, str] = {}
    records: dict[Any, int] = {}
    for i, (image_id, caption) in enumerate(results):
        if image_id in cands:
            fail = files.failer(f"results file {results_name}", record_lines(text))
            raise fail(
                f"image_id {image_id!r} has more than one caption (one candidate per image is "
                "expected)",
                record=i,
            )
        cands[image_id] = caption
        records[image_id] = i
    missing = [i for i in cands if i not in refs.captions]
    if missing:
        lines = record_lines(text)
        shown = named_at(missing, lambda k: record_place(records[k], lines))
        raise InputError(
            f"{len(missing):,} image_id(s) of {results_name} have no reference in "
            f"{refs.source}: {shown}"
        )
    listed = {"images": list(refs.images)} if refs.images else {}
    order = evaluation_order(listed, cands, refs.source)
    return CocoBatch(
        tuple(order),
        tuple(cands[i] for i in order),
        tuple(tuple(refs.captions[i]) for i in order),
        refs.source,
    )


def evaluation_order(ann: dict, cands: Mapping[Any, str], path: str | Path) -> list[Any]:
    """The images in pycocotools' order: the annotation file's ``images`` list where it lists
    every captioned image, else the results' own order (what ``COCOEvalCap`` scores)."""
    images = ann.get("images")
    if isinstance(images, list):
        fail = files.failer(f"references file {path}, list 'images'")
        listed = [
            image_id_of(img["id"], fail, i, "id")
            for i, img in enumerate(images)
            if isinstance(img, dict) and "id" in img
        ]
        order = [i for i in dict.fromkeys(listed) if i in cands]
        if len(order) == len(cands):
            return order
    return list(cands)


#: the keys coco-caption averages over the images in sorted id order: pycocoevalcap's Spice
#: sorts the ids before it averages; BLEU, METEOR, ROUGE-L and CIDEr-D keep the evaluation
#: order (:func:`evaluation_order`). A float sum's last bit depends on its order.
SORTED_ID_KEYS = frozenset({"spice"})


def sorted_id_order(image_ids: Sequence[Any]) -> list[int]:
    """Positions of ``image_ids`` in sorted id order; their own order where the ids do not sort
    (numbers and text mixed: pycocoevalcap cannot sort them at all).

    >>> sorted_id_order([42, 7, 19]), sorted_id_order([1, "b"])
    ([1, 2, 0], [0, 1])
    """
    try:
        return sorted(range(len(image_ids)), key=image_ids.__getitem__)
    except TypeError:
        return list(range(len(image_ids)))


def nan_skipping_mean(values: Sequence[float]) -> np.float64:
    """``np.mean`` of the values in their order, NaN ones (images a metric left out) skipped;
    NaN when every one is. A ``np.float64``, the type pycocoevalcap's SPICE returns: the
    drop-in's mean and :func:`coco_caption_mean` are this one.

    >>> nan_skipping_mean([0.25, float("nan"), 0.5]), nan_skipping_mean([float("nan")])
    (np.float64(0.375), np.float64(nan))
    """
    f = np.asarray(values, dtype=float)
    kept = f[~np.isnan(f)]
    return np.mean(kept) if kept.size else np.float64(np.nan)


def coco_caption_mean(values: Sequence[float], image_ids: Sequence[Any]) -> float:
    """The mean of per-image values as coco-caption takes SPICE's: summed in sorted id order,
    an image left out (NaN) skipped; NaN when every image was left out.

    >>> coco_caption_mean([0.5, float("nan"), 0.25], [3, 2, 1])
    0.375
    """
    return float(nan_skipping_mean([values[k] for k in sorted_id_order(image_ids)]))


def coco_caption_corpus(result: MetricResult, image_ids: Sequence[Any]) -> MetricResult:
    """``result`` (scored in ``image_ids``' order) with its corpus values of
    :data:`SORTED_ID_KEYS` summed as coco-caption sums them (:func:`coco_caption_mean`)."""
    summed = {
        k: coco_caption_mean(result.segment_values(k), image_ids)
        for k in result.corpus
        if k in SORTED_ID_KEYS
    }
    return replace(result, corpus={**result.corpus, **summed}) if summed else result


def describe_references(source: str, references: Sequence[Sequence[str]]) -> dict[str, str]:
    """How a shared output names the references it was scored against: the file name only (no
    folders of this machine; COCO val2014's or a Karpathy split's name as read) and a digest of
    the references of the images scored, in their order, which tells two files of one name
    apart.

    >>> describe_references("/data/refs.json", [["a dog"], ["a cat", "a pet"]])
    {'references': 'refs.json', 'references_sha256': 'e3ef095b3993'}
    """
    return {
        "references": files.shared_name(source),
        "references_sha256": files.text_digest(
            json.dumps([list(r) for r in references], ensure_ascii=False)
        ),
    }
