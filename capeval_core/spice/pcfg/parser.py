"""The PCFG stage end to end: CoreNLP's words in, the tree its parser prints out."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from importlib.resources import files

from capeval_core.errors import InputError
from capeval_core.spice.pcfg.cky import Chart, extract
from capeval_core.spice.pcfg.grammar import BOUNDARY_TAG, BOUNDARY_WORD, Grammar, load_grammar
from capeval_core.spice.pcfg.lexicon import Lexicon
from capeval_core.spice.pcfg.trees import Tree, parser_output


@functools.cache
def _spellings() -> dict[str, str]:
    text = (files("capeval_core") / "data" / "spice_americanize.tsv").read_text(encoding="utf-8")
    rows = (line.split("\t") for line in text.splitlines() if line and not line.startswith("#"))
    return {word: read for word, read in rows}


def spellings_digest() -> str:
    """A short digest of the spelling table, for the parser's identity."""
    import hashlib

    return hashlib.sha256(repr(sorted(_spellings().items())).encode()).hexdigest()[:8]


def americanize(word: str) -> str:
    """The word as the parser reads it: CoreNLP's word function (British spellings made
    American, month and day names capitalised), from the table generated with the oracle.

    >>> americanize("colour"), americanize("monday"), americanize("dog")
    ('color', 'Monday', 'dog')
    """
    return _spellings().get(word, word)


#: the longest sentence parsed: the chart holds a vector of every grammar state for every span
#: (about 60 kB each: 700 MB at this length) and its time grows with the cube of the length.
#: Past some length the jar itself has no fixed answer: when its chart does not fit in Java's
#: heap, CoreNLP catches the OutOfMemoryError and SPICE gets a flat fallback tree, so the result
#: depends on ``-Xmx``, not on the sentence.
MAX_WORDS = 150


class PCFGParser:
    """CoreNLP 3.6.0's English PCFG parser as SPICE-1.0's pipeline runs it."""

    def __init__(self, grammar: Grammar | None = None) -> None:
        self.grammar = load_grammar() if grammar is None else grammar
        self.lexicon = Lexicon(self.grammar)

    def parse(self, words: Sequence[str]) -> Tree:
        """The parse of one sentence (CoreNLP's tokens) as CoreNLP prints it."""
        if not words:
            raise ValueError("an empty sentence has no parse")
        if len(words) > MAX_WORDS:
            raise InputError(
                f"SPICE's exact parser (stanford-pcfg) takes sentences of at most {MAX_WORDS} "
                f"words (got one of {len(words)}: {' '.join(words[:8])} ...)"
            )
        chart = Chart(self.grammar, self.lexicon, [americanize(w) for w in words])
        return parser_output(extract(chart), list(words), BOUNDARY_TAG, BOUNDARY_WORD)
