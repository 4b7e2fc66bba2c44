"""Copy a trained pipeline into the package as the ``stanford-emulation`` parser.

    python tools/spice_parser/package.py OUTPUT/model-best capeval_core/data/spice_parser \
        --accuracy ACCURACY.json

Writes the pipeline (spaCy's own format) with its ``meta.json`` naming the training recipe
(tools/spice_parser/README.md) and the held-out accuracy measured by ``evaluate.py``.
"""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("model", type=Path)
    parser.add_argument("target", type=Path)
    parser.add_argument("--accuracy", type=Path, required=True)
    args = parser.parse_args()

    from capeval_core.spice.spacy_runtime import import_spacy

    nlp = import_spacy().load(args.model)
    nlp.meta.update(
        {
            "name": "spice_stanford_emulation",
            "version": "5.0.0",
            "description": (
                "Tagger and dependency parser trained on SPICE-1.0's own CoreNLP 3.6.0 parses "
                "(PTB tags, basic UD trees) of COCO train2014 captions; recipe in capeval's "
                "tools/spice_parser/README.md"
            ),
            "author": "capeval",
            "license": "MIT",
            "heldout_accuracy": json.loads(args.accuracy.read_text()),
        }
    )
    nlp.meta.pop("performance", None)  # spaCy's own dev scores: evaluate.py's are the ones
    if args.target.exists():
        shutil.rmtree(args.target)
    nlp.to_disk(args.target)
    _forget_training_paths(args.target / "config.cfg")
    size = sum(p.stat().st_size for p in args.target.rglob("*") if p.is_file())
    print(f"{args.target}: {size / 1e6:.1f} MB")


def _forget_training_paths(path: Path) -> None:
    """The shipped config names no training files or resumed model (they stay on the
    machine that trained)."""
    from thinc.api import Config

    config = Config().from_disk(path, interpolate=False)
    for key in ("train", "dev", "base"):
        if key in config["paths"]:
            config["paths"][key] = None
    config.to_disk(path)


if __name__ == "__main__":
    main()
