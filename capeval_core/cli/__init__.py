"""The ``capeval`` command line: batch scoring of COCO-format files.

    capeval score --results RESULTS.json [--annotations REFERENCES.json] [--metrics ...]
                  [--per-item OUT.csv|OUT.json] [--json]
    capeval compare --results BASELINE.json [OTHER.json ...] [--annotations ...] [--table ...]

References are COCO captions, ``{image_id: [captions]}`` or Karpathy's ``dataset_coco.json``
(``--split``, test by default); both commands default to COCO val2014 from the installed
pycocoevalcap.

Images are scored in the order pycocoevalcap's ``COCOEvalCap`` uses (the annotation file's
``images`` list, filtered to the images in the results), so corpus values agree bit for bit.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import os
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from capeval_core._version import __version__
from capeval_core.cli import compare, correlate, perturb, score
from capeval_core.cli.arguments import (
    _SEED,
    _Parser,
    _positive_float,
    _whole,
)
from capeval_core.cli.output import (
    cli_message,
)
from capeval_core.errors import (
    CapevalError,
    CapevalWarning,
    InputError,
)
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


def _cmd_info(args: argparse.Namespace) -> int:
    from capeval_core.inventory import inventory

    for item in inventory():
        status = "ok" if item.available else "absent" if item.optional else "MISSING"
        print(f"{item.name:<26} {status:<8} {item.version:<20} {item.detail}")
    return 0


def _cmd_train_i2ce(args: argparse.Namespace) -> int:
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


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="capeval", description="Image-captioning metrics that match the references."
    )
    parser.add_argument("--version", action="version", version=f"capeval {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    score.add_parser(sub)

    correlate.add_parser(sub)

    perturb.add_parser(sub)

    compare.add_parser(sub)

    metrics = sub.add_parser("metrics", help="list the metric keys")
    metrics.set_defaults(func=_cmd_metrics)
    info = sub.add_parser("info", help="list the resources capeval finds")
    info.set_defaults(func=_cmd_info)

    tr = sub.add_parser(
        "train-i2ce",
        help='train the I2CE sentence encoder on COCO train2014 (needs "capeval[train]")',
    )
    from capeval_core.i2ce.model import TRAIN_DEFAULTS as _d

    tr.add_argument("--output", default="i2ce-model", help="folder for weights, config and log")
    tr.add_argument("--vocab-size", type=_whole(1), default=_d["vocab_size"], help="encoder words")
    tr.add_argument(
        "--output-vocab", type=_whole(1), default=_d["output_vocab"], help="decoder words"
    )
    tr.add_argument("--max-captions", type=_whole(1), default=_d["max_captions"])
    tr.add_argument("--max-len", type=_whole(1), default=_d["max_len"], help="longest caption kept")
    tr.add_argument(
        "--hidden", type=_whole(1), default=_d["hidden"], help="encoder GRU size/direction"
    )
    tr.add_argument("--decoder-hidden", type=_whole(1), default=_d["decoder_hidden"])
    tr.add_argument("--attention", type=_whole(1), default=_d["attention"])
    tr.add_argument("--epochs", type=_whole(1), default=_d["epochs"])
    tr.add_argument("--batch-size", type=_whole(1), default=_d["batch_size"])
    tr.add_argument("--lr", type=_positive_float, default=_d["lr"])
    tr.add_argument("--seed", type=_SEED, default=_d["seed"])
    tr.add_argument("--threads", type=_whole(1), default=_d["threads"], help="torch CPU threads")
    tr.add_argument("--val-captions", type=_whole(0), default=_d["val_captions"])
    tr.add_argument(
        "--log-every", type=_whole(1), default=_d["log_every"], help="loss log interval"
    )
    tr.set_defaults(func=_cmd_train_i2ce)
    return parser


def _one_line_warnings(previous: Any) -> Any:
    """A ``warnings.showwarning`` that prints capeval's own warnings (a repaired cache, a
    degenerate corpus) as one line each and hands any other to ``previous``."""

    def show(message, category, filename, lineno, file=None, line=None) -> None:
        if issubclass(category, CapevalWarning):
            from tqdm import tqdm

            tqdm.write(f"capeval: warning: {message}", file=sys.stderr)  # clear of any bar
        else:
            previous(message, category, filename, lineno, file, line)

    return show


#: options naming a file or folder: an empty one (an unset shell variable) is refused, never
#: read as "not given" (``--annotations ''`` scored against COCO val2014 without a word)
PATH_OPTIONS = (
    "results",
    "annotations",
    "per_item",
    "json",
    "judgments",
    "metric_scores",
    "embeddings",
    "cider_idf",
    "dataset",
    "output",
)


#: the path options capeval writes: ``--json -`` is standard output
OUTPUT_OPTIONS = ("per_item", "json", "output")


def refuse_empty_paths(args: argparse.Namespace) -> None:
    """Raise on the first path option given as an empty string, or as ``-`` for a file
    capeval reads (it was "file does not exist": ``--json -`` writes to standard output, so
    ``-`` reads like standard input)."""
    for dest in PATH_OPTIONS:
        value = getattr(args, dest, None)
        values = value if isinstance(value, list) else [value]
        option = "--" + dest.replace("_", "-")
        if any(isinstance(v, str) and not v.strip() for v in values):
            raise InputError(f"{option} is empty: give a file name")
        if dest not in OUTPUT_OPTIONS and "-" in values:
            raise InputError(
                f"{option} -: capeval reads files, not standard input; give a file name"
            )


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit status (2 for bad input, as argparse does)."""
    args = build_parser().parse_args(argv)
    with warnings.catch_warnings():
        warnings.showwarning = _one_line_warnings(warnings.showwarning)
        try:
            refuse_empty_paths(args)
            status = args.func(args)
            sys.stdout.flush()  # a full disk is said here, not at the interpreter's exit
            return status
        except CapevalError as exc:
            print(f"capeval: error: {cli_message(str(exc))}", file=sys.stderr)
            return 2
        except BrokenPipeError:  # `capeval ... | head`: the reader has what it wanted
            _quiet_stdout()
            return 1
        except OSError as exc:
            # standard output that cannot be written (a full disk): said in one line; any
            # other OSError is not the output's, and keeps its traceback
            if exc.filename is not None or exc.errno not in _OUTPUT_ERRNOS:
                raise
            _quiet_stdout()
            reason = exc.strerror or str(exc)
            print(f"capeval: error: could not write the output: {reason}", file=sys.stderr)
            return 2


#: the errors of a write to standard output that no input causes: a full disk or quota, a
#: file grown past its limit, a device's error
_OUTPUT_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO})


def _quiet_stdout() -> None:
    """Point stdout at the null device: what is still buffered for a closed pipe or a full
    disk would fail again, with a traceback, when the interpreter flushes it at exit."""
    with contextlib.suppress(OSError, ValueError, AttributeError):
        sys.stdout.flush()
    with contextlib.suppress(OSError, ValueError, AttributeError):
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, sys.stdout.fileno())
