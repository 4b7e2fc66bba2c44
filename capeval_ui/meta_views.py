"""Drawing the meta-evaluation results: judgment sets, correlations, Williams tests, pairwise
and forced-choice accuracy. One render function per result type (house style, "Pages stay
thin"); the pages read widgets, call ``capeval_ui.cached`` once and hand the result here.

User text (captions, file and column names, categories) is shown only in dataframes and
``st.text``, never in markdown or HTML; where it labels a plotly chart it is passed through
``html.escape`` first (plotly interprets ``<b>``, ``<a href>``, ``<br>``).
"""

from __future__ import annotations

import html
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from capeval_core.metrics import available_keys
from capeval_core.stats import (
    MIN_N_FOR_PVALUE,
    ForcedChoiceResult,
    pvalue_meaningful,
    to_csv_text,
)
from capeval_core.stats.export import sidecar_path, signatures_text
from capeval_ui import cached, choices, state
from capeval_ui.views import format_pvalue, key_label, table

#: the metric selection shared by the meta-evaluation pages (a widget's own key is dropped
#: when a page without it runs, so the choice is mirrored under a plain key)
METRICS_KEY = "meta_metrics"
_KEPT_METRICS = "_meta_metrics_kept"
#: external metric names the picker has offered in this session
_SEEN_EXTERNAL = "_meta_external_seen"
METHOD_LABELS = {
    "pearson": "Pearson r",
    "spearman": "Spearman ρ",
    "kendall_b": "Kendall τb",
    "kendall_c": "Kendall τc",
}
_COLOURS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2"]


def _safe(text: object) -> str:
    """User text for a plotly label: markup escaped."""
    return html.escape(str(text))


def _layout(fig: go.Figure, height: int = 360, **kwargs: object) -> go.Figure:
    fig.update_layout(
        height=height,
        margin={"l": 10, "r": 10, "t": 40, "b": 10},
        legend={"orientation": "h", "y": 1.12, "x": 0},
        **kwargs,
    )
    # plain decimals in hover labels and ticks, never SI prefixes ("72.59795μ")
    fig.update_yaxes(hoverformat=".4f", exponentformat="e")
    fig.update_xaxes(exponentformat="e")
    return fig


# -- shared widgets and banners -------------------------------------------------------------------
def metric_picker(external: Sequence[str] = ()) -> tuple[str, ...]:
    """Multiselect over every registered key and the set's ``external`` metrics; default the
    fast ones (BLEU-4, ROUGE-L, CIDEr-D, METEOR), kept across pages. An external metric is
    chosen the first time a set offers it (it is what its designer came to compare)."""
    # Streamlit gives a widget on another page a fresh value even under the same key, so the
    # choice is restored from the plain key on every run and saved there by the callback.
    state.restore_choices()
    options = [*available_keys(), *external]
    kept = list(st.session_state.get(_KEPT_METRICS, choices.FAST_KEYS))
    seen = st.session_state.setdefault(_SEEN_EXTERNAL, [])
    new = [k for k in external if k not in seen]
    if new:
        seen.extend(new)
        kept += [k for k in new if k not in kept]
        st.session_state[_KEPT_METRICS] = kept
    st.session_state[METRICS_KEY] = [k for k in kept if k in options]
    keys = st.multiselect(
        "Metrics",
        options,
        key=METRICS_KEY,
        format_func=key_label,
        on_change=_keep_metrics,
        help="The default metrics are fast. WMD and MEAN load word embeddings on first use.",
    )
    state.share_choices(metric=list(keys))
    return tuple(keys)


def external_not_offered(names: Sequence[str]) -> str:
    """One line: these external metrics are not offered because they cannot score the
    captions shown (their scores come with the Judgments page's set)."""
    listed = ", ".join(names)
    return (
        f"Not offered here: {listed} (external; scores come only with the Judgments page's "
        "set and cannot be computed for these captions)."
    )


def _keep_metrics() -> None:
    st.session_state[_KEPT_METRICS] = list(st.session_state[METRICS_KEY])


def set_for(kind: str) -> tuple[Any, str]:
    """The set a page works on, and where it came from: the loaded set when it is of
    ``kind`` ("graded" or "pairwise"), else the matching demo set (the page says so)."""
    loaded = st.session_state.get(state.JSET_KEY)
    if loaded is not None and loaded.kind == kind:
        return loaded, "loaded"
    label = next(name for name, (gen, _) in choices.DEMO_SETS.items() if gen == kind)
    generator, n_images = choices.DEMO_SETS[label]
    why = "no set loaded" if loaded is None else f"the loaded set is {loaded.kind}, not {kind}"
    return cached.demo_judgments(generator, n_images), f"demo ({why})"


