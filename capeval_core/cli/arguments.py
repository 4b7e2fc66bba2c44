"""The options several ``capeval`` subcommands share: the parser class and its argparse
types, the option groups, and the checks of what was given, before any file is read."""

from __future__ import annotations

import argparse
import contextlib
import itertools
import math
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from capeval_core import files
from capeval_core.coco_files import DEFAULT_SPLIT, KARPATHY_SPLITS, LIMIT_FLAGS
from capeval_core.errors import CapevalError, InputError, OptionError, UnknownKeyError
from capeval_core.files import Limits
from capeval_core.metrics import (
    COCO_CAPTION_KEYS,
    COCO_CAPTION_SET,
    METRICS,
    OPTIONAL_KEYS,
    REPORTED_KEYS,
    metric_class,
)
from capeval_core.spice.parse import (
    DEFAULT_PARSER,
    PARSERS,
    RETIRED_PARSERS,
    retired_parser_message,
)

#: keys scored when --metrics is not given
DEFAULT_KEYS = ("bleu_1", "bleu_2", "bleu_3", "bleu_4", "rouge_l", "cider_d")


#: --metrics help: the name of the coco-caption set
SET_HELP = f"{COCO_CAPTION_SET} = {' '.join(COCO_CAPTION_KEYS)}"


def add_metrics_option(parser: argparse.ArgumentParser, defaults: Sequence[str]) -> None:
    """``--metrics``, read by :func:`metric_keys`, with the subcommand's default keys."""
    parser.add_argument(
        "--metrics",
        nargs="+",
        metavar="KEY",
        help=f"metric keys, separate or comma-separated (default: {' '.join(defaults)}); "
        f"{SET_HELP}; see `capeval metrics`",
    )


def spice_options(parser: str | None, max_words: int | None) -> dict[str, Any]:
    """SPICE's options from --spice-parser and --spice-max-words (None: the default)."""
    options: dict[str, Any] = {}
    if parser is not None:
        options["parser"] = parser
    if max_words is not None:
        options["max_sentence_words"] = max_words
    return options


def given_options(args: argparse.Namespace, *names: str) -> list[str]:
    """The options among ``names`` (argparse dests) that the command line gave. Their
    defaults are None and resolved where they are used, so an option left out is never taken
    for one given."""
    return ["--" + n.replace("_", "-") for n in names if getattr(args, n, None) not in (None, [])]


def refuse_unused(unused: Sequence[str], where: str) -> None:
    """Refuse an option this run would not use (it was ignored without a word): one line
    naming the options and when they are used."""
    if unused:
        them = "them" if len(unused) > 1 else "it"
        raise InputError(f"{', '.join(unused)}: not used {where}; leave {them} out")


#: options that a metric reads (argparse dest -> the metric keys that read it): used when any
#: metric of the run is one of them (``bleu``, ``coco-caption`` and the default lists
#: expanded); one rule for each, in every command that has it: refused when none is
METRIC_OPTIONS = {
    "cider_idf": ("cider_d",),
    "spice_parser": ("spice",),
    "spice_max_words": ("spice",),
    "embeddings": ("wmd", "mean"),
}


#: the library options score and compare have a flag of their own for: --option names it
OWN_FLAGS = {
    ("cider_d", "idf"): "--cider-idf",
    ("spice", "parser"): "--spice-parser",
    ("spice", "max_sentence_words"): "--spice-max-words",
}
#: correlate's (its sets' CIDEr-D document frequencies and SPICE's parser: --option)
CORRELATE_FLAGS = {("spice", "max_sentence_words"): "--spice-max-words"}
_TRUE, _FALSE = ("true", "yes", "1"), ("false", "no", "0")


