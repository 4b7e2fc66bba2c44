"""CoreNLP 3.6.0's English PCFG (``englishPCFG.ser.gz``), as arrays shipped with the package.

The grammar comes from ``stanford-corenlp-3.6.0-models.jar`` (Maven Central,
``edu.stanford.nlp:stanford-corenlp:3.6.0:models``; GPL-3.0-or-later, as capeval is).
``tools/spice_pcfg_grammar.py`` reads it once with ``javaobj`` (a Java object stream
reader, no Java needed) and writes the arrays below into ``capeval_core/data/spice_pcfg/``
with the source's checksums beside them; :func:`load_grammar` reads those, so parsing needs
no jar, no Java and no download. A models jar (:func:`models_jar`) is read only to rebuild
or cross-check the shipped arrays.

What is kept is what the parser reads, in the orders it reads it, because the PCFG's choice
between nearly tied parses depends on them (:mod:`.cky`):

- the binary rules in the grammar's own list order (the order parses are read back);
- the unary rules in the order CoreNLP's ``UnaryGrammar`` adds them when it loads (a Java
  ``HashSet``'s order, emulated here), and the unary closure that order builds: its closure
  is not always the best chain (an improved rule is not propagated to rules derived before),
  so it is rebuilt exactly as CoreNLP builds it, in float32;
- the lexicon's counts (seen word/tag pairs, unknown-word signature counts) and options.
"""

from __future__ import annotations

import functools
import gzip
import os
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from capeval_core.errors import MissingResourceError, ResourceError
from capeval_core.once import once

#: Environment variable naming the CoreNLP 3.6.0 models jar.
MODELS_ENV = "CAPEVAL_CORENLP_MODELS"
MODELS_JAR = "stanford-corenlp-3.6.0-models.jar"
GRAMMAR_MEMBER = "edu/stanford/nlp/models/lexparser/englishPCFG.ser.gz"
#: Bumped when the cached form changes.
CACHE_FORMAT = 1
#: ``englishPCFG.ser.gz`` as CoreNLP 3.6.0's models jar holds it (CRC-32 and size in the zip
#: index): the grammar SPICE-1.0 parses with
GRAMMAR_3_6_0 = "englishPCFG-c7b6ced1-1883795"

NULL = -1  # CoreNLP's "no word" / "no tag" in its counters
BOUNDARY_WORD = ".$."
BOUNDARY_TAG = ".$$."
UNKNOWN_WORD = "UNK"
GOAL = "ROOT"


def models_jar() -> Path:
    """The CoreNLP 3.6.0 models jar: ``$CAPEVAL_CORENLP_MODELS``, else where pycocoevalcap's
    Java SPICE puts it on its first run (``pycocoevalcap/spice/lib/``)."""
    override = os.environ.get(MODELS_ENV)
    if override:
        path = Path(override).expanduser()
        if not path.is_file():
            raise MissingResourceError(
                f"${MODELS_ENV} points at {path}, which is not a file (SPICE's stanford-pcfg "
                f"parser reads {MODELS_JAR} from there)"
            )
        return path
    from capeval_core.resources import pycocoevalcap_dir

    path = pycocoevalcap_dir() / "spice" / "lib" / MODELS_JAR
    if path.is_file():
        return path
    raise MissingResourceError(
        f"SPICE's stanford-pcfg parser reads CoreNLP 3.6.0's English PCFG from {MODELS_JAR}, "
        "which capeval does not ship (it is GPL-licensed): download it from Maven Central "
        "(edu.stanford.nlp:stanford-corenlp:3.6.0, classifier models) and point "
        f"${MODELS_ENV} at it, or run pycocoevalcap's Java SPICE once (it puts the jar in "
        f"{path.parent})"
    )


