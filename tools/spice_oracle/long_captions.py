"""Long captions made from COCO train2014 captions, for SPICE's long-sentence checks.

Today's captioners write paragraphs, and coco-caption's tokenizer drops their full stops, so
the SPICE jar receives a paragraph as one long sentence. :func:`long_items` makes ten such
candidates (90 to 400 words) the same way every time: each is one image's first caption
followed by every caption of the next images, PTB-tokenized as coco-caption tokenizes and cut
to its length; the image's other captions are its references. Only train2014 text, which the
parser may see (it is no evaluation set).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

#: the candidates' lengths in words (coco-caption's tokens, all one sentence to the jar)
LENGTHS = (90, 120, 150, 163, 190, 215, 250, 290, 320, 400)
#: the k-th candidate describes train2014's ``SPREAD * k + FIRST``-th image (ascending id)
SPREAD, FIRST = 1000, 7


@dataclass(frozen=True)
class LongItem:
    """One image: a long candidate (space-joined tokens) and its references."""

    image_id: int
    candidate: str
    references: tuple[str, ...]
    #: the train2014 annotation ids the candidate was made of, in order, and the references'
    candidate_ids: tuple[int, ...]
    reference_ids: tuple[int, ...]


@functools.cache
def long_items() -> tuple[LongItem, ...]:
    """The ten long candidates of :data:`LENGTHS`, with their references."""
    from capeval_core.resources import coco_captions
    from capeval_core.tokenize import get_tokenizer

    by_image: dict[int, list] = {}
    for c in coco_captions("train"):
        by_image.setdefault(c.image_id, []).append(c)
    images = sorted(by_image)
    tokenize = get_tokenizer("ptb").tokenize_batch
    out = []
    for k, length in enumerate(LENGTHS):
        at = SPREAD * k + FIRST
        own = sorted(by_image[images[at]], key=lambda c: c.annotation_id)
        parts, words, nxt = [own[0]], len(tokenize([own[0].caption])[0]), at + 1
        while words < length:
            for c in sorted(by_image[images[nxt]], key=lambda c: c.annotation_id):
                parts.append(c)
                words += len(tokenize([c.caption])[0])
            nxt += 1
        tokens = [w for t in tokenize([c.caption for c in parts]) for w in t][:length]
        refs = [" ".join(t) for t in tokenize([c.caption for c in own[1:]])]
        out.append(
            LongItem(
                image_id=images[at],
                candidate=" ".join(tokens),
                references=tuple(refs),
                candidate_ids=tuple(c.annotation_id for c in parts),
                reference_ids=tuple(c.annotation_id for c in own[1:]),
            )
        )
    return tuple(out)
