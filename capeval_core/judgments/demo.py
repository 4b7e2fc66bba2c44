"""Synthetic demo judgment sets built from COCO val2014 captions, so every page works
without an upload (product brief, "Judgment files"). They are **synthetic**: the "human"
scores are derived from controlled corruption levels, not from people; every set says so
in its ``source``, ``notes`` and ``describe()``.

Corruptions are simple word-level operations implemented here (drop words, replace content
words by words of other captions, shuffle the order, take another image's caption).
"""

from __future__ import annotations

import numpy as np

from capeval_core.judgments.base import GradedItem, JudgmentSet, PairItem

#: the share of a caption's words each corruption changes: replaced (graded levels 2 and 3,
#: the replaced-words distractor), dropped (the dropped-words distractor; level 1 drops fewer)
REPLACED_SHARE, DROPPED_SHARE, LEVEL1_DROPPED = 0.35, 0.3, 0.2
#: corruption level -> what it does (level 0 is a held-out human caption)
LEVELS = {
    0: "held-out human caption",
    1: f"{LEVEL1_DROPPED:.0%} of the words dropped",
    2: f"{REPLACED_SHARE:.0%} of the content words replaced by words of other captions",
    3: f"words shuffled and {REPLACED_SHARE:.0%} of the content words replaced",
    4: "caption of another image",
}
DISTRACTORS = ("other-image", "shuffled", "replaced-words", "dropped-words")


def distractors_described() -> str:
    """What each generated distractor is, with the shares :func:`demo_distractors` uses.

    >>> distractors_described().split(", ")[3]
    'replaced-words (35% of the content words replaced)'
    """
    return (
        "other-image (another image's caption), shuffled (same words, random order), "
        f"replaced-words ({REPLACED_SHARE:.0%} of the content words replaced), "
        f"dropped-words ({DROPPED_SHARE:.0%} of the words dropped)"
    )


def _label(what: str, seed: int) -> tuple[str, ...]:
    return (f"SYNTHETIC demo ({what}) from COCO val2014 captions, seed {seed}",)


def _captions(n_images: int) -> list[tuple[str, tuple[str, ...]]]:
    from capeval_core.resources import coco_captions

    by_image: dict[int, list] = {}
    for c in coco_captions("val"):
        by_image.setdefault(c.image_id, []).append(c)
    out = []
    for image_id in sorted(by_image):
        caps = sorted(by_image[image_id], key=lambda c: c.annotation_id)
        if len(caps) >= 5:
            out.append((str(image_id), tuple(" ".join(c.caption.split()) for c in caps)))
        if len(out) >= n_images:
            break
    return out


class _Corruptor:
    def __init__(self, pool: list[str], rng: np.random.Generator) -> None:
        self.pool = pool
        self.rng = rng

    def drop(self, words: list[str], frac: float) -> list[str]:
        keep = [w for w in words if self.rng.random() >= frac]
        return keep or words[:1]

    def replace(self, words: list[str], frac: float) -> list[str]:
        return [
            str(self.pool[self.rng.integers(len(self.pool))])
            if len(w) > 3 and self.rng.random() < frac
            else w
            for w in words
        ]

    def shuffle(self, words: list[str]) -> list[str]:
        return [words[i] for i in self.rng.permutation(len(words))]

    def corrupt(self, caption: str, level: int, other: str) -> str:
        words = caption.split()
        if level == 1:
            words = self.drop(words, LEVEL1_DROPPED)
        elif level == 2:
            words = self.replace(words, REPLACED_SHARE)
        elif level == 3:
            words = self.replace(self.shuffle(words), REPLACED_SHARE)
        elif level == 4:
            return other
        return " ".join(words)


def _setup(n_images: int, seed: int):
    data = _captions(n_images)
    rng = np.random.default_rng(seed)
    pool = sorted({w for _, caps in data for c in caps for w in c.split() if len(w) > 3})
    return data, rng, _Corruptor(pool, rng)


def _other_caption(data, i: int, rng: np.random.Generator) -> str:
    """The first caption of a random other image (image ``i``'s own when it is alone)."""
    if len(data) < 2:
        return data[i][1][0]
    return data[(i + 1 + rng.integers(len(data) - 1)) % len(data)][1][0]


def _synthetic_set(
    kind: str, items: list, columns: tuple[str, ...], name: str, seed: int, notes: tuple[str, ...]
) -> JudgmentSet:
    """A demo JudgmentSet: every generated item kept, format ``demo-<name>``, marked synthetic."""
    return JudgmentSet(
        kind,
        tuple(items),
        columns,
        _label(name, seed),
        n_read=len(items),
        n_kept=len(items),
        format=f"demo-{name}",
        preset="synthetic",
        notes=notes,
        synthetic=True,
    )


