"""Built-in caption examples: one image's references and captions of it that show where the
metrics part ways, and COCO val2014 images drawn as examples.

The app's Compare page and Perturbation lab offer them in their example pickers.

>>> BUILTIN_EXAMPLES[DEFAULT_EXAMPLE].candidate
'a man riding a wave on a surfboard'
>>> from capeval_core.resources import CaptionSet
>>> coco_example([CaptionSet(42, "a cat", ("a cat on a mat",))], 3).source
'COCO val2014 image 42'
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from capeval_core.errors import InputError
from capeval_core.resources import CaptionSet


@dataclass(frozen=True)
class Example:
    """A candidate caption with its references, and where it came from."""

    candidate: str
    references: tuple[str, ...]
    source: str


# Seed-paper Table 2 pattern (Kilickaya et al. 2017): one image's references, and the
# original caption next to a synonym substitution, redundant words and a changed word order.
# The wording is ours (in the COCO style), not the paper's.
TABLE2_SOURCE = (
    "the pattern of Table 2 in Kilickaya et al. (2017), “Re-evaluating Automatic Metrics for "
    "Image Captioning” (EACL): one image's references, and a caption of it as written, with "
    "synonyms, with redundant words, or with its words reordered. The captions are capeval's "
    "own, in the COCO style, not the paper's."
)
_SURF_REFS = (
    "a man riding a wave on top of a surfboard",
    "a surfer rides a large wave in the ocean",
    "a person on a surfboard riding a wave",
    "a man is surfing on a big wave",
    "a surfer in a wetsuit riding a wave",
)
BUILTIN_EXAMPLES: dict[str, Example] = {
    "Table 2 style: original": Example(
        "a man riding a wave on a surfboard", _SURF_REFS, TABLE2_SOURCE
    ),
    "Table 2 style: synonyms": Example(
        "a guy riding a swell on a surfboard", _SURF_REFS, TABLE2_SOURCE
    ),
    "Table 2 style: redundancy": Example(
        "a man man riding a wave wave on a surfboard surfboard",
        _SURF_REFS,
        TABLE2_SOURCE,
    ),
    "Table 2 style: word order": Example(
        "a wave riding a man on a surfboard", _SURF_REFS, TABLE2_SOURCE
    ),
    "Too short: brevity penalty": Example(
        "a surfer", _SURF_REFS, "built-in: a two-word caption, which BLEU's brevity penalty hits"
    ),
}
DEFAULT_EXAMPLE = "Table 2 style: original"

#: how many COCO val images a random example draws from (ascending image id)
COCO_POOL = 500


def coco_example(pool: Sequence[CaptionSet], draw: int) -> Example:
    """Image number ``draw`` of ``pool`` (modulo its size) as an example: its first caption
    as the candidate, the others as references (``resources.coco_caption_sets`` gives the
    pool).

    >>> pool = [CaptionSet(1, "a dog", ("a dog runs",)), CaptionSet(2, "a cat", ("a cat",))]
    >>> coco_example(pool, 3)
    Example(candidate='a cat', references=('a cat',), source='COCO val2014 image 2')
    """
    if not pool:
        raise InputError("`pool` has no COCO images to draw an example from")
    chosen = pool[draw % len(pool)]
    return Example(chosen.candidate, chosen.references, f"COCO val2014 image {chosen.image_id}")