def _option_value(kind: str, text: str) -> Any:
    """``text`` as a value of a Config field annotated ``kind`` (its source text)."""
    if "None" in kind and text.lower() == "none":
        return None
    if kind.startswith("bool"):
        if text.lower() in (*_TRUE, *_FALSE):
            return text.lower() in _TRUE
        raise ValueError("expected true or false")
    if "_" in text and not kind.startswith("str"):  # Python's int and float read 1_0 as 10
        text = "!"  # refused below, as any other non-number
    try:
        if kind.startswith("int"):
            return int(text)
        if kind.startswith("float"):
            values: tuple[float, ...] = (float(text),)
        elif kind.startswith("tuple[float"):
            values = tuple(float(v) for v in text.split(","))
        else:
            return text
    except ValueError:
        wanted = (
            "a whole number"
            if kind.startswith("int")
            else "a number"
            if kind.startswith("float")
            else "numbers separated by commas"
        )
        raise ValueError(f"expected {wanted}") from None
    if not all(math.isfinite(v) for v in values):
        raise ValueError("expected finite numbers")
    return values[0] if kind.startswith("float") else values


def metric_option(text: str) -> tuple[str, str, Any, str]:
    """``--option METRIC.NAME=VALUE`` read: (the metric's key, the option, its value, the
    value as given); a metric or option that does not exist, or a value that is not of the
    option's type, is refused here (argparse says it in one line, exit 2), the values
    together by :func:`metric_options`.

    >>> metric_option("rouge_l.beta=1.0"), metric_option("bleu_4.effective_length=shortest")
    (('rouge_l', 'beta', 1.0, '1.0'), ('bleu', 'effective_length', 'shortest', 'shortest'))
    """
    import dataclasses

    where, sep, raw = text.partition("=")
    metric, dot, name = (part.strip() for part in where.partition("."))
    if not (sep and dot and metric and name):
        raise argparse.ArgumentTypeError(
            f"expected METRIC.NAME=VALUE, e.g. rouge_l.beta=1.0 (got {text!r})"
        )
    try:
        cls = metric_class(metric)
    except UnknownKeyError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    fields = {f.name: f for f in dataclasses.fields(cls.Config)}
    if name not in fields:
        valid = ", ".join(fields) or "none"
        raise argparse.ArgumentTypeError(f"{cls.key} has no option {name!r} (its options: {valid})")
    try:
        value = _option_value(str(fields[name].type), raw.strip())
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"{cls.key}.{name}={raw.strip()!r}: {exc}") from None
    return cls.key, name, value, raw.strip()


def json_takes_no_value(command: str) -> Callable[[list[str]], str]:
    """``COMMAND --json -``, ``--json=-`` (or ``--json OUT``, as ``compare`` takes it) said in
    one line, the same for each spelling, for a command whose ``--json`` is a switch (as the
    README writes it) that prints on standard output (a command with no positional argument,
    so a word after it is no other option's)."""

    def refuses(argv: list[str]) -> str:
        for option, after in itertools.pairwise([*argv, ""]):
            if option == "--":
                return ""
            name, equals, value = option.partition("=")
            if (
                len(name) > 2
                and "--json".startswith(name)
                and (equals or after == "-" or (after and not after.startswith("-")))
            ):
                given = value if equals else after
                return (
                    f"{command}'s --json takes no value (got {files.printable(given)!r}): it "
                    "prints the JSON on standard output"
                )
        return ""

    return refuses


def add_metric_option_option(sub: argparse.ArgumentParser) -> None:
    """``--option``: any option a metric's Config takes, as the library takes it."""
    sub.add_argument(
        "--option",
        dest="metric_option",
        action="append",
        type=metric_option,
        metavar="METRIC.NAME=VALUE",
        help="a metric's option as the library takes it, e.g. rouge_l.beta=1.0, "
        "cider_d.sigma=8, meteor.alpha=0.85, spice.synsets=false, wmd.sigma=2 (repeatable; "
        "`capeval metrics --options` lists them); the numbers' signatures name it",
    )


