"""PASCAL-50S (Vedantam et al. 2015) from its MATLAB files, read with ``scipy.io.loadmat``.

judgment-formats.md: ``pair_pascal.mat`` holds ``new_input`` (struct array: ``name`` = image
file, ``sent1``, ``sent2``), ``new_data`` (source codes), ``category`` (1 HC, 2 HI, 3 HM, 4 MM)
and ``result`` (per pair a struct whose ``result`` field holds ±1 votes, +1 = ``sent1``
preferred). ``pascal50S.mat`` holds the references: a ``refs``-style struct (``image`` and its
sentences) or, in older releases, ``train_sent_final`` (``name``, ``sentences``); the first
50 sentences are the references.

The triplet consensus of the CIDEr authors' consensus package, ``consensus_pascal.mat``
(48 triplets per pair, :mod:`capeval_core.judgments.consensus`), is the second label source,
and the one CLIPScore's main table uses. The preset chooses
(:data:`capeval_core.judgments.protocols.PASCAL50S`): ``clipscore-table4`` and
``spice-paper`` take the triplet majority and the triplets' ``A`` sentences as references
(``pascal50S.mat`` is then only read when passed as ``refs_file``), ``clipscore-table7``
the majority of the 10-11 votes of ``pair_pascal.mat`` and the first 50 references of
``pascal50S.mat``. Human ties, reference sampling and the metric-tie rule are knobs of
:func:`capeval_core.stats.pairwise_accuracy`, started from the preset.

External metric scores (the ``.mat`` files have no place for them) come in a scores file
joined on ``id``, the pair's number from 1 in the order of ``new_input``, with columns
``<name>:a`` (the score of ``sent1``) and ``<name>:b`` (of ``sent2``):
:func:`~capeval_core.judgments.external.join_scores_file`. Pairs a preset drops may be
absent from it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

from capeval_core.judgments.base import (
    DEFAULT_MAX_BYTES,
    JudgmentSet,
    PairItem,
    Row,
    blank_before_last,
    blank_cells,
    blank_references_left_out,
    count_into,
    folder_name,
    format_error,
)
from capeval_core.judgments.consensus import (
    ConsensusMatch,
    PairVotes,
    blank_a_left_out,
    match_triplets,
    read_triplets,
)
from capeval_core.judgments.matfile import (
    elements,
    field_name,
    field_of,
    image_name,
    is_struct,
    load_mat,
    shown,
    text_of,
    unwrap,
    variable,
)
from capeval_core.judgments.pairwise import preference_from_votes
from capeval_core.judgments.protocols import PASCAL50S, descriptions

PAIRS_FILE = "pair_pascal.mat"
REFS_FILE = "pascal50S.mat"
CATEGORIES = {1: "HC", 2: "HI", 3: "HM", 4: "MM"}
N_REFERENCES = 50
CONSENSUS_FILE = "consensus_pascal.mat"
#: preset name -> one line; the knobs are in protocols.PASCAL50S (default: clipscore-table4
#: where the consensus file is found, else clipscore-table7)
PRESETS = descriptions(PASCAL50S)
NO_REFERENCES = "no triplet and no reference file: no references"


def _category(value: Any) -> str | None:
    """A pair's category from its code (1-4, as distributed, a number or its text) or its
    label (a copy that spells them out, any case); None when it is neither."""
    value = unwrap(value)
    if isinstance(value, str) and value.strip().upper() in CATEGORIES.values():
        return value.strip().upper()
    try:
        code = float(value)
    except (TypeError, ValueError):
        return None
    return CATEGORIES.get(int(code)) if code.is_integer() else None


def load_references(path: Path, max_bytes: int = DEFAULT_MAX_BYTES) -> dict[str, tuple[str, ...]]:
    """Image name -> its first 50 reference sentences, from ``pascal50S.mat``."""
    return read_references(path, max_bytes)[0]


#: the fields a ``pascal50S.mat`` element may hold its sentences in ("sent": the field name
#: of the file the CIDEr authors distribute)
SENTENCE_FIELDS = ("sentences", "sent", "refs", "references", "sentence")


def read_references(
    path: Path, max_bytes: int = DEFAULT_MAX_BYTES
) -> tuple[dict[str, tuple[str, ...]], dict[str, tuple[str, Row]]]:
    """:func:`load_references`, and per image whose sentences hold a blank one before its
    50th (or last) reference, the field and element it is in: the blank is left out, where
    a generic file keeps it as an empty reference."""
    mat = load_mat(path, max_bytes)
    var = next((n for n in ("refs", "train_sent_final") if n in mat), "refs")
    structs = elements(variable(mat, (var,), path))
    out: dict[str, tuple[str, ...]] = {}
    blank: dict[str, tuple[str, Row]] = {}
    for i, s in enumerate(structs):
        name = text_of(field_of(s, ("image", "name"), path, var, i), path, f"{var}.image", i)
        raw = field_of(s, SENTENCE_FIELDS, path, var, i)
        sentences = [text_of(x, path, f"{var}.sentences", i) for x in elements(raw)]
        filled = [k for k, x in enumerate(sentences) if x][:N_REFERENCES]
        if not filled:
            raise format_error(
                path, "image has no reference sentences", record=i, column=f"{var}.sentences"
            )
        out[image_name(name)] = tuple(sentences[k] for k in filled)
        if blank_before_last(sentences[: filled[-1] + 1]):
            column = f"{var}.{field_name(s, SENTENCE_FIELDS)}"
            blank[image_name(name)] = (column, Row(0, {}, record=i))  # element i + 1
    return out, blank


def _pairs_file(path: Path) -> Path:
    pairs = path / PAIRS_FILE if path.is_dir() else path
    if path.is_dir() and not pairs.is_file():
        raise format_error(pairs, f"{PAIRS_FILE} not found in the folder {folder_name(path)!r}")
    return pairs


def _refs_file(pairs: Path, refs_file: str | os.PathLike[str] | None) -> Path:
    refs = Path(refs_file) if refs_file is not None else pairs.parent / REFS_FILE
    if not refs.is_file():
        if refs_file is not None:
            raise format_error(refs, "file does not exist")
        raise format_error(
            refs,
            f"{REFS_FILE} not found beside {pairs.name}: it holds the 50 references per "
            "image; put it in the same folder",
        )
    return refs


def _consensus_file(
    pairs: Path, consensus_file: str | os.PathLike[str] | None, preset: str
) -> Path:
    path = Path(consensus_file) if consensus_file is not None else pairs.parent / CONSENSUS_FILE
    if not path.is_file() and consensus_file is not None:
        raise format_error(path, "file does not exist")
    if not path.is_file():
        raise format_error(
            path,
            f"not found beside {pairs.name}: "
            f"preset {preset} takes its labels from its triplets; preset clipscore-table7 "
            f"uses the votes of {PAIRS_FILE} instead",
        )
    return path


def _numbers(value: Any) -> np.ndarray | None:
    """Votes as a float vector; None when they are not numbers (e.g. stored as text)."""
    arr = np.atleast_1d(np.asarray(value, dtype=object)).ravel()
    if any(isinstance(v, str | bytes) for v in arr):
        return None
    try:
        return arr.astype(float)
    except (TypeError, ValueError):
        return None


def _votes(value: object, path: Path, i: int) -> tuple[int, int]:
    """Votes for sent1 and sent2 of pair ``i`` (``result(i).result``: +1 = sent1)."""
    if is_struct(value):
        value = field_of(value, ("result",), path, "result", i)
    votes = _numbers(value)
    if votes is None or votes.size == 0 or not np.isin(votes, (-1.0, 1.0)).all():
        raise format_error(
            path,
            "votes must be +1 (sent1 preferred) or -1 (sent2)",
            record=i,
            column="result.result",
        )
    return int((votes > 0).sum()), int((votes < 0).sum())


def load_pascal50s(
    path: str | os.PathLike[str],
    *,
    preset: str | None = None,
    refs_file: str | os.PathLike[str] | None = None,
    consensus_file: str | os.PathLike[str] | None = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> JudgmentSet:
    """``pair_pascal.mat`` (or its folder) with the preset's labels and references: a
    pairwise JudgmentSet (``votes_a``/``votes_b`` count votes or triplets)."""
    if preset is None:  # the consensus labels where the file is there, else the votes
        found = (
            consensus_file is not None
            or (_pairs_file(Path(path)).parent / CONSENSUS_FILE).is_file()
        )
        preset = "clipscore-table4" if found else "clipscore-table7"
    if preset not in PASCAL50S:
        raise format_error(
            path, f"unknown preset {preset!r} for pascal50s; choose one of {list(PASCAL50S)}"
        )
    protocol = PASCAL50S[preset]
    pairs_path = _pairs_file(Path(path))
    consensus = (
        _consensus_file(pairs_path, consensus_file, preset)
        if protocol.labels == "triplets"
        else None
    )
    refs_path = None
    if protocol.references == "file" or refs_file is not None:
        refs_path = _refs_file(pairs_path, refs_file)
    references, left_out = (
        read_references(refs_path, max_bytes) if refs_path is not None else (None, {})
    )
    mat = load_mat(pairs_path, max_bytes)
    inputs = elements(variable(mat, ("new_input",), pairs_path))
    categories = elements(variable(mat, ("category",), pairs_path))
    checks = [("category", categories)]
    results = None
    if protocol.labels == "votes":
        results = elements(variable(mat, ("result",), pairs_path))
        checks.append(("result", results))
    n = len(inputs)
    for var, values in checks:
        if len(values) != n:
            raise format_error(
                pairs_path,
                f"{var!r} has {len(values)} entries but new_input has {n} pairs",
                column=var,
            )
    rows = []
    for i in range(n):
        s = inputs[i]
        fields = [
            text_of(field_of(s, (f,), pairs_path, "new_input", i), pairs_path, f"new_input.{f}", i)
            for f in ("name", "sent1", "sent2")
        ]
        category = _category(categories[i])
        if category is None:
            raise format_error(
                pairs_path,
                f"category must be 1-4 or one of {'/'.join(CATEGORIES.values())} "
                f"(got {shown(categories[i])})",
                record=i,
                column="category",
            )
        name = image_name(fields[0])
        if references is not None and name not in references:
            raise format_error(
                pairs_path,
                f"image {name!r} has no references in {refs_path.name}",  # type: ignore[union-attr]
                record=i,
                column="new_input.name",
            )
        rows.append((name, fields[1], fields[2], category))
    notes: list[str] = []
    match: ConsensusMatch | None = None
    if consensus is not None:
        triplets = read_triplets(consensus, max_bytes)
        match = match_triplets([(a, b) for _, a, b, _ in rows], triplets, consensus.name)
        if len(match.without_triplets) == n:
            raise format_error(
                consensus,
                f"none of its {len(triplets):,} triplets matches a pair of {pairs_path.name} "
                "by its candidates B, C: is this the consensus file of this dataset?",
                column="triplets",
            )
        notes += match.notes([str(i + 1) for i in range(n)])
        if references is None:
            notes.append(f"references: the triplets' A sentences ({REFS_FILE} not used)")
    else:
        notes.append(f"labels: majority of the votes of {pairs_path.name} (result.result)")
    items = []
    dropped: dict[str, int] = {}
    blank: dict[str, list[Row]] = {"new_input.sent1": [], "new_input.sent2": []}
    from_file: list[str] = []  # the images of the pairs scored against the reference file's
    from_triplets: list[PairVotes] = []  # the pairs scored against their triplets' A
    for i, (name, sent1, sent2, category) in enumerate(rows):
        if match is not None:
            consensus_votes = match.pairs[i]
            votes = (
                None
                if consensus_votes is None
                else (consensus_votes.votes_a, consensus_votes.votes_b)
            )
            refs = references[name] if references is not None else None
            if refs is None:
                if consensus_votes is None or not consensus_votes.references:
                    count_into(dropped, NO_REFERENCES)
                    continue
                refs = consensus_votes.references
                from_triplets.append(consensus_votes)
            else:
                from_file.append(name)
        else:
            votes = _votes(results[i], pairs_path, i)  # type: ignore[index]
            refs = references[name]  # type: ignore[index]
            from_file.append(name)
        for column, text in zip(blank, (sent1, sent2), strict=True):
            if not text:  # scored as given, as coco-caption scores an empty caption
                blank[column].append(Row(0, {}, record=i))  # element i + 1, as MATLAB counts
        items.append(
            PairItem(
                str(i + 1),
                name,
                sent1,
                sent2,
                refs,
                None if votes is None else preference_from_votes(*votes),  # type: ignore[arg-type]
                None if votes is None else votes[0],
                None if votes is None else votes[1],
                category,
            )
        )
    sources = [pairs_path.name]
    sources += [refs_path.name] if refs_path is not None else []
    sources += [consensus.name] if consensus is not None else []
    # the blank references left out of those the kept pairs are scored against, where
    # a generic file would keep them as empty references
    left = [left_out[name] for name in dict.fromkeys(from_file) if name in left_out]
    if left:  # one struct array: one field holds every element's sentences
        rows_out = [row for _, row in left]
        cells = blank_cells(left[0][0], rows_out, refs_path.name)  # type: ignore[union-attr]
        notes.append(blank_references_left_out(cells))
    if consensus is not None:
        notes += blank_a_left_out(from_triplets, consensus.name)
    return JudgmentSet(
        "pairwise",
        tuple(items),
        (),
        tuple(sources),
        n_read=n,
        n_kept=len(items),
        dropped=dropped,
        format="pascal50s",
        preset=preset,
        notes=tuple(notes),
        blank=tuple(cell for column, found in blank.items() for cell in blank_cells(column, found)),
    )
