"""METEOR 1.5's language resources, read offline from what pycocoevalcap installs.

* Function words, WordNet synsets and irregular inflections, and the non-breaking prefixes of
  the normaliser live inside ``meteor-1.5.jar``; they are read with :mod:`zipfile`
  (metric-spec §5.3), never copied into the project.
* The paraphrase table ``data/paraphrase-en.gz`` (5.27 M entries) is indexed once into a
  file in :func:`~capeval_core.resources.cache_dir` that later processes memory-map, so a
  fresh process opens it in milliseconds and only touches the pages that its sentences need
  (see :class:`ParaphraseIndex`). A first run does not read the table: it expands the index
  the package ships (:mod:`capeval_core.meteor_shipped`, made from the very table
  pycocoevalcap 1.2 installs) in a fraction of a second; only a table with another content
  stamp is indexed itself, in about two seconds (compiled, :mod:`capeval_core.meteor_kernel`).

:func:`meteor_synsets` is public because SPICE reuses METEOR's WordNet synonym sets.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import os
import sys
import threading
import time
import warnings
import zipfile
import zlib
from collections.abc import Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from capeval_core import section_file
from capeval_core.errors import DamagedCacheWarning, MissingResourceError, ResourceError
from capeval_core.meteor_shipped import INDEX_FORMAT
from capeval_core.resources import (
    atomic_write,
    build_lock,
    cache_dir,
    dump_checked,
    load_checked,
    package_version,
    pycocoevalcap_file,
    source_stamp,
)

JAR = "meteor/meteor-1.5.jar"
PARAPHRASE_TABLE = "meteor/data/paraphrase-en.gz"

_MAGIC = b"CAPEVAL-METEOR-PARAPHRASE\n"


def meteor_jar() -> Path:
    """Path of the ``meteor-1.5.jar`` that pycocoevalcap ships (and runs)."""
    return pycocoevalcap_file(JAR)


def resource_identity() -> str:
    """Identity of the METEOR resources, for signatures: the jar as one pycocoevalcap ships it."""
    return f"meteor-1.5 (pycocoevalcap {package_version('pycocoevalcap')})"


def _jar_text(member: str) -> str:
    jar = meteor_jar()
    try:
        with zipfile.ZipFile(jar) as zf:
            return zf.read(member).decode("utf-8")
    except KeyError:
        raise MissingResourceError(
            f"`{member}` is missing from {jar.name}; reinstall pycocoevalcap with "
            "`pip install --force-reinstall pycocoevalcap==1.2`"
        ) from None
    except (zipfile.BadZipFile, UnicodeDecodeError) as exc:
        raise ResourceError(f"cannot read `{member}` from {jar}: {exc}") from exc


def _pairs(text: str) -> list[tuple[str, str]]:
    """The synonym files are pairs of lines: a key line, then a line of values."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return list(zip(lines[0::2], lines[1::2], strict=False))


@functools.cache
def function_words() -> frozenset[str]:
    """METEOR's English function words (``function/english.words``, 93 entries, §5.3).

    >>> {"the", "a", "'s"} <= function_words()
    True
    """
    return frozenset(w for w in _jar_text("function/english.words").split("\n") if w)


@functools.cache
def nonbreaking_prefixes() -> Mapping[str, int]:
    """Prefixes before which a final period is not split off (§5.2 step 10).

    Kind 1 protects the period always; kind 2 (``#NUMERIC_ONLY#``) only before a number.

    >>> nonbreaking_prefixes()["Dr"], nonbreaking_prefixes()["No"]
    (1, 2)
    """
    prefixes: dict[str, int] = {}
    for raw in _jar_text("nonbreaking/english.prefixes").split("\n"):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if "#NUMERIC_ONLY#" in line:
            prefixes[line.split("#NUMERIC_ONLY#")[0].strip()] = 2
        else:
            prefixes[line] = 1
    return prefixes


# The 20 (suffix, replacement) rules METEOR's morphological base-form finder tries in this
# order (§5.4, "morph"); the repeated rules are in the jar too and are kept for fidelity.
MORPH_RULES: tuple[tuple[str, str], ...] = (
    ("s", ""),
    ("ses", "s"),
    ("xes", "x"),
    ("zes", "z"),
    ("ches", "ch"),
    ("shes", "sh"),
    ("men", "man"),
    ("ies", "y"),
    ("s", ""),
    ("ies", "y"),
    ("es", "e"),
    ("es", ""),
    ("ed", "e"),
    ("ed", ""),
    ("ing", "e"),
    ("ing", ""),
    ("er", ""),
    ("est", ""),
    ("er", "e"),
    ("est", "e"),
)


