"""``capeval score``: one COCO results file scored against its references, as a table,
JSON and per-image files."""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from capeval_core import files
from capeval_core._version import __version__
from capeval_core.cli.arguments import (
    DEFAULT_KEYS,
    OWN_FLAGS,
    add_limit_options,
    add_metric_option_option,
    add_metrics_option,
    add_reference_options,
    add_scoring_options,
    add_workers_option,
    check_spice_parser,
    json_takes_no_value,
    limits_of,
    merged_options,
    metric_keys,
    metric_options,
    read_references_of,
    refuse_unused_metric_options,
    spice_options,
    worker_count,
)
from capeval_core.cli.output import (
    PROGRESS_FROM,
    check_per_item,
    cli_message,
    cli_worded,
    held_warnings,
    jsonable,
    plan_outputs,
    signed_lines,
    warn_notes,
)
from capeval_core.coco_files import CocoBatch, coco_caption_corpus, load_coco
from capeval_core.errors import DegenerateCorpusWarning, ItemsLeftOutWarning
from capeval_core.metrics import metric_class
from capeval_core.metrics.spice import Spice
from capeval_core.progress import StderrBar
from capeval_core.results import MetricResult, left_out_line


def score_coco(
    batch: CocoBatch,
    keys: Sequence[str],
    tokenizer: str = "ptb",
    cider_idf: str = "corpus",
    embeddings: Any = None,
    spice_parser: str | None = None,
    spice_max_words: int | None = None,
    workers: int | None = None,
    more_options: Mapping[str, Mapping[str, Any]] | None = None,
) -> dict[str, MetricResult]:
    """Score a COCO batch with the given keys, tokenizing once; large batches in ``workers``
    processes (default: one per available CPU), as :func:`capeval_core.scoring.score_set`
    scores them for the pycocoevalcap drop-in too.

    ``embeddings`` (an ``Embeddings``; None = the default GloVe) goes to WMD and MEAN;
    ``spice_parser`` (None = SPICE's default) and ``spice_max_words`` (SPICE's
    ``max_sentence_words``) to SPICE; ``more_options`` (``--option``) to each metric it
    names, by metric key.
    """
    from capeval_core.scoring import score_set

    options: dict[str, dict[str, Any]] = {"cider_d": {"idf": cider_idf}}
    options["spice"] = spice_options(spice_parser, spice_max_words)
    if embeddings is not None:
        options["wmd"] = options["mean"] = {"embeddings": embeddings}
    options = merged_options(options, more_options or {})
    metrics = list(dict.fromkeys(metric_class(k).key for k in keys))
    # a small batch shows the bar only while a long caption's parse says how far it is
    with StderrBar("capeval", "step", shown=len(batch.candidates) >= PROGRESS_FROM) as bar:

        def announce(tokenized: Any) -> None:
            if not bar.shown or "spice" not in metrics:
                return
            spice = Spice(tokenizer=tokenizer, **options.get("spice", {}))
            if todo := spice.uncached(tokenized):
                bar.write(
                    f"SPICE: parsing {todo:,} captions with the {spice.config.parser} parser "
                    "(kept in the parse cache for later runs)"
                )

        scored = score_set(
            batch.candidates,
            batch.references,
            keys,
            tokenizer=tokenizer,
            options={k: v for k, v in options.items() if k in metrics},
            workers=workers,
            on_progress=bar,
            on_batch=announce,
        )
    # SPICE's mean as pycocoevalcap takes it: over the images in sorted id order
    return {k: coco_caption_corpus(r, batch.image_ids) for k, r in scored.results.items()}


def left_out_json(results: dict[str, MetricResult], image_ids: Sequence[Any]) -> dict[str, Any]:
    """``{key: {"n", "image_ids", "reasons": [{"image_id", "reason"}]}}`` for the keys whose
    metric could not score some images (the JSON of ``score``)."""
    out = {}
    for key, result in results.items():
        missing = result.missing
        if missing:
            ids = [image_ids[i] for i in sorted(missing)]
            out[key] = {
                "n": len(ids),
                "image_ids": ids,
                "reasons": [
                    {"image_id": image_ids[i], "reason": missing[i]} for i in sorted(missing)
                ],
            }
    return out


def warn_left_out(results: dict[str, MetricResult], image_ids: Sequence[Any]) -> None:
    """One warning line on stderr per metric that could not score some images (which and
    why); the others are scored and the exit status stays 0."""

    seen = set()
    for result in results.values():
        metric = result.signature.metric
        missing = result.missing
        if missing and metric not in seen:
            seen.add(metric)
            what = metric_class(metric).name
            ids = {image_ids[i]: why for i, why in sorted(missing.items())}
            line = left_out_line(what, ids, len(image_ids), "images")
            value = (
                "it has no value (nan; null in the JSON)"
                if len(missing) == len(image_ids)
                else "its value is over the other images"
            )
            print(f"capeval: warning: {cli_message(line)}; {value}", file=sys.stderr)


