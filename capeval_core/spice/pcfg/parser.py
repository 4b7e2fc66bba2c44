"""The PCFG stage end to end: CoreNLP's words in, the tree its parser prints out."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from importlib.resources import files

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


#: Every grammar state of CoreNLP 3.6.0's English PCFG: a cell of its chart is a ``float[]`` of
#: this many, 51,928 bytes with Java's array header (16 bytes, 8-byte aligned)
JAR_STATES = 12_977
JAR_ARRAY_BYTES = (16 + 4 * JAR_STATES + 7) // 8 * 8


def jar_chart_arrays(n_words: int) -> int:
    """How many state arrays CoreNLP 3.6.0 allocates to parse a sentence of ``n_words``
    (``ExhaustivePCFGParser.createArrays`` for the words, the boundary word and one more):
    a cell for every span ``0 <= start < end <= n_words + 2``, then four tables of each
    state's split-point bounds, two of ``n_words + 2`` rows and two of ``n_words + 3``.

    >>> jar_chart_arrays(10), round(jar_chart_arrays(JAR_MAX_WORDS) * JAR_ARRAY_BYTES / 2**30, 2)
    (128, 7.33)
    """
    n = n_words + 2
    return n * (n + 1) // 2 + 2 * n + 2 * (n + 1)


#: The longest sentence spice-1.0.jar parses at coco-caption's ``-Xmx8G``: past it the chart
#: (:func:`jar_chart_arrays`, growing with the square of the length) does not fit in the heap
#: the rest of SPICE's pipeline leaves, and CoreNLP falls back to :func:`fallback_tree`.
#: Measured with the jar on Java 17 (see the SPICE card): at 544 words it parses, at 545 the
#: chart runs out of memory.
JAR_MAX_WORDS = 544


def fallback_tree(words: Sequence[str]) -> Tree:
    """The tree CoreNLP's parser annotator gives a sentence it could not parse (its
    ``ParserUtils.xTree``): every word tagged ``XX`` under one flat ``X``. SPICE finds no
    tuple in it (its dependencies all hang from the last word, as ``dep``).

    >>> str(fallback_tree(["two", "dogs"]))
    '(X (XX two) (XX dogs))'
    """
    return Tree("X", [Tree("XX", [Tree(w)]) for w in words])


class PCFGParser:
    """CoreNLP 3.6.0's English PCFG parser as SPICE-1.0's pipeline runs it."""

    def __init__(self, grammar: Grammar | None = None) -> None:
        self.grammar = load_grammar() if grammar is None else grammar
        self.lexicon = Lexicon(self.grammar)

    def parse(self, words: Sequence[str], progress: Callable[[float], None] | None = None) -> Tree:
        """The parse of one sentence (CoreNLP's tokens) as CoreNLP prints it: over
        :data:`JAR_MAX_WORDS` words, the tree the jar gives when its chart does not fit,
        :func:`fallback_tree`. ``progress`` hears the share of the chart done (0 to 1)."""
        if not words:
            raise ValueError("an empty sentence has no parse")
        if len(words) > JAR_MAX_WORDS:
            return fallback_tree(words)
        read = [americanize(w) for w in words]
        chart = Chart(self.grammar, self.lexicon, read, progress=progress)
        return parser_output(extract(chart), list(words), BOUNDARY_TAG, BOUNDARY_WORD)