@functools.lru_cache(maxsize=1 << 17)
def _synset_ids(line: str) -> frozenset[int]:
    """One id line of ``english.synsets`` (words with the same line share one set)."""
    return frozenset(int(i) for i in line.split())


class SynsetTable(Mapping[str, frozenset[int]]):
    """Word form -> synset ids, each line of ids parsed when its word is first asked for
    (a process looks up a few thousand of the 147,306 words; parsing all costs 0.6 s)."""

    __slots__ = ("_lines",)

    def __init__(self, lines: dict[str, str]) -> None:
        self._lines = lines

    def __getitem__(self, word: str) -> frozenset[int]:
        return _synset_ids(self._lines[word])

    def get(self, word: str, default=None):  # type: ignore[override]
        line = self._lines.get(word)
        return default if line is None else _synset_ids(line)

    def __contains__(self, word: object) -> bool:
        return word in self._lines

    def __iter__(self):
        return iter(self._lines)

    def __len__(self) -> int:
        return len(self._lines)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, SynsetTable):
            return self._lines == other._lines
        return super().__eq__(other)

    __hash__ = None  # type: ignore[assignment]

    def lines(self) -> dict[str, str]:
        """The raw id lines by word (what the cache stores)."""
        return self._lines


@dataclass(frozen=True, eq=False)
class MeteorSynsets:
    """WordNet synonym sets as METEOR 1.5 uses them (§5.3, §5.4 "Synonym").

    ``synsets`` maps a word form to its synset ids (WordNet offsets); ``exceptions`` maps an
    irregular inflection to its base forms. :meth:`synsets_of` is the set two words must
    share to be synonyms.
    """

    synsets: Mapping[str, frozenset[int]]
    exceptions: Mapping[str, tuple[str, ...]]

    def morph(self, word: str) -> str:
        """Base form by METEOR's suffix rules, or ``""`` when no rule gives a known word.

        >>> s = meteor_synsets()
        >>> s.morph("dogs"), s.morph("boxes"), s.morph("glass"), s.morph("xyzzyq")
        ('dog', 'box', 'glass', '')
        """
        if word.endswith("ss") or len(word) <= 2:
            return word
        # §5.4 describes a "ful" quirk (base + "ful"). Measured against the jar, a word ending
        # in "ful" gets no base form at all: "x wonderful" / "x beautiful" and "x cupsful" /
        # "x cupful" are not synonyms there (with "ful" appended, "ful" itself, a WordNet
        # word, would make every "-ful" word a synonym of every other). No rule suffix ends
        # in "l", so the plain rules below already give "" for these words.
        for suffix, replacement in MORPH_RULES:
            if word.endswith(suffix):
                candidate = word[: len(word) - len(suffix)] + replacement
                if candidate in self.synsets:
                    return candidate
        return ""

    def stem_synsets(self, word: str) -> frozenset[int]:
        """Synsets of the word's base forms: irregular ones from the exceptions, else morph."""
        bases = self.exceptions.get(word)
        if bases is not None:
            out: set[int] = set()
            for base in bases:
                out |= self.synsets.get(base, frozenset())
            return frozenset(out)
        return self.synsets.get(self.morph(word), frozenset())

    @functools.lru_cache(maxsize=200_000)  # noqa: B019 (one instance per process, cached)
    def synsets_of(self, word: str) -> frozenset[int]:
        """S(w) = synsets(w) ∪ stemsynsets(w) (§5.4): two words are synonyms if these meet.

        >>> s = meteor_synsets()
        >>> bool(s.synsets_of("kid") & s.synsets_of("child"))
        True
        >>> bool(s.synsets_of("couches") & s.synsets_of("sofa"))
        True
        """
        return self.synsets.get(word, frozenset()) | self.stem_synsets(word)


#: Bumped whenever the cached synonym tables change shape (2: id lines kept as text).
SYNSETS_FORMAT = 2


