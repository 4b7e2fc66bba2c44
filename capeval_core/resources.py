"""Locating and reading the offline resources capeval builds on.

Everything here reads files that registry packages installed (pycocoevalcap ships the
METEOR jar, the paraphrase table and, inside the SPICE jar, the COCO 2014 captions) or the
per-user cache directory. Nothing is downloaded; a missing resource raises
:class:`MissingResourceError` saying how to provide it.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.metadata
import importlib.util
import json
import os
import tempfile
import warnings
import zipfile
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from capeval_core.errors import (
    CacheNotWrittenWarning,
    DamagedCacheWarning,
    MissingResourceError,
    ResourceError,
)

#: Environment variable that overrides the per-user cache directory.
CACHE_ENV = "CAPEVAL_CACHE_DIR"

_COCO_MEMBER = "coco/annotations/captions_{split}2014.json"
COCO_SPLITS = ("train", "val")


def pycocoevalcap_dir() -> Path:
    """Folder of the installed ``pycocoevalcap`` package (found without importing it)."""
    spec = importlib.util.find_spec("pycocoevalcap")
    if spec is None or not spec.submodule_search_locations:
        raise MissingResourceError(
            "the Python package `pycocoevalcap` is not installed; it provides the COCO captions "
            "and METEOR resources capeval reads (install it with `pip install pycocoevalcap==1.2`, "
            "or run `make run`, which installs everything)"
        )
    return Path(next(iter(spec.submodule_search_locations)))


def pycocoevalcap_file(relative: str) -> Path:
    """Path of a file shipped inside pycocoevalcap, e.g. ``"meteor/meteor-1.5.jar"``."""
    path = pycocoevalcap_dir() / relative
    if not path.is_file():
        raise MissingResourceError(
            f"`{relative}` is missing from the installed pycocoevalcap ({path}); reinstall it with "
            "`pip install --force-reinstall pycocoevalcap==1.2`"
        )
    return path


def package_version(name: str) -> str:
    """Installed version of a distribution, or ``"unknown"``."""
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def available_cpus() -> int:
    """CPUs this process may run on (its affinity mask where the platform has one): how
    many worker processes are worth starting."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # macOS, Windows
        return os.cpu_count() or 1


def worker_cap(asked: int) -> tuple[int, str]:
    """How many of ``asked`` worker processes to start: never more than the available CPUs
    (30 asked on two CPUs started 30 processes, each loading the metrics' resources, none
    faster), and why when fewer ("" when all).

    >>> worker_cap(1)
    (1, '')
    """
    cpus = available_cpus()
    if asked <= cpus:
        return asked, ""
    used = f"{cpus} worker processes are used" if cpus > 1 else "no worker process is used"
    return cpus, f"{cpus} CPU(s) available here, so {used}"


def cache_dir() -> Path:
    """Per-user cache directory (created on demand); ``$CAPEVAL_CACHE_DIR`` overrides it. A
    folder that cannot be made (a read-only home) is one line naming the way out."""
    path = cache_root()
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ResourceError(
            f"cannot make the cache folder {path} ({exc.strerror or exc}): set {CACHE_ENV} "
            "to a folder you can write to"
        ) from None
    return path


def cache_root() -> Path:
    """The folder :func:`cache_dir` names, not made."""
    override = os.environ.get(CACHE_ENV)
    if override:
        return Path(override).expanduser()
    import platformdirs

    return Path(platformdirs.user_cache_dir("capeval", appauthor=False))


@contextlib.contextmanager
def atomic_write(dest: Path, mode: str = "wb") -> Iterator[IO[Any]]:
    """Open a unique temporary file beside ``dest`` that replaces it when the block succeeds.

    Cache files are written this way so a concurrent reader (another process, a test worker)
    sees the old file or the complete new one, never half of one, and two writers never
    share a temporary file.
    """
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=dest.name + ".", suffix=".tmp", dir=dest.parent)
    try:
        with os.fdopen(fd, mode) as fh:
            yield fh
        os.chmod(tmp, 0o644)  # mkstemp creates 0600; the cache is an ordinary file
        os.replace(tmp, dest)
    finally:
        Path(tmp).unlink(missing_ok=True)


#: cache folders this process could not write to, said once each
_UNWRITABLE: set[Path] = set()


def write_cache_entry(dest: Path, write: Callable[[IO[Any]], object], mode: str = "wb") -> bool:
    """``write`` a cache entry the numbers do not need (a score, an interval) through
    :func:`atomic_write`. Where the folder cannot be written (read-only, full) the run goes
    on uncached, saying so once per folder (a run that had scored everything stopped with a
    PermissionError at its end). Whether the entry was written."""
    try:
        with atomic_write(dest, mode) as fh:
            write(fh)
    except OSError as exc:
        if dest.parent not in _UNWRITABLE:
            _UNWRITABLE.add(dest.parent)
            warnings.warn(
                f"cannot write to the cache folder {dest.parent} ({exc.strerror or exc}): "
                "results are not cached, the next run computes them again",
                CacheNotWrittenWarning,
                stacklevel=3,
            )
        return False
    return True


#: Start of a checked cache file: this line, the SHA-256 of the payload, the pickled payload.
_CHECKED_MAGIC = b"CAPEVAL-CHECKED-PICKLE-1\n"


def dump_checked(value: Any, dest: Path) -> None:
    """Pickle ``value`` into the cache file ``dest`` with a checksum (written atomically)."""
    import hashlib
    import pickle

    payload = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    with atomic_write(dest) as fh:
        fh.write(_CHECKED_MAGIC)
        fh.write(hashlib.sha256(payload).digest())
        fh.write(payload)