def set_or_stop(kind: str) -> Any:
    """The judgment set a page works on (the loaded one, else the demo), with its banner;
    a set that cannot be had stops the page with the error shown."""
    from capeval_core import CapevalError

    state.restore_choices()
    try:
        jset, origin = set_for(kind)
    except CapevalError as exc:
        st.error(choices.page_message(str(exc)))
        st.stop()
    if origin == "loaded":
        state.share_judgment_set(cached.remember_set(jset))
    render_set_banner(jset, origin)
    return jset


def render_set_banner(jset: object, origin: str) -> None:
    """Which set the page works on; a demo fallback is said in so many words."""
    if origin != "loaded":
        st.info(
            f"Using the synthetic demo set ({origin.removeprefix('demo ').strip('()')}). "
            "Load your own "
            "judgments on the Judgments page.",
            icon=":material/science:",
        )
    st.text(str(jset))  # file names are user text: shown literally


def download_csv(
    frame: pd.DataFrame, signatures: Mapping[str, str], file_name: str, *, key: str
) -> None:
    """A CSV download that is safe in a spreadsheet and opens with a plain
    ``pandas.read_csv``, and beside it the signatures as JSON (the CSV has no room for them;
    tables without metric signatures get the CSV alone)."""
    left, right = st.columns(2) if signatures else (st, None)
    left.download_button(
        "Download CSV",
        to_csv_text(frame),
        file_name=file_name,
        mime="text/csv",
        key=key,
        icon=":material/download:",
    )
    if right is None:
        return
    right.download_button(
        "Signatures (JSON)",
        signatures_text(signatures, file_name),
        file_name=sidecar_path(file_name).name,
        mime="application/json",
        key=f"{key}-signatures",
        icon=":material/download:",
    )


# -- Judgments -------------------------------------------------------------------------------------
#: per format: the files it needs and what is in them (judgment-formats.md), as shown on the page
FORMAT_HELP: dict[str, str] = {
    "graded": (
        "One file (CSV, TSV, JSON array or JSONL), one row per judged caption. Columns: "
        "`candidate` (the caption), `references` (a JSON list, or one string with the "
        "references separated by `|||` in CSV/TSV; or columns `ref_1` … `ref_k`), and one or "
        "more numeric human-score columns. Optional: `id`, `image_id`, `system` (for "
        "system-level correlations). Other names can be mapped below. Your own metric's "
        "per-caption scores go in a column named `metric:<name>` (or choose the role "
        "*metric* for a column below, or join a scores file once the set is loaded)."
    ),
    "thumb": (
        "THumB 1.0 as distributed (Kasai et al. 2022): `mscoco_THumB-1.0.jsonl`, one JSON "
        "line per judged caption (`SYS`, `seg_id`, `set_id`, `hyp`, `image`, `P`, `R`, "
        "`Fl`, `Con`, `Inc`, `human_score`). References are the image's COCO val2014 "
        "captions (installed with capeval) without the Human caption; upload "
        "`mscoco_references.json` beside it to use THumB's own references instead."
    ),
    "pairwise": (
        "One file (CSV, TSV, JSON array or JSONL), one row per pair of captions. Columns: "
        "`candidate_a`, `candidate_b`, `references` (as for graded files), and either "
        "`preferred` (`a`, `b` or `tie`) or vote counts `votes_a` and `votes_b`. Optional: "
        "`category` (e.g. HC/HI/HM/MM), `id`. Your own metric's scores of the two "
        "candidates go in columns `metric:<name>:a` and `metric:<name>:b`."
    ),
    "flickr8k-expert": (
        "Two files as distributed: `ExpertAnnotations.txt` (tab-separated: image, caption id, "
        "three experts' scores 1–4) and `Flickr8k.token.txt` (the captions). Upload both."
    ),
    "flickr8k-cf": (
        "Two files as distributed: `CrowdFlowerAnnotations.txt` (tab-separated: image, "
        "caption id, share of yes votes, yes and no counts) and `Flickr8k.token.txt`. Upload "
        "both."
    ),
    "composite": (
        "The Composite CSV files (Aditya et al. 2015), one per source, with correctness and "
        "thoroughness scores 1–5, plus the source datasets' caption files (Flickr token files "
        "or COCO captions JSON) for the references. Upload them together."
    ),
    "pascal50s": (
        "Two MATLAB files as distributed: `pair_pascal.mat` (the 4,000 pairs, their "
        "categories and votes) and `pascal50S.mat` (50 references per image). Upload both."
    ),
    "abstract50s": (
        "Three JSON files as distributed: `abstract48S.json` (48 references per image), "
        "`abstract_candsB.json` and `abstract_candsC.json` (the pairs); add "
        "`consensus_abstract.mat` for the human labels."
    ),
}
#: generic formats with a template download: format -> (columns, two example rows)
_TEMPLATE_ROWS: dict[str, tuple[tuple[str, ...], tuple[tuple[str, ...], ...]]] = {
    "graded": (
        ("id", "image_id", "candidate", "references", "quality", "system"),
        (
            (
                "1",
                "img1",
                "a dog runs on the grass",
                "a dog running on grass|||a brown dog",
                "4",
                "A",
            ),
            ("2", "img1", "a cat sleeps", "a dog running on grass|||a brown dog", "1", "B"),
        ),
    ),
    "pairwise": (
        ("id", "candidate_a", "candidate_b", "references", "preferred", "category"),
        (
            (
                "1",
                "a man rides a wave",
                "a man rides a horse",
                "a surfer on a wave|||a man surfing",
                "a",
                "HC",
            ),
            (
                "2",
                "a dog on the grass",
                "a dog in the snow",
                "a dog lying on grass|||a brown dog",
                "a",
                "HI",
            ),
        ),
    ),
}
TEMPLATE_TYPES = ("csv", "tsv", "json")