def metric_options(
    args: argparse.Namespace, keys: Sequence[str], own_flags: Mapping[tuple[str, str], str]
) -> dict[str, dict[str, Any]]:
    """``--option`` values by metric key, each metric's together checked as the library
    checks them (METEOR's ``task=custom`` needs its parameters beside it); one the command
    has a flag for (``own_flags``), one given for a metric the run does not score, or one
    given twice with two values is refused (before any file is read)."""
    scored = {metric_class(k).key for k in keys}
    out: dict[str, dict[str, Any]] = {}
    given: dict[str, list[str]] = {}
    for key, name, value, raw in getattr(args, "metric_option", None) or ():
        if (key, name) in own_flags:
            raise OptionError(f"--option {key}.{name}: use {own_flags[key, name]}")
        if key not in scored:
            shown = " ".join(keys) or "none built in"
            raise OptionError(f"--option {key}.{name}: {key} is not among the metrics ({shown})")
        if name in out.get(key, {}) and out[key][name] != value:
            raise OptionError(f"--option {key}.{name} given twice, with two values")
        out.setdefault(key, {})[name] = value
        given.setdefault(key, []).append(f"{key}.{name}={raw!r}")
    for key, options in out.items():
        try:
            metric_class(key).configured(options)
        except CapevalError as exc:
            raise OptionError(f"--option {', '.join(given[key])}: {exc}") from None
    return out


def merged_options(
    options: dict[str, dict[str, Any]], more: Mapping[str, Mapping[str, Any]]
) -> dict[str, dict[str, Any]]:
    """The command's options per metric key with ``--option``'s added."""
    return {k: {**options.get(k, {}), **more.get(k, {})} for k in {**options, **more}}


def refuse_unused_metric_options(
    args: argparse.Namespace, keys: Sequence[str], default: bool
) -> None:
    """Refuse a metric's option (--cider-idf, --spice-..., --embeddings) when no metric of
    ``keys`` (the built-in keys the run scores; ``default``: the command's list, --metrics
    left out) reads it, before any file is read, as any option the run would not use is
    refused: --embeddings alone was a warning."""
    metrics = {metric_class(k).key for k in keys}
    shown = " ".join(keys) or "none built in"
    for readers in dict.fromkeys(METRIC_OPTIONS.values()):
        if not metrics & set(readers):
            names = [d for d, r in METRIC_OPTIONS.items() if r == readers]
            what = f"default: {shown}" if default else shown
            refuse_unused(
                given_options(args, *names),
                f"without {' or '.join(readers)} among the metrics ({what})",
            )


def read_references_of(args: argparse.Namespace) -> Any:
    """The --annotations references (COCO val2014 without), held to the limits; --split given
    for a file that has no splits is an error, not ignored."""
    from capeval_core.coco_files import read_references

    split = args.split or DEFAULT_SPLIT
    if args.split is not None and not args.annotations:
        raise InputError(
            "--split picks a split of Karpathy's dataset_coco.json given as --annotations; "
            "without --annotations the references are COCO val2014, which has no splits"
        )
    refs = read_references(_annotations(args), split, limits_of(args))
    if args.split is not None and refs.shape != "karpathy":
        shape = "COCO captions annotations"
        if refs.shape != "coco":
            shape = "an {image_id: [captions]} object"
        raise InputError(
            f"--split {args.split}: references file {args.annotations} has no splits (it is "
            f"{shape}); leave --split out, or give Karpathy's dataset_coco.json"
        )
    return refs


def split_keys(values: Sequence[str]) -> list[str]:
    """--metrics words split at commas, ``coco-caption`` replaced by the keys it names and a
    metric that reports several keys (``bleu``) by all of them, as ``capeval metrics`` says
    (``bleu`` alone printed BLEU-4's value as "BLEU-bleu")."""
    keys = [k.strip() for v in values for k in v.split(",") if k.strip()]
    return list(dict.fromkeys(k for key in keys for k in _expanded(key)))


def _expanded(key: str) -> Sequence[str]:
    if key == COCO_CAPTION_SET:
        return COCO_CAPTION_KEYS
    if key in METRICS and key not in REPORTED_KEYS:
        return [k for k, cls in REPORTED_KEYS.items() if cls is METRICS[key]] or [key]
    return (key,)


@contextlib.contextmanager
def unknown_metric_said() -> Iterator[None]:
    """An unknown metric key said as --metrics' (the command line knows one more name,
    ``coco-caption``, than the registry's list)."""
    try:
        yield
    except UnknownKeyError as exc:
        raise UnknownKeyError(f"--metrics: {exc}, {COCO_CAPTION_SET}") from None


