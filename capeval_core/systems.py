"""Several captioning systems scored on the same images, and whether their differences hold.

A researcher has one COCO-format results file per system. :func:`load_systems` reads them
(and the references: an annotations file, or COCO val2014 from the installed pycocoevalcap),
checks that every system captions the same images once each, and puts the images in the
order ``capeval score`` uses. :func:`score_systems` scores every system with every metric in
one pass (references tokenized once; per-image values and each metric's resampling
statistics kept; results cached on disk per system and metric). :func:`compare_systems`
adds bootstrap intervals and paired tests against the first system (the baseline), with
sacrebleu's conventions (see :mod:`capeval_core.stats.resampling`).

Each system's corpus values equal ``capeval score`` on its file alone, bit for bit.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import math
import numbers
import os
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from capeval_core import batch
from capeval_core._version import __version__
from capeval_core.batch import Progress
from capeval_core.coco_files import (
    COCO_VAL_SOURCE,
    DEFAULT_SPLIT,
    References,
    Source,
    caption_rows,
    coco_val_references,
    evaluation_order,
    read_json_source,
    read_references,
    warn_blank_captions,
)
from capeval_core.errors import InputError, OptionError, refuse_text
from capeval_core.files import (
    Limits,
    counted,
    printable,
    shared_name,
    signed,
    text_digest,
    write_all,
)
from capeval_core.metrics import Batch, configure, metric_class
from capeval_core.metrics.base import Metric, validate_inputs
from capeval_core.metrics.statistics import ItemStatistics
from capeval_core.options import is_whole
from capeval_core.results import left_out_line
from capeval_core.tokenize import Tokens, get_tokenizer

if TYPE_CHECKING:
    import pandas as pd

    from capeval_core.stats.resampling import PairedResult


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
    another system does not caption them (``on_missing="intersect"``).
    """

    names: tuple[str, ...]
    image_ids: tuple[Any, ...]
    candidates: tuple[tuple[str, ...], ...]
    references: tuple[tuple[str, ...], ...]
    sources: tuple[str, ...]
    reference_source: str
    orders: tuple[tuple[int, ...] | None, ...] = ()
    dropped: tuple[tuple[Any, ...], ...] = ()

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


def _results(source: Source, limits: Limits | None = None) -> tuple[str, dict[Any, str]]:
    """One results file: its name and ``image_id -> caption``, each image once."""
    name, data, text = read_json_source(source, "results", limits)
    rows = caption_rows(data, name, "results", limits, text=text)
    if not rows:
        raise InputError(f"results file {name} holds no captions")
    warn_blank_captions(rows, name)
    captions: dict[Any, str] = {}
    seen: dict[Any, list[int]] = {}
    for i, (image_id, caption) in enumerate(rows):
        seen.setdefault(image_id, []).append(i)
        captions.setdefault(image_id, caption)
    repeated = [k for k, v in seen.items() if len(v) > 1]
    if repeated:
        where = ", ".join(
            f"{k!r} (records {', '.join(map(str, seen[k][:3]))})" for k in repeated[:5]
        )
        more = f" ... ({len(repeated)} in all)" if len(repeated) > 5 else ""
        raise InputError(
            f"results file {name}: {len(repeated)} image_id(s) have more than one caption "
            f"(one caption per image is expected): {where}{more}"
        )
    return name, captions


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


def _check_shown(shown: Any) -> None:
    """How many ids a line lists: a negative count listed all but the last ones, and said
    how many "more" there were as more than there are."""
    if isinstance(shown, bool) or not isinstance(shown, numbers.Integral) or shown < 0:
        raise InputError(f"`shown` must be a whole number >= 0 (got {shown!r})")


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
    loaded = [_results(source, limits) for source in results]
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
                parts.append(f"lacks {len(missing)} image_id(s) of {first_file}: {_shown(missing)}")
            if extra:
                parts.append(f"has {len(extra)} image_id(s) {first_file} lacks: {_shown(extra)}")
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
            f"{len(missing)} image_id(s) of {first_file} have no reference in {refs.source}: "
            f"{_shown(missing)}"
        )
    listed = {"images": list(refs.images)} if refs.images else {}
    order = evaluation_order(listed, first, refs.source)
    position = {k: i for i, k in enumerate(order)}
    orders = []
    for _, captions in loaded:
        own = [position[k] for k in evaluation_order(listed, captions, refs.source)]
        orders.append(None if own == list(range(len(own))) else tuple(own))
    return SystemsInput(
        tuple(names),
        tuple(order),
        tuple(tuple(captions[k] for k in order) for _, captions in loaded),
        tuple(refs.captions[k] for k in order),
        tuple(files),
        refs.source,
        tuple(orders),
        dropped if any(dropped) else (),
    )


