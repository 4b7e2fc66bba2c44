"""The ``stanford-emulation`` parser: SPICE-1.0's CoreNLP 3.6.0 pipeline, without Java.

SPICE-1.0 parses each caption with CoreNLP 3.6.0 (``tokenize, ssplit, parse, lemma``: the PCFG
parser's tags and tree, the tree converted to Universal Dependencies) and reads the collapsed,
CC-processed graph. Here, stage by stage:

1. :func:`corenlp_words`: CoreNLP's re-tokenization of the (already PTB-tokenized) caption;
2. a spaCy tagger and dependency parser trained on SPICE-1.0's own parses of COCO train2014
   captions (``capeval_core/data/spice_parser``; recipe, command and accuracy in the SPICE
   card) give the PTB tags and the *basic* UD tree;
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
from capeval_core.spice.depgraph import DepGraph, Token
from capeval_core.spice.enhancement import enhance
from capeval_core.spice.rules import RULES_VERSION, Tuple, extract_tuples
from capeval_core.spice.spacy_runtime import MATMUL, import_spacy, use_numpy_blas


def model_dir() -> Path:
    """The trained pipeline shipped with the package."""
    return Path(str(files("capeval_core") / "data" / "spice_parser"))


@functools.cache
def identity() -> str:
    """Parser identity: the trained pipeline's digest, spaCy's version, the rules, BLAS."""
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
        f"stanford-emulation-{digest.hexdigest()[:12]}/spacy-{package_version('spacy')}/"
        f"rules-{RULES_VERSION}/{MATMUL}"
    )


def load_pipeline() -> tuple[Any]:
    """The trained tagger + parser, multiplying through numpy's BLAS."""
    identity()  # a clear error when the model is missing
    nlp = import_spacy().load(model_dir())
    use_numpy_blas(nlp)
    return (nlp,)


def corenlp_words(text: str) -> list[str]:
    """The tokens CoreNLP 3.6.0's tokenizer makes of a caption (one document).

    It is the PTB lexer capeval's ``ptb`` tokenizer emulates, run on this one caption: words
    stay words, except that an already-tokenized lower-case caption can still change where
    CoreNLP's case-sensitive rules no longer apply ("at&t" -> "at", "&", "t"; "pa." -> "pa",
    ".") and where a sentence-final abbreviation gets its period twice ("etc." -> "etc.",
    "."), as CoreNLP does at the end of a document (checked against the jar).

    >>> corenlp_words("an at&t phone and fruit etc.")
    ['an', 'at', '&', 't', 'phone', 'and', 'fruit', 'etc.', '.']
    """
    from capeval_core.ptb import raw_tokens, scan_tokens

    if text == text.lower():
        return list(raw_tokens([text])[0])
    return scan_tokens(text.replace("\n", " "))  # raw text keeps its case, as for CoreNLP


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


def sentence_tuples(g: DepGraph, sentence: int = 0) -> list[Tuple]:
    """Stages 4-5 on a basic tree: CC-processing, SceneGraphParser's enhancements, rules
    (``sentence``: the sentence's position in the caption, which CoreNLP's node order uses)."""
    from capeval_core.spice.ccprocess import cc_process

    cc = cc_process(g)
    enhance(cc, sentence)
    return extract_tuples(cc, sentence)


def parse_texts(loaded: tuple[Any], texts: Sequence[str], batch_size: int) -> list:
    """The tuples of each text (one sentence each: no caption has CoreNLP sentence breaks;
    an empty caption has no sentence, hence no tuples)."""
    from spacy.tokens import Doc

    (nlp,) = loaded
    words_of = [corenlp_words(text) for text in texts]
    docs = []
    for words in words_of:
        if words:
            starts = [True] + [False] * (len(words) - 1)  # one sentence, as CoreNLP splits
            docs.append(Doc(nlp.vocab, words=words, sent_starts=starts))
    parsed = iter(nlp.pipe(docs, batch_size=batch_size))
    out: list[tuple[Tuple, ...]] = []
    for words in words_of:
        if not words:
            out.append(())
            continue
        doc = next(parsed)
        tags = [t.tag_ for t in doc]
        heads = [t.head.i for t in doc]
        deps = [t.dep_ for t in doc]
        out.append(tuple(sentence_tuples(basic_graph(words, tags, heads, deps))))
    return out