def load_checked(path: Path) -> Any:
    """What :func:`dump_checked` wrote. Raises FileNotFoundError when there is no such file
    and ResourceError when it fails its checksum or cannot be unpickled: a pickle has no
    check of its own, and a changed byte could otherwise change a number unseen."""
    import hashlib
    import pickle

    data = path.read_bytes()
    start = len(_CHECKED_MAGIC)
    if not data.startswith(_CHECKED_MAGIC) or len(data) < start + 32:
        raise ResourceError(f"{path.name} is not a checked capeval cache file")
    digest, payload = data[start : start + 32], memoryview(data)[start + 32 :]
    if hashlib.sha256(payload).digest() != digest:
        raise ResourceError(f"{path.name}: its content does not match its checksum")
    try:
        return pickle.loads(payload)
    except Exception as exc:  # a checksummed payload from another version of a class
        raise ResourceError(f"{path.name} cannot be read back: {type(exc).__name__}") from None


def discard_damaged(path: Path, what: str, reason: str, then: str) -> None:
    """Delete a damaged cache entry and say so once; the caller computes it again.

    Called through a cache reader's own ``_discard``: the warning points three frames above
    that, at the code that asked for the cached value."""
    with contextlib.suppress(OSError):
        path.unlink(missing_ok=True)
    warnings.warn(
        f"damaged {what} {path} discarded ({reason}); {then}",
        DamagedCacheWarning,
        stacklevel=5,
    )


def source_stamp(path: Path) -> str:
    """Identity of a source file's content (size and SHA-256 prefix) that keys built caches.

    Content, not mtime: every fresh virtualenv re-installs the same package files with new
    mtimes, and would otherwise rebuild the paraphrase index and IDF tables for itself.
    Hashing is done once per process and file version (~0.1 s per 60 MB).
    """
    st = path.stat()
    return _content_stamp(str(path.resolve()), st.st_size, st.st_mtime_ns)


@functools.lru_cache(maxsize=16)
def _content_stamp(path: str, size: int, mtime_ns: int) -> str:
    import hashlib

    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(1 << 20):
            digest.update(chunk)
    return f"{size}-{digest.hexdigest()[:16]}"


@contextlib.contextmanager
def build_lock(dest: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``dest`` while it is built, so processes starting together
    (scoring workers, test workers) build a cache file once: the others wait, then find it.
    Where file locks are unavailable, each process builds its own (atomic_write keeps the
    file whole either way)."""
    try:
        import fcntl
    except ImportError:  # not a POSIX system
        yield
        return
    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
        fh = open(dest.parent / f"{dest.name}.lock", "a")  # noqa: SIM115 (closed below)
    except OSError as exc:  # a read-only cache folder: said in one line, not a traceback
        raise ResourceError(
            f"cannot build {dest.name} in the cache folder {dest.parent} "
            f"({exc.strerror or exc}): set {CACHE_ENV} to a folder you can write to"
        ) from None
    with fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


@dataclass(frozen=True)
class CocoCaption:
    """One COCO caption annotation."""

    image_id: int
    annotation_id: int
    caption: str


def coco_caption_file(split: str = "val") -> dict[str, Any]:
    """The COCO 2014 captions annotation file of ``split`` as parsed JSON (``images``,
    ``annotations``, ...), read from the SPICE jar that pycocoevalcap installs: the same
    object ``json.load`` gives of ``captions_{split}2014.json``. Not cached (about 200 MB of
    Python objects for val); callers keep what they need."""
    if split not in COCO_SPLITS:
        raise ValueError(f"`split` must be one of {COCO_SPLITS} (got {split!r})")
    jar = pycocoevalcap_file("spice/spice-1.0.jar")
    member = _COCO_MEMBER.format(split=split)
    try:
        with zipfile.ZipFile(jar) as zf, zf.open(member) as fh:
            return json.load(fh)
    except (KeyError, zipfile.BadZipFile, json.JSONDecodeError) as exc:
        raise ResourceError(f"cannot read `{member}` from {jar}: {exc}") from exc


@functools.lru_cache(maxsize=2)
def coco_captions(split: str = "val") -> tuple[CocoCaption, ...]:
    """All COCO 2014 captions of ``split`` ("train" or "val"), read from the SPICE jar.

    The jar that pycocoevalcap installs carries ``captions_{train,val}2014.json``; they are
    read with :mod:`zipfile`, never copied into the project.
    """
    data = coco_caption_file(split)
    return tuple(
        CocoCaption(int(a["image_id"]), int(a["id"]), str(a["caption"]))
        for a in data["annotations"]
    )


@dataclass(frozen=True)
class CaptionSet:
    """An image's captions split into one candidate and its references."""

    image_id: int
    candidate: str
    references: tuple[str, ...]


def coco_caption_sets(split: str = "val", limit: int | None = None) -> list[CaptionSet]:
    """COCO images in ascending id order, candidate = first caption by annotation id.

    This is the protocol the benchmarks and oracle tests share: the remaining captions of the
    image are its references.
    """
    by_image: dict[int, list[CocoCaption]] = defaultdict(list)
    for cap in coco_captions(split):
        by_image[cap.image_id].append(cap)
    sets = []
    for image_id in sorted(by_image):
        caps = sorted(by_image[image_id], key=lambda c: c.annotation_id)
        if len(caps) < 2:
            continue
        sets.append(CaptionSet(image_id, caps[0].caption, tuple(c.caption for c in caps[1:])))
        if limit is not None and len(sets) >= limit:
            break
    return sets