def grammar_stamp(jar: Path) -> str:
    """The grammar file's identity inside the jar (its CRC-32 and size, from the zip index);
    only CoreNLP 3.6.0's is accepted, since another version's parses are not SPICE-1.0's."""
    try:
        with zipfile.ZipFile(jar) as zf:
            info = zf.getinfo(GRAMMAR_MEMBER)
    except (zipfile.BadZipFile, KeyError, OSError) as exc:
        raise ResourceError(
            f"{jar} holds no readable {GRAMMAR_MEMBER} ({exc}), the grammar SPICE's "
            "stanford-pcfg parser reads"
        ) from None
    stamp = f"englishPCFG-{info.CRC:08x}-{info.file_size}"
    if stamp != GRAMMAR_3_6_0:
        raise ResourceError(
            f"{jar} holds another englishPCFG than CoreNLP 3.6.0's ({stamp}, expected "
            f"{GRAMMAR_3_6_0}): SPICE-1.0, and so SPICE's stanford-pcfg parser, parses with "
            f"3.6.0's; use {MODELS_JAR}"
        )
    return stamp


@dataclass(frozen=True, eq=False)  # compared and hashed by identity: one per loaded jar
class Grammar:
    """The parser's grammar and lexicon as arrays (state, tag and word numbers are CoreNLP's)."""

    stamp: str
    states: tuple[str, ...]
    tags: tuple[str, ...]
    words: dict[str, int]
    #: state number of each tag (-1 where a tag has no state)
    tag_state: np.ndarray
    #: binary rules, in the grammar's list order
    b_parent: np.ndarray
    b_left: np.ndarray
    b_right: np.ndarray
    b_score: np.ndarray
    #: unary rules grouped by parent, each group in CoreNLP's order (``u_start[p]`` onwards)
    u_parent: np.ndarray
    u_child: np.ndarray
    u_score: np.ndarray
    #: the closed unary rules (no self rules), grouped by child in CoreNLP's order
    c_parent: np.ndarray
    c_child: np.ndarray
    c_score: np.ndarray
    #: lexicon counts: (word, tag) -> count, with NULL for "any" (CoreNLP's IntTaggedWord keys)
    seen: dict[tuple[int, int], float]
    unseen: dict[tuple[int, int], float]
    #: tags of each known word (seen with it), and the open-class tags unknown words get
    word_tags: dict[int, tuple[int, ...]]
    open_tags: tuple[int, ...]
    #: every tag the lexicon counted (flexible tagging tries these)
    lexicon_tags: tuple[int, ...]
    smooth: tuple[float, float]
    smooth_threshold: int
    unknown_level: int

    @functools.cached_property
    def goal(self) -> int:
        return self.states.index(GOAL)

    @functools.cached_property
    def tag_index(self) -> dict[str, int]:
        return {t: i for i, t in enumerate(self.tags)}


def grammar_cache_path(jar: Path) -> Path:
    """Where the grammar of ``jar`` is kept once read (the capeval cache, keyed by its CRC)."""
    from capeval_core.resources import cache_dir

    return cache_dir() / f"corenlp-{grammar_stamp(jar)}-v{CACHE_FORMAT}.checked-pickle"


#: The shipped grammar: arrays (``.npz``, no pickles) and the source's identity (``.json``).
SHIPPED = "englishPCFG-3.6.0"
#: Bumped when the shipped arrays' layout changes.
SHIPPED_FORMAT = 1


def shipped_paths() -> tuple[Path, Path]:
    """The shipped grammar's arrays and its source record, in the installed package."""
    from importlib.resources import files

    root = Path(str(files("capeval_core") / "data" / "spice_pcfg"))
    return root / f"{SHIPPED}.npz", root / f"{SHIPPED}.json"


@functools.cache
def shipped_source() -> dict[str, Any]:
    """Where the shipped grammar came from (artifact, checksums, stamp), as the tool wrote it."""
    import json

    arrays, record = shipped_paths()
    if not arrays.is_file() or not record.is_file():
        raise MissingResourceError(
            f"SPICE's stanford-pcfg grammar is missing from the installed package ({arrays}); "
            "reinstall capeval"
        )
    return json.loads(record.read_text(encoding="utf-8"))