def template(fmt: str, kind: str) -> str:
    """A small example file of a generic format (``graded`` or ``pairwise``) as ``kind``
    (csv, tsv or json) that the loader reads as is.

    >>> template("graded", "tsv").splitlines()[0].split(chr(9))  # tab-separated
    ['id', 'image_id', 'candidate', 'references', 'quality', 'system']
    """
    import csv
    import io
    import json

    columns, rows = _TEMPLATE_ROWS[fmt]
    if kind == "json":
        records = []
        for row in rows:
            record: dict[str, object] = dict(zip(columns, row, strict=True))
            record["references"] = str(record["references"]).split("|||")
            if fmt == "graded":
                record["quality"] = float(str(record["quality"]))
            records.append(record)
        return json.dumps(records, indent=2) + "\n"
    out = io.StringIO()
    writer = csv.writer(out, delimiter="\t" if kind == "tsv" else ",", lineterminator="\n")
    writer.writerow(columns)
    writer.writerows(rows)
    return out.getvalue()


def render_format_help(fmt: str) -> None:
    """What the chosen format needs (files, columns), and a template for the generic ones."""
    st.markdown(FORMAT_HELP.get(fmt, ""))  # our own text, not user text
    if fmt not in _TEMPLATE_ROWS:
        return
    cols = st.columns(len(TEMPLATE_TYPES) + 2)
    for column, kind in zip(cols, TEMPLATE_TYPES, strict=False):
        column.download_button(
            f"{kind.upper()} template",
            template(fmt, kind),
            file_name=f"{fmt}-template.{kind}",
            mime={"csv": "text/csv", "tsv": "text/tab-separated-values"}.get(
                kind, "application/json"
            ),
            key=f"template-{fmt}-{kind}",
            icon=":material/download:",
        )


def render_validation(jset: object) -> None:
    """The validation report: read, dropped (by reason), kept, rows; notes; protocol."""
    cols = st.columns(4)
    cols[0].metric("Rows read", f"{jset.n_read:,}")
    cols[1].metric("Dropped", f"{sum(jset.dropped.values()):,}")
    cols[2].metric("Kept", f"{jset.n_kept:,}")
    cols[3].metric("Items scored", f"{len(jset):,}")
    st.text(jset.describe())
    if jset.dropped:
        table(
            pd.DataFrame({"reason": list(jset.dropped), "rows": list(jset.dropped.values())}),
            integers=("rows",),
        )
    for note in jset.notes:
        st.text(f"Note: {note}")
    if jset.kind == "graded":
        st.text(
            f"Human-score columns: {', '.join(jset.score_names)}. Protocol: preset "
            f"{jset.preset or '(none)'}; Kendall variant reported: τ{jset.kendall_variant}."
        )
    else:
        prefs = jset.preferences()
        st.text(
            f"Pairs: {len(jset):,}; labelled: {int(np.isfinite(prefs).sum()):,}; "
            f"human ties: {int((prefs == 0).sum()):,}. Preset: {jset.preset or '(none)'}."
        )


def render_preview(jset: object, rows: int = 200) -> None:
    """The first ``rows`` items as a table (captions as plain cells, empty cells empty)."""
    frame = jset.to_frame().head(rows)
    numeric = [c for c in frame.columns if pd.api.types.is_float_dtype(frame[c])]
    table(frame, numbers=numeric, digits=3, height=300)


def scores_frame(jset: object, scores: object) -> pd.DataFrame:
    """Per item: the set's columns and one column per metric (pairwise: mean over draws)."""
    frame = jset.to_frame()
    for key in scores.keys:
        if jset.kind == "graded":
            frame[key] = scores.values[key]
        else:
            frame[f"{key}_a"] = scores.values_a[key].mean(axis=0)
            frame[f"{key}_b"] = scores.values_b[key].mean(axis=0)
    return frame