@functools.cache
def meteor_synsets() -> MeteorSynsets:
    """Load ``synonym/english.synsets`` and ``synonym/english.exceptions`` from the jar (§5.3).

    ``english.relations`` is not loaded: the 1.5 jar does not use it. The tables are cached
    in the user cache directory, keyed by the jar's content; the synset ids of a word are
    parsed when it is first looked up (:class:`SynsetTable`).

    >>> len(meteor_synsets().synsets) > 100_000
    True
    """
    path = cache_dir() / (
        f"meteor-synsets-v{SYNSETS_FORMAT}-{source_stamp(meteor_jar())}.checked-pickle"
    )
    try:
        lines, exceptions = load_checked(path)
        if isinstance(lines, dict) and isinstance(exceptions, dict):
            return MeteorSynsets(SynsetTable(lines), exceptions)
        raise ResourceError(f"{path.name} does not hold synonym tables")
    except FileNotFoundError:
        pass  # parsed once, below
    except (OSError, ResourceError, TypeError, ValueError) as exc:
        warnings.warn(
            f"damaged METEOR synonym cache {path} discarded ({exc}); parsing the jar again",
            DamagedCacheWarning,
            stacklevel=2,
        )
    table = _parse_synsets()
    try:
        dump_checked((table.synsets.lines(), table.exceptions), path)  # type: ignore[attr-defined]
        for pattern in ("meteor-synsets-v*.checked-pickle", "meteor-synsets-v*.pickle"):
            for stale in path.parent.glob(pattern):
                if stale != path:  # tables of another jar or format
                    stale.unlink(missing_ok=True)
    except OSError:
        pass  # an unwritable cache only costs speed
    return table


def _parse_synsets() -> MeteorSynsets:
    lines: dict[str, str] = dict(_pairs(_jar_text("synonym/english.synsets")))
    exceptions: dict[str, list[str]] = {}
    for base, forms in _pairs(_jar_text("synonym/english.exceptions")):
        for form in forms.split():
            exceptions.setdefault(form, []).append(base)
    return MeteorSynsets(SynsetTable(lines), {k: tuple(v) for k, v in exceptions.items()})


@functools.cache
def synset_members() -> Mapping[int, tuple[str, ...]]:
    """The reverse of :func:`meteor_synsets`: synset id -> its word forms, sorted.

    The perturbation lab draws synonyms from it (product brief: "WordNet synonyms for
    perturbations come from METEOR's synonym file").

    >>> any("kid" in synset_members()[i] for i in meteor_synsets().synsets["child"])
    True
    """
    members: dict[int, list[str]] = {}
    for word, ids in meteor_synsets().synsets.items():
        for i in ids:
            members.setdefault(i, []).append(word)
    return {i: tuple(sorted(words)) for i, words in members.items()}


# -- paraphrase index --------------------------------------------------------------------------

# Phrase hashes: FNV-1a over the UTF-8 bytes, finished by MurmurHash3's 64-bit mixer. The
# compiled twin is in capeval_core.meteor_kernel; both are checked equal by the tests.
_MASK = (1 << 64) - 1
_FNV_OFFSET = 0xCBF29CE484222325
_FNV_PRIME = 0x100000001B3


def phrase_hash(phrase: bytes) -> int:
    """The index's 64-bit hash of one phrase (its UTF-8 bytes)."""
    h = _FNV_OFFSET
    for byte in phrase:
        h = ((h ^ byte) * _FNV_PRIME) & _MASK
    h ^= h >> 33
    h = (h * 0xFF51AFD7ED558CCD) & _MASK
    h ^= h >> 33
    h = (h * 0xC4CEB9FE1A85EC53) & _MASK
    return h ^ (h >> 33)


def paraphrase_table() -> Path:
    """Path of ``data/paraphrase-en.gz`` beside the jar."""
    return pycocoevalcap_file(PARAPHRASE_TABLE)


def paraphrase_index_path() -> Path:
    """Where the paraphrase index lives in the cache."""
    return cache_dir() / f"meteor-paraphrase-en-v{INDEX_FORMAT}.idx"


#: Names of paraphrase index files of any format (the ones to clean up after a rebuild).
_INDEX_GLOBS = ("meteor-paraphrase-en-v*.idx", "meteor-paraphrase-en.v*.idx")


# Sections of the index file, in file order: name, dtype. Offsets and lengths go in a JSON
# header. The table lists the entries of one phrase 1 together (sorted, in the file
# pycocoevalcap ships), and the index keeps them so: one key per phrase 1, its entries in
# table order, which decides the generation order of paraphrase matches (§5.4).
_SECTIONS = (
    ("phrase_slots", "<u8"),  # open addressing: (hash >> 32) << 32 | (phrase + 1), 0 empty
    ("phrase_hash", "<u8"),  # each phrase 1 and each word prefix of one: its hash,
    ("phrase_key", "<i4"),  # its key number (-1: only a prefix)
    ("phrase_prefix", "u1"),  # and whether it is a prefix of a phrase 1
    ("key_hash", "<u8"),  # hash of each distinct phrase 1
    ("key_entry_offsets", "<i8"),  # n_keys + 1: the entries of key k are [off[k], off[k+1])
    ("key_text_offsets", "<i8"),  # n_keys + 1 offsets into key_text
    ("target_hash", "<u8"),  # per entry: hash of its phrase 2
    ("target_words", "u1"),  # per entry: words in its phrase 2
    ("target_start", "<u4"),  # per entry: its phrase 2 is target_text[start:end]
    ("target_end", "<u4"),
    ("key_text", "u1"),  # UTF-8 phrase-1 strings, in key order
    ("target_text", "u1"),  # UTF-8 phrase-2 strings, in entry order
)


