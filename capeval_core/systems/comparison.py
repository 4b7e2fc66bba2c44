"""Whether the systems' differences hold: bootstrap intervals and paired tests against the first
system (:func:`compare_systems`, :class:`SystemsComparison`, :class:`ResamplingSignature`), the
p-values as papers print them (:func:`format_p`), and the per-image outputs with their
signatures.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import numbers
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from capeval_core import batch
from capeval_core._version import __version__
from capeval_core.batch import Progress
from capeval_core.coco_files import SORTED_ID_KEYS, coco_caption_mean, describe_references
from capeval_core.errors import InputError
from capeval_core.files import counted, printable, signed, write_all
from capeval_core.metrics import metric_class
from capeval_core.metrics.statistics import ItemStatistics
from capeval_core.options import is_whole
from capeval_core.results import left_out_line
from capeval_core.systems.loading import SystemsInput
from capeval_core.systems.scoring import SystemsScores, cache_file, score_systems

if TYPE_CHECKING:
    import pandas as pd

    from capeval_core.stats.resampling import PairedResult


def _check_shown(shown: Any) -> None:
    """How many ids a line lists: a negative count listed all but the last ones, and said
    how many "more" there were as more than there are."""
    if isinstance(shown, bool) or not isinstance(shown, numbers.Integral) or shown < 0:
        raise InputError(f"`shown` must be a whole number >= 0 (got {shown!r})")


@dataclass(frozen=True)
class ResamplingSignature:
    """How intervals and p-values were drawn: test(s), resamples, trials, seed, level.
    ``tested`` is False for one system (intervals only): its signature names no test.

    >>> str(ResamplingSignature("both", 1000, 10000, 12345, 0.95))
    'paired:bs+ar|resamples:1000|trials:10000|seed:12345|level:0.95'
    >>> str(ResamplingSignature("both", 1000, 10000, 12345, 0.95, tested=False))
    'resamples:1000|seed:12345|level:0.95'
    """

    paired: str
    n_resamples: int
    n_trials: int
    seed: int | None
    level: float
    tested: bool = True

    def __str__(self) -> str:
        if not self.tested:  # settings that changed no number are not part of it
            return f"resamples:{self.n_resamples}|seed:{self.seed}|level:{float(self.level)!r}"
        tests = {"bs": "bs", "ar": "ar", "both": "bs+ar"}[self.paired]
        parts = [f"paired:{tests}", f"resamples:{self.n_resamples}"]
        if self.paired != "bs":
            parts.append(f"trials:{self.n_trials}")
        parts += [f"seed:{self.seed}", f"level:{float(self.level)!r}"]
        return "|".join(parts)


@dataclass(frozen=True)
class SystemsComparison:
    """Corpus values with bootstrap intervals, and every system against the baseline.

    ``paired[key][system]`` holds a :class:`~capeval_core.stats.resampling.PairedResult`
    for every system but the baseline (the first). ``mean`` and ``ci`` come from the same
    bootstrap resamples. :meth:`as_dict` is the JSON ``capeval compare`` writes.

    A metric that could not score some system's images (``scores.missing``) is compared on
    the images every system scored with it (``scores.compared``), as ``on_missing=
    "intersect"`` does for images some system does not caption: its values (``on_compared``,
    which :attr:`corpus` shows), intervals and paired tests all use those images;
    :meth:`left_out_lines` says which were left out and why.
    """

    scores: SystemsScores
    ci: Mapping[str, Mapping[str, tuple[float, float]]]
    mean: Mapping[str, Mapping[str, float]]
    paired: Mapping[str, Mapping[str, PairedResult]]
    resampling: ResamplingSignature
    on_compared: Mapping[str, Mapping[str, float]] = field(default_factory=dict)

    @property
    def systems(self) -> tuple[str, ...]:
        return self.scores.systems

    @property
    def baseline(self) -> str:
        return self.systems[0]

    @property
    def keys(self) -> tuple[str, ...]:
        return self.scores.keys

    @functools.cached_property
    def corpus(self) -> Mapping[str, Mapping[str, float]]:
        """Each system's value of every key: over every image, or for a metric that left
        some out, over the images every system scored with it."""
        if not any(self.on_compared.values()):
            return self.scores.corpus
        return {s: {**self.scores.corpus[s], **self.on_compared.get(s, {})} for s in self.systems}

    def n_compared(self, key: str) -> int:
        """How many images ``key``'s values, intervals and tests are over."""
        rows = self.scores.compared.get(metric_class(key).key)
        return len(self.scores.input) if rows is None else len(rows)

    def left_out(self) -> dict[str, dict[str, dict[Any, str]]]:
        """``{key: {system: {image_id: reason}}}`` for the keys whose metric left images out."""
        out = {k: self.scores.left_out(k) for k in self.keys}
        return {k: v for k, v in out.items() if v}

    def left_out_warnings(self, shown: int = 5) -> list[str]:
        """One line per metric that could not score some images: which (for any system;
        ``shown`` ids, none with 0) and on how many images its values, intervals and tests
        are (the CLI's stderr; the page's warning, the ids then given as text)."""
        _check_shown(shown)
        lines = []
        done: set[str] = set()
        ids = self.scores.input.image_ids
        for key in self.left_out():
            metric = metric_class(key)
            if metric.key in done:
                continue
            done.add(metric.key)
            label = metric.label(metric.primary_key())
            rows = set(self.scores.compared[metric.key])
            gone = [ids[i] for i in range(len(ids)) if i not in rows]
            listed = ", ".join(map(str, gone[:shown]))
            more = f" ... ({len(gone) - shown:,} more)" if len(gone) > shown else ""
            which = (
                f"image ids {listed}{more}; reasons in the report and the JSON"
                if shown
                else "which and why below"
            )
            lines.append(
                f"{label} could not score {len(gone):,} of {len(ids):,} images for some "
                f"system ({which}): its values, intervals and tests use the {len(rows):,} "
                "images every system scored"
            )
        return lines

    def left_out_lines(self, shown: int = 5) -> list[str]:
        """What each metric that could not score some images left out and why, one line per
        metric (its keys share the images), then one per system that lost images."""

        _check_shown(shown)
        lines = []
        done: set[str] = set()
        n = len(self.scores.input)
        for key, per_system in self.left_out().items():
            metric = metric_class(key)
            if metric.key in done:
                continue
            done.add(metric.key)
            label = metric.label(metric.primary_key())
            together = sorted({i for lost in per_system.values() for i in lost}, key=str)
            lines.append(
                f"{label}: compared on the {self.n_compared(key):,} of {n:,} images every "
                f"system's {label} scored ({len(together):,} left out):"
            )
            lines += [
                "  " + left_out_line(f"{label} of {s}", lost, n, "images", shown)
                for s, lost in per_system.items()
            ]
        return lines

    def signature(self, key: str) -> str:
        """The metric's signature followed by the resampling's."""
        return f"{self.scores.signatures[key]}|{self.resampling}"

    def as_dict(self) -> dict[str, Any]:
        """``{"systems", "corpus", "ci", "paired", "signatures", "n_images", "references",
        "references_sha256", "dropped"}`` (NaN as None; the references as ``capeval score``
        names them); ``dropped[system]`` is ``{"n", "image_ids"}``, the images of its file
        left out because another system does not caption them. When a metric could not
        score some images, ``left_out[key]`` too, for each of its keys: ``{"n",
        "image_ids", "n_compared", "reasons"}``, the images left out of its comparison, how
        many are compared, and ``{"system", "image_id", "reason"}`` per image a system lost."""
        out = {
            "systems": list(self.systems),
            "corpus": {s: {k: self.corpus[s][k] for k in self.keys} for s in self.systems},
            "ci": {s: {k: list(self.ci[s][k]) for k in self.keys} for s in self.systems},
            "paired": {
                k: {
                    s: {
                        "delta": r.delta,
                        "ci": list(r.confidence_interval),
                        "p_value": r.p_value,
                        # each test's own (None: not run), as the text gives them
                        "p_bootstrap": r.p_bootstrap,
                        "p_randomization": r.p_randomization,
                    }
                    for s, r in self.paired[k].items()
                }
                for k in self.keys
            },
            "signatures": {k: self.signature(k) for k in self.keys},
            "n_images": len(self.scores.input),
            **references_fields(self.scores.input),  # the data, which no signature names
            "dropped": {
                s: {"n": len(lost), "image_ids": list(lost)}
                for s, lost in zip(self.systems, self._lost(), strict=True)
            },
        }
        ids = self.scores.input.image_ids
        for key, per_system in self.left_out().items():
            rows = set(self.scores.compared[metric_class(key).key])
            gone = [ids[i] for i in range(len(ids)) if i not in rows]
            out.setdefault("left_out", {})[key] = {
                "n": len(gone),
                "image_ids": gone,
                "n_compared": len(rows),
                "reasons": [
                    {"system": s, "image_id": image_id, "reason": why}
                    for s, lost in per_system.items()
                    for image_id, why in lost.items()
                ],
            }
        return _finite(out)

    def _lost(self) -> list[tuple[Any, ...]]:
        return [self.scores.input.lost(i) for i in range(len(self.systems))]

    def dropped_lines(self, shown: int = 20) -> list[str]:
        """What each file lost to ``on_missing="intersect"``, one line per file that lost
        images (none when every system captions the same images)."""
        data = self.scores.input
        lines = []
        for i, lost in enumerate(self._lost()):
            if lost:
                more = f" ... ({len(lost) - shown:,} more)" if len(lost) > shown else ""
                lines.append(
                    f"{data.sources[i]} ({self.systems[i]}): {dropped_said(data, i)}: "
                    f"{', '.join(map(repr, lost[:shown]))}{more}"
                )
        return lines

    def format_table(self) -> str:
        """The comparison as text, laid out like sacrebleu's paired-test table: each system's
        value ± the half-width of its interval, then its difference to the baseline and the
        p-value (``*`` where p < 0.05; at the floor of the resampling, ``p < 0.001``)."""

        r = self.resampling
        resolution = {"bs": r.n_resamples, "ar": r.n_trials}.get(
            r.paired, min(r.n_resamples, r.n_trials)
        )
        labels = [metric_class(k).label(k) for k in self.keys]
        pct = f"{r.level * 100:g}%"
        header = ["System", *(f"{label} (± {pct} CI)" for label in labels)]
        rows: list[list[str]] = []
        for s in self.systems:
            cells = [printable(f"Baseline: {s}" if s == self.baseline else s)]
            for k in self.keys:
                low, high = self.ci[s][k]
                half = (high - low) / 2
                value = self.corpus[s][k]  # a metric that scored no image: n/a, as the tables
                cells.append(f"{value:.4f} ± {half:.4f}" if math.isfinite(value) else "n/a")
            rows.append(cells)
            if s == self.baseline:
                continue
            delta = [""]
            detail = [""]
            for k in self.keys:
                p = self.paired[k][s]
                mark = "*" if p.p_value < ALPHA else ""
                shown = format_p(p.p_value, resolution)
                shown = f"p {shown}" if shown.startswith("<") else f"p = {shown}"
                delta.append(
                    f"Δ {signed(p.delta, 4)} ({shown}){mark}" if math.isfinite(p.delta) else "Δ n/a"
                )
                if r.paired == "both":
                    detail.append(
                        f"bs {format_p(p.p_bootstrap, r.n_resamples)}, "
                        f"ar {format_p(p.p_randomization, r.n_trials)}"
                    )
            rows.append(delta)
            if r.paired == "both":
                rows.append(detail)
            rows.append([])  # a rule between systems
        widths = [max(len(row[j]) for row in [header, *rows] if row) for j in range(len(header))]

        def line(cells: list[str]) -> str:
            return "| " + " | ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)) + " |"

        rule = "+" + "+".join("-" * (w + 2) for w in widths) + "+"
        named = references_fields(self.scores.input)  # as `capeval score` names them
        out = [
            f"capeval {__version__}: {counted(len(self.systems), 'system')}, "
            f"{counted(len(self.scores.input), 'image')}, references from "
            f"{printable(named['references'])}, sha256 {named['references_sha256']}",
            rule,
            line(header),
            rule.replace("-", "="),
        ]
        for row in rows:
            out.append(rule if not row else line(row))
        if out[-1] != rule:
            out.append(rule)
        tests = {
            "bs": f"paired bootstrap resampling ({r.n_resamples:,} resamples)",
            "ar": f"approximate randomization ({r.n_trials:,} trials)",
            "both": f"paired bootstrap resampling ({r.n_resamples:,} resamples) and "
            f"approximate randomization ({r.n_trials:,} trials)",
        }[r.paired]
        undefined = categories_left_out(self)
        if undefined:
            counts = ", ".join(f"{metric_class(k).label(k)} {n:,}" for k, n in undefined.items())
            out += [
                "",
                "SPICE categories: the mean over the images whose references have such tuples; "
                f"images left out: {counts}.",
            ]
        lost = self.dropped_lines()
        if lost:
            out += ["", "Scored on the images every system captions (on-missing: intersect):"]
            out += [f"  {printable(line)}" for line in lost]
        left = self.left_out_lines()
        if left:
            out += ["", *left]
        if len(self.systems) == 1:  # no other system: intervals, no test (nor their words)
            out += [
                "",
                f"Value ± half the width of its {pct} bootstrap interval over images "
                f"({r.n_resamples:,} resamples, seed {r.seed}).",
            ]
            return "\n".join(out)
        out += [
            "",
            f"Each system against the baseline ({printable(self.baseline)}) with {tests}, "
            f"seed {r.seed}.",
            f"Value ± half the width of its {pct} bootstrap interval over images; Δ = system "
            "minus baseline.",
            "Null hypothesis: the system and the baseline captions come from the same process; "
            "p is about the chance",
            "of an absolute difference at least as large under it. * marks p < 0.05"
            + (
                " (p is the larger of the two tests' p-values; bs/ar: each test's)."
                if r.paired == "both"
                else "."
            ),
        ]
        if r.paired != "ar":  # sacrebleu's paired bootstrap p is not a two-sided one
            out.append(
                "The paired bootstrap p is sacrebleu's: it counts one tail, about half a "
                "two-sided p (approximate randomization's is two-sided)."
            )
        return "\n".join(out)

    def to_frame(self) -> pd.DataFrame:
        """One row per (system, key): value, interval, delta to the baseline, p-values."""
        import pandas as pd

        rows = []
        for s in self.systems:
            for k in self.keys:
                low, high = self.ci[s][k]
                row: dict[str, Any] = {
                    "system": s,
                    "key": k,
                    "value": self.corpus[s][k],
                    "ci_low": low,
                    "ci_high": high,
                    "bootstrap_mean": self.mean[s][k],
                }
                r = self.paired[k].get(s)
                row.update(
                    {
                        "delta": r.delta if r else math.nan,
                        "delta_ci_low": r.confidence_interval[0] if r else math.nan,
                        "delta_ci_high": r.confidence_interval[1] if r else math.nan,
                        "p_bootstrap": r.p_bootstrap
                        if r and r.p_bootstrap is not None
                        else math.nan,
                        "p_randomization": (
                            r.p_randomization if r and r.p_randomization is not None else math.nan
                        ),
                        "p_value": r.p_value if r else math.nan,
                    }
                )
                rows.append(row)
        return pd.DataFrame(rows)


