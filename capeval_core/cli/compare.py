"""``capeval compare``: several systems' results scored on the same images, with bootstrap
intervals, paired tests against the first, and a paper's table."""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from capeval_core import files
from capeval_core.cli.arguments import (
    DEFAULT_KEYS,
    OWN_FLAGS,
    SEED,
    add_limit_options,
    add_metric_option_option,
    add_metrics_option,
    add_reference_options,
    add_scoring_options,
    add_workers_option,
    check_spice_parser,
    given_options,
    limits_of,
    merged_options,
    metric_keys,
    metric_options,
    read_references_of,
    refuse_unused,
    refuse_unused_metric_options,
    spice_options,
    whole_number,
    worker_count,
)
from capeval_core.cli.output import (
    PROGRESS_FROM,
    bar_progress,
    cli_message,
    cli_worded,
    held_warnings,
    plan_outputs,
    print_signatures,
    warn_notes,
)
from capeval_core.errors import DegenerateCorpusWarning, InputError
from capeval_core.progress import stderr_tqdm
from capeval_core.stats.intervals import MAX_RESAMPLES


def _cmd_compare(args: argparse.Namespace) -> int:

    from capeval_core.systems import (
        compare_systems,
        load_systems,
        score_systems,
        systems_per_item_outputs,
    )

    check_spice_parser(args.spice_parser)
    keys = metric_keys(args.metrics, DEFAULT_KEYS, optional=True)  # before any file is read
    refuse_unused_metric_options(args, keys, default=not args.metrics)
    more_options = metric_options(args, keys, OWN_FLAGS)
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
                twice = (  # the two spellings only where they differ (./a.json, a link)
                    f"{path} twice"
                    if path == earlier
                    else f"one file twice, as {earlier} and {path}"
                )
                raise InputError(f"--results lists {twice}: compare different systems' files")
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
    workers = worker_count(args.workers)  # its warning before the bar, not on the bar's line
    with stderr_tqdm(
        total=None, desc="capeval compare", unit="metric", disable=len(data) < PROGRESS_FROM
    ) as bar:
        progress = bar_progress(bar)

        with warnings.catch_warnings():  # said below, once per metric, cached runs too
            warnings.simplefilter("ignore", DegenerateCorpusWarning)
            scores = score_systems(
                data,
                keys,
                tokenizer=args.tokenizer,
                options=merged_options(
                    {
                        "cider_d": {"idf": args.cider_idf or "corpus"},
                        "spice": spice_options(args.spice_parser, args.spice_max_words),
                    },
                    more_options,
                ),
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
    for line in comparison.dropped_lines():  # --on-missing intersect: the report says it too
        print(f"capeval: warning: {cli_message(line)}", file=sys.stderr)
    warn_notes(scores.notes)
    outputs = []
    if args.per_item:
        outputs += systems_per_item_outputs(Path(args.per_item), comparison)
    data = comparison.as_dict()
    if "left_out" in data:  # the reasons in the words of the warnings above
        data["left_out"] = cli_worded(data["left_out"])
    text = json.dumps(data, indent=1, allow_nan=False)
    if args.json and args.json != "-":
        outputs.append(("--json", Path(args.json), text + "\n"))
    files.write_all(outputs)
    if args.json == "-":
        print(text)
    if args.table:
        from capeval_core.systems_table import paper_table

        table = paper_table(comparison, raw=args.raw)
        print(cli_worded(table.render(args.table)), end="")
        if args.table == "csv":  # stdout stays a plain CSV: what the other tables say under
            print_csv_notes(cli_worded(list(table.notes)), table.signatures)  # them: stderr
    elif args.json != "-":
        print(cli_worded(comparison.format_table()))  # the flags, as the JSON and warnings
        print_signatures(data["signatures"])
    return 0


def print_csv_notes(notes: Sequence[str], signatures: Sequence[tuple[str, str]]) -> None:
    """The notes and signatures of ``--table csv``'s numbers, on stderr: text, Markdown and
    LaTeX give them under the table, and a CSV has no place for them that a plain
    ``pandas.read_csv`` reads (``compare --json`` holds them too)."""
    lines = [*notes, *(f"{label}: {signature}" for label, signature in signatures)]
    print("capeval: the CSV's notes and signatures:", file=sys.stderr)
    for line in lines:
        print(f"  {files.printable(line)}", file=sys.stderr)


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


def add_parser(sub: Any) -> None:
    """The ``compare`` subcommand and its options."""
    comp = sub.add_parser(
        "compare",
        help="score several systems' results on the same images, with bootstrap intervals "
        "and paired significance tests against the first",
    )
    add_reference_options(comp)
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
    add_metrics_option(comp, DEFAULT_KEYS)
    comp.add_argument(
        "--paired",
        choices=["bs", "ar", "both"],
        help="the test of each system against the first (two or more files): paired bootstrap "
        "resampling, approximate randomization, or both (default); the JSON gives each test's "
        "p (p_bootstrap, p_randomization) and p_value, the larger of them",
    )
    comp.add_argument(
        "--trials",
        type=whole_number(1, MAX_RESAMPLES),
        help="approximate randomization trials (--paired ar or both; default 10,000)",
    )
    comp.add_argument(
        "--resamples",
        type=whole_number(2, MAX_RESAMPLES),
        default=1000,
        metavar="N",
        help=f"bootstrap resamples for the intervals and the paired bootstrap test, 2 to "
        f"{MAX_RESAMPLES:,} (default 1,000, sacrebleu's)",
    )
    comp.add_argument(
        "--seed",
        type=SEED,
        default=12345,
        help=f"seed of the bootstrap intervals and of both paired tests, 0 to {2**63 - 1:,} "
        "(default 12345, sacrebleu's)",
    )
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
    add_scoring_options(comp)
    add_metric_option_option(comp)
    add_workers_option(comp)
    add_limit_options(comp)
    comp.set_defaults(func=_cmd_compare)