def _decompress(raw: bytes) -> bytes:
    """The whole table as bytes (every gzip member, as ``gzip`` reads them)."""
    parts = []
    while raw:
        inflate = zlib.decompressobj(wbits=31)
        parts.append(inflate.decompress(raw))
        parts.append(inflate.flush())
        if not inflate.eof:
            raise ResourceError("the paraphrase table is truncated")
        raw = inflate.unused_data.lstrip(b"\0")  # gzip allows zero padding between members
    return b"".join(parts)


def _regroup(raw: bytes) -> bytes:
    """The table with each phrase 1's entries together, in table order (only for a table
    that does not list them together, as the one pycocoevalcap ships does)."""
    lines = raw.split(b"\n")
    if raw.endswith(b"\n"):
        lines.pop()
    lines += [b""] * (-len(lines) % 3)
    groups: dict[bytes, list[bytes]] = {}
    for k in range(0, len(lines), 3):
        groups.setdefault(lines[k + 1].rstrip(b"\r"), []).extend(lines[k : k + 3])
    return b"\n".join(itertools.chain.from_iterable(groups.values())) + b"\n"


def _parse_whole(data: np.ndarray):
    """Parse a whole decompressed table, a few megabytes per call (bounded room)."""
    from capeval_core import meteor_kernel as kernel

    parse = kernel.TableParse()
    parse.data = data
    for end in range(1 << 23, len(data), 1 << 23):
        parse.parse(data, end, False)
    parse.parse(data, len(data), True)
    return parse


#: compressed bytes inflated per call (4.4 MB of table): small enough for the parse to follow
#: closely, large enough that the GIL is not taken back too often (measured: 1 MB beat 256 KB,
#: 4 MB and 16 MB)
_INFLATE_CHUNK = 1 << 20


def _parse_streaming(raw: bytes):
    """Parse the table while it is being decompressed (a second thread inflates into a
    buffer of the size the gzip trailer gives): the parse costs little more than the
    decompression. None where this does not apply (several gzip members, a size that does
    not match, bytes that are not UTF-8, phrases 1 not listed together): then the caller
    takes the whole table at once."""
    from capeval_core import meteor_kernel as kernel

    size = int.from_bytes(raw[-4:], "little") if len(raw) >= 18 else 0
    if size == 0:
        return None
    data = np.empty(size, dtype=np.uint8)
    cond = threading.Condition()
    progress = {"filled": 0, "done": False, "ok": False}

    def inflate() -> None:
        filled, ok = 0, False
        try:
            unzip = zlib.decompressobj(wbits=31)
            view = memoryview(raw)
            for start in range(0, len(raw), _INFLATE_CHUNK):
                out = unzip.decompress(view[start : start + _INFLATE_CHUNK])
                if filled + len(out) > size:
                    break
                data[filled : filled + len(out)] = np.frombuffer(out, dtype=np.uint8)
                filled += len(out)
                with cond:
                    progress["filled"] = filled
                    cond.notify()
                if unzip.eof:
                    break
            ok = unzip.eof and filled == size and not unzip.unused_data.strip(b"\0")
        except zlib.error:
            ok = False
        finally:
            with cond:
                progress["done"], progress["ok"] = True, ok
                cond.notify()

    thread = threading.Thread(target=inflate, name="capeval-meteor-inflate")
    thread.start()
    parse = kernel.TableParse()
    parse.data = data
    seen = 0
    try:
        while True:
            with cond:
                while progress["filled"] == seen and not progress["done"]:
                    cond.wait()
                filled, done, ok = progress["filled"], progress["done"], progress["ok"]
            if done and not ok:
                return None
            parse.parse(data, filled, done)
            if parse.state[kernel.INVALID]:
                return None
            seen = filled
            if done:
                break
    finally:
        thread.join()
    return parse if parse.state[kernel.ORDERED] else None


