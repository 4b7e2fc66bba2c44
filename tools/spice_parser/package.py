"""Copy a trained pipeline and tree scorer into the package as the ``stanford-emulation`` parser.

    python tools/spice_parser/package.py OUTPUT/model-best capeval_core/data/spice_parser \
        --graph GRAPH_DIR [--accuracy ACCURACY.json]

Writes the pipeline (spaCy's own format) with its ``meta.json`` naming the training recipe
(tools/spice_parser/README.md) and, given ``--accuracy``, the held-out accuracy measured by
``evaluate.py`` on the packaged model. The transition parser's own layers are left out: its
encoder, which the tree scorer reads, becomes a ``tok2vec`` component (``parser_encoder``);
``GRAPH_DIR`` (``train_graph.py``'s weights, labels and tags) goes to ``graph/``. The model
may also be an earlier package, whose tagger and encoders are then kept as they are.
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
    parser.add_argument("--graph", type=Path, required=True)
    parser.add_argument("--accuracy", type=Path)
    args = parser.parse_args()

    from capeval_core.spice.spacy_runtime import import_spacy

    nlp = import_spacy().load(args.model)
    if "parser_encoder" not in nlp.pipe_names:  # as spaCy trained it, not an earlier package
        nlp = _encoder_only(nlp)
    nlp.meta.update(
        {
            "name": "spice_stanford_emulation",
            "version": "6.1.0",
            "description": (
                "Tagger and encoders trained on SPICE-1.0's own CoreNLP 3.6.0 parses (PTB "
                "tags, basic UD trees) of COCO train2014 captions, with a BiLSTM + biaffine "
                "tree scorer in graph/; recipe in capeval's tools/spice_parser/README.md"
            ),
            "author": "capeval",
            "license": "MIT",
        }
    )
    if args.accuracy:
        nlp.meta["heldout_accuracy"] = json.loads(args.accuracy.read_text())
    nlp.meta.pop("performance", None)  # spaCy's own dev scores: evaluate.py's are the ones
    if args.target.exists():
        shutil.rmtree(args.target)
    nlp.to_disk(args.target)
    _forget_training_paths(args.target / "config.cfg")
    (args.target / "graph").mkdir()
    for name in ("weights.npz", "labels.json", "tags.json"):
        shutil.copyfile(args.graph / name, args.target / "graph" / name)
    size = sum(p.stat().st_size for p in args.target.rglob("*") if p.is_file())
    print(f"{args.target}: {size / 1e6:.1f} MB")


def _encoder_only(nlp):
    """The same tagger and encoders, without the transition parser's own layers (the tree
    scorer replaced them): its encoder becomes a ``tok2vec`` component of its own, last in the
    pipeline, so no listener binds to it."""
    from spacy.util import load_model_from_config

    config = nlp.config.copy()
    encoder = config["components"]["parser"]["model"]["tok2vec"]
    del config["components"]["parser"]
    config["components"]["parser_encoder"] = {"factory": "tok2vec", "model": encoder}
    config["nlp"]["pipeline"] = ["tok2vec", "tagger", "parser_encoder"]
    config["training"]["frozen_components"] = []
    config["training"]["annotating_components"] = []
    config["training"]["score_weights"] = {"tag_acc": 1.0}
    new = load_model_from_config(config, vocab=nlp.vocab, auto_fill=True, validate=True)
    for name in ("tok2vec", "tagger"):
        new.get_pipe(name).from_bytes(nlp.get_pipe(name).to_bytes())
    trained = nlp.get_pipe("parser").model.get_ref("tok2vec").layers[0]
    new.get_pipe("parser_encoder").model.from_bytes(trained.to_bytes())
    new.meta.update(nlp.meta)
    return new


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
