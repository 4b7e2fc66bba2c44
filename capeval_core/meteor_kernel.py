"""METEOR 1.5's hot loops, compiled with numba: the paraphrase index build, the paraphrase
look-ups of a sentence, and the whole alignment of a (hypothesis, reference) pair.

Each function mirrors a pure-Python reference that stays in the project and gives the same
integers: :mod:`capeval_core.meteor_resources` (the table and its index) and
:class:`capeval_core.metrics.meteor.MeteorAligner` (candidates, beam search, statistics).
The tests compare the two paths statistic for statistic and score for score on thousands of
pairs. Sentences are passed as integer word ids (one vocabulary per process, see
:mod:`capeval_core.metrics.meteor`); the bit masks of the beam search are 64-bit, so a pair
with a side longer than :data:`MAX_WORDS` words is left to the Python aligner (marked by a
negative statistic).

Phrase hashes are FNV-1a over the UTF-8 bytes, finished by MurmurHash3's 64-bit mixer (so
the low bits index an open-addressing table well); every hash hit is confirmed against the
stored text, so a collision can never create a match.
"""

from __future__ import annotations

import numpy as np
from numba import njit

#: longest side (in words) the compiled aligner takes: one bit per word in a uint64 mask
MAX_WORDS = 64
#: the number of statistics per pair, in the jar's order (see ``MeteorStats.as_tuple``)
N_STATS = 23
BEAM_SIZE = 40
#: most candidate matches of one pair, paths of one search step (the sort keys hold the
#: path number in 16 bits) and matches chosen over a search; a pair beyond any of them
#: (never seen on COCO) is left to the Python aligner
CANDIDATES = 1 << 15
PATHS = 1 << 16
NODES = 1 << 20

FNV_OFFSET = np.uint64(0xCBF29CE484222325)
FNV_PRIME = np.uint64(0x100000001B3)
_MIX1 = np.uint64(0xFF51AFD7ED558CCD)
_MIX2 = np.uint64(0xC4CEB9FE1A85EC53)
_S33 = np.uint64(33)
_ONE = np.uint64(1)
_ZERO = np.uint64(0)
_ALL = np.uint64(0xFFFFFFFFFFFFFFFF)
_SPACE = np.uint64(32)


# -- hashing ------------------------------------------------------------------------------------


@njit(cache=True, nogil=True)
def _feed(h, byte):  # pragma: no cover - compiled
    return (h ^ np.uint64(byte)) * FNV_PRIME


@njit(cache=True, nogil=True)
def _finish(h):  # pragma: no cover - compiled
    h ^= h >> _S33
    h *= _MIX1
    h ^= h >> _S33
    h *= _MIX2
    h ^= h >> _S33
    return h


@njit(cache=True, nogil=True)
def _hash_range(data, start, end):  # pragma: no cover - compiled
    h = FNV_OFFSET
    for i in range(start, end):
        h = _feed(h, data[i])
    return _finish(h)


@njit(cache=True, nogil=True)
def _same_bytes(a, a0, a1, b, b0, b1):  # pragma: no cover - compiled
    if a1 - a0 != b1 - b0:
        return False
    for k in range(a1 - a0):  # noqa: SIM110 (a loop compiles; a generator does not)
        if a[a0 + k] != b[b0 + k]:
            return False
    return True


# -- the index build ----------------------------------------------------------------------------


_HIGH_BITS = np.uint64(0x8080808080808080)