@once
def load_grammar(jar: Path | None = None) -> Grammar:
    """The grammar shipped with the package; with ``jar``, the one read from that models jar
    (through the capeval cache), to rebuild or cross-check the shipped arrays."""
    if jar is None:
        return read_shipped()
    return _load_from_jar(jar)


def read_shipped() -> Grammar:
    """The shipped arrays as a :class:`Grammar`, checked against the recorded checksum."""
    import hashlib

    source = shipped_source()
    arrays, _ = shipped_paths()
    data = arrays.read_bytes()
    if hashlib.sha256(data).hexdigest() != source["arrays_sha256"]:
        raise ResourceError(
            f"{arrays} does not match its recorded checksum: the shipped PCFG grammar is "
            "damaged; reinstall capeval"
        )
    import io

    with np.load(io.BytesIO(data), allow_pickle=False) as z:
        return from_arrays({k: z[k] for k in z.files}, source["stamp"])


def to_arrays(g: Grammar) -> dict[str, np.ndarray]:
    """The grammar as plain arrays (strings as unicode arrays, counters as key/value pairs,
    each in its own order, which :func:`from_arrays` keeps)."""
    out: dict[str, np.ndarray] = {
        "format": np.array(SHIPPED_FORMAT),
        "states": np.array(g.states),
        "tags": np.array(g.tags),
        "words": np.array(sorted(g.words, key=g.words.__getitem__)),
        "open_tags": np.array(g.open_tags, dtype=np.int32),
        "lexicon_tags": np.array(g.lexicon_tags, dtype=np.int32),
        "smooth": np.array(g.smooth, dtype=np.float64),
        "smooth_threshold": np.array(g.smooth_threshold),
        "unknown_level": np.array(g.unknown_level),
    }
    for name in ("tag_state", "b_parent", "b_left", "b_right", "b_score", "u_parent",
                 "u_child", "u_score", "c_parent", "c_child", "c_score"):  # fmt: skip
        out[name] = getattr(g, name)
    for name in ("seen", "unseen"):
        counter = getattr(g, name)
        out[f"{name}_keys"] = np.array(list(counter), dtype=np.int32).reshape(-1, 2)
        out[f"{name}_counts"] = np.array(list(counter.values()), dtype=np.float64)
    word_tags = list(g.word_tags.items())
    out["word_tags_words"] = np.array([w for w, _ in word_tags], dtype=np.int32)
    out["word_tags_starts"] = np.cumsum([0, *(len(t) for _, t in word_tags)]).astype(np.int64)
    out["word_tags_tags"] = np.array([t for _, ts in word_tags for t in ts], dtype=np.int32)
    return out


def from_arrays(z: dict[str, np.ndarray], stamp: str) -> Grammar:
    """The :class:`Grammar` of :func:`to_arrays`'s arrays."""
    if int(z["format"]) != SHIPPED_FORMAT:
        raise ResourceError(
            f"the shipped PCFG grammar has format {int(z['format'])}, this capeval reads "
            f"{SHIPPED_FORMAT}; reinstall capeval"
        )

    def counter(name: str) -> dict[tuple[int, int], float]:
        keys, counts = z[f"{name}_keys"].tolist(), z[f"{name}_counts"].tolist()
        return {(w, t): c for (w, t), c in zip(keys, counts, strict=True)}

    starts = z["word_tags_starts"].tolist()
    tags_flat = z["word_tags_tags"].tolist()
    word_tags = {
        w: tuple(tags_flat[starts[i] : starts[i + 1]])
        for i, w in enumerate(z["word_tags_words"].tolist())
    }
    return Grammar(
        stamp=stamp,
        states=tuple(z["states"].tolist()),
        tags=tuple(z["tags"].tolist()),
        words={w: i for i, w in enumerate(z["words"].tolist())},
        tag_state=z["tag_state"],
        b_parent=z["b_parent"],
        b_left=z["b_left"],
        b_right=z["b_right"],
        b_score=z["b_score"],
        u_parent=z["u_parent"],
        u_child=z["u_child"],
        u_score=z["u_score"],
        c_parent=z["c_parent"],
        c_child=z["c_child"],
        c_score=z["c_score"],
        seen=counter("seen"),
        unseen=counter("unseen"),
        word_tags=word_tags,
        open_tags=tuple(z["open_tags"].tolist()),
        lexicon_tags=tuple(z["lexicon_tags"].tolist()),
        smooth=tuple(z["smooth"].tolist()),
        smooth_threshold=int(z["smooth_threshold"]),
        unknown_level=int(z["unknown_level"]),
    )