#: p-values below this are written "< 0.001" however many resamples were drawn
P_SHOWN_FROM = 0.001
#: p below this is "significant": marked * in the report, † in the paper's table
ALPHA = 0.05


def format_p(p: float, resolution: int) -> str:
    """A p-value as a paper prints it (:meth:`SystemsComparison.format_table` and
    :mod:`capeval_core.systems_table`'s tables): three decimals, and below 0.001 (or at the floor of
    ``resolution`` resamples or trials, ``1/(resolution+1)``) an upper bound.

    A p just below :data:`ALPHA` gets the digits that keep it below (0.04995, not 0.050
    beside its significance mark).

    >>> format_p(1 / 1001, 1000), format_p(0.0321, 1000), format_p(1 / 201, 200), format_p(1, 1000)
    ('< 0.001', '0.032', '< 0.005', '1.000')
    >>> format_p(50 / 1001, 1000)
    '0.04995'
    """
    if not math.isfinite(p):
        return "n/a"
    bound = max(P_SHOWN_FROM, 1 / resolution)
    if p < bound or p * (resolution + 1) <= 1 + 1e-9:
        return f"< {bound:.2g}"
    digits = 3
    while p < ALPHA and float(f"{p:.{digits}f}") >= ALPHA and digits < 12:
        digits += 1
    return f"{p:.{digits}f}"