@njit(cache=True, nogil=True)
def utf8_valid(data):  # pragma: no cover - compiled
    """Whether ``data`` is well-formed UTF-8 (Unicode table 3-7: no overlong forms, no
    surrogates, nothing above U+10FFFF), i.e. whether a strict decode would succeed."""
    n = data.shape[0]
    words = data[: n - n % 8].view(np.uint64)
    i = 0
    while i < n:
        if i % 8 == 0 and i + 8 <= n and (words[i // 8] & _HIGH_BITS) == 0:
            i += 8  # eight ASCII bytes at once
            continue
        b = data[i]
        if b < 0x80:
            i += 1
            continue
        if 0xC2 <= b <= 0xDF:
            need, lo, hi = 1, 0x80, 0xBF
        elif b == 0xE0:
            need, lo, hi = 2, 0xA0, 0xBF
        elif 0xE1 <= b <= 0xEC or 0xEE <= b <= 0xEF:
            need, lo, hi = 2, 0x80, 0xBF
        elif b == 0xED:
            need, lo, hi = 2, 0x80, 0x9F
        elif b == 0xF0:
            need, lo, hi = 3, 0x90, 0xBF
        elif 0xF1 <= b <= 0xF3:
            need, lo, hi = 3, 0x80, 0xBF
        elif b == 0xF4:
            need, lo, hi = 3, 0x80, 0x8F
        else:
            return False
        if i + need >= n:
            return False
        c = data[i + 1]
        if c < lo or c > hi:
            return False
        for k in range(2, need + 1):
            c = data[i + k]
            if c < 0x80 or c > 0xBF:
                return False
        i += need + 1
    return True


@njit(cache=True, nogil=True)
def _line_end(data, pos, end):  # pragma: no cover - compiled
    """Index of the newline ending the line at ``pos``, or ``end`` if none before it."""
    while pos < end and data[pos] != 10:
        pos += 1
    return pos


@njit(cache=True, nogil=True)
def _strip_cr(data, start, end):  # pragma: no cover - compiled
    while end > start and data[end - 1] == 13:
        end -= 1
    return end


@njit(cache=True, nogil=True)
def _bytes_less(data, a0, a1, b0, b1):  # pragma: no cover - compiled
    """data[a0:a1] < data[b0:b1] as byte strings."""
    la = a1 - a0
    lb = b1 - b0
    for k in range(min(la, lb)):
        x = data[a0 + k]
        y = data[b0 + k]
        if x != y:
            return x < y
    return la < lb


#: fields of the state array of :func:`parse_chunk`
POS, N_ENTRIES, N_KEYS, ORDERED, PREV_START, PREV_END, LONGEST, CHECKED, INVALID = range(9)


class TableParse:
    """What :func:`parse_chunk` fills, grown between calls (the kernel itself never
    reallocates: an array reassigned inside a compiled loop costs reference counting on
    every iteration)."""

    def __init__(self) -> None:
        self.state = np.zeros(9, dtype=np.int64)
        self.state[ORDERED] = 1
        self.runs = np.zeros(1 << 16, dtype=np.int64)  # first entry of each key, then the end
        self.key_hash = np.empty(1 << 16, dtype=np.uint64)
        self.key_text = np.empty(1 << 20, dtype=np.uint8)
        self.key_text_off = np.zeros(1 << 16, dtype=np.int64)
        self.target_hash = np.empty(1 << 18, dtype=np.uint64)  # per entry, of phrase 2
        self.target_words = np.empty(1 << 18, dtype=np.uint8)
        self.target_start = np.empty(1 << 18, dtype=np.int64)  # its bytes in the table
        self.target_end = np.empty(1 << 18, dtype=np.int64)

    @staticmethod
    def _room(arr: np.ndarray, need: int, used: int) -> np.ndarray:
        if need <= len(arr):
            return arr
        out = np.empty(max(need, 2 * len(arr)), dtype=arr.dtype)
        out[:used] = arr[:used]
        return out

    def parse(self, data: np.ndarray, end: int, final: bool) -> None:
        """Parse what ``data[:end]`` holds (see :func:`parse_chunk`)."""
        st = self.state
        span = end - int(st[POS])
        n, n_keys = int(st[N_ENTRIES]), int(st[N_KEYS])
        more = span // 3 + 3  # a triple takes three bytes at least
        self.runs = self._room(self.runs, n_keys + more, n_keys + 1)
        self.key_hash = self._room(self.key_hash, n_keys + more, n_keys)
        self.key_text_off = self._room(self.key_text_off, n_keys + more, n_keys + 1)
        used = int(self.key_text_off[n_keys])
        self.key_text = self._room(self.key_text, used + span, used)
        self.target_hash = self._room(self.target_hash, n + more, n)
        self.target_words = self._room(self.target_words, n + more, n)
        self.target_start = self._room(self.target_start, n + more, n)
        self.target_end = self._room(self.target_end, n + more, n)
        parse_chunk(
            data, end, final, st, self.runs, self.key_hash, self.key_text, self.key_text_off,
            self.target_hash, self.target_words, self.target_start, self.target_end,
        )  # fmt: skip


@njit(cache=True, nogil=True)
def parse_chunk(
    data, end, final, state, runs, key_hash, key_text, key_text_off, target_hash,
    target_words, target_start, target_end,
):  # pragma: no cover - compiled  # fmt: skip
    """Parse the entries of the decompressed table that lie complete in ``data[:end]``
    (``final``: the table ends at ``end``), from ``state[POS]`` on, into the arrays (which
    have room for it, see :class:`TableParse`); ``state`` is updated.

    The table is triples of lines (probability, phrase 1, phrase 2); the probability is not
    used (metric-spec §5.3). As the reference reader does, a triple cut short by the end of
    the file has empty phrases, and trailing carriage returns are not part of a phrase. Per
    run of equal phrases 1: its first entry, hash and text; per entry: the hash, word count
    and byte range in ``data`` of phrase 2; ``state[ORDERED]`` stays 1 while the runs come in
    strictly increasing byte order (then no phrase 1 appears in two runs, as in the table
    pycocoevalcap ships). Bytes are first checked to be UTF-8 (``state[INVALID]``)."""
    # UTF-8: up to the last complete line (a newline is never inside a character)
    stop = end
    if not final:
        while stop > state[CHECKED] and data[stop - 1] != 10:
            stop -= 1
    if stop > state[CHECKED]:
        if not utf8_valid(data[state[CHECKED] : stop]):
            state[INVALID] = 1
            return
        state[CHECKED] = stop
    pos = state[POS]
    n = state[N_ENTRIES]
    n_keys = state[N_KEYS]
    p0, p1 = state[PREV_START], state[PREV_END]
    max_words = state[LONGEST]
    while pos < end:
        e0 = _line_end(data, pos, end)
        if e0 == end and not final:
            break
        a1 = min(e0 + 1, end)
        e1 = _line_end(data, a1, end)
        if e1 == end and not final:
            break
        a2 = min(e1 + 1, end)
        e2 = _line_end(data, a2, end)
        if e2 == end and not final:
            break
        b1 = _strip_cr(data, a1, e1)
        if n == 0 or not _same_bytes(data, p0, p1, data, a1, b1):
            if n > 0 and not _bytes_less(data, p0, p1, a1, b1):
                state[ORDERED] = 0
            start = key_text_off[n_keys]
            key_text[start : start + b1 - a1] = data[a1:b1]
            key_text_off[n_keys + 1] = start + b1 - a1
            key_hash[n_keys] = _hash_range(data, a1, b1)
            runs[n_keys] = n
            words = 1
            for i in range(a1, b1):
                if data[i] == 32:
                    words += 1
            max_words = max(max_words, words)
            n_keys += 1
            p0, p1 = a1, b1
        b2 = _strip_cr(data, a2, e2)
        h = FNV_OFFSET
        words = 1
        for i in range(a2, b2):
            c = data[i]
            h = _feed(h, c)
            if c == 32:
                words += 1
        target_start[n] = a2
        target_end[n] = b2
        target_hash[n] = _finish(h)
        target_words[n] = min(words, 255)
        max_words = max(max_words, words)
        n += 1
        pos = min(e2 + 1, end)
    if final:
        runs[n_keys] = n
    state[POS] = pos
    state[N_ENTRIES] = n
    state[N_KEYS] = n_keys
    state[PREV_START] = p0
    state[PREV_END] = p1
    state[LONGEST] = max_words


@njit(cache=True, nogil=True)
def gather(data, starts, ends):  # pragma: no cover - compiled
    """The byte ranges ``data[starts[k]:ends[k]]`` one after another, and their offsets."""
    n = starts.shape[0]
    offsets = np.empty(n + 1, dtype=np.int64)
    offsets[0] = 0
    for k in range(n):
        offsets[k + 1] = offsets[k] + ends[k] - starts[k]
    out = np.empty(offsets[n], dtype=np.uint8)
    for k in range(n):
        out[offsets[k] : offsets[k + 1]] = data[starts[k] : ends[k]]
    return out, offsets


@njit(cache=True, nogil=True)
def _insert(slots, h, pid):  # pragma: no cover - compiled
    """Put phrase ``pid`` with hash ``h`` in the first empty slot of its probe sequence."""
    mask = np.uint64(slots.shape[0] - 1)
    s = h & mask
    while slots[s] != _ZERO:
        s = (s + _ONE) & mask
    slots[s] = ((h >> np.uint64(32)) << np.uint64(32)) | np.uint64(pid + 1)


@njit(cache=True, nogil=True)
def phrase_table(key_hash, key_text, key_text_off):  # pragma: no cover - compiled
    """The table of every key and every proper word prefix of a key (so a sentence is
    walked from each start only while its words are a prefix, as the jar walks its trie):
    ``phrase_slots`` is an open-addressing table (linear probing from ``hash & mask``) of
    ``(hash >> 32) << 32 | (phrase + 1)``, 0 empty; per phrase its full hash, its key
    number (-1: a prefix only) and whether it is a prefix."""
    n_keys = key_hash.shape[0]
    n_prefixes = 0
    for i in range(key_text_off[n_keys]):
        if key_text[i] == 32:
            n_prefixes += 1
    # every phrase: keys first (phrase k is key k), then the prefixes not already there
    phrase_hash = np.empty(n_keys + n_prefixes, dtype=np.uint64)
    phrase_hash[:n_keys] = key_hash
    prefix = np.zeros(n_keys + n_prefixes, dtype=np.uint8)
    size = 1
    while size < 2 * (n_keys + n_prefixes):
        size *= 2
    slots = np.zeros(size, dtype=np.uint64)
    for k in range(n_keys):
        _insert(slots, key_hash[k], k)
    mask = np.uint64(size - 1)
    n_phrases = n_keys
    for k in range(n_keys):
        h = FNV_OFFSET
        for i in range(key_text_off[k], key_text_off[k + 1]):
            c = key_text[i]
            if c == 32:  # the words so far are a prefix of this key
                hv = _finish(h)
                s = hv & mask
                found = False
                while slots[s] != _ZERO:
                    pid = np.int64(slots[s] & np.uint64(0xFFFFFFFF)) - 1
                    if phrase_hash[pid] == hv:
                        prefix[pid] = 1
                        found = True
                    s = (s + _ONE) & mask
                if not found:
                    phrase_hash[n_phrases] = hv
                    prefix[n_phrases] = 1
                    _insert(slots, hv, n_phrases)
                    n_phrases += 1
            h = _feed(h, c)
    size = 1
    while size < 2 * n_phrases:
        size *= 2
    final = np.zeros(size, dtype=np.uint64)
    for pid in range(n_phrases):
        _insert(final, phrase_hash[pid], pid)
    phrase_key = np.full(n_phrases, -1, dtype=np.int32)
    for k in range(n_keys):
        phrase_key[k] = k
    return final, phrase_hash[:n_phrases].copy(), phrase_key, prefix[:n_phrases].copy()


# -- the shipped index (capeval_core.meteor_shipped) --------------------------------------------


@njit(cache=True, nogil=True)
def expand_phrases(shared, fresh, words, vocab_text, vocab_off):  # pragma: no cover - compiled
    """Front-coded phrases back to text: phrase ``i`` is the first ``shared[i]`` words of
    phrase ``i - 1`` and then the next ``fresh[i]`` ids of ``words``, joined by single
    spaces. Returns the texts one after another, their offsets, and per phrase the hash and
    the word count (at most 255) that :func:`parse_chunk` gives the same text."""
    n = shared.shape[0]
    longest = 1
    for i in range(n):
        longest = max(longest, np.int64(shared[i]) + np.int64(fresh[i]))
    size = np.zeros(longest + 1, dtype=np.int64)  # bytes of the first j words, spaces included
    off = np.empty(n + 1, dtype=np.int64)
    off[0] = 0
    pos = 0
    for i in range(n):
        s = np.int64(shared[i])
        k = s + np.int64(fresh[i])
        for j in range(s, k):
            w = np.int64(words[pos])
            pos += 1
            size[j + 1] = size[j] + vocab_off[w + 1] - vocab_off[w] + (1 if j > 0 else 0)
        off[i + 1] = off[i] + size[k]
    text = np.empty(off[n], dtype=np.uint8)
    hashes = np.empty(n, dtype=np.uint64)
    n_words = np.empty(n, dtype=np.uint8)
    state = np.empty(longest + 1, dtype=np.uint64)  # the hash state after the first j words
    state[0] = FNV_OFFSET
    size[0] = 0
    pos = 0
    before = 0
    for i in range(n):
        s = np.int64(shared[i])
        k = s + np.int64(fresh[i])
        at = off[i]
        for x in range(size[s]):  # the words shared with the phrase before, spaces included
            text[at + x] = text[before + x]
        at += size[s]
        h = state[s]
        for j in range(s, k):
            w = np.int64(words[pos])
            pos += 1
            if j > 0:
                text[at] = 32
                at += 1
                h = _feed(h, 32)
            for x in range(vocab_off[w], vocab_off[w + 1]):
                c = vocab_text[x]
                text[at] = c
                at += 1
                h = _feed(h, c)
            state[j + 1] = h
            size[j + 1] = at - off[i]
        hashes[i] = _finish(state[k])
        n_words[i] = min(k, 255)
        before = off[i]
    return text, off, hashes, n_words


@njit(cache=True, nogil=True)
def expand_entries(counts, target_delta, phrase_off, phrase_hash, phrase_words):
    """Entries of the shipped index: key ``k`` has ``counts[k]`` entries, whose phrases 2 are
    phrase numbers coded as differences from 0 at each key (sums modulo 2**32). Returns the
    entry offsets of the keys, and per entry the hash, word count and text range of its
    phrase 2."""
    n_keys = counts.shape[0]
    mask = np.int64(0xFFFFFFFF)
    runs = np.empty(n_keys + 1, dtype=np.int64)
    runs[0] = 0
    for k in range(n_keys):
        runs[k + 1] = runs[k] + np.int64(counts[k])
    n = runs[n_keys]
    target_hash = np.empty(n, dtype=np.uint64)
    target_words = np.empty(n, dtype=np.uint8)
    target_start = np.empty(n, dtype=np.uint32)
    target_end = np.empty(n, dtype=np.uint32)
    for k in range(n_keys):
        t = np.int64(0)
        for e in range(runs[k], runs[k + 1]):
            t = (t + np.int64(target_delta[e])) & mask
            target_hash[e] = phrase_hash[t]
            target_words[e] = phrase_words[t]
            target_start[e] = phrase_off[t]
            target_end[e] = phrase_off[t + 1]
    return runs, target_hash, target_words, target_start, target_end


# -- sentences ----------------------------------------------------------------------------------


@njit(cache=True, nogil=True)
def _find_phrase(
    text, t0, t1, h, phrase_slots, phrase_hash, phrase_key, phrase_prefix, key_text, key_text_off
):  # pragma: no cover - compiled
    """For the phrase ``text[t0:t1]`` with hash ``h``: its key number (-1 if it is no
    phrase 1) and whether a longer phrase 1 starts with it."""
    mask = np.uint64(phrase_slots.shape[0] - 1)
    tag = (h >> np.uint64(32)) << np.uint64(32)
    low = np.uint64(0xFFFFFFFF)
    s = h & mask
    key = -1
    is_prefix = False
    while True:
        slot = phrase_slots[s]
        if slot == _ZERO:
            return key, is_prefix
        if (slot & ~low) == tag:
            pid = np.int64(slot & low) - 1
            if phrase_hash[pid] == h:
                if phrase_prefix[pid]:
                    is_prefix = True
                k = phrase_key[pid]
                if (
                    k >= 0
                    and key < 0
                    and _same_bytes(text, t0, t1, key_text, key_text_off[k], key_text_off[k + 1])
                ):
                    key = k
        s = (s + _ONE) & mask


@njit(cache=True, nogil=True)
def sentence_spans(
    s_off, s_words, w_text_off, w_text, max_words, phrase_slots, phrase_hash, phrase_key,
    phrase_prefix, key_text, key_text_off,
):  # pragma: no cover - compiled  # fmt: skip
    """Per sentence: its UTF-8 text (words joined by single spaces), the hash of every span
    of up to ``max_words`` words, a 256-bit Bloom filter of those hashes, and the spans that
    are a phrase 1 of the table.

    Span hashes of a sentence of ``n`` words are laid out by length then start:
    ``span_off[s] + block(L) + start`` with ``block(L) = sum(n - l + 1 for l < L)``.
    Key spans come ordered by start then length, each ``(start, length, key)``: from each
    start the span grows while its words are a prefix of some phrase 1 (the jar's trie walk).
    """
    n_sent = s_off.shape[0] - 1
    byte_off = np.zeros(n_sent + 1, dtype=np.int64)
    word_pos = np.empty(s_words.shape[0] + n_sent, dtype=np.int64)
    span_off = np.zeros(n_sent + 1, dtype=np.int64)
    for s in range(n_sent):
        n = s_off[s + 1] - s_off[s]
        size = 0
        for j in range(s_off[s], s_off[s + 1]):
            w = s_words[j]
            size += w_text_off[w + 1] - w_text_off[w] + 1
        byte_off[s + 1] = byte_off[s] + max(size - 1, 0)
        spans = 0
        for length in range(1, min(max_words, n) + 1):
            spans += n - length + 1
        span_off[s + 1] = span_off[s] + spans
    text = np.empty(byte_off[-1], dtype=np.uint8)
    span_hash = np.empty(span_off[-1], dtype=np.uint64)
    bloom = np.zeros((n_sent, 4), dtype=np.uint64)
    key_start = np.empty(span_off[-1], dtype=np.int64)
    key_len = np.empty(span_off[-1], dtype=np.int64)
    key_id = np.empty(span_off[-1], dtype=np.int64)
    key_off = np.zeros(n_sent + 1, dtype=np.int64)
    n_found = 0
    for s in range(n_sent):
        a, b = s_off[s], s_off[s + 1]
        n = b - a
        pos = byte_off[s]
        for j in range(a, b):  # word_pos: byte start of each word, then the sentence end
            w = s_words[j]
            word_pos[j + s] = pos
            for i in range(w_text_off[w], w_text_off[w + 1]):
                text[pos] = w_text[i]
                pos += 1
            if j < b - 1:
                text[pos] = 32
                pos += 1
        word_pos[b + s] = pos + 1  # one past a virtual space, so word ends are pos - 1
        top = min(max_words, n)
        for start in range(n):
            h = FNV_OFFSET
            walking = True
            block = 0
            for length in range(1, top + 1):
                if start + length > n:
                    break
                w0 = word_pos[a + s + start + length - 1]
                w1 = word_pos[a + s + start + length] - 1
                if length > 1:
                    h = _feed(h, 32)
                for i in range(w0, w1):
                    h = _feed(h, text[i])
                hv = _finish(h)
                span_hash[span_off[s] + block + start] = hv
                block += n - length + 1
                b1 = hv >> np.uint64(56)
                b2 = (hv >> np.uint64(48)) & np.uint64(255)
                bloom[s, b1 >> np.uint64(6)] |= _ONE << (b1 & np.uint64(63))
                bloom[s, b2 >> np.uint64(6)] |= _ONE << (b2 & np.uint64(63))
                if not walking:
                    continue
                k, walking = _find_phrase(
                    text, word_pos[a + s + start], w1, hv, phrase_slots, phrase_hash,
                    phrase_key, phrase_prefix, key_text, key_text_off,
                )  # fmt: skip
                if k >= 0:
                    key_start[n_found] = start
                    key_len[n_found] = length
                    key_id[n_found] = k
                    n_found += 1
        key_off[s + 1] = n_found
    return (
        text,
        word_pos,
        span_hash,
        span_off,
        bloom,
        key_start[:n_found].copy(),
        key_len[:n_found].copy(),
        key_id[:n_found].copy(),
        key_off,
    )


@njit(cache=True, nogil=True)
def sentence_synsets(s_off, s_words, syn_off, syn_ids):  # pragma: no cover - compiled
    """Per sentence, ``(synset << 16) | position`` for every synset of every word, sorted:
    two sentences' synonym pairs are then one merge of their lists (§5.4 "Synonym").

    Synsets are dense ids below 2**24; one sort of ``(sentence << 40) | ...`` orders every
    sentence's list at once (fewer than 2**23 sentences; a position past 65,535 is clamped,
    and only sentences of at most :data:`MAX_WORDS` words are ever merged)."""
    n_sent = s_off.shape[0] - 1
    out_off = np.zeros(n_sent + 1, dtype=np.int64)
    for s in range(n_sent):
        size = 0
        for j in range(s_off[s], s_off[s + 1]):
            w = s_words[j]
            size += syn_off[w + 1] - syn_off[w]
        out_off[s + 1] = out_off[s] + size
    out = np.empty(out_off[-1], dtype=np.int64)
    k = 0
    for s in range(n_sent):
        for j in range(s_off[s], s_off[s + 1]):
            w = s_words[j]
            pos = min(j - s_off[s], 0xFFFF)
            for x in range(syn_off[w], syn_off[w + 1]):
                out[k] = (s << 40) | (syn_ids[x] << 16) | pos
                k += 1
    out.sort()
    for i in range(out.shape[0]):
        out[i] &= (1 << 40) - 1
    return out, out_off


# -- alignment ----------------------------------------------------------------------------------


@njit(cache=True, nogil=True)
def _mask(start, length):  # pragma: no cover - compiled
    if length >= 64:
        return _ALL
    return ((_ONE << np.uint64(length)) - _ONE) << np.uint64(start)


@njit(cache=True, nogil=True)
def _paraphrases(
    frm, to, s_off, word_pos, text, span_hash, span_off, bloom, key_start, key_len, key_id,
    key_off, key_entry_off, target_hash, target_words, target_text, target_start, target_end, out,
    count, reverse,
):  # pragma: no cover - compiled  # fmt: skip
    """§5.4 (a): every phrase 1 of sentence ``frm`` with a phrase 2 found verbatim in ``to``,
    in generation order (start, length, table order, position in ``to``). Appends
    ``(ref start, ref len, hyp start, hyp len, 3)`` rows to ``out`` (``reverse``: ``frm`` is
    the hypothesis). Returns the new count, or -1 when ``out`` is full."""
    n_to = s_off[to + 1] - s_off[to]
    to_base = s_off[to] + to
    for q in range(key_off[frm], key_off[frm + 1]):
        k = key_id[q]
        for e in range(key_entry_off[k], key_entry_off[k + 1]):
            m = target_words[e]
            if m > n_to:
                continue
            h = target_hash[e]
            b1 = h >> np.uint64(56)
            b2 = (h >> np.uint64(48)) & np.uint64(255)
            if not (bloom[to, b1 >> np.uint64(6)] >> (b1 & np.uint64(63))) & _ONE:
                continue  # no span of ``to`` has this hash
            if not (bloom[to, b2 >> np.uint64(6)] >> (b2 & np.uint64(63))) & _ONE:
                continue
            block = 0
            for ll in range(1, m):
                block += n_to - ll + 1
            base = span_off[to] + block
            for t in range(n_to - m + 1):
                if span_hash[base + t] != h:
                    continue
                b0 = word_pos[to_base + t]
                b1 = word_pos[to_base + t + m] - 1
                if not _same_bytes(text, b0, b1, target_text, target_start[e], target_end[e]):
                    continue
                if count == out.shape[0]:
                    return -1
                if reverse:
                    out[count, 0] = t
                    out[count, 1] = m
                    out[count, 2] = key_start[q]
                    out[count, 3] = key_len[q]
                else:
                    out[count, 0] = key_start[q]
                    out[count, 1] = key_len[q]
                    out[count, 2] = t
                    out[count, 3] = m
                out[count, 4] = 3
                count += 1
    return count


@njit(cache=True, nogil=True)
def _sort_keys(keys, n):  # pragma: no cover - compiled
    """Sort the first ``n`` packed keys in place (they are distinct: the low bits hold the
    position, so the order is stable)."""
    if n > 32:
        keys[:n].sort()
        return
    for i in range(1, n):
        x = keys[i]
        j = i - 1
        while j >= 0 and keys[j] > x:
            keys[j + 1] = keys[j]
            j -= 1
        keys[j + 1] = x


@njit(cache=True, nogil=True, error_model="numpy")
def _score(
    stats, alpha, gamma, delta, weights, pow_values, pow_offsets
):  # pragma: no cover - compiled
    """``score_statistics`` (§5.7) on one row, in the same order of floating-point
    operations (numpy's error model: x/0 is inf or nan, as in Java); ``frag ** beta`` is
    read from ``pow_values`` (:func:`capeval_core.meteor_pow.dense_values`). -1 if the
    fragmentation is beyond that table (never for pairs of at most 64 words a side)."""
    hl, rl, hf, rf = stats[0], stats[1], stats[2], stats[3]
    lw_h = delta * (hl - hf) + (1.0 - delta) * hf
    lw_r = delta * (rl - rf) + (1.0 - delta) * rf
    mw_h = 0.0
    for m in range(4):
        mw_h += stats[4 + 4 * m] * weights[m] * delta
    mw_r = 0.0
    for m in range(4):
        mw_r += stats[5 + 4 * m] * weights[m] * delta
    for m in range(4):
        mw_h += stats[6 + 4 * m] * weights[m] * (1.0 - delta)
    for m in range(4):
        mw_r += stats[7 + 4 * m] * weights[m] * (1.0 - delta)
    precision = mw_h / lw_h
    recall = mw_r / lw_r
    fmean = 1.0 / ((1.0 - alpha) / precision + alpha / recall)
    chunks, mh, mr = stats[20], stats[21], stats[22]
    if mh + mr == 0:  # nothing matched: the jar's 0/0
        return 0.0
    if mh == hl and mr == rl and chunks == 1:
        power = pow_values[0]  # frag = 0
    elif mh + mr < pow_offsets.shape[0] - 1 and chunks <= (mh + mr) // 2:
        power = pow_values[pow_offsets[mh + mr] + chunks]
    else:
        return -1.0
    penalty = gamma * power
    score = fmean * (1.0 - penalty)
    if np.isnan(score):
        return 0.0
    return max(score, 0.0)


@njit(cache=True, nogil=True)
def align_pairs(
    pair_hyp, pair_ref, s_off, s_words, w_stem, w_func, syn_pos, syn_pos_off,
    word_pos, text, span_hash, span_off, bloom, key_start, key_len, key_id, key_off,
    key_entry_off, target_hash, target_words, target_text, target_start, target_end,
    alpha, gamma, delta, weights, pow_values, pow_offsets,
):  # pragma: no cover - compiled  # fmt: skip
    """The 23 statistics and the score of every (hypothesis, reference) pair (§5.4-§5.7);
    ``pow_values`` and ``pow_offsets`` give ``frag ** beta`` (see :func:`_score`).

    A pair with a side longer than :data:`MAX_WORDS` words gets ``-1`` statistics and a NaN
    score: the caller aligns it in Python.
    """
    n_pairs = pair_hyp.shape[0]
    stats = np.zeros((n_pairs, N_STATS), dtype=np.int64)
    scores = np.empty(n_pairs, dtype=np.float64)
    # fixed buffers (a pair that would overflow one goes to the Python aligner): an array
    # reassigned inside the loop would cost reference counting on every pair
    cands = np.empty((CANDIDATES, 5), dtype=np.int64)
    order = np.empty(CANDIDATES, dtype=np.int64)
    keys = np.empty(PATHS, dtype=np.int64)
    # paths: negw, chunks, dist, idx, last, node; masks apart
    cur = np.empty((BEAM_SIZE, 6), dtype=np.int64)
    cur_ur = np.empty(BEAM_SIZE, dtype=np.uint64)
    cur_uh = np.empty(BEAM_SIZE, dtype=np.uint64)
    nxt = np.empty((PATHS, 6), dtype=np.int64)
    nxt_ur = np.empty(PATHS, dtype=np.uint64)
    nxt_uh = np.empty(PATHS, dtype=np.uint64)
    node_cand = np.empty(NODES, dtype=np.int64)
    node_parent = np.empty(NODES, dtype=np.int64)
    first = np.empty(MAX_WORDS + 1, dtype=np.int64)
    fill = np.empty(MAX_WORDS, dtype=np.int64)
    cov_ref = np.empty(MAX_WORDS, dtype=np.int64)
    cov_hyp = np.empty(MAX_WORDS, dtype=np.int64)
    fixed = np.empty(MAX_WORDS, dtype=np.int64)
    at = np.empty(MAX_WORDS, dtype=np.int64)
    synonym = np.empty(MAX_WORDS, dtype=np.uint64)
    for p in range(n_pairs):
        hs, rs = pair_hyp[p], pair_ref[p]
        h0, r0 = s_off[hs], s_off[rs]
        nh, nr = s_off[hs + 1] - h0, s_off[rs + 1] - r0
        if nh > MAX_WORDS or nr > MAX_WORDS:
            stats[p, :] = -1
            scores[p] = np.nan
            continue
        # -- §5.4: candidates per module, in generation order
        count = 0
        identical = nh == nr
        if identical:
            for j in range(nh):
                if s_words[h0 + j] != s_words[r0 + j]:
                    identical = False
                    break
        for i in range(nr):
            wr = s_words[r0 + i]
            for j in range(nh):
                if s_words[h0 + j] == wr:
                    if count == CANDIDATES:
                        break
                    cands[count, 0] = i
                    cands[count, 1] = 1
                    cands[count, 2] = j
                    cands[count, 3] = 1
                    cands[count, 4] = 0
                    count += 1
        if not identical:
            for i in range(nr):
                wr = s_words[r0 + i]
                sr = w_stem[wr]
                for j in range(nh):
                    wh = s_words[h0 + j]
                    if w_stem[wh] == sr and wh != wr:
                        if count == CANDIDATES:
                            break
                        cands[count, 0] = i
                        cands[count, 1] = 1
                        cands[count, 2] = j
                        cands[count, 3] = 1
                        cands[count, 4] = 1
                        count += 1
            # synonyms: S(ref word) meets S(hyp word); one merge of the two sorted lists
            a, a_end = syn_pos_off[rs], syn_pos_off[rs + 1]
            b, b_end = syn_pos_off[hs], syn_pos_off[hs + 1]
            synonym[:nr] = _ZERO
            while a < a_end and b < b_end:
                x = syn_pos[a] >> 16
                y = syn_pos[b] >> 16
                if x < y:
                    a += 1
                elif y < x:
                    b += 1
                else:
                    hyp_bits = _ZERO
                    while b < b_end and (syn_pos[b] >> 16) == x:
                        hyp_bits |= _ONE << np.uint64(syn_pos[b] & 0xFFFF)
                        b += 1
                    while a < a_end and (syn_pos[a] >> 16) == x:
                        synonym[syn_pos[a] & 0xFFFF] |= hyp_bits
                        a += 1
            for i in range(nr):
                bits = synonym[i]
                if bits == _ZERO:
                    continue
                wr = s_words[r0 + i]
                for j in range(nh):
                    if (bits >> np.uint64(j)) & _ONE and s_words[h0 + j] != wr:
                        if count == CANDIDATES:
                            break
                        cands[count, 0] = i
                        cands[count, 1] = 1
                        cands[count, 2] = j
                        cands[count, 3] = 1
                        cands[count, 4] = 2
                        count += 1
            if count < CANDIDATES:
                count = _paraphrases(
                    rs, hs, s_off, word_pos, text, span_hash, span_off, bloom, key_start,
                    key_len, key_id, key_off, key_entry_off, target_hash, target_words,
                    target_text, target_start, target_end, cands, count, False,
                )  # fmt: skip
            if 0 <= count < CANDIDATES:
                count = _paraphrases(
                    hs, rs, s_off, word_pos, text, span_hash, span_off, bloom, key_start,
                    key_len, key_id, key_off, key_entry_off, target_hash, target_words,
                    target_text, target_start, target_end, cands, count, True,
                )  # fmt: skip
        if count < 0 or count >= CANDIDATES:  # full: the Python aligner takes the pair
            stats[p, :] = -1
            scores[p] = np.nan
            continue
        # -- per reference position, module order then generation order (stable)
        first[: nr + 1] = 0
        for c in range(count):
            first[cands[c, 0] + 1] += 1
        for i in range(nr):
            first[i + 1] += first[i]
        fill[:nr] = first[:nr]
        for c in range(count):
            i = cands[c, 0]
            order[fill[i]] = c
            fill[i] += 1
        cov_ref[:nr] = 0
        cov_hyp[:nh] = 0
        dist_total = 0
        for c in range(count):
            for i in range(cands[c, 0], cands[c, 0] + cands[c, 1]):
                cov_ref[i] += 1
            for j in range(cands[c, 2], cands[c, 2] + cands[c, 3]):
                cov_hyp[j] += 1
            dist_total += abs(cands[c, 0] - cands[c, 2])
        # §5.5 step 1: a lone candidate touching no other candidate's words is fixed
        fixed[:nr] = -1
        used_ref = _ZERO
        used_hyp = _ZERO
        for i in range(nr):
            if first[i + 1] - first[i] == 1:
                c = order[first[i]]
                ok = True
                for x in range(cands[c, 0], cands[c, 0] + cands[c, 1]):
                    if cov_ref[x] != 1:
                        ok = False
                for x in range(cands[c, 2], cands[c, 2] + cands[c, 3]):
                    if cov_hyp[x] != 1:
                        ok = False
                if ok:
                    fixed[i] = c
                    used_ref |= _mask(cands[c, 0], cands[c, 1])
                    used_hyp |= _mask(cands[c, 2], cands[c, 3])
        if dist_total >= (1 << 30):
            stats[p, :] = -1  # beyond the packed sort keys: the Python aligner takes it
            scores[p] = np.nan
            continue
        # -- §5.5 steps 2-6: the beam search, the jar's distance bug included
        n_cur = 1
        cur[0, 0] = 0
        cur[0, 1] = 0
        cur[0, 2] = 0
        cur[0, 3] = 0
        cur[0, 4] = -1
        cur[0, 5] = -1
        cur_ur[0] = used_ref
        cur_uh[0] = used_hyp
        n_nodes = 0
        too_many = False
        n_nxt = 1  # the first sort sees the single start path
        nxt[0, :] = cur[0, :]
        nxt_ur[0] = used_ref
        nxt_uh[0] = used_hyp
        for step in range(nr + 1):
            # sort the paths by (-(weight), chunks, distance), stable; keep the best 40
            for q in range(n_nxt):
                keys[q] = ((nxt[q, 0] + 256) << 53) | (nxt[q, 1] << 46) | (nxt[q, 2] << 16) | q
            _sort_keys(keys, n_nxt)
            n_cur = min(n_nxt, BEAM_SIZE)
            for q in range(n_cur):
                src = keys[q] & 0xFFFF
                cur[q, :] = nxt[src, :]
                cur_ur[q] = nxt_ur[src]
                cur_uh[q] = nxt_uh[src]
            if step == nr:
                break
            bit = _ONE << np.uint64(step)
            n_nxt = 0
            lo, hi = first[step], first[step + 1]
            need = n_cur * (hi - lo + 1)
            if need > PATHS or n_nodes + need > NODES:  # the Python aligner takes it
                too_many = True
                break
            for q in range(n_cur):
                negw, chunks, dist = cur[q, 0], cur[q, 1], cur[q, 2]
                idx, last = cur[q, 3], cur[q, 4]
                ur, uh = cur_ur[q], cur_uh[q]
                if ur & bit:
                    if step < idx:  # inside a match this path already took
                        nxt[n_nxt, :] = cur[q, :]
                        nxt_ur[n_nxt] = ur
                        nxt_uh[n_nxt] = uh
                        n_nxt += 1
                        continue
                    if idx >= nr or fixed[idx] < 0:
                        continue
                    c = fixed[idx]
                    nxt[n_nxt, 0] = negw - _search_weight(cands, c)
                    nxt[n_nxt, 1] = chunks + 1 if last != -1 and cands[c, 2] != last else chunks
                    nxt[n_nxt, 2] = dist + abs(cands[c, 0] - cands[c, 2])
                    nxt[n_nxt, 3] = cands[c, 0] + cands[c, 1]
                    nxt[n_nxt, 4] = cands[c, 2] + cands[c, 3]
                    nxt[n_nxt, 5] = cur[q, 5]
                    nxt_ur[n_nxt] = ur
                    nxt_uh[n_nxt] = uh
                    n_nxt += 1
                    continue
                for o in range(lo, hi):
                    c = order[o]
                    mr = _mask(cands[c, 0], cands[c, 1])
                    mh = _mask(cands[c, 2], cands[c, 3])
                    if ur & mr or uh & mh:
                        continue
                    node_cand[n_nodes] = c
                    node_parent[n_nodes] = cur[q, 5]
                    nxt[n_nxt, 0] = negw - _search_weight(cands, c)
                    nxt[n_nxt, 1] = chunks + 1 if last != -1 and cands[c, 2] != last else chunks
                    nxt[n_nxt, 2] = dist
                    nxt[n_nxt, 3] = cands[c, 0] + cands[c, 1]
                    nxt[n_nxt, 4] = cands[c, 2] + cands[c, 3]
                    nxt[n_nxt, 5] = n_nodes
                    nxt_ur[n_nxt] = ur | mr
                    nxt_uh[n_nxt] = uh | mh
                    n_nodes += 1
                    n_nxt += 1
                    dist += abs(cands[c, 0] - cands[c, 2])  # the jar's bug: to the parent
                # the "skip" successor closes the open chunk
                nxt[n_nxt, 0] = negw
                nxt[n_nxt, 1] = chunks + 1 if last != -1 else chunks
                nxt[n_nxt, 2] = dist
                nxt[n_nxt, 3] = idx + 1
                nxt[n_nxt, 4] = -1
                nxt[n_nxt, 5] = cur[q, 5]
                nxt_ur[n_nxt] = ur
                nxt_uh[n_nxt] = uh
                n_nxt += 1
            if n_nxt == 0:  # every path died: keep the best one
                nxt[0, :] = cur[0, :]
                nxt_ur[0] = cur_ur[0]
                nxt_uh[0] = cur_uh[0]
                n_nxt = 1
                # already sorted; the sort at the top of the loop keeps it first
        if too_many:
            stats[p, :] = -1
            scores[p] = np.nan
            continue
        # the loop ends on a sorted, truncated beam; close the open chunks and sort again
        for q in range(n_cur):
            if cur[q, 4] != -1:
                cur[q, 1] += 1
        for q in range(n_cur):
            keys[q] = ((cur[q, 0] + 256) << 53) | (cur[q, 1] << 46) | (cur[q, 2] << 16) | q
        _sort_keys(keys, n_cur)
        best = keys[0] & 0xFFFF
        # -- the alignment: fixed matches and the best path's, by reference start (§5.6)
        at[:nr] = -1
        for i in range(nr):
            if fixed[i] >= 0:
                at[i] = fixed[i]
        node = cur[best, 5]
        while node >= 0:
            c = node_cand[node]
            at[cands[c, 0]] = c
            node = node_parent[node]
        row = stats[p]
        row[0] = nh
        row[1] = nr
        for j in range(nh):
            row[2] += w_func[s_words[h0 + j]]
        for i in range(nr):
            row[3] += w_func[s_words[r0 + i]]
        n_chunks = 0
        prev_hyp_end = -1
        prev_ref_end = -1
        for i in range(nr):
            c = at[i]
            if c < 0:
                continue
            ref_s, ref_l, hyp_s, hyp_l, module = (
                cands[c, 0],
                cands[c, 1],
                cands[c, 2],
                cands[c, 3],
                cands[c, 4],
            )
            if not (n_chunks > 0 and ref_s == prev_ref_end and hyp_s == prev_hyp_end):
                n_chunks += 1
            prev_hyp_end = hyp_s + hyp_l
            prev_ref_end = ref_s + ref_l
            for j in range(hyp_s, hyp_s + hyp_l):
                if w_func[s_words[h0 + j]]:
                    row[6 + 4 * module] += 1
                else:
                    row[4 + 4 * module] += 1
            for x in range(ref_s, ref_s + ref_l):
                if w_func[s_words[r0 + x]]:
                    row[7 + 4 * module] += 1
                else:
                    row[5 + 4 * module] += 1
            row[21] += hyp_l
            row[22] += ref_l
        row[20] = n_chunks
        value = _score(row, alpha, gamma, delta, weights, pow_values, pow_offsets)
        if value < 0.0:  # beyond the power table: the Python aligner takes it
            stats[p, :] = -1
            scores[p] = np.nan
            continue
        scores[p] = value
    return stats, scores


@njit(cache=True, nogil=True)
def _search_weight(cands, c):  # pragma: no cover - compiled
    """floor(len_hyp * w) + floor(len_ref * w), w = 1 for exact and 0.5 otherwise (§5.5)."""
    if cands[c, 4] == 0:
        return cands[c, 1] + cands[c, 3]
    return cands[c, 1] // 2 + cands[c, 3] // 2


# -- loading ------------------------------------------------------------------------------------


def _signature(*dtypes: str) -> tuple:
    """numba's types of 1-d arrays of these dtypes, as the callers pass them (contiguous,
    writable): a signature that differed would be compiled anew rather than loaded."""
    import numba

    return tuple(numba.typeof(np.empty(0, dtype=d)) for d in dtypes)


def start_up() -> None:
    """numba's one-time start-up in this process, paid here by loading :func:`gather`.

    The first kernel a process loads from numba's cache costs about 0.3 s of interpreter
    time (numba fills its typing registries, and imports ``scipy.linalg`` to look for a
    BLAS); later loads take milliseconds. A first run calls this while its paraphrase index
    is read in the background, so the index's kernels then load at once.
    """
    gather.compile(_signature("u1", "i8", "i8"))


def load_expansion() -> None:
    """Load the shipped index's kernels (:mod:`capeval_core.meteor_shipped`) without calling
    them: their first call then runs at once, without the interpreter lock."""
    start_up()
    expand_phrases.compile(_signature("u1", "u1", "u2", "u1", "i8"))
    expand_entries.compile(_signature("u4", "u4", "i8", "u8", "u1"))
    phrase_table.compile(_signature("u8", "u1", "i8"))
