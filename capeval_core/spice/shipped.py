"""SPICE tuples of COCO's captions, parsed ahead of time and shipped with the package.

The usual protocols score against COCO 2014 references, and parsing them with the exact
parser costs minutes; ``tools/spice_coco_parses.py`` parses every distinct caption of a COCO
split once (as coco-caption hands it to SPICE: PTB tokens joined by spaces) and writes them
here. :class:`~capeval_core.spice.parse.CaptionParser` reads them before its own cache,
only for the parser identity that made them, so they give exactly what parsing would.
``$CAPEVAL_SPICE_SHIPPED=0`` turns them off (to measure the parser itself on COCO captions);
``$CAPEVAL_SPICE_SHIPPED=coco-val2014`` keeps that file alone.

Layout of a file (``.npz``, no pickles): the captions as one newline-joined UTF-8 text, the
tuple strings as another (a vocabulary), each caption's tuple count, each tuple's length and
the tuples' string numbers, all in caption order; the parser identity and the source in a
small JSON header.
"""

from __future__ import annotations

import functools
import itertools
import json
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import numpy as np

from capeval_core.errors import ResourceError
from capeval_core.spice.rules import Tuple

#: ``CAPEVAL_SPICE_SHIPPED=0`` (or ``false``, ``no``, ``off``) turns the shipped parses off;
#: file names separated by commas (``coco-val2014``) keep only those files.
SHIPPED_ENV = "CAPEVAL_SPICE_SHIPPED"
FORMAT = 1
#: a file not yet read is opened for at least this many unfound texts: opening one costs 0.2 to
#: 0.6 s, what parsing a few dozen captions does (so a Compare run of one caption does not
#: pay for it); a file already read serves any lookup
OPEN_MIN = 32
_OFF = ("0", "false", "no", "off")
_ALL = ("", "1", "true", "yes", "on")


def shipped_enabled() -> bool:
    """Whether shipped parses may be read (the environment variable, default on)."""
    return os.environ.get(SHIPPED_ENV, "1").strip().lower() not in _OFF


def shipped_kept(store: ShippedParses) -> bool:
    """Whether the environment variable lets ``store`` be read (a name it lists that no file
    has is an error, so a misspelt name does not quietly parse everything)."""
    value = os.environ.get(SHIPPED_ENV, "1").strip().lower()
    if value in _OFF:
        return False
    if value in _ALL:
        return True
    names = {n.strip() for n in value.split(",") if n.strip()}
    unknown = names - {s.name for s in shipped_sets()}
    if unknown:
        known = ", ".join(s.name for s in shipped_sets()) or "none"
        raise ResourceError(
            f"{SHIPPED_ENV} names {', '.join(sorted(unknown))}: no shipped parses of that name "
            f"(shipped: {known}; 0 turns them all off)"
        )
    return store.name in names


def shipped_dir() -> Path:
    from importlib.resources import files

    return Path(str(files("capeval_core") / "data" / "spice_parses"))


def shipped_path(name: str) -> Path:
    """The file of one shipped set (``coco-val2014``, ...)."""
    return shipped_dir() / f"{name}.npz"


def _blob(strings: Sequence[str], what: str) -> np.ndarray:
    for s in strings:
        if "\n" in s:
            raise ValueError(f"a {what} holds a line break: {s!r}")
    return np.frombuffer("\n".join(strings).encode("utf-8"), dtype=np.uint8)


def write_parses(
    path: Path, identity: str, parses: Mapping[str, Sequence[Sequence[str]]], source: str
) -> None:
    """Write ``parses`` ({caption text: tuples}) made by parser ``identity``."""
    texts = list(parses)
    vocab: dict[str, int] = {}
    counts, lengths, elems = [], [], []
    for text in texts:
        tuples = parses[text]
        counts.append(len(tuples))
        for t in tuples:
            lengths.append(len(t))
            elems.extend(vocab.setdefault(s, len(vocab)) for s in t)
    header = {"format": FORMAT, "identity": identity, "source": source, "captions": len(texts)}
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(
        path,
        header=np.frombuffer(json.dumps(header).encode(), dtype=np.uint8),
        texts=_blob(texts, "caption"),
        vocab=_blob(list(vocab), "tuple string"),
        counts=np.array(counts, dtype=np.uint16),
        lengths=np.array(lengths, dtype=np.uint8),
        elems=np.array(elems, dtype=np.uint32 if len(vocab) >= 2**16 else np.uint16),
    )


