"""Training I²CE's sentence encoder with torch (optional: ``pip install "capeval[train]"``).

Only ``capeval train-i2ce`` imports this module; scoring uses the numpy encoder in
:mod:`capeval_core.i2ce.model` and never needs torch.

The model follows the seed paper ("Intrinsic Image Captioning Evaluation") as far as its
description goes: a GRU sequence-to-sequence autoencoder whose decoder attends over the
encoder states with Bahdanau (additive) attention, word embeddings initialised from GloVe and
frozen, trained to reconstruct PTB-tokenised COCO captions. Choices the paper leaves open are
recorded in the JSON config written next to the weights:

* vocabulary: the ``vocab_size`` most frequent train2014 words that GloVe knows, plus
  ``<pad>`` (zero vector), ``<unk>``, ``<bos>``, ``<eos>`` (small deterministic random vectors
  drawn from ``seed``); the whole embedding table is frozen;
* encoder: a bidirectional GRU (one layer) over the caption's tokens (no ``<bos>``/``<eos>``);
  the sentence vector is the concatenation of the forward and backward final hidden states;
* decoder (training only): GRU cell fed ``[embedding(previous word); context]``, initial state
  ``tanh(W · sentence vector)``, attention scores ``vᵀ tanh(W_s s + W_h h_j)``, output layer on
  ``[s; context]``; teacher forcing; cross-entropy on ``tokens + <eos>``;
* the decoder predicts only the ``output_vocab`` most frequent words (rarer targets become
  ``<unk>``): the softmax over all words dominated the step time on 2 CPU cores;
* data: a seeded random subset of the train2014 captions of at most ``max_len`` tokens.
"""

from __future__ import annotations

import hashlib
import json
import math
import platform
import random
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from capeval_core.errors import MissingResourceError
from capeval_core.i2ce.model import (
    CONFIG_FILE,
    FORMAT_VERSION,
    LOG_FILE,
    SPECIALS,
    TRAIN_DEFAULTS,
    WEIGHTS_FILE,
)

try:
    import torch
    from torch import nn
    from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

    _Module = nn.Module
except ImportError:  # keep the module importable (layering test, doctests); training needs it
    torch = nn = None
    _Module = object

PAD, UNK, BOS, EOS = range(4)
TORCH_HINT = 'training I²CE needs torch: install it with `pip install "capeval[train]"`'


def require_torch() -> None:
    """Raise :class:`MissingResourceError` with the install command when torch is absent."""
    if torch is None:
        raise MissingResourceError(TORCH_HINT)


@dataclass(frozen=True, kw_only=True)
class TrainConfig:
    """Every option of a training run (all written to the JSON config; defaults in model.py)."""

    vocab_size: int = TRAIN_DEFAULTS["vocab_size"]
    output_vocab: int = TRAIN_DEFAULTS["output_vocab"]
    max_captions: int = TRAIN_DEFAULTS["max_captions"]
    max_len: int = TRAIN_DEFAULTS["max_len"]
    hidden: int = TRAIN_DEFAULTS["hidden"]
    decoder_hidden: int = TRAIN_DEFAULTS["decoder_hidden"]
    attention: int = TRAIN_DEFAULTS["attention"]
    epochs: int = TRAIN_DEFAULTS["epochs"]
    batch_size: int = TRAIN_DEFAULTS["batch_size"]
    lr: float = TRAIN_DEFAULTS["lr"]
    seed: int = TRAIN_DEFAULTS["seed"]
    threads: int = TRAIN_DEFAULTS["threads"]
    val_captions: int = TRAIN_DEFAULTS["val_captions"]
    log_every: int = TRAIN_DEFAULTS["log_every"]


