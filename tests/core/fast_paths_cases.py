"""Inputs for the checks of the compiled BLEU and CIDEr-D paths against the metrics: COCO
val2014 sets and designed edge cases, as token tuples."""

from __future__ import annotations

from capeval_core.metrics import make_batch
from tests.conftest import golden_coco200

#: (candidate, references) token strings: empty and one-word candidates, repeats, a no-break
#: space inside a token (split by coco-caption's BLEU and CIDEr), a long caption, images with
#: one and with seven references
DESIGNED = [
    ("", ["a dog", "the dog runs"]),
    ("dog", ["a dog"]),
    ("the the the the cat", ["the cat sat on the mat", "a cat and the dog"]),
    ("west 25\u00a01/2 street", ["west 25\u00a01/2 street sign", "a street"]),
    (" ".join(["a big dog"] * 40), ["a big dog runs", "dogs"]),
    ("a man on a horse", ["a man riding a horse", "a horse", "a man", "a man on a horse",
                          "horse and man", "a rider", "a person on a horse"]),
]  # fmt: skip


def cases() -> list[tuple[tuple[tuple[str, ...], ...], tuple[tuple[tuple[str, ...], ...], ...]]]:
    """(candidate tokens, reference tokens) of the golden's 200 COCO sets (PTB-tokenized),
    then of :data:`DESIGNED` (split on spaces), then of 40 items over 40,000 distinct words
    (more than the compiled path packs: the batch tables score them)."""
    _, cands, refs = golden_coco200()
    batch = make_batch(cands, refs)
    coco = (batch.candidate_tokens, batch.reference_tokens)
    designed = (
        tuple(tuple(c.split(" ")) if c else () for c, _ in DESIGNED),
        tuple(tuple(tuple(r.split(" ")) for r in rs) for _, rs in DESIGNED),
    )
    wide = (
        tuple(tuple(f"w{i * 1000 + j}" for j in range(0, 1000, 7)) for i in range(40)),
        tuple((tuple(f"w{i * 1000 + j}" for j in range(1000)),) for i in range(40)),
    )
    return [coco, designed, wide]