def render_left_out(jset: object, scores: object) -> None:
    """Which items a metric could not score and why (nothing when every item was scored):
    a warning with the counts, the ids and reasons as plain text (they are user text)."""
    from capeval_core.judgments.scoring import left_out_lines

    lines = left_out_lines(jset, scores)
    if not lines:
        return
    unit = "items" if jset.kind == "graded" else "pairs"
    n = len(scores.left_out())
    st.warning(
        f"{n:,} of {len(jset):,} {unit} left out: a metric could not score them (which and "
        f"why below); the statistics here use the {len(jset) - n:,} {unit} every metric scored."
    )
    st.text("\n".join(lines))


def on_common_items(jset: object, scores: object) -> tuple[Any, Any]:
    """:func:`render_left_out`, then the set and scores on the items every metric scored
    (``capeval_core.judgments.scoring.on_common_items``), for a page's statistics."""
    from capeval_core.judgments.scoring import on_common_items as common

    render_left_out(jset, scores)
    return common(jset, scores)


def render_scores(jset: object, scores: object, *, key: str) -> None:
    """Per metric: mean score (over the items it scored), signature, whether it came from
    the cache; skipped metrics; items a metric could not score."""
    render_left_out(jset, scores)
    rows = []
    for k in scores.keys:
        values = scores.values[k] if jset.kind == "graded" else scores.values_a[k]
        scored = values[np.isfinite(values)]
        rows.append(
            {
                "metric": key_label(k),
                "key": k,
                "mean": float(np.mean(scored)) if scored.size else math.nan,
                "from cache": bool(scores.from_cache.get(k)),
                "signature": scores.signatures[k],
            }
        )
    if rows:
        table(pd.DataFrame(rows), numbers=("mean",), widths={"signature": "large"})
    for name, message in scores.skipped.items():
        st.warning(f"{name} was skipped (see below).")
        st.text(message)
    if scores.keys:
        download_csv(scores_frame(jset, scores), scores.signatures, "judgment-scores.csv", key=key)


# -- Correlations ----------------------------------------------------------------------------------
def render_correlation_table(report: object, kendall_variant: str, signatures: Mapping) -> None:
    """Statistic, bootstrap interval, p-value per metric and method; the set's Kendall variant
    named explicitly; no p-value where too few pairs make it meaningless, and intervals that
    were not computed say why."""
    frame = report.table.copy()
    n = int(frame["n"].max()) if len(frame) else 0
    small = not pvalue_meaningful(n)
    if small:
        unit = "systems" if report.level == "system" else "items"
        st.warning(
            f"n = {n} {unit}: too few for a meaningful p-value (shown from n = "
            f"{MIN_N_FOR_PVALUE}). The correlations stand; their bootstrap intervals "
            + (
                "resample the items within each system, so they show how far each system's "
                "mean could move."
                if report.level == "system"
                else f"over {n} items are wide, as they should be."
            ),
            icon=":material/warning:",
        )
        frame["pvalue"] = np.nan
    frame.insert(0, "metric name", [key_label(k) for k in frame["metric"]])
    kendall = frame["method"].str.startswith("kendall").to_numpy()
    frame["method"] = [METHOD_LABELS.get(m, m) for m in frame["method"]]
    level = 95
    low, high = f"{level}% CI low", f"{level}% CI high"
    frame = frame.rename(columns={"ci_low": low, "ci_high": high})
    notes = []
    for k in kendall:
        why = []
        if k and not report.ci_kendall:
            why.append("no interval: bootstrap for Kendall is off")
        if small:
            why.append(f"no p-value: n < {MIN_N_FOR_PVALUE}")
        notes.append("; ".join(why))
    frame["note"] = notes
    table(
        frame,
        numbers=("statistic", low, high, "level"),
        pvalues=("pvalue",),
        integers=("n",),
        help={"pvalue": f"shown from n = {MIN_N_FOR_PVALUE} pairs", "note": "why a cell is —"},
        key="correlation-table",
    )
    intervals = "" if report.ci_kendall else " (Pearson and Spearman only: Kendall's is off)"
    over = (
        "items within systems (each system's mean recomputed per resample)"
        if report.level == "system"
        else "items"
    )
    st.caption(
        f"Kendall: τb corrects for ties in both variables (scipy's default); τc (Stuart's) "
        f"suits rectangular tables such as 4-point grades. This set's protocol reports "
        f"**τ{kendall_variant}**. Intervals{intervals}: percentile bootstrap over {over}, "
        f"{report.n_resamples:,} resamples, seed {report.seed}."
    )
    download_csv(report.table, signatures, "correlations.csv", key="correlations-csv")


