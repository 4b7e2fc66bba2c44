"""Long captions made from COCO train2014 captions, for SPICE's long-sentence checks.

Today's captioners write paragraphs, and coco-caption's tokenizer drops their full stops, so
the SPICE jar receives a paragraph as one long sentence. :func:`long_items` makes ten such
candidates (90 to 400 words) the same way every time, each written as a detailed captioner
writes about a busy scene: "The image shows ... . In the foreground, ... . To the left, ... .
In the background, ... ." Each describes one image of a theme (a kitchen, a street, a beach,
...): it opens with that image's first caption and goes on with the first captions of the
next images of the same theme, one sentence each after a connective of such captioners; it is
PTB-tokenized as coco-caption tokenizes and cut to its length (as a captioner is cut off at its
token limit). The image's other captions are its references. Only train2014 text, which the
parser may see (it is no evaluation set).

:func:`joined_items` is the first, plainer generator (captions of consecutive images one after
another, unrelated to each other): the golden's fallback texts were made of it.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

#: the candidates' lengths in words (coco-caption's tokens, all one sentence to the jar)
LENGTHS = (90, 120, 150, 163, 190, 215, 250, 290, 320, 400)
#: the k-th candidate describes a scene of ``THEMES[k]``: the first image at or after
#: train2014's ``SPREAD * k + FIRST``-th (ascending id) whose first caption has that word
THEMES = ("kitchen", "street", "beach", "table", "room", "park", "field", "snow", "train", "water")
SPREAD, FIRST = 1000, 7
#: how detailed captioners go on from one part of a scene to the next, in turn
CONNECTIVES = (
    "In the foreground,",
    "To the left,",
    "Next to this,",
    "In the background,",
    "On the right side of the image,",
    "There is also",
    "Further back,",
    "Nearby,",
    "Closer to the center,",
    "Additionally,",
    "Behind them,",
    "In the distance,",
)


@dataclass(frozen=True)
class LongItem:
    """One image: a long candidate (space-joined tokens) and its references."""

    image_id: int
    candidate: str
    references: tuple[str, ...]
    #: the train2014 annotation ids the candidate was made of, in order, and the references'
    candidate_ids: tuple[int, ...]
    reference_ids: tuple[int, ...]
    #: the paragraph as a captioner writes it, before coco-caption's tokenizer (all of it:
    #: ``candidate`` is its first ``len(candidate.split())`` tokens)
    paragraph: str = ""


@functools.cache
def _train_images() -> tuple[list[int], dict[int, list]]:
    """train2014's image ids (ascending) and each image's captions by annotation id."""
    from capeval_core.resources import coco_captions

    by_image: dict[int, list] = {}
    for c in coco_captions("train"):
        by_image.setdefault(c.image_id, []).append(c)
    for caps in by_image.values():
        caps.sort(key=lambda c: c.annotation_id)
    return sorted(by_image), by_image


def _sentence(text: str) -> str:
    """A caption as a sentence of a paragraph: no trailing stop or space of its own."""
    return text.strip().rstrip(".").strip()


def _lower_first(text: str) -> str:
    """A caption's first letter as it reads inside a sentence."""
    return text[:1].lower() + text[1:]


@functools.cache
def long_items() -> tuple[LongItem, ...]:
    """The ten detailed-paragraph candidates of :data:`LENGTHS`, with their references."""
    from capeval_core.tokenize import get_tokenizer

    images, by_image = _train_images()
    tokenize = get_tokenizer("ptb").tokenize_batch

    def of_theme(at: int, theme: str) -> int:
        while theme not in tokenize([by_image[images[at]][0].caption])[0]:
            at += 1
        return at

    out = []
    for k, (length, theme) in enumerate(zip(LENGTHS, THEMES, strict=True)):
        at = of_theme(SPREAD * k + FIRST, theme)
        own = by_image[images[at]]
        parts = [own[0]]
        sentences = [f"The image shows {_lower_first(_sentence(own[0].caption))}."]
        words, nxt = len(tokenize([sentences[0]])[0]), at
        while words < length:
            nxt = of_theme(nxt + 1, theme)
            cap = by_image[images[nxt]][0]
            said = _lower_first(_sentence(cap.caption))
            sentences.append(f"{CONNECTIVES[(len(parts) - 1) % len(CONNECTIVES)]} {said}.")
            parts.append(cap)
            words += len(tokenize([sentences[-1]])[0])
        paragraph = " ".join(sentences)
        tokens = tokenize([paragraph])[0][:length]
        refs = [" ".join(t) for t in tokenize([c.caption for c in own[1:]])]
        out.append(
            LongItem(
                image_id=images[at],
                candidate=" ".join(tokens),
                references=tuple(refs),
                candidate_ids=tuple(c.annotation_id for c in parts),
                reference_ids=tuple(c.annotation_id for c in own[1:]),
                paragraph=paragraph,
            )
        )
    return tuple(out)


@functools.cache
def joined_items() -> tuple[LongItem, ...]:
    """Candidates of :data:`LENGTHS` made plainly: one image's first caption followed by every
    caption of the next images (``SPREAD * k + FIRST``-th image, ascending id), cut to length."""
    from capeval_core.tokenize import get_tokenizer

    images, by_image = _train_images()
    tokenize = get_tokenizer("ptb").tokenize_batch
    out = []
    for k, length in enumerate(LENGTHS):
        at = SPREAD * k + FIRST
        own = by_image[images[at]]
        parts, words, nxt = [own[0]], len(tokenize([own[0].caption])[0]), at + 1
        while words < length:
            for c in by_image[images[nxt]]:
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