def _load_from_jar(jar: Path) -> Grammar:
    """The grammar of a models jar, from the capeval cache when read before."""
    from capeval_core.resources import build_lock, discard_damaged, dump_checked, load_checked

    path = grammar_cache_path(jar)
    with build_lock(path):
        try:
            return load_checked(path)
        except FileNotFoundError:
            pass
        except ResourceError as exc:
            discard_damaged(path, "PCFG grammar cache", str(exc), "it is read again from the jar")
        with zipfile.ZipFile(jar) as zf:
            grammar = read_serialized(zf.read(GRAMMAR_MEMBER), grammar_stamp(jar))
        dump_checked(grammar, path)
        return grammar


def read_serialized(data: bytes, stamp: str) -> Grammar:
    """The grammar of a gzipped Java serialization of CoreNLP's ``LexicalizedParser``."""
    import javaobj.v2 as javaobj

    parser = _fields(javaobj.loads(gzip.decompress(data)))
    states = tuple(str(s) for s in _fields(parser["stateIndex"])["objects"])
    tags = tuple(str(s) for s in _fields(parser["tagIndex"])["objects"])
    words = {str(w): i for i, w in enumerate(_fields(parser["wordIndex"])["objects"])}
    state_of = {s: i for i, s in enumerate(states)}
    tag_state = np.array([state_of.get(t, -1) for t in tags], dtype=np.int32)

    binary = [_fields(r) for r in _fields(parser["bg"])["allRules"]]
    b_parent, b_left, b_right = (
        np.array([r[k] for r in binary], dtype=np.int32)
        for k in ("parent", "leftChild", "rightChild")
    )
    b_score = np.array([r["score"] for r in binary], dtype=np.float32)

    core = [_fields(r) for r in _fields(parser["ug"])["coreRules"]]
    unary = [(r["parent"], r["child"], np.float32(r["score"])) for r in core]
    by_parent, closed = unary_closure(unary, len(states))

    lex = _fields(parser["lex"])
    uw = _fields(lex["uwModel"])
    seen = _counter(lex["seenCounter"])
    unseen = _counter(uw["unSeenCounter"])
    options = _fields(lex["trainOptions"])
    word_tags: dict[int, list[int]] = {}
    for word, tag in seen:
        if word != NULL and tag != NULL:
            word_tags.setdefault(word, []).append(tag)
    lexicon_tags = tuple(sorted(t for w, t in seen if w == NULL and t != NULL))
    open_tags = tuple(
        t for t in lexicon_tags if unseen.get((NULL, t), 0.0) > options["openClassTypesThreshold"]
    )
    return Grammar(
        stamp=stamp,
        states=states,
        tags=tags,
        words=words,
        tag_state=tag_state,
        b_parent=b_parent,
        b_left=b_left,
        b_right=b_right,
        b_score=b_score,
        u_parent=np.array([r[0] for r in by_parent], dtype=np.int32),
        u_child=np.array([r[1] for r in by_parent], dtype=np.int32),
        u_score=np.array([r[2] for r in by_parent], dtype=np.float32),
        c_parent=np.array([r[0] for r in closed], dtype=np.int32),
        c_child=np.array([r[1] for r in closed], dtype=np.int32),
        c_score=np.array([r[2] for r in closed], dtype=np.float32),
        seen=seen,
        unseen=unseen,
        word_tags={w: tuple(ts) for w, ts in word_tags.items()},
        open_tags=open_tags,
        lexicon_tags=lexicon_tags,
        smooth=tuple(float(x) for x in lex["smooth"]),
        smooth_threshold=int(lex["smoothInUnknownsThreshold"]),
        unknown_level=int(uw["unknownLevel"]),
    )


