"""I²CE sanity check and speed: same-image vs different-image caption pairs on COCO val.

    python -m bench.i2ce [--pairs 5000]

For the first ``pairs`` val2014 images (ascending id), the candidate is the image's first
caption; the positive pair matches it with the image's second caption, the negative pair with
the second caption of another image (a seeded derangement). AUC = P(positive pair scores
higher than negative pair), ties counting one half (Mann-Whitney U / (n_pos · n_neg)). The
card reports these numbers for i2ce and mean side by side; tests/core/test_i2ce.py checks them.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from scipy.stats import rankdata

from capeval_core.metrics import get_metric
from capeval_core.resources import coco_caption_sets


def sanity_pairs(n: int, seed: int = 0) -> tuple[list[str], list[str], list[str]]:
    """Candidates, same-image references and different-image references."""
    sets = coco_caption_sets("val", n)
    cands = [s.candidate for s in sets]
    same = [s.references[0] for s in sets]
    perm = np.random.default_rng(seed).permutation(len(sets))
    other = [""] * len(sets)
    for j, i in enumerate(perm):  # each image takes the next one's reference in the cycle
        other[i] = same[perm[(j + 1) % len(perm)]]
    return cands, same, other


def auc(positive: np.ndarray, negative: np.ndarray) -> float:
    """Mann-Whitney AUC: P(positive > negative) + ½ P(tie)."""
    ranks = rankdata(np.concatenate([positive, negative]))
    n_pos, n_neg = len(positive), len(negative)
    return float((ranks[:n_pos].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def sanity_auc(key: str, n: int = 5000, seed: int = 0, **options) -> float:
    cands, same, other = sanity_pairs(n, seed)
    metric = get_metric(key, **options)
    pos = metric.score(cands, [[r] for r in same])
    neg = metric.score(cands, [[r] for r in other])
    k = metric.primary_key()
    return auc(
        np.array([s.scores[k] for s in pos.segments]),
        np.array([s.scores[k] for s in neg.segments]),
    )


def main(pairs: int = 5000) -> None:
    for label, key, options in (
        ("i2ce", "i2ce", {}),
        ("i2ce pooling=final", "i2ce", {"pooling": "final"}),
        ("mean", "mean", {}),
    ):
        t = time.perf_counter()
        value = sanity_auc(key, pairs, **options)
        wall = time.perf_counter() - t
        print(f"{label:<18} AUC {value:.4f}  ({2 * pairs} pairs scored in {wall:.1f} s)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(prog="python -m bench.i2ce")
    parser.add_argument("--pairs", type=int, default=5000)
    main(parser.parse_args().pairs)