def metric_keys(
    values: Sequence[str] | None, default: Sequence[str], optional: bool = False
) -> list[str]:
    """The --metrics keys, as separate words or comma lists (``bleu_4,cider_d``), checked
    against the registry before any file is read; ``coco-caption`` stands for the metrics
    coco-caption reports (BLEU-1..4, METEOR, ROUGE-L, CIDEr-D, SPICE); ``optional`` admits
    the keys scored only when asked for (SPICE's categories, which ``compare`` keeps)."""
    keys = split_keys(values or default)
    if values and not keys:
        raise InputError("--metrics: no metric key given; see `capeval metrics`")
    for key in keys:
        with unknown_metric_said():
            metric_class(key)
        if key in OPTIONAL_KEYS and not optional:
            raise InputError(
                f"--metrics: {key} is reported by `capeval compare` only (one or more results "
                "files), which keeps each image's SPICE categories"
            )
    return list(dict.fromkeys(keys))


def limits_of(args: argparse.Namespace) -> Limits:
    """The :class:`~capeval_core.files.Limits` a command runs under (--max-bytes, ...); a
    limit left out (None, see :func:`add_limit_options`) is the default."""
    given = {name: getattr(args, name, None) for name in LIMIT_FLAGS}
    return Limits(**{name: value for name, value in given.items() if value is not None})


def _annotations(args: argparse.Namespace) -> Path | None:
    return Path(args.annotations) if args.annotations else None


def check_human(jset: Any, human: str | None) -> str | None:
    """The human-score column a graded set is correlated on (None for a pairwise set),
    checked before the scoring starts: the one --human names, else the set's first. A
    generic graded file with several numeric columns, none named as the score, is refused
    until --human chooses (its first column was correlated without a word: an annotator
    id, pandas' index)."""
    from capeval_core.judgments.graded import is_score_name, named_score

    if jset.kind != "graded":
        if human is not None:
            raise InputError(
                f"--human applies to graded judgments; this {jset.format} set is pairwise"
            )
        return None
    if human is not None:
        from capeval_core.judgments import LOADERS

        presets = LOADERS[jset.format].presets if jset.format in LOADERS else {}
        if human not in jset.score_names and human in presets:  # a preset's name, not a column
            raise InputError(
                f"--human {human}: this {jset.format} set's human score is "
                f"{', '.join(map(repr, jset.score_names))}; {human!r} is a preset of the format: "
                f"--preset {human}"
            )
        if human not in jset.score_names:  # the set's refusal, which named no file
            where = jset.source[0] if jset.source else "the judgments"
            try:
                jset.human(human)
            except CapevalError as exc:
                raise InputError(f"{where}: {exc}") from None
        return human
    names = jset.score_names
    if jset.format == "graded" and len(names) > 1 and named_score(names) is None:
        where = jset.source[0] if jset.source else "the judgments file"
        shown = ", ".join(repr(n) for n in names)
        named = "more than one is" if any(map(is_score_name, names)) else "none is"
        raise InputError(
            f"{where}, line 1: {len(names)} numeric columns could be the human score ({shown}) "
            f"and {named} named score, human or rating: choose one with --human NAME"
        )
    return names[0]


def add_reference_options(sub: argparse.ArgumentParser) -> None:
    """--annotations and --split, the same for ``score`` and ``compare``."""
    sub.add_argument(
        "--annotations",
        metavar="REFERENCES",
        help='the references: COCO captions ({"annotations": [...]}), {image_id: [captions]} '
        "or Karpathy's dataset_coco.json (default: COCO val2014 from the installed "
        "pycocoevalcap)",
    )
    sub.add_argument(
        "--split",
        default=None,
        choices=KARPATHY_SPLITS,
        help=f"the split read from a Karpathy dataset_coco.json (default: {DEFAULT_SPLIT}); "
        "an error with references that have no splits",
    )


