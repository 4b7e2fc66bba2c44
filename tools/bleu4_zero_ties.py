"""How much of BLEU-4's pairwise accuracy rests on pairs where neither caption has a 4-gram
in common with the references (the clipscore-table7 note in capeval_core.judgments.protocols).

pycocoevalcap's per-caption BLEU-4 (capeval's) scores such a caption at about 1e-4 times its
lower-order precisions, so the pair is still ranked; a sentence BLEU without that smoothing
scores both 0, a metric tie. Per category, this prints the share of labelled pairs (over the
preset's draws of references) where both candidates have no matching 4-gram, BLEU-4's
accuracy as capeval computes it, and its accuracy when a caption without a matching 4-gram
scores 0 (what an unsmoothed BLEU-4 gives). The draws are those ``capeval correlate`` makes.

    python tools/bleu4_zero_ties.py --judgments DIR --format pascal50s --preset clipscore-table7
"""

from __future__ import annotations

import argparse
import sys

import numpy as np


def report(jset, *, tokenizer: str = "ptb", seed: int = 0) -> dict[str, dict[str, float]]:
    """Category -> {pairs, both_zero, accuracy, accuracy_unsmoothed} under the set's preset."""
    from capeval_core.judgments.protocols import protocol_for
    from capeval_core.metrics import make_batch, metric_class
    from capeval_core.stats import pairwise_accuracy
    from capeval_core.stats.pairwise import sample_references

    protocol = protocol_for(jset)
    n_references, draws = protocol.sampling
    items = jset.items
    if max(len(it.references) for it in items) <= n_references:
        draws = 1  # as score_judgments: nothing to sample
    bleu = metric_class("bleu")(tokenizer=tokenizer)
    cands = [it.candidate_a for it in items] + [it.candidate_b for it in items]
    values, matched = [], []
    for refs in sample_references([it.references for it in items], n_references, draws, seed):
        result = bleu.score_batch(make_batch(cands, refs + refs, tokenizer))
        values.append([s.scores["bleu_4"] for s in result.segments])
        matched.append([s.details.correct[3] > 0 for s in result.segments])
    values_arr, matched_arr = np.array(values), np.array(matched)
    n = len(items)
    unsmoothed = np.where(matched_arr, values_arr, 0.0)
    prefs, cats = jset.preferences(), jset.categories()
    knobs = {"metric_tie": protocol.metric_tie, "human_tie": protocol.human_tie, "seed": seed}
    as_is = pairwise_accuracy(values_arr[:, :n], values_arr[:, n:], prefs, cats, **knobs)
    zeroed = pairwise_accuracy(unsmoothed[:, :n], unsmoothed[:, n:], prefs, cats, **knobs)
    both_zero = (~matched_arr[:, :n] & ~matched_arr[:, n:]).mean(axis=0)
    labelled = np.isfinite(prefs)
    if protocol.human_tie == "drop":
        labelled &= prefs != 0
    names = np.array([c if c is not None else "none" for c in cats], dtype=object)
    out = {}
    for cat in [*as_is.by_category, "overall"]:
        mask = labelled & ((names == cat) if cat != "overall" else True)
        out[cat] = {
            "pairs": int(mask.sum()),
            "both_zero": float(both_zero[mask].mean()) if mask.any() else float("nan"),
            "accuracy": as_is.as_dict()[cat],
            "accuracy_unsmoothed": zeroed.as_dict()[cat],
        }
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--judgments", required=True, help="the dataset folder or file")
    parser.add_argument("--format", required=True, choices=["pascal50s", "abstract50s"])
    parser.add_argument("--preset", help="protocol preset (default: as `capeval correlate`)")
    parser.add_argument("--tokenizer", default="ptb", choices=["ptb", "whitespace"])
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    from capeval_core.errors import CapevalError
    from capeval_core.judgments import load_judgments

    try:
        jset = load_judgments(args.judgments, args.format, args.preset)
        rows = report(jset, tokenizer=args.tokenizer, seed=args.seed)
    except CapevalError as exc:
        print(f"bleu4_zero_ties: error: {exc}", file=sys.stderr)
        return 2
    print(f"{args.format}, preset {jset.preset}: {jset.describe()}")
    print(f"{'category':<9} {'pairs':>6} {'no 4-gram':>10} {'BLEU-4':>8} {'unsmoothed':>11}")
    for cat, row in rows.items():
        print(
            f"{cat:<9} {row['pairs']:>6} {100 * row['both_zero']:>9.1f}% "
            f"{100 * row['accuracy']:>8.1f} {100 * row['accuracy_unsmoothed']:>11.1f}"
        )
    print(
        "no 4-gram: share of pairs where neither candidate has a 4-gram in common with its "
        "sampled references; unsmoothed: BLEU-4 accuracy when such a caption scores 0"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
