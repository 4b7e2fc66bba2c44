"""Cache files of named numpy arrays that later processes memory-map instead of reading.

A file is a magic line, a 32-byte checksum field (the CRC-32 of everything after it), the
length of a JSON header, the header (each section's offset, length and dtype), and the
sections, each aligned to 8 bytes. Opening one costs milliseconds whatever its size, and
processes that open the same file share its pages. METEOR's paraphrase index and the COCO
val2014 document frequencies are such files.
"""

from __future__ import annotations

import json
import mmap
import zlib
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from capeval_core.errors import ResourceError
from capeval_core.resources import atomic_write

#: bytes of the checksum field after the magic line (a CRC-32, then zeros)
DIGEST_SIZE = 32


def data_start(magic: bytes, header_size: int) -> int:
    """Where the first section starts in a file with this magic line and header size."""
    start = len(magic) + DIGEST_SIZE + 8 + header_size
    return start + (-start % 8)


def lay_out(
    spec: Sequence[tuple[str, str]], arrays: Mapping[str, np.ndarray]
) -> tuple[dict[str, list], dict[str, np.ndarray]]:
    """The header's ``sections`` entry and the contiguous arrays for ``spec`` (name, dtype),
    in file order."""
    sections: dict[str, list] = {}
    contiguous: dict[str, np.ndarray] = {}
    pos = 0
    for name, dtype in spec:
        arr = contiguous[name] = np.ascontiguousarray(arrays[name], dtype=dtype)
        sections[name] = [pos, len(arr), dtype]
        pos += arr.nbytes + (-arr.nbytes % 8)
    return sections, contiguous


def write(dest: Path, magic: bytes, header: dict, arrays: Mapping[str, np.ndarray]) -> None:
    """Write ``header`` (whose ``sections`` come from :func:`lay_out`) and the arrays in that
    order, atomically, with the CRC-32 of everything after the checksum field (a third of
    SHA-256's time: a damage check, not a signature)."""
    head = json.dumps(header).encode()
    base = data_start(magic, len(head))
    crc = 0

    def put(data: bytes | memoryview) -> None:
        nonlocal crc
        crc = zlib.crc32(data, crc)
        out.write(data)

    with atomic_write(dest) as out:
        out.write(magic)
        out.write(b"\0" * DIGEST_SIZE)  # filled in below, once everything after it is known
        put(len(head).to_bytes(8, "little"))
        put(head)
        put(b"\0" * (base - out.tell()))
        for name in header["sections"]:
            arr = arrays[name]
            put(memoryview(arr).cast("B"))
            put(b"\0" * (-arr.nbytes % 8))
        out.seek(len(magic))
        out.write(checksum_field(crc))


def checksum_field(crc: int) -> bytes:
    return crc.to_bytes(4, "little") + b"\0" * (DIGEST_SIZE - 4)


class SectionFile:
    """One such file, memory-mapped: its ``header`` and its sections as read-only ``arrays``.

    Raises ResourceError for a file of another kind or without a readable header, and lets
    numpy's and json's own errors through for a truncated one (callers discard both).
    """

    def __init__(self, path: Path, magic: bytes, what: str) -> None:
        self.path, self.magic = path, magic
        with open(path, "rb") as fh:
            self.mm = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
        mm = self.mm
        if mm[: len(magic)] != magic:
            raise ResourceError(f"{path} is not a capeval {what}; delete it to rebuild")
        start = len(magic) + DIGEST_SIZE
        size = int.from_bytes(mm[start : start + 8], "little")
        self.header = json.loads(mm[start + 8 : start + 8 + size])
        if not isinstance(self.header, dict):
            raise ResourceError(f"{path} has no valid header; delete it to rebuild")
        base = data_start(magic, size)
        self.arrays: dict[str, np.ndarray] = {
            name: np.frombuffer(mm, dtype=dtype, count=count, offset=base + off)
            for name, (off, count, dtype) in self.header["sections"].items()
        }

    def intact(self) -> bool:
        """Whether the content matches the CRC-32 written with it (any changed byte after the
        checksum field, header included, fails)."""
        start = len(self.magic) + DIGEST_SIZE
        stored = self.mm[len(self.magic) : start]
        return checksum_field(zlib.crc32(memoryview(self.mm)[start:])) == stored
