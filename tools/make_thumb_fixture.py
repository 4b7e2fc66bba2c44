"""Write the synthetic THumB 1.0 test fixture (``tests/golden/thumb/``).

    python tools/make_thumb_fixture.py

THumB 1.0's files come from a repository that states no licence, so none of their content is
in capeval. The fixture has their exact format (the keys, their order and types, JSON lines
for both files, ``human_score`` = (P + R) / 2 + Fl + Con + Inc rounded to one decimal) over
ten COCO val2014 images, and what THumB's loader must handle:

- the ``Human`` system's caption is one of the image's first five COCO captions (cleaned as
  THumB writes captions: trimmed, a capital first letter, a final period), so the loader must
  find it among them and leave it out of the references;
- image 39081 has that caption twice among its COCO captions (with and without a period);
- image 475330 has six COCO captions, of which the Karpathy split keeps the first five;
- the references file lists four references per image (the five without the Human caption)
  but, like THumB's own file, which predates the re-alignment of the Human rows, holds the
  Human caption of :data:`LEAKED` among them.

Everything else is made up here: the four machine systems' captions (written for this
fixture from the images' COCO captions), the scores (``random.Random(SEED)``) and ``set_id``
(THumB's index of the image in the Karpathy test split; the loader does not read it). COCO's
captions are read from the installed pycocoevalcap (COCO annotations: CC BY 4.0).
"""

from __future__ import annotations

import json
import random
from pathlib import Path

SEED = 2022
OUT = Path(__file__).resolve().parents[1] / "tests" / "golden" / "thumb"
SYSTEMS = ("Up-Down", "Unified-VLP", "VinVL-base", "VinVL-large")
#: image id -> the four machine systems' captions (in SYSTEMS order) and which of the first
#: five COCO captions is the Human system's
IMAGES: dict[int, tuple[tuple[str, str, str, str], int]] = {
    500699: (
        (
            "A plate of food with eggs and pancakes.",
            "Two plates of breakfast food on a table.",
            "Two plates of food on a table with a glass of juice.",
            "A breakfast of pancakes, eggs and potatoes on two plates.",
        ),
        2,
    ),
    272008: (
        (
            "A sheep standing in a barn.",
            "A sheep standing under a wooden structure.",
            "A white sheep standing next to a wooden box.",
            "A sheep rubbing its back under a wooden feeder.",
        ),
        0,
    ),
    416240: (
        (
            "Two giraffes standing next to each other.",
            "A giraffe standing next to a baby giraffe.",
            "A mother giraffe and a baby giraffe in an enclosure.",
            "Two giraffes standing in front of rocks.",
        ),
        4,
    ),
    514147: (
        (
            "A baseball player swinging a bat at a ball.",
            "A batter, catcher and umpire during a baseball game.",
            "A baseball player holding a bat on a field.",
            "A batter swinging at a pitch in a baseball game.",
        ),
        3,
    ),
    291983: (
        (
            "A tall clock tower with a sky background.",
            "A large clock tower with two clocks on it.",
            "A white clock tower under a blue sky.",
            "A clock tower with clocks on two sides.",
        ),
        1,
    ),
    552074: (
        (
            "A bathroom with a toilet and a bath tub.",
            "A dirty bathroom with a blue toilet seat.",
            "A toilet with a blue seat in a bathroom.",
            "A bathroom with a toilet, a tub and a trash can.",
        ),
        3,
    ),
    55840: (
        (
            "A black cat sitting next to a bottle of wine.",
            "A painting of a black cat with green eyes.",
            "A cat sitting on a table next to a bottle.",
            "A black cat with glowing eyes next to a wine bottle.",
        ),
        4,
    ),
    488287: (
        (
            "A baby laying on a bed.",
            "A baby lying on a blanket.",
            "A baby in pink lying on a comforter.",
            "A little baby laying on its back on a blanket.",
        ),
        1,
    ),
    475330: (
        (
            "Two teddy bears sitting on a red blanket.",
            "Two stuffed animals in costumes on a red sheet.",
            "A couple of teddy bears dressed in costumes.",
            "Two teddy bears dressed as a turkey and a pumpkin.",
        ),
        1,
    ),
    39081: (
        (
            "A man walking a dog on the beach.",
            "A person walking a dog on a beach.",
            "A person and a dog walking along the shore.",
            "A man walking his dog along the beach.",
        ),
        3,  # "A person walking their dog on the beach." (its first caption is the same text)
    ),
}
#: the image whose references file lists its Human caption (as THumB's own file does for 39)
LEAKED = 416240
#: fluency penalties, as THumB's scale has them (most captions get none)
FLUENCY = (-0.0,) * 12 + (-0.1, -0.2, -0.5)


def _clean(caption: str) -> str:
    """A COCO caption as THumB writes its Human captions: trimmed, capitalised, a period."""
    text = " ".join(caption.split())
    text = text[:1].upper() + text[1:]
    return text if text.endswith((".", "!", "?")) else text + "."


def _scores(rng: random.Random, human: bool) -> dict[str, float]:
    p = float(rng.choice((4, 5, 5) if human else (2, 3, 4, 4, 5, 5)))
    r = float(rng.choice((4, 5) if human else (2, 3, 3, 4, 4, 5)))
    fl = rng.choice(FLUENCY)
    con = -0.5 if rng.random() < 0.05 else -0.0
    inc = -0.0
    return {
        "P": p,
        "R": r,
        "Fl": fl,
        "Inc": inc,
        "Con": con,
        "human_score": round((p + r) / 2 + fl + con + inc, 1),
    }


def main() -> None:
    from capeval_core.judgments.thumb import coco_val_by_file

    coco = coco_val_by_file()
    rng = random.Random(SEED)
    set_ids = sorted(rng.sample(range(5000), len(IMAGES)))
    judgments, references = [], []
    for set_id, (image_id, (machine, human_index)) in zip(set_ids, IMAGES.items(), strict=True):
        image = f"COCO_val2014_{image_id:012d}.jpg"
        first_five = [c.strip() for c in coco[image][:5]]
        human = _clean(first_five[human_index])
        others = [c for k, c in enumerate(first_five) if k != human_index]
        for system, hyp in zip((*SYSTEMS, "Human"), (*machine, human), strict=True):
            row = {"SYS": system, "seg_id": str(image_id), "set_id": set_id, "hyp": hyp}
            row["image"] = image
            row.update(_scores(rng, system == "Human"))
            judgments.append(row)
        refs = [first_five[human_index], *others[:3]] if image_id == LEAKED else others
        references.append({"seg_id": str(image_id), "set_id": set_id, "refs": refs})
    OUT.mkdir(parents=True, exist_ok=True)
    for name, rows in (
        ("mscoco_THumB-1.0.jsonl", judgments),
        ("mscoco_references.json", references),
    ):
        (OUT / name).write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    print(f"{OUT}: {len(judgments)} judgments of {len(references)} images")


if __name__ == "__main__":
    main()
