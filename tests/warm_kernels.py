"""Compile the package's numba kernels once, before the test workers start.

numba keeps compiled kernels beside the sources, so a fresh clone has none, and every process
that needs a kernel before the first has written it compiles it again: METEOR's take 12 s of
CPU, SPICE's chart parser's and the paraphrase table parser's 7 s each, and a test run starts
several processes at once (its workers, the app servers, their scoring workers).
``tests/conftest.py`` runs this once, on the process that starts the workers, when METEOR's
kernels are not compiled yet: METEOR's kernels in one process and the others in a second, side
by side.
"""

from __future__ import annotations

import gzip
import sys
import tempfile
import warnings
from pathlib import Path

import numpy as np

#: the parts that compile side by side (``python -m tests.warm_kernels PART``)
PARTS = ("meteor", "others")


def _sets():
    from capeval_core.resources import coco_caption_sets

    sets = coco_caption_sets("val", 100)  # more than METEOR's small batch: its compiled path
    return [s.candidate for s in sets], [list(s.references) for s in sets]


def meteor() -> None:
    from capeval_core import meteor_kernel, score

    # the shipped index's kernels, which a run compiles only where the user cache has no
    # index yet
    meteor_kernel.load_expansion()
    candidates, references = _sets()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        score("meteor", candidates, references)


def others() -> None:
    from capeval_core.meteor_resources import _index_arrays
    from capeval_core.metrics.bleu import bleu_values
    from capeval_core.metrics.cider import cider_d_values
    from capeval_core.spice.pcfg.parser import PCFGParser
    from capeval_core.stats.kendall_counts import levels, resampled_kendall, sorted_groups
    from tests.core.test_meteor import ODD_TABLE

    # the chart parser's kernels (parses, past the caches of parses a SPICE run reads): the
    # sparse chart's (a caption's length) and the dense chart's (six words or fewer; also
    # where the user cache has the sparse chart's state ranking already)
    parser = PCFGParser()
    parser.parse(["a", "zebra", "eats", "a", "purple", "sandwich", "on", "a", "small", "boat"])
    parser.parse(["a", "zebra", "eats", "a", "sandwich"])
    candidates, references = _sets()
    tokens = [tuple(c.split()) for c in candidates]
    refs = [[tuple(r.split()) for r in rs] for rs in references]
    bleu_values(tokens, refs)
    cider_d_values(tokens, refs)
    x, y = np.arange(6.0), np.array([1.0, 0.0, 2.0, 3.0, 5.0, 4.0])
    resampled_kendall(np.ones((2, 6)), sorted_groups(x), levels(y))
    # last, when METEOR's part has written the kernels the two share: the paraphrase table
    # parser's, which the tests of odd tables use (7 s of CPU)
    with tempfile.TemporaryDirectory() as tmp:
        table = Path(tmp) / "paraphrase-en.gz"
        table.write_bytes(gzip.compress(ODD_TABLE))
        _index_arrays(table)


if __name__ == "__main__":
    {"meteor": meteor, "others": others}[sys.argv[1]]()
