"""The I²CE sentence encoder in numpy: torch's GRU equations over the shipped weights.

``capeval train-i2ce`` (torch, optional) writes three files; capeval ships the ones it made in
``capeval_core/data/i2ce/``:

* ``i2ce.npz`` (float32): ``vocab`` (unicode array, row i = word of embedding row i; the first
  four are ``<pad> <unk> <bos> <eos>``), ``embeddings`` (V × E, frozen GloVe rows), and the
  bidirectional GRU's parameters under torch's names (``weight_ih_l0``, ``weight_hh_l0``,
  ``bias_ih_l0``, ``bias_hh_l0`` and the same with ``_reverse``), gates stacked r, z, n;
* ``i2ce_config.json``: every training choice, the exact command, the weights' SHA-256;
* ``i2ce_log.json``: the loss curve and the held-out reconstruction accuracy.

The encoder reproduces ``torch.nn.GRU`` over packed sequences (torch's gate equations, with
``b_hn`` inside the reset product)::

    r = σ(W_ir x + b_ir + W_hr h + b_hr)
    z = σ(W_iz x + b_iz + W_hz h + b_hz)
    n = tanh(W_in x + b_in + r ⊙ (W_hn h + b_hn))
    h = (1 − z) ⊙ n + z ⊙ h

in float64, batched with a padding mask (a padded step leaves ``h`` unchanged, which is what
packing does for both directions). The sentence vector is ``[h_forward(last); h_backward(first)]``
(``pooling="final"``, the default) or the mean of ``[h_forward(t); h_backward(t)]`` over the
tokens (``pooling="mean"``).
"""

from __future__ import annotations

import functools
import hashlib
import zipfile
import zlib
from collections.abc import Sequence
from importlib.resources import files
from pathlib import Path

import numpy as np

from capeval_core.errors import MissingResourceError, ResourceError

WEIGHTS_FILE = "i2ce.npz"
CONFIG_FILE = "i2ce_config.json"
LOG_FILE = "i2ce_log.json"
FORMAT_VERSION = 1
SPECIALS = ("<pad>", "<unk>", "<bos>", "<eos>")
UNK = SPECIALS.index("<unk>")
#: defaults of ``capeval train-i2ce`` (kept here so the CLI can show them without torch)
TRAIN_DEFAULTS = {
    "vocab_size": 10_000,
    "output_vocab": 3_000,
    "max_captions": 80_000,
    "max_len": 18,
    "hidden": 128,
    "decoder_hidden": 256,
    "attention": 128,
    "epochs": 1,
    "batch_size": 128,
    "lr": 1e-3,
    "seed": 0,
    "threads": 2,
    "val_captions": 5_000,
    "log_every": 25,
}
_DIRECTIONS = ("", "_reverse")
_GRU_NAMES = ("weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0")
#: how a sentence vector is read off the encoder states (see :meth:`I2CEEncoder.encode`)
POOLINGS = ("final", "mean")
#: sentences encoded per numpy batch (bounds memory: batch × length × 3·hidden floats)
BATCH = 512


def default_weights_path() -> Path:
    """The weights capeval ships: ``capeval_core/data/i2ce/i2ce.npz``."""
    return Path(str(files("capeval_core") / "data" / "i2ce" / WEIGHTS_FILE))


def _sigmoid(x: np.ndarray) -> np.ndarray:
    """``1/(1+e^-x)`` as ``0.5·(1 + tanh(x/2))`` (no overflow warnings), in place: the
    encoder's step buffers are reused instead of four temporaries per call."""
    x *= 0.5
    np.tanh(x, out=x)
    x += 1.0
    x *= 0.5
    return x


