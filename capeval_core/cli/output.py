"""What several ``capeval`` subcommands print and write: tables of signatures, JSON, the
files a run will write (checked first), progress, and warnings in the command line's words."""

from __future__ import annotations

import argparse
import contextlib
import math
import re
import sys
import warnings
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

from capeval_core import files
from capeval_core.errors import CapevalWarning, InputError

#: show a progress bar from this many images on
PROGRESS_FROM = 1000


def check_per_item(path: Path) -> Path:
    """The --per-item destination, refused before any work: a suffix other than .csv/.json,
    a folder, or a folder that does not exist."""
    if path.suffix.lower() not in (".csv", ".json"):
        raise InputError(f"--per-item must end in .csv or .json (got {path.name})")
    return files.check_output(path, option="--per-item")


@contextlib.contextmanager
def held_warnings() -> Any:
    """Warnings about the inputs (a blank reference, an image listed twice) shown once every
    input is read: a run that then refuses an input prints its one error line alone."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", CapevalWarning)
        yield
    for w in caught:
        warnings.showwarning(w.message, w.category, w.filename, w.lineno)


def plan_outputs(args: argparse.Namespace, inputs: Sequence[tuple[str, str | None]]) -> None:
    """Every file the command will write (--per-item and its signatures sidecar, --json to a
    file), checked before any input is read or scored: a writable folder, no input of the
    run, no two outputs on one path (:func:`capeval_core.files.check_outputs`)."""
    from capeval_core.stats.export import sidecar_path

    outputs: list[tuple[str, str | Path]] = []
    per_item = getattr(args, "per_item", None)
    if per_item:
        check_per_item(Path(per_item))
        outputs.append(("--per-item", per_item))
        outputs.append(("the signatures of --per-item", sidecar_path(per_item)))
    if isinstance(getattr(args, "json", None), str) and args.json != "-":
        outputs.append(("--json", args.json))
    files.check_outputs(outputs, [(what, p) for what, p in inputs if p])


#: below this size a value written with six decimals reads 0.000000 (or -0.000000)
_SIX_DECIMALS = 5e-7


def value_text(value: float, *, sign: bool = False) -> str:
    """A metric's value as the text reports write it: six decimals, and a nonzero value
    too small for them in three significant digits (BLEU-4's 1.03e-08 read "0.000000");
    ``sign``: with its sign, as a difference (see :func:`delta_text`).

    >>> value_text(0.25), value_text(1.0304e-08), value_text(-4.764674e-09), value_text(0.0)
    ('0.250000', '1.03e-08', '-4.76e-09', '0.000000')
    >>> value_text(1.5e-9, sign=True), value_text(0.0, sign=True)
    ('+1.50e-09', '+0.000000')
    """
    plus = "+" if sign else ""
    if value != 0 and abs(value) < _SIX_DECIMALS:  # NaN is no number below: "nan"
        return f"{value:{plus}.2e}"
    return f"{value + 0.0:{plus}.6f}"


def delta_text(before: float, after: float) -> str:
    """``after - before`` with its sign: in three significant digits where the values are
    that small themselves (1.03e-08 -> 1.83e-12 is -1.03e-08), else six decimals, a float's
    noise in a difference of larger values written +0.000000 (:func:`files.signed`).

    >>> delta_text(1.0304e-08, 1.83e-12), delta_text(0.5, 0.5 + 1e-13), delta_text(0.5, 0.25)
    ('-1.03e-08', '+0.000000', '-0.250000')
    """
    if max(abs(before), abs(after)) < _SIX_DECIMALS:
        return value_text(after - before, sign=True)
    return files.signed(after - before, 6)


def signed_lines(signatures: Mapping[str, Any], values: Mapping[str, float] | None = None) -> str:
    """One line per key: the key, its value when ``values`` are given, and its signature on
    one line: the rows of ``score``'s table, and the signatures after ``compare``'s and
    ``perturb``'s reports (their JSON has them; a number without its signature cannot be
    reproduced).

    >>> signatures = {"bleu_4": "bleu|tok:ptb", "rouge_l": "rouge_l|tok:ptb"}
    >>> print(signed_lines(signatures, {"bleu_4": 0.25, "rouge_l": 0.5}))
    bleu_4   0.250000  bleu|tok:ptb
    rouge_l  0.500000  rouge_l|tok:ptb
    >>> print(signed_lines(signatures))
    bleu_4   bleu|tok:ptb
    rouge_l  rouge_l|tok:ptb
    """
    width = max((len(k) for k in signatures), default=0)
    return "\n".join(
        f"{key:<{width}}  "
        + (f"{value_text(values[key])}  " if values is not None else "")
        + files.printable(signature)
        for key, signature in signatures.items()
    )


def print_signatures(signatures: Mapping[str, Any]) -> None:
    """The signatures of a text report's numbers, after it (as in its JSON)."""
    if signatures:
        print(f"\nsignatures\n{signed_lines(signatures)}")


