"""Train the tree scorer (``capeval_core/spice/biaffine.py``) on ``graph_features.py``'s files.

    python tools/spice_parser/train_graph.py FEATURES_DIR OUT_DIR [--hidden 192] [--epochs 3]

Needs PyTorch (training only: the package runs the weights in numpy). A BiLSTM (one layer, or
``--layers``) over the pipeline's frozen encoder vectors, biaffine head scores (Dozat and
Manning 2017), label scores from the word and its head, and tag scores, trained on the jar's
trees and tags with cross-entropy; the encoders are not updated. The head loss is each word's
cross-entropy over its candidate heads (``--arc-loss local``) or the whole tree's, over every
projective tree with one word under the root (``crf``: a tree CRF, its partition function by
Eisner's inside algorithm), which is what the runtime's decoder maximises. ``--init`` starts
from a trained scorer's weights (a package's ``graph`` folder). Writes
``OUT_DIR/weights.npz`` (PyTorch's parameter names, float32), ``OUT_DIR/labels.json``,
``OUT_DIR/tags.json`` and ``OUT_DIR/reference.npz``: the first 20 dev sentences' inputs with
PyTorch's own head log-probabilities, label and tag scores, which a test compares numpy's
against. Seeded
(``--seed``: the data order and the initial weights); a rerun was not compared bit for bit.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np


def main() -> None:
    cli = argparse.ArgumentParser()
    cli.add_argument("features", type=Path)
    cli.add_argument("out", type=Path)
    cli.add_argument("--hidden", type=int, default=192, help="BiLSTM units per direction")
    cli.add_argument("--layers", type=int, default=1, help="BiLSTM layers")
    cli.add_argument("--dims", type=int, default=0, help="read only the first DIMS inputs")
    cli.add_argument("--epochs", type=float, default=3.0)
    cli.add_argument("--batch", type=int, default=100, help="sentences per step")
    cli.add_argument("--learn-rate", type=float, default=0.002)
    cli.add_argument("--seed", type=int, default=1)
    cli.add_argument("--threads", type=int, default=2)
    cli.add_argument("--arc-loss", choices=("local", "crf"), default="local")
    cli.add_argument("--init", type=Path, help="start from this scorer's weights.npz")
    args = cli.parse_args()

    import torch

    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    names = json.loads((args.features / "names.json").read_text(encoding="utf-8"))
    train, dev = (_load(args.features / f"{part}.npz", args.dims) for part in ("train", "dev"))
    if args.init:  # the scorer's own label and tag order
        for part in ("labels", "tags"):
            order = json.loads((args.init / f"{part}.json").read_text(encoding="utf-8"))
            index = {name: k for k, name in enumerate(order)}
            remap = np.array([index[n] for n in sorted(names[part], key=names[part].get)])
            for data in (train, dev):
                data[part] = remap[data[part]]
            names[part] = index
    model = _model(
        train["feats"].shape[1], args.hidden, len(names["labels"]), len(names["tags"]), args.layers
    )
    if args.init:
        with np.load(args.init / "weights.npz") as z:
            model.load_state_dict({k: torch.from_numpy(z[k]) for k in z.files})
    opt = torch.optim.Adam(model.parameters(), lr=args.learn_rate, betas=(0.9, 0.9))
    steps = int(args.epochs * len(train["lens"]) / args.batch)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda k: min(1.0, (k + 1) / 200) * max(0.05, 1 - k / steps)
    )
    rng = np.random.default_rng(args.seed)
    step, start = 0, time.time()
    while step < steps:
        for x, heads, labels, tags, mask in _batches(
            train, rng.permutation(len(train["lens"])), args
        ):
            model.train()
            scores, label_logits, tag_logits = model(x, mask, heads)
            if args.arc_loss == "crf":
                loss = _tree_nll(scores, heads, mask) / mask.sum()
            else:
                loss = torch.nn.functional.cross_entropy(scores[mask], heads[mask])
            loss = loss + torch.nn.functional.cross_entropy(label_logits[mask], labels[mask])
            loss = loss + torch.nn.functional.cross_entropy(tag_logits[mask], tags[mask])
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 5.0)
            opt.step()
            sched.step()
            step += 1
            if step % 1000 == 0 or step == steps:
                print(f"step {step}/{steps} loss {loss.item():.4f} {time.time() - start:.0f}s")
            if step >= steps:
                break
    model.eval()
    uas, tag_accuracy = _dev_accuracy(model, dev, args)
    print(
        f"dev: UAS of each word's best head (no tree decoding) {uas:.5f}, tags {tag_accuracy:.5f}"
    )
    args.out.mkdir(parents=True, exist_ok=True)
    weights = {k: v.detach().numpy().astype(np.float32) for k, v in model.state_dict().items()}
    np.savez(args.out / "weights.npz", **weights)
    labels = sorted(names["labels"], key=names["labels"].get)
    (args.out / "labels.json").write_text(json.dumps(labels), encoding="utf-8")
    tags = sorted(names["tags"], key=names["tags"].get)
    (args.out / "tags.json").write_text(json.dumps(tags), encoding="utf-8")
    _write_reference(model, dev, args.out / "reference.npz")


def _load(path: Path, dims: int) -> dict:
    z = np.load(path)
    data = {k: z[k] for k in z.files}
    if dims:
        data["feats"] = np.ascontiguousarray(data["feats"][:, :dims])
    data["offsets"] = np.concatenate([[0], np.cumsum(data["lens"])])
    return data


def _batches(data: dict, order: np.ndarray, args):
    import torch

    offsets = data["offsets"]
    for s in range(0, len(order), args.batch):
        chosen = order[s : s + args.batch]
        n = int(data["lens"][chosen].max())
        x = np.zeros((len(chosen), n, data["feats"].shape[1]), np.float32)
        heads = np.zeros((len(chosen), n), np.int64)
        labels = np.zeros((len(chosen), n), np.int64)
        tags = np.zeros((len(chosen), n), np.int64)
        mask = np.zeros((len(chosen), n), bool)
        for row, i in enumerate(chosen):
            a, b = offsets[i], offsets[i + 1]
            x[row, : b - a] = data["feats"][a:b]
            heads[row, : b - a] = data["heads"][a:b]
            labels[row, : b - a] = data["labels"][a:b]
            tags[row, : b - a] = data["tags"][a:b]
            mask[row, : b - a] = True
        yield (
            torch.from_numpy(x),
            torch.from_numpy(heads),
            torch.from_numpy(labels),
            torch.from_numpy(tags),
            torch.from_numpy(mask),
        )


def _model(dims: int, hidden: int, n_labels: int, n_tags: int, layers: int = 1):
    """The network ``biaffine.TreeScorer`` runs: parameter names are its contract."""
    import torch
    from torch import nn

    class Scorer(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            width = 2 * hidden
            self.drop = nn.Dropout(0.2)
            self.lstm = nn.LSTM(
                dims,
                hidden,
                num_layers=layers,
                batch_first=True,
                bidirectional=True,
                dropout=0.2 if layers > 1 else 0.0,
            )
            self.root = nn.Parameter(torch.zeros(width))
            self.dep = nn.Sequential(nn.Linear(width, 128), nn.ReLU(), nn.Dropout(0.2))
            self.head = nn.Sequential(nn.Linear(width, 128), nn.ReLU(), nn.Dropout(0.2))
            self.U = nn.Parameter(torch.zeros(128, 128))
            self.u = nn.Linear(128, 1)
            self.ldep = nn.Sequential(nn.Linear(width, 64), nn.ReLU())
            self.lhead = nn.Sequential(nn.Linear(width, 64), nn.ReLU())
            self.lout = nn.Linear(128, n_labels)
            self.tag = nn.Linear(width, n_tags)

        def encode(self, x, mask):
            packed = nn.utils.rnn.pack_padded_sequence(
                self.drop(x), mask.sum(1), batch_first=True, enforce_sorted=False
            )
            h, _ = self.lstm(packed)
            h, _ = nn.utils.rnn.pad_packed_sequence(h, batch_first=True, total_length=x.shape[1])
            with_root = torch.cat([self.root.expand(len(h), 1, h.shape[2]), h], 1)
            return h, with_root

        def arcs(self, h, with_root, mask):
            dep, head = self.dep(h), self.head(with_root)
            scores = dep @ self.U @ head.transpose(1, 2) + self.u(head).transpose(1, 2)
            allowed = torch.cat([torch.ones(len(h), 1, dtype=torch.bool), mask], 1)
            return scores.masked_fill(~allowed[:, None, :], -1e9)

        def forward(self, x, mask, heads):
            h, with_root = self.encode(x, mask)
            chosen = self.lhead(with_root)[torch.arange(len(h))[:, None], heads]
            labels = self.lout(torch.cat([self.ldep(h), chosen], -1))
            return self.arcs(h, with_root, mask), labels, self.tag(h)

    return Scorer()


def _tree_nll(scores, heads, mask):
    """Summed -log P(gold tree) of a batch under a first-order tree CRF over projective trees
    with one word under the root; ``scores[b, d, h]`` as the model gives them."""
    gold = scores.gather(2, heads[..., None])[..., 0].masked_fill(~mask, 0.0).sum(1)
    return (tree_log_partition(scores, mask.sum(1)) - gold).sum()


def tree_log_partition(scores, lens):
    """log of the sum over projective trees (one word under the root) of exp(tree score), for
    each sentence of a padded batch: Eisner's algorithm with logsumexp in place of max.

    ``scores[b, d, h]``: head ``h`` (0: the root) of word ``d + 1``; ``lens[b]`` the words.
    Spans are kept one width at a time, each as a vector over the span's first position
    (``start``) and again over its last (``end``), so that every split of every span of the
    next width is a plain slice of the stacked narrower ones: no in-place writes, which keeps
    autograd's backward pass (the arcs' marginal probabilities) cheap.
    """
    import torch

    n_b, n, _ = scores.shape
    size = n + 1  # positions 0 (the root) .. n
    arc = torch.cat([scores.new_full((n_b, size, 1), -1e9), scores.transpose(1, 2)], 2)
    zero = scores.new_zeros((n_b, size))
    # complete spans headed at their start (right) or their end (left); arcs from the start
    # to the end (right) or back (left); index = width
    right_start, right_end, left_start, left_end = [zero], [zero], [zero], [zero]
    arc_right_start, arc_left_end = [zero], [zero]  # width 0 unused

    def pad(v, front: int):
        return torch.nn.functional.pad(v, (front, size - front - v.shape[1]), value=-1e9)

    def stacked(vectors, first: int, last: int):
        return torch.stack(vectors[first:last], -1)  # (batch, size, widths)

    for w in range(1, size):
        k = size - w  # spans i .. i+w for i = 0 .. k-1
        # arc between i and i+w over complete i..i+t (headed at i) and i+t+1..i+w (at i+w)
        inner = stacked(right_start, 0, w)[:, :k] + stacked(left_end, 0, w)[:, w:].flip(-1)
        inner = inner.logsumexp(-1)
        arc_right_start.append(pad(inner + arc.diagonal(w, 1, 2), 0))
        arc_left_end.append(pad(inner + arc.diagonal(-w, 1, 2), w))
        # complete i..i+w headed at i+w: complete i..i+t headed at i+t, arc i+w -> i+t
        left = stacked(left_start, 0, w)[:, :k] + stacked(arc_left_end, 1, w + 1)[:, w:].flip(-1)
        left = left.logsumexp(-1)
        # complete i..i+w headed at i: arc i -> i+1+t, complete i+1+t..i+w headed at i+1+t
        right = stacked(arc_right_start, 1, w + 1)[:, :k] + stacked(right_end, 0, w)[:, w:].flip(-1)
        right = right.logsumexp(-1)
        # one word under the root: the root's complete span must be the whole sentence
        root_open = torch.zeros_like(right, dtype=torch.bool)
        root_open[:, 0] = lens != w
        right = right.masked_fill(root_open, -1e9)
        left_start.append(pad(left, 0))
        left_end.append(pad(left, w))
        right_start.append(pad(right, 0))
        right_end.append(pad(right, w))
    whole = torch.stack([r[:, 0] for r in right_start], 1)  # the root's span, by width
    return whole.gather(1, lens[:, None])[:, 0]


def _dev_accuracy(model, data: dict, args) -> tuple[float, float]:
    import torch

    heads_right = tags_right = total = 0
    with torch.no_grad():
        for x, heads, _, tags, mask in _batches(data, np.arange(len(data["lens"])), args):
            h, with_root = model.encode(x, mask)
            best = model.arcs(h, with_root, mask).argmax(-1)
            heads_right += int(((best == heads) & mask).sum())
            tags_right += int(((model.tag(h).argmax(-1) == tags) & mask).sum())
            total += int(mask.sum())
    return heads_right / total, tags_right / total


def _write_reference(model, data: dict, path: Path, n: int = 20) -> None:
    """PyTorch's outputs on single sentences, for the numpy runtime's test."""
    import torch

    feats, logp, label_logits, tag_logits = [], [], [], []
    with torch.no_grad():
        for i in range(n):
            a, b = data["offsets"][i], data["offsets"][i + 1]
            x = torch.from_numpy(data["feats"][a:b].astype(np.float32))[None]
            mask = torch.ones(1, b - a, dtype=torch.bool)
            h, with_root = model.encode(x, mask)
            scores = torch.log_softmax(model.arcs(h, with_root, mask), -1)[0]
            heads = scores.argmax(-1)[None]
            chosen = model.lhead(with_root)[torch.arange(1)[:, None], heads]
            labels = model.lout(torch.cat([model.ldep(h), chosen], -1))[0]
            feats.append(data["feats"][a:b])  # float16, as graph_features.py wrote them
            logp.append(scores.numpy())
            label_logits.append(labels.numpy())
            tag_logits.append(model.tag(h)[0].numpy())
    np.savez_compressed(
        path,
        feats=np.concatenate(feats),
        lens=np.array([len(f) for f in feats]),
        logp=np.concatenate([p.ravel() for p in logp]),
        label_logits=np.concatenate(label_logits),
        tag_logits=np.concatenate(tag_logits),
    )


if __name__ == "__main__":
    main()
