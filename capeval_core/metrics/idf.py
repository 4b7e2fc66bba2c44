"""CIDEr-D document frequencies from the COCO val2014 references (the ``coco-val2014`` IDF),
and those of a scored set's references named by their content (``set-…``).

The original ``coco-val-df`` pickle of the CIDEr authors is not distributed with any package,
so it is rebuilt from ``captions_val2014.json`` (inside the installed pycocoevalcap): all
captions tokenized in one batch, an image counting once per n-gram, N = 40,504 images
(metric-spec §4). The table is built once per tokenizer and cached in the user cache dir as a
file that each process memory-maps (:mod:`capeval_core.metrics.idf_file`).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import sys
import threading
import warnings
from collections import defaultdict
from collections.abc import Callable, Hashable, Sequence
from pathlib import Path

import numpy as np

from capeval_core import resources
from capeval_core.errors import DamagedCacheWarning, ResourceError
from capeval_core.metrics import idf_file
from capeval_core.metrics.document_frequency import (
    ORDER,
    SET_PREFIX,
    DocumentFrequency,
    corpus_document_frequency,
)
from capeval_core.metrics.ngrams import coco_words
from capeval_core.tokenize import Tokenizer, is_builtin

COCO_VAL_IDF_VERSION = "coco-val2014-df-v2"

#: ``on_progress(done, total, what)``: how far the one-time build is (the app draws a bar)
Progress = Callable[[int, int, str], None]

#: Suffix of the cached tables (memory-mapped files of capeval_core.metrics.idf_file)
_SUFFIX = ".df"
#: suffixes of the tables of earlier versions (checked pickles, then plain ones), removed
#: when a table is built
_OLD_SUFFIXES = (".checked-pickle", ".pickle")


def _cache_path(tokenizer: Tokenizer) -> Path:
    jar = resources.pycocoevalcap_file("spice/spice-1.0.jar")
    stamp = resources.source_stamp(jar)
    name = f"{COCO_VAL_IDF_VERSION}-{tokenizer.name}-{stamp}{_SUFFIX}"
    return resources.cache_dir() / name


def count_coco_val(
    tokenizer: Tokenizer, on_progress: Progress | None = None
) -> tuple[dict[str, np.ndarray], int]:
    """Count, for every 1–4-gram, the val2014 images whose references contain it: the
    sections of :func:`capeval_core.metrics.idf_file.count_images`, and the number of images.

    ``on_progress`` hears of each step: reading and tokenizing the captions (one batch, as
    coco-caption tokenizes them), then counting.
    """
    say = on_progress or (lambda done, total, what: None)
    say(0, 1, "reading the COCO val2014 captions")
    captions = resources.coco_captions("val")
    by_image: dict[int, list[str]] = defaultdict(list)
    for cap in captions:
        by_image[cap.image_id].append(cap.caption)
    order = list(by_image)
    n = len(order)
    flat = [c for image_id in order for c in by_image[image_id]]
    say(0, n, f"tokenizing {len(flat):,} captions")
    tokens = iter(tokenizer.tokenize_batch(flat))
    images = [[coco_words(next(tokens)) for _ in by_image[image_id]] for image_id in order]
    say(0, n, f"counting the n-grams of {n:,} images")
    sections = idf_file.count_images(images, ORDER)
    say(n, n, f"counted the n-grams of {n:,} images")
    return sections, n


def _table(counts: idf_file.NgramCounts, documents: int) -> DocumentFrequency:
    return DocumentFrequency(counts, float(np.log(float(documents))), documents, "coco-val2014")


def _read(path: Path) -> DocumentFrequency | None:
    """The cached table; None when there is none, or when it fails its checks (then it is
    deleted with one DamagedCacheWarning and built again)."""
    try:
        counts, header = idf_file.read(path)
        documents = header.get("documents")
        if not (isinstance(documents, int) and documents > 0 and counts.order == ORDER):
            raise ResourceError(f"{path.name} does not hold COCO val2014's document frequencies")
    except FileNotFoundError:
        return None
    except (OSError, ResourceError, KeyError, TypeError, ValueError) as exc:
        path.unlink(missing_ok=True)
        warnings.warn(
            f"damaged IDF cache {path} discarded ({exc}); building it again",
            DamagedCacheWarning,
            stacklevel=4,
        )
        return None
    return _table(counts, documents)


def _load_or_build(tokenizer: Tokenizer, on_progress: Progress | None) -> DocumentFrequency:
    path = _cache_path(tokenizer)
    table = _read(path)
    if table is None:
        with resources.build_lock(path):
            table = _read(path)  # another process may have built it meanwhile
            if table is None:
                table = _build(tokenizer, path, on_progress)
    return table


def _build(tokenizer: Tokenizer, path: Path, on_progress: Progress | None) -> DocumentFrequency:
    print(
        "capeval: building the COCO val2014 document frequencies once (a few seconds); "
        f"cached in {path}",
        file=sys.stderr,
    )
    sections, documents = count_coco_val(tokenizer, on_progress)
    header = {"documents": documents, "source": "coco-val2014", "tokenizer": tokenizer.name}
    try:
        idf_file.write(path, sections, ORDER, header)
    except OSError as exc:
        raise ResourceError(f"cannot write the IDF cache {path}: {exc}") from exc
    # tables of this tokenizer built from other versions of the captions or by earlier
    # versions of capeval
    for stale in path.parent.glob(f"coco-val2014-df-v*-{tokenizer.name}-*"):
        if stale != path and stale.suffix in (_SUFFIX, *_OLD_SUFFIXES):
            stale.unlink(missing_ok=True)
    table = _read(path)
    if table is None:  # written, then damaged or removed at once: count from memory
        return _table(idf_file.NgramCounts(sections, ORDER), documents)
    return table


_tables: dict[str, DocumentFrequency] = {}
#: held while a table is read or built: threads asking at once (people opening Compare
#: together) wait for one open (or one build) instead of each doing its own (issue 42)
_tables_lock = threading.Lock()


def coco_val_document_frequency(
    tokenizer: Tokenizer, on_progress: Progress | None = None
) -> DocumentFrequency:
    """The val2014 table for this tokenizer, from memory, the cache, or built now (telling
    ``on_progress`` how far the build is). A tokenizer of your own gets its table counted in
    memory, never cached on disk (:func:`~capeval_core.tokenize.is_builtin`)."""
    key = _memory_key(tokenizer)
    if key not in _tables:
        with _tables_lock:
            if key not in _tables:
                _tables[key] = (
                    _load_or_build(tokenizer, on_progress)
                    if is_builtin(tokenizer)
                    else _counted_here(tokenizer, on_progress)
                )
    return _tables[key]


def _memory_key(tokenizer: Tokenizer) -> Hashable:
    """capeval's tokenizers by name; one of your own by its class too, so two of them
    sharing a name (a class defined again) never share a table."""
    return tokenizer.name if is_builtin(tokenizer) else (type(tokenizer), tokenizer.name)


def _counted_here(tokenizer: Tokenizer, on_progress: Progress | None) -> DocumentFrequency:
    """The table counted in memory, written nowhere."""
    sections, documents = count_coco_val(tokenizer, on_progress)
    return _table(idf_file.NgramCounts(sections, ORDER), documents)


def coco_val_state(tokenizer: Tokenizer) -> str:
    """Where the next :func:`coco_val_document_frequency` call finds the table: ``"memory"``,
    ``"cache"`` (memory-mapped in milliseconds) or ``"build"`` (built now, once per machine).
    Never raises: a missing pycocoevalcap reads as ``"build"`` (the build then says why)."""
    if _memory_key(tokenizer) in _tables:
        return "memory"
    if not is_builtin(tokenizer):
        return "build"
    try:
        return "cache" if _cache_path(tokenizer).is_file() else "build"
    except (ResourceError, OSError):
        return "build"


# -- a scored set's document frequencies, named ------------------------------------------------
#: the sets registered in this process: name -> their document frequencies
_sets: dict[str, DocumentFrequency] = {}


def register_reference_set(references: Sequence[Sequence[str]], tokenizer: Tokenizer) -> str:
    """Name the document frequencies of a scored set's references (``set-`` and a digest of
    their tokens), so that one image of the set can be scored as the whole set scores it:
    ``idf="set-…"`` gives an image the CIDEr-D that ``idf="corpus"`` gives it in the set."""
    flat = [r for refs in references for r in refs]
    tokens = iter(tokenizer.tokenize_batch(flat))
    per_image = tuple(tuple(next(tokens) for _ in refs) for refs in references)
    digest = hashlib.sha256(
        json.dumps([tokenizer.name, per_image], ensure_ascii=False).encode()
    ).hexdigest()
    name = f"{SET_PREFIX}{digest[:16]}"
    if name not in _sets:
        _sets[name] = dataclasses.replace(corpus_document_frequency(per_image), source=name)
    return name


def has_reference_set(name: str) -> bool:
    """Whether this process holds the set ``name`` (registered since it started)."""
    return name in _sets


def reference_set_document_frequency(name: str) -> DocumentFrequency:
    """The document frequencies registered as ``name`` by :func:`register_reference_set`."""
    if name not in _sets:
        raise ResourceError(
            f"CIDEr-D's IDF source {name!r} names a set of references scored earlier in "
            "another process; score that set again here first, or take the COCO val2014 "
            "IDF or the scored set's own"
        )
    return _sets[name]