def render_correlation_chart(report: object) -> None:
    """Grouped bars (metric x method) with the bootstrap intervals as error bars."""
    frame = report.table
    fig = go.Figure()
    for i, method in enumerate(dict.fromkeys(frame["method"])):
        rows = frame[frame["method"] == method]
        stat = rows["statistic"].to_numpy(float)
        fig.add_bar(
            x=[key_label(k) for k in rows["metric"]],
            y=stat,
            name=METHOD_LABELS.get(method, method),
            marker_color=_COLOURS[i % len(_COLOURS)],
            error_y={
                "type": "data",
                "symmetric": False,
                "array": np.nan_to_num(rows["ci_high"].to_numpy(float) - stat),
                "arrayminus": np.nan_to_num(stat - rows["ci_low"].to_numpy(float)),
                "thickness": 1.2,
            },
        )
    _layout(
        fig,
        barmode="group",
        yaxis={"title": f"correlation with {_safe(report.human_name)}"},
        xaxis={"type": "category"},
    )
    st.plotly_chart(fig, key="correlation-bars", width="stretch")


def heatmap_text(value: float, fmt: str) -> str:
    """A heatmap cell: ``fmt`` for ordinary values; for p-value scales (``fmt="p"``) small
    values in scientific notation, so 0.0003 never reads as 0.000.

    >>> heatmap_text(0.0003, "p"), heatmap_text(0.042, "p"), heatmap_text(0.5, ".2f")
    ('3.0e-04', '0.042', '0.50')
    """
    if not math.isfinite(value):
        return ""
    if fmt == "p":
        if value == 0:
            return "<1e-300"
        return f"{value:.1e}" if value < 0.001 else f"{value:.3f}"
    return format(value, fmt)


def render_heatmap(
    matrix: pd.DataFrame, *, key: str, title: str, zmin: float, zmax: float, fmt: str = ".2f"
) -> None:
    """A labelled heatmap of a metric x metric table (labels are registry keys); ``fmt="p"``
    writes p-values (:func:`heatmap_text`)."""
    labels = [key_label(k) for k in matrix.index]
    z = matrix.to_numpy(float)
    text = [[heatmap_text(v, fmt) for v in row] for row in z]
    fig = go.Figure(
        go.Heatmap(
            z=z,
            x=labels,
            y=labels,
            text=text,
            texttemplate="%{text}",
            hovertemplate="%{y} vs %{x}: %{text}<extra></extra>",
            colorscale="RdBu" if zmin < 0 else "Greens_r",
            zmin=zmin,
            zmax=zmax,
            hoverongaps=False,
        )
    )
    _layout(fig, height=120 + 45 * len(labels), title={"text": title, "font": {"size": 14}})
    fig.update_yaxes(autorange="reversed", type="category")
    fig.update_xaxes(type="category", side="bottom")
    st.plotly_chart(fig, key=key, width="stretch")


def render_spearman_heatmap(report: object) -> None:
    """Metric x metric Spearman ρ, ordered by |ρ| with humans (seed Fig. 4a)."""
    system = getattr(report, "level", "item") == "system"
    render_heatmap(
        report.between,
        key="spearman-heatmap",
        title=(
            f"Spearman ρ between the metrics' system means ({len(report.between)} metrics, "
            "ordered by correlation with humans)"
            if system
            else "Spearman ρ between metrics (ordered by correlation with humans)"
        ),
        zmin=-1,
        zmax=1,
    )


def grade_bins(human: np.ndarray) -> tuple[np.ndarray, list[str]]:
    """Each item's bin and the bin names in numeric order: the human grades as they are, or
    5 quantile bins when there are more than 10 distinct values (issue 32: bins named by
    their range sort as numbers, not as text).

    >>> human = np.r_[np.linspace(1.9, 3.9, 8), [4.0] * 8, [4.5] * 8, [5.0] * 8]
    >>> codes, names = grade_bins(human)
    >>> names, names == sorted(names)
    (['1.9–3.67', '3.67–4', '4–4.5', '4.5–5'], False)
    >>> [int(c) for c in codes[[0, 7, 8, 16]]]
    [0, 1, 2, 3]
    """
    human = np.asarray(human, dtype=float)
    values = np.unique(human)
    if values.size <= 10:
        return np.searchsorted(values, human), [f"{v:g}" for v in values]
    edges = np.unique(np.quantile(human, np.linspace(0, 1, 6)))
    codes = np.clip(np.searchsorted(edges, human, side="right") - 1, 0, len(edges) - 2)
    names = [f"{edges[i]:.3g}–{edges[i + 1]:.3g}" for i in range(len(edges) - 1)]
    used = np.unique(codes)
    return np.searchsorted(used, codes), [names[i] for i in used]