def demo_graded(n_images: int = 200, *, systems: int = 5, seed: int = 0) -> JudgmentSet:
    """A graded set: per image one candidate per synthetic system; quality 1-5 from the
    corruption level (5 - level) plus rater noise. System *k* tends to corruption level *k*.

    >>> js = demo_graded(20, seed=1)  # doctest: +SKIP
    >>> js.synthetic, len(js)  # doctest: +SKIP
    (True, 100)
    """
    data, rng, corruptor = _setup(n_images, seed)
    items = []
    for i, (image, caps) in enumerate(data):
        other = _other_caption(data, i, rng)
        for k in range(systems):
            level = int(np.clip(round(k * 4 / max(systems - 1, 1) + rng.normal(0, 0.8)), 0, 4))
            candidate = corruptor.corrupt(caps[0], level, other)
            quality = float(np.clip(round(5 - level + rng.normal(0, 0.6)), 1, 5))
            items.append(
                GradedItem(
                    f"{image}|s{k}",
                    image,
                    candidate,
                    caps[1:],
                    (quality, float(level)),
                    f"system-{k}",
                )
            )
    notes = (
        "SYNTHETIC: scores come from controlled corruption levels, not from people; "
        + "; ".join(f"level {k}: {v}" for k, v in LEVELS.items()),
    )
    return _synthetic_set("graded", items, ("quality", "corruption_level"), "graded", seed, notes)


def _votes(rng: np.random.Generator, p_a: float, n: int = 10) -> tuple[int, int]:
    a = int(rng.binomial(n, p_a))
    return a, n - a


def demo_pairwise(n_images: int = 400, *, seed: int = 0) -> JudgmentSet:
    """A pairwise set in PASCAL-50S style, a quarter of the images per category: HC (two
    human captions), HI (human vs another image's caption), HM (human vs corrupted),
    MM (two corrupted at different levels); 10 simulated votes per pair."""
    data, rng, corruptor = _setup(n_images, seed)
    items = []
    for i, (image, caps) in enumerate(data):
        category = ("HC", "HI", "HM", "MM")[i % 4]
        other = _other_caption(data, i, rng)
        refs = caps[2:]
        if category == "HC":
            a, b, p = caps[0], caps[1], 0.5
        elif category == "HI":
            a, b, p = caps[0], other, 0.95
        elif category == "HM":
            a, b, p = caps[0], corruptor.corrupt(caps[1], int(rng.integers(1, 4)), other), 0.8
        else:
            lo = int(rng.integers(1, 3))
            a, b = corruptor.corrupt(caps[0], lo, other), corruptor.corrupt(caps[1], lo + 1, other)
            p = 0.7
        if rng.random() < 0.5:  # present the better caption on either side
            a, b, p = b, a, 1 - p
        va, vb = _votes(rng, p)
        pref = "a" if va > vb else "b" if vb > va else "tie"
        items.append(
            PairItem(
                f"{image}|{category}",
                image,
                a,
                b,
                refs,
                pref,
                va,
                vb,  # type: ignore[arg-type]
                category,
            )
        )
    return _synthetic_set(
        "pairwise", items, (), "pairwise", seed, ("SYNTHETIC: votes are simulated",)
    )


def demo_distractors(n_images: int = 200, *, seed: int = 0) -> JudgmentSet:
    """Forced choice: per image a correct (held-out human) caption as ``candidate_a`` and
    one distracted caption per type in :data:`DISTRACTORS` as ``candidate_b``
    (``category`` = the type, ``preferred`` = ``"a"``)."""
    data, rng, corruptor = _setup(n_images, seed)
    items = []
    for i, (image, caps) in enumerate(data):
        other = _other_caption(data, i, rng)
        words = caps[0].split()
        distracted = {
            "other-image": other,
            "shuffled": " ".join(corruptor.shuffle(words)),
            "replaced-words": " ".join(corruptor.replace(words, REPLACED_SHARE)),
            "dropped-words": " ".join(corruptor.drop(words, DROPPED_SHARE)),
        }
        for kind in DISTRACTORS:
            items.append(
                PairItem(
                    f"{image}|{kind}",
                    image,
                    caps[0],
                    distracted[kind],
                    caps[1:],
                    "a",
                    None,
                    None,
                    kind,
                )
            )
    return _synthetic_set(
        "pairwise",
        items,
        (),
        "distractors",
        seed,
        ("SYNTHETIC: candidate_a is the correct caption by construction",),
    )
