"""METEOR 1.5's language resources, read offline from what pycocoevalcap installs.

* Function words, WordNet synsets and irregular inflections, and the non-breaking prefixes of
  the normaliser live inside ``meteor-1.5.jar``; they are read with :mod:`zipfile`
  (metric-spec §5.3), never copied into the project.
* The paraphrase table ``data/paraphrase-en.gz`` (5.27 M entries) is turned once into a
  compact index file in :func:`~capeval_core.resources.cache_dir` that later processes
  memory-map, so a fresh process opens it in milliseconds and only touches the pages that
  its sentences need (see :class:`ParaphraseIndex`).

:func:`meteor_synsets` is public because SPICE reuses METEOR's WordNet synonym sets.
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import io
import json
import mmap
import sys
import time
import warnings
import zipfile
from array import array
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from capeval_core.errors import DamagedCacheWarning, MissingResourceError, ResourceError
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

#: Bumped whenever the index layout changes, so stale files are rebuilt rather than misread.
#: Format 4 adds the SHA-256 of everything after it, checked once per file version.
INDEX_FORMAT = 4
_MAGIC = b"CAPEVAL-METEOR-PARAPHRASE\n"
_DIGEST_SIZE = 32


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


#: Bumped whenever the cached synonym tables change shape.
SYNSETS_FORMAT = 1


@functools.cache
def meteor_synsets() -> MeteorSynsets:
    """Load ``synonym/english.synsets`` and ``synonym/english.exceptions`` from the jar (§5.3).

    ``english.relations`` is not loaded: the 1.5 jar does not use it. The parsed tables are
    cached in the user cache directory, keyed by the jar's content (reading them back takes
    a quarter of the 0.8 s parsing does, in every process that aligns).

    >>> len(meteor_synsets().synsets) > 100_000
    True
    """
    path = cache_dir() / (
        f"meteor-synsets-v{SYNSETS_FORMAT}-{source_stamp(meteor_jar())}.checked-pickle"
    )
    try:
        synsets, exceptions = load_checked(path)
        if isinstance(synsets, dict) and isinstance(exceptions, dict):
            return MeteorSynsets(synsets, exceptions)
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
        dump_checked((table.synsets, table.exceptions), path)
        for pattern in ("meteor-synsets-v*.checked-pickle", "meteor-synsets-v*.pickle"):
            for stale in path.parent.glob(pattern):
                if stale != path:  # tables of another jar or format
                    stale.unlink(missing_ok=True)
    except OSError:
        pass  # an unwritable cache only costs speed
    return table


def _parse_synsets() -> MeteorSynsets:
    synsets: dict[str, frozenset[int]] = {}
    interned: dict[str, frozenset[int]] = {}  # many words share the same id line
    for word, ids in _pairs(_jar_text("synonym/english.synsets")):
        value = interned.get(ids)
        if value is None:
            value = interned[ids] = frozenset(int(i) for i in ids.split())
        synsets[word] = value
    exceptions: dict[str, list[str]] = {}
    for base, forms in _pairs(_jar_text("synonym/english.exceptions")):
        for form in forms.split():
            exceptions.setdefault(form, []).append(base)
    return MeteorSynsets(synsets, {k: tuple(v) for k, v in exceptions.items()})


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


def _word_hash(word: bytes) -> int:
    """A stable 64-bit hash of one word (Python's ``hash`` is salted per process)."""
    return int.from_bytes(hashlib.blake2b(word, digest_size=8).digest(), "little")


#: Phrase hashes roll word hashes: H(w1..wL) = H(w1..wL-1) * _ROLL + h(wL) (mod 2**64), so a
#: whole sentence's spans are hashed with a few vectorised numpy operations.
_ROLL = 0x9E3779B97F4A7C15
_MASK = (1 << 64) - 1


def _phrase_hash(phrase: bytes, cache: dict[bytes, int]) -> int:
    value = 0
    for word in phrase.split(b" "):
        h = cache.get(word)
        if h is None:
            h = cache[word] = _word_hash(word)
        value = (value * _ROLL + h) & _MASK
    return value


def paraphrase_table() -> Path:
    """Path of ``data/paraphrase-en.gz`` beside the jar."""
    return pycocoevalcap_file(PARAPHRASE_TABLE)


def paraphrase_index_path() -> Path:
    """Where the paraphrase index lives in the cache."""
    return cache_dir() / f"meteor-paraphrase-en-v{INDEX_FORMAT}.idx"


#: Names of paraphrase index files of any format (the ones to clean up after a rebuild).
_INDEX_GLOBS = ("meteor-paraphrase-en-v*.idx", "meteor-paraphrase-en.v*.idx")


# Sections of the index file, in file order: name, dtype. Offsets and lengths go in a JSON
# header. Phrase-1 keys are sorted by hash; entries keep the table's file order per key, which
# decides the generation order of paraphrase matches (§5.4).
_SECTIONS = (
    ("key_hash", "<u8"),  # rolling hash of each distinct phrase 1, sorted
    ("key_text_offsets", "<u8"),  # n_keys + 1 offsets into key_text
    ("key_entry_offsets", "<u8"),  # n_keys + 1 offsets into entry_target
    ("entry_target", "<u4"),  # phrase-2 id of each entry
    ("target_text_offsets", "<u8"),  # n_targets + 1 offsets into target_text
    ("target_hash", "<u8"),  # rolling hash of each distinct phrase 2
    ("key_text", "u1"),  # UTF-8 phrase-1 strings, in key order
    ("target_text", "u1"),  # UTF-8 phrase-2 strings, in id order
)


def _read_triples(source: Path):
    """Yield (phrase 1, phrase 2) as UTF-8 bytes; the probability line is ignored (§5.3)."""
    with gzip.open(source, "rb") as raw, io.BufferedReader(raw, 1 << 20) as fh:
        while True:
            prob = fh.readline()
            if not prob:
                return
            first = fh.readline().rstrip(b"\r\n")
            second = fh.readline().rstrip(b"\r\n")
            # the jar reads the table as UTF-8 text; undecodable bytes become U+FFFD
            yield (
                first.decode("utf-8", "replace").encode("utf-8"),
                second.decode("utf-8", "replace").encode("utf-8"),
            )


def _data_start(header_size: int) -> int:
    start = len(_MAGIC) + _DIGEST_SIZE + 8 + header_size
    return start + (-start % 8)


def _offsets(lengths: list[int] | np.ndarray) -> np.ndarray:
    out = np.zeros(len(lengths) + 1, dtype=np.uint64)
    np.cumsum(np.asarray(lengths, dtype=np.uint64), out=out[1:])
    return out


def build_paraphrase_index(source: Path, dest: Path, *, quiet: bool = False) -> Path:
    """Turn the paraphrase table into the index file ``dest`` (written atomically).

    Takes about half a minute and a few hundred MB while it runs; done once per machine.
    """
    started = time.perf_counter()

    def say(msg: str) -> None:
        if not quiet:
            print(f"capeval: {msg}", file=sys.stderr, flush=True)

    say(f"building the METEOR paraphrase index from {source.name} (once, about a minute) ...")
    key_ids: dict[bytes, int] = {}
    target_ids: dict[bytes, int] = {}
    entry_key = array("I")
    entry_target = array("I")
    for n, (first, second) in enumerate(_read_triples(source), 1):
        k = key_ids.get(first)
        if k is None:
            k = key_ids[first] = len(key_ids)
        t = target_ids.get(second)
        if t is None:
            t = target_ids[second] = len(target_ids)
        entry_key.append(k)
        entry_target.append(t)
        if n % 1_000_000 == 0:
            say(f"  {n:,} paraphrases read")
    keys = list(key_ids)
    del key_ids
    word_hashes: dict[bytes, int] = {}
    hashes = np.fromiter(
        (_phrase_hash(k, word_hashes) for k in keys), dtype=np.uint64, count=len(keys)
    )
    order = np.argsort(hashes, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    entry_rank = rank[np.frombuffer(entry_key, dtype=np.uint32)]
    # stable: the entries of one key stay in file order
    entry_order = np.argsort(entry_rank, kind="stable")
    targets = list(target_ids)
    del target_ids
    sections = {
        "key_hash": hashes[order],
        "key_text_offsets": _offsets([len(keys[i]) for i in order]),
        "key_entry_offsets": _offsets(np.bincount(entry_rank, minlength=len(keys))),
        "entry_target": np.frombuffer(entry_target, dtype=np.uint32)[entry_order],
        "target_text_offsets": _offsets([len(t) for t in targets]),
        "target_hash": np.fromiter(
            (_phrase_hash(t, word_hashes) for t in targets), dtype=np.uint64, count=len(targets)
        ),
        "key_text": np.frombuffer(b"".join(keys[i] for i in order), dtype=np.uint8),
        "target_text": np.frombuffer(b"".join(targets), dtype=np.uint8),
    }
    header: dict = {
        "format": INDEX_FORMAT,
        "source": source.name,
        "source_stamp": source_stamp(source),
        "n_keys": len(keys),
        "n_entries": len(entry_target),
        "n_targets": len(targets),
        "max_words": max(p.count(b" ") + 1 for p in (*keys, *targets)),
        "sections": {},
    }
    # lay the sections out after the header, each aligned to 8 bytes
    pos = 0
    layout = {}
    for name, dtype in _SECTIONS:
        arr = sections[name].astype(dtype, copy=False)
        layout[name] = (pos, len(arr))
        pos += arr.nbytes + (-arr.nbytes % 8)
    header["sections"] = {
        name: [layout[name][0], layout[name][1], dtype] for name, dtype in _SECTIONS
    }
    head = json.dumps(header).encode()
    # the data starts after magic, header length and header, aligned to 8 bytes
    base = _data_start(len(head))
    digest = hashlib.sha256()

    def write(data: bytes) -> None:
        digest.update(data)
        out.write(data)

    with atomic_write(dest) as out:
        out.write(_MAGIC)
        out.write(b"\0" * _DIGEST_SIZE)  # filled in below, once everything after it is known
        write(len(head).to_bytes(8, "little"))
        write(head)
        write(b"\0" * (base - out.tell()))
        for name, dtype in _SECTIONS:
            arr = sections[name].astype(dtype, copy=False)
            write(arr.tobytes())
            write(b"\0" * (-arr.nbytes % 8))
        out.seek(len(_MAGIC))
        out.write(digest.digest())
    say(
        f"paraphrase index ready: {dest} ({dest.stat().st_size / 1e6:.0f} MB, "
        f"{time.perf_counter() - started:.0f} s)"
    )
    return dest


class ParaphraseIndex:
    """Read-only, memory-mapped view of the paraphrase table (§5.3, §5.4 "Paraphrase").

    The only question METEOR asks is "which entries have phrase 1 equal to the words
    ``w[k:k+L]`` of a sentence", which a sorted array of phrase hashes answers for a whole
    sentence in one :func:`numpy.searchsorted`; every hit is confirmed against the stored
    text, so hash collisions cannot create matches.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        with open(path, "rb") as fh:
            self._mm = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
        mm = self._mm
        if mm[: len(_MAGIC)] != _MAGIC:
            raise ResourceError(f"{path} is not a capeval paraphrase index; delete it to rebuild")
        start = len(_MAGIC) + _DIGEST_SIZE
        size = int.from_bytes(mm[start : start + 8], "little")
        start += 8
        self.header = json.loads(mm[start : start + size])
        if not isinstance(self.header, dict):
            raise ResourceError(f"{path} has no valid header; delete it to rebuild")
        base = _data_start(size)
        arrays = {}
        for name, (off, count, dtype) in self.header["sections"].items():
            arrays[name] = np.frombuffer(mm, dtype=dtype, count=count, offset=base + off)
        self._key_hash = arrays["key_hash"]
        self._key_text_off = arrays["key_text_offsets"]
        self._key_entry_off = arrays["key_entry_offsets"]
        self._entry_target = arrays["entry_target"]
        self._target_off = arrays["target_text_offsets"]
        self._target_hash = arrays["target_hash"]
        self._key_text_base = base + self.header["sections"]["key_text"][0]
        self._target_text_base = base + self.header["sections"]["target_text"][0]
        self.max_words: int = int(self.header["max_words"])
        self._word_hash_cache: dict[str, int] = {}
        self._targets_cache: dict[int, tuple[tuple[str, ...], dict[str, tuple[int, ...]]]] = {}

    def __len__(self) -> int:
        return int(self.header["n_entries"])

    def intact(self) -> bool:
        """Whether the file's content matches the SHA-256 written when it was built (any
        changed byte after the digest, header included, fails)."""
        start = len(_MAGIC) + _DIGEST_SIZE
        stored = self._mm[len(_MAGIC) : start]
        return hashlib.sha256(memoryview(self._mm)[start:]).digest() == stored

    def _key_text(self, key: int) -> bytes:
        a, b = int(self._key_text_off[key]), int(self._key_text_off[key + 1])
        return self._mm[self._key_text_base + a : self._key_text_base + b]

    def _word_hashes(self, words: Sequence[str]) -> np.ndarray:
        cache = self._word_hash_cache
        out = []
        for w in words:
            h = cache.get(w)
            if h is None:
                if len(cache) > 500_000:
                    cache.clear()
                h = cache[w] = _word_hash(w.encode("utf-8"))
            out.append(h)
        return np.array(out, dtype=np.uint64)

    def _confirm(self, pos: int, query: int, phrase: bytes) -> int:
        """Key number at or after ``pos`` with hash ``query`` and text ``phrase``, or -1."""
        n = len(self._key_hash)
        while pos < n and int(self._key_hash[pos]) == query:
            if self._key_text(pos) == phrase:
                return pos
            pos += 1
        return -1

    def find_key(self, phrase: str) -> int:
        """Key number of one phrase 1 (-1 where the table has no entry for it)."""
        words = phrase.split(" ")
        hashes = self._word_hashes(words).tolist()
        query = 0
        for h in hashes:
            query = (query * _ROLL + h) & _MASK
        pos = int(np.searchsorted(self._key_hash, np.uint64(query)))
        return self._confirm(pos, query, phrase.encode("utf-8"))

    def targets(self, key: int) -> tuple[tuple[str, ...], dict[int, tuple[int, ...]]]:
        """The phrase-2 strings of a key in file order, and a map from each phrase-2 hash to
        its positions in that list (cached: common keys recur in every sentence)."""
        cached = self._targets_cache.get(key)
        if cached is not None:
            return cached
        a, b = int(self._key_entry_off[key]), int(self._key_entry_off[key + 1])
        ids = self._entry_target[a:b]
        base = self._target_text_base
        off = self._target_off
        texts = tuple(
            self._mm[base + int(off[t]) : base + int(off[t + 1])].decode("utf-8")
            for t in ids.tolist()
        )
        where: dict[int, list[int]] = {}
        for n, h in enumerate(self._target_hash[ids].tolist()):
            where.setdefault(h, []).append(n)
        cached = (texts, {h: tuple(v) for h, v in where.items()})
        if len(self._targets_cache) > 100_000:  # bounded: a long-running app sees many phrases
            self._targets_cache.clear()
        self._targets_cache[key] = cached
        return cached

    def lookup(self, phrase: str) -> tuple[str, ...]:
        """Paraphrases (phrase 2) of one phrase, in the table's order.

        >>> "sits" in paraphrase_index().lookup("is sitting")
        True
        """
        key = self.find_key(phrase)
        return self.targets(key)[0] if key >= 0 else ()

    def sentence_spans(
        self, words: Sequence[str]
    ) -> tuple[list[tuple[int, int, int]], dict[int, list[int]]]:
        """Look a whole sentence up at once.

        Returns every ``(start, length, key)`` with a table entry for
        ``words[start:start+length]``, ordered by start then length (the order of METEOR's
        trie walk from each start: a walk that stops early finds no more entries than exact
        look-ups of every span), and the start positions of every span by its hash, against
        which the phrase-2 hashes of :meth:`targets` are checked.
        """
        n = len(words)
        if n == 0:
            return [], {}
        word_hashes = self._word_hashes(words)
        blocks = [word_hashes]  # block L-1 holds the hashes of all spans of L words
        rolled = word_hashes
        for length in range(2, min(self.max_words, n) + 1):
            rolled = rolled[:-1] * np.uint64(_ROLL) + word_hashes[length - 1 :]
            blocks.append(rolled)
        queries = np.concatenate(blocks)
        pos = np.searchsorted(self._key_hash, queries)
        np.minimum(pos, len(self._key_hash) - 1, out=pos)
        hits = np.flatnonzero(self._key_hash[pos] == queries).tolist()
        qs = queries.tolist()
        found = []
        if hits:
            ps = pos.tolist()
            for h in hits:
                length, start = self._span_of(h, n)
                phrase = " ".join(words[start : start + length]).encode("utf-8")
                key = self._confirm(ps[h], qs[h], phrase)
                if key >= 0:
                    found.append((start, length, key))
            found.sort()
        starts: dict[int, list[int]] = {}
        k = 0
        for block in blocks:
            for start in range(len(block)):
                starts.setdefault(qs[k], []).append(start)
                k += 1
        return found, starts

    @staticmethod
    def _span_of(flat: int, n: int) -> tuple[int, int]:
        """(length, start) of position ``flat`` in the concatenated blocks of span hashes."""
        length = 1
        while flat >= n - length + 1:
            flat -= n - length + 1
            length += 1
        return length, flat

    def sentence_keys(self, words: Sequence[str]) -> list[tuple[int, int, int]]:
        """``(start, length, key)`` of every span of ``words`` that is a phrase 1.

        >>> idx = paraphrase_index()
        >>> [(s, n) for s, n, _ in idx.sentence_keys("a man is sitting".split())][:4]
        [(0, 2), (1, 1), (1, 2), (2, 1)]
        """
        return self.sentence_spans(words)[0]


_INDEX: ParaphraseIndex | None = None


def paraphrase_index() -> ParaphraseIndex:
    """The paraphrase index, built on first use (progress on stderr) and then memory-mapped.

    Rebuilt when the table's :func:`~capeval_core.resources.source_stamp` changes, the index
    format of this capeval version differs, or the file fails its checksum (then with one
    :class:`~capeval_core.errors.DamagedCacheWarning`).
    """
    global _INDEX
    source = paraphrase_table()
    stamp = source_stamp(source)
    if _INDEX is not None and _INDEX.header.get("source_stamp") == stamp:
        return _INDEX
    path = paraphrase_index_path()
    index, problem = _current_index(path, stamp)
    if index is None:
        if problem:
            warnings.warn(
                f"the METEOR paraphrase index {path} is damaged ({problem}); rebuilding it",
                DamagedCacheWarning,
                stacklevel=2,
            )
        with build_lock(path):
            index, _ = _current_index(path, stamp)  # another process may have built it meanwhile
            if index is None:
                build_paraphrase_index(source, path)
                index = ParaphraseIndex(path)
                _remember_intact(index)
                for pattern in _INDEX_GLOBS:
                    for stale in path.parent.glob(pattern):
                        if stale != path:  # indexes of other capeval formats
                            stale.unlink(missing_ok=True)
                            _checked_path(stale).unlink(missing_ok=True)
    _INDEX = index
    return index


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
    check reads the whole 130 MB file, which a fresh process otherwise never does."""
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