def dropped_said(data: SystemsInput, system: int) -> str:
    """How many of system ``system``'s images ``on_missing="intersect"`` dropped, and which
    systems do not caption them: "sysA 1" read as sysA lacking the image, where sysA had it
    and another system lacked it. The words of the Systems page, its table and the CLI.

    >>> data = SystemsInput(("A", "B", "C"), (1,), (("x",), ("y",), ("z",)), (("r",),),
    ...                     ("a", "b", "c"), "t", (), ((2, 3), (3,), ()))
    >>> dropped_said(data, 0), dropped_said(data, 1)
    ('2 images dropped (not captioned by B or C)', '1 image dropped (not captioned by C)')
    """
    lost = data.lost(system)
    others = [j for j in range(len(data.names)) if j != system]
    # another system captions a dropped image only if it lost that image too
    lacking = dict.fromkeys(
        data.names[j] for image in lost for j in others if image not in data.lost(j)
    )
    by = " or ".join(map(str, lacking)) or "another system"
    return f"{counted(len(lost), 'image')} dropped (not captioned by {by})"


def categories_left_out(comparison: SystemsComparison) -> dict[str, int]:
    """Per optional key shown (SPICE's categories), how many images have no value: their
    references hold no tuple of the category, so the mean leaves them out."""
    out = {}
    for k in comparison.keys:
        if k in metric_class(k).optional_reports:
            values = comparison.scores.items[comparison.systems[0]][k]
            rows = comparison.scores.compared.get(metric_class(k).key)
            if rows is not None:  # of the images compared (the others are left out)
                values = values[list(rows)]
            out[k] = int(np.count_nonzero(~np.isfinite(values)))
    return out


