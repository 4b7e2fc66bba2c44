"""Widen the parser's hidden layer of a trained pipeline, keeping what it computes.

    python tools/spice_parser/widen.py BASE/model-best OUT_DIR --width 152

spaCy's parser projects the tok2vec output to ``hidden_width`` features and feeds them to a
maxout layer of ``hidden_width`` units, read by the action scorer. Widening adds projection
rows and hidden units drawn at random (seeded), while the old hidden units get zero weights
from the new features and the scorer zero weights from the new units: the widened pipeline
parses exactly as its base (checked on a few captions once written), and training
resumed from it (``config_continue.cfg``) can use the added width from its first step.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import numpy as np

CHECK = (
    "a man riding a wave on top of a surfboard",
    "a living room with a couch and a table",
    "a park bench beneath a canopy of palm trees",
)


def main() -> None:
    cli = argparse.ArgumentParser()
    cli.add_argument("base", type=Path)
    cli.add_argument("out", type=Path)
    cli.add_argument("--width", type=int, required=True)
    cli.add_argument("--seed", type=int, default=13)
    args = cli.parse_args()

    from capeval_core.spice.spacy_runtime import import_spacy

    spacy = import_spacy()
    nlp = spacy.load(args.base)
    before = _parses(nlp)
    _widen(nlp.get_pipe("parser").model, args.width, np.random.default_rng(args.seed))
    nlp.to_disk(args.out)
    path = args.out / "config.cfg"
    config = path.read_text(encoding="utf-8")
    widened = re.sub(
        r"(\[components\.parser\.model\][^\[]*?hidden_width = )\d+",
        rf"\g<1>{args.width}",
        config,
        flags=re.S,
    )
    path.write_text(widened, encoding="utf-8")
    if _parses(spacy.load(args.out)) != before:
        raise SystemExit("the widened pipeline parses differently from its base")
    print(f"{args.out}: parser hidden width {args.width}, parses as {args.base}")


def _widen(model, width: int, rng: np.random.Generator) -> None:
    path = [model.get_ref("tok2vec")]  # the encoder chain down to the projection that ends it
    while path[-1].layers:
        path.append(path[-1].layers[-1])
    proj = path[-1]
    lower, upper = model.get_ref("lower"), model.get_ref("upper")
    W, b, pad = lower.get_param("W"), lower.get_param("b"), lower.get_param("pad")
    n_f, n_o, n_p, n_i = W.shape
    if width <= n_o:
        raise SystemExit(f"the parser is already {n_o} wide")
    add = width - n_o
    pW, pb = proj.get_param("W"), proj.get_param("b")
    new_pW = np.concatenate([pW, rng.normal(0, pW.std(), (add, pW.shape[1])).astype(pW.dtype)])
    new_W = np.zeros((n_f, width, n_p, width), W.dtype)
    new_W[:, :n_o, :, :n_i] = W  # old units ignore the new features
    new_W[:, n_o:] = rng.normal(0, W.std(), (n_f, add, n_p, width))
    uW = upper.get_param("W")
    # thinc refuses to change a dimension of a layer that has weights, so it is set directly
    for node in path:
        node._dims["nO"] = width
    lower._dims["nO"] = lower._dims["nI"] = upper._dims["nI"] = width
    proj.set_param("W", new_pW)
    proj.set_param("b", np.concatenate([pb, np.zeros(add, pb.dtype)]))
    lower.set_param("W", new_W)
    lower.set_param("b", np.concatenate([b, np.zeros((add, n_p), b.dtype)]))
    lower.set_param("pad", np.concatenate([pad, np.zeros((1, n_f, add, n_p), pad.dtype)], 2))
    upper.set_param("W", np.concatenate([uW, np.zeros((uW.shape[0], add), uW.dtype)], 1))


def _parses(nlp) -> list:
    from spacy.tokens import Doc

    out = []
    for text in CHECK:
        doc = nlp(Doc(nlp.vocab, words=text.split()))
        out.append([(t.tag_, t.head.i, t.dep_) for t in doc])
    return out


if __name__ == "__main__":
    main()