def violin_span(key: str, values: np.ndarray) -> dict[str, object]:
    """How far a violin's density is drawn: a metric with known bounds (BLEU, METEOR, ...
    in [0, 1]) never past them, so no violin shows scores below 0 or above 1; other metrics
    (external ones) plotly's default.

    >>> violin_span("bleu_4", np.array([0.0, 0.2, 1.0]))
    {'spanmode': 'manual', 'span': [0.0, 1.0]}
    """
    from capeval_core.errors import UnknownKeyError
    from capeval_core.metrics import metric_class

    try:
        low, high = metric_class(key).bounds
    except UnknownKeyError:
        return {}
    finite = values[np.isfinite(values)]
    if finite.size == 0:
        return {}
    lo = max(float(finite.min()), low) if np.isfinite(low) else float(finite.min())
    hi = min(float(finite.max()), high) if np.isfinite(high) else float(finite.max())
    return {"spanmode": "manual", "span": [lo, hi]}


def render_distribution(human: np.ndarray, values: np.ndarray, key: str, human_name: str) -> None:
    """One metric's scores per human grade (seed Fig. 3): box plots (median, quartiles, mean)
    beside violin plots (the whole distribution, within the metric's bounds)."""
    codes, names = grade_bins(np.asarray(human, dtype=float))
    values = np.asarray(values, dtype=float)
    box, violin = go.Figure(), go.Figure()
    for i, grade in enumerate(names):
        mask = codes == i
        name = _safe(grade)
        colour = _COLOURS[i % len(_COLOURS)]
        box.add_box(y=values[mask], name=name, marker_color=colour, boxmean=True, showlegend=False)
        violin.add_violin(
            y=values[mask],
            name=name,
            line_color=colour,
            box_visible=True,
            meanline_visible=True,
            points=False,
            showlegend=False,
            **violin_span(key, values[mask]),
        )
    axes = {
        "xaxis": {"title": f"human score: {_safe(human_name)}", "type": "category"},
        "yaxis": {"title": key_label(key)},
    }
    left, right = st.columns(2)
    with left:
        _layout(box, title={"text": "box plots", "font": {"size": 14}}, **axes)
        st.plotly_chart(box, key=f"distribution-{key}", width="stretch")
    with right:
        _layout(violin, title={"text": "violin plots", "font": {"size": 14}}, **axes)
        st.plotly_chart(violin, key=f"violin-{key}", width="stretch")


#: the most points the scatter draws (a random sample beyond, seeded)
SCATTER_POINTS = 5000


def render_scatter(
    human: np.ndarray,
    values: np.ndarray,
    captions: Sequence[str],
    key: str,
    human_name: str,
    seed: int = 0,
    jitter: bool = True,
) -> None:
    """Metric score against human score, one point per item, the caption on hover. Grades
    are jittered sideways a little so equal grades do not hide each other (``jitter=False``:
    points where they are, e.g. system means)."""
    human = np.asarray(human, dtype=float)
    values = np.asarray(values, dtype=float)
    rng = np.random.default_rng(seed)
    idx = np.arange(human.size)
    if idx.size > SCATTER_POINTS:
        idx = np.sort(rng.choice(idx, SCATTER_POINTS, replace=False))
    step = np.diff(np.unique(human)).min() if np.unique(human).size > 1 else 1.0
    few = np.unique(human).size <= 10
    shift = rng.uniform(-0.15, 0.15, idx.size) * step if jitter and few else 0.0
    hover = [_safe(captions[i]) for i in idx]
    fig = go.Figure(
        go.Scattergl(
            x=human[idx] + shift,
            y=values[idx],
            mode="markers",
            marker={"size": 6, "opacity": 0.55, "color": _COLOURS[0]},
            customdata=np.stack([human[idx], values[idx]], axis=1),
            hovertext=hover,
            hovertemplate="%{hovertext}<br>human %{customdata[0]:.3f}, metric "
            "%{customdata[1]:.4f}<extra></extra>",
        )
    )
    _layout(
        fig,
        height=380,
        xaxis={"title": f"human score: {_safe(human_name)}"},
        yaxis={"title": key_label(key)},
    )
    st.plotly_chart(fig, key=f"scatter-{key}", width="stretch")
    if idx.size < human.size:
        st.caption(f"{idx.size:,} of {human.size:,} items drawn (a random sample, seed {seed}).")


