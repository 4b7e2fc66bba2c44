"""METEOR's paraphrase index as the package ships it: ``data/meteor_paraphrase.npz``.

Building the index from ``paraphrase-en.gz`` means inflating 272 MB of table (seconds on a
first run). The package instead ships the table's content in a compact form made by
``python -m tools.meteor_paraphrase_index`` from the table pycocoevalcap 1.2 installs, and a
first run expands it in a fraction of a second into the very arrays a build from the table
gives (:func:`capeval_core.meteor_resources._index_arrays`; the tests compare the two):

* every distinct phrase (phrase 1 or phrase 2), sorted by bytes, as word ids into a
  vocabulary of the words (the phrase split at single spaces), front-coded: per phrase how
  many leading words it shares with the one before and how many ids follow;
* per phrase 1 (a key, in table order): its phrase number and its number of entries; per
  entry the phrase number of its phrase 2, in table order. Phrase numbers are stored as
  differences from the one before (from 0 at each key, modulo 2**32), each array as its
  byte planes (most significant bytes are mostly zero, so they compress to little);
* ``meta``: JSON naming the table it was made from (name and
  :func:`~capeval_core.resources.source_stamp`), the format and the counts.

The probabilities of the table are not kept: METEOR 1.5 does not use them (metric-spec §5.3).
The index is used only when the installed table has the stamp the file names; otherwise the
table is indexed itself, as before (:func:`capeval_core.meteor_resources.paraphrase_index`).
"""

from __future__ import annotations

import io
import json
import math
import zipfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

#: The layout of the index in memory and in the user cache (``meteor_resources``), here
#: because the shipped file expands into it. Bumped whenever it changes, so stale files are
#: rebuilt rather than misread.
#: Format 4 added a checksum of everything after it, checked once per file version; format 5
#: is a hash table of the phrases 1 with their entries in table order, built compiled, and
#: its checksum a CRC-32 (in the 32-byte field); format 6 keeps the start and end of each
#: phrase 2 (so an index expanded from the shipped file is written as it is, without
#: gathering its phrases 2 into one text first).
INDEX_FORMAT = 6
#: Bumped whenever the shipped layout changes (a file of another format is not used).
SHIPPED_FORMAT = 1
SHIPPED_NAME = "meteor_paraphrase.npz"
#: The command that writes the shipped file (named in its meta and in errors).
TOOL = "python -m tools.meteor_paraphrase_index"


def shipped_path() -> Path:
    """Where the package keeps the shipped index."""
    return Path(__file__).parent / "data" / SHIPPED_NAME


def _planes(values: np.ndarray) -> np.ndarray:
    """A uint32 array as its four byte planes, least significant first (shape (4, n))."""
    return np.ascontiguousarray(values.astype("<u4").view(np.uint8).reshape(-1, 4).T)


