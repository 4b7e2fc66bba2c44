"""The ``capeval`` command line: batch scoring of COCO-format files.

    capeval score --results RESULTS.json --annotations CAPTIONS.json [--metrics ...]
                  [--per-item OUT.csv|OUT.json] [--json]

Images are scored in the order pycocoevalcap's ``COCOEvalCap`` uses (the annotation file's
``images`` list, filtered to the images in the results), so corpus values agree bit for bit.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from capeval_core._version import __version__
from capeval_core.errors import CapevalError, InputError
from capeval_core.metrics import available_keys, make_batch, metric_class
from capeval_core.results import MetricResult

#: keys scored when --metrics is not given
DEFAULT_KEYS = ("bleu_1", "bleu_2", "bleu_3", "bleu_4", "rouge_l", "cider_d")
#: show a progress bar from this many images on
PROGRESS_FROM = 1000


@dataclass(frozen=True)
class CocoBatch:
    """Candidates and references of the images in a results file, in evaluation order."""

    image_ids: tuple[Any, ...]
    candidates: tuple[str, ...]
    references: tuple[tuple[str, ...], ...]


def _load_json(path: Path, role: str) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(f"{role} file {path} does not exist") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read {role} file {path}: {exc}") from None
    if not text.strip():
        raise InputError(f"{role} file {path} is empty")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(
            f"{role} file {path} is not valid JSON: {exc.msg} (line {exc.lineno}, "
            f"column {exc.colno})"
        ) from None


def _caption_rows(rows: Any, path: Path, role: str) -> list[tuple[Any, str]]:
    """``(image_id, caption)`` pairs from a list of COCO caption records, validated."""
    if not isinstance(rows, list):
        raise InputError(f"{role} file {path}: expected a list of {{image_id, caption}} records")
    out = []
    for i, row in enumerate(rows):
        if not isinstance(row, dict):
            raise InputError(f"{role} file {path}, record {i}: expected an object")
        for field in ("image_id", "caption"):
            if field not in row:
                raise InputError(f"{role} file {path}, record {i}: missing field '{field}'")
        if not isinstance(row["caption"], str):
            raise InputError(f"{role} file {path}, record {i}, field 'caption': expected a string")
        out.append((row["image_id"], row["caption"]))
    return out


def load_coco(results_path: Path, annotations_path: Path) -> CocoBatch:
    """Read a COCO results file and a COCO captions file into one ordered batch."""
    results = _caption_rows(_load_json(results_path, "results"), results_path, "results")
    if not results:
        raise InputError(f"results file {results_path} holds no captions")
    ann = _load_json(annotations_path, "annotations")
    if not isinstance(ann, dict) or "annotations" not in ann:
        raise InputError(
            f"annotations file {annotations_path}: expected an object with an 'annotations' list"
        )
    refs: dict[Any, list[str]] = {}
    for image_id, caption in _caption_rows(ann["annotations"], annotations_path, "annotations"):
        refs.setdefault(image_id, []).append(caption)
    cands: dict[Any, str] = {}
    for i, (image_id, caption) in enumerate(results):
        if image_id in cands:
            raise InputError(
                f"results file {results_path}, record {i}: image_id {image_id!r} has more than "
                "one caption (one candidate per image is expected)"
            )
        cands[image_id] = caption
    missing = [i for i in cands if i not in refs]
    if missing:
        shown = ", ".join(map(repr, missing[:5])) + (" ..." if len(missing) > 5 else "")
        raise InputError(
            f"{len(missing)} image_id(s) of {results_path} have no reference in "
            f"{annotations_path}: {shown}"
        )
    order = _evaluation_order(ann, cands)
    return CocoBatch(
        tuple(order), tuple(cands[i] for i in order), tuple(tuple(refs[i]) for i in order)
    )


def _evaluation_order(ann: dict, cands: dict[Any, str]) -> list[Any]:
    # pycocotools' loadRes keeps the annotation file's images list order; without one, the
    # results' own order.
    images = ann.get("images")
    if isinstance(images, list):
        listed = [img.get("id") for img in images if isinstance(img, dict)]
        order = [i for i in dict.fromkeys(listed) if i in cands]
        if len(order) == len(cands):
            return order
    return list(cands)


def score_coco(
    batch: CocoBatch,
    keys: Sequence[str],
    tokenizer: str = "ptb",
    cider_idf: str = "corpus",
    embeddings: Any = None,
) -> dict[str, MetricResult]:
    """Score a COCO batch with the given keys, tokenizing once.

    ``embeddings`` (an ``Embeddings``; None = the default GloVe) goes to WMD and MEAN.
    """
    from tqdm import tqdm

    options: dict[str, dict[str, Any]] = {"cider_d": {"idf": cider_idf}}
    if embeddings is not None:
        options["wmd"] = options["mean"] = {"embeddings": embeddings}
    metrics = list(dict.fromkeys(metric_class(k).key for k in keys))
    show = len(batch.candidates) >= PROGRESS_FROM
    with tqdm(
        total=len(metrics) + 1, desc="capeval", unit="step", file=sys.stderr, disable=not show
    ) as bar:
        bar.set_postfix_str("tokenizing")
        coco = make_batch(batch.candidates, batch.references, tokenizer)
        bar.update()
        by_metric: dict[str, MetricResult] = {}
        for key in metrics:
            bar.set_postfix_str(key)
            metric = metric_class(key)(tokenizer=tokenizer, **options.get(key, {}))
            by_metric[key] = metric.score_batch(coco)
            bar.update()
    return {k: by_metric[metric_class(k).key].select(k) for k in keys}


def write_per_item(path: Path, batch: CocoBatch, results: dict[str, MetricResult]) -> None:
    """One row per image: CSV (image_id, then a column per key) or a JSON list."""
    rows = []
    for i, image_id in enumerate(batch.image_ids):
        row: dict[str, Any] = {"image_id": image_id}
        for key, result in results.items():
            row[key] = result.segments[i].scores[key]
        rows.append(row)
    suffix = path.suffix.lower()
    if suffix == ".json":
        path.write_text(json.dumps(rows, indent=1, allow_nan=False, default=_nan_to_none))
    elif suffix == ".csv":
        with path.open("w", newline="", encoding="utf-8") as fh:
            writer = csv.DictWriter(fh, fieldnames=["image_id", *results])
            writer.writeheader()
            writer.writerows(rows)
    else:
        raise InputError(f"--per-item must end in .csv or .json (got {path.name})")


def _nan_to_none(value: Any) -> Any:
    if isinstance(value, float) and math.isnan(value):
        return None
    raise TypeError(f"not JSON serialisable: {value!r}")


def _print_table(results: dict[str, MetricResult], n_images: int) -> None:
    width = max(len(k) for k in results)
    print(f"capeval {__version__} - {n_images} images")
    for key, result in results.items():
        print(f"{key:<{width}}  {result.value:.6f}  {result.signature}")
    notes = {r.signature.metric: r.warnings for r in results.values()}
    for metric, warnings in notes.items():
        for note in warnings:
            print(f"warning ({metric}): {note}", file=sys.stderr)


def _cmd_score(args: argparse.Namespace) -> int:
    keys = list(dict.fromkeys(args.metrics or DEFAULT_KEYS))
    for key in keys:
        metric_class(key)  # unknown keys fail before any file is read
    batch = load_coco(Path(args.results), Path(args.annotations))
    embeddings = None
    if args.embeddings and any(metric_class(k).key in ("wmd", "mean") for k in keys):
        from capeval_core.embeddings import load_embeddings

        embeddings = load_embeddings(args.embeddings)
    results = score_coco(batch, keys, args.tokenizer, args.cider_idf, embeddings)
    if args.per_item:
        write_per_item(Path(args.per_item), batch, results)
    if args.json:
        out = {
            "corpus": {k: r.value for k, r in results.items()},
            "signatures": {k: str(r.signature) for k, r in results.items()},
        }
        print(json.dumps(out, indent=1))
    else:
        _print_table(results, len(batch.image_ids))
    return 0


#: keys scored by ``correlate`` when --metrics is not given (fast, no extra resources)
CORRELATE_KEYS = ("bleu_4", "rouge_l", "cider_d")


def _jsonable(value: Any) -> Any:
    """NaN -> None, recursively (the correlate JSON contract says null)."""
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _cmd_correlate(args: argparse.Namespace) -> int:
    import warnings

    from tqdm import tqdm

    from capeval_core.judgments import load_judgments
    from capeval_core.judgments.scoring import score_judgments
    from capeval_core.resources import available_cpus
    from capeval_core.stats import correlate, pairwise_accuracy, williams_matrix

    keys = list(dict.fromkeys(args.metrics or CORRELATE_KEYS))
    for key in keys:
        metric_class(key)  # unknown keys fail before any file is read
    jset = load_judgments(args.judgments, args.format, args.preset)
    print(f"{args.format}: {jset.describe()}", file=sys.stderr)
    with tqdm(total=None, desc="scoring", unit="metric", file=sys.stderr) as bar:

        def progress(done: int, total: int, label: str) -> None:
            bar.total = total
            bar.n = done
            bar.set_postfix_str(label)
            bar.refresh()

        workers = available_cpus() if args.workers is None else args.workers
        scores = score_judgments(
            jset, keys, tokenizer=args.tokenizer, workers=workers, on_progress=progress
        )
    if jset.kind == "pairwise":
        prefs = jset.preferences()
        accuracy = {
            k: pairwise_accuracy(
                scores.values_a[k], scores.values_b[k], prefs, jset.categories(), seed=args.seed
            ).as_dict()
            for k in scores.keys
        }
        out: dict[str, Any] = {"n_pairs": len(jset), "accuracy": accuracy}
        cats = list(next(iter(accuracy.values()))) if accuracy else []
        width = max([len(k) for k in accuracy] + [6])
        print(f"{'metric':<{width}}  " + "  ".join(f"{c:>8}" for c in cats))
        for k, row in accuracy.items():
            print(f"{k:<{width}}  " + "  ".join(f"{row[c]:>8.4f}" for c in cats))
    else:
        human = jset.human(args.human)
        correlations: dict[str, dict[str, float]] = {}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # constant metrics give NaN (null in the JSON)
            for k in scores.keys:
                correlations[k] = {
                    m: correlate(scores.values[k], human, m).statistic
                    for m in ("pearson", "spearman", "kendall_b", "kendall_c")
                }
            matrix = (
                williams_matrix(human, scores.values, args.williams_correlation)
                if len(human) > 3
                else None
            )
        williams = matrix.as_dict() if matrix is not None else {}
        out = {
            "n_rows": len(jset),
            "dropped": dict(jset.dropped),
            "correlations": correlations,
            "williams": williams,
        }
        width = max([len(k) for k in correlations] + [6])
        print(
            f"{'metric':<{width}}  {'pearson':>9}  {'spearman':>9}  {'kendall_b':>9}  "
            f"{'kendall_c':>9}"
        )
        for k, row in correlations.items():
            print(f"{k:<{width}}  " + "  ".join(f"{v:>9.4f}" for v in row.values()))
        if matrix is not None:
            print(
                f"\nWilliams test p-values ({matrix.alternative}, {matrix.correlation}; "
                "row beats column; '-' = not tested)"
            )
            print(f"{'':<{width}}  " + "  ".join(f"{m:>9}" for m in matrix.metrics))
            for i, a in enumerate(matrix.metrics):
                cells = ("        -" if math.isnan(p) else f"{p:>9.4g}" for p in matrix.pvalues[i])
                print(f"{a:<{width}}  " + "  ".join(cells))
    for key, msg in scores.skipped.items():
        print(f"warning: {key} skipped: {msg}", file=sys.stderr)
    if args.json:
        text = json.dumps(_jsonable(out), indent=1, allow_nan=False)
        if args.json == "-":
            print(text)
        else:
            Path(args.json).write_text(text + "\n", encoding="utf-8")
    return 0


#: keys ``perturb`` scores when --metrics is not given
PERTURB_KEYS = ("bleu_1", "bleu_4", "rouge_l", "cider_d", "meteor", "wmd")
#: datasets ``perturb --dataset`` knows by name (anything else is a judgment file path)
PERTURB_DATASETS = ("coco-val", "demo-graded")


def _perturb_dataset(args: argparse.Namespace):
    """(candidates, references, human scores or None, human column, source) of --dataset."""
    if args.dataset == "coco-val":
        from capeval_core.resources import coco_caption_sets

        sets = coco_caption_sets("val", args.images)
        source = f"COCO val2014, first {len(sets)} images"
        return [s.candidate for s in sets], [s.references for s in sets], None, None, source
    if args.dataset == "demo-graded":
        from capeval_core.judgments.demo import demo_graded

        jset = demo_graded(max(1, args.images // 5), seed=args.seed)
    else:
        from capeval_core.judgments import load_judgments

        if not args.format:
            raise InputError("--format is needed with a judgment file as --dataset")
        jset = load_judgments(args.dataset, args.format, args.preset)
    if jset.kind != "graded":
        raise InputError(f"--dataset must be a graded judgment set (got a {jset.kind} one)")
    human = args.human or jset.score_names[0]
    return jset.candidates, jset.references, jset.human(human), human, jset.describe()


def _cmd_perturb(args: argparse.Namespace) -> int:
    from capeval_core import perturb as lab

    keys = list(dict.fromkeys(args.metrics or PERTURB_KEYS))
    for key in keys:
        metric_class(key)  # unknown keys fail before anything is read
    lab.perturbation_spec(args.perturbation)
    idf = args.cider_idf or ("corpus" if args.dataset else "coco-val2014")
    options = {"cider_d": {"idf": idf}}
    if args.dataset:
        cands, refs, human, human_name, source = _perturb_dataset(args)
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
        }
        if not args.json:
            print(f"{result.name} on {source}: {out['n_changed']} of {out['n']} changed")
            print(summary.drop(columns="signature").to_string(index=False))
            if not corr.empty:
                print(f"\ncorrelation with human scores ({human_name}), before -> after")
                print(corr.to_string(index=False))
    else:
        if args.candidate is None or not args.reference:
            raise InputError("give --candidate and --reference (or --dataset)")
        p = lab.perturb(args.candidate, args.perturbation, seed=args.seed)
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
            print(f"original:  {p.original}\nperturbed: {p.perturbed}\n({p.note})")
            for k in scores.before:
                b, a = scores.before[k], scores.after[k]
                print(f"{k:<10} {b:.6f} -> {a:.6f}  ({a - b:+.6f})")
    for key, msg in out["skipped"].items():
        print(f"warning: {key} skipped: {msg}", file=sys.stderr)
    if args.json:
        print(json.dumps(_jsonable(out), indent=1, allow_nan=False))
    return 0


def _cmd_metrics(args: argparse.Namespace) -> int:
    for key in available_keys():
        cls = metric_class(key)
        direction = "higher is better" if cls.higher_is_better else "lower is better"
        print(f"{key:<10} {cls.name:<10} range {cls.bounds[0]:g}-{cls.bounds[1]:g}, {direction}")
    return 0


def _cmd_info(args: argparse.Namespace) -> int:
    from capeval_core.resources import inventory

    for item in inventory():
        status = "ok" if item.available else "MISSING"
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
    parser = argparse.ArgumentParser(
        prog="capeval", description="Image-captioning metrics that match the references."
    )
    parser.add_argument("--version", action="version", version=f"capeval {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    score = sub.add_parser("score", help="score a COCO results file against COCO captions")
    score.add_argument("--results", required=True, help='[{"image_id": ..., "caption": ...}]')
    score.add_argument(
        "--annotations", required=True, help='{"annotations": [{"image_id", "caption"}]}'
    )
    score.add_argument(
        "--metrics",
        nargs="+",
        metavar="KEY",
        help=f"metric keys (default: {' '.join(DEFAULT_KEYS)}); see `capeval metrics`",
    )
    score.add_argument("--per-item", metavar="OUT", help="write per-image scores (.csv or .json)")
    score.add_argument("--json", action="store_true", help="print a JSON object on stdout")
    score.add_argument("--tokenizer", default="ptb", choices=["ptb", "whitespace"])
    score.add_argument(
        "--cider-idf",
        default="corpus",
        choices=["corpus", "coco-val2014"],
        help="CIDEr-D document frequencies: the scored set (as coco-caption) or COCO val2014",
    )
    score.add_argument(
        "--embeddings",
        metavar="PATH",
        help="word vectors for wmd and mean (word2vec .bin/.txt, GloVe .txt or fastText .vec, "
        "optionally .gz; default: GloVe 6B 50-d)",
    )
    score.set_defaults(func=_cmd_score)

    correlate = sub.add_parser(
        "correlate", help="correlate metrics with human judgments (or pairwise accuracy)"
    )
    correlate.add_argument(
        "--judgments", required=True, metavar="PATH", help="judgment file, or the dataset folder"
    )
    correlate.add_argument(
        "--format",
        required=True,
        choices=[
            "graded",
            "pairwise",
            "flickr8k-expert",
            "flickr8k-cf",
            "composite",
            "pascal50s",
            "abstract50s",
        ],
    )
    correlate.add_argument("--preset", help="protocol preset (default: the format's published one)")
    correlate.add_argument(
        "--metrics",
        nargs="+",
        metavar="KEY",
        help=f"metric keys (default: {' '.join(CORRELATE_KEYS)}); see `capeval metrics`",
    )
    correlate.add_argument("--json", metavar="OUT", help="write the results as JSON ('-': stdout)")
    correlate.add_argument("--human", help="human-score column (default: the first)")
    correlate.add_argument("--tokenizer", default="ptb", choices=["ptb", "whitespace"])
    correlate.add_argument(
        "--williams-correlation",
        default="pearson",
        choices=["pearson", "spearman", "kendall_b", "kendall_c"],
    )
    correlate.add_argument(
        "--workers",
        type=int,
        default=None,
        help="worker processes for scoring (default: one per available CPU; 0 or 1: none)",
    )
    correlate.add_argument("--seed", type=int, default=0, help="seed for human-tie breaking")
    correlate.set_defaults(func=_cmd_correlate)

    pert = sub.add_parser(
        "perturb", help="perturb a caption (or every candidate of a dataset) and rescore it"
    )
    pert.add_argument("--candidate", metavar="TEXT", help="the caption to perturb")
    pert.add_argument(
        "--reference", action="append", metavar="TEXT", help="a reference (repeat the option)"
    )
    pert.add_argument("--perturbation", required=True, metavar="NAME", help="registry name")
    pert.add_argument("--seed", type=int, default=0)
    pert.add_argument(
        "--metrics",
        nargs="+",
        metavar="KEY",
        help=f"metric keys (default: {' '.join(PERTURB_KEYS)}); see `capeval metrics`",
    )
    pert.add_argument("--json", action="store_true", help="print a JSON object on stdout")
    pert.add_argument("--tokenizer", default="ptb", choices=["ptb", "whitespace"])
    pert.add_argument(
        "--cider-idf",
        choices=["corpus", "coco-val2014"],
        help="CIDEr-D document frequencies (default: coco-val2014 for one caption, whose own "
        "references give every weight 0; corpus for --dataset)",
    )
    pert.add_argument(
        "--dataset",
        metavar="NAME|PATH",
        help=f"batch mode: {' or '.join(PERTURB_DATASETS)}, or a graded judgment file",
    )
    pert.add_argument("--images", type=int, default=5000, help="images of coco-val/demo-graded")
    pert.add_argument("--format", help="judgment format of a --dataset file (e.g. graded)")
    pert.add_argument("--preset", help="protocol preset of a --dataset file")
    pert.add_argument("--human", help="human-score column (default: the first)")
    pert.set_defaults(func=_cmd_perturb)

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
    tr.add_argument("--vocab-size", type=int, default=_d["vocab_size"], help="encoder words")
    tr.add_argument("--output-vocab", type=int, default=_d["output_vocab"], help="decoder words")
    tr.add_argument("--max-captions", type=int, default=_d["max_captions"])
    tr.add_argument("--max-len", type=int, default=_d["max_len"], help="longest caption kept")
    tr.add_argument("--hidden", type=int, default=_d["hidden"], help="encoder GRU size/direction")
    tr.add_argument("--decoder-hidden", type=int, default=_d["decoder_hidden"])
    tr.add_argument("--attention", type=int, default=_d["attention"])
    tr.add_argument("--epochs", type=int, default=_d["epochs"])
    tr.add_argument("--batch-size", type=int, default=_d["batch_size"])
    tr.add_argument("--lr", type=float, default=_d["lr"])
    tr.add_argument("--seed", type=int, default=_d["seed"])
    tr.add_argument("--threads", type=int, default=_d["threads"], help="torch CPU threads")
    tr.add_argument("--val-captions", type=int, default=_d["val_captions"])
    tr.add_argument("--log-every", type=int, default=_d["log_every"], help="loss log interval")
    tr.set_defaults(func=_cmd_train_i2ce)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit status (2 for bad input, as argparse does)."""
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except CapevalError as exc:
        print(f"capeval: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