def add_scoring_options(sub: argparse.ArgumentParser) -> None:
    """The options of a command that scores results files (score, compare): the tokenizer,
    CIDEr-D's document frequencies, SPICE's parser and its sentence limit."""
    add_tokenizer_option(sub)
    sub.add_argument(
        "--cider-idf",
        choices=["corpus", "coco-val2014"],
        help="CIDEr-D document frequencies: the scored set (as coco-caption; the default) or "
        "COCO val2014",
    )
    _add_spice_parser_option(sub)
    add_spice_limit_option(sub)


def _add_spice_parser_option(sub: argparse.ArgumentParser) -> None:
    sub.add_argument(
        "--spice-parser",
        metavar=DEFAULT_PARSER,
        help="SPICE's parser: stanford-pcfg, the only one (CoreNLP 3.6.0's PCFG itself, shipped "
        "with capeval: the jar's tuples; COCO 2014 captions come parsed); the retired "
        "stanford-emulation and spacy-sm are refused",
    )


def check_spice_parser(name: str | None) -> None:
    """``--spice-parser`` checked before any work: one line for a retired or unknown name
    (None: not given, SPICE's default)."""
    if name is None:
        return
    if name in RETIRED_PARSERS:
        raise OptionError(retired_parser_message(name))
    if name not in PARSERS:
        raise OptionError(f"--spice-parser must be {DEFAULT_PARSER!r} (got {name!r})")


#: the namespace attribute where :class:`_Once` notes the options given (removed after parsing)
_GIVEN = "_options_given"


class _Once(argparse.Action):
    """argparse's ``store``, but an option given twice is not a silent choice of the last:
    a second ``--per-item`` or ``--seed`` dropped the first without a word. A list option
    (``--metrics a --metrics b``, ``--results x --results y``) takes both lists; any other
    is refused."""

    def __call__(self, parser, namespace, values, option_string=None) -> None:  # type: ignore[override]
        given = namespace.__dict__.setdefault(_GIVEN, set())
        if self.dest in given:
            if isinstance(values, list):
                values = [*getattr(namespace, self.dest), *values]
            else:
                first, second = (
                    files.printable(str(v)) for v in (getattr(namespace, self.dest), values)
                )
                parser.error(f"{option_string} is given twice ({first} and {second}): give it once")
        given.add(self.dest)
        setattr(namespace, self.dest, values)


class Parser(argparse.ArgumentParser):
    """argparse with the README's promise for bad input: one line on stderr, exit status 2
    (argparse's own error prints the usage first); an option given twice is refused or, a
    list, extended (:class:`_Once`). An argument no option takes is said by the subcommand
    it was given to (argparse's top-level parser said "capeval: error: ... (see `capeval
    --help`)" for ``capeval score --bogus``); a subcommand's ``refuses`` says its own word
    on its arguments first."""

    #: ``refuses(argv)``: a subcommand's one line on its arguments before argparse reads them
    #: ("" for none): argparse's own words for ``--json=-`` and ``--json -`` differed
    refuses: Callable[[list[str]], str] | None = None
    #: ``helps()``: run before the help is written, to fill in help texts that name a
    #: registry's entries, which are imported only then (not on every command line)
    helps: Callable[[], None] | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.register("action", None, _Once)
        self.register("action", "store", _Once)
        self.commands: Any = None

    def add_subparsers(self, **kwargs: Any) -> Any:
        self.commands = super().add_subparsers(**kwargs)
        return self.commands

    def format_help(self) -> str:
        if self.helps is not None:
            self.helps()
        return super().format_help()

    def error(self, message: str) -> Any:  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {message} (see `{self.prog} --help`)\n")

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:  # type: ignore[override]
        if self.refuses is not None and args is not None:  # a subcommand: its arguments
            said = self.refuses([str(a) for a in args])
            if said:
                self.error(said)
        return super().parse_known_args(args, namespace)

    def parse_args(self, args: Any = None, namespace: Any = None) -> Any:  # type: ignore[override]
        namespace, extras = self.parse_known_args(args, namespace)
        if extras:
            chosen = self
            if self.commands is not None:
                chosen = self.commands.choices.get(getattr(namespace, self.commands.dest, None))
            chosen = chosen if isinstance(chosen, Parser) else self
            shown = " ".join(files.printable(e) for e in extras)
            chosen.error(f"unrecognized arguments: {shown}")
        vars(namespace).pop(_GIVEN, None)
        return namespace


