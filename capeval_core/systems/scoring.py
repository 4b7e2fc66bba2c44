"""Every system scored with every metric in one pass (:func:`score_systems`): references
tokenized once; per-image values and each metric's resampling statistics kept
(:class:`SystemsScores`); results cached on disk per system and metric.
"""

from __future__ import annotations

import contextlib
import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from capeval_core import batch
from capeval_core.batch import Progress
from capeval_core.coco_files import SORTED_ID_KEYS, coco_caption_mean
from capeval_core.errors import DegenerateCorpusWarning, InputError, OptionError
from capeval_core.metrics import Batch, configure, metric_class
from capeval_core.metrics.base import Metric, validate_inputs
from capeval_core.metrics.statistics import ItemStatistics
from capeval_core.options import is_whole
from capeval_core.systems.loading import SystemsInput
from capeval_core.tokenize import Tokens, get_tokenizer

if TYPE_CHECKING:
    import pandas as pd


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


def cache_file(digest: str, signature: str) -> Path:
    """Where a system's values of one signature are cached (the bootstrap's beside them)."""
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
            _load_cached(cache_file(digests[s], signatures[mkey]), metrics[mkey], len(data))
            if use_cache and batch.cacheable(signatures[mkey])
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
                    if use_cache and batch.cacheable(signatures[mkey]):
                        batch.save_entry(cache_file(digests[s], signatures[mkey]), one)
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
    scores = _assemble(data, keys, metrics, signatures, values, cached, skipped, batches)
    for note in (n for notes in scores.notes.values() for n in notes):  # cached runs too
        warnings.warn(note, DegenerateCorpusWarning, stacklevel=2)
    return scores


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
                if report in SORTED_ID_KEYS:  # summed as coco-caption sums it (capeval score too)
                    corpus[name][key] = coco_caption_mean(item_values[report], data.image_ids)
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