def render_combined(report: object, top: int = 15) -> None:
    """Every subset of the metrics, min–max normalised and averaged, ranked."""
    rows = [
        {
            "rank": i + 1,
            "subset": " + ".join(key_label(k) for k in s.subset),
            "metrics": len(s.subset),
            "correlation": s.statistic,
            "Williams p vs best single": s.pvalue_vs_best,
            "best single metric": key_label(s.best_single),
        }
        for i, s in enumerate(report.combined)
    ]
    frame = pd.DataFrame(rows)
    if frame.empty:
        st.text("No metrics selected.")
        return
    table(
        frame,
        numbers=("correlation",),
        pvalues=("Williams p vs best single",),
        help={
            "Williams p vs best single": "one-sided: — where the subset does not correlate "
            "more strongly than the best single metric (or is that metric)"
        },
        height=min(38 + 35 * len(frame), 420),
        key="combined-table",
    )
    shown = frame.head(top).iloc[::-1]
    fig = go.Figure(
        go.Bar(
            x=shown["correlation"],
            y=shown["subset"],
            orientation="h",
            marker_color=["#2ca02c" if m > 1 else "#1f77b4" for m in shown["metrics"]],
            texttemplate="%{x:.3f}",
            textposition="outside",
            cliponaxis=False,
        )
    )
    _layout(fig, height=80 + 28 * len(shown), xaxis={"title": "correlation with humans"})
    fig.update_yaxes(type="category")
    fig.update_xaxes(hoverformat=".4f")
    st.plotly_chart(fig, key="combined-bars", width="stretch")
    download_csv(frame, {}, "combined-metric.csv", key="combined-csv")


# -- Significance ----------------------------------------------------------------------------------
def render_williams_matrix(matrix: object) -> None:
    """p-values "row metric beats column metric" (seed Fig. 4b); green where p < 0.05."""
    frame = matrix.to_frame()
    render_heatmap(
        frame,
        key="williams-heatmap",
        title=f"Williams test p-values ({matrix.alternative}) on "
        f"{METHOD_LABELS[matrix.correlation]}",
        zmin=0,
        zmax=0.1,
        fmt="p",
    )
    st.caption(
        "Row metric vs column metric; metrics ordered by |correlation| with humans. "
        + (
            "One-sided: H1 = the row metric correlates more strongly; — where it does not."
            if matrix.alternative == "greater"
            else "Two-sided: H1 = the two correlations differ."
        )
        + f" n = {matrix.n:,} items; darker green = smaller p (scale capped at 0.1)."
    )
    shown = frame.copy()
    shown.index = [key_label(k) for k in shown.index]
    shown.columns = [key_label(k) for k in shown.columns]
    # every column wide enough for "1.23e-45", however many metrics there are
    table(
        shown.reset_index(names="metric"),
        pvalues=list(shown.columns),
        widths={c: 84 for c in shown.columns},
        key="williams-table",
    )
    corr = pd.DataFrame(
        {
            "metric": [key_label(k) for k in matrix.human_correlations],
            "correlation with humans": list(matrix.human_correlations.values()),
        }
    )
    download_csv(frame.reset_index(names="metric"), {}, "williams-pvalues.csv", key="williams-csv")
    table(corr, numbers=("correlation with humans",), key="williams-correlations")


def render_williams_detail(result: object, a: str, b: str, correlation: str) -> None:
    """The Williams test for one pair, with its arithmetic written out."""
    st.latex(
        r"t = (r_{12} - r_{13})\sqrt{\frac{(n-1)(1+r_{23})}"
        r"{2\frac{n-1}{n-3}|R| + \left(\frac{r_{12}+r_{13}}{2}\right)^2 (1-r_{23})^3}}"
        r",\quad |R| = 1 - r_{12}^2 - r_{13}^2 - r_{23}^2 + 2 r_{12} r_{13} r_{23}"
    )
    n, r12, r13, r23 = result.n, result.r12, result.r13, result.r23
    left = 2 * (n - 1) / (n - 3) * result.det_r
    right = ((r12 + r13) / 2) ** 2 * (1 - r23) ** 3
    rows = [
        ("r12 = |corr(human, A)|", r12, f"{METHOD_LABELS[correlation]} of {key_label(a)}"),
        ("r13 = |corr(human, B)|", r13, f"{METHOD_LABELS[correlation]} of {key_label(b)}"),
        ("r23 = |corr(A, B)|", r23, "between the two metrics"),
        ("n", n, "items"),
        (
            "|R|",
            result.det_r,
            f"1 - {r12:.4f}² - {r13:.4f}² - {r23:.4f}² + 2·{r12:.4f}·{r13:.4f}·{r23:.4f}",
        ),
        ("2(n-1)/(n-3)·|R|", left, f"2·{n - 1}/{n - 3}·{result.det_r:.6f}"),
        ("((r12+r13)/2)²(1-r23)³", right, f"({(r12 + r13) / 2:.4f})²·({1 - r23:.4f})³"),
        (
            "t",
            result.statistic,
            f"({r12:.4f} - {r13:.4f})·√({n - 1}·{1 + r23:.4f} / {left + right:.6f})",
        ),
        ("df", result.df, "n - 3"),
        (
            "p",
            result.pvalue,
            "P(T > t)" if result.alternative == "greater" else "2·P(T > |t|)",
        ),
    ]
    frame = pd.DataFrame(rows, columns=["quantity", "value", "arithmetic"])
    shown = [format_pvalue(v) if q == "p" else f"{float(v):.6g}" for q, v, _ in rows]
    table(
        frame.assign(shown=shown)[["quantity", "shown", "arithmetic", "value"]].rename(
            columns={"shown": "result"}
        ),
        numbers=("value",),
        digits=6,
        widths={"arithmetic": "large"},
        key="williams-detail",
    )
    verdict = (
        "significant at 0.05"
        if math.isfinite(result.pvalue) and result.pvalue < 0.05
        else "not significant at 0.05"
    )
    st.text(f"{key_label(a)} vs {key_label(b)}: {result} — {verdict}.")