def per_item_text(comparison: SystemsComparison, fmt: str) -> str:
    """Per-image captions and values of every system as ``"csv"`` (a header and the rows,
    cells a spreadsheet would evaluate escaped; the signatures are in
    :func:`comparison_signatures_text`) or ``"json"`` (an object with the signatures and one
    record per image).

    >>> from capeval_core.systems import demo_systems
    >>> data = demo_systems(3)  # three systems on three COCO val2014 images
    >>> c = compare_systems(score_systems(data, ["rouge_l"], use_cache=False), use_cache=False)
    >>> per_item_text(c, "csv").splitlines()[0].split(",")[:3]
    ['image_id', 'first caption: caption', 'second caption: caption']
    >>> items = json.loads(per_item_text(c, "json"))["items"]
    >>> len(items), sorted(items[0])[0]
    (3, 'first caption reversed: caption')
    """
    from capeval_core.stats.export import to_csv_text

    frame = comparison.scores.item_frame()
    signatures = {k: comparison.signature(k) for k in comparison.keys}
    if fmt == "csv":
        return to_csv_text(frame)
    if fmt == "json":
        payload = {
            "capeval": __version__,
            "systems": list(comparison.systems),
            **references_fields(comparison.scores.input),
            "signatures": signatures,
            "items": [_finite(r) for r in frame.to_dict("records")],
        }
        return json.dumps(payload, indent=1, allow_nan=False, ensure_ascii=False) + "\n"
    raise InputError(f"per-image output is csv or json (got {fmt!r})")