def _index_arrays(source: Path, stamping: Future | None = None) -> tuple[dict, dict]:
    """The index's header (without the file layout) and arrays, computed from the table
    (compiled, numba)."""
    from capeval_core import meteor_kernel as kernel

    raw = source.read_bytes()
    parsed = _parse_streaming(raw)
    if parsed is None:
        table = _decompress(raw)
        data = np.frombuffer(table, dtype=np.uint8)
        if not kernel.utf8_valid(data):
            # the jar reads the table as UTF-8 text: undecodable bytes become U+FFFD
            table = table.decode("utf-8", "replace").encode("utf-8")
            data = np.frombuffer(table, dtype=np.uint8)
        parsed = _parse_whole(data)
        if not parsed.state[kernel.ORDERED]:
            parsed = _parse_whole(np.frombuffer(_regroup(table), dtype=np.uint8))
    del raw
    state = parsed.state
    n, n_keys = int(state[kernel.N_ENTRIES]), int(state[kernel.N_KEYS])
    key_hash, key_text_off = parsed.key_hash[:n_keys], parsed.key_text_off[: n_keys + 1]
    key_text = parsed.key_text[: key_text_off[-1]]
    max_words = int(state[kernel.LONGEST])
    if max_words > 255:
        raise ResourceError(f"{source} is beyond what the paraphrase index holds")
    phrase_slots, phrase_hash, phrase_key, phrase_prefix = kernel.phrase_table(
        key_hash, key_text, key_text_off
    )
    arrays = {
        "phrase_slots": phrase_slots,
        "phrase_hash": phrase_hash,
        "phrase_key": phrase_key,
        "phrase_prefix": phrase_prefix,
        "key_hash": key_hash,
        "key_entry_offsets": parsed.runs[: n_keys + 1],
        "key_text_offsets": key_text_off,
        "key_text": key_text,
        "target_hash": parsed.target_hash[:n],
        "target_words": parsed.target_words[:n],
        # phrase 2 of entry e is target_text[target_start[e]:target_end[e]]: here the
        # decompressed table itself, in the file a compact copy (_file_sections)
        "target_start": parsed.target_start[:n],
        "target_end": parsed.target_end[:n],
        "target_text": parsed.data,
    }
    header: dict = {
        "format": INDEX_FORMAT,
        "source": source.name,
        "source_stamp": stamping.result() if stamping else table_stamp(source),
        "n_keys": n_keys,
        "n_entries": n,
        "max_words": max_words,
    }
    return header, arrays


def _shipped_arrays(source: Path, stamping: Future | None = None) -> tuple[dict, dict] | None:
    """The index from the file the package ships (:mod:`capeval_core.meteor_shipped`) when it
    was made from this very table (same :func:`table_stamp`); None where it is absent, or
    made from another table or in another format, or unreadable (then one line on stderr
    says so, and the caller indexes the table itself)."""
    from capeval_core import meteor_shipped

    path = meteor_shipped.shipped_path()
    if not path.is_file():
        return None
    built: tuple[dict, dict] | None = None
    made_from = problem = ""
    try:
        meta = meteor_shipped.shipped_meta(path)
        made_from = str(meta.get("source_stamp"))
        if meta.get("format") != meteor_shipped.SHIPPED_FORMAT:
            problem = f"is of format {meta.get('format')}, not {meteor_shipped.SHIPPED_FORMAT}"
        elif made_from.split("-")[0] == str(source.stat().st_size):  # cheap: the size first
            built = meteor_shipped.decode(path)
    except Exception as exc:  # a damaged or foreign file: ValueError, KeyError, OSError, ...
        problem = f"cannot be read ({type(exc).__name__}: {exc})"
    stamp = stamping.result() if stamping else table_stamp(source)
    if built is not None and built[0]["source_stamp"] == stamp:
        built[0]["source"] = source.name
        return built
    if made_from and not problem:
        problem = f"was made from another table ({made_from}) than {source} ({stamp})"
    print(
        f"capeval: the paraphrase index shipped in {path.name} {problem}; "
        f"indexing {source} instead",
        file=sys.stderr,
        flush=True,
    )
    return None


def _file_sections(header: dict, arrays: dict[str, np.ndarray]):
    """The file's header and sections from the arrays of :func:`_index_arrays` (the phrases
    2 gathered into one compact text) or of the shipped file (written as they are)."""
    from capeval_core import meteor_kernel as kernel

    if arrays["target_text"].size >= 1 << 32 or arrays["target_start"].dtype != np.uint32:
        text, offsets = kernel.gather(
            arrays["target_text"], arrays["target_start"], arrays["target_end"]
        )
        if text.size >= 1 << 32:
            raise ResourceError("the paraphrase table is beyond what the paraphrase index holds")
        arrays = {
            **arrays,
            "target_text": text,
            "target_start": offsets[:-1],
            "target_end": offsets[1:],
        }
    sections, contiguous = section_file.lay_out(_SECTIONS, arrays)
    return {**header, "sections": sections}, contiguous


