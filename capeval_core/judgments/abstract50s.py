"""ABSTRACT-50S (Vedantam et al. 2015): 400 pairs of descriptions of clip-art scenes.

judgment-formats.md: ``abstract48S.json`` holds 24,000 ``{image_id, caption}`` (500 scenes x
48 references), ``abstract_candsB.json`` / ``abstract_candsC.json`` the pairs (pair *i* =
(B[i], C[i])), and ``consensus_abstract.mat`` the human labels: the struct array
``triplets`` (``A``, ``B``, ``C``, ``rating``), 48 per pair, matched to the pairs by their
candidates (:mod:`capeval_core.judgments.consensus`). Without the pair lists the pairs are
those the triplets name, in the file's order; without ``abstract48S.json`` a pair's
references are its triplets' ``A`` sentences. Without the consensus file the set has no
labels and every page and command using it says so.

The seed paper (Kilickaya et al. 2017): the first 200 pairs are HC (two human descriptions
of the scene), the remaining 200 HI (one of them describes another scene).

External metric scores come in a scores file joined on ``id``, the pair's number from 1 (the
order of the candidate lists, else of the triplets), with columns ``<name>:a`` (the score of
B[i]) and ``<name>:b`` (of C[i]): :func:`~capeval_core.judgments.external.join_scores_file`.
"""

from __future__ import annotations

import itertools
import os
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

from capeval_core.judgments.base import (
    DEFAULT_MAX_BYTES,
    JudgmentSet,
    PairItem,
    Row,
    blank_cells,
    caption_cell,
    cell_error,
    count_into,
    folder_name,
    format_error,
    image_key,
    read_json_records,
)
from capeval_core.judgments.consensus import (
    ConsensusMatch,
    PairVotes,
    Triplet,
    blank_a_left_out,
    match_key,
    match_triplets,
    pairs_from_triplets,
    read_triplets,
)
from capeval_core.judgments.pairwise import preference_from_votes
from capeval_core.judgments.protocols import ABSTRACT50S

REFS_FILE = "abstract48S.json"
CANDS_B = "abstract_candsB.json"
CANDS_C = "abstract_candsC.json"
CONSENSUS_FILE = "consensus_abstract.mat"
#: the seed paper's split: of the 400 pairs, the first 200 are HC, the others HI
N_PAIRS, N_HC = 400, 200
NO_LABELS = f"no human labels: {CONSENSUS_FILE} not found"
NO_REFERENCES = "no triplet and no reference file: no references"


def _captions(path: Path, max_bytes: int) -> list[tuple[Row, str, str]]:
    out = []
    for row in read_json_records(path, max_bytes=max_bytes):
        for key in ("image_id", "caption"):
            if key not in row.values:
                raise cell_error(path, row, key, f"record has no {key!r}")
        out.append(
            (
                row,
                image_key(row.values["image_id"]),
                caption_cell(row, path, "caption").strip(),
            )
        )
    return out


def _json_pairs(
    folder: Path, max_bytes: int
) -> tuple[list[tuple[str, str, str]], list[tuple[Row, Row]]]:
    """``(image_id, B, C)`` per pair from the two candidate lists (matched by position), and
    the records of B and C."""
    cands_b = _captions(folder / CANDS_B, max_bytes)
    cands_c = _captions(folder / CANDS_C, max_bytes)
    if len(cands_b) != len(cands_c):
        raise format_error(
            folder / CANDS_C,
            f"{CANDS_B} has {len(cands_b)} records but "
            f"{CANDS_C} has {len(cands_c)}: pairs are matched by position",
        )
    pairs, records = [], []
    for i, ((row_b, img_b, cap_b), (row_c, img_c, cap_c)) in enumerate(
        zip(cands_b, cands_c, strict=True)
    ):
        if img_b != img_c:
            raise format_error(
                folder / CANDS_C,
                f"pair {i + 1}: image_id {img_c!r} differs from {img_b!r} in {CANDS_B}",
                record=i,
                line=row_c.line,
                column="image_id",
            )
        pairs.append((img_b, cap_b, cap_c))
        records.append((row_b, row_c))
    return pairs, records


