"""Approximate randomization's swaps are sacrebleu's draw for any number of images."""

from __future__ import annotations

import numpy as np
import pytest

from capeval_core.stats.resampling import randomization_swaps


@pytest.mark.parametrize(("n", "n_trials"), [(5, 300), (333, 6100), (4097, 1000), (70_001, 40)])
def test_swaps_equal_one_draw_of_them_all(n, n_trials):
    """Chunks of about 2e6 / n rows, drawn by separate calls, matched the one draw only in
    the first chunk above about 200 images: numpy drops a call's unused random bits."""
    chunks = list(randomization_swaps(n, n_trials, 12345))
    # sacrebleu's paired approximate randomization draws them at once (numpy default_rng)
    whole = np.random.default_rng(12345).integers(2, size=(n_trials, n), dtype=bool)
    assert np.array_equal(np.concatenate(chunks), whole)
    assert max(len(c) for c in chunks) <= max(1, 2_000_000 // n)  # memory stays bounded
