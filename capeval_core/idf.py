"""CIDEr-D document frequencies from the COCO val2014 references (the ``coco-val2014`` IDF),
and those of a scored set's references named by their content (``set-…``).

The original ``coco-val-df`` pickle of the CIDEr authors is not distributed with any package,
so it is rebuilt from ``captions_val2014.json`` (inside the installed pycocoevalcap): all
captions tokenized in one batch, an image counting once per n-gram, N = 40,504 images
(metric-spec §4). The table is built once per tokenizer and cached in the user cache dir.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import sys
import threading
import warnings
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from capeval_core import resources
from capeval_core.errors import DamagedCacheWarning, ResourceError
from capeval_core.metrics.document_frequency import (
    ORDER,
    SET_PREFIX,
    DocumentFrequency,
    corpus_document_frequency,
)
from capeval_core.metrics.ngrams import Ngram, coco_words, ngram_set
from capeval_core.tokenize import Tokenizer

COCO_VAL_IDF_VERSION = "coco-val2014-df-v1"

#: ``on_progress(done, total, what)``: how far the one-time build is (the app draws a bar)
Progress = Callable[[int, int, str], None]
#: images counted between two progress reports
_REPORT_EVERY = 2000


#: Suffix of the cached tables (checked pickles; see resources.dump_checked).
_SUFFIX = ".checked-pickle"


def _cache_path(tokenizer: Tokenizer):
    jar = resources.pycocoevalcap_file("spice/spice-1.0.jar")
    stamp = resources.source_stamp(jar)
    name = f"{COCO_VAL_IDF_VERSION}-{tokenizer.name}-{stamp}{_SUFFIX}"
    return resources.cache_dir() / name


def build_coco_val_document_frequency(
    tokenizer: Tokenizer, on_progress: Progress | None = None
) -> DocumentFrequency:
    """Count, for every 1–4-gram, the val2014 images whose references contain it.

    ``on_progress`` hears of each step: reading and tokenizing the captions (one batch, as
    coco-caption tokenizes them), then the images counted so far.
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
    tokens = tokenizer.tokenize_batch(flat)
    df: Counter[Ngram] = Counter()
    pos = 0
    for done, image_id in enumerate(order, start=1):
        seen: set[Ngram] = set()
        for toks in tokens[pos : pos + len(by_image[image_id])]:
            seen |= ngram_set(coco_words(toks), ORDER)
        pos += len(by_image[image_id])
        df.update(seen)
        if done % _REPORT_EVERY == 0 or done == n:
            say(done, n, f"counting n-grams: {done:,} of {n:,} images")
    return DocumentFrequency(
        {g: float(c) for g, c in df.items()}, float(np.log(float(n))), n, "coco-val2014"
    )


def _read(path: Path) -> DocumentFrequency | None:
    """The cached table; None when there is none, or when it fails its checks (then it is
    deleted with one DamagedCacheWarning and built again)."""
    try:
        df, n = resources.load_checked(path)
        if not (isinstance(df, dict) and isinstance(n, int) and n > 0):
            raise ResourceError(f"{path.name} does not hold a document-frequency table")
    except FileNotFoundError:
        return None
    except (OSError, ResourceError, TypeError, ValueError) as exc:
        path.unlink(missing_ok=True)
        warnings.warn(
            f"damaged IDF cache {path} discarded ({exc}); building it again",
            DamagedCacheWarning,
            stacklevel=4,
        )
        return None
    return DocumentFrequency(df, float(np.log(float(n))), n, "coco-val2014")


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
    table = build_coco_val_document_frequency(tokenizer, on_progress)
    try:
        resources.dump_checked((table.df, table.documents), path)
    except OSError as exc:
        raise ResourceError(f"cannot write the IDF cache {path}: {exc}") from exc
    # tables of this tokenizer built from other versions of the captions
    # (".pickle": the unchecked tables of earlier capeval versions)
    for suffix in (_SUFFIX, ".pickle"):
        for stale in path.parent.glob(f"{COCO_VAL_IDF_VERSION}-{tokenizer.name}-*{suffix}"):
            if stale != path:
                stale.unlink(missing_ok=True)
    return table


_tables: dict[str, DocumentFrequency] = {}
#: held while a table is read or built: threads asking at once (people opening Compare
#: together) wait for one read instead of each reading its own (1.2 s, 400 MB; issue 42)
_tables_lock = threading.Lock()


def coco_val_document_frequency(
    tokenizer: Tokenizer, on_progress: Progress | None = None
) -> DocumentFrequency:
    """The val2014 table for this tokenizer, from memory, the cache, or built now (telling
    ``on_progress`` how far the build is)."""
    if tokenizer.name not in _tables:
        with _tables_lock:
            if tokenizer.name not in _tables:
                _tables[tokenizer.name] = _load_or_build(tokenizer, on_progress)
    return _tables[tokenizer.name]


def coco_val_state(tokenizer: Tokenizer) -> str:
    """Where the next :func:`coco_val_document_frequency` call finds the table: ``"memory"``,
    ``"cache"`` (read back in about a second) or ``"build"`` (built now, once per machine).
    Never raises: a missing pycocoevalcap reads as ``"build"`` (the build then says why)."""
    if tokenizer.name in _tables:
        return "memory"
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
