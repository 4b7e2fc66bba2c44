"""Which WordNet synonyms fit a word where it stands: its part of speech, its common senses.

METEOR's synonym file (``synonym/english.synsets``, :mod:`capeval_core.meteor_resources`) maps
a word to synset ids but says neither a synset's part of speech nor how common a sense is
(the ids of a word come in WordNet's sense-key order, not in its frequency order). The
perturbation lab needs both: "grass" in "a dog on the grass" is a noun, so the verb sense
"grass = inform on" (snitch) must not be used, and "play" in "children play" should not
become "toy", a rare sense. Both are recovered from resources capeval already ships:

* **A synset's part of speech.** spaCy's English model carries WordNet's lemma index per
  part of speech (its lemmatizer's ``lemma_index``: which words are nouns, verbs, adjectives,
  adverbs). A synset can only have a part of speech all its indexed members have; and each
  word lists its synsets in sense-key order, nouns first, then verbs, adjectives, adverbs and
  satellite adjectives, so a synset between two nouns of a word is a noun too. Both rules
  are applied until nothing changes; a synset left with more than one possibility (about one
  in nine, mostly of multi-word members) is never used.
* **A word's part of speech in the caption.** spaCy's tagger (Penn Treebank tags), on the
  caption as written; a word the tagger gives no noun, verb, adjective or adverb tag gets no
  synonym.
* **Common senses.** A word's distributional vector is dominated by its frequent senses
  (Arora et al. 2018, "Linear algebraic structure of word senses, with applications to
  polysemy"), so a synonym from a rare sense lies far from it in GloVe 6B 50-d: grass–snitch
  −0.09, play–toy 0.27, cat–guy 0.49, while child–kid is 0.56, couch–sofa 0.70 and
  road–route 0.82. A synonym is kept when its cosine with the word reaches
  :data:`COMMON_SENSE_SIMILARITY`, and the most similar one is used. This is a proxy:
  WordNet's sense frequencies are not among capeval's resources, and a rare sense whose
  words are distributionally close (big–bad, play–run) still gets through.

The synset table is computed once (about two seconds) and cached in the user cache, keyed by
the METEOR jar and the spaCy model.

>>> from capeval_core.meteor_resources import meteor_synsets
>>> synset_pos()[next(iter(meteor_synsets().synsets["sofa"]))]
'noun'
"""

from __future__ import annotations

import functools
import importlib.util
import pickle
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from capeval_core.meteor_resources import _jar_text, _pairs, meteor_jar
from capeval_core.resources import atomic_write, cache_dir, package_version, source_stamp
from capeval_core.spice.spacy_runtime import model_package

#: a synonym's GloVe cosine with the word it replaces must reach this (see the module doc)
COMMON_SENSE_SIMILARITY = 0.5
#: WordNet's parts of speech as the lemma index names them
PARTS = ("noun", "verb", "adj", "adv")
#: Penn Treebank tag prefix -> part of speech
TAG_PARTS = {"NN": "noun", "VB": "verb", "JJ": "adj", "RB": "adv"}
#: bumped whenever the cached table changes shape or rules
TABLE_FORMAT = 1

# Sense-key order of the parts of speech within a word's synset list (WordNet's ss_type):
# noun 1, verb 2, adjective 3, adverb 4, satellite adjective 5; "adj" is either 3 or 5.
_RANK_MASK = {"noun": 0b00001, "verb": 0b00010, "adj": 0b10100, "adv": 0b01000}
_ALL = 0b11111
_PART_OF_MASK = {0b00001: "noun", 0b00010: "verb", 0b00100: "adj", 0b10000: "adj", 0b10100: "adj"}
_PART_OF_MASK[0b01000] = "adv"


def _model_package() -> str:
    return model_package(
        "synonym substitution needs spaCy's English model `en_core_web_sm` to tag words"
    )


def _model_path(name: str) -> Path:
    """The model's data folder (the one holding ``config.cfg``) inside its package."""
    package = Path(importlib.util.find_spec(name).origin).parent  # type: ignore[union-attr,arg-type]
    return next((p.parent for p in sorted(package.glob("**/config.cfg"))), package)


def _lemma_index(name: str) -> dict[str, set[str]]:
    """word -> the parts of speech WordNet lists it under (spaCy's ``lemma_index``)."""
    from spacy.lookups import Lookups

    lookups = Lookups().from_disk(_model_path(name) / "lemmatizer" / "lookups")
    table = lookups.get_table("lemma_index")
    parts: dict[str, set[str]] = {}
    for part in PARTS:
        for word in table.get(part, []):
            parts.setdefault(word, set()).add(part)
    return parts


def _low_bit(mask: int) -> int:
    return (mask & -mask).bit_length() - 1


