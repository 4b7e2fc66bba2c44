"""The ``stanford-pcfg`` parser: SPICE-1.0's own CoreNLP 3.6.0 pipeline, stage by stage,
with the PCFG itself in place of a learned emulation of it.

1. :func:`.stanford.corenlp_words`: CoreNLP's tokens, cut into sentences as its sentence
   splitter cuts them (:func:`sentences`);
2. :mod:`.pcfg`: CoreNLP's exhaustive PCFG parse, computed as the jar computes it, with the
   grammar read from the CoreNLP 3.6.0 models jar the user provides (capeval does not ship
   it: it is GPL-licensed), and the tree converted to basic Universal Dependencies;
3. then the same stages as ``stanford-emulation``: CoreNLP's lemmas, the CC-processed graph,
   SceneGraphParser's enhancements and SpiceParser's rules.

Every stage is deterministic and checked against the jar, so the tuples are the jar's. The
parse costs about what it costs in Java (tens of milliseconds a caption), so this parser is
for numbers to put beside Java SPICE's; ``stanford-emulation`` is the fast default.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

from capeval_core.spice.pcfg.parser import PCFGParser
from capeval_core.spice.rules import RULES_VERSION, Tuple
from capeval_core.spice.stanford import basic_graph, corenlp_words, sentence_tuples

#: tokens that stay with the sentence a boundary token ends (closing quotes and brackets)
_FOLLOWERS = frozenset(
    {")", "]", "}", '"', "'", "''", "\u2019", "\u201d", "-RRB-", "-RSB-", "-RCB-"}
)
#: a parse worker (a fresh interpreter reading the grammar, about 2 s) pays for itself on
#: this many captions, and chunks this long keep the workers evenly busy
PARALLEL_MIN = 100
MIN_CHUNK = 25


def _ends_sentence(word: str) -> bool:
    """CoreNLP's boundary tokens: '.', or a run of '!' and '?'."""
    return word == "." or (bool(word) and set(word) <= {"!", "?"})


def sentences(words: Sequence[str]) -> list[list[str]]:
    """CoreNLP's sentences of one caption's tokens (its sentence splitter's defaults): every
    boundary token ends one, and closing quotes or brackets right after it join it.

    >>> sentences(["a", "dog", ".", "''", "a", "cat", "!?", "."])
    [['a', 'dog', '.', "''"], ['a', 'cat', '!?'], ['.']]
    """
    out: list[list[str]] = []
    current: list[str] = []
    for word in words:
        if out and not current and word in _FOLLOWERS:
            out[-1].append(word)
            continue
        current.append(word)
        if _ends_sentence(word):
            out.append(current)
            current = []
    if current:
        out.append(current)
    return out


#: bumped when the parse or the tree-to-dependencies conversion changes what it gives
PCFG_VERSION = 1


@functools.cache
def identity() -> str:
    """The grammar's identity in the user's jar, the spelling table, this stage's version,
    the rules."""
    from capeval_core.spice.pcfg.grammar import grammar_stamp, models_jar
    from capeval_core.spice.pcfg.parser import spellings_digest

    return (
        f"stanford-pcfg-{PCFG_VERSION}/{grammar_stamp(models_jar())}/"
        f"spell-{spellings_digest()}/rules-{RULES_VERSION}"
    )


def load_pipeline() -> PCFGParser:
    """The parser over the user's grammar (read once into the capeval cache)."""
    identity()  # a clear error when the models jar is missing
    return PCFGParser()


def caption_tuples(parser: PCFGParser, text: str) -> tuple[Tuple, ...]:
    """The tuples of one caption, its sentences' in order."""
    from capeval_core.spice.pcfg.ud import basic_dependencies

    out: list[Tuple] = []
    for k, words in enumerate(sentences(corenlp_words(text))):
        tags, heads, labels = basic_dependencies(parser.parse(words))
        out.extend(sentence_tuples(basic_graph(words, tags, heads, labels), k))
    return tuple(out)


def parse_texts(parser: PCFGParser, texts: Sequence[str], batch_size: int) -> list:
    """The tuples of each text (``batch_size`` is unused: captions are parsed one by one)."""
    return [caption_tuples(parser, text) for text in texts]
