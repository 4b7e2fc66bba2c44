"""Protocol presets of the pairwise datasets, each named after the paper whose protocol it
follows, and what every consumer of a pairwise set says about its labels.

A preset fixes the labels (a triplet consensus file, or the votes of ``pair_pascal.mat``),
the references (the triplets' ``A`` sentences or the dataset's reference file), how many
references are sampled per pair over how many draws, the credit of a metric tie and what a
human tie becomes. The loaders read the first two; ``capeval correlate`` and the Pairwise
page read the rest (the page starts its knobs there). Each preset has one line of
description, shown on the Judgments page and in ``capeval correlate --help``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from capeval_core.judgments.base import JudgmentSet

#: "every reference, one draw" for :func:`~capeval_core.judgments.scoring.score_judgments`
ALL_REFERENCES = 10_000


@dataclass(frozen=True)
class PairwiseProtocol:
    """One preset: where labels and references come from, and the accuracy knobs.

    ``labels``: ``"triplets"`` (majority of a consensus file's triplets), ``"votes"`` (the
    vote majority of ``pair_pascal.mat``) or ``"file"`` (a generic file's own labels).
    ``references``: ``"triplets"`` (the triplets' ``A`` sentences, unless a reference file
    is passed) or ``"file"``. ``n_references=None`` scores every reference in one draw.
    """

    name: str
    description: str
    labels: str
    references: str
    n_references: int | None = 5
    draws: int = 5
    metric_tie: str = "half"
    human_tie: str = "random"
    note: str = ""

    @property
    def sampling(self) -> tuple[int, int]:
        """``(n_references, draws)`` to score with."""
        if self.n_references is None:
            return ALL_REFERENCES, 1
        return self.n_references, self.draws


#: Why BLEU-4 on PASCAL-50S with the 11 votes lands above CLIPScore's Table 7 (issue 17).
BLEU4_NOTE = (
    "BLEU-4 under clipscore-table7: METEOR, ROUGE-L and CIDEr-D land within a point of "
    "CLIPScore's Table 7, BLEU-4 on MM pairs about 5 points above it (60.7 against 55.3). "
    "Labels, human-tie rule and reference sampling are shared by all four metrics, so they "
    "cannot move BLEU-4 alone; BLEU's own choice is the score of a caption with no 4-gram "
    "in common with the references. capeval scores it as pycocoevalcap 1.2 does per caption: "
    "the 4-gram precision (0 + 1e-15)/(n + 1e-9) keeps it near 1e-4 times its lower-order "
    "precisions, so two such captions are still ranked (in effect by BLEU-3, with a bonus "
    "for captions under 4 words, whose 4-gram term is 1e-6). A sentence BLEU without that "
    "smoothing (0 as soon as one precision is 0, as NLTK's sentence_bleu by default) scores "
    "both 0: a metric tie, worth half. Two machine captions (MM) are the pairs where neither "
    "candidate shares a 4-gram with 5 sampled references most often, which is where the gap "
    "shows. CLIPScore's released code scores BLEU with pycocoevalcap for Flickr8k (capeval "
    "reproduces its tau-c to the digit); its PASCAL-50S code is not released, so this is the "
    "likely cause, not a proven one: tools/bleu4_zero_ties.py counts, on a copy of the data, "
    "the pairs it concerns and the accuracy when they count as ties. capeval keeps "
    "pycocoevalcap's per-caption values, and does not tune to the table."
)

#: Why SPICE on PASCAL-50S's MM pairs lands above CLIPScore's Table 7 (issue 41).
SPICE_NOTE = (
    "SPICE under clipscore-table7: HC, HI and HM land within half a point of CLIPScore's "
    "Table 7 (57.1, 96.4, 86.8 against 56.9, 96.3, 87.1), MM 2 points above it (68.4 against "
    "66.4). capeval's SPICE values are the jar's there: both candidates of all 1,000 MM "
    "pairs, with the first draw of references, equal spice-1.0.jar's in every category "
    "(python -m bench spice_long). In 36 % of MM draws neither caption has a tuple in common "
    "with the five references, so both score 0: a metric tie, worth half. Decided for the "
    "second caption (as a strict score_a > score_b decides it), the ties would give 65.8; for "
    "the first, 71.0. The paper does not say which rule it used and its PASCAL-50S code is "
    "not released; BLEU-4's MM gap does not move with the tie rule (60.4 to 61.0), so ties "
    "are not a proven cause. capeval keeps a tie at half and does not choose the rule from "
    "the table."
)

PASCAL50S: dict[str, PairwiseProtocol] = {
    p.name: p
    for p in (
        PairwiseProtocol(
            "clipscore-table4",
            "CLIPScore (Hessel et al. 2021) Table 4: label = majority of the pair's 48 "
            "triplets in consensus_pascal.mat, human ties broken at random (seeded); 5 of "
            "the pair's 48 triplet references sampled, 5 draws; a metric tie counts half",
            labels="triplets",
            references="triplets",
        ),
        PairwiseProtocol(
            "clipscore-table7",
            "CLIPScore appendix Table 7: label = majority of the pair's 10-11 votes in "
            "pair_pascal.mat, human ties broken at random (seeded); 5 of pascal50S.mat's 50 "
            "references sampled, 5 draws; a metric tie counts half (BLEU-4, SPICE: see the note)",
            labels="votes",
            references="file",
            note=BLEU4_NOTE + "\n\n" + SPICE_NOTE,
        ),
        PairwiseProtocol(
            "spice-paper",
            "SPICE (Anderson et al. 2016): a tie in metric scores counts as correct; labels, "
            "references and sampling as clipscore-table4",
            labels="triplets",
            references="triplets",
            metric_tie="correct",
        ),
    )
}

ABSTRACT50S: dict[str, PairwiseProtocol] = {
    p.name: p
    for p in (
        PairwiseProtocol(
            "clipscore-table4",
            "CLIPScore's Table 4 protocol on ABSTRACT-50S: label = majority of the pair's 48 "
            "triplets in consensus_abstract.mat, human ties broken at random (seeded); 5 of "
            "the pair's 48 references sampled, 5 draws; a metric tie counts half; the first "
            "200 pairs HC, the other 200 HI",
            labels="triplets",
            references="triplets",
        ),
        PairwiseProtocol(
            "kilickaya2017",
            "Kilickaya et al. 2017 (the seed paper): all 48 references of each pair, no "
            "sampling; label = majority of the pair's 48 triplets in consensus_abstract.mat; "
            "the first 200 pairs HC, the other 200 HI; human ties (the paper states no rule) "
            "dropped, a metric tie counts half",
            labels="triplets",
            references="triplets",
            n_references=None,
            draws=1,
            human_tie="drop",
        ),
    )
}

#: a generic pairwise file: its own labels, the PASCAL-50S sampling knobs
GENERIC = PairwiseProtocol(
    "generic",
    "the file's own labels (preferred or votes); 5 references sampled per pair, 5 draws; "
    "human ties broken at random (seeded); a metric tie counts half",
    labels="file",
    references="file",
)

BY_FORMAT: dict[str, dict[str, PairwiseProtocol]] = {
    "pascal50s": PASCAL50S,
    "abstract50s": ABSTRACT50S,
}


def descriptions(presets: dict[str, PairwiseProtocol]) -> dict[str, str]:
    """Preset name -> its one line (what the loader registry lists)."""
    return {name: p.description for name, p in presets.items()}


def protocol_for(jset: JudgmentSet) -> PairwiseProtocol:
    """The preset a loaded pairwise set was read with (:data:`GENERIC` for other sets)."""
    return BY_FORMAT.get(jset.format, {}).get(jset.preset or "", GENERIC)


def _labels_id(protocol: PairwiseProtocol) -> str:
    if protocol.labels == "triplets":
        return "triplet-majority"
    if protocol.labels == "votes":
        return "vote-majority"
    return "file"


def accuracy_signature(
    metric_signature: str,
    jset: JudgmentSet,
    *,
    n_references: int,
    draws: int,
    seed: int | None,
    metric_tie: str,
    human_tie: str,
) -> str:
    """The metric's signature followed by everything else behind a pairwise accuracy: the
    set's format and preset, which labels and references, the sampling, the tie rules."""
    protocol = protocol_for(jset)
    most = max((len(it.references) for it in jset.items), default=0)
    refs = "all" if n_references >= most else str(n_references)
    draws = 1 if refs == "all" else draws
    parts = [
        metric_signature,
        f"pairwise:{jset.format}",
        f"preset:{jset.preset or 'none'}",
        f"labels:{_labels_id(protocol)}",
        f"refs:{protocol.references}:{refs}x{draws}",
        f"seed:{seed}",
        f"metric-tie:{metric_tie}",
        f"human-tie:{human_tie}",
    ]
    return "|".join(parts)


def label_counts(jset: JudgmentSet) -> tuple[int, int, int]:
    """``(pairs, labelled pairs, human ties)`` of a pairwise set."""
    prefs = jset.preferences()
    labelled = np.isfinite(prefs)
    return len(prefs), int(labelled.sum()), int((prefs[labelled] == 0).sum())


def missing_labels_warning(jset: JudgmentSet) -> str | None:
    """One line for every place a pairwise set is used when some or all of its pairs have no
    human label (None when every pair has one, or for graded sets).

    >>> from capeval_core.judgments.base import JudgmentSet, PairItem
    >>> js = JudgmentSet("pairwise", (PairItem("1", "i", "a", "b", ("r",), None),), (),
    ...                  ("x",), n_read=1, n_kept=1)
    >>> missing_labels_warning(js)
    'None of the 1 pairs has a human label, so there is no accuracy to compute.'
    """
    if jset.kind != "pairwise":
        return None
    n, labelled, _ = label_counts(jset)
    if labelled == n:
        return None
    why = [note for note in jset.notes if note.startswith("no human labels")]
    reason = f" ({why[0]})" if why else ""
    if labelled == 0:
        return (
            f"None of the {n:,} pairs has a human label{reason}, so there is no accuracy "
            "to compute."
        )
    share = 100 * (n - labelled) / n
    return (
        f"{n - labelled:,} of {n:,} pairs ({share:.1f}%) have no human label{reason}; "
        f"accuracies use the {labelled:,} labelled pairs."
    )
