"""Which WordNet synonyms fit a word where it stands: its part of speech, its common senses.

METEOR's synonym file (``synonym/english.synsets``, :mod:`capeval_core.meteor_resources`) maps
a word to synset ids but says neither a synset's part of speech nor how common a sense is
(the ids of a word come in WordNet's sense-key order, not in its frequency order). The
perturbation lab needs both: "grass" in "a dog on the grass" is a noun, so the verb sense
"grass = inform on" (snitch) must not be used, and "play" in "children play" should not
become "toy", a rare sense. Both are recovered from resources capeval already ships:

* **A synset's part of speech.** Inferred once from WordNet 3.0's lemma index per part of
  speech and the order of each word's synsets, and shipped as a table
  (``data/synset_parts.tsv.gz``, written by ``tools/synset_parts.py``, whose docstring gives
  the rules); a synset the rules leave undecided (about one in nine) is never used.
* **A word's part of speech in the caption.** The Penn Treebank tag SPICE's parser gives it
  (CoreNLP 3.6.0's PCFG, :mod:`capeval_core.spice.pcfg`), on the caption as written, each of
  its CoreNLP sentences parsed alone; a word tagged neither noun, verb, adjective nor adverb
  gets no synonym.
* **Common senses.** A word's distributional vector is dominated by its frequent senses
  (Arora et al. 2018, "Linear algebraic structure of word senses, with applications to
  polysemy"), so a synonym from a rare sense lies far from it in GloVe 6B 50-d: grass–snitch
  −0.09, play–toy 0.27, cat–guy 0.49, while child–kid is 0.56, couch–sofa 0.70 and
  road–route 0.82. A synonym is kept when its cosine with the word reaches
  :data:`COMMON_SENSE_SIMILARITY`, and the most similar one is used. This is a proxy:
  WordNet's sense frequencies are not among capeval's resources, and a rare sense whose
  words are distributionally close (big–bad, play–run) still gets through.

>>> from capeval_core.meteor_resources import meteor_synsets
>>> synset_pos()[next(iter(meteor_synsets().synsets["sofa"]))]
'noun'
"""

from __future__ import annotations

import functools
import gzip
import re
from collections.abc import Callable, Mapping, Sequence
from importlib.resources import files
from typing import Any

from capeval_core.errors import InputError, ResourceError

#: a synonym's GloVe cosine with the word it replaces must reach this (see the module doc)
COMMON_SENSE_SIMILARITY = 0.5
#: WordNet's parts of speech, as the synset table names them
PARTS = ("noun", "verb", "adj", "adv")
#: Penn Treebank tag prefix -> part of speech
TAG_PARTS = {"NN": "noun", "VB": "verb", "JJ": "adj", "RB": "adv"}


@functools.cache
def synset_pos() -> Mapping[int, str]:
    """synset id (as in METEOR's file) -> "noun", "verb", "adj" or "adv", where decided."""
    path = files("capeval_core") / "data" / "synset_parts.tsv.gz"
    table: dict[int, str] = {}
    try:
        with gzip.open(str(path), "rt", encoding="utf-8") as fh:
            for line in fh:
                if not line.startswith("#"):
                    synset, part = line.rstrip("\n").split("\t")
                    table[int(synset)] = part
    except (OSError, EOFError, ValueError) as exc:
        raise ResourceError(
            f"cannot read the synset table {path.name} ({exc}); reinstall capeval"
        ) from exc
    return table


@functools.cache
def _parser() -> Any:
    """SPICE's parser over the shipped grammar, loaded once per process."""
    from capeval_core.spice.stanford_pcfg import load_pipeline

    return load_pipeline()


def caption_tags(text: str) -> dict[int, str]:
    """The PTB tag SPICE's parser gives each word of ``text``, by the word's character offset.

    A sentence beyond the parser's length limit (:func:`over_the_limit`) gets the jar's
    fallback tree, whose tag ``XX`` is no part of speech; a token CoreNLP writes otherwise
    than the text (``-LRB-`` for "(") is left untagged.
    The parse of a long sentence takes minutes (it grows with the cube of its length: 160
    words, about a minute): from :data:`~capeval_core.spice.stanford_pcfg.REPORT_FROM_WORDS`
    words on it says how far it is (:func:`capeval_core.progress.report`), as SPICE's does.

    >>> caption_tags("A man rides a horse (on a beach).")
    {0: 'DT', 2: 'NN', 6: 'VBZ', 12: 'DT', 14: 'NN', 21: 'IN', 24: 'DT', 26: 'NN', 32: '.'}
    """
    from capeval_core.spice.corenlp import corenlp_words, sentences
    from capeval_core.spice.pcfg.parser import JAR_MAX_WORDS
    from capeval_core.spice.stanford_pcfg import REPORT_FROM_WORDS

    tags: dict[int, str] = {}
    at = 0
    parts = sentences(corenlp_words(text))
    for sentence in parts:
        progress = None
        if REPORT_FROM_WORDS <= len(sentence) <= JAR_MAX_WORDS:
            what = "caption" if len(parts) == 1 else "sentence"
            progress = _tagging_reporter(f"tagging a {len(sentence)}-word {what}")
        try:
            tree = _parser().parse(sentence, progress=progress)
            tagged = [node.label for node in tree.preterminals()]
        except InputError:  # over the length limit
            tagged = [""] * len(sentence)
        for word, tag in zip(sentence, tagged, strict=True):
            found = re.compile(re.escape(word), re.IGNORECASE).search(text, at)
            if found is None or any(ch.isalnum() for ch in text[at : found.start()]):
                continue  # not in the text as written: the next token is looked for here
            if tag:
                tags[found.start()] = tag
            at = found.end()
    return tags