def comparison_signatures_text(
    comparison: SystemsComparison, describes: str = "", notes: Sequence[str] = ()
) -> str:
    """The sidecar JSON of a comparison's per-image CSV or table: what
    :func:`capeval_core.stats.export.signatures_text` writes of any signatures, here each
    key's signature (metric and resampling) with the systems and the references; the images
    a system's file had and the others did not (``dropped``, when any: the references'
    digest names the images scored), and ``notes``, what a table says of itself (its scale,
    images, tests), which a CSV has no place for.

    >>> from capeval_core.systems import demo_systems
    >>> data = demo_systems(3)
    >>> c = compare_systems(score_systems(data, ["rouge_l"], use_cache=False), use_cache=False)
    >>> sidecar = json.loads(comparison_signatures_text(c, "items.csv"))
    >>> sorted(sidecar)[:3], sidecar["signatures"]["rouge_l"].split("|")[:2]
    (['capeval', 'describes', 'references'], ['rouge_l', 'beta:1.2'])
    """
    from capeval_core.stats.export import signatures_text

    dropped = comparison.as_dict()["dropped"]
    return signatures_text(
        {k: comparison.signature(k) for k in comparison.keys},
        describes,
        systems=list(comparison.systems),
        **references_fields(comparison.scores.input),
        **({"dropped": dropped} if any(d["n"] for d in dropped.values()) else {}),
        **({"notes": list(notes)} if notes else {}),
    )


def references_fields(data: SystemsInput) -> dict[str, str]:
    """How a shared output names the systems' references
    (:func:`capeval_core.coco_files.describe_references`, as ``capeval score`` names them)."""
    return describe_references(data.reference_source, data.references)


def systems_per_item_outputs(
    path: Path, comparison: SystemsComparison
) -> list[tuple[str, Path, str]]:
    """:func:`per_item_text` for ``path`` (``.csv`` or ``.json``) and beside it its
    signatures' sidecar JSON (:func:`capeval_core.stats.export.sidecar_path`), as
    ``(option, path, text)`` for :func:`capeval_core.files.write_all`: beside the JSON too,
    as ``score --per-item`` writes one beside each, so every per-image file is signed alike."""
    from capeval_core.stats.export import sidecar_path

    suffix = path.suffix.lower()
    if suffix not in (".csv", ".json"):
        raise InputError(f"--per-item must end in .csv or .json (got {path.name})")
    return [
        ("--per-item", path, per_item_text(comparison, suffix[1:])),
        ("--per-item", sidecar_path(path), comparison_signatures_text(comparison, path.name)),
    ]


