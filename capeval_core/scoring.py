"""One set of captions scored with several metrics, in worker processes when it is large: the
call behind ``capeval score`` and the pycocoevalcap drop-in's ``COCOEvalCap.evaluate``.

A small set is scored here, one metric after another, each result with its evidence. From
:data:`~capeval_core.batch.MIN_PART` items on (and with two or more available CPUs) the set
goes to :func:`capeval_core.batch.score_all`, the engine that ``capeval compare``, the Systems
page and judgment scoring share: the workers start while the captions are tokenized, METEOR
and SPICE are cut into parts, SPICE's new captions are parsed once in pieces, and every metric
comes back as per-item values and sufficient statistics, from which the corpus values are
recomputed exactly as the metric aggregates them (the registry's contract test holds them to
the metric's own corpus value, bit for bit). Results scored in workers carry no evidence
(``SegmentScore.details`` is None).
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from capeval_core import batch as engine
from capeval_core import progress as long_work
from capeval_core.errors import ItemsLeftOutWarning
from capeval_core.metrics import Batch, configure, make_batch, metric_class
from capeval_core.metrics.base import Metric
from capeval_core.resources import available_cpus
from capeval_core.results import MetricResult, SegmentScore, left_out_line
from capeval_core.workers import main_left_alone

#: ``on_progress(done, total, label)``: ``total`` steps are tokenizing and each metric
Progress = Callable[[int, int, str], None]


@dataclass(frozen=True)
class ScoredSet:
    """What :func:`score_set` returns.

    ``results`` holds one result per requested key; ``statistics`` each metric's
    :meth:`~capeval_core.metrics.base.Metric.sufficient_statistics` (by metric key: ``bleu``,
    ``spice``, ...), one row per item; ``batch`` the tokenized captions; ``workers`` how many
    worker processes scored (0: all in this process).
    """

    results: dict[str, MetricResult]
    statistics: dict[str, dict[str, np.ndarray]]
    batch: Batch
    workers: int


def _portable(options: Mapping[str, Any]) -> bool:
    """Whether a metric's options travel to a worker process as they are (text, numbers):
    loaded word vectors are scored here rather than pickled into every task."""
    simple = (str, int, float, bool, type(None))
    return all(
        isinstance(v, simple) or (isinstance(v, tuple) and all(isinstance(x, simple) for x in v))
        for v in options.values()
    )


def score_set(
    candidates: Sequence[str],
    references: Sequence[Sequence[str] | str],
    keys: Sequence[str],
    *,
    tokenizer: str = "ptb",
    options: Mapping[str, Mapping[str, Any]] | None = None,
    workers: int | None = None,
    on_progress: Progress | None = None,
    on_batch: Callable[[Batch], None] | None = None,
) -> ScoredSet:
    """Score ``candidates`` against ``references`` with every metric behind ``keys``,
    tokenizing once (references in one call, candidates in another, as coco-caption).

    ``options`` maps a metric key to its options (``{"cider_d": {"idf": "coco-val2014"}}``).
    ``workers``: worker processes for a large set (default: one per available CPU, and never
    more, with a warning; 0 or 1: this process only). ``on_batch`` sees the tokenized
    captions before any metric runs (the command line says how many captions SPICE will
    parse). A metric that fails raises its :class:`CapevalError`.

    >>> s = score_set(["a cat sits on a mat"], [["a cat is on a mat"]], ["bleu_1", "rouge_l"])
    >>> round(s.results["bleu_1"].value, 6), s.workers
    (0.833333, 0)
    """
    options = options or {}
    configured = configure(keys, tokenizer, options)
    metrics = configured.metrics
    progress = on_progress or (lambda done, total, label: None)
    total = len(metrics) + 1
    workers = available_cpus() if workers is None else max(0, workers)
    portable = [m for m in metrics if _portable(options.get(m, {}))]
    parallel = workers > 1 and len(candidates) >= engine.MIN_PART and bool(portable)
    with main_left_alone():
        pool = engine.start_pool(workers) if parallel else None  # they start while we tokenize
        values: dict[str, MetricResult] = {}
        statistics: dict[str, dict[str, np.ndarray]] = {}
        with pool or contextlib.nullcontext():
            progress(0, total, "tokenizing")
            batch = make_batch(candidates, references, tokenizer)
            if on_batch is not None:
                on_batch(batch)
            done = 1
            progress(done, total, "tokenized")
            here = [m for m in metrics if pool is None or m not in portable]
            if pool is not None:

                def finish(mkey: str, _path: Path, got: dict[str, np.ndarray]) -> None:
                    nonlocal done
                    values[mkey], statistics[mkey] = _from_values(metrics[mkey], got, batch)
                    if left := values[mkey].missing:  # said here, as score_batch says it
                        line = left_out_line(metrics[mkey].name, left, len(batch))
                        warnings.warn(line, ItemsLeftOutWarning, stacklevel=2)
                    done += 1
                    progress(done, total, f"{mkey} done")

                engine.score_all(
                    [(m, Path(m)) for m in portable],
                    metrics,
                    options,
                    tokenizer,
                    [batch],
                    finish,
                    {},
                    "raise",
                    pool=pool,
                    workers=workers,
                    status=lambda label: progress(done, total, label),
                )
            for mkey in here:
                progress(done, total, mkey)
                metric = metrics[mkey]
                # long work inside the metric (a long caption's parse) says how far it is
                with long_work.listening(
                    lambda label, m=mkey, d=done: progress(d, total, f"{m}: {label}")
                ):
                    result = metric.score_batch(batch)
                # the engine's rows (one function, so both paths keep them alike): the
                # scored items' statistics, NaN rows for the items left out
                values[mkey], statistics[mkey] = result, engine.statistics_rows(metric, result)
                done += 1
                progress(done, total, f"{mkey} done")
    results = {}
    for key in keys:
        result = values[metric_class(key).key]
        results[key] = result.select(key) if key in result.corpus else result
    return ScoredSet(results, statistics, batch, pool.workers if pool is not None else 0)


def _from_values(
    metric: Metric, got: Mapping[str, np.ndarray], batch: Batch
) -> tuple[MetricResult, dict[str, np.ndarray]]:
    """A result (without evidence) and the sufficient statistics from what the engine hands
    back: values and statistics of one batch, ``(1, items, ...)`` arrays, and the reasons of
    the items the metric left out. The corpus value is over the items it scored, as
    :meth:`~capeval_core.metrics.base.Metric.score_batch` takes it."""
    prefix = engine.STATISTICS_PREFIX
    reasons = engine.missing_reasons(got)
    why = [str(r) or None for r in reasons[0]] if reasons is not None else [None] * len(batch)
    items = {
        k: np.asarray(v[0], dtype=float)
        for k, v in got.items()
        if not k.startswith(prefix) and k != engine.MISSING
    }
    stats = {k[len(prefix) :]: v[0] for k, v in got.items() if k.startswith(prefix)}
    report = metric.report_keys()
    kept = [i for i, r in enumerate(why) if r is None]
    if len(kept) == len(batch):
        point = metric.item_statistics(items, stats, batch).point()
    elif kept:
        point = metric.item_statistics(
            {k: v[kept] for k, v in items.items()},
            {k: v[kept] for k, v in stats.items()},
            batch.subset(kept),
        ).point()
    else:
        point = dict.fromkeys(report, float("nan"))
    corpus = {k: point[k] for k in report}
    rows = {k: items[k].tolist() for k in report}
    segments = tuple(
        SegmentScore(i, metric.primary_key(), {k: rows[k][i] for k in report}, None, why[i])
        for i in range(len(batch))
    )
    return MetricResult(metric.primary_key(), corpus, segments, metric.signature()), stats
