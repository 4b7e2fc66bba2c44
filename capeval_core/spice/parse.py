"""Parsing captions into SPICE tuples, through an on-disk cache and parse worker processes.

One parser (:data:`PARSERS`): ``"stanford-pcfg"`` (:mod:`.stanford_pcfg`, CoreNLP's PCFG
itself, computed as the jar computes it from the grammar the package ships). The two parsers
of earlier versions that gave other numbers than the jar, ``"stanford-emulation"`` and
``"spacy-sm"`` (:data:`RETIRED_PARSERS`), are refused with a message naming this one.
Extracted tuples are cached per caption text (:func:`parse_cache_path`), keyed by the
parser's identity (:func:`model_identity`), so a warm run never loads a parser; before that
cache, the tuples of COCO's captions that ship with the package (:mod:`.shipped`, made by the
same parser identity) are read. Cached rows of the retired parsers are deleted the first time
a process opens the cache.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import json
import multiprocessing
import sqlite3
import types
import warnings
from collections.abc import Iterable, Sequence
from concurrent.futures import wait
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Any

from capeval_core import progress
from capeval_core.errors import DamagedCacheWarning, InputError
from capeval_core.resources import available_cpus, cache_dir
from capeval_core.spice.rules import Tuple
from capeval_core.workers import Claims, WorkerPool, claim, install

#: The parsers, each a module with ``identity()``, ``load_pipeline()``,
#: ``parse_texts(loaded, texts, batch_size)``, ``PARALLEL_MIN`` and ``MIN_CHUNK``.
PARSERS: dict[str, str] = {"stanford-pcfg": "capeval_core.spice.stanford_pcfg"}
DEFAULT_PARSER = "stanford-pcfg"
#: parsers of earlier versions, no longer part of capeval: name -> what it was, and the
#: prefix of its identity in parse-cache rows
RETIRED_PARSERS: dict[str, tuple[str, str]] = {
    "stanford-emulation": ("a learned emulation of the jar's parses", "stanford-emulation-"),
    "spacy-sm": ("spaCy's small model converted by rules", "spacy-"),
}


def retired_parser_message(name: str) -> str:
    """What a retired parser's name gets: what it was, and the parser to use.

    >>> print(retired_parser_message("spacy-sm"))
    SPICE's parser 'spacy-sm' (spaCy's small model converted by rules) was retired: its \