def write_systems_per_item(path: Path, comparison: SystemsComparison) -> None:
    """:func:`systems_per_item_outputs` written, all or none."""
    write_all(systems_per_item_outputs(path, comparison))


def _finite(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _bootstrap(
    scores: SystemsScores,
    metrics: Sequence[str],
    n_resamples: int,
    seed: int | None,
    use_cache: bool,
) -> dict[tuple[str, str], np.ndarray]:
    """Every (system, metric)'s resampled corpus values, from the cache where they are; the
    others in one bootstrap (each chunk of weights drawn once, CIDEr-D's reference work
    shared)."""
    signature = {metric_class(k).key: v for k, v in scores.signatures.items()}
    extra = f"bootstrap|resamples:{n_resamples}|seed:{seed}|n:{len(scores.input)}"
    paths, boot = {}, {}
    for i, s in enumerate(scores.systems):
        digest = scores.input.digest(i)
        for m in metrics:
            rows = _rows_key(scores, m)  # the images compared, when some were left out
            # else no cache folder is even made; a tokenizer of your own's never cached
            cached = use_cache and seed is not None and batch.cacheable(signature[m])
            paths[s, m] = cache_file(digest, f"{signature[m]}|{extra}{rows}") if cached else None
            got = batch.load_entry(paths[s, m], ["values"], None) if cached else None
            if got is not None and got.get("values", np.empty(0)).shape[0] == n_resamples:
                boot[s, m] = got["values"]
    todo = {k: scores.statistics[k[0]][k[1]] for k in paths if k not in boot}
    # one bootstrap per set of compared images (every image, or those a metric left in)
    groups: dict[tuple[int, ...] | None, dict[tuple[str, str], ItemStatistics]] = {}
    for k, stats in todo.items():
        groups.setdefault(scores.compared.get(k[1]), {})[k] = stats
    for group in groups.values():
        fresh = _bootstrap_group(group, n_resamples, seed)
        for k, values in fresh.items():
            if paths[k] is not None:
                batch.save_entry(paths[k], {"values": values})
            boot[k] = values
    return boot


def _bootstrap_group(
    group: Mapping[tuple[str, str], ItemStatistics], n_resamples: int, seed: int | None
) -> dict[tuple[str, str], np.ndarray]:
    from capeval_core.stats import resampling as rs

    size = len(next(iter(group.values())))
    if size == 0:  # a metric that scored no image for some system: nothing to resample
        return {k: np.full((n_resamples, len(v.keys)), math.nan) for k, v in group.items()}
    return rs.bootstrap(group, n_resamples, seed)


def _rows_key(scores: SystemsScores, metric: str) -> str:
    """What names a metric's compared images in a cache key ("" when it compares them all)."""
    rows = scores.compared.get(metric)
    if rows is None:
        return ""
    digest = hashlib.sha256(np.asarray(rows, dtype=np.int64).tobytes()).hexdigest()[:16]
    return f"|compared:{len(rows)}:{digest}"


def compare_systems(
    scores: SystemsScores,
    *,
    paired: str = "both",
    n_resamples: int | None = None,
    n_trials: int | None = None,
    seed: int | None = None,
    level: float = 0.95,
    use_cache: bool = True,
) -> SystemsComparison:
    """Bootstrap intervals for every system and paired tests of each against the first.

    ``paired``: ``"bs"`` (paired bootstrap), ``"ar"`` (approximate randomization) or
    ``"both"``; defaults as sacrebleu: 1,000 resamples, 10,000 trials, seed 12345. The
    bootstrap always runs: it gives the intervals. A system's resampled values depend on
    its captions, the references, the metric, the number of images, resamples and the seed
    only (every system is resampled with the same weights), so with ``use_cache`` they are
    kept in the score cache beside its scores.

    >>> from capeval_core.systems import demo_systems
    >>> scores = score_systems(demo_systems(3), ["rouge_l"], use_cache=False)
    >>> c = compare_systems(scores, use_cache=False)
    >>> t = c.paired["rouge_l"]["first caption reversed"]  # against the baseline, the first
    >>> c.baseline, round(t.delta, 4), round(t.p_bootstrap, 4), round(t.p_randomization, 4)
    ('first caption', -0.0899, 0.001, 0.249)
    >>> [round(x, 4) for x in c.ci["first caption reversed"]["rouge_l"]], str(c.resampling)
    ([0.1818, 0.2947], 'paired:bs+ar|resamples:1000|trials:10000|seed:12345|level:0.95')
    """
    from capeval_core.stats import resampling as rs
    from capeval_core.stats.intervals import MAX_RESAMPLES, check_resampling

    # numpy's integers (a notebook's np.int64(200)) as the Python ints they equal
    n_resamples, n_trials, seed = (
        int(v) if isinstance(v, np.integer) else v
        for v in (
            rs.DEFAULT_RESAMPLES if n_resamples is None else n_resamples,
            rs.DEFAULT_TRIALS if n_trials is None else n_trials,
            rs.DEFAULT_SEED if seed is None else seed,
        )
    )
    if paired not in rs.PAIRED_TESTS:
        raise InputError(f"`paired` must be one of {rs.PAIRED_TESTS} (got {paired!r})")
    for name, value, least in (("n_resamples", n_resamples, 2), ("n_trials", n_trials, 1)):
        if not is_whole(value) or not (least <= value <= MAX_RESAMPLES):
            raise InputError(
                f"`{name}` must be a whole number from {least} to {MAX_RESAMPLES:,} (got {value!r})"
            )
    check_resampling(level, n_resamples)
    if not is_whole(seed) or seed < 0:
        raise InputError(f"`seed` must be a whole number >= 0 (got {seed!r})")
    systems = scores.systems
    ci: dict[str, dict[str, tuple[float, float]]] = {s: {} for s in systems}
    mean: dict[str, dict[str, float]] = {s: {} for s in systems}
    tests: dict[str, dict[str, PairedResult]] = {k: {} for k in scores.keys}
    metrics = list(dict.fromkeys(metric_class(k).key for k in scores.keys))
    if not metrics:  # every metric skipped: nothing to resample
        return SystemsComparison(
            scores, ci, mean, tests, ResamplingSignature(paired, n_resamples, n_trials, seed, level)
        )
    boot = _bootstrap(scores, metrics, n_resamples, seed, use_cache)
    columns: dict[str, tuple[str, int]] = {}
    for k in scores.keys:
        m = metric_class(k).key
        report = scores.statistics[systems[0]][m].keys
        columns[k] = (m, report.index(metric_class(k).value_key(k)))
    for s in systems:
        for k, (m, j) in columns.items():
            values = boot[s, m][:, j]
            ci[s][k] = rs.confidence_interval(values, level)
            finite = values[np.isfinite(values)]
            mean[s][k] = float(finite.mean()) if finite.size else math.nan
    # a metric that left images out is compared on the images every system scored with it
    on_compared: dict[str, dict[str, float]] = {s: {} for s in systems}
    for k, (m, _) in columns.items():
        if m in scores.compared:
            rows = list(scores.compared[m])
            ids = [scores.input.image_ids[i] for i in rows]
            for s in systems:
                point = scores.statistics[s][m].point()
                on_compared[s][k] = point[k if k in point else metric_class(k).primary_key()]
                if k in SORTED_ID_KEYS:  # summed as coco-caption sums it (capeval score too)
                    on_compared[s][k] = coco_caption_mean(scores.items[s][k][rows], ids)
    signature = ResamplingSignature(
        paired, n_resamples, n_trials, seed, level, tested=len(systems) > 1
    )
    base = systems[0]
    if len(systems) < 2:  # one system: intervals only, nothing to test against
        return SystemsComparison(scores, ci, mean, tests, signature, on_compared)
    # every (system, metric) against the baseline in one pass over the swaps (one per set of
    # compared images)
    groups: dict[tuple[int, ...] | None, list[str]] = {}
    for m in metrics:
        groups.setdefault(scores.compared.get(m), []).append(m)
    results = {}
    for rows, group in groups.items():
        pairs = {
            (s, m): (scores.statistics[base][m], scores.statistics[s][m], boot[base, m], boot[s, m])
            for s in systems[1:]
            for m in group
        }
        if rows is not None and not rows:  # no image compared: nothing to test
            results.update({k: _untested(v[0].keys) for k, v in pairs.items()})
            continue
        results.update(
            rs.paired_tests_many(pairs, tests=paired, n_trials=n_trials, seed=seed, level=level)
        )
    for s in systems[1:]:
        for k, (m, j) in columns.items():
            tests[k][s] = results[s, m][scores.statistics[base][m].keys[j]]
    return SystemsComparison(scores, ci, mean, tests, signature, on_compared)


def score_and_compare(
    data: SystemsInput,
    keys: Sequence[str],
    *,
    tokenizer: str = "ptb",
    options: Mapping[str, Mapping[str, Any]] | None = None,
    workers: int = 0,
    on_error: str = "raise",
    paired: str = "both",
    n_resamples: int | None = None,
    n_trials: int | None = None,
    seed: int | None = None,
    on_progress: Progress | None = None,
    on_stage: Callable[[str], None] | None = None,
    ignore: tuple[type[Warning], ...] = (),
) -> SystemsComparison:
    """:func:`score_systems`, then :func:`compare_systems`: the table a reader of a paper
    wants. ``on_stage(text)`` is told when the resampling begins; warnings of the classes in
    ``ignore`` are not shown.

    With :func:`~capeval_core.workers.run_apart` (:func:`score_and_compare_apart`) it runs
    whole in a process of its own: the app's server then only waits for the comparison.

    >>> base = ("a dog", "a cat on a bed", "a car")
    >>> new = ("a dog runs on the grass", "a cat sleeps", "a red car")
    >>> refs = (("a big dog runs on grass",), ("a cat sleeps on a bed",), ("a red car on a road",))
    >>> data = SystemsInput(("base", "new"), (1, 2, 3), (base, new), refs,
    ...                     ("base.json", "new.json"), "refs.json")
    >>> import os
    >>> import tempfile
    >>> from unittest import mock
    >>> with tempfile.TemporaryDirectory() as tmp:  # the score cache kept in a temporary folder
    ...     with mock.patch.dict(os.environ, {"CAPEVAL_SCORES_CACHE_DIR": tmp}):
    ...         c = score_and_compare(data, ["bleu_4", "rouge_l"])
    >>> c.baseline, round(c.corpus["new"]["rouge_l"], 4), round(c.paired["rouge_l"]["new"].delta, 4)
    ('base', 0.697, 0.0931)
    """
    with warnings.catch_warnings():
        for category in ignore:
            warnings.simplefilter("ignore", category)
        scores = score_systems(
            data,
            keys,
            tokenizer=tokenizer,
            options=options,
            workers=workers,
            on_progress=on_progress,
            on_error=on_error,
        )
        if on_stage is not None:
            on_stage("Bootstrap resamples and paired tests…")
        return compare_systems(
            scores, paired=paired, n_resamples=n_resamples, n_trials=n_trials, seed=seed
        )


def _apart(
    report: Callable[..., None], data: SystemsInput, keys: Sequence[str], kw: Mapping[str, Any]
) -> SystemsComparison:
    """:func:`score_and_compare` in the process of :func:`~capeval_core.workers.run_apart`:
    its progress and stages are reports (``("progress", done, total, label)``,
    ``("stage", text)``)."""
    return score_and_compare(
        data,
        keys,
        on_progress=lambda done, total, label: report("progress", done, total, label),
        on_stage=lambda text: report("stage", text),
        **kw,
    )


def score_and_compare_apart(
    data: SystemsInput,
    keys: Sequence[str],
    *,
    on_progress: Progress | None = None,
    on_stage: Callable[[str], None] | None = None,
    **options: Any,
) -> SystemsComparison:
    """:func:`score_and_compare` (the same ``options``) in a spawned process of its own, run
    at the priority of the app's workers (:func:`capeval_core.workers.niceness`).

    A server that serves several people in threads of one process (the app) calls this:
    tokenizing, collecting the workers' parts and resampling are Python work that would
    otherwise queue for the server's interpreter lock behind every page being drawn. The
    callbacks are called here, in the calling thread (the last progress again every second
    while nothing new comes); raising from one stops the run, its process and its workers.
    """
    from capeval_core.workers import run_apart

    def relay(kind: str, *message: Any) -> None:
        if kind == "progress" and on_progress is not None:
            on_progress(*message)
        elif kind == "stage" and on_stage is not None:
            on_stage(*message)

    return run_apart(_apart, data, tuple(keys), dict(options), on_report=relay)


def _untested(keys: Sequence[str]) -> dict[str, PairedResult]:
    from capeval_core.stats.resampling import PairedResult

    nan = math.nan
    return {k: PairedResult(nan, (nan, nan), nan, nan) for k in keys}
