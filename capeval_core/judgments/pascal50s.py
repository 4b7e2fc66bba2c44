"""PASCAL-50S (Vedantam et al. 2015) from its MATLAB files, read with ``scipy.io.loadmat``.

judgment-formats.md: ``pair_pascal.mat`` holds ``new_input`` (struct array: ``name`` = image
file, ``sent1``, ``sent2``), ``new_data`` (source codes), ``category`` (1 HC, 2 HI, 3 HM, 4 MM)
and ``result`` (per pair a struct whose ``result`` field holds ±1 votes, +1 = ``sent1``
preferred). ``pascal50S.mat`` holds the references: a ``refs``-style struct (``image`` and its
sentences) or, in older releases, ``train_sent_final`` (``name``, ``sentences``); the first
50 sentences are the references.

The preset's label is the vote majority; human ties, reference sampling (5 per pair, 5
draws) and the metric-tie rule are knobs of :func:`capeval_core.stats.pairwise_accuracy`.
"""

from __future__ import annotations

import io
import os
from pathlib import Path
from typing import Any

import numpy as np

from capeval_core.judgments.base import (
    DEFAULT_MAX_BYTES,
    JudgmentSet,
    PairItem,
    format_error,
    read_bytes,
)
from capeval_core.judgments.pairwise import preference_from_votes

PAIRS_FILE = "pair_pascal.mat"
REFS_FILE = "pascal50S.mat"
CATEGORIES = {1: "HC", 2: "HI", 3: "HM", 4: "MM"}
N_REFERENCES = 50
PRESETS = {
    "published": "label = vote majority, human ties broken at random (seeded); 5 references "
    "sampled per pair, 5 draws; a metric tie counts as half",
}


def load_mat(path: Path, max_bytes: int = DEFAULT_MAX_BYTES) -> dict[str, Any]:
    """``scipy.io.loadmat`` with structs as objects; unreadable files give a clear error."""
    from scipy.io import loadmat

    data = read_bytes(path, max_bytes)
    try:
        return loadmat(io.BytesIO(data), squeeze_me=True, struct_as_record=False)
    except Exception as exc:  # scipy raises ValueError, TypeError, OSError... on bad files
        raise format_error(
            path,
            f"cannot read this MATLAB file (truncated or not a .mat "
            f"file?): {type(exc).__name__}: {exc}",
        ) from None


def variable(mat: dict[str, Any], names: tuple[str, ...], path: Path) -> Any:
    for name in names:
        if name in mat:
            return mat[name]
    found = sorted(k for k in mat if not k.startswith("__"))
    raise format_error(
        path, f"missing variable {names[0]!r} (variables found: {found})", column=names[0]
    )


def elements(value: Any) -> list[Any]:
    """A squeezed struct array / vector as a list (a single element becomes a list of one)."""
    arr = np.atleast_1d(
        np.asarray(value, dtype=object) if not isinstance(value, np.ndarray) else value
    )
    return list(arr.ravel())


def field_of(obj: Any, names: tuple[str, ...], path: Path, var: str, index: int) -> Any:
    for name in names:
        if hasattr(obj, name):
            return getattr(obj, name)
    fields = list(getattr(obj, "_fieldnames", []) or [])
    raise format_error(
        path,
        f"element {index + 1} of {var!r} has no field {names[0]!r} (fields: {fields})",
        record=index + 1,
        column=f"{var}.{names[0]}",
    )


def text_of(value: Any, path: Path, where: str, index: int) -> str:
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, np.ndarray) and value.size == 1 and isinstance(value.item(), str):
        return value.item().strip()
    if isinstance(value, np.ndarray) and value.size == 0:
        return ""
    raise format_error(
        path, f"expected text, got {type(value).__name__}", record=index + 1, column=where
    )


def image_name(value: str) -> str:
    return value.strip().replace("\\", "/").rsplit("/", 1)[-1]


def load_references(path: Path, max_bytes: int = DEFAULT_MAX_BYTES) -> dict[str, tuple[str, ...]]:
    """Image name -> its first 50 reference sentences, from ``pascal50S.mat``."""
    mat = load_mat(path, max_bytes)
    var = next((n for n in ("refs", "train_sent_final") if n in mat), "refs")
    structs = elements(variable(mat, (var,), path))
    out: dict[str, tuple[str, ...]] = {}
    for i, s in enumerate(structs):
        name = text_of(field_of(s, ("image", "name"), path, var, i), path, f"{var}.image", i)
        raw = field_of(s, ("sentences", "refs", "references", "sentence"), path, var, i)
        sentences = [text_of(x, path, f"{var}.sentences", i) for x in elements(raw)]
        sentences = [x for x in sentences if x][:N_REFERENCES]
        if not sentences:
            raise format_error(
                path, "image has no reference sentences", record=i + 1, column=f"{var}.sentences"
            )
        out[image_name(name)] = tuple(sentences)
    return out