def warn_notes(notes: Mapping[str, Sequence[str]]) -> None:
    """Each metric's notes on the scored set (a single image's CIDEr-D), once per metric."""
    for metric, metric_notes in notes.items():
        for note in metric_notes:
            print(f"capeval: warning: {metric}: {cli_message(note)}", file=sys.stderr)


def jsonable(value: Any) -> Any:
    """NaN -> None, recursively (the correlate JSON contract says null)."""
    if isinstance(value, dict):
        return {k: jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def tqdm_write(line: str) -> None:
    """``line`` on stderr, clear of any progress bar drawn there."""
    from tqdm import tqdm

    tqdm.write(line, file=sys.stderr)


def dropped_warning(jset: Any, where: str) -> str | None:
    """The rows a judgment set dropped as it was read, as a warning naming the file given
    (``where``), each reason with its rows' places: the summary line counted them, but
    no ``capeval: warning:`` line said that rows were left out. None when none was.

    >>> from types import SimpleNamespace
    >>> jset = SimpleNamespace(dropped={"missing human score": 1},
    ...                        dropped_reason=lambda r: f"{r} (line 5)")
    >>> dropped_warning(jset, "data/g.csv")
    'data/g.csv: 1 row(s) dropped, not scored: missing human score (line 5): 1'
    """
    total = sum(jset.dropped.values())
    if not total:
        return None
    reasons = "; ".join(f"{jset.dropped_reason(r)}: {n:,}" for r, n in jset.dropped.items())
    return f"{where}: {total:,} row(s) dropped, not scored: {reasons}"


def bar_progress(bar: Any) -> Any:
    """An ``on_progress(done, total, label)`` callback drawing on a tqdm bar."""

    def progress(done: int, total: int, label: str) -> None:
        bar.total = total
        bar.n = done
        bar.set_postfix_str(label)
        bar.refresh()

    return progress


#: the library's words for what the command line calls by an option: a core message names
#: its keyword argument (a Python caller's word), the command line prints the flag
CLI_WORDS = {
    "the `max_bytes` option": "--max-bytes",
    "the `max_caption_tokens` option": "--max-caption-tokens",
    "the `max_references` option": "--max-references",
    "(give names explicitly)": "(give them with --names)",
    "(max_sentence_words)": "(--spice-max-words)",
    # keyword arguments the command line has no option for: their suggestion is dropped, or
    # said as what to do with the files
    "; name one with `score_columns`": "",
    ", or pass `file_format`": "",
    ", or a COCO captions file as `references_from`": "",
    ", or map it with the `columns` option": "",
    # a run that stops keeps nothing, and the page says so before the message
    "; the set is unchanged": "",
    ", or pass `references_from` with its caption file": "",
    "pass `references_from` (a Flickr token file or COCO captions JSON)": "put its caption "
    "file (a Flickr token file or COCO captions JSON) in the folder",
}


#: advice in the library's words that names an option: said with its flag by the commands
#: that have it, left out by the others (correlate scores with the set's own IDF)
CLI_ADVICE = {" or use idf='coco-val2014'": " or use --cider-idf coco-val2014"}


def cli_message(message: str, flags: Collection[str] | None = None) -> str:
    """A core message in the command line's words, on one line (control characters of file
    names or captions escaped); ``flags``: the running command's, see :func:`cli_worded`."""
    return files.printable(cli_worded(message, flags))


def cli_worded(value: Any, flags: Collection[str] | None = None) -> Any:
    """``value`` (a reason, or the lists and dicts holding reasons) in the command line's
    words, as its stderr says them: the JSON and per-item files named the library's
    ``(max_sentence_words)`` where the warning said ``(--spice-max-words)``. Advice naming a
    flag the running command lacks (``flags``) is left out: correlate has no --cider-idf.

    >>> note = "Score more images together or use idf='coco-val2014'."
    >>> cli_worded(note), cli_worded(note, {"--metrics"})
    ('Score more images together or use --cider-idf coco-val2014.', 'Score more images together.')
    """
    if isinstance(value, str):
        for library, cli in CLI_WORDS.items():
            value = value.replace(library, cli)
        for library, cli in CLI_ADVICE.items():
            flag = re.search(r"--[a-z][a-z-]*", cli)
            kept = flags is None or (flag is not None and flag.group() in flags)
            value = value.replace(library, cli if kept else "")
        return value
    if isinstance(value, list):
        return [cli_worded(v, flags) for v in value]
    if isinstance(value, dict):
        return {k: cli_worded(v, flags) for k, v in value.items()}
    return value


def command_flags(args: argparse.Namespace) -> frozenset[str]:
    """The long flags of the command ``args`` were parsed by (each dest, spelled as a flag)."""
    return frozenset("--" + dest.replace("_", "-") for dest in vars(args))
