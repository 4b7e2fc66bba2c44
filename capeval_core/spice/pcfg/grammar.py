"""CoreNLP 3.6.0's English PCFG (``englishPCFG.ser.gz``), read from the models jar the user has.

capeval does not ship the grammar: it is part of ``stanford-corenlp-3.6.0-models.jar``, under
the GPL. The jar is found where :func:`models_jar` says (Java SPICE as pycocoevalcap runs it
leaves it there), read once with ``javaobj`` (a Java object stream reader, no Java needed) and
kept in the capeval cache as plain arrays, keyed by the grammar file's CRC.

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
        f"{path.parent}); or choose parser='stanford-emulation'"
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


@functools.cache
def load_grammar(jar: Path | None = None) -> Grammar:
    """The grammar of ``jar`` (default :func:`models_jar`), from the capeval cache when there."""
    from capeval_core.resources import build_lock, discard_damaged, dump_checked, load_checked

    jar = models_jar() if jar is None else jar
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
