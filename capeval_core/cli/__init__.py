"""The ``capeval`` command line: batch scoring of COCO-format files.

    capeval score --results RESULTS.json [--annotations REFERENCES.json] [--metrics ...]
                  [--per-item OUT.csv|OUT.json] [--json]
    capeval compare --results BASELINE.json [OTHER.json ...] [--annotations ...] [--table ...]

References are COCO captions, ``{image_id: [captions]}`` or Karpathy's ``dataset_coco.json``
(``--split``, test by default); both commands default to COCO val2014 from the installed
pycocoevalcap.

Images are scored in the order pycocoevalcap's ``COCOEvalCap`` uses (the annotation file's
``images`` list, filtered to the images in the results), and SPICE's mean is summed in sorted
image id order as its ``Spice`` sums it, so corpus values agree bit for bit.

Each subcommand is one module of this package, its parser section beside its code
(``score``, ``correlate``, ``perturb``, ``compare``; ``small`` holds ``metrics``, ``info``
and ``train-i2ce``); what several share is in ``arguments`` (options) and ``output``
(printing, files, warnings). This module builds the parser and runs a command.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import os
import signal
import sys
import threading
import warnings
from collections.abc import Collection, Iterator, Sequence
from typing import Any

from capeval_core._version import __version__
from capeval_core.cli import compare, correlate, perturb, score, small
from capeval_core.cli.arguments import Parser
from capeval_core.cli.output import cli_message, command_flags
from capeval_core.errors import CapevalError, CapevalWarning, InputError


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="capeval", description="Image-captioning metrics that match the references."
    )
    parser.add_argument("--version", action="version", version=f"capeval {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    score.add_parser(sub)
    correlate.add_parser(sub)
    perturb.add_parser(sub)
    compare.add_parser(sub)
    small.add_parsers(sub)
    return parser


def _capevals(category: type[Warning]) -> bool:
    """capeval's own warnings: its classes, and scipy.stats' classes for constant or degenerate
    input, which its statistics raise as scipy's own functions do (a paired test on one
    image)."""
    if issubclass(category, CapevalWarning):
        return True
    stats = sys.modules.get("scipy.stats")  # loaded whenever one of its classes is raised
    return stats is not None and issubclass(
        category, (stats.ConstantInputWarning, stats.DegenerateDataWarning)
    )


def _one_line_warnings(previous: Any, flags: Collection[str] | None = None) -> Any:
    """A ``warnings.showwarning`` that prints capeval's own warnings (a repaired cache, a
    degenerate corpus, a test on one image: :func:`_capevals`) as one line each, in the words
    of the errors (:func:`cli_message`: options as flags, a file name's control characters
    escaped), and hands any other to ``previous``."""

    def show(message, category, filename, lineno, file=None, line=None) -> None:
        if _capevals(category):
            from tqdm import tqdm

            said = cli_message(str(message), flags)
            tqdm.write(f"capeval: warning: {said}", file=sys.stderr)  # clear of any bar
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


#: the exit status of a run stopped by Ctrl-C (128 + SIGINT, as a shell gives it)
INTERRUPTED = 130


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit status (2 for bad input, as argparse does; 130 when
    stopped by Ctrl-C)."""
    args = build_parser().parse_args(argv)
    with warnings.catch_warnings(), _one_interrupt():
        flags = command_flags(args)
        warnings.showwarning = _one_line_warnings(warnings.showwarning, flags)
        try:
            refuse_empty_paths(args)
            status = args.func(args)
            sys.stdout.flush()  # a full disk is said here, not at the interpreter's exit
            return status
        except KeyboardInterrupt:
            # Ctrl-C: said in one line, where it was a traceback (from each worker too); the
            # blocks it left stopped the workers, and no output file was begun in place
            print("capeval: interrupted", file=sys.stderr)
            return INTERRUPTED
        except CapevalError as exc:
            print(f"capeval: error: {cli_message(str(exc), flags)}", file=sys.stderr)
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


@contextlib.contextmanager
def _one_interrupt() -> Iterator[None]:
    """While a command runs, its first Ctrl-C raises KeyboardInterrupt and the next ones are
    ignored, so that the clean-up the first starts (the workers stopped, unfinished outputs
    removed, "interrupted" said) ends without a second traceback. Only in the main thread,
    and only over Python's own handler (a program that calls :func:`main` with a handler of
    its own keeps it)."""
    if (
        threading.current_thread() is not threading.main_thread()
        or signal.getsignal(signal.SIGINT) is not signal.default_int_handler
    ):
        yield
        return

    def interrupted(signum: int, frame: object) -> None:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        raise KeyboardInterrupt

    signal.signal(signal.SIGINT, interrupted)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)


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
