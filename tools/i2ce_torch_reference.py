"""Save torch's I²CE sentence vectors for the numpy-vs-torch test (an offline step).

`make test` never installs torch (where no CPU wheel is at hand pip pulls a multi-GB CUDA
build), so the test compares the numpy encoder with vectors saved here; `make test-torch`
runs the same comparison live where torch is installed. Run with torch 2.13.0:

    python tools/i2ce_torch_reference.py tests/golden/i2ce-torch-reference.npz

Cases: the shipped weights on the first 100 COCO val2014 captions (final and mean pooling),
and a freshly initialised encoder (``torch.manual_seed(1)``, hidden size 32, the shipped
embeddings), whose GRU weights are saved beside its vectors.
"""

from __future__ import annotations

import argparse
import hashlib
from pathlib import Path

import numpy as np

N_CAPTIONS = 100
RANDOM_SEED = 1
RANDOM_HIDDEN = 32


def main() -> None:
    import torch

    from capeval_core.i2ce.model import default_weights_path
    from capeval_core.i2ce.train import Encoder, reference_vectors
    from capeval_core.resources import coco_captions
    from capeval_core.tokenize import get_tokenizer

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("output", type=Path)
    out = parser.parse_args().output

    weights = default_weights_path()
    with np.load(weights, allow_pickle=False) as npz:
        shipped = {k: npz[k] for k in npz.files}
    captions = [c.caption for c in coco_captions("val")[:N_CAPTIONS]]
    tokens = get_tokenizer("ptb").tokenize_batch(captions)
    saved: dict[str, np.ndarray] = {
        "shipped_final": reference_vectors(shipped, tokens, "final"),
        "shipped_mean": reference_vectors(shipped, tokens, "mean"),
    }
    torch.manual_seed(RANDOM_SEED)
    random_arrays = Encoder(shipped["embeddings"], RANDOM_HIDDEN).export()
    random_arrays["vocab"] = shipped["vocab"]
    saved["random_final"] = reference_vectors(random_arrays, tokens, "final")
    for name, array in random_arrays.items():
        if name not in ("embeddings", "vocab"):
            saved[f"random_{name}"] = array
    saved["torch_version"] = np.array(torch.__version__)
    saved["weights_sha256"] = np.array(hashlib.sha256(weights.read_bytes()).hexdigest())
    np.savez_compressed(out, **saved)
    print(f"wrote {out} (torch {torch.__version__})")


if __name__ == "__main__":
    main()
