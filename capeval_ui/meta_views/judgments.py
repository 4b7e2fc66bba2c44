"""The Judgments page's drawing: what each format needs (with templates), the validation
report, the preview and the scores of the loaded set."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import streamlit as st

from capeval_ui.meta_views.common import download_csv, render_left_out, render_notes, set_about
from capeval_ui.views import key_label, signature_block, table

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
    """The validation report: read, dropped (by reason), kept, rows; notes; protocol. The
    summary line (``jset.describe()``) is the page's, under its heading: said again under
    the cards, it read twice."""
    cols = st.columns(4)
    cols[0].metric("Rows read", f"{jset.n_read:,}")
    cols[1].metric("Dropped", f"{sum(jset.dropped.values()):,}")
    cols[2].metric("Kept", f"{jset.n_kept:,}")
    cols[3].metric("Items scored", f"{len(jset):,}")
    if jset.dropped:
        table(
            pd.DataFrame(
                {
                    "reason": [jset.dropped_reason(r) for r in jset.dropped],
                    "rows": list(jset.dropped.values()),
                }
            ),
            integers=("rows",),
        )
    render_notes(jset)
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
    # a file's own columns, as many as it has: the grid scrolls sideways when they are many
    with st.container(key="judgments-preview"):
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
        table(pd.DataFrame(rows), numbers=("mean",), hidden=("signature",))
        signature_block(scores.signatures)
    for name, message in scores.skipped.items():
        st.warning(f"{name} was skipped (see below).")
        st.text(message)
    if scores.keys:
        frame = scores_frame(jset, scores)
        about = set_about(jset)
        download_csv(frame, scores.signatures, "judgment-scores.csv", key=key, settings=about)
