"""pascal50S.mat as the CIDEr authors distribute it: each image's ``refs`` element holds
``image`` and ``sent`` (a 1x50 cell of sentences)."""

from __future__ import annotations

import numpy as np
from scipy.io import savemat

from capeval_core.judgments.pascal50s import load_references


def test_the_distributed_field_name_sent_is_read(tmp_path):
    refs = np.zeros((1, 2), dtype=[("image", "O"), ("sent", "O")])
    for i, name in enumerate(("2008_006488.jpg", "2008_000123.jpg")):
        sentences = np.empty((1, 50), dtype=object)
        sentences[0, :] = [f"ref {k} of {name}" for k in range(50)]
        refs[0, i] = (name, sentences)
    savemat(tmp_path / "pascal50S.mat", {"refs": refs})
    out = load_references(tmp_path / "pascal50S.mat")
    assert list(out) == ["2008_006488.jpg", "2008_000123.jpg"]
    assert out["2008_000123.jpg"] == tuple(f"ref {k} of 2008_000123.jpg" for k in range(50))
