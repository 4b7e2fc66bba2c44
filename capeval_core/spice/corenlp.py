"""SPICE-1.0's CoreNLP 3.6.0 stages around the parse, and the jar's formats.

SPICE-1.0 runs CoreNLP's ``tokenize, ssplit, parse, lemma`` on each caption and reads the
collapsed, CC-processed dependency graph. The parse itself is :mod:`.pcfg` (through
:mod:`.stanford_pcfg`); the stages before and after it are here:

1. :func:`corenlp_words`: CoreNLP's re-tokenization of the (already PTB-tokenized) caption,
   cut into sentences as CoreNLP's splitter cuts them (:func:`sentences`);
2. (the parse: each sentence's PTB tags and basic Universal Dependencies tree);
3. :func:`basic_graph`: the basic tree with CoreNLP's lemmas of (word, tag)
   (:mod:`.morphology`);
4. :func:`sentence_tuples`: CoreNLP's basic -> collapsed, CC-processed conversion
   (:mod:`.ccprocess`), then SceneGraphParser's enhancements and SpiceParser's tuple rules
   (:mod:`.enhancement`, :mod:`.rules`).

Each stage is deterministic and checked against the jar; :func:`tree_of` and
:func:`jar_order` read the oracle's trees and tuples.
"""

from __future__ import annotations

from collections.abc import Sequence

from capeval_core.spice.depgraph import DepGraph, Token
from capeval_core.spice.enhancement import enhance
from capeval_core.spice.rules import Tuple, extract_tuples

_BRACKETS = frozenset("()[]{}")


def corenlp_words(text: str) -> list[str]:
    """The tokens CoreNLP 3.6.0's tokenizer makes of a caption (one document).

    It is the PTB lexer capeval's ``ptb`` tokenizer emulates, run on this one caption: words
    stay words, except that an already-tokenized lower-case caption can still change where
    CoreNLP's case-sensitive rules no longer apply ("at&t" -> "at", "&", "t"; "pa." -> "pa",
    ".") and where a sentence-final abbreviation gets its period twice ("etc." -> "etc.",
    "."), as CoreNLP does at the end of a document (checked against the jar).

    >>> corenlp_words("an at&t phone and fruit etc.")
    ['an', 'at', '&', 't', 'phone', 'and', 'fruit', 'etc.', '.']
    >>> corenlp_words("a dog (brown)")
    ['a', 'dog', '-LRB-', 'brown', '-RRB-']
    """
    from capeval_core.ptb import raw_tokens, scan_tokens

    # raw_tokens lower-cases its tokens (as coco-caption does), which only the lexer's names
    # for brackets (-LRB- ...) would not survive in a lower-case text
    if text == text.lower() and not _BRACKETS.intersection(text):
        return list(raw_tokens([text])[0])
    return scan_tokens(text.replace("\n", " "))  # raw text keeps its case, as for CoreNLP


#: tokens that stay with the sentence a boundary token ends (closing quotes and brackets)
_FOLLOWERS = frozenset(
    {")", "]", "}", '"', "'", "''", "\u2019", "\u201d", "-RRB-", "-RSB-", "-RCB-"}
)


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


def basic_graph(words: Sequence[str], tags: Sequence[str], heads: Sequence[int], deps) -> DepGraph:
    """The basic UD tree of one parsed sentence, lemmas from CoreNLP's morphology."""
    from capeval_core.spice.morphology import lemma

    g = DepGraph([Token(w, lemma(w, t), t) for w, t in zip(words, tags, strict=True)])
    for i, (h, rel) in enumerate(zip(heads, deps, strict=True)):
        if h == i:
            g.roots.append(i)
        else:
            g.edges.append([h, rel, i])
    return g


def tree_of(n: int, edges, roots) -> tuple[list[int], list[str]]:
    """A jar basic graph's ``edges`` ([governor, label, dependent], 1-based) and ``roots`` as
    the parser's output that ``basic_graph`` reads: heads (the root its own head) and labels.
    The oracle's trees come this way; a word with no head raises ValueError."""
    heads, labels = [-1] * n, [""] * n
    for gov, rel, dep in edges:
        heads[dep - 1], labels[dep - 1] = gov - 1, rel
    for r in roots:
        heads[r - 1], labels[r - 1] = r - 1, "ROOT"
    if -1 in heads:
        raise ValueError(f"not a tree: word {heads.index(-1) + 1} of {n} has no head")
    return heads, labels


def jar_order(tuples) -> list[Tuple]:
    """The oracle's tuples in ours: it writes a relation as (subject, object, relation), we as
    (subject, relation, object). The swap is its own inverse, so it also gives the oracle's."""
    return [tuple(t) if len(t) < 3 else (t[0], t[2], t[1]) for t in tuples]


def sentence_tuples(g: DepGraph, sentence: int = 0) -> list[Tuple]:
    """Stage 4 on a basic tree: CC-processing, SceneGraphParser's enhancements, rules
    (``sentence``: the sentence's position in the caption, which CoreNLP's node order uses)."""
    from capeval_core.spice.ccprocess import cc_process

    cc = cc_process(g)
    enhance(cc, sentence)
    return extract_tuples(cc, sentence)