class I2CEEncoder:
    """Frozen embeddings + bidirectional GRU, in numpy; :meth:`encode` gives sentence vectors.

    >>> enc = default_encoder()
    >>> vectors = enc.encode([("a", "dog", "runs"), ("a", "dog", "is", "running")])
    >>> vectors.shape, vectors.dtype
    ((2, 256), dtype('float64'))
    >>> bool(enc.encode([()])[0].any())  # an empty caption has no vector (all zeros)
    False
    """

    def __init__(
        self,
        vocab: Sequence[str],
        embeddings: np.ndarray,
        gru: dict[str, np.ndarray],
        *,
        digest: str,
        source: str = "",
    ) -> None:
        self.vocab = tuple(vocab)
        self.index = {w: i for i, w in enumerate(self.vocab)}
        self.embeddings = np.asarray(embeddings, dtype=np.float64)
        # per direction: W_ih (3H × E), W_hh (3H × H), b_ih, b_hh, as float64
        self.weights = {
            d: tuple(np.asarray(gru[n + d], dtype=np.float64) for n in _GRU_NAMES)
            for d in _DIRECTIONS
        }
        self.hidden = int(self.weights[""][1].shape[1])
        self.digest = digest
        self.source = source

    @property
    def dimension(self) -> int:
        """Length of a sentence vector (both directions)."""
        return 2 * self.hidden

    @property
    def identity(self) -> str:
        """``i2ce-v1/<vocabulary>w/<dimension>d/<sha256 of the weights file, 16 hex>``."""
        return f"i2ce-v{FORMAT_VERSION}/{len(self.vocab)}w/{self.dimension}d/{self.digest}"

    def __repr__(self) -> str:
        return f"I2CEEncoder({self.identity!r})"

    def ids(self, tokens: Sequence[str]) -> list[int]:
        """Vocabulary rows of ``tokens`` (unknown words map to ``<unk>``)."""
        return [self.index.get(t, UNK) for t in tokens]

    def unknown(self, tokens: Sequence[str]) -> tuple[str, ...]:
        """The tokens that the vocabulary lacks (encoded as ``<unk>``)."""
        return tuple(t for t in tokens if t not in self.index)

    def encode(self, token_lists: Sequence[Sequence[str]], pooling: str = "final") -> np.ndarray:
        """Sentence vectors (n × 2·hidden, float64), encoded in padded batches of ``BATCH``.

        ``pooling="final"``: ``[last forward state; last backward state]`` (torch's ``h_n``);
        ``"mean"``: the mean over the tokens of ``[forward state; backward state]`` (the mean
        of torch's ``output`` over the valid steps). Sentences are sorted by length first, so
        each batch pads little; an empty token list gives the zero vector.
        """
        if pooling not in POOLINGS:
            raise ValueError(f"`pooling` must be one of {POOLINGS} (got {pooling!r})")
        seqs = [self.ids(toks) for toks in token_lists]
        out = np.zeros((len(seqs), self.dimension))
        order = sorted((i for i, s in enumerate(seqs) if s), key=lambda i: len(seqs[i]))
        for start in range(0, len(order), BATCH):
            rows = order[start : start + BATCH]
            out[rows] = self._encode_padded([seqs[i] for i in rows], pooling)
        return out

    def _encode_padded(self, seqs: list[list[int]], pooling: str) -> np.ndarray:
        n, t = len(seqs), max(len(s) for s in seqs)
        ids = np.zeros((n, t), dtype=np.int64)  # <pad> = row 0
        lengths = np.array([len(s) for s in seqs])
        for i, s in enumerate(seqs):
            ids[i, : len(s)] = s
        mask = np.arange(t)[None, :] < lengths[:, None]  # n × t
        x = self.embeddings[ids]  # n × t × E
        forward = self._run(x, mask, self.weights[""], range(t))
        backward = self._run(x, mask, self.weights["_reverse"], range(t - 1, -1, -1))
        if pooling == "mean":
            return np.concatenate([forward[1], backward[1]], axis=1) / lengths[:, None]
        return np.concatenate([forward[0], backward[0]], axis=1)

    def _run(self, x, mask, weights, steps) -> tuple[np.ndarray, np.ndarray]:
        """One direction over the padded batch: (final state, sum of the valid states).

        The steps write into buffers allocated once, and r and z share one sigmoid call:
        fewer temporaries, but the same operations in the same order, so the numbers are bit
        for bit those of the plain equations (tests/core/test_i2ce.py).
        """
        w_ih, w_hh, b_ih, b_hh = weights
        hid = self.hidden
        n_rows, t, e = x.shape  # input gates of all steps in one 2-d product (BLAS)
        gates_x = x.reshape(n_rows * t, e) @ w_ih.T
        gates_x += b_ih
        gates_x = gates_x.reshape(n_rows, t, 3 * hid)
        h = np.zeros((n_rows, hid))
        total = np.zeros((n_rows, hid))
        w_hh_t = w_hh.T
        gh = np.empty((n_rows, 3 * hid))
        rz = np.empty((n_rows, 2 * hid))  # r and z side by side: one sigmoid call
        n = np.empty((n_rows, hid))
        new = np.empty((n_rows, hid))
        zh = np.empty((n_rows, hid))
        r, z = rz[:, :hid], rz[:, hid:]
        for step in steps:
            gx = gates_x[:, step]
            np.matmul(h, w_hh_t, out=gh)
            gh += b_hh
            _sigmoid(np.add(gx[:, : 2 * hid], gh[:, : 2 * hid], out=rz))
            np.multiply(r, gh[:, 2 * hid :], out=n)
            n += gx[:, 2 * hid :]
            np.tanh(n, out=n)
            np.subtract(1.0, z, out=new)
            new *= n
            new += np.multiply(z, h, out=zh)
            valid = mask[:, step, None]  # a padded step leaves h (and the sum) unchanged
            np.copyto(h, new, where=valid)
            np.add(total, new, out=total, where=valid)
        return h, total