def per_item_outputs(
    path: Path,
    batch: CocoBatch,
    results: dict[str, MetricResult],
    named: Mapping[str, str] | None = None,
) -> list[tuple[str, Path, str]]:
    """One row per image: CSV (image_id, then a column per key) or a JSON list, each with the
    signatures in a sidecar JSON beside it, as ``(option, path, text)`` for
    :func:`capeval_core.files.write_all` (each file complete or absent, never partial). The
    sidecar names the references by ``named`` (the batch's
    :meth:`~capeval_core.coco_files.CocoBatch.references_named`, digested here if not given).

    A key whose metric left images out has a ``"<key> left out"`` column after the values,
    with the reason where its value is missing and empty elsewhere (as Systems' files)."""
    check_per_item(path)
    named = batch.references_named() if named is None else named
    left_out = {key: result.missing for key, result in results.items() if result.missing}
    rows = [
        [
            image_id,
            *(result.segments[i].scores[key] for key, result in results.items()),
            *(cli_worded(why.get(i, "")) for why in left_out.values()),
        ]
        for i, image_id in enumerate(batch.image_ids)
    ]
    header = ["image_id", *results, *(f"{key} left out" for key in left_out)]
    from capeval_core.stats.export import sidecar_path, signatures_text

    if path.suffix.lower() == ".json":
        records = [jsonable(dict(zip(header, r, strict=True))) for r in rows]
        text = json.dumps(records, indent=1, allow_nan=False) + "\n"
    else:
        text = files.csv_text(header, rows)
    signatures = {k: str(r.signature) for k, r in results.items()}
    return [
        ("--per-item", path, text),
        (
            "--per-item",
            sidecar_path(path),
            signatures_text(signatures, path.name, **named),
        ),
    ]


def write_per_item(
    path: Path,
    batch: CocoBatch,
    results: dict[str, MetricResult],
    named: Mapping[str, str] | None = None,
) -> None:
    """:func:`per_item_outputs` written, all or none."""
    files.write_all(per_item_outputs(path, batch, results, named))


def _print_table(
    results: dict[str, MetricResult], batch: CocoBatch, named: Mapping[str, str]
) -> None:
    print(
        f"capeval {__version__} - {len(batch.image_ids)} images, references from "
        f"{files.printable(named['references'])}, sha256 {named['references_sha256']}"
    )
    signatures = {k: r.signature for k, r in results.items()}
    print(signed_lines(signatures, {k: r.value for k, r in results.items()}))


def _cmd_score(args: argparse.Namespace) -> int:
    check_spice_parser(args.spice_parser)
    keys = metric_keys(args.metrics, DEFAULT_KEYS)
    refuse_unused_metric_options(args, keys, default=not args.metrics)
    more_options = metric_options(args, keys, OWN_FLAGS)
    plan_outputs(
        args,
        [
            ("--results file", args.results),
            ("--annotations file", args.annotations),
            ("--embeddings file", args.embeddings),
        ],
    )
    with held_warnings():
        refs = read_references_of(args)
        batch = load_coco(Path(args.results), refs, limits_of(args))
    embeddings = None
    if args.embeddings:  # given only when wmd or mean is scored: refused above otherwise
        from capeval_core.embeddings import load_embeddings

        embeddings = load_embeddings(args.embeddings)
    with warnings.catch_warnings():  # left-out images and notes are said below, once
        warnings.simplefilter("ignore", ItemsLeftOutWarning)
        warnings.simplefilter("ignore", DegenerateCorpusWarning)
        results = score_coco(
            batch,
            keys,
            args.tokenizer,
            args.cider_idf or "corpus",
            embeddings,
            args.spice_parser,
            args.spice_max_words,
            worker_count(args.workers),
            more_options,
        )
    warn_left_out(results, batch.image_ids)
    # which references, digested once for every output that names them: a signature names
    # no data
    named = batch.references_named()
    if args.per_item:
        write_per_item(Path(args.per_item), batch, results, named)
    if args.json:
        out = {
            "n_images": len(batch.image_ids),  # the table's "N images" (compare's JSON has it)
            **named,
            "corpus": {k: r.value for k, r in results.items()},
            "signatures": {k: str(r.signature) for k, r in results.items()},
        }
        left_out = cli_worded(left_out_json(results, batch.image_ids))
        if left_out:  # only then: the JSON of a run that scored everything stays as it was
            out["left_out"] = left_out
        print(json.dumps(jsonable(out), indent=1))
    else:
        _print_table(results, batch, named)
    warn_notes({r.signature.metric: r.warnings for r in results.values()})
    return 0


def add_parser(sub: Any) -> None:
    """The ``score`` subcommand and its options."""
    score = sub.add_parser("score", help="score a COCO results file against COCO captions")
    score.add_argument(
        "--results",
        required=True,
        help='[{"image_id": ..., "caption": ...}], one caption per image; an image the '
        "references do not have, or captioned twice, is refused",
    )
    add_reference_options(score)
    add_metrics_option(score, DEFAULT_KEYS)
    score.add_argument(
        "--per-item",
        metavar="OUT",
        help="write per-image scores (.csv or .json); an image a metric could not score has "
        "NaN there (nan in the CSV, null in the JSON) and its reason in a '<key> left out' "
        "column",
    )
    score.add_argument("--json", action="store_true", help="print a JSON object on stdout")
    add_scoring_options(score)
    add_metric_option_option(score)
    score.add_argument(
        "--embeddings",
        metavar="PATH",
        help="word vectors for wmd and mean (word2vec .bin/.txt, GloVe .txt or fastText .vec, "
        "optionally .gz; default: GloVe 6B 50-d)",
    )
    add_workers_option(score)
    add_limit_options(score)
    score.set_defaults(func=_cmd_score)
    score.refuses = json_takes_no_value("score")