class ShippedParses:
    """One shipped file, read on first lookup."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.name = path.stem  # "coco-val2014"
        with np.load(path, allow_pickle=False) as z:
            self.header = json.loads(z["header"].tobytes())
        if self.header.get("format") != FORMAT:
            raise ResourceError(f"{path} has format {self.header.get('format')}, not {FORMAT}")
        self.identity: str = self.header["identity"]

    @functools.cached_property
    def _tables(self) -> tuple[dict[str, int], list[str], np.ndarray, np.ndarray, np.ndarray]:
        with np.load(self.path, allow_pickle=False) as z:
            texts = z["texts"].tobytes().decode("utf-8").split("\n")
            vocab = z["vocab"].tobytes().decode("utf-8").split("\n")
            counts, lengths, elems = z["counts"], z["lengths"], z["elems"]
        first_tuple = np.r_[0, np.cumsum(counts, dtype=np.int64)]
        first_elem = np.r_[0, np.cumsum(lengths, dtype=np.int64)]
        index = {t: i for i, t in enumerate(texts)}
        return index, vocab, first_tuple, first_elem, elems

    def __len__(self) -> int:
        return int(self.header["captions"])

    @property
    def is_read(self) -> bool:
        """Whether the file's tables are in memory (read by an earlier lookup)."""
        return "_tables" in vars(self)

    def lookup(self, texts: Iterable[str]) -> dict[str, tuple[Tuple, ...]]:
        """The tuples of those ``texts`` this file holds."""
        index, vocab, first_tuple, first_elem, elems = self._tables
        out: dict[str, tuple[Tuple, ...]] = {}
        for text in texts:
            i = index.get(text)
            if i is None:
                continue
            a, b = int(first_tuple[i]), int(first_tuple[i + 1])
            ends = first_elem[a : b + 1].tolist()
            words = elems[ends[0] : ends[-1]].tolist()
            base = ends[0]
            out[text] = tuple(
                tuple(vocab[w] for w in words[s - base : e - base])
                for s, e in itertools.pairwise(ends)
            )
        return out


@functools.cache
def shipped_sets() -> tuple[ShippedParses, ...]:
    """Every shipped file (read lazily)."""
    root = shipped_dir()
    if not root.is_dir():
        return ()
    # smallest first (COCO val2014 before train2014): :func:`lookup` stops opening files
    # once every text is found, and the usual references are all in the smaller one
    paths = sorted(root.glob("*.npz"), key=lambda p: (p.stat().st_size, p.name))
    return tuple(ShippedParses(p) for p in paths)


def shipped_for(identity: str) -> tuple[ShippedParses, ...]:
    """The shipped files made by parser ``identity`` that the environment variable keeps."""
    return tuple(s for s in shipped_sets() if s.identity == identity and shipped_kept(s))


def lookup(identity: str, texts: Sequence[str]) -> dict[str, tuple[Tuple, ...]]:
    """Shipped tuples of ``texts`` for parser ``identity``. A file is read (once per process)
    only while some text is still unfound, and only for :data:`OPEN_MIN` of them or more;
    texts left unfound are parsed, which gives the same tuples."""
    out: dict[str, tuple[Tuple, ...]] = {}
    for store in shipped_for(identity):
        rest = [t for t in texts if t not in out]
        if not rest:
            break
        if store.is_read or len(rest) >= OPEN_MIN:
            out.update(store.lookup(rest))
    return out