# -- scoring ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SystemsScores:
    """Every system scored with every metric on the same images.

    ``corpus[system][key]`` and ``items[system][key]`` (one value per image) for each
    reported key; ``statistics[system][metric]`` what resampling needs (by metric key, e.g.
    ``"bleu"``); ``signatures[key]`` the metric signature; ``skipped[key]`` why a metric
    could not be scored.
    """

    input: SystemsInput
    keys: tuple[str, ...]
    corpus: Mapping[str, Mapping[str, float]]
    items: Mapping[str, Mapping[str, np.ndarray]]
    statistics: Mapping[str, Mapping[str, ItemStatistics]] = field(repr=False)
    signatures: Mapping[str, str]
    from_cache: Mapping[str, bool] = field(default_factory=dict)
    skipped: Mapping[str, str] = field(default_factory=dict)
    #: ``missing[system][key]``: the images (indices) the metric could not score for that
    #: system, with the reason (see :meth:`~capeval_core.metrics.base.Metric.unscorable`);
    #: only systems and keys with some. Their values are NaN; ``corpus`` is over the others
    missing: Mapping[str, Mapping[str, Mapping[int, str]]] = field(default_factory=dict)
    #: ``compared[metric]``: for a metric (by metric key, e.g. ``"spice"``) that left some
    #: system's images out, the images every system scored with it; ``statistics`` of that
    #: metric cover those images only, so intervals and paired tests compare like with like
    compared: Mapping[str, tuple[int, ...]] = field(default_factory=dict)
    #: ``notes[metric]``: a metric's notes on the set (CIDEr-D's single image; by metric key),
    #: the same whether its values were scored now or read from the cache
    notes: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    @property
    def systems(self) -> tuple[str, ...]:
        return self.input.names

    def left_out(self, key: str) -> dict[str, dict[Any, str]]:
        """Per system, the images (by id) ``key``'s metric could not score and why; empty
        when it scored every image of every system."""
        ids = self.input.image_ids
        return {
            name: {ids[i]: why for i, why in sorted(self.missing[name][key].items())}
            for name in self.systems
            if key in self.missing.get(name, {})
        }

    def item_frame(self) -> pd.DataFrame:
        """One row per image: its id, each system's caption and each system's value of
        every key (columns ``"<system>: caption"``, ``"<system>: <key>"``; NaN where the
        metric could not score the image, with the reason in ``"<system>: <key> left out"``
        for the keys that left images out)."""
        import pandas as pd

        data: dict[str, Any] = {"image_id": list(self.input.image_ids)}
        for s, name in enumerate(self.systems):
            data[f"{name}: caption"] = list(self.input.candidates[s])
        for key in self.keys:
            for name in self.systems:
                data[f"{name}: {key}"] = self.items[name][key]
        for key in self.keys:  # why a value is missing, for the keys that left images out
            for name in self.systems:
                if key in self.missing.get(name, {}):
                    why = self.missing[name][key]
                    column = [why.get(i, "") for i in range(len(self.input))]
                    data[f"{name}: {key} left out"] = column
        return pd.DataFrame(data)

    def differences(self, a: str, b: str, key: str) -> pd.DataFrame:
        """The images where systems ``a`` and ``b`` differ most on ``key`` first: columns
        ``image_id``, ``caption_a``, ``caption_b``, ``value_a``, ``value_b``, ``difference``
        (``b - a``) and ``references`` (a list per image); ties keep the images' order."""
        import pandas as pd

        for name in (a, b):
            if name not in self.systems:
                raise InputError(f"unknown system {name!r}; systems: {', '.join(self.systems)}")
        if key not in self.keys:
            raise InputError(f"unknown metric key {key!r}; scored: {', '.join(self.keys)}")
        ia, ib = self.systems.index(a), self.systems.index(b)
        va, vb = self.items[a][key], self.items[b][key]
        frame = pd.DataFrame(
            {
                "image_id": list(self.input.image_ids),
                "caption_a": list(self.input.candidates[ia]),
                "caption_b": list(self.input.candidates[ib]),
                "value_a": va,
                "value_b": vb,
                "difference": vb - va,
                "references": [list(r) for r in self.input.references],
            }
        )
        order = np.argsort(-np.abs(vb - va), kind="stable")
        return frame.iloc[order].reset_index(drop=True)


#: names the layout of cached system scores (values and sufficient statistics); a new layout
#: gets a new name, so old entries are never read as new ones
_CACHE_FORMAT = "systems-v2"  # v2: SPICE keeps its category F-scores (spice_object ...)


def _cache_file(digest: str, signature: str) -> Path:
    return batch.cache_path(digest, signature, _CACHE_FORMAT)


def _batches(data: SystemsInput, tokenizer: str) -> list[Batch]:
    """One batch per system, in the shared image order. The references are tokenized once,
    in one call (as ``capeval score`` tokenizes them), and shared by the batches; a system
    with its own order (see :class:`SystemsInput`) is tokenized in that order."""
    tok = get_tokenizer(tokenizer)
    _, refs = validate_inputs(data.candidates[0], data.references)
    n = len(refs)
    shared: dict[tuple[int, ...] | None, tuple[tuple[Tokens, ...], ...]] = {}
    batches = []
    for s, texts in enumerate(data.candidates):
        order = data.order(s)
        sequence = range(n) if order is None else order
        if order not in shared:
            flat = tok.tokenize_batch([r for i in sequence for r in refs[i]])
            ref_tokens: list[tuple[Tokens, ...]] = [()] * n
            pos = 0
            for i in sequence:
                ref_tokens[i] = tuple(flat[pos : pos + len(refs[i])])
                pos += len(refs[i])
            shared[order] = tuple(ref_tokens)
        cands, _ = validate_inputs(texts, refs)
        tokens = tok.tokenize_batch([cands[i] for i in sequence])
        cand_tokens: list[Tokens] = [()] * n
        for j, i in enumerate(sequence):
            cand_tokens[i] = tokens[j]
        batches.append(Batch(cands, refs, tuple(cand_tokens), shared[order], tok.name))
    return batches


def score_systems(
    data: SystemsInput,
    keys: Sequence[str],
    *,
    tokenizer: str = "ptb",
    options: Mapping[str, Mapping[str, Any]] | None = None,
    workers: int = 0,
    on_progress: Progress | None = None,
    use_cache: bool = True,
    on_error: str = "raise",
) -> SystemsScores:
    """Score every system of ``data`` with the metrics behind ``keys``.

    ``options`` maps a metric key to its options (``{"cider_d": {"idf": "coco-val2014"}}``).
    ``workers > 1`` scores large sets in that many worker processes (METEOR and SPICE in
    parts; never more than the available CPUs, with a warning). Scores are cached on disk
    per system and metric (``use_cache``).
    ``on_error="skip"`` records a metric that fails (e.g. a missing resource) in
    ``skipped`` instead of raising.

    >>> base = ("a dog", "a cat on a bed", "a car")
    >>> new = ("a dog runs on the grass", "a cat sleeps", "a red car")
    >>> refs = (("a big dog runs on grass",), ("a cat sleeps on a bed",), ("a red car on a road",))
    >>> data = SystemsInput(("base", "new"), (1, 2, 3), (base, new), refs,
    ...                     ("base.json", "new.json"), "refs.json")
    >>> scores = score_systems(data, ["bleu_4", "rouge_l"], use_cache=False)
    >>> scores.keys, {name: round(v["rouge_l"], 4) for name, v in scores.corpus.items()}
    (('bleu_4', 'rouge_l'), {'base': 0.6039, 'new': 0.697})
    >>> scores.items["new"]["rouge_l"].round(4).tolist()  # one value per image
    [0.8333, 0.6289, 0.6289]
    """
    if isinstance(keys, str):  # "bleu_4" was read as the keys b, l, e, ...
        raise OptionError(f"`keys` must be a list of metric keys (got {keys!r})")
    keys = list(dict.fromkeys(keys))
    if not keys:
        raise InputError("no metric keys given")
    if not is_whole(workers) or workers < 0:
        raise InputError(f"`workers` must be a whole number >= 0 (got {workers!r})")
    options = options or {}
    configured = configure(keys, tokenizer, options, on_error)
    groups = configured.groups
    metrics, signatures, skipped = configured.metrics, configured.signatures, configured.skipped
    progress = on_progress or (lambda done, total, label: None)
    n_systems = len(data.names)
    digests = [data.digest(s) for s in range(n_systems)]
    values: dict[str, list[dict[str, np.ndarray] | None]] = {}
    cached: dict[str, bool] = {}
    for mkey in metrics:
        values[mkey] = [
            _load_cached(_cache_file(digests[s], signatures[mkey]), metrics[mkey], len(data))
            if use_cache
            else None
            for s in range(n_systems)
        ]
        cached[mkey] = all(v is not None for v in values[mkey])
    total = len(groups)
    done = sum(cached.values()) + len(skipped)
    progress(done, total, "from cache" if done else "starting")
    todo = {m for m in metrics if not cached[m]}
    pool = None
    if todo and workers > 1 and len(data) >= batch.MIN_PART:
        pool = batch.start_pool(workers)  # started before tokenizing: they start meanwhile
    with pool or contextlib.nullcontext():
        progress(done, total, "tokenizing")
        batches = _batches(data, tokenizer)
        # metrics missing the same systems are scored together
        by_missing: dict[tuple[int, ...], list[str]] = {}
        for mkey in sorted(todo, key=list(metrics).index):
            missing = tuple(s for s in range(n_systems) if values[mkey][s] is None)
            by_missing.setdefault(missing, []).append(mkey)
        for missing, mkeys in by_missing.items():
            part = [batches[s] for s in missing]

            def finish(mkey: str, path: Path, got: dict[str, np.ndarray], missing=missing) -> None:
                nonlocal done
                for j, s in enumerate(missing):
                    one = batch.drop_empty_reasons({k: v[j] for k, v in got.items()})
                    if use_cache:
                        batch.save_entry(_cache_file(digests[s], signatures[mkey]), one)
                    values[mkey][s] = one
                done += 1
                progress(done, total, f"{mkey} done")  # not read as still running

            batch.score_all(
                [(m, Path(m)) for m in mkeys],
                metrics,
                options,
                tokenizer,
                part,
                finish,
                skipped,
                on_error,
                pool=pool,
                workers=workers,
                status=lambda label: progress(done, total, label),
                unit="images",
            )
    return _assemble(data, keys, metrics, signatures, values, cached, skipped, batches)


