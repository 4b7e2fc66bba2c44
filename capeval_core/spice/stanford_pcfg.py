"""The ``stanford-pcfg`` parser: SPICE-1.0's own CoreNLP 3.6.0 pipeline, stage by stage,
with the PCFG itself in place of a learned emulation of it.

1. :func:`.stanford.corenlp_words`: CoreNLP's tokens, cut into sentences as its sentence
   splitter cuts them (:func:`.stanford.sentences`);
2. :mod:`.pcfg`: CoreNLP's exhaustive PCFG parse, computed as the jar computes it (the chart
   in a compiled kernel), with CoreNLP 3.6.0's grammar shipped in the package, and the tree
   converted to basic Universal Dependencies;
3. then the same stages as ``stanford-emulation``: CoreNLP's lemmas, the CC-processed graph,
   SceneGraphParser's enhancements and SpiceParser's rules.

Every stage is deterministic and checked against the jar, so the tuples are the jar's: this
is SPICE's default parser. COCO 2014's captions come parsed with the package
(:mod:`.shipped`); ``stanford-emulation`` is a faster option, close to the jar but not equal.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

from capeval_core.once import once
from capeval_core.spice.pcfg.parser import PCFGParser
from capeval_core.spice.rules import RULES_VERSION, Tuple
from capeval_core.spice.stanford import basic_graph, corenlp_words, sentence_tuples, sentences

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
