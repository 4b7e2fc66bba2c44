"""``capeval correlate``: metrics correlated with human judgments (graded sets), or their
pairwise accuracy (pairwise sets), with intervals and Williams tests."""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import re
import sys
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from capeval_core import files
from capeval_core.cli.arguments import (
    CORRELATE_FLAGS,
    SEED,
    add_limit_options,
    add_metric_option_option,
    add_metrics_option,
    add_spice_limit_option,
    add_tokenizer_option,
    add_workers_option,
    check_human,
    given_options,
    merged_options,
    metric_keys,
    metric_options,
    refuse_unused,
    refuse_unused_metric_options,
    spice_options,
    split_keys,
    unknown_metric_said,
    whole_number,
    worker_count,
)
from capeval_core.cli.output import (
    bar_progress,
    cli_message,
    cli_worded,
    command_flags,
    dropped_warning,
    held_warnings,
    jsonable,
    plan_outputs,
    print_signatures,
    tqdm_write,
)
from capeval_core.coco_files import LIMIT_FLAGS
from capeval_core.errors import CapevalError, CapevalWarning, InputError, MachineWarning
from capeval_core.metrics import METRICS, REPORTED_KEYS, check_reported_key
from capeval_core.progress import stderr_tqdm
from capeval_core.stats.intervals import MAX_RESAMPLES

#: keys scored by ``correlate`` when --metrics is not given (fast, no extra resources)
CORRELATE_KEYS = ("bleu_4", "rouge_l", "cider_d")


#: sets whose papers report one Kendall variant (the set's ``kendall_variant``)
PUBLISHED_KENDALL = ("flickr8k-expert", "flickr8k-cf", "composite")


def _correlate_keys(values: Sequence[str] | None) -> tuple[list[str], list[str]]:
    """The built-in --metrics keys (checked against the registry before any file is read),
    and the other names, which may be external metrics of the set (checked once it is
    loaded)."""
    names = split_keys(values or ())
    if values and not names:
        raise InputError("--metrics: no metric key given; see `capeval metrics`")
    # SPICE's categories go with the other names: a set may have its own metric of that
    # name (a "metric:spice_object" column); else they are refused once it is loaded
    other = [k for k in names if k not in METRICS and k not in REPORTED_KEYS]
    builtin = [k for k in names if k not in other]
    if not names:
        builtin = list(CORRELATE_KEYS)
    return metric_keys(builtin, ()) if builtin else [], other


def _external_keys(jset: Any, named: Sequence[str]) -> list[str]:
    """External metrics to correlate: those --metrics names, else every one the set has
    (``metric:`` columns, --metric-scores); a name that is neither built in nor external is
    the registry's unknown-key error."""
    for name in named:
        if name not in jset.external_names:
            with unknown_metric_said():  # unknown, or SPICE's category (score's refusal)
                check_reported_key(name)
    return list(named) if named else list(jset.external_names)


def _systems_for(jset: Any, level: str) -> list[str] | None:
    """The items' systems for ``--level system`` (None at item level); a graded set without
    a system for every item is an error saying so."""
    if level != "system":
        return None
    systems = jset.systems()
    if any(s is None for s in systems):
        first = next(it.id for it, s in zip(jset.items, systems, strict=True) if s is None)
        where = jset.source[0] if jset.source else "the judgments"
        raise InputError(
            f"{where}: --level system needs a system for every item (a `system` column); "
            f"{sum(s is None for s in systems):,} of {len(systems):,} items have none "
            f"(the first: id {first!r})"
        )
    from capeval_core.stats.within_systems import too_few_systems

    why = too_few_systems(len(set(systems)))
    if why:  # said before any scoring (it was said after it)
        where = jset.source[0] if jset.source else "the judgments"
        raise InputError(f"{where}: no system-level correlation can be shown: {why}")
    return systems


def _correlate_options_apply(args: argparse.Namespace) -> tuple[str, int, int, str]:
    """Refuse an option the kind of set --format gives would not use, before any file is
    read (a pairwise set gives pairwise accuracies: no human-score column, level, intervals
    or Williams tests; a graded set draws nothing at random but its bootstrap resamples),
    then the defaults of those left out: (level, resamples, seed, Williams correlation)."""
    from capeval_core.judgments import LOADERS

    if LOADERS[args.format].kind == "pairwise":
        refuse_unused(
            given_options(args, "human", "level", "resamples", "williams_correlation"),
            f"with a pairwise set (--format {args.format} gives pairwise accuracies)",
        )
    elif not args.resamples:
        refuse_unused(
            given_options(args, "seed"),
            "with a graded set without --resamples (it seeds the bootstrap resamples)",
        )
    seed = 0 if args.seed is None else args.seed
    return args.level or "item", args.resamples or 0, seed, args.williams_correlation or "pearson"