def _load_cached(path: Path, metric: Metric, n_images: int) -> dict[str, np.ndarray] | None:
    """A system's cached per-image values of ``metric`` (validated; damaged ones discarded)."""
    return batch.load_entry(path, metric.report_keys(), (n_images,))


def _assemble(
    data: SystemsInput,
    keys: Sequence[str],
    metrics: Mapping[str, Metric],
    signatures: Mapping[str, str],
    values: Mapping[str, list[dict[str, np.ndarray] | None]],
    cached: Mapping[str, bool],
    skipped: Mapping[str, str],
    batches: Sequence[Batch],
) -> SystemsScores:
    corpus: dict[str, dict[str, float]] = {name: {} for name in data.names}
    items: dict[str, dict[str, np.ndarray]] = {name: {} for name in data.names}
    statistics: dict[str, dict[str, ItemStatistics]] = {name: {} for name in data.names}
    missing: dict[str, dict[str, dict[int, str]]] = {}
    compared: dict[str, tuple[int, ...]] = {}
    out_keys = [
        k for k in keys if metric_class(k).key in metrics and metric_class(k).key not in skipped
    ]
    for mkey, metric in metrics.items():
        if mkey in skipped:
            continue
        left: dict[str, dict[int, str]] = {}
        for s, name in enumerate(data.names):
            reasons = batch.missing_reasons(values[mkey][s] or {})
            if reasons is not None:
                left[name] = {i: str(r) for i, r in enumerate(reasons) if r}
        rows = None  # every image, unless some system's images are left out
        if left:
            gone = {i for lost in left.values() for i in lost}
            rows = [i for i in range(len(data)) if i not in gone]
            compared[mkey] = tuple(rows)
        mine = [k for k in out_keys if metric_class(k).key == mkey]
        for s, name in enumerate(data.names):
            got = values[mkey][s]
            assert got is not None
            item_values = {k: got[k] for k in metric.report_keys()}
            stats = {
                k[len(batch.STATISTICS_PREFIX) :]: v
                for k, v in got.items()
                if k.startswith(batch.STATISTICS_PREFIX)
            }
            # keys reported only when asked for (SPICE's categories) come from the statistics
            item_values.update(metric.optional_values(stats))
            # resampling runs on the images every system scored with this metric
            statistics[name][mkey] = _statistics(metric, item_values, stats, batches[s], rows)
            order = data.order(s)
            own = left.get(name, {})
            if own:  # over the images it scored (in its own order), as capeval score does
                sequence = range(len(data)) if order is None else order
                kept = [i for i in sequence if i not in own]
                point = _statistics(metric, item_values, stats, batches[s], kept).point()
            elif order is not None:  # summed in the system's own order, as capeval score does
                ordered = list(order)
                point = metric.item_statistics(
                    {k: v[ordered] for k, v in item_values.items()},
                    {k: v[ordered] for k, v in stats.items()},
                    batches[s],
                ).point()
            elif rows is None:
                point = statistics[name][mkey].point()
            else:
                point = metric.item_statistics(item_values, stats, batches[s]).point()
            for key in mine:
                report = metric.value_key(key)
                corpus[name][key] = point[report]
                items[name][key] = item_values[report]
                if own:
                    missing.setdefault(name, {})[key] = own
    return SystemsScores(
        data,
        tuple(out_keys),
        corpus,
        items,
        statistics,
        {k: signatures[metric_class(k).key] for k in out_keys},
        {k: cached[metric_class(k).key] for k in out_keys},
        {k: skipped[metric_class(k).key] for k in keys if metric_class(k).key in skipped},
        missing,
        compared,
        {
            mkey: tuple(notes)
            for mkey, metric in metrics.items()
            if mkey not in skipped and (notes := metric.set_notes(batches[0]))
        },
    )


def _statistics(
    metric: Metric,
    values: Mapping[str, np.ndarray],
    stats: Mapping[str, np.ndarray],
    whole: Batch,
    rows: Sequence[int] | None,
) -> ItemStatistics:
    """``metric``'s item statistics over the images ``rows`` (in that order; None: all, in
    the shared order). No rows: a metric that scored no image, NaN everywhere."""
    if rows is None:
        return metric.item_statistics(values, stats, whole)
    if not rows:
        return _Empty((*metric.report_keys(), *metric.optional_values(stats)))
    rows = list(rows)
    return metric.item_statistics(
        {k: v[rows] for k, v in values.items()},
        {k: v[rows] for k, v in stats.items()},
        whole.subset(rows),
    )