def load_encoder(path: str | Path | None = None) -> I2CEEncoder:
    """Read I²CE weights (default: the shipped ones) into an :class:`I2CEEncoder`.

    A missing file raises :class:`MissingResourceError`, an unreadable or inconsistent one
    :class:`ResourceError`; both name the file and say how to get good weights.
    """
    path = default_weights_path() if path is None else Path(path)
    fix = (
        "reinstall capeval (`pip install --force-reinstall capeval`) for the shipped weights, "
        "or train new ones with `capeval train-i2ce --output DIR` (needs "
        '`pip install "capeval[train]"`) and pass `weights="DIR/i2ce.npz"`'
    )
    if not path.is_file():
        raise MissingResourceError(f"the I²CE weights file {path} does not exist; {fix}")
    try:
        raw = path.read_bytes()
        with np.load(path, allow_pickle=False) as npz:
            arrays = {name: npz[name] for name in npz.files}
    except (OSError, ValueError, EOFError, KeyError, zipfile.BadZipFile, zlib.error) as exc:
        raise ResourceError(
            f"the I²CE weights file {path} is corrupt or not an .npz archive "
            f"({type(exc).__name__}: {exc}); {fix}"
        ) from None
    problem = _check(arrays)
    if problem:
        raise ResourceError(f"the I²CE weights file {path} is inconsistent: {problem}; {fix}")
    return I2CEEncoder(
        [str(w) for w in arrays["vocab"]],
        arrays["embeddings"],
        {n + d: arrays[n + d] for n in _GRU_NAMES for d in _DIRECTIONS},
        digest=hashlib.sha256(raw).hexdigest()[:16],
        source=str(path),
    )


def _check(arrays: dict[str, np.ndarray]) -> str:
    """What is wrong with a weights archive's arrays ("" when nothing)."""
    needed = ["vocab", "embeddings", *(n + d for n in _GRU_NAMES for d in _DIRECTIONS)]
    missing = [n for n in needed if n not in arrays]
    if missing:
        return f"missing array(s) {missing}"
    vocab, emb = arrays["vocab"], arrays["embeddings"]
    if vocab.dtype.kind != "U" or vocab.ndim != 1 or tuple(vocab[:4]) != SPECIALS:
        return f"`vocab` must be a 1-d string array starting with {list(SPECIALS)}"
    if emb.ndim != 2 or emb.shape[0] != vocab.shape[0]:
        return f"`embeddings` has shape {emb.shape}, expected ({vocab.shape[0]}, E)"
    e = emb.shape[1]
    h = arrays["weight_hh_l0"].shape[-1]
    shapes = {"weight_ih_l0": (3 * h, e), "weight_hh_l0": (3 * h, h)}
    shapes |= {"bias_ih_l0": (3 * h,), "bias_hh_l0": (3 * h,)}
    for name, shape in shapes.items():
        for d in _DIRECTIONS:
            if arrays[name + d].shape != shape:
                return f"`{name + d}` has shape {arrays[name + d].shape}, expected {shape}"
    for name in needed[1:]:
        if arrays[name].dtype.kind != "f" or not np.all(np.isfinite(arrays[name])):
            return f"`{name}` must hold finite floats"
    return ""


@functools.cache
def default_encoder() -> I2CEEncoder:
    """The shipped encoder, loaded once per process (about 0.1 s)."""
    return load_encoder()


__all__ = [
    "CONFIG_FILE",
    "LOG_FILE",
    "WEIGHTS_FILE",
    "I2CEEncoder",
    "default_encoder",
    "default_weights_path",
    "load_encoder",
]
