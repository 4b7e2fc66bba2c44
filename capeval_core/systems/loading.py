"""Reading the systems' results files: :func:`load_systems` checks that every system captions
the same images once each and aligns them with their references in the order ``capeval score``
uses (:class:`SystemsInput`); :func:`demo_systems` builds a synthetic set from COCO val2014.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from capeval_core.coco_files import (
    DEFAULT_SPLIT,
    NAMED,
    References,
    Source,
    caption_rows,
    evaluation_order,
    named_at,
    named_places,
    read_json_source,
    read_references,
    record_lines,
    record_place,
    warn_blank_captions,
)
from capeval_core.errors import InputError, refuse_text
from capeval_core.files import Limits


@dataclass(frozen=True)
class SystemsInput:
    """Systems' captions of the same images, aligned, and the images' references.

    ``candidates[s][i]`` is system ``s``'s caption of image ``image_ids[i]``;
    ``references[i]`` that image's references. ``sources`` names each system's file.
    ``orders[s]``, where given and not None, lists the images (as indices into
    ``image_ids``) in the order ``capeval score`` scores system ``s``'s file alone: its own
    record order when the annotations list no images. The PTB tokenizer looks across
    caption boundaries and means are summed in order, so such a system is tokenized and
    summed in its own order, and its values stay those of ``capeval score``.
    ``dropped[s]``, where given, lists the image ids of system ``s``'s file left out because
    another system does not caption them (``on_missing="intersect"``). ``blank_places[s]``,
    where given, lists system ``s``'s blank captions of the images scored, in its file's
    order, each with where the file has it (``"record 4, line 5"``; the first
    :data:`~capeval_core.coco_files.NAMED` only, None after), for :meth:`blank_named`.
    """

    names: tuple[str, ...]
    image_ids: tuple[Any, ...]
    candidates: tuple[tuple[str, ...], ...]
    references: tuple[tuple[str, ...], ...]
    sources: tuple[str, ...]
    reference_source: str
    orders: tuple[tuple[int, ...] | None, ...] = ()
    dropped: tuple[tuple[Any, ...], ...] = ()
    blank_places: tuple[tuple[tuple[Any, str | None], ...], ...] = ()

    def __post_init__(self) -> None:
        """The shapes agree (built by hand, two systems of one name kept only the second
        one's scores; references given as strings were scored per character)."""
        n = len(self.image_ids)
        if len(self.candidates) != len(self.names) or len(self.sources) != len(self.names):
            raise InputError(
                f"{len(self.names)} system names, {len(self.candidates)} caption lists and "
                f"{len(self.sources)} sources: give one of each per system"
            )
        _check_names(list(self.names), list(self.sources))
        for s, captions in enumerate(self.candidates):
            if len(captions) != n:
                raise InputError(
                    f"system {self.names[s]!r} has {len(captions)} captions for {n} images"
                )
        if len(self.references) != n or any(isinstance(r, str) for r in self.references):
            raise InputError(
                f"`references` must be one tuple of reference captions per image ({n} images)"
            )

    def __len__(self) -> int:
        return len(self.image_ids)

    def order(self, system: int) -> tuple[int, ...] | None:
        """System ``system``'s own order of the images, or None (the shared order)."""
        return self.orders[system] if system < len(self.orders) else None

    def blank(self, system: int) -> tuple[Any, ...]:
        """The image ids whose caption by system ``system`` is blank (scored as given)."""
        return tuple(
            i for i, c in zip(self.image_ids, self.candidates[system], strict=True) if not c.strip()
        )

    def blank_named(self, system: int) -> str:
        """System ``system``'s blank captions as ``capeval`` names them: image id, record
        and line of the first few, and how many more (ids alone for captions given by hand).

        >>> data = SystemsInput(("a",), (1, 2), (("", "x"),), (("r",), ("s",)), ("a.json",), "t")
        >>> data.blank_named(0)
        'image 1'
        """
        if system < len(self.blank_places):
            return named_places(self.blank_places[system])
        return named_places([(k, None) for k in self.blank(system)])

    def lost(self, system: int) -> tuple[Any, ...]:
        """The image ids of system ``system``'s file that are not scored (see ``dropped``)."""
        return self.dropped[system] if system < len(self.dropped) else ()

    def arranged(self, order: Sequence[int], names: Sequence[str] | None = None) -> SystemsInput:
        """The same systems in another order (the first is the baseline), optionally renamed
        (``names`` in the new order).

        >>> data = SystemsInput(("a", "b"), (1,), (("x",), ("y",)), (("r",),), ("a", "b"), "t")
        >>> data.arranged([1, 0], ["B", "A"]).names, data.arranged([1, 0]).candidates
        (('B', 'A'), (('y',), ('x',)))
        """
        order = list(order)
        if sorted(order) != list(range(len(self.names))):
            raise InputError(
                f"order must list each of the {len(self.names)} systems once (got {order})"
            )
        files = [self.sources[i] for i in order]
        new_names = [str(n).strip() for n in names] if names is not None else None
        if new_names is not None:
            _check_names(new_names, files)
        pick = lambda values: tuple(values[i] for i in order) if values else ()  # noqa: E731
        return SystemsInput(
            tuple(new_names) if new_names is not None else pick(self.names),
            self.image_ids,
            pick(self.candidates),
            self.references,
            tuple(files),
            self.reference_source,
            tuple(self.order(i) for i in order) if self.orders else (),
            tuple(self.lost(i) for i in order) if self.dropped else (),
            pick(self.blank_places),
        )

    def digest(self, system: int) -> str:
        """Content digest of one system's captions with the references (the cache key)."""
        payload = [self.candidates[system], self.references]
        if self.order(system) is not None:
            payload.append(self.order(system))
        text = json.dumps(payload, ensure_ascii=False)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _shown(ids: Sequence[Any]) -> str:
    return ", ".join(map(repr, ids[:5])) + (f" ... ({len(ids)} in all)" if len(ids) > 5 else "")


def _results(source: Source, limits: Limits | None = None) -> tuple[str, dict[Any, str], Any]:
    """One results file: its name, ``image_id -> caption``, each image once, and where an
    image's record is (``image_id -> "record 4, line 5"``, for a message)."""
    name, data, text = read_json_source(source, "results", limits)
    rows = caption_rows(data, name, "results", limits, text=text)
    if not rows:
        raise InputError(f"results file {name} holds no captions")
    warn_blank_captions(rows, name, text)
    captions: dict[Any, str] = {}
    seen: dict[Any, list[int]] = {}
    for i, (image_id, caption) in enumerate(rows):
        seen.setdefault(image_id, []).append(i)
        captions.setdefault(image_id, caption)
    repeated = [k for k, v in seen.items() if len(v) > 1]
    if repeated:
        where = ", ".join(
            f"{k!r} (records {', '.join(str(i + 1) for i in seen[k][:3])})" for k in repeated[:5]
        )
        more = f" ... ({len(repeated)} in all)" if len(repeated) > 5 else ""
        raise InputError(
            f"results file {name}: {len(repeated)} image_id(s) have more than one caption "
            f"(one caption per image is expected): {where}{more}"
        )
    lines = record_lines(text)
    return name, captions, lambda image_id: record_place(seen[image_id][0], lines)


#: what ``load_systems`` does when the systems do not caption the same images
ON_MISSING = ("error", "intersect")


class CoverageError(InputError):
    """The results files do not caption the same images (``on_missing="error"``).
    ``problem`` names the file and the image ids; the message adds how to score the images
    they share, as the command line says it (the app says it in its own words)."""

    def __init__(self, problem: str) -> None:
        super().__init__(problem)
        self.problem = problem

    def __str__(self) -> str:
        return (
            f"{self.problem} (every system must caption the same images; to score only the "
            "images they all caption, use --on-missing intersect)"
        )


def distinct_names(files: Sequence[str]) -> list[str]:
    """The files' stems as system names, a stem that comes again numbered: uploads carry no
    folder to tell two models' ``results.json`` apart.

    >>> distinct_names(["m1/results.json", "m2/results.json", "base.json", "results (2).json"])
    ['results', 'results (3)', 'base', 'results (2)']
    """
    stems = [Path(f).stem for f in files]
    out: list[str] = []
    for stem in stems:
        name, k = stem, 1
        while name in out or (name != stem and name in stems):  # nor another file's stem
            k += 1
            name = f"{stem} ({k})"
        out.append(name)
    return out


def _check_names(names: Sequence[str], files: Sequence[str]) -> None:
    if len(names) != len(files):
        raise InputError(
            f"{len(names)} system name(s) for {len(files)} results file(s): give one per file"
        )
    for i, name in enumerate(names):
        if not name:
            raise InputError(f"results file {files[i]}: the system name is empty")
        if names.index(name) != i:
            raise InputError(
                f"results files {files[names.index(name)]} and {files[i]} both give the system "
                f"name {name!r}: system names must be unique (give names explicitly)"
            )


def load_systems(
    results: Sequence[Source],
    annotations: Source | References | Mapping[Any, Any] | None = None,
    names: Sequence[str] | None = None,
    *,
    split: str = DEFAULT_SPLIT,
    on_missing: str = "error",
    limits: Limits | None = None,
) -> SystemsInput:
    """Read and align results files (COCO format: ``[{"image_id", "caption", ...}]``).

    ``annotations`` holds the references in any shape :func:`read_references` reads (COCO
    annotations, ``{image_id: [captions]}``, Karpathy's ``dataset_coco.json`` with
    ``split``; a file, or its JSON as a dict), or None for COCO val2014 from the installed
    pycocoevalcap. ``names`` default
    to the files' stems. Raises :class:`InputError` naming the file and the image ids when a
    file captions an image twice, when an image has no reference, or (``on_missing="error"``)
    when the systems do not caption the same images; ``on_missing="intersect"`` scores the
    images every system captions and records what each file lost in ``dropped``. Every file
    is held to ``limits`` (default: :class:`~capeval_core.files.Limits`).

    >>> import tempfile
    >>> refs = {1: ["a big dog runs on grass"], 2: ["a cat sleeps on a bed"], 3: ["a red car"]}
    >>> systems = {"base": ["a dog", "a cat", "a car"], "new": ["a dog runs", "a cat", "a red car"]}
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     _ = Path(tmp, "refs.json").write_text(json.dumps(refs))
    ...     for name, captions in systems.items():
    ...         rows = [{"image_id": i, "caption": c} for i, c in zip(refs, captions)]
    ...         _ = Path(tmp, f"{name}.json").write_text(json.dumps(rows))
    ...     data = load_systems([Path(tmp, "base.json"), Path(tmp, "new.json")],
    ...                         Path(tmp, "refs.json"))
    >>> data.names, data.image_ids, data.candidates[1], data.references[2]
    (('base', 'new'), (1, 2, 3), ('a dog runs', 'a cat', 'a red car'), ('a red car',))
    """
    if on_missing not in ON_MISSING:
        raise InputError(f"on_missing must be one of {', '.join(ON_MISSING)} (got {on_missing!r})")
    if isinstance(results, str | bytes | os.PathLike):
        raise InputError(
            f"`results` must be a list of results files, one per system (got one: {results!r})"
        )
    if not results:
        raise InputError("no results file given: nothing to compare")
    read = [_results(source, limits) for source in results]
    loaded = [(name, captions) for name, captions, _ in read]
    files = [name for name, _ in loaded]
    if names is None:
        names = [Path(f).stem for f in files]
    refuse_text(names, "names", "system names, one per results file")
    names = [str(n) for n in names]
    _check_names(names, files)
    first_file, first = loaded[0]
    shared = [k for k in first if all(k in captions for _, captions in loaded[1:])]
    for file, captions in loaded[1:]:
        if on_missing == "intersect":
            break
        missing = [k for k in first if k not in captions]
        extra = [k for k in captions if k not in first]
        if missing or extra:
            parts = []
            if missing:
                parts.append(
                    f"lacks {len(missing):,} image_id(s) of {first_file}: {_shown(missing)}"
                )
            if extra:
                parts.append(f"has {len(extra):,} image_id(s) {first_file} lacks: {_shown(extra)}")
            raise CoverageError(f"results file {file} {'; and '.join(parts)}")
    if not shared:
        raise InputError(
            f"the results files {', '.join(files)} have no image in common: nothing to compare"
        )
    keep = set(shared)
    dropped = tuple(tuple(k for k in captions if k not in keep) for _, captions in loaded)
    loaded = [(f, {k: v for k, v in c.items() if k in keep}) for f, c in loaded]
    first = loaded[0][1]
    refs = read_references(annotations, split, limits)
    missing = [k for k in first if k not in refs.captions]
    if missing:
        raise InputError(
            f"{len(missing):,} image_id(s) of {first_file} have no reference in {refs.source}: "
            f"{named_at(missing, read[0][2])}"
        )
    listed = {"images": list(refs.images)} if refs.images else {}
    order = evaluation_order(listed, first, refs.source)
    position = {k: i for i, k in enumerate(order)}
    orders = []
    for _, captions in loaded:
        own = [position[k] for k in evaluation_order(listed, captions, refs.source)]
        orders.append(None if own == list(range(len(own))) else tuple(own))
    blank = tuple(
        _blank_places(captions, place)
        for (_, captions), (_, _, place) in zip(loaded, read, strict=True)
    )
    return SystemsInput(
        tuple(names),
        tuple(order),
        tuple(tuple(captions[k] for k in order) for _, captions in loaded),
        tuple(refs.captions[k] for k in order),
        tuple(files),
        refs.source,
        tuple(orders),
        dropped if any(dropped) else (),
        blank if any(blank) else (),
    )


def _blank_places(
    captions: Mapping[Any, str], place: Callable[[Any], str]
) -> tuple[tuple[Any, str | None], ...]:
    """The blank ones of ``captions`` (in the file's order), the first :data:`NAMED` with
    ``place(image_id)``: a line is looked up only for those a message names."""
    blank = [k for k, c in captions.items() if not c.strip()]
    return tuple((k, place(k) if i < NAMED else None) for i, k in enumerate(blank))


def demo_systems(n_images: int = 200) -> SystemsInput:
    """A synthetic comparison for trying the page: three "systems" on the first COCO val2014
    images (ascending id) that caption each image with its first caption (by annotation id),
    its second, and the first with its words reversed; the references are the image's other
    captions."""
    from capeval_core.resources import coco_caption_sets

    sets = coco_caption_sets("val", n_images)
    sets = [s for s in sets if len(s.references) >= 2]
    return SystemsInput(
        ("first caption", "second caption", "first caption reversed"),
        tuple(s.image_id for s in sets),
        (
            tuple(s.candidate for s in sets),
            tuple(s.references[0] for s in sets),
            tuple(" ".join(reversed(s.candidate.split())) for s in sets),
        ),
        tuple(tuple(s.references[1:]) for s in sets),
        ("demo", "demo", "demo"),
        f"demo: the other captions of the first {len(sets)} COCO val2014 images",
    )