class _Empty(ItemStatistics):
    """The statistics of no image: NaN for every key (never resampled: nothing to draw)."""

    def __init__(self, keys: Sequence[str]) -> None:
        self.keys = tuple(keys)

    def __len__(self) -> int:
        return 0

    def point(self) -> dict[str, float]:
        return dict.fromkeys(self.keys, math.nan)

    def resample(self, weights: np.ndarray, memo: dict[Any, Any] | None = None) -> np.ndarray:
        return np.full((weights.shape[0], len(self.keys)), math.nan)

    def swap(self, other: ItemStatistics, take: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        nan = np.full((take.shape[0], len(self.keys)), math.nan)
        return nan, nan


# -- comparison ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class ResamplingSignature:
    """How intervals and p-values were drawn: test(s), resamples, trials, seed, level.
    ``tested`` is False for one system (intervals only): its signature names no test.

    >>> str(ResamplingSignature("both", 1000, 10000, 12345, 0.95))
    'paired:bs+ar|resamples:1000|trials:10000|seed:12345|level:0.95'
    >>> str(ResamplingSignature("both", 1000, 10000, 12345, 0.95, tested=False))
    'resamples:1000|seed:12345|level:0.95'
    """

    paired: str
    n_resamples: int
    n_trials: int
    seed: int | None
    level: float
    tested: bool = True

    def __str__(self) -> str:
        if not self.tested:  # settings that changed no number are not part of it
            return f"resamples:{self.n_resamples}|seed:{self.seed}|level:{float(self.level)!r}"
        tests = {"bs": "bs", "ar": "ar", "both": "bs+ar"}[self.paired]
        parts = [f"paired:{tests}", f"resamples:{self.n_resamples}"]
        if self.paired != "bs":
            parts.append(f"trials:{self.n_trials}")
        parts += [f"seed:{self.seed}", f"level:{float(self.level)!r}"]
        return "|".join(parts)


@dataclass(frozen=True)
class SystemsComparison:
    """Corpus values with bootstrap intervals, and every system against the baseline.

    ``paired[key][system]`` holds a :class:`~capeval_core.stats.resampling.PairedResult`
    for every system but the baseline (the first). ``mean`` and ``ci`` come from the same
    bootstrap resamples. :meth:`as_dict` is the JSON ``capeval compare`` writes.

    A metric that could not score some system's images (``scores.missing``) is compared on
    the images every system scored with it (``scores.compared``), as ``on_missing=
    "intersect"`` does for images some system does not caption: its values (``on_compared``,
    which :attr:`corpus` shows), intervals and paired tests all use those images;
    :meth:`left_out_lines` says which were left out and why.
    """

    scores: SystemsScores
    ci: Mapping[str, Mapping[str, tuple[float, float]]]
    mean: Mapping[str, Mapping[str, float]]
    paired: Mapping[str, Mapping[str, PairedResult]]
    resampling: ResamplingSignature
    on_compared: Mapping[str, Mapping[str, float]] = field(default_factory=dict)

    @property
    def systems(self) -> tuple[str, ...]:
        return self.scores.systems

    @property
    def baseline(self) -> str:
        return self.systems[0]

    @property
    def keys(self) -> tuple[str, ...]:
        return self.scores.keys

    @functools.cached_property
    def corpus(self) -> Mapping[str, Mapping[str, float]]:
        """Each system's value of every key: over every image, or for a metric that left
        some out, over the images every system scored with it."""
        if not any(self.on_compared.values()):
            return self.scores.corpus
        return {s: {**self.scores.corpus[s], **self.on_compared.get(s, {})} for s in self.systems}

    def n_compared(self, key: str) -> int:
        """How many images ``key``'s values, intervals and tests are over."""
        rows = self.scores.compared.get(metric_class(key).key)
        return len(self.scores.input) if rows is None else len(rows)

    def left_out(self) -> dict[str, dict[str, dict[Any, str]]]:
        """``{key: {system: {image_id: reason}}}`` for the keys whose metric left images out."""
        out = {k: self.scores.left_out(k) for k in self.keys}
        return {k: v for k, v in out.items() if v}

    def left_out_warnings(self, shown: int = 5) -> list[str]:
        """One line per metric that could not score some images: which (for any system;
        ``shown`` ids, none with 0) and on how many images its values, intervals and tests
        are (the CLI's stderr; the page's warning, the ids then given as text)."""
        _check_shown(shown)
        lines = []
        done: set[str] = set()
        ids = self.scores.input.image_ids
        for key in self.left_out():
            metric = metric_class(key)
            if metric.key in done:
                continue
            done.add(metric.key)
            label = metric.label(metric.primary_key())
            rows = set(self.scores.compared[metric.key])
            gone = [ids[i] for i in range(len(ids)) if i not in rows]
            listed = ", ".join(map(str, gone[:shown]))
            more = f" ... ({len(gone) - shown:,} more)" if len(gone) > shown else ""
            which = (
                f"image ids {listed}{more}; reasons in the report and the JSON"
                if shown
                else "which and why below"
            )
            lines.append(
                f"{label} could not score {len(gone):,} of {len(ids):,} images for some "
                f"system ({which}): its values, intervals and tests use the {len(rows):,} "
                "images every system scored"
            )
        return lines

    def left_out_lines(self, shown: int = 5) -> list[str]:
        """What each metric that could not score some images left out and why, one line per
        metric (its keys share the images), then one per system that lost images."""

        _check_shown(shown)
        lines = []
        done: set[str] = set()
        n = len(self.scores.input)
        for key, per_system in self.left_out().items():
            metric = metric_class(key)
            if metric.key in done:
                continue
            done.add(metric.key)
            label = metric.label(metric.primary_key())
            together = sorted({i for lost in per_system.values() for i in lost}, key=str)
            lines.append(
                f"{label}: compared on the {self.n_compared(key):,} of {n:,} images every "
                f"system's {label} scored ({len(together):,} left out):"
            )
            lines += [
                "  " + left_out_line(f"{label} of {s}", lost, n, "images", shown)
                for s, lost in per_system.items()
            ]
        return lines

    def signature(self, key: str) -> str:
        """The metric's signature followed by the resampling's."""
        return f"{self.scores.signatures[key]}|{self.resampling}"

    def as_dict(self) -> dict[str, Any]:
        """``{"systems", "corpus", "ci", "paired", "signatures", "n_images", "dropped"}``
        (NaN as None); ``dropped[system]`` is ``{"n", "image_ids"}``, the images of its file
        left out because another system does not caption them. When a metric could not
        score some images, ``left_out[key]`` too, for each of its keys: ``{"n",
        "image_ids", "n_compared", "reasons"}``, the images left out of its comparison, how
        many are compared, and ``{"system", "image_id", "reason"}`` per image a system lost."""
        out = {
            "systems": list(self.systems),
            "corpus": {s: {k: self.corpus[s][k] for k in self.keys} for s in self.systems},
            "ci": {s: {k: list(self.ci[s][k]) for k in self.keys} for s in self.systems},
            "paired": {
                k: {
                    s: {
                        "delta": r.delta,
                        "ci": list(r.confidence_interval),
                        "p_value": r.p_value,
                    }
                    for s, r in self.paired[k].items()
                }
                for k in self.keys
            },
            "signatures": {k: self.signature(k) for k in self.keys},
            "n_images": len(self.scores.input),
            "dropped": {
                s: {"n": len(lost), "image_ids": list(lost)}
                for s, lost in zip(self.systems, self._lost(), strict=True)
            },
        }
        ids = self.scores.input.image_ids
        for key, per_system in self.left_out().items():
            rows = set(self.scores.compared[metric_class(key).key])
            gone = [ids[i] for i in range(len(ids)) if i not in rows]
            out.setdefault("left_out", {})[key] = {
                "n": len(gone),
                "image_ids": gone,
                "n_compared": len(rows),
                "reasons": [
                    {"system": s, "image_id": image_id, "reason": why}
                    for s, lost in per_system.items()
                    for image_id, why in lost.items()
                ],
            }
        return _finite(out)

    def _lost(self) -> list[tuple[Any, ...]]:
        return [self.scores.input.lost(i) for i in range(len(self.systems))]

    def dropped_lines(self, shown: int = 20) -> list[str]:
        """What each file lost to ``on_missing="intersect"``, one line per file that lost
        images (none when every system captions the same images)."""
        data = self.scores.input
        lines = []
        for i, lost in enumerate(self._lost()):
            if lost:
                more = f" ... ({len(lost) - shown:,} more)" if len(lost) > shown else ""
                lines.append(
                    f"{data.sources[i]} ({self.systems[i]}) lost {len(lost):,} image(s) another "
                    f"system does not caption: {', '.join(map(repr, lost[:shown]))}{more}"
                )
        return lines

    def format_table(self) -> str:
        """The comparison as text, laid out like sacrebleu's paired-test table: each system's
        value ± the half-width of its interval, then its difference to the baseline and the
        p-value (``*`` where p < 0.05; at the floor of the resampling, ``p < 0.001``)."""

        r = self.resampling
        resolution = {"bs": r.n_resamples, "ar": r.n_trials}.get(
            r.paired, min(r.n_resamples, r.n_trials)
        )
        labels = [metric_class(k).label(k) for k in self.keys]
        pct = f"{r.level * 100:g}%"
        header = ["System", *(f"{label} (± {pct} CI)" for label in labels)]
        rows: list[list[str]] = []
        for s in self.systems:
            cells = [printable(f"Baseline: {s}" if s == self.baseline else s)]
            for k in self.keys:
                low, high = self.ci[s][k]
                half = (high - low) / 2
                value = self.corpus[s][k]  # a metric that scored no image: n/a, as the tables
                cells.append(f"{value:.4f} ± {half:.4f}" if math.isfinite(value) else "n/a")
            rows.append(cells)
            if s == self.baseline:
                continue
            delta = [""]
            detail = [""]
            for k in self.keys:
                p = self.paired[k][s]
                mark = "*" if p.p_value < ALPHA else ""
                shown = format_p(p.p_value, resolution)
                shown = f"p {shown}" if shown.startswith("<") else f"p = {shown}"
                delta.append(
                    f"Δ {signed(p.delta, 4)} ({shown}){mark}" if math.isfinite(p.delta) else "Δ n/a"
                )
                if r.paired == "both":
                    detail.append(
                        f"bs {format_p(p.p_bootstrap, r.n_resamples)}, "
                        f"ar {format_p(p.p_randomization, r.n_trials)}"
                    )
            rows.append(delta)
            if r.paired == "both":
                rows.append(detail)
            rows.append([])  # a rule between systems
        widths = [max(len(row[j]) for row in [header, *rows] if row) for j in range(len(header))]

        def line(cells: list[str]) -> str:
            return "| " + " | ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)) + " |"

        rule = "+" + "+".join("-" * (w + 2) for w in widths) + "+"
        out = [
            f"capeval {__version__}: {counted(len(self.systems), 'system')}, "
            f"{counted(len(self.scores.input), 'image')}, references from "
            f"{printable(self.scores.input.reference_source)}",
            rule,
            line(header),
            rule.replace("-", "="),
        ]
        for row in rows:
            out.append(rule if not row else line(row))
        if out[-1] != rule:
            out.append(rule)
        tests = {
            "bs": f"paired bootstrap resampling ({r.n_resamples:,} resamples)",
            "ar": f"approximate randomization ({r.n_trials:,} trials)",
            "both": f"paired bootstrap resampling ({r.n_resamples:,} resamples) and "
            f"approximate randomization ({r.n_trials:,} trials)",
        }[r.paired]
        undefined = categories_left_out(self)
        if undefined:
            counts = ", ".join(f"{metric_class(k).label(k)} {n:,}" for k, n in undefined.items())
            out += [
                "",
                "SPICE categories: the mean over the images whose references have such tuples; "
                f"images left out: {counts}.",
            ]
        lost = self.dropped_lines()
        if lost:
            out += ["", "Scored on the images every system captions (on-missing: intersect):"]
            out += [f"  {printable(line)}" for line in lost]
        left = self.left_out_lines()
        if left:
            out += ["", *left]
        if len(self.systems) == 1:  # no other system: intervals, no test (nor their words)
            out += [
                "",
                f"Value ± half the width of its {pct} bootstrap interval over images "
                f"({r.n_resamples:,} resamples, seed {r.seed}).",
            ]
            return "\n".join(out)
        out += [
            "",
            f"Each system against the baseline ({printable(self.baseline)}) with {tests}, "
            f"seed {r.seed}.",
            f"Value ± half the width of its {pct} bootstrap interval over images; Δ = system "
            "minus baseline.",
            "Null hypothesis: the system and the baseline captions come from the same process; "
            "p is about the chance",
            "of an absolute difference at least as large under it. * marks p < 0.05"
            + (
                " (p is the larger of the two tests' p-values; bs/ar: each test's)."
                if r.paired == "both"
                else "."
            ),
        ]
        if r.paired != "ar":  # sacrebleu's paired bootstrap p is not a two-sided one
            out.append(
                "The paired bootstrap p is sacrebleu's: it counts one tail, about half a "
                "two-sided p (approximate randomization's is two-sided)."
            )
        return "\n".join(out)

    def to_frame(self) -> pd.DataFrame:
        """One row per (system, key): value, interval, delta to the baseline, p-values."""
        import pandas as pd

        rows = []
        for s in self.systems:
            for k in self.keys:
                low, high = self.ci[s][k]
                row: dict[str, Any] = {
                    "system": s,
                    "key": k,
                    "value": self.corpus[s][k],
                    "ci_low": low,
                    "ci_high": high,
                    "bootstrap_mean": self.mean[s][k],
                }
                r = self.paired[k].get(s)
                row.update(
                    {
                        "delta": r.delta if r else math.nan,
                        "delta_ci_low": r.confidence_interval[0] if r else math.nan,
                        "delta_ci_high": r.confidence_interval[1] if r else math.nan,
                        "p_bootstrap": r.p_bootstrap
                        if r and r.p_bootstrap is not None
                        else math.nan,
                        "p_randomization": (
                            r.p_randomization if r and r.p_randomization is not None else math.nan
                        ),
                        "p_value": r.p_value if r else math.nan,
                    }
                )
                rows.append(row)
        return pd.DataFrame(rows)


#: p-values below this are written "< 0.001" however many resamples were drawn
P_SHOWN_FROM = 0.001
#: p below this is "significant": marked * in the report, † in the paper's table
ALPHA = 0.05


def format_p(p: float, resolution: int) -> str:
    """A p-value as a paper prints it (:meth:`SystemsComparison.format_table` and
    :mod:`capeval_core.systems_table`'s tables): three decimals, and below 0.001 (or at the floor of
    ``resolution`` resamples or trials, ``1/(resolution+1)``) an upper bound.

    A p just below :data:`ALPHA` gets the digits that keep it below (0.04995, not 0.050
    beside its significance mark).

    >>> format_p(1 / 1001, 1000), format_p(0.0321, 1000), format_p(1 / 201, 200), format_p(1, 1000)
    ('< 0.001', '0.032', '< 0.005', '1.000')
    >>> format_p(50 / 1001, 1000)
    '0.04995'
    """
    if not math.isfinite(p):
        return "n/a"
    bound = max(P_SHOWN_FROM, 1 / resolution)
    if p < bound or p * (resolution + 1) <= 1 + 1e-9:
        return f"< {bound:.2g}"
    digits = 3
    while p < ALPHA and float(f"{p:.{digits}f}") >= ALPHA and digits < 12:
        digits += 1
    return f"{p:.{digits}f}"


def categories_left_out(comparison: SystemsComparison) -> dict[str, int]:
    """Per optional key shown (SPICE's categories), how many images have no value: their
    references hold no tuple of the category, so the mean leaves them out."""
    out = {}
    for k in comparison.keys:
        if k in metric_class(k).optional_reports:
            values = comparison.scores.items[comparison.systems[0]][k]
            rows = comparison.scores.compared.get(metric_class(k).key)
            if rows is not None:  # of the images compared (the others are left out)
                values = values[list(rows)]
            out[k] = int(np.count_nonzero(~np.isfinite(values)))
    return out


def per_item_text(comparison: SystemsComparison, fmt: str) -> str:
    """Per-image captions and values of every system as ``"csv"`` (a header and the rows,
    cells a spreadsheet would evaluate escaped; the signatures are in
    :func:`comparison_signatures_text`) or ``"json"`` (an object with the signatures and one
    record per image).

    >>> data = demo_systems(3)  # three systems on three COCO val2014 images
    >>> c = compare_systems(score_systems(data, ["rouge_l"], use_cache=False), use_cache=False)
    >>> per_item_text(c, "csv").splitlines()[0].split(",")[:3]
    ['image_id', 'first caption: caption', 'second caption: caption']
    >>> items = json.loads(per_item_text(c, "json"))["items"]
    >>> len(items), sorted(items[0])[0]
    (3, 'first caption reversed: caption')
    """
    from capeval_core.stats.export import to_csv_text

    frame = comparison.scores.item_frame()
    signatures = {k: comparison.signature(k) for k in comparison.keys}
    if fmt == "csv":
        return to_csv_text(frame)
    if fmt == "json":
        payload = {
            "capeval": __version__,
            "systems": list(comparison.systems),
            **references_fields(comparison.scores.input),
            "signatures": signatures,
            "items": [_finite(r) for r in frame.to_dict("records")],
        }
        return json.dumps(payload, indent=1, allow_nan=False, ensure_ascii=False) + "\n"
    raise InputError(f"per-image output is csv or json (got {fmt!r})")


def comparison_signatures_text(comparison: SystemsComparison, describes: str = "") -> str:
    """The sidecar JSON of a comparison's per-image CSV: what
    :func:`capeval_core.stats.export.signatures_text` writes of any signatures, here each
    key's signature (metric and resampling) with the systems and the references.

    >>> data = demo_systems(3)
    >>> c = compare_systems(score_systems(data, ["rouge_l"], use_cache=False), use_cache=False)
    >>> sidecar = json.loads(comparison_signatures_text(c, "items.csv"))
    >>> sorted(sidecar)[:3], sidecar["signatures"]["rouge_l"].split("|")[:2]
    (['capeval', 'describes', 'references'], ['rouge_l', 'beta:1.2'])
    """
    from capeval_core.stats.export import signatures_text

    return signatures_text(
        {k: comparison.signature(k) for k in comparison.keys},
        describes,
        systems=list(comparison.systems),
        **references_fields(comparison.scores.input),
    )


def references_fields(data: SystemsInput) -> dict[str, str]:
    """How a shared output names the references: the file name only (no folders of this
    machine) and a digest of the references read, which tells two files of one name apart."""
    return {
        "references": shared_name(data.reference_source),
        "references_sha256": text_digest(json.dumps(data.references, ensure_ascii=False)),
    }


def systems_per_item_outputs(
    path: Path, comparison: SystemsComparison
) -> list[tuple[str, Path, str]]:
    """:func:`per_item_text` for ``path`` (``.csv`` or ``.json``) and, beside a CSV, its
    signatures' sidecar JSON (:func:`capeval_core.stats.export.sidecar_path`), as
    ``(option, path, text)`` for :func:`capeval_core.files.write_all`."""
    from capeval_core.stats.export import sidecar_path

    suffix = path.suffix.lower()
    if suffix not in (".csv", ".json"):
        raise InputError(f"--per-item must end in .csv or .json (got {path.name})")
    out = [("--per-item", path, per_item_text(comparison, suffix[1:]))]
    if suffix == ".csv":
        out.append(
            ("--per-item", sidecar_path(path), comparison_signatures_text(comparison, path.name))
        )
    return out


def write_systems_per_item(path: Path, comparison: SystemsComparison) -> None:
    """:func:`systems_per_item_outputs` written, all or none."""
    write_all(systems_per_item_outputs(path, comparison))


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


def _finite(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _bootstrap(
    scores: SystemsScores,
    metrics: Sequence[str],
    n_resamples: int,
    seed: int | None,
    use_cache: bool,
) -> dict[tuple[str, str], np.ndarray]:
    """Every (system, metric)'s resampled corpus values, from the cache where they are; the
    others in one bootstrap (each chunk of weights drawn once, CIDEr-D's reference work
    shared)."""
    signature = {metric_class(k).key: v for k, v in scores.signatures.items()}
    extra = f"bootstrap|resamples:{n_resamples}|seed:{seed}|n:{len(scores.input)}"
    paths, boot = {}, {}
    for i, s in enumerate(scores.systems):
        digest = scores.input.digest(i)
        for m in metrics:
            rows = _rows_key(scores, m)  # the images compared, when some were left out
            cached = use_cache and seed is not None  # else no cache folder is even made
            paths[s, m] = _cache_file(digest, f"{signature[m]}|{extra}{rows}") if cached else None
            got = batch.load_entry(paths[s, m], ["values"], None) if cached else None
            if got is not None and got.get("values", np.empty(0)).shape[0] == n_resamples:
                boot[s, m] = got["values"]
    todo = {k: scores.statistics[k[0]][k[1]] for k in paths if k not in boot}
    # one bootstrap per set of compared images (every image, or those a metric left in)
    groups: dict[tuple[int, ...] | None, dict[tuple[str, str], ItemStatistics]] = {}
    for k, stats in todo.items():
        groups.setdefault(scores.compared.get(k[1]), {})[k] = stats
    for group in groups.values():
        fresh = _bootstrap_group(group, n_resamples, seed)
        for k, values in fresh.items():
            if use_cache and seed is not None:
                batch.save_entry(paths[k], {"values": values})
            boot[k] = values
    return boot


def _bootstrap_group(
    group: Mapping[tuple[str, str], ItemStatistics], n_resamples: int, seed: int | None
) -> dict[tuple[str, str], np.ndarray]:
    from capeval_core.stats import resampling as rs

    size = len(next(iter(group.values())))
    if size == 0:  # a metric that scored no image for some system: nothing to resample
        return {k: np.full((n_resamples, len(v.keys)), math.nan) for k, v in group.items()}
    return rs.bootstrap(group, n_resamples, seed)


def _rows_key(scores: SystemsScores, metric: str) -> str:
    """What names a metric's compared images in a cache key ("" when it compares them all)."""
    rows = scores.compared.get(metric)
    if rows is None:
        return ""
    digest = hashlib.sha256(np.asarray(rows, dtype=np.int64).tobytes()).hexdigest()[:16]
    return f"|compared:{len(rows)}:{digest}"


def compare_systems(
    scores: SystemsScores,
    *,
    paired: str = "both",
    n_resamples: int | None = None,
    n_trials: int | None = None,
    seed: int | None = None,
    level: float = 0.95,
    use_cache: bool = True,
) -> SystemsComparison:
    """Bootstrap intervals for every system and paired tests of each against the first.

    ``paired``: ``"bs"`` (paired bootstrap), ``"ar"`` (approximate randomization) or
    ``"both"``; defaults as sacrebleu: 1,000 resamples, 10,000 trials, seed 12345. The
    bootstrap always runs: it gives the intervals. A system's resampled values depend on
    its captions, the references, the metric, the number of images, resamples and the seed
    only (every system is resampled with the same weights), so with ``use_cache`` they are
    kept in the score cache beside its scores.

    >>> scores = score_systems(demo_systems(3), ["rouge_l"], use_cache=False)
    >>> c = compare_systems(scores, use_cache=False)
    >>> t = c.paired["rouge_l"]["first caption reversed"]  # against the baseline, the first
    >>> c.baseline, round(t.delta, 4), round(t.p_bootstrap, 4), round(t.p_randomization, 4)
    ('first caption', -0.0899, 0.001, 0.249)
    >>> [round(x, 4) for x in c.ci["first caption reversed"]["rouge_l"]], str(c.resampling)
    ([0.1818, 0.2947], 'paired:bs+ar|resamples:1000|trials:10000|seed:12345|level:0.95')
    """
    from capeval_core.stats import resampling as rs
    from capeval_core.stats.intervals import MAX_RESAMPLES, check_resampling

    # numpy's integers (a notebook's np.int64(200)) as the Python ints they equal
    n_resamples, n_trials, seed = (
        int(v) if isinstance(v, np.integer) else v
        for v in (
            rs.DEFAULT_RESAMPLES if n_resamples is None else n_resamples,
            rs.DEFAULT_TRIALS if n_trials is None else n_trials,
            rs.DEFAULT_SEED if seed is None else seed,
        )
    )
    if paired not in rs.PAIRED_TESTS:
        raise InputError(f"`paired` must be one of {rs.PAIRED_TESTS} (got {paired!r})")
    for name, value, least in (("n_resamples", n_resamples, 2), ("n_trials", n_trials, 1)):
        if not is_whole(value) or not (least <= value <= MAX_RESAMPLES):
            raise InputError(
                f"`{name}` must be a whole number from {least} to {MAX_RESAMPLES:,} (got {value!r})"
            )
    check_resampling(level, n_resamples)
    if not is_whole(seed) or seed < 0:
        raise InputError(f"`seed` must be a whole number >= 0 (got {seed!r})")
    systems = scores.systems
    ci: dict[str, dict[str, tuple[float, float]]] = {s: {} for s in systems}
    mean: dict[str, dict[str, float]] = {s: {} for s in systems}
    tests: dict[str, dict[str, PairedResult]] = {k: {} for k in scores.keys}
    metrics = list(dict.fromkeys(metric_class(k).key for k in scores.keys))
    if not metrics:  # every metric skipped: nothing to resample
        return SystemsComparison(
            scores, ci, mean, tests, ResamplingSignature(paired, n_resamples, n_trials, seed, level)
        )
    boot = _bootstrap(scores, metrics, n_resamples, seed, use_cache)
    columns: dict[str, tuple[str, int]] = {}
    for k in scores.keys:
        m = metric_class(k).key
        report = scores.statistics[systems[0]][m].keys
        columns[k] = (m, report.index(metric_class(k).value_key(k)))
    for s in systems:
        for k, (m, j) in columns.items():
            values = boot[s, m][:, j]
            ci[s][k] = rs.confidence_interval(values, level)
            finite = values[np.isfinite(values)]
            mean[s][k] = float(finite.mean()) if finite.size else math.nan
    # a metric that left images out is compared on the images every system scored with it
    on_compared: dict[str, dict[str, float]] = {s: {} for s in systems}
    for k, (m, _) in columns.items():
        if m in scores.compared:
            for s in systems:
                point = scores.statistics[s][m].point()
                on_compared[s][k] = point[k if k in point else metric_class(k).primary_key()]
    signature = ResamplingSignature(
        paired, n_resamples, n_trials, seed, level, tested=len(systems) > 1
    )
    base = systems[0]
    if len(systems) < 2:  # one system: intervals only, nothing to test against
        return SystemsComparison(scores, ci, mean, tests, signature, on_compared)
    # every (system, metric) against the baseline in one pass over the swaps (one per set of
    # compared images)
    groups: dict[tuple[int, ...] | None, list[str]] = {}
    for m in metrics:
        groups.setdefault(scores.compared.get(m), []).append(m)
    results = {}
    for rows, group in groups.items():
        pairs = {
            (s, m): (scores.statistics[base][m], scores.statistics[s][m], boot[base, m], boot[s, m])
            for s in systems[1:]
            for m in group
        }
        if rows is not None and not rows:  # no image compared: nothing to test
            results.update({k: _untested(v[0].keys) for k, v in pairs.items()})
            continue
        results.update(
            rs.paired_tests_many(pairs, tests=paired, n_trials=n_trials, seed=seed, level=level)
        )
    for s in systems[1:]:
        for k, (m, j) in columns.items():
            tests[k][s] = results[s, m][scores.statistics[base][m].keys[j]]
    return SystemsComparison(scores, ci, mean, tests, signature, on_compared)


def score_and_compare(
    data: SystemsInput,
    keys: Sequence[str],
    *,
    tokenizer: str = "ptb",
    options: Mapping[str, Mapping[str, Any]] | None = None,
    workers: int = 0,
    on_error: str = "raise",
    paired: str = "both",
    n_resamples: int | None = None,
    n_trials: int | None = None,
    seed: int | None = None,
    on_progress: Progress | None = None,
    on_stage: Callable[[str], None] | None = None,
    ignore: tuple[type[Warning], ...] = (),
) -> SystemsComparison:
    """:func:`score_systems`, then :func:`compare_systems`: the table a reader of a paper
    wants. ``on_stage(text)`` is told when the resampling begins; warnings of the classes in
    ``ignore`` are not shown.

    With :func:`~capeval_core.workers.run_apart` (:func:`score_and_compare_apart`) it runs
    whole in a process of its own: the app's server then only waits for the comparison.

    >>> base = ("a dog", "a cat on a bed", "a car")
    >>> new = ("a dog runs on the grass", "a cat sleeps", "a red car")
    >>> refs = (("a big dog runs on grass",), ("a cat sleeps on a bed",), ("a red car on a road",))
    >>> data = SystemsInput(("base", "new"), (1, 2, 3), (base, new), refs,
    ...                     ("base.json", "new.json"), "refs.json")
    >>> import tempfile
    >>> from unittest import mock
    >>> with tempfile.TemporaryDirectory() as tmp:  # the score cache kept in a temporary folder
    ...     with mock.patch.dict(os.environ, {"CAPEVAL_SCORES_CACHE_DIR": tmp}):
    ...         c = score_and_compare(data, ["bleu_4", "rouge_l"])
    >>> c.baseline, round(c.corpus["new"]["rouge_l"], 4), round(c.paired["rouge_l"]["new"].delta, 4)
    ('base', 0.697, 0.0931)
    """
    with warnings.catch_warnings():
        for category in ignore:
            warnings.simplefilter("ignore", category)
        scores = score_systems(
            data,
            keys,
            tokenizer=tokenizer,
            options=options,
            workers=workers,
            on_progress=on_progress,
            on_error=on_error,
        )
        if on_stage is not None:
            on_stage("Bootstrap resamples and paired tests…")
        return compare_systems(
            scores, paired=paired, n_resamples=n_resamples, n_trials=n_trials, seed=seed
        )


def _apart(
    report: Callable[..., None], data: SystemsInput, keys: Sequence[str], kw: Mapping[str, Any]
) -> SystemsComparison:
    """:func:`score_and_compare` in the process of :func:`~capeval_core.workers.run_apart`:
    its progress and stages are reports (``("progress", done, total, label)``,
    ``("stage", text)``)."""
    return score_and_compare(
        data,
        keys,
        on_progress=lambda done, total, label: report("progress", done, total, label),
        on_stage=lambda text: report("stage", text),
        **kw,
    )


def score_and_compare_apart(
    data: SystemsInput,
    keys: Sequence[str],
    *,
    on_progress: Progress | None = None,
    on_stage: Callable[[str], None] | None = None,
    **options: Any,
) -> SystemsComparison:
    """:func:`score_and_compare` (the same ``options``) in a spawned process of its own, run
    at the priority of the app's workers (:func:`capeval_core.workers.niceness`).

    A server that serves several people in threads of one process (the app) calls this:
    tokenizing, collecting the workers' parts and resampling are Python work that would
    otherwise queue for the server's interpreter lock behind every page being drawn. The
    callbacks are called here, in the calling thread (the last progress again every second
    while nothing new comes); raising from one stops the run, its process and its workers.
    """
    from capeval_core.workers import run_apart

    def relay(kind: str, *message: Any) -> None:
        if kind == "progress" and on_progress is not None:
            on_progress(*message)
        elif kind == "stage" and on_stage is not None:
            on_stage(*message)

    return run_apart(_apart, data, tuple(keys), dict(options), on_report=relay)


def _untested(keys: Sequence[str]) -> dict[str, PairedResult]:
    from capeval_core.stats.resampling import PairedResult

    nan = math.nan
    return {k: PairedResult(nan, (nan, nan), nan, nan) for k in keys}


__all__ = [
    "COCO_VAL_SOURCE",
    "References",
    "ResamplingSignature",
    "SystemsComparison",
    "SystemsInput",
    "SystemsScores",
    "categories_left_out",
    "coco_val_references",
    "compare_systems",
    "comparison_signatures_text",
    "demo_systems",
    "format_p",
    "load_systems",
    "per_item_text",
    "score_and_compare",
    "score_and_compare_apart",
    "score_systems",
    "systems_per_item_outputs",
    "write_systems_per_item",
]
