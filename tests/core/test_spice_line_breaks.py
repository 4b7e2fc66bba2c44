"""SPICE on raw captions with line breaks and other separators (U+0085 NEL among them), and on
raw captions that share their tokens but not their text: each image is scored on its own
captions, whatever else the set holds, as spice-1.0.jar scores it."""

from __future__ import annotations

import types

import pytest

from capeval_core.metrics.spice import COUNTS_STATISTIC
from capeval_core.pycocoevalcap.spice.spice import Spice
from capeval_core.scoring import score_set

DOGS = ("a dog runs on the grass", "a brown dog running in a field", "the dog is playing outside")
CATS = (
    "a cat\x85sits on a red mat",
    "a black cat sitting on a mat",
    "the cat rests\u2028on the rug",
)

# spice-1.0.jar with Stanford CoreNLP 3.6.0, as pycocoevalcap 1.2 runs it (-subset -detailed,
# here -threads 1), every image below in one input file: each image's All (tp, fp, fn).
# CoreNLP reads U+0085 as an ellipsis ("...", a word of its own that ends no sentence); the
# other separators are spaces to it.
JAR_COUNTS: list[tuple[str, tuple[str, ...], tuple[int, int, int]]] = [
    ("a dog running on grass", DOGS, (2, 0, 4)),
    ("a dog runs\x85on the grass", DOGS, (1, 3, 5)),
    ("a dog runs\x1con the grass", DOGS, (3, 0, 3)),
    ("a dog runs\x1don the grass", DOGS, (3, 0, 3)),
    ("a dog runs\x1eon the grass", DOGS, (3, 0, 3)),
    ("a dog runs\x0bon the grass", DOGS, (3, 0, 3)),
    ("a dog runs\x0con the grass", DOGS, (3, 0, 3)),
    ("a dog runs\u2028on the grass", DOGS, (3, 0, 3)),
    ("a dog runs\u2029on the grass", DOGS, (3, 0, 3)),
    ("a dog runs\ron the grass", DOGS, (3, 0, 3)),
    ("a dog runs\r\non the grass", DOGS, (3, 0, 3)),
    ("a dog runs\non the grass", DOGS, (3, 0, 3)),
    ("a dog runs on the grass\x85", DOGS, (3, 0, 3)),
    ("\x85a dog runs on the grass", DOGS, (1, 2, 5)),
    ("a dog runs \x85 on the grass", DOGS, (1, 3, 5)),
    ("a brown dog\x85is running in a field", DOGS, (3, 0, 3)),
    ("a dog\x85runs on\x85the grass", DOGS, (2, 0, 4)),
    ("a dog\x85runs on\u2028the grass", DOGS, (2, 2, 4)),
    ("a brown\x0bdog\x85is running\x1cin a\x0cfield", DOGS, (3, 0, 3)),
    ("a dog\x1druns\x1eon\u2029the\r\ngrass\x85outside", DOGS, (3, 0, 3)),
    ("a dog is playing\x85outside\ra cat on the grass", DOGS, (2, 3, 4)),
    ("a dog\u2028runs on the grass", DOGS, (3, 0, 3)),
    ("the dog\u2028is playing\x85outside", DOGS, (2, 1, 4)),
    ("a dog runs.\x85on the grass", DOGS, (3, 0, 3)),
    ("a cat sits on a mat", CATS, (2, 1, 6)),
    ("a black cat\x85on a red rug", CATS, (3, 2, 5)),
]


def all_counts(scores) -> list[tuple[int, int, int]]:
    return [tuple(int(s["All"][k]) for k in ("tp", "fp", "fn")) for s in scores]


def test_a_nel_caption_scores_as_the_jar_and_leaves_the_next_image_alone():
    # The NEL caption's words, split on whitespace, are those of the first reference; its
    # parse used to stand in for that reference, in its own image and in every later one.
    gts = {1: list(DOGS), 2: list(DOGS)}
    res = {1: ["a dog runs\x85on the grass"], 2: ["a dog running on grass"]}
    score, scores = Spice().compute_score(gts, res)
    # spice-1.0.jar with CoreNLP 3.6.0: corpus 0.35, images F 0.2 and 0.5
    assert all_counts(scores) == [(1, 3, 5), (2, 0, 4)]
    assert [s["All"]["f"] for s in scores] == pytest.approx([0.2, 0.5])
    assert float(score) == pytest.approx(0.35)
    swapped = Spice().compute_score(gts, {1: res[2], 2: res[1]})[1]
    assert all_counts(swapped) == [(2, 0, 4), (1, 3, 5)]


def test_every_separator_in_one_set_as_the_jar():
    gts = {i: list(refs) for i, (_, refs, _) in enumerate(JAR_COUNTS)}
    res = {i: [cand] for i, (cand, _, _) in enumerate(JAR_COUNTS)}
    _, scores = Spice().compute_score(gts, res)
    assert all_counts(scores) == [counts for _, _, counts in JAR_COUNTS]


@pytest.mark.parametrize("k", [1, 12, 13, 17])
def test_an_image_alone_scores_as_in_the_set(k):
    cand, refs, counts = JAR_COUNTS[k]
    assert all_counts(Spice().compute_score({7: list(refs)}, {7: [cand]})[1]) == [counts]


def test_raw_captions_sharing_tokens_with_a_reference_keep_their_own_parse():
    # The PTB tokenizer lower-cases, so these candidates share tokens with a reference; with
    # parse_input="raw" each is parsed as written. spice-1.0.jar with CoreNLP 3.6.0 on the
    # same four images in one file: these (tp, fp, fn).
    cands = [
        "A Dog Runs On The Grass",
        "A DOG RUNS ON THE GRASS",
        "The Dog Is Playing Outside",
        "a dog running on grass",
    ]
    scored = score_set(
        cands,
        [list(DOGS)] * len(cands),
        ["spice"],
        options={"spice": {"parse_input": "raw"}},
        workers=0,
    )
    rows = scored.statistics["spice"][COUNTS_STATISTIC].tolist()
    assert [tuple(int(x) for x in row[:3]) for row in rows] == [
        (1, 4, 5),
        (1, 3, 5),
        (2, 0, 4),
        (2, 0, 4),
    ]


@pytest.mark.slow
def test_the_jar_still_gives_the_reference_counts():
    from tools import spice_oracle
    from tools.spice_oracle.make_long_golden import run_jar

    reason = spice_oracle.available()
    if reason is not None:
        pytest.skip(reason)
    items = [
        types.SimpleNamespace(image_id=i, candidate=cand, references=refs)
        for i, (cand, refs, _) in enumerate(JAR_COUNTS)
    ]
    got = {r["image_id"]: r["scores"]["All"] for r in run_jar(items, "8G")}
    assert [(got[i]["tp"], got[i]["fp"], got[i]["fn"]) for i in range(len(JAR_COUNTS))] == [
        counts for _, _, counts in JAR_COUNTS
    ]