def _locate(path: Path, consensus_file: str | os.PathLike[str] | None) -> tuple[Path, Path]:
    """The dataset folder and where the consensus file is (or would be)."""
    folder = path if path.is_dir() else path.parent
    if consensus_file is not None:
        consensus = Path(consensus_file)
        if not consensus.is_file():
            raise format_error(consensus, "file does not exist")
    elif path.is_file() and path.suffix.lower() == ".mat":
        consensus = path
    else:
        consensus = folder / CONSENSUS_FILE
    return folder, consensus


def load_abstract50s(
    path: str | os.PathLike[str],
    *,
    preset: str | None = None,
    consensus_file: str | os.PathLike[str] | None = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> JudgmentSet:
    """The dataset folder (or one of its files): a pairwise JudgmentSet.

    Candidate a = B[i], candidate b = C[i]; references = the 48 of the scene in
    ``abstract48S.json``, else the pair's triplet ``A`` sentences. Labels: the majority of
    the pair's triplets (``votes_a``/``votes_b`` count them).
    """
    preset = preset or next(iter(ABSTRACT50S))
    if preset not in ABSTRACT50S:
        raise format_error(
            path, f"unknown preset {preset!r} for abstract50s; choose one of {list(ABSTRACT50S)}"
        )
    folder, consensus = _locate(Path(path), consensus_file)
    has_lists = (folder / CANDS_B).is_file() or (folder / CANDS_C).is_file()
    triplets = read_triplets(consensus, max_bytes) if consensus.is_file() else None
    if has_lists:
        pairs, records = _json_pairs(folder, max_bytes)
        where = [((CANDS_B, "caption", b), (CANDS_C, "caption", c)) for b, c in records]
    elif triplets is not None:
        pairs = [(str(i + 1), b, c) for i, (b, c) in enumerate(pairs_from_triplets(triplets))]
        first = _first_triplets(triplets)  # a pair's B and C: those of its first triplet
        where = [
            (
                (consensus.name, "triplets.B", first[b, c]),
                (consensus.name, "triplets.C", first[b, c]),
            )
            for _, b, c in pairs
        ]
    else:
        raise format_error(
            folder / CANDS_B,
            f"found neither {CANDS_B}/{CANDS_C} (the pairs) nor {CONSENSUS_FILE} (the "
            f"triplets) in the folder {folder_name(folder)!r}",
        )
    names = [str(i + 1) for i in range(len(pairs))]
    match = None
    notes: list[str] = []
    if triplets is not None:
        match = match_triplets([(b, c) for _, b, c in pairs], triplets, consensus.name)
        if len(match.without_triplets) == len(pairs):
            raise format_error(
                consensus,
                f"none of its {len(triplets):,} triplets matches a pair of {CANDS_B}/{CANDS_C} "
                "by its candidates B, C: is this the consensus file of this dataset?",
                column="triplets",
            )
        notes += match.notes(names)
        if has_lists and _out_of_order(match):
            notes.append(
                f"the triplets of {consensus.name} are not in the pair order of {CANDS_B}; "
                "pair numbers and categories follow the JSON files"
            )
    else:
        notes.append(NO_LABELS)
    refs_path = folder / REFS_FILE
    by_image: dict[str, list[str]] | None = None
    blank_of: dict[str, list[Row]] = defaultdict(list)  # a scene's blank references, kept
    if has_lists and refs_path.is_file():
        by_image = defaultdict(list)
        for row, image, caption in _captions(refs_path, max_bytes):
            by_image[image].append(caption)
            if not caption:  # scored as an empty reference, as coco-caption scores one
                blank_of[image].append(row)
    elif triplets is not None:
        why = "not given"
        if refs_path.is_file():
            why = "is keyed by scene, which triplets do not name"
        notes.append(f"references: the triplets' A sentences ({REFS_FILE} {why})")
    categorised = len(pairs) == N_PAIRS
    if not categorised:
        notes.append(
            f"no categories: HC/HI (first {N_HC} / other {N_PAIRS - N_HC} pairs) describe the "
            f"{N_PAIRS} pairs of the distribution, this set has {len(pairs):,}"
        )
    items: list[PairItem] = []
    dropped: dict[str, int] = {}
    blank: dict[tuple[str, str], list[Row]] = {}  # (file, column) -> kept blank candidates
    differ = 0
    blank_references: list[Row] = []  # the kept pairs' blank references in REFS_FILE
    from_triplets: list[PairVotes] = []  # the kept pairs scored against their triplets' A
    for i, (image, cand_b, cand_c) in enumerate(pairs):
        votes = match.pairs[i] if match is not None else None
        if by_image is not None:
            if image not in by_image:
                raise format_error(
                    folder / CANDS_B,
                    f"image_id {image!r} has no references in {REFS_FILE}",
                    record=i,
                    column="image_id",
                )
            references = tuple(by_image[image])
            blank_references += blank_of[image]
            if votes is not None and {match_key(r) for r in votes.references} != {
                match_key(r) for r in references
            }:
                differ += 1
        elif votes is not None and votes.references:
            references = votes.references
            from_triplets.append(votes)
        else:
            count_into(dropped, NO_REFERENCES)
            continue
        category = None
        if categorised:
            category = "HC" if i < N_HC else "HI"
        for (file, column, row), text in zip(where[i], (cand_b, cand_c), strict=True):
            if not text:  # scored as given, as coco-caption scores an empty caption
                blank.setdefault((file, column), []).append(row)
        items.append(
            PairItem(
                names[i],
                image,
                cand_b,
                cand_c,
                references,
                None if votes is None else preference_from_votes(votes.votes_a, votes.votes_b),  # type: ignore[arg-type]
                None if votes is None else votes.votes_a,
                None if votes is None else votes.votes_b,
                category,
            )
        )
    if differ:
        notes.append(
            f"{differ:,} pairs' triplet A sentences differ from their scene's references in "
            f"{REFS_FILE}; the references come from {REFS_FILE}"
        )
    sources = [REFS_FILE] if by_image is not None else []
    sources += [CANDS_B, CANDS_C] if has_lists else []
    sources += [consensus.name] if triplets is not None else []
    notes += blank_a_left_out(from_triplets, consensus.name)
    return JudgmentSet(
        "pairwise",
        tuple(items),
        (),
        tuple(sources),
        n_read=len(pairs),
        n_kept=len(items),
        dropped=dropped,
        format="abstract50s",
        preset=preset,
        notes=tuple(notes),
        blank=tuple(
            cell
            for (file, column), rows in blank.items()
            for cell in blank_cells(column, rows, "" if file == sources[0] else file)
        ),
        blank_references=blank_cells("caption", blank_references),  # REFS_FILE is sources[0]
    )


def _first_triplets(triplets: Sequence[Triplet]) -> dict[tuple[str, str], Row]:
    """Per pair of :func:`pairs_from_triplets` (its B, C as the first triplet naming it
    gives them), that triplet's record."""
    out: dict[tuple[str, str], Row] = {}
    seen: set[tuple[str, str]] = set()
    for t in triplets:
        key = (match_key(t.b), match_key(t.c))
        if key not in seen and key[::-1] not in seen:
            seen.add(key)
            out[t.b, t.c] = Row(0, {}, record=t.record - 1)  # Row counts from 0
    return out


def _out_of_order(match: ConsensusMatch) -> bool:
    firsts = [p.first for p in match.pairs if p is not None]
    return any(b < a for a, b in itertools.pairwise(firsts))
