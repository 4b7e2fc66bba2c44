"""Document frequencies of 1–4-grams as a memory-mapped file (the COCO val2014 table's cache).

The table has 1.6 M n-grams. As a dict of tuples it took a second to read back and 400 MB in
every process that scored with it (the app server and each scoring worker). The file holds
sorted integer keys instead, and a look-up touches a few of its pages: a process opens it in
milliseconds, and processes share its pages.

Keys are exact, never hashes. Words are numbered in sorted order; a k-gram's key is
``index of its (k-1)-word prefix among the (k-1)-grams * V + number of its last word`` (V
words). Every prefix of a counted n-gram is counted too (an image holding a k-gram holds its
prefix), so each k-gram is found by k-1 binary searches.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

import numpy as np

from capeval_core import section_file
from capeval_core.errors import ResourceError
from capeval_core.metrics.ngrams import Ngram
from capeval_core.tokenize import Tokens

MAGIC = b"CAPEVAL-NGRAM-DOCUMENT-FREQUENCIES\n"
#: the file's layout; a file of another format is built again
FORMAT = 1


def _spec(order: int) -> list[tuple[str, str]]:
    spec = [("words", "u1"), ("df1", "<i8")]
    for k in range(2, order + 1):
        spec += [(f"keys{k}", "<i8"), (f"df{k}", "<i8")]
    return spec


def count_images(images: Sequence[Sequence[Tokens]], order: int) -> dict[str, np.ndarray]:
    """For every k-gram (k = 1..order) of the captions, the number of images whose captions
    hold it (an image counts once per n-gram), as the file's sections.

    Whole arrays at a time: the same counts as a set of n-grams per image, without hashing
    1.6 M tuples (COCO val2014's 40,504 images: 2.5 s against 5.6 s).
    """
    vocabulary = sorted({w for captions in images for caption in captions for w in caption})
    number = {w: i for i, w in enumerate(vocabulary)}
    lengths = [len(c) for captions in images for c in captions]
    n_images = len(images)
    ids = np.fromiter(
        (number[w] for captions in images for c in captions for w in c),
        dtype=np.int64,
        count=sum(lengths),
    )
    caption_lengths = np.asarray(lengths, dtype=np.int64)
    caption_image = np.repeat(np.arange(n_images), [len(captions) for captions in images])
    image = np.repeat(caption_image, caption_lengths)
    caption_start = np.cumsum(caption_lengths) - caption_lengths
    # words from each position to its caption's end, that position included
    remaining = np.repeat(caption_start + caption_lengths, caption_lengths) - np.arange(ids.size)
    v = len(vocabulary)

    def images_per_gram(gram_index: np.ndarray, where: np.ndarray, n_grams: int) -> np.ndarray:
        pairs = _distinct(gram_index * n_images + image[where])
        return np.bincount(pairs // n_images, minlength=n_grams)

    text = "\n".join(vocabulary).encode("utf-8", "surrogatepass")
    sections = {
        "words": np.frombuffer(text, dtype=np.uint8),
        "df1": images_per_gram(ids, np.arange(ids.size), v),
    }
    prefix = ids  # at each position, the index of the (k-1)-gram that starts there
    for k in range(2, order + 1):
        starts = np.flatnonzero(remaining >= k)
        key = prefix[starts] * v + ids[starts + k - 1]
        keys, index = np.unique(key, return_inverse=True)
        sections[f"keys{k}"] = keys
        sections[f"df{k}"] = images_per_gram(index, starts, keys.size)
        prefix = np.full(ids.size, -1, dtype=np.int64)
        prefix[starts] = index
    return sections


def _distinct(values: np.ndarray) -> np.ndarray:
    """The distinct values, sorted: numpy 2's ``np.unique`` hashes integers instead of
    sorting them, 8 times slower on these 2 M keys."""
    ordered = np.sort(values)
    keep = np.ones(ordered.size, dtype=bool)
    keep[1:] = ordered[1:] != ordered[:-1]
    return ordered[keep]


def write(dest: Path, sections: dict[str, np.ndarray], order: int, header: dict) -> None:
    """Write the counts of :func:`count_images` with ``header`` (what they were counted from)."""
    layout, arrays = section_file.lay_out(_spec(order), sections)
    head = {"format": FORMAT, "order": order, **header, "sections": layout}
    section_file.write(dest, MAGIC, head, arrays)


class NgramCounts(Mapping[Ngram, float]):
    """n-gram -> number of images, read from the sections of :func:`count_images`; float
    values, as CIDEr-D's tables hold them."""

    def __init__(self, sections: Mapping[str, np.ndarray], order: int) -> None:
        text = sections["words"].tobytes().decode("utf-8", "surrogatepass")
        self._words = text.split("\n") if len(sections["df1"]) else []
        self._number = {w: i for i, w in enumerate(self._words)}
        self._v = len(self._words)
        self.order = order
        # memoryviews: bisect and indexing on them give Python ints, a look-up's whole cost
        # then is a few dict and bisect steps (numpy scalars cost twice as much)
        self._keys = {k: _ints(sections[f"keys{k}"]) for k in range(2, order + 1)}
        self._df = {k: _ints(sections[f"df{k}"]) for k in range(1, order + 1)}

    def _index(self, gram: Ngram) -> int:
        """The position of ``gram`` in its order's table, -1 where it is not counted."""
        if not 0 < len(gram) <= self.order:
            return -1
        number, v = self._number, self._v
        index = number.get(gram[0], -1)
        for k in range(2, len(gram) + 1):
            word = number.get(gram[k - 1], -1)
            if index < 0 or word < 0:
                return -1
            keys = self._keys[k]
            key = index * v + word
            index = bisect.bisect_left(keys, key)
            if index == len(keys) or keys[index] != key:
                return -1
        return index

    def get_many(self, grams: Sequence[Ngram]) -> list[float]:
        """What :meth:`get` gives each of ``grams`` (0.0 where not counted), in one call: the
        words are numbered one by one, the keys searched order by order over whole arrays
        (a batch's n-grams at a third of the cost of a binary search each)."""
        out = np.zeros(len(grams))
        by_order: dict[int, list[int]] = {}
        for i, gram in enumerate(grams):
            by_order.setdefault(len(gram), []).append(i)
        number = self._number
        for k, where in by_order.items():
            if not 0 < k <= self.order:
                continue
            words = np.array(
                [number.get(word, -1) for i in where for word in grams[i]], dtype=np.int64
            ).reshape(len(where), k)
            index = words[:, 0]
            found = index >= 0
            for j in range(1, k):
                keys = np.frombuffer(self._keys[j + 1], dtype=np.int64)
                key = index * self._v + words[:, j]
                index = np.searchsorted(keys, key)
                found &= (words[:, j] >= 0) & (index < len(keys))
                found &= keys[np.minimum(index, len(keys) - 1)] == key
            counts = np.frombuffer(self._df[k], dtype=np.int64)
            out[np.asarray(where)[found]] = counts[index[found]]
        return out.tolist()

    def get(self, gram: Ngram, default: float | None = None) -> float | None:  # type: ignore[override]
        index = self._index(gram) if isinstance(gram, tuple) else -1
        return default if index < 0 else float(self._df[len(gram)][index])

    def __getitem__(self, gram: Ngram) -> float:
        value = self.get(gram)
        if value is None:
            raise KeyError(gram)
        return value

    def __contains__(self, gram: object) -> bool:
        return isinstance(gram, tuple) and self._index(gram) >= 0

    def __len__(self) -> int:
        return sum(len(df) for df in self._df.values())

    def __iter__(self) -> Iterator[Ngram]:
        """Every counted n-gram, order by order (decoded from the keys: slow, for checks)."""
        grams: list[Ngram] = [(w,) for w in self._words]
        yield from grams
        for k in range(2, self.order + 1):
            keys = self._keys[k].tolist()
            grams = [grams[key // self._v] + (self._words[key % self._v],) for key in keys]
            yield from grams


def _ints(array: np.ndarray) -> memoryview:
    return memoryview(np.ascontiguousarray(array, dtype="<i8")).cast("B").cast("q")


def read(path: Path) -> tuple[NgramCounts, dict]:
    """The counts in ``path`` and its header. ResourceError (or numpy's or json's own error)
    for a file that is not such a table, fails its checksum, or is of another format."""
    file = section_file.SectionFile(path, MAGIC, "document-frequency table")
    header = file.header
    if header.get("format") != FORMAT:
        raise ResourceError(f"{path.name} is a table of another format ({header.get('format')})")
    if not file.intact():
        raise ResourceError(f"{path.name}: its content does not match its checksum")
    return NgramCounts(file.arrays, int(header["order"])), header