def infer_synset_pos(
    lines: Sequence[tuple[str, Sequence[int]]], parts: Mapping[str, set[str]]
) -> dict[int, str]:
    """Part of speech of every synset the rules decide (see the module doc).

    ``lines`` are (word, its synset ids in the file's order); ``parts`` the lemma index.

    >>> lines = [("grass", [1, 2, 3]), ("lawn", [1]), ("inform", [3]), ("sward", [2, 1])]
    >>> parts = {"grass": {"noun", "verb"}, "lawn": {"noun"}, "inform": {"verb"}}
    >>> infer_synset_pos(lines, parts)  # 2 comes before the noun 1 in "sward": a noun too
    {1: 'noun', 2: 'noun', 3: 'verb'}
    """
    dom: dict[int, int] = {}
    for word, ids in lines:
        mask = _ALL
        if word in parts:
            mask = 0
            for part in parts[word]:
                mask |= _RANK_MASK[part]
        for i in ids:
            dom[i] = dom.get(i, _ALL) & mask
    for _ in range(20):
        changed = False
        for _, ids in lines:
            low = 0  # forward: ranks never go down along a word's list
            for i in ids:
                d = dom[i]
                if not d:
                    continue  # one id shared by synsets of two parts of speech: unusable
                kept = d & ~((1 << low) - 1)
                if kept and kept != d:
                    dom[i], changed = kept, True
                low = _low_bit(dom[i])
            high = 4  # backward: ranks never go up towards the front
            for i in reversed(ids):
                d = dom[i]
                if not d:
                    continue
                kept = d & ((1 << (high + 1)) - 1)
                if kept and kept != d:
                    dom[i], changed = kept, True
                high = dom[i].bit_length() - 1
        if not changed:
            break
    return {i: _PART_OF_MASK[d] for i, d in dom.items() if d in _PART_OF_MASK}


def _cache_path(name: str) -> Path:
    model = f"{name}-{package_version(name.replace('_', '-'))}"
    return cache_dir() / f"synset-pos-v{TABLE_FORMAT}-{source_stamp(meteor_jar())}-{model}.pickle"


@functools.cache
def synset_pos() -> Mapping[int, str]:
    """synset id (as in METEOR's file) -> "noun", "verb", "adj" or "adv", where decided."""
    name = _model_package()
    path = _cache_path(name)
    try:
        with path.open("rb") as fh:
            table = pickle.load(fh)
        if isinstance(table, dict):
            return table
    except (OSError, pickle.UnpicklingError, EOFError, ValueError, TypeError, AttributeError):
        pass  # missing or unreadable: infer again
    lines = [
        (w, [int(i) for i in ids.split()])
        for w, ids in _pairs(_jar_text("synonym/english.synsets"))
    ]
    table = infer_synset_pos(lines, _lemma_index(name))
    try:
        with atomic_write(path) as fh:
            pickle.dump(table, fh, protocol=pickle.HIGHEST_PROTOCOL)
        for stale in path.parent.glob("synset-pos-v*.pickle"):
            if stale != path:
                stale.unlink(missing_ok=True)
    except OSError:
        pass  # an unwritable cache only costs time
    return table


@functools.cache
def _tagger() -> Any:
    """spaCy's English model with only its tagger (and the embedding layer it reads)."""
    import spacy

    name = _model_package()
    keep = {"tok2vec", "tagger"}
    nlp = spacy.load(name)
    nlp.select_pipes(disable=[p for p in nlp.pipe_names if p not in keep])
    return nlp


#: tags of recently seen captions: text -> {character offset: PTB tag}
_TAGS: dict[str, dict[int, str]] = {}
_TAGS_KEPT = 20_000


def _keep_tags(text: str, doc: Any) -> dict[int, str]:
    if len(_TAGS) >= _TAGS_KEPT:
        _TAGS.clear()
    tags = _TAGS[text] = {token.idx: token.tag_ for token in doc}
    return tags


def tag_captions(texts: Sequence[str]) -> None:
    """Tag many captions in one ``nlp.pipe`` call ahead of :func:`word_parts` (batch mode)."""
    todo = list(dict.fromkeys(t for t in texts if t not in _TAGS))
    for text, doc in zip(todo, _tagger().pipe(todo, batch_size=256), strict=True):
        _keep_tags(text, doc)


def word_parts(text: str, starts: Sequence[int]) -> list[str | None]:
    """The part of speech (:data:`PARTS`) spaCy's tagger gives the word starting at each
    character offset of ``text``; None where it gives none of them (or no word starts there).

    >>> word_parts("children play in the grass", [0, 9, 21])
    ['noun', 'verb', 'noun']
    """
    if not starts:
        return []
    tags = _TAGS.get(text)
    if tags is None:
        tags = _keep_tags(text, _tagger()(text))
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
    "infer_synset_pos",
    "similarity",
    "synset_pos",
    "tag_captions",
    "word_parts",
]
