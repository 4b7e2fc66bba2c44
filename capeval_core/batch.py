"""The batch-scoring engine that systems comparison and judgment scoring share.

A metric scores one or more tokenized batches at once (:func:`score_metric`); :func:`score_all`
runs the metrics still to score in this process or, for large sets, in worker processes
(:func:`start_pool`, :func:`score_in_workers`), metrics whose items are independent cut into
parts (see :func:`plan_tasks`). Per-item values are
cached on disk in :func:`scores_cache_dir`, one ``.npz`` file per (content digest, metric
signature, caller's extra key) (:func:`cache_path`, :func:`load_entry`, :func:`save_entry`).

An item a metric could not score (see :meth:`~capeval_core.metrics.base.Metric.unscorable`)
has NaN values, and its reason under :data:`MISSING` (an array of strings beside the values,
empty where scored; present only when some item is missing), so a cached rerun keeps it.

What the items are (a judgment set's captions, each system's captions of the same images)
and how cache entries are keyed is the callers' business
(:mod:`capeval_core.judgments.scoring`, :mod:`capeval_core.systems`); this module imports
neither, so a reader of either path does not walk through the other.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import hashlib
import itertools
import multiprocessing
import os
import pickle
import tempfile
import time
import warnings
import weakref
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Any

import numpy as np

from capeval_core import progress
from capeval_core.errors import CapevalError, MachineWarning
from capeval_core.metrics import Batch, is_builtin, metric_class
from capeval_core.metrics.base import Metric, collector_paused
from capeval_core.resources import discard_damaged, worker_cap, write_cache_entry
from capeval_core.results import Signature
from capeval_core.tokenize import SIGNATURE_NAMES
from capeval_core.workers import WorkerPool

#: ``on_progress(done, total, label)``: the CLI draws a tqdm bar with it, the app an
#: ``st.progress``
Progress = Callable[[int, int, str], None]
#: the score cache's folder under ``cache_dir()``; named when only judgments used it, kept so
#: existing caches stay valid
CACHE_FOLDER = "judgment-scores"
#: overrides the folder of the score cache only (see :func:`scores_cache_dir`)
SCORES_CACHE_ENV = "CAPEVAL_SCORES_CACHE_DIR"


def scores_cache_dir() -> Path:
    """Where judgment and system scores (and their bootstrap intervals) are cached:
    ``$CAPEVAL_SCORES_CACHE_DIR`` if set, else ``cache_dir()/judgment-scores``. The separate
    override lets a bench start from an empty score cache while keeping one-time resources
    (METEOR's paraphrase index, IDF tables) in the main cache directory. A folder that
    cannot be made is no error: nothing is read from it, and writing to it is said once
    (:func:`~capeval_core.resources.write_cache_entry`)."""
    from capeval_core.resources import cache_root

    override = os.environ.get(SCORES_CACHE_ENV)
    folder = Path(override).expanduser() if override else cache_root() / CACHE_FOLDER
    with contextlib.suppress(OSError):
        folder.mkdir(parents=True, exist_ok=True)
    return folder


def cacheable(signature: str) -> bool:
    """Whether numbers of ``signature`` may be read from and written to the disk cache: those
    of capeval's own metrics with its own tokenizers. A tokenizer or a metric of your own is
    known by a name alone (a tokenizer may not take one of capeval's: ``get_tokenizer``), so
    a cache would give an edit of its code the numbers of the code before.

    >>> cacheable("rouge_l|beta:1.2|tok:ptb-corenlp-3.4.1|capeval:1")
    True
    >>> cacheable("rouge_l|beta:1.2|tok:mine|capeval:1")
    False
    >>> cacheable("mine|tok:ptb-corenlp-3.4.1|capeval:1")
    False
    """
    try:
        parsed = Signature.parse(signature)
    except ValueError:  # a metric of one's own whose name or options hold a "|"
        return False
    return parsed.tokenizer in SIGNATURE_NAMES and is_builtin(parsed.metric)


def cache_path(digest: str, signature: str, extra: str = "") -> Path:
    h = hashlib.sha256(f"{signature}|{extra}".encode()).hexdigest()[:20]
    return scores_cache_dir() / f"{digest[:24]}-{h}.npz"


def load_entry(
    path: Path, keys: Sequence[str], shape: tuple[int, ...] | None
) -> dict[str, np.ndarray] | None:
    """A cache entry: every key of ``keys`` present, each a float array (of ``shape``, unless
    it is None). An entry that fails these checks (a truncated or damaged archive, renamed
    keys, arrays of another length) is deleted with one :class:`DamagedCacheWarning` and
    recomputed."""
    try:
        with np.load(path, allow_pickle=False) as data:
            values = {k: data[k] for k in data.files}
    except (FileNotFoundError, NotADirectoryError):  # none there (or no folder to hold one)
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
    reasons = values.get(MISSING)
    if reasons is not None and (
        reasons.dtype.kind != "U" or (shape is not None and reasons.shape != shape)
    ):
        return _discard(
            path, f"{MISSING!r} is {reasons.dtype} of shape {reasons.shape}, expected text"
        )
    return values


def _discard(path: Path, reason: str) -> None:
    discard_damaged(path, "score cache entry", reason, "the scores are computed again")
    return None


def save_entry(path: Path, values: Mapping[str, np.ndarray]) -> None:
    """Cache ``values`` (written whole: a concurrent reader never sees half a file); a
    folder that cannot be written is said once and the run goes on."""
    write_cache_entry(path, lambda fh: np.savez(fh, **values))


#: prefix of the arrays of Metric.sufficient_statistics among a metric's values
STATISTICS_PREFIX = "statistics:"
#: among a metric's values, why each item was not scored ("" where it was), shaped as the
#: values; absent when every item was scored
MISSING = "missing:reason"
#: among a judgment set's cached values, the metric's notes on the set (a 1-D text array;
#: ``Metric.set_notes``), so a cached run says what a fresh one said
NOTES = "notes:text"


def missing_reasons(values: Mapping[str, np.ndarray]) -> np.ndarray | None:
    """The :data:`MISSING` array of a metric's values, or None when every item was scored."""
    reasons = values.get(MISSING)
    return reasons if reasons is not None and (reasons != "").any() else None


def drop_empty_reasons(values: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """``values`` without a :data:`MISSING` array that gives no reason (a system of a group
    whose other systems lost items): what a cache entry of items all scored holds."""
    if MISSING in values and missing_reasons(values) is None:
        del values[MISSING]
    return values


def merge_parts(parts: Sequence[Mapping[str, np.ndarray]]) -> dict[str, np.ndarray]:
    """The values of consecutive item ranges, joined along the item axis; a part in which
    every item was scored gets empty reasons where another part has some."""
    keys = list(dict.fromkeys(k for p in parts for k in p))
    if MISSING in keys:
        first = next(k for k in keys if k != MISSING)
        parts = [
            p if MISSING in p else {**p, MISSING: np.full(p[first].shape[:2], "")} for p in parts
        ]
    return {k: np.concatenate([p[k] for p in parts], axis=1) for k in keys}


def score_metric(
    metric_key: str, options: Mapping[str, Any], tokenizer: str, batches: Sequence[Batch]
) -> dict[str, np.ndarray]:
    """Every reported key of one metric over one or more batches: (batches, items); and,
    under ``STATISTICS_PREFIX``, the metric's sufficient statistics (batches, items, ...)."""
    metric = metric_class(metric_key)(tokenizer=tokenizer, **dict(options))
    out: dict[str, list[Any]] = {}
    statistics: list[dict[str, np.ndarray]] = []
    reasons: list[list[str]] = []
    # Only the values are kept: each result (with its evidence, hundreds of thousands of
    # objects) is freed before the garbage collector resumes, which would otherwise scan it
    # up to three times (0.3 s per 4,000 SPICE items).
    with collector_paused():
        for batch in batches:
            # left-out items and notes on the set: the callers report them, once, with their
            # ids, cached runs too
            result = metric.score_batch(batch, warn=False)
            for k in result.corpus:
                out.setdefault(k, []).append(result.segment_values(k))
            # what resampling needs beyond the values (BLEU's and METEOR's statistics), of
            # the scored items; NaN rows for the others
            statistics.append(statistics_rows(metric, result))
            reasons.append([s.missing or "" for s in result.segments])
            del result
        if _IN_WORKER:
            # What a worker holds now is resources and caches, alive until it exits: frozen,
            # the collector never rescans them (~2 s per worker over the 17,000-row bench).
            gc.freeze()
    # a batch whose items were all left out has no statistics: NaN rows, shaped as another's
    for name in dict.fromkeys(k for rows in statistics for k in rows):
        shape = next(rows[name].shape for rows in statistics if name in rows)
        out[STATISTICS_PREFIX + name] = [
            rows[name] if name in rows else np.full((len(batches[b]), *shape[1:]), np.nan)
            for b, rows in enumerate(statistics)
        ]
    values = {k: np.asarray(v, dtype=float) for k, v in out.items()}
    if any(r for row in reasons for r in row):
        values[MISSING] = np.asarray(reasons, dtype=str)
    return values


def statistics_rows(metric: Metric, result: Any) -> dict[str, np.ndarray]:
    """:meth:`~capeval_core.metrics.base.Metric.sufficient_statistics` of ``result``, one
    row per item: computed on the scored items, NaN rows for the missing ones."""
    if not result.missing:
        return metric.sufficient_statistics(result)
    scored = result.scored()
    rows = [s.index for s in scored.segments]
    out = {}
    for name, part in (metric.sufficient_statistics(scored) if rows else {}).items():
        part = np.asarray(part, dtype=float)
        full = np.full((len(result.segments), *part.shape[1:]), np.nan)
        full[rows] = part
        out[name] = full
    return out


def metric_signature(key: str, tokenizer: str, options: Mapping[str, Any]) -> str:
    """The signature string of a configured metric (what the cache is keyed by)."""
    cls = metric_class(key)
    return str(cls(tokenizer=tokenizer, **dict(options)).signature())


#: Fewest items in one part of a batch scored as its own task by a worker process.
MIN_PART = 1000


def plan_tasks(
    todo: Sequence[tuple[str, Path]],
    metrics: Mapping[str, Metric],
    n_items: int,
    workers: int,
) -> list[tuple[str, int, int]]:
    """``(metric, start, stop)`` item ranges to score. With workers, a metric whose items
    are independent is cut into up to ``2 * workers`` parts, so one slow metric (METEOR,
    SPICE) does not leave the other workers idle; the others stay whole.

    The order: whole metrics first (the longest tasks start early), then each cut metric's
    first part (its *leader*, see :func:`leading_part`), then the other parts. A leader pays
    its metric's one-time start-up in one worker (METEOR's paraphrase index built on a first
    run, compiled kernels loaded or, on a first run after installing, compiled) while the
    other workers get on with the rest; its later parts find it done instead of all waiting
    for one build, or all compiling the same kernels at once."""
    tasks: list[tuple[str, int, int]] = []
    for mkey, _ in todo:
        parts = 1
        if workers > 1 and metrics[mkey].segments_independent():
            parts = max(1, min(2 * workers, n_items // MIN_PART))
        bounds = np.linspace(0, n_items, parts + 1).round().astype(int).tolist()
        tasks.extend((mkey, a, b) for a, b in itertools.pairwise(bounds))
    whole = {m for m, a, b in tasks if (a, b) == (0, n_items)}
    return sorted(tasks, key=lambda t: 0 if t[0] in whole else 1 if t[1] == 0 else 2)


def leading_part(task: tuple[str, int, int], n_items: int) -> bool:
    """Whether ``task`` is the first part of a metric cut into parts (see :func:`plan_tasks`)."""
    return task[1] == 0 and task[2] != n_items


#: True in the worker processes of :func:`start_pool`
_IN_WORKER = False


def _worker_setup(channel: Any = None) -> None:
    """Runs first in each worker. The workers are the parallelism, so BLAS threads inside
    them would only compete for the same cores (I2CE's encoder ran 2x slower that way).
    What the worker's long work reports (:mod:`capeval_core.progress`) goes to ``channel``."""
    global _IN_WORKER
    from threadpoolctl import threadpool_limits

    from capeval_core import progress

    threadpool_limits(1)
    progress.worker_channel(channel)
    _IN_WORKER = True


def start_pool(workers: int) -> WorkerPool | None:
    """A pool of ``workers`` spawned processes, their start-up begun; None where processes
    cannot start, as in a daemonic process (a ``multiprocessing.Pool`` worker, a DataLoader's:
    it may not have children, and the first task failed with an AssertionError where the
    jars' subprocesses run). Leaving its ``with`` block by an exception (an error, Ctrl-C, a
    raise from an ``on_progress`` callback: how the app cancels a run) stops its workers at
    once (:class:`~capeval_core.workers.WorkerPool`). Never more workers than the available
    CPUs (:func:`~capeval_core.resources.worker_cap`), with a warning."""
    if multiprocessing.current_process().daemon:
        return None
    asked = workers
    workers, why = worker_cap(asked)
    if why:  # the caller of score_set, score_systems or score_judgments is told
        warnings.warn(f"workers={asked:,}: {why}", MachineWarning, stacklevel=3)
    if workers < 2:
        return None
    try:
        channel = multiprocessing.get_context("spawn").Queue()
        pool = WorkerPool(
            workers,
            initializer=_worker_setup,
            initargs=(channel,),
            executor=ProcessPoolExecutor,
        )
    except (OSError, RuntimeError, NotImplementedError):  # no process support here
        return None
    _CHANNELS[pool] = channel
    return pool.start()


#: each pool's queue of what its workers report (:mod:`capeval_core.progress`)
_CHANNELS: weakref.WeakKeyDictionary[WorkerPool, Any] = weakref.WeakKeyDictionary()
#: how often (seconds) a caller waiting on workers passes on what they report
REPORT_EVERY = 0.5


def score_all(
    todo: Sequence[tuple[str, Path]],
    metrics: Mapping[str, Metric],
    options: Mapping[str, Mapping[str, Any]],
    tokenizer: str,
    batches: Sequence[Batch],
    finish: Callable[[str, Path, dict[str, np.ndarray]], None],
    skipped: dict[str, str],
    on_error: str,
    *,
    pool: WorkerPool | None,
    workers: int,
    status: Callable[[str], None],
    unit: str = "items",
) -> None:
    """Score every metric of ``todo`` (``(metric, cache path)`` pairs) over ``batches`` and
    hand each metric's values to ``finish(metric, path, values)``: in the workers of ``pool``
    where the set is large enough to cut (see :func:`plan_tasks`), else here, one metric after
    another. ``status(label)`` names what is running (the metric, or the metric and how many
    ``unit`` of its parts are done). A metric that raises a :class:`CapevalError` is recorded
    in ``skipped`` under ``on_error="skip"``, else the error propagates."""
    n_items = len(batches[0])
    if pool is not None:  # the workers it has (start_pool caps those asked)
        workers = pool.workers
    tasks = plan_tasks(todo, metrics, n_items, workers)
    if pool is not None and len(tasks) > 1 and n_items >= MIN_PART:
        status(f"scoring in {workers} worker processes")
        score_in_workers(
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
            status,
            unit,
        )
        return
    for mkey, path in todo:
        status(mkey)
        try:
            # long work inside the metric (a long caption's parse) says how far it is
            with progress.listening(lambda label, m=mkey: status(f"{m}: {label}")):
                values = score_metric(mkey, options.get(mkey, {}), tokenizer, batches)
        except CapevalError as exc:
            if on_error != "skip":
                raise
            skipped[mkey] = str(exc)
            continue
        finish(mkey, path, values)


def score_in_workers(
    pool: WorkerPool,
    tasks: Sequence[tuple[str, int, int]],
    todo: Sequence[tuple[str, Path]],
    metrics: Mapping[str, Metric],
    options: Mapping[str, Mapping[str, Any]],
    tokenizer: str,
    batches: Sequence[Batch],
    finish: Callable[[str, Path, dict[str, np.ndarray]], None],
    skipped: dict[str, str],
    on_error: str,
    status: Callable[[str], None] | None = None,
    unit: str = "items",
) -> None:
    """Score ``tasks`` in the worker processes of ``pool``; a metric is finished when all its
    parts are back. A part whose worker died is scored in this process instead.

    ``status(label)`` is called as each part but a metric's last comes back ("meteor: 2,500
    of 5,000 images") and as each piece of shared work does ("spice: parsing new captions, 3
    of 16"), so a progress bar moves while METEOR or SPICE run (issue #33: it sat on one
    label for 80 s). While the workers are busy it is called again with the last label at
    least every :data:`TICK` seconds: a caller stops the run by raising from it (the app's
    Cancel button, a closed browser tab), and the workers then stop at once
    (:meth:`~capeval_core.workers.WorkerPool.stop`).
    """
    said = [f"scoring in {pool.workers} worker processes"]

    def report(label: str) -> None:
        said[0] = label
        if status is not None:
            status(label)

    paths = dict(todo)
    parts: dict[str, dict[int, dict[str, np.ndarray]]] = {m: {} for m in paths}
    expected = {m: sum(1 for t in tasks if t[0] == m) for m in paths}
    sizes = {(m, a): b - a for m, a, b in tasks}
    n_items = max((b for _, _, b in tasks), default=0)

    def task(mkey: str, start: int, stop: int) -> tuple[Any, ...]:
        return (mkey, options.get(mkey, {}), tokenizer, [b.part(start, stop) for b in batches])

    def here(mkey: str, start: int, stop: int) -> dict[str, np.ndarray]:
        return score_metric(*task(mkey, start, stop))

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
            merged = merge_parts([parts[mkey][k] for k in sorted(parts[mkey])])
            finish(mkey, paths[mkey], merged)
        else:
            report(f"{mkey}: {sum(sizes[mkey, a] for a in parts[mkey]):,} of {n_items:,} {unit}")

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
        # worked out in _collect_workers once the first tasks are out (SPICE's look-up of
        # which captions are new takes the parent a second while the workers would wait)
        shared = functools.partial(_shared_work, expected, metrics, batches)
        labels = {m: metrics[m].shared_work_label for m in expected}
        sharing = {m for m in expected if _may_share(metrics[m])}
        _collect_workers(
            pool,
            tasks,
            options,
            tokenizer,
            name,
            collect,
            here,
            shared,
            labels,
            sharing,
            report,
            lambda: report(said[0]),
        )
    finally:
        Path(name).unlink(missing_ok=True)


def _may_share(metric: Metric) -> bool:
    """Whether ``metric`` may have :meth:`~capeval_core.metrics.base.Metric.shared_work`
    (its class defines any)."""
    return type(metric).shared_work is not Metric.shared_work


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


#: longest wait, in seconds, between two calls of a status callback while workers are busy
TICK = 1.0


def _collect_workers(
    pool: WorkerPool,
    tasks: Sequence[tuple[str, int, int]],
    options: Mapping[str, Mapping[str, Any]],
    tokenizer: str,
    batches_file: str,
    collect: Callable[[str, int, Callable[[], dict[str, np.ndarray]]], None],
    here: Callable[[str, int, int], dict[str, np.ndarray]],
    shared: Callable[[], Mapping[str, Sequence[Callable[[], Any]]]],
    labels: Mapping[str, str],
    sharing: set[str],
    report: Callable[[str], None],
    tick: Callable[[], None] = lambda: None,
) -> None:
    """Submit the tasks, then collect the parts as they finish (scored here if lost), calling
    ``tick()`` after every :data:`TICK` seconds without news. Whatever ends the collection
    early (an error, or an exception raised by ``report`` or ``tick`` to cancel the run)
    stops the workers at once before it propagates.

    Whole metrics go first, then the first part of each metric without shared work (see
    :func:`plan_tasks`), then the shared work (``shared()``, worked out meanwhile; only the
    metrics of ``sharing`` may have some), then the other parts; the parts of a metric with
    shared work are held back until all of it is done (it fills the cache they read). Shared
    work that fails only costs time: the parts then do it themselves. ``report`` names each
    finished piece of shared work (SPICE's parsing takes most of a cold run).
    """
    futures: dict[Future, tuple[str, int, int] | str] = {}
    held: dict[str, list[tuple[str, int, int]]] = {}
    waiting: dict[str, int] = {}
    finished: dict[str, int] = {}

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
    quiet = [time.monotonic()]  # when the caller last heard something

    def tell(label: str) -> None:
        quiet[0] = time.monotonic()
        report(label)

    n_items = max((b for _, _, b in tasks), default=0)
    # whole metrics and the leaders of the metrics without shared work first (see
    # plan_tasks: a leader starts its metric's one-time start-up in one worker), then the
    # shared work, then the other parts
    first = [
        t for t in tasks if counts[t[0]] == 1 or (leading_part(t, n_items) and t[0] not in sharing)
    ]
    try:
        for task in first:
            submit(task)
        work = shared()  # the workers have the first tasks meanwhile
        for mkey, calls in work.items():
            held[mkey] = []
            waiting[mkey] = finished[mkey] = 0
            for call in calls:
                with contextlib.suppress(BrokenProcessPool):
                    futures[pool.submit(_shared_part, mkey, call)] = mkey
                    waiting[mkey] += 1
        for task in tasks:
            if task in first:
                continue
            if task[0] in held:
                held[task[0]].append(task)
            else:
                submit(task)
        for mkey in [m for m, n in waiting.items() if n == 0]:
            release(mkey)
        pending = set(futures)
        channel = _CHANNELS.get(pool)
        while pending:
            done, pending = wait(pending, timeout=REPORT_EVERY, return_when=FIRST_COMPLETED)
            if channel is not None:  # what the workers' long work says (a long caption's parse)
                progress.drain(channel, tell)
            if not done and time.monotonic() - quiet[0] >= TICK:
                quiet[0] = time.monotonic()
                tick()
            for future in done:
                what = futures.pop(future)
                if isinstance(what, str):  # a piece of shared work
                    with contextlib.suppress(Exception):
                        future.result()
                    waiting[what] -= 1
                    finished[what] += 1
                    done_n, total = finished[what], finished[what] + waiting[what]
                    tell(f"{what}: {labels[what]}, {done_n} of {total}")
                    if waiting[what] == 0:
                        release(what)
                    continue
                mkey, start, stop = what

                def values(future=future, mkey=mkey, start=start, stop=stop):
                    try:
                        return future.result()
                    except (BrokenProcessPool, OSError):  # the worker died: score it here
                        return here(mkey, start, stop)

                collect(mkey, start, values)
            pending = set(futures)  # what is still running, with the parts just released
    except BaseException:
        # nobody will read the parts still queued or running: their workers stop now
        pool.stop(now=True)
        raise


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
    """Runs in a worker: :func:`score_metric` on items ``start:stop`` of the batches in
    ``batches_file`` (read once per worker)."""
    global _WORKER_BATCHES
    if _WORKER_BATCHES is None or _WORKER_BATCHES[0] != batches_file:
        with open(batches_file, "rb") as fh:
            _WORKER_BATCHES = (batches_file, pickle.load(fh))
    parts = [b.part(start, stop) for b in _WORKER_BATCHES[1]]
    with progress.listening(lambda label: progress.to_parent(f"{metric_key}: {label}")):
        return score_metric(metric_key, options, tokenizer, parts)


def _shared_part(metric_key: str, call: Callable[[], Any]) -> Any:
    """Runs in a worker: a piece of a metric's shared work, what it reports named after it."""
    with progress.listening(lambda label: progress.to_parent(f"{metric_key}: {label}")):
        return call()
