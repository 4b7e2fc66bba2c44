"""The ``stanford-pcfg`` parser: SPICE-1.0's own CoreNLP 3.6.0 pipeline, stage by stage,
the PCFG itself included.

1. :func:`.corenlp.corenlp_words`: CoreNLP's tokens, cut into sentences as its sentence
   splitter cuts them (:func:`.corenlp.sentences`);
2. :mod:`.pcfg`: CoreNLP's exhaustive PCFG parse, computed as the jar computes it (the chart
   in a compiled kernel), with CoreNLP 3.6.0's grammar shipped in the package, and the tree
   converted to basic Universal Dependencies;
3. then CoreNLP's lemmas, the CC-processed graph, SceneGraphParser's enhancements and
   SpiceParser's rules (:mod:`.corenlp`).

Every stage is deterministic and checked against the jar, so the tuples are the jar's: this
is SPICE's parser. COCO 2014's captions come parsed with the package (:mod:`.shipped`).
"""

from __future__ import annotations

import contextlib
import functools
import sys
from collections.abc import Iterator, Sequence

from capeval_core.once import once
from capeval_core.progress import share_reporter
from capeval_core.spice.corenlp import basic_graph, corenlp_words, sentence_tuples, sentences
from capeval_core.spice.pcfg.parser import PCFGParser
from capeval_core.spice.rules import RULES_VERSION, Tuple

#: a parse worker (a fresh interpreter reading the grammar, about 2 s) pays for itself on
#: this many captions, and chunks this long keep the workers evenly busy
PARALLEL_MIN = 100
MIN_CHUNK = 25


#: bumped when the parse or the tree-to-dependencies conversion changes what it gives
PCFG_VERSION = 1


@functools.cache
def identity() -> str:
    """The shipped grammar's identity (its source file's CRC and size), the spelling table,
    this stage's version, the rules."""
    from capeval_core.spice.pcfg.grammar import shipped_source
    from capeval_core.spice.pcfg.parser import spellings_digest

    return (
        f"stanford-pcfg-{PCFG_VERSION}/{shipped_source()['stamp']}/"
        f"spell-{spellings_digest()}/rules-{RULES_VERSION}"
    )


@once  # one parser per process: its caches fill once, whichever thread asks first
def load_pipeline() -> PCFGParser:
    """The parser over the shipped grammar."""
    identity()  # a clear error when the grammar is missing
    return PCFGParser()


#: a sentence this long says how far its parse is (:mod:`capeval_core.progress`): it takes
#: a few seconds or more
REPORT_FROM_WORDS = 60
#: and says it at most this often (seconds)
REPORT_EVERY = 0.5


def long_sentences(texts: Sequence[str]) -> list[int]:
    """The word counts of the sentences of ``texts`` long enough for the parser to report
    its progress (:data:`REPORT_FROM_WORDS` words or more), longest first: a page says
    before scoring that such a parse takes a while.

    >>> long_sentences(["a dog runs.", " ".join(["word"] * 70)])
    [70]
    """
    counts = (len(words) for text in texts for words in sentences(corenlp_words(text)))
    return sorted((n for n in counts if n >= REPORT_FROM_WORDS), reverse=True)


def caption_tuples(parser: PCFGParser, text: str) -> tuple[Tuple, ...]:
    """The tuples of one caption, its sentences' in order."""
    from capeval_core.spice.pcfg.ud import basic_dependencies

    out: list[Tuple] = []
    parts = sentences(corenlp_words(text))
    for k, words in enumerate(parts):
        what = f"{len(words)}-word caption" if len(parts) == 1 else f"{len(words)}-word sentence"
        progress = (
            share_reporter(f"parsing a {what}", REPORT_EVERY)
            if len(words) >= REPORT_FROM_WORDS
            else None
        )
        with _recursion_for(len(words)):
            tags, heads, labels = basic_dependencies(parser.parse(words, progress=progress))
            out.extend(sentence_tuples(basic_graph(words, tags, heads, labels), k))
    return tuple(out)


@contextlib.contextmanager
def _recursion_for(n_words: int) -> Iterator[None]:
    """Python's recursion limit raised, while the block runs, to what the tree of a sentence
    of ``n_words`` may need (its stages walk the tree recursively; a chain of phrases, each
    inside the last, makes it as deep as a few levels a word)."""
    need = 8 * n_words + 500
    old = sys.getrecursionlimit()
    if need <= old:
        yield
        return
    sys.setrecursionlimit(need)
    try:
        yield
    finally:
        sys.setrecursionlimit(old)


def parse_texts(parser: PCFGParser, texts: Sequence[str], batch_size: int) -> list:
    """The tuples of each text (``batch_size`` is unused: captions are parsed one by one)."""
    return [caption_tuples(parser, text) for text in texts]
