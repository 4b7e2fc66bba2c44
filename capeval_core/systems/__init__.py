"""Several captioning systems scored on the same images, and whether their differences hold.

A researcher has one COCO-format results file per system. :func:`load_systems` reads them
(and the references: an annotations file, or COCO val2014 from the installed pycocoevalcap),
checks that every system captions the same images once each, and puts the images in the
order ``capeval score`` uses. :func:`score_systems` scores every system with every metric in
one pass (references tokenized once; per-image values and each metric's resampling
statistics kept; results cached on disk per system and metric). :func:`compare_systems`
adds bootstrap intervals and paired tests against the first system (the baseline), with
sacrebleu's conventions (see :mod:`capeval_core.stats.resampling`).

Each system's corpus values equal ``capeval score`` on its file alone, bit for bit.

One job per module, each importing only the ones before it: :mod:`.loading` reads and aligns
the files (:class:`SystemsInput`), :mod:`.scoring` scores them with the on-disk cache
(:class:`SystemsScores`), :mod:`.comparison` compares them (intervals, paired tests, the
report, the per-image outputs).
"""

from capeval_core.coco_files import COCO_VAL_SOURCE, References, coco_val_references
from capeval_core.systems.comparison import (
    ALPHA,
    P_SHOWN_FROM,
    ResamplingSignature,
    SystemsComparison,
    categories_left_out,
    compare_systems,
    comparison_signatures_text,
    dropped_said,
    format_p,
    per_item_text,
    references_fields,
    score_and_compare,
    score_and_compare_apart,
    systems_per_item_outputs,
    write_systems_per_item,
)
from capeval_core.systems.loading import (
    ON_MISSING,
    CoverageError,
    SystemsInput,
    demo_systems,
    distinct_names,
    load_systems,
)
from capeval_core.systems.scoring import SystemsScores, score_systems

__all__ = [
    "ALPHA",
    "COCO_VAL_SOURCE",
    "ON_MISSING",
    "P_SHOWN_FROM",
    "CoverageError",
    "References",
    "ResamplingSignature",
    "SystemsComparison",
    "SystemsInput",
    "SystemsScores",
    "categories_left_out",
    "coco_val_references",
    "compare_systems",
    "comparison_signatures_text",
    "demo_systems",
    "distinct_names",
    "dropped_said",
    "format_p",
    "load_systems",
    "per_item_text",
    "references_fields",
    "score_and_compare",
    "score_and_compare_apart",
    "score_systems",
    "systems_per_item_outputs",
    "write_systems_per_item",
]