def _cmd_correlate(args: argparse.Namespace) -> int:
    try:
        warn = Warned(args)
        with warn.heard():
            return _correlate(args, warn)
    except CapevalError as exc:
        exc.args = (as_given(str(exc), args.judgments, args.metric_scores), *exc.args[1:])
        raise


class Warned:
    """The warnings of a run: each printed as one ``capeval: warning:`` line naming a file by
    the path given, as the errors name it, and kept for the JSON's ``warnings`` (which said
    nothing of a row ignored or a reference left out) naming it by file name, as the JSON
    names its inputs."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.judgments, self.metric_scores = args.judgments, args.metric_scores
        self.flags = command_flags(args)
        self.lines: list[str] = []

    def __call__(self, line: str, *, kept: bool = True) -> None:
        said = cli_message(line, self.flags)
        if kept:  # of the inputs and the numbers, not of this machine's cache
            self.lines.append(said)
        tqdm_write(f"capeval: warning: {as_given(said, self.judgments, self.metric_scores)}")

    @contextlib.contextmanager
    def heard(self) -> Iterator[None]:
        """capeval's warnings shown while the block runs (a loader's, a metric's) said
        through this one; any other as before."""
        previous = warnings.showwarning

        def show(message, category, filename, lineno, file=None, line=None) -> None:
            if issubclass(category, CapevalWarning):
                self(str(message), kept=not issubclass(category, MachineWarning))
            else:
                previous(message, category, filename, lineno, file, line)

        with warnings.catch_warnings():
            warnings.showwarning = show
            yield


#: a message's first word when it is a file's name: "g.csv, line 2: ...", "one.csv: ..."
_LEADING_NAME = re.compile(r"[^\s,:/\\]+(?=[,:](?:\s|$))")


def as_given(message: str, judgments: str, metric_scores: str | None = None) -> str:
    """``message`` with the file name it starts with (the judgment loaders name their files
    by name, as the app shows an upload) written as the path given on the command line, as
    ``score`` and ``compare`` name their files; a file of a --judgments folder as the folder
    given joined with its name.

    >>> as_given("g.csv, line 2: not a number", "data/g.csv")
    'data/g.csv, line 2: not a number'
    >>> as_given("Flickr8k.token.txt not found beside it", "data/expert.txt")
    'Flickr8k.token.txt not found beside it'
    >>> as_given("Flickr8k.token.txt: no caption 12", "data/expert.txt")
    'data/Flickr8k.token.txt: no caption 12'
    >>> as_given("m.csv, line 3: no such id", "data/g.csv", "mine/m.csv")
    'mine/m.csv, line 3: no such id'
    >>> as_given("--level system needs a system", "data/g.csv")
    '--level system needs a system'
    """
    match = _LEADING_NAME.match(message)
    if not match or match.group().startswith("-"):  # an option: --metrics, ...
        return message
    name = match.group()
    given = {Path(p).name: p for p in (metric_scores, judgments) if p and not Path(p).is_dir()}
    if name in given:
        path = given[name]
    else:  # a file read from the --judgments folder, or beside the --judgments file
        folder = judgments if Path(judgments).is_dir() else os.path.dirname(judgments)
        if not folder or not re.search(r"\.[A-Za-z][A-Za-z0-9]*$", name):
            return message
        path = os.path.join(folder, name)
    return path + message[match.end() :]


def _correlate(args: argparse.Namespace, warn: Warned) -> int:

    from capeval_core.judgments import load_judgments
    from capeval_core.judgments.scoring import (
        judgments_left_out_json,
        left_out_lines,
        on_common_items,
        score_judgments,
    )
    from capeval_core.stats import pairwise_accuracy, williams_matrix

    # the table goes to stdout unless the JSON does: `--json -` prints the JSON alone, as compare
    show = print if args.json != "-" else (lambda *_args, **_kwargs: None)
    keys, maybe_external = _correlate_keys(args.metrics)
    refuse_unused_metric_options(args, keys, default=not args.metrics)
    more_options = metric_options(args, keys, CORRELATE_FLAGS)
    level, resamples, seed, williams_correlation = _correlate_options_apply(args)
    inputs = [("--judgments file", args.judgments), ("--metric-scores file", args.metric_scores)]
    plan_outputs(args, inputs)
    for option, value in (("--judgments", args.judgments), ("--metric-scores", args.metric_scores)):
        if value and not Path(value).exists():
            raise InputError(f"{option} {value}: no such file or folder")
    limits = {name: getattr(args, name) for name in LIMIT_FLAGS}
    # a graded file's rows need a value in the --human column only, not in every numeric one
    columns = {"score_columns": [args.human]} if args.human and args.format == "graded" else {}
    with held_warnings():
        jset = load_judgments(args.judgments, args.format, args.preset, **limits, **columns)
        # the files read beside it or from its folder, now known (a file given as
        # --judgments reads its companions from its own folder)
        given = Path(args.judgments)
        folder = given if given.is_dir() else given.parent
        read = [p for p in (folder / name for name in jset.source) if p.is_file()]
        inputs += [(f"{p.name} of --judgments", str(p)) for p in read]
        plan_outputs(args, inputs)
        if args.metric_scores:
            from capeval_core.judgments.external import join_scores_file

            jset = join_scores_file(jset, args.metric_scores, max_bytes=limits["max_bytes"])
    keys += _external_keys(jset, maybe_external)
    if jset.kind == "graded" and len(keys) < 2:  # said before any scoring
        refuse_unused(
            given_options(args, "williams_correlation"),
            "with one metric (a Williams test compares two)",
        )
    human_name = check_human(jset, args.human)
    if jset.kind == "graded":  # said before any scoring, with the file
        _systems_for(jset, level)  # again after scoring, on the items kept
        if len(jset) < 2:
            where = jset.source[0] if jset.source else args.judgments
            raise InputError(f"{where}: {jset.describe()}; a correlation needs at least 2 items")
    if jset.kind == "pairwise":
        from capeval_core.judgments.protocols import label_counts, missing_labels_warning

        if label_counts(jset)[1] == 0:
            missing = str(missing_labels_warning(jset)).rstrip(".")
            raise InputError(f"{Path(args.judgments).name}: {missing}")
    # the files read, as the pages show them: a blank caption or a dropped row is named by
    # its line, which is one of theirs
    summary = files.printable(f"{args.format} ({', '.join(jset.source)}): {jset.describe()}")
    print(summary, file=sys.stderr)
    if jset.kind == "graded":  # which column the numbers are about, chosen or by default
        print(f"human score: {human_name!r}", file=sys.stderr)
    dropped = dropped_warning(jset, jset.source[0] if jset.source else args.judgments)
    if dropped:  # the summary counts them; a warning says rows were left out
        warn(dropped)
    williams_runs = jset.kind == "graded" and len(keys) > 1
    for note in jset.notes:  # a line of stderr that is not the summary is a warning
        if williams_runs or "Williams test" not in note:  # of a test that runs, only
            warn(note)
    protocol = None
    if jset.kind == "pairwise":
        from capeval_core.judgments.protocols import protocol_for

        protocol = protocol_for(jset)
        missing = missing_labels_warning(jset)
        if missing:  # named by its file or folder (a note above says where, if it can)
            warn(f"{Path(args.judgments).name}: {missing.rstrip('.')}")
    n_references, draws = protocol.sampling if protocol is not None else (5, 5)
    workers = worker_count(args.workers)  # its warning before the bar, not on the bar's line
    with stderr_tqdm(total=None, desc="scoring", unit="metric") as bar:
        progress = bar_progress(bar)

        scores = score_judgments(
            jset,
            keys,
            tokenizer=args.tokenizer,
            options=merged_options(
                {"spice": spice_options(None, args.spice_max_words)}, more_options
            ),
            n_references=n_references,
            draws=draws,
            seed=seed,
            workers=workers,
            on_progress=progress,
        )
    # the statistics compare metrics on the items every one of them scored
    left_out = left_out_lines(jset, scores)
    full, left_json = jset, cli_worded(judgments_left_out_json(jset, scores))
    jset, scores = on_common_items(jset, scores)
    if left_out and jset.kind == "graded" and len(jset) < 2:  # one line, not warnings first
        # each metric's count, and its first item's reason (the limit to change, as a rule)
        why = "; ".join(
            f"{head}, the first: {rest.split('; ')[0]}"
            for head, _, rest in (ln.partition(" (not scored): ") for ln in left_out)
            if rest
        )
        raise InputError(
            f"{args.judgments}: {len(jset)} of {len(full):,} items scored by every metric "
            f"({cli_message(why)}): a correlation needs at least 2"
        )
    if left_out:  # what the command computes on them: it has no combined metric
        uses = "correlations and Williams tests use" if jset.kind == "graded" else "accuracies use"
        warn("; ".join(left_out).replace(_LIBRARY_USES, uses))
    degenerate = _degenerate_metrics(
        scores, jset.kind, in_json=bool(args.json), williams=williams_runs
    )
    for key, why in degenerate.items():
        warn(f"{key} {why}")
    if protocol is not None:
        from capeval_core.judgments.protocols import (
            ALL_REFERENCES,
            accuracy_signature,
            label_counts,
        )

        prefs = jset.preferences()
        results = {
            k: pairwise_accuracy(
                scores.values_a[k],
                scores.values_b[k],
                prefs,
                jset.categories(),
                metric_tie=protocol.metric_tie,  # type: ignore[arg-type]
                human_tie=protocol.human_tie,  # type: ignore[arg-type]
                seed=seed,
            )
            for k in scores.keys
        }
        accuracy = {k: r.as_dict() for k, r in results.items()}
        knobs = {
            "n_references": n_references,
            "draws": draws,
            "seed": seed,
            "metric_tie": protocol.metric_tie,
            "human_tie": protocol.human_tie,
        }
        out: dict[str, Any] = {
            "n_pairs": len(full),
            "n_labelled": label_counts(full)[1],
            "accuracy": accuracy,
            "signatures": {
                k: accuracy_signature(scores.signatures[k], full, **knobs) for k in scores.keys
            },
            "preset": jset.preset,
        }
        cats = list(next(iter(accuracy.values()))) if accuracy else []
        width = max([len(k) for k in accuracy] + [6])
        show(f"{'metric':<{width}}  " + "  ".join(f"{c:>8}" for c in cats))
        for k, row in accuracy.items():
            show(f"{k:<{width}}  " + "  ".join(f"{row[c]:>8.4f}" for c in cats))
        if results:
            first = next(iter(results.values()))
            ties = (
                "dropped" if first.human_tie == "drop" else f"broken at random (seed {first.seed})"
            )
            # a pair with fewer references than are sampled uses them all, in one draw
            refs = "all" if n_references >= ALL_REFERENCES else f"up to {n_references}"
            print(
                f"preset {jset.preset or '(none)'}: {first.n:,} labelled pairs scored, "
                f"{first.n_human_ties:,} human ties {ties}; a metric tie counts as "
                f"{first.metric_tie}; {first.draws} draw(s) of {refs} references",
                file=sys.stderr,
            )
    else:
        from capeval_core.judgments.analysis import at_level, correlation_table

        human = jset.human(human_name)
        name = human_name
        if human.size and np.all(human == human[0]):
            warn(
                f"the human score {name!r} is constant ({human[0]:g} for all "
                f"{human.size:,} items): every correlation is undefined"
                + (" (null in the JSON)" if args.json else "")
            )
        systems = _systems_for(jset, level)
        methods = ("pearson", "spearman", "kendall_b", "kendall_c")
        correlations: dict[str, dict[str, float]] = {}
        pvalues: dict[str, dict[str, float]] = {}  # scipy's, of each correlation
        intervals: dict[str, dict[str, list[float]]] = {}
        left_resamples: dict[str, dict[str, int]] = {}  # resamples with no correlation
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # constant metrics give NaN (null in the JSON)
            warnings.simplefilter("default", MachineWarning)  # a damaged or unwritable cache
            table = correlation_table(
                human,
                {k: scores.values[k] for k in scores.keys},
                ci_methods=methods if resamples else (),
                systems=systems,
                n_resamples=max(resamples, 1),
                seed=seed,
                groups=jset.resampling_groups() if systems is None else None,
            )
            for row in table.itertuples():
                correlations.setdefault(row.metric, {})[row.method] = float(row.statistic)
                pvalues.setdefault(row.metric, {})[row.method] = float(row.pvalue)
                if resamples:
                    bounds = [float(row.ci_low), float(row.ci_high)]
                    intervals.setdefault(row.metric, {})[row.method] = bounds
                    if row.ci_left_out:
                        left_resamples.setdefault(row.metric, {})[row.method] = row.ci_left_out
            level_human, level_values = at_level(
                human, {k: v for k, v in scores.values.items() if k not in degenerate}, systems
            )
            matrix = (
                williams_matrix(level_human, level_values, williams_correlation)
                if len(level_human) > 3 and len(level_values) > 1
                else None
            )
        if not (human.size and np.all(human == human[0])):  # else said above, for all
            every_human, every_value = at_level(human, dict(scores.values), systems)
            for line in _nan_lines(
                correlations,
                every_human,
                {k: v for k, v in every_value.items() if k not in degenerate},
                name,
                "system" if systems is not None else "item",
                williams_correlation if matrix is not None else None,
                in_json=bool(args.json),
            ):
                warn(line)
        if matrix is not None:  # a distance's r < 0: its |r| is tested, as WMT's
            negative = [k for k, r in matrix.human_correlations.items() if r < 0]
            if negative:
                warn(
                    "the Williams tests compare absolute correlations (|r|, as WMT's): "
                    f"{', '.join(negative)} correlate{'s' if len(negative) == 1 else ''} "
                    f"negatively with {name!r} ({williams_correlation}), so a p-value says "
                    "its |r| beats another's, not that it is the better metric"
                )
            if matrix.opposed:  # |r23| is right for a distance, not for these pairs
                pairs = "; ".join(f"{a} and {b} ({r:.4f})" for a, b, r in matrix.opposed)
                warn(
                    f"the Williams tests take |r| between two metrics too (as WMT's), but "
                    f"these, each turned to agree with {name!r}, correlate negatively with "
                    f"each other ({williams_correlation}): {pairs}; their p is smaller than "
                    "the test on the signed correlation (Graham & Baldwin's script) gives"
                )
        if len(level_human) <= 3 and len(level_values) > 1:  # the JSON's {} said nothing
            unit = "systems" if systems is not None else "items"
            in_json = '; "williams" is empty in the JSON' if args.json else ""
            got = f"(got {len(level_human):,}){in_json}"
            warn(f"no Williams test: it needs at least 4 {unit} {got}")
        williams = matrix.as_dict() if matrix is not None else {}
        out = {
            "n_rows": len(full),
            "dropped": dict(jset.dropped),
            "dropped_at": dict(jset.dropped_at),  # where, apart: a reason is one key
            "format": jset.format,
            "preset": jset.preset,  # it chooses rows and human scores: kasai2022 or -with-human
            "human": name,
            "level": level,
            "correlations": correlations,
            "pvalues": pvalues,
            "williams": williams,
            "signatures": dict(scores.signatures),
        }
        if matrix is not None:  # the p-values' settings, as the text's heading gives them
            out["williams_test"] = {
                "correlation": matrix.correlation,
                "alternative": matrix.alternative,
                # as WMT's: a metric where lower is better (a distance) by its strength
                "compares": "absolute correlations",
            }
        if resamples:
            out["intervals"] = intervals
            out["resampling"] = {
                "n_resamples": resamples,
                "seed": seed,
                "over": "items within systems"
                if systems is not None
                else "captions (each caption's rows together)"
                if jset.resampling_groups() is not None
                else "items",
            }
            if left_resamples:  # the intervals stand on the other resamples
                out["resampling"]["left_out"] = left_resamples
                most = max(n for row in left_resamples.values() for n in row.values())
                warn(
                    f"up to {most:,} of {resamples:,} resamples had one side's "
                    f"scores all equal (no correlation) in the intervals of "
                    f"{', '.join(left_resamples)}; those intervals are drawn from the others"
                    + ('; "resampling.left_out" in the JSON counts them' if args.json else "")
                )
        width = max([len(k) for k in correlations] + [6])
        cells = {  # with --resamples, each value's interval beside it (only the JSON had them)
            k: [_with_interval(v, intervals.get(k, {}).get(m)) for m, v in row.items()]
            for k, row in correlations.items()
        }
        cell = max([len(c) for row in cells.values() for c in row] + [9])
        show(f"{'metric':<{width}}  " + "  ".join(f"{m:>{cell}}" for m in methods))
        for k, row_cells in cells.items():
            show(f"{k:<{width}}  " + "  ".join(f"{c:>{cell}}" for c in row_cells))
        if any("[" in c for row_cells in cells.values() for c in row_cells):  # one is shown
            show(
                f"[low, high]: 95% percentile bootstrap intervals, {resamples:,} resamples over "
                f"{out['resampling']['over']} (seed {seed})"
            )
        if jset.format in PUBLISHED_KENDALL:  # the column to read beside a paper's table
            show(
                f"kendall_{jset.kendall_variant}: the Kendall variant papers report on "
                f"{jset.format} (CLIPScore's convention)"
            )
        if matrix is not None:
            from capeval_core.stats.correlation import p_value_text

            show(
                f"\nWilliams test p-values ({matrix.alternative}, {matrix.correlation}; "
                "row's |r| beats column's; '-' = not tested)"
            )
            show(f"{'':<{width}}  " + "  ".join(f"{m:>9}" for m in matrix.metrics))
            for i, a in enumerate(matrix.metrics):
                shown = ("-" if math.isnan(p) else p_value_text(p) for p in matrix.pvalues[i])
                cells = (f"{c:>9}" for c in shown)
                show(f"{a:<{width}}  " + "  ".join(cells))
    for key, msg in scores.skipped.items():
        warn(f"{key} skipped: {msg}")
    if left_json["n"]:  # only then: the JSON of a run that scored everything stays as it was
        out["left_out"] = left_json
    # what the summary line says of the file: its blank captions and references, the references read
    # beside it (the JSON had neither)
    out["blank"] = _blank_json(full.blank)
    out["blank_references"] = _blank_json(full.blank_references)
    out.update(_references_named(full))
    # the files read, by name with a content digest, as score's JSON names its references
    out["judgments"] = {p.name: _file_digest(p) for p in read}
    if args.metric_scores:
        out["metric_scores"] = {Path(args.metric_scores).name: _file_digest(args.metric_scores)}
    out["warnings"] = warn.lines  # what stderr said: rows ignored, references left out, ...
    if args.json != "-":  # the numbers' signatures end the text, as score's and compare's
        print_signatures(out["signatures"])
    if args.json:
        text = json.dumps(jsonable(out), indent=1, allow_nan=False)
        if args.json == "-":
            print(text)
        else:
            files.write_all([("--json", args.json, text + "\n")])
    return 0


#: the library's line on what the statistics use, for every caller (the app has a combined
#: metric); the command says what it computes
_LIBRARY_USES = "correlations, Williams tests, the combined metric and accuracies use"


def _file_digest(path: str | Path) -> str:
    """The content digest of a file read (:func:`capeval_core.files.text_digest` of its
    text; bytes that are not UTF-8 kept as they are)."""
    text = Path(path).read_bytes().decode("utf-8", errors="surrogateescape")
    return files.text_digest(text)


def _blank_json(blank: Sequence[tuple[str, str]]) -> dict[str, str]:
    """:attr:`JudgmentSet.blank` as the summary line places them, by column (a column blank
    in two files of a dataset gets both places).

    >>> _blank_json([("candidate", "line 3"), ("caption", "a.txt, line 2"),
    ...              ("caption", "b.txt, line 9")])
    {'candidate': 'line 3', 'caption': 'a.txt, line 2; b.txt, line 9'}
    """
    out: dict[str, str] = {}
    for column, where in blank:
        out[column] = f"{out[column]}; {where}" if column in out else where
    return out


def _references_named(jset: Any) -> dict[str, str]:
    """The references of a set that reads them from elsewhere than its judgment file (THumB:
    COCO val2014's installed captions, or its own references file), named as ``score
    --json`` names its references; nothing for a set whose file holds its references."""
    if jset.format != "thumb" or len(jset.source) < 2:
        return {}
    from capeval_core.coco_files import describe_references

    return describe_references(jset.source[1], [it.references for it in jset.items])


def _with_interval(value: float, bounds: list[float] | None) -> str:
    """A table cell: the correlation, and its interval when one was computed.

    >>> _with_interval(0.41234, [0.35, 0.4712]), _with_interval(0.5, None)
    ('0.4123 [0.3500, 0.4712]', '0.5000')
    """
    if bounds is None or math.isnan(value):
        return f"{value:.4f}"
    low, high = bounds
    return f"{value:.4f} [{low:.4f}, {high:.4f}]"


def _nan_lines(
    correlations: dict[str, dict[str, float]],
    human: np.ndarray,
    values: dict[str, np.ndarray],
    human_name: str,
    unit: str,
    williams: str | None,
    *,
    in_json: bool,
) -> list[str]:
    """One warning per reason some correlations of ``values`` (at the level correlated) are
    NaN: a NaN printed as ``nan`` with exit 0 and no word read as a result (human scores of
    1e308 overflow Pearson's sums). The metrics and the constant human score that have
    their own warning are left out of ``values`` by the caller."""
    by_reason: dict[str, dict[str, list[str]]] = {}  # why -> metric -> methods
    for key, x in values.items():
        for method, r in correlations.get(key, {}).items():
            if math.isnan(r):
                why = _why_nan(human, x, method, f"the human score {human_name!r}", key, unit)
                by_reason.setdefault(why, {}).setdefault(key, []).append(method)
    lines = []
    for why, cells in by_reason.items():
        groups: dict[tuple[str, ...], list[str]] = {}  # the metrics with the same methods
        for key, methods in cells.items():
            groups.setdefault(tuple(methods), []).append(key)
        which = "; ".join(f"{', '.join(m)} of {', '.join(keys)}" for m, keys in groups.items())
        verb = "is" if sum(map(len, cells.values())) == 1 else "are"
        null = " (null in the JSON)" if in_json else ""
        tested = [key for key, methods in cells.items() if williams in methods]
        left = f"; the Williams tests ({williams}) leave {', '.join(tested)} out" if tested else ""
        lines.append(f"{which} {verb} NaN{null}: {why}{left}")
    return lines


def _why_nan(
    human: np.ndarray, x: np.ndarray, method: str, human_side: str, key: str, unit: str
) -> str:
    """Why the ``method`` correlation of ``x`` with ``human`` is NaN, in words: a side whose
    values overflow a float or are all equal, else the reason scipy gives."""
    from capeval_core.stats.correlation import correlate

    sides = ((human_side, human), (key, x))
    for side, a in sides:
        if not np.isfinite(a).all():  # the loaders take finite values: system means
            return f"the {unit} means of {side} overflow a float"
    for side, a in sides:
        if np.all(a == a[0]):
            return f"{side} is the same ({a[0]:g}) for every {unit}"
    with warnings.catch_warnings(record=True) as caught, np.errstate(all="warn"):
        warnings.simplefilter("always")
        correlate(x, human, method)
    said = [str(w.message) for w in caught]
    if any("overflow" in m for m in said):
        for side, a in sides:
            with np.errstate(all="ignore"):
                total = a.sum()
            if not np.isfinite(total):
                return (
                    f"{side} overflows a float (its values, up to {np.max(np.abs(a)):g}, sum "
                    f"past the largest float, {np.finfo(float).max:.3g})"
                )
        return f"the values overflow a float (scipy: {said[0]})"
    return f"scipy: {said[0]}" if said else "scipy gives no reason"


def _degenerate_metrics(
    scores: Any, kind: str, *, in_json: bool = False, williams: bool = True
) -> dict[str, str]:
    """Metrics no correlation or test can use: fewer than two finite values, or one value
    throughout (each with why, for a warning); they stay in the tables (as NaN, null in
    the JSON) and are left out of the Williams tests (said when ``williams`` run)."""
    out = {}
    for key in scores.keys:
        if kind == "pairwise":
            values = np.concatenate([scores.values_a[key], scores.values_b[key]])
        else:
            values = np.asarray(scores.values[key], dtype=float)
        finite = values[np.isfinite(values)]
        if finite.size < 2:
            out[key] = (
                f"has {finite.size} finite value(s) of {values.size:,}: its correlations are "
                "undefined and it is left out of the tests"
            )
        elif np.all(finite == finite[0]):
            out[key] = f"is constant ({finite[0]:g} for all {values.size:,} values): " + (
                "every pair is a metric tie"
                if kind == "pairwise"
                else "its correlations are undefined"
                + (" (null in the JSON)" if in_json else "")
                + (" and it is left out of the Williams tests" if williams else "")
            )
    return out


def _presets_epilog() -> str:
    """Every format's presets, one line each (first = default), and their notes."""
    import textwrap

    from capeval_core.judgments import LOADERS
    from capeval_core.judgments.protocols import BY_FORMAT

    lines = ["presets (the first of each format is its default):"]
    notes = []
    for fmt, loader in LOADERS.items():
        if not loader.presets:
            continue
        lines.append(f"  {fmt}:")
        for name, text in loader.presets.items():
            lines += textwrap.wrap(
                f"{name}: {text}", 96, initial_indent="    ", subsequent_indent="      "
            )
            note = getattr(BY_FORMAT.get(fmt, {}).get(name), "note", "")
            if note and note not in notes:
                notes.append(note)
    for note in notes:
        for paragraph in note.split("\n\n"):  # a preset may note two metrics
            lines += ["", *textwrap.wrap(f"note: {paragraph}", 96, subsequent_indent="  ")]
    return "\n".join(lines)


def _resamples_or_none(text: str) -> int:
    """--resamples of correlate: 0 (no intervals) or at least 2 (one resample has no spread)."""
    value = whole_number(0, MAX_RESAMPLES)(text)
    if value == 1:
        raise argparse.ArgumentTypeError(
            "expected 0 (no intervals) or at least 2 resamples, got 1 (one resample gives an "
            "interval of width 0)"
        )
    return value


def add_parser(sub: Any) -> None:
    """The ``correlate`` subcommand and its options."""
    from capeval_core.judgments import LOADERS  # the correlate help lists their presets anyway

    correlate = sub.add_parser(
        "correlate",
        help="correlate metrics with human judgments (or pairwise accuracy)",
        epilog=_presets_epilog(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    correlate.add_argument(
        "--judgments", required=True, metavar="PATH", help="judgment file, or the dataset folder"
    )
    correlate.add_argument(
        "--format",
        required=True,
        choices=list(LOADERS),
    )
    correlate.add_argument(
        "--preset",
        help=(
            "protocol preset (default: the format's first, listed below; pascal50s: "
            "clipscore-table4 where consensus_pascal.mat is found, else clipscore-table7)"
        ),
    )
    add_metrics_option(correlate, CORRELATE_KEYS)
    correlate.add_argument(
        "--metric-scores",
        metavar="FILE",
        help="scores of your own metric(s), joined to the judgments by id: CSV, TSV, JSON or "
        "JSONL with the set's id column(s) (graded, pairwise, composite: id; thumb: seg_id and "
        "SYS; flickr8k-expert, flickr8k-cf: image_file and caption_id; pascal50s, abstract50s: "
        "id, the pair's number from 1) and one column per metric (pairwise sets: <name>:a and "
        "<name>:b); correlated and Williams-tested beside the built-in ones. An id of the set "
        "with no row stops the run; rows of ids the set does not have are ignored, with a "
        "warning (a judgment file's metric:<name> columns are read the same way)",
    )
    correlate.add_argument("--json", metavar="OUT", help="write the results as JSON ('-': stdout)")
    correlate.add_argument(
        "--human",
        help="human-score column (default: the one named score, human or rating, else the only "
        "numeric one; a dataset format's published score); a graded file's rows then need a "
        "value in that column only",
    )
    correlate.add_argument(
        "--level",
        choices=["item", "system"],
        help="graded sets: correlate items (default), or system means (every statistic, "
        "Williams included, then on system means; intervals resample items within systems)",
    )
    correlate.add_argument(
        "--resamples",
        type=_resamples_or_none,
        metavar="N",
        help="graded sets: percentile bootstrap intervals from N resamples (2 to 1,000,000), "
        "beside each value in the table and in the JSON's `intervals` (default 0: none)",
    )
    add_tokenizer_option(correlate)
    correlate.add_argument(
        "--williams-correlation",
        choices=["pearson", "spearman", "kendall_b", "kendall_c"],
        help="graded sets with two or more metrics: the correlation the Williams tests compare "
        "(default: pearson), in absolute value as WMT's (a metric where lower is better, a "
        "distance, by its strength; a warning names a negative one)",
    )
    add_workers_option(correlate)
    correlate.add_argument(
        "--seed",
        type=SEED,
        help="seed for sampling references and breaking human ties (pairwise sets) and for "
        "the bootstrap intervals (graded sets, with --resamples); default 0",
    )
    add_spice_limit_option(correlate)
    add_metric_option_option(correlate)
    add_limit_options(correlate)
    correlate.set_defaults(func=_cmd_correlate)