# -- Pairwise accuracy and robustness --------------------------------------------------------------
#: pixels per bar of the accuracy charts: room for a value label beside each bar
ACCURACY_BAR_PX = 22


def _accuracy_chart(frame: pd.DataFrame, groups: Sequence[str], *, key: str, title: str) -> None:
    """Accuracy per metric and group as horizontal bars, each value written beside its bar.

    Side by side vertical bars put neighbouring labels on top of each other ("77.577.5",
    issue 34); a row per bar gives every label its own line, whatever the number of groups.
    """
    metrics = list(frame["metric"])
    fig = go.Figure()
    for i, group in enumerate(groups):
        fig.add_bar(
            y=metrics,
            x=frame[group],
            orientation="h",
            name=_safe(group),
            marker_color=_COLOURS[i % len(_COLOURS)],
            texttemplate="%{x:.1f}",
            textposition="outside",
            textfont={"size": 12},
            cliponaxis=False,
        )
    bars = max(1, len(metrics) * len(groups))
    _layout(
        fig,
        height=120 + ACCURACY_BAR_PX * bars,
        barmode="group",
        xaxis={"title": title, "range": [0, 112]},
        yaxis={"type": "category", "autorange": "reversed"},
    )
    fig.update_xaxes(hoverformat=".1f")
    st.plotly_chart(fig, key=key, width="stretch")


def render_pairwise(
    results: Mapping[str, object], signatures: Mapping[str, str], draws_asked: int | None = None
) -> None:
    """Accuracy (%) per metric and category (HC/HI/HM/MM) and overall, as table and chart.

    ``draws_asked`` is the number of draws the page asked for: when the pairs have no more
    references than are sampled, every draw is the same one and the text says so.
    """
    if not results:
        st.text("No metrics selected.")
        return
    first = next(iter(results.values()))
    cats = list(first.by_category)
    rows = []
    for key, r in results.items():
        row = {"metric": key_label(key)}
        row.update({c: 100 * v for c, v in r.by_category.items()})
        row["overall"] = 100 * r.accuracy
        rows.append(row)
    frame = pd.DataFrame(rows)
    table(frame, percents=[*cats, "overall"], key="pairwise-table")
    counts = ", ".join(f"{c}: {n:,}" for c, n in first.n_by_category.items())
    ties = f"broken at random, seed {first.seed}" if first.human_tie == "random" else "dropped"
    if draws_asked is not None and first.draws < draws_asked:
        draws = (
            f"{draws_asked} draws were asked; each pair has no more references than are "
            f"sampled, so every draw uses all of them and the {draws_asked} draws are one."
        )
    else:
        draws = f"Accuracy averaged over {first.draws} draw(s)."
    st.text(
        f"Pairs per category: {counts}. Human ties: {first.n_human_ties:,} "
        f"({ties}). Metric ties count as {first.metric_tie}. {draws}"
    )
    _accuracy_chart(frame, [*cats, "overall"], key="pairwise-bars", title="accuracy (%)")
    download_csv(frame, signatures, "pairwise-accuracy.csv", key="pairwise-csv")


def render_forced_choice(
    results: Mapping[str, ForcedChoiceResult],
    signatures: Mapping[str, str],
    metric_tie: str,
) -> None:
    """Forced-choice accuracy (%) per metric and distractor type (seed Table 5)."""
    if not results:
        st.text("No metrics selected.")
        return
    kinds = list(next(iter(results.values())).accuracy)
    rows = []
    for key, result in results.items():
        row = {"metric": key_label(key)}
        row.update({k: 100 * result.accuracy[k] for k in kinds})
        row["mean"] = float(np.mean([row[k] for k in kinds]))
        rows.append(row)
    frame = pd.DataFrame(rows)
    table(frame, percents=[*kinds, "mean"], key="robustness-table")
    counts = next(iter(results.values())).n
    st.text(
        "Pairs per distractor type: "
        + ", ".join(f"{k}: {n:,}" for k, n in counts.items())
        + f". A metric tie counts as {metric_tie}."
    )
    _accuracy_chart(frame, kinds, key="robustness-bars", title="correct caption preferred (%)")
    download_csv(frame, signatures, "robustness.csv", key="robustness-csv")
