"""ABSTRACT-50S: JSON caption lists; pair *i* = (``abstract_candsB.json``[i], ``...C.json``[i]).

judgment-formats.md: ``abstract48S.json`` holds 24,000 ``{image_id, caption}`` (500 images x
48 references); human labels come from ``consensus_abstract.mat`` when the user has it.

The layout of that .mat file is not documented; this loader reads the first numeric
variable with one entry per pair (positive = B preferred, negative = C, 0 = tie) or with two
columns (votes for B, votes for C). Without it the set is unlabelled (``preferred`` None).
"""

from __future__ import annotations

import os
from collections import defaultdict
from pathlib import Path

import numpy as np

from capeval_core.judgments.base import (
    DEFAULT_MAX_BYTES,
    JudgmentSet,
    PairItem,
    Row,
    format_error,
    read_json_records,
    text_cell,
)
from capeval_core.judgments.coco import image_key
from capeval_core.judgments.pairwise import preference_from_votes
from capeval_core.judgments.pascal50s import load_mat

REFS_FILE = "abstract48S.json"
CANDS_B = "abstract_candsB.json"
CANDS_C = "abstract_candsC.json"
CONSENSUS_FILE = "consensus_abstract.mat"


def _captions(path: Path, max_bytes: int) -> list[tuple[Row, str, str]]:
    out = []
    for row in read_json_records(path, max_bytes=max_bytes):
        for key in ("image_id", "caption"):
            if key not in row.values:
                raise format_error(
                    path, f"record has no {key!r}", record=row.record, line=row.line, column=key
                )
        out.append(
            (
                row,
                image_key(row.values["image_id"]),
                text_cell(row.values["caption"], path, row, "caption").strip(),
            )
        )
    return out


def _labels(path: Path, n: int, max_bytes: int) -> list[tuple[int | None, int | None, str]]:
    mat = load_mat(path, max_bytes)
    for name, value in mat.items():
        if name.startswith("__") or not isinstance(value, np.ndarray):
            continue
        if value.dtype.kind not in "iuf":
            continue
        arr = np.asarray(value, dtype=float)
        if arr.ndim in (1, 2) and arr.shape[0] == n and not np.isfinite(arr).all():
            bad = int(np.argwhere(~np.isfinite(arr))[0][0])
            raise format_error(
                path, f"label of pair {bad} is not a finite number", record=bad, column=name
            )
        if arr.ndim == 1 and arr.size == n:
            return [(None, None, "b" if v < 0 else "a" if v > 0 else "tie") for v in arr]
        if arr.ndim == 2 and arr.shape == (n, 2):
            return [(int(a), int(b), preference_from_votes(int(a), int(b))) for a, b in arr]
    raise format_error(path, f"no numeric variable with one entry per pair ({n}) found")


def load_abstract50s(
    path: str | os.PathLike[str],
    *,
    preset: str | None = None,
    consensus_file: str | os.PathLike[str] | None = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> JudgmentSet:
    """The folder holding the three JSON files (or the path of ``abstract48S.json``).

    Candidate a = B[i], candidate b = C[i]; references = the 48 of B[i]'s image.
    """
    p = Path(path)
    folder = p if p.is_dir() else p.parent
    refs_rows = _captions(folder / REFS_FILE, max_bytes)
    by_image: dict[str, list[str]] = defaultdict(list)
    for _, image, caption in refs_rows:
        by_image[image].append(caption)
    cands_b = _captions(folder / CANDS_B, max_bytes)
    cands_c = _captions(folder / CANDS_C, max_bytes)
    if len(cands_b) != len(cands_c):
        raise format_error(
            folder / CANDS_C,
            f"{CANDS_B} has {len(cands_b)} records but "
            f"{CANDS_C} has {len(cands_c)}: pairs are matched by position",
        )
    consensus = Path(consensus_file) if consensus_file else folder / CONSENSUS_FILE
    labels = _labels(consensus, len(cands_b), max_bytes) if consensus.is_file() else None
    items = []
    for i, ((row_b, img_b, cap_b), (row_c, img_c, cap_c)) in enumerate(
        zip(cands_b, cands_c, strict=True)
    ):
        if img_b != img_c:
            raise format_error(
                folder / CANDS_C,
                f"pair {i}: image_id {img_c!r} differs from {img_b!r} in {CANDS_B}",
                record=i,
                line=row_c.line,
                column="image_id",
            )
        if img_b not in by_image:
            raise format_error(
                folder / CANDS_B,
                f"image_id {img_b!r} has no references in {REFS_FILE}",
                record=i,
                line=row_b.line,
                column="image_id",
            )
        votes_a, votes_b, preferred = labels[i] if labels else (None, None, None)
        items.append(
            PairItem(
                str(i),
                img_b,
                cap_b,
                cap_c,
                tuple(by_image[img_b]),
                preferred,
                votes_a,
                votes_b,
                None,
            )
        )  # type: ignore[arg-type]
    sources = [REFS_FILE, CANDS_B, CANDS_C] + ([consensus.name] if labels else [])
    notes = () if labels else (f"no human labels: {CONSENSUS_FILE} not found",)
    return JudgmentSet(
        "pairwise",
        tuple(items),
        (),
        tuple(sources),
        n_read=len(items),
        n_kept=len(items),
        format="abstract50s",
        preset=preset or "published",
        notes=notes,
    )