def _fields(obj: Any) -> dict[str, Any]:
    """A Java object's fields by name (those of its superclasses included)."""
    out: dict[str, Any] = {}
    for fields in obj.field_data.values():
        out.update((f.name, v) for f, v in fields.items())
    return out


def _counter(obj: Any) -> dict[tuple[int, int], float]:
    """A ``ClassicCounter<IntTaggedWord>`` as {(word, tag): count}."""
    out = {}
    for key, value in _fields(obj)["map"].items():
        k = _fields(key)
        out[(int(k["word"]), int(k["tag"]))] = float(_fields(value)["d"])
    return out


def unary_closure(
    rules: list[tuple[int, int, np.float32]], n_states: int
) -> tuple[list[tuple[int, int, np.float32]], list[tuple[int, int, np.float32]]]:
    """CoreNLP's ``UnaryGrammar`` as it loads: ``rules`` in their serialized order give
    (the unary rules grouped by parent, each group in the order they were added; the closed
    rules without self rules, grouped by child, in the order they were first made).

    On load, CoreNLP copies its rules into a ``HashSet`` and adds them one by one in that
    set's order, closing the grammar under max as it goes (``closeRulesUnderMax``): each new
    rule X -> Y combines every closed rule W -> X made so far with every closed rule Y -> Z,
    in float32; an existing closed rule takes a better score in place.
    """
    from capeval_core.spice.pcfg.javahash import iteration_order, table_size_for

    n = len(rules)
    codes = [(p << 16) ^ c for p, c, _ in rules]  # UnaryRule.hashCode
    # the HashMap read from the stream (HashMap.readObject sizes it for n entries), then
    # the HashSet copied from its keys (HashSet(Collection))
    read = iteration_order(range(n), codes, table_size_for(max(int(n / 0.75 + 1.0), 16)))
    order = iteration_order(
        read, [codes[i] for i in read], table_size_for(max(int(n / 0.75) + 1, 16))
    )

    # closed rules are mutable [parent, child, score] lists shared by the two indexes
    best: dict[tuple[int, int], list] = {}
    with_parent: list[list[list]] = [[] for _ in range(n_states)]
    with_child: list[list[list]] = [[] for _ in range(n_states)]

    def relax(parent: int, child: int, score: np.float32) -> None:
        rule = best.get((parent, child))
        if rule is None:
            rule = [parent, child, score]
            best[(parent, child)] = rule
            with_parent[parent].append(rule)
            with_child[child].append(rule)
        elif rule[2] < score:
            rule[2] = score

    for s in range(n_states):
        relax(s, s, np.float32(0.0))
    added: list[list[tuple[int, int, np.float32]]] = [[] for _ in range(n_states)]
    for pos in order:
        parent, child, score = rules[pos]
        above = with_child[parent]
        for i in range(len(above)):  # lengths as they were: CoreNLP reads them once
            pr = above[i]
            below = with_parent[child]
            for j in range(len(below)):
                cr = below[j]
                relax(pr[0], cr[1], (pr[2] + cr[2]) + score)
        added[parent].append((parent, child, score))
    by_parent = [rule for group in added for rule in group]
    closed = [(r[0], r[1], r[2]) for group in with_child for r in group if r[0] != r[1]]
    return by_parent, closed
