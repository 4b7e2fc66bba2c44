"""The ``stanford-emulation`` parser: SPICE-1.0's CoreNLP 3.6.0 pipeline, without Java.

SPICE-1.0 parses each caption with CoreNLP 3.6.0 (``tokenize, ssplit, parse, lemma``: the PCFG
parser's tags and tree, the tree converted to Universal Dependencies) and reads the collapsed,
CC-processed graph. Here, stage by stage:

1. :func:`corenlp_words`: CoreNLP's re-tokenization of the (already PTB-tokenized) caption,
   cut into sentences as CoreNLP's splitter cuts them (:func:`sentences`);
2. a spaCy tagger and encoders trained on SPICE-1.0's own parses of COCO train2014 captions
   (``capeval_core/data/spice_parser``) give the PTB tags; a tree scorer over the encoders
   (:mod:`.biaffine`) gives the *basic* UD tree, the best projective one by its scores
   (recipe, commands and accuracy in the SPICE card);
3. :mod:`.morphology`: CoreNLP's lemmas of (word, tag);
4. :mod:`.ccprocess`: CoreNLP's basic -> collapsed, CC-processed conversion;
5. then the same enhancements and tuple rules as every parser (:mod:`.enhancement`,
   :mod:`.rules`).

Stages 1 and 3-5 are deterministic and checked against the jar stage by stage; only stage 2
is learned, so it is where the emulation can differ from the jar.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Sequence
from importlib.resources import files
from pathlib import Path
from typing import Any

from capeval_core.errors import MissingResourceError
from capeval_core.spice.biaffine import EISNER_SPAN, Tree, TreeScorer
from capeval_core.spice.depgraph import DepGraph, Token
from capeval_core.spice.enhancement import enhance
from capeval_core.spice.rules import RULES_VERSION, Tuple, extract_tuples
from capeval_core.spice.spacy_runtime import MATMUL, import_spacy, use_numpy_blas


def model_dir() -> Path:
    """The trained pipeline shipped with the package."""
    return Path(str(files("capeval_core") / "data" / "spice_parser"))


#: bumped when the words handed to the parser change: 1 = each CoreNLP sentence parsed alone
#: (before, a caption of several sentences was parsed as one)
SENTENCES_VERSION = 1


@functools.cache
def identity() -> str:
    """Parser identity: the trained pipeline's digest, the decoder's span, how captions are cut
    into sentences, spaCy's version, the rules, BLAS."""
    from capeval_core.resources import package_version

    root = model_dir()
    if not (root / "meta.json").is_file():
        raise MissingResourceError(
            f"SPICE's stanford-emulation parser is missing from the installed package "
            f"({root}); reinstall capeval, or choose parser='spacy-sm'"
        )
    digest = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        digest.update(path.relative_to(root).as_posix().encode())
        digest.update(path.read_bytes())
    return (
        f"stanford-emulation-{digest.hexdigest()[:12]}/span-{EISNER_SPAN}/"
        f"sentences-{SENTENCES_VERSION}/spacy-{package_version('spacy')}/"
        f"rules-{RULES_VERSION}/{MATMUL}"
    )


def load_pipeline(root: Path | None = None) -> tuple[Any, TreeScorer]:
    """The trained tagger and encoders (multiplying through numpy's BLAS) and the tree scorer:
    the package's, or those at ``root`` (a trained model being measured)."""
    if root is None:
        identity()  # a clear error when the model is missing
        root = model_dir()
    nlp = import_spacy().load(root)
    use_numpy_blas(nlp)
    return nlp, TreeScorer.load(root / "graph")


#: captions scored together: sentences of one length share the scorer's matrix products, and
#: a chunk's encoder vectors stay small in memory (see ``TreeScorer.parse``)
SCORER_CHUNK = 2000


def parse_words(
    loaded: tuple[Any, TreeScorer], words_of: Sequence[Sequence[str]], batch_size: int = 256
) -> list[Tree]:
    """Tags, heads (the root its own head) and labels of each non-empty word list, as one
    sentence each. The tags are the tree scorer's:
    the tagger's own, which its encoder reads, are right less often (98.2 against 98.5 % of
    held-out words)."""
    from spacy.tokens import Doc

    nlp, scorer = loaded
    docs = [
        Doc(nlp.vocab, words=list(w), sent_starts=[True] + [False] * (len(w) - 1)) for w in words_of
    ]
    return scorer.parse(encoder_features(nlp, docs, batch_size))


def encoder_features(nlp: Any, docs: list, batch_size: int = 256) -> list:
    """Each word's vectors from the trained pipeline's encoders, side by side: the tagger's
    (which the tagger sets as ``doc.tensor``) and the one trained for the transition parser.
    Tags the docs in place, as the parser's encoder reads the predicted tags."""
    import numpy as np

    if "parser_encoder" in nlp.pipe_names:  # as packaged
        docs = list(nlp.pipe(docs, batch_size=batch_size, disable=["parser_encoder"]))
        parser_encoder = nlp.get_pipe("parser_encoder").model
    else:  # as spaCy trained it, the transition parser around its encoder
        docs = list(nlp.pipe(docs, batch_size=batch_size, disable=["parser"]))
        parser_encoder = nlp.get_pipe("parser").model.get_ref("tok2vec").layers[0]
    return [
        np.hstack([doc.tensor, vectors])
        for doc, vectors in zip(docs, parser_encoder.predict(docs), strict=True)
    ]


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
    """Stages 4-5 on a basic tree: CC-processing, SceneGraphParser's enhancements, rules
    (``sentence``: the sentence's position in the caption, which CoreNLP's node order uses)."""
    from capeval_core.spice.ccprocess import cc_process

    cc = cc_process(g)
    enhance(cc, sentence)
    return extract_tuples(cc, sentence)


def parse_texts(loaded: tuple[Any, TreeScorer], texts: Sequence[str], batch_size: int) -> list:
    """The tuples of each text: each of its CoreNLP sentences parsed as one, as the jar parses
    them (a caption as coco-caption feeds SPICE has one; an empty one has none, hence no
    tuples)."""
    split = [sentences(corenlp_words(text)) for text in texts]
    out: list[tuple[Tuple, ...]] = []
    for start in range(0, len(texts), SCORER_CHUNK):
        chunk = split[start : start + SCORER_CHUNK]
        parsed = iter(
            parse_words(loaded, [words for caption in chunk for words in caption], batch_size)
        )
        for caption in chunk:
            tuples: list[Tuple] = []
            for k, words in enumerate(caption):
                tags, heads, deps = next(parsed)
                tuples += sentence_tuples(basic_graph(words, tags, heads, deps), k)
            out.append(tuple(tuples))
    return out