def _numbers(value: Any) -> np.ndarray | None:
    """Votes as a float vector; None when they are not numbers (e.g. stored as text)."""
    arr = np.atleast_1d(np.asarray(value, dtype=object)).ravel()
    if any(isinstance(v, str | bytes) for v in arr):
        return None
    try:
        return arr.astype(float)
    except (TypeError, ValueError):
        return None


def _locate(path: Path, refs_file: str | os.PathLike[str] | None) -> tuple[Path, Path]:
    pairs = path / PAIRS_FILE if path.is_dir() else path
    if path.is_dir() and not pairs.is_file():
        raise format_error(pairs, f"{PAIRS_FILE} not found in the folder {path.name!r}")
    refs = Path(refs_file) if refs_file is not None else pairs.parent / REFS_FILE
    if not refs.is_file():
        raise format_error(
            refs,
            f"{REFS_FILE} must lie beside {pairs.name} (or pass "
            "`refs_file`): it holds the 50 references per image",
        )
    return pairs, refs


def load_pascal50s(
    path: str | os.PathLike[str],
    *,
    preset: str | None = None,
    refs_file: str | os.PathLike[str] | None = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> JudgmentSet:
    """``pair_pascal.mat`` + ``pascal50S.mat`` (or their folder): a pairwise JudgmentSet."""
    preset = preset or "published"
    if preset not in PRESETS:
        raise format_error(
            path, f"unknown preset {preset!r} for pascal50s; choose one of {list(PRESETS)}"
        )
    pairs_path, refs_path = _locate(Path(path), refs_file)
    references = load_references(refs_path, max_bytes)
    mat = load_mat(pairs_path, max_bytes)
    inputs = elements(variable(mat, ("new_input",), pairs_path))
    categories = elements(variable(mat, ("category",), pairs_path))
    results = elements(variable(mat, ("result",), pairs_path))
    n = len(inputs)
    for var, values in (("category", categories), ("result", results)):
        if len(values) != n:
            raise format_error(
                pairs_path,
                f"{var!r} has {len(values)} entries but new_input has {n} pairs",
                column=var,
            )
    items = []
    for i in range(n):
        s = inputs[i]
        name = image_name(
            text_of(
                field_of(s, ("name",), pairs_path, "new_input", i), pairs_path, "new_input.name", i
            )
        )
        sent1 = text_of(
            field_of(s, ("sent1",), pairs_path, "new_input", i), pairs_path, "new_input.sent1", i
        )
        sent2 = text_of(
            field_of(s, ("sent2",), pairs_path, "new_input", i), pairs_path, "new_input.sent2", i
        )
        try:
            category = CATEGORIES[int(categories[i])]
        except (KeyError, TypeError, ValueError):
            raise format_error(
                pairs_path,
                f"category must be 1-4 (got {categories[i]!r})",
                record=i + 1,
                column="category",
            ) from None
        votes = results[i]
        votes = (
            field_of(votes, ("result",), pairs_path, "result", i)
            if hasattr(votes, "_fieldnames")
            else votes
        )
        votes = _numbers(votes)
        if votes is None or votes.size == 0 or not np.isin(votes, (-1.0, 1.0)).all():
            raise format_error(
                pairs_path,
                "votes must be +1 (sent1 preferred) or -1 (sent2)",
                record=i + 1,
                column="result.result",
            )
        if name not in references:
            raise format_error(
                pairs_path,
                f"image {name!r} has no references in {refs_path.name}",
                record=i + 1,
                column="new_input.name",
            )
        votes_a, votes_b = int((votes > 0).sum()), int((votes < 0).sum())
        items.append(
            PairItem(
                str(i + 1),
                name,
                sent1,
                sent2,
                references[name],
                preference_from_votes(votes_a, votes_b),  # type: ignore[arg-type]
                votes_a,
                votes_b,
                category,
            )
        )
    return JudgmentSet(
        "pairwise",
        tuple(items),
        (),
        (pairs_path.name, refs_path.name),
        n_read=n,
        n_kept=n,
        format="pascal50s",
        preset=preset,
    )
