"""The small ``capeval`` subcommands: ``metrics`` (the metric keys), ``info`` (the resources
capeval finds) and ``train-i2ce`` (the I2CE sentence encoder)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from capeval_core.cli.arguments import SEED, positive_float, whole_number
from capeval_core.metrics import (
    COCO_CAPTION_KEYS,
    COCO_CAPTION_SET,
    METRICS,
    OPTIONAL_KEYS,
    REPORTED_KEYS,
    available_keys,
    metric_class,
)


def _cmd_metrics(args: argparse.Namespace) -> int:
    if args.options:
        return _print_options()
    for key in available_keys():
        cls = metric_class(key)
        direction = "higher is better" if cls.higher_is_better else "lower is better"
        print(f"{key:<10} {cls.name:<10} range {cls.bounds[0]:g} to {cls.bounds[1]:g}, {direction}")
    for key in OPTIONAL_KEYS:
        print(f"{key:<15} {metric_class(key).label(key)} (capeval compare only, when asked for)")
    for key, cls in METRICS.items():  # a metric's own key, where it reports several
        if key not in REPORTED_KEYS:
            keys = [k for k, c in REPORTED_KEYS.items() if c is cls]
            print(f"{key:<15} {' '.join(keys)} (all of {cls.name}'s keys)")
    print(f"{COCO_CAPTION_SET:<15} {' '.join(COCO_CAPTION_KEYS)} (what coco-caption reports)")
    return 0


def _print_options() -> int:
    """Each metric's options (``--option METRIC.NAME=VALUE``): name, type and default."""
    import dataclasses

    from capeval_core.cli.arguments import OWN_FLAGS

    for key, cls in METRICS.items():
        for f in dataclasses.fields(cls.Config):
            default = "" if f.default is dataclasses.MISSING else f"default {f.default!r}"
            flag = (
                f" (score, compare: {OWN_FLAGS[key, f.name]})" if (key, f.name) in OWN_FLAGS else ""
            )
            print(f"{key + '.' + f.name:<26} {f.type!s:<42} {default}{flag}")
    return 0


def _cmd_info(args: argparse.Namespace) -> int:
    from capeval_core.inventory import inventory

    for item in inventory():
        status = "ok" if item.available else "absent" if item.optional else "MISSING"
        print(f"{item.name:<26} {status:<8} {item.version:<20} {item.detail}")
    return 0


def _cmd_train_i2ce(args: argparse.Namespace) -> int:
    from capeval_core.files import check_output_folder

    # before training (it was found after it, the weights lost) and before torch is needed
    check_output_folder(args.output)
    try:
        import torch  # noqa: F401  (optional: only training needs it)
    except ImportError:
        print(
            'capeval: error: train-i2ce needs torch: install it with `pip install "capeval[train]"`'
            " (it pins torch==2.13.0)",
            file=sys.stderr,
        )
        return 2
    from capeval_core.i2ce.train import TrainConfig, train

    options = {f: getattr(args, f) for f in TrainConfig.__dataclass_fields__}
    command = "capeval train-i2ce " + " ".join(
        [f"--output {args.output}"]
        + [f"--{k.replace('_', '-')} {v}" for k, v in options.items() if k != "log_every"]
    )
    train(TrainConfig(**options), Path(args.output), command=command)
    return 0


def add_parsers(sub: Any) -> None:
    """The ``metrics``, ``info`` and ``train-i2ce`` subcommands, and train-i2ce's options."""
    metrics = sub.add_parser("metrics", help="list the metric keys")
    metrics.add_argument(
        "--options",
        action="store_true",
        help="list each metric's options instead (score, compare and correlate take them as "
        "--option METRIC.NAME=VALUE)",
    )
    metrics.set_defaults(func=_cmd_metrics)
    info = sub.add_parser("info", help="list the resources capeval finds")
    info.set_defaults(func=_cmd_info)

    tr = sub.add_parser(
        "train-i2ce",
        help='train the I2CE sentence encoder on COCO train2014 (needs "capeval[train]")',
    )
    from capeval_core.i2ce.model import TRAIN_DEFAULTS as _d

    tr.add_argument(
        "--output",
        default="i2ce-model",
        help="folder for weights, config and log (default: %(default)s)",
    )
    for name, kind, what in (
        ("--vocab-size", whole_number(1), "encoder words"),
        ("--output-vocab", whole_number(1), "decoder words"),
        (
            "--max-captions",
            whole_number(1),
            "COCO train2014 captions trained on, drawn with the seed",
        ),
        ("--max-len", whole_number(1), "longest caption kept, in tokens"),
        ("--hidden", whole_number(1), "encoder GRU size per direction"),
        ("--decoder-hidden", whole_number(1), "decoder GRU size"),
        ("--attention", whole_number(1), "attention size"),
        ("--epochs", whole_number(1), "passes over the training captions"),
        ("--batch-size", whole_number(1), "captions per step"),
        ("--lr", positive_float, "learning rate"),
        ("--seed", SEED, "seed of the caption draw, the initial weights and the batches"),
        ("--threads", whole_number(1), "torch CPU threads"),
        (
            "--val-captions",
            whole_number(0),
            "COCO val2014 captions whose loss is reported after each epoch, never trained on "
            "nor used to choose the weights",
        ),
        ("--log-every", whole_number(1), "steps between the logged training losses"),
    ):
        default = _d[name[2:].replace("-", "_")]
        tr.add_argument(name, type=kind, default=default, help=f"{what} (default: %(default)s)")
    tr.set_defaults(func=_cmd_train_i2ce)