# -- the model ------------------------------------------------------------------------------
class Encoder(_Module):
    """Frozen embeddings + bidirectional GRU; ``forward`` returns (states, sentence vector)."""

    def __init__(self, embeddings: np.ndarray, hidden: int) -> None:
        super().__init__()
        self.embedding = nn.Embedding.from_pretrained(
            torch.from_numpy(np.asarray(embeddings, dtype=np.float32)), freeze=True, padding_idx=PAD
        )
        self.gru = nn.GRU(
            embeddings.shape[1], hidden, num_layers=1, batch_first=True, bidirectional=True
        )

    def forward(
        self, ids: torch.Tensor, lengths: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        x = self.embedding(ids)
        packed = pack_padded_sequence(x, lengths.cpu(), batch_first=True, enforce_sorted=False)
        out, h = self.gru(packed)
        out, _ = pad_packed_sequence(out, batch_first=True, total_length=ids.shape[1])
        return out, torch.cat([h[0], h[1]], dim=-1)

    def export(self) -> dict[str, np.ndarray]:
        """The arrays :class:`capeval_core.i2ce.model.I2CEEncoder` reads (torch's layout)."""
        arrays = {"embeddings": self.embedding.weight.detach().numpy().astype(np.float32)}
        for name, p in self.gru.named_parameters():  # weight_ih_l0, weight_hh_l0_reverse, ...
            arrays[name] = p.detach().numpy().astype(np.float32)
        return arrays

    @classmethod
    def from_arrays(cls, arrays: dict[str, np.ndarray]) -> Encoder:
        """A torch encoder holding exported weights (used by the numpy-vs-torch test)."""
        hidden = arrays["weight_hh_l0"].shape[1]
        require_torch()
        enc = cls(arrays["embeddings"], hidden)
        with torch.no_grad():
            for name, p in enc.gru.named_parameters():
                p.copy_(torch.from_numpy(np.asarray(arrays[name], dtype=np.float32)))
        return enc.eval()


def reference_vectors(
    arrays: dict[str, np.ndarray], token_lists: Sequence[Sequence[str]], pooling: str = "final"
) -> np.ndarray:
    """Sentence vectors computed by torch for exported weights: the reference the numpy
    encoder is checked against (``tools/i2ce_torch_reference.py`` saves them for the tests)."""
    from capeval_core.i2ce.model import I2CEEncoder

    encoder = Encoder.from_arrays(arrays)
    numpy_side = I2CEEncoder(
        [str(w) for w in arrays["vocab"]], arrays["embeddings"], arrays, digest="reference"
    )
    seqs = [numpy_side.ids(t) for t in token_lists]
    ids = torch.zeros((len(seqs), max(map(len, seqs))), dtype=torch.long)
    for i, seq in enumerate(seqs):
        ids[i, : len(seq)] = torch.tensor(seq)
    lengths = torch.tensor([len(seq) for seq in seqs])
    with torch.no_grad():
        states, vectors = encoder(ids, lengths)
    if pooling == "mean":  # padded steps of torch's output are zeros
        vectors = states.sum(dim=1) / lengths[:, None]
    return vectors.double().numpy()


class Decoder(_Module):
    """GRU decoder with Bahdanau attention over the encoder states (training only)."""

    def __init__(
        self, embedding: nn.Embedding, enc_dim: int, hidden: int, attention: int, n_out: int
    ):
        super().__init__()
        self.embedding = embedding
        emb_dim = embedding.weight.shape[1]
        self.init = nn.Linear(enc_dim, hidden)
        self.cell = nn.GRUCell(emb_dim + enc_dim, hidden)
        self.w_s = nn.Linear(hidden, attention, bias=False)
        self.w_h = nn.Linear(enc_dim, attention)
        self.v = nn.Linear(attention, 1, bias=False)
        self.out = nn.Linear(hidden + enc_dim, n_out)

    def forward(
        self, states: torch.Tensor, mask: torch.Tensor, vector: torch.Tensor, inputs: torch.Tensor
    ) -> torch.Tensor:
        s = torch.tanh(self.init(vector))
        keys = self.w_h(states)
        emb = self.embedding(inputs)
        outs = []
        for t in range(inputs.shape[1]):
            e = self.v(torch.tanh(keys + self.w_s(s)[:, None, :])).squeeze(-1)
            a = torch.softmax(e.masked_fill(~mask, float("-inf")), dim=-1)
            c = torch.bmm(a[:, None, :], states).squeeze(1)
            s = self.cell(torch.cat([emb[:, t], c], dim=-1), s)
            outs.append(torch.cat([s, c], dim=-1))
        return self.out(torch.stack(outs, dim=1))


class Autoencoder(_Module):
    def __init__(self, embeddings: np.ndarray, cfg: TrainConfig) -> None:
        super().__init__()
        self.encoder = Encoder(embeddings, cfg.hidden)
        self.decoder = Decoder(
            self.encoder.embedding,
            2 * cfg.hidden,
            cfg.decoder_hidden,
            cfg.attention,
            len(SPECIALS) + cfg.output_vocab,
        )

    def forward(self, ids, lengths, dec_in):
        states, vector = self.encoder(ids, lengths)
        mask = ids != PAD
        return self.decoder(states, mask, vector, dec_in)


# -- data -----------------------------------------------------------------------------------
def build_vocab(token_lists, known, size: int) -> list[str]:
    """The ``size`` most frequent words that the GloVe table knows (ties: alphabetical)."""
    counts = Counter(t for toks in token_lists for t in toks)
    ranked = sorted((w for w in counts if w in known), key=lambda w: (-counts[w], w))
    return [*SPECIALS, *ranked[:size]]


def embedding_matrix(vocab: list[str], emb, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    specials = rng.normal(0.0, 0.1, size=(len(SPECIALS), emb.dimension)).astype(np.float32)
    specials[PAD] = 0.0
    words = np.asarray(emb.kv.vectors[emb.indices(vocab[len(SPECIALS) :])], dtype=np.float32)
    return np.concatenate([specials, words])


def encode(token_lists, index: dict[str, int]) -> list[list[int]]:
    return [[index.get(t, UNK) for t in toks] for toks in token_lists]


def make_tensors(seqs: list[list[int]], n_out: int):
    """Encoder ids, lengths, decoder inputs (<bos> + w) and targets (w + <eos>), padded.

    Targets outside the decoder's output vocabulary (the ``n_out`` first entries, which are
    the most frequent words) become ``<unk>``.
    """
    n, t = len(seqs), max(len(s) for s in seqs)
    ids = torch.zeros((n, t), dtype=torch.long)
    dec_in = torch.zeros((n, t + 1), dtype=torch.long)
    target = torch.zeros((n, t + 1), dtype=torch.long)
    for i, s in enumerate(seqs):
        ids[i, : len(s)] = torch.tensor(s)
        dec_in[i, 0] = BOS
        dec_in[i, 1 : len(s) + 1] = torch.tensor(s)
        target[i, : len(s)] = torch.tensor(s)
        target[i, len(s)] = EOS
    target[target >= n_out] = UNK
    lengths = torch.tensor([len(s) for s in seqs])
    return ids, lengths, dec_in, target


def _batches(seqs: list[list[int]], size: int, seed: int) -> list[list[list[int]]]:
    """Seeded shuffle, then length bucketing: sort chunks of 50 batches by length, cut them
    into batches and shuffle the batches (less padding, so fewer decoder steps per batch)."""
    rng = random.Random(seed)
    order = list(range(len(seqs)))
    rng.shuffle(order)
    batches = []
    chunk = size * 50
    for start in range(0, len(order), chunk):
        part = sorted(order[start : start + chunk], key=lambda i: len(seqs[i]))
        batches += [[seqs[i] for i in part[j : j + size]] for j in range(0, len(part), size)]
    rng.shuffle(batches)
    return batches


def evaluate(
    model: Autoencoder, seqs: list[list[int]], batch_size: int, n_out: int
) -> dict[str, float]:
    """Held-out teacher-forced reconstruction: loss, token accuracy, exact-caption accuracy."""
    with torch.no_grad():
        return _evaluate(model, seqs, batch_size, n_out)


def _evaluate(model, seqs, batch_size, n_out):
    model.eval()
    loss_sum = correct = total = exact = 0.0
    for start in range(0, len(seqs), batch_size):
        ids, lengths, dec_in, target = make_tensors(seqs[start : start + batch_size], n_out)
        logits = model(ids, lengths, dec_in)
        mask = target != PAD
        loss_sum += float(nn.functional.cross_entropy(logits[mask], target[mask], reduction="sum"))
        hit = (logits.argmax(-1) == target) & mask
        correct += float(hit.sum())
        total += float(mask.sum())
        exact += float((hit | ~mask).all(dim=1).sum())
    model.train()
    return {
        "loss": loss_sum / total,
        "token_accuracy": correct / total,
        "caption_accuracy": exact / len(seqs),
    }


def _svg_curve(steps: list[int], losses: list[float], path: Path) -> None:
    """A dependency-free SVG line chart of the training loss."""
    w, h, m = 640, 320, 40
    lo, hi = min(losses), max(losses)
    sx = (w - 2 * m) / max(1, steps[-1] - steps[0])
    sy = (h - 2 * m) / max(1e-9, hi - lo)
    pts = " ".join(
        f"{m + (s - steps[0]) * sx:.1f},{h - m - (v - lo) * sy:.1f}"
        for s, v in zip(steps, losses, strict=True)
    )
    path.write_text(
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}">'
        f'<rect width="{w}" height="{h}" fill="white"/>'
        f'<polyline fill="none" stroke="steelblue" stroke-width="1.5" points="{pts}"/>'
        f'<text x="{m}" y="{m - 10}" font-size="12">I²CE training loss (cross-entropy per '
        f"token): {hi:.3f} → {losses[-1]:.3f} over {steps[-1]} steps</text>"
        f'<text x="4" y="{m + 4}" font-size="10">{hi:.2f}</text>'
        f'<text x="4" y="{h - m}" font-size="10">{lo:.2f}</text>'
        f'<text x="{w - m - 40}" y="{h - m + 16}" font-size="10">step {steps[-1]}</text>'
        "</svg>",
        encoding="utf-8",
    )


# -- the run --------------------------------------------------------------------------------
def train(cfg: TrainConfig, output: Path, *, command: str = "", progress: bool = True) -> dict:
    """Train, then write ``i2ce.npz``, ``i2ce_config.json``, ``i2ce_log.json`` (and an SVG)."""
    from tqdm import tqdm

    from capeval_core.embeddings import default_embeddings
    from capeval_core.files import check_output_folder
    from capeval_core.resources import coco_captions, package_version
    from capeval_core.tokenize import get_tokenizer

    check_output_folder(output, option="output")  # before the training, not after it
    require_torch()
    t0 = time.perf_counter()
    torch.manual_seed(cfg.seed)
    random.seed(cfg.seed)
    np.random.seed(cfg.seed)
    torch.set_num_threads(cfg.threads)

    say = (lambda msg: print(msg, file=sys.stderr, flush=True)) if progress else (lambda m: None)
    tok = get_tokenizer("ptb")
    emb = default_embeddings()
    say("tokenizing COCO train2014 captions ...")
    train_caps = [c.caption for c in coco_captions("train")]
    train_tokens = tok.tokenize_batch(train_caps)
    vocab = build_vocab(train_tokens, emb.kv.key_to_index, cfg.vocab_size)
    index = {w: i for i, w in enumerate(vocab)}
    matrix = embedding_matrix(vocab, emb, cfg.seed)

    rng = random.Random(cfg.seed)
    eligible = [i for i, t in enumerate(train_tokens) if 0 < len(t) <= cfg.max_len]
    rng.shuffle(eligible)
    chosen = eligible[: cfg.max_captions]
    train_seqs = encode([train_tokens[i] for i in chosen], index)
    val_all = [c.caption for c in coco_captions("val")]
    val_tokens = [t for t in tok.tokenize_batch(val_all) if 0 < len(t) <= cfg.max_len]
    random.Random(cfg.seed + 1).shuffle(val_tokens)
    val_seqs = encode(val_tokens[: cfg.val_captions], index)
    n_unk = sum(s.count(UNK) for s in train_seqs)
    n_tok = sum(len(s) for s in train_seqs)
    say(
        f"vocabulary {len(vocab)}; {len(train_seqs)} training captions "
        f"({len(eligible)} eligible of {len(train_tokens)}); {len(val_seqs)} held-out val captions"
    )

    model = Autoencoder(matrix, cfg)
    n_out = len(SPECIALS) + cfg.output_vocab
    params = [p for p in model.parameters() if p.requires_grad]
    optim = torch.optim.Adam(params, lr=cfg.lr)
    steps_per_epoch = math.ceil(len(train_seqs) / cfg.batch_size)
    log_steps: list[int] = []
    log_loss: list[float] = []
    epochs: list[dict] = []
    step = 0
    window: list[float] = []
    with tqdm(
        total=steps_per_epoch * cfg.epochs, desc="train-i2ce", unit="batch", disable=not progress
    ) as bar:
        for epoch in range(1, cfg.epochs + 1):
            for batch in _batches(train_seqs, cfg.batch_size, cfg.seed * 1000 + epoch):
                ids, lengths, dec_in, target = make_tensors(batch, n_out)
                logits = model(ids, lengths, dec_in)
                loss = nn.functional.cross_entropy(
                    logits.reshape(-1, logits.shape[-1]), target.reshape(-1), ignore_index=PAD
                )
                optim.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(params, 5.0)
                optim.step()
                step += 1
                window.append(loss.item())
                if step % cfg.log_every == 0:
                    log_steps.append(step)
                    log_loss.append(round(sum(window) / len(window), 5))
                    window = []
                    bar.set_postfix(loss=f"{log_loss[-1]:.3f}")
                bar.update()
            held = evaluate(model, val_seqs, 256, n_out)
            held = {k: round(v, 5) for k, v in held.items()}
            epochs.append({"epoch": epoch, "step": step, **held})
            say(f"epoch {epoch}: held-out {held}")
    if window:
        log_steps.append(step)
        log_loss.append(round(sum(window) / len(window), 5))

    output.mkdir(parents=True, exist_ok=True)
    arrays = model.encoder.export()
    arrays["vocab"] = np.array(vocab)
    weights = output / WEIGHTS_FILE
    np.savez_compressed(weights, **arrays)
    digest = hashlib.sha256(weights.read_bytes()).hexdigest()
    wall = time.perf_counter() - t0
    config = {
        "format": FORMAT_VERSION,
        "model": "I2CE",
        "weights": WEIGHTS_FILE,
        "sha256": digest,
        "encoder": {
            "type": "GRU",
            "layers": 1,
            "bidirectional": True,
            "hidden": cfg.hidden,
            "sentence_vector": "concat(final forward state, final backward state)",
            "vector_dim": 2 * cfg.hidden,
            "inputs": "PTB tokens only (no <bos>/<eos>); unknown words -> <unk>",
        },
        "decoder": {
            "type": "GRUCell + Bahdanau (additive) attention, teacher forcing",
            "hidden": cfg.decoder_hidden,
            "attention": cfg.attention,
            "output_vocabulary": f"the {cfg.output_vocab} most frequent words + specials; "
            "rarer target words are predicted as <unk>",
            "shipped": False,
        },
        "embeddings": {
            "source": emb.identity,
            "frozen": True,
            "specials": "<pad> zeros; <unk> <bos> <eos> N(0, 0.1) from the seed, frozen",
        },
        "vocabulary": {"size": len(vocab), "specials": list(SPECIALS)},
        "data": {
            "train": "COCO captions_train2014 (pycocoevalcap spice jar), PTB-tokenised",
            "train_captions": len(train_seqs),
            "eligible_captions": len(eligible),
            "all_captions": len(train_tokens),
            "train_unk_rate": round(n_unk / n_tok, 5),
            "held_out": "COCO captions_val2014, seeded random subset",
            "held_out_captions": len(val_seqs),
        },
        "training": asdict(cfg),
        "optimizer": "Adam, gradient-norm clip 5.0, cross-entropy over tokens + <eos>",
        "command": command,
        "versions": {
            "torch": torch.__version__,
            "numpy": np.__version__,
            "pycocoevalcap": package_version("pycocoevalcap"),
            "python": platform.python_version(),
        },
    }
    log = {
        "loss_every": cfg.log_every,
        "steps": log_steps,
        "loss": log_loss,
        "held_out": epochs,
        "final_loss": log_loss[-1] if log_loss else None,
        "wall_seconds": round(wall, 1),
        "command": command,
    }
    (output / CONFIG_FILE).write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
    (output / LOG_FILE).write_text(json.dumps(log, indent=1) + "\n", encoding="utf-8")
    if log_steps:
        _svg_curve(log_steps, log_loss, output / "i2ce_loss.svg")
    say(f"wrote {weights} ({weights.stat().st_size / 1e6:.1f} MB) in {wall / 60:.1f} min")
    return {"config": config, "log": log}


__all__ = ["Autoencoder", "Decoder", "Encoder", "TrainConfig", "require_torch", "train"]
