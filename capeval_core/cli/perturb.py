"""``capeval perturb``: one caption, or every candidate of a dataset, perturbed and
rescored."""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from capeval_core import files
from capeval_core.cli.arguments import (
    SEED,
    add_limit_options,
    add_metrics_option,
    add_tokenizer_option,
    check_human,
    given_options,
    json_takes_no_value,
    limits_of,
    metric_keys,
    refuse_unused,
    refuse_unused_metric_options,
    whole_number,
)
from capeval_core.cli.correlate import as_given
from capeval_core.cli.output import (
    cli_message,
    delta_text,
    dropped_warning,
    jsonable,
    print_signatures,
    value_text,
)
from capeval_core.errors import CapevalError, InputError

#: keys ``perturb`` scores when --metrics is not given
PERTURB_KEYS = ("bleu_1", "bleu_4", "rouge_l", "cider_d", "meteor", "wmd")


#: datasets ``perturb --dataset`` knows by name (anything else is a judgment file path)
PERTURB_DATASETS = ("coco-val", "demo-graded")


#: images of a named --dataset when --images is left out
PERTURB_IMAGES = 5000


def _perturb_dataset(args: argparse.Namespace):
    """(candidates, references, human scores or None, human column, source, the judgment set
    or None) of --dataset."""
    if args.dataset == "coco-val":
        from capeval_core.perturb import batch_dataset

        d = batch_dataset(args.dataset, args.images or PERTURB_IMAGES)
        return d.candidates, d.references, None, None, d.source, None
    if args.dataset == "demo-graded":
        from capeval_core.judgments.demo import demo_graded
        from capeval_core.perturb import DEMO_SEED

        # the demo the library and the app's lab perturb: --seed is the perturbations' seed,
        # never the demo's (it built another demo for each seed)
        jset = demo_graded(max(1, (args.images or PERTURB_IMAGES) // 5), seed=DEMO_SEED)
    else:
        from capeval_core.judgments import load_judgments

        if not Path(args.dataset).exists():  # it was "cannot tell the format from the suffix"
            raise InputError(
                f"--dataset {args.dataset}: no such file or folder (the built-in sets: "
                f"{', '.join(PERTURB_DATASETS)})"
            )
        if not args.format:
            raise InputError("--format is needed with a judgment file as --dataset")
        from capeval_core.coco_files import LIMIT_FLAGS

        limits = limits_of(args)  # --max-bytes, ...: a judgment file is held to them
        jset = load_judgments(
            args.dataset, args.format, args.preset, **{n: getattr(limits, n) for n in LIMIT_FLAGS}
        )
    if jset.kind != "graded":
        raise InputError(f"--dataset must be a graded judgment set (got a {jset.kind} one)")
    human = check_human(jset, args.human)  # as correlate's: never guessed among several
    # the set's files by name, then its counts ("3 read, 3 scored" named no set at all)
    named = ", ".join(jset.source) if jset.source else args.dataset
    counts = jset.describe()
    if named.startswith("SYNTHETIC"):  # the demo's name says so already
        counts = counts.removeprefix("SYNTHETIC demo: ")
    source = f"{named} ({counts})"
    return jset.candidates, jset.references, jset.human(human), human, source, jset


def _perturb_options_apply(args: argparse.Namespace) -> None:
    """Refuse an option this run would not use (it was ignored without a word)."""
    # the input limits hold a judgment file given as --dataset; nothing else is read
    limits = ("max_bytes", "max_caption_tokens", "max_references")
    if args.dataset is None:
        unused, where = (
            given_options(args, "images", "format", "preset", "human", *limits),
            "without --dataset",
        )
    elif args.dataset in PERTURB_DATASETS:
        # coco-val's captions have no human scores
        human = ("human",) if args.dataset == "coco-val" else ()
        unused = given_options(args, "candidate", "reference", "format", "preset", *human, *limits)
        where = f"with --dataset {args.dataset}"
    else:
        unused = given_options(args, "candidate", "reference", "images")
        where = "with a judgment file as --dataset"
    refuse_unused(unused, where)


def _cmd_perturb(args: argparse.Namespace) -> int:
    try:
        return _perturb(args)
    except CapevalError as exc:  # a judgment file named by the path given, as correlate's
        if args.dataset and args.dataset not in PERTURB_DATASETS:
            exc.args = (as_given(str(exc), args.dataset), *exc.args[1:])
        raise


def _perturb(args: argparse.Namespace) -> int:
    from capeval_core import perturb as lab

    _perturb_options_apply(args)
    keys = metric_keys(args.metrics, PERTURB_KEYS)
    refuse_unused_metric_options(args, keys, default=not args.metrics)
    name = lab.perturbation_spec(args.perturbation).name
    idf = args.cider_idf or ("corpus" if args.dataset else "coco-val2014")
    options = {"cider_d": {"idf": idf}}
    if args.dataset:
        cands, refs, human, human_name, source, jset = _perturb_dataset(args)
        _warn_untagged(name, cands, "--dataset")
        if jset is not None and args.dataset not in PERTURB_DATASETS:
            _warn_left_out(jset, args.dataset)
        with _parse_progress():
            result = lab.perturb_batch(
                cands,
                refs,
                args.perturbation,
                keys,
                seed=args.seed,
                tokenizer=args.tokenizer,
                options=options,
                human=human,
                human_name=human_name,
                source=source,
                on_error="skip",
            )
        summary = result.summary()
        corr = result.correlations()
        out: dict[str, Any] = {
            "perturbation": result.name,
            "seed": result.seed,
            "dataset": source,
            "n": len(result),
            "n_changed": int(result.changed.sum()),
            "deltas": {
                row["key"]: {k: row[k] for k in summary.columns if k not in ("key", "signature")}
                for row in summary.to_dict("records")
            },
            "correlations": {
                f"{row['key']}/{row['method']}": {"before": row["before"], "after": row["after"]}
                for row in corr.to_dict("records")
            },
            "signatures": dict(result.signatures),
            "skipped": dict(result.skipped),
            # as correlate's JSON: the rows dropped as the set was read, and where
            "dropped": dict(jset.dropped) if jset else {},
            "dropped_at": dict(jset.dropped_at) if jset else {},
        }
        if not args.json:
            print(
                f"{result.name} on {files.printable(source)}: {out['n_changed']} of "
                f"{out['n']} changed"
            )
            # every number as score writes it (pandas mixed 0.000008 with -4.764674e-09)
            print(summary.drop(columns="signature").to_string(index=False, float_format=value_text))
            if not corr.empty:
                shown = files.printable(human_name)
                print(f"\ncorrelation with human scores ({shown}), before -> after")
                print(corr.to_string(index=False, float_format=value_text))
            print_signatures(out["signatures"])
    else:
        if args.candidate is None or not args.reference:
            raise InputError("give --candidate and --reference (or --dataset)")
        _warn_untagged(name, [args.candidate], "--candidate")
        with _parse_progress():
            p = lab.perturb(args.candidate, args.perturbation, seed=args.seed)
        blank = [str(i) for i, r in enumerate(args.reference, start=1) if not r.strip()]
        if blank:  # as `score` says of a references file's
            print(
                f"capeval: warning: --reference {', '.join(blank)} (in the order given) is "
                "blank: scored as an empty reference, as pycocoevalcap scores it",
                file=sys.stderr,
            )
        errors: dict[str, CapevalError] = {}
        (scores,) = lab.score_perturbations(
            [p], args.reference, keys, tokenizer=args.tokenizer, options=options, errors=errors
        )
        out = {
            "original": p.original,
            "perturbed": p.perturbed,
            "changed": [
                {
                    "kind": c.kind,
                    "position": c.position,
                    "new_position": c.new_position,
                    "old": c.old,
                    "new": c.new,
                }
                for c in p.changed
            ],
            "note": p.note,
            "perturbation": p.name,
            "seed": p.seed,
            "scores": {
                k: {"before": scores.before[k], "after": scores.after[k]} for k in scores.before
            },
            "signatures": dict(scores.signatures),
            "skipped": {k: str(e) for k, e in errors.items()},
        }
        if not args.json:
            shown = files.printable
            print(f"original:  {shown(p.original)}\nperturbed: {shown(p.perturbed)}")
            print(f"({shown(p.note)})")
            for k in scores.before:
                b, a = scores.before[k], scores.after[k]
                # as score writes its values: 1.03e-08 read 0.000000 (the JSON keeps them whole)
                print(f"{k:<10} {value_text(b)} -> {value_text(a)}  ({delta_text(b, a)})")
            print_signatures(out["signatures"])
        if "cider_d" in scores.notes:  # each caption is scored as a set of one image
            print(
                "capeval: warning: cider_d: with --cider-idf corpus each caption is scored "
                "alone, a set of one image whose references are its own, so every n-gram's "
                "idf is log 1 - log 1 = 0 and so is every score; use --cider-idf coco-val2014",
                file=sys.stderr,
            )
    for key, msg in out["skipped"].items():
        print(f"capeval: warning: {key} skipped: {files.printable(msg)}", file=sys.stderr)
    if args.json:
        print(json.dumps(jsonable(out), indent=1, allow_nan=False))
    return 0


def _warn_left_out(jset: Any, dataset: str) -> None:
    """The rows a judgment file's set dropped (its summary counts them) and its notes
    (references left out), which perturb did not say, as warnings naming the path given; a
    note of Williams tests is left out, as perturb runs none."""
    dropped = dropped_warning(jset, jset.source[0]) if jset.source else None
    notes = [note for note in jset.notes if "Williams test" not in note]
    for line in [dropped, *notes] if dropped else notes:
        print(f"capeval: warning: {cli_message(as_given(line, dataset))}", file=sys.stderr)


@contextlib.contextmanager
def _parse_progress() -> Iterator[None]:
    """A bar on stderr while a long caption's parse (synonym's tagger) says how far it is:
    a 400-word caption ran for many minutes without a word; nothing on a quick run."""
    from capeval_core.progress import StderrBar, how_far, listening

    with (
        StderrBar("capeval perturb", "%", shown=False, leave=False) as bar,
        listening(lambda label: bar(how_far(label) or 0, 100, label)),
    ):
        yield


def _warn_untagged(name: str, captions: Sequence[str], option: str) -> None:
    """Say which captions a perturbation cannot handle as a whole: synonym's tagger leaves a
    sentence over the parser's limit untagged, so its words get no synonym."""
    if name != "synonym":
        return
    from capeval_core.senses import over_the_limit
    from capeval_core.spice.pcfg.parser import JAR_MAX_WORDS

    over = [(i, n) for i, c in enumerate(captions, start=1) for n in over_the_limit(c)[:1]]
    if not over:
        return
    which = (
        f"a sentence of {over[0][1]:,} words"
        if len(captions) == 1
        else f"{len(over):,} candidate(s) have a sentence (the first: candidate {over[0][0]:,}, "
        f"{over[0][1]:,} words)"
    )
    verb = " is" if len(captions) == 1 else ""
    print(
        f"capeval: warning: {option}: {which}{verb} over the parser's limit of {JAR_MAX_WORDS} "
        "words: its words get no part of speech, so no synonym",
        file=sys.stderr,
    )


def add_parser(sub: Any) -> None:
    """The ``perturb`` subcommand and its options."""
    pert = sub.add_parser(
        "perturb", help="perturb a caption (or every candidate of a dataset) and rescore it"
    )
    pert.add_argument("--candidate", metavar="TEXT", help="the caption to perturb")
    pert.add_argument(
        "--reference", action="append", metavar="TEXT", help="a reference (repeat the option)"
    )
    perturbation = pert.add_argument(
        "--perturbation", required=True, metavar="NAME", help="a registered perturbation"
    )
    pert.add_argument("--seed", type=SEED, default=0, help="seed of the perturbation (default 0)")
    add_metrics_option(pert, PERTURB_KEYS)
    pert.add_argument("--json", action="store_true", help="print a JSON object on stdout")
    add_tokenizer_option(pert)
    pert.add_argument(
        "--cider-idf",
        choices=["corpus", "coco-val2014"],
        help="CIDEr-D document frequencies (default: coco-val2014 for one caption, whose own "
        "references give every weight 0; corpus for --dataset)",
    )
    pert.add_argument(
        "--dataset",
        metavar="NAME|PATH",
        help=f"batch mode: {' or '.join(PERTURB_DATASETS)}, or a graded judgment file (with "
        "--format; held to the input limits below)",
    )
    pert.add_argument(
        "--images",
        type=whole_number(1),
        help=f"images of coco-val/demo-graded (default {PERTURB_IMAGES:,})",
    )
    fmt = pert.add_argument(
        "--format", help="needed with a judgment file as --dataset: its format, a graded one"
    )
    pert.add_argument("--preset", help="protocol preset of a --dataset file")
    pert.add_argument(
        "--human",
        help="human-score column (default: the one named score, human or rating, else the only "
        "numeric one)",
    )
    add_limit_options(pert, unset=True)  # a judgment file as --dataset is held to them
    pert.set_defaults(func=_cmd_perturb)
    pert.refuses = json_takes_no_value("perturb")

    def helps() -> None:  # the registries' names, imported for --help only
        from capeval_core.judgments import LOADERS
        from capeval_core.perturb import PERTURBATIONS

        perturbation.help = f"the perturbation: {', '.join(PERTURBATIONS)}"
        graded = ", ".join(k for k, loader in LOADERS.items() if loader.kind == "graded")
        fmt.help = (
            f"needed with a judgment file as --dataset: its format, a graded one ({graded}); "
            "a pairwise set is refused"
        )

    pert.helps = helps
