"""Batch scoring of a JudgmentSet with any subset of the registered metrics.

Results are cached on disk in ``cache_dir()/judgment-scores/``, one ``.npz`` file per
(set content digest, metric signature[, reference-sampling knobs]), so reopening a set is
instant. ``on_progress(done, total, label)`` lets the CLI draw a tqdm bar and the app an
``st.progress``; ``workers > 1`` scores in that many worker processes, metrics whose items
are independent cut into parts (see :func:`_tasks`).

Rows with the same candidate and references (e.g. Flickr8k-Expert's three expert rows per
caption) are scored once, so corpus statistics such as CIDEr-D's document frequencies count
each judged caption once and every preset of a dataset gets the same metric values.
Pairwise sets are scored per draw of sampled references (PASCAL-50S protocol: 5 references,
5 draws), candidates a and b of all pairs in one batch per draw.
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import itertools
import json
import multiprocessing
import os
import pickle
import tempfile
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from capeval_core.errors import CapevalError
from capeval_core.judgments.base import JudgmentSet
from capeval_core.metrics import Batch, configure, make_batch, metric_class
from capeval_core.metrics.base import Metric, collector_paused
from capeval_core.resources import atomic_write, discard_damaged

Progress = Callable[[int, int, str], None]
CACHE_FOLDER = "judgment-scores"
#: overrides the folder of the score cache only (see :func:`scores_cache_dir`)
SCORES_CACHE_ENV = "CAPEVAL_SCORES_CACHE_DIR"


@dataclass(frozen=True)
class JudgmentScores:
    """Per-item metric values for a JudgmentSet.

    Graded sets: ``values[key]`` has one value per item. Pairwise sets: ``values_a[key]`` and
    ``values_b[key]`` have shape (draws, pairs).
    """

    digest: str
    kind: str
    keys: tuple[str, ...]
    values: Mapping[str, np.ndarray] = field(default_factory=dict)
    values_a: Mapping[str, np.ndarray] = field(default_factory=dict)
    values_b: Mapping[str, np.ndarray] = field(default_factory=dict)
    signatures: Mapping[str, str] = field(default_factory=dict)
    from_cache: Mapping[str, bool] = field(default_factory=dict)
    skipped: Mapping[str, str] = field(default_factory=dict)
    sampling: Mapping[str, Any] = field(default_factory=dict)


def _report_key(key: str) -> str:
    cls = metric_class(key)
    return key if key in cls.report_keys() else cls.primary_key()


def scores_cache_dir() -> Path:
    """Where judgment scores (and their bootstrap intervals) are cached:
    ``$CAPEVAL_SCORES_CACHE_DIR`` if set, else ``cache_dir()/judgment-scores``. The separate
    override lets a bench start from an empty score cache while keeping one-time resources
    (METEOR's paraphrase index, IDF tables) in the main cache directory."""
    from capeval_core.resources import cache_dir

    override = os.environ.get(SCORES_CACHE_ENV)
    folder = Path(override).expanduser() if override else cache_dir() / CACHE_FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _cache_path(digest: str, signature: str, extra: str = "") -> Path:
    h = hashlib.sha256(f"{signature}|{extra}".encode()).hexdigest()[:20]
    return scores_cache_dir() / f"{digest[:24]}-{h}.npz"


def _load(
    path: Path, keys: Sequence[str], shape: tuple[int, ...] | None
) -> dict[str, np.ndarray] | None:
    """A cache entry: every key of ``keys`` present, each a float array (of ``shape``, unless
    it is None). An entry that fails these checks (a truncated or damaged archive, renamed
    keys, arrays of another length) is deleted with one :class:`DamagedCacheWarning` and
    recomputed."""
    try:
        with np.load(path, allow_pickle=False) as data:
            values = {k: data[k] for k in data.files}
    except FileNotFoundError:
        return None
    except Exception as exc:  # BadZipFile, bad CRC, OSError, ValueError, EOFError, ...
        return _discard(path, f"unreadable: {type(exc).__name__}: {exc}")
    missing = [k for k in keys if k not in values]
    if missing:
        return _discard(path, f"it lacks {missing} (holds {sorted(values)})")
    for k in keys:
        arr = values[k]
        if arr.dtype.kind != "f" or (shape is not None and arr.shape != shape):
            return _discard(
                path, f"{k!r} is {arr.dtype} of shape {arr.shape}, expected float of {shape}"
            )
    return values


def _discard(path: Path, reason: str) -> None:
    discard_damaged(path, "judgment-score cache entry", reason, "the scores are computed again")
    return None


def _shape(jset: JudgmentSet, n_references: int, draws: int) -> tuple[int, int]:
    """Shape of each cached array: (1, items) for graded sets, (draws, 2 x pairs) for
    pairwise ones (one draw when no pair has more references than are sampled)."""
    if jset.kind == "graded":
        return 1, len(jset)
    return _draws(jset, n_references, draws), 2 * len(jset)


def _draws(jset: JudgmentSet, n_references: int, draws: int) -> int:
    """Draws of sampled references: one where every draw would be identical."""
    return 1 if max(len(it.references) for it in jset.items) <= n_references else draws


def _save(path: Path, values: Mapping[str, np.ndarray]) -> None:
    with atomic_write(path) as fh:  # a concurrent reader never sees half a file
        np.savez(fh, **values)


#: prefix of the arrays of Metric.sufficient_statistics among a metric's values
STATISTICS_PREFIX = "statistics:"


def _score_metric(
    metric_key: str, options: Mapping[str, Any], tokenizer: str, batches: Sequence[Batch]
) -> dict[str, np.ndarray]:
    """Every reported key of one metric over one or more batches: (batches, items); and,
    under ``STATISTICS_PREFIX``, the metric's sufficient statistics (batches, items, ...)."""
    metric = metric_class(metric_key)(tokenizer=tokenizer, **dict(options))
    out: dict[str, list[list[float]]] = {}
    # Only the values are kept: each result (with its evidence, hundreds of thousands of
    # objects) is freed before the garbage collector resumes, which would otherwise scan it
    # up to three times (0.3 s per 4,000 SPICE items).
    with collector_paused():
        for batch in batches:
            result = metric.score_batch(batch)
            for k in result.corpus:
                out.setdefault(k, []).append(result.segment_values(k))
            # what resampling needs beyond the values (BLEU's and METEOR's statistics)
            for name, rows in metric.sufficient_statistics(result).items():
                out.setdefault(STATISTICS_PREFIX + name, []).append(rows)
            del result
        if _IN_WORKER:
            # What a worker holds now is resources and caches, alive until it exits: frozen,
            # the collector never rescans them (~2 s per worker over the 17,000-row bench).
            gc.freeze()
    return {k: np.asarray(v, dtype=float) for k, v in out.items()}


def metric_signature(key: str, tokenizer: str, options: Mapping[str, Any]) -> str:
    """The signature string of a configured metric (what the cache is keyed by)."""
    cls = metric_class(key)
    return str(cls(tokenizer=tokenizer, **dict(options)).signature())


def score_judgments(
    jset: JudgmentSet,
    keys: Sequence[str],
    *,
    tokenizer: str = "ptb",
    options: Mapping[str, Mapping[str, Any]] | None = None,
    n_references: int = 5,
    draws: int = 5,
    seed: int = 0,
    workers: int = 0,
    on_progress: Progress | None = None,
    use_cache: bool = True,
    on_error: str = "raise",
) -> JudgmentScores:
    """Score every item of ``jset`` with the metrics behind ``keys``.

    ``on_error="skip"`` records a metric that fails (e.g. a missing resource) in
    ``skipped`` instead of raising. ``n_references``/``draws``/``seed`` apply to pairwise
    sets only.
    """
    keys = list(dict.fromkeys(keys))
    if any(k in jset.external_names for k in keys):
        builtin = [k for k in keys if k not in jset.external_names]
        inner = score_judgments(
            jset,
            builtin,
            tokenizer=tokenizer,
            options=options,
            n_references=n_references,
            draws=draws,
            seed=seed,
            workers=workers,
            on_progress=on_progress,
            use_cache=use_cache,
            on_error=on_error,
        )
        return _with_external(jset, inner, keys)
    options = options or {}
    configured = configure(keys, tokenizer, options, on_error)
    groups = configured.groups
    progress = on_progress or (lambda done, total, label: None)
    total = len(groups)
    pairwise = jset.kind == "pairwise"
    sampling = {"n_references": n_references, "draws": draws, "seed": seed} if pairwise else {}
    extra = json.dumps(sampling, sort_keys=True)

    results: dict[str, dict[str, np.ndarray]] = {}
    metrics, signatures, skipped = configured.metrics, configured.signatures, configured.skipped
    cached: dict[str, bool] = {}
    todo: list[tuple[str, Path]] = []
    for mkey in metrics:
        path = _cache_path(jset.items_digest, signatures[mkey], extra)
        shape = _shape(jset, n_references, draws)
        hit = _load(path, metric_class(mkey).report_keys(), shape) if use_cache else None
        if hit is not None:
            results[mkey], cached[mkey] = hit, True
        else:
            todo.append((mkey, path))
    done = len(results) + len(skipped)
    progress(done, total, "from cache" if done else "starting")
    if todo:
        # Workers (fresh interpreters loading resources) only pay on large sets; started
        # before tokenizing, so their interpreters start up meanwhile.
        pool = _start_pool(workers) if workers > 1 and len(jset) >= MIN_PART else None
        with pool or contextlib.nullcontext():
            progress(done, total, "tokenizing")
            batches, expand = _batches(jset, tokenizer, n_references, draws, seed)

            def finish(mkey: str, path: Path, values: dict[str, np.ndarray]) -> None:
                nonlocal done
                values = {k: v[:, expand] for k, v in values.items()}
                if use_cache:
                    _save(path, values)
                results[mkey], cached[mkey] = values, False
                done += 1
                progress(done, total, mkey)

            n_items = len(batches[0])
            tasks = _tasks(todo, metrics, n_items, workers)
            if pool is not None and len(tasks) > 1 and n_items >= MIN_PART:
                progress(done, total, f"scoring in {workers} worker processes")
                _score_in_workers(
                    pool,
                    tasks,
                    todo,
                    metrics,
                    options,
                    tokenizer,
                    batches,
                    finish,
                    skipped,
                    on_error,
                )
            else:
                for mkey, path in todo:
                    progress(done, total, mkey)
                    try:
                        values = _score_metric(mkey, options.get(mkey, {}), tokenizer, batches)
                    except CapevalError as exc:
                        if on_error != "skip":
                            raise
                        skipped[mkey] = str(exc)
                        continue
                    finish(mkey, path, values)

    out_keys = tuple(k for k in keys if metric_class(k).key in results)
    n = len(jset)
    vals, va, vb = {}, {}, {}
    for key in out_keys:
        arr = results[metric_class(key).key][_report_key(key)]
        if pairwise:
            va[key], vb[key] = arr[:, :n], arr[:, n:]
        else:
            vals[key] = arr[0]
    return JudgmentScores(
        jset.content_digest,
        jset.kind,
        out_keys,
        vals,
        va,
        vb,
        {k: signatures[metric_class(k).key] for k in out_keys},
        {k: cached[metric_class(k).key] for k in out_keys},
        skipped,
        sampling,
    )


def _with_external(jset: JudgmentSet, inner: JudgmentScores, keys: Sequence[str]) -> JudgmentScores:
    """``inner`` (the built-in metrics) with the set's external metrics among ``keys`` added,
    in the order of ``keys``. Pairwise external values are one draw (scores per candidate)."""
    external = {e.name: e for e in jset.external}
    out_keys = tuple(k for k in keys if k in external or k in inner.keys)
    vals, va, vb = dict(inner.values), dict(inner.values_a), dict(inner.values_b)
    signatures, cached = dict(inner.signatures), dict(inner.from_cache)
    for k in out_keys:
        if k not in external:
            continue
        ext = external[k]
        if jset.kind == "graded":
            vals[k] = ext.values
        else:
            va[k], vb[k] = ext.values[0][None, :], ext.values[1][None, :]
        signatures[k], cached[k] = ext.signature, True
    return JudgmentScores(
        jset.content_digest,
        jset.kind,
        out_keys,
        {k: vals[k] for k in out_keys if k in vals},
        {k: va[k] for k in out_keys if k in va},
        {k: vb[k] for k in out_keys if k in vb},
        {k: signatures[k] for k in out_keys},
        {k: cached[k] for k in out_keys},
        inner.skipped,
        inner.sampling,
    )


#: Fewest items in one part of a batch scored as its own task by a worker process.
MIN_PART = 1000


def _tasks(
    todo: Sequence[tuple[str, Path]],
    metrics: Mapping[str, Metric],
    n_items: int,
    workers: int,
) -> list[tuple[str, int, int]]:
    """``(metric, start, stop)`` item ranges to score. With workers, a metric whose items
    are independent is cut into up to ``2 * workers`` parts, so one slow metric (METEOR,
    SPICE) does not leave the other workers idle; the others stay whole."""
    tasks: list[tuple[str, int, int]] = []
    for mkey, _ in todo:
        parts = 1
        if workers > 1 and metrics[mkey].segments_independent():
            parts = max(1, min(2 * workers, n_items // MIN_PART))
        bounds = np.linspace(0, n_items, parts + 1).round().astype(int).tolist()
        tasks.extend((mkey, a, b) for a, b in itertools.pairwise(bounds))
    # whole metrics first: the longest tasks start early (longest-processing-time first)
    whole = {m for m, a, b in tasks if (a, b) == (0, n_items)}
    return sorted(tasks, key=lambda t: t[0] not in whole)


#: True in the worker processes of :func:`_start_pool`
_IN_WORKER = False


def _worker_setup() -> None:
    """Runs first in each worker. The workers are the parallelism, so BLAS threads inside
    them would only compete for the same cores (I2CE's encoder ran 2x slower that way)."""
    global _IN_WORKER
    from threadpoolctl import threadpool_limits

    threadpool_limits(1)
    _IN_WORKER = True


def _started() -> None:
    """A first task per worker: submitting it makes the pool start that worker now."""


def _start_pool(workers: int) -> ProcessPoolExecutor | None:
    """A pool of ``workers`` spawned processes (fresh interpreters: safe to start from the
    app's threaded server), their start-up begun; None where processes cannot start."""
    try:
        pool = ProcessPoolExecutor(
            max_workers=workers,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=_worker_setup,
        )
        for _ in range(workers):  # the pool spawns a worker per submitted task, up to max
            pool.submit(_started)
    except (OSError, RuntimeError):  # no process support here
        return None
    return pool


def _score_in_workers(
    pool: ProcessPoolExecutor,
    tasks: Sequence[tuple[str, int, int]],
    todo: Sequence[tuple[str, Path]],
    metrics: Mapping[str, Metric],
    options: Mapping[str, Mapping[str, Any]],
    tokenizer: str,
    batches: Sequence[Batch],
    finish: Callable[[str, Path, dict[str, np.ndarray]], None],
    skipped: dict[str, str],
    on_error: str,
) -> None:
    """Score ``tasks`` in the worker processes of ``pool``; a metric is finished when all its
    parts are back. A part whose worker died is scored in this process instead."""
    paths = dict(todo)
    parts: dict[str, dict[int, dict[str, np.ndarray]]] = {m: {} for m in paths}
    expected = {m: sum(1 for t in tasks if t[0] == m) for m in paths}

    def task(mkey: str, start: int, stop: int) -> tuple[Any, ...]:
        return (mkey, options.get(mkey, {}), tokenizer, [b.part(start, stop) for b in batches])

    def here(mkey: str, start: int, stop: int) -> dict[str, np.ndarray]:
        return _score_metric(*task(mkey, start, stop))

    def collect(mkey: str, start: int, values: Callable[[], dict[str, np.ndarray]]) -> None:
        if mkey in skipped:
            return
        try:
            parts[mkey][start] = values()
        except CapevalError as exc:
            if on_error != "skip":
                raise
            skipped[mkey] = str(exc)
            return
        if len(parts[mkey]) == expected[mkey]:
            ordered = [parts[mkey][k] for k in sorted(parts[mkey])]
            merged = {k: np.concatenate([p[k] for p in ordered], axis=1) for k in ordered[0]}
            finish(mkey, paths[mkey], merged)

    # The batches go to the workers once, through a private temporary file, rather than
    # pickled into every task (29 tasks of ~2 MB on the 17,000-row bench).
    try:
        fd, name = tempfile.mkstemp(prefix="capeval-batches-", suffix=".pickle")
    except OSError:  # no writable temporary folder: only speed is lost
        for mkey, start, stop in tasks:
            collect(mkey, start, lambda m=mkey, a=start, b=stop: here(m, a, b))
        return
    try:
        with os.fdopen(fd, "wb") as fh:
            pickle.dump(list(batches), fh, protocol=pickle.HIGHEST_PROTOCOL)
        shared = _shared_work(expected, metrics, batches)
        _collect_workers(pool, tasks, options, tokenizer, name, collect, here, shared)
    finally:
        Path(name).unlink(missing_ok=True)


def _shared_work(
    parts: Mapping[str, int], metrics: Mapping[str, Metric], batches: Sequence[Batch]
) -> dict[str, list[Callable[[], Any]]]:
    """:meth:`~capeval_core.metrics.base.Metric.shared_work` of each metric scored in parts
    (``parts`` counts them), in four times as many pieces."""
    out: dict[str, list[Callable[[], Any]]] = {}
    for mkey, n in parts.items():
        if n < 2:
            continue
        try:
            work = metrics[mkey].shared_work(batches, 4 * n)
        except CapevalError:  # e.g. a missing resource: the parts report it
            work = []
        if work:
            out[mkey] = work
    return out


def _collect_workers(
    pool: ProcessPoolExecutor,
    tasks: Sequence[tuple[str, int, int]],
    options: Mapping[str, Mapping[str, Any]],
    tokenizer: str,
    batches_file: str,
    collect: Callable[[str, int, Callable[[], dict[str, np.ndarray]]], None],
    here: Callable[[str, int, int], dict[str, np.ndarray]],
    shared: Mapping[str, Sequence[Callable[[], Any]]],
) -> None:
    """Submit the tasks, then collect the parts as they finish (scored here if lost).

    Whole metrics go first, then the shared work, then the parts; the parts of a metric with
    shared work are held back until all of it is done (it fills the cache they read). Shared
    work that fails only costs time: the parts then do it themselves.
    """
    futures: dict[Future, tuple[str, int, int] | str] = {}
    held: dict[str, list[tuple[str, int, int]]] = {m: [] for m in shared}
    waiting = dict.fromkeys(shared, 0)

    def submit(task: tuple[str, int, int]) -> None:
        mkey, start, stop = task
        args = (mkey, options.get(mkey, {}), tokenizer, batches_file, start, stop)
        try:
            futures[pool.submit(_score_part, *args)] = task
        except BrokenProcessPool:  # the pool lost a worker already: score the part here
            collect(mkey, start, lambda m=mkey, a=start, b=stop: here(m, a, b))

    def release(mkey: str) -> None:
        for task in held.pop(mkey):
            submit(task)

    counts = {m: sum(1 for t in tasks if t[0] == m) for m, _, _ in tasks}
    shared_sent = False
    for task in tasks:  # whole metrics come first (see _tasks)
        if not shared_sent and counts[task[0]] > 1:
            for mkey, calls in shared.items():
                for call in calls:
                    with contextlib.suppress(BrokenProcessPool):
                        futures[pool.submit(call)] = mkey
                        waiting[mkey] += 1
            shared_sent = True
        if task[0] in held:
            held[task[0]].append(task)
        else:
            submit(task)
    for mkey in [m for m, n in waiting.items() if n == 0]:
        release(mkey)
    pending = set(futures)
    while pending:
        done, pending = wait(pending, return_when=FIRST_COMPLETED)
        for future in done:
            what = futures.pop(future)
            if isinstance(what, str):  # a piece of shared work
                with contextlib.suppress(Exception):
                    future.result()
                waiting[what] -= 1
                if waiting[what] == 0:
                    release(what)
                continue
            mkey, start, stop = what

            def values(future=future, mkey=mkey, start=start, stop=stop):
                try:
                    return future.result()
                except (BrokenProcessPool, OSError):  # the worker died: score the part here
                    return here(mkey, start, stop)

            try:
                collect(mkey, start, values)
            except CapevalError:
                pool.shutdown(wait=False, cancel_futures=True)
                raise
        pending = set(futures)  # what is still running, with the parts just released


#: In a worker: the batches file read last, and its batches
_WORKER_BATCHES: tuple[str, list[Batch]] | None = None


def _score_part(
    metric_key: str,
    options: Mapping[str, Any],
    tokenizer: str,
    batches_file: str,
    start: int,
    stop: int,
) -> dict[str, np.ndarray]:
    """Runs in a worker: :func:`_score_metric` on items ``start:stop`` of the batches in
    ``batches_file`` (read once per worker)."""
    global _WORKER_BATCHES
    if _WORKER_BATCHES is None or _WORKER_BATCHES[0] != batches_file:
        with open(batches_file, "rb") as fh:
            _WORKER_BATCHES = (batches_file, pickle.load(fh))
    parts = [b.part(start, stop) for b in _WORKER_BATCHES[1]]
    return _score_metric(metric_key, options, tokenizer, parts)


def _batches(
    jset: JudgmentSet, tokenizer: str, n_references: int, draws: int, seed: int
) -> tuple[list[Batch], np.ndarray]:
    """Tokenized batches of the unique items, and the map from items to unique items."""
    if jset.kind == "graded":
        pairs = [(it.candidate, it.references) for it in jset.items]  # type: ignore[union-attr]
        draw_refs = None
    else:
        # imported here: capeval_core.stats loads scipy.stats, which scoring workers never use
        from capeval_core.stats.pairwise import sample_references

        items = jset.items
        draws = _draws(jset, n_references, draws)
        sampled = sample_references([it.references for it in items], n_references, draws, seed)
        pairs = [(it.candidate_a, None) for it in items] + [  # type: ignore[union-attr]
            (it.candidate_b, None) for it in items
        ]  # type: ignore[union-attr]
        draw_refs = [refs + refs for refs in sampled]
    if draw_refs is None:
        unique: dict[tuple[str, tuple[str, ...]], int] = {}
        expand = np.array([unique.setdefault(p, len(unique)) for p in pairs])  # type: ignore[arg-type]
        cands = [c for c, _ in unique]
        refs = [r for _, r in unique]
        return [make_batch(cands, refs, tokenizer)], expand
    cands = [c for c, _ in pairs]
    batches = [make_batch(cands, refs, tokenizer) for refs in draw_refs]
    return batches, np.arange(len(cands))
