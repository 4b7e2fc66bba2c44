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
import json
import os
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from capeval_core import files
from capeval_core._version import __version__
from capeval_core.cli import correlate, perturb, score
from capeval_core.cli.arguments import (
    _SEED,
    DEFAULT_KEYS,
    SET_HELP,
    _add_limit_options,
    _add_reference_options,
    _add_scoring_options,
    _check_spice_parser,
    _Parser,
    _positive_float,
    _whole,
    _workers,
    given_options,
    limits_of,
    metric_keys,
    read_references_of,
    refuse_unused,
    refuse_unused_metric_options,
    spice_options,
)
from capeval_core.cli.output import (
    PROGRESS_FROM,
    _bar_progress,
    _cli_worded,
    _print_signatures,
    _warn_notes,
    cli_message,
    held_warnings,
    plan_outputs,
)
from capeval_core.errors import (
    CapevalError,
    CapevalWarning,
    DegenerateCorpusWarning,
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
from capeval_core.progress import stderr_tqdm
from capeval_core.stats.intervals import MAX_RESAMPLES


def _cmd_compare(args: argparse.Namespace) -> int:

    from capeval_core.systems import (
        compare_systems,
        load_systems,
        score_systems,
        systems_per_item_outputs,
    )

    _check_spice_parser(args.spice_parser)
    keys = metric_keys(args.metrics, DEFAULT_KEYS, optional=True)  # before any file is read
    refuse_unused_metric_options(args, keys, default=not args.metrics)
    if args.raw and not args.table:
        raise InputError("--raw applies to --table (the paper table's scale): add --table")
    paired = args.paired or "both"
    if len(args.results) == 1:  # compare_systems gives the intervals alone: no test, no match
        refuse_unused(
            given_options(args, "paired", "trials", "on_missing"),
            "with one --results file (no other system to compare it with)",
        )
    elif paired == "bs":
        refuse_unused(
            given_options(args, "trials"),
            "with --paired bs (trials are approximate randomization's)",
        )
    if args.table and args.json == "-":
        raise InputError("--table and --json - both print on stdout: write the JSON to a file")
    names = _names(args.names, args.results)
    for i, path in enumerate(args.results):
        for earlier in args.results[:i]:
            if files.same_place(Path(path), Path(earlier)):
                raise InputError(
                    f"--results lists {path} twice (as {earlier} too): compare different "
                    "systems' files"
                )
    plan_outputs(
        args,
        [*(("--results file", r) for r in args.results), ("--annotations file", args.annotations)],
    )
    with held_warnings():
        refs = read_references_of(args)
        data = load_systems(
            args.results,
            refs,
            names,
            on_missing=args.on_missing or "error",
            limits=limits_of(args),
        )
    workers = _workers(args.workers)  # its warning before the bar, not on the bar's line
    with stderr_tqdm(
        total=None, desc="capeval compare", unit="metric", disable=len(data) < PROGRESS_FROM
    ) as bar:
        progress = _bar_progress(bar)

        with warnings.catch_warnings():  # said below, once per metric, cached runs too
            warnings.simplefilter("ignore", DegenerateCorpusWarning)
            scores = score_systems(
                data,
                keys,
                tokenizer=args.tokenizer,
                options={
                    "cider_d": {"idf": args.cider_idf or "corpus"},
                    "spice": spice_options(args.spice_parser, args.spice_max_words),
                },
                workers=workers,
                on_progress=progress,
            )
        bar.set_postfix_str("resampling")
        comparison = compare_systems(
            scores,
            paired=paired,
            n_resamples=args.resamples,
            n_trials=args.trials,  # None: 10,000
            seed=args.seed,
        )
    for line in comparison.left_out_warnings():
        print(f"capeval: warning: {cli_message(line)}", file=sys.stderr)
    _warn_notes(scores.notes)
    outputs = []
    if args.per_item:
        outputs += systems_per_item_outputs(Path(args.per_item), comparison)
    data = comparison.as_dict()
    if "left_out" in data:  # the reasons in the words of the warnings above
        data["left_out"] = _cli_worded(data["left_out"])
    text = json.dumps(data, indent=1, allow_nan=False)
    if args.json and args.json != "-":
        outputs.append(("--json", Path(args.json), text + "\n"))
    files.write_all(outputs)
    if args.json == "-":
        print(text)
    if args.table:
        from capeval_core.systems_table import paper_table

        print(paper_table(comparison, raw=args.raw).render(args.table), end="")
    elif args.json != "-":
        print(comparison.format_table())
        _print_signatures(data["signatures"])
    return 0


def _names(text: str | None, results: Sequence[str]) -> list[str] | None:
    """--names: one name per results file, comma-separated, each given and distinct."""
    if text is None:
        return None
    names = [n.strip() for n in text.split(",")]
    if not any(names):
        raise InputError("--names is empty: give one name per results file, comma-separated")
    if len(names) != len(results):
        raise InputError(
            f"--names gives {len(names)} name(s) for {len(results)} results file(s): give one "
            "per file, comma-separated, in the order of --results"
        )
    for i, name in enumerate(names):
        if not name:
            raise InputError(f"--names: name {i + 1} (for {results[i]}) is empty")
        if names.index(name) != i:
            raise InputError(f"--names: {files.printable(name)!r} is given twice")
    return names


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

    comp = sub.add_parser(
        "compare",
        help="score several systems' results on the same images, with bootstrap intervals "
        "and paired significance tests against the first",
    )
    _add_reference_options(comp)
    comp.add_argument(
        "--results",
        nargs="+",
        required=True,
        metavar="RESULTS",
        help="one or more COCO results files; the first is the baseline",
    )
    comp.add_argument(
        "--names",
        help="comma-separated system names, one per results file (default: the file stems)",
    )
    comp.add_argument(
        "--on-missing",
        choices=["error", "intersect"],
        help="when the files do not caption the same images: stop with the ids (default), or "
        "score the images every file captions and report what each file lost (two or more "
        "files)",
    )
    comp.add_argument(
        "--metrics",
        nargs="+",
        metavar="KEY",
        help=f"metric keys (default: {' '.join(DEFAULT_KEYS)}); {SET_HELP}; see `capeval metrics`",
    )
    comp.add_argument(
        "--paired",
        choices=["bs", "ar", "both"],
        help="the test of each system against the first (two or more files): paired bootstrap "
        "resampling, approximate randomization, or both (default); with both, the JSON's "
        "p_value is the larger of the two",
    )
    comp.add_argument(
        "--trials",
        type=_whole(1, MAX_RESAMPLES),
        help="approximate randomization trials (--paired ar or both; default 10,000)",
    )
    comp.add_argument(
        "--resamples",
        type=_whole(2, MAX_RESAMPLES),
        default=1000,
        help="bootstrap resamples, at least 2 (intervals and the paired bootstrap test)",
    )
    comp.add_argument("--seed", type=_SEED, default=12345, help="seed of both tests (sacrebleu's)")
    comp.add_argument(
        "--per-item", metavar="OUT", help="write per-image captions and scores (.csv or .json)"
    )
    comp.add_argument("--json", metavar="OUT", help="write the results as JSON ('-': stdout)")
    comp.add_argument(
        "--table",
        choices=["text", "markdown", "latex", "csv"],
        help="print a paper's results table instead of the report: metrics in the papers' "
        "order, values x100 with one decimal, ± half the interval, Δ and p against the "
        "baseline, † where p < 0.05 (latex: booktabs)",
    )
    comp.add_argument(
        "--raw",
        action="store_true",
        help="with --table: the metrics' own scale, four decimals, instead of x100",
    )
    _add_scoring_options(comp)
    comp.add_argument(
        "--workers",
        type=_whole(0),
        default=None,
        help="worker processes for scoring (default and most: one per available CPU; 0 or 1: none)",
    )
    _add_limit_options(comp)
    comp.set_defaults(func=_cmd_compare)

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