def add_spice_limit_option(sub: argparse.ArgumentParser) -> None:
    sub.add_argument(
        "--spice-max-words",
        type=_positive_int,
        default=None,
        metavar="N",
        help="SPICE: leave out the items with a sentence of more than N words (CoreNLP's "
        "words and sentences), to bound the parse's time and memory; they are reported on "
        "stderr and in the JSON, every other item and metric is scored (default: no limit, "
        "as the jar)",
    )


def add_tokenizer_option(parser: argparse.ArgumentParser) -> None:
    """--tokenizer: a key, or the name a signature gives the tokenizer (``tok:...``), so a
    signature's value can be typed back."""
    from capeval_core.tokenize import TOKENIZERS, tokenizer_key

    parser.add_argument(
        "--tokenizer",
        default="ptb",
        type=tokenizer_key,
        choices=list(TOKENIZERS),
        help="ptb (coco-caption's; the default) or whitespace; a signature's name "
        "(ptb-corenlp-3.4.1) is read as its key",
    )


def whole_number(minimum: int, maximum: int | None = None) -> Any:
    """An argparse ``type``: a whole number from ``minimum`` (to ``maximum``), else one line
    saying what was expected and what came."""

    def whole(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
        if value < minimum or (maximum is not None and value > maximum):
            bound = f">= {minimum}" if maximum is None else f"from {minimum} to {maximum:,}"
            raise argparse.ArgumentTypeError(f"expected a whole number {bound}, got {value}")
        return value

    whole.__name__ = "whole number"
    return whole


_positive_int = whole_number(1)


#: seeds: numpy's generators take any whole number >= 0; torch's (train-i2ce) one below 2**63
SEED = whole_number(0, 2**63 - 1)


def positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"expected a number > 0, got {text}")
    return value


def add_limit_options(parser: argparse.ArgumentParser, *, unset: bool = False) -> None:
    """The documented input limits (capeval_core.files.Limits), each raisable here;
    ``unset``: left out, an option is None (:func:`limits_of` gives the default), so a
    command that reads no file in one of its modes can refuse one given
    (:func:`given_options`)."""
    defaults = Limits()
    group = parser.add_argument_group("input limits (raise them for genuine large data)")
    group.add_argument(
        "--max-bytes",
        type=_positive_int,
        default=None if unset else defaults.max_bytes,
        metavar="N",
        help=f"refuse input files above N bytes (default {defaults.max_bytes:,})",
    )
    group.add_argument(
        "--max-caption-tokens",
        type=_positive_int,
        default=None if unset else defaults.max_caption_tokens,
        metavar="N",
        help=f"refuse captions of more than N tokens (default {defaults.max_caption_tokens:,}) "
        f"or of more than {files.CHARS_PER_TOKEN} x N characters",
    )
    group.add_argument(
        "--max-references",
        type=_positive_int,
        default=None if unset else defaults.max_references,
        metavar="N",
        help=f"refuse images with more than N references (default {defaults.max_references:,})",
    )


def add_workers_option(parser: argparse.ArgumentParser) -> None:
    """``--workers`` (read with :func:`worker_count`), as score, compare and correlate take it."""
    parser.add_argument(
        "--workers",
        type=whole_number(0),
        default=None,
        help="worker processes for scoring (default and most: one per available CPU; 0 or 1: "
        "none); sets of fewer than 1,000 items are scored here whatever it says",
    )


def worker_count(asked: int | None) -> int:
    """``--workers``: one per available CPU by default, and never more
    (:func:`~capeval_core.resources.worker_cap`)."""
    from capeval_core.resources import available_cpus, worker_cap

    if asked is None:
        return available_cpus()
    used, why = worker_cap(asked)
    if why:
        print(f"capeval: warning: --workers {asked:,}: {why}", file=sys.stderr)
    return used
