"""Batch scoring of a JudgmentSet with any subset of the registered metrics.

Results are cached on disk by :mod:`capeval_core.batch` (the engine shared with systems
comparison), one ``.npz`` file per (set content digest, metric signature[, reference-sampling
knobs]), so reopening a set is instant. ``workers > 1`` scores in that many worker processes,
metrics whose items are independent cut into parts (see :func:`~capeval_core.batch.plan_tasks`).

Rows with the same candidate and references (e.g. Flickr8k-Expert's three expert rows per
caption) are scored once, so corpus statistics such as CIDEr-D's document frequencies count
each judged caption once and every preset of a dataset gets the same metric values.
Pairwise sets are scored per draw of sampled references (PASCAL-50S protocol: 5 references,
5 draws), candidates a and b of all pairs in one batch per draw.

An item a metric cannot score (a limit the user set, a caption its parser refuses; see
:meth:`~capeval_core.metrics.base.Metric.unscorable`) has NaN values and its reason in
:attr:`JudgmentScores.missing`; every other item and metric is scored. Statistics that compare
metrics (correlations, Williams tests, the combined metric, pairwise accuracy) take the items
every compared metric scored: :func:`on_common_items`, which :func:`left_out_lines` reports.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from capeval_core import batch
from capeval_core.batch import Progress
from capeval_core.errors import DegenerateCorpusWarning
from capeval_core.judgments.base import JudgmentSet
from capeval_core.metrics import Batch, check_reported_key, configure, make_batch, metric_class
from capeval_core.results import left_out_line


@dataclass(frozen=True)
class JudgmentScores:
    """Per-item metric values for a JudgmentSet.

    Graded sets: ``values[key]`` has one value per item. Pairwise sets: ``values_a[key]`` and
    ``values_b[key]`` have shape (draws, pairs). ``missing[key]`` maps the items (pairs) the
    metric could not score to the reason (only keys with some); their values are NaN.
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
    missing: Mapping[str, Mapping[int, str]] = field(default_factory=dict)
    #: ``notes[key]``: a metric's notes on the set (CIDEr-D's IDF when every item has the
    #: same references), cached runs too; only keys with some
    notes: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    def left_out(self) -> dict[int, dict[str, str]]:
        """Every item (pair) some metric could not score: ``{index: {key: reason}}``."""
        out: dict[int, dict[str, str]] = {}
        for key, items in self.missing.items():
            for i, why in items.items():
                out.setdefault(i, {})[key] = why
        return dict(sorted(out.items()))


def entry_path(jset: JudgmentSet, signature: str, sampling: Mapping[str, Any]) -> Path:
    """Where a metric's values of ``jset`` are cached (``sampling``: a pairwise set's
    ``n_references``, ``draws`` and ``seed``; empty for graded sets). Entries of the second
    kind hold the metric's notes on the set (``batch.NOTES``); older ones, which may lack
    them, are never read."""
    extra = json.dumps({**sampling, "entry": 2}, sort_keys=True)
    return batch.cache_path(jset.items_digest, signature, extra)


def _report_key(key: str) -> str:
    return metric_class(key).value_key(key)


def _shape(jset: JudgmentSet, n_references: int, draws: int) -> tuple[int, int]:
    """Shape of each cached array: (1, items) for graded sets, (draws, 2 x pairs) for
    pairwise ones (one draw when no pair has more references than are sampled)."""
    if jset.kind == "graded":
        return 1, len(jset)
    return _draws(jset, n_references, draws), 2 * len(jset)


def _draws(jset: JudgmentSet, n_references: int, draws: int) -> int:
    """Draws of sampled references: one where every draw would be identical."""
    return 1 if max(len(it.references) for it in jset.items) <= n_references else draws


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
    sets only. A metric's notes on the set (``notes``) are also raised as
    :class:`~capeval_core.errors.DegenerateCorpusWarning`, from the cache too.
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
    for key in keys:  # spice_object was scored as SPICE's own value, under its name
        check_reported_key(key)
    options = options or {}
    configured = configure(keys, tokenizer, options, on_error)
    groups = configured.groups
    progress = on_progress or (lambda done, total, label: None)
    total = len(groups)
    pairwise = jset.kind == "pairwise"
    sampling = {"n_references": n_references, "draws": draws, "seed": seed} if pairwise else {}

    results: dict[str, dict[str, np.ndarray]] = {}
    metrics, signatures, skipped = configured.metrics, configured.signatures, configured.skipped
    cached: dict[str, bool] = {}
    caching: dict[str, bool] = {}  # not a tokenizer of your own's (batch.cacheable)
    todo: list[tuple[str, Path]] = []
    for mkey in metrics:
        path = entry_path(jset, signatures[mkey], sampling)
        shape = _shape(jset, n_references, draws)
        caching[mkey] = use_cache and batch.cacheable(signatures[mkey])
        keys_read = metric_class(mkey).report_keys()
        hit = batch.load_entry(path, keys_read, shape) if caching[mkey] else None
        if hit is not None:
            results[mkey], cached[mkey] = hit, True
        else:
            todo.append((mkey, path))
    done = len(results) + len(skipped)
    progress(done, total, "from cache" if done else "starting")
    if todo:
        # Workers (fresh interpreters loading resources) only pay on large sets; started
        # before tokenizing, so their interpreters start up meanwhile.
        pool = batch.start_pool(workers) if workers > 1 and len(jset) >= batch.MIN_PART else None
        with pool or contextlib.nullcontext():
            progress(done, total, "tokenizing")
            batches, expand = _batches(jset, tokenizer, n_references, draws, seed)

            def finish(mkey: str, path: Path, values: dict[str, np.ndarray]) -> None:
                nonlocal done
                values = {k: v[:, expand] for k, v in values.items()}
                notes = [n for b in batches for n in metrics[mkey].set_notes(b)]
                values[batch.NOTES] = np.asarray(list(dict.fromkeys(notes)), dtype=str)
                if caching[mkey]:
                    batch.save_entry(path, values)
                results[mkey], cached[mkey] = values, False
                done += 1
                progress(done, total, f"{mkey} done")  # not read as still running

            batch.score_all(
                todo,
                metrics,
                options,
                tokenizer,
                batches,
                finish,
                skipped,
                on_error,
                pool=pool,
                workers=workers,
                status=lambda label: progress(done, total, label),
                unit="items",
            )

    out_keys = tuple(k for k in keys if metric_class(k).key in results)
    n = len(jset)
    vals, va, vb = {}, {}, {}
    missing = {}
    for key in out_keys:
        arr = results[metric_class(key).key][_report_key(key)]
        if pairwise:
            va[key], vb[key] = arr[:, :n], arr[:, n:]
        else:
            vals[key] = arr[0]
        reasons = batch.missing_reasons(results[metric_class(key).key])
        if reasons is not None:
            missing[key] = _reasons(reasons, n if pairwise else None)
    notes = {}
    for key in out_keys:
        said = results[metric_class(key).key].get(batch.NOTES)
        if said is not None and said.size:
            notes[key] = tuple(str(n) for n in said)
    for note in dict.fromkeys(n for said in notes.values() for n in said):
        warnings.warn(note, DegenerateCorpusWarning, stacklevel=2)
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
        missing,
        notes,
    )


