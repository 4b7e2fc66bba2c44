"""Shortcuts through the registry: ``score`` for one metric, ``score_many`` for several,
``score_caption`` for one caption with several, telling why a metric could not score."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from capeval_core.errors import CapevalError, InputError, MissingResourceError, OptionError
from capeval_core.metrics import (
    METRICS,
    check_reported_key,
    check_unscored_options,
    make_batch,
    metric_class,
)
from capeval_core.results import MetricResult
from capeval_core.tokenize import Tokenizer


def score(
    key: str,
    candidates: Sequence[str],
    references: Sequence[Sequence[str] | str],
    **options: Any,
) -> MetricResult:
    """Score with one metric by key; options go to the metric (``tokenizer`` included).
    ``key`` is a reported key (``bleu_2``) or a metric's name (``bleu``: its main value).

    The value below is also what pycocoevalcap 1.2 gives.

    >>> score("bleu_1", ["a cat sits on a mat"], [["a cat is on a mat"]]).value
    0.8333333330555557
    """
    check_reported_key(key)
    return _selected(metric_class(key)(**options).score(candidates, references), key)


def _selected(result: MetricResult, key: str) -> MetricResult:
    """``result`` viewed through ``key`` (``bleu_1`` of a BLEU result)."""
    return result if result.key == key or key not in result.corpus else result.select(key)


def score_many(
    keys: Sequence[str],
    candidates: Sequence[str],
    references: Sequence[Sequence[str] | str],
    *,
    tokenizer: str | Tokenizer = "ptb",
    options: Mapping[str, Mapping[str, Any]] | None = None,
    warn: bool = True,
    errors: dict[str, CapevalError] | None = None,
) -> dict[str, MetricResult]:
    """Score with several metrics, tokenizing once; one result per requested key.

    ``options`` maps a metric key (``"cider_d"``) to its options. Keys reported by the same
    metric (``bleu_1`` … ``bleu_4``) share one computation. ``warn=False`` leaves degenerate-
    input notes in ``MetricResult.warnings`` only. When an ``errors`` dict is given, a metric
    that fails with a :class:`CapevalError` (e.g. a missing resource) is recorded there under
    each requested key and left out of the result, so the other metrics still score.

    >>> r = score_many(["bleu_1", "rouge_l"], ["a cat sits on a mat", "a dog runs"],
    ...                [["a cat is on a mat"], ["a dog is running", "a dog runs fast"]])
    >>> list(r), round(r["bleu_1"].value, 4), [round(v, 4) for v in r["rouge_l"].segment_values()]
    (['bleu_1', 'rouge_l'], 0.7954, [0.8333, 0.8356])
    """
    if isinstance(keys, str):
        raise OptionError(f"`keys` must be a list of metric keys, not one string ({keys!r})")
    keys = list(keys)  # a generator's keys were used up by the check below: nothing scored
    if errors is not None and not isinstance(errors, dict):
        raise OptionError(
            f"`errors` must be a dict to collect them in (got {type(errors).__name__})"
        )
    options = {} if options is None else options
    if not isinstance(options, Mapping) or not all(
        isinstance(v, Mapping) for v in options.values()
    ):
        raise OptionError(
            "`options` must map a metric key to a dict of its options, "
            "e.g. {'cider_d': {'idf': 'coco-val2014'}}"
        )
    for key in options:
        if key not in METRICS:
            raise OptionError(
                f"`options` key {key!r} is not a metric key; options are given per metric: "
                + ", ".join(METRICS)
            )
        if "tokenizer" in options[key]:  # the batch is tokenized once, for every metric
            raise OptionError(
                f"`options[{key!r}]` names a tokenizer: give it once, as "
                "score_many(..., tokenizer=...)"
            )
    for key in keys:
        check_reported_key(key)
    check_unscored_options(keys, options)
    batch = make_batch(candidates, references, tokenizer)
    by_metric: dict[str, MetricResult | CapevalError] = {}
    out: dict[str, MetricResult] = {}
    for key in keys:
        cls = metric_class(key)
        if cls.key not in by_metric:
            try:
                metric = cls(tokenizer=tokenizer, **dict(options.get(cls.key, {})))
                by_metric[cls.key] = metric.score_batch(batch, warn=warn)
            except CapevalError as exc:
                if errors is None:
                    raise
                by_metric[cls.key] = exc
        result = by_metric[cls.key]
        if isinstance(result, CapevalError):
            errors[key] = result  # type: ignore[index]
        else:
            out[key] = _selected(result, key)
    return out


@dataclass(frozen=True)
class CaptionScores:
    """What :func:`score_caption` returns: the results, and why any metric is missing.

    ``errors`` maps a metric key (``"wmd"``, not ``"bleu_2"``) to the message of the
    :class:`CapevalError` that stopped it (e.g. a missing resource), or to why it could not
    score this caption (a limit, a caption its parser refuses); its keys are absent from
    ``results`` and the other metrics still score. ``missing`` holds the keys of
    ``errors`` whose cause was a missing resource.
    """

    results: dict[str, MetricResult]
    errors: dict[str, str]
    missing: frozenset[str] = frozenset()


def score_caption(
    keys: Sequence[str],
    candidate: str,
    references: Sequence[str],
    *,
    tokenizer: str | Tokenizer = "ptb",
    options: Mapping[str, Mapping[str, Any]] | None = None,
) -> CaptionScores:
    """Score one candidate against its references with every key, in one :func:`score_many`
    call; a metric that fails with a :class:`CapevalError` is named in ``errors`` while the
    others score. Degenerate-input notes (CIDEr-D on one image) stay in
    ``MetricResult.warnings`` instead of being printed.

    >>> s = score_caption(["bleu_1", "rouge_l"], "a cat sits on a mat", ["a cat is on a mat"])
    >>> sorted(s.results), s.errors, s.missing
    (['bleu_1', 'rouge_l'], {}, frozenset())
    """
    if not isinstance(references, str) and not len(references):  # not "references[0]"
        raise InputError("`references` is empty: give at least one reference caption")
    errors: dict[str, CapevalError] = {}
    results = score_many(
        keys,
        [candidate],
        [references],
        tokenizer=tokenizer,
        options=options,
        warn=False,
        errors=errors,
    )
    messages = {metric_class(k).key: str(exc) for k, exc in errors.items()}
    for key, result in list(results.items()):  # the one item left out: nothing to show
        if result.missing:
            messages[metric_class(key).key] = (
                f"{metric_class(key).name} could not score this caption: {result.missing[0]}"
            )
            del results[key]
    missing = frozenset(
        metric_class(k).key for k, exc in errors.items() if isinstance(exc, MissingResourceError)
    )
    return CaptionScores(results, messages, missing)
