"""Compile the package's numba kernels once, before the test workers start.

numba keeps compiled kernels beside the sources, so a fresh clone has none, and every process
that needs a kernel before the first has written it compiles it again: METEOR's take 12 s of
CPU, and a test run starts several processes at once (its workers, the app servers, their
scoring workers). ``tests/conftest.py`` runs this once, on the process that starts the workers,
when METEOR's kernels are not compiled yet.
"""

from __future__ import annotations

import warnings

import numpy as np


def main() -> None:
    from capeval_core import score
    from capeval_core.metrics.bleu import bleu_values
    from capeval_core.metrics.cider import cider_d_values
    from capeval_core.resources import coco_caption_sets
    from capeval_core.stats.kendall_counts import levels, resampled_kendall, sorted_groups

    sets = coco_caption_sets("val", 100)  # more than METEOR's small batch: its compiled path
    candidates = [s.candidate for s in sets]
    references = [list(s.references) for s in sets]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        score("meteor", candidates, references)
        # a caption no shipped parse holds: the chart parser's kernels
        score("spice", ["a zebra eats a purple sandwich on a small boat"], [["a zebra"]])
    tokens = [tuple(c.split()) for c in candidates]
    refs = [[tuple(r.split()) for r in rs] for rs in references]
    bleu_values(tokens, refs)
    cider_d_values(tokens, refs)
    x, y = np.arange(6.0), np.array([1.0, 0.0, 2.0, 3.0, 5.0, 4.0])
    resampled_kendall(np.ones((2, 6)), sorted_groups(x), levels(y))


if __name__ == "__main__":
    main()
