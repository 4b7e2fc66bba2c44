"""The metric registry: the app, the CLI and the contract tests loop over it.

Adding a metric = one module, one line in ``_METRICS``, one card, one test module, one view.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from capeval_core.errors import CapevalError, OptionError, UnknownKeyError
from capeval_core.metrics.base import Batch, Metric, MetricConfig, make_batch
from capeval_core.metrics.bleu import Bleu
from capeval_core.metrics.cider import CiderD
from capeval_core.metrics.i2ce import I2CE
from capeval_core.metrics.mean import Mean
from capeval_core.metrics.meteor import Meteor
from capeval_core.metrics.rouge import RougeL
from capeval_core.metrics.spice import Spice
from capeval_core.metrics.wmd import WMD

_METRICS: tuple[type[Metric], ...] = (Bleu, RougeL, CiderD, Meteor, WMD, Spice, Mean, I2CE)

#: metric key -> class ("bleu", "rouge_l", "cider_d", ...)
METRICS: dict[str, type[Metric]] = {m.key: m for m in _METRICS}

#: every reported key -> the class that reports it ("bleu_2" -> Bleu)
REPORTED_KEYS: dict[str, type[Metric]] = {k: m for m in _METRICS for k in m.report_keys()}
#: keys a metric reports only when asked for (``spice_object`` ...): see Metric.optional_reports
OPTIONAL_KEYS: dict[str, type[Metric]] = {k: m for m in _METRICS for k in m.optional_reports}
#: what coco-caption's evaluation (pycocoevalcap's COCOEvalCap) reports, in the order papers
#: print it: the set ``--metrics coco-caption`` and the Systems page's button choose
COCO_CAPTION_KEYS = (
    "bleu_1",
    "bleu_2",
    "bleu_3",
    "bleu_4",
    "meteor",
    "rouge_l",
    "cider_d",
    "spice",
)
#: the name that stands for :data:`COCO_CAPTION_KEYS` where metric keys are given
COCO_CAPTION_SET = "coco-caption"


def metric_class(key: str) -> type[Metric]:
    """The class behind a metric key or a reported key."""
    cls = METRICS.get(key) or REPORTED_KEYS.get(key) or OPTIONAL_KEYS.get(key)
    if cls is None:
        raise UnknownKeyError(
            f"unknown metric {key!r}; available: "
            + ", ".join(dict.fromkeys([*REPORTED_KEYS, *METRICS, *OPTIONAL_KEYS]))
        )
    return cls


def is_builtin(key: str) -> bool:
    """Whether ``key`` names one of capeval's own metrics, not a class put in the registry
    by hand: its code has a version (capeval's) that a signature names.

    >>> is_builtin("bleu"), is_builtin("cider_d"), is_builtin("mine")
    (True, True, False)
    """
    try:
        return metric_class(key) in _METRICS
    except UnknownKeyError:
        return False


def check_reported_key(key: str) -> None:
    """A key whose values come from scoring items: a metric's or one it reports, not SPICE's
    categories (their corpus values need the set's statistics: ``capeval compare``,
    ``score_systems``; scored elsewhere, SPICE's own value came back under their name)."""
    cls = metric_class(key)
    if key != cls.key and key not in cls.report_keys():
        raise OptionError(
            f"{key} is reported by `capeval compare` and score_systems only (when asked "
            f"for); score({cls.key!r}, ...) gives each item's categories in its details"
        )


def get_metric(key: str, **options: Any) -> Metric:
    """A configured metric object, e.g. ``get_metric("cider_d", idf="coco-val2014")``.

    ``key`` is a metric's key or the key its value is (``bleu_4``); another key it reports
    (``bleu_1``, ``spice_object``) is refused, since the object's results would be another
    number: :func:`capeval_core.score` selects those.

    >>> get_metric("bleu_1")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    capeval_core.errors.OptionError: get_metric('bleu_1') would be BLEU, whose value is ...
    """
    cls = metric_class(key)
    if key not in (cls.key, cls.primary_key()):
        raise OptionError(
            f"get_metric({key!r}) would be {cls.name}, whose value is {cls.primary_key()}: use "
            f"score({key!r}, ...), or get_metric({cls.key!r}) and the result's select({key!r})"
            if key in REPORTED_KEYS
            else f"get_metric({key!r}) would be {cls.name}, whose value is "
            f"{cls.primary_key()}: {key} is reported by `capeval compare` and score_systems "
            "only (when asked for); each item's categories are in the details of "
            f"get_metric({cls.key!r})'s results"
        )
    return cls(**options)


@dataclass(frozen=True)
class Configured:
    """Metrics configured for one scoring run, grouped by class key (``bleu_4`` and
    ``bleu_2`` share one ``bleu``): the objects, their signatures, and the keys that failed
    (``on_error="skip"``) with why."""

    groups: dict[str, list[str]]
    metrics: dict[str, Metric]
    signatures: dict[str, str]
    skipped: dict[str, str]


def check_unscored_options(keys: Sequence[str], options: Mapping[str, Any]) -> None:
    """The options of a metric ``keys`` do not score, checked all the same (an invalid one
    passed without a word), each error naming the metric."""
    scored = {metric_class(k).key for k in keys}
    for key, value in options.items():
        if metric_class(key).key not in scored:
            try:
                metric_class(key).configured(value)
            except OptionError as exc:
                raise OptionError(f"`options[{key!r}]`: {exc}") from None


def configure(
    keys: Sequence[str],
    tokenizer: str,
    options: Mapping[str, Mapping[str, Any]] | None = None,
    on_error: str = "raise",
) -> Configured:
    """Each metric behind ``keys`` configured once (signature, task planning, shared work);
    ``options`` maps a metric key to its options. A metric that fails to configure (e.g. a
    missing resource) raises, or with ``on_error="skip"`` is recorded in ``skipped``."""
    if isinstance(keys, str):  # "bleu_4" would be the keys b, l, e, ...
        raise OptionError(f"`keys` must be a list of metric keys (got {keys!r})")
    if on_error not in ("raise", "skip"):
        raise OptionError(f"`on_error` must be 'raise' or 'skip' (got {on_error!r})")
    options = options or {}
    for key, value in options.items():  # a typo ("cidr") was options for nothing
        if key not in METRICS or not isinstance(value, Mapping):
            raise OptionError(
                f"`options` maps a metric key ({', '.join(METRICS)}) to a dict of its "
                f"options (got {key!r}: {value!r})"
            )
    groups: dict[str, list[str]] = {}
    for key in dict.fromkeys(keys):
        groups.setdefault(metric_class(key).key, []).append(key)
    check_unscored_options(keys, options)
    metrics: dict[str, Metric] = {}
    signatures: dict[str, str] = {}
    skipped: dict[str, str] = {}
    for mkey in groups:
        try:
            metrics[mkey] = metric_class(mkey)(tokenizer=tokenizer, **dict(options.get(mkey, {})))
            signatures[mkey] = str(metrics[mkey].signature())
        except CapevalError as exc:
            if on_error != "skip":
                raise
            skipped[mkey] = str(exc)
    return Configured(groups, metrics, signatures, skipped)


def available_keys() -> list[str]:
    """Every key a user can ask for, in registry order (``bleu_1`` … ``i2ce``).

    >>> available_keys()[:6], len(available_keys())
    (['bleu_1', 'bleu_2', 'bleu_3', 'bleu_4', 'rouge_l', 'cider_d'], 11)
    """
    return list(REPORTED_KEYS)


def optional_keys() -> list[str]:
    """Keys scored only when asked for, by ``capeval compare`` and the Systems page
    (``spice_object`` … ``spice_size``): see :attr:`Metric.optional_reports`."""
    return list(OPTIONAL_KEYS)


__all__ = [
    "COCO_CAPTION_KEYS",
    "COCO_CAPTION_SET",
    "METRICS",
    "OPTIONAL_KEYS",
    "REPORTED_KEYS",
    "Batch",
    "Bleu",
    "CiderD",
    "Configured",
    "Metric",
    "MetricConfig",
    "RougeL",
    "available_keys",
    "check_reported_key",
    "configure",
    "get_metric",
    "make_batch",
    "metric_class",
    "optional_keys",
]
