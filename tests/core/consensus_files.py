"""Small .mat and JSON files in the layouts of the 50S datasets as distributed, for tests.

The consensus files hold one struct array ``triplets`` with fields A, B, C and rating, as
MATLAB saves it (1xN or Nx1; A/B/C as 1x1 cells holding a char array, or bare char arrays).
"""

from __future__ import annotations

import json

import numpy as np
from scipy.io import savemat


def write_triplets(path, rows, *, shape="row", strings="cell"):
    """``rows``: (A, B, C, rating). ``strings="cell"`` stores each sentence as a 1x1 cell
    holding a char array (the distributed files), ``"char"`` as a bare char array."""
    n = len(rows)
    dims = (1, n) if shape == "row" else (n, 1)
    t = np.zeros(dims, dtype=[("A", "O"), ("B", "O"), ("C", "O"), ("rating", "O")])
    flat = t.reshape(-1)
    for i, (a, b, c, rating) in enumerate(rows):
        texts = []
        for s in (a, b, c):
            if strings == "cell":
                cell = np.empty((1, 1), dtype=object)
                cell[0, 0] = s
                texts.append(cell)
            else:
                texts.append(s)
        flat[i] = (*texts, np.array([[float(rating)]]))
    savemat(path, {"triplets": t})
    return path


def write_abstract(folder, n_pairs=400, per_pair=3, *, lists=True, refs=True, rows=None):
    """Pair i (scene i // 2): B = "b i", C = "c i"; triplet ratings give B the majority for
    even i and C for odd i (two of three triplets)."""
    if lists:
        (folder / "abstract_candsB.json").write_text(
            json.dumps([{"image_id": i // 2, "caption": f"b {i}"} for i in range(n_pairs)])
        )
        (folder / "abstract_candsC.json").write_text(
            json.dumps([{"image_id": i // 2, "caption": f"c {i}"} for i in range(n_pairs)])
        )
    if refs:
        (folder / "abstract48S.json").write_text(
            json.dumps(
                [
                    {"image_id": s, "caption": f"scene {s} ref {k}"}
                    for s in range((n_pairs + 1) // 2)
                    for k in range(48)
                ]
            )
        )
    if rows is None:
        rows = []
        for i in range(n_pairs):
            winner = 1 if i % 2 == 0 else -1
            for k in range(per_pair):
                rating = winner if k < per_pair - 1 else -winner
                rows.append((f"scene {i // 2} ref {k}", f"b {i}", f"c {i}", rating))
    write_triplets(folder / "consensus_abstract.mat", rows)
    return folder


def write_pascal_pairs(folder, rows):
    """``rows``: (image, sent1, sent2, category code, votes)."""
    inputs = np.zeros((1, len(rows)), dtype=[("name", "O"), ("sent1", "O"), ("sent2", "O")])
    result = np.zeros((1, len(rows)), dtype=[("result", "O")])
    for i, (name, s1, s2, _, votes) in enumerate(rows):
        inputs[0, i] = (name, s1, s2)
        result[0, i] = (np.array([list(votes)], dtype=float),)
    savemat(
        folder / "pair_pascal.mat",
        {
            "new_input": inputs,
            "result": result,
            "category": np.array([[r[3] for r in rows]]),
        },
    )


PASCAL_ROWS = [
    ("p1.jpg", "a man", "a woman", 1, (1, 1, -1)),
    ("p1.jpg", "a dog", "a cat", 4, (-1, -1, 1)),
    ("p2.jpg", "a tree", "a road", 3, (1, -1)),
]


def write_pascal_refs(folder):
    refs = np.zeros((1, 2), dtype=[("image", "O"), ("sentences", "O")])
    for i, name in enumerate(("p1.jpg", "p2.jpg")):
        refs[0, i] = (
            name,
            np.array([[f"file ref {k} of {name}"] for k in range(50)], dtype=object),
        )
    savemat(folder / "pascal50S.mat", {"refs": refs})