def _write_index(dest: Path, header: dict, sections: dict[str, np.ndarray]) -> None:
    section_file.write(dest, _MAGIC, header, sections)


def build_paraphrase_index(source: Path, dest: Path, *, quiet: bool = False) -> Path:
    """Turn the paraphrase table into the index file ``dest`` (written atomically).

    Compiled (numba): about two seconds and 700 MB while it runs; done once per machine.
    """
    started = time.perf_counter()
    _announce(source, quiet)
    _write_index(dest, *_file_sections(*_index_arrays(source)))
    if not quiet:
        print(
            f"capeval: paraphrase index ready: {dest} ({dest.stat().st_size / 1e6:.0f} MB, "
            f"{time.perf_counter() - started:.1f} s)",
            file=sys.stderr,
            flush=True,
        )
    return dest


def _announce(source: Path, quiet: bool) -> None:
    if not quiet:
        print(
            f"capeval: indexing METEOR's paraphrase table {source.name} (once, a few seconds)",
            file=sys.stderr,
            flush=True,
        )


class ParaphraseIndex:
    """Read-only, memory-mapped view of the paraphrase table (§5.3, §5.4 "Paraphrase").

    The only question METEOR asks is "which entries have phrase 1 equal to the words
    ``w[k:k+L]`` of a sentence": a hash table of the distinct phrases 1 answers it, and every
    hit is confirmed against the stored text, so hash collisions cannot create matches. The
    compiled aligner reads the same arrays (:attr:`arrays`); the methods here are the
    pure-Python reference.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._targets_cache: dict[int, tuple[str, ...]] = {}
        self._file: section_file.SectionFile | None = section_file.SectionFile(
            path, _MAGIC, "paraphrase index"
        )
        self.header = self._file.header
        #: the sections by name, as the compiled aligner takes them (phrase 2 of entry e is
        #: ``target_text[target_start[e]:target_end[e]]``)
        self.arrays: dict[str, np.ndarray] = self._file.arrays
        self.max_words: int = int(self.header["max_words"])

    @classmethod
    def in_memory(cls, path: Path, header: dict, arrays: dict[str, np.ndarray]):
        """The index from freshly computed arrays, before (or while) ``path`` is written."""
        index = cls.__new__(cls)
        index.path = path
        index._targets_cache = {}
        index._file = None
        index.header = header
        index.arrays = dict(arrays)
        if arrays["target_text"].size < 1 << 32:
            # the file's offset type (uint32): the compiled aligner then has one
            # specialization for both indexes, not a second compile (seconds, on a first
            # run after installing) for the file read by the later parts of a run
            for name in ("target_start", "target_end"):
                index.arrays[name] = arrays[name].astype(np.uint32, copy=False)
        for arr in index.arrays.values():
            arr.flags.writeable = False  # as the memory-mapped sections are
        index.max_words = int(header["max_words"])
        return index

    def __len__(self) -> int:
        return int(self.header["n_entries"])

    def intact(self) -> bool:
        """Whether the file's content matches the CRC-32 written when it was built (any
        changed byte after the checksum field, header included, fails)."""
        return self._file is not None and self._file.intact()

    def find_key(self, phrase: str) -> int:
        """Key number of one phrase 1 (-1 where the table has no entry for it)."""
        text = phrase.encode("utf-8", "surrogatepass")  # a lone surrogate matches nothing
        h = phrase_hash(text)
        a = self.arrays
        slots, hashes, keys = a["phrase_slots"], a["phrase_hash"], a["phrase_key"]
        offsets, key_text = a["key_text_offsets"], a["key_text"]
        mask = len(slots) - 1
        s = h & mask
        while slot := int(slots[s]):
            phrase = (slot & 0xFFFFFFFF) - 1
            k = int(keys[phrase])
            if (
                int(hashes[phrase]) == h
                and k >= 0
                and key_text[offsets[k] : offsets[k + 1]].tobytes() == text
            ):
                return k
            s = (s + 1) & mask
        return -1

    def targets(self, key: int) -> tuple[str, ...]:
        """The phrase-2 strings of a key, in table order (cached: common keys recur)."""
        cached = self._targets_cache.get(key)
        if cached is None:
            a = self.arrays
            first, last = a["key_entry_offsets"][key : key + 2].tolist()
            text = a["target_text"]
            cached = tuple(
                text[x:y].tobytes().decode("utf-8")
                for x, y in zip(
                    a["target_start"][first:last].tolist(),
                    a["target_end"][first:last].tolist(),
                    strict=True,
                )
            )
            if len(self._targets_cache) > 100_000:  # bounded: a long-running app sees many
                self._targets_cache.clear()
            self._targets_cache[key] = cached
        return cached

    def lookup(self, phrase: str) -> tuple[str, ...]:
        """Paraphrases (phrase 2) of one phrase, in the table's order.

        >>> "sits" in paraphrase_index().lookup("is sitting")
        True
        """
        key = self.find_key(phrase)
        return self.targets(key) if key >= 0 else ()

    def sentence_keys(self, words: Sequence[str]) -> list[tuple[int, int, int]]:
        """``(start, length, key)`` of every span of ``words`` that is a phrase 1, ordered by
        start then length (the order of METEOR's trie walk from each start).

        >>> idx = paraphrase_index()
        >>> [(s, n) for s, n, _ in idx.sentence_keys("a man is sitting".split())][:4]
        [(0, 2), (1, 1), (1, 2), (2, 1)]
        """
        found = []
        for start in range(len(words)):
            for length in range(1, min(self.max_words, len(words) - start) + 1):
                key = self.find_key(" ".join(words[start : start + length]))
                if key >= 0:
                    found.append((start, length, key))
        return found


_INDEX: ParaphraseIndex | None = None


def table_stamp(source: Path) -> str:
    """:func:`~capeval_core.resources.source_stamp` of the table, remembered in the cache per
    file version (path, size, modification time): hashing 60 MB would cost every process
    that opens the index (scoring workers included) a tenth of a second."""
    st = source.stat()
    version = f"{source.resolve()}\n{st.st_size}\n{st.st_mtime_ns}\n"
    memo = cache_dir() / "meteor-paraphrase-en.stamp"
    with contextlib.suppress(OSError, UnicodeDecodeError):
        known = memo.read_text("utf-8")
        if known.startswith(version) and known.count("\n") == 4:
            return known[len(version) :].strip()
    stamp = source_stamp(source)
    with contextlib.suppress(OSError), atomic_write(memo, "w") as fh:
        fh.write(version + stamp + "\n")
    return stamp


class _Build:
    """The index built by a background thread of this process (its GIL-free parts, zlib
    and the compiled kernels, overlap the caller's own start-up). The sections are handed
    over as soon as they are computed; the thread then writes the file, holding the build
    lock until it is complete, so other processes wait for it and then read it."""

    def __init__(self, source: Path, path: Path, stamp: str | None) -> None:
        self.source, self.path, self.stamp = source, path, stamp
        self.pid = os.getpid()
        self.index: ParaphraseIndex | None = None
        self.error: BaseException | None = None
        self.ready = threading.Event()
        self.thread = threading.Thread(target=self._run, name="capeval-meteor-index")
        self.thread.start()

    def _run(self) -> None:
        try:
            with build_lock(self.path):
                stamping = None
                if self.stamp is None and not self.path.exists():
                    # hashing the table (its identity, for the header) overlaps the build
                    pool = ThreadPoolExecutor(1)
                    stamping = pool.submit(table_stamp, self.source)
                    pool.shutdown(wait=False)  # the task still runs; no thread is left over
                elif self.stamp is None:
                    self.stamp = table_stamp(self.source)
                index, _ = (None, None) if stamping else _current_index(self.path, self.stamp)
                if index is None:
                    started = time.perf_counter()
                    shipped = _shipped_arrays(self.source, stamping)
                    if shipped is None:
                        _announce(self.source, quiet=False)
                    header, arrays = shipped or _index_arrays(self.source, stamping)
                    self.index = ParaphraseIndex.in_memory(self.path, header, arrays)
                    self.ready.set()
                    _write_index(self.path, *_file_sections(header, arrays))
                    del arrays
                    index = ParaphraseIndex(self.path)
                    _remember_intact(index)
                    _remove_stale(self.path)
                    if shipped is None:
                        print(
                            f"capeval: paraphrase index ready: {self.path} "
                            f"({self.path.stat().st_size / 1e6:.0f} MB, "
                            f"{time.perf_counter() - started:.1f} s)",
                            file=sys.stderr,
                            flush=True,
                        )
                self.index = index  # the memory-mapped file from now on
        except BaseException as exc:  # handed to the caller of result()
            self.error = exc
        finally:
            self.ready.set()

    def result(self) -> ParaphraseIndex:
        """The index as soon as its sections exist (the file may still be being written)."""
        self.ready.wait()
        if self.index is None:
            raise self.error  # type: ignore[misc]
        return self.index

    def finish(self) -> ParaphraseIndex:
        """The index once the file is written (or its writing failed: then the sections)."""
        self.thread.join()
        return self.result()


_BUILD: _Build | None = None


def _forget_build_in_child() -> None:
    global _BUILD
    _BUILD = None  # a forked child has no copy of the thread


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_build_in_child)


def prefetch_paraphrase_index() -> None:
    """Start building the paraphrase index in the background if this machine has none;
    returns at once. :func:`paraphrase_index` then waits for it."""
    _start()


_START_LOCK = threading.Lock()  # threads of one process (the app's) start one build


def _start() -> ParaphraseIndex | _Build:
    """The current index, or the build of it that is running in this process."""
    with _START_LOCK:
        return _start_locked()


def _start_locked() -> ParaphraseIndex | _Build:
    global _INDEX, _BUILD
    source = paraphrase_table()
    if _BUILD is not None and _BUILD.source == source and _BUILD.pid == os.getpid():
        return _BUILD
    path = paraphrase_index_path()
    if _INDEX is None and not path.exists():  # a first run: the build hashes the table
        _BUILD = _Build(source, path, None)
        return _BUILD
    stamp = table_stamp(source)
    if _INDEX is not None and _INDEX.header.get("source_stamp") == stamp:
        return _INDEX
    index, problem = _current_index(path, stamp)
    if index is not None:
        _INDEX = index
        return index
    if problem:
        warnings.warn(
            f"the METEOR paraphrase index {path} is damaged ({problem}); rebuilding it",
            DamagedCacheWarning,
            stacklevel=5,  # the caller of paraphrase_index or of the metric
        )
    _BUILD = _Build(source, path, stamp)
    return _BUILD


def paraphrase_index(*, wait_for_file: bool = True) -> ParaphraseIndex:
    """The paraphrase index, made on first use (from the shipped index where it was made from
    this table, else from the table itself, with one line on stderr) and then memory-mapped.

    Rebuilt when the table's :func:`~capeval_core.resources.source_stamp` changes, the index
    format of this capeval version differs, or the file fails its checksum (then with one
    :class:`~capeval_core.errors.DamagedCacheWarning`). ``wait_for_file=False`` returns a
    freshly built index before its file is written (the caller waits with
    :func:`paraphrase_index_written`).
    """
    global _INDEX, _BUILD
    found = _start()
    if isinstance(found, ParaphraseIndex):
        return found
    if not wait_for_file:
        return found.result()
    index = found.finish()
    if found is _BUILD:
        _INDEX, _BUILD = index, None
    return index


def paraphrase_index_written() -> None:
    """Wait until a paraphrase index this process is building is written to its file."""
    global _INDEX, _BUILD
    build = _BUILD
    if build is not None and build.pid == os.getpid():
        index = build.finish()
        if build is _BUILD:
            _INDEX, _BUILD = index, None


def _remove_stale(path: Path) -> None:
    for pattern in _INDEX_GLOBS:
        for stale in path.parent.glob(pattern):
            if stale != path:  # indexes of other capeval formats
                stale.unlink(missing_ok=True)
                _checked_path(stale).unlink(missing_ok=True)


def _current_index(path: Path, stamp: str) -> tuple[ParaphraseIndex | None, str | None]:
    """The index at ``path`` if it is intact and built from this table by this format, else
    None and what is wrong with the file (None where it is merely absent or outdated)."""
    if not path.is_file():
        return None, None
    try:
        index = ParaphraseIndex(path)
    except ResourceError as exc:
        return None, str(exc)
    except Exception as exc:  # truncated or foreign file: ValueError, KeyError, OSError, ...
        return None, f"unreadable: {type(exc).__name__}: {exc}"
    if index.header.get("source_stamp") != stamp or index.header.get("format") != INDEX_FORMAT:
        return None, None
    if not _known_intact(index):
        if not index.intact():
            return None, "its content does not match its checksum"
        _remember_intact(index)
    return index, None


def _checked_path(path: Path) -> Path:
    return path.with_name(path.name + ".checked")


def _file_version(path: Path) -> str:
    st = path.stat()
    return f"{st.st_size}-{st.st_mtime_ns}-{st.st_ino}"


def _known_intact(index: ParaphraseIndex) -> bool:
    """Whether this version of the file (size, mtime, inode) passed its checksum before: the
    check reads the whole 190 MB file, which a fresh process otherwise never does."""
    try:
        return _checked_path(index.path).read_text() == _file_version(index.path)
    except OSError:
        return False


def _remember_intact(index: ParaphraseIndex) -> None:
    try:
        with atomic_write(_checked_path(index.path), "w") as fh:
            fh.write(_file_version(index.path))
    except OSError:
        pass  # an unwritable cache only costs the check again