def _reasons(reasons: np.ndarray, pairs: int | None) -> dict[int, str]:
    """``{item: reason}`` from a metric's reasons array, (1, items) for graded sets; for
    pairwise ones (draws, 2 x ``pairs``), a pair is left out when either caption is, in any
    draw (the first reason found is given; "caption a" or "b" names a refused candidate)."""
    if pairs is None:
        return {i: str(r) for i, r in enumerate(reasons[0]) if r}
    out: dict[int, str] = {}
    for i in range(pairs):
        for side, column in (("a", i), ("b", pairs + i)):
            found = [str(r) for r in reasons[:, column] if r]
            if found and i not in out:  # references are the pair's: only the candidate is named
                why = found[0]
                out[i] = f"caption {side}: {why.removeprefix('candidate: ')}"
    return out


def on_common_items(
    jset: JudgmentSet, scores: JudgmentScores
) -> tuple[JudgmentSet, JudgmentScores]:
    """The set and its scores on the items every metric of ``scores`` scored (the same
    objects when no item was left out), so correlations, Williams tests, the combined metric
    and pairwise accuracy compare metrics on the same items. The restricted set has its own
    content digest; what was left out is in :func:`left_out_lines` of the originals, and its
    summary (:meth:`~capeval_core.judgments.base.JudgmentSet.describe`) says how many items
    it shows of the file as read, whose counts and blank cells it keeps."""
    gone = scores.left_out()
    if not gone:
        return jset, scores
    kept = [i for i in range(len(jset)) if i not in gone]
    external = tuple(
        dataclasses.replace(e, values=np.asarray(e.values)[..., kept]) for e in jset.external
    )
    subset = dataclasses.replace(
        jset,
        items=tuple(jset.items[i] for i in kept),
        external=external,
        join_keys=tuple(jset.join_keys[i] for i in kept) if jset.join_keys else (),
        left_out=jset.left_out + len(gone),
        content_digest="",
        items_digest="",
    )
    return subset, dataclasses.replace(
        scores,
        digest=subset.content_digest,
        values={k: v[kept] for k, v in scores.values.items()},
        values_a={k: v[:, kept] for k, v in scores.values_a.items()},
        values_b={k: v[:, kept] for k, v in scores.values_b.items()},
        missing={},
    )


def left_out_lines(jset: JudgmentSet, scores: JudgmentScores, shown: int = 5) -> list[str]:
    """What each metric could not score (one line per key, with item ids and reasons), then
    how many items the statistics that compare metrics use; empty when every item was
    scored."""
    if not scores.missing:
        return []
    unit = "items" if jset.kind == "graded" else "pairs"
    ids = [it.id for it in jset.items]
    lines = [
        left_out_line(
            metric_class(key).label(key),
            {ids[i]: why for i, why in sorted(items.items())},
            len(jset),
            unit,
            shown,
        )
        for key, items in scores.missing.items()
    ]
    n = len(jset) - len(scores.left_out())
    lines.append(
        f"correlations, Williams tests, the combined metric and accuracies use the {n:,} "
        f"{unit} every metric scored"
    )
    return lines


def judgments_left_out_json(jset: JudgmentSet, scores: JudgmentScores) -> dict[str, Any]:
    """What the metrics left out, as ``capeval correlate`` writes it: ``{"n", "ids",
    "n_used", "by_metric"}``, ``by_metric[key]`` a list of ``{"id", "reason"}`` (``n`` 0 and
    empty lists when every item was scored)."""
    gone = scores.left_out()
    ids = [it.id for it in jset.items]
    return {
        "n": len(gone),
        "ids": [ids[i] for i in gone],
        "n_used": len(jset) - len(gone),
        "by_metric": {
            key: [{"id": ids[i], "reason": why} for i, why in sorted(items.items())]
            for key, items in scores.missing.items()
        },
    }


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
        inner.missing,
        inner.notes,
    )


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