def _unplanes(planes: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(planes.T).view("<u4").reshape(-1)


def _deltas(ids: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """``ids`` as differences (modulo 2**32) from the id before, from 0 where ``starts``."""
    ids = ids.astype(np.int64)
    out = ids.copy()
    out[1:] -= ids[:-1]
    out[starts] = ids[starts]
    return (out & 0xFFFFFFFF).astype(np.uint32)


def encode(header: dict, arrays: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The shipped members from an index built from the table (``_index_arrays``)."""
    from capeval_core import meteor_kernel as kernel

    n_keys, n = int(header["n_keys"]), int(header["n_entries"])
    key_text, key_off = arrays["key_text"], arrays["key_text_offsets"]
    keys = [key_text[key_off[k] : key_off[k + 1]].tobytes() for k in range(n_keys)]
    text, off = kernel.gather(arrays["target_text"], arrays["target_start"], arrays["target_end"])
    raw = text.tobytes()
    bounds = off.tolist()
    targets = [raw[bounds[e] : bounds[e + 1]] for e in range(n)]
    phrases = sorted(set(keys).union(targets))
    number = {p: i for i, p in enumerate(phrases)}
    split = [p.split(b" ") for p in phrases]
    vocabulary = sorted({w for words in split for w in words})
    word_id = {w: i for i, w in enumerate(vocabulary)}
    shared = np.empty(len(phrases), dtype=np.uint8)
    fresh = np.empty(len(phrases), dtype=np.uint8)
    words: list[int] = []
    before: list[int] = []
    for i, parts in enumerate(split):
        ids = [word_id[w] for w in parts]
        s = 0
        while s < min(len(before), len(ids), 255) and before[s] == ids[s]:
            s += 1
        shared[i], fresh[i] = s, len(ids) - s  # at most 255 words a phrase (_index_arrays)
        words += ids[s:]
        before = ids
    entry_counts = np.diff(arrays["key_entry_offsets"][: n_keys + 1])
    key_starts = np.zeros(n_keys, dtype=bool)
    key_starts[:1] = True
    entry_starts = np.zeros(n, dtype=bool)
    entry_starts[arrays["key_entry_offsets"][:n_keys][entry_counts > 0]] = True
    vocab_off = np.zeros(len(vocabulary) + 1, dtype=np.int64)
    np.cumsum([len(w) for w in vocabulary], out=vocab_off[1:])
    meta = {
        "format": SHIPPED_FORMAT,
        "source": header["source"],
        "source_stamp": header["source_stamp"],
        "made_by": TOOL,
        "n_keys": n_keys,
        "n_entries": n,
        "n_phrases": len(phrases),
        "n_words": len(vocabulary),
        "max_words": int(header["max_words"]),
    }
    return {
        "meta": np.frombuffer(json.dumps(meta, sort_keys=True).encode(), dtype=np.uint8),
        "vocab_text": np.frombuffer(b"".join(vocabulary), dtype=np.uint8),
        "vocab_offsets": vocab_off.astype(np.uint32),
        "phrase_shared": shared,
        "phrase_fresh": fresh,
        "phrase_words": np.array(words, dtype=np.uint16 if len(vocabulary) <= 1 << 16 else "<u4"),
        "key_phrase": _planes(_deltas(np.array([number[k] for k in keys]), key_starts)),
        "key_entries": _planes(entry_counts),
        "entry_phrase": _planes(
            _deltas(np.array([number[t] for t in targets], dtype=np.int64), entry_starts)
        ),
    }


def write(path: Path, members: dict[str, np.ndarray]) -> None:
    """The members as a compressed ``.npz`` (deflate, readable by :func:`numpy.load`), byte
    for byte the same for the same members (fixed member times, unlike
    :func:`numpy.savez_compressed`)."""
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name, arr in members.items():
            info = zipfile.ZipInfo(f"{name}.npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            with zf.open(info, "w", force_zip64=True) as fh:
                np.lib.format.write_array(fh, np.ascontiguousarray(arr), allow_pickle=False)


def shipped_meta(path: Path) -> dict:
    """The ``meta`` member alone (what the file was made from), without reading the rest.

    >>> meta = shipped_meta(shipped_path())
    >>> meta["source"], meta["n_keys"], meta["n_entries"]
    ('paraphrase-en.gz', 430639, 5274084)
    """
    with np.load(path) as npz:
        meta = json.loads(npz["meta"].tobytes())
    if not isinstance(meta, dict):
        raise ValueError("no meta record")
    return meta


def _arrays(path: Path) -> dict[str, np.ndarray]:
    """Every member, each inflated in one zlib call.

    ``np.load`` reads a compressed member in 256 kB pieces, taking the interpreter lock
    back for each: beside a busy thread (a first run normalises its captions meanwhile) the
    file took 0.6 s instead of 0.2 s, and 4.5 s beside a thread that only runs Python.
    """
    out = {}
    with zipfile.ZipFile(path) as zf:
        for info in zf.infolist():
            raw = zf.read(info)
            fh = io.BytesIO(raw)
            version = np.lib.format.read_magic(fh)
            header = (
                np.lib.format.read_array_header_1_0
                if version == (1, 0)
                else np.lib.format.read_array_header_2_0
            )
            shape, fortran, dtype = header(fh)
            flat = np.frombuffer(raw, dtype=dtype, count=math.prod(shape), offset=fh.tell())
            # a copy: the kernels take writable arrays (a read-only one is another signature
            # for numba, compiled anew)
            out[info.filename.removesuffix(".npy")] = flat.reshape(
                shape, order="F" if fortran else "C"
            ).copy()
    return out


def _key_table(kernel, text, phrase_off, phrase_hash, key_phrase) -> tuple:
    """The keys' hashes and texts and the hash table of the phrases 1 (``_SECTIONS``)."""
    key_hash = phrase_hash[key_phrase]
    key_text, key_text_off = kernel.gather(text, phrase_off[key_phrase], phrase_off[key_phrase + 1])
    return key_hash, key_text, key_text_off, kernel.phrase_table(key_hash, key_text, key_text_off)


def decode(path: Path) -> tuple[dict, dict[str, np.ndarray]]:
    """The index's header and arrays from the shipped file, as ``_index_arrays`` gives them
    for the table the file names (phrase 2 of entry ``e`` is
    ``target_text[target_start[e]:target_end[e]]``, here in one text of the distinct
    phrases).

    >>> header, a = decode(shipped_path())  # the table's first entry: "00" -> "000"
    >>> a["key_text"][: a["key_text_offsets"][1]].tobytes()
    b'00'
    >>> a["target_text"][a["target_start"][0] : a["target_end"][0]].tobytes()
    b'000'
    """
    with ThreadPoolExecutor(1) as pool:
        # zlib inflates the members without the interpreter lock while numba is imported
        # and the kernels are loaded here: a first run's cold start is 0.2 s shorter
        reading = pool.submit(_arrays, path)
        from capeval_core import meteor_kernel as kernel

        kernel.load_expansion()  # takes the interpreter lock, which inflating does not
        members = reading.result()
    meta = json.loads(members["meta"].tobytes())
    if meta.get("format") != SHIPPED_FORMAT:
        raise ValueError(f"format {meta.get('format')}, this capeval reads {SHIPPED_FORMAT}")
    vocab_off = members["vocab_offsets"].astype(np.int64)
    text, phrase_off, phrase_hash, phrase_words = kernel.expand_phrases(
        members["phrase_shared"],
        members["phrase_fresh"],
        members["phrase_words"],
        members["vocab_text"],
        vocab_off,
    )
    # key k is phrase number key_delta[0] + ... + key_delta[k], modulo 2**32 (as uint32 sums
    # wrap)
    key_phrase = np.cumsum(_unplanes(members["key_phrase"]), dtype=np.uint32).astype(np.int64)
    with ThreadPoolExecutor(1) as pool:
        # the keys' table and the entries do not depend on each other, and both kernels run
        # without the interpreter lock: a first run has its index 0.1 s sooner
        keys = pool.submit(_key_table, kernel, text, phrase_off, phrase_hash, key_phrase)
        runs, target_hash, target_words, target_start, target_end = kernel.expand_entries(
            _unplanes(members["key_entries"]),
            _unplanes(members["entry_phrase"]),
            phrase_off,
            phrase_hash,
            phrase_words,
        )
        key_hash, key_text, key_text_off, (phrase_slots, p_hash, p_key, p_prefix) = keys.result()
    n_keys = len(key_phrase)
    max_words = int(max(phrase_words[key_phrase].max(initial=0), target_words.max(initial=0)))
    if (n_keys, int(runs[-1]), max_words) != (meta["n_keys"], meta["n_entries"], meta["max_words"]):
        raise ValueError("its counts do not match its meta record")
    if len(text) >= 1 << 32:
        raise ValueError("its phrases are beyond what the paraphrase index holds")
    arrays = {
        "phrase_slots": phrase_slots,
        "phrase_hash": p_hash,
        "phrase_key": p_key,
        "phrase_prefix": p_prefix,
        "key_hash": key_hash,
        "key_entry_offsets": runs,
        "key_text_offsets": key_text_off,
        "key_text": key_text,
        "target_hash": target_hash,
        "target_words": target_words,
        "target_start": target_start,
        "target_end": target_end,
        "target_text": text,
    }
    header = {
        "format": INDEX_FORMAT,
        "source": meta["source"],
        "source_stamp": meta["source_stamp"],
        "n_keys": n_keys,
        "n_entries": int(runs[-1]),
        "max_words": max_words,
    }
    return header, arrays
