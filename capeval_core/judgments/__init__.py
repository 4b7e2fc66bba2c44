"""Human-judgment loaders, one per format, behind one registry (house style, principle 4).

>>> sorted(LOADERS)[:3]
['abstract50s', 'composite', 'flickr8k-cf']
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from capeval_core.errors import (
    InputError,
    JudgmentFormatError,
    OptionError,
    UnknownKeyError,
    refuse_text,
)
from capeval_core.files import Limits, locate
from capeval_core.judgments import composite, flickr8k, pascal50s, protocols, thumb
from capeval_core.judgments.abstract50s import load_abstract50s
from capeval_core.judgments.base import (
    DEFAULT_MAX_BYTES,
    GradedItem,
    JudgmentSet,
    PairItem,
)
from capeval_core.judgments.coco import load_coco_references
from capeval_core.judgments.composite import load_composite
from capeval_core.judgments.flickr8k import load_flickr8k_crowdflower, load_flickr8k_expert
from capeval_core.judgments.graded import load_graded
from capeval_core.judgments.pairwise import load_pairwise
from capeval_core.judgments.pascal50s import load_pascal50s
from capeval_core.judgments.thumb import load_thumb


@dataclass(frozen=True)
class Loader:
    """A registered format: its name, the kind of set it gives, its presets (first = default)."""

    name: str
    kind: str
    load: Callable[..., JudgmentSet]
    description: str
    presets: dict[str, str] = field(default_factory=dict)
    #: files read beside the main one; uploaded alone, the loader is given the folder, so
    #: that it says the main file is missing instead of misreading this one as it
    companions: tuple[str, ...] = ()
    #: reads one file (a folder of several is another format's)
    one_file: bool = False


LOADERS: dict[str, Loader] = {
    loader.name: loader
    for loader in (
        Loader(
            "graded",
            "graded",
            load_graded,
            "generic graded file: CSV, TSV, JSON or JSONL, one row per candidate",
            one_file=True,
        ),
        Loader(
            "pairwise",
            "pairwise",
            load_pairwise,
            "generic pairwise file: CSV, TSV, JSON or JSONL, one row per pair",
            one_file=True,
        ),
        Loader(
            "flickr8k-expert",
            "graded",
            load_flickr8k_expert,
            "ExpertAnnotations.txt beside Flickr8k.token.txt",
            flickr8k.EXPERT_PRESETS,
            (flickr8k.TOKEN_FILE,),
        ),
        Loader(
            "flickr8k-cf",
            "graded",
            load_flickr8k_crowdflower,
            "CrowdFlowerAnnotations.txt beside Flickr8k.token.txt",
            flickr8k.CROWDFLOWER_PRESETS,
            (flickr8k.TOKEN_FILE,),
        ),
        Loader(
            "composite",
            "graded",
            load_composite,
            "Composite CSV files (Aditya et al. 2015)",
            composite.PRESETS,
        ),
        Loader(
            "thumb",
            "graded",
            load_thumb,
            "THumB 1.0 (Kasai et al. 2022): mscoco_THumB-1.0.jsonl as distributed; references "
            "from COCO val2014 (installed) or beside it mscoco_references.json",
            thumb.PRESETS,
            (thumb.REFERENCES_NAME,),
        ),
        Loader(
            "pascal50s",
            "pairwise",
            load_pascal50s,
            "pair_pascal.mat beside pascal50S.mat and/or consensus_pascal.mat",
            pascal50s.PRESETS,
            (pascal50s.REFS_FILE, pascal50s.CONSENSUS_FILE),
        ),
        Loader(
            "abstract50s",
            "pairwise",
            load_abstract50s,
            "abstract48S.json, abstract_candsB/C.json and consensus_abstract.mat "
            "(or the .mat alone)",
            protocols.descriptions(protocols.ABSTRACT50S),
        ),
    )
}


def load_judgments(
    path: str | os.PathLike[str],
    format: str,
    preset: str | None = None,
    *,
    max_caption_tokens: int = Limits.max_caption_tokens,
    max_references: int = Limits.max_references,
    **options: Any,
) -> JudgmentSet:
    """Load a judgment file (or the folder of a multi-file dataset) by format name.

    ``options`` go to the loader (``max_bytes``, ``score_columns``, ``references_from``,
    ``token_file``, ``columns``, ...). ``preset=None`` uses the format's default preset; a
    preset the format does not have is an error. Every caption and reference list is held
    to the documented :class:`~capeval_core.files.Limits` (``max_bytes``,
    ``max_caption_tokens``, ``max_references``).

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "j.tsv"
    >>> _ = p.write_text("candidate\\treferences\\tscore\\na dog\\ta dog runs\\t4\\n")
    >>> load_judgments(p, "graded").describe()
    '1 read, 1 scored'
    """
    if not isinstance(path, str | os.PathLike):
        raise InputError(f"`path` must be a file or folder path (got {type(path).__name__})")
    if "score_columns" in options:
        refuse_text(options["score_columns"], "score_columns", "column names")
    loader = LOADERS.get(format)
    if loader is None:
        raise UnknownKeyError(
            f"unknown judgment format {format!r}; choose one of {', '.join(LOADERS)}"
        )
    if preset is not None and preset not in loader.presets:
        allowed = ", ".join(loader.presets) or "none (leave the preset out)"
        raise OptionError(f"unknown preset {preset!r} for the {format} format; presets: {allowed}")
    limits = Limits(
        max_bytes=options.get("max_bytes", Limits.max_bytes),
        max_caption_tokens=max_caption_tokens,
        max_references=max_references,
    )
    jset = loader.load(path, preset=preset, **options)
    check_limits(jset, limits)
    return jset


def check_limits(jset: JudgmentSet, limits: Limits) -> None:
    """Raise on the first item whose caption or reference list is over ``limits``.

    >>> item = GradedItem("1", "img", "a dog runs on the grass", ("a dog runs",), (3.0,))
    >>> jset = JudgmentSet("graded", (item,), ("score",), ("toy.csv",), n_read=1, n_kept=1)
    >>> check_limits(jset, Limits())  # within the limits: returns None
    >>> check_limits(jset, Limits(max_caption_tokens=3))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    capeval_core.errors.JudgmentFormatError: toy.csv, item '1', column 'candidate': caption \
