"""Generate the PCFG stage's spelling table (``capeval_core/data/spice_americanize.tsv``) from
the oracle: the word function CoreNLP 3.6.0's English PCFG applies to every word before it
looks it up (``PcfgOracle.java americanize``: British to American spelling, month and day
names capitalised).

    python -m tools.spice_oracle.make_americanize capeval_core/data/spice_americanize.tsv

The vocabulary is the lemma tables' (``make_lemma_exceptions.vocabulary``: the 400,000 words
of GloVe 6B, the words of the COCO *train2014* captions and the PTB tokenizer's pieces), each
word as written and capitalised. Words the function changes are listed with what it makes of
them; every other word of the vocabulary is read as it is. COCO val2014 text is never read.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from tools import spice_oracle
from tools.spice_oracle.make_lemma_exceptions import vocabulary


def americanize(words: list[str]) -> list[str]:
    """The oracle's reading of each word."""
    with tempfile.TemporaryDirectory() as tmp:
        src, dst = Path(tmp) / "in.txt", Path(tmp) / "out.txt"
        src.write_text("".join(w + "\n" for w in words), encoding="utf-8")
        spice_oracle.java(
            "edu.stanford.nlp.parser.lexparser.PcfgOracle", "americanize", str(src), str(dst)
        )
        out = dst.read_text(encoding="utf-8").split("\n")
    return out[: len(words)]


def main() -> None:
    dest = Path(sys.argv[1])
    words = list(dict.fromkeys(w for v in vocabulary() for w in (v, v[:1].upper() + v[1:])))
    read = americanize(words)
    changed = [(w, a) for w, a in zip(words, read, strict=True) if a != w]
    header = (
        "# The word function of CoreNLP 3.6.0's English PCFG (British to American spelling, month\n"
        "# and day names capitalised) where it changes a word of the vocabulary of\n"
        "# tools/spice_oracle/make_americanize.py: word<TAB>what the parser reads.\n"
    )
    dest.write_text(header + "".join(f"{w}\t{a}\n" for w, a in changed), encoding="utf-8")
    print(f"{len(words)} words asked, {len(changed)} changed -> {dest}")


if __name__ == "__main__":
    main()