def _tagging_reporter(label: str) -> Callable[[float], None]:
    """How far a long sentence's tagging is, said as SPICE's parse says it."""
    from capeval_core.progress import share_reporter
    from capeval_core.spice.stanford_pcfg import REPORT_EVERY

    return share_reporter(label, REPORT_EVERY)


def over_the_limit(text: str) -> list[int]:
    """The word counts of the sentences of ``text`` too long for SPICE's parser (over
    :data:`~capeval_core.spice.pcfg.parser.JAR_MAX_WORDS` words, where spice-1.0.jar's chart
    no longer fits): their words get the fallback tag ``XX``, no part of speech, so no
    synonym.

    >>> over_the_limit("a dog runs. " + " ".join(["word"] * 600))
    [600]
    """
    from capeval_core.spice.corenlp import corenlp_words, sentences
    from capeval_core.spice.pcfg.parser import JAR_MAX_WORDS

    return [len(s) for s in sentences(corenlp_words(text)) if len(s) > JAR_MAX_WORDS]


#: tags of recently seen captions: text -> {character offset: PTB tag}
_TAGS: dict[str, dict[int, str]] = {}
_TAGS_KEPT = 20_000


def _keep_tags(text: str, tags: dict[int, str]) -> dict[int, str]:
    if len(_TAGS) >= _TAGS_KEPT:
        _TAGS.clear()
    _TAGS[text] = tags
    return tags


def tag_captions(texts: Sequence[str], n_process: int | None = None) -> None:
    """Tag many captions ahead of :func:`word_parts` (batch mode).

    ``n_process`` processes share the parsing (this one and spawned workers; default: one per
    available CPU, at most 4, or 1 inside a worker process) when there are at least
    :data:`~capeval_core.spice.stanford_pcfg.PARALLEL_MIN` captions per process, as SPICE's
    parse workers do.
    """
    todo = list(dict.fromkeys(t for t in texts if t not in _TAGS))
    for text, tags in zip(todo, _tag_all(todo, n_process), strict=True):
        _keep_tags(text, tags)


def _tags_of(texts: Sequence[str]) -> list[dict[int, str]]:
    """Runs in a worker process (and in this one): the tags of each caption."""
    return [caption_tags(text) for text in texts]


def _tag_all(todo: list[str], n_process: int | None) -> list[dict[int, str]]:
    """The tags of ``todo``, in order: the first chunks in spawned workers, the last ones here
    (their shares in proportion to their number); a chunk whose worker died is parsed here.
    No queued task is ever cancelled (Python 3.11's pool can then raise in its own thread)."""
    import multiprocessing
    from concurrent.futures.process import BrokenProcessPool

    from capeval_core.resources import available_cpus
    from capeval_core.spice.stanford_pcfg import MIN_CHUNK, PARALLEL_MIN
    from capeval_core.workers import WorkerPool

    if n_process is None:
        in_worker = multiprocessing.parent_process() is not None
        n_process = 1 if in_worker else min(4, available_cpus())
    n_process = min(n_process, len(todo) // PARALLEL_MIN)
    if n_process <= 1:
        return _tags_of(todo)
    size = max(MIN_CHUNK, len(todo) // (4 * n_process))
    chunks = [todo[k : k + size] for k in range(0, len(todo), size)]
    remote = len(chunks) * (n_process - 1) // n_process
    try:  # capeval's pool: spawned, without the main script, Ctrl-C left to this process
        pool = WorkerPool(n_process - 1)
        futures = [pool.submit(_tags_of, chunk) for chunk in chunks[:remote]]
    except (OSError, RuntimeError):  # no process support here
        return _tags_of(todo)
    with pool:
        here = _tags_of([text for chunk in chunks[remote:] for text in chunk])
        out: list[dict[int, str]] = []
        for chunk, future in zip(chunks, futures, strict=False):
            try:
                out.extend(future.result())
            except (BrokenProcessPool, OSError):  # a worker died: its chunk is done here
                out.extend(_tags_of(chunk))
    return out + here


def word_parts(text: str, starts: Sequence[int]) -> list[str | None]:
    """The part of speech (:data:`PARTS`) SPICE's parser gives the word starting at each
    character offset of ``text``; None where it gives none of them (or no word starts there).

    >>> word_parts("children play in the grass", [0, 9, 21])
    ['noun', 'verb', 'noun']
    """
    if not starts:
        return []
    tags = _TAGS.get(text)
    if tags is None:
        tags = _keep_tags(text, caption_tags(text))
    return [TAG_PARTS.get(tags.get(s, "")[:2]) for s in starts]


def similarity(word: str, other: str) -> float | None:
    """GloVe cosine of two words (the default vectors), None when either is missing."""
    from capeval_core.embeddings import default_embeddings

    kv = default_embeddings().kv
    if word not in kv.key_to_index or other not in kv.key_to_index:
        return None
    return float(kv.similarity(word, other))


__all__ = [
    "COMMON_SENSE_SIMILARITY",
    "PARTS",
    "caption_tags",
    "over_the_limit",
    "similarity",
    "synset_pos",
    "tag_captions",
    "word_parts",
]