has 6 tokens, above the 3-token limit ...
    """
    source = jset.source[0] if jset.source else "judgments"
    seen: set[int] = set()  # reference tuples are often shared by the items of one image
    for item in jset.items:
        texts = (
            [("candidate", item.candidate)]
            if isinstance(item, GradedItem)
            else [("candidate_a", item.candidate_a), ("candidate_b", item.candidate_b)]
        )
        if id(item.references) not in seen:
            seen.add(id(item.references))
            problem = limits.references_problem(len(item.references))
            if problem:
                raise _limit_error(source, item.id, "references", problem, "max_references")
            texts += [("references", r) for r in item.references]
        for column, text in texts:
            problem = limits.caption_problem(text)
            if problem:
                raise _limit_error(source, item.id, column, problem, "max_caption_tokens")


def _limit_error(source: str, item: str, column: str, problem: str, option: str):
    return locate(
        f"{source}, item {item!r}",
        f"{problem} (raise it with the `{option}` option if the data are genuine)",
        column=column,
        error=JudgmentFormatError,
    )


__all__ = [
    "DEFAULT_MAX_BYTES",
    "LOADERS",
    "GradedItem",
    "JudgmentSet",
    "Loader",
    "PairItem",
    "check_limits",
    "load_abstract50s",
    "load_coco_references",
    "load_composite",
    "load_flickr8k_crowdflower",
    "load_flickr8k_expert",
    "load_graded",
    "load_judgments",
    "load_pairwise",
    "load_pascal50s",
    "load_thumb",
]