numbers were not the SPICE jar's; use 'stanford-pcfg', SPICE-1.0's own CoreNLP 3.6.0 PCFG (the \
jar's numbers)
    """
    what = RETIRED_PARSERS[name][0]
    return (
        f"SPICE's parser {name!r} ({what}) was retired: its numbers were not the SPICE jar's; "
        f"use {DEFAULT_PARSER!r}, SPICE-1.0's own CoreNLP 3.6.0 PCFG (the jar's numbers)"
    )


def parser_module(name: str) -> Any:
    """The module of parser ``name`` (imported on first use)."""
    if isinstance(name, str) and name in RETIRED_PARSERS:
        raise InputError(retired_parser_message(name))
    if name not in PARSERS:
        raise InputError(f"`parser` must be one of {sorted(PARSERS)} (got {name!r})")
    return importlib.import_module(PARSERS[name])


def parse_cache_path() -> Path:
    """The SQLite file holding extracted tuples per caption, in the user cache directory."""
    return cache_dir() / "spice-parses.sqlite"


#: Each parser's loaded pipeline (see CaptionParser._load), shared by the threads of the
#: process: the app runs every script run in a thread of its own, so a pipeline per thread was
#: loaded again on each Compare edit that parsed a caption (0.7 s, holding the interpreter lock
#: while other people's pages waited; issue 42). stanford-pcfg's parser keeps no state
#: between parses.
_PIPELINES = types.SimpleNamespace()


class CaptionParser:
    """Parses captions with one of :data:`PARSERS` (batched) into SPICE tuples, through the
    on-disk cache.

    The parser is loaded only when a caption is missing from the shipped parses
    (``shipped``; default: unless ``$CAPEVAL_SPICE_SHIPPED=0``) and the cache. ``n_process``
    processes parse large batches (this one plus ``n_process - 1`` spawned workers; default: one per
    available CPU, at most 4, or 1 inside a worker process); batches under
    :data:`PARALLEL_MIN` captions stay in-process.
    """

    def __init__(
        self,
        parser: str = DEFAULT_PARSER,
        *,
        cache: bool = True,
        n_process: int | None = None,
        batch_size: int = 256,
        shipped: bool | None = None,
    ) -> None:
        from capeval_core.spice.shipped import shipped_enabled

        self.parser = parser
        self._module = parser_module(parser)
        self.use_cache = cache
        self.use_shipped = shipped_enabled() if shipped is None else shipped
        if n_process is None:  # a worker process leaves the spreading to its parent
            in_worker = multiprocessing.parent_process() is not None
            n_process = 1 if in_worker else min(4, available_cpus())
        self.n_process = max(1, n_process)
        self.batch_size = batch_size
        self._loaded: Any = None
        self.model_id = self._module.identity()
        #: batches this large are worth parse workers, in chunks at least ``min_chunk`` long
        self.parallel_min: int = self._module.PARALLEL_MIN
        self.min_chunk: int = self._module.MIN_CHUNK

    # the parser is imported lazily: a warm cache never needs it
    def _load(self) -> None:
        if self._loaded is not None:
            return
        # one loaded parser per process (see _PIPELINES): a scoring worker's parsers, one per
        # SPICE part, and every script run of the app load the grammar once
        loaded = getattr(_PIPELINES, "loaded", None)
        if loaded is None:
            loaded = _PIPELINES.loaded = {}
        if self.parser not in loaded:
            loaded[self.parser] = self._module.load_pipeline()
        self._loaded = loaded[self.parser]

    @property
    def model(self) -> Any:
        """The loaded parser, as the parser's module loads it (loading it if needed)."""
        self._load()
        return self._loaded

    def parse(self, texts: Iterable[str]) -> dict[str, tuple[Tuple, ...]]:
        """Tuples of each distinct text (sentences of one caption concatenated, §6.1 step 4)."""
        wanted = list(dict.fromkeys(texts))
        found = self._read_shipped(wanted)
        if self.use_cache:
            found.update(self._read_cache([t for t in wanted if t not in found]))
        missing = [t for t in wanted if t not in found]
        if missing:
            fresh: dict[str, tuple[Tuple, ...]] = {}
            try:
                self._parse_missing(missing, fresh)
            finally:
                # a parse stopped part way (Ctrl-C, the app's Cancel, an error) keeps what it
                # parsed, so the next run goes on from there: it kept none of it
                if self.use_cache and fresh:
                    self._write_cache(fresh)
            found.update(fresh)
        return found

    def uncached(self, texts: Sequence[str]) -> list[str]:
        """The distinct ``texts`` that the parse cache lacks (all of them without a cache)."""
        wanted = list(dict.fromkeys(texts))
        found = self._read_shipped(wanted)
        rest = [t for t in wanted if t not in found]
        found.update(self._read_cache(rest) if self.use_cache else {})
        return [t for t in rest if t not in found]

    def _read_shipped(self, texts: list[str]) -> dict[str, tuple[Tuple, ...]]:
        """The shipped tuples of ``texts`` (made by this parser's identity), if any."""
        if not self.use_shipped:
            return {}
        from capeval_core.spice.shipped import lookup

        return lookup(self.model_id, texts)

    def tuples_of(self, texts: Sequence[str]) -> list[tuple[Tuple, ...]]:
        """Parse ``texts`` in this process, without the cache."""
        self._load()
        return self._module.parse_texts(self._loaded, texts, self.batch_size)

    def _parse_here(self, texts: Sequence[str], out: dict[str, tuple[Tuple, ...]]) -> None:
        """Parse ``texts`` in this process into ``out``, one at a time, so that a parse
        stopped part way has its parsed texts in ``out``."""
        for text in texts:
            (out[text],) = self.tuples_of([text])

    def _parse_missing(self, missing: list[str], out: dict[str, tuple[Tuple, ...]]) -> None:
        """Parse ``missing`` into ``out``, in this process and, for large batches, in
        spawned workers too (``out`` holds what was parsed when it is stopped).

        The chunks are queued for the workers in order while this process takes them from
        the back; each side claims a chunk before parsing it (:class:`~capeval_core.workers.
        Claims`), so the work splits itself however fast the workers start, and each chunk is
        parsed exactly once. The workers stop at once if parsing here fails or is stopped.
        """
        workers = self.n_process - 1 if len(missing) >= self.parallel_min else 0
        if workers <= 0:
            self._parse_here(missing, out)
            return
        size = max(self.min_chunk, len(missing) // (8 * self.n_process))
        chunks = [missing[k : k + size] for k in range(0, len(missing), size)]
        try:
            channel = multiprocessing.get_context("spawn").Queue()  # the workers' long parses
            claims = Claims(len(chunks))
            pool = WorkerPool(
                workers, initializer=_parse_worker_setup, initargs=(channel, claims.share())
            )
            parse = functools.partial(_parse_in_worker, self.parser)
            futures = [pool.submit(parse, chunk, i) for i, chunk in enumerate(chunks)]
        except (OSError, RuntimeError):  # no process support here: parse everything in-process
            self._parse_here(missing, out)
            return
        here: set[int] = set()
        with pool:
            for i in reversed(range(len(chunks))):
                if not claims.claim(i):  # the workers have come this far
                    break
                self._parse_here(chunks[i], out)
                here.add(i)
            for i, (chunk, future) in enumerate(zip(chunks, futures, strict=True)):
                if i in here:
                    continue
                while not wait([future], timeout=0.5).done:
                    progress.drain(channel, progress.report)
                try:
                    parsed = future.result()
                except (BrokenProcessPool, OSError):  # a worker died: parse its chunk here
                    parsed = self.tuples_of(chunk)
                out.update(zip(chunk, parsed, strict=True))

    def _connect(self) -> sqlite3.Connection | None:
        """The parse cache, created on demand. A file that is not a SQLite database, is
        corrupt, or holds another table layout is deleted (one DamagedCacheWarning) and
        created again: it would otherwise stay unusable, silently, for every later run."""
        for attempt in (1, 2):
            con = None
            try:
                con = sqlite3.connect(parse_cache_path(), timeout=30)
                con.execute(
                    "CREATE TABLE IF NOT EXISTS parses (model TEXT, text TEXT, tuples TEXT, "
                    "PRIMARY KEY (model, text))"
                )
                columns = [row[1] for row in con.execute("PRAGMA table_info(parses)")]
                if columns == ["model", "text", "tuples"]:
                    _prune_retired(con)
                    return con
                problem = f"its table has the columns {columns}"
            except sqlite3.Error as exc:
                if not _damaged(exc):
                    if con is not None:
                        con.close()
                    return None  # locked, read-only, ...: an unusable cache only costs speed
                problem = str(exc)
            except OSError:
                return None
            if con is not None:
                con.close()
            if attempt == 1:
                _discard_parse_cache(problem)
        return None

    def _read_cache(self, texts: list[str]) -> dict[str, tuple[Tuple, ...]]:
        texts = [t for t in texts if _storable(t)]
        con = self._connect()
        if con is None:
            return {}
        out: dict[str, tuple[Tuple, ...]] = {}
        bad: list[str] = []
        try:
            for k in range(0, len(texts), 900):
                chunk = texts[k : k + 900]
                marks = ",".join("?" * len(chunk))
                rows = con.execute(
                    f"SELECT text, tuples FROM parses WHERE model = ? AND text IN ({marks})",
                    [self.model_id, *chunk],
                )
                for text, blob in rows:
                    tuples = _cached_tuples(blob)
                    if tuples is None:
                        bad.append(text)
                    else:
                        out[text] = tuples
            if bad:  # parsed again by the caller and written back
                with con:
                    con.executemany(
                        "DELETE FROM parses WHERE model = ? AND text = ?",
                        [(self.model_id, t) for t in bad],
                    )
        except sqlite3.Error as exc:
            if _damaged(exc):
                con.close()
                _discard_parse_cache(str(exc))
            return out
        finally:
            con.close()
        if bad:
            warnings.warn(
                f"{len(bad):,} damaged row(s) of the SPICE parse cache "
                f"{parse_cache_path()} discarded; those captions are parsed again",
                DamagedCacheWarning,
                stacklevel=3,
            )
        return out

    def _write_cache(self, fresh: dict[str, tuple[Tuple, ...]]) -> None:
        con = self._connect()
        if con is None:
            return
        try:
            with con:
                con.executemany(
                    "INSERT OR REPLACE INTO parses VALUES (?, ?, ?)",
                    [(self.model_id, t, json.dumps(v)) for t, v in fresh.items() if _storable(t)],
                )
        except sqlite3.Error as exc:
            if _damaged(exc):
                con.close()
                _discard_parse_cache(str(exc))
        finally:
            con.close()


def _storable(text: str) -> bool:
    """Whether SQLite can hold ``text`` (UTF-8): a lone surrogate (text decoded with
    ``surrogateescape``) cannot, so its caption is parsed each time instead of stopping the
    run with a UnicodeEncodeError."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


#: parse-cache files whose rows of retired parsers this process has deleted
_PRUNED: set[str] = set()


def _prune_retired(con: sqlite3.Connection) -> None:
    """Delete the rows of :data:`RETIRED_PARSERS` (never read again), once per process and
    file; a busy or read-only cache keeps them, unread."""
    path = str(parse_cache_path())
    if path in _PRUNED:
        return
    _PRUNED.add(path)
    try:
        with con:
            for _, prefix in RETIRED_PARSERS.values():
                after = prefix[:-1] + chr(ord(prefix[-1]) + 1)  # the rows starting with prefix
                con.execute("DELETE FROM parses WHERE model >= ? AND model < ?", (prefix, after))
    except sqlite3.Error:
        pass


def _cached_tuples(blob: object) -> tuple[Tuple, ...] | None:
    """A cache row's tuples: a JSON list of 1-3 strings each; None for anything else."""
    try:
        data = json.loads(blob)  # type: ignore[arg-type]
    except (TypeError, ValueError, RecursionError):
        return None
    if not isinstance(data, list) or not all(
        isinstance(t, list) and 1 <= len(t) <= 3 and all(isinstance(x, str) for x in t)
        for t in data
    ):
        return None
    return tuple(tuple(t) for t in data)


def _damaged(exc: sqlite3.Error) -> bool:
    """Whether SQLite says the file is not a database or is corrupt (not merely busy)."""
    return getattr(exc, "sqlite_errorname", "") in ("SQLITE_CORRUPT", "SQLITE_NOTADB")


def _discard_parse_cache(problem: str) -> None:
    """Delete a damaged parse-cache file (its captions are parsed again), saying so once."""
    path = parse_cache_path()
    for suffix in ("", "-journal", "-wal", "-shm"):
        with contextlib.suppress(OSError):
            Path(f"{path}{suffix}").unlink(missing_ok=True)
    warnings.warn(
        f"the SPICE parse cache {path} was damaged ({problem}); deleted, and built "
        "again as captions are parsed",
        DamagedCacheWarning,
        stacklevel=4,
    )


def model_identity(parser: str = DEFAULT_PARSER) -> str:
    """Parser identity for signatures and cache keys (its grammar, versions, rules).

    Raises :class:`MissingResourceError` when the parser's grammar cannot be found, and
    :class:`InputError` for a retired parser.
    """
    return parser_module(parser).identity()


def parse_into_cache(texts: list[str], parser: str = DEFAULT_PARSER) -> None:
    """Parse ``texts`` in this process into the parse cache (a scoring worker's share of
    :meth:`~capeval_core.metrics.spice.Spice.shared_work`)."""
    CaptionParser(parser, n_process=1).parse(texts)


_WORKER_PARSERS: dict[str, CaptionParser] = {}


def _parse_worker_setup(channel: Any, claims: Any) -> None:
    """A parse worker's first call: its long parses report to ``channel``, and it claims
    chunks through the pool's shared flags (see CaptionParser._parse_missing)."""
    progress.worker_channel(channel)
    install(claims)


def _parse_in_worker(parser: str, texts: list[str], chunk: int) -> list[tuple[Tuple, ...]] | None:
    """Runs in a parse worker: one parser per worker process, kept for its next chunks;
    None for a chunk the caller claimed first (see CaptionParser._parse_missing)."""
    if not claim(chunk):
        return None
    if parser not in _WORKER_PARSERS:
        _WORKER_PARSERS[parser] = CaptionParser(parser, cache=False, n_process=1, shipped=False)
    return _WORKER_PARSERS[parser].tuples_of(texts)
